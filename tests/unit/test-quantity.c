/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes quantities: apimachinery's own test tables (parse, canonical text, rounding,
 * comparison, arithmetic), its exact error texts, and values beyond int64.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/quantity.h>
#include "testutil.h"

#define DSI NCM_QUANTITY_DECIMAL_SI
#define BSI NCM_QUANTITY_BINARY_SI
#define DEX NCM_QUANTITY_DECIMAL_EXPONENT

static ncm_quantity parse_ok(const char *s)
{
        ncm_quantity q;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_quantity_parse(s, &q, &err) < 0)
                fail_msg("parse(\"%s\"): %s", s, err.msg);
        return q;
}

static const char *str(const ncm_quantity *q, char buf[NCM_QUANTITY_STRLEN])
{
        return ncm_quantity_to_string(q, buf);
}

/* decQuantity(m, e, f) of the Go tests. */
static ncm_quantity dec(int64_t m, int32_t e, ncm_quantity_format f)
{
        return ncm_quantity_from_scaled(m, e, f);
}

struct parse_case {
        const char *in;
        int64_t m;
        int32_t e;
        ncm_quantity_format f;
};

static const struct parse_case parse_table[] = {
                {"0", 0, 0, DSI},
                {"0n", 0, 0, DSI},
                {"0u", 0, 0, DSI},
                {"0m", 0, 0, DSI},
                {"0Ki", 0, 0, BSI},
                {"0k", 0, 0, DSI},
                {"0Mi", 0, 0, BSI},
                {"0M", 0, 0, DSI},
                {"0Gi", 0, 0, BSI},
                {"0G", 0, 0, DSI},
                {"0Ti", 0, 0, BSI},
                {"0T", 0, 0, DSI},
                {"1", 1, 0, DSI},
                {"1Ki", 1024, 0, BSI},
                {"8Ki", 8 * 1024, 0, BSI},
                {"7Mi", 7 * 1024 * 1024, 0, BSI},
                {"6Gi", 6LL * 1024 * 1024 * 1024, 0, BSI},
                {"5Ti", 5LL * 1024 * 1024 * 1024 * 1024, 0, BSI},
                {"4Pi", 4LL * 1024 * 1024 * 1024 * 1024 * 1024, 0, BSI},
                {"3Ei", 3LL * 1024 * 1024 * 1024 * 1024 * 1024 * 1024, 0, BSI},
                {"10Ti", 10LL * 1024 * 1024 * 1024 * 1024, 0, BSI},
                {"100Ti", 100LL * 1024 * 1024 * 1024 * 1024, 0, BSI},
                {"5n", 5, -9, DSI},
                {"4u", 4, -6, DSI},
                {"3m", 3, -3, DSI},
                {"9", 9, 0, DSI},
                {"8k", 8, 3, DSI},
                {"50k", 5, 4, DSI},
                {"7M", 7, 6, DSI},
                {"6G", 6, 9, DSI},
                {"5T", 5, 12, DSI},
                {"40T", 4, 13, DSI},
                {"300T", 3, 14, DSI},
                {"2P", 2, 15, DSI},
                {"1E", 1, 18, DSI},
                {"1E-3", 1, -3, DEX},
                {"1e3", 1, 3, DEX},
                {"1E6", 1, 6, DEX},
                {"1e9", 1, 9, DEX},
                {"1E12", 1, 12, DEX},
                {"1e15", 1, 15, DEX},
                {"1E18", 1, 18, DEX},
                {"1e14", 1, 14, DEX},
                {"1e13", 1, 13, DEX},
                {"100.035k", 100035, 0, DSI},
                {"0.001", 1, -3, DSI},
                {"0.0005k", 5, -1, DSI},
                {"0.005", 5, -3, DSI},
                {"0.05", 5, -2, DSI},
                {"0.5", 5, -1, DSI},
                {"0.00050k", 5, -1, DSI},
                {"0.00500", 5, -3, DSI},
                {"0.05000", 5, -2, DSI},
                {"0.50000", 5, -1, DSI},
                {"0.5e0", 5, -1, DEX},
                {"0.5e-1", 5, -2, DEX},
                {"0.5e-2", 5, -3, DEX},
                {"10.035M", 10035, 3, DSI},
                {"1.2e3", 12, 2, DEX},
                {"1.3E+6", 13, 5, DEX},
                {"1.40e9", 14, 8, DEX},
                {"1.53E12", 153, 10, DEX},
                {"1.6e15", 16, 14, DEX},
                {"1.7E18", 17, 17, DEX},
                {"9.01", 901, -2, DSI},
                {"8.1k", 81, 2, DSI},
                {"7.123456M", 7123456, 0, DSI},
                {"6.987654321G", 6987654321LL, 0, DSI},
                {"5.444T", 5444, 9, DSI},
                {"40.1T", 401, 11, DSI},
                {"300.2T", 3002, 11, DSI},
                {"2.5P", 25, 14, DSI},
                {"1.01E", 101, 16, DSI},
                /* rounded up to 1n, or capped */
                {"3.001n", 4, -9, DSI},
                {"1.1E-9", 2, -9, DEX},
                {"0.0000000001", 1, -9, DSI},
                {"0.0000000005", 1, -9, DSI},
                {"0.00000000050", 1, -9, DSI},
                {"0.5e-9", 1, -9, DEX},
                {"0.9n", 1, -9, DSI},
                {"0.00000012345", 124, -9, DSI},
                {"0.00000012354", 124, -9, DSI},
                {"9Ei", INT64_MAX, 0, BSI},
                {"9223372036854775807Ki", INT64_MAX, 0, BSI},
                {"12E", 12, 18, DSI},
                /* fractional binary */
                {"100.035Ki", 10243584, -2, BSI},
                {"0.5Mi", 512 * 1024, 0, BSI},
                {"0.05Gi", 536870912, -1, BSI},
                {"0.025Ti", 274877906944LL, -1, BSI},
                /* "written by trolls" */
                {"0.000000000001Ki", 2, -9, DSI},
                {".001", 1, -3, DSI},
                {".0001k", 100, -3, DSI},
                {"1.", 1, 0, DSI},
                {"1.G", 1, 9, DSI},
};

