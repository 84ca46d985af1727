/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: a hash index over an array of elements keyed by strings (a pod UID and a container
 * name, a container id), so that a store that grows with a pod's containers finds one in O(1)
 * instead of walking them all: a pod of 25,000 containers admitted one lookup per container
 * would otherwise cost 25,000^2 / 2 comparisons. The array keeps the elements and their order;
 * the index keeps their positions (and each key's hash, to grow without the keys). The caller
 * tells it when an element is added, removed or moved.
 */
#ifndef NCM_BASE_STRINDEX_H
#define NCM_BASE_STRINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct ncm__strindex {
        struct ncm__strindex_slot {
                uint32_t pos;  /* element position + 1; 0 empty, UINT32_MAX removed */
                uint32_t hash; /* the key's hash, low 32 bits */
        } * slots;
        size_t cap;  /* a power of two, or 0 */
        size_t used; /* slots not empty (live and removed) */
        size_t live;
} ncm__strindex;

/* FNV-1a of A, a NUL, then B (NULL: A alone). */
uint32_t ncm__strindex_hash(const char *a, const char *b);

/* The element with hash H for which EQ(position, CTX) holds, or -1. */
ssize_t ncm__strindex_find(const ncm__strindex *ix, uint32_t h,
                           bool (*eq)(size_t pos, const void *ctx), const void *ctx);
/* Room for N more additions that cannot fail. 0 or -ENOMEM (the index as it was). */
int ncm__strindex_reserve(ncm__strindex *ix, size_t n);
/* Element POS has hash H now. 0 or -ENOMEM (the index as it was). */
int ncm__strindex_add(ncm__strindex *ix, uint32_t h, size_t pos);
/* Element POS (hash H) is gone. */
void ncm__strindex_del(ncm__strindex *ix, uint32_t h, size_t pos);
/* Element FROM (hash H) is at TO now. */
void ncm__strindex_move(ncm__strindex *ix, uint32_t h, size_t from, size_t to);
void ncm__strindex_done(ncm__strindex *ix);

#endif
