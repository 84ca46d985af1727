/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPUs near the container's devices (nodecm's deviceLocalCPUs: prefer). The kubelet's static
 * policy takes the hint's CPUs first and the rest from anywhere, each part by takeByTopology;
 * this adds steps in front of the hint's part, inside it: the devices' local CPUs, then the
 * CPUs of the uncore caches they sit in. Each step is the same takeByTopology with the same
 * options, so the packing (whole NUMA nodes, sockets, caches, cores, then single CPUs) is the
 * kubelet's within each step, and the CPUs left for the later steps are what the earlier ones
 * did not need. Without devices the steps take nothing and the allocation is the kubelet's,
 * call for call.
 *
 * Under full-pcpus-only the kubelet's admission has checked that the request is whole cores
 * and that enough free whole cores exist; a step then takes whole free cores only (K rounded
 * down to whole cores), so a core never ends up split between this container's steps.
 */
#include <errno.h>
#include <stdlib.h>

#include "cpumanager-alloc.h"
#include "cpumanager-policy.h"

void ncm_cpu_near_sets(const ncm_topo *t, const ncm_cpu_near *near, size_t n, ncm_cpuset *local,
                       ncm_cpuset *uncore)
{
        size_t nu = 0;

        ncm_cpuset_zero(local);
        ncm_cpuset_zero(uncore);
        for (size_t i = 0; i < n; i++)
                if (near[i].local)
                        ncm_cpuset_or(local, local, near[i].local);
        ncm_cpuset_and(local, local, ncm_topo_all_cpus_ref(t));
        (void)ncm_topo_level_ids(t, NCM_TOPO_UNCORE, &nu);
        for (size_t k = 0; k < nu; k++) {
                const ncm_cpuset *cs = ncm_topo_level_cpus(t, NCM_TOPO_UNCORE, k);
                if (ncm_cpuset_intersects(cs, local))
                        ncm_cpuset_or(uncore, uncore, cs);
        }
}

/* The CPUs of FREE's cores whose every thread is in FREE, into OUT. */
static void whole_cores(const ncm_topo *t, const ncm_cpuset *free, ncm_cpuset *out)
{
        ncm_cpuset_zero(out);
        NCM_CPUSET_FOREACH(cpu, free)
        {
                const ncm_cpu_info *ci = ncm_topo_cpu(t, cpu);
                size_t nt = 0;
                const int *th;
                bool whole = true;
                if (!ci || ci->core != cpu)
                        continue; /* each core once, from its lowest thread */
                th = ncm_topo_core_cpus(t, ci->core, &nt);
                for (size_t k = 0; k < nt && whole; k++)
                        whole = ncm_cpuset_isset(free, th[k]);
                for (size_t k = 0; whole && k < nt; k++)
                        (void)ncm_cpuset_set(out, th[k]);
        }
}

int ncm__cpu_take_near(const ncm_cpu_policy *p, const ncm_topo *t, const ncm_cpuset *scope,
                       const ncm_cpu_near *near, size_t n_near, int want, ncm_cpuset *result,
                       ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) local = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) uncore = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) free = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) part = ncm_cpuset_new();
        const ncm_cpuset *tiers[2];
        int group = p->ix->cpus_per_core > 0 ? p->ix->cpus_per_core : 1;

        if (!local || !uncore || !free || !part)
                return ncm_error_set(err, ENOMEM, "out of memory");
        ncm_cpu_near_sets(t, near, n_near, local, uncore);
        tiers[0] = local;
        tiers[1] = uncore;
        for (size_t i = 0; i < NCM_ELEMENTSOF(tiers); i++) {
                int left = want - ncm_cpuset_weight(result), k;
                int r;
                if (left <= 0)
                        break;
                ncm_cpuset_and(free, tiers[i], scope);
                ncm_cpuset_andnot(free, free, result);
                if (p->opts.full_pcpus_only) {
                        ncm_cpuset_copy(part, free);
                        whole_cores(t, part, free);
                }
                k = ncm_cpuset_weight(free);
                if (k > left)
                        k = left;
                if (p->opts.full_pcpus_only)
                        k -= k % group;
                if (k <= 0)
                        continue;
                r = ncm__cpu_take_traced(p->ix, &p->opts, free, k, p->trace.fn ? &p->trace : NULL,
                                         part, err);
                if (r < 0)
                        return r;
                ncm_cpuset_or(result, result, part);
        }
        return 0;
}
