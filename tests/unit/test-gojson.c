/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Go-compatible JSON reader: Go's scanner verdicts and SyntaxError texts (checked against
 * go1.19's encoding/json), the position in the message, the depth limit, string unquoting
 * (escapes, surrogate pairs, invalid UTF-8), members delivered in order with repeated keys,
 * struct field lookup with exact-match preference and Unicode folding, UnmarshalTypeError's
 * words, strconv's number rules, and huge, hostile and truncated input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gojson.h"
#include "testutil.h"

static void init_ok(ncm_gojson *g, const char *text, size_t len)
{
        ncm_error err = NCM_ERROR_INIT;
        if (ncm__gojson_init(g, text, len, "t", &err) < 0)
                fail_msg("%.60s: %s", text, err.msg);
}

/* ---- the scanner ---- */

static void test_gojson_accepts_what_go_accepts(void **state)
{
        static const char *const docs[] = {
                        "null",
                        " 0 ",
                        "-0",
                        "1.5e+3",
                        "-0.0E-0",
                        "123456789012345678901234567890",
                        "true\n",
                        "\"\"",
                        "[]",
                        "{}",
                        " \t\r\n{\"a\":[1,{\"b\":null}],\"c\":true,\"a\":false} \r\n",
                        "\"\xff\xc3\xed\xa0\x80\"",
                        "\"\\ud800\\u0000\\/\\b\\f\\n\\r\\t\\\"\\\\\"",
                        "[[[[]]],{\"\":{}}]",
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(docs); i++) {
                ncm_gojson g;
                print_message("%s\n", docs[i]);
                init_ok(&g, docs[i], strlen(docs[i]));
                assert_string_equal(g.syntax, "");
                ncm__gojson_skip(&g);
                assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_END);
                assert_int_equal(g.pos, strlen(docs[i]));
        }
}

