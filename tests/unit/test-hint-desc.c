/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hint descriptions (include/nodecm/hintdesc.h) against the generators' definition, walked
 * here mask by mask as the kubelet walks them: the listed hints (order and flags), their
 * count, the narrowest hint, the preferred size, membership, and the iterator's paging.
 * Random descriptions come from tests/unit/tm-lazy-gen.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/hintdesc.h>
#include "base/hintdesc-internal.h"
#include "testutil.h"
#include "tm-lazy-gen.h"

/* The kubelet's generator, literally: every mask in IterateBitMasks order. */
static void walk(const ncm_hint_desc *d, ncm_hint_list *out, int *ret_min)
{
        ncm_bitmask_iter it;
        ncm_bitmask mask;
        int min = d->n;
        size_t first = out->n;

        assert_int_equal(ncm_bitmask_iter_init(&it, d->ids, d->n, NULL), 0);
        while (ncm_bitmask_iter_next(&it, &mask)) {
                int64_t cap = 0, count = d->avail.base;
                bool drop = d->empty;
                for (ncm_bitmask m = mask; m; m &= m - 1)
                        cap += d->cap.w[__builtin_ctzll(m)];
                for (size_t i = 0; i < d->cap.n_items; i++)
                        if (d->cap.items[i].mask & mask)
                                cap += d->cap.items[i].weight;
                if (cap >= d->request && ncm_bitmask_count(mask) < min)
                        min = ncm_bitmask_count(mask);
                if ((d->avail.required & ~mask) != 0)
                        drop = true;
                for (size_t i = 0; i < d->avail.n_req_sets; i++)
                        if (!(d->avail.req_sets[i] & mask))
                                drop = true;
                for (ncm_bitmask m = mask; m; m &= m - 1)
                        count += d->avail.w[__builtin_ctzll(m)];
                for (size_t i = 0; i < d->avail.n_items; i++)
                        if (d->avail.items[i].mask & mask)
                                count += d->avail.items[i].weight;
                if (drop || count < d->request)
                        continue;
                assert_int_equal(ncm_hint_list_append(out, (ncm_hint){mask, false, false}), 0);
        }
        for (size_t i = first; i < out->n; i++) {
                ncm_hint *h = &out->hints[i];
                int socks = 0;
                if (d->per_socket > 0) {
                        uint64_t acc[64] = {0};
                        for (ncm_bitmask m = h->numa; m; m &= m - 1)
                                for (int w = 0; w < d->sock_words; w++)
                                        acc[w] |= d->sockets[(size_t)__builtin_ctzll(m) *
                                                                             (size_t)d->sock_words +
                                                             (size_t)w];
                        for (int w = 0; w < d->sock_words; w++)
                                socks += ncm_popcount64(acc[w]);
                        if (socks == (min + d->per_socket - 1) / d->per_socket) {
                                h->preferred = true;
                                continue;
                        }
                }
                h->preferred = ncm_bitmask_count(h->numa) == min;
        }
        *ret_min = min;
}

