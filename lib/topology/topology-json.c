/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm topology JSON (DESIGN.md): the writer behind `nodecm topology --json` and the strict
 * reader behind `--topology FILE` and a scenario's inline "cpus"/"numa". The writer's output
 * reads back to an equal topology (ncm_topo_equal), which the tests check on every dump.
 *
 * Reader rules: "cpus" is required (it may be empty: the kubelet's table of a machine whose
 * CPUs cadvisor cannot place); each entry has exactly the keys cpu, core, socket, numa,
 * uncore, all integers. cpu and core are CPU ids (0..8191); socket and numa are any 32-bit
 * integer and uncore any 64-bit one, kept as written (the kernel's ids: -1, 8442, 196611, a
 * 32-bit cache id). cpu ids are unique (any order is accepted, the table is sorted). "numa" is
 * optional (default: the CPUs' nodes, distances 10/20); each entry has "id" (a 32-bit integer,
 * unique) and "distances", integers 0..2^31-1: the node's row as the kernel wrote it, entry K
 * the distance to node K (cadvisor's and the kubelet's reading: a row "21 10" of node 1 whose
 * node 0 is gone), or one per listed node in list order (the kernel's own form, and what
 * nodecm writes for a source that gives no such row). A row of one entry per listed node is
 * read in list order, another one that reaches every listed id by id. "distances" may be left out
 * of every entry (then 10/20), not of some. Every CPU's numa must be listed.
 * A CPU entry may say "isolated": true and "nohz_full": true (docs/isolation.md); the writer
 * gives them only when true.
 * An entry may give its memory (cadvisor's names): "memory" (bytes) and "hugepages", a list of
 * {"page_size": KiB, "num_pages": N}; the writer gives both for every node of a topology with
 * memory, nothing otherwise.
 * "pci" is optional: the machine's PCI devices (ncm_pci_from_json_value; written only when
 * there are some). Other keys are errors, so a typo cannot pass silently.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "topology/topology-internal.h"
#include "base/json.h"

/* Field paths are bounded; a path cut short still names the entry well enough. */
static void pathf(char *out, size_t size, const char *fmt, ...) NCM_PRINTF(3, 4);
static void pathf(char *out, size_t size, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        (void)vsnprintf(out, size, fmt, ap);
        va_end(ap);
}

/* "PREFIX.KEY" or "KEY" when there is no prefix. */
static void join(char *out, size_t size, const char *prefix, const char *key)
{
        if (prefix && *prefix)
                pathf(out, size, "%s.%s", prefix, key);
        else
                pathf(out, size, "%s", key);
}

static int check_keys(json_object *o, const char *path, const char *const *allowed, ncm_error *err)
{
        json_object_object_foreach(o, key, val)
        {
                bool ok = false;
                (void)val;
                for (const char *const *a = allowed; *a; a++)
                        if (strcmp(key, *a) == 0)
                                ok = true;
                if (!ok)
                        return ncm_error_set(err, EINVAL, "%s%s%s: unknown field", path,
                                             *path ? "." : "", key);
        }
        return 0;
}

static int get_i64(json_object *o, const char *path, const char *key, int64_t min, int64_t max,
                   int64_t *ret, ncm_error *err)
{
        char p[512];
        json_object *v = NULL;

        pathf(p, sizeof(p), "%s.%s", path, key);
        if (!json_object_object_get_ex(o, key, &v))
                return ncm_error_set(err, EINVAL, "%s: missing", p);
        if (json_object_is_type(v, json_type_null))
                return ncm_error_set(err, EINVAL, "%s: expected an integer, got null", p);
        return ncm__json_int(v, p, min, max, ret, err);
}

static int get_int(json_object *o, const char *path, const char *key, int64_t min, int64_t max,
                   int *ret, ncm_error *err)
{
        int64_t x = 0;
        int r = get_i64(o, path, key, min, max, &x, err);
        if (r < 0)
                return r;
        *ret = (int)x;
        return 0;
}

