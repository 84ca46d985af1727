/* SPDX-License-Identifier: Apache-2.0 */
/*
 * takeByTopology: nodecm's allocator against the kubelet's, on machines whose sibling threads
 * are k and k + #cores, with half of the CPUs taken (core k: k mod 4 = 0 both threads taken,
 * 1 both free, 2 thread 0 taken, 3 thread 1 taken) and the whole free set passed in, as the
 * static policy does. The kubelet columns are the Go reference measurements of the same
 * calls. nodecm's index is built once per machine (as a policy does); the time is one call,
 * result set included.
 */
#include <stdio.h>
#include <stdlib.h>

#include <nodecm/cpumanager.h>
#include "benchutil.h"

typedef struct machine {
        const char *name;
        int sockets, numa_per_socket, cores_per_numa;
        int requests[4];
        const char *kubelet_packed[4];
        const char *kubelet_dist[4];
        double kubelet_packed_ns[4];
        double kubelet_dist_ns[4];
} machine;

static const machine machines[] = {
                {"1 socket × 8 cores × 2 threads (16 CPUs)",
                 1,
                 1,
                 8,
                 {1, 4, 0, 0},
                 {"41 µs", "29 µs"},
                 {"40 µs", "43 µs"},
                 {41e3, 29e3},
                 {40e3, 43e3}},
                {"2 sockets × 2 NUMA × 24 cores × 2 threads (192 CPUs)",
                 2,
                 2,
                 24,
                 {1, 4, 16, 64},
                 {"2.9 ms", "1.8 ms", "2.0 ms", "3.5 ms"},
                 {"2.7 ms", "0.51 ms", "0.64 ms", "1.8 ms"},
                 {2.9e6, 1.8e6, 2.0e6, 3.5e6},
                 {2.7e6, 0.51e6, 0.64e6, 1.8e6}},
                {"2 sockets × 4 NUMA × 24 cores × 2 threads (384 CPUs)",
                 2,
                 4,
                 24,
                 {1, 4, 16, 64},
                 {"9.7 ms", "6.1 ms", "6.6 ms", "8.0 ms"},
                 {"9.9 ms", "1.2 ms", "1.4 ms", "9.1 ms"},
                 {9.7e6, 6.1e6, 6.6e6, 8.0e6},
                 {9.9e6, 1.2e6, 1.4e6, 9.1e6}},
};

typedef struct call {
        const ncm_cpu_index *ix;
        const ncm_cpuset *avail;
        ncm_cpuset *out;
        int n;
        bool distributed;
} call;

static void run(void *arg)
{
        call *c = arg;
        int r = c->distributed ? ncm_cpu_take_distributed(c->ix, c->avail, c->n, 2, false, false,
                                                          c->out, NULL)
                               : ncm_cpu_take_packed(c->ix, c->avail, c->n, false, false, c->out,
                                                     NULL);
        if (r < 0)
                abort();
}

static void build(const machine *m, ncm_topo **t, ncm_cpuset **avail)
{
        int numa = m->sockets * m->numa_per_socket, cores = numa * m->cores_per_numa;
        ncm_cpu_info *cpus = malloc(2 * (size_t)cores * sizeof(*cpus));

        if (!cpus || !(*avail = ncm_cpuset_new()))
                abort();
        for (int k = 0; k < cores; k++) {
                int n = k / m->cores_per_numa, s = n / m->numa_per_socket;
                for (int th = 0; th < 2; th++) {
                        int cpu = k + th * cores;
                        cpus[cpu] = (ncm_cpu_info){cpu, k, s, n, s};
                        /* k mod 4: 0 both taken, 1 both free, 2 thread 0 taken, 3 thread 1 */
                        if (k % 4 == 1 || (k % 4 == 2 && th == 1) || (k % 4 == 3 && th == 0))
                                (void)ncm_cpuset_set(*avail, cpu);
                }
        }
        if (ncm_topo_new(cpus, 2 * (size_t)cores, NULL, 0, NULL, t, NULL) < 0)
                abort();
        free(cpus);
}

int main(void)
{
        printf("## CPU allocation (takeByTopology)\n\n"
               "Half of each machine's CPUs taken (per core k: k mod 4 = 0 both threads taken, "
               "1 both free, 2 and 3 one thread taken), the whole free set passed in. Packed is "
               "the default algorithm; distributed is distribute-cpus-across-numa with "
               "full-pcpus-only (CPU groups of 2). Results are kubelet's (the unit tests hold "
               "kubelet's own tables and a CPU-for-CPU comparison with a literal transcription "
               "of its algorithm).\n\n");
        printf("| machine | request | kubelet packed | nodecm packed | × | kubelet distributed "
               "(group 2) | nodecm distributed | × |\n");
        printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++) {
                const machine *m = &machines[i];
                ncm_topo *t = NULL;
                ncm_cpuset *avail = NULL;
                ncm_cpu_index *ix = NULL;

                build(m, &t, &avail);
                if (ncm_cpu_index_new(t, &ix, NULL) < 0)
                        abort();
                for (int r = 0; r < 4 && m->requests[r]; r++) {
                        call c = {ix, avail, ncm_cpuset_new(), m->requests[r], false};
                        char a[32], b[32];
                        double packed, dist;

                        if (!c.out)
                                abort();
                        packed = bench_median_ns(run, &c, 10000000);
                        c.distributed = true;
                        dist = bench_median_ns(run, &c, 10000000);
                        printf("| %s | %d | %s | %s | %.0f× | %s | %s | %.0f× |\n",
                               r == 0 ? m->name : "", m->requests[r], m->kubelet_packed[r],
                               bench_fmt_ns(packed, a), m->kubelet_packed_ns[r] / packed,
                               m->kubelet_dist[r], bench_fmt_ns(dist, b),
                               m->kubelet_dist_ns[r] / dist);
                        ncm_cpuset_free(c.out);
                }
                ncm_cpu_index_free(ix);
                ncm_cpuset_free(avail);
                ncm_topo_free(t);
        }
        return 0;
}
