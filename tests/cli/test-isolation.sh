#!/bin/sh
# Isolation through the command (docs/isolation.md): `nodecm topology` on a dump given its
# command line and sysfs files (DIR/proc/cmdline), read back from --json; a persistent node with
# examples/isolation/ (isolatedCPUs exclusive-only, a pod with CRI-O's knobs) planned: its status
# and the plan of the knobs' writes, cgroups and machine; an in-place resize inside the isolated
# pool; the configurations refused, exit 2, one line naming the field.
. "$(dirname "$0")/lib.sh"

EX="$DATA/../../examples"
ROOT=$(mkdir -p "$TMPD/x" && cd "$TMPD/x" && tar xjf "$DATA/topologies/8em64t-2s2ca2c.tar.bz2" && cd 8em64t-2s2ca2c && pwd)
mkdir -p "$ROOT/proc"
printf 'BOOT_IMAGE=/vmlinuz ro isolcpus=managed_irq,domain,2-7 nohz_full=4-N -- isolcpus=1\n' >"$ROOT/proc/cmdline"

run topology --fsroot "$ROOT"
expect_rc 0 "topology of a machine with isolcpus"
case "$OUT" in
*"Isolated CPUs: 2-7 (isolcpus=domain 2-7)
nohz_full CPUs: 4-7 (nohz_full= 4-7)
Managed interrupts kept off (isolcpus=managed_irq): 2-7"*) ;;
*) fail "topology: the isolation lines: $OUT" ;;
esac
run topology --fsroot "$ROOT" --json
expect_rc 0 "topology --json"
printf '%s\n' "$OUT" >"$TMPD/t.json"
case "$OUT" in
*'{"cpu": 4, "core": 4, "socket": 0, "numa": 0, "uncore": 0, "isolated": true, "nohz_full": true}'*) ;;
*) fail "topology --json: CPU 4's marks: $OUT" ;;
esac
run topology --topology "$TMPD/t.json"
case "$OUT" in
*"Isolated CPUs: 2-7 (given isolated 2-7)"*) ;;
*) fail "--topology reads the marks back: $OUT" ;;
esac

# the examples, planned
N="--root-dir $TMPD/d --config $EX/isolation/kubelet.yaml --topology $TMPD/t.json --enforce plan --cgroup-version 1"
run node init $N
expect_rc 0 "node init"
run node admit "$EX/isolation/rt-pod.yaml" $N
expect_rc 0 "node admit rt-pod"
case "$OUT" in
*"engine exclusive 2-4,6"*"logger shared 0-1"*) ;;
*) fail "rt-pod: isolated CPUs for the engine, the shared pool for the logger: $OUT" ;;
esac
case "$OUT" in
*"kubepods/pod8c6e0a38-0c8b-4a5e-9d55-6f1b5d2d7f11/engine/cpuset.sched_load_balance 0"*"/proc/irq/default_smp_affinity a3"*) ;;
*) fail "the plan has the knobs' writes: $OUT" ;;
esac
run node status --json $N
expect_rc 0 "node status"
case "$OUT" in
*'"sharedPool": "0-1", "isolatedCPUs": "exclusive-only", "isolated": "2-7"'*) ;;
*) fail "status: the pool and the isolated CPUs: $OUT" ;;
esac
case "$OUT" in
*'"name": "engine", "exclusive": true, "cpus": "2-4,6", "knobs": ["cpu-load-balancing", "cpu-quota", "irq-load-balancing"]'*) ;;
*) fail "status: the engine's knobs: $OUT" ;;
esac

# an in-place resize stays in the isolated pool, the pod keeps its annotations, and the
# interrupts follow the engine's new CPUs (the gate on; the resized pod names no annotation)
cp "$EX/isolation/kubelet.yaml" "$TMPD/kubelet-resize.yaml"
printf 'featureGates: {InPlacePodVerticalScalingExclusiveCPUs: true}\n' >>"$TMPD/kubelet-resize.yaml"
R="--root-dir $TMPD/r --config $TMPD/kubelet-resize.yaml --topology $TMPD/t.json --enforce plan --cgroup-version 1"
sed -e '/annotations:/,/irq-load-balancing/d' -e 's/cpu: "4"/cpu: "CPUS"/' "$EX/isolation/rt-pod.yaml" >"$TMPD/rt-resize.yaml"
grep -q 'cpu: "CPUS"' "$TMPD/rt-resize.yaml" && ! grep -q crio "$TMPD/rt-resize.yaml" || fail "rt-resize.yaml"
run node init $R
expect_rc 0 "node init, resize"
run node admit "$EX/isolation/rt-pod.yaml" $R
expect_rc 0 "node admit, resize"
sed 's/CPUS/6/' "$TMPD/rt-resize.yaml" >"$TMPD/rt6.yaml"
run node resize "$TMPD/rt6.yaml" $R
expect_rc 0 "node resize 4 -> 6"
case "$OUT" in
*"engine exclusive 2-7"*"/proc/irq/default_smp_affinity 03"*) ;;
*) fail "resize 4 -> 6: the isolated pool, the interrupts off the new CPUs: $OUT" ;;
esac
# back to the promise, another pod takes the last isolated CPUs: CPU 1 is free, but not the
# engine's to take
run node resize "$EX/isolation/rt-pod.yaml" $R
expect_rc 0 "node resize 6 -> 4"
case "$OUT" in *"engine exclusive 2-4,6"*) ;; *) fail "resize 6 -> 4: $OUT" ;; esac
printf '%s\n' "metadata: {uid: rt2, name: rt2, annotations: {nodecm.io/isolated-cpus: require}}" \
        "spec: {containers: [{name: app, resources: {limits: {cpu: \"2\", memory: 1Gi}}}]}" >"$TMPD/rt2.yaml"
