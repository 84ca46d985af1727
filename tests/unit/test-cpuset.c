/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU sets: k8s.io/utils/cpuset's own test tables (parse, format, algebra), the exact error
 * texts of cpuset.Parse, the kernel list/mask readers, and randomized checks of the word-wise
 * operations against a plain bool array.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static ncm_cpuset *of(const int *cpus, size_t n)
{
        ncm_cpuset *s = ncm_cpuset_new();
        assert_non_null(s);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(ncm_cpuset_set(s, cpus[i]), 0);
        return s;
}
#define SET(...) of((const int[]){__VA_ARGS__}, sizeof((const int[]){__VA_ARGS__}) / sizeof(int))
#define EMPTY() of(NULL, 0)

static void test_cpuset_size_and_empty(void **state)
{
        ncm_autoptr(ncm_cpuset) a = EMPTY();
        ncm_autoptr(ncm_cpuset) b = SET(5);
        ncm_autoptr(ncm_cpuset) c = SET(1, 2, 3, 4, 5);
        (void)state;
        assert_int_equal(ncm_cpuset_weight(a), 0);
        assert_int_equal(ncm_cpuset_weight(b), 1);
        assert_int_equal(ncm_cpuset_weight(c), 5);
        assert_true(ncm_cpuset_is_empty(a));
        assert_false(ncm_cpuset_is_empty(b));
        assert_false(ncm_cpuset_is_empty(c));
        assert_int_equal(ncm_cpuset_first(a), -1);
        assert_int_equal(ncm_cpuset_last(a), -1);
        assert_int_equal(ncm_cpuset_first(c), 1);
        assert_int_equal(ncm_cpuset_last(c), 5);
}

static void test_cpuset_contains(void **state)
{
        ncm_autoptr(ncm_cpuset) s = SET(1, 2, 4, 5);
        (void)state;
        assert_true(ncm_cpuset_isset(s, 1));
        assert_true(ncm_cpuset_isset(s, 5));
        assert_false(ncm_cpuset_isset(s, 0));
        assert_false(ncm_cpuset_isset(s, 3));
        assert_false(ncm_cpuset_isset(s, 6));
        assert_false(ncm_cpuset_isset(s, -1));
        assert_false(ncm_cpuset_isset(s, 100000));
}

static void test_cpuset_equal_and_subset(void **state)
{
        ncm_autoptr(ncm_cpuset) e = EMPTY();
        ncm_autoptr(ncm_cpuset) five = SET(5);
        ncm_autoptr(ncm_cpuset) all = SET(1, 2, 3, 4, 5);
        ncm_autoptr(ncm_cpuset) other = SET(6, 7, 8);
        ncm_autoptr(ncm_cpuset) hi = SET(700);
        (void)state;
        assert_true(ncm_cpuset_equal(e, e));
        assert_true(ncm_cpuset_equal(five, five));
        assert_false(ncm_cpuset_equal(e, five));
        assert_false(ncm_cpuset_equal(five, e));
        assert_false(ncm_cpuset_equal(five, all));
        assert_false(ncm_cpuset_equal(all, five));
        assert_true(ncm_cpuset_is_subset(e, e));
        assert_true(ncm_cpuset_is_subset(e, all));
        assert_true(ncm_cpuset_is_subset(five, all));
        assert_false(ncm_cpuset_is_subset(five, other));
        assert_false(ncm_cpuset_is_subset(hi, all));
        assert_true(ncm_cpuset_is_subset(all, all));
        /* Sets of different word counts compare by content, not storage. */
        ncm_cpuset_clr(hi, 700);
        assert_true(ncm_cpuset_equal(hi, e));
        assert_true(ncm_cpuset_is_subset(hi, e));
}

