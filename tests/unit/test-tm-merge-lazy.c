/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Differential tests of the lazy merge (NCM_TM_MERGE_LAZY, tm-merge-lazy.c): on random
 * machines of 1 to 12 NUMA nodes with described hint lists shaped like the CPU and device
 * managers' (tests/unit/tm-lazy-gen.h), mixed with explicit, nil and empty lists, under every
 * policy, with and without prefer-closest-numa-nodes, the lazy merge must give the hint and
 * admission of kubelet's cross product (NCM_TM_MERGE_REFERENCE on the listed descriptions)
 * wherever that walk is affordable, and of the fast merge (itself checked against the
 * reference by test-tm-merge-diff.c) everywhere else. Then larger machines against the fast
 * merge, 64-node machines against properties, and admission through the scopes.
 *
 * Deterministic: fixed seeds. NCM_TM_LAZY_ITERATIONS scales the number of random cases
 * (default 4000), NCM_TM_LAZY_SEED changes the seed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topologymanager.h>
#include "testutil.h"
#include "tm-lazy-gen.h"
#include "topologymanager/tm-internal.h"

/* Above this many permutations the reference is replaced by the fast merge. */
#define REFERENCE_CAP 60000

static size_t env_size(const char *name, size_t def)
{
        const char *v = getenv(name);
        return v && *v ? (size_t)strtoull(v, NULL, 0) : def;
}

static bool same(ncm_hint a, ncm_hint b)
{
        return a.any == b.any && a.preferred == b.preferred && (a.any || a.numa == b.numa);
}

static ncm_tm_policy *make_policy(const lg_scenario *s)
{
        ncm_tm_options o = {s->closest, 64};
        ncm_error err = NCM_ERROR_INIT;
        ncm_tm_policy *p = NULL;
        if (ncm_tm_policy_new(s->policy, &o, s->m.ids, s->m.n, s->m.dist, &p, &err) < 0)
                fail_msg("%s", err.msg);
        return p;
}

typedef struct stats {
        size_t cases, by_reference, preferred, not_preferred, any, admitted, described;
} stats;

static void check(const lg_scenario *s, stats *st)
{
        ncm_tm_policy *p = make_policy(s);
        ncm_hint want, got;
        bool want_admit, admit, reference = lg_permutations(s) <= REFERENCE_CAP;
        ncm_error err = NCM_ERROR_INIT;

        if (ncm_tm_policy_merge(p, s->prov, s->n_prov,
                                reference ? NCM_TM_MERGE_REFERENCE : NCM_TM_MERGE_FAST, &want,
                                &want_admit, &err) < 0)
                fail_msg("reference: %s", err.msg);
        if (ncm_tm_policy_merge(p, s->prov, s->n_prov, NCM_TM_MERGE_LAZY, &got, &admit, &err) < 0)
                fail_msg("lazy: %s", err.msg);
        if (!same(got, want) || admit != want_admit) {
                lg_scenario_print(s, stderr);
                fail_msg("lazy {%d %llx %d} admit %d; %s {%d %llx %d} admit %d", got.any,
                         (unsigned long long)got.numa, got.preferred, admit,
                         reference ? "reference" : "fast", want.any, (unsigned long long)want.numa,
                         want.preferred, want_admit);
        }
        ncm_tm_policy_free(p);
        st->cases++;
        st->by_reference += reference;
        st->admitted += want_admit;
        if (want.any)
                st->any++;
        else if (want.preferred)
                st->preferred++;
        else
                st->not_preferred++;
        for (size_t i = 0; i < s->n_prov; i++)
                for (size_t k = 0; k < s->prov[i].n; k++)
                        st->described += s->prov[i].res[k].desc != NULL;
}

static void run_random(size_t iters, uint64_t seed, size_t min_nodes, size_t max_nodes,
                       unsigned explicit_percent, stats *st)
{
        lg_rng r = {.s = seed};
        for (size_t i = 0; i < iters; i++) {
                lg_scenario s;
                if (lg_scenario_random(&r, &s, min_nodes, max_nodes, explicit_percent) < 0)
                        fail_msg("scenario");
                check(&s, st);
                lg_scenario_done(&s);
        }
        printf("# %zu cases (%zu against the reference, %zu described lists): %zu preferred, "
               "%zu not preferred, %zu any; %zu admitted\n",
               st->cases, st->by_reference, st->described, st->preferred, st->not_preferred,
               st->any, st->admitted);
}

