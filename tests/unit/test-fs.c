/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Root-fd file access: paths stay inside the root (absolute symlinks and ".." of a fixture
 * cannot reach the host), one-read semantics, atomic replacement leaves no temporary file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include "base/fs-beneath.h"
#include "testutil.h"

typedef struct fixture {
        char *dir;
        int root;
} fixture;

static void put(const char *dir, const char *rel, const char *content)
{
        char p[4096];
        FILE *f;
        snprintf(p, sizeof(p), "%s/%s", dir, rel);
        f = fopen(p, "w");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

static int setup(void **state)
{
        fixture *fx = calloc(1, sizeof(*fx));
        char p[4096];
        fx->dir = tu_mkdtemp();
        snprintf(p, sizeof(p), "%s/sys", fx->dir);
        mkdir(p, 0755);
        put(fx->dir, "sys/online", "0-3\n");
        put(fx->dir, "secret", "inside\n");
        /* An absolute symlink must resolve inside the root, as the kernel would in a chroot. */
        snprintf(p, sizeof(p), "%s/sys/abs", fx->dir);
        assert_int_equal(symlink("/secret", p), 0);
        snprintf(p, sizeof(p), "%s/sys/host", fx->dir);
        assert_int_equal(symlink("/etc/hostname", p), 0);
        fx->root = ncm_fs_open_root(fx->dir, NULL);
        assert_true(fx->root >= 0);
        *state = fx;
        return 0;
}

static int teardown(void **state)
{
        fixture *fx = *state;
        close(fx->root);
        tu_rm_rf(fx->dir);
        free(fx->dir);
        free(fx);
        return 0;
}

static void test_fs_read_single(void **state)
{
        fixture *fx = *state;
        char buf[64];
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_fs_read(fx->root, "/sys/online", buf, sizeof(buf), &err), 4);
        assert_string_equal(buf, "0-3\n");
        assert_int_equal(ncm_fs_read(fx->root, "/sys/online", buf, 5, &err), -EFBIG);
        assert_non_null(strstr(err.msg, "'/sys/online'"));
        assert_int_equal(ncm_fs_read(fx->root, "/sys/missing", buf, sizeof(buf), &err), -ENOENT);
        assert_string_equal(err.msg, "open '/sys/missing': No such file or directory");
}

static void test_fs_paths_cannot_escape_root(void **state)
{
        fixture *fx = *state;
        char buf[64];
        assert_int_equal(ncm_fs_read(fx->root, "/sys/abs", buf, sizeof(buf), NULL), 7);
        assert_string_equal(buf, "inside\n");
        /* /etc/hostname does not exist inside the fixture: no host file is read. */
        assert_true(ncm_fs_read(fx->root, "/sys/host", buf, sizeof(buf), NULL) < 0);
        assert_true(ncm_fs_read(fx->root, "/../../../etc/hostname", buf, sizeof(buf), NULL) < 0);
        assert_int_equal(ncm_fs_read(fx->root, "/sys/../secret", buf, sizeof(buf), NULL), 7);
}

/*
 * Reading under a directory held open (base/fs-beneath.h) reads what reading from the root
 * reads: the same file, the same errors naming the full path, and no way out of the root
 * through a symlink or "..", which send the open back to the root's walk.
 */
