/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod model: the subset of a Kubernetes Pod object the resource managers read, as the
 * kubelet sees it, i.e. after the API server's defaulting and validation.
 *
 * Reading a pod (JSON or YAML) keeps metadata.uid/name/namespace, spec.initContainers and
 * spec.containers (name, restartPolicy, resources.requests/limits), spec.resources (pod-level
 * resources) and spec.overhead. Every other field, status included, is ignored. Quantities may
 * be JSON strings or numbers. Then, as the API server does on create:
 *  1. a container limit without a request of the same resource copies into the request;
 *  2. pod-level requests/limits are defaulted (PodLevelResources, on since 1.34): hugepage
 *     limits from the containers', requests of cpu/memory from the containers' aggregate
 *     requests, then from the pod-level limits, and cpu/memory limits from the containers'
 *     aggregate limits when every container has one;
 *  3. every value is rounded up to a multiple of 1m (SetDefaults_ResourceList);
 *  4. validation: metadata.uid, name and namespace and the container names as the API server
 *     checks them (ncm_pod_validate_*), at least one container, container names unique across
 *     init and app containers, no negative quantity, no request above the limit, and no
 *     quantity (or pod total) beyond what the kubelet holds (cpu up to (2^63-1)/1000 cores,
 *     anything else up to 2^63-1).
 * The QoS class is then computed (ComputePodQOS; status.qosClass is ignored, as the API server
 * recomputes it on create). docs/pod.md has the user-facing details.
 *
 * The model is a read-only struct: read the fields directly, never modify them. Resource
 * lists are sorted by name (byte order) with unique names.
 */
#ifndef NODECM_POD_H
#define NODECM_POD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/quantity.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Resource names the managers look up. */
#define NCM_RESOURCE_CPU "cpu"
#define NCM_RESOURCE_MEMORY "memory"
#define NCM_RESOURCE_HUGEPAGES_PREFIX "hugepages-"

typedef struct ncm_resource {
        char *name;            /* "cpu", "memory", "hugepages-2Mi", "example.com/gpu" */
        ncm_quantity quantity; /* after defaulting: a multiple of 1m, never negative */
} ncm_resource;

/* A Kubernetes ResourceList: sorted by name, names unique. */
typedef struct ncm_resource_list {
        ncm_resource *items;
        size_t n;
} ncm_resource_list;

typedef struct ncm_resources {
        ncm_resource_list requests;
        ncm_resource_list limits;
} ncm_resources;

typedef struct ncm_container {
        char *name;
        size_t index; /* position in spec.containers or spec.initContainers */
        bool init;    /* listed in spec.initContainers */
        bool sidecar; /* init container with restartPolicy: Always (restartable) */
        ncm_resources resources;
        /*
         * The CDI devices the runtime adds to it besides the device plugins' (DRA's: what the
         * kubelet sends in CreateContainer; in a Pod object the NCM_POD_CDI_ANNOTATION), as
         * fully qualified names, in the order given; NULL / 0 for none.
         */
        char **cdi_devices;
        size_t n_cdi_devices;
} ncm_container;

/*
 * The annotation that carries the containers' CDI devices in a Pod object (docs/pod.md):
 * a JSON object, container name -> array of CDI names, e.g.
 *   nodecm.io/cdi-devices: '{"app": ["k8s.gpu.example.com/gpu=claim-1-gpu0"]}'
 * The kubelet knows a container's DRA devices only once the drivers prepared them; nodecm's
 * CRI proxy takes them from CreateContainer, and a scenario or a `nodecm node admit` pod says
 * them here.
 */
#define NCM_POD_CDI_ANNOTATION "nodecm.io/cdi-devices"
/* Most CDI devices a container may name. */
#define NCM_POD_CDI_MAX 256

/* v1.PodQOSClass. */
typedef enum ncm_qos_class {
        NCM_QOS_BEST_EFFORT = 0,
        NCM_QOS_BURSTABLE,
        NCM_QOS_GUARANTEED,
} ncm_qos_class;

/* One metadata.annotations entry nodecm reads (NCM_POD_ANNOTATION_*). */
typedef struct ncm_pod_annotation {
        char *key;
        char *value;
} ncm_pod_annotation;

/*
 * The pod annotations nodecm acts on (docs/isolation.md); every other annotation but
 * NCM_POD_CDI_ANNOTATION (above) is read past.
 * nodecm.io/isolated-cpus: "prefer" | "require" (isolatedCPUs: exclusive-only). CRI-O's
 * runtime-class annotations, for Guaranteed pods' containers with whole CPUs: "disable" (or
 * CRI-O's older "true") turns the feature off for them, "enable" is the default.
 */