/* Described lists only: what the node gives the topology manager. */
static void test_tm_lazy_described(void **state)
{
        size_t iters = env_size("NCM_TM_LAZY_ITERATIONS", 4000);
        stats st = {0};
        (void)state;
        run_random(iters, env_size("NCM_TM_LAZY_SEED", 20261122), 1, 12, 0, &st);
        assert_true(st.preferred > iters / 20);
        assert_true(st.not_preferred > iters / 10);
        assert_true(st.by_reference > iters / 2);
}

/* Described lists mixed with explicit ones (nodecm merge's lists, other providers). */
static void test_tm_lazy_mixed(void **state)
{
        size_t iters = env_size("NCM_TM_LAZY_ITERATIONS", 4000) / 2;
        stats st = {0};
        (void)state;
        run_random(iters, env_size("NCM_TM_LAZY_SEED", 20261122) + 1, 1, 12, 40, &st);
        assert_true(st.preferred > iters / 20);
        assert_true(st.not_preferred > iters / 20);
}

/* Small machines, many cases: every corner of compare() shows up often. */
static void test_tm_lazy_small(void **state)
{
        size_t iters = env_size("NCM_TM_LAZY_ITERATIONS", 4000);
        stats st = {0};
        (void)state;
        run_random(iters, env_size("NCM_TM_LAZY_SEED", 20261122) + 2, 1, 4, 15, &st);
        assert_true(st.by_reference > iters * 9 / 10);
}

/* 13-16 nodes: only the fast merge (on lists of up to 2^16 hints) can check these. */
static void test_tm_lazy_large(void **state)
{
        size_t iters = env_size("NCM_TM_LAZY_ITERATIONS", 4000) / 100;
        stats st = {0};
        (void)state;
        run_random(iters, env_size("NCM_TM_LAZY_SEED", 20261122) + 3, 13, 16, 0, &st);
}

/*
 * 64 NUMA nodes, ids 0..63, a CPU-shaped description (16 CPUs per node, some taken): every
 * policy answers at once; the answer is checked against what it must be (the lowest node with
 * enough free CPUs, preferred; or the narrowest lowest mask when no node has enough).
 */
static void test_tm_lazy_64_nodes(void **state)
{
        int ids[64];
        uint64_t *dist = calloc(64 * 64, sizeof(*dist));
        lg_rng r = {.s = 64};
        (void)state;
        assert_non_null(dist);
        for (int i = 0; i < 64; i++)
                ids[i] = i;
        for (int i = 0; i < 64; i++)
                for (int j = 0; j < 64; j++)
                        dist[i * 64 + j] = i == j ? 10 : (i / 32 == j / 32 ? 12 : 32);
        for (int iter = 0; iter < 40; iter++) {
                ncm_tm_options o = {iter % 2 == 1, 64};
                ncm_tm_policy *p = NULL;
                ncm_hint_desc *d = NULL;
                ncm_tm_hints prov = NCM_TM_HINTS_INIT;
                int64_t avail[64];
                int req = 1 + (int)lg_below(&r, 40), first = -1;
                ncm_hint got;
                bool admit;

                assert_int_equal(ncm_tm_policy_new(iter % 3 == 0 ? "best-effort" : "restricted", &o,
                                                   ids, 64, dist, &p, NULL),
                                 0);
                assert_int_equal(ncm_hint_desc_new(ids, 64, req, &d, NULL), 0);
                for (int i = 0; i < 64; i++) {
                        avail[i] = lg_below(&r, 17);
                        assert_int_equal(ncm_hint_desc_add_capacity(d, UINT64_C(1) << i, 16), 0);
                        assert_int_equal(ncm_hint_desc_add_available(d, UINT64_C(1) << i, avail[i]),
                                         0);
                        if (first < 0 && avail[i] >= req)
                                first = i;
                }
                assert_int_equal(ncm_hint_desc_seal(d, NULL), 0);
                assert_int_equal(ncm_tm_hints_add_desc(&prov, "cpu", d, NULL), 0);
                assert_int_equal(ncm_tm_policy_merge(p, &prov, 1, NCM_TM_MERGE_LAZY, &got, &admit,
                                                     NULL),
                                 0);
                if (req <= 16 && first >= 0) {
                        /* one node is preferred; Closest among equal singletons: lowest */
                        assert_true(got.preferred && admit);
                        assert_int_equal(got.numa, UINT64_C(1) << first);
                } else {
                        bool pref;
                        assert_true(ncm_hint_desc_contains(d, got.numa, &pref));
                        assert_int_equal(ncm_bitmask_count(got.numa), ncm_hint_desc_narrowest(d));
                        assert_int_equal(got.preferred, pref);
                }
                ncm_tm_hints_done(&prov);
                ncm_tm_policy_free(p);
        }
        free(dist);
}

