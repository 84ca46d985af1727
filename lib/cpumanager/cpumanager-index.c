/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-topology index of the allocator (see cpumanager-alloc.h for why it exists).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpumanager-alloc.h"

static int cmp_i64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return (x > y) - (x < y);
}

static void csr_done(ix_csr *c)
{
        free(c->off);
        free(c->item);
}

ncm_cpu_index *ncm_cpu_index_free(ncm_cpu_index *ix)
{
        if (!ix)
                return NULL;
        free(ix->cpu_id);
        free(ix->cpu_dense);
        free(ix->slot);
        for (int k = 0; k < K_COUNT; k++) {
                free(ix->id[k]);
                free(ix->of[k]);
                csr_done(&ix->cpus[k]);
        }
        for (int r = 0; r < R_COUNT; r++) {
                free(ix->r[r].off);
                free(ix->r[r].to_e);
                free(ix->pair[r]);
        }
        free(ix);
        return NULL;
}

const ncm_topo *ncm_cpu_index_topo(const ncm_cpu_index *ix)
{
        return ix->topo;
}

/*
 * Dense element indices of one kind. NUMA nodes, sockets and uncore caches take the
 * topology's own dense indices (ascending id order, any id); cores are CPU ids, so a map by
 * id does. Either way "ties by ascending id" is "ties by ascending dense index".
 */
static int build_kind(ncm_cpu_index *ix, const ncm_cpu_info *cpus, int kind)
{
        static const ncm_topo_level levels[] = {[K_NUMA] = NCM_TOPO_NUMA,
                                                [K_SOCK] = NCM_TOPO_SOCKET,
                                                [K_UNC] = NCM_TOPO_UNCORE};
        int n = 0;

        ix->of[kind] = malloc((size_t)ix->ncpu * sizeof(int32_t));
        if (!ix->of[kind])
                return -ENOMEM;
        if (kind != K_CORE) {
                size_t cnt = 0;
                const int64_t *ids = ncm_topo_level_ids(ix->topo, levels[kind], &cnt);
                n = (int)cnt;
                ix->id[kind] = malloc((size_t)n * sizeof(int64_t));
                if (!ix->id[kind])
                        return -ENOMEM;
                memcpy(ix->id[kind], ids, cnt * sizeof(int64_t));
                for (int i = 0; i < ix->ncpu; i++)
                        ix->of[kind][i] =
                                        ncm_topo_level_of_cpu(ix->topo, levels[kind], cpus[i].cpu);
        } else {
                int max_id = -1;
                int32_t *map = NULL;
                for (int i = 0; i < ix->ncpu; i++)
                        if (cpus[i].core > max_id)
                                max_id = cpus[i].core;
                map = malloc(((size_t)max_id + 1) * sizeof(*map));
                if (!map)
                        return -ENOMEM;
                for (int i = 0; i <= max_id; i++)
                        map[i] = -1;
                for (int i = 0; i < ix->ncpu; i++)
                        map[cpus[i].core] = 0;
                for (int i = 0; i <= max_id; i++)
                        if (map[i] == 0)
                                map[i] = n++;
                ix->id[kind] = malloc((size_t)n * sizeof(int64_t));
                if (!ix->id[kind]) {
                        free(map);
                        return -ENOMEM;
                }
                for (int i = 0; i <= max_id; i++)
                        if (map[i] >= 0)
                                ix->id[kind][map[i]] = i;
                for (int i = 0; i < ix->ncpu; i++)
                        ix->of[kind][i] = map[cpus[i].core];
                free(map);
        }
        ix->n[kind] = n;

        /* element -> CPUs; filling in dense-CPU order keeps each list ascending */
        ix_csr *c = &ix->cpus[kind];
        c->off = calloc((size_t)n + 1, sizeof(int32_t));
        c->item = malloc((size_t)ix->ncpu * sizeof(int32_t));
        if (!c->off || !c->item)
                return -ENOMEM;
        for (int i = 0; i < ix->ncpu; i++)
                c->off[ix->of[kind][i] + 1]++;
        for (int e = 0; e < n; e++)
                c->off[e + 1] += c->off[e];
        int32_t *fill = calloc((size_t)n, sizeof(int32_t));
        if (!fill)
                return -ENOMEM;
        for (int i = 0; i < ix->ncpu; i++) {
                int e = ix->of[kind][i];
                c->item[c->off[e] + fill[e]++] = i;
        }
        free(fill);
        return 0;
}

