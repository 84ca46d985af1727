/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Go-compatible JSON reader. On any input the checker neither crashes nor reads past the
 * end, and reports an offset within the input. On a document it accepts:
 *  - walking it with the pull API consumes exactly the document;
 *  - what was read, written back out (strings with the Go-compatible encoder, numbers as
 *    written), is a document that reads back to the same bytes (a fixed point);
 *  - every strict prefix of an object, array or string document is refused;
 *  - a field lookup hit is an exact or folded match, and ASCII case never changes a fold;
 *  - numbers that are plain digits convert as strtoull converts them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include "base/gojson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Deeper values are skipped (and written as null), to bound the recursion. */
#define WALK_DEPTH 512

static const char *const fields[] = {"Data",    "Checksum", "policyName", "defaultCpuSet",
                                     "entries", "checksum", "data",       "DATA"};

static void check_key(const char *key, size_t len)
{
        int f = ncm__gojson_field(key, len, fields, sizeof(fields) / sizeof(fields[0]));
        char *up;

        if (f >= 0 && !(strlen(fields[f]) == len && memcmp(fields[f], key, len) == 0) &&
            !ncm__gojson_fold_equal(key, len, fields[f]))
                abort();
        up = malloc(len + 1);
        if (!up)
                return;
        for (size_t i = 0; i < len; i++)
                up[i] = key[i] >= 'a' && key[i] <= 'z' ? (char)(key[i] - 'a' + 'A') : key[i];
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
                if (ncm__gojson_fold_equal(key, len, fields[i]) !=
                    ncm__gojson_fold_equal(up, len, fields[i]))
                        abort();
        free(up);
}

static void check_number(const char *text, size_t n)
{
        char digits[32];
        uint64_t u;
        int64_t s;
        bool all_digits = n > 0 && n < sizeof(digits);

        for (size_t i = 0; i < n && all_digits; i++)
                all_digits = text[i] >= '0' && text[i] <= '9';
        if (ncm__gojson_parse_uint64(text, n, &u) != all_digits && n < 20)
                abort();
        if (all_digits) {
                unsigned long long v;
                char *end;
                memcpy(digits, text, n);
                digits[n] = '\0';
                errno = 0;
                v = strtoull(digits, &end, 10);
                if (ncm__gojson_parse_uint64(text, n, &u) != (errno == 0) || (errno == 0 && u != v))
                        abort();
        }
        (void)ncm__gojson_parse_int64(text, n, &s);
}

/* Read the value at the cursor and write it to OUT; false when out of memory. */
static bool walk(ncm_gojson *g, ncm_buf *out, int depth)
{
        ncm_gojson_kind k = ncm__gojson_peek(g);
        bool first = true;
        const char *text;
        size_t n, count = 0;
        char *s;
        int r;

        if (depth > WALK_DEPTH) {
                ncm__gojson_skip(g);
                ncm_buf_puts(out, "null");
                return true;
        }
        switch (k) {
        case NCM_GOJSON_OBJECT:
                ncm_buf_putc(out, '{');
                while ((r = ncm__gojson_next_member(g, &first, &s, &n, NULL)) > 0) {
                        check_key(s, n);
                        if (count++)
                                ncm_buf_putc(out, ',');
                        ncm_buf_json_string(out, s, n);
                        free(s);
                        ncm_buf_putc(out, ':');
                        if (!walk(g, out, depth + 1))
                                return false;
                }
                if (r < 0)
                        return false;
                ncm_buf_putc(out, '}');
                return true;
        case NCM_GOJSON_ARRAY:
                ncm_buf_putc(out, '[');
                while (ncm__gojson_next_element(g, &first)) {
                        if (count++)
                                ncm_buf_putc(out, ',');
                        if (!walk(g, out, depth + 1))
                                return false;
                }
                ncm_buf_putc(out, ']');
                return true;
        case NCM_GOJSON_STRING:
                if (ncm__gojson_string(g, &s, &n, NULL) < 0)
                        return false;
                ncm_buf_json_string(out, s, n);
                free(s);
                return true;
        case NCM_GOJSON_NUMBER:
                n = ncm__gojson_number(g, &text);
                check_number(text, n);
                ncm_buf_append(out, text, n);
                return true;
        case NCM_GOJSON_BOOL:
                ncm_buf_puts(out, ncm__gojson_bool(g) ? "true" : "false");
                return true;
        case NCM_GOJSON_NULL:
                ncm__gojson_skip(g);
                ncm_buf_puts(out, "null");
                return true;
        case NCM_GOJSON_END:
                break;
        }
        abort(); /* a checked document has a value where one is expected */
}

/* Walk TEXT (a checked document) into OUT; false when out of memory. */
static bool rewrite(const char *text, size_t len, ncm_buf *out)
{
        ncm_gojson g;
        if (ncm__gojson_init(&g, text, len, "fuzz", NULL) < 0)
                abort();
        if (!walk(&g, out, 0) || ncm_buf_failed(out))
                return false;
        if (ncm__gojson_peek(&g) != NCM_GOJSON_END || g.pos != len)
                abort();
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *text = (const char *)data;
        char msg[NCM_GOJSON_SYNTAX_MAX];
        ncm_buf a = NCM_BUF_INIT, b = NCM_BUF_INIT;
        ncm_gojson g;
        size_t off = SIZE_MAX;
        int r;

        r = ncm__gojson_check(text, size, &off, msg, sizeof(msg));
        if (ncm__gojson_init(&g, text, size, "fuzz", NULL) != r)
                abort();
        if (r < 0) {
                if (off > size || off != g.syntax_offset || strcmp(msg, g.syntax) != 0 ||
                    (strncmp(msg, "invalid character ", 18) != 0 &&
                     strcmp(msg, "unexpected end of JSON input") != 0))
                        abort();
                return 0;
        }

        /* Truncations of an object, array or string never form a document. */
        if (size <= 256) {
                ncm_gojson_kind k = ncm__gojson_peek(&g);
                ncm_gojson end = g;
                ncm__gojson_skip(&end);
                if (k == NCM_GOJSON_OBJECT || k == NCM_GOJSON_ARRAY || k == NCM_GOJSON_STRING)
                        for (size_t i = 0; i < end.pos; i++)
                                if (ncm__gojson_check(text, i, &off, NULL, 0) == 0)
                                        abort();
        }

        if (rewrite(text, size, &a) && rewrite(a.data, a.len, &b) &&
            (a.len != b.len || memcmp(a.data, b.data, a.len) != 0))
                abort();
        ncm_buf_done(&a);
        ncm_buf_done(&b);
        return 0;
}
