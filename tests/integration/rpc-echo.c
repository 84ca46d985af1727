/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The C side of the transport's interop tests: an echo server and a one-call client built on
 * lib/rpc's libuv binding, driven by test-rpc-interop.py against python3-grpcio peers.
 *
 *   rpc-echo serve TARGET [--max-recv N] [--frame-timeout-ms N] [--handshake-timeout-ms N]
 *   rpc-echo proxy TARGET UPSTREAM
 *   rpc-echo call TARGET Unary|Stream|PATH [--text S] [--count N] [--size N] [--payload-size N]
 *            [--delay-ms N] [--code N] [--message S] [--timeout-ms N] [--md K=V]...
 *            [--max-recv N] [--read-delay-ms N] [--cancel-after N] [--raw-bytes N]
 *
 * The proxy serves every method (a fallback handler) by forwarding the request bytes, metadata and
 * deadline to UPSTREAM on one client connection and the responses, status and trailers back,
 * without decoding anything; a slow downstream pauses the upstream call.
 *
 * The server prints "ready" once listening and one line per call its handlers saw end early
 * ("cancelled CODE PATH"); SIGTERM stops it gracefully. The client prints "headers ...",
 * "message INDEX LEN TEXT [METADATA]" per reply, then "status CODE NAME MESSAGE" and
 * "trailers ...". Exit status: 0 when the call ended (whatever its status), 2 for bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/rpc-uv.h>

#include "echo.pb-c.h"

static int usage(void)
{
        fprintf(stderr, "usage: rpc-echo serve TARGET [OPTIONS] | call TARGET METHOD [OPTIONS]\n");
        return 2;
}

/* ---- server -------------------------------------------------------------------------------- */

typedef struct job {
        ncm_rpc_call *call;
        uv_timer_t timer;
        Nodecm__Test__EchoRequest *req;
        int sent;
        bool stream;
        bool blocked;
        bool done;
        char md[512];
} job;

static void job_closed(uv_handle_t *h)
{
        job *j = h->data;
        nodecm__test__echo_request__free_unpacked(j->req, NULL);
        free(j);
}

static void job_end(job *j, ncm_rpc_code code, const char *msg)
{
        if (j->done)
                return;
        j->done = true;
        ncm_rpc_call_finish(j->call, code, msg);
        uv_close((uv_handle_t *)&j->timer, job_closed);
}

static int job_reply(job *j)
{
        Nodecm__Test__EchoReply rep = NODECM__TEST__ECHO_REPLY__INIT;
        rep.text = j->req->text;
        rep.index = j->sent;
        rep.metadata = j->md;
        uint8_t *zeros = NULL;
        if (j->req->size > 0) {
                zeros = calloc(1, (size_t)j->req->size);
                rep.payload.data = zeros;
                rep.payload.len = (size_t)j->req->size;
        } else {
                rep.payload = j->req->payload;
        }
        int r = ncm_rpc_call_send_pb(j->call, &rep.base);
        free(zeros);
        if (r >= 0)
                j->sent++;
        return r;
}

static void job_step(uv_timer_t *t);

static void job_next(job *j)
{
        for (;;) {
                int total = j->stream ? j->req->count : j->req->code ? 0 : 1;
                if (j->sent >= total) {
                        job_end(j, (ncm_rpc_code)j->req->code, j->req->message);
                        return;
                }
                if (j->req->delay_ms > 0) {
                        uv_timer_start(&j->timer, job_step, (uint64_t)j->req->delay_ms, 0);
                        return;
                }
                int r = job_reply(j);
                if (r == 1) {
                        j->blocked = true; /* wait for on_writable */
                        return;
                }
                if (r < 0) {
                        job_end(j, NCM_RPC_RESOURCE_EXHAUSTED, strerror(-r));
                        return;
                }
        }
}

