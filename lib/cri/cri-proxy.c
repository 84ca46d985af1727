/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI proxy: serves runtime.v1.RuntimeService and ImageService on its socket and forwards
 * every call to the runtime (containerd, CRI-O) unchanged: the request's bytes and metadata, its
 * deadline, each response message (server-streaming calls included, with flow control: a slow
 * client pauses the runtime's stream), the response headers and trailers, and the status. Any
 * method it does not know is forwarded the same way, so a newer kubelet or runtime keeps
 * working.
 *
 * The calls nodecm acts on are intercepted around the forwarding, through the owner's ops
 * (nodecm/cri.h): RunPodSandbox and CreateContainer are decoded; a CreateContainer waits for the
 * owner's decision (admit with a patch, or refuse with the kubelet's text) before it is
 * forwarded; the runtime's answer to it, RemoveContainer and RemovePodSandbox are reported;
 * UpdateContainerResources waits for the owner's decision too (an in-place resize: forwarded
 * with the new cpusets, or refused) or, without one, gets the owner's cpusets.
 *
 * One connection to the runtime serves every call; when it breaks (the runtime restarted) the
 * next call opens another. Calls made while the runtime cannot be reached end with UNAVAILABLE,
 * as grpc-go's do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cri.h>
#include <nodecm/rpc-uv.h>
#include "cri-internal.h"

typedef struct relay relay;

struct ncm_cri_proxy {
        uv_loop_t *loop;
        ncm_rpc_server *srv;
        ncm_rpc_uv_server *listener;
        char *endpoint;
        ncm_rpc_opts opts;
        ncm_rpc_uv_client *up;
        const ncm_cri_proxy_ops *ops;
        void *data;
        relay *relays; /* calls in flight, a list */
        bool closing;
        void (*on_closed)(void *data);
        void *closed_data;
        ncm_cri_proxy_stats stats;
};

struct ncm_cri_ticket {
        relay *r;
        void *data;
};

/* One call from a client, forwarded. */
struct relay {
        ncm_cri_proxy *p;
        relay *prev, *next;
        ncm_rpc_call *down; /* the client's call (ours to finish) */
        ncm_rpc_call *up;   /* the runtime's call (NULL: none, or closed) */
        int method;         /* an intercepted ncm_cri_method, or -1 */
        char *path;
        uint8_t *req; /* the request, kept while a decision is pending */
        size_t req_len;
        bool down_gone; /* the client went away */
        bool paused;
        bool got_reply; /* intercepted: the first response message */
        uint8_t *reply;
        size_t reply_len;
        char *id;              /* RemoveContainer, RemovePodSandbox, UpdateContainerResources */
        ncm_cri_ticket ticket; /* CreateContainer, UpdateContainerResources */
        bool ticket_open;      /* the owner holds the ticket (decision or report pending) */
};

static void relay_free(relay *r)
{
        ncm_cri_proxy *p = r->p;

        if (r->prev)
                r->prev->next = r->next;
        else
                p->relays = r->next;
        if (r->next)
                r->next->prev = r->prev;
        free(r->path);
        free(r->req);
        free(r->reply);
        free(r->id);
        free(r);
}

/* The client's call ends with CODE and MESSAGE; the relay goes when nothing else holds it. */
static void finish(relay *r, ncm_rpc_code code, const char *message)
{
        if (r->down) {
                ncm_rpc_call_finish(r->down, code, message);
                r->down = NULL;
        }
        if (!r->up && !r->ticket_open)
                relay_free(r);
}

/* ---- the runtime's side ----------------------------------------------------------------- */

static ncm_rpc_conn *upstream(ncm_cri_proxy *p, ncm_error *err)
{
        int r;

        if (p->up && ncm_rpc_conn_usable(ncm_rpc_uv_client_conn(p->up)))
                return ncm_rpc_uv_client_conn(p->up);
        if (p->up) {
                ncm_rpc_uv_client_close(p->up);
                p->up = NULL;
        }
        r = ncm_rpc_uv_connect(p->loop, p->endpoint, &p->opts, &p->up, err);
        if (r < 0) {
                p->up = NULL;
                return NULL;
        }
        p->stats.connects++;
        return ncm_rpc_uv_client_conn(p->up);
}

static void up_headers(ncm_rpc_call *call, const ncm_rpc_md *md, size_t n, void *data)
{
        relay *r = data;

        (void)call;
        for (size_t i = 0; r->down && i < n; i++)
                (void)ncm_rpc_call_add_metadata(r->down, false, md[i].key, md[i].value);
}

