#!/bin/sh
# nodecm node against hostile pods and arguments (issue 20): what the kubelet cannot hold or the
# API server would refuse is refused where it is read, naming the field (exit 2), with nothing
# written; nothing a node holds makes another pod's admission fail; what is echoed back never
# acts on a terminal.
. "$(dirname "$0")/lib.sh"

D="$TMPD/node"
T="package:1 numa:1 core:4 pu:2"
cat >"$TMPD/k.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
enforcement: none
# the plan enforcer's cgroup v1 layout below: a 1.35+ kubelet refuses v1 unless told otherwise
failCgroupV1: false
EOF
N() {
        run node "$@" --root-dir "$D" --config "$TMPD/k.yaml" --synthetic "$T"
}
# snapshot: every file of the node's directory, names and bytes
snapshot() {
        (cd "$D" && for f in $(ls -A | sort); do printf '%s ' "$f"; cksum <"$f"; done)
}
# pod FILE UID CPU [MEMORY [NAME [CONTAINER]]]
pod() {
        cat >"$TMPD/$1" <<EOF
{"metadata": {"uid": "$2", "name": "${5:-p}"},
 "spec": {"containers": [{"name": "${6:-app}",
  "resources": {"limits": {"cpu": "$3", "memory": "${4:-64Mi}"}}}]}}
EOF
}

N init
expect_rc 0 "init"
pod ok.json ok 1
N admit "$TMPD/ok.json"
expect_rc 0 "admit ok"
BEFORE=$(snapshot)

# ---- quantities the kubelet cannot hold: refused at parse, naming the field, nothing written ----
for q in 99999999999999999999 1e20 100Ei 1E 9223372036854776; do
        pod q.json u-q "$q"
        N admit "$TMPD/q.json"
        expect_rc 2 "cpu $q"
        expect_err_contains "spec.containers[0].resources.limits.cpu: invalid" "cpu $q"
done
pod q.json u-q 1 99999999999999999999Ei
N admit "$TMPD/q.json"
expect_rc 2 "memory 99999999999999999999Ei"
expect_err_contains "spec.containers[0].resources.limits.memory: invalid quantity" "memory Ei"
[ "$(snapshot)" = "$BEFORE" ] || fail "a refused pod changed the directory"

# ---- identifiers ----
printf '{"metadata": {"uid": "u\\u0000x"}, "spec": {"containers": [{"name": "a"}]}}' >"$TMPD/nul.json"
N admit "$TMPD/nul.json"
expect_rc 2 "a NUL in a UID"
expect_err_contains 'metadata.uid: invalid value "u\x00x"' "a NUL in a UID"
printf '{"metadata": {"uid": "u"}, "spec": {"containers": [{"name": "a\\nb"}]}}' >"$TMPD/nl.json"
N admit "$TMPD/nl.json"
expect_rc 2 "a newline in a container name"
expect_err_contains 'spec.containers[0].name: invalid value "a\nb"' "newline in a name"
printf '{"metadata": {"uid": "u", "name": "x\\u001b[2Jy\\u202ez"}, "spec": {"containers": [{"name": "a"}]}}' >"$TMPD/esc.json"
N admit "$TMPD/esc.json"
expect_rc 2 "escapes in a name"
expect_err_contains 'metadata.name: invalid value "x\x1b[2Jy\u202ez"' "escapes in a name"
ESC=$(printf '\033')
RLO=$(printf '\342\200\256')
case "$ERR" in *"$ESC"* | *"$RLO"*) fail "a raw escape or RTL override reached stderr: [$ERR]" ;; esac
for u in ../x a/b a_b .x; do
        pod t.json "$u" 1
        N admit "$TMPD/t.json"
        expect_rc 2 "UID $u"
        N remove "$u"
        expect_rc 2 "remove $u"
        expect_err_contains "pod UID: invalid value" "remove $u"
done
N remove ok 'a/../b'
expect_rc 2 "remove a container named by a path"
[ "$(snapshot)" = "$BEFORE" ] || fail "refused identifiers changed the directory"

# ---- a UID is immutable: the same spec again is idempotent, another is refused ----
N admit "$TMPD/ok.json"
expect_rc 0 "the same pod again"
expect_out "admit p: admitted: app exclusive 1 (NUMA 0)" "the same pod again"
BEFORE=$(snapshot)
pod ok2.json ok 2
N admit "$TMPD/ok2.json"
expect_rc 2 "another spec under a held UID"
expect_err_contains "pod 'ok' is held already with another spec" "another spec under a held UID"
[ "$(snapshot)" = "$BEFORE" ] || fail "a refused re-admission changed the directory"

# ---- nothing a node holds fails another pod's admission ----
# Pods an older nodecm admitted, whose requests overflow the QoS tiers' sums.
P="$TMPD/poison"
run node init --root-dir "$P" --config "$TMPD/k.yaml" --synthetic "$T" --enforce plan \
        --cgroup-version 1 --capacity cpu=8,memory=16Gi
