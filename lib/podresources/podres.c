/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod resources API v1 (and v1alpha1's List) answered from a node, and its server.
 *
 * Responses are built as protobuf-c message trees whose every node is allocated from one
 * pool, packed, and the pool freed: a List of thousands of pods is one pass and one free.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nodecm/cpuset.h>
#include <nodecm/devicemanager.h>
#include <nodecm/podresources.h>
#include <nodecm/rpc-uv.h>

#include "base/utf8.h"
#include "pb-util.h"
#include "podresources-v1.pb-c.h"
#include "podresources-v1alpha1.pb-c.h"

static const char *const paths[NCM_PODRES_N_METHODS] = {
                "/v1.PodResourcesLister/List",
                "/v1.PodResourcesLister/GetAllocatableResources",
                "/v1.PodResourcesLister/Get",
                "/v1alpha1.PodResourcesLister/List",
};

const char *ncm_podres_method_path(ncm_podres_method m)
{
        return (unsigned)m < NCM_PODRES_N_METHODS ? paths[m] : NULL;
}

int ncm_podres_method_from_path(const char *path)
{
        for (int i = 0; i < NCM_PODRES_N_METHODS; i++)
                if (path && strcmp(path, paths[i]) == 0)
                        return i;
        return -1;
}

bool ncm_podres_get_enabled(const ncm_node *n)
{
        /* KubeletPodResourcesGet: alpha (off) in 1.27, beta and on from 1.34 */
        bool def = ncm_kubelet_version_at_least(ncm_node_kubelet_version(n), 1, 34);
        return ncm_node_config_feature_gate(ncm_node_get_config(n), "KubeletPodResourcesGet", def);
}

/* ---- one response's allocations: an arena (pb-util.h) ---- */

/* Append PTR to the pointer array *V (*N entries, capacity *CAP). */
static void push(ncm__pb_arena *p, void ***v, size_t *n, size_t *cap, void *ptr)
{
        if (p->failed || !ptr) {
                p->failed = true;
                return;
        }
        if (*n == *cap) {
                size_t nc = *cap ? *cap * 2 : 4;
                void **nv = ncm__pb_alloc(p, nc * sizeof(*nv));
                if (!nv)
                        return;
                if (*n)
                        memcpy(nv, *v, *n * sizeof(*nv));
                *v = nv;
                *cap = nc;
        }
        (*v)[(*n)++] = ptr;
}

/* ---- devices ---- */

static V1__TopologyInfo *topology_of(ncm__pb_arena *p, int64_t node)
{
        V1__TopologyInfo *t = ncm__pb_alloc(p, sizeof(*t));
        V1__NUMANode *nn = ncm__pb_alloc(p, sizeof(*nn));
        V1__NUMANode **nv = ncm__pb_alloc(p, sizeof(*nv));
        if (!t || !nn || !nv)
                return NULL;
        v1__topology_info__init(t);
        v1__numanode__init(nn);
        nn->id = node;
        nv[0] = nn;
        t->n_nodes = 1;
        t->nodes = nv;
        return t;
}

/* One ContainerDevices with one device, on NODE (-1: without topology). */
static V1__ContainerDevices *one_device(ncm__pb_arena *p, const char *resource, const char *id,
                                        int64_t node)
{
        V1__ContainerDevices *d = ncm__pb_alloc(p, sizeof(*d));
        char **ids = ncm__pb_alloc(p, sizeof(*ids));
        if (!d || !ids)
                return NULL;
        v1__container_devices__init(d);
        d->resource_name = ncm__pb_str(p, resource);
        ids[0] = ncm__pb_str(p, id);
        d->n_device_ids = 1;
        d->device_ids = ids;
        if (node != NCM_DEVMGR_NO_TOPOLOGY)
                d->topology = topology_of(p, node);
        if (!d->resource_name || !ids[0] || (node != NCM_DEVMGR_NO_TOPOLOGY && !d->topology))
                return NULL;
        return d;
}

typedef struct id_node {
        const char *id;
        int64_t node;
} id_node;

static int cmp_id_node(const void *a, const void *b)
{
        const id_node *x = a, *y = b;
        int c = strcmp(x->id, y->id);
        if (c)
                return c;
        return x->node < y->node ? -1 : x->node > y->node;
}

/*
 * The kubelet's containerDevicesFromResourceDeviceInstances over a container's devices: one
 * entry per (resource, device, NUMA node), a device without topology once without it.
 */
static void container_devices(ncm__pb_arena *p, const ncm_devmgr *m, const char *uid,
                              const char *name, V1__ContainerDevices ***ret, size_t *ret_n)
{
        ncm_devmgr_numa_assignment *as = NULL;
        size_t na = 0, cap = 0;

        *ret = NULL;
        *ret_n = 0;
        if (ncm_devmgr_container_numa(m, uid, name, &as, &na) < 0) {
                p->failed = true;
                return;
        }
        for (size_t i = 0; i < na && !p->failed; i++) {
                size_t total = 0, k = 0;
                id_node *v;
                for (size_t j = 0; j < as[i].n_numa; j++)
                        total += as[i].numa[j].n_ids;
                if (!total)
                        continue;
                v = malloc(total * sizeof(*v));
                if (!v) {
                        p->failed = true;
                        break;
                }
                for (size_t j = 0; j < as[i].n_numa; j++)
                        for (size_t x = 0; x < as[i].numa[j].n_ids; x++)
                                v[k++] = (id_node){as[i].numa[j].ids[x], as[i].numa[j].node};
                qsort(v, total, sizeof(*v), cmp_id_node);
                for (size_t x = 0; x < total; x++) {
                        /* a device listed twice under one node counts once */
                        if (x && cmp_id_node(&v[x - 1], &v[x]) == 0)
                                continue;
                        push(p, (void ***)ret, ret_n, &cap,
                             one_device(p, as[i].resource, v[x].id, v[x].node));
                }
                free(v);
        }
        ncm_devmgr_numa_assignments_free(as, na);
}

static void cpu_ids(ncm__pb_arena *p, const ncm_cpuset *s, int64_t **ret, size_t *ret_n)
{
        int n = s ? ncm_cpuset_weight(s) : 0, k = 0;
        int64_t *v;

        *ret = NULL;
        *ret_n = 0;
        if (n <= 0)
                return;
        v = ncm__pb_alloc(p, (size_t)n * sizeof(*v));
        if (!v)
                return;
        NCM_CPUSET_FOREACH(cpu, s)
        v[k++] = cpu;
        *ret = v;
        *ret_n = (size_t)k;
}

/*
 * The memory manager's blocks as ContainerMemory (containerMemoryFromBlock): its type, its size
 * and every NUMA node of its affinity; a block with no node still has an (empty) topology.
 */
static void container_memory(ncm__pb_arena *p, const ncm_mem_block *b, size_t n,
                             V1__ContainerMemory ***ret, size_t *ret_n)
{
        size_t cap = 0;

        *ret = NULL;
        *ret_n = 0;
        for (size_t i = 0; i < n; i++) {
                V1__ContainerMemory *m = ncm__pb_alloc(p, sizeof(*m));
                V1__TopologyInfo *t = ncm__pb_alloc(p, sizeof(*t));
                V1__NUMANode **nodes =
                                b[i].nnuma ? ncm__pb_alloc(p, b[i].nnuma * sizeof(*nodes)) : NULL;
                if (!m || !t || (b[i].nnuma && !nodes))
                        return;
                v1__container_memory__init(m);
                v1__topology_info__init(t);
                m->memory_type = ncm__pb_str(p, b[i].type);
                m->size = b[i].size;
                for (size_t k = 0; k < b[i].nnuma; k++) {
                        nodes[k] = ncm__pb_alloc(p, sizeof(*nodes[k]));
                        if (!nodes[k])
                                return;
                        v1__numanode__init(nodes[k]);
                        nodes[k]->id = b[i].numa[k];
                }
                t->nodes = nodes;
                t->n_nodes = b[i].nnuma;
                m->topology = t;
                push(p, (void ***)ret, ret_n, &cap, m);
        }
}

/* ---- v1 ---- */

static V1__ContainerResources *container_resources(ncm__pb_arena *p, const ncm_node *n,
                                                   const ncm_pod *pod, const ncm_container *c)
{
        V1__ContainerResources *r = ncm__pb_alloc(p, sizeof(*r));
        if (!r)
                return NULL;
        v1__container_resources__init(r);
        r->name = ncm__pb_str(p, c->name);
        container_devices(p, ncm_node_devmgr(n), pod->uid, c->name, &r->devices, &r->n_devices);
        /* the CPU manager's GetCPUs: the container's own CPUs, none when it shares the
         * ncm__pb_arena */
        cpu_ids(p, ncm_cpu_state_get(ncm_node_cpu_state(n), pod->uid, c->name), &r->cpu_ids,
                &r->n_cpu_ids);
        /* the memory manager's GetMemory: its blocks (Static policy only) */
        {
                const ncm_mem_container *mc = ncm_mem_state_container(ncm_node_memory_state(n),
                                                                      pod->uid, c->name);
                if (mc)
                        container_memory(p, mc->blocks, mc->n, &r->memory, &r->n_memory);
        }
        return r;
}

static V1__PodResources *pod_resources(ncm__pb_arena *p, const ncm_node *n, const ncm_pod *pod)
{
        V1__PodResources *r = ncm__pb_alloc(p, sizeof(*r));
        size_t cap = 0;

        if (!r)
                return NULL;
        v1__pod_resources__init(r);
        r->name = ncm__pb_str(p, pod->name);
        r->namespace_ = ncm__pb_str(p, pod->ns);
        /* restartable init containers (sidecars) in spec order, then app containers */
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (pod->init_containers[i].sidecar)
                        push(p, (void ***)&r->containers, &r->n_containers, &cap,
                             container_resources(p, n, pod, &pod->init_containers[i]));
        for (size_t i = 0; i < pod->n_containers; i++)
                push(p, (void ***)&r->containers, &r->n_containers, &cap,
                     container_resources(p, n, pod, &pod->containers[i]));
        return r;
}

static int pack(ncm__pb_arena *p, const ProtobufCMessage *m, ncm_buf *reply, ncm_error *err)
{
        if (p->failed || ncm__pb_append(m, reply) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        return 0;
}

static int list_v1(ncm__pb_arena *p, const ncm_node *n, ncm_buf *reply, ncm_error *err)
{
        V1__ListPodResourcesResponse resp = V1__LIST_POD_RESOURCES_RESPONSE__INIT;
        size_t cap = 0;

        for (size_t i = 0; i < ncm_node_num_pods(n); i++) {
                const ncm_pod *pod = ncm_node_pod_at(n, i);
                if (pod)
                        push(p, (void ***)&resp.pod_resources, &resp.n_pod_resources, &cap,
                             pod_resources(p, n, pod));
        }
        return pack(p, &resp.base, reply, err);
}

static int get_allocatable(ncm__pb_arena *p, const ncm_node *n, ncm_buf *reply, ncm_error *err)
{
        V1__AllocatableResourcesResponse resp = V1__ALLOCATABLE_RESOURCES_RESPONSE__INIT;
        ncm_devmgr_inventory inv = {0};
        ncm_autoptr(ncm_cpuset) cpus = ncm_cpuset_new();
        size_t cap = 0;

        if (!cpus || ncm_devmgr_inventory_get(ncm_node_devmgr(n), &inv) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        /* every healthy device, allocated or not: a capacity view */
        for (size_t i = 0; i < inv.n; i++)
                for (size_t k = 0; k < inv.v[i].n_devices; k++) {
                        const ncm_devmgr_device_info *d = &inv.v[i].devices[k];
                        if (!d->healthy)
                                continue;
                        if (!d->topology) {
                                push(p, (void ***)&resp.devices, &resp.n_devices, &cap,
                                     one_device(p, inv.v[i].resource, d->id,
                                                NCM_DEVMGR_NO_TOPOLOGY));
                                continue;
                        }
                        /* a TopologyInfo without nodes gives no entry, as in the kubelet */
                        for (size_t j = 0; j < d->n_numa; j++)
                                push(p, (void ***)&resp.devices, &resp.n_devices, &cap,
                                     one_device(p, inv.v[i].resource, d->id, d->numa[j]));
                }
        ncm_devmgr_inventory_done(&inv);
        ncm_cpu_policy_allocatable(ncm_node_cpu_policy(n), cpus);
        cpu_ids(p, cpus, &resp.cpu_ids, &resp.n_cpu_ids);
        /* the memory manager's GetAllocatableMemory: per node and type (Static policy only) */
        {
                ncm_mem_block *blocks = NULL;
                size_t nb = 0;
                if (ncm_mem_policy_allocatable(ncm_node_memory_policy(n), ncm_node_memory_state(n),
                                               &blocks, &nb) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                container_memory(p, blocks, nb, &resp.memory, &resp.n_memory);
                ncm_mem_blocks_free(blocks, nb);
        }
        return pack(p, &resp.base, reply, err);
}

static int get_v1(ncm__pb_arena *p, const ncm_node *n, const uint8_t *req, size_t len,
                  ncm_buf *reply, ncm_rpc_code *code, ncm_error *err)
{
        V1__GetPodResourcesRequest *q = v1__get_pod_resources_request__unpack(NULL, len, req);
        V1__GetPodResourcesResponse resp = V1__GET_POD_RESOURCES_RESPONSE__INIT;
        const ncm_pod *found = NULL;
        int r;

        if (!q) {
                *code = NCM_RPC_INTERNAL;
                return ncm_error_set(err, EINVAL,
                                     "grpc: error unmarshalling request: proto: "
                                     "cannot parse invalid wire-format data");
        }
        if (!ncm__utf8_valid(q->pod_name, strlen(q->pod_name)) ||
            !ncm__utf8_valid(q->pod_namespace, strlen(q->pod_namespace))) {
                v1__get_pod_resources_request__free_unpacked(q, NULL);
                *code = NCM_RPC_INTERNAL;
                return ncm_error_set(err, EINVAL,
                                     "grpc: error unmarshalling request: string "
                                     "field contains invalid UTF-8");
        }
        for (size_t i = 0; i < ncm_node_num_pods(n) && !found; i++) {
                const ncm_pod *pod = ncm_node_pod_at(n, i);
                if (pod && strcmp(pod->name, q->pod_name) == 0 &&
                    strcmp(pod->ns, q->pod_namespace) == 0)
                        found = pod;
        }
        if (!found) {
                *code = NCM_RPC_UNKNOWN;
                r = ncm_error_set(err, ENOENT, "pod %s in namespace %s not found", q->pod_name,
                                  q->pod_namespace);
                v1__get_pod_resources_request__free_unpacked(q, NULL);
                return r;
        }
        v1__get_pod_resources_request__free_unpacked(q, NULL);
        resp.pod_resources = pod_resources(p, n, found);
        return pack(p, &resp.base, reply, err);
}

/* ---- v1alpha1 ---- */

static int list_v1alpha1(ncm__pb_arena *p, const ncm_node *n, ncm_buf *reply, ncm_error *err)
{
        V1alpha1__ListPodResourcesResponse resp = V1ALPHA1__LIST_POD_RESOURCES_RESPONSE__INIT;
        size_t pcap = 0;

        for (size_t i = 0; i < ncm_node_num_pods(n) && !p->failed; i++) {
                const ncm_pod *pod = ncm_node_pod_at(n, i);
                V1alpha1__PodResources *pr;
                size_t ccap = 0;
                if (!pod)
                        continue;
                pr = ncm__pb_alloc(p, sizeof(*pr));
                if (!pr)
                        break;
                v1alpha1__pod_resources__init(pr);
                pr->name = ncm__pb_str(p, pod->name);
                pr->namespace_ = ncm__pb_str(p, pod->ns);
                /* v1alpha1 lists the app containers only, devices without topology */
                for (size_t c = 0; c < pod->n_containers && !p->failed; c++) {
                        V1alpha1__ContainerResources *cr = ncm__pb_alloc(p, sizeof(*cr));
                        V1__ContainerDevices **dv = NULL;
                        size_t nd = 0, dcap = 0;
                        if (!cr)
                                break;
                        v1alpha1__container_resources__init(cr);
                        cr->name = ncm__pb_str(p, pod->containers[c].name);
                        container_devices(p, ncm_node_devmgr(n), pod->uid, pod->containers[c].name,
                                          &dv, &nd);
                        for (size_t k = 0; k < nd && !p->failed; k++) {
                                V1alpha1__ContainerDevices *d = ncm__pb_alloc(p, sizeof(*d));
                                if (!d)
                                        break;
                                v1alpha1__container_devices__init(d);
                                d->resource_name = dv[k]->resource_name;
                                d->n_device_ids = dv[k]->n_device_ids;
                                d->device_ids = dv[k]->device_ids;
                                push(p, (void ***)&cr->devices, &cr->n_devices, &dcap, d);
                        }
                        push(p, (void ***)&pr->containers, &pr->n_containers, &ccap, cr);
                }
                push(p, (void ***)&resp.pod_resources, &resp.n_pod_resources, &pcap, pr);
        }
        return pack(p, &resp.base, reply, err);
}

/* The empty request messages: anything that is a valid message is accepted, as by grpc-go. */
static bool empty_message_ok(const uint8_t *req, size_t len)
{
        V1__ListPodResourcesRequest *q = v1__list_pod_resources_request__unpack(NULL, len, req);
        if (!q)
                return false;
        v1__list_pod_resources_request__free_unpacked(q, NULL);
        return true;
}

int ncm_podres_handle(const ncm_node *n, ncm_podres_method m, bool get_enabled, const uint8_t *req,
                      size_t len, ncm_buf *reply, ncm_rpc_code *ret_code, ncm_error *err)
{
        static const uint8_t none[1];
        ncm__pb_arena p = {0};
        ncm_rpc_code code = NCM_RPC_OK;
        int r;

        if (!len)
                req = none;
        if (m == NCM_PODRES_GET && !get_enabled) {
                *ret_code = NCM_RPC_UNKNOWN;
                return ncm_error_set(err, EPERM, "PodResources API Get method disabled");
        }
        if (m != NCM_PODRES_GET && !empty_message_ok(req, len)) {
                *ret_code = NCM_RPC_INTERNAL;
                return ncm_error_set(err, EINVAL,
                                     "grpc: error unmarshalling request: proto: "
                                     "cannot parse invalid wire-format data");
        }
        switch (m) {
        case NCM_PODRES_LIST:
                r = list_v1(&p, n, reply, err);
                break;
        case NCM_PODRES_GET_ALLOCATABLE:
                r = get_allocatable(&p, n, reply, err);
                break;
        case NCM_PODRES_GET:
                r = get_v1(&p, n, req, len, reply, &code, err);
                break;
        case NCM_PODRES_LIST_V1ALPHA1:
                r = list_v1alpha1(&p, n, reply, err);
                break;
        default:
                code = NCM_RPC_UNIMPLEMENTED;
                r = ncm_error_set(err, EINVAL, "unknown method");
        }
        ncm__pb_arena_done(&p);
        if (r == -ENOMEM)
                code = NCM_RPC_RESOURCE_EXHAUSTED;
        *ret_code = r < 0 ? code : NCM_RPC_OK;
        return r;
}

/* ---- the server ---- */

struct ncm_podres_server {
        uv_loop_t *loop;
        ncm_node *node;
        ncm_rpc_server *srv;
        ncm_rpc_uv_server *listener;
        int get;
        /* the token bucket of the kubelet's rate limiter */
        double qps;
        double burst;
        double tokens;
        uint64_t last_ms;
        /* metrics, by API version (0: v1, 1: v1alpha1) */
        uint64_t requests_total[2];
        uint64_t requests[NCM_PODRES_N_METHODS];
        uint64_t errors_get;
        uint64_t rejected;
        void (*schedule)(void *data, void (*run)(void *arg), void *arg);
        void *schedule_data;
        size_t scheduled; /* calls waiting for their turn on the node */
        bool closed;      /* the listener closed: free once nothing is scheduled */
        void (*on_closed)(void *data);
        void *closed_data;
};

/* A call waiting for its turn on the node. */
typedef struct podres_call {
        ncm_podres_server *s;
        ncm_rpc_call *call;
        int method;
        uint8_t *req;
        size_t len;
} podres_call;

static void server_free(ncm_podres_server *s);

static bool rate_allow(ncm_podres_server *s)
{
        uint64_t now = uv_now(s->loop);
        s->tokens += (double)(now - s->last_ms) * s->qps / 1000.0;
        if (s->tokens > s->burst)
                s->tokens = s->burst;
        s->last_ms = now;
        if (s->tokens < 1.0)
                return false;
        s->tokens -= 1.0;
        return true;
}

/* The call's turn on the node has come: answer it. */
static void run_call(void *arg)
{
        podres_call *pc = arg;
        ncm_podres_server *s = pc->s;
        ncm_buf reply = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_rpc_code code = NCM_RPC_OK;
        int m = pc->method, r;
        bool get;

        s->scheduled--;
        if (ncm_rpc_call_is_cancelled(pc->call) || !s->node) {
                /* its client left, or the server closed, while it waited */
                ncm_rpc_call_finish(pc->call, NCM_RPC_CANCELLED, NULL);
        } else {
                get = s->get < 0 ? ncm_podres_get_enabled(s->node) : s->get > 0;
                r = ncm_podres_handle(s->node, (ncm_podres_method)m, get, pc->req, pc->len, &reply,
                                      &code, &err);
                if (r < 0) {
                        if (m == NCM_PODRES_GET)
                                s->errors_get++;
                        ncm_rpc_call_finish(pc->call, code, err.msg);
                } else {
                        r = ncm_rpc_call_send(pc->call, (const uint8_t *)reply.data, reply.len);
                        ncm_rpc_call_finish(pc->call,
                                            r < 0 ? NCM_RPC_RESOURCE_EXHAUSTED : NCM_RPC_OK,
                                            r == -EMSGSIZE ? "grpc: trying to send message "
                                                             "larger than max"
                                            : r < 0        ? "cannot send the response"
                                                           : NULL);
                }
        }
        ncm_buf_done(&reply);
        free(pc->req);
        free(pc);
        if (s->closed && !s->scheduled)
                server_free(s);
}

static void on_call(ncm_rpc_call *call, const uint8_t *req, size_t len, void *data)
{
        ncm_podres_server *s = data;
        int m = ncm_podres_method_from_path(ncm_rpc_call_path(call));
        podres_call *pc;

        if (m < 0) {
                ncm_rpc_call_finish(call, NCM_RPC_UNIMPLEMENTED, "unknown method");
                return;
        }
        /* the limiter is a unary interceptor: it runs before the handler and its metrics */
        if (!rate_allow(s)) {
                s->rejected++;
                ncm_rpc_call_finish(call, NCM_RPC_RESOURCE_EXHAUSTED, "rejected by rate limit");
                return;
        }
        s->requests_total[m == NCM_PODRES_LIST_V1ALPHA1]++;
        s->requests[m]++;
        pc = calloc(1, sizeof(*pc));
        if (pc && len && !(pc->req = malloc(len))) {
                free(pc);
                pc = NULL;
        }
        if (!pc) {
                ncm_rpc_call_finish(call, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory");
                return;
        }
        if (len)
                memcpy(pc->req, req, len);
        pc->s = s;
        pc->call = call;
        pc->method = m;
        pc->len = len;
        s->scheduled++;
        if (s->schedule)
                s->schedule(s->schedule_data, run_call, pc);
        else
                run_call(pc);
}

/* mkdir -p of the socket's directory, 0750. */
static int make_parent(const char *path, ncm_error *err)
{
        char *d = strdup(path);
        int r = 0;

        if (!d)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (char *p = d + 1; *p && r == 0; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(d, 0750) < 0 && errno != EEXIST)
                        r = ncm_error_errno(err, errno, "create '%s'", d);
                *p = '/';
        }
        free(d);
        return r;
}

int ncm_podres_server_new(uv_loop_t *loop, ncm_node *n, const ncm_podres_opts *o,
                          ncm_podres_server **ret, ncm_error *err)
{
        ncm_podres_server *s;
        ncm_rpc_opts ro;
        char path[256];
        int r;

        if (!o || !o->socket)
                return ncm_error_set(err, EINVAL, "pod resources: no socket");
        r = ncm_rpc_uv_target_path(o->socket, path, sizeof(path), err);
        if (r < 0)
                return r;
        r = make_parent(path, err);
        if (r < 0)
                return r;
        s = calloc(1, sizeof(*s));
        if (!s)
                return ncm_error_set(err, ENOMEM, "out of memory");
        s->loop = loop;
        s->node = n;
        s->get = o->get;
        s->schedule = o->schedule;
        s->schedule_data = o->schedule_data;
        s->qps = o->qps ? o->qps : 100;
        s->burst = o->burst ? o->burst : 10;
        s->tokens = s->burst;
        s->last_ms = uv_now(loop);
        if (o->rpc)
                ro = *o->rpc;
        else
                ncm_rpc_opts_default(&ro);
        ro.user_agent = NULL;
        s->srv = ncm_rpc_server_new(&ro);
        for (int m = 0; s->srv && m < NCM_PODRES_N_METHODS; m++)
                if (ncm_rpc_server_add(s->srv, paths[m], on_call, s) < 0) {
                        s->srv = ncm_rpc_server_free(s->srv);
                        break;
                }
        if (!s->srv) {
                free(s);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        /* the kubelet creates the socket with the process umask, no chmod */
        r = ncm_rpc_uv_listen(loop, s->srv, path, 0, &s->listener, err);
        if (r < 0) {
                ncm_rpc_server_free(s->srv);
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

void ncm_podres_server_set_node(ncm_podres_server *s, ncm_node *n)
{
        s->node = n;
}

static void server_free(ncm_podres_server *s)
{
        if (s->on_closed)
                s->on_closed(s->closed_data);
        ncm_rpc_server_free(s->srv);
        free(s);
}

static void server_closed(void *data)
{
        ncm_podres_server *s = data;
        /* calls still waiting for the node finish first (they hold the server) */
        s->closed = true;
        s->node = NULL;
        if (!s->scheduled)
                server_free(s);
}

void ncm_podres_server_close(ncm_podres_server *s, void (*on_closed)(void *data), void *data)
{
        s->on_closed = on_closed;
        s->closed_data = data;
        ncm_rpc_uv_server_close(s->listener, false, server_closed, s);
}

void ncm_podres_server_metrics(const ncm_podres_server *s, ncm_buf *out)
{
        static const struct {
                const char *name, *help;
                int method; /* -1: total; -2: errors of Get */
        } rows[] = {
                        {"kubelet_pod_resources_endpoint_requests_total",
                         "Cumulative number of requests to the PodResource endpoint. Broken down "
                         "by server api version.",
                         -1},
                        {"kubelet_pod_resources_endpoint_requests_list",
                         "Number of requests to the PodResource List endpoint. Broken down by "
                         "server api version.",
                         NCM_PODRES_LIST},
                        {"kubelet_pod_resources_endpoint_requests_get_allocatable",
                         "Number of requests to the PodResource GetAllocatableResources "
                         "endpoint. Broken down by server api version.",
                         NCM_PODRES_GET_ALLOCATABLE},
                        {"kubelet_pod_resources_endpoint_requests_get",
                         "Number of requests to the PodResource Get endpoint. Broken down by "
                         "server api version.",
                         NCM_PODRES_GET},
                        {"kubelet_pod_resources_endpoint_errors_get",
                         "Number of requests to the PodResource Get endpoint which returned "
                         "error. Broken down by server api version.",
                         -2},
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                ncm_buf_printf(out, "# HELP %s %s\n# TYPE %s counter\n", rows[i].name, rows[i].help,
                               rows[i].name);
                if (rows[i].method == -1) {
                        ncm_buf_printf(out,
                                       "%s{server_api_version=\"v1\"} %" PRIu64 "\n"
                                       "%s{server_api_version=\"v1alpha1\"} %" PRIu64 "\n",
                                       rows[i].name, s->requests_total[0], rows[i].name,
                                       s->requests_total[1]);
                } else {
                        uint64_t v = rows[i].method == -2 ? s->errors_get
                                                          : s->requests[rows[i].method];
                        ncm_buf_printf(out, "%s{server_api_version=\"v1\"} %" PRIu64 "\n",
                                       rows[i].name, v);
                }
        }
        ncm_buf_printf(out,
                       "# HELP nodecm_pod_resources_rejected_total Pod resources calls refused "
                       "by the rate limit.\n"
                       "# TYPE nodecm_pod_resources_rejected_total counter\n"
                       "nodecm_pod_resources_rejected_total %" PRIu64 "\n",
                       s->rejected);
}
