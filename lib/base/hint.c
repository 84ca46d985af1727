/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>

#include <nodecm/hint.h>
#include "base/array.h"

int ncm_hint_list_append(ncm_hint_list *l, ncm_hint h)
{
        if (ncm__array_grow(l->hints, l->cap, l->n) < 0)
                return -ENOMEM;
        l->hints[l->n++] = h;
        l->nil = false;
        return 0;
}

void ncm_hint_list_done(ncm_hint_list *l)
{
        free(l->hints);
        *l = (ncm_hint_list)NCM_HINT_LIST_INIT;
}

void ncm_bitmask_format_ids(ncm_bitmask m, ncm_buf *b)
{
        int bits[NCM_BITMASK_MAX_BITS];
        int k = ncm_bitmask_to_bits(m, bits);
        for (int i = 0; i < k; i++)
                ncm_buf_printf(b, "%s%d", i ? "," : "", bits[i]);
}

void ncm_hint_format(const ncm_hint *h, bool mark, ncm_buf *b)
{
        if (h->any) {
                ncm_buf_puts(b, "any");
        } else {
                ncm_buf_putc(b, '[');
                ncm_bitmask_format_ids(h->numa, b);
                ncm_buf_putc(b, ']');
        }
        if (mark && h->preferred)
                ncm_buf_putc(b, '*');
}

void ncm_hint_format_json(const ncm_hint *h, ncm_buf *b)
{
        int bits[NCM_BITMASK_MAX_BITS];
        int nb;

        ncm_buf_puts(b, "{\"numa\": ");
        if (h->any) {
                ncm_buf_puts(b, "null");
        } else {
                nb = ncm_bitmask_to_bits(h->numa, bits);
                ncm_buf_putc(b, '[');
                for (int j = 0; j < nb; j++)
                        ncm_buf_printf(b, j ? ", %d" : "%d", bits[j]);
                ncm_buf_putc(b, ']');
        }
        ncm_buf_printf(b, ", \"preferred\": %s}", h->preferred ? "true" : "false");
}