/* The pairs (a, b) of kinds FROM -> TO that share a CPU, and each CPU's pair. */
static int build_rel(ncm_cpu_index *ix, int r, int from, int to)
{
        ix_rel *R = &ix->r[r];
        int64_t nb = ix->n[to];
        int64_t *keys = malloc((size_t)ix->ncpu * sizeof(*keys));
        int np = 0;

        R->from = from;
        R->to = to;
        if (!keys)
                return -ENOMEM;
        for (int i = 0; i < ix->ncpu; i++)
                keys[i] = (int64_t)ix->of[from][i] * nb + ix->of[to][i];
        qsort(keys, (size_t)ix->ncpu, sizeof(*keys), cmp_i64);
        for (int i = 0; i < ix->ncpu; i++)
                if (i == 0 || keys[i] != keys[i - 1])
                        keys[np++] = keys[i];
        R->npairs = np;
        R->off = calloc((size_t)ix->n[from] + 1, sizeof(int32_t));
        R->to_e = malloc((size_t)np * sizeof(int32_t));
        ix->pair[r] = malloc((size_t)ix->ncpu * sizeof(int32_t));
        if (!R->off || !R->to_e || !ix->pair[r]) {
                free(keys);
                return -ENOMEM;
        }
        for (int p = 0; p < np; p++) {
                R->off[keys[p] / nb + 1]++;
                R->to_e[p] = (int32_t)(keys[p] % nb);
        }
        for (int a = 0; a < ix->n[from]; a++)
                R->off[a + 1] += R->off[a];
        for (int i = 0; i < ix->ncpu; i++) {
                int64_t k = (int64_t)ix->of[from][i] * nb + ix->of[to][i];
                int lo = 0, hi = np - 1;
                while (lo < hi) {
                        int mid = (lo + hi) / 2;
                        if (keys[mid] < k)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                ix->pair[r][i] = lo;
        }
        free(keys);
        return 0;
}

static int deg(const ncm_cpu_index *ix, int r, int a)
{
        return ix->r[r].off[a + 1] - ix->r[r].off[a];
}

static int size_of(const ncm_cpu_index *ix, int kind, int e)
{
        return ix->cpus[kind].off[e + 1] - ix->cpus[kind].off[e];
}

static int imax(int a, int b)
{
        return a > b ? a : b;
}

/*
 * Longest lists of either hierarchy order. Normally every bound is the element count; they
 * grow only when an element spans parents (a socket over two NUMA nodes under numaFirst).
 */
static void compute_bounds(ncm_cpu_index *ix)
{
        const ix_rel *ns = &ix->r[R_NUMA_SOCK], *sn = &ix->r[R_SOCK_NUMA];
        int core_nf = 0, cpu_nf_packed = 0, cpu_nf_spread = 0;
        int core_sf = 0, cpu_sf_packed = 0, unc_sf = 0;

        for (int p = 0; p < ns->npairs; p++) {
                int s = ns->to_e[p];
                core_nf += deg(ix, R_SOCK_CORE, s);
                cpu_nf_spread += size_of(ix, K_SOCK, s);
                for (int q = ix->r[R_SOCK_CORE].off[s]; q < ix->r[R_SOCK_CORE].off[s + 1]; q++)
                        cpu_nf_packed += size_of(ix, K_CORE, ix->r[R_SOCK_CORE].to_e[q]);
        }
        for (int p = 0; p < sn->npairs; p++) {
                int n = sn->to_e[p];
                core_sf += deg(ix, R_NUMA_CORE, n);
                unc_sf += deg(ix, R_NUMA_UNC, n);
                for (int q = ix->r[R_NUMA_CORE].off[n]; q < ix->r[R_NUMA_CORE].off[n + 1]; q++)
                        cpu_sf_packed += size_of(ix, K_CORE, ix->r[R_NUMA_CORE].to_e[q]);
        }
        ix->lmax[K_NUMA] = imax(ix->n[K_NUMA], sn->npairs);
        ix->lmax[K_SOCK] = imax(ix->n[K_SOCK], ns->npairs);
        ix->lmax[K_CORE] = imax(core_nf, core_sf);
        ix->lmax[K_UNC] = imax(ix->r[R_NUMA_UNC].npairs, unc_sf);
        ix->lmax[4] = imax(imax(cpu_nf_packed, cpu_nf_spread), imax(cpu_sf_packed, ix->ncpu));
        ix->maxn = 0;
        for (int k = 0; k < K_COUNT; k++)
                ix->maxn = imax(ix->maxn, ix->n[k]);
        ix->maxn = imax(ix->maxn, ix->ncpu);
}

int ncm_cpu_index_new(const ncm_topo *t, ncm_cpu_index **ret, ncm_error *err)
{
        static const int rels[R_COUNT][2] = {
                        [R_NUMA_SOCK] = {K_NUMA, K_SOCK}, [R_SOCK_NUMA] = {K_SOCK, K_NUMA},
                        [R_SOCK_CORE] = {K_SOCK, K_CORE}, [R_NUMA_CORE] = {K_NUMA, K_CORE},
                        [R_NUMA_UNC] = {K_NUMA, K_UNC},   [R_UNC_CORE] = {K_UNC, K_CORE},
        };
        size_t n = 0;
        const ncm_cpu_info *cpus = ncm_topo_cpus(t, &n);
        ncm_autoptr(ncm_cpu_index) ix = NULL;

        if (n == 0)
                return ncm_error_set(err, EINVAL, "topology has no CPUs");
        ix = calloc(1, sizeof(*ix));
        if (!ix)
                return ncm_error_set(err, ENOMEM, "out of memory");
        ix->topo = t;
        ix->ncpu = (int)n;
        ix->max_cpu = cpus[n - 1].cpu;
        ix->words = (ix->ncpu + 63) / 64;
        ix->cpu_id = malloc(n * sizeof(int32_t));
        ix->cpu_dense = malloc(((size_t)ix->max_cpu + 1) * sizeof(int32_t));
        if (!ix->cpu_id || !ix->cpu_dense)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (int i = 0; i <= ix->max_cpu; i++)
                ix->cpu_dense[i] = -1;
        for (int i = 0; i < ix->ncpu; i++) {
                ix->cpu_id[i] = cpus[i].cpu;
                ix->cpu_dense[cpus[i].cpu] = i;
        }
        for (int k = 0; k < K_COUNT; k++)
                if (build_kind(ix, cpus, k) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        for (int r = 0; r < R_COUNT; r++)
                if (build_rel(ix, r, rels[r][0], rels[r][1]) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        for (int c = 0; c < ix->n[K_CORE]; c++) {
                int sz = ix->cpus[K_CORE].off[c + 1] - ix->cpus[K_CORE].off[c];
                if (sz > ix->max_core_cpus)
                        ix->max_core_cpus = sz;
        }
        compute_bounds(ix);
        for (int r = 0; r < R_COUNT; r++)
                ix->r[r].alias = ix->r[r].npairs == ix->n[ix->r[r].to];
        ix->nslot = K_COUNT;
        for (int r = 0; r < R_COUNT; r++)
                ix->nslot += !ix->r[r].alias;
        ix->slot = malloc((size_t)ix->ncpu * (size_t)ix->nslot * sizeof(int32_t));
        if (!ix->slot)
                return ncm_error_set(err, ENOMEM, "out of memory");
        {
                int base = 0, j = 0;
                for (int k = 0; k < K_COUNT; k++, j++) {
                        ix->cnt_base[k] = base;
                        for (int c = 0; c < ix->ncpu; c++)
                                ix->slot[c * ix->nslot + j] = base + ix->of[k][c];
                        base += ix->n[k];
                }
                for (int r = 0; r < R_COUNT; r++) {
                        if (ix->r[r].alias) {
                                ix->cnt_base[K_COUNT + r] = -1;
                                continue;
                        }
                        ix->cnt_base[K_COUNT + r] = base;
                        for (int c = 0; c < ix->ncpu; c++)
                                ix->slot[c * ix->nslot + j] = base + ix->pair[r][c];
                        base += ix->r[r].npairs;
                        j++;
                }
                ix->ncnt = base;
        }
        {
                /* bitsets, then the int64 sort keys, then int32 parts: all aligned */
                const int lists[7] = {ix->lmax[K_NUMA], ix->lmax[K_SOCK], ix->lmax[K_CORE],
                                      ix->lmax[K_UNC],  ix->lmax[K_UNC],  ix->lmax[4],
                                      ix->maxn};
                size_t o = (size_t)ix->words * sizeof(uint64_t);
                ix->off_result = o;
                o += (size_t)ix->words * sizeof(uint64_t);
                ix->off_key = o;
                o += (size_t)ix->maxn * sizeof(int64_t);
                ix->off_cnt = o;
                o += (size_t)ix->ncnt * sizeof(int32_t);
                for (int l = 0; l < 7; l++) {
                        ix->off_list[l] = o;
                        o += (size_t)lists[l] * sizeof(int32_t);
                }
                ix->acc_bytes = o;
        }
        ix->num_cpus = ncm_topo_num_cpus(t);
        ix->num_sockets = ncm_topo_num_sockets(t);
        ix->num_numa = ncm_topo_num_numa_nodes(t);
        ix->cpus_per_core = ncm_topo_cpus_per_core(t);
        ix->cpus_per_socket = ncm_topo_cpus_per_socket(t);
        ix->cpus_per_uncore = ncm_topo_cpus_per_uncore(t);
        ix->numa_first = ix->num_sockets >= ix->num_numa;
        ix->numa_ids_fit = ix->id[K_NUMA][0] >= 0 && ix->id[K_NUMA][ix->n[K_NUMA] - 1] < 64;
        *ret = NCM_TAKE_PTR(ix);
        return 0;
}

int ncm__dense_from_set(const ncm_cpu_index *ix, const ncm_cpuset *s, uint64_t *ret)
{
        int size = 0;

        memset(ret, 0, (size_t)ix->words * sizeof(uint64_t));
        NCM_CPUSET_FOREACH(cpu, s)
        {
                size++;
                if (cpu <= ix->max_cpu && ix->cpu_dense[cpu] >= 0)
                        bit_set(ret, ix->cpu_dense[cpu]);
        }
        return size;
}

void ncm__set_from_dense(const ncm_cpu_index *ix, const uint64_t *b, ncm_cpuset *ret)
{
        ncm_cpuset_zero(ret);
        for (int w = 0; w < ix->words; w++)
                for (uint64_t x = b[w]; x; x &= x - 1)
                        (void)ncm_cpuset_set(ret, ix->cpu_id[w * 64 + __builtin_ctzll(x)]);
}
