/* SPDX-License-Identifier: Apache-2.0 */
/*
 * QoS and pod cgroups the way the kubelet's container manager makes them
 * (pkg/kubelet/cm: helpers_linux.go, cgroup_manager_linux.go, qos_container_manager_linux.go,
 * pod_container_manager_linux.go, node_container_manager_linux.go) and writes them through
 * libcontainer (opencontainers/cgroups fs and fs2).
 *
 * The pieces, lowest first:
 *  - conversions on plain integers (milliCPU -> shares, quota, cpu.weight and back);
 *  - ncm_cgroup_resources: the kubelet's ResourceConfig (what to write, not where);
 *  - names: a cgroup name is a list of components; a naming driver (cgroupfs or systemd) turns
 *    it into a path below each hierarchy and back;
 *  - a layout says where the hierarchies are (cgroup v1: one directory per controller; v2: one
 *    unified tree) and is detected from a real machine or built for a plan or a fake tree;
 *  - a version driver (cgroupfs v1 or v2) turns "create/update this cgroup with these
 *    resources" into a plan: an ordered list of mkdir / write / inherit / rmdir operations,
 *    with the kernel quirks libcontainer handles marked on each operation;
 *  - ncm_cgroup_plan_apply() executes a plan through a root directory fd and undoes what it
 *    did when a step fails, so nothing is left half-applied.
 *
 * Everything that touches the filesystem goes through a root fd opened at the cgroup mount
 * root ("/sys/fs/cgroup" on a real machine, any directory in tests); paths inside it are
 * written "/cpu/kubepods/cpu.shares".
 */
#ifndef NODECM_CGROUPS_H
#define NODECM_CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/cpuset.h>
#include <nodecm/error.h>
#include <nodecm/pod.h>
#include <nodecm/quantity.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Constants and conversions (helpers_linux.go, cgroup_manager_linux.go, cm/util)            */
/* ------------------------------------------------------------------------------------------ */

#define NCM_CGROUP_MIN_SHARES 2
#define NCM_CGROUP_MAX_SHARES 262144
#define NCM_CGROUP_SHARES_PER_CPU 1024
#define NCM_CGROUP_MILLICPU_TO_CPU 1000
/* CFS period in microseconds (100 ms), and the kernel's smallest quota (1 ms). */
#define NCM_CGROUP_QUOTA_PERIOD 100000
#define NCM_CGROUP_MIN_QUOTA_PERIOD 1000
/* The kubelet accepts cpuCFSQuotaPeriod between 1 ms and 1 s. */
#define NCM_CGROUP_MAX_QUOTA_PERIOD 1000000
/* MinQuotaPeriod * MilliCPUToCPU / QuotaPeriod */
#define NCM_CGROUP_MIN_MILLICPU_LIMIT 10
/* hugetlb limit of the QoS tiers: effectively unbounded. */
#define NCM_CGROUP_HUGEPAGE_UNBOUNDED ((int64_t)1 << 62)
/* cgroup v2 cpu.weight range. */
#define NCM_CGROUP_MIN_WEIGHT 1
#define NCM_CGROUP_MAX_WEIGHT 10000

/*
 * MilliCPUToShares: 0 -> 2; else milli*1024/1000 clamped to [2, 262144]. Negative input gives
 * 2 (as in Go). Where Go's int64 multiplication would wrap (milli > 2^53), the result
 * saturates at 262144 instead.
 */
NCM_API uint64_t ncm_cgroup_millicpu_to_shares(int64_t milli) NCM_PURE;

/*
 * MilliCPUToQuota: 0 -> 0 (unset); else milli*period/1000 with a floor of 1000 µs. PERIOD is
 * used only when CUSTOM_PERIOD (feature gate CustomCPUCFSQuotaPeriod) is true; otherwise the
 * quota is computed over 100000 µs whatever PERIOD says. Saturates at INT64_MAX instead of
 * wrapping.
 */
NCM_API int64_t ncm_cgroup_millicpu_to_quota(int64_t milli, int64_t period,
                                             bool custom_period) NCM_PURE;

/* sharesToMilliCPU: ceil(shares*1000/1024) when shares >= 2, else 0. */
NCM_API int64_t ncm_cgroup_shares_to_millicpu(int64_t shares) NCM_PURE;

/* quotaToMilliCPU: -1 -> 0, else quota*1000/period (0 when period <= 0). */
NCM_API int64_t ncm_cgroup_quota_to_millicpu(int64_t quota, int64_t period) NCM_PURE;

/*
 * The kubelet's cpu.weight for cgroups it owns (getCPUWeight, linear): shares >= 262144 ->
 * 10000, else 1 + (shares-2)*9999/262142. Shares below 2 are treated as 2. 0 means "unset"
 * and gives 0 (nothing is written).
 */
NCM_API uint64_t ncm_cgroup_shares_to_weight(uint64_t shares) NCM_PURE;

/* Reverse used when reading cpu.weight back: ((weight-1)*262142)/9999 + 2 (weight 0 -> 0). */
NCM_API uint64_t ncm_cgroup_weight_to_shares(uint64_t weight) NCM_PURE;

/*
 * The conversion OCI runtimes apply to container cpu_shares since opencontainers/cgroups
 * PR #20 (runc 1.3, crun 1.23): 0 -> 0, <= 2 -> 1, >= 262144 -> 10000, else
 * ceil(10^((l*l + 125*l)/612 - 7/34)) with l = log2(shares). 1024 shares -> 100.
 */
NCM_API uint64_t ncm_cgroup_shares_to_weight_oci(uint64_t shares) NCM_PURE;

/*
 * The hugetlb file name of a page size in bytes (HugePageUnitSizeFromByteSize): 2097152 ->
 * "2MB", 1073741824 -> "1GB", 65536 -> "64KB". Writes at most SIZE bytes including the NUL.
 * -EINVAL for sizes that are not positive or do not divide into the largest unit.
 */
NCM_API int ncm_cgroup_hugepage_size_name(int64_t page_size, char *buf, size_t size);

/* ------------------------------------------------------------------------------------------ */
/* Parsers for cgroup and proc files and kubelet flag syntax (pure, no I/O)                   */
/* ------------------------------------------------------------------------------------------ */

/*
 * Common rules: input is NUL-terminated; exactly one trailing newline is accepted; garbage is
 * -EINVAL, numbers out of range -ERANGE. Out-parameters are written only on success.
 */

/* "max" / "max\n" in a limit file, or a value that does not fit: NCM_CGROUP_LIMIT_MAX. */
#define NCM_CGROUP_LIMIT_MAX INT64_C(-1)

/* A non-negative decimal, or "max" (-> NCM_CGROUP_LIMIT_MAX). pids.max, memory.max, ... */
NCM_API int ncm_cgroup_parse_limit(const char *s, int64_t *ret);

/* A signed decimal int64 ("-1" in cpu.cfs_quota_us). */
NCM_API int ncm_cgroup_parse_int64(const char *s, int64_t *ret);

/* cpu.max: "<quota|max> <period>". *RET_QUOTA is -1 for "max"; the period must be > 0. */
NCM_API int ncm_cgroup_parse_cpu_max(const char *s, int64_t *ret_quota, int64_t *ret_period);

/* One line of /proc/PID/cgroup: "<id>:<controllers>:<path>" (spans into the input). */
typedef struct ncm_cgroup_proc_entry {
        uint32_t id;
        const char *controllers; /* "cpu,cpuacct", "name=systemd", "" on cgroup v2 */
        size_t controllers_len;
        const char *path; /* starts with '/' */
        size_t path_len;
} ncm_cgroup_proc_entry;
NCM_API int ncm_cgroup_parse_proc_cgroup_line(const char *line, size_t len,
                                              ncm_cgroup_proc_entry *ret);

