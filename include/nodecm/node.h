/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node: the kubelet's container manager, resource-management half, composed from the
 * managers below it. Data flows one way (DESIGN.md): topology -> policies -> node (admission)
 * -> state -> checkpoint. The managers never call each other: the node asks each hint provider
 * for hints, the topology manager merges them, and the chosen affinity goes into each
 * provider's allocate call. Providers plug in through the topology manager's ops table, in the
 * kubelet's registration order (device manager, then CPU manager).
 *
 * Two parts:
 *  1. configuration: the KubeletConfiguration fields the managers read, validated with the
 *     kubelet's texts (ncm_node_config_*);
 *  2. the node: construction and start-up (restore and validate the checkpoints), admission,
 *     container and pod removal, restart, and what can be asked of it (ncm_node_*).
 * The simulator is a client of the node (nodecm/sim.h).
 *
 * Transactions. Every mutating call either succeeds or leaves the node exactly as it was: the
 * CPU state (and so the checkpoint file, rewritten last with the restored content), the pod
 * registry and the CPU policy's reuse set of init-container CPUs. The kubelet itself keeps the
 * CPUs that earlier containers of a rejected pod received until its next clean-up of inactive
 * pods (at the next admission, or within the reconcile period); since that clean-up runs before
 * the next pod's hints are computed, every decision the kubelet reports is the same as nodecm's.
 * docs/simulate.md has the details.
 *
 * Nothing here is thread-safe: one caller at a time per node (the kubelet holds a mutex).
 */
#ifndef NODECM_NODE_H
#define NODECM_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/cdi.h>
#include <nodecm/common.h>
#include <nodecm/cpumanager.h>
#include <nodecm/cpuset.h>
#include <nodecm/cpustate.h>
#include <nodecm/devicemanager.h>
#include <nodecm/enforcer.h>
#include <nodecm/error.h>
#include <nodecm/fs.h>
#include <nodecm/hint.h>
#include <nodecm/memorymanager.h>
#include <nodecm/node-config.h>
#include <nodecm/pod.h>
#include <nodecm/topology.h>
#include <nodecm/topologymanager.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------
 * 2. The node
 */

typedef struct ncm_node ncm_node;

/* A pod a node holds, as recorded in nodecm_pods. */
typedef struct ncm_node_pod_record {
        ncm_pod *pod;
        char **removed; /* names of its containers removed since, NULL-terminated (or NULL) */
} ncm_node_pod_record;

/* The file that keeps a persistent node's pods, beside the kubelet's checkpoints, and the
 * journal of what changed since it was last written whole (docs/node.md). */
#define NCM_NODE_PODS_NAME "nodecm_pods"
#define NCM_NODE_PODS_JOURNAL_NAME "nodecm_pods_journal"
/* What CRI-O's knobs must put back (nodecm/cgroup-knobs.h's memo), beside them. */
#define NCM_NODE_ISOLATION_NAME "nodecm_isolation"
/* The lock file of a node's directory. */
#define NCM_NODE_LOCK_NAME "nodecm.lock"
/* The undo record of a change in flight (ncm_fs_batch_set_undo): present only while a change is
 * being written, or after one was interrupted; the next open rolls it back. */
#define NCM_NODE_UNDO_NAME "nodecm.undo"
/* The configuration the node was started with (ncm_node_config_format), written by an open
 * with NCM_NODE_DIR_INIT. */
#define NCM_NODE_CONFIG_NAME "nodecm_config"

/*
 * Read DIR/nodecm_pods and its journal into *RET (*RET_N records, sorted by pod UID; a missing
 * file is none). Errors name the file and the record or line (-EINVAL). Free with
 * ncm_node_pod_records_free().
 */
NCM_API int ncm_node_pods_load(const char *dir, ncm_node_pod_record **ret, size_t *ret_n,
                               ncm_error *err);
NCM_API void ncm_node_pod_records_free(ncm_node_pod_record *v, size_t n);

