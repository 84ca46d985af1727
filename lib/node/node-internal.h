/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal to lib/node: the configuration's fields, the node object, and what the node's files
 * share (provider glue, explanations).
 */
#ifndef NCM_NODE_INTERNAL_H
#define NCM_NODE_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nodecm/cgroups.h>
#include <nodecm/devicemanager.h>
#include <nodecm/enforcer.h>
#include <nodecm/memorymanager.h>
#include <nodecm/node.h>
#include "base/journal.h"

/* The KubeletConfiguration subset, parsed. Strings are owned. */
struct ncm_node_config {
        json_object *src; /* the object it was read from (for merges) */
        char *path;       /* field path prefix for errors, e.g. "node.kubelet" */
        char *cpu_policy; /* "none" or "static" */
        ncm_cpu_option *cpu_opts;
        size_t n_cpu_opts;
        ncm_cpu_gates cpu_gates;
        char *reserved_cpus_text;  /* reservedSystemCPUs as given; NULL when "" */
        ncm_cpuset *reserved_cpus; /* parsed; NULL when none */
        bool reserved_milli_set;   /* kubeReserved or systemReserved names cpu */
        int64_t reserved_milli;    /* their sum in millicores */
        char *tm_policy;           /* "none", "best-effort", "restricted", "single-numa-node" */
        char *tm_scope;            /* "container" or "pod" */
        ncm_tm_option *tm_opts;
        size_t n_tm_opts;
        ncm_tm_gates tm_gates;
        ncm_kubelet_version kubelet_version; /* kubeletVersion; {0, 0}: the newest */

        /* feature gates as given (name -> on), for the ones read elsewhere */
        struct node_gate {
                char *name;
                bool on;
        } * gates;
        size_t n_gates;

        /* cgroups, CFS quota, pids, node allocatable */
        char *cgroup_root;   /* cgroupRoot; "/" for "" */
        char *cgroup_driver; /* cgroupDriver: "cgroupfs" or "systemd" */
        bool cgroups_per_qos;
        bool cpu_cfs_quota;
        int64_t cpu_cfs_quota_period_ns;
        int64_t pod_pids_limit;
        ncm_cgroup_memory_qos memory_qos; /* memoryReservationPolicy */
        unsigned enforce;                 /* enforceNodeAllocatable, NCM_ENFORCE_* */
        char *kube_reserved_cgroup;       /* "" when unset */
        char *system_reserved_cgroup;
        bool has_kube_reserved, has_system_reserved;
        ncm_resource_list kube_reserved, system_reserved;
        ncm_eviction_thresholds eviction_hard;
        int64_t reconcile_period_ns;     /* cpuManagerReconcilePeriod */
        char *root_dir;                  /* nodecm's rootDirectory */
        char *enforcement;               /* nodecm's enforcement: "cgroupfs", "plan" or "none" */
        ncm_cpu_isolation isolated_cpus; /* nodecm's isolatedCPUs (node-isolation.c) */
        char *irqbalance_config;         /* nodecm's irqBalanceConfigFile: "" auto, "none" */

        /* what reading it would make the kubelet log (ncm_node_config_warning) */
        char **warnings;
        size_t n_warnings, cap_warnings;
        bool reserved_cpu_given; /* kubeReserved or systemReserved named cpu beside
                                    reservedSystemCPUs */
        size_t n_doc_warnings;   /* the first warnings are the document's (repeats, more
                                    documents): a merge keeps them */
        ncm_node_config_decoding decoding;
        bool fail_cgroup_v1;                  /* failCgroupV1, defaulted for the release */
        bool single_oom_kill_off;             /* singleProcessOOMKill given as false */
        int64_t max_pods;                     /* maxPods */
        int64_t pods_per_core;                /* podsPerCore */
        ncm_node_fit_admission fit_admission; /* nodecm's fitAdmission */
        /* the memory manager (node-memory.c) */
        char *mem_policy; /* memoryManagerPolicy: "None" or "Static" */
        ncm_mem_reservations reserved_memory;
        char *mem_drift; /* memoryManagerPolicyOptions' memory-drift-tolerance; NULL: unset */
        ncm_node_mems_rule mems_rule; /* nodecm's cpusetMems */

