/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubelet_internal_checkpoint: read it as Go's encoding/json reads it into checkpoint.Data,
 * write it as json.Marshal writes it, and checksum it as the kubelet does (FNV-1a 32 over
 * the go-spew "%#v" rendering of checkpoint.checkpointData).
 *
 * The reader is a small streaming JSON decoder that knows the schema, because Go's decoding
 * rules decide the value that is hashed: null leaves a value alone, a repeated field is
 * decoded again (maps merge), keys match case-insensitively, invalid UTF-8 becomes U+FFFD.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include <nodecm/fs.h>
#include <nodecm/hash.h>
#include "devicemanager-internal.h"

/* encoding/json's scanner refuses deeper nesting ("exceeded max depth"). */
#define GJ_MAX_DEPTH 10000

/* ---- freeing ---- */

void ncm__numa_ids_done(ncm_devmgr_numa_ids *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                ncm_devmgr_strv_free(v[i].ids);
        free(v);
}

static void strv_n_free(char **v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

static void entry_done(ncm_devmgr_checkpoint_entry *e)
{
        free(e->pod_uid);
        free(e->container_name);
        free(e->resource_name);
        ncm__numa_ids_done(e->device_ids, e->n_device_ids);
        free(e->alloc_resp);
        memset(e, 0, sizeof(*e));
}

static void entries_free(ncm_devmgr_checkpoint_entry *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                entry_done(&v[i]);
        free(v);
}

static void registered_free(ncm_devmgr_registered *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].resource);
                strv_n_free(v[i].ids, v[i].n_ids);
        }
        free(v);
}

ncm_devmgr_checkpoint *ncm_devmgr_checkpoint_free(ncm_devmgr_checkpoint *cp)
{
        if (!cp)
                return NULL;
        entries_free(cp->entries, cp->n_entries);
        registered_free(cp->registered, cp->n_registered);
        free(cp);
        return NULL;
}

int ncm__numa_ids_copy(ncm_devmgr_numa_ids **dst, size_t *dst_n, const ncm_devmgr_numa_ids *src,
                       size_t n)
{
        ncm_devmgr_numa_ids *v = NULL;
        if (n) {
                v = calloc(n, sizeof(*v));
                if (!v)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                v[i].node = src[i].node;
                v[i].ids_null = src[i].ids_null;
                v[i].n_ids = src[i].n_ids;
                if (src[i].ids_null)
                        continue;
                v[i].ids = ncm__strv_dup((const char *const *)src[i].ids, src[i].n_ids);
                if (!v[i].ids) {
                        ncm__numa_ids_done(v, n);
                        return -ENOMEM;
                }
        }
        *dst = v;
        *dst_n = n;
        return 0;
}

/* ---- the Go-compatible reader ---- */

typedef struct gj {
        const char *s;
        size_t len;
        size_t pos;
        int depth;
        const char *name;
        ncm_error *err;
} gj;

static void line_col(const gj *g, size_t off, size_t *line, size_t *col)
{
        *line = 1;
        *col = 1;
        for (size_t i = 0; i < off && i < g->len; i++) {
                if (g->s[i] == '\n') {
                        (*line)++;
                        *col = 1;
                } else {
                        (*col)++;
                }
        }
}

static int syntax(gj *g, const char *fmt, ...) NCM_PRINTF(2, 3);
static int syntax(gj *g, const char *fmt, ...)
{
        char what[160];
        size_t line, col;
        va_list ap;

        if (g->pos >= g->len)
                return ncm_error_set(g->err, EINVAL, "%s: unexpected end of JSON input", g->name);
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        line_col(g, g->pos, &line, &col);
        return ncm_error_set(g->err, EINVAL, "%s:%zu:%zu: invalid JSON: %s", g->name, line, col,
                             what);
}

/* Go's scanner quotes the offending byte: 'x', or '\x01' for controls. */
static const char *quote_char(unsigned char c, char buf[8])
{
        if (c >= 0x20 && c < 0x7f && c != '\'')
                snprintf(buf, 8, "'%c'", c);
        else
                snprintf(buf, 8, "'\\x%02x'", c);
        return buf;
}

static void ws(gj *g)
{
        while (g->pos < g->len) {
                char c = g->s[g->pos];
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
                        break;
                g->pos++;
        }
}

static int peek(gj *g)
{
        ws(g);
        return g->pos < g->len ? (unsigned char)g->s[g->pos] : -1;
}

static const char *kind_of(int c)
{
        switch (c) {
        case '{':
                return "object";
        case '[':
                return "array";
        case '"':
                return "string";
        case 't':
        case 'f':
                return "bool";
        case 'n':
                return "null";
        default:
                return "number";
        }
}

static int expect_char(gj *g, char want, const char *context)
{
        char q[8];
        if (peek(g) != (unsigned char)want)
                return syntax(g, "invalid character %s %s",
                              quote_char((unsigned char)g->s[g->pos < g->len ? g->pos : 0], q),
                              context);
        g->pos++;
        return 0;
}

static int literal(gj *g, const char *word)
{
        size_t n = strlen(word);
        for (size_t i = 0; i < n; i++) {
                char q[8];
                if (g->pos >= g->len)
                        return syntax(g, "unexpected end");
                if (g->s[g->pos] != word[i])
                        return syntax(g, "invalid character %s in literal %s",
                                      quote_char((unsigned char)g->s[g->pos], q), word);
                g->pos++;
        }
        return 0;
}

static bool digit(char c)
{
        return c >= '0' && c <= '9';
}

/* A JSON number; START and N give its text. */
static int number(gj *g, size_t *start, size_t *n)
{
        const char *s = g->s;
        size_t p = g->pos;
        char q[8];

        *start = p;
        if (p < g->len && s[p] == '-')
                p++;
        if (p >= g->len)
                return g->pos = p, syntax(g, "unexpected end");
        if (s[p] == '0')
                p++;
        else if (s[p] >= '1' && s[p] <= '9')
                while (p < g->len && digit(s[p]))
                        p++;
        else
                return g->pos = p, syntax(g, "invalid character %s in numeric literal",
                                          quote_char((unsigned char)s[p], q));
        if (p < g->len && s[p] == '.') {
                p++;
                if (p >= g->len || !digit(s[p]))
                        return g->pos = p, syntax(g, "invalid character after decimal point "
                                                     "in numeric literal");
                while (p < g->len && digit(s[p]))
                        p++;
        }
        if (p < g->len && (s[p] == 'e' || s[p] == 'E')) {
                p++;
                if (p < g->len && (s[p] == '+' || s[p] == '-'))
                        p++;
                if (p >= g->len || !digit(s[p]))
                        return g->pos = p, syntax(g, "invalid character in exponent of "
                                                     "numeric literal");
                while (p < g->len && digit(s[p]))
                        p++;
        }
        g->pos = p;
        *n = p - *start;
        return 0;
}