static void test_fs_read_beneath(void **state)
{
        fixture *fx = *state;
        char buf[64], p[4096];
        ncm_error err = NCM_ERROR_INIT;
        int sys = ncm_fs_openat(fx->root, "/sys", O_PATH | O_DIRECTORY, 0, NULL);

        assert_true(sys >= 0);
        assert_string_equal(ncm__fs_below("/sys/online", "/sys", 4), "online");
        assert_string_equal(ncm__fs_below("/sys/a/b", "/sys", 4), "a/b");
        assert_null(ncm__fs_below("/sysx/online", "/sys", 4));
        assert_null(ncm__fs_below("/sys", "/sys", 4));
        assert_null(ncm__fs_below("/sys/", "/sys", 4));
        assert_null(ncm__fs_below("/other/online", "/sys", 4));

        assert_int_equal(ncm__fs_read_beneath(fx->root, sys, "/sys/online", "online", buf,
                                              sizeof(buf), &err),
                         4);
        assert_string_equal(buf, "0-3\n");
        /* no directory held: from the root */
        assert_int_equal(ncm__fs_read_beneath(fx->root, -1, "/sys/online", NULL, buf, sizeof(buf),
                                              &err),
                         4);
        /* the errors name the path as the root-relative read does */
        assert_int_equal(ncm__fs_read_beneath(fx->root, sys, "/sys/missing", "missing", buf,
                                              sizeof(buf), &err),
                         -ENOENT);
        assert_string_equal(err.msg, "open '/sys/missing': No such file or directory");
        assert_int_equal(ncm__fs_read_beneath(fx->root, sys, "/sys/online", "online", buf, 5, &err),
                         -EFBIG);
        assert_string_equal(err.msg, "read '/sys/online': file larger than 3 bytes");
        assert_int_equal(ncm__fs_read_beneath(fx->root, sys, "/sys/online/x", "online/x", buf,
                                              sizeof(buf), &err),
                         -ENOTDIR);
        assert_string_equal(err.msg, "open '/sys/online/x': Not a directory");
        /* an absolute symlink resolves inside the root, as from the root */
        assert_int_equal(ncm__fs_read_beneath(fx->root, sys, "/sys/abs", "abs", buf, sizeof(buf),
                                              NULL),
                         7);
        assert_string_equal(buf, "inside\n");
        /* one to the host's file finds nothing inside the root */
        assert_int_equal(ncm__fs_read_beneath(fx->root, sys, "/sys/host", "host", buf, sizeof(buf),
                                              NULL),
                         -ENOENT);
        /* ".." is walked from the root, which it cannot leave */
        assert_int_equal(ncm__fs_read_beneath(fx->root, sys, "/sys/../secret", "../secret", buf,
                                              sizeof(buf), NULL),
                         7);
        assert_int_equal(ncm__fs_read_beneath(fx->root, sys, "/../../etc/hostname",
                                              "../../../etc/hostname", buf, sizeof(buf), NULL),
                         -ENOENT);
        /* a directory on the way that is a symlink: followed inside the root */
        snprintf(p, sizeof(p), "%s/sys/dir", fx->dir);
        assert_int_equal(symlink("/sys", p), 0);
        assert_int_equal(ncm__fs_read_beneath(fx->root, sys, "/sys/dir/online", "dir/online", buf,
                                              sizeof(buf), NULL),
                         4);
        /* a final symlink with O_NOFOLLOW is refused either way */
        assert_int_equal(ncm__fs_openat_beneath(fx->root, sys, "/sys/abs", "abs",
                                                O_RDONLY | O_NOFOLLOW, &err),
                         -ELOOP);
        assert_int_equal(ncm_fs_openat(fx->root, "/sys/abs", O_RDONLY | O_NOFOLLOW, 0, NULL),
                         -ELOOP);
        close(sys);
}

static void test_fs_read_all(void **state)
{
        fixture *fx = *state;
        char *text = NULL;
        size_t len = 0;
        assert_int_equal(ncm_fs_read_all(fx->root, "/secret", 100, &text, &len, NULL), 0);
        assert_int_equal(len, 7);
        assert_string_equal(text, "inside\n");
        free(text);
        text = NULL;
        assert_int_equal(ncm_fs_read_all(fx->root, "/secret", 3, &text, &len, NULL), -EFBIG);
        assert_null(text);
        assert_int_equal(ncm_fs_read_all(fx->root, "/sys", 100, &text, &len, NULL), -EISDIR);
}

static int count_entries(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        int n = 0;
        assert_non_null(d);
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                        n++;
        closedir(d);
        return n;
}

