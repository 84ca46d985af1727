/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure half of sysfs discovery. The first byte picks a target:
 *  0: ncm__sysfs_parse_int (an id file), 1: ncm__sysfs_parse_distances (a distance row),
 *  2: ncm__sysfs_equals, 3: ncm__topo_assemble on a raw machine decoded from the bytes
 *     (the rules that every sysfs or hwloc input goes through).
 * Whatever assembles must keep the table's invariants: each CPU once, a core is its lowest
 * thread, the threads of a core share socket and NUMA node, every NUMA id is listed.
 */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        reader r = {data + 1, size ? size - 1 : 0};
        char *s;
        int v;
        uint32_t d[16];

        if (size == 0)
                return 0;
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
