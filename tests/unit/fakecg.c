/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in kernel for a directory tree laid out as a cgroup mount root: control files appear
 * when a directory is made and go before it is removed, as the kernel does. Shared by the tests
 * of the cgroup drivers and of the node's enforcers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include "fakecg.h"
#include "testutil.h"

void fake_put(int rootfd, const char *dir, const char *file, const char *value)
{
        char path[4096];
        ncm_autoclose int fd = -1;
        snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, file);
        fd = ncm_fs_openat(rootfd, path, O_WRONLY | O_CREAT | O_TRUNC, 0644, NULL);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, value, strlen(value)), (ssize_t)strlen(value));
}

char *fake_get(int rootfd, const char *path)
{
        char buf[4096];
        ssize_t n = ncm_fs_read(rootfd, path, buf, sizeof(buf), NULL);
        if (n < 0)
                fail_msg("read %s: %s", path, strerror((int)-n));
        while (n > 0 && buf[n - 1] == '\n')
                buf[--n] = '\0';
        return strdup(buf);
}

static void hugetlb_files(fake *f, const char *path, const char *suffix, const char *value)
{
        static const char *const sizes[] = {"2MB", "1GB"};
        for (size_t i = 0; i < 2; i++) {
                char file[64];
                snprintf(file, sizeof(file), "hugetlb.%s.%s", sizes[i], suffix);
                fake_put(f->rootfd, path, file, value);
                if (f->rsvd) {
                        snprintf(file, sizeof(file), "hugetlb.%s.rsvd.%s", sizes[i], suffix);
                        fake_put(f->rootfd, path, file, value);
                }
        }
}

/* What the kernel makes in a new v1 cgroup of hierarchy HIER. */
void fake_v1_files(fake *f, const char *path, const char *hier)
{
        fake_put(f->rootfd, path, "cgroup.procs", "");
        if (strcmp(hier, "cpuset") == 0) {
                fake_put(f->rootfd, path, "cpuset.cpus", "\n");
                fake_put(f->rootfd, path, "cpuset.mems", "\n");
                fake_put(f->rootfd, path, "cpuset.sched_load_balance", "1\n");
        } else if (strcmp(hier, "cpu") == 0) {
                fake_put(f->rootfd, path, "cpu.shares", "1024\n");
                fake_put(f->rootfd, path, "cpu.cfs_period_us", "100000\n");
                fake_put(f->rootfd, path, "cpu.cfs_quota_us", "-1\n");
        } else if (strcmp(hier, "memory") == 0) {
                fake_put(f->rootfd, path, "memory.limit_in_bytes", "9223372036854771712\n");
        } else if (strcmp(hier, "pids") == 0) {
                fake_put(f->rootfd, path, "pids.max", "max\n");
        } else if (strcmp(hier, "hugetlb") == 0) {
                hugetlb_files(f, path, "limit_in_bytes", "9223372036854771712\n");
        }
}

/* A new v2 cgroup: the controllers its parent enabled, and their files. */
static void v2_files(fake *f, const char *path)
{
        char parent[4096], ctl[512] = "";
        const char *slash = strrchr(path, '/');
        char *sub;
        unsigned c;

        snprintf(parent, sizeof(parent), "%.*s/cgroup.subtree_control", (int)(slash - path), path);
        sub = fake_get(f->rootfd, parent);
        for (char *p = sub, *q = sub;; p++)
                if (*p != '+' && !(*q++ = *p))
                        break;
        c = ncm_cgroup_parse_controllers(sub, strlen(sub));
        snprintf(ctl, sizeof(ctl), "%s", sub);
        free(sub);
        fake_put(f->rootfd, path, "cgroup.controllers", ctl);
        fake_put(f->rootfd, path, "cgroup.subtree_control", "");
        fake_put(f->rootfd, path, "cgroup.procs", "");
        if (c & NCM_CGROUP_CTRL_CPU) {
                fake_put(f->rootfd, path, "cpu.weight", "100\n");
                fake_put(f->rootfd, path, "cpu.max", "max 100000\n");
        }
        if (c & NCM_CGROUP_CTRL_MEMORY) {
                fake_put(f->rootfd, path, "memory.max", "max\n");
                fake_put(f->rootfd, path, "memory.min", "0\n");
                fake_put(f->rootfd, path, "memory.low", "0\n");
        }
        if (c & NCM_CGROUP_CTRL_PIDS)
                fake_put(f->rootfd, path, "pids.max", "max\n");
        if (c & NCM_CGROUP_CTRL_CPUSET) {
                fake_put(f->rootfd, path, "cpuset.cpus", "\n");
                fake_put(f->rootfd, path, "cpuset.mems", "\n");
                if (f->partitions) {
                        fake_put(f->rootfd, path, "cpuset.cpus.exclusive", "\n");
                        fake_put(f->rootfd, path, "cpuset.cpus.partition", "member\n");
                }
        }
        if (c & NCM_CGROUP_CTRL_HUGETLB)
                hugetlb_files(f, path, "max", "max\n");
}