typedef struct ncm_node_options {
        /*
         * Directory for the kubelet-format checkpoint files (cpu_manager_state), written
         * atomically on every mutation as the kubelet does. NULL: kept in memory (a restart
         * then reads back what would have been written).
         */
        const char *state_dir;
        /*
         * A cpu_manager_state to start from, as if the kubelet found it in its root directory
         * (restored and validated as the kubelet does). NULL: no file, a fresh state. NAME
         * starts its errors ("node.state").
         */
        const char *cpu_checkpoint;
        size_t cpu_checkpoint_len;
        const char *cpu_checkpoint_name;
        /* Use the topology manager's reference merge (kubelet's walk; same results, slower). */
        bool reference_merge;
        /*
         * The devices the node's device plugins report, as the scenario's devices section:
         * {"example.com/gpu": [{"id": "gpu0", "numa": [0], "health": "Healthy"}, ...]}
         * (ncm_devmgr_apply_devices_json). NULL: no device plugin.
         */
        const char *devices;
        size_t devices_len;
        /* The kubelet release to reproduce, over the configuration's kubeletVersion
         * (`nodecm ... --kubelet-version`); {0, 0}: the configuration's. */
        ncm_kubelet_version kubelet_version;
        /*
         * What the decisions become on the machine (borrowed; must outlive the node). NULL:
         * nothing is enforced, as with the "none" enforcer. The node starts it at the end of
         * ncm_node_new() (node allocatable, QoS tiers) and calls it in every admission,
         * removal and reconcile, inside the transaction.
         */
        ncm_enforcer *enforcer;
        /*
         * With STATE_DIR: restore the checkpoint files found there (validated as the kubelet
         * does at start; a missing cpu_manager_state starts fresh), instead of writing a fresh
         * state over them.
         */
        bool restore;
        /*
         * With STATE_DIR: keep the pods the node admits in STATE_DIR/nodecm_pods (their specs
         * and removed containers), so that a later process knows them (ncm_node_pods_load).
         */
        bool persist_pods;
        /* Pods the node holds already (restored), with the containers removed from them. */
        const ncm_node_pod_record *pods;
        size_t n_pods;
        /*
         * The node was started before (by an earlier process on the same state): the enforcer
         * checks and sets up but writes nothing at start (node allocatable is in place).
         */
        bool attach;
        /*
         * Tests: every write of the state directory goes through these hooks (borrowed; NULL:
         * none), so that a failing disk or a killed process can be tried at each step.
         */
        const ncm_fs_faults *faults;
        /*
         * Write nothing to the state directory (what the kubelet's start would write stays in
         * memory): a node opened to be looked at, on a directory that may be read-only.
         * Admissions and removals are -EROFS.
         */
        bool read_only;
        /*
         * The node's capacity for the resource-fit admission (copied): cpu, memory,
         * ephemeral-storage, hugepages-<size>, extended resources. NULL: the topology's CPUs
         * only, and resources nodecm does not know the amount of are not checked.
         */
        const ncm_resource_list *capacity;
        /*
         * A memory_manager_state to start from (with CPU_CHECKPOINT, not from a directory):
         * restored and validated as the kubelet does. NULL: a fresh state.
         */
        const char *mem_checkpoint;
        size_t mem_checkpoint_len;
        /*
         * The machine's root for device locality (ncm_locator): where its PCI devices (unless
         * the topology carries them), /sys/dev and the CDI spec directories are read. NULL:
         * "/". Only read when the configuration asks for locality.
         */
        const char *machine_root;
} ncm_node_options;

/*
 * Build and start the node on T for CFG (both must outlive the node; a restart may replace
 * CFG), as the kubelet's NewContainerManager and Start do, in its order: the reserved CPUs
 * must be on the machine (`reserved-cpus: 8 is not a subset of online-cpus: 0-7`), the
 * topology manager (ncm_tm_new), the CPU manager (ncm_cpu_policy_new), registration of the hint
 * providers, then the checkpoint (restored, or created fresh) and the CPU policy's Start
 * (validateState). Errors: configuration errors name the field under CFG's path (-EINVAL); a
 * checkpoint that fails restoring or validation is -NCM_E_INVALID_STATE / -NCM_E_CHECKSUM with
 * the kubelet's text (`start cpu manager error: not all reserved cpus: ...`); I/O errors on the
 * state directory name the file.
 */
NCM_API int ncm_node_new(const ncm_topo *t, const ncm_node_config *cfg,
                         const ncm_node_options *opts, ncm_node **ret, ncm_error *err);

NCM_API ncm_node *ncm_node_free(ncm_node *n);
NCM_DEFINE_AUTOPTR(ncm_node, ncm_node_free)

/* --- admission --- */

/* One event of an admission, recorded with NCM_NODE_EXPLAIN. */
typedef enum ncm_node_event_kind {
        NCM_NODE_EVENT_HINTS,    /* a provider's hints for a container, or for the pod */
        NCM_NODE_EVENT_MERGE,    /* the topology manager's merge of those hints */
        NCM_NODE_EVENT_ALLOCATE, /* a provider's allocation for a container */
} ncm_node_event_kind;

/*
 * Explanations show at most this many hints of a resource (the kubelet's order), then how many
 * there are: every hint of a machine with up to 8 NUMA nodes, a bounded page beyond
 * (ncm_hint_page() gives any page).
 */
#define NCM_NODE_EXPLAIN_HINTS_MAX 256

typedef struct ncm_node_event {
        ncm_node_event_kind kind;
        char *container;      /* NULL: the whole pod (pod scope hints and merge) */
        const char *provider; /* "cpu", "devices" (static); NULL for MERGE */
        /* HINTS: resource -> hints as the provider gave them, a list or a description (its
         * desc; page it with ncm_hint_page()); no resource: no preference at all */
        ncm_tm_hints hints;
        ncm_hint hint; /* MERGE: the merged hint; ALLOCATE: the affinity passed in */
        bool ok;       /* MERGE: the policy admits it; ALLOCATE: it succeeded */
        char *text;    /* MERGE: why this hint won; ALLOCATE: what was allocated, or why not */
        char **steps;  /* ALLOCATE: how the allocator chose, one line each */
        size_t n_steps;
} ncm_node_event;

/* One container of an admitted pod, as it stands after the admission. */
typedef struct ncm_node_container_result {
        char *name;
        bool init;        /* in spec.initContainers */
        bool sidecar;     /* init container with restartPolicy: Always */
        bool exclusive;   /* holds its own CPUs (an entry in the CPU state) */
        ncm_cpuset *cpus; /* its CPUs; the shared pool at that moment when not exclusive */
        int *numa;        /* the NUMA nodes of those CPUs (ids, ascending) */
        size_t n_numa;
        ncm_hint affinity;              /* what the topology manager stored for it */
        ncm_devmgr_assignment *devices; /* per resource, sorted; NULL when none */
        size_t n_devices;
        /*
         * What the device plugins' Allocate answers give the container (envs, mounts, device
         * specs, annotations, CDI devices), merged as the kubelet hands them to the runtime
         * (ncm_devmgr_container_options); NULL when it holds no devices.
         */
        ncm_devmgr_alloc_resp *device_options;
        /* The memory manager's blocks (its Static policy pins Guaranteed containers): the
         * kubelet's memory_manager_state entry of the container; NULL when none. */
        ncm_mem_block *memory;
        size_t n_memory;
} ncm_node_container_result;

