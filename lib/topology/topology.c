/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU table and its queries. Everything a query needs is computed once in ncm_topo_new():
 * a dense cpu-id -> row index, a cpuset per NUMA node, socket and uncore cache (few elements,
 * many CPUs each, so a query ORs a handful of words per element), and a compact member list
 * per core (many elements of 1-4 CPUs, where a cpuset each would cost a kilobyte). The CPU
 * allocator calls these in its inner loops, so none of them allocates or scans the table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topology.h>
#include "topology/topology-internal.h"

/* One kind of element (numa, socket, uncore): its cpuset, indexed by element id. */
typedef struct elem_sets {
        int max_id;         /* -1 when there is none */
        int count;          /* distinct ids */
        ncm_cpuset **by_id; /* max_id + 1 entries, NULL for absent ids */
} elem_sets;

struct ncm_topo {
        ncm_cpu_info *cpus; /* sorted by cpu */
        size_t ncpus;
        int max_cpu;
        int32_t *row; /* cpu id -> row in cpus, -1 when absent; max_cpu + 1 entries */

        elem_sets numa, socket, uncore;

        /* cores: ids are arbitrary (kubelet tests use small ones), so index by id too */
        int max_core;
        int ncores;
        int32_t *core_off; /* core id -> first member in core_cpus; max_core + 2 entries */
        int32_t *core_cpus;

        int *numa_ids; /* every NUMA node, ascending */
        size_t nnuma;
        int32_t *numa_index; /* numa id -> position in numa_ids, -1 when absent */
        int max_numa_id;
        uint32_t *dist; /* nnuma x nnuma, in numa_ids order */

        ncm_cpuset *all;
};

