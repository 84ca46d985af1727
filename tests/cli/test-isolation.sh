#!/bin/sh
# Isolation through the command (docs/isolation.md): `nodecm topology` on a dump given its
# command line and sysfs files (DIR/proc/cmdline), read back from --json; a persistent node with
# examples/isolation/ (isolatedCPUs exclusive-only, a pod with CRI-O's knobs) planned: its status
# and the plan of the knobs' writes, cgroups and machine; the configurations refused, exit 2,
# one line naming the field.
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
