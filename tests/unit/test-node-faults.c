/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 20: a full disk, a read-only remount, an I/O error, a short write or a kill -9 at any
 * step of a change must leave a node's directory as it was before the change or as after it,
 * with nodecm_pods and cpu_manager_state agreeing (and memory_manager_state, under the Static
 * memory manager), and the call's result must say which. An in-place resize (issue 22) is one
 * such change too.
 *
 * Each case runs once without faults, counting the filesystem operations of the change (every
 * create, write, fsync, rename, link, unlink, truncation and directory fsync, through the
 * node's fault hook, ncm_fs_faults); then, for each of them in turn, once with it failing with
 * ENOSPC, EROFS, EIO, as a short write, and once with the process killed there (a child
 * raising SIGKILL). After each run a fresh open (which rolls back a change left half-done) must
 * show the state before or after, no CPU held by a pod no record names, and no leftover file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodecm/cpustate.h>
#include <nodecm/fs.h>
#include <nodecm/memorymanager.h>
#include <nodecm/node-resize.h>
#include <nodecm/node.h>
#include "testutil.h"

enum { FAIL_ERRNO, FAIL_SHORT, FAIL_KILL };

typedef struct hook {
        bool armed;
        long count;   /* operations seen while armed */
        long fail_at; /* the one to fail (-1: none) */
        int mode;     /* FAIL_* */
        int err;
} hook;

static int hook_fn(void *data, ncm_fs_op op, const char *path, size_t len)
{
        hook *h = data;
        long i;

        (void)path;
        if (!h->armed)
                return 0;
        i = h->count++;
        if (i != h->fail_at)
                return 0;
        if (h->mode == FAIL_KILL)
                raise(SIGKILL);
        if (h->mode == FAIL_SHORT)
                return op == NCM_FS_OP_WRITE && len > 1 ? (int)(len / 2) : -ENOSPC;
        return -h->err;
}

typedef struct fx {
        char *root; /* the test's directory */
        char *dir;  /* the node's, inside it */
        ncm_topo *topo;
        ncm_node_config *cfg;
        bool memory; /* memoryManagerPolicy Static: memory_manager_state joins every change */
        hook h;
        ncm_fs_faults faults;
        ncm_fs_batch *batch; /* the owner's writes the node's join (NULL: none) */
} fx;

/* ---- the directory before a change, kept to start each run from ---- */

typedef struct saved {
        bool exists;
        size_t n;
        char *name[32];
        char *text[32];
        size_t len[32];
} saved;

static void save_dir(const char *dir, saved *s)
{
        DIR *d = opendir(dir);
        struct dirent *de;

        *s = (saved){0};
        if (!d)
                return;
        s->exists = true;
        while ((de = readdir(d)) != NULL) {
                char path[4096];
                if (de->d_name[0] == '.' && (!de->d_name[1] || strcmp(de->d_name, "..") == 0))
                        continue;
                assert_true(s->n < 32);
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                s->name[s->n] = strdup(de->d_name);
                assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 64 << 20, &s->text[s->n],
                                                 &s->len[s->n], NULL),
                                 0);
                s->n++;
        }
        closedir(d);
}

static void saved_done(saved *s)
{
        for (size_t i = 0; i < s->n; i++) {
                free(s->name[i]);
                free(s->text[i]);
        }
}

static void restore_dir(const char *dir, const saved *s)
{
        tu_rm_rf(dir);
        if (!s->exists)
                return;
        assert_int_equal(mkdir(dir, 0700), 0);
        for (size_t i = 0; i < s->n; i++) {
                char path[4096];
                int fd;
                snprintf(path, sizeof(path), "%s/%s", dir, s->name[i]);
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, s->text[i], s->len[i]), (ssize_t)s->len[i]);
                close(fd);
        }
}

/* ---- what a fresh open finds ---- */

static char context[128]; /* the run, for messages */

