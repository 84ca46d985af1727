/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NUMA bitmasks: kubelet's IterateBitMasks order, IsNarrowerThan, String() widths, and the
 * 0-63 range check.
 */
#include <errno.h>
#include <string.h>

#include <nodecm/bitmask.h>
#include "testutil.h"

static ncm_bitmask mask_of(const int *bits, size_t n)
{
        ncm_bitmask m = 0;
        assert_int_equal(ncm_bitmask_from_bits(bits, n, &m, NULL), 0);
        return m;
}
#define M(...) mask_of((const int[]){__VA_ARGS__}, sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

static void test_bitmask_iterate_order_three_bits(void **state)
{
        /* kubelet bitmask_test TestIterateBitMasks: size first, then lexicographic. */
        const int bits[] = {0, 1, 2};
        const ncm_bitmask expect[] = {M(0), M(1), M(2), M(0, 1), M(0, 2), M(1, 2), M(0, 1, 2)};
        ncm_bitmask_iter it;
        ncm_bitmask m;
        size_t i = 0;
        (void)state;
        assert_int_equal(ncm_bitmask_iter_init(&it, bits, 3, NULL), 0);
        while (ncm_bitmask_iter_next(&it, &m)) {
                assert_true(i < NCM_ELEMENTSOF(expect));
                assert_int_equal(m, expect[i]);
                i++;
        }
        assert_int_equal(i, NCM_ELEMENTSOF(expect));
}

static void test_bitmask_iterate_follows_list_positions(void **state)
{
        /* Non-contiguous ids: order is by position in the list, masks carry the ids. */
        const int bits[] = {1, 3, 6};
        const ncm_bitmask expect[] = {M(1), M(3), M(6), M(1, 3), M(1, 6), M(3, 6), M(1, 3, 6)};
        ncm_bitmask_iter it;
        ncm_bitmask m;
        size_t i = 0;
        (void)state;
        assert_int_equal(ncm_bitmask_iter_init(&it, bits, 3, NULL), 0);
        while (ncm_bitmask_iter_next(&it, &m))
                assert_int_equal(m, expect[i++]);
        assert_int_equal(i, 7);
}

static void test_bitmask_iterate_counts(void **state)
{
        (void)state;
        for (int n = 0; n <= 12; n++) {
                int bits[12];
                ncm_bitmask_iter it;
                ncm_bitmask m, prev = 0;
                int count = 0, prev_size = 0;
                for (int i = 0; i < n; i++)
                        bits[i] = i;
                assert_int_equal(ncm_bitmask_iter_init(&it, bits, n, NULL), 0);
                while (ncm_bitmask_iter_next(&it, &m)) {
                        int size = ncm_bitmask_count(m);
                        assert_true(size >= prev_size);
                        /* Within a size, lexicographic by position = descending reversed
                         * order of bits is not obvious; check strictly "no repeats". */
                        assert_true(m != prev);
                        prev = m;
                        prev_size = size;
                        count++;
                }
                assert_int_equal(count, (1 << n) - 1);
        }
}

static void test_bitmask_rejects_out_of_range_bits(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_bitmask m = 7;
        ncm_bitmask_iter it;
        (void)state;
        assert_int_equal(ncm_bitmask_from_bits((const int[]){64}, 1, &m, &err), -EINVAL);
        assert_string_equal(err.msg, "bit number must be in range 0-63");
        assert_int_equal(m, 7);
        assert_int_equal(ncm_bitmask_from_bits((const int[]){-1}, 1, &m, NULL), -EINVAL);
        assert_int_equal(ncm_bitmask_iter_init(&it, (const int[]){0, 64}, 2, NULL), -EINVAL);
        assert_int_equal(ncm_bitmask_from_bits((const int[]){63, 0}, 2, &m, NULL), 0);
        assert_int_equal(m, (UINT64_C(1) << 63) | 1);
}

static void test_bitmask_narrower_than(void **state)
{
        /* kubelet TestIsNarrowerThan: fewer bits wins; equal counts: lower value wins. */
        (void)state;
        assert_true(ncm_bitmask_is_narrower_than(M(0), M(0, 1)));
        assert_false(ncm_bitmask_is_narrower_than(M(0, 1), M(0)));
        assert_true(ncm_bitmask_is_narrower_than(M(0), M(1)));
        assert_false(ncm_bitmask_is_narrower_than(M(1), M(0)));
        assert_true(ncm_bitmask_is_narrower_than(M(0, 2), M(1, 2)));
        assert_false(ncm_bitmask_is_narrower_than(M(0, 1), M(0, 1)));
        assert_true(ncm_bitmask_is_narrower_than(M(5), M(0, 1)));
}

static void test_bitmask_to_bits(void **state)
{
        int bits[64];
        (void)state;
        assert_int_equal(ncm_bitmask_to_bits(0, bits), 0);
        assert_int_equal(ncm_bitmask_to_bits(M(0, 5, 63), bits), 3);
        assert_int_equal(bits[0], 0);
        assert_int_equal(bits[1], 5);
        assert_int_equal(bits[2], 63);
}

static void test_bitmask_format_matches_kubelet_widths(void **state)
{
        static const struct {
                ncm_bitmask m;
                const char *s;
        } cases[] = {
                        {0, "00"},   {1, "01"},    {2, "10"},     {3, "11"},      {4, "100"},
                        {5, "0101"}, {15, "1111"}, {16, "10000"}, {17, "010001"},
        };
        char buf[66];
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_bitmask_format(cases[i].m, buf);
                assert_string_equal(buf, cases[i].s);
        }
        ncm_bitmask_format(UINT64_MAX, buf);
        assert_int_equal(strlen(buf), 64);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_bitmask_iterate_order_three_bits),
                        cmocka_unit_test(test_bitmask_iterate_follows_list_positions),
                        cmocka_unit_test(test_bitmask_iterate_counts),
                        cmocka_unit_test(test_bitmask_rejects_out_of_range_bits),
                        cmocka_unit_test(test_bitmask_narrower_than),
                        cmocka_unit_test(test_bitmask_to_bits),
                        cmocka_unit_test(test_bitmask_format_matches_kubelet_widths),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
