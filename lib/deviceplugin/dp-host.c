/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device-plugin host: the Registration server, one endpoint per plugin instance (dial,
 * GetDevicePluginOptions, ListAndWatch), the directory watch that keeps kubelet.sock there,
 * and the capacity timer of the grace period. Plugin calls made by allocations are answered
 * through sessions (dp-session.c).
 *
 * Endpoints. Each Register creates one; it dials, asks for the options, then becomes the
 * resource's endpoint in the device manager (which releases the one before: that instance
 * stays connected but is no longer heard, as the kubelet keeps an old instance's stream
 * until it ends). An endpoint lives as long as the device manager refers to it or its
 * connection is open, whichever is longer; the host frees it when both are over.
 *
 * libuv handles (timers, the watch) are allocated apart from the objects that use them and
 * freed in their close callbacks, so an object can go at once while its handles close later.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodecm/rpc-uv.h>
#include "base/array.h"
#include "dp-host.h"

/* Registrations dialing or waiting for options at once; more are refused (a flood). */
#define MAX_REGISTERING 256
/* Replaced instances still connected; beyond, the oldest is disconnected. */
#define MAX_REPLACED 64
/* Distinct resource names counted in metrics. */
#define MAX_METRIC_RESOURCES 1024
#define DIAL_RETRY_MS 100

static const ncm_devmgr_plugin_ops grpc_ops;

/* ---- small helpers ---- */

void ncm__dp_log(ncm_dp_host *h, ncm_dp_level level, const char *msg, const char *k1,
                 const char *v1, const char *k2, const char *v2, const char *k3, const char *v3)
{
        ncm_dp_field f[3];
        size_t n = 0;

        if (!h->ev.log)
                return;
        if (k1)
                f[n++] = (ncm_dp_field){k1, v1};
        if (k2)
                f[n++] = (ncm_dp_field){k2, v2};
        if (k3)
                f[n++] = (ncm_dp_field){k3, v3};
        h->ev.log(h->ev.data, level, msg, f, n);
}

static void changed(ncm_dp_host *h, const char *resource)
{
        if (h->ev.changed)
                h->ev.changed(h->ev.data, resource);
}

static void free_handle(uv_handle_t *hd)
{
        free(hd);
}

/* A timer of its own: OWNER in data; closed (and freed) by timer_drop. */
static uv_timer_t *timer_new(ncm_dp_host *h, void *owner)
{
        uv_timer_t *t = malloc(sizeof(*t));
        if (!t)
                return NULL;
        uv_timer_init(h->loop, t);
        t->data = owner;
        return t;
}

static void timer_drop(uv_timer_t *t)
{
        if (!t)
                return;
        t->data = NULL;
        uv_timer_stop(t);
        uv_close((uv_handle_t *)t, free_handle);
}

const char *ncm_dp_host_dir(const ncm_dp_host *h)
{
        return h->dir;
}

const char *ncm_dp_host_socket(const ncm_dp_host *h)
{
        return h->sock;
}

/* ---- metrics ---- */

dp_stats *ncm__dp_stats(ncm_dp_host *h, const char *resource)
{
        dp_stats *v;

        for (size_t i = 0; i < h->n_stats; i++)
                if (strcmp(h->stats[i].resource, resource) == 0)
                        return &h->stats[i];
        if (h->n_stats >= MAX_METRIC_RESOURCES)
                return NULL;
        if (ncm__array_grow(h->stats, h->cap_stats, h->n_stats) < 0)
                return NULL;
        v = h->stats;
        v[h->n_stats].resource = strdup(resource);
        if (!v[h->n_stats].resource)
                return NULL;
        return &v[h->n_stats++];
}

static const double buckets[NCM_DP_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                               0.5,   1,    2.5,   5,    10};

void ncm__dp_observe_alloc(ncm_dp_host *h, const char *resource, double seconds)
{
        dp_stats *s = ncm__dp_stats(h, resource);
        if (!s)
                return;
        for (int i = 0; i < NCM_DP_BUCKETS; i++)
                if (seconds <= buckets[i])
                        s->alloc_buckets[i]++;
        s->alloc_count++;
        s->alloc_sum += seconds;
}

static int cmp_stats(const void *a, const void *b)
{
        return strcmp(((const dp_stats *)a)->resource, ((const dp_stats *)b)->resource);
}