static char *load_view(fx *f)
{
        ncm_node_dir_options o = {0};
        ncm_node_dir *d = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf b = NCM_BUF_INIT;
        const ncm_cpu_state *s;
        ncm_node *n;
        DIR *dd;
        struct dirent *de;
        int r;

        if (access(f->dir, F_OK) != 0)
                return strdup("none");
        r = ncm_node_dir_open(f->dir, f->topo, f->cfg, &o, &d, &err);
        if (r == -ENOENT)
                return strdup("none");
        if (r < 0)
                fail_msg("%s: open after the run: %s", context, err.msg);
        n = ncm_node_dir_node(d);
        ncm_node_format_state_json(n, &b);
        ncm_buf_puts(&b, "records:");
        for (size_t i = 0; i < ncm_node_num_pods(n); i++) {
                const ncm_pod *p = ncm_node_pod_at(n, i);
                ncm_buf_printf(&b, " %s", p->uid);
                for (size_t k = 0; k < p->n_containers; k++)
                        if (ncm_node_container_removed(n, p->uid, p->containers[k].name))
                                ncm_buf_printf(&b, "-%s", p->containers[k].name);
                /* the spec as recorded: a resize changes it, and only it with the CPUs */
                ncm_pod_format_json(p, &b);
        }
        {
                /* the checkpoint as written: promised CPUs (a resize's) are in no other view */
                char *text = tu_file_text(f->dir, NCM_CPU_CHECKPOINT_NAME);
                ncm_buf_printf(&b, " cpu_manager_state:%s", text);
                free(text);
        }
        /* the files agree: no CPU is held by a pod no record names */
        s = ncm_node_cpu_state(n);
        for (size_t i = 0; i < ncm_cpu_state_num_pods(s); i++)
                if (!ncm_node_pod(n, ncm_cpu_state_pod_uid(s, i)))
                        fail_msg("%s: CPUs held by pod '%s', which no record names", context,
                                 ncm_cpu_state_pod_uid(s, i));
        if (f->memory) {
                /* nor memory: the memory manager's state (its machine state too) is part of
                 * the view, as the kubelet writes it */
                const ncm_mem_state *ms = ncm_node_memory_state(n);
                for (size_t i = 0; i < ms->npods; i++)
                        if (ms->pods[i].n && !ncm_node_pod(n, ms->pods[i].uid))
                                fail_msg("%s: memory held by pod '%s', which no record names",
                                         context, ms->pods[i].uid);
                ncm_buf_puts(&b, " memory:");
                ncm_mem_checkpoint_format(ms, NCM_MEM_CHECKPOINT_V3, &b);
        }
        ncm_node_dir_close(d);
        /* nothing left behind: no temporary file, no undo record or link */
        dd = opendir(f->dir);
        assert_non_null(dd);
        while ((de = readdir(dd)) != NULL)
                if (de->d_name[0] == '.' && de->d_name[1] && strcmp(de->d_name, "..") != 0)
                        fail_msg("%s: left behind: %s", context, de->d_name);
        closedir(dd);
        ncm_buf_putc(&b, '\0');
        return b.data;
}

/* ---- the changes ---- */

static ncm_pod *pod(const char *uid, const char *cpu, int containers)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_pod *p = NULL;
        ncm_error err = NCM_ERROR_INIT;

        ncm_buf_printf(&b,
                       "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": "
                       "{\"containers\": [",
                       uid, uid);
        for (int i = 0; i < containers; i++) {
                ncm_buf_printf(&b, "%s{\"name\": \"c%d\"", i ? ", " : "", i);
                if (*cpu)
                        ncm_buf_printf(&b,
                                       ", \"resources\": {\"limits\": {\"cpu\": \"%s\", "
                                       "\"memory\": \"1Gi\"}}",
                                       cpu);
                ncm_buf_putc(&b, '}');
        }
        ncm_buf_puts(&b, "]}}");
        if (ncm_pod_parse(b.data, b.len, NULL, &p, &err) < 0)
                fail_msg("%s", err.msg);
        ncm_buf_done(&b);
        return p;
}

/* POD_UID's pod again, its containers' CPUs CPUS[0..N) ("" for none), each MEMORY. */
static ncm_pod *pod_resized(const char *uid, const char *const *cpus, int n, const char *memory)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_pod *p = NULL;
        ncm_error err = NCM_ERROR_INIT;

        ncm_buf_printf(&b,
                       "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": "
                       "{\"containers\": [",
                       uid, uid);
        for (int i = 0; i < n; i++)
                ncm_buf_printf(&b,
                               "%s{\"name\": \"c%d\", \"resources\": {\"limits\": {\"cpu\": "
                               "\"%s\", \"memory\": \"%s\"}}}",
                               i ? ", " : "", i, cpus[i], memory);
        ncm_buf_puts(&b, "]}}");
        if (ncm_pod_parse(b.data, b.len, NULL, &p, &err) < 0)
                fail_msg("%s", err.msg);
        ncm_buf_done(&b);
        return p;
}