#define NCM_POD_ANNOTATION_ISOLATED_CPUS "nodecm.io/isolated-cpus"
#define NCM_POD_ANNOTATION_CPU_LOAD_BALANCING "cpu-load-balancing.crio.io"
#define NCM_POD_ANNOTATION_CPU_QUOTA "cpu-quota.crio.io"
#define NCM_POD_ANNOTATION_IRQ_LOAD_BALANCING "irq-load-balancing.crio.io"

typedef struct ncm_pod {
        char *uid;                      /* metadata.uid, never empty */
        char *name;                     /* metadata.name, "" when absent */
        char *ns;                       /* metadata.namespace, "default" when absent */
        ncm_container *init_containers; /* spec.initContainers, in order */
        size_t n_init_containers;
        ncm_container *containers; /* spec.containers, in order; n_containers >= 1 */
        size_t n_containers;
        bool has_pod_resources;          /* spec.resources is present (even as {}) */
        ncm_resources resources;         /* spec.resources after pod-level defaulting */
        ncm_resource_list overhead;      /* spec.overhead (set by RuntimeClass admission) */
        ncm_qos_class qos;               /* ComputePodQOS of this pod */
        ncm_pod_annotation *annotations; /* the ones nodecm reads, sorted by key */
        size_t n_annotations;
} ncm_pod;

/*
 * Read a pod from PATH (JSON or YAML; "-" is stdin). On success *RET is a new pod, owned by
 * the caller (ncm_pod_free). Errors: the file's own (ncm_fs), syntax errors as
 * "PATH:LINE:COL: ...", and field errors as "PATH: FIELD: ...", e.g.
 * `pod.yaml: spec.containers[1].resources.limits.cpu: invalid quantity "2x": unable to parse
 * quantity's suffix`. -EINVAL for bad input, -ERANGE for a quantity or total nodecm cannot
 * represent, -ENOMEM. *RET is untouched on failure.
 */
NCM_API int ncm_pod_load_file(const char *path, ncm_pod **ret, ncm_error *err);

/*
 * As ncm_pod_load_file() for TEXT (LEN bytes). NAME (a file name, "<stdin>", or NULL) starts
 * every error message as above; with NULL field errors start with the field path.
 */
NCM_API int ncm_pod_parse(const char *text, size_t len, const char *name, ncm_pod **ret,
                          ncm_error *err);

/*
 * Identifiers, checked as the API server checks them before a kubelet sees a pod (S is LEN
 * bytes: a NUL inside is refused, never cut): 0, or -EINVAL with `FIELD: required`, `FIELD:
 * invalid value "X": <why>` (X quoted as Go's %q: no byte of it reaches a terminal raw) or
 * `FIELD: invalid value "X": must be no more than N characters`.
 *   ncm_pod_validate_name   a pod name: a DNS-1123 subdomain (at most 253 characters);
 *   ncm_pod_validate_label  a namespace or a container name: a DNS-1123 label (at most 63);
 *   ncm_pod_validate_uid    a pod UID: at most 128 letters, digits, '-' or '.', starting and
 *                           ending with a letter or digit (what the API server's UUIDs and the
 *                           kubelet's static-pod hashes are; the API server validates none,
 *                           nodecm makes cgroup names of it).
 * ncm_pod_parse() applies them to metadata.uid, metadata.name (when given),
 * metadata.namespace and every container name.
 */
NCM_API int ncm_pod_validate_name(const char *s, size_t len, const char *field, ncm_error *err);
NCM_API int ncm_pod_validate_label(const char *s, size_t len, const char *field, ncm_error *err);
NCM_API int ncm_pod_validate_uid(const char *s, size_t len, const char *field, ncm_error *err);

/* Free POD (NULL is fine). Returns NULL. */
NCM_API ncm_pod *ncm_pod_free(ncm_pod *pod);
NCM_DEFINE_AUTOPTR(ncm_pod, ncm_pod_free)

/* A deep copy of POD, or NULL when out of memory. */
NCM_API ncm_pod *ncm_pod_dup(const ncm_pod *pod);

/*
 * Append POD as a Pod object (JSON, one line and a newline) holding what the model holds:
 * metadata uid, name and namespace; init containers (sidecars with restartPolicy Always) and
 * containers with their requests and limits after defaulting; spec.resources and overhead.
 * ncm_pod_parse() reads it back into an equal model.
 */
NCM_API void ncm_pod_format_json(const ncm_pod *pod, ncm_buf *b);

/* The value of annotation KEY (one of NCM_POD_ANNOTATION_*), or NULL when not given. */
NCM_API const char *ncm_pod_get_annotation(const ncm_pod *pod, const char *key) NCM_PURE;

/*
 * Set annotation KEY to VALUE (copied), for front ends that learn a pod's annotations outside
 * a Pod object (a runtime's container annotations). KEY must be one nodecm reads and VALUE one
 * of its words: -EINVAL with the same text as a Pod object's; -ENOMEM. POD is unchanged on
 * failure.
 */
