/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's side of the CRI: what the proxy and the reconcile loop decide, one call at a time
 * on a node (nodecmd runs each as a job). Admissions and removals take the control API's typed
 * entries (ncm_ctl_admit, ncm_ctl_remove: the pod built here, no request packed, no reply
 * parsed), so that they are persisted, counted and reported exactly as `nodecm node admit`
 * and nodecmd's control socket do them; the containers the kubelet created
 * through the proxy are kept in ROOT/nodecm_cri_containers (the runtime integrations' record):
 * each one's pod, kind, resources and runtime ids, so that a restarted nodecmd knows every
 * container its node holds. An admission appends its container to ROOT/nodecm_cri_journal, in
 * the same batch as the node's files and before them; a release, a reconcile that changes the
 * record, and a journal grown long rewrite the record whole and empty the journal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cdi.h>
#include <nodecm/cri.h>
#include <nodecm/fs.h>
#include <nodecm/node-resize.h>
#include "cri-internal.h"
#include "base/array.h"
#include "base/journal.h"
#include "base/strindex.h"
#include "runtime/runtime-record.h"

struct ncm_cri_node {
        char *dir;
        ncm_ctl_target t;
        ncm__rt_record rec;
        /* every write of a CreateContainer, kept from one to the next (ncm_fs_batch_settle) */
        ncm_fs_batch *batch;
        char *journal;   /* its path */
        ncm__journal jn; /* its generation (the record's) and lines */
        /*
         * The ids recorded since a ListContainers was sent (ncm_cri_node_listing): a list the
         * runtime answered before their creation finished does not make them stale. SEQ
         * counts the ids recorded; LIST_SEQ is SEQ when the last list was sent.
         */
        struct recent {
                char *id;
                uint64_t seq;
        } * recent;
        size_t n_recent, cap_recent;
        uint64_t seq, list_seq;
        bool listing;
};

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

ncm_cri_node *ncm_cri_node_free(ncm_cri_node *cn)
{
        if (!cn)
                return NULL;
        ncm__rt_record_done(&cn->rec);
        for (size_t i = 0; i < cn->n_recent; i++)
                free(cn->recent[i].id);
        free(cn->recent);
        /* renames not yet durable: made so before the batch goes (its other work is moot) */
        if (ncm_fs_batch_owed(cn->batch))
                (void)ncm_fs_sync_dir(AT_FDCWD, cn->dir, NULL);
        ncm_fs_batch_free(cn->batch);
        free(cn->journal);
        free(cn->dir);
        free(cn);
        return NULL;
}

/*
 * The record written whole, as the next generation, then the journal emptied: a crash between
 * the two leaves lines of the generation before, which the next load skips.
 */
static int save(ncm_cri_node *cn, ncm_error *err)
{
        int r, fd;

        cn->rec.generation = cn->jn.gen + 1;
        r = ncm__rt_record_save(cn->dir, NCM_CRI_CONTAINERS_NAME, &cn->rec, 0, err);
        if (r < 0) {
                cn->rec.generation = cn->jn.gen;
                return r;
        }
        fd = open(cn->journal, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
                close(fd);
        ncm__journal_compacted(&cn->jn);
        return 0;
}

/* Append LINE to the journal in the batch (a drop of the batch: nothing written). */
static int journal(ncm_cri_node *cn, ncm_buf *line, ncm_error *err)
{
        int r = ncm__journal_append(&cn->jn, cn->batch, cn->journal, line, err);

        ncm_buf_done(line);
        return r;
}

int ncm_cri_node_open(const char *dir, const ncm_ctl_target *t, ncm_cri_node **ret, ncm_error *err)
{
        static const char *const names[] = {NCM_CRI_CONTAINERS_NAME, NULL};
        ncm_cri_node *cn = calloc(1, sizeof(*cn));
        int r;

        if (!cn || !(cn->dir = strdup(dir)) || !(cn->batch = ncm_fs_batch_new()) ||
            asprintf(&cn->journal, "%s/%s", dir, NCM_CRI_JOURNAL_NAME) < 0) {
                if (cn)
                        cn->journal = NULL;
                ncm_cri_node_free(cn);
                return oom(err);
        }
        cn->t = *t;
        cn->t.respec = true; /* the pod grows with each container the runtime creates */
        /* the kubelet in front ran its admission predicates already */
        cn->t.kubelet_admitted = true;
        /* the node's directory is locked by its owner: a temporary file there is a crash's */
        r = ncm_fs_clean_tmp(AT_FDCWD, dir, names, err);
        if (r >= 0)
                r = ncm__rt_record_load(dir, NCM_CRI_CONTAINERS_NAME, &cn->rec, err);
        cn->jn.gen = cn->rec.generation;
        if (r >= 0)
                r = ncm__rt_journal_load(dir, NCM_CRI_JOURNAL_NAME, &cn->rec, err);
        /* what the journal held goes into the record now: it starts empty, without a torn end */
        if (r > 0)
                r = save(cn, err);
        if (r < 0) {
                ncm_cri_node_free(cn);
                return r;
        }
        /* a creation an earlier process left in flight: settled by reconcile */
        for (size_t i = 0; i < cn->rec.n; i++)
                cn->rec.v[i].orphan = !cn->rec.v[i].id[0];
        *ret = cn;
        return 0;
}

size_t ncm_cri_node_num_containers(const ncm_cri_node *cn)
{
        return cn->rec.n;
}

void ncm_cri_decision_done(ncm_cri_decision *d)
{
        free(d->pod_uid);
        free(d->container);
        free(d->cpuset_cpus);
        free(d->cpuset_mems);
        ncm_devmgr_alloc_resp_free(d->devices);
        ncm_ctl_result_done(&d->ctl);
        *d = (ncm_cri_decision){0};
        d->ctl = (ncm_ctl_result)NCM_CTL_RESULT_INIT;
}

/* A refused admission or resize as the control API's client reports it: "REASON: MESSAGE". */
static void refuse(ncm_cri_decision *d, const ncm_node_admission *adm)
{
        ncm_error aerr = NCM_ERROR_INIT;

        (void)ncm_error_set(&aerr, NCM_E_ADMISSION, "%s: %s", adm->reason, adm->message);
        d->action = NCM_CRI_REFUSE;
        d->code = NCM_RPC_RESOURCE_EXHAUSTED;
        snprintf(d->message, sizeof(d->message), "%s", aerr.msg);
}

/*
 * The cpusets container NAME of POD must have: its CPUs, and its memory nodes as the node
 * decides them (ncm_node_container_mems), in the kubelet's form ("0,1"); *RET_MEMS is NULL when
 * cpuset.mems is left to the runtime, as the kubelet leaves it. Returns 0 with both NULL when
 * nodecm pins nothing (the none policy).
 */
static int cpusets_of(const ncm_cri_node *cn, const char *pod, const char *name, char **ret_cpus,
                      char **ret_mems)
{
        const ncm_node *n = cn->t.node;
        ncm_autoptr(ncm_cpuset) cpus = ncm_cpuset_new();
        ncm_buf mems = NCM_BUF_INIT;
        ncm_bitmask m;
        char *c;
        int own;

        *ret_cpus = *ret_mems = NULL;
        if (!cpus)
                return -ENOMEM;
        own = ncm_node_container_cpus(n, pod, name, cpus);
        /* the none policy pins nothing: its containers keep what the runtime gives them */
        if (own == 0 && !ncm_node_config_cpu_policy_is_static(ncm_node_get_config(n)))
                return 0;
        if (ncm_cpuset_is_empty(cpus))
                return 0;
        if (ncm_node_container_mems(n, pod, name, cpus, &m) > 0) {
                ncm_node_format_mems(m, &mems);
                if (ncm_buf_failed(&mems))
                        return -ENOMEM;
        }
        c = ncm_cpuset_format_list(cpus);
        if (!c) {
                ncm_buf_done(&mems);
                return -ENOMEM;
        }
        *ret_cpus = c;
        *ret_mems = mems.len ? ncm_buf_steal(&mems) : NULL;
        return 1;
}

/*
 * The cpusets the new container NAME of POD gets in CreateContainer's patch: the intent the
 * node's cri enforcer published with the admission, else (another enforcer: tests, tools)
 * what the node's state says.
 */
static int intent_of(const ncm_cri_node *cn, const char *pod, const char *name, ncm_cri_decision *d)
{
        const char *cpus, *mems;

        if (ncm_enforcer_cri_intent(ncm_node_enforcer(cn->t.node), pod, name, &cpus, &mems) <= 0)
                return cpusets_of(cn, pod, name, &d->cpuset_cpus, &d->cpuset_mems);
        d->cpuset_cpus = strdup(cpus);
        d->cpuset_mems = mems ? strdup(mems) : NULL;
        return d->cpuset_cpus && (!mems || d->cpuset_mems) ? 1 : -ENOMEM;
}

/*
 * The cpuset of a container nodecm cannot attribute to a pod it holds: the shared pool, where no
 * container holds CPUs of its own (no stranger on an exclusive CPU); NULL when that pool is
 * every CPU (the none policy, nothing isolated): the runtime's choice stands.
 */
static int pool_of(const ncm_cri_node *cn, char **ret)
{
        const ncm_node *n = cn->t.node;
        ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();

        *ret = NULL;
        if (!pool)
                return -ENOMEM;
        ncm_node_shared_pool(n, pool);
        if (ncm_cpuset_is_empty(pool) ||
            ncm_cpuset_equal(pool, ncm_topo_all_cpus_ref(ncm_node_topo(n))))
                return 0;
        *ret = ncm_cpuset_format_list(pool);
        return *ret ? 1 : -ENOMEM;
}

int ncm_cri_node_sandbox(ncm_cri_node *cn, const char *id, const ncm_cri_sandbox_config *cfg,
                         ncm_error *err)
{
        if (!cfg->uid || !*cfg->uid || !id || !*id)
                return 0; /* no pod to speak of: nothing to remember */
        if (ncm__rt_record_find_sandbox(&cn->rec, id) >= 0)
                return 0;
        if (ncm__rt_record_add_sandbox(&cn->rec, id, cfg->uid) < 0)
                return oom(err);
        /*
         * Not written now: a sandbox holds nothing of the node's until a container of it is
         * admitted, and that admission writes the record (this sandbox with it) first. A
         * sandbox forgotten by a crash before then is not missed: its CreateContainer carries
         * its config again, and its removal has nothing to release.
         */
        return 0;
}

/* The pod UID of C: its sandbox config's, else the sandbox the record knows. NULL: unknown. */
static const char *pod_of(const ncm_cri_node *cn, const ncm_cri_container_config *c)
{
        ssize_t s;

        if (c->has_sandbox && c->sandbox.uid && *c->sandbox.uid)
                return c->sandbox.uid;
        s = ncm__rt_record_find_sandbox(&cn->rec, c->pod_sandbox_id);
        return s >= 0 ? cn->rec.sandboxes[s].pod : NULL;
}

static int release(ncm_cri_node *cn, size_t k, ncm_ctl_result *res, ncm_error *err);

/*
 * C's CDI devices into its container of POD, the names CDI would resolve only (the runtime
 * fails the others itself). Not kept in the record: they only matter to this admission.
 */
static int carry_cdi_devices(ncm_pod *pod, const ncm_cri_container_config *c, ncm_error *err)
{
        ncm_autofree const char **ok = calloc(c->n_cdi_devices + 1, sizeof(*ok));
        size_t n = 0;

        if (!ok)
                return oom(err);
        for (size_t i = 0; i < c->n_cdi_devices && n < NCM_POD_CDI_MAX; i++)
                if (ncm_cdi_check_name(c->cdi_devices[i], NULL) == 0)
                        ok[n++] = c->cdi_devices[i];
        if (n == 0)
                return 0;
        return ncm_pod_set_cdi_devices(pod, c->name, ok, n, err) == -ENOMEM ? oom(err) : 0;
}

int ncm_cri_node_create(ncm_cri_node *cn, const ncm_cri_container_config *c, ncm_cri_decision *ret,
                        ncm_error *err)
{
        ncm_cri_decision d = {0};
        ncm__rt_container e = {0}, old = {0};
        ncm_runtime_identity id;
        ncm_autoptr(ncm_pod) pod = NULL;
        ncm_autoptr(ncm_node_admission) adm = NULL;
        const char *uid = pod_of(cn, c);
        ncm_qos_class qos = NCM_QOS_BEST_EFFORT;
        bool had_old = false, new_sandbox = false;
        ncm_fs_batch *batch = cn->batch;
        ssize_t k;
        int r;

        d.ctl = (ncm_ctl_result)NCM_CTL_RESULT_INIT;
        if (!uid || !c->name || !*c->name) {
                /* not a kubelet's pod: forwarded on the shared pool */
                d.action = NCM_CRI_PASS;
                if (pool_of(cn, &d.cpuset_cpus) < 0)
                        return oom(err);
                *ret = d;
                return 0;
        }
        r = ncm_runtime_identify(c->annotations.v, c->annotations.n, &id, err);
        if (r < 0)
                return r;
        if (id.kind == NCM_RUNTIME_SANDBOX || id.kind == NCM_RUNTIME_EPHEMERAL) {
                d.action = NCM_CRI_PASS;
                if (pool_of(cn, &d.cpuset_cpus) < 0)
                        return oom(err);
                *ret = d;
                return 0;
        }
        e.id = strdup("");
        e.pod = strdup(uid);
        e.pod_name = strdup(c->sandbox.name ? c->sandbox.name : "");
        e.pod_ns = strdup(c->sandbox.namespace ? c->sandbox.namespace : "");
        e.name = strdup(c->name);
        /* the pod's cgroup (cgroupfs driver), where the runtime makes the container's */
        e.cgroup = strdup(c->sandbox.cgroup_parent && c->sandbox.cgroup_parent[0] == '/'
                                          ? c->sandbox.cgroup_parent
                                          : "");
        e.sandbox = strdup(c->pod_sandbox_id ? c->pod_sandbox_id : "");
        if (!e.id || !e.pod || !e.pod_name || !e.pod_ns || !e.name || !e.cgroup || !e.sandbox) {
                ncm__rt_container_done(&e);
                return oom(err);
        }
        e.kind = id.kind;
        e.resources = c->resources.r;
        /* the pod's annotations (CRI-O's knobs, nodecm.io/isolated-cpus) come in the sandbox's
         * config, and may be set on the container too */
        {
                size_t na = c->sandbox.annotations.n + c->annotations.n;
                ncm_autofree ncm_runtime_kv *all = calloc(na + 1, sizeof(*all));
                /* no memcpy from an empty list's NULL (UBSan) */
                if (all && c->sandbox.annotations.n)
                        memcpy(all, c->sandbox.annotations.v,
                               c->sandbox.annotations.n * sizeof(*all));
                if (all && c->annotations.n)
                        memcpy(all + c->sandbox.annotations.n, c->annotations.v,
                               c->annotations.n * sizeof(*all));
                if (!all || ncm__rt_container_set_annotations(&e, all, na) < 0) {
                        ncm__rt_container_done(&e);
                        return oom(err);
                }
        }
        e.has_qos = ncm_runtime_pod_cgroup_qos(c->sandbox.cgroup_parent, &qos, NULL, 0) > 0;
        e.qos = qos;
        if (id.has_qos) {
                e.has_qos = true;
                e.qos = id.qos;
        }
        /* a new attempt of a container its pod has had takes its place */
        k = ncm__rt_record_find_name(&cn->rec, e.pod, e.name);
        if (k >= 0) {
                if (ncm__rt_container_dup(&cn->rec.v[k], &old) < 0) {
                        ncm__rt_container_done(&e);
                        return oom(err);
                }
                had_old = true;
                e.seq = cn->rec.v[k].seq;
                ncm__rt_container_done(&cn->rec.v[k]);
                cn->rec.v[k] = e;
        } else {
                k = (ssize_t)cn->rec.n;
                if (ncm__rt_record_add(&cn->rec, &e) < 0) {
                        ncm__rt_container_done(&e);
                        return oom(err);
                }
        }
        e = (ncm__rt_container){0};
        new_sandbox = cn->rec.v[k].sandbox[0] &&
                      ncm__rt_record_find_sandbox(&cn->rec, cn->rec.v[k].sandbox) < 0;
        if (new_sandbox &&
            ncm__rt_record_add_sandbox(&cn->rec, cn->rec.v[k].sandbox, cn->rec.v[k].pod) < 0)
                new_sandbox = false;
        r = ncm__rt_record_pod(&cn->rec, &cn->rec.v[k], &pod, err);
        /* its CDI devices (DRA's) take part in the admission: the node locates them */
        if (r >= 0)
                r = carry_cdi_devices(pod, c, err);
        /*
         * One batch for the journal's line and the node's writes, in that order: every line
         * and file on disk before any file is renamed, about one journal commit for all, and
         * nothing written when the admission refuses. What the batch leaves (the directory's
         * fsync, the replaced files freed, the next temporary files) is the caller's, once the
         * runtime has answered (ncm_cri_node_sync; docs/runtimes.md, "Cost").
         */
        if (r >= 0) {
                ncm_buf line = NCM_BUF_INIT;
                ncm__rt_sandbox sb = {cn->rec.v[k].sandbox, cn->rec.v[k].pod};
                /* its sandbox too: RunPodSandbox only remembered it (ncm_cri_node_sandbox) */
                ncm__rt_journal_add(&line, cn->jn.gen, &cn->rec.v[k], sb.id[0] ? &sb : NULL);
                r = journal(cn, &line, err);
        }
        if (r >= 0)
                r = ncm_ctl_admit(&cn->t, pod, 0, batch, NCM_CTL_FORMAT_NONE, &d.ctl, &adm, err);
        /* refused: the kubelet's reason and message; the record is as it was */
        if (r >= 0 && !adm->admitted)
                refuse(&d, adm);
        if (r < 0 || d.action == NCM_CRI_REFUSE) {
                /* nothing of it was written: the batch goes, the record is put back */
                ncm_fs_batch_drop(batch);
                k = ncm__rt_record_find_name(&cn->rec, uid, c->name);
                if (k >= 0 && had_old) {
                        ncm__rt_container_done(&cn->rec.v[k]);
                        cn->rec.v[k] = old;
                        had_old = false;
                } else if (k >= 0) {
                        ncm__rt_record_remove(&cn->rec, (size_t)k);
                }
                if (new_sandbox) {
                        ssize_t s = ncm__rt_record_find_sandbox(&cn->rec, c->pod_sandbox_id);
                        if (s >= 0)
                                ncm__rt_record_remove_sandbox(&cn->rec, (size_t)s);
                }
                if (had_old)
                        ncm__rt_container_done(&old);
                if (r < 0) {
                        ncm_cri_decision_done(&d);
                        return r;
                }
                *ret = d;
                return 0;
        }
        if (had_old)
                ncm__rt_container_done(&old);
        r = ncm_fs_batch_commit(batch, NCM_FS_WRITE_NO_DIRSYNC, err);
        if (r < 0) {
                /* decided but not written: what was decided goes (written as a release is) */
                ncm_ctl_result res = NCM_CTL_RESULT_INIT;
                k = ncm__rt_record_find_name(&cn->rec, uid, c->name);
                if (k >= 0)
                        (void)release(cn, (size_t)k, &res, NULL);
                ncm_ctl_result_done(&res);
                ncm_cri_decision_done(&d);
                return r;
        }
        d.action = NCM_CRI_ADMIT;
        d.pod_uid = strdup(uid);
        d.container = strdup(c->name);
        if (!d.pod_uid || !d.container || intent_of(cn, uid, c->name, &d) < 0 ||
            ncm_devmgr_container_options(ncm_node_devmgr(cn->t.node), uid, c->name, &d.devices) <
                            0) {
                ncm_cri_decision_done(&d);
                return oom(err);
        }
        *ret = d;
        return 0;
}

/* D's patch into *P (its arrays malloc'd: patch_done). -ENOMEM. */
typedef struct patch_arrays {
        ncm_cri_device *dev;
        ncm_cri_mount *mnt;
        ncm_runtime_kv *env, *ann;
} patch_arrays;

static void patch_done(patch_arrays *a)
{
        free(a->dev);
        free(a->mnt);
        free(a->env);
        free(a->ann);
}

static int patch_of(const ncm_cri_decision *d, ncm_cri_container_patch *p, patch_arrays *a)
{
        const ncm_devmgr_alloc_resp *o = d->devices;
        size_t nd = o ? o->n_devices : 0, nm = o ? o->n_mounts : 0;
        size_t ne = o ? o->n_envs : 0, na = o ? o->n_annotations : 0;

        *p = (ncm_cri_container_patch){0};
        a->dev = calloc(nd + 1, sizeof(*a->dev));
        a->mnt = calloc(nm + 1, sizeof(*a->mnt));
        a->env = calloc(ne + 1, sizeof(*a->env));
        a->ann = calloc(na + 1, sizeof(*a->ann));
        if (!a->dev || !a->mnt || !a->env || !a->ann)
                return -ENOMEM;
        for (size_t i = 0; i < nd; i++)
                a->dev[i] = (ncm_cri_device){o->devices[i].container_path, o->devices[i].host_path,
                                             o->devices[i].permissions};
        for (size_t i = 0; i < nm; i++)
                a->mnt[i] = (ncm_cri_mount){o->mounts[i].container_path, o->mounts[i].host_path,
                                            o->mounts[i].read_only};
        for (size_t i = 0; i < ne; i++)
                a->env[i] = (ncm_runtime_kv){o->envs[i].key, o->envs[i].value};
        for (size_t i = 0; i < na; i++)
                a->ann[i] = (ncm_runtime_kv){o->annotations[i].key, o->annotations[i].value};
        p->cpuset_cpus = d->cpuset_cpus;
        p->cpuset_mems = d->cpuset_mems;
        p->devices = a->dev;
        p->n_devices = nd;
        p->mounts = a->mnt;
        p->n_mounts = nm;
        p->envs = a->env;
        p->n_envs = ne;
        p->annotations = a->ann;
        p->n_annotations = na;
        p->cdi_devices = o ? (const char *const *)o->cdi_devices : NULL;
        p->n_cdi_devices = o ? o->n_cdi_devices : 0;
        return 0;
}

int ncm_cri_decision_apply(const ncm_cri_decision *d, const uint8_t *req, size_t len, ncm_buf *out,
                           ncm_error *err)
{
        ncm_cri_container_patch p;
        patch_arrays a = {0};
        int r = patch_of(d, &p, &a);

        r = r < 0 ? oom(err) : ncm_cri_patch_create_container(req, len, &p, out, err);
        patch_done(&a);
        return r;
}

int ncm_cri_decision_apply_config(const ncm_cri_decision *d, ncm_cri_container_config *c,
                                  ncm_buf *out, ncm_error *err)
{
        ncm_cri_container_patch p;
        patch_arrays a = {0};
        int r = patch_of(d, &p, &a);

        r = r < 0 ? oom(err) : ncm_cri_container_config_patch(c, &p, out, err);
        patch_done(&a);
        return r;
}

/* Release container K of the record (the node's container, and the record's entry). */
static int release(ncm_cri_node *cn, size_t k, ncm_ctl_result *res, ncm_error *err)
{
        ncm_autofree char *pod = strdup(cn->rec.v[k].pod);
        ncm_autofree char *name = strdup(cn->rec.v[k].name);
        int r;

        if (!pod || !name)
                return oom(err);
        r = ncm_ctl_remove(&cn->t, pod, name, NCM_CTL_FORMAT_NONE, res, err);
        if (r < 0)
                return r;
        ncm__rt_record_remove(&cn->rec, k);
        return save(cn, err);
}

int ncm_cri_node_sync(ncm_cri_node *cn, ncm_error *err)
{
        int r = ncm_fs_batch_settle(cn->batch, 0, err);

        /* a journal longer than the record it amends: written whole (its cost, off the path) */
        if (r >= 0 && ncm__journal_over(&cn->jn, cn->rec.n, 0))
                r = save(cn, err);
        return r;
}

/* ID was recorded now: a list sent before is no proof it is gone. Out of memory: forgotten
 * (the race it guards against is then as it was). */
static void remember(ncm_cri_node *cn, const char *id)
{
        char *d;

        cn->seq++;
        if (!cn->listing || ncm__array_grow(cn->recent, cn->cap_recent, cn->n_recent) < 0 ||
            !(d = strdup(id)))
                return;
        cn->recent[cn->n_recent++] = (struct recent){d, cn->seq};
}

/* Whether ID was recorded after the last list was sent. */
static bool recent(const ncm_cri_node *cn, const char *id)
{
        for (size_t i = 0; i < cn->n_recent; i++)
                if (cn->recent[i].seq > cn->list_seq && strcmp(cn->recent[i].id, id) == 0)
                        return true;
        return false;
}

void ncm_cri_node_listing(ncm_cri_node *cn)
{
        size_t k = 0;

        cn->listing = true;
        cn->list_seq = cn->seq;
        /* what this list will show (or not) needs no guard any more */
        for (size_t i = 0; i < cn->n_recent; i++) {
                if (cn->recent[i].seq > cn->list_seq)
                        cn->recent[k++] = cn->recent[i];
                else
                        free(cn->recent[i].id);
        }
        cn->n_recent = k;
}

int ncm_cri_node_created(ncm_cri_node *cn, const char *pod_uid, const char *name, const char *id,
                         ncm_ctl_result *res, ncm_error *err)
{
        ssize_t k = ncm__rt_record_find_name(&cn->rec, pod_uid, name);
        char *nid;

        if (k < 0)
                return 0;
        if (!id) {
                /* the runtime did not create it: what was decided for it goes */
                return release(cn, (size_t)k, res, err);
        }
        nid = strdup(id);
        if (!nid)
                return oom(err);
        free(cn->rec.v[k].id);
        cn->rec.v[k].id = nid;
        remember(cn, nid);
        /*
         * Only the id, which is no decision: a journal line. Should it be lost, the entry has
         * none, an orphan the next start adopts by its sandbox and name when the runtime lists
         * it (settle_orphans), as after a crash during the creation.
         */
        {
                ncm_buf line = NCM_BUF_INIT;
                int r;
                ncm__rt_journal_id(&line, cn->jn.gen, pod_uid, name, id);
                r = journal(cn, &line, err);
                if (r >= 0)
                        r = ncm_fs_batch_commit(cn->batch, NCM_FS_WRITE_NO_DIRSYNC, err);
                else
                        ncm_fs_batch_drop(cn->batch);
                return r;
        }
}

int ncm_cri_node_container_removed(ncm_cri_node *cn, const char *id, ncm_ctl_result *res,
                                   ncm_error *err)
{
        ssize_t k = ncm__rt_record_find_id(&cn->rec, id);

        return k < 0 ? 0 : release(cn, (size_t)k, res, err);
}

int ncm_cri_node_sandbox_removed(ncm_cri_node *cn, const char *id, ncm_ctl_result *res,
                                 ncm_error *err)
{
        ssize_t s = ncm__rt_record_find_sandbox(&cn->rec, id);
        ncm_autofree char *pod = NULL;
        int r;

        if (s < 0)
                return 0;
        pod = strdup(cn->rec.sandboxes[s].pod);
        if (!pod)
                return oom(err);
        r = ncm_ctl_remove(&cn->t, pod, NULL, NCM_CTL_FORMAT_NONE, res, err);
        if (r < 0)
                return r;
        for (size_t i = cn->rec.n; i-- > 0;)
                if (strcmp(cn->rec.v[i].pod, pod) == 0)
                        ncm__rt_record_remove(&cn->rec, i);
        for (size_t i = cn->rec.n_sandboxes; i-- > 0;)
                if (strcmp(cn->rec.sandboxes[i].pod, pod) == 0)
                        ncm__rt_record_remove_sandbox(&cn->rec, i);
        return save(cn, err);
}

int ncm_cri_node_container_cgroup(const ncm_cri_node *cn, const char *pod_uid, const char *name,
                                  char **ret)
{
        ssize_t k = ncm__rt_record_find_name(&cn->rec, pod_uid, name);

        /* containerd's cgroupfs naming: the container's id below its sandbox's parent */
        if (k < 0 || !cn->rec.v[k].id[0] || !cn->rec.v[k].cgroup || !cn->rec.v[k].cgroup[0])
                return -ENOENT;
        if (asprintf(ret, "%s/%s", cn->rec.v[k].cgroup, cn->rec.v[k].id) < 0)
                return -ENOMEM;
        return 0;
}

/*
 * An update's resources over the recorded ones: a value the update leaves at 0 (the CRI's "not
 * given") keeps the recorded one, so that a client setting only a cpuset changes nothing else.
 * Whether a cpu or memory value differs.
 */
static bool merge_resources(const ncm_runtime_resources *had, const ncm_runtime_resources *upd,
                            ncm_runtime_resources *ret)
{
        *ret = *had;
        if (upd->cpu_shares)
                ret->cpu_shares = upd->cpu_shares;
        if (upd->cpu_quota)
                ret->cpu_quota = upd->cpu_quota;
        if (upd->cpu_period)
                ret->cpu_period = upd->cpu_period;
        if (upd->memory_limit)
                ret->memory_limit = upd->memory_limit;
        return ret->cpu_shares != had->cpu_shares || ret->cpu_quota != had->cpu_quota ||
               ret->cpu_period != had->cpu_period || ret->memory_limit != had->memory_limit;
}

int ncm_cri_node_update(ncm_cri_node *cn, const char *id, const ncm_cri_resources *res,
                        ncm_cri_decision *ret, ncm_error *err)
{
        ncm_cri_decision d = {0};
        ncm__rt_container old = {0};
        ncm_autoptr(ncm_pod) pod = NULL;
        ncm_autoptr(ncm_node_admission) adm = NULL;
        ncm_runtime_resources merged;
        ssize_t k = ncm__rt_record_find_id(&cn->rec, id);
        int r;

        d.ctl = (ncm_ctl_result)NCM_CTL_RESULT_INIT;
        if (k < 0) {
                /* not a container nodecm placed: forwarded as it came */
                d.action = NCM_CRI_PASS;
                *ret = d;
                return 0;
        }
        d.pod_uid = strdup(cn->rec.v[k].pod);
        d.container = strdup(cn->rec.v[k].name);
        if (!d.pod_uid || !d.container) {
                ncm_cri_decision_done(&d);
                return oom(err);
        }
        if (res->present && merge_resources(&cn->rec.v[k].resources, &res->r, &merged)) {
                /* new shares, quota or memory limit: the kubelet resizes the pod in place */
                if (ncm__rt_container_dup(&cn->rec.v[k], &old) < 0) {
                        ncm_cri_decision_done(&d);
                        return oom(err);
                }
                cn->rec.v[k].resources = merged;
                r = ncm__rt_record_pod(&cn->rec, &cn->rec.v[k], &pod, err);
                if (r >= 0) {
                        ncm_buf line = NCM_BUF_INIT;
                        /* the journal's line first, the node's files after it, one batch */
                        ncm__rt_journal_add(&line, cn->jn.gen, &cn->rec.v[k], NULL);
                        r = journal(cn, &line, err);
                }
                if (r >= 0)
                        r = ncm_ctl_resize(&cn->t, pod, 0, cn->batch, NCM_CTL_FORMAT_NONE, &d.ctl,
                                           &adm, err);
                if (r >= 0 && !adm->admitted) {
                        d.action = NCM_CRI_REFUSE;
                        d.code = NCM_RPC_RESOURCE_EXHAUSTED;
                        snprintf(d.message, sizeof(d.message), "%.63s: %.900s", adm->reason,
                                 adm->message);
                }
                if (r < 0 || d.action == NCM_CRI_REFUSE) {
                        /* nothing written: the record as it was */
                        ncm_fs_batch_drop(cn->batch);
                        ncm__rt_container_done(&cn->rec.v[k]);
                        cn->rec.v[k] = old;
                        if (r < 0) {
                                ncm_cri_decision_done(&d);
                                return r;
                        }
                        *ret = d;
                        return 0;
                }
                ncm__rt_container_done(&old);
                /* the node's commit took the line with its files; what it owes is the
                 * caller's (ncm_cri_node_sync), as for a creation */
                r = ncm_fs_batch_commit(cn->batch, NCM_FS_WRITE_NO_DIRSYNC, err);
                if (r < 0) {
                        ncm_cri_decision_done(&d);
                        return r;
                }
        }
        d.action = NCM_CRI_ADMIT;
        if (cpusets_of(cn, d.pod_uid, d.container, &d.cpuset_cpus, &d.cpuset_mems) < 0) {
                ncm_cri_decision_done(&d);
                return oom(err);
        }
        *ret = d;
        return 0;
}

int ncm_cri_node_cpusets(const ncm_cri_node *cn, const char *id, char **ret_cpus, char **ret_mems)
{
        ssize_t k = ncm__rt_record_find_id(&cn->rec, id);

        if (k < 0)
                return 0;
        return cpusets_of(cn, cn->rec.v[k].pod, cn->rec.v[k].name, ret_cpus, ret_mems);
}

void ncm_cri_updates_free(ncm_cri_update *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].id);
                free(v[i].cpuset_cpus);
                free(v[i].cpuset_mems);
        }
        free(v);
}