        /* nodecm's device locality (node-locality.c) */
        struct node_locality_config {
                bool local_cpus; /* deviceLocalCPUs: prefer */
                bool dra_hints;  /* draTopologyHints: align */
                char **cdi_dirs; /* cdiSpecDirs; NULL: CDI's defaults */
                size_t n_cdi_dirs;
                struct node_pci_map {
                        char *device; /* "RESOURCE=ID" or a CDI name */
                        char **pci;   /* canonical addresses */
                        size_t n_pci;
                } * pci_map; /* devicePCI, sorted by device */
                size_t n_pci_map;
        } loc;
};

/* nodecm's isolation fields of O into C (node-isolation.c), after the kubelet's. */
int ncm__node_config_isolation(ncm_node_config *c, json_object *o, ncm_error *err);

/* Record a warning on C (ncm_node_config_warning). -ENOMEM. */
int ncm__node_config_warn(ncm_node_config *c, ncm_error *err, const char *fmt, ...)
                NCM_PRINTF(3, 4);

struct ncm_json_info;
/*
 * The kubelet codec's strict-then-lenient decoding of O (node-config-decode.c): repeated keys
 * (INFO, may be NULL) and unknown fields warned about (lenient) or refused with the kubelet's
 * strict texts (strict). *RET_VIEW: the object to read the fields from (a reference): O, or a
 * copy without the fields the chosen kubelet does not have yet.
 */
int ncm__node_config_decode(ncm_node_config *c, json_object *o, const struct ncm_json_info *info,
                            json_object **ret_view, ncm_error *err);

/* kind and apiVersion as the kubelet's scheme checks them (REQUIRED: a file; else only when
 * given). O may be NULL (an empty document). -EINVAL with the kubelet's text. */
int ncm__node_config_check_kind(json_object *o, bool required, ncm_error *err);

/*
 * Set feature gate NAME to VALUE as kubelet 1.MINOR's SetFromMap does (node-config-gates.c):
 * -EINVAL "PATH: ... unrecognized feature gate: NAME" or "cannot set feature gate ...,
 * feature is locked to ..."; a GA or deprecated gate is a warning on C.
 */
int ncm__node_gate_set(ncm_node_config *c, const char *path, const char *name, bool value,
                       int minor, ncm_error *err);
/* Whether kubelet 1.MINOR knows gate NAME. */
bool ncm__node_gate_known(const char *name, int minor);

/* Whether NAME is one of nodecm's own top-level fields. */
bool ncm__node_config_is_nodecm_field(const char *name);

/* devicePCI, cdiSpecDirs, deviceLocalCPUs, draTopologyHints of O into C (node-locality.c). */
int ncm__node_locality_config(ncm_node_config *c, json_object *o, ncm_error *err);
void ncm__node_locality_config_done(ncm_node_config *c);

/* "PATH.FIELD" into BUF (just FIELD when PATH is empty). */
const char *ncm__node_field(const ncm_node_config *c, const char *field, char *buf, size_t size);

typedef struct node_removing node_removing;

/* A pod the node admitted: what removal and labels need. */
typedef struct node_container {
        char *name;
        bool init;
        bool sidecar;
        bool removed;
} node_container;

typedef struct node_pod {
        char *uid;
        char *name;
        size_t n;
        node_container *c;             /* init containers, then app containers */
        ncm_pod *spec;                 /* the pod as admitted */
        struct ncm__node_fit_req *fit; /* its requests, for the fit admission (node-fit.c) */
        ncm_cgroup_qos_usage qos;      /* its part of the QoS tiers' sums */
        bool summed;                   /* QOS and FIT are in the registry's sums (node_sums) */
} node_pod;

/*
 * The registry's sums, kept as pods come and go, so that an admission reads the QoS tiers'
 * requests and the fit admission's "used" without a walk over every pod. Exact (wide) sums:
 * the walk's saturating additions of non-negative parts are the sum capped at INT64_MAX, in any
 * order. A pod whose part could not be computed, or has a negative amount, is not summed;
 * while one is held the readers walk, as before.
 */
__extension__ typedef __int128 node_wide;

typedef struct node_sums {
        size_t n_unsummed;             /* pods held that are not in the sums */
        size_t n_specs;                /* pods held with a spec (summed or not) */
        size_t n_knobbed;              /* pods held that ask for CRI-O's knobs */
        node_wide qos[3];              /* burstable cpu (milli), guaranteed, burstable memory */
        struct ncm__node_fit_sum *fit; /* node-fit.c's */
} node_sums;

