/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control API service: nodecm.v1.Node on DIR/nodecm.sock (0600). Each call becomes one job
 * on the node's queue, handled by lib/ctl exactly as `nodecm node` handles it in-process; Watch
 * calls receive every event the other calls produce, in order.
 *
 * Bounds: requests waiting in the queue hold at most QUEUED_BYTES_MAX bytes (beyond, callers
 * get RESOURCE_EXHAUSTED and may retry); at most WATCHERS_MAX watch streams; a watcher that
 * lets a megabyte of events pile up is ended (RESOURCE_EXHAUSTED) rather than buffered for.
 */
#include <errno.h>
#include <malloc.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "nodecmd.h"

/* A call that leaves more than this free in the heap gives it back (malloc_trim): a pod of a
 * thousand containers does, ordinary calls on a node of a hundred pods stay below. */
#define TRIM_AFTER (1u << 20)
#define QUEUED_BYTES_MAX (64u << 20)
#define WATCHERS_MAX 256

typedef struct control control;

typedef struct pending {
        control *c;
        ncm_rpc_call *call;
        nodecmd_job *job;
        ncm_ctl_method method;
        uint8_t *req;
        size_t len;
        uint64_t t_received;
        /* the call hook's context (nodecmd_call_hook), and whether the call waits for it */
        const nodecmd_call_hook *hook;
        void *hook_data;
        void *hook_ctx;
        bool waiting;   /* given the node back; the hook will call retry() */
        bool abandoned; /* its caller went away while it waited */
        /* done, its answer held until the group commit makes it durable */
        bool held;
        ncm_buf reply, event;
} pending;

typedef struct watcher {
        struct watcher *next;
        control *c;
        ncm_rpc_call *call;
} watcher;

struct control {
        nodecmd *d;
        char *path;
        ncm_rpc_server *srv;
        ncm_rpc_uv_server *listener;
        watcher *watchers;
        size_t n_watchers;
        size_t queued_bytes;
        bool each; /* nodecmd.commit: each (no group commit) */
        /* calls by method and status code, for nodecm_grpc_server_handled_total */
        uint64_t handled[NCM_CTL_N_METHODS][17];
        bool stopping;
};

static void count(control *c, ncm_ctl_method m, ncm_rpc_code code)
{
        if ((unsigned)m < NCM_CTL_N_METHODS && (unsigned)code <= 16)
                c->handled[m][code]++;
}

static void finish(control *c, ncm_rpc_call *call, ncm_ctl_method m, ncm_rpc_code code,
                   const char *msg)
{
        count(c, m, code);
        ncm_rpc_call_finish(call, code, msg);
}

static void pending_free(pending *p)
{
        if (p->hook && p->hook->done)
                p->hook->done(p->hook_data, p->hook_ctx);
        p->c->queued_bytes -= p->len;
        ncm_buf_done(&p->reply);
        ncm_buf_done(&p->event);
        free(p->req);
        free(p);
}

/* ---- watch --------------------------------------------------------------------------------- */

static void watcher_remove(control *c, watcher *w)
{
        for (watcher **p = &c->watchers; *p; p = &(*p)->next)
                if (*p == w) {
                        *p = w->next;
                        c->n_watchers--;
                        break;
                }
        free(w);
}

static void watch_cancel(ncm_rpc_call *call, ncm_rpc_code code, void *data)
{
        watcher *w = data;
        control *c = w->c;

        finish(c, call, NCM_CTL_WATCH, NCM_RPC_CANCELLED, NULL);
        watcher_remove(c, w);
}

