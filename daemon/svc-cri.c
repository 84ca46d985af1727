/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI service: with a runtime (--runtime-endpoint), the cri enforcer's cpusets carried to
 * the runtime's containers (lib/cri's UpdateContainerResources machine, ncm_cri_sync, driven
 * here by the loop and the node's jobs) and the kubelet's reconcileState against the runtime
 * whenever the reconcile service has run the node's; with --cri-listen too, the CRI proxy in
 * front of it, which pins each container as it is created (its calls as jobs:
 * svc-cri-proxy.c). lib/cri decides, answers and says what to send; nothing here speaks the
 * protocol.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svc-cri.h"

/* How long a creation the runtime was asked for by an earlier nodecmd may take to appear. */
#define ORPHAN_GRACE_NS (5ull * 1000000000ull)

void nodecmd_cri_changed(cri *c, ncm_ctl_method m, const ncm_ctl_result *res, int error,
                         uint64_t t0)
{
        nodecmd_change ch = {.method = m, .res = res, .error = error};

        ch.duration_ns = nodecmd_now_ns() - t0;
        /* every service hears it, this one too (cri_changed sends the intents it published) */
        nodecmd_changed(c->d, &ch);
}

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
                c->k.stale += stale;
                nodecmd_log(d, NODECMD_INFO, "stale containers released", "count=%zu", stale);
                nodecmd_cri_changed(c, NCM_CTL_REMOVE_CONTAINER, &res, 0, t0);
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
        else if (ncm_cri_sync_intents(c->sync, v, n) < 0)
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
                r = ncm_cri_proxy_new(nodecmd_loop(d), &o, &nodecmd_cri_proxy_ops, c, &c->proxy,
                                      err);
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

        if (c->active)
                ncm_cri_metrics_format(&c->k, ncm_cri_sync_get_stats(c->sync),
                                       c->proxy ? ncm_cri_proxy_get_stats(c->proxy) : NULL, out);
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
