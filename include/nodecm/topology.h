/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The machine as the kubelet's CPU and topology managers see it: a table of online CPUs
 * {cpu, core, socket, numa, uncore} plus the list of NUMA nodes with their distances.
 *
 * Meaning of the ids (kubelet/cadvisor semantics):
 *  - core:   the lowest CPU id among the core's online threads (unique on the machine);
 *  - socket: physical_package_id;
 *  - numa:   the NUMA node whose cpulist holds the CPU;
 *  - uncore: the id of the CPU's last-level (L3) cache, or the socket id when there is none.
 *
 * A topology is immutable once built; every query is read-only and thread-safe.
 */
#ifndef NODECM_TOPOLOGY_H
#define NODECM_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/cpuset.h>
#include <nodecm/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncm_cpu_info {
        int cpu;
        int core;
        int socket;
        int numa;
        int uncore;
} ncm_cpu_info;

typedef struct ncm_topo ncm_topo;

/*
 * Build a topology from a CPU table (any order; ids 0..NCM_CPUSET_MAX_CPUS-1, no duplicates)
 * and NUMA nodes. NUMA_IDS lists every NUMA node (including CPU-less ones); when NULL the nodes
 * are those of the CPUs. DISTANCES is a NNUMA x NNUMA row-major matrix in NUMA_IDS order, or
 * NULL (then 10 on the diagonal and 20 elsewhere, as Linux reports without a SLIT). Every CPU's
 * numa must be in NUMA_IDS. -EINVAL with a message naming the offending entry otherwise.
 */
NCM_API int ncm_topo_new(const ncm_cpu_info *cpus, size_t ncpus, const int *numa_ids,
                         size_t nnuma, const uint32_t *distances, ncm_topo **ret,
                         ncm_error *err);
NCM_API ncm_topo *ncm_topo_free(ncm_topo *t);
NCM_DEFINE_AUTOPTR(ncm_topo, ncm_topo_free)

/* The CPU table sorted by cpu id; *N receives its length. */
NCM_API const ncm_cpu_info *ncm_topo_cpus(const ncm_topo *t, size_t *n);
/* The entry of CPU, or NULL when the CPU is not in the topology. */
NCM_API const ncm_cpu_info *ncm_topo_cpu(const ncm_topo *t, int cpu);

/* kubelet's CPUTopology counts: NumCPUs, NumCores, NumSockets, NumNUMANodes (nodes that
 * have CPUs), NumUncoreCache. */
NCM_API int ncm_topo_num_cpus(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_num_cores(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_num_sockets(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_num_numa_nodes(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_num_uncore_caches(const ncm_topo *t) NCM_PURE;
/* kubelet's derived sizes (integer division; 0 when the denominator is 0). */
NCM_API int ncm_topo_cpus_per_core(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_cpus_per_socket(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_cpus_per_uncore(const ncm_topo *t) NCM_PURE;

/* Every NUMA node (CPU-less ones too), ascending; *N receives the count. */
NCM_API const int *ncm_topo_numa_ids(const ncm_topo *t, size_t *n);
/* Distance between NUMA nodes A and B (ids), or -1 when either is unknown. */
NCM_API int ncm_topo_numa_distance(const ncm_topo *t, int a, int b) NCM_PURE;

/* All CPUs of the topology. */
NCM_API void ncm_topo_all_cpus(const ncm_topo *t, ncm_cpuset *out);
/* CPUs whose numa / socket / core / uncore id is in IDS (an id set). OUT is overwritten. */
NCM_API void ncm_topo_cpus_in_numa(const ncm_topo *t, const ncm_cpuset *ids, ncm_cpuset *out);
NCM_API void ncm_topo_cpus_in_sockets(const ncm_topo *t, const ncm_cpuset *ids, ncm_cpuset *out);
NCM_API void ncm_topo_cpus_in_cores(const ncm_topo *t, const ncm_cpuset *ids, ncm_cpuset *out);
NCM_API void ncm_topo_cpus_in_uncore(const ncm_topo *t, const ncm_cpuset *ids, ncm_cpuset *out);

#ifdef __cplusplus
}
#endif
#endif
