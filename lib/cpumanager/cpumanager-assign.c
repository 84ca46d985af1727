/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubelet's cpuAccumulator and takeByTopologyNUMAPacked (spec §3.2-§3.6), on the index of
 * cpumanager-index.c. Every list kubelet builds (sorted NUMA nodes, sockets, cores, uncore
 * caches, CPUs) is rebuilt here from the same state with the same keys, so the walk is
 * identical; only the representation differs (free counts per element instead of maps).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpumanager-alloc.h"

double ncm__round3(double v)
{
        double x = v * 1000, t;

        /* math.Round (half away from zero) without a libm call in the common range */
        if (!(x > -4e15 && x < 4e15))
                return round(x) / 1000;
        t = (double)(int64_t)x;
        if (x - t >= 0.5)
                t += 1;
        else if (x - t <= -0.5)
                t -= 1;
        return t / 1000;
}

/* ------------------------------------------------------------------------------------------
 * Accumulator state
 */

int ncm__acc_init(acc *a, const ncm_cpu_index *ix, const uint64_t *avail, int n, bool spread)
{
        size_t words = (size_t)ix->words;
        char *p;

        if (ix->acc_bytes <= sizeof(a->inl)) {
                a->block = NULL;
                p = (char *)a->inl;
        } else {
                a->block = malloc(ix->acc_bytes);
                if (!a->block)
                        return -ENOMEM;
                p = a->block;
        }
        a->free = (uint64_t *)(void *)p;
        a->result = (uint64_t *)(void *)(p + ix->off_result);
        a->tmp_key = (int64_t *)(void *)(p + ix->off_key);
        int32_t *cnt = (int32_t *)(void *)(p + ix->off_cnt);
        for (int k = 0; k < K_COUNT; k++)
                a->efree[k] = cnt + ix->cnt_base[k];
        for (int r = 0; r < R_COUNT; r++)
                a->pfree[r] = ix->r[r].alias ? NULL : cnt + ix->cnt_base[K_COUNT + r];
        a->l_numa = (int32_t *)(void *)(p + ix->off_list[0]);
        a->l_sock = (int32_t *)(void *)(p + ix->off_list[1]);
        a->l_core = (int32_t *)(void *)(p + ix->off_list[2]);
        a->l_unc = (int32_t *)(void *)(p + ix->off_list[3]);
        a->l_unc_snap = (int32_t *)(void *)(p + ix->off_list[4]);
        a->l_cpu = (int32_t *)(void *)(p + ix->off_list[5]);
        a->l_tmp = (int32_t *)(void *)(p + ix->off_list[6]);
        memset(cnt, 0, (size_t)ix->ncnt * sizeof(int32_t));
        memcpy(a->free, avail, words * sizeof(uint64_t));
        memset(a->result, 0, words * sizeof(uint64_t));
        a->nfree = 0;
        a->ix = ix;
        a->needed = n;
        a->spread = spread;
        a->gen = NCM__GEN_DEFAULT;
        a->trace = NULL;
        for (size_t w = 0; w < words; w++)
                for (uint64_t x = a->free[w]; x; x &= x - 1) {
                        const int32_t *sl =
                                        ix->slot + ((size_t)w * 64 + (size_t)__builtin_ctzll(x)) *
                                                                   (size_t)ix->nslot;
                        a->nfree++;
                        for (int j = 0; j < ix->nslot; j++)
                                cnt[sl[j]]++;
                }
        return 0;
}

void ncm__acc_done(acc *a)
{
        free(a->block);
        a->block = NULL;
}

static int total(const ncm_cpu_index *ix, int kind, int e)
{
        return ix->cpus[kind].off[e + 1] - ix->cpus[kind].off[e];
}

/* Remove dense CPU C from `details`. */
static void acc_remove(acc *a, int c)
{
        const ncm_cpu_index *ix = a->ix;

        const int32_t *sl = ix->slot + (size_t)c * (size_t)ix->nslot;
        int32_t *cnt = a->efree[0];

        bit_clr(a->free, c);
        a->nfree--;
        for (int j = 0; j < ix->nslot; j++)
                cnt[sl[j]]--;
}

