/* SPDX-License-Identifier: Apache-2.0 */
/* The string buffer and its Go-exact writers (encoding/json strings, strconv.Quote). */
#include <string.h>

#include <nodecm/buf.h>
#include "testutil.h"

static void check_json(const char *in, size_t len, const char *expect)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_buf_json_string(&b, in, len);
        assert_false(ncm_buf_failed(&b));
        assert_string_equal(b.data, expect);
        ncm_buf_done(&b);
}

static void test_buf_json_string_escapes_like_go(void **state)
{
        (void)state;
        check_json("", 0, "\"\"");
        check_json("0-3,8", 5, "\"0-3,8\"");
        check_json("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
        check_json("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"");
        check_json("\x01\x1f", 2, "\"\\u0001\\u001f\"");
        check_json("<a&b>", 5, "\"\\u003ca\\u0026b\\u003e\"");
        check_json("\x7f", 1, "\"\x7f\"");
        check_json("caf\xc3\xa9", 5, "\"caf\xc3\xa9\"");
        check_json("\xe2\x80\xa8\xe2\x80\xa9", 6, "\"\\u2028\\u2029\"");
        check_json("a\xffz", 3, "\"a\\ufffdz\"");
        check_json("\xc3", 1, "\"\\ufffd\"");
        check_json("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"");
        check_json("x\0y", 3, "\"x\\u0000y\"");
        check_json("\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\"");
}

static void check_quote(const char *in, size_t len, const char *expect)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_buf_go_quote(&b, in, len);
        assert_string_equal(b.data, expect);
        ncm_buf_done(&b);
}

static void test_buf_go_quote(void **state)
{
        (void)state;
        check_quote("", 0, "\"\"");
        check_quote("x", 1, "\"x\"");
        check_quote("a\"b\\", 4, "\"a\\\"b\\\\\"");
        check_quote("\a\b\f\n\r\t\v", 7, "\"\\a\\b\\f\\n\\r\\t\\v\"");
        check_quote("\x01\x7f", 2, "\"\\x01\\x7f\"");
        check_quote("\xff", 1, "\"\\xff\"");
        check_quote("caf\xc3\xa9", 5, "\"caf\xc3\xa9\"");
        check_quote("\xc2\x85", 2, "\"\\u0085\"");
        check_quote("\xef\xbb\xbf", 3, "\"\\ufeff\"");
        check_quote("x\0", 2, "\"x\\x00\"");
}

static void check_printable(const char *in, unsigned flags, const char *expect)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_buf_put_printable(&b, in, strlen(in), flags);
        assert_false(ncm_buf_failed(&b));
        assert_string_equal(b.data ? b.data : "", expect);
        ncm_buf_done(&b);
}

static void test_buf_printable(void **state)
{
        (void)state;
        /* plain ASCII as it is (the fast path), the rest decoded: tabs and valid UTF-8 kept,
         * controls, DEL, bidi overrides and invalid bytes escaped */
        check_printable("", 0, "");
        check_printable("Socket 0\n  NUMA node 0 ~", NCM_BUF_KEEP_NEWLINES,
                        "Socket 0\n  NUMA node 0 ~");
        check_printable("a\nb", 0, "a\\u000ab");
        check_printable("a\tb", 0, "a\tb");
        check_printable("\x1b[31mred\x7f", 0, "\\u001b[31mred\\u007f");
        check_printable("caf\xc3\xa9 \xe2\x80\xae"
                        "evil",
                        0, "caf\xc3\xa9 \\u202eevil");
        check_printable("a\xffz\xc3", 0, "a\\xffz\\xc3");
}

static void test_buf_printf_and_steal(void **state)
{
        ncm_buf b = NCM_BUF_INIT;
        char *s;
        (void)state;
        for (int i = 0; i < 1000; i++)
                ncm_buf_printf(&b, "%d,", i);
        assert_false(ncm_buf_failed(&b));
        assert_int_equal(b.len, strlen(b.data));
        assert_memory_equal(b.data, "0,1,2,", 6);
        s = ncm_buf_steal(&b);
        assert_non_null(s);
        assert_null(b.data);
        free(s);
        s = ncm_buf_steal(&b);
        assert_string_equal(s, "");
        free(s);
        ncm_buf_puts(&b, "abc");
        ncm_buf_reset(&b);
        assert_string_equal(b.data, "");
        ncm_buf_putc(&b, 'z');
        assert_string_equal(b.data, "z");
        ncm_buf_done(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_buf_json_string_escapes_like_go),
                        cmocka_unit_test(test_buf_go_quote),
                        cmocka_unit_test(test_buf_printable),
                        cmocka_unit_test(test_buf_printf_and_steal),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