/* An optional boolean flag of a CPU entry ("isolated", "nohz_full"): set CPU in *SET. */
static int get_flag(json_object *o, const char *path, const char *key, int cpu, ncm_cpuset **set,
                    ncm_error *err)
{
        json_object *v = NULL;
        char p[512];

        if (!json_object_object_get_ex(o, key, &v))
                return 0;
        pathf(p, sizeof(p), "%s.%s", path, key);
        if (!json_object_is_type(v, json_type_boolean))
                return ncm_error_set(err, EINVAL, "%s: expected a boolean, got %s", p,
                                     ncm__json_type_name(v));
        if (!json_object_get_boolean(v))
                return 0;
        if (!*set && !(*set = ncm_cpuset_new()))
                return ncm_error_set(err, ENOMEM, "out of memory");
        return ncm_cpuset_set(*set, cpu) < 0 ? ncm_error_set(err, ERANGE, "%s: CPU out of range", p)
                                             : 0;
}

static int read_cpus(json_object *arr, const char *path, ncm_cpu_info **ret, size_t *ret_n,
                     ncm_cpuset **ret_flags, ncm_error *err)
{
        static const char *const keys[] = {"cpu",    "core",     "socket",    "numa",
                                           "uncore", "isolated", "nohz_full", NULL};
        const int64_t max = NCM_CPUSET_MAX_CPUS - 1;
        size_t n;
        ncm_autofree ncm_cpu_info *cpus = NULL;
        int r;

        r = ncm__json_expect(arr, json_type_array, path, err);
        if (r < 0)
                return r;
        n = json_object_array_length(arr);
        if (n > NCM_CPUSET_MAX_CPUS)
                return ncm_error_set(err, ERANGE, "%s: %zu CPUs, more than %d", path, n,
                                     NCM_CPUSET_MAX_CPUS);
        cpus = calloc(n ? n : 1, sizeof(*cpus));
        if (!cpus)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(arr, i);
                char p[512];
                pathf(p, sizeof(p), "%s[%zu]", path, i);
                if ((r = ncm__json_expect(e, json_type_object, p, err)) < 0 ||
                    (r = check_keys(e, p, keys, err)) < 0 ||
                    (r = get_int(e, p, "cpu", 0, max, &cpus[i].cpu, err)) < 0 ||
                    (r = get_int(e, p, "core", 0, max, &cpus[i].core, err)) < 0 ||
                    (r = get_int(e, p, "socket", INT32_MIN, INT32_MAX, &cpus[i].socket, err)) < 0 ||
                    (r = get_int(e, p, "numa", INT32_MIN, INT32_MAX, &cpus[i].numa, err)) < 0 ||
                    (r = get_i64(e, p, "uncore", INT64_MIN, INT64_MAX, &cpus[i].uncore, err)) < 0 ||
                    (r = get_flag(e, p, "isolated", cpus[i].cpu, &ret_flags[0], err)) < 0 ||
                    (r = get_flag(e, p, "nohz_full", cpus[i].cpu, &ret_flags[1], err)) < 0)
                        return r;
        }
        *ret = NCM_TAKE_PTR(cpus);
        *ret_n = n;
        return 0;
}

typedef struct numa_mem_entry {
        bool given;
        uint64_t memory;
        ncm_hugepages *hp;
        size_t nhp;
} numa_mem_entry;

typedef struct numa_list {
        int *ids;
        uint32_t *dist; /* NULL when no entry gives distances */
        size_t n;
        uint32_t **rows; /* the rows read by node id (NULL: in list order), to keep */
        size_t *nrows;
        numa_mem_entry *mem; /* per entry; NULL when no entry gives memory */
} numa_list;

static void numa_list_done(numa_list *l)
{
        for (size_t i = 0; l->rows && i < l->n; i++)
                free(l->rows[i]);
        free(l->rows);
        free(l->nrows);
        for (size_t i = 0; l->mem && i < l->n; i++)
                free(l->mem[i].hp);
        free(l->mem);
        free(l->ids);
        free(l->dist);
        *l = (numa_list){0};
}

/* Whether every listed id indexes a row of LEN entries. */
static bool row_by_id(const int *ids, size_t n, size_t len)
{
        for (size_t j = 0; j < n; j++)
                if (ids[j] < 0 || (size_t)ids[j] >= len)
                        return false;
        return true;
}

