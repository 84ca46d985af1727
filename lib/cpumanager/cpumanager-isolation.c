/* SPDX-License-Identifier: Apache-2.0 */
/*
 * isolatedCPUs in the static policy (docs/isolation.md). The kubelet's pools stay as they are
 * (the default set keeps isolated CPUs, so cpu_manager_state is the kubelet's file); what
 * changes is which of the free CPUs a container may be given, decided here in one place for
 * the allocation, the hints and the full-pcpus-only count alike, so that the hints describe
 * where the allocation will land:
 *
 *   EXCLUDE         never an isolated CPU;
 *   EXCLUSIVE_ONLY  "require": only isolated CPUs; "prefer": the isolated ones when they alone
 *                   hold enough, else all; no annotation: the non-isolated ones when they alone
 *                   hold enough, else all (an exclusive container may spill onto isolated CPUs,
 *                   which are meant for exclusive containers anyway).
 *
 * "Enough" counts the pod's reusable CPUs too, as the hints' fit test does.
 *
 * An in-place resize (cpumanager-resize.c) stays in the pool the container is in: one that
 * holds only isolated CPUs (or asks "require") grows only onto isolated CPUs, one that holds
 * none never grows onto one, and one that holds both (exclusive-only's spill put it there) may
 * take either, as its admission could. A downsize chooses among the container's own CPUs, so
 * it stays in its pool by itself.
 */
#include <errno.h>
#include <string.h>

#include "cpumanager-policy.h"

static const char *const mode_names[NCM_CPU_ISOLATION_N_MODES] = {
                [NCM_CPU_ISOLATION_IGNORE] = "ignore",
                [NCM_CPU_ISOLATION_EXCLUDE] = "exclude",
                [NCM_CPU_ISOLATION_EXCLUSIVE_ONLY] = "exclusive-only",
};

const char *ncm_cpu_isolation_name(ncm_cpu_isolation m)
{
        return (unsigned)m < NCM_CPU_ISOLATION_N_MODES ? mode_names[m] : NULL;
}

int ncm_cpu_isolation_from_name(const char *name)
{
        for (int k = 0; name && k < NCM_CPU_ISOLATION_N_MODES; k++)
                if (strcmp(name, mode_names[k]) == 0)
                        return k;
        return -1;
}

int ncm_cpu_policy_set_isolation(ncm_cpu_policy *p, ncm_cpu_isolation mode,
                                 const ncm_cpuset *isolated, ncm_error *err)
{
        ncm_cpuset *copy = NULL;

        if ((unsigned)mode >= NCM_CPU_ISOLATION_N_MODES)
                return ncm_error_set(err, EINVAL, "unknown isolation mode %d", (int)mode);
        if (mode != NCM_CPU_ISOLATION_IGNORE) {
                copy = isolated ? ncm_cpuset_dup(isolated) : ncm_cpuset_new();
                if (!copy)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        ncm_cpuset_free(p->isolated);
        p->isolated = copy;
        p->iso = mode;
        return 0;
}

ncm_cpu_isolation ncm_cpu_policy_isolation(const ncm_cpu_policy *p, const ncm_cpuset **isolated)
{
        if (isolated)
                *isolated = p->isolated;
        return p->iso;
}

int ncm__cpu_iso_want(const ncm_pod *pod)
{
        const char *v = pod ? ncm_pod_get_annotation(pod, NCM_POD_ANNOTATION_ISOLATED_CPUS) : NULL;

        if (!v)
                return 0;
        return strcmp(v, "require") == 0 ? 2 : 1;
}

/* |SET ∪ REUSABLE| >= N */
static bool enough(const ncm_cpuset *set, const ncm_cpuset *reusable, int n)
{
        int w = ncm_cpuset_weight(set);
        if (reusable)
                w += ncm_cpuset_weight(reusable) - ncm_cpuset_weight_and(set, reusable);
        return w >= n;
}

void ncm__cpu_iso_restrict(const ncm_cpu_policy *p, const ncm_pod *pod, int n,
                           const ncm_cpuset *reusable, ncm_cpuset *set)
{
        (void)ncm_cpu_policy_isolation_restrict(p, pod, n, reusable, set);
}

int ncm_cpu_policy_isolation_restrict(const ncm_cpu_policy *p, const ncm_pod *pod, int n,
                                      const ncm_cpuset *reusable, ncm_cpuset *set)
{
        ncm_autoptr(ncm_cpuset) tier = NULL;
        int want;

        if (p->iso == NCM_CPU_ISOLATION_IGNORE || !p->isolated)
                return 0;
        if (p->iso == NCM_CPU_ISOLATION_EXCLUDE) {
                ncm_cpuset_andnot(set, set, p->isolated);
                return 1;
        }
        want = ncm__cpu_iso_want(pod);
        if (want == 2) {
                ncm_cpuset_and(set, set, p->isolated);
                return 2;
        }
        tier = ncm_cpuset_new();
        if (!tier)
                return 3; /* out of memory: all of them, as when the tier holds too few */
        if (want == 1)
                ncm_cpuset_and(tier, set, p->isolated);
        else
                ncm_cpuset_andnot(tier, set, p->isolated);
        if (!enough(tier, reusable, n))
                return 3;
        ncm_cpuset_copy(set, tier);
        return want == 1 ? 2 : 1;
}

static bool pod_has_exclusive(const ncm_pod *pod)
{
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (ncm_cpu_guaranteed_cpus(pod, &pod->init_containers[i]) > 0)
                        return true;
        for (size_t i = 0; i < pod->n_containers; i++)
                if (ncm_cpu_guaranteed_cpus(pod, &pod->containers[i]) > 0)
                        return true;
        return false;
}

int ncm__cpu_iso_check(const ncm_cpu_policy *p, const ncm_pod *pod, const ncm_container *c, int n,
                       const ncm_cpuset *available, ncm_error *err)
{
        if (p->iso == NCM_CPU_ISOLATION_IGNORE || ncm__cpu_iso_want(pod) != 2)
                return 0;
        if (p->iso == NCM_CPU_ISOLATION_EXCLUDE)
                return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                     "%s: require: isolatedCPUs is exclude, which gives isolated "
                                     "CPUs to no container",
                                     NCM_POD_ANNOTATION_ISOLATED_CPUS);
        /* a pod whose exclusive containers get isolated CPUs may have others on the shared
         * pool (a sidecar of 200m); one with none cannot run on isolated CPUs at all */
        if (n == 0 && !pod_has_exclusive(pod))
                return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                     "%s: require: no container of the pod gets exclusive CPUs "
                                     "(%s), and only exclusive containers run on isolated CPUs",
                                     NCM_POD_ANNOTATION_ISOLATED_CPUS,
                                     pod->qos == NCM_QOS_GUARANTEED
                                                     ? "none asks for a whole number of CPUs"
                                     : pod->qos == NCM_QOS_BURSTABLE ? "a Burstable pod"
                                                                     : "a BestEffort pod");
        if (n == 0)
                return 0;
        if (available && ncm_cpuset_weight(available) < n) {
                ncm_autofree char *iso = ncm_cpuset_format_list(p->isolated);
                return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                     "%s: require: not enough free isolated CPUs: requested=%d, "
                                     "available=%d (isolated CPUs %s)",
                                     NCM_POD_ANNOTATION_ISOLATED_CPUS, n,
                                     ncm_cpuset_weight(available), iso ? iso : "");
        }
        return 0;
}