/* P enters the registry's sums, or leaves them (node-fit.c: its fit part; node.c: the rest). */
void ncm__node_sums_enter(ncm_node *n, node_pod *p);
void ncm__node_sums_leave(ncm_node *n, node_pod *p);
/* The fit admission's part of them. 0, or -errno (P then not summed). */
int ncm__node_fit_sum_enter(ncm_node *n, node_pod *p);
void ncm__node_fit_sum_leave(ncm_node *n, const node_pod *p);
void ncm__node_fit_sum_free(struct ncm__node_fit_sum *s);
/* Whether the fit admission's "used" for a pod UID from the sums is the walk's (tests). */
bool ncm__node_fit_sums_agree(ncm_node *n, const char *uid);
/* The QoS tiers' requests by walking every pod (what the sums stand for; tests compare). */
int ncm__node_usage_walk(const ncm_node *n, const char *except_uid, ncm_cgroup_qos_usage *ret,
                         ncm_error *err);

/* Free a node_pod's fit cache (NULL is fine). */
void ncm__node_fit_req_free(struct ncm__node_fit_req *q);

/* The node's hint providers, in the kubelet's registration order (then nodecm's own). */
enum {
        NODE_PROVIDER_DEVICES = 0,
        NODE_PROVIDER_CPU = 1,
        NODE_PROVIDER_MEMORY = 2,
        NODE_PROVIDER_DRA = 3, /* draTopologyHints: align (node-dra.c) */
        NODE_N_PROVIDERS = 4,
};

/* One list of a merge, as the topology manager's trace reported it (for --explain). */
typedef struct node_merge_list {
        size_t provider;
        char *resource; /* NULL: the provider has no resources */
        ncm_tm_list_kind kind;
        ncm_hint *hints;
        size_t n;
        ncm_hint_desc *desc; /* a described list (a copy), instead of HINTS */
} node_merge_list;

/*
 * One admission: handed to every provider call (ncm_tm_call.txn), it carries what the
 * explanation records. What to undo is the node's (node.c), taken before the admission starts.
 */
typedef struct node_txn {
        ncm_node *n;
        const ncm_pod *pod;
        const ncm_pod *before; /* a resize: the pod as the node held it */
        bool explain;
        int trace_err; /* -ENOMEM met while recording (a trace callback cannot fail) */
        ncm_node_event *ev;
        size_t n_ev, cap_ev;
        /* the merge being explained: which providers' hints are shown, its lists, candidates */
        bool shown[NODE_N_PROVIDERS];
        node_merge_list *lists;
        size_t n_lists, cap_lists;
        ncm_bitmask *cand;
        size_t n_cand, cap_cand;
        bool cand_more; /* the trace reported the first candidates only */
} node_txn;

struct ncm_node {
        const ncm_topo *topo;
        const ncm_node_config *cfg;
        int dirfd; /* state directory, -1: checkpoints in memory */
        char *dir; /* its name, for messages */
        bool reference_merge;
        ncm_kubelet_version kubelet_override; /* {0, 0}: the configuration's kubeletVersion */

        ncm_tm *tm;
        ncm_devmgr *dev;
        ncm_cpu_policy *cpu;
        ncm_cpu_state *cpu_state;
        ncm_cpuset *all_cpus;
        struct node_mem *mem; /* the memory manager (node-memory.c) */

        char *devices_json; /* the devices section, NULL: none */
        size_t devices_len;
        ncm_node_devices devices;

        node_pod **pods; /* by UID; pointers: an admission or removal moves 8 bytes a pod */
        size_t n_pods, cap_pods;
        node_sums sums; /* of the pods' requests (ncm__node_sums_enter) */

        ncm_node_counters counters; /* what the kubelet counts for its metrics */

        ncm_enforcer *enforcer; /* borrowed; NULL: nothing is enforced */
        bool persist_pods;      /* keep dir/nodecm_pods */
        bool pods_journal;      /* and its journal (ncm__node_pods_journal) */
        ncm__journal pods_jn;   /* nodecm_pods' generation, its journal's lines */
        uint64_t dir_syncs;     /* fsyncs of dir (ncm_node_dir_syncs) */
        /* the caller's batch the writes join for one decision (ncm_node_admit_batch) */
        ncm_fs_batch *stage;
        bool attach;    /* started before: the enforcer writes nothing at start */
        bool read_only; /* writes nothing (ncm_node_options.read_only) */