/* One line of /proc/PID/mountinfo (proc(5)); spans into the input, escapes kept. */
typedef struct ncm_mountinfo_entry {
        uint32_t id, parent_id;
        const char *root;
        size_t root_len;
        const char *mount_point;
        size_t mount_point_len;
        const char *fstype;
        size_t fstype_len;
        const char *super_options;
        size_t super_options_len;
} ncm_mountinfo_entry;
NCM_API int ncm_cgroup_parse_mountinfo_line(const char *line, size_t len, ncm_mountinfo_entry *ret);

/*
 * Undo mountinfo's octal escapes ("\040" for a space) of S (LEN bytes) into BUF (SIZE bytes,
 * NUL-terminated). -ENAMETOOLONG when it does not fit, -EINVAL for a bad escape.
 */
NCM_API int ncm_cgroup_unescape_mount_path(const char *s, size_t len, char *buf, size_t size);

/*
 * The kubelet's map flags: "k=v,k2=v2" (--kube-reserved, SEP '=') or "k<v,k2<v2"
 * (--eviction-hard, SEP '<'). Pairs are split on ',', each pair once on SEP; keys and values
 * are trimmed of spaces; empty pairs are skipped. FN is called for every pair in order and may
 * stop the walk by returning < 0 (that value is returned). A pair without SEP is -EINVAL with
 * Go's text ("malformed pair, expect string=string").
 */
typedef int (*ncm_cgroup_pair_fn)(const char *key, size_t key_len, const char *value,
                                  size_t value_len, void *userdata);
NCM_API int ncm_cgroup_parse_map_flag(const char *s, char sep, ncm_cgroup_pair_fn fn,
                                      void *userdata, ncm_error *err);

/* MemTotal of /proc/meminfo, in bytes. -ENOENT when the line is missing. */
NCM_API int ncm_cgroup_parse_meminfo_total(const char *text, int64_t *ret_bytes);

typedef struct ncm_cgroup_layout ncm_cgroup_layout;

/* ------------------------------------------------------------------------------------------ */
/* Resource configuration (ResourceConfig)                                                    */
/* ------------------------------------------------------------------------------------------ */

#define NCM_CGROUP_MAX_HUGEPAGE_SIZES 8

typedef struct ncm_cgroup_hugepage {
        int64_t page_size; /* bytes */
        int64_t limit;     /* bytes */
} ncm_cgroup_hugepage;

/*
 * What to write into one cgroup. Each value counts only with its has_ flag, as the kubelet's
 * pointers do. Values of 0 are "unset" for libcontainer and are not written (a memory limit of
 * 0 is not a limit); -1 is "unlimited" for cpu_quota, memory and pids.
 *
 * hugepages: when has_hugepages, every page size of the machine gets a hugetlb limit: the
 * listed ones their limit, the others 0 (maybeSetHugetlb). Kept sorted by page size.
 *
 * cpuset_cpus / cpuset_mems are owned by the struct (ncm_cgroup_resources_done()).
 */
typedef struct ncm_cgroup_resources {
        bool has_cpu_shares, has_cpu_quota, has_cpu_period, has_memory, has_pids;
        bool has_memory_min, has_memory_low, has_hugepages;
        uint64_t cpu_shares;
        int64_t cpu_quota;
        uint64_t cpu_period;
        int64_t memory;
        int64_t pids;
        int64_t memory_min; /* cgroup v2 only (MemoryQoS) */
        int64_t memory_low; /* cgroup v2 only (MemoryQoS) */
        /* Container cgroups written by an OCI runtime convert shares with the runtime's
         * formula (ncm_cgroup_shares_to_weight_oci) instead of the kubelet's. */
        bool oci_weight;
        size_t n_hugepages;
        ncm_cgroup_hugepage hugepages[NCM_CGROUP_MAX_HUGEPAGE_SIZES];
        ncm_cpuset *cpuset_cpus;
        ncm_cpuset *cpuset_mems;
} ncm_cgroup_resources;

/* An empty config (nothing set). */
NCM_API void ncm_cgroup_resources_init(ncm_cgroup_resources *r);
/* Free the cpusets; R is empty again. */
NCM_API void ncm_cgroup_resources_done(ncm_cgroup_resources *r);
/* DST = copy of SRC (DST is initialised first). -ENOMEM. */
NCM_API int ncm_cgroup_resources_copy(ncm_cgroup_resources *dst, const ncm_cgroup_resources *src);
/*
 * Add LIMIT to page size PAGE_SIZE (summing when present) and set has_hugepages. -ENOSPC beyond
 * NCM_CGROUP_MAX_HUGEPAGE_SIZES sizes; a sum beyond INT64_MAX stays there (no limit).
 */
NCM_API int ncm_cgroup_resources_add_hugepage(ncm_cgroup_resources *r, int64_t page_size,
                                              int64_t limit);
/* Replace the cpuset fields (copies; NULL clears). -ENOMEM. */
NCM_API int ncm_cgroup_resources_set_cpuset(ncm_cgroup_resources *r, const ncm_cpuset *cpus,
                                            const ncm_cpuset *mems);

/* MemoryQoS (KEP-2570), cgroup v2 only. */
typedef enum ncm_cgroup_memory_qos {
        NCM_CGROUP_MEMORY_QOS_NONE = 0, /* memoryReservationPolicy None (default) */
        NCM_CGROUP_MEMORY_QOS_TIERED,   /* TieredReservation: memory.min / memory.low */
} ncm_cgroup_memory_qos;

/* The kubelet settings that shape pod cgroups. */
typedef struct ncm_cgroup_pod_options {
        bool enforce_cpu_limits;  /* cpuCFSQuota (default true) */
        uint64_t cpu_period;      /* cpuCFSQuotaPeriod in µs (default 100000) */
        bool custom_cpu_period;   /* feature gate CustomCPUCFSQuotaPeriod (default false) */
        bool pod_level_resources; /* feature gate PodLevelResources (default true) */
        ncm_cgroup_memory_qos memory_qos;
        int64_t pod_pids_limit; /* podPidsLimit; <= 0 leaves pids.max alone (default -1) */
        /* cpuManagerPolicy static (default false: none): Guaranteed containers with an
         * integer CPU request get exclusive CPUs. */
        bool static_cpu_manager;
        /* feature gate DisableCPUQuotaWithExclusiveCPUs (default true): with the static
         * policy, no CFS quota for a container with exclusive CPUs nor for its pod. */
        bool disable_cpu_quota_with_exclusive_cpus;
} ncm_cgroup_pod_options;

/*
 * Whether the static CPU manager policy gives container C of POD exclusive CPUs: a
 * Guaranteed pod and an integer, non-zero CPU request (o->static_cpu_manager must be set).
 */
NCM_API bool ncm_cgroup_container_has_exclusive_cpus(const ncm_pod *pod, const ncm_container *c,
                                                     const ncm_cgroup_pod_options *o);

/* The defaults listed above. */
NCM_API void ncm_cgroup_pod_options_init(ncm_cgroup_pod_options *o);

/*
 * The pod totals ResourceConfigForPod works from (component-helpers PodRequests/PodLimits):
 * plain integers so that the formulas can be tested and used without a pod object.
 */
