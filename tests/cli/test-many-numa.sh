#!/bin/sh
# Machines with many NUMA nodes (examples/many-numa/, tools/gen-many-numa.sh): the shipped
# 32-NUMA example is what the generator writes and admits and removes its 1,000 pods; at 8
# NUMA nodes the lazy merge and kubelet's walk (--reference-merge) give the same bytes on the
# same shape of scenario; explanations cut long hint lists and say how many there are.
. "$(dirname "$0")/lib.sh"

EX="$DATA/../../examples/many-numa"
GEN="$DATA/../../tools/gen-many-numa.sh"

sh "$GEN" 16 >"$TMPD/gen.yaml"
cmp -s "$TMPD/gen.yaml" "$EX/restricted-32-numa.yaml" ||
        fail "examples/many-numa/restricted-32-numa.yaml is not what tools/gen-many-numa.sh 16 writes"

run simulate --json "$EX/restricted-32-numa.yaml"
expect_rc 0 "32 NUMA"
[ "$(printf '%s\n' "$OUT" | grep -c '"op": "admit", "pod": "[^"]*", "admitted": true')" -eq 1000 ] ||
        fail "32 NUMA: 1000 pods admitted"
[ "$(printf '%s\n' "$OUT" | grep -c '"op": "removePod", "pod": "[^"]*", "removed": true')" -eq 1000 ] ||
        fail "32 NUMA: 1000 pods removed"
expect_last() {
        [ "$(printf '%s\n' "$OUT" | tail -1)" = "$1" ] || fail "$2: last line $(printf '%s\n' "$OUT" | tail -1)"
}
expect_last '{"op": "state", "defaultCpuSet": "0-511", "entries": {}}' "32 NUMA: nothing left"

# the same shape at 8 NUMA nodes: the lazy merge against kubelet's walk, byte for byte
sh "$GEN" 4 >"$TMPD/m8.yaml"
run simulate --json --explain "$TMPD/m8.yaml"
expect_rc 0 "8 NUMA"
OUT1=$OUT
run simulate --json --explain --reference-merge "$TMPD/m8.yaml"
[ "$OUT" = "$OUT1" ] || fail "8 NUMA: the reference merge differs"

# an explanation at 32 NUMA nodes: 256 hints shown of 4294967295 (4 CPUs fit any node: every
# mask is a hint), then 24 CPUs: every pair of nodes is preferred, the first 64 are named
printf '%s\n' "description: one pod" "node:" "  topology:" \
        "    synthetic: \"package:2 numa:16 core:8 pu:2\"" "  kubelet:" \
        "    cpuManagerPolicy: static" "    reservedSystemCPUs: \"0-1\"" \
        "    topologyManagerPolicy: best-effort" "    topologyManagerPolicyOptions:" \
        "      max-allowable-numa-nodes: \"32\"" "steps:" \
        "  - admit: {metadata: {name: p, uid: p}, spec: {containers: [{name: app, resources: {limits: {cpu: \"4\", memory: 1Gi}}}]}}" \
        "  - admit: {metadata: {name: q, uid: q}, spec: {containers: [{name: app, resources: {limits: {cpu: \"24\", memory: 1Gi}}}]}}" \
        >"$TMPD/one.yaml"
run simulate --explain "$TMPD/one.yaml"
expect_rc 0 "explain 32 NUMA"
case "$OUT" in *"… (256 of 4294967295 hints)"*) ;; *) fail "explain 32 NUMA: no total: $OUT" ;; esac
case "$OUT" in *"merged [0]*: preferred by every resource; of the candidates [0] [1] "*" [31] it is the narrowest"*) ;;
*) fail "explain 32 NUMA: candidates: $OUT" ;; esac
case "$OUT" in *"merged [0,1]*: preferred by every resource; of the candidates [0,1] [0,2] "*" … it is the narrowest"*) ;;
*) fail "explain 32 NUMA: the first 64 candidates: $OUT" ;; esac
run simulate --json --explain "$TMPD/one.yaml"
case "$OUT" in *'"total": {"cpu": 4294967295}'*) ;; *) fail "json explain 32 NUMA: no total" ;; esac

finish
