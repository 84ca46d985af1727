#!/bin/sh
# nodecm cgroup apply / set-cpus / remove on this machine's real cgroup v1 hierarchies.
#
# A uniquely named parent (nodecm-test-<pid>-<random>) is made at the root of every v1
# hierarchy nodecm manages and passed as the kubelet's --cgroup-root, so the whole kubepods
# tree lives inside it. A Guaranteed pod with an exclusive CPU and a Burstable pod on the
# shared one each get a real process; the kernel's view (/proc/PID/status, the cgroup files)
# is checked, the cpusets are moved live and checked again, a failing apply is shown to leave
# nothing behind, and everything is removed, also when a check fails (trap).
set -u

skip() {
        echo "SKIP: $*"
        exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root to create cgroups"
[ "$(stat -fc %T /sys/fs/cgroup/cpuset 2>/dev/null)" = cgroupfs ] ||
        skip "no cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset"

NODECM=${NCM_NODECM:?run through meson test}
NAME="nodecm-test-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
TMPD=$(mktemp -d)
FAILS=0
PIDS=""
DIRS=""

fail() {
        echo "FAIL: $*" >&2
        FAILS=$((FAILS + 1))
}

cleanup() {
        for p in $PIDS; do
                kill "$p" 2>/dev/null
                wait "$p" 2>/dev/null
        done
        # Deepest first; only below our own uniquely named parents.
        for d in $DIRS; do
                [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
                [ -d "$d" ] && echo "cleanup: could not remove $d" >&2
        done
        rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The v1 hierarchies nodecm manages, from mountinfo: directly below /sys/fs/cgroup.
HIERS=$(awk '{
        for (i = 1; i <= NF; i++) if ($i == "-") break
        if ($(i + 1) != "cgroup") next
        if ($5 !~ "^/sys/fs/cgroup/[^/]+$") next
        n = split($(i + 3), o, ",")
        for (k = 1; k <= n; k++)
                if (o[k] ~ /^(cpuset|cpu|cpuacct|memory|pids|hugetlb|name=systemd)$/) {
                        print $5
                        break
                }
}' /proc/self/mountinfo | sort -u)
[ -n "$HIERS" ] || skip "no cgroup v1 hierarchies in /proc/self/mountinfo"

for h in $HIERS; do
        mkdir "$h/$NAME" || { fail "mkdir $h/$NAME"; exit 1; }
        DIRS="$DIRS $h/$NAME"
done
cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$NAME/cpuset.cpus"
cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$NAME/cpuset.mems"
CPUS=$(cat /sys/fs/cgroup/cpuset/cpuset.effective_cpus)
case "$CPUS" in
0-*) ;;
*) skip "needs CPUs 0 and 1 in the root cpuset (have $CPUS)" ;;
esac

G_UID=11111111-2222-3333-4444-$(printf '%012d' $$)
B_UID=2a5f6c1e-0d6b-4c1a-9a55-$(printf '%012d' $$)
E_UID=99999999-8888-7777-6666-$(printf '%012d' $$)
cat >"$TMPD/g.yaml" <<EOF
metadata: {name: db, uid: $G_UID}
spec:
  containers:
  - name: app
    resources: {limits: {cpu: "1", memory: 256Mi}}
EOF
cat >"$TMPD/b.yaml" <<EOF
metadata: {name: web, uid: $B_UID}
spec:
  containers:
  - name: app
    resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 200m, memory: 128Mi}}
EOF
cat >"$TMPD/e.yaml" <<EOF
metadata: {name: batch, uid: $E_UID}
spec:
  containers:
  - name: job
EOF

# run ARGS...: nodecm with the test's cgroup root; leaves RC, OUT, ERR.
run() {
        "$NODECM" "$@" --cgroup-root "/$NAME" >"$TMPD/out" 2>"$TMPD/err"
        RC=$?
        OUT=$(cat "$TMPD/out")
        ERR=$(cat "$TMPD/err")
}

