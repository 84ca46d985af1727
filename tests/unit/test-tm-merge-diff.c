/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Differential tests: the fast merge against kubelet's cross product (NCM_TM_MERGE_REFERENCE)
 * on random inputs. Every case is merged by the reference and by the fast merge in each of its
 * three ways of building the non-preferred candidates (automatic, dense, sparse); all must give
 * the same hint and the same admission. Each case is also merged by the reference again after
 * shuffling providers, resources and hints, which checks the claim the fast merge rests on:
 * kubelet's result does not depend on the order of the lists or hints.
 *
 * Inputs: 1-8 NUMA nodes (ids 0..n-1 or scattered over 0..63, in ascending or shuffled order),
 * distances with many ties, every policy, prefer-closest-numa-nodes on and off, 0-4 providers
 * (null, empty, several resources each), nil and empty lists, "any" hints, duplicated and
 * unsorted hints, empty masks, masks reaching outside the machine's nodes, and hint lists
 * shaped like the CPU manager's (every mask that fits, preferred when minimal). The cross
 * product is capped so that the reference stays fast.
 *
 * Deterministic: fixed seeds. NCM_TM_DIFF_ITERATIONS raises the number of random cases (default
 * 3000); NCM_TM_DIFF_SEED changes the first seed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topologymanager.h>
#include "testutil.h"
#include "topologymanager/tm-internal.h"

#define MAX_PROVIDERS 4
#define MAX_RESOURCES 3
#define MAX_HINTS 40
#define PRODUCT_CAP 20000

typedef struct rng {
        uint64_t s;
} rng;