static void test_gojson_syntax_errors_in_go_words(void **state)
{
        /* The third column is what go1.19's json.Unmarshal returns for the same bytes. */
        static const struct {
                const char *text;
                size_t len; /* 0: strlen */
                const char *msg;
                const char *go;
        } cases[] = {
                        {"", 0, "t:1:1: unexpected end of JSON input",
                         "unexpected end of JSON input"},
                        {"   \n ", 0, "t:2:2: unexpected end of JSON input",
                         "unexpected end of JSON input"},
                        {"{", 0, "t:1:2: unexpected end of JSON input",
                         "unexpected end of JSON input"},
                        {"[1", 0, "t:1:3: unexpected end of JSON input",
                         "unexpected end of JSON input"},
                        {"\"\\u00e9", 0, "t:1:8: unexpected end of JSON input",
                         "unexpected end of JSON input"},
                        /* At the end Go feeds its scanner a space, which a number or literal
                         * cut short does not accept. */
                        {"-", 0, "t:1:2: invalid JSON: invalid character ' ' in numeric literal",
                         "invalid character ' ' in numeric literal"},
                        {"[-", 0, "t:1:3: invalid JSON: invalid character ' ' in numeric literal",
                         "invalid character ' ' in numeric literal"},
                        {"1.", 0, NULL,
                         "invalid character ' ' after decimal point in numeric literal"},
                        {"1e", 0, NULL, "invalid character ' ' in exponent of numeric literal"},
                        {"1e+", 0, NULL, "invalid character ' ' in exponent of numeric literal"},
                        {"tr", 0, NULL, "invalid character ' ' in literal true (expecting 'u')"},
                        {"nul", 0, NULL, "invalid character ' ' in literal null (expecting 'l')"},
                        {"fals", 0, NULL, "invalid character ' ' in literal false (expecting 'e')"},
                        {"truE", 0,
                         "t:1:4: invalid JSON: invalid character 'E' in literal true "
                         "(expecting 'e')",
                         "invalid character 'E' in literal true (expecting 'e')"},
                        {"\"\\", 0, NULL, "invalid character ' ' in string escape code"},
                        {"\"\\u12", 0, NULL,
                         "invalid character ' ' in \\u hexadecimal character escape"},
                        {"\"\\x\"", 0, NULL, "invalid character 'x' in string escape code"},
                        {"\"a\tb\"", 0,
                         "t:1:3: invalid JSON: invalid character '\\t' in string "
                         "literal",
                         "invalid character '\\t' in string literal"},
                        {"\"\n\"", 0,
                         "t:1:2: invalid JSON: invalid character '\\n' in string "
                         "literal",
                         "invalid character '\\n' in string literal"},
                        {"{\"a\" 1}", 0,
                         "t:1:6: invalid JSON: invalid character '1' after object "
                         "key",
                         "invalid character '1' after object key"},
                        {"{\"a\":1 \"b\"}", 0, NULL,
                         "invalid character '\"' after object key:value pair"},
                        {"[1 2]", 0, NULL, "invalid character '2' after array element"},
                        {"{,}", 0, NULL,
                         "invalid character ',' looking for beginning of object key string"},
                        {"{\"a\":1,}", 0, NULL,
                         "invalid character '}' looking for beginning of object key string"},
                        {"[,]", 0, NULL, "invalid character ',' looking for beginning of value"},
                        {"[1,]", 0, NULL, "invalid character ']' looking for beginning of value"},
                        {"{} x", 0,
                         "t:1:4: invalid JSON: invalid character 'x' after top-level "
                         "value",
                         "invalid character 'x' after top-level value"},
                        {"01", 0, NULL, "invalid character '1' after top-level value"},
                        {"-01", 0, NULL, "invalid character '1' after top-level value"},
                        {"1.e3", 0, NULL,
                         "invalid character 'e' after decimal point in numeric literal"},
                        {".5", 0, NULL, "invalid character '.' looking for beginning of value"},
                        {"+1", 0, NULL, "invalid character '+' looking for beginning of value"},
                        {"\n\n  }", 0,
                         "t:3:3: invalid JSON: invalid character '}' looking for "
                         "beginning of value",
                         "invalid character '}' looking for beginning of value"},
                        /* quoteChar: strconv.Quote of the rune U+00XX. */
                        {"'", 0, NULL, "invalid character '\\'' looking for beginning of value"},
                        {"\\", 0, NULL, "invalid character '\\\\' looking for beginning of value"},
                        {"\x01", 0, NULL,
                         "invalid character '\\x01' looking for beginning of value"},
                        {"\x7f", 0, NULL,
                         "invalid character '\\x7f' looking for beginning of value"},
                        {"\v", 0, NULL, "invalid character '\\v' looking for beginning of value"},
                        {"\x80", 0, NULL,
                         "invalid character '\\u0080' looking for beginning of value"},
                        {"\xa0", 0, NULL,
                         "invalid character '\\u00a0' looking for beginning of value"},
                        {"\xad", 0, NULL,
                         "invalid character '\\u00ad' looking for beginning of value"},
                        {"\xe9", 0, NULL,
                         "invalid character '\xc3\xa9' looking for beginning of value"},
                        {"\xff", 0, NULL,
                         "invalid character '\xc3\xbf' looking for beginning of value"},
                        {"\xef\xbb\xbf{}", 0, NULL,
                         "invalid character '\xc3\xaf' looking for beginning of value"},
                        {"[\0]", 3,
                         "t:1:2: invalid JSON: invalid character '\\x00' looking for "
                         "beginning of value",
                         "invalid character '\\x00' looking for beginning of value"},
                        {"{\"a\":1}\0", 8, NULL, "invalid character '\\x00' after top-level value"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
                ncm_error err = NCM_ERROR_INIT;
                char msg[NCM_GOJSON_SYNTAX_MAX];
                size_t off = 12345;
                ncm_gojson g;

                print_message("%s\n", cases[i].go);
                assert_int_equal(ncm__gojson_init(&g, cases[i].text, len, "t", &err), -EINVAL);
                assert_int_equal(err.code, EINVAL);
                assert_string_equal(g.syntax, cases[i].go);
                if (cases[i].msg)
                        assert_string_equal(err.msg, cases[i].msg);
                else
                        assert_non_null(strstr(err.msg, cases[i].go));
                /* The pure checker agrees, offset included. */
                assert_int_equal(ncm__gojson_check(cases[i].text, len, &off, msg, sizeof(msg)),
                                 -EINVAL);
                assert_string_equal(msg, cases[i].go);
                assert_int_equal(off, g.syntax_offset);
                assert_true(off <= len);
        }
        /* A short message buffer is truncated, never overrun; none at all is fine too. */
        {
                char small[8];
                size_t off;
                assert_int_equal(ncm__gojson_check("x", 1, &off, small, sizeof(small)), -EINVAL);
                assert_string_equal(small, "invalid");
                assert_int_equal(ncm__gojson_check("x", 1, &off, NULL, 0), -EINVAL);
        }
        /* No name: a placeholder. */
        {
                ncm_error err = NCM_ERROR_INIT;
                ncm_gojson g;
                assert_int_equal(ncm__gojson_init(&g, "", 0, NULL, &err), -EINVAL);
                assert_string_equal(err.msg, "<json>:1:1: unexpected end of JSON input");
                assert_int_equal(ncm__gojson_init(&g, "{", 1, "t", NULL), -EINVAL);
        }
}

static char *nested(size_t depth, const char *open, const char *close, const char *core)
{
        size_t lo = strlen(open), lc = strlen(close), lk = strlen(core);
        char *s = malloc(depth * (lo + lc) + lk + 1), *p = s;
        assert_non_null(s);
        for (size_t i = 0; i < depth; i++, p += lo)
                memcpy(p, open, lo);
        memcpy(p, core, lk);
        p += lk;
        for (size_t i = 0; i < depth; i++, p += lc)
                memcpy(p, close, lc);
        *p = '\0';
        return s;
}

static void test_gojson_depth_limit(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_gojson g;
        char *s;
        (void)state;

        s = nested(NCM_GOJSON_MAX_DEPTH, "[", "]", "");
        init_ok(&g, s, strlen(s));
        ncm__gojson_skip(&g);
        assert_int_equal(g.pos, strlen(s));
        free(s);

        s = nested(NCM_GOJSON_MAX_DEPTH + 1, "[", "]", "");
        assert_int_equal(ncm__gojson_init(&g, s, strlen(s), "t", &err), -EINVAL);
        assert_string_equal(g.syntax, "invalid character '[' exceeded max depth");
        assert_string_equal(err.msg,
                            "t:1:10001: invalid JSON: invalid character '[' exceeded max depth");
        free(s);

        /* Objects count the same; the limit holds for the deepest point only. */
        s = nested(NCM_GOJSON_MAX_DEPTH, "{\"a\":", "}", "1");
        init_ok(&g, s, strlen(s));
        free(s);
        s = nested(NCM_GOJSON_MAX_DEPTH + 1, "{\"a\":", "}", "1");
        assert_int_equal(ncm__gojson_init(&g, s, strlen(s), "t", &err), -EINVAL);
        assert_string_equal(g.syntax, "invalid character '{' exceeded max depth");
        free(s);
        {
                char *a = nested(NCM_GOJSON_MAX_DEPTH - 1, "[", "]", "");
                size_t n = strlen(a);
                s = malloc(2 * n + 4);
                assert_non_null(s);
                sprintf(s, "[%s,%s]", a, a);
                init_ok(&g, s, strlen(s));
                free(a);
                free(s);
        }
}

/* Every strict prefix of a document that is an object, an array or a string is refused. */
static void test_gojson_truncated_input_is_refused(void **state)
{
        static const char doc[] =
                        "{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"a\\u00e9\\ud83d\\ude00\","
                        "\"DeviceIDs\":{\"0\":[\"x\",null]},\"AllocResp\":\"CgA=\",\"n\":-1.5e+3,"
                        "\"b\":[true,false]}],\"RegisteredDevices\":{}},\"Checksum\":1}";
        (void)state;
        for (size_t i = 0; i < sizeof(doc) - 1; i++) {
                ncm_gojson g;
                char *copy = malloc(i ? i : 1); /* exactly I bytes: ASan catches overreads */
                assert_non_null(copy);
                memcpy(copy, doc, i);
                assert_int_equal(ncm__gojson_init(&g, copy, i, "t", NULL), -EINVAL);
                free(copy);
        }
        {
                ncm_gojson g;
                init_ok(&g, doc, sizeof(doc) - 1);
        }
}

static void test_gojson_hostile_bytes(void **state)
{
        (void)state;
        /* Each byte alone: only a digit is a document. */
        for (unsigned c = 0; c < 256; c++) {
                char b = (char)c;
                size_t off;
                char msg[NCM_GOJSON_SYNTAX_MAX];
                int r = ncm__gojson_check(&b, 1, &off, msg, sizeof(msg));
                assert_int_equal(r, c >= '0' && c <= '9' ? 0 : -EINVAL);
        }
        /* Each byte inside a string: controls are refused, everything else is content. */
        for (unsigned c = 0; c < 256; c++) {
                char b[3] = {'"', (char)c, '"'};
                size_t off;
                int r = ncm__gojson_check(b, 3, &off, NULL, 0);
                assert_int_equal(r, c < 0x20 || c == '"' || c == '\\' ? -EINVAL : 0);
        }
        /* Random bytes: never a crash, never an offset past the end. */
        {
                static const char alphabet[] = "{}[],:\"\\ u0123456789.eE+-tfnrl\x80\xff\x01";
                unsigned seed = 12345;
                char buf[64];
                for (int n = 0; n < 20000; n++) {
                        size_t len = (size_t)(n % 64), off = 0;
                        for (size_t i = 0; i < len; i++) {
                                seed = seed * 1103515245u + 12345u;
                                buf[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
                        }
                        if (ncm__gojson_check(buf, len, &off, NULL, 0) < 0)
                                assert_true(off <= len);
                }
        }
}

/* An 8 MiB array of 256-byte strings, and a 4 MiB string of escapes. */
static void test_gojson_huge_input(void **state)
{
        size_t n = 32768, len = 0;
        char *s = malloc(n * 259 + 2), *out = NULL;
        bool first = true;
        ncm_gojson g;
        size_t count = 0, olen = 0;
        (void)state;

        assert_non_null(s);
        s[len++] = '[';
        for (size_t i = 0; i < n; i++) {
                if (i)
                        s[len++] = ',';
                s[len++] = '"';
                memset(s + len, 'a' + (char)(i % 26), 256);
                len += 256;
                s[len++] = '"';
        }
        s[len++] = ']';
        init_ok(&g, s, len);
        assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_ARRAY);
        while (ncm__gojson_next_element(&g, &first)) {
                assert_int_equal(ncm__gojson_string(&g, &out, &olen, NULL), 0);
                assert_int_equal(olen, 256);
                assert_int_equal(out[255], 'a' + (char)(count % 26));
                free(out);
                count++;
        }
        assert_int_equal(count, n);
        assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_END);
        free(s);

        n = 1u << 20;
        s = malloc(n * 6 + 3);
        assert_non_null(s);
        len = 0;
        s[len++] = '"';
        for (size_t i = 0; i < n; i++, len += 6)
                memcpy(s + len, i % 2 ? "\\u00e9" : "\\ud83d", 6);
        s[len++] = '"';
        init_ok(&g, s, len);
        assert_int_equal(ncm__gojson_string(&g, &out, &olen, NULL), 0);
        /* Each high surrogate is followed by é, not a low surrogate: U+FFFD, then é. */
        assert_int_equal(olen, n / 2 * 5);
        assert_memory_equal(out, "\xef\xbf\xbd\xc3\xa9", 5);
        free(out);
        free(s);
}

