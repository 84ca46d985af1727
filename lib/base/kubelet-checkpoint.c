/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/hash.h>
#include "base/kubelet-checkpoint.h"

int ncm__ckpt_open(ncm_gojson *g, const char *text, size_t len, const char *name, size_t max,
                   ncm_error *err)
{
        if (max && len > max)
                return ncm_error_set(err, EFBIG, "%s: checkpoint larger than %zu bytes",
                                     name ? name : "<json>", max);
        return ncm__gojson_init(g, text, len, name, err);
}

int ncm__ckpt_probe(const char *text, size_t len, const char *name, size_t max,
                    const char *const *fields, size_t n, ncm_error *err)
{
        bool first = true, found = false;
        ncm_gojson g;
        int r, f;

        r = ncm__ckpt_open(&g, text, len, name, max, err);
        if (r < 0)
                return r;
        if (ncm__gojson_peek(&g) != NCM_GOJSON_OBJECT)
                return 0;
        while ((r = ncm__ckpt_next_field(&g, &first, fields, n, &f, err)) > 0) {
                found |= f >= 0;
                ncm__gojson_skip(&g);
        }
        return r < 0 ? r : found;
}

int ncm__ckpt_next_field(ncm_gojson *g, bool *first, const char *const *fields, size_t n,
                         int *ret_field, ncm_error *err)
{
        size_t klen;
        char *key;
        int r = ncm__gojson_next_member(g, first, &key, &klen, err);

        if (r <= 0)
                return r;
        /* a key holding NUL names no field: Go skips it as any unknown member */
        *ret_field = ncm__gojson_field(key, klen, fields, n);
        free(key);
        return 1;
}

bool ncm__ckpt_c_string(const char *s, size_t len)
{
        return strlen(s) == len;
}

int ncm__ckpt_string_field(ncm_gojson *g, char **ret, size_t *ret_len, ncm_ckpt_bad *bad,
                           ncm_error *err)
{
        ncm_gojson_kind k = ncm__gojson_peek(g);
        size_t len;
        char *s;
        int r;

        *bad = (ncm_ckpt_bad){.kind = k};
        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(g);
                return 1;
        }
        if (k != NCM_GOJSON_STRING) {
                ncm__gojson_skip(g);
                return -EINVAL;
        }
        r = ncm__gojson_string(g, &s, &len, err);
        if (r < 0)
                return r;
        if (!ncm__ckpt_c_string(s, len)) {
                free(s);
                bad->nul = true;
                return -EINVAL;
        }
        *ret = s;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int ncm__ckpt_checksum_field(ncm_gojson *g, uint64_t *ret, ncm_ckpt_bad *bad)
{
        ncm_gojson_kind k = ncm__gojson_peek(g);
        const char *text;
        size_t n;

        *bad = (ncm_ckpt_bad){.kind = k};
        if (k != NCM_GOJSON_NUMBER) {
                ncm__gojson_skip(g);
                return k == NCM_GOJSON_NULL ? 1 : -EINVAL;
        }
        n = ncm__gojson_number(g, &text);
        if (ncm__gojson_parse_uint64(text, n, ret))
                return 0;
        bad->text = text;
        bad->len = n;
        return -EINVAL;
}

void ncm__spew_nil(ncm_buf *b)
{
        ncm_buf_puts(b, "<nil>");
}

void ncm__spew_sep(ncm_buf *b, size_t i)
{
        if (i)
                ncm_buf_putc(b, ' ');
}

void ncm__spew_field(ncm_buf *b, size_t i, const char *name, const char *type)
{
        ncm__spew_sep(b, i);
        ncm_buf_printf(b, "%s:(%s)", name, type);
}

void ncm__spew_key(ncm_buf *b, size_t i, const char *key)
{
        ncm__spew_sep(b, i);
        ncm_buf_puts(b, key);
        ncm_buf_putc(b, ':');
}

void ncm__spew_strings(ncm_buf *b, bool nil, char *const *v, size_t n)
{
        if (nil) {
                ncm__spew_nil(b);
                return;
        }
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                ncm__spew_sep(b, i);
                ncm_buf_puts(b, v[i]);
        }
        ncm_buf_putc(b, ']');
}

void ncm__spew_bytes(ncm_buf *b, bool nil, const unsigned char *v, size_t n)
{
        if (nil) {
                ncm__spew_nil(b);
                return;
        }
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++)
                ncm_buf_printf(b, i ? " %u" : "%u", v[i]);
        ncm_buf_putc(b, ']');
}

int ncm__spew_sum(ncm_buf *b, uint32_t *ret)
{
        if (ncm_buf_failed(b)) {
                ncm_buf_done(b);
                return -ENOMEM;
        }
        *ret = ncm_fnv1a32(b->data ? b->data : "", b->len);
        ncm_buf_done(b);
        return 0;
}