static void check_desc(const ncm_hint_desc *d)
{
        ncm_hint_list want = NCM_HINT_LIST_INIT, got = NCM_HINT_LIST_INIT;
        int min, narrowest = 0;
        uint64_t count;
        ncm_error err = NCM_ERROR_INIT;

        walk(d, &want, &min);
        assert_int_equal(ncm_hint_desc_materialize(d, 1 << 20, &got, NULL), 0);
        if (got.n != want.n) {
                fprintf(stderr, "want %zu hints, got %zu\n", want.n, got.n);
                for (size_t i = 0; i < want.n; i++)
                        fprintf(stderr, " %llx", (unsigned long long)want.hints[i].numa);
                fprintf(stderr, "\n");
                for (size_t i = 0; i < got.n; i++)
                        fprintf(stderr, " %llx", (unsigned long long)got.hints[i].numa);
                fprintf(stderr, "\n");
        }
        assert_int_equal(got.n, want.n);
        for (size_t i = 0; i < want.n; i++) {
                assert_int_equal(got.hints[i].numa, want.hints[i].numa);
                assert_int_equal(got.hints[i].preferred, want.hints[i].preferred);
                assert_false(got.hints[i].any);
                if (narrowest == 0 || ncm_bitmask_count(want.hints[i].numa) < narrowest)
                        narrowest = ncm_bitmask_count(want.hints[i].numa);
        }
        assert_int_equal(ncm_hint_desc_preferred_size(d), min);
        assert_int_equal(ncm_hint_desc_narrowest(d), narrowest);
        assert_int_equal(ncm_hint_desc_count(d, &count, &err), 0);
        assert_int_equal(count, want.n);
        /* membership agrees mask by mask (including masks that are not hints) */
        for (size_t i = 0; i < want.n; i++) {
                bool pref;
                assert_true(ncm_hint_desc_contains(d, want.hints[i].numa, &pref));
                assert_int_equal(pref, want.hints[i].preferred);
        }
        assert_false(ncm_hint_desc_contains(d, 0, NULL));
        ncm_hint_list_done(&want);
        ncm_hint_list_done(&got);
}

static void test_hint_desc_random(void **state)
{
        lg_rng r = {.s = 11};
        (void)state;
        for (int iter = 0; iter < 3000; iter++) {
                lg_machine m;
                ncm_hint_desc *d;
                lg_machine_random(&r, &m, 1, iter < 2500 ? 8 : 12);
                d = lg_desc_random(&r, &m);
                assert_non_null(d);
                check_desc(d);
                ncm_hint_desc_free(d);
        }
}

/*
 * ncm__hd_feasible against brute force: the walked nodes of D drawn into IN, POOL or neither,
 * and for every size, whether some subset of POOL of that size completes IN.
 */
static void check_feasible(lg_rng *r, const ncm_hint_desc *d)
{
        ncm_bitmask in = 0, pool = 0;
        for (int i = 0; i < d->n; i++) {
                unsigned k = lg_below(r, 3);
                if (k == 0)
                        in |= UINT64_C(1) << d->ids[i];
                else if (k == 1)
                        pool |= UINT64_C(1) << d->ids[i];
        }
        for (int rr = 0; rr <= d->n; rr++) {
                bool want = false;
                ncm_bitmask s = 0;
                for (;;) {
                        if (ncm_bitmask_count(s) == rr && ncm_hint_desc_contains(d, in | s, NULL))
                                want = true;
                        if (s == pool)
                                break;
                        s = (s - pool) & pool;
                }
                assert_int_equal(ncm__hd_feasible(d, in, pool, rr), want);
        }
}

/* Feasibility in a region against brute force over the region's subsets. */
static void test_hint_desc_feasible(void **state)
{
        lg_rng r = {.s = 12};
        (void)state;
        for (int iter = 0; iter < 2000; iter++) {
                lg_machine m;
                ncm_hint_desc *d;
                lg_machine_random(&r, &m, 1, 8);
                d = lg_desc_random(&r, &m);
                assert_non_null(d);
                check_feasible(&r, d);
                ncm_hint_desc_free(d);
        }
}

/*
 * Several requests (dimensions, the memory manager's types): the list, the narrowest hint and
 * feasibility in a region against brute force over every mask; the description's limits.
 */