static void test_cpuset_union_intersection_difference(void **state)
{
        static const struct {
                const char *a, *b, *or_, *and_, *andnot;
        } cases[] = {
                        {"", "", "", "", ""},
                        {"", "5", "5", "", ""},
                        {"5", "", "5", "", "5"},
                        {"5", "5", "5", "5", ""},
                        {"", "1-5", "1-5", "", ""},
                        {"1-5", "", "1-5", "", "1-5"},
                        {"1-5", "1-5", "1-5", "1-5", ""},
                        {"5", "1-5", "1-5", "5", ""},
                        {"1-5", "5", "1-5", "5", "1-4"},
                        {"1-2", "3-5", "1-5", "", "1-2"},
                        {"1-3", "3-5", "1-5", "3", "1-2"},
                        {"0-63,128", "64-127", "0-128", "", "0-63,128"},
                        {"8191", "0", "0,8191", "", "8191"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_autoptr(ncm_cpuset) a = tu_cpuset(cases[i].a);
                ncm_autoptr(ncm_cpuset) b = tu_cpuset(cases[i].b);
                ncm_autoptr(ncm_cpuset) r = ncm_cpuset_new();
                ncm_cpuset_or(r, a, b);
                tu_assert_cpuset(r, cases[i].or_);
                ncm_cpuset_and(r, a, b);
                tu_assert_cpuset(r, cases[i].and_);
                assert_int_equal(ncm_cpuset_weight_and(a, b), ncm_cpuset_weight(r));
                assert_int_equal(ncm_cpuset_intersects(a, b), !ncm_cpuset_is_empty(r));
                ncm_cpuset_andnot(r, a, b);
                tu_assert_cpuset(r, cases[i].andnot);
                /* In place: the destination may be an operand. */
                ncm_cpuset_or(a, a, b);
                tu_assert_cpuset(a, cases[i].or_);
        }
}

static void test_cpuset_format_list(void **state)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
                        {"", ""},
                        {"5", "5"},
                        {"1,2,3,4,5", "1-5"},
                        {"1,2,3,5,6,8", "1-3,5-6,8"},
                        {"4,3,2,1", "1-4"},
                        {"1,2,3,5,6,7,8,10", "1-3,5-8,10"},
                        {"0,2,4", "0,2,4"},
                        {"2,3", "2-3"},
                        {"63,64", "63-64"},
                        {"0-8191", "0-8191"},
                        {"8190,8191", "8190-8191"},
                        {"62-65,127-129", "62-65,127-129"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_autoptr(ncm_cpuset) s = tu_cpuset(cases[i].in);
                tu_assert_cpuset(s, cases[i].out);
        }
}

