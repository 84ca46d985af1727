/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A node kept in a root directory, for front ends that live one command at a time (`nodecm
 * node ... --root-dir DIR`): the directory's lock, leftovers of a crash cleaned up, the
 * kubelet's start (checkpoints restored and validated), the pods the node holds, and an
 * enforcer started or attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include "node-internal.h"

struct ncm_node_dir {
        int lockfd;
        ncm_node *node;
        ncm_node_pod_record *pods;
        size_t n_pods;
};

static const char *const files[] = {NCM_CPU_CHECKPOINT_NAME,    NCM_DEVMGR_CHECKPOINT_NAME,
                                    NCM_MEM_CHECKPOINT_NAME,    NCM_NODE_PODS_NAME,
                                    NCM_NODE_PODS_JOURNAL_NAME, NCM_NODE_UNDO_NAME,
                                    NCM_NODE_CONFIG_NAME,       NULL};

int ncm_node_dir_lock(const char *dir, unsigned flags, ncm_error *err)
{
        ncm_autofree char *path = NULL;

        if (asprintf(&path, "%s/%s", dir, NCM_NODE_LOCK_NAME) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        return ncm_fs_lock(AT_FDCWD, path, (flags & NCM_NODE_DIR_NOWAIT) ? NCM_FS_LOCK_NOWAIT : 0,
                           err);
}

/*
 * A reader's lock into *RET_FD: shared, so that readers run together and never beside a writer.
 * Without a lock file (a directory that cannot be written has no writer to wait for) none: -1.
 */
static int lock_shared(const char *dir, unsigned flags, int *ret_fd, ncm_error *err)
{
        ncm_autofree char *path = NULL;
        int fd;

        *ret_fd = -1;
        if (asprintf(&path, "%s/%s", dir, NCM_NODE_LOCK_NAME) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        fd = ncm_fs_lock(AT_FDCWD, path,
                         NCM_FS_LOCK_SHARED |
                                         ((flags & NCM_NODE_DIR_NOWAIT) ? NCM_FS_LOCK_NOWAIT : 0),
                         err);
        if (fd == -ENOENT) {
                ncm_error_clear(err);
                return 0;
        }
        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

ncm_node_dir *ncm_node_dir_close(ncm_node_dir *d)
{
        if (!d)
                return NULL;
        ncm_node_free(d->node);
        ncm_node_pod_records_free(d->pods, d->n_pods);
        if (d->lockfd >= 0)
                close(d->lockfd);
        free(d);
        return NULL;
}

/* What a failed init made goes: the files that were not there, the directory if it was not. */
typedef struct made {
        bool dir;
        bool existed[NCM_ELEMENTSOF(files)];
        bool lock_existed;
} made;

static void made_note(const char *dir, made *m)
{
        for (size_t i = 0; files[i]; i++) {
                ncm_autofree char *p = NULL;
                m->existed[i] = asprintf(&p, "%s/%s", dir, files[i]) < 0 ||
                                ncm_fs_exists(AT_FDCWD, p) != 0;
        }
        {
                ncm_autofree char *p = NULL;
                m->lock_existed = asprintf(&p, "%s/%s", dir, NCM_NODE_LOCK_NAME) < 0 ||
                                  ncm_fs_exists(AT_FDCWD, p) != 0;
        }
}

static void made_undo(const char *dir, const made *m, const ncm_fs_faults *faults)
{
        for (size_t i = 0; files[i]; i++) {
                ncm_autofree char *p = NULL;
                if (m->existed[i] || asprintf(&p, "%s/%s", dir, files[i]) < 0)
                        continue;
                if (ncm_fs_fault(faults, NCM_FS_OP_UNLINK, p, 0) >= 0)
                        (void)ncm_fs_unlink(AT_FDCWD, p, NULL);
        }
        /* temporary files too: a spare made ahead, a write cut short */
        (void)ncm_fs_clean_tmp(AT_FDCWD, dir, files, NULL);
        if (!m->lock_existed) {
                ncm_autofree char *p = NULL;
                if (asprintf(&p, "%s/%s", dir, NCM_NODE_LOCK_NAME) >= 0 &&
                    ncm_fs_fault(faults, NCM_FS_OP_UNLINK, p, 0) >= 0)
                        (void)ncm_fs_unlink(AT_FDCWD, p, NULL);
        }
        if (m->dir && ncm_fs_fault(faults, NCM_FS_OP_UNLINK, dir, 0) >= 0)
                (void)rmdir(dir);
}

int ncm_node_dir_config(const char *dir, ncm_node_config **ret, ncm_error *err)
{
        ncm_autofree char *path = NULL;

        if (asprintf(&path, "%s/%s", dir, NCM_NODE_CONFIG_NAME) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (ncm_fs_exists(AT_FDCWD, path) == 0)
                return ncm_error_set(err, ENOENT, "%s: no such file", path);
        return ncm_node_config_load_file(path, ret, err);
}

/*
 * CFG against the configuration DIR records: the same, or (INIT: a restart with another one,
 * which the start then validates) anything; else -EINVAL naming what changed.
 */
static int check_config(const char *dir, const ncm_node_config *cfg, bool init, ncm_error *err)
{
        ncm_autoptr(ncm_node_config) rec = NULL;
        ncm_buf diff = NCM_BUF_INIT;
        int r;

        if (init)
                return 0;
        r = ncm_node_dir_config(dir, &rec, err);
        if (r == -ENOENT) {
                ncm_error_clear(err);
                return 0; /* started by a nodecm that kept no record */
        }
        if (r < 0)
                return r;
        r = ncm_node_config_diff(rec, cfg, &diff);
        if (r > 0)
                r = ncm_error_set(err, EINVAL,
                                  "'%s' was initialised with another configuration (%s): run "
                                  "'nodecm node init' with the new one to change it (checked "
                                  "against the state as a kubelet restart does), or give none "
                                  "to use the recorded one",
                                  dir, diff.data);
        else if (r < 0)
                r = ncm_error_set(err, ENOMEM, "out of memory");
        ncm_buf_done(&diff);
        return r;
}

/* Record CFG in DIR (through the node's writes: its faults, its undo record). */
static int record_config(ncm_node *n, const char *dir, const ncm_node_config *cfg, ncm_error *err)
{
        ncm_autofree char *path = NULL;
        ncm_autofree char *old = NULL;
        ncm_buf b = NCM_BUF_INIT;
        int r;

        if (asprintf(&path, "%s/%s", dir, NCM_NODE_CONFIG_NAME) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (ncm_node_config_format(cfg, &b) < 0) {
                ncm_buf_done(&b);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        /* the same already: nothing to write */
        if (ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &old, NULL, NULL) >= 0 &&
            strcmp(old, b.data) == 0) {
                ncm_buf_done(&b);
                return 0;
        }
        r = ncm__node_write(n, path, b.data, b.len, err);
        ncm_buf_done(&b);
        return r;
}

/*
 * Group commit's recovery (ncm_node_defer_sync): the CPU lines of the journal replayed onto
 * cpu_manager_state (STATE), which is rewritten whole and durable before the node reads it, so
 * that the kubelet's file holds every acknowledged change before anything serves from it.
 */
static int replay_cpu(const char *state, const ncm_node_config *cfg, const ncm_node_dir_options *o,
                      bool ro, const ncm__cpu_lines *cpu, ncm_error *err)
{
        ncm_autoptr(ncm_cpu_state) s = NULL;
        ncm_kubelet_version kv =
                        o->kubelet_version.major ? o->kubelet_version : cfg->kubelet_version;
        int r;

        if (ncm_fs_exists(AT_FDCWD, state) <= 0)
                return 0; /* nothing to replay onto: the start makes a fresh state */
        if (ro)
                return ncm_error_set(err, EROFS,
                                     "'%s': its journal holds changes the file lacks, which a "
                                     "read-only command does not write: run 'nodecm node "
                                     "reconcile' on it",
                                     state);
        r = ncm_cpu_checkpoint_load_version(AT_FDCWD, state, NULL, NULL, 0, kv, &s, err);
        if (r < 0)
                return r; /* the node's start reports it as the kubelet does */
        r = ncm__node_cpu_replay(s, cpu, err);
        if (r < 0)
                return ncm_error_prefix(err, "replay the journal onto %s", state);
        r = ncm_fs_fault(o->faults, NCM_FS_OP_RENAME, state, 0);
        if (r < 0)
                return ncm_error_errno(err, -r, "write '%s'", state);
        return ncm_cpu_checkpoint_write(s, AT_FDCWD, state, err);
}

static int dir_open(const char *dir, const ncm_topo *t, const ncm_node_config *cfg,
                    const ncm_node_dir_options *o, made *m, ncm_node_dir **ret, ncm_error *err)
{
        ncm_autoptr(ncm_node_dir) d = calloc(1, sizeof(*d));
        ncm_autofree char *state = NULL;
        ncm_autofree char *undo = NULL;
        bool init = o->flags & NCM_NODE_DIR_INIT, ro = o->flags & NCM_NODE_DIR_READ_ONLY;
        ncm_node_options no = {0};
        struct stat st;
        uint64_t gen = 0;
        size_t lines = 0;
        bool torn = false, replayed;
        ncm__cpu_lines cpu = {0};
        int r;

        if (!d || asprintf(&state, "%s/%s", dir, NCM_CPU_CHECKPOINT_NAME) < 0 ||
            asprintf(&undo, "%s/%s", dir, NCM_NODE_UNDO_NAME) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        d->lockfd = -1;
        if (init && !ro) {
                r = ncm_fs_fault(o->faults, NCM_FS_OP_MKDIR, dir, 0);
                if (r < 0)
                        return ncm_error_errno(err, -r, "create root directory '%s'", dir);
                if (mkdir(dir, 0700) == 0)
                        m->dir = true;
                else if (errno != EEXIST)
                        return ncm_error_errno(err, errno, "create root directory '%s'", dir);
        }
        if (stat(dir, &st) < 0 && errno == ENOENT && !init)
                return ncm_error_set(err, ENOENT,
                                     "'%s' holds no node (no such directory): run 'nodecm node "
                                     "init' first",
                                     dir);
        if (stat(dir, &st) < 0)
                return ncm_error_errno(err, errno, "root directory '%s'", dir);
        if (!S_ISDIR(st.st_mode))
                return ncm_error_set(err, ENOTDIR, "root directory '%s': not a directory", dir);
        made_note(dir, m);
        /*
         * Only looking, but where it can write it still tidies up what a crash left (under the
         * writers' lock, as they do): only a directory it cannot write is read as it lies.
         */
        if (ro && access(dir, W_OK) == 0)
                ro = false;
        if (ro) {
                r = lock_shared(dir, o->flags, &d->lockfd, err);
                if (r < 0)
                        return r;
        } else {
                d->lockfd = ncm_node_dir_lock(dir, o->flags, err);
                if (d->lockfd < 0)
                        return d->lockfd;
        }
        if (ro) {
                /* a change a crash interrupted is rolled back by the next writer, not here */
                r = ncm_fs_exists(AT_FDCWD, undo);
                if (r > 0)
                        return ncm_error_set(err, EROFS,
                                             "'%s': a change was interrupted (%s) and needs "
                                             "rolling back, which a read-only command does not "
                                             "do: run 'nodecm node reconcile' on it",
                                             dir, NCM_NODE_UNDO_NAME);
        } else {
                /* a change a crash left half-written goes back, then its leftovers */
                r = ncm_fs_recover(AT_FDCWD, undo, o->faults, err);
                if (r >= 0)
                        r = ncm_fs_clean_tmp(AT_FDCWD, dir, files, err);
                if (r < 0)
                        return r;
        }
        r = ncm_fs_exists(AT_FDCWD, state);
        if (r < 0)
                return ncm_error_errno(err, -r, "%s", state);
        if (r == 0 && !init)
                return ncm_error_set(err, ENOENT,
                                     "'%s' holds no node (no %s): run 'nodecm node init' first",
                                     dir, NCM_CPU_CHECKPOINT_NAME);
        r = check_config(dir, cfg, init, err);
        if (r < 0)
                return r;
        r = ncm__node_pods_load(dir, &d->pods, &d->n_pods, &gen, &lines, &torn, &cpu, err);
        if (r >= 0 && cpu.n > 0)
                r = replay_cpu(state, cfg, o, ro, &cpu, err);
        replayed = cpu.n > 0;
        ncm__cpu_lines_done(&cpu);
        if (r < 0)
                return r;
        no.state_dir = dir;
        no.restore = true;
        no.persist_pods = true;
        no.pods = d->pods;
        no.n_pods = d->n_pods;
        no.enforcer = o->enforcer;
        no.attach = !init && !(o->flags & NCM_NODE_DIR_START);
        no.devices = o->devices;
        no.devices_len = o->devices_len;
        no.kubelet_version = o->kubelet_version;
        no.faults = o->faults;
        no.read_only = o->flags & NCM_NODE_DIR_READ_ONLY;
        no.machine_root = o->machine_root;
        no.capacity = o->capacity;
        r = ncm_node_new(t, cfg, &no, &d->node, err);
        if (r < 0)
                return r;
        ncm__node_pods_journal(d->node, gen, lines);
        /* a line cut short: gone before anything is appended after it; CPU lines replayed:
         * folded into nodecm_pods, once the file they were replayed onto is durable */
        if ((torn || replayed) && !no.read_only) {
                r = ncm__node_persist_pods(d->node, err);
                if (r < 0)
                        return r;
        }
        if (init && !no.read_only && d->n_pods == 0) {
                /* the record exists from the start, so that every later process finds it */
                r = ncm__node_persist_pods(d->node, err);
                if (r < 0)
                        return r;
        }
        if (init && !no.read_only) {
                /* started with CFG: what every later command is held to */
                r = record_config(d->node, dir, cfg, err);
                if (r < 0)
                        return r;
        }
        *ret = NCM_TAKE_PTR(d);
        return 0;
}

int ncm_node_dir_open(const char *dir, const ncm_topo *t, const ncm_node_config *cfg,
                      const ncm_node_dir_options *o, ncm_node_dir **ret, ncm_error *err)
{
        static const ncm_node_dir_options defaults = {0};
        made m = {0};
        int r;

        if (!o)
                o = &defaults;
        r = dir_open(dir, t, cfg, o, &m, ret, err);
        /* the lock is released by then (the node's fd closed): nothing is waiting on it */
        if (r < 0 && (o->flags & NCM_NODE_DIR_INIT) && !(o->flags & NCM_NODE_DIR_READ_ONLY))
                made_undo(dir, &m, o->faults);
        return r;
}

ncm_node *ncm_node_dir_node(const ncm_node_dir *d)
{
        return d->node;
}

void ncm_node_cpusets_done(ncm_node_cpusets *c)
{
        for (size_t i = 0; i < c->n; i++)
                ncm_cpuset_free((ncm_cpuset *)c->v[i].cpus);
        free(c->v);
        *c = (ncm_node_cpusets){NULL, 0};
}

int ncm_node_dir_pod_cpusets(const char *dir, const ncm_pod *pod, ncm_node_cpusets *ret,
                             ncm_error *err)
{
        ncm_autofree char *path = NULL;
        ncm_autofree char *text = NULL;
        ncm_autoptr(ncm_cpu_checkpoint) cp = NULL;
        ncm_autoptr(ncm_cpu_state) s = NULL;
        ncm_node_cpusets c = {NULL, 0};
        size_t len = 0;
        bool none;
        int r;

        if (asprintf(&path, "%s/%s", dir, NCM_CPU_CHECKPOINT_NAME) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = ncm_fs_read_all(AT_FDCWD, path, 1 << 24, &text, &len, err);
        if (r < 0)
                return r;
        r = ncm_cpu_checkpoint_parse(text, len, path, &cp, err);
        if (r >= 0)
                r = ncm_cpu_checkpoint_verify(cp, err);
        if (r >= 0)
                r = ncm_cpu_checkpoint_restore(cp, NULL, NULL, 0, &s, err);
        if (r < 0)
                return r == -ENOMEM ? r : ncm_error_prefix(err, "%s", path);
        none = strcmp(ncm_cpu_state_policy(s), "none") == 0;
        c.v = calloc(pod->n_init_containers + pod->n_containers + 1, sizeof(*c.v));
        if (!c.v)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < pod->n_init_containers + pod->n_containers; i++) {
                const ncm_container *ct =
                                i < pod->n_init_containers
                                                ? &pod->init_containers[i]
                                                : &pod->containers[i - pod->n_init_containers];
                const ncm_cpuset *own = ncm_cpu_state_get(s, pod->uid, ct->name);
                if (ct->init && !ct->sidecar)
                        continue;
                /* the none policy pins nothing: the container keeps its parent's CPUs */
                if (none && !own)
                        continue;
                c.v[c.n].container = ct->name;
                c.v[c.n].cpus = ncm_cpuset_dup(own ? own : ncm_cpu_state_default(s));
                if (!c.v[c.n++].cpus) {
                        ncm_node_cpusets_done(&c);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
        }
        *ret = c;
        return 0;
}