static void test_hint_desc_dimensions(void **state)
{
        lg_rng r = {.s = 13};
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        for (int iter = 0; iter < 1500; iter++) {
                int n = 1 + (int)lg_below(&r, 10), dims = 1 + (int)lg_below(&r, 3), ids[16];
                int64_t req[4], w[4][16];
                int pref = 1 + (int)lg_below(&r, (unsigned)n), narrowest = 0;
                ncm_hint_desc *d = NULL;
                ncm_hint_list got = NCM_HINT_LIST_INIT;
                ncm_bitmask_iter it;
                ncm_bitmask mask;
                size_t k = 0;
                uint64_t count;

                for (int i = 0; i < n; i++)
                        ids[i] = i * 3 % 17; /* not in id order: the walk's order is kept */
                for (int t = 0; t < dims; t++) {
                        req[t] = lg_below(&r, 24);
                        for (int i = 0; i < n; i++)
                                w[t][i] = lg_below(&r, 9);
                }
                assert_int_equal(ncm_hint_desc_new(ids, (size_t)n, req[0], &d, NULL), 0);
                for (int t = 1; t < dims; t++)
                        assert_int_equal(ncm_hint_desc_add_dimension(d, req[t]), t);
                for (int t = 0; t < dims; t++)
                        for (int i = 0; i < n; i++)
                                assert_int_equal(ncm_hint_desc_add_amount(d, t, ids[i], w[t][i]),
                                                 0);
                ncm_hint_desc_set_preferred_size(d, pref);
                assert_int_equal(ncm_hint_desc_seal(d, NULL), 0);
                assert_int_equal(ncm_hint_desc_materialize(d, 1 << 20, &got, NULL), 0);
                assert_int_equal(ncm_bitmask_iter_init(&it, ids, n, NULL), 0);
                while (ncm_bitmask_iter_next(&it, &mask)) {
                        bool hint = true;
                        for (int t = 0; t < dims; t++) {
                                int64_t sum = 0;
                                for (int i = 0; i < n; i++)
                                        if (mask & (UINT64_C(1) << ids[i]))
                                                sum += w[t][i];
                                hint = hint && sum >= req[t];
                        }
                        assert_int_equal(ncm_hint_desc_contains(d, mask, NULL), hint);
                        if (!hint)
                                continue;
                        assert_true(k < got.n);
                        assert_int_equal(got.hints[k].numa, mask);
                        assert_int_equal(got.hints[k].preferred, ncm_bitmask_count(mask) == pref);
                        if (narrowest == 0)
                                narrowest = ncm_bitmask_count(mask);
                        k++;
                }
                assert_int_equal(k, got.n);
                assert_int_equal(ncm_hint_desc_narrowest(d), narrowest);
                assert_int_equal(ncm_hint_desc_count(d, &count, &err), dims > 1 ? -E2BIG : 0);
                check_feasible(&r, d);
                ncm_hint_list_done(&got);
                ncm_hint_desc_free(d);
        }
        /* the limits: 15 further requests, per-node amounts only, a given preferred size */
        {
                int ids[] = {0, 1};
                ncm_hint_desc *d = NULL;
                assert_int_equal(ncm_hint_desc_new(ids, 2, 1, &d, NULL), 0);
                for (int t = 1; t <= 15; t++)
                        assert_int_equal(ncm_hint_desc_add_dimension(d, 1), t);
                assert_int_equal(ncm_hint_desc_add_dimension(d, 1), -E2BIG);
                assert_int_equal(ncm_hint_desc_add_amount(d, 16, 0, 1), -EINVAL);
                assert_int_equal(ncm_hint_desc_add_amount(d, 1, 2, 1), -EINVAL);
                assert_int_equal(ncm_hint_desc_add_amount(d, 1, 0, -1), -ERANGE);
                assert_int_equal(ncm_hint_desc_seal(d, &err), -EINVAL);
                ncm_hint_desc_set_preferred_size(d, 1);
                assert_int_equal(ncm_hint_desc_add_available(d, 3, 1), 0);
                assert_int_equal(ncm_hint_desc_seal(d, &err), -EINVAL);
                assert_string_equal(err.msg, "hints: a description with several requests takes "
                                             "per-node amounts and a given preferred size only");
                ncm_hint_desc_free(d);
        }
}