expect_rc() {
        [ "$RC" -eq "$1" ] || fail "$2: exit $RC, expected $1 ($ERR)"
}

# cg HIERARCHY POD-PATH-BELOW-KUBEPODS [FILE]
G_POD="kubepods/pod$G_UID"
B_POD="kubepods/burstable/pod$B_UID"
E_POD="kubepods/besteffort/pod$E_UID"
cg() {
        echo "/sys/fs/cgroup/$1/$NAME/$2${3:+/$3}"
}

expect_file() {
        v=$(cat "$1" 2>/dev/null)
        [ "$v" = "$2" ] || fail "$1 is [$v], expected [$2]"
}

cpus_of() {
        awk '/^Cpus_allowed_list:/ {print $2}' "/proc/$1/status"
}

# start CONTAINER-PATH: a sleep moved into every hierarchy of the container's cgroup; its
# pid in STARTED. (Not through $(...): the sleep would hold the substitution's pipe open.)
start() {
        sleep 600 >/dev/null 2>&1 </dev/null &
        STARTED=$!
        PIDS="$PIDS $STARTED"
        for h in $HIERS; do
                echo "$STARTED" >"$h/$NAME/$1/cgroup.procs" ||
                        fail "move $STARTED into $h/$NAME/$1"
        done
}

# ---- apply ----
run cgroup apply "$TMPD/g.yaml" --cpus app=1 --pod-pids-limit 64
expect_rc 0 "apply Guaranteed"
run cgroup apply "$TMPD/b.yaml" --cpus 0 --pod-pids-limit 64
expect_rc 0 "apply Burstable"

expect_file "$(cg cpuset "$G_POD/app" cpuset.cpus)" 1
expect_file "$(cg cpuset "$B_POD/app" cpuset.cpus)" 0
expect_file "$(cg cpuset "$G_POD" cpuset.cpus)" "$CPUS"
expect_file "$(cg cpuset "$G_POD/app" cpuset.mems)" "$(cat /sys/fs/cgroup/cpuset/cpuset.mems)"
expect_file "$(cg cpu "$G_POD" cpu.shares)" 1024
expect_file "$(cg cpu "$G_POD" cpu.cfs_quota_us)" 100000
expect_file "$(cg cpu "$G_POD" cpu.cfs_period_us)" 100000
expect_file "$(cg cpu "$B_POD" cpu.cfs_quota_us)" 20000
expect_file "$(cg cpu "$B_POD" cpu.shares)" 102
expect_file "$(cg cpu kubepods/burstable cpu.shares)" 102
expect_file "$(cg cpu kubepods/besteffort cpu.shares)" 2
expect_file "$(cg memory "$G_POD" memory.limit_in_bytes)" 268435456
expect_file "$(cg memory "$B_POD/app" memory.limit_in_bytes)" 134217728
expect_file "$(cg pids "$G_POD" pids.max)" 64
expect_file "$(cg pids "$B_POD" pids.max)" 64

# ---- read back ----
run cgroup show "$TMPD/g.yaml"
expect_rc 0 "show Guaranteed"
printf '%s\n' "$OUT" | grep -q "^/$NAME/$G_POD: shares=1024 quota=100000 period=100000 memory=268435456 pids=64 cpus=$CPUS " ||
        fail "show: pod line [$OUT]"
printf '%s\n' "$OUT" | grep -q "^/$NAME/$G_POD/app: shares=1024 quota=100000 period=100000 memory=268435456 pids=max cpus=1 " ||
        fail "show: container line [$OUT]"