typedef struct ncm_node_admission {
        bool admitted;
        char reason[64];                 /* kubelet's Reason when refused, else "" */
        char message[NCM_ERROR_MSG_MAX]; /* kubelet's Message when refused, else "" */
        size_t n_containers;             /* admitted: init containers then app containers */
        ncm_node_container_result *containers;
        size_t n_events; /* NCM_NODE_EXPLAIN only */
        ncm_node_event *events;
} ncm_node_admission;

NCM_API ncm_node_admission *ncm_node_admission_free(ncm_node_admission *a);
NCM_DEFINE_AUTOPTR(ncm_node_admission, ncm_node_admission_free)

enum {
        NCM_NODE_EXPLAIN = 1 << 0, /* record hints, merges and allocation steps */
        /*
         * A kubelet admitted the pod already (the CRI proxy stands behind one): its
         * resource-fit predicates ran there, so under fitAdmission "auto" the node does not
         * run them again (nodecm/node-fit.h).
         */
        NCM_NODE_KUBELET_ADMITTED = 1 << 1,
};

/*
 * The kubelet's pod admission by the topology manager: for each container (init containers
 * first) or once for the pod (pod scope), every provider's hints, the merge, the policy's
 * decision, then each provider's allocate with the chosen affinity; then, as the kubelet's
 * next admit handler does, its resource-fit predicates (nodecm/node-fit.h: OutOfcpu,
 * OutOfmemory, OutOfpods, ..., against the node's allocatable and the pods it holds) unless
 * the configuration's fitAdmission or NCM_NODE_KUBELET_ADMITTED says not. A refusal is a
 * result, not an error: *RET says admitted or not, with the kubelet's reason and message
 * (TopologyAffinityError, SMTAlignmentError, UnexpectedAdmissionError "Allocate failed due to
 * <err>, which is unexpected", OutOfcpu "Node didn't have enough resource: cpu, ..."). A refused
 * pod leaves the node exactly as before. Admitting a UID the node already holds is the kubelet's
 * re-admission (after a restart): containers that hold CPUs keep them.
 *
 * Returns 0 with *RET set, or -errno for failures that are not decisions (out of memory, a
 * checkpoint that cannot be written: ENOSPC, EROFS, EIO); the node, its files and the
 * enforcer's writes are then as they were. A refusal writes nothing at all. The files of one
 * admission (cpu_manager_state, the device manager's checkpoint, memory_manager_state,
 * nodecm_pods' journal line) are one commit with an undo record (ncm_fs_batch_set_undo), made after
 * the enforcer's writes and before its commit: a process killed anywhere leaves the directory as it
 * was before the admission (the next open rolls back) or as after it.
 */
NCM_API int ncm_node_admit(ncm_node *n, const ncm_pod *pod, unsigned flags,
                           ncm_node_admission **ret, ncm_error *err);

/*
 * ncm_node_admit() with N's writes of its state directory (cpu_manager_state, nodecm_pods, the
 * device manager's checkpoint) joining BATCH (NULL: N's own), where the caller may have put
 * writes of its own first (a runtime integration's record). The admission commits BATCH, the
 * caller's writes with N's, all or nothing (with the undo record of the directory,
 * NCM_FS_WRITE_NO_DIRSYNC: the caller owes the directory's fsync, ncm_fs_batch_settle), or
 * drops it all when it is refused or fails.
 */
NCM_API int ncm_node_admit_batch(ncm_node *n, const ncm_pod *pod, unsigned flags,
                                 ncm_fs_batch *batch, ncm_node_admission **ret, ncm_error *err);

/*
 * The kubelet's RemoveContainer for (POD_UID, NAME): its exclusive CPUs go back to the shared
 * pool, except those another container of the pod still holds; its topology hint is dropped.
 * RELEASED (may be NULL) receives the CPUs that joined the shared pool. Works for pods known
 * only from a restored checkpoint too. Returns 1 when something was removed, 0 when the node
 * knew nothing of it (the kubelet ignores that too), or -errno.
 */
NCM_API int ncm_node_remove_container(ncm_node *n, const char *pod_uid, const char *name,
                                      ncm_cpuset *released, ncm_error *err);

/*
 * Remove every container of POD_UID (init containers, then app containers, in spec order; for
 * a pod known only from the checkpoint, its entries in name order) and forget the pod.
 * Returns 1, 0 or -errno as ncm_node_remove_container().
 */
NCM_API int ncm_node_remove_pod(ncm_node *n, const char *pod_uid, ncm_cpuset *released,
                                ncm_error *err);

/*
 * The kubelet's reconcileState, once: every running container of every pod the node holds
 * gets its cpuset again from the state (its exclusive CPUs, or the shared pool), through the
 * enforcer, in one transaction (on failure every write is undone). Returns how many cpusets
 * the enforcer had to write (the cgroupfs enforcer leaves a cgroup that holds its CPUs
 * already alone): what was off; 0 without an enforcer.
 */
NCM_API int ncm_node_reconcile(ncm_node *n, ncm_error *err);

