/* SPDX-License-Identifier: Apache-2.0 */
/* Providers' hint maps and their normalisation into the lists the merge walks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "tm-internal.h"

int ncm_tm_hints_add(ncm_tm_hints *h, const char *resource, const ncm_hint *hints, size_t n,
                     bool nil, ncm_hint_list **ret_list, ncm_error *err)
{
        ncm_tm_resource_hints *e;
        char *name;

        if (ncm_tm_hints_get(h, resource))
                return ncm_error_set(err, EEXIST, "resource '%s' given twice", resource);
        if (nil && n > 0)
                return ncm_error_set(err, EINVAL, "resource '%s': a nil hint list has no hints",
                                     resource);
        if (ncm__array_grow(h->res, h->cap, h->n) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        name = strdup(resource);
        if (!name)
                return ncm_error_set(err, ENOMEM, "out of memory");
        e = &h->res[h->n];
        e->resource = name;
        e->desc = NULL;
        e->list = (ncm_hint_list)NCM_HINT_LIST_INIT;
        e->list.nil = nil;
        if (n > 0) {
                e->list.hints = malloc(n * sizeof(ncm_hint));
                if (!e->list.hints) {
                        free(name);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
                memcpy(e->list.hints, hints, n * sizeof(ncm_hint));
                e->list.n = e->list.cap = n;
        }
        h->n++;
        if (ret_list)
                *ret_list = &e->list;
        return 0;
}

int ncm_tm_hints_add_desc(ncm_tm_hints *h, const char *resource, ncm_hint_desc *desc,
                          ncm_error *err)
{
        ncm_hint_list *l;
        int r = ncm_tm_hints_add(h, resource, NULL, 0, false, &l, err);

        if (r < 0) {
                ncm_hint_desc_free(desc);
                return r;
        }
        h->res[h->n - 1].desc = desc;
        return 0;
}

const ncm_hint_list *ncm_tm_hints_get(const ncm_tm_hints *h, const char *resource)
{
        for (size_t i = 0; i < h->n; i++)
                if (strcmp(h->res[i].resource, resource) == 0)
                        return &h->res[i].list;
        return NULL;
}

void ncm_tm_hints_done(ncm_tm_hints *h)
{
        for (size_t i = 0; i < h->n; i++) {
                free(h->res[i].resource);
                ncm_hint_list_done(&h->res[i].list);
                ncm_hint_desc_free(h->res[i].desc);
        }
        free(h->res);
        *h = (ncm_tm_hints)NCM_TM_HINTS_INIT;
}

void ncm__tm_lists_done(ncm__tm_lists *l)
{
        free(l->lists);
        free(l->storage);
        memset(l, 0, sizeof(*l));
}

static int cmp_resource_ptr(const void *a, const void *b)
{
        const ncm_tm_resource_hints *const *x = a, *const *y = b;
        return strcmp((*x)->resource, (*y)->resource);
}

/* kubelet's filterSingleNumaHints test for one hint. */
static bool single_numa_keeps(const ncm_hint *h)
{
        return h->preferred && (h->any || (h->numa != 0 && (h->numa & (h->numa - 1)) == 0));
}

int ncm__tm_filter_providers_ex(const ncm_tm_hints *providers, size_t n, bool single_numa,
                                ncm__tm_lists *out)
{
        return ncm__tm_filter_providers_desc(providers, n, single_numa, out, NULL);
}

