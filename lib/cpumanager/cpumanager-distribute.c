/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubelet's takeByTopologyNUMADistributed (KEP-2902, spec §3.7), newest form (align-by-socket
 * aware).
 *
 * Two Go details are reproduced on purpose:
 *
 *  - The balance score is a standard deviation rounded to 3 decimals (mean rounded first).
 *    Go sums the squared deviations in map order; here they are summed in NUMA id order. The
 *    rounding makes the difference (a last-bit one) practically invisible.
 *
 *  - kubelet's iterateCombinations builds each combination with append() on a shared prefix
 *    slice, and stores the best one without copying it. Go grows a slice's capacity 1, 2, 4,
 *    8, ..., so for combinations of 4, 6, 7, 8, 10... elements the trailing positions live in
 *    an array that later combinations with the same leading elements overwrite. The stored
 *    "best" therefore reads back as the last combination visited with the same leading
 *    elements (or the one at which the search broke off). combo_final() computes that.
 *
 * Where kubelet would spin forever (round-robin over a remainder subset that can no longer
 * give a whole group), nodecm skips the subset when scoring and fails with the accounting
 * error when allocating.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpumanager-alloc.h"

/* First combination (idx = 0..k-1) or the next in lexicographic order; false when done. */
static bool comb_next(int *idx, int m, int k, bool first)
{
        if (k < 1 || k > m)
                return false;
        if (first) {
                for (int j = 0; j < k; j++)
                        idx[j] = j;
                return true;
        }
        int j = k - 1;
        while (j >= 0 && idx[j] == m - k + j)
                j--;
        if (j < 0)
                return false;
        idx[j]++;
        for (int i = j + 1; i < k; i++)
                idx[i] = idx[i - 1] + 1;
        return true;
}

/* The deepest append that allocates a new array for a combination of K elements. */
static int alloc_depth(int k)
{
        int d = 0;
        for (int c = 1; c <= k - 1; c *= 2)
                d = c;
        return d;
}

/*
 * What Go's stored slice IDX (a K-combination of M items) reads back as once the iteration
 * has stopped: positions after the last allocating depth are shared with every combination
 * having the same leading positions. BRK is the combination at which the iteration broke off
 * (NULL when it ran to the end).
 */
static void combo_final(int *idx, int m, int k, const int *brk)
{
        int d = alloc_depth(k);

        if (d + 1 >= k)
                return;
        if (brk && memcmp(brk, idx, ((size_t)d + 1) * sizeof(int)) == 0) {
                memcpy(idx, brk, (size_t)k * sizeof(int));
                return;
        }
        for (int j = d + 1; j < k; j++)
                idx[j] = m - k + j;
}

typedef struct dist_state {
        const ncm_cpu_index *ix;
        int n, g;
        bool align;
        const int32_t *fr; /* free CPUs per NUMA node (dense), fixed during the search */
        int32_t *after;    /* availableAfterAllocation, per NUMA node */
        const int32_t *dl; /* the NUMA nodes that have free CPUs (the map's keys) */
        int ndl;
        int32_t *stamp; /* dedup marks per NUMA node */
        int stamp_gen;
        int *log;           /* NUMA nodes decremented while scoring a subset */
        const double *term; /* (v - mean)^2 for v = 0..max free CPUs of a node */
        bool last_valid;
        double last_sq, last;
} dist_state;

/*
 * kubelet's standardDeviation over every NUMA node's CPUs left after the allocation. Every
 * state scored hands out exactly N CPUs, so the values always sum to the same total and the
 * rounded mean is computed once (mean); term[v] is (v - mean)^2. The squares are summed in
 * NUMA id order, and the last result is reused when the sum repeats, which symmetric machines
 * make common.
 */
static double stddev(dist_state *s)
{
        double sq = 0;

        for (int i = 0; i < s->ndl; i++)
                sq += s->term[s->after[s->dl[i]]];
        if (s->last_valid && sq == s->last_sq)
                return s->last;
        s->last_valid = true;
        s->last_sq = sq;
        s->last = ncm__round3(sqrt(sq / s->ndl));
        return s->last;
}

/* topo.CPUDetails.AreNUMANodesInSameSocket(combo) */
static bool same_socket(const ncm_cpu_index *ix, const int32_t *vals, int k)
{
        const ix_rel *ns = &ix->r[R_NUMA_SOCK];
        int sock = -1;

        for (int j = 0; j < k; j++)
                for (int p = ns->off[vals[j]]; p < ns->off[vals[j] + 1]; p++) {
                        if (sock < 0)
                                sock = ns->to_e[p];
                        else if (sock != ns->to_e[p])
                                return false;
                }
        return true;
}

