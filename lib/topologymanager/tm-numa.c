/* SPDX-License-Identifier: Apache-2.0 */
/* kubelet's NUMAInfo: node ids, distances, and the two ways of choosing between masks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tm-internal.h"

int ncm__tm_numa_init(ncm__tm_numa *numa, const int *ids, size_t n, const uint64_t *distances,
                      ncm_error *err)
{
        memset(numa, 0, sizeof(*numa));
        memset(numa->pos, -1, sizeof(numa->pos));
        if (n > NCM_BITMASK_MAX_BITS)
                return ncm_error_set(err, EINVAL, "bit number must be in range 0-63");
        for (size_t i = 0; i < n; i++) {
                if (ids[i] < 0 || ids[i] > 63)
                        return ncm_error_set(err, EINVAL, "bit number must be in range 0-63");
                if (numa->pos[ids[i]] >= 0)
                        return ncm_error_set(err, EINVAL, "NUMA node %d listed twice", ids[i]);
                numa->ids[i] = ids[i];
                numa->pos[ids[i]] = (int8_t)i;
                numa->all |= UINT64_C(1) << ids[i];
        }
        numa->n = n;
        if (distances && n > 0) {
                numa->dist = malloc(n * n * sizeof(uint64_t));
                if (!numa->dist)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                memcpy(numa->dist, distances, n * n * sizeof(uint64_t));
        }
        return 0;
}

void ncm__tm_numa_done(ncm__tm_numa *numa)
{
        free(numa->dist);
        numa->dist = NULL;
}

double ncm__tm_numa_avg(const ncm__tm_numa *numa, ncm_bitmask m)
{
        int bits[NCM_BITMASK_MAX_BITS];
        int nb = ncm_bitmask_to_bits(m, bits);
        double sum = 0, count = 0;

        if (nb == 0)
                return 0;
        /* The same additions in the same order as Go, so the float64 result is identical. */
        for (int i = 0; i < nb; i++) {
                for (int j = 0; j < nb; j++) {
                        int pi = numa->pos[bits[i]], pj = numa->pos[bits[j]];
                        uint64_t d = 0;
                        if (numa->dist && pi >= 0 && pj >= 0)
                                d = numa->dist[(size_t)pi * numa->n + (size_t)pj];
                        sum += (double)d;
                        count++;
                }
        }
        return sum / count;
}

ncm_bitmask ncm__tm_numa_narrowest(ncm_bitmask m1, ncm_bitmask m2)
{
        /* IsNarrowerThan: fewer nodes, or as many and numerically lower. */
        int c1 = ncm_popcount64(m1), c2 = ncm_popcount64(m2);
        return (c1 == c2 ? m1 < m2 : c1 < c2) ? m1 : m2;
}

ncm_bitmask ncm__tm_numa_closest(const ncm__tm_numa *numa, ncm_bitmask m1, ncm_bitmask m2)
{
        double d1, d2;

        if (ncm_popcount64(m1) != ncm_popcount64(m2))
                return ncm__tm_numa_narrowest(m1, m2);
        d1 = ncm__tm_numa_avg(numa, m1);
        d2 = ncm__tm_numa_avg(numa, m2);
        /* Equal average: the numerically lower mask (more low-numbered nodes). */
        if (d1 == d2)
                return m1 < m2 ? m1 : m2;
        return d1 < d2 ? m1 : m2;
}
