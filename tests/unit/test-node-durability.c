/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Group commit (ncm_node_defer_sync; docs/nodecmd.md, "Durability"): the pods journal is the
 * commit point, cpu_manager_state catches up off the acknowledgement path.
 *
 *  - a process killed after the sync, before the kubelet's file caught up: the next open
 *    replays the journal onto cpu_manager_state, byte for byte what the live node would have
 *    written, and folds the journal;
 *  - ncm_node_flush() brings the file up to date and leaves nothing behind;
 *  - power loss: a model of the disk that keeps only what was synced (a file's data after its
 *    fsync or fdatasync, a name after its directory's fsync; a file new at that fsync keeps
 *    the data it had, as ext4's data=ordered writes it before the name) cuts the power before
 *    every operation of a run of admissions, removals, syncs and flushes in turn. Every time,
 *    the kubelet's file left verifies, the directory opens, every acknowledged change (one
 *    ncm_node_sync() returned after it) is there, and the file is rewritten before the node
 *    serves.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodecm/cpustate.h>
#include <nodecm/fs.h>
#include <nodecm/node.h>
#include "testutil.h"

#define PODS 24

typedef struct fx {
        char *dir;
        ncm_topo *topo;
        ncm_node_config *cfg;
        ncm_node_dir *nd;
} fx;

static int open_dir(fx *f, const char *dir, const ncm_fs_faults *faults, ncm_node_dir **ret,
                    ncm_error *err)
{
        ncm_node_dir_options o = {.flags = NCM_NODE_DIR_INIT, .faults = faults};

        return ncm_node_dir_open(dir, f->topo, f->cfg, &o, ret, err);
}

static int setup(void **state)
{
        fx *f = calloc(1, sizeof(*f));
        const char *k = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}";

        f->dir = tu_mkdtemp_shm();
        assert_int_equal(ncm_topo_from_synthetic("package:1 core:8 pu:1", &f->topo, NULL), 0);
        assert_int_equal(ncm_node_config_parse(k, strlen(k), NULL, "", &f->cfg, NULL), 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fx *f = *state;

        ncm_node_dir_close(f->nd);
        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->topo);
        tu_rm_rf(f->dir);
        free(f->dir);
        free(f);
        return 0;
}

/* Admit pod UID (one container asking for one CPU, Guaranteed); its CPUs into CPUS ("" when
 * refused). */
