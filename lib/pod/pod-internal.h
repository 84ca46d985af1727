/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: building pods from json-c trees (so that a scenario file can embed pods and get
 * errors with its own field paths), and the resource-list operations the pod module shares
 * between its files.
 */
#ifndef NCM_POD_INTERNAL_H
#define NCM_POD_INTERNAL_H

#include <json-c/json.h>
#include <nodecm/buf.h>
#include <nodecm/pod.h>

/*
 * Build a pod from OBJ (a decoded Pod object). PATH is the field path of OBJ in its document,
 * e.g. "steps[3].admit", or "" for a document that is the pod itself; every error names the
 * field below it ("steps[3].admit.spec.containers[1].resources.limits.cpu: invalid quantity
 * \"2x\": unable to parse quantity's suffix"). Defaulting, validation and the QoS class as in
 * ncm_pod_load_file(). *RET is untouched on failure.
 */
int ncm__pod_from_json(json_object *obj, const char *path, ncm_pod **ret, ncm_error *err);

/*
 * Flags of ncm__pod_from_json_flags(). NCM__POD_AS_GIVEN skips the API server's part
 * (defaulting, rounding to 1m, the request/limit rules): the pod is exactly as written, like a
 * Go test building a v1.Pod in code. The structural checks and the QoS class still apply.
 */
enum {
        NCM__POD_AS_GIVEN = 1 << 0,
        /*
         * A pod a node recorded when it admitted it (nodecm_pods, a runtime's record): the
         * limits on what may enter a node (quantity ranges, identifier syntax) are not applied
         * again, so that nothing a node holds -- written by an older nodecm, say -- can stop it
         * from loading, or be left unremovable.
         */
        NCM__POD_STORED = 1 << 1,
        /*
         * A pod a container runtime describes (lib/runtime): a container the runtime made
         * without Kubernetes is named by its runtime id (64 hex digits, longer than a DNS
         * label), so container names are checked as UIDs are (ncm_pod_validate_uid).
         */
        NCM__POD_RUNTIME = 1 << 2,
};

int ncm__pod_from_json_flags(json_object *obj, const char *path, unsigned flags, ncm_pod **ret,
                             ncm_error *err);

/*
 * The containers' CDI devices from metadata.annotations[NCM_POD_CDI_ANNOTATION] of META (PATH
 * its field path) into POD's containers (pod-cdi.c): -EINVAL naming the annotation for a value
 * that is not such an object, a container the pod does not have, a name that is not qualified.
 */
int ncm__pod_read_cdi(ncm_pod *pod, json_object *meta, const char *path, ncm_error *err);
/*
 * POD's CDI devices as one member of the annotations object (`"nodecm.io/cdi-devices": "..."`,
 * after ", " unless *FIRST, which it then clears), nothing when it has none.
 */
void ncm__pod_put_cdi(const ncm_pod *pod, bool *first, ncm_buf *b);
/* Copy and free a container's CDI devices. */
int ncm__container_cdi_copy(ncm_container *dst, const ncm_container *src);
void ncm__container_cdi_free(ncm_container *c);

/*
 * A quantity as Quantity.UnmarshalJSON reads it: a JSON string (surrounding Unicode white
 * space trimmed, as Go's strings.TrimSpace) or a number (its source text); null is zero.
 * Errors name PATH: `PATH: invalid quantity "2x": <apimachinery reason>`,
 * `PATH: expected string or number, got boolean`.
 */
int ncm__quantity_from_json(json_object *o, const char *path, ncm_quantity *ret, ncm_error *err);

/*
 * A ResourceList object (resource name -> quantity) at PATH into *RET (sorted). Negative
 * quantities are rejected (`PATH.NAME: invalid value "-1": must be greater than or equal to
 * 0`). NULL O gives the empty list.
 */
int ncm__resource_list_from_json(json_object *o, const char *path, ncm_resource_list *ret,
                                 ncm_error *err);

/*
 * -ERANGE (`PATH: invalid value "1e20": must be no more than 9223372036854775 (...)`) when Q is
 * more of resource NAME than the kubelet can hold: cpu above (2^63-1)/1000 cores (its
 * MilliValue() would overflow), anything else above 2^63-1.
 */
int ncm__resource_check_range(const char *name, const ncm_quantity *q, const char *path,
                              ncm_error *err);

/* Set NAME to *Q in L (inserting a copy of NAME, or replacing the quantity). -ENOMEM. */
int ncm__resource_list_set(ncm_resource_list *l, const char *name, const ncm_quantity *q);

/* *DST = a deep copy of SRC. -ENOMEM (DST untouched). */
int ncm__resource_list_copy(const ncm_resource_list *src, ncm_resource_list *dst);

/* addResourceList: L[k] += ADD[k], absent keys copied. -ERANGE (message in err), -ENOMEM. */
int ncm__resource_list_add(ncm_resource_list *l, const ncm_resource_list *add, ncm_error *err);

/* maxResourceList: L[k] = ADD[k] where absent from L or greater. -ENOMEM. */
int ncm__resource_list_max(ncm_resource_list *l, const ncm_resource_list *add);

/*
 * The containers' aggregate (AggregateContainerRequests / AggregateContainerLimits): app
 * containers and sidecars summed, raised to each sequential init container's need.
 */
int ncm__pod_aggregate(const ncm_pod *pod, bool limits, ncm_resource_list *ret, ncm_error *err);

/*
 * metadata.annotations of META (at META_PATH): the ones nodecm reads, checked against their
 * words, into POD (pod-annotations.c). Their copy, release and JSON form (", \"annotations\":
 * {...}" when any, the CDI devices' member included: one object, never a repeated key).
 */
int ncm__pod_read_annotations(json_object *meta, const char *meta_path, ncm_pod *pod,
                              ncm_error *err);
int ncm__pod_annotations_copy(const ncm_pod *src, ncm_pod *dst);
void ncm__pod_annotations_free(ncm_pod_annotation *v, size_t n);
void ncm__pod_annotations_format(const ncm_pod *pod, ncm_buf *b);

/* resourceQOS of one set of requirements. */
ncm_qos_class ncm__resources_qos(const ncm_resources *r);

#endif
