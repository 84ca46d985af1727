# nodecm node-allocatable: the kubelet's reservation flags in its syntax, the reported
# allocatable and the enforced limits (goldens), the enforcement plan, and bad input.
. "$(dirname "$0")/lib.sh"

CAP="--capacity cpu=4,memory=16Gi,ephemeral-storage=100Gi,pid=4194304,hugepages-2Mi=1Gi,hugepages-1Gi=0"
RES="--kube-reserved=cpu=500m,memory=1Gi --system-reserved cpu=250m,memory=512Mi,pid=1000"

run node-allocatable --help
expect_rc 0 "--help"
case "$OUT" in "Usage: nodecm node-allocatable"*) ;; *) fail "--help: no usage" ;; esac

run node-allocatable $CAP $RES "--eviction-hard=memory.available<100Mi,nodefs.available<10%"
expect_rc 0 "text"
expect_golden cgroups/node-allocatable.txt "text"

run node-allocatable $CAP $RES --json
expect_rc 0 "json (default eviction thresholds)"
expect_golden cgroups/node-allocatable.json "json"

# Nothing reserved, no eviction: allocatable is the capacity less the hugepages from memory.
run node-allocatable --capacity cpu=2,memory=4Gi,hugepages-2Mi=512Mi --eviction-hard= \
        --enforce-node-allocatable=
expect_rc 0 "no reservations"
expect_golden cgroups/node-allocatable-none.txt "no reservations"

# Repeated map flags add up, as the kubelet's do.
run node-allocatable --capacity cpu=4 --capacity memory=8Gi --kube-reserved cpu=1 \
        --kube-reserved memory=1Gi --eviction-hard= --json
expect_rc 0 "repeated flags"
case "$OUT" in
*'"allocatable": {"cpu": "3", "memory": "7Gi"}'*) ;;
*) fail "repeated flags: [$OUT]" ;;
esac

# What enforcement writes where, for both drivers.
run node-allocatable $CAP $RES --enforce-node-allocatable=pods,kube-reserved,system-reserved-compressible \
        --kube-reserved-cgroup=/kube.slice --system-reserved-cgroup=/system.slice \
        --plan --cgroup-version 1 --driver systemd
expect_rc 0 "plan v1 systemd"
expect_golden cgroups/node-allocatable-plan-v1-systemd.txt "plan v1 systemd"
run node-allocatable $CAP $RES --enforce-node-allocatable=kube-reserved,system-reserved \
        --kube-reserved-cgroup=/kube --system-reserved-cgroup=/system --cpu-manager-policy static \
        --plan --cgroup-version 2
expect_rc 0 "plan v2 cgroupfs"
expect_golden cgroups/node-allocatable-plan-v2-cgroupfs.txt "plan v2 cgroupfs"

# reservedSystemCPUs replaces the reserved cpu (cmd/kubelet/app/server.go): 128 CPUs with
# "0-1" reserved leave 126 allocatable, and kubepods gets the shares and weight of 126 CPUs
# (the file is ours; the public file that showed it is named in it).
RCPU="--config $DATA/kubelet/reserved-cpus.yaml --capacity cpu=128,memory=256Gi"
run node-allocatable $RCPU --json
expect_rc 0 "reserved cpus"
case "$OUT" in
*'"kubeReserved": {"memory": "1Gi"}, "systemReserved": {"cpu": "2", "memory": "500Mi"}'*'"allocatable": {"cpu": "126", '*'"kubepodsLimits": {"cpu": "126", '*) ;;
*) fail "reserved cpus: [$OUT]" ;;
esac
expect_err_contains 'reservedSystemCPUs "0-1" overrides the cpu of kubeReserved (removed) and systemReserved (set to 2)' \
        "reserved cpus warning"
run node-allocatable $RCPU --plan --cgroup-version 1
expect_rc 0 "reserved cpus v1"
case "$OUT" in *"/sys/fs/cgroup/cpu/kubepods/cpu.shares 129024"*) ;; *) fail "v1 shares: [$OUT]" ;; esac
run node-allocatable $RCPU --plan --cgroup-version 2
expect_rc 0 "reserved cpus v2"
case "$OUT" in *"/sys/fs/cgroup/kubepods/cpu.weight 4922"*) ;; *) fail "v2 weight: [$OUT]" ;; esac
# --reserved-cpus, the flag, does the same over kube-reserved given as a flag
run node-allocatable --capacity cpu=128,memory=256Gi --reserved-cpus 0-1 --kube-reserved cpu=4 --json
expect_rc 0 "--reserved-cpus"
case "$OUT" in *'"allocatable": {"cpu": "126", '*) ;; *) fail "--reserved-cpus: [$OUT]" ;; esac

