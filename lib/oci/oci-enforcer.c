/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OCI hook's enforcer: the runtime made each container's cgroup, so the only thing to
 * write is its cpuset. For every container of a pod the node hands over (admission, the shared
 * pool moving, reconcile) that the hook placed, cpuset.cpus gets the container's CPUs and
 * cpuset.mems the memory nodes the node decided (ncm_node_container_mems; left alone when it
 * decided none). Every write first reads the old value, so that rollback() puts it back, last
 * write first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nodecm/fs.h>
#include "base/array.h"
#include "oci-internal.h"

typedef struct undo_step {
        char *path;
        char *old;
} undo_step;

struct oci_enforcer {
        int rootfd; /* borrowed */
        char hier[64];
        const ncm_cgroup_layout *layout;
        const ncm_topo *topo;
        const oci_registry *reg;
        const oci_registry *confined;
        int sysfd;
        undo_step *undo;
        size_t n_undo, cap_undo;
        /* the knobs' plans, applied after the cpusets: undone first */
        ncm_cgroup_undo *plan_undo, *machine_undo;
};

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

static void undo_clear(oci_enforcer *e)
{
        for (size_t i = 0; i < e->n_undo; i++) {
                free(e->undo[i].path);
                free(e->undo[i].old);
        }
        e->n_undo = 0;
}

