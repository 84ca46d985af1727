/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU manager's decisions, kubelet-exact: the allocator (kubelet's takeByTopology), the
 * static policy's options, topology hints, and the static and none policies.
 *
 * The allocator works on an ncm_cpu_index, built once per topology; each call then costs a
 * few passes over the free CPUs (see docs/cpu-manager.md for the data structures and for the
 * places where kubelet's Go leaves an order open and nodecm fixes one).
 *
 * Errors that kubelet reports for a request that cannot be met (not enough CPUs, SMT
 * alignment, ...) use code NCM_E_UNSATISFIABLE and kubelet's text verbatim; bad configuration
 * (unknown option, bad value, ...) uses EINVAL with kubelet's text.
 */
#ifndef NODECM_CPUMANAGER_H
#define NODECM_CPUMANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/cpuset.h>
#include <nodecm/cpustate.h>
#include <nodecm/error.h>
#include <nodecm/hint.h>
#include <nodecm/hintdesc.h>
#include <nodecm/kubelet-version.h>
#include <nodecm/pod.h>
#include <nodecm/topology.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kubelet generations: ncm_kubelet_version, include/nodecm/kubelet-version.h. Where the CPU
 * manager's decisions differ between releases is listed in docs/cpu-manager.md. */

/* ------------------------------------------------------------------------------------------
 * Policy options (kubelet's cpuManagerPolicyOptions)
 */

/* Option names, as kubelet spells them. */
#define NCM_CPU_OPT_FULL_PCPUS_ONLY "full-pcpus-only"
#define NCM_CPU_OPT_DISTRIBUTE_ACROSS_NUMA "distribute-cpus-across-numa"
#define NCM_CPU_OPT_ALIGN_BY_SOCKET "align-by-socket"
#define NCM_CPU_OPT_DISTRIBUTE_ACROSS_CORES "distribute-cpus-across-cores"
#define NCM_CPU_OPT_STRICT_RESERVATION "strict-cpu-reservation"
#define NCM_CPU_OPT_PREFER_UNCORE "prefer-align-cpus-by-uncorecache"

/*
 * Parsed options (kubelet's StaticPolicyOptions), and the kubelet release whose allocator
 * runs with them. All false and the newest release by default (a zeroed struct).
 */
typedef struct ncm_cpu_options {
        bool full_pcpus_only;
        bool distribute_cpus_across_numa;
        bool align_by_socket;
        bool distribute_cpus_across_cores;
        bool strict_cpu_reservation;
        bool prefer_align_by_uncore_cache;
        ncm_kubelet_version kubelet_version;
} ncm_cpu_options;

/*
 * Which maturity levels of options are enabled: kubelet's CPUManagerPolicyAlphaOptions and
 * CPUManagerPolicyBetaOptions feature gates. NCM_CPU_GATES_DEFAULT is the newest kubelet's
 * default (alpha off, beta on). Stable options need no gate.
 */
typedef struct ncm_cpu_gates {
        bool alpha_options;
        bool beta_options;
} ncm_cpu_gates;

#define NCM_CPU_GATES_DEFAULT ((ncm_cpu_gates){false, true})

/* One key/value pair of the option map. */
typedef struct ncm_cpu_option {
        const char *key;
        const char *value;
} ncm_cpu_option;

typedef enum ncm_cpu_option_maturity {
        NCM_CPU_OPTION_UNKNOWN = 0,
        NCM_CPU_OPTION_ALPHA,
        NCM_CPU_OPTION_BETA,
        NCM_CPU_OPTION_STABLE,
} ncm_cpu_option_maturity;

/* The maturity of option NAME in the newest kubelet (UNKNOWN for names kubelet refuses). */
NCM_API ncm_cpu_option_maturity ncm_cpu_option_maturity_of(const char *name) NCM_PURE;
/* The same in kubelet release V (options graduate: strict-cpu-reservation is alpha in 1.32,
 * beta in 1.33 and 1.34, GA from 1.35). */
NCM_API ncm_cpu_option_maturity ncm_cpu_option_maturity_in(const char *name,
                                                           ncm_kubelet_version v) NCM_PURE;

/*
 * kubelet's CheckPolicyOptionAvailable: 0, or -EINVAL with `unknown CPU Manager Policy option:
 * "<name>"` / `CPU Manager Policy Alpha-level Options not enabled, but option "<name>"
 * provided` (Beta likewise). The newest kubelet's maturities.
 */
NCM_API int ncm_cpu_option_check_available(const char *name, ncm_cpu_gates gates, ncm_error *err);

/*
 * kubelet's NewStaticPolicyOptions over N pairs. Keys are checked and their values parsed
 * (Go strconv.ParseBool syntax) in ascending byte order of key: Go walks the map in random
 * order, so when several keys are bad kubelet reports an arbitrary one and nodecm the first
 * in sorted order. Then the mutual exclusions, in kubelet's order. A duplicate key is -EINVAL
 * ("duplicate CPU Manager Policy option: "<k>"", a map cannot hold one). *RET is written only
 * on success.
 */
NCM_API int ncm_cpu_options_parse(const ncm_cpu_option *opts, size_t n, ncm_cpu_gates gates,
                                  ncm_cpu_options *ret, ncm_error *err);
/*
 * The same as kubelet release V parses them (each option's maturity in that release decides
 * which gate it needs); *RET's kubelet_version is V.
 */
NCM_API int ncm_cpu_options_parse_version(const ncm_cpu_option *opts, size_t n, ncm_cpu_gates gates,
                                          ncm_kubelet_version v, ncm_cpu_options *ret,
                                          ncm_error *err);

/*
 * kubelet's ValidateStaticPolicyOptions: with align-by-socket, refuse the topology manager's
 * single-numa-node policy (TM_POLICY, may be NULL for "none") and machines with more sockets
 * than NUMA nodes, with kubelet's texts (-EINVAL).
 */
NCM_API int ncm_cpu_options_validate(const ncm_cpu_options *o, const ncm_topo *t,
                                     const char *tm_policy, ncm_error *err);

/*
 * Go's strconv.ParseBool: "1", "t", "T", "TRUE", "true", "True" and their false forms. 0 or
 * -EINVAL (no message: callers word it).
 */
NCM_API int ncm_parse_go_bool(const char *s, bool *ret);

/* ------------------------------------------------------------------------------------------
 * The allocator (kubelet's cpu_assignment.go)
 */

/* The per-topology index. Immutable once built; any number of threads may use it. */
typedef struct ncm_cpu_index ncm_cpu_index;

/*
 * Index T (which must outlive the index). -ENOMEM, or -EINVAL for a topology without CPUs.
 */
NCM_API int ncm_cpu_index_new(const ncm_topo *t, ncm_cpu_index **ret, ncm_error *err);
NCM_API ncm_cpu_index *ncm_cpu_index_free(ncm_cpu_index *ix);
NCM_DEFINE_AUTOPTR(ncm_cpu_index, ncm_cpu_index_free)
NCM_API const ncm_topo *ncm_cpu_index_topo(const ncm_cpu_index *ix) NCM_PURE;

/*
 * kubelet's takeByTopologyNUMAPacked: N CPUs out of AVAILABLE, best-fit by NUMA node / socket
 * (whichever is higher in the hierarchy), then optionally uncore caches, whole cores (skipped
 * with SPREAD), single CPUs. On success RET is overwritten with the CPUs (empty for N <= 0).
 * NCM_E_UNSATISFIABLE with `not enough cpus available to satisfy request: requested=N,
 * available=M` or `failed to allocate cpus`; RET is untouched then.
 *
 * The newest kubelet's rules: every "free" test compares an element's free CPUs with its own
 * size. ncm_cpu_take() with an older kubelet_version reproduces the older rules (machine
 * averages, which on asymmetric machines take CPUs outside AVAILABLE, as those kubelets do).
 */
NCM_API int ncm_cpu_take_packed(const ncm_cpu_index *ix, const ncm_cpuset *available, int n,
                                bool spread, bool prefer_uncore, ncm_cpuset *ret, ncm_error *err);

/*
 * kubelet's takeByTopologyNUMADistributed (KEP-2902) in its newest form (with
 * align-by-socket): spread N CPUs evenly, in groups of GROUP CPUs, over the fewest NUMA nodes
 * that balance the free CPUs best; falls back to the packed algorithm. Errors as above, plus
 * `accounting error, not enough CPUs allocated, remaining: V` / `..., too many CPUs
 * allocated, remaining: V`. Where kubelet would loop forever (a remainder that cannot be
 * placed in whole groups) nodecm skips that candidate, or fails with the accounting error.
 */
NCM_API int ncm_cpu_take_distributed(const ncm_cpu_index *ix, const ncm_cpuset *available, int n,
                                     int group, bool spread, bool align_by_socket, ncm_cpuset *ret,
                                     ncm_error *err);

/*
 * The static policy's takeByTopology: the algorithm and its parameters chosen from O exactly
 * as kubelet's static policy does (distribute-cpus-across-numa -> distributed with group
 * CPUsPerCore under full-pcpus-only, else 1; otherwise packed with the uncore step under
 * prefer-align-cpus-by-uncorecache; distribute-cpus-across-cores -> spread), with the rules of
 * O's kubelet_version. No admission checks. O may be NULL (all options off, newest kubelet).
 */
NCM_API int ncm_cpu_take(const ncm_cpu_index *ix, const ncm_cpu_options *o,
                         const ncm_cpuset *available, int n, ncm_cpuset *ret, ncm_error *err);

/* ------------------------------------------------------------------------------------------
 * Topology hints (kubelet's generateCPUTopologyHints)
 */

/*
 * Append to OUT one hint per NUMA-node mask that can hold REQUEST CPUs, in kubelet's order:
 * every non-empty subset of the NUMA nodes that have CPUs, by size, then lexicographically by
 * ascending node id (kubelet iterates an unsorted id list here, so its order is random; it is
 * the sorted-list order of older kubelets and of kubelet's tests). A mask fits when every
 * REUSABLE CPU lies in it and |REUSABLE| + |AVAILABLE in mask| >= REQUEST. Preferred: the
 * mask has as many nodes as the narrowest mask whose *capacity* holds REQUEST, or, with
 * align-by-socket in O, it spans the fewest sockets such a mask needs. OUT->nil is cleared.
 * REUSABLE may be NULL. -EINVAL when a NUMA id is above 63, -ENOMEM.
 *
 * Cost: O(2^nodes) masks at O(1) each (per-node counts are summed through a table for up
 * to 20 nodes).
 */
NCM_API int ncm_cpu_hints_generate(const ncm_cpu_index *ix, const ncm_cpu_options *o,
                                   const ncm_cpuset *available, const ncm_cpuset *reusable,
                                   int request, ncm_hint_list *out, ncm_error *err);

/*
 * The same hints as a description (include/nodecm/hintdesc.h), without walking the masks:
 * ncm_hint_desc_materialize() of *RET gives exactly what ncm_cpu_hints_generate() appends.
 * No limit on the number of NUMA nodes (ids 0..63). -EINVAL when a NUMA id is above 63,
 * -ENOMEM.
 */
NCM_API int ncm_cpu_hints_describe(const ncm_cpu_index *ix, const ncm_cpu_options *o,
                                   const ncm_cpuset *available, const ncm_cpuset *reusable,
                                   int request, ncm_hint_desc **ret, ncm_error *err);

/* Append HINTS as a JSON array ([{"numa": [0], "preferred": true}, ...]) to B. */
NCM_API void ncm_cpu_hints_format_json(const ncm_hint_list *hints, ncm_buf *b);

/* ------------------------------------------------------------------------------------------
 * Policies (kubelet's policy_static.go and policy_none.go)
 *
 * How the node drives a policy (kubelet's container manager does the same):
 *
 *     ncm_cpu_policy_new(topo, &cfg, &p, &err)       at start-up (NewManager)
 *     ncm_cpu_policy_start(p, state, &err)           once the state is restored (Start)
 *     per pod at admission, for each container (init containers first):
 *         ncm_cpu_policy_hints(p, state, pod, c, &hints, &err)   (or _pod_hints, pod scope)
 *         ... topology manager merges the providers' hints ...
 *         ncm_cpu_policy_allocate(p, state, pod, c, &affinity, &err)
 *     ncm_cpu_policy_remove_container(p, state, uid, name, &err)  when a container goes
 *     pools: ncm_cpu_policy_allocatable / _available / shared = ncm_cpu_state_default(state)
 *
 * The state (include/nodecm/cpustate.h) belongs to the caller, who persists it; a policy
 * mutates it only inside start, allocate and remove_container, with kubelet's write order
 * (the default set first, then the container's entry). Calls on one policy and state must be
 * serialised by the caller, as kubelet's manager does under its mutex.
 *
 * Error codes: NCM_E_ADMISSION is kubelet's SMTAlignmentError (admission reason
 * NCM_CPU_REASON_SMT_ALIGNMENT); NCM_E_UNSATISFIABLE an allocation kubelet fails (its reason is
 * UnexpectedAdmissionError); NCM_E_INVALID_STATE a state that fails Start's validation;
 * EINVAL bad configuration. Messages are kubelet's texts.
 *
 * Pod-level resource managers (KEP-5526, gates PodLevelResources + PodLevelResourceManagers)
 * are not implemented: the newest kubelet's defaults (PodLevelResources on,
 * PodLevelResourceManagers off) are built in, so a pod with pod-level cpu/memory/hugepages
 * resources gets no exclusive CPUs and no CPU hints, as in kubelet.
 */

/* The admission failure reason of NCM_E_ADMISSION errors. */
#define NCM_CPU_REASON_SMT_ALIGNMENT "SMTAlignmentError"

typedef struct ncm_cpu_policy ncm_cpu_policy;

/* The policy's part of the kubelet configuration. */
typedef struct ncm_cpu_policy_config {
        const char *policy;            /* cpuManagerPolicy: "none" (NULL) or "static" */
        const ncm_cpu_option *options; /* cpuManagerPolicyOptions */
        size_t noptions;
        ncm_cpu_gates gates;             /* NCM_CPU_GATES_DEFAULT for the newest kubelet */
        const ncm_cpuset *reserved_cpus; /* reservedSystemCPUs; NULL or empty: none */
        /*
         * kube-reserved + system-reserved cpu in millicores, when either names cpu
         * (kubelet's nodeAllocatableReservation["cpu"]). With reserved_cpus non-empty kubelet
         * replaces both by |reserved_cpus| CPUs, and so does nodecm.
         */
        bool reserved_millicpu_set;
        int64_t reserved_millicpu;
        const char *topology_manager_policy; /* for align-by-socket's check; NULL: "none" */
        ncm_kubelet_version kubelet_version; /* the release to reproduce; {0, 0}: newest */
} ncm_cpu_policy_config;

/*
 * kubelet's NewManager, policy part: "none" -> ncm_cpu_none_policy_new() (errors prefixed
 * `new none policy error: `); "static" -> needs the reservation (`[cpumanager] unable to
 * determine reserved CPU resources for static policy`, `[cpumanager] the static policy
 * requires systemreserved.cpu + kubereserved.cpu to be greater than zero`), reserves
 * ceil(millicpu / 1000) CPUs and calls ncm_cpu_static_policy_new() (errors prefixed `new
 * static policy error: `); anything else -> `unknown policy: "<name>"`. T must outlive the
 * policy. -EINVAL for configuration errors, -ENOMEM.
 */
NCM_API int ncm_cpu_policy_new(const ncm_topo *t, const ncm_cpu_policy_config *cfg,
                               ncm_cpu_policy **ret, ncm_error *err);

/*
 * kubelet's NewStaticPolicy: parse and validate the options (CFG's options, gates and
 * topology manager policy; its reservation fields are ignored), then reserve RESERVED when
 * not empty, else NUM_RESERVED CPUs chosen by the allocator with these options. Errors:
 * the options' texts, `[cpumanager] unable to reserve the required amount of CPUs (size of
 * <set> did not equal <n>)`, `[cpumanager] unable to build the reserved physical CPUs from the
 * reserved set: unknown CPU ID: <cpu>` (the lowest unknown one).
 */
NCM_API int ncm_cpu_static_policy_new(const ncm_topo *t, int num_reserved,
                                      const ncm_cpuset *reserved, const ncm_cpu_policy_config *cfg,
                                      ncm_cpu_policy **ret, ncm_error *err);

/* kubelet's NewNonePolicy: any option is refused (`None policy: received unsupported
 * options=map[k:v ...]`, keys sorted as Go's fmt prints maps). */
NCM_API int ncm_cpu_none_policy_new(const ncm_cpu_option *options, size_t noptions,
                                    ncm_cpu_policy **ret, ncm_error *err);

NCM_API ncm_cpu_policy *ncm_cpu_policy_free(ncm_cpu_policy *p);
NCM_DEFINE_AUTOPTR(ncm_cpu_policy, ncm_cpu_policy_free)

/* "static" or "none" (the name checkpoints record). */
NCM_API const char *ncm_cpu_policy_name(const ncm_cpu_policy *p) NCM_PURE;
/* The parsed options (all false for none). */
NCM_API const ncm_cpu_options *ncm_cpu_policy_options(const ncm_cpu_policy *p) NCM_PURE;
/* The reserved CPUs (empty for none). Owned by the policy. */
NCM_API const ncm_cpuset *ncm_cpu_policy_reserved(const ncm_cpu_policy *p) NCM_PURE;
/* The allocator index of the policy's topology (NULL for none). */
NCM_API const ncm_cpu_index *ncm_cpu_policy_index(const ncm_cpu_policy *p) NCM_PURE;

/*
 * Start: validate the restored state (static: cpustate.h's validateState, with the reserved
 * CPUs and strict-cpu-reservation; a fresh state gets its default set). none: nothing.
 * 0, or -NCM_E_INVALID_STATE with kubelet's text, or the state hook's error.
 */
NCM_API int ncm_cpu_policy_start(ncm_cpu_policy *p, ncm_cpu_state *s, ncm_error *err);

/*
 * Allocate: exclusive CPUs for container C of POD when the pod is Guaranteed and C requests a
 * whole number of CPUs; otherwise nothing (shared pool). AFFINITY is the topology manager's
 * hint for the container (NULL or any = "no NUMA preference"). Idempotent: a container with
 * CPUs keeps them. CPUs are taken inside the hint's NUMA nodes first (their sockets with
 * align-by-socket), the rest spill over; CPUs of the pod's finished init containers are
 * reused. 0 or the errors listed above; on error the state is unchanged (except what the
 * hook failed to persist).
 */
NCM_API int ncm_cpu_policy_allocate(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod,
                                    const ncm_container *c, const ncm_hint *affinity,
                                    ncm_error *err);

/*
 * --- CPUs near the container's devices (nodecm's deviceLocalCPUs: prefer; beyond the kubelet,
 * docs/cpu-manager.md "CPUs near the devices") ---
 *
 * One device of the container and the CPUs the kernel calls local to it (its PCI function's
 * local_cpulist; lib/node finds them).
 */
typedef struct ncm_cpu_near {
        const char *device;      /* for explanations: "example.com/nic=vf0" */
        const ncm_cpuset *local; /* its local CPUs */
} ncm_cpu_near;

/*
 * Allocate as ncm_cpu_policy_allocate(), preferring CPUs near NEAR[0..N): within the CPUs the
 * topology manager allows (the hint's NUMA nodes, their sockets with align-by-socket; every
 * free CPU without a hint) the allocator takes first from the devices' local CPUs, then from
 * the CPUs that share an uncore (L3) cache with them (the socket where the machine reports no
 * L3), then from the rest of the allowed CPUs, then from anywhere as the kubelet spills over;
 * each step is the same takeByTopology with the same options (whole cores first, the options'
 * algorithm). Under full-pcpus-only a step takes only the free whole cores inside it, so every
 * core is taken whole. N == 0 is ncm_cpu_policy_allocate() exactly. The none policy ignores
 * NEAR. Errors as ncm_cpu_policy_allocate().
 */
NCM_API int ncm_cpu_policy_allocate_near(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod,
                                         const ncm_container *c, const ncm_hint *affinity,
                                         const ncm_cpu_near *near, size_t n, ncm_error *err);

/*
 * The CPUs NEAR[0..N) draw from: *RET_LOCAL the union of their local CPUs, *RET_UNCORE the
 * CPUs sharing an uncore cache with one of those (local ones included); both within T. What
 * ncm_cpu_policy_allocate_near() prefers, for explanations.
 */
NCM_API void ncm_cpu_near_sets(const ncm_topo *t, const ncm_cpu_near *near, size_t n,
                               ncm_cpuset *ret_local, ncm_cpuset *ret_uncore);

/*
 * RemoveContainer: give (POD_UID, NAME)'s CPUs back to the shared pool, except those another
 * container of the pod still holds (an app container may own its init container's CPUs).
 * 0 (also when there was no entry) or the state hook's error.
 */
NCM_API int ncm_cpu_policy_remove_container(ncm_cpu_policy *p, ncm_cpu_state *s,
                                            const char *pod_uid, const char *name, ncm_error *err);

/*
 * GetTopologyHints for container C: OUT->nil for "no preference" (not exclusive, or the none
 * policy); an empty list when C already holds a number of CPUs other than it requests; else
 * the generated hints (from C's own CPUs when it has them). OUT must be empty on entry.
 */
NCM_API int ncm_cpu_policy_hints(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                                 const ncm_container *c, ncm_hint_list *out, ncm_error *err);

/* GetPodTopologyHints (topology manager pod scope), same conventions. */
NCM_API int ncm_cpu_policy_pod_hints(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                                     ncm_hint_list *out, ncm_error *err);

/*
 * The same two as descriptions, for the topology manager's lazy merge: *RET = NULL for "no
 * preference", a description of an empty list for "cannot be satisfied", else the
 * description of what ncm_cpu_policy_hints() / _pod_hints() would generate (the caller frees
 * it). 0 or -errno as those.
 */
NCM_API int ncm_cpu_policy_hints_describe(ncm_cpu_policy *p, const ncm_cpu_state *s,
                                          const ncm_pod *pod, const ncm_container *c,
                                          ncm_hint_desc **ret, ncm_error *err);
NCM_API int ncm_cpu_policy_pod_hints_describe(ncm_cpu_policy *p, const ncm_cpu_state *s,
                                              const ncm_pod *pod, ncm_hint_desc **ret,
                                              ncm_error *err);

/*
 * cpusToReuse: the CPUs of a pod's finished init containers that its later containers may
 * take (static policy; kubelet keeps them for one pod at a time, the last one allocated for).
 * Allocate changes them as a side effect, so a caller that undoes an admission (the node's
 * transactions) saves them before and restores them after. The none policy has none: its
 * saved value is empty and restoring it does nothing.
 */
typedef struct ncm_cpu_policy_reuse ncm_cpu_policy_reuse;

/*
 * The CPUs P keeps for POD_UID's later containers (kubelet's cpusToReuse[POD_UID]), owned by
 * the policy and valid until its next allocate or restore; NULL when P keeps none for that pod
 * (another pod, or the none policy). An empty set is an entry without CPUs.
 */
NCM_API const ncm_cpuset *ncm_cpu_policy_reuse_get(const ncm_cpu_policy *p, const char *pod_uid);

/*
 * Save P's cpusToReuse into *RET (the caller frees it with ncm_cpu_policy_reuse_free()).
 * 0, or -ENOMEM (*RET untouched).
 */
NCM_API int ncm_cpu_policy_reuse_save(const ncm_cpu_policy *p, ncm_cpu_policy_reuse **ret,
                                      ncm_error *err);

/*
 * Make P's cpusToReuse exactly what SAVED holds (taken from P, or from a policy of the same
 * kind), dropping whatever P keeps now. The state is not touched. 0, or -ENOMEM with P
 * unchanged.
 */
NCM_API int ncm_cpu_policy_reuse_restore(ncm_cpu_policy *p, const ncm_cpu_policy_reuse *saved,
                                         ncm_error *err);

/* Free a saved cpusToReuse (NULL is fine). Returns NULL. */
NCM_API ncm_cpu_policy_reuse *ncm_cpu_policy_reuse_free(ncm_cpu_policy_reuse *r);
NCM_DEFINE_AUTOPTR(ncm_cpu_policy_reuse, ncm_cpu_policy_reuse_free)

/*
 * Allocation trace, for explanations (nodecm simulate --explain). When a policy has a trace,
 * each takeByTopology it runs reports its start (TAKE_PACKED / TAKE_DISTRIBUTED: ID = the
 * number of CPUs requested, CPUS = the CPUs it chooses from) and then every element it takes,
 * in order (ID = the element's id; CPUS = the CPUs taken, as the topology lists them). The
 * distributed algorithm's per-NUMA-node takes appear as nested packed takes. Without a trace
 * (the default) the allocator does no extra work.
 */
typedef enum ncm_cpu_trace_level {
        NCM_CPU_TRACE_TAKE_PACKED,      /* takeByTopologyNUMAPacked starts */
        NCM_CPU_TRACE_TAKE_DISTRIBUTED, /* takeByTopologyNUMADistributed starts */
        NCM_CPU_TRACE_NUMA,             /* a whole NUMA node */
        NCM_CPU_TRACE_SOCKET,           /* a whole socket */
        NCM_CPU_TRACE_UNCORE,           /* a whole uncore (L3) cache */
        NCM_CPU_TRACE_UNCORE_PARTIAL,   /* the free CPUs of an uncore cache's first cores */
        NCM_CPU_TRACE_CORE,             /* a whole core */
        NCM_CPU_TRACE_CPU,              /* a single CPU */
} ncm_cpu_trace_level;

typedef struct ncm_cpu_trace {
        void (*fn)(void *data, ncm_cpu_trace_level level, int64_t id, const int *cpus, size_t n);
        void *data;
} ncm_cpu_trace;

/* Set (TRACE copied) or clear (NULL, or TRACE->fn NULL) the policy's allocation trace. */
NCM_API void ncm_cpu_policy_set_trace(ncm_cpu_policy *p, const ncm_cpu_trace *trace);

/* GetAllocatableCPUs: all CPUs minus the reserved ones (static), nothing (none). */
NCM_API void ncm_cpu_policy_allocatable(const ncm_cpu_policy *p, ncm_cpuset *out);
/* GetAvailableCPUs: the default set minus the reserved CPUs (static), nothing (none). */
NCM_API void ncm_cpu_policy_available(const ncm_cpu_policy *p, const ncm_cpu_state *s,
                                      ncm_cpuset *out);
/* GetAvailablePhysicalCPUs: the default set minus every core holding a reserved CPU. */
NCM_API void ncm_cpu_policy_available_physical(const ncm_cpu_policy *p, const ncm_cpu_state *s,
                                               ncm_cpuset *out);

/* ------------------------------------------------------------------------------------------
 * In-place resize of exclusive CPUs (KEP-5554, gate InPlacePodVerticalScalingExclusiveCPUs;
 * docs/cpu-manager.md "Resize")
 *
 * A container's promised CPUs (ncm_cpu_state_promised) are those of its first admission: an
 * upsize keeps every CPU it holds and adds free ones (its NUMA affinity only grows), a
 * downsize keeps the promise and gives back others, and nothing goes below the promise.
 */

/* KEP-5554's error types (the admission result's reason of a refused resize's allocation). */
#define NCM_CPU_REASON_PROHIBITED "prohibitedCPUAllocationError"
#define NCM_CPU_REASON_INCONSISTENT "inconsistentCPUAllocationError"
#define NCM_CPU_REASON_PROMISED_MISSING "getPromisedCPUSetError"

/*
 * takeByTopology with must-keep CPUs: N CPUs holding all of MUST_KEEP (may be NULL), the
 * others chosen by the allocator O configures (as ncm_cpu_take()) first out of REUSABLE (may be
 * NULL: CPUs to prefer, such as a container's own when it shrinks), then out of AVAILABLE (may
 * be NULL). The packed algorithm runs as the kubelet's accumulator would had it taken MUST_KEEP
 * first; the distributed one spreads what it adds over MUST_KEEP's NUMA nodes when they have
 * room. Errors: NCM_E_UNSATISFIABLE with `requested number of CPUs ( N ) are less than number of
 * retained CPUs ( K )`, or the allocator's. RET is untouched on error.
 */
NCM_API int ncm_cpu_take_keep(const ncm_cpu_index *ix, const ncm_cpu_options *o,
                              const ncm_cpuset *available, const ncm_cpuset *must_keep,
                              const ncm_cpuset *reusable, int n, ncm_cpuset *ret, ncm_error *err);

/*
 * Whether container C of POD (its new resources; BEFORE_TEXT the cpu request it was admitted
 * with, for messages) can be resized by the policy: 1 when its exclusive CPUs must change, 0
 * when nothing of the CPU manager's changes (shared before and after, the same count, the
 * none policy, pod-level resources), or -NCM_E_ADMISSION with *RET_TYPE one of the reasons
 * above and KEP-5554's text: a container moving between the shared pool and exclusive CPUs
 * (inconsistent), one without a promise (getPromisedCPUSet), one below its promise
 * (prohibited).
 */
NCM_API int ncm_cpu_resize_check(const ncm_cpu_policy *p, const ncm_cpu_state *s,
                                 const ncm_pod *pod, const ncm_container *c,
                                 const char *before_text, const char **ret_type, ncm_error *err);

/*
 * Allocate for a resize of container C of POD (its new resources) with the topology manager's
 * AFFINITY: after ncm_cpu_resize_check(), an upsize takes the missing CPUs inside the hint
 * first (ncm_cpu_take_keep with the current CPUs kept), a downsize keeps the promise and the
 * hint's part of the current CPUs; the default set takes or gives the difference (CPUs a
 * sibling still holds stay out of it). full-pcpus-only: SMTAlignmentError as for an admission
 * (the container's own CPUs count as available). With isolatedCPUs an upsize takes only free
 * CPUs of the container's pool (ncm_cpu_policy_isolation_resize_pool), NCM_E_UNSATISFIABLE
 * naming the pool when it holds too few. 0, or -errno with *RET_TYPE set for a typed refusal;
 * on error the state is unchanged.
 */
NCM_API int ncm_cpu_policy_resize(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod,
                                  const ncm_container *c, const ncm_hint *affinity,
                                  const char *before_text, const char **ret_type, ncm_error *err);

/*
 * ncm_cpu_policy_resize() preferring CPUs near NEAR[0..N) (deviceLocalCPUs: prefer) as
 * ncm_cpu_policy_allocate_near() does, for the CPUs the resize chooses: within the hint's CPUs
 * (every CPU it may take without a hint) an upsize adds first the devices' local CPUs, then
 * those sharing their uncore caches; a downsize keeps, beyond the promise, its CPUs near them
 * first. What is kept is kept either way. N == 0 is ncm_cpu_policy_resize() exactly.
 */
NCM_API int ncm_cpu_policy_resize_near(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod,
                                       const ncm_container *c, const ncm_hint *affinity,
                                       const ncm_cpu_near *near, size_t n, const char *before_text,
                                       const char **ret_type, ncm_error *err);

/*
 * The hints of a resize of container C (NULL: the whole pod, pod scope): no preference when
 * nothing is exclusive or the policy will refuse the resize (its Allocate says why); else the
 * masks that hold every CPU the container keeps and enough CPUs it may take (upsize: its CPUs
 * and the free ones, so the affinity only grows; downsize: its promise and its other CPUs),
 * ordered and preferred as ncm_cpu_hints_generate(). As a list or a description.
 */
NCM_API int ncm_cpu_policy_resize_hints(ncm_cpu_policy *p, const ncm_cpu_state *s,
                                        const ncm_pod *pod, const ncm_container *c,
                                        ncm_hint_list *out, ncm_error *err);
NCM_API int ncm_cpu_policy_resize_hints_describe(ncm_cpu_policy *p, const ncm_cpu_state *s,
                                                 const ncm_pod *pod, const ncm_container *c,
                                                 ncm_hint_desc **ret, ncm_error *err);

/* guaranteedCPUs: exclusive CPUs container C would get (0: shared pool). */
NCM_API int ncm_cpu_guaranteed_cpus(const ncm_pod *pod, const ncm_container *c) NCM_PURE;
/* podGuaranteedCPUs: the pod's total for pod-scope hints (init containers and sidecars
 * accounted as kubelet does). */
NCM_API int ncm_cpu_pod_guaranteed_cpus(const ncm_pod *pod) NCM_PURE;

/* ------------------------------------------------------------------------------------------
 * Isolated CPUs (nodecm's isolatedCPUs, docs/isolation.md; the kubelet has none of this)
 *
 * What the static policy does with the machine's isolated CPUs (ncm_topo_isolated_cpus):
 *   IGNORE          the kubelet's behaviour: they are CPUs like any other (the default);
 *   EXCLUDE         handed to nobody: out of the allocatable and available CPUs and the hints;
 *   EXCLUSIVE_ONLY  only exclusive containers get them: a pod annotated nodecm.io/isolated-cpus
 *                   "prefer" takes them when enough are free, "require" only them (else a
 *                   refusal); other pods take non-isolated CPUs when enough are free.
 * The policy's state stays the kubelet's (isolated CPUs remain in the default set, so the
 * checkpoint is the kubelet's); keeping them out of the shared pool is the node's part
 * (ncm_node_shared_pool). With either mode, "require" on a container that gets no exclusive
 * CPUs, or under EXCLUDE, is refused.
 */
typedef enum ncm_cpu_isolation {
        NCM_CPU_ISOLATION_IGNORE = 0,
        NCM_CPU_ISOLATION_EXCLUDE,
        NCM_CPU_ISOLATION_EXCLUSIVE_ONLY,
        NCM_CPU_ISOLATION_N_MODES
} ncm_cpu_isolation;

/* "ignore", "exclude", "exclusive-only" (the isolatedCPUs values); NULL when unknown. */
NCM_API const char *ncm_cpu_isolation_name(ncm_cpu_isolation m) NCM_PURE;
/* The mode named NAME, or -1. */
NCM_API int ncm_cpu_isolation_from_name(const char *name) NCM_PURE;

/*
 * Give P the isolation MODE over ISOLATED (copied; NULL: none), before it allocates anything.
 * -ENOMEM, P unchanged.
 */
NCM_API int ncm_cpu_policy_set_isolation(ncm_cpu_policy *p, ncm_cpu_isolation mode,
                                         const ncm_cpuset *isolated, ncm_error *err);
/*
 * SET holds the free CPUs a container of POD could take N of (REUSABLE, may be NULL, beside
 * them): restrict it to those P's isolation lets it take, as allocation and hints do. Returns
 * which tier it kept, for explanations: 0 nothing changed (IGNORE), 1 no isolated CPU
 * (EXCLUDE, or EXCLUSIVE_ONLY's non-isolated tier), 2 isolated CPUs only ("require", or
 * "prefer"'s tier), 3 all (EXCLUSIVE_ONLY's preferred tier holds too few).
 */
NCM_API int ncm_cpu_policy_isolation_restrict(const ncm_cpu_policy *p, const ncm_pod *pod, int n,
                                              const ncm_cpuset *reusable, ncm_cpuset *set);
/*
 * SET holds the free CPUs an in-place resize of a container of POD now holding HAVE could grow
 * into: restrict it to the container's pool (EXCLUDE: no isolated CPU; EXCLUSIVE_ONLY: the
 * isolated ones when it holds only isolated CPUs or POD says "require", the others when it
 * holds none, all when it holds both). Returns the tier as ncm_cpu_policy_isolation_restrict().
 */
NCM_API int ncm_cpu_policy_isolation_resize_pool(const ncm_cpu_policy *p, const ncm_pod *pod,
                                                 const ncm_cpuset *have, ncm_cpuset *set);
/* P's isolation mode; *ISOLATED (may be NULL) receives its isolated CPUs, owned by P (NULL
 * under IGNORE). */
NCM_API ncm_cpu_isolation ncm_cpu_policy_isolation(const ncm_cpu_policy *p,
                                                   const ncm_cpuset **isolated);

#ifdef __cplusplus
}
#endif
#endif