/* Length of the valid UTF-8 rune at S (Go's utf8.DecodeRune), 0 if invalid. */
static size_t rune_len(const unsigned char *s, size_t avail)
{
        size_t n;
        unsigned char lo = 0x80, hi = 0xBF;
        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xC2 && s[0] <= 0xDF)
                n = 2;
        else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
                n = 3;
                if (s[0] == 0xE0)
                        lo = 0xA0;
                else if (s[0] == 0xED)
                        hi = 0x9F;
        } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
                n = 4;
                if (s[0] == 0xF0)
                        lo = 0x90;
                else if (s[0] == 0xF4)
                        hi = 0x8F;
        } else
                return 0;
        if (avail < n || s[1] < lo || s[1] > hi)
                return 0;
        for (size_t k = 2; k < n; k++)
                if (s[k] < 0x80 || s[k] > 0xBF)
                        return 0;
        return n;
}

static void put_rune(ncm_buf *b, uint32_t r)
{
        char t[4];
        if (r < 0x80) {
                t[0] = (char)r;
                ncm_buf_append(b, t, 1);
        } else if (r < 0x800) {
                t[0] = (char)(0xC0 | (r >> 6));
                t[1] = (char)(0x80 | (r & 0x3F));
                ncm_buf_append(b, t, 2);
        } else if (r < 0x10000) {
                t[0] = (char)(0xE0 | (r >> 12));
                t[1] = (char)(0x80 | ((r >> 6) & 0x3F));
                t[2] = (char)(0x80 | (r & 0x3F));
                ncm_buf_append(b, t, 3);
        } else {
                t[0] = (char)(0xF0 | (r >> 18));
                t[1] = (char)(0x80 | ((r >> 12) & 0x3F));
                t[2] = (char)(0x80 | ((r >> 6) & 0x3F));
                t[3] = (char)(0x80 | (r & 0x3F));
                ncm_buf_append(b, t, 4);
        }
}

static int hex4(const char *s, size_t avail)
{
        int v = 0;
        if (avail < 4)
                return -1;
        for (int i = 0; i < 4; i++) {
                char c = s[i];
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= c - '0';
                else if (c >= 'a' && c <= 'f')
                        v |= c - 'a' + 10;
                else if (c >= 'A' && c <= 'F')
                        v |= c - 'A' + 10;
                else
                        return -1;
        }
        return v;
}

/* getu4: a \uXXXX escape at S, or -1. */
static int getu4(const char *s, size_t avail)
{
        if (avail < 6 || s[0] != '\\' || s[1] != 'u')
                return -1;
        return hex4(s + 2, avail - 2);
}

/*
 * A string, unquoted as encoding/json does (escapes, surrogate pairs, U+FFFD for invalid
 * UTF-8 and lone surrogates). OUT may be NULL to only check it. On success *OUT is malloc'd
 * and NUL-terminated; a decoded NUL is refused.
 */
static int string(gj *g, char **out, size_t *out_len)
{
        static const char repl[] = "\xEF\xBF\xBD";
        ncm_buf b = NCM_BUF_INIT;
        const char *s = g->s;
        size_t p;
        char q[8];
        bool nul = false;

        if (peek(g) != '"')
                return syntax(g, "expected string");
        p = ++g->pos;
        for (;;) {
                unsigned char c;
                if (p >= g->len) {
                        g->pos = p;
                        ncm_buf_done(&b);
                        return syntax(g, "unexpected end");
                }
                c = (unsigned char)s[p];
                if (c == '"') {
                        p++;
                        break;
                }
                if (c < 0x20) {
                        g->pos = p;
                        ncm_buf_done(&b);
                        return syntax(g, "invalid character %s in string literal",
                                      quote_char(c, q));
                }
                if (c == '\\') {
                        char e;
                        if (p + 1 >= g->len) {
                                g->pos = p + 1;
                                ncm_buf_done(&b);
                                return syntax(g, "unexpected end");
                        }
                        e = s[p + 1];
                        switch (e) {
                        case '"':
                        case '\\':
                        case '/':
                                ncm_buf_putc(&b, e);
                                p += 2;
                                continue;
                        case 'b':
                                ncm_buf_putc(&b, '\b');
                                p += 2;
                                continue;
                        case 'f':
                                ncm_buf_putc(&b, '\f');
                                p += 2;
                                continue;
                        case 'n':
                                ncm_buf_putc(&b, '\n');
                                p += 2;
                                continue;
                        case 'r':
                                ncm_buf_putc(&b, '\r');
                                p += 2;
                                continue;
                        case 't':
                                ncm_buf_putc(&b, '\t');
                                p += 2;
                                continue;
                        case 'u': {
                                int r = getu4(s + p, g->len - p);
                                if (r < 0) {
                                        g->pos = p + 2;
                                        ncm_buf_done(&b);
                                        return syntax(g, "invalid character in \\u hexadecimal "
                                                         "character escape");
                                }
                                p += 6;
                                if (r >= 0xD800 && r < 0xE000) {
                                        int r2 = getu4(s + p, g->len - p);
                                        if (r < 0xDC00 && r2 >= 0xDC00 && r2 < 0xE000) {
                                                uint32_t cp = 0x10000 +
                                                              (((uint32_t)r - 0xD800) << 10) +
                                                              ((uint32_t)r2 - 0xDC00);
                                                put_rune(&b, cp);
                                                p += 6;
                                                continue;
                                        }
                                        ncm_buf_append(&b, repl, 3);
                                        continue;
                                }
                                if (r == 0)
                                        nul = true;
                                put_rune(&b, (uint32_t)r);
                                continue;
                        }
                        default:
                                g->pos = p + 1;
                                ncm_buf_done(&b);
                                return syntax(g, "invalid character %s in string escape code",
                                              quote_char((unsigned char)e, q));
                        }
                }
                if (c < 0x80) {
                        ncm_buf_putc(&b, (char)c);
                        p++;
                        continue;
                }
                {
                        size_t n = rune_len((const unsigned char *)s + p, g->len - p);
                        if (n == 0) {
                                ncm_buf_append(&b, repl, 3);
                                p++;
                        } else {
                                ncm_buf_append(&b, s + p, n);
                                p += n;
                        }
                }
        }
        g->pos = p;
        if (!out) {
                ncm_buf_done(&b);
                return 0;
        }
        if (ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return ncm_error_set(g->err, ENOMEM, "out of memory");
        }
        if (nul) {
                ncm_buf_done(&b);
                return ncm_error_set(g->err, EINVAL,
                                     "%s: a string contains \\u0000, which is not supported",
                                     g->name);
        }
        if (out_len)
                *out_len = b.len;
        *out = b.data ? b.data : strdup("");
        if (!*out)
                return ncm_error_set(g->err, ENOMEM, "out of memory");
        return 0;
}

