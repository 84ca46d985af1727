/* SPDX-License-Identifier: Apache-2.0 */
/* Go durations: the vectors of Go's own time package tests (parse and String). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>

#include <nodecm/duration.h>
#include "testutil.h"

static void test_duration_parse(void **state)
{
        static const struct {
                const char *in;
                int64_t ns;
        } ok[] = {
                        {"0", 0},
                        {"5s", 5000000000LL},
                        {"30s", 30000000000LL},
                        {"1478s", 1478000000000LL},
                        {"-5s", -5000000000LL},
                        {"+5s", 5000000000LL},
                        {"-0", 0},
                        {"+0", 0},
                        {"5.0s", 5000000000LL},
                        {"5.6s", 5600000000LL},
                        {"5.s", 5000000000LL},
                        {".5s", 500000000LL},
                        {"1.004s", 1004000000LL},
                        {"100.00100s", 100001000000LL},
                        {"10ns", 10},
                        {"11us", 11000},
                        {"12\xc2\xb5s", 12000},
                        {"12\xce\xbcs", 12000},
                        {"13ms", 13000000},
                        {"15m", 900000000000LL},
                        {"16h", 57600000000000LL},
                        {"3h30m", 12600000000000LL},
                        {"10.5s4m", 250500000000LL},
                        {"-2m3.4s", -123400000000LL},
                        {"1h2m3s4ms5us6ns", 3723004005006LL},
                        {"39h9m14.425s", 0},
                        {"52763797000ns", 52763797000LL},
                        {"0.3333333333333333333h", 1200000000000LL},
                        {"9007199254740993ns", 9007199254740993LL},
                        {"9223372036854775807ns", INT64_MAX},
                        {"9223372036.854775807s", INT64_MAX},
                        {"-9223372036854775808ns", INT64_MIN},
                        {"100ms", 100000000},
        };
        static const char *const bad[] = {"",
                                          "3",
                                          "-",
                                          "s",
                                          ".",
                                          "-.",
                                          ".s",
                                          "+.s",
                                          "1d",
                                          "3000000h",
                                          "9223372036854775808ns",
                                          "1s1",
                                          "\xe2\x80\x8b"};
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(ok); i++) {
                int64_t v = -42;
                ncm_error err = NCM_ERROR_INIT;
                if (strcmp(ok[i].in, "39h9m14.425s") == 0) {
                        assert_int_equal(ncm_duration_parse(ok[i].in, &v, &err), 0);
                        assert_true(v == (39LL * 3600 + 9 * 60) * 1000000000LL + 14425000000LL);
                        continue;
                }
                assert_int_equal(ncm_duration_parse(ok[i].in, &v, &err), 0);
                assert_true(v == ok[i].ns);
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++) {
                int64_t v = -42;
                assert_true(ncm_duration_parse(bad[i], &v, NULL) < 0);
                assert_true(v == -42);
        }
        {
                ncm_error err = NCM_ERROR_INIT;
                int64_t v;
                assert_int_equal(ncm_duration_parse("3", &v, &err), -EINVAL);
                assert_string_equal(err.msg, "time: missing unit in duration \"3\"");
                assert_int_equal(ncm_duration_parse("1d", &v, &err), -EINVAL);
                assert_string_equal(err.msg, "time: unknown unit \"d\" in duration \"1d\"");
                assert_int_equal(ncm_duration_parse("x", &v, &err), -EINVAL);
                assert_string_equal(err.msg, "time: invalid duration \"x\"");
        }
}

static void test_duration_format(void **state)
{
        static const struct {
                int64_t ns;
                const char *out;
        } t[] = {
                        {0, "0s"},
                        {1, "1ns"},
                        {1100, "1.1\xc2\xb5s"},
                        {2200000, "2.2ms"},
                        {3300000000LL, "3.3s"},
                        {245000000000LL, "4m5s"},
                        {245001000000LL, "4m5.001s"},
                        {18367001000000LL, "5h6m7.001s"},
                        {480000000001LL, "8m0.000000001s"},
                        {INT64_MAX, "2562047h47m16.854775807s"},
                        {INT64_MIN, "-2562047h47m16.854775808s"},
                        {200000000, "200ms"},
                        {2000000000, "2s"},
                        {-1, "-1ns"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                char buf[NCM_DURATION_STRLEN];
                assert_string_equal(ncm_duration_format(t[i].ns, buf), t[i].out);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_duration_parse),
                        cmocka_unit_test(test_duration_format),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
