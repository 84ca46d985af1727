/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hint descriptions: a hint provider's list of topology hints given by what it counts instead
 * of as 2^N masks.
 *
 * The kubelet's CPU and device managers build their hint lists the same way
 * (generateCPUTopologyHints, generateDeviceTopologyHints): they walk every non-empty subset M
 * of a list of NUMA nodes in IterateBitMasks order and keep M when
 *
 *     every "required" resource lies on a node of M, and
 *     base + (the available resources lying on a node of M) >= request;
 *
 * a kept mask is preferred when it has as many nodes as the smallest mask whose *capacity*
 * holds the request (the kubelet's minAffinitySize), or, for the CPU manager's
 * align-by-socket, when it spans as few sockets as such a mask needs. An ncm_hint_desc holds
 * exactly these inputs (per-node counts, resources spanning several nodes, required nodes,
 * the capacity, the socket map). From it the topology manager merges without the list
 * (NCM_TM_MERGE_LAZY), listings page through it (ncm_hint_desc_iter), and
 * ncm_hint_desc_materialize() gives the kubelet's list itself, hint for hint.
 *
 * The CPU manager fills one with ncm_cpu_hints_describe(), the device manager with its
 * *_hints_describe() functions, the memory manager one with a dimension per memory type
 * (ncm_hint_desc_add_dimension(): every request must be reached at once). Node ids are 0..63 (the
 * kubelet's 64-bit masks).
 */
#ifndef NODECM_HINTDESC_H
#define NODECM_HINTDESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/bitmask.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/hint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncm_hint_desc ncm_hint_desc;

/*
 * A description for the subsets of IDS[0..N) (each 0..63, distinct), walked in that order,
 * asking for REQUEST. Until ncm_hint_desc_seal() it takes resources; afterwards only queries.
 * -EINVAL (`bit number must be in range 0-63`, a repeated id), -ENOMEM.
 */
NCM_API int ncm_hint_desc_new(const int *ids, size_t n, int64_t request, ncm_hint_desc **ret,
                              ncm_error *err);

/* Destructor; accepts NULL, returns NULL. */
NCM_API ncm_hint_desc *ncm_hint_desc_free(ncm_hint_desc *d);
NCM_DEFINE_AUTOPTR(ncm_hint_desc, ncm_hint_desc_free)

/*
 * WEIGHT available resources (CPUs, devices) lying on the nodes of MASK: they count for a mask
 * that shares a node with MASK (the kubelet's AnySet). Bits outside the walked nodes never
 * match; an item with none of them counts nowhere. -ENOMEM.
 */
NCM_API int ncm_hint_desc_add_available(ncm_hint_desc *d, ncm_bitmask mask, int64_t weight);

/* The same for the capacity that decides the preferred size (all CPUs, all devices). */
NCM_API int ncm_hint_desc_add_capacity(ncm_hint_desc *d, ncm_bitmask mask, int64_t weight);

/*
 * A resource every hint must share a node with (a reusable CPU or device): a mask that does
 * not meet MASK is dropped. A MASK without walked nodes drops every mask. -ENOMEM.
 */
NCM_API int ncm_hint_desc_require(ncm_hint_desc *d, ncm_bitmask mask);

/*
 * A further request, counted against its own per-node amounts (the memory manager's memory
 * and every hugepage size asked for at once): a mask is then a hint only when, for the first
 * request and for each added one, its nodes' amounts reach it. Returns the dimension's index
 * (1, 2, ...) for ncm_hint_desc_add_amount(); -E2BIG past 15 dimensions, -ERANGE for a
 * negative request, -EBUSY once sealed. A description with dimensions takes only per-node
 * amounts (no multi-node resources, requirements, base or socket alignment) and needs its
 * preferred size given (ncm_hint_desc_set_preferred_size()): ncm_hint_desc_seal() says
 * -EINVAL otherwise. Such a description is not counted (ncm_hint_desc_count() -E2BIG).
 */
NCM_API int ncm_hint_desc_add_dimension(ncm_hint_desc *d, int64_t request);

/* WEIGHT of dimension DIM (0: the first request) lying on walked node NODE. -EINVAL, -ERANGE. */
NCM_API int ncm_hint_desc_add_amount(ncm_hint_desc *d, int dim, int node, int64_t weight);

/* Add WEIGHT to every mask's count (the reusable resources, counted once each). */
NCM_API void ncm_hint_desc_add_base(ncm_hint_desc *d, int64_t weight);

/* The list is empty whatever the resources (the kubelet's "cannot be satisfied"). */
NCM_API void ncm_hint_desc_set_empty(ncm_hint_desc *d);

/*
 * align-by-socket: a hint is also preferred when it spans exactly ceil(minAffinitySize /
 * PER_SOCKET) sockets (PER_SOCKET > 0). Give each walked node's sockets with
 * ncm_hint_desc_add_socket() (socket indexes 0..N_SOCKETS-1). -ENOMEM, -EINVAL.
 */
NCM_API int ncm_hint_desc_set_socket_alignment(ncm_hint_desc *d, int per_socket, int n_sockets);
NCM_API int ncm_hint_desc_add_socket(ncm_hint_desc *d, int node, int socket);

/*
 * Give the preferred size (minAffinitySize) instead of computing it from the capacity: for a
 * provider whose smallest mask is decided over nodes it does not walk (the memory manager
 * walks only nodes without assignments). K > 0; before ncm_hint_desc_seal().
 */
NCM_API void ncm_hint_desc_set_preferred_size(ncm_hint_desc *d, int k);

/*
 * Add MASK to the list beside the walked subsets: a hint that is not of the generator's form
 * (the memory manager's nodes that already hold allocations, its groups), preferred when it
 * has the preferred size. The list is then the union, in the kubelet's order; this needs the
 * ids walked in ascending order (the order extras are placed in). Ignored when the list is
 * set empty. -EINVAL for an empty mask, -ENOMEM.
 */
NCM_API int ncm_hint_desc_add_extra(ncm_hint_desc *d, ncm_bitmask mask);

/* How many extra masks the sealed list holds besides the walked subsets. */
NCM_API size_t ncm_hint_desc_n_extras(const ncm_hint_desc *d) NCM_PURE;

/*
 * Compute what queries need (the preferred size and the narrowest hint). Call once, after the
 * last resource. 0, or -ENOMEM.
 */
NCM_API int ncm_hint_desc_seal(ncm_hint_desc *d, ncm_error *err);

/* ---- queries (sealed descriptions) ---- */

/* The walked node ids as a mask. */
NCM_API ncm_bitmask ncm_hint_desc_nodes(const ncm_hint_desc *d) NCM_PURE;

/* The kubelet's minAffinitySize: the node count of preferred hints (without socket alignment). */
NCM_API int ncm_hint_desc_preferred_size(const ncm_hint_desc *d) NCM_PURE;

/* Whether hints are also preferred for the sockets they span (align-by-socket). */
NCM_API bool ncm_hint_desc_socket_aligned(const ncm_hint_desc *d) NCM_PURE;

/* The node count of the narrowest hint; 0 when the list is empty. */
NCM_API int ncm_hint_desc_narrowest(const ncm_hint_desc *d) NCM_PURE;

/* Whether MASK is in the list; *RET_PREFERRED (may be NULL) gets its flag. */
NCM_API bool ncm_hint_desc_contains(const ncm_hint_desc *d, ncm_bitmask mask, bool *ret_preferred);

/*
 * How many hints the list has, without walking them (at most 2^64 - 1, exact): per-node
 * counts are summed by dynamic programming over the partial sums, and the subsets of the
 * nodes that resources spanning several nodes touch are enumerated. -E2BIG (with a message)
 * when those touch more than 24 nodes or the request is above 2^24.
 */
NCM_API int ncm_hint_desc_count(const ncm_hint_desc *d, uint64_t *ret_total, ncm_error *err);

/*
 * The hints one by one in the kubelet's order (by node count, then by position in the walked
 * list), skipping masks that are not hints without visiting them one by one: the cost is
 * about N^2 operations per hint returned. The iterator holds no allocation.
 */
typedef struct ncm_hint_desc_iter {
        const ncm_hint_desc *d;
        int k;                         /* current node count; 0 before the first call */
        int depth;                     /* positions chosen so far */
        int pos[NCM_BITMASK_MAX_BITS]; /* chosen positions */
        bool started;                  /* a k-subset is in pos[] */
        /* the extras, merged in: the next one, and the walked subsets' next hint */
        size_t xi;
        bool have_walked, walked_done;
        ncm_hint walked;
} ncm_hint_desc_iter;

NCM_API void ncm_hint_desc_iter_init(ncm_hint_desc_iter *it, const ncm_hint_desc *d);
/* The next hint into *RET; false at the end. */
NCM_API bool ncm_hint_desc_iter_next(ncm_hint_desc_iter *it, ncm_hint *ret);

/*
 * Append the whole list to OUT in the kubelet's order (OUT->nil is cleared). -E2BIG with a
 * message when it has more than MAX hints (nothing appended then), -ENOMEM.
 */
NCM_API int ncm_hint_desc_materialize(const ncm_hint_desc *d, size_t max, ncm_hint_list *out,
                                      ncm_error *err);

/*
 * One page of a resource's hints, listed (LIST) or described (DESC; LIST is then ignored): the
 * hints from position OFFSET on, at most LIMIT of them, appended to OUT in the kubelet's order
 * (OUT->nil copies LIST's "no preference"), and how many there are in all (*RET_TOTAL). What
 * explanations show (nodecm simulate --explain, the control API's Explain): bounded however
 * many hints there are. Skipping OFFSET described hints takes time, not memory. Returns 0, or
 * 1 when a description cannot be counted (ncm_hint_desc_count's -E2BIG: resources on several
 * nodes touching more than 24 nodes): *RET_TOTAL is then only a lower bound (the hints up to
 * the page's end, one more when others follow). -ENOMEM.
 */
NCM_API int ncm_hint_page(const ncm_hint_list *list, const ncm_hint_desc *desc, uint64_t offset,
                          size_t limit, ncm_hint_list *out, uint64_t *ret_total, ncm_error *err);

/* A copy (sealed or not). NULL for out-of-memory. */
NCM_API ncm_hint_desc *ncm_hint_desc_dup(const ncm_hint_desc *d);

#ifdef __cplusplus
}
#endif
#endif