typedef struct ncm_cgroup_pod_totals {
        ncm_qos_class qos;
        int64_t cpu_request_milli;
        int64_t cpu_limit_milli;
        int64_t memory_request; /* bytes */
        int64_t memory_limit;   /* bytes */
        /* False when any container (app, init or sidecar) lacks a limit, unless the pod-level
         * resources set one. */
        bool cpu_limits_declared;
        bool memory_limits_declared;
        size_t n_hugepages; /* hugepage requests by page size */
        ncm_cgroup_hugepage hugepages[NCM_CGROUP_MAX_HUGEPAGE_SIZES];
} ncm_cgroup_pod_totals;

/*
 * ResourceConfigForPod on totals. Guaranteed: shares, quota, period and memory; Burstable:
 * shares, plus quota and period when every container has a CPU limit and memory when every
 * container has a memory limit; BestEffort: shares 2 only. Hugepage limits are always set.
 * With enforce_cpu_limits false the quota is -1. pids.max from pod_pids_limit when > 0;
 * memory.min / memory.low per memory_qos (only meaningful on cgroup v2). *RET is initialised
 * by this function. -EINVAL for an invalid period.
 */
NCM_API int ncm_cgroup_config_from_totals(const ncm_cgroup_pod_totals *t,
                                          const ncm_cgroup_pod_options *o,
                                          ncm_cgroup_resources *ret, ncm_error *err);

/*
 * The totals of POD (component-helpers PodRequests/PodLimits, overhead included, pod-level
 * resources when o->pod_level_resources), the limits-declared flags as ResourceConfigForPod
 * tracks them (app containers by their own limits, init containers by their limits plus those
 * of the sidecars started before them), hugepage requests by page size and the QoS class of
 * the pod model. *RET is written on success only.
 */
NCM_API int ncm_cgroup_totals_for_pod(const ncm_pod *pod, const ncm_cgroup_pod_options *o,
                                      ncm_cgroup_pod_totals *ret, ncm_error *err);

/*
 * ResourceConfigForPod(pod): ncm_cgroup_totals_for_pod() then ncm_cgroup_config_from_totals(),
 * with CPU limits not enforced (quota -1) when the pod has a container with exclusive CPUs and
 * disable_cpu_quota_with_exclusive_cpus is on (the pod container manager's rule).
 */
NCM_API int ncm_cgroup_config_for_pod(const ncm_pod *pod, const ncm_cgroup_pod_options *o,
                                      ncm_cgroup_resources *ret, ncm_error *err);

/*
 * What the kubelet sends for container C through CRI (generateLinuxContainerResources), as
 * the runtime writes it into the container's cgroup: cpu shares from the request (or the limit
 * when there is no request), with enforce_cpu_limits the quota from the limit (0, i.e. none,
 * without one; -1 for a container with exclusive CPUs under DisableCPUQuotaWithExclusiveCPUs)
 * and the period (100000 unless custom_cpu_period), the memory limit, hugepage
 * limits from the container's limits (other page sizes 0), and with TieredReservation the
 * request as memory.min (Guaranteed pod) or memory.low (Burstable pod); memory.high
 * (memoryThrottlingFactor) is not sent. CPUS and MEMS (may be NULL) are
 * the CPU and memory managers' decisions. shares convert to cpu.weight with the runtime's
 * formula (oci_weight). *RET is initialised by this function.
 */
NCM_API int ncm_cgroup_config_for_container(const ncm_pod *pod, const ncm_container *c,
                                            const ncm_cgroup_pod_options *o, const ncm_cpuset *cpus,
                                            const ncm_cpuset *mems, ncm_cgroup_resources *ret,
                                            ncm_error *err);

/* What the QoS tiers are computed from: the active pods' requests, by class. */
typedef struct ncm_cgroup_qos_usage {
        int64_t burstable_cpu_milli; /* CPU requests of Burstable pods */
        int64_t guaranteed_memory;   /* memory requests of Guaranteed pods (MemoryQoS) */
        int64_t burstable_memory;    /* memory requests of Burstable pods (MemoryQoS) */
} ncm_cgroup_qos_usage;

/*
 * Add POD's requests (PodRequests, overhead included) to U by its QoS class. The sums stop at
 * INT64_MAX (the kubelet's wrap around): no pod the node holds makes another's admission fail.
 * -ERANGE only when POD's own requests cannot be summed (never for a pod ncm_pod_parse took).
 */
NCM_API int ncm_cgroup_qos_usage_add_pod(ncm_cgroup_qos_usage *u, const ncm_pod *pod,
                                         ncm_error *err);

/* The configs of the three tiers (UpdateCgroups). */
typedef struct ncm_cgroup_qos_configs {
        ncm_cgroup_resources guaranteed; /* the kubepods cgroup itself */
        ncm_cgroup_resources burstable;
        ncm_cgroup_resources besteffort;
} ncm_cgroup_qos_configs;

/*
 * QoS tier configs from U: besteffort cpu shares 2, burstable MilliCPUToShares(sum of
 * Burstable CPU requests) (2 with none), hugetlb 1<<62 for every page size of L on all three
 * tiers. On cgroup v2 with TieredReservation: kubepods memory.min = G + B memory requests,
 * burstable memory.low = B; without MemoryQoS burstable memory.low = 0 (KEP-2570 rollback
 * cleanup). QOSReserved (alpha) is not supported. Free with ncm_cgroup_qos_configs_done().
 */
NCM_API int ncm_cgroup_qos_tier_configs(const ncm_cgroup_qos_usage *u, const ncm_cgroup_layout *l,
                                        const ncm_cgroup_pod_options *o,
                                        ncm_cgroup_qos_configs *ret, ncm_error *err);
NCM_API void ncm_cgroup_qos_configs_done(ncm_cgroup_qos_configs *c);

/* ------------------------------------------------------------------------------------------ */
/* Names (CgroupName) and naming drivers                                                      */
/* ------------------------------------------------------------------------------------------ */

#define NCM_CGROUP_NAME_MAX_DEPTH 32

/* A cgroup name: components from the root down; n == 0 is the root. */
typedef struct ncm_cgroup_name {
        size_t n;
        char *parts[NCM_CGROUP_NAME_MAX_DEPTH];
} ncm_cgroup_name;

#define NCM_CGROUP_NAME_INIT                                                                       \
        {                                                                                          \
                0,                                                                                 \
                {                                                                                  \
                        NULL                                                                       \
                }                                                                                  \
        }

/* Free the components; NAME is the root again. */
NCM_API void ncm_cgroup_name_done(ncm_cgroup_name *name);
/* DST = copy of SRC (DST must be empty). -ENOMEM. */
NCM_API int ncm_cgroup_name_copy(ncm_cgroup_name *dst, const ncm_cgroup_name *src);
/*
 * Append COMPONENT (NewCgroupName). Like the kubelet, '/' and '_' are refused (the systemd
 * mapping turns '-' into '_' and must stay reversible); nodecm also refuses "", "." and "..".
 * -EINVAL with the kubelet's text: invalid character in component ["a_b"] of CgroupName.
 */
NCM_API int ncm_cgroup_name_append(ncm_cgroup_name *name, const char *component, ncm_error *err);
/* Append the components of another name. */
NCM_API int ncm_cgroup_name_append_name(ncm_cgroup_name *name, const ncm_cgroup_name *tail,
                                        ncm_error *err);
/* true when both have the same components. */
NCM_API bool ncm_cgroup_name_equal(const ncm_cgroup_name *a, const ncm_cgroup_name *b) NCM_PURE;
/* Go's fmt %q of the []string: ["kubepods" "burstable"]. */
NCM_API void ncm_cgroup_name_format(const ncm_cgroup_name *name, ncm_buf *b);

