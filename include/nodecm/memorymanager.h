/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's memory manager (pkg/kubelet/cm/memorymanager): the None and Static policies,
 * their state (the machine's memory per NUMA node and each container's memory blocks) and its
 * checkpoint, memory_manager_state, byte for byte per kubelet generation.
 *
 * The Static policy pins a Guaranteed container's memory and each of its hugepage sizes to NUMA
 * nodes. It is a topology-manager hint provider: for every NUMA mask whose nodes hold the
 * request it offers a hint for each requested type (the same list for all), preferred when the
 * mask has as few nodes as the smallest mask whose allocatable memory could hold the request.
 * Its one rule of its own, the NUMA group rule: a node that serves a single-node allocation
 * cannot join a multi-node group, and a node of a group cannot serve any other mask. Allocate
 * takes the topology manager's hint (or, when it has no NUMA affinity, the best of its own),
 * widens it when the hint's nodes cannot hold the request, refuses a mask that breaks the group
 * rule, and consumes each type node by node in the mask's order. Burstable and BestEffort pods
 * are not pinned (their calls do nothing), nor pods with pod-level resources.
 *
 * Everything here is the kubelet's behaviour and wording ("[memorymanager] ..." errors), with
 * two nodecm additions, each off unless asked for: a bounded tolerance of per-node memory drift
 * at start (KEP-6232, gate MemoryManagerDriftTolerance) and explanations of a refusal
 * (ncm_mem_explain_mask). docs/memory-manager.md is the user's guide.
 *
 * Objects are not thread-safe; the node serialises calls. The library prints nothing.
 */
#ifndef NODECM_MEMORYMANAGER_H
#define NODECM_MEMORYMANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/bitmask.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/hint.h>
#include <nodecm/hintdesc.h>
#include <nodecm/kubelet-version.h>
#include <nodecm/pod.h>
#include <nodecm/topology.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The checkpoint's file name in the kubelet's root directory. */
#define NCM_MEM_CHECKPOINT_NAME "memory_manager_state"

/* ------------------------------------------------------------------------------------------
 * State (pkg/kubelet/cm/memorymanager/state)
 *
 * Every "nil" flag keeps Go's distinction between a nil map/slice/pointer and an empty one:
 * the checkpoint's checksum renders them differently ("<nil>" against "map[]" or "[]"), and a
 * file read back must be written back with the same bytes.
 */

/* MemoryTable: one memory type of one NUMA node, bytes. */
typedef struct ncm_mem_table {
        uint64_t total; /* TotalMemSize */
        uint64_t system_reserved;
        uint64_t allocatable;
        uint64_t reserved;
        uint64_t free;
} ncm_mem_table;

/* One entry of a node's MemoryMap: "memory", "hugepages-2Mi", ... */
typedef struct ncm_mem_type {
        char *name;
        bool nil; /* a nil *MemoryTable */
        ncm_mem_table t;
} ncm_mem_type;

/* NUMANodeState of node ID. */
typedef struct ncm_mem_node {
        int id;
        bool nil;            /* a nil *NUMANodeState */
        int64_t assignments; /* NumberOfAssignments */
        ncm_mem_type *types; /* sorted by name (bytewise) */
        size_t ntypes;
        bool types_nil;
        int *cells; /* the node's group, as stored (order kept) */
        size_t ncells;
        bool cells_nil;
} ncm_mem_node;

/* Block: SIZE bytes of memory type TYPE on the NUMA nodes NUMA (as stored, order kept). */
typedef struct ncm_mem_block {
        int *numa;
        size_t nnuma;
        bool numa_nil;
        char *type;
        uint64_t size;
} ncm_mem_block;

typedef struct ncm_mem_container {
        char *name;
        ncm_mem_block *blocks;
        size_t n;
        bool nil;
        /* nodecm's, not the kubelet's: the bytes of "memory" the container got at its first
         * admission, which an in-place resize never goes below (InPlacePodVerticalScaling-
         * ExclusiveMemory; ncm_mem_state_set_promised) */
        bool has_promised;
        uint64_t promised;
} ncm_mem_container;

/* A pod's containers (sorted by name) with their blocks. */
typedef struct ncm_mem_pod {
        char *uid;
        ncm_mem_container *c;
        size_t n;
        bool nil;
} ncm_mem_pod;

