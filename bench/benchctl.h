/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A control-API client for the benches that drive a nodecmd: one kept connection on its own
 * loop, one call at a time, waited for.
 */
#ifndef NCM_BENCHCTL_H
#define NCM_BENCHCTL_H

#include <stdbool.h>

#include <nodecm/ctl.h>
#include <nodecm/rpc-uv.h>

typedef struct bench_client {
        uv_loop_t loop;
        ncm_rpc_uv_client *cl;
        bool done;
        ncm_rpc_code code;
        char message[256]; /* the status message of the last call */
} bench_client;

/* Connect to SOCK with OPTS (NULL: the defaults); -1 with ERR set. */
int bench_client_open(bench_client *c, const char *sock, const ncm_rpc_opts *opts, ncm_error *err);
void bench_client_close(bench_client *c);
/* Call M with Q and wait for its end: 0 when it ended OK, else -EPROTO (or the sending error). */
int bench_client_call(bench_client *c, ncm_ctl_method m, const ncm_ctl_request *q);

#endif