static void test_fs_write_atomic(void **state)
{
        fixture *fx = *state;
        char buf[64], p[4096];
        struct stat st;
        int before = count_entries(fx->dir);
        assert_int_equal(ncm_fs_write_atomic(fx->root, "/state", "{}\n", 3, 0644, NULL), 0);
        assert_int_equal(ncm_fs_read(fx->root, "/state", buf, sizeof(buf), NULL), 3);
        assert_int_equal(ncm_fs_write_atomic(fx->root, "/state", "x", 1, 0600, NULL), 0);
        assert_int_equal(ncm_fs_read(fx->root, "/state", buf, sizeof(buf), NULL), 1);
        snprintf(p, sizeof(p), "%s/state", fx->dir);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0644); /* an existing file keeps its mode */
        /* Only the target was added: no temporary file is left behind. */
        assert_int_equal(count_entries(fx->dir), before + 1);
        /* A missing directory fails cleanly. */
        assert_true(ncm_fs_write_atomic(fx->root, "/nodir/state", "x", 1, 0600, NULL) < 0);
}

/* A transaction's files with one directory sync at the end; the flags' errors. */
static void test_fs_write_atomic_no_dirsync(void **state)
{
        fixture *fx = *state;
        ncm_error err = NCM_ERROR_INIT;
        char buf[64], p[4096];
        struct stat st;
        int before = count_entries(fx->dir);

        assert_int_equal(ncm_fs_write_atomic_flags(fx->root, "/a", "one", 3, 0600,
                                                   NCM_FS_WRITE_NO_DIRSYNC, &err),
                         0);
        assert_int_equal(ncm_fs_write_atomic_flags(fx->root, "/b", "two", 3, 0640,
                                                   NCM_FS_WRITE_NO_DIRSYNC, &err),
                         0);
        assert_int_equal(ncm_fs_sync_dir(fx->root, "/", &err), 0);
        assert_int_equal(ncm_fs_read(fx->root, "/a", buf, sizeof(buf), NULL), 3);
        assert_string_equal(buf, "one");
        assert_int_equal(ncm_fs_read(fx->root, "/b", buf, sizeof(buf), NULL), 3);
        snprintf(p, sizeof(p), "%s/b", fx->dir);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0640);
        /* flags 0 is the plain write */
        assert_int_equal(ncm_fs_write_atomic_flags(fx->root, "/a", "1", 1, 0600, 0, &err), 0);
        assert_int_equal(ncm_fs_read(fx->root, "/a", buf, sizeof(buf), NULL), 1);
        /* only the targets were added: no temporary file is left behind */
        assert_int_equal(count_entries(fx->dir), before + 2);

        /* an unknown flag writes nothing */
        assert_int_equal(ncm_fs_write_atomic_flags(fx->root, "/a", "xx", 2, 0600, 1u << 7, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "write '/a': unknown flags 0x80");
        assert_int_equal(ncm_fs_read(fx->root, "/a", buf, sizeof(buf), NULL), 1);
        assert_int_equal(count_entries(fx->dir), before + 2);
        /* no directory to write into, or a file in its place */
        assert_int_equal(ncm_fs_write_atomic_flags(fx->root, "/nodir/a", "x", 1, 0600,
                                                   NCM_FS_WRITE_NO_DIRSYNC, &err),
                         -ENOENT);
        assert_int_equal(ncm_fs_write_atomic_flags(fx->root, "/secret/a", "x", 1, 0600,
                                                   NCM_FS_WRITE_NO_DIRSYNC, &err),
                         -ENOTDIR);
        assert_int_equal(ncm_fs_write_atomic_flags(fx->root, "/sys/", "x", 1, 0600,
                                                   NCM_FS_WRITE_NO_DIRSYNC, &err),
                         -EINVAL);

        /* the directory sync: a directory inside the root, nothing else */
        assert_int_equal(ncm_fs_sync_dir(fx->root, "/sys", &err), 0);
        assert_int_equal(ncm_fs_sync_dir(AT_FDCWD, fx->dir, &err), 0);
        assert_int_equal(ncm_fs_sync_dir(fx->root, "/nodir", &err), -ENOENT);
        assert_string_equal(err.msg, "open '/nodir': No such file or directory");
        assert_int_equal(ncm_fs_sync_dir(fx->root, "/secret", &err), -ENOTDIR);
        assert_int_equal(ncm_fs_sync_dir(fx->root, "/secret", NULL), -ENOTDIR);
}