static int fake_mkdir(int rootfd, const char *path, void *userdata)
{
        fake *f = userdata;
        (void)rootfd;
        if (f->version == 2) {
                v2_files(f, path);
        } else {
                char hier[64];
                size_t n = strcspn(path + 1, "/");
                snprintf(hier, sizeof(hier), "%.*s", (int)n, path + 1);
                fake_v1_files(f, path, hier);
        }
        if (f->fail_on && strstr(path, f->fail_on)) {
                char p[4096];
                const char *file = f->version == 2 ? "cpu.max" : "cpu.cfs_quota_us";
                if (f->version == 1 && strncmp(path, "/cpu/", 5) != 0)
                        return 0;
                snprintf(p, sizeof(p), "%s/%s", path, file);
                (void)ncm_fs_unlink(f->rootfd, p, NULL);
                assert_int_equal(ncm_fs_mkdir(f->rootfd, p, 0755, NULL), 1);
        }
        return 0;
}

/* The kernel empties a cgroup directory itself; here its files must go first. */
static int fake_rmdir(int rootfd, const char *path, void *userdata)
{
        DIR *d = NULL;
        struct dirent *de;
        (void)userdata;
        if (ncm_fs_opendir(rootfd, path, &d, NULL) < 0)
                return 0;
        while ((de = readdir(d)) != NULL) {
                char p[4096];
                if (de->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
                if (de->d_type == DT_REG)
                        (void)ncm_fs_unlink(rootfd, p, NULL);
                else if (de->d_type == DT_DIR && strchr(de->d_name, '.'))
                        (void)ncm_fs_rmdir(rootfd, p, NULL); /* a file made a directory */
        }
        closedir(d);
        return 0;
}

void fake_init(fake *f, int version, bool rsvd)
{
        memset(f, 0, sizeof(*f));
        f->version = version;
        f->rsvd = rsvd;
        f->dir = tu_mkdtemp();
        f->rootfd = ncm_fs_open_root(f->dir, NULL);
        assert_true(f->rootfd >= 0);
        assert_int_equal(ncm_cgroup_layout_standard(&f->layout, version, "/sys/fs/cgroup", NULL),
                         0);
        f->exec.on_mkdir = fake_mkdir;
        f->exec.before_rmdir = fake_rmdir;
        f->exec.userdata = f;
        if (version == 1) {
                static const char *const hiers[] = {"cpuset", "memory",  "cpu",    "cpuacct",
                                                    "pids",   "hugetlb", "systemd"};
                for (size_t i = 0; i < NCM_ELEMENTSOF(hiers); i++) {
                        char p[64];
                        snprintf(p, sizeof(p), "/%s", hiers[i]);
                        assert_int_equal(ncm_fs_mkdir(f->rootfd, p, 0755, NULL), 1);
                        fake_v1_files(f, p, hiers[i]);
                }
                fake_put(f->rootfd, "/cpuset", "cpuset.cpus", "0-3\n");
                fake_put(f->rootfd, "/cpuset", "cpuset.mems", "0\n");
        } else {
                fake_put(f->rootfd, "/", "cgroup.controllers",
                         "cpuset cpu io memory hugetlb pids "
                         "rdma misc\n");
                fake_put(f->rootfd, "/", "cgroup.subtree_control", "");
                fake_put(f->rootfd, "/", "cgroup.procs", "1\n");
                fake_put(f->rootfd, "/", "cpuset.cpus.effective", "0-3\n");
        }
}

void fake_done(fake *f)
{
        close(f->rootfd);
        tu_rm_rf(f->dir);
        free(f->dir);
}

/* Every directory and file of the tree with its content, sorted: for before/after checks. */
static void snapshot_dir(int rootfd, const char *path, ncm_buf *b)
{
        DIR *d = NULL;
        struct dirent *de;
        char *names[512];
        size_t n = 0;

        assert_int_equal(ncm_fs_opendir(rootfd, path, &d, NULL), 0);
        while ((de = readdir(d)) != NULL && n < 512)
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        names[n++] = strdup(de->d_name);
        closedir(d);
        for (size_t i = 1; i < n; i++)
                for (size_t k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
                        char *t = names[k];
                        names[k] = names[k - 1];
                        names[k - 1] = t;
                }
        for (size_t i = 0; i < n; i++) {
                char p[4096];
                struct stat st;
                snprintf(p, sizeof(p), "%s/%s", strcmp(path, "/") == 0 ? "" : path, names[i]);
                assert_int_equal(fstatat(rootfd, p + 1, &st, 0), 0);
                if (S_ISDIR(st.st_mode)) {
                        ncm_buf_printf(b, "%s/\n", p);
                        snapshot_dir(rootfd, p, b);
                } else {
                        char *v = fake_get(rootfd, p);
                        ncm_buf_printf(b, "%s=%s\n", p, v);
                        free(v);
                }
                free(names[i]);
        }
}

char *fake_snapshot(fake *f)
{
        ncm_buf b = NCM_BUF_INIT;
        snapshot_dir(f->rootfd, "/", &b);
        return ncm_buf_steal(&b);
}
