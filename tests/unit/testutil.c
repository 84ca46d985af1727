/* SPDX-License-Identifier: Apache-2.0 */
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

char *tu_extract_topology(const char *name, char **tmp)
{
        char *dir = tu_mkdtemp();
        char *tarball, *root;
        char rel[512];
        pid_t pid;
        int status;

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
        if (asprintf(&root, "%s/%s", dir, name) < 0)
                fail_msg("out of memory");
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
