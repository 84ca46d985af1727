#!/bin/sh
# nodecm node: a node kept in a directory, from the shell. Enforcement here is "none" or
# "plan" (real cgroups: tests/integration/test-cgroups-v1.sh). Also: the lock (two writers at
# once lose nothing; --no-wait), files 0600 and leftovers of a crash, and kill -9 at random
# moments of admissions and removals leaving the state before or after, nothing orphaned.
. "$(dirname "$0")/lib.sh"

D="$TMPD/node"
T="package:2 numa:1 core:4 pu:2"
cat >"$TMPD/k.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
topologyManagerPolicy: single-numa-node
enforcement: none
EOF
# pod UID CPU: a Guaranteed pod with one app container
pod() {
        cat >"$TMPD/$1.yaml" <<EOF
metadata: {name: $1, uid: $1}
spec:
  containers:
  - name: app
    resources: {limits: {cpu: "$2", memory: 64Mi}}
EOF
}
pod g1 2
pod g2 2
pod huge 64
cat >"$TMPD/web.yaml" <<EOF
metadata: {name: web, uid: web}
spec:
  containers:
  - name: app
    resources: {limits: {cpu: "2", memory: 64Mi}}
  - name: log
    resources: {limits: {cpu: "2", memory: 64Mi}}
EOF
N() {
        run node "$@" --root-dir "$D" --config "$TMPD/k.yaml" --synthetic "$T"
}

run node --help
expect_rc 0 "--help"
run node admit --help
expect_rc 0 "admit --help"
run node frob
expect_rc 2 "unknown subcommand"
expect_err_contains "unknown subcommand 'frob'" "unknown subcommand"
N admit
expect_rc 2 "admit without a pod"
expect_err_contains "expected one POD file" "admit without a pod"
N status --explain
expect_rc 2 "--explain on status"
N status
expect_rc 2 "status before init"
expect_err_contains "run 'nodecm node init' first" "status before init"

# a release older than nodecm reproduces is refused before anything is written
N init --kubelet-version 1.31
expect_rc 2 "init with kubelet 1.31"
expect_err_contains "kubelet version 1.31: nodecm reproduces kubelet 1.32 and newer" \
        "init with kubelet 1.31"
[ ! -e "$D/state.json" ] || fail "a refused init wrote nothing"
N init
expect_rc 0 "init"
expect_out "init: node in $D (none enforcer)" "init"
for f in cpu_manager_state nodecm_pods nodecm_pods_journal nodecm.lock; do
        [ "$(stat -c %a "$D/$f")" = 600 ] || fail "$f is not 0600"
done
[ "$(stat -c %a "$D")" = 700 ] || fail "$D is not 0700"
N init
expect_rc 0 "init again: the state there is validated, kept"

N admit "$TMPD/g1.yaml" --json
expect_rc 0 "admit g1"
expect_out '{"op": "admit", "pod": "g1", "admitted": true, "containers": [{"name": "app", "exclusive": true, "cpus": "2-3", "numa": [0], "devices": {}}]}' "admit g1"
N admit "$TMPD/web.yaml"
expect_rc 0 "admit web"
expect_out "admit web: admitted: app exclusive 4-5 (NUMA 0); log exclusive 6-7 (NUMA 0)" "admit web"
N admit "$TMPD/huge.yaml"
expect_rc 1 "a pod that does not fit"
expect_err_contains "TopologyAffinityError" "a pod that does not fit"
case "$OUT" in *'admit huge: rejected'*) ;; *) fail "refusal output: [$OUT]" ;; esac
"$NODECM" checkpoint verify "$D/cpu_manager_state" >/dev/null || fail "verify after admit"

N status --json
expect_rc 0 "status --json"
case "$OUT" in
*'"op": "state", "defaultCpuSet": "0-1,8-15", "entries": {"g1": {"app": "2-3"}, "web": {"app": "4-5", "log": "6-7"}}'*'"use": "exclusive", "holders": [{"pod": "g1", "name": "g1", "container": "app"}]'*'"pods": [{"uid": "g1"'*) ;;
*) fail "status --json: [$OUT]" ;;
esac
N status
expect_rc 0 "status"
case "$OUT" in *"cpu  2 g1/app"*"shared pool: 0-1,8-15"*) ;; *) fail "status: [$OUT]" ;; esac

