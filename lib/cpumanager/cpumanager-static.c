/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubelet's static policy (policy_static.go, spec §4): reserved CPUs, the pools, Start,
 * Allocate, RemoveContainer, cpusToReuse and the topology hints.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpumanager/state-internal.h"
#include "cpumanager-alloc.h"
#include "cpumanager-policy.h"

typedef struct static_policy {
        ncm_cpu_policy base; /* first: the public handle points here */
        const ncm_topo *topo;
        int group;                     /* cpuGroupSize = CPUsPerCore */
        ncm_cpuset *all;               /* topo.CPUDetails.CPUs() */
        ncm_cpuset *reserved_physical; /* every core that holds a reserved CPU */
        /*
         * cpusToReuse: kubelet's map keeps one pod at a time (updateCPUsToReuse drops every
         * other pod), so a UID and a set are enough. reuse_pod NULL: no entry.
         */
        char *reuse_pod;
        ncm_cpuset *reuse;
} static_policy;

static static_policy *sp(ncm_cpu_policy *p)
{
        return (static_policy *)p;
}

static const static_policy *csp(const ncm_cpu_policy *p)
{
        return (const static_policy *)p;
}

static void static_destroy(ncm_cpu_policy *p)
{
        static_policy *s = sp(p);
        ncm_cpuset_free(s->all);
        ncm_cpuset_free(s->reserved_physical);
        ncm_cpuset_free(s->reuse);
        free(s->reuse_pod);
}

/* ------------------------------------------------------------------------------------------
 * Pools (spec §4.2)
 */

/* isolatedCPUs exclude takes isolated CPUs out of every pool (cpumanager-isolation.c) */
static void static_allocatable(const ncm_cpu_policy *p, ncm_cpuset *out)
{
        ncm_cpuset_andnot(out, csp(p)->all, p->reserved);
        if (p->iso == NCM_CPU_ISOLATION_EXCLUDE)
                ncm__cpu_iso_restrict(p, NULL, 0, NULL, out);
}

static void static_available(const ncm_cpu_policy *p, const ncm_cpu_state *s, ncm_cpuset *out)
{
        ncm_cpuset_andnot(out, ncm_cpu_state_default(s), p->reserved);
        if (p->iso == NCM_CPU_ISOLATION_EXCLUDE)
                ncm__cpu_iso_restrict(p, NULL, 0, NULL, out);
}

static void static_available_physical(const ncm_cpu_policy *p, const ncm_cpu_state *s,
                                      ncm_cpuset *out)
{
        ncm_cpuset_andnot(out, ncm_cpu_state_default(s), csp(p)->reserved_physical);
}

/* ------------------------------------------------------------------------------------------
 * Start (spec §4.3): the state module implements validateState with kubelet's texts.
 */

static int static_start(ncm_cpu_policy *p, ncm_cpu_state *s, ncm_error *err)
{
        int r = ncm_cpu_state_validate(s, sp(p)->all, p->reserved, p->opts.strict_cpu_reservation,
                                       err);
        return r < 0 ? r : 0;
}

/* ------------------------------------------------------------------------------------------
 * cpusToReuse (spec §4.6)
 */

static const ncm_cpuset *reusable_for(const static_policy *s, const char *uid)
{
        if (s->reuse_pod && strcmp(s->reuse_pod, uid) == 0)
                return s->reuse;
        return NULL;
}

static int update_reuse(static_policy *s, const ncm_pod *pod, const ncm_container *c,
                        const ncm_cpuset *set, ncm_error *err)
{
        if (!s->reuse_pod || strcmp(s->reuse_pod, pod->uid) != 0) {
                char *uid = strdup(pod->uid);
                if (!uid)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                free(s->reuse_pod);
                s->reuse_pod = uid;
                ncm_cpuset_zero(s->reuse);
        }
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                if (strcmp(pod->init_containers[i].name, c->name) != 0)
                        continue;
                /* a sidecar keeps running beside the app: it neither lends nor borrows */
                if (pod->init_containers[i].sidecar)
                        break;
                ncm_cpuset_or(s->reuse, s->reuse, set);
                return 0;
        }
        ncm_cpuset_andnot(s->reuse, s->reuse, set);
        return 0;
}

static const ncm_cpuset *static_reuse(const ncm_cpu_policy *p, const char **ret_pod_uid)
{
        *ret_pod_uid = csp(p)->reuse_pod;
        return csp(p)->reuse;
}