static void admit(ncm_node *n, const char *uid, char *cpus, size_t size)
{
        char text[512];
        ncm_pod *pod = NULL;
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;

        snprintf(text, sizeof(text),
                 "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": {\"containers\": "
                 "[{\"name\": \"app\", \"resources\": {\"limits\": {\"cpu\": \"1\", "
                 "\"memory\": \"64Mi\"}}}]}}",
                 uid, uid);
        assert_int_equal(ncm_pod_parse(text, strlen(text), NULL, &pod, &err), 0);
        if (ncm_node_admit(n, pod, 0, &a, &err) < 0)
                fail_msg("admit %s: %s", uid, err.msg);
        cpus[0] = '\0';
        if (a->admitted) {
                char *l = ncm_cpuset_format_list(a->containers[0].cpus);
                assert_true(a->containers[0].exclusive);
                snprintf(cpus, size, "%s", l);
                free(l);
        }
        ncm_node_admission_free(a);
        ncm_pod_free(pod);
}

static char *file_text(const char *dir, const char *name)
{
        char *t = tu_file_text(dir, name);
        assert_non_null(t);
        return t;
}

/* The kubelet's file in DIR loads as the kubelet restores it (checksum and all). */
static void assert_verifies(const char *dir)
{
        char path[4096];
        ncm_cpu_state *s = NULL;
        ncm_error err = NCM_ERROR_INIT;

        snprintf(path, sizeof(path), "%s/%s", dir, NCM_CPU_CHECKPOINT_NAME);
        if (ncm_cpu_checkpoint_load(AT_FDCWD, path, "static", NULL, 0, &s, &err) < 0)
                fail_msg("%s: %s", path, err.msg);
        ncm_cpu_state_free(s);
}

/* The file in DIR is what node N would write now. */
static void assert_file_is(const char *dir, const ncm_node *n)
{
        ncm_buf b = NCM_BUF_INIT;
        char *t = file_text(dir, NCM_CPU_CHECKPOINT_NAME);

        ncm_node_format_cpu_checkpoint(n, &b);
        ncm_buf_putc(&b, '\0');
        assert_string_equal(t, b.data);
        ncm_buf_done(&b);
        free(t);
}

/* ---- a process killed after the sync ----------------------------------------------------- */

static void test_replay_after_kill(void **state)
{
        fx *f = *state;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf want = NCM_BUF_INIT;
        char cpus[PODS][64], uid[32];
        char *before, *after, *journal;
        ncm_node *n;

        assert_int_equal(open_dir(f, f->dir, NULL, &f->nd, &err), 0);
        n = ncm_node_dir_node(f->nd);
        before = file_text(f->dir, NCM_CPU_CHECKPOINT_NAME);
        ncm_node_defer_sync(n, true);
        for (int i = 0; i < 5; i++) {
                snprintf(uid, sizeof(uid), "pod-%d", i);
                admit(n, uid, cpus[i], sizeof(cpus[i]));
                assert_string_not_equal(cpus[i], "");
        }
        assert_int_equal(ncm_node_remove_pod(n, "pod-1", NULL, &err), 1);
        assert_int_equal(ncm_node_remove_container(n, "pod-3", "app", NULL, &err), 1);
        assert_true(ncm_node_unsynced(n));
        assert_int_equal(ncm_node_sync(n, &err), 0);
        assert_false(ncm_node_unsynced(n));
        assert_true(ncm_node_behind(n));
        /* the file did not move: the journal holds the changes, and it verifies as it lies */
        after = file_text(f->dir, NCM_CPU_CHECKPOINT_NAME);
        assert_string_equal(before, after);
        assert_verifies(f->dir);
        ncm_node_format_cpu_checkpoint(n, &want);
        ncm_buf_putc(&want, '\0');

        /* killed: no flush */
        f->nd = ncm_node_dir_close(f->nd);
        assert_int_equal(open_dir(f, f->dir, NULL, &f->nd, &err), 0);
        free(after);
        after = file_text(f->dir, NCM_CPU_CHECKPOINT_NAME);
        assert_string_equal(after, want.data);
        assert_file_is(f->dir, ncm_node_dir_node(f->nd));
        /* folded: a later start replays nothing */
        journal = file_text(f->dir, NCM_NODE_PODS_JOURNAL_NAME);
        assert_null(strstr(journal, "\"cpu\""));
        assert_int_equal(ncm_node_num_pods(ncm_node_dir_node(f->nd)), 4);
        free(journal);
        free(before);
        free(after);
        ncm_buf_done(&want);
}

/* A line replayed onto a file that holds it already changes nothing; a damaged one is named. */
static void test_replay_idempotent_and_damaged(void **state)
{
        fx *f = *state;
        ncm_error err = NCM_ERROR_INIT;
        char cpus[64], *t;
        ncm_node *n;

        assert_int_equal(open_dir(f, f->dir, NULL, &f->nd, &err), 0);
        n = ncm_node_dir_node(f->nd);
        ncm_node_defer_sync(n, true);
        admit(n, "pod-a", cpus, sizeof(cpus));
        admit(n, "pod-b", cpus, sizeof(cpus));
        /* the file caught up, but the journal was not folded yet (not long enough) */
        assert_int_equal(ncm_node_flush(n, &err), 0);
        assert_false(ncm_node_behind(n));
        assert_file_is(f->dir, n);
        t = file_text(f->dir, NCM_NODE_PODS_JOURNAL_NAME);
        assert_non_null(strstr(t, "\"cpu\""));
        free(t);
        f->nd = ncm_node_dir_close(f->nd);
        assert_int_equal(open_dir(f, f->dir, NULL, &f->nd, &err), 0);
        assert_file_is(f->dir, ncm_node_dir_node(f->nd));
        assert_int_equal(ncm_node_num_pods(ncm_node_dir_node(f->nd)), 2);
        f->nd = ncm_node_dir_close(f->nd);

        /* a CPU line that names no CPU list stops the open, naming the file and the line */
        {
                ncm_node_pod_record *v = NULL;
                size_t k = 0;
                /* whatever generation the fold gave it: rewrite the line with it */
                char *text = file_text(f->dir, NCM_NODE_PODS_NAME);
                long long gen = 0;
                char line[256], path[4096];
                assert_int_equal(sscanf(text, "{\"generation\": %lld", &gen), 1);
                snprintf(line, sizeof(line),
                         "{\"gen\": %lld, \"cpu\": {\"pod\": \"x\", \"containers\": {\"a\": "
                         "3}}}\n",
                         gen);
                snprintf(path, sizeof(path), "%s/%s", f->dir, NCM_NODE_PODS_JOURNAL_NAME);
                tu_write_file(path, line);
                free(text);
                assert_int_equal(ncm_node_pods_load(f->dir, &v, &k, &err), -EINVAL);
                assert_non_null(strstr(err.msg, "nodecm_pods_journal: line 1: cpu: containers: a"));
                ncm_node_pod_records_free(v, k);
        }
        ncm_error_clear(&err);
        assert_int_equal(open_dir(f, f->dir, NULL, &f->nd, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "nodecm_pods_journal: line 1"));
}

/* Without group commit nothing changes: every change writes the file before it returns. */
static void test_default_is_synchronous(void **state)
{
        fx *f = *state;
        ncm_error err = NCM_ERROR_INIT;
        char cpus[64];
        ncm_node *n;

        assert_int_equal(open_dir(f, f->dir, NULL, &f->nd, &err), 0);
        n = ncm_node_dir_node(f->nd);
        admit(n, "pod-a", cpus, sizeof(cpus));
        assert_false(ncm_node_unsynced(n));
        assert_false(ncm_node_behind(n));
        assert_file_is(f->dir, n);
}

/* ---- power loss ---------------------------------------------------------------------------- */

#define MAX_FILES 64

typedef struct img_file {
        char name[256];
        ino_t ino;
        char *data;
        size_t len;
} img_file;

/* What the disk holds for sure: the image a power loss leaves. */
typedef struct disk {
        const char *dir;
        img_file v[MAX_FILES];
        size_t n;
        bool active;
        int op, cut_at;        /* the operation the power is cut before (0: never) */
        int folds;             /* the journal folded into nodecm_pods */
        char *cut_dir;         /* the image left there */
        char acked[PODS][64];  /* acknowledged at the cut: CPUs, "-" removed, "" nothing */
        char unsure[PODS][64]; /* changed since, not acknowledged: either way */
        char (*now)[64];       /* acknowledged so far */
        char (*pending)[64];   /* changed since */
} disk;

static bool read_whole(const char *path, char **ret, size_t *ret_len, ino_t *ino)
{
        struct stat st;
        ncm_error err = NCM_ERROR_INIT;

        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
                return false;
        *ino = st.st_ino;
        if (ncm_fs_read_all(AT_FDCWD, path, 64u << 20, ret, ret_len, &err) < 0)
                fail_msg("%s", err.msg);
        return true;
}

static img_file *img_find(disk *d, const char *name)
{
        for (size_t i = 0; i < d->n; i++)
                if (strcmp(d->v[i].name, name) == 0)
                        return &d->v[i];
        return NULL;
}

static void img_clear(disk *d)
{
        for (size_t i = 0; i < d->n; i++)
                free(d->v[i].data);
        d->n = 0;
}

/* Every file of the directory as it is now: what a start from a synced directory has. */
static void img_take_all(disk *d)
{
        DIR *dh = opendir(d->dir);
        struct dirent *e;

        img_clear(d);
        assert_non_null(dh);
        while ((e = readdir(dh))) {
                char path[4096];
                img_file *f = &d->v[d->n];
                snprintf(path, sizeof(path), "%s/%s", d->dir, e->d_name);
                if (!read_whole(path, &f->data, &f->len, &f->ino))
                        continue;
                snprintf(f->name, sizeof(f->name), "%s", e->d_name);
                assert_true(++d->n < MAX_FILES);
        }
        closedir(dh);
}

/* The directory's fsync: its names now, a name it held before keeps its synced data. */
static void img_dirsync(disk *d)
{
        img_file old[MAX_FILES];
        size_t n_old = d->n;
        DIR *dh = opendir(d->dir);
        struct dirent *e;

        memcpy(old, d->v, sizeof(old));
        d->n = 0;
        assert_non_null(dh);
        while ((e = readdir(dh))) {
                char path[4096];
                img_file *f = &d->v[d->n];
                char *data = NULL;
                size_t len = 0;
                ino_t ino;
                bool kept = false;
                snprintf(path, sizeof(path), "%s/%s", d->dir, e->d_name);
                if (!read_whole(path, &data, &len, &ino))
                        continue;
                snprintf(f->name, sizeof(f->name), "%s", e->d_name);
                for (size_t i = 0; i < n_old; i++)
                        if (old[i].data && strcmp(old[i].name, e->d_name) == 0 &&
                            old[i].ino == ino) {
                                /* the same file: what was synced of it, not what it holds */
                                f->ino = ino;
                                f->data = old[i].data;
                                f->len = old[i].len;
                                old[i].data = NULL;
                                kept = true;
                        }
                if (kept) {
                        free(data);
                } else {
                        f->ino = ino;
                        f->data = data;
                        f->len = len;
                }
                assert_true(++d->n < MAX_FILES);
        }
        closedir(dh);
        for (size_t i = 0; i < n_old; i++)
                free(old[i].data);
}

/* A file's fsync: its data now, when its name is one the disk knows for that file. */
static void img_fsync(disk *d, const char *path)
{
        const char *base = strrchr(path, '/');
        img_file *f = img_find(d, base ? base + 1 : path);
        char *data = NULL;
        size_t len = 0;
        ino_t ino;

        if (!f || !read_whole(path, &data, &len, &ino))
                return;
        if (ino != f->ino) {
                free(data);
                return;
        }
        free(f->data);
        f->data = data;
        f->len = len;
}

static void img_write_out(disk *d)
{
        d->cut_dir = tu_mkdtemp_shm();
        for (size_t i = 0; i < d->n; i++) {
                char path[4096];
                int fd;
                snprintf(path, sizeof(path), "%s/%s", d->cut_dir, d->v[i].name);
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, d->v[i].data, d->v[i].len), (ssize_t)d->v[i].len);
                close(fd);
        }
        memcpy(d->acked, d->now, sizeof(d->acked));
        memcpy(d->unsure, d->pending, sizeof(d->unsure));
}