static int open_dir(fx *f, unsigned flags, ncm_node_dir **ret, ncm_error *err)
{
        ncm_node_dir_options o = {.flags = flags, .faults = &f->faults};
        return ncm_node_dir_open(f->dir, f->topo, f->cfg, &o, ret, err);
}

static int admit_on(fx *f, ncm_node *n, const ncm_pod *p, ncm_error *err)
{
        ncm_node_admission *a = NULL;
        int r;

        f->h.armed = true;
        r = ncm_node_admit_batch(n, p, 0, f->batch, &a, err);
        f->h.armed = false;
        if (r >= 0 && !a->admitted)
                fail_msg("refused: %s", a->message);
        ncm_node_admission_free(a);
        return r;
}

/* The case's change, on the directory as restored: its result. */
typedef int (*change_fn)(fx *f, ncm_error *err);

static int resize_on(fx *f, ncm_node *n, const ncm_pod *p, ncm_error *err);

/* P (taken) admitted, or (RESIZE) the pod it holds resized to P, on the directory. */
static int change_on(fx *f, ncm_pod *p, bool resize, ncm_error *err)
{
        ncm_node_dir *d = NULL;
        int r = open_dir(f, 0, &d, err);

        if (r >= 0)
                r = resize ? resize_on(f, ncm_node_dir_node(d), p, err)
                           : admit_on(f, ncm_node_dir_node(d), p, err);
        ncm_node_dir_close(d);
        ncm_pod_free(p);
        return r;
}

static int change_with(fx *f, const char *uid, const char *cpu, int containers, ncm_error *err)
{
        return change_on(f, pod(uid, cpu, containers), false, err);
}

static int change_admit(fx *f, ncm_error *err)
{
        return change_with(f, "new", "2", 1, err);
}

static int change_admit_shared(fx *f, ncm_error *err)
{
        return change_with(f, "shared", "", 1, err);
}

static int change_remove_pod(fx *f, ncm_error *err)
{
        ncm_node_dir *d = NULL;
        int r = open_dir(f, 0, &d, err);

        f->h.armed = true;
        if (r >= 0)
                r = ncm_node_remove_pod(ncm_node_dir_node(d), "held", NULL, err);
        f->h.armed = false;
        ncm_node_dir_close(d);
        return r;
}

static int change_remove_container(fx *f, ncm_error *err)
{
        ncm_node_dir *d = NULL;
        int r = open_dir(f, 0, &d, err);

        f->h.armed = true;
        if (r >= 0)
                r = ncm_node_remove_container(ncm_node_dir_node(d), "held", "c1", NULL, err);
        f->h.armed = false;
        ncm_node_dir_close(d);
        return r;
}

static int change_init(fx *f, ncm_error *err)
{
        ncm_node_dir *d = NULL;
        int r;

        f->h.armed = true;
        r = open_dir(f, NCM_NODE_DIR_INIT, &d, err);
        f->h.armed = false;
        ncm_node_dir_close(d);
        return r;
}

static int resize_on(fx *f, ncm_node *n, const ncm_pod *p, ncm_error *err)
{
        ncm_node_admission *a = NULL;
        int r;

        f->h.armed = true;
        r = ncm_node_resize_batch(n, p, 0, f->batch, &a, err);
        f->h.armed = false;
        if (r >= 0 && !a->admitted)
                fail_msg("resize refused: %s: %s", a->reason, a->message);
        ncm_node_admission_free(a);
        return r;
}

/* "held" with its first container resized in place: 2 -> 3 CPUs, its memory MEMORY */
static ncm_pod *held_resized(const char *memory)
{
        static const char *const cpus[] = {"3", "2"};
        return pod_resized("held", cpus, 2, memory);
}

static int change_resize(fx *f, ncm_error *err)
{
        return change_on(f, held_resized("1Gi"), true, err);
}

/* with InPlacePodVerticalScalingExclusiveMemory, pinned memory grows with the CPUs */
static int change_resize_memory(fx *f, ncm_error *err)
{
        return change_on(f, held_resized("2Gi"), true, err);
}