run node admit "$TMPD/rt2.yaml" $R
expect_rc 0 "node admit rt2"
sed 's/CPUS/5/' "$TMPD/rt-resize.yaml" >"$TMPD/rt5.yaml"
# (single-numa-node: the resize's hints hold only its pool's free CPUs, so the merge refuses)
run node resize --explain "$TMPD/rt5.yaml" $R
expect_rc 1 "node resize 4 -> 5"
expect_err_contains "Infeasible: Resources cannot be allocated with Topology locality" "node resize 4 -> 5"
case "$OUT" in
*"engine holds 2-4,6 on NUMA node(s) 0, which have 0 free CPUs in its isolation pool (the isolated CPUs); it needs 1 more, and no other NUMA node has a free CPU it may take"*) ;;
*) fail "resize 4 -> 5: --explain: $OUT" ;;
esac
# without a topology manager policy the CPU manager says it itself
sed 's/^topologyManagerPolicy: .*/topologyManagerPolicy: none/' "$TMPD/kubelet-resize.yaml" >"$TMPD/kubelet-none.yaml"
# (the node was initialised with single-numa-node: init again with none, as a kubelet restart)
run node init --root-dir "$TMPD/r" --config "$TMPD/kubelet-none.yaml" --topology "$TMPD/t.json" --enforce plan --cgroup-version 1
expect_rc 0 "node init with topologyManagerPolicy none"
run node resize "$TMPD/rt5.yaml" --root-dir "$TMPD/r" --config "$TMPD/kubelet-none.yaml" --topology "$TMPD/t.json" --enforce plan --cgroup-version 1
expect_rc 1 "node resize 4 -> 5, policy none"
expect_err_contains "Infeasible: Allocate failed due to isolatedCPUs exclusive-only: resize of engine: it is in the isolated pool (holds 2-4,6) and grows only onto isolated CPUs: 1 more requested, 0 free isolated (isolated CPUs 2-7), which is unexpected" "node resize 4 -> 5, policy none"
run node status --json --root-dir "$TMPD/r" --config "$TMPD/kubelet-none.yaml" --topology "$TMPD/t.json" --enforce plan --cgroup-version 1
case "$OUT" in
*'"name": "engine", "exclusive": true, "cpus": "2-4,6", "knobs": ["cpu-load-balancing", "cpu-quota", "irq-load-balancing"]'*) ;;
*) fail "status after the resizes: the engine keeps its knobs: $OUT" ;;
esac

# refused configurations
printf '%s\n' "apiVersion: kubelet.config.k8s.io/v1beta1" "kind: KubeletConfiguration" \
        "isolatedCPUs: exclusive" >"$TMPD/bad.yaml"
run node status --root-dir "$TMPD/d" --config "$TMPD/bad.yaml" --topology "$TMPD/t.json"
expect_rc 2 "an unknown isolatedCPUs"
expect_err_contains 'isolatedCPUs: unknown value "exclusive" (ignore, exclude or exclusive-only)' "an unknown isolatedCPUs"
printf '%s\n' "apiVersion: kubelet.config.k8s.io/v1beta1" "kind: KubeletConfiguration" \
        "cpuManagerPolicy: static" 'reservedSystemCPUs: "2"' "isolatedCPUs: exclude" >"$TMPD/iso.yaml"
run node init --root-dir "$TMPD/e" --config "$TMPD/iso.yaml" --topology "$TMPD/t.json" --enforce none
expect_rc 2 "every reserved CPU isolated"
expect_err_contains "isolatedCPUs: exclude: the reserved CPUs (2) are all isolated (2-7)" "every reserved CPU isolated"
finish
