/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-place resize of a pod the node holds (KEP-1287), with KEP-5554's exclusive CPUs and the
 * memory manager's pinned memory: the kubelet's resize admission (its allocation manager's
 * canResizePod), then the topology manager's re-admission of the pod with the operation
 * "resize" (NCM_TM_OP_RESIZE), each provider resizing what it gave, then enforcement and
 * persistence, as one transaction: a refusal leaves the node, its files and the machine as
 * they were. docs/cpu-manager.md "Resize" tells the rules with the KEP's example.
 *
 * What the kubelet decides before the managers, in its order:
 *  1. the API server's validation: the QoS class may not change (reason "Invalid", `The Pod
 *     "web" is invalid: spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a
 *     result of resizing`);
 *  2. with InPlacePodVerticalScalingExclusiveCPUs off (the default, as in every released
 *     kubelet) and the static CPU manager policy, a Guaranteed pod whose cpu request changes is
 *     "Infeasible": `Resize is infeasible for Guaranteed Pods alongside CPU Manager policy
 *     "static"`; likewise memory with the Static memory manager policy and
 *     InPlacePodVerticalScalingExclusiveMemory off (`... Memory Manager policy "Static"`);
 *  3. with the resource-fit admission on (nodecm/node-fit.h), the pod's requests against the
 *     node's absolute allocatable ("Infeasible", `Node didn't have enough capacity: cpu,
 *     requested: 9000, capacity: 8000`), then the managers, then the fit beside the other pods
 *     ("Deferred", the fit's message);
 * and the managers' refusals are "Infeasible" (KEP-5554) with their messages: the topology
 * manager's `Resources cannot be allocated with Topology locality`, the CPU manager's
 * prohibitedCPUAllocation / inconsistentCPUAllocation / getPromisedCPUSet errors, the
 * allocator's. A Burstable or fractional Guaranteed container only changes its shares and
 * quota (and its memory limit).
 */
#ifndef NODECM_NODE_RESIZE_H
#define NODECM_NODE_RESIZE_H

#include <stdbool.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/node.h>
#include <nodecm/pod.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The feature gates, as the kubelet names them. */
#define NCM_GATE_RESIZE_EXCLUSIVE_CPUS "InPlacePodVerticalScalingExclusiveCPUs"
#define NCM_GATE_RESIZE_EXCLUSIVE_MEMORY "InPlacePodVerticalScalingExclusiveMemory"

/* Reasons of a refused resize (the kubelet's PodResizePending condition; the API server's). */
#define NCM_RESIZE_REASON_INFEASIBLE "Infeasible"
#define NCM_RESIZE_REASON_DEFERRED "Deferred"
#define NCM_RESIZE_REASON_INVALID "Invalid"

/*
 * Resize the pod POD->uid the node holds to POD's resources (the whole pod, the same
 * containers; only the cpu and memory requests and limits of its app containers and sidecars
 * may differ). *RET is the outcome in the shape of an admission: `admitted` says resized, the
 * reason and message say why not, and the containers are listed as they stand after (or, when
 * refused, as they stood before). FLAGS: NCM_NODE_EXPLAIN (the hints, merges and allocations of
 * the re-admission, and why a refusal refused: which promised CPU, which NUMA node),
 * NCM_NODE_KUBELET_ADMITTED (a kubelet decided the fit already).
 *
 * A container keeps the CDI devices it was admitted with (docs/devices.md, "Device locality"):
 * where POD names none they are carried over from the pod the node holds, so that their hints
 * (draTopologyHints) and the CPUs near them (deviceLocalCPUs) count as at admission.
 *
 * Errors, with nothing changed: -ENOENT (the node holds no such pod), -EINVAL (a change the API
 * server would refuse to forward: containers added, removed or renamed, init containers or
 * resources other than cpu and memory changed, pod-level resources changed, other CDI devices
 * named), -ENOTSUP (InPlacePodVerticalScaling is off), and failures that are not decisions, as
 * ncm_node_admit().
 */
NCM_API int ncm_node_resize(ncm_node *n, const ncm_pod *pod, unsigned flags,
                            ncm_node_admission **ret, ncm_error *err);

/* ncm_node_resize() with N's writes joining BATCH (NULL: N's own), as ncm_node_admit_batch(). */
NCM_API int ncm_node_resize_batch(ncm_node *n, const ncm_pod *pod, unsigned flags,
                                  ncm_fs_batch *batch, ncm_node_admission **ret, ncm_error *err);

/*
 * A resize as one JSON line: {"step": STEP, "op": "resize", "pod": UID, "resized": bool,
 * ["reason": ..., "message": ...,] "containers": [... as an admission's ...]} (STEP < 0 leaves
 * "step" out; EXPLAIN adds "explain"), or for people ("[step STEP: ]resize NAME: resized: app
 * exclusive 2-5 (NUMA 0)" or ": not resized: Infeasible: ..."). Both end with a newline.
 */
NCM_API void ncm_node_format_resize_json(ncm_buf *b, long step, const ncm_pod *pod,
                                         const ncm_node_admission *a, bool explain);
NCM_API void ncm_node_format_resize_text(ncm_buf *b, long step, const ncm_pod *pod,
                                         const ncm_node_admission *a, bool explain);

#ifdef __cplusplus
}
#endif
#endif
