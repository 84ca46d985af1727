/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The topology manager's building blocks, with kubelet's test tables ported as data:
 * bitmask_test.go (against include/nodecm/bitmask.h), policy_options_test.go,
 * numa_info_test.go, policy_test.go (maxOfMinAffinityCounts, compare, and the merge tables,
 * kept in tests/data/merge/kubelet-policy-cases.json), policy_{none,best_effort,restricted,
 * single_numa_node}_test.go, and the construction errors of topology_manager_test.go.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topologymanager.h>
#include "base/json.h"
#include "testutil.h"
#include "topologymanager/tm-internal.h"
#include "topologymanager/tm-request.h"

#define END (-100) /* terminates bit lists in the tables */

static ncm_bitmask bm(const int *bits)
{
        ncm_bitmask m = 0;
        for (; *bits != END; bits++)
                m |= UINT64_C(1) << *bits;
        return m;
}

#define BM(...) bm((const int[]){__VA_ARGS__, END})
#define BM0 ((ncm_bitmask)0)

static const char *fmt(ncm_bitmask m, char buf[66])
{
        ncm_bitmask_format(m, buf);
        return buf;
}

static ncm_hint hint(ncm_bitmask m, bool preferred)
{
        return (ncm_hint){.numa = m, .any = false, .preferred = preferred};
}

static ncm_hint any_hint(bool preferred)
{
        return (ncm_hint){.any = true, .preferred = preferred};
}

/* ---------------------------------------------------------------- bitmask_test.go */

static void test_tm_bitmask_new_and_string(void **state)
{
        static const struct {
                int bits[3];
                int n;
                const char *expect;
        } t[] = {
                        {{0}, 0, "00"}, /* TestNewEmptyBitMask */
                        {{0}, 1, "01"}, /* TestNewBitMask */
                        {{1}, 1, "10"},
                        {{0, 1}, 2, "11"},
        };
        char buf[66];
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm_bitmask m = 99;
                assert_int_equal(ncm_bitmask_from_bits(t[i].bits, (size_t)t[i].n, &m, NULL), 0);
                assert_string_equal(fmt(m, buf), t[i].expect);
        }
        /* String(): width depends on the value (kubelet scans shift 62, 60, ..., 2). */
        assert_string_equal(fmt(4, buf), "100");
        assert_string_equal(fmt(5, buf), "0101");
        assert_string_equal(fmt(UINT64_MAX, buf),
                            "1111111111111111111111111111111111111111111111111111111111111111");
}

static void test_tm_bitmask_add_out_of_range(void **state)
{
        /* TestAdd: bits outside 0-63 are refused and leave the mask alone. */
        static const int bad[] = {-1, 64};
        ncm_error err = NCM_ERROR_INIT;
        ncm_bitmask m = 0;
        char buf[66];
        (void)state;
        assert_int_equal(ncm_bitmask_from_bits(bad, 2, &m, &err), -EINVAL);
        assert_string_equal(err.msg, "bit number must be in range 0-63");
        assert_string_equal(fmt(m, buf), "00");
}

static void test_tm_bitmask_remove_and_or_clear_fill(void **state)
{
        char buf[66];
        (void)state;
        /* TestRemove */
        assert_string_equal(fmt(BM(0) & ~BM(0), buf), "00");
        assert_string_equal(fmt(BM(0, 1) & ~BM(1), buf), "01");
        assert_string_equal(fmt(BM(0, 1) & ~BM(0, 1), buf), "00");
        /* TestAnd: And(first, masks...) with first repeated. */
        assert_string_equal(fmt(BM(0, 1) & BM(0, 1), buf), "11");
        assert_string_equal(fmt(BM(0, 1) & BM(1), buf), "10");
        assert_string_equal(fmt(BM(0) & BM(0, 1), buf), "01");
        assert_string_equal(fmt(BM(0, 1) & BM(0, 1) & BM(1), buf), "10");
        assert_string_equal(fmt(BM(0) & BM(0) & BM(1) & BM(0, 1), buf), "00");
        assert_string_equal(fmt(BM(0, 1, 2, 3) & BM(1, 2, 3) & BM(2, 3) & BM(3), buf), "1000");
        /* TestOr */
        assert_string_equal(fmt(BM(0) | BM0, buf), "01");
        assert_string_equal(fmt(BM(1) | BM(1), buf), "10");
        assert_string_equal(fmt(BM(0) | BM(1), buf), "11");
        assert_string_equal(fmt(BM(0) | BM(1) | BM(0, 1), buf), "11");
        assert_string_equal(fmt(BM(3) | BM(2) | BM(1) | BM(0), buf), "1111");
        /* TestClear, TestFill */
        assert_string_equal(fmt(BM0, buf), "00");
        assert_string_equal(fmt(~BM0, buf),
                            "1111111111111111111111111111111111111111111111111111111111111111");
}

static void test_tm_bitmask_queries(void **state)
{
        int bits[NCM_BITMASK_MAX_BITS];
        (void)state;
        /* TestIsEmpty */
        assert_true(BM0 == 0);
        assert_false(BM(0) == 0);
        /* TestIsSet */
        assert_false(ncm_bitmask_isset(BM0, 0));
        assert_true(ncm_bitmask_isset(BM(0), 0));
        assert_true(ncm_bitmask_isset(BM(0, 1), 1));
        assert_false(ncm_bitmask_isset(BM(0, 1), 64));
        assert_false(ncm_bitmask_isset(BM(0, 1), -1));
        /* TestAnySet */
        assert_false((BM0 & BM(0, 1)) != 0);
        assert_true((BM(0) & BM(0, 1)) != 0);
        assert_false((BM(1, 2) & BM(0, 3)) != 0);
        /* TestIsEqual */
        assert_true(BM0 == BM0);
        assert_false(BM0 == BM(0));
        assert_false(BM(0) == BM(1));
        /* TestCount */
        assert_int_equal(ncm_bitmask_count(BM0), 0);
        assert_int_equal(ncm_bitmask_count(BM(0)), 1);
        assert_int_equal(ncm_bitmask_count(BM(0, 1)), 2);
        /* TestGetBits */
        assert_int_equal(ncm_bitmask_to_bits(BM0, bits), 0);
        assert_int_equal(ncm_bitmask_to_bits(BM(0, 1), bits), 2);
        assert_int_equal(bits[0], 0);
        assert_int_equal(bits[1], 1);
        assert_int_equal(ncm_bitmask_to_bits(BM(63, 5), bits), 2);
        assert_int_equal(bits[0], 5);
        assert_int_equal(bits[1], 63);
        /* TestIsNarrowerThan */
        assert_true(ncm_bitmask_is_narrower_than(BM(0), BM(0, 1)));
        assert_false(ncm_bitmask_is_narrower_than(BM(0, 1), BM(0)));
        assert_true(ncm_bitmask_is_narrower_than(BM(0), BM(1)));
        assert_false(ncm_bitmask_is_narrower_than(BM(1), BM(0)));
        /* IsLessThan / IsGreaterThan are numeric comparisons of the uint64. */
        assert_true(BM(0) < BM(1));
        assert_true(BM(0, 1) < BM(2));
}

