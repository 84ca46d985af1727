/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/buf.h>

static const char hexdigits[] = "0123456789abcdef";

void ncm_buf_done(ncm_buf *b)
{
        free(b->data);
        *b = (ncm_buf)NCM_BUF_INIT;
}

void ncm_buf_reset(ncm_buf *b)
{
        b->len = 0;
        b->oom = false;
        if (b->data)
                b->data[0] = '\0';
}

bool ncm_buf_failed(const ncm_buf *b)
{
        return b->oom;
}

char *ncm_buf_steal(ncm_buf *b)
{
        char *r;
        if (b->oom) {
                ncm_buf_done(b);
                return NULL;
        }
        if (!b->data)
                return strdup("");
        r = b->data;
        *b = (ncm_buf)NCM_BUF_INIT;
        return r;
}

static bool reserve(ncm_buf *b, size_t extra)
{
        size_t need, cap;
        char *nd;

        if (b->oom)
                return false;
        if (extra > SIZE_MAX - b->len - 1) {
                b->oom = true;
                return false;
        }
        need = b->len + extra + 1;
        if (need <= b->cap)
                return true;
        cap = b->cap ? b->cap : 64;
        while (cap < need)
                cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        nd = realloc(b->data, cap);
        if (!nd) {
                b->oom = true;
                return false;
        }
        b->data = nd;
        b->cap = cap;
        return true;
}

void ncm_buf_append(ncm_buf *b, const void *data, size_t len)
{
        if (!reserve(b, len))
                return;
        if (len)
                memcpy(b->data + b->len, data, len);
        b->len += len;
        b->data[b->len] = '\0';
}

void ncm_buf_puts(ncm_buf *b, const char *s)
{
        ncm_buf_append(b, s, strlen(s));
}

void ncm_buf_putc(ncm_buf *b, char c)
{
        ncm_buf_append(b, &c, 1);
}

void ncm_buf_printf(ncm_buf *b, const char *fmt, ...)
{
        va_list ap, ap2;
        int n;

        if (b->oom)
                return;
        va_start(ap, fmt);
        va_copy(ap2, ap);
        n = vsnprintf(NULL, 0, fmt, ap);
        va_end(ap);
        if (n < 0 || !reserve(b, (size_t)n)) {
                b->oom = true;
                va_end(ap2);
                return;
        }
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        va_end(ap2);
        b->len += (size_t)n;
}

/*
 * Decode one UTF-8 sequence at S (LEN bytes left) as Go's utf8.DecodeRune does: on an invalid
 * or short sequence it returns rune -1 with width 1.
 */
static int32_t decode_rune(const unsigned char *s, size_t len, size_t *width)
{
        unsigned char c = s[0];
        int32_t r;
        size_t n;

        *width = 1;
        if (c < 0x80)
                return c;
        if (c >= 0xc2 && c <= 0xdf)
                n = 2, r = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
                n = 3, r = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
                n = 4, r = c & 0x07;
        else
                return -1;
        if (len < n)
                return -1;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return -1;
                r = (r << 6) | (s[i] & 0x3f);
        }
        /* Overlong forms, surrogates and values past U+10FFFF are invalid. */
        if ((n == 3 && r < 0x800) || (n == 4 && (r < 0x10000 || r > 0x10ffff)) ||
            (r >= 0xd800 && r <= 0xdfff))
                return -1;
        *width = n;
        return r;
}

void ncm_buf_json_string(ncm_buf *b, const char *str, size_t len)
{
        const unsigned char *s = (const unsigned char *)str;
        size_t i = 0, start = 0;

        ncm_buf_putc(b, '"');
        while (i < len) {
                unsigned char c = s[i];
                if (c < 0x80) {
                        const char *esc = NULL;
                        char u[7];
                        if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' &&
                            c != '&') {
                                i++;
                                continue;
                        }
                        ncm_buf_append(b, s + start, i - start);
                        switch (c) {
                        case '"':
                                esc = "\\\"";
                                break;
                        case '\\':
                                esc = "\\\\";
                                break;
                        case '\b':
                                esc = "\\b";
                                break;
                        case '\f':
                                esc = "\\f";
                                break;
                        case '\n':
                                esc = "\\n";
                                break;
                        case '\r':
                                esc = "\\r";
                                break;
                        case '\t':
                                esc = "\\t";
                                break;
                        default:
                                u[0] = '\\', u[1] = 'u', u[2] = '0', u[3] = '0';
                                u[4] = hexdigits[c >> 4], u[5] = hexdigits[c & 0xf], u[6] = 0;
                                esc = u;
                        }
                        ncm_buf_puts(b, esc);
                        start = ++i;
                        continue;
                }
                {
                        size_t w;
                        int32_t r = decode_rune(s + i, len - i, &w);
                        if (r < 0) {
                                ncm_buf_append(b, s + start, i - start);
                                ncm_buf_puts(b, "\\ufffd");
                                start = i += w;
                                continue;
                        }
                        if (r == 0x2028 || r == 0x2029) {
                                ncm_buf_append(b, s + start, i - start);
                                ncm_buf_puts(b, r == 0x2028 ? "\\u2028" : "\\u2029");
                                start = i += w;
                                continue;
                        }
                        i += w;
                }
        }
        ncm_buf_append(b, s + start, len - start);
        ncm_buf_putc(b, '"');
}

