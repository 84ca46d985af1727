/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hostile.h"

static int failures;

void check(const char *name, bool ok, const char *detail)
{
        printf("%s - %s%s%s\n", ok ? "ok" : "not ok", name, detail ? " " : "",
               detail ? detail : "");
        fflush(stdout);
        if (!ok)
                failures++;
}

int check_failures(void)
{
        return failures;
}

long status_kb(pid_t pid, const char *key)
{
        char path[64], line[256];
        size_t kl = strlen(key);
        long v = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        f = fopen(path, "r");
        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, key, kl) == 0)
                        v = strtol(line + kl, NULL, 10);
        if (f)
                fclose(f);
        return v;
}

bool server_closes(int fd)
{
        char buf[4096];

        for (;;) {
                ssize_t n = recv(fd, buf, sizeof(buf), 0);
                if (n == 0 || (n < 0 && errno == ECONNRESET))
                        return true;
                if (n < 0)
                        return false;
        }
}

static void on_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                     const ncm_rpc_md *md, size_t n, void *data)
{
        result *r = data;

        r->done++;
        if (code == NCM_RPC_OK)
                r->ok++;
        r->last_code = code;
        snprintf(r->last_msg, sizeof(r->last_msg), "%s", message);
}

int calls_at_once(int n, const char *target, const ncm_rpc_opts *o, const char *path,
                  const uint8_t *req, size_t len, result *res)
{
        ncm_rpc_client_ops ops = {.on_close = on_close};
        ncm_rpc_uv_client **cl = calloc((size_t)n, sizeof(*cl));
        uv_loop_t loop;

        uv_loop_init(&loop);
        *res = (result){0};
        for (int i = 0; i < n; i++) {
                ncm_error err = NCM_ERROR_INIT;
                if (ncm_rpc_uv_connect(&loop, target, o, &cl[i], &err) < 0 ||
                    ncm_rpc_conn_call(ncm_rpc_uv_client_conn(cl[i]), path, NULL, 0, 0, req, len,
                                      &ops, res, NULL, &err) < 0) {
                        printf("# call %d: %s\n", i, err.msg);
                        res->done++;
                }
        }
        /* run until every call ended, then close the clients */
        while (res->done < n && uv_run(&loop, UV_RUN_ONCE))
                ;
        for (int i = 0; i < n; i++)
                if (cl[i])
                        ncm_rpc_uv_client_close(cl[i]);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        free(cl);
        return res->ok;
}
