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

#include <nodecm/buf.h>
#include <nodecm/fs.h>
#include "base/array.h"
#include "base/fs-beneath.h"

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

/* The single read(2) of ncm_fs_read() from FD (closed here), PATH naming it in errors. */
static ssize_t read_once(int fd, const char *path, char *buf, size_t size, ncm_error *err)
{
        ncm_autoclose int cfd = fd;
        ssize_t n;

        n = read(cfd, buf, size - 1);
        if (n < 0)
                return ncm_error_errno(err, errno, "read '%s'", path);
        if ((size_t)n == size - 1)
                return ncm_error_set(err, EFBIG, "read '%s': file larger than %zu bytes", path,
                                     size - 2);
        buf[n] = '\0';
        return n;
}

ssize_t ncm_fs_read(int rootfd, const char *path, char *buf, size_t size, ncm_error *err)
{
        int fd;

        if (size < 2)
                return ncm_error_set(err, EINVAL, "read '%s': buffer too small", path);
        fd = ncm_fs_openat(rootfd, path, O_RDONLY, 0, err);
        if (fd < 0)
                return fd;
        return read_once(fd, path, buf, size, err);
}

const char *ncm__fs_below(const char *path, const char *dir, size_t dir_len)
{
        if (strncmp(path, dir, dir_len) != 0 || path[dir_len] != '/' || path[dir_len + 1] == '\0')
                return NULL;
        return path + dir_len + 1;
}

int ncm__fs_openat_beneath(int rootfd, int dirfd, const char *path, const char *rel, int flags,
                           ncm_error *err)
{
#ifdef SYS_openat2
        if (dirfd >= 0 && rel && rel[0] != '/' && !has_dotdot(rel)) {
                struct open_how how = {
                                .flags = (uint64_t)(flags | O_CLOEXEC),
                                .resolve = RESOLVE_NO_SYMLINKS,
                };
                long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
                if (fd >= 0)
                        return (int)fd;
                /* ELOOP: a symlink on the way (or at the end), which the root-relative walk
                 * follows inside the root; ENOSYS, EPERM: no openat2. Any other error is the
                 * one that walk meets too, on the same components. */
                if (errno != ELOOP && errno != ENOSYS && errno != EPERM)
                        return ncm_error_errno(err, errno, "open '%s'", path);
        }
#else
        (void)dirfd;
        (void)rel;
#endif
        return ncm_fs_openat(rootfd, path, flags, 0, err);
}

