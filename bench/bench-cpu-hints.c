/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU topology hint generation (generateCPUTopologyHints) for a request of 8 CPUs on machines
 * of 2 to 16 NUMA nodes (8 cores × 2 threads each, threads k and k + #cores, half of the CPUs
 * taken as in bench-cpu-assignment). kubelet walks every NUMA mask and, per mask, every
 * available CPU; nodecm sums per-node counts through a table, O(1) per mask. The time is one
 * call producing the whole hint list.
 */
#include <stdio.h>
#include <stdlib.h>

#include <nodecm/cpumanager.h>
#include "benchutil.h"

typedef struct call {
        const ncm_cpu_index *ix;
        const ncm_cpuset *avail;
        ncm_hint_list hints;
} call;

static void run(void *arg)
{
        call *c = arg;
        c->hints.n = 0;
        if (ncm_cpu_hints_generate(c->ix, NULL, c->avail, NULL, 8, &c->hints, NULL) < 0)
                abort();
}

int main(void)
{
        static const struct {
                int numa;
                const char *kubelet;
                double kubelet_ns;
        } rows[] = {
                        {2, "17 µs", 17e3},
                        {4, "137 µs", 137e3},
                        {8, "5.8 ms", 5.8e6},
                        {16, "4 s", 4e9},
        };

        printf("## CPU topology hints\n\n"
               "Hints for a request of 8 CPUs; each NUMA node has 8 cores × 2 threads, half of "
               "the CPUs taken. Every non-empty NUMA mask is visited (2^N − 1), in kubelet's "
               "order.\n\n");
        printf("| NUMA nodes | masks | hints | kubelet | nodecm | × |\n");
        printf("|---:|---:|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                int n = rows[i].numa, cores = n * 8;
                ncm_cpu_info *cpus = malloc(2 * (size_t)cores * sizeof(*cpus));
                ncm_cpuset *avail = ncm_cpuset_new();
                ncm_topo *t = NULL;
                ncm_cpu_index *ix = NULL;
                call c = {0};
                char buf[32];
                double ns;

                if (!cpus || !avail)
                        abort();
                for (int k = 0; k < cores; k++)
                        for (int th = 0; th < 2; th++) {
                                int cpu = k + th * cores;
                                cpus[cpu] = (ncm_cpu_info){cpu, k, k / 16, k / 8, k / 8};
                                if (k % 4 == 1 || (k % 4 == 2 && th == 1) ||
                                    (k % 4 == 3 && th == 0))
                                        (void)ncm_cpuset_set(avail, cpu);
                        }
                if (ncm_topo_new(cpus, 2 * (size_t)cores, NULL, 0, NULL, &t, NULL) < 0 ||
                    ncm_cpu_index_new(t, &ix, NULL) < 0)
                        abort();
                c.ix = ix;
                c.avail = avail;
                ns = bench_median_ns(run, &c, 1000000);
                printf("| %d | %d | %zu | %s | %s | %.0f× |\n", n, (1 << n) - 1, c.hints.n,
                       rows[i].kubelet, bench_fmt_ns(ns, buf), rows[i].kubelet_ns / ns);
                ncm_hint_list_done(&c.hints);
                ncm_cpu_index_free(ix);
                ncm_topo_free(t);
                ncm_cpuset_free(avail);
                free(cpus);
        }
        return 0;
}
