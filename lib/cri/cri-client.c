/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI client: one unary call on a gRPC connection, its reply decoded for the method, and
 * a blocking form on a private libuv loop. The kubelet's runtime client does the same calls
 * (remote_runtime.go); nodecm's reconcile loop uses the asynchronous one on nodecmd's loop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <nodecm/rpc-uv.h>
#include "cri-internal.h"

typedef struct call_ctx {
        ncm_cri_method method;
        ncm__cri_take_fn done;
        void *data;
        uint8_t *msg; /* the (first) response message */
        size_t len;
        bool got;
        bool failed; /* out of memory keeping the message */
} call_ctx;

void ncm_cri_reply_done(ncm_cri_reply *r)
{
        if (!r)
                return;
        free(r->message);
        ncm_cri_version_done(&r->version);
        ncm_cri_sandboxes_free(r->sandboxes, r->n_sandboxes);
        ncm_cri_containers_free(r->containers, r->n_containers);
        *r = (ncm_cri_reply){0};
}

static void on_message(ncm_rpc_call *call, const uint8_t *msg, size_t len, void *data)
{
        call_ctx *c = data;

        (void)call;
        if (c->got)
                return; /* unary: grpc-go reads one message too */
        c->got = true;
        c->msg = malloc(len ? len : 1);
        if (!c->msg) {
                c->failed = true;
                return;
        }
        if (len)
                memcpy(c->msg, msg, len); /* an empty reply may come as no bytes at all */
        c->len = len;
}

/* Decode the reply of C's method into R; a failure becomes R's status. */
static void decode(call_ctx *c, ncm_cri_reply *r)
{
        ncm_error err = NCM_ERROR_INIT;
        int rc = 0;

        if (c->failed || !c->got) {
                r->code = c->failed ? NCM_RPC_RESOURCE_EXHAUSTED : NCM_RPC_INTERNAL;
                free(r->message);
                r->message = strdup(c->failed ? "out of memory" : "no response message");
                return;
        }
        switch (c->method) {
        case NCM_CRI_VERSION:
                rc = ncm_cri_decode_version(c->msg, c->len, &r->version, &err);
                break;
        case NCM_CRI_LIST_POD_SANDBOX:
                rc = ncm_cri_decode_sandboxes(c->msg, c->len, &r->sandboxes, &r->n_sandboxes, &err);
                break;
        case NCM_CRI_LIST_CONTAINERS:
                rc = ncm_cri_decode_containers(c->msg, c->len, &r->containers, &r->n_containers,
                                               &err);
                break;
        case NCM_CRI_CONTAINER_STATUS:
                r->containers = calloc(1, sizeof(*r->containers));
                if (!r->containers) {
                        rc = ncm_error_set(&err, ENOMEM, "out of memory");
                        break;
                }
                rc = ncm_cri_decode_container_status(c->msg, c->len, r->containers, &err);
                if (rc >= 0) {
                        r->n_containers = 1;
                } else {
                        free(r->containers);
                        r->containers = NULL;
                }
                break;
        default:
                break; /* UpdateContainerResources: an empty reply */
        }
        if (rc < 0) {
                r->code = rc == -ENOMEM ? NCM_RPC_RESOURCE_EXHAUSTED : NCM_RPC_INTERNAL;
                free(r->message);
                r->message = strdup(err.msg);
        }
}

static void on_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                     const ncm_rpc_md *md, size_t n, void *data)
{
        call_ctx *c = data;
        ncm_cri_reply r = {0};

        (void)call;
        (void)md;
        (void)n;
        r.method = c->method;
        r.code = code;
        r.message = strdup(message ? message : "");
        if (code == NCM_RPC_OK)
                decode(c, &r);
        if (!r.message) {
                /* the status says what happened; its text is lost to memory */
                r.message = NULL;
        }
        c->done(&r, c->data);
        ncm_cri_reply_done(&r);
        free(c->msg);
        free(c);
}

int ncm__cri_call(ncm_rpc_conn *conn, const ncm_cri_request *req, uint32_t timeout_ms,
                  ncm__cri_take_fn done, void *data, ncm_error *err)
{
        static const ncm_rpc_client_ops ops = {.on_message = on_message, .on_close = on_close};
        ncm_buf b = NCM_BUF_INIT;
        call_ctx *c;
        int r = ncm_cri_request_encode(req, &b, err);

        if (r < 0) {
                ncm_buf_done(&b);
                return r;
        }
        c = calloc(1, sizeof(*c));
        if (!c) {
                ncm_buf_done(&b);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        c->method = req->method;
        c->done = done;
        c->data = data;
        r = ncm_rpc_conn_call(conn, ncm_cri_method_path(req->method), NULL, 0, timeout_ms,
                              (const uint8_t *)b.data, b.len, &ops, c, NULL, err);
        ncm_buf_done(&b);
        if (r < 0)
                free(c);
        return r;
}

typedef struct const_done {
        ncm_cri_done_fn fn;
        void *data;
} const_done;

static void call_user(ncm_cri_reply *r, void *data)
{
        const_done *d = data;
        d->fn(r, d->data);
        free(d);
}

int ncm_cri_call(ncm_rpc_conn *conn, const ncm_cri_request *req, uint32_t timeout_ms,
                 ncm_cri_done_fn done, void *data, ncm_error *err)
{
        const_done *d = malloc(sizeof(*d));
        int r;

        if (!d)
                return ncm_error_set(err, ENOMEM, "out of memory");
        d->fn = done;
        d->data = data;
        r = ncm__cri_call(conn, req, timeout_ms, call_user, d, err);
        if (r < 0)
                free(d);
        return r;
}

/* ---- blocking ------------------------------------------------------------------------------- */

typedef struct sync_ctx {
        bool done;
        ncm_cri_reply reply;
} sync_ctx;

static void sync_done(ncm_cri_reply *r, void *data)
{
        sync_ctx *s = data;
        s->reply = *r;
        *r = (ncm_cri_reply){0}; /* taken */
        s->done = true;
}

int ncm_cri_call_sync(const char *endpoint, const ncm_cri_request *req, uint32_t timeout_ms,
                      ncm_cri_reply *ret, ncm_error *err)
{
        uv_loop_t loop;
        ncm_rpc_uv_client *cl = NULL;
        sync_ctx s = {0};
        int r;

        if (uv_loop_init(&loop) < 0)
                return ncm_error_set(err, ENOMEM, "a loop for '%s': out of memory", endpoint);
        r = ncm_rpc_uv_connect(&loop, endpoint, NULL, &cl, err);
        if (r >= 0)
                r = ncm__cri_call(ncm_rpc_uv_client_conn(cl), req, timeout_ms, sync_done, &s, err);
        while (r >= 0 && !s.done)
                uv_run(&loop, UV_RUN_ONCE);
        if (cl)
                ncm_rpc_uv_client_close(cl);
        /* let the client's handles close before the loop goes */
        (void)uv_run(&loop, UV_RUN_DEFAULT);
        (void)uv_loop_close(&loop);
        if (r < 0) {
                ncm_cri_reply_done(&s.reply);
                return r;
        }
        if (!s.reply.message)
                s.reply.message = strdup("");
        *ret = s.reply;
        return 0;
}
