/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Topology discovery from sysfs, with the kubelet's (cadvisor's) meaning of each id.
 *
 * Two stages: gather() reads every file through the root fd into an ncm__raw_machine of raw
 * values (one read(2) per file, paths as the kernel spells them), and ncm__topo_assemble()
 * applies the rules, without I/O, so the rules can be fuzzed and tested on hand-made inputs.
 *
 * Real dumps contradict themselves in many ways; every rule below is listed with its reason
 * in docs/topology.md. In short: a file that exists must parse (else the error names it); a
 * file that is missing has a documented fallback.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "base/fs-beneath.h"
#include "topology/topology-internal.h"

/* Largest sysfs file we read: a cpulist of 8192 CPUs in the worst (all odd) case. */
#define READ_MAX (64 * 1024)

/* --- pure parsers --- */

/* Length of S without trailing whitespace (NUL padding already ends the C string). */
static size_t trim_len(const char *s)
{
        size_t n = strlen(s);
        while (n > 0 &&
               (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
                n--;
        return n;
}

int ncm__sysfs_parse_int(const char *s, int *ret)
{
        size_t n = trim_len(s), i = 0;
        bool neg = false;
        long long v = 0;

        if (n > 0 && s[0] == '-') {
                neg = true;
                i = 1;
        }
        if (i == n)
                return -EINVAL;
        for (; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (s[i] - '0');
                if (v > (long long)INT_MAX + 1)
                        return -ERANGE;
        }
        if (neg)
                v = -v;
        if (v > INT_MAX || v < INT_MIN)
                return -ERANGE;
        *ret = (int)v;
        return 0;
}

int ncm__sysfs_parse_distances(const char *s, uint32_t *ret, size_t max)
{
        size_t n = trim_len(s), i = 0, count = 0;

        while (i < n) {
                long long v = 0;
                size_t start;
                while (i < n && (s[i] == ' ' || s[i] == '\t'))
                        i++;
                if (i == n)
                        break;
                start = i;
                while (i < n && s[i] >= '0' && s[i] <= '9') {
                        v = v * 10 + (s[i] - '0');
                        if (v > INT32_MAX)
                                return -ERANGE;
                        i++;
                }
                if (i == start || (i < n && s[i] != ' ' && s[i] != '\t'))
                        return -EINVAL;
                if (count == max)
                        return -E2BIG;
                ret[count++] = (uint32_t)v;
        }
        if (count == 0)
                return -EINVAL;
        return (int)count;
}

int ncm__sysfs_equals(const char *s, const char *want)
{
        size_t n = trim_len(s);
        return strlen(want) == n && memcmp(s, want, n) == 0;
}

/* --- assembly (pure) --- */

static int cmp_int(const void *a, const void *b)
{
        const int *x = a, *y = b;
        return (*x > *y) - (*x < *y);
}

/* Core grouping key: CPUs are threads of one core when every field is equal. */
typedef struct core_key {
        int64_t k[7];
        int cpu;
} core_key;

static int cmp_core_key(const void *a, const void *b)
{
        const core_key *x = a, *y = b;
        for (int i = 0; i < 7; i++)
                if (x->k[i] != y->k[i])
                        return x->k[i] < y->k[i] ? -1 : 1;
        return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* A group id keyed by a 2-part value, for renumbering by lowest CPU. */
typedef struct group_key {
        int64_t kind, value;
        int cpu;   /* lowest CPU of the group after the scan */
        size_t at; /* index into the CPU array */
} group_key;

static int cmp_group_key(const void *a, const void *b)
{
        const group_key *x = a, *y = b;
        if (x->kind != y->kind)
                return x->kind < y->kind ? -1 : 1;
        if (x->value != y->value)
                return x->value < y->value ? -1 : 1;
        return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/*
 * Give every CPU a dense id 0.. for its group (same kind and value), numbered in order of
 * each group's lowest CPU. KEYS is sorted in place; OUT[keys[i].at] receives the ids.
 */
static int renumber(group_key *keys, size_t n, int *out)
{
        group_key *firsts = malloc((n ? n : 1) * sizeof(*firsts));
        int *rank = malloc((n ? n : 1) * sizeof(*rank));
        size_t ngroups = 0;

        if (!firsts || !rank) {
                free(firsts);
                free(rank);
                return -ENOMEM;
        }
        qsort(keys, n, sizeof(*keys), cmp_group_key);
        /* keys are sorted by group then cpu: a group's first entry holds its lowest CPU */
        for (size_t i = 0; i < n; i++)
                if (i == 0 || keys[i].kind != keys[i - 1].kind ||
                    keys[i].value != keys[i - 1].value) {
                        firsts[ngroups] = (group_key){0, keys[i].cpu, keys[i].cpu, ngroups};
                        ngroups++;
                }
        qsort(firsts, ngroups, sizeof(*firsts), cmp_group_key);
        for (size_t g = 0; g < ngroups; g++)
                rank[firsts[g].at] = (int)g;
        for (size_t i = 0, g = 0; i < n; i++) {
                if (i > 0 &&
                    (keys[i].kind != keys[i - 1].kind || keys[i].value != keys[i - 1].value))
                        g++;
                out[keys[i].at] = rank[g];
        }
        free(firsts);
        free(rank);
        return 0;
}

static int assign_sockets(const ncm__raw_machine *m, int *socket)
{
        bool plain = true;
        group_key *keys;
        int r;

        for (size_t i = 0; i < m->ncpus; i++) {
                int64_t p = m->cpus[i].package;
                if (p == NCM__RAW_NONE || p < 0 || p >= NCM_CPUSET_MAX_CPUS)
                        plain = false;
        }
        if (plain) {
                for (size_t i = 0; i < m->ncpus; i++)
                        socket[i] = (int)m->cpus[i].package;
                return 0;
        }
        keys = malloc(m->ncpus * sizeof(*keys));
        if (!keys)
                return -ENOMEM;
        for (size_t i = 0; i < m->ncpus; i++) {
                const ncm__raw_cpu *c = &m->cpus[i];
                if (c->package != NCM__RAW_NONE)
                        keys[i] = (group_key){0, c->package, c->cpu, i};
                else if (c->package_first >= 0)
                        keys[i] = (group_key){1, c->package_first, c->cpu, i};
                else
                        keys[i] = (group_key){2, 0, c->cpu, i};
        }
        r = renumber(keys, m->ncpus, socket);
        free(keys);
        return r;
}

/* An L3 whose CPU set is unknown is taken as private to the CPU's core: no L3 is narrower
 * than a core, and hwloc reads such dumps the same way. */
static int64_t l3_first(const ncm__raw_cpu *c, int core)
{
        return c->l3_first >= 0 ? c->l3_first : core;
}

static int assign_uncore(const ncm__raw_machine *m, const int *socket, const int *core, int *uncore)
{
        bool by_first = false, plain = true;
        group_key *keys;
        size_t n = 0;
        int *ids;
        int r;

        /* One missing id file names every L3 by its lowest CPU, so the two kinds of name
         * can never collide. */
        for (size_t i = 0; i < m->ncpus; i++)
                if (m->cpus[i].has_l3 && m->cpus[i].l3_id == NCM__RAW_NONE)
                        by_first = true;
        for (size_t i = 0; i < m->ncpus; i++) {
                const ncm__raw_cpu *c = &m->cpus[i];
                int64_t v = by_first ? l3_first(c, core[i]) : c->l3_id;
                if (c->has_l3 && (v < 0 || v >= NCM_CPUSET_MAX_CPUS))
                        plain = false;
        }
        for (size_t i = 0; i < m->ncpus; i++) {
                const ncm__raw_cpu *c = &m->cpus[i];
                if (!c->has_l3)
                        uncore[i] = socket[i];
                else if (plain)
                        uncore[i] = (int)(by_first ? l3_first(c, core[i]) : c->l3_id);
        }
        if (plain)
                return 0;
        keys = malloc(m->ncpus * sizeof(*keys));
        ids = malloc(m->ncpus * sizeof(*ids));
        if (!keys || !ids) {
                free(keys);
                free(ids);
                return -ENOMEM;
        }
        for (size_t i = 0; i < m->ncpus; i++) {
                const ncm__raw_cpu *c = &m->cpus[i];
                if (c->has_l3)
                        keys[n++] = (group_key){0, by_first ? l3_first(c, core[i]) : c->l3_id,
                                                c->cpu, i};
        }
        /* renumber() writes by CPU index, so give it a full-size output array */
        r = renumber(keys, n, ids);
        if (r >= 0)
                for (size_t k = 0; k < n; k++)
                        uncore[keys[k].at] = ids[keys[k].at];
        free(keys);
        free(ids);
        return r;
}

/*
 * NUMA node of each CPU: the lowest node whose list holds it. CPUs no node lists go to one
 * extra node with the lowest id no directory uses. Returns the node list (ascending) in
 * *IDS / *NIDS and whether the extra node was made.
 */
static int assign_numa(const ncm__raw_machine *m, int *numa, int **ret_ids, size_t *ret_n,
                       int *ret_extra)
{
        int extra = -1;
        size_t n = m->nnodes;
        int *ids;

        for (size_t i = 0; i < m->ncpus; i++) {
                numa[i] = -1;
                if (m->nnodes == 0) {
                        numa[i] = 0;
                        continue;
                }
                for (size_t k = 0; k < m->nnodes && numa[i] < 0; k++)
                        if (m->nodes[k].cpus && ncm_cpuset_isset(m->nodes[k].cpus, m->cpus[i].cpu))
                                numa[i] = m->nodes[k].id;
                if (numa[i] < 0) {
                        if (extra < 0) {
                                /* nodes are ascending: the first gap is the lowest free id */
                                extra = 0;
                                for (size_t k = 0; k < m->nnodes && m->nodes[k].id == extra; k++)
                                        extra++;
                        }
                        numa[i] = extra;
                }
        }
        if (m->nnodes == 0 || extra >= 0)
                n++;
        ids = malloc(n * sizeof(*ids));
        if (!ids)
                return -ENOMEM;
        for (size_t k = 0; k < m->nnodes; k++)
                ids[k] = m->nodes[k].id;
        if (m->nnodes == 0)
                ids[0] = 0;
        else if (extra >= 0)
                ids[m->nnodes] = extra;
        qsort(ids, n, sizeof(*ids), cmp_int);
        *ret_ids = ids;
        *ret_n = n;
        *ret_extra = extra;
        return 0;
}

/*
 * Distances: the kernel prints one entry per online node, ascending. A row whose length is
 * the number of node directories maps onto them; one whose length also counts the extra node
 * (see assign_numa) maps onto the full list (a dump whose node0 directory was removed still
 * has node0 in its rows). Other rows are ignored. Unknown entries take the transposed entry
 * when known, else 10 on the diagonal and 20 elsewhere.
 */
static int build_distances(const ncm__raw_machine *m, const int *ids, size_t n, uint32_t **ret)
{
        int64_t *d = malloc(n * n * sizeof(*d));
        uint32_t *out = malloc(n * n * sizeof(*out));
        size_t *dir_pos = malloc((m->nnodes ? m->nnodes : 1) * sizeof(*dir_pos));
        if (!d || !out || !dir_pos) {
                free(d);
                free(out);
                free(dir_pos);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n * n; i++)
                d[i] = -1;
        /* position of each node directory in IDS */
        for (size_t k = 0, i = 0; k < m->nnodes; k++) {
                while (ids[i] != m->nodes[k].id)
                        i++;
                dir_pos[k] = i;
        }
        for (size_t k = 0; k < m->nnodes; k++) {
                const ncm__raw_node *node = &m->nodes[k];
                size_t row = dir_pos[k];
                if (!node->dist)
                        continue;
                if (node->ndist == m->nnodes)
                        for (size_t j = 0; j < m->nnodes; j++)
                                d[row * n + dir_pos[j]] = node->dist[j];
                else if (node->ndist == n)
                        for (size_t j = 0; j < n; j++)
                                d[row * n + j] = node->dist[j];
        }
        ncm__topo_fill_distances(d, n, out);
        free(d);
        free(dir_pos);
        *ret = out;
        return 0;
}

int ncm__topo_assemble(const ncm__raw_machine *m, ncm_topo **ret, ncm_error *err)
{
        size_t n = m->ncpus;
        ncm_autofree int *numa = NULL;
        ncm_autofree int *socket = NULL;
        ncm_autofree int *uncore = NULL;
        ncm_autofree int *core = NULL;
        ncm_autofree core_key *keys = NULL;
        ncm_autofree ncm_cpu_info *table = NULL;
        ncm_autofree int *ids = NULL;
        ncm_autofree uint32_t *dist = NULL;
        size_t nids = 0;
        int extra;

        if (n == 0)
                return ncm_error_set(err, EINVAL, "could not detect number of cpus");
        numa = malloc(n * sizeof(*numa));
        socket = malloc(n * sizeof(*socket));
        uncore = malloc(n * sizeof(*uncore));
        core = malloc(n * sizeof(*core));
        keys = malloc(n * sizeof(*keys));
        table = malloc(n * sizeof(*table));
        if (!numa || !socket || !uncore || !core || !keys || !table)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (assign_numa(m, numa, &ids, &nids, &extra) < 0 || assign_sockets(m, socket) < 0 ||
            build_distances(m, ids, nids, &dist) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");

        /* cadvisor groups threads by (node, package, core_id) (plus book and drawer on
         * s390); the kernel's thread_siblings_list splits the groups it disagrees with
         * (s390 and some Itanium report one core_id for several single-thread cores). */
        for (size_t i = 0; i < n; i++) {
                const ncm__raw_cpu *c = &m->cpus[i];
                bool known = c->core_id != NCM__RAW_NONE || c->thread_first >= 0;
                keys[i] = (core_key){{numa[i], socket[i], c->core_id, c->book, c->drawer,
                                      c->thread_first, known ? -1 : c->cpu},
                                     c->cpu};
        }
        qsort(keys, n, sizeof(*keys), cmp_core_key);
        for (size_t i = 0, first = 0; i < n; i++) {
                if (i > 0 && memcmp(keys[i].k, keys[i - 1].k, sizeof(keys[i].k)) != 0)
                        first = i;
                /* sorted by key then cpu: the group's first entry is its lowest CPU */
                table[i].cpu = keys[i].cpu;
                table[i].core = keys[first].cpu;
        }
        /* core of each CPU, by its index in m->cpus (which is ascending) */
        for (size_t i = 0; i < n; i++) {
                size_t lo = 0, hi = n;
                while (lo < hi) {
                        size_t mid = (lo + hi) / 2;
                        if (m->cpus[mid].cpu < table[i].cpu)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                core[lo] = table[i].core;
        }
        if (assign_uncore(m, socket, core, uncore) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        /* the table is ordered by core key: fill the rest from the per-CPU arrays */
        for (size_t i = 0; i < n; i++) {
                size_t lo = 0, hi = n;
                while (lo < hi) {
                        size_t mid = (lo + hi) / 2;
                        if (m->cpus[mid].cpu < table[i].cpu)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                table[i].socket = socket[lo];
                table[i].numa = numa[lo];
                table[i].uncore = uncore[lo];
        }
        (void)extra;
        return ncm_topo_new(table, n, ids, nids, dist, ret, err);
}

/* --- gathering (I/O) --- */

/* A directory the reader holds open: the paths under it are opened from it, a shorter walk
 * than from the root (base/fs-beneath.h). */
typedef struct reader_dir {
        int fd;
        size_t len; /* of PATH; 0: not held */
        char path[64];
} reader_dir;

/* What the reader holds, most specific first: the directory whose files are being read (a
 * NUMA node's, a CPU's topology), /sys/devices/system/node, /sys/devices/system/cpu. */
enum { DIR_LEAF, DIR_NODES, DIR_CPUS, DIR_N };

typedef struct reader {
        int rootfd;
        char *buf; /* READ_MAX bytes */
        char path[256];
        ncm_error *err;
        /* when set: files of one directory listed beforehand; a name of LISTED whose HAS is
         * false is absent without an open */
        const char *const *listed;
        const bool *has;
        reader_dir dirs[DIR_N];
} reader;

/*
 * rd->path = FMT with its %d (int) and %s conversions, the only ones the paths use: a
 * discovery builds a couple of thousand paths, and vsnprintf was a tenth of its time. A path
 * that does not fit is cut (as snprintf would; the open then fails naming it).
 */
static const char *fmt_path(reader *rd, const char *fmt, ...) NCM_PRINTF(2, 3);
static const char *fmt_path(reader *rd, const char *fmt, ...)
{
        char *out = rd->path, *end = rd->path + sizeof(rd->path) - 1;
        va_list ap;

        va_start(ap, fmt);
        for (const char *f = fmt; *f && out < end; f++) {
                if (f[0] == '%' && f[1] == 'd') {
                        char tmp[12];
                        int v = va_arg(ap, int), n = 0;
                        unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
                        do {
                                tmp[n++] = (char)('0' + u % 10);
                                u /= 10;
                        } while (u);
                        if (v < 0)
                                tmp[n++] = '-';
                        while (n > 0 && out < end)
                                *out++ = tmp[--n];
                        f++;
                } else if (f[0] == '%' && f[1] == 's') {
                        for (const char *a = va_arg(ap, const char *); *a && out < end; a++)
                                *out++ = *a;
                        f++;
                } else {
                        *out++ = *f;
                }
        }
        va_end(ap);
        *out = '\0';
        return rd->path;
}

/* rd->path below a directory the reader holds: its part below it, and *DIRFD; else NULL, -1. */
static const char *held_below(const reader *rd, int *dirfd)
{
        for (size_t i = 0; i < DIR_N; i++) {
                const reader_dir *d = &rd->dirs[i];
                const char *rel = d->len ? ncm__fs_below(rd->path, d->path, d->len) : NULL;
                if (rel) {
                        *dirfd = d->fd;
                        return rel;
                }
        }
        *dirfd = -1;
        return NULL;
}

/* ncm_fs_openat() of rd->path, from a held directory where one holds it. */
static int rd_open(const reader *rd, int flags, ncm_error *err)
{
        int dirfd;
        const char *rel = held_below(rd, &dirfd);
        return ncm__fs_openat_beneath(rd->rootfd, dirfd, rd->path, rel, flags, err);
}

/* ncm_fs_read() of rd->path into rd->buf, from a held directory where one holds it. */
static ssize_t rd_read(const reader *rd, ncm_error *err)
{
        int dirfd;
        const char *rel = held_below(rd, &dirfd);
        return ncm__fs_read_beneath(rd->rootfd, dirfd, rd->path, rel, rd->buf, READ_MAX, err);
}

static void release_dir(reader *rd, int k)
{
        if (rd->dirs[k].len)
                close(rd->dirs[k].fd);
        rd->dirs[k].len = 0;
}

/* Hold *FD (the directory rd->path) in slot K: the reader owns it then, and *FD is -1. A path
 * too long for the slot (none that sysfs has) is not held: its files are opened from the root. */
static void hold_dir(reader *rd, int k, int *fd)
{
        reader_dir *d = &rd->dirs[k];
        size_t len = strlen(rd->path);
        release_dir(rd, k);
        if (len >= sizeof(d->path))
                return;
        memcpy(d->path, rd->path, len + 1);
        d->fd = NCM_TAKE_FD(*fd);
        d->len = len;
}

static void release_dirs(reader *rd)
{
        for (int k = 0; k < DIR_N; k++)
                release_dir(rd, k);
}

/*
 * Read rd->path. 1 when read, 0 when absent, <0 with err set otherwise. An empty file (only
 * whitespace or NULs) counts as absent: gathering tools leave unreadable files empty (e.g.
 * the root-only cpuN/online of 128ia64-17n4s2c), and the kernel never writes an empty id.
 */
static int read_file(reader *rd)
{
        ncm_error e = NCM_ERROR_INIT;
        ssize_t n;

        if (rd->listed) {
                const char *base = strrchr(rd->path, '/');
                for (size_t i = 0; base && rd->listed[i]; i++)
                        if (strcmp(base + 1, rd->listed[i]) == 0 && !rd->has[i])
                                return 0;
        }
        n = rd_read(rd, &e);
        if (n == -ENOENT)
                return 0;
        if (n < 0) {
                if (rd->err)
                        *rd->err = e;
                return (int)n;
        }
        return trim_len(rd->buf) > 0;
}

static int bad_content(reader *rd, int r, const char *what)
{
        size_t n = trim_len(rd->buf);
        return ncm_error_set(rd->err, r == -ERANGE ? ERANGE : EINVAL, "%s: %s, got \"%.*s\"%s",
                             rd->path, what, (int)(n > 40 ? 40 : n), rd->buf, n > 40 ? "..." : "");
}

/* An integer file: 1 and *RET when present, 0 when absent. */
static int read_int(reader *rd, int *ret)
{
        int r = read_file(rd);
        if (r <= 0)
                return r;
        r = ncm__sysfs_parse_int(rd->buf, ret);
        if (r < 0)
                return bad_content(rd, r, "expected an integer");
        return 1;
}

/* A raw id attribute: the value, NCM__RAW_NONE when absent or negative (-1: unknown). */
static int read_id(reader *rd, int64_t *ret)
{
        int v = 0;
        int r = read_int(rd, &v);
        if (r < 0)
                return r;
        *ret = r == 0 || v < 0 ? NCM__RAW_NONE : v;
        return 0;
}

/* A cpulist file: 1 and *RET (new set) when present, 0 when absent. */
static int read_list(reader *rd, ncm_cpuset **ret)
{
        ncm_error e = NCM_ERROR_INIT;
        int r = read_file(rd);
        if (r <= 0)
                return r;
        r = ncm_cpuset_parse_sysfs_list(rd->buf, ret, &e);
        if (r < 0)
                return ncm_error_set(rd->err, -r, "%s: %s", rd->path, e.msg);
        return 1;
}

/* A cpumask file, as read_list. */
static int read_mask(reader *rd, ncm_cpuset **ret)
{
        ncm_error e = NCM_ERROR_INIT;
        int r = read_file(rd);
        if (r <= 0)
                return r;
        r = ncm_cpuset_parse_mask(rd->buf, ret, &e);
        if (r < 0)
                return ncm_error_set(rd->err, -r, "%s: %s", rd->path, e.msg);
        return 1;
}

/*
 * Lowest online CPU of the set CPU shares a topology level with (thread siblings, package
 * siblings, an L3's CPUs), from the first of FILES (under cpuN/DIR) that holds a set with CPU
 * in it; names ending in "_list" are cpulists, the others masks. A set must hold CPU itself:
 * hand-made dumps copy one CPU's stale _list to all CPUs while their masks are right
 * (64fake-4n2s2ca2c2t), and old kernels report an empty L3 mask (8ia64-2s2c2t). -1 when no
 * file gives a usable set.
 */
static int read_siblings(reader *rd, int cpu, const char *dir, const char *const *files,
                         const ncm_cpuset *online, int *ret)
{
        for (const char *const *f = files; *f; f++) {
                ncm_autoptr(ncm_cpuset) s = NULL;
                size_t len = strlen(*f);
                bool list = len > 5 && strcmp(*f + len - 5, "_list") == 0;
                int r;
                fmt_path(rd, "/sys/devices/system/cpu/cpu%d/%s/%s", cpu, dir, *f);
                r = list ? read_list(rd, &s) : read_mask(rd, &s);
                if (r < 0)
                        return r;
                if (r > 0 && ncm_cpuset_isset(s, cpu)) {
                        ncm_cpuset_and(s, s, online);
                        *ret = ncm_cpuset_first(s);
                        return 0;
                }
        }
        *ret = -1;
        return 0;
}

/* Kernels since 5.x name the sibling sets core_cpus / package_cpus; older ones
 * thread_siblings / core_siblings (still present as aliases). */
static const char *const thread_files[] = {"core_cpus_list", "core_cpus", "thread_siblings_list",
                                           "thread_siblings", NULL};
static const char *const package_files[] = {"package_cpus_list", "package_cpus",
                                            "core_siblings_list", "core_siblings", NULL};
static const char *const cache_files[] = {"shared_cpu_list", "shared_cpu_map", NULL};

/* "cpuN" / "nodeN" / "indexN" with N decimal: N, or -1 for other names (and -2 for N too
 * large to be an id). */
static int name_number(const char *name, const char *prefix)
{
        size_t pl = strlen(prefix);
        long v = 0;
        const char *p = name + pl;
        if (strncmp(name, prefix, pl) != 0 || *p == '\0')
                return -1;
        for (; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -1;
                if (v < INT_MAX / 10)
                        v = v * 10 + (*p - '0');
                else
                        v = INT_MAX;
        }
        return v >= NCM_CPUSET_MAX_CPUS ? -2 : (int)v;
}

/*
 * Numbers N of the "PREFIXN" entries of directory PATH, ascending (none for a NULL PREFIX). 0
 * entries when absent. Returns 1 when the directory was listed, 0 when it is absent.
 * Entries with N above the id maximum are an error when BIG_IS_ERROR, else skipped and
 * counted in *RET_BIG (may be NULL). WANT (NULL-terminated, may be NULL): names whose
 * presence in the same listing goes to HAS[i], so that a file the listing shows absent is
 * never opened. HOLD (a DIR_* slot, or -1): keep the directory open there, so that the files
 * read under it next are opened from it.
 */
static int list_dir(reader *rd, const char *prefix, bool big_is_error, int **ret, size_t *ret_n,
                    int *ret_big, const char *const *want, bool *has, int hold);

static int list_numbered(reader *rd, const char *prefix, bool big_is_error, int **ret,
                         size_t *ret_n, int *ret_big)
{
        int r = list_dir(rd, prefix, big_is_error, ret, ret_n, ret_big, NULL, NULL, -1);
        return r < 0 ? r : 0;
}

/*
 * Each entry of the directory FD, by name, to FN: getdents64 on the fd, no DIR (its buffer
 * allocation, fcntl and fstat) per listing. FN's negative return stops the walk and is
 * returned; a failed getdents64 is -errno.
 */
static int each_entry(int fd, int (*fn)(void *data, const char *name), void *data)
{
        _Alignas(8) char buf[8192];
        long got;

        while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
                for (long off = 0; off < got;) {
                        struct dirent64 *de = (struct dirent64 *)(void *)(buf + off);
                        int r;
                        off += de->d_reclen;
                        if ((r = fn(data, de->d_name)) < 0)
                                return r;
                }
        }
        return got < 0 ? -errno : 0;
}

/* Open the directory rd->path for a listing: its fd, -ENOENT when absent (no error set), or
 * -errno with rd->err set. */
static int open_listing(reader *rd)
{
        /* the message only when it is one: a directory that is absent is common (a core's
         * cache), and formatting its message cost more than the failed open */
        int fd = rd_open(rd, O_RDONLY | O_DIRECTORY, NULL);

        if (fd < 0 && fd != -ENOENT)
                return ncm_error_errno(rd->err, -fd, "open '%s'", rd->path);
        return fd;
}

typedef struct listing {
        reader *rd;
        const char *prefix;
        bool big_is_error;
        int *big;
        const char *const *want;
        bool *has;
        int *v;
        size_t n, cap;
        bool failed; /* list_one's own error, set in rd->err */
} listing;

static int list_one(void *data, const char *name)
{
        listing *l = data;
        int k = l->prefix ? name_number(name, l->prefix) : -1;

        for (size_t w = 0; l->want && l->want[w]; w++)
                if (strcmp(name, l->want[w]) == 0)
                        l->has[w] = true;
        if (k == -2 && l->big)
                (*l->big)++;
        if (k == -2 && l->big_is_error) {
                l->failed = true;
                return ncm_error_set(l->rd->err, ERANGE, "%s/%s: id above the maximum of %d",
                                     l->rd->path, name, NCM_CPUSET_MAX_CPUS - 1);
        }
        if (k < 0)
                return 0;
        if (l->n == l->cap) {
                int *nv = realloc(l->v, (l->cap = l->cap ? l->cap * 2 : 64) * sizeof(*nv));
                if (!nv) {
                        l->failed = true;
                        return ncm_error_set(l->rd->err, ENOMEM, "out of memory");
                }
                l->v = nv;
        }
        l->v[l->n++] = k;
        return 0;
}

static int list_dir(reader *rd, const char *prefix, bool big_is_error, int **ret, size_t *ret_n,
                    int *ret_big, const char *const *want, bool *has, int hold)
{
        listing l = {rd, prefix, big_is_error, ret_big, want, has, NULL, 0, 0, false};
        ncm_autoclose int fd = -1;
        int listfd, r;

        *ret = NULL;
        *ret_n = 0;
        if (ret_big)
                *ret_big = 0;
        for (size_t w = 0; want && want[w]; w++)
                has[w] = false;
        fd = open_listing(rd);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        listfd = fd;
        if (hold >= 0)
                hold_dir(rd, hold, &fd); /* the reader closes it now */
        r = each_entry(listfd, list_one, &l);
        if (r < 0 && !l.failed)
                r = ncm_error_errno(rd->err, -r, "read directory '%s'", rd->path);
        if (r < 0) {
                free(l.v);
                return r;
        }
        if (l.n)
                qsort(l.v, l.n, sizeof(*l.v), cmp_int);
        *ret = l.v;
        *ret_n = l.n;
        return 1;
}

/* The online CPUs that have a directory. */
static int gather_online(reader *rd, ncm_cpuset **ret)
{
        static const char *const online_file[] = {"online", NULL};
        bool has_online = false;
        ncm_autofree int *dirs = NULL;
        size_t ndirs = 0;
        ncm_autoptr(ncm_cpuset) present = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) online = NULL;
        int big = 0;
        int r;

        if (!present)
                return ncm_error_set(rd->err, ENOMEM, "out of memory");
        fmt_path(rd, "/sys/devices/system/cpu");
        r = list_dir(rd, "cpu", false, &dirs, &ndirs, &big, online_file, &has_online, DIR_CPUS);
        if (r < 0)
                return r;
        if (ndirs == 0)
                return ncm_error_set(rd->err, ENOENT,
                                     "/sys/devices/system/cpu: no cpuN directory (not a sysfs "
                                     "tree with CPU topology)");
        for (size_t i = 0; i < ndirs; i++)
                (void)ncm_cpuset_set(present, dirs[i]);

        fmt_path(rd, "/sys/devices/system/cpu/online");
        r = has_online ? read_list(rd, &online) : 0;
        if (r < 0)
                return r;
        if (r == 0) {
                /* No global list (old or hand-made dumps): each CPU's own online file, and
                 * a CPU without one (cpu0 usually cannot be offlined) is online. With a
                 * global list, its parser refuses ids above the maximum by itself. */
                if (big)
                        return ncm_error_set(rd->err, ERANGE,
                                             "/sys/devices/system/cpu: %d cpuN director%s with N "
                                             "above the maximum CPU id %d",
                                             big, big == 1 ? "y" : "ies", NCM_CPUSET_MAX_CPUS - 1);
                online = ncm_cpuset_new();
                if (!online)
                        return ncm_error_set(rd->err, ENOMEM, "out of memory");
                for (size_t i = 0; i < ndirs; i++) {
                        int v = 1;
                        fmt_path(rd, "/sys/devices/system/cpu/cpu%d/online", dirs[i]);
                        r = read_int(rd, &v);
                        if (r < 0)
                                return r;
                        if (r > 0 && v != 0 && v != 1)
                                return bad_content(rd, -EINVAL, "expected 0 or 1");
                        if (v)
                                (void)ncm_cpuset_set(online, dirs[i]);
                }
        }
        ncm_cpuset_and(online, online, present);
        if (ncm_cpuset_is_empty(online))
                return ncm_error_set(rd->err, EINVAL,
                                     "/sys/devices/system/cpu: no online CPU has a directory");
        *ret = NCM_TAKE_PTR(online);
        return 0;
}

static int gather_l3(reader *rd, ncm__raw_cpu *c, const ncm_cpuset *online)
{
        ncm_autofree int *idx = NULL;
        size_t nidx = 0;
        int r;

        c->has_l3 = false;
        c->l3_id = NCM__RAW_NONE;
        c->l3_first = -1;
        fmt_path(rd, "/sys/devices/system/cpu/cpu%d/cache", c->cpu);
        r = list_numbered(rd, "index", false, &idx, &nidx, NULL);
        if (r < 0)
                return r;
        /* L3 is not always index3 (Itanium has it at index4): check each level file. */
        for (size_t k = 0; k < nidx; k++) {
                int level = 0, first = -1;
                fmt_path(rd, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", c->cpu, idx[k]);
                r = read_int(rd, &level);
                if (r < 0)
                        return r;
                if (r == 0 || level != 3)
                        continue;
                c->has_l3 = true;
                fmt_path(rd, "/sys/devices/system/cpu/cpu%d/cache/index%d/id", c->cpu, idx[k]);
                r = read_id(rd, &c->l3_id);
                if (r < 0)
                        return r;
                {
                        char dir[32];
                        snprintf(dir, sizeof(dir), "cache/index%d", idx[k]);
                        r = read_siblings(rd, c->cpu, dir, cache_files, online, &first);
                        if (r < 0)
                                return r;
                }
                c->l3_first = first;
                return 0;
        }
        return 0;
}

/* The topology files gather_cpu() may read: one listing says which exist (no failed opens
 * for the alternatives a kernel does not have). */
static const char *const topology_files[] = {"physical_package_id",
                                             "core_id",
                                             "book_id",
                                             "drawer_id",
                                             "core_cpus_list",
                                             "core_cpus",
                                             "thread_siblings_list",
                                             "thread_siblings",
                                             "package_cpus_list",
                                             "package_cpus",
                                             "core_siblings_list",
                                             "core_siblings",
                                             NULL};

static int gather_topology(reader *rd, ncm__raw_cpu *c, const ncm_cpuset *online);

static int gather_cpu(reader *rd, ncm__raw_cpu *c, const ncm_cpuset *online)
{
        bool has[NCM_ELEMENTSOF(topology_files) - 1];
        ncm_autofree int *none = NULL;
        size_t nnone = 0;
        int r;

        fmt_path(rd, "/sys/devices/system/cpu/cpu%d/topology", c->cpu);
        r = list_dir(rd, NULL, false, &none, &nnone, NULL, topology_files, has, DIR_LEAF);
        if (r < 0)
                return r;
        rd->listed = topology_files;
        rd->has = has;
        r = gather_topology(rd, c, online);
        rd->listed = NULL;
        rd->has = NULL;
        release_dir(rd, DIR_LEAF);
        if (r < 0)
                return r;
        return gather_l3(rd, c, online);
}

static int gather_topology(reader *rd, ncm__raw_cpu *c, const ncm_cpuset *online)
{
        int r;
        int cpu = c->cpu;

        fmt_path(rd, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
        if ((r = read_id(rd, &c->package)) < 0)
                return r;
        fmt_path(rd, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
        if ((r = read_id(rd, &c->core_id)) < 0)
                return r;
        fmt_path(rd, "/sys/devices/system/cpu/cpu%d/topology/book_id", cpu);
        if ((r = read_id(rd, &c->book)) < 0)
                return r;
        fmt_path(rd, "/sys/devices/system/cpu/cpu%d/topology/drawer_id", cpu);
        if ((r = read_id(rd, &c->drawer)) < 0)
                return r;
        if ((r = read_siblings(rd, cpu, "topology", thread_files, online, &c->thread_first)) < 0)
                return r;
        return read_siblings(rd, cpu, "topology", package_files, online, &c->package_first);
}

static int gather_node(reader *rd, ncm__raw_node *node);

static int gather_nodes(reader *rd, ncm__raw_machine *m)
{
        ncm_autofree int *ids = NULL;
        size_t n = 0;
        int r;

        fmt_path(rd, "/sys/devices/system/node");
        r = list_dir(rd, "node", true, &ids, &n, NULL, NULL, NULL, DIR_NODES);
        if (r < 0 || n == 0)
                return r < 0 ? r : 0;
        m->nodes = calloc(n, sizeof(*m->nodes));
        if (!m->nodes)
                return ncm_error_set(rd->err, ENOMEM, "out of memory");
        m->nnodes = n;
        for (size_t k = 0; k < n; k++) {
                static const char *const files[] = {"cpulist", "cpumap", "distance", NULL};
                bool has[3];
                ncm_autofree int *none = NULL;
                size_t nnone = 0;
                ncm__raw_node *node = &m->nodes[k];
                node->id = ids[k];
                /* one listing says which of the node's files exist */
                fmt_path(rd, "/sys/devices/system/node/node%d", node->id);
                r = list_dir(rd, NULL, false, &none, &nnone, NULL, files, has, DIR_LEAF);
                if (r < 0)
                        return r;
                rd->listed = files;
                rd->has = has;
                r = gather_node(rd, node);
                rd->listed = NULL;
                rd->has = NULL;
                release_dir(rd, DIR_LEAF);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int gather_node(reader *rd, ncm__raw_node *node)
{
        int r;
        fmt_path(rd, "/sys/devices/system/node/node%d/cpulist", node->id);
        r = read_list(rd, &node->cpus);
        if (r < 0)
                return r;
        if (r == 0) {
                fmt_path(rd, "/sys/devices/system/node/node%d/cpumap", node->id);
                r = read_mask(rd, &node->cpus);
                if (r < 0)
                        return r;
        }
        fmt_path(rd, "/sys/devices/system/node/node%d/distance", node->id);
        r = read_file(rd);
        if (r < 0)
                return r;
        if (r > 0 && trim_len(rd->buf) > 0) {
                size_t max = strlen(rd->buf) / 2 + 1; /* a distance per two bytes at most */
                node->dist = malloc(max * sizeof(*node->dist));
                if (!node->dist)
                        return ncm_error_set(rd->err, ENOMEM, "out of memory");
                r = ncm__sysfs_parse_distances(rd->buf, node->dist, max);
                if (r < 0)
                        return bad_content(rd, r, "expected distances");
                node->ndist = (size_t)r;
        }
        return 0;
}

static void machine_done(ncm__raw_machine *m)
{
        for (size_t k = 0; k < m->nnodes; k++) {
                ncm_cpuset_free(m->nodes[k].cpus);
                free(m->nodes[k].dist);
        }
        free(m->nodes);
        free(m->cpus);
}

/* nodecm's friendlier rules (`--topology-rules nodecm`). */
static int discover_nodecm(int rootfd, ncm_topo **ret, ncm_error *err)
{
        ncm__raw_machine m = {0};
        ncm_autoptr(ncm_cpuset) online = NULL;
        ncm_autofree char *buf = malloc(READ_MAX);
        reader rd = {.rootfd = rootfd, .buf = buf, .err = err};
        size_t i = 0;
        int r;

        if (!buf)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = gather_online(&rd, &online);
        if (r < 0)
                goto out;
        m.ncpus = (size_t)ncm_cpuset_weight(online);
        m.cpus = calloc(m.ncpus, sizeof(*m.cpus));
        if (!m.cpus) {
                r = ncm_error_set(err, ENOMEM, "out of memory");
                goto out;
        }
        NCM_CPUSET_FOREACH(cpu, online)
        {
                m.cpus[i].cpu = cpu;
                r = gather_cpu(&rd, &m.cpus[i], online);
                if (r < 0)
                        goto out;
                i++;
        }
        r = gather_nodes(&rd, &m);
        if (r < 0)
                goto out;
        r = ncm__topo_assemble(&m, ret, err);
out:
        release_dirs(&rd);
        machine_done(&m);
        return r;
}

/* ------------------------------------------------------------------------------------------
 * cadvisor's rules (the default): gathering what cadvisor reads, and only that. The layout
 * decides what is opened: CPUs come from the node directories' cpuM entries (listed, not
 * probed), a node's cpulist is read only when it has no such entry, the per-CPU files only
 * for online CPUs in a node, s390's book_id and drawer_id only on s390, and caches only for
 * each core's first thread, stopping at the first file cadvisor would fail on.
 */

/* What cadvisor's Atoi makes of the file at rd->path: *HAS false when it does not exist. An
 * empty or malformed file is an error, as it is for cadvisor (and so for the kubelet). */
static int read_atoi(reader *rd, bool *has, int64_t *ret)
{
        ncm_error e = NCM_ERROR_INIT;
        ssize_t n = rd_read(rd, &e);
        int r;

        *has = false;
        if (n == -ENOENT)
                return 0;
        if (n < 0) {
                if (rd->err)
                        *rd->err = e;
                return (int)n;
        }
        r = ncm__cad_atoi(rd->buf, (size_t)n, ret);
        if (r < 0)
                return bad_content(rd, r, "expected an integer");
        *has = true;
        return 0;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The "index*" names of a cache directory. */
typedef struct index_names {
        char **v;
        size_t n, cap;
} index_names;

static int add_index_name(void *data, const char *name)
{
        index_names *nm = data;
        if (strncmp(name, "index", 5) != 0)
                return 0;
        if (nm->n == nm->cap) {
                char **nv = realloc(nm->v, (nm->cap = nm->cap ? nm->cap * 2 : 8) * sizeof(*nv));
                if (!nv)
                        return -ENOMEM;
                nm->v = nv;
        }
        if (!(nm->v[nm->n] = strdup(name)))
                return -ENOMEM;
        nm->n++;
        return 0;
}

/*
 * cadvisor's GetCacheInfo for CPU: every cache/index* entry in name order, each with id,
 * size ("%dK"), level, type and shared_cpu_map; the ones of level > 2 are returned. 1 when
 * any of it is missing or unparsable (cadvisor then drops the caches of the node's remaining
 * cores), 0 done, -ENOMEM.
 */
static int cad_caches(void *data, int cpu, ncm__cad_cache **ret, size_t *ret_n, ncm_error *err)
{
        reader rd = *(reader *)data;
        index_names nm = {NULL, 0, 0};
        char **names;
        size_t n, out = 0;
        ncm__cad_cache *list = NULL;
        int r = 1, fd;

        rd.err = NULL; /* cadvisor ignores these errors */
        *ret = NULL;
        *ret_n = 0;
        fmt_path(&rd, "/sys/devices/system/cpu/cpu%d/cache", cpu);
        fd = open_listing(&rd);
        if (fd < 0)
                return 1;
        r = each_entry(fd, add_index_name, &nm);
        close(fd);
        names = nm.v;
        n = nm.n;
        if (r == -ENOMEM)
                goto oom;
        r = 1; /* a listing cut short is what readdir gave cadvisor */
        qsort(names, n, sizeof(*names), cmp_str);
        list = calloc(n ? n : 1, sizeof(*list));
        if (!list)
                goto oom;
        for (size_t i = 0; i < n; i++) {
                static const char *const files[] = {"id", "size", "level", "type",
                                                    "shared_cpu_map"};
                int64_t v[3] = {0, 0, 0};
                int weight = 0;
                for (size_t f = 0; f < NCM_ELEMENTSOF(files); f++) {
                        const char *p = rd.buf;
                        ssize_t len;
                        fmt_path(&rd, "/sys/devices/system/cpu/cpu%d/cache/%s/%s", cpu, names[i],
                                 files[f]);
                        len = rd_read(&rd, NULL);
                        if (len < 0)
                                goto done;
                        if (f < 3 && !ncm__cad_scan_int(&p, rd.buf + len, f == 1, &v[f]))
                                goto done;
                        if (f == 1 && (p == rd.buf + len || *p != 'K'))
                                goto done;
                        if (f == 4 && (weight = ncm__cad_map_weight(rd.buf, (size_t)len)) < 0)
                                goto done;
                }
                if (v[2] > 2)
                        list[out++] = (ncm__cad_cache){v[0], v[2], weight};
        }
        r = 0;
        *ret = list;
        *ret_n = out;
        list = NULL;
done:
        free(list);
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return r;
oom:
        r = ncm_error_set(err, ENOMEM, "out of memory");
        goto done;
}

/* A NUMA node directory name's number ("node36"), kept whatever its size; -1 for others. */
static int64_t node_number(const char *name)
{
        int64_t v = 0;
        const char *p = name + 4;
        if (strncmp(name, "node", 4) != 0 || !*p)
                return -1;
        for (; *p; p++) {
                if (*p < '0' || *p > '9' || v > INT32_MAX / 10)
                        return -1;
                v = v * 10 + (*p - '0');
        }
        return v;
}

/* A node's CPUs: its cpuM entries, or else its cpulist / cpumap (dumps without the links);
 * what its listing shows of its memory goes to *MEM (its id set when it was listed). */
static int cad_node_cpus(reader *rd, ncm__cad_node *nd, ncm__mem_listed *mem)
{
        /* and what its memory is read from (ncm__topo_read_memory_listed) */
        static const char *const files[] = {"cpulist", "cpumap",    "distance",
                                            "meminfo", "hugepages", NULL};
        bool has[5];
        ncm_autoptr(ncm_cpuset) s = NULL;
        ncm_error e = NCM_ERROR_INIT;
        ssize_t n;
        size_t max;
        int r = 0;

        /* one listing says which CPUs and which of the files below exist */
        fmt_path(rd, "/sys/devices/system/node/node%d", nd->id);
        r = list_dir(rd, "cpu", true, &nd->cpus, &nd->ncpus, NULL, files, has, DIR_LEAF);
        if (r < 0)
                return r;
        *mem = (ncm__mem_listed){r > 0 ? nd->id : -1, has[3], has[4]};
        r = 0;
        if (nd->ncpus == 0 && (has[0] || has[1])) {
                if (has[0]) {
                        fmt_path(rd, "/sys/devices/system/node/node%d/cpulist", nd->id);
                        r = read_list(rd, &s);
                }
                if (r == 0 && has[1]) {
                        fmt_path(rd, "/sys/devices/system/node/node%d/cpumap", nd->id);
                        r = read_mask(rd, &s);
                }
                if (r < 0)
                        return r;
                if (r > 0) {
                        free(nd->cpus);
                        nd->cpus = malloc(((size_t)ncm_cpuset_weight(s) + 1) * sizeof(int));
                        if (!nd->cpus)
                                return ncm_error_set(rd->err, ENOMEM, "out of memory");
                        NCM_CPUSET_FOREACH(c, s)
                        {
                                nd->cpus[nd->ncpus++] = c;
                        }
                }
        }
        qsort(nd->cpus, nd->ncpus, sizeof(int), ncm__glob_cmp_int);
        if (!has[2])
                return 0; /* cadvisor: no distances for this node */
        fmt_path(rd, "/sys/devices/system/node/node%d/distance", nd->id);
        n = rd_read(rd, &e);
        if (n == -ENOENT)
                return 0;
        if (n < 0) {
                if (rd->err)
                        *rd->err = e;
                return (int)n;
        }
        /* at most one distance per two bytes */
        max = (size_t)n / 2 + 1;
        nd->dist = malloc(max * sizeof(*nd->dist));
        if (!nd->dist)
                return ncm_error_set(rd->err, ENOMEM, "out of memory");
        r = ncm__cad_distances(rd->buf, (size_t)n, nd->dist, max);
        if (r < 0)
                return bad_content(rd, r, "expected distances");
        nd->ndist = (size_t)r;
        return 0;
}

typedef struct node_list {
        ncm__cad_machine *m;
        size_t cap;
} node_list;

static int add_node(void *data, const char *name)
{
        node_list *l = data;
        ncm__cad_machine *m = l->m;
        int64_t id = node_number(name);

        if (id < 0)
                return 0;
        if (m->nnodes == l->cap) {
                ncm__cad_node *nn =
                                realloc(m->nodes, (l->cap = l->cap ? l->cap * 2 : 8) * sizeof(*nn));
                if (!nn)
                        return -ENOMEM;
                m->nodes = nn;
        }
        m->nodes[m->nnodes++] = (ncm__cad_node){.id = (int)id};
        return 0;
}

/* The node directories into M, and *MEM: what each one's listing showed of its memory (in
 * M's order, *MEM's ids -1 for a directory that could not be listed). */
static int cad_nodes(reader *rd, ncm__cad_machine *m, ncm__mem_listed **mem)
{
        node_list l = {m, 0};
        int fd, r;

        fmt_path(rd, "/sys/devices/system/node");
        fd = open_listing(rd);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        /* the nodes' files are opened from it */
        r = each_entry(fd, add_node, &l);
        hold_dir(rd, DIR_NODES, &fd);
        if (fd >= 0)
                close(fd);
        if (r == -ENOMEM)
                return ncm_error_set(rd->err, ENOMEM, "out of memory");
        /* (a listing cut short is what readdir gave cadvisor) */
        /* cadvisor's glob order: by name, "node10" before "node2" */
        qsort(m->nodes, m->nnodes, sizeof(*m->nodes), ncm__glob_cmp_node);
        *mem = calloc(m->nnodes ? m->nnodes : 1, sizeof(**mem));
        if (!*mem)
                return ncm_error_set(rd->err, ENOMEM, "out of memory");
        for (size_t k = 0; k < m->nnodes; k++) {
                r = cad_node_cpus(rd, &m->nodes[k], &(*mem)[k]);
                release_dir(rd, DIR_LEAF);
                if (r < 0)
                        return r;
        }
        return 0;
}

/*
 * The machine's online list as cadvisor's IsCPUOnline reads it, for ncm__cad_online: *RET
 * NULL when the file does not exist (every CPU online); a file it cannot read counts as empty
 * (every CPU offline), but for one too big for nodecm to read, which is an error.
 */
static int cad_online(reader *rd, char **ret, size_t *ret_len)
{
        ncm_error e = NCM_ERROR_INIT;
        ssize_t n;

        *ret = NULL;
        *ret_len = 0;
        fmt_path(rd, "/sys/devices/system/cpu/online");
        n = rd_read(rd, &e);
        if (n == -ENOENT)
                return 0;
        if (n == -EFBIG || n == -ENOMEM) {
                if (rd->err)
                        *rd->err = e;
                return (int)n;
        }
        if (n < 0)
                n = 0;
        *ret = malloc((size_t)n + 1);
        if (!*ret)
                return ncm_error_set(rd->err, ENOMEM, "out of memory");
        memcpy(*ret, rd->buf, (size_t)n);
        *ret_len = (size_t)n;
        return 0;
}

static void cad_done(ncm__cad_machine *m)
{
        for (size_t i = 0; i < m->ncpus; i++) {
                free(m->cpus[i].book);
                free(m->cpus[i].drawer);
        }
        for (size_t k = 0; k < m->nnodes; k++) {
                free(m->nodes[k].cpus);
                free(m->nodes[k].dist);
        }
        free(m->nodes);
        free(m->cpus);
}

/* C's physical_package_id: an int, as the table's socket and NUMA ids are (the kernel prints
 * ints; Go's would hold more). */
static int cad_package(reader *rd, ncm__cad_cpu *c)
{
        int r;
        fmt_path(rd, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c->cpu);
        r = read_atoi(rd, &c->has_package, &c->package);
        if (r == 0 && c->has_package && (c->package < INT_MIN || c->package > INT_MAX))
                return ncm_error_set(rd->err, ERANGE, "%s: %" PRId64 " is out of range", rd->path,
                                     c->package);
        return r;
}

/* The trimmed text of rd->path into *RET (NULL when the file does not exist). */
static int read_text(reader *rd, char **ret)
{
        ncm_error e = NCM_ERROR_INIT;
        ssize_t n = rd_read(rd, &e);
        const char *s = rd->buf;
        size_t len;

        *ret = NULL;
        if (n == -ENOENT)
                return 0;
        if (n < 0) {
                if (rd->err)
                        *rd->err = e;
                return (int)n;
        }
        len = (size_t)n;
        ncm__cad_trim(&s, &len);
        *ret = strndup(s, len);
        return *ret ? 0 : ncm_error_set(rd->err, ENOMEM, "out of memory");
}

/* The s390 ids of C: cadvisor built for s390x reads book_id and drawer_id and compares them as
 * text; nodecm recognises s390 by the first such CPU's book_id. */
static int cad_s390(reader *rd, ncm__cad_machine *m, ncm__cad_cpu *c, bool *probed)
{
        int r;
        if (!*probed) {
                int fd;
                fmt_path(rd, "/sys/devices/system/cpu/cpu%d/topology/book_id", c->cpu);
                fd = rd_open(rd, O_PATH, NULL); /* ncm_fs_exists(), from the CPU directory */
                m->s390 = fd >= 0;
                if (fd >= 0)
                        close(fd);
                *probed = true;
        }
        if (!m->s390)
                return 0;
        fmt_path(rd, "/sys/devices/system/cpu/cpu%d/topology/book_id", c->cpu);
        if ((r = read_text(rd, &c->book)) < 0 || !c->book)
                return r;
        c->has_book = true;
        fmt_path(rd, "/sys/devices/system/cpu/cpu%d/topology/drawer_id", c->cpu);
        if ((r = read_text(rd, &c->drawer)) < 0)
                return r;
        c->has_drawer = c->drawer != NULL;
        return 0;
}

/* cadvisor reads each node's memory with its CPUs (GetNodesInfo): from what the node
 * listings showed (MEM, N entries, those of id -1 not listed), after the table is built (as
 * ncm_topo_read_memory_sysfs() would). */
static int cad_memory(reader *rd, ncm__mem_listed *mem, size_t n, ncm_topo *t)
{
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                if (mem[i].id >= 0)
                        mem[k++] = mem[i];
        return ncm__topo_read_memory_listed(t, rd->rootfd,
                                            rd->dirs[DIR_NODES].len ? rd->dirs[DIR_NODES].fd : -1,
                                            mem, k, rd->err);
}

static int discover_cadvisor(int rootfd, ncm_topo **ret, ncm_error *err)
{
        ncm__cad_machine m = {.kernel_rows = true};
        ncm_autoptr(ncm_cpuset) wanted = ncm_cpuset_new();
        ncm_autofree char *buf = malloc(READ_MAX);
        ncm_autofree char *online = NULL;
        ncm_autofree int *dirs = NULL;
        ncm_autofree ncm__mem_listed *mem = NULL;
        reader rd = {.rootfd = rootfd, .buf = buf, .err = err};
        static const char *const online_file[] = {"online", NULL};
        size_t ndirs = 0, online_len = 0;
        bool probed = false, has_online = false;
        int r;

        if (!buf || !wanted)
                return ncm_error_set(err, ENOMEM, "out of memory");
        /* held: the CPUs' files are opened from it */
        fmt_path(&rd, "/sys/devices/system/cpu");
        r = list_dir(&rd, "cpu", true, &dirs, &ndirs, NULL, online_file, &has_online, DIR_CPUS);
        if (r < 0)
                goto out;
        if (ndirs == 0) {
                r = ncm_error_set(err, ENOENT,
                                  "/sys/devices/system/cpu: no cpuN directory (not a sysfs tree "
                                  "with CPU topology)");
                goto out;
        }
        r = has_online ? cad_online(&rd, &online, &online_len) : 0;
        if (r < 0)
                goto out;
        r = cad_nodes(&rd, &m, &mem);
        if (r < 0)
                goto out;
        m.cpus = calloc(ndirs, sizeof(*m.cpus));
        if (!m.cpus) {
                r = ncm_error_set(err, ENOMEM, "out of memory");
                goto out;
        }
        m.ncpus = ndirs;
        for (size_t k = 0; k < m.nnodes; k++)
                for (size_t i = 0; i < m.nodes[k].ncpus; i++)
                        (void)ncm_cpuset_set(wanted, m.nodes[k].cpus[i]);
        /*
         * The files cadvisor reads, in its order: with node directories, core_id then
         * physical_package_id of each online CPU of a node; without, every CPU directory's
         * physical_package_id (it groups by package before the online check), then core_id of
         * the online ones. A missing file leaves the CPU out; nothing more is read for it.
         */
        for (size_t i = 0; i < ndirs; i++) {
                ncm__cad_cpu *c = &m.cpus[i];
                c->cpu = dirs[i];
                c->online = ncm__cad_online(online, online_len, c->cpu);
                if (m.nnodes == 0) {
                        if ((r = cad_package(&rd, c)) < 0)
                                goto out;
                        if (!c->online || !c->has_package)
                                continue;
                } else if (!c->online || !ncm_cpuset_isset(wanted, c->cpu)) {
                        continue;
                }
                fmt_path(&rd, "/sys/devices/system/cpu/cpu%d/topology/core_id", c->cpu);
                if ((r = read_atoi(&rd, &c->has_core, &c->core_id)) < 0)
                        goto out;
                if (!c->has_core)
                        continue;
                if (m.nnodes > 0) {
                        if ((r = cad_package(&rd, c)) < 0)
                                goto out;
                        if (!c->has_package)
                                continue;
                }
                if ((r = cad_s390(&rd, &m, c, &probed)) < 0)
                        goto out;
        }
        m.caches = cad_caches;
        m.caches_data = &rd;
        r = ncm__cad_assemble(&m, ret, err);
        if (r >= 0 && (r = cad_memory(&rd, mem, m.nnodes, *ret)) < 0)
                *ret = ncm_topo_free(*ret);
out:
        release_dirs(&rd);
        cad_done(&m);
        return r;
}

int ncm_topo_discover_sysfs(int rootfd, ncm_topo **ret, ncm_error *err)
{
        return ncm_topo_discover_sysfs_rules(rootfd, NCM_TOPO_RULES_CADVISOR, ret, err);
}

int ncm_topo_discover_sysfs_rules(int rootfd, ncm_topo_rules rules, ncm_topo **ret, ncm_error *err)
{
        ncm_autoptr(ncm_topo) t = NULL;
        int r;

        if (rules == NCM_TOPO_RULES_NODECM) {
                r = discover_nodecm(rootfd, &t, err);
                /* cadvisor reads each node's memory with its CPUs (GetNodesInfo) */
                if (r >= 0)
                        r = ncm_topo_read_memory_sysfs(t, rootfd, err);
        } else {
                r = discover_cadvisor(rootfd, &t, err); /* its memory too */
        }
        /* nodecm's own reading: the kubelet's table has no isolation */
        if (r >= 0)
                r = ncm_topo_read_isolation(t, rootfd, err);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(t);
        return 0;
}
