/* SPDX-License-Identifier: Apache-2.0 */
/* The growable array of lib/base: growth, zeroed slots, and a refusal that keeps the array. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "testutil.h"

typedef struct item {
        char *name;
        int value;
} item;

static void test_array_append(void **state)
{
        item *v = NULL;
        size_t n = 0, cap = 0;

        (void)state;
        for (int i = 0; i < 1000; i++) {
                assert_int_equal(ncm__array_grow(v, cap, n), 0);
                assert_true(cap > n);
                /* the slot comes zeroed */
                assert_null(v[n].name);
                assert_int_equal(v[n].value, 0);
                v[n++].value = i;
        }
        for (size_t i = 0; i < n; i++)
                assert_int_equal(v[i].value, (int)i);
        /* doubling: 8, 16, ..., 1024 */
        assert_int_equal(cap, 1024);
        free(v);
}

static void test_array_no_growth_needed(void **state)
{
        int *v = NULL;
        size_t cap = 0;
        int *before;

        (void)state;
        assert_int_equal(ncm__array_grow(v, cap, 0), 0);
        assert_int_equal(cap, 8);
        before = v;
        for (size_t i = 0; i < 8; i++)
                assert_int_equal(ncm__array_grow(v, cap, i), 0);
        assert_ptr_equal(v, before);
        /* room for an index far past the end, in one call */
        assert_int_equal(ncm__array_grow(v, cap, 100), 0);
        assert_int_equal(cap, 128);
        assert_int_equal(v[100], 0);
        free(v);
}

static void test_array_overflow(void **state)
{
        int *v = NULL;
        size_t cap = 0;
        int *kept;

        (void)state;
        assert_int_equal(ncm__array_grow(v, cap, 3), 0);
        v[3] = 42;
        kept = v;
        /* a size that cannot be allocated fails with the array and its capacity as they were */
        assert_int_equal(ncm__array_grow(v, cap, SIZE_MAX / 2), -ENOMEM);
        assert_int_equal(ncm__array_grow(v, cap, SIZE_MAX), -ENOMEM);
        assert_ptr_equal(v, kept);
        assert_int_equal(cap, 8);
        assert_int_equal(v[3], 42);
        free(v);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_array_append),
                        cmocka_unit_test(test_array_no_growth_needed),
                        cmocka_unit_test(test_array_overflow),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
