/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File access through a root directory fd (STYLE.md rule 9).
 *
 * Every path is absolute as the kernel spells it ("/sys/devices/system/cpu/online") and is
 * resolved inside the root: openat2(RESOLVE_IN_ROOT) keeps ".." and absolute symlinks of a
 * fixture from escaping. Where openat2 is unavailable the path is opened relative to the root
 * with openat(2), and paths with ".." components are refused.
 *
 * Kernel files are read with one read(2) (sysfs and cgroupfs produce a whole file per read);
 * regular files (configs, checkpoints) are read whole with ncm_fs_read_all().
 *
 * ROOTFD may be AT_FDCWD for host paths given by a user (a config file, a state directory):
 * those resolve normally, relative to the working directory.
 *
 * All functions return >= 0 on success and -errno on failure, with err naming the path.
 */
#ifndef NODECM_FS_H
#define NODECM_FS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <nodecm/common.h>
#include <nodecm/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Open DIR as a root (O_PATH | O_DIRECTORY). Returns the fd. Use "/" for this machine. */
NCM_API int ncm_fs_open_root(const char *dir, ncm_error *err);

/* openat(2) of PATH resolved inside ROOTFD. Returns the new fd. */
NCM_API int ncm_fs_openat(int rootfd, const char *path, int flags, mode_t mode, ncm_error *err);

/*
 * Read PATH with a single read(2) into BUF (SIZE bytes, NUL-terminated). Returns the number of
 * bytes read. -EFBIG when the file fills the buffer (it may be longer); -ENOENT when absent.
 */
NCM_API ssize_t ncm_fs_read(int rootfd, const char *path, char *buf, size_t size, ncm_error *err);

/*
 * Read a whole regular file, at most MAX bytes (-EFBIG beyond). *RET is malloc'd and
 * NUL-terminated (the terminator is not counted in *RET_LEN, which may be NULL).
 */
NCM_API int ncm_fs_read_all(int rootfd, const char *path, size_t max, char **ret, size_t *ret_len,
                            ncm_error *err);

/*
 * Write VALUE to an existing file with one write(2), as cgroupfs and sysfs expect. A short write
 * is -EIO. The file is opened O_WRONLY | O_TRUNC and never created.
 */
NCM_API int ncm_fs_write(int rootfd, const char *path, const char *value, ncm_error *err);

/*
 * Replace PATH with DATA atomically: write a temporary file ".NAME.tmpXXXXXXXX" in the same
 * directory, fsync it, rename it over PATH and fsync the directory. A new file gets MODE (the
 * umask does not apply); an existing one keeps its mode. On failure PATH is untouched and the
 * temporary file is removed (a crash can leave it: ncm_fs_clean_tmp).
 */
NCM_API int ncm_fs_write_atomic(int rootfd, const char *path, const void *data, size_t len,
                                mode_t mode, ncm_error *err);

enum {
        /*
         * Leave the directory's fsync to the caller: the file's data is fsynced before the
         * rename (a crash never leaves it torn), but the rename itself is durable only after the
         * next ncm_fs_sync_dir() of its directory (or the next ncm_fs_write_atomic() into it).
         * For a transaction that writes several files of one directory and syncs it once.
         */
        NCM_FS_WRITE_NO_DIRSYNC = 1 << 0,
        /*
         * For ncm_fs_batch_commit(): write the appends but leave their fdatasync to the caller
         * (ncm_fs_sync_data()), who makes one sync carry the appends of several commits (a
         * group commit) and answers none of them before it. A crash of the process loses
         * nothing written; a machine's loses what was not synced yet.
         */
        NCM_FS_APPEND_NO_SYNC = 1 << 1,
};

/*
 * ncm_fs_write_atomic() with FLAGS (NCM_FS_WRITE_*; 0: exactly ncm_fs_write_atomic()).
 * Unknown flags are -EINVAL, nothing written.
 */
NCM_API int ncm_fs_write_atomic_flags(int rootfd, const char *path, const void *data, size_t len,
                                      mode_t mode, unsigned flags, ncm_error *err);

/*
 * Fault injection, for tests of what a failing disk or a killed process leaves: a hook called
 * before each operation a batch (ncm_fs_batch_set_faults), a recovery (ncm_fs_recover) or a
 * caller that asks (ncm_fs_fault) makes on the disk. Never global: it travels with the object
 * doing the writes.
 */
typedef enum ncm_fs_op {
        NCM_FS_OP_CREATE,   /* a file created (a temporary file, an appended file) */
        NCM_FS_OP_WRITE,    /* data written to a file (LEN bytes) */
        NCM_FS_OP_FSYNC,    /* a file's fsync or fdatasync */
        NCM_FS_OP_RENAME,   /* a rename into place (or back, rolling back) */
        NCM_FS_OP_LINK,     /* an undo link to a file about to be replaced */
        NCM_FS_OP_UNLINK,   /* a file removed */
        NCM_FS_OP_TRUNCATE, /* an append cut back */
        NCM_FS_OP_DIRSYNC,  /* a directory's fsync */
        NCM_FS_OP_MKDIR,    /* a directory made */
} ncm_fs_op;