/* nodecmd's CRI proxy: its own journal line staged with the node's writes, one commit */
static int staged_with(fx *f, bool resize, ncm_error *err)
{
        ncm_node_dir *d = NULL;
        ncm_fs_batch *b = ncm_fs_batch_new();
        ncm_pod *p = resize ? held_resized("1Gi") : pod("new", "2", 1);
        char path[4096];
        int r = open_dir(f, 0, &d, err);

        snprintf(path, sizeof(path), "%s/owner_journal", f->dir);
        if (r >= 0) {
                ncm_node *n = ncm_node_dir_node(d);
                f->batch = b;
                r = ncm_fs_batch_append(b, AT_FDCWD, path, "new\n", 4, 0600, err);
                if (r >= 0)
                        r = resize ? resize_on(f, n, p, err) : admit_on(f, n, p, err);
                f->batch = NULL;
                f->h.armed = true;
                if (r >= 0)
                        (void)ncm_fs_batch_settle(b, 0, NULL); /* the owner's, after */
                f->h.armed = false;
        }
        ncm_fs_batch_free(b);
        ncm_node_dir_close(d);
        ncm_pod_free(p);
        return r;
}

static int change_staged(fx *f, ncm_error *err)
{
        return staged_with(f, false, err);
}

/* the CRI proxy's resize (UpdateContainerResources): its record's line staged the same way */
static int change_staged_resize(fx *f, ncm_error *err)
{
        return staged_with(f, true, err);
}

/* ---- the cases ---- */

static void prepare_held(fx *f)
{
        ncm_error err = NCM_ERROR_INIT;

        tu_rm_rf(f->dir);
        assert_int_equal(change_init(f, &err), 0);
        assert_int_equal(change_with(f, "held", "2", 2, &err), 0);
}

/* Long enough a journal that the next change folds it into nodecm_pods. */
static void prepare_long_journal(fx *f)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_dir *d = NULL;

        prepare_held(f);
        assert_int_equal(open_dir(f, 0, &d, &err), 0);
        for (int i = 0; i < 32; i++) {
                ncm_pod *p = pod("churn", "1", 1);
                assert_int_equal(admit_on(f, ncm_node_dir_node(d), p, &err), 0);
                assert_int_equal(ncm_node_remove_pod(ncm_node_dir_node(d), "churn", NULL, &err), 1);
                ncm_pod_free(p);
        }
        ncm_node_dir_close(d);
}

static void prepare_none(fx *f)
{
        tu_rm_rf(f->dir);
}

/* The staged case's file is the owner's: it goes or stays with the node's. */
static char *view_with_owner(fx *f)
{
        char *v = load_view(f);
        char *owner = tu_file_text(f->dir, "owner_journal");
        char *out = NULL;

        assert_true(asprintf(&out, "%s owner=[%s]", v, owner) > 0);
        free(v);
        free(owner);
        return out;
}

static void run_case(fx *f, const char *name, void (*prepare)(fx *), change_fn change, bool strict)
{
        static const int errs[] = {ENOSPC, EROFS, EIO};
        ncm_error err = NCM_ERROR_INIT;
        char *before, *after;
        saved s;
        long n_ops;
        int runs = 0;
        bool owner = change == change_staged || change == change_staged_resize;

        snprintf(context, sizeof(context), "%s", name);
        prepare(f);
        save_dir(f->dir, &s);
        before = owner ? view_with_owner(f) : load_view(f);
        restore_dir(f->dir, &s);
        f->h = (hook){.fail_at = -1};
        if (change(f, &err) < 0)
                fail_msg("%s without faults: %s", name, err.msg);
        n_ops = f->h.count;
        after = owner ? view_with_owner(f) : load_view(f);
        if (strcmp(before, after) == 0)
                fail_msg("%s changes nothing", name);
        assert_true(n_ops > 3);

        for (long k = 0; k < n_ops; k++) {
                for (int mode = 0; mode < 5; mode++) {
                        char *v;
                        int r = 0;
                        restore_dir(f->dir, &s);
                        snprintf(context, sizeof(context), "%s, op %ld failing (mode %d)", name, k,
                                 mode);
                        err = (ncm_error)NCM_ERROR_INIT;
                        f->h = (hook){.fail_at = k,
                                      .mode = mode < 3    ? FAIL_ERRNO
                                              : mode == 3 ? FAIL_SHORT
                                                          : FAIL_KILL,
                                      .err = errs[mode < 3 ? mode : 0]};
                        if (f->h.mode == FAIL_KILL) {
                                pid_t pid = fork();
                                int st;
                                assert_true(pid >= 0);
                                if (pid == 0) {
                                        ncm_error e = NCM_ERROR_INIT;
                                        _exit(change(f, &e) < 0 ? 3 : 0);
                                }
                                assert_int_equal(waitpid(pid, &st, 0), pid);
                                if (!WIFSIGNALED(st))
                                        fail_msg("%s: op %ld: not killed", name, k);
                        } else {
                                r = change(f, &err);
                        }
                        v = owner ? view_with_owner(f) : load_view(f);
                        if (strcmp(v, before) != 0 && strcmp(v, after) != 0)
                                fail_msg("%s, op %ld failing (mode %d): neither before nor "
                                         "after:\n  before %s\n  after  %s\n  now    %s",
                                         name, k, mode, before, after, v);
                        /* the result says which */
                        if (strict && f->h.mode != FAIL_KILL &&
                            strcmp(v, r < 0 ? before : after) != 0)
                                fail_msg("%s, op %ld failing (mode %d): returned %d (%s), the "
                                         "directory holds the state %s",
                                         name, k, mode, r, err.msg, r < 0 ? "after" : "before");
                        free(v);
                        runs++;
                }
        }
        print_message("%s: %ld operations, %d runs\n", name, n_ops, runs);
        free(before);
        free(after);
        saved_done(&s);
}

