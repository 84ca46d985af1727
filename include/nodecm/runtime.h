/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a container runtime tells nodecm about a container, and the pod nodecm admits from it.
 * Shared by the CRI proxy (the kubelet's CreateContainer) and the OCI hook (a bundle's
 * config.json): neither sees a Pod object, only
 *
 *  - the values the kubelet derived from the container's resources (CRI LinuxContainerResources,
 *    OCI linux.resources): CPU shares from the CPU request, CFS quota and period from the CPU
 *    limit, the memory limit, hugepage limits (spec kubelet-devices-cgroups.md C.9);
 *  - the pod's cgroup parent, whose name carries the QoS class ("kubepods/burstable/pod<uid>");
 *  - annotations: nodecm's own (nodecm.io/...) and those the kubelet, containerd and CRI-O set
 *    (io.kubernetes.*).
 *
 * From these the container's requests and limits are recovered exactly where the kubelet's
 * arithmetic can be inverted, and the pod is rebuilt so that the node's admission decides as
 * the kubelet would (docs/runtimes.md lists where it cannot be exact). Everything here is
 * pure: no I/O.
 */
#ifndef NODECM_RUNTIME_H
#define NODECM_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/pod.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hugepage sizes a container's resources may name. */
#define NCM_RUNTIME_MAX_HUGEPAGES 8

/*
 * A container's resources as the runtime has them. 0 means "not given" for every field (the
 * CRI's own convention; the OCI hook maps absent JSON fields to 0).
 */
typedef struct ncm_runtime_resources {
        int64_t cpu_shares;   /* cpu.shares */
        int64_t cpu_quota;    /* CFS quota in µs per period; -1: unlimited */
        int64_t cpu_period;   /* CFS period in µs */
        int64_t memory_limit; /* bytes; <= 0: none */
        size_t n_hugepages;
        struct {
                int64_t page_size; /* bytes */
                int64_t limit;     /* bytes; 0: none */
        } hugepages[NCM_RUNTIME_MAX_HUGEPAGES];
} ncm_runtime_resources;

/*
 * "2MB", "1GB", "64KB" (the CRI's and runc's HugepageLimit.page_size, base 1024) into bytes.
 * -EINVAL for anything else.
 */
NCM_API int ncm_runtime_parse_page_size(const char *s, int64_t *ret_bytes);

/*
 * The requests and limits recovered from resources, in milli-CPUs and bytes; -1: absent. A
 * memory request of 0 is present: the runtime never sees memory requests, and a Burstable
 * container says 0 so that the API server's defaulting (request = limit) cannot turn it
 * Guaranteed.
 */
typedef struct ncm_runtime_requests {
        int64_t cpu_request;
        int64_t cpu_limit;
        int64_t memory_request;
        int64_t memory_limit;
} ncm_runtime_requests;

/*
 * Recover a container's requests and limits, knowing its pod's QoS class when HAS_QOS:
 *  - CPU request: the kubelet's sharesToMilliCPU, ceil(shares*1000/1024), for shares above
 *    the minimum of 2 (exact from 3m to 256 CPUs; 2 shares is what the kubelet sends for "no
 *    request", and also for 1m and 2m);
 *  - CPU limit: ceil(quota*1000/period) for a quota > 0 (exact from 10m up: the kubelet's
 *    quota has a floor of 1000 µs);
 *  - memory limit: the limit; memory request: unknown (absent; 0 in a Burstable pod).
 * Guaranteed: requests = limits = the CPU value (shares first, the quota when shares are
 * saturated or absent) and the memory limit; a container without both is -EINVAL ("a
 * Guaranteed container needs a CPU and a memory limit, the runtime has shares=2 quota=0
 * memory=0"). BestEffort: nothing. Burstable and unknown: as recovered (unknown: the memory
 * request stays absent and defaults to the limit, as the API server would default a pod
 * written with limits only).
 */
NCM_API int ncm_runtime_recover(const ncm_runtime_resources *r, bool has_qos, ncm_qos_class qos,
                                ncm_runtime_requests *ret, ncm_error *err);

/*
 * The QoS class and pod UID that a kubelet pod cgroup name carries. PATH is a cgroup parent or
 * a container's cgroups path, in either driver's spelling:
 *   cgroupfs  [/ROOT]/kubepods/pod<uid>[/...], .../kubepods/burstable/pod<uid>,
 *             .../kubepods/besteffort/pod<uid>
 *   systemd   [/...]/kubepods-pod<uid_>.slice, kubepods-burstable-pod<uid_>.slice,
 *             kubepods-besteffort-pod<uid_>.slice, and the OCI "slice:prefix:name" form
 *             whose slice is one of those (underscores in the UID become dashes again).
 * Returns 1 with *RET_QOS (and the UID copied into UID_BUF of UID_SIZE bytes when UID_BUF is not
 * NULL) when PATH names a pod cgroup, 0 when it does not (a cgroup that is no kubelet pod's),
 * -ENAMETOOLONG when the UID does not fit.
 */
NCM_API int ncm_runtime_pod_cgroup_qos(const char *path, ncm_qos_class *ret_qos, char *uid_buf,
                                       size_t uid_size);