/* ---- walking ---- */

static char *string_at(ncm_gojson *g, size_t *len)
{
        char *s = NULL;
        assert_int_equal(ncm__gojson_peek(g), NCM_GOJSON_STRING);
        assert_int_equal(ncm__gojson_string(g, &s, len, NULL), 0);
        return s;
}

static void test_gojson_strings_unquote_like_go(void **state)
{
        static const struct {
                const char *json;
                const char *want;
                size_t len; /* 0: strlen(want) */
        } cases[] = {
                        {"\"plain\"", "plain", 0},
                        {"\"\"", "", 0},
                        {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t", 0},
                        {"\"\\u00e9\\u00E9\\u20ac\"", "\xc3\xa9\xc3\xa9\xe2\x82\xac", 0},
                        /* Surrogate pairs join; a lone or mismatched surrogate is U+FFFD and
                         * the next escape is read on its own. */
                        {"\"\\ud83d\\ude00\\uD83D\\uDE00\"", "\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 0},
                        {"\"\\ud800x\"", "\xef\xbf\xbdx", 0},
                        {"\"\\udc00\"", "\xef\xbf\xbd", 0},
                        {"\"\\ud800\\ud800\"", "\xef\xbf\xbd\xef\xbf\xbd", 0},
                        {"\"\\ud800\\u0041\"",
                         "\xef\xbf\xbd"
                         "A",
                         0},
                        {"\"\\udbff\\udfff\"", "\xf4\x8f\xbf\xbf", 0},
                        /* utf8.DecodeRune's rules: one U+FFFD per byte that starts no valid
                         * sequence; valid runes, U+FFFD itself included, are kept. */
                        {"\"\xc3\"", "\xef\xbf\xbd", 0},
                        {"\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbd\"",
                         "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbd", 0},
                        {"\"\xc0\xaf\"", "\xef\xbf\xbd\xef\xbf\xbd", 0},
                        {"\"\xed\xa0\x80\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 0},
                        {"\"\xf4\x90\x80\x80\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
                         0},
                        {"\"\xf0\x9f\x98x\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx", 0},
                        {"\"\xe0\x80\x80\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 0},
                        {"\"a\xff\\n\xfe\"", "a\xef\xbf\xbd\n\xef\xbf\xbd", 0},
                        /* Go keeps NUL: the length tells. */
                        {"\"a\\u0000b\"", "a\0b", 3},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                size_t want = cases[i].len ? cases[i].len : strlen(cases[i].want), len = 99;
                ncm_gojson g;
                print_message("%s\n", cases[i].json);
                init_ok(&g, cases[i].json, strlen(cases[i].json));
                char *s = string_at(&g, &len);
                assert_int_equal(len, want);
                assert_memory_equal(s, cases[i].want, want);
                assert_int_equal(s[len], '\0');
                assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_END);
                free(s);
        }
        /* The length is optional. */
        {
                ncm_gojson g;
                char *s = NULL;
                init_ok(&g, "\"x\"", 3);
                assert_int_equal(ncm__gojson_string(&g, &s, NULL, NULL), 0);
                assert_string_equal(s, "x");
                free(s);
        }
}

static void test_gojson_kinds_numbers_bools_null(void **state)
{
        static const char doc[] = "[ -1.5e+3 , 0, true,false , null, \"n\", {}, [] ]";
        static const ncm_gojson_kind kinds[] = {
                        NCM_GOJSON_NUMBER, NCM_GOJSON_NUMBER, NCM_GOJSON_BOOL,   NCM_GOJSON_BOOL,
                        NCM_GOJSON_NULL,   NCM_GOJSON_STRING, NCM_GOJSON_OBJECT, NCM_GOJSON_ARRAY};
        static const char *const names[] = {"number", "number", "bool",   "bool",
                                            "null",   "string", "object", "array"};
        ncm_gojson g;
        bool first = true;
        const char *text;
        size_t i = 0;
        (void)state;

        init_ok(&g, doc, strlen(doc));
        assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_ARRAY);
        while (ncm__gojson_next_element(&g, &first)) {
                ncm_gojson_kind k = ncm__gojson_peek(&g);
                assert_int_equal(k, kinds[i]);
                assert_string_equal(ncm__gojson_kind_name(k), names[i]);
                if (i == 0) {
                        size_t n = ncm__gojson_number(&g, &text);
                        assert_int_equal(n, 7);
                        assert_memory_equal(text, "-1.5e+3", 7);
                } else if (i == 2 || i == 3) {
                        assert_int_equal(ncm__gojson_bool(&g), i == 2);
                } else {
                        ncm__gojson_skip(&g);
                }
                i++;
        }
        assert_int_equal(i, NCM_ELEMENTSOF(kinds));
        assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_END);
        assert_string_equal(ncm__gojson_kind_name(NCM_GOJSON_END), "end of input");
        /* Skipping at the end, or at punctuation, stays put. */
        ncm__gojson_skip(&g);
        assert_int_equal(g.pos, strlen(doc));
        /* Rewinding starts over. */
        ncm__gojson_rewind(&g);
        assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_ARRAY);
        ncm__gojson_skip(&g);
        assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_END);
}