/* The kubelet configuration of a case: the static policy, and with MEMORY the Static memory
 * manager (the default hard eviction's 100Mi reserved on node 0), with GATES the resize's. */
static void config_of(bool memory, const char *gates, ncm_buf *b)
{
        ncm_buf_puts(b, "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"");
        if (memory)
                ncm_buf_puts(b, ", \"memoryManagerPolicy\": \"Static\", \"reservedMemory\": "
                                "[{\"numaNode\": 0, \"limits\": {\"memory\": \"100Mi\"}}]");
        if (gates)
                ncm_buf_printf(b, ", \"featureGates\": {%s}", gates);
        ncm_buf_putc(b, '}');
}

/*
 * The test's directory: on tmpfs when there is one. The failures are the hook's, not the
 * disk's, and some 2,000 runs each restore, change and reopen a directory: their fsyncs on a
 * real disk cost a minute on a shared VM, on tmpfs nothing.
 */
static char *scratch_dir(void)
{
        return tu_mkdtemp_shm();
}

static int setup_with(void **state, bool memory, const char *gates)
{
        fx *f = calloc(1, sizeof(*f));
        ncm_buf k = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;

        f->root = scratch_dir();
        f->memory = memory;
        assert_true(asprintf(&f->dir, "%s/node", f->root) > 0);
        assert_int_equal(ncm_topo_from_synthetic("package:1 core:8 pu:1", &f->topo, NULL), 0);
        if (memory)
                assert_int_equal(ncm_topo_apply_memory_spec(f->topo, "8Gi", NULL), 0);
        config_of(memory, gates, &k);
        if (ncm_node_config_parse(k.data, k.len, NULL, "", &f->cfg, &err) < 0)
                fail_msg("%s: %s", k.data, err.msg);
        ncm_buf_done(&k);
        f->faults = (ncm_fs_faults){hook_fn, &f->h};
        *state = f;
        return 0;
}

static int setup(void **state)
{
        return setup_with(state, false, NULL);
}

static int setup_memory(void **state)
{
        return setup_with(state, true, NULL);
}

static int setup_resize(void **state)
{
        return setup_with(state, false, "\"InPlacePodVerticalScalingExclusiveCPUs\": true");
}

static int setup_resize_memory(void **state)
{
        return setup_with(state, true,
                          "\"InPlacePodVerticalScalingExclusiveCPUs\": true, "
                          "\"InPlacePodVerticalScalingExclusiveMemory\": true");
}

static int teardown(void **state)
{
        fx *f = *state;

        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->topo);
        tu_rm_rf(f->root);
        free(f->root);
        free(f->dir);
        free(f);
        return 0;
}

static void test_node_faults_admit(void **state)
{
        run_case(*state, "admit", prepare_held, change_admit, true);
}

static void test_node_faults_admit_shared(void **state)
{
        run_case(*state, "admit (shared pool)", prepare_held, change_admit_shared, true);
}

