/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU manager as a topology-manager hint provider: kubelet's cpuManager GetTopologyHints,
 * GetPodTopologyHints and Allocate, delegated to the CPU policy on the node's state, with the
 * events --explain shows.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node-internal.h"

/*
 * kubelet returns a nil map ("no preference") when the container gets no exclusive CPUs (D is
 * NULL then); otherwise the "cpu" list, described rather than listed (the lazy merge reads it
 * as it is; 2^N masks are never walked).
 */
static int to_tm_hints(ncm_hint_desc *d, ncm_tm_hints *ret, ncm_error *err)
{
        if (!d)
                return 0;
        return ncm_tm_hints_add_desc(ret, NCM_RESOURCE_CPU, d, err);
}

static int cpu_container_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret,
                               ncm_error *err)
{
        ncm_node *n = data;
        ncm_hint_desc *d = NULL;
        int r;

        if (call->op == NCM_TM_OP_RESIZE)
                return ncm__node_cpu_resize_hints(n, call, ret, err);
        r = ncm_cpu_policy_hints_describe(n->cpu, n->cpu_state, call->pod, call->container, &d,
                                          err);
        return r < 0 ? r : to_tm_hints(d, ret, err);
}

static int cpu_pod_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret, ncm_error *err)
{
        ncm_node *n = data;
        ncm_hint_desc *d = NULL;
        int r;

        if (call->op == NCM_TM_OP_RESIZE)
                return ncm__node_cpu_resize_hints(n, call, ret, err);
        r = ncm_cpu_policy_pod_hints_describe(n->cpu, n->cpu_state, call->pod, &d, err);
        return r < 0 ? r : to_tm_hints(d, ret, err);
}

/* Why container C gets no exclusive CPUs, or NULL when it does (kubelet's guaranteedCPUs). */
static const char *shared_reason(const ncm_node *n, const ncm_pod *pod, const ncm_container *c,
                                 char *buf, size_t size)
{
        const ncm_quantity *q = ncm_container_request(c, NCM_RESOURCE_CPU);

        if (strcmp(ncm_cpu_policy_name(n->cpu), "none") == 0)
                return "none policy: not pinned, runs on every CPU";
        if (pod->qos != NCM_QOS_GUARANTEED) {
                snprintf(buf, size, "pod QoS class is %s: shared pool",
                         ncm_qos_class_name(pod->qos));
                return buf;
        }
        if (!q)
                return "no cpu request: shared pool";
        if (!ncm_quantity_is_integer(q)) {
                char qs[NCM_QUANTITY_STRLEN];
                snprintf(buf, size, "cpu request %s is not a whole number of CPUs: shared pool",
                         ncm_quantity_to_string(q, qs));
                return buf;
        }
        if (ncm_quantity_is_zero(q))
                return "cpu request 0: shared pool";
        if (ncm_pod_level_resources_set(pod))
                return "pod-level resources (PodLevelResourceManagers is off): shared pool";
        return NULL;
}

static void set_text(ncm_node_event *e, const char *fmt, ...) NCM_PRINTF(2, 3);
static void set_text(ncm_node_event *e, const char *fmt, ...)
{
        va_list ap;
        char *s = NULL;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        free(e->text);
        e->text = s;
}

static char *fmt_set(const ncm_cpuset *s)
{
        char *t = ncm_cpuset_format_list(s);
        return t;
}

/* The allocator's steps, as its trace reports them (ncm_cpu_policy_set_trace). */
typedef struct trace_ctx {
        ncm_node_event lines; /* only its steps are used */
        bool in_distributed;  /* packed takes now are the distributed algorithm's */
        int indent;           /* of the current take's elements */
} trace_ctx;

