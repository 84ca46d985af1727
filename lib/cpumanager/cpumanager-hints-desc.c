/* SPDX-License-Identifier: Apache-2.0 */
/*
 * generateCPUTopologyHints as a description (include/nodecm/hintdesc.h): the same inputs
 * ncm_cpu_hints_generate() walks 2^N masks with, counted once per NUMA node.
 *
 *   walked nodes  the NUMA nodes with CPUs, ascending (kubelet: CPUDetails.NUMANodes())
 *   available     each available CPU on its node (CPUs the index does not know count nowhere)
 *   required      the node of each reusable CPU (Go's map lookup of an unknown CPU: node 0)
 *   base          the number of reusable CPUs
 *   capacity      every CPU of a node (CPUsInNUMANodes, for minAffinitySize)
 *   sockets       align-by-socket: the sockets of each node, NumNUMANodes / NumSockets per
 *                 socket
 */
#include <errno.h>
#include <stdlib.h>

#include "cpumanager-alloc.h"

int ncm_cpu_hints_describe(const ncm_cpu_index *ix, const ncm_cpu_options *o,
                           const ncm_cpuset *available, const ncm_cpuset *reusable, int request,
                           ncm_hint_desc **ret, ncm_error *err)
{
        ncm_autoptr(ncm_hint_desc) d = NULL;
        int n = ix->n[K_NUMA], r, ids[NCM_BITMASK_MAX_BITS] = {0};
        int64_t per_node[NCM_BITMASK_MAX_BITS] = {0};

        /* the generator's check and text: ids fit a 64-bit mask (so there are at most 64) */
        if (!ix->numa_ids_fit)
                return ncm_error_set(err, EINVAL,
                                     "NUMA node %lld: bit number must be in range 0-63",
                                     (long long)(ix->id[K_NUMA][0] < 0 ? ix->id[K_NUMA][0]
                                                                       : ix->id[K_NUMA][n - 1]));
        for (int e = 0; e < n; e++)
                ids[e] = (int)ix->id[K_NUMA][e];
        r = ncm_hint_desc_new(ids, (size_t)n, request, &d, err);
        if (r < 0)
                return r;
        for (int e = 0; e < n; e++) {
                ncm_bitmask node = UINT64_C(1) << ids[e];
                r = ncm_hint_desc_add_capacity(
                                d, node, ix->cpus[K_NUMA].off[e + 1] - ix->cpus[K_NUMA].off[e]);
                if (r < 0)
                        return ncm_error_set(err, -r, "out of memory");
        }
        NCM_CPUSET_FOREACH(cpu, available)
        {
                if (cpu <= ix->max_cpu && ix->cpu_dense[cpu] >= 0)
                        per_node[ix->of[K_NUMA][ix->cpu_dense[cpu]]]++;
        }
        for (int e = 0; e < n; e++) {
                r = ncm_hint_desc_add_available(d, UINT64_C(1) << ids[e], per_node[e]);
                if (r < 0)
                        return ncm_error_set(err, -r, "out of memory");
        }
        if (reusable) {
                NCM_CPUSET_FOREACH(cpu, reusable)
                {
                        int numa = 0;
                        if (cpu <= ix->max_cpu && ix->cpu_dense[cpu] >= 0)
                                numa = ids[ix->of[K_NUMA][ix->cpu_dense[cpu]]];
                        r = ncm_hint_desc_require(d, UINT64_C(1) << numa);
                        if (r < 0)
                                return ncm_error_set(err, -r, "out of memory");
                        ncm_hint_desc_add_base(d, 1);
                }
        }
        if (o && o->align_by_socket && ix->num_sockets > 0 && ix->num_numa / ix->num_sockets > 0) {
                const ix_rel *ns = &ix->r[R_NUMA_SOCK];
                r = ncm_hint_desc_set_socket_alignment(d, ix->num_numa / ix->num_sockets,
                                                       ix->n[K_SOCK]);
                for (int e = 0; e < n && r >= 0; e++)
                        for (int p = ns->off[e]; p < ns->off[e + 1] && r >= 0; p++)
                                r = ncm_hint_desc_add_socket(d, ids[e], ns->to_e[p]);
                if (r < 0)
                        return ncm_error_set(err, -r, "socket alignment: %s", ncm_strerror(-r));
        }
        r = ncm_hint_desc_seal(d, err);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(d);
        return 0;
}