N remove web log --json
expect_rc 0 "remove a container"
expect_out '{"op": "remove", "pod": "web", "container": "log", "removed": true, "released": "6-7"}' "remove a container"
N status --json
case "$OUT" in *'"name": "log", "exclusive": false, "cpus": "0-1,6-15", "removed": true'*) ;; *) fail "removed container: [$OUT]" ;; esac
N remove g1
expect_rc 0 "remove a pod"
expect_out 'removePod g1: released 2-3 to the shared pool' "remove a pod"
N remove nobody
expect_rc 0 "remove an unknown pod"
expect_out 'removePod nobody: nothing to remove' "remove an unknown pod"
N remove nobody --json
expect_rc 0 "remove an unknown pod, JSON"
expect_out '{"op": "removePod", "pod": "nobody", "removed": false, "released": ""}' "remove an unknown pod, JSON"
N reconcile
expect_rc 0 "reconcile"

# The node keeps the configuration it was initialised with (nodecm_config): later commands
# need no --config (and read-only ones work with none), and one with another configuration is
# refused, naming what changed. 'init' with another one is the kubelet's restart: checked
# against the state (a reservation the state does not fit is the kubelet's start-up error,
# exit 1), applied and recorded when it fits.
sed 's/reservedSystemCPUs: "0"/reservedSystemCPUs: "4"/' "$TMPD/k.yaml" >"$TMPD/k2.yaml"
N admit "$TMPD/g2.yaml"
expect_rc 0 "admit g2"
RECORD=$(cat "$D/nodecm_config")
run node status --root-dir "$D" --synthetic "$T"
expect_rc 0 "status without --config: the recorded one"
case "$OUT" in *"cpuManagerPolicy static (reserved 0)"*) ;; *) fail "recorded config: [$OUT]" ;; esac
run node admit "$TMPD/g1.yaml" --root-dir "$D" --config "$TMPD/k2.yaml" --synthetic "$T"
expect_rc 2 "another configuration"
expect_err_contains "was initialised with another configuration (reservedSystemCPUs: \"0\" -> \"4\")" \
        "another configuration"
run node status --root-dir "$D" --config "$TMPD/k2.yaml" --synthetic "$T"
expect_rc 2 "another configuration, status"
run node init --root-dir "$D" --config "$TMPD/k2.yaml" --synthetic "$T"
expect_rc 1 "a reservation the state does not fit"
expect_err_contains "start cpu manager error" "a reservation the state does not fit"
[ "$(cat "$D/nodecm_config")" = "$RECORD" ] || fail "a refused init changed the record"
run node admit "$TMPD/g1.yaml" --root-dir "$D" --synthetic "$T" --reserved-cpus 0-1
expect_rc 2 "a flag over the recorded configuration"
expect_err_contains 'reservedSystemCPUs: "0" -> "0-1"' "a flag over the recorded configuration"
sed 's/topologyManagerPolicy: single-numa-node/topologyManagerPolicy: best-effort/' \
        "$TMPD/k.yaml" >"$TMPD/k3.yaml"
run node init --root-dir "$D" --config "$TMPD/k3.yaml" --synthetic "$T"
expect_rc 0 "a change the state fits, at init (the kubelet's restart)"
run node status --root-dir "$D" --synthetic "$T"
case "$OUT" in *"topologyManagerPolicy best-effort"*) ;; *) fail "recorded k3: [$OUT]" ;; esac
run node init --root-dir "$D" --config "$TMPD/k.yaml" --synthetic "$T"
expect_rc 0 "back to the first configuration"

# The plan enforcer prints the writes it would make.
run node init --root-dir "$TMPD/plan" --config "$TMPD/k.yaml" --synthetic "$T" --enforce plan \
        --cgroup-version 2 --capacity cpu=8,memory=16Gi
expect_rc 0 "init --enforce plan"
case "$OUT" in *"init: node in $TMPD/plan (plan enforcer)"*"# kubepods (node allocatable): /kubepods"*) ;; *) fail "plan: [$OUT]" ;; esac

# Leftovers of a crash between write and rename go at the next start.
: >"$D/.cpu_manager_state.tmp0badf00d"
: >"$D/.nodecm_pods.tmpdeadbeef"
N status
expect_rc 0 "status with leftovers"
[ -e "$D/.cpu_manager_state.tmp0badf00d" ] && fail "stale temporary file kept"
[ -e "$D/.nodecm_pods.tmpdeadbeef" ] && fail "stale temporary file kept"

# ---- the lock ----
flock "$D/nodecm.lock" sleep 3 &
HOLDER=$!
sleep 0.5
N status --no-wait
expect_rc 3 "--no-wait while another holds the lock (3: try again)"
expect_err_contains "is locked by another nodecm" "--no-wait while locked"
wait "$HOLDER"