static void read_is(int root, const char *path, const char *want)
{
        char buf[64];
        assert_int_equal(ncm_fs_read(root, path, buf, sizeof(buf), NULL), (int)strlen(want));
        assert_string_equal(buf, want);
}

/* A batch: nothing in place until the commit, then all of it in order; what a failure leaves. */
static void test_fs_batch(void **state)
{
        fixture *fx = *state;
        ncm_error err = NCM_ERROR_INIT;
        char p[4096], sys[4096];
        struct stat st;
        int root_before = count_entries(fx->dir), sys_before;
        ncm_fs_batch *b = ncm_fs_batch_new();

        snprintf(sys, sizeof(sys), "%s/sys", fx->dir);
        sys_before = count_entries(sys);
        assert_non_null(b);
        assert_int_equal(ncm_fs_batch_size(NULL), 0);
        assert_null(ncm_fs_batch_free(NULL));
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "one", 3, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/sys/c", "three", 5, 0640, &err), 0);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/b", "two", 3, 0600, &err), 0);
        /* the same path again: the newer text, one temporary file */
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "uno", 3, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_size(b), 3);
        /* staged: temporary files only */
        assert_int_equal(ncm_fs_exists(fx->root, "/a"), 0);
        assert_int_equal(count_entries(fx->dir), root_before + 2);
        assert_int_equal(count_entries(sys), sys_before + 1);
        /* a file that cannot join leaves the batch as it was */
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/nodir/a", "x", 1, 0600, &err), -ENOENT);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/sys/", "x", 1, 0600, &err), -EINVAL);
        assert_int_equal(ncm_fs_batch_size(b), 3);

        assert_int_equal(ncm_fs_batch_commit(b, 0, &err), 0);
        assert_int_equal(ncm_fs_batch_size(b), 0);
        read_is(fx->root, "/a", "uno");
        read_is(fx->root, "/b", "two");
        read_is(fx->root, "/sys/c", "three");
        snprintf(p, sizeof(p), "%s/sys/c", fx->dir);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0640);
        assert_int_equal(count_entries(fx->dir), root_before + 2);
        assert_int_equal(count_entries(sys), sys_before + 1);

        /* reused, the directory's fsync left to the caller */
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "1", 1, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_commit(b, NCM_FS_WRITE_NO_DIRSYNC, &err), 0);
        read_is(fx->root, "/a", "1");

        /* freed uncommitted: nothing written, nothing left */
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "lost", 4, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/d", "lost", 4, 0600, &err), 0);
        b = ncm_fs_batch_free(b);
        read_is(fx->root, "/a", "1");
        assert_int_equal(ncm_fs_exists(fx->root, "/d"), 0);
        assert_int_equal(count_entries(fx->dir), root_before + 2);

        /* unknown flags: nothing renamed, the batch emptied */
        b = ncm_fs_batch_new();
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "bad", 3, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_commit(b, 1u << 5, &err), -EINVAL);
        assert_string_equal(err.msg, "write batch: unknown flags 0x20");
        assert_int_equal(ncm_fs_batch_size(b), 0);
        read_is(fx->root, "/a", "1");
        assert_int_equal(count_entries(fx->dir), root_before + 2);

        /* a rename that fails: the files before it are in place, the rest are not written */
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "first", 5, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/sys", "dir", 3, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/b", "after", 5, 0600, &err), 0);
        assert_true(ncm_fs_batch_commit(b, 0, &err) < 0);
        assert_string_equal(err.msg, "write '/sys': Is a directory");
        read_is(fx->root, "/a", "first");
        read_is(fx->root, "/b", "two");
        assert_int_equal(count_entries(fx->dir), root_before + 2);
        ncm_fs_batch_free(b);
}

