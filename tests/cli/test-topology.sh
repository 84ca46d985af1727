#!/bin/sh
# nodecm topology: help, every source, the JSON round trip through --topology, and bad input
# (exit 2, one line on stderr naming the file or field, nothing on stdout).
. "$(dirname "$0")/lib.sh"

# extract DUMP: sets ROOT to the machine root of tests/data/topologies/DUMP.tar.bz2. Dumps
# hold thousands of files; tmpfs makes that cheap where it exists.
X=$(mktemp -d /dev/shm/nodecm-cli-XXXXXX 2>/dev/null || mktemp -d "$TMPD/x-XXXXXX")
trap 'rm -rf "$TMPD" "$X"' EXIT
extract() {
        mkdir -p "$X/$1"
        tar -xjf "$DATA/topologies/$1.tar.bz2" -C "$X/$1" || fail "extract $1"
        ROOT=$(dirname "$(find "$X/$1" -maxdepth 4 -type d -name sys | head -1)")
}

# bad DESCRIPTION TEXT ARGS...: exit 2, stdout empty, one stderr line containing TEXT.
bad() {
        desc=$1 text=$2
        shift 2
        run topology "$@"
        expect_rc 2 "$desc"
        expect_out "" "$desc: stdout"
        expect_err_contains "$text" "$desc"
}

run topology --help
expect_rc 0 "--help"
case "$OUT" in *"Usage: nodecm topology [SOURCE] [--json]"*"--synthetic DESC"*) ;; *) fail "--help text: $OUT" ;; esac

run --help
case "$OUT" in *"topology "*) ;; *) fail "nodecm --help lists topology" ;; esac

# this machine
run topology
expect_rc 0 "this machine"
case "$OUT" in *"Total: "*" CPU"*) ;; *) fail "this machine: no totals: $OUT" ;; esac
run topology --fsroot /
expect_rc 0 "--fsroot /"

# synthetic, exact output
run topology --synthetic "package:2 numa:2 l3:1 core:2 pu:2"
expect_rc 0 "synthetic tree"
expect_golden topologies/golden/cli-synthetic-tree.txt "synthetic tree"
run topology --synthetic "package:2 numa:2 l3:1 core:2 pu:2" --json
expect_rc 0 "synthetic json"
expect_golden topologies/golden/cli-synthetic.json "synthetic json"

# round trips: --json read back by --topology gives the same JSON
roundtrip() {
        desc=$1
        shift
        run topology "$@" --json
        expect_rc 0 "$desc --json"
        printf '%s\n' "$OUT" >"$TMPD/rt.json"
        first=$OUT
        run topology --topology "$TMPD/rt.json" --json
        expect_rc 0 "$desc read back"
        [ "$OUT" = "$first" ] || fail "$desc: round trip changed the JSON"
        run topology --topology - --json <"$TMPD/rt.json"
        expect_rc 0 "$desc from stdin"
        [ "$OUT" = "$first" ] || fail "$desc: round trip through stdin changed the JSON"
}
roundtrip "this machine"
roundtrip "synthetic" --synthetic "package:4 numa:16 l3:2 core:4 pu:2"
roundtrip "xml" --xml "$DATA/topologies/64amd64-4p2n4ca2co.xml"
extract 48amd64-4pa2n6c-sparse
roundtrip "sparse dump" --fsroot "$ROOT"
run topology --fsroot "$ROOT" --json
expect_golden topologies/golden/48amd64-4pa2n6c-sparse.json "sparse dump golden via the CLI"

# the tree: every CPU once, totals as the dump has them
run topology --fsroot "$ROOT"
case "$OUT" in *"Total: 48 CPUs, 48 cores, 4 sockets, 8 NUMA nodes, 4 uncore caches, 1 thread per core"*) ;;
*) fail "sparse dump totals: $OUT" ;; esac
n=$(printf '%s\n' "$OUT" | grep -c '^      Core ')
[ "$n" -eq 48 ] || fail "sparse dump tree: $n core lines"

# the discovery rules: the kubelet's by default, nodecm's on request (the same sparse dump:
# its L3 caches have no id file, so the kubelet's uncore id is the socket)
run topology --fsroot "$ROOT" --topology-rules cadvisor --json
expect_rc 0 "--topology-rules cadvisor"
expect_golden topologies/golden/48amd64-4pa2n6c-sparse.json "--topology-rules cadvisor"
run topology --fsroot "$ROOT" --topology-rules nodecm --json
expect_rc 0 "--topology-rules nodecm"
expect_golden topologies/golden/nodecm/48amd64-4pa2n6c-sparse.json "--topology-rules nodecm"
run topology --synthetic "package:2 numa:2 l3:1 core:2 pu:2" --topology-rules nodecm
expect_rc 0 "--topology-rules nodecm, synthetic"
case "$OUT" in *"4 uncore caches"*) ;; *) fail "nodecm rules: an L3 per NUMA node is uncore: $OUT" ;; esac
bad "unknown rules" "--topology-rules: unknown rules 'kubelet' (cadvisor or nodecm)" --topology-rules kubelet