int ncm__tm_filter_providers_desc(const ncm_tm_hints *providers, size_t n, bool single_numa,
                                  ncm__tm_lists *out, const ncm_hint_desc ***ret_descs)
{
        ncm_autofree const ncm_hint_desc **descs = NULL;
        static const ncm_hint any_preferred = {.any = true, .preferred = true};
        static const ncm_hint any_not_preferred = {.any = true, .preferred = false};
        ncm__tm_lists l = {0, NULL, NULL};
        size_t nlists = 0, nstore = 0, max_res = 0, k = 0, used = 0, ndesc = 0;
        ncm_autofree const ncm_tm_resource_hints **order = NULL;

        /* Lists point into the providers' storage; only synthetic hints, and with the
         * single-numa-node filter the hints it keeps, are copied. */
        for (size_t p = 0; p < n; p++) {
                if (providers[p].n == 0) {
                        nlists++;
                        nstore++;
                        continue;
                }
                if (providers[p].n > max_res)
                        max_res = providers[p].n;
                for (size_t r = 0; r < providers[p].n; r++) {
                        const ncm_hint_list *hl = &providers[p].res[r].list;
                        nlists++;
                        if (providers[p].res[r].desc) {
                                const ncm_hint_desc *d = providers[p].res[r].desc;
                                ndesc++;
                                /* single-numa-node keeps at most one hint per node; a list
                                 * without hints is "cannot be satisfied" */
                                if (single_numa)
                                        nstore += (size_t)d->n + d->n_extras;
                                else if (d->narrowest == 0)
                                        nstore++;
                                continue;
                        }
                        if (hl->n == 0)
                                nstore++;
                        else if (single_numa)
                                for (size_t j = 0; j < hl->n; j++)
                                        nstore += single_numa_keeps(&hl->hints[j]);
                }
        }
        if (nlists > 0) {
                l.lists = calloc(nlists, sizeof(*l.lists));
                l.storage = calloc(nstore ? nstore : 1, sizeof(*l.storage));
                order = calloc(max_res ? max_res : 1, sizeof(*order));
                if (ndesc && !single_numa && ret_descs)
                        descs = calloc(nlists, sizeof(*descs));
                if (!l.lists || !l.storage || !order ||
                    (ndesc && !single_numa && ret_descs && !descs)) {
                        ncm__tm_lists_done(&l);
                        return -ENOMEM;
                }
        }
        for (size_t p = 0; p < n; p++) {
                if (providers[p].n == 0) {
                        /* "Hint Provider has no preference for NUMA affinity with any resource" */
                        l.storage[used] = any_preferred;
                        l.lists[k++] = (ncm__tm_list){&l.storage[used], 1};
                        used++;
                        continue;
                }
                /* Go ranges over the map in random order; nodecm fixes ascending names. */
                for (size_t r = 0; r < providers[p].n; r++)
                        order[r] = &providers[p].res[r];
                qsort(order, providers[p].n, sizeof(*order), cmp_resource_ptr);
                for (size_t r = 0; r < providers[p].n; r++) {
                        const ncm_hint_list *hl = &order[r]->list;
                        const ncm_hint_desc *d = order[r]->desc;
                        size_t start = used;
                        if (d && !single_numa && d->narrowest == 0) {
                                /* an empty list, as an explicit empty list is normalised */
                                l.storage[used++] = any_not_preferred;
                                l.lists[k++] = (ncm__tm_list){&l.storage[start], 1};
                                continue;
                        }
                        if (d && !single_numa) {
                                if (descs)
                                        descs[k] = d;
                                l.lists[k++] = (ncm__tm_list){NULL, 0};
                                continue;
                        }
                        if (d && d->n_extras) {
                                /* extras: the list is in ascending ids, singletons too */
                                for (int id = 0; id < NCM_BITMASK_MAX_BITS; id++) {
                                        ncm_bitmask m = UINT64_C(1) << id;
                                        bool pref;
                                        if (ncm_hint_desc_contains(d, m, &pref) && pref)
                                                l.storage[used++] = (ncm_hint){m, false, true};
                                }
                                l.lists[k++] = (ncm__tm_list){&l.storage[start], used - start};
                                continue;
                        }
                        if (d) {
                                /* the singletons in walk order: what the filter keeps */
                                for (int i = 0; i < d->n; i++) {
                                        ncm_bitmask m = UINT64_C(1) << d->ids[i];
                                        bool pref;
                                        if (ncm_hint_desc_contains(d, m, &pref) && pref)
                                                l.storage[used++] = (ncm_hint){m, false, true};
                                }
                                l.lists[k++] = (ncm__tm_list){&l.storage[start], used - start};
                                continue;
                        }
                        if (hl->nil || hl->n == 0) {
                                ncm_hint h = hl->nil ? any_preferred : any_not_preferred;
                                if (!single_numa || single_numa_keeps(&h))
                                        l.storage[used++] = h;
                                l.lists[k++] = (ncm__tm_list){&l.storage[start], used - start};
                                continue;
                        }
                        if (!single_numa) {
                                l.lists[k++] = (ncm__tm_list){hl->hints, hl->n};
                                continue;
                        }
                        for (size_t j = 0; j < hl->n; j++)
                                if (single_numa_keeps(&hl->hints[j]))
                                        l.storage[used++] = hl->hints[j];
                        l.lists[k++] = (ncm__tm_list){&l.storage[start], used - start};
                }
        }
        l.n = k;
        *out = l;
        if (ret_descs)
                *ret_descs = NCM_TAKE_PTR(descs);
        return 0;
}

