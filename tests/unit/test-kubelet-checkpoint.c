/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The framing both kubelet checkpoints share: probe, struct member loop, string and checksum
 * fields as encoding/json decodes them, go-spew's vocabulary and the FNV-1a checksum.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kubelet-checkpoint.h"
#include "testutil.h"

static const char *const fields[] = {"policyName", "checksum"};

static int probe(const char *text, size_t max)
{
        return ncm__ckpt_probe(text, strlen(text), "f", max, fields, 2, NULL);
}

static void test_probe(void **state)
{
        ncm_error err = NCM_ERROR_INIT;

        (void)state;
        assert_int_equal(probe("{\"policyName\":\"none\"}", 0), 1);
        /* Go's field lookup: case folding, and the Kelvin sign folds to 'k' */
        assert_int_equal(probe("{\"POLICYNAME\":1}", 0), 1);
        assert_int_equal(probe("{\"chec\\u212asum\":1}", 0), 1);
        assert_int_equal(probe("{\"other\":1}", 0), 0);
        assert_int_equal(probe("[1]", 0), 0);
        assert_int_equal(probe("null", 0), 0);
        /* a key holding NUL names no field: skipped, as Go skips it */
        assert_int_equal(probe("{\"policy\\u0000Name\":1,\"checksum\":2}", 0), 1);
        assert_int_equal(ncm__ckpt_probe("{\"policyName\"", 13, "f", 0, fields, 2, &err), -EINVAL);
        assert_string_equal(err.msg, "f:1:14: unexpected end of JSON input");
        assert_int_equal(ncm__ckpt_probe("{\"policyName\":1}", 16, "f", 10, fields, 2, &err),
                         -EFBIG);
        assert_string_equal(err.msg, "f: checkpoint larger than 10 bytes");
}

static void test_next_field(void **state)
{
        static const char text[] =
                        "{\"checksum\":1,\"x\":[1,{}],\"PolicyName\":\"a\",\"checksum\":2}";
        static const int want[] = {1, -1, 0, 1};
        ncm_gojson g;
        bool first = true;
        int f, r;
        size_t n = 0;

        (void)state;
        assert_int_equal(ncm__ckpt_open(&g, text, strlen(text), "f", 0, NULL), 0);
        while ((r = ncm__ckpt_next_field(&g, &first, fields, 2, &f, NULL)) > 0) {
                assert_true(n < 4);
                /* a repeated member is delivered again, in document order */
                assert_int_equal(f, want[n++]);
                ncm__gojson_skip(&g);
        }
        assert_int_equal(r, 0);
        assert_int_equal(n, 4);
}

/* The one member's value of TEXT ({"v": ...}) at the cursor of G. */
static void at_value(ncm_gojson *g, const char *text)
{
        bool first = true;
        int f;
        assert_int_equal(ncm__ckpt_open(g, text, strlen(text), "f", 0, NULL), 0);
        assert_int_equal(ncm__ckpt_next_field(g, &first, (const char *const[]){"v"}, 1, &f, NULL),
                         1);
        assert_int_equal(f, 0);
}

static void test_string_field(void **state)
{
        ncm_ckpt_bad bad;
        ncm_gojson g;
        size_t len = 0;
        char *s = NULL;

        (void)state;
        at_value(&g, "{\"v\":\"a\\u00e9\"}");
        assert_int_equal(ncm__ckpt_string_field(&g, &s, &len, &bad, NULL), 0);
        assert_string_equal(s, "a\xc3\xa9");
        assert_int_equal(len, 3);
        free(s);
        /* invalid UTF-8 becomes U+FFFD, as Go's decoder makes it */
        at_value(&g, "{\"v\":\"\xff\"}");
        assert_int_equal(ncm__ckpt_string_field(&g, &s, NULL, &bad, NULL), 0);
        assert_string_equal(s, "\xef\xbf\xbd");
        free(s);
        /* null leaves a Go string as it was */
        at_value(&g, "{\"v\":null}");
        assert_int_equal(ncm__ckpt_string_field(&g, &s, NULL, &bad, NULL), 1);
        at_value(&g, "{\"v\":12}");
        assert_int_equal(ncm__ckpt_string_field(&g, &s, NULL, &bad, NULL), -EINVAL);
        assert_int_equal(bad.kind, NCM_GOJSON_NUMBER);
        assert_false(bad.nul);
        /* consumed: the object ends next */
        assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_END);
        at_value(&g, "{\"v\":\"a\\u0000b\"}");
        assert_int_equal(ncm__ckpt_string_field(&g, &s, NULL, &bad, NULL), -EINVAL);
        assert_true(bad.nul);
        assert_true(ncm__ckpt_c_string("ab", 2));
        assert_false(ncm__ckpt_c_string("a\0b", 3));
}