        /*
         * The transaction: every write of one decision joins one batch (the owner's when staged,
         * else OWN, kept for its spares), committed all or nothing with an undo record
         * (UNDO_PATH, ncm_fs_batch_set_undo) after the enforcer's work and before its commit, so
         * that a refusal writes nothing and a failed write undoes the enforcer's. A failed or
         * refused transaction is DOOMED: the rollback's writes (the state as it was, which the
         * disk still holds) go nowhere.
         */
        const ncm_fs_faults *faults; /* borrowed (ncm_node_options.faults) */
        char *undo_path;             /* dir/nodecm.undo */
        ncm_fs_batch *own;
        ncm_fs_batch *txn; /* open: the batch writes join; NULL: none open */
        unsigned txn_depth;
        bool txn_doomed;
        bool txn_replaced;   /* a file of the batch is replaced (its commit syncs dir) */
        ncm__journal txn_jn; /* pods_jn when it began */

        /* group commit (ncm_node_defer_sync): the journal is the commit point */
        bool defer_sync;
        bool unsynced;       /* appends not fdatasynced yet (ncm_node_sync) */
        bool cpu_behind;     /* cpu_manager_state is behind the journal (ncm_node_flush) */
        bool txn_cpu;        /* the open transaction changed the CPU state, not written */
        const char *txn_pod; /* the pod the open transaction changes (borrowed) */

        /* isolatedCPUs (node-isolation.c): the CPUs counted as isolated, NULL under ignore */
        ncm_cpuset *isolated;
        /* CRI-O's knobs (node-knobs.c): what to put back, and what DIR holds of it */
        ncm_knob_memo *memo, *memo_written;
        ncm_node_isolation_counters counters_iso;
        /* a removal in progress: its containers count as gone (name NULL: the whole pod) */
        struct node_removing {
                const char *uid, *name;
        } removing;
        const ncm_node_pod_record *restoring; /* ncm_node_new: the pods being restored */
        size_t n_restoring;
        ncm_resource_list fit_capacity; /* ncm_node_options.capacity, for the fit admission */

        char *machine_root;   /* for device locality; NULL: "/" */
        ncm_locator *locator; /* made at the first need (ncm__node_locator) */
};

/* A transaction of N's writes (above): begin, then commit (or not), then end, which drops what
 * was not committed. Nested ones are part of the outermost. */
int ncm__node_txn_begin(ncm_node *n, ncm_error *err);
/* Stage N's writes into BATCH (NULL: as they are) for one decision; the stage before, to put
 * back after it. */
ncm_fs_batch *ncm__node_stage(ncm_node *n, ncm_fs_batch *batch);
int ncm__node_txn_commit(ncm_node *n, ncm_error *err);
void ncm__node_txn_end(ncm_node *n);
/* Whether POD asks CRI-O's ANNOTATION to be "disable" (or its older "true"). */
bool ncm__node_knob_on(const ncm_pod *pod, const char *annotation);
/*
 * isolatedCPUs for a node being built with CFG, CPU and ST: the CPUs it counts as isolated
 * (*RET, NULL under ignore), given to the CPU policy; a configuration that leaves the shared
 * pool empty or on isolated CPUs only is -EINVAL naming isolatedCPUs.
 */
int ncm__node_isolation_setup(const ncm_node *n, const ncm_node_config *cfg, ncm_cpu_policy *cpu,
                              const ncm_cpu_state *st, ncm_cpuset **ret, ncm_error *err);

/* CRI-O's knobs POD asks for (NCM_KNOB_*), and those container NAME of POD_UID gets (a
 * running container that holds exclusive CPUs; else 0) (node-knobs.c). */
unsigned ncm__node_pod_knobs(const ncm_pod *pod);
unsigned ncm__node_container_knobs(const ncm_node *n, const char *pod_uid, const char *name);
/* Read DIR/nodecm_isolation into the node (missing: empty). */
int ncm__node_memo_load(ncm_node *n, ncm_error *err);
/* Whether the enforcer takes isolation() calls. */
bool ncm__node_isolation_active(const ncm_node *n);
/*
 * The enforcer's isolation() for what the node holds now, inside the caller's transaction;
 * with RECONCILE what it changed counts as found off (ncm_node_isolation_counters_get). The
 * memo is written before the enforcer writes, and put back when it fails.
 */
int ncm__node_enforce_isolation(ncm_node *n, bool reconcile, ncm_error *err);