/* podEntries (PodLevelResourceManagers): a pod's own blocks. Kept as read, never decided on. */
typedef struct ncm_mem_pod_entry {
        char *uid;
        ncm_mem_block *blocks;
        size_t n;
        bool nil;
} ncm_mem_pod_entry;

/* The memory manager's state. Nodes sorted by id, pods and pod entries by UID (bytewise). */
typedef struct ncm_mem_state {
        char *policy; /* policyName ("Static", "None") */
        ncm_mem_node *nodes;
        size_t nnodes;
        bool nodes_nil;
        ncm_mem_pod *pods;
        size_t npods;
        bool pods_nil;
        ncm_mem_pod_entry *pod_entries;
        size_t npod_entries;
        bool pod_entries_nil;
} ncm_mem_state;

/* An empty state of POLICY (no machine state yet). NULL for out-of-memory. */
NCM_API ncm_mem_state *ncm_mem_state_new(const char *policy);
NCM_API ncm_mem_state *ncm_mem_state_free(ncm_mem_state *s);
NCM_DEFINE_AUTOPTR(ncm_mem_state, ncm_mem_state_free)
/* A deep copy; NULL for out-of-memory. */
NCM_API ncm_mem_state *ncm_mem_state_dup(const ncm_mem_state *s);
/* Whether both hold the same values (nil flags included). */
NCM_API bool ncm_mem_state_equal(const ncm_mem_state *a, const ncm_mem_state *b) NCM_PURE;

/*
 * A mark: the part of S that an admission of pod UID changes (the machine state and UID's
 * entry), saved, so that a refused admission puts it back without copying every pod's
 * blocks. Restoring takes the saved values over (the mark then only needs freeing). -ENOMEM.
 */
typedef struct ncm_mem_state_mark ncm_mem_state_mark;
NCM_API int ncm_mem_state_mark_pod(const ncm_mem_state *s, const char *uid,
                                   ncm_mem_state_mark **ret);
/* Whether S holds what M saved (nothing to put back). */
NCM_API bool ncm_mem_state_mark_unchanged(const ncm_mem_state *s, const ncm_mem_state_mark *m);
NCM_API void ncm_mem_state_mark_restore(ncm_mem_state *s, ncm_mem_state_mark *m);
NCM_API ncm_mem_state_mark *ncm_mem_state_mark_free(ncm_mem_state_mark *m);

/* Node ID's state, or NULL. */
NCM_API ncm_mem_node *ncm_mem_state_node(const ncm_mem_state *s, int id) NCM_PURE;
/* Memory type NAME of node N, or NULL (also for a nil table). */
NCM_API ncm_mem_table *ncm_mem_node_table(const ncm_mem_node *n, const char *name) NCM_PURE;
/* GetMemoryBlocks: the container's blocks, or NULL when it has none (kubelet's nil). */
NCM_API const ncm_mem_container *ncm_mem_state_container(const ncm_mem_state *s,
                                                         const char *pod_uid,
                                                         const char *container) NCM_PURE;
/* The NUMA nodes the container's blocks lie on (GetMemoryNUMANodes); 0 when it has none. */
NCM_API ncm_bitmask ncm_mem_state_container_numa(const ncm_mem_state *s, const char *pod_uid,
                                                 const char *container) NCM_PURE;
/* Keep BYTES as the promise of the container, which must have blocks (-ENOENT). */
NCM_API int ncm_mem_state_set_promised(ncm_mem_state *s, const char *pod_uid, const char *container,
                                       uint64_t bytes);
/* Whether any container has a promise. */
NCM_API bool ncm_mem_state_has_promised(const ncm_mem_state *s) NCM_PURE;

/* Delete: forget the container's blocks (and the pod when it was its last). 1 when found. */
NCM_API int ncm_mem_state_delete(ncm_mem_state *s, const char *pod_uid, const char *container);
/* Forget every block of POD_UID (and its pod entry). Returns how many containers went. */
NCM_API int ncm_mem_state_delete_pod(ncm_mem_state *s, const char *pod_uid);

/* ------------------------------------------------------------------------------------------
 * Configuration: reservedMemory and --reserved-memory
 */