expect_rc 0 "init poison"
big() {
        printf '{"removed": [], "pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"uid": "%s", "name": "%s", "namespace": "default"}, "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "9e15", "memory": "9223372036854775807"}}}]}}}' "$1" "$1"
}
printf '{"generation": 7, "pods": [\n%s,\n%s]}\n' "$(big b1)" "$(big b2)" >"$P/nodecm_pods"
: >"$P/nodecm_pods_journal"
# The kubelet's resource-fit admission counts them too (saturated): the node is full, a
# refusal (exit 1) with the kubelet's reason, not a failure naming another pod.
run node admit "$TMPD/ok.json" --root-dir "$P" --config "$TMPD/k.yaml" --synthetic "$T" \
        --enforce plan --cgroup-version 1 --capacity cpu=8,memory=16Gi
expect_rc 1 "the fit admission beside pods whose requests overflow"
expect_err_contains "OutOfcpu: Node didn't have enough resource: cpu" "fit beside overflowing pods"
# Without it (as behind a kubelet), the admission itself: the QoS tiers' sums saturate.
sed 's/^enforcement: none$/enforcement: none\nfitAdmission: never/' "$TMPD/k.yaml" >"$TMPD/kp.yaml"
run node init --root-dir "$P" --config "$TMPD/kp.yaml" --synthetic "$T" --enforce plan \
        --cgroup-version 1 --capacity cpu=8,memory=16Gi
expect_rc 0 "init poison, fitAdmission: never"
run node admit "$TMPD/ok.json" --root-dir "$P" --synthetic "$T" \
        --enforce plan --cgroup-version 1 --capacity cpu=8,memory=16Gi
expect_rc 0 "an admission beside pods whose requests overflow"
case "$OUT" in *"admit p: admitted"*"cpu.shares"*) ;; *) fail "poison: [$OUT]" ;; esac
run node status --root-dir "$P" --synthetic "$T"
expect_rc 0 "status beside them"

# ---- the machine given is the machine enforced: no capacity of this one for another ----
# a synthetic machine of 6 CPUs: kubepods gets its allocatable's shares, whatever this one has:
# 5 CPUs (5120), reservedSystemCPUs "0" taking one as the kubelet's systemReserved cpu;
# each file is written once (hugetlb limits of kubepods were written twice, 0 then unbounded)
run node init --root-dir "$TMPD/syn" --config "$TMPD/k.yaml" --synthetic "package:1 core:3 pu:2" \
        --enforce plan --cgroup-version 1
expect_rc 0 "init, a synthetic machine"
case "$OUT" in *"/cpu/kubepods/cpu.shares 5120"*) ;; *) fail "synthetic capacity: [$OUT]" ;; esac
dups=$(printf '%s\n' "$OUT" | awk '$1 == "write" || $1 == "mkdir" {print $1, $2}' | sort | uniq -d)
[ -z "$dups" ] || fail "init writes these twice: $dups"
pod s.json s 1
run node admit "$TMPD/s.json" --root-dir "$TMPD/syn" --synthetic "package:1 core:3 pu:2" \
        --cgroup-version 1
expect_rc 0 "admit, a synthetic machine"
case "$OUT" in
*"# kubepods (node allocatable"* | *"hugetlb/kubepods/hugetlb."* | *"# besteffort"*)
        fail "admit repeats the start-up writes: [$OUT]" ;;
*"# burstable (QoS tier)"*"cpu.shares"*) ;;
*) fail "admit: the burstable tier's weight: [$OUT]" ;;
esac

# ---- a daemon that is not there, or does not answer: exit 3, saying which ----
run node status --connect "$TMPD/nobody.sock"
expect_rc 3 "no daemon at the socket"
expect_err_contains "no nodecmd answers at $TMPD/nobody.sock" "no daemon at the socket"
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
time.sleep(30)' "$TMPD/busy.sock" &
BUSY=$!
i=0
while [ ! -S "$TMPD/busy.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
run node status --connect "$TMPD/busy.sock" --timeout 1
expect_rc 3 "a daemon that does not answer: --timeout covers the handshake"
expect_err_contains "the daemon did not answer in 1 s: it is busy or stuck" "a busy daemon"
kill "$BUSY" 2>/dev/null
wait "$BUSY" 2>/dev/null

# ---- NUMA ids a 64-bit mask cannot hold: refused only where the kubelet builds a mask ----
# The kubelet's topology manager under policy none builds no NUMA mask: 3 CPUs on NUMA node 72,
# reservedSystemCPUs 0, a Guaranteed pod of 1 CPU gets CPU 1, the shared pool 0,2.
for id in 72 -1 250; do
        cat >"$TMPD/topo$id.json" <<EOF
{"cpus": [{"cpu": 0, "core": 0, "socket": 0, "numa": $id, "uncore": 0},
          {"cpu": 1, "core": 1, "socket": 0, "numa": $id, "uncore": 0},
          {"cpu": 2, "core": 2, "socket": 0, "numa": $id, "uncore": 0}],
 "numa": [{"id": $id, "distances": [10]}]}
EOF
        cat >"$TMPD/numa$id.yaml" <<EOF
node:
  topology: {file: $TMPD/topo$id.json}
  kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: "0", topologyManagerPolicy: none}
