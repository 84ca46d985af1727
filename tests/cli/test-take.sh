#!/bin/sh
# nodecm take: kubelet's takeByTopology from the command line. Results on kubelet's own test
# machines (tests/data/cpumanager/topo) match kubelet's tables; errors are one line on stderr
# with exit 1 (cannot be met) or 2 (bad usage or option), and nothing on stdout.
. "$(dirname "$0")/lib.sh"

T="$DATA/cpumanager/topo"

# bad CODE DESCRIPTION TEXT ARGS...
bad() {
        code=$1 desc=$2 text=$3
        shift 3
        run take "$@"
        expect_rc "$code" "$desc"
        expect_out "" "$desc: stdout"
        expect_err_contains "$text" "$desc"
}

run take --help
expect_rc 0 "--help"
case "$OUT" in *"Usage: nodecm take [SOURCE] --available LIST --count N"*"--topology FILE"*) ;;
*) fail "--help text: $OUT" ;; esac
run --help
case "$OUT" in *"take "*"hints "*) ;; *) fail "nodecm --help lists take and hints" ;; esac

# packed (kubelet's TestTakeByTopologyNUMAPacked)
run take --topology "$T/dual-socket-ht.json" --available 0-11 --count 8
expect_rc 0 "packed 8 of dual-socket-ht"
expect_out "0-2,4,6-8,10" "packed 8 of dual-socket-ht"
run take --topology "$T/single-socket-ht.json" --available 1,3,5-7 --count 1
expect_out "6" "packed: a partial core's sibling first"
run take --topology "$T/dual-socket-multi-numa-ht.json" --available 0-79 --count 64
expect_out "0-31,40-71" "packed 64 of 80"
run take --topology "$T/single-socket-ht.json" --available 0-7 --count 0
expect_rc 0 "count 0"
expect_out "" "count 0"

# options pick the algorithm as the static policy does
run take --topology "$T/dual-socket-multi-numa-ht.json" --available 0-79 --count 64 \
        --option distribute-cpus-across-numa=true
expect_out "0-7,10-17,20-27,30-37,40-47,50-57,60-67,70-77" "distributed"
run take --topology "$T/dual-socket-multi-numa-ht.json" --available 0-79 --count 26 \
        --option distribute-cpus-across-numa=1 --option full-pcpus-only=true
expect_out "0-6,10-15,40-46,50-55" "distributed in whole cores"
run take --topology "$T/dual-socket-ht.json" --available 0-11 --count 8 \
        --option distribute-cpus-across-cores=true --feature-gates CPUManagerPolicyAlphaOptions=true
expect_out "0-4,6,8,10" "spread"
run take --topology "$T/uncore-single-socket-smt.json" --available 2-7,10-15 --count 6 \
        --option prefer-align-cpus-by-uncorecache=true
expect_out "4-6,12-14" "uncore"
run take --topology "$T/uncore-single-socket-smt.json" --available 2-7,10-15 --count 6 \
        --option prefer-align-cpus-by-uncorecache=false
expect_out "2-4,10-12" "uncore off: whole cores in id order"

# a synthetic machine
run take --synthetic "package:2 numa:2 l3:1 core:4 pu:2" --available 0-31 --count 8
expect_rc 0 "synthetic"
expect_out "0-7" "synthetic: one NUMA node"

# cannot be met: exit 1, kubelet's text
bad 1 "not enough CPUs" "not enough cpus available to satisfy request: requested=5, available=4" \
        --topology "$T/single-socket-ht.json" --available 0,2,4,6 --count 5

# bad usage and bad options: exit 2
bad 2 "no --available" "--available LIST is required" --topology "$T/single-socket-ht.json" --count 1
bad 2 "no --count" "--count N is required" --topology "$T/single-socket-ht.json" --available 0-3
bad 2 "bad list" "--available '0-x': strconv.Atoi: parsing \"x\": invalid syntax" \
        --topology "$T/single-socket-ht.json" --available 0-x --count 1
bad 2 "reversed range" "--available '5-3': invalid range \"5-3\" (5 > 3)" \
        --topology "$T/single-socket-ht.json" --available 5-3 --count 1
bad 2 "bad count" "--count 'two'" --topology "$T/single-socket-ht.json" --available 0-3 --count two
bad 2 "negative count" "--count '-1'" --topology "$T/single-socket-ht.json" --available 0-3 --count -1
bad 2 "unknown option" "unknown CPU Manager Policy option: \"bogus\"" \
        --topology "$T/single-socket-ht.json" --available 0-3 --count 1 --option bogus=true
bad 2 "bad value" "bad value for option \"full-pcpus-only\": strconv.ParseBool: parsing \"yes\": invalid syntax" \
        --topology "$T/single-socket-ht.json" --available 0-3 --count 1 --option full-pcpus-only=yes
bad 2 "alpha gate" "CPU Manager Policy Alpha-level Options not enabled, but option \"align-by-socket\" provided" \
        --topology "$T/single-socket-ht.json" --available 0-3 --count 1 --option align-by-socket=true
bad 2 "exclusive options" "static policy options full-pcpus-only and distribute-cpus-across-cores can not be used at the same time" \
        --topology "$T/single-socket-ht.json" --available 0-3 --count 1 --option full-pcpus-only=true \
        --option distribute-cpus-across-cores=true --feature-gates CPUManagerPolicyAlphaOptions=true