/* The canonical form of a cpuset list, or NULL when it does not parse. */
static char *canonical(const char *s)
{
        ncm_autoptr(ncm_cpuset) set = NULL;

        if (!s || ncm_cpuset_parse_list(s, &set, NULL) < 0)
                return NULL;
        return ncm_cpuset_format_list(set);
}

bool ncm_cri_cpuset_differs(const char *want, const char *have)
{
        ncm_autofree char *a = canonical(want);
        ncm_autofree char *b = canonical(have);

        if (!want || !*want)
                return false;
        return !a || !b || strcmp(a, b) != 0;
}

/*
 * Creations an earlier process left in flight (recorded without an id): the runtime may have
 * finished one (the same sandbox and name: adopted), may still be finishing it (a creation
 * outlives the client that asked for it), or never made it. Adopted as soon as it is listed;
 * released once RELEASE says the runtime has had time enough.
 */
static int settle_orphans(ncm_cri_node *cn, const ncm_cri_container *listed, size_t n)
{
        bool dirty = false;

        for (size_t i = 0; i < cn->rec.n; i++) {
                ncm__rt_container *e = &cn->rec.v[i];
                const ncm_cri_container *found = NULL;
                if (!e->orphan)
                        continue;
                for (size_t j = 0; j < n; j++) {
                        const ncm_cri_container *c = &listed[j];
                        if (strcmp(c->pod_sandbox_id, e->sandbox) != 0 ||
                            strcmp(c->name, e->name) != 0 ||
                            ncm__rt_record_find_id(&cn->rec, c->id) >= 0)
                                continue;
                        /* the newest attempt is the one that was being created */
                        if (!found || c->attempt > found->attempt)
                                found = c;
                }
                if (found) {
                        char *id = strdup(found->id);
                        if (!id)
                                return -ENOMEM;
                        free(e->id);
                        e->id = id;
                        e->orphan = false;
                        dirty = true;
                }
        }
        return dirty;
}