# ---- real processes ----
start "$G_POD/app"
GPID=$STARTED
start "$B_POD/app"
BPID=$STARTED
[ "$(cpus_of "$GPID")" = 1 ] || fail "Guaranteed process on CPUs $(cpus_of "$GPID"), expected 1"
[ "$(cpus_of "$BPID")" = 0 ] || fail "Burstable process on CPUs $(cpus_of "$BPID"), expected 0"
grep -q ":cpuset:/$NAME/$G_POD/app\$" "/proc/$GPID/cgroup" ||
        fail "/proc/$GPID/cgroup does not show the container's cpuset cgroup"
grep -q ":memory:/$NAME/$B_POD/app\$" "/proc/$BPID/cgroup" ||
        fail "/proc/$BPID/cgroup does not show the container's memory cgroup"

# ---- the CPU manager's decision, applied live ----
run cgroup set-cpus "$TMPD/g.yaml" app 0
expect_rc 0 "set-cpus Guaranteed app 0"
[ "$(cpus_of "$GPID")" = 0 ] || fail "after set-cpus: CPUs $(cpus_of "$GPID"), expected 0"
run cgroup set-cpus "$TMPD/b.yaml" app 1
expect_rc 0 "set-cpus Burstable app 1"
[ "$(cpus_of "$BPID")" = 1 ] || fail "after set-cpus: CPUs $(cpus_of "$BPID"), expected 1"
run cgroup apply "$TMPD/g.yaml" --cpus app=1 --pod-pids-limit 64
expect_rc 0 "apply again"
[ "$(cpus_of "$GPID")" = 1 ] || fail "after apply: CPUs $(cpus_of "$GPID"), expected 1"
# The static policy lifts the CFS quota of an exclusive container and its pod, live.
run cgroup apply "$TMPD/g.yaml" --cpus app=1 --pod-pids-limit 64 --cpu-manager-policy static
expect_rc 0 "apply with the static policy"
expect_file "$(cg cpu "$G_POD" cpu.cfs_quota_us)" -1
expect_file "$(cg cpu "$G_POD/app" cpu.cfs_quota_us)" -1
run cgroup apply "$TMPD/g.yaml" --cpus app=1 --pod-pids-limit 64
expect_rc 0 "apply with the none policy again"
expect_file "$(cg cpu "$G_POD/app" cpu.cfs_quota_us)" 100000
run cgroup apply "$TMPD/b.yaml" --cpus 0-1 --pod-pids-limit 64
expect_rc 0 "apply Burstable on both CPUs"
[ "$(cpus_of "$BPID")" = 0-1 ] || fail "after apply: CPUs $(cpus_of "$BPID"), expected 0-1"
run cgroup apply "$TMPD/b.yaml" --cpus 0-1 --pod-pids-limit 64
expect_rc 0 "apply unchanged"
case "$OUT" in *": 0 change(s)") ;; *) fail "apply unchanged: [$OUT]" ;; esac

# ---- bad input on the real tree: a clear error and nothing left behind ----
run cgroup apply "$TMPD/e.yaml" --cpus job=7
expect_rc 1 "apply with a CPU the parent does not have"
case "$ERR" in
*"write '7' to '"*"/job/cpuset.cpus'"*) ;;
*) fail "apply --cpus job=7: unexpected error [$ERR]" ;;
esac
for h in $HIERS; do
        [ -e "$h/$NAME/$E_POD" ] && fail "failed apply left $h/$NAME/$E_POD behind"
done
expect_file "$(cg cpu kubepods/burstable cpu.shares)" 102
"$NODECM" cgroup apply "$TMPD/e.yaml" --cgroup-root "/$NAME-missing" >/dev/null 2>"$TMPD/err"
RC=$?
expect_rc 2 "apply below a missing cgroup root"
grep -q "has some missing paths" "$TMPD/err" || fail "missing root: $(cat "$TMPD/err")"
run cgroup apply "$TMPD/e.yaml" --root "$TMPD"
expect_rc 2 "apply with a root that is not a cgroup filesystem"
case "$ERR" in
*"is not a cgroup filesystem"*) ;;
*) fail "--root $TMPD: unexpected error [$ERR]" ;;
esac

