/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>

#include "benchctl.h"

static void on_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                     const ncm_rpc_md *md, size_t n, void *data)
{
        bench_client *c = data;
        (void)call;
        (void)md;
        (void)n;
        c->done = true;
        c->code = code;
        snprintf(c->message, sizeof(c->message), "%s", message ? message : "");
}

int bench_client_open(bench_client *c, const char *sock, const ncm_rpc_opts *opts, ncm_error *err)
{
        uv_loop_init(&c->loop);
        if (ncm_rpc_uv_connect(&c->loop, sock, opts, &c->cl, err) < 0) {
                uv_loop_close(&c->loop);
                return -1;
        }
        return 0;
}

void bench_client_close(bench_client *c)
{
        ncm_rpc_uv_client_close(c->cl);
        uv_run(&c->loop, UV_RUN_DEFAULT);
        uv_loop_close(&c->loop);
}

int bench_client_call(bench_client *c, ncm_ctl_method m, const ncm_ctl_request *q)
{
        static const ncm_rpc_client_ops ops = {.on_close = on_close};
        ncm_buf req = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        int r;

        ncm_ctl_request_pack(m, q, &req);
        c->done = false;
        r = ncm_rpc_conn_call(ncm_rpc_uv_client_conn(c->cl), ncm_ctl_method_path(m), NULL, 0, 0,
                              (const uint8_t *)req.data, req.len, &ops, c, NULL, &err);
        ncm_buf_done(&req);
        if (r < 0)
                return r;
        while (!c->done && uv_run(&c->loop, UV_RUN_ONCE))
                ;
        return c->code == NCM_RPC_OK ? 0 : -EPROTO;
}
