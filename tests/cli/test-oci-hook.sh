#!/bin/sh
# nodecm oci-hook as a runtime runs it, on a directory laid out as a cgroup v1 mount and a fake
# /proc (no root needed; tests/integration/test-oci-*.py run it under runc and podman): usage
# and input errors, a container that is not nodecm's, admission, refusal with the kubelet's
# text, release, and kill -9 at random moments of hook runs leaving a node and a record that
# agree once the runtime has cleaned up after the killed hooks.
. "$(dirname "$0")/lib.sh"

T="package:1 core:8 pu:1"
CG="$TMPD/cg"
PROC="$TMPD/proc"
D="$TMPD/node"
mkdir -p "$CG/cpuset/ctrs" "$PROC/proc"
printf '0-7\n' >"$CG/cpuset/ctrs/cpuset.cpus"
printf '0\n' >"$CG/cpuset/ctrs/cpuset.mems"
cat >"$TMPD/k.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
failCgroupV1: false
EOF
HOOK="oci-hook --root-dir $D --config $TMPD/k.yaml --synthetic \"$T\" --cgroup-mount $CG --cgroup-version 1 --proc $PROC"
GUARANTEED='{"cpu": {"shares": 1024, "quota": 100000, "period": 100000}, "memory": {"limit": 268435456}}'
PID=100

# ctr ID ANNOTATIONS RESOURCES: a container the runtime made (cgroup, process, bundle); sets
# $STATE to its createRuntime state and $STOPPED to its poststop state.
ctr() {
        PID=$((PID + 1))
        mkdir -p "$CG/cpuset/ctrs/$1" "$PROC/proc/$PID" "$TMPD/b/$1"
        printf '0-7\n' >"$CG/cpuset/ctrs/$1/cpuset.cpus"
        printf '0\n' >"$CG/cpuset/ctrs/$1/cpuset.mems"
        printf '3:cpuset:/ctrs/%s\n' "$1" >"$PROC/proc/$PID/cgroup"
        printf '{"annotations": {%s}, "linux": {"resources": %s}}\n' "$2" "$3" >"$TMPD/b/$1/config.json"
        STATE=$(printf '{"ociVersion": "1.0.2", "id": "%s", "status": "creating", "pid": %d, "bundle": "%s", "annotations": {%s}}' \
                "$1" "$PID" "$TMPD/b/$1" "$2")
        STOPPED=$(printf '{"ociVersion": "1.0.2", "id": "%s", "status": "stopped", "bundle": "%s"}' "$1" "$TMPD/b/$1")
}

# hook STATE [ARGS...]
hook() {
        state=$1
        shift
        printf '%s' "$state" | eval "\"\$NODECM\" $HOOK \"\$@\"" >"$TMPD/out" 2>"$TMPD/err"
        RC=$?
        OUT=$(cat "$TMPD/out")
        ERR=$(cat "$TMPD/err")
}

run oci-hook --help
expect_rc 0 "--help"
case "$OUT" in *createRuntime*poststop*) ;; *) fail "--help names the stages" ;; esac
run oci-hook --stage start
expect_rc 2 "an unknown stage"
expect_err_contains "--stage: expected createRuntime, prestart, poststop or reconcile, got 'start'" "an unknown stage"

hook 'not json'
expect_rc 2 "a state that is not JSON"
expect_err_contains "state:1:2: invalid JSON" "a state that is not JSON"
hook '{"id": "x", "status": "creating", "pid": "12"}'
expect_rc 2 "a pid that is a string"
expect_err_contains "state: pid: expected an integer, got string" "a pid that is a string"