# Without the right to make cgroups: a permission error naming the directory, nothing made.
if command -v setpriv >/dev/null 2>&1; then
        chmod 755 "$TMPD"
        chmod 644 "$TMPD/e.yaml"
        setpriv --reuid=65534 --regid=65534 --clear-groups "$NODECM" cgroup apply "$TMPD/e.yaml" \
                --cgroup-root "/$NAME" >/dev/null 2>"$TMPD/err"
        RC=$?
        ERR=$(cat "$TMPD/err")
        expect_rc 1 "apply without permission"
        case "$ERR" in
        *"/$NAME/"*"Permission denied"*) ;;
        *) fail "apply without permission: unexpected error [$ERR]" ;;
        esac
        for h in $HIERS; do
                [ -e "$h/$NAME/$E_POD" ] && fail "apply without permission left $h/$NAME/$E_POD"
        done
fi

# ---- removal: refused while processes run, then complete ----
run cgroup remove "$TMPD/g.yaml"
expect_rc 1 "remove with a process left"
case "$ERR" in
*"pid $GPID"*) ;;
*) fail "remove: expected the pid in [$ERR]" ;;
esac
[ -d "$(cg cpu "$G_POD")" ] || fail "refused remove still removed something"
for p in $PIDS; do
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
done
PIDS=""
run cgroup remove "$TMPD/g.yaml"
expect_rc 0 "remove Guaranteed"
run cgroup remove "$TMPD/b.yaml"
expect_rc 0 "remove Burstable"
for h in $HIERS; do
        [ -e "$h/$NAME/$G_POD" ] && fail "$h/$NAME/$G_POD still exists"
        [ -e "$h/$NAME/$B_POD" ] && fail "$h/$NAME/$B_POD still exists"
done
expect_file "$(cg cpu kubepods/burstable cpu.shares)" 2

# ---- nodecm node: decide and enforce in one command, on a node kept in a directory ----
# The static policy with CPU 0 reserved: the shared pool is 0-1 until a Guaranteed pod takes
# CPU 1, and every shared container's cpuset follows the pool as it shrinks and grows.
NODE="$TMPD/node"
cat >"$TMPD/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
cgroupRoot: /$NAME
podPidsLimit: 64
# this machine is cgroup v1, which a kubelet refuses from 1.35 unless told otherwise
failCgroupV1: false
EOF
node() {
        "$NODECM" node "$@" --root-dir "$NODE" --config "$TMPD/kubelet.yaml" \
                >"$TMPD/out" 2>"$TMPD/err"
        RC=$?
        OUT=$(cat "$TMPD/out")
        ERR=$(cat "$TMPD/err")
}
node init
expect_rc 0 "node init"
[ -d "$(cg cpuset kubepods/burstable)" ] || fail "node init made no QoS tiers"
node admit "$TMPD/b.yaml"
expect_rc 0 "node admit Burstable"
start "$B_POD/app"
BPID=$STARTED
[ "$(cpus_of "$BPID")" = 0-1 ] || fail "node: Burstable on $(cpus_of "$BPID"), expected 0-1"
# No kubelet in front, so the kubelet's resource-fit predicates run: with CPU 0 reserved this
# machine's allocatable is one CPU, and the Burstable pod's 100m leaves no room for a whole
# one. Refused with the kubelet's text, before anything is written.
before=$(cat "$NODE/cpu_manager_state")
node admit "$TMPD/g.yaml"
expect_rc 1 "node admit Guaranteed past allocatable"
case "$ERR" in
*"OutOfcpu: Node didn't have enough resource: cpu, requested: 1000, used: 100, capacity: 1000"*) ;;
*) fail "node admit past allocatable: [$ERR]" ;;
esac
[ "$(cat "$NODE/cpu_manager_state")" = "$before" ] || fail "a fit refusal changed the state"
for h in $HIERS; do
        [ -e "$h/$NAME/kubepods/pod$G_UID" ] && fail "a fit refusal left $h/$NAME/kubepods/pod$G_UID"