static void test_tm_bitmask_iterate(void **state)
{
        static const int sizes[] = {1, 2, 4, 8, 16};
        (void)state;
        /* TestIterateBitMasks: 2^n - 1 masks, and kubelet's order (size, then position). */
        for (size_t t = 0; t < NCM_ELEMENTSOF(sizes); t++) {
                int bits[16];
                ncm_bitmask_iter it;
                ncm_bitmask m, prev = 0;
                size_t count = 0;
                for (int i = 0; i < sizes[t]; i++)
                        bits[i] = i;
                assert_int_equal(ncm_bitmask_iter_init(&it, bits, sizes[t], NULL), 0);
                while (ncm_bitmask_iter_next(&it, &m)) {
                        if (count > 0)
                                assert_true(ncm_bitmask_count(prev) <= ncm_bitmask_count(m));
                        prev = m;
                        count++;
                }
                assert_int_equal(count, ((size_t)1 << sizes[t]) - 1);
        }
        {
                static const int ids[] = {0, 1, 2};
                static const ncm_bitmask order[] = {1, 2, 4, 3, 5, 6, 7};
                ncm_bitmask_iter it;
                ncm_bitmask m;
                size_t k = 0;
                assert_int_equal(ncm_bitmask_iter_init(&it, ids, 3, NULL), 0);
                while (ncm_bitmask_iter_next(&it, &m))
                        assert_int_equal(m, order[k++]);
                assert_int_equal(k, 7);
        }
}

/* ---------------------------------------------------------------- policy_options_test.go */

static const ncm__tm_option_level fancy[] = {
                {"fancy-new-option", 2},   /* fancyBetaOption */
                {"fancy-alpha-option", 1}, /* fancyAlphaOption */
};

static void test_tm_options_new(void **state)
{
        static const struct {
                const char *description;
                ncm_tm_option opts[2];
                size_t n;
                ncm_tm_gates gates;
                const char *err; /* substring, as kubelet's strings.Contains */
                ncm_tm_options expect;
        } t[] = {
                        {"return TopologyManagerOptions with PreferClosestNUMA set to true",
                         {{"prefer-closest-numa-nodes", "true"}, {"max-allowable-numa-nodes", "8"}},
                         2,
                         {false, true},
                         NULL,
                         {true, 8}},
                        {"return TopologyManagerOptions with MaxAllowableNUMANodes set to 12",
                         {{"max-allowable-numa-nodes", "12"}},
                         1,
                         {false, true},
                         NULL,
                         {false, 12}},
                        /* GA since 1.35: no gate needed any more (the older table expected an
                           error). */
                        {"max-allowable-numa-nodes is stable: no beta gate needed",
                         {{"max-allowable-numa-nodes", "8"}},
                         1,
                         {false, false},
                         NULL,
                         {false, 8}},
                        {"return empty TopologyManagerOptions",
                         {{NULL, NULL}},
                         0,
                         {false, true},
                         NULL,
                         {false, 8}},
                        {"fail to parse options with error PreferClosestNUMANodes",
                         {{"prefer-closest-numa-nodes", "not a boolean"}},
                         1,
                         {true, true},
                         "bad value for option",
                         {false, 8}},
                        {"fail to parse options with error MaxAllowableNUMANodes",
                         {{"max-allowable-numa-nodes", "can't parse to int"}},
                         1,
                         {true, true},
                         "unable to convert policy option to integer",
                         {false, 8}},
                        {"test beta options fail",
                         {{"fancy-new-option", "true"}},
                         1,
                         {false, false},
                         "topology manager policy beta-level options not enabled,",
                         {false, 8}},
                        {"test alpha options fail",
                         {{"fancy-alpha-option", "true"}},
                         1,
                         {false, true},
                         "topology manager policy alpha-level options not enabled,",
                         {false, 8}},
                        /* kubelet's "success" rows for the fake options pass only because its test
                         * does not look at the error: NewPolicyOptions has no case for them. */
                        {"test beta options: available, but kubelet has no parser for it",
                         {{"fancy-new-option", "true"}},
                         1,
                         {false, true},
                         "unsupported topologymanager option: \"fancy-new-option\" (true)",
                         {false, 8}},
                        {"test alpha options: available, but kubelet has no parser for it",
                         {{"fancy-alpha-option", "true"}},
                         1,
                         {true, false},
                         "unsupported topologymanager option: \"fancy-alpha-option\" (true)",
                         {false, 8}},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm_error err = NCM_ERROR_INIT;
                ncm_tm_options o = {true, 99};
                int r = ncm__tm_options_parse_in(t[i].opts, t[i].n, fancy, NCM_ELEMENTSOF(fancy),
                                                 t[i].gates, &o, &err);
                if (t[i].err) {
                        if (r != -EINVAL || !strstr(err.msg, t[i].err))
                                fail_msg("%s: got %d '%s'", t[i].description, r, err.msg);
                        assert_true(o.prefer_closest_numa && o.max_allowable_numa_nodes == 99);
                        continue;
                }
                if (r != 0)
                        fail_msg("%s: %s", t[i].description, err.msg);
                assert_int_equal(o.prefer_closest_numa, t[i].expect.prefer_closest_numa);
                assert_int_equal(o.max_allowable_numa_nodes, t[i].expect.max_allowable_numa_nodes);
        }
}

