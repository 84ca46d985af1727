#!/bin/sh
# nodecm node resize: in-place resize of a pod a node holds (KEP-1287, KEP-5554). Exit codes and
# output; the promise in cpu_manager_state and memory_manager_state; a refusal leaving every file
# as it was; the gates off reproducing the kubelet's refusals byte for byte, and a file without
# the gates byte-identical to the kubelet's; the QoS class rule; the enforcement order (grow:
# the shared pool narrows and the cpuset widens before the weight; shrink: the cpuset narrows
# last).
. "$(dirname "$0")/lib.sh"

T="package:2 numa:1 core:8 pu:2"
config() { # config FILE [EXTRA LINE]...
        f=$1
        shift
        {
                printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n'
                printf 'cpuManagerPolicy: static\nreservedSystemCPUs: "0-1"\n'
                printf 'topologyManagerPolicy: single-numa-node\nenforcement: none\n'
                for l in "$@"; do printf '%s\n' "$l"; done
        } >"$f"
}
config "$TMPD/on.yaml" "featureGates: {InPlacePodVerticalScalingExclusiveCPUs: true}"
config "$TMPD/off.yaml"
# pod FILE UID CPU [requests|limits]: one container "fwd"
pod() {
        printf 'metadata: {name: %s, uid: %s}\nspec:\n  containers:\n  - name: fwd\n' "$2" "$2" \
                >"$TMPD/$1.yaml"
        printf '    resources: {%s: {cpu: "%s", memory: 64Mi}}\n' "${4:-limits}" "$3" \
                >>"$TMPD/$1.yaml"
}
for n in 2 4 6 8 12 16; do pod "d$n" dpdk $n; done
pod burstable dpdk 1 requests
pod ghost ghost 2
D="$TMPD/on"
N() {
        run node "$@" --root-dir "$D" --config "$TMPD/on.yaml" --synthetic "$T"
}

# ---- usage ----
run node resize --help
expect_rc 0 "resize --help"
case "$OUT" in *"nodecm node resize POD [--explain]"*) ;; *) fail "resize --help: $OUT" ;; esac
N resize
expect_rc 2 "resize without a pod"
expect_err_contains "nodecm node resize: expected one POD file" "resize without a pod"
N resize "$TMPD/d4.yaml"
expect_rc 2 "resize before init"
expect_err_contains "run 'nodecm node init' first" "resize before init"
N init
expect_rc 0 "init"
N resize "$TMPD/nope.yaml"
expect_rc 2 "a missing file"
expect_err_contains "nope.yaml" "a missing file"
N resize "$TMPD/ghost.yaml"
expect_rc 2 "a pod the node does not hold"
expect_err_contains "nodecm: resize of pod 'ghost': the node holds no such pod" "unknown pod"

# ---- 4 -> 8 -> 12 -> 6, KEP-5554's example ----
N admit "$TMPD/d4.yaml"
expect_out "admit dpdk: admitted: fwd exclusive 2-5 (NUMA 0)" "admit 4"
N resize "$TMPD/d8.yaml"
expect_rc 0 "resize to 8"
expect_out "resize dpdk: resized: fwd exclusive 2-9 (NUMA 0)" "resize to 8"
# kubelet 1.37's V4 (the default kubeletVersion): the kubelet's baseline inside data
case "$(cat "$D/cpu_manager_state")" in
*'"entries":{"dpdk":{"fwd":"2-9"}},"checksum":'*',"data":"'*'\"baselines\":{\"dpdk\":{\"fwd\":{\"baseline\":\"2-5\"}}}}","dataChecksum":'*) ;;
*) fail "the promise is not in cpu_manager_state: $(cat "$D/cpu_manager_state")" ;;
esac
run checkpoint verify "$D/cpu_manager_state"
expect_rc 0 "the checkpoint with a promise verifies"
run checkpoint show "$D/cpu_manager_state"
case "$OUT" in *"BASELINE (in-place resize: the CPUs of the first admission)"*"dpdk  fwd        2-5 (4 CPUs)"*) ;; *) fail "show: no promise: $OUT" ;; esac
run checkpoint show "$D/cpu_manager_state" --json
case "$OUT" in *',"baselines":[{"pod":"dpdk","container":"fwd","cpuSet":{"text":"2-5",'*) ;; *) fail "show --json: no promise: $OUT" ;; esac
# 1.36's V2 has no place for it: nodecm's own promised member, outside the checksum
run checkpoint rewrite "$D/cpu_manager_state" --output "$TMPD/v2" --kubelet-version 1.36
case "$(cat "$TMPD/v2")" in
*'"entries":{"dpdk":{"fwd":"2-9"}},"checksum":'*) ;;
*) fail "1.36 reads the V2 part: $(cat "$TMPD/v2")" ;;
esac
run checkpoint rewrite "$D/cpu_manager_state" --output "$TMPD/rewritten"
cmp -s "$D/cpu_manager_state" "$TMPD/rewritten" || fail "rewrite does not keep the promise"
N resize "$TMPD/d12.yaml" --json
expect_rc 0 "resize to 12"
expect_out '{"op": "resize", "pod": "dpdk", "resized": true, "containers": [{"name": "fwd", "exclusive": true, "cpus": "2-13", "numa": [0], "devices": {}}]}' "resize to 12 --json"
N resize "$TMPD/d6.yaml"
expect_out "resize dpdk: resized: fwd exclusive 2-7 (NUMA 0)" "resize to 6 keeps the promise"

