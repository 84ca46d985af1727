/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NUMA node masks as the kubelet's topology manager uses them: a uint64_t, bit i = NUMA node i,
 * so node ids are 0..63 ("bit number must be in range 0-63" otherwise).
 *
 * ncm_bitmask_iter enumerates every non-empty subset of a list of node ids in the kubelet's
 * IterateBitMasks order: by size (1, 2, ...), then lexicographically by position in the list.
 * That order is the order of CPU and device topology hints.
 */
#ifndef NODECM_BITMASK_H
#define NODECM_BITMASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/common.h>
#include <nodecm/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t ncm_bitmask;

#define NCM_BITMASK_MAX_BITS 64

/*
 * Population count. Without -mpopcnt, __builtin_popcountll is a libgcc call that dominated
 * the merge's and the cpuset weight's profiles; this SWAR form is branch-free and inline.
 */
static inline int ncm_popcount64(uint64_t x)
{
#ifdef __POPCNT__
        return __builtin_popcountll(x);
#else
        x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
        x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
        x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
        return (int)((x * UINT64_C(0x0101010101010101)) >> 56);
#endif
}

static inline int ncm_bitmask_count(ncm_bitmask m)
{
        return ncm_popcount64(m);
}

static inline bool ncm_bitmask_isset(ncm_bitmask m, int bit)
{
        return bit >= 0 && bit < 64 && ((m >> bit) & 1);
}

/* IsNarrowerThan: fewer bits, or as many bits and numerically smaller. */
static inline bool ncm_bitmask_is_narrower_than(ncm_bitmask a, ncm_bitmask b)
{
        int ca = ncm_bitmask_count(a), cb = ncm_bitmask_count(b);
        return ca == cb ? a < b : ca < cb;
}

/*
 * Build a mask from node ids. -EINVAL with kubelet's "bit number must be in range 0-63" when an
 * id is out of range; *RET is untouched then.
 */
NCM_API int ncm_bitmask_from_bits(const int *bits, size_t n, ncm_bitmask *ret, ncm_error *err);

/*
 * Write the mask's bits into BITS (ascending) and return how many there are (at most 64).
 */
NCM_API int ncm_bitmask_to_bits(ncm_bitmask m, int bits[NCM_BITMASK_MAX_BITS]);

/*
 * kubelet's bitmask String() (used in its logs): binary, zero-padded to a width that depends on
 * the value (4 -> "100", 5 -> "0101"). BUF needs 66 bytes.
 */
NCM_API void ncm_bitmask_format(ncm_bitmask m, char buf[66]);

typedef struct ncm_bitmask_iter {
        int bits[NCM_BITMASK_MAX_BITS]; /* the node ids, in caller order */
        int n;                          /* how many */
        int k;                          /* current subset size; 0 before the first call */
        int idx[NCM_BITMASK_MAX_BITS];  /* positions of the current subset */
} ncm_bitmask_iter;

/*
 * Start iterating the subsets of BITS (N ids, each 0..63, N <= 64). The ids are copied. Returns
 * -EINVAL for an id out of range or N > 64.
 */
NCM_API int ncm_bitmask_iter_init(ncm_bitmask_iter *it, const int *bits, int n, ncm_error *err);

/* Next subset in kubelet order; false when done. */
NCM_API bool ncm_bitmask_iter_next(ncm_bitmask_iter *it, ncm_bitmask *ret);

#ifdef __cplusplus
}
#endif
#endif
