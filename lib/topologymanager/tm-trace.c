/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The merge's trace: the lists it works on and the preferred candidates it weighs, reported as
 * ncm_tm_trace events. Only runs when a trace is set, so it trades speed for plainness.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tm-internal.h"

static int cmp_resource_ptr(const void *a, const void *b)
{
        const ncm_tm_resource_hints *const *x = a, *const *y = b;
        return strcmp((*x)->resource, (*y)->resource);
}

static bool offers(const ncm__tm_list *l, ncm_bitmask mask)
{
        for (size_t j = 0; j < l->n; j++)
                if (l->hints[j].preferred && (l->hints[j].any || l->hints[j].numa == mask))
                        return true;
        return false;
}

static bool has_preferred_any(const ncm__tm_list *l)
{
        for (size_t j = 0; j < l->n; j++)
                if (l->hints[j].preferred && l->hints[j].any)
                        return true;
        return false;
}

/*
 * The preferred merged hints: a mask every list offers as preferred (directly or through a
 * preferred "any"), and all nodes when every list has a preferred "any".
 */
static int trace_candidates(const ncm__tm_merger *m, const ncm_tm_trace *trace,
                            const ncm_tm_call *call)
{
        size_t total = 0, nc = 0;
        ncm_autofree ncm_bitmask *cand = NULL;
        bool all_any = true, more = false;

        for (size_t i = 0; i < m->n && m->descs; i++) {
                if (!m->descs[i])
                        continue;
                /* Described lists: a bounded number of candidates, searched in this order. */
                ncm_bitmask first[NCM_TM_TRACE_CANDIDATES_MAX];
                int k = ncm__tm_lazy_candidates(m, first, NCM_TM_TRACE_CANDIDATES_MAX, &more);
                if (k < 0)
                        return k;
                for (int c = 0; c < k; c++) {
                        ncm_tm_trace_event ev = {.kind = NCM_TM_TRACE_CANDIDATE, .call = call};
                        ev.hint = (ncm_hint){.numa = m->numa->all & first[c], .preferred = true};
                        ev.more = more && c == k - 1;
                        trace->fn(trace->data, &ev);
                }
                return 0;
        }

        for (size_t i = 0; i < m->n; i++)
                total += m->lists[i].n;
        cand = malloc((total + 1) * sizeof(*cand));
        if (!cand)
                return -ENOMEM;
        for (size_t i = 0; i < m->n; i++) {
                all_any = all_any && has_preferred_any(&m->lists[i]);
                for (size_t j = 0; j < m->lists[i].n; j++) {
                        const ncm_hint *h = &m->lists[i].hints[j];
                        bool seen = false, ok = true;
                        if (!h->preferred || h->any)
                                continue;
                        for (size_t c = 0; c < nc && !seen; c++)
                                seen = cand[c] == h->numa;
                        for (size_t k = 0; k < m->n && ok && !seen; k++)
                                ok = offers(&m->lists[k], h->numa);
                        if (!seen && ok)
                                cand[nc++] = h->numa;
                }
        }
        if (all_any) {
                bool seen = false;
                for (size_t c = 0; c < nc && !seen; c++)
                        seen = cand[c] == m->numa->all;
                if (!seen)
                        cand[nc++] = m->numa->all;
        }
        qsort(cand, nc, sizeof(*cand), ncm__tm_cmp_trace_order);
        for (size_t c = 0; c < nc; c++) {
                ncm_tm_trace_event ev = {.kind = NCM_TM_TRACE_CANDIDATE, .call = call};
                ev.hint = (ncm_hint){.numa = m->numa->all & cand[c], .preferred = true};
                trace->fn(trace->data, &ev);
        }
        return 0;
}

int ncm__tm_trace_lists(const ncm__tm_merger *m, const ncm_tm_hints *providers, size_t n,
                        const ncm_tm_trace *trace, const ncm_tm_call *call)
{
        size_t k = 0;

        /* The same walk as ncm__tm_filter_providers_ex(), which built M's lists. */
        for (size_t p = 0; p < n; p++) {
                ncm_autofree const ncm_tm_resource_hints **order = NULL;
                ncm_tm_trace_event ev = {.kind = NCM_TM_TRACE_LIST, .call = call, .provider = p};

                if (providers[p].n == 0) {
                        ev.list = NCM_TM_LIST_NO_PREFERENCE;
                        ev.list_hints = m->lists[k].hints;
                        ev.n_list_hints = m->lists[k].n;
                        k++;
                        trace->fn(trace->data, &ev);
                        continue;
                }
                order = calloc(providers[p].n, sizeof(*order));
                if (!order)
                        return -ENOMEM;
                for (size_t r = 0; r < providers[p].n; r++)
                        order[r] = &providers[p].res[r];
                qsort(order, providers[p].n, sizeof(*order), cmp_resource_ptr);
                for (size_t r = 0; r < providers[p].n; r++) {
                        const ncm_hint_list *hl = &order[r]->list;
                        ev.resource = order[r]->resource;
                        /* a described list is the provider's hints, unless it has none */
                        if (order[r]->desc && m->descs && m->descs[k])
                                ev.list_desc = m->descs[k];
                        if (order[r]->desc)
                                ev.list = order[r]->desc->narrowest ? NCM_TM_LIST_HINTS
                                                                    : NCM_TM_LIST_UNSATISFIABLE;
                        else
                                ev.list = hl->nil      ? NCM_TM_LIST_NO_PREFERENCE
                                          : hl->n == 0 ? NCM_TM_LIST_UNSATISFIABLE
                                                       : NCM_TM_LIST_HINTS;
                        ev.list_hints = ev.list_desc ? NULL : m->lists[k].hints;
                        ev.n_list_hints = ev.list_desc ? 0 : m->lists[k].n;
                        k++;
                        trace->fn(trace->data, &ev);
                        ev.list_desc = NULL;
                }
        }
        return trace_candidates(m, trace, call);
}