/* take({c}) */
static void take_cpu(acc *a, int c)
{
        bit_set(a->result, c);
        if (bit_get(a->free, c))
                acc_remove(a, c);
        a->needed--;
}

/*
 * take(topo.CPUsIn<kind>(e)): the element's CPUs as the topology lists them, whether free or
 * not, and numCPUsNeeded drops by the element's size (kubelet's take subtracts |S|).
 */
static void take_elem(acc *a, int kind, int e)
{
        const ix_csr *c = &a->ix->cpus[kind];

        for (int i = c->off[e]; i < c->off[e + 1]; i++) {
                bit_set(a->result, c->item[i]);
                if (bit_get(a->free, c->item[i]))
                        acc_remove(a, c->item[i]);
        }
        a->needed -= c->off[e + 1] - c->off[e];
}

/* Explanations: report CPU ids IDS[0..n) (dense) taken at LEVEL to the trace. */
static void trace_dense(const acc *a, ncm_cpu_trace_level level, int64_t id, const int32_t *dense,
                        int n)
{
        int small[64] = {0};
        int *ids = n <= 64 ? small : malloc((size_t)n * sizeof(int));

        if (!ids)
                return;
        for (int i = 0; i < n; i++)
                ids[i] = a->ix->cpu_id[dense[i]];
        a->trace->fn(a->trace->data, level, id, ids, (size_t)n);
        if (ids != small)
                free(ids);
}

static void trace_elem(const acc *a, int kind, int e)
{
        static const ncm_cpu_trace_level levels[K_COUNT] = {
                        [K_NUMA] = NCM_CPU_TRACE_NUMA,
                        [K_SOCK] = NCM_CPU_TRACE_SOCKET,
                        [K_CORE] = NCM_CPU_TRACE_CORE,
                        [K_UNC] = NCM_CPU_TRACE_UNCORE,
        };
        const ix_csr *c = &a->ix->cpus[kind];
        trace_dense(a, levels[kind], a->ix->id[kind][e], c->item + c->off[e],
                    c->off[e + 1] - c->off[e]);
}

void ncm__trace_start(const ncm_cpu_index *ix, const ncm_cpu_trace *trace, ncm_cpu_trace_level l,
                      int n, const uint64_t *avail)
{
        int *ids = malloc(((size_t)ix->ncpu + 1) * sizeof(int));
        size_t m = 0;

        if (!ids)
                return;
        for (int w = 0; w < ix->words; w++)
                for (uint64_t x = avail[w]; x; x &= x - 1)
                        ids[m++] = ix->cpu_id[w * 64 + __builtin_ctzll(x)];
        trace->fn(trace->data, l, n, ids, m);
        free(ids);
}

static bool needs_at_least(const acc *a, int n)
{
        return a->needed >= n;
}

static bool is_satisfied(const acc *a)
{
        return a->needed < 1;
}

static bool is_failed(const acc *a)
{
        return a->needed > a->nfree;
}

/* ------------------------------------------------------------------------------------------
 * Sorting (kubelet's acc.sort: ascending free count, then ascending id)
 */

static int cmp_i64(const void *x, const void *y)
{
        int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
        return (a > b) - (a < b);
}

/*
 * Append CAND[0..m) (dense ids of KIND, ascending) to OUT ordered by (free count, id).
 * Returns m. The input is already in id order, so any stable sort by the count will do.
 */
static int sort_append(acc *a, int kind, const int32_t *cand, int m, int32_t *out)
{
        const int32_t *key = a->efree[kind];

        if (m <= 24) {
                for (int i = 0; i < m; i++) {
                        int e = cand[i], j = i;
                        while (j > 0 && key[out[j - 1]] > key[e]) {
                                out[j] = out[j - 1];
                                j--;
                        }
                        out[j] = e;
                }
                return m;
        }
        if (kind == K_CORE) {
                /* core counts are tiny (threads per core): a counting pass per value */
                int o = 0;
                for (int v = 1; v <= a->ix->max_core_cpus && o < m; v++)
                        for (int i = 0; i < m; i++)
                                if (key[cand[i]] == v)
                                        out[o++] = cand[i];
                for (int i = 0; i < m && o < m; i++)
                        if (key[cand[i]] <= 0 || key[cand[i]] > a->ix->max_core_cpus)
                                out[o++] = cand[i];
                return m;
        }
        for (int i = 0; i < m; i++)
                a->tmp_key[i] = ((int64_t)key[cand[i]] << 32) | cand[i];
        qsort(a->tmp_key, (size_t)m, sizeof(int64_t), cmp_i64);
        for (int i = 0; i < m; i++)
                out[i] = (int32_t)(a->tmp_key[i] & 0xffffffff);
        return m;
}

