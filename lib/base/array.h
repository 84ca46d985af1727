/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: the one way lib/ grows an array that is appended to one element at a time (pods,
 * containers, hints, plan steps, checkpoint entries). The capacity doubles, so N appends cost
 * O(N) copies, and a failed allocation leaves the array as it was, so the caller's cleanup still
 * frees every element already in it.
 */
#ifndef NCM_BASE_ARRAY_H
#define NCM_BASE_ARRAY_H

#include <stddef.h>

/*
 * Make room for element N of the array at *(T **)VP, which holds *CAP elements of SIZE bytes: when
 * N is past the capacity, the capacity doubles (or becomes 8, or N + 1) and the new slots are
 * zeroed. Returns 0, or -ENOMEM with the array and *CAP untouched.
 */
int ncm__array_reserve(void *vp, size_t *cap, size_t n, size_t size);

/* ncm__array_reserve() for an array V (any T *) and its capacity CAP (a size_t lvalue). */
#define ncm__array_grow(v, cap, n) ncm__array_reserve(&(v), &(cap), (n), sizeof(*(v)))

#endif