static void check_parse(const char *in, ncm_quantity expect, ncm_quantity_format f)
{
        char a[NCM_QUANTITY_STRLEN], b[NCM_QUANTITY_STRLEN];
        ncm_quantity got = parse_ok(in);
        if (ncm_quantity_cmp(&got, &expect) != 0)
                fail_msg("%s: expected %s, got %s", in, str(&expect, a), str(&got, b));
        if (got.format != f)
                fail_msg("%s: expected format %d, got %d", in, f, got.format);
}

static void test_quantity_parse_table(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(parse_table); i++) {
                const struct parse_case *c = &parse_table[i];
                ncm_quantity expect = dec(c->m, c->e, c->f);
                char buf[128];

                check_parse(c->in, expect, c->f);
                /* The same with an explicit sign. */
                snprintf(buf, sizeof(buf), "+%s", c->in);
                check_parse(buf, expect, c->f);
                snprintf(buf, sizeof(buf), "-%s", c->in);
                ncm_quantity_neg(&expect);
                check_parse(buf, expect, c->f);
        }
}

static void test_quantity_parse_grammar_quirks(void **state)
{
        char b[NCM_QUANTITY_STRLEN];
        static const struct {
                const char *in, *canonical;
        } table[] = {
                        /* A lone sign, a lone dot, or a suffix alone is zero to apimachinery. */
                        {".", "0"},      {"-.", "0"},   {"+", "0"},
                        {"-", "0"},      {"e3", "0"},   {"Ki", "0"},
                        {"m", "0"},      {"000", "0"},  {"-000", "0"},
                        {"0Pi", "0"},    {"+1", "1"},   {"010", "10"},
                        {".5", "500m"},  {"1E", "1E"},  {"8Ei", "9223372036854775807"},
                        {"1e+3", "1e3"}, {"1E-0", "1"}, {"1e0003", "1e3"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++) {
                ncm_quantity q = parse_ok(table[i].in);
                assert_string_equal(str(&q, b), table[i].canonical);
        }
}

static void expect_error(const char *in, int code, const char *msg)
{
        ncm_quantity q = dec(7, 0, DSI), before = q;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_quantity_parse(in, &q, &err);
        if (r != code)
                fail_msg("\"%s\": expected %d, got %d (%s)", in, code, r, err.msg);
        assert_string_equal(err.msg, msg);
        /* *ret is untouched on failure. */
        assert_int_equal(ncm_quantity_cmp(&q, &before), 0);
}

static void test_quantity_parse_errors(void **state)
{
        static const struct {
                const char *in, *msg;
        } table[] = {
                        {"", NCM_QUANTITY_ERR_FORMAT},
                        {"1.1.M", NCM_QUANTITY_ERR_FORMAT},
                        {"1+1.0M", NCM_QUANTITY_ERR_FORMAT},
                        {"0.1mi", NCM_QUANTITY_ERR_SUFFIX},
                        {"0.1am", NCM_QUANTITY_ERR_FORMAT},
                        {"aoeu", NCM_QUANTITY_ERR_FORMAT},
                        {".5i", NCM_QUANTITY_ERR_SUFFIX},
                        {"1i", NCM_QUANTITY_ERR_SUFFIX},
                        {"-3.01i", NCM_QUANTITY_ERR_SUFFIX},
                        {"-3.01e-", NCM_QUANTITY_ERR_SUFFIX},
                        {"1e4294967297", NCM_QUANTITY_ERR_SUFFIX},
                        {" 1", NCM_QUANTITY_ERR_FORMAT},
                        {"1 ", NCM_QUANTITY_ERR_FORMAT},
                        {"2x", NCM_QUANTITY_ERR_FORMAT},
                        {"1e", NCM_QUANTITY_ERR_SUFFIX},
                        {"1K", NCM_QUANTITY_ERR_SUFFIX},
                        {"1ki", NCM_QUANTITY_ERR_SUFFIX},
                        {"1KiB", NCM_QUANTITY_ERR_FORMAT},
                        {"1Ki3", NCM_QUANTITY_ERR_SUFFIX},
                        {"1e3e", NCM_QUANTITY_ERR_FORMAT},
                        {"1Ee3", NCM_QUANTITY_ERR_SUFFIX},
                        {"1-", NCM_QUANTITY_ERR_SUFFIX},
                        {"--1", NCM_QUANTITY_ERR_SUFFIX},
                        {"0x10", NCM_QUANTITY_ERR_FORMAT},
                        /* apimachinery's arbitrary-precision path wants a digit */
                        {"e-10", NCM_QUANTITY_ERR_NUMERIC},
                        {".e-10", NCM_QUANTITY_ERR_NUMERIC},
                        {"-Pi", NCM_QUANTITY_ERR_NUMERIC},
                        {".Ei", NCM_QUANTITY_ERR_NUMERIC},
                        /* exponents are int32 scales that get negated */
                        {"1E2147483648", NCM_QUANTITY_ERR_SUFFIX},
                        {"1E-2147483648", NCM_QUANTITY_ERR_SUFFIX},
                        {"1E8589934592", NCM_QUANTITY_ERR_SUFFIX},
                        {"1E9223372036854775807", NCM_QUANTITY_ERR_SUFFIX},
                        {"1E9223372036854775808", NCM_QUANTITY_ERR_SUFFIX},
                        {"1E6024865272343", NCM_QUANTITY_ERR_SUFFIX},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++)
                expect_error(table[i].in, -EINVAL, table[i].msg);
        assert_string_equal(NCM_QUANTITY_ERR_FORMAT,
                            "quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        assert_string_equal(NCM_QUANTITY_ERR_NUMERIC, "unable to parse numeric part of quantity");
        assert_string_equal(NCM_QUANTITY_ERR_SUFFIX, "unable to parse quantity's suffix");
}

static void test_quantity_parse_nul_and_length(void **state)
{
        ncm_quantity q;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm_quantity_parse_n("1\0", 2, &q, &err), -EINVAL);
        assert_string_equal(err.msg, NCM_QUANTITY_ERR_FORMAT);
        assert_int_equal(ncm_quantity_parse_n("12", 1, &q, NULL), 0);
        assert_int_equal(ncm_quantity_value(&q), 1);
        assert_int_equal(ncm_quantity_parse_n("", 0, &q, NULL), -EINVAL);
}

static void test_quantity_exponent_bounds(void **state)
{
        char b[NCM_QUANTITY_STRLEN];
        ncm_quantity q = parse_ok("1E2147483647");
        (void)state;
        assert_int_equal(q.format, DEX);
        assert_string_equal(str(&q, b), "10e2147483646");
        assert_int_equal(ncm_quantity_value(&q), INT64_MAX);
        q = parse_ok("1E-2147483647");
        assert_string_equal(str(&q, b), "1e-9");
        q = parse_ok("-1.5e-2147483647");
        assert_string_equal(str(&q, b), "-1e-9");
        assert_int_equal(ncm_quantity_value(&q), -1);
}

struct string_case {
        int64_t m;
        int32_t e;
        ncm_quantity_format f;
        const char *expect, *alternate;
};

static const struct string_case string_table[] = {
                {1024 * 1024 * 1024, 0, BSI, "1Gi", "1024Mi"},
                {300 * 1024 * 1024, 0, BSI, "300Mi", "307200Ki"},
                {6 * 1024, 0, BSI, "6Ki", NULL},
                {1001LL * 1024 * 1024 * 1024, 0, BSI, "1001Gi", "1025024Mi"},
                {1024LL * 1024 * 1024 * 1024, 0, BSI, "1Ti", "1024Gi"},
                {5, 0, BSI, "5", "5000m"},
                {500, -3, BSI, "500m", "0.5"},
                {1, 9, DSI, "1G", "1000M"},
                {1000, 6, DSI, "1G", "0.001T"},
                {1000000, 3, DSI, "1G", NULL},
                {1000000000, 0, DSI, "1G", NULL},
                {1, -3, DSI, "1m", "1000u"},
                {80, -3, DSI, "80m", NULL},
                {1080, -3, DSI, "1080m", "1.08"},
                {108, -2, DSI, "1080m", "1080000000n"},
                {10800, -4, DSI, "1080m", NULL},
                {300, 6, DSI, "300M", NULL},
                {1, 12, DSI, "1T", NULL},
                {1, 18, DSI, "1E", NULL},
                {1, 21, DSI, "1e21", "1000E"},
                {5, 21, DSI, "5e21", "5000E"},
                {1, 24, DSI, "1e24", "1000000E"},
                {1, 70, BSI, "10e69", NULL},
                {2, 70, BSI, "20e69", NULL},
                {1, 72, BSI, "1e72", NULL},
                {1234567, 6, DSI, "1234567M", NULL},
                {1234567, -3, BSI, "1234567m", NULL},
                {3, 3, DSI, "3k", NULL},
                {1025, 0, BSI, "1025", NULL},
                {0, 0, DSI, "0", NULL},
                {0, 0, BSI, "0", NULL},
                {1, 9, DEX, "1e9", ".001e12"},
                {1, -3, DEX, "1e-3", "0.001e0"},
                {1, -9, DEX, "1e-9", "1000e-12"},
                {80, -3, DEX, "80e-3", NULL},
                {300, 6, DEX, "300e6", NULL},
                {1, 12, DEX, "1e12", NULL},
                {1, 3, DEX, "1e3", NULL},
                {3, 3, DEX, "3e3", NULL},
                {3, 3, DSI, "3k", NULL},
                {0, 0, DEX, "0", "00"},
                {1, -9, DSI, "1n", NULL},
                {80, -9, DSI, "80n", NULL},
                {1080, -9, DSI, "1080n", NULL},
                {108, -8, DSI, "1080n", NULL},
                {10800, -10, DSI, "1080n", NULL},
                {1, -6, DSI, "1u", NULL},
                {80, -6, DSI, "80u", NULL},
                {1080, -6, DSI, "1080u", NULL},
                /* below "n" only arithmetic reaches: exponent notation */
                {1, -12, DSI, "1e-12", NULL},
                {1, -10, DSI, "100e-12", NULL},
                {2000, 0, BSI, "2000", NULL},
                {-2000, 0, BSI, "-2000", NULL},
};

static void test_quantity_string_table(void **state)
{
        char b[NCM_QUANTITY_STRLEN], want[NCM_QUANTITY_STRLEN + 1];
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(string_table); i++) {
                const struct string_case *c = &string_table[i];
                ncm_quantity q = dec(c->m, c->e, c->f), back, nano;

                if (strcmp(str(&q, b), c->expect) != 0)
                        fail_msg("%lld*10^%d (%d): expected %s, got %s", (long long)c->m, c->e,
                                 c->f, c->expect, b);
                /* The canonical text parses back to the same value (parsing stops at 1n). */
                back = parse_ok(c->expect);
                nano = q;
                (void)ncm_quantity_round_up(&nano, -9);
                assert_int_equal(ncm_quantity_cmp(&back, &nano), 0);
                if (c->alternate) {
                        ncm_quantity alt = parse_ok(c->alternate);
                        assert_string_equal(str(&alt, b), c->expect);
                }
                if (c->m == 0 || c->m < 0)
                        continue;
                ncm_quantity_neg(&q);
                snprintf(want, sizeof(want), "-%s", c->expect);
                assert_string_equal(str(&q, b), want);
        }
}