static void up_message(ncm_rpc_call *call, const uint8_t *msg, size_t len, void *data)
{
        relay *r = data;
        int rc;

        if (r->method >= 0 && !r->got_reply) {
                /* an intercepted call's reply is read after the call closes */
                r->got_reply = true;
                r->reply = malloc(len ? len : 1);
                if (r->reply && len)
                        memcpy(r->reply, msg, len);
                r->reply_len = r->reply ? len : 0;
        }
        if (!r->down || r->down_gone)
                return;
        rc = ncm_rpc_call_send(r->down, msg, len);
        if (rc == 1 && !r->paused) {
                /* the client reads slower than the runtime writes: stop granting it credit */
                r->paused = true;
                ncm_rpc_call_pause(call, true);
        } else if (rc < 0 && rc != -EPIPE) {
                ncm_rpc_call_cancel(call);
        }
}

static void report(relay *r, ncm_rpc_code code);

static void up_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                     const ncm_rpc_md *md, size_t n, void *data)
{
        relay *r = data;

        (void)call;
        r->up = NULL;
        for (size_t i = 0; r->down && i < n; i++)
                (void)ncm_rpc_call_add_metadata(r->down, true, md[i].key, md[i].value);
        if (code != NCM_RPC_OK)
                r->p->stats.failed++;
        report(r, code);
        finish(r, code, message);
}

static void down_cancel(ncm_rpc_call *call, ncm_rpc_code code, void *data)
{
        relay *r = data;

        (void)call;
        (void)code;
        r->down_gone = true;
        /*
         * A call the owner acts on runs to its end at the runtime, so that what nodecm records
         * is what the runtime did (a CreateContainer the runtime completed is a container
         * that exists); anything else is cancelled there too.
         */
        if (r->up && r->method < 0)
                ncm_rpc_call_cancel(r->up);
}

static void down_writable(ncm_rpc_call *call, void *data)
{
        relay *r = data;

        (void)call;
        if (r->paused && r->up) {
                r->paused = false;
                ncm_rpc_call_pause(r->up, false);
        }
}

/* Forward REQ on R's path to the runtime. On failure the client's call ends UNAVAILABLE. */
static void forward(relay *r, const uint8_t *req, size_t len)
{
        static const ncm_rpc_client_ops ops = {
                        .on_headers = up_headers, .on_message = up_message, .on_close = up_close};
        ncm_error err = NCM_ERROR_INIT;
        ncm_rpc_conn *c;
        const ncm_rpc_md *md = NULL;
        size_t n_md = 0;
        int64_t left = -1;
        int rc;

        if (r->down) {
                md = ncm_rpc_call_metadata(r->down, &n_md);
                left = ncm_rpc_call_timeout_left(r->down);
        }
        if (left == 0) {
                report(r, NCM_RPC_DEADLINE_EXCEEDED);
                finish(r, NCM_RPC_DEADLINE_EXCEEDED, "Deadline Exceeded");
                return;
        }
        c = upstream(r->p, &err);
        rc = c ? ncm_rpc_conn_call(c, r->path, md, n_md, left > 0 ? (uint32_t)left : 0, req, len,
                                   &ops, r, &r->up, &err)
               : -ENOTCONN;
        if (rc < 0) {
                char msg[NCM_ERROR_MSG_MAX + 64];
                /* grpc-go's words for a runtime it cannot dial */
                snprintf(msg, sizeof(msg),
                         "connection error: desc = \"transport: Error while dialing: %s\"",
                         err.msg[0] ? err.msg : "the runtime's connection is closing");
                r->up = NULL;
                r->p->stats.unavailable++;
                report(r, NCM_RPC_UNAVAILABLE);
                finish(r, NCM_RPC_UNAVAILABLE, msg);
                return;
        }
        r->p->stats.forwarded++;
}

/* ---- interception ------------------------------------------------------------------------ */

