/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU table and its queries. Everything a query needs is computed once in ncm_topo_new():
 * a dense cpu-id -> row index; per level (NUMA node, socket, uncore cache) the sorted table of
 * the ids its CPUs carry, each CPU's dense index into it and a cpuset per element (few
 * elements, many CPUs each, so a query ORs a handful of words per element); and a compact
 * member list per core (many elements of 1-4 CPUs, where a cpuset each would cost a kilobyte).
 *
 * Element ids are the kernel's integers, kept as read: negative (-1 on s390), sparse and large
 * (196611 on Itanium, a 32-bit cache id). They never index an array: lookups by id are binary
 * searches in the sorted table, and everything else works on the dense indices. The CPU
 * allocator calls these queries in its inner loops, so none of them allocates or scans the
 * table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topology.h>
#include "topology/topology-internal.h"

/* One level of elements (numa, socket, uncore). */
typedef struct level {
        size_t n;          /* distinct ids */
        int64_t *ids;      /* ascending */
        int32_t *of_row;   /* row of the CPU table -> dense index */
        ncm_cpuset **cpus; /* dense index -> its CPUs */
} level;

/* A NUMA node's memory (cadvisor's Node.Memory and Node.HugePages). */
typedef struct numa_mem {
        uint64_t bytes;
        ncm_hugepages *hp; /* ascending page size */
        size_t nhp;
} numa_mem;

struct ncm_topo {
        ncm_cpu_info *cpus; /* sorted by cpu */
        size_t ncpus;
        int max_cpu;  /* -1 when the table is empty */
        int32_t *row; /* cpu id -> row in cpus, -1 when absent; max_cpu + 1 entries */

        level lv[NCM_TOPO_N_LEVELS];

        /* cores: ids are CPU ids, so index by id */
        int max_core;
        int ncores;
        int32_t *core_off; /* core id -> first member in core_cpus; max_core + 2 entries */
        int32_t *core_cpus;

        int *numa_ids; /* every NUMA node, ascending */
        size_t nnuma;
        uint32_t *dist; /* nnuma x nnuma, in numa_ids order */
        bool *no_row;   /* per node (numa_ids order): the machine gave no distance row */
        /* per node (numa_ids order): its row as the machine gave it, indexed by node id (the
         * kernel's `distance` file as cadvisor keeps it); NULL when there is none */
        uint32_t **rows;
        size_t *nrows;
        numa_mem *mem; /* per node (numa_ids order); NULL: no source attached memory */

        ncm_cpuset *all;

        /* isolation: what each source said (NULL: nothing), and the unions */
        ncm_cpuset *iso[NCM_ISO_N_SOURCES];
        ncm_cpuset *isolated, *nohz_full;

        ncm_pci *pci; /* PCI devices, when a source attached them (ncm_topo_set_pci) */
};

static int cmp_cpu(const void *a, const void *b)
{
        const ncm_cpu_info *x = a, *y = b;
        return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static int cmp_i64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return (x > y) - (x < y);
}

static int cmp_int(const void *a, const void *b)
{
        const int *x = a, *y = b;
        return (*x > *y) - (*x < *y);
}

static void level_done(level *l)
{
        if (l->cpus)
                for (size_t i = 0; i < l->n; i++)
                        ncm_cpuset_free(l->cpus[i]);
        free(l->cpus);
        free(l->ids);
        free(l->of_row);
}

ncm_topo *ncm_topo_free(ncm_topo *t)
{
        if (!t)
                return NULL;
        free(t->cpus);
        free(t->row);
        for (int k = 0; k < NCM_TOPO_N_LEVELS; k++)
                level_done(&t->lv[k]);
        free(t->core_off);
        free(t->core_cpus);
        free(t->numa_ids);
        free(t->dist);
        free(t->no_row);
        for (size_t i = 0; t->rows && i < t->nnuma; i++)
                free(t->rows[i]);
        free(t->rows);
        free(t->nrows);
        for (size_t i = 0; t->mem && i < t->nnuma; i++)
                free(t->mem[i].hp);
        free(t->mem);
        ncm_cpuset_free(t->all);
        for (int k = 0; k < NCM_ISO_N_SOURCES; k++)
                ncm_cpuset_free(t->iso[k]);
        ncm_cpuset_free(t->isolated);
        ncm_cpuset_free(t->nohz_full);
        ncm_pci_free(t->pci);
        free(t);
        return NULL;
}