static void test_quantity_parse_emit(void **state)
{
        static const struct {
                const char *in, *out;
        } table[] = {
                        {"1Ki", "1Ki"},
                        {"1Mi", "1Mi"},
                        {"1Gi", "1Gi"},
                        {"1024Mi", "1Gi"},
                        {"1000M", "1G"},
                        {".001Ki", "1024m"},
                        {".000001Ki", "1024u"},
                        {".000000001Ki", "1024n"},
                        {".000000000001Ki", "2n"},
                        {"1.5", "1500m"},
                        {"1e3", "1e3"},
                        {"1.5Gi", "1536Mi"},
                        {"0.5Gi", "512Mi"},
                        {"100M", "100M"},
                        {"2k", "2k"},
                        {"0.1", "100m"},
                        {"500m", "500m"},
                        {"1000m", "1"},
                        {"1000", "1k"},
                        {"1024", "1024"},
                        {"1024Ki", "1Mi"},
                        {"1536Ki", "1536Ki"},
                        {"0.5Ki", "512"},
        };
        char b[NCM_QUANTITY_STRLEN], want[NCM_QUANTITY_STRLEN + 1], in[64];
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++) {
                ncm_quantity q = parse_ok(table[i].in);
                assert_string_equal(str(&q, b), table[i].out);
                snprintf(in, sizeof(in), "-%s", table[i].in);
                q = parse_ok(in);
                snprintf(want, sizeof(want), "-%s", table[i].out);
                assert_string_equal(str(&q, b), want);
        }
}