# A kubelet file is read as the kubelet reads it (our files; tests/data/kubelet/README.md names
# the public files that showed each case): amazon-eks-ami's capitalised "CPUManagerPolicy" is
# an unknown field the kubelet ignores after strict decoding fails; --config-decoding strict
# refuses it with the kubelet's strict text.
run node-allocatable --config "$DATA/kubelet/eks-case.json" --capacity cpu=4,memory=8Gi --json
expect_rc 0 "lenient decoding"
expect_err_contains 'eks-case.json: unknown field "CPUManagerPolicy" (the kubelet'"'"'s decoder is case-sensitive: it does not read it as "cpuManagerPolicy"): the kubelet ignores it' \
        "lenient decoding warning"
run node-allocatable --config "$DATA/kubelet/eks-case.json" --capacity cpu=4 --config-decoding strict
expect_rc 2 "strict decoding"
expect_err_contains 'eks-case.json: strict decoding error: unknown field "CPUManagerPolicy"' \
        "strict decoding"
run node-allocatable --config "$DATA/kubelet/apiversion-v1.yaml" --capacity cpu=4
expect_rc 2 "apiVersion v1"
expect_err_contains 'no kind "KubeletConfiguration" is registered for version "kubelet.config.k8s.io/v1"' \
        "apiVersion v1"
run node-allocatable --config "$DATA/kubelet/empty.yaml" --capacity cpu=4
expect_rc 2 "empty file"
expect_err_contains 'empty.yaml" was empty' "empty file"
run node-allocatable --config "$DATA/kubelet/no-kind.yaml" --capacity cpu=4
expect_rc 2 "no kind"
expect_err_contains "failed to decode: Object 'Kind' is missing in" "no kind"
run node-allocatable --config-decoding loose
expect_rc 2 "bad decoding"
expect_err_contains "--config-decoding: expected lenient or strict, got 'loose'" "bad decoding"

# This machine: the capacity is read from /sys and /proc.
run node-allocatable
expect_rc 0 "this machine"
case "$OUT" in *"memory"*) ;; *) fail "this machine: no memory row" ;; esac

# ---- bad input ----
run node-allocatable --capacity cpu=10,memory=11Gi --kube-reserved cpu=5,memory=10Gi \
        --system-reserved cpu=5,memory=10Gi "--eviction-hard=memory.available<2Gi"
expect_rc 1 "reservation above capacity"
expect_err_contains "invalid Node Allocatable configuration. Resource \"memory\" has a reservation of 22Gi but capacity of 11Gi. Expected capacity >= reservation." \
        "reservation above capacity"
run node-allocatable --kube-reserved cpu=-1
expect_rc 2 "negative reservation"
expect_err_contains "--kube-reserved: resource quantity for \"cpu\" cannot be negative: -1" \
        "negative reservation"
run node-allocatable --system-reserved cpu=1x
expect_rc 2 "bad quantity"
expect_err_contains "failed to parse quantity \"1x\" for \"cpu\" resource" "bad quantity"
run node-allocatable --kube-reserved nvidia.com/gpu=1
expect_rc 2 "extended resource"
expect_err_contains "cannot reserve \"nvidia.com/gpu\" resource" "extended resource"
run node-allocatable --kube-reserved cpu
expect_rc 2 "malformed pair"
expect_err_contains "malformed pair, expect string=string" "malformed pair"
run node-allocatable "--eviction-hard=memory.free<1Gi"
expect_rc 2 "unknown eviction signal"
expect_err_contains "unsupported eviction signal memory.free" "unknown eviction signal"
run node-allocatable "--eviction-hard=nodefs.available<150%"
expect_rc 2 "percentage above 100"
expect_err_contains "must be <= 100%: 150%" "percentage above 100"
run node-allocatable "--eviction-hard=memory.available<-1Gi"
expect_rc 2 "negative threshold"
expect_err_contains "eviction threshold memory.available must be positive: -1Gi" "negative threshold"
run node-allocatable --enforce-node-allocatable=pods,kube-reserved
expect_rc 2 "kube-reserved without its cgroup"
expect_err_contains "kubeReservedCgroup (--kube-reserved-cgroup) must be specified" \
        "kube-reserved without its cgroup"
run node-allocatable --enforce-node-allocatable=none,pods
expect_rc 2 "none with others"
run node-allocatable --enforce-node-allocatable=all
expect_rc 2 "unknown enforcement"
expect_err_contains "option \"all\" specified for enforceNodeAllocatable" "unknown enforcement"
run node-allocatable --capacity cpu=abc
expect_rc 2 "bad capacity"
expect_err_contains "--capacity" "bad capacity"
run node-allocatable --cpu-manager-policy dynamic
expect_rc 2 "unknown CPU manager policy"
run node-allocatable --plan --json
expect_rc 2 "--plan with --json"
run node-allocatable extra
expect_rc 2 "unexpected argument"
run node-allocatable --frob
expect_rc 2 "unknown option"
expect_err_contains "unknown option '--frob'" "unknown option"
run node-allocatable $CAP --enforce-node-allocatable=kube-reserved --kube-reserved-cgroup=/kube \
        --plan --cgroup-version 1
expect_rc 2 "kube-reserved enforced without a reservation"
expect_err_contains "\"/kube\" cgroup is not configured properly" \
        "kube-reserved enforced without a reservation"

finish