/* Repeated keys are not collapsed: Go decodes each one, so the caller sees each one. */
static void test_gojson_members_in_order_with_repeated_keys(void **state)
{
        static const char doc[] = "{\"a\":1, \"A\" : {\"x\":\"]}\\\"\",\"y\":[{\"z\":\"\\\\\"}]},"
                                  "\"a\":null,\"\":[],\"k\\u0000\":2,\"a\":\"last\"}";
        static const char *const keys[] = {"a", "A", "a", "", "k\0", "a"};
        static const size_t key_lens[] = {1, 1, 1, 0, 2, 1};
        ncm_gojson g;
        bool first = true;
        char *key = NULL;
        size_t klen, i = 0;
        int r;
        (void)state;

        init_ok(&g, doc, strlen(doc));
        assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_OBJECT);
        while ((r = ncm__gojson_next_member(&g, &first, &key, &klen, NULL)) > 0) {
                assert_true(i < NCM_ELEMENTSOF(keys));
                assert_int_equal(klen, key_lens[i]);
                assert_memory_equal(key, keys[i], klen);
                free(key);
                if (i == 5) {
                        size_t n;
                        char *s = string_at(&g, &n);
                        assert_string_equal(s, "last");
                        free(s);
                } else {
                        ncm__gojson_skip(&g);
                }
                i++;
        }
        assert_int_equal(r, 0);
        assert_int_equal(i, NCM_ELEMENTSOF(keys));
        assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_END);

        /* Empty containers, and the key length is optional. */
        init_ok(&g, " { } ", 5);
        first = true;
        assert_int_equal(ncm__gojson_next_member(&g, &first, &key, NULL, NULL), 0);
        assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_END);
        init_ok(&g, "[ ]", 3);
        first = true;
        assert_false(ncm__gojson_next_element(&g, &first));
        assert_int_equal(ncm__gojson_peek(&g), NCM_GOJSON_END);
}