bad 2 "align-by-socket on more sockets than NUMA nodes" "Align by socket is not compatible" \
        --topology "$T/fake-multi-socket-dual-socket-per-numa-ht.json" --available 0-79 --count 1 \
        --option align-by-socket=true --feature-gates CPUManagerPolicyAlphaOptions=true
bad 2 "option without =" "--option 'full-pcpus-only': expected KEY=VALUE" \
        --topology "$T/single-socket-ht.json" --available 0-3 --count 1 --option full-pcpus-only
bad 2 "bad gate" "--feature-gates: unknown gate 'Foo'" \
        --topology "$T/single-socket-ht.json" --available 0-3 --count 1 --feature-gates Foo=true
bad 2 "two sources" "" --topology "$T/single-socket-ht.json" --synthetic "core:2 pu:2" \
        --available 0-3 --count 1
bad 2 "missing topology file" "/nonexistent.json" --topology /nonexistent.json --available 0-3 --count 1
bad 2 "unexpected argument" "unexpected argument 'extra'" --available 0-3 --count 1 extra

# kubelet generations: the newest by default, an older one on request (docs/cpu-manager.md)
H="--topology $T/hybrid-6p8e.json --available 0-1,3-10,12-13,15-18 --count 2"
run take $H
expect_rc 0 "hybrid, newest kubelet"
expect_out "12-13" "hybrid, newest kubelet: two single-thread E-cores"
run take $H --kubelet-version 1.37
expect_out "12-13" "hybrid, kubelet 1.37"
run take $H --kubelet-version v1.36.4
expect_out "2-3" "hybrid, kubelet 1.36: core 2-3 although CPU 2 is busy"
run take --topology "$T/offline-thread.json" --available 1-6 --count 2 --kubelet-version 1.35
expect_out "0,4" "offlined thread, kubelet 1.35"
run take --topology "$T/offline-thread.json" --available 1-6 --count 2
expect_out "3-4" "offlined thread, newest"
run take --topology "$T/uneven-sockets.json" --available 2-15 --count 10 --kubelet-version 1.32
expect_out "0-9" "uneven sockets, kubelet 1.32"
run take --topology "$T/uneven-sockets.json" --available 2-15 --count 10
expect_out "2-5,10-15" "uneven sockets, newest"
run take --topology "$T/uncore-smt-2x2.json" --available 0-5 --count 3 \
        --option prefer-align-cpus-by-uncorecache=true --feature-gates CPUManagerPolicyAlphaOptions=true \
        --kubelet-version 1.33
expect_out "0,2,4" "partial uncore cache, kubelet 1.33 (floor)"
run take --topology "$T/uncore-smt-2x2.json" --available 0-5 --count 3 \
        --option prefer-align-cpus-by-uncorecache=true
expect_out "0-1,4" "partial uncore cache, newest (ceil, odd)"
# option maturity follows the release: prefer-align-cpus-by-uncorecache is alpha in 1.33
bad 2 "alpha in 1.33" "CPU Manager Policy Alpha-level Options not enabled, but option \"prefer-align-cpus-by-uncorecache\" provided" \
        --topology "$T/uncore-smt-2x2.json" --available 0-5 --count 3 \
        --option prefer-align-cpus-by-uncorecache=true --kubelet-version 1.33
bad 2 "too old" "--kubelet-version: kubelet version 1.31: nodecm reproduces kubelet 1.32 and newer" $H \
        --kubelet-version 1.31
bad 2 "not a version" "--kubelet-version: kubelet version \"latest\": expected MAJOR.MINOR" $H \
        --kubelet-version latest
run take --help
case "$OUT" in *"--kubelet-version X.Y"*) ;; *) fail "--help names --kubelet-version" ;; esac
case "$OUT" in *"default: the"*"newest released, 1.37; 1.38 is the development branch"*) ;;
*) fail "--help names the default release and the development branch: $OUT" ;; esac
bad 2 "kubelet 0.x" "--kubelet-version: kubelet version 0.40: nodecm reproduces kubelet 1.32 and newer" $H \
        --kubelet-version 0.40
# kubelet 1.38 (the development branch, PR #141026): an uncore cache spanning NUMA nodes is
# listed once; 1.37 (the default) takes it twice and hands out 2 CPUs for 4
U="--topology $T/uncore-span-numa.json --available 1-6 --count 4 --option prefer-align-cpus-by-uncorecache=true"
run take $U
expect_out "3-4" "uncore cache spanning NUMA nodes, default (1.37)"
run take $U --kubelet-version 1.38
expect_out "1-4" "uncore cache spanning NUMA nodes, 1.38"
run take --topology "$T/uneven-uncore.json" --available 4-7 --count 2 \
        --option prefer-align-cpus-by-uncorecache=true --kubelet-version v1.38.0-alpha.1
expect_out "6-7" "uneven uncore caches, 1.38 (whole free caches first)"
# an option that belongs to another command is named, not its value
bad 2 "--reusable on take" "nodecm take: unknown option '--reusable'" $H --reusable 0-1
bad 2 "--reusable= on take" "nodecm take: unknown option '--reusable'" $H --reusable=0-1


# Free CPUs the machine does not have are bad input.
run take --synthetic "package:1 core:4 pu:1" --available 0-9 --count 2
expect_rc 2 "available CPUs off the machine"
expect_err_contains "--available: CPUs 4-9 are not on the machine (0-3)" "available CPUs off the machine"

finish