/* An entry's "memory" (bytes) and "hugepages" [{"page_size": KiB, "num_pages": N}]. */
static int read_memory(json_object *e, const char *p, numa_mem_entry *m, ncm_error *err)
{
        static const char *const keys[] = {"page_size", "num_pages", NULL};
        json_object *v = NULL, *h = NULL;
        char pm[540];
        int64_t x;
        int r;

        if (json_object_object_get_ex(e, "memory", &v)) {
                pathf(pm, sizeof(pm), "%s.memory", p);
                r = ncm__json_int(v, pm, 0, INT64_MAX, &x, err);
                if (r < 0)
                        return r;
                m->memory = (uint64_t)x;
                m->given = true;
        }
        if (!json_object_object_get_ex(e, "hugepages", &h))
                return 0;
        m->given = true;
        pathf(pm, sizeof(pm), "%s.hugepages", p);
        r = ncm__json_expect(h, json_type_array, pm, err);
        if (r < 0)
                return r;
        m->nhp = json_object_array_length(h);
        if (m->nhp > 64)
                return ncm_error_set(err, ERANGE, "%s: %zu pools, more than 64", pm, m->nhp);
        m->hp = calloc(m->nhp ? m->nhp : 1, sizeof(*m->hp));
        if (!m->hp)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t k = 0; k < m->nhp; k++) {
                json_object *pe = json_object_array_get_idx(h, k);
                char pk[560];
                pathf(pk, sizeof(pk), "%s[%zu]", pm, k);
                if ((r = ncm__json_expect(pe, json_type_object, pk, err)) < 0 ||
                    (r = check_keys(pe, pk, keys, err)) < 0)
                        return r;
                if (!json_object_object_get_ex(pe, "page_size", &v))
                        return ncm_error_set(err, EINVAL, "%s.page_size: missing", pk);
                pathf(pm, sizeof(pm), "%s.page_size", pk);
                if ((r = ncm__json_int(v, pm, 1, INT64_MAX, &x, err)) < 0)
                        return r;
                m->hp[k].page_size = (uint64_t)x;
                for (size_t j = 0; j < k; j++)
                        if (m->hp[j].page_size == m->hp[k].page_size)
                                return ncm_error_set(err, EINVAL,
                                                     "%s: page size %" PRId64 " also in [%zu]", pm,
                                                     x, j);
                if (!json_object_object_get_ex(pe, "num_pages", &v))
                        return ncm_error_set(err, EINVAL, "%s.num_pages: missing", pk);
                pathf(pm, sizeof(pm), "%s.num_pages", pk);
                if ((r = ncm__json_int(v, pm, 0, INT64_MAX, &x, err)) < 0)
                        return r;
                m->hp[k].num_pages = (uint64_t)x;
        }
        return 0;
}

