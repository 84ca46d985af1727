/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the version drivers, and the queries that work on both versions. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/fs.h>
#include "base/array.h"

#include "cgroups-internal.h"

const unsigned ncm__cgroup_v1_order[] = {
                NCM_CGROUP_CTRL_CPUSET,  NCM_CGROUP_CTRL_MEMORY, NCM_CGROUP_CTRL_CPU,
                NCM_CGROUP_CTRL_CPUACCT, NCM_CGROUP_CTRL_PIDS,   NCM_CGROUP_CTRL_HUGETLB,
                NCM_CGROUP_CTRL_SYSTEMD,
};
const size_t ncm__cgroup_v1_order_len = NCM_ELEMENTSOF(ncm__cgroup_v1_order);

size_t ncm__cgroup_v1_hierarchies(const ncm_cgroup_layout *l, const ncm_cgroup_hierarchy **ret)
{
        size_t n = 0;

        for (size_t i = 0; i < ncm__cgroup_v1_order_len; i++) {
                const ncm_cgroup_hierarchy *h = ncm_cgroup_layout_find(l, ncm__cgroup_v1_order[i]);
                bool seen = false;
                if (!h)
                        continue;
                for (size_t k = 0; k < n; k++)
                        if (ret[k] == h)
                                seen = true;
                if (!seen && n < NCM_CGROUP_MAX_HIERARCHIES)
                        ret[n++] = h;
        }
        return n;
}

