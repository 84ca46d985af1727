#!/bin/sh
# The memory manager through the command: machine memory (--numa-memory, a real dump),
# memory_manager_state with `nodecm checkpoint` (the real 1.29 file of kubernetes#128669, every
# generation, --fit, --drop, --fix-checksum), a persistent node with the Static policy
# (admission, the file in its directory, restart validation, KEP-6232's drift, the group rule
# explained) and the kubelet's flags and their errors.
. "$(dirname "$0")/lib.sh"

REAL="$DATA/memorymanager/memory_manager_state-1.29-issue128669"
SYN="package:2 numa:1 core:4 pu:2"
MEM="16Gi,hugepages-1Gi=8"
RES="0:memory=562Mi;1:memory=562Mi"

# ---- machine memory ----
run topology --synthetic "$SYN" --numa-memory "0:8Gi,hugepages-2Mi=512/1:4Gi" --json
expect_rc 0 "--numa-memory"
case "$OUT" in
*'"memory": 8589934592, "hugepages": [{"page_size": 2048, "num_pages": 512}]'*) ;;
*) fail "--numa-memory: node 0 not in the JSON: $OUT" ;;
esac
printf '%s\n' "$OUT" >"$TMPD/t.json"
run topology --topology "$TMPD/t.json" --json
[ "$OUT" = "$(cat "$TMPD/t.json")" ] || fail "memory does not read back from topology JSON"
run topology --synthetic "$SYN" --numa-memory "2:1Gi"
expect_rc 2 "--numa-memory on a missing node"
expect_err_contains 'nodecm: --numa-memory: "2:1Gi": NUMA node 2: not in the topology' "missing node"
run topology --synthetic "$SYN" --numa-memory "1Gi,hugepages-3=1"
expect_rc 2 "--numa-memory bad page size"
expect_err_contains "expected hugepages-PAGE=COUNT" "bad page size"
run topology --synthetic "package:2 numa:1(memory=2GiB) core:1 pu:1" --json
case "$OUT" in *'"memory": 2147483648, "hugepages": []'*) ;; *) fail "synthetic memory=: $OUT" ;; esac

# ---- memory_manager_state ----
run checkpoint verify "$REAL"
expect_rc 0 "the real 1.29 file"
expect_out "$REAL: memory_manager_state V1 (up to 1.35), policy Static, 2 NUMA nodes, 0 pods, 0 containers, checksum 2552710201 verified: valid" "the real 1.29 file"
run checkpoint verify "$REAL" --kubelet-version 1.34 --policy Static
expect_rc 0 "as a 1.34 kubelet"
run checkpoint verify "$REAL" --policy None
expect_rc 1 "other policy"
expect_err_contains '[memorymanager] configured policy "None" differs from state checkpoint policy "Static"' "other policy"
sed 's/2552710201/2552710202/' "$REAL" >"$TMPD/bad"
run checkpoint verify "$TMPD/bad"
expect_rc 1 "corrupted"
expect_err_contains "$TMPD/bad: checkpoint is corrupted" "corrupted"
run checkpoint show "$TMPD/bad"
expect_rc 0 "show a corrupted file"
case "$OUT" in *"does not match (computed: 2552710201 as <= 1.35"*) ;; *) fail "show: $OUT" ;; esac
run checkpoint rewrite "$TMPD/bad"
expect_rc 1 "rewrite a corrupted file"
expect_err_contains "(--fix-checksum accepts the content as it is)" "rewrite a corrupted file"
run checkpoint rewrite "$TMPD/bad" --fix-checksum
expect_rc 0 "--fix-checksum"
cmp -s "$TMPD/bad" "$REAL" || fail "--fix-checksum did not give back the kubelet's bytes"
run checkpoint rewrite "$REAL" --output "$TMPD/v3" --kubelet-version 1.37
expect_rc 0 "as 1.37"
run checkpoint verify "$TMPD/v3"
expect_rc 0 "the 1.37 layout verifies"
case "$OUT" in *"V3 (the 1.37 dual layout"*) ;; *) fail "1.37 layout: $OUT" ;; esac
run checkpoint verify "$TMPD/v3" --kubelet-version 1.35
expect_rc 0 "a 1.35 kubelet reads the 1.37 layout (its legacy checksum)"
run checkpoint rewrite "$REAL" --output "$TMPD/v2" --kubelet-version 1.36
run checkpoint verify "$TMPD/v2" --kubelet-version 1.35
expect_rc 1 "a 1.35 kubelet refuses 1.36's checksum (it covers podEntries)"
run checkpoint show "$REAL" --json
expect_rc 0 "show --json"
case "$OUT" in *'"kind":"memory_manager_state","layout":"V1","verified":true'*) ;; *) fail "show --json: $OUT" ;; esac
run checkpoint verify "$REAL" --reserved 0
expect_rc 2 "--reserved on a memory file"
expect_err_contains "--reserved, --strict and --container apply to cpu_manager_state files" "--reserved"
run checkpoint verify "$REAL" --synthetic "$SYN" --reserved-memory "0:memory=lots"
expect_rc 2 "--reserved-memory syntax"
expect_err_contains "failed to parse the quantatity, expected quantatity, got lots" "--reserved-memory syntax"

