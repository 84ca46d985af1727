/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure half of sysfs discovery. The first byte picks a target:
 *  0: ncm__sysfs_parse_int (an id file), 1: ncm__sysfs_parse_distances (a distance row),
 *  2: ncm__sysfs_equals, 3: ncm__topo_assemble on a raw machine decoded from the bytes
 *     (the rules that every sysfs or hwloc input goes through).
 * Whatever assembles must keep the table's invariants: each CPU once, a core is its lowest
 * thread, the threads of a core share socket and NUMA node, every NUMA id is listed.
 * A first byte of 0x80 or more picks the kubelet's (cadvisor's) rules instead, by its value
 * modulo 6: 0 ncm__cad_atoi, 1 ncm__cad_online, 2 ncm__cad_scan_int, 3 ncm__cad_map_weight,
 * 4 ncm__cad_distances (Go's readers, on the raw bytes, NULs included), 5 ncm__cad_assemble
 * on a machine decoded from the bytes, with caches from the bytes too. There CPUs listed in
 * several nodes may split a core across nodes, so only sorting, core <= cpu and listed NUMA
 * ids are checked.
 * A first byte of 0x40..0x7f picks the memory readers (topology-memory.c): even
 * ncm__mem_meminfo_total on the raw bytes, odd ncm__mem_hugepages_size on them as a name.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topology.h>
#include "topology/topology-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct reader {
        const uint8_t *p;
        size_t n;
} reader;

static unsigned take(reader *r)
{
        if (r->n == 0)
                return 0;
        r->n--;
        return *r->p++;
}

static unsigned take16(reader *r)
{
        unsigned v = take(r);
        return v | take(r) << 8;
}

/* An id as sysfs would report it: absent, small, or large (renumbering kicks in). */
static int64_t take_id(reader *r)
{
        unsigned v = take16(r);
        switch (v >> 14) {
        case 0:
                return NCM__RAW_NONE;
        case 1:
                return v & 0x3f;
        case 2:
                return v & 0x3fff;
        default:
                return (int64_t)(v & 0x3fff) * 1000003;
        }
}

static void check(const ncm_topo *t)
{
        size_t n, nn;
        const ncm_cpu_info *c = ncm_topo_cpus(t, &n);
        const int *ids = ncm_topo_numa_ids(t, &nn);
        for (size_t i = 0; i < n; i++) {
                const ncm_cpu_info *core = ncm_topo_cpu(t, c[i].core);
                bool listed = false;
                if (i > 0 && c[i].cpu <= c[i - 1].cpu)
                        abort();
                if (!core || core->core != c[i].core || c[i].core > c[i].cpu ||
                    core->socket != c[i].socket || core->numa != c[i].numa)
                        abort();
                for (size_t k = 0; k < nn; k++)
                        listed |= ids[k] == c[i].numa;
                if (!listed)
                        abort();
        }
}

