/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the hierarchies are: mode detection (statfs of the mount root, cgroup mounts from
 * mountinfo), standard layouts for plans, hugepage sizes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>

#include <nodecm/cgroups.h>
#include <nodecm/fs.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif

static const struct {
        unsigned bit;
        const char *name;
} controllers[] = {
                {NCM_CGROUP_CTRL_CPUSET, "cpuset"},   {NCM_CGROUP_CTRL_CPU, "cpu"},
                {NCM_CGROUP_CTRL_CPUACCT, "cpuacct"}, {NCM_CGROUP_CTRL_MEMORY, "memory"},
                {NCM_CGROUP_CTRL_PIDS, "pids"},       {NCM_CGROUP_CTRL_HUGETLB, "hugetlb"},
                {NCM_CGROUP_CTRL_SYSTEMD, "systemd"}, {NCM_CGROUP_CTRL_IO, "io"},
                {NCM_CGROUP_CTRL_RDMA, "rdma"},       {NCM_CGROUP_CTRL_MISC, "misc"},
};

const char *ncm_cgroup_controller_name(unsigned ctrl)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(controllers); i++)
                if (controllers[i].bit == ctrl)
                        return controllers[i].name;
        return NULL;
}

unsigned ncm_cgroup_parse_controllers(const char *s, size_t len)
{
        unsigned bits = 0;
        size_t i = 0;

        while (i < len) {
                size_t start = i, wl;
                const char *w;
                while (i < len && s[i] != ' ' && s[i] != ',' && s[i] != '\n')
                        i++;
                w = s + start;
                wl = i - start;
                if (wl == strlen("name=systemd") && memcmp(w, "name=systemd", wl) == 0) {
                        bits |= NCM_CGROUP_CTRL_SYSTEMD;
                } else {
                        for (size_t k = 0; k < NCM_ELEMENTSOF(controllers); k++)
                                if (controllers[k].bit != NCM_CGROUP_CTRL_SYSTEMD &&
                                    strlen(controllers[k].name) == wl &&
                                    memcmp(controllers[k].name, w, wl) == 0)
                                        bits |= controllers[k].bit;
                }
                i++;
        }
        return bits;
}

int ncm_cgroup_layout_version(const ncm_cgroup_layout *l)
{
        return l->mode == NCM_CGROUP_MODE_UNIFIED ? 2 : 1;
}

static void set_root(ncm_cgroup_layout *l, const char *display_root)
{
        size_t n;

        snprintf(l->display_root, sizeof(l->display_root), "%s", display_root);
        n = strlen(l->display_root);
        while (n > 1 && l->display_root[n - 1] == '/')
                l->display_root[--n] = '\0';
}

int ncm_cgroup_layout_standard(ncm_cgroup_layout *ret, int version, const char *display_root,
                               ncm_error *err)
{
        static const unsigned v1[] = {NCM_CGROUP_CTRL_CPUSET, NCM_CGROUP_CTRL_MEMORY,
                                      NCM_CGROUP_CTRL_CPU,    NCM_CGROUP_CTRL_CPUACCT,
                                      NCM_CGROUP_CTRL_PIDS,   NCM_CGROUP_CTRL_HUGETLB,
                                      NCM_CGROUP_CTRL_SYSTEMD};
        ncm_cgroup_layout l;

        if (strlen(display_root) >= sizeof(l.display_root))
                return ncm_error_set(err, ENAMETOOLONG, "'%s': path too long", display_root);
        memset(&l, 0, sizeof(l));
        set_root(&l, display_root);
        if (version == 1) {
                l.mode = NCM_CGROUP_MODE_V1;
                for (size_t i = 0; i < NCM_ELEMENTSOF(v1); i++) {
                        l.hierarchies[i].controllers = v1[i];
                        snprintf(l.hierarchies[i].dir, sizeof(l.hierarchies[i].dir), "/%s",
                                 ncm_cgroup_controller_name(v1[i]));
                }
                l.n_hierarchies = NCM_ELEMENTSOF(v1);
        } else if (version == 2) {
                l.mode = NCM_CGROUP_MODE_UNIFIED;
                l.v2_controllers = NCM_CGROUP_CTRL_CPUSET | NCM_CGROUP_CTRL_CPU |
                                   NCM_CGROUP_CTRL_IO | NCM_CGROUP_CTRL_MEMORY |
                                   NCM_CGROUP_CTRL_HUGETLB | NCM_CGROUP_CTRL_PIDS |
                                   NCM_CGROUP_CTRL_RDMA | NCM_CGROUP_CTRL_MISC;
                l.hierarchies[0].controllers = l.v2_controllers;
                l.hierarchies[0].dir[0] = '\0';
                l.n_hierarchies = 1;
        } else {
                return ncm_error_set(err, EINVAL, "cgroup version %d: expected 1 or 2", version);
        }
        l.n_hugepage_sizes = 2;
        l.hugepage_sizes[0] = INT64_C(2) << 20;
        l.hugepage_sizes[1] = INT64_C(1) << 30;
        *ret = l;
        return 0;
}