/* One reservedMemory limit: Q (BYTES when it is an integer that fits) of TYPE on node NUMA. */
typedef struct ncm_mem_reservation {
        int numa;
        char *type;
        ncm_quantity q;
        uint64_t bytes;
        bool fits; /* q.AsInt64() succeeds */
} ncm_mem_reservation;

/* A list of reservations, in configuration order. */
typedef struct ncm_mem_reservations {
        ncm_mem_reservation *r;
        size_t n;
} ncm_mem_reservations;

NCM_API void ncm_mem_reservations_done(ncm_mem_reservations *l);

/*
 * Parse the kubelet's --reserved-memory value ("0:memory=1Gi,hugepages-1Gi=2Gi;1:memory=2Gi")
 * and append to *L, with ReservedMemoryVar's checks and texts ("the reserved memory has
 * incorrect format, expected numaNodeID:type=quantity[,type=quantity...], got ..."). An empty
 * value clears L. -EINVAL.
 */
NCM_API int ncm_mem_reservations_parse_flag(const char *s, ncm_mem_reservations *l, ncm_error *err);

/*
 * The kubelet's validateReservedMemoryConfiguration (apis/config/validation): each error as the
 * kubelet words it ("invalid configuration: ..."), the first one returned. -EINVAL.
 */
NCM_API int ncm_mem_reservations_validate(const ncm_mem_reservations *l, ncm_error *err);

/* Append a reservation (TYPE copied). -ENOMEM. */
NCM_API int ncm_mem_reservations_add(ncm_mem_reservations *l, int numa, const char *type,
                                     const ncm_quantity *q);

/* ------------------------------------------------------------------------------------------
 * The policy
 */

typedef struct ncm_mem_policy ncm_mem_policy;

typedef struct ncm_mem_policy_config {
        const char *policy; /* memoryManagerPolicy: "None" (default when NULL) or "Static" */
        const ncm_mem_reservations *reserved;
        /*
         * The node allocatable reservation (GetNodeAllocatableReservation: system-reserved +
         * kube-reserved + the hard eviction threshold, per resource), which reservedMemory
         * must add up to for memory and each hugepage size (validateReservedMemory). NULL:
         * not checked (the kubelet's NewPolicyStatic alone, as its unit tests build it).
         */
        const ncm_resource_list *node_allocatable;
        /* KEP-6232, nodecm's opt-in: tolerate this many bytes of per-node memory drift at start
         * (0: the kubelet's exact comparison). */
        uint64_t max_drift;
        /* PodLevelResourceManagers: podEntries of a V2 checkpoint are kept on migration. */
        bool pod_level_resource_managers;
} ncm_mem_policy_config;

/*
 * NewManager: the policy for machine T (its NUMA nodes and their memory). Static: the
 * reservation validated against the machine and NODE_ALLOCATABLE ("the reserved memory
 * configuration references a NUMA node %d that does not exist on this machine", "the total
 * amount %q of type %q is not equal to the value %q determined by Node Allocatable feature"),
 * then "[memorymanager] you should specify the system reserved memory" when none is reserved.
 * An unknown name: `unknown policy: "X"`. -EINVAL, -ENOMEM.
 */
NCM_API int ncm_mem_policy_new(const ncm_topo *t, const ncm_mem_policy_config *c,
                               ncm_mem_policy **ret, ncm_error *err);
NCM_API ncm_mem_policy *ncm_mem_policy_free(ncm_mem_policy *p);
NCM_DEFINE_AUTOPTR(ncm_mem_policy, ncm_mem_policy_free)

/* "None" or "Static" (the policy names the checkpoint records). */
NCM_API const char *ncm_mem_policy_name(const ncm_mem_policy *p) NCM_PURE;
NCM_API bool ncm_mem_policy_is_static(const ncm_mem_policy *p) NCM_PURE;

/*
 * The machine state a fresh Static policy starts from (getDefaultMachineState): per node and
 * type, total, the reservation and allocatable = total - reserved (memory also less the node's
 * hugepages). Into S's nodes (replacing them). -ENOMEM.
 */
NCM_API int ncm_mem_policy_default_machine(const ncm_mem_policy *p, ncm_mem_state *s);