/* A description reaching outside the topology manager's nodes is refused, not misread. */
static void test_tm_lazy_outside_nodes(void **state)
{
        static const int tm_ids[] = {0, 1}, d_ids[] = {0, 1, 2};
        ncm_tm_policy *p = NULL;
        ncm_hint_desc *d = NULL;
        ncm_tm_hints prov = NCM_TM_HINTS_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint got;
        bool admit;
        (void)state;

        assert_int_equal(ncm_tm_policy_new("restricted", NULL, tm_ids, 2, NULL, &p, NULL), 0);
        assert_int_equal(ncm_hint_desc_new(d_ids, 3, 1, &d, NULL), 0);
        assert_int_equal(ncm_hint_desc_add_available(d, 4, 1), 0);
        assert_int_equal(ncm_hint_desc_seal(d, NULL), 0);
        assert_int_equal(ncm_tm_hints_add_desc(&prov, "cpu", d, NULL), 0);
        assert_int_equal(ncm_tm_policy_merge(p, &prov, 1, NCM_TM_MERGE_LAZY, &got, &admit, &err),
                         -EDOM);
        assert_non_null(strstr(err.msg, "outside"));
        /* the listing merges see the listed hints: {0,1,2} is preferred (no capacity: the
         * preferred size is all three nodes) and merges to {0,1} */
        assert_int_equal(ncm_tm_policy_merge(p, &prov, 1, NCM_TM_MERGE_FAST, &got, &admit, NULL),
                         0);
        assert_true(got.preferred && admit && got.numa == 3);
        ncm_tm_hints_done(&prov);
        ncm_tm_policy_free(p);
}

/* ---- the trace: described lists report the listed merge's candidates ---- */

typedef struct trace_rec {
        ncm_bitmask cand[512];
        size_t n_cand;
        bool more;
        size_t lists, described;
        ncm_hint merged;
} trace_rec;

static void record(void *data, const ncm_tm_trace_event *ev)
{
        trace_rec *t = data;
        switch (ev->kind) {
        case NCM_TM_TRACE_CANDIDATE:
                if (t->n_cand < 512)
                        t->cand[t->n_cand++] = ev->hint.numa;
                t->more = t->more || ev->more;
                break;
        case NCM_TM_TRACE_LIST:
                t->lists++;
                t->described += ev->list_desc != NULL;
                if (ev->list_desc)
                        assert_null(ev->list_hints);
                break;
        case NCM_TM_TRACE_MERGED:
                t->merged = ev->hint;
                break;
        default:
                break;
        }
}

static void test_tm_lazy_trace_candidates(void **state)
{
        lg_rng r = {.s = 77};
        size_t checked = 0, truncated = 0;
        (void)state;
        for (int iter = 0; iter < 3000; iter++) {
                lg_scenario s;
                ncm_tm_policy *p;
                trace_rec lazy = {0}, fast = {0};
                ncm_tm_trace tl = {record, &lazy}, tf = {record, &fast};
                ncm_hint h;
                bool admit;

                if (lg_scenario_random(&r, &s, 1, 8, iter % 2 ? 30 : 0) < 0)
                        fail_msg("scenario");
                p = make_policy(&s);
                assert_int_equal(ncm__tm_policy_merge_traced(p, s.prov, s.n_prov, NCM_TM_MERGE_LAZY,
                                                             &tl, NULL, &h, &admit, NULL),
                                 0);
                assert_int_equal(ncm__tm_policy_merge_traced(p, s.prov, s.n_prov, NCM_TM_MERGE_FAST,
                                                             &tf, NULL, &h, &admit, NULL),
                                 0);
                assert_true(same(lazy.merged, fast.merged));
                assert_int_equal(lazy.lists, fast.lists);
                if (fast.n_cand <= NCM_TM_TRACE_CANDIDATES_MAX) {
                        assert_false(lazy.more);
                        assert_int_equal(lazy.n_cand, fast.n_cand);
                } else {
                        assert_true(lazy.more);
                        assert_int_equal(lazy.n_cand, NCM_TM_TRACE_CANDIDATES_MAX);
                        truncated++;
                }
                for (size_t c = 0; c < lazy.n_cand; c++)
                        assert_int_equal(lazy.cand[c], fast.cand[c]);
                checked += lazy.described > 0;
                ncm_tm_policy_free(p);
                lg_scenario_done(&s);
        }
        printf("# %zu merges with described lists traced, %zu truncated\n", checked, truncated);
        assert_true(checked > 1000);
}

