# nodecm cgroup: plans on both drivers and both cgroup versions (goldens), and bad input
# (one line on stderr naming what is wrong, exit 2, or 1 where the request cannot be met).
# Applying for real is tests/integration/test-cgroups-v1.sh.
. "$(dirname "$0")/lib.sh"

P="$DATA/cgroups/pods"
CAP="--capacity cpu=4,memory=8Gi,pid=4194304"

run cgroup --help
expect_rc 0 "--help"
case "$OUT" in "Usage: nodecm cgroup plan"*) ;; *) fail "--help: no usage" ;; esac
run cgroup plan --help
expect_rc 0 "plan --help"

# ---- plans: both drivers, both versions ----
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 --driver cgroupfs $CAP
expect_rc 0 "plan v1 cgroupfs"
expect_golden cgroups/plan-v1-cgroupfs-burstable.txt "plan v1 cgroupfs"

run cgroup plan "$P/guaranteed.yaml" --cgroup-version 1 --driver systemd $CAP --cpus app=2-3 \
        --cpus metrics=1 --pod-pids-limit 4096
expect_rc 0 "plan v1 systemd"
expect_golden cgroups/plan-v1-systemd-guaranteed.txt "plan v1 systemd"

run cgroup plan "$P/guaranteed.yaml" --cgroup-version 2 --driver cgroupfs $CAP --cpus app=2-3 \
        --mems 0 --memory-qos tiered
expect_rc 0 "plan v2 cgroupfs"
expect_golden cgroups/plan-v2-cgroupfs-guaranteed.txt "plan v2 cgroupfs"

run cgroup plan "$P/burstable.yaml" --cgroup-version 2 --driver systemd $CAP \
        --kube-reserved cpu=1,memory=1Gi --cpu-manager-policy static
expect_rc 0 "plan v2 systemd"
expect_golden cgroups/plan-v2-systemd-burstable.txt "plan v2 systemd"

run cgroup plan "$P/besteffort.json" --cgroup-version 2 --driver systemd $CAP --json
expect_rc 0 "plan --json"
expect_golden cgroups/plan-v2-systemd-besteffort.json "plan --json"

# The kubelet's settings: no CFS quota, a 5 ms period, a cgroup root, pod cgroup only.
run cgroup plan "$P/guaranteed.yaml" --cgroup-version 1 --pod-only --no-containers \
        --cpu-cfs-quota=false --root /host/cgroup --cgroup-root /nodes/a
expect_rc 0 "plan without quota"
expect_golden cgroups/plan-v1-no-quota.txt "plan without quota"
run cgroup plan "$P/guaranteed.yaml" --cgroup-version 1 --pod-only --no-containers \
        --cpu-cfs-quota-period 5ms
expect_rc 0 "plan with a 5ms period"
expect_golden cgroups/plan-v1-period-5ms.txt "plan with a 5ms period"

# The static CPU manager policy: no CFS quota for the exclusive container and its pod.
run cgroup plan "$P/guaranteed.yaml" --cgroup-version 1 --pod-only --cpu-manager-policy static
expect_rc 0 "plan with the static policy"
expect_golden cgroups/plan-v1-static-policy.txt "plan with the static policy"
run cgroup plan "$P/guaranteed.yaml" --cgroup-version 1 --pod-only --cpu-manager-policy static \
        --feature-gates=DisableCPUQuotaWithExclusiveCPUs=false --json
expect_rc 0 "plan with the static policy, gate off"
case "$OUT" in *'"value": "-1"'*) fail "gate off: quota -1 written" ;; esac

# A pod from standard input gives the same plan as from its file.
"$NODECM" cgroup plan - --cgroup-version 1 $CAP <"$P/burstable.yaml" >"$TMPD/stdin" 2>&1
if ! printf '%s\n' "$(cat "$TMPD/stdin")" | diff -u "$DATA/cgroups/plan-v1-cgroupfs-burstable.txt" - >&2; then
        fail "plan from stdin differs"
fi

# This machine's layout and capacity: it just has to work.
if [ -d /sys/fs/cgroup ]; then
        run cgroup plan "$P/besteffort.json"
        expect_rc 0 "plan on this machine"
fi

