/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-place resize of exclusive CPUs (KEP-5554): the allocator with must-keep and reusable
 * CPUs, the static policy's resize Allocate and its hints.
 *
 * Why the must-keep allocator is the kubelet's accumulator. takeByTopologyNUMAPacked decides
 * every step from two things only: the CPUs it may still take (its `details`) and how many it
 * still needs. Taking MUST_KEEP first therefore leaves it exactly where a fresh accumulator
 * over AVAILABLE minus MUST_KEEP, needing N - |MUST_KEEP|, starts: the same free sockets, cores
 * and uncore caches, the same sort keys, the same result. So the packed path runs the
 * kubelet's allocator on what is left and adds MUST_KEEP. The distributed path
 * (distribute-cpus-across-numa) balances what it adds over the NUMA nodes the container already
 * spans when they hold enough, so that an even 2+2 becomes 4+4 rather than 2+2 on two other
 * nodes; otherwise over every node, as for a new container.
 *
 * The resize itself follows the shape of the static policy's allocateCPUs: the CPUs of the
 * topology manager's hint first (its sockets with align-by-socket), then any. An upsize keeps
 * every current CPU and adds free ones; a downsize keeps the promised CPUs and chooses the rest
 * among the current ones. With CPUs near the container's devices (deviceLocalCPUs: prefer,
 * cpumanager-near.c) the CPUs a resize chooses follow the admission's preference: the devices'
 * local CPUs, then their uncore caches, in front of the hint's part; so an upsize adds CPUs near
 * the devices first and a downsize keeps, beyond the promise, those near them. The texts of
 * refusals are KEP-5554's error types as its implementation branch words them (kubernetes PR
 * #129719, carried into PR #140629).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpumanager-alloc.h"
#include "cpumanager-policy.h"

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* ------------------------------------------------------------------------------------------
 * The allocator
 */

/* The CPUs of the NUMA nodes that hold any of CPUS, into OUT. */
static void numa_cpus_of(const ncm_topo *t, const ncm_cpuset *cpus, ncm_cpuset *out)
{
        ncm_cpuset_zero(out);
        NCM_CPUSET_FOREACH(cpu, cpus)
        {
                const ncm_cpu_info *ci = ncm_topo_cpu(t, cpu);
                const ncm_cpuset *nc = ci ? ncm_topo_numa_cpus(t, ci->numa) : NULL;
                if (nc && !ncm_cpuset_isset(out, cpu))
                        ncm_cpuset_or(out, out, nc);
        }
}

/* K CPUs of POOL (MUST_KEEP already taken) by O's algorithm, into OUT, reported to TRACE. */
static int take_more(const ncm_cpu_index *ix, const ncm_cpu_options *o, const ncm_cpuset *pool,
                     const ncm_cpuset *must_keep, int k, const ncm_cpu_trace *trace,
                     ncm_cpuset *out, ncm_error *err)
{
        if (k <= 0) {
                ncm_cpuset_zero(out);
                return 0;
        }
        if (o && o->distribute_cpus_across_numa && must_keep && !ncm_cpuset_is_empty(must_keep)) {
                ncm_autoptr(ncm_cpuset) near = ncm_cpuset_new();
                if (!near)
                        return oom(err);
                numa_cpus_of(ncm_cpu_index_topo(ix), must_keep, near);
                ncm_cpuset_and(near, near, pool);
                /* balanced over the container's own NUMA nodes when they hold enough */
                if (ncm_cpuset_weight(near) >= k &&
                    ncm__cpu_take_traced(ix, o, near, k, trace, out, NULL) >= 0)
                        return 0;
        }
        return ncm__cpu_take_traced(ix, o, pool, k, trace, out, err);
}