# ---- refusals change nothing ----
cp "$D/cpu_manager_state" "$TMPD/state.before"
cp "$D/nodecm_pods" "$TMPD/pods.before"
N resize "$TMPD/d2.yaml"
expect_rc 1 "below the promise"
expect_out "resize dpdk: not resized: Infeasible: prohibitedCPUAllocation Error: Skip resize, Not allowed to reduce container exclusively allocated pool below promised, (requested CPUs = 2, allocated CPUs = 6, promised CPUs = 4, guaranteed CPUs = 2)" "below the promise"
expect_err_contains "nodecm: Infeasible: prohibitedCPUAllocation Error" "below the promise"
N resize "$TMPD/d2.yaml" --json
expect_rc 1 "below the promise --json"
case "$OUT" in *'"resized": false, "reason": "Infeasible", "message": "prohibitedCPUAllocation Error:'*'"cpus": "2-7"'*) ;; *) fail "--json refusal: $OUT" ;; esac
N resize "$TMPD/d16.yaml" --explain
expect_rc 1 "wider than the socket"
case "$OUT" in
*"Infeasible: Resources cannot be allocated with Topology locality"*"fwd holds 2-7 on NUMA node(s) 0, which have 8 free CPUs; it needs 10 more, so the affinity would have to grow to NUMA node(s) 1 (free there: 16-31), which the single-numa-node policy does not admit"*) ;;
*) fail "--explain does not say which NUMA node was missing: $OUT" ;;
esac
N resize "$TMPD/d2.yaml" --explain
case "$OUT" in
*"below the promise: 2 requested, but every one of the 4 promised CPUs 2-5 stays with the container"*) ;;
*) fail "--explain does not name the promised CPUs: $OUT" ;;
esac
N resize "$TMPD/burstable.yaml"
expect_rc 1 "a QoS class change"
expect_err_contains 'nodecm: Invalid: The Pod "dpdk" is invalid: spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing' "a QoS class change"
cmp -s "$D/cpu_manager_state" "$TMPD/state.before" || fail "a refusal changed cpu_manager_state"
cmp -s "$D/nodecm_pods" "$TMPD/pods.before" || fail "a refusal changed nodecm_pods"
N pods
case "$OUT" in *"fwd"*"2-7"*) ;; *) fail "pods after the refusals: $OUT" ;; esac

# ---- hostile resizes (issue 20): refused where they are read, naming the field (2) ----
snapshot() { (cd "$D" && for f in $(ls -A | sort); do printf '%s ' "$f"; cksum <"$f"; done); }
BEFORE=$(snapshot)
for q in 99999999999999999999 1e20 100Ei 9223372036854776; do
        pod big dpdk "$q"
        N resize "$TMPD/big.yaml"
        expect_rc 2 "resize to cpu $q"
        expect_err_contains "spec.containers[0].resources.limits.cpu: invalid " "cpu $q"