/* The one temporary file of BASE in DIR: its inode, mode and size (0 when there is none). */
static int spare_of(const char *dir, const char *base, struct stat *ret)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        char prefix[256];
        int n = 0;

        assert_non_null(d);
        snprintf(prefix, sizeof(prefix), ".%s.tmp", base);
        while ((e = readdir(d))) {
                if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
                        continue;
                assert_int_equal(fstatat(dirfd(d), e->d_name, ret, 0), 0);
                n++;
        }
        closedir(d);
        assert_true(n <= 1);
        return n;
}

/* This process's fds on files no longer linked (the files a commit replaced, held). */
static int held_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;
        int n = 0;

        assert_non_null(d);
        while ((e = readdir(d))) {
                char link[4096];
                ssize_t len = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
                if (len < 0)
                        continue;
                link[len] = '\0';
                n += strstr(link, " (deleted)") != NULL;
        }
        closedir(d);
        return n;
}

static ino_t inode_of(const char *dir, const char *rel)
{
        char p[4096];
        struct stat st;

        snprintf(p, sizeof(p), "%s/%s", dir, rel);
        assert_int_equal(stat(p, &st), 0);
        return st.st_ino;
}

/*
 * A batch kept between transactions: the files it replaced held until the settle, a temporary
 * file made ahead for each path and used by the next write, put back by a rollback, given up
 * when someone else moved it.
 */
