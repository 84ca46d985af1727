/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A node configuration's cgroups on one machine: the layout of its cgroup mount (detected, or
 * a typical v1 or v2 machine for plans), a cgroup manager set up from the configuration
 * (naming driver, cgroup root, pod settings), node allocatable from the machine's capacity and
 * the kubepods limits that enforce it. What `nodecm cgroup`, `nodecm node-allocatable` and the
 * cgroup enforcers share.
 */
#ifndef NODECM_NODE_CGROUPS_H
#define NODECM_NODE_CGROUPS_H

#include <stdbool.h>
#include <nodecm/buf.h>
#include <nodecm/cgroups.h>
#include <nodecm/common.h>
#include <nodecm/cpuset.h>
#include <nodecm/error.h>
#include <nodecm/node-config.h>
#include <nodecm/pod.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncm_node_cgroups ncm_node_cgroups;

typedef struct ncm_node_cgroups_options {
        const char *mount_root; /* the cgroup mount root; NULL: /sys/fs/cgroup */
        const char *sys_root;   /* the machine's root for /proc and /sys; NULL: / */
        /* 1 or 2: a typical cgroup v1 or v2 machine (ncm_cgroup_layout_standard) at MOUNT_ROOT,
         * not read; 0: detect the layout of MOUNT_ROOT */
        int cgroup_version;
        bool act;                          /* open MOUNT_ROOT to act on it (else plan only) */
        const ncm_resource_list *capacity; /* node capacity; NULL: read the machine's */
        const ncm_cpuset *all_cpus; /* the CPUs the none policy gives kubepods; NULL: 0..cpu-1 of
                                       CAPACITY when given, else the machine's online CPUs */
        bool no_allocatable;        /* leave kubepods' limits alone: no capacity is read */
        const ncm_cgroup_exec_options *exec; /* fake-tree hooks (tests) */
        /* CPUs no pod may get (isolatedCPUs exclude): out of allocatable cpu and the kubepods
         * limits. NULL: none. */
        const ncm_cpuset *unallocatable_cpus;
} ncm_node_cgroups_options;

/*
 * Set up CFG's cgroups as O says. Errors name what failed: the mount root, the layout
 * (`'/x' is not a cgroup filesystem`), a --cgroup-version that differs from the detected one,
 * the machine's capacity, node allocatable (`invalid Node Allocatable configuration...`,
 * -NCM_E_UNSATISFIABLE). CFG must outlive *RET.
 */
NCM_API int ncm_node_cgroups_open(const ncm_node_config *cfg, const ncm_node_cgroups_options *o,
                                  ncm_node_cgroups **ret, ncm_error *err);
NCM_API ncm_node_cgroups *ncm_node_cgroups_free(ncm_node_cgroups *c);
NCM_DEFINE_AUTOPTR(ncm_node_cgroups, ncm_node_cgroups_free)

/* The cgroup manager (kubepods' limits set unless no_allocatable). */
NCM_API const ncm_cgroup_manager *ncm_node_cgroups_manager(const ncm_node_cgroups *c) NCM_PURE;
/* Its layout; "cgroup v1", "cgroup v1 (hybrid)" or "cgroup v2". */
NCM_API const ncm_cgroup_layout *ncm_node_cgroups_layout(const ncm_node_cgroups *c) NCM_PURE;
NCM_API const char *ncm_node_cgroups_mode_name(const ncm_node_cgroups *c) NCM_PURE;
/* The capacity and node allocatable (NULL with no_allocatable). */
NCM_API const ncm_resource_list *ncm_node_cgroups_capacity(const ncm_node_cgroups *c) NCM_PURE;
NCM_API const ncm_node_allocatable *
ncm_node_cgroups_allocatable(const ncm_node_cgroups *c) NCM_PURE;

/* Append what node allocatable enforcement writes (kubepods, the reserved cgroups). */
NCM_API int ncm_node_cgroups_plan_node(const ncm_node_cgroups *c, ncm_cgroup_plan *plan,
                                       ncm_error *err);

/*
 * Append, one line each, POD's cgroup and its containers' (sidecars in start order, then app
 * containers) as the kernel has them: "<path>: shares=.. quota=.. period=.. memory=.. pids=..
 * cpus=.. mems=.." (v2 shares from cpu.weight; "-" for what is not set, "max" for no limit),
 * or "<path>: missing". A pod without a cgroup is -NCM_E_NOT_FOUND.
 */
NCM_API int ncm_node_cgroups_show_pod(const ncm_node_cgroups *c, const ncm_pod *pod, ncm_buf *out,
                                      ncm_error *err);

/*
 * Append POD's PLAN: a header ("# pod NS/NAME uid UID (QOS): DRIVER driver, MODE at ROOT") and
 * the plan's text, or with JSON one object {"pod", "qos", "driver", "cgroupVersion", "plan"}.
 */
NCM_API void ncm_node_cgroups_format_plan(const ncm_node_cgroups *c, const ncm_pod *pod,
                                          const ncm_cgroup_plan *plan, bool json, ncm_buf *out);

/*
 * Set the cpuset of POD's long-running container CONTAINER (a sidecar or app container; EINVAL
 * otherwise) to CPUS (and MEMS when given): ncm_cgroup_manager_set_container_cpuset().
 */
NCM_API int ncm_node_cgroups_set_cpus(const ncm_node_cgroups *c, const ncm_pod *pod,
                                      const char *container, const ncm_cpuset *cpus,
                                      const ncm_cpuset *mems, ncm_error *err);

#ifdef __cplusplus
}
#endif
#endif