static void on_trace(void *data, ncm_cpu_trace_level level, int64_t id, const int *cpus, size_t n)
{
        static const char *const what[] = {
                        [NCM_CPU_TRACE_NUMA] = "whole NUMA node",
                        [NCM_CPU_TRACE_SOCKET] = "whole socket",
                        [NCM_CPU_TRACE_UNCORE] = "whole uncore cache",
                        [NCM_CPU_TRACE_UNCORE_PARTIAL] = "part of uncore cache",
                        [NCM_CPU_TRACE_CORE] = "whole core",
                        [NCM_CPU_TRACE_CPU] = "single CPU",
        };
        trace_ctx *t = data;
        ncm_autoptr(ncm_cpuset) set = ncm_cpuset_new();
        ncm_autofree char *txt = NULL;
        int indent;

        if (!set)
                return;
        for (size_t i = 0; i < n; i++)
                (void)ncm_cpuset_set(set, cpus[i]);
        txt = ncm_cpuset_format_list(set);
        switch (level) {
        case NCM_CPU_TRACE_TAKE_DISTRIBUTED:
        case NCM_CPU_TRACE_TAKE_PACKED:
                if (level == NCM_CPU_TRACE_TAKE_DISTRIBUTED)
                        t->in_distributed = true;
                indent = level == NCM_CPU_TRACE_TAKE_PACKED && t->in_distributed ? 2 : 0;
                t->indent = indent + 2;
                if (id == 0)
                        break;
                ncm__node_event_step(&t->lines, "%*stakeByTopology%s(%lld) from %s:", indent, "",
                                     level == NCM_CPU_TRACE_TAKE_PACKED ? "NUMAPacked"
                                                                        : "NUMADistributed",
                                     (long long)id, txt ? txt : "");
                break;
        case NCM_CPU_TRACE_CPU:
                ncm__node_event_step(&t->lines, "%*s%s %lld", t->indent, "", what[level],
                                     (long long)id);
                break;
        default:
                ncm__node_event_step(&t->lines, "%*s%s %lld: %s", t->indent, "", what[level],
                                     (long long)id, txt ? txt : "");
        }
}

/* Append TR's steps to E (TR keeps none). */
static void move_steps(ncm_node_event *e, ncm_node_event *tr)
{
        for (size_t i = 0; i < tr->n_steps; i++) {
                if (ncm__node_event_step(e, "%s", tr->steps[i]) < 0)
                        break;
        }
        for (size_t i = 0; i < tr->n_steps; i++)
                free(tr->steps[i]);
        tr->n_steps = 0;
}

/*
 * Which device drew which CPUs (deviceLocalCPUs: prefer): each device's local CPUs, the CPUs of
 * the result among them, and the ones that came from their uncore caches. Locality only orders
 * the CPUs isolatedCPUs lets the container have: a device's local CPUs among KEPT (free, but
 * kept from the container by its isolation; may be NULL) are named, so "drew none" next to
 * free local CPUs says why.
 */
void ncm__node_explain_near(ncm_node *n, ncm_node_event *e, const ncm_device_location *locs,
                            size_t nl, const ncm_cpu_near *near, size_t nn,
                            const ncm_cpuset *result, const ncm_cpuset *kept)
{
        ncm_autoptr(ncm_cpuset) local = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) uncore = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) part = ncm_cpuset_new();

        if (!local || !uncore || !part)
                return;
        for (size_t i = 0; i < nl; i++) {
                const ncm_device_location *d = &locs[i];
                ncm_autofree char *ls = NULL, *drew = NULL, *ks = NULL;
                if (!d->located) {
                        ncm__node_event_step(e, "device %s: not located (%s)", d->device, d->how);
                        continue;
                }
                if (!d->local_cpus) {
                        ncm__node_event_step(e, "device %s: PCI %s by %s: no local CPUs known",
                                             d->device, d->pci[0], d->how);
                        continue;
                }
                ncm_cpuset_and(part, result, d->local_cpus);
                ls = ncm_cpuset_format_list(d->local_cpus);
                drew = ncm_cpuset_format_list(part);
                if (kept) {
                        ncm_cpuset_and(part, kept, d->local_cpus);
                        ks = ncm_cpuset_format_list(part);
                }
                ncm__node_event_step(e, "device %s: PCI %s%s by %s, local CPUs %s: drew %s%s%s%s",
                                     d->device, d->pci[0], d->n_pci > 1 ? ",..." : "", d->how,
                                     ls ? ls : "", drew && drew[0] ? drew : "none",
                                     ks && ks[0] ? " (isolatedCPUs keeps " : "",
                                     ks && ks[0] ? ks : "", ks && ks[0] ? " from it)" : "");
        }
        ncm_cpu_near_sets(n->topo, near, nn, local, uncore);
        ncm_cpuset_andnot(uncore, uncore, local);
        ncm_cpuset_and(part, result, uncore);
        if (!ncm_cpuset_is_empty(part)) {
                ncm_autofree char *s = ncm_cpuset_format_list(part);
                ncm__node_event_step(e, "their uncore caches drew %s", s ? s : "");
        }
}

/* ncm__node_explain_near() for an admission: the free CPUs were DEFAULT_BEFORE less the
 * reserved ones, with REUSE; the container's isolation kept some of them from it. */
