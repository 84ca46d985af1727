/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: the pieces of the topology manager's merge, shared by the policies, the two merge
 * implementations and the unit tests (which port kubelet's tests of these functions).
 */
#ifndef NCM_TOPOLOGYMANAGER_INTERNAL_H
#define NCM_TOPOLOGYMANAGER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/topologymanager.h>
#include "base/hintdesc-internal.h"

/* kubelet's NUMAInfo: the node ids (cadvisor order) and, optionally, their distances. */
typedef struct ncm__tm_numa {
        size_t n;
        int ids[NCM_BITMASK_MAX_BITS];
        int8_t pos[NCM_BITMASK_MAX_BITS]; /* index of a node id in ids, -1 if absent */
        ncm_bitmask all;                  /* DefaultAffinityMask */
        uint64_t *dist;                   /* n x n in ids order, or NULL */
} ncm__tm_numa;

/*
 * Fill NUMA from IDS/N and DISTANCES (n x n, may be NULL; copied). -EINVAL for an id out of
 * 0..63 (kubelet's bitmask text) or a repeated id, -ENOMEM. NUMA is zeroed first.
 */
int ncm__tm_numa_init(ncm__tm_numa *numa, const int *ids, size_t n, const uint64_t *distances,
                      ncm_error *err);
void ncm__tm_numa_done(ncm__tm_numa *numa);

/*
 * kubelet's CalculateAverageFor: the mean of d[i][j] over ordered pairs of bits of M, summed
 * in float64 in ascending bit order as Go does (so the value is bit-identical). 0 for an empty
 * mask or unknown distances; a bit that is not a known node contributes 0 (kubelet would
 * panic there; merged masks never hold such a bit).
 */
double ncm__tm_numa_avg(const ncm__tm_numa *numa, ncm_bitmask m);

/* kubelet's NUMAInfo.Narrowest / Closest: the better of two masks (M1 on ties of Narrowest). */
ncm_bitmask ncm__tm_numa_narrowest(ncm_bitmask m1, ncm_bitmask m2);
ncm_bitmask ncm__tm_numa_closest(const ncm__tm_numa *numa, ncm_bitmask m1, ncm_bitmask m2);

/* One normalised hint list (kubelet's [][]TopologyHint element). */
typedef struct ncm__tm_list {
        const ncm_hint *hints;
        size_t n;
} ncm__tm_list;

/* The normalised lists of all providers; the hints live in STORAGE. */
typedef struct ncm__tm_lists {
        size_t n;
        ncm__tm_list *lists;
        ncm_hint *storage;
} ncm__tm_lists;

/*
 * kubelet's filterProvidersHints: providers in order, each provider's resources in ascending
 * name order; no resources -> [{any, preferred}], nil list -> [{any, preferred}], empty list ->
 * [{any, not preferred}], else the list itself. -ENOMEM.
 */
int ncm__tm_filter_providers(const ncm_tm_hints *providers, size_t n, ncm__tm_lists *out);

/*
 * The same, then filterSingleNumaHints when SINGLE_NUMA, in one pass. The lists may point
 * into PROVIDERS, which must outlive OUT. Described lists count as empty here.
 */
int ncm__tm_filter_providers_ex(const ncm_tm_hints *providers, size_t n, bool single_numa,
                                ncm__tm_lists *out);

/*
 * The same with described lists: *RET_DESCS (freed by the caller; NULL when no list stays
 * described) gives, per list of OUT, the description that stands for it (that list is then
 * empty). Under SINGLE_NUMA a description is listed instead: the hints the filter keeps (its
 * preferred one-node hints, in walk order).
 */
int ncm__tm_filter_providers_desc(const ncm_tm_hints *providers, size_t n, bool single_numa,
                                  ncm__tm_lists *out, const ncm_hint_desc ***ret_descs);

/*
 * kubelet's filterSingleNumaHints: keep hints that are preferred and either "any" or exactly
 * one node, per list (a list may become empty). -ENOMEM.
 */
int ncm__tm_filter_single_numa(const ncm__tm_lists *in, ncm__tm_lists *out);

void ncm__tm_lists_done(ncm__tm_lists *l);

/* kubelet's maxOfMinAffinityCounts: the largest, over lists, of the narrowest mask's count. */
int ncm__tm_max_of_min_counts(const ncm__tm_list *lists, size_t n);

/* The same where DESCS[i] (when DESCS and it are not NULL) stands for list i. */
int ncm__tm_max_of_min_counts_ex(const ncm__tm_list *lists, const ncm_hint_desc *const *descs,
                                 size_t n);

/* How the fast merge computes the achievable non-preferred masks (tests force each). */
typedef enum ncm__tm_andset_method {
        NCM__TM_ANDSET_AUTO = 0,
        NCM__TM_ANDSET_DENSE,  /* subset transforms over all subsets of the NUMA nodes */
        NCM__TM_ANDSET_SPARSE, /* list by list, deduplicated */
} ncm__tm_andset_method;

/* kubelet's HintMerger. */
typedef struct ncm__tm_merger {
        const ncm__tm_numa *numa;
        bool closest;           /* CompareNUMAAffinityMasks uses Closest (else Narrowest) */
        int best_non_preferred; /* BestNonPreferredAffinityCount */
        const ncm__tm_list *lists;
        size_t n;
        ncm__tm_andset_method andset;      /* fast merge only */
        const ncm_hint_desc *const *descs; /* lazy merge only: as ncm__tm_lists.descs */
} ncm__tm_merger;

/* Set up M over LISTS (computes best_non_preferred). */
void ncm__tm_merger_init(ncm__tm_merger *m, const ncm__tm_numa *numa, bool closest,
                         const ncm__tm_list *lists, size_t n);

/* Let DESCS stand for M's lists where set (recomputes best_non_preferred). */
void ncm__tm_merger_set_descs(ncm__tm_merger *m, const ncm_hint_desc *const *descs);

/*
 * kubelet's HintMerger.compare: returns CURRENT or CANDIDATE (CURRENT may be NULL; CANDIDATE is
 * a merged hint, its mask is used even when it is empty).
 */
const ncm_hint *ncm__tm_compare(const ncm__tm_merger *m, const ncm_hint *current,
                                const ncm_hint *candidate);

/*
 * Fold one candidate into *BEST through ncm__tm_compare() (*HAVE: BEST holds one already).
 * Inline, as both faster merges call it in their innermost loops.
 */
static inline void ncm__tm_fold(const ncm__tm_merger *m, ncm_hint *best, bool *have, ncm_hint cand)
{
        if (ncm__tm_compare(m, *have ? best : NULL, &cand) == &cand) {
                *best = cand;
                *have = true;
        }
}

/* Sort and deduplicate A[0..N) ascending; returns the new length. */
size_t ncm__tm_sort_unique(uint64_t *a, size_t n);

/* Whether V is in A[0..N), sorted ascending. */
static inline bool ncm__tm_sorted_contains(const uint64_t *a, size_t n, uint64_t v)
{
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (a[mid] < v)
                        lo = mid + 1;
                else if (a[mid] > v)
                        hi = mid;
                else
                        return true;
        }
        return false;
}