/* ---- Go's rules for the caller ---- */

static void test_gojson_field_lookup_like_go(void **state)
{
        static const char *const fields[] = {"policyName", "defaultCpuSet", "entries", "checksum"};
        static const char *const clash[] = {"Name", "NAME", "name"};
        static const struct {
                const char *key;
                size_t len; /* 0: strlen */
                int want;
        } cases[] = {
                        {"policyName", 0, 0},
                        {"POLICYNAME", 0, 0},
                        {"policyname", 0, 0},
                        {"defaultCpu\xc5\xbf"
                         "et",
                         0, 1},                        /* U+017F LATIN SMALL LETTER LONG S */
                        {"chec\xe2\x84\xaasum", 0, 3}, /* U+212A KELVIN SIGN */
                        {"CHEC\xe2\x84\xaaSUM", 0, 3},
                        {"\xc5\xbf\xc5\xbf", 0, -1},
                        {"entrie", 0, -1},
                        {"entriess", 0, -1},
                        {"policy_name", 0, -1},
                        {"", 0, -1},
                        {"entries\0", 8, -1}, /* a NUL is part of the key */
                        {"entr\xc4\xb0"
                         "es",
                         0, -1}, /* U+0130 does not fold to i */
                        {"\xef\xbf\xbd", 0, -1},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                size_t len = cases[i].len ? cases[i].len : strlen(cases[i].key);
                print_message("%s\n", cases[i].key);
                assert_int_equal(ncm__gojson_field(cases[i].key, len, fields,
                                                   NCM_ELEMENTSOF(fields)),
                                 cases[i].want);
        }
        /* An exact match wins; else the first field that folds alike. */
        assert_int_equal(ncm__gojson_field("NAME", 4, clash, 3), 1);
        assert_int_equal(ncm__gojson_field("name", 4, clash, 3), 2);
        assert_int_equal(ncm__gojson_field("Name", 4, clash, 3), 0);
        assert_int_equal(ncm__gojson_field("nAmE", 4, clash, 3), 0);
        assert_int_equal(ncm__gojson_field("x", 1, clash, 0), -1);
        assert_true(ncm__gojson_fold_equal("\xe2\x84\xaa", 3, "K"));
        assert_true(ncm__gojson_fold_equal("\xe2\x84\xaa", 3, "k"));
        assert_false(ncm__gojson_fold_equal("\xe2\x84", 2, "k"));
        assert_false(ncm__gojson_fold_equal("k", 1, ""));
        assert_true(ncm__gojson_fold_equal("", 0, ""));
}

