/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's pod resources API (pkg/kubelet/apis/podresources), served from a node: which
 * exclusive CPUs and which devices (with their NUMA nodes) each container holds, and what the
 * node can give. Monitoring agents read it (dcgm-exporter, node-feature-discovery's topology
 * updater, the resource topology exporter, Multus and SR-IOV): they work against nodecmd
 * unchanged.
 *
 *   v1        List, GetAllocatableResources, Get (Get behind the kubelet's feature gate
 *             KubeletPodResourcesGet: on by default from 1.34, the configuration's
 *             featureGates decide). Memory: the memory manager's blocks (Static policy;
 *             empty with None), as the kubelet fills them; dynamic resources are
 *             always empty (no DRA).
 *   v1alpha1  List, on the same socket, for older clients.
 *
 * Orders where the kubelet iterates Go maps (random) are fixed: pods in the node's order (by
 * UID), containers as the kubelet lists them (sidecars in spec order, then app containers),
 * devices by resource, then device id, then NUMA node; CPU ids ascending.
 *
 * ncm_podres_handle() answers one call without I/O (tests, fuzzing); the server binds it to a
 * unix socket on a libuv loop, with the kubelet's rate limit (100 calls per second, bursts of
 * 10; beyond: RESOURCE_EXHAUSTED "rejected by rate limit").
 */
#ifndef NODECM_PODRESOURCES_H
#define NODECM_PODRESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/node.h>
#include <nodecm/rpc.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ncm_podres_method {
        NCM_PODRES_LIST = 0,        /* /v1.PodResourcesLister/List */
        NCM_PODRES_GET_ALLOCATABLE, /* /v1.PodResourcesLister/GetAllocatableResources */
        NCM_PODRES_GET,             /* /v1.PodResourcesLister/Get */
        NCM_PODRES_LIST_V1ALPHA1,   /* /v1alpha1.PodResourcesLister/List */
        NCM_PODRES_N_METHODS,
} ncm_podres_method;

/* The method path of M, or NULL. */
NCM_API const char *ncm_podres_method_path(ncm_podres_method m) NCM_PURE;
/* The method of PATH, or -1. */
NCM_API int ncm_podres_method_from_path(const char *path) NCM_PURE;

/*
 * Whether Get is served for N: featureGates.KubeletPodResourcesGet when the configuration
 * sets it, else the default of the kubelet release N reproduces (on from 1.34).
 */
NCM_API bool ncm_podres_get_enabled(const ncm_node *n) NCM_PURE;

/*
 * Answer call M with request REQ[0..LEN) from N: the packed response is appended to REPLY.
 * GET_ENABLED: whether Get is served. Errors carry the gRPC status the kubelet answers with
 * in *RET_CODE and its text in ERR: a request that does not decode (INTERNAL, "grpc: error
 * unmarshalling request: ..."), Get disabled (UNKNOWN, "PodResources API Get method
 * disabled"), an unknown pod (UNKNOWN, "pod NAME in namespace NS not found"). Returns 0 or
 * -errno (-EINVAL, -ENOENT, -EPERM, -ENOMEM).
 */
NCM_API int ncm_podres_handle(const ncm_node *n, ncm_podres_method m, bool get_enabled,
                              const uint8_t *req, size_t len, ncm_buf *reply,
                              ncm_rpc_code *ret_code, ncm_error *err);

/* ---- the server ---- */

typedef struct ncm_podres_server ncm_podres_server;

typedef struct ncm_podres_opts {
        /* The socket (its directory is created 0750 when missing); the kubelet's is
         * <root-dir>/pod-resources/kubelet.sock. */
        const char *socket;
        /* Calls per second and burst of the rate limit; 0: the kubelet's 100 and 10. */
        uint32_t qps;
        uint32_t burst;
        /* Get served: -1 as the node's configuration says (ncm_podres_get_enabled), 0 no,
         * 1 yes. */
        int get;
        const ncm_rpc_opts *rpc; /* NULL: defaults (docs/rpc.md) */
        /*
         * Where a call reads the node: SCHEDULE(DATA, RUN, ARG) must call RUN(ARG) exactly
         * once, now or later, when nothing else is at work on the node (a daemon's queue, so
         * that a read never sees half a transaction). NULL: at once.
         */
        void (*schedule)(void *data, void (*run)(void *arg), void *arg);
        void *schedule_data;
} ncm_podres_opts;

/*
 * A server answering from N (borrowed; ncm_podres_server_set_node() replaces it). Listening
 * starts here: an old socket file is removed first, as the kubelet does. Errors name the
 * socket.
 */
NCM_API int ncm_podres_server_new(uv_loop_t *loop, ncm_node *n, const ncm_podres_opts *opts,
                                  ncm_podres_server **ret, ncm_error *err);
NCM_API void ncm_podres_server_set_node(ncm_podres_server *s, ncm_node *n);

/* Stop: the socket is closed and removed; ON_CLOSED (may be NULL) runs when s is freed (after
 * the calls it scheduled have run). */
NCM_API void ncm_podres_server_close(ncm_podres_server *s, void (*on_closed)(void *data),
                                     void *data);

/*
 * Append the server's metrics with the kubelet's names:
 * kubelet_pod_resources_endpoint_requests_total{server_api_version}, ..._requests_list,
 * ..._requests_get_allocatable, ..._requests_get, ..._errors_get.
 */
NCM_API void ncm_podres_server_metrics(const ncm_podres_server *s, ncm_buf *out);

#ifdef __cplusplus
}
#endif
#endif