static void test_tm_options_texts(void **state)
{
        static const struct {
                ncm_tm_option opts[2];
                size_t n;
                const char *msg; /* NULL: accepted */
                ncm_tm_options expect;
        } t[] = {
                        {{{"prefer-closest-numa-nodes", "x"}},
                         1,
                         "bad value for option \"prefer-closest-numa-nodes\": strconv.ParseBool: "
                         "parsing "
                         "\"x\": invalid syntax",
                         {0}},
                        {{{"max-allowable-numa-nodes", "x"}},
                         1,
                         "unable to convert policy option to integer \"max-allowable-numa-nodes\": "
                         "strconv.Atoi: parsing \"x\": invalid syntax",
                         {0}},
                        {{{"max-allowable-numa-nodes", "99999999999999999999"}},
                         1,
                         "unable to convert policy option to integer \"max-allowable-numa-nodes\": "
                         "strconv.Atoi: parsing \"99999999999999999999\": value out of range",
                         {0}},
                        {{{"max-allowable-numa-nodes", "7"}},
                         1,
                         "the minimum value of \"max-allowable-numa-nodes\" should not be less "
                         "than 8",
                         {0}},
                        {{{"max-allowable-numa-nodes", "-8"}},
                         1,
                         "the minimum value of \"max-allowable-numa-nodes\" should not be less "
                         "than 8",
                         {0}},
                        {{{"max-allowable-numa-nodes", " 9"}},
                         1,
                         "unable to convert policy option to integer \"max-allowable-numa-nodes\": "
                         "strconv.Atoi: parsing \" 9\": invalid syntax",
                         {0}},
                        {{{"max-allowable-numa-nodes", "+16"}}, 1, NULL, {false, 16}},
                        {{{"prefer-closest-numa-nodes", "T"}}, 1, NULL, {true, 8}},
                        {{{"prefer-closest-numa-nodes", "1"}}, 1, NULL, {true, 8}},
                        {{{"prefer-closest-numa-nodes", "False"}}, 1, NULL, {false, 8}},
                        {{{"prefer-closest-numa-nodes", "yes"}},
                         1,
                         "bad value for option \"prefer-closest-numa-nodes\": strconv.ParseBool: "
                         "parsing "
                         "\"yes\": invalid syntax",
                         {0}},
                        {{{"unknown-option", "true"}},
                         1,
                         "unknown Topology Manager Policy option: \"unknown-option\"",
                         {0}},
                        /* Several bad keys: the first in byte order is reported (Go: any of them).
                         */
                        {{{"zzz", "1"}, {"max-allowable-numa-nodes", "x"}},
                         2,
                         "unable to convert policy option to integer \"max-allowable-numa-nodes\": "
                         "strconv.Atoi: parsing \"x\": invalid syntax",
                         {0}},
                        {{{"prefer-closest-numa-nodes", "true"},
                          {"prefer-closest-numa-nodes", "false"}},
                         2,
                         "duplicate Topology Manager Policy option: \"prefer-closest-numa-nodes\"",
                         {0}},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm_error err = NCM_ERROR_INIT;
                ncm_tm_options o = NCM_TM_OPTIONS_DEFAULT;
                int r = ncm_tm_options_parse(t[i].opts, t[i].n, NCM_TM_GATES_DEFAULT, &o, &err);
                if (t[i].msg) {
                        assert_int_equal(r, -EINVAL);
                        assert_string_equal(err.msg, t[i].msg);
                } else {
                        if (r != 0)
                                fail_msg("row %zu: %s", i, err.msg);
                        assert_int_equal(o.prefer_closest_numa, t[i].expect.prefer_closest_numa);
                        assert_int_equal(o.max_allowable_numa_nodes,
                                         t[i].expect.max_allowable_numa_nodes);
                }
        }
}

static void test_tm_options_available(void **state)
{
        static const struct {
                const char *option;
                ncm_tm_gates gates;
                bool available;
        } t[] = {
                        /* TestPolicyDefaultsAvailable */
                        {"this-option-does-not-exist", {false, true}, false},
                        {"prefer-closest-numa-nodes", {false, true}, true},
                        {"max-allowable-numa-nodes", {false, true}, true},
                        /* TestPolicyOptionsAvailable */
                        {"this-option-does-not-exist", {false, false}, false},
                        {"this-option-does-not-exist", {false, true}, false},
                        {"prefer-closest-numa-nodes", {false, false}, true},
                        {"prefer-closest-numa-nodes", {false, true}, true},
                        {"fancy-alpha-option", {true, true}, true},
                        {"fancy-alpha-option", {false, true}, false},
                        {"fancy-new-option", {false, true}, true},
                        {"fancy-new-option", {false, false}, false},
        };
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                int r = ncm__tm_option_check_available_in(t[i].option, fancy, NCM_ELEMENTSOF(fancy),
                                                          t[i].gates, NULL);
                if ((r == 0) != t[i].available)
                        fail_msg("option %s: available %d, expected %d", t[i].option, r == 0,
                                 t[i].available);
        }
        assert_int_equal(ncm_tm_option_check_available("x", NCM_TM_GATES_DEFAULT, &err), -EINVAL);
        assert_string_equal(err.msg, "unknown Topology Manager Policy option: \"x\"");
        assert_int_equal(ncm__tm_option_check_available_in("fancy-alpha-option", fancy, 2,
                                                           NCM_TM_GATES_DEFAULT, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "topology manager policy alpha-level options not enabled, "
                                     "but option \"fancy-alpha-option\" provided");
}

/* ---------------------------------------------------------------- numa_info_test.go */