/*
 * The kubelet restarting: the state is persisted, then the managers are rebuilt from the
 * checkpoint files (in memory without a state directory) with CFG (NULL: the same
 * configuration; else it must outlive the node), restored and validated as at start-up. The
 * node's pods stay known (the kubelet would re-admit them; with their CPUs in the checkpoint
 * that changes nothing). On failure the node is unchanged and the kubelet's error is returned
 * (-NCM_E_INVALID_STATE for a checkpoint the new configuration refuses, -EINVAL for a bad
 * configuration).
 */
NCM_API int ncm_node_restart(ncm_node *n, const ncm_node_config *cfg, ncm_error *err);

/*
 * A copy of N in memory, to decide on without changing N (what-if, explanations): the same
 * topology and configuration (borrowed, as N's), its state as a restart would read it back
 * from its checkpoints, the same pods; no state directory and no enforcer. What the kubelet
 * forgets at a restart (the CPU policy's reusable init-container CPUs, the stored topology
 * hints of running containers) the copy does not have either. -ENOMEM.
 */
NCM_API int ncm_node_copy(const ncm_node *n, ncm_node **ret, ncm_error *err);

/*
 * What the kubelet counts for its metrics (spec §7), as the kubelet counts it:
 *   pinning_requests / pinning_errors: each CPU manager Allocate of a container that asks for
 *     exclusive CPUs (cpu_manager_pinning_{requests,errors}_total), failed ones;
 *   tm_admissions / tm_admission_errors: each topology manager admission, and those refused
 *     by the merge or failed in an allocation (topology_manager_admission_*_total);
 *   aligned / aligned_failures [scope][boundary]: container_aligned_compute_resources_count and
 *     _failure_count: numa_node under the single-numa-node policy (per container in container
 *     scope, per pod in pod scope), physical_cpu under full-pcpus-only, uncore_cache for an
 *     allocation within one uncore cache.
 * They count attempts, so a transaction that is undone still counts, as in the kubelet. A
 * restart (ncm_node_restart) keeps them; a copy (ncm_node_copy) starts from zero.
 */
enum { NCM_NODE_SCOPE_CONTAINER = 0, NCM_NODE_SCOPE_POD = 1, NCM_NODE_N_SCOPES = 2 };
enum {
        NCM_NODE_ALIGN_NUMA_NODE = 0,
        NCM_NODE_ALIGN_PHYSICAL_CPU = 1,
        NCM_NODE_ALIGN_UNCORE_CACHE = 2,
        NCM_NODE_N_ALIGN = 3,
};

typedef struct ncm_node_counters {
        uint64_t pinning_requests;
        uint64_t pinning_errors;
        uint64_t tm_admissions;
        uint64_t tm_admission_errors;
        uint64_t aligned[NCM_NODE_N_SCOPES][NCM_NODE_N_ALIGN];
        uint64_t aligned_failures[NCM_NODE_N_SCOPES][NCM_NODE_N_ALIGN];
        uint64_t mem_pinning_requests; /* memory_manager_pinning_requests_total */
        uint64_t mem_pinning_errors;   /* memory_manager_pinning_errors_total */
} ncm_node_counters;

NCM_API const ncm_node_counters *ncm_node_get_counters(const ncm_node *n) NCM_PURE;

/*
 * What the node's enforcer found changed on the machine and put back, by kind
 * (ncm_knob_fix: a reset sched_load_balance, a partition, a quota, an interrupt's affinity,
 * irqbalance's line), over every transaction and reconcile since the node was made (a restart
 * keeps them); the cpusets a reconcile rewrote are ncm_node_reconcile()'s return.
 */
typedef struct ncm_node_isolation_counters {
        uint64_t fixed[NCM_KNOB_FIX_N];
} ncm_node_isolation_counters;

NCM_API const ncm_node_isolation_counters *
ncm_node_isolation_counters_get(const ncm_node *n) NCM_PURE;

/* CRI-O's knobs (NCM_KNOB_*) container NAME of POD_UID has now: a running container that holds
 * exclusive CPUs, of a pod that asks (docs/isolation.md); 0 otherwise. */
NCM_API unsigned ncm_node_container_knobs(const ncm_node *n, const char *pod_uid,
                                          const char *name) NCM_PURE;

/* What the knobs must put back (the memo kept in DIR/nodecm_isolation), NULL before the first
 * transaction of a node without a directory. */
NCM_API const ncm_knob_memo *ncm_node_knob_memo(const ncm_node *n) NCM_PURE;

/*
 * How many times N has fsynced its state directory (each commit that replaced a file ends with
 * one) since it was made. A caller that renamed a file of its own into that directory without
 * syncing it (NCM_FS_WRITE_NO_DIRSYNC) learns from a change of this count that a node write
 * since has made its rename durable too, and syncs the directory itself otherwise.
 */
NCM_API uint64_t ncm_node_dir_syncs(const ncm_node *n) NCM_PURE;

/*
 * Group commit, for a daemon that answers many callers (nodecmd; docs/nodecmd.md, "Durability").
 * With ON, N's transactions on a node kept in a directory (ncm_node_dir_open) commit by
 * appending to the pods journal without its fdatasync: the journal line is the change's commit
 * point, and the caller makes it durable with ncm_node_sync(), once for every change made
 * meanwhile, before it acknowledges any of them. A pod's admission, removal or resize no longer
 * rewrites cpu_manager_state: the journal line carries the pod's CPUs, and ncm_node_flush()
 * brings the file up to date off the acknowledgement path; a start replays what it lacks
 * before the node serves. memory_manager_state and kubelet_internal_checkpoint are still
 * written by the transaction that changes them. A batch staged by an owner (the CRI) is
 * committed as without. OFF (the default): every change durable before the call returns.
 */
