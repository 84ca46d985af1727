/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroupfs on cgroup v1: one hierarchy per controller (opencontainers/cgroups fs). Creating a
 * cgroup makes its directory in every managed hierarchy, in libcontainer's subsystem order;
 * a new cpuset cgroup gets cpuset.cpus and cpuset.mems before anything can move in (the kernel
 * refuses tasks in a cpuset with empty cpus or mems). Setting writes, in that same order:
 * cpuset.cpus/mems, memory.limit_in_bytes, cpu.shares (read back), cpu.cfs_period_us (retried
 * after the quota on EINVAL), cpu.cfs_quota_us, pids.max, hugetlb.<size>.limit_in_bytes and
 * .rsvd.limit_in_bytes (when the kernel has it).
 *
 * libcontainer also creates the directory in blkio, freezer, perf_event and the other
 * hierarchies it knows (and in the unified tree in hybrid mode), although nothing is written
 * there; nodecm creates only the hierarchies the kubelet checks and writes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/fs.h>

#include "cgroups-internal.h"

static int plan_cpuset(ncm_cgroup_plan *plan, const ncm_cgroup_hierarchy *h, const char *cgpath,
                       const ncm_cgroup_resources *res, ncm_error *err)
{
        int r = 0;

        if (res && res->cpuset_cpus) {
                ncm_autofree char *s = ncm_cpuset_format_list(res->cpuset_cpus);
                if (!s)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                r = ncm__cgroup_plan_write(plan, h, cgpath, "cpuset.cpus", s, 0, err);
        }
        if (r >= 0 && res && res->cpuset_mems) {
                ncm_autofree char *s = ncm_cpuset_format_list(res->cpuset_mems);
                if (!s)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                r = ncm__cgroup_plan_write(plan, h, cgpath, "cpuset.mems", s, 0, err);
        }
        return r;
}

static int v1_plan_set(const ncm_cgroup_layout *l, const char *cgpath,
                       const ncm_cgroup_resources *res, bool create, ncm_cgroup_plan *plan,
                       ncm_error *err)
{
        const ncm_cgroup_hierarchy *hs[NCM_CGROUP_MAX_HIERARCHIES];
        const ncm_cgroup_hierarchy *h;
        size_t nh = ncm__cgroup_v1_hierarchies(l, hs);
        char v[64];
        int r = 0;

        if (nh == 0)
                return ncm_error_set(err, ENOENT, "no cgroup v1 hierarchy to manage");
        if (create && strcmp(cgpath, "/") == 0)
                return ncm_error_set(err, EINVAL, "cannot create the root cgroup");

        /* Apply(-1): make the directories; the cpuset gets its CPUs and memory nodes first. */
        for (size_t i = 0; create && i < nh && r >= 0; i++) {
                r = ncm__cgroup_plan_op(plan, NCM_CGROUP_OP_MKDIR, NCM_CGROUP_OPF_CREATE, hs[i],
                                        cgpath, NULL, err);
                if (r >= 0 && (hs[i]->controllers & NCM_CGROUP_CTRL_CPUSET)) {
                        r = plan_cpuset(plan, hs[i], cgpath, res, err);
                        if (r >= 0)
                                r = ncm__cgroup_plan_op(plan, NCM_CGROUP_OP_INHERIT,
                                                        NCM_CGROUP_OPF_CREATE, hs[i], cgpath,
                                                        "cpuset.cpus", err);
                        if (r >= 0)
                                r = ncm__cgroup_plan_op(plan, NCM_CGROUP_OP_INHERIT,
                                                        NCM_CGROUP_OPF_CREATE, hs[i], cgpath,
                                                        "cpuset.mems", err);
                }
        }
        if (r < 0 || !res)
                return r;

        /* Set(): the subsystems in libcontainer's order. */
        if (!create && (h = ncm_cgroup_layout_find(l, NCM_CGROUP_CTRL_CPUSET)))
                r = plan_cpuset(plan, h, cgpath, res, err);

        h = ncm_cgroup_layout_find(l, NCM_CGROUP_CTRL_MEMORY);
        if (r >= 0 && h && res->has_memory && res->memory != 0) {
                ncm__cgroup_i64(res->memory, v, sizeof(v));
                r = ncm__cgroup_plan_write(plan, h, cgpath, "memory.limit_in_bytes", v, 0, err);
        }

        h = ncm_cgroup_layout_find(l, NCM_CGROUP_CTRL_CPU);
        if (r >= 0 && h) {
                if (res->has_cpu_shares && res->cpu_shares != 0) {
                        snprintf(v, sizeof(v), "%" PRIu64, res->cpu_shares);
                        r = ncm__cgroup_plan_write(plan, h, cgpath, "cpu.shares", v,
                                                   NCM_CGROUP_OPF_READBACK, err);
                }
                if (r >= 0 && res->has_cpu_period && res->cpu_period != 0) {
                        snprintf(v, sizeof(v), "%" PRIu64, res->cpu_period);
                        r = ncm__cgroup_plan_write(plan, h, cgpath, "cpu.cfs_period_us", v,
                                                   NCM_CGROUP_OPF_RETRY_AFTER_NEXT, err);
                }
                if (r >= 0 && res->has_cpu_quota && res->cpu_quota != 0) {
                        ncm__cgroup_i64(res->cpu_quota, v, sizeof(v));
                        r = ncm__cgroup_plan_write(plan, h, cgpath, "cpu.cfs_quota_us", v, 0, err);
                }
        }

        h = ncm_cgroup_layout_find(l, NCM_CGROUP_CTRL_PIDS);
        if (r >= 0 && h && res->has_pids && res->pids != 0) {
                if (res->pids > 0)
                        ncm__cgroup_i64(res->pids, v, sizeof(v));
                else
                        snprintf(v, sizeof(v), "max");
                r = ncm__cgroup_plan_write(plan, h, cgpath, "pids.max", v, 0, err);
        }

        h = ncm_cgroup_layout_find(l, NCM_CGROUP_CTRL_HUGETLB);
        if (r >= 0 && h && res->has_hugepages)
                r = ncm__cgroup_plan_hugetlb(plan, l, h, cgpath, res, "limit_in_bytes",
                                             "rsvd.limit_in_bytes", err);
        return r;
}