done
sed 's/memory: 64Mi/memory: 99999999999999999999Ei/' "$TMPD/d8.yaml" >"$TMPD/big.yaml"
N resize "$TMPD/big.yaml"
expect_rc 2 "resize to memory 99999999999999999999Ei"
expect_err_contains "spec.containers[0].resources.limits.memory: invalid quantity" "memory"
printf '{"metadata": {"uid": "dpdk\\u0000x", "name": "dpdk"}, "spec": {"containers": [{"name": "fwd", "resources": {"limits": {"cpu": "8", "memory": "64Mi"}}}]}}' >"$TMPD/nul.json"
N resize "$TMPD/nul.json"
expect_rc 2 "a NUL in the UID"
expect_err_contains 'metadata.uid: invalid value "dpdk\x00x"' "a NUL in the UID"
sed 's/name: fwd/name: "fw\\nd"/' "$TMPD/d8.yaml" >"$TMPD/nl.yaml"
N resize "$TMPD/nl.yaml"
expect_rc 2 "a newline in a container name"
[ "$(snapshot)" = "$BEFORE" ] || fail "a hostile resize changed the directory"

# ---- enforcement order (a plan on a cgroup v2 layout) ----
pod web web 500m requests
N admit "$TMPD/web.yaml"
expect_rc 0 "a shared pod"
# another enforcer is another configuration: init applies it, as a kubelet restart would
N init --enforce plan --cgroup-version 2 --root "$TMPD/cg"
expect_rc 0 "init with the plan enforcer"
N resize "$TMPD/d12.yaml" --enforce plan --cgroup-version 2 --root "$TMPD/cg"
expect_rc 0 "grow, planned"
s=$(printf '%s\n' "$OUT" | grep -n 'podweb/fwd/cpuset.cpus 0-1,14-31$' | cut -d: -f1)
c=$(printf '%s\n' "$OUT" | grep -n 'poddpdk/fwd/cpuset.cpus 2-13$' | cut -d: -f1)
w=$(printf '%s\n' "$OUT" | grep -n 'poddpdk/fwd/cpu.weight' | cut -d: -f1)
[ -n "$s" ] && [ -n "$c" ] && [ -n "$w" ] && [ "$s" -lt "$c" ] && [ "$c" -lt "$w" ] ||
        fail "grow: the shared pool narrows, then the cpuset widens, then the weight: $OUT"
N resize "$TMPD/d6.yaml" --enforce plan --cgroup-version 2 --root "$TMPD/cg"
expect_rc 0 "shrink, planned"
w=$(printf '%s\n' "$OUT" | grep -n 'poddpdk/fwd/cpu.weight' | cut -d: -f1)
c=$(printf '%s\n' "$OUT" | grep -n 'poddpdk/fwd/cpuset.cpus 2-7$' | cut -d: -f1)
s=$(printf '%s\n' "$OUT" | grep -n 'podweb/fwd/cpuset.cpus 0-1,8-31$' | cut -d: -f1)
[ -n "$w" ] && [ -n "$c" ] && [ -n "$s" ] && [ "$w" -lt "$c" ] && [ "$c" -lt "$s" ] ||
        fail "shrink: the weight, then the cpuset narrows, then the shared pool widens: $OUT"

# ---- the gate off: the kubelet's refusal, the kubelet's file ----
D="$TMPD/off"
O() {
        run node "$@" --root-dir "$D" --config "$TMPD/off.yaml" --synthetic "$T"
}
O init
O admit "$TMPD/d4.yaml"
cp "$D/cpu_manager_state" "$TMPD/off.before"
O resize "$TMPD/d8.yaml"
expect_rc 1 "gate off"
expect_err_contains 'nodecm: Infeasible: Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"' "gate off"
cmp -s "$D/cpu_manager_state" "$TMPD/off.before" || fail "gate off: the refusal changed the file"
case "$(cat "$D/cpu_manager_state")" in *promised*) fail "gate off: a promise in the kubelet's file" ;; esac
run checkpoint rewrite "$D/cpu_manager_state" --output "$TMPD/off.rewritten"
cmp -s "$D/cpu_manager_state" "$TMPD/off.rewritten" || fail "gate off: not the kubelet's bytes"
pod frac frac 500m
pod frac7 frac 700m
O admit "$TMPD/frac.yaml"
O resize "$TMPD/frac7.yaml"
expect_rc 1 "gate off: a fractional Guaranteed pod too (the kubelet checks the QoS class only)"
expect_err_contains 'Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "static"' "gate off, fractional"
pod bur bur 500m requests
pod bur2 bur 1500m requests
O admit "$TMPD/bur.yaml"
O resize "$TMPD/bur2.yaml"
expect_rc 0 "gate off: a Burstable pod resizes (shares only)"
case "$OUT" in "resize bur: resized: fwd shared "*) ;; *) fail "gate off: Burstable: $OUT" ;; esac
# gate on: the fractional Guaranteed pod changes its quota and stays on the shared pool
D="$TMPD/on"
N init
expect_rc 0 "init back without the plan enforcer"
N admit "$TMPD/frac.yaml"
N resize "$TMPD/frac7.yaml"
expect_rc 0 "gate on: fractional"
case "$OUT" in "resize frac: resized: fwd shared "*) ;; *) fail "gate on: fractional: $OUT" ;; esac