static void test_fs_batch_settle(void **state)
{
        fixture *fx = *state;
        ncm_error err = NCM_ERROR_INIT;
        char p[4096], sub[4096];
        struct stat st, spare;
        int root_before, held_before = held_fds();
        ncm_fs_batch *b = ncm_fs_batch_new();

        assert_int_equal(ncm_fs_write_atomic(fx->root, "/a", "zero", 4, 0600, &err), 0);
        root_before = count_entries(fx->dir);
        assert_int_equal(ncm_fs_batch_owed(NULL), 0);
        assert_int_equal(ncm_fs_batch_settle(b, 1u << 3, &err), -EINVAL);
        assert_string_equal(err.msg, "settle batch: unknown flags 0x8");

        /* the replaced file held, the directory owed, nothing made ahead yet */
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "one", 3, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_commit(b, NCM_FS_WRITE_NO_DIRSYNC, &err), 0);
        read_is(fx->root, "/a", "one");
        assert_int_equal(held_fds(), held_before + 1);
        assert_int_equal(ncm_fs_batch_owed(b), 1);
        assert_int_equal(spare_of(fx->dir, "a", &spare), 0);
        /* settled but for the directory: still owed */
        assert_int_equal(ncm_fs_batch_settle(b, NCM_FS_WRITE_NO_DIRSYNC, &err), 0);
        assert_int_equal(ncm_fs_batch_owed(b), 1);
        assert_int_equal(held_fds(), held_before);
        assert_int_equal(ncm_fs_batch_settle(b, 0, &err), 0);
        assert_int_equal(ncm_fs_batch_owed(b), 0);
        /* one temporary file made ahead, empty, with the file's mode */
        assert_int_equal(spare_of(fx->dir, "a", &spare), 1);
        assert_int_equal(spare.st_size, 0);
        assert_int_equal(spare.st_mode & 07777, 0600);
        assert_int_equal(count_entries(fx->dir), root_before + 1);

        /* the next write is that file */
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "two", 3, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_commit(b, 0, &err), 0);
        read_is(fx->root, "/a", "two");
        assert_int_equal(inode_of(fx->dir, "a"), spare.st_ino);
        assert_int_equal(count_entries(fx->dir), root_before);
        assert_int_equal(ncm_fs_batch_owed(b), 0);
        assert_int_equal(ncm_fs_batch_settle(b, 0, &err), 0);

        /* a rollback puts it back emptied; the next write holds exactly its text */
        assert_int_equal(spare_of(fx->dir, "a", &spare), 1);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "rolled back", 11, 0600, &err), 0);
        ncm_fs_batch_drop(b);
        ncm_fs_batch_drop(NULL);
        assert_int_equal(ncm_fs_batch_size(b), 0);
        read_is(fx->root, "/a", "two");
        assert_int_equal(spare_of(fx->dir, "a", &st), 1);
        assert_int_equal(st.st_ino, spare.st_ino);
        assert_int_equal(st.st_size, 0);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "three", 5, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_commit(b, 0, &err), 0);
        read_is(fx->root, "/a", "three");
        assert_int_equal(inode_of(fx->dir, "a"), spare.st_ino);

        /* the file's mode changed meanwhile: kept */
        assert_int_equal(ncm_fs_batch_settle(b, 0, &err), 0);
        snprintf(p, sizeof(p), "%s/a", fx->dir);
        assert_int_equal(chmod(p, 0640), 0);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "four", 4, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_commit(b, 0, &err), 0);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0640);

        /* someone removed the file made ahead: the write makes its own */
        assert_int_equal(ncm_fs_batch_settle(b, 0, &err), 0);
        assert_int_equal(spare_of(fx->dir, "a", &spare), 1);
        assert_int_equal(ncm_fs_clean_tmp(fx->root, "/", (const char *const[]){"a", NULL}, &err),
                         1);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "five", 4, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_commit(b, 0, &err), 0);
        read_is(fx->root, "/a", "five");
        assert_int_equal(count_entries(fx->dir), root_before);

        /* its directory replaced: the file made ahead stays where it was, not used */
        snprintf(sub, sizeof(sub), "%s/sub", fx->dir);
        assert_int_equal(mkdir(sub, 0755), 0);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/sub/x", "old", 3, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_commit(b, NCM_FS_WRITE_NO_DIRSYNC, &err), 0);
        assert_int_equal(ncm_fs_batch_settle(b, 0, &err), 0);
        assert_int_equal(spare_of(sub, "x", &spare), 1);
        snprintf(p, sizeof(p), "%s/sub.old", fx->dir);
        assert_int_equal(rename(sub, p), 0);
        assert_int_equal(mkdir(sub, 0755), 0);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/sub/x", "new", 3, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_commit(b, 0, &err), 0);
        read_is(fx->root, "/sub/x", "new");
        read_is(fx->root, "/sub.old/x", "old");
        assert_int_equal(spare_of(p, "x", &st), 1);
        assert_int_equal(st.st_ino, spare.st_ino);
        assert_int_equal(count_entries(sub), 1);

        /* freed: what it made ahead goes, what others hold stays */
        assert_int_equal(ncm_fs_batch_settle(b, 0, &err), 0);
        assert_int_equal(spare_of(fx->dir, "a", &spare), 1);
        assert_int_equal(spare_of(sub, "x", &spare), 1);
        b = ncm_fs_batch_free(b);
        assert_int_equal(spare_of(fx->dir, "a", &spare), 0);
        assert_int_equal(spare_of(sub, "x", &spare), 0);
        assert_int_equal(spare_of(p, "x", &spare), 1);
        assert_int_equal(held_fds(), held_before);
}

/* Appends in a batch: written by the commit before any rename, nothing on a drop, cut back on a
 * failure after them. */
