/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The merge without the cross product. docs/topology-manager.md has the argument; in short:
 *
 * kubelet folds compare() over the merged hint of every permutation. For a fixed
 * BestNonPreferredAffinityCount, compare() keeps the current hint unless the candidate is
 * strictly better in one strict total order on (mask, preferred) pairs, and ties only occur
 * between identical hints. So the result is the best element of the SET of distinct merged
 * hints, whatever the order and multiplicity in which they come. We fold the same compare()
 * over that set, computed directly:
 *
 *  1. Preferred merged hints: a permutation is preferred iff every chosen hint is preferred and
 *     every chosen non-"any" mask is the same mask m. So the preferred set is {D & m} for the
 *     masks m that every list offers as preferred (or for which the list has a preferred "any"
 *     hint), plus D itself when every list has a preferred "any" hint.
 *  2. If that set has a non-empty mask, a preferred hint wins and we are done. Otherwise every
 *     permutation with a non-empty merged mask is non-preferred, and the candidates are exactly
 *     the non-empty achievable ANDs D & s1 & ... & sk. That set is computed either densely
 *     (AND-convolution through superset-sum transforms over the 2^|D| subsets, counts modulo
 *     2^64 kept exact by bounding the number of tuples) or sparsely (list by list,
 *     deduplicated), whichever is cheaper.
 *  3. No candidate: {D, not preferred}, as kubelet.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tm-internal.h"

/* Dense transforms allocate 2 x 2^d words; beyond this many NUMA nodes use the sparse path. */
#define DENSE_MAX_NODES 20

/* Step 1: the best preferred merged hint, if any. */
static int preferred_phase(const ncm__tm_merger *m, ncm_hint *best, bool *have)
{
        const ncm_bitmask def = m->numa->all;
        ncm_autofree uint64_t *masks = NULL;
        ncm_autofree size_t *start = NULL, *len = NULL;
        ncm_autofree bool *any_pref = NULL;
        size_t total = 0, gen = SIZE_MAX;
        bool all_any = true;

        for (size_t i = 0; i < m->n; i++)
                total += m->lists[i].n;
        masks = malloc((total ? total : 1) * sizeof(*masks));
        start = calloc(m->n + 1, sizeof(*start));
        len = calloc(m->n + 1, sizeof(*len));
        any_pref = calloc(m->n + 1, sizeof(*any_pref));
        if (!masks || !start || !len || !any_pref)
                return -ENOMEM;

        /* Per list: its distinct preferred masks (sorted) and whether it has a preferred "any". */
        total = 0;
        for (size_t i = 0; i < m->n; i++) {
                start[i] = total;
                for (size_t j = 0; j < m->lists[i].n; j++) {
                        const ncm_hint *h = &m->lists[i].hints[j];
                        if (!h->preferred)
                                continue;
                        if (h->any)
                                any_pref[i] = true;
                        else
                                masks[total++] = h->numa;
                }
                len[i] = ncm__tm_sort_unique(&masks[start[i]], total - start[i]);
                total = start[i] + len[i];
                if (!any_pref[i]) {
                        all_any = false;
                        /* Such a list must supply the common mask itself: its preferred masks
                         * are the only candidates. Take the shortest such list. */
                        if (gen == SIZE_MAX || len[i] < len[gen])
                                gen = i;
                }
        }

        if (all_any)
                ncm__tm_fold(m, best, have, (ncm_hint){.numa = def, .preferred = true});
        for (size_t g = 0; g < m->n; g++) {
                if (gen != SIZE_MAX && g != gen)
                        continue;
                for (size_t c = 0; c < len[g]; c++) {
                        uint64_t mask = masks[start[g] + c];
                        bool ok = true;
                        for (size_t i = 0; i < m->n && ok; i++)
                                ok = any_pref[i] ||
                                     ncm__tm_sorted_contains(&masks[start[i]], len[i], mask);
                        if (ok)
                                ncm__tm_fold(m, best, have,
                                             (ncm_hint){.numa = def & mask, .preferred = true});
                }
        }
        return 0;
}

/* The positions of D's bits, to map masks inside D to dense indexes 0..2^d-1 and back. */
typedef struct dmap {
        int d;
        bool identity; /* D is nodes 0..d-1: indexes are the masks themselves */
        int bit[NCM_BITMASK_MAX_BITS];
} dmap;

static uint64_t compress(const dmap *dm, ncm_bitmask m)
{
        uint64_t r = 0;
        if (dm->identity)
                return m;
        for (int j = 0; j < dm->d; j++)
                r |= ((m >> dm->bit[j]) & 1) << j;
        return r;
}

static ncm_bitmask deposit(const dmap *dm, uint64_t x)
{
        ncm_bitmask r = 0;
        if (dm->identity)
                return x;
        for (int j = 0; j < dm->d; j++)
                r |= ((x >> j) & 1) << dm->bit[j];
        return r;
}