NCM_API void ncm_node_defer_sync(ncm_node *n, bool on);
/* Whether N committed changes that ncm_node_sync() has not made durable yet. */
NCM_API bool ncm_node_unsynced(const ncm_node *n) NCM_PURE;
/* Make every change N committed durable: one fdatasync of the pods journal (none when there
 * is nothing to sync). -errno: the changes since the last sync may be lost with the machine. */
NCM_API int ncm_node_sync(ncm_node *n, ncm_error *err);
/* Whether N's files are behind its journal: unsynced changes, cpu_manager_state to rewrite, or
 * the journal due to be folded into nodecm_pods (ncm_node_flush). */
NCM_API bool ncm_node_behind(const ncm_node *n) NCM_PURE;
/*
 * Bring N's files up to date: ncm_node_sync(), then cpu_manager_state rewritten whole
 * (temporary file, fsync, rename, directory fsync) when the journal holds CPU lines it lacks,
 * then nodecm_pods rewritten whole with its journal emptied when the journal has grown long.
 * Each file is complete and valid at rest throughout. 0 or -errno (retry later: the journal
 * keeps everything).
 */
NCM_API int ncm_node_flush(ncm_node *n, ncm_error *err);

/* --- a node kept in a root directory --- */

/*
 * A node whose state lives in a directory, for front ends that run one command at a time
 * (`nodecm node ... --root-dir DIR`). DIR holds the kubelet's cpu_manager_state and
 * kubelet_internal_checkpoint (0600, in the kubelet's format), nodecm_pods (the pods it holds)
 * and nodecm.lock. Opening it takes an exclusive lock on nodecm.lock for as long as it is open
 * (so commands on one directory run one after the other, and none reads another's half-done
 * state), removes temporary files a crash left, restores and validates the checkpoints as the
 * kubelet does at start, and knows the recorded pods again. Every change is persisted before
 * the call returns.
 */
typedef struct ncm_node_dir ncm_node_dir;

enum {
        /* Create DIR (0700) when missing and start a fresh state when it has none; the
         * enforcer then does the start-up writes (node allocatable, QoS tiers). */
        NCM_NODE_DIR_INIT = 1 << 0,
        /* Fail with -EWOULDBLOCK when another process holds the lock, instead of waiting. */
        NCM_NODE_DIR_NOWAIT = 1 << 1,
        /* Do the enforcer's start-up writes although the node was started before (reconcile). */
        NCM_NODE_DIR_START = 1 << 2,
        /*
         * Only to look at (status, pods, explain): the node writes nothing (its admissions and
         * removals are -EROFS). On a directory it can write, what a crash left is tidied up
         * all the same, under the lock; on one it cannot (a read-only mount), the files are
         * read as they lie under a shared lock (none without a lock file), and a change a crash
         * interrupted, which cannot be rolled back there, is -EROFS, saying so.
         */
        NCM_NODE_DIR_READ_ONLY = 1 << 3,
};

typedef struct ncm_node_dir_options {
        unsigned flags;
        ncm_enforcer *enforcer; /* borrowed; NULL: nothing is enforced */
        const char *devices;    /* as ncm_node_options.devices */
        size_t devices_len;
        ncm_kubelet_version kubelet_version; /* as ncm_node_options.kubelet_version */
        const ncm_fs_faults *faults;         /* as ncm_node_options.faults (tests) */
        const ncm_resource_list *capacity;   /* as ncm_node_options.capacity */
        const char *machine_root;            /* as ncm_node_options.machine_root */
} ncm_node_dir_options;

/*
 * Open the node in DIR on topology T with configuration CFG (both must outlive it). A change
 * a killed process left half-written is rolled back first (its undo record, nodecm.undo), so
 * that the directory holds the state before it or after it, never a mix. Errors: DIR missing
 * or not a directory; no cpu_manager_state without NCM_NODE_DIR_INIT (-ENOENT, "run 'nodecm
 * node init' first"); the lock (-EWOULDBLOCK with NOWAIT); the kubelet's restore and
 * validation errors (-NCM_E_INVALID_STATE, -NCM_E_CHECKSUM: a configuration the state does
 * not fit); nodecm_pods unreadable (-EINVAL); the enforcer's start. A failed open with
 * NCM_NODE_DIR_INIT leaves nothing it made behind (the directory, the lock file, the files).
 *
 * The configuration: an open with NCM_NODE_DIR_INIT records CFG in DIR/nodecm_config once the
 * node has started with it (the kubelet's restart with a new configuration: the state
 * validated against it, the enforcer's start-up writes done with it). Any other open refuses
 * a CFG that differs from the one recorded (-EINVAL naming each field that changed, old ->
 * new): a node does not take one command's configuration and another's the next.
 */
NCM_API int ncm_node_dir_open(const char *dir, const ncm_topo *t, const ncm_node_config *cfg,
                              const ncm_node_dir_options *o, ncm_node_dir **ret, ncm_error *err);

/* The node (valid until the directory is closed). */
NCM_API ncm_node *ncm_node_dir_node(const ncm_node_dir *d) NCM_PURE;

/*
 * The configuration DIR records (DIR/nodecm_config) into *RET, for a command given none.
 * -ENOENT when DIR records none (not initialised, or by a nodecm older than the record).
 */
NCM_API int ncm_node_dir_config(const char *dir, ncm_node_config **ret, ncm_error *err);