static void explain_near_admit(ncm_node *n, ncm_node_event *e, const ncm_pod *pod, int req,
                               const ncm_cpuset *default_before, const ncm_cpuset *reuse,
                               const ncm_device_location *locs, size_t nl, const ncm_cpu_near *near,
                               size_t nn, const ncm_cpuset *result)
{
        ncm_autoptr(ncm_cpuset) kept = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) cand = NULL;

        if (!kept)
                return;
        ncm_cpuset_andnot(kept, default_before, ncm_cpu_policy_reserved(n->cpu));
        if (reuse)
                ncm_cpuset_or(kept, kept, reuse);
        cand = ncm_cpuset_dup(kept);
        if (!cand)
                return;
        (void)ncm_cpu_policy_isolation_restrict(n->cpu, pod, req, reuse, cand);
        ncm_cpuset_andnot(kept, kept, cand);
        ncm__node_explain_near(n, e, locs, nl, near, nn, result, kept);
}

/*
 * The allocation's story, as the static policy's allocateCPUs runs it: the hint's NUMA nodes
 * (their sockets with align-by-socket) first, then the rest from anywhere; each part chosen by
 * takeByTopology, described level by level.
 */
static void explain_allocation(ncm_node *n, ncm_node_event *e, const ncm_pod *pod,
                               const ncm_container *c, const ncm_hint *aff,
                               const ncm_cpuset *default_before, const ncm_cpuset *reuse,
                               const ncm_cpuset *result, trace_ctx *t)
{
        ncm_node_event *tr = &t->lines;
        const ncm_cpu_options *o = ncm_cpu_policy_options(n->cpu);
        ncm_autoptr(ncm_cpuset) avail = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) aligned = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) part = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) rest = ncm_cpuset_new();
        ncm_autofree char *ts = NULL;
        int req = ncm_cpu_guaranteed_cpus(pod, c);

        if (!avail || !aligned || !part || !rest)
                return;
        ncm_cpuset_andnot(avail, default_before, ncm_cpu_policy_reserved(n->cpu));
        if (reuse && !ncm_cpuset_is_empty(reuse)) {
                ncm_autofree char *rs = fmt_set(reuse);
                ncm_cpuset_or(avail, avail, reuse);
                ncm__node_event_step(e, "init-container CPUs %s may be reused", rs ? rs : "");
        }
        ncm__node_explain_isolation(n, e, pod, req, reuse, avail);
        ts = fmt_set(avail);
        ncm__node_event_step(e, "%d exclusive CPU%s from the free CPUs %s", req,
                             req == 1 ? "" : "s", ts ? ts : "");
        if (aff && !aff->any) {
                size_t nn = 0;
                const int *ids = ncm_topo_numa_ids(n->topo, &nn);
                ncm_buf mb = NCM_BUF_INIT;
                ncm_autofree char *as = NULL;
                for (size_t i = 0; i < nn; i++) {
                        if (!ncm_bitmask_isset(aff->numa, ids[i]))
                                continue;
                        const ncm_cpuset *nc = ncm_topo_numa_cpus(n->topo, ids[i]);
                        if (!nc)
                                continue;
                        if (o->align_by_socket) {
                                /* the whole sockets of the hint's NUMA nodes */
                                ncm_autoptr(ncm_cpuset) sc = ncm_cpuset_new();
                                ncm_autofree int64_t *socks =
                                                malloc((size_t)ncm_topo_num_sockets(n->topo) *
                                                       sizeof(*socks));
                                size_t ns;
                                if (!socks || !sc)
                                        continue;
                                ns = ncm_topo_ids_of_cpus(n->topo, NCM_TOPO_SOCKET, nc, socks);
                                ncm_topo_cpus_of_ids(n->topo, NCM_TOPO_SOCKET, socks, ns, sc);
                                ncm_cpuset_and(part, avail, sc);
                        } else {
                                ncm_cpuset_and(part, avail, nc);
                        }
                        ncm_cpuset_or(aligned, aligned, part);
                }
                ncm_bitmask_format_ids(aff->numa, &mb);
                as = fmt_set(aligned);
                ncm__node_event_step(e, "hint NUMA %s: %s%s: %s (%d free)", mb.data ? mb.data : "",
                                     o->align_by_socket ? "the free CPUs of its sockets"
                                                        : "its free CPUs",
                                     "", as && as[0] ? as : "none", ncm_cpuset_weight(aligned));
                ncm_buf_done(&mb);
                if (tr->n_steps) {
                        /* the allocator's own account: the hint's part, then any spill */
                        move_steps(e, tr);
                        return;
                }
                ncm_cpuset_and(part, result, aligned);
                if (!ncm_cpuset_is_empty(part)) {
                        ncm__node_event_step(e, "takeByTopology(%d) inside the hint:",
                                             ncm_cpuset_weight(part));
                        ncm__node_explain_take(n->topo, aligned, part, e);
                }
                ncm_cpuset_andnot(rest, result, aligned);
                if (!ncm_cpuset_is_empty(rest)) {
                        ncm_autoptr(ncm_cpuset) outside = ncm_cpuset_new();
                        if (!outside)
                                return;
                        ncm_cpuset_andnot(outside, avail, part);
                        ncm__node_event_step(e,
                                             "the hint holds too few: takeByTopology(%d) from "
                                             "the remaining free CPUs:",
                                             ncm_cpuset_weight(rest));
                        ncm__node_explain_take(n->topo, outside, rest, e);
                }
        } else {
                ncm__node_event_step(e, "no NUMA affinity: all %d from the free CPUs", req);
                if (tr->n_steps) {
                        move_steps(e, tr);
                        return;
                }
                ncm__node_explain_take(n->topo, avail, result, e);
        }
}

