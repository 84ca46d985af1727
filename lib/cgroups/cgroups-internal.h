/* SPDX-License-Identifier: Apache-2.0 */
/* Internal helpers shared by the cgroup version drivers. */
#ifndef NCM_CGROUPS_INTERNAL_H
#define NCM_CGROUPS_INTERNAL_H

#include <nodecm/cgroups.h>

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