void ncm_dp_host_metrics(const ncm_dp_host *h, ncm_buf *out)
{
        dp_stats *v = NULL;

        if (h->n_stats && (v = malloc(h->n_stats * sizeof(*v)))) {
                memcpy(v, h->stats, h->n_stats * sizeof(*v));
                qsort(v, h->n_stats, sizeof(*v), cmp_stats);
        }
        ncm_buf_puts(out, "# HELP kubelet_device_plugin_registration_total Cumulative number of "
                          "device plugin registrations. Broken down by resource name.\n"
                          "# TYPE kubelet_device_plugin_registration_total counter\n");
        for (size_t i = 0; v && i < h->n_stats; i++)
                if (v[i].registrations) {
                        ncm_buf_puts(out,
                                     "kubelet_device_plugin_registration_total{resource_name=");
                        ncm_buf_go_quote(out, v[i].resource, strlen(v[i].resource));
                        ncm_buf_printf(out, "} %" PRIu64 "\n", v[i].registrations);
                }
        ncm_buf_puts(out, "# HELP kubelet_device_plugin_alloc_duration_seconds Duration in seconds "
                          "to serve a device plugin Allocation request. Broken down by resource "
                          "name.\n"
                          "# TYPE kubelet_device_plugin_alloc_duration_seconds histogram\n");
        for (size_t i = 0; v && i < h->n_stats; i++) {
                ncm_buf q = NCM_BUF_INIT;
                if (!v[i].alloc_count)
                        continue;
                ncm_buf_go_quote(&q, v[i].resource, strlen(v[i].resource));
                for (int b = 0; b < NCM_DP_BUCKETS; b++)
                        ncm_buf_printf(out,
                                       "kubelet_device_plugin_alloc_duration_seconds_bucket{"
                                       "resource_name=%s,le=\"%g\"} %" PRIu64 "\n",
                                       q.data, buckets[b], v[i].alloc_buckets[b]);
                ncm_buf_printf(out,
                               "kubelet_device_plugin_alloc_duration_seconds_bucket{resource_name="
                               "%s,le=\"+Inf\"} %" PRIu64 "\n"
                               "kubelet_device_plugin_alloc_duration_seconds_sum{resource_name=%s}"
                               " %.9g\n"
                               "kubelet_device_plugin_alloc_duration_seconds_count{resource_name="
                               "%s} %" PRIu64 "\n",
                               q.data, v[i].alloc_count, q.data, v[i].alloc_sum, q.data,
                               v[i].alloc_count);
                ncm_buf_done(&q);
        }
        ncm_buf_puts(out, "# HELP nodecm_device_plugin_calls_total Calls nodecmd made to device "
                          "plugins, by method and status code.\n"
                          "# TYPE nodecm_device_plugin_calls_total counter\n");
        for (int m = 0; m < DP_N_METHODS; m++)
                for (int c = 0; c <= 16; c++)
                        if (h->calls[m][c])
                                ncm_buf_printf(out,
                                               "nodecm_device_plugin_calls_total{method=\"%s\","
                                               "code=\"%s\"} %" PRIu64 "\n",
                                               ncm__dp_method_name(m), ncm_rpc_code_name(c),
                                               h->calls[m][c]);
        free(v);
}

const char *ncm__dp_method_name(int m)
{
        static const char *const names[DP_N_METHODS] = {"GetDevicePluginOptions", "ListAndWatch",
                                                        "GetPreferredAllocation", "Allocate",
                                                        "PreStartContainer"};
        return m >= 0 && m < DP_N_METHODS ? names[m] : "?";
}

void ncm__dp_count_call(ncm_dp_host *h, int method, int code)
{
        if (method >= 0 && method < DP_N_METHODS && code >= 0 && code <= 16)
                h->calls[method][code]++;
}

/* ---- endpoints ---- */

static const char *ep_state_name(const dp_endpoint *ep)
{
        switch (ep->state) {
        case EP_DIALING:
                return "dialing";
        case EP_OPTIONS:
                return "options";
        case EP_RUNNING:
                return ep->current ? "running" : "replaced";
        case EP_ENDED:
                return "ended";
        }
        return "?";
}

dp_endpoint *ncm__dp_endpoint_by_serial(ncm_dp_host *h, uint64_t serial)
{
        for (dp_endpoint *ep = h->endpoints; ep; ep = ep->next)
                if (ep->serial == serial)
                        return ep;
        return NULL;
}

static void ep_unlink(ncm_dp_host *h, dp_endpoint *ep)
{
        for (dp_endpoint **p = &h->endpoints; *p; p = &(*p)->next)
                if (*p == ep) {
                        *p = ep->next;
                        break;
                }
}

static void ep_free(dp_endpoint *ep)
{
        ep_unlink(ep->h, ep);
        timer_drop(ep->timer);
        free(ep->resource);
        free(ep->path);
        free(ep->snapshot);
        free(ep->opts_msg);
        free(ep);
}

/* Free EP once nothing refers to it: not in the device manager, connection over, answered. */
static void ep_maybe_free(dp_endpoint *ep)
{
        /* while the host closes, ncm_dp_host_close() frees every endpoint itself */
        if (ep->h->closing)
                return;
        if (!ep->in_devmgr && ep->state == EP_ENDED && !ep->reg_call && !ep->cl)
                ep_free(ep);
}

/* Answer the Register call (once). CODE OK: MESSAGE unused. */
static void ep_answer(dp_endpoint *ep, ncm_rpc_code code, const char *message)
{
        ncm_rpc_call *call = ep->reg_call;
        if (!call)
                return;
        ep->reg_call = NULL;
        /* Register returns Empty: a success carries that one (zero-byte) message, or grpc-go
         * plugins see EOF and register again every 5 s */
        if (code == NCM_RPC_OK && ncm_rpc_call_send(call, NULL, 0) < 0) {
                code = NCM_RPC_INTERNAL;
                message = "cannot send the response";
        }
        ncm_rpc_call_finish(call, code, code == NCM_RPC_OK ? NULL : message);
}