/* F[x] := sum of F[y] over supersets y of x (the zeta transform on the superset lattice). */
static void superset_zeta(uint64_t *f, int d)
{
        size_t size = (size_t)1 << d;
        for (size_t step = 1; step < size; step <<= 1)
                for (size_t base = 0; base < size; base += 2 * step)
                        for (size_t x = base; x < base + step; x++)
                                f[x] += f[x + step];
}

/* Its inverse (Möbius), modulo 2^64. */
static void superset_mobius(uint64_t *f, int d)
{
        size_t size = (size_t)1 << d;
        for (size_t step = 1; step < size; step <<= 1)
                for (size_t base = 0; base < size; base += 2 * step)
                        for (size_t x = base; x < base + step; x++)
                                f[x] -= f[x + step];
}

/*
 * Dense: with z_i = zeta(indicator of S_i), prod_i z_i(x) counts the tuples whose AND contains
 * x, and its Möbius inverse counts the tuples whose AND is exactly x. The true count is at
 * most the number of tuples; while that bound stays below 2^64 the wrap-around arithmetic is
 * exact. Before it would overflow, the product is collapsed to the indicator of the
 * achievable set so far (one tuple per mask), which is again a valid starting point.
 */
static int andset_dense(const ncm__tm_merger *m, const dmap *dm, uint64_t *const *lists,
                        const size_t *lens, ncm_hint *best, bool *have)
{
        const size_t size = (size_t)1 << dm->d;
        ncm_autofree uint64_t *z = malloc(size * sizeof(*z));
        ncm_autofree uint64_t *f = malloc(size * sizeof(*f));
        uint64_t bound = 1;

        if (!z || !f)
                return -ENOMEM;
        for (size_t x = 0; x < size; x++)
                z[x] = 1; /* zeta of the indicator of {all nodes}: the identity of AND */
        for (size_t i = 0; i < m->n; i++) {
                uint64_t distinct = 0, nb;
                memset(f, 0, size * sizeof(*f));
                for (size_t j = 0; j < lens[i]; j++) {
                        uint64_t c = compress(dm, lists[i][j]);
                        distinct += f[c] == 0;
                        f[c] = 1;
                }
                if (__builtin_mul_overflow(bound, distinct, &nb)) {
                        superset_mobius(z, dm->d);
                        bound = 0;
                        for (size_t x = 0; x < size; x++) {
                                z[x] = z[x] != 0;
                                bound += z[x];
                        }
                        superset_zeta(z, dm->d);
                        nb = bound * distinct; /* <= 2^20 * 2^20 */
                }
                bound = nb;
                superset_zeta(f, dm->d);
                for (size_t x = 0; x < size; x++)
                        z[x] *= f[x];
        }
        superset_mobius(z, dm->d);
        for (size_t x = 1; x < size; x++)
                if (z[x] != 0)
                        ncm__tm_fold(m, best, have,
                                     (ncm_hint){.numa = deposit(dm, x), .preferred = false});
        return 0;
}

/* Open-addressing set of non-zero masks. */
typedef struct mset {
        uint64_t *slot;
        size_t cap, n;
} mset;

static size_t mset_hash(uint64_t v, size_t cap)
{
        v ^= v >> 33;
        v *= UINT64_C(0xff51afd7ed558ccd);
        v ^= v >> 33;
        return (size_t)v & (cap - 1);
}

static int mset_init(mset *s, size_t want)
{
        size_t cap = 16;
        while (cap < want * 2)
                cap <<= 1;
        s->slot = calloc(cap, sizeof(*s->slot));
        s->cap = cap;
        s->n = 0;
        return s->slot ? 0 : -ENOMEM;
}

static int mset_add(mset *s, uint64_t v)
{
        size_t i;

        if ((s->n + 1) * 2 > s->cap) {
                mset bigger;
                if (mset_init(&bigger, s->cap) < 0)
                        return -ENOMEM;
                for (size_t k = 0; k < s->cap; k++)
                        if (s->slot[k])
                                (void)mset_add(&bigger, s->slot[k]);
                free(s->slot);
                *s = bigger;
        }
        for (i = mset_hash(v, s->cap); s->slot[i]; i = (i + 1) & (s->cap - 1))
                if (s->slot[i] == v)
                        return 0;
        s->slot[i] = v;
        s->n++;
        return 1;
}

/*
 * Sparse: R_0 = {D}, R_i = {r & s != 0 : r in R_{i-1}, s in S_i}. Empty ANDs are dropped at
 * once (they stay empty and are never candidates). Cost: sum of |R_{i-1}| * |S_i|, never more
 * than the cross product's size.
 */