/* Whether all of CPUS share one uncore cache (the kubelet's Alignment.UncoreCache). */
static bool one_uncore(const ncm_topo *t, const ncm_cpuset *cpus)
{
        int first = ncm_cpuset_first(cpus);
        const ncm_cpu_info *ci = first >= 0 ? ncm_topo_cpu(t, first) : NULL;
        const ncm_cpuset *uc = ci ? ncm_topo_uncore_cpus(t, ci->uncore) : NULL;

        return uc && ncm_cpuset_is_subset(cpus, uc);
}

/*
 * The kubelet's metrics of a CPU manager Allocate (its static policy's counters, and the
 * topology manager's container-scope alignment once the last provider allocated): R is what
 * the allocation returned, HAD whether the container held CPUs before.
 */
static void count_allocation(ncm_node *n, const ncm_pod *pod, const ncm_container *c, bool had,
                             int r)
{
        ncm_node_counters *k = &n->counters;
        char reason[160];
        bool full = ncm_cpu_policy_options(n->cpu)->full_pcpus_only;

        if (r >= 0 && strcmp(ncm_node_config_tm_scope(n->cfg), "container") == 0 &&
            strcmp(ncm_node_config_tm_policy(n->cfg), "single-numa-node") == 0)
                k->aligned[NCM_NODE_SCOPE_CONTAINER][NCM_NODE_ALIGN_NUMA_NODE]++;
        if (strcmp(ncm_cpu_policy_name(n->cpu), "static") != 0 ||
            shared_reason(n, pod, c, reason, sizeof(reason)))
                return;
        k->pinning_requests++;
        if (r < 0) {
                k->pinning_errors++;
                if (full)
                        k->aligned_failures[NCM_NODE_SCOPE_CONTAINER]
                                           [NCM_NODE_ALIGN_PHYSICAL_CPU]++;
                return;
        }
        if (full)
                k->aligned[NCM_NODE_SCOPE_CONTAINER][NCM_NODE_ALIGN_PHYSICAL_CPU]++;
        if (!had) {
                const ncm_cpuset *now = ncm_cpu_state_get(n->cpu_state, pod->uid, c->name);
                if (now && one_uncore(n->topo, now))
                        k->aligned[NCM_NODE_SCOPE_CONTAINER][NCM_NODE_ALIGN_UNCORE_CACHE]++;
        }
}

int ncm__node_cpu_near(ncm_node *n, const ncm_pod *pod, const ncm_container *c,
                       ncm_device_location **ret_locs, size_t *ret_nl, ncm_cpu_near **ret_near,
                       size_t *ret_nn, ncm_error *err)
{
        ncm_device_location *locs = NULL;
        ncm_cpu_near *near;
        size_t nl = 0, nn = 0;
        int r;

        *ret_locs = NULL;
        *ret_near = NULL;
        *ret_nl = *ret_nn = 0;
        if (!ncm_node_config_device_local_cpus(n->cfg) || ncm_cpu_guaranteed_cpus(pod, c) <= 0 ||
            ncm_pod_level_resources_set(pod))
                return 0;
        r = ncm__node_container_locations(n, pod, c, true, true, &locs, &nl, err);
        if (r < 0)
                return r;
        near = calloc(nl + 1, sizeof(*near));
        if (!near) {
                ncm_device_locations_free(locs, nl);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < nl; i++)
                if (locs[i].located && locs[i].local_cpus)
                        near[nn++] = (ncm_cpu_near){locs[i].device, locs[i].local_cpus};
        *ret_locs = locs;
        *ret_nl = nl;
        *ret_near = near;
        *ret_nn = nn;
        return 0;
}