static void test_tm_numa_info(void **state)
{
        static const uint64_t d4[] = {10, 11, 12, 12, 11, 10, 12, 12,
                                      12, 12, 10, 11, 12, 12, 11, 10};
        static const struct {
                const char *name;
                int ids[4];
                size_t n;
                bool closest;
                const uint64_t *dist;
                const char *err;
        } t[] = {
                        {"positive test 1 node", {0}, 1, false, NULL, NULL},
                        {"positive test 1 node, with PreferClosestNUMA", {0}, 1, true, d4, NULL},
                        {"positive test 2 nodes", {0, 1}, 2, false, NULL, NULL},
                        {"positive test 2 nodes, with PreferClosestNUMA",
                         {0, 1},
                         2,
                         true,
                         d4,
                         NULL},
                        {"positive test 4 nodes, with PreferClosestNUMA",
                         {0, 1, 2, 3},
                         4,
                         true,
                         d4,
                         NULL},
                        {"negative test 1 node, no distance file with PreferClosestNUMA",
                         {9},
                         1,
                         true,
                         NULL,
                         "cannot discover NUMA topology: error getting NUMA distances from "
                         "cadvisor"},
                        {"one node and its id is 1", {1}, 1, false, NULL, NULL},
                        {"two nodes not sequential", {0, 2}, 2, false, NULL, NULL},
                        {"two nodes not sequential, with PreferClosestNUMA",
                         {0, 2},
                         2,
                         true,
                         d4,
                         NULL},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm_tm_options o = {t[i].closest, 8};
                ncm_error err = NCM_ERROR_INIT;
                ncm_tm_policy *p = NULL;
                int r = ncm_tm_policy_new("best-effort", &o, t[i].ids, t[i].n, t[i].dist, &p, &err);
                if (t[i].err) {
                        assert_int_equal(r, -EINVAL);
                        assert_string_equal(err.msg, t[i].err);
                        assert_null(p);
                        continue;
                }
                if (r != 0)
                        fail_msg("%s: %s", t[i].name, err.msg);
                assert_int_equal(p->numa.n, t[i].n);
                for (size_t k = 0; k < t[i].n; k++)
                        assert_int_equal(p->numa.ids[k], t[i].ids[k]);
                /* Distances are kept only when prefer-closest-numa-nodes needs them. */
                assert_int_equal(p->numa.dist != NULL, t[i].closest);
                if (t[i].closest)
                        assert_memory_equal(p->numa.dist, t[i].dist,
                                            t[i].n * t[i].n * sizeof(uint64_t));
                p = ncm_tm_policy_free(p);
        }
}

static void test_tm_numa_average_distance(void **state)
{
        static const uint64_t d1[] = {10};
        static const uint64_t d2[] = {10, 11, 11, 10};
        static const uint64_t d4[] = {10, 11, 12, 12, 11, 10, 12, 12,
                                      12, 12, 10, 11, 12, 12, 11, 10};
        static const int ids[] = {0, 1, 2, 3};
        static const struct {
                const char *name;
                size_t n;
                const uint64_t *d;
                ncm_bitmask m;
                double expect;
        } t[] = {
                        {"1 NUMA node", 1, d1, 1, 10},
                        {"2 NUMA node, 1 set in bitmask", 2, d2, 1, 10},
                        {"2 NUMA node, 2 set in bitmask", 2, d2, 3, 10.5},
                        {"4 NUMA node, 2 set in bitmask", 4, d4, 5, 11},
                        {"4 NUMA node, 3 set in bitmask", 4, d4, 13, 11.11111111111111},
                        {"0 NUMA node, 0 set in bitmask", 0, NULL, 0, 0},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm__tm_numa numa;
                assert_int_equal(ncm__tm_numa_init(&numa, ids, t[i].n, t[i].d, NULL), 0);
                /* kubelet compares float64 with ==; so do we (the sums are Go's). */
                if (ncm__tm_numa_avg(&numa, t[i].m) != t[i].expect)
                        fail_msg("%s: %.17g", t[i].name, ncm__tm_numa_avg(&numa, t[i].m));
                ncm__tm_numa_done(&numa);
        }
}

static void test_tm_numa_closest(void **state)
{
        static const uint64_t flat3[] = {10, 10, 10, 10, 10, 10, 10, 10, 10};
        static const uint64_t flat4[] = {10, 10, 10, 10, 10, 10, 10, 10,
                                         10, 10, 10, 10, 10, 10, 10, 10};
        static const uint64_t d4[] = {10, 11, 12, 12, 11, 10, 12, 12,
                                      12, 12, 10, 11, 12, 12, 11, 10};
        static const int ids[] = {0, 1, 2, 3};
        static const struct {
                const char *description;
                ncm_bitmask current, candidate;
                bool current_wins;
                size_t n;
                const uint64_t *d;
        } t[] = {
                        {"current and candidate length is not the same, current narrower", 1, 5,
                         true, 0, NULL},
                        {"current and candidate length is the same, distance is the same, current "
                         "more "
                         "lower bits set",
                         3, 5, true, 3, flat3},
                        {"current and candidate length is the same, distance is the same, "
                         "candidate "
                         "more lower bits set",
                         9, 5, false, 4, flat4},
                        {"current and candidate length is the same, candidate average distance is "
                         "smaller",
                         9, 3, false, 4, d4},
                        {"current and candidate length is the same, current average distance is "
                         "smaller",
                         12, 9, true, 4, d4},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm__tm_numa numa;
                ncm_bitmask r;
                assert_int_equal(ncm__tm_numa_init(&numa, ids, t[i].n, t[i].d, NULL), 0);
                /* kubelet's test calls Closest(candidate, current). */
                r = ncm__tm_numa_closest(&numa, t[i].candidate, t[i].current);
                if (r != (t[i].current_wins ? t[i].current : t[i].candidate))
                        fail_msg("%s", t[i].description);
                ncm__tm_numa_done(&numa);
        }
}

/* ---------------------------------------------------------------- policy_test.go */