/* Skip one value, checking its syntax (encoding/json validates the whole document). */
static int skip_value(gj *g)
{
        char *stack = NULL;
        size_t cap = 0;
        int depth = 0, r = 0;
        char q[8];

        for (;;) {
                int c = peek(g);
                /* a value */
                if (c == '{' || c == '[') {
                        if (g->depth + depth + 1 > GJ_MAX_DEPTH) {
                                r = syntax(g, "exceeded max depth");
                                goto out;
                        }
                        if ((size_t)depth == cap) {
                                char *ns = realloc(stack, cap ? cap * 2 : 64);
                                if (!ns) {
                                        r = ncm_error_set(g->err, ENOMEM, "out of memory");
                                        goto out;
                                }
                                stack = ns;
                                cap = cap ? cap * 2 : 64;
                        }
                        stack[depth++] = (char)c;
                        g->pos++;
                        if (peek(g) == (c == '{' ? '}' : ']')) {
                                g->pos++;
                                depth--;
                                goto after;
                        }
                        if (c == '[')
                                continue;
                        goto key;
                }
                if (c == '"')
                        r = string(g, NULL, NULL);
                else if (c == 't')
                        r = literal(g, "true");
                else if (c == 'f')
                        r = literal(g, "false");
                else if (c == 'n')
                        r = literal(g, "null");
                else if (c == '-' || (c >= '0' && c <= '9')) {
                        size_t st, n;
                        r = number(g, &st, &n);
                } else if (c < 0)
                        r = syntax(g, "unexpected end");
                else
                        r = syntax(g, "invalid character %s looking for beginning of value",
                                   quote_char((unsigned char)c, q));
                if (r < 0)
                        goto out;
        after:
                for (;;) {
                        if (depth == 0)
                                goto out;
                        c = peek(g);
                        if (c == ',') {
                                g->pos++;
                                if (stack[depth - 1] == '{')
                                        goto key;
                                break; /* next array element */
                        }
                        if ((c == '}' && stack[depth - 1] == '{') ||
                            (c == ']' && stack[depth - 1] == '[')) {
                                g->pos++;
                                depth--;
                                continue;
                        }
                        r = c < 0 ? syntax(g, "unexpected end")
                                  : syntax(g, "invalid character %s after %s",
                                           quote_char((unsigned char)c, q),
                                           stack[depth - 1] == '{' ? "object key:value pair"
                                                                   : "array element");
                        goto out;
                }
                continue;
        key:
                if ((r = string(g, NULL, NULL)) < 0 ||
                    (r = expect_char(g, ':', "after object key")) < 0)
                        goto out;
        }
out:
        free(stack);
        return r;
}

/* Object iteration. obj_open() consumes '{'. */
static int obj_open(gj *g)
{
        if (++g->depth > GJ_MAX_DEPTH)
                return syntax(g, "exceeded max depth");
        g->pos++;
        return 0;
}

/* 1 with *KEY (malloc'd) and the ':' consumed; 0 when the object ended. */
static int obj_next(gj *g, bool *first, char **key)
{
        int c = peek(g), r;
        char q[8];

        if (*first) {
                *first = false;
                if (c == '}') {
                        g->pos++;
                        g->depth--;
                        return 0;
                }
        } else {
                if (c == '}') {
                        g->pos++;
                        g->depth--;
                        return 0;
                }
                if (c != ',')
                        return c < 0 ? syntax(g, "unexpected end")
                                     : syntax(g,
                                              "invalid character %s after object key:value "
                                              "pair",
                                              quote_char((unsigned char)c, q));
                g->pos++;
        }
        if (peek(g) != '"')
                return peek(g) < 0 ? syntax(g, "unexpected end")
                                   : syntax(g,
                                            "invalid character %s looking for beginning of "
                                            "object key string",
                                            quote_char((unsigned char)g->s[g->pos], q));
        r = string(g, key, NULL);
        if (r < 0)
                return r;
        r = expect_char(g, ':', "after object key");
        if (r < 0) {
                free(*key);
                *key = NULL;
                return r;
        }
        return 1;
}

static int arr_open(gj *g)
{
        if (++g->depth > GJ_MAX_DEPTH)
                return syntax(g, "exceeded max depth");
        g->pos++;
        return 0;
}

/* 1 when an element follows, 0 when the array ended. */
static int arr_next(gj *g, bool *first)
{
        int c = peek(g);
        char q[8];
        if (c == ']') {
                g->pos++;
                g->depth--;
                return 0;
        }
        if (!*first) {
                if (c != ',')
                        return c < 0 ? syntax(g, "unexpected end")
                                     : syntax(g, "invalid character %s after array element",
                                              quote_char((unsigned char)c, q));
                g->pos++;
        }
        *first = false;
        return 1;
}

/* encoding/json's field matching: case-insensitive, with K (U+212A) as k and ſ (U+017F) as s. */
static bool key_is(const char *key, const char *field)
{
        const unsigned char *k = (const unsigned char *)key;
        for (; *field; field++) {
                unsigned char want = (unsigned char)*field, got;
                if (want >= 'a' && want <= 'z')
                        want -= 'a' - 'A';
                if (k[0] == 0xE2 && k[1] == 0x84 && k[2] == 0xAA) { /* U+212A */
                        got = 'K';
                        k += 3;
                } else if (k[0] == 0xC5 && k[1] == 0xBF) { /* U+017F */
                        got = 'S';
                        k += 2;
                } else if (*k) {
                        got = *k++;
                        if (got >= 'a' && got <= 'z')
                                got -= 'a' - 'A';
                } else {
                        return false;
                }
                if (got != want)
                        return false;
        }
        return *k == '\0';
}

static int type_error(gj *g, const char *path, const char *want, int c)
{
        return ncm_error_set(g->err, EINVAL, "%s: %s: expected %s, got %s", g->name, path, want,
                             c < 0 ? "end of input" : kind_of(c));
}

/* A Go string field: null leaves it alone. */
static int dec_string(gj *g, const char *path, char **field)
{
        int c = peek(g);
        char *s;
        if (c == 'n')
                return literal(g, "null");
        if (c != '"') {
                int r = skip_value(g);
                return r < 0 ? r : type_error(g, path, "string", c);
        }
        if (string(g, &s, NULL) < 0)
                return -g->err->code;
        free(*field);
        *field = s;
        return 0;
}

/* A []string decoded into a fresh (nil) slice: null stays nil. */
static int dec_strlist(gj *g, const char *path, bool *is_null, char ***ids, size_t *n_ids)
{
        int c = peek(g), r;
        bool first = true;
        char **v = NULL;
        size_t n = 0;

        *is_null = true;
        *ids = NULL;
        *n_ids = 0;
        if (c == 'n')
                return literal(g, "null");
        if (c != '[') {
                r = skip_value(g);
                return r < 0 ? r : type_error(g, path, "array of strings", c);
        }
        if ((r = arr_open(g)) < 0)
                return r;
        while ((r = arr_next(g, &first)) > 0) {
                char *s = NULL;
                char **nv;
                c = peek(g);
                if (c == 'n') {
                        if ((r = literal(g, "null")) < 0)
                                break;
                        s = strdup("");
                } else if (c == '"') {
                        if ((r = string(g, &s, NULL)) < 0)
                                break;
                } else {
                        r = skip_value(g);
                        if (r >= 0)
                                r = type_error(g, path, "string element", c);
                        break;
                }
                nv = s ? realloc(v, (n + 2) * sizeof(*v)) : NULL;
                if (!nv) {
                        free(s);
                        r = ncm_error_set(g->err, ENOMEM, "out of memory");
                        break;
                }
                v = nv;
                v[n++] = s;
                v[n] = NULL;
        }
        if (r < 0) {
                strv_n_free(v, n);
                return r;
        }
        if (!v) {
                v = calloc(1, sizeof(*v));
                if (!v)
                        return ncm_error_set(g->err, ENOMEM, "out of memory");
        }
        *is_null = false;
        *ids = v;
        *n_ids = n;
        return 0;
}