# ---- bad usage and bad input ----
run cgroup
expect_rc 2 "no subcommand"
run cgroup frobnicate "$P/burstable.yaml"
expect_rc 2 "unknown subcommand"
expect_err_contains "unknown subcommand 'frobnicate'" "unknown subcommand"
run cgroup plan
expect_rc 2 "no pod"
expect_err_contains "expected one POD file" "no pod"
run cgroup plan "$P/burstable.yaml" "$P/guaranteed.yaml"
expect_rc 2 "two pods"
run cgroup plan "$P/burstable.yaml" --bogus
expect_rc 2 "unknown option"
expect_err_contains "unknown option '--bogus'" "unknown option"
run cgroup plan "$P/burstable.yaml" --cgroup-version
expect_rc 2 "option without value"
run cgroup plan "$TMPD/nope.yaml" --cgroup-version 1
expect_rc 2 "missing pod file"
expect_err_contains "nope.yaml" "missing pod file"
run cgroup plan "$P/bad-quantity.yaml" --cgroup-version 1
expect_rc 2 "invalid quantity"
expect_err_contains "spec.containers[0].resources.limits.cpu" "invalid quantity"
run cgroup plan "$P/negative.yaml" --cgroup-version 1
expect_rc 2 "negative quantity"
expect_err_contains "resources.requests.memory" "negative quantity"
run cgroup plan "$P/limit-below-request.yaml" --cgroup-version 1
expect_rc 2 "limit below request"
expect_err_contains "resources.requests.cpu" "limit below request"
run cgroup plan "$P/bad-uid.yaml" --cgroup-version 1 $CAP
expect_rc 2 "uid with an underscore"
expect_err_contains 'metadata.uid: invalid value "a_b": a pod UID must consist of' "uid with an underscore"
run cgroup plan "$P/burstable.yaml" --cgroup-version 3
expect_rc 2 "cgroup version 3"
expect_err_contains "--cgroup-version: expected 1 or 2, got '3'" "cgroup version 3"
run cgroup plan "$P/burstable.yaml" --driver systemdd
expect_rc 2 "unknown driver"
expect_err_contains '--cgroup-driver: unknown cgroup driver "systemdd"' "unknown driver"
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 --cpus app=3-1
expect_rc 2 "bad cpuset"
expect_err_contains "--cpus 'app=3-1'" "bad cpuset"
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 $CAP --cpus migrate=1
expect_rc 2 "cpuset of an init container"
expect_err_contains "no long-running container 'migrate'" "cpuset of an init container"
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 --cpu-cfs-quota-period 500us
expect_rc 2 "period below 1ms"
expect_err_contains "must be between 1ms and 1sec" "period below 1ms"
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 --feature-gates Foo=true
expect_rc 2 "unknown feature gate"
expect_err_contains "unrecognized feature gate: Foo" "unknown feature gate"
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 --feature-gates PodLevelResources=maybe
expect_rc 2 "bad feature gate value"
expect_err_contains "invalid value of PodLevelResources=maybe" "bad feature gate value"
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 --cpu-cfs-quota-period 5ms \
        --feature-gates CustomCPUCFSQuotaPeriod=false
expect_rc 2 "period without its gate"
expect_err_contains "requires feature gate CustomCPUCFSQuotaPeriod" "period without its gate"
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 --cpu-cfs-quota maybe
expect_rc 2 "bad boolean"
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 --pod-pids-limit 12x
expect_rc 2 "bad pids limit"
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 --cgroup-root /a_b
expect_rc 2 "bad cgroup root"
expect_err_contains "--cgroup-root" "bad cgroup root"
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 --kube-reserved gpu=1
expect_rc 2 "reserving an extended resource"
expect_err_contains "cannot reserve \"gpu\" resource" "reserving an extended resource"
run cgroup plan "$P/burstable.yaml" --cgroup-version 1 --capacity cpu=2,memory=1Gi \
        --kube-reserved cpu=3
expect_rc 1 "reservation above capacity"
expect_err_contains "Resource \"cpu\" has a reservation of 3 but capacity of 2" \
        "reservation above capacity"

# apply / remove / set-cpus: refused before anything is touched.
run cgroup apply "$P/burstable.yaml" --driver systemd
expect_rc 2 "apply with the systemd driver"
run cgroup apply "$P/burstable.yaml" --json
expect_rc 2 "apply --json"
run cgroup apply "$P/burstable.yaml" --root "$TMPD" $CAP
expect_rc 2 "root that is not a cgroup filesystem"
expect_err_contains "is not a cgroup filesystem" "root that is not a cgroup filesystem"
run cgroup apply "$P/burstable.yaml" --root "$TMPD/missing" $CAP
expect_rc 2 "missing root"
expect_err_contains "cgroup mount root '$TMPD/missing'" "missing root"
run cgroup remove "$P/burstable.yaml" --root "$TMPD"
expect_rc 2 "remove on a root that is not a cgroup filesystem"
run cgroup show "$P/burstable.yaml" --root "$TMPD"
expect_rc 2 "show on a root that is not a cgroup filesystem"
run cgroup set-cpus "$P/burstable.yaml" app
expect_rc 2 "set-cpus without a cpuset"
expect_err_contains "expected POD CONTAINER LIST" "set-cpus without a cpuset"
run cgroup set-cpus "$P/burstable.yaml" nope 1 --root "$TMPD"
expect_rc 2 "set-cpus of a missing container"
[ -z "$(ls -A "$TMPD" | grep -v '^out$\|^err$\|^stdin$')" ] || fail "something was written to $TMPD"

finish