/* TestParseQuantity: 18 to 20 digits, around int64. */
static void test_quantity_parse_around_int64(void **state)
{
        static const struct {
                const char *in, *canonical;
        } table[] = {
                        {"-999999999999999999", NULL},
                        {"999999999999999999", NULL},
                        {"-999999999999999999.0", "-999999999999999999"},
                        {"999999999999999999.0", "999999999999999999"},
                        {"-999999999999999999.1", "-999999999999999999100m"},
                        {"999999999999999999.1", "999999999999999999100m"},
                        {"-9999999999999999999", NULL},
                        {"9999999999999999999", NULL},
                        {"-1E", NULL},
                        {"1E", NULL},
                        {"-1000000000000000000", "-1E"},
                        {"1000000000000000000", "1E"},
                        {"-9999999999999999999.0", "-9999999999999999999"},
                        {"9999999999999999999.0", "9999999999999999999"},
                        {"-1.0E", "-1E"},
                        {"1.0E", "1E"},
                        {"-1000000000000000000.0", "-1E"},
                        {"1000000000000000000.0", "1E"},
                        {"-9999999999999999999000m", "-9999999999999999999"},
                        {"9999999999999999999000m", "9999999999999999999"},
                        {"-9999999999999999999.1", "-9999999999999999999100m"},
                        {"9999999999999999999.1", "9999999999999999999100m"},
                        {"-1.0000000000000000001E", "-1000000000000000000100m"},
                        {"1.0000000000000000001E", "1000000000000000000100m"},
                        {"-1000000000000000000.1", "-1000000000000000000100m"},
                        {"1000000000000000000.1", "1000000000000000000100m"},
                        {"-1.000000000000000001E", "-1000000000000000001"},
                        {"1.000000000000000001E", "1000000000000000001"},
                        {"-1000000000000000001", NULL},
                        {"1000000000000000001", NULL},
                        {"-10E", NULL},
                        {"10E", NULL},
                        {"-10000000000000000000", "-10E"},
                        {"10000000000000000000", "10E"},
                        {"-10.0E", "-10E"},
                        {"10.0E", "10E"},
                        {"-10000000000000000000.0", "-10E"},
                        {"10000000000000000000.0", "10E"},
                        {"-10000000000000000000000m", "-10E"},
                        {"10000000000000000000000m", "10E"},
                        {"-10.0000000000000000001E", "-10000000000000000000100m"},
                        {"10.0000000000000000001E", "10000000000000000000100m"},
                        {"-10000000000000000000.1", "-10000000000000000000100m"},
                        {"10000000000000000000.1", "10000000000000000000100m"},
                        {"-10.000000000000000001E", "-10000000000000000001"},
                        {"10.000000000000000001E", "10000000000000000001"},
                        {"-10000000000000000001", NULL},
                        {"10000000000000000001", NULL},
                        {"-9223372036854775809", NULL},
                        {"9223372036854775806", NULL},
                        {"-9223372036854775809.0", "-9223372036854775809"},
                        {"9223372036854775806.0", "9223372036854775806"},
                        {"-9223372036854775809000m", "-9223372036854775809"},
                        {"9223372036854775806000m", "9223372036854775806"},
                        {"-9223372036854775809.1", "-9223372036854775809100m"},
                        {"9223372036854775806.1", "9223372036854775806100m"},
                        {"-9223372036854775808", NULL},
                        {"9223372036854775807", NULL},
                        {"-9223372036854775808.0", "-9223372036854775808"},
                        {"9223372036854775807.0", "9223372036854775807"},
                        {"-9223372036854775808000m", "-9223372036854775808"},
                        {"9223372036854775807000m", "9223372036854775807"},
                        {"-9223372036854775808.1", "-9223372036854775808100m"},
                        {"9223372036854775807.1", "9223372036854775807100m"},
                        {"-9223372036854775807", NULL},
                        {"9223372036854775808", NULL},
                        {"-9223372036854775807.0", "-9223372036854775807"},
                        {"9223372036854775808.0", "9223372036854775808"},
                        {"-9223372036854775807000m", "-9223372036854775807"},
                        {"9223372036854775808000m", "9223372036854775808"},
                        {"-9223372036854775807.1", "-9223372036854775807100m"},
                        {"9223372036854775808.1", "9223372036854775808100m"},
        };
        char b[NCM_QUANTITY_STRLEN];
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++) {
                ncm_quantity q = parse_ok(table[i].in);
                const char *want = table[i].canonical ? table[i].canonical : table[i].in;
                if (strcmp(str(&q, b), want) != 0)
                        fail_msg("%s: expected %s, got %s", table[i].in, want, b);
        }
}