static void test_cpuset_parse_list_accepts_kubelet_forms(void **state)
{
        static const struct {
                const char *in, *canonical;
        } cases[] = {
                        {"", ""},
                        {"5", "5"},
                        {"1,2,3,4,5", "1-5"},
                        {"1-5", "1-5"},
                        {"1-2,3-5", "1-5"},
                        {"5,4,3,2,1", "1-5"},
                        {"3-6,1-5", "1-6"},
                        {"3-3,5-5", "3,5"},
                        /* Go's Atoi accepts a sign; SplitN splits on the first '-' only. */
                        {"+3", "3"},
                        {"1-+3", "1-3"},
                        {"3,1,1", "1,3"},
                        {"007", "7"},
                        {"0000000000000000000001", "1"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_autoptr(ncm_cpuset) s = tu_cpuset(cases[i].in);
                tu_assert_cpuset(s, cases[i].canonical);
        }
}

static void test_cpuset_parse_list_rejects_with_kubelet_errors(void **state)
{
        static const struct {
                const char *in, *msg;
        } cases[] = {
                        {"nonnumeric", "strconv.Atoi: parsing \"nonnumeric\": invalid syntax"},
                        {"non-numeric", "strconv.Atoi: parsing \"non\": invalid syntax"},
                        {"no,numbers", "strconv.Atoi: parsing \"no\": invalid syntax"},
                        {"0-a", "strconv.Atoi: parsing \"a\": invalid syntax"},
                        {"a-0", "strconv.Atoi: parsing \"a\": invalid syntax"},
                        {"0,a", "strconv.Atoi: parsing \"a\": invalid syntax"},
                        {"a,0", "strconv.Atoi: parsing \"a\": invalid syntax"},
                        {"1-2,a,3-5", "strconv.Atoi: parsing \"a\": invalid syntax"},
                        {"0,", "strconv.Atoi: parsing \"\": invalid syntax"},
                        {"0,,", "strconv.Atoi: parsing \"\": invalid syntax"},
                        {",3", "strconv.Atoi: parsing \"\": invalid syntax"},
                        {",,3", "strconv.Atoi: parsing \"\": invalid syntax"},
                        {"0,,3", "strconv.Atoi: parsing \"\": invalid syntax"},
                        {"-1", "strconv.Atoi: parsing \"\": invalid syntax"},
                        {"1-", "strconv.Atoi: parsing \"\": invalid syntax"},
                        {"1,2-,3", "strconv.Atoi: parsing \"\": invalid syntax"},
                        {"1,-2,3", "strconv.Atoi: parsing \"\": invalid syntax"},
                        {"-1--2", "strconv.Atoi: parsing \"\": invalid syntax"},
                        {"--1", "strconv.Atoi: parsing \"\": invalid syntax"},
                        {"1--", "strconv.Atoi: parsing \"-\": invalid syntax"},
                        {"3-0", "invalid range \"3-0\" (3 > 0)"},
                        {"0--3", "invalid range \"0--3\" (0 > -3)"},
                        {"1-2-3", "strconv.Atoi: parsing \"2-3\": invalid syntax"},
                        {" 1", "strconv.Atoi: parsing \" 1\": invalid syntax"},
                        {"1\n", "strconv.Atoi: parsing \"1\\n\": invalid syntax"},
                        {"+", "strconv.Atoi: parsing \"+\": invalid syntax"},
                        {"\x01", "strconv.Atoi: parsing \"\\x01\": invalid syntax"},
                        {"\xff", "strconv.Atoi: parsing \"\\xff\": invalid syntax"},
                        {"caf\xc3\xa9", "strconv.Atoi: parsing \"caf\xc3\xa9\": invalid syntax"},
                        {"99999999999999999999",
                         "strconv.Atoi: parsing \"99999999999999999999\": value out of range"},
                        /* ParseInt reports overflow before the garbage that follows it. */
                        {"99999999999999999999x",
                         "strconv.Atoi: parsing \"99999999999999999999x\": value out of range"},
                        {"9223372036854775807x",
                         "strconv.Atoi: parsing \"9223372036854775807x\": invalid syntax"},
                        {"9223372036854775808",
                         "strconv.Atoi: parsing \"9223372036854775808\": value out of range"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_error err = NCM_ERROR_INIT;
                ncm_cpuset *s = NULL;
                assert_int_equal(ncm_cpuset_parse_list(cases[i].in, &s, &err), -EINVAL);
                assert_null(s);
                assert_string_equal(err.msg, cases[i].msg);
                assert_int_equal(err.code, EINVAL);
        }
}

static void test_cpuset_parse_list_rejects_ids_above_limit(void **state)
{
        static const char *const cases[] = {"8192", "0-8192", "5,9000", "9223372036854775807",
                                            "0-100000000000"};
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_error err = NCM_ERROR_INIT;
                ncm_cpuset *s = NULL;
                assert_int_equal(ncm_cpuset_parse_list(cases[i], &s, &err), -ERANGE);
                assert_null(s);
                assert_non_null(strstr(err.msg, "out of range (maximum 8191)"));
        }
}

static void test_cpuset_parse_sysfs_list(void **state)
{
        static const struct {
                const char *in, *out;
        } ok[] = {
                        {"0-3,8\n", "0-3,8"}, {"\n", ""},           {"", ""},
                        {"0\n", "0"},         {"0-255\n", "0-255"}, {"1,3,5\n", "1,3,5"},
        };
        static const char *const bad[] = {"a\n",  "0-\n",  "3-1\n", ",1\n",
                                          "1,\n", "1 2\n", "-1\n",  "0-3,,4\n"};
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(ok); i++) {
                ncm_cpuset *s = NULL;
                assert_int_equal(ncm_cpuset_parse_sysfs_list(ok[i].in, &s, NULL), 0);
                tu_assert_cpuset(s, ok[i].out);
                ncm_cpuset_free(s);
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++) {
                ncm_error err = NCM_ERROR_INIT;
                ncm_cpuset *s = NULL;
                assert_int_equal(ncm_cpuset_parse_sysfs_list(bad[i], &s, &err), -EINVAL);
                assert_null(s);
                assert_non_null(strstr(err.msg, "invalid CPU list"));
        }
        {
                ncm_cpuset *s = NULL;
                assert_int_equal(ncm_cpuset_parse_sysfs_list("0-99999\n", &s, NULL), -ERANGE);
                assert_null(s);
        }
}

