/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Go's encoding/json, reading side: the scanner that checks a document (scanner.go), the
 * unquoting of strings (decode.go unquoteBytes), struct field lookup (fold.go) and the
 * strconv rules numbers go through. See gojson.h for how the pieces fit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include "base/gojson.h"
#include "base/json.h"

#define UNEXPECTED_END "unexpected end of JSON input"

static bool is_space(unsigned char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_digit(unsigned char c)
{
        return c >= '0' && c <= '9';
}

static bool is_hex(unsigned char c)
{
        return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* ---------------------------------------------------------------------------------------- */
/* The scanner                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* scanner.go's step functions; the literal states share one with the word being matched. */
enum {
        ST_BEGIN_VALUE_OR_EMPTY,
        ST_BEGIN_VALUE,
        ST_BEGIN_STRING_OR_EMPTY,
        ST_BEGIN_STRING,
        ST_END_VALUE,
        ST_END_TOP,
        ST_IN_STRING,
        ST_IN_STRING_ESC,
        ST_IN_STRING_ESC_U,
        ST_NEG,
        ST_1,
        ST_0,
        ST_DOT,
        ST_DOT0,
        ST_E,
        ST_E_SIGN,
        ST_E0,
        ST_LITERAL,
};

typedef struct scanner {
        int step;
        bool end_top;
        /*
         * Go keeps a stack of parseObjectKey/parseObjectValue/parseArrayValue. A container is
         * only ever opened as a value, so below the top every object is in its value phase:
         * a bit per level (array or object) and the top object's phase are enough.
         */
        size_t depth;
        bool in_key;
        unsigned hex;     /* \u digits seen */
        const char *word; /* literal being matched, and how much of it is */
        size_t word_pos;
        char *msg;
        size_t msg_size;
        uint8_t is_array[NCM_GOJSON_MAX_DEPTH / 8 + 1];
} scanner;

/*
 * Go's quoteChar: the byte as strconv.Quote shows the rune U+00XX, in single quotes, with ' and
 * " special-cased. BUF holds at least 12 bytes.
 */
static void quote_char(unsigned char c, char *buf)
{
        static const char hex[] = "0123456789abcdef";
        char esc = 0;

        switch (c) {
        case '\'':
                strcpy(buf, "'\\''");
                return;
        case '\\':
                strcpy(buf, "'\\\\'");
                return;
        case '\a':
                esc = 'a';
                break;
        case '\b':
                esc = 'b';
                break;
        case '\f':
                esc = 'f';
                break;
        case '\n':
                esc = 'n';
                break;
        case '\r':
                esc = 'r';
                break;
        case '\t':
                esc = 't';
                break;
        case '\v':
                esc = 'v';
                break;
        default:
                break;
        }
        if (esc) {
                snprintf(buf, 12, "'\\%c'", esc);
        } else if (c >= 0x20 && c < 0x7f) {
                /* '"' included: quoteChar special-cases it to '"'. */
                snprintf(buf, 12, "'%c'", c);
        } else if (c < 0x20 || c == 0x7f) {
                snprintf(buf, 12, "'\\x%c%c'", hex[c >> 4], hex[c & 0xf]);
        } else if (c >= 0xa1 && c != 0xad) {
                /* strconv.IsPrint: Latin-1 is printable from U+00A1, but for the soft hyphen. */
                snprintf(buf, 12, "'%c%c'", 0xc0 | (c >> 6), 0x80 | (c & 0x3f));
        } else {
                snprintf(buf, 12, "'\\u00%c%c'", hex[c >> 4], hex[c & 0xf]);
        }
}

/* s.error(c, context): "invalid character 'x' CONTEXT". */
static bool fail(scanner *s, unsigned char c, const char *context)
{
        char q[12];
        quote_char(c, q);
        snprintf(s->msg, s->msg_size, "invalid character %s %s", q, context);
        return false;
}

static bool top_is_array(const scanner *s)
{
        size_t i = s->depth - 1;
        return s->is_array[i / 8] & (1u << (i % 8));
}

static bool push(scanner *s, unsigned char c, bool array)
{
        /* Go appends, then refuses a stack longer than maxNestingDepth. */
        if (s->depth >= NCM_GOJSON_MAX_DEPTH)
                return fail(s, c, "exceeded max depth");
        if (array)
                s->is_array[s->depth / 8] |= (uint8_t)(1u << (s->depth % 8));
        else
                s->is_array[s->depth / 8] &= (uint8_t) ~(1u << (s->depth % 8));
        s->depth++;
        s->in_key = !array;
        return true;
}

static void pop(scanner *s)
{
        s->depth--;
        s->in_key = false;
        if (s->depth == 0) {
                s->step = ST_END_TOP;
                s->end_top = true;
        } else {
                s->step = ST_END_VALUE;
        }
}

static bool begin_word(scanner *s, const char *word)
{
        s->word = word;
        s->word_pos = 1;
        s->step = ST_LITERAL;
        return true;
}

/* One byte through the state machine; false (message set) on a syntax error. */
static bool step(scanner *s, unsigned char c)
{
        for (;;) {
                switch (s->step) {
                case ST_BEGIN_VALUE_OR_EMPTY:
                        if (is_space(c))
                                return true;
                        s->step = c == ']' ? ST_END_VALUE : ST_BEGIN_VALUE;
                        continue;
                case ST_BEGIN_VALUE:
                        if (is_space(c))
                                return true;
                        switch (c) {
                        case '{':
                                s->step = ST_BEGIN_STRING_OR_EMPTY;
                                return push(s, c, false);
                        case '[':
                                s->step = ST_BEGIN_VALUE_OR_EMPTY;
                                return push(s, c, true);
                        case '"':
                                s->step = ST_IN_STRING;
                                return true;
                        case '-':
                                s->step = ST_NEG;
                                return true;
                        case '0':
                                s->step = ST_0;
                                return true;
                        case 't':
                                return begin_word(s, "true");
                        case 'f':
                                return begin_word(s, "false");
                        case 'n':
                                return begin_word(s, "null");
                        default:
                                break;
                        }
                        if (c >= '1' && c <= '9') {
                                s->step = ST_1;
                                return true;
                        }
                        return fail(s, c, "looking for beginning of value");
                case ST_BEGIN_STRING_OR_EMPTY:
                        if (is_space(c))
                                return true;
                        if (c == '}') {
                                s->in_key = false;
                                s->step = ST_END_VALUE;
                        } else {
                                s->step = ST_BEGIN_STRING;
                        }
                        continue;
                case ST_BEGIN_STRING:
                        if (is_space(c))
                                return true;
                        if (c == '"') {
                                s->step = ST_IN_STRING;
                                return true;
                        }
                        return fail(s, c, "looking for beginning of object key string");
                case ST_END_VALUE:
                        if (s->depth == 0) {
                                s->step = ST_END_TOP;
                                s->end_top = true;
                                continue;
                        }
                        if (is_space(c))
                                return true;
                        if (top_is_array(s)) {
                                if (c == ',') {
                                        s->step = ST_BEGIN_VALUE;
                                        return true;
                                }
                                if (c == ']') {
                                        pop(s);
                                        return true;
                                }
                                return fail(s, c, "after array element");
                        }
                        if (s->in_key) {
                                if (c == ':') {
                                        s->in_key = false;
                                        s->step = ST_BEGIN_VALUE;
                                        return true;
                                }
                                return fail(s, c, "after object key");
                        }
                        if (c == ',') {
                                s->in_key = true;
                                s->step = ST_BEGIN_STRING;
                                return true;
                        }
                        if (c == '}') {
                                pop(s);
                                return true;
                        }
                        return fail(s, c, "after object key:value pair");
                case ST_END_TOP:
                        return is_space(c) || fail(s, c, "after top-level value");
                case ST_IN_STRING:
                        if (c == '"')
                                s->step = ST_END_VALUE;
                        else if (c == '\\')
                                s->step = ST_IN_STRING_ESC;
                        else if (c < 0x20)
                                return fail(s, c, "in string literal");
                        return true;
                case ST_IN_STRING_ESC:
                        if (c == 'u') {
                                s->hex = 0;
                                s->step = ST_IN_STRING_ESC_U;
                                return true;
                        }
                        if (c && strchr("bfnrt\\/\"", c)) {
                                s->step = ST_IN_STRING;
                                return true;
                        }
                        return fail(s, c, "in string escape code");
                case ST_IN_STRING_ESC_U:
                        if (!is_hex(c))
                                return fail(s, c, "in \\u hexadecimal character escape");
                        if (++s->hex == 4)
                                s->step = ST_IN_STRING;
                        return true;
                case ST_NEG:
                        if (c == '0') {
                                s->step = ST_0;
                                return true;
                        }
                        if (c >= '1' && c <= '9') {
                                s->step = ST_1;
                                return true;
                        }
                        return fail(s, c, "in numeric literal");
                case ST_1:
                        if (is_digit(c))
                                return true;
                        s->step = ST_0;
                        continue;
                case ST_0:
                        if (c == '.') {
                                s->step = ST_DOT;
                                return true;
                        }
                        if (c == 'e' || c == 'E') {
                                s->step = ST_E;
                                return true;
                        }
                        s->step = ST_END_VALUE;
                        continue;
                case ST_DOT:
                        if (is_digit(c)) {
                                s->step = ST_DOT0;
                                return true;
                        }
                        return fail(s, c, "after decimal point in numeric literal");
                case ST_DOT0:
                        if (is_digit(c))
                                return true;
                        if (c == 'e' || c == 'E') {
                                s->step = ST_E;
                                return true;
                        }
                        s->step = ST_END_VALUE;
                        continue;
                case ST_E:
                        s->step = ST_E_SIGN;
                        if (c == '+' || c == '-')
                                return true;
                        continue;
                case ST_E_SIGN:
                        if (is_digit(c)) {
                                s->step = ST_E0;
                                return true;
                        }
                        return fail(s, c, "in exponent of numeric literal");
                case ST_E0:
                        if (is_digit(c))
                                return true;
                        s->step = ST_END_VALUE;
                        continue;
                case ST_LITERAL: {
                        char context[40];
                        if (c == (unsigned char)s->word[s->word_pos]) {
                                if (s->word[++s->word_pos] == '\0')
                                        s->step = ST_END_VALUE;
                                return true;
                        }
                        snprintf(context, sizeof(context), "in literal %s (expecting '%c')",
                                 s->word, s->word[s->word_pos]);
                        return fail(s, c, context);
                }
                default:
                        return false;
                }
        }
}

int ncm__gojson_check(const char *text, size_t len, size_t *ret_offset, char *msg, size_t msg_size)
{
        char dummy[1];
        scanner s;

        s.step = ST_BEGIN_VALUE;
        s.end_top = false;
        s.depth = 0;
        s.in_key = false;
        s.msg = msg_size ? msg : dummy;
        s.msg_size = msg_size ? msg_size : sizeof(dummy);
        for (size_t i = 0; i < len; i++) {
                /* The bulk of a document is string contents: take them in one go. */
                if (s.step == ST_IN_STRING) {
                        while (i < len && (unsigned char)text[i] >= 0x20 && text[i] != '"' &&
                               text[i] != '\\')
                                i++;
                        if (i == len)
                                break;
                }
                if (!step(&s, (unsigned char)text[i])) {
                        *ret_offset = i;
                        return -EINVAL;
                }
        }
        /* scanner.eof(): Go ends the input with a space, which completes a trailing number. */
        if (s.end_top)
                return 0;
        if (!step(&s, ' ')) {
                *ret_offset = len;
                return -EINVAL;
        }
        if (s.end_top)
                return 0;
        snprintf(s.msg, s.msg_size, "%s", UNEXPECTED_END);
        *ret_offset = len;
        return -EINVAL;
}

int ncm__gojson_init(ncm_gojson *g, const char *text, size_t len, const char *name, ncm_error *err)
{
        size_t line, col;

        g->text = text;
        g->len = len;
        g->pos = 0;
        g->name = name ? name : "<json>";
        g->syntax[0] = '\0';
        g->syntax_offset = 0;
        if (ncm__gojson_check(text, len, &g->syntax_offset, g->syntax, sizeof(g->syntax)) == 0)
                return 0;
        ncm__text_line_col(text, g->syntax_offset, &line, &col);
        if (strcmp(g->syntax, UNEXPECTED_END) == 0)
                return ncm_error_set(err, EINVAL, "%s:%zu:%zu: %s", g->name, line, col, g->syntax);
        return ncm_error_set(err, EINVAL, "%s:%zu:%zu: invalid JSON: %s", g->name, line, col,
                             g->syntax);
}

void ncm__gojson_rewind(ncm_gojson *g)
{
        g->pos = 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Walking a checked document                                                                */
/* ---------------------------------------------------------------------------------------- */

static void ws(ncm_gojson *g)
{
        while (g->pos < g->len && is_space((unsigned char)g->text[g->pos]))
                g->pos++;
}

static int cur(const ncm_gojson *g)
{
        return g->pos < g->len ? (unsigned char)g->text[g->pos] : -1;
}

ncm_gojson_kind ncm__gojson_peek(ncm_gojson *g)
{
        ws(g);
        switch (cur(g)) {
        case '{':
                return NCM_GOJSON_OBJECT;
        case '[':
                return NCM_GOJSON_ARRAY;
        case '"':
                return NCM_GOJSON_STRING;
        case 't':
        case 'f':
                return NCM_GOJSON_BOOL;
        case 'n':
                return NCM_GOJSON_NULL;
        case '-':
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7':
        case '8':
        case '9':
                return NCM_GOJSON_NUMBER;
        default:
                /* The end, or (misuse) punctuation: nothing to read here. */
                return NCM_GOJSON_END;
        }
}

const char *ncm__gojson_kind_name(ncm_gojson_kind k)
{
        switch (k) {
        case NCM_GOJSON_OBJECT:
                return "object";
        case NCM_GOJSON_ARRAY:
                return "array";
        case NCM_GOJSON_STRING:
                return "string";
        case NCM_GOJSON_NUMBER:
                return "number";
        case NCM_GOJSON_BOOL:
                return "bool";
        case NCM_GOJSON_NULL:
                return "null";
        case NCM_GOJSON_END:
                break;
        }
        return "end of input";
}

/* Past a literal or number: it ends at whitespace or punctuation. */
static void scalar_end(ncm_gojson *g)
{
        while (g->pos < g->len) {
                unsigned char c = (unsigned char)g->text[g->pos];
                if (is_space(c) || c == ',' || c == ':' || c == ']' || c == '}')
                        break;
                g->pos++;
        }
}

static void skip_string(ncm_gojson *g)
{
        size_t p = g->pos + 1;
        while (p < g->len) {
                char c = g->text[p];
                if (c == '"') {
                        p++;
                        break;
                }
                p += c == '\\' ? 2 : 1;
        }
        g->pos = p < g->len ? p : g->len;
}

void ncm__gojson_skip(ncm_gojson *g)
{
        size_t depth = 0;
        do {
                ws(g);
                switch (cur(g)) {
                case -1:
                        return;
                case '{':
                case '[':
                        depth++;
                        g->pos++;
                        break;
                case '}':
                case ']':
                        if (depth == 0)
                                return;
                        depth--;
                        g->pos++;
                        break;
                case ',':
                case ':':
                        if (depth == 0)
                                return;
                        g->pos++;
                        break;
                case '"':
                        skip_string(g);
                        break;
                default:
                        scalar_end(g);
                        break;
                }
        } while (depth > 0);
}

bool ncm__gojson_bool(ncm_gojson *g)
{
        bool v;
        ws(g);
        v = cur(g) == 't';
        scalar_end(g);
        return v;
}

size_t ncm__gojson_number(ncm_gojson *g, const char **ret_text)
{
        size_t start;
        ws(g);
        start = g->pos;
        scalar_end(g);
        *ret_text = g->text + start;
        return g->pos - start;
}

/* Length of the valid UTF-8 encoding at S (Go's utf8.DecodeRune), 0 if invalid. */
static size_t rune_len(const unsigned char *s, size_t avail)
{
        unsigned char lo = 0x80, hi = 0xbf;
        size_t n;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf) {
                n = 2;
        } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
                n = 3;
                if (s[0] == 0xe0)
                        lo = 0xa0; /* overlong */
                else if (s[0] == 0xed)
                        hi = 0x9f; /* surrogates */
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                n = 4;
                if (s[0] == 0xf0)
                        lo = 0x90; /* overlong */
                else if (s[0] == 0xf4)
                        hi = 0x8f; /* beyond U+10FFFF */
        } else {
                return 0;
        }
        if (avail < n || s[1] < lo || s[1] > hi)
                return 0;
        for (size_t k = 2; k < n; k++)
                if (s[k] < 0x80 || s[k] > 0xbf)
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
                t[0] = (char)(0xc0 | (r >> 6));
                t[1] = (char)(0x80 | (r & 0x3f));
                ncm_buf_append(b, t, 2);
        } else if (r < 0x10000) {
                t[0] = (char)(0xe0 | (r >> 12));
                t[1] = (char)(0x80 | ((r >> 6) & 0x3f));
                t[2] = (char)(0x80 | (r & 0x3f));
                ncm_buf_append(b, t, 3);
        } else {
                t[0] = (char)(0xf0 | (r >> 18));
                t[1] = (char)(0x80 | ((r >> 12) & 0x3f));
                t[2] = (char)(0x80 | ((r >> 6) & 0x3f));
                t[3] = (char)(0x80 | (r & 0x3f));
                ncm_buf_append(b, t, 4);
        }
}