/* Tell the owner what the runtime answered, for the calls it acts on. */
static void report(relay *r, ncm_rpc_code code)
{
        ncm_cri_proxy *p = r->p;
        const ncm_cri_proxy_ops *ops = p->ops;
        char *id = NULL;

        if (!ops || r->method < 0)
                return;
        switch (r->method) {
        case NCM_CRI_RUN_POD_SANDBOX:
                if (code == NCM_RPC_OK && ops->sandbox_ran &&
                    ncm_cri_decode_id(r->reply, r->reply_len, &id, NULL) == 0) {
                        ncm_cri_sandbox_config cfg;
                        if (ncm_cri_decode_run_pod_sandbox(r->req, r->req_len, &cfg, NULL) == 0) {
                                ops->sandbox_ran(p->data, id, &cfg);
                                ncm_cri_sandbox_config_done(&cfg);
                        }
                }
                break;
        case NCM_CRI_CREATE_CONTAINER:
                if (!r->ticket_open)
                        break;
                if (code == NCM_RPC_OK && ncm_cri_decode_id(r->reply, r->reply_len, &id, NULL) < 0)
                        id = NULL;
                r->ticket_open = false;
                if (ops->container_created)
                        ops->container_created(p->data, &r->ticket, code == NCM_RPC_OK ? id : NULL);
                break;
        case NCM_CRI_REMOVE_CONTAINER:
                if (code == NCM_RPC_OK && ops->container_removed && r->id)
                        ops->container_removed(p->data, r->id);
                break;
        case NCM_CRI_REMOVE_POD_SANDBOX:
                if (code == NCM_RPC_OK && ops->sandbox_removed && r->id)
                        ops->sandbox_removed(p->data, r->id);
                break;
        default:
                break;
        }
        free(id);
}

void *ncm_cri_ticket_data(const ncm_cri_ticket *t)
{
        return t->data;
}

void ncm_cri_ticket_set_data(ncm_cri_ticket *t, void *data)
{
        t->data = data;
}

bool ncm_cri_ticket_cancelled(const ncm_cri_ticket *t)
{
        return t->r->down_gone;
}

const uint8_t *ncm_cri_ticket_request(const ncm_cri_ticket *t, size_t *ret_len)
{
        *ret_len = t->r->req_len;
        return t->r->req;
}

void ncm_cri_ticket_forward(ncm_cri_ticket *t, const uint8_t *req, size_t len)
{
        relay *r = t->r;
        bool create = r->method == NCM_CRI_CREATE_CONTAINER;

        if (r->down_gone && create) {
                /* the client gave up before the decision: nothing is created for no one */
                r->ticket_open = false;
                if (r->p->ops && r->p->ops->container_created)
                        r->p->ops->container_created(r->p->data, t, NULL);
                finish(r, NCM_RPC_CANCELLED, "Cancelled");
                return;
        }
        /* an update goes on without its client: the runtime then holds what nodecm decided */
        if (req != r->req)
                r->p->stats.patched++;
        /* only a creation reports its answer back (container_created): an update is done */
        if (!create)
                r->ticket_open = false;
        forward(r, req, len);
}

void ncm_cri_ticket_refuse(ncm_cri_ticket *t, ncm_rpc_code code, const char *message)
{
        relay *r = t->r;

        r->ticket_open = false;
        r->p->stats.refused++;
        finish(r, code, message);
}