static int cpu_allocate(void *data, const ncm_tm_call *call, const ncm_hint *affinity,
                        const char **ret_type, ncm_error *err)
{
        ncm_node *n = data;
        node_txn *txn = call->txn;
        const ncm_pod *pod = call->pod;
        const ncm_container *c = call->container;
        ncm_node_event *e = NULL;
        trace_ctx tr = {0}; /* the allocator's trace lines */
        ncm_autoptr(ncm_cpuset) before = NULL;
        ncm_autoptr(ncm_cpuset) reuse = NULL;
        bool had = ncm_cpu_state_get(n->cpu_state, pod->uid, c->name) != NULL;
        const ncm_cpuset *now;
        ncm_device_location *locs = NULL;
        ncm_autofree ncm_cpu_near *near = NULL;
        size_t nl = 0, nn = 0;
        char reason[160];
        int r;

        if (call->op == NCM_TM_OP_RESIZE)
                return ncm__node_cpu_resize_allocate(n, call, affinity, ret_type, err);
        /* deviceLocalCPUs: prefer: where the container's devices are (the device manager has
         * allocated its plugin devices already: the kubelet's provider order) */
        if (!had && (r = ncm__node_cpu_near(n, pod, c, &locs, &nl, &near, &nn, err)) < 0)
                return r;

        if (txn && txn->explain) {
                const ncm_cpuset *ru = ncm_cpu_policy_reuse_get(n->cpu, pod->uid);
                before = ncm_cpuset_dup(ncm_cpu_state_default(n->cpu_state));
                reuse = ru ? ncm_cpuset_dup(ru) : ncm_cpuset_new();
                e = ncm__node_event_add(txn, NCM_NODE_EVENT_ALLOCATE, c->name, "cpu");
                if (!before || !reuse || !e) {
                        ncm_device_locations_free(locs, nl);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
                e->hint = *affinity;
        }
        if (e) {
                ncm_cpu_trace t = {on_trace, &tr};
                ncm_cpu_policy_set_trace(n->cpu, &t);
        }
        r = ncm_cpu_policy_allocate_near(n->cpu, n->cpu_state, pod, c, affinity, near, nn, err);
        if (e)
                ncm_cpu_policy_set_trace(n->cpu, NULL);
        count_allocation(n, pod, c, had, r);
        if (r < 0) {
                ncm__node_event_done(&tr.lines);
                if ((err ? err->code : -r) == NCM_E_ADMISSION)
                        *ret_type = NCM_CPU_REASON_SMT_ALIGNMENT;
                if (e) {
                        e->ok = false;
                        set_text(e, "%s", err && err->msg[0] ? err->msg : ncm_strerror(-r));
                }
                ncm_device_locations_free(locs, nl);
                return r;
        }
        now = ncm_cpu_state_get(n->cpu_state, pod->uid, c->name);
        if (now && !had && (r = ncm__node_cpu_promise(n, pod, c, err)) < 0) {
                ncm__node_event_done(&tr.lines);
                ncm_device_locations_free(locs, nl);
                return r;
        }
        if (e) {
                ncm_autofree char *s = now ? fmt_set(now) : NULL;
                e->ok = true;
                if (!now) {
                        set_text(e, "%s", shared_reason(n, pod, c, reason, sizeof(reason)));
                } else if (had) {
                        set_text(e, "%s", s ? s : "");
                        ncm__node_event_step(e, "already holds %s: kept (Allocate is idempotent)",
                                             s ? s : "");
                } else {
                        set_text(e, "%s", s ? s : "");
                        if (nl)
                                explain_near_admit(n, e, pod, ncm_cpu_guaranteed_cpus(pod, c),
                                                   before, reuse, locs, nl, near, nn, now);
                        explain_allocation(n, e, pod, c, affinity, before, reuse, now, &tr);
                }
                ncm__node_explain_knobs(n, e, pod, now != NULL);
        }
        ncm__node_event_done(&tr.lines);
        ncm_device_locations_free(locs, nl);
        return 0;
}

const ncm_tm_provider_ops ncm__node_cpu_provider = {
                .name = "cpu manager",
                .get_container_hints = cpu_container_hints,
                .get_pod_hints = cpu_pod_hints,
                .allocate = cpu_allocate,
};