/* strconv.ParseInt(s, 10, 64). */
static bool parse_int64(const char *s, int64_t *ret)
{
        bool neg = false;
        uint64_t v = 0, limit;
        if (*s == '+' || *s == '-')
                neg = *s++ == '-';
        if (!*s)
                return false;
        limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        for (; *s; s++) {
                if (!digit(*s))
                        return false;
                if (v > (limit - (uint64_t)(*s - '0')) / 10)
                        return false;
                v = v * 10 + (uint64_t)(*s - '0');
        }
        *ret = neg ? (int64_t)(0 - v) : (int64_t)v;
        return true;
}

/* DevicesPerNUMA (map[int64][]string): object merges into the map, null makes it nil. */
static int dec_numa_map(gj *g, const char *path, ncm_devmgr_checkpoint_entry *e)
{
        int c = peek(g), r;
        bool first = true;
        char *key = NULL;
        char sub[512];

        if (c == 'n') {
                if ((r = literal(g, "null")) < 0)
                        return r;
                ncm__numa_ids_done(e->device_ids, e->n_device_ids);
                e->device_ids = NULL;
                e->n_device_ids = 0;
                e->device_ids_null = true;
                return 0;
        }
        if (c != '{') {
                r = skip_value(g);
                return r < 0 ? r : type_error(g, path, "object", c);
        }
        if ((r = obj_open(g)) < 0)
                return r;
        e->device_ids_null = false;
        while ((r = obj_next(g, &first, &key)) > 0) {
                ncm_devmgr_numa_ids item = {0};
                int64_t node = 0;
                size_t at;

                snprintf(sub, sizeof(sub), "%.200s[%.200s]", path, key);
                r = dec_strlist(g, sub, &item.ids_null, &item.ids, &item.n_ids);
                if (r >= 0 && !parse_int64(key, &node))
                        r = ncm_error_set(g->err, EINVAL,
                                          "%s: %s: key \"%s\" is not a NUMA node number", g->name,
                                          path, key);
                free(key);
                key = NULL;
                if (r < 0) {
                        strv_n_free(item.ids, item.n_ids);
                        return r;
                }
                item.node = node;
                /* Replace an existing key, else insert in numeric order. */
                for (at = 0; at < e->n_device_ids && e->device_ids[at].node < node; at++)
                        ;
                if (at < e->n_device_ids && e->device_ids[at].node == node) {
                        strv_n_free(e->device_ids[at].ids, e->device_ids[at].n_ids);
                        e->device_ids[at] = item;
                } else {
                        ncm_devmgr_numa_ids *nv =
                                        realloc(e->device_ids, (e->n_device_ids + 1) * sizeof(*nv));
                        if (!nv) {
                                strv_n_free(item.ids, item.n_ids);
                                return ncm_error_set(g->err, ENOMEM, "out of memory");
                        }
                        e->device_ids = nv;
                        memmove(nv + at + 1, nv + at, (e->n_device_ids - at) * sizeof(*nv));
                        nv[at] = item;
                        e->n_device_ids++;
                }
        }
        return r;
}

/* []byte: a base64 string, null (nil), or an array of byte values. */
static int dec_bytes(gj *g, const char *path, ncm_devmgr_checkpoint_entry *e)
{
        int c = peek(g), r;
        unsigned char *data = NULL;
        size_t len = 0;

        if (c == 'n') {
                if ((r = literal(g, "null")) < 0)
                        return r;
                free(e->alloc_resp);
                e->alloc_resp = NULL;
                e->alloc_resp_len = 0;
                e->alloc_resp_null = true;
                return 0;
        }
        if (c == '"') {
                char *s;
                size_t slen, bad = 0;
                if ((r = string(g, &s, &slen)) < 0)
                        return r;
                r = ncm_base64_decode(s, slen, &data, &len, &bad);
                free(s);
                if (r == -ENOMEM)
                        return ncm_error_set(g->err, ENOMEM, "out of memory");
                if (r < 0)
                        return ncm_error_set(g->err, EINVAL,
                                             "%s: %s: illegal base64 data at input byte %zu",
                                             g->name, path, bad);
        } else if (c == '[') {
                bool first = true;
                if ((r = arr_open(g)) < 0)
                        return r;
                data = malloc(1);
                if (!data)
                        return ncm_error_set(g->err, ENOMEM, "out of memory");
                while ((r = arr_next(g, &first)) > 0) {
                        size_t st, n;
                        unsigned v = 0;
                        unsigned char *nd;
                        c = peek(g);
                        if (c == 'n') {
                                if ((r = literal(g, "null")) < 0)
                                        break;
                        } else if (c == '-' || (c >= '0' && c <= '9')) {
                                if ((r = number(g, &st, &n)) < 0)
                                        break;
                                for (size_t i = 0; i < n; i++) {
                                        if (!digit(g->s[st + i]) || v > 255) {
                                                v = 256;
                                                break;
                                        }
                                        v = v * 10 + (unsigned)(g->s[st + i] - '0');
                                }
                                if (v > 255) {
                                        r = ncm_error_set(g->err, EINVAL,
                                                          "%s: %s: cannot unmarshal number %.*s "
                                                          "into a byte",
                                                          g->name, path, (int)(n > 32 ? 32 : n),
                                                          g->s + st);
                                        break;
                                }
                        } else {
                                r = skip_value(g);
                                if (r >= 0)
                                        r = type_error(g, path, "byte value", c);
                                break;
                        }
                        nd = realloc(data, len + 1);
                        if (!nd) {
                                r = ncm_error_set(g->err, ENOMEM, "out of memory");
                                break;
                        }
                        data = nd;
                        data[len++] = (unsigned char)v;
                }
                if (r < 0) {
                        free(data);
                        return r;
                }
        } else {
                r = skip_value(g);
                return r < 0 ? r : type_error(g, path, "base64 string", c);
        }
        free(e->alloc_resp);
        e->alloc_resp = data;
        e->alloc_resp_len = len;
        e->alloc_resp_null = false;
        return 0;
}

static int zero_entry(ncm_devmgr_checkpoint_entry *e)
{
        memset(e, 0, sizeof(*e));
        e->pod_uid = strdup("");
        e->container_name = strdup("");
        e->resource_name = strdup("");
        e->device_ids_null = true;
        e->alloc_resp_null = true;
        if (!e->pod_uid || !e->container_name || !e->resource_name) {
                entry_done(e);
                return -ENOMEM;
        }
        return 0;
}

static int dec_entry(gj *g, const char *path, ncm_devmgr_checkpoint_entry *e)
{
        int c = peek(g), r;
        bool first = true;
        char *key = NULL;
        char sub[512];

        if (c == 'n')
                return literal(g, "null");
        if (c != '{') {
                r = skip_value(g);
                return r < 0 ? r : type_error(g, path, "object", c);
        }
        if ((r = obj_open(g)) < 0)
                return r;
        while ((r = obj_next(g, &first, &key)) > 0) {
                if (key_is(key, "PodUID")) {
                        snprintf(sub, sizeof(sub), "%.400s.PodUID", path);
                        r = dec_string(g, sub, &e->pod_uid);
                } else if (key_is(key, "ContainerName")) {
                        snprintf(sub, sizeof(sub), "%.400s.ContainerName", path);
                        r = dec_string(g, sub, &e->container_name);
                } else if (key_is(key, "ResourceName")) {
                        snprintf(sub, sizeof(sub), "%.400s.ResourceName", path);
                        r = dec_string(g, sub, &e->resource_name);
                } else if (key_is(key, "DeviceIDs")) {
                        snprintf(sub, sizeof(sub), "%.400s.DeviceIDs", path);
                        r = dec_numa_map(g, sub, e);
                } else if (key_is(key, "AllocResp")) {
                        snprintf(sub, sizeof(sub), "%.400s.AllocResp", path);
                        r = dec_bytes(g, sub, e);
                } else {
                        r = skip_value(g);
                }
                free(key);
                key = NULL;
                if (r < 0)
                        return r;
        }
        return r;
}