/* The iterator pages: stopping and going on gives the same hints; nothing is allocated. */
static void test_hint_desc_iter_pages(void **state)
{
        int ids[32];
        ncm_hint_desc *d = NULL;
        ncm_hint_desc_iter it;
        ncm_hint h, prev = {0};
        uint64_t count, seen = 0;
        (void)state;
        for (int i = 0; i < 32; i++)
                ids[i] = i;
        /* 32 nodes of 16 CPUs, 4 free on even nodes, 12 on odd ones, 24 wanted */
        assert_int_equal(ncm_hint_desc_new(ids, 32, 24, &d, NULL), 0);
        for (int i = 0; i < 32; i++) {
                assert_int_equal(ncm_hint_desc_add_capacity(d, UINT64_C(1) << i, 16), 0);
                assert_int_equal(ncm_hint_desc_add_available(d, UINT64_C(1) << i, i % 2 ? 12 : 4),
                                 0);
        }
        assert_int_equal(ncm_hint_desc_seal(d, NULL), 0);
        assert_int_equal(ncm_hint_desc_preferred_size(d), 2);
        assert_int_equal(ncm_hint_desc_narrowest(d), 2);
        assert_int_equal(ncm_hint_desc_count(d, &count, NULL), 0);
        /* 2^32 - 1 masks; those of 2+ nodes with 24 free: all but the 32 singletons, the
         * C(16,2) pairs of even nodes, the C(16,3) and C(16,4)... let the iterator count the
         * first ones and check order */
        ncm_hint_desc_iter_init(&it, d);
        while (seen < 5000 && ncm_hint_desc_iter_next(&it, &h)) {
                assert_true(ncm_hint_desc_contains(d, h.numa, NULL));
                if (seen > 0)
                        assert_true(ncm_bitmask_count(h.numa) >= ncm_bitmask_count(prev.numa));
                assert_int_equal(h.preferred, ncm_bitmask_count(h.numa) == 2);
                prev = h;
                seen++;
        }
        assert_int_equal(seen, 5000);
        /* pairs: two odd nodes (12 + 12), C(16,2) of them */
        ncm_hint_desc_iter_init(&it, d);
        seen = 0;
        while (ncm_hint_desc_iter_next(&it, &h) && ncm_bitmask_count(h.numa) == 2)
                seen++;
        assert_int_equal(seen, 120);
        assert_true(count > UINT64_C(4000000000));
        ncm_hint_desc_free(d);
}