/* ncm_cpu_take_keep() reporting to TRACE (may be NULL). */
static int take_keep(const ncm_cpu_index *ix, const ncm_cpu_options *o, const ncm_cpuset *available,
                     const ncm_cpuset *must_keep, const ncm_cpuset *reusable, int n,
                     const ncm_cpu_trace *trace, ncm_cpuset *ret, ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) result = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) part = ncm_cpuset_new();
        int keep, need, r;

        if (!result || !pool || !part)
                return oom(err);
        if (must_keep)
                ncm_cpuset_copy(result, must_keep);
        keep = ncm_cpuset_weight(result);
        if (n < keep)
                return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                     "requested number of CPUs ( %d ) are less than number of "
                                     "retained CPUs ( %d )",
                                     n, keep);
        need = n - keep;
        if (reusable && need > 0) {
                int k;
                ncm_cpuset_andnot(pool, reusable, result);
                k = ncm_cpuset_weight(pool) < need ? ncm_cpuset_weight(pool) : need;
                r = take_more(ix, o, pool, result, k, trace, part, err);
                if (r < 0)
                        return r;
                ncm_cpuset_or(result, result, part);
                need -= ncm_cpuset_weight(part);
        }
        if (need > 0) {
                if (available)
                        ncm_cpuset_andnot(pool, available, result);
                else
                        ncm_cpuset_zero(pool);
                r = take_more(ix, o, pool, result, need, trace, part, err);
                if (r < 0)
                        return r;
                ncm_cpuset_or(result, result, part);
        }
        ncm_cpuset_copy(ret, result);
        return 0;
}

int ncm_cpu_take_keep(const ncm_cpu_index *ix, const ncm_cpu_options *o,
                      const ncm_cpuset *available, const ncm_cpuset *must_keep,
                      const ncm_cpuset *reusable, int n, ncm_cpuset *ret, ncm_error *err)
{
        return take_keep(ix, o, available, must_keep, reusable, n, NULL, ret, err);
}

/* ------------------------------------------------------------------------------------------
 * The policy's resize
 */

/* The quantity of container C's cpu request, as text ("0" without one). */
static const char *cpu_text(const ncm_container *c, char buf[NCM_QUANTITY_STRLEN])
{
        const ncm_quantity *q = ncm_container_request(c, NCM_RESOURCE_CPU);
        if (!q) {
                snprintf(buf, NCM_QUANTITY_STRLEN, "0");
                return buf;
        }
        return ncm_quantity_to_string(q, buf);
}

static int inconsistent(ncm_error *err, const char **ret_type, const char *requested,
                        const char *allocated, bool shared_to_exclusive)
{
        *ret_type = NCM_CPU_REASON_INCONSISTENT;
        if (shared_to_exclusive)
                return ncm_error_set(err, NCM_E_ADMISSION,
                                     "inconsistentCPUAllocation Error: Not allowed to move a "
                                     "container from shared pool to exclusively allocated pool, "
                                     "(requested CPUs = %s, allocated CPUs = %s)",
                                     requested, allocated);
        return ncm_error_set(err, NCM_E_ADMISSION,
                             "inconsistentCPUAllocation Error: Not allowed to move a container "
                             "from  exclusively allocated pool to shared pool, not allowed "
                             "(requested CPUs = %s, allocated CPUs = %s)",
                             requested, allocated);
}

int ncm_cpu_resize_check(const ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                         const ncm_container *c, const char *before_text, const char **ret_type,
                         ncm_error *err)
{
        const ncm_cpuset *have, *promised;
        char qs[NCM_QUANTITY_STRLEN];
        int n;

        *ret_type = NULL;
        if (!p->ix || ncm_pod_level_resources_set(pod))
                return 0;
        n = ncm_cpu_guaranteed_cpus(pod, c);
        have = ncm_cpu_state_get(s, pod->uid, c->name);
        if (!have && n == 0)
                return 0;
        if (!have)
                return inconsistent(err, ret_type, cpu_text(c, qs), before_text, true);
        if (n == 0)
                return inconsistent(err, ret_type, cpu_text(c, qs), before_text, false);
        if (n == ncm_cpuset_weight(have))
                return 0;
        promised = ncm_cpu_state_promised(s, pod->uid, c->name);
        if (!promised) {
                *ret_type = NCM_CPU_REASON_PROMISED_MISSING;
                return ncm_error_set(err, NCM_E_ADMISSION,
                                     "getPromisedCPUSet Error: Skip resize, unable to get "
                                     "PromisedCPUSet, nothing to be done, (podUID = %s, "
                                     "containerName %s)",
                                     pod->uid, c->name);
        }
        if (n < ncm_cpuset_weight(promised)) {
                *ret_type = NCM_CPU_REASON_PROHIBITED;
                return ncm_error_set(err, NCM_E_ADMISSION,
                                     "prohibitedCPUAllocation Error: Skip resize, Not allowed to "
                                     "reduce container exclusively allocated pool below "
                                     "promised, (requested CPUs = %s, allocated CPUs = %s, "
                                     "promised CPUs = %d, guaranteed CPUs = %d)",
                                     cpu_text(c, qs), before_text, ncm_cpuset_weight(promised), n);
        }
        return 1;
}

