/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroupfs on cgroup v2: one unified tree (opencontainers/cgroups fs2). Creating a cgroup
 * enables the root's controllers in the parent's cgroup.subtree_control (all at once, else one
 * by one, ignoring failures as CreateCgroupPath does) and makes the directory. Setting writes,
 * in fs2's order: pids.max, memory.max, cpu.weight, cpu.max, cpuset.cpus/mems,
 * hugetlb.<size>.max and .rsvd.max (when the kernel has it), then the unified files
 * memory.min and memory.low.
 *
 * The "domain invalid"/threaded checks of CreateCgroupPath are not reproduced: kubelet-owned
 * trees are domain cgroups.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/fs.h>

#include "cgroups-internal.h"

/* The kernel's order of cgroup.controllers. */
static const unsigned kernel_order[] = {
                NCM_CGROUP_CTRL_CPUSET, NCM_CGROUP_CTRL_CPU,     NCM_CGROUP_CTRL_IO,
                NCM_CGROUP_CTRL_MEMORY, NCM_CGROUP_CTRL_HUGETLB, NCM_CGROUP_CTRL_PIDS,
                NCM_CGROUP_CTRL_RDMA,   NCM_CGROUP_CTRL_MISC,
};

/* The controllers the kubelet needs (getSupportedUnifiedControllers). */
#define V2_NEEDED                                                                                  \
        (NCM_CGROUP_CTRL_CPU | NCM_CGROUP_CTRL_CPUSET | NCM_CGROUP_CTRL_MEMORY |                   \
         NCM_CGROUP_CTRL_HUGETLB | NCM_CGROUP_CTRL_PIDS)

/* The parent of cgroup path CGPATH ("/a/b" -> "/a", "/a" -> "/"). */
static void parent_of(const char *cgpath, char *buf, size_t size)
{
        const char *slash = strrchr(cgpath, '/');
        size_t len = slash ? (size_t)(slash - cgpath) : 0;

        if (len == 0 || len >= size) {
                snprintf(buf, size, "/");
                return;
        }
        memcpy(buf, cgpath, len);
        buf[len] = '\0';
}

static int write_list(const ncm_cgroup_plan *plan, const ncm_cpuset *s, char **ret)
{
        (void)plan;
        *ret = ncm_cpuset_format_list(s);
        return *ret ? 0 : -ENOMEM;
}