static int power_hook(void *data, ncm_fs_op op, const char *path, size_t len)
{
        disk *d = data;

        (void)len;
        if (!d->active)
                return 0;
        if (getenv("NCM_TEST_TRACE"))
                fprintf(stderr, "op %d: %d %s\n", d->op + 1, (int)op, path);
        if (++d->op == d->cut_at)
                img_write_out(d);
        if (op == NCM_FS_OP_RENAME && strstr(path, NCM_NODE_PODS_JOURNAL_NAME))
                d->folds++;
        if (op == NCM_FS_OP_FSYNC)
                img_fsync(d, path);
        else if (op == NCM_FS_OP_DIRSYNC)
                img_dirsync(d);
        return 0;
}

/*
 * The run: admissions, removals, a group commit every third change, a flush every fifth (the
 * journal folded when long), with the power cut before operation CUT_AT (0: never). Returns
 * how many operations it made.
 */
static int run(fx *f, int cut_at, disk *d)
{
        ncm_fs_faults faults = {power_hook, d};
        ncm_error err = NCM_ERROR_INIT;
        char now[PODS][64] = {{0}}, pending[PODS][64] = {{0}};
        char uid[32];
        ncm_node *n;
        int changes = 0;

        *d = (disk){.dir = f->dir, .cut_at = cut_at, .now = now, .pending = pending};
        tu_rm_rf(f->dir);
        assert_int_equal(mkdir(f->dir, 0700), 0);
        assert_int_equal(open_dir(f, f->dir, &faults, &f->nd, &err), 0);
        n = ncm_node_dir_node(f->nd);
        img_take_all(d);
        d->active = true;
        ncm_node_defer_sync(n, true);
        for (int i = 0; i < PODS; i++) {
                char cpus[64];
                snprintf(uid, sizeof(uid), "pod-%02d", i);
                admit(n, uid, cpus, sizeof(cpus));
                if (cpus[0])
                        snprintf(pending[i], sizeof(pending[i]), "%s", cpus);
                changes++;
                if (i >= 3) {
                        snprintf(uid, sizeof(uid), "pod-%02d", i - 3);
                        assert_true(ncm_node_remove_pod(n, uid, NULL, &err) >= 0);
                        snprintf(pending[i - 3], sizeof(pending[i - 3]), "-");
                        changes++;
                }
                if (i % 3 == 2 || i == PODS - 1) {
                        assert_int_equal(ncm_node_sync(n, &err), 0);
                        /* acknowledged now */
                        for (int k = 0; k < PODS; k++)
                                if (pending[k][0]) {
                                        memcpy(now[k], pending[k], sizeof(now[k]));
                                        pending[k][0] = '\0';
                                }
                }
                if (i % 5 == 4)
                        assert_int_equal(ncm_node_flush(n, &err), 0);
        }
        assert_int_equal(ncm_node_flush(n, &err), 0);
        d->active = false;
        f->nd = ncm_node_dir_close(f->nd);
        img_clear(d);
        assert_true(changes > 10);
        if (getenv("NCM_TEST_TRACE"))
                fprintf(stderr, "%d operations, %d folds\n", d->op, d->folds);
        return d->op;
}