/*
 * Start: validateState. An empty machine state becomes the default one (an error when there are
 * assignments: "[memorymanager] machine state can not be empty when it has memory
 * assignments"); else the assignments are replayed on the default state and the result must
 * equal the stored one ("[memorymanager] the expected machine state is different from the
 * real one", or the pod/container texts for an assignment on a node or type that does not
 * exist). With max_drift, a difference within the bound (KEP-6232: same nodes, groups,
 * assignment counts, reservations and hugepages; memory total and allocatable within the bound
 * per node; every assignment still fits) is accepted and S takes the machine's values: then
 * *RET_DRIFTED (may be NULL) is set. -NCM_E_INVALID_STATE, -ENOMEM. None: nothing to check.
 */
NCM_API int ncm_mem_policy_start(ncm_mem_policy *p, ncm_mem_state *s, bool *ret_drifted,
                                 ncm_error *err);

/*
 * nodecm's repair (`nodecm checkpoint rewrite --fit`): the machine state S would have had the
 * kubelet started on this machine with this reservation and admitted the same containers: the
 * default machine state with every assignment replayed on it. Refused, naming the container,
 * when an assignment uses a node or a memory type the machine does not have, or no longer fits
 * on its nodes (-NCM_E_INVALID_STATE). S is changed only on success. Static only.
 */
NCM_API int ncm_mem_policy_fit(const ncm_mem_policy *p, ncm_mem_state *s, ncm_error *err);

/* What a request asks for: bytes per memory type (sorted by name). */
typedef struct ncm_mem_request {
        size_t n;
        char *types[16];
        uint64_t bytes[16];
} ncm_mem_request;

/*
 * getRequestedResources: CONTAINER's requests of memory and hugepages-* (all of them when
 * CONTAINER is NULL: getPodRequestedResources, init containers' peaks against the long-running
 * sum, sidecars counted as long-running). -EINVAL "[memorymanager] failed to represent quantity
 * as int64", -E2BIG past 16 types.
 */
NCM_API int ncm_mem_request_of(const ncm_pod *pod, const ncm_container *container,
                               ncm_mem_request *ret, ncm_error *err);
NCM_API void ncm_mem_request_done(ncm_mem_request *r);

/* One memory type's hints (all types of a fresh calculation share one list). */
typedef struct ncm_mem_type_hints {
        const char *type;    /* points into the request */
        ncm_hint_list list;  /* explicit, in the kubelet's order */
        ncm_hint_desc *desc; /* or described (then LIST is unused) */
} ncm_mem_type_hints;

typedef struct ncm_mem_hints {
        bool nil; /* no map at all: no preference (not Guaranteed, regenerate failed, ...) */
        ncm_mem_request req;
        size_t n; /* entries (0 with !nil: the kubelet's empty map, also "no preference") */
        ncm_mem_type_hints *t;
} ncm_mem_hints;

NCM_API void ncm_mem_hints_done(ncm_mem_hints *h);

/*
 * GetTopologyHints (CONTAINER) or GetPodTopologyHints (CONTAINER NULL) for POD against S. The
 * lists are explicit unless they have more than MAX_HINTS hints (0: nodecm's default, 32);
 * then, when the masks form the kind of list a description holds (one memory type: the
 * unused nodes' subsets whose free memory holds the request, plus extras: used nodes and
 * groups that can still serve it, masks kept thanks to reusable init-container memory), they
 * are described; otherwise listed up to 2^20 hints, -E2BIG past that. -ENOMEM.
 */
NCM_API int ncm_mem_policy_hints(ncm_mem_policy *p, const ncm_mem_state *s, const ncm_pod *pod,
                                 const ncm_container *container, size_t max_hints,
                                 ncm_mem_hints *ret, ncm_error *err);

/*
 * Allocate CONTAINER of POD with the topology manager's AFFINITY (its stored hint; the zero
 * hint {any, not preferred} without one). Idempotent: a container with blocks keeps them.
 * The kubelet's refusals, -NCM_E_ADMISSION with their text: "[memorymanager] failed to get the
 * default NUMA affinity, no NUMA nodes with enough memory is available", "[memorymanager]
 * failed to find the default preferred hint", "[memorymanager] failed to find NUMA nodes to
 * extend the current topology hint", "[memorymanager] failed to find the extended preferred
 * hint", "[memorymanager] preferred hint violates NUMA node allocation". *RET_PINNED (may be
 * NULL): whether the call counted as a pinning request (a Guaranteed container). -ENOMEM.
 */
