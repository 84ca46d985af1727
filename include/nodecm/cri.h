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
 *              commands and tests.
 *
 * Nothing here needs the generated protobuf-c types: messages cross this API as bytes.
 */
#ifndef NODECM_CRI_H
#define NODECM_CRI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
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

/* Called once with the answer; R (and what it points to) is valid during the call only. */
typedef void (*ncm_cri_done_fn)(const ncm_cri_reply *r, void *data);

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

#ifdef __cplusplus
}
#endif
#endif