/* Free the node and release the lock. Returns NULL. */
NCM_API ncm_node_dir *ncm_node_dir_close(ncm_node_dir *d);
NCM_DEFINE_AUTOPTR(ncm_node_dir, ncm_node_dir_close)

/*
 * Just the lock of DIR (DIR/nodecm.lock, created 0600), for commands that write a node's files
 * or cgroups without opening the node (cgroup apply, checkpoint rewrite, simulate --state-dir).
 * FLAGS: NCM_NODE_DIR_NOWAIT. Returns the fd that holds it; close it to release.
 */
NCM_API int ncm_node_dir_lock(const char *dir, unsigned flags, ncm_error *err);

/* The cpusets of a pod's containers, as a cgroup plan takes them. */
typedef struct ncm_node_cpusets {
        ncm_cgroup_container_cpus *v; /* container names point into the pod; cpus owned */
        size_t n;
} ncm_node_cpusets;

/*
 * The cpusets POD's sidecars and app containers have in the state kept in DIR (its
 * cpu_manager_state, read as the kubelet restores it, not changed): each container's
 * exclusive CPUs, the default set for the others (none under the none policy, which pins
 * nothing). For `nodecm cgroup apply` on a node's directory. -ENOENT when DIR has no state.
 */
NCM_API int ncm_node_dir_pod_cpusets(const char *dir, const ncm_pod *pod, ncm_node_cpusets *ret,
                                     ncm_error *err);
NCM_API void ncm_node_cpusets_done(ncm_node_cpusets *c);

/* --- devices --- */

/*
 * One device the node's device plugins report (ncm_node_options.devices), for explanations and
 * status: where it is and whether it is healthy.
 */
typedef struct ncm_node_device {
        char *resource;
        char *id;
        bool topology;    /* the plugin reports NUMA nodes for it */
        ncm_bitmask numa; /* those nodes */
        bool healthy;
} ncm_node_device;

/* A set of devices, sorted by resource, then id. */
typedef struct ncm_node_devices {
        ncm_node_device *v;
        size_t n;
} ncm_node_devices;

/*
 * Read the devices section ({"example.com/gpu": [{"id": "gpu0", "numa": [0], "health":
 * "Healthy"}, ...]}) into *RET. Entries that are not devices are skipped (the device manager
 * itself checks the section, ncm_devmgr_apply_devices_json). 0, -ENOMEM.
 */
NCM_API int ncm_node_devices_parse(const char *text, size_t len, ncm_node_devices *ret,
                                   ncm_error *err);
NCM_API void ncm_node_devices_done(ncm_node_devices *d);
/* The device RESOURCE/ID, or NULL. */
NCM_API const ncm_node_device *ncm_node_devices_find(const ncm_node_devices *d,
                                                     const char *resource, const char *id);
/*
 * What the scheduler and the API server would have refused before a pod reaches a kubelet:
 * extended resources the node does not have, more devices than it has, requests that are not
 * whole numbers or differ from the limits. PATH ("steps[2].admit") prefixes the error. -EINVAL.
 */
NCM_API int ncm_node_devices_check_pod(const ncm_node_devices *d, const ncm_pod *pod,
                                       const char *path, ncm_error *err);

/* The devices of the node (none without a devices option). */
NCM_API const ncm_node_devices *ncm_node_get_devices(const ncm_node *n) NCM_PURE;

/* --- device locality (docs/devices.md, "Device locality") --- */

/*
 * Where a device is: its PCI functions, their NUMA nodes and local CPUs. A device is found,
 * in this order, by the configuration's devicePCI, by its id or name when that is a PCI address
 * (the SR-IOV plugin's ids, "0000:3b:00.2"), by the device nodes a plugin's Allocate answer
 * gives it (DeviceSpec host paths; its CDI devices) or a CDI spec gives it (deviceNodes: the
 * node's major:minor, or the node itself, traced through /sys/dev; ncm_pci_resolve_node()).
 */
typedef struct ncm_device_location {
        char *device; /* "RESOURCE=ID" (a plugin's device; "RESOURCE=A,B" for several
                         found together) or a CDI name */
        bool located; /* its PCI functions are known */
        char *how;    /* how they were found ("devicePCI", "device ID", "device node
                         /dev/vfio/40", "CDI /etc/cdi/x.yaml: /dev/dri/renderD128"), or why
                         not */
        char **pci;   /* its PCI functions, canonical, sorted */
        size_t n_pci;
        ncm_bitmask numa;       /* their NUMA nodes (the kernel's numa_node; -1 adds none) */
        ncm_cpuset *local_cpus; /* their local CPUs on the machine; NULL when none is known */
} ncm_device_location;

NCM_API void ncm_device_location_done(ncm_device_location *d);
NCM_API void ncm_device_locations_free(ncm_device_location *v, size_t n);

typedef struct ncm_locator ncm_locator;

/*
 * A locator for machine T with configuration CFG (devicePCI, cdiSpecDirs; both must outlive
 * it), reading under MACHINE_ROOT (NULL: "/"): T's PCI devices when T carries some, else the
 * machine's (read at the first use), /sys/dev, the CDI spec directories (checked at the first
 * use after ncm_locator_refresh(), read again when they changed). -ENOMEM, or the root's open
 * error.
 */
NCM_API int ncm_locator_new(const ncm_topo *t, const ncm_node_config *cfg, const char *machine_root,
                            ncm_locator **ret, ncm_error *err);
NCM_API ncm_locator *ncm_locator_free(ncm_locator *l);
NCM_DEFINE_AUTOPTR(ncm_locator, ncm_locator_free)
/*
 * Forget the CDI devices located so far: the next use checks the spec directories again
 * (ncm_cdi_stamp) and reads them when a spec file changed, appeared or went.
 */
