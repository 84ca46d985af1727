/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The topology manager, kubelet-exact: policy options, the NUMA information the merge needs,
 * the policies (none, best-effort, restricted, single-numa-node) and their hint merge, the
 * scopes (container, pod) with admission, and the per-container affinity store.
 *
 * Three merges are available and return the identical hint for every input:
 *  - NCM_TM_MERGE_REFERENCE walks the cross product of all resources' hint lists exactly as
 *    kubelet's HintMerger does (cost: the product of the list lengths);
 *  - NCM_TM_MERGE_FAST (the default) computes the same answer from the structure of the
 *    problem: preferred candidates come only from masks every list offers as preferred, and
 *    the non-preferred candidates are the set of achievable ANDs, computed with subset
 *    transforms;
 *  - NCM_TM_MERGE_LAZY takes described lists (include/nodecm/hintdesc.h, as the CPU and device
 *    managers describe their hints) and searches the masks in kubelet's order instead of
 *    reading 2^N hints: microseconds at 64 NUMA nodes.
 * docs/topology-manager.md has the arguments and the costs.
 *
 * Where kubelet's Go leaves an order open (map iteration over a provider's resources, over the
 * option map), nodecm walks keys in ascending byte order. For the merge result this order is
 * immaterial (see the docs: the merge's outcome does not depend on list order), for option
 * errors it decides which of several bad keys is reported.
 *
 * Error texts are kubelet's, verbatim. Bad configuration is -EINVAL.
 */
#ifndef NODECM_TOPOLOGYMANAGER_H
#define NODECM_TOPOLOGYMANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/bitmask.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/hint.h>
#include <nodecm/hintdesc.h>
#include <nodecm/pod.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * Names
 */

#define NCM_TM_POLICY_NONE "none"
#define NCM_TM_POLICY_BEST_EFFORT "best-effort"
#define NCM_TM_POLICY_RESTRICTED "restricted"
#define NCM_TM_POLICY_SINGLE_NUMA_NODE "single-numa-node"

#define NCM_TM_SCOPE_CONTAINER "container"
#define NCM_TM_SCOPE_POD "pod"
#define NCM_TM_SCOPE_NONE "none" /* what the none policy uses, whatever was configured */

/* Admission reasons and messages (kubelet's lifecycle.PodAdmitResult). */
#define NCM_TM_REASON_TOPOLOGY_AFFINITY "TopologyAffinityError"
#define NCM_TM_MESSAGE_TOPOLOGY_AFFINITY "Resources cannot be allocated with Topology locality"
#define NCM_TM_REASON_UNEXPECTED "UnexpectedAdmissionError"

/* ------------------------------------------------------------------------------------------
 * Policy options (kubelet's topologyManagerPolicyOptions)
 */

#define NCM_TM_OPT_PREFER_CLOSEST_NUMA "prefer-closest-numa-nodes"
#define NCM_TM_OPT_MAX_ALLOWABLE_NUMA "max-allowable-numa-nodes"

/* kubelet's defaultMaxAllowableNUMANodes, also the smallest value the option accepts. */
#define NCM_TM_DEFAULT_MAX_NUMA_NODES 8

/* Parsed options (kubelet's PolicyOptions). */
typedef struct ncm_tm_options {
        bool prefer_closest_numa;     /* use Closest instead of Narrowest (not single-numa-node) */
        int max_allowable_numa_nodes; /* NCM_TM_DEFAULT_MAX_NUMA_NODES unless set */
} ncm_tm_options;

/* The defaults: prefer-closest off, max-allowable 8. */
#define NCM_TM_OPTIONS_DEFAULT ((ncm_tm_options){false, NCM_TM_DEFAULT_MAX_NUMA_NODES})

/*
 * The TopologyManagerPolicyAlphaOptions / TopologyManagerPolicyBetaOptions feature gates.
 * NCM_TM_GATES_DEFAULT is kubelet's default (alpha off, beta on). Both options of the newest
 * kubelet are stable (GA), so the gates only matter for names that later become alpha/beta.
 */
typedef struct ncm_tm_gates {
        bool alpha_options;
        bool beta_options;
} ncm_tm_gates;

#define NCM_TM_GATES_DEFAULT ((ncm_tm_gates){false, true})

/* One key/value pair of the option map. */
typedef struct ncm_tm_option {
        const char *key;
        const char *value;
} ncm_tm_option;

/*
 * kubelet's CheckPolicyOptionAvailable: 0, or -EINVAL with `unknown Topology Manager Policy
 * option: "<name>"`, `topology manager policy alpha-level options not enabled, but option
 * "<name>" provided` (beta likewise).
 */
NCM_API int ncm_tm_option_check_available(const char *name, ncm_tm_gates gates, ncm_error *err);

/*
 * kubelet's NewPolicyOptions over N pairs, keys in ascending byte order (Go: random map
 * order, so with several bad keys kubelet reports an arbitrary one). Errors (-EINVAL):
 * availability as above; `bad value for option "prefer-closest-numa-nodes":
 * strconv.ParseBool: parsing "x": invalid syntax`; `unable to convert policy option to integer
 * "max-allowable-numa-nodes": strconv.Atoi: parsing "x": invalid syntax` (or `value out of
 * range`); `the minimum value of "max-allowable-numa-nodes" should not be less than 8`; a
 * duplicate key (a Go map cannot hold one): `duplicate Topology Manager Policy option: "<k>"`.
 * *RET is written only on success; unset options keep NCM_TM_OPTIONS_DEFAULT.
 */
NCM_API int ncm_tm_options_parse(const ncm_tm_option *opts, size_t n, ncm_tm_gates gates,
                                 ncm_tm_options *ret, ncm_error *err);

/* ------------------------------------------------------------------------------------------
 * One hint provider's answer: resource name -> hint list (kubelet's map[string][]TopologyHint)
 */

typedef struct ncm_tm_resource_hints {
        char *resource;      /* malloc'd */
        ncm_hint_list list;  /* list.nil: "no preference"; n == 0 && !nil: "cannot be satisfied" */
        ncm_hint_desc *desc; /* owned; when set, the list is this description (LIST unused) */
} ncm_tm_resource_hints;

/*
 * A provider's hints. n == 0 means the provider has no preference at all (kubelet treats a
 * nil and an empty map alike). Entries keep insertion order; the merge sorts them by name.
 */
typedef struct ncm_tm_hints {
        size_t n;
        size_t cap;
        ncm_tm_resource_hints *res;
} ncm_tm_hints;

#define NCM_TM_HINTS_INIT                                                                          \
        {                                                                                          \
                0, 0, NULL                                                                         \
        }

/*
 * Add RESOURCE with a copy of HINTS[0..N). NIL true adds a nil list (N must be 0). Returns 0,
 * -ENOMEM, or -EEXIST (with a message) when RESOURCE is already there. On success *RET_LIST
 * (may be NULL) points at the stored list, so callers can keep appending to it.
 */
NCM_API int ncm_tm_hints_add(ncm_tm_hints *h, const char *resource, const ncm_hint *hints, size_t n,
                             bool nil, ncm_hint_list **ret_list, ncm_error *err);

/*
 * Add RESOURCE with a described list (include/nodecm/hintdesc.h, sealed). DESC is taken over
 * in every case (freed on error). -ENOMEM, -EEXIST as above.
 */
NCM_API int ncm_tm_hints_add_desc(ncm_tm_hints *h, const char *resource, ncm_hint_desc *desc,
                                  ncm_error *err);

/* The list of RESOURCE, or NULL (an empty list for a described one: see its desc). */
NCM_API const ncm_hint_list *ncm_tm_hints_get(const ncm_tm_hints *h, const char *resource);

/* Release everything; H becomes empty ("no preference"). */
NCM_API void ncm_tm_hints_done(ncm_tm_hints *h);

/* ------------------------------------------------------------------------------------------
 * Policies and the merge
 */

typedef struct ncm_tm_policy ncm_tm_policy;

typedef enum ncm_tm_merge_mode {
        NCM_TM_MERGE_FAST = 0,  /* same result, no cross product (docs/topology-manager.md) */
        NCM_TM_MERGE_REFERENCE, /* kubelet's cross product, step by step */
        NCM_TM_MERGE_LAZY,      /* same result, described lists searched, never listed */
} ncm_tm_merge_mode;

/*
 * Build policy NAME for a machine whose NUMA nodes are NUMA_IDS[0..N_NUMA) (each 0..63,
 * distinct; cadvisor order). DISTANCES, when not NULL, is the N_NUMA x N_NUMA row-major matrix
 * of NUMA distances in the order of NUMA_IDS (row i: distances from NUMA_IDS[i]); kubelet
 * indexes each node's sysfs distance list by node id, which is the same thing for the usual
 * ids 0..n-1 (see the docs for other ids). OPTS may be NULL (defaults).
 *
 * Checks in kubelet's NewManager order, each -EINVAL with kubelet's text: distances missing
 * while prefer-closest-numa-nodes is on (`cannot discover NUMA topology: error getting NUMA
 * distances from cadvisor`), more nodes than max-allowable-numa-nodes (`unsupported on machines
 * with more than 8 NUMA Nodes`), unknown name (`unknown policy: "<name>"`). "none" checks
 * nothing. Ids out of range: `bit number must be in range 0-63`; a repeated id is -EINVAL.
 * Returns 0 and *RET, or -errno.
 */
NCM_API int ncm_tm_policy_new(const char *name, const ncm_tm_options *opts, const int *numa_ids,
                              size_t n_numa, const uint64_t *distances, ncm_tm_policy **ret,
                              ncm_error *err);

/* Destructor; accepts NULL, returns NULL. */
NCM_API ncm_tm_policy *ncm_tm_policy_free(ncm_tm_policy *p);
NCM_DEFINE_AUTOPTR(ncm_tm_policy, ncm_tm_policy_free)

/* "none", "best-effort", "restricted" or "single-numa-node". */
NCM_API const char *ncm_tm_policy_name(const ncm_tm_policy *p) NCM_PURE;
/* The policy is none (hints are not asked for). */
NCM_API bool ncm_tm_policy_is_none(const ncm_tm_policy *p) NCM_PURE;

/* All the machine's NUMA nodes (kubelet's DefaultAffinityMask). */
NCM_API ncm_bitmask ncm_tm_policy_default_affinity(const ncm_tm_policy *p) NCM_PURE;

/* kubelet's IsAlignmentGuaranteed: true for single-numa-node only (metrics). */
NCM_API bool ncm_tm_policy_alignment_guaranteed(const ncm_tm_policy *p) NCM_PURE;

/* The policy's canAdmitPodResult for a merged hint. */
NCM_API bool ncm_tm_policy_can_admit(const ncm_tm_policy *p, const ncm_hint *hint) NCM_PURE;

/*
 * kubelet's Policy.Merge over PROVIDERS[0..N) (registration order): normalise each provider's
 * map (no resources -> {any, preferred}; nil list -> {any, preferred}; empty list ->
 * {any, not preferred}; resources in ascending name order), for single-numa-node keep only
 * preferred hints that are "any" or one node, merge, and apply the policy (single-numa-node
 * turns a merged mask equal to all nodes into "any"). *RET_HINT gets the hint, *RET_ADMIT
 * whether the policy admits it. "none" gives {any, not preferred} and admits.
 *
 * Described lists (ncm_tm_hints_add_desc) are merged as they are by NCM_TM_MERGE_LAZY; the
 * other modes first list them (-E2BIG with a message past 2^22 hints in one list).
 * Returns 0, -ENOMEM, -E2BIG.
 */
NCM_API int ncm_tm_policy_merge(const ncm_tm_policy *p, const ncm_tm_hints *providers, size_t n,
                                ncm_tm_merge_mode mode, ncm_hint *ret_hint, bool *ret_admit,
                                ncm_error *err);

/* ------------------------------------------------------------------------------------------
 * Admission results (kubelet's admission.GetPodAdmitResult)
 */

typedef struct ncm_tm_admit_result {
        bool admit;
        char reason[64];                 /* "" when admitted */
        char message[NCM_ERROR_MSG_MAX]; /* "" when admitted */
} ncm_tm_admit_result;

/*
 * Fill R as kubelet does for an error: with TYPE (an error that carries a type, such as
 * "SMTAlignmentError" or "TopologyAffinityError") reason = TYPE and message = MESSAGE;
 * without (NULL) reason = "UnexpectedAdmissionError" and message = "Allocate failed due to
 * <MESSAGE>, which is unexpected". MESSAGE NULL means admitted.
 */
NCM_API void ncm_tm_admit_result_set(ncm_tm_admit_result *r, const char *type, const char *message);

/* ------------------------------------------------------------------------------------------
 * The manager: scopes, admission, the affinity store
 *
 * The node composes the managers: it builds one ncm_tm, registers each hint provider (kubelet's
 * order: device manager, CPU manager, memory manager) with ncm_tm_add_provider(), calls
 * ncm_tm_admit() for each pod, ncm_tm_add_container() when a container is created and
 * ncm_tm_remove_container() when it goes. The topology manager never knows what a provider
 * is; providers never call the topology manager (the chosen affinity is passed to allocate).
 * An ncm_tm is not thread-safe (kubelet takes a mutex around the store): the node serialises
 * calls. Policies are immutable after construction and may be shared between threads.
 */

/*
 * One provider call of an admission. kubelet passes the pod and the container; nodecm also
 * passes the caller's transaction, so that a provider reaches the admission it works for (to
 * record an explanation, to know what to undo) through the call itself, never through state
 * kept on the side. More fields may be added at the end.
 */
/*
 * What an admission is for (the kubelet's newest code passes an operation through Admit and
 * the hint calls): a pod being added, or the in-place resize of one it holds (KEP-5554), for
 * which the providers answer with the hints and allocations of a resize.
 */
typedef enum ncm_tm_op {
        NCM_TM_OP_ADMIT = 0,
        NCM_TM_OP_RESIZE,
} ncm_tm_op;

typedef struct ncm_tm_call {
        void *txn;                      /* the TXN given to ncm_tm_admit() (may be NULL) */
        const ncm_pod *pod;             /* the pod being admitted */
        const ncm_container *container; /* NULL: the whole pod (get_pod_hints, pod scope) */
        ncm_tm_op op;                   /* what the admission is for */
} ncm_tm_call;

/*
 * A hint provider (kubelet's HintProvider), called with the DATA given at registration.
 *
 * get_container_hints: kubelet's GetTopologyHints(pod, container) for CALL->container. *RET is
 *   empty on entry; add one entry per resource the container asks for (ncm_tm_hints_add: a nil
 *   list for "no preference", an empty list for "cannot be satisfied"), or leave it empty when
 *   the provider has no preference at all. Return 0, or -errno to abort the admission (a C-only
 *   failure such as -ENOMEM; kubelet's providers cannot fail here).
 * get_pod_hints: kubelet's GetPodTopologyHints(pod), the same for the whole pod (pod scope;
 *   CALL->container is NULL). NULL behaves as "no preference".
 * allocate: kubelet's Allocate(pod, container), called after the merge with AFFINITY, the hint
 *   stored for this container (the zero hint {any, not preferred} under the none policy).
 *   Return 0, or -errno with ERR set. For an error kubelet reports with its own type (such as
 *   "SMTAlignmentError") set *RET_TYPE to that static string; leave it NULL otherwise. What an
 *   error means is the topology manager's call, not the provider's (see ncm_tm_admit()). NULL:
 *   nothing to allocate.
 *
 * Members may be added at the end (a provider written with designated initializers keeps
 * them NULL).
 */
typedef struct ncm_tm_provider_ops {
        const char *name;
        int (*get_container_hints)(void *data, const ncm_tm_call *call, ncm_tm_hints *ret,
                                   ncm_error *err);
        int (*get_pod_hints)(void *data, const ncm_tm_call *call, ncm_tm_hints *ret,
                             ncm_error *err);
        int (*allocate)(void *data, const ncm_tm_call *call, const ncm_hint *affinity,
                        const char **ret_type, ncm_error *err);
} ncm_tm_provider_ops;

/*
 * Merge trace, for explanations (nodecm simulate --explain), in the shape of the CPU policy's
 * allocation trace (ncm_cpu_policy_set_trace). The topology manager reports what it did, in
 * order, for every container (or for the pod, pod scope):
 *
 *   HINTS      each provider's answer as it gave it (PROVIDER: its registration index);
 *   LIST       each list the merge works on, in the merge's order (providers in registration
 *              order, each provider's resources in ascending name order), after kubelet's
 *              normalisation and, for single-numa-node, its filter; a merge that does not hold
 *              a list explicitly reports LIST_HINTS NULL;
 *   CANDIDATE  each preferred merged hint the merge weighed (a mask that every list offers as
 *              preferred, or "all nodes" when every list has a preferred "any"), fewest nodes
 *              first, then by their lowest ids; with described lists the first
 *              NCM_TM_TRACE_CANDIDATES_MAX of them, the last one flagged MORE when others exist;
 *   MERGED     the result, whether the policy admits it, and how hints of the same width were
 *              compared (CLOSEST: by average distance, AVG_DISTANCE the result's; else by ids).
 *
 * A merge under the none policy reports nothing. Events and everything they point to live
 * only during the call. New kinds may be added; consumers ignore kinds they do not know.
 */
typedef enum ncm_tm_trace_kind {
        NCM_TM_TRACE_HINTS,
        NCM_TM_TRACE_LIST,
        NCM_TM_TRACE_CANDIDATE,
        NCM_TM_TRACE_MERGED,
} ncm_tm_trace_kind;

typedef enum ncm_tm_list_kind {
        NCM_TM_LIST_HINTS,         /* the provider's hints for the resource */
        NCM_TM_LIST_NO_PREFERENCE, /* a nil list, or a provider without resources */
        NCM_TM_LIST_UNSATISFIABLE, /* an empty list: the resource cannot be satisfied */
} ncm_tm_list_kind;

typedef struct ncm_tm_trace_event {
        ncm_tm_trace_kind kind;
        const ncm_tm_call *call;    /* the container or pod merged for; NULL outside admission */
        size_t provider;            /* HINTS, LIST: the provider's registration index */
        const ncm_tm_hints *hints;  /* HINTS: the provider's answer */
        const char *resource;       /* LIST: NULL for a provider without resources */
        ncm_tm_list_kind list;      /* LIST */
        const ncm_hint *list_hints; /* LIST: the hints the merge uses; NULL when implicit */
        size_t n_list_hints;        /* LIST */
        ncm_hint hint;              /* CANDIDATE, MERGED */
        bool admit;                 /* MERGED: the policy admits HINT */
        bool closest;               /* MERGED: prefer-closest-numa-nodes compared the widths */
        double avg_distance;        /* MERGED: HINT's average NUMA distance when CLOSEST */
        /* LIST: the description the merge reads instead of a list (NCM_TM_MERGE_LAZY), else NULL */
        const ncm_hint_desc *list_desc;
        /* CANDIDATE: more candidates follow that are not reported (at most
         * NCM_TM_TRACE_CANDIDATES_MAX are, when lists are described) */
        bool more;
} ncm_tm_trace_event;

/* How many CANDIDATE events a merge of described lists reports at most. */
#define NCM_TM_TRACE_CANDIDATES_MAX 64

typedef struct ncm_tm_trace {
        void (*fn)(void *data, const ncm_tm_trace_event *ev);
        void *data;
} ncm_tm_trace;

/* The manager's configuration (KubeletConfiguration topologyManager* fields). */
typedef struct ncm_tm_config {
        const char *policy;           /* topologyManagerPolicy; NULL: "none" */
        const char *scope;            /* topologyManagerScope; NULL: "container" */
        const ncm_tm_option *options; /* topologyManagerPolicyOptions */
        size_t n_options;
        ncm_tm_gates gates;  /* TopologyManagerPolicy{Alpha,Beta}Options */
        const int *numa_ids; /* every NUMA node of the machine, cadvisor order */
        size_t n_numa;
        const uint64_t *distances;    /* n_numa x n_numa in numa_ids order, or NULL */
        ncm_tm_merge_mode merge_mode; /* NCM_TM_MERGE_FAST unless kubelet's walk is wanted */
} ncm_tm_config;

/* Counters kubelet exports as metrics (topology_manager_* and the numa_node boundary). */
typedef struct ncm_tm_metrics {
        uint64_t admission_requests_total; /* topology_manager_admission_requests_total */
        uint64_t admission_errors_total;   /* topology_manager_admission_errors_total */
        /* container_aligned_compute_resources_count{scope, boundary="numa_node"} */
        uint64_t aligned_container; /* scope="container" */
        uint64_t aligned_pod;       /* scope="pod" */
        /* container_aligned_compute_resources_failure_count{scope, boundary="numa_node"} */
        uint64_t failure_container;
        uint64_t failure_pod;
} ncm_tm_metrics;

typedef struct ncm_tm ncm_tm;

/*
 * kubelet's NewManager. "none" short-circuits (nothing else is looked at, not even the scope).
 * Otherwise, in kubelet's order: options (ncm_tm_options_parse), NUMA information and the
 * node limit, the policy name (ncm_tm_policy_new's texts), the scope (`unknown scope:
 * "<s>"`). -EINVAL with kubelet's text, -ENOMEM.
 */
NCM_API int ncm_tm_new(const ncm_tm_config *cfg, ncm_tm **ret, ncm_error *err);

/* Destructor; accepts NULL, returns NULL. Providers' DATA is not touched. */
NCM_API ncm_tm *ncm_tm_free(ncm_tm *tm);
NCM_DEFINE_AUTOPTR(ncm_tm, ncm_tm_free)

/* "container", "pod", or "none" (the none policy). */
NCM_API const char *ncm_tm_scope_name(const ncm_tm *tm) NCM_PURE;
NCM_API const ncm_tm_policy *ncm_tm_get_policy(const ncm_tm *tm) NCM_PURE;
NCM_API const ncm_tm_metrics *ncm_tm_get_metrics(const ncm_tm *tm) NCM_PURE;

/* Switch between the fast merge and kubelet's walk (same results). */
NCM_API void ncm_tm_set_merge_mode(ncm_tm *tm, ncm_tm_merge_mode mode);

/* Set (TRACE copied) or clear (NULL, or TRACE->fn NULL) the manager's merge trace. */
NCM_API void ncm_tm_set_trace(ncm_tm *tm, const ncm_tm_trace *trace);

/*
 * kubelet's AddHintProvider: append a provider (OPS must outlive TM; DATA is the provider's).
 * Order of registration is the order of hints in the merge and of allocate calls. -ENOMEM.
 */
NCM_API int ncm_tm_add_provider(ncm_tm *tm, const ncm_tm_provider_ops *ops, void *data);

/*
 * kubelet's Admit (the pod admit handler) for POD, within the caller's transaction TXN (handed
 * to every provider call as ncm_tm_call.txn; may be NULL):
 *  - container scope: for each init container then app container, in spec order: gather
 *    every provider's get_container_hints, merge; if the policy refuses, stop with
 *    TopologyAffinityError; else store the hint for (pod uid, container) and call every
 *    provider's allocate in registration order (the first error stops the admission);
 *  - pod scope: gather get_pod_hints once, merge once, then store the same hint for every
 *    container and allocate container by container as above;
 *  - none: allocate every container with the zero hint, no merge.
 * The topology manager alone decides what an allocate error means: NCM_E_UNSATISFIABLE,
 * NCM_E_ADMISSION and EINVAL are the kubelet's admission errors (the pod is refused with the
 * provider's message, as ncm_tm_admit_result_set() with its type); any other code (ENOMEM, an
 * I/O error) is a failure of nodecm, not a decision, and is returned.
 * Containers admitted before a refusal keep their stored hints and allocations (as kubelet).
 * *RET receives the outcome. Returns 0 when a decision was made, admitted or not; -errno when
 * a provider's get_*_hints or allocate failed (ERR says which) or memory ran out.
 */
NCM_API int ncm_tm_admit(ncm_tm *tm, const ncm_pod *pod, void *txn, ncm_tm_admit_result *ret,
                         ncm_error *err);

/*
 * ncm_tm_admit() for operation OP: every provider call carries it (ncm_tm_call.op), so that a
 * resize (NCM_TM_OP_RESIZE, POD with its new resources) gets the providers' resize hints,
 * merged and judged by the policy as an admission's are, and their resize allocations.
 * NCM_TM_OP_ADMIT is ncm_tm_admit().
 */
NCM_API int ncm_tm_admit_op(ncm_tm *tm, const ncm_pod *pod, ncm_tm_op op, void *txn,
                            ncm_tm_admit_result *ret, ncm_error *err);

/*
 * kubelet's GetAffinity: the hint stored for (POD_UID, CONTAINER), or the zero hint
 * {any, not preferred} when there is none.
 */
NCM_API ncm_hint ncm_tm_get_affinity(const ncm_tm *tm, const char *pod_uid,
                                     const char *container) NCM_PURE;

/*
 * kubelet's AddContainer: remember that runtime container CONTAINER_ID is (POD_UID,
 * CONTAINER), so that its removal can find the hint. Re-adding an id replaces its mapping.
 * -ENOMEM.
 */
NCM_API int ncm_tm_add_container(ncm_tm *tm, const char *pod_uid, const char *container,
                                 const char *container_id);

/*
 * kubelet's RemoveContainer: forget CONTAINER_ID; when no other id maps to its (pod uid,
 * container) any more, drop that container's hint (the pod's entry goes with its last
 * container). An unknown id is not an error. Returns 0.
 */
NCM_API int ncm_tm_remove_container(ncm_tm *tm, const char *container_id);

/*
 * Not in kubelet (which only removes by container id): drop every hint and container id of
 * POD_UID, for callers that remove a whole pod at once. Returns the number of hints dropped.
 */
NCM_API int ncm_tm_remove_pod(ncm_tm *tm, const char *pod_uid);

/*
 * Not in kubelet (which never undoes an admission): a pod's stored hints, saved and restored,
 * for a caller that puts a refused re-admission of a known pod back as it was. Admission
 * stores a hint per container it gets to, so afterwards the pod may have new hints (a
 * container the earlier admission did not have) or changed ones. The container-id map is
 * neither saved nor restored: admission does not change it.
 */
typedef struct ncm_tm_pod_hints ncm_tm_pod_hints;

/*
 * Save every hint stored for POD_UID (possibly none) into *RET, which the caller frees with
 * ncm_tm_pod_hints_free(). 0, or -ENOMEM (*RET untouched).
 */
NCM_API int ncm_tm_pod_hints_save(const ncm_tm *tm, const char *pod_uid, ncm_tm_pod_hints **ret,
                                  ncm_error *err);

/*
 * Make the hints stored for the pod SAVED was taken from exactly the saved ones: hints of its
 * containers that SAVED does not have are dropped, the others set to their saved values.
 * Other pods' hints are untouched. 0, or -ENOMEM with TM unchanged.
 */
NCM_API int ncm_tm_pod_hints_restore(ncm_tm *tm, const ncm_tm_pod_hints *saved, ncm_error *err);

/* Free saved hints (NULL is fine). Returns NULL. */
NCM_API ncm_tm_pod_hints *ncm_tm_pod_hints_free(ncm_tm_pod_hints *h);
NCM_DEFINE_AUTOPTR(ncm_tm_pod_hints, ncm_tm_pod_hints_free)

/* ------------------------------------------------------------------------------------------
 * The `nodecm merge` document (DESIGN.md): a policy, a machine's NUMA nodes and distances, and
 * the providers' hints, read from a file, merged, and the result written back.
 * ------------------------------------------------------------------------------------------ */

typedef struct ncm_tm_request ncm_tm_request;

/*
 * Read a merge document from PATH (JSON or YAML; "-" for standard input) and build its policy
 * with GATES:
 *   {"policy": "...", "options": {"k": "v"}, "numa": [ids],
 *    "distances": {"<id>": [d to numa[0], d to numa[1], ...]},
 *    "providers": [null | {"<resource>": null | [{"numa": null | [ids], "preferred": b}]}]}
 * policy and numa are required; unknown fields are errors. 0, or -EINVAL (bad input of any
 * kind, the message prefixed with PATH and naming the field: `f.json: numa[2]: bit number must
 * be in range 0-63`), -ENOMEM. *RET is written on success only.
 */
NCM_API int ncm_tm_request_load(const char *path, ncm_tm_gates gates, ncm_tm_request **ret,
                                ncm_error *err);

/* Free a request (NULL is fine). Returns NULL. */
NCM_API ncm_tm_request *ncm_tm_request_free(ncm_tm_request *r);
NCM_DEFINE_AUTOPTR(ncm_tm_request, ncm_tm_request_free)

/* ncm_tm_policy_merge() of the request's policy over its providers. */
NCM_API int ncm_tm_request_merge(const ncm_tm_request *r, ncm_tm_merge_mode mode,
                                 ncm_hint *ret_hint, bool *ret_admit, ncm_error *err);

/* Append {"numa": [0, 1] | null, "preferred": b, "admit": b} (no newline) to B. */
NCM_API void ncm_tm_result_format_json(const ncm_hint *hint, bool admit, ncm_buf *b);

#ifdef __cplusplus
}
#endif
#endif