# ---- a persistent node with the Static policy ----
cat >"$TMPD/k.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
topologyManagerPolicy: single-numa-node
memoryManagerPolicy: Static
kubeReserved: {memory: 512Mi}
systemReserved: {memory: 512Mi}
evictionHard: {memory.available: 100Mi}
reservedMemory:
  - {numaNode: 0, limits: {memory: 562Mi}}
  - {numaNode: 1, limits: {memory: 562Mi}}
EOF
D="$TMPD/node"
N() {
        run node "$@" --root-dir "$D" --config "$TMPD/k.yaml" --synthetic "$SYN" \
                --numa-memory "$MEM" --enforce none
}
N init
expect_rc 0 "init"
[ -f "$D/memory_manager_state" ] || fail "init wrote no memory_manager_state"
[ "$(stat -c %a "$D/memory_manager_state")" = 600 ] || fail "memory_manager_state is not 0600"
cat >"$TMPD/db.yaml" <<EOF
metadata: {uid: db, name: postgres}
spec:
  containers:
    - name: postgres
      resources:
        limits: {cpu: "2", memory: 4Gi, hugepages-1Gi: 4Gi}
EOF
N admit "$TMPD/db.yaml" --json
expect_rc 0 "admit"
case "$OUT" in
*'"memory": [{"numaAffinity": [0], "type": "hugepages-1Gi", "size": 4294967296}, {"numaAffinity": [0], "type": "memory", "size": 4294967296}]'*) ;;
*) fail "admit: no memory blocks: $OUT" ;;
esac
run checkpoint verify "$D/memory_manager_state" --synthetic "$SYN" --numa-memory "$MEM" --reserved-memory "$RES"
expect_rc 0 "the node's memory_manager_state is valid for its machine"
N status
expect_rc 0 "status restores and validates"
case "$OUT" in *"hugepages-1Gi  total 8Gi, system reserved 0, free 4Gi, reserved 4Gi (postgres/postgres 4Gi)"*) ;; *) fail "status: no memory map: $OUT" ;; esac
N status --json
case "$OUT" in *'"memory": {"numa": [{"id": 0, "assignments": 2'*) ;; *) fail "status --json: $OUT" ;; esac

# the machine lost 12 KiB of node 0's memory in a reboot (kubernetes#131253)
run node status --root-dir "$D" --config "$TMPD/k.yaml" --synthetic "$SYN" --enforce none \
        --numa-memory "0:16777204Ki,hugepages-1Gi=8/1:16Gi,hugepages-1Gi=8"