/*
 * Score handing REM CPUs in groups round-robin over SUB (NUMA nodes, K2 of them) on top of
 * s->after. Returns false when kubelet's loop would not terminate.
 */
static bool score_subset(dist_state *s, const int32_t *sub, int k2, int rem, double *ret)
{
        long sum = 0;
        int nlog = 0, r = rem;
        bool ok = true;

        for (int j = 0; j < k2; j++)
                sum += s->after[sub[j]];
        if (sum < rem)
                return false;
        while (r > 0) {
                bool progress = false;
                for (int j = 0; j < k2; j++) {
                        if (r == 0)
                                break;
                        if (s->after[sub[j]] < s->g)
                                continue;
                        s->after[sub[j]] -= s->g;
                        s->log[nlog++] = sub[j];
                        r -= s->g;
                        progress = true;
                }
                if (!progress) {
                        ok = false;
                        break;
                }
        }
        if (ok)
                *ret = stddev(s);
        for (int i = 0; i < nlog; i++)
                s->after[s->log[i]] += s->g;
        return ok;
}

typedef struct best_rem {
        int k2;    /* 0: nil */
        int *vals; /* NUMA nodes (dense) */
} best_rem;

/*
 * Evaluate one combination (VALS, K NUMA nodes). Returns false to skip it; otherwise *BAL is
 * its best balance (DBL_MAX when no remainder subset fits) and REM_OUT the remainder subset
 * kubelet would keep (k2 = 0 for nil).
 */
static bool eval_combo(dist_state *s, const int32_t *vals, int k, double *bal, best_rem *rem_out,
                       int32_t *remcombo, int *idx2, int32_t *sub)
{
        const int g = s->g, n = s->n;
        long cpus = 0, groups = 0;
        int dist, rem, mr = 0;
        double best_local = DBL_MAX;
        int best_k2 = 0;

        s->stamp_gen++;
        for (int j = 0; j < k; j++) {
                if (s->stamp[vals[j]] != s->stamp_gen) {
                        s->stamp[vals[j]] = s->stamp_gen;
                        cpus += s->fr[vals[j]];
                }
                groups += s->fr[vals[j]] / g;
        }
        if (cpus < n || groups * g < n)
                return false;
        dist = (n / k / g) * g;
        if (s->align)
                for (int j = 0; j < k; j++)
                        if (dist > s->fr[vals[j]] / g * g)
                                dist = s->fr[vals[j]] / g * g;
        for (int j = 0; j < k; j++)
                if (s->fr[vals[j]] < dist)
                        return false;
        for (int i = 0; i < s->ndl; i++)
                s->after[s->dl[i]] = s->fr[s->dl[i]];
        for (int j = 0; j < k; j++)
                s->after[vals[j]] -= dist;
        rem = n - dist * k;
        for (int j = 0; j < k; j++)
                if (s->after[vals[j]] >= g)
                        remcombo[mr++] = vals[j];
        if (rem == 0)
                best_local = stddev(s);
        for (int k2 = mr; rem > 0 && k2 >= 1; k2--) {
                bool have = false;
                for (bool more = comb_next(idx2, mr, k2, true); more;
                     more = comb_next(idx2, mr, k2, false)) {
                        double b;
                        for (int j = 0; j < k2; j++)
                                sub[j] = remcombo[idx2[j]];
                        if (!score_subset(s, sub, k2, rem, &b))
                                continue;
                        if (b < best_local) {
                                best_local = b;
                                best_k2 = k2;
                                have = true;
                                memcpy(rem_out->vals, idx2, (size_t)k2 * sizeof(int));
                        }
                }
                if (have) {
                        /* the kept subset's slice as it reads after this k2 pass */
                        int *fi = rem_out->vals;
                        combo_final(fi, mr, k2, NULL);
                        for (int j = 0; j < k2; j++)
                                fi[j] = remcombo[fi[j]];
                }
        }
        rem_out->k2 = best_k2;
        *bal = best_local;
        return true;
}