static void job_step(uv_timer_t *t)
{
        job *j = t->data;
        int r = job_reply(j);
        if (r < 0) {
                job_end(j, NCM_RPC_RESOURCE_EXHAUSTED, strerror(-r));
                return;
        }
        if (r == 1) {
                j->blocked = true;
                return;
        }
        int total = j->stream ? j->req->count : j->req->code ? 0 : 1;
        if (j->sent >= total)
                job_end(j, (ncm_rpc_code)j->req->code, j->req->message);
        else
                uv_timer_start(&j->timer, job_step, (uint64_t)j->req->delay_ms, 0);
}

static void on_cancel(ncm_rpc_call *call, ncm_rpc_code code, void *data)
{
        job *j = data;
        printf("cancelled %s %s\n", ncm_rpc_code_name(code), ncm_rpc_call_path(call));
        fflush(stdout);
        uv_timer_stop(&j->timer);
        job_end(j, NCM_RPC_CANCELLED, NULL);
}

static void on_writable(ncm_rpc_call *call, void *data)
{
        job *j = data;
        if (!j->blocked || j->done)
                return;
        j->blocked = false;
        if (j->req->delay_ms > 0)
                job_step(&j->timer);
        else
                job_next(j);
}

static int cmp_md(const void *a, const void *b)
{
        return strcmp(((const ncm_rpc_md *)a)->key, ((const ncm_rpc_md *)b)->key);
}

static void handle(ncm_rpc_call *call, const uint8_t *msg, size_t len, void *data)
{
        bool stream = data != NULL;
        ProtobufCMessage *m;
        if (ncm_rpc_unpack(&nodecm__test__echo_request__descriptor, msg, len, &m) < 0) {
                ncm_rpc_call_finish(call, NCM_RPC_INVALID_ARGUMENT, "bad EchoRequest");
                return;
        }
        job *j = calloc(1, sizeof(*j));
        j->call = call;
        j->req = (Nodecm__Test__EchoRequest *)m;
        j->stream = stream;
        uv_timer_init(uv_default_loop(), &j->timer);
        j->timer.data = j;

        size_t n;
        const ncm_rpc_md *md = ncm_rpc_call_metadata(call, &n);
        ncm_rpc_md sorted[32];
        size_t k = 0;
        for (size_t i = 0; i < n && k < 32; i++)
                if (strncmp(md[i].key, "x-echo-", 7) == 0)
                        sorted[k++] = md[i];
        qsort(sorted, k, sizeof(sorted[0]), cmp_md);
        for (size_t i = 0; i < k; i++) {
                size_t l = strlen(j->md);
                snprintf(j->md + l, sizeof(j->md) - l, "%s%s=%s", i ? ";" : "", sorted[i].key,
                         sorted[i].value);
        }
        ncm_rpc_call_add_metadata(call, false, "x-echo-header", "h");
        ncm_rpc_call_add_metadata(call, true, "x-echo-trailer", "t");
        ncm_rpc_call_ops ops = {.on_cancel = on_cancel, .on_writable = on_writable};
        ncm_rpc_call_set_ops(call, &ops, j);
        job_next(j);
}

static ncm_rpc_uv_server *server;
static uv_signal_t sigterm, sigint;
static ncm_rpc_uv_client *upstream; /* proxy mode */

static void on_signal(uv_signal_t *s, int signum)
{
        uv_close((uv_handle_t *)&sigterm, NULL);
        uv_close((uv_handle_t *)&sigint, NULL);
        ncm_rpc_uv_server_close(server, true, NULL, NULL);
        /* A proxy's calls in flight end (UNAVAILABLE) with its upstream connection. */
        if (upstream)
                ncm_rpc_uv_client_close(upstream);
        upstream = NULL;
}