# Two writers at once: every admission and removal of both lands, none is lost.
N remove g2
writer() {
        i=0
        while [ $i -lt 8 ]; do
                u="$1-$i"
                cat >"$TMPD/$u.yaml" <<EOF
metadata: {name: $u, uid: $u}
spec:
  containers:
  - name: app
    resources: {requests: {cpu: 10m}}
EOF
                "$NODECM" node admit "$TMPD/$u.yaml" --root-dir "$D" --config "$TMPD/k.yaml" \
                        --synthetic "$T" >/dev/null 2>>"$TMPD/writers.err" ||
                        echo "admit $u failed" >>"$TMPD/writers.err"
                i=$((i + 1))
        done
}
writer a &
WA=$!
writer b &
WB=$!
wait "$WA"
wait "$WB"
[ -s "$TMPD/writers.err" ] && fail "concurrent writers: $(cat "$TMPD/writers.err")"
N status --json
n=$(printf '%s\n' "$OUT" | grep -o '"uid": "[ab]-[0-9]"' | sort -u | wc -l)
[ "$n" -eq 16 ] || fail "concurrent writers: $n of 16 pods recorded"

# ---- kill -9 at random moments of admissions and removals ----
# Whatever the moment, the directory holds the state before or after the command (a change cut
# short is rolled back by the next command: docs/node.md), and no CPU is held by a pod that
# nodecm_pods does not name. tests/unit/test-node-faults.c kills at every single write.
BIG="package:2 numa:2 core:16 pu:2"
K="$TMPD/kill"
run node init --root-dir "$K" --config "$TMPD/k.yaml" --synthetic "$BIG"
expect_rc 0 "init for kill -9"
i=0
while [ $i -lt 100 ]; do
        pod "k$i" 2
        if [ $((i % 3)) -eq 2 ]; then
                set -- remove "k$((i - 1))"
        else
                set -- admit "$TMPD/k$i.yaml" --explain
        fi
        "$NODECM" node "$@" --root-dir "$K" --config "$TMPD/k.yaml" --synthetic "$BIG" \
                >/dev/null 2>&1 &
        victim=$!
        sleep "0.0$(( $(od -An -N1 -tu1 /dev/urandom) % 30 ))"
        kill -9 "$victim" 2>/dev/null
        wait "$victim" 2>/dev/null
        run node status --root-dir "$K" --config "$TMPD/k.yaml" --synthetic "$BIG" --json
        expect_rc 0 "kill -9 #$i: status restores"
        "$NODECM" checkpoint verify "$K/cpu_manager_state" >/dev/null 2>"$TMPD/verr" ||
                fail "kill -9 #$i: checkpoint verify: $(cat "$TMPD/verr")"
        printf '%s\n' "$OUT" | /usr/bin/python3 -c '
import json, sys
s = json.loads(sys.stdin.read())
held = set(s["entries"])
known = set(p["uid"] for p in s["pods"])
if held - known:
    sys.exit("CPUs held by pods no record names: %s" % sorted(held - known))
' || fail "kill -9 #$i: orphaned CPUs"
        i=$((i + 1))
done
ls -a "$K" | grep -q '^\.[^.]' && fail "files left after the kills: $(ls -a "$K" | tr '\n' ' ')"

# prefer-closest-numa-nodes needs every node's distance row, as cadvisor reads it: this dump
# has node directories without a `distance` file, so the kubelet refuses to start.
mkdir -p "$TMPD/nodist"
tar -xjf "$DATA/topologies/64fake-4n2s2ca2c2t.tar.bz2" -C "$TMPD/nodist" || fail "extract"
F="$TMPD/nodist/64fake-4n2s2ca2c2t"
cat >"$TMPD/closest.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
topologyManagerPolicy: best-effort
topologyManagerPolicyOptions: {prefer-closest-numa-nodes: "true"}
enforcement: none
EOF
run node init --root-dir "$TMPD/nodist/a" --config "$TMPD/closest.yaml" --fsroot "$F"
expect_rc 2 "prefer-closest-numa-nodes without distance files"
expect_err_contains "cannot discover NUMA topology: error getting NUMA distances from cadvisor" \
        "prefer-closest-numa-nodes without distance files"
sed '/topologyManagerPolicyOptions/d' "$TMPD/closest.yaml" >"$TMPD/far.yaml"
run node init --root-dir "$TMPD/nodist/b" --config "$TMPD/far.yaml" --fsroot "$F"
expect_rc 0 "no distance files, no prefer-closest-numa-nodes"

finish