/* The connection is over: close it (calls still open end with UNAVAILABLE first). */
static void ep_close_conn(dp_endpoint *ep)
{
        ncm_rpc_uv_client *cl = ep->cl;
        ep->cl = NULL;
        ep->state = EP_ENDED;
        timer_drop(ep->timer);
        ep->timer = NULL;
        if (cl)
                ncm_rpc_uv_client_close(cl);
        ep->opts_call = NULL;
        ep->law_call = NULL;
}

/* Registration failed: the plugin hears TEXT (status Unknown, the kubelet's plain errors). */
static void ep_fail(dp_endpoint *ep, const char *text)
{
        ncm__dp_log(ep->h, NCM_DP_ERROR, "device plugin registration failed", "resource",
                    ep->resource, "endpoint", ep->path, "error", text);
        ep_answer(ep, NCM_RPC_UNKNOWN, text);
        ep_close_conn(ep);
        ep_maybe_free(ep);
}

static void count_replaced(ncm_dp_host *h)
{
        size_t n = 0;
        dp_endpoint *oldest = NULL;

        for (dp_endpoint *ep = h->endpoints; ep; ep = ep->next)
                if (ep->state == EP_RUNNING && !ep->current) {
                        n++;
                        if (!oldest || ep->serial < oldest->serial)
                                oldest = ep;
                }
        if (n > MAX_REPLACED && oldest) {
                ncm__dp_log(h, NCM_DP_WARN,
                            "too many replaced device plugin instances connected: "
                            "disconnecting the oldest",
                            "resource", oldest->resource, "endpoint", oldest->path, NULL, NULL);
                ep_close_conn(oldest);
                ep_maybe_free(oldest);
        }
}

/* ---- ListAndWatch ---- */

/* Give the device manager the snapshot DATA of EP (it is EP's newest). */
static void ep_apply(dp_endpoint *ep, const uint8_t *data, size_t len, bool keep)
{
        ncm_dp_host *h = ep->h;
        ncm__dp_snapshot s = {0};
        ncm_error err = NCM_ERROR_INIT;
        char n[32];
        int r;

        r = ncm__dp_snapshot_decode(data, len, &s, &err);
        if (r < 0) {
                /* grpc-go's Recv fails: the kubelet ends the stream and disconnects */
                ncm__dp_log(h, NCM_DP_ERROR, "ListAndWatch ended unexpectedly for device plugin",
                            "resource", ep->resource, "endpoint", ep->path, "error", err.msg);
                ep->law_failed = true;
                if (ep->law_call)
                        ncm_rpc_call_cancel(ep->law_call);
                return;
        }
        ep->snapshots++;
        ep->devices = s.n;
        if (!ep->current || !ep->in_devmgr) {
                ncm__dp_snapshot_done(&s);
                return;
        }
        r = ncm_devmgr_update_devices(h->m, ep->resource, ep->dm_id, s.devices, s.n, &err);
        ncm__dp_snapshot_done(&s);
        snprintf(n, sizeof(n), "%zu", (size_t)ep->devices);
        if (r == -EINVAL) {
                ncm__dp_log(h, NCM_DP_WARN, "device plugin update refused", "resource",
                            ep->resource, "endpoint", ep->path, "error", err.msg);
                return;
        }
        if (r < 0 && r != -ESTALE)
                ncm__dp_log(h, NCM_DP_ERROR, "Writing checkpoint encountered", "resource",
                            ep->resource, "error", err.msg, NULL, NULL);
        if (r == -ESTALE)
                return;
        if (keep) {
                uint8_t *copy = malloc(len ? len : 1);
                if (copy) {
                        if (len)
                                memcpy(copy, data, len);
                        free(ep->snapshot);
                        ep->snapshot = copy;
                        ep->snapshot_len = len;
                }
        }
        ncm__dp_log(h, NCM_DP_DEBUG, "State pushed for device plugin", "resource", ep->resource,
                    "resourceCapacity", n, NULL, NULL);
        changed(h, ep->resource);
}

static void law_message(ncm_rpc_call *call, const uint8_t *msg, size_t len, void *data)
{
        dp_endpoint *ep = data;
        (void)call;
        if (ep->law_failed)
                return;
        ep_apply(ep, msg, len, true);
}

static void law_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                      const ncm_rpc_md *md, size_t n, void *data)
{
        dp_endpoint *ep = data;
        ncm_dp_host *h = ep->h;
        ncm_buf e = NCM_BUF_INIT;

        (void)call;
        (void)md;
        (void)n;
        ep->law_call = NULL;
        ncm__dp_count_call(h, DP_LIST_AND_WATCH, code);
        if (!ep->law_failed && !h->closing) {
                /* a stream that ends without an error is io.EOF to grpc-go's Recv */
                if (code == NCM_RPC_OK)
                        ncm_buf_puts(&e, "EOF");
                else
                        ncm__dp_rpc_error(&e, code, message, false);
                ncm__dp_log(h, NCM_DP_ERROR, "ListAndWatch ended unexpectedly for device plugin",
                            "resource", ep->resource, "endpoint", ep->path, "error", e.data);
        }
        ncm_buf_done(&e);
        ep_close_conn(ep);
        if (ep->current && ep->in_devmgr &&
            ncm_devmgr_plugin_disconnect(h->m, ep->resource, ep->dm_id) > 0) {
                ncm__dp_log(h, NCM_DP_INFO, "Endpoint became unhealthy", "resource", ep->resource,
                            "endpoint", ep->path, NULL, NULL);
                changed(h, ep->resource);
        }
        ep_maybe_free(ep);
}