static void test_cpuset_parse_mask(void **state)
{
        static const struct {
                const char *in, *out;
        } ok[] = {
                        {"0000010f\n", "0-3,8"},
                        {"00000001,00000000\n", "32"},
                        {"ff", "0-7"},
                        {"0\n", ""},
                        {"80000000,00000000,00000001", "0,95"},
        };
        static const char *const bad[] = {"",           "\n",        "xyz",      "1,2",
                                          "0000000001", ",00000001", "00000001,"};
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(ok); i++) {
                ncm_cpuset *s = NULL;
                assert_int_equal(ncm_cpuset_parse_mask(ok[i].in, &s, NULL), 0);
                tu_assert_cpuset(s, ok[i].out);
                ncm_cpuset_free(s);
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++) {
                ncm_cpuset *s = NULL;
                assert_int_equal(ncm_cpuset_parse_mask(bad[i], &s, NULL), -EINVAL);
                assert_null(s);
        }
}

/* The mask's bits are set a hex digit at a time: every bit lands where the bit-by-bit reading
 * put it, and the first set bit past the maximum is the one named. */
static void test_cpuset_parse_mask_wide(void **state)
{
        char *text = malloc(260 * 9 + 1), *p = text;
        ncm_cpuset *s = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        /* 256 words: bits 8191 (the maximum), 4096..4099, 37, 0 */
        for (int w = 255; w >= 0; w--) {
                unsigned v = w == 255   ? 0x80000000u
                             : w == 128 ? 0xfu
                             : w == 1   ? 0x20u
                             : w == 0   ? 1u
                                        : 0u;
                p += sprintf(p, w ? "%08x," : "%08x\n", v);
        }
        assert_int_equal(ncm_cpuset_parse_mask(text, &s, &err), 0);
        tu_assert_cpuset(s, "0,37,4096-4099,8191");
        s = ncm_cpuset_free(s);
        /* a 257th word: zeros are no CPU, a set bit past the maximum is named */
        memmove(text + 9, text, strlen(text) + 1);
        memcpy(text, "00000000,", 9);
        assert_int_equal(ncm_cpuset_parse_mask(text, &s, &err), 0);
        s = ncm_cpuset_free(s);
        memcpy(text, "00000040,", 9);
        assert_int_equal(ncm_cpuset_parse_mask(text, &s, &err), -ERANGE);
        assert_string_equal(err.msg, "CPU mask: CPU id 8198 out of range (maximum 8191)");
        assert_null(s);
        free(text);
}

static void test_cpuset_set_range_bounds(void **state)
{
        ncm_autoptr(ncm_cpuset) s = ncm_cpuset_new();
        (void)state;
        assert_int_equal(ncm_cpuset_set(s, -1), -ERANGE);
        assert_int_equal(ncm_cpuset_set(s, NCM_CPUSET_MAX_CPUS), -ERANGE);
        assert_int_equal(ncm_cpuset_set_range(s, 5, 4), -EINVAL);
        assert_int_equal(ncm_cpuset_set_range(s, 0, NCM_CPUSET_MAX_CPUS), -ERANGE);
        assert_int_equal(ncm_cpuset_set_range(s, 60, 130), 0);
        tu_assert_cpuset(s, "60-130");
        assert_int_equal(ncm_cpuset_weight(s), 71);
        assert_int_equal(ncm_cpuset_set_range(s, 0, 63), 0);
        tu_assert_cpuset(s, "0-130");
}