/* take(takeByTopologyNUMAPacked(details.CPUsInNUMANodes(e), count)), under A's rules */
static void take_group(acc *a, int e, int count, bool spread, uint64_t *sub, uint64_t *got)
{
        const ncm_cpu_index *ix = a->ix;
        const int32_t *numa_cpus = ix->cpus[K_NUMA].item;
        int size = 0;

        memset(sub, 0, (size_t)ix->words * sizeof(uint64_t));
        for (int i = ix->cpus[K_NUMA].off[e]; i < ix->cpus[K_NUMA].off[e + 1]; i++) {
                int c = numa_cpus[i];
                if (bit_get(a->free, c)) {
                        bit_set(sub, c);
                        size++;
                }
        }
        /* kubelet ignores this call's error: a failed take adds nothing */
        if (ncm__take_packed_dense_traced(ix, a->gen, sub, size, count, spread, false, a->trace,
                                          got, NULL) < 0)
                return;
        for (int w = 0; w < ix->words; w++)
                for (uint64_t x = got[w]; x; x &= x - 1)
                        ncm__acc_take_cpu(a, w * 64 + __builtin_ctzll(x));
}

int ncm__take_distributed_dense(const ncm_cpu_index *ix, const uint64_t *avail, int avail_size,
                                int n, int g, bool spread, bool align_by_socket, uint64_t *ret,
                                ncm_error *err)
{
        return ncm__take_distributed_dense_traced(ix, NCM__GEN_DEFAULT, avail, avail_size, n, g,
                                                  spread, align_by_socket, NULL, ret, err);
}