static const ncm_rpc_client_ops law_ops = {.on_message = law_message, .on_close = law_close};

/* ---- registration: dial, options, connect ---- */

static void ep_connected(dp_endpoint *ep)
{
        ncm_dp_host *h = ep->h;
        ncm_error err = NCM_ERROR_INIT;
        dp_endpoint *old = NULL;
        int r;

        for (dp_endpoint *o = h->endpoints; o; o = o->next)
                if (o != ep && o->current && strcmp(o->resource, ep->resource) == 0)
                        old = o;
        r = ncm_devmgr_plugin_connect(h->m, ep->resource, &grpc_ops, ep, &ep->opts, &ep->dm_id,
                                      &err);
        if (r < 0) {
                ep_fail(ep, err.msg);
                return;
        }
        ep->in_devmgr = true;
        ep->current = true;
        ep->state = EP_RUNNING;
        if (old) {
                /* the device manager released it (grpc_release); it stays connected, unheard */
                old->current = false;
                if (old->state == EP_RUNNING)
                        ncm__dp_log(h, NCM_DP_INFO, "device plugin instance replaced", "resource",
                                    old->resource, "endpoint", old->path, "by", ep->path);
                ep_maybe_free(old);
        }
        r = ncm_rpc_conn_call(ncm_rpc_uv_client_conn(ep->cl), NCM_DP_LIST_AND_WATCH_PATH, NULL, 0,
                              0, (const uint8_t *)"", 0, &law_ops, ep, &ep->law_call, &err);
        ncm__dp_log(h, NCM_DP_INFO, "Device plugin connected", "resource", ep->resource, "endpoint",
                    ep->path, "options",
                    ep->opts.pre_start_required
                                    ? (ep->opts.get_preferred_allocation_available
                                                       ? "preStartRequired,getPreferredAllocation"
                                                       : "preStartRequired")
                                    : (ep->opts.get_preferred_allocation_available
                                                       ? "getPreferredAllocation"
                                                       : "none"));
        /* the kubelet answers Register before the first ListAndWatch message */
        ep_answer(ep, NCM_RPC_OK, NULL);
        changed(h, ep->resource);
        count_replaced(h);
        if (r < 0) {
                /* the connection broke at once: as a stream that ended */
                ncm__dp_log(h, NCM_DP_ERROR, "ListAndWatch ended unexpectedly for device plugin",
                            "resource", ep->resource, "endpoint", ep->path, "error", err.msg);
                ep_close_conn(ep);
                if (ncm_devmgr_plugin_disconnect(h->m, ep->resource, ep->dm_id) > 0)
                        changed(h, ep->resource);
        }
}

static void opts_message(ncm_rpc_call *call, const uint8_t *msg, size_t len, void *data)
{
        dp_endpoint *ep = data;
        (void)call;
        if (ep->opts_msg)
                return;
        ep->opts_msg = malloc(len ? len : 1);
        if (ep->opts_msg) {
                if (len)
                        memcpy(ep->opts_msg, msg, len);
                ep->opts_len = len;
        }
}

static void opts_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                       const ncm_rpc_md *md, size_t n, void *data)
{
        dp_endpoint *ep = data;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf e = NCM_BUF_INIT;

        (void)call;
        (void)md;
        (void)n;
        ep->opts_call = NULL;
        ncm__dp_count_call(ep->h, DP_OPTIONS, code);
        if (ep->state != EP_OPTIONS)
                return;
        if (code == NCM_RPC_OK && !ep->opts_msg) {
                code = NCM_RPC_INTERNAL;
                message = "grpc: the server sent no response message";
        }
        if (code == NCM_RPC_OK &&
            ncm__dp_options_decode(ep->opts_msg, ep->opts_len, &ep->opts, &err) < 0) {
                code = NCM_RPC_INTERNAL;
                message = err.msg;
        }
        if (code != NCM_RPC_OK) {
                ncm_buf_puts(&e, "failed to get device plugin options: ");
                ncm__dp_rpc_error(&e, code, message, true);
                ep_fail(ep, e.data ? e.data : "failed to get device plugin options");
                ncm_buf_done(&e);
                return;
        }
        ep_connected(ep);
}

static const ncm_rpc_client_ops opts_ops = {.on_message = opts_message, .on_close = opts_close};

static void ep_dial(dp_endpoint *ep);

static void dial_timer(uv_timer_t *t)
{
        dp_endpoint *ep = t->data;
        if (ep)
                ep_dial(ep);
}