/*
 * Explanations (node-isolation.c): how isolatedCPUs narrowed AVAIL (the free CPUs, restricted
 * in place) for a container of POD asking REQ CPUs; and CRI-O's knobs a container of POD gets
 * (EXCLUSIVE: it holds exclusive CPUs), one step each.
 */
void ncm__node_explain_isolation(const ncm_node *n, ncm_node_event *e, const ncm_pod *pod, int req,
                                 const ncm_cpuset *reuse, ncm_cpuset *avail);
void ncm__node_explain_knobs(const ncm_node *n, ncm_node_event *e, const ncm_pod *pod,
                             bool exclusive);

/* The isolation lines of the CPU map, and the status line's "isolatedCPUs" and "isolated"
 * (under ignore: nothing). */
int ncm__node_format_isolation_text(const ncm_node *n, ncm_buf *b);
void ncm__node_format_isolation_json(const ncm_node *n, ncm_buf *b);
/* A container's ", \"knobs\": [...]" of the status line, when it has any. */
void ncm__node_format_knobs_json(const ncm_node *n, const char *pod_uid, const char *name,
                                 ncm_buf *b);

/* Copy CAPACITY (may be NULL) into N's (node-fit.c). -ENOMEM. */
int ncm__node_fit_set_capacity(ncm_node *n, const ncm_resource_list *capacity, ncm_error *err);
/* Whether an admission with FLAGS checks resource fit (the configuration's fitAdmission). */
bool ncm__node_fit_wanted(const ncm_node *n, unsigned flags);
/* ncm_node_admit() flag of the node's own: no resource-fit check (it was done). */
#define NCM__NODE_NO_FIT (1u << 31)
/*
 * The resource-fit admission of POD on N (node-fit.c), before anything changes: 0 when it
 * fits (the admission goes on), 1 with *RET the refusal, or -errno. The refusal carries the
 * kubelet's reason: the resource managers' when they refuse too (their admit handler runs
 * first), found on a copy of N so that nothing of N changes, else the first resource that
 * does not fit.
 */
int ncm__node_fit_admit(ncm_node *n, const ncm_pod *pod, unsigned flags, ncm_node_admission **ret,
                        ncm_error *err);

/* Whether POD fits beside the node's other pods (a resize's predicates, node-fit.c). */
struct ncm_node_fit;
int ncm__node_fit_of(ncm_node *n, const ncm_pod *pod, struct ncm_node_fit *ret, ncm_error *err);

/* The node's locator, made now if needed (node-locality.c). */
int ncm__node_locator(ncm_node *n, ncm_locator **ret, ncm_error *err);
/*
 * The locations of what container C of POD holds: its device plugin devices (their Allocate
 * answers) and its CDI devices (DRA's), in that order. *RET / *RET_N. Errors as the locator's.
 */
int ncm__node_container_locations(ncm_node *n, const ncm_pod *pod, const ncm_container *c,
                                  bool plugins, bool cdi, ncm_device_location **ret, size_t *ret_n,
                                  ncm_error *err);

/* Write dir/nodecm_pods from the registry, whole, its journal emptied (node.c). */
int ncm__node_persist_pods(ncm_node *n, ncm_error *err);
/* ncm_node_pods_load(), and nodecm_pods' generation, its journal's lines and whether the last
 * one was cut short by a crash (NULL: not wanted). */
/* The CPU lines of a pods journal (group commit, node-pods.c), each its "cpu" object. */
typedef struct ncm__cpu_lines {
        json_object **v;
        size_t n, cap;
} ncm__cpu_lines;
void ncm__cpu_lines_done(ncm__cpu_lines *c);
/* ...and its CPU lines into *RET_CPU (NULL: skipped). */
int ncm__node_pods_load(const char *dir, ncm_node_pod_record **ret, size_t *ret_n,
                        uint64_t *ret_gen, size_t *ret_lines, bool *ret_torn,
                        ncm__cpu_lines *ret_cpu, ncm_error *err);
/* LINES replayed onto S in order: each pod's entries set, the shared pool moved with them. */
int ncm__node_cpu_replay(ncm_cpu_state *s, const ncm__cpu_lines *lines, ncm_error *err);
/* The CPU line of pod UID (its entries in the state now) staged in N's open transaction. */
int ncm__node_cpu_line(ncm_node *n, const char *uid, ncm_error *err);
/* Whether N's transactions are group-committed now (ncm_node_defer_sync, no owner's batch). */
bool ncm__node_deferring(const ncm_node *n);
/* The open transaction is the change of pod UID (an admission, removal or resize): under
 * group commit its CPU state goes to the journal as the pod's line. */