/*
 * qsort order of ncm_bitmask: fewest nodes first, then the lowest ids (the order kubelet's
 * IterateBitMasks walks, which the trace reports candidates in).
 */
int ncm__tm_cmp_trace_order(const void *a, const void *b);

/* kubelet's HintMerger.Merge, the cross product in kubelet's order. -ENOMEM. */
int ncm__tm_merge_reference(const ncm__tm_merger *m, ncm_hint *ret);

/* The same result without the cross product (tm-merge-fast.c). -ENOMEM. */
int ncm__tm_merge_fast(const ncm__tm_merger *m, ncm_hint *ret);
/* The same; *RET_HAVE: some merged hint was not empty (else *RET is {D, not preferred}). */
int ncm__tm_merge_fast_have(const ncm__tm_merger *m, ncm_hint *ret, bool *ret_have);

/*
 * The same result from lists some of which are described (tm-merge-lazy.c): no list is
 * walked. Described lists must lie inside the machine's nodes (-EDOM otherwise). -ENOMEM.
 */
int ncm__tm_merge_lazy(const ncm__tm_merger *m, ncm_hint *ret);

/*
 * The preferred candidates of M (whose lists include described ones, ncm__tm_merger_set_descs),
 * in the trace's order (fewest nodes, then lowest ids), at most MAX of them into OUT; returns
 * how many, and sets *RET_MORE when there are others. -ENOMEM.
 */