int ncm__oci_cgroup_exists(int rootfd, const char *hier, const char *cgroup)
{
        char path[4096];
        struct stat st;
        int fd;

        if (snprintf(path, sizeof(path), "%s%s", hier, cgroup) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        fd = ncm_fs_openat(rootfd, path, O_PATH | O_DIRECTORY, 0, NULL);
        if (fd == -ENOENT || fd == -ENOTDIR)
                return 0;
        if (fd < 0)
                return fd;
        (void)fstat(fd, &st);
        close(fd);
        return 1;
}

/* Read a cgroup file of one line into BUF, without its newline. */
static int read_line(int rootfd, const char *path, char *buf, size_t size, ncm_error *err)
{
        ssize_t n = ncm_fs_read(rootfd, path, buf, size - 1, err);

        if (n < 0)
                return (int)n;
        buf[n] = '\0';
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
                buf[--n] = '\0';
        return 0;
}

/* Write VALUE to PATH, keeping the old value for rollback. ENOENT: the cgroup has gone. */
static int write_undo(oci_enforcer *e, const char *path, const char *value, ncm_error *err)
{
        char old[4096];
        int r = read_line(e->rootfd, path, old, sizeof(old), err);

        if (r < 0)
                return r;
        if (strcmp(old, value) == 0)
                return 0;
        if (ncm__array_grow(e->undo, e->cap_undo, e->n_undo) < 0)
                return oom(err);
        e->undo[e->n_undo].path = strdup(path);
        e->undo[e->n_undo].old = strdup(old);
        if (!e->undo[e->n_undo].path || !e->undo[e->n_undo].old) {
                free(e->undo[e->n_undo].path);
                free(e->undo[e->n_undo].old);
                return oom(err);
        }
        e->n_undo++;
        return ncm_fs_write(e->rootfd, path, value, err);
}

/* Give container CGROUP the CPUs CPUS and, unless MEMS is 0, the memory nodes MEMS. */
static int set_cpuset(oci_enforcer *e, const char *cgroup, const ncm_cpuset *cpus, ncm_bitmask mems,
                      ncm_error *err)
{
        ncm_autofree char *list = NULL;
        ncm_buf nodes = NCM_BUF_INIT;
        char path[4096];
        int r;

        /* an empty pool is not written, as the kubelet leaves an empty cpuset unset */
        if (ncm_cpuset_is_empty(cpus))
                return 0;
        r = ncm__oci_cgroup_exists(e->rootfd, e->hier, cgroup);
        if (r == 0)
                return 0; /* gone: released at the next hook run */
        if (r < 0)
                return ncm_error_errno(err, -r, "cgroup '%s%s'", e->hier, cgroup);
        list = ncm_cpuset_format_list(cpus);
        if (!list)
                return oom(err);
        if (snprintf(path, sizeof(path), "%s%s/cpuset.cpus", e->hier, cgroup) >= (int)sizeof(path))
                return ncm_error_set(err, ENAMETOOLONG, "cgroup '%s': path too long", cgroup);
        r = write_undo(e, path, list, err);
        if (r == -ENOENT && ncm__oci_cgroup_exists(e->rootfd, e->hier, cgroup) == 0) {
                ncm_error_clear(err);
                return 0;
        }
        if (r == -ENOENT)
                return ncm_error_set(err, ENOENT,
                                     "cgroup '%s%s' has no cpuset.cpus (the cpuset controller "
                                     "is not enabled for it)",
                                     e->hier, cgroup);
        if (r < 0 || !mems)
                return r;
        ncm_node_format_mems(mems, &nodes);
        snprintf(path, sizeof(path), "%s%s/cpuset.mems", e->hier, cgroup);
        r = ncm_buf_failed(&nodes) ? oom(err) : write_undo(e, path, nodes.data, err);
        ncm_buf_done(&nodes);
        if (r == -ENOENT) {
                ncm_error_clear(err);
                return 0;
        }
        return r;
}

static int enf_pod(void *data, const ncm_enforce_pod *p, ncm_error *err)
{
        oci_enforcer *e = data;

        for (size_t i = 0; i < p->n_containers; i++) {
                const ncm_enforce_container *c = &p->containers[i];
                ssize_t k = ncm__rt_record_find_name(e->reg, p->pod->uid, c->name);
                int r;
                if (k < 0)
                        continue;
                r = set_cpuset(e, e->reg->v[k].cgroup, c->cpus, c->mems, err);
                if (r < 0)
                        return ncm_error_prefix(err, "container '%s' of pod '%s'", c->name,
                                                p->pod->uid);
        }
        return 0;
}

static int enf_pod_add(void *data, const ncm_enforce_pod *p, const ncm_cgroup_qos_usage *usage,
                       ncm_error *err)
{
        (void)usage;
        return enf_pod(data, p, err);
}

static int enf_begin(void *data, ncm_error *err)
{
        oci_enforcer *e = data;
        (void)err;
        undo_clear(e);
        ncm_cgroup_undo_clear(e->plan_undo);
        ncm_cgroup_undo_clear(e->machine_undo);
        return 0;
}

static int enf_commit(void *data, ncm_error *err)
{
        return enf_begin(data, err);
}

static int enf_rollback(void *data, ncm_error *err)
{
        oci_enforcer *e = data;
        int ret = 0;

        if (e->sysfd >= 0 && ncm_cgroup_undo_run(e->machine_undo, e->sysfd, NULL, err) < 0)
                ret = -EIO;
        if (ncm_cgroup_undo_run(e->plan_undo, e->rootfd, NULL, ret < 0 ? NULL : err) < 0)
                ret = -EIO;

        for (size_t i = e->n_undo; i-- > 0;) {
                ncm_error e2 = NCM_ERROR_INIT;
                int r = ncm_fs_write(e->rootfd, e->undo[i].path, e->undo[i].old, &e2);
                /* a cgroup that went away meanwhile has nothing to put back */
                if (r < 0 && r != -ENOENT && ret == 0) {
                        ret = r;
                        if (err)
                                *err = e2;
                }
        }
        undo_clear(e);
        return ret;
}

static void enf_free(void *data)
{
        oci_enforcer *e = data;

        if (!e)
                return;
        undo_clear(e);
        free(e->undo);
        ncm_cgroup_undo_free(e->plan_undo);
        ncm_cgroup_undo_free(e->machine_undo);
        free(e);
}

/*
 * isolation(): the containers the node does not hold (CONFINED) on the shared pool, then CRI-O's
 * knobs on the containers' own cgroups, then the interrupts; a container whose cgroup has gone
 * is passed over.
 */
static int enf_isolation(void *data, ncm_enforce_isolation *iso, ncm_error *err)
{
        oci_enforcer *e = data;
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT, mplan = NCM_CGROUP_PLAN_INIT;
        ncm_knob_container *v = calloc(iso->n_containers + 1, sizeof(*v));
        char **paths = calloc(2 * iso->n_containers + 1, sizeof(*paths));
        size_t nv = 0;
        int r = 0;

        if (!v || !paths) {
                free(v);
                free(paths);
                return oom(err);
        }
        for (size_t i = 0; e->confined && i < e->confined->n && r >= 0; i++) {
                r = set_cpuset(e, e->confined->v[i].cgroup, iso->shared, 0, err);
                if (r < 0)
                        ncm_error_prefix(err, "container '%s'", e->confined->v[i].id);
        }
        for (size_t i = 0; i < iso->n_containers && r >= 0; i++) {
                const ncm_enforce_knobbed *k = &iso->containers[i];
                ssize_t at = ncm__rt_record_find_name(e->reg, k->pod->uid, k->name);
                if (at < 0 || !e->reg->v[at].cgroup[0])
                        continue;
                /* up to the kubelet's kubepods when it is there, else the parent only */
                if (ncm_knobs_runtime_cgroups(e->reg->v[at].cgroup, &paths[2 * nv],
                                              &paths[2 * nv + 1]) < 0) {
                        r = oom(err);
                        break;
                }
                v[nv] = (ncm_knob_container){e->reg->v[at].cgroup, paths[2 * nv], paths[2 * nv + 1],
                                             k->cpus, k->knobs};
                nv++;
        }
        snprintf(plan.display_root, sizeof(plan.display_root), "%s", e->layout->display_root);
        if (r >= 0)
                r = ncm_knobs_plan_cgroups(e->layout, e->rootfd, v, nv, iso->all_cpus, iso->memo,
                                           &plan, iso->fixed, err);
        if (r >= 0 && e->sysfd >= 0) {
                r = ncm_knobs_plan_irqs(e->sysfd, iso->irq_banned, iso->all_cpus,
                                        ncm_knobs_irqbalance_file(e->sysfd, iso->irqbalance),
                                        iso->memo, &mplan, iso->fixed, err);
        }
        if (r >= 0 && iso->persist)
                r = iso->persist(iso->persist_data, err);
        if (r >= 0 && plan.n_ops)
                r = ncm_cgroup_plan_apply_undo(&plan, e->rootfd, NULL, e->plan_undo, err);
        if (r >= 0 && mplan.n_ops)
                r = ncm_cgroup_plan_apply_undo(&mplan, e->sysfd, NULL, e->machine_undo, err);
        for (size_t i = 0; i < 2 * iso->n_containers; i++)
                free(paths[i]);
        free(paths);
        free(v);
        ncm_cgroup_plan_done(&plan);
        ncm_cgroup_plan_done(&mplan);
        return r < 0 ? r : 0;
}

static const ncm_enforcer_ops oci_ops = {
                .name = "oci-hook",
                .begin = enf_begin,
                .pod_add = enf_pod_add,
                .pod_cpus = enf_pod,
                .commit = enf_commit,
                .rollback = enf_rollback,
                .free = enf_free,
                .isolation = enf_isolation,
};

int ncm__oci_enforcer_new(const oci_enforcer_options *o, ncm_enforcer **ret, ncm_error *err)
{
        oci_enforcer *e = calloc(1, sizeof(*e));

        if (!e)
                return oom(err);
        e->rootfd = o->rootfd;
        snprintf(e->hier, sizeof(e->hier), "%s", o->hier);
        e->layout = o->layout;
        e->topo = o->topo;
        e->reg = o->reg;
        e->confined = o->confined;
        e->sysfd = o->sysfd;
        e->plan_undo = ncm_cgroup_undo_new();
        e->machine_undo = ncm_cgroup_undo_new();
        if (!e->plan_undo || !e->machine_undo || ncm_enforcer_new(&oci_ops, e, ret) < 0) {
                enf_free(e);
                return oom(err);
        }
        return 0;
}