static void ep_dial(dp_endpoint *ep)
{
        ncm_dp_host *h = ep->h;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t now = uv_now(h->loop);
        int r;

        r = ncm_rpc_uv_connect(h->loop, ep->path, &h->rpc, &ep->cl, &err);
        if (r < 0) {
                ep->cl = NULL;
                if (now >= ep->dial_deadline || r == -ENOMEM || !ep->timer) {
                        /* grpc-go's blocking dial reports its context's end */
                        ep_fail(ep, r == -ENOMEM ? "failed to dial device plugin: out of memory"
                                                 : "failed to dial device plugin: context "
                                                   "deadline exceeded");
                        return;
                }
                uv_timer_start(ep->timer, dial_timer, DIAL_RETRY_MS, 0);
                return;
        }
        ep->state = EP_OPTIONS;
        timer_drop(ep->timer);
        ep->timer = NULL;
        /* The kubelet sets no deadline here; nodecm gives the rest of the dial's 10 s (at
         * least one second), so a plugin that never answers cannot hold a registration. */
        r = ncm_rpc_conn_call(
                        ncm_rpc_uv_client_conn(ep->cl), NCM_DP_OPTIONS_PATH, NULL, 0,
                        (uint32_t)(ep->dial_deadline > now + 1000 ? ep->dial_deadline - now : 1000),
                        (const uint8_t *)"", 0, &opts_ops, ep, &ep->opts_call, &err);
        if (r < 0) {
                ncm_buf e = NCM_BUF_INIT;
                ncm_buf_printf(&e, "failed to get device plugin options: %s", err.msg);
                ep_fail(ep, e.data ? e.data : err.msg);
                ncm_buf_done(&e);
        }
}

static void reg_cancel(ncm_rpc_call *call, ncm_rpc_code code, void *data)
{
        dp_endpoint *ep = data;
        (void)code;
        /* The plugin stopped waiting; the kubelet goes on registering it all the same. */
        if (ep->reg_call == call) {
                ep->reg_call = NULL;
                ncm_rpc_call_finish(call, NCM_RPC_CANCELLED, NULL);
        }
        ep_maybe_free(ep);
}

static size_t registering(const ncm_dp_host *h)
{
        size_t n = 0;
        for (const dp_endpoint *ep = h->endpoints; ep; ep = ep->next)
                n += ep->state == EP_DIALING || ep->state == EP_OPTIONS;
        return n;
}