# not nodecm's, with the opt-outs: nothing is made
ctr u1 '"app": "x"' '{}'
hook "$STATE" --json --no-confine
expect_rc 0 "a container that is not nodecm's, --no-confine"
expect_out '{"stage": "create", "id": "u1", "action": "skipped", "reason": "no nodecm.io/managed or pod UID annotation"}' "skipped"
[ -e "$D" ] && fail "a skipped container made the node directory"
ctr u0 '"nodecm.io/managed": "false"' '{}'
hook "$STATE" --json
expect_out '{"stage": "create", "id": "u0", "action": "skipped", "reason": "nodecm.io/managed is \"false\""}' "opted out"
[ -e "$D" ] && fail "an opted-out container made the node directory"
# not nodecm's: kept on the shared pool (no stranger on an exclusive CPU)
ctr u1 '"app": "x"' '{}'
hook "$STATE" --json
expect_rc 0 "a container that is not nodecm's"
expect_out '{"stage": "create", "id": "u1", "action": "confined", "cpus": "0-7", "cgroup": "/ctrs/u1"}' "confined"
U1_STOPPED=$STOPPED

# a bundle whose config.json is broken is an error naming it
ctr bad '"nodecm.io/managed": "true"' '{"cpu": {"shares": "x"}}'
hook "$STATE"
expect_rc 2 "a broken config.json"
expect_err_contains "$TMPD/b/bad/config.json: linux.resources.cpu.shares: expected an integer" "a broken config.json"

# admitted, then the pool follows
ctr s1 '"nodecm.io/pod-uid": "ps"' '{"cpu": {"shares": 512}}'
hook "$STATE" --json
expect_rc 0 "a Burstable container"
ctr g1 '"nodecm.io/pod-uid": "pg"' "$GUARANTEED"
hook "$STATE" --json
expect_rc 0 "a Guaranteed container"
expect_out '{"stage": "create", "id": "g1", "action": "admitted", "pod": "pg", "container": "g1", "exclusive": true, "cpus": "1", "mems": "", "cgroup": "/ctrs/g1"}' "admitted (cpuset.mems left alone, as the kubelet leaves it)"
[ "$(cat "$CG/cpuset/ctrs/g1/cpuset.cpus")" = 1 ] || fail "g1's cpuset.cpus: $(cat "$CG/cpuset/ctrs/g1/cpuset.cpus")"
[ "$(cat "$CG/cpuset/ctrs/s1/cpuset.cpus")" = "0,2-7" ] || fail "s1 did not follow the pool: $(cat "$CG/cpuset/ctrs/s1/cpuset.cpus")"
[ "$(cat "$CG/cpuset/ctrs/u1/cpuset.cpus")" = "0,2-7" ] || fail "the stranger u1 is on an exclusive CPU: $(cat "$CG/cpuset/ctrs/u1/cpuset.cpus")"
[ "$(cat "$CG/cpuset/ctrs/u0/cpuset.cpus")" = "0-7" ] || fail "the opted-out u0 was touched"
G1_STOPPED=$STOPPED

# refused: the kubelet's reason and message, one line, exit 1
ctr big '"nodecm.io/pod-uid": "pbig"' '{"cpu": {"shares": 7168, "quota": 700000, "period": 100000}, "memory": {"limit": 268435456}}'
hook "$STATE"
expect_rc 1 "more CPUs than are free"
expect_err_contains "UnexpectedAdmissionError: Allocate failed due to not enough cpus available to satisfy request: requested=7, available=6, which is unexpected" "refused"

hook "$G1_STOPPED" --json
expect_rc 0 "poststop"
expect_out '{"stage": "poststop", "id": "g1", "action": "released", "pod": "pg", "container": "g1", "released": "1"}' "released"
[ "$(cat "$CG/cpuset/ctrs/s1/cpuset.cpus")" = "0-7" ] || fail "s1 did not grow back"
[ "$(cat "$CG/cpuset/ctrs/u1/cpuset.cpus")" = "0-7" ] || fail "u1 did not grow back"
hook "$U1_STOPPED" --json
expect_out '{"stage": "poststop", "id": "u1", "action": "confined"}' "a stranger's poststop"
run node status --json --root-dir "$D" --config "$TMPD/k.yaml" --synthetic "$T"
expect_rc 0 "node status reads the hook's node"
case "$OUT" in *'"uid": "ps"'*) ;; *) fail "node status lists the hook's pod: $OUT" ;; esac