/* []PodDevicesEntry: an array replaces the slice, null makes it nil. */
static int dec_entries(gj *g, ncm_devmgr_checkpoint *cp)
{
        int c = peek(g), r;
        bool first = true;
        ncm_devmgr_checkpoint_entry *v = NULL;
        size_t n = 0;
        char path[64];

        if (c == 'n') {
                if ((r = literal(g, "null")) < 0)
                        return r;
                entries_free(cp->entries, cp->n_entries);
                cp->entries = NULL;
                cp->n_entries = 0;
                cp->entries_null = true;
                return 0;
        }
        if (c != '[') {
                r = skip_value(g);
                return r < 0 ? r : type_error(g, "Data.PodDeviceEntries", "array", c);
        }
        if ((r = arr_open(g)) < 0)
                return r;
        while ((r = arr_next(g, &first)) > 0) {
                ncm_devmgr_checkpoint_entry *nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv) {
                        r = ncm_error_set(g->err, ENOMEM, "out of memory");
                        break;
                }
                v = nv;
                if (zero_entry(&v[n]) < 0) {
                        r = ncm_error_set(g->err, ENOMEM, "out of memory");
                        break;
                }
                n++;
                snprintf(path, sizeof(path), "Data.PodDeviceEntries[%zu]", n - 1);
                if ((r = dec_entry(g, path, &v[n - 1])) < 0)
                        break;
        }
        if (r < 0) {
                entries_free(v, n);
                return r;
        }
        entries_free(cp->entries, cp->n_entries);
        cp->entries = v;
        cp->n_entries = n;
        cp->entries_null = false;
        return 0;
}

/* map[string][]string: an object merges into the map, null makes it nil. */
static int dec_registered(gj *g, ncm_devmgr_checkpoint *cp)
{
        int c = peek(g), r;
        bool first = true;
        char *key = NULL;
        char path[512];

        if (c == 'n') {
                if ((r = literal(g, "null")) < 0)
                        return r;
                registered_free(cp->registered, cp->n_registered);
                cp->registered = NULL;
                cp->n_registered = 0;
                cp->registered_null = true;
                return 0;
        }
        if (c != '{') {
                r = skip_value(g);
                return r < 0 ? r : type_error(g, "Data.RegisteredDevices", "object", c);
        }
        if ((r = obj_open(g)) < 0)
                return r;
        cp->registered_null = false;
        while ((r = obj_next(g, &first, &key)) > 0) {
                ncm_devmgr_registered item = {0};
                size_t at;
                int cmp = 1;

                snprintf(path, sizeof(path), "Data.RegisteredDevices[%.400s]", key);
                r = dec_strlist(g, path, &item.ids_null, &item.ids, &item.n_ids);
                if (r < 0) {
                        free(key);
                        return r;
                }
                item.resource = key;
                key = NULL;
                for (at = 0; at < cp->n_registered; at++) {
                        cmp = strcmp(cp->registered[at].resource, item.resource);
                        if (cmp >= 0)
                                break;
                }
                if (at < cp->n_registered && cmp == 0) {
                        free(cp->registered[at].resource);
                        strv_n_free(cp->registered[at].ids, cp->registered[at].n_ids);
                        cp->registered[at] = item;
                } else {
                        ncm_devmgr_registered *nv = realloc(cp->registered,
                                                            (cp->n_registered + 1) * sizeof(*nv));
                        if (!nv) {
                                free(item.resource);
                                strv_n_free(item.ids, item.n_ids);
                                return ncm_error_set(g->err, ENOMEM, "out of memory");
                        }
                        cp->registered = nv;
                        memmove(nv + at + 1, nv + at, (cp->n_registered - at) * sizeof(*nv));
                        nv[at] = item;
                        cp->n_registered++;
                }
        }
        return r;
}

static int dec_data(gj *g, ncm_devmgr_checkpoint *cp)
{
        int c = peek(g), r;
        bool first = true;
        char *key = NULL;

        if (c == 'n')
                return literal(g, "null");
        if (c != '{') {
                r = skip_value(g);
                return r < 0 ? r : type_error(g, "Data", "object", c);
        }
        if ((r = obj_open(g)) < 0)
                return r;
        while ((r = obj_next(g, &first, &key)) > 0) {
                if (key_is(key, "PodDeviceEntries"))
                        r = dec_entries(g, cp);
                else if (key_is(key, "RegisteredDevices"))
                        r = dec_registered(g, cp);
                else
                        r = skip_value(g);
                free(key);
                key = NULL;
                if (r < 0)
                        return r;
        }
        return r;
}

/* checksum.Checksum (uint64): strconv.ParseUint of the number's text. */
static int dec_checksum(gj *g, ncm_devmgr_checkpoint *cp)
{
        int c = peek(g), r;
        size_t st, n;
        uint64_t v = 0;

        if (c == 'n')
                return literal(g, "null");
        if (c != '-' && !(c >= '0' && c <= '9')) {
                r = skip_value(g);
                return r < 0 ? r : type_error(g, "Checksum", "number", c);
        }
        if ((r = number(g, &st, &n)) < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                char d = g->s[st + i];
                if (!digit(d) || v > (UINT64_MAX - (uint64_t)(d - '0')) / 10)
                        return ncm_error_set(g->err, EINVAL,
                                             "%s: Checksum: cannot unmarshal number %.*s into "
                                             "a 64-bit unsigned integer",
                                             g->name, (int)(n > 40 ? 40 : n), g->s + st);
                v = v * 10 + (uint64_t)(d - '0');
        }
        cp->checksum = v;
        return 0;
}