const ncm_cgroup_hierarchy *ncm_cgroup_layout_find(const ncm_cgroup_layout *l, unsigned ctrl)
{
        const ncm_cgroup_hierarchy *best = NULL;

        for (size_t i = 0; i < l->n_hierarchies; i++) {
                const ncm_cgroup_hierarchy *h = &l->hierarchies[i];
                if (!(h->controllers & ctrl))
                        continue;
                /* Several mounts of one controller: the shortest path wins (kubelet #95488). */
                if (!best || strlen(h->dir) < strlen(best->dir))
                        best = h;
        }
        return best;
}

static int cmp_i64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return (x > y) - (x < y);
}

int ncm_cgroup_hugepage_sizes(int sysfd, int64_t *ret_sizes, size_t max, size_t *ret_n,
                              ncm_error *err)
{
        DIR *d = NULL;
        struct dirent *de;
        size_t n = 0;
        int r;

        if (sysfd < 0 && sysfd != AT_FDCWD) {
                *ret_n = 0;
                return 0;
        }
        r = ncm_fs_opendir(sysfd, "/sys/kernel/mm/hugepages", &d, NULL);
        if (r == -ENOENT) {
                *ret_n = 0;
                return 0;
        }
        if (r < 0)
                return ncm_error_errno(err, -r, "open '/sys/kernel/mm/hugepages'");
        while ((de = readdir(d)) != NULL) {
                uint64_t kb = 0;
                const char *p;
                if (strncmp(de->d_name, "hugepages-", 10) != 0)
                        continue;
                p = de->d_name + 10;
                if (*p < '0' || *p > '9')
                        continue;
                while (*p >= '0' && *p <= '9' && kb < (UINT64_C(1) << 50))
                        kb = kb * 10 + (uint64_t)(*p++ - '0');
                if (strcmp(p, "kB") != 0 || kb == 0 || kb >= (UINT64_C(1) << 50))
                        continue;
                if (n == max) {
                        closedir(d);
                        return ncm_error_set(err, ENOSPC,
                                             "/sys/kernel/mm/hugepages: more than %zu page sizes",
                                             max);
                }
                ret_sizes[n++] = (int64_t)kb * 1024;
        }
        closedir(d);
        qsort(ret_sizes, n, sizeof(ret_sizes[0]), cmp_i64);
        *ret_n = n;
        return 0;
}

static int statfs_type(int rootfd, const char *path, long *ret)
{
        ncm_autoclose int fd = ncm_fs_openat(rootfd, path, O_PATH | O_DIRECTORY, 0, NULL);
        struct statfs st;

        if (fd < 0)
                return fd;
        if (fstatfs(fd, &st) < 0)
                return -errno;
        *ret = (long)st.f_type;
        return 0;
}