static void test_tm_max_of_min_affinity_counts(void **state)
{
        ncm_hint l1[] = {hint(BM0, true)};
        ncm_hint l2[] = {hint(BM(0), true)};
        ncm_hint l3[] = {hint(BM(0, 1), true)};
        ncm_hint l4[] = {hint(BM(0, 1), true), hint(BM(0, 1, 2), true)};
        ncm_hint l5[] = {hint(BM(0, 1, 2), true)};
        ncm_hint l6[] = {hint(BM(0, 1, 2), true), hint(BM(0, 1, 2, 3), true)};
        ncm_hint l7[] = {any_hint(true)};
        const struct {
                ncm__tm_list lists[2];
                size_t n;
                int expect;
        } t[] = {
                        {{{NULL, 0}}, 0, 0},
                        {{{l1, 1}}, 1, 0},
                        {{{l2, 1}}, 1, 1},
                        {{{l3, 1}}, 1, 2},
                        {{{l4, 2}}, 1, 2},
                        {{{l4, 2}, {l5, 1}}, 2, 3},
                        {{{l4, 2}, {l6, 2}}, 2, 3},
                        /* lists with only "any" hints do not count */
                        {{{l7, 1}, {l2, 1}}, 2, 1},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++)
                assert_int_equal(ncm__tm_max_of_min_counts(t[i].lists, t[i].n), t[i].expect);
}

static void test_tm_compare_hints_narrowest(void **state)
{
        static const struct {
                const char *description;
                int b;
                bool no_current;
                ncm_hint current, candidate;
                bool expect_current;
        } t[] = {
                        {"candidate.NUMANodeAffinity.Count() == 0 (1)",
                         -1,
                         true,
                         {0},
                         {0, false, false},
                         true},
                        {"candidate.NUMANodeAffinity.Count() == 0 (2)",
                         -1,
                         false,
                         {0, false, true},
                         {0, false, false},
                         true},
                        {"current == nil (1)", -1, true, {0}, {1, false, true}, false},
                        {"current == nil (2)", -1, true, {0}, {1, false, false}, false},
                        {"!current.Preferred && candidate.Preferred",
                         -1,
                         false,
                         {1, false, false},
                         {1, false, true},
                         false},
                        {"current.Preferred && !candidate.Preferred",
                         -1,
                         false,
                         {1, false, true},
                         {1, false, false},
                         true},
                        {"current.Preferred && candidate.Preferred (1)",
                         -1,
                         false,
                         {1, false, true},
                         {1, false, true},
                         true},
                        {"current.Preferred && candidate.Preferred (2)",
                         -1,
                         false,
                         {3, false, true},
                         {1, false, true},
                         false},
                        {"current.Preferred && candidate.Preferred (3)",
                         -1,
                         false,
                         {1, false, true},
                         {3, false, true},
                         true},
                        {"!current.Preferred && !candidate.Preferred (1.1)",
                         1,
                         false,
                         {3, false, false},
                         {3, false, false},
                         true},
                        {"!current.Preferred && !candidate.Preferred (1.2)",
                         1,
                         false,
                         {6, false, false},
                         {3, false, false},
                         false},
                        {"!current.Preferred && !candidate.Preferred (1.3)",
                         1,
                         false,
                         {3, false, false},
                         {6, false, false},
                         true},
                        {"!current.Preferred && !candidate.Preferred (2.1)",
                         2,
                         false,
                         {3, false, false},
                         {1, false, false},
                         true},
                        {"!current.Preferred && !candidate.Preferred (2.2)",
                         2,
                         false,
                         {3, false, false},
                         {3, false, false},
                         true},
                        {"!current.Preferred && !candidate.Preferred (2.3)",
                         2,
                         false,
                         {6, false, false},
                         {3, false, false},
                         false},
                        {"!current.Preferred && !candidate.Preferred (2.4)",
                         2,
                         false,
                         {3, false, false},
                         {6, false, false},
                         true},
                        {"!current.Preferred && !candidate.Preferred (3a)",
                         2,
                         false,
                         {1, false, false},
                         {7, false, false},
                         true},
                        {"!current.Preferred && !candidate.Preferred (3b)",
                         2,
                         false,
                         {1, false, false},
                         {3, false, false},
                         false},
                        {"!current.Preferred && !candidate.Preferred (3ca.1)",
                         3,
                         false,
                         {1, false, false},
                         {3, false, false},
                         false},
                        {"!current.Preferred && !candidate.Preferred (3ca.2)",
                         3,
                         false,
                         {1, false, false},
                         {6, false, false},
                         false},
                        {"!current.Preferred && !candidate.Preferred (3ca.3)",
                         4,
                         false,
                         {3, false, false},
                         {14, false, false},
                         false},
                        {"!current.Preferred && !candidate.Preferred (3cb)",
                         4,
                         false,
                         {14, false, false},
                         {3, false, false},
                         true},
                        {"!current.Preferred && !candidate.Preferred (3cc.1)",
                         4,
                         false,
                         {7, false, false},
                         {7, false, false},
                         true},
                        {"!current.Preferred && !candidate.Preferred (3cc.2)",
                         4,
                         false,
                         {7, false, false},
                         {14, false, false},
                         true},
                        {"!current.Preferred && !candidate.Preferred (3cc.3)",
                         4,
                         false,
                         {14, false, false},
                         {7, false, false},
                         false},
        };
        ncm__tm_numa numa;
        (void)state;
        assert_int_equal(ncm__tm_numa_init(&numa, NULL, 0, NULL, NULL), 0);
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm__tm_merger m;
                const ncm_hint *cur = t[i].no_current ? NULL : &t[i].current;
                const ncm_hint *r;
                ncm__tm_merger_init(&m, &numa, false, NULL, 0);
                m.best_non_preferred = t[i].b;
                r = ncm__tm_compare(&m, cur, &t[i].candidate);
                if (r != (t[i].expect_current ? cur : &t[i].candidate))
                        fail_msg("%s", t[i].description);
        }
}