int ncm__cgroup_path(const ncm_cgroup_hierarchy *h, const char *cgpath, const char *file, char *buf,
                     size_t size)
{
        int n;

        if (strcmp(cgpath, "/") == 0)
                cgpath = "";
        if (file)
                n = snprintf(buf, size, "%s%s/%s", h->dir, cgpath, file);
        else
                n = snprintf(buf, size, "%s%s", h->dir, *cgpath || *h->dir ? cgpath : "/");
        if (n < 0 || (size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

void ncm__cgroup_i64(int64_t v, char *buf, size_t size)
{
        snprintf(buf, size, "%" PRId64, v);
}

int ncm__cgroup_plan_op(ncm_cgroup_plan *plan, ncm_cgroup_op_kind kind, unsigned flags,
                        const ncm_cgroup_hierarchy *h, const char *cgpath, const char *file,
                        ncm_error *err)
{
        char path[4096];

        if (ncm__cgroup_path(h, cgpath, file, path, sizeof(path)) < 0)
                return ncm_error_set(err, ENAMETOOLONG, "cgroup path '%s' too long", cgpath);
        if (ncm_cgroup_plan_add(plan, kind, flags, path, NULL) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        return 0;
}

int ncm__cgroup_plan_write(ncm_cgroup_plan *plan, const ncm_cgroup_hierarchy *h, const char *cgpath,
                           const char *file, const char *value, unsigned flags, ncm_error *err)
{
        char path[4096];

        if (ncm__cgroup_path(h, cgpath, file, path, sizeof(path)) < 0)
                return ncm_error_set(err, ENAMETOOLONG, "cgroup path '%s' too long", cgpath);
        if (ncm_cgroup_plan_add(plan, NCM_CGROUP_OP_WRITE, flags, path, value) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        return 0;
}

size_t ncm__cgroup_hugetlb_limits(const ncm_cgroup_layout *l, const ncm_cgroup_resources *res,
                                  ncm_cgroup_hugepage *ret, size_t max)
{
        size_t n = 0;

        /* The machine's page sizes, each at 0 unless listed. */
        for (size_t i = 0; i < l->n_hugepage_sizes && n < max; i++) {
                ret[n].page_size = l->hugepage_sizes[i];
                ret[n].limit = 0;
                n++;
        }
        for (size_t i = 0; i < res->n_hugepages; i++) {
                size_t k;
                for (k = 0; k < n; k++)
                        if (ret[k].page_size == res->hugepages[i].page_size)
                                break;
                if (k == n) {
                        if (n == max)
                                continue;
                        n++;
                }
                ret[k] = res->hugepages[i];
        }
        /* Ascending page size: Go's map order is random, this one is fixed. */
        for (size_t i = 1; i < n; i++)
                for (size_t k = i; k > 0 && ret[k - 1].page_size > ret[k].page_size; k--) {
                        ncm_cgroup_hugepage t = ret[k];
                        ret[k] = ret[k - 1];
                        ret[k - 1] = t;
                }
        return n;
}

int ncm__cgroup_plan_hugetlb(ncm_cgroup_plan *plan, const ncm_cgroup_layout *l,
                             const ncm_cgroup_hierarchy *h, const char *cgpath,
                             const ncm_cgroup_resources *res, const char *limit_suffix,
                             const char *rsvd_suffix, ncm_error *err)
{
        ncm_cgroup_hugepage lim[2 * NCM_CGROUP_MAX_HUGEPAGE_SIZES];
        size_t n = ncm__cgroup_hugetlb_limits(l, res, lim, NCM_ELEMENTSOF(lim));
        unsigned group = ncm_cgroup_plan_new_group(plan);
        int r = 0;

        for (size_t i = 0; i < n && r >= 0; i++) {
                char size[32], file[64], v[32];
                if (ncm_cgroup_hugepage_size_name(lim[i].page_size, size, sizeof(size)) < 0)
                        continue;
                ncm__cgroup_i64(lim[i].limit, v, sizeof(v));
                snprintf(file, sizeof(file), "hugetlb.%s.%s", size, limit_suffix);
                r = ncm__cgroup_plan_write(plan, h, cgpath, file, v, 0, err);
                if (r < 0)
                        break;
                /* Reserved limits exist since Linux 5.7; once one is missing, libcontainer
                 * stops trying, so they share one group. */
                snprintf(file, sizeof(file), "hugetlb.%s.%s", size, rsvd_suffix);
                r = ncm__cgroup_plan_write(plan, h, cgpath, file, v, NCM_CGROUP_OPF_OPTIONAL, err);
                if (r >= 0)
                        plan->ops[plan->n_ops - 1].group = group;
        }
        return r;
}

ssize_t ncm__cgroup_read(int rootfd, const ncm_cgroup_hierarchy *h, const char *cgpath,
                         const char *file, char *buf, size_t size, const char *display_root,
                         ncm_error *err)
{
        char path[4096];
        ssize_t n;

        if (ncm__cgroup_path(h, cgpath, file, path, sizeof(path)) < 0)
                return ncm_error_set(err, ENAMETOOLONG, "cgroup path '%s' too long", cgpath);
        n = ncm_fs_read(rootfd, path, buf, size, NULL);
        if (n < 0)
                return ncm_error_errno(err, (int)-n, "read '%s%s'",
                                       strcmp(display_root, "/") == 0 ? "" : display_root, path);
        return n;
}

/* ---- queries on both versions ---- */

static size_t hierarchies(const ncm_cgroup_layout *l, const ncm_cgroup_hierarchy **ret)
{
        if (ncm_cgroup_layout_version(l) == 2) {
                ret[0] = &l->hierarchies[0];
                return l->n_hierarchies ? 1 : 0;
        }
        return ncm__cgroup_v1_hierarchies(l, ret);
}

static int collect_pids(int rootfd, const char *dir, int depth, int *ret_pids, size_t max,
                        size_t *n, const char *display_root, ncm_error *err)
{
        char file[4096], buf[65536];
        DIR *d = NULL;
        struct dirent *de;
        ssize_t len;
        int r;

        if (depth > 64)
                return ncm_error_set(err, ELOOP, "'%s': cgroup tree too deep", dir);
        if ((size_t)snprintf(file, sizeof(file), "%s/cgroup.procs", dir) >= sizeof(file))
                return ncm_error_set(err, ENAMETOOLONG, "'%s': path too long", dir);
        len = ncm_fs_read(rootfd, file, buf, sizeof(buf), NULL);
        if (len == -EFBIG) {
                /* More processes than fit: it is not empty, which is all callers need. */
                if (*n < max)
                        ret_pids[*n] = -1;
                (*n)++;
        } else if (len > 0) {
                for (char *p = buf; *p;) {
                        long pid = strtol(p, &p, 10);
                        bool seen = false;
                        /* The same process shows up once per hierarchy. */
                        for (size_t k = 0; k < *n && k < max; k++)
                                seen = seen || ret_pids[k] == (int)pid;
                        if (pid > 0 && !seen) {
                                if (*n < max)
                                        ret_pids[*n] = (int)pid;
                                (*n)++;
                        }
                        while (*p == '\n' || *p == ' ')
                                p++;
                        if (*p && (*p < '0' || *p > '9'))
                                break;
                }
        }
        r = ncm_fs_opendir(rootfd, dir, &d, NULL);
        if (r < 0)
                return r == -ENOENT ? 0
                                    : ncm_error_errno(err, -r, "open '%s%s'", display_root, dir);
        while ((de = readdir(d)) != NULL) {
                char child[4096];
                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                if ((size_t)snprintf(child, sizeof(child), "%s/%s", dir, de->d_name) >=
                    sizeof(child))
                        continue;
                r = collect_pids(rootfd, child, depth + 1, ret_pids, max, n, display_root, err);
                if (r < 0) {
                        closedir(d);
                        return r;
                }
        }
        closedir(d);
        return 0;
}

int ncm_cgroup_pids(const ncm_cgroup_layout *l, int rootfd, const char *cgpath, int *ret_pids,
                    size_t max, size_t *ret_n, ncm_error *err)
{
        const ncm_cgroup_hierarchy *hs[NCM_CGROUP_MAX_HIERARCHIES];
        size_t nh = hierarchies(l, hs), n = 0;

        for (size_t i = 0; i < nh; i++) {
                char dir[4096];
                int r;
                if (ncm__cgroup_path(hs[i], cgpath, NULL, dir, sizeof(dir)) < 0)
                        return ncm_error_set(err, ENAMETOOLONG, "cgroup path '%s' too long",
                                             cgpath);
                r = collect_pids(rootfd, dir, 0, ret_pids, max, &n, l->display_root, err);
                if (r < 0)
                        return r;
        }
        *ret_n = n;
        return 0;
}

char **ncm_cgroup_strv_free(char **v)
{
        if (v)
                for (char **p = v; *p; p++)
                        free(*p);
        free(v);
        return NULL;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int ncm_cgroup_children(const ncm_cgroup_layout *l, int rootfd, const char *cgpath, char ***ret,
                        ncm_error *err)
{
        const ncm_cgroup_hierarchy *hs[NCM_CGROUP_MAX_HIERARCHIES];
        size_t nh = hierarchies(l, hs), n = 0, cap = 0;
        char **v = NULL;

        for (size_t i = 0; i < nh; i++) {
                char dir[4096];
                DIR *d = NULL;
                struct dirent *de;
                int r;
                if (ncm__cgroup_path(hs[i], cgpath, NULL, dir, sizeof(dir)) < 0) {
                        ncm_cgroup_strv_free(v);
                        return ncm_error_set(err, ENAMETOOLONG, "cgroup path '%s' too long",
                                             cgpath);
                }
                r = ncm_fs_opendir(rootfd, dir, &d, NULL);
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        ncm_cgroup_strv_free(v);
                        return ncm_error_errno(err, -r, "open '%s%s'", l->display_root, dir);
                }
                while ((de = readdir(d)) != NULL) {
                        bool seen = false;
                        if (de->d_type != DT_DIR || de->d_name[0] == '.')
                                continue;
                        for (size_t k = 0; k < n; k++)
                                if (strcmp(v[k], de->d_name) == 0)
                                        seen = true;
                        if (seen)
                                continue;
                        /* the slot after the new name is the (zeroed) terminator */
                        if (ncm__array_grow(v, cap, n + 1) < 0 || !(v[n] = strdup(de->d_name))) {
                                closedir(d);
                                ncm_cgroup_strv_free(v);
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        }
                        n++;
                }
                closedir(d);
        }
        if (!v) {
                v = calloc(1, sizeof(*v));
                if (!v)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        qsort(v, n, sizeof(*v), cmp_str);
        *ret = v;
        return 0;
}

const ncm__cgroup_ops *ncm__cgroup_ops_for(const ncm_cgroup_layout *l)
{
        return ncm_cgroup_layout_version(l) == 2 ? &ncm__cgroup_ops_v2 : &ncm__cgroup_ops_v1;
}

int ncm_cgroup_plan_set(const ncm_cgroup_layout *l, const char *cgpath,
                        const ncm_cgroup_resources *res, bool create, ncm_cgroup_plan *plan,
                        ncm_error *err)
{
        return ncm__cgroup_ops_for(l)->plan_set(l, cgpath, res, create, plan, err);
}

int ncm_cgroup_plan_remove(const ncm_cgroup_layout *l, const char *cgpath, ncm_cgroup_plan *plan,
                           ncm_error *err)
{
        return ncm__cgroup_ops_for(l)->plan_remove(l, cgpath, plan, err);
}

int ncm_cgroup_read(const ncm_cgroup_layout *l, int rootfd, const char *cgpath,
                    ncm_cgroup_resources *ret, ncm_error *err)
{
        return ncm__cgroup_ops_for(l)->read(l, rootfd, cgpath, ret, err);
}

int ncm_cgroup_exists(const ncm_cgroup_layout *l, int rootfd, const char *cgpath, ncm_error *err)
{
        return ncm__cgroup_ops_for(l)->exists(l, rootfd, cgpath, err);
}
