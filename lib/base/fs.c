/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nodecm/fs.h>

#define TMP_ATTEMPTS 16
#define TMP_NAME_MAX 300

static bool has_dotdot(const char *path)
{
        const char *p = path;
        while ((p = strstr(p, "..")) != NULL) {
                bool starts = p == path || p[-1] == '/';
                bool ends = p[2] == '\0' || p[2] == '/';
                if (starts && ends)
                        return true;
                p += 2;
        }
        return false;
}

/* Strip leading slashes: "/" becomes "." so openat() stays relative to the root. */
static const char *relative(const char *path)
{
        while (*path == '/')
                path++;
        return *path ? path : ".";
}

static int open_in_root(int rootfd, const char *path, int flags, mode_t mode)
{
        if (rootfd == AT_FDCWD)
                return ncm_negerrno(openat(AT_FDCWD, path, flags, mode));
#ifdef SYS_openat2
        struct open_how how = {
                        .flags = (uint64_t)flags,
                        .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
                        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        long fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
        if (fd >= 0)
                return (int)fd;
        /* ENOSYS: old kernel; EPERM: a seccomp filter that blocks openat2. Fall back. */
        if (errno != ENOSYS && errno != EPERM)
                return -errno;
#endif
        if (has_dotdot(path))
                return -EXDEV;
        return ncm_negerrno(openat(rootfd, relative(path), flags, mode));
}

int ncm_fs_open_root(const char *dir, ncm_error *err)
{
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return ncm_error_errno(err, errno, "open '%s'", dir);
        return fd;
}

int ncm_fs_openat(int rootfd, const char *path, int flags, mode_t mode, ncm_error *err)
{
        int fd = open_in_root(rootfd, path, flags | O_CLOEXEC, mode);
        if (fd < 0)
                return ncm_error_errno(err, -fd, "open '%s'", path);
        return fd;
}

ssize_t ncm_fs_read(int rootfd, const char *path, char *buf, size_t size, ncm_error *err)
{
        ncm_autoclose int fd = -1;
        ssize_t n;

        if (size < 2)
                return ncm_error_set(err, EINVAL, "read '%s': buffer too small", path);
        fd = ncm_fs_openat(rootfd, path, O_RDONLY, 0, err);
        if (fd < 0)
                return fd;
        n = read(fd, buf, size - 1);
        if (n < 0)
                return ncm_error_errno(err, errno, "read '%s'", path);
        if ((size_t)n == size - 1)
                return ncm_error_set(err, EFBIG, "read '%s': file larger than %zu bytes", path,
                                     size - 2);
        buf[n] = '\0';
        return n;
}

int ncm_fs_read_all(int rootfd, const char *path, size_t max, char **ret, size_t *ret_len,
                    ncm_error *err)
{
        ncm_autoclose int fd = -1;
        ncm_autofree char *buf = NULL;
        size_t len = 0, cap = 4096;
        struct stat st;

        fd = ncm_fs_openat(rootfd, path, O_RDONLY, 0, err);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return ncm_error_errno(err, errno, "stat '%s'", path);
        if (S_ISDIR(st.st_mode))
                return ncm_error_errno(err, EISDIR, "read '%s'", path);
        if (S_ISREG(st.st_mode) && (size_t)st.st_size > max)
                return ncm_error_set(err, EFBIG, "read '%s': file larger than %zu bytes", path,
                                     max);
        if (S_ISREG(st.st_mode) && (size_t)st.st_size + 1 > cap)
                cap = (size_t)st.st_size + 1;
        buf = malloc(cap);
        if (!buf)
                return ncm_error_set(err, ENOMEM, "read '%s': out of memory", path);
        for (;;) {
                ssize_t n;
                if (len + 1 >= cap) {
                        char *nb;
                        if (cap > max + 1)
                                return ncm_error_set(err, EFBIG,
                                                     "read '%s': file larger than %zu bytes", path,
                                                     max);
                        nb = realloc(buf, cap * 2);
                        if (!nb)
                                return ncm_error_set(err, ENOMEM, "read '%s': out of memory", path);
                        buf = nb;
                        cap *= 2;
                }
                n = read(fd, buf + len, cap - len - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return ncm_error_errno(err, errno, "read '%s'", path);
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len > max)
                        return ncm_error_set(err, EFBIG, "read '%s': file larger than %zu bytes",
                                             path, max);
        }
        buf[len] = '\0';
        *ret = NCM_TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int ncm_fs_write(int rootfd, const char *path, const char *value, ncm_error *err)
{
        ncm_autoclose int fd = -1;
        size_t len = strlen(value);
        ssize_t n;

        fd = ncm_fs_openat(rootfd, path, O_WRONLY | O_TRUNC, 0, err);
        if (fd < 0)
                return fd;
        n = write(fd, value, len);
        if (n < 0)
                return ncm_error_errno(err, errno, "write '%s' to '%s'", value, path);
        if ((size_t)n != len)
                return ncm_error_set(err, EIO, "write '%s' to '%s': short write", value, path);
        return 0;
}

/* Split PATH into an fd of its parent directory (inside the root) and the last component. */
static int open_parent(int rootfd, const char *path, const char **ret_base, ncm_error *err)
{
        char parent[4096];
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        size_t plen;

        if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
                return ncm_error_set(err, EINVAL, "'%s': not a file name", path);
        plen = slash ? (size_t)(slash - path) : 0;
        if (plen >= sizeof(parent))
                return ncm_error_set(err, ENAMETOOLONG, "'%s': path too long", path);
        if (plen == 0) {
                parent[0] = slash ? '/' : '.';
                parent[1] = '\0';
        } else {
                memcpy(parent, path, plen);
                parent[plen] = '\0';
        }
        *ret_base = base;
        return ncm_fs_openat(rootfd, parent, O_PATH | O_DIRECTORY, 0, err);
}

static int write_full(int fd, const void *data, size_t len)
{
        const char *p = data;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

int ncm_fs_write_atomic(int rootfd, const char *path, const void *data, size_t len, mode_t mode,
                        ncm_error *err)
{
        return ncm_fs_write_atomic_flags(rootfd, path, data, len, mode, 0, err);
}

/*
 * Create PATH's temporary file ".BASE.tmpXXXXXXXX" in DIRFD and write DATA to it: the file a
 * rename will put in place. TMP gets its name. Returns its fd, or -errno with ERR set (nothing
 * left behind).
 */
static int stage_temp(int dirfd, const char *path, const char *base, const void *data, size_t len,
                      mode_t mode, char tmp[static TMP_NAME_MAX], ncm_error *err)
{
        ncm_autoclose int fd = -1;
        int r;

        if (strlen(base) > 200)
                return ncm_error_set(err, ENAMETOOLONG, "'%s': name too long", path);
        for (int i = 0; i < TMP_ATTEMPTS && fd < 0; i++) {
                uint32_t rnd = 0;
                if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
                        rnd = (uint32_t)getpid() * 2654435761u + (uint32_t)i;
                snprintf(tmp, TMP_NAME_MAX, ".%s.tmp%08x", base, rnd);
                fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
                if (fd < 0 && errno != EEXIST)
                        return ncm_error_errno(err, errno, "create temporary file for '%s'", path);
        }
        if (fd < 0)
                return ncm_error_errno(err, EEXIST, "create temporary file for '%s'", path);
        /* A file that exists keeps its mode (an operator's 0600 stays 0600). */
        {
                struct stat st;
                if (fstatat(dirfd, base, &st, 0) == 0 && S_ISREG(st.st_mode))
                        mode = st.st_mode & 07777;
        }
        /* O_CREAT honours the umask; the checkpoint mode must not depend on it. */
        r = fchmod(fd, mode) < 0 ? -errno : write_full(fd, data, len);
        if (r < 0) {
                (void)unlinkat(dirfd, tmp, 0);
                return ncm_error_errno(err, -r, "write '%s'", path);
        }
        return NCM_TAKE_FD(fd);
}

/* fsync DIRFD's directory (an O_PATH fd cannot be fsynced: reopened). */
static int sync_parent(int dirfd, const char *path, ncm_error *err)
{
        ncm_autoclose int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0 || fsync(fd) < 0)
                return ncm_error_errno(err, errno, "fsync directory of '%s'", path);
        return 0;
}

int ncm_fs_write_atomic_flags(int rootfd, const char *path, const void *data, size_t len,
                              mode_t mode, unsigned flags, ncm_error *err)
{
        ncm_autoclose int dirfd = -1;
        ncm_autoclose int fd = -1;
        const char *base;
        char tmp[TMP_NAME_MAX];
        int r;

        if (flags & ~(unsigned)NCM_FS_WRITE_NO_DIRSYNC)
                return ncm_error_set(err, EINVAL, "write '%s': unknown flags 0x%x", path, flags);
        dirfd = open_parent(rootfd, path, &base, err);
        if (dirfd < 0)
                return dirfd;
        fd = stage_temp(dirfd, path, base, data, len, mode, tmp, err);
        if (fd < 0)
                return fd;
        if (fsync(fd) < 0 || close(NCM_TAKE_FD(fd)) < 0 || renameat(dirfd, tmp, dirfd, base) < 0) {
                r = -errno;
                (void)unlinkat(dirfd, tmp, 0);
                return ncm_error_errno(err, -r, "write '%s'", path);
        }
        if (flags & NCM_FS_WRITE_NO_DIRSYNC)
                return 0;
        return sync_parent(dirfd, path, err);
}

/* ---- batches ------------------------------------------------------------------------------- */

typedef struct batch_file {
        char *path; /* as the caller named it */
        char *dir;  /* its directory, as PATH names it (one fsync per directory) */
        int rootfd;
        int dirfd; /* O_PATH */
        int fd;    /* the temporary file, written, its writeback started */
        char tmp[TMP_NAME_MAX];
} batch_file;

struct ncm_fs_batch {
        batch_file *v;
        size_t n, cap;
};

ncm_fs_batch *ncm_fs_batch_new(void)
{
        return calloc(1, sizeof(ncm_fs_batch));
}

/* Forget file I; its temporary file goes unless it was renamed. */
static void batch_drop(batch_file *f, bool renamed)
{
        if (f->fd >= 0)
                close(f->fd);
        if (!renamed)
                (void)unlinkat(f->dirfd, f->tmp, 0);
        close(f->dirfd);
        free(f->path);
        free(f->dir);
}

static void batch_clear(ncm_fs_batch *b, size_t renamed)
{
        for (size_t i = 0; i < b->n; i++)
                batch_drop(&b->v[i], i < renamed);
        b->n = 0;
}

ncm_fs_batch *ncm_fs_batch_free(ncm_fs_batch *b)
{
        if (!b)
                return NULL;
        batch_clear(b, 0);
        free(b->v);
        free(b);
        return NULL;
}

size_t ncm_fs_batch_size(const ncm_fs_batch *b)
{
        return b ? b->n : 0;
}

int ncm_fs_batch_write(ncm_fs_batch *b, int rootfd, const char *path, const void *data, size_t len,
                       mode_t mode, ncm_error *err)
{
        batch_file f = {.rootfd = rootfd, .fd = -1};
        const char *base;
        size_t at = b->n;

        for (size_t i = 0; i < b->n; i++)
                if (b->v[i].rootfd == rootfd && strcmp(b->v[i].path, path) == 0)
                        at = i;
        if (at == b->n && b->n == b->cap) {
                size_t cap = b->cap ? b->cap * 2 : 4;
                batch_file *v = realloc(b->v, cap * sizeof(*v));
                if (!v)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                b->v = v;
                b->cap = cap;
        }
        f.dirfd = open_parent(rootfd, path, &base, err);
        if (f.dirfd < 0)
                return f.dirfd;
        f.path = strdup(path);
        f.dir = strndup(path, (size_t)(base - path));
        if (!f.path || !f.dir) {
                batch_drop(&f, true);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        f.fd = stage_temp(f.dirfd, path, base, data, len, mode, f.tmp, err);
        if (f.fd < 0) {
                int r = f.fd;
                batch_drop(&f, true);
                return r;
        }
        /*
         * Start the writeback now: on a journalling filesystem the first fsync of the commit
         * then carries every file of the batch, and the others' fsyncs find their data and
         * metadata on disk (ext4 data=ordered: one journal commit, not one per file).
         */
        (void)sync_file_range(f.fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        if (at < b->n)
                batch_drop(&b->v[at], false); /* written again: the newer text wins */
        else
                b->n++;
        b->v[at] = f;
        return 0;
}

int ncm_fs_batch_commit(ncm_fs_batch *b, unsigned flags, ncm_error *err)
{
        size_t i;

        if (flags & ~(unsigned)NCM_FS_WRITE_NO_DIRSYNC) {
                batch_clear(b, 0);
                return ncm_error_set(err, EINVAL, "write batch: unknown flags 0x%x", flags);
        }
        /* every file whole on disk before any rename: a crash leaves each old or new */
        for (i = 0; i < b->n; i++) {
                batch_file *f = &b->v[i];
                if (fsync(f->fd) < 0 || close(NCM_TAKE_FD(f->fd)) < 0) {
                        int r = errno;
                        ncm_error_errno(err, r, "write '%s'", f->path);
                        batch_clear(b, 0);
                        return -r;
                }
        }
        /* in the order written: a crash between two leaves a prefix renamed, as without a batch */
        for (i = 0; i < b->n; i++) {
                batch_file *f = &b->v[i];
                const char *base = f->path + strlen(f->dir);
                if (renameat(f->dirfd, f->tmp, f->dirfd, base) < 0) {
                        int r = errno;
                        ncm_error_errno(err, r, "write '%s'", f->path);
                        batch_clear(b, i);
                        return -r;
                }
        }
        for (i = 0; i < b->n && !(flags & NCM_FS_WRITE_NO_DIRSYNC); i++) {
                bool seen = false;
                for (size_t k = 0; k < i && !seen; k++)
                        seen = b->v[k].rootfd == b->v[i].rootfd &&
                               strcmp(b->v[k].dir, b->v[i].dir) == 0;
                int r = seen ? 0 : sync_parent(b->v[i].dirfd, b->v[i].path, err);
                if (r < 0) {
                        batch_clear(b, b->n);
                        return r;
                }
        }
        batch_clear(b, b->n);
        return 0;
}

int ncm_fs_sync_dir(int rootfd, const char *dir, ncm_error *err)
{
        ncm_autoclose int fd = ncm_fs_openat(rootfd, dir, O_RDONLY | O_DIRECTORY, 0, err);

        if (fd < 0)
                return fd;
        if (fsync(fd) < 0)
                return ncm_error_errno(err, errno, "fsync directory '%s'", dir);
        return 0;
}

int ncm_fs_exists(int rootfd, const char *path)
{
        int fd = open_in_root(rootfd, path, O_PATH | O_CLOEXEC, 0);
        if (fd < 0)
                return fd == -ENOENT || fd == -ENOTDIR ? 0 : fd;
        close(fd);
        return 1;
}

int ncm_fs_opendir(int rootfd, const char *path, DIR **ret, ncm_error *err)
{
        DIR *d;
        int fd = ncm_fs_openat(rootfd, path, O_RDONLY | O_DIRECTORY, 0, err);
        if (fd < 0)
                return fd;
        d = fdopendir(fd);
        if (!d) {
                int e = errno;
                close(fd);
                return ncm_error_errno(err, e, "open directory '%s'", path);
        }
        *ret = d;
        return 0;
}

int ncm_fs_mkdir(int rootfd, const char *path, mode_t mode, ncm_error *err)
{
        ncm_autoclose int dirfd = -1;
        const char *base;
        struct stat st;

        dirfd = open_parent(rootfd, path, &base, err);
        if (dirfd < 0)
                return dirfd;
        if (mkdirat(dirfd, base, mode) == 0)
                return 1;
        if (errno != EEXIST)
                return ncm_error_errno(err, errno, "mkdir '%s'", path);
        if (fstatat(dirfd, base, &st, 0) < 0 || !S_ISDIR(st.st_mode))
                return ncm_error_errno(err, ENOTDIR, "mkdir '%s'", path);
        return 0;
}

int ncm_fs_rmdir(int rootfd, const char *path, ncm_error *err)
{
        ncm_autoclose int dirfd = -1;
        const char *base;

        dirfd = open_parent(rootfd, path, &base, err);
        if (dirfd == -ENOENT)
                return 0;
        if (dirfd < 0)
                return dirfd;
        if (unlinkat(dirfd, base, AT_REMOVEDIR) == 0)
                return 1;
        if (errno == ENOENT)
                return 0;
        return ncm_error_errno(err, errno, "rmdir '%s'", path);
}

int ncm_fs_unlink(int rootfd, const char *path, ncm_error *err)
{
        ncm_autoclose int dirfd = -1;
        const char *base;

        dirfd = open_parent(rootfd, path, &base, err);
        if (dirfd == -ENOENT)
                return 0;
        if (dirfd < 0)
                return dirfd;
        if (unlinkat(dirfd, base, 0) == 0)
                return 1;
        if (errno == ENOENT)
                return 0;
        return ncm_error_errno(err, errno, "unlink '%s'", path);
}

int ncm_fs_clean_tmp(int rootfd, const char *dir, const char *const *names, ncm_error *err)
{
        DIR *d = NULL;
        struct dirent *de;
        int removed = 0, r;

        r = ncm_fs_opendir(rootfd, dir, &d, err);
        if (r < 0)
                return r == -ENOENT ? 0 : r;
        while ((de = readdir(d)) != NULL) {
                for (size_t i = 0; names[i]; i++) {
                        size_t nl = strlen(names[i]);
                        const char *p = de->d_name;
                        bool ours = p[0] == '.' && strncmp(p + 1, names[i], nl) == 0 &&
                                    strncmp(p + 1 + nl, ".tmp", 4) == 0 &&
                                    strlen(p + 1 + nl + 4) == 8 &&
                                    strspn(p + 1 + nl + 4, "0123456789abcdef") == 8;
                        if (ours && unlinkat(dirfd(d), p, 0) == 0)
                                removed++;
                }
        }
        closedir(d);
        return removed;
}

int ncm_fs_lock(int rootfd, const char *path, unsigned flags, ncm_error *err)
{
        ncm_autoclose int fd = ncm_fs_openat(rootfd, path, O_RDWR | O_CREAT | O_CLOEXEC, 0600, err);

        if (fd < 0)
                return fd;
        while (flock(fd, LOCK_EX | ((flags & NCM_FS_LOCK_NOWAIT) ? LOCK_NB : 0)) < 0) {
                if (errno == EINTR)
                        continue;
                if (errno == EWOULDBLOCK)
                        return ncm_error_set(err, EWOULDBLOCK,
                                             "'%s' is locked by another nodecm (try again when "
                                             "it is done)",
                                             path);
                return ncm_error_errno(err, errno, "lock '%s'", path);
        }
        return NCM_TAKE_FD(fd);
}