static int64_t id_at(const ncm_cpu_info *c, int kind)
{
        switch (kind) {
        case NCM_TOPO_NUMA:
                return c->numa;
        case NCM_TOPO_SOCKET:
                return c->socket;
        default:
                return c->uncore;
        }
}

/* Index of ID in the ascending table IDS[0..N), or -1. */
static int find_id(const int64_t *ids, size_t n, int64_t id)
{
        size_t lo = 0, hi = n;
        /* ids are sorted and unique, and mostly 0..n-1: then the id is its own position */
        if (id >= 0 && (uint64_t)id < n && ids[id] == id)
                return (int)id;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (ids[mid] < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < n && ids[lo] == id ? (int)lo : -1;
}

static int build_level(ncm_topo *t, int kind)
{
        level *l = &t->lv[kind];
        size_t n = t->ncpus, k = 0;

        l->ids = malloc((n ? n : 1) * sizeof(*l->ids));
        l->of_row = malloc((n ? n : 1) * sizeof(*l->of_row));
        if (!l->ids || !l->of_row)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                l->ids[i] = id_at(&t->cpus[i], kind);
        qsort(l->ids, n, sizeof(*l->ids), cmp_i64);
        for (size_t i = 0; i < n; i++)
                if (i == 0 || l->ids[i] != l->ids[k - 1])
                        l->ids[k++] = l->ids[i];
        l->n = k;
        l->cpus = calloc(k ? k : 1, sizeof(*l->cpus));
        if (!l->cpus)
                return -ENOMEM;
        for (size_t e = 0; e < k; e++)
                if (!(l->cpus[e] = ncm_cpuset_new()))
                        return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                int e = find_id(l->ids, k, id_at(&t->cpus[i], kind));
                l->of_row[i] = e;
                (void)ncm_cpuset_set(l->cpus[e], t->cpus[i].cpu);
        }
        return 0;
}

static int build_cores(ncm_topo *t)
{
        int32_t *fill;

        t->max_core = -1;
        for (size_t i = 0; i < t->ncpus; i++)
                if (t->cpus[i].core > t->max_core)
                        t->max_core = t->cpus[i].core;
        t->core_off = calloc((size_t)t->max_core + 2, sizeof(*t->core_off));
        t->core_cpus = malloc((t->ncpus ? t->ncpus : 1) * sizeof(*t->core_cpus));
        fill = calloc((size_t)t->max_core + 1, sizeof(*fill));
        if (!t->core_off || !t->core_cpus || !fill) {
                free(fill);
                return -ENOMEM;
        }
        /* Counting sort by core id; the table is sorted by cpu, so members stay ascending. */
        for (size_t i = 0; i < t->ncpus; i++)
                t->core_off[t->cpus[i].core + 1]++;
        for (int c = 0; c <= t->max_core; c++) {
                if (t->core_off[c + 1] > 0)
                        t->ncores++;
                t->core_off[c + 1] += t->core_off[c];
        }
        for (size_t i = 0; i < t->ncpus; i++) {
                int c = t->cpus[i].core;
                t->core_cpus[t->core_off[c] + fill[c]++] = t->cpus[i].cpu;
        }
        free(fill);
        return 0;
}

/* CPU and core ids are CPU ids, so they must fit a cpuset; no other id is bounded. */
static int check_cpu_id(const char *what, size_t i, int v, ncm_error *err)
{
        if (v < 0 || v >= NCM_CPUSET_MAX_CPUS)
                return ncm_error_set(err, ERANGE, "cpus[%zu].%s: %d is out of range [0, %d]", i,
                                     what, v, NCM_CPUSET_MAX_CPUS - 1);
        return 0;
}