static int static_reuse_set(ncm_cpu_policy *p, const char *pod_uid, const ncm_cpuset *set,
                            ncm_error *err)
{
        static_policy *s = sp(p);
        char *uid = NULL;

        /* copy first, so that running out of memory leaves the policy as it was */
        if (pod_uid && !(uid = strdup(pod_uid)))
                return ncm_error_set(err, ENOMEM, "out of memory");
        free(s->reuse_pod);
        s->reuse_pod = uid;
        if (uid)
                ncm_cpuset_copy(s->reuse, set);
        else
                ncm_cpuset_zero(s->reuse);
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * Allocate (spec §4.4, §4.5)
 */

static bool pod_level_skipped(const ncm_pod *pod)
{
        /* PodLevelResources on, PodLevelResourceManagers off (newest kubelet defaults) */
        return ncm_pod_level_resources_set(pod);
}

/*
 * allocateCPUs: the hint's CPUs first, the rest from anywhere; updates the default set. With
 * NEAR (ncm_cpu_policy_allocate_near) the CPUs near those devices come first within the hint's
 * (within all, without a hint); with none every call is the kubelet's.
 *
 * isolatedCPUs and NEAR compose in that order: isolation decides which free CPUs are
 * candidates at all (ncm__cpu_iso_restrict, before anything is taken), locality only orders
 * preference among those candidates. A device's local CPUs outside the container's isolation
 * pool are never taken for it; the pool's CPUs nearest the devices are taken first.
 */
static int allocate_cpus(static_policy *s, ncm_cpu_state *st, const ncm_pod *pod,
                         const ncm_container *c, int n, const ncm_hint *affinity,
                         const ncm_cpuset *reusable, const ncm_cpu_near *near, size_t n_near,
                         ncm_cpuset *result, ncm_error *err)
{
        const ncm_cpu_index *ix = s->base.ix;
        const ncm_cpu_options *o = &s->base.opts;
        ncm_autoptr(ncm_cpuset) allocatable = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) part = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) tmp = ncm_cpuset_new();
        int r;

        if (!allocatable || !part || !tmp)
                return ncm_error_set(err, ENOMEM, "out of memory");
        ncm_cpuset_andnot(allocatable, ncm_cpu_state_default(st), s->base.reserved);
        if (reusable)
                ncm_cpuset_or(allocatable, allocatable, reusable);
        ncm__cpu_iso_restrict(&s->base, pod, n, reusable, allocatable);
        r = ncm__cpu_iso_check(&s->base, pod, c, n, allocatable, err);
        if (r < 0)
                return r;
        ncm_cpuset_zero(result);

        if (affinity && !affinity->any) {
                ncm_autoptr(ncm_cpuset) aligned = ncm_cpuset_new();
                if (!aligned)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                for (int e = 0; e < ix->n[K_NUMA]; e++) {
                        if (!ncm_bitmask_isset(affinity->numa, (int)ix->id[K_NUMA][e]))
                                continue;
                        if (o->align_by_socket) {
                                /* the whole sockets of the hint's NUMA nodes */
                                const ix_rel *ns = &ix->r[R_NUMA_SOCK];
                                for (int q = ns->off[e]; q < ns->off[e + 1]; q++) {
                                        const ncm_cpuset *sock = ncm_topo_socket_cpus(
                                                        s->topo, (int)ix->id[K_SOCK][ns->to_e[q]]);
                                        ncm_cpuset_and(tmp, allocatable, sock);
                                        ncm_cpuset_or(aligned, aligned, tmp);
                                }
                        } else {
                                ncm_cpuset_and(tmp, allocatable,
                                               ncm_topo_numa_cpus(s->topo, (int)ix->id[K_NUMA][e]));
                                ncm_cpuset_or(aligned, aligned, tmp);
                        }
                }
                if (n_near) {
                        r = ncm__cpu_take_near(&s->base, s->topo, aligned, near, n_near, n, result,
                                               err);
                        if (r < 0)
                                return r;
                        ncm_cpuset_andnot(aligned, aligned, result);
                }
                int k = ncm_cpuset_weight(aligned);
                if (n - ncm_cpuset_weight(result) < k)
                        k = n - ncm_cpuset_weight(result);
                r = ncm__cpu_take_traced(ix, o, aligned, k,
                                         s->base.trace.fn ? &s->base.trace : NULL, part, err);
                if (r < 0)
                        return r;
                ncm_cpuset_or(result, result, part);
        } else if (n_near) {
                r = ncm__cpu_take_near(&s->base, s->topo, allocatable, near, n_near, n, result,
                                       err);
                if (r < 0)
                        return r;
        }
        ncm_cpuset_andnot(tmp, allocatable, result);
        r = ncm__cpu_take_traced(ix, o, tmp, n - ncm_cpuset_weight(result),
                                 s->base.trace.fn ? &s->base.trace : NULL, part, err);
        if (r < 0)
                return r;
        ncm_cpuset_or(result, result, part);

        ncm_cpuset_andnot(tmp, ncm_cpu_state_default(st), result);
        return ncm_cpu_state_set_default(st, tmp, err);
}