NCM_API int ncm_pod_set_annotation(ncm_pod *pod, const char *key, const char *value,
                                   ncm_error *err);

/*
 * Whether KEY is one of the NCM_POD_ANNOTATION_* annotations the pod keeps (NCM_POD_CDI_ANNOTATION
 * is read into the containers instead: ncm_pod_set_cdi_devices()).
 */
NCM_API bool ncm_pod_annotation_known(const char *key) NCM_PURE;

/*
 * Give container NAME of POD the CDI devices NAMES[0..N) (copied, replacing any), for a front
 * end that learns them outside the Pod object (the CRI's CreateContainer). Each must be a
 * qualified CDI name (-EINVAL with CDI's text), at most NCM_POD_CDI_MAX (-E2BIG); -ENOENT when
 * POD has no such container; -ENOMEM. POD is unchanged on failure.
 */
NCM_API int ncm_pod_set_cdi_devices(ncm_pod *pod, const char *name, const char *const *names,
                                    size_t n, ncm_error *err);

/* The container named NAME, init containers first, or NULL. */
NCM_API const ncm_container *ncm_pod_find_container(const ncm_pod *pod, const char *name) NCM_PURE;

/* The quantity for resource NAME in L, or NULL when L has no such key. */
NCM_API const ncm_quantity *ncm_resource_list_get(const ncm_resource_list *l,
                                                  const char *name) NCM_PURE;

/* Shorthands for ncm_resource_list_get() on a container's requests / limits. */
NCM_API const ncm_quantity *ncm_container_request(const ncm_container *c,
                                                  const char *name) NCM_PURE;
NCM_API const ncm_quantity *ncm_container_limit(const ncm_container *c, const char *name) NCM_PURE;

/* Free the entries of L and leave it empty (L itself is caller storage). */
NCM_API void ncm_resource_list_done(ncm_resource_list *l);

/* "Guaranteed", "Burstable", "BestEffort" (the v1.PodQOSClass strings). */
NCM_API const char *ncm_qos_class_name(ncm_qos_class qos);

/*
 * ComputePodQOS on the defaulted pod (also stored in pod->qos): with spec.resources present,
 * the class of the pod-level requirements; else init and app containers are classified one by
 * one on cpu and memory only (request == limit, missing counts as 0) and combined: any
 * Burstable, or a mix of Guaranteed and BestEffort, makes the pod Burstable.
 */
NCM_API ncm_qos_class ncm_pod_compute_qos(const ncm_pod *pod) NCM_PURE;

/*
 * IsPodLevelResourcesSet: spec.resources names cpu, memory or a hugepages-<size> resource in
 * its requests or limits. (has_pod_resources is the weaker "present at all" that the QoS
 * class uses.)
 */
NCM_API bool ncm_pod_level_resources_set(const ncm_pod *pod) NCM_PURE;

/* true for the resources pod-level resources support: cpu, memory, hugepages-<size>. */
NCM_API bool ncm_resource_is_pod_level(const char *name) NCM_PURE;

/* Flags of ncm_pod_requests() / ncm_pod_limits() (component-helpers PodResourcesOptions). */
enum {
        NCM_POD_EXCLUDE_OVERHEAD = 1 << 0, /* leave spec.overhead out */
        NCM_POD_SKIP_POD_LEVEL = 1 << 1,   /* ignore spec.resources: container aggregate */
};

/*
 * component-helpers PodRequests: the sum of app containers and restartable (sidecar) init
 * containers, raised per resource to the largest need of a sequential init container (its
 * request plus the sidecars started before it); then pod-level requests of cpu, memory and
 * hugepages replace that when spec.resources has requests of those; then spec.overhead is
 * added. On success *RET is a new list (free with ncm_resource_list_done). -ERANGE when a sum
 * is not representable, -ENOMEM; *RET untouched on failure.
 */
NCM_API int ncm_pod_requests(const ncm_pod *pod, unsigned flags, ncm_resource_list *ret,
                             ncm_error *err);

/*
 * component-helpers PodLimits: the same aggregation over limits, pod-level limits replacing
 * it when pod-level resources are set, then spec.overhead added to every non-zero limit.
 * Errors as ncm_pod_requests().
 */
NCM_API int ncm_pod_limits(const ncm_pod *pod, unsigned flags, ncm_resource_list *ret,
                           ncm_error *err);

/*
 * The page size in bytes of a "hugepages-<size>" resource name (HugePageSizeFromResourceName:
 * "hugepages-2Mi" -> 2097152, "hugepages-1Gi" -> 1073741824). Returns 0, -ENOENT when NAME
 * does not start with "hugepages-", or -EINVAL when the size is not a positive quantity
 * (message names the resource).
 */
NCM_API int ncm_resource_hugepage_size(const char *name, uint64_t *ret_bytes, ncm_error *err);

#ifdef __cplusplus
}
#endif
#endif