static void test_quantity_value_rounds_away_from_zero(void **state)
{
        static const struct {
                const char *in;
                int64_t value, milli;
        } table[] = {
                        {"-.484785E-7466", -1, -1},
                        {".484785E-7466", 1, 1},
                        {"-.484785E-1", -1, -49},
                        {".484785E-1", 1, 49},
                        {"-0.0005", -1, -1},
                        {"0.0005", 1, 1},
                        {"-1500m", -2, -1500},
                        {"1500m", 2, 1500},
                        {"-9.5000000001Gi", -10200547329LL, -10200547328108LL},
                        {"9.5000000001Gi", 10200547329LL, 10200547328108LL},
                        {"-1", -1, -1000},
                        {"1", 1, 1000},
                        {"0", 0, 0},
                        {"500m", 1, 500},
                        {"100M", 100000000, 100000000000LL},
                        {"1Gi", 1073741824, 1073741824000LL},
                        {"1n", 1, 1},
                        /* beyond int64: saturated */
                        {"1e100", INT64_MAX, INT64_MAX},
                        {"-1e100", INT64_MIN, INT64_MIN},
                        {"12E", INT64_MAX, INT64_MAX},
                        {"9223372036854775807", INT64_MAX, INT64_MAX},
                        {"9223372036854775808", INT64_MAX, INT64_MAX},
                        {"-9223372036854775808", INT64_MIN, INT64_MIN},
                        {"-9223372036854775809", INT64_MIN, INT64_MIN},
                        {"9223372036854775807m", 9223372036854776LL, INT64_MAX},
                        {"9223372036854775808m", 9223372036854776LL, INT64_MAX},
                        {"99999999999999999999999999999999999999", INT64_MAX, INT64_MAX},
                        {"1e-100", 1, 1},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++) {
                ncm_quantity q = parse_ok(table[i].in);
                if (ncm_quantity_value(&q) != table[i].value ||
                    ncm_quantity_milli_value(&q) != table[i].milli)
                        fail_msg("%s: Value %lld MilliValue %lld, want %lld %lld", table[i].in,
                                 (long long)ncm_quantity_value(&q),
                                 (long long)ncm_quantity_milli_value(&q), (long long)table[i].value,
                                 (long long)table[i].milli);
        }
}

static void test_quantity_scaled_value(void **state)
{
        static const struct {
                int32_t from, to;
                int64_t expect;
        } table[] = {
                        {-9, -9, 1},         {-9, -6, 1},      {-9, -3, 1},   {-9, 0, 1},
                        {-6, -9, 1000},      {-6, -6, 1},      {-6, -3, 1},   {-6, 0, 1},
                        {-3, -9, 1000000},   {-3, -6, 1000},   {-3, -3, 1},   {-3, 0, 1},
                        {0, -9, 1000000000}, {0, -6, 1000000}, {0, -3, 1000}, {0, 0, 1},
                        {2, -2, 10000},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++) {
                ncm_quantity q = ncm_quantity_from_scaled(1, table[i].from, DSI);
                assert_int_equal(ncm_quantity_scaled_value(&q, table[i].to), table[i].expect);
        }
}

static void test_quantity_new_scaled_and_milli(void **state)
{
        static const struct {
                int64_t v;
                int32_t scale;
                const char *expect;
        } scaled[] = {
                        {1, -9, "1n"}, {1000, -9, "1u"}, {1, -6, "1u"}, {1000, -6, "1m"},
                        {1, -3, "1m"}, {1000, -3, "1"},  {1, 0, "1"},   {0, -9, "0"},
                        {0, -6, "0"},  {0, -3, "0"},     {0, 0, "0"},
        };
        static const struct {
                int64_t v;
                ncm_quantity_format f;
                const char *expect;
        } milli[] =
                        {
                                        {1, DSI, "1m"},         {1000, DSI, "1"},
                                        {1234000, DSI, "1234"}, {1024, BSI, "1024m"},
                                        {1000000, DEX, "1e3"},  {1024 * 1024, BSI, "1048576m"},
                        },
          whole[] = {
                          {1, DSI, "1"},      {1000, DSI, "1k"},     {1234000, DSI, "1234k"},
                          {1024, BSI, "1Ki"}, {1000000, DEX, "1e6"}, {1024 * 1024, BSI, "1Mi"},
          };
        char b[NCM_QUANTITY_STRLEN];
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(scaled); i++) {
                ncm_quantity q = ncm_quantity_from_scaled(scaled[i].v, scaled[i].scale, DSI);
                ncm_quantity back = parse_ok(str(&q, b));
                assert_string_equal(b, scaled[i].expect);
                assert_int_equal(ncm_quantity_scaled_value(&back, scaled[i].scale), scaled[i].v);
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(milli); i++) {
                ncm_quantity q = ncm_quantity_from_scaled(milli[i].v, -3, milli[i].f);
                assert_string_equal(str(&q, b), milli[i].expect);
                q = parse_ok(b);
                assert_int_equal(ncm_quantity_milli_value(&q), milli[i].v);
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(whole); i++) {
                ncm_quantity q = ncm_quantity_from_int(whole[i].v, whole[i].f);
                assert_string_equal(str(&q, b), whole[i].expect);
                q = parse_ok(b);
                assert_int_equal(ncm_quantity_value(&q), whole[i].v);
        }
}