/* What the power left in D->cut_dir: it verifies, opens, and holds every acknowledged change. */
static void check_cut(fx *f, disk *d)
{
        ncm_node_dir *nd = NULL;
        ncm_error err = NCM_ERROR_INIT;
        const ncm_cpu_state *s;
        char uid[32];

        assert_verifies(d->cut_dir);
        if (open_dir(f, d->cut_dir, NULL, &nd, &err) < 0)
                fail_msg("power cut before operation %d: open: %s", d->cut_at, err.msg);
        s = ncm_node_cpu_state(ncm_node_dir_node(nd));
        for (int i = 0; i < PODS; i++) {
                const ncm_cpuset *c;
                snprintf(uid, sizeof(uid), "pod-%02d", i);
                c = ncm_cpu_state_get(s, uid, "app");
                if (!d->acked[i][0] || d->unsure[i][0])
                        continue; /* not acknowledged (or changed since): either way */
                if (strcmp(d->acked[i], "-") == 0) {
                        if (c || ncm_node_pod_name(ncm_node_dir_node(nd), uid))
                                fail_msg("power cut before operation %d: removed %s is back",
                                         d->cut_at, uid);
                } else {
                        char *l = c ? ncm_cpuset_format_list(c) : NULL;
                        if (!l || strcmp(l, d->acked[i]) != 0)
                                fail_msg("power cut before operation %d: %s holds %s, "
                                         "acknowledged %s",
                                         d->cut_at, uid, l ? l : "nothing", d->acked[i]);
                        free(l);
                }
        }
        /* rewritten before the node serves */
        assert_file_is(d->cut_dir, ncm_node_dir_node(nd));
        assert_verifies(d->cut_dir);
        ncm_node_dir_close(nd);
        tu_rm_rf(d->cut_dir);
        free(d->cut_dir);
}

static void test_power_loss(void **state)
{
        fx *f = *state;
        disk d;
        int total = run(f, 0, &d), checked = 0;

        assert_true(total > 20);
        assert_true(d.folds > 0); /* the journal is folded during the run, too */
        for (int cut = 1; cut <= total; cut++) {
                run(f, cut, &d);
                assert_non_null(d.cut_dir);
                check_cut(f, &d);
                checked++;
        }
        assert_int_equal(checked, total);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test_setup_teardown(test_replay_after_kill, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_replay_idempotent_and_damaged, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_default_is_synchronous, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_power_loss, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