int ncm__tm_lazy_candidates(const ncm__tm_merger *m, ncm_bitmask *out, size_t max, bool *ret_more);

/*
 * Replace every described list of PROVIDERS[0..N) by the list it describes, into *RET (N
 * maps, freed by the caller with ncm_tm_hints_done() on each and free()). -E2BIG when a list
 * has more than MAX hints, -ENOMEM.
 */
int ncm__tm_providers_materialize(const ncm_tm_hints *providers, size_t n, size_t max,
                                  ncm_tm_hints **ret, ncm_error *err);

/* Policies plug in through this table. */
typedef struct ncm__tm_policy_ops {
        const char *name;
        bool single_numa_filter; /* filterSingleNumaHints before merging */
        bool default_to_any;     /* a merged mask equal to all nodes becomes "any" */
        bool merges;             /* false for none: no merge at all */
        bool (*can_admit)(const ncm_hint *hint);
} ncm__tm_policy_ops;

struct ncm_tm_policy {
        const ncm__tm_policy_ops *ops;
        ncm_tm_options opts;
        ncm__tm_numa numa;
        ncm__tm_andset_method andset; /* tests only */
};

/*
 * ncm_tm_policy_merge() reporting its steps to TRACE (may be NULL) for CALL (may be NULL):
 * the LIST events, the preferred CANDIDATEs, then MERGED (ncm_tm_trace_event).
 */
int ncm__tm_policy_merge_traced(const ncm_tm_policy *p, const ncm_tm_hints *providers, size_t n,
                                ncm_tm_merge_mode mode, const ncm_tm_trace *trace,
                                const ncm_tm_call *call, ncm_hint *ret_hint, bool *ret_admit,
                                ncm_error *err);

/*
 * Report M's lists (built from PROVIDERS by ncm__tm_filter_providers_ex) as LIST events and the
 * preferred candidates among them as CANDIDATE events (tm-trace.c). -ENOMEM.
 */
int ncm__tm_trace_lists(const ncm__tm_merger *m, const ncm_tm_hints *providers, size_t n,
                        const ncm_tm_trace *trace, const ncm_tm_call *call);

/* Internal knob for the tests: how the fast merge builds non-preferred candidates. */
void ncm__tm_policy_set_andset(ncm_tm_policy *p, ncm__tm_andset_method method);

/*
 * Option availability with an extra table of (name, maturity) pairs consulted first: kubelet's
 * tests insert fake alpha/beta options. MATURITY: 1 alpha, 2 beta, 3 stable.
 */
typedef struct ncm__tm_option_level {
        const char *name;
        int maturity;
} ncm__tm_option_level;
int ncm__tm_option_check_available_in(const char *name, const ncm__tm_option_level *extra,
                                      size_t n_extra, ncm_tm_gates gates, ncm_error *err);
int ncm__tm_options_parse_in(const ncm_tm_option *opts, size_t n, const ncm__tm_option_level *extra,
                             size_t n_extra, ncm_tm_gates gates, ncm_tm_options *ret,
                             ncm_error *err);

#endif