/* Elements of KIND with a free CPU, ascending. */
static int cand_all(acc *a, int kind, int32_t *cand)
{
        int m = 0;
        for (int e = 0; e < a->ix->n[kind]; e++)
                if (a->efree[kind][e] > 0)
                        cand[m++] = e;
        return m;
}

/* Elements related to FROM by relation R that share a free CPU with it, ascending. */
static int cand_rel(acc *a, int r, int from, int32_t *cand)
{
        const ix_rel *R = &a->ix->r[r];
        int m = 0;
        for (int p = R->off[from]; p < R->off[from + 1]; p++)
                if ((R->alias ? a->efree[R->to][R->to_e[p]] : a->pfree[r][p]) > 0)
                        cand[m++] = R->to_e[p];
        return m;
}

static int list_numas(acc *a);
static int list_socks(acc *a);
static int not_enough(ncm_error *err, int n, int avail_size);

/* sortAvailableNUMANodes */
static int list_numas(acc *a)
{
        if (a->ix->numa_first) {
                int m = cand_all(a, K_NUMA, a->l_tmp);
                return sort_append(a, K_NUMA, a->l_tmp, m, a->l_numa);
        }
        int ns = list_socks(a), len = 0;
        for (int i = 0; i < ns; i++) {
                int m = cand_rel(a, R_SOCK_NUMA, a->l_sock[i], a->l_tmp);
                len += sort_append(a, K_NUMA, a->l_tmp, m, a->l_numa + len);
        }
        return len;
}

/* sortAvailableSockets */
static int list_socks(acc *a)
{
        if (!a->ix->numa_first) {
                int m = cand_all(a, K_SOCK, a->l_tmp);
                return sort_append(a, K_SOCK, a->l_tmp, m, a->l_sock);
        }
        int nn = list_numas(a), len = 0;
        for (int i = 0; i < nn; i++) {
                int m = cand_rel(a, R_NUMA_SOCK, a->l_numa[i], a->l_tmp);
                len += sort_append(a, K_SOCK, a->l_tmp, m, a->l_sock + len);
        }
        return len;
}

/* sortAvailableCores: under the sockets (numaFirst) or the NUMA nodes (socketsFirst). */
static int list_cores(acc *a)
{
        int len = 0;
        if (a->ix->numa_first) {
                int ns = list_socks(a);
                for (int i = 0; i < ns; i++) {
                        int m = cand_rel(a, R_SOCK_CORE, a->l_sock[i], a->l_tmp);
                        len += sort_append(a, K_CORE, a->l_tmp, m, a->l_core + len);
                }
        } else {
                int nn = list_numas(a);
                for (int i = 0; i < nn; i++) {
                        int m = cand_rel(a, R_NUMA_CORE, a->l_numa[i], a->l_tmp);
                        len += sort_append(a, K_CORE, a->l_tmp, m, a->l_core + len);
                }
        }
        return len;
}

/* sortAvailableUncoreCaches: under the sorted NUMA nodes. */
static int list_uncs(acc *a, int32_t *out)
{
        int nn = list_numas(a), len = 0;
        for (int i = 0; i < nn; i++) {
                int m = cand_rel(a, R_NUMA_UNC, a->l_numa[i], a->l_tmp);
                len += sort_append(a, K_UNC, a->l_tmp, m, out + len);
        }
        return len;
}

/* The free CPUs of element E of KIND, ascending, appended to OUT. */
static int free_cpus_of(const acc *a, int kind, int e, int32_t *out)
{
        const ix_csr *c = &a->ix->cpus[kind];
        int m = 0;
        for (int i = c->off[e]; i < c->off[e + 1]; i++)
                if (bit_get(a->free, c->item[i]))
                        out[m++] = c->item[i];
        return m;
}