int ncm_cri_node_reconcile(ncm_cri_node *cn, const ncm_cri_container *listed, size_t n,
                           bool release_orphans, ncm_cri_update **ret, size_t *ret_n,
                           size_t *ret_stale, ncm_ctl_result *res, ncm_error *err)
{
        ncm_cri_update *v = calloc(n + 1, sizeof(*v));
        size_t nv = 0, stale = 0;
        int r = 0;

        if (!v)
                return oom(err);
        r = settle_orphans(cn, listed, n);
        if (r > 0)
                r = save(cn, err);
        else if (r < 0)
                r = oom(err);
        if (r < 0) {
                free(v);
                return r;
        }
        /*
         * removeStaleState: containers the runtime no longer has (LISTED is all of them). A
         * container whose creation is in flight has no id yet and is not stale.
         */
        for (size_t i = cn->rec.n; i-- > 0 && r >= 0;) {
                bool there = false;
                /* being created now, or an orphan the runtime may still be creating */
                if (!cn->rec.v[i].id[0] && (!cn->rec.v[i].orphan || !release_orphans))
                        continue;
                /* created after the list was asked for: the list cannot tell */
                if (cn->rec.v[i].id[0] && recent(cn, cn->rec.v[i].id))
                        continue;
                for (size_t j = 0; j < n && !there; j++)
                        there = strcmp(listed[j].id, cn->rec.v[i].id) == 0 &&
                                listed[j].state != NCM_CRI_CONTAINER_UNKNOWN;
                if (there)
                        continue;
                {
                        ncm_ctl_result one = NCM_CTL_RESULT_INIT;
                        r = release(cn, i, &one, err);
                        /* RES says whether anything moved; the last release's event */
                        if (r >= 0 && res) {
                                bool changed = res->changed || one.changed;
                                bool pool = res->pool_changed || one.pool_changed;
                                ncm_ctl_result_done(res);
                                *res = one;
                                one = (ncm_ctl_result)NCM_CTL_RESULT_INIT;
                                res->changed = changed;
                                res->pool_changed = pool;
                        }
                        ncm_ctl_result_done(&one);
                }
                stale++;
        }
        /* every running container the state knows gets its cpuset */
        for (size_t j = 0; j < n && r >= 0; j++) {
                const ncm_cri_container *c = &listed[j];
                ssize_t k;
                if (c->state != NCM_CRI_CONTAINER_RUNNING)
                        continue;
                k = ncm__rt_record_find_id(&cn->rec, c->id);
                /* one nodecm does not hold: kept on the shared pool */
                if (k < 0)
                        r = pool_of(cn, &v[nv].cpuset_cpus);
                else
                        r = cpusets_of(cn, cn->rec.v[k].pod, cn->rec.v[k].name, &v[nv].cpuset_cpus,
                                       &v[nv].cpuset_mems);
                if (r < 0) {
                        r = oom(err);
                        break;
                }
                if (r == 0)
                        continue;
                v[nv].id = strdup(c->id);
                if (!v[nv++].id)
                        r = oom(err);
        }
        if (r < 0) {
                ncm_cri_updates_free(v, nv);
                return r;
        }
        *ret = v;
        *ret_n = nv;
        if (ret_stale)
                *ret_stale = stale;
        return 0;
}

