/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: the layout of an ncm_hint_desc and the feasibility test the lazy merge searches
 * with (lib/topologymanager/tm-merge-lazy.c).
 */
#ifndef NCM_BASE_HINTDESC_INTERNAL_H
#define NCM_BASE_HINTDESC_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <nodecm/hintdesc.h>

/* A resource lying on several of the walked nodes (MASK is inside them). */
typedef struct ncm__hd_item {
        ncm_bitmask mask;
        int64_t weight;
} ncm__hd_item;

/* Requests besides the first (ncm_hint_desc_add_dimension()). */
#define NCM__HD_DIMS_MAX 15

/* What a mask is counted against: per-node weights, multi-node items, requirements. */
typedef struct ncm__hd_count {
        int64_t w[NCM_BITMASK_MAX_BITS]; /* by node id: resources on that node alone */
        int order[NCM_BITMASK_MAX_BITS]; /* walked ids by w, largest first (set when sealed) */
        ncm__hd_item *items;
        size_t n_items, cap_items;
        int64_t base;
        ncm_bitmask required;  /* nodes every mask must contain */
        ncm_bitmask *req_sets; /* masks every mask must meet (two or more nodes each) */
        size_t n_req_sets, cap_req_sets;
        ncm_bitmask touched; /* nodes of items and req_sets */
} ncm__hd_count;

struct ncm_hint_desc {
        int n;
        int ids[NCM_BITMASK_MAX_BITS]; /* walked ids, in the generator's order */
        ncm_bitmask nodes;
        int64_t request;
        bool empty;
        ncm__hd_count avail; /* what makes a mask a hint */
        ncm__hd_count cap;   /* what decides the preferred size (no base, no requirements) */
        int per_socket;      /* align-by-socket: 0 off */
        int n_sockets, sock_words;
        uint64_t *sockets; /* by node id: sock_words words each */
        /* set by ncm_hint_desc_seal() */
        bool sealed;
        int pref_size;          /* the kubelet's minAffinitySize */
        int pref_given;         /* ncm_hint_desc_set_preferred_size(), 0: computed */
        int min_sockets;        /* align-by-socket's socket count, 0 when off */
        int narrowest;          /* node count of the narrowest hint, 0: no hint */
        ncm_bitmask free_nodes; /* nodes whose presence never changes whether a mask is a hint */
        ncm_bitmask suffix[NCM_BITMASK_MAX_BITS + 1]; /* suffix[p]: the walked nodes from p on */
        /* ncm_hint_desc_add_extra(): masks listed beside the walked subsets. Sealed: in the
         * kubelet's order, none of them a hint of the walked subsets (BASE) */
        ncm_bitmask *extras;
        size_t n_extras, cap_extras;
        int base_narrowest; /* NARROWEST of the walked subsets alone, 0: none */
        /* ncm_hint_desc_add_dimension(): further requests, each against its own per-node
         * amounts; a mask is a hint only when every one is reached as well */
        int n_dims;
        int64_t dim_request[NCM__HD_DIMS_MAX];
        int64_t dim_w[NCM__HD_DIMS_MAX][NCM_BITMASK_MAX_BITS]; /* by node id */
        int dim_order[NCM__HD_DIMS_MAX][NCM_BITMASK_MAX_BITS]; /* ids by dim_w, largest first */
};

/*
 * Whether some S inside POOL with exactly R nodes makes IN | S a hint (preference ignored).
 * IN and POOL are disjoint subsets of the walked nodes. Exact: per-node weights alone are
 * decided by the largest R weights; multi-node items and requirements by a branch-and-bound
 * search.
 */
bool ncm__hd_feasible(const ncm_hint_desc *d, ncm_bitmask in, ncm_bitmask pool, int r);

/* The number of distinct sockets of the nodes of MASK. */
int ncm__hd_sockets(const ncm_hint_desc *d, ncm_bitmask mask);

/* Whether MASK is a hint of the walked subsets (preference ignored; extras not looked at). */
bool ncm__hd_is_hint(const ncm_hint_desc *d, ncm_bitmask mask);

/* Whether a hint MASK (walked or extra) is preferred. */
bool ncm__hd_is_preferred(const ncm_hint_desc *d, ncm_bitmask mask);

/* kubelet's IterateBitMasks order: fewer nodes first, then the lowest differing id. */
int ncm__hd_cmp_order(ncm_bitmask a, ncm_bitmask b);

#endif