/* sortAvailableCPUsPacked / sortAvailableCPUsSpread */
static int list_cpus(acc *a)
{
        int len = 0;
        if (!a->spread) {
                int nc = list_cores(a);
                for (int i = 0; i < nc; i++)
                        len += free_cpus_of(a, K_CORE, a->l_core[i], a->l_cpu + len);
        } else {
                int ns = list_socks(a);
                for (int i = 0; i < ns; i++)
                        len += free_cpus_of(a, K_SOCK, a->l_sock[i], a->l_cpu + len);
        }
        return len;
}

/* ------------------------------------------------------------------------------------------
 * Take helpers (spec §3.5)
 */

static bool numa_is_free(const acc *a, int e)
{
        return a->efree[K_NUMA][e] == total(a->ix, K_NUMA, e);
}

static bool sock_is_free(const acc *a, int e)
{
        return a->efree[K_SOCK][e] ==
               (a->gen.own_size ? total(a->ix, K_SOCK, e) : a->ix->cpus_per_socket);
}

static bool unc_is_free(const acc *a, int e)
{
        return a->efree[K_UNC][e] == total(a->ix, K_UNC, e);
}

static bool core_is_free(const acc *a, int e)
{
        return a->efree[K_CORE][e] ==
               (a->gen.own_size ? total(a->ix, K_CORE, e) : a->ix->cpus_per_core);
}

/*
 * The free lists are filtered once, before the loop, and the loop does not test freeness
 * again (kubelet's freeNUMANodes() etc.). Filtering in place is safe: taking does not rebuild
 * any list.
 */
static int filter(acc *a, int32_t *l, int m, bool (*is_free)(const acc *, int))
{
        int o = 0;
        for (int i = 0; i < m; i++)
                if (is_free(a, l[i]))
                        l[o++] = l[i];
        return o;
}

static void take_full_numas(acc *a)
{
        int m = filter(a, a->l_numa, list_numas(a), numa_is_free);
        for (int i = 0; i < m; i++) {
                int e = a->l_numa[i];
                if (!needs_at_least(a, total(a->ix, K_NUMA, e)))
                        continue;
                take_elem(a, K_NUMA, e);
                if (a->trace)
                        trace_elem(a, K_NUMA, e);
        }
}

static void take_full_socks(acc *a)
{
        int m = filter(a, a->l_sock, list_socks(a), sock_is_free);
        for (int i = 0; i < m; i++) {
                int e = a->l_sock[i];
                if (!needs_at_least(a, total(a->ix, K_SOCK, e)))
                        continue;
                take_elem(a, K_SOCK, e);
                if (a->trace)
                        trace_elem(a, K_SOCK, e);
        }
}

static void take_full_uncore(acc *a)
{
        int m = filter(a, a->l_unc, list_uncs(a, a->l_unc), unc_is_free);
        for (int i = 0; i < m; i++) {
                int e = a->l_unc[i];
                if (!needs_at_least(a, total(a->ix, K_UNC, e)))
                        continue;
                take_elem(a, K_UNC, e);
                if (a->trace)
                        trace_elem(a, K_UNC, e);
        }
}

static void take_full_cores(acc *a)
{
        int m = filter(a, a->l_core, list_cores(a), core_is_free);
        for (int i = 0; i < m; i++) {
                int e = a->l_core[i];
                if (!needs_at_least(a, total(a->ix, K_CORE, e)))
                        continue;
                take_elem(a, K_CORE, e);
                if (a->trace)
                        trace_elem(a, K_CORE, e);
        }
}

static int cmp_i32(const void *x, const void *y)
{
        int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
        return (a > b) - (a < b);
}

/*
 * takePartialUncore: the free CPUs of the lowest-id cores of uncore U with a free CPU,
 * claimed only on an exact fit. Since 1.34 enough cores for ceil(needed / CPUsPerCore), and
 * for an odd need on SMT machines the highest CPU is dropped; before, floor(needed /
 * CPUsPerCore) cores (an odd need on SMT never fits exactly).
 */