/*
 * A naming driver: how a name becomes the path of its directory below a hierarchy (always in
 * cgroupfs form, starting with '/') and how such a path is read back.
 */
typedef struct ncm_cgroup_naming_ops {
        const char *name; /* "cgroupfs", "systemd" */
        /* Append the path of NAME to B. -EINVAL when the driver cannot express it. */
        int (*to_path)(const ncm_cgroup_name *name, ncm_buf *b, ncm_error *err);
        /* Parse PATH back into *RET (which must be empty). */
        int (*from_path)(const char *path, ncm_cgroup_name *ret, ncm_error *err);
        /* Append the path of a container's cgroup below its pod's path POD_PATH. */
        int (*container_path)(const char *pod_path, const char *container, ncm_buf *b,
                              ncm_error *err);
} ncm_cgroup_naming_ops;

/* cgroupfs: "/" + components joined by "/" (ToCgroupfs / ParseCgroupfsToCgroupName). */
NCM_API extern const ncm_cgroup_naming_ops ncm_cgroup_naming_cgroupfs;
/*
 * systemd: components with '-' turned into '_', joined by '-', ".slice" appended and expanded
 * into the slice path (ToSystemd + libcontainer's ExpandSlice); read back from the last
 * element (ParseSystemdToCgroupName). Containers are "<pod slice>/nodecm-<name>.scope".
 */
NCM_API extern const ncm_cgroup_naming_ops ncm_cgroup_naming_systemd;
/* "cgroupfs" or "systemd", else NULL. */
NCM_API const ncm_cgroup_naming_ops *ncm_cgroup_naming_by_name(const char *name);

/*
 * libcontainer's ExpandSlice: "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice", "-.slice" ->
 * "/". -EINVAL ("invalid slice name: %s") for names without the suffix, with '/', or with an
 * empty dash-separated part.
 */
NCM_API int ncm_cgroup_expand_slice(const char *slice, ncm_buf *b, ncm_error *err);

/* Well-known names of the QoS hierarchy. */
#define NCM_CGROUP_KUBEPODS "kubepods"
#define NCM_CGROUP_BURSTABLE "burstable"
#define NCM_CGROUP_BESTEFFORT "besteffort"
#define NCM_CGROUP_POD_PREFIX "pod"

/*
 * The names of the node allocatable cgroup and the QoS tiers below CGROUP_ROOT (the kubelet's
 * --cgroup-root, "/" by default, in cgroupfs form): ROOT/kubepods (the Guaranteed tier),
 * ROOT/kubepods/burstable, ROOT/kubepods/besteffort. With CGROUPS_PER_QOS false everything is
 * CGROUP_ROOT itself. RET_* may be NULL.
 */
NCM_API int ncm_cgroup_qos_names(const char *cgroup_root, bool cgroups_per_qos,
                                 ncm_cgroup_name *ret_guaranteed, ncm_cgroup_name *ret_burstable,
                                 ncm_cgroup_name *ret_besteffort, ncm_error *err);