static void handle(ncm_rpc_call *call, const uint8_t *req, size_t len, void *data)
{
        ncm_cri_proxy *p = data;
        const ncm_cri_proxy_ops *ops = p->ops;
        relay *r = calloc(1, sizeof(*r));
        ncm_rpc_call_ops cops = {.on_cancel = down_cancel, .on_writable = down_writable};
        int m = ncm_cri_method_from_path(ncm_rpc_call_path(call));

        if (!r || !(r->path = strdup(ncm_rpc_call_path(call)))) {
                free(r);
                ncm_rpc_call_finish(call, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory");
                return;
        }
        r->p = p;
        r->down = call;
        r->next = p->relays;
        if (p->relays)
                p->relays->prev = r;
        p->relays = r;
        ncm_rpc_call_set_ops(call, &cops, r);
        r->method = -1;
        if (!ops)
                m = -1;
        switch (m) {
        case NCM_CRI_RUN_POD_SANDBOX:
                if (!ops->sandbox_ran)
                        break;
                r->method = m;
                break;
        case NCM_CRI_CREATE_CONTAINER:
                if (!ops->container_create)
                        break;
                r->method = m;
                break;
        case NCM_CRI_REMOVE_CONTAINER:
        case NCM_CRI_REMOVE_POD_SANDBOX:
        case NCM_CRI_UPDATE_CONTAINER_RESOURCES:
                if (ncm_cri_decode_id(req, len, &r->id, NULL) == 0)
                        r->method = m;
                break;
        default:
                break;
        }
        if (r->method == NCM_CRI_UPDATE_CONTAINER_RESOURCES && !ops->container_update &&
            !ops->container_cpusets)
                r->method = -1;
        if (r->method == NCM_CRI_RUN_POD_SANDBOX || r->method == NCM_CRI_CREATE_CONTAINER ||
            (r->method == NCM_CRI_UPDATE_CONTAINER_RESOURCES && ops->container_update)) {
                r->req = malloc(len ? len : 1);
                if (!r->req) {
                        finish(r, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory");
                        return;
                }
                if (len)
                        memcpy(r->req, req, len);
                r->req_len = len;
        }
        p->stats.calls++;
        if (r->method == NCM_CRI_CREATE_CONTAINER) {
                ncm_cri_container_config c;
                ncm_error err = NCM_ERROR_INIT;
                if (ncm_cri_decode_create_container(req, len, &c, &err) < 0) {
                        /* not ours to judge: the runtime says what is wrong with it */
                        r->method = -1;
                        forward(r, req, len);
                        return;
                }
                r->ticket.r = r;
                r->ticket_open = true;
                p->stats.intercepted++;
                ops->container_create(p->data, &r->ticket, &c);
                ncm_cri_container_config_done(&c);
                return;
        }
        if (r->method == NCM_CRI_UPDATE_CONTAINER_RESOURCES && ops->container_update) {
                /* the owner decides (a resize may be refused): the call waits for it */
                r->ticket.r = r;
                r->ticket_open = true;
                p->stats.intercepted++;
                ops->container_update(p->data, &r->ticket, r->id);
                return;
        }
        if (r->method == NCM_CRI_UPDATE_CONTAINER_RESOURCES && ops->container_cpusets) {
                char *cpus = NULL, *mems = NULL;
                if (ops->container_cpusets(p->data, r->id, &cpus, &mems) > 0) {
                        ncm_buf b = NCM_BUF_INIT;
                        int rc = ncm_cri_patch_update_resources(req, len, cpus, mems, &b, NULL);
                        free(cpus);
                        free(mems);
                        if (rc == 0) {
                                p->stats.patched++;
                                forward(r, (const uint8_t *)b.data, b.len);
                                ncm_buf_done(&b);
                                return;
                        }
                        ncm_buf_done(&b);
                }
                r->method = -1;
        }
        if (r->method >= 0)
                p->stats.intercepted++;
        forward(r, req, len);
}

/* ---- the proxy --------------------------------------------------------------------------- */

int ncm_cri_proxy_new(uv_loop_t *loop, const ncm_cri_proxy_options *o, const ncm_cri_proxy_ops *ops,
                      void *data, ncm_cri_proxy **ret, ncm_error *err)
{
        ncm_cri_proxy *p = calloc(1, sizeof(*p));
        int r;

        if (!p)
                return ncm_error_set(err, ENOMEM, "out of memory");
        p->loop = loop;
        p->ops = ops;
        p->data = data;
        if (o->opts)
                p->opts = *o->opts;
        else
                ncm_rpc_opts_default(&p->opts);
        /* a runtime's list of every container may be large: take what grpc-go takes, 16 MiB */
        if (p->opts.max_recv_msg < (16u << 20))
                p->opts.max_recv_msg = 16u << 20;
        if (p->opts.max_send_msg < (16u << 20))
                p->opts.max_send_msg = 16u << 20;
        p->endpoint = strdup(o->runtime_endpoint);
        p->srv = ncm_rpc_server_new(&p->opts);
        if (!p->endpoint || !p->srv) {
                ncm_cri_proxy_free(p);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        ncm_rpc_server_set_fallback(p->srv, handle, p);
        r = ncm_rpc_uv_listen(loop, p->srv, o->listen, o->mode ? o->mode : 0660, &p->listener, err);
        if (r < 0) {
                ncm_cri_proxy_free(p);
                return r;
        }
        *ret = p;
        return 0;
}

static void listener_closed(void *data)
{
        ncm_cri_proxy *p = data;

        p->listener = NULL;
        if (p->up) {
                ncm_rpc_uv_client_close(p->up);
                p->up = NULL;
        }
        if (p->on_closed)
                p->on_closed(p->closed_data);
}

void ncm_cri_proxy_close(ncm_cri_proxy *p, void (*on_closed)(void *data), void *data)
{
        if (p->closing)
                return;
        p->closing = true;
        p->on_closed = on_closed;
        p->closed_data = data;
        if (p->listener)
                ncm_rpc_uv_server_close(p->listener, true, listener_closed, p);
        else
                listener_closed(p);
}

ncm_cri_proxy *ncm_cri_proxy_free(ncm_cri_proxy *p)
{
        if (!p)
                return NULL;
        if (p->up)
                ncm_rpc_uv_client_close(p->up);
        while (p->relays)
                relay_free(p->relays);
        ncm_rpc_server_free(p->srv);
        free(p->endpoint);
        free(p);
        return NULL;
}

const ncm_cri_proxy_stats *ncm_cri_proxy_get_stats(const ncm_cri_proxy *p)
{
        return &p->stats;
}

ncm_rpc_conn *ncm_cri_proxy_runtime(ncm_cri_proxy *p, ncm_error *err)
{
        return upstream(p, err);
}