/* The CPUs of POOL inside AFFINITY's NUMA nodes (their sockets with align-by-socket). */
static int aligned_part(const ncm_cpu_policy *p, const ncm_cpuset *pool, const ncm_hint *affinity,
                        ncm_cpuset *out)
{
        const ncm_topo *t = ncm_cpu_index_topo(p->ix);
        ncm_autoptr(ncm_cpuset) tmp = ncm_cpuset_new();
        size_t nn = 0;
        const int *ids = ncm_topo_numa_ids(t, &nn);

        if (!tmp)
                return -ENOMEM;
        ncm_cpuset_zero(out);
        for (size_t i = 0; i < nn; i++) {
                const ncm_cpuset *nc = ncm_topo_numa_cpus(t, ids[i]);
                if (!nc || !ncm_bitmask_isset(affinity->numa, ids[i]))
                        continue;
                if (p->opts.align_by_socket) {
                        NCM_CPUSET_FOREACH(cpu, nc)
                        {
                                const ncm_cpu_info *ci = ncm_topo_cpu(t, cpu);
                                const ncm_cpuset *sc =
                                                ci ? ncm_topo_socket_cpus(t, ci->socket) : NULL;
                                if (sc)
                                        ncm_cpuset_or(tmp, tmp, sc);
                        }
                } else {
                        ncm_cpuset_or(tmp, tmp, nc);
                }
        }
        ncm_cpuset_and(out, pool, tmp);
        return 0;
}

int ncm_cpu_policy_resize(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod,
                          const ncm_container *c, const ncm_hint *affinity, const char *before_text,
                          const char **ret_type, ncm_error *err)
{
        return ncm_cpu_policy_resize_near(p, s, pod, c, affinity, NULL, 0, before_text, ret_type,
                                          err);
}