static int read_numa(json_object *arr, const char *path, numa_list *ret, ncm_error *err)
{
        static const char *const keys[] = {"id", "distances", "memory", "hugepages", NULL};
        size_t n;
        ncm_autofree numa_mem_entry *mem = NULL;
        bool any_mem = false;
        int given = -1;    /* whether entries give distances: -1 not yet known */
        bool plain = true; /* ids 0..n-1 in order: by id and in list order agree */
        ncm_autofree int *ids = NULL;
        ncm_autofree uint32_t *dist = NULL;
        numa_list l = {0};
        int r;

        r = ncm__json_expect(arr, json_type_array, path, err);
        if (r < 0)
                return r;
        n = json_object_array_length(arr);
        if (n > NCM_CPUSET_MAX_CPUS)
                return ncm_error_set(err, ERANGE, "%s: %zu NUMA nodes, more than %d", path, n,
                                     NCM_CPUSET_MAX_CPUS);
        ids = malloc((n ? n : 1) * sizeof(*ids));
        dist = malloc((n ? n * n : 1) * sizeof(*dist));
        mem = calloc(n ? n : 1, sizeof(*mem));
        if (!ids || !dist || !mem)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(arr, i);
                char p[512];
                pathf(p, sizeof(p), "%s[%zu]", path, i);
                if ((r = ncm__json_expect(e, json_type_object, p, err)) < 0 ||
                    (r = check_keys(e, p, keys, err)) < 0 ||
                    (r = get_int(e, p, "id", INT32_MIN, INT32_MAX, &ids[i], err)) < 0)
                        return r;
                for (size_t j = 0; j < i; j++)
                        if (ids[j] == ids[i])
                                return ncm_error_set(err, EINVAL,
                                                     "%s.id: duplicate NUMA node %d (also %s[%zu])",
                                                     p, ids[i], path, j);
                plain = plain && ids[i] == (int)i;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(arr, i);
                json_object *d = NULL;
                char p[512], pd[540];
                size_t len;
                bool by_id;
                pathf(p, sizeof(p), "%s[%zu]", path, i);
                pathf(pd, sizeof(pd), "%s.distances", p);
                if (!json_object_object_get_ex(e, "distances", &d)) {
                        if (given == 1) {
                                r = ncm_error_set(err, EINVAL,
                                                  "%s: missing (other nodes give distances)", pd);
                                break;
                        }
                        given = 0;
                        continue;
                }
                if (given == 0) {
                        r = ncm_error_set(err, EINVAL,
                                          "%s: given, but earlier nodes give no distances", pd);
                        break;
                }
                given = 1;
                r = ncm__json_expect(d, json_type_array, pd, err);
                if (r < 0)
                        break;
                len = json_object_array_length(d);
                by_id = len != n && row_by_id(ids, n, len);
                if (len != n && !by_id) {
                        r = ncm_error_set(err, EINVAL,
                                          "%s: expected %zu entries (one per NUMA node), or one "
                                          "per node id up to the largest listed, got %zu",
                                          pd, n, len);
                        break;
                }
                if (by_id && !l.rows) {
                        /* N rows, each freed by numa_list_done() once it is there */
                        l.n = n;
                        l.rows = calloc(n ? n : 1, sizeof(*l.rows));
                        l.nrows = calloc(n ? n : 1, sizeof(*l.nrows));
                        if (!l.rows || !l.nrows) {
                                r = ncm_error_set(err, ENOMEM, "out of memory");
                                break;
                        }
                }
                if (by_id && !(l.rows[i] = malloc((len ? len : 1) * sizeof(uint32_t)))) {
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                        break;
                }
                for (size_t j = 0; j < len; j++) {
                        char pj[560];
                        int64_t v;
                        pathf(pj, sizeof(pj), "%s[%zu]", pd, j);
                        r = ncm__json_int(json_object_array_get_idx(d, j), pj, 0, INT32_MAX, &v,
                                          err);
                        if (r < 0)
                                break;
                        if (by_id)
                                l.rows[i][j] = (uint32_t)v;
                        else
                                dist[i * n + j] = (uint32_t)v;
                }
                if (r < 0)
                        break;
                if (by_id) {
                        l.nrows[i] = len;
                        for (size_t j = 0; j < n; j++)
                                dist[i * n + j] = l.rows[i][ids[j]];
                }
        }
        if (r < 0) {
                numa_list_done(&l);
                return r;
        }
        /* memory after the rest, so that every failure above has nothing of it to free */
        for (size_t i = 0; i < n; i++) {
                char p[512];
                pathf(p, sizeof(p), "%s[%zu]", path, i);
                r = read_memory(json_object_array_get_idx(arr, i), p, &mem[i], err);
                if (r < 0) {
                        for (size_t k = 0; k <= i; k++)
                                free(mem[k].hp);
                        numa_list_done(&l);
                        return r;
                }
                any_mem |= mem[i].given;
        }
        l.ids = NCM_TAKE_PTR(ids);
        l.dist = given == 1 ? NCM_TAKE_PTR(dist) : NULL;
        l.n = n;
        if (any_mem) {
                l.mem = NCM_TAKE_PTR(mem);
        } else {
                for (size_t k = 0; k < n; k++)
                        free(mem[k].hp);
        }
        *ret = l;
        return 0;
}