# ---- kill -9 at random moments of hook runs ----
# A killed createRuntime hook fails the container: the runtime removes its cgroup, and the next
# hook run releases whatever the node had recorded of it.
i=0
live=""
killed=0
completed=0
while [ $i -lt 30 ]; do
        if [ $((i % 3)) -eq 2 ] && [ -n "$live" ]; then
                id=${live%% *}
                live=${live#"$id"}
                live=${live# }
                state=$(printf '{"ociVersion": "1.0.2", "id": "%s", "status": "stopped", "bundle": "x"}' "$id")
                rm -rf "$CG/cpuset/ctrs/$id" # runc removes the cgroup before poststop
        else
                id="k$i"
                ctr "$id" "\"nodecm.io/pod-uid\": \"pk$i\"" "$GUARANTEED"
                state=$STATE
        fi
        # the hook itself is the background job (not a pipeline around it), so that the kill
        # reaches it
        printf '%s' "$state" >"$TMPD/state"
        "$NODECM" oci-hook --root-dir "$D" --config "$TMPD/k.yaml" --synthetic "$T" \
                --cgroup-mount "$CG" --cgroup-version 1 --proc "$PROC" <"$TMPD/state" \
                >/dev/null 2>&1 &
        victim=$!
        sleep "0.00$(($(od -An -N1 -tu1 /dev/urandom) % 9))"
        kill -9 "$victim" 2>/dev/null
        if wait "$victim"; then
                completed=$((completed + 1))
                case "$id" in k*) [ -d "$CG/cpuset/ctrs/$id" ] && live="$live $id" ;; esac
        else
                killed=$((killed + 1))
                rm -rf "$CG/cpuset/ctrs/$id" # the runtime gives up on the container
        fi
        live=${live# }
        "$NODECM" checkpoint verify "$D/cpu_manager_state" >/dev/null 2>"$TMPD/verr" ||
                fail "kill -9 #$i: checkpoint verify: $(cat "$TMPD/verr")"
        i=$((i + 1))
done
echo "kill -9: $killed hook runs killed, $completed completed"
# one more hook run settles what the kills left
ctr settle '"nodecm.io/managed": "true"' '{}'
hook "$STATE"
expect_rc 0 "a hook run after the kills"
run node status --json --root-dir "$D" --config "$TMPD/k.yaml" --synthetic "$T"
expect_rc 0 "node status after the kills"
printf '%s\n' "$OUT" >"$TMPD/status.json"
/usr/bin/python3 - "$TMPD/status.json" "$D/nodecm_oci_containers" "$CG/cpuset/ctrs" <<'EOF' || fail "after the kills the node and the hook's record disagree"
import json, os, sys
status = json.load(open(sys.argv[1]))
record = json.load(open(sys.argv[2]))["containers"]
pods = {p["uid"] for p in status["pods"]}
recorded = {c["pod"] for c in record}
ok = True
if pods != recorded:
    print("node pods %s, recorded %s" % (sorted(pods), sorted(recorded)), file=sys.stderr)
    ok = False
for c in record:
    if not os.path.isdir(os.path.join(sys.argv[3], c["id"])):
        print("recorded %s has no cgroup" % c["id"], file=sys.stderr)
        ok = False
seen = {}
for uid, ctrs in status["entries"].items():
    for name, cpus in ctrs.items():
        for part in cpus.split(","):
            a, _, b = part.partition("-")
            for cpu in range(int(a), int(b or a) + 1):
                if cpu in seen:
                    print("CPU %d held by %s and %s" % (cpu, seen[cpu], uid), file=sys.stderr)
                    ok = False
                seen[cpu] = uid
sys.exit(0 if ok else 1)
EOF
ls -a "$D" | grep -q '\.tmp' && fail "temporary files left after the kills: $(ls -a "$D")"

finish