static void test_fs_batch_append(void **state)
{
        fixture *fx = *state;
        ncm_error err = NCM_ERROR_INIT;
        char p[4096];
        struct stat st;
        ncm_fs_batch *b = ncm_fs_batch_new();

        /* staged: not even created; dropped: nothing */
        assert_int_equal(ncm_fs_batch_append(b, fx->root, "/log", "lost\n", 5, 0600, &err), 0);
        assert_int_equal(ncm_fs_exists(fx->root, "/log"), 0);
        ncm_fs_batch_drop(b);
        assert_int_equal(ncm_fs_exists(fx->root, "/log"), 0);

        /* two appends to one file are one write, with the batch's files */
        assert_int_equal(ncm_fs_batch_append(b, fx->root, "/log", "one\n", 4, 0640, &err), 0);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/a", "A", 1, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_append(b, fx->root, "/log", "two\n", 4, 0640, &err), 0);
        assert_int_equal(ncm_fs_batch_size(b), 2);
        assert_int_equal(ncm_fs_batch_commit(b, NCM_FS_WRITE_NO_DIRSYNC, &err), 0);
        read_is(fx->root, "/log", "one\ntwo\n");
        read_is(fx->root, "/a", "A");
        snprintf(p, sizeof(p), "%s/log", fx->dir);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0640);
        /* created: its name owes the directory's fsync, as the rename's does (once) */
        assert_int_equal(ncm_fs_batch_owed(b), 1);
        assert_int_equal(ncm_fs_batch_settle(b, 0, &err), 0);

        /* to a file that exists: no name changed, nothing owed */
        assert_int_equal(ncm_fs_batch_append(b, fx->root, "/log", "three\n", 6, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_commit(b, NCM_FS_WRITE_NO_DIRSYNC, &err), 0);
        read_is(fx->root, "/log", "one\ntwo\nthree\n");
        assert_int_equal(ncm_fs_batch_owed(b), 0);

        /* a rename that fails: the append before it stays, the one after it is undone */
        assert_int_equal(ncm_fs_batch_append(b, fx->root, "/log", "four\n", 5, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_write(b, fx->root, "/sys", "dir", 3, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_append(b, fx->root, "/log2", "five\n", 5, 0600, &err), 0);
        assert_int_equal(ncm_fs_batch_append(b, fx->root, "/a", "B", 1, 0600, &err), 0);
        assert_true(ncm_fs_batch_commit(b, 0, &err) < 0);
        assert_string_equal(err.msg, "write '/sys': Is a directory");
        read_is(fx->root, "/log", "one\ntwo\nthree\nfour\n");
        assert_int_equal(ncm_fs_exists(fx->root, "/log2"), 0);
        read_is(fx->root, "/a", "A");

        /* what cannot be opened is refused when it joins */
        assert_int_equal(ncm_fs_batch_append(b, fx->root, "/sys", "x", 1, 0600, &err), -EISDIR);
        assert_int_equal(ncm_fs_batch_append(b, fx->root, "/nodir/x", "x", 1, 0600, &err), -ENOENT);
        assert_int_equal(ncm_fs_batch_size(b), 0);
        ncm_fs_batch_free(b);
}

static void test_fs_write_existing_only(void **state)
{
        fixture *fx = *state;
        char buf[64];
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_fs_write(fx->root, "/sys/online", "5", &err), 0);
        assert_int_equal(ncm_fs_read(fx->root, "/sys/online", buf, sizeof(buf), NULL), 1);
        assert_int_equal(ncm_fs_write(fx->root, "/sys/new", "5", &err), -ENOENT);
        assert_int_equal(ncm_fs_exists(fx->root, "/sys/new"), 0);
}

static void test_fs_mkdir_rmdir_unlink(void **state)
{
        fixture *fx = *state;
        assert_int_equal(ncm_fs_mkdir(fx->root, "/sys/kubepods", 0755, NULL), 1);
        assert_int_equal(ncm_fs_mkdir(fx->root, "/sys/kubepods", 0755, NULL), 0);
        assert_int_equal(ncm_fs_mkdir(fx->root, "/secret", 0755, NULL), -ENOTDIR);
        assert_int_equal(ncm_fs_exists(fx->root, "/sys/kubepods"), 1);
        assert_int_equal(ncm_fs_rmdir(fx->root, "/sys/kubepods", NULL), 1);
        assert_int_equal(ncm_fs_rmdir(fx->root, "/sys/kubepods", NULL), 0);
        assert_int_equal(ncm_fs_rmdir(fx->root, "/nodir/x", NULL), 0);
        assert_int_equal(ncm_fs_unlink(fx->root, "/secret", NULL), 1);
        assert_int_equal(ncm_fs_unlink(fx->root, "/secret", NULL), 0);
}

static void test_fs_open_root_errors(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm_fs_open_root("/nonexistent-root", &err), -ENOENT);
        assert_string_equal(err.msg, "open '/nonexistent-root': No such file or directory");
}