int ncm_cpu_policy_resize_near(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod,
                               const ncm_container *c, const ncm_hint *affinity,
                               const ncm_cpu_near *near, size_t n_near, const char *before_text,
                               const char **ret_type, ncm_error *err)
{
        const ncm_cpu_options *o = &p->opts;
        const ncm_cpu_trace *trace = p->trace.fn ? &p->trace : NULL;
        ncm_autoptr(ncm_cpuset) have = NULL;
        ncm_autoptr(ncm_cpuset) keep = NULL;
        ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) aligned = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) result = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) dflt = NULL;
        int n, r, group = p->ix ? p->ix->cpus_per_core : 1;
        bool up;

        *ret_type = NULL;
        r = ncm_cpu_resize_check(p, s, pod, c, before_text, ret_type, err);
        if (r <= 0)
                return r;
        if (!pool || !aligned || !result)
                return oom(err);
        n = ncm_cpu_guaranteed_cpus(pod, c);
        have = ncm_cpuset_dup(ncm_cpu_state_get(s, pod->uid, c->name));
        dflt = ncm_cpuset_dup(ncm_cpu_state_default(s));
        if (!have || !dflt)
                return oom(err);
        up = n > ncm_cpuset_weight(have);
        if (o->full_pcpus_only) {
                if (n % group != 0) {
                        *ret_type = NCM_CPU_REASON_SMT_ALIGNMENT;
                        return ncm_error_set(err, NCM_E_ADMISSION,
                                             "SMT Alignment Error: requested %d cpus not "
                                             "multiple cpus per core = %d",
                                             n, group);
                }
                if (up) {
                        ncm_autoptr(ncm_cpuset) phys = ncm_cpuset_new();
                        int avail;
                        if (!phys)
                                return oom(err);
                        ncm_cpu_policy_available_physical(p, s, phys);
                        ncm_cpu_policy_isolation_resize_pool(p, pod, have, phys);
                        /* the container's own CPUs count as available (the KEP branch) */
                        avail = ncm_cpuset_weight(phys) + ncm_cpuset_weight(have);
                        if (n > avail) {
                                *ret_type = NCM_CPU_REASON_SMT_ALIGNMENT;
                                return ncm_error_set(err, NCM_E_ADMISSION,
                                                     "SMT Alignment Error: not enough free "
                                                     "physical CPUs: available physical CPUs = "
                                                     "%d, requested CPUs = %d, CPUs per core = "
                                                     "%d",
                                                     avail, n, group);
                        }
                }
        }
        if (up) {
                /* every current CPU stays; the new ones come from the free CPUs of its
                 * isolation pool (isolatedCPUs: a resize never changes pools) */
                keep = ncm_cpuset_dup(have);
                ncm_cpu_policy_available(p, s, pool);
                ncm_cpu_policy_isolation_resize_pool(p, pod, have, pool);
                r = ncm__cpu_iso_resize_check(p, pod, c, have, n - ncm_cpuset_weight(have), pool,
                                              err);
                if (r < 0)
                        return r;
        } else {
                /* the promise stays; the rest is chosen among the current CPUs */
                keep = ncm_cpuset_dup(ncm_cpu_state_promised(s, pod->uid, c->name));
                if (keep)
                        ncm_cpuset_andnot(pool, have, keep);
        }
        if (!keep)
                return oom(err);
        ncm_cpuset_copy(result, keep);
        if (affinity && !affinity->any) {
                int k;
                if (aligned_part(p, pool, affinity, aligned) < 0)
                        return oom(err);
                /* deviceLocalCPUs: the devices' CPUs first, inside the hint as at admission */
                if (n_near) {
                        r = ncm__cpu_take_near(p, ncm_cpu_index_topo(p->ix), aligned, near, n_near,
                                               n, result, err);
                        if (r < 0)
                                return r;
                        ncm_cpuset_andnot(aligned, aligned, result);
                }
                k = ncm_cpuset_weight(aligned);
                if (n - ncm_cpuset_weight(result) < k)
                        k = n - ncm_cpuset_weight(result);
                r = take_keep(p->ix, o, aligned, result, NULL, ncm_cpuset_weight(result) + k, trace,
                              result, err);
                if (r < 0)
                        return r;
        } else if (n_near) {
                r = ncm__cpu_take_near(p, ncm_cpu_index_topo(p->ix), pool, near, n_near, n, result,
                                       err);
                if (r < 0)
                        return r;
        }
        ncm_cpuset_andnot(pool, pool, result);
        r = take_keep(p->ix, o, pool, result, NULL, n, trace, result, err);
        if (r < 0)
                return r;

        if (up) {
                ncm_autoptr(ncm_cpuset) added = ncm_cpuset_new();
                if (!added)
                        return oom(err);
                ncm_cpuset_andnot(added, result, have);
                ncm_cpuset_andnot(dflt, dflt, added);
        } else {
                /* what leaves the container, except what a sibling still holds */
                ncm_autoptr(ncm_cpuset) released = ncm_cpuset_new();
                ncm_autoptr(ncm_cpuset) sibs = ncm_cpuset_new();
                ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
                const char *pu, *cn;
                const ncm_cpuset *cs;
                if (!released || !sibs)
                        return oom(err);
                while (ncm_cpu_state_next(s, &it, &pu, &cn, &cs))
                        if (strcmp(pu, pod->uid) == 0 && strcmp(cn, c->name) != 0)
                                ncm_cpuset_or(sibs, sibs, cs);
                ncm_cpuset_andnot(released, have, result);
                ncm_cpuset_andnot(released, released, sibs);
                ncm_cpuset_or(dflt, dflt, released);
        }
        /* the kubelet's write order: the default set first, then the container's entry */
        r = ncm_cpu_state_set_default(s, dflt, err);
        if (r >= 0)
                r = ncm_cpu_state_set(s, pod->uid, c->name, result, err);
        return r < 0 ? r : 0;
}

/* ------------------------------------------------------------------------------------------
 * Hints
 */

/* Where hints go: a list, or a description (the lazy merge's input). */
typedef struct sink {
        ncm_hint_list *list;
        ncm_hint_desc **desc;
} sink;

static int sink_nil(sink *k)
{
        if (k->list)
                k->list->nil = true;
        else
                *k->desc = NULL;
        return 0;
}