int ncm_topo_from_json_value(struct json_object *o, const char *path, bool ignore_other_keys,
                             ncm_topo **ret, ncm_error *err)
{
        static const char *const keys[] = {"cpus", "numa", "pci", NULL};
        const char *root = path ? path : "";
        char pc[512], pn[512], pp[512];
        json_object *jc = NULL, *jn = NULL, *jp = NULL;
        ncm_autoptr(ncm_pci) pci = NULL;
        ncm_autofree ncm_cpu_info *cpus = NULL;
        size_t ncpus = 0;
        numa_list numa = {0};
        ncm_cpuset *flags[2] = {NULL, NULL}; /* "isolated", "nohz_full" */
        int r;

        r = ncm__json_expect(o, json_type_object, *root ? root : "topology", err);
        if (r < 0)
                return r;
        if (!ignore_other_keys && (r = check_keys(o, root, keys, err)) < 0)
                return r;
        join(pc, sizeof(pc), root, "cpus");
        join(pn, sizeof(pn), root, "numa");
        join(pp, sizeof(pp), root, "pci");
        /* the PCI devices (optional) first: nothing to free once the table is built */
        if (json_object_object_get_ex(o, "pci", &jp) && !json_object_is_type(jp, json_type_null) &&
            (r = ncm_pci_from_json_value(jp, pp, &pci, err)) < 0)
                return r;
        if (!json_object_object_get_ex(o, "cpus", &jc))
                return ncm_error_set(err, EINVAL, "%s: missing", pc);
        r = read_cpus(jc, pc, &cpus, &ncpus, flags, err);
        if (r >= 0 && json_object_object_get_ex(o, "numa", &jn)) {
                r = read_numa(jn, pn, &numa, err);
                if (r < 0)
                        goto out;
                for (size_t i = 0; i < ncpus; i++) {
                        bool listed = false;
                        for (size_t k = 0; k < numa.n && !listed; k++)
                                listed = numa.ids[k] == cpus[i].numa;
                        if (!listed) {
                                r = ncm_error_set(err, EINVAL,
                                                  "%s[%zu].numa: NUMA node %d is not listed in %s",
                                                  pc, i, cpus[i].numa, pn);
                                goto out;
                        }
                }
        }
        if (r >= 0)
                r = ncm_topo_new(cpus, ncpus, numa.ids, numa.n, numa.dist, ret, err);
        for (size_t i = 0; r >= 0 && numa.rows && i < numa.n; i++)
                if (numa.rows[i] &&
                    ncm__topo_set_row(*ret, numa.ids[i], numa.rows[i], numa.nrows[i]) < 0) {
                        *ret = ncm_topo_free(*ret);
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                }
        for (size_t i = 0; r >= 0 && numa.mem && i < numa.n; i++) {
                r = ncm_topo_set_numa_memory(*ret, numa.ids[i], numa.mem[i].memory, numa.mem[i].hp,
                                             numa.mem[i].nhp, err);
                if (r < 0) {
                        ncm_error_prefix(err, "%s[%zu].hugepages", pn, i);
                        *ret = ncm_topo_free(*ret);
                }
        }
        for (int k = 0; k < 2 && r >= 0; k++)
                if (flags[k] &&
                    (r = ncm_topo_set_isolation(
                                     *ret, k ? NCM_ISO_GIVEN_NOHZ_FULL : NCM_ISO_GIVEN_ISOLATED,
                                     flags[k], err)) < 0)
                        *ret = ncm_topo_free(*ret);
out:
        numa_list_done(&numa);
        ncm_cpuset_free(flags[0]);
        ncm_cpuset_free(flags[1]);
        if (r >= 0 && pci)
                ncm_topo_set_pci(*ret, NCM_TAKE_PTR(pci));
        if (r < 0 && err && strncmp(err->msg, "cpus[", 5) == 0 && *root) {
                /* ncm_topo_new names entries relative to the table; add our prefix */
                char tmp[NCM_ERROR_MSG_MAX];
                snprintf(tmp, sizeof(tmp), "%s", err->msg);
                ncm_error_set(err, err->code, "%s.%s", root, tmp);
        }
        return r;
}

