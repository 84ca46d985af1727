/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include "testutil.h"

static const char *data_dir(void)
{
        const char *d = getenv("NCM_TEST_DATA");
        if (!d)
                fail_msg("NCM_TEST_DATA is not set (run the tests through meson test)");
        return d;
}

char *tu_data_path(const char *rel)
{
        char *p;
        if (asprintf(&p, "%s/%s", data_dir(), rel) < 0)
                fail_msg("out of memory");
        return p;
}

char *tu_read_data(const char *rel, size_t *len)
{
        ncm_error err = NCM_ERROR_INIT;
        char *path = tu_data_path(rel);
        char *text = NULL;
        size_t n = 0;
        if (ncm_fs_read_all(AT_FDCWD, path, 256u << 20, &text, &n, &err) < 0)
                fail_msg("%s", err.msg);
        free(path);
        if (len)
                *len = n;
        return text;
}

void tu_assert_golden(const char *rel, const char *actual)
{
        const char *update = getenv("NCM_UPDATE_GOLDEN");
        char *path = tu_data_path(rel);
        if (update && strcmp(update, "1") == 0) {
                FILE *f = fopen(path, "w");
                if (!f || fputs(actual, f) < 0 || fclose(f) != 0)
                        fail_msg("cannot write golden file %s", path);
        } else {
                char *expect = tu_read_data(rel, NULL);
                if (strcmp(expect, actual) != 0) {
                        print_error("golden %s differs.\n--- expected\n%s\n--- actual\n%s\n", rel,
                                    expect, actual);
                        free(expect);
                        free(path);
                        fail();
                }
                free(expect);
        }
        free(path);
}

char *tu_mkdtemp(void)
{
        const char *base = getenv("NCM_TEST_BUILD");
        char *p;
        if (asprintf(&p, "%s/tmp-XXXXXX", base ? base : "/tmp") < 0)
                fail_msg("out of memory");
        if (!mkdtemp(p))
                fail_msg("mkdtemp %s: %s", p, strerror(errno));
        return p;
}

char *tu_mkdtemp_shm(void)
{
        char *p = strdup("/dev/shm/nodecm-test-XXXXXX");

        if (p && mkdtemp(p))
                return p;
        free(p);
        return tu_mkdtemp();
}

void tu_write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");
        if (!f)
                fail_msg("open %s: %s", path, strerror(errno));
        if (fputs(text, f) < 0 || fclose(f) != 0)
                fail_msg("write %s: %s", path, strerror(errno));
}

void tu_append_file(const char *dir, const char *name, const char *text)
{
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "a");
        if (!f)
                fail_msg("open %s: %s", path, strerror(errno));
        if (fputs(text, f) < 0 || fclose(f) != 0)
                fail_msg("write %s: %s", path, strerror(errno));
}

char *tu_file_text(const char *dir, const char *name)
{
        char path[4096], *text = NULL;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (ncm_fs_read_all(AT_FDCWD, path, 64u << 20, &text, NULL, NULL) < 0)
                text = strdup("");
        assert_non_null(text);
        return text;
}

int tu_file_lines(const char *dir, const char *name)
{
        char *text = tu_file_text(dir, name);
        int n = 0;

        for (const char *p = text; *p; p++)
                n += *p == '\n';
        free(text);
        return n;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        if (flag == FTW_DP)
                return rmdir(path);
        return unlink(path);
}

void tu_rm_rf(const char *path)
{
        if (path)
                (void)nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The machine root of an extracted dump: the directory that holds sys/ (at most 3 deep). */
static char *find_root(const char *dir, int depth)
{
        char *p, *found = NULL;
        struct dirent *de;
        DIR *d;

        if (asprintf(&p, "%s/sys/devices/system/cpu", dir) < 0)
                fail_msg("out of memory");
        if (access(p, F_OK) == 0) {
                free(p);
                return strdup(dir);
        }
        free(p);
        if (depth == 0 || !(d = opendir(dir)))
                return NULL;
        while (!found && (de = readdir(d)) != NULL) {
                char *sub;
                if (de->d_name[0] == '.')
                        continue;
                if (asprintf(&sub, "%s/%s", dir, de->d_name) < 0)
                        fail_msg("out of memory");
                found = find_root(sub, depth - 1);
                free(sub);
        }
        closedir(d);
        return found;
}

/*
 * A dump holds up to 12,000 files: on tmpfs (/dev/shm) extraction takes milliseconds, on a
 * VM disk about two per file, so tmpfs is used when there is one.
 */
char *tu_extract_topology(const char *name, char **tmp)
{
        char shm[] = "/dev/shm/nodecm-topo-XXXXXX";
        char *dir, *tarball, *root;
        char rel[512];
        pid_t pid;
        int status;

        if (access("/dev/shm", W_OK) == 0 && mkdtemp(shm))
                dir = strdup(shm);
        else
                dir = tu_mkdtemp();
        snprintf(rel, sizeof(rel), "topologies/%s.tar.bz2", name);
        tarball = tu_data_path(rel);
        pid = fork();
        if (pid == 0) {
                execlp("tar", "tar", "-xjf", tarball, "-C", dir, (char *)NULL);
                _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
                fail_msg("cannot extract %s", tarball);
        free(tarball);
        root = find_root(dir, 3);
        if (!root)
                fail_msg("%s: no sys/ directory in the tarball", name);
        *tmp = dir;
        return root;
}

ncm_cpuset *tu_cpuset(const char *list)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpuset *s = NULL;
        if (ncm_cpuset_parse_list(list, &s, &err) < 0)
                fail_msg("bad cpuset \"%s\" in test: %s", list, err.msg);
        return s;
}

void tu_assert_cpuset_at(const ncm_cpuset *s, const char *expect, const char *file, int line)
{
        char *got = ncm_cpuset_format_list(s);
        if (!got)
                fail_msg("out of memory");
        if (strcmp(got, expect) != 0) {
                print_error("%s:%d: cpuset is \"%s\", expected \"%s\"\n", file, line, got, expect);
                free(got);
                fail();
        }
        free(got);
}
