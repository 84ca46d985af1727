/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A command around lib/cri's client, for tests against a real runtime:
 *
 *   cri-client ENDPOINT version
 *   cri-client ENDPOINT sandboxes
 *   cri-client ENDPOINT containers [running|SANDBOX_ID]
 *   cri-client ENDPOINT status CONTAINER_ID
 *   cri-client ENDPOINT update CONTAINER_ID CPUS [MEMS]
 *   cri-client ENDPOINT async N      N ListContainers at once on one connection, one loop
 *
 * Each answer is one JSON line; a status other than OK prints {"code": N, "message": ...} and
 * exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <nodecm/cri.h>
#include <nodecm/rpc-uv.h>

static void put_str(const char *key, const char *v, int first)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_buf_json_string(&b, v ? v : "", v ? strlen(v) : 0);
        printf("%s\"%s\": %s", first ? "" : ", ", key, b.data);
        ncm_buf_done(&b);
}

static void put_kvs(const char *key, const ncm_cri_kvs *k)
{
        printf(", \"%s\": {", key);
        for (size_t i = 0; i < k->n; i++)
                put_str(k->v[i].key, k->v[i].value, i == 0);
        printf("}");
}

static void print_container(const ncm_cri_container *c)
{
        printf("{");
        put_str("id", c->id, 1);
        put_str("sandbox", c->pod_sandbox_id, 0);
        put_str("name", c->name, 0);
        printf(", \"attempt\": %u", c->attempt);
        put_str("state", ncm_cri_container_state_name(c->state), 0);
        put_kvs("labels", &c->labels);
        if (c->resources.present) {
                printf(", \"resources\": {\"cpuShares\": %lld, \"cpuQuota\": %lld, \"cpuPeriod\": "
                       "%lld, \"memoryLimit\": %lld",
                       (long long)c->resources.r.cpu_shares, (long long)c->resources.r.cpu_quota,
                       (long long)c->resources.r.cpu_period,
                       (long long)c->resources.r.memory_limit);
                put_str("cpusetCpus", c->resources.cpuset_cpus, 0);
                put_str("cpusetMems", c->resources.cpuset_mems, 0);
                printf("}");
        }
        printf("}");
}

static int print_reply(const ncm_cri_reply *r)
{
        if (r->code != NCM_RPC_OK) {
                printf("{\"code\": %d", r->code);
                put_str("message", r->message, 0);
                printf("}\n");
                return 1;
        }
        switch (r->method) {
        case NCM_CRI_VERSION:
                printf("{");
                put_str("version", r->version.version, 1);
                put_str("runtimeName", r->version.runtime_name, 0);
                put_str("runtimeVersion", r->version.runtime_version, 0);
                put_str("runtimeApiVersion", r->version.runtime_api_version, 0);
                printf("}\n");
                break;
        case NCM_CRI_LIST_POD_SANDBOX:
                printf("[");
                for (size_t i = 0; i < r->n_sandboxes; i++) {
                        const ncm_cri_sandbox *s = &r->sandboxes[i];
                        printf("%s{", i ? ", " : "");
                        put_str("id", s->id, 1);
                        put_str("uid", s->uid, 0);
                        put_str("name", s->name, 0);
                        put_str("namespace", s->namespace, 0);
                        printf(", \"ready\": %s", s->ready ? "true" : "false");
                        put_kvs("annotations", &s->annotations);
                        printf("}");
                }
                printf("]\n");
                break;
        case NCM_CRI_LIST_CONTAINERS:
                printf("[");
                for (size_t i = 0; i < r->n_containers; i++) {
                        printf("%s", i ? ", " : "");
                        print_container(&r->containers[i]);
                }
                printf("]\n");
                break;
        case NCM_CRI_CONTAINER_STATUS:
                print_container(&r->containers[0]);
                printf("\n");
                break;
        default:
                printf("{}\n");
                break;
        }
        return 0;
}

typedef struct async_ctx {
        int left, failed, containers;
} async_ctx;

static void async_done(ncm_cri_reply *r, void *data)
{
        async_ctx *a = data;
        a->left--;
        if (r->code != NCM_RPC_OK)
                a->failed++;
        a->containers = (int)r->n_containers;
}

static int run_async(const char *endpoint, int n)
{
        uv_loop_t loop;
        ncm_rpc_uv_client *cl = NULL;
        ncm_error err = NCM_ERROR_INIT;
        async_ctx a = {n, 0, 0};
        ncm_cri_request q = {.method = NCM_CRI_LIST_CONTAINERS, .state = -1};

        uv_loop_init(&loop);
        if (ncm_rpc_uv_connect(&loop, endpoint, NULL, &cl, &err) < 0) {
                fprintf(stderr, "cri-client: %s\n", err.msg);
                return 2;
        }
        for (int i = 0; i < n; i++)
                if (ncm_cri_call(ncm_rpc_uv_client_conn(cl), &q, 10000, async_done, &a, &err) < 0) {
                        fprintf(stderr, "cri-client: %s\n", err.msg);
                        a.failed++;
                        a.left--;
                }
        while (a.left > 0)
                uv_run(&loop, UV_RUN_ONCE);
        ncm_rpc_uv_client_close(cl);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        printf("{\"calls\": %d, \"failed\": %d, \"containers\": %d}\n", n, a.failed, a.containers);
        return a.failed ? 1 : 0;
}

int main(int argc, char **argv)
{
        ncm_cri_request q = {.state = -1};
        ncm_cri_reply r = {0};
        ncm_error err = NCM_ERROR_INIT;
        int rc;

        if (argc < 3) {
                fprintf(stderr, "usage: cri-client ENDPOINT version|sandboxes|containers|status|"
                                "update|async ...\n");
                return 2;
        }
        if (strcmp(argv[2], "version") == 0) {
                q.method = NCM_CRI_VERSION;
        } else if (strcmp(argv[2], "sandboxes") == 0) {
                q.method = NCM_CRI_LIST_POD_SANDBOX;
        } else if (strcmp(argv[2], "containers") == 0) {
                q.method = NCM_CRI_LIST_CONTAINERS;
                if (argc > 3 && strcmp(argv[3], "running") == 0)
                        q.state = NCM_CRI_CONTAINER_RUNNING;
                else if (argc > 3)
                        q.pod_sandbox_id = argv[3];
        } else if (strcmp(argv[2], "status") == 0 && argc > 3) {
                q.method = NCM_CRI_CONTAINER_STATUS;
                q.id = argv[3];
        } else if (strcmp(argv[2], "update") == 0 && argc > 4) {
                q.method = NCM_CRI_UPDATE_CONTAINER_RESOURCES;
                q.id = argv[3];
                q.cpuset_cpus = argv[4];
                q.cpuset_mems = argc > 5 ? argv[5] : NULL;
        } else if (strcmp(argv[2], "async") == 0 && argc > 3) {
                return run_async(argv[1], atoi(argv[3]));
        } else {
                fprintf(stderr, "cri-client: unknown command '%s'\n", argv[2]);
                return 2;
        }
        if (ncm_cri_call_sync(argv[1], &q, 10000, &r, &err) < 0) {
                fprintf(stderr, "cri-client: %s\n", err.msg);
                return 2;
        }
        rc = print_reply(&r);
        ncm_cri_reply_done(&r);
        return rc;
}
