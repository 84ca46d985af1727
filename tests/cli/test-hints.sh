#!/bin/sh
# nodecm hints: kubelet's generateCPUTopologyHints from the command line, as a JSON array in
# kubelet's order (cases from kubelet's topology_hints_test.go).
. "$(dirname "$0")/lib.sh"

T="$DATA/cpumanager/topo"
H="$T/hints-dual-numa-ht.json"

bad() {
        code=$1 desc=$2 text=$3
        shift 3
        run hints "$@"
        expect_rc "$code" "$desc"
        expect_out "" "$desc: stdout"
        expect_err_contains "$text" "$desc"
}

run hints --help
expect_rc 0 "--help"
case "$OUT" in *"Usage: nodecm hints [SOURCE] --available LIST [--reusable LIST] --count N"*) ;;
*) fail "--help text: $OUT" ;; esac

run hints --topology "$H" --available 2-11 --count 2
expect_rc 0 "request 2"
expect_out '[{"numa": [0], "preferred": true}, {"numa": [1], "preferred": true}, {"numa": [0, 1], "preferred": false}]' "request 2"
run hints --topology "$H" --available 2-11 --count 5
expect_out '[{"numa": [1], "preferred": true}, {"numa": [0, 1], "preferred": false}]' "request 5"
run hints --topology "$H" --available 2-11 --count 7
expect_out '[{"numa": [0, 1], "preferred": true}]' "request 7"
run hints --topology "$H" --available 0,3 --count 2
expect_out '[{"numa": [0, 1], "preferred": false}]' "1 + 1 available"
# nothing fits: an empty array (kubelet's "cannot be satisfied"), exit 0
run hints --topology "$H" --available 2-11 --count 11
expect_rc 0 "request 11"
expect_out '[]' "request 11"
# already allocated CPUs regenerate their hints (available = the container's own CPUs)
run hints --topology "$H" --available 3,9 --count 2
expect_out '[{"numa": [1], "preferred": true}, {"numa": [0, 1], "preferred": false}]' "regenerate"

# reusable CPUs: every mask must hold them, and they count in full
run hints --topology "$T/dual-socket-multi-numa-ht.json" --available "" --reusable 20,30 --count 2
expect_out '[{"numa": [2, 3], "preferred": false}, {"numa": [0, 2, 3], "preferred": false}, {"numa": [1, 2, 3], "preferred": false}, {"numa": [0, 1, 2, 3], "preferred": false}]' "reusable"

# align-by-socket (TestGetPodTopologyHintsWithPolicyOptions)
run hints --topology "$T/dual-socket-multi-numa-ht.json" --available 2-3,11 --count 2 \
        --option align-by-socket=true --feature-gates CPUManagerPolicyAlphaOptions=true
expect_out '[{"numa": [0], "preferred": true}, {"numa": [0, 1], "preferred": true}, {"numa": [0, 2], "preferred": false}, {"numa": [0, 3], "preferred": false}, {"numa": [0, 1, 2], "preferred": false}, {"numa": [0, 1, 3], "preferred": false}, {"numa": [0, 2, 3], "preferred": false}, {"numa": [0, 1, 2, 3], "preferred": false}]' "align-by-socket"
run hints --topology "$T/dual-socket-multi-numa-ht.json" --available 2-3,11 --count 2 \
        --option align-by-socket=false --feature-gates CPUManagerPolicyAlphaOptions=true
expect_out '[{"numa": [0], "preferred": true}, {"numa": [0, 1], "preferred": false}, {"numa": [0, 2], "preferred": false}, {"numa": [0, 3], "preferred": false}, {"numa": [0, 1, 2], "preferred": false}, {"numa": [0, 1, 3], "preferred": false}, {"numa": [0, 2, 3], "preferred": false}, {"numa": [0, 1, 2, 3], "preferred": false}]' "align-by-socket off"
run hints --topology "$T/dual-socket-multi-numa-ht.json" --available 0-28,40-57 --count 41 \
        --option align-by-socket=true --feature-gates CPUManagerPolicyAlphaOptions=true
expect_out '[{"numa": [0, 1, 2], "preferred": true}, {"numa": [0, 1, 2, 3], "preferred": true}]' "align-by-socket across sockets"

# a synthetic machine with 4 NUMA nodes: 15 masks
run hints --synthetic "package:2 numa:2 core:2 pu:2" --available 0-15 --count 1
expect_rc 0 "synthetic"
[ "$(printf '%s' "$OUT" | grep -o '"numa"' | wc -l)" -eq 15 ] || fail "synthetic: 15 hints: $OUT"

bad 2 "no --available" "--available LIST is required" --topology "$H" --count 1
bad 2 "no --count" "--count N is required" --topology "$H" --available 0-3
bad 2 "bad reusable" "--reusable '1,,2': strconv.Atoi: parsing \"\": invalid syntax" \
        --topology "$H" --available 0-3 --reusable 1,,2 --count 1
bad 2 "unknown option" "unknown CPU Manager Policy option: \"nope\"" \
        --topology "$H" --available 0-3 --count 1 --option nope=1
bad 2 "beta gate off" "CPU Manager Policy Beta-level Options not enabled, but option \"distribute-cpus-across-numa\" provided" \
        --topology "$H" --available 0-3 --count 1 --option distribute-cpus-across-numa=true \
        --feature-gates CPUManagerPolicyBetaOptions=false

# the kernel's raw NUMA ids are kept; one the kubelet's 64-bit hint mask cannot hold fails
# with the kubelet's bitmask error (allocation itself does not need masks)
cat >"$TMPD/s390.json" <<'EOT'
{"cpus": [{"cpu": 0, "core": 0, "socket": -1, "numa": -1, "uncore": -1},
          {"cpu": 1, "core": 1, "socket": -1, "numa": -1, "uncore": -1}]}
EOT
bad 2 "NUMA node -1" "NUMA node -1: bit number must be in range 0-63" \
        --topology "$TMPD/s390.json" --available 0-1 --count 1
run take --topology "$TMPD/s390.json" --available 0-1 --count 1
expect_rc 0 "take on NUMA node -1"
expect_out "0" "take on NUMA node -1"
# generations: hints are the same in every supported release; the flag is accepted
run hints --topology "$H" --available 0-11 --count 2 --kubelet-version 1.34
expect_rc 0 "--kubelet-version"
run hints --topology "$H" --available 0-11 --count 2 --kubelet-version 1.38
expect_rc 0 "--kubelet-version 1.38 (the development branch)"
bad 2 "kubelet too old" "--kubelet-version: kubelet version 1.31: nodecm reproduces kubelet 1.32 and newer" \
        --topology "$H" --available 0-11 --count 2 --kubelet-version 1.31

finish