static uint64_t next(rng *r)
{
        /* splitmix64 */
        uint64_t z = (r->s += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static unsigned below(rng *r, unsigned n)
{
        return (unsigned)(next(r) % n);
}

static bool chance(rng *r, unsigned percent)
{
        return below(r, 100) < percent;
}

typedef struct machine {
        int ids[8];
        size_t n;
        uint64_t dist[64];
        ncm_bitmask all;
} machine;

static void random_machine(rng *r, machine *m)
{
        static const uint64_t tie_values[] = {10, 11, 12, 20, 21, 30};
        m->n = 1 + below(r, 8);
        m->all = 0;
        if (chance(r, 70)) {
                for (size_t i = 0; i < m->n; i++)
                        m->ids[i] = (int)i;
        } else {
                for (size_t i = 0; i < m->n;) {
                        int id = (int)below(r, 64);
                        if (m->all & (UINT64_C(1) << id))
                                continue;
                        m->all |= UINT64_C(1) << id;
                        m->ids[i++] = id;
                }
                if (chance(r, 50)) { /* ascending, as cadvisor lists them */
                        for (size_t i = 0; i < m->n; i++)
                                for (size_t j = i + 1; j < m->n; j++)
                                        if (m->ids[j] < m->ids[i]) {
                                                int t = m->ids[i];
                                                m->ids[i] = m->ids[j];
                                                m->ids[j] = t;
                                        }
                }
        }
        m->all = 0;
        for (size_t i = 0; i < m->n; i++)
                m->all |= UINT64_C(1) << m->ids[i];
        for (size_t i = 0; i < m->n; i++) {
                for (size_t j = 0; j < m->n; j++) {
                        uint64_t v;
                        if (chance(r, 85))
                                v = tie_values[below(r, NCM_ELEMENTSOF(tie_values))];
                        else
                                v = next(r) >> below(r, 64);
                        m->dist[i * m->n + j] = i == j && chance(r, 80) ? 10 : v;
                        if (j < i && chance(r, 70)) /* mostly symmetric */
                                m->dist[i * m->n + j] = m->dist[j * m->n + i];
                }
        }
}

/* A random mask: mostly inside the machine, sometimes with foreign bits, rarely empty. */
static ncm_bitmask random_mask(rng *r, const machine *m)
{
        ncm_bitmask x = 0;
        if (chance(r, 3))
                return 0; /* a non-nil empty mask: kubelet's NewBitMask() */
        if (chance(r, 8))
                return (UINT64_C(1) << below(r, 64)) | (chance(r, 50) ? m->all : 0);
        while (x == 0)
                for (size_t i = 0; i < m->n; i++)
                        if (chance(r, 35))
                                x |= UINT64_C(1) << m->ids[i];
        return x;
}

/* Hints shaped like kubelet's CPU/device hints: masks that "fit", preferred when minimal. */
static size_t structured_hints(rng *r, const machine *m, ncm_hint *out)
{
        int need = 1 + (int)below(r, (unsigned)m->n);
        int cap = (int)m->n;
        size_t k = 0;
        ncm_bitmask_iter it;
        ncm_bitmask x;
        int min = cap + 1;

        if (ncm_bitmask_iter_init(&it, m->ids, (int)m->n, NULL) < 0)
                fail_msg("iter");
        while (ncm_bitmask_iter_next(&it, &x) && k < MAX_HINTS) {
                int c = ncm_bitmask_count(x);
                /* "capacity": each node holds one unit, plus a random shortfall */
                if (c < need || chance(r, 30))
                        continue;
                if (c < min)
                        min = c;
                out[k++] = (ncm_hint){.numa = x, .preferred = false};
        }
        for (size_t i = 0; i < k; i++)
                out[i].preferred = ncm_bitmask_count(out[i].numa) == min;
        return k;
}

static size_t random_hints(rng *r, const machine *m, ncm_hint *out, size_t max)
{
        size_t n = 1 + below(r, (unsigned)max);
        for (size_t i = 0; i < n; i++) {
                if (i > 0 && chance(r, 10)) {
                        out[i] = out[below(r, (unsigned)i)]; /* duplicate */
                        continue;
                }
                out[i].any = chance(r, 12);
                out[i].numa = out[i].any ? 0 : random_mask(r, m);
                out[i].preferred = chance(r, 45);
        }
        return n;
}

typedef struct scenario {
        machine m;
        const char *policy;
        bool closest;
        ncm_tm_hints prov[MAX_PROVIDERS];
        size_t n_prov;
} scenario;

static void scenario_done(scenario *s)
{
        for (size_t i = 0; i < s->n_prov; i++)
                ncm_tm_hints_done(&s->prov[i]);
        s->n_prov = 0;
}

static void random_scenario(rng *r, scenario *s)
{
        static const char *const policies[] = {"best-effort", "restricted", "single-numa-node"};
        static const char *const names[] = {"cpu",           "memory", "example.com/gpu",
                                            "hugepages-1Gi", "a",      "zz"};
        double product = 1;

        memset(s, 0, sizeof(*s));
        random_machine(r, &s->m);
        s->policy = policies[below(r, 3)];
        s->closest = chance(r, 50);
        s->n_prov = below(r, MAX_PROVIDERS + 1);
        for (size_t p = 0; p < s->n_prov; p++) {
                size_t nres;
                if (chance(r, 12))
                        continue; /* no preference at all */
                nres = 1 + below(r, MAX_RESOURCES);
                for (size_t k = 0; k < nres; k++) {
                        ncm_hint hints[MAX_HINTS];
                        const char *name = names[below(r, NCM_ELEMENTSOF(names))];
                        size_t n;
                        bool nil = false;
                        unsigned kind = below(r, 100);
                        if (ncm_tm_hints_get(&s->prov[p], name))
                                continue;
                        if (kind < 8) {
                                nil = true;
                                n = 0;
                        } else if (kind < 14) {
                                n = 0; /* cannot be satisfied */
                        } else if (kind < 45) {
                                n = structured_hints(r, &s->m, hints);
                        } else {
                                n = random_hints(r, &s->m, hints, 12);
                        }
                        if (product * (double)(n ? n : 1) > PRODUCT_CAP)
                                n = n > 2 ? 2 : n;
                        product *= (double)(n ? n : 1);
                        if (ncm_tm_hints_add(&s->prov[p], name, hints, n, nil, NULL, NULL) < 0)
                                fail_msg("hints_add");
                }
        }
}

/* The same scenario with providers, resources (names too) and hints shuffled. */
static void shuffled_copy(rng *r, const scenario *s, scenario *out)
{
        size_t perm[MAX_PROVIDERS];
        *out = *s;
        for (size_t i = 0; i < s->n_prov; i++)
                perm[i] = i;
        for (size_t i = s->n_prov; i > 1; i--) {
                size_t j = below(r, (unsigned)i), t = perm[i - 1];
                perm[i - 1] = perm[j];
                perm[j] = t;
        }
        for (size_t i = 0; i < s->n_prov; i++) {
                const ncm_tm_hints *src = &s->prov[perm[i]];
                ncm_tm_hints *dst = &out->prov[i];
                *dst = (ncm_tm_hints)NCM_TM_HINTS_INIT;
                for (size_t k = 0; k < src->n; k++) {
                        const ncm_tm_resource_hints *e = &src->res[src->n - 1 - k];
                        ncm_hint hints[MAX_HINTS];
                        size_t n = e->list.n;
                        if (n)
                                memcpy(hints, e->list.hints, n * sizeof(ncm_hint));
                        for (size_t a = n; a > 1; a--) {
                                size_t b = below(r, (unsigned)a);
                                ncm_hint t = hints[a - 1];
                                hints[a - 1] = hints[b];
                                hints[b] = t;
                        }
                        /* Renaming changes the sorted order of a provider's resources. */
                        char name[64];
                        snprintf(name, sizeof(name), "%c-%s", 'a' + (int)below(r, 26), e->resource);
                        if (ncm_tm_hints_get(dst, name))
                                snprintf(name, sizeof(name), "%s-%zu", e->resource, k);
                        if (ncm_tm_hints_add(dst, name, hints, n, e->list.nil, NULL, NULL) < 0)
                                fail_msg("hints_add");
                }
        }
}

static ncm_tm_policy *make_policy(const scenario *s)
{
        ncm_tm_options o = {s->closest, 8};
        ncm_error err = NCM_ERROR_INIT;
        ncm_tm_policy *p = NULL;
        if (ncm_tm_policy_new(s->policy, &o, s->m.ids, s->m.n, s->m.dist, &p, &err) < 0)
                fail_msg("%s", err.msg);
        return p;
}

static bool same(ncm_hint a, ncm_hint b)
{
        return a.any == b.any && a.preferred == b.preferred && (a.any || a.numa == b.numa);
}

static void describe(const scenario *s)
{
        fprintf(stderr, "policy %s closest %d nodes", s->policy, s->closest);
        for (size_t i = 0; i < s->m.n; i++)
                fprintf(stderr, " %d", s->m.ids[i]);
        fprintf(stderr, "\n");
        for (size_t p = 0; p < s->n_prov; p++) {
                fprintf(stderr, " provider %zu:%s\n", p, s->prov[p].n ? "" : " none");
                for (size_t k = 0; k < s->prov[p].n; k++) {
                        const ncm_tm_resource_hints *e = &s->prov[p].res[k];
                        fprintf(stderr, "  %s%s:", e->resource, e->list.nil ? " nil" : "");
                        for (size_t h = 0; h < e->list.n; h++)
                                fprintf(stderr, " %s%llx%s", e->list.hints[h].any ? "any" : "",
                                        (unsigned long long)e->list.hints[h].numa,
                                        e->list.hints[h].preferred ? "P" : "");
                        fprintf(stderr, "\n");
                }
        }
}

typedef struct stats {
        size_t cases, preferred, not_preferred, any, admitted;
} stats;

static void check_scenario(rng *r, const scenario *s, stats *st)
{
        static const ncm__tm_andset_method methods[] = {NCM__TM_ANDSET_AUTO, NCM__TM_ANDSET_DENSE,
                                                        NCM__TM_ANDSET_SPARSE};
        ncm_tm_policy *p = make_policy(s);
        ncm_hint ref, got;
        bool ref_admit, admit;
        scenario sh;

        assert_int_equal(ncm_tm_policy_merge(p, s->prov, s->n_prov, NCM_TM_MERGE_REFERENCE, &ref,
                                             &ref_admit, NULL),
                         0);
        for (size_t k = 0; k < NCM_ELEMENTSOF(methods); k++) {
                ncm__tm_policy_set_andset(p, methods[k]);
                assert_int_equal(ncm_tm_policy_merge(p, s->prov, s->n_prov, NCM_TM_MERGE_FAST, &got,
                                                     &admit, NULL),
                                 0);
                if (!same(got, ref) || admit != ref_admit) {
                        describe(s);
                        fail_msg("fast (andset %d): {%d %llx %d} admit %d; reference {%d %llx %d} "
                                 "admit %d",
                                 (int)methods[k], got.any, (unsigned long long)got.numa,
                                 got.preferred, admit, ref.any, (unsigned long long)ref.numa,
                                 ref.preferred, ref_admit);
                }
        }
        shuffled_copy(r, s, &sh);
        assert_int_equal(ncm_tm_policy_merge(p, sh.prov, sh.n_prov, NCM_TM_MERGE_REFERENCE, &got,
                                             &admit, NULL),
                         0);
        if (!same(got, ref)) {
                describe(s);
                fail_msg("reference depends on order: {%d %llx %d} vs {%d %llx %d}", got.any,
                         (unsigned long long)got.numa, got.preferred, ref.any,
                         (unsigned long long)ref.numa, ref.preferred);
        }
        scenario_done(&sh);
        ncm_tm_policy_free(p);

        st->cases++;
        st->admitted += ref_admit;
        if (ref.any)
                st->any++;
        else if (ref.preferred)
                st->preferred++;
        else
                st->not_preferred++;
}

static size_t env_size(const char *name, size_t def)
{
        const char *v = getenv(name);
        return v && *v ? (size_t)strtoull(v, NULL, 0) : def;
}

static void test_tm_merge_diff_random(void **state)
{
        size_t iters = env_size("NCM_TM_DIFF_ITERATIONS", 3000);
        rng r = {env_size("NCM_TM_DIFF_SEED", 20260722)};
        stats st = {0};
        (void)state;
        for (size_t i = 0; i < iters; i++) {
                scenario s;
                random_scenario(&r, &s);
                check_scenario(&r, &s, &st);
                scenario_done(&s);
        }
        printf("# %zu cases: %zu preferred, %zu not preferred, %zu any; %zu admitted\n", st.cases,
               st.preferred, st.not_preferred, st.any, st.admitted);
        /* The generator must reach every kind of outcome. */
        assert_true(st.preferred > iters / 10);
        assert_true(st.not_preferred > iters / 10);
        assert_true(st.any > 0);
}

/*
 * No preferred mask in common: the non-preferred path decides, where kubelet's compare() is
 * at its most intricate. Three providers whose preferred hints are disjoint singletons.
 */
static void test_tm_merge_diff_non_preferred(void **state)
{
        size_t iters = env_size("NCM_TM_DIFF_ITERATIONS", 3000) / 3;
        rng r = {env_size("NCM_TM_DIFF_SEED", 20260722) + 1};
        stats st = {0};
        (void)state;
        for (size_t i = 0; i < iters; i++) {
                scenario s;
                memset(&s, 0, sizeof(s));
                random_machine(&r, &s.m);
                s.policy = chance(&r, 50) ? "best-effort" : "restricted";
                s.closest = chance(&r, 50);
                s.n_prov = 2 + below(&r, 2);
                for (size_t p = 0; p < s.n_prov; p++) {
                        ncm_hint hints[MAX_HINTS];
                        size_t n = random_hints(&r, &s.m, hints, 14);
                        for (size_t h = 0; h < n; h++)
                                hints[h].preferred = false;
                        if (ncm_tm_hints_add(&s.prov[p], "r", hints, n, false, NULL, NULL) < 0)
                                fail_msg("hints_add");
                }
                check_scenario(&r, &s, &st);
                scenario_done(&s);
        }
        assert_true(st.not_preferred > iters / 2);
}

/* Every mask of an n-node machine offered by each provider (the bench's shape), small n. */
static void test_tm_merge_diff_all_masks(void **state)
{
        rng r = {7};
        stats st = {0};
        (void)state;
        for (size_t n = 1; n <= 5; n++) {
                for (int variant = 0; variant < 6; variant++) {
                        scenario s;
                        memset(&s, 0, sizeof(s));
                        s.m.n = n;
                        for (size_t i = 0; i < n; i++)
                                s.m.ids[i] = (int)i;
                        s.m.all = (UINT64_C(1) << n) - 1;
                        for (size_t i = 0; i < n * n; i++)
                                s.m.dist[i] = 10 + below(&r, 3) * 10;
                        s.policy = variant % 3 == 0   ? "best-effort"
                                   : variant % 3 == 1 ? "restricted"
                                                      : "single-numa-node";
                        s.closest = variant >= 3;
                        s.n_prov = 3;
                        for (size_t p = 0; p < 3; p++) {
                                ncm_hint hints[32];
                                size_t k = 0;
                                /* provider p prefers a different count */
                                int want = (int)((1 + p) % (n + 1));
                                for (ncm_bitmask x = 1; x <= s.m.all; x++)
                                        hints[k++] = (ncm_hint){.numa = x,
                                                                .preferred = ncm_bitmask_count(x) ==
                                                                             want};
                                if (ncm_tm_hints_add(&s.prov[p], "r", hints, k, false, NULL, NULL) <
                                    0)
                                        fail_msg("hints_add");
                        }
                        check_scenario(&r, &s, &st);
                        scenario_done(&s);
                }
        }
}

/*
 * Inputs too large for the reference: the dense and sparse ways of the fast merge must agree,
 * including when the tuple count passes 2^64 and the dense product is collapsed on the way.
 */
static void test_tm_merge_dense_sparse_large(void **state)
{
        rng r = {99};
        (void)state;
        for (int iter = 0; iter < 40; iter++) {
                static const int ids[] = {0, 1, 2, 3, 4, 5, 6, 7};
                ncm_tm_hints prov[24];
                size_t nprov = 16 + below(&r, 9);
                ncm_tm_options o = {chance(&r, 50), 8};
                uint64_t dist[64];
                ncm_tm_policy *p = NULL;
                ncm_hint a, b, c;
                bool aa, ab, ac;
                machine m;

                m.n = 8;
                memcpy(m.ids, ids, sizeof(ids));
                m.all = 0xff;
                for (size_t i = 0; i < 64; i++)
                        dist[i] = 10 + below(&r, 4);
                assert_int_equal(ncm_tm_policy_new(chance(&r, 50) ? "best-effort" : "restricted",
                                                   &o, ids, 8, dist, &p, NULL),
                                 0);
                for (size_t i = 0; i < nprov; i++) {
                        ncm_hint hints[MAX_HINTS];
                        size_t n = 12 + below(&r, 20);
                        prov[i] = (ncm_tm_hints)NCM_TM_HINTS_INIT;
                        for (size_t h = 0; h < n; h++) {
                                hints[h].any = false;
                                /* wide masks so that the ANDs stay non-empty for a while */
                                hints[h].numa = 0xff & ~(UINT64_C(1) << below(&r, 8)) &
                                                ~(UINT64_C(1) << below(&r, 8));
                                hints[h].preferred = chance(&r, 10);
                        }
                        assert_int_equal(ncm_tm_hints_add(&prov[i], "r", hints, n, false, NULL,
                                                          NULL),
                                         0);
                }
                ncm__tm_policy_set_andset(p, NCM__TM_ANDSET_DENSE);
                assert_int_equal(ncm_tm_policy_merge(p, prov, nprov, NCM_TM_MERGE_FAST, &a, &aa,
                                                     NULL),
                                 0);
                ncm__tm_policy_set_andset(p, NCM__TM_ANDSET_SPARSE);
                assert_int_equal(ncm_tm_policy_merge(p, prov, nprov, NCM_TM_MERGE_FAST, &b, &ab,
                                                     NULL),
                                 0);
                ncm__tm_policy_set_andset(p, NCM__TM_ANDSET_AUTO);
                assert_int_equal(ncm_tm_policy_merge(p, prov, nprov, NCM_TM_MERGE_FAST, &c, &ac,
                                                     NULL),
                                 0);
                assert_true(same(a, b) && same(a, c));
                assert_true(aa == ab && aa == ac);
                for (size_t i = 0; i < nprov; i++)
                        ncm_tm_hints_done(&prov[i]);
                ncm_tm_policy_free(p);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_tm_merge_diff_random),
                        cmocka_unit_test(test_tm_merge_diff_non_preferred),
                        cmocka_unit_test(test_tm_merge_diff_all_masks),
                        cmocka_unit_test(test_tm_merge_dense_sparse_large),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