static void on_register(ncm_rpc_call *call, const uint8_t *req, size_t len, void *data)
{
        ncm_dp_host *h = data;
        ncm__dp_register reg = {0};
        ncm_error err = NCM_ERROR_INIT;
        dp_endpoint *ep;
        dp_stats *st;

        if (h->closing) {
                ncm_rpc_call_finish(call, NCM_RPC_UNAVAILABLE,
                                    "the device plugin host is stopping");
                return;
        }
        if (ncm__dp_register_decode(req, len, &reg, &err) < 0) {
                ncm__dp_log(h, NCM_DP_WARN, "Bad registration request from device plugin", "error",
                            err.msg, NULL, NULL, NULL, NULL);
                ncm_rpc_call_finish(call,
                                    err.code == ENOMEM ? NCM_RPC_RESOURCE_EXHAUSTED
                                                       : NCM_RPC_INTERNAL,
                                    err.msg);
                return;
        }
        ncm__dp_log(h, NCM_DP_INFO, "Got registration request from device plugin with resource",
                    "resourceName", reg.resource, "endpoint", reg.endpoint, "version", reg.version);
        /* counted before any check, as the kubelet counts */
        if ((st = ncm__dp_stats(h, reg.resource)))
                st->registrations++;
        if (ncm__dp_register_check(&reg, strlen(h->dir), &err) < 0) {
                ncm__dp_log(h, NCM_DP_ERROR, "Bad registration request from device plugin",
                            "resourceName", reg.resource, "endpoint", reg.endpoint, "error",
                            err.msg);
                ncm_rpc_call_finish(call, NCM_RPC_UNKNOWN, err.msg);
                ncm__dp_register_done(&reg);
                return;
        }
        if (registering(h) >= MAX_REGISTERING) {
                ncm__dp_log(h, NCM_DP_WARN,
                            "device plugin registration refused: too many in "
                            "progress",
                            "resourceName", reg.resource, NULL, NULL, NULL, NULL);
                ncm_rpc_call_finish(call, NCM_RPC_RESOURCE_EXHAUSTED,
                                    "too many device plugin registrations in progress; retry");
                ncm__dp_register_done(&reg);
                return;
        }
        ep = calloc(1, sizeof(*ep));
        if (ep) {
                ep->h = h;
                ep->serial = ++h->next_serial;
                ep->resource = NCM_TAKE_PTR(reg.resource);
                if (asprintf(&ep->path, "%s/%s", h->dir, reg.endpoint) < 0)
                        ep->path = NULL;
                ep->timer = timer_new(h, ep);
        }
        ncm__dp_register_done(&reg);
        if (!ep || !ep->path || !ep->timer) {
                if (ep) {
                        timer_drop(ep->timer);
                        free(ep->resource);
                        free(ep->path);
                        free(ep);
                }
                ncm_rpc_call_finish(call, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory");
                return;
        }
        ep->next = h->endpoints;
        h->endpoints = ep;
        ep->state = EP_DIALING;
        ep->reg_call = call;
        ep->dial_deadline = uv_now(h->loop) + h->dial_timeout_ms;
        ncm_rpc_call_set_ops(call, &(ncm_rpc_call_ops){.on_cancel = reg_cancel}, ep);
        ep_dial(ep);
}

/* ---- the device manager's plugin ops: release here, the calls in dp-session.c ---- */

static void grpc_release(void *data)
{
        dp_endpoint *ep = data;
        ep->in_devmgr = false;
        ep->current = false;
        /* freed later, by whoever holds it last (never from inside the device manager) */
        if (ep->state == EP_ENDED)
                ep->h->release_pending = true;
}

static const ncm_devmgr_plugin_ops grpc_ops = {
                .name = "grpc",
                .allocate = ncm__dp_op_allocate,
                .get_preferred_allocation = ncm__dp_op_preferred,
                .pre_start_container = ncm__dp_op_pre_start,
                .release = grpc_release,
};

/* Free the endpoints the device manager let go of (after a call into it returned). */
void ncm__dp_reap(ncm_dp_host *h)
{
        dp_endpoint *ep = h->endpoints, *next;

        if (!h->release_pending)
                return;
        h->release_pending = false;
        for (; ep; ep = next) {
                next = ep->next;
                ep_maybe_free(ep);
        }
}

/* ---- the directory ---- */

static int listen_socket(ncm_dp_host *h, ncm_error *err)
{
        struct stat st;
        int r = ncm_rpc_uv_listen(h->loop, h->srv, h->sock, h->socket_mode, &h->listener, err);
        if (r < 0)
                return r;
        if (stat(h->sock, &st) == 0) {
                h->sock_dev = st.st_dev;
                h->sock_ino = st.st_ino;
        }
        return 0;
}

static int cleanup_dir(ncm_dp_host *h, size_t *ret_removed, ncm_error *err);

/*
 * kubelet.sock is gone or another file: start over as a restarted kubelet does, so that every
 * kind of plugin registers again. The kubelet, starting, removes every socket in the
 * directory and listens anew; plugins are written for that: some watch for kubelet.sock being
 * created (NVIDIA's), others for their own socket disappearing (the kubelet's sample plugin,
 * generic-device-plugin) and then serve and register again. Connections already made stay up:
 * a plugin that watches nothing keeps serving its ListAndWatch stream, and one that registers
 * again replaces its endpoint as any new registration does (docs/devices.md).
 */
static void check_socket(ncm_dp_host *h)
{
        size_t removed = 0;
        char n[32];
        struct stat st;
        ncm_error err = NCM_ERROR_INIT;
        ncm_rpc_uv_server *old = h->listener;

        if (h->closing || !old)
                return;
        if (stat(h->sock, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == h->sock_ino &&
            st.st_dev == h->sock_dev)
                return;
        /* the old listener's close unlinks the path: close it first, then listen anew */
        h->listener = NULL;
        ncm_rpc_uv_server_close(old, true, NULL, NULL);
        if (cleanup_dir(h, &removed, &err) < 0) {
                ncm__dp_log(h, NCM_DP_ERROR, "could not remove the plugin sockets", "directory",
                            h->dir, "error", err.msg, NULL, NULL);
                err = (ncm_error)NCM_ERROR_INIT;
        }
        if (listen_socket(h, &err) < 0) {
                ncm__dp_log(h, NCM_DP_ERROR, "could not listen on the registration socket again",
                            "socket", h->sock, "error", err.msg, NULL, NULL);
                return;
        }
        snprintf(n, sizeof(n), "%zu", removed);
        ncm__dp_log(h, NCM_DP_INFO,
                    "registration socket re-created and plugin sockets removed, as at a kubelet "
                    "restart: plugins that watch either register again",
                    "socket", h->sock, "removed", n, NULL, NULL);
}

static void on_dir_event(uv_fs_event_t *w, const char *filename, int events, int status)
{
        ncm_dp_host *h = w->data;
        (void)events;
        if (!h || status < 0)
                return;
        if (!filename || strcmp(filename, NCM_DP_SOCKET_NAME) == 0)
                check_socket(h);
}

/* The kubelet's CleanupPluginDirectory: every socket but the checkpoint goes; *RET_REMOVED
 * (may be NULL) counts them. */
static int cleanup_dir(ncm_dp_host *h, size_t *ret_removed, ncm_error *err)
{
        DIR *d = opendir(h->dir);
        struct dirent *e;
        int r = 0;

        if (!d)
                return ncm_error_errno(err, errno, "open '%s'", h->dir);
        while ((e = readdir(d))) {
                char *p = NULL;
                struct stat st;
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
                    strcmp(e->d_name, NCM_DEVMGR_CHECKPOINT_NAME) == 0)
                        continue;
                if (asprintf(&p, "%s/%s", h->dir, e->d_name) < 0) {
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                        break;
                }
                /* os.Stat: follows a symlink; the link itself is what goes */
                if (stat(p, &st) == 0 && S_ISSOCK(st.st_mode)) {
                        if (unlink(p) == 0) {
                                if (ret_removed)
                                        (*ret_removed)++;
                        } else if (errno != ENOENT) {
                                r = ncm_error_errno(err, errno, "remove '%s'", p);
                        }
                }
                free(p);
                if (r < 0)
                        break;
        }
        closedir(d);
        return r;
}

static void capacity_tick(uv_timer_t *t)
{
        ncm_dp_host *h = t->data;
        ncm_devmgr_capacity cap = {0};
        ncm_error err = NCM_ERROR_INIT;
        int r;

        if (!h || h->closing)
                return;
        r = ncm_devmgr_get_capacity(h->m, &cap, &err);
        ncm__dp_reap(h);
        for (size_t i = 0; i < cap.n_deleted; i++) {
                ncm__dp_log(h, NCM_DP_INFO,
                            "resource removed: its plugin did not register again within the "
                            "grace period",
                            "resource", cap.deleted[i], NULL, NULL, NULL, NULL);
                changed(h, cap.deleted[i]);
        }
        if (r < 0)
                ncm__dp_log(h, NCM_DP_ERROR, "Writing checkpoint encountered", "error", err.msg,
                            NULL, NULL, NULL, NULL);
        ncm_devmgr_capacity_done(&cap);
}

/* ---- the host ---- */

int ncm_dp_host_new(uv_loop_t *loop, ncm_devmgr *m, const ncm_dp_host_opts *o,
                    const ncm_dp_host_events *ev, ncm_dp_host **ret, ncm_error *err)
{
        ncm_dp_host *h;
        size_t len;

        if (!o || !o->dir || !o->dir[0])
                return ncm_error_set(err, EINVAL, "device plugin host: no directory");
        h = calloc(1, sizeof(*h));
        if (!h)
                return ncm_error_set(err, ENOMEM, "out of memory");
        h->loop = loop;
        h->m = m;
        if (ev)
                h->ev = *ev;
        h->dir = strdup(o->dir);
        /* "dir/" and "dir" name the same directory */
        len = h->dir ? strlen(h->dir) : 0;
        while (len > 1 && h->dir[len - 1] == '/')
                h->dir[--len] = '\0';
        if (!h->dir || asprintf(&h->sock, "%s/%s", h->dir, NCM_DP_SOCKET_NAME) < 0) {
                free(h->dir);
                free(h);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        h->socket_mode = o->socket_mode ? o->socket_mode : 0600;
        h->dial_timeout_ms = o->dial_timeout_ms ? o->dial_timeout_ms : 10000;
        h->timeout_ms[DP_ALLOCATE] = o->allocate_timeout_ms ? o->allocate_timeout_ms : 30000;
        h->timeout_ms[DP_PREFERRED] = o->preferred_timeout_ms ? o->preferred_timeout_ms : 30000;
        h->timeout_ms[DP_PRE_START] = o->pre_start_timeout_ms
                                                      ? o->pre_start_timeout_ms
                                                      : NCM_DEVMGR_PRE_START_TIMEOUT_S * 1000;
        h->capacity_period_ms = o->capacity_period_ms ? o->capacity_period_ms : 10000;
        h->grace_ns = o->grace_period_ms ? (int64_t)o->grace_period_ms * 1000000 : 0;
        if (o->rpc)
                h->rpc = *o->rpc;
        else
                ncm_rpc_opts_default(&h->rpc);
        h->rpc.user_agent = NULL;
        h->srv = ncm_rpc_server_new(&h->rpc);
        if (!h->srv || ncm_rpc_server_add(h->srv, NCM_DP_REGISTER_PATH, on_register, h) < 0) {
                ncm_rpc_server_free(h->srv);
                free(h->dir);
                free(h->sock);
                free(h);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        if (m)
                ncm_devmgr_set_stop_grace(m, h->grace_ns);
        *ret = h;
        return 0;
}

int ncm_dp_host_start(ncm_dp_host *h, ncm_error *err)
{
        int r;

        if (mkdir(h->dir, 0750) < 0 && errno != EEXIST)
                return ncm_error_errno(err, errno, "create '%s'", h->dir);
        r = cleanup_dir(h, NULL, err);
        if (r < 0)
                return r;
        r = listen_socket(h, err);
        if (r < 0)
                return r;
        h->watch = malloc(sizeof(*h->watch));
        if (h->watch) {
                uv_fs_event_init(h->loop, h->watch);
                h->watch->data = h;
                if (uv_fs_event_start(h->watch, on_dir_event, h->dir, 0) < 0) {
                        h->watch->data = NULL;
                        uv_close((uv_handle_t *)h->watch, free_handle);
                        h->watch = NULL;
                }
        }
        if (!h->watch)
                ncm__dp_log(h, NCM_DP_WARN,
                            "cannot watch the device plugin directory: kubelet.sock will not be "
                            "re-created when deleted",
                            "directory", h->dir, NULL, NULL, NULL, NULL);
        h->capacity = timer_new(h, h);
        if (h->capacity)
                uv_timer_start(h->capacity, capacity_tick, h->capacity_period_ms,
                               h->capacity_period_ms);
        ncm__dp_log(h, NCM_DP_INFO, "device plugin registration server listening", "socket",
                    h->sock, NULL, NULL, NULL, NULL);
        return 0;
}

void ncm_dp_host_attach(ncm_dp_host *h, ncm_devmgr *m)
{
        ncm_error err = NCM_ERROR_INIT;

        if (m == h->m)
                return;
        h->m = m;
        ncm_devmgr_set_stop_grace(m, h->grace_ns);
        for (dp_endpoint *ep = h->endpoints; ep; ep = ep->next) {
                /* the newest running instance of each resource registers again */
                bool newest = true;
                if (ep->state != EP_RUNNING)
                        continue;
                for (dp_endpoint *o = h->endpoints; o; o = o->next)
                        if (o != ep && o->state == EP_RUNNING && o->serial > ep->serial &&
                            strcmp(o->resource, ep->resource) == 0)
                                newest = false;
                ep->current = false;
                ep->in_devmgr = false;
                if (!newest)
                        continue;
                if (ncm_devmgr_plugin_connect(m, ep->resource, &grpc_ops, ep, &ep->opts, &ep->dm_id,
                                              &err) < 0) {
                        ncm__dp_log(h, NCM_DP_ERROR, "device plugin lost at a restart", "resource",
                                    ep->resource, "error", err.msg, NULL, NULL);
                        continue;
                }
                ep->in_devmgr = ep->current = true;
                if (ep->snapshot)
                        ep_apply(ep, ep->snapshot, ep->snapshot_len, false);
                changed(h, ep->resource);
        }
        ncm__dp_reap(h);
}

/* One of the host's handles (or its listener) has closed; the last one frees the host. */
static void host_done(ncm_dp_host *h)
{
        if (--h->handles > 0)
                return;
        if (h->on_closed)
                h->on_closed(h->closed_data);
        for (size_t i = 0; i < h->n_stats; i++)
                free(h->stats[i].resource);
        free(h->stats);
        ncm_rpc_server_free(h->srv);
        free(h->dir);
        free(h->sock);
        free(h);
}

static void host_handle_closed(uv_handle_t *hd)
{
        ncm_dp_host *h = hd->data;
        free(hd);
        host_done(h);
}

static void listener_closed(void *data)
{
        host_done(data);
}

void ncm_dp_host_close(ncm_dp_host *h, void (*on_closed)(void *data), void *data)
{
        if (h->closing)
                return;
        h->closing = true;
        h->on_closed = on_closed;
        h->closed_data = data;
        ncm__dp_sessions_orphan(h);
        /* every endpoint goes: the device manager forgets its ops, its connection closes */
        while (h->endpoints) {
                dp_endpoint *ep = h->endpoints;
                if (ep->in_devmgr && h->m)
                        (void)ncm_devmgr_plugin_detach(h->m, ep->resource, ep->dm_id);
                ep->in_devmgr = false;
                ep_answer(ep, NCM_RPC_UNAVAILABLE, "the device plugin host is stopping");
                ep_close_conn(ep);
                ep_free(ep);
        }
        /* handles: the capacity timer, the watch, and the listener (counted as one) */
        h->handles = 1;
        if (h->capacity) {
                h->handles++;
                uv_timer_stop(h->capacity);
                h->capacity->data = h;
                uv_close((uv_handle_t *)h->capacity, host_handle_closed);
        }
        if (h->watch) {
                h->handles++;
                uv_fs_event_stop(h->watch);
                h->watch->data = h;
                uv_close((uv_handle_t *)h->watch, host_handle_closed);
        }
        if (h->listener) {
                ncm_rpc_uv_server_close(h->listener, false, listener_closed, h);
                h->listener = NULL;
        } else {
                listener_closed(h);
        }
}

static int cmp_info(const void *a, const void *b)
{
        const ncm_dp_plugin_info *x = a, *y = b;
        return strcmp(x->resource, y->resource);
}

int ncm_dp_host_plugins(const ncm_dp_host *h, ncm_dp_plugin_info **ret, size_t *ret_n)
{
        size_t n = 0, k = 0;
        ncm_dp_plugin_info *v;

        for (const dp_endpoint *ep = h->endpoints; ep; ep = ep->next)
                n++;
        v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        /* the list is newest first: fill from the end so that older come first */
        for (const dp_endpoint *ep = h->endpoints; ep; ep = ep->next) {
                ncm_dp_plugin_info *i = &v[n - 1 - k++];
                i->resource = ep->resource;
                i->socket = ep->path;
                i->state = ep_state_name(ep);
                i->current = ep->current;
                i->snapshots = ep->snapshots;
                i->devices = ep->devices;
        }
        if (n > 1)
                qsort(v, n, sizeof(*v), cmp_info); /* stable enough: ties keep no order */
        *ret = v;
        *ret_n = n;
        return 0;
}
