/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/strindex.h"

#define REMOVED UINT32_MAX

uint32_t ncm__strindex_hash(const char *a, const char *b)
{
        uint32_t h = 2166136261u;

        for (const unsigned char *p = (const unsigned char *)a; *p; p++)
                h = (h ^ *p) * 16777619u;
        if (b) {
                h = (h ^ 0) * 16777619u;
                for (const unsigned char *p = (const unsigned char *)b; *p; p++)
                        h = (h ^ *p) * 16777619u;
        }
        return h;
}

ssize_t ncm__strindex_find(const ncm__strindex *ix, uint32_t h,
                           bool (*eq)(size_t pos, const void *ctx), const void *ctx)
{
        if (!ix->cap)
                return -1;
        for (size_t i = h & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
                const struct ncm__strindex_slot *s = &ix->slots[i];
                if (s->pos == 0)
                        return -1;
                if (s->pos != REMOVED && s->hash == h && eq(s->pos - 1, ctx))
                        return (ssize_t)(s->pos - 1);
        }
}

/* Put (H, POS) in SLOTS of CAP (a free slot is there). */
static void put(struct ncm__strindex_slot *slots, size_t cap, uint32_t h, uint32_t pos)
{
        size_t i = h & (cap - 1);

        while (slots[i].pos != 0)
                i = (i + 1) & (cap - 1);
        slots[i] = (struct ncm__strindex_slot){pos, h};
}

int ncm__strindex_reserve(ncm__strindex *ix, size_t more)
{
        /* at most half full, removed slots counted: rebuilt with the live ones a quarter full */
        if ((ix->used + more) * 2 > ix->cap) {
                size_t cap = ix->cap ? ix->cap : 16;
                struct ncm__strindex_slot *n;
                while ((ix->live + more) * 2 > cap / 2)
                        cap *= 2;
                n = calloc(cap, sizeof(*n));
                if (!n)
                        return -ENOMEM;
                for (size_t i = 0; i < ix->cap; i++)
                        if (ix->slots[i].pos != 0 && ix->slots[i].pos != REMOVED)
                                put(n, cap, ix->slots[i].hash, ix->slots[i].pos);
                free(ix->slots);
                ix->slots = n;
                ix->cap = cap;
                ix->used = ix->live;
        }
        return 0;
}

int ncm__strindex_add(ncm__strindex *ix, uint32_t h, size_t pos)
{
        size_t i, reuse = SIZE_MAX;

        if (pos >= REMOVED - 1 || ncm__strindex_reserve(ix, 1) < 0)
                return -ENOMEM;
        /* the first removed slot on the way is taken again: a key added and removed over and
         * over (a pod admitted and removed) must not leave a trail that every look-up walks */
        for (i = h & (ix->cap - 1); ix->slots[i].pos != 0; i = (i + 1) & (ix->cap - 1))
                if (ix->slots[i].pos == REMOVED && reuse == SIZE_MAX)
                        reuse = i;
        if (reuse != SIZE_MAX)
                i = reuse;
        else
                ix->used++;
        ix->slots[i] = (struct ncm__strindex_slot){(uint32_t)pos + 1, h};
        ix->live++;
        return 0;
}

static struct ncm__strindex_slot *slot_of(ncm__strindex *ix, uint32_t h, size_t pos)
{
        if (!ix->cap)
                return NULL;
        for (size_t i = h & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
                struct ncm__strindex_slot *s = &ix->slots[i];
                if (s->pos == 0)
                        return NULL;
                if (s->pos == pos + 1)
                        return s;
        }
}

void ncm__strindex_del(ncm__strindex *ix, uint32_t h, size_t pos)
{
        struct ncm__strindex_slot *s = slot_of(ix, h, pos);

        if (s) {
                size_t i = (size_t)(s - ix->slots), mask = ix->cap - 1;
                s->pos = REMOVED;
                ix->live--;
                /* removed slots that end a chain are empty again: nothing probes past them */
                while (ix->slots[(i + 1) & mask].pos == 0 && ix->slots[i].pos == REMOVED) {
                        ix->slots[i].pos = 0;
                        ix->used--;
                        i = (i - 1) & mask;
                }
        }
}

void ncm__strindex_move(ncm__strindex *ix, uint32_t h, size_t from, size_t to)
{
        struct ncm__strindex_slot *s = slot_of(ix, h, from);

        if (s)
                s->pos = (uint32_t)to + 1;
}

void ncm__strindex_done(ncm__strindex *ix)
{
        free(ix->slots);
        *ix = (ncm__strindex){0};
}