int ncm__take_distributed_dense_traced(const ncm_cpu_index *ix, ncm__gen gen, const uint64_t *avail,
                                       int avail_size, int n, int g, bool spread,
                                       bool align_by_socket, const ncm_cpu_trace *trace,
                                       uint64_t *ret, ncm_error *err)
{
        acc a;
        dist_state s = {0};
        int m, nnuma = ix->n[K_NUMA], r = 1;
        int32_t *numas = NULL, *dl = NULL, *vals = NULL, *remcombo = NULL, *sub = NULL;
        int *idx = NULL, *brk = NULL, *idx2 = NULL, *best_idx = NULL;
        best_rem cur = {0}, best = {0};
        uint64_t *bits = NULL;
        uint64_t inl[512];
        void *heap = NULL;
        double *term = NULL;

        if (trace)
                ncm__trace_start(ix, trace, NCM_CPU_TRACE_TAKE_DISTRIBUTED, n, avail);
        if (n % g != 0)
                return ncm__take_packed_dense_traced(ix, gen, avail, avail_size, n, spread, false,
                                                     trace, ret, err);
        if (ncm__acc_init(&a, ix, avail, n, spread) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        a.gen = gen;
        a.trace = trace;
        /* align-by-socket reaches the distributed search since 1.37 only */
        if (!gen.distributed_align)
                align_by_socket = false;
        if (a.needed < 1) {
                memset(ret, 0, (size_t)ix->words * sizeof(uint64_t));
                ncm__acc_done(&a);
                return 0;
        }
        if (a.needed > a.nfree) {
                ncm__acc_done(&a);
                return ncm__not_enough(err, n, avail_size);
        }

        m = ncm__acc_list_numas(&a);
        {
                /* one block for every scratch array: small searches then allocate nothing */
                size_t nlog = (size_t)n / (size_t)g + (size_t)m + 1;
                size_t ints = 10 * (size_t)m + 3 * (size_t)nnuma + nlog;
                size_t nterm = (size_t)ix->ncpu + 1;
                size_t bytes = 2 * (size_t)ix->words * sizeof(uint64_t) + nterm * sizeof(double) +
                               ints * sizeof(int32_t);
                char *p;

                if (bytes <= sizeof(inl)) {
                        p = (char *)inl;
                } else {
                        p = heap = malloc(bytes);
                        if (!p) {
                                r = ncm_error_set(err, ENOMEM, "out of memory");
                                goto out;
                        }
                }
                bits = (uint64_t *)(void *)p;
                p += 2 * (size_t)ix->words * sizeof(uint64_t);
                term = (double *)(void *)p;
                p += nterm * sizeof(double);
#define CARVE(var, count)                                                                          \
        do {                                                                                       \
                var = (void *)p;                                                                   \
                p += (size_t)(count) * sizeof(int32_t);                                            \
        } while (0)
                CARVE(numas, m);
                CARVE(vals, m);
                CARVE(remcombo, m);
                CARVE(sub, m);
                CARVE(idx, m);
                CARVE(brk, m);
                CARVE(idx2, m);
                CARVE(best_idx, m);
                CARVE(cur.vals, m);
                CARVE(best.vals, m);
                CARVE(dl, nnuma);
                CARVE(s.after, nnuma);
                CARVE(s.stamp, nnuma);
                CARVE(s.log, nlog);
#undef CARVE
                memset(s.stamp, 0, (size_t)nnuma * sizeof(int32_t));
        }
        memcpy(numas, a.l_numa, (size_t)m * sizeof(*numas));
        s.ix = ix;
        s.n = n;
        s.g = g;
        s.align = align_by_socket;
        s.fr = a.efree[K_NUMA];
        for (int e = 0; e < nnuma; e++)
                if (a.efree[K_NUMA][e] > 0)
                        dl[s.ndl++] = e;
        s.dl = dl;
        {
                /* every scored state leaves sum(free) - n CPUs: the mean is fixed */
                long total = 0;
                int maxfree = 0;
                double mean;
                for (int i = 0; i < s.ndl; i++) {
                        total += s.fr[dl[i]];
                        if (s.fr[dl[i]] > maxfree)
                                maxfree = s.fr[dl[i]];
                }
                mean = ncm__round3((double)(total - n) / s.ndl);
                for (int v = 0; v <= maxfree; v++)
                        term[v] = ((double)v - mean) * ((double)v - mean);
                s.term = term;
        }

        /* rangeNUMANodesNeededToSatisfy */
        int groups = (ix->ncpu - 1) / g + 1;
        int per_numa = (groups - 1) / nnuma + 1;
        int needed_groups = (a.needed - 1) / g + 1;
        int kmin = (needed_groups - 1) / per_numa + 1;
        int kmax = needed_groups < s.ndl ? needed_groups : s.ndl;

        for (int k = kmin; k <= kmax; k++) {
                double best_bal = DBL_MAX;
                bool best_one_socket = false, have_best = false, broke = false;

                for (bool more = comb_next(idx, m, k, true); more;
                     more = comb_next(idx, m, k, false)) {
                        double bal;
                        if (best_bal == 0 && (!align_by_socket || best_one_socket)) {
                                memcpy(brk, idx, (size_t)k * sizeof(int));
                                broke = true;
                                break;
                        }
                        for (int j = 0; j < k; j++)
                                vals[j] = numas[idx[j]];
                        if (!eval_combo(&s, vals, k, &bal, &cur, remcombo, idx2, sub))
                                continue;
                        bool in_same = align_by_socket && same_socket(ix, vals, k);
                        bool better = bal < best_bal;
                        if (align_by_socket && in_same != best_one_socket)
                                better = in_same;
                        if (!better)
                                continue;
                        best_bal = bal;
                        best.k2 = cur.k2;
                        memcpy(best.vals, cur.vals, (size_t)cur.k2 * sizeof(int));
                        memcpy(best_idx, idx, (size_t)k * sizeof(int));
                        have_best = true;
                        if (align_by_socket)
                                best_one_socket = in_same;
                }
                if (!have_best)
                        continue;

                /* allocate from bestCombo, read back as Go would */
                combo_final(best_idx, m, k, broke ? brk : NULL);
                for (int j = 0; j < k; j++)
                        vals[j] = numas[best_idx[j]];
                int dist = (n / k / g) * g;
                for (int j = 0; j < k; j++)
                        if (dist > a.efree[K_NUMA][vals[j]] / g * g)
                                dist = a.efree[K_NUMA][vals[j]] / g * g;
                for (int j = 0; j < k; j++)
                        take_group(&a, vals[j], dist, spread, bits, bits + ix->words);
                int rem = n - dist * k;
                while (rem > 0) {
                        bool progress = false;
                        for (int j = 0; j < best.k2; j++) {
                                if (rem == 0)
                                        break;
                                if (a.efree[K_NUMA][best.vals[j]] < g)
                                        continue;
                                take_group(&a, best.vals[j], g, spread, bits, bits + ix->words);
                                rem -= g;
                                progress = true;
                        }
                        if (!progress)
                                break;
                }
                if (a.needed > 0)
                        r = ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                          "accounting error, not enough CPUs allocated, "
                                          "remaining: %d",
                                          a.needed);
                else if (a.needed < 0)
                        r = ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                          "accounting error, too many CPUs allocated, "
                                          "remaining: %d",
                                          a.needed);
                else {
                        memcpy(ret, a.result, (size_t)ix->words * sizeof(uint64_t));
                        r = 0;
                }
                goto out;
        }
        r = 1; /* no combination: fall back */
out:
        free(heap);
        ncm__acc_done(&a);
        if (r == 1)
                return ncm__take_packed_dense_traced(ix, gen, avail, avail_size, n, spread, false,
                                                     trace, ret, err);
        return r;
}