static void test_checksum_field(void **state)
{
        static const char *const refused[] = {"-0", "1.0", "1e3", "-1", "18446744073709551616"};
        ncm_ckpt_bad bad;
        ncm_gojson g;
        uint64_t v = 7;
        char text[64];

        (void)state;
        at_value(&g, "{\"v\":18446744073709551615}");
        assert_int_equal(ncm__ckpt_checksum_field(&g, &v, &bad), 0);
        assert_true(v == UINT64_MAX);
        v = 7;
        at_value(&g, "{\"v\":null}");
        assert_int_equal(ncm__ckpt_checksum_field(&g, &v, &bad), 1);
        assert_int_equal(v, 7);
        at_value(&g, "{\"v\":\"1\"}");
        assert_int_equal(ncm__ckpt_checksum_field(&g, &v, &bad), -EINVAL);
        assert_int_equal(bad.kind, NCM_GOJSON_STRING);
        assert_null(bad.text);
        for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++) {
                snprintf(text, sizeof(text), "{\"v\":%s}", refused[i]);
                at_value(&g, text);
                assert_int_equal(ncm__ckpt_checksum_field(&g, &v, &bad), -EINVAL);
                assert_int_equal(bad.kind, NCM_GOJSON_NUMBER);
                assert_int_equal(bad.len, strlen(refused[i]));
                assert_memory_equal(bad.text, refused[i], bad.len);
                assert_int_equal(v, 7);
        }
}

static void test_spew(void **state)
{
        static char *const strs[] = {"a", "b c"};
        static const unsigned char bytes[] = {0, 10, 255};
        ncm_buf b = NCM_BUF_INIT;
        uint32_t sum = 0;

        (void)state;
        ncm_buf_puts(&b, "(t){");
        ncm__spew_field(&b, 0, "S", "[]string");
        ncm__spew_strings(&b, false, strs, 2);
        ncm__spew_field(&b, 1, "N", "[]string");
        ncm__spew_strings(&b, true, NULL, 0);
        ncm__spew_field(&b, 2, "E", "[]string");
        ncm__spew_strings(&b, false, NULL, 0);
        ncm__spew_field(&b, 3, "B", "[]uint8");
        ncm__spew_bytes(&b, false, bytes, 3);
        ncm__spew_field(&b, 4, "M", "map[string]string");
        ncm_buf_puts(&b, "map[");
        ncm__spew_key(&b, 0, "k");
        ncm_buf_puts(&b, "v");
        ncm__spew_key(&b, 1, "l");
        ncm__spew_nil(&b);
        ncm_buf_puts(&b, "]}");
        assert_false(ncm_buf_failed(&b));
        assert_string_equal(b.data, "(t){S:([]string)[a b c] N:([]string)<nil> E:([]string)[] "
                                    "B:([]uint8)[0 10 255] M:(map[string]string)map[k:v l:<nil>]}");
        ncm_buf_done(&b);

        /* FNV-1a 32: the offset basis for nothing, and a known value */
        assert_int_equal(ncm__spew_sum(&b, &sum), 0);
        assert_int_equal(sum, 0x811c9dc5u);
        ncm_buf_puts(&b, "a");
        assert_int_equal(ncm__spew_sum(&b, &sum), 0);
        assert_int_equal(sum, 0xe40c292cu);
        assert_null(b.data);
        /* a rendering that ran out of memory has no checksum */
        b.oom = true;
        assert_int_equal(ncm__spew_sum(&b, &sum), -ENOMEM);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_probe),        cmocka_unit_test(test_next_field),
                        cmocka_unit_test(test_string_field), cmocka_unit_test(test_checksum_field),
                        cmocka_unit_test(test_spew),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