int ncm_devmgr_checkpoint_parse(const char *text, size_t len, const char *name,
                                ncm_devmgr_checkpoint **ret, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
        gj g = {text, len, 0, 0, name ? name : "<checkpoint>", err};
        ncm_error local = NCM_ERROR_INIT;
        int c, r;
        bool first = true;
        char *key = NULL;
        char q[8];

        if (!err)
                g.err = &local;
        if (len > NCM_DEVMGR_CHECKPOINT_MAX)
                return ncm_error_set(err, EFBIG, "%s: checkpoint larger than %u bytes", g.name,
                                     NCM_DEVMGR_CHECKPOINT_MAX);
        cp = calloc(1, sizeof(*cp));
        if (!cp)
                return ncm_error_set(err, ENOMEM, "out of memory");
        /* The kubelet decodes into a value that starts with [] and {} (not nil). */
        c = peek(&g);
        if (c == 'n') {
                r = literal(&g, "null");
        } else if (c == '{') {
                if ((r = obj_open(&g)) < 0)
                        return r;
                while ((r = obj_next(&g, &first, &key)) > 0) {
                        if (key_is(key, "Data"))
                                r = dec_data(&g, cp);
                        else if (key_is(key, "Checksum"))
                                r = dec_checksum(&g, cp);
                        else
                                r = skip_value(&g);
                        free(key);
                        key = NULL;
                        if (r < 0)
                                return r;
                }
        } else if (c < 0) {
                r = syntax(&g, "unexpected end");
        } else {
                r = skip_value(&g);
                if (r >= 0)
                        r = ncm_error_set(g.err, EINVAL,
                                          "%s: expected a JSON object (checkpoint.Data), got %s",
                                          g.name, kind_of(c));
        }
        if (r < 0)
                return r;
        if (peek(&g) >= 0)
                return syntax(&g, "invalid character %s after top-level value",
                              quote_char((unsigned char)text[g.pos], q));
        *ret = NCM_TAKE_PTR(cp);
        return 0;
}

int ncm_devmgr_checkpoint_probe(const char *text, size_t len, const char *name, ncm_error *err)
{
        gj g = {text, len, 0, 0, name ? name : "<checkpoint>", err};
        ncm_error local = NCM_ERROR_INIT;
        bool first = true, found = false;
        char *key = NULL;
        int c, r;

        if (!err)
                g.err = &local;
        if (len > NCM_DEVMGR_CHECKPOINT_MAX)
                return ncm_error_set(err, EFBIG, "%s: checkpoint larger than %u bytes", g.name,
                                     NCM_DEVMGR_CHECKPOINT_MAX);
        c = peek(&g);
        if (c != '{') {
                r = skip_value(&g);
                if (r < 0)
                        return r;
                if (peek(&g) >= 0)
                        return syntax(&g, "invalid character after top-level value");
                return 0;
        }
        if ((r = obj_open(&g)) < 0)
                return r;
        while ((r = obj_next(&g, &first, &key)) > 0) {
                found |= key_is(key, "Data");
                free(key);
                key = NULL;
                if ((r = skip_value(&g)) < 0)
                        return r;
        }
        if (r < 0)
                return r;
        if (peek(&g) >= 0)
                return syntax(&g, "invalid character after top-level value");
        return found ? 1 : 0;
}

int ncm_devmgr_checkpoint_drop_pod(ncm_devmgr_checkpoint *cp, const char *pod_uid)
{
        size_t out = 0;
        int dropped = 0;
        for (size_t i = 0; i < cp->n_entries; i++) {
                if (strcmp(cp->entries[i].pod_uid, pod_uid) == 0) {
                        entry_done(&cp->entries[i]);
                        dropped++;
                } else {
                        cp->entries[out++] = cp->entries[i];
                }
        }
        cp->n_entries = out;
        return dropped;
}

int ncm_devmgr_checkpoint_load(int rootfd, const char *path, ncm_devmgr_checkpoint **ret,
                               ncm_error *err)
{
        ncm_autofree char *text = NULL;
        size_t len = 0;
        int r;

        r = ncm_fs_read_all(rootfd, path, NCM_DEVMGR_CHECKPOINT_MAX, &text, &len, err);
        if (r == -EFBIG)
                return ncm_error_set(err, EFBIG, "%s: checkpoint larger than %u bytes", path,
                                     NCM_DEVMGR_CHECKPOINT_MAX);
        if (r < 0)
                return r;
        return ncm_devmgr_checkpoint_parse(text, len, path, ret, err);
}

/* ---- go-spew rendering and checksum ---- */

static void spew_strv(ncm_buf *b, bool is_null, char *const *v, size_t n)
{
        if (is_null) {
                ncm_buf_puts(b, "<nil>");
                return;
        }
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                if (i)
                        ncm_buf_putc(b, ' ');
                ncm_buf_puts(b, v[i]);
        }
        ncm_buf_putc(b, ']');
}

void ncm_devmgr_checkpoint_spew(const ncm_devmgr_checkpoint *cp, ncm_buf *b)
{
        ncm_buf_puts(b, "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint."
                        "PodDevicesEntry)");
        if (cp->entries_null) {
                ncm_buf_puts(b, "<nil>");
        } else {
                ncm_buf_putc(b, '[');
                for (size_t i = 0; i < cp->n_entries; i++) {
                        const ncm_devmgr_checkpoint_entry *e = &cp->entries[i];
                        if (i)
                                ncm_buf_putc(b, ' ');
                        ncm_buf_puts(b, "{PodUID:(string)");
                        ncm_buf_puts(b, e->pod_uid);
                        ncm_buf_puts(b, " ContainerName:(string)");
                        ncm_buf_puts(b, e->container_name);
                        ncm_buf_puts(b, " ResourceName:(string)");
                        ncm_buf_puts(b, e->resource_name);
                        ncm_buf_puts(b, " DeviceIDs:(checkpoint.DevicesPerNUMA)");
                        if (e->device_ids_null) {
                                ncm_buf_puts(b, "<nil>");
                        } else {
                                ncm_buf_puts(b, "map[");
                                for (size_t k = 0; k < e->n_device_ids; k++) {
                                        if (k)
                                                ncm_buf_putc(b, ' ');
                                        ncm_buf_printf(b, "%" PRId64 ":", e->device_ids[k].node);
                                        spew_strv(b, e->device_ids[k].ids_null,
                                                  e->device_ids[k].ids, e->device_ids[k].n_ids);
                                }
                                ncm_buf_putc(b, ']');
                        }
                        ncm_buf_puts(b, " AllocResp:([]uint8)");
                        if (e->alloc_resp_null) {
                                ncm_buf_puts(b, "<nil>");
                        } else {
                                ncm_buf_putc(b, '[');
                                for (size_t k = 0; k < e->alloc_resp_len; k++)
                                        ncm_buf_printf(b, k ? " %u" : "%u", e->alloc_resp[k]);
                                ncm_buf_putc(b, ']');
                        }
                        ncm_buf_putc(b, '}');
                }
                ncm_buf_putc(b, ']');
        }
        ncm_buf_puts(b, " RegisteredDevices:(map[string][]string)");
        if (cp->registered_null) {
                ncm_buf_puts(b, "<nil>");
        } else {
                ncm_buf_puts(b, "map[");
                for (size_t i = 0; i < cp->n_registered; i++) {
                        if (i)
                                ncm_buf_putc(b, ' ');
                        ncm_buf_puts(b, cp->registered[i].resource);
                        ncm_buf_putc(b, ':');
                        spew_strv(b, cp->registered[i].ids_null, cp->registered[i].ids,
                                  cp->registered[i].n_ids);
                }
                ncm_buf_putc(b, ']');
        }
        ncm_buf_putc(b, '}');
}

uint64_t ncm_devmgr_checkpoint_checksum(const ncm_devmgr_checkpoint *cp)
{
        ncm_buf b = NCM_BUF_INIT;
        uint32_t h;

        ncm_devmgr_checkpoint_spew(cp, &b);
        if (ncm_buf_failed(&b)) {
                /* Out of memory: a value no 32-bit checksum can match. */
                ncm_buf_done(&b);
                return UINT64_MAX;
        }
        h = ncm_fnv1a32(b.data ? b.data : "", b.len);
        ncm_buf_done(&b);
        return h;
}