# ---- pinned memory (the Static memory manager) ----
config "$TMPD/mem.yaml" "memoryManagerPolicy: Static" "evictionHard: {memory.available: 100Mi}" \
        "reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]"
config "$TMPD/mem-on.yaml" "memoryManagerPolicy: Static" \
        "evictionHard: {memory.available: 100Mi}" \
        "reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]" \
        "featureGates: {InPlacePodVerticalScalingExclusiveMemory: true}"
memp() {
        printf 'metadata: {name: db, uid: db}\nspec:\n  containers:\n  - name: pg\n' >"$TMPD/$1.yaml"
        printf '    resources: {limits: {cpu: "2", memory: %s}}\n' "$2" >>"$TMPD/$1.yaml"
}
memp m1 1Gi
memp m2 2Gi
memp m3 3Gi
M() { # M CONFIG ARGS...
        c=$1
        shift
        run node "$@" --root-dir "$D" --config "$c" --synthetic "$T" --numa-memory 8Gi
}
# the gates as each release knows them
run node init --root-dir "$TMPD/old" --config "$TMPD/mem-on.yaml" --synthetic "$T" --kubelet-version 1.33
expect_rc 2 "a 1.33 kubelet does not know InPlacePodVerticalScalingExclusiveMemory"
expect_err_contains "featureGates: failed to set feature gates from initial flags-based config: unrecognized feature gate: InPlacePodVerticalScalingExclusiveMemory (kubelet 1.33: it came in 1.34)" "1.33 and the memory gate"
[ -e "$TMPD/old" ] && fail "a refused configuration wrote the directory"
D="$TMPD/mem-off"
M "$TMPD/mem.yaml" init
expect_rc 0 "memory: init"
M "$TMPD/mem.yaml" admit "$TMPD/m2.yaml"
expect_rc 0 "memory: admit"
M "$TMPD/mem.yaml" resize "$TMPD/m3.yaml"
expect_rc 1 "memory: gate off"
expect_err_contains 'nodecm: Infeasible: Resize is infeasible for Guaranteed Pods alongside Memory Manager policy "Static"' "memory gate off"
case "$(cat "$D/memory_manager_state")" in *promised*) fail "memory gate off: a promise in the kubelet's file" ;; esac
run checkpoint rewrite "$D/memory_manager_state" --output "$TMPD/mm.rewritten"
cmp -s "$D/memory_manager_state" "$TMPD/mm.rewritten" || fail "memory gate off: not the kubelet's bytes"
D="$TMPD/mem-on"
M "$TMPD/mem-on.yaml" init
M "$TMPD/mem-on.yaml" admit "$TMPD/m2.yaml"
M "$TMPD/mem-on.yaml" resize "$TMPD/m3.yaml" --json
expect_rc 0 "memory: grows on its NUMA node"
case "$OUT" in *'{"numaAffinity": [0], "type": "memory", "size": 3221225472}'*) ;; *) fail "memory grow: $OUT" ;; esac
case "$(cat "$D/memory_manager_state")" in
*'"promised":{"db":{"pg":2147483648}}'*) ;;
*) fail "memory: no promise: $(cat "$D/memory_manager_state")" ;;
esac
run checkpoint verify "$D/memory_manager_state"
expect_rc 0 "memory_manager_state with a promise verifies"
cp "$D/memory_manager_state" "$TMPD/mm.before"
M "$TMPD/mem-on.yaml" resize "$TMPD/m1.yaml"
expect_rc 1 "memory: below the promise"
expect_err_contains "prohibitedMemoryAllocation Error: Skip resize, Not allowed to reduce container exclusively allocated memory below promised, (requested memory = 1073741824, allocated memory = 3221225472, promised memory = 2147483648)" "memory below the promise"
cmp -s "$D/memory_manager_state" "$TMPD/mm.before" || fail "a memory refusal changed memory_manager_state"

finish
