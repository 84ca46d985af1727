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

static const char *const files[] = {NCM_CPU_CHECKPOINT_NAME, NCM_DEVMGR_CHECKPOINT_NAME,
                                    NCM_NODE_PODS_NAME,      NCM_NODE_PODS_JOURNAL_NAME,
                                    NCM_MEM_CHECKPOINT_NAME, NULL};

int ncm_node_dir_lock(const char *dir, unsigned flags, ncm_error *err)
{
        ncm_autofree char *path = NULL;

        if (asprintf(&path, "%s/%s", dir, NCM_NODE_LOCK_NAME) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        return ncm_fs_lock(AT_FDCWD, path, (flags & NCM_NODE_DIR_NOWAIT) ? NCM_FS_LOCK_NOWAIT : 0,
                           err);
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

int ncm_node_dir_open(const char *dir, const ncm_topo *t, const ncm_node_config *cfg,
                      const ncm_node_dir_options *o, ncm_node_dir **ret, ncm_error *err)
{
        static const ncm_node_dir_options defaults = {0};
        ncm_autoptr(ncm_node_dir) d = calloc(1, sizeof(*d));
        ncm_autofree char *state = NULL;
        ncm_node_options no = {0};
        struct stat st;
        uint64_t gen = 0;
        size_t lines = 0;
        bool torn = false;
        int r;

        if (!o)
                o = &defaults;
        if (!d || asprintf(&state, "%s/%s", dir, NCM_CPU_CHECKPOINT_NAME) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        d->lockfd = -1;
        if ((o->flags & NCM_NODE_DIR_INIT) && mkdir(dir, 0700) < 0 && errno != EEXIST)
                return ncm_error_errno(err, errno, "create root directory '%s'", dir);
        if (stat(dir, &st) < 0 && errno == ENOENT && !(o->flags & NCM_NODE_DIR_INIT))
                return ncm_error_set(err, ENOENT,
                                     "'%s' holds no node (no such directory): run 'nodecm node "
                                     "init' first",
                                     dir);
        if (stat(dir, &st) < 0)
                return ncm_error_errno(err, errno, "root directory '%s'", dir);
        if (!S_ISDIR(st.st_mode))
                return ncm_error_set(err, ENOTDIR, "root directory '%s': not a directory", dir);
        d->lockfd = ncm_node_dir_lock(dir, o->flags, err);
        if (d->lockfd < 0)
                return d->lockfd;
        /* whatever a crash left half-written is ours, and no one else is writing now */
        r = ncm_fs_clean_tmp(AT_FDCWD, dir, files, err);
        if (r < 0)
                return r;
        r = ncm_fs_exists(AT_FDCWD, state);
        if (r < 0)
                return ncm_error_errno(err, -r, "%s", state);
        if (r == 0 && !(o->flags & NCM_NODE_DIR_INIT))
                return ncm_error_set(err, ENOENT,
                                     "'%s' holds no node (no %s): run 'nodecm node init' first",
                                     dir, NCM_CPU_CHECKPOINT_NAME);
        r = ncm__node_pods_load(dir, &d->pods, &d->n_pods, &gen, &lines, &torn, err);
        if (r < 0)
                return r;
        no.state_dir = dir;
        no.restore = true;
        no.persist_pods = true;
        no.pods = d->pods;
        no.n_pods = d->n_pods;
        no.enforcer = o->enforcer;
        no.attach = !(o->flags & NCM_NODE_DIR_INIT) && !(o->flags & NCM_NODE_DIR_START);
        no.devices = o->devices;
        no.devices_len = o->devices_len;
        no.kubelet_version = o->kubelet_version;
        no.machine_root = o->machine_root;
        no.capacity = o->capacity;
        r = ncm_node_new(t, cfg, &no, &d->node, err);
        if (r < 0)
                return r;
        ncm__node_pods_journal(d->node, gen, lines);
        /* a line cut short: gone before anything is appended after it */
        if (torn) {
                r = ncm__node_persist_pods(d->node, err);
                if (r < 0)
                        return r;
        }
        if ((o->flags & NCM_NODE_DIR_INIT) && d->n_pods == 0) {
                /* the record exists from the start, so that every later process finds it */
                r = ncm__node_persist_pods(d->node, err);
                if (r < 0)
                        return r;
        }
        *ret = NCM_TAKE_PTR(d);
        return 0;
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