int ncm_topo_parse_json(const char *text, size_t len, const char *name, ncm_topo **ret,
                        ncm_error *err)
{
        ncm_autojson o = NULL;
        int r = ncm__json_parse(text, len, name, &o, err);
        if (r < 0)
                return r;
        r = ncm_topo_from_json_value(o, NULL, false, ret, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s", name);
        return r;
}

int ncm_topo_load_json_file(const char *path, ncm_topo **ret, ncm_error *err)
{
        ncm_autofree char *text = NULL;
        size_t len = 0;
        bool in = strcmp(path, "-") == 0;
        int r = ncm_fs_read_all(AT_FDCWD, in ? "/dev/stdin" : path, NCM_JSON_MAX_FILE, &text, &len,
                                err);
        if (r < 0)
                return r;
        return ncm_topo_parse_json(text, len, in ? "<stdin>" : path, ret, err);
}

void ncm__put_int(ncm_buf *b, int64_t v, int width)
{
        char tmp[24];
        size_t n = 0;
        uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

        do {
                tmp[sizeof(tmp) - 1 - n++] = (char)('0' + u % 10);
                u /= 10;
        } while (u);
        if (v < 0)
                tmp[sizeof(tmp) - 1 - n++] = '-';
        /* the padding in the same append (a distance table is thousands of these) */
        for (; (int)n < width && n < sizeof(tmp); n++)
                tmp[sizeof(tmp) - 1 - n] = ' ';
        for (int pad = width - (int)n; pad > 0; pad--)
                ncm_buf_putc(b, ' ');
        ncm_buf_append(b, tmp + sizeof(tmp) - n, n);
}

void ncm_topo_format_json(const ncm_topo *t, ncm_buf *b)
{
        size_t n, nn;
        const ncm_cpu_info *c = ncm_topo_cpus(t, &n);
        const int *ids = ncm_topo_numa_ids(t, &nn);
        const uint32_t *d = ncm_topo_numa_distances(t, &nn);
        const uint32_t *row;
        size_t nrow = 0;

        ncm_buf_puts(b, "{\"cpus\": [");
        for (size_t i = 0; i < n; i++) {
                ncm_buf_puts(b, i ? ",\n          {\"cpu\": " : "{\"cpu\": ");
                ncm__put_int(b, c[i].cpu, 0);
                ncm_buf_puts(b, ", \"core\": ");
                ncm__put_int(b, c[i].core, 0);
                ncm_buf_puts(b, ", \"socket\": ");
                ncm__put_int(b, c[i].socket, 0);
                ncm_buf_puts(b, ", \"numa\": ");
                ncm__put_int(b, c[i].numa, 0);
                ncm_buf_puts(b, ", \"uncore\": ");
                ncm__put_int(b, c[i].uncore, 0);
                if (ncm_cpuset_isset(ncm_topo_isolated_cpus(t), c[i].cpu))
                        ncm_buf_puts(b, ", \"isolated\": true");
                if (ncm_cpuset_isset(ncm_topo_nohz_full_cpus(t), c[i].cpu))
                        ncm_buf_puts(b, ", \"nohz_full\": true");
                ncm_buf_putc(b, '}');
        }
        ncm_buf_puts(b, "],\n \"numa\": [");
        for (size_t i = 0; i < nn; i++) {
                ncm_buf_puts(b, i ? ",\n          {\"id\": " : "{\"id\": ");
                ncm__put_int(b, ids[i], 0);
                ncm_buf_puts(b, ", \"distances\": [");
                /* the row as the machine gave it (by node id), else the matrix's (list order) */
                if ((row = ncm_topo_numa_distance_row(t, ids[i], &nrow)) != NULL) {
                        for (size_t j = 0; j < nrow; j++) {
                                if (j)
                                        ncm_buf_puts(b, ", ");
                                ncm__put_int(b, row[j], 0);
                        }
                } else {
                        for (size_t j = 0; j < nn; j++) {
                                if (j)
                                        ncm_buf_puts(b, ", ");
                                ncm__put_int(b, d[i * nn + j], 0);
                        }
                }
                ncm_buf_putc(b, ']');
                if (ncm_topo_has_memory(t)) {
                        const ncm_hugepages *hp;
                        size_t nhp;
                        char tmp[24];
                        uint64_t mem = ncm_topo_numa_memory(t, ids[i], &hp, &nhp);
                        snprintf(tmp, sizeof(tmp), "%" PRIu64, mem);
                        ncm_buf_puts(b, ", \"memory\": ");
                        ncm_buf_puts(b, tmp);
                        ncm_buf_puts(b, ", \"hugepages\": [");
                        for (size_t k = 0; k < nhp; k++) {
                                ncm_buf_puts(b, k ? ", {\"page_size\": " : "{\"page_size\": ");
                                snprintf(tmp, sizeof(tmp), "%" PRIu64, hp[k].page_size);
                                ncm_buf_puts(b, tmp);
                                ncm_buf_puts(b, ", \"num_pages\": ");
                                snprintf(tmp, sizeof(tmp), "%" PRIu64, hp[k].num_pages);
                                ncm_buf_puts(b, tmp);
                                ncm_buf_putc(b, '}');
                        }
                        ncm_buf_putc(b, ']');
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, ']');
        /* only when there are some: a table without PCI devices prints as it always has */
        if (ncm_topo_pci(t) && (ncm_pci_devices(ncm_topo_pci(t), &n), n > 0)) {
                ncm_buf_puts(b, ",\n \"pci\": ");
                ncm_pci_format_json(ncm_topo_pci(t), b);
        }
        ncm_buf_puts(b, "}\n");
}