static void test_gojson_type_error_text_in_go_words(void **state)
{
        char buf[256];
        (void)state;
        ncm__gojson_type_error_text(buf, sizeof(buf), "number", "CPUManagerCheckpoint",
                                    "policyName", "string");
        assert_string_equal(buf, "json: cannot unmarshal number into Go struct field "
                                 "CPUManagerCheckpoint.policyName of type string");
        ncm__gojson_type_error_text(buf, sizeof(buf), "number -1", "CPUManagerCheckpoint",
                                    "checksum", "checksum.Checksum");
        assert_string_equal(buf, "json: cannot unmarshal number -1 into Go struct field "
                                 "CPUManagerCheckpoint.checksum of type checksum.Checksum");
        ncm__gojson_type_error_text(buf, sizeof(buf), "array", NULL, NULL,
                                    "state.CPUManagerCheckpoint");
        assert_string_equal(buf, "json: cannot unmarshal array into Go value of type "
                                 "state.CPUManagerCheckpoint");
        ncm__gojson_type_error_text(buf, 10, "array", NULL, NULL, "x");
        assert_string_equal(buf, "json: can");
}

static void test_gojson_numbers_follow_strconv(void **state)
{
        static const struct {
                const char *s;
                bool ok;
                uint64_t v;
        } u[] = {
                        {"0", true, 0},
                        {"007", true, 7},
                        {"18446744073709551615", true, UINT64_MAX},
                        {"18446744073709551616", false, 0},
                        {"99999999999999999999", false, 0},
                        {"-0", false, 0},
                        {"+1", false, 0},
                        {"", false, 0},
                        {"1.0", false, 0},
                        {"1e3", false, 0},
                        {"1_000", false, 0},
        };
        static const struct {
                const char *s;
                bool ok;
                int64_t v;
        } s[] = {
                        {"+01", true, 1},
                        {"-0", true, 0},
                        {"-1", true, -1},
                        {"9223372036854775807", true, INT64_MAX},
                        {"-9223372036854775808", true, INT64_MIN},
                        {"9223372036854775808", false, 0},
                        {"-9223372036854775809", false, 0},
                        {"+", false, 0},
                        {"-", false, 0},
                        {"--1", false, 0},
                        {"+-1", false, 0},
                        {"1.5", false, 0},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(u); i++) {
                uint64_t v = 42;
                print_message("%s\n", u[i].s);
                assert_int_equal(ncm__gojson_parse_uint64(u[i].s, strlen(u[i].s), &v), u[i].ok);
                assert_true(v == (u[i].ok ? u[i].v : 42));
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(s); i++) {
                int64_t v = 42;
                print_message("%s\n", s[i].s);
                assert_int_equal(ncm__gojson_parse_int64(s[i].s, strlen(s[i].s), &v), s[i].ok);
                assert_true(v == (s[i].ok ? s[i].v : 42));
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_gojson_accepts_what_go_accepts),
                        cmocka_unit_test(test_gojson_syntax_errors_in_go_words),
                        cmocka_unit_test(test_gojson_depth_limit),
                        cmocka_unit_test(test_gojson_truncated_input_is_refused),
                        cmocka_unit_test(test_gojson_hostile_bytes),
                        cmocka_unit_test(test_gojson_huge_input),
                        cmocka_unit_test(test_gojson_strings_unquote_like_go),
                        cmocka_unit_test(test_gojson_kinds_numbers_bools_null),
                        cmocka_unit_test(test_gojson_members_in_order_with_repeated_keys),
                        cmocka_unit_test(test_gojson_field_lookup_like_go),
                        cmocka_unit_test(test_gojson_type_error_text_in_go_words),
                        cmocka_unit_test(test_gojson_numbers_follow_strconv),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