static int cmp_cpu(const void *a, const void *b)
{
        const ncm_cpu_info *x = a, *y = b;
        return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static int cmp_int(const void *a, const void *b)
{
        const int *x = a, *y = b;
        return (*x > *y) - (*x < *y);
}

static void elem_sets_done(elem_sets *e)
{
        if (e->by_id)
                for (int i = 0; i <= e->max_id; i++)
                        ncm_cpuset_free(e->by_id[i]);
        free(e->by_id);
}

ncm_topo *ncm_topo_free(ncm_topo *t)
{
        if (!t)
                return NULL;
        free(t->cpus);
        free(t->row);
        elem_sets_done(&t->numa);
        elem_sets_done(&t->socket);
        elem_sets_done(&t->uncore);
        free(t->core_off);
        free(t->core_cpus);
        free(t->numa_ids);
        free(t->numa_index);
        free(t->dist);
        ncm_cpuset_free(t->all);
        free(t);
        return NULL;
}

/* The id a CPU has for one kind of element. */
typedef int (*id_of_fn)(const ncm_cpu_info *c);
static int numa_of(const ncm_cpu_info *c)
{
        return c->numa;
}
static int socket_of(const ncm_cpu_info *c)
{
        return c->socket;
}
static int uncore_of(const ncm_cpu_info *c)
{
        return c->uncore;
}

static int build_sets(elem_sets *e, const ncm_cpu_info *cpus, size_t n, id_of_fn id_of)
{
        e->max_id = -1;
        for (size_t i = 0; i < n; i++)
                if (id_of(&cpus[i]) > e->max_id)
                        e->max_id = id_of(&cpus[i]);
        e->by_id = calloc((size_t)e->max_id + 1, sizeof(*e->by_id));
        if (!e->by_id)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                ncm_cpuset **s = &e->by_id[id_of(&cpus[i])];
                if (!*s) {
                        *s = ncm_cpuset_new();
                        if (!*s)
                                return -ENOMEM;
                        e->count++;
                }
                (void)ncm_cpuset_set(*s, cpus[i].cpu);
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
        t->core_cpus = malloc(t->ncpus * sizeof(*t->core_cpus));
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

static int check_id(const char *what, size_t i, int v, ncm_error *err)
{
        if (v < 0 || v >= NCM_CPUSET_MAX_CPUS)
                return ncm_error_set(err, ERANGE, "cpus[%zu].%s: %d is out of range [0, %d]", i,
                                     what, v, NCM_CPUSET_MAX_CPUS - 1);
        return 0;
}

static int build_numa(ncm_topo *t, const int *numa_ids, size_t nnuma, const uint32_t *distances,
                      ncm_error *err)
{
        size_t n = 0;
        size_t *order = NULL; /* position in the caller's list of each sorted id */

        if (numa_ids) {
                for (size_t i = 0; i < nnuma; i++)
                        if (numa_ids[i] < 0 || numa_ids[i] >= NCM_CPUSET_MAX_CPUS)
                                return ncm_error_set(err, ERANGE,
                                                     "numa[%zu].id: %d is out of range [0, %d]", i,
                                                     numa_ids[i], NCM_CPUSET_MAX_CPUS - 1);
                n = nnuma;
        } else {
                if (distances)
                        return ncm_error_set(err, EINVAL,
                                             "NUMA distances given without the list of NUMA nodes");
                n = (size_t)t->numa.count;
        }
        t->nnuma = n;
        t->numa_ids = malloc((n ? n : 1) * sizeof(*t->numa_ids));
        t->dist = malloc((n ? n * n : 1) * sizeof(*t->dist));
        order = malloc((n ? n : 1) * sizeof(*order));
        if (!t->numa_ids || !t->dist || !order) {
                free(order);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        if (numa_ids) {
                memcpy(t->numa_ids, numa_ids, n * sizeof(*t->numa_ids));
                qsort(t->numa_ids, n, sizeof(*t->numa_ids), cmp_int);
        } else {
                size_t k = 0;
                for (int id = 0; id <= t->numa.max_id; id++)
                        if (t->numa.by_id[id])
                                t->numa_ids[k++] = id;
        }
        t->max_numa_id = n ? t->numa_ids[n - 1] : -1;
        t->numa_index = malloc(((size_t)t->max_numa_id + 1) * sizeof(*t->numa_index) + 1);
        if (!t->numa_index) {
                free(order);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        for (int id = 0; id <= t->max_numa_id; id++)
                t->numa_index[id] = -1;
        for (size_t i = 0; i < n; i++) {
                if (i > 0 && t->numa_ids[i] == t->numa_ids[i - 1]) {
                        size_t first = 0;
                        free(order);
                        while (numa_ids[first] != t->numa_ids[i])
                                first++;
                        for (size_t j = first + 1; j < nnuma; j++)
                                if (numa_ids[j] == t->numa_ids[i])
                                        return ncm_error_set(err, EINVAL,
                                                             "numa[%zu].id: duplicate NUMA node %d",
                                                             j, numa_ids[j]);
                        return ncm_error_set(err, EINVAL, "duplicate NUMA node %d", t->numa_ids[i]);
                }
                t->numa_index[t->numa_ids[i]] = (int32_t)i;
        }
        if (numa_ids)
                for (size_t i = 0; i < n; i++)
                        order[t->numa_index[numa_ids[i]]] = i;
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                        t->dist[i * n + j] = distances ? distances[order[i] * n + order[j]]
                                             : i == j  ? 10
                                                       : 20;
        free(order);
        for (size_t i = 0; i < t->ncpus; i++) {
                int id = t->cpus[i].numa;
                if (id > t->max_numa_id || t->numa_index[id] < 0)
                        return ncm_error_set(
                                        err, EINVAL,
                                        "cpu %d: NUMA node %d is not in the list of NUMA nodes",
                                        t->cpus[i].cpu, id);
        }
        return 0;
}

int ncm_topo_new(const ncm_cpu_info *cpus, size_t ncpus, const int *numa_ids, size_t nnuma,
                 const uint32_t *distances, ncm_topo **ret, ncm_error *err)
{
        ncm_autoptr(ncm_topo) t = NULL;
        int r;

        if (ncpus == 0)
                return ncm_error_set(err, EINVAL, "could not detect number of cpus");
        if (ncpus > NCM_CPUSET_MAX_CPUS)
                return ncm_error_set(err, ERANGE, "%zu CPUs: more than %d", ncpus,
                                     NCM_CPUSET_MAX_CPUS);
        for (size_t i = 0; i < ncpus; i++) {
                if ((r = check_id("cpu", i, cpus[i].cpu, err)) < 0 ||
                    (r = check_id("core", i, cpus[i].core, err)) < 0 ||
                    (r = check_id("socket", i, cpus[i].socket, err)) < 0 ||
                    (r = check_id("numa", i, cpus[i].numa, err)) < 0 ||
                    (r = check_id("uncore", i, cpus[i].uncore, err)) < 0)
                        return r;
        }

        t = calloc(1, sizeof(*t));
        if (!t)
                return ncm_error_set(err, ENOMEM, "out of memory");
        t->cpus = malloc(ncpus * sizeof(*t->cpus));
        if (!t->cpus)
                return ncm_error_set(err, ENOMEM, "out of memory");
        memcpy(t->cpus, cpus, ncpus * sizeof(*cpus));
        t->ncpus = ncpus;
        qsort(t->cpus, ncpus, sizeof(*t->cpus), cmp_cpu);
        t->max_cpu = t->cpus[ncpus - 1].cpu;
        t->row = malloc(((size_t)t->max_cpu + 1) * sizeof(*t->row));
        t->all = ncm_cpuset_new();
        if (!t->row || !t->all)
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
        if (build_sets(&t->numa, t->cpus, ncpus, numa_of) < 0 ||
            build_sets(&t->socket, t->cpus, ncpus, socket_of) < 0 ||
            build_sets(&t->uncore, t->cpus, ncpus, uncore_of) < 0 || build_cores(t) < 0)
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

const ncm_cpu_info *ncm_topo_cpu(const ncm_topo *t, int cpu)
{
        if (cpu < 0 || cpu > t->max_cpu || t->row[cpu] < 0)
                return NULL;
        return &t->cpus[t->row[cpu]];
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
        return t->socket.count;
}

int ncm_topo_num_numa_nodes(const ncm_topo *t)
{
        return t->numa.count;
}

int ncm_topo_num_uncore_caches(const ncm_topo *t)
{
        return t->uncore.count;
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
        return ratio((int)t->ncpus, t->socket.count);
}

int ncm_topo_cpus_per_uncore(const ncm_topo *t)
{
        return ratio((int)t->ncpus, t->uncore.count);
}

const int *ncm_topo_numa_ids(const ncm_topo *t, size_t *n)
{
        *n = t->nnuma;
        return t->numa_ids;
}

int ncm_topo_numa_distance(const ncm_topo *t, int a, int b)
{
        if (a < 0 || b < 0 || a > t->max_numa_id || b > t->max_numa_id)
                return -1;
        if (t->numa_index[a] < 0 || t->numa_index[b] < 0)
                return -1;
        return (int)t->dist[(size_t)t->numa_index[a] * t->nnuma + (size_t)t->numa_index[b]];
}

const uint32_t *ncm_topo_numa_distances(const ncm_topo *t, size_t *n)
{
        *n = t->nnuma;
        return t->dist;
}

void ncm_topo_all_cpus(const ncm_topo *t, ncm_cpuset *out)
{
        ncm_cpuset_copy(out, t->all);
}

const ncm_cpuset *ncm_topo_all_cpus_ref(const ncm_topo *t)
{
        return t->all;
}

/*
 * IDS and OUT may be the same set (kubelet code often writes `s = cpusInX(s)`), so when they
 * are, the ids are first copied to a bitmap on the stack: no allocation, so no failure mode.
 */
typedef struct id_snapshot {
        uint64_t w[NCM_CPUSET_MAX_CPUS / 64];
        int max;
} id_snapshot;

static void snapshot_ids(const ncm_cpuset *ids, int limit, id_snapshot *snap)
{
        memset(snap->w, 0, sizeof(snap->w));
        snap->max = -1;
        for (int id = ncm_cpuset_first(ids); id >= 0 && id <= limit;
             id = ncm_cpuset_next(ids, id)) {
                snap->w[id / 64] |= UINT64_C(1) << (id % 64);
                snap->max = id;
        }
}

static int snapshot_next(const id_snapshot *snap, int prev)
{
        for (int id = prev + 1; id <= snap->max; id++) {
                uint64_t w = snap->w[id / 64] >> (id % 64);
                if (w)
                        return id + __builtin_ctzll(w);
                id |= 63;
        }
        return -1;
}

static void cpus_in(const elem_sets *e, const ncm_cpuset *ids, ncm_cpuset *out)
{
        if (ids == out) {
                id_snapshot snap;
                snapshot_ids(ids, e->max_id, &snap);
                ncm_cpuset_zero(out);
                for (int id = snapshot_next(&snap, -1); id >= 0; id = snapshot_next(&snap, id))
                        if (e->by_id[id])
                                ncm_cpuset_or(out, out, e->by_id[id]);
                return;
        }
        ncm_cpuset_zero(out);
        for (int id = ncm_cpuset_first(ids); id >= 0 && id <= e->max_id;
             id = ncm_cpuset_next(ids, id))
                if (e->by_id[id])
                        ncm_cpuset_or(out, out, e->by_id[id]);
}

void ncm_topo_cpus_in_numa(const ncm_topo *t, const ncm_cpuset *ids, ncm_cpuset *out)
{
        cpus_in(&t->numa, ids, out);
}

void ncm_topo_cpus_in_sockets(const ncm_topo *t, const ncm_cpuset *ids, ncm_cpuset *out)
{
        cpus_in(&t->socket, ids, out);
}

void ncm_topo_cpus_in_uncore(const ncm_topo *t, const ncm_cpuset *ids, ncm_cpuset *out)
{
        cpus_in(&t->uncore, ids, out);
}

static void add_core(const ncm_topo *t, int core, ncm_cpuset *out)
{
        for (int32_t k = t->core_off[core]; k < t->core_off[core + 1]; k++)
                (void)ncm_cpuset_set(out, t->core_cpus[k]);
}

void ncm_topo_cpus_in_cores(const ncm_topo *t, const ncm_cpuset *ids, ncm_cpuset *out)
{
        if (ids == out) {
                id_snapshot snap;
                snapshot_ids(ids, t->max_core, &snap);
                ncm_cpuset_zero(out);
                for (int id = snapshot_next(&snap, -1); id >= 0; id = snapshot_next(&snap, id))
                        add_core(t, id, out);
                return;
        }
        ncm_cpuset_zero(out);
        for (int id = ncm_cpuset_first(ids); id >= 0 && id <= t->max_core;
             id = ncm_cpuset_next(ids, id))
                add_core(t, id, out);
}

const ncm_cpuset *ncm_topo_numa_cpus(const ncm_topo *t, int numa)
{
        return numa >= 0 && numa <= t->numa.max_id ? t->numa.by_id[numa] : NULL;
}

const ncm_cpuset *ncm_topo_socket_cpus(const ncm_topo *t, int socket)
{
        return socket >= 0 && socket <= t->socket.max_id ? t->socket.by_id[socket] : NULL;
}

const ncm_cpuset *ncm_topo_uncore_cpus(const ncm_topo *t, int uncore)
{
        return uncore >= 0 && uncore <= t->uncore.max_id ? t->uncore.by_id[uncore] : NULL;
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

/* Ids of one kind of element among the CPUs of CPUS (kubelet's KeepOnly(cpus).Xs()). */
static void ids_of(const ncm_topo *t, const ncm_cpuset *cpus, id_of_fn id_of, ncm_cpuset *out)
{
        id_snapshot snap;
        const ncm_cpuset *src = cpus;
        if (cpus == out) {
                snapshot_ids(cpus, t->max_cpu, &snap);
                ncm_cpuset_zero(out);
                for (int c = snapshot_next(&snap, -1); c >= 0; c = snapshot_next(&snap, c))
                        if (t->row[c] >= 0)
                                (void)ncm_cpuset_set(out, id_of(&t->cpus[t->row[c]]));
                return;
        }
        ncm_cpuset_zero(out);
        for (int c = ncm_cpuset_first(src); c >= 0 && c <= t->max_cpu; c = ncm_cpuset_next(src, c))
                if (t->row[c] >= 0)
                        (void)ncm_cpuset_set(out, id_of(&t->cpus[t->row[c]]));
}

static int core_of(const ncm_cpu_info *c)
{
        return c->core;
}

void ncm_topo_numa_of_cpus(const ncm_topo *t, const ncm_cpuset *cpus, ncm_cpuset *out)
{
        ids_of(t, cpus, numa_of, out);
}

void ncm_topo_sockets_of_cpus(const ncm_topo *t, const ncm_cpuset *cpus, ncm_cpuset *out)
{
        ids_of(t, cpus, socket_of, out);
}

void ncm_topo_cores_of_cpus(const ncm_topo *t, const ncm_cpuset *cpus, ncm_cpuset *out)
{
        ids_of(t, cpus, core_of, out);
}

void ncm_topo_uncore_of_cpus(const ncm_topo *t, const ncm_cpuset *cpus, ncm_cpuset *out)
{
        ids_of(t, cpus, uncore_of, out);
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
        return memcmp(a->numa_ids, b->numa_ids, a->nnuma * sizeof(*a->numa_ids)) == 0 &&
               memcmp(a->dist, b->dist, a->nnuma * a->nnuma * sizeof(*a->dist)) == 0;
}