/* Position of NUMA id ID in the ascending list, or -1. */
static int numa_pos(const ncm_topo *t, int id)
{
        size_t lo = 0, hi = t->nnuma;
        if (id >= 0 && (size_t)id < t->nnuma && t->numa_ids[id] == id)
                return id; /* dense ids, as on most machines: no search */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (t->numa_ids[mid] < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < t->nnuma && t->numa_ids[lo] == id ? (int)lo : -1;
}

static int build_numa(ncm_topo *t, const int *numa_ids, size_t nnuma, const uint32_t *distances,
                      ncm_error *err)
{
        const level *l = &t->lv[NCM_TOPO_NUMA];
        size_t n = numa_ids ? nnuma : l->n;
        ncm_autofree size_t *order = NULL; /* position in the caller's list of each sorted id */

        if (!numa_ids && distances)
                return ncm_error_set(err, EINVAL,
                                     "NUMA distances given without the list of NUMA nodes");
        t->nnuma = n;
        t->numa_ids = malloc((n ? n : 1) * sizeof(*t->numa_ids));
        t->dist = malloc((n ? n * n : 1) * sizeof(*t->dist));
        order = malloc((n ? n : 1) * sizeof(*order));
        if (!t->numa_ids || !t->dist || !order)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (numa_ids) {
                memcpy(t->numa_ids, numa_ids, n * sizeof(*t->numa_ids));
                qsort(t->numa_ids, n, sizeof(*t->numa_ids), cmp_int);
        } else {
                for (size_t i = 0; i < n; i++)
                        t->numa_ids[i] = (int)l->ids[i];
        }
        for (size_t i = 1; i < n; i++) {
                if (t->numa_ids[i] != t->numa_ids[i - 1])
                        continue;
                /* name the caller's second occurrence, which is what a reader fixes */
                size_t seen = 0;
                for (size_t j = 0; j < nnuma; j++)
                        if (numa_ids[j] == t->numa_ids[i] && seen++)
                                return ncm_error_set(err, EINVAL,
                                                     "numa[%zu].id: duplicate NUMA node %d", j,
                                                     numa_ids[j]);
        }
        if (numa_ids)
                for (size_t i = 0; i < n; i++)
                        order[numa_pos(t, numa_ids[i])] = i;
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                        t->dist[i * n + j] = distances ? distances[order[i] * n + order[j]]
                                             : i == j  ? 10
                                                       : 20;
        for (size_t i = 0; i < t->ncpus; i++)
                if (numa_pos(t, t->cpus[i].numa) < 0)
                        return ncm_error_set(
                                        err, EINVAL,
                                        "cpu %d: NUMA node %d is not in the list of NUMA nodes",
                                        t->cpus[i].cpu, t->cpus[i].numa);
        return 0;
}

int ncm_topo_new(const ncm_cpu_info *cpus, size_t ncpus, const int *numa_ids, size_t nnuma,
                 const uint32_t *distances, ncm_topo **ret, ncm_error *err)
{
        ncm_autoptr(ncm_topo) t = NULL;
        int r;

        if (ncpus > NCM_CPUSET_MAX_CPUS)
                return ncm_error_set(err, ERANGE, "%zu CPUs: more than %d", ncpus,
                                     NCM_CPUSET_MAX_CPUS);
        for (size_t i = 0; i < ncpus; i++)
                if ((r = check_cpu_id("cpu", i, cpus[i].cpu, err)) < 0 ||
                    (r = check_cpu_id("core", i, cpus[i].core, err)) < 0)
                        return r;

        t = calloc(1, sizeof(*t));
        if (!t)
                return ncm_error_set(err, ENOMEM, "out of memory");
        t->cpus = malloc((ncpus ? ncpus : 1) * sizeof(*t->cpus));
        if (!t->cpus)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (ncpus)
                memcpy(t->cpus, cpus, ncpus * sizeof(*cpus));
        t->ncpus = ncpus;
        qsort(t->cpus, ncpus, sizeof(*t->cpus), cmp_cpu);
        t->max_cpu = ncpus ? t->cpus[ncpus - 1].cpu : -1;
        t->row = malloc(((size_t)t->max_cpu + 1) * sizeof(*t->row) + 1);
        t->all = ncm_cpuset_new();
        t->isolated = ncm_cpuset_new();
        t->nohz_full = ncm_cpuset_new();
        if (!t->row || !t->all || !t->isolated || !t->nohz_full)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (int c = 0; c <= t->max_cpu; c++)
                t->row[c] = -1;
        for (size_t i = 0; i < ncpus; i++) {
                if (i > 0 && t->cpus[i].cpu == t->cpus[i - 1].cpu) {
                        /* Name the caller's second occurrence, which is what a reader fixes. */
                        size_t seen = 0;
                        for (size_t j = 0; j < ncpus; j++)
                                if (cpus[j].cpu == t->cpus[i].cpu && seen++)
                                        return ncm_error_set(err, EINVAL,
                                                             "cpus[%zu].cpu: duplicate cpu %d", j,
                                                             cpus[j].cpu);
                }
                t->row[t->cpus[i].cpu] = (int32_t)i;
                (void)ncm_cpuset_set(t->all, t->cpus[i].cpu);
        }
        for (int k = 0; k < NCM_TOPO_N_LEVELS; k++)
                if (build_level(t, k) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        if (build_cores(t) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = build_numa(t, numa_ids, nnuma, distances, err);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(t);
        return 0;
}

const ncm_cpu_info *ncm_topo_cpus(const ncm_topo *t, size_t *n)
{
        *n = t->ncpus;
        return t->cpus;
}

static int row_of(const ncm_topo *t, int cpu)
{
        return cpu < 0 || cpu > t->max_cpu ? -1 : t->row[cpu];
}

const ncm_cpu_info *ncm_topo_cpu(const ncm_topo *t, int cpu)
{
        int r = row_of(t, cpu);
        return r < 0 ? NULL : &t->cpus[r];
}

int ncm_topo_num_cpus(const ncm_topo *t)
{
        return (int)t->ncpus;
}

int ncm_topo_num_cores(const ncm_topo *t)
{
        return t->ncores;
}

int ncm_topo_num_sockets(const ncm_topo *t)
{
        return (int)t->lv[NCM_TOPO_SOCKET].n;
}

int ncm_topo_num_numa_nodes(const ncm_topo *t)
{
        return (int)t->lv[NCM_TOPO_NUMA].n;
}

int ncm_topo_num_uncore_caches(const ncm_topo *t)
{
        return (int)t->lv[NCM_TOPO_UNCORE].n;
}

static int ratio(int a, int b)
{
        return b == 0 ? 0 : a / b;
}

int ncm_topo_cpus_per_core(const ncm_topo *t)
{
        return ratio((int)t->ncpus, t->ncores);
}

int ncm_topo_cpus_per_socket(const ncm_topo *t)
{
        return ratio((int)t->ncpus, ncm_topo_num_sockets(t));
}

int ncm_topo_cpus_per_uncore(const ncm_topo *t)
{
        return ratio((int)t->ncpus, ncm_topo_num_uncore_caches(t));
}

const int *ncm_topo_numa_ids(const ncm_topo *t, size_t *n)
{
        *n = t->nnuma;
        return t->numa_ids;
}

int ncm_topo_numa_distance(const ncm_topo *t, int a, int b)
{
        int i = numa_pos(t, a), j = numa_pos(t, b);
        if (i < 0 || j < 0)
                return -1;
        return (int)t->dist[(size_t)i * t->nnuma + (size_t)j];
}

const uint32_t *ncm_topo_numa_distances(const ncm_topo *t, size_t *n)
{
        *n = t->nnuma;
        return t->dist;
}

int ncm_topo_numa_distances_missing(const ncm_topo *t, int *id)
{
        for (size_t i = 0; t->no_row && i < t->nnuma; i++)
                if (t->no_row[i]) {
                        *id = t->numa_ids[i];
                        return 0;
                }
        return -ENOENT;
}

void ncm__topo_fill_distances(const int64_t *d, size_t n, uint32_t *out)
{
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++) {
                        int64_t v = d[i * n + j];
                        if (v < 0)
                                v = d[j * n + i];
                        if (v < 0)
                                v = i == j ? 10 : 20;
                        out[i * n + j] = (uint32_t)v;
                }
}

const uint32_t *ncm_topo_numa_distance_row(const ncm_topo *t, int id, size_t *n)
{
        int i = numa_pos(t, id);

        if (i < 0 || !t->rows || !t->rows[i])
                return NULL;
        *n = t->nrows[i];
        return t->rows[i];
}

int ncm__topo_set_row(ncm_topo *t, int id, const uint32_t *row, size_t n)
{
        int i = numa_pos(t, id);
        bool plain = n == t->nnuma, reach = true;

        if (i < 0)
                return 0;
        /*
         * Kept only when it says more than the matrix: not a row of one entry per node (the
         * matrix's row itself, in list order), nor one that does not reach every node id (the
         * kubelet's lookup fails there; the matrix filled in what it could not).
         */
        for (size_t j = 0; j < t->nnuma; j++)
                reach = reach && t->numa_ids[j] >= 0 && (size_t)t->numa_ids[j] < n;
        if (plain || !reach)
                return 0;
        if (!t->rows) {
                t->rows = calloc(t->nnuma ? t->nnuma : 1, sizeof(*t->rows));
                t->nrows = calloc(t->nnuma ? t->nnuma : 1, sizeof(*t->nrows));
                if (!t->rows || !t->nrows)
                        return -ENOMEM;
        }
        free(t->rows[i]);
        t->rows[i] = malloc((n ? n : 1) * sizeof(*row));
        if (!t->rows[i])
                return -ENOMEM;
        memcpy(t->rows[i], row, n * sizeof(*row));
        t->nrows[i] = n;
        return 0;
}

int ncm__topo_mark_no_distances(ncm_topo *t, int id)
{
        int i = numa_pos(t, id);
        if (i < 0)
                return 0;
        if (!t->no_row) {
                t->no_row = calloc(t->nnuma ? t->nnuma : 1, sizeof(*t->no_row));
                if (!t->no_row)
                        return -ENOMEM;
        }
        t->no_row[i] = true;
        return 0;
}

bool ncm_topo_has_memory(const ncm_topo *t)
{
        return t->mem != NULL;
}

uint64_t ncm_topo_numa_memory(const ncm_topo *t, int id, const ncm_hugepages **hp, size_t *n)
{
        int i = t->mem ? numa_pos(t, id) : -1;
        if (hp)
                *hp = i < 0 ? NULL : t->mem[i].hp;
        if (n)
                *n = i < 0 ? 0 : t->mem[i].nhp;
        return i < 0 ? 0 : t->mem[i].bytes;
}

static int cmp_hugepages(const void *a, const void *b)
{
        const ncm_hugepages *x = a, *y = b;
        return (x->page_size > y->page_size) - (x->page_size < y->page_size);
}

int ncm_topo_set_numa_memory(ncm_topo *t, int id, uint64_t memory, const ncm_hugepages *hp,
                             size_t n, ncm_error *err)
{
        int i = numa_pos(t, id);
        ncm_hugepages *copy = NULL;

        if (i < 0)
                return ncm_error_set(err, ENOENT, "NUMA node %d: not in the topology", id);
        if (n) {
                copy = malloc(n * sizeof(*copy));
                if (!copy)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                memcpy(copy, hp, n * sizeof(*copy));
                qsort(copy, n, sizeof(*copy), cmp_hugepages);
                for (size_t k = 0; k < n; k++) {
                        if (copy[k].page_size == 0 ||
                            (k > 0 && copy[k].page_size == copy[k - 1].page_size)) {
                                uint64_t ps = copy[k].page_size;
                                free(copy);
                                return ncm_error_set(err, EINVAL,
                                                     "NUMA node %d: %s hugepage size %" PRIu64
                                                     " kB",
                                                     id, ps ? "repeated" : "zero", ps);
                        }
                }
        }
        if (!t->mem) {
                t->mem = calloc(t->nnuma ? t->nnuma : 1, sizeof(*t->mem));
                if (!t->mem) {
                        free(copy);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
        }
        free(t->mem[i].hp);
        t->mem[i].bytes = memory;
        t->mem[i].hp = copy;
        t->mem[i].nhp = n;
        return 0;
}

void ncm_topo_all_cpus(const ncm_topo *t, ncm_cpuset *out)
{
        ncm_cpuset_copy(out, t->all);
}

const ncm_cpuset *ncm_topo_all_cpus_ref(const ncm_topo *t)
{
        return t->all;
}

const int64_t *ncm_topo_level_ids(const ncm_topo *t, ncm_topo_level lv, size_t *n)
{
        *n = t->lv[lv].n;
        return t->lv[lv].ids;
}

int ncm_topo_level_index(const ncm_topo *t, ncm_topo_level lv, int64_t id)
{
        return find_id(t->lv[lv].ids, t->lv[lv].n, id);
}

int ncm_topo_level_of_cpu(const ncm_topo *t, ncm_topo_level lv, int cpu)
{
        int r = row_of(t, cpu);
        return r < 0 ? -1 : t->lv[lv].of_row[r];
}

const ncm_cpuset *ncm_topo_level_cpus(const ncm_topo *t, ncm_topo_level lv, size_t i)
{
        return i < t->lv[lv].n ? t->lv[lv].cpus[i] : NULL;
}

/*
 * The dense indices of a level are at most NCM_CPUSET_MAX_CPUS (one per CPU), so a bitmap of
 * them fits on the stack: the queries below need no allocation, hence have no failure mode.
 */
typedef struct index_bits {
        uint64_t w[NCM_CPUSET_MAX_CPUS / 64];
} index_bits;

size_t ncm_topo_ids_of_cpus(const ncm_topo *t, ncm_topo_level lv, const ncm_cpuset *cpus,
                            int64_t *ids)
{
        const level *l = &t->lv[lv];
        index_bits seen;
        size_t n = 0;

        memset(seen.w, 0, (l->n + 63) / 64 * sizeof(uint64_t));
        for (int c = ncm_cpuset_first(cpus); c >= 0 && c <= t->max_cpu;
             c = ncm_cpuset_next(cpus, c))
                if (t->row[c] >= 0) {
                        int32_t e = l->of_row[t->row[c]];
                        seen.w[e / 64] |= UINT64_C(1) << (e % 64);
                }
        for (size_t w = 0; w < (l->n + 63) / 64; w++)
                for (uint64_t x = seen.w[w]; x; x &= x - 1)
                        ids[n++] = l->ids[w * 64 + (size_t)__builtin_ctzll(x)];
        return n;
}

void ncm_topo_cpus_of_ids(const ncm_topo *t, ncm_topo_level lv, const int64_t *ids, size_t n,
                          ncm_cpuset *out)
{
        const level *l = &t->lv[lv];

        ncm_cpuset_zero(out);
        for (size_t i = 0; i < n; i++) {
                int e = find_id(l->ids, l->n, ids[i]);
                if (e >= 0)
                        ncm_cpuset_or(out, out, l->cpus[e]);
        }
}

static const ncm_cpuset *cpus_by_id(const ncm_topo *t, ncm_topo_level lv, int64_t id)
{
        int e = find_id(t->lv[lv].ids, t->lv[lv].n, id);
        return e < 0 ? NULL : t->lv[lv].cpus[e];
}

const ncm_cpuset *ncm_topo_numa_cpus(const ncm_topo *t, int numa)
{
        return cpus_by_id(t, NCM_TOPO_NUMA, numa);
}

const ncm_cpuset *ncm_topo_socket_cpus(const ncm_topo *t, int socket)
{
        return cpus_by_id(t, NCM_TOPO_SOCKET, socket);
}

const ncm_cpuset *ncm_topo_uncore_cpus(const ncm_topo *t, int64_t uncore)
{
        return cpus_by_id(t, NCM_TOPO_UNCORE, uncore);
}

const int *ncm_topo_core_cpus(const ncm_topo *t, int core, size_t *n)
{
        if (core < 0 || core > t->max_core || t->core_off[core] == t->core_off[core + 1]) {
                *n = 0;
                return NULL;
        }
        *n = (size_t)(t->core_off[core + 1] - t->core_off[core]);
        return &t->core_cpus[t->core_off[core]];
}

/*
 * A snapshot of a set's elements up to LIMIT, on the stack: IDS and OUT may be the same set
 * (kubelet code often writes `s = cpusInX(s)`).
 */
static void snapshot(const ncm_cpuset *s, int limit, index_bits *snap)
{
        memset(snap->w, 0, sizeof(snap->w));
        for (int v = ncm_cpuset_first(s); v >= 0 && v <= limit; v = ncm_cpuset_next(s, v))
                snap->w[v / 64] |= UINT64_C(1) << (v % 64);
}

void ncm_topo_cpus_in_cores(const ncm_topo *t, const ncm_cpuset *ids, ncm_cpuset *out)
{
        index_bits snap;

        snapshot(ids, t->max_core, &snap);
        ncm_cpuset_zero(out);
        for (int w = 0; w <= t->max_core / 64 && t->max_core >= 0; w++)
                for (uint64_t x = snap.w[w]; x; x &= x - 1) {
                        int core = w * 64 + __builtin_ctzll(x);
                        for (int32_t k = t->core_off[core]; k < t->core_off[core + 1]; k++)
                                (void)ncm_cpuset_set(out, t->core_cpus[k]);
                }
}

void ncm_topo_cores_of_cpus(const ncm_topo *t, const ncm_cpuset *cpus, ncm_cpuset *out)
{
        index_bits snap;

        snapshot(cpus, t->max_cpu, &snap);
        ncm_cpuset_zero(out);
        for (int w = 0; w <= t->max_cpu / 64 && t->max_cpu >= 0; w++)
                for (uint64_t x = snap.w[w]; x; x &= x - 1) {
                        int c = w * 64 + __builtin_ctzll(x);
                        if (t->row[c] >= 0)
                                (void)ncm_cpuset_set(out, t->cpus[t->row[c]].core);
                }
}

bool ncm_topo_equal(const ncm_topo *a, const ncm_topo *b)
{
        if (a->ncpus != b->ncpus || a->nnuma != b->nnuma)
                return false;
        for (size_t i = 0; i < a->ncpus; i++) {
                const ncm_cpu_info *x = &a->cpus[i], *y = &b->cpus[i];
                if (x->cpu != y->cpu || x->core != y->core || x->socket != y->socket ||
                    x->numa != y->numa || x->uncore != y->uncore)
                        return false;
        }
        if (memcmp(a->numa_ids, b->numa_ids, a->nnuma * sizeof(*a->numa_ids)) != 0 ||
            memcmp(a->dist, b->dist, a->nnuma * a->nnuma * sizeof(*a->dist)) != 0 ||
            !a->mem != !b->mem || !ncm_cpuset_equal(a->isolated, b->isolated) ||
            !ncm_cpuset_equal(a->nohz_full, b->nohz_full))
                return false;
        for (size_t i = 0; i < a->nnuma; i++) {
                size_t na = a->rows && a->rows[i] ? a->nrows[i] : 0;
                size_t nb = b->rows && b->rows[i] ? b->nrows[i] : 0;
                if (na != nb || (na && memcmp(a->rows[i], b->rows[i], na * sizeof(uint32_t))))
                        return false;
        }
        for (size_t i = 0; a->mem && i < a->nnuma; i++)
                if (a->mem[i].bytes != b->mem[i].bytes || a->mem[i].nhp != b->mem[i].nhp ||
                    (a->mem[i].nhp &&
                     memcmp(a->mem[i].hp, b->mem[i].hp, a->mem[i].nhp * sizeof(*a->mem[i].hp))))
                        return false;
        return ncm__pci_equal(a->pci, b->pci);
}

int ncm_topo_set_pci(ncm_topo *t, ncm_pci *p)
{
        ncm_pci_free(t->pci);
        t->pci = p;
        return 0;
}

const ncm_pci *ncm_topo_pci(const ncm_topo *t)
{
        return t->pci;
}

/* Which union a source feeds: 1 isolated, 2 nohz_full, 0 none (managed_irq). */
static int iso_kind(ncm_iso_source s)
{
        switch (s) {
        case NCM_ISO_SYSFS_ISOLATED:
        case NCM_ISO_ISOLCPUS_DOMAIN:
        case NCM_ISO_PARTITIONS:
        case NCM_ISO_GIVEN_ISOLATED:
                return 1;
        case NCM_ISO_SYSFS_NOHZ_FULL:
        case NCM_ISO_ISOLCPUS_NOHZ:
        case NCM_ISO_NOHZ_FULL:
        case NCM_ISO_GIVEN_NOHZ_FULL:
                return 2;
        default:
                return 0;
        }
}

int ncm_topo_set_isolation(ncm_topo *t, ncm_iso_source source, const ncm_cpuset *cpus,
                           ncm_error *err)
{
        ncm_cpuset *copy = NULL;

        if ((unsigned)source >= NCM_ISO_N_SOURCES)
                return ncm_error_set(err, EINVAL, "unknown isolation source %d", (int)source);
        if (cpus) {
                copy = ncm_cpuset_new();
                if (!copy)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                ncm_cpuset_and(copy, cpus, t->all);
        }
        ncm_cpuset_free(t->iso[source]);
        t->iso[source] = copy;
        ncm_cpuset_zero(t->isolated);
        ncm_cpuset_zero(t->nohz_full);
        for (int k = 0; k < NCM_ISO_N_SOURCES; k++) {
                int kind = iso_kind((ncm_iso_source)k);
                if (t->iso[k] && kind)
                        ncm_cpuset_or(kind == 1 ? t->isolated : t->nohz_full,
                                      kind == 1 ? t->isolated : t->nohz_full, t->iso[k]);
        }
        return 0;
}

const ncm_cpuset *ncm_topo_isolation_source(const ncm_topo *t, ncm_iso_source source)
{
        return (unsigned)source < NCM_ISO_N_SOURCES ? t->iso[source] : NULL;
}

const ncm_cpuset *ncm_topo_isolated_cpus(const ncm_topo *t)
{
        return t->isolated;
}

const ncm_cpuset *ncm_topo_nohz_full_cpus(const ncm_topo *t)
{
        return t->nohz_full;
}