steps:
- admit: {metadata: {uid: p1, name: p1}, spec: {containers: [{name: app, resources: {limits: {cpu: "1", memory: 1Gi}}}]}}
EOF
        run simulate "$TMPD/numa$id.yaml" --json
        expect_rc 0 "NUMA node $id, policy none"
        expect_out "{\"step\": 0, \"op\": \"admit\", \"pod\": \"p1\", \"admitted\": true, \"containers\": [{\"name\": \"app\", \"exclusive\": true, \"cpus\": \"1\", \"numa\": [$id], \"devices\": {}}]}
{\"op\": \"state\", \"defaultCpuSet\": \"0,2\", \"entries\": {\"p1\": {\"app\": \"1\"}}}" "NUMA node $id, policy none"
        sed 's/topologyManagerPolicy: none/topologyManagerPolicy: best-effort/' \
                "$TMPD/numa$id.yaml" >"$TMPD/numa$id-be.yaml"
        run simulate "$TMPD/numa$id-be.yaml" --json
        expect_rc 2 "NUMA node $id, a policy that builds masks"
done

# ---- a full disk (the issue's reproducer) and a read-only one: a 64 KiB tmpfs ----
# Every change is all or nothing: a full disk fails it with exit 3 (try again), the directory as
# it was; after a read-only remount the commands that only look still work.
M="$TMPD/small"
mkdir "$M"
if mount -t tmpfs -o size=64k,mode=0700 nodecm-test "$M" 2>/dev/null; then
        trap 'umount "$M" 2>/dev/null; rm -rf "$TMPD"' EXIT
        S="$M/node"
        Ns() {
                run node "$@" --root-dir "$S" --config "$TMPD/k.yaml" --synthetic "$T"
        }
        Ns init
        expect_rc 0 "init on the small disk"
        Ns admit "$TMPD/ok.json"
        expect_rc 0 "admit on the small disk"
        # a Burstable pod, whose in-place resize (its shares) the kubelet's gates allow
        burstable() {
                printf '{"metadata": {"uid": "bu", "name": "bu"}, "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "%s"}}}]}}\n' "$2" >"$TMPD/$1"
        }
        burstable bu.json 100m
        burstable bu2.json 200m
        Ns admit "$TMPD/bu.json"
        expect_rc 0 "admit a Burstable pod on the small disk"
        dd if=/dev/zero of="$M/fill" bs=1k count=256 2>/dev/null
        D="$S"
        FULL=$(snapshot)
        for i in 1 2 3; do
                Ns remove ok
                expect_rc 3 "remove on a full disk #$i"
                expect_err_contains "No space left on device" "remove on a full disk #$i"
                [ "$(snapshot)" = "$FULL" ] || fail "remove on a full disk #$i changed the directory"
        done
        pod b.json b 2
        Ns admit "$TMPD/b.json"
        expect_rc 3 "admit on a full disk"
        [ "$(snapshot)" = "$FULL" ] || fail "admit on a full disk changed the directory"
        Ns resize "$TMPD/bu2.json"
        expect_rc 3 "resize on a full disk"
        expect_err_contains "No space left on device" "resize on a full disk"
        [ "$(snapshot)" = "$FULL" ] || fail "resize on a full disk changed the directory"
        Ns status --json
        expect_rc 0 "status on a full disk"
        case "$OUT" in *'"entries": {"ok": {"app": "1"}}'*'"pods": ['*'{"uid": "ok"'*) ;;
        *) fail "the pod and its CPU, as before the failed removals: [$OUT]" ;; esac
        rm -f "$M/fill"
        Ns remove ok
        expect_rc 0 "remove once there is room"
        Ns admit "$TMPD/ok.json"
        expect_rc 0 "admit once there is room"
        mount -o remount,ro "$M" || fail "remount read-only"
        run node status --root-dir "$S" --synthetic "$T"
        expect_rc 0 "status on a read-only disk, no --config (the recorded one)"
        case "$OUT" in *"cpu 1 p/app"*) ;; *) fail "status read-only: [$OUT]" ;; esac
        Ns pods
        expect_rc 0 "pods on a read-only disk"
        Ns explain "$TMPD/b.json"
        expect_rc 0 "explain on a read-only disk"
        Ns remove ok
        expect_rc 3 "remove on a read-only disk"
        expect_err_contains "Read-only file system" "remove on a read-only disk"
        Ns resize "$TMPD/bu2.json"
        expect_rc 3 "resize on a read-only disk"
        expect_err_contains "Read-only file system" "resize on a read-only disk"
        # every command that writes says the same of the same disk (exit 3, as its --help says)
        run checkpoint rewrite "$S/cpu_manager_state" --output "$M/rewritten"
        expect_rc 3 "checkpoint rewrite onto a read-only disk"
        printf '{"node": {"topology": {"synthetic": "pu:2"}}, "steps": []}\n' >"$TMPD/empty.json"
        run simulate "$TMPD/empty.json" --state-dir "$S"
        expect_rc 3 "simulate --state-dir on a read-only disk"
        umount "$M" || fail "umount"
else
        echo "# no tmpfs mount here (not root?): the full and read-only disk cases are skipped"
fi

finish
