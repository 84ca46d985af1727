/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubelet's generateCPUTopologyHints (spec §4.7).
 *
 * The masks are visited in kubelet's IterateBitMasks order over the ascending NUMA id list:
 * by size, then lexicographically by position. For k-subsets that order is the *descending*
 * numeric order of the mask written with positions reversed (position 0 as the top bit), and
 * descending k-subsets are the complements of ascending (N-k)-subsets, which Gosper's hack
 * enumerates in O(1) each. Per-node capacity and free counts are summed through tables
 * indexed by that reversed mask, so each mask costs O(1).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpumanager-alloc.h"

#define TABLE_MAX_NODES 20
#define HINT_MAX_NODES 32

/* Reverse the low N bits of X. */
static uint64_t reverse_bits(uint64_t x, int n)
{
        x = ((x >> 1) & 0x5555555555555555ULL) | ((x & 0x5555555555555555ULL) << 1);
        x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
        x = ((x >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((x & 0x0F0F0F0F0F0F0F0FULL) << 4);
        x = ((x >> 8) & 0x00FF00FF00FF00FFULL) | ((x & 0x00FF00FF00FF00FFULL) << 8);
        x = ((x >> 16) & 0x0000FFFF0000FFFFULL) | ((x & 0x0000FFFF0000FFFFULL) << 16);
        x = (x >> 32) | (x << 32);
        return x >> (64 - n);
}

/* Next larger integer with the same popcount (Gosper); Y must be non-zero. */
static uint64_t gosper_next(uint64_t y)
{
        uint64_t c = y & -y, r = y + c;
        return (((r ^ y) >> 2) / c) | r;
}

typedef struct hint_ctx {
        const ncm_cpu_index *ix;
        int n;              /* NUMA nodes with CPUs */
        const int32_t *cap; /* per reversed position */
        const int32_t *av;
        int32_t *cap_t, *av_t; /* sum tables over reversed masks (NULL past TABLE_MAX_NODES) */
        bool contiguous;       /* NUMA ids are 0..n-1 */
} hint_ctx;

static void sums(const hint_ctx *h, uint64_t x, long *cap, long *av)
{
        if (h->cap_t) {
                *cap = h->cap_t[x];
                *av = h->av_t[x];
                return;
        }
        *cap = *av = 0;
        for (uint64_t b = x; b; b &= b - 1) {
                int j = __builtin_ctzll(b);
                *cap += h->cap[j];
                *av += h->av[j];
        }
}

/* NUMA id mask of the reversed-position mask X. */
static ncm_bitmask id_mask(const hint_ctx *h, uint64_t x)
{
        uint64_t pm = reverse_bits(x, h->n);
        ncm_bitmask m = 0;

        if (h->contiguous)
                return pm;
        for (; pm; pm &= pm - 1)
                m |= UINT64_C(1) << h->ix->id[K_NUMA][__builtin_ctzll(pm)];
        return m;
}

static int sockets_of(const ncm_cpu_index *ix, ncm_bitmask mask, int32_t *stamp, int gen)
{
        const ix_rel *ns = &ix->r[R_NUMA_SOCK];
        int count = 0;

        for (int e = 0; e < ix->n[K_NUMA]; e++) {
                if (!((mask >> ix->id[K_NUMA][e]) & 1))
                        continue;
                for (int p = ns->off[e]; p < ns->off[e + 1]; p++)
                        if (stamp[ns->to_e[p]] != gen) {
                                stamp[ns->to_e[p]] = gen;
                                count++;
                        }
        }
        return count;
}

int ncm_cpu_hints_generate(const ncm_cpu_index *ix, const ncm_cpu_options *o,
                           const ncm_cpuset *available, const ncm_cpuset *reusable, int request,
                           ncm_hint_list *out, ncm_error *err)
{
        hint_ctx h = {.ix = ix, .n = ix->n[K_NUMA]};
        int n = h.n, min_aff = n, r = 0;
        int32_t cap[HINT_MAX_NODES], av[HINT_MAX_NODES], stamp_small[64];
        int32_t cap_small[256], av_small[256];
        ncm_autofree int32_t *stamp_heap = NULL;
        int32_t *stamp = stamp_small;
        ncm_bitmask reuse_mask = 0;
        long reuse_count = 0;
        size_t first = out->n;
        uint64_t full;
        int32_t *heap_cap = NULL, *heap_av = NULL;

        if (!ix->numa_ids_fit)
                return ncm_error_set(err, EINVAL,
                                     "NUMA node %lld: bit number must be in range 0-63",
                                     (long long)(ix->id[K_NUMA][0] < 0 ? ix->id[K_NUMA][0]
                                                                       : ix->id[K_NUMA][n - 1]));
        if (n > HINT_MAX_NODES)
                return ncm_error_set(err, E2BIG,
                                     "%d NUMA nodes: hint generation enumerates 2^%d masks "
                                     "(at most %d nodes supported)",
                                     n, n, HINT_MAX_NODES);
        out->nil = false;
        memset(av, 0, sizeof(av));
        if ((size_t)ix->n[K_SOCK] + 1 > NCM_ELEMENTSOF(stamp_small)) {
                stamp = stamp_heap = calloc((size_t)ix->n[K_SOCK] + 1, sizeof(*stamp));
                if (!stamp)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        } else {
                memset(stamp_small, 0, sizeof(stamp_small));
        }
        h.contiguous = ix->id[K_NUMA][n - 1] == n - 1;
        /* reversed positions: NUMA node at position i sits at bit n-1-i */
        for (int e = 0; e < n; e++)
                cap[n - 1 - e] = ix->cpus[K_NUMA].off[e + 1] - ix->cpus[K_NUMA].off[e];
        NCM_CPUSET_FOREACH(cpu, available)
        {
                if (cpu <= ix->max_cpu && ix->cpu_dense[cpu] >= 0)
                        av[n - 1 - ix->of[K_NUMA][ix->cpu_dense[cpu]]]++;
        }
        if (reusable)
                NCM_CPUSET_FOREACH(cpu, reusable)
                {
                        /* Go's map lookup of an unknown CPU yields NUMA node 0 */
                        int numa = 0;
                        if (cpu <= ix->max_cpu && ix->cpu_dense[cpu] >= 0)
                                numa = (int)ix->id[K_NUMA][ix->of[K_NUMA][ix->cpu_dense[cpu]]];
                        reuse_mask |= UINT64_C(1) << numa;
                        reuse_count++;
                }
        h.cap = cap;
        h.av = av;
        if (n <= 8) {
                h.cap_t = cap_small;
                h.av_t = av_small;
        } else if (n <= TABLE_MAX_NODES) {
                h.cap_t = heap_cap = malloc(((size_t)1 << n) * sizeof(int32_t));
                h.av_t = heap_av = malloc(((size_t)1 << n) * sizeof(int32_t));
                if (!h.cap_t || !h.av_t) {
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                        goto out;
                }
        }
        if (h.cap_t) {
                size_t sz = (size_t)1 << n;
                h.cap_t[0] = h.av_t[0] = 0;
                for (size_t x = 1; x < sz; x++) {
                        int j = __builtin_ctzll(x);
                        h.cap_t[x] = h.cap_t[x & (x - 1)] + cap[j];
                        h.av_t[x] = h.av_t[x & (x - 1)] + av[j];
                }
        }

        full = n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
        for (int k = 1; k <= n; k++) {
                int c = n - k;
                uint64_t y = c == 0 ? 0 : (UINT64_C(1) << c) - 1;
                for (;;) {
                        uint64_t x = full ^ y;
                        long capacity, avail;
                        ncm_bitmask mask;

                        sums(&h, x, &capacity, &avail);
                        if (capacity >= request && k < min_aff)
                                min_aff = k;
                        mask = id_mask(&h, x);
                        if ((reuse_mask & ~mask) == 0 && reuse_count + avail >= request) {
                                ncm_hint hint = {.numa = mask, .any = false, .preferred = false};
                                if (ncm_hint_list_append(out, hint) < 0) {
                                        r = ncm_error_set(err, ENOMEM, "out of memory");
                                        goto out;
                                }
                        }
                        if (c == 0)
                                break;
                        y = gosper_next(y);
                        if (y > full)
                                break;
                }
        }

        {
                int per_socket = ix->num_sockets ? ix->num_numa / ix->num_sockets : 0;
                int min_sockets = per_socket ? (min_aff + per_socket - 1) / per_socket : 0;
                bool align = o && o->align_by_socket;
                int gen = 0;

                for (size_t i = first; i < out->n; i++) {
                        ncm_hint *hint = &out->hints[i];
                        if (align && per_socket &&
                            sockets_of(ix, hint->numa, stamp, ++gen) == min_sockets) {
                                hint->preferred = true;
                                continue;
                        }
                        if (ncm_bitmask_count(hint->numa) == min_aff)
                                hint->preferred = true;
                }
        }
out:
        free(heap_cap);
        free(heap_av);
        return r;
}

void ncm_cpu_hints_format_json(const ncm_hint_list *hints, ncm_buf *b)
{
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < hints->n; i++) {
                if (i > 0)
                        ncm_buf_puts(b, ", ");
                ncm_hint_format_json(&hints->hints[i], b);
        }
        ncm_buf_putc(b, ']');
}