static void take_partial_uncore(acc *a, int u)
{
        const ncm_cpu_index *ix = a->ix;
        int cpc = ix->cpus_per_core > 0 ? ix->cpus_per_core : 1;
        int cores_needed =
                        a->gen.partial_uncore_ceil ? (a->needed + cpc - 1) / cpc : a->needed / cpc;
        int nc = cand_rel(a, R_UNC_CORE, u, a->l_tmp), m = 0;

        if (nc > cores_needed)
                nc = cores_needed;
        for (int i = 0; i < nc; i++)
                m += free_cpus_of(a, K_CORE, a->l_tmp[i], a->l_cpu + m);
        qsort(a->l_cpu, (size_t)m, sizeof(int32_t), cmp_i32);
        if (a->gen.partial_uncore_ceil && a->needed % 2 != 0 && ix->cpus_per_core > 1 &&
            m > a->needed)
                m--;
        if (a->needed != m)
                return;
        for (int i = 0; i < m; i++) {
                bit_set(a->result, a->l_cpu[i]);
                if (bit_get(a->free, a->l_cpu[i]))
                        acc_remove(a, a->l_cpu[i]);
        }
        a->needed -= m;
        if (a->trace)
                trace_dense(a, NCM_CPU_TRACE_UNCORE_PARTIAL, ix->id[K_UNC][u], a->l_cpu, m);
}

/*
 * takeUncoreCache since kubelet 1.38 (PR #141026): the sorted uncore caches, each once (its
 * first place: a cache spanning NUMA nodes is listed under each of them), in two passes over
 * that one list: first every cache that is wholly free and no bigger than what is still
 * needed is taken whole, then caches are tried partially in the same order.
 */
static void take_uncore_two_pass(acc *a)
{
        int n = list_uncs(a, a->l_unc_snap), m = 0;

        for (int i = 0; i < n; i++) {
                bool seen = false;
                for (int j = 0; j < m && !seen; j++)
                        seen = a->l_unc_snap[j] == a->l_unc_snap[i];
                if (!seen)
                        a->l_unc_snap[m++] = a->l_unc_snap[i];
        }
        for (int i = 0; i < m; i++) {
                int e = a->l_unc_snap[i];
                if (!unc_is_free(a, e) || !needs_at_least(a, total(a->ix, K_UNC, e)))
                        continue;
                take_elem(a, K_UNC, e);
                if (a->trace)
                        trace_elem(a, K_UNC, e);
                if (is_satisfied(a))
                        return;
        }
        for (int i = 0; i < m; i++) {
                take_partial_uncore(a, a->l_unc_snap[i]);
                if (is_satisfied(a))
                        return;
        }
}

static void take_uncore_cache(acc *a)
{
        if (a->gen.uncore_two_pass) {
                take_uncore_two_pass(a);
                return;
        }
        int n = list_uncs(a, a->l_unc_snap);
        for (int i = 0; i < n; i++) {
                int size = a->gen.own_size ? total(a->ix, K_UNC, a->l_unc_snap[i])
                                           : a->ix->cpus_per_uncore;
                if (needs_at_least(a, size))
                        take_full_uncore(a);
                if (is_satisfied(a))
                        return;
                take_partial_uncore(a, a->l_unc_snap[i]);
                if (is_satisfied(a))
                        return;
        }
}

static void take_remaining(acc *a)
{
        int n = list_cpus(a);
        for (int i = 0; i < n; i++) {
                take_cpu(a, a->l_cpu[i]);
                if (a->trace)
                        trace_dense(a, NCM_CPU_TRACE_CPU, a->ix->cpu_id[a->l_cpu[i]], &a->l_cpu[i],
                                    1);
                if (is_satisfied(a))
                        return;
        }
}

void ncm__acc_take_cpu(acc *a, int c)
{
        take_cpu(a, c);
}

int ncm__acc_list_numas(acc *a)
{
        return list_numas(a);
}

