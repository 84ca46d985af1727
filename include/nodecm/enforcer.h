/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Enforcement: what the node's decisions become on the machine. An enforcer is an ops table
 * the node calls inside its transactions; each enforcer keeps what it changed since begin() so
 * that rollback() puts it back, and forgets it at commit(). The node calls, in this order:
 *
 *   start       once, when the node starts: the kubelet's required controllers, node
 *               allocatable on kubepods and the reserved cgroups, the QoS tiers (its own
 *               transaction: on failure nothing stays changed);
 *   begin       then any of pod_add / pod_cpus / pod_remove, then commit or rollback;
 *   pod_add     an admitted pod: its pod cgroup (the kubelet's values, the QoS tiers updated)
 *               and its containers with their cpusets;
 *   pod_cpus    the cpusets of a pod's containers (the shared pool moved, or reconcile);
 *               it may return how many it had to write (> 0), what a reconcile fixed;
 *   isolation   CRI-O's knobs and the interrupts made to match every container that asks
 *               (nodecm/cgroup-knobs.h), in every transaction of a node that has any;
 *   pod_remove  a removed pod: its cgroups go (always the last call before commit, as a
 *               removal cannot be undone);
 *   pod_resize  a pod resized in place: its new limits and cpusets, in two phases around
 *               the shared pool's pod_cpus (see ncm_enforce_resize).
 *
 * Built in: "none" (does nothing: the simulator), "plan" (records the writes it would make),
 * "cgroupfs" (cgroup v1 or v2 through a cgroup mount root). Later enforcers (CRI
 * UpdateContainerResources, an OCI hook's cgroup) plug in through ncm_enforcer_new().
 */
#ifndef NODECM_ENFORCER_H
#define NODECM_ENFORCER_H

#include <stdbool.h>
#include <stddef.h>
#include <nodecm/bitmask.h>
#include <nodecm/cgroup-knobs.h>
#include <nodecm/cgroups.h>
#include <nodecm/common.h>
#include <nodecm/cpuset.h>
#include <nodecm/error.h>
#include <nodecm/node-config.h>
#include <nodecm/pod.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One container of a pod, as the node wants it enforced. */
typedef struct ncm_enforce_container {
        const char *name;
        bool init;              /* an init container that is not a sidecar: it has run */
        bool sidecar;           /* restartable init container */
        bool exclusive;         /* CPUS are its own */
        const ncm_cpuset *cpus; /* its exclusive CPUs, or the shared pool */
        /* its cpuset.mems as the node decided it (ncm_node_container_mems): NUMA node i is
         * bit i; 0: leave cpuset.mems as it is */
        ncm_bitmask mems;
} ncm_enforce_container;

/* A pod and its containers (init containers, then app containers, in spec order). */
typedef struct ncm_enforce_pod {
        const ncm_pod *pod;
        const ncm_enforce_container *containers;
        size_t n_containers;
} ncm_enforce_pod;

/* A running container that holds exclusive CPUs and asks for CRI-O's knobs. */
typedef struct ncm_enforce_knobbed {
        const ncm_pod *pod;
        const char *name;
        const ncm_cpuset *cpus; /* its exclusive CPUs */
        unsigned knobs;         /* NCM_KNOB_* (nodecm/cgroup-knobs.h) */
} ncm_enforce_knobbed;

/*
 * What isolation() is given: the whole picture, so that one call converges whatever happened
 * (an admission, a removal, a restart after a crash, a reconcile).
 */
typedef struct ncm_enforce_isolation {
        const ncm_cpuset *shared;   /* the shared pool (for containers the node does not hold) */
        const ncm_cpuset *all_cpus; /* the machine's CPUs */
        const ncm_enforce_knobbed *containers; /* every running container with a knob */
        size_t n_containers;
        const ncm_cpuset *irq_banned; /* the CPUs of those with irq-load-balancing disabled */
        const char *irqbalance;       /* irqBalanceConfigFile: "" find it, "none", a path */
        /* what to put back later (nodecm/cgroup-knobs.h), the node's; the enforcer calls
         * persist() once it has planned and before it writes anything */
        ncm_knob_memo *memo;
        int (*persist)(void *data, ncm_error *err);
        void *persist_data;
        unsigned fixed[NCM_KNOB_FIX_N]; /* out: what the call changed, by kind */
} ncm_enforce_isolation;

/*
 * An in-place resize (pod_resize): the pod as it was and as it is now. AFTER lists the
 * containers with their new cpusets; CPUS_BEFORE[i] is the cpuset AFTER's container i had.
 * The node calls pod_resize twice in one transaction, around the shared pool's pod_cpus calls:
 * PHASE SHRINK, for what goes down (containers whose limits fall get them first, then their
 * cpusets narrowed), and PHASE GROW, for what goes up (the pod cgroup, then containers whose
 * cpusets widen, then their limits). So a container never runs outside both its old and its
 * new cpuset, a parent's limit is never below a child's, and the shared containers leave the
 * CPUs a grown container takes before it gets them.
 */
enum { NCM_ENFORCE_RESIZE_SHRINK = 0, NCM_ENFORCE_RESIZE_GROW = 1 };

typedef struct ncm_enforce_resize {
        const ncm_pod *before;
        const ncm_enforce_pod *after;
        const ncm_cpuset *const *cpus_before;
        int phase;
} ncm_enforce_resize;

/* What start() is given. */
typedef struct ncm_enforce_start {
        const ncm_node_config *cfg;
        const ncm_cpuset *all_cpus;        /* the machine's CPUs */
        const ncm_cgroup_qos_usage *usage; /* the pods the node already holds */
        bool attach; /* started before by another process: check and set up, write nothing */
        /* isolatedCPUs exclude: CPUs no pod may get, out of node allocatable's cpu (NULL:
         * none). Added at the end. */
        const ncm_cpuset *unallocatable;
} ncm_enforce_start;

/*
 * The operations. Every one returns 0 or -errno with ERR naming what failed; a NULL member
 * does nothing. USAGE counts the requests of the other pods the node holds (never POD's), for
 * the burstable tier. Members may be added at the end.
 */
typedef struct ncm_enforcer_ops {
        const char *name;
        int (*start)(void *data, const ncm_enforce_start *s, ncm_error *err);
        int (*begin)(void *data, ncm_error *err);
        int (*pod_add)(void *data, const ncm_enforce_pod *p, const ncm_cgroup_qos_usage *usage,
                       ncm_error *err);
        int (*pod_cpus)(void *data, const ncm_enforce_pod *p, ncm_error *err);
        int (*pod_remove)(void *data, const ncm_pod *pod, const ncm_cgroup_qos_usage *usage,
                          ncm_error *err);
        int (*commit)(void *data, ncm_error *err);
        int (*rollback)(void *data, ncm_error *err);
        void (*free)(void *data);
        /*
         * Make the machine match ISO (CRI-O's knobs, the interrupts, containers the node does
         * not hold), inside a transaction, after the pod calls and before pod_remove; undone by
         * rollback like the rest. Counts what it changed in ISO->fixed.
         */
        int (*isolation)(void *data, ncm_enforce_isolation *iso, ncm_error *err);
        /* a resized pod, in two phases (ncm_enforce_resize); NULL: the enforcer cannot see a
         * resize (the OCI hook's), the reconcile loop keeps the cpusets */
        int (*pod_resize)(void *data, const ncm_enforce_resize *r,
                          const ncm_cgroup_qos_usage *usage, ncm_error *err);
} ncm_enforcer_ops;

typedef struct ncm_enforcer ncm_enforcer;

/* An enforcer from OPS (must outlive it) and DATA (released by OPS->free). -ENOMEM. */
NCM_API int ncm_enforcer_new(const ncm_enforcer_ops *ops, void *data, ncm_enforcer **ret);
NCM_API ncm_enforcer *ncm_enforcer_free(ncm_enforcer *e);
NCM_DEFINE_AUTOPTR(ncm_enforcer, ncm_enforcer_free)
NCM_API const char *ncm_enforcer_name(const ncm_enforcer *e) NCM_PURE;
NCM_API const ncm_enforcer_ops *ncm_enforcer_get_ops(const ncm_enforcer *e) NCM_PURE;
NCM_API void *ncm_enforcer_get_data(const ncm_enforcer *e) NCM_PURE;

/* "none": nothing is enforced (the simulator). -ENOMEM. */
NCM_API int ncm_enforcer_none_new(ncm_enforcer **ret, ncm_error *err);

/* Where the cgroup enforcers work. */
typedef struct ncm_enforcer_cgroup_options {
        /* The cgroup mount root: "/sys/fs/cgroup" when NULL (cgroupfs); any directory laid out
         * as one in tests. */
        const char *mount_root;
        /* The machine's root for /proc and /sys (mountinfo, hugepage sizes, capacity): "/"
         * when NULL. */
        const char *sys_root;
        /* plan only: plan for a typical cgroup v1 (1) or v2 (2) machine instead of reading
         * MOUNT_ROOT (0). */
        int cgroup_version;
        /* Node capacity instead of reading the machine's (NULL: read it). */
        const ncm_resource_list *capacity;
        /* cgroupfs on a fake tree: hooks that fill in and empty directories (tests). */
        const ncm_cgroup_exec_options *exec;
} ncm_enforcer_cgroup_options;

/*
 * "cgroupfs": the kubelet's cgroups through the cgroup mount root, on cgroup v1 (hybrid mode
 * included) or v2, with the cgroupfs naming driver (cgroupDriver systemd is refused at start:
 * its cgroups are systemd's to make). Container cgroups are named by container name below the
 * pod cgroup, as `nodecm cgroup apply` makes them. -ENOMEM, or the layout's errors.
 */
NCM_API int ncm_enforcer_cgroupfs_new(const ncm_enforcer_cgroup_options *o, ncm_enforcer **ret,
                                      ncm_error *err);

/*
 * "plan": records, per committed transaction, the plan of directories and files the cgroupfs
 * enforcer would write (either naming driver), without touching anything.
 */
NCM_API int ncm_enforcer_plan_new(const ncm_enforcer_cgroup_options *o, ncm_enforcer **ret,
                                  ncm_error *err);

/* Where a container's cgroup is (below the hierarchies: "/kubepods/pod<uid>/<id>"), as the
 * runtime that made it names it: 0 and *RET (malloc'd), or -ENOENT when not known (yet). */
typedef int (*ncm_enforcer_cgroup_fn)(void *data, const char *pod_uid, const char *name,
                                      char **ret);

/*
 * "knobs": for nodes whose runtime makes the cgroups and sets the cpusets (a CRI runtime):
 * only isolation() (CRI-O's knobs and the interrupts; nodecm/cgroup-knobs.h), on the cgroups
 * RESOLVE finds (ncm_enforcer_knobs_set_resolver; ncm_knobs_runtime_cgroups() finds its pod's
 * cgroup and kubepods above). Node allocatable, the QoS tiers and the pods' cgroups are
 * left to the runtime and the kubelet. -ENOMEM, or the layout's errors at start.
 */
NCM_API int ncm_enforcer_knobs_new(const ncm_enforcer_cgroup_options *o, ncm_enforcer **ret,
                                   ncm_error *err);
/* Set the knobs enforcer's resolver (nothing for other enforcers). Until then no container's
 * cgroup is known: the knobs wait for it. */
NCM_API void ncm_enforcer_knobs_set_resolver(ncm_enforcer *e, ncm_enforcer_cgroup_fn fn,
                                             void *data);

/* The plan enforcer's record of committed writes (NULL for other enforcers). */
NCM_API const ncm_cgroup_plan *ncm_enforcer_plan_get(const ncm_enforcer *e) NCM_PURE;
/* ... and of its writes on the machine beside the cgroups (interrupts, irqbalance), paths
 * under the options' sys_root. */
NCM_API const ncm_cgroup_plan *ncm_enforcer_plan_machine_get(const ncm_enforcer *e) NCM_PURE;

#ifdef __cplusplus
}
#endif
#endif