int ncm_devmgr_checkpoint_verify(const ncm_devmgr_checkpoint *cp, ncm_error *err)
{
        uint64_t computed = ncm_devmgr_checkpoint_checksum(cp);
        if (computed != cp->checksum)
                return ncm_error_set(err, NCM_E_CHECKSUM,
                                     "checkpoint is corrupted (checksum %" PRIu64
                                     ", computed %" PRIu64 ")",
                                     cp->checksum, computed);
        return 0;
}

/* ---- encoding/json output ---- */

static void json_str(ncm_buf *b, const char *s)
{
        ncm_buf_json_string(b, s, strlen(s));
}

static void json_strv(ncm_buf *b, bool is_null, char *const *v, size_t n)
{
        if (is_null) {
                ncm_buf_puts(b, "null");
                return;
        }
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                if (i)
                        ncm_buf_putc(b, ',');
                json_str(b, v[i]);
        }
        ncm_buf_putc(b, ']');
}

typedef struct numa_key {
        char text[24];
        size_t index;
} numa_key;

static int cmp_numa_key(const void *a, const void *b)
{
        return strcmp(((const numa_key *)a)->text, ((const numa_key *)b)->text);
}

/* encoding/json sorts map keys by their text: "-1" < "0" < "10" < "2". */
static void json_numa_map(ncm_buf *b, const ncm_devmgr_checkpoint_entry *e)
{
        numa_key *keys;
        if (e->device_ids_null) {
                ncm_buf_puts(b, "null");
                return;
        }
        keys = calloc(e->n_device_ids ? e->n_device_ids : 1, sizeof(*keys));
        if (!keys) {
                b->oom = true;
                return;
        }
        for (size_t i = 0; i < e->n_device_ids; i++) {
                snprintf(keys[i].text, sizeof(keys[i].text), "%" PRId64, e->device_ids[i].node);
                keys[i].index = i;
        }
        qsort(keys, e->n_device_ids, sizeof(*keys), cmp_numa_key);
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < e->n_device_ids; i++) {
                const ncm_devmgr_numa_ids *d = &e->device_ids[keys[i].index];
                if (i)
                        ncm_buf_putc(b, ',');
                ncm_buf_printf(b, "\"%s\":", keys[i].text);
                json_strv(b, d->ids_null, d->ids, d->n_ids);
        }
        ncm_buf_putc(b, '}');
        free(keys);
}