static int serve(int argc, char **argv)
{
        if (argc < 3)
                return usage();
        ncm_rpc_opts opts;
        ncm_rpc_opts_default(&opts);
        for (int i = 3; i + 1 < argc; i += 2) {
                unsigned long v = strtoul(argv[i + 1], NULL, 10);
                if (strcmp(argv[i], "--max-recv") == 0)
                        opts.max_recv_msg = v;
                else if (strcmp(argv[i], "--frame-timeout-ms") == 0)
                        opts.frame_timeout_ms = (uint32_t)v;
                else if (strcmp(argv[i], "--handshake-timeout-ms") == 0)
                        opts.handshake_timeout_ms = (uint32_t)v;
                else
                        return usage();
        }
        uv_loop_t *loop = uv_default_loop();
        ncm_rpc_server *srv = ncm_rpc_server_new(&opts);
        ncm_rpc_server_add(srv, "/nodecm.test.Echo/Unary", handle, NULL);
        ncm_rpc_server_add_streaming(srv, "/nodecm.test.Echo/Stream", handle, (void *)1);
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_rpc_uv_listen(loop, srv, argv[2], 0600, &server, &err) < 0) {
                fprintf(stderr, "rpc-echo: %s\n", err.msg);
                return 1;
        }
        uv_signal_init(loop, &sigterm);
        uv_signal_start(&sigterm, on_signal, SIGTERM);
        uv_signal_init(loop, &sigint);
        uv_signal_start(&sigint, on_signal, SIGINT);
        printf("ready\n");
        fflush(stdout);
        uv_run(loop, UV_RUN_DEFAULT);
        ncm_rpc_server_free(srv);
        uv_loop_close(loop);
        return 0;
}

/* ---- proxy --------------------------------------------------------------------------------- */

typedef struct fwd {
        ncm_rpc_call *down; /* the call we serve; NULL once finished */
        ncm_rpc_call *up;   /* the upstream call; NULL once closed */
} fwd;

static const char *upstream_target;

static void fwd_release(fwd *f)
{
        if (!f->down && !f->up)
                free(f);
}

static void up_headers(ncm_rpc_call *call, const ncm_rpc_md *md, size_t n, void *data)
{
        fwd *f = data;
        for (size_t i = 0; f->down && i < n; i++)
                ncm_rpc_call_add_metadata(f->down, false, md[i].key, md[i].value);
        if (f->down)
                ncm_rpc_call_send_headers(f->down);
}

static void up_message(ncm_rpc_call *call, const uint8_t *msg, size_t len, void *data)
{
        fwd *f = data;
        if (f->down && ncm_rpc_call_send(f->down, msg, len) == 1)
                ncm_rpc_call_pause(call, true); /* the downstream reader is slow */
}

static void up_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                     const ncm_rpc_md *md, size_t n, void *data)
{
        fwd *f = data;
        f->up = NULL;
        if (f->down) {
                for (size_t i = 0; i < n; i++)
                        ncm_rpc_call_add_metadata(f->down, true, md[i].key, md[i].value);
                ncm_rpc_call_finish(f->down, code, message);
                f->down = NULL;
        }
        fwd_release(f);
}

static void down_cancel(ncm_rpc_call *call, ncm_rpc_code code, void *data)
{
        fwd *f = data;
        ncm_rpc_call_finish(f->down, code, NULL);
        f->down = NULL;
        if (f->up)
                ncm_rpc_call_cancel(f->up); /* up_close releases f */
        else
                fwd_release(f);
}

static void down_writable(ncm_rpc_call *call, void *data)
{
        fwd *f = data;
        if (f->up)
                ncm_rpc_call_pause(f->up, false);
}

static void forward(ncm_rpc_call *call, const uint8_t *msg, size_t len, void *data)
{
        static const ncm_rpc_client_ops ops = {up_headers, up_message, up_close};
        ncm_error err = NCM_ERROR_INIT;
        if (!upstream || !ncm_rpc_conn_usable(ncm_rpc_uv_client_conn(upstream))) {
                if (upstream)
                        ncm_rpc_uv_client_close(upstream);
                upstream = NULL;
                if (ncm_rpc_uv_connect(uv_default_loop(), upstream_target, NULL, &upstream, &err) <
                    0) {
                        ncm_rpc_call_finish(call, NCM_RPC_UNAVAILABLE, err.msg);
                        return;
                }
        }
        fwd *f = calloc(1, sizeof(*f));
        f->down = call;
        size_t n;
        const ncm_rpc_md *md = ncm_rpc_call_metadata(call, &n);
        int64_t left = ncm_rpc_call_timeout_left(call);
        if (ncm_rpc_conn_call(ncm_rpc_uv_client_conn(upstream), ncm_rpc_call_path(call), md, n,
                              left < 0    ? 0
                              : left == 0 ? 1
                                          : (uint32_t)left,
                              msg, len, &ops, f, &f->up, &err) < 0) {
                ncm_rpc_call_finish(call, NCM_RPC_UNAVAILABLE, err.msg);
                free(f);
                return;
        }
        ncm_rpc_call_ops cops = {.on_cancel = down_cancel, .on_writable = down_writable};
        ncm_rpc_call_set_ops(call, &cops, f);
}

