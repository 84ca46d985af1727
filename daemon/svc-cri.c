/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI service: with a runtime (--runtime-endpoint), the kubelet's reconcileState through
 * the runtime's UpdateContainerResources; with --cri-listen too, the CRI proxy in front of it,
 * which pins each container as it is created. lib/cri decides (ncm_cri_node_*) and forwards
 * (ncm_cri_proxy); this file only turns each decision into a job on the node and each answer
 * into the next call.
 *
 * Reconcile: ListContainers, then (a job) the stale containers released and every running
 * container's cpusets computed, then ContainerStatus of each and UpdateContainerResources
 * where the runtime's differ (the kubelet compares with what it last sent; nodecm asks the
 * runtime, so a cpuset changed behind its back is put back too). It runs at start (which also
 * settles what a killed nodecmd left), every cpuManagerReconcilePeriod, and at once after a
 * change that moved the shared pool. One run at a time; a request during a run runs again
 * after it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cri.h>
#include "nodecmd.h"

/* How long a creation the runtime was asked for by an earlier nodecmd may take to appear. */
#define ORPHAN_GRACE_NS (5ull * 1000000000ull)

typedef struct cri {
        nodecmd *d;
        bool active;
        ncm_cri_node *cn;
        ncm_cri_proxy *proxy;
        ncm_rpc_uv_client *client; /* without a proxy: the runtime, for the calls */
        const char *endpoint;
        ncm_cri_sync *sync; /* the UpdateContainerResources calls (lib/cri) */
        uv_timer_t timer;   /* its deadline */
        bool timer_up;
        bool stopping;
        int closing; /* parts still closing at stop */
        /* metrics */
        uint64_t creates, admitted, refused, passed, released, stale;
        uint64_t create_ns; /* CreateContainer: decoding, deciding, patching; all of them */
} cri;

/* Tell every service what a decision did; reconcile when the pool moved. */
static void changed(cri *c, ncm_ctl_method m, const ncm_ctl_result *res, int error, uint64_t t0)
{
        nodecmd_change ch = {.method = m, .res = res, .error = error};

        ch.duration_ns = nodecmd_now_ns() - t0;
        /* every service hears it, this one too (cri_changed reconciles when the pool moved) */
        nodecmd_changed(c->d, &ch);
}

/* ---- the proxy's calls -------------------------------------------------------------------- */

typedef struct job_arg {
        cri *c;
        ncm_cri_ticket *t;
        ncm_cri_container_config cfg; /* CreateContainer: as the proxy decoded it */
        char *id;
        char *pod;
        char *name;
} job_arg;

static void arg_free(job_arg *a)
{
        ncm_cri_container_config_done(&a->cfg);
        free(a->id);
        free(a->pod);
        free(a->name);
        free(a);
}

static job_arg *arg_new(cri *c, ncm_cri_ticket *t, const char *id, const char *pod,
                        const char *name)
{
        job_arg *a = calloc(1, sizeof(*a));

        if (!a)
                return NULL;
        a->c = c;
        a->t = t;
        if ((id && !(a->id = strdup(id))) || (pod && !(a->pod = strdup(pod))) ||
            (name && !(a->name = strdup(name)))) {
                arg_free(a);
                return NULL;
        }
        return a;
}

/* The identity of a container whose CreateContainer is in flight, kept on its ticket. */
typedef struct created_id {
        char *pod, *name;
} created_id;

/*
 * What an admission owes (ncm_cri_node_sync: the directory's fsync, the replaced files freed,
 * the next temporary files made), done once the runtime has answered and the answer is on its
 * way: none of it competes with the runtime's work on the creation the kubelet waits for.
 */
static void settle(cri *c)
{
        ncm_error err = NCM_ERROR_INIT;

        if (ncm_cri_node_sync(c->cn, &err) < 0)
                nodecmd_log(c->d, NODECMD_ERROR, "syncing the node directory failed", "error=%s",
                            nodecmd_q(c->d, 0, err.msg));
}