/* Pages of a described list are pages of the listed one; a listed list pages the same way. */
/* Extras beside the walked subsets: the union, in the kubelet's order, counted and found. */
static void test_hint_desc_extras(void **state)
{
        lg_rng r = {.s = 21};
        (void)state;
        for (int iter = 0; iter < 500; iter++) {
                int n = 1 + (int)lg_below(&r, 8), ids[8], nu = 0, pref = 1 + (int)lg_below(&r, 3);
                int64_t w[64] = {0}, req = 1 + (int64_t)lg_below(&r, 10);
                ncm_bitmask all = (UINT64_C(1) << n) - 1, unused = 0, extras[6];
                unsigned nx = lg_below(&r, 7);
                ncm_hint_desc *d = NULL, *c;
                ncm_hint_list got = NCM_HINT_LIST_INIT, want = NCM_HINT_LIST_INIT;
                ncm_bitmask_iter it;
                ncm_bitmask mask;
                int all_ids[8], narrowest = 0;
                uint64_t total;

                for (int i = 0; i < n; i++) {
                        all_ids[i] = i;
                        if (lg_chance(&r, 70)) {
                                ids[nu++] = i;
                                unused |= UINT64_C(1) << i;
                                w[i] = (int64_t)lg_below(&r, 6);
                        }
                }
                assert_int_equal(ncm_hint_desc_new(ids, (size_t)nu, req, &d, NULL), 0);
                for (int i = 0; i < nu; i++)
                        assert_int_equal(ncm_hint_desc_add_available(d, UINT64_C(1) << ids[i],
                                                                     w[ids[i]]),
                                         0);
                for (unsigned i = 0; i < nx; i++) {
                        extras[i] = (lg_next(&r) & all) |
                                    (UINT64_C(1) << lg_below(&r, (unsigned)n));
                        assert_int_equal(ncm_hint_desc_add_extra(d, extras[i]), 0);
                }
                assert_int_equal(ncm_hint_desc_add_extra(d, 0), -EINVAL);
                ncm_hint_desc_set_preferred_size(d, pref);
                assert_int_equal(ncm_hint_desc_seal(d, NULL), 0);
                /* the reference: every mask of the machine in IterateBitMasks order */
                assert_int_equal(ncm_bitmask_iter_init(&it, all_ids, (size_t)n, NULL), 0);
                while (ncm_bitmask_iter_next(&it, &mask)) {
                        int64_t sum = 0;
                        bool keep = false;
                        for (ncm_bitmask m = mask; m; m &= m - 1)
                                sum += w[__builtin_ctzll(m)];
                        keep = (mask & ~unused) == 0 && sum >= req;
                        for (unsigned i = 0; i < nx; i++)
                                keep = keep || extras[i] == mask;
                        if (!keep)
                                continue;
                        assert_int_equal(
                                        ncm_hint_list_append(
                                                        &want,
                                                        (ncm_hint){.numa = mask,
                                                                   .preferred = ncm_bitmask_count(
                                                                                                mask) ==
                                                                                pref}),
                                        0);
                        if (!narrowest)
                                narrowest = ncm_bitmask_count(mask);
                }
                assert_int_equal(ncm_hint_desc_materialize(d, 1 << 20, &got, NULL), 0);
                assert_int_equal(got.n, want.n);
                for (size_t i = 0; i < got.n; i++) {
                        bool p;
                        assert_int_equal(got.hints[i].numa, want.hints[i].numa);
                        assert_int_equal(got.hints[i].preferred, want.hints[i].preferred);
                        assert_true(ncm_hint_desc_contains(d, want.hints[i].numa, &p));
                        assert_int_equal(p, want.hints[i].preferred);
                }
                assert_int_equal(ncm_hint_desc_count(d, &total, NULL), 0);
                assert_int_equal(total, want.n);
                assert_int_equal(ncm_hint_desc_narrowest(d), narrowest);
                c = ncm_hint_desc_dup(d);
                assert_non_null(c);
                ncm_hint_list_done(&got);
                assert_int_equal(ncm_hint_desc_materialize(c, 1 << 20, &got, NULL), 0);
                assert_int_equal(got.n, want.n);
                ncm_hint_desc_free(c);
                ncm_hint_list_done(&got);
                ncm_hint_list_done(&want);
                ncm_hint_desc_free(d);
        }
}

static void test_hint_desc_page(void **state)
{
        lg_rng r = {.s = 13};
        (void)state;
        for (int iter = 0; iter < 500; iter++) {
                lg_machine m;
                ncm_hint_desc *d;
                ncm_hint_list all = NCM_HINT_LIST_INIT;
                uint64_t off = lg_below(&r, 40);
                size_t lim = lg_below(&r, 40);
                lg_machine_random(&r, &m, 1, 8);
                d = lg_desc_random(&r, &m);
                assert_non_null(d);
                assert_int_equal(ncm_hint_desc_materialize(d, 1 << 20, &all, NULL), 0);
                for (int listed = 0; listed < 2; listed++) {
                        ncm_hint_list page = NCM_HINT_LIST_INIT;
                        uint64_t total = 0;
                        assert_int_equal(ncm_hint_page(&all, listed ? NULL : d, off, lim, &page,
                                                       &total, NULL),
                                         0);
                        assert_int_equal(total, all.n);
                        assert_int_equal(page.n, off >= all.n        ? 0
                                                 : all.n - off < lim ? all.n - off
                                                                     : lim);
                        for (size_t i = 0; i < page.n; i++) {
                                assert_int_equal(page.hints[i].numa, all.hints[off + i].numa);
                                assert_int_equal(page.hints[i].preferred,
                                                 all.hints[off + i].preferred);
                        }
                        ncm_hint_list_done(&page);
                }
                ncm_hint_list_done(&all);
                ncm_hint_desc_free(d);
        }
}