static int smt_not_multiple(ncm_error *err, int n, int group)
{
        return ncm_error_set(err, NCM_E_ADMISSION,
                             "SMT Alignment Error: requested %d cpus not multiple cpus per core "
                             "= %d",
                             n, group);
}

static int static_allocate_near(ncm_cpu_policy *p, ncm_cpu_state *st, const ncm_pod *pod,
                                const ncm_container *c, const ncm_hint *affinity,
                                const ncm_cpu_near *near, size_t n_near, ncm_error *err)
{
        static_policy *s = sp(p);
        const ncm_cpuset *have;
        ncm_autoptr(ncm_cpuset) result = NULL;
        int n = ncm_cpu_guaranteed_cpus(pod, c), r;

        if (n == 0 || pod_level_skipped(pod))
                return ncm__cpu_iso_check(p, pod, c, 0, NULL, err);
        if (p->opts.full_pcpus_only) {
                ncm_autoptr(ncm_cpuset) phys = ncm_cpuset_new();
                int avail;
                if (!phys)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                if (n % s->group != 0)
                        return smt_not_multiple(err, n, s->group);
                static_available_physical(p, st, phys);
                ncm__cpu_iso_restrict(p, pod, n, reusable_for(s, pod->uid), phys);
                avail = ncm_cpuset_weight(phys);
                if (n > avail)
                        return ncm_error_set(err, NCM_E_ADMISSION,
                                             "SMT Alignment Error: not enough free physical "
                                             "CPUs: available physical CPUs = %d, requested "
                                             "CPUs = %d, CPUs per core = %d",
                                             avail, n, s->group);
        }
        have = ncm_cpu_state_get(st, pod->uid, c->name);
        if (have) {
                ncm_autoptr(ncm_cpuset) copy = ncm_cpuset_dup(have);
                if (!copy)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                return update_reuse(s, pod, c, copy, err);
        }
        result = ncm_cpuset_new();
        if (!result)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = allocate_cpus(s, st, pod, c, n, affinity, reusable_for(s, pod->uid), near, n_near,
                          result, err);
        if (r < 0)
                return r;
        r = ncm_cpu_state_set(st, pod->uid, c->name, result, err);
        if (r < 0)
                return r;
        return update_reuse(s, pod, c, result, err);
}

static int static_allocate(ncm_cpu_policy *p, ncm_cpu_state *st, const ncm_pod *pod,
                           const ncm_container *c, const ncm_hint *affinity, ncm_error *err)
{
        return static_allocate_near(p, st, pod, c, affinity, NULL, 0, err);
}

/* ------------------------------------------------------------------------------------------
 * RemoveContainer (spec §4.9)
 */

static int static_remove(ncm_cpu_policy *p, ncm_cpu_state *st, const char *pod_uid,
                         const char *name, ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) in_use = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) release = NULL;
        const ncm_cpuset *set;
        size_t pi;
        int r;

        if (!in_use)
                return ncm_error_set(err, ENOMEM, "out of memory");
        /* the pod's siblings only: found by its key, not by a walk over every pod */
        if (ncm__cpu_state_find_pod(st, pod_uid, &pi))
                for (size_t i = 0; i < ncm_cpu_state_pod_num_containers(st, pi); i++)
                        if (strcmp(ncm_cpu_state_container_name(st, pi, i), name) != 0)
                                ncm_cpuset_or(in_use, in_use,
                                              ncm_cpu_state_container_cpus(st, pi, i));
        set = ncm_cpu_state_get(st, pod_uid, name);
        if (!set)
                return 0;
        release = ncm_cpuset_dup(set);
        if (!release)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = ncm_cpu_state_delete(st, pod_uid, name, err);
        if (r < 0)
                return r;
        /* CPUs a sibling still holds (inherited from an init container) stay out */
        ncm_cpuset_andnot(release, release, in_use);
        ncm_cpuset_or(release, release, ncm_cpu_state_default(st));
        r = ncm_cpu_state_set_default(st, release, err);
        return r < 0 ? r : 0;
}

/* ------------------------------------------------------------------------------------------
 * Hints (spec §4.7)
 */