static void test_tm_filter_single_numa_hints(void **state)
{
        /* TestPolicySingleNumaNodeFilterHints */
        ncm_hint a1[] = {any_hint(false)}, a2[] = {any_hint(true)};
        ncm_hint b1[] = {hint(BM(0), true), any_hint(false)};
        ncm_hint b2[] = {hint(BM(1), true), any_hint(true)};
        ncm_hint c1[] = {hint(BM(1), true), hint(BM(0), true), any_hint(false)};
        ncm_hint d1[] = {hint(BM(0), true), hint(BM(1), true), hint(BM(1, 2), false),
                         hint(BM(0, 1, 2), false), any_hint(false)};
        ncm_hint d2[] = {hint(BM(1, 2), false), hint(BM(0, 1, 2), false), hint(BM(0, 2), false),
                         hint(BM(3), false)};
        ncm_hint d3[] = {hint(BM(1, 2), false), hint(BM(0, 1, 2), false), hint(BM(0, 2), false)};
        const struct {
                const char *name;
                ncm__tm_list in[3];
                size_t n;
                ncm__tm_list expect[3];
        } t[] = {
                        {"filter empty resources", {{NULL, 0}}, 0, {{NULL, 0}}},
                        {"filter hints with nil socket mask 1/2",
                         {{a1, 1}, {a2, 1}},
                         2,
                         {{NULL, 0}, {a2, 1}}},
                        {"filter hints with nil socket mask 2/2",
                         {{b1, 2}, {b2, 2}},
                         2,
                         {{b1, 1}, {b2, 2}}},
                        {"filter hints with empty resource socket mask",
                         {{c1, 3}, {NULL, 0}},
                         2,
                         {{c1, 2}, {NULL, 0}}},
                        {"filter hints with wide sockemask",
                         {{d1, 5}, {d2, 4}, {d3, 3}},
                         3,
                         {{d1, 2}, {NULL, 0}, {NULL, 0}}},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm__tm_lists in = {t[i].n, (ncm__tm_list *)t[i].in, NULL}, out;
                assert_int_equal(ncm__tm_filter_single_numa(&in, &out), 0);
                assert_int_equal(out.n, t[i].n);
                for (size_t k = 0; k < t[i].n; k++) {
                        if (out.lists[k].n != t[i].expect[k].n)
                                fail_msg("%s: list %zu has %zu hints", t[i].name, k,
                                         out.lists[k].n);
                        if (out.lists[k].n)
                                assert_memory_equal(out.lists[k].hints, t[i].expect[k].hints,
                                                    out.lists[k].n * sizeof(ncm_hint));
                }
                ncm__tm_lists_done(&out);
        }
}

static void test_tm_filter_providers_hints(void **state)
{
        /* filterProvidersHints: nil provider, nil list, empty list, and resources by name. */
        ncm_tm_hints p[3] = {NCM_TM_HINTS_INIT, NCM_TM_HINTS_INIT, NCM_TM_HINTS_INIT};
        ncm_hint h0 = hint(BM(0), true), h1 = hint(BM(1), false);
        ncm__tm_lists out;
        (void)state;
        assert_int_equal(ncm_tm_hints_add(&p[1], "zeta", &h1, 1, false, NULL, NULL), 0);
        assert_int_equal(ncm_tm_hints_add(&p[1], "alpha", &h0, 1, false, NULL, NULL), 0);
        assert_int_equal(ncm_tm_hints_add(&p[1], "mid-nil", NULL, 0, true, NULL, NULL), 0);
        assert_int_equal(ncm_tm_hints_add(&p[2], "empty", NULL, 0, false, NULL, NULL), 0);
        assert_int_equal(ncm_tm_hints_add(&p[2], "empty", NULL, 0, false, NULL, NULL), -EEXIST);
        assert_int_equal(ncm__tm_filter_providers(p, 3, &out), 0);
        assert_int_equal(out.n, 5);
        assert_true(out.lists[0].n == 1 && out.lists[0].hints[0].any &&
                    out.lists[0].hints[0].preferred);
        assert_memory_equal(&out.lists[1].hints[0], &h0, sizeof(h0)); /* alpha */
        assert_true(out.lists[2].n == 1 && out.lists[2].hints[0].any &&
                    out.lists[2].hints[0].preferred);                 /* mid-nil */
        assert_memory_equal(&out.lists[3].hints[0], &h1, sizeof(h1)); /* zeta */
        assert_true(out.lists[4].n == 1 && out.lists[4].hints[0].any &&
                    !out.lists[4].hints[0].preferred);
        /* The one-pass single-numa-node variant equals the two kubelet steps. */
        {
                ncm__tm_lists two, one;
                assert_int_equal(ncm__tm_filter_single_numa(&out, &two), 0);
                assert_int_equal(ncm__tm_filter_providers_ex(p, 3, true, &one), 0);
                assert_int_equal(one.n, two.n);
                for (size_t i = 0; i < one.n; i++) {
                        assert_int_equal(one.lists[i].n, two.lists[i].n);
                        if (one.lists[i].n)
                                assert_memory_equal(one.lists[i].hints, two.lists[i].hints,
                                                    one.lists[i].n * sizeof(ncm_hint));
                }
                assert_int_equal(two.lists[3].n, 0); /* zeta: not preferred */
                assert_int_equal(two.lists[4].n, 0); /* empty: {nil, not preferred} */
                ncm__tm_lists_done(&one);
                ncm__tm_lists_done(&two);
        }
        ncm__tm_lists_done(&out);
        for (size_t i = 0; i < 3; i++)
                ncm_tm_hints_done(&p[i]);
}

/* ---------------------------------------------------------------- the merge tables */

static json_object *load_json(const char *rel)
{
        ncm_error err = NCM_ERROR_INIT;
        json_object *o = NULL;
        size_t len;
        char *text = tu_read_data(rel, &len);
        if (ncm__json_parse(text, len, rel, &o, &err) < 0)
                fail_msg("%s", err.msg);
        free(text);
        return o;
}

static void expect_hint(const char *what, ncm_hint got, ncm_hint want)
{
        if (got.any != want.any || got.preferred != want.preferred ||
            (!got.any && got.numa != want.numa))
                fail_msg("%s: got {%s %#llx %d}, want {%s %#llx %d}", what,
                         got.any ? "any" : "mask", (unsigned long long)got.numa, got.preferred,
                         want.any ? "any" : "mask", (unsigned long long)want.numa, want.preferred);
}