static void broadcast(control *c, const uint8_t *ev, size_t len)
{
        watcher *w = c->watchers;

        while (w) {
                watcher *next = w->next;
                int r = ncm_rpc_call_send(w->call, ev, len);
                if (r == 1 || r < 0) {
                        /* above a megabyte behind (or gone): end it rather than buffer more */
                        nodecmd_log(c->d, NODECMD_WARN, "watch ended", "reason=%s",
                                    nodecmd_q(c->d, 0,
                                              r < 0 ? strerror(-r)
                                                    : "the client does not keep up"));
                        finish(c, w->call, NCM_CTL_WATCH, NCM_RPC_RESOURCE_EXHAUSTED,
                               "watch: the client does not keep up; reconnect and re-read the "
                               "state");
                        watcher_remove(c, w);
                }
                w = next;
        }
}

static void start_watch(control *c, ncm_rpc_call *call, const uint8_t *req, size_t len)
{
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        ncm_error err = NCM_ERROR_INIT;
        watcher *w;

        if (ncm_ctl_handle(nodecmd_target(c->d), NCM_CTL_WATCH, req, len, &res, &err) < 0) {
                finish(c, call, NCM_CTL_WATCH, NCM_RPC_INVALID_ARGUMENT, err.msg);
                return;
        }
        ncm_ctl_result_done(&res);
        if (c->stopping) {
                finish(c, call, NCM_CTL_WATCH, NCM_RPC_UNAVAILABLE, "nodecmd is stopping");
                return;
        }
        if (c->n_watchers >= WATCHERS_MAX) {
                finish(c, call, NCM_CTL_WATCH, NCM_RPC_RESOURCE_EXHAUSTED, "too many watchers");
                return;
        }
        w = calloc(1, sizeof(*w));
        if (!w) {
                finish(c, call, NCM_CTL_WATCH, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory");
                return;
        }
        w->c = c;
        w->call = call;
        w->next = c->watchers;
        c->watchers = w;
        c->n_watchers++;
        ncm_rpc_call_set_ops(call, &(ncm_rpc_call_ops){.on_cancel = watch_cancel}, w);
        /* the client learns at once that it is watching */
        (void)ncm_rpc_call_send_headers(call);
}

/* ---- unary calls --------------------------------------------------------------------------- */

static void run_call(nodecmd *d, nodecmd_job *job, void *data);

/* The hook has its answers: queue the call again (or drop it, if its caller left). */
static void retry_call(void *arg)
{
        pending *p = arg;

        p->waiting = false;
        if (p->abandoned) {
                finish(p->c, p->call, p->method, NCM_RPC_CANCELLED, NULL);
                pending_free(p);
                return;
        }
        p->job = nodecmd_submit(p->c->d, ncm_ctl_method_name(p->method), run_call, p);
        if (!p->job) {
                finish(p->c, p->call, p->method, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory");
                pending_free(p);
        }
}

/* The group commit made P's change durable (R 0), or could not (MSG): its answer goes out. */
static void release_call(nodecmd *d, int r, const char *msg, void *data)
{
        pending *p = data;
        control *c = p->c;

        (void)d;
        if (p->abandoned) {
                finish(c, p->call, p->method, NCM_RPC_CANCELLED, NULL);
        } else if (r < 0) {
                finish(c, p->call, p->method, NCM_RPC_UNAVAILABLE, msg);
        } else {
                int s = ncm_rpc_call_send(p->call, (const uint8_t *)p->reply.data, p->reply.len);
                finish(c, p->call, p->method, s < 0 ? NCM_RPC_INTERNAL : NCM_RPC_OK,
                       s < 0 ? strerror(-s) : NULL);
        }
        /* watchers hear of it once it is durable too, in commit order */
        if (r >= 0 && p->event.len)
                broadcast(c, (const uint8_t *)p->event.data, p->event.len);
        pending_free(p);
}

static void run_call(nodecmd *d, nodecmd_job *job, void *data)
{
        pending *p = data;
        control *c = p->c;
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        ncm_error err = NCM_ERROR_INIT;
        nodecmd_change ch = {.method = p->method, .res = &res};
        ncm_buf ev = NCM_BUF_INIT;
        uint64_t t0 = nodecmd_now_ns();
        int r;

        p->job = NULL;
        if (ncm_rpc_call_is_cancelled(p->call)) {
                /* the client gave up while waiting: the call is not made */
                finish(c, p->call, p->method, NCM_RPC_CANCELLED, NULL);
                pending_free(p);
                nodecmd_job_done(d, job);
                return;
        }
        if (p->hook && p->hook->enter)
                p->hook_ctx = p->hook->enter(p->hook_data, p->method, p->hook_ctx);
        /* the node's commits of this call are group commits: answered after the sync */
        ncm_node_defer_sync(nodecmd_target(d)->node, !c->each);
        r = ncm_ctl_handle(nodecmd_target(d), p->method, p->req, p->len, &res, &err);
        ncm_node_defer_sync(nodecmd_target(d)->node, false);
        if (p->hook && p->hook->leave &&
            p->hook->leave(p->hook_data, p->hook_ctx, r, retry_call, p)) {
                /* answers from elsewhere are needed: the node goes back to the others, the
                 * caller waits, and the call runs again when the hook says so */
                ncm_ctl_result_done(&res);
                p->waiting = true;
                nodecmd_job_done(d, job);
                return;
        }
        ch.duration_ns = nodecmd_now_ns() - t0;
        ch.error = r < 0 ? r : 0;
        if (r < 0) {
                char code[16];
                ncm_rpc_code st = (ncm_rpc_code)ncm_ctl_status_of_error(err.code ? err.code : -r);
                snprintf(code, sizeof(code), "%d", err.code ? err.code : -r);
                (void)ncm_rpc_call_add_metadata(p->call, true, NCM_CTL_ERROR_CODE_MD, code);
                nodecmd_log(d, st == NCM_RPC_INVALID_ARGUMENT ? NODECMD_INFO : NODECMD_WARN,
                            "call failed", "method=%s code=%s error=%s",
                            ncm_ctl_method_name(p->method), ncm_rpc_code_name(st),
                            nodecmd_q(d, 0, err.msg));
                finish(c, p->call, p->method, st, err.msg);
        } else if (ncm_node_unsynced(nodecmd_target(d)->node)) {
                /* committed, not yet durable: answered by the group commit (release_call) */
                if (res.event.len) {
                        ch.sequence = nodecmd_next_sequence(d);
                        (void)ncm_ctl_event_sequence((const uint8_t *)res.event.data, res.event.len,
                                                     ch.sequence, &p->event);
                }
                ncm_buf_append(&p->reply, res.reply.data, res.reply.len);
                if (ncm_buf_failed(&p->reply) || ncm_buf_failed(&p->event) ||
                    !nodecmd_when_durable(d, release_call, p)) {
                        /* cannot wait: synced now, alone */
                        ncm_error e = NCM_ERROR_INIT;
                        int s = ncm_node_sync(nodecmd_target(d)->node, &e);
                        ncm_buf_done(&p->reply);
                        ncm_buf_done(&p->event);
                        finish(c, p->call, p->method,
                               s < 0 ? NCM_RPC_UNAVAILABLE : NCM_RPC_INTERNAL,
                               s < 0 ? e.msg : "out of memory");
                        pending_free(p);
                } else {
                        p->held = true;
                }
        } else {
                int s = ncm_rpc_call_send(p->call, (const uint8_t *)res.reply.data, res.reply.len);
                finish(c, p->call, p->method, s < 0 ? NCM_RPC_INTERNAL : NCM_RPC_OK,
                       s < 0 ? strerror(-s) : NULL);
                if (res.event.len) {
                        ch.sequence = nodecmd_next_sequence(d);
                        if (ncm_ctl_event_sequence((const uint8_t *)res.event.data, res.event.len,
                                                   ch.sequence, &ev) >= 0)
                                broadcast(c, (const uint8_t *)ev.data, ev.len);
                }
        }
        nodecmd_changed(d, &ch);
        ncm_buf_done(&ev);
        ncm_ctl_result_done(&res);
        if (!p->held)
                pending_free(p);
        /*
         * A pod of thousands of containers, admitted or removed, leaves tens of MB free in the
         * heap, which glibc keeps for the next allocation: given back at once, so that one big
         * pod does not leave the daemon at its peak for good. Ordinary calls free far less and
         * pay only the count.
         */
        if (mallinfo2().fordblks > TRIM_AFTER)
                (void)malloc_trim(0);
        nodecmd_job_done(d, job);
}

static void call_cancel(ncm_rpc_call *call, ncm_rpc_code code, void *data)
{
        pending *p = data;

        /* waiting for the hook: it still calls retry(), which drops the call then; held for
         * the group commit: release_call() does */
        if (p->waiting || p->held) {
                p->abandoned = true;
                return;
        }
        /* still waiting: withdraw it; running jobs see the cancellation themselves */
        if (p->job && nodecmd_withdraw(p->c->d, p->job)) {
                finish(p->c, call, p->method, NCM_RPC_CANCELLED, NULL);
                pending_free(p);
        }
}

static void on_call(ncm_rpc_call *call, const uint8_t *req, size_t len, void *data)
{
        control *c = data;
        int m = ncm_ctl_method_from_path(ncm_rpc_call_path(call));
        pending *p;

        if (m < 0) {
                ncm_rpc_call_finish(call, NCM_RPC_UNIMPLEMENTED, "unknown method");
                return;
        }
        if (m == NCM_CTL_WATCH) {
                start_watch(c, call, req, len);
                return;
        }
        if (c->stopping) {
                finish(c, call, (ncm_ctl_method)m, NCM_RPC_UNAVAILABLE, "nodecmd is stopping");
                return;
        }
        if (c->queued_bytes + len > QUEUED_BYTES_MAX) {
                finish(c, call, (ncm_ctl_method)m, NCM_RPC_RESOURCE_EXHAUSTED,
                       "nodecmd is busy: too many requests waiting; retry");
                return;
        }
        p = calloc(1, sizeof(*p));
        if (p)
                p->req = malloc(len ? len : 1);
        if (!p || !p->req) {
                if (p)
                        free(p);
                finish(c, call, (ncm_ctl_method)m, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory");
                return;
        }
        if (len)
                memcpy(p->req, req, len);
        p->len = len;
        p->c = c;
        p->call = call;
        p->method = (ncm_ctl_method)m;
        p->t_received = nodecmd_now_ns();
        p->hook = nodecmd_call_hook_get(c->d, &p->hook_data);
        c->queued_bytes += len;
        ncm_rpc_call_set_ops(call, &(ncm_rpc_call_ops){.on_cancel = call_cancel}, p);
        p->job = nodecmd_submit(c->d, ncm_ctl_method_name(p->method), run_call, p);
        if (!p->job) {
                finish(c, call, p->method, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory");
                pending_free(p);
        }
}

/* ---- the service --------------------------------------------------------------------------- */

static int control_start(nodecmd *d, void **ret, ncm_error *err)
{
        control *c = calloc(1, sizeof(*c));
        ncm_rpc_opts o;
        int r;

        if (!c)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = c;
        c->d = d;
        nodecmd_rpc_opts(d, &o);
        /*
         * What a node reads of a pod is small: the largest request is one the daemon answers in
         * well under 100 ms, its only thread not held up (NCM_CTL_REQUEST_MAX).
         */
        o.max_recv_msg = NCM_CTL_REQUEST_MAX;
        r = nodecmd_socket_path(d, "controlSocket", "nodecm.sock", &c->path, err);
        if (r < 0)
                return r;
        c->srv = ncm_rpc_server_new(&o);
        if (!c->srv)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (int m = 0; m < NCM_CTL_N_METHODS; m++) {
                const char *path = ncm_ctl_method_path((ncm_ctl_method)m);
                /* Watch streams events; every other method answers one message (lib/rpc
                 * holds them to it) */
                r = m == NCM_CTL_WATCH ? ncm_rpc_server_add_streaming(c->srv, path, on_call, c)
                                       : ncm_rpc_server_add(c->srv, path, on_call, c);
                if (r < 0)
                        return ncm_error_set(err, -r, "control API: %s", strerror(-r));
        }
        r = ncm_rpc_uv_listen(nodecmd_loop(d), c->srv, c->path, 0600, &c->listener, err);
        if (r < 0)
                return r;
        nodecmd_log(d, NODECMD_INFO, "control API listening", "socket=%s",
                    nodecmd_q(d, 0, c->path));
        {
                const char *m = nodecmd_section_string(d, "commit");
                c->each = m && strcmp(m, "each") == 0;
        }
        return 0;
}

static void control_closed(void *data)
{
        control *c = data;

        c->listener = NULL;
        nodecmd_service_stopped(c->d, c);
}

static void control_stop(void *data)
{
        control *c = data;

        c->stopping = true;
        /* watch streams end now (OK: the daemon stops); unary calls in flight finish */
        while (c->watchers) {
                watcher *w = c->watchers;
                finish(c, w->call, NCM_CTL_WATCH, NCM_RPC_OK, NULL);
                watcher_remove(c, w);
        }
        if (c->listener)
                ncm_rpc_uv_server_close(c->listener, true, control_closed, c);
        else
                nodecmd_service_stopped(c->d, c);
}

static void control_free(void *data)
{
        control *c = data;

        if (!c)
                return;
        while (c->watchers) {
                watcher *w = c->watchers;
                c->watchers = w->next;
                free(w);
        }
        ncm_rpc_server_free(c->srv);
        free(c->path);
        free(c);
}

static void control_metrics(void *data, ncm_buf *out)
{
        control *c = data;

        ncm_buf_puts(out, "# HELP nodecm_grpc_server_handled_total Calls of nodecmd's gRPC "
                          "services completed, by method and status code.\n"
                          "# TYPE nodecm_grpc_server_handled_total counter\n");
        for (int m = 0; m < NCM_CTL_N_METHODS; m++)
                for (int k = 0; k <= 16; k++)
                        if (c->handled[m][k])
                                ncm_buf_printf(out,
                                               "nodecm_grpc_server_handled_total{grpc_service=\""
                                               "%s\",grpc_method=\"%s\",grpc_code=\"%s\"} %" PRIu64
                                               "\n",
                                               NCM_CTL_SERVICE,
                                               ncm_ctl_method_name((ncm_ctl_method)m),
                                               ncm_rpc_code_name(k), c->handled[m][k]);
        ncm_buf_printf(out,
                       "# HELP nodecm_control_watchers Watch streams open on the control API.\n"
                       "# TYPE nodecm_control_watchers gauge\n"
                       "nodecm_control_watchers %zu\n",
                       c->n_watchers);
        {
                uint64_t syncs, calls;
                nodecmd_group_commits(c->d, &syncs, &calls);
                ncm_buf_printf(out,
                               "# HELP nodecm_journal_syncs_total Group commits: fdatasyncs of "
                               "the node's journal that acknowledged calls.\n"
                               "# TYPE nodecm_journal_syncs_total counter\n"
                               "nodecm_journal_syncs_total %" PRIu64 "\n"
                               "# HELP nodecm_journal_synced_calls_total Calls those group "
                               "commits acknowledged.\n"
                               "# TYPE nodecm_journal_synced_calls_total counter\n"
                               "nodecm_journal_synced_calls_total %" PRIu64 "\n",
                               syncs, calls);
        }
}

const nodecmd_service_ops nodecmd_control_service = {
                .name = "control",
                .start = control_start,
                .stop = control_stop,
                .free = control_free,
                .metrics = control_metrics,
};
