/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's table, built the way the kubelet builds it (spec §2.2a, checked against
 * google/cadvisor's utils/sysinfo and utils/sysfs): cadvisor's GetNodesInfo groups the CPUs
 * it finds in each NUMA node directory into cores and attaches caches to them, and the
 * kubelet's Discover flattens that into {cpu, core, socket, numa, uncore}. Every id is the
 * kernel's, as read.
 *
 * The steps, in cadvisor's order:
 *  - nodes in glob order ("node10" before "node2"); without any node directory, the CPUs are
 *    grouped by physical_package_id and each group is a "node" whose id is the package id;
 *  - per node, its CPUs in glob order: offline ones skipped, CPUs without core_id or
 *    physical_package_id skipped (and, on s390, without book_id or drawer_id); threads with the
 *    same (core_id, package[, book, drawer]) form a core;
 *  - per core, the caches of its first thread: a cache of level > 2 whose CPU count equals the
 *    node's cores times this core's threads is a node cache, any other is an uncore cache; when
 *    a thread's caches cannot be read, that core and the rest of its node get none;
 *  - the kubelet: core id = the lowest thread (a core listing a CPU twice is its error "cpus
 *    provided are not unique"), uncore = the first uncore cache's id or else the package id,
 *    and a CPU listed in several nodes keeps the last.
 *
 * No I/O here: the caches come through a callback, so sysfs and hwloc both feed this, and the
 * fuzz target can too.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topology.h>
#include "topology/topology-internal.h"

/* --- how Go reads a file ------------------------------------------------------------- */

/* Bytes of the Unicode space (unicode.IsSpace) that starts at S, 0 when none. */
static size_t space_at(const unsigned char *s, size_t len)
{
        if (len >= 1 && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')))
                return 1;
        if (len >= 2 && s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0))
                return 2;
        if (len >= 3 && s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80) /* U+1680 */
                return 3;
        if (len >= 3 && s[0] == 0xe2 && s[1] == 0x80 &&
            (s[2] <= 0x8a || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf) && s[2] >= 0x80)
                return 3; /* U+2000..200A, 2028, 2029, 202F */
        if (len >= 3 && s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f) /* U+205F */
                return 3;
        if (len >= 3 && s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80) /* U+3000 */
                return 3;
        return 0;
}

/* Bytes of the Unicode space that ends S[0..LEN), 0 when none. */
static size_t space_before(const unsigned char *s, size_t len)
{
        for (size_t k = 1; k <= 3 && k <= len; k++)
                if (space_at(s + len - k, k) == k)
                        return k;
        return 0;
}

void ncm__cad_trim(const char **s, size_t *len)
{
        size_t k;
        while ((k = space_at((const unsigned char *)*s, *len)) > 0) {
                *s += k;
                *len -= k;
        }
        while ((k = space_before((const unsigned char *)*s, *len)) > 0)
                *len -= k;
}

/* strconv.ParseUint(s, 10, 64) on exactly LEN bytes. */
static int parse_uint(const char *s, size_t len, uint64_t *ret)
{
        uint64_t v = 0;
        if (len == 0)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        *ret = v;
        return 0;
}

int ncm__cad_atoi(const char *s, size_t len, int64_t *ret)
{
        bool neg = false;
        uint64_t v;
        int r;

        ncm__cad_trim(&s, &len);
        if (len > 0 && (s[0] == '+' || s[0] == '-')) {
                neg = s[0] == '-';
                s++;
                len--;
        }
        r = parse_uint(s, len, &v);
        if (r < 0)
                return r;
        if (v > (uint64_t)INT64_MAX + (neg ? 1 : 0))
                return -ERANGE;
        *ret = neg ? (int64_t)(0 - v) : (int64_t)v;
        return 0;
}

bool ncm__cad_online(const char *s, size_t len, int cpu)
{
        const char *end;
        uint16_t id = (uint16_t)cpu; /* cadvisor's getCPUID */

        if (!s)
                return true;
        if (len == 0)
                return false;
        ncm__cad_trim(&s, &len);
        end = s + len;
        for (;;) {
                const char *comma = memchr(s, ',', (size_t)(end - s));
                const char *e = comma ? comma : end;
                const char *dash = memchr(s, '-', (size_t)(e - s));
                uint64_t lo, hi;

                if (dash) {
                        if (memchr(dash + 1, '-', (size_t)(e - dash - 1)))
                                return false; /* three parts */
                        if (parse_uint(s, (size_t)(dash - s), &lo) < 0 || lo > UINT16_MAX ||
                            parse_uint(dash + 1, (size_t)(e - dash - 1), &hi) < 0 ||
                            hi > UINT16_MAX || lo > hi)
                                return false;
                } else {
                        if (parse_uint(s, (size_t)(e - s), &lo) < 0 || lo > UINT16_MAX)
                                return false;
                        hi = lo;
                }
                if (id >= lo && id <= hi)
                        return true;
                if (!comma)
                        return false;
                s = comma + 1;
        }
}

bool ncm__cad_scan_int(const char **p, const char *end, bool is_unsigned, int64_t *ret)
{
        const char *s = *p;
        bool neg = false;
        uint64_t v = 0;
        size_t nd = 0;

        /* fmt's scanner skips spaces before a number; a newline there is an error */
        for (;;) {
                size_t k = space_at((const unsigned char *)s, (size_t)(end - s));
                if (k == 0)
                        break;
                if (*s == '\n' || (*s == '\r' && s + 1 < end && s[1] == '\n'))
                        return false;
                s += k;
        }
        if (!is_unsigned && s < end && (*s == '+' || *s == '-'))
                neg = *s++ == '-';
        for (; s < end && *s >= '0' && *s <= '9'; s++, nd++) {
                if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
                        return false;
                v = v * 10 + (uint64_t)(*s - '0');
        }
        if (nd == 0 || (!is_unsigned && v > (uint64_t)INT64_MAX + (neg ? 1 : 0)))
                return false;
        *ret = neg ? (int64_t)(0 - v) : (int64_t)v;
        *p = s;
        return true;
}

int ncm__cad_map_weight(const char *s, size_t len)
{
        const char *end = s + len;
        int n = 0;

        for (;;) {
                const char *comma = memchr(s, ',', (size_t)(end - s));
                const char *w = s;
                size_t wl = (size_t)((comma ? comma : end) - s);
                uint64_t v = 0;

                ncm__cad_trim(&w, &wl);
                if (wl == 0)
                        return -1;
                for (size_t i = 0; i < wl; i++) {
                        char c = w[i];
                        int d = c >= '0' && c <= '9'   ? c - '0'
                                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                       : -1;
                        if (d < 0 || v >> 60 != 0)
                                return -1;
                        v = v << 4 | (uint64_t)d;
                }
                n += __builtin_popcountll(v);
                if (!comma)
                        return n;
                s = comma + 1;
        }
}

int ncm__cad_distances(const char *s, size_t len, uint32_t *ret, size_t max)
{
        const char *end;
        size_t n = 0;

        ncm__cad_trim(&s, &len);
        end = s + len;
        for (;;) {
                const char *sp = memchr(s, ' ', (size_t)(end - s));
                const char *e = sp ? sp : end;
                uint64_t v;
                int r = parse_uint(s, (size_t)(e - s), &v);
                if (r < 0)
                        return r;
                if (v > UINT32_MAX)
                        return -ERANGE;
                if (n == max)
                        return -E2BIG;
                ret[n++] = (uint32_t)v;
                if (!sp)
                        return (int)n;
                s = sp + 1;
        }
}

/* Decimal digits of V (>= 0), most significant first; returns their count. */
static int digits_of(int v, char out[12])
{
        char tmp[12];
        int n = 0, k = 0;
        unsigned u = (unsigned)v;
        do {
                tmp[n++] = (char)('0' + u % 10);
                u /= 10;
        } while (u);
        while (n > 0)
                out[k++] = tmp[--n];
        return k;
}

int ncm__glob_cmp_int(const void *a, const void *b)
{
        return ncm__glob_cmp(*(const int *)a, *(const int *)b);
}

int ncm__glob_cmp_node(const void *a, const void *b)
{
        return ncm__glob_cmp(((const ncm__cad_node *)a)->id, ((const ncm__cad_node *)b)->id);
}

int ncm__glob_cmp(int a, int b)
{
        char x[12], y[12];
        int nx, ny;

        if (a < 0 || b < 0) {
                /* no directory is named so; keep a total order anyway */
                char sx[16], sy[16];
                snprintf(sx, sizeof(sx), "%d", a);
                snprintf(sy, sizeof(sy), "%d", b);
                return strcmp(sx, sy);
        }
        /* strcmp of the decimal names, without printing them (nodes are sorted often) */
        nx = digits_of(a, x);
        ny = digits_of(b, y);
        for (int i = 0; i < nx && i < ny; i++)
                if (x[i] != y[i])
                        return x[i] < y[i] ? -1 : 1;
        return (nx > ny) - (nx < ny);
}

typedef struct core {
        int64_t core_id, package;
        const char *book, *drawer;
        int *threads; /* in the order cadvisor appends them */
        size_t n;
        bool has_uncore;
        int64_t uncore;
} core;

typedef struct node_cores {
        core *c;
        size_t n;
} node_cores;

static void cores_done(node_cores *nc)
{
        for (size_t i = 0; i < nc->n; i++)
                free(nc->c[i].threads);
        free(nc->c);
        nc->c = NULL;
        nc->n = 0;
}

static const ncm__cad_cpu *find_cpu(const ncm__cad_machine *m, int cpu)
{
        size_t lo = 0, hi = m->ncpus;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (m->cpus[mid].cpu < cpu)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < m->ncpus && m->cpus[lo].cpu == cpu ? &m->cpus[lo] : NULL;
}

/* cadvisor's getCoresInfo over CPUS (glob order). */
static int cores_of(const ncm__cad_machine *m, const int *cpus, size_t n, node_cores *out)
{
        out->c = calloc(n ? n : 1, sizeof(*out->c));
        out->n = 0;
        if (!out->c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const ncm__cad_cpu *c = find_cpu(m, cpus[i]);
                core *k = NULL;
                if (!c || !c->online || !c->has_core || !c->has_package)
                        continue;
                if (m->s390 && (!c->has_book || !c->has_drawer))
                        continue;
                for (size_t j = 0; j < out->n && !k; j++) {
                        core *q = &out->c[j];
                        if (q->core_id == c->core_id && q->package == c->package &&
                            (!m->s390 ||
                             (strcmp(q->book, c->book) == 0 && strcmp(q->drawer, c->drawer) == 0)))
                                k = q;
                }
                if (!k) {
                        k = &out->c[out->n++];
                        *k = (core){c->core_id, c->package, c->book, c->drawer, NULL, 0, false, 0};
                        k->threads = malloc(n * sizeof(*k->threads));
                        if (!k->threads)
                                return -ENOMEM;
                }
                /* the kubelet's getUniqueCoreID refuses a core that lists a CPU twice */
                for (size_t t = 0; t < k->n; t++)
                        if (k->threads[t] == c->cpu)
                                return -EEXIST;
                k->threads[k->n++] = c->cpu;
        }
        return 0;
}

/* cadvisor's addCacheInfo: the uncore cache of each core, until a thread's caches fail. */
static int caches_of(const ncm__cad_machine *m, node_cores *nc, ncm_error *err)
{
        for (size_t i = 0; i < nc->n && m->caches; i++) {
                core *k = &nc->c[i];
                ncm__cad_cache *list = NULL;
                size_t n = 0, per_node = nc->n * k->n;
                int r = m->caches(m->caches_data, k->threads[0], &list, &n, err);
                if (r < 0)
                        return r;
                if (r > 0)
                        return 0;
                for (size_t j = 0; j < n && !k->has_uncore; j++)
                        if (list[j].level > 2 && (size_t)list[j].ncpus != per_node) {
                                k->has_uncore = true;
                                k->uncore = list[j].id;
                        }
                free(list);
        }
        return 0;
}

static int cmp_int(const void *a, const void *b)
{
        const int *x = a, *y = b;
        return (*x > *y) - (*x < *y);
}

/* A group of CPUs and the node id it stands for (a node directory or a package). */
typedef struct group {
        int id;
        int *cpus;
        size_t n;
        const ncm__cad_node *node; /* NULL for a package group */
} group;

/* Without node directories: CPUs grouped by package id, in glob order of their directories. */
static int package_groups(const ncm__cad_machine *m, group **ret, size_t *ret_n)
{
        int *order = malloc((m->ncpus ? m->ncpus : 1) * sizeof(*order));
        group *g = calloc(m->ncpus ? m->ncpus : 1, sizeof(*g));
        size_t ng = 0;

        if (!order || !g) {
                free(order);
                free(g);
                return -ENOMEM;
        }
        for (size_t i = 0; i < m->ncpus; i++)
                order[i] = m->cpus[i].cpu;
        qsort(order, m->ncpus, sizeof(*order), ncm__glob_cmp_int);
        for (size_t i = 0; i < m->ncpus; i++) {
                const ncm__cad_cpu *c = find_cpu(m, order[i]);
                group *q = NULL;
                if (!c->has_package)
                        continue;
                for (size_t k = 0; k < ng && !q; k++)
                        if (g[k].id == (int)c->package)
                                q = &g[k];
                if (!q) {
                        q = &g[ng++];
                        q->id = (int)c->package;
                        q->cpus = malloc(m->ncpus * sizeof(*q->cpus));
                        if (!q->cpus) {
                                for (size_t k = 0; k < ng; k++)
                                        free(g[k].cpus);
                                free(g);
                                free(order);
                                return -ENOMEM;
                        }
                }
                q->cpus[q->n++] = c->cpu;
        }
        free(order);
        *ret = g;
        *ret_n = ng;
        return 0;
}

/*
 * The distance matrix in ascending id order. A row of one entry per node is the kernel's own
 * form (one per online node, ascending) and is read so; another row is read as the kubelet
 * reads cadvisor's, indexed by node id (distances[a][b] is a's row at b), so that a row
 * written while a node was there ("21 10" for node 1 of a machine whose node 0 went) gives
 * node 1 its own 10. (For nodes 0..N-1 the two agree. On sparse ids the kubelet's lookup fails
 * past a row's end, so it cannot use prefer-closest-numa-nodes there; nodecm can.) An entry no
 * row gives takes the transposed entry, else 10 on the diagonal and 20 elsewhere.
 */
static int distances(const ncm__cad_machine *m, const int *ids, size_t n, uint32_t **ret)
{
        int64_t *d = malloc((n ? n * n : 1) * sizeof(*d));
        uint32_t *out = malloc((n ? n * n : 1) * sizeof(*out));

        if (!d || !out) {
                free(d);
                free(out);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n * n; i++)
                d[i] = -1;
        for (size_t k = 0; k < m->nnodes; k++) {
                const ncm__cad_node *nd = &m->nodes[k];
                size_t row = 0;
                while (row < n && ids[row] != nd->id)
                        row++;
                if (row == n || !nd->dist)
                        continue;
                for (size_t j = 0; j < n; j++) {
                        if (nd->ndist == n)
                                d[row * n + j] = nd->dist[j];
                        else if (m->kernel_rows && ids[j] >= 0 && (size_t)ids[j] < nd->ndist)
                                d[row * n + j] = nd->dist[ids[j]];
                }
        }
        ncm__topo_fill_distances(d, n, out);
        free(d);
        *ret = out;
        return 0;
}

int ncm__cad_assemble(const ncm__cad_machine *m, ncm_topo **ret, ncm_error *err)
{
        ncm_autofree group *g = NULL;
        size_t ng = 0, found = 0, nrow = 0;
        ncm_autofree ncm_cpu_info *table = NULL;
        ncm_autofree int32_t *row_of = NULL; /* CPU -> row in table, -1: not yet */
        ncm_autofree int *ids = NULL;
        ncm_autofree uint32_t *dist = NULL;
        int max_cpu = -1, r = 0;

        for (size_t i = 0; i < m->ncpus; i++)
                if (m->cpus[i].cpu > max_cpu)
                        max_cpu = m->cpus[i].cpu;
        for (size_t k = 0; k < m->nnodes; k++)
                for (size_t i = 0; i < m->nodes[k].ncpus; i++)
                        if (m->nodes[k].cpus[i] > max_cpu)
                                max_cpu = m->nodes[k].cpus[i];
        table = malloc((m->ncpus ? m->ncpus : 1) * sizeof(*table));
        row_of = malloc(((size_t)max_cpu + 2) * sizeof(*row_of));
        if (!table || !row_of)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (int c = 0; c <= max_cpu; c++)
                row_of[c] = -1;

        if (m->nnodes > 0) {
                g = calloc(m->nnodes, sizeof(*g));
                if (!g)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                for (size_t k = 0; k < m->nnodes; k++)
                        g[ng++] = (group){m->nodes[k].id, m->nodes[k].cpus, m->nodes[k].ncpus,
                                          &m->nodes[k]};
        } else if (package_groups(m, &g, &ng) < 0) {
                return ncm_error_set(err, ENOMEM, "out of memory");
        }

        for (size_t k = 0; k < ng && r >= 0; k++) {
                node_cores nc = {0};
                r = cores_of(m, g[k].cpus, g[k].n, &nc);
                if (r == -EEXIST) {
                        r = ncm_error_set(err, EINVAL, "cpus provided are not unique");
                } else if (r < 0) {
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                } else {
                        r = caches_of(m, &nc, err);
                }
                for (size_t i = 0; i < nc.n && r >= 0; i++) {
                        const core *q = &nc.c[i];
                        int lowest = q->threads[0];
                        for (size_t t = 1; t < q->n; t++)
                                if (q->threads[t] < lowest)
                                        lowest = q->threads[t];
                        found += q->n;
                        for (size_t t = 0; t < q->n; t++) {
                                int cpu = q->threads[t];
                                /* the kubelet's CPUDetails map: a later node overwrites */
                                if (row_of[cpu] < 0)
                                        row_of[cpu] = (int32_t)nrow++;
                                table[row_of[cpu]] = (ncm_cpu_info){
                                                .cpu = cpu,
                                                .core = lowest,
                                                .socket = (int)q->package,
                                                .numa = g[k].id,
                                                .uncore = q->has_uncore ? q->uncore : q->package};
                        }
                }
                cores_done(&nc);
        }
        if (m->nnodes == 0)
                for (size_t k = 0; k < ng; k++)
                        free(g[k].cpus);
        if (r < 0)
                return r;
        /* with node directories cadvisor's NumCores counts the threads it found */
        if (m->nnodes > 0 && found == 0)
                return ncm_error_set(err, EINVAL, "could not detect number of cpus");

        ids = malloc((ng ? ng : 1) * sizeof(*ids));
        if (!ids)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t k = 0; k < ng; k++)
                ids[k] = g[k].id;
        qsort(ids, ng, sizeof(*ids), cmp_int);
        if (distances(m, ids, ng, &dist) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = ncm_topo_new(table, nrow, ids, ng, m->nnodes ? dist : NULL, ret, err);
        if (r < 0)
                return r;
        /* cadvisor keeps a node's row as read: none without a `distance` file, and none for
         * the nodes it makes up when there are no node directories */
        for (size_t k = 0; m->kernel_rows && k < ng && r >= 0; k++) {
                const ncm__cad_node *row = NULL;
                for (size_t q = 0; q < m->nnodes && !row; q++)
                        if (m->nodes[q].id == ids[k] && m->nodes[q].dist)
                                row = &m->nodes[q];
                r = row ? ncm__topo_set_row(*ret, ids[k], row->dist, row->ndist)
                        : ncm__topo_mark_no_distances(*ret, ids[k]);
        }
        if (r < 0) {
                *ret = ncm_topo_free(*ret);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        return 0;
}