static void run_case(json_object *run, json_object *machine, json_object *c, size_t *count)
{
        static const ncm__tm_andset_method methods[] = {NCM__TM_ANDSET_AUTO, NCM__TM_ANDSET_DENSE,
                                                        NCM__TM_ANDSET_SPARSE};
        const char *name = json_object_get_string(ncm__json_get(c, "name"));
        const char *policy_name = json_object_get_string(ncm__json_get(run, "policy"));
        json_object *expect = ncm__json_get(c, "expect");
        json_object *en = ncm__json_get(expect, "numa");
        json_object *doc = json_object_new_object();
        ncm_autoptr(ncm_tm_request) req = NULL;
        ncm_autoptr(ncm_tm_policy) p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint want = {0};
        char what[512];

        json_object_object_add(doc, "policy", json_object_get(ncm__json_get(run, "policy")));
        json_object_object_add(doc, "options", json_object_get(ncm__json_get(run, "options")));
        json_object_object_add(doc, "numa", json_object_get(ncm__json_get(machine, "numa")));
        json_object_object_add(doc, "distances",
                               json_object_get(ncm__json_get(machine, "distances")));
        json_object_object_add(doc, "providers", json_object_get(ncm__json_get(c, "providers")));
        if (ncm__tm_request_from_json(doc, &req, &err) < 0 ||
            ncm__tm_request_policy(req, NCM_TM_GATES_DEFAULT, &p, &err) < 0)
                fail_msg("%s: %s", name, err.msg);
        json_object_put(doc);

        want.preferred = json_object_get_boolean(ncm__json_get(expect, "preferred"));
        if (!en) {
                want.any = true;
        } else if (json_object_is_type(en, json_type_string)) {
                want.numa = ncm_tm_policy_default_affinity(p); /* "all" */
        } else {
                for (size_t i = 0; i < json_object_array_length(en); i++)
                        want.numa |= UINT64_C(1)
                                     << json_object_get_int(json_object_array_get_idx(en, i));
        }
        for (int mode = 0; mode < 2; mode++) {
                for (size_t k = 0; k < (mode ? 1 : NCM_ELEMENTSOF(methods)); k++) {
                        ncm_hint got;
                        bool admit;
                        ncm__tm_policy_set_andset(p, methods[k]);
                        assert_int_equal(ncm_tm_policy_merge(p, req->providers, req->n_providers,
                                                             mode ? NCM_TM_MERGE_REFERENCE
                                                                  : NCM_TM_MERGE_FAST,
                                                             &got, &admit, NULL),
                                         0);
                        snprintf(what, sizeof(what), "%s / %s (%s, andset %d)",
                                 json_object_get_string(ncm__json_get(run, "name")), name,
                                 mode ? "reference" : "fast", (int)methods[k]);
                        expect_hint(what, got, want);
                        if (admit != (strcmp(policy_name, "best-effort") == 0 || want.preferred))
                                fail_msg("%s: admit %d", what, admit);
                        (*count)++;
                }
        }
}

static void test_tm_policy_merge_kubelet_tables(void **state)
{
        json_object *doc = load_json("merge/kubelet-policy-cases.json");
        json_object *runs = ncm__json_get(doc, "runs");
        size_t count = 0;
        (void)state;
        for (size_t r = 0; r < json_object_array_length(runs); r++) {
                json_object *run = json_object_array_get_idx(runs, r);
                json_object *machine = ncm__json_get(
                                ncm__json_get(doc, "machines"),
                                json_object_get_string(ncm__json_get(run, "machine")));
                json_object *sets = ncm__json_get(run, "sets");
                assert_non_null(machine);
                for (size_t s = 0; s < json_object_array_length(sets); s++) {
                        json_object *cases = ncm__json_get(
                                        ncm__json_get(doc, "sets"),
                                        json_object_get_string(json_object_array_get_idx(sets, s)));
                        assert_non_null(cases);
                        for (size_t c = 0; c < json_object_array_length(cases); c++)
                                run_case(run, machine, json_object_array_get_idx(cases, c), &count);
                }
        }
        /* 6 runs x their sets x (3 fast variants + reference) */
        assert_true(count > 400);
        json_object_put(doc);
}

/* ---------------------------------------------------------------- per-policy tests */

static ncm_tm_policy *policy(const char *name, size_t n_numa)
{
        static const int ids[] = {0, 1, 2, 3, 4, 5, 6, 7};
        ncm_error err = NCM_ERROR_INIT;
        ncm_tm_policy *p = NULL;
        if (ncm_tm_policy_new(name, NULL, ids, n_numa, NULL, &p, &err) < 0)
                fail_msg("%s", err.msg);
        return p;
}

static void test_tm_policy_names_and_admit(void **state)
{
        static const struct {
                const char *name;
                bool admit_not_preferred;
                bool aligned;
        } t[] = {
                        {"none", true, false},
                        {"best-effort", true, false},
                        {"restricted", false, false},
                        {"single-numa-node", false, true},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm_tm_policy *p = policy(t[i].name, 2);
                ncm_hint np = any_hint(false), pr = any_hint(true);
                assert_string_equal(ncm_tm_policy_name(p), t[i].name);
                /* Test<Policy>CanAdmitPodResult */
                assert_int_equal(ncm_tm_policy_can_admit(p, &np), t[i].admit_not_preferred);
                assert_true(ncm_tm_policy_can_admit(p, &pr));
                assert_int_equal(ncm_tm_policy_alignment_guaranteed(p), t[i].aligned);
                ncm_tm_policy_free(p);
        }
}