/* The pod's name: the tier of QOS followed by "pod<UID>". *RET must be empty. */
NCM_API int ncm_cgroup_pod_name(const char *cgroup_root, bool cgroups_per_qos, ncm_qos_class qos,
                                const char *pod_uid, ncm_cgroup_name *ret, ncm_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Layouts: where the hierarchies are                                                         */
/* ------------------------------------------------------------------------------------------ */

/* Controllers nodecm knows, as bits. */
enum {
        NCM_CGROUP_CTRL_CPUSET = 1u << 0,
        NCM_CGROUP_CTRL_CPU = 1u << 1,
        NCM_CGROUP_CTRL_CPUACCT = 1u << 2,
        NCM_CGROUP_CTRL_MEMORY = 1u << 3,
        NCM_CGROUP_CTRL_PIDS = 1u << 4,
        NCM_CGROUP_CTRL_HUGETLB = 1u << 5,
        NCM_CGROUP_CTRL_SYSTEMD = 1u << 6, /* v1 "name=systemd" */
        NCM_CGROUP_CTRL_IO = 1u << 7,
        NCM_CGROUP_CTRL_RDMA = 1u << 8,
        NCM_CGROUP_CTRL_MISC = 1u << 9,
};

/* "cpuset", "cpu", ..., "systemd" for one bit; NULL for anything else. */
NCM_API const char *ncm_cgroup_controller_name(unsigned ctrl);
/* Parse a space- or comma-separated controller list ("cpu,cpuacct", "cpuset cpu io memory");
 * unknown names are ignored, "name=systemd" is NCM_CGROUP_CTRL_SYSTEMD. */
NCM_API unsigned ncm_cgroup_parse_controllers(const char *s, size_t len);

typedef enum ncm_cgroup_mode {
        NCM_CGROUP_MODE_V1 = 1,     /* legacy: v1 hierarchies only */
        NCM_CGROUP_MODE_HYBRID = 2, /* v1 hierarchies + cgroup2 at <root>/unified: treated as v1 */
        NCM_CGROUP_MODE_UNIFIED = 3 /* cgroup v2 */
} ncm_cgroup_mode;

#define NCM_CGROUP_MAX_HIERARCHIES 16

typedef struct ncm_cgroup_hierarchy {
        unsigned controllers; /* NCM_CGROUP_CTRL_* mounted there */
        char dir[64];         /* below the root: "/cpu", "/cpu,cpuacct"; "" on v2 */
} ncm_cgroup_hierarchy;

struct ncm_cgroup_layout {
        ncm_cgroup_mode mode;
        char display_root[256]; /* how paths are shown: "/sys/fs/cgroup" */
        size_t n_hierarchies;   /* v1: one per mount; v2: one ("" = the root) */
        ncm_cgroup_hierarchy hierarchies[NCM_CGROUP_MAX_HIERARCHIES];
        unsigned v2_controllers; /* v2: the root's cgroup.controllers */
        size_t n_hugepage_sizes; /* ascending, bytes */
        int64_t hugepage_sizes[NCM_CGROUP_MAX_HUGEPAGE_SIZES];
};

/* 1 for v1 and hybrid, 2 for unified. */
NCM_API int ncm_cgroup_layout_version(const ncm_cgroup_layout *l) NCM_PURE;

/*
 * A typical machine, for plans: VERSION 1 gives separate cpuset, memory, cpu, cpuacct, pids,
 * hugetlb and name=systemd hierarchies under DISPLAY_ROOT; VERSION 2 a unified tree whose root
 * offers cpuset cpu io memory hugetlb pids rdma misc. Hugepage sizes 2MB and 1GB.
 */
NCM_API int ncm_cgroup_layout_standard(ncm_cgroup_layout *ret, int version,
                                       const char *display_root, ncm_error *err);

/* The hierarchy holding CTRL (v1: the one with the shortest directory, as kubelet #95488;
 * v2: the root when the controller is available). NULL when absent. */
NCM_API const ncm_cgroup_hierarchy *ncm_cgroup_layout_find(const ncm_cgroup_layout *l,
                                                           unsigned ctrl);

/*
 * The controllers the kubelet requires, present in L: cpu, cpuacct, cpuset and memory mounted
 * on cgroup v1 (validateSystemRequirements); cpu, cpuset and memory in the root's
 * cgroup.controllers on v2; and the bits of EXTRA among NCM_CGROUP_CTRL_PIDS and
 * NCM_CGROUP_CTRL_HUGETLB (when a limit of theirs is to be written). 0, or
 * -NCM_E_UNSATISFIABLE with the kubelet's text: `system validation failed - Following Cgroup
 * subsystem not mounted: [cpuacct memory]` (v1), `cgroup ["kubepods"] has some missing
 * controllers: cpuset, memory` (v2, KUBEPODS naming the cgroup; NULL: "kubepods").
 */
NCM_API int ncm_cgroup_layout_check_controllers(const ncm_cgroup_layout *l, unsigned extra,
                                                const char *kubepods, ncm_error *err);

/*
 * Detect the layout of the cgroup mount root ROOTFD, whose path on the host is ROOT_PATH:
 * statfs says cgroup2 (unified) or tmpfs (v1 or hybrid; the hierarchies are the cgroup mounts
 * of MOUNTINFO, the text of /proc/self/mountinfo, directly below ROOT_PATH, each confirmed by
 * statfs). Hugepage sizes come from SYSFD's /sys/kernel/mm/hugepages (SYSFD may be -1: none).
 * Anything else is -ENOTSUP "'<path>' is not a cgroup filesystem (...)".
 */
NCM_API int ncm_cgroup_layout_detect(int rootfd, const char *root_path, const char *mountinfo,
                                     int sysfd, ncm_cgroup_layout *ret, ncm_error *err);

/*
 * Hugepage sizes of a machine from SYSFD's /sys/kernel/mm/hugepages ("hugepages-2048kB"),
 * ascending. 0 sizes when the directory is absent.
 */
NCM_API int ncm_cgroup_hugepage_sizes(int sysfd, int64_t *ret_sizes, size_t max, size_t *ret_n,
                                      ncm_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Plans: what would be created and written, in order                                         */
/* ------------------------------------------------------------------------------------------ */

typedef enum ncm_cgroup_op_kind {
        NCM_CGROUP_OP_MKDIR,   /* create the directory if missing */
        NCM_CGROUP_OP_WRITE,   /* write value to an existing file */
        NCM_CGROUP_OP_INHERIT, /* cgroup v1 cpuset: copy the parent's file when this one is empty */
        NCM_CGROUP_OP_RMDIR,   /* remove the directory (children first) if present */
} ncm_cgroup_op_kind;

enum {
        /* A missing file means the kernel lacks the feature: skip this and the following
         * operations of the same group (hugetlb rsvd files). */
        NCM_CGROUP_OPF_OPTIONAL = 1u << 0,
        /* Read the value back; a different value is an error (cpu.shares). */
        NCM_CGROUP_OPF_READBACK = 1u << 1,
        /* EINVAL is retried after the next write (cpu.cfs_period_us before the quota). */
        NCM_CGROUP_OPF_RETRY_AFTER_NEXT = 1u << 2,
        /* cgroup.subtree_control: on failure write each "+ctrl" alone and ignore errors. */
        NCM_CGROUP_OPF_SUBTREE = 1u << 3,
        /* Part of making the directory: undone with it, never restored on its own. */
        NCM_CGROUP_OPF_CREATE = 1u << 4,
        /* A write the kernel refuses is passed over (an interrupt it will not move). */
        NCM_CGROUP_OPF_BEST_EFFORT = 1u << 5,
};

typedef struct ncm_cgroup_op {
        ncm_cgroup_op_kind kind;
        unsigned flags;
        unsigned group; /* optional-skip scope */
        size_t step;    /* index into the plan's steps */
        char *path;     /* inside the root: "/cpu/kubepods/cpu.shares" */
        char *value;    /* WRITE only */
} ncm_cgroup_op;

/* A step: one cgroup and what role it has. */
typedef struct ncm_cgroup_step {
        char *title; /* "kubepods (node allocatable)" */
        char *path;  /* the cgroup's path from the naming driver: "/kubepods/burstable" */
} ncm_cgroup_step;

typedef struct ncm_cgroup_plan {
        char display_root[256];
        size_t n_ops, cap_ops;
        ncm_cgroup_op *ops;
        size_t n_steps, cap_steps;
        ncm_cgroup_step *steps;
        unsigned next_group;
} ncm_cgroup_plan;

#define NCM_CGROUP_PLAN_INIT                                                                       \
        {                                                                                          \
                {0}, 0, 0, NULL, 0, 0, NULL, 0                                                     \
        }

/* Free everything; the plan is empty again. */
NCM_API void ncm_cgroup_plan_done(ncm_cgroup_plan *p);
/* Start a step (a cgroup); later operations belong to it. -ENOMEM. */
NCM_API int ncm_cgroup_plan_step(ncm_cgroup_plan *p, const char *title, const char *cgroup_path);
/* Append an operation. VALUE may be NULL except for WRITE. -ENOMEM. */
NCM_API int ncm_cgroup_plan_add(ncm_cgroup_plan *p, ncm_cgroup_op_kind kind, unsigned flags,
                                const char *path, const char *value);
/* A fresh group number for NCM_CGROUP_OPF_OPTIONAL chains. */
NCM_API unsigned ncm_cgroup_plan_new_group(ncm_cgroup_plan *p);
/*
 * Drop what a plan does twice: a write that a later write of the same file supersedes (the
 * node allocatable's hugetlb limit of kubepods, which the Guaranteed tier -- kubepods itself --
 * sets unbounded right after, as the kubelet's QoS manager does), a directory made again, a
 * subtree_control line written again, a file inherited from its parent once it was written or
 * inherited already. What the plan leaves on the machine is the same.
 */
NCM_API void ncm_cgroup_plan_drop_superseded(ncm_cgroup_plan *p);
/* Append SRC's steps and operations to DST (its optional groups renumbered). -ENOMEM. */
NCM_API int ncm_cgroup_plan_append(ncm_cgroup_plan *dst, const ncm_cgroup_plan *src);

/*
 * Text form: one "# <title>: <cgroup path>" header per step, then one line per operation:
 * "mkdir    <path>", "write    <path> <value>", "inherit  <path>", "rmdir    <path>", with
 * notes in parentheses for the flags. Paths are shown under the plan's display root.
 */
NCM_API void ncm_cgroup_plan_format(const ncm_cgroup_plan *p, ncm_buf *b);
/* JSON: {"root": "...", "steps": [{"title", "cgroup", "ops": [{"op", "path", "value"?,
 * "optional"?, ...}]}]} on one line, then a newline. */
NCM_API void ncm_cgroup_plan_format_json(const ncm_cgroup_plan *p, ncm_buf *b);

/* Hooks for executing a plan on a fake tree, where mkdir does not make the control files. */
typedef struct ncm_cgroup_exec_options {
        /* Called after a directory was created (PATH inside the root); fills it in as the
         * kernel would. NULL on a real cgroupfs. */
        int (*on_mkdir)(int rootfd, const char *path, void *userdata);
        /* Called before a directory is removed; empties it as the kernel would (a fake tree
         * holds regular files). NULL on a real cgroupfs. */
        int (*before_rmdir)(int rootfd, const char *path, void *userdata);
        void *userdata;
} ncm_cgroup_exec_options;

/*
 * Execute P through ROOTFD. On failure, everything done so far is undone in reverse order
 * (files restored to the value read before writing, created directories removed) and the
 * error names the path; the undo is best effort and a failing undo is appended to the message.
 * Returns the number of operations that changed something.
 */
NCM_API int ncm_cgroup_plan_apply(const ncm_cgroup_plan *p, int rootfd,
                                  const ncm_cgroup_exec_options *opts, ncm_error *err);

/*
 * Undo across plans: a transaction that applies several plans (a pod's cgroups, then the
 * cpusets of other pods' containers) can put everything back when a later step fails.
 */
typedef struct ncm_cgroup_undo ncm_cgroup_undo;

/* A new, empty undo log; NULL when out of memory. */
NCM_API ncm_cgroup_undo *ncm_cgroup_undo_new(void);
/* Free U (NULL is fine) without undoing anything. Returns NULL. */
NCM_API ncm_cgroup_undo *ncm_cgroup_undo_free(ncm_cgroup_undo *u);
NCM_DEFINE_AUTOPTR(ncm_cgroup_undo, ncm_cgroup_undo_free)
/* Forget what U recorded (the transaction is committed). */
NCM_API void ncm_cgroup_undo_clear(ncm_cgroup_undo *u);
/* How many changes U holds. */
NCM_API size_t ncm_cgroup_undo_count(const ncm_cgroup_undo *u) NCM_PURE;

/*
 * ncm_cgroup_plan_apply(), recording in U how to put back what P changed. On failure P's own
 * changes are undone at once and U holds what it held before. Removals (RMDIR) cannot be
 * undone: a transaction does them last.
 */
NCM_API int ncm_cgroup_plan_apply_undo(const ncm_cgroup_plan *p, int rootfd,
                                       const ncm_cgroup_exec_options *opts, ncm_cgroup_undo *u,
                                       ncm_error *err);

/*
 * Undo everything U recorded, latest first (created directories removed, files written back
 * to the values read before); U is empty afterwards. Best effort: 0, or -EIO when something
 * could not be put back, the message naming the first path and how many failed.
 */
NCM_API int ncm_cgroup_undo_run(ncm_cgroup_undo *u, int rootfd, const ncm_cgroup_exec_options *opts,
                                ncm_error *err);

/* ------------------------------------------------------------------------------------------ */
/* Version drivers: cgroupfs on v1 and on v2                                                  */
/* ------------------------------------------------------------------------------------------ */

typedef struct ncm_cgroup_ops {
        const char *name; /* "cgroupfs-v1", "cgroupfs-v2" */
        int version;
        /*
         * Append to PLAN what makes cgroup CGPATH (naming driver output, "/kubepods") exist
         * with RES: the directories of every managed hierarchy (v1: parents get cpuset.cpus
         * and cpuset.mems copied before anything moves in; v2: the parents enable controllers
         * in cgroup.subtree_control) when CREATE, then the files in libcontainer's order.
         */
        int (*plan_set)(const ncm_cgroup_layout *l, const char *cgpath,
                        const ncm_cgroup_resources *res, bool create, ncm_cgroup_plan *plan,
                        ncm_error *err);
        /* Append the removal of CGPATH in every hierarchy. */
        int (*plan_remove)(const ncm_cgroup_layout *l, const char *cgpath, ncm_cgroup_plan *plan,
                           ncm_error *err);
        /*
         * Read CGPATH's cpu and memory settings back (GetCgroupConfig): shares (v2: from
         * cpu.weight), quota, period, memory limit, pids.max, cpuset. *RET is initialised.
         */
        int (*read)(const ncm_cgroup_layout *l, int rootfd, const char *cgpath,
                    ncm_cgroup_resources *ret, ncm_error *err);
        /*
         * 1 if CGPATH exists as the kubelet checks it (v1: the directory in every managed
         * hierarchy; v2: cgroup.controllers lists every needed controller), 0 if not; a
         * message in ERR lists what is missing.
         */
        int (*exists)(const ncm_cgroup_layout *l, int rootfd, const char *cgpath, ncm_error *err);
} ncm_cgroup_ops;

NCM_API extern const ncm_cgroup_ops ncm_cgroup_ops_v1;
NCM_API extern const ncm_cgroup_ops ncm_cgroup_ops_v2;
/* The driver for a layout's version. */
NCM_API const ncm_cgroup_ops *ncm_cgroup_ops_for(const ncm_cgroup_layout *l) NCM_PURE;

/*
 * The processes of CGPATH and its descendants in any hierarchy (cgroup.procs), up to MAX;
 * *RET_N is the number found (which may exceed MAX). Used before removal.
 */
NCM_API int ncm_cgroup_pids(const ncm_cgroup_layout *l, int rootfd, const char *cgpath,
                            int *ret_pids, size_t max, size_t *ret_n, ncm_error *err);

/*
 * The child cgroups of CGPATH (directory names) in any hierarchy, deduplicated and sorted;
 * each malloc'd, the array NULL-terminated. Used to refuse foreign contents.
 */
NCM_API int ncm_cgroup_children(const ncm_cgroup_layout *l, int rootfd, const char *cgpath,
                                char ***ret, ncm_error *err);
/* Free a NULL-terminated string array. Returns NULL. */
NCM_API char **ncm_cgroup_strv_free(char **v);

/* ------------------------------------------------------------------------------------------ */
/* Node allocatable (node_container_manager_linux.go, eviction helpers, nodestatus setters)   */
/* ------------------------------------------------------------------------------------------ */

/* Resource names of node capacity besides cpu and memory. */
#define NCM_RESOURCE_EPHEMERAL_STORAGE "ephemeral-storage"
#define NCM_RESOURCE_PID "pid"

/* A hard eviction threshold: SIGNAL < quantity, or SIGNAL < percentage of capacity. */
typedef struct ncm_eviction_threshold {
        char signal[40]; /* "memory.available", "nodefs.available", ... */
        bool is_percentage;
        float percentage; /* a fraction (0.1 for "10%"), float32 as in the kubelet */
        ncm_quantity quantity;
} ncm_eviction_threshold;

#define NCM_CGROUP_MAX_THRESHOLDS 16

typedef struct ncm_eviction_thresholds {
        size_t n;
        ncm_eviction_threshold items[NCM_CGROUP_MAX_THRESHOLDS];
} ncm_eviction_thresholds;

/* The kubelet's default --eviction-hard on Linux: memory.available<100Mi,
 * nodefs.available<10%, nodefs.inodesFree<5%, imagefs.available<15%, imagefs.inodesFree<5%. */
NCM_API void ncm_cgroup_eviction_defaults(ncm_eviction_thresholds *ret);

/*
 * Parse --eviction-hard ("memory.available<100Mi,nodefs.available<10%"): unknown signals are
 * "unsupported eviction signal <s>"; "0%" and "100%" disable a threshold; percentages must be
 * within 0-100%, quantities positive (the kubelet's texts). Thresholds are kept in the order
 * given (Go's map order is random). *RET written on success only.
 */
NCM_API int ncm_cgroup_parse_eviction_hard(const char *s, ncm_eviction_thresholds *ret,
                                           ncm_error *err);

/*
 * One threshold of evictionHard (the config file's map form): SIGNAL < VALUE, checked as
 * ncm_cgroup_parse_eviction_hard() checks it, replacing SIGNAL's threshold in T ("0%" and
 * "100%" remove it). 0, or -EINVAL with the kubelet's text.
 */
NCM_API int ncm_cgroup_eviction_set(ncm_eviction_thresholds *t, const char *signal,
                                    const char *value, ncm_error *err);

/*
 * Parse --kube-reserved / --system-reserved ("cpu=500m,memory=1Gi"): cpu, memory,
 * ephemeral-storage and pid only ("cannot reserve \"x\" resource"), quantities in the
 * kubelet's syntax, never negative. FLAG (the caller's name for it) starts messages. *RET (empty on
 * entry) is a sorted list; free with ncm_resource_list_done().
 */
NCM_API int ncm_cgroup_parse_reserved(const char *flag, const char *s, ncm_resource_list *ret,
                                      ncm_error *err);

/*
 * Parse a capacity ("cpu=4,memory=16Gi,pid=4194304,hugepages-2Mi=1Gi"): any resource name,
 * non-negative quantities. *RET (empty on entry) is sorted.
 */
NCM_API int ncm_cgroup_parse_capacity(const char *s, ncm_resource_list *ret, ncm_error *err);

/* --enforce-node-allocatable values. */
enum {
        NCM_ENFORCE_PODS = 1u << 0,
        NCM_ENFORCE_KUBE_RESERVED = 1u << 1,
        NCM_ENFORCE_SYSTEM_RESERVED = 1u << 2,
        NCM_ENFORCE_KUBE_RESERVED_COMPRESSIBLE = 1u << 3,
        NCM_ENFORCE_SYSTEM_RESERVED_COMPRESSIBLE = 1u << 4,
        NCM_ENFORCE_NONE = 1u << 5,
};

/*
 * Parse --enforce-node-allocatable ("pods,kube-reserved"; "" and "none" enforce nothing) and
 * check it as the kubelet's validation does: "none" alone; kube-reserved(-compressible) needs
 * KUBE_CGROUP and system-reserved(-compressible) SYSTEM_CGROUP (either may be NULL or "").
 */
NCM_API int ncm_cgroup_parse_enforce(const char *s, const char *kube_cgroup,
                                     const char *system_cgroup, unsigned *ret, ncm_error *err);

/* The result of the node allocatable computation. Lists are sorted by name. */
typedef struct ncm_node_allocatable {
        ncm_resource_list capacity;    /* node capacity (pid excluded) */
        ncm_resource_list eviction;    /* hardEvictionReservation */
        ncm_resource_list reservation; /* kube + system + eviction, non-zero entries */
        ncm_resource_list allocatable; /* reported: capacity - reservation, >= 0, memory minus
                                          hugepages capacity */
        ncm_resource_list pods_limits; /* what the kubepods cgroup is limited to: internal
                                          capacity (pid included) minus kube and system
                                          reserved when "pods" is enforced, else the internal
                                          capacity; eviction is not subtracted */
} ncm_node_allocatable;

NCM_API void ncm_node_allocatable_done(ncm_node_allocatable *na);

/*
 * Compute node allocatable from CAPACITY (pid included when known), the KUBE and SYSTEM
 * reservations (may be NULL), the hard eviction thresholds HARD (may be NULL) and ENFORCE.
 * A reservation above capacity fails with NCM_E_UNSATISFIABLE and the kubelet's text:
 * invalid Node Allocatable configuration. Resource "memory" has a reservation of 9Gi but
 * capacity of 8Gi. Expected capacity >= reservation.
 */
NCM_API int ncm_cgroup_node_allocatable(const ncm_resource_list *capacity,
                                        const ncm_resource_list *kube,
                                        const ncm_resource_list *system,
                                        const ncm_eviction_thresholds *hard, unsigned enforce,
                                        ncm_node_allocatable *ret, ncm_error *err);

/*
 * getCgroupConfig: the cgroup config for a resource list (kubepods from pods_limits, or a
 * reserved cgroup from its reservation): memory limit, cpu shares from the CPU milli-value,
 * pids.max from "pid", hugetlb limits from hugepages-<size>; with COMPRESSIBLE_ONLY cpu shares
 * only. ALL_CPUS (may be NULL) is the cpuset written when the CPU manager policy is "none".
 * *RET is initialised by this function.
 */
NCM_API int ncm_cgroup_config_for_resource_list(const ncm_resource_list *rl, bool compressible_only,
                                                const ncm_cpuset *all_cpus,
                                                ncm_cgroup_resources *ret, ncm_error *err);

/*
 * This machine's capacity, read through ROOTFD ("/" on a real machine): cpu (online CPUs of
 * /sys/devices/system/cpu/online), memory (MemTotal of /proc/meminfo), hugepages-<size> (pages
 * times page size, every size of /sys/kernel/mm/hugepages), pid (the smaller of
 * /proc/sys/kernel/pid_max and /proc/sys/kernel/threads-max) and ephemeral-storage (size of
 * the filesystem holding ROOT_DIR, the kubelet's root directory, else of "/"). Values the
 * machine does not offer are left out. *RET (empty on entry) is sorted.
 */
NCM_API int ncm_cgroup_machine_capacity(int rootfd, const char *root_dir, ncm_resource_list *ret,
                                        ncm_error *err);

/* Set NAME to Q in the sorted list L (replacing an existing entry). -ENOMEM. */
NCM_API int ncm_cgroup_resource_list_set(ncm_resource_list *l, const char *name,
                                         const ncm_quantity *q);

/* ------------------------------------------------------------------------------------------ */
/* The manager: pod, QoS and node cgroups the way the kubelet lays them out                   */
/* ------------------------------------------------------------------------------------------ */

typedef struct ncm_cgroup_manager {
        ncm_cgroup_layout layout;
        const ncm_cgroup_ops *ops;           /* from the layout's version */
        const ncm_cgroup_naming_ops *naming; /* cgroupfs or systemd */
        char cgroup_root[256];               /* --cgroup-root, cgroupfs form */
        ncm_cgroup_pod_options options;
        /* The node allocatable config of kubepods (ncm_cgroup_config_for_resource_list on
         * the pods limits); without it plans leave kubepods' values alone. */
        bool has_kubepods;
        ncm_cgroup_resources kubepods;
        int rootfd;                   /* the layout's root; -1 when only planning */
        ncm_cgroup_exec_options exec; /* fake-tree hooks; zero on a real machine */
} ncm_cgroup_manager;

/*
 * Set M up for LAYOUT with NAMING, CGROUP_ROOT (NULL: "/") and OPTIONS (NULL: defaults).
 * ROOTFD is borrowed (not closed by ncm_cgroup_manager_done()); -1 for plans only.
 */
NCM_API int ncm_cgroup_manager_init(ncm_cgroup_manager *m, const ncm_cgroup_layout *layout,
                                    const ncm_cgroup_naming_ops *naming, const char *cgroup_root,
                                    const ncm_cgroup_pod_options *options, int rootfd,
                                    ncm_error *err);
NCM_API void ncm_cgroup_manager_done(ncm_cgroup_manager *m);

/* Use KUBEPODS (copied) as the node allocatable config of kubepods. */
NCM_API int ncm_cgroup_manager_set_kubepods(ncm_cgroup_manager *m,
                                            const ncm_cgroup_resources *kubepods, ncm_error *err);

/* The path (naming driver output) of NAME. *RET is malloc'd. */
NCM_API int ncm_cgroup_manager_path(const ncm_cgroup_manager *m, const ncm_cgroup_name *name,
                                    char **ret, ncm_error *err);

/* A CPU manager decision for one container (CONTAINER NULL: every container). */
typedef struct ncm_cgroup_container_cpus {
        const char *container;
        const ncm_cpuset *cpus;
        const ncm_cpuset *mems; /* its memory nodes (ncm_node_container_mems); NULL: MEMS */
} ncm_cgroup_container_cpus;

enum {
        /* Leave the kubepods / QoS tier steps out (they exist and are up to date). */
        NCM_CGROUP_PLAN_POD_ONLY = 1u << 0,
        /* Leave the container cgroups out (the runtime makes them). */
        NCM_CGROUP_PLAN_NO_CONTAINERS = 1u << 1,
        /*
         * The node was started (kubepods and the tiers made, node allocatable written): of the
         * tiers only what the pod's requests change (the Burstable weight, MemoryQoS's
         * protections), not the start-up writes again.
         */
        NCM_CGROUP_PLAN_STARTED = 1u << 2,
};

/*
 * Append to PLAN everything that makes POD's cgroups right, in the kubelet's order:
 * kubepods (its node allocatable config; as the Guaranteed tier its hugetlb limits are the
 * QoS manager's 1<<62, the value the kubelet leaves there after the first pod sync, written
 * once so that re-applying never lowers them for a moment), the burstable and besteffort
 * tiers (from USAGE plus this pod; USAGE may be NULL), the pod cgroup (ResourceConfigForPod +
 * podPidsLimit), then one cgroup per sidecar and app container with the values the kubelet
 * sends through CRI and the cpusets of CPUS (N_CPUS entries; an entry's mems, else MEMS).
 * Containers are named
 * by their container name (a runtime would use the container ID). Every step creates what is
 * missing and writes every value.
 */
NCM_API int ncm_cgroup_manager_plan_pod(const ncm_cgroup_manager *m, const ncm_pod *pod,
                                        const ncm_cgroup_qos_usage *usage,
                                        const ncm_cgroup_container_cpus *cpus, size_t n_cpus,
                                        const ncm_cpuset *mems, unsigned flags,
                                        ncm_cgroup_plan *plan, ncm_error *err);

/*
 * Append the removal of POD's cgroup (its container cgroups first) and the burstable tier's
 * update from USAGE (which must not count POD; may be NULL).
 */
NCM_API int ncm_cgroup_manager_plan_remove_pod(const ncm_cgroup_manager *m, const ncm_pod *pod,
                                               const ncm_cgroup_qos_usage *usage,
                                               ncm_cgroup_plan *plan, ncm_error *err);

/*
 * Append what --enforce-node-allocatable writes: kubepods with its config ("pods" or not,
 * kubepods is always created and updated), and the existing kube-reserved / system-reserved
 * cgroups (cgroupfs-form names for cgroupfs, slice paths for systemd) with their reservations
 * (compressible: cpu shares only). KUBE / SYSTEM may be NULL when not enforced. ALL_CPUS as
 * in ncm_cgroup_config_for_resource_list().
 */
NCM_API int ncm_cgroup_manager_plan_node(const ncm_cgroup_manager *m, unsigned enforce,
                                         const char *kube_cgroup, const ncm_resource_list *kube,
                                         const char *system_cgroup, const ncm_resource_list *system,
                                         const ncm_cpuset *all_cpus, ncm_cgroup_plan *plan,
                                         ncm_error *err);

/*
 * The Burstable CPU requests of the pods already in the burstable tier, read back from their
 * cgroups (cpu.shares, or cpu.weight on v2, converted to milli-CPU; approximate by the
 * conversions' rounding), except pod EXCLUDE_UID (may be NULL). Used when no pod list is at
 * hand, as in the CLI.
 */
NCM_API int ncm_cgroup_manager_read_usage(const ncm_cgroup_manager *m, const char *exclude_uid,
                                          ncm_cgroup_qos_usage *ret, ncm_error *err);

/*
 * Create or update POD's cgroups for real (plan_pod with the usage read back, then
 * ncm_cgroup_plan_apply()). Refuses, changing nothing: a --cgroup-root that does not exist
 * (the kubelet's "cgroup [...] has some missing paths" text, exit 2), and a pod cgroup that
 * already holds child cgroups other than this pod's containers (NCM_E_INVALID_STATE). On a
 * failure everything created or written is undone. Returns the number of changes.
 */
NCM_API int ncm_cgroup_manager_apply_pod(const ncm_cgroup_manager *m, const ncm_pod *pod,
                                         const ncm_cgroup_container_cpus *cpus, size_t n_cpus,
                                         const ncm_cpuset *mems, unsigned flags, ncm_error *err);

/*
 * Remove POD's cgroup tree and update the burstable tier. Refuses while processes are in it
 * (NCM_E_INVALID_STATE, naming a pid): the kubelet kills them first; nodecm leaves that to the
 * caller. Returns the number of changes (0: nothing to remove).
 */
NCM_API int ncm_cgroup_manager_remove_pod(const ncm_cgroup_manager *m, const ncm_pod *pod,
                                          ncm_error *err);

/*
 * The path of POD_UID's cgroup in tier QOS (CONTAINER_LEAF NULL) or of its container cgroup
 * CONTAINER_LEAF, as the naming driver writes it. *RET is malloc'd.
 */
NCM_API int ncm_cgroup_manager_container_path(const ncm_cgroup_manager *m, const char *pod_uid,
                                              ncm_qos_class qos, const char *container_leaf,
                                              char **ret, ncm_error *err);

/*
 * Append to PLAN the values RES (written as they are, nothing created) for the existing
 * container cgroup CONTAINER_LEAF of POD_UID (tier QOS): what an in-place resize changes.
 */
NCM_API int ncm_cgroup_manager_plan_container_resources(const ncm_cgroup_manager *m,
                                                        const char *pod_uid, ncm_qos_class qos,
                                                        const char *container_leaf,
                                                        const ncm_cgroup_resources *res,
                                                        ncm_cgroup_plan *plan, ncm_error *err);

/*
 * Append to PLAN the cpuset of the container cgroup CONTAINER_LEAF of POD_UID (tier QOS):
 * cpuset.cpus = CPUS and, when MEMS is given, cpuset.mems. Nothing is created.
 */
NCM_API int ncm_cgroup_manager_plan_container_cpuset(const ncm_cgroup_manager *m,
                                                     const char *pod_uid, ncm_qos_class qos,
                                                     const char *container_leaf,
                                                     const ncm_cpuset *cpus, const ncm_cpuset *mems,
                                                     ncm_cgroup_plan *plan, ncm_error *err);

/*
 * Append what the kubelet's container manager writes at start (after node allocatable):
 * kubepods and the burstable and besteffort QoS tiers, the burstable tier's shares from USAGE
 * (the pods already there; NULL: none).
 */
NCM_API int ncm_cgroup_manager_plan_start(const ncm_cgroup_manager *m,
                                          const ncm_cgroup_qos_usage *usage, ncm_cgroup_plan *plan,
                                          ncm_error *err);

/*
 * The kubelet's check of --cgroup-root: it must exist in every hierarchy (the `cgroup [...]
 * has some missing paths` text, prefixed "invalid configuration"). 0 when it does.
 */
NCM_API int ncm_cgroup_manager_check_root(const ncm_cgroup_manager *m, ncm_error *err);

/*
 * Set the cpuset of one existing container cgroup, CONTAINER_LEAF below POD_UID's cgroup of
 * tier QOS (the runtime's name of it: the container ID, or the container name as nodecm's
 * apply makes it): cpuset.cpus = CPUS and, when MEMS is given, cpuset.mems. This is what
 * the CPU manager's decision becomes (the runtime's UpdateContainerResources).
 */
NCM_API int ncm_cgroup_manager_set_container_cpuset(const ncm_cgroup_manager *m,
                                                    const char *pod_uid, ncm_qos_class qos,
                                                    const char *container_leaf,
                                                    const ncm_cpuset *cpus, const ncm_cpuset *mems,
                                                    ncm_error *err);

#ifdef __cplusplus
}
#endif
#endif
