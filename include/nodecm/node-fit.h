/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's resource-fit admission: the resource part of its predicate admit handler
 * (pkg/kubelet/lifecycle/predicate.go, GeneralPredicates with the scheduler's
 * noderesources.Fits), for the resources nodecm knows. A pod that does not fit is refused with
 * the kubelet's reason and message: "OutOfcpu", "Node didn't have enough resource: cpu,
 * requested: 2000, used: 3000, capacity: 4000".
 *
 * The kubelet runs it after the resource managers' admission (the topology manager's
 * allocation handler is registered first), so a pod both refuses reports the managers' reason;
 * the node does the same (ncm_node_admit), and a refusal changes nothing.
 *
 * Where no kubelet stands in front (the control API, `nodecm node`, the OCI hook, simulate)
 * nothing else would refuse such a pod, so the node checks it by default; behind a kubelet
 * (the CRI proxy) the kubelet already did, and checking again would count pods the kubelet
 * counts differently. The configuration's fitAdmission ("auto", "always", "never") decides.
 */
#ifndef NODECM_NODE_FIT_H
#define NODECM_NODE_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/pod.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The verdict: FIT, or the first resource that does not fit, as the kubelet reports it. */
typedef struct ncm_node_fit {
        bool fit;
        char reason[64];   /* "OutOf<resource>": "OutOfcpu", "OutOfpods", "OutOfhugepages-2Mi" */
        char message[256]; /* "Node didn't have enough resource: <resource>, requested: N,
                              used: N, capacity: N" */
        /* the first that does not fit, as the kubelet counts it (millicores for cpu, bytes for
         * memory, ephemeral storage and hugepages, units otherwise) */
        char resource[64];
        int64_t requested, used, capacity;
} ncm_node_fit;

enum {
        /* Ignore spec.resources, as a kubelet without PodLevelResources does. */
        NCM_NODE_FIT_NO_POD_LEVEL = 1 << 0,
};

/*
 * Whether POD fits beside OTHERS (the N_OTHERS pods already on the node, their requests
 * counted as the pod's) in ALLOCATABLE, as the kubelet's predicates decide:
 *  1. "pods" (when ALLOCATABLE has it): one more pod than allowed is "OutOfpods" (requested
 *     1, used: the other pods);
 *  2. a pod that requests nothing fits (past the pod count);
 *  3. cpu (millicores), memory, ephemeral-storage (bytes), each when requested and in
 *     ALLOCATABLE, then the scalar resources (hugepages-<size> in bytes, extended resources in
 *     units, names with a "kubernetes.io/" prefix) in name order (the kubelet's map order is
 *     random): a request above allocatable minus what the others request does not fit.
 * Requests are component-helpers PodRequests (ncm_pod_requests: init containers, sidecars,
 * pod-level resources unless FLAGS has NCM_NODE_FIT_NO_POD_LEVEL, overhead), values rounded up
 * to whole units as Quantity.Value() does. An extended resource ALLOCATABLE does not name is
 * dropped from the request (removeMissingExtendedResources: a cluster-level resource); any
 * other resource ALLOCATABLE does not name is not checked (nodecm does not know the node's
 * amount of it). The first that does not fit is reported, as the kubelet reports the first
 * failing predicate. 0 with *RET set, -ENOMEM, -ERANGE (a request nodecm cannot add up).
 */
NCM_API int ncm_node_fit_check(const ncm_pod *pod, const ncm_pod *const *others, size_t n_others,
                               const ncm_resource_list *allocatable, unsigned flags,
                               ncm_node_fit *ret, ncm_error *err);

#ifdef __cplusplus
}
#endif
#endif