static void test_quantity_is_integer(void **state)
{
        static const struct {
                const char *in;
                bool integer;
        } table[] = {
                        {"1", true},
                        {"2", true},
                        {"0", true},
                        {"1000m", true},
                        {"1.5", false},
                        {"500m", false},
                        {"1001m", false},
                        {"1n", false},
                        {"1e3", true},
                        {"2k", true},
                        {"9e15", true},
                        /* Value()*1000 wraps in int64 and MilliValue() saturates: not integral. */
                        {"1e16", false},
                        {"1E", false},
                        {"9223372036854775807", false},
                        {"1e100", false},
                        {"-2", true},
                        {"-1500m", false},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++) {
                ncm_quantity q = parse_ok(table[i].in);
                if (ncm_quantity_is_integer(&q) != table[i].integer)
                        fail_msg("%s: expected integer=%d", table[i].in, table[i].integer);
        }
}

static void test_quantity_cmp(void **state)
{
        static const struct {
                const char *x, *y;
                int expect;
        } strs[] = {
                        {"0", "0", 0},          {"100m", "50m", 1},   {"50m", "100m", -1},
                        {"10000T", "100Gi", 1}, {"1Gi", "1024Mi", 0}, {"1e3", "1k", 0},
                        {"1e100", "1e99", 1},   {"-1e100", "1", -1},  {"1n", "0", 1},
                        {"-1n", "0", -1},       {"999m", "1", -1},    {"1.000000001", "1", 1},
        };
        static const struct {
                int64_t am;
                int32_t ae;
                int64_t bm;
                int32_t be;
                int expect;
        } ints[] = {
                        {901, -2, 901, -2, 0},
                        {90, -1, 901, -2, -1},
                        {901, -2, 900, -2, 1},
                        {0, 0, 0, 0, 0},
                        {0, 1, 0, -1, 0},
                        {0, -1, 0, 1, 0},
                        {800, -3, 1, 0, -1},
                        {800, -3, 79, -2, 1},
                        {INT64_MAX, 0, 1, -1, 1},
                        {INT64_MAX, 1, 1, 0, 1},
                        {INT64_MAX, 1, 1, 1, 1},
                        {INT64_MAX, 1, 0, 1, 1},
                        {INT64_MAX, -16, 1, 3, -1},
                        {INT64_MIN, 0, 0, 0, -1},
                        {INT64_MIN, -18, -1, 0, -1},
                        {INT64_MIN, -19, -1, 0, 1},
                        {1000000000000000000LL, -17, 1, 1, 0},
                        {1000000000000000000LL, -17, -10, 0, 1},
                        {-1000000000000000000LL, -17, -10, 0, 0},
                        {1000000000000000000LL, -17, 1, 0, 1},
                        {1000000000000000001LL, -17, 1, 1, 1},
                        {999999999999999999LL, -17, 1, 1, -1},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(strs); i++) {
                ncm_quantity a = parse_ok(strs[i].x), b = parse_ok(strs[i].y);
                assert_int_equal(ncm_quantity_cmp(&a, &b), strs[i].expect);
                assert_int_equal(ncm_quantity_cmp(&b, &a), -strs[i].expect);
                assert_int_equal(ncm_quantity_equal(&a, &b), strs[i].expect == 0);
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(ints); i++) {
                ncm_quantity a = dec(ints[i].am, ints[i].ae, DSI);
                ncm_quantity b = dec(ints[i].bm, ints[i].be, DSI);
                if (ncm_quantity_cmp(&a, &b) != ints[i].expect ||
                    ncm_quantity_cmp(&b, &a) != -ints[i].expect)
                        fail_msg("case %zu: cmp %d, want %d", i, ncm_quantity_cmp(&a, &b),
                                 ints[i].expect);
        }
}

static void test_quantity_add_sub(void **state)
{
        static const struct {
                int64_t am;
                int32_t ae;
                ncm_quantity_format af;
                int64_t bm;
                int32_t be;
                ncm_quantity_format bf;
                int64_t add, sub; /* results at scale 0 */
        } table[] = {
                        {10, 0, DSI, 1, 1, DSI, 20, 0},  {10, 0, DSI, 1, 0, BSI, 11, 9},
                        {10, 0, BSI, 1, 0, DSI, 11, 9},  {0, 0, DSI, 50, 0, DSI, 50, -50},
                        {50, 0, DSI, 0, 0, DSI, 50, 50}, {0, 0, DSI, 0, 0, DSI, 0, 0},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++) {
                ncm_quantity a = dec(table[i].am, table[i].ae, table[i].af);
                ncm_quantity b = dec(table[i].bm, table[i].be, table[i].bf);
                ncm_quantity s = a, d = a;
                assert_int_equal(ncm_quantity_add(&s, &b), 0);
                assert_int_equal(ncm_quantity_sub(&d, &b), 0);
                assert_int_equal(ncm_quantity_value(&s), table[i].add);
                assert_int_equal(ncm_quantity_value(&d), table[i].sub);
                /* The receiver keeps its format unless it was zero. */
                assert_int_equal(s.format, table[i].am == 0 ? table[i].bf : table[i].af);
        }
}

static void test_quantity_add_zero_preserves_suffix(void **state)
{
        const char *values[] = {"100m", "1Gi"};
        char b[NCM_QUANTITY_STRLEN], want[NCM_QUANTITY_STRLEN + 1];
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(values); i++) {
                ncm_quantity v = parse_ok(values[i]), zero = parse_ok("0");
                ncm_quantity v1 = v, v2 = zero;
                assert_int_equal(ncm_quantity_add(&v1, &zero), 0);
                assert_int_equal(ncm_quantity_add(&v2, &v), 0);
                assert_string_equal(str(&v1, b), values[i]);
                assert_string_equal(str(&v2, b), values[i]);
                v1 = v;
                assert_int_equal(ncm_quantity_sub(&v1, &zero), 0);
                assert_string_equal(str(&v1, b), values[i]);
                v2 = zero;
                assert_int_equal(ncm_quantity_sub(&v2, &v), 0);
                snprintf(want, sizeof(want), "-%s", values[i]);
                assert_string_equal(str(&v2, b), want);
        }
}