/* A description that cannot be counted still pages, with a lower bound for its total. */
static void test_hint_desc_uncountable(void **state)
{
        int ids[32];
        ncm_hint_desc *d = NULL;
        ncm_hint_list page = NCM_HINT_LIST_INIT;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t total;
        (void)state;
        for (int i = 0; i < 32; i++)
                ids[i] = i;
        /* one device on 30 nodes: counting would enumerate 2^30 subsets */
        assert_int_equal(ncm_hint_desc_new(ids, 32, 1, &d, NULL), 0);
        assert_int_equal(ncm_hint_desc_add_available(d, UINT64_C(0x3fffffff), 1), 0);
        assert_int_equal(ncm_hint_desc_add_capacity(d, UINT64_C(0x3fffffff), 1), 0);
        assert_int_equal(ncm_hint_desc_seal(d, NULL), 0);
        assert_int_equal(ncm_hint_desc_count(d, &total, &err), -E2BIG);
        assert_non_null(strstr(err.msg, "30 nodes"));
        assert_int_equal(ncm_hint_page(NULL, d, 0, 10, &page, &total, NULL), 1);
        assert_int_equal(page.n, 10);
        assert_int_equal(total, 11); /* ten shown, more follow */
        assert_int_equal(page.hints[0].numa, 1);
        assert_true(page.hints[0].preferred);
        ncm_hint_list_done(&page);
        ncm_hint_desc_free(d);
}

/* Building: ids, weights, states the queries refuse. */
static void test_hint_desc_build(void **state)
{
        static const int bad[] = {0, 64}, dup[] = {1, 1}, ok[] = {3, 1};
        ncm_hint_desc *d = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint_list l = NCM_HINT_LIST_INIT;
        (void)state;

        assert_int_equal(ncm_hint_desc_new(bad, 2, 1, &d, &err), -EINVAL);
        assert_string_equal(err.msg, "bit number must be in range 0-63");
        assert_int_equal(ncm_hint_desc_new(dup, 2, 1, &d, &err), -EINVAL);
        assert_int_equal(ncm_hint_desc_new(ok, 2, 2, &d, &err), 0);
        assert_int_equal(ncm_hint_desc_add_available(d, 2, -1), -ERANGE);
        assert_int_equal(ncm_hint_desc_add_available(d, UINT64_C(1) << 3, 1), 0);
        assert_int_equal(ncm_hint_desc_add_available(d, (UINT64_C(1) << 3) | 2, 1), 0);
        assert_int_equal(ncm_hint_desc_add_available(d, 1, 5), 0); /* node 0 is not walked */
        assert_int_equal(ncm_hint_desc_add_capacity(d, UINT64_C(1) << 3, 2), 0);
        assert_int_equal(ncm_hint_desc_seal(d, NULL), 0);
        assert_int_equal(ncm_hint_desc_add_available(d, 2, 1), -EBUSY);
        /* walk order 3, 1: {3} holds 2 (its own and the shared one), {1} holds 1 */
        assert_int_equal(ncm_hint_desc_materialize(d, 10, &l, NULL), 0);
        assert_int_equal(l.n, 2);
        assert_int_equal(l.hints[0].numa, UINT64_C(1) << 3);
        assert_true(l.hints[0].preferred);
        assert_int_equal(l.hints[1].numa, (UINT64_C(1) << 3) | 2);
        l.n = 0;
        assert_int_equal(ncm_hint_desc_materialize(d, 1, &l, &err), -E2BIG);
        assert_int_equal(l.n, 0);
        ncm_hint_list_done(&l);
        {
                ncm_hint_desc *c = ncm_hint_desc_dup(d);
                assert_non_null(c);
                check_desc(c);
                ncm_hint_desc_free(c);
        }
        ncm_hint_desc_free(d);
        assert_null(ncm_hint_desc_free(NULL));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_hint_desc_random),
                        cmocka_unit_test(test_hint_desc_feasible),
                        cmocka_unit_test(test_hint_desc_dimensions),
                        cmocka_unit_test(test_hint_desc_iter_pages),
                        cmocka_unit_test(test_hint_desc_extras),
                        cmocka_unit_test(test_hint_desc_page),
                        cmocka_unit_test(test_hint_desc_uncountable),
                        cmocka_unit_test(test_hint_desc_build),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