NCM_API int ncm_mem_policy_allocate(ncm_mem_policy *p, ncm_mem_state *s, const ncm_pod *pod,
                                    const ncm_container *container, const ncm_hint *affinity,
                                    bool *ret_pinned, ncm_error *err);

/*
 * In-place resize of CONTAINER of POD (its new resources), KEP-5554's rules for memory blocks
 * (gate InPlacePodVerticalScalingExclusiveMemory): the container's "memory" block takes its new
 * size on the NUMA nodes it spans (its affinity does not move: a group spanning more nodes
 * would change what every other container's hints may use), an upsize out of their free
 * memory, a downsize never below the promise; then the machine state is what the kubelet's
 * start-up replay of every assignment gives (ncm_mem_policy_fit), so that it validates after a
 * restart. 0 when nothing is pinned or nothing changes; -NCM_E_ADMISSION with the reason in
 * ERR (and *RET_TYPE) ("[memorymanager] ... NUMA node(s) 0 have N bytes of memory free, M more are
 * needed", "prohibitedMemoryAllocation Error: ...", "getPromisedMemory Error: ..."); -ENOMEM. S is
 * unchanged on error.
 */
NCM_API int ncm_mem_policy_resize(ncm_mem_policy *p, ncm_mem_state *s, const ncm_pod *pod,
                                  const ncm_container *container, const char **ret_type,
                                  ncm_error *err);

/* The types of the refusals above (*RET_TYPE; NULL for the others, which the topology manager
 * reports as unexpected, as it does the memory manager's admission errors). */
#define NCM_MEM_REASON_PROHIBITED "prohibitedMemoryAllocationError"
#define NCM_MEM_REASON_PROMISED_MISSING "getPromisedMemoryError"

/* RemoveContainer: release the container's blocks node by node. 1 when it had blocks. */
NCM_API int ncm_mem_policy_remove(ncm_mem_policy *p, ncm_mem_state *s, const char *pod_uid,
                                  const char *container);

/* Forget what the policy remembers of POD_UID's init containers (their reusable memory). */
NCM_API void ncm_mem_policy_forget_pod(ncm_mem_policy *p, const char *pod_uid);

/*
 * GetAllocatableMemory: one block per node and type with allocatable memory, {node}, type,
 * allocatable; nodes ascending, types by name (the kubelet iterates Go maps; nodecm fixes this
 * order). Into *RET / *N (free with ncm_mem_blocks_free). -ENOMEM.
 */
NCM_API int ncm_mem_policy_allocatable(const ncm_mem_policy *p, const ncm_mem_state *s,
                                       ncm_mem_block **ret, size_t *n);
NCM_API void ncm_mem_blocks_free(ncm_mem_block *b, size_t n);

/*
 * Why MASK cannot serve a request under the group rule (for --explain): a sentence naming the
 * node and the group that rule keeps it in, appended to B; false when the rule does not refuse
 * MASK.
 */
NCM_API bool ncm_mem_explain_mask(const ncm_mem_state *s, ncm_bitmask mask, ncm_buf *b);

/*
 * KEP-6232's derived drift bound: the span of the running kernel image in /proc/iomem TEXT
 * (LEN bytes), from the lowest start to the highest end of its "Kernel code", "Kernel data" and
 * "Kernel bss" lines. -ENOENT when there are none or all read as zero (a reader without
 * CAP_SYS_ADMIN sees zeroed addresses). The bound is that span plus NCM_MEM_DRIFT_GRACE.
 */
NCM_API int ncm_mem_kernel_image_span(const char *text, size_t len, uint64_t *ret);
#define NCM_MEM_DRIFT_GRACE ((uint64_t)64 << 20)

/* ------------------------------------------------------------------------------------------
 * memory_manager_state
 */