int ncm__acc_free_list(acc *a, int what, int64_t *ids)
{
        const ncm_cpu_index *ix = a->ix;
        int m;

        switch (what) {
        case K_NUMA:
                m = filter(a, a->l_numa, list_numas(a), numa_is_free);
                for (int i = 0; i < m; i++)
                        ids[i] = ix->id[K_NUMA][a->l_numa[i]];
                return m;
        case K_SOCK:
                m = filter(a, a->l_sock, list_socks(a), sock_is_free);
                for (int i = 0; i < m; i++)
                        ids[i] = ix->id[K_SOCK][a->l_sock[i]];
                return m;
        case K_CORE:
                m = filter(a, a->l_core, list_cores(a), core_is_free);
                for (int i = 0; i < m; i++)
                        ids[i] = ix->id[K_CORE][a->l_core[i]];
                return m;
        default:
                m = list_cpus(a);
                for (int i = 0; i < m; i++)
                        ids[i] = ix->cpu_id[a->l_cpu[i]];
                return m;
        }
}

/* ------------------------------------------------------------------------------------------
 * takeByTopologyNUMAPacked (spec §3.6)
 */

int ncm__not_enough(ncm_error *err, int n, int avail_size)
{
        return not_enough(err, n, avail_size);
}

static int not_enough(ncm_error *err, int n, int avail_size)
{
        return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                             "not enough cpus available to satisfy request: requested=%d, "
                             "available=%d",
                             n, avail_size);
}

static int run_packed(acc *a, int n, int avail_size, bool prefer_uncore, ncm_error *err)
{
        if (is_satisfied(a))
                return 0;
        if (is_failed(a))
                return not_enough(err, n, avail_size);
        if (a->ix->numa_first) {
                take_full_numas(a);
                if (is_satisfied(a))
                        return 0;
                take_full_socks(a);
        } else {
                take_full_socks(a);
                if (is_satisfied(a))
                        return 0;
                take_full_numas(a);
        }
        if (is_satisfied(a))
                return 0;
        if (prefer_uncore) {
                take_uncore_cache(a);
                if (is_satisfied(a))
                        return 0;
        }
        if (!a->spread) {
                take_full_cores(a);
                if (is_satisfied(a))
                        return 0;
        }
        take_remaining(a);
        if (is_satisfied(a))
                return 0;
        return ncm_error_set(err, NCM_E_UNSATISFIABLE, "failed to allocate cpus");
}

int ncm__take_packed_dense(const ncm_cpu_index *ix, const uint64_t *avail, int avail_size, int n,
                           bool spread, bool prefer_uncore, uint64_t *ret, ncm_error *err)
{
        return ncm__take_packed_dense_traced(ix, NCM__GEN_DEFAULT, avail, avail_size, n, spread,
                                             prefer_uncore, NULL, ret, err);
}

ncm__gen ncm__gen_of(ncm_kubelet_version v)
{
        return (ncm__gen){
                        .own_size = ncm_kubelet_version_at_least(v, 1, 37),
                        .partial_uncore_ceil = ncm_kubelet_version_at_least(v, 1, 34),
                        .distributed_align = ncm_kubelet_version_at_least(v, 1, 37),
                        .uncore_two_pass = ncm_kubelet_version_at_least(v, 1, 38),
        };
}