/* The v1 hierarchies of MOUNTINFO mounted directly below ROOT_PATH. */
static int scan_mounts(const char *root_path, const char *mountinfo, ncm_cgroup_layout *l,
                       bool *ret_unified_below, ncm_error *err)
{
        size_t rlen = strlen(root_path);
        const char *p = mountinfo;
        int lineno = 0;

        *ret_unified_below = false;
        if (rlen == 1 && root_path[0] == '/')
                rlen = 0;
        while (p && *p) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t)(nl - p) : strlen(p);
                ncm_mountinfo_entry e;
                char mp[4096];
                const char *base;
                lineno++;
                if (len == 0 || ncm_cgroup_parse_mountinfo_line(p, len, &e) < 0)
                        goto next;
                if (ncm_cgroup_unescape_mount_path(e.mount_point, e.mount_point_len, mp,
                                                   sizeof(mp)) < 0)
                        goto next;
                if (strncmp(mp, root_path, rlen) != 0 || mp[rlen] != '/')
                        goto next;
                base = mp + rlen + 1;
                if (!*base || strchr(base, '/'))
                        goto next;
                if (e.fstype_len == 7 && memcmp(e.fstype, "cgroup2", 7) == 0) {
                        if (strcmp(base, "unified") == 0)
                                *ret_unified_below = true;
                } else if (e.fstype_len == 6 && memcmp(e.fstype, "cgroup", 6) == 0) {
                        unsigned ctrls = ncm_cgroup_parse_controllers(e.super_options,
                                                                      e.super_options_len);
                        ncm_cgroup_hierarchy *h = NULL;
                        if (!ctrls || strlen(base) + 2 > sizeof(l->hierarchies[0].dir))
                                goto next;
                        /* A later mount on the same directory hides the earlier one. */
                        for (size_t i = 0; i < l->n_hierarchies; i++)
                                if (strcmp(l->hierarchies[i].dir + 1, base) == 0)
                                        h = &l->hierarchies[i];
                        if (!h) {
                                if (l->n_hierarchies == NCM_CGROUP_MAX_HIERARCHIES)
                                        return ncm_error_set(err, ENOSPC,
                                                             "mountinfo: more than %d cgroup "
                                                             "hierarchies",
                                                             NCM_CGROUP_MAX_HIERARCHIES);
                                h = &l->hierarchies[l->n_hierarchies++];
                        }
                        h->controllers = ctrls;
                        snprintf(h->dir, sizeof(h->dir), "/%s", base);
                }
        next:
                p = nl ? nl + 1 : NULL;
        }
        (void)lineno;
        return 0;
}

