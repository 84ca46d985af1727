/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Container Runtime Interface (runtime.v1) as nodecm speaks it: the messages it decodes
 * and builds (lib/api/cri-runtime-v1.proto), and a client of a runtime's RuntimeService
 * (containerd, CRI-O) on the gRPC transport.
 *
 *   messages   what the kubelet sends (RunPodSandbox, CreateContainer, ...) read into plain
 *              structs; a forwarded request with nodecm's fields set in it, re-encoded with
 *              every field it came with (protobuf-c keeps the fields it does not know, so a
 *              newer kubelet's loses nothing). Appending the fields instead would rely on the
 *              receiver merging a repeated message field as the protobuf spec says; protobuf-c
 *              itself does not merge nested messages, so nodecm does not count on it;
 *   client     Version, ListPodSandbox, ListContainers, ContainerStatus and
 *              UpdateContainerResources on an ncm_rpc_conn, answered through a callback on
 *              the connection's loop; and the same calls blocking on a private loop, for
 *              commands and tests;
 *   proxy      runtime.v1's services on a socket, every call forwarded to the runtime
 *              unchanged except those an owner acts on (ncm_cri_proxy_ops);
 *   node       the owner's decisions on a node: pods admitted as their containers come,
 *              released as they go, cpusets for the forwarded requests and for reconcile.
 *
 * Nothing here needs the generated protobuf-c types: messages cross this API as bytes.
 */
#ifndef NODECM_CRI_H
#define NODECM_CRI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/ctl.h>
#include <nodecm/devicemanager.h>
#include <nodecm/error.h>
#include <nodecm/rpc.h>
#include <nodecm/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCM_CRI_RUNTIME_SERVICE "runtime.v1.RuntimeService"
#define NCM_CRI_IMAGE_SERVICE "runtime.v1.ImageService"

/* The methods nodecm decodes, and their paths ("/runtime.v1.RuntimeService/Version"). */
typedef enum ncm_cri_method {
        NCM_CRI_VERSION = 0,
        NCM_CRI_RUN_POD_SANDBOX,
        NCM_CRI_STOP_POD_SANDBOX,
        NCM_CRI_REMOVE_POD_SANDBOX,
        NCM_CRI_LIST_POD_SANDBOX,
        NCM_CRI_CREATE_CONTAINER,
        NCM_CRI_START_CONTAINER,
        NCM_CRI_STOP_CONTAINER,
        NCM_CRI_REMOVE_CONTAINER,
        NCM_CRI_LIST_CONTAINERS,
        NCM_CRI_CONTAINER_STATUS,
        NCM_CRI_UPDATE_CONTAINER_RESOURCES,
        NCM_CRI_N_METHODS,
} ncm_cri_method;

/* The method's path; NULL for a value out of range. */
NCM_API const char *ncm_cri_method_path(ncm_cri_method m) NCM_PURE;
/* The method of PATH, or -1 for a path nodecm does not decode. */
NCM_API int ncm_cri_method_from_path(const char *path) NCM_PURE;

/* runtime.v1.ContainerState */
typedef enum ncm_cri_container_state {
        NCM_CRI_CONTAINER_CREATED = 0,
        NCM_CRI_CONTAINER_RUNNING = 1,
        NCM_CRI_CONTAINER_EXITED = 2,
        NCM_CRI_CONTAINER_UNKNOWN = 3,
} ncm_cri_container_state;

/* "CONTAINER_RUNNING", ... (the enum's names); "CONTAINER_UNKNOWN" for anything else. */
NCM_API const char *ncm_cri_container_state_name(int state) NCM_PURE;

/* A list of annotations or labels, owned. */
typedef struct ncm_cri_kvs {
        ncm_runtime_kv *v;
        size_t n;
} ncm_cri_kvs;

/* The value of KEY, or NULL. */
NCM_API const char *ncm_cri_kvs_get(const ncm_cri_kvs *k, const char *key) NCM_PURE;

/* LinuxContainerResources: the resources as ncm_runtime_resources, and the cpusets. */
typedef struct ncm_cri_resources {
        bool present; /* the message carried them */
        ncm_runtime_resources r;
        char *cpuset_cpus; /* "" when unset */
        char *cpuset_mems;
} ncm_cri_resources;

/* A pod sandbox as RunPodSandbox configures it (PodSandboxConfig). */
typedef struct ncm_cri_sandbox_config {
        char *uid, *name, *namespace;
        uint32_t attempt;
        char *cgroup_parent; /* linux.cgroup_parent, "" when unset */
        ncm_cri_kvs labels, annotations;
        ncm_cri_resources overhead;  /* linux.overhead */
        ncm_cri_resources resources; /* linux.resources: the sum of the containers' */
} ncm_cri_sandbox_config;

/* A container as CreateContainer configures it. */
typedef struct ncm_cri_container_config {
        char *pod_sandbox_id;
        char *name;
        uint32_t attempt;
        ncm_cri_kvs labels, annotations;
        ncm_cri_resources resources; /* linux.resources */
        bool has_sandbox;            /* the request carried the sandbox's config */
        ncm_cri_sandbox_config sandbox;
        /* the CDI devices the runtime is to add (DRA's): config.CDI_devices (field 17, kubelet
         * 1.31+) and, first, the values of "cdi.k8s.io/..." annotations (older kubelets) */
        char **cdi_devices;
        size_t n_cdi_devices;
        /* private: the request as decoded, kept so that a patch edits it in place
         * (ncm_cri_container_config_patch) instead of decoding the bytes again */
        void *msg;
} ncm_cri_container_config;

/* A sandbox as ListPodSandbox tells it. */
typedef struct ncm_cri_sandbox {
        char *id;
        char *uid, *name, *namespace;
        uint32_t attempt;
        bool ready; /* SANDBOX_READY */
        ncm_cri_kvs labels, annotations;
} ncm_cri_sandbox;

/* A container as ListContainers (or ContainerStatus) tells it. */
typedef struct ncm_cri_container {
        char *id;
        char *pod_sandbox_id; /* ListContainers only */
        char *name;           /* metadata.name */
        uint32_t attempt;
        int state; /* ncm_cri_container_state */
        ncm_cri_kvs labels, annotations;
        ncm_cri_resources resources; /* ContainerStatus only */
} ncm_cri_container;

/* VersionResponse */
typedef struct ncm_cri_version {
        char *version, *runtime_name, *runtime_version, *runtime_api_version;
} ncm_cri_version;

NCM_API void ncm_cri_kvs_done(ncm_cri_kvs *k);
NCM_API void ncm_cri_resources_done(ncm_cri_resources *r);
NCM_API void ncm_cri_sandbox_config_done(ncm_cri_sandbox_config *s);
NCM_API void ncm_cri_container_config_done(ncm_cri_container_config *c);
NCM_API void ncm_cri_sandbox_done(ncm_cri_sandbox *s);
NCM_API void ncm_cri_container_done(ncm_cri_container *c);
NCM_API void ncm_cri_version_done(ncm_cri_version *v);

/* ---- decoding what the kubelet (or a runtime) sends ----------------------------------------
 * Each returns 0, -EINVAL for bytes that are not the message ("CreateContainerRequest: does not
 * decode"), -ENOMEM. Fields the message lacks are empty strings, zero, or absent lists.
 */
NCM_API int ncm_cri_decode_run_pod_sandbox(const uint8_t *msg, size_t len,
                                           ncm_cri_sandbox_config *ret, ncm_error *err);
NCM_API int ncm_cri_decode_run_pod_sandbox_response(const uint8_t *msg, size_t len, char **ret_id,
                                                    ncm_error *err);
NCM_API int ncm_cri_decode_create_container(const uint8_t *msg, size_t len,
                                            ncm_cri_container_config *ret, ncm_error *err);
NCM_API int ncm_cri_decode_create_container_response(const uint8_t *msg, size_t len, char **ret_id,
                                                     ncm_error *err);
/* The id of a request that names one container or sandbox (Start/Stop/RemoveContainer,
 * ContainerStatus, Stop/RemovePodSandbox, UpdateContainerResources: field 1). */
NCM_API int ncm_cri_decode_id(const uint8_t *msg, size_t len, char **ret_id, ncm_error *err);
NCM_API int ncm_cri_decode_update_resources(const uint8_t *msg, size_t len, char **ret_id,
                                            ncm_cri_resources *ret, ncm_error *err);
NCM_API int ncm_cri_decode_version(const uint8_t *msg, size_t len, ncm_cri_version *ret,
                                   ncm_error *err);
/* ListPodSandboxResponse / ListContainersResponse into *RET (an array, *RET_N entries). */
NCM_API int ncm_cri_decode_sandboxes(const uint8_t *msg, size_t len, ncm_cri_sandbox **ret,
                                     size_t *ret_n, ncm_error *err);
NCM_API int ncm_cri_decode_containers(const uint8_t *msg, size_t len, ncm_cri_container **ret,
                                      size_t *ret_n, ncm_error *err);
/* ContainerStatusResponse (status.resources.linux included). */
NCM_API int ncm_cri_decode_container_status(const uint8_t *msg, size_t len, ncm_cri_container *ret,
                                            ncm_error *err);
NCM_API void ncm_cri_sandboxes_free(ncm_cri_sandbox *v, size_t n);
NCM_API void ncm_cri_containers_free(ncm_cri_container *v, size_t n);

/* ---- building ------------------------------------------------------------------------------- */

/* One device, mount or environment variable a device plugin's Allocate gave a container. */
typedef struct ncm_cri_device {
        const char *container_path, *host_path, *permissions;
} ncm_cri_device;
typedef struct ncm_cri_mount {
        const char *container_path, *host_path;
        bool readonly;
} ncm_cri_mount;

/*
 * What nodecm adds to a CreateContainerRequest: the cpusets (NULL: none), and the device
 * plugins' devices, mounts, environment, annotations and CDI devices.
 */
typedef struct ncm_cri_container_patch {
        const char *cpuset_cpus;
        const char *cpuset_mems;
        const ncm_cri_device *devices;
        size_t n_devices;
        const ncm_cri_mount *mounts;
        size_t n_mounts;
        const ncm_runtime_kv *envs;
        size_t n_envs;
        const ncm_runtime_kv *annotations;
        size_t n_annotations;
        const char *const *cdi_devices;
        size_t n_cdi_devices;
} ncm_cri_container_patch;

/*
 * The CreateContainerRequest MSG[0..LEN) with P's fields set in its config, appended to OUT:
 * config.linux.resources.cpuset_cpus/mems replaced, devices, mounts, envs and CDI devices
 * added, annotations added or replaced by key. Every other field, those nodecm's .proto does
 * not know included, is written back as it came. -EINVAL when MSG does not decode, -ENOMEM.
 */
NCM_API int ncm_cri_patch_create_container(const uint8_t *msg, size_t len,
                                           const ncm_cri_container_patch *p, ncm_buf *out,
                                           ncm_error *err);
/*
 * C's request (as ncm_cri_decode_create_container decoded it) with P applied, packed into OUT:
 * the decoded message edited in place and packed once. -EINVAL (C holds no decoded request,
 * or one that does not pack readably), -ENOMEM.
 */
NCM_API int ncm_cri_container_config_patch(ncm_cri_container_config *c,
                                           const ncm_cri_container_patch *p, ncm_buf *out,
                                           ncm_error *err);

/* The same for an UpdateContainerResourcesRequest's linux.cpuset_cpus/mems (NULL: left as it
 * is). */
NCM_API int ncm_cri_patch_update_resources(const uint8_t *msg, size_t len, const char *cpuset_cpus,
                                           const char *cpuset_mems, ncm_buf *out, ncm_error *err);

/* ---- the client ------------------------------------------------------------------------------ */

/* A call to a runtime: the method and the fields it takes. */
typedef struct ncm_cri_request {
        ncm_cri_method method;      /* VERSION, LIST_POD_SANDBOX, LIST_CONTAINERS, CONTAINER_STATUS,
                                       UPDATE_CONTAINER_RESOURCES */
        const char *id;             /* CONTAINER_STATUS, UPDATE_CONTAINER_RESOURCES */
        const char *pod_sandbox_id; /* LIST_CONTAINERS: only that sandbox's (NULL: all) */
        int state;                  /* LIST_CONTAINERS: only this state (-1: any) */
        const char *cpuset_cpus;    /* UPDATE_CONTAINER_RESOURCES (NULL: unchanged) */
        const char *cpuset_mems;
} ncm_cri_request;

/* Encode REQ's request message into OUT. -EINVAL (a method the client does not call). */
NCM_API int ncm_cri_request_encode(const ncm_cri_request *req, ncm_buf *out, ncm_error *err);

/* The answer: the call's status and, when OK, the decoded reply of its method. */
typedef struct ncm_cri_reply {
        ncm_cri_method method;
        ncm_rpc_code code;
        char *message;              /* the status message, "" when none */
        ncm_cri_version version;    /* VERSION */
        ncm_cri_sandbox *sandboxes; /* LIST_POD_SANDBOX */
        size_t n_sandboxes;
        ncm_cri_container *containers; /* LIST_CONTAINERS; CONTAINER_STATUS: one */
        size_t n_containers;
} ncm_cri_reply;

/* Release what a reply owns (ncm_cri_call_sync's; the async reply is released for you). */
NCM_API void ncm_cri_reply_done(ncm_cri_reply *r);

/*
 * Called once with the answer. R is valid during the call only; the callback may take what it
 * points to (copying *R and zeroing it): whatever is left is released after it returns.
 */
typedef void (*ncm_cri_done_fn)(ncm_cri_reply *r, void *data);

/*
 * Start REQ on CONN with a deadline of TIMEOUT_MS (0: none); DONE runs once, from the
 * connection's loop, never from inside this function. An answer that does not decode is
 * INTERNAL with the decoder's message. Returns 0, or -errno when the call could not start
 * (-ENOTCONN: the connection is closing: reconnect).
 */
NCM_API int ncm_cri_call(ncm_rpc_conn *conn, const ncm_cri_request *req, uint32_t timeout_ms,
                         ncm_cri_done_fn done, void *data, ncm_error *err);

/*
 * REQ to the runtime at ENDPOINT ("unix:///run/containerd/containerd.sock", a path), waiting
 * at most TIMEOUT_MS, on a private loop. Returns 0 with *RET filled (release it with
 * ncm_cri_reply_done; a status other than OK is in RET->code), or -errno when the runtime
 * cannot be reached (ERR names the endpoint).
 */
NCM_API int ncm_cri_call_sync(const char *endpoint, const ncm_cri_request *req, uint32_t timeout_ms,
                              ncm_cri_reply *ret, ncm_error *err);

/* ---- the proxy ------------------------------------------------------------------------------ */

typedef struct ncm_cri_proxy ncm_cri_proxy;
/* One CreateContainer waiting for its owner's decision. */
typedef struct ncm_cri_ticket ncm_cri_ticket;

/*
 * What the proxy tells its owner, all optional (NULL: the call is forwarded and nothing is
 * said). Each runs on the proxy's loop.
 *   sandbox_ran        the runtime created sandbox ID for CFG (RunPodSandbox answered OK)
 *   container_create   a CreateContainer for C (decoded once, here): the owner answers
 *                      through T, now or later, with ncm_cri_ticket_forward() (the request,
 *                      patched or as it came) or ncm_cri_ticket_refuse(); it may take C whole
 *                      (*C zeroed), else C is released after the call
 *   container_created  the runtime answered T's CreateContainer: ID, or NULL when it failed
 *                      (or was never forwarded); T is gone after this
 *   container_removed  RemoveContainer ID answered OK
 *   sandbox_removed    RemovePodSandbox ID answered OK
 *   container_cpusets  a client's UpdateContainerResources for ID: return 1 with the cpusets
 *                      nodecm keeps (*RET_CPUS, *RET_MEMS malloc'd), 0 to forward it unchanged
 *   container_update   instead of container_cpusets: a client's UpdateContainerResources for ID
 *                      waits for the owner, who answers through T (its request:
 *                      ncm_cri_ticket_request) with ncm_cri_ticket_forward() (patched or as it
 *                      came) or ncm_cri_ticket_refuse(), now or later (an in-place resize)
 */
typedef struct ncm_cri_proxy_ops {
        void (*sandbox_ran)(void *data, const char *id, const ncm_cri_sandbox_config *cfg);
        void (*container_create)(void *data, ncm_cri_ticket *t, ncm_cri_container_config *c);
        void (*container_created)(void *data, ncm_cri_ticket *t, const char *id);
        void (*container_removed)(void *data, const char *id);
        void (*sandbox_removed)(void *data, const char *id);
        int (*container_cpusets)(void *data, const char *id, char **ret_cpus, char **ret_mems);
        void (*container_update)(void *data, ncm_cri_ticket *t, const char *id);
} ncm_cri_proxy_ops;

typedef struct ncm_cri_proxy_options {
        const char *listen;           /* the socket to serve ("unix:///...", a path) */
        unsigned mode;                /* its mode; 0: 0660 */
        const char *runtime_endpoint; /* the runtime ("unix:///run/containerd/containerd.sock") */
        const ncm_rpc_opts *opts;     /* NULL: defaults (messages up to 16 MiB either way) */
} ncm_cri_proxy_options;

/* Counters, for metrics. */
typedef struct ncm_cri_proxy_stats {
        uint64_t calls;       /* calls received */
        uint64_t forwarded;   /* calls started at the runtime */
        uint64_t intercepted; /* calls the owner acted on */
        uint64_t patched;     /* requests forwarded with nodecm's fields */
        uint64_t refused;     /* CreateContainer refused by the owner */
        uint64_t failed;      /* calls the runtime answered with an error */
        uint64_t unavailable; /* calls that found no runtime to forward to */
        uint64_t connects;    /* connections opened to the runtime */
} ncm_cri_proxy_stats;

/*
 * Serve O->listen on LOOP, forwarding to O->runtime_endpoint; OPS (may be NULL: forward
 * everything) and DATA as above. The runtime is connected to on the first call and again after
 * it went away. Returns 0 with *RET, or -errno (the socket; ERR names it).
 */
NCM_API int ncm_cri_proxy_new(uv_loop_t *loop, const ncm_cri_proxy_options *o,
                              const ncm_cri_proxy_ops *ops, void *data, ncm_cri_proxy **ret,
                              ncm_error *err);
/*
 * Stop serving: the socket is closed and removed, clients get a GOAWAY, calls in flight finish.
 * ON_CLOSED (may be NULL) runs when the listener is closed; free the proxy after that.
 */
NCM_API void ncm_cri_proxy_close(ncm_cri_proxy *p, void (*on_closed)(void *data), void *data);
NCM_API ncm_cri_proxy *ncm_cri_proxy_free(ncm_cri_proxy *p);
NCM_API const ncm_cri_proxy_stats *ncm_cri_proxy_get_stats(const ncm_cri_proxy *p) NCM_PURE;
/* The proxy's connection to the runtime (connected now if needed), for the owner's own calls
 * (reconcile); NULL when the runtime cannot be reached (ERR says why). */
NCM_API ncm_rpc_conn *ncm_cri_proxy_runtime(ncm_cri_proxy *p, ncm_error *err);

/* The original request of T, and the owner's data on it. */
NCM_API const uint8_t *ncm_cri_ticket_request(const ncm_cri_ticket *t, size_t *ret_len);
NCM_API void *ncm_cri_ticket_data(const ncm_cri_ticket *t) NCM_PURE;
NCM_API void ncm_cri_ticket_set_data(ncm_cri_ticket *t, void *data);
/* The client has gone (its call was cancelled); the owner may still forward or refuse. */
NCM_API bool ncm_cri_ticket_cancelled(const ncm_cri_ticket *t) NCM_PURE;
/* Forward REQ[0..LEN) (copied) for T; container_created follows with the runtime's answer. */
NCM_API void ncm_cri_ticket_forward(ncm_cri_ticket *t, const uint8_t *req, size_t len);
/* End T's call with CODE and MESSAGE without forwarding it; container_created does not follow. */
NCM_API void ncm_cri_ticket_refuse(ncm_cri_ticket *t, ncm_rpc_code code, const char *message);

/* ---- the node's side ------------------------------------------------------------------------ */

/* The record of the containers the CRI proxy saw created, in a node's root directory, and the
 * journal of what changed since it was last written whole (docs/runtimes.md, "Cost"). */
#define NCM_CRI_CONTAINERS_NAME "nodecm_cri_containers"
#define NCM_CRI_JOURNAL_NAME "nodecm_cri_journal"

typedef struct ncm_cri_node ncm_cri_node;

/*
 * The CRI's view of the node T in DIR (its owner holds DIR's lock): DIR/nodecm_cri_containers
 * read (missing: empty). Decisions go through T's control API handlers (lib/ctl).
 */
NCM_API int ncm_cri_node_open(const char *dir, const ncm_ctl_target *t, ncm_cri_node **ret,
                              ncm_error *err);
NCM_API ncm_cri_node *ncm_cri_node_free(ncm_cri_node *cn);
/* Containers in the record (those in creation included). */
NCM_API size_t ncm_cri_node_num_containers(const ncm_cri_node *cn) NCM_PURE;

/* RunPodSandbox answered ID for CFG: the sandbox's pod is remembered (written to the record
 * with its next write, the admission of the sandbox's first container at the latest). */
NCM_API int ncm_cri_node_sandbox(ncm_cri_node *cn, const char *id,
                                 const ncm_cri_sandbox_config *cfg, ncm_error *err);

typedef enum ncm_cri_action {
        NCM_CRI_PASS = 0, /* not a kubelet pod's container nodecm manages: forward it, with
                             CPUSET_CPUS the shared pool when set (no stranger on an exclusive
                             CPU) */
        NCM_CRI_ADMIT,    /* admitted: forward with the cpusets (and devices) */
        NCM_CRI_REFUSE,   /* refused: CODE and MESSAGE (the kubelet's reason and message) */
} ncm_cri_action;

typedef struct ncm_cri_decision {
        ncm_cri_action action;
        char *pod_uid, *container;
        char *cpuset_cpus, *cpuset_mems; /* NULL: nodecm pins nothing (the none policy) */
        ncm_devmgr_alloc_resp *devices;  /* the device plugins' answers; NULL: none */
        ncm_rpc_code code;
        char message[NCM_ERROR_MSG_MAX];
        ncm_ctl_result ctl; /* what the admission did, as the control API reports it */
} ncm_cri_decision;

NCM_API void ncm_cri_decision_done(ncm_cri_decision *d);

/*
 * A CreateContainer for C: its pod rebuilt from the containers the record holds for it and C
 * (the kubelet's values recovered, nodecm/runtime.h; the QoS class from the sandbox's cgroup
 * parent), admitted as the kubelet's admission would (the record first, then the node, in one
 * batch of writes; a refusal writes nothing). An admission returns with every file fsynced and
 * renamed into place; the rest is owed (ncm_cri_node_sync). *RET says what
 * to do. -errno for failures that are not decisions (the record or state cannot be written;
 * what was decided is released, and the request is refused by the caller with the error).
 */
NCM_API int ncm_cri_node_create(ncm_cri_node *cn, const ncm_cri_container_config *c,
                                ncm_cri_decision *ret, ncm_error *err);

/*
 * What an admission of ncm_cri_node_create() owes, best done once the runtime has answered
 * (after ncm_cri_node_created()), when nothing waits on it: CN's directory fsynced (the renames
 * durable), the files the renames replaced freed, the next admission's temporary files made
 * (ncm_fs_batch_settle). A crash of the machine before then leaves each file as it was before
 * or after the admission (kubelet's own checkpoints are never synced this way), and takes the
 * container with it. 0, or -errno when the directory's fsync failed.
 */
NCM_API int ncm_cri_node_sync(ncm_cri_node *cn, ncm_error *err);

/* REQ[0..LEN), a CreateContainerRequest, with D's cpusets and devices set, into OUT. */
NCM_API int ncm_cri_decision_apply(const ncm_cri_decision *d, const uint8_t *req, size_t len,
                                   ncm_buf *out, ncm_error *err);
/* The same on C's decoded request (ncm_cri_container_config_patch): no second decoding. */
NCM_API int ncm_cri_decision_apply_config(const ncm_cri_decision *d, ncm_cri_container_config *c,
                                          ncm_buf *out, ncm_error *err);

/* The runtime answered the CreateContainer of POD_UID's NAME: ID (recorded; durable with the
 * directory's next fsync: call ncm_cri_node_sync() next), or NULL when it failed (the container
 * is released). RES gets what a release changed. */
NCM_API int ncm_cri_node_created(ncm_cri_node *cn, const char *pod_uid, const char *name,
                                 const char *id, ncm_ctl_result *res, ncm_error *err);
/* RemoveContainer ID / RemovePodSandbox ID answered OK: released (0 when nodecm never knew
 * it). */
NCM_API int ncm_cri_node_container_removed(ncm_cri_node *cn, const char *id, ncm_ctl_result *res,
                                           ncm_error *err);
NCM_API int ncm_cri_node_sandbox_removed(ncm_cri_node *cn, const char *id, ncm_ctl_result *res,
                                         ncm_error *err);
/*
 * A client's UpdateContainerResources for container ID with RES (its linux resources). A
 * container nodecm did not place: NCM_CRI_PASS. One whose cpu shares, quota or memory limit
 * differ from the recorded ones is the kubelet resizing its pod in place (KEP-1287; the
 * kubelet's own CPU manager policy is none, nodecm decides): the pod rebuilt from the record
 * with the container's new values is resized (ncm_ctl_resize; RET->ctl reports it), the record
 * and the node's files written in one batch (ncm_cri_node_sync() afterwards, as for a
 * creation: the directory's fsync). NCM_CRI_ADMIT: forward the update with
 * RET->cpuset_cpus / cpuset_mems (the new ones after a resize; NULL: nodecm pins nothing);
 * NCM_CRI_REFUSE: end the call with RET->code and "REASON: MESSAGE" (Infeasible, ...), nothing
 * changed. -errno for failures that are not decisions (nothing changed either).
 */
NCM_API int ncm_cri_node_update(ncm_cri_node *cn, const char *id, const ncm_cri_resources *res,
                                ncm_cri_decision *ret, ncm_error *err);

/* The cpusets container ID must keep: 1 with *RET_CPUS and *RET_MEMS (malloc'd), 0 when nodecm
 * does not manage it, -ENOMEM. */
NCM_API int ncm_cri_node_cpusets(const ncm_cri_node *cn, const char *id, char **ret_cpus,
                                 char **ret_mems);

/* A container's cpusets as they must be. */
typedef struct ncm_cri_update {
        char *id;
        char *cpuset_cpus;
        char *cpuset_mems;
} ncm_cri_update;

NCM_API void ncm_cri_updates_free(ncm_cri_update *v, size_t n);

/*
 * The cgroup the runtime made for container NAME of POD_UID, with the cgroupfs driver: its
 * sandbox's cgroup parent, then its id (containerd's naming), below the hierarchies; for the
 * knobs enforcer's resolver (nodecm/enforcer.h). 0 and *RET (malloc'd); -ENOENT when the
 * container has no id yet or its parent is not a cgroupfs path; -ENOMEM.
 */
NCM_API int ncm_cri_node_container_cgroup(const ncm_cri_node *cn, const char *pod_uid,
                                          const char *name, char **ret);

/*
 * A ListContainers for ncm_cri_node_reconcile is being sent now: containers recorded from now
 * until that reconcile (their creation answered after the runtime listed) are not stale for
 * it. Without this call every container the list lacks is.
 */
NCM_API void ncm_cri_node_listing(ncm_cri_node *cn);

/*
 * The kubelet's reconcileState over the runtime's containers LISTED[0..N) (ListContainers,
 * every state): containers of the record the runtime no longer has are released
 * (removeStaleState; RES tells whether the pool moved), and every running container the
 * record knows gets its cpusets in *RET (*RET_N), every other running one the shared pool (no
 * stranger on an exclusive CPU; none when that pool is every CPU). *RET_STALE (may be NULL): how
 * many were released. A container an earlier process recorded while its creation was in flight (an
 * orphan) is adopted as soon as the runtime lists it (its sandbox and name: the runtime may
 * finish a creation after its client died); with RELEASE_ORPHANS (the caller has waited long
 * enough for the runtime), one still not listed is released.
 */
NCM_API int ncm_cri_node_reconcile(ncm_cri_node *cn, const ncm_cri_container *listed, size_t n,
                                   bool release_orphans, ncm_cri_update **ret, size_t *ret_n,
                                   size_t *ret_stale, ncm_ctl_result *res, ncm_error *err);

/* Whether a container whose runtime says HAVE must be updated to WANT (compared as cpusets;
 * an empty WANT never). */
NCM_API bool ncm_cri_cpuset_differs(const char *want, const char *have) NCM_PURE;

/* ---- the proxy's tickets answered ------------------------------------------------------- */

/*
 * CreateContainer C through the proxy's ticket T (C as the proxy decoded it, once; its request
 * is patched in place): decided (ncm_cri_node_create, *DEC: what, ncm_cri_decision_done), then
 * T forwarded (with the decision's cpusets and devices; as it came for a container nodecm does
 * not hold and need not move) or refused (the kubelet's reason; INTERNAL when the patch could
 * not be made, and what was admitted goes). An admitted container's identity is T's data until
 * the runtime answers (ncm_cri_ticket_take_identity). -errno (T refused) when the node could
 * not decide.
 */
NCM_API int ncm_cri_node_answer_create(ncm_cri_node *cn, ncm_cri_ticket *t,
                                       ncm_cri_container_config *c, ncm_cri_decision *dec,
                                       ncm_error *err);
/* The identity ncm_cri_node_answer_create() left on T, taken (1, malloc'd), or 0 (none). */
NCM_API int ncm_cri_ticket_take_identity(ncm_cri_ticket *t, char **ret_pod, char **ret_name);
/*
 * UpdateContainerResources through T: decided (ncm_cri_node_update: an in-place resize of a
 * container nodecm placed), then T forwarded (with the new cpusets) or refused with the
 * kubelet's reason, nothing changed. -errno (T refused) when the node could not decide.
 */
NCM_API int ncm_cri_node_answer_update(ncm_cri_node *cn, ncm_cri_ticket *t, ncm_cri_decision *dec,
                                       ncm_error *err);

/* ---- the cri enforcer --------------------------------------------------------------------- */

/*
 * "cri": the enforcer of a node whose containers a CRI runtime holds (nodecmd with
 * --runtime-endpoint). It writes nothing: like "plan" it records, the cpusets each running
 * container should have (its intent: its exclusive CPUs or the shared pool, and its memory
 * nodes as the node decides them, ncm_node_container_mems; none when they are left to the
 * runtime), noted in the node's transaction, published at commit, dropped at rollback. The
 * none policy pins nothing: only exclusive CPUs are intents then. So an admission that moves
 * the shared pool publishes, in its one transaction, the new container's intent (what
 * CreateContainer's patch reads) and the other containers' (what UpdateContainerResources
 * calls carry). INNER (taken, freed with it; NULL: none) gets every call too, in the same
 * transaction: what the runtime leaves to nodecm on its cgroups (ncm_enforcer_knobs_new:
 * CRI-O's knobs). -ENOMEM (INNER freed).
 */
NCM_API int ncm_enforcer_cri_new(ncm_enforcer *inner, ncm_enforcer **ret, ncm_error *err);
/* The cri enforcer E's inner enforcer (NULL: none, or E is not "cri"). */
NCM_API ncm_enforcer *ncm_enforcer_cri_inner(const ncm_enforcer *e) NCM_PURE;

/*
 * The published intent of container CONTAINER of POD_UID: 1 with *RET_CPUS and *RET_MEMS
 * (the enforcer's, valid until its next commit; *RET_MEMS NULL: cpuset.mems left to the
 * runtime), 0 when it has none (or E is not "cri").
 */
NCM_API int ncm_enforcer_cri_intent(const ncm_enforcer *e, const char *pod_uid,
                                    const char *container, const char **ret_cpus,
                                    const char **ret_mems);

/* One container's intent, as UpdateContainerResources carries it. */
typedef struct ncm_cri_intent {
        char *pod_uid;
        char *container;
        char *cpuset_cpus;
        char *cpuset_mems;
} ncm_cri_intent;

/*
 * The intents published since the last take that differ from what was published before (at
 * most one per container, the newest), in *RET[0..*RET_N) (ncm_cri_intents_free); the next
 * take starts from here. -EINVAL (E is not "cri"), -ENOMEM (nothing taken).
 */
NCM_API int ncm_enforcer_cri_take(ncm_enforcer *e, ncm_cri_intent **ret, size_t *ret_n);
NCM_API void ncm_cri_intents_free(ncm_cri_intent *v, size_t n);

/* ---- UpdateContainerResources, without I/O ---------------------------------------------- */

/*
 * The calls that bring the runtime's containers to the node's cpusets, as a state machine
 * that does no I/O (lib/cri/cri-sync.c): the owner feeds it the intents a commit published
 * (ncm_cri_node_intents), the runs a reconcile wants, the runtime's replies and the time, and
 * performs the actions it hands out (ncm_cri_sync_next) until there are none, then sleeps
 * until ncm_cri_sync_deadline() or the next input. Two flows:
 *  - intents: each container's newest intent is one UpdateContainerResources (one call per
 *    container at a time; a newer intent waits for it);
 *  - a run (the kubelet's reconcileState): ListContainers, the owner's decision on the list
 *    (NCM_CRI_SYNC_DECIDE: ncm_cri_node_reconcile, then ncm_cri_sync_decided), ContainerStatus
 *    of each container to update and UpdateContainerResources where the runtime's cpusets
 *    differ (nodecm asks the runtime, so a cpuset changed behind its back is put back). One run
 *    at a time; one wanted during a run follows it. A new machine wants a run (what a previous
 *    process left is settled at once).
 * At most MAX_IN_FLIGHT calls are in flight. A container whose update fails twice in a row is
 * a FAILED note, once a FAILED_ONCE (the kubelet stopping it races the update), NOT_FOUND a
 * GONE (it was removed meanwhile); the next run tries it again.
 */
typedef struct ncm_cri_sync ncm_cri_sync;

typedef struct ncm_cri_sync_options {
        uint32_t call_timeout_ms; /* each call's deadline (0: 10 s) */
        size_t max_in_flight;     /* (0: 64) */
        /* how long after the start a creation an earlier process asked for may take to appear
         * (ncm_cri_node_reconcile's RELEASE_ORPHANS before that: false) */
        uint64_t orphan_grace_ns;
} ncm_cri_sync_options;

enum {
        NCM_CRI_SYNC_NOTE = 1, /* something to log: NOTE, ID, TEXT, CODE, CPUSET_CPUS, WAS */
        NCM_CRI_SYNC_SEND, /* send REQ (TIMEOUT_MS); its reply goes to ncm_cri_sync_reply(TOKEN) */
        NCM_CRI_SYNC_DECIDE, /* decide on LISTED (the owner's to free): ncm_cri_sync_decided */
};

enum {
        NCM_CRI_SYNC_NOTE_PUT_BACK = 1, /* ID's cpuset was WAS: put back to CPUSET_CPUS */
        NCM_CRI_SYNC_NOTE_GONE,         /* ID was gone before its update (NOT_FOUND) */
        NCM_CRI_SYNC_NOTE_FAILED_ONCE,  /* ID's update failed (CODE, TEXT); tried again */
        NCM_CRI_SYNC_NOTE_FAILED,       /* ... and failed the time before too: a warning */
        NCM_CRI_SYNC_NOTE_LIST_FAILED,  /* ListContainers failed (CODE, TEXT): the run ends */
};

typedef struct ncm_cri_sync_action {
        int what; /* NCM_CRI_SYNC_*; strings valid until the next call on the machine */
        /* SEND */
        ncm_cri_request req;
        uint32_t timeout_ms;
        uint64_t token;
        /* DECIDE */
        ncm_cri_container *listed;
        size_t n_listed;
        bool release_orphans;
        /* NOTE */
        int note;
        const char *id, *text, *cpuset_cpus, *was;
        ncm_rpc_code code;
        char *own[4]; /* private */
} ncm_cri_sync_action;

typedef struct ncm_cri_sync_stats {
        uint64_t runs, failures; /* runs, and those that could not list */
        uint64_t updates;        /* a run's updates that put a cpuset back */
        uint64_t intent_updates; /* intents the runtime took */
        uint64_t last_ns;        /* the last run's duration */
        uint64_t last_updates;   /* and its updates */
} ncm_cri_sync_stats;

/* NOW_NS: a monotonic clock, the one every later call is given. -ENOMEM. */
NCM_API int ncm_cri_sync_new(const ncm_cri_sync_options *o, uint64_t now_ns, ncm_cri_sync **ret);
NCM_API ncm_cri_sync *ncm_cri_sync_free(ncm_cri_sync *s);
/* Inputs. */
NCM_API void ncm_cri_sync_want(ncm_cri_sync *s);
/* Takes V[0..N) (the newest intent of a container replaces one still waiting; stopped: V
 * freed). -ENOMEM (V freed: the next run puts them right). */
NCM_API int ncm_cri_sync_intents(ncm_cri_sync *s, ncm_cri_update *v, size_t n);
/* The owner's decision on a DECIDE's list: ERROR < 0 (the run ends) or UPD[0..N) taken. */
NCM_API void ncm_cri_sync_decided(ncm_cri_sync *s, int error, ncm_cri_update *upd, size_t n,
                                  uint64_t now_ns);
/* The reply R of SEND TOKEN (a call that could not start: a code other than OK). It may take
 * what R owns. */
NCM_API void ncm_cri_sync_reply(ncm_cri_sync *s, uint64_t token, ncm_cri_reply *r, uint64_t now_ns);
NCM_API void ncm_cri_sync_tick(ncm_cri_sync *s, uint64_t now_ns);
/* Nothing new starts from now on (replies still come back). */
NCM_API void ncm_cri_sync_stop(ncm_cri_sync *s);
/* Outputs: the next action (1, *A), or 0 when there is none now; the time of the next tick
 * (UINT64_MAX: none). */
NCM_API int ncm_cri_sync_next(ncm_cri_sync *s, uint64_t now_ns, ncm_cri_sync_action *a);
NCM_API uint64_t ncm_cri_sync_deadline(const ncm_cri_sync *s) NCM_PURE;
NCM_API const ncm_cri_sync_stats *ncm_cri_sync_get_stats(const ncm_cri_sync *s) NCM_PURE;

/*
 * The intents the node's cri enforcer E published since the last take (ncm_enforcer_cri_take)
 * as updates of the containers the record knows by id, in *RET[0..*RET_N)
 * (ncm_cri_updates_free); those without an id yet (a creation in flight: its
 * CreateContainer carries its intent) are left out. -ENOMEM.
 */
NCM_API int ncm_cri_node_intents(const ncm_cri_node *cn, ncm_enforcer *e, ncm_cri_update **ret,
                                 size_t *ret_n);

/* What a CRI front end counts (nodecmd's CRI service). */
typedef struct ncm_cri_counters {
        uint64_t creates, admitted, refused, passed; /* CreateContainer calls, by outcome */
        uint64_t released, stale; /* containers released: removed or failed, and stale */
        uint64_t create_ns;       /* deciding CreateContainer calls, all of them */
} ncm_cri_counters;

/* C, the machine's K and the proxy's S (NULL: no proxy) as Prometheus text appended to OUT. */
NCM_API void ncm_cri_metrics_format(const ncm_cri_counters *c, const ncm_cri_sync_stats *k,
                                    const ncm_cri_proxy_stats *s, ncm_buf *out);

#ifdef __cplusplus
}
#endif
#endif
