/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Topology hints: what a hint provider (CPU manager, device manager) says about where a
 * request could be satisfied, and what the topology manager merges.
 *
 * kubelet distinguishes three things this type keeps apart:
 *  - a hint whose affinity is nil ("any NUMA node"): any = true;
 *  - a hint with a mask (possibly empty after merging): any = false, numa = the mask;
 *  - per resource, a nil hint list ("no preference") versus an empty list ("cannot be
 *    satisfied"): see ncm_hint_list.nil.
 */
#ifndef NODECM_HINT_H
#define NODECM_HINT_H

#include <stdbool.h>
#include <stddef.h>
#include <nodecm/bitmask.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncm_hint {
        ncm_bitmask numa; /* the NUMA nodes; meaningful only when !any */
        bool any;         /* kubelet's nil NUMANodeAffinity */
        bool preferred;
} ncm_hint;

/* One resource's hints, in provider order. */
typedef struct ncm_hint_list {
        bool nil; /* no hints at all: "no preference" (as opposed to n == 0: "none fits") */
        size_t n;
        size_t cap;
        ncm_hint *hints; /* malloc'd */
} ncm_hint_list;

#define NCM_HINT_LIST_INIT                                                                         \
        {                                                                                          \
                false, 0, 0, NULL                                                                  \
        }

/* Append H. -ENOMEM on allocation failure (the list is unchanged then). */
NCM_API int ncm_hint_list_append(ncm_hint_list *l, ncm_hint h);
/* Release the storage; the list becomes empty (not nil). */
NCM_API void ncm_hint_list_done(ncm_hint_list *l);

/* Append M's node ids to B as "0,1" (ascending; nothing for an empty mask). */
NCM_API void ncm_bitmask_format_ids(ncm_bitmask m, ncm_buf *b);

/* Append H to B as "[0,1]" or "any", then "*" when MARK and H is preferred. */
NCM_API void ncm_hint_format(const ncm_hint *h, bool mark, ncm_buf *b);

/* Append H as JSON, {"numa": [0, 1], "preferred": true} ("numa": null for "any"), to B. */
NCM_API void ncm_hint_format_json(const ncm_hint *h, ncm_buf *b);

#ifdef __cplusplus
}
#endif
#endif