NCM_API void ncm_locator_refresh(ncm_locator *l);

/*
 * Locate CDI device NAME into *RET. Not finding it is a result (RET->located false, RET->how
 * says why); errors are -ENOMEM and the machine's PCI devices or spec directories that cannot
 * be read. Until the next refresh, NAME is located the same without reading again.
 */
NCM_API int ncm_locator_cdi(ncm_locator *l, const char *name, ncm_device_location *ret,
                            ncm_error *err);
/*
 * Locate devices IDS[0..N) of RESOURCE, which one Allocate answered with RESP (may be NULL):
 * each by devicePCI or its id; those left are found together through RESP's device nodes and
 * CDI devices (one location for all of them). *RET / *RET_N: the locations, in IDS order.
 */
NCM_API int ncm_locator_plugin(ncm_locator *l, const char *resource, const char *const *ids,
                               size_t n, const ncm_devmgr_alloc_resp *resp,
                               ncm_device_location **ret, size_t *ret_n, ncm_error *err);
/* The CDI registry the locator reads (scanned now if needed), for listings. */
NCM_API int ncm_locator_registry(ncm_locator *l, const ncm_cdi_registry **ret, ncm_error *err);
/* The PCI devices it reads (discovered now if needed). */
NCM_API int ncm_locator_pci(ncm_locator *l, const ncm_pci **ret, ncm_error *err);
/*
 * The PCI devices N knows without reading anything: its topology's when it carries some, else
 * those its device locality has discovered already (NULL: none yet). For the node map.
 */
NCM_API const ncm_pci *ncm_node_pci(const ncm_node *n) NCM_PURE;

/*
 * Append LOCS for people, one line each ("example.com/nic=vf0: PCI 0000:c1:00.2 (NUMA 1, local
 * CPUs 12-15,28-31) by device node /dev/vfio/40"), or as a JSON array of {"device", "located",
 * "how", "pci", "numa", "local_cpus"} ("numa" null without a node, "local_cpus" null when
 * unknown).
 */
NCM_API void ncm_device_locations_text(const ncm_device_location *v, size_t n, ncm_buf *b);
NCM_API void ncm_device_locations_json(const ncm_device_location *v, size_t n, ncm_buf *b);

/*
 * Every device N knows, located: each device plugin device (with its allocation's answer when
 * a container holds it), then each CDI device of the spec directories and each CDI device a
 * held pod's container names, by name. For `nodecm devices`. -ENOMEM or the locator's errors.
 */
NCM_API int ncm_node_device_locations(ncm_node *n, ncm_device_location **ret, size_t *ret_n,
                                      ncm_error *err);

/* --- inspection --- */

NCM_API const ncm_topo *ncm_node_topo(const ncm_node *n) NCM_PURE;
/* The enforcer N was opened with (ncm_node_options.enforcer; NULL: none). */
NCM_API const ncm_enforcer *ncm_node_enforcer(const ncm_node *n) NCM_PURE;
NCM_API const ncm_node_config *ncm_node_get_config(const ncm_node *n) NCM_PURE;
/* The kubelet release the node reproduces (--kubelet-version, else kubeletVersion; {0, 0}:
 * the newest). */
NCM_API ncm_kubelet_version ncm_node_kubelet_version(const ncm_node *n) NCM_PURE;
NCM_API const ncm_cpu_state *ncm_node_cpu_state(const ncm_node *n) NCM_PURE;
NCM_API const ncm_cpu_policy *ncm_node_cpu_policy(const ncm_node *n) NCM_PURE;
NCM_API const ncm_tm *ncm_node_tm(const ncm_node *n) NCM_PURE;
NCM_API const ncm_devmgr *ncm_node_devmgr(const ncm_node *n) NCM_PURE;
/* The memory manager's state and policy (include/nodecm/memorymanager.h). */
NCM_API const ncm_mem_state *ncm_node_memory_state(const ncm_node *n) NCM_PURE;
NCM_API const ncm_mem_policy *ncm_node_memory_policy(const ncm_node *n) NCM_PURE;
/*
 * The cpuset.mems of container CONTAINER of POD_UID, decided once for every enforcer and front
 * end (the cgroupfs and plan enforcers, the OCI hook, the CRI proxy and its reconcile), into
 * *RET as a mask of NUMA node ids:
 *  - the memory manager pinned it: the NUMA nodes of its blocks (the kubelet's
 *    GetMemoryNUMANodes, which PreCreateContainer puts in the CRI's cpuset_mems);
 *  - otherwise by the configuration's cpusetMems (ncm_node_config_cpuset_mems): "inherit"
 *    (the kubelet's rule) leaves it alone; "cpus" takes the NUMA nodes of CPUS (the cpuset
 *    the container gets: its exclusive CPUs or the shared pool) that have memory.
 * Returns 1 with *RET set, 0 when cpuset.mems is to be left alone (*RET untouched). NUMA ids
 * outside 0..63 (which no kubelet mask holds) are left out.
 */
NCM_API int ncm_node_container_mems(const ncm_node *n, const char *pod_uid, const char *container,
                                    const ncm_cpuset *cpus, ncm_bitmask *ret);
/* MASK as the kubelet writes a cpuset_mems: the node ids ascending, joined by "," ("0,1"). */
NCM_API void ncm_node_format_mems(ncm_bitmask mask, ncm_buf *b);
/*
 * The node's device manager, for a device-plugin host that feeds it (registrations,
 * snapshots, disconnects; include/nodecm/deviceplugin.h). Valid until the node is freed or
 * restarted (ncm_node_restart builds a new one: attach the host to it again).
 */