static int proxy(int argc, char **argv)
{
        if (argc != 4)
                return usage();
        upstream_target = argv[3];
        uv_loop_t *loop = uv_default_loop();
        ncm_rpc_server *srv = ncm_rpc_server_new(NULL);
        ncm_rpc_server_set_fallback(srv, forward, NULL);
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_rpc_uv_listen(loop, srv, argv[2], 0600, &server, &err) < 0) {
                fprintf(stderr, "rpc-echo: %s\n", err.msg);
                return 1;
        }
        uv_signal_init(loop, &sigterm);
        uv_signal_start(&sigterm, on_signal, SIGTERM);
        uv_signal_init(loop, &sigint);
        uv_signal_start(&sigint, on_signal, SIGINT);
        printf("ready\n");
        fflush(stdout);
        uv_run(loop, UV_RUN_DEFAULT);
        ncm_rpc_server_free(srv);
        return 0;
}

/* ---- client -------------------------------------------------------------------------------- */

typedef struct client {
        ncm_rpc_uv_client *cl;
        ncm_rpc_call *call;
        uv_timer_t timer;
        int read_delay_ms;
        int cancel_after;
        int messages;
        bool raw;
} client;

static void print_md(const char *what, const ncm_rpc_md *md, size_t n)
{
        printf("%s ", what);
        for (size_t i = 0; i < n; i++)
                if (strncmp(md[i].key, "x-", 2) == 0)
                        printf("%s=%s;", md[i].key, md[i].value);
        printf("\n");
}

static void cli_headers(ncm_rpc_call *call, const ncm_rpc_md *md, size_t n, void *data)
{
        print_md("headers", md, n);
}

static void resume(uv_timer_t *t)
{
        client *c = t->data;
        if (c->call)
                ncm_rpc_call_pause(c->call, false);
}

static void cli_message(ncm_rpc_call *call, const uint8_t *msg, size_t len, void *data)
{
        client *c = data;
        c->messages++;
        ProtobufCMessage *m;
        if (c->raw || ncm_rpc_unpack(&nodecm__test__echo_reply__descriptor, msg, len, &m) < 0) {
                printf("message raw %zu\n", len);
        } else {
                Nodecm__Test__EchoReply *r = (Nodecm__Test__EchoReply *)m;
                printf("message %d %zu %s %s\n", r->index, r->payload.len, r->text, r->metadata);
                protobuf_c_message_free_unpacked(m, NULL);
        }
        fflush(stdout);
        if (c->cancel_after && c->messages == c->cancel_after)
                ncm_rpc_call_cancel(call);
        if (c->read_delay_ms) {
                ncm_rpc_call_pause(call, true);
                uv_timer_start(&c->timer, resume, (uint64_t)c->read_delay_ms, 0);
        }
}

static void cli_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                      const ncm_rpc_md *md, size_t n, void *data)
{
        client *c = data;
        const char *name = ncm_rpc_code_name(code);
        printf("status %d %s %s\n", code, name ? name : "?", message);
        print_md("trailers", md, n);
        fflush(stdout);
        c->call = NULL;
        uv_timer_stop(&c->timer);
        uv_close((uv_handle_t *)&c->timer, NULL);
        ncm_rpc_uv_client_close(c->cl);
}