static bool go_is_print(int32_t r)
{
        if (r < 0x80)
                return r >= 0x20 && r < 0x7f;
        if (r < 0xa0 || r == 0xad)
                return false;
        if ((r >= 0x200b && r <= 0x200f) || (r >= 0x2028 && r <= 0x202e) ||
            (r >= 0x2060 && r <= 0x206f) || r == 0xfeff || (r >= 0xfff9 && r <= 0xfffb) ||
            (r >= 0xe000 && r <= 0xf8ff) || r >= 0xf0000)
                return false;
        return true;
}

/* The body of ncm_buf_go_quote(). */
static void put_escaped(ncm_buf *b, const char *str, size_t len, bool quote)
{
        const unsigned char *s = (const unsigned char *)str;
        size_t i = 0;

        while (i < len) {
                size_t w;
                int32_t r = decode_rune(s + i, len - i, &w);
                if (r < 0) {
                        ncm_buf_printf(b, "\\x%c%c", hexdigits[s[i] >> 4], hexdigits[s[i] & 0xf]);
                } else if (quote && (r == '"' || r == '\\')) {
                        ncm_buf_putc(b, '\\');
                        ncm_buf_putc(b, (char)r);
                } else if (go_is_print(r)) {
                        ncm_buf_append(b, s + i, w);
                } else {
                        switch (r) {
                        case '\a':
                                ncm_buf_puts(b, "\\a");
                                break;
                        case '\b':
                                ncm_buf_puts(b, "\\b");
                                break;
                        case '\f':
                                ncm_buf_puts(b, "\\f");
                                break;
                        case '\n':
                                ncm_buf_puts(b, "\\n");
                                break;
                        case '\r':
                                ncm_buf_puts(b, "\\r");
                                break;
                        case '\t':
                                ncm_buf_puts(b, "\\t");
                                break;
                        case '\v':
                                ncm_buf_puts(b, "\\v");
                                break;
                        default:
                                if (r < 0x20 || r == 0x7f)
                                        ncm_buf_printf(b, "\\x%02x", (unsigned)r);
                                else if (r < 0x10000)
                                        ncm_buf_printf(b, "\\u%04x", (unsigned)r);
                                else
                                        ncm_buf_printf(b, "\\U%08x", (unsigned)r);
                        }
                }
                i += w;
        }
}

void ncm_buf_go_quote(ncm_buf *b, const char *str, size_t len)
{
        ncm_buf_putc(b, '"');
        put_escaped(b, str, len, true);
        ncm_buf_putc(b, '"');
}

/* What can act on a terminal or reorder what it shows: controls, bidi and other format marks. */
static bool terminal_unsafe(int32_t r)
{
        return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0xad ||
               (r >= 0x200b && r <= 0x200f) || (r >= 0x2028 && r <= 0x202e) ||
               (r >= 0x2060 && r <= 0x206f) || r == 0xfeff || (r >= 0xfff9 && r <= 0xfffb);
}

void ncm_buf_put_printable(ncm_buf *b, const char *str, size_t len, unsigned flags)
{
        const unsigned char *s = (const unsigned char *)str;
        size_t i = 0, run = 0;

        while (i < len) {
                size_t w;
                int32_t r;
                bool keep;
                /* printable ASCII, most of any output, needs no decoding (a table of a
                 * 256-CPU machine is 50 kB of it) */
                if ((s[i] >= 0x20 && s[i] < 0x7f) ||
                    (s[i] == '\n' && (flags & NCM_BUF_KEEP_NEWLINES))) {
                        i++;
                        run++;
                        continue;
                }
                r = decode_rune(s + i, len - i, &w);
                keep = r >= 0 && (!terminal_unsafe(r) || r == '\t' ||
                                  (r == '\n' && (flags & NCM_BUF_KEEP_NEWLINES)));
                if (keep) {
                        i += w;
                        run += w;
                        continue;
                }
                ncm_buf_append(b, s + i - run, run);
                run = 0;
                if (r < 0) {
                        ncm_buf_printf(b, "\\x%c%c", hexdigits[s[i] >> 4], hexdigits[s[i] & 0xf]);
                        w = 1;
                } else {
                        ncm_buf_printf(b, "\\u%04x", (unsigned)r);
                }
                i += w;
        }
        ncm_buf_append(b, s + i - run, run);
}