static int v1_plan_remove(const ncm_cgroup_layout *l, const char *cgpath, ncm_cgroup_plan *plan,
                          ncm_error *err)
{
        const ncm_cgroup_hierarchy *hs[NCM_CGROUP_MAX_HIERARCHIES];
        size_t nh = ncm__cgroup_v1_hierarchies(l, hs);

        if (strcmp(cgpath, "/") == 0)
                return ncm_error_set(err, EINVAL, "cannot remove the root cgroup");
        for (size_t i = 0; i < nh; i++) {
                int r = ncm__cgroup_plan_op(plan, NCM_CGROUP_OP_RMDIR, 0, hs[i], cgpath, NULL, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Read an integer file; -ENOENT leaves *HAS false. */
static int read_i64(const ncm_cgroup_layout *l, int rootfd, unsigned ctrl, const char *cgpath,
                    const char *file, bool limit, bool *has, int64_t *ret, ncm_error *err)
{
        const ncm_cgroup_hierarchy *h = ncm_cgroup_layout_find(l, ctrl);
        char buf[64];
        ssize_t n;
        int r;

        if (!h)
                return 0;
        n = ncm__cgroup_read(rootfd, h, cgpath, file, buf, sizeof(buf), l->display_root, err);
        if (n < 0)
                return (int)n;
        r = limit ? ncm_cgroup_parse_limit(buf, ret) : ncm_cgroup_parse_int64(buf, ret);
        if (r < 0)
                return ncm_error_set(err, -r, "%s%s/%s: cannot parse '%s'", h->dir, cgpath, file,
                                     buf);
        *has = true;
        return 0;
}

static int read_cpuset(const ncm_cgroup_hierarchy *h, int rootfd, const char *cgpath,
                       const char *file, const char *display_root, ncm_cpuset **ret, ncm_error *err)
{
        char buf[16384];
        ssize_t n = ncm__cgroup_read(rootfd, h, cgpath, file, buf, sizeof(buf), display_root, err);

        if (n < 0)
                return (int)n;
        return ncm_cpuset_parse_sysfs_list(buf, ret, err);
}

static int v1_read(const ncm_cgroup_layout *l, int rootfd, const char *cgpath,
                   ncm_cgroup_resources *ret, ncm_error *err)
{
        ncm_cgroup_resources res;
        const ncm_cgroup_hierarchy *h;
        int64_t v = 0;
        bool has = false;
        int r;

        ncm_cgroup_resources_init(&res);
        r = read_i64(l, rootfd, NCM_CGROUP_CTRL_CPU, cgpath, "cpu.shares", false, &has, &v, err);
        if (r >= 0 && has) {
                res.has_cpu_shares = true;
                res.cpu_shares = (uint64_t)v;
        }
        has = false;
        if (r >= 0)
                r = read_i64(l, rootfd, NCM_CGROUP_CTRL_CPU, cgpath, "cpu.cfs_quota_us", false,
                             &res.has_cpu_quota, &res.cpu_quota, err);
        if (r >= 0)
                r = read_i64(l, rootfd, NCM_CGROUP_CTRL_CPU, cgpath, "cpu.cfs_period_us", false,
                             &has, &v, err);
        if (r >= 0 && has) {
                res.has_cpu_period = true;
                res.cpu_period = (uint64_t)v;
        }
        if (r >= 0)
                r = read_i64(l, rootfd, NCM_CGROUP_CTRL_MEMORY, cgpath, "memory.limit_in_bytes",
                             true, &res.has_memory, &res.memory, err);
        if (r >= 0)
                r = read_i64(l, rootfd, NCM_CGROUP_CTRL_PIDS, cgpath, "pids.max", true,
                             &res.has_pids, &res.pids, err);
        h = ncm_cgroup_layout_find(l, NCM_CGROUP_CTRL_CPUSET);
        if (r >= 0 && h)
                r = read_cpuset(h, rootfd, cgpath, "cpuset.cpus", l->display_root, &res.cpuset_cpus,
                                err);
        if (r >= 0 && h)
                r = read_cpuset(h, rootfd, cgpath, "cpuset.mems", l->display_root, &res.cpuset_mems,
                                err);
        if (r < 0) {
                ncm_cgroup_resources_done(&res);
                return r;
        }
        *ret = res;
        return 0;
}

static int v1_exists(const ncm_cgroup_layout *l, int rootfd, const char *cgpath, ncm_error *err)
{
        /* The kubelet's allowlist, in libcontainer's order (Go walks a map). */
        static const unsigned checked[] = {NCM_CGROUP_CTRL_CPUSET, NCM_CGROUP_CTRL_MEMORY,
                                           NCM_CGROUP_CTRL_CPU,    NCM_CGROUP_CTRL_CPUACCT,
                                           NCM_CGROUP_CTRL_PIDS,   NCM_CGROUP_CTRL_HUGETLB,
                                           NCM_CGROUP_CTRL_SYSTEMD};
        ncm_buf missing = NCM_BUF_INIT;
        int found_missing = 0;

        for (size_t i = 0; i < NCM_ELEMENTSOF(checked); i++) {
                const ncm_cgroup_hierarchy *h = ncm_cgroup_layout_find(l, checked[i]);
                char path[4096];
                int r;
                if (!h)
                        continue;
                if (ncm__cgroup_path(h, cgpath, NULL, path, sizeof(path)) < 0) {
                        ncm_buf_done(&missing);
                        return ncm_error_set(err, ENAMETOOLONG, "cgroup path '%s' too long",
                                             cgpath);
                }
                r = ncm_fs_exists(rootfd, path);
                if (r < 0) {
                        ncm_buf_done(&missing);
                        return ncm_error_errno(err, -r, "stat '%s%s'", l->display_root, path);
                }
                if (r == 0) {
                        bool dup = false;
                        /* Combined mounts (cpu,cpuacct) would be listed twice. */
                        if (missing.data && strstr(missing.data, path))
                                dup = true;
                        if (!dup) {
                                if (found_missing++)
                                        ncm_buf_puts(&missing, ", ");
                                if (strcmp(l->display_root, "/") != 0)
                                        ncm_buf_puts(&missing, l->display_root);
                                ncm_buf_puts(&missing, path);
                        }
                }
        }
        if (found_missing)
                ncm_error_set(err, ENOENT, "cgroup \"%s\" has some missing paths: %s", cgpath,
                              missing.data ? missing.data : "");
        ncm_buf_done(&missing);
        return found_missing ? 0 : 1;
}

const ncm__cgroup_ops ncm__cgroup_ops_v1 = {
                .name = "cgroupfs-v1",
                .version = 1,
                .plan_set = v1_plan_set,
                .plan_remove = v1_plan_remove,
                .read = v1_read,
                .exists = v1_exists,
};
