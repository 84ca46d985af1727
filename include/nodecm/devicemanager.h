/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device manager: the kubelet's pkg/kubelet/cm/devicemanager without its gRPC transport.
 *
 *  - a registry of extended resources and their devices, fed by complete plugin snapshots
 *    (ListAndWatch), with capacity/allocatable and the 5-minute grace period of a resource
 *    whose plugin went away;
 *  - allocation at admission, in the kubelet's exact order (devices already held, devices
 *    reusable from regular init containers, then the topology-aligned / unaligned /
 *    no-topology sets, with the plugin's preferred allocation in between) and with its
 *    error texts;
 *  - topology hints per resource for the topology manager (container and pod scope);
 *  - the kubelet_internal_checkpoint file, read and written byte for byte as the kubelet
 *    does, checksum included.
 *
 * Plugins plug in through ncm_devmgr_plugin_ops: the future gRPC transport implements it
 * with real RPCs; the simulator uses the built-in stand-in (ncm_devmgr_standin_ops).
 *
 * Where Go iterates a map or a set (random order), nodecm fixes the order: resources sorted
 * by name and device ids sorted bytewise (strcmp), which is also the order of Go's
 * sets.List(). "Take devices from a set" therefore takes them in sorted id order.
 *
 * Deliberate differences from the kubelet (see docs/devices.md):
 *  - a failed allocation changes nothing: devices reserved along the way, entries recorded
 *    for the container's other resources and the init-container reuse pool are all rolled
 *    back (the kubelet leaves some of that to its next garbage collection);
 *  - a snapshot with the same device id twice is rejected (the kubelet keeps the last);
 *  - an extended resource that no plugin has registered is an error at allocation
 *    ("cannot allocate unregistered device R"), unless NCM_DEVMGR_SKIP_UNKNOWN_RESOURCES is
 *    set (the kubelet's device manager skips it and leaves it to the scheduler);
 *  - ncm_devmgr_remove_container() and ncm_devmgr_remove_pod() release devices at once
 *    (the kubelet only releases them when the pod leaves the active list, see
 *    ncm_devmgr_update_allocated()).
 *
 * A manager is not thread-safe; the caller serialises calls. Plugin hooks are called
 * synchronously from allocation and may not call back into the manager.
 */
#ifndef NODECM_DEVICEMANAGER_H
#define NODECM_DEVICEMANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/hint.h>
#include <nodecm/hintdesc.h>
#include <nodecm/kubelet-version.h>
#include <nodecm/pod.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants (kubelet's pkg/apis/deviceplugin/v1beta1 and devicemanager) ---- */

#define NCM_DEVMGR_API_VERSION "v1beta1"
#define NCM_DEVMGR_HEALTHY "Healthy"
#define NCM_DEVMGR_UNHEALTHY "Unhealthy"
#define NCM_DEVMGR_PLUGIN_DIR "/var/lib/kubelet/device-plugins/"
#define NCM_DEVMGR_KUBELET_SOCKET "/var/lib/kubelet/device-plugins/kubelet.sock"
#define NCM_DEVMGR_CHECKPOINT_NAME "kubelet_internal_checkpoint"
#define NCM_DEVMGR_CHECKPOINT_PATH "/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint"
/* How long a resource whose plugin went away stays (endpointStopGracePeriod), in ns. */
#define NCM_DEVMGR_STOP_GRACE_NS (INT64_C(5) * 60 * 1000000000)
/* PreStartContainer deadline (KubeletPreStartContainerRPCTimeoutInSecs). */
#define NCM_DEVMGR_PRE_START_TIMEOUT_S 30
/* NUMA node key of a device without topology in the checkpoint's DeviceIDs. */
#define NCM_DEVMGR_NO_TOPOLOGY INT64_C(-1)
/* Largest checkpoint file read (-EFBIG beyond). */
#define NCM_DEVMGR_CHECKPOINT_MAX (16u << 20)

/* ---- resource names ---- */

/*
 * true if NAME is an extended resource name as the kubelet checks it
 * (v1helper.IsExtendedResourceName): it contains '/', not "kubernetes.io/", does not start
 * with "requests.", and "requests." + NAME is a qualified name (DNS-1123 subdomain prefix,
 * '/', a name of at most 63 characters matching ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]).
 */
NCM_API bool ncm_devmgr_is_extended_resource_name(const char *name) NCM_PURE;

/* 0, or -EINVAL with the kubelet's text: the ResourceName "NAME" is invalid */
NCM_API int ncm_devmgr_validate_resource_name(const char *name, ncm_error *err);

/* ---- ContainerAllocateResponse ---- */

typedef struct ncm_devmgr_kv {
        char *key;
        char *value;
} ncm_devmgr_kv;

typedef struct ncm_devmgr_mount {
        char *container_path;
        char *host_path;
        bool read_only;
} ncm_devmgr_mount;

typedef struct ncm_devmgr_devspec {
        char *container_path;
        char *host_path;
        char *permissions; /* cgroup device permissions, a subset of "rwm" */
} ncm_devmgr_devspec;

/*
 * A plugin's answer to Allocate for one container (v1beta1.ContainerAllocateResponse), also
 * what reaches the container (ncm_devmgr_run_options()). Every string is malloc'd and owned
 * by the response; the arrays are malloc'd. Maps (envs, annotations) are lists here: a
 * decoded response has unique keys sorted bytewise.
 */
typedef struct ncm_devmgr_alloc_resp {
        ncm_devmgr_kv *envs;
        size_t n_envs;
        ncm_devmgr_mount *mounts;
        size_t n_mounts;
        ncm_devmgr_devspec *devices;
        size_t n_devices;
        ncm_devmgr_kv *annotations;
        size_t n_annotations;
        char **cdi_devices; /* fully qualified CDI names ("vendor.com/gpu=gpu0") */
        size_t n_cdi_devices;
} ncm_devmgr_alloc_resp;

/* An empty response. NULL on out-of-memory. */
NCM_API ncm_devmgr_alloc_resp *ncm_devmgr_alloc_resp_new(void);
NCM_API ncm_devmgr_alloc_resp *ncm_devmgr_alloc_resp_free(ncm_devmgr_alloc_resp *r);
NCM_DEFINE_AUTOPTR(ncm_devmgr_alloc_resp, ncm_devmgr_alloc_resp_free)
/* Deep copy; NULL on out-of-memory. */
NCM_API ncm_devmgr_alloc_resp *ncm_devmgr_alloc_resp_dup(const ncm_devmgr_alloc_resp *r);

/* Appenders (strings are copied). 0 or -ENOMEM (the response is unchanged then). */
NCM_API int ncm_devmgr_alloc_resp_add_env(ncm_devmgr_alloc_resp *r, const char *key,
                                          const char *value);
NCM_API int ncm_devmgr_alloc_resp_add_annotation(ncm_devmgr_alloc_resp *r, const char *key,
                                                 const char *value);
NCM_API int ncm_devmgr_alloc_resp_add_mount(ncm_devmgr_alloc_resp *r, const char *container_path,
                                            const char *host_path, bool read_only);
NCM_API int ncm_devmgr_alloc_resp_add_device(ncm_devmgr_alloc_resp *r, const char *container_path,
                                             const char *host_path, const char *permissions);
NCM_API int ncm_devmgr_alloc_resp_add_cdi_device(ncm_devmgr_alloc_resp *r, const char *name);

/*
 * Protobuf wire form, as Go's proto.Marshal writes it: fields in number order, proto3
 * defaults omitted, every map entry with both its key and its value (protobuf-c would drop
 * an empty one), entries in the order of the lists. *RET is malloc'd (never NULL, even for
 * an empty message, which encodes to 0 bytes). 0 or -ENOMEM.
 */
NCM_API int ncm_devmgr_alloc_resp_encode(const ncm_devmgr_alloc_resp *r, unsigned char **ret,
                                         size_t *ret_len, ncm_error *err);

/*
 * Decode the wire form (protobuf-c), rejecting what Go's proto.Unmarshal rejects as well:
 * malformed wire data, strings that are not valid UTF-8. Map keys are made unique (the last
 * entry wins, as in a Go map) and sorted. 0, -EINVAL ("invalid ContainerAllocateResponse:
 * ...") or -ENOMEM.
 */
NCM_API int ncm_devmgr_alloc_resp_decode(const void *data, size_t len, ncm_devmgr_alloc_resp **ret,
                                         ncm_error *err);

/* ---- plugins ---- */

/* v1beta1.DevicePluginOptions, as GetDevicePluginOptions returns them. */
typedef struct ncm_devmgr_plugin_options {
        bool pre_start_required;
        bool get_preferred_allocation_available;
} ncm_devmgr_plugin_options;

/*
 * The calls the device manager makes to a plugin. DATA is the pointer given to
 * ncm_devmgr_plugin_connect(). Device id lists are sorted (strcmp). Errors are returned as
 * -code with ERR filled; the manager wraps them as the kubelet does.
 */
typedef struct ncm_devmgr_plugin_ops {
        const char *name; /* for messages: "grpc", "stand-in" */

        /*
         * Allocate with one ContainerAllocateRequest{devices_ids = IDS}. On success *RET is
         * container_responses[0] (ownership passes to the manager), or NULL when the plugin
         * answered with no container response (the manager then fails the allocation with
         * kubelet's "no containers return in allocation response").
         */
        int (*allocate)(void *data, const char *resource, const char *const *ids, size_t n,
                        ncm_devmgr_alloc_resp **ret, ncm_error *err);

        /*
         * GetPreferredAllocation with one ContainerPreferredAllocationRequest. Only called
         * when the options say it is available; may be NULL otherwise. On success *RET is a
         * malloc'd array of malloc'd ids (container_responses[0].deviceIDs; NULL / 0 when
         * the plugin returned none); the manager frees it.
         */
        int (*get_preferred_allocation)(void *data, const char *resource,
                                        const char *const *available, size_t n_available,
                                        const char *const *must_include, size_t n_must_include,
                                        int32_t size, char ***ret, size_t *ret_n, ncm_error *err);

        /* PreStartContainer{devices_ids = IDS}; only called when pre_start_required. */
        int (*pre_start_container)(void *data, const char *resource, const char *const *ids,
                                   size_t n, ncm_error *err);

        /* Called once when the manager drops the endpoint (replaced, expired, freed). */
        void (*release)(void *data);
} ncm_devmgr_plugin_ops;

/*
 * The simulator's stand-in plugin (no real devices). Options: neither pre-start nor
 * preferred allocation. Allocate answers, for ids a, b, ... of resource "vendor.com/gpu":
 *   envs        { "NODECM_DEVICES_VENDOR_COM_GPU": "a,b" }  (resource upper-cased, every
 *                                                           byte outside [A-Z0-9] -> '_')
 *   cdi_devices [ "vendor.com/gpu=a", "vendor.com/gpu=b" ]
 * and nothing else. DATA is unused (pass NULL).
 */
NCM_API extern const ncm_devmgr_plugin_ops ncm_devmgr_standin_ops;
NCM_API extern const ncm_devmgr_plugin_options ncm_devmgr_standin_options;

/* ---- the manager ---- */

/* Where the manager learns about pods (kubelet's activePods / sourcesReady). */
typedef struct ncm_devmgr_pods_source {
        /*
         * The UIDs of the active pods: *RET points to an array valid until the next call
         * into the source. 0 or -code. NULL: no garbage collection of pods unless
         * ncm_devmgr_update_allocated() is called.
         */
        int (*active_pods)(void *data, const char *const **ret, size_t *ret_n);
        /* All config sources ready (kubelet's sourcesReady.AllReady()); NULL = always. */
        bool (*sources_ready)(void *data);
        /*
         * Whether the container was reported running by the runtime at start-up (the
         * kubelet-restart path: while sources are not ready, such a container gets nothing
         * new). NULL = never.
         */
        bool (*container_running)(void *data, const char *pod_uid, const char *container);
        void *data;
} ncm_devmgr_pods_source;

enum {
        /* Skip extended resources no plugin knows, as the kubelet's device manager does. */
        NCM_DEVMGR_SKIP_UNKNOWN_RESOURCES = 1 << 0,
};

typedef struct ncm_devmgr_config {
        /* The machine's NUMA node ids (each 0..63), for hints. */
        const int *numa_nodes;
        size_t n_numa_nodes;
        /* Clock in nanoseconds; NULL = CLOCK_MONOTONIC. Only differences matter. */
        int64_t (*now)(void *data);
        void *now_data;
        /* Optional; copied. */
        const ncm_devmgr_pods_source *pods;
        /*
         * Checkpoint file kept up to date (written where the kubelet writes it: after every
         * plugin snapshot, every allocation that allocated something, every resource dropped
         * by ncm_devmgr_get_capacity(), and every removal). NULL = none. Resolved against
         * CHECKPOINT_ROOTFD (AT_FDCWD for a host path).
         */
        const char *checkpoint_path;
        int checkpoint_rootfd;
        unsigned flags; /* NCM_DEVMGR_* */
        /*
         * The kubelet release whose hints to reproduce ({0, 0}: the default, the newest
         * released). From 1.37 the hints walk only the NUMA nodes of the resource's devices
         * (docs/devices.md, "Topology hints"). -EINVAL for a release nodecm does not reproduce.
         */
        ncm_kubelet_version kubelet_version;
        /*
         * Optional: how the checkpoint's TEXT reaches CHECKPOINT_PATH (its owner's batch of
         * writes, say); NULL = ncm_fs_write_atomic(CHECKPOINT_ROOTFD, CHECKPOINT_PATH, 0600).
         */
        int (*checkpoint_write)(void *data, const char *path, const char *text, size_t len,
                                ncm_error *err);
        void *checkpoint_write_data;
} ncm_devmgr_config;

typedef struct ncm_devmgr ncm_devmgr;

/* A new manager with no resources. -EINVAL for a bad NUMA node id, -ENOMEM. */
NCM_API int ncm_devmgr_new(const ncm_devmgr_config *cfg, ncm_devmgr **ret, ncm_error *err);
/* Frees everything and calls each endpoint's release(). NULL-safe. */
NCM_API ncm_devmgr *ncm_devmgr_free(ncm_devmgr *m);
NCM_DEFINE_AUTOPTR(ncm_devmgr, ncm_devmgr_free)

/* ---- registry ---- */

/* One device of a plugin snapshot (v1beta1.Device). */
typedef struct ncm_devmgr_device {
        const char *id;
        const char *health;  /* exactly "Healthy" is healthy; anything else (NULL too) not */
        bool topology;       /* TopologyInfo present (numa may still be empty) */
        const int64_t *numa; /* NUMA node ids of the TopologyInfo, in plugin order */
        size_t n_numa;
} ncm_devmgr_device;

/*
 * A plugin registered RESOURCE (after GetDevicePluginOptions returned OPTS). It replaces
 * any previous endpoint of the resource (whose release() is called). *RET_ENDPOINT receives
 * an id (> 0) naming this instance for ncm_devmgr_plugin_disconnect() and
 * ncm_devmgr_update_devices(). -EINVAL with kubelet's "the ResourceName ... is invalid".
 */
NCM_API int ncm_devmgr_plugin_connect(ncm_devmgr *m, const char *resource,
                                      const ncm_devmgr_plugin_ops *ops, void *data,
                                      const ncm_devmgr_plugin_options *opts, uint64_t *ret_endpoint,
                                      ncm_error *err);

/*
 * The plugin instance ENDPOINT of RESOURCE went away (stream ended, socket gone): all its
 * healthy devices become unhealthy at once and the grace period starts. A disconnect from
 * an instance that is no longer the resource's endpoint is ignored. Returns 1 when applied,
 * 0 when ignored.
 */
NCM_API int ncm_devmgr_plugin_disconnect(ncm_devmgr *m, const char *resource, uint64_t endpoint);

/*
 * The transport of endpoint ENDPOINT of RESOURCE is going away for good (the host shuts down
 * before the manager): the endpoint stops as with ncm_devmgr_plugin_disconnect() and forgets
 * its ops and data without calling release(), as an endpoint restored from a checkpoint. A
 * replaced endpoint: nothing. Returns 1 when applied, 0 when ignored.
 */
NCM_API int ncm_devmgr_plugin_detach(ncm_devmgr *m, const char *resource, uint64_t endpoint);

/*
 * A complete snapshot of RESOURCE's devices (ListAndWatchResponse): health sets and device
 * records are rebuilt from it; devices not in it disappear. ENDPOINT is the sender (0: do
 * not check, as in the kubelet's own tests); an update from a replaced instance is refused
 * with -ESTALE. A duplicate device id refuses the whole snapshot with -EINVAL
 * ("resource R: duplicate device ID "X" in plugin update"). Nothing changes on error.
 * Then the checkpoint is written (if configured); if only that fails the snapshot stays
 * applied and the write error is returned.
 */
NCM_API int ncm_devmgr_update_devices(ncm_devmgr *m, const char *resource, uint64_t endpoint,
                                      const ncm_devmgr_device *devices, size_t n, ncm_error *err);

typedef struct ncm_devmgr_capacity_entry {
        char *resource;
        int64_t capacity;    /* healthy + unhealthy */
        int64_t allocatable; /* healthy */
} ncm_devmgr_capacity_entry;

typedef struct ncm_devmgr_capacity {
        ncm_devmgr_capacity_entry *entries; /* sorted by resource */
        size_t n_entries;
        char **deleted; /* resources dropped by this call (capacity 0 in node status), sorted */
        size_t n_deleted;
} ncm_devmgr_capacity;

/*
 * kubelet's GetCapacity(): resources without an endpoint, or whose endpoint stopped more
 * than NCM_DEVMGR_STOP_GRACE_NS ago, are dropped (listed in deleted, checkpoint rewritten);
 * the others report capacity and allocatable. *RET is overwritten. 0, -ENOMEM, or the
 * checkpoint write error (the drop stands).
 */
NCM_API int ncm_devmgr_get_capacity(ncm_devmgr *m, ncm_devmgr_capacity *ret, ncm_error *err);
NCM_API void ncm_devmgr_capacity_done(ncm_devmgr_capacity *c);

/* isDevicePluginResource: RESOURCE has a health set or allocated devices. */
NCM_API bool ncm_devmgr_is_device_resource(const ncm_devmgr *m, const char *resource);

/* Healthy (allocatable) device ids of RESOURCE, sorted; NULL-terminated, malloc'd (free each
 * and the array, or use ncm_devmgr_strv_free). *RET_N may be NULL. 0, -ENOENT, -ENOMEM. */
NCM_API int ncm_devmgr_healthy_devices(const ncm_devmgr *m, const char *resource, char ***ret,
                                       size_t *ret_n);
NCM_API void ncm_devmgr_strv_free(char **v);

/* Device ids of RESOURCE in use (kubelet's allocatedDevices), sorted, as above. -ENOENT when
 * nothing was ever allocated from RESOURCE. */
NCM_API int ncm_devmgr_allocated_devices(const ncm_devmgr *m, const char *resource, char ***ret,
                                         size_t *ret_n);

/* ---- containers and allocation ---- */

typedef enum ncm_devmgr_container_type {
        NCM_DEVMGR_APP_CONTAINER = 0,
        NCM_DEVMGR_INIT_CONTAINER,    /* regular init container: its devices are reusable */
        NCM_DEVMGR_SIDECAR_CONTAINER, /* init container with restartPolicy Always */
} ncm_devmgr_container_type;

#define NCM_DEVMGR_UNSET INT64_C(-1)

/* One entry of a container's resources: counts of limits / requests (NCM_DEVMGR_UNSET when
 * absent). Names that are not extended resources (cpu, memory, hugepages-2Mi, ...) are
 * ignored. For an extended resource the limit is the count (requests must equal limits). */
typedef struct ncm_devmgr_resource {
        const char *name;
        int64_t limit;
        int64_t request;
} ncm_devmgr_resource;

typedef struct ncm_devmgr_container {
        const char *name;
        ncm_devmgr_container_type type;
        const ncm_devmgr_resource *resources;
        size_t n_resources;
} ncm_devmgr_container;

/* A pod for pod-scope hints: init containers in order, then app containers. */
typedef struct ncm_devmgr_pod {
        const char *uid;
        const ncm_devmgr_container *init_containers;
        size_t n_init_containers;
        const ncm_devmgr_container *containers;
        size_t n_containers;
} ncm_devmgr_pod;

/*
 * Check a container's extended resources the way the API server would have: integer
 * counts >= 0, a limit for every request, requests equal to limits, no duplicate names.
 * -EINVAL naming the field: container "app": resources.requests[vendor.com/gpu]: Invalid
 * value: "2": must be equal to vendor.com/gpu limit of 1
 */
NCM_API int ncm_devmgr_validate_container(const ncm_devmgr_container *c, ncm_error *err);

/*
 * kubelet's Allocate(pod, container), called once per container in admission order (init
 * containers first). AFFINITY is the topology manager's decision for the container (NULL
 * or any = no NUMA affinity). Resources are allocated in name order, each with one plugin
 * Allocate call; then the checkpoint is written if anything was allocated.
 *
 * A regular init container's devices join the pod's reuse pool; a sidecar's and an app
 * container's devices leave it. Errors carry the kubelet's texts (codes: EINVAL for an
 * invalid container, NCM_E_UNSATISFIABLE for what cannot be allocated, the plugin's code
 * for a failed plugin call). On any error nothing changes.
 */
NCM_API int ncm_devmgr_allocate(ncm_devmgr *m, const char *pod_uid, const ncm_devmgr_container *c,
                                const ncm_hint *affinity, ncm_error *err);

/*
 * Release the devices of one container (nodecm extension; also drops them from the reuse
 * pool) or of a whole pod. Returns 1 if something was released, 0 if there was nothing.
 * The checkpoint is rewritten after a release (a write error is returned; the release
 * stands).
 */
NCM_API int ncm_devmgr_remove_container(ncm_devmgr *m, const char *pod_uid, const char *container,
                                        ncm_error *err);
NCM_API int ncm_devmgr_remove_pod(ncm_devmgr *m, const char *pod_uid, ncm_error *err);

/*
 * kubelet's UpdateAllocatedDevices() given the active pods: drops the allocations of every
 * other pod and recomputes the in-use sets (no checkpoint write, as in the kubelet). Returns
 * the number of pods dropped. The manager runs this itself, with its pods source, before
 * allocating and before hints.
 */
NCM_API int ncm_devmgr_update_allocated(ncm_devmgr *m, const char *const *active_pod_uids,
                                        size_t n);

/* One resource's devices of a container. */
typedef struct ncm_devmgr_assignment {
        char *resource;
        char **ids; /* sorted, unique, NULL-terminated */
        size_t n_ids;
} ncm_devmgr_assignment;

/*
 * The devices (pod, container) holds, one assignment per resource, sorted by resource.
 * *RET is NULL and *RET_N 0 when there are none. 0 or -ENOMEM.
 */
NCM_API int ncm_devmgr_container_devices(const ncm_devmgr *m, const char *pod_uid,
                                         const char *container, ncm_devmgr_assignment **ret,
                                         size_t *ret_n);
NCM_API void ncm_devmgr_assignments_free(ncm_devmgr_assignment *a, size_t n);

/*
 * kubelet's GetDeviceRunContainerOptions: for each device resource of C with a non-zero
 * limit, PreStartContainer when the plugin asks for it (kubelet's errors), a new Allocate
 * when the pod is active but has no cached allocation (AFFINITY as for allocate); then the
 * cached responses of the container's resources merged in resource-name order, the first
 * of duplicate env names / device and mount container paths / annotation keys / CDI names
 * winning. *RET is NULL when the container has no devices (kubelet's nil).
 */
NCM_API int ncm_devmgr_run_options(ncm_devmgr *m, const char *pod_uid,
                                   const ncm_devmgr_container *c, const ncm_hint *affinity,
                                   ncm_devmgr_alloc_resp **ret, ncm_error *err);

/* ---- topology hints ---- */

typedef struct ncm_devmgr_resource_hints {
        char *resource;
        ncm_hint_list hints; /* nil: no preference; n == 0: cannot be satisfied */
        /* From the *_describe() functions: the generated list, described (HINTS then unused). */
        ncm_hint_desc *desc;
} ncm_devmgr_resource_hints;

typedef struct ncm_devmgr_hints {
        ncm_devmgr_resource_hints *v; /* sorted by resource */
        size_t n;
} ncm_devmgr_hints;

#define NCM_DEVMGR_HINTS_INIT                                                                      \
        {                                                                                          \
                NULL, 0                                                                            \
        }

/*
 * kubelet's GetTopologyHints(pod, container): one list per device resource the container
 * asks for (other names are absent). Hints are in the kubelet's IterateBitMasks order.
 * *RET is overwritten. 0, -EINVAL (invalid container), -ENOMEM.
 */
NCM_API int ncm_devmgr_container_hints(ncm_devmgr *m, const char *pod_uid,
                                       const ncm_devmgr_container *c, ncm_devmgr_hints *ret,
                                       ncm_error *err);

/*
 * kubelet's GetPodTopologyHints(pod): requests are the pod's effective limits (component-
 * helpers PodLimits without overhead: app containers and sidecars summed, then the maximum
 * with each regular init container plus the sidecars started before it).
 */
NCM_API int ncm_devmgr_pod_hints(ncm_devmgr *m, const ncm_devmgr_pod *pod, ncm_devmgr_hints *ret,
                                 ncm_error *err);
NCM_API void ncm_devmgr_hints_done(ncm_devmgr_hints *h);

/*
 * The same two without walking the NUMA masks: where the kubelet would generate a list
 * (generateDeviceTopologyHints), the entry's DESC describes it instead
 * (include/nodecm/hintdesc.h; ncm_hint_desc_materialize() gives the very list) and HINTS is
 * empty; "no preference" and "cannot be satisfied" stay lists (nil, empty).
 */
NCM_API int ncm_devmgr_container_hints_describe(ncm_devmgr *m, const char *pod_uid,
                                                const ncm_devmgr_container *c,
                                                ncm_devmgr_hints *ret, ncm_error *err);
NCM_API int ncm_devmgr_pod_hints_describe(ncm_devmgr *m, const ncm_devmgr_pod *pod,
                                          ncm_devmgr_hints *ret, ncm_error *err);

/*
 * The hints of N devices a container holds already, as the kubelet's GetTopologyHints gives
 * them for a device-plugin resource whose allocated devices are these: the list
 * generateDeviceTopologyHints(resource, held, {}, N) makes, described (include/nodecm/
 * hintdesc.h), DEVICES[i] being each device's NUMA mask, over the machine's nodes NUMA_NODES
 * (from kubelet 1.37, V's default, only the nodes of the devices). A device on several nodes
 * counts in every mask that holds one of them (kubelet's AnySet), so its preferred hints are each
 * of its nodes alone. For devices the kubelet never sees (DRA's, nodecm's DRA hints): the caller
 * leaves out devices without a NUMA node; none at all is no preference (*RET NULL). -EINVAL for
 * a node id above 63, -ENOMEM.
 */
NCM_API int ncm_devmgr_held_hints_describe(const int *numa_nodes, size_t n_numa,
                                           ncm_kubelet_version v, const ncm_bitmask *devices,
                                           size_t n, ncm_hint_desc **ret, ncm_error *err);

/* The effective pod-level count of RESOURCE as ncm_devmgr_pod_hints() computes it. */
NCM_API int64_t ncm_devmgr_pod_limit(const ncm_devmgr_pod *pod, const char *resource);

/* ---- the same, for the pod model (include/nodecm/pod.h) ----
 *
 * These convert an ncm_pod / ncm_container (limits and requests of extended resources,
 * which must be integers: `must be an integer` otherwise) and call the functions above with
 * POD->uid. They have the shapes the node needs to register the device manager as a
 * topology-manager hint provider next to the CPU manager (kubelet registers the device
 * manager first); the node's glue copies each ncm_devmgr_hints entry into its ncm_tm_hints
 * (ncm_tm_hints_add(h, v[i].resource, list.hints, list.n, list.nil, NULL, err)):
 *
 *     get_container_hints -> ncm_devmgr_pod_container_hints(m, pod, c, &h, err)
 *     get_pod_hints       -> ncm_devmgr_pod_scope_hints(m, pod, &h, err)
 *     allocate            -> ncm_devmgr_allocate_pod_container(m, pod, c, affinity, err)
 *                            (*ret_type stays NULL: kubelet reports these errors as
 *                            UnexpectedAdmissionError)
 */

/* ncm_devmgr_validate_container() for every container of POD. */
NCM_API int ncm_devmgr_validate_pod(const ncm_pod *pod, ncm_error *err);
NCM_API int ncm_devmgr_allocate_pod_container(ncm_devmgr *m, const ncm_pod *pod,
                                              const ncm_container *c, const ncm_hint *affinity,
                                              ncm_error *err);
NCM_API int ncm_devmgr_pod_container_hints(ncm_devmgr *m, const ncm_pod *pod,
                                           const ncm_container *c, ncm_devmgr_hints *ret,
                                           ncm_error *err);
NCM_API int ncm_devmgr_pod_scope_hints(ncm_devmgr *m, const ncm_pod *pod, ncm_devmgr_hints *ret,
                                       ncm_error *err);
/* The same two with descriptions (ncm_devmgr_container_hints_describe()). */
NCM_API int ncm_devmgr_pod_container_hints_describe(ncm_devmgr *m, const ncm_pod *pod,
                                                    const ncm_container *c, ncm_devmgr_hints *ret,
                                                    ncm_error *err);
NCM_API int ncm_devmgr_pod_scope_hints_describe(ncm_devmgr *m, const ncm_pod *pod,
                                                ncm_devmgr_hints *ret, ncm_error *err);
NCM_API int ncm_devmgr_pod_run_options(ncm_devmgr *m, const ncm_pod *pod, const ncm_container *c,
                                       const ncm_hint *affinity, ncm_devmgr_alloc_resp **ret,
                                       ncm_error *err);

/* ---- the simulator ---- */

/*
 * Apply the scenario's "devices" section (DESIGN.md), TEXT being the JSON object
 *     {"example.com/gpu": [{"id": "gpu0", "numa": [0], "health": "Healthy"}, ...], ...}
 * For each resource (in name order) the stand-in plugin registers and sends the list as its
 * snapshot. A device without "health" is healthy; without "numa" (or null) it has no
 * topology; "numa": [] is a TopologyInfo without nodes. null applies nothing. Everything is
 * checked before anything is applied: -EINVAL naming the field
 * (`scenario.json: example.com/gpu[1].numa[0]: expected an integer, got x`), the resource
 * name rule (kubelet's text), duplicate ids. NAME starts messages (NULL: "devices").
 */
NCM_API int ncm_devmgr_apply_devices_json(ncm_devmgr *m, const char *text, size_t len,
                                          const char *name, ncm_error *err);

/* Append {"<resource>": ["<id>", ...], ...} for (pod, container), resources and ids sorted;
 * {} when it holds nothing. */
NCM_API void ncm_devmgr_container_devices_json(const ncm_devmgr *m, const char *pod_uid,
                                               const char *container, ncm_buf *out);

/* ---- kubelet_internal_checkpoint ---- */

/* The devices of one NUMA node in an entry's DeviceIDs. */
typedef struct ncm_devmgr_numa_ids {
        int64_t node;  /* -1: devices without topology */
        bool ids_null; /* JSON null instead of a list */
        char **ids;
        size_t n_ids;
} ncm_devmgr_numa_ids;

/* One PodDevicesEntry. */
typedef struct ncm_devmgr_checkpoint_entry {
        char *pod_uid;
        char *container_name;
        char *resource_name;
        bool device_ids_null;            /* "DeviceIDs": null */
        ncm_devmgr_numa_ids *device_ids; /* sorted by node, unique */
        size_t n_device_ids;
        bool alloc_resp_null; /* "AllocResp": null (no bytes at all) */
        unsigned char *alloc_resp;
        size_t alloc_resp_len;
} ncm_devmgr_checkpoint_entry;

/* One RegisteredDevices item: a resource and its healthy device ids. */
typedef struct ncm_devmgr_registered {
        char *resource;
        bool ids_null;
        char **ids;
        size_t n_ids;
} ncm_devmgr_registered;

/*
 * The file's content, as Go decodes it. null vs empty is kept because it changes the
 * checksum. Everything is malloc'd and freed by ncm_devmgr_checkpoint_free().
 */
typedef struct ncm_devmgr_checkpoint {
        bool entries_null; /* "PodDeviceEntries": null */
        ncm_devmgr_checkpoint_entry *entries;
        size_t n_entries;
        bool registered_null;              /* "RegisteredDevices": null */
        ncm_devmgr_registered *registered; /* sorted bytewise, unique */
        size_t n_registered;
        uint64_t checksum; /* as read ("Checksum") */
} ncm_devmgr_checkpoint;

NCM_API ncm_devmgr_checkpoint *ncm_devmgr_checkpoint_free(ncm_devmgr_checkpoint *cp);
NCM_DEFINE_AUTOPTR(ncm_devmgr_checkpoint, ncm_devmgr_checkpoint_free)

/*
 * Parse TEXT (LEN bytes) as the kubelet reads it (encoding/json into checkpoint.Data):
 * field names matched case-insensitively, unknown fields ignored, a repeated field applied
 * again (maps merge, other values are replaced), null leaving a value as it was, NUMA keys
 * parsed with strconv.ParseInt, AllocResp base64-decoded. The checksum is NOT verified.
 * NAME starts error messages: "NAME:LINE:COL: ..." for syntax errors, "NAME: Data.X: ..." for
 * wrong types. Strings containing NUL (\u0000) are refused. 0, -EINVAL, -EFBIG, -ENOMEM.
 */
NCM_API int ncm_devmgr_checkpoint_parse(const char *text, size_t len, const char *name,
                                        ncm_devmgr_checkpoint **ret, ncm_error *err);

/*
 * Whether TEXT is a device manager checkpoint, for tools that tell checkpoint kinds apart by
 * content: 1 when it is a JSON object with a top-level key the kubelet reads as "Data" (any
 * case; cpu_manager_state never has one), 0 for other JSON, -EINVAL (syntax error, as
 * ncm_devmgr_checkpoint_parse() words it) when it is not JSON at all.
 */
NCM_API int ncm_devmgr_checkpoint_probe(const char *text, size_t len, const char *name,
                                        ncm_error *err);

/* Remove every entry of POD_UID (a repair: the kubelet then no longer sees those devices as
 * in use). Returns how many entries went. The stored checksum is left as it was. */
NCM_API int ncm_devmgr_checkpoint_drop_pod(ncm_devmgr_checkpoint *cp, const char *pod_uid);

/* Read PATH (through ROOTFD; AT_FDCWD for a host path) and parse it. -ENOENT when absent. */
NCM_API int ncm_devmgr_checkpoint_load(int rootfd, const char *path, ncm_devmgr_checkpoint **ret,
                                       ncm_error *err);

/*
 * The checksum of the data (FNV-1a 32 over its go-spew rendering), as the kubelet computes
 * it; ncm_devmgr_checkpoint_spew() appends the rendering itself.
 */
NCM_API uint64_t ncm_devmgr_checkpoint_checksum(const ncm_devmgr_checkpoint *cp) NCM_PURE;
NCM_API void ncm_devmgr_checkpoint_spew(const ncm_devmgr_checkpoint *cp, ncm_buf *out);

/*
 * 0 when the stored checksum matches, else -NCM_E_CHECKSUM with the kubelet's text first:
 * "checkpoint is corrupted (checksum 1, computed 2)". The kubelet treats such a file as no
 * state (ncm_devmgr_load_checkpoint() does the same); a tool reports it.
 */
NCM_API int ncm_devmgr_checkpoint_verify(const ncm_devmgr_checkpoint *cp, ncm_error *err);

/*
 * Append the file as the kubelet writes it (encoding/json, no trailing newline), with the
 * checksum recomputed from the data (cp->checksum is ignored).
 */
NCM_API void ncm_devmgr_checkpoint_format(const ncm_devmgr_checkpoint *cp, ncm_buf *out);

/* Format and write atomically (ncm_fs_write_atomic, mode 0600). */
NCM_API int ncm_devmgr_checkpoint_write(int rootfd, const char *path,
                                        const ncm_devmgr_checkpoint *cp, ncm_error *err);

enum {
        NCM_DEVMGR_SHOW_JSON = 1 << 0, /* one JSON object instead of text */
};

/*
 * A readable rendering for `nodecm checkpoint show`: checksum (stored and computed, and
 * whether they match), registered devices, and each entry with its devices per NUMA node and
 * its decoded AllocResp (envs, mounts, devices, annotations, CDI devices; or the decoding
 * error, for which the kubelet would skip the entry). Text ends with a newline; JSON is one
 * line plus newline.
 */
NCM_API void ncm_devmgr_checkpoint_show(const ncm_devmgr_checkpoint *cp, unsigned flags,
                                        ncm_buf *out);

/* The manager's state as the kubelet would checkpoint it (entries sorted by pod, container,
 * resource; RegisteredDevices = the healthy ids of every resource with a health set). */
NCM_API int ncm_devmgr_to_checkpoint(const ncm_devmgr *m, ncm_devmgr_checkpoint **ret,
                                     ncm_error *err);

/*
 * kubelet's readCheckpoint() from parsed data: entries whose AllocResp does not decode are
 * skipped (counted in *RET_SKIPPED when not NULL); in-use sets are rebuilt; every registered
 * resource gets empty health sets and a stopped endpoint (capacity 0 until its plugin
 * re-registers, dropped after the grace period). The checksum is not checked here.
 */
NCM_API int ncm_devmgr_restore(ncm_devmgr *m, const ncm_devmgr_checkpoint *cp, size_t *ret_skipped,
                               ncm_error *err);

/*
 * Load, verify and restore PATH as the kubelet's Start() does. Returns 1 when restored, 0
 * when the file does not exist; -NCM_E_CHECKSUM / -EINVAL / ... when it cannot be used: the
 * manager is then unchanged and the kubelet would carry on with empty state ("Continue after
 * failing to read checkpoint file. Device allocation info may NOT be up-to-date").
 */
NCM_API int ncm_devmgr_load_checkpoint(ncm_devmgr *m, int rootfd, const char *path, ncm_error *err);

/* Write the manager's state to PATH now. */
NCM_API int ncm_devmgr_write_checkpoint(const ncm_devmgr *m, int rootfd, const char *path,
                                        ncm_error *err);

/* ---- what a live device-plugin host and the pod resources API need ---- */

/*
 * The endpoint grace period (kubelet's endpointStopGracePeriod, NCM_DEVMGR_STOP_GRACE_NS):
 * how long a resource whose plugin went away stays before ncm_devmgr_get_capacity() drops
 * it. NS <= 0 restores the kubelet's 5 minutes. A nodecm setting (kubernetes issue 99571 asks
 * for it); tests use it to see the drop without waiting.
 */
NCM_API void ncm_devmgr_set_stop_grace(ncm_devmgr *m, int64_t ns);

/*
 * The pod and container whose allocation (ncm_devmgr_allocate, ncm_devmgr_run_options) is
 * calling a plugin hook right now, for a transport that answers hooks asynchronously; NULL
 * outside a hook.
 */
NCM_API const char *ncm_devmgr_calling_pod(const ncm_devmgr *m) NCM_PURE;
NCM_API const char *ncm_devmgr_calling_container(const ncm_devmgr *m) NCM_PURE;

/*
 * Hold IDS[0..N) of RESOURCE for POD_UID on behalf of OWNER (any number > 0 the caller
 * picks): allocations and hints of every other pod treat them as in use, as the kubelet's
 * allocatedDevices keeps the devices it is asking a plugin to Allocate while the RPC is in
 * flight. An asynchronous transport holds what a pod's pending calls ask for while it waits
 * for the answers, then lets the allocation run again. Holds are not persisted and do not
 * count as allocated anywhere else. 0 or -ENOMEM (nothing held then).
 */
NCM_API int ncm_devmgr_hold(ncm_devmgr *m, uint64_t owner, const char *pod_uid,
                            const char *resource, const char *const *ids, size_t n);
/* Release every hold of OWNER. */
NCM_API void ncm_devmgr_release_holds(ncm_devmgr *m, uint64_t owner);
/* The number of devices held (all owners), for tests and status. */
NCM_API size_t ncm_devmgr_num_held(const ncm_devmgr *m) NCM_PURE;

/*
 * The cached Allocate responses of (POD_UID, CONTAINER) merged as
 * ncm_devmgr_run_options() merges them (resource-name order, first of duplicate env names,
 * device and mount container paths, annotation keys and CDI names winning), without calling
 * any plugin: what a runtime hands the container. *RET is NULL when the container holds no
 * devices. 0 or -ENOMEM.
 */
NCM_API int ncm_devmgr_container_options(const ncm_devmgr *m, const char *pod_uid,
                                         const char *container, ncm_devmgr_alloc_resp **ret);

/*
 * The Allocate answer (POD_UID, CONTAINER) got for RESOURCE, copied into *RET; NULL when it
 * holds none of RESOURCE (or the answer is unknown, as after a restart from a checkpoint whose
 * entry had none). Where its devices are (ncm_locator_plugin). 0 or -ENOMEM.
 */
NCM_API int ncm_devmgr_allocation_resp(const ncm_devmgr *m, const char *pod_uid,
                                       const char *container, const char *resource,
                                       ncm_devmgr_alloc_resp **ret);

/* One device of a resource, for listings (`nodecm devices`, pod resources). */
typedef struct ncm_devmgr_device_info {
        char *id;
        char *health;  /* as the plugin sent it ("Healthy", "Unhealthy", anything) */
        bool healthy;  /* in the healthy set: allocatable (false once the plugin left) */
        bool topology; /* TopologyInfo present */
        int64_t *numa; /* its NUMA node ids, in plugin order */
        size_t n_numa;
        bool allocated; /* in use by a container (kubelet's allocatedDevices) */
        bool held;      /* held for a pod whose plugin calls are in flight */
        char *pod;      /* the pod UID and container holding it (the first, by name); NULL */
        char *container;
} ncm_devmgr_device_info;

typedef enum ncm_devmgr_endpoint_state {
        NCM_DEVMGR_ENDPOINT_NONE = 0, /* no plugin (allocated devices only) */
        NCM_DEVMGR_ENDPOINT_RUNNING,  /* a plugin is registered */
        NCM_DEVMGR_ENDPOINT_STOPPED,  /* its plugin went away: in the grace period */
} ncm_devmgr_endpoint_state;

/* One resource: its endpoint, capacity and devices. */
typedef struct ncm_devmgr_resource_info {
        char *resource;
        ncm_devmgr_endpoint_state endpoint;
        int64_t stopped_ns;                /* STOPPED: how long ago (the manager's clock) */
        int64_t grace_left_ns;             /* STOPPED: until ncm_devmgr_get_capacity() drops it */
        ncm_devmgr_plugin_options options; /* RUNNING and STOPPED */
        const char *plugin;              /* the ops' name ("grpc", "stand-in"); NULL without one */
        int64_t capacity;                /* healthy + unhealthy, as GetCapacity reports it */
        int64_t allocatable;             /* healthy */
        int64_t allocated;               /* devices in use */
        ncm_devmgr_device_info *devices; /* sorted by id */
        size_t n_devices;
} ncm_devmgr_resource_info;

typedef struct ncm_devmgr_inventory {
        ncm_devmgr_resource_info *v; /* sorted by resource */
        size_t n;
} ncm_devmgr_inventory;

/*
 * Every resource the manager knows (registered, in its grace period, restored from a
 * checkpoint, or only allocated), with its devices. *RET is overwritten. 0 or -ENOMEM.
 */
NCM_API int ncm_devmgr_inventory_get(const ncm_devmgr *m, ncm_devmgr_inventory *ret);
NCM_API void ncm_devmgr_inventory_done(ncm_devmgr_inventory *inv);

/*
 * Append the inventory as one JSON object and a newline (`nodecm devices --json`):
 *   {"resources": [{"resource": "example.com/gpu", "endpoint": "running", "plugin": "grpc",
 *     "options": {"preStartRequired": false, "getPreferredAllocationAvailable": true},
 *     "capacity": 4, "allocatable": 4, "allocated": 1,
 *     "devices": [{"id": "gpu0", "health": "Healthy", "healthy": true, "numa": [0],
 *                  "allocated": true, "pod": "UID", "container": "app"}, ...]}, ...]}
 * A stopped endpoint adds "stoppedSeconds" and "graceLeftSeconds"; a device without
 * topology has "numa": null; "held": true marks a device held for a pending admission.
 */
NCM_API void ncm_devmgr_inventory_json(const ncm_devmgr_inventory *inv, ncm_buf *out);
/* The same for people: one line per resource, one indented line per device. */
NCM_API void ncm_devmgr_inventory_text(const ncm_devmgr_inventory *inv, ncm_buf *out);

/* Append R as a JSON object {"envs": {...}, "mounts": [...], "devices": [...],
 * "annotations": {...}, "cdiDevices": [...]} (as `nodecm checkpoint show --json` shows it). */
NCM_API void ncm_devmgr_alloc_resp_json(const ncm_devmgr_alloc_resp *r, ncm_buf *out);

/* One resource of a container with its devices per NUMA node, as recorded at allocation
 * (the checkpoint's DeviceIDs; node -1: no topology). */
typedef struct ncm_devmgr_numa_assignment {
        char *resource;
        ncm_devmgr_numa_ids *numa; /* sorted by node */
        size_t n_numa;
} ncm_devmgr_numa_assignment;

/*
 * The devices of (POD_UID, CONTAINER) per resource (sorted) and NUMA node, what the pod
 * resources API reports. *RET NULL / 0 when none. 0 or -ENOMEM.
 */
NCM_API int ncm_devmgr_container_numa(const ncm_devmgr *m, const char *pod_uid,
                                      const char *container, ncm_devmgr_numa_assignment **ret,
                                      size_t *ret_n);
NCM_API void ncm_devmgr_numa_assignments_free(ncm_devmgr_numa_assignment *v, size_t n);

#ifdef __cplusplus
}
#endif
#endif