typedef struct ncm_fs_faults {
        /*
         * Called before OP on PATH: 0 lets it happen, -errno fails it with that error; for
         * NCM_FS_OP_WRITE, N with 0 < N < LEN writes N bytes and then fails with ENOSPC (a
         * short write). It may also not return (a process killed at that point).
         */
        int (*fn)(void *data, ncm_fs_op op, const char *path, size_t len);
        void *data;
} ncm_fs_faults;

/* What F's hook says of OP on PATH (0 for NULL F or hook): for callers that write themselves. */
NCM_API int ncm_fs_fault(const ncm_fs_faults *f, ncm_fs_op op, const char *path, size_t len);

/*
 * A batch of atomic writes committed together: each file is written to its temporary file when
 * it joins (ncm_fs_batch_write), then ncm_fs_batch_commit() fsyncs them all, renames them in
 * the order they joined and fsyncs their directories. The guarantees are those of one
 * ncm_fs_write_atomic() per file in that order (a crash leaves each file old or new, and the
 * renamed ones a prefix of the order); the cost on a journalling filesystem is about one
 * journal commit for the batch instead of one per file.
 *
 * A batch kept from one transaction to the next also takes the filesystem's slowest steps off
 * the commit: the files the renames replace are held open until ncm_fs_batch_settle(), which
 * frees them, and which creates the next temporary file of each path the batch has committed
 * (up to 16 paths), so that the next write of it does not. Those files are named as
 * ncm_fs_write_atomic()'s temporaries and are empty: ncm_fs_clean_tmp() removes what a crash
 * leaves. Not thread-safe.
 */
typedef struct ncm_fs_batch ncm_fs_batch;

NCM_API ncm_fs_batch *ncm_fs_batch_new(void);
/*
 * Free B; what it holds is not written (its temporary files, staged or made ahead, go), and
 * directories whose fsync it owes are not synced (settle first). Returns NULL.
 */
NCM_API ncm_fs_batch *ncm_fs_batch_free(ncm_fs_batch *b);
NCM_DEFINE_AUTOPTR(ncm_fs_batch, ncm_fs_batch_free)
/* How many files B holds staged (0 for NULL). */
NCM_API size_t ncm_fs_batch_size(const ncm_fs_batch *b) NCM_PURE;
/*
 * Add PATH (inside ROOTFD) with DATA to B: its temporary file is written now (MODE as for
 * ncm_fs_write_atomic) and its writeback started. The same ROOTFD and PATH again replace the
 * earlier text. On failure B is as it was (-errno, ERR names PATH).
 */
NCM_API int ncm_fs_batch_write(ncm_fs_batch *b, int rootfd, const char *path, const void *data,
                               size_t len, mode_t mode, ncm_error *err);
/*
 * Add DATA to the end of PATH (inside ROOTFD; created with MODE when missing) with B: written by
 * the commit, in B's order, and fdatasynced before any of B's renames, so that a crash finds
 * the appended data whenever it finds a later file renamed. An append changes no name (unless
 * it created PATH): it owes no directory fsync. Appending to the same PATH again adds to the
 * same write. A crash can leave the end of an append cut short: a reader of such a file must
 * tolerate a last record without its end. On failure B is as it was.
 */
NCM_API int ncm_fs_batch_append(ncm_fs_batch *b, int rootfd, const char *path, const void *data,
                                size_t len, mode_t mode, ncm_error *err);
/* Forget what B holds staged, writing nothing (a transaction rolled back); B stays usable. */
NCM_API void ncm_fs_batch_drop(ncm_fs_batch *b);
/*
 * Write B's staged files: fsync each (and write each append), rename each in order, then fsync
 * each directory once, or, when FLAGS has NCM_FS_WRITE_NO_DIRSYNC, owe those fsyncs to the next
 * ncm_fs_batch_settle(). Nothing is staged afterwards, also on failure: a failed fsync renames
 * nothing and cuts every append back; a failed rename leaves what comes before it written,
 * nothing after it. 0 or -errno.
 */
NCM_API int ncm_fs_batch_commit(ncm_fs_batch *b, unsigned flags, ncm_error *err);
/*
 * What B's commits left, done when no caller waits: the directories they owe fsynced (unless
 * FLAGS has NCM_FS_WRITE_NO_DIRSYNC: still owed), the files they replaced freed, a temporary
 * file made for the next write of each path. Returns 0, or the first directory's fsync error
 * (-errno, "fsync directory of 'PATH'"; the rest is done all the same). A temporary file that
 * cannot be made is not an error: the next write makes its own.
 */