static int v2_plan_set(const ncm_cgroup_layout *l, const char *cgpath,
                       const ncm_cgroup_resources *res, bool create, ncm_cgroup_plan *plan,
                       ncm_error *err)
{
        const ncm_cgroup_hierarchy *h = &l->hierarchies[0];
        char v[128];
        int r = 0;

        if (l->n_hierarchies == 0)
                return ncm_error_set(err, ENOENT, "no cgroup v2 tree to manage");
        if (create && strcmp(cgpath, "/") == 0)
                return ncm_error_set(err, EINVAL, "cannot create the root cgroup");

        if (create) {
                char parent[4096];
                ncm_buf ctl = NCM_BUF_INIT;
                for (size_t i = 0; i < NCM_ELEMENTSOF(kernel_order); i++) {
                        if (!(l->v2_controllers & kernel_order[i]))
                                continue;
                        if (ctl.len)
                                ncm_buf_putc(&ctl, ' ');
                        ncm_buf_printf(&ctl, "+%s", ncm_cgroup_controller_name(kernel_order[i]));
                }
                if (ncm_buf_failed(&ctl)) {
                        ncm_buf_done(&ctl);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
                parent_of(cgpath, parent, sizeof(parent));
                if (ctl.len)
                        r = ncm__cgroup_plan_write(
                                        plan, h, parent, "cgroup.subtree_control", ctl.data,
                                        NCM_CGROUP_OPF_SUBTREE | NCM_CGROUP_OPF_CREATE, err);
                ncm_buf_done(&ctl);
                if (r >= 0)
                        r = ncm__cgroup_plan_op(plan, NCM_CGROUP_OP_MKDIR, NCM_CGROUP_OPF_CREATE, h,
                                                cgpath, NULL, err);
        }
        if (r < 0 || !res)
                return r;

        if (res->has_pids && res->pids != 0) {
                if (res->pids > 0)
                        ncm__cgroup_i64(res->pids, v, sizeof(v));
                else
                        snprintf(v, sizeof(v), "max");
                r = ncm__cgroup_plan_write(plan, h, cgpath, "pids.max", v, 0, err);
        }
        if (r >= 0 && res->has_memory && res->memory != 0) {
                if (res->memory < 0)
                        snprintf(v, sizeof(v), "max");
                else
                        ncm__cgroup_i64(res->memory, v, sizeof(v));
                r = ncm__cgroup_plan_write(plan, h, cgpath, "memory.max", v, 0, err);
        }
        if (r >= 0 && res->has_cpu_shares) {
                uint64_t w = res->oci_weight ? ncm_cgroup_shares_to_weight_oci(res->cpu_shares)
                                             : ncm_cgroup_shares_to_weight(res->cpu_shares);
                if (w != 0) {
                        snprintf(v, sizeof(v), "%" PRIu64, w);
                        r = ncm__cgroup_plan_write(plan, h, cgpath, "cpu.weight", v, 0, err);
                }
        }
        if (r >= 0 && ((res->has_cpu_quota && res->cpu_quota != 0) ||
                       (res->has_cpu_period && res->cpu_period != 0))) {
                uint64_t period = res->has_cpu_period && res->cpu_period ? res->cpu_period
                                                                         : NCM_CGROUP_QUOTA_PERIOD;
                if (res->has_cpu_quota && res->cpu_quota > 0)
                        snprintf(v, sizeof(v), "%" PRId64 " %" PRIu64, res->cpu_quota, period);
                else
                        snprintf(v, sizeof(v), "max %" PRIu64, period);
                r = ncm__cgroup_plan_write(plan, h, cgpath, "cpu.max", v, 0, err);
        }
        if (r >= 0 && res->cpuset_cpus) {
                ncm_autofree char *s = NULL;
                if (write_list(plan, res->cpuset_cpus, &s) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                r = ncm__cgroup_plan_write(plan, h, cgpath, "cpuset.cpus", s, 0, err);
        }
        if (r >= 0 && res->cpuset_mems) {
                ncm_autofree char *s = NULL;
                if (write_list(plan, res->cpuset_mems, &s) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                r = ncm__cgroup_plan_write(plan, h, cgpath, "cpuset.mems", s, 0, err);
        }
        if (r >= 0 && res->has_hugepages && (l->v2_controllers & NCM_CGROUP_CTRL_HUGETLB))
                r = ncm__cgroup_plan_hugetlb(plan, l, h, cgpath, res, "max", "rsvd.max", err);
        /* The Unified map; Go's order is random, this one is fixed: min, then low. */
        if (r >= 0 && res->has_memory_min) {
                ncm__cgroup_i64(res->memory_min, v, sizeof(v));
                r = ncm__cgroup_plan_write(plan, h, cgpath, "memory.min", v, 0, err);
        }
        if (r >= 0 && res->has_memory_low) {
                ncm__cgroup_i64(res->memory_low, v, sizeof(v));
                r = ncm__cgroup_plan_write(plan, h, cgpath, "memory.low", v, 0, err);
        }
        return r;
}

static int v2_plan_remove(const ncm_cgroup_layout *l, const char *cgpath, ncm_cgroup_plan *plan,
                          ncm_error *err)
{
        if (strcmp(cgpath, "/") == 0)
                return ncm_error_set(err, EINVAL, "cannot remove the root cgroup");
        if (l->n_hierarchies == 0)
                return ncm_error_set(err, ENOENT, "no cgroup v2 tree to manage");
        return ncm__cgroup_plan_op(plan, NCM_CGROUP_OP_RMDIR, 0, &l->hierarchies[0], cgpath, NULL,
                                   err);
}

static ssize_t read_opt(const ncm_cgroup_layout *l, int rootfd, const char *cgpath,
                        const char *file, char *buf, size_t size, ncm_error *err)
{
        ssize_t n = ncm__cgroup_read(rootfd, &l->hierarchies[0], cgpath, file, buf, size,
                                     l->display_root, err);
        if (n == -ENOENT) {
                ncm_error_clear(err);
                return 0; /* controller not enabled there */
        }
        return n < 0 ? n : 1;
}

static int v2_read(const ncm_cgroup_layout *l, int rootfd, const char *cgpath,
                   ncm_cgroup_resources *ret, ncm_error *err)
{
        ncm_cgroup_resources res;
        char buf[16384];
        ssize_t n;
        int r = 0;

        if (l->n_hierarchies == 0)
                return ncm_error_set(err, ENOENT, "no cgroup v2 tree to manage");
        ncm_cgroup_resources_init(&res);
#define BAD(file) ncm_error_set(err, EINVAL, "%s/%s: cannot parse '%s'", cgpath, file, buf)
        n = read_opt(l, rootfd, cgpath, "cpu.max", buf, sizeof(buf), err);
        if (n > 0) {
                int64_t q, p;
                if (ncm_cgroup_parse_cpu_max(buf, &q, &p) < 0) {
                        r = BAD("cpu.max");
                } else {
                        res.has_cpu_quota = res.has_cpu_period = true;
                        res.cpu_quota = q;
                        res.cpu_period = (uint64_t)p;
                }
        } else if (n < 0) {
                r = (int)n;
        }
        if (r >= 0 && (n = read_opt(l, rootfd, cgpath, "cpu.weight", buf, sizeof(buf), err)) > 0) {
                int64_t w;
                if (ncm_cgroup_parse_int64(buf, &w) < 0 || w < 1 || w > NCM_CGROUP_MAX_WEIGHT) {
                        r = BAD("cpu.weight");
                } else {
                        res.has_cpu_shares = true;
                        res.cpu_shares = ncm_cgroup_weight_to_shares((uint64_t)w);
                }
        } else if (r >= 0 && n < 0) {
                r = (int)n;
        }
        if (r >= 0 && (n = read_opt(l, rootfd, cgpath, "memory.max", buf, sizeof(buf), err)) > 0) {
                if (ncm_cgroup_parse_limit(buf, &res.memory) < 0)
                        r = BAD("memory.max");
                else
                        res.has_memory = true;
        } else if (r >= 0 && n < 0) {
                r = (int)n;
        }
        if (r >= 0 && (n = read_opt(l, rootfd, cgpath, "pids.max", buf, sizeof(buf), err)) > 0) {
                if (ncm_cgroup_parse_limit(buf, &res.pids) < 0)
                        r = BAD("pids.max");
                else
                        res.has_pids = true;
        } else if (r >= 0 && n < 0) {
                r = (int)n;
        }
        if (r >= 0 && (n = read_opt(l, rootfd, cgpath, "cpuset.cpus", buf, sizeof(buf), err)) > 0)
                r = ncm_cpuset_parse_sysfs_list(buf, &res.cpuset_cpus, err);
        else if (r >= 0 && n < 0)
                r = (int)n;
        if (r >= 0 && (n = read_opt(l, rootfd, cgpath, "cpuset.mems", buf, sizeof(buf), err)) > 0)
                r = ncm_cpuset_parse_sysfs_list(buf, &res.cpuset_mems, err);
        else if (r >= 0 && n < 0)
                r = (int)n;
#undef BAD
        if (r < 0) {
                ncm_cgroup_resources_done(&res);
                return r;
        }
        *ret = res;
        return 0;
}

static int v2_exists(const ncm_cgroup_layout *l, int rootfd, const char *cgpath, ncm_error *err)
{
        char buf[512];
        ssize_t n;
        unsigned have, missing;
        ncm_buf b = NCM_BUF_INIT;

        if (l->n_hierarchies == 0)
                return ncm_error_set(err, ENOENT, "no cgroup v2 tree to manage");
        n = ncm__cgroup_read(rootfd, &l->hierarchies[0], cgpath, "cgroup.controllers", buf,
                             sizeof(buf), l->display_root, err);
        if (n == -ENOENT) {
                ncm_error_set(err, ENOENT, "could not read controllers for cgroup \"%s\": %s",
                              cgpath, err ? err->msg : "");
                return 0;
        }
        if (n < 0)
                return (int)n;
        have = ncm_cgroup_parse_controllers(buf, (size_t)n);
        missing = (V2_NEEDED & l->v2_controllers) & ~have;
        if (!missing)
                return 1;
        /* sets.List order: sorted names. */
        {
                static const char *const sorted[] = {"cpu", "cpuset", "hugetlb", "memory", "pids"};
                for (size_t i = 0; i < NCM_ELEMENTSOF(sorted); i++) {
                        unsigned bit = ncm_cgroup_parse_controllers(sorted[i], strlen(sorted[i]));
                        if (!(missing & bit))
                                continue;
                        if (b.len)
                                ncm_buf_puts(&b, ", ");
                        ncm_buf_puts(&b, sorted[i]);
                }
        }
        ncm_error_set(err, ENOENT, "cgroup \"%s\" has some missing controllers: %s", cgpath,
                      b.data ? b.data : "");
        ncm_buf_done(&b);
        return 0;
}

const ncm__cgroup_ops ncm__cgroup_ops_v2 = {
                .name = "cgroupfs-v2",
                .version = 2,
                .plan_set = v2_plan_set,
                .plan_remove = v2_plan_remove,
                .read = v2_read,
                .exists = v2_exists,
};