int ncm_cgroup_layout_detect(int rootfd, const char *root_path, const char *mountinfo, int sysfd,
                             ncm_cgroup_layout *ret, ncm_error *err)
{
        ncm_cgroup_layout l;
        long type = 0;
        int r;

        if (strlen(root_path) >= sizeof(l.display_root))
                return ncm_error_set(err, ENAMETOOLONG, "'%s': path too long", root_path);
        memset(&l, 0, sizeof(l));
        set_root(&l, root_path);
        r = statfs_type(rootfd, "/", &type);
        if (r < 0)
                return ncm_error_errno(err, -r, "statfs '%s'", root_path);

        if ((unsigned long)type == CGROUP2_SUPER_MAGIC) {
                char buf[512];
                ssize_t n;
                l.mode = NCM_CGROUP_MODE_UNIFIED;
                n = ncm_fs_read(rootfd, "/cgroup.controllers", buf, sizeof(buf), err);
                if (n < 0)
                        return ncm_error_prefix(err, "%s", root_path);
                l.v2_controllers = ncm_cgroup_parse_controllers(buf, (size_t)n);
                l.hierarchies[0].controllers = l.v2_controllers;
                l.n_hierarchies = 1;
        } else if ((unsigned long)type == TMPFS_MAGIC) {
                bool unified = false;
                size_t kept = 0;
                r = scan_mounts(l.display_root, mountinfo, &l, &unified, err);
                if (r < 0)
                        return r;
                /* Keep only mounts that really are cgroup v1 filesystems. */
                for (size_t i = 0; i < l.n_hierarchies; i++) {
                        long t = 0;
                        if (statfs_type(rootfd, l.hierarchies[i].dir, &t) == 0 &&
                            (unsigned long)t == CGROUP_SUPER_MAGIC)
                                l.hierarchies[kept++] = l.hierarchies[i];
                }
                l.n_hierarchies = kept;
                if (kept == 0)
                        return ncm_error_set(err, ENOTSUP,
                                             "'%s' is not a cgroup filesystem (a tmpfs with no "
                                             "cgroup v1 hierarchy mounted in it)",
                                             root_path);
                if (unified) {
                        long t = 0;
                        if (statfs_type(rootfd, "/unified", &t) == 0 &&
                            (unsigned long)t == CGROUP2_SUPER_MAGIC)
                                l.mode = NCM_CGROUP_MODE_HYBRID;
                }
                if (l.mode == 0)
                        l.mode = NCM_CGROUP_MODE_V1;
        } else if ((unsigned long)type == CGROUP_SUPER_MAGIC) {
                return ncm_error_set(err, ENOTSUP,
                                     "'%s' is a single cgroup v1 hierarchy; give the directory "
                                     "that holds the hierarchies (e.g. /sys/fs/cgroup)",
                                     root_path);
        } else {
                return ncm_error_set(err, ENOTSUP,
                                     "'%s' is not a cgroup filesystem (statfs type 0x%lx; "
                                     "expected cgroup2, or a tmpfs holding cgroup v1 "
                                     "hierarchies)",
                                     root_path, (unsigned long)type);
        }
        r = ncm_cgroup_hugepage_sizes(sysfd, l.hugepage_sizes, NCM_CGROUP_MAX_HUGEPAGE_SIZES,
                                      &l.n_hugepage_sizes, err);
        if (r < 0)
                return r;
        *ret = l;
        return 0;
}

int ncm_cgroup_layout_check_controllers(const ncm_cgroup_layout *l, unsigned extra,
                                        const char *kubepods, ncm_error *err)
{
        /* in the order Go's sets.List() prints them: sorted by name */
        static const unsigned order[] = {NCM_CGROUP_CTRL_CPU,    NCM_CGROUP_CTRL_CPUACCT,
                                         NCM_CGROUP_CTRL_CPUSET, NCM_CGROUP_CTRL_HUGETLB,
                                         NCM_CGROUP_CTRL_MEMORY, NCM_CGROUP_CTRL_PIDS};
        bool v2 = ncm_cgroup_layout_version(l) == 2;
        unsigned need = NCM_CGROUP_CTRL_CPU | NCM_CGROUP_CTRL_CPUSET | NCM_CGROUP_CTRL_MEMORY |
                        (v2 ? 0 : NCM_CGROUP_CTRL_CPUACCT) |
                        (extra & (NCM_CGROUP_CTRL_PIDS | NCM_CGROUP_CTRL_HUGETLB));
        unsigned have = 0;
        char missing[128] = "";

        if (v2) {
                have = l->v2_controllers;
        } else {
                for (size_t i = 0; i < l->n_hierarchies; i++)
                        have |= l->hierarchies[i].controllers;
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(order); i++) {
                if (!(need & order[i]) || (have & order[i]))
                        continue;
                if (missing[0])
                        strcat(missing, v2 ? ", " : " ");
                strcat(missing, ncm_cgroup_controller_name(order[i]));
        }
        if (!missing[0])
                return 0;
        /* The kubelet's texts: validateSystemRequirements on v1, the cgroup manager's Validate
         * of kubepods on v2 (which the kubelet narrows to what the root offers; nodecm does
         * not, so that a limit is never silently dropped). */
        if (v2)
                return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                     "cgroup [\"%s\"] has some missing controllers: %s",
                                     kubepods && kubepods[0] ? kubepods : "kubepods", missing);
        return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                             "system validation failed - Following Cgroup subsystem not mounted: "
                             "[%s]",
                             missing);
}