/* Go's getu4: the value of a \uXXXX escape at S, or -1. */
static int getu4(const char *s, size_t avail)
{
        int v = 0;
        if (avail < 6 || s[0] != '\\' || s[1] != 'u')
                return -1;
        for (int i = 2; i < 6; i++) {
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

/* The escape at S[P] (a backslash) into B; returns the offset after it. */
static size_t unescape(const char *s, size_t len, size_t p, ncm_buf *b)
{
        static const char from[] = "bfnrt", to[] = "\b\f\n\r\t";
        const char *e;
        int r, r2;

        if (p + 1 >= len)
                return len;
        if (s[p + 1] != 'u') {
                e = strchr(from, s[p + 1]);
                /* '"', '\\' and '/' stand for themselves. */
                ncm_buf_putc(b, e && *e ? to[e - from] : s[p + 1]);
                return p + 2;
        }
        r = getu4(s + p, len - p);
        if (r < 0)
                return p + 2;
        p += 6;
        if (r >= 0xd800 && r < 0xe000) {
                /* utf16.DecodeRune: a high surrogate escape followed by a low one. */
                r2 = getu4(s + p, len - p);
                if (r < 0xdc00 && r2 >= 0xdc00 && r2 < 0xe000) {
                        put_rune(b, 0x10000 + (((uint32_t)r - 0xd800) << 10) +
                                                    ((uint32_t)r2 - 0xdc00));
                        return p + 6;
                }
                r = 0xfffd;
        }
        put_rune(b, (uint32_t)r);
        return p;
}

int ncm__gojson_string(ncm_gojson *g, char **ret, size_t *ret_len, ncm_error *err)
{
        static const char repl[] = "\xef\xbf\xbd";
        const char *s = g->text;
        ncm_buf b = NCM_BUF_INIT;
        size_t p, len;

        ws(g);
        p = g->pos;
        if (p < g->len && s[p] == '"')
                p++;
        while (p < g->len) {
                size_t q = p;
                /* A run that is copied as it is: ASCII and valid UTF-8 without escapes. */
                while (q < g->len && s[q] != '"' && s[q] != '\\') {
                        size_t n = rune_len((const unsigned char *)s + q, g->len - q);
                        if (!n)
                                break;
                        q += n;
                }
                if (q > p) {
                        ncm_buf_append(&b, s + p, q - p);
                        p = q;
                        continue;
                }
                if (s[p] == '"') {
                        p++;
                        break;
                }
                if (s[p] == '\\') {
                        p = unescape(s, g->len, p, &b);
                } else {
                        /* utf8.DecodeRune's (RuneError, 1): one U+FFFD per invalid byte. */
                        ncm_buf_append(&b, repl, 3);
                        p++;
                }
        }
        len = b.len;
        *ret = ncm_buf_steal(&b);
        if (!*ret)
                return ncm_error_set(err, ENOMEM, "%s: out of memory", g->name);
        if (ret_len)
                *ret_len = len;
        g->pos = p;
        return 0;
}

int ncm__gojson_next_member(ncm_gojson *g, bool *first, char **ret_key, size_t *ret_key_len,
                            ncm_error *err)
{
        int r;

        ws(g);
        if (*first) {
                *first = false;
                g->pos++; /* '{' */
                ws(g);
        } else if (cur(g) == ',') {
                g->pos++;
                ws(g);
        }
        if (cur(g) != '"') {
                if (g->pos < g->len)
                        g->pos++; /* '}' */
                return 0;
        }
        r = ncm__gojson_string(g, ret_key, ret_key_len, err);
        if (r < 0)
                return r;
        ws(g);
        if (cur(g) == ':')
                g->pos++;
        return 1;
}

bool ncm__gojson_next_element(ncm_gojson *g, bool *first)
{
        ws(g);
        if (*first) {
                *first = false;
                g->pos++; /* '[' */
                ws(g);
        } else if (cur(g) == ',') {
                g->pos++;
                ws(g);
        }
        if (g->pos >= g->len || cur(g) == ']') {
                if (g->pos < g->len)
                        g->pos++;
                return false;
        }
        return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Field names, type errors, numbers                                                         */
/* ---------------------------------------------------------------------------------------- */

static unsigned char ascii_upper(unsigned char c)
{
        return c >= 'a' && c <= 'z' ? (unsigned char)(c - 'a' + 'A') : c;
}

bool ncm__gojson_fold_equal(const char *key, size_t key_len, const char *name)
{
        const unsigned char *k = (const unsigned char *)key, *end = k + key_len;

        /*
         * foldName maps each rune to the smallest rune of its simple-fold orbit. The only
         * non-ASCII runes whose orbit holds an ASCII letter are U+017F (s, S) and U+212A (k, K).
         */
        for (const unsigned char *f = (const unsigned char *)name; *f; f++) {
                unsigned char got;
                if (k == end)
                        return false;
                if (end - k >= 2 && k[0] == 0xc5 && k[1] == 0xbf) {
                        got = 'S';
                        k += 2;
                } else if (end - k >= 3 && k[0] == 0xe2 && k[1] == 0x84 && k[2] == 0xaa) {
                        got = 'K';
                        k += 3;
                } else if (*k < 0x80) {
                        got = ascii_upper(*k++);
                } else {
                        return false;
                }
                if (got != ascii_upper(*f))
                        return false;
        }
        return k == end;
}

int ncm__gojson_field(const char *key, size_t key_len, const char *const *names, size_t n)
{
        /* fields.byExactName, then fields.byFoldedName (where the first field wins). */
        for (size_t i = 0; i < n; i++)
                if (strlen(names[i]) == key_len && memcmp(names[i], key, key_len) == 0)
                        return (int)i;
        for (size_t i = 0; i < n; i++)
                if (ncm__gojson_fold_equal(key, key_len, names[i]))
                        return (int)i;
        return -1;
}

void ncm__gojson_type_error_text(char *buf, size_t size, const char *value, const char *struct_name,
                                 const char *field, const char *go_type)
{
        if (field)
                snprintf(buf, size,
                         "json: cannot unmarshal %s into Go struct field %s.%s of type %s", value,
                         struct_name ? struct_name : "", field, go_type);
        else
                snprintf(buf, size, "json: cannot unmarshal %s into Go value of type %s", value,
                         go_type);
}

bool ncm__gojson_parse_uint64(const char *s, size_t n, uint64_t *ret)
{
        uint64_t v = 0;
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++) {
                unsigned d = (unsigned char)s[i] - '0';
                if (d > 9 || v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *ret = v;
        return true;
}

bool ncm__gojson_parse_int64(const char *s, size_t n, int64_t *ret)
{
        bool neg = false;
        uint64_t v;
        if (n && (s[0] == '+' || s[0] == '-')) {
                neg = s[0] == '-';
                s++;
                n--;
        }
        if (!ncm__gojson_parse_uint64(s, n, &v))
                return false;
        if (v > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
                return false;
        *ret = neg ? (int64_t)(0 - v) : (int64_t)v;
        return true;
}
