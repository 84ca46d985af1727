/* SPDX-License-Identifier: Apache-2.0 */
/* Internal helpers shared by the cgroup version drivers. */
#ifndef NCM_CGROUPS_INTERNAL_H
#define NCM_CGROUPS_INTERNAL_H

#include <nodecm/cgroups.h>

/* A naming driver's table (the verbs in cgroups.h call it). */
struct ncm_cgroup_naming_ops {
        const char *name; /* "cgroupfs", "systemd" */
        /* Append the path of NAME to B. -EINVAL when the driver cannot express it. */
        int (*to_path)(const ncm_cgroup_name *name, ncm_buf *b, ncm_error *err);
        /* Parse PATH back into *RET (which must be empty). */
        int (*from_path)(const char *path, ncm_cgroup_name *ret, ncm_error *err);
        /* Append the path of a container's cgroup below its pod's path POD_PATH. */
        int (*container_path)(const char *pod_path, const char *container, ncm_buf *b,
                              ncm_error *err);
};

/* A version driver: cgroupfs on v1 and on v2 (the verbs in cgroups.h call it). */
typedef struct ncm__cgroup_ops {
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
} ncm__cgroup_ops;

extern const ncm__cgroup_ops ncm__cgroup_ops_v1;
extern const ncm__cgroup_ops ncm__cgroup_ops_v2;
/* The driver for a layout's version. */
const ncm__cgroup_ops *ncm__cgroup_ops_for(const ncm_cgroup_layout *l);

/* The controllers of a cgroup v1 machine in libcontainer's subsystem order (fs.go). */
extern const unsigned ncm__cgroup_v1_order[];
extern const size_t ncm__cgroup_v1_order_len;

/*
 * The distinct v1 hierarchies of L that nodecm manages, in libcontainer's order. Returns the
 * number written to RET (at most NCM_CGROUP_MAX_HIERARCHIES).
 */
size_t ncm__cgroup_v1_hierarchies(const ncm_cgroup_layout *l, const ncm_cgroup_hierarchy **ret);

/*
 * "<hierarchy dir><cgpath>[/<file>]" into BUF: the path inside the root. -ENAMETOOLONG.
 * CGPATH "/" is the hierarchy's root.
 */
int ncm__cgroup_path(const ncm_cgroup_hierarchy *h, const char *cgpath, const char *file, char *buf,
                     size_t size);

/* Format a signed decimal into BUF. */
void ncm__cgroup_i64(int64_t v, char *buf, size_t size);

/* Append a WRITE of FILE below cgroup CGPATH of H, with the plan's error handling. */
int ncm__cgroup_plan_write(ncm_cgroup_plan *plan, const ncm_cgroup_hierarchy *h, const char *cgpath,
                           const char *file, const char *value, unsigned flags, ncm_error *err);

/* Append any other kind of operation on cgroup CGPATH of H (FILE may be NULL). */
int ncm__cgroup_plan_op(ncm_cgroup_plan *plan, ncm_cgroup_op_kind kind, unsigned flags,
                        const ncm_cgroup_hierarchy *h, const char *cgpath, const char *file,
                        ncm_error *err);

/*
 * The hugetlb limits RES asks for, one per page size: the machine's sizes plus any listed in
 * RES, ascending, unlisted sizes at 0.
 */
size_t ncm__cgroup_hugetlb_limits(const ncm_cgroup_layout *l, const ncm_cgroup_resources *res,
                                  ncm_cgroup_hugepage *ret, size_t max);

/*
 * Append the hugetlb writes of RES to PLAN: for each page size of ncm__cgroup_hugetlb_limits(),
 * "hugetlb.<size>.<LIMIT_SUFFIX>", then "hugetlb.<size>.<RSVD_SUFFIX>" as an optional write,
 * the reserved writes sharing one new group of PLAN. The versions differ only in the suffixes
 * (v1 "limit_in_bytes"/"rsvd.limit_in_bytes", v2 "max"/"rsvd.max"). Returns 0 or the error of
 * ncm__cgroup_plan_write().
 */
int ncm__cgroup_plan_hugetlb(ncm_cgroup_plan *plan, const ncm_cgroup_layout *l,
                             const ncm_cgroup_hierarchy *h, const char *cgpath,
                             const ncm_cgroup_resources *res, const char *limit_suffix,
                             const char *rsvd_suffix, ncm_error *err);

/* Read a control file of H/CGPATH into BUF with one read(2); "" when ENOENT and OPTIONAL. */
ssize_t ncm__cgroup_read(int rootfd, const ncm_cgroup_hierarchy *h, const char *cgpath,
                         const char *file, char *buf, size_t size, const char *display_root,
                         ncm_error *err);

#endif