/* What a container is within its pod. */
typedef enum ncm_runtime_kind {
        NCM_RUNTIME_CONTAINER = 0, /* an app container (spec.containers) */
        NCM_RUNTIME_INIT,          /* an init container that runs to completion */
        NCM_RUNTIME_SIDECAR,       /* an init container with restartPolicy Always */
        NCM_RUNTIME_SANDBOX,       /* the pod's sandbox (pause) container: never managed */
        NCM_RUNTIME_EPHEMERAL,     /* an ephemeral (debug) container: never managed */
} ncm_runtime_kind;

/* "container", "init", "sidecar", "sandbox", "ephemeral". */
NCM_API const char *ncm_runtime_kind_name(ncm_runtime_kind k) NCM_PURE;

/* One annotation (or label). */
typedef struct ncm_runtime_kv {
        const char *key;
        const char *value;
} ncm_runtime_kv;

/* nodecm's annotations (docs/runtimes.md). */
#define NCM_ANNOTATION_MANAGED "nodecm.io/managed"             /* "true" | "false" */
#define NCM_ANNOTATION_POD_UID "nodecm.io/pod-uid"             /* the pod the container joins */
#define NCM_ANNOTATION_POD_NAME "nodecm.io/pod-name"           /* its name, for people */
#define NCM_ANNOTATION_POD_NAMESPACE "nodecm.io/pod-namespace" /* default "default" */
#define NCM_ANNOTATION_CONTAINER_NAME "nodecm.io/container-name"
#define NCM_ANNOTATION_CONTAINER_TYPE "nodecm.io/container-type" /* container|init|sidecar */
#define NCM_ANNOTATION_QOS_CLASS "nodecm.io/qos-class" /* Guaranteed|Burstable|BestEffort */

/* Who a container is, from its annotations. Strings point into the annotations given. */
typedef struct ncm_runtime_identity {
        /* The container is nodecm's to manage: nodecm.io/managed "true", or a pod UID from any
         * source below; never a sandbox or ephemeral container, nor one marked "false". */
        bool managed;
        const char *pod_uid;        /* NULL: none given */
        const char *pod_name;       /* NULL: none given */
        const char *pod_namespace;  /* NULL: none given */
        const char *container_name; /* NULL: none given */
        ncm_runtime_kind kind;
        bool has_qos; /* nodecm.io/qos-class was given */
        ncm_qos_class qos;
} ncm_runtime_identity;

/*
 * Read a container's identity from its annotations A[0..N), first match winning in this order:
 *   pod UID        nodecm.io/pod-uid, io.kubernetes.pod.uid (the kubelet's label, which CRI-O
 *                  copies into the OCI annotations), io.kubernetes.cri.sandbox-uid (containerd)
 *   pod name       nodecm.io/pod-name, io.kubernetes.pod.name, io.kubernetes.cri.sandbox-name
 *   namespace      nodecm.io/pod-namespace, io.kubernetes.pod.namespace,
 *                  io.kubernetes.cri.sandbox-namespace
 *   container      nodecm.io/container-name, io.kubernetes.container.name,
 *                  io.kubernetes.cri.container-name
 *   kind           nodecm.io/container-type, then io.kubernetes.container.type (the kubelet's
 *                  "init", "container", "ephemeral"), io.kubernetes.cri.container-type and
 *                  io.kubernetes.cri-o.ContainerType ("sandbox")
 *   QoS class      nodecm.io/qos-class
 * A nodecm.io value that is not one of its documented words is -EINVAL naming the annotation
 * and the value; the others are taken as they come (an unknown kubelet type is a container).
 */
NCM_API int ncm_runtime_identify(const ncm_runtime_kv *a, size_t n, ncm_runtime_identity *ret,
                                 ncm_error *err);

/* One container of a pod being rebuilt. */
typedef struct ncm_runtime_container {
        const char *name;
        ncm_runtime_kind kind; /* CONTAINER, INIT or SIDECAR */
        ncm_runtime_resources resources;
} ncm_runtime_container;

/* A pod being rebuilt from what its runtime says. */
typedef struct ncm_runtime_pod {
        const char *uid;
        const char *name;      /* NULL: "" */
        const char *namespace; /* NULL: "default" */
        bool has_qos;          /* the QoS class is known (cgroup parent, annotation) */
        ncm_qos_class qos;
        const ncm_runtime_container *containers; /* in creation order */
        size_t n_containers;
} ncm_runtime_pod;

/*
 * Rebuild P as a Pod (init containers and sidecars in spec.initContainers, the others in
 * spec.containers, each in the order given) with the requests and limits ncm_runtime_recover()
 * gives, then read it as any pod is read (defaulting, validation, the QoS class). When the QoS
 * class is known, the rebuilt pod must have it: -EINVAL otherwise, naming the container. Errors
 * name the container ("container 'app': ..."). *RET: a new pod (ncm_pod_free).
 */
NCM_API int ncm_runtime_pod_build(const ncm_runtime_pod *p, ncm_pod **ret, ncm_error *err);

#ifdef __cplusplus
}
#endif
#endif