# usage errors
bad "two sources" "--synthetic and --xml: give at most one topology source" --synthetic pu:2 --xml x.xml
bad "unknown option" "unknown option '--bogus'" --bogus
bad "missing value" "option '--fsroot' needs a value" --fsroot
bad "extra argument" "unexpected argument 'extra'" extra

# bad sources
bad "missing dir" "open '/nonexistent-nodecm'" --fsroot /nonexistent-nodecm
bad "not a sysfs tree" "/sys/devices/system/cpu: no cpuN directory" --fsroot "$TMPD"
bad "synthetic garbage" 'synthetic topology "garbage": hwloc cannot parse it' --synthetic garbage
bad "synthetic too big" "more than 8192 PUs" --synthetic "package:2 pu:8000"
bad "xml garbage" "$DATA/topologies/README.md: hwloc cannot load this XML" --xml "$DATA/topologies/README.md"
bad "xml missing" "open '/nonexistent.xml'" --xml /nonexistent.xml
bad "json missing" "open '/nonexistent.json'" --topology /nonexistent.json
printf 'not json' >"$TMPD/bad.json"
bad "json garbage" "$TMPD/bad.json:1:" --topology "$TMPD/bad.json"
printf '{"cpus": [{"cpu": 0, "core": 0, "socket": 0, "numa": 0, "uncore": 0}, {"cpu": 1, "core": "x", "socket": 0, "numa": 0, "uncore": 0}]}' >"$TMPD/bad.json"
bad "json field" "$TMPD/bad.json: cpus[1].core: expected an integer, got string" --topology "$TMPD/bad.json"
printf '{"cpus": [{"cpu": 9000, "core": 0, "socket": 0, "numa": 0, "uncore": 0}]}' >"$TMPD/bad.json"
bad "json cpu id" "cpus[0].cpu: 9000 is out of range [0, 8191]" --topology "$TMPD/bad.json"
printf '{"cpus": [{"cpu": 0, "core": 0, "socket": 0, "numa": 1, "uncore": 0}], "numa": [{"id": 0, "distances": [10]}]}' >"$TMPD/bad.json"
bad "json numa" "cpus[0].numa: NUMA node 1 is not listed in numa" --topology "$TMPD/bad.json"
printf '{"cpus": [{"cpu": 0, "core": 0, "socket": 0, "numa": 0, "uncore": 0}], "numa": [{"id": 0, "distances": [10, 20, 20]}, {"id": 5, "distances": [20, 10]}]}' >"$TMPD/bad.json"
bad "json distances" "numa[0].distances: expected 2 entries (one per NUMA node), or one per node id" --topology "$TMPD/bad.json"

# damaged dumps: the message names the file under the root
extract offline-cpu0-node0
printf 'seven\n' >"$ROOT/sys/devices/system/cpu/cpu7/topology/core_id"
bad "bad core_id" "--fsroot $ROOT: /sys/devices/system/cpu/cpu7/topology/core_id: expected an integer, got \"seven\"" --fsroot "$ROOT"
printf '7\n' >"$ROOT/sys/devices/system/cpu/cpu7/topology/core_id"
mkdir "$ROOT/sys/devices/system/cpu/cpu9000"
bad "cpu id above 8191" "/sys/devices/system/cpu/cpu9000: id above the maximum of 8191" --fsroot "$ROOT"
rmdir "$ROOT/sys/devices/system/cpu/cpu9000"
# nodecm's rules read the per-CPU and online files cadvisor ignores, and say so too
printf '4-20,9000\n' >"$ROOT/sys/devices/system/cpu/online"
bad "nodecm rules: cpu id above 8191" "/sys/devices/system/cpu/online: CPU list \"4-20,9000\": CPU id out of range (maximum 8191)" --fsroot "$ROOT" --topology-rules nodecm
printf '4-20\n' >"$ROOT/sys/devices/system/cpu/online"
printf '21 x\n' >"$ROOT/sys/devices/system/node/node1/distance"
bad "bad distance" "/sys/devices/system/node/node1/distance: expected distances" --fsroot "$ROOT"

finish