static void job_create(nodecmd *d, nodecmd_job *job, void *data)
{
        job_arg *a = data;
        cri *c = a->c;
        ncm_cri_decision dec = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf patched = NCM_BUF_INIT;
        size_t len;
        const uint8_t *req = ncm_cri_ticket_request(a->t, &len);
        uint64_t t0 = nodecmd_now_ns();
        int r;

        dec.ctl = (ncm_ctl_result)NCM_CTL_RESULT_INIT;
        c->creates++;
        r = ncm_cri_node_create(c->cn, &a->cfg, &dec, &err);
        if (r < 0) {
                nodecmd_log(d, NODECMD_WARN, "CreateContainer failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
                ncm_cri_ticket_refuse(a->t,
                                      r == -ENOMEM ? NCM_RPC_RESOURCE_EXHAUSTED : NCM_RPC_INTERNAL,
                                      err.msg);
        } else if (dec.action == NCM_CRI_PASS && dec.cpuset_cpus) {
                /* not a pod nodecm holds: on the shared pool, off every exclusive CPU */
                c->passed++;
                r = ncm_cri_decision_apply(&dec, req, len, &patched, &err);
                if (r < 0)
                        ncm_cri_ticket_refuse(a->t, NCM_RPC_INTERNAL, err.msg);
                else
                        ncm_cri_ticket_forward(a->t, (const uint8_t *)patched.data, patched.len);
        } else if (dec.action == NCM_CRI_PASS) {
                c->passed++;
                ncm_cri_ticket_forward(a->t, req, len);
        } else if (dec.action == NCM_CRI_REFUSE) {
                c->refused++;
                nodecmd_log(d, NODECMD_INFO, "CreateContainer refused", "error=%s",
                            nodecmd_q(d, 0, dec.message));
                changed(c, NCM_CTL_ADMIT, &dec.ctl, 0, t0);
                ncm_cri_ticket_refuse(a->t, dec.code, dec.message);
        } else {
                created_id *ci = calloc(1, sizeof(*ci));
                c->admitted++;
                if (ci) {
                        ci->pod = strdup(dec.pod_uid);
                        ci->name = strdup(dec.container);
                }
                r = ci && ci->pod && ci->name
                                    ? ncm_cri_decision_apply(&dec, req, len, &patched, &err)
                                    : -ENOMEM;
                nodecmd_log(d, NODECMD_INFO, "container admitted", "pod=%s container=%s cpus=%s",
                            nodecmd_q(d, 0, dec.pod_uid), nodecmd_q(d, 1, dec.container),
                            nodecmd_q(d, 2, dec.cpuset_cpus ? dec.cpuset_cpus : ""));
                changed(c, NCM_CTL_ADMIT, &dec.ctl, 0, t0);
                if (r < 0) {
                        /* what was decided goes: the kubelet will try again */
                        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
                        ncm_error e2 = NCM_ERROR_INIT;
                        if (ci && ci->pod && ci->name)
                                (void)ncm_cri_node_created(c->cn, ci->pod, ci->name, NULL, &res,
                                                           &e2);
                        ncm_ctl_result_done(&res);
                        if (ci) {
                                free(ci->pod);
                                free(ci->name);
                                free(ci);
                        }
                        ncm_cri_ticket_refuse(a->t, NCM_RPC_INTERNAL, err.msg);
                } else {
                        /* settled when the runtime answers (job_created) */
                        ncm_cri_ticket_set_data(a->t, ci);
                        ncm_cri_ticket_forward(a->t, (const uint8_t *)patched.data, patched.len);
                }
        }
        ncm_buf_done(&patched);
        ncm_cri_decision_done(&dec);
        arg_free(a);
        c->create_ns += nodecmd_now_ns() - t0;
        nodecmd_job_done(d, job);
}

static void on_create(void *data, ncm_cri_ticket *t, ncm_cri_container_config *cfg)
{
        cri *c = data;
        job_arg *a;

        if (c->stopping || nodecmd_stopping(c->d)) {
                ncm_cri_ticket_refuse(t, NCM_RPC_UNAVAILABLE, "nodecmd is stopping");
                return;
        }
        a = arg_new(c, t, NULL, NULL, NULL);
        if (a) {
                /* the job decides on the proxy's decoding: the request is decoded once */
                a->cfg = *cfg;
                *cfg = (ncm_cri_container_config){0};
        }
        if (!a || !nodecmd_submit(c->d, "CreateContainer", job_create, a)) {
                if (a)
                        arg_free(a);
                ncm_cri_ticket_refuse(t, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory");
        }
}

static void job_created(nodecmd *d, nodecmd_job *job, void *data)
{
        job_arg *a = data;
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t t0 = nodecmd_now_ns();
        int r = ncm_cri_node_created(a->c->cn, a->pod, a->name, a->id, &res, &err);

        if (r < 0)
                nodecmd_log(d, NODECMD_WARN, "recording a container failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
        settle(a->c);
        if (!a->id) {
                a->c->released++;
                changed(a->c, NCM_CTL_REMOVE_CONTAINER, &res, r < 0 ? r : 0, t0);
        }
        ncm_ctl_result_done(&res);
        arg_free(a);
        nodecmd_job_done(d, job);
}

static void on_created(void *data, ncm_cri_ticket *t, const char *id)
{
        cri *c = data;
        created_id *ci = ncm_cri_ticket_data(t);
        job_arg *a;

        if (!ci)
                return; /* forwarded as it came: nothing of nodecm's */
        /* stopping: the next start's reconcile settles it from the record */
        a = c->stopping ? NULL : arg_new(c, NULL, id, ci->pod, ci->name);
        free(ci->pod);
        free(ci->name);
        free(ci);
        ncm_cri_ticket_set_data(t, NULL);
        if (c->stopping)
                return;
        if (!a || !nodecmd_submit(c->d, "CreateContainer answered", job_created, a)) {
                if (a)
                        arg_free(a);
                nodecmd_log(c->d, NODECMD_ERROR, "a created container is not recorded",
                            "id=%s reason=%s", nodecmd_q(c->d, 0, id ? id : ""), "out of memory");
        }
}

static void job_sandbox(nodecmd *d, nodecmd_job *job, void *data)
{
        job_arg *a = data;
        ncm_cri_sandbox_config cfg = {0};
        ncm_error err = NCM_ERROR_INIT;

        cfg.uid = a->pod;
        if (ncm_cri_node_sandbox(a->c->cn, a->id, &cfg, &err) < 0)
                nodecmd_log(d, NODECMD_WARN, "recording a sandbox failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
        arg_free(a);
        nodecmd_job_done(d, job);
}

static void on_sandbox(void *data, const char *id, const ncm_cri_sandbox_config *cfg)
{
        cri *c = data;
        job_arg *a = c->stopping ? NULL : arg_new(c, NULL, id, cfg->uid, NULL);

        if (!a || !nodecmd_submit(c->d, "RunPodSandbox answered", job_sandbox, a)) {
                if (a)
                        arg_free(a);
        }
}

static void job_removed(nodecmd *d, nodecmd_job *job, void *data)
{
        job_arg *a = data;
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t t0 = nodecmd_now_ns();
        bool pod = a->name != NULL; /* a sandbox */
        int r = pod ? ncm_cri_node_sandbox_removed(a->c->cn, a->id, &res, &err)
                    : ncm_cri_node_container_removed(a->c->cn, a->id, &res, &err);

        if (r < 0)
                nodecmd_log(d, NODECMD_WARN, "release failed", "id=%s error=%s",
                            nodecmd_q(d, 0, a->id), nodecmd_q(d, 1, err.msg));
        if (r > 0 || res.changed) {
                a->c->released++;
                changed(a->c, pod ? NCM_CTL_REMOVE_POD : NCM_CTL_REMOVE_CONTAINER, &res,
                        r < 0 ? r : 0, t0);
        }
        ncm_ctl_result_done(&res);
        arg_free(a);
        nodecmd_job_done(d, job);
}

static void submit_removed(cri *c, const char *id, bool sandbox)
{
        /* stopping: the next start's reconcile finds it gone and releases it */
        job_arg *a = c->stopping ? NULL : arg_new(c, NULL, id, NULL, sandbox ? "sandbox" : NULL);

        if (!a || !nodecmd_submit(c->d, sandbox ? "RemovePodSandbox" : "RemoveContainer",
                                  job_removed, a)) {
                if (a)
                        arg_free(a);
        }
}

static void on_container_removed(void *data, const char *id)
{
        submit_removed(data, id, false);
}

static void on_sandbox_removed(void *data, const char *id)
{
        submit_removed(data, id, true);
}

/*
 * UpdateContainerResources: for a container nodecm placed, new shares, quota or memory are an
 * in-place resize, decided on the node (ncm_cri_node_update): forwarded with the new cpusets,
 * or refused with the kubelet's reason, nothing changed. The shared pool follows through the
 * reconcile a pool change starts.
 */
static void job_update(nodecmd *d, nodecmd_job *job, void *data)
{
        job_arg *a = data;
        cri *c = a->c;
        ncm_cri_resources res = {0};
        ncm_cri_decision dec = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf patched = NCM_BUF_INIT;
        ncm_autofree char *id = NULL;
        size_t len;
        const uint8_t *req = ncm_cri_ticket_request(a->t, &len);
        uint64_t t0 = nodecmd_now_ns();
        int r;

        dec.ctl = (ncm_ctl_result)NCM_CTL_RESULT_INIT;
        r = ncm_cri_decode_update_resources(req, len, &id, &res, &err);
        if (r >= 0)
                r = ncm_cri_node_update(c->cn, id, &res, &dec, &err);
        free(res.cpuset_cpus);
        free(res.cpuset_mems);
        if (r < 0) {
                nodecmd_log(d, NODECMD_WARN, "UpdateContainerResources failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
                ncm_cri_ticket_refuse(a->t,
                                      r == -ENOMEM ? NCM_RPC_RESOURCE_EXHAUSTED : NCM_RPC_INTERNAL,
                                      err.msg);
        } else if (dec.action == NCM_CRI_REFUSE) {
                nodecmd_log(d, NODECMD_INFO, "resize refused", "pod=%s container=%s error=%s",
                            nodecmd_q(d, 0, dec.pod_uid), nodecmd_q(d, 1, dec.container),
                            nodecmd_q(d, 2, dec.message));
                changed(c, NCM_CTL_RESIZE, &dec.ctl, 0, t0);
                ncm_cri_ticket_refuse(a->t, dec.code, dec.message);
        } else if (dec.action == NCM_CRI_ADMIT && dec.cpuset_cpus &&
                   ncm_cri_patch_update_resources(req, len, dec.cpuset_cpus, dec.cpuset_mems,
                                                  &patched, NULL) == 0) {
                if (dec.ctl.resize) {
                        nodecmd_log(d, NODECMD_INFO, "container resized",
                                    "pod=%s container=%s cpus=%s", nodecmd_q(d, 0, dec.pod_uid),
                                    nodecmd_q(d, 1, dec.container),
                                    nodecmd_q(d, 2, dec.cpuset_cpus));
                        changed(c, NCM_CTL_RESIZE, &dec.ctl, 0, t0);
                }
                ncm_cri_ticket_forward(a->t, (const uint8_t *)patched.data, patched.len);
        } else {
                if (dec.ctl.resize)
                        changed(c, NCM_CTL_RESIZE, &dec.ctl, 0, t0);
                ncm_cri_ticket_forward(a->t, req, len);
        }
        /* what the resize's commit owes (the directory's fsync), once the update is on its way */
        if (r >= 0 && dec.ctl.resize && dec.action == NCM_CRI_ADMIT)
                settle(c);
        ncm_buf_done(&patched);
        ncm_cri_decision_done(&dec);
        arg_free(a);
        nodecmd_job_done(d, job);
}

static void on_update(void *data, ncm_cri_ticket *t, const char *id)
{
        cri *c = data;
        job_arg *a;

        (void)id; /* decoded again in the job, with the resources */
        if (c->stopping || nodecmd_stopping(c->d)) {
                ncm_cri_ticket_refuse(t, NCM_RPC_UNAVAILABLE, "nodecmd is stopping");
                return;
        }
        a = arg_new(c, t, NULL, NULL, NULL);
        if (!a || !nodecmd_submit(c->d, "UpdateContainerResources", job_update, a)) {
                if (a)
                        arg_free(a);
                ncm_cri_ticket_refuse(t, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory");
        }
}

static int on_cpusets(void *data, const char *id, char **ret_cpus, char **ret_mems)
{
        cri *c = data;
        /* a read between jobs: every job finishes its node transaction before it yields */
        return ncm_cri_node_cpusets(c->cn, id, ret_cpus, ret_mems);
}

static const ncm_cri_proxy_ops proxy_ops = {
                .sandbox_ran = on_sandbox,
                .container_create = on_create,
                .container_created = on_created,
                .container_removed = on_container_removed,
                .sandbox_removed = on_sandbox_removed,
                .container_cpusets = on_cpusets,
                .container_update = on_update,
};

/* ---- the runtime's calls: lib/cri's machine (ncm_cri_sync), driven here ------------------ */

static ncm_rpc_conn *runtime(cri *c, ncm_error *err)
{
        if (c->proxy)
                return ncm_cri_proxy_runtime(c->proxy, err);
        if (c->client && ncm_rpc_conn_usable(ncm_rpc_uv_client_conn(c->client)))
                return ncm_rpc_uv_client_conn(c->client);
        if (c->client)
                ncm_rpc_uv_client_close(c->client);
        c->client = NULL;
        if (ncm_rpc_uv_connect(nodecmd_loop(c->d), c->endpoint, NULL, &c->client, err) < 0) {
                c->client = NULL;
                return NULL;
        }
        return ncm_rpc_uv_client_conn(c->client);
}

typedef struct sent {
        cri *c;
        uint64_t token;
} sent;

static void pump(cri *c);

static void on_reply(ncm_cri_reply *r, void *data)
{
        sent *st = data;
        cri *c = st->c;

        ncm_cri_sync_reply(c->sync, st->token, r, nodecmd_now_ns());
        free(st);
        pump(c);
}

typedef struct listed {
        cri *c;
        ncm_cri_container *v;
        size_t n;
        bool release;
} listed;

/* The run's decision on what the runtime listed: the stale released, the cpusets computed. */
static void job_decide(nodecmd *d, nodecmd_job *job, void *data)
{
        listed *l = data;
        cri *c = l->c;
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_cri_update *upd = NULL;
        size_t n = 0, stale = 0;
        uint64_t t0 = nodecmd_now_ns();
        int r = ncm_cri_node_reconcile(c->cn, l->v, l->n, l->release, &upd, &n, &stale, &res, &err);

        ncm_cri_containers_free(l->v, l->n);
        free(l);
        if (r < 0)
                nodecmd_log(d, NODECMD_WARN, "reconcile failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
        ncm_cri_sync_decided(c->sync, r, upd, n, nodecmd_now_ns());
        if (stale) {
                c->stale += stale;
                nodecmd_log(d, NODECMD_INFO, "stale containers released", "count=%zu", stale);
                changed(c, NCM_CTL_REMOVE_CONTAINER, &res, 0, t0);
        }
        ncm_ctl_result_done(&res);
        nodecmd_job_done(d, job);
        pump(c);
}

static void note(cri *c, const ncm_cri_sync_action *a)
{
        nodecmd *d = c->d;
        const char *code = ncm_rpc_code_name(a->code);

        switch (a->note) {
        case NCM_CRI_SYNC_NOTE_PUT_BACK:
                nodecmd_log(d, NODECMD_INFO, "cpuset put back", "id=%s cpus=%s was=%s",
                            nodecmd_q(d, 0, a->id), nodecmd_q(d, 1, a->cpuset_cpus),
                            nodecmd_q(d, 2, a->was ? a->was : ""));
                break;
        case NCM_CRI_SYNC_NOTE_GONE:
                nodecmd_log(d, NODECMD_DEBUG, "container gone before its update", "id=%s",
                            nodecmd_q(d, 0, a->id));
                break;
        case NCM_CRI_SYNC_NOTE_FAILED:
        case NCM_CRI_SYNC_NOTE_FAILED_ONCE:
                nodecmd_log(d, a->note == NCM_CRI_SYNC_NOTE_FAILED ? NODECMD_WARN : NODECMD_DEBUG,
                            a->note == NCM_CRI_SYNC_NOTE_FAILED ? "UpdateContainerResources failed"
                                                                : "UpdateContainerResources "
                                                                  "failed, tried again next run",
                            "id=%s code=%s error=%s", nodecmd_q(d, 0, a->id), code,
                            nodecmd_q(d, 1, a->text));
                break;
        case NCM_CRI_SYNC_NOTE_LIST_FAILED:
                nodecmd_log(d, NODECMD_WARN, "ListContainers failed", "code=%s error=%s", code,
                            nodecmd_q(d, 0, a->text));
                break;
        }
}

static void tick(uv_timer_t *t)
{
        cri *c = t->data;

        ncm_cri_sync_tick(c->sync, nodecmd_now_ns());
        pump(c);
}

/* Do what the machine asks until it asks nothing, then sleep until its deadline. */
static void pump(cri *c)
{
        ncm_cri_sync_action a;
        uint64_t due;

        while (ncm_cri_sync_next(c->sync, nodecmd_now_ns(), &a) > 0) {
                ncm_error err = NCM_ERROR_INIT;
                if (a.what == NCM_CRI_SYNC_NOTE) {
                        note(c, &a);
                } else if (a.what == NCM_CRI_SYNC_SEND) {
                        sent *st = malloc(sizeof(*st));
                        if (a.req.method == NCM_CRI_LIST_CONTAINERS)
                                ncm_cri_node_listing(c->cn);
                        ncm_rpc_conn *conn = st ? runtime(c, &err) : NULL;
                        if (!conn ||
                            ncm_cri_call(conn, &a.req, a.timeout_ms, on_reply, st, &err) < 0) {
                                ncm_cri_reply r = {.code = NCM_RPC_UNAVAILABLE, .message = err.msg};
                                if (a.req.method == NCM_CRI_LIST_CONTAINERS)
                                        nodecmd_log(c->d, NODECMD_WARN,
                                                    "reconcile: the runtime cannot be reached",
                                                    "error=%s", nodecmd_q(c->d, 0, err.msg));
                                free(st);
                                ncm_cri_sync_reply(c->sync, a.token, &r, nodecmd_now_ns());
                                continue;
                        }
                        *st = (sent){c, a.token};
                } else {
                        listed *l = calloc(1, sizeof(*l));
                        if (l)
                                *l = (listed){c, a.listed, a.n_listed, a.release_orphans};
                        if (!l || !nodecmd_submit(c->d, "CRI reconcile", job_decide, l)) {
                                ncm_cri_containers_free(a.listed, a.n_listed);
                                free(l);
                                ncm_cri_sync_decided(c->sync, -ENOMEM, NULL, 0, nodecmd_now_ns());
                        }
                }
        }
        due = ncm_cri_sync_deadline(c->sync);
        if (c->timer_up && due != UINT64_MAX) {
                uint64_t now = nodecmd_now_ns();
                uv_timer_start(&c->timer, tick, due > now ? (due - now) / 1000000 + 1 : 0, 0);
        }
}

/* What the node's commits published since the last time: on their way. */
static void drain(cri *c)
{
        ncm_cri_update *v = NULL;
        size_t n = 0;

        if (ncm_cri_node_intents(c->cn, nodecmd_enforcer(c->d), &v, &n) < 0)
                nodecmd_log(c->d, NODECMD_WARN, "cpuset intents lost", "reason=%s",
                            "out of memory");
        else if (n && ncm_cri_sync_intents(c->sync, v, n) < 0)
                nodecmd_log(c->d, NODECMD_WARN, "cpuset intents lost", "reason=%s",
                            "out of memory");
        pump(c);
}

/* ---- the service -------------------------------------------------------------------------- */

/* The knobs enforcer's resolver: where containerd made a container's cgroup. */
static int cgroup_of(void *data, const char *pod_uid, const char *name, char **ret)
{
        cri *c = data;
        return c->cn ? ncm_cri_node_container_cgroup(c->cn, pod_uid, name, ret) : -ENOENT;
}

static int cri_start(nodecmd *d, void **ret, ncm_error *err)
{
        cri *c = calloc(1, sizeof(*c));
        const char *listen = nodecmd_cri_listen(d);
        ncm_cri_sync_options so = {.orphan_grace_ns = ORPHAN_GRACE_NS};
        int r;

        if (!c)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = c;
        c->d = d;
        c->endpoint = nodecmd_runtime_endpoint(d);
        if (!c->endpoint) {
                if (listen)
                        return ncm_error_set(err, EINVAL,
                                             "--cri-listen needs --runtime-endpoint (the runtime "
                                             "the proxy forwards to)");
                return 0; /* no runtime: the cgroupfs enforcer does the work */
        }
        c->active = true;
        if (ncm_cri_sync_new(&so, nodecmd_now_ns(), &c->sync) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = ncm_cri_node_open(nodecmd_root_dir(d), nodecmd_target(d), &c->cn, err);
        if (r < 0)
                return r;
        ncm_enforcer_knobs_set_resolver(ncm_enforcer_cri_inner(nodecmd_enforcer(d)), cgroup_of, c);
        if (listen) {
                ncm_cri_proxy_options o = {.listen = listen, .runtime_endpoint = c->endpoint};
                ncm_rpc_opts ro;
                nodecmd_rpc_opts(d, &ro);
                o.opts = &ro;
                r = ncm_cri_proxy_new(nodecmd_loop(d), &o, &proxy_ops, c, &c->proxy, err);
                if (r < 0)
                        return r;
        }
        uv_timer_init(nodecmd_loop(d), &c->timer);
        c->timer.data = c;
        c->timer_up = true;
        nodecmd_log(d, NODECMD_INFO, "CRI service started", "runtime=%s proxy=%s containers=%zu",
                    nodecmd_q(d, 0, c->endpoint), nodecmd_q(d, 1, listen ? listen : ""),
                    ncm_cri_node_num_containers(c->cn));
        /* what a previous process left: settled now (a new machine wants a run) */
        drain(c);
        return 0;
}

static void cri_changed(void *data, const nodecmd_change *ch)
{
        cri *c = data;

        if (!c->active || c->stopping)
                return;
        /* the control API's Reconcile (nodecm node reconcile --connect) asks for a run */
        if (!ch->error && ch->method == NCM_CTL_RECONCILE)
                ncm_cri_sync_want(c->sync);
        drain(c);
}

/* The reconcile service ran the node's reconcile: the runtime's containers follow. */
static void cri_reconciled(void *data)
{
        cri *c = data;

        if (!c->active || c->stopping)
                return;
        ncm_cri_sync_want(c->sync);
        drain(c);
}

static void part_closed(cri *c)
{
        if (--c->closing == 0)
                nodecmd_service_stopped(c->d, c);
}

static void timer_closed(uv_handle_t *h)
{
        part_closed(h->data);
}

static void proxy_closed(void *data)
{
        part_closed(data);
}

static void cri_stop(void *data)
{
        cri *c = data;

        c->stopping = true;
        if (c->sync)
                ncm_cri_sync_stop(c->sync);
        c->closing = 1; /* this function's own, released at the end */
        if (c->timer_up) {
                c->closing++;
                c->timer_up = false;
                uv_close((uv_handle_t *)&c->timer, timer_closed);
        }
        if (c->proxy) {
                c->closing++;
                ncm_cri_proxy_close(c->proxy, proxy_closed, c);
        }
        if (c->client) {
                ncm_rpc_uv_client_close(c->client);
                c->client = NULL;
        }
        part_closed(c);
}

static void cri_free(void *data)
{
        cri *c = data;

        if (!c)
                return;
        if (c->client)
                ncm_rpc_uv_client_close(c->client);
        if (c->d)
                ncm_enforcer_knobs_set_resolver(ncm_enforcer_cri_inner(nodecmd_enforcer(c->d)),
                                                NULL, NULL);
        ncm_cri_proxy_free(c->proxy);
        ncm_cri_sync_free(c->sync);
        ncm_cri_node_free(c->cn);
        free(c);
}

static void cri_metrics(void *data, ncm_buf *out)
{
        cri *c = data;
        const ncm_cri_proxy_stats *s = c->proxy ? ncm_cri_proxy_get_stats(c->proxy) : NULL;
        const ncm_cri_sync_stats *k;

        if (!c->active)
                return;
        k = ncm_cri_sync_get_stats(c->sync);
        ncm_buf_printf(out,
                       "# HELP nodecm_cri_create_container_total CreateContainer calls decided, "
                       "by outcome.\n"
                       "# TYPE nodecm_cri_create_container_total counter\n"
                       "nodecm_cri_create_container_total{outcome=\"admitted\"} %" PRIu64 "\n"
                       "nodecm_cri_create_container_total{outcome=\"refused\"} %" PRIu64 "\n"
                       "nodecm_cri_create_container_total{outcome=\"passed\"} %" PRIu64 "\n"
                       "# HELP nodecm_cri_create_container_seconds_total Time nodecmd spent "
                       "deciding CreateContainer calls (decoding, admission, the record written, "
                       "the request patched).\n"
                       "# TYPE nodecm_cri_create_container_seconds_total counter\n"
                       "nodecm_cri_create_container_seconds_total %g\n"
                       "# HELP nodecm_cri_released_total Containers and pods released after the "
                       "runtime removed them (or their creation failed).\n"
                       "# TYPE nodecm_cri_released_total counter\n"
                       "nodecm_cri_released_total %" PRIu64 "\n"
                       "# HELP nodecm_cri_stale_total Containers released because the runtime "
                       "no longer had them (removeStaleState).\n"
                       "# TYPE nodecm_cri_stale_total counter\n"
                       "nodecm_cri_stale_total %" PRIu64 "\n"
                       "# HELP nodecm_cri_reconcile_runs_total Runs of the CRI reconcile loop.\n"
                       "# TYPE nodecm_cri_reconcile_runs_total counter\n"
                       "nodecm_cri_reconcile_runs_total %" PRIu64 "\n"
                       "# HELP nodecm_cri_reconcile_updates_total UpdateContainerResources "
                       "calls that put a cpuset back.\n"
                       "# TYPE nodecm_cri_reconcile_updates_total counter\n"
                       "nodecm_cri_reconcile_updates_total %" PRIu64 "\n"
                       "# HELP nodecm_cri_reconcile_failures_total Runs that could not reach "
                       "or read the runtime.\n"
                       "# TYPE nodecm_cri_reconcile_failures_total counter\n"
                       "nodecm_cri_reconcile_failures_total %" PRIu64 "\n"
                       "# HELP nodecm_cri_reconcile_last_seconds How long the last run took.\n"
                       "# TYPE nodecm_cri_reconcile_last_seconds gauge\n"
                       "nodecm_cri_reconcile_last_seconds %g\n"
                       "# HELP nodecm_cri_reconcile_last_updates Containers the last run "
                       "updated.\n"
                       "# TYPE nodecm_cri_reconcile_last_updates gauge\n"
                       "nodecm_cri_reconcile_last_updates %" PRIu64 "\n"
                       "# HELP nodecm_cri_intent_updates_total UpdateContainerResources calls "
                       "that carried a commit's cpusets to a container.\n"
                       "# TYPE nodecm_cri_intent_updates_total counter\n"
                       "nodecm_cri_intent_updates_total %" PRIu64 "\n",
                       c->admitted, c->refused, c->passed, (double)c->create_ns / 1e9, c->released,
                       c->stale, k->runs, k->updates, k->failures, (double)k->last_ns / 1e9,
                       k->last_updates, k->intent_updates);
        if (s)
                ncm_buf_printf(out,
                               "# HELP nodecm_cri_proxy_calls_total Calls the CRI proxy "
                               "received.\n"
                               "# TYPE nodecm_cri_proxy_calls_total counter\n"
                               "nodecm_cri_proxy_calls_total %" PRIu64 "\n"
                               "# HELP nodecm_cri_proxy_unavailable_total Calls that found no "
                               "runtime to forward to.\n"
                               "# TYPE nodecm_cri_proxy_unavailable_total counter\n"
                               "nodecm_cri_proxy_unavailable_total %" PRIu64 "\n"
                               "# HELP nodecm_cri_proxy_runtime_errors_total Calls the runtime "
                               "answered with an error.\n"
                               "# TYPE nodecm_cri_proxy_runtime_errors_total counter\n"
                               "nodecm_cri_proxy_runtime_errors_total %" PRIu64 "\n",
                               s->calls, s->unavailable, s->failed);
}

const nodecmd_service_ops nodecmd_cri_service = {
                .name = "cri",
                .start = cri_start,
                .changed = cri_changed,
                .reconciled = cri_reconciled,
                .stop = cri_stop,
                .free = cri_free,
                .metrics = cri_metrics,
};