/*
 * Where hints go: generated into a list, or described (NCM_TM_MERGE_LAZY's input). The
 * decisions before generation (no preference, cannot be satisfied, which CPUs) are shared.
 */
typedef struct hint_sink {
        ncm_hint_list *list;  /* list mode */
        ncm_hint_desc **desc; /* description mode: NULL for no preference */
} hint_sink;

static int sink_nil(hint_sink *k)
{
        if (k->list)
                k->list->nil = true;
        else
                *k->desc = NULL;
        return 0;
}

static int sink_generate(static_policy *s, hint_sink *k, const ncm_cpuset *avail,
                         const ncm_cpuset *reusable, int req, ncm_error *err)
{
        const ncm_cpu_policy *p = &s->base;
        if (k->list)
                return ncm_cpu_hints_generate(p->ix, &p->opts, avail, reusable, req, k->list, err);
        return ncm_cpu_hints_describe(p->ix, &p->opts, avail, reusable, req, k->desc, err);
}

/* An empty list: the container cannot be satisfied. */
static int sink_empty(static_policy *s, hint_sink *k, ncm_error *err)
{
        ncm_autoptr(ncm_hint_desc) d = NULL;
        int r;

        if (k->list) {
                k->list->nil = false;
                return 0;
        }
        r = ncm_hint_desc_new(NULL, 0, 0, &d, err);
        if (r < 0)
                return r;
        ncm_hint_desc_set_empty(d);
        r = ncm_hint_desc_seal(d, err);
        if (r < 0)
                return r;
        (void)s;
        *k->desc = NCM_TAKE_PTR(d);
        return 0;
}

static int hints_into(ncm_cpu_policy *p, const ncm_cpu_state *st, const ncm_pod *pod,
                      const ncm_container *c, hint_sink *k, ncm_error *err)
{
        static_policy *s = sp(p);
        const ncm_cpuset *have;
        ncm_autoptr(ncm_cpuset) avail = NULL;
        int req = ncm_cpu_guaranteed_cpus(pod, c);

        if (req == 0 || pod_level_skipped(pod))
                return sink_nil(k);
        if (k->list)
                k->list->nil = false;
        have = ncm_cpu_state_get(st, pod->uid, c->name);
        if (have) {
                /* a container holding another number of CPUs cannot be satisfied */
                if (ncm_cpuset_weight(have) != req)
                        return sink_empty(s, k, err);
                return sink_generate(s, k, have, NULL, req, err);
        }
        avail = ncm_cpuset_new();
        if (!avail)
                return ncm_error_set(err, ENOMEM, "out of memory");
        static_available(p, st, avail);
        ncm__cpu_iso_restrict(p, pod, req, reusable_for(s, pod->uid), avail);
        return sink_generate(s, k, avail, reusable_for(s, pod->uid), req, err);
}

static int pod_hints_into(ncm_cpu_policy *p, const ncm_cpu_state *st, const ncm_pod *pod,
                          hint_sink *k, ncm_error *err)
{
        static_policy *s = sp(p);
        ncm_autoptr(ncm_cpuset) assigned = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) avail = ncm_cpuset_new();
        int req = ncm_cpu_pod_guaranteed_cpus(pod);

        if (!assigned || !avail)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (req == 0 || pod_level_skipped(pod))
                return sink_nil(k);
        if (k->list)
                k->list->nil = false;
        for (size_t i = 0; i < pod->n_init_containers + pod->n_containers; i++) {
                const ncm_container *c =
                                i < pod->n_init_containers
                                                ? &pod->init_containers[i]
                                                : &pod->containers[i - pod->n_init_containers];
                const ncm_cpuset *have = ncm_cpu_state_get(st, pod->uid, c->name);
                if (!have)
                        continue;
                if (ncm_cpuset_weight(have) != ncm_cpu_guaranteed_cpus(pod, c))
                        return sink_empty(s, k, err);
                ncm_cpuset_or(assigned, assigned, have);
        }
        if (ncm_cpuset_weight(assigned) == req)
                return sink_generate(s, k, assigned, NULL, req, err);
        static_available(p, st, avail);
        if (reusable_for(s, pod->uid))
                ncm_cpuset_or(assigned, assigned, reusable_for(s, pod->uid));
        ncm__cpu_iso_restrict(p, pod, req, assigned, avail);
        return sink_generate(s, k, avail, assigned, req, err);
}

static int static_hints(ncm_cpu_policy *p, const ncm_cpu_state *st, const ncm_pod *pod,
                        const ncm_container *c, ncm_hint_list *out, ncm_error *err)
{
        hint_sink k = {out, NULL};
        return hints_into(p, st, pod, c, &k, err);
}