static void test_tm_policy_none_merge(void **state)
{
        /* TestPolicyNoneMerge: always the zero hint, admitted. */
        ncm_tm_policy *p = policy("none", 2);
        ncm_tm_hints prov = NCM_TM_HINTS_INIT;
        ncm_hint h01p = hint(BM(0, 1), true), h01 = hint(BM(0, 1), false), got;
        bool admit = false;
        (void)state;
        assert_int_equal(ncm_tm_policy_merge(p, NULL, 0, NCM_TM_MERGE_FAST, &got, &admit, NULL), 0);
        expect_hint("merged empty providers hints", got, any_hint(false));
        assert_true(admit);
        assert_int_equal(ncm_tm_hints_add(&prov, "resource", &h01p, 1, false, NULL, NULL), 0);
        assert_int_equal(ncm_tm_policy_merge(p, &prov, 1, NCM_TM_MERGE_REFERENCE, &got, &admit,
                                             NULL),
                         0);
        expect_hint("single preferred resource", got, any_hint(false));
        assert_true(admit);
        ncm_tm_hints_done(&prov);
        assert_int_equal(ncm_tm_hints_add(&prov, "resource", &h01, 1, false, NULL, NULL), 0);
        assert_int_equal(ncm_tm_policy_merge(p, &prov, 1, NCM_TM_MERGE_FAST, &got, &admit, NULL),
                         0);
        expect_hint("single non-preferred resource", got, any_hint(false));
        assert_true(admit);
        ncm_tm_hints_done(&prov);
        ncm_tm_policy_free(p);
}

static void test_tm_policy_new_errors(void **state)
{
        static const int nine[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
        static const int bad[] = {0, 64};
        static const int dup[] = {1, 1};
        ncm_tm_options o = NCM_TM_OPTIONS_DEFAULT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_tm_policy *p = NULL;
        (void)state;
        assert_int_equal(ncm_tm_policy_new("unknown", NULL, nine, 2, NULL, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "unknown policy: \"unknown\"");
        /* "more than 8 NUMA nodes": checked before the policy name, as kubelet. */
        assert_int_equal(ncm_tm_policy_new("best-effort", NULL, nine, 9, NULL, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "unsupported on machines with more than 8 NUMA Nodes");
        assert_int_equal(ncm_tm_policy_new("unknown", NULL, nine, 9, NULL, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "unsupported on machines with more than 8 NUMA Nodes");
        /* "can't get NUMA distances" */
        o.prefer_closest_numa = true;
        assert_int_equal(ncm_tm_policy_new("best-effort", &o, nine, 1, NULL, &p, &err), -EINVAL);
        assert_string_equal(err.msg,
                            "cannot discover NUMA topology: error getting NUMA distances from "
                            "cadvisor");
        assert_int_equal(ncm_tm_policy_new("best-effort", NULL, bad, 2, NULL, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "bit number must be in range 0-63");
        assert_int_equal(ncm_tm_policy_new("best-effort", NULL, dup, 2, NULL, &p, &err), -EINVAL);
        assert_null(p);
        /* max-allowable-numa-nodes raises the limit; none checks nothing. */
        o = (ncm_tm_options){false, 9};
        assert_int_equal(ncm_tm_policy_new("restricted", &o, nine, 9, NULL, &p, &err), 0);
        assert_int_equal(ncm_tm_policy_default_affinity(p), 0x1ff);
        p = ncm_tm_policy_free(p);
        assert_int_equal(ncm_tm_policy_new("none", NULL, bad, 2, NULL, &p, &err), 0);
        p = ncm_tm_policy_free(p);
}

static void test_tm_policy_single_numa_default_becomes_any(void **state)
{
        /* A one-node machine: the merged mask is all nodes, so single-numa-node stores nil. */
        ncm_tm_policy *p = policy("single-numa-node", 1);
        ncm_tm_hints prov = NCM_TM_HINTS_INIT;
        ncm_hint h0 = hint(BM(0), true), got;
        bool admit;
        (void)state;
        assert_int_equal(ncm_tm_hints_add(&prov, "cpu", &h0, 1, false, NULL, NULL), 0);
        for (int mode = 0; mode < 2; mode++) {
                assert_int_equal(ncm_tm_policy_merge(p, &prov, 1, (ncm_tm_merge_mode)mode, &got,
                                                     &admit, NULL),
                                 0);
                expect_hint("one node", got, any_hint(true));
                assert_true(admit);
        }
        ncm_tm_hints_done(&prov);
        ncm_tm_policy_free(p);
}

static void test_tm_admit_result_texts(void **state)
{
        ncm_tm_admit_result r;
        (void)state;
        ncm_tm_admit_result_set(&r, NULL, NULL);
        assert_true(r.admit);
        assert_string_equal(r.reason, "");
        ncm_tm_admit_result_set(&r, "TopologyAffinityError",
                                "Resources cannot be allocated with Topology locality");
        assert_false(r.admit);
        assert_string_equal(r.reason, "TopologyAffinityError");
        assert_string_equal(r.message, "Resources cannot be allocated with Topology locality");
        ncm_tm_admit_result_set(&r, NULL, "not enough cpus available to satisfy request");
        assert_string_equal(r.reason, "UnexpectedAdmissionError");
        assert_string_equal(r.message, "Allocate failed due to not enough cpus available to "
                                       "satisfy request, which is unexpected");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_tm_bitmask_new_and_string),
                        cmocka_unit_test(test_tm_bitmask_add_out_of_range),
                        cmocka_unit_test(test_tm_bitmask_remove_and_or_clear_fill),
                        cmocka_unit_test(test_tm_bitmask_queries),
                        cmocka_unit_test(test_tm_bitmask_iterate),
                        cmocka_unit_test(test_tm_options_new),
                        cmocka_unit_test(test_tm_options_texts),
                        cmocka_unit_test(test_tm_options_available),
                        cmocka_unit_test(test_tm_numa_info),
                        cmocka_unit_test(test_tm_numa_average_distance),
                        cmocka_unit_test(test_tm_numa_closest),
                        cmocka_unit_test(test_tm_max_of_min_affinity_counts),
                        cmocka_unit_test(test_tm_compare_hints_narrowest),
                        cmocka_unit_test(test_tm_filter_single_numa_hints),
                        cmocka_unit_test(test_tm_filter_providers_hints),
                        cmocka_unit_test(test_tm_policy_merge_kubelet_tables),
                        cmocka_unit_test(test_tm_policy_names_and_admit),
                        cmocka_unit_test(test_tm_policy_none_merge),
                        cmocka_unit_test(test_tm_policy_new_errors),
                        cmocka_unit_test(test_tm_policy_single_numa_default_becomes_any),
                        cmocka_unit_test(test_tm_admit_result_texts),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