done
# the rest is about the CPU manager on two CPUs: the check off, as behind a kubelet
echo "fitAdmission: never" >>"$TMPD/kubelet.yaml"
node admit "$TMPD/g.yaml" --json
expect_rc 0 "node admit Guaranteed"
case "$OUT" in
*'"name": "app", "exclusive": true, "cpus": "1"'*) ;;
*) fail "node admit Guaranteed: [$OUT]" ;;
esac
start "$G_POD/app"
GPID=$STARTED
[ "$(cpus_of "$GPID")" = 1 ] || fail "node: Guaranteed on $(cpus_of "$GPID"), expected 1"
[ "$(cpus_of "$BPID")" = 0 ] || fail "node: the pool did not shrink: $(cpus_of "$BPID")"
expect_file "$(cg cpu "$G_POD/app" cpu.cfs_quota_us)" -1
expect_file "$(cg pids "$G_POD" pids.max)" 64
"$NODECM" checkpoint verify "$NODE/cpu_manager_state" >/dev/null ||
        fail "node: checkpoint verify refuses the state"
[ "$(stat -c %a "$NODE/cpu_manager_state")" = 600 ] || fail "node: cpu_manager_state not 0600"

# a second Guaranteed pod does not fit: refused, nothing changes
sed -e "s/$G_UID/$E_UID/" -e 's/name: db/name: db2/' "$TMPD/g.yaml" >"$TMPD/g2.yaml"
before=$(cat "$NODE/cpu_manager_state")
node admit "$TMPD/g2.yaml"
expect_rc 1 "node admit a pod that does not fit"
[ "$(cat "$NODE/cpu_manager_state")" = "$before" ] || fail "a refusal changed the state"
for h in $HIERS; do
        [ -e "$h/$NAME/kubepods/pod$E_UID" ] && fail "a refusal left $h/$NAME/kubepods/pod$E_UID"
done

# reconcile puts a cpuset someone changed back
echo 1 >"$(cg cpuset "$B_POD/app" cpuset.cpus)"
node reconcile
expect_rc 0 "node reconcile"
[ "$(cpus_of "$BPID")" = 0 ] || fail "reconcile: Burstable on $(cpus_of "$BPID"), expected 0"

# removal with a process left: refused and undone; then the pool grows back
node remove "$G_UID"
expect_rc 1 "node remove with a process left"
case "$ERR" in *"pid $GPID"*"rolled back"*) ;; *) fail "node remove: [$ERR]" ;; esac
[ "$(cat "$NODE/cpu_manager_state")" = "$before" ] || fail "a refused removal changed the state"
[ "$(cpus_of "$BPID")" = 0 ] || fail "a refused removal moved the pool: $(cpus_of "$BPID")"
kill "$GPID" 2>/dev/null
wait "$GPID" 2>/dev/null
node remove "$G_UID"
expect_rc 0 "node remove Guaranteed"
[ "$(cpus_of "$BPID")" = 0-1 ] || fail "node: the pool did not grow: $(cpus_of "$BPID")"
[ -e "$(cg cpu "$G_POD")" ] && fail "node remove left $(cg cpu "$G_POD")"
node status --json
expect_rc 0 "node status"
case "$OUT" in
*'"defaultCpuSet": "0-1", "entries": {}'*'"uid": "'"$B_UID"'"'*) ;;
*) fail "node status: [$OUT]" ;;
esac
for p in $PIDS; do
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
done
PIDS=""
node remove "$B_UID"
expect_rc 0 "node remove Burstable"

if [ "$FAILS" -ne 0 ]; then
        echo "$FAILS failure(s)" >&2
        exit 1
fi
echo "ok: $NAME in $(echo $HIERS | wc -w) hierarchies"
exit 0