static int static_pod_hints(ncm_cpu_policy *p, const ncm_cpu_state *st, const ncm_pod *pod,
                            ncm_hint_list *out, ncm_error *err)
{
        hint_sink k = {out, NULL};
        return pod_hints_into(p, st, pod, &k, err);
}

static int static_hints_describe(ncm_cpu_policy *p, const ncm_cpu_state *st, const ncm_pod *pod,
                                 const ncm_container *c, ncm_hint_desc **ret, ncm_error *err)
{
        hint_sink k = {NULL, ret};
        return hints_into(p, st, pod, c, &k, err);
}

static int static_pod_hints_describe(ncm_cpu_policy *p, const ncm_cpu_state *st, const ncm_pod *pod,
                                     ncm_hint_desc **ret, ncm_error *err)
{
        hint_sink k = {NULL, ret};
        return pod_hints_into(p, st, pod, &k, err);
}

/* ------------------------------------------------------------------------------------------
 * NewStaticPolicy (spec §4.1)
 */

static const ncm_cpu_policy_ops static_ops = {
                .name = "static",
                .destroy = static_destroy,
                .start = static_start,
                .allocate = static_allocate,
                .allocate_near = static_allocate_near,
                .remove_container = static_remove,
                .hints = static_hints,
                .pod_hints = static_pod_hints,
                .hints_describe = static_hints_describe,
                .pod_hints_describe = static_pod_hints_describe,
                .allocatable = static_allocatable,
                .available = static_available,
                .available_physical = static_available_physical,
                .reuse = static_reuse,
                .reuse_set = static_reuse_set,
};

static void policy_freep(ncm_cpu_policy **p)
{
        ncm_cpu_policy_free(*p);
}

int ncm_cpu_static_policy_new(const ncm_topo *t, int num_reserved, const ncm_cpuset *reserved,
                              const ncm_cpu_policy_config *cfg, ncm_cpu_policy **ret,
                              ncm_error *err)
{
        __attribute__((cleanup(policy_freep))) ncm_cpu_policy *p = NULL;
        static_policy *s;
        ncm_cpu_options opts;
        int r;

        r = ncm_cpu_options_parse_version(cfg->options, cfg->noptions, cfg->gates,
                                          cfg->kubelet_version, &opts, err);
        if (r < 0)
                return r;
        r = ncm_cpu_options_validate(&opts, t, cfg->topology_manager_policy, err);
        if (r < 0)
                return r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return ncm_error_set(err, ENOMEM, "out of memory");
        p = &s->base;
        p->ops = &static_ops;
        p->opts = opts;
        s->topo = t;
        p->reserved = ncm_cpuset_new();
        s->all = ncm_cpuset_new();
        s->reserved_physical = ncm_cpuset_new();
        s->reuse = ncm_cpuset_new();
        if (!p->reserved || !s->all || !s->reserved_physical || !s->reuse)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = ncm_cpu_index_new(t, &p->ix, err);
        if (r < 0)
                return r;
        s->group = p->ix->cpus_per_core;
        ncm_topo_all_cpus(t, s->all);

        if (reserved && !ncm_cpuset_is_empty(reserved))
                ncm_cpuset_copy(p->reserved, reserved);
        else if (ncm_cpu_take(p->ix, &opts, s->all, num_reserved, p->reserved, NULL) < 0)
                ncm_cpuset_zero(p->reserved); /* kubelet ignores the error: size check below */
        if (ncm_cpuset_weight(p->reserved) != num_reserved) {
                ncm_autofree char *txt = ncm_cpuset_format_list(p->reserved);
                return ncm_error_set(err, EINVAL,
                                     "[cpumanager] unable to reserve the required amount of "
                                     "CPUs (size of %s did not equal %d)",
                                     txt ? txt : "", num_reserved);
        }
        NCM_CPUSET_FOREACH(cpu, p->reserved)
        {
                const ncm_cpu_info *info = ncm_topo_cpu(t, cpu);
                size_t n = 0;
                const int *sib;
                if (!info)
                        return ncm_error_set(err, EINVAL,
                                             "[cpumanager] unable to build the reserved physical "
                                             "CPUs from the reserved set: unknown CPU ID: %d",
                                             cpu);
                sib = ncm_topo_core_cpus(t, info->core, &n);
                for (size_t i = 0; i < n; i++)
                        (void)ncm_cpuset_set(s->reserved_physical, sib[i]);
        }
        *ret = NCM_TAKE_PTR(p);
        return 0;
}