NCM_API int ncm_fs_batch_settle(ncm_fs_batch *b, unsigned flags, ncm_error *err);
/* How many directories' fsyncs B owes (0 for NULL). */
NCM_API size_t ncm_fs_batch_owed(const ncm_fs_batch *b) NCM_PURE;

/* B's operations go through FAULTS (borrowed, must outlive B; NULL: none). */
NCM_API void ncm_fs_batch_set_faults(ncm_fs_batch *b, const ncm_fs_faults *faults);

/*
 * Make each commit of B all or nothing, across a failure at any step and a killed process: an
 * undo record at PATH (inside ROOTFD; every file of B must be inside ROOTFD too) describes how
 * to put back what the commit changes, made before its first change (hard links ".NAME.undo"
 * to the files it replaces, each append's length), removed as its commit point. A failed
 * commit rolls back (nothing of it stays: the appends cut back, the old files renamed back);
 * when the rollback itself fails, the record stays and ncm_fs_recover() finishes it -- the
 * next commit of B does so first, a reader must before it reads (under the directory's lock).
 * Not against power loss: the record is not fsynced. PATH NULL: commits as without a record.
 * -ENOMEM.
 */
NCM_API int ncm_fs_batch_set_undo(ncm_fs_batch *b, int rootfd, const char *path, ncm_error *err);

/*
 * Finish the rollback the undo record PATH (inside ROOTFD) describes, if there is one: each
 * file back as it was before the interrupted commit, then the record removed. Returns 1 when
 * something was rolled back, 0 when there was no record, -errno (the record stays) when a step
 * failed. Call it under the directory's lock, before reading the files.
 */
NCM_API int ncm_fs_recover(int rootfd, const char *path, const ncm_fs_faults *faults,
                           ncm_error *err);

/*
 * fdatasync file PATH (inside ROOTFD), through FAULTS' hook (NCM_FS_OP_FSYNC; may be NULL): the
 * appends of commits with NCM_FS_APPEND_NO_SYNC made durable. A missing file is -ENOENT.
 */
NCM_API int ncm_fs_sync_data(int rootfd, const char *path, const ncm_fs_faults *faults,
                             ncm_error *err);

/*
 * fsync directory DIR (inside ROOTFD), making the renames done in it durable: the end of a
 * transaction written with NCM_FS_WRITE_NO_DIRSYNC. 0, or -errno ("fsync directory 'DIR'").
 */
NCM_API int ncm_fs_sync_dir(int rootfd, const char *dir, ncm_error *err);

/*
 * Remove the temporary files ncm_fs_write_atomic() may have left in directory DIR for the
 * files NAMES (NULL-terminated) after a crash: ".NAME.tmpXXXXXXXX", and the undo links of a
 * commit that went through (".NAME.undo"; ncm_fs_recover() first: while an undo record is
 * there, they are what it needs). Returns how many went. Call it only while no other writer
 * can be at work (under the directory's lock).
 */
NCM_API int ncm_fs_clean_tmp(int rootfd, const char *dir, const char *const *names, ncm_error *err);

enum {
        NCM_FS_LOCK_NOWAIT = 1 << 0, /* fail with -EWOULDBLOCK instead of waiting */
        /* a reader's lock: shared, on a PATH that must exist (opened read-only: a read-only
         * directory can be looked at), so that readers run together and never beside a writer */
        NCM_FS_LOCK_SHARED = 1 << 1,
};

/*
 * Take an exclusive flock(2) on PATH (created 0600 when missing) and return its fd: the lock
 * lasts until the fd is closed (or the process ends, even by kill -9). Waits for another
 * holder unless NCM_FS_LOCK_NOWAIT (-EWOULDBLOCK, the message naming the file).
 * NCM_FS_LOCK_SHARED: a shared one instead (a missing PATH is -ENOENT).
 */
NCM_API int ncm_fs_lock(int rootfd, const char *path, unsigned flags, ncm_error *err);

/* 1 if PATH exists (following symlinks), 0 if not, -errno on other errors. */
NCM_API int ncm_fs_exists(int rootfd, const char *path);

/* Open directory PATH for listing. *RET is closed with closedir(). */
NCM_API int ncm_fs_opendir(int rootfd, const char *path, DIR **ret, ncm_error *err);

/* mkdir PATH. Returns 1 if created, 0 if it already existed as a directory. */
NCM_API int ncm_fs_mkdir(int rootfd, const char *path, mode_t mode, ncm_error *err);

/* rmdir PATH. Returns 1 if removed, 0 if it did not exist. */
NCM_API int ncm_fs_rmdir(int rootfd, const char *path, ncm_error *err);

/* unlink PATH. Returns 1 if removed, 0 if it did not exist. */
NCM_API int ncm_fs_unlink(int rootfd, const char *path, ncm_error *err);

#ifdef __cplusplus
}
#endif
#endif