/* TestNegAndSubAtMostNegative: 2^63 does not fit int64 but is exact here. */
static void test_quantity_most_negative(void **state)
{
        char b[NCM_QUANTITY_STRLEN];
        ncm_quantity q = dec(INT64_MIN, 0, DSI), z = NCM_QUANTITY_ZERO, one = dec(1, 0, DSI);
        ncm_quantity ten = dec(1, 1, DSI);
        (void)state;
        ncm_quantity_neg(&q);
        assert_string_equal(str(&q, b), "9223372036854775808");
        assert_int_equal(ncm_quantity_sign(&q), 1);
        q = dec(INT64_MIN, 0, DSI);
        assert_int_equal(ncm_quantity_sub(&z, &q), 0);
        assert_string_equal(str(&z, b), "9223372036854775808");
        assert_int_equal(ncm_quantity_sub(&one, &q), 0);
        assert_string_equal(str(&one, b), "9223372036854775809");
        assert_int_equal(ncm_quantity_sub(&ten, &q), 0);
        assert_string_equal(str(&ten, b), "9223372036854775818");
        q = dec(INT64_MIN, -3, DSI);
        ncm_quantity_neg(&q);
        assert_string_equal(str(&q, b), "9223372036854775808m");
        one = dec(1, -3, DSI);
        q = dec(INT64_MIN, -3, DSI);
        assert_int_equal(ncm_quantity_sub(&one, &q), 0);
        assert_string_equal(str(&one, b), "9223372036854775809m");
        /* A zero receiver adopts the binary format: 2^63 is 8Ei. */
        z = NCM_QUANTITY_ZERO;
        q = dec(INT64_MIN, 0, BSI);
        assert_int_equal(ncm_quantity_sub(&z, &q), 0);
        assert_int_equal(z.format, BSI);
        assert_string_equal(str(&z, b), "8Ei");
        q = dec(INT64_MIN + 1, 0, DSI);
        ncm_quantity_neg(&q);
        assert_int_equal(ncm_quantity_value(&q), INT64_MAX);
}

/* TestBinarySIPastEiArithmeticRoundTrip: 1Ei * 1024 has no binary suffix. */
static void test_quantity_binary_past_ei(void **state)
{
        char b[NCM_QUANTITY_STRLEN];
        ncm_quantity ei = parse_ok("1Ei"), q = ei, back;
        (void)state;
        for (int i = 1; i < 1024; i++)
                assert_int_equal(ncm_quantity_add(&q, &ei), 0);
        assert_string_equal(str(&q, b), "1180591620717411303424");
        back = parse_ok(b);
        assert_int_equal(ncm_quantity_cmp(&q, &back), 0);
}

/* NCM_QUANTITY_NO_CAP: apimachinery's silent cap on binary SI becomes an error (issue 20). */
static void test_quantity_no_cap(void **state)
{
        static const char *const over[] = {"8Ei",    "100Ei", "99999999999999999999Ei",
                                           "8192Pi", "-8Ei",  "12345678901234567890123Ki"};
        ncm_error err = NCM_ERROR_INIT;
        ncm_quantity q = NCM_QUANTITY_ZERO;
        char b[NCM_QUANTITY_STRLEN];
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(over); i++) {
                /* capped without the flag, as apimachinery does */
                assert_int_equal(ncm_quantity_parse(over[i], &q, NULL), 0);
                assert_int_equal(ncm_quantity_parse_flags(over[i], strlen(over[i]),
                                                          NCM_QUANTITY_NO_CAP, &q, &err),
                                 -ERANGE);
                assert_string_equal(err.msg, "quantity is larger than 9223372036854775807");
        }
        assert_int_equal(ncm_quantity_parse_flags("7.5Ei", 5, NCM_QUANTITY_NO_CAP, &q, NULL), 0);
        assert_string_equal(str(&q, b), "7680Pi");
        assert_int_equal(ncm_quantity_parse_flags("1e30", 4, NCM_QUANTITY_NO_CAP, &q, NULL), 0);
}

static void test_quantity_add_sub_round_trip(void **state)
{
        unsigned seed = 42;
        (void)state;
        /* Same scale: int63 values as in apimachinery's test. */
        for (int k = -10; k <= 10; k++) {
                ncm_quantity q = NCM_QUANTITY_ZERO;
                int64_t order[100];
                for (int i = 0; i < 100; i++) {
                        ncm_quantity v;
                        order[i] = ((int64_t)rand_r(&seed) << 32 | (int64_t)rand_r(&seed)) &
                                   INT64_MAX;
                        v = ncm_quantity_from_scaled(order[i], k, DSI);
                        assert_int_equal(ncm_quantity_add(&q, &v), 0);
                }
                for (int i = 0; i < 100; i++) {
                        ncm_quantity v = ncm_quantity_from_scaled(order[i], k, DSI);
                        assert_int_equal(ncm_quantity_sub(&q, &v), 0);
                }
                assert_true(ncm_quantity_is_zero(&q));
        }
        /*
         * Across scales: apimachinery uses int63 values at scales -10..9, whose exact sum
         * needs up to 40 digits; 38 is nodecm's limit, so the values here are 2^40 at most.
         */
        {
                ncm_quantity q = NCM_QUANTITY_ZERO;
                int64_t order[100];
                for (int i = 0; i < 100; i++) {
                        ncm_quantity v;
                        order[i] = (int64_t)rand_r(&seed) << 9;
                        v = ncm_quantity_from_scaled(order[i], (int32_t)(order[i] % 20 - 10), DSI);
                        assert_int_equal(ncm_quantity_add(&q, &v), 0);
                }
                for (int i = 0; i < 100; i++) {
                        ncm_quantity v = ncm_quantity_from_scaled(
                                        order[i], (int32_t)(order[i] % 20 - 10), DSI);
                        assert_int_equal(ncm_quantity_sub(&q, &v), 0);
                }
                assert_true(ncm_quantity_is_zero(&q));
        }
        /* Double negation cancels. */
        for (int i = 0; i < 100; i++) {
                int64_t j = ((int64_t)rand_r(&seed) << 32 | (int64_t)rand_r(&seed)) & INT64_MAX;
                ncm_quantity q = ncm_quantity_from_scaled(j, i % 21 - 10, DSI), b = q;
                ncm_quantity_neg(&b);
                ncm_quantity_neg(&b);
                assert_int_equal(ncm_quantity_cmp(&b, &q), 0);
        }
}