/* New files get the mode asked for whatever the umask; existing ones keep theirs. */
static void test_fs_write_atomic_modes(void **state)
{
        ncm_autofree char *dir = tu_mkdtemp();
        char p[4096];
        struct stat st;
        mode_t old = umask(022);
        (void)state;

        snprintf(p, sizeof(p), "%s/cpu_manager_state", dir);
        assert_int_equal(ncm_fs_write_atomic(AT_FDCWD, p, "a", 1, 0600, NULL), 0);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(chmod(p, 0640), 0);
        assert_int_equal(ncm_fs_write_atomic(AT_FDCWD, p, "b", 1, 0600, NULL), 0);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0640);
        umask(old);
        tu_rm_rf(dir);
}

/* What a crash between create and rename leaves is ours to remove; nothing else is. */
static void test_fs_clean_tmp(void **state)
{
        static const char *const names[] = {"cpu_manager_state", "kubelet_internal_checkpoint",
                                            NULL};
        ncm_autofree char *dir = tu_mkdtemp();
        static const char *const files[] = {".cpu_manager_state.tmp0123abcd",
                                            ".kubelet_internal_checkpoint.tmpffffffff",
                                            ".cpu_manager_state.tmpXYZ", "cpu_manager_state",
                                            ".other.tmp01234567"};
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(files); i++)
                put(dir, files[i], "x");
        assert_int_equal(ncm_fs_clean_tmp(AT_FDCWD, dir, names, NULL), 2);
        for (size_t i = 0; i < NCM_ELEMENTSOF(files); i++) {
                char p[4096];
                snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
                assert_int_equal(access(p, F_OK) == 0, i >= 2);
        }
        tu_rm_rf(dir);
}

static void test_fs_lock(void **state)
{
        ncm_autofree char *dir = tu_mkdtemp();
        ncm_error err = NCM_ERROR_INIT;
        char p[4096];
        struct stat st;
        int a, b;
        (void)state;

        snprintf(p, sizeof(p), "%s/nodecm.lock", dir);
        a = ncm_fs_lock(AT_FDCWD, p, 0, &err);
        assert_true(a >= 0);
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        /* another open file description conflicts, even in the same process */
        assert_int_equal(ncm_fs_lock(AT_FDCWD, p, NCM_FS_LOCK_NOWAIT, &err), -EWOULDBLOCK);
        assert_non_null(strstr(err.msg, "is locked by another nodecm"));
        close(a);
        b = ncm_fs_lock(AT_FDCWD, p, NCM_FS_LOCK_NOWAIT, &err);
        assert_true(b >= 0);
        close(b);
        tu_rm_rf(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test_setup_teardown(test_fs_read_single, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_fs_paths_cannot_escape_root, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_fs_read_beneath, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_fs_read_all, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_fs_write_atomic, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_fs_write_atomic_no_dirsync, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_fs_batch, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_fs_batch_settle, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_fs_batch_append, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_fs_write_existing_only, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_fs_mkdir_rmdir_unlink, setup,
                                                        teardown),
                        cmocka_unit_test(test_fs_open_root_errors),
                        cmocka_unit_test(test_fs_write_atomic_modes),
                        cmocka_unit_test(test_fs_clean_tmp),
                        cmocka_unit_test(test_fs_lock),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
