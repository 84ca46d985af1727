/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gRPC transport: unary round trips over a unix socket to a lib/rpc server in another
 * process (each side one thread, one libuv loop), from a lib/rpc client on one kept connection,
 * from a new connection per call (what `nodecm node ... --connect` does), and from a python3-grpcio
 * client; then the server's RSS. Every call is timed alone; median and p99 of the calls.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodecm/rpc-uv.h>
#include "benchutil.h"

#define CALLS 20000
#define CONNECT_CALLS 2000
#define IDLE_CONNS 1000

/* ---- the server (child process) ---------------------------------------------------------- */

static void h_echo(ncm_rpc_call *call, const uint8_t *req, size_t len, void *data)
{
        ncm_rpc_call_send(call, req, len);
        ncm_rpc_call_finish(call, NCM_RPC_OK, NULL);
}

static ncm_rpc_uv_server *listener;
static uv_signal_t sigterm;

static void on_term(uv_signal_t *s, int signum)
{
        uv_close((uv_handle_t *)&sigterm, NULL);
        ncm_rpc_uv_server_close(listener, false, NULL, NULL);
}

static int serve(const char *target, int ready_fd)
{
        uv_loop_t *loop = uv_default_loop();
        ncm_rpc_server *srv = ncm_rpc_server_new(NULL);
        ncm_rpc_server_add(srv, "/bench.B/Echo", h_echo, NULL);
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_rpc_uv_listen(loop, srv, target, 0600, &listener, &err) < 0) {
                fprintf(stderr, "bench-rpc: %s\n", err.msg);
                return 1;
        }
        uv_signal_init(loop, &sigterm);
        uv_signal_start(&sigterm, on_term, SIGTERM);
        (void)!write(ready_fd, "r", 1);
        close(ready_fd);
        uv_run(loop, UV_RUN_DEFAULT);
        ncm_rpc_server_free(srv);
        return 0;
}

/* ---- the C client ------------------------------------------------------------------------- */

typedef struct run {
        uv_loop_t *loop;
        const char *target;
        ncm_rpc_uv_client *cl;
        bool reconnect;
        uint8_t *req;
        size_t len;
        int done, n;
        uint64_t t0;
        double *ns;
        bool failed;
} run;

static void next_call(run *r);

static void on_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                     const ncm_rpc_md *md, size_t n, void *data)
{
        run *r = data;
        if (code != NCM_RPC_OK) {
                fprintf(stderr, "bench-rpc: call failed: %d %s\n", code, message);
                r->failed = true;
        }
        if (r->reconnect) {
                ncm_rpc_uv_client_close(r->cl);
                r->cl = NULL;
        }
        r->ns[r->done++] = (double)(bench_now_ns() - r->t0);
        if (r->done < r->n && !r->failed)
                next_call(r);
}

static void next_call(run *r)
{
        static const ncm_rpc_client_ops ops = {.on_close = on_close};
        ncm_error err = NCM_ERROR_INIT;
        r->t0 = bench_now_ns();
        if (!r->cl && ncm_rpc_uv_connect(r->loop, r->target, NULL, &r->cl, &err) < 0) {
                fprintf(stderr, "bench-rpc: %s\n", err.msg);
                r->failed = true;
                return;
        }
        if (ncm_rpc_conn_call(ncm_rpc_uv_client_conn(r->cl), "/bench.B/Echo", NULL, 0, 0, r->req,
                              r->len, &ops, r, NULL, &err) < 0) {
                fprintf(stderr, "bench-rpc: %s\n", err.msg);
                r->failed = true;
        }
}

static double first_median_ns; /* the C client on a kept connection */

static void report(const char *what, double *ns, int n)
{
        char m[32], p[32];
        qsort(ns, (size_t)n, sizeof(*ns), bench_cmp_double);
        if (first_median_ns == 0)
                first_median_ns = ns[n / 2];
        printf("| %s | %d | %s | %s |\n", what, n, bench_fmt_ns(ns[n / 2], m),
               bench_fmt_ns(ns[(size_t)n * 99 / 100], p));
}

static bool c_client(const char *target, size_t len, bool reconnect, int n, const char *what)
{
        uv_loop_t loop;
        uv_loop_init(&loop);
        run r = {.loop = &loop, .target = target, .reconnect = reconnect, .len = len, .n = n};
        r.req = calloc(1, len ? len : 1);
        r.ns = calloc((size_t)n, sizeof(double));
        /* warm-up: the first calls pay for page faults and the connection's set-up */
        r.n = n / 10;
        next_call(&r);
        /* The kept connection keeps the loop alive: run until the calls are done. */
        while (r.done < r.n && !r.failed && uv_run(&loop, UV_RUN_ONCE))
                ;
        r.done = 0;
        r.n = n;
        next_call(&r);
        while (r.done < r.n && !r.failed && uv_run(&loop, UV_RUN_ONCE))
                ;
        if (r.cl)
                ncm_rpc_uv_client_close(r.cl);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        bool ok = !r.failed && r.done == n;
        if (ok)
                report(what, r.ns, n);
        free(r.req);
        free(r.ns);
        return ok;
}

/* n idle connections held open (each has done its handshake), to weigh a connection. */
static void on_idle_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                          const ncm_rpc_md *md, size_t n, void *data)
{
        (*(int *)data)++;
}