static void fuzz_assemble(reader *r)
{
        ncm__raw_machine m = {0};
        ncm__raw_cpu cpus[96];
        ncm__raw_node nodes[8];
        int cpu = -1, node = -1;
        ncm_topo *t = NULL;

        m.ncpus = take(r) % 97;
        for (size_t i = 0; i < m.ncpus; i++) {
                ncm__raw_cpu *c = &cpus[i];
                unsigned flags;
                cpu += 1 + (int)(take(r) % 200); /* ascending, sparse, up to ~19000 */
                if (cpu >= NCM_CPUSET_MAX_CPUS)
                        cpu = NCM_CPUSET_MAX_CPUS - (int)(m.ncpus - i);
                if (i > 0 && cpu <= cpus[i - 1].cpu) {
                        m.ncpus = i;
                        break;
                }
                c->cpu = cpu;
                c->package = take_id(r);
                c->core_id = take_id(r);
                flags = take(r);
                c->book = flags & 1 ? (int64_t)take(r) : NCM__RAW_NONE;
                c->drawer = flags & 2 ? (int64_t)take(r) : NCM__RAW_NONE;
                /* sibling "lowest CPUs" point at an earlier CPU, this one, or nowhere */
                c->thread_first = flags & 4 ? cpus[take(r) % (i + 1)].cpu : -1;
                if (flags & 4 && c->thread_first > cpu)
                        c->thread_first = cpu;
                c->package_first = flags & 8 ? cpus[take(r) % (i + 1)].cpu : -1;
                if (flags & 8 && c->package_first > cpu)
                        c->package_first = cpu;
                c->has_l3 = flags & 16;
                c->l3_id = flags & 32 ? take_id(r) : NCM__RAW_NONE;
                c->l3_first = flags & 64 ? (int)take16(r) % NCM_CPUSET_MAX_CPUS : -1;
        }
        m.cpus = cpus;
        m.nnodes = take(r) % 9;
        for (size_t k = 0; k < m.nnodes; k++) {
                ncm__raw_node *nd = &nodes[k];
                unsigned len = take(r) % 10;
                node += 1 + (int)(take(r) % 100);
                nd->id = node;
                nd->cpus = ncm_cpuset_new();
                nd->dist = len ? calloc(len, sizeof(uint32_t)) : NULL;
                nd->ndist = len;
                for (size_t i = 0; i < m.ncpus; i++)
                        if (take(r) & 1)
                                (void)ncm_cpuset_set(nd->cpus, cpus[i].cpu);
                for (unsigned j = 0; j < len; j++)
                        nd->dist[j] = take(r);
        }
        m.nodes = nodes;
        if (ncm__topo_assemble(&m, &t, NULL) == 0) {
                check(t);
                ncm_topo_free(t);
        }
        for (size_t k = 0; k < m.nnodes; k++) {
                ncm_cpuset_free(nodes[k].cpus);
                free(nodes[k].dist);
        }
}

/* --- the kubelet's rules --- */

typedef struct cad_fuzz {
        reader *r;
        int calls;
} cad_fuzz;

static int cad_caches(void *data, int cpu, ncm__cad_cache **ret, size_t *n, ncm_error *err)
{
        cad_fuzz *f = data;
        unsigned k = take(f->r) % 5;
        (void)cpu;
        (void)err;
        f->calls++;
        if (k == 4)
                return 1; /* unreadable */
        *ret = k ? calloc(k, sizeof(**ret)) : NULL;
        if (k && !*ret)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (unsigned i = 0; i < k; i++)
                (*ret)[i] = (ncm__cad_cache){.id = take_id(f->r),
                                             .level = (int64_t)(take(f->r) % 5),
                                             .ncpus = (int)(take(f->r) % 9)};
        *n = k;
        return 0;
}

static void check_cad(const ncm_topo *t)
{
        size_t n, nn;
        const ncm_cpu_info *c = ncm_topo_cpus(t, &n);
        const int *ids = ncm_topo_numa_ids(t, &nn);
        for (size_t i = 0; i < n; i++) {
                bool listed = false;
                if ((i > 0 && c[i].cpu <= c[i - 1].cpu) || c[i].core > c[i].cpu ||
                    !ncm_topo_cpu(t, c[i].core))
                        abort();
                for (size_t k = 0; k < nn; k++)
                        listed |= ids[k] == c[i].numa;
                if (!listed)
                        abort();
        }
}