typedef struct name_key {
        const ncm__rt_record *rec;
        const char *pod, *name;
} name_key;

static bool name_eq(size_t pos, const void *ctx)
{
        const name_key *k = ctx;
        return strcmp(k->rec->v[pos].pod, k->pod) == 0 && strcmp(k->rec->v[pos].name, k->name) == 0;
}

int ncm_cri_node_intents(const ncm_cri_node *cn, ncm_enforcer *e, ncm_cri_update **ret,
                         size_t *ret_n)
{
        ncm_cri_intent *v = NULL;
        ncm_cri_update *u = NULL;
        ncm__strindex ix = {0};
        size_t n = 0, k = 0;
        int r;

        *ret = NULL;
        *ret_n = 0;
        r = ncm_enforcer_cri_take(e, &v, &n);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        /* the record by (pod, name), once: a commit that moved the pool is O(N) */
        if (n && (r = ncm__strindex_reserve(&ix, cn->rec.n)) >= 0)
                for (size_t i = 0; i < cn->rec.n; i++)
                        (void)ncm__strindex_add(
                                        &ix,
                                        ncm__strindex_hash(cn->rec.v[i].pod, cn->rec.v[i].name), i);
        if (r >= 0 && n && !(u = calloc(n, sizeof(*u))))
                r = -ENOMEM;
        for (size_t i = 0; i < n && r >= 0; i++) {
                name_key key = {&cn->rec, v[i].pod_uid, v[i].container};
                ssize_t at = ncm__strindex_find(&ix,
                                                ncm__strindex_hash(v[i].pod_uid, v[i].container),
                                                name_eq, &key);
                if (at < 0 || !cn->rec.v[at].id[0])
                        continue; /* a creation in flight: CreateContainer carries it */
                u[k].id = strdup(cn->rec.v[at].id);
                u[k].cpuset_cpus = v[i].cpuset_cpus;
                u[k].cpuset_mems = v[i].cpuset_mems;
                v[i].cpuset_cpus = v[i].cpuset_mems = NULL;
                if (!u[k++].id)
                        r = -ENOMEM;
        }
        ncm__strindex_done(&ix);
        ncm_cri_intents_free(v, n);
        if (r < 0 || k == 0) {
                ncm_cri_updates_free(u, k);
                return r < 0 ? r : 0;
        }
        *ret = u;
        *ret_n = k;
        return 0;
}
