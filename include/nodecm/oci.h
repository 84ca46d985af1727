/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OCI hook: kubelet-grade pinning for runc, crun and podman without any CRI.
 *
 * An OCI runtime runs a hook at createRuntime (or prestart) with the container's state on
 * standard input ({"ociVersion", "id", "status": "creating", "pid", "bundle", "annotations"})
 * after it has made the container's cgroup and put the container's first process in it, but
 * before that process runs the user's program. The hook reads the bundle's config.json
 * (annotations, linux.resources, linux.cgroupsPath), decides who the container is
 * (nodecm/runtime.h: nodecm.io/... and io.kubernetes.* annotations), rebuilds its pod from
 * the containers the node already holds for it plus this one, admits the pod on the node kept
 * in a root directory (the kubelet's static policy and topology manager, one transaction under
 * the directory's lock) and writes the container's cpuset (cpuset.cpus, and cpuset.mems with
 * the NUMA nodes of those CPUs) into its cgroup. So the container's first instruction already
 * runs on the CPUs the kubelet would give it. When the shared pool shrinks or grows, every
 * other shared container the hook placed follows in the same transaction. At poststop the
 * container is released, and its pod when it was the pod's last container.
 *
 * The containers the hook placed are kept beside the node's own files in
 * ROOT/nodecm_oci_containers (id, pod, name, kind, cgroup, resources), written atomically
 * under the same lock. A container whose cgroup has gone without a poststop (the runtime was
 * killed) is released at the next hook run, as the kubelet's removeStaleState does.
 */
#ifndef NODECM_OCI_H
#define NODECM_OCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/node-config.h>
#include <nodecm/node.h>
#include <nodecm/runtime.h>
#include <nodecm/topology.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The file of the containers the hook placed, in a node's root directory. */
#define NCM_OCI_CONTAINERS_NAME "nodecm_oci_containers"
/* ... and of the containers it keeps on the shared pool (not nodecm's: "confined"). */
#define NCM_OCI_CONFINED_NAME "nodecm_oci_confined"

/* The container state of the runtime-spec ("State"), as runtimes give it to hooks. */
typedef struct ncm_oci_state {
        char *oci_version;
        char *id;
        char *status; /* "creating", "created", "running", "stopped" */
        int pid;      /* 0 when absent (poststop) */
        char *bundle;
        ncm_runtime_kv *annotations; /* keys and values owned */
        size_t n_annotations;
} ncm_oci_state;

/*
 * Parse a state document (JSON, at most 1 MiB). id and status are required; pid must be a
 * non-negative int; annotations an object of strings. Errors name the field
 * ("state: pid: expected number, got string"). -EINVAL, -EFBIG, -ENOMEM. Release with
 * ncm_oci_state_done().
 */
NCM_API int ncm_oci_state_parse(const char *text, size_t len, ncm_oci_state *ret, ncm_error *err);
NCM_API void ncm_oci_state_done(ncm_oci_state *s);

/* What nodecm reads of a bundle's config.json. */
typedef struct ncm_oci_config {
        ncm_runtime_kv *annotations; /* owned */
        size_t n_annotations;
        char *cgroups_path;              /* linux.cgroupsPath, NULL when absent */
        ncm_runtime_resources resources; /* linux.resources: cpu, memory, hugepageLimits */
} ncm_oci_config;

/*
 * Parse config.json TEXT (at most 16 MiB; NAME starts errors). Only annotations,
 * linux.cgroupsPath and linux.resources.{cpu.shares,cpu.quota,cpu.period,memory.limit,
 * hugepageLimits} are read; every other field is ignored whatever it holds. A field of the
 * wrong type is -EINVAL naming it ("config.json: linux.resources.cpu.quota: expected number,
 * got string"); a memory limit of -1 (unlimited) is none. Release with ncm_oci_config_done().
 */
NCM_API int ncm_oci_config_parse(const char *text, size_t len, const char *name,
                                 ncm_oci_config *ret, ncm_error *err);
NCM_API void ncm_oci_config_done(ncm_oci_config *c);

/* Which hook is running. AUTO: from the state's status ("stopped" is poststop, else create). */
typedef enum ncm_oci_stage {
        NCM_OCI_STAGE_AUTO = 0,
        NCM_OCI_STAGE_CREATE,   /* createRuntime or prestart */
        NCM_OCI_STAGE_POSTSTOP, /* poststop */
} ncm_oci_stage;

typedef struct ncm_oci_hook_options {
        const char *root_dir;                /* the node's directory (created when missing) */
        const ncm_topo *topo;                /* the machine */
        const ncm_node_config *cfg;          /* the KubeletConfiguration */
        ncm_kubelet_version kubelet_version; /* {0, 0}: the configuration's */
        ncm_oci_stage stage;
        /* The cgroup mount root, "/sys/fs/cgroup" when NULL; with CGROUP_VERSION 1 or 2 a
         * directory laid out as a typical v1 or v2 machine (tests), else detected. */
        const char *cgroup_root;
        int cgroup_version;
        /* Where /proc/PID/cgroup is read ("/" when NULL: the host). */
        const char *proc_root;
        /* The bundle's config.json instead of reading STATE's bundle (tests). */
        const char *config_text;
        size_t config_len;
        bool no_wait; /* fail instead of waiting for the directory's lock */
        /* The machine's root for /proc/irq and irqbalance's file (CRI-O's
         * irq-load-balancing knob): "/" when NULL. */
        const char *machine_root;
        /* Leave containers that are not nodecm's alone, as before (`--no-confine`): they then
         * run on every CPU, exclusive ones included. */
        bool no_confine;
} ncm_oci_hook_options;

/* What a hook run did. */
typedef enum ncm_oci_action {
        NCM_OCI_SKIPPED = 0, /* not nodecm's container (reason says why) */
        NCM_OCI_ADMITTED,    /* create: admitted and pinned */
        NCM_OCI_RELEASED,    /* poststop: released */
        NCM_OCI_UNKNOWN,     /* poststop: a container the hook never placed */
        NCM_OCI_CONFINED,    /* create: not nodecm's, kept on the shared pool; poststop: let go */
} ncm_oci_action;

typedef struct ncm_oci_hook_result {
        ncm_oci_action action;
        ncm_oci_stage stage; /* the stage that ran (never AUTO) */
        char *id;
        char *reason;    /* SKIPPED: why */
        char *pod_uid;   /* ADMITTED, RELEASED */
        char *container; /* ADMITTED, RELEASED */
        bool exclusive;  /* ADMITTED: the container's CPUs are its own */
        char *cpus;      /* ADMITTED: its cpuset.cpus; RELEASED: the CPUs that joined the pool */
        char *mems;      /* ADMITTED: its cpuset.mems ("" when left as it was) */
        char *cgroup;    /* ADMITTED: its cgroup, below the cpuset hierarchy (or v2 root) */
        size_t stale;    /* containers found gone and released on the way */
} ncm_oci_hook_result;

NCM_API void ncm_oci_hook_result_done(ncm_oci_hook_result *r);

/*
 * Run the hook for STATE[0..LEN) (the runtime's standard input). A container that is not
 * nodecm's (no nodecm.io/managed "true" nor a pod UID, a sandbox, an ephemeral container) is
 * CONFINED: kept on the node's shared pool, where no container holds CPUs of its own, and
 * moved with it (ROOT/nodecm_oci_confined), until its poststop; it is not admitted and counts
 * for nothing. It is SKIPPED untouched when it says nodecm.io/managed "false" (the opt-out), or
 * with NO_CONFINE. Otherwise, with the directory's lock held:
 *   create    the container is recorded, its pod rebuilt and admitted, its cpuset written and
 *             every other shared container follows; a refusal is -NCM_E_ADMISSION with the
 *             kubelet's "REASON: MESSAGE" (the runtime then fails the container's creation,
 *             as a kubelet would reject the pod) and nothing stays changed;
 *   poststop  the container is released (and its pod with its last container); the shared
 *             containers grow.
 * Running create twice for one container (prestart and createRuntime both configured) admits
 * once. Errors name what failed: the state or config.json (-EINVAL), the container's cgroup
 * (-ENOENT: "container 'ID': process PID has no cpuset cgroup"), the node directory, a write
 * the kernel refused (-NCM_E_ENFORCEMENT; everything undone).
 */
NCM_API int ncm_oci_hook_run(const ncm_oci_hook_options *o, const char *state, size_t len,
                             ncm_oci_hook_result *ret, ncm_error *err);

/*
 * The kubelet's reconcileState for the node the hook keeps, for a timer (`nodecm oci-hook
 * --stage reconcile`): containers whose cgroup has gone are released, every container the hook
 * placed (confined ones included) gets its cpuset again, and CRI-O's knobs and the interrupts
 * are put back where the machine changed them. *RET_FIXED: the cpusets written; *RET_KNOBS (may
 * be NULL; NCM_KNOB_FIX_N entries): what the knobs found changed, by ncm_knob_fix; *RET_STALE:
 * the containers released. No node directory: nothing to do (0).
 */
NCM_API int ncm_oci_reconcile(const ncm_oci_hook_options *o, int *ret_fixed, unsigned *ret_knobs,
                              size_t *ret_stale, ncm_error *err);

/*
 * RESULT as one JSON line: {"stage": "create"|"poststop", "id": ..., "action": "skipped"|
 * "admitted"|"released"|"unknown"|"confined", and what the action has: "reason"; "pod",
 * "container", "exclusive", "cpus", "mems", "cgroup"; "released"; "cpus" and "cgroup" of a
 * confined container; "stale"}.
 */
NCM_API void ncm_oci_hook_result_json(const ncm_oci_hook_result *r, ncm_buf *b);

#ifdef __cplusplus
}
#endif
#endif