static void test_cpuset_compare_orders_by_lowest_element(void **state)
{
        ncm_autoptr(ncm_cpuset) a = SET(0, 5);
        ncm_autoptr(ncm_cpuset) b = SET(1);
        ncm_autoptr(ncm_cpuset) c = SET(0, 5);
        (void)state;
        assert_true(ncm_cpuset_compare(a, b) < 0);
        assert_true(ncm_cpuset_compare(b, a) > 0);
        assert_int_equal(ncm_cpuset_compare(a, c), 0);
}

/* Word-wise operations against a plain array model, over random sets up to 8192 CPUs. */
static void test_cpuset_random_ops_match_model(void **state)
{
        static bool ma[NCM_CPUSET_MAX_CPUS], mb[NCM_CPUSET_MAX_CPUS];
        unsigned seed = 12345;
        (void)state;
        for (int round = 0; round < 200; round++) {
                ncm_autoptr(ncm_cpuset) a = ncm_cpuset_new();
                ncm_autoptr(ncm_cpuset) b = ncm_cpuset_new();
                ncm_autoptr(ncm_cpuset) r = ncm_cpuset_new();
                int limit = 1 + (int)(rand_r(&seed) % NCM_CPUSET_MAX_CPUS);
                int n = (int)(rand_r(&seed) % 300);
                int wa = 0, wb = 0, wand = 0, wor = 0, wnot = 0, prev = -1, cnt = 0;
                memset(ma, 0, sizeof(ma));
                memset(mb, 0, sizeof(mb));
                for (int i = 0; i < n; i++) {
                        int x = (int)(rand_r(&seed) % (unsigned)limit);
                        int y = (int)(rand_r(&seed) % (unsigned)limit);
                        ncm_cpuset_set(a, x), ma[x] = true;
                        ncm_cpuset_set(b, y), mb[y] = true;
                }
                for (int i = 0; i < NCM_CPUSET_MAX_CPUS; i++) {
                        wa += ma[i], wb += mb[i], wand += ma[i] && mb[i];
                        wor += ma[i] || mb[i], wnot += ma[i] && !mb[i];
                }
                assert_int_equal(ncm_cpuset_weight(a), wa);
                assert_int_equal(ncm_cpuset_weight(b), wb);
                ncm_cpuset_and(r, a, b);
                assert_int_equal(ncm_cpuset_weight(r), wand);
                ncm_cpuset_or(r, a, b);
                assert_int_equal(ncm_cpuset_weight(r), wor);
                ncm_cpuset_andnot(r, a, b);
                assert_int_equal(ncm_cpuset_weight(r), wnot);
                NCM_CPUSET_FOREACH(cpu, a)
                {
                        assert_true(cpu > prev);
                        assert_true(ma[cpu]);
                        prev = cpu;
                        cnt++;
                }
                assert_int_equal(cnt, wa);
                /* format(parse(format(x))) is stable. */
                {
                        ncm_autofree char *t = ncm_cpuset_format_list(a);
                        ncm_autoptr(ncm_cpuset) back = tu_cpuset(t);
                        assert_true(ncm_cpuset_equal(a, back));
                }
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cpuset_size_and_empty),
                        cmocka_unit_test(test_cpuset_contains),
                        cmocka_unit_test(test_cpuset_equal_and_subset),
                        cmocka_unit_test(test_cpuset_union_intersection_difference),
                        cmocka_unit_test(test_cpuset_format_list),
                        cmocka_unit_test(test_cpuset_parse_list_accepts_kubelet_forms),
                        cmocka_unit_test(test_cpuset_parse_list_rejects_with_kubelet_errors),
                        cmocka_unit_test(test_cpuset_parse_list_rejects_ids_above_limit),
                        cmocka_unit_test(test_cpuset_parse_sysfs_list),
                        cmocka_unit_test(test_cpuset_parse_mask),
                        cmocka_unit_test(test_cpuset_parse_mask_wide),
                        cmocka_unit_test(test_cpuset_set_range_bounds),
                        cmocka_unit_test(test_cpuset_compare_orders_by_lowest_element),
                        cmocka_unit_test(test_cpuset_random_ops_match_model),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