static void test_node_faults_remove_folds_journal(void **state)
{
        fx *f = *state;
        run_case(f, "remove pod (nodecm_pods rewritten)", prepare_long_journal, change_remove_pod,
                 true);
        /* the case was the one meant: the journal folded into the file */
        assert_int_equal(tu_file_lines(f->dir, NCM_NODE_PODS_JOURNAL_NAME), 0);
}

static void test_node_faults_remove_pod(void **state)
{
        run_case(*state, "remove pod", prepare_held, change_remove_pod, true);
}

static void test_node_faults_remove_container(void **state)
{
        run_case(*state, "remove container", prepare_held, change_remove_container, true);
}

/* a failed init removes what it made; should that removal fail too, what stays is a fresh node */
static void test_node_faults_init(void **state)
{
        run_case(*state, "init", prepare_none, change_init, false);
}

static void test_node_faults_staged(void **state)
{
        run_case(*state, "nodecmd's staged commit", prepare_held, change_staged, true);
}

/*
 * The same changes under the Static memory manager: memory_manager_state is one more file of
 * each commit (the pods are Guaranteed, so every change moves memory too). HELD: whether the
 * file pins memory for "held" after the change (the case was the one meant).
 */
static void memory_case(fx *f, const char *name, void (*prepare)(fx *), change_fn change,
                        bool strict, bool held)
{
        char *text;

        run_case(f, name, prepare, change, strict);
        text = tu_file_text(f->dir, NCM_MEM_CHECKPOINT_NAME);
        if (!strstr(text, "\"policyName\":\"Static\"") || (!strstr(text, "\"held\"") != !held))
                fail_msg("%s: %s", name, text);
        free(text);
}

static void test_node_faults_memory_admit(void **state)
{
        memory_case(*state, "admit (memory manager)", prepare_held, change_admit, true, true);
}

static void test_node_faults_memory_remove_pod(void **state)
{
        memory_case(*state, "remove pod (memory manager)", prepare_held, change_remove_pod, true,
                    false);
}

static void test_node_faults_memory_remove_container(void **state)
{
        memory_case(*state, "remove container (memory manager)", prepare_held,
                    change_remove_container, true, true);
}

static void test_node_faults_memory_init(void **state)
{
        memory_case(*state, "init (memory manager)", prepare_none, change_init, false, false);
}

static void test_node_faults_memory_staged(void **state)
{
        memory_case(*state, "nodecmd's staged commit (memory manager)", prepare_held, change_staged,
                    true, true);
}

/* An in-place resize (issue 22): the CPU state (promised CPUs included) and the record. */
static void test_node_faults_resize(void **state)
{
        fx *f = *state;
        char *text;

        run_case(f, "resize", prepare_held, change_resize, true);
        /* the case was the one meant: c0 holds 3 CPUs now, its promise the 2 it was given (the
         * kubelet 1.37 layout: the promise is the baseline inside V4's data) */
        text = tu_file_text(f->dir, NCM_CPU_CHECKPOINT_NAME);
        if (!strstr(text, "\"entries\":{\"held\":{\"c0\":\"1-2,5\"") ||
            !strstr(text, "\\\"baselines\\\":{\\\"held\\\":{\\\"c0\\\":{\\\"baseline\\\":"
                          "\\\"1-2\\\""))
                fail_msg("%s", text);
        free(text);
}

static void test_node_faults_resize_staged(void **state)
{
        run_case(*state, "nodecmd's staged resize", prepare_held, change_staged_resize, true);
}

static void test_node_faults_resize_memory(void **state)
{
        memory_case(*state, "resize (memory manager)", prepare_held, change_resize_memory, true,
                    true);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test_setup_teardown(test_node_faults_admit, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_admit_shared, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_remove_folds_journal,
                                                        setup, teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_remove_pod, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_remove_container, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_init, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_staged, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_memory_admit, setup_memory,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_memory_remove_pod,
                                                        setup_memory, teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_memory_remove_container,
                                                        setup_memory, teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_memory_init, setup_memory,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_memory_staged,
                                                        setup_memory, teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_resize, setup_resize,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_resize_staged,
                                                        setup_resize, teardown),
                        cmocka_unit_test_setup_teardown(test_node_faults_resize_memory,
                                                        setup_resize_memory, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