int ncm__take_packed_dense_traced(const ncm_cpu_index *ix, ncm__gen gen, const uint64_t *avail,
                                  int avail_size, int n, bool spread, bool prefer_uncore,
                                  const ncm_cpu_trace *trace, uint64_t *ret, ncm_error *err)
{
        acc a;
        int r;

        if (ncm__acc_init(&a, ix, avail, n, spread) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        a.gen = gen;
        if (trace) {
                a.trace = trace;
                ncm__trace_start(ix, trace, NCM_CPU_TRACE_TAKE_PACKED, n, avail);
        }
        r = run_packed(&a, n, avail_size, prefer_uncore, err);
        if (r >= 0)
                memcpy(ret, a.result, (size_t)ix->words * sizeof(uint64_t));
        ncm__acc_done(&a);
        return r;
}

/* ------------------------------------------------------------------------------------------
 * Public entry points
 */

typedef int (*dense_fn)(const ncm_cpu_index *ix, const uint64_t *avail, int avail_size, void *arg,
                        uint64_t *ret, ncm_error *err);

static int with_dense(const ncm_cpu_index *ix, const ncm_cpuset *available, dense_fn fn, void *arg,
                      ncm_cpuset *ret, ncm_error *err)
{
        size_t bytes = (size_t)ix->words * sizeof(uint64_t);
        uint64_t small[32];
        ncm_autofree uint64_t *heap = NULL;
        uint64_t *buf = small;
        int size, r;

        if (2 * bytes > sizeof(small)) {
                buf = heap = malloc(2 * bytes);
                if (!buf)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        size = ncm__dense_from_set(ix, available, buf);
        r = fn(ix, buf, size, arg, buf + ix->words, err);
        if (r < 0)
                return r;
        ncm__set_from_dense(ix, buf + ix->words, ret);
        return 0;
}

typedef struct take_args {
        int n, group;
        bool spread, flag;
        const ncm_cpu_trace *trace;
        ncm__gen gen;
} take_args;

static int packed_fn(const ncm_cpu_index *ix, const uint64_t *avail, int avail_size, void *arg,
                     uint64_t *ret, ncm_error *err)
{
        const take_args *t = arg;
        return ncm__take_packed_dense_traced(ix, t->gen, avail, avail_size, t->n, t->spread,
                                             t->flag, t->trace, ret, err);
}

static int distributed_fn(const ncm_cpu_index *ix, const uint64_t *avail, int avail_size, void *arg,
                          uint64_t *ret, ncm_error *err)
{
        const take_args *t = arg;
        return ncm__take_distributed_dense_traced(ix, t->gen, avail, avail_size, t->n, t->group,
                                                  t->spread, t->flag, t->trace, ret, err);
}

int ncm_cpu_take_packed(const ncm_cpu_index *ix, const ncm_cpuset *available, int n, bool spread,
                        bool prefer_uncore, ncm_cpuset *ret, ncm_error *err)
{
        take_args t = {n, 1, spread, prefer_uncore, NULL, NCM__GEN_DEFAULT};
        return with_dense(ix, available, packed_fn, &t, ret, err);
}

static int take_distributed(const ncm_cpu_index *ix, ncm__gen gen, const ncm_cpuset *available,
                            int n, int group, bool spread, bool align_by_socket,
                            const ncm_cpu_trace *trace, ncm_cpuset *ret, ncm_error *err)
{
        take_args t = {n, group, spread, align_by_socket, trace, gen};

        if (group < 1)
                return ncm_error_set(err, EINVAL, "cpu group size %d: must be at least 1", group);
        return with_dense(ix, available, distributed_fn, &t, ret, err);
}

int ncm_cpu_take_distributed(const ncm_cpu_index *ix, const ncm_cpuset *available, int n, int group,
                             bool spread, bool align_by_socket, ncm_cpuset *ret, ncm_error *err)
{
        return take_distributed(ix, NCM__GEN_DEFAULT, available, n, group, spread, align_by_socket,
                                NULL, ret, err);
}

int ncm__cpu_take_traced(const ncm_cpu_index *ix, const ncm_cpu_options *o,
                         const ncm_cpuset *available, int n, const ncm_cpu_trace *trace,
                         ncm_cpuset *ret, ncm_error *err)
{
        static const ncm_cpu_options none;
        ncm__gen gen;
        bool spread;

        if (!o)
                o = &none;
        if (ncm_kubelet_version_check(o->kubelet_version, err) < 0)
                return -EINVAL;
        gen = ncm__gen_of(o->kubelet_version);
        spread = o->distribute_cpus_across_cores;
        if (o->distribute_cpus_across_numa) {
                int group = 1;
                if (o->full_pcpus_only)
                        group = ix->cpus_per_core;
                return take_distributed(ix, gen, available, n, group, spread, o->align_by_socket,
                                        trace, ret, err);
        }
        {
                take_args t = {n, 1, spread, o->prefer_align_by_uncore_cache, trace, gen};
                return with_dense(ix, available, packed_fn, &t, ret, err);
        }
}

int ncm_cpu_take(const ncm_cpu_index *ix, const ncm_cpu_options *o, const ncm_cpuset *available,
                 int n, ncm_cpuset *ret, ncm_error *err)
{
        return ncm__cpu_take_traced(ix, o, available, n, NULL, ret, err);
}
