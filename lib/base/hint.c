/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>

#include <nodecm/hint.h>

int ncm_hint_list_append(ncm_hint_list *l, ncm_hint h)
{
        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 8;
                ncm_hint *nh = realloc(l->hints, cap * sizeof(*nh));
                if (!nh)
                        return -ENOMEM;
                l->hints = nh;
                l->cap = cap;
        }
        l->hints[l->n++] = h;
        l->nil = false;
        return 0;
}

void ncm_hint_list_done(ncm_hint_list *l)
{
        free(l->hints);
        *l = (ncm_hint_list)NCM_HINT_LIST_INIT;
}