void ncm_devmgr_checkpoint_format(const ncm_devmgr_checkpoint *cp, ncm_buf *b)
{
        ncm_buf_puts(b, "{\"Data\":{\"PodDeviceEntries\":");
        if (cp->entries_null) {
                ncm_buf_puts(b, "null");
        } else {
                ncm_buf_putc(b, '[');
                for (size_t i = 0; i < cp->n_entries; i++) {
                        const ncm_devmgr_checkpoint_entry *e = &cp->entries[i];
                        if (i)
                                ncm_buf_putc(b, ',');
                        ncm_buf_puts(b, "{\"PodUID\":");
                        json_str(b, e->pod_uid);
                        ncm_buf_puts(b, ",\"ContainerName\":");
                        json_str(b, e->container_name);
                        ncm_buf_puts(b, ",\"ResourceName\":");
                        json_str(b, e->resource_name);
                        ncm_buf_puts(b, ",\"DeviceIDs\":");
                        json_numa_map(b, e);
                        ncm_buf_puts(b, ",\"AllocResp\":");
                        if (e->alloc_resp_null) {
                                ncm_buf_puts(b, "null");
                        } else {
                                ncm_buf_putc(b, '"');
                                ncm_base64_encode(b, e->alloc_resp, e->alloc_resp_len);
                                ncm_buf_putc(b, '"');
                        }
                        ncm_buf_putc(b, '}');
                }
                ncm_buf_putc(b, ']');
        }
        ncm_buf_puts(b, ",\"RegisteredDevices\":");
        if (cp->registered_null) {
                ncm_buf_puts(b, "null");
        } else {
                ncm_buf_putc(b, '{');
                for (size_t i = 0; i < cp->n_registered; i++) {
                        if (i)
                                ncm_buf_putc(b, ',');
                        json_str(b, cp->registered[i].resource);
                        ncm_buf_putc(b, ':');
                        json_strv(b, cp->registered[i].ids_null, cp->registered[i].ids,
                                  cp->registered[i].n_ids);
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_printf(b, "},\"Checksum\":%" PRIu64 "}", ncm_devmgr_checkpoint_checksum(cp));
}

int ncm_devmgr_checkpoint_write(int rootfd, const char *path, const ncm_devmgr_checkpoint *cp,
                                ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT;
        int r;

        ncm_devmgr_checkpoint_format(cp, &b);
        if (ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return ncm_error_set(err, ENOMEM, "%s: out of memory", path);
        }
        r = ncm_fs_write_atomic(rootfd, path, b.data, b.len, 0600, err);
        ncm_buf_done(&b);
        return r;
}

/* ---- show ---- */

static void show_resp_text(ncm_buf *b, const ncm_devmgr_alloc_resp *r)
{
        for (size_t i = 0; i < r->n_envs; i++)
                ncm_buf_printf(b, "    env %s=%s\n", r->envs[i].key, r->envs[i].value);
        for (size_t i = 0; i < r->n_mounts; i++)
                ncm_buf_printf(b, "    mount %s <- %s%s\n", r->mounts[i].container_path,
                               r->mounts[i].host_path, r->mounts[i].read_only ? " (ro)" : "");
        for (size_t i = 0; i < r->n_devices; i++)
                ncm_buf_printf(b, "    device %s <- %s (%s)\n", r->devices[i].container_path,
                               r->devices[i].host_path, r->devices[i].permissions);
        for (size_t i = 0; i < r->n_annotations; i++)
                ncm_buf_printf(b, "    annotation %s=%s\n", r->annotations[i].key,
                               r->annotations[i].value);
        for (size_t i = 0; i < r->n_cdi_devices; i++)
                ncm_buf_printf(b, "    cdi %s\n", r->cdi_devices[i]);
}

static void json_kv(ncm_buf *b, const ncm_devmgr_kv *v, size_t n)
{
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < n; i++) {
                if (i)
                        ncm_buf_putc(b, ',');
                json_str(b, v[i].key);
                ncm_buf_putc(b, ':');
                json_str(b, v[i].value);
        }
        ncm_buf_putc(b, '}');
}

static void show_resp_json(ncm_buf *b, const ncm_devmgr_alloc_resp *r)
{
        ncm_buf_puts(b, "{\"envs\":");
        json_kv(b, r->envs, r->n_envs);
        ncm_buf_puts(b, ",\"mounts\":[");
        for (size_t i = 0; i < r->n_mounts; i++) {
                if (i)
                        ncm_buf_putc(b, ',');
                ncm_buf_puts(b, "{\"containerPath\":");
                json_str(b, r->mounts[i].container_path);
                ncm_buf_puts(b, ",\"hostPath\":");
                json_str(b, r->mounts[i].host_path);
                ncm_buf_printf(b, ",\"readOnly\":%s}", r->mounts[i].read_only ? "true" : "false");
        }
        ncm_buf_puts(b, "],\"devices\":[");
        for (size_t i = 0; i < r->n_devices; i++) {
                if (i)
                        ncm_buf_putc(b, ',');
                ncm_buf_puts(b, "{\"containerPath\":");
                json_str(b, r->devices[i].container_path);
                ncm_buf_puts(b, ",\"hostPath\":");
                json_str(b, r->devices[i].host_path);
                ncm_buf_puts(b, ",\"permissions\":");
                json_str(b, r->devices[i].permissions);
                ncm_buf_putc(b, '}');
        }
        ncm_buf_puts(b, "],\"annotations\":");
        json_kv(b, r->annotations, r->n_annotations);
        ncm_buf_puts(b, ",\"cdiDevices\":");
        json_strv(b, false, r->cdi_devices, r->n_cdi_devices);
        ncm_buf_putc(b, '}');
}

static void show_text(const ncm_devmgr_checkpoint *cp, ncm_buf *b)
{
        uint64_t computed = ncm_devmgr_checkpoint_checksum(cp);

        ncm_buf_puts(b, "device manager checkpoint (kubelet_internal_checkpoint)\n");
        if (computed == cp->checksum)
                ncm_buf_printf(b, "checksum: %" PRIu64 " (matches the data)\n", cp->checksum);
        else
                ncm_buf_printf(b,
                               "checksum: %" PRIu64 " (does NOT match: the data gives %" PRIu64
                               "; the kubelet would ignore this file)\n",
                               cp->checksum, computed);
        ncm_buf_puts(b, "registered devices (healthy):");
        if (cp->registered_null)
                ncm_buf_puts(b, " null\n");
        else if (cp->n_registered == 0)
                ncm_buf_puts(b, " none\n");
        else
                ncm_buf_putc(b, '\n');
        for (size_t i = 0; i < cp->n_registered; i++) {
                const ncm_devmgr_registered *r = &cp->registered[i];
                ncm_buf_printf(b, "  %s:", r->resource);
                if (r->ids_null)
                        ncm_buf_puts(b, " null");
                else if (r->n_ids == 0)
                        ncm_buf_puts(b, " none");
                for (size_t k = 0; k < r->n_ids; k++)
                        ncm_buf_printf(b, " %s", r->ids[k]);
                ncm_buf_putc(b, '\n');
        }
        ncm_buf_puts(b, "allocations:");
        if (cp->entries_null)
                ncm_buf_puts(b, " null\n");
        else if (cp->n_entries == 0)
                ncm_buf_puts(b, " none\n");
        else
                ncm_buf_putc(b, '\n');
        for (size_t i = 0; i < cp->n_entries; i++) {
                const ncm_devmgr_checkpoint_entry *e = &cp->entries[i];
                ncm_devmgr_alloc_resp *resp = NULL;
                ncm_error err = NCM_ERROR_INIT;

                ncm_buf_printf(b, "  pod %s container %s resource %s\n", e->pod_uid,
                               e->container_name, e->resource_name);
                if (e->device_ids_null)
                        ncm_buf_puts(b, "    devices: null\n");
                for (size_t k = 0; k < e->n_device_ids; k++) {
                        const ncm_devmgr_numa_ids *d = &e->device_ids[k];
                        if (d->node == NCM_DEVMGR_NO_TOPOLOGY)
                                ncm_buf_puts(b, "    no NUMA node:");
                        else
                                ncm_buf_printf(b, "    NUMA node %" PRId64 ":", d->node);
                        if (d->ids_null)
                                ncm_buf_puts(b, " null");
                        for (size_t j = 0; j < d->n_ids; j++)
                                ncm_buf_printf(b, " %s", d->ids[j]);
                        ncm_buf_putc(b, '\n');
                }
                if (e->alloc_resp_null) {
                        ncm_buf_puts(b, "    AllocResp: null (the kubelet skips this entry)\n");
                        continue;
                }
                if (ncm_devmgr_alloc_resp_decode(e->alloc_resp, e->alloc_resp_len, &resp, &err) <
                    0) {
                        ncm_buf_printf(b, "    AllocResp: %s (the kubelet skips this entry)\n",
                                       err.msg);
                        continue;
                }
                show_resp_text(b, resp);
                ncm_devmgr_alloc_resp_free(resp);
        }
}

static void show_json(const ncm_devmgr_checkpoint *cp, ncm_buf *b)
{
        uint64_t computed = ncm_devmgr_checkpoint_checksum(cp);

        ncm_buf_printf(b,
                       "{\"file\":\"kubelet_internal_checkpoint\",\"checksum\":%" PRIu64
                       ",\"computed\":%" PRIu64 ",\"valid\":%s,\"registeredDevices\":",
                       cp->checksum, computed, computed == cp->checksum ? "true" : "false");
        if (cp->registered_null) {
                ncm_buf_puts(b, "null");
        } else {
                ncm_buf_putc(b, '{');
                for (size_t i = 0; i < cp->n_registered; i++) {
                        if (i)
                                ncm_buf_putc(b, ',');
                        json_str(b, cp->registered[i].resource);
                        ncm_buf_putc(b, ':');
                        json_strv(b, cp->registered[i].ids_null, cp->registered[i].ids,
                                  cp->registered[i].n_ids);
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_puts(b, ",\"entries\":");
        if (cp->entries_null) {
                ncm_buf_puts(b, "null");
        } else {
                ncm_buf_putc(b, '[');
                for (size_t i = 0; i < cp->n_entries; i++) {
                        const ncm_devmgr_checkpoint_entry *e = &cp->entries[i];
                        ncm_devmgr_alloc_resp *resp = NULL;
                        ncm_error err = NCM_ERROR_INIT;

                        if (i)
                                ncm_buf_putc(b, ',');
                        ncm_buf_puts(b, "{\"podUID\":");
                        json_str(b, e->pod_uid);
                        ncm_buf_puts(b, ",\"containerName\":");
                        json_str(b, e->container_name);
                        ncm_buf_puts(b, ",\"resourceName\":");
                        json_str(b, e->resource_name);
                        ncm_buf_puts(b, ",\"deviceIDs\":");
                        json_numa_map(b, e);
                        ncm_buf_puts(b, ",\"allocResp\":");
                        if (e->alloc_resp_null) {
                                ncm_buf_puts(b, "null");
                        } else if (ncm_devmgr_alloc_resp_decode(e->alloc_resp, e->alloc_resp_len,
                                                                &resp, &err) < 0) {
                                ncm_buf_puts(b, "null,\"allocRespError\":");
                                json_str(b, err.msg);
                        } else {
                                show_resp_json(b, resp);
                                ncm_devmgr_alloc_resp_free(resp);
                        }
                        ncm_buf_putc(b, '}');
                }
                ncm_buf_putc(b, ']');
        }
        ncm_buf_puts(b, "}\n");
}

void ncm_devmgr_checkpoint_show(const ncm_devmgr_checkpoint *cp, unsigned flags, ncm_buf *out)
{
        if (flags & NCM_DEVMGR_SHOW_JSON)
                show_json(cp, out);
        else
                show_text(cp, out);
}