static int andset_sparse(const ncm__tm_merger *m, uint64_t *const *sets, const size_t *sizes,
                         ncm_hint *best, bool *have)
{
        ncm_autofree uint64_t *cur = malloc(sizeof(*cur));
        size_t ncur = 1;

        if (!cur)
                return -ENOMEM;
        cur[0] = m->numa->all;
        for (size_t i = 0; i < m->n && ncur > 0; i++) {
                mset next;
                size_t k = 0;
                if (mset_init(&next, ncur < 64 ? 64 : ncur) < 0)
                        return -ENOMEM;
                for (size_t a = 0; a < ncur; a++) {
                        for (size_t j = 0; j < sizes[i]; j++) {
                                uint64_t v = cur[a] & sets[i][j];
                                if (v && mset_add(&next, v) < 0) {
                                        free(next.slot);
                                        return -ENOMEM;
                                }
                        }
                }
                free(cur);
                cur = malloc((next.n ? next.n : 1) * sizeof(*cur));
                if (!cur) {
                        free(next.slot);
                        return -ENOMEM;
                }
                for (size_t s = 0; s < next.cap; s++)
                        if (next.slot[s])
                                cur[k++] = next.slot[s];
                ncur = k;
                free(next.slot);
        }
        for (size_t a = 0; a < ncur; a++)
                ncm__tm_fold(m, best, have, (ncm_hint){.numa = cur[a], .preferred = false});
        return 0;
}

/* Step 2: the best non-preferred merged hint over all achievable non-empty ANDs. */
static int nonpreferred_phase(const ncm__tm_merger *m, ncm_hint *best, bool *have)
{
        const ncm_bitmask def = m->numa->all;
        ncm_autofree uint64_t *pool = NULL;
        ncm_autofree uint64_t **sets = NULL;
        ncm_autofree size_t *sizes = NULL;
        size_t total = 0, used = 0;
        double cost_sparse = 0, cost_dense, reach = 1, space;
        ncm__tm_andset_method method = m->andset;
        dmap dm = {0, false, {0}};
        bool dense;

        if (def == 0)
                return 0; /* every merged mask is empty */
        dm.d = ncm_bitmask_to_bits(def, dm.bit);
        dm.identity = def == ((dm.d == 64) ? ~UINT64_C(0) : (UINT64_C(1) << dm.d) - 1);
        for (size_t i = 0; i < m->n; i++)
                total += m->lists[i].n;
        pool = malloc((total ? total : 1) * sizeof(*pool));
        sets = calloc(m->n + 1, sizeof(*sets));
        sizes = calloc(m->n + 1, sizeof(*sizes));
        if (!pool || !sets || !sizes)
                return -ENOMEM;

        /* Each list as its masks inside D ("any" is D itself), duplicates still in. */
        for (size_t i = 0; i < m->n; i++) {
                sets[i] = &pool[used];
                for (size_t j = 0; j < m->lists[i].n; j++) {
                        const ncm_hint *h = &m->lists[i].hints[j];
                        pool[used + j] = h->any ? def : (h->numa & def);
                }
                sizes[i] = m->lists[i].n;
                used += sizes[i];
        }

        /* Choose the cheaper way (estimated element operations; list lengths bound the
         * numbers of distinct masks). */
        space = (double)((uint64_t)1 << (dm.d < 63 ? dm.d : 63));
        for (size_t i = 0; i < m->n; i++) {
                double s = (double)sizes[i] < space ? (double)sizes[i] : space;
                cost_sparse += (reach < space ? reach : space) * s;
                reach *= s;
        }
        cost_dense = ((double)m->n + 1) * ((double)dm.d + 1) * space;
        if (method == NCM__TM_ANDSET_AUTO)
                dense = dm.d <= DENSE_MAX_NODES && cost_dense < cost_sparse;
        else
                dense = method == NCM__TM_ANDSET_DENSE && dm.d <= DENSE_MAX_NODES;

        if (dense)
                return andset_dense(m, &dm, sets, sizes, best, have);
        for (size_t i = 0; i < m->n; i++)
                sizes[i] = ncm__tm_sort_unique(sets[i], sizes[i]);
        return andset_sparse(m, sets, sizes, best, have);
}

int ncm__tm_merge_fast(const ncm__tm_merger *m, ncm_hint *ret)
{
        bool have;
        return ncm__tm_merge_fast_have(m, ret, &have);
}

int ncm__tm_merge_fast_have(const ncm__tm_merger *m, ncm_hint *ret, bool *ret_have)
{
        const ncm_hint none = {.numa = m->numa->all, .any = false, .preferred = false};
        ncm_hint best = {0};
        bool have = false;
        int r;

        *ret_have = false;
        for (size_t i = 0; i < m->n; i++) {
                if (m->lists[i].n == 0) {
                        *ret = none;
                        return 0;
                }
        }
        r = preferred_phase(m, &best, &have);
        if (r < 0)
                return r;
        if (!have) {
                r = nonpreferred_phase(m, &best, &have);
                if (r < 0)
                        return r;
        }
        *ret = have ? best : none;
        *ret_have = have;
        return 0;
}