/* ---- admission through the scopes: descriptions and lists give the same results ---- */

typedef struct fake_provider {
        lg_rng r;
        const lg_machine *m;
        bool describe;
        uint64_t seed;
        int calls;
} fake_provider;

/* The same random description for the Nth call, whether described or listed. */
static int fake_hints(fake_provider *f, ncm_tm_hints *ret, ncm_error *err)
{
        lg_rng r = {.s = f->seed + (uint64_t)f->calls++};
        ncm_hint_desc *d = lg_desc_random(&r, f->m);
        if (!d)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (f->describe)
                return ncm_tm_hints_add_desc(ret, "cpu", d, err);
        {
                ncm_hint_list *l;
                int k = ncm_tm_hints_add(ret, "cpu", NULL, 0, false, &l, err);
                if (k >= 0)
                        k = ncm_hint_desc_materialize(d, 1 << 20, l, err);
                ncm_hint_desc_free(d);
                return k;
        }
}

static int fake_call_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret, ncm_error *err)
{
        (void)call;
        return fake_hints(data, ret, err);
}

static const ncm_tm_provider_ops fake_ops = {
                .name = "fake",
                .get_container_hints = fake_call_hints,
                .get_pod_hints = fake_call_hints,
};

static void test_tm_lazy_scopes(void **state)
{
        static const char *const scopes[] = {"container", "pod"};
        static const char *const policies[] = {"best-effort", "restricted", "single-numa-node"};
        ncm_container cs[3];
        ncm_pod pod;
        lg_rng r = {.s = 5};
        (void)state;

        memset(cs, 0, sizeof(cs));
        memset(&pod, 0, sizeof(pod));
        cs[0].name = (char *)"init";
        cs[1].name = (char *)"a";
        cs[2].name = (char *)"b";
        pod.uid = (char *)"uid";
        pod.init_containers = &cs[0];
        pod.n_init_containers = 1;
        pod.containers = &cs[1];
        pod.n_containers = 2;
        for (int iter = 0; iter < 300; iter++) {
                lg_machine m;
                ncm_tm *tm[2] = {NULL, NULL};
                fake_provider fp[2][2];
                ncm_tm_admit_result res[2];
                lg_machine_random(&r, &m, 1, 8);
                for (int v = 0; v < 2; v++) {
                        ncm_tm_config cfg = {
                                        .policy = policies[iter % 3],
                                        .scope = scopes[(iter / 3) % 2],
                                        .gates = NCM_TM_GATES_DEFAULT,
                                        .numa_ids = m.ids,
                                        .n_numa = m.n,
                                        .distances = m.dist,
                                        .merge_mode = v ? NCM_TM_MERGE_LAZY : NCM_TM_MERGE_FAST,
                        };
                        ncm_tm_option opt = {"prefer-closest-numa-nodes", "true"};
                        if (iter % 5 == 0) {
                                cfg.options = &opt;
                                cfg.n_options = 1;
                        }
                        assert_int_equal(ncm_tm_new(&cfg, &tm[v], NULL), 0);
                        for (int k = 0; k < 2; k++) {
                                fp[v][k] = (fake_provider){.m = &m,
                                                           .describe = v == 1,
                                                           .seed = (uint64_t)iter * 100 +
                                                                   (uint64_t)k * 10};
                                assert_int_equal(ncm_tm_add_provider(tm[v], &fake_ops, &fp[v][k]),
                                                 0);
                        }
                        assert_int_equal(ncm_tm_admit(tm[v], &pod, NULL, &res[v], NULL), 0);
                }
                assert_int_equal(res[0].admit, res[1].admit);
                assert_string_equal(res[0].reason, res[1].reason);
                for (int c = 0; c < 3; c++) {
                        ncm_hint a = ncm_tm_get_affinity(tm[0], "uid", cs[c].name);
                        ncm_hint b = ncm_tm_get_affinity(tm[1], "uid", cs[c].name);
                        assert_true(same(a, b));
                }
                ncm_tm_free(tm[0]);
                ncm_tm_free(tm[1]);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_tm_lazy_described),
                        cmocka_unit_test(test_tm_lazy_mixed),
                        cmocka_unit_test(test_tm_lazy_small),
                        cmocka_unit_test(test_tm_lazy_large),
                        cmocka_unit_test(test_tm_lazy_64_nodes),
                        cmocka_unit_test(test_tm_lazy_outside_nodes),
                        cmocka_unit_test(test_tm_lazy_trace_candidates),
                        cmocka_unit_test(test_tm_lazy_scopes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
