/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubelet's HintMerger: the comparison of merged hints and the reference merge, which walks
 * the cross product of all lists exactly as kubelet's iterateAllProviderTopologyHints does
 * (first list varies slowest) and folds every permutation's merged hint through compare();
 * and the small pieces the fast and the lazy merge and the trace share.
 */
#include <errno.h>
#include <stdlib.h>

#include "tm-internal.h"

void ncm__tm_merger_init(ncm__tm_merger *m, const ncm__tm_numa *numa, bool closest,
                         const ncm__tm_list *lists, size_t n)
{
        m->numa = numa;
        m->closest = closest;
        m->lists = lists;
        m->n = n;
        m->best_non_preferred = ncm__tm_max_of_min_counts(lists, n);
        m->andset = NCM__TM_ANDSET_AUTO;
        m->descs = NULL;
}

void ncm__tm_merger_set_descs(ncm__tm_merger *m, const ncm_hint_desc *const *descs)
{
        m->descs = descs;
        m->best_non_preferred = ncm__tm_max_of_min_counts_ex(m->lists, descs, m->n);
}

/* kubelet's CompareNUMAAffinityMasks, the "fit" of two masks. */
static const ncm_hint *fit(const ncm__tm_merger *m, const ncm_hint *current,
                           const ncm_hint *candidate)
{
        ncm_bitmask best;

        if (candidate->numa == current->numa)
                return current;
        if (m->closest)
                best = ncm__tm_numa_closest(m->numa, current->numa, candidate->numa);
        else
                best = ncm__tm_numa_narrowest(current->numa, candidate->numa);
        return best == current->numa ? current : candidate;
}

const ncm_hint *ncm__tm_compare(const ncm__tm_merger *m, const ncm_hint *current,
                                const ncm_hint *candidate)
{
        int b = m->best_non_preferred;
        int cur, cand;

        /* Only candidates with at least one node can replace the current best. */
        if (candidate->numa == 0)
                return current;
        if (!current)
                return candidate;
        if (!current->preferred && candidate->preferred)
                return candidate;
        if (current->preferred && !candidate->preferred)
                return current;
        if (current->preferred && candidate->preferred)
                return fit(m, current, candidate);

        /* Both non-preferred: get as close as possible to (but not above) b nodes. */
        cur = ncm_popcount64(current->numa);
        cand = ncm_popcount64(candidate->numa);
        if (cur > b)
                return fit(m, current, candidate);
        if (cur == b)
                return cand != b ? current : fit(m, current, candidate);
        if (cand > b)
                return current;
        if (cand == b)
                return candidate;
        if (cand > cur)
                return candidate;
        if (cand < cur)
                return current;
        return fit(m, current, candidate);
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return (x > y) - (x < y);
}

size_t ncm__tm_sort_unique(uint64_t *a, size_t n)
{
        size_t k = 0;
        if (n == 0)
                return 0;
        qsort(a, n, sizeof(*a), cmp_u64);
        for (size_t i = 1; i < n; i++)
                if (a[i] != a[k])
                        a[++k] = a[i];
        return k + 1;
}

int ncm__tm_cmp_trace_order(const void *a, const void *b)
{
        ncm_bitmask x = *(const ncm_bitmask *)a, y = *(const ncm_bitmask *)b;
        int cx = ncm_bitmask_count(x), cy = ncm_bitmask_count(y);

        if (cx != cy)
                return cx < cy ? -1 : 1;
        while (x != y) {
                ncm_bitmask lx = x & -x, ly = y & -y;
                if (lx != ly)
                        return lx < ly ? -1 : 1;
                x &= ~lx;
                y &= ~ly;
        }
        return 0;
}

/* kubelet's mergePermutation. */
static ncm_hint merge_permutation(ncm_bitmask default_affinity, const ncm__tm_list *lists,
                                  const size_t *idx, size_t n)
{
        ncm_hint merged = {.numa = default_affinity, .any = false, .preferred = true};
        const ncm_hint *first = NULL;

        for (size_t i = 0; i < n; i++) {
                const ncm_hint *h = &lists[i].hints[idx[i]];
                if (!h->any) {
                        /* Preferred only if every affinity equals the first one. */
                        if (!first)
                                first = h;
                        else if (h->numa != first->numa)
                                merged.preferred = false;
                        merged.numa &= h->numa;
                }
                if (!h->preferred)
                        merged.preferred = false;
        }
        return merged;
}

int ncm__tm_merge_reference(const ncm__tm_merger *m, ncm_hint *ret)
{
        const ncm_hint none = {.numa = m->numa->all, .any = false, .preferred = false};
        ncm_autofree size_t *pos = NULL;
        ncm_hint best = {0}, cand;
        bool have_best = false;

        /* An empty list makes the cross product empty: no candidate at all. */
        for (size_t i = 0; i < m->n; i++) {
                if (m->lists[i].n == 0) {
                        *ret = none;
                        return 0;
                }
        }
        pos = calloc(m->n ? m->n : 1, sizeof(size_t));
        if (!pos)
                return -ENOMEM;
        for (;;) {
                size_t i;

                cand = merge_permutation(m->numa->all, m->lists, pos, m->n);
                if (ncm__tm_compare(m, have_best ? &best : NULL, &cand) == &cand) {
                        best = cand;
                        have_best = true;
                }
                /* Next permutation: the last list varies fastest, the first slowest. */
                for (i = m->n; i > 0; i--) {
                        if (++pos[i - 1] < m->lists[i - 1].n)
                                break;
                        pos[i - 1] = 0;
                }
                if (i == 0)
                        break;
        }
        *ret = have_best ? best : none;
        return 0;
}
