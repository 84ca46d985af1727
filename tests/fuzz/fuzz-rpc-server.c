/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A server connection fed arbitrary bytes, as a hostile client would send them: nghttp2 frame
 * parsing, our header checks, routing, the message framer, handlers answering at once and later,
 * timers. The input is a client's byte stream after the HTTP/2 preface (added here so that the
 * fuzzer does not have to find it); a 0xff byte advances the clock by one second and runs tick.
 */
#include <stdlib.h>
#include <string.h>

#include <nodecm/rpc.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct ctx {
        uint64_t now;
        ncm_rpc_call *held;
} ctx;

static uint64_t now_ms(void *data)
{
        return ((ctx *)data)->now;
}

static void h_echo(ncm_rpc_call *call, const uint8_t *req, size_t len, void *data)
{
        ncm_rpc_call_add_metadata(call, false, "x-a", "b");
        ncm_rpc_call_send(call, req, len);
        ncm_rpc_call_finish(call, NCM_RPC_OK, NULL);
}

static void on_cancel(ncm_rpc_call *call, ncm_rpc_code code, void *data)
{
        ctx *c = data;
        if (c->held == call)
                c->held = NULL;
        ncm_rpc_call_finish(call, NCM_RPC_CANCELLED, NULL);
}

static void h_hold(ncm_rpc_call *call, const uint8_t *req, size_t len, void *data)
{
        ctx *c = data;
        if (c->held) {
                ncm_rpc_call_send(c->held, req, len);
                ncm_rpc_call_finish(c->held, NCM_RPC_INTERNAL, "done \xff%");
        }
        ncm_rpc_call_ops ops = {.on_cancel = on_cancel};
        ncm_rpc_call_set_ops(call, &ops, c);
        c->held = call;
}

static void drain(ncm_rpc_conn *conn)
{
        for (int i = 0; i < 64; i++) {
                const uint8_t *d;
                size_t n;
                ncm_rpc_conn_pull(conn, &d, &n);
                if (n == 0)
                        return;
                ncm_rpc_conn_sent(conn, n);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
        ctx c = {.now = 1};
        ncm_rpc_opts opts;
        ncm_rpc_opts_default(&opts);
        opts.max_recv_msg = 1 << 16;
        ncm_rpc_server *srv = ncm_rpc_server_new(&opts);
        ncm_rpc_server_add(srv, "/t.S/Echo", h_echo, &c);
        ncm_rpc_server_add_streaming(srv, "/t.S/Hold", h_hold, &c);
        ncm_rpc_env env = {.now_ms = now_ms, .data = &c};
        ncm_rpc_conn *conn = ncm_rpc_conn_new_server(srv, &env);
        if (!conn) {
                ncm_rpc_server_free(srv);
                return 0;
        }
        ncm_rpc_conn_recv(conn, (const uint8_t *)preface, 24, NULL);
        size_t start = 0;
        for (size_t i = 0; i <= size; i++) {
                if (i < size && data[i] != 0xff)
                        continue;
                if (i > start)
                        ncm_rpc_conn_recv(conn, data + start, i - start, NULL);
                drain(conn);
                c.now += 1000;
                ncm_rpc_conn_tick(conn);
                drain(conn);
                start = i + 1;
        }
        if (c.held) {
                ncm_rpc_call_finish(c.held, NCM_RPC_OK, NULL);
                c.held = NULL;
        }
        drain(conn);
        ncm_rpc_conn_eof(conn);
        ncm_rpc_conn_free(conn);
        ncm_rpc_server_free(srv);
        return 0;
}