/* The layouts, per kubelet generation. */
typedef enum ncm_mem_checkpoint_version {
        NCM_MEM_CHECKPOINT_V1 = 1, /* <= 1.35: policyName, machineState, entries, checksum */
        NCM_MEM_CHECKPOINT_V2 = 2, /* 1.36: V1 + podEntries, checksum over both */
        NCM_MEM_CHECKPOINT_V3 = 3, /* 1.37: V1 (legacy checksum) + data + dataChecksum */
} ncm_mem_checkpoint_version;

/* The layout a kubelet release writes ({0, 0}: the newest). */
NCM_API ncm_mem_checkpoint_version ncm_mem_checkpoint_version_of(ncm_kubelet_version v) NCM_PURE;

/* A decoded file: the state it restores, and what verification found. */
typedef struct ncm_mem_checkpoint_info {
        ncm_mem_checkpoint_version version; /* the layout the state came from */
        uint64_t checksum;                  /* the file's checksum */
        uint64_t data_checksum;             /* V3: the file's dataChecksum */
        bool verified;                      /* the checksum that decided matched (or was 0) */
        uint32_t legacy_sum;                /* the V1-part checksum nodecm computes */
        uint32_t v2_sum;                    /* ... with podEntries (V2 rendering) */
        uint32_t data_sum;                  /* V3: FNV-1a of the data string */
        bool has_pod_entries;
} ncm_mem_checkpoint_info;

/*
 * Read memory_manager_state TEXT (NAME for messages) as the kubelet of generation V does:
 * 1.37 tries the dual layout, then V2, then V1 (a file with data or dataChecksum fails as V3:
 * "could not load v3 checkpoint: ..."); 1.36 tries V2 then V1; older kubelets V1. Errors with
 * the kubelet's words: Go's JSON errors, "checkpoint is corrupted" (-NCM_E_CHECKSUM), then the
 * policy check when POLICY is not NULL: "[memorymanager] configured policy %q differs from state
 * checkpoint policy %q" (-NCM_E_INVALID_STATE). POD_LEVEL keeps V2 podEntries (the gate).
 * *RET gets the state; *INFO (may be NULL) what was found.
 */
NCM_API int ncm_mem_checkpoint_parse(const char *text, size_t len, const char *name,
                                     ncm_kubelet_version v, const char *policy, bool pod_level,
                                     ncm_mem_state **ret, ncm_mem_checkpoint_info *info,
                                     ncm_error *err);

/*
 * Decode TEXT without verifying anything (show, rewrite --fix-checksum): the data section when
 * the file has one, else the top-level fields with podEntries (without, as V1, when those do
 * not decode). *INFO gets the file's checksums,
 * the layout it looks like, and the computed sums (verified says whether they match). Errors
 * as ncm_mem_checkpoint_parse() for what cannot be decoded.
 */
NCM_API int ncm_mem_checkpoint_decode(const char *text, size_t len, const char *name,
                                      ncm_mem_state **ret, ncm_mem_checkpoint_info *info,
                                      ncm_error *err);

/* Whether TEXT looks like memory_manager_state (a JSON object with machineState). 1/0/-errno. */
NCM_API int ncm_mem_checkpoint_probe(const char *text, size_t len, const char *name,
                                     ncm_error *err);

/* Append the file the kubelet writes for S in layout VERSION, checksums included. With
 * promises (ncm_mem_state_set_promised), nodecm's "promised" member ({"<pod>": {"<container>":
 * bytes}}) precedes "checksum", outside every checksum: the kubelet ignores it. */
NCM_API void ncm_mem_checkpoint_format(const ncm_mem_state *s, ncm_mem_checkpoint_version version,
                                       ncm_buf *b);

/*
 * The checksums of S (checksum.New over go-spew's rendering): the legacy V1 one
 * (MemoryManagerCheckpoint without podEntries), the V2 one (with podEntries), and the
 * dataChecksum of its 1.37 data string.
 */
NCM_API int ncm_mem_checkpoint_sums(const ncm_mem_state *s, uint32_t *legacy, uint32_t *v2,
                                    uint32_t *data);

/* Write S to PATH atomically (0600) in layout VERSION. */
NCM_API int ncm_mem_checkpoint_write(const ncm_mem_state *s, ncm_mem_checkpoint_version version,
                                     int dirfd, const char *path, ncm_error *err);

#ifdef __cplusplus
}
#endif
#endif