ssize_t ncm__fs_read_beneath(int rootfd, int dirfd, const char *path, const char *rel, char *buf,
                             size_t size, ncm_error *err)
{
        int fd;

        if (size < 2)
                return ncm_error_set(err, EINVAL, "read '%s': buffer too small", path);
        fd = ncm__fs_openat_beneath(rootfd, dirfd, path, rel, O_RDONLY, err);
        if (fd < 0)
                return fd;
        return read_once(fd, path, buf, size, err);
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

int ncm_fs_fault(const ncm_fs_faults *f, ncm_fs_op op, const char *path, size_t len)
{
        return f && f->fn ? f->fn(f->data, op, path, len) : 0;
}

static int write_full(int fd, const void *data, size_t len);

/*
 * write_full() behind the fault hook: a failure fails it, a short length writes that much and
 * then fails with ENOSPC (a disk that filled up during the write).
 */
static int write_faulted(const ncm_fs_faults *faults, const char *path, int fd, const void *data,
                         size_t len)
{
        int k = ncm_fs_fault(faults, NCM_FS_OP_WRITE, path, len);

        if (k < 0)
                return k;
        if (k > 0 && (size_t)k < len) {
                int r = write_full(fd, data, (size_t)k);
                return r < 0 ? r : -ENOSPC;
        }
        return write_full(fd, data, len);
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
                      mode_t mode, const ncm_fs_faults *faults, char tmp[static TMP_NAME_MAX],
                      ncm_error *err)
{
        ncm_autoclose int fd = -1;
        int r;

        if (strlen(base) > 200)
                return ncm_error_set(err, ENAMETOOLONG, "'%s': name too long", path);
        r = ncm_fs_fault(faults, NCM_FS_OP_CREATE, path, len);
        if (r < 0)
                return ncm_error_errno(err, -r, "create temporary file for '%s'", path);
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
        r = fchmod(fd, mode) < 0 ? -errno : write_faulted(faults, path, fd, data, len);
        if (r < 0) {
                (void)unlinkat(dirfd, tmp, 0);
                return ncm_error_errno(err, -r, "write '%s'", path);
        }
        return NCM_TAKE_FD(fd);
}

/* fsync DIRFD's directory (an O_PATH fd cannot be fsynced: reopened). */
static int sync_parent(int dirfd, const char *path, const ncm_fs_faults *faults, ncm_error *err)
{
        ncm_autoclose int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = ncm_fs_fault(faults, NCM_FS_OP_DIRSYNC, path, 0);

        if (r < 0)
                return ncm_error_errno(err, -r, "fsync directory of '%s'", path);
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
        fd = stage_temp(dirfd, path, base, data, len, mode, NULL, tmp, err);
        if (fd < 0)
                return fd;
        if (fsync(fd) < 0 || close(NCM_TAKE_FD(fd)) < 0 || renameat(dirfd, tmp, dirfd, base) < 0) {
                r = -errno;
                (void)unlinkat(dirfd, tmp, 0);
                return ncm_error_errno(err, -r, "write '%s'", path);
        }
        if (flags & NCM_FS_WRITE_NO_DIRSYNC)
                return 0;
        return sync_parent(dirfd, path, NULL, err);
}

/* ---- batches ------------------------------------------------------------------------------- */

/*
 * On a journalling filesystem two steps of an atomic write cost far more than the data: creating
 * the temporary file (an inode allocated) and freeing the file a rename replaces (the old inode
 * released inside the rename, when its last link goes). On this project's test VM's ext4 they
 * were 140 us and 80 us per file, against 10 us for the write and the rename themselves. A batch
 * kept from one transaction to the next takes both off the caller's path: its commit holds the
 * replaced files open, so the rename only unlinks them, and ncm_fs_batch_settle(), run when the
 * caller is no longer waited on, closes them and creates the next temporary file of each path.
 */

#define SPARES_MAX 16 /* paths a batch keeps a temporary file ready for */

typedef struct batch_file {
        char *path; /* as the caller named it */
        char *dir;  /* its directory, as PATH names it (one fsync per directory) */
        int rootfd;
        int dirfd; /* O_PATH */
        int fd;    /* the temporary file, written, its writeback started */
        mode_t mode;
        bool spare; /* that file was made ahead (batch_spare) */
        char tmp[TMP_NAME_MAX];
        /* an append (ncm_fs_batch_append): DATA written to the file's end by the commit */
        bool append;
        bool created; /* the commit created the file: its name wants the directory's fsync */
        bool written; /* the commit wrote to it (END is known) */
        char *data;
        size_t len;
        off_t end; /* where the file ended before the commit wrote to it */
} batch_file;

/* A path a commit wrote: its next temporary file, made ahead by the settle. */
typedef struct batch_spare {
        char *path;
        int rootfd;
        mode_t mode; /* the mode its last write asked for */
        int dirfd;   /* O_PATH: where the temporary file was made; -1 while there is none */
        int fd;      /* that file, empty; -1 while there is none */
        char tmp[TMP_NAME_MAX];
} batch_spare;

struct ncm_fs_batch {
        batch_file *v; /* staged */
        size_t n, cap;
        batch_spare spares[SPARES_MAX];
        size_t n_spares;
        int *held; /* O_PATH fds of the files commits replaced, closed by the settle */
        size_t n_held, cap_held;
        batch_file *owed; /* directories whose fsync a commit left (path, dir, dirfd only) */
        size_t n_owed, cap_owed;
        const ncm_fs_faults *faults; /* borrowed; NULL: none */
        int undo_rootfd;
        char *undo_path; /* the undo record of each commit; NULL: commits keep no undo */
};

ncm_fs_batch *ncm_fs_batch_new(void)
{
        return calloc(1, sizeof(ncm_fs_batch));
}

void ncm_fs_batch_set_faults(ncm_fs_batch *b, const ncm_fs_faults *faults)
{
        b->faults = faults;
}

int ncm_fs_batch_set_undo(ncm_fs_batch *b, int rootfd, const char *path, ncm_error *err)
{
        char *p = NULL;

        if (path && !(p = strdup(path)))
                return ncm_error_set(err, ENOMEM, "out of memory");
        free(b->undo_path);
        b->undo_path = p;
        b->undo_rootfd = rootfd;
        return 0;
}

/* Forget file F; its temporary file goes unless it was renamed. */
static void batch_drop(batch_file *f, bool renamed)
{
        if (f->fd >= 0)
                close(f->fd);
        if (!renamed && f->tmp[0])
                (void)unlinkat(f->dirfd, f->tmp, 0);
        if (f->dirfd >= 0)
                close(f->dirfd);
        free(f->path);
        free(f->dir);
        free(f->data);
}

static void batch_clear(ncm_fs_batch *b, size_t renamed)
{
        for (size_t i = 0; i < b->n; i++)
                batch_drop(&b->v[i], i < renamed);
        b->n = 0;
}

/* Remove spare S's temporary file (it is not needed, or it was used). */
static void spare_forget_file(batch_spare *s, bool unlink_it)
{
        if (s->fd >= 0) {
                close(s->fd);
                if (unlink_it)
                        (void)unlinkat(s->dirfd, s->tmp, 0);
        }
        if (s->dirfd >= 0)
                close(s->dirfd);
        s->fd = s->dirfd = -1;
}

static void close_held(ncm_fs_batch *b)
{
        for (size_t i = 0; i < b->n_held; i++)
                close(b->held[i]);
        b->n_held = 0;
}

ncm_fs_batch *ncm_fs_batch_free(ncm_fs_batch *b)
{
        if (!b)
                return NULL;
        batch_clear(b, 0);
        for (size_t i = 0; i < b->n_spares; i++) {
                spare_forget_file(&b->spares[i], true);
                free(b->spares[i].path);
        }
        close_held(b);
        for (size_t i = 0; i < b->n_owed; i++)
                batch_drop(&b->owed[i], true);
        free(b->held);
        free(b->owed);
        free(b->v);
        free(b->undo_path);
        free(b);
        return NULL;
}

size_t ncm_fs_batch_size(const ncm_fs_batch *b)
{
        return b ? b->n : 0;
}

static batch_spare *find_spare(ncm_fs_batch *b, int rootfd, const char *path)
{
        for (size_t i = 0; i < b->n_spares; i++)
                if (b->spares[i].rootfd == rootfd && strcmp(b->spares[i].path, path) == 0)
                        return &b->spares[i];
        return NULL;
}

void ncm_fs_batch_drop(ncm_fs_batch *b)
{
        if (!b)
                return;
        /* a file made ahead goes back, emptied: the directory is as the rollback found it */
        for (size_t i = 0; i < b->n; i++) {
                batch_file *f = &b->v[i];
                batch_spare *s = f->spare ? find_spare(b, f->rootfd, f->path) : NULL;
                if (!s || s->fd >= 0 || ftruncate(f->fd, 0) < 0 || lseek(f->fd, 0, SEEK_SET) != 0)
                        continue;
                s->fd = NCM_TAKE_FD(f->fd);
                s->dirfd = NCM_TAKE_FD(f->dirfd);
                memcpy(s->tmp, f->tmp, sizeof(s->tmp));
                f->tmp[0] = '\0';
        }
        batch_clear(b, 0);
}

/*
 * The temporary file made ahead for PATH, taken into F when it is still where it was made: in
 * F's directory (the one PATH names now), under its name, the same file. Anything else (the
 * directory replaced, the file removed by someone) and F makes its own.
 */
static bool take_spare(ncm_fs_batch *b, batch_file *f, const char *base, const void *data,
                       size_t len)
{
        batch_spare *s = find_spare(b, f->rootfd, f->path);
        struct stat have, want, target;
        mode_t mode = f->mode;

        if (!s || s->fd < 0)
                return false;
        if (fstat(s->fd, &have) < 0 || fstatat(f->dirfd, s->tmp, &want, AT_SYMLINK_NOFOLLOW) < 0 ||
            have.st_dev != want.st_dev || have.st_ino != want.st_ino || have.st_size != 0) {
                spare_forget_file(s, false); /* not ours to remove any more */
                return false;
        }
        /* as stage_temp: a file that exists keeps its mode */
        if (fstatat(f->dirfd, base, &target, 0) == 0 && S_ISREG(target.st_mode))
                mode = target.st_mode & 07777;
        if (((have.st_mode & 07777) != mode && fchmod(s->fd, mode) < 0) ||
            write_faulted(b->faults, f->path, s->fd, data, len) < 0) {
                spare_forget_file(s, true);
                return false;
        }
        f->fd = s->fd;
        f->spare = true;
        memcpy(f->tmp, s->tmp, sizeof(f->tmp));
        s->fd = -1;
        close(s->dirfd);
        s->dirfd = -1;
        return true;
}

/* F (ROOTFD, PATH) joins B: room for it, its directory opened, its names. BASE: PATH's last name.
 */
static int file_begin(ncm_fs_batch *b, batch_file *f, const char *path, const char **base,
                      ncm_error *err)
{
        if (ncm__array_grow(b->v, b->cap, b->n) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        f->dirfd = open_parent(f->rootfd, path, base, err);
        if (f->dirfd < 0)
                return f->dirfd;
        f->path = strdup(path);
        f->dir = strndup(path, (size_t)(*base - path));
        if (!f->path || !f->dir) {
                batch_drop(f, true);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        return 0;
}

int ncm_fs_batch_write(ncm_fs_batch *b, int rootfd, const char *path, const void *data, size_t len,
                       mode_t mode, ncm_error *err)
{
        batch_file f = {.rootfd = rootfd, .fd = -1, .mode = mode};
        const char *base;
        size_t at = b->n;
        int r;

        for (size_t i = 0; i < b->n; i++)
                if (!b->v[i].append && b->v[i].rootfd == rootfd && strcmp(b->v[i].path, path) == 0)
                        at = i;
        r = file_begin(b, &f, path, &base, err);
        if (r < 0)
                return r;
        if (!take_spare(b, &f, base, data, len))
                f.fd = stage_temp(f.dirfd, path, base, data, len, mode, b->faults, f.tmp, err);
        if (f.fd < 0) {
                r = f.fd;
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

int ncm_fs_batch_append(ncm_fs_batch *b, int rootfd, const char *path, const void *data, size_t len,
                        mode_t mode, ncm_error *err)
{
        batch_file f = {.rootfd = rootfd, .fd = -1, .mode = mode, .append = true};
        const char *base;
        batch_file *at = NULL;
        int r;

        for (size_t i = 0; i < b->n; i++)
                if (b->v[i].append && b->v[i].rootfd == rootfd && strcmp(b->v[i].path, path) == 0)
                        at = &b->v[i];
        if (at) {
                /* appended to again: one write */
                char *v = realloc(at->data, at->len + len + 1);
                if (!v)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                memcpy(v + at->len, data, len);
                at->data = v;
                at->len += len;
                return 0;
        }
        r = file_begin(b, &f, path, &base, err);
        if (r < 0)
                return r;
        f.data = malloc(len + 1);
        if (!f.data) {
                batch_drop(&f, true);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        memcpy(f.data, data, len);
        f.len = len;
        /* opened now, created only by the commit: a dropped batch leaves no trace */
        f.fd = openat(f.dirfd, base, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        if (f.fd < 0 && errno != ENOENT) {
                r = errno;
                batch_drop(&f, true);
                return ncm_error_errno(err, r, "open '%s'", path);
        }
        b->v[b->n++] = f;
        return 0;
}

/*
 * Write append F (creating its file when missing), its writeback started: the commit's fsyncs
 * come after every append is written, so that the first one's journal commit carries them all
 * (one fdatasync after each write would make each append a journal commit of its own).
 */
static int append_write(const ncm_fs_batch *b, batch_file *f)
{
        const char *base = f->path + strlen(f->dir);
        struct stat st;
        int r;

        if (f->fd < 0) {
                r = ncm_fs_fault(b->faults, NCM_FS_OP_CREATE, f->path, f->len);
                if (r < 0)
                        return r;
                f->fd = openat(f->dirfd, base,
                               O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, f->mode);
                if (f->fd < 0)
                        return -errno;
                f->created = true;
                if (fchmod(f->fd, f->mode) < 0)
                        return -errno;
        }
        if (fstat(f->fd, &st) < 0)
                return -errno;
        f->end = st.st_size;
        f->written = true;
        r = write_faulted(b->faults, f->path, f->fd, f->data, f->len);
        if (r >= 0)
                (void)sync_file_range(f->fd, f->end, (off_t)f->len, SYNC_FILE_RANGE_WRITE);
        return r;
}

/* Undo the appends of B's files FROM..TO-1 (what a failed commit must not leave written). */
static void appends_undo(ncm_fs_batch *b, size_t from, size_t to)
{
        for (size_t i = from; i < to; i++) {
                batch_file *f = &b->v[i];
                if (!f->append || f->fd < 0 || !(f->created || f->written))
                        continue;
                if (f->created)
                        (void)unlinkat(f->dirfd, f->path + strlen(f->dir), 0);
                else
                        (void)ftruncate(f->fd, f->end);
        }
}

/* What the commit of F leaves to the settle: the file it replaced (HELD, or -1), its spare. */
static void commit_leaves(ncm_fs_batch *b, batch_file *f, int held)
{
        batch_spare *s = find_spare(b, f->rootfd, f->path);

        /* room reserved before the renames */
        if (held >= 0)
                b->held[b->n_held++] = held;
        if (!s && b->n_spares < SPARES_MAX) {
                char *p = strdup(f->path);
                if (!p)
                        return; /* only a spare less */
                s = &b->spares[b->n_spares++];
                *s = (batch_spare){.path = p, .rootfd = f->rootfd, .dirfd = -1, .fd = -1};
        }
        if (s)
                s->mode = f->mode;
}

/* Owe F's directory's fsync to the settle (once per directory); F's dirfd moves there. */
static void owe_dir(ncm_fs_batch *b, batch_file *f)
{
        for (size_t k = 0; k < b->n_owed; k++)
                if (b->owed[k].rootfd == f->rootfd && strcmp(b->owed[k].dir, f->dir) == 0)
                        return;
        /* room reserved before the renames */
        b->owed[b->n_owed++] = (batch_file){.path = f->path,
                                            .dir = f->dir,
                                            .rootfd = f->rootfd,
                                            .dirfd = f->dirfd,
                                            .fd = -1};
        f->path = f->dir = NULL;
        f->dirfd = -1;
}

/* ---- undo records ------------------------------------------------------------------------ */

/*
 * A commit with an undo record (ncm_fs_batch_set_undo) is all or nothing across failures and
 * crashes. Before its first change it makes, in this order and without touching any file's
 * content: a hard link ".NAME.undo" to each file it will replace (the old content, kept without
 * a byte of new space), then the record itself, written whole and renamed into place:
 *
 *   nodecm-undo 1
 *   R <path>           <path> is replaced: .<name>.undo holds the old file
 *   C <path>           <path> is created by the commit
 *   A <size> <path>    <path> is appended to: it was <size> bytes long
 *   N <path>           <path> is created by an append
 *
 * Then the appends, the renames and the directories' fsyncs; removing the record is the commit
 * point, after which the links go. Rolling back (the commit failing at any step, or a later
 * ncm_fs_recover() finding the record after a crash) renames each link back over its file,
 * removes what was created, cuts each append back, and removes the record last: until every
 * step succeeded the record stays, and the next recovery finishes the work. Every step of it is
 * a rename, an unlink or a truncation, none of which needs space. The record is not fsynced: it
 * guards against a process killed or a write failing, not a machine losing power.
 */

#define UNDO_MAGIC "nodecm-undo 1\n"

/* ".BASE.undo" into BUF. */
static bool undo_link_name(const char *base, char buf[static TMP_NAME_MAX])
{
        return (size_t)snprintf(buf, TMP_NAME_MAX, ".%s.undo", base) < TMP_NAME_MAX;
}

/* Apply one line of a record (KIND, SIZE, PATH inside ROOTFD). */
static int undo_line(int rootfd, char kind, long long size, const char *path,
                     const ncm_fs_faults *faults, ncm_error *err)
{
        ncm_autoclose int dirfd = -1;
        char link[TMP_NAME_MAX];
        const char *base;
        int r;

        dirfd = open_parent(rootfd, path, &base, err);
        if (dirfd == -ENOENT)
                return 0; /* its directory is gone: nothing of it to undo */
        if (dirfd < 0)
                return dirfd;
        switch (kind) {
        case 'R':
                if (!undo_link_name(base, link))
                        return ncm_error_set(err, ENAMETOOLONG, "'%s': name too long", path);
                if (faccessat(dirfd, link, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                        return 0; /* put back already */
                /* (a rename between two links of one file changes nothing: then unlink) */
                r = ncm_fs_fault(faults, NCM_FS_OP_RENAME, path, 0);
                if (r < 0 || renameat(dirfd, link, dirfd, base) < 0)
                        return ncm_error_errno(err, r < 0 ? -r : errno, "restore '%s'", path);
                r = ncm_fs_fault(faults, NCM_FS_OP_UNLINK, path, 0);
                if (r < 0 || (unlinkat(dirfd, link, 0) < 0 && errno != ENOENT))
                        return ncm_error_errno(err, r < 0 ? -r : errno, "restore '%s'", path);
                return 0;
        case 'C':
        case 'N':
                r = ncm_fs_fault(faults, NCM_FS_OP_UNLINK, path, 0);
                if (r < 0 || (unlinkat(dirfd, base, 0) < 0 && errno != ENOENT))
                        return ncm_error_errno(err, r < 0 ? -r : errno, "remove '%s'", path);
                return 0;
        case 'A': {
                ncm_autoclose int fd = openat(dirfd, base, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
                struct stat st;
                if (fd < 0 && errno == ENOENT)
                        return 0;
                if (fd < 0 || fstat(fd, &st) < 0)
                        return ncm_error_errno(err, errno, "cut back '%s'", path);
                if (st.st_size <= size)
                        return 0;
                r = ncm_fs_fault(faults, NCM_FS_OP_TRUNCATE, path, (size_t)size);
                if (r < 0 || ftruncate(fd, (off_t)size) < 0)
                        return ncm_error_errno(err, r < 0 ? -r : errno, "cut back '%s'", path);
                return 0;
        }
        default:
                return ncm_error_set(err, EINVAL, "undo record: unknown step '%c'", kind);
        }
}

/* Roll back what the record TEXT describes (paths inside ROOTFD), then remove it (PATH). */
static int undo_apply(int rootfd, const char *path, const char *text, size_t len,
                      const ncm_fs_faults *faults, ncm_error *err)
{
        size_t at = sizeof(UNDO_MAGIC) - 1;
        int r;

        if (len < at || memcmp(text, UNDO_MAGIC, at) != 0)
                return ncm_error_set(err, EINVAL, "%s: not an undo record nodecm knows", path);
        while (at < len) {
                const char *nl = memchr(text + at, '\n', len - at);
                char line[4200], *p, *end;
                long long size = 0;
                char kind;

                if (!nl)
                        return ncm_error_set(err, EINVAL, "%s: a line without its end", path);
                if ((size_t)(nl - (text + at)) >= sizeof(line) || nl - (text + at) < 3)
                        return ncm_error_set(err, EINVAL, "%s: a line too long or short", path);
                memcpy(line, text + at, (size_t)(nl - (text + at)));
                line[nl - (text + at)] = '\0';
                at = (size_t)(nl - text) + 1;
                kind = line[0];
                p = line + 2;
                if (kind == 'A') {
                        errno = 0;
                        size = strtoll(p, &end, 10);
                        if (errno || end == p || *end != ' ' || size < 0)
                                return ncm_error_set(err, EINVAL, "%s: bad size", path);
                        p = end + 1;
                }
                r = undo_line(rootfd, kind, size, p, faults, err);
                if (r < 0)
                        return r;
        }
        r = ncm_fs_fault(faults, NCM_FS_OP_UNLINK, path, 0);
        if (r < 0)
                return ncm_error_errno(err, -r, "remove '%s'", path);
        r = ncm_fs_unlink(rootfd, path, err);
        return r < 0 ? r : 1;
}

int ncm_fs_recover(int rootfd, const char *path, const ncm_fs_faults *faults, ncm_error *err)
{
        ncm_autofree char *text = NULL;
        size_t len = 0;
        int r = ncm_fs_read_all(rootfd, path, 1 << 20, &text, &len, err);

        if (r == -ENOENT) {
                ncm_error_clear(err);
                return 0;
        }
        if (r < 0)
                return r;
        r = undo_apply(rootfd, path, text, len, faults, err);
        if (r < 0)
                return ncm_error_prefix(err, "roll back an interrupted write");
        return r;
}

/* Forget the undo links B's files made (the commit went through, or the record never came). */
static void undo_links_drop(ncm_fs_batch *b, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                batch_file *f = &b->v[i];
                char link[TMP_NAME_MAX];
                if (f->append || !f->dir || f->dirfd < 0 ||
                    !undo_link_name(f->path + strlen(f->dir), link))
                        continue;
                if (ncm_fs_fault(b->faults, NCM_FS_OP_UNLINK, f->path, 0) >= 0)
                        (void)unlinkat(f->dirfd, link, 0);
        }
}

/*
 * Before the first change: the undo links, then the record (*RET_TEXT, what it says). -errno
 * with nothing changed but links (which the caller drops).
 */
static int undo_prepare(ncm_fs_batch *b, ncm_buf *text, ncm_error *err)
{
        ncm_autoclose int dirfd = -1;
        ncm_autoclose int fd = -1;
        const char *base;
        char tmp[TMP_NAME_MAX];
        int r;

        ncm_buf_puts(text, UNDO_MAGIC);
        for (size_t i = 0; i < b->n; i++) {
                batch_file *f = &b->v[i];
                const char *fbase = f->path + strlen(f->dir);
                char link[TMP_NAME_MAX];
                struct stat st;

                if (f->rootfd != b->undo_rootfd || strchr(f->path, '\n'))
                        return ncm_error_set(err, EINVAL,
                                             "'%s': not a file an undo record can name", f->path);
                if (f->append) {
                        if (f->fd >= 0 && fstat(f->fd, &st) == 0)
                                ncm_buf_printf(text, "A %lld %s\n", (long long)st.st_size, f->path);
                        else if (f->fd >= 0)
                                return ncm_error_errno(err, errno, "stat '%s'", f->path);
                        else
                                ncm_buf_printf(text, "N %s\n", f->path);
                        continue;
                }
                if (!undo_link_name(fbase, link))
                        return ncm_error_set(err, ENAMETOOLONG, "'%s': name too long", f->path);
                (void)unlinkat(f->dirfd, link, 0); /* an earlier crash's */
                r = ncm_fs_fault(b->faults, NCM_FS_OP_LINK, f->path, 0);
                if (r < 0)
                        return ncm_error_errno(err, -r, "keep the old '%s'", f->path);
                if (linkat(f->dirfd, fbase, f->dirfd, link, 0) == 0)
                        ncm_buf_printf(text, "R %s\n", f->path);
                else if (errno == ENOENT)
                        ncm_buf_printf(text, "C %s\n", f->path);
                else
                        return ncm_error_errno(err, errno, "keep the old '%s'", f->path);
        }
        if (ncm_buf_failed(text))
                return ncm_error_set(err, ENOMEM, "out of memory");
        dirfd = open_parent(b->undo_rootfd, b->undo_path, &base, err);
        if (dirfd < 0)
                return dirfd;
        fd = stage_temp(dirfd, b->undo_path, base, text->data, text->len, 0600, b->faults, tmp,
                        err);
        if (fd < 0)
                return fd;
        r = ncm_fs_fault(b->faults, NCM_FS_OP_RENAME, b->undo_path, 0);
        if (r < 0 || renameat(dirfd, tmp, dirfd, base) < 0) {
                r = r < 0 ? -r : errno;
                (void)unlinkat(dirfd, tmp, 0);
                return ncm_error_errno(err, r, "write '%s'", b->undo_path);
        }
        return 0;
}

/*
 * A failed commit with an undo record: everything rolled back from what the record says, which
 * is removed last. When a step fails the record stays for ncm_fs_recover() (ERR keeps the
 * commit's own failure).
 */
static void undo_rollback(ncm_fs_batch *b, const ncm_buf *text)
{
        (void)undo_apply(b->undo_rootfd, b->undo_path, text->data, text->len, b->faults, NULL);
}

int ncm_fs_batch_commit(ncm_fs_batch *b, unsigned flags, ncm_error *err)
{
        bool nodirsync = flags & NCM_FS_WRITE_NO_DIRSYNC;
        bool nosync = flags & NCM_FS_APPEND_NO_SYNC;
        /* one append alone needs no record: a failure cuts it back, a crash leaves it whole or
         * cut short, which its reader tolerates */
        bool recorded = b->undo_path != NULL && b->n > 0;
        bool undo = recorded && !(b->n == 1 && b->v[0].append);
        ncm_buf text = NCM_BUF_INIT;
        size_t i, renamed = 0, failed_rename = SIZE_MAX;
        int r = 0;

        if (flags & ~(unsigned)(NCM_FS_WRITE_NO_DIRSYNC | NCM_FS_APPEND_NO_SYNC)) {
                batch_clear(b, 0);
                return ncm_error_set(err, EINVAL, "write batch: unknown flags 0x%x", flags);
        }
        /* room for every file's entry (one slot to spare), before anything is renamed */
        if (ncm__array_grow(b->held, b->cap_held, b->n_held + b->n) < 0 ||
            (nodirsync && ncm__array_grow(b->owed, b->cap_owed, b->n_owed + b->n) < 0)) {
                batch_clear(b, 0);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        /* an earlier commit's rollback that could not finish: finished first */
        if (recorded && (r = ncm_fs_recover(b->undo_rootfd, b->undo_path, b->faults, err)) < 0) {
                batch_clear(b, 0);
                return r;
        }
        /* every new file whole on disk before anything changes: a crash leaves each old or new */
        for (i = 0; i < b->n && r >= 0; i++) {
                batch_file *f = &b->v[i];
                if (f->append)
                        continue;
                r = ncm_fs_fault(b->faults, NCM_FS_OP_FSYNC, f->path, 0);
                if (r >= 0 && (fsync(f->fd) < 0 || close(NCM_TAKE_FD(f->fd)) < 0))
                        r = -errno;
                if (r < 0)
                        ncm_error_errno(err, -r, "write '%s'", f->path);
        }
        if (r >= 0 && undo) {
                r = undo_prepare(b, &text, err);
                if (r < 0) {
                        undo_links_drop(b, b->n);
                        ncm_buf_done(&text);
                        batch_clear(b, 0);
                        return r;
                }
        }
        if (r < 0) {
                ncm_buf_done(&text);
                batch_clear(b, 0);
                return r;
        }
        /* the appends, then one fdatasync each: the first journal commit carries them all */
        for (i = 0; i < b->n && r >= 0; i++) {
                batch_file *f = &b->v[i];
                if (!f->append)
                        continue;
                r = append_write(b, f);
                if (r < 0)
                        ncm_error_errno(err, -r, "write '%s'", f->path);
        }
        for (i = 0; i < b->n && r >= 0 && !nosync; i++) {
                batch_file *f = &b->v[i];
                if (!f->append)
                        continue;
                r = ncm_fs_fault(b->faults, NCM_FS_OP_FSYNC, f->path, 0);
                if (r >= 0 && fdatasync(f->fd) < 0)
                        r = -errno;
                if (r < 0)
                        ncm_error_errno(err, -r, "write '%s'", f->path);
        }
        /* in the order written: without an undo record, a crash between two leaves a prefix */
        for (i = 0; i < b->n && r >= 0; i++) {
                batch_file *f = &b->v[i];
                const char *base = f->path + strlen(f->dir);
                int held;
                if (f->append)
                        continue; /* in place */
                r = ncm_fs_fault(b->faults, NCM_FS_OP_RENAME, f->path, 0);
                if (r < 0) {
                        ncm_error_errno(err, -r, "write '%s'", f->path);
                        failed_rename = i;
                        break;
                }
                /* the file replaced stays open: freed by the settle, not inside the rename */
                held = openat(f->dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (renameat(f->dirfd, f->tmp, f->dirfd, base) < 0) {
                        r = -errno;
                        if (held >= 0)
                                close(held);
                        ncm_error_errno(err, -r, "write '%s'", f->path);
                        failed_rename = i;
                        break;
                }
                renamed = i + 1;
                commit_leaves(b, f, held);
        }
        for (i = 0; i < b->n && r >= 0 && !nodirsync; i++) {
                bool seen = false;
                if (b->v[i].append && !b->v[i].created)
                        continue; /* no name changed */
                for (size_t k = 0; k < i && !seen; k++)
                        seen = (!b->v[k].append || b->v[k].created) &&
                               b->v[k].rootfd == b->v[i].rootfd &&
                               strcmp(b->v[k].dir, b->v[i].dir) == 0;
                r = seen ? 0 : sync_parent(b->v[i].dirfd, b->v[i].path, b->faults, err);
        }
        /* the commit point: the record goes */
        if (r >= 0 && undo) {
                r = ncm_fs_fault(b->faults, NCM_FS_OP_UNLINK, b->undo_path, 0);
                if (r >= 0)
                        r = ncm_fs_unlink(b->undo_rootfd, b->undo_path, err);
                else
                        ncm_error_errno(err, -r, "remove '%s'", b->undo_path);
        }
        if (r < 0) {
                if (undo) {
                        undo_rollback(b, &text);
                        undo_links_drop(b, b->n);
                        batch_clear(b, renamed);
                } else {
                        /*
                         * Without a record: a failure before the renames writes nothing; a
                         * failed rename leaves what comes before it written, nothing after it;
                         * a directory's fsync failing leaves everything written.
                         */
                        if (failed_rename != SIZE_MAX)
                                appends_undo(b, failed_rename + 1, b->n);
                        else if (renamed == 0)
                                appends_undo(b, 0, b->n);
                        batch_clear(b, renamed);
                }
                ncm_buf_done(&text);
                return r;
        }
        if (undo)
                undo_links_drop(b, b->n);
        ncm_buf_done(&text);
        for (i = 0; i < b->n && nodirsync; i++)
                if (!b->v[i].append || b->v[i].created)
                        owe_dir(b, &b->v[i]);
        batch_clear(b, b->n);
        return 0;
}

/* Make spare S's temporary file (best effort: without one the next write makes its own). */
static void make_spare(batch_spare *s)
{
        const char *base;
        char tmp[TMP_NAME_MAX];
        int dirfd = open_parent(s->rootfd, s->path, &base, NULL);
        int fd;

        if (dirfd < 0)
                return;
        fd = stage_temp(dirfd, s->path, base, "", 0, s->mode, NULL, tmp, NULL);
        if (fd < 0) {
                close(dirfd);
                return;
        }
        s->dirfd = dirfd;
        s->fd = fd;
        memcpy(s->tmp, tmp, sizeof(s->tmp));
}

int ncm_fs_batch_settle(ncm_fs_batch *b, unsigned flags, ncm_error *err)
{
        int ret = 0;

        if (flags & ~(unsigned)NCM_FS_WRITE_NO_DIRSYNC)
                return ncm_error_set(err, EINVAL, "settle batch: unknown flags 0x%x", flags);
        if (!(flags & NCM_FS_WRITE_NO_DIRSYNC)) {
                for (size_t i = 0; i < b->n_owed; i++) {
                        int r = sync_parent(b->owed[i].dirfd, b->owed[i].path, b->faults,
                                            ret < 0 ? NULL : err);
                        if (r < 0 && ret == 0)
                                ret = r;
                        batch_drop(&b->owed[i], true);
                }
                b->n_owed = 0;
        }
        close_held(b);
        for (size_t i = 0; i < b->n_spares; i++)
                if (b->spares[i].fd < 0)
                        make_spare(&b->spares[i]);
        return ret;
}

size_t ncm_fs_batch_owed(const ncm_fs_batch *b)
{
        return b ? b->n_owed : 0;
}

int ncm_fs_sync_data(int rootfd, const char *path, const ncm_fs_faults *faults, ncm_error *err)
{
        ncm_autoclose int fd = ncm_fs_openat(rootfd, path, O_WRONLY | O_NOFOLLOW, 0, err);
        int r;

        if (fd < 0)
                return fd;
        r = ncm_fs_fault(faults, NCM_FS_OP_FSYNC, path, 0);
        if (r >= 0 && fdatasync(fd) < 0)
                r = -errno;
        if (r < 0)
                return ncm_error_errno(err, -r, "write '%s'", path);
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
                                    ((strncmp(p + 1 + nl, ".tmp", 4) == 0 &&
                                      strlen(p + 1 + nl + 4) == 8 &&
                                      strspn(p + 1 + nl + 4, "0123456789abcdef") == 8) ||
                                     strcmp(p + 1 + nl, ".undo") == 0);
                        if (ours && unlinkat(dirfd(d), p, 0) == 0)
                                removed++;
                }
        }
        closedir(d);
        return removed;
}

int ncm_fs_lock(int rootfd, const char *path, unsigned flags, ncm_error *err)
{
        bool shared = flags & NCM_FS_LOCK_SHARED;
        ncm_autoclose int fd = ncm_fs_openat(
                        rootfd, path, shared ? O_RDONLY | O_CLOEXEC : O_RDWR | O_CREAT | O_CLOEXEC,
                        0600, err);

        if (fd < 0)
                return fd;
        while (flock(fd, (shared ? LOCK_SH : LOCK_EX) |
                                         ((flags & NCM_FS_LOCK_NOWAIT) ? LOCK_NB : 0)) < 0) {
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