expect_rc 1 "drift: the kubelet refuses to start"
expect_err_contains "start memory manager error: [memorymanager] the expected machine state is different from the real one" "drift"
cp "$TMPD/k.yaml" "$TMPD/kd.yaml"
cat >>"$TMPD/kd.yaml" <<EOF
kubeletVersion: "1.38"
featureGates: {MemoryManagerDriftTolerance: true}
memoryManagerPolicyOptions: {memory-drift-tolerance: 128Mi}
EOF
run node status --root-dir "$D" --config "$TMPD/kd.yaml" --synthetic "$SYN" --enforce none \
        --numa-memory "0:16777204Ki,hugepages-1Gi=8/1:16Gi,hugepages-1Gi=8"
expect_rc 0 "drift within memory-drift-tolerance"
run checkpoint verify "$D/memory_manager_state" --synthetic "$SYN" --reserved-memory "$RES" \
        --numa-memory "0:16777204Ki,hugepages-1Gi=8/1:16Gi,hugepages-1Gi=8"
expect_rc 0 "re-baselined onto the drifted machine"
cat >"$TMPD/kx.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
kubeletVersion: "1.38"
memoryManagerPolicyOptions: {memory-drift-tolerance: auto}
EOF
run node status --root-dir "$TMPD/x" --config "$TMPD/kx.yaml" --synthetic "$SYN" --enforce none
expect_rc 2 "the option without its gate"
expect_err_contains 'memory manager policy option "memory-drift-tolerance" requires the MemoryManagerDriftTolerance feature gate' "option without gate"

# ---- the group rule explained ----
cat >"$TMPD/kr.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
topologyManagerPolicy: restricted
memoryManagerPolicy: Static
evictionHard: {memory.available: 1Gi}
reservedMemory:
  - {numaNode: 0, limits: {memory: 512Mi}}
  - {numaNode: 1, limits: {memory: 512Mi}}
EOF
R="$TMPD/r"
NR() {
        run node "$@" --root-dir "$R" --config "$TMPD/kr.yaml" --synthetic "$SYN" \
                --numa-memory 8Gi --enforce none
}
cat >"$TMPD/big.yaml" <<EOF
metadata: {uid: big}
spec: {containers: [{name: engine, resources: {limits: {cpu: "10", memory: 10Gi}}}]}
EOF
cat >"$TMPD/small.yaml" <<EOF
metadata: {uid: small}
spec: {containers: [{name: redis, resources: {limits: {cpu: "1", memory: 1Gi}}}]}
EOF
NR init
expect_rc 0 "init with restricted"
NR admit "$TMPD/big.yaml"
expect_rc 0 "the group's pod"
NR admit "$TMPD/small.yaml" --explain
expect_rc 1 "refused by the group rule"
case "$OUT" in
*"no hint [0]: NUMA node 0 is in the multi-node group [0,1], so it cannot serve a single-node allocation (the memory manager's group rule)"*) ;;
*) fail "--explain does not name the group rule: $OUT" ;;
esac

# ---- the kubelet's flags ----
run node init --root-dir "$TMPD/f" --synthetic "$SYN" --numa-memory "$MEM" --enforce none \
        --memory-manager-policy Static --kube-reserved memory=1Gi --eviction-hard "" \
        --reserved-memory "0:memory=512Mi" --reserved-memory "1:memory=512Mi"
expect_rc 0 "--reserved-memory, repeated"
run node init --root-dir "$TMPD/g" --synthetic "$SYN" --numa-memory "$MEM" --enforce none \
        --memory-manager-policy Static --kube-reserved memory=1Gi --eviction-hard "" \
        --reserved-memory "0:memory=512Mi"
expect_rc 2 "--reserved-memory short of Node Allocatable"
expect_err_contains 'the total amount "512Mi" of type "memory" is not equal to the value "1Gi" determined by Node Allocatable feature' "short reservation"
run node init --root-dir "$TMPD/h" --synthetic "$SYN" --enforce none --reserved-memory "0:memory"
expect_rc 2 "--reserved-memory syntax"
expect_err_contains "the reserved limit has incorrect value, expected type=quantatity, got memory" "--reserved-memory syntax"
run node init --root-dir "$TMPD/h" --synthetic "$SYN" --enforce none --memory-manager-policy static
expect_rc 2 "a policy name in the wrong case"
expect_err_contains 'unknown policy: "static"' "policy name"

finish