static int call(int argc, char **argv)
{
        if (argc < 4)
                return usage();
        Nodecm__Test__EchoRequest req = NODECM__TEST__ECHO_REQUEST__INIT;
        ncm_rpc_opts opts;
        ncm_rpc_opts_default(&opts);
        ncm_rpc_md md[16];
        size_t n_md = 0;
        uint32_t timeout = 0;
        client c = {0};
        size_t payload_size = 0, raw_bytes = 0;
        bool raw = false;
        for (int i = 4; i + 1 < argc; i += 2) {
                const char *o = argv[i], *v = argv[i + 1];
                long n = strtol(v, NULL, 10);
                if (strcmp(o, "--text") == 0)
                        req.text = (char *)v;
                else if (strcmp(o, "--count") == 0)
                        req.count = (int32_t)n;
                else if (strcmp(o, "--size") == 0)
                        req.size = (int32_t)n;
                else if (strcmp(o, "--payload-size") == 0)
                        payload_size = (size_t)n;
                else if (strcmp(o, "--delay-ms") == 0)
                        req.delay_ms = (int32_t)n;
                else if (strcmp(o, "--code") == 0)
                        req.code = (int32_t)n;
                else if (strcmp(o, "--message") == 0)
                        req.message = (char *)v;
                else if (strcmp(o, "--timeout-ms") == 0)
                        timeout = (uint32_t)n;
                else if (strcmp(o, "--max-recv") == 0)
                        opts.max_recv_msg = (size_t)n;
                else if (strcmp(o, "--max-send") == 0)
                        opts.max_send_msg = (size_t)n;
                else if (strcmp(o, "--read-delay-ms") == 0)
                        c.read_delay_ms = (int)n;
                else if (strcmp(o, "--cancel-after") == 0)
                        c.cancel_after = (int)n;
                else if (strcmp(o, "--raw-bytes") == 0) {
                        raw = true;
                        raw_bytes = (size_t)n;
                } else if (strcmp(o, "--md") == 0 && n_md < 16 && strchr(v, '=')) {
                        char *kv = strdup(v);
                        char *eq = strchr(kv, '=');
                        *eq = 0;
                        md[n_md++] = (ncm_rpc_md){kv, eq + 1};
                } else
                        return usage();
        }
        const char *path = argv[3];
        char pathbuf[256];
        if (path[0] != '/') {
                snprintf(pathbuf, sizeof(pathbuf), "/nodecm.test.Echo/%s", path);
                path = pathbuf;
        }
        uint8_t *payload = NULL;
        if (payload_size) {
                payload = calloc(1, payload_size);
                req.payload.data = payload;
                req.payload.len = payload_size;
        }
        uint8_t *buf;
        size_t len;
        if (raw) {
                buf = calloc(1, raw_bytes ? raw_bytes : 1);
                len = raw_bytes;
        } else {
                ncm_rpc_pack(&req.base, &buf, &len);
        }
        c.raw = raw;
        uv_loop_t *loop = uv_default_loop();
        ncm_error err = NCM_ERROR_INIT;
        int rc = 0;
        if (ncm_rpc_uv_connect(loop, argv[2], &opts, &c.cl, &err) < 0) {
                printf("connect-error %s\n", err.msg);
                rc = 0;
                goto out;
        }
        uv_timer_init(loop, &c.timer);
        c.timer.data = &c;
        ncm_rpc_client_ops ops = {.on_headers = cli_headers,
                                  .on_message = cli_message,
                                  .on_close = cli_close};
        if (ncm_rpc_conn_call(ncm_rpc_uv_client_conn(c.cl), path, md, n_md, timeout, buf, len, &ops,
                              &c, &c.call, &err) < 0) {
                printf("call-error %s\n", err.msg);
                uv_close((uv_handle_t *)&c.timer, NULL);
                ncm_rpc_uv_client_close(c.cl);
        }
        uv_run(loop, UV_RUN_DEFAULT);
        uv_loop_close(loop);
out:
        for (size_t i = 0; i < n_md; i++)
                free((char *)md[i].key);
        free(buf);
        free(payload);
        return rc;
}

int main(int argc, char **argv)
{
        if (argc < 2)
                return usage();
        if (strcmp(argv[1], "serve") == 0)
                return serve(argc, argv);
        if (strcmp(argv[1], "call") == 0)
                return call(argc, argv);
        if (strcmp(argv[1], "proxy") == 0)
                return proxy(argc, argv);
        return usage();
}
