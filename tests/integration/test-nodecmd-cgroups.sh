#!/bin/sh
# nodecmd with the cgroupfs enforcer on this machine's real cgroup v1 hierarchies.
#
# A uniquely named parent (nodecm-test-<pid>-<random>) at the root of every v1 hierarchy is the
# daemon's cgroupRoot, so the whole kubepods tree lives inside it. A Burstable pod's container
# gets a real process; a Guaranteed pod takes a CPU through `nodecm node admit --connect` and
# the process's Cpus_allowed_list follows the shared pool at once; someone rewrites the
# container's cpuset, and the reconcile loop puts it back (and counts the fix in the metrics);
# the Guaranteed pod goes and the pool grows back. Everything is removed, also when a check
# fails (trap). Waiting for the reconcile loop is bounded (60 s), never a measured limit.
set -u

skip() {
        echo "SKIP: $*"
        exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root to create cgroups"
[ "$(stat -fc %T /sys/fs/cgroup/cpuset 2>/dev/null)" = cgroupfs ] ||
        skip "no cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset"
command -v curl >/dev/null 2>&1 || skip "no curl"

NODECM=${NCM_NODECM:?run through meson test}
NODECMD=${NCM_NODECMD:?run through meson test}
NAME="nodecm-test-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
TMPD=$(mktemp -d)
FAILS=0
PIDS=""
DIRS=""
DAEMON=""

fail() {
        echo "FAIL: $*" >&2
        FAILS=$((FAILS + 1))
}

cleanup() {
        if [ -n "$DAEMON" ]; then
                kill "$DAEMON" 2>/dev/null
                wait "$DAEMON" 2>/dev/null
        fi
        for p in $PIDS; do
                kill "$p" 2>/dev/null
                wait "$p" 2>/dev/null
        done
        # Deepest first; only below our own uniquely named parents.
        for d in $DIRS; do
                [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
                [ -d "$d" ] && echo "cleanup: could not remove $d" >&2
        done
        [ "$FAILS" -gt 0 ] && [ -f "$TMPD/nodecmd.log" ] && tail -30 "$TMPD/nodecmd.log" >&2
        rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

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
CPUS=$(cat /sys/fs/cgroup/cpuset/cpuset.effective_cpus)
case "$CPUS" in
0-*) ;;
*) skip "needs CPUs 0 and 1 in the root cpuset (have $CPUS)" ;;
esac

for h in $HIERS; do
        mkdir "$h/$NAME" || { fail "mkdir $h/$NAME"; exit 1; }
        DIRS="$DIRS $h/$NAME"
done
cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$NAME/cpuset.cpus"
cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$NAME/cpuset.mems"

cat >"$TMPD/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0"
cpuManagerReconcilePeriod: 1s
cgroupRoot: /$NAME
enforcement: cgroupfs
# this machine is cgroup v1, which a kubelet refuses from 1.35 unless told otherwise
failCgroupV1: false
# with CPU 0 reserved, one CPU is allocatable: the kubelet's resource-fit predicates would
# refuse the Guaranteed pod next to the Burstable one; this test is about the CPU manager
fitAdmission: never
EOF
G_UID=11111111-2222-3333-4444-$(printf '%012d' $$)
B_UID=2a5f6c1e-0d6b-4c1a-9a55-$(printf '%012d' $$)
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
SOCK="$TMPD/root/nodecm.sock"
B_APP="/sys/fs/cgroup/cpuset/$NAME/kubepods/burstable/pod$B_UID/app"

cpus_of() {
        awk '/^Cpus_allowed_list:/ {print $2}' "/proc/$1/status"
}

# until COMMAND... succeeds, at most 60 s (a guard against hanging, not a measured limit)
until_true() {
        i=0
        while ! "$@"; do
                i=$((i + 1))
                [ $i -gt 600 ] && return 1
                sleep 0.1
        done
}

"$NODECMD" --config "$TMPD/kubelet.yaml" --root-dir "$TMPD/root" 2>"$TMPD/nodecmd.log" &
DAEMON=$!
until_true test -S "$SOCK" || { fail "nodecmd did not start"; exit 1; }

"$NODECM" node admit "$TMPD/b.yaml" --connect "$SOCK" >/dev/null 2>"$TMPD/err" ||
        fail "admit Burstable: $(cat "$TMPD/err")"
[ -d "$B_APP" ] || fail "no container cgroup $B_APP"
sleep 600 >/dev/null 2>&1 </dev/null &
BPID=$!
PIDS="$PIDS $BPID"
for h in $HIERS; do
        echo "$BPID" >"$h/$NAME/kubepods/burstable/pod$B_UID/app/cgroup.procs" ||
                fail "move $BPID into $h"
done
[ "$(cpus_of "$BPID")" = "$CPUS" ] || fail "Burstable process on $(cpus_of "$BPID"), expected $CPUS"

# the Guaranteed pod takes CPU 1: the shared pool is 0, at once
"$NODECM" node admit "$TMPD/g.yaml" --connect "$SOCK" >"$TMPD/out" 2>"$TMPD/err" ||
        fail "admit Guaranteed: $(cat "$TMPD/err")"
grep -q "app exclusive 1 " "$TMPD/out" || fail "Guaranteed admission: $(cat "$TMPD/out")"
[ "$(cpus_of "$BPID")" = 0 ] || fail "after the admission: $(cpus_of "$BPID"), expected 0"

# someone rewrites the container's cpuset: the reconcile loop puts it back
# (the reconcile the admission queued may come first: either way the rewrite is undone)
echo "$CPUS" >"$B_APP/cpuset.cpus" || fail "rewrite $B_APP/cpuset.cpus"
back_to_0() { [ "$(cpus_of "$BPID")" = 0 ]; }
until_true back_to_0 || fail "the reconcile loop did not restore the cpuset ($(cpus_of "$BPID"))"
logged() { grep -q 'msg=reconciled fixed=1' "$TMPD/nodecmd.log"; }
until_true logged || fail "no log line of the fix"
curl -s --unix-socket "$TMPD/root/metrics.sock" http://localhost/metrics >"$TMPD/metrics" ||
        fail "metrics"
grep -q '^nodecm_reconcile_fixes_total [1-9]' "$TMPD/metrics" ||
        fail "fixes not counted: $(grep reconcile "$TMPD/metrics")"
grep -q '^kubelet_cpu_manager_exclusive_cpu_allocation_count 1$' "$TMPD/metrics" ||
        fail "exclusive CPUs: $(grep exclusive "$TMPD/metrics")"

# the Guaranteed pod goes: the pool grows back
"$NODECM" node remove "$G_UID" --connect "$SOCK" >/dev/null 2>"$TMPD/err" ||
        fail "remove Guaranteed: $(cat "$TMPD/err")"
[ "$(cpus_of "$BPID")" = "$CPUS" ] || fail "after the removal: $(cpus_of "$BPID"), expected $CPUS"

kill "$BPID"
wait "$BPID" 2>/dev/null
PIDS=""
"$NODECM" node remove "$B_UID" --connect "$SOCK" >/dev/null 2>"$TMPD/err" ||
        fail "remove Burstable: $(cat "$TMPD/err")"
[ -d "$B_APP" ] && fail "the Burstable pod's cgroups are still there"

kill -TERM "$DAEMON"
wait "$DAEMON"
rc=$?
DAEMON=""
[ $rc -eq 0 ] || fail "SIGTERM: exit $rc"

if [ "$FAILS" -gt 0 ]; then
        echo "$FAILS check(s) failed"
        exit 1
fi
echo "ok"