int ncm__tm_filter_providers(const ncm_tm_hints *providers, size_t n, ncm__tm_lists *out)
{
        return ncm__tm_filter_providers_ex(providers, n, false, out);
}

int ncm__tm_filter_single_numa(const ncm__tm_lists *in, ncm__tm_lists *out)
{
        ncm__tm_lists l = {0, NULL, NULL};
        size_t total = 0, used = 0;

        for (size_t i = 0; i < in->n; i++)
                total += in->lists[i].n;
        if (in->n > 0) {
                l.lists = calloc(in->n, sizeof(*l.lists));
                l.storage = calloc(total ? total : 1, sizeof(*l.storage));
                if (!l.lists || !l.storage) {
                        ncm__tm_lists_done(&l);
                        return -ENOMEM;
                }
        }
        for (size_t i = 0; i < in->n; i++) {
                size_t start = used;
                for (size_t j = 0; j < in->lists[i].n; j++) {
                        const ncm_hint *h = &in->lists[i].hints[j];
                        if (single_numa_keeps(h))
                                l.storage[used++] = *h;
                }
                l.lists[i] = (ncm__tm_list){&l.storage[start], used - start};
        }
        l.n = in->n;
        *out = l;
        return 0;
}

int ncm__tm_max_of_min_counts(const ncm__tm_list *lists, size_t n)
{
        return ncm__tm_max_of_min_counts_ex(lists, NULL, n);
}

int ncm__tm_max_of_min_counts_ex(const ncm__tm_list *lists, const ncm_hint_desc *const *descs,
                                 size_t n)
{
        int max = 0;

        for (size_t i = 0; i < n; i++) {
                if (descs && descs[i]) {
                        /* the narrowest hint of a described list; 0 when it has none */
                        if (descs[i]->narrowest > max)
                                max = descs[i]->narrowest;
                        continue;
                }
                /* The narrowest non-nil hint: fewest nodes, then lowest mask (IsNarrowerThan);
                 * only its count matters here. */
                int best = -1;
                for (size_t j = 0; j < lists[i].n; j++) {
                        const ncm_hint *h = &lists[i].hints[j];
                        int c;
                        if (h->any)
                                continue;
                        c = ncm_popcount64(h->numa);
                        if (best < 0 || c < best)
                                best = c;
                }
                if (best > max)
                        max = best;
        }
        return max;
}

int ncm__tm_providers_materialize(const ncm_tm_hints *providers, size_t n, size_t max,
                                  ncm_tm_hints **ret, ncm_error *err)
{
        ncm_tm_hints *out = calloc(n + 1, sizeof(*out));
        int r = 0;

        if (!out)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t p = 0; p < n && r >= 0; p++) {
                for (size_t i = 0; i < providers[p].n && r >= 0; i++) {
                        const ncm_tm_resource_hints *e = &providers[p].res[i];
                        ncm_hint_list *l;
                        r = ncm_tm_hints_add(&out[p], e->resource, e->list.hints, e->list.n,
                                             e->list.nil, &l, err);
                        if (r >= 0 && e->desc) {
                                r = ncm_hint_desc_materialize(e->desc, max, l, err);
                                if (r < 0)
                                        (void)ncm_error_prefix(err, "resource '%s'", e->resource);
                        }
                }
        }
        if (r < 0) {
                for (size_t p = 0; p < n; p++)
                        ncm_tm_hints_done(&out[p]);
                free(out);
                return r;
        }
        *ret = out;
        return 0;
}