static void test_quantity_round_up(void **state)
{
        static const struct {
                const char *in;
                int32_t scale;
                int64_t m;
                int32_t e;
                bool exact;
        } table[] = {
                        {"9.01", -3, 901, -2, true},   {"9.01", -2, 901, -2, true},
                        {"9.01", -1, 91, -1, false},   {"9.01", 0, 10, 0, false},
                        {"9.01", 1, 10, 0, false},     {"9.01", 2, 100, 0, false},
                        {"-9.01", -3, -901, -2, true}, {"-9.01", -2, -901, -2, true},
                        {"-9.01", -1, -91, -1, false}, {"-9.01", 0, -10, 0, false},
                        {"-9.01", 1, -10, 0, false},   {"-9.01", 2, -100, 0, false},
                        {"1n", -3, 1, -3, false},      {"0", -3, 0, 0, true},
                        {"1e-100", 0, 1, 0, false},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++) {
                ncm_quantity q = parse_ok(table[i].in);
                ncm_quantity want = dec(table[i].m, table[i].e, DSI);
                assert_int_equal(ncm_quantity_round_up(&q, table[i].scale), table[i].exact);
                assert_int_equal(ncm_quantity_cmp(&q, &want), 0);
        }
}

/* nodecm's own limit: 38 significant digits, exact below it. */
static void test_quantity_precision_limit(void **state)
{
        char b[NCM_QUANTITY_STRLEN];
        ncm_quantity q, big, tiny;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        q = parse_ok("99999999999999999999999999999999999999");
        assert_string_equal(str(&q, b), "99999999999999999999999999999999999999");
        assert_int_equal(ncm_quantity_parse("999999999999999999999999999999999999999", &q, &err),
                         -ERANGE);
        assert_string_equal(err.msg, "quantity needs more than 38 significant digits");
        /* Trailing zeros are not significant. */
        q = parse_ok("100000000000000000000000000000000000000000000000000");
        assert_string_equal(str(&q, b), "100e48");
        assert_int_equal(q.format, DSI);
        /* Digits below 1n are rounded away first, so long fractions are fine. */
        q = parse_ok("1.00000000000000000000000000000000000000000000000001");
        assert_string_equal(str(&q, b), "1000000001n");
        /* Arithmetic beyond 38 digits fails and leaves the operand alone. */
        big = parse_ok("1e30");
        tiny = parse_ok("1n");
        q = big;
        assert_int_equal(ncm_quantity_add(&q, &tiny), -ERANGE);
        assert_int_equal(ncm_quantity_cmp(&q, &big), 0);
        q = parse_ok("99999999999999999999999999999999999999");
        tiny = parse_ok("1");
        assert_int_equal(ncm_quantity_add(&q, &tiny), 0);
        assert_string_equal(str(&q, b), "100e36");
        /* The longest canonical texts fit NCM_QUANTITY_STRLEN. */
        q = parse_ok("-99999999999999999999999999999999999999e2147483609");
        assert_string_equal(str(&q, b), "-9999999999999999999999999999999999999900e2147483607");
        assert_true(strlen(b) < NCM_QUANTITY_STRLEN);
}

static void test_quantity_append(void **state)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_quantity q = parse_ok("1.5Gi");
        (void)state;
        ncm_quantity_append(&b, &q);
        ncm_buf_putc(&b, ' ');
        q = NCM_QUANTITY_ZERO;
        ncm_quantity_append(&b, &q);
        assert_false(ncm_buf_failed(&b));
        assert_string_equal(b.data, "1536Mi 0");
        ncm_buf_done(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_quantity_parse_table),
                        cmocka_unit_test(test_quantity_parse_grammar_quirks),
                        cmocka_unit_test(test_quantity_parse_errors),
                        cmocka_unit_test(test_quantity_parse_nul_and_length),
                        cmocka_unit_test(test_quantity_exponent_bounds),
                        cmocka_unit_test(test_quantity_string_table),
                        cmocka_unit_test(test_quantity_parse_emit),
                        cmocka_unit_test(test_quantity_parse_around_int64),
                        cmocka_unit_test(test_quantity_value_rounds_away_from_zero),
                        cmocka_unit_test(test_quantity_scaled_value),
                        cmocka_unit_test(test_quantity_new_scaled_and_milli),
                        cmocka_unit_test(test_quantity_is_integer),
                        cmocka_unit_test(test_quantity_cmp),
                        cmocka_unit_test(test_quantity_add_sub),
                        cmocka_unit_test(test_quantity_add_zero_preserves_suffix),
                        cmocka_unit_test(test_quantity_most_negative),
                        cmocka_unit_test(test_quantity_binary_past_ei),
                        cmocka_unit_test(test_quantity_no_cap),
                        cmocka_unit_test(test_quantity_add_sub_round_trip),
                        cmocka_unit_test(test_quantity_round_up),
                        cmocka_unit_test(test_quantity_precision_limit),
                        cmocka_unit_test(test_quantity_append),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