/* Which pool a resize of a container of POD holding HAVE grows in (the restrict tiers). */
static int resize_tier(const ncm_cpu_policy *p, const ncm_pod *pod, const ncm_cpuset *have)
{
        if (p->iso == NCM_CPU_ISOLATION_IGNORE || !p->isolated)
                return 0;
        if (p->iso == NCM_CPU_ISOLATION_EXCLUDE)
                return 1;
        if (ncm__cpu_iso_want(pod) == 2 ||
            (have && !ncm_cpuset_is_empty(have) && ncm_cpuset_is_subset(have, p->isolated)))
                return 2;
        if (!have || !ncm_cpuset_intersects(have, p->isolated))
                return 1;
        return 3;
}

int ncm_cpu_policy_isolation_resize_pool(const ncm_cpu_policy *p, const ncm_pod *pod,
                                         const ncm_cpuset *have, ncm_cpuset *set)
{
        int tier = resize_tier(p, pod, have);

        if (tier == 1)
                ncm_cpuset_andnot(set, set, p->isolated);
        else if (tier == 2)
                ncm_cpuset_and(set, set, p->isolated);
        return tier;
}

int ncm__cpu_iso_resize_check(const ncm_cpu_policy *p, const ncm_pod *pod, const ncm_container *c,
                              const ncm_cpuset *have, int more, const ncm_cpuset *pool,
                              ncm_error *err)
{
        ncm_autofree char *iso = NULL, *hs = NULL;
        int tier = resize_tier(p, pod, have), free_n = ncm_cpuset_weight(pool);

        /* both pools (or none): the allocator's own refusal, if any */
        if ((tier != 1 && tier != 2) || more <= free_n)
                return 0;
        iso = ncm_cpuset_format_list(p->isolated);
        hs = have ? ncm_cpuset_format_list(have) : NULL;
        if (tier == 2)
                return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                     "isolatedCPUs %s: resize of %s: it is in the isolated pool "
                                     "(holds %s) and grows only onto isolated CPUs: %d more "
                                     "requested, %d free isolated (isolated CPUs %s)",
                                     ncm_cpu_isolation_name(p->iso), c->name, hs ? hs : "", more,
                                     free_n, iso ? iso : "");
        return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                             "isolatedCPUs %s: resize of %s: it holds no isolated CPU and never "
                             "grows onto one: %d more requested, %d free that are not isolated "
                             "(isolated CPUs %s)",
                             ncm_cpu_isolation_name(p->iso), c->name, more, free_n, iso ? iso : "");
}