NCM_API ncm_devmgr *ncm_node_device_manager(ncm_node *n) NCM_PURE;

/*
 * The CPUs a container without exclusive CPUs runs on: the default set (static policy), or
 * every CPU (none policy, whose containers are not pinned).
 */
NCM_API void ncm_node_shared_pool(const ncm_node *n, ncm_cpuset *out);

/* The pods the node holds (admitted or restored), by UID: how many, and the I-th one's spec. */
NCM_API size_t ncm_node_num_pods(const ncm_node *n) NCM_PURE;
NCM_API const ncm_pod *ncm_node_pod_at(const ncm_node *n, size_t i) NCM_PURE;
/* The spec of pod POD_UID, or NULL. */
NCM_API const ncm_pod *ncm_node_pod(const ncm_node *n, const char *pod_uid) NCM_PURE;
/* Whether container NAME of POD_UID was removed (ncm_node_remove_container). */
NCM_API bool ncm_node_container_removed(const ncm_node *n, const char *pod_uid,
                                        const char *name) NCM_PURE;
/*
 * The CPUs container NAME of POD_UID runs on, into OUT: its exclusive CPUs (returns 1) or the
 * shared pool (returns 0).
 */
NCM_API int ncm_node_container_cpus(const ncm_node *n, const char *pod_uid, const char *name,
                                    ncm_cpuset *out);

/* The pod's metadata.name, or NULL when the node does not know the pod. */
NCM_API const char *ncm_node_pod_name(const ncm_node *n, const char *pod_uid) NCM_PURE;

/* Append the cpu_manager_state the kubelet would write now (ncm_cpu_checkpoint_format_state). */
NCM_API void ncm_node_format_cpu_checkpoint(const ncm_node *n, ncm_buf *b);

/*
 * Append the state line: {"op": "state", "defaultCpuSet": "...", "entries": {"<pod uid>":
 * {"<container>": "<cpus>"}}} (and "devices": {"<pod>": {"<container>": {"<resource>":
 * ["<id>", ...]}}} when the node has devices), then a newline. Keys are sorted.
 */
NCM_API void ncm_node_format_state_json(const ncm_node *n, ncm_buf *b);

/*
 * Append the CPU map for people: a header with the policies and reserved CPUs, then per
 * socket, NUMA node and core who holds each CPU ("<pod>/<container>", "shared", "reserved",
 * "-"), the shared pool, and each device with its holders. 0, or -ENOMEM.
 */
NCM_API int ncm_node_format_cpu_map(const ncm_node *n, ncm_buf *b);

/*
 * Append the result of an admission as one JSON line (DESIGN.md's admit line: {"step": STEP,
 * "op": "admit", "pod": ..., "admitted": ..., "containers": [...]} or the refusal's "reason"
 * and "message"; STEP < 0 leaves "step" out; EXPLAIN adds "explain": [events]), or for people
 * ("[step STEP: ]admit NAME: admitted: app exclusive 2-3 (NUMA 0); ..." and, with EXPLAIN, one
 * indented line per event). Both end with a newline.
 */
NCM_API void ncm_node_format_admission_json(ncm_buf *b, long step, const ncm_pod *pod,
                                            const ncm_node_admission *a, bool explain);
NCM_API void ncm_node_format_admission_text(ncm_buf *b, long step, const ncm_pod *pod,
                                            const ncm_node_admission *a, bool explain);

/*
 * Append the result of a removal -- ncm_node_remove_container when CONTAINER is set, else
 * ncm_node_remove_pod; REMOVED is what it returned, RELEASED the CPUs it gave back -- as one
 * JSON line ({"step": STEP, "op": "remove" or "removePod", "pod": UID, "container": ...,
 * "removed": ..., "released": "2-3"}; STEP < 0 leaves "step" out) or for people ("[step STEP:
 * ]removePod NAME: released 2-3 to the shared pool"). NAME is the pod's name as the node knew
 * it before the removal (NULL or "": the UID is shown). Both end with a newline.
 */
NCM_API void ncm_node_format_removal_json(ncm_buf *b, long step, const char *pod_uid,
                                          const char *container, int removed,
                                          const ncm_cpuset *released);
NCM_API void ncm_node_format_removal_text(ncm_buf *b, long step, const char *pod_uid,
                                          const char *pod_name, const char *container, int removed,
                                          const ncm_cpuset *released);

/*
 * Append the status line: the state line's fields, then "policy", "reserved" (CPUs),
 * "sharedPool", under isolatedCPUs exclude or exclusive-only "isolatedCPUs" (the mode) and
 * "isolated" (the CPUs), "cpus" (each CPU with its socket, NUMA node and core, "isolated": true
 * and "nohz_full": true when the machine says so, its use -- "reserved", "shared", "exclusive",
 * "isolated" (out of the shared pool by isolatedCPUs) or "free" -- and, when exclusive, its
 * holders {"pod", "name", "container"}), and "pods" (each held pod: uid, name, namespace, qos, and
 * its containers with "exclusive", "cpus", "knobs" (CRI-O's knobs it has: "cpu-load-balancing",
 * "cpu-quota", "irq-load-balancing") and, when removed, "removed": true). One line, then a
 * newline.
 */
NCM_API void ncm_node_format_status_json(const ncm_node *n, ncm_buf *b);

#ifdef __cplusplus
}
#endif
#endif