void ncm__node_txn_pod(ncm_node *n, const char *uid);
/* The journal TEXT (the file PATH) applied to the records *V (*N of them, room for *CAP, sorted
 * by pod UID): its lines of generation GEN (*LINES counts them all), a last line cut short
 * ignored (*TORN). -EINVAL naming PATH and the line. */
int ncm__node_pods_journal_apply(const char *text, size_t len, const char *path, uint64_t gen,
                                 ncm_node_pod_record **v, size_t *n, size_t *cap, size_t *lines,
                                 bool *torn, ncm__cpu_lines *cpu, ncm_error *err);
/* From now on N appends its pods' changes to dir/nodecm_pods_journal: the file is at
 * GENERATION, its journal holds LINES lines. */
void ncm__node_pods_journal(ncm_node *n, uint64_t generation, size_t lines);
/* Write PATH of N's directory atomically (0600), or add it to the owner's batch when staged. */
int ncm__node_write(ncm_node *n, const char *path, const void *data, size_t len, ncm_error *err);

/* The CPU manager as a topology-manager hint provider (node-cpu.c). */
extern const ncm_tm_provider_ops ncm__node_cpu_provider;

/* The CDI devices of a pod's containers as a hint provider (node-dra.c). */
extern const ncm_tm_provider_ops ncm__node_dra_provider;

/* The device manager as a topology-manager hint provider, and its set-up (node-devices.c). */
extern const ncm_tm_provider_ops ncm__node_device_provider;
int ncm__node_dev_new(ncm_node *n, ncm_devmgr **ret, ncm_error *err);
int ncm__node_dev_start(ncm_node *n, ncm_devmgr *dev, const char *text, size_t len,
                        bool restore_file, ncm_error *err);
int ncm__node_dev_checkpoint_text(const ncm_devmgr *dev, ncm_buf *b, ncm_error *err);
int ncm__node_dev_copy_live(const ncm_devmgr *src, ncm_devmgr *dst, ncm_error *err);
char *ncm__node_dev_checkpoint_path(const ncm_node *n);

/*
 * The memory manager (node-memory.c): configuration, start, the hint provider registered
 * after the CPU manager's, and its part of an admission's or a removal's transaction.
 */
typedef struct node_mem node_mem;
typedef struct node_mem_saved node_mem_saved;
enum { NODE_MEM_FRESH, NODE_MEM_TEXT, NODE_MEM_FROM_FILE };
extern const ncm_tm_provider_ops ncm__node_memory_provider;
/* Parse memoryManagerPolicy, reservedMemory and memoryManagerPolicyOptions of O into C;
 * DRIFT_GATE: the MemoryManagerDriftTolerance feature gate. */
int ncm__node_mem_config(ncm_node_config *c, json_object *o, bool drift_gate, ncm_error *err);
void ncm__node_mem_config_done(ncm_node_config *c);
/* NewManager + Start for N: state FRESH, from TEXT (LEN bytes) or FROM_FILE (the directory's
 * memory_manager_state, fresh when absent). */
int ncm__node_mem_new(ncm_node *n, const ncm_node_config *cfg, int src, const char *text,
                      size_t len, node_mem **ret, ncm_error *err);
node_mem *ncm__node_mem_free(node_mem *m);
/* The checkpoint's bytes (restart and copy in memory). */
void ncm__node_mem_text(const node_mem *m, ncm_buf *b);
bool ncm__node_mem_drifted(const node_mem *m);
char *ncm__node_mem_checkpoint_path(const ncm_node *n);
/* What an admission may change: saved before, put back (and written) on a refusal. */
int ncm__node_mem_save(const node_mem *m, const char *uid, node_mem_saved **ret);
node_mem_saved *ncm__node_mem_saved_free(node_mem_saved *s);
int ncm__node_mem_restore(ncm_node *n, node_mem_saved *s, ncm_error *err);
/* Write memory_manager_state when a decision changed it. */
int ncm__node_mem_flush(ncm_node *n, ncm_error *err);
/* RemoveContainer; the whole pod (SPEC may be NULL). 1 when memory was released. */
int ncm__node_mem_release(ncm_node *n, const char *uid, const char *name, ncm_error *err);
int ncm__node_mem_release_pod(ncm_node *n, const ncm_pod *spec, const char *uid, ncm_error *err);
/* The container's blocks into CR. */
int ncm__node_mem_result(const ncm_node *n, const char *uid, const char *name,
                         ncm_node_container_result *cr);