static ncm_rpc_uv_client **hold_connections(uv_loop_t *loop, const char *target, int n)
{
        static const ncm_rpc_client_ops ops = {.on_close = on_idle_close};
        ncm_rpc_uv_client **cl = calloc((size_t)n, sizeof(*cl));
        int done = 0;
        for (int i = 0; i < n; i++) {
                if (ncm_rpc_uv_connect(loop, target, NULL, &cl[i], NULL) < 0)
                        continue;
                ncm_rpc_conn_call(ncm_rpc_uv_client_conn(cl[i]), "/bench.B/Echo", NULL, 0, 0,
                                  (const uint8_t *)"x", 1, &ops, &done, NULL, NULL);
        }
        while (done < n && uv_run(loop, UV_RUN_ONCE))
                ;
        return cl;
}

/* ---- the python client -------------------------------------------------------------------- */

static const char py_client[] =
                "import sys, time, grpc\n"
                "target, size, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])\n"
                "ch = grpc.insecure_channel(target)\n"
                "call = ch.unary_unary('/bench.B/Echo')\n"
                "req = b'\\0' * size\n"
                "for i in range(n // 10):\n"
                "    call(req)\n"
                "ns = []\n"
                "for i in range(n):\n"
                "    t = time.perf_counter_ns()\n"
                "    call(req)\n"
                "    ns.append(time.perf_counter_ns() - t)\n"
                "print(' '.join(map(str, ns)))\n";

static bool python_client(const char *target, size_t len, int n, const char *what)
{
        char cmd[512];
        snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"$NCM_BENCH_PY\" %s %zu %d 2>/dev/null",
                 target, len, n);
        setenv("NCM_BENCH_PY", py_client, 1);
        FILE *p = popen(cmd, "r");
        if (!p)
                return false;
        double *ns = calloc((size_t)n, sizeof(double));
        int k = 0;
        while (k < n && fscanf(p, "%lf", &ns[k]) == 1)
                k++;
        bool ok = pclose(p) == 0 && k == n;
        if (ok)
                report(what, ns, n);
        free(ns);
        return ok;
}

int main(void)
{
        char dir[] = "/tmp/ncm-bench-rpc-XXXXXX";
        if (!mkdtemp(dir))
                return 1;
        char target[128];
        snprintf(target, sizeof(target), "unix:%s/b.sock", dir);
        int fds[2];
        if (pipe(fds) < 0)
                return 1;
        pid_t pid = fork();
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL); /* the server never outlives the bench */
                close(fds[0]);
                _exit(serve(target, fds[1]));
        }
        close(fds[1]);
        char c;
        if (read(fds[0], &c, 1) != 1) {
                fprintf(stderr, "bench-rpc: server did not start\n");
                return 1;
        }
        close(fds[0]);
        long rss_start = bench_status_kb(pid, "VmRSS:");

        printf("## gRPC transport (lib/rpc): unary round trip over a unix socket\n\n");
        printf("The server is a lib/rpc echo server in its own process (one thread, one libuv "
               "loop); each call\nis timed alone, sequentially, after a warm-up. Target for the "
               "whole Admit round trip of\nnodecmd's control API (issue 11): median <= 300 us; "
               "these rows are what the transport\ncosts toward it.\n\n");
        printf("| client | calls | median | p99 |\n|---|---|---|---|\n");
        bool ok = c_client(target, 64, false, CALLS, "C (lib/rpc), 64 B, one connection");
        ok &= c_client(target, 4096, false, CALLS, "C (lib/rpc), 4 KiB, one connection");
        ok &= c_client(target, 64, true, CONNECT_CALLS,
                       "C (lib/rpc), 64 B, connect + call + close");
        long rss_after_c = bench_status_kb(pid, "VmRSS:");
        if (access("/usr/bin/python3", X_OK) == 0 &&
            system("/usr/bin/python3 -c 'import grpc' 2>/dev/null") == 0) {
                ok &= python_client(target, 64, CALLS / 4, "python3-grpcio 1.51, 64 B");
                ok &= python_client(target, 4096, CALLS / 4, "python3-grpcio 1.51, 4 KiB");
        } else {
                printf("| python3-grpcio | - | not installed | - |\n");
        }

        uv_loop_t loop;
        uv_loop_init(&loop);
        ncm_rpc_uv_client **held = hold_connections(&loop, target, IDLE_CONNS);
        long rss_conns = bench_status_kb(pid, "VmRSS:");
        for (int i = 0; i < IDLE_CONNS; i++)
                if (held[i])
                        ncm_rpc_uv_client_close(held[i]);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        free(held);

        printf("\nThe transport's share of the 300 us Admit target: %.0f%% for a C client on a "
               "kept "
               "connection.\n",
               first_median_ns / 300e3 * 100);
        printf("\n| server RSS | kB |\n|---|---|\n");
        printf("| started, listening | %ld |\n", rss_start);
        printf("| after the C runs above | %ld |\n", rss_after_c);
        printf("| with %d idle connections open | %ld (%.1f kB per connection) |\n", IDLE_CONNS,
               rss_conns, (double)(rss_conns - rss_after_c) / IDLE_CONNS);

        kill(pid, SIGTERM);
        int st;
        waitpid(pid, &st, 0);
        rmdir(dir);
        return ok ? 0 : 1;
}