static int sink_generate(const ncm_cpu_policy *p, sink *k, const ncm_cpuset *avail,
                         const ncm_cpuset *reusable, int req, ncm_error *err)
{
        if (k->list) {
                k->list->nil = false;
                return ncm_cpu_hints_generate(p->ix, &p->opts, avail, reusable, req, k->list, err);
        }
        return ncm_cpu_hints_describe(p->ix, &p->opts, avail, reusable, req, k->desc, err);
}

/*
 * The hints of a resize to REQ CPUs of a container (or pod) holding HAVE with promise PROMISED:
 * the NUMA masks that hold every CPU it keeps and enough of the CPUs it may take. Upsize: keeps
 * HAVE, takes free CPUs of its isolation pool, so every mask holds its current nodes (the
 * affinity only grows). Downsize: keeps PROMISED, takes among HAVE.
 */
static int resize_hints(const ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                        const ncm_cpuset *have, const ncm_cpuset *promised, int req, sink *k,
                        ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) avail = ncm_cpuset_new();
        int nh = ncm_cpuset_weight(have);

        if (!avail)
                return oom(err);
        if (req == nh)
                return sink_generate(p, k, have, NULL, req, err);
        if (req > nh) {
                ncm_cpu_policy_available(p, s, avail);
                ncm_cpu_policy_isolation_resize_pool(p, pod, have, avail);
                return sink_generate(p, k, avail, have, req, err);
        }
        ncm_cpuset_andnot(avail, have, promised);
        return sink_generate(p, k, avail, promised, req, err);
}

static int container_hints(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                           const ncm_container *c, sink *k, ncm_error *err)
{
        const ncm_cpuset *have = ncm_cpu_state_get(s, pod->uid, c->name);
        int req = p->ix ? ncm_cpu_guaranteed_cpus(pod, c) : 0;
        const char *type = NULL;
        ncm_error e = NCM_ERROR_INIT;
        int r;

        if (req == 0 || !have || ncm_pod_level_resources_set(pod))
                return sink_nil(k);
        r = ncm_cpu_resize_check(p, s, pod, c, "", &type, &e);
        /* a resize the policy refuses has no preference: its Allocate says why */
        if (r < 0)
                return sink_nil(k);
        return resize_hints(p, s, pod, have, ncm_cpu_state_promised(s, pod->uid, c->name), req, k,
                            err);
}

static int pod_hints(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod, sink *k,
                     ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) have = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) keep = ncm_cpuset_new();
        int req = p->ix ? ncm_cpu_pod_guaranteed_cpus(pod) : 0;

        if (!have || !keep)
                return oom(err);
        if (req == 0 || ncm_pod_level_resources_set(pod))
                return sink_nil(k);
        for (size_t i = 0; i < pod->n_init_containers + pod->n_containers; i++) {
                const ncm_container *c =
                                i < pod->n_init_containers
                                                ? &pod->init_containers[i]
                                                : &pod->containers[i - pod->n_init_containers];
                const ncm_cpuset *h = ncm_cpu_state_get(s, pod->uid, c->name);
                const char *type = NULL;
                ncm_error e = NCM_ERROR_INIT;
                int r = ncm_cpu_resize_check(p, s, pod, c, "", &type, &e);
                if (r < 0)
                        return sink_nil(k);
                if (!h)
                        continue;
                ncm_cpuset_or(have, have, h);
                /* an unchanged container keeps all it holds, a resized one its promise */
                ncm_cpuset_or(keep, keep,
                              r == 0 ? h : ncm_cpu_state_promised(s, pod->uid, c->name));
        }
        return resize_hints(p, s, pod, have, keep, req, k, err);
}

int ncm_cpu_policy_resize_hints(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                                const ncm_container *c, ncm_hint_list *out, ncm_error *err)
{
        sink k = {out, NULL};
        return c ? container_hints(p, s, pod, c, &k, err) : pod_hints(p, s, pod, &k, err);
}

int ncm_cpu_policy_resize_hints_describe(ncm_cpu_policy *p, const ncm_cpu_state *s,
                                         const ncm_pod *pod, const ncm_container *c,
                                         ncm_hint_desc **ret, ncm_error *err)
{
        sink k = {NULL, ret};
        return c ? container_hints(p, s, pod, c, &k, err) : pod_hints(p, s, pod, &k, err);
}