/* Output: blocks as the simulation's "memory" JSON and as text; the state's "memory" member
 * and the status map's memory section (nothing under the None policy). */
void ncm__node_mem_format_blocks_json(ncm_buf *b, const ncm_mem_block *v, size_t n);
void ncm__node_mem_format_blocks_text(ncm_buf *b, const ncm_mem_block *v, size_t n);
void ncm__node_mem_format_state_json(const ncm_node *n, ncm_buf *b);
void ncm__node_mem_format_map(const ncm_node *n, ncm_buf *b);
/* --explain: the memory manager's HINTS event E gets, as steps, the nodes its group rule keeps
 * out of the hints. */
void ncm__node_mem_explain_hints(const ncm_node *n, ncm_node_event *e);

/*
 * The parts of an admission's transaction, for the resize (node.c; node-resize.c uses them):
 * what the admission of POD may change, saved (and put back, with one checkpoint write); its
 * containers as a result lists them; its registry record given POD's spec (persisted; the old
 * spec returned, to put back the same way); and the enforcer's transaction steps. The caller
 * holds the node's transaction (ncm__node_txn_begin) around them, as an admission does: the
 * writes join it, and a refusal or a failure dooms it (nothing written).
 */
typedef struct ncm__node_saved ncm__node_saved;
int ncm__node_save(ncm_node *n, const ncm_pod *pod, ncm__node_saved **ret, ncm_error *err);
ncm__node_saved *ncm__node_saved_free(ncm__node_saved *s);
int ncm__node_restore(ncm_node *n, const ncm_pod *pod, ncm__node_saved *s, ncm_error *err);
const ncm_cpuset *ncm__node_saved_default(const ncm__node_saved *s);
int ncm__node_result(ncm_node *n, const ncm_pod *pod, ncm_node_admission *a);
int ncm__node_pod_respec(ncm_node *n, const ncm_pod *pod, ncm_pod **ret_old, ncm_error *err);
int ncm__node_enforce_begin(ncm_node *n, ncm_error *err);
int ncm__node_enforce_commit(ncm_node *n, ncm_error *err);
int ncm__node_enforce_fail(ncm_node *n, int r, const char *what, ncm_error *err);
/* The change's files failed (R, ERR) after the enforcer's writes: those are undone; R. */
int ncm__node_enforce_undo(ncm_node *n, int r, ncm_error *err);
/* Every running container on the shared pool follows it (every pod's). */
int ncm__node_enforce_shared(ncm_node *n, ncm_error *err);
/*
 * What the enforcer is told of POD: SHARED (made) the shared pool, *USAGE the other pods'
 * requests, *RET (malloc'd) its containers as the enforcer sees them (SHARED borrowed).
 */
int ncm__node_enforce_prepare(const ncm_node *n, const ncm_pod *pod, ncm_cpuset *shared,
                              ncm_cgroup_qos_usage *usage, ncm_enforce_container **ret,
                              size_t *ret_n, ncm_error *err);

/*
 * The resize's side of the providers (node-resize.c): a provider call with op
 * NCM_TM_OP_RESIZE goes here. The CPU manager's hints and allocation; the memory manager's.
 */
int ncm__node_cpu_resize_hints(ncm_node *n, const ncm_tm_call *call, ncm_tm_hints *ret,
                               ncm_error *err);
int ncm__node_cpu_resize_allocate(ncm_node *n, const ncm_tm_call *call, const ncm_hint *affinity,
                                  const char **ret_type, ncm_error *err);
/* After an admission gave container C of POD exclusive CPUs: keep them as its promise when
 * InPlacePodVerticalScalingExclusiveCPUs is on. */
int ncm__node_cpu_promise(ncm_node *n, const ncm_pod *pod, const ncm_container *c, ncm_error *err);
/*
 * deviceLocalCPUs: prefer (node-cpu.c): where the devices of container C of POD are
 * (*RET_LOCS[0..*RET_NL), ncm_device_locations_free) and the CPUs near them (*RET_NEAR[0..
 * *RET_NN), pointing into the locations; free()). Nothing when the option is off or C gets no
 * exclusive CPUs. An admission's and a resize's allocation both prefer them.
 */
