/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The human-readable view of a topology: socket -> NUMA node -> uncore cache -> core -> CPU
 * threads, then the NUMA distances and kubelet's counts. The CPU table is sorted by that
 * path, so every CPU is printed exactly once even when a NUMA node spans sockets (the node
 * then appears under each socket with its CPUs there).
 */
#include <stdlib.h>
#include <string.h>

#include <nodecm/topology.h>
#include "topology/topology-internal.h"

static int cmp_path(const void *a, const void *b)
{
        const ncm_cpu_info *x = a, *y = b;
        if (x->socket != y->socket)
                return x->socket < y->socket ? -1 : 1;
        if (x->numa != y->numa)
                return x->numa < y->numa ? -1 : 1;
        if (x->uncore != y->uncore)
                return x->uncore < y->uncore ? -1 : 1;
        if (x->core != y->core)
                return x->core < y->core ? -1 : 1;
        return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* "TEXT V\n" (the tree's header lines; printf was most of a large tree's time). */
static void put_line(ncm_buf *b, const char *text, int64_t v)
{
        ncm_buf_puts(b, text);
        ncm__put_int(b, v, 0);
        ncm_buf_putc(b, '\n');
}

static void put_count(ncm_buf *b, int n, const char *one, const char *many)
{
        ncm_buf_printf(b, "%d %s", n, n == 1 ? one : many);
}

/* "LABEL: CPUS (source CPUS, ...)" for a non-empty union, or a source on its own. */
static void put_iso_line(const ncm_topo *t, ncm_buf *b, const char *label, const ncm_cpuset *cpus,
                         const ncm_iso_source *srcs, size_t n)
{
        bool first = true;

        if (!cpus || ncm_cpuset_is_empty(cpus))
                return;
        ncm_buf_printf(b, "%s: ", label);
        ncm_cpuset_format_list_buf(cpus, b);
        for (size_t i = 0; i < n; i++) {
                const ncm_cpuset *s = ncm_topo_isolation_source(t, srcs[i]);
                if (!s || ncm_cpuset_is_empty(s))
                        continue;
                ncm_buf_printf(b, "%s%s ", first ? " (" : ", ", ncm_iso_source_name(srcs[i]));
                ncm_cpuset_format_list_buf(s, b);
                first = false;
        }
        ncm_buf_puts(b, first ? "\n" : ")\n");
}

/* What the kernel was told about isolation (docs/isolation.md), when anything. */
static void put_isolation(const ncm_topo *t, ncm_buf *b)
{
        static const ncm_iso_source iso[] = {NCM_ISO_SYSFS_ISOLATED, NCM_ISO_ISOLCPUS_DOMAIN,
                                             NCM_ISO_PARTITIONS, NCM_ISO_GIVEN_ISOLATED};
        static const ncm_iso_source nohz[] = {NCM_ISO_SYSFS_NOHZ_FULL, NCM_ISO_NOHZ_FULL,
                                              NCM_ISO_ISOLCPUS_NOHZ, NCM_ISO_GIVEN_NOHZ_FULL};

        put_iso_line(t, b, "Isolated CPUs", ncm_topo_isolated_cpus(t), iso, NCM_ELEMENTSOF(iso));
        put_iso_line(t, b, "nohz_full CPUs", ncm_topo_nohz_full_cpus(t), nohz,
                     NCM_ELEMENTSOF(nohz));
        put_iso_line(t, b, "Managed interrupts kept off (isolcpus=managed_irq)",
                     ncm_topo_isolation_source(t, NCM_ISO_ISOLCPUS_MANAGED_IRQ), NULL, 0);
}

void ncm_topo_format_tree(const ncm_topo *t, ncm_buf *b)
{
        size_t n, nn;
        const ncm_cpu_info *table = ncm_topo_cpus(t, &n);
        const int *ids = ncm_topo_numa_ids(t, &nn);
        const uint32_t *d = ncm_topo_numa_distances(t, &nn);
        ncm_cpu_info *c = malloc((n ? n : 1) * sizeof(*c));
        bool cpuless = false;

        if (!c) {
                b->oom = true; /* the caller checks ncm_buf_failed() once */
                return;
        }
        if (n)
                memcpy(c, table, n * sizeof(*c));
        qsort(c, n, sizeof(*c), cmp_path);
        for (size_t i = 0; i < n; i++) {
                bool new_socket = i == 0 || c[i].socket != c[i - 1].socket;
                bool new_numa = new_socket || c[i].numa != c[i - 1].numa;
                bool new_uncore = new_numa || c[i].uncore != c[i - 1].uncore;
                bool new_core = new_uncore || c[i].core != c[i - 1].core;
                if (new_socket)
                        put_line(b, "Socket ", c[i].socket);
                if (new_numa)
                        put_line(b, "  NUMA node ", c[i].numa);
                if (new_uncore)
                        put_line(b, "    Uncore cache ", c[i].uncore);
                if (new_core) {
                        ncm_buf_puts(b, "      Core ");
                        ncm__put_int(b, c[i].core, 0);
                        ncm_buf_puts(b, ": CPU ");
                } else {
                        ncm_buf_puts(b, ", ");
                }
                ncm__put_int(b, c[i].cpu, 0);
                if (i + 1 == n || c[i + 1].core != c[i].core || c[i + 1].uncore != c[i].uncore ||
                    c[i + 1].numa != c[i].numa || c[i + 1].socket != c[i].socket)
                        ncm_buf_putc(b, '\n');
        }
        free(c);

        for (size_t k = 0; k < nn; k++)
                if (!ncm_topo_numa_cpus(t, ids[k])) {
                        ncm_buf_puts(b, cpuless ? ", " : "NUMA nodes without CPUs: ");
                        ncm_buf_printf(b, "%d", ids[k]);
                        cpuless = true;
                }
        if (cpuless)
                ncm_buf_putc(b, '\n');
        if (nn > 1) {
                ncm_buf_puts(b, "NUMA distances:\n      ");
                for (size_t j = 0; j < nn; j++) {
                        ncm_buf_putc(b, ' ');
                        ncm__put_int(b, ids[j], 5);
                }
                ncm_buf_putc(b, '\n');
                for (size_t i = 0; i < nn; i++) {
                        ncm_buf_puts(b, "  ");
                        ncm__put_int(b, ids[i], 4);
                        for (size_t j = 0; j < nn; j++) {
                                ncm_buf_putc(b, ' ');
                                ncm__put_int(b, d[i * nn + j], 5);
                        }
                        ncm_buf_putc(b, '\n');
                }
        }
        ncm_buf_puts(b, "Total: ");
        put_count(b, ncm_topo_num_cpus(t), "CPU", "CPUs");
        ncm_buf_puts(b, ", ");
        put_count(b, ncm_topo_num_cores(t), "core", "cores");
        ncm_buf_puts(b, ", ");
        put_count(b, ncm_topo_num_sockets(t), "socket", "sockets");
        ncm_buf_puts(b, ", ");
        put_count(b, ncm_topo_num_numa_nodes(t), "NUMA node", "NUMA nodes");
        if (nn > (size_t)ncm_topo_num_numa_nodes(t))
                ncm_buf_printf(b, " (+%zu without CPUs)", nn - (size_t)ncm_topo_num_numa_nodes(t));
        ncm_buf_puts(b, ", ");
        put_count(b, ncm_topo_num_uncore_caches(t), "uncore cache", "uncore caches");
        ncm_buf_puts(b, ", ");
        put_count(b, ncm_topo_cpus_per_core(t), "thread per core", "threads per core");
        ncm_buf_putc(b, '\n');
        put_isolation(t, b);
}