static void fuzz_cad_assemble(reader *r)
{
        ncm__cad_machine m = {0};
        ncm__cad_cpu cpus[64];
        ncm__cad_node nodes[6];
        int lists[6][80];
        static char texts[4][2] = {"0", "1", "2", "3"};
        cad_fuzz f = {r, 0};
        int cpu = -1;
        ncm_topo *t = NULL;

        m.ncpus = take(r) % 65;
        for (size_t i = 0; i < m.ncpus; i++) {
                ncm__cad_cpu *c = &cpus[i];
                unsigned flags = take(r);
                cpu += 1 + (int)(take(r) % 150);
                if (cpu >= NCM_CPUSET_MAX_CPUS) {
                        m.ncpus = i;
                        break;
                }
                *c = (ncm__cad_cpu){.cpu = cpu,
                                    .online = flags & 1,
                                    .has_core = flags & 2,
                                    .has_package = flags & 4,
                                    .has_book = flags & 8,
                                    .has_drawer = flags & 16,
                                    .core_id = take_id(r),
                                    .package = (int64_t)(int8_t)take(r)};
                c->book = c->has_book ? texts[take(r) % 4] : NULL;
                c->drawer = c->has_drawer ? texts[take(r) % 4] : NULL;
        }
        m.cpus = cpus;
        m.s390 = take(r) & 1;
        m.nnodes = take(r) % 7;
        for (size_t k = 0; k < m.nnodes; k++) {
                ncm__cad_node *nd = &nodes[k];
                unsigned len = take(r) % 8;
                nd->id = (int)(int8_t)take(r);
                for (size_t j = 0; j < k; j++)
                        if (nodes[j].id == nd->id)
                                nd->id = 1000 + (int)k; /* directory names are unique */
                nd->cpus = lists[k];
                nd->ncpus = take(r) % 80;
                for (size_t i = 0; i < nd->ncpus; i++)
                        /* a listed CPU may have no directory */
                        nd->cpus[i] = m.ncpus && take(r) % 8 ? cpus[take(r) % m.ncpus].cpu
                                                             : (int)(take(r) % 200);
                nd->dist = len ? calloc(len, sizeof(uint32_t)) : NULL;
                nd->ndist = len;
                for (unsigned j = 0; j < len; j++)
                        nd->dist[j] = take(r);
        }
        m.nodes = nodes;
        m.caches = cad_caches;
        m.caches_data = &f;
        if (ncm__cad_assemble(&m, &t, NULL) == 0) {
                check_cad(t);
                ncm_topo_free(t);
        }
        for (size_t k = 0; k < m.nnodes; k++)
                free(nodes[k].dist);
}

static void fuzz_cad(unsigned sel, reader *r)
{
        const char *s = (const char *)r->p, *p = s;
        int64_t v;
        uint32_t d[16];
        int n;

        switch (sel % 6) {
        case 0:
                (void)ncm__cad_atoi(s, r->n, &v);
                break;
        case 1:
                /* two bytes of CPU id, then the list (none: no online file) */
                if (r->n >= 2)
                        (void)ncm__cad_online(r->n > 2 ? s + 2 : NULL, r->n - 2,
                                              (int)(r->p[0] | r->p[1] << 8));
                break;
        case 2:
                if (ncm__cad_scan_int(&p, s + r->n, r->n & 1, &v) && (p < s || p > s + r->n))
                        abort();
                break;
        case 3:
                n = ncm__cad_map_weight(s, r->n);
                if (n > (int)r->n * 4)
                        abort();
                break;
        case 4:
                n = ncm__cad_distances(s, r->n, d, 16);
                if (n > 16)
                        abort();
                break;
        default:
                fuzz_cad_assemble(r);
                break;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        reader r = {data + 1, size ? size - 1 : 0};
        char *s;
        int v;
        uint32_t d[16];

        if (size == 0)
                return 0;
        if (data[0] >= 0x80) {
                fuzz_cad(data[0], &r);
                return 0;
        }
        if (data[0] >= 0x40) {
                uint64_t b;
                if (data[0] % 2 == 0) {
                        (void)ncm__mem_meminfo_total((const char *)data + 1, size - 1, &b);
                        return 0;
                }
                s = malloc(size);
                if (!s)
                        return 0;
                memcpy(s, data + 1, size - 1);
                s[size - 1] = '\0';
                (void)ncm__mem_hugepages_size(s, &b);
                free(s);
                return 0;
        }
        if (data[0] % 4 == 3) {
                fuzz_assemble(&r);
                return 0;
        }
        s = malloc(size);
        if (!s)
                return 0;
        memcpy(s, data + 1, size - 1);
        s[size - 1] = '\0';
        switch (data[0] % 4) {
        case 0:
                (void)ncm__sysfs_parse_int(s, &v);
                break;
        case 1: {
                int n = ncm__sysfs_parse_distances(s, d, 16);
                if (n > 16)
                        abort();
                break;
        }
        default:
                (void)ncm__sysfs_equals(s, "Unified");
                break;
        }
        free(s);
        return 0;
}