int ncm__node_cpu_near(ncm_node *n, const ncm_pod *pod, const ncm_container *c,
                       ncm_device_location **ret_locs, size_t *ret_nl, ncm_cpu_near **ret_near,
                       size_t *ret_nn, ncm_error *err);
/* --explain: which of LOCS drew which CPUs of RESULT, and which of their local CPUs the
 * container's isolation kept from it (KEPT: free CPUs it may not have; NULL: none) (node-cpu.c). */
void ncm__node_explain_near(ncm_node *n, ncm_node_event *e, const ncm_device_location *locs,
                            size_t nl, const ncm_cpu_near *near, size_t nn,
                            const ncm_cpuset *result, const ncm_cpuset *kept);

/* Start the node's enforcer (node.c): node allocatable and the QoS tiers. */
int ncm__node_enforce_start(ncm_node *n, ncm_error *err);

/* Events (node-explain.c). */
ncm_node_event *ncm__node_event_add(node_txn *t, ncm_node_event_kind kind, const char *container,
                                    const char *provider);
void ncm__node_event_done(ncm_node_event *e);
int ncm__node_event_step(ncm_node_event *e, const char *fmt, ...) NCM_PRINTF(2, 3);

/*
 * The topology manager's merge trace (ncm_tm_trace.fn, DATA a node_txn): HINTS events for the
 * providers' answers, and after each merge a MERGE event with the reason its result won, told
 * from the lists and candidates the trace reported.
 */
void ncm__node_explain_trace(void *data, const ncm_tm_trace_event *ev);

/* Start an explained admission (the none policy's single MERGE event); release its records. */
int ncm__node_explain_begin(node_txn *t);
void ncm__node_txn_done(node_txn *t);

/*
 * Describe how CHOSEN (out of AVAILABLE) decomposes into the topology's levels: whole NUMA
 * nodes, sockets, uncore caches, cores, single CPUs, as takeByTopology takes them. One step
 * per line appended to E.
 */
void ncm__node_explain_take(const ncm_topo *t, const ncm_cpuset *available,
                            const ncm_cpuset *chosen, ncm_node_event *e);

/* The split of node.c: node.c (construction, the pod registry, enforcement), node-txn.c
 * (admission and its transaction), node-remove.c (removal), node-pods.c (dir/nodecm_pods and
 * its journal). What one of them asks of another: */
node_pod *ncm__node_pod_find(const ncm_node *n, const char *uid);
int ncm__node_pod_make(const ncm_pod *pod, node_pod *ret);
int ncm__node_pod_put(ncm_node *n, node_pod *p);
int ncm__node_pod_copy(const node_pod *p, node_pod *ret);
void ncm__node_pod_done(node_pod *p);
void ncm__node_pod_forget(ncm_node *n, const char *uid);
const ncm_container *ncm__node_nth_container(const ncm_pod *pod, size_t i);
int ncm__node_add_container_ids(ncm_node *n, const ncm_pod *pod);
void ncm__node_strv_free(char **v);
int ncm__node_usage_of(const ncm_node *n, const char *except_uid, ncm_cgroup_qos_usage *ret,
                       ncm_error *err);
/* The enforcer's steps, called with an enforcer (ncm__node_enforce_* check for one first). */
const ncm_enforcer_ops *ncm__node_enforcer_ops(const ncm_node *n);
void *ncm__node_enforcer_data(const ncm_node *n);
int ncm__node_enforcer_begin(ncm_node *n, ncm_error *err);
int ncm__node_enforcer_commit(ncm_node *n, ncm_error *err);
int ncm__node_enforcer_fail(ncm_node *n, int r, const char *what, ncm_error *err);
int ncm__node_enforcer_shared(ncm_node *n, const char *skip_uid, ncm_error *err);
int ncm__node_enforcer_undo(ncm_node *n, int r, ncm_error *err);
int ncm__node_enforce_admission(ncm_node *n, const ncm_pod *pod, const ncm_cpuset *default_before,
                                ncm_error *err);
/* POD_UID's record appended to the pods journal (or the file rewritten whole), container
 * RM_NAME counted as removed; DROP: the pod gone (node-pods.c). */
int ncm__node_persist_pod(ncm_node *n, const char *uid, const char *rm_name, bool drop,
                          ncm_error *err);

#endif
