/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-place resize (nodecm/node-resize.h): the kubelet's feasibility checks, the topology
 * manager's re-admission with the operation "resize", the CPU manager's part of it (KEP-5554),
 * enforcement in an order that keeps every container inside its old or its new cpuset, and the
 * registry's new spec. One transaction: the parts of an admission's (node.c) saved before and
 * put back on a refusal or a failure.
 *
 * Why the re-admission goes through the topology manager at all: the KEP wants the new NUMA
 * affinity to be one the configured policy admits, from the same providers (devices, CPUs,
 * memory) merged the same way; only their answers change. Each provider sees the operation in
 * its call (ncm_tm_call.op): the CPU manager answers with the masks that hold the CPUs the
 * container keeps (so an upsize's affinity only grows) and allocates with its current or
 * promised CPUs kept; the device manager, whose resources cannot be resized, answers as for a
 * container that holds its devices already; the memory manager likewise unless its own gate
 * lets memory move too.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/node-fit.h>
#include <nodecm/node-resize.h>
#include "node-internal.h"

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

static bool gate(const ncm_node *n, const char *name, bool def)
{
        return ncm_node_config_feature_gate(n->cfg, name, def);
}

static bool static_cpu(const ncm_node *n)
{
        return ncm_cpu_policy_is_static(n->cpu);
}

/* The containers the kubelet resizes: app containers and sidecars (IsResizableContainer). */
static bool resizable(const ncm_container *c)
{
        return !c->init || c->sidecar;
}

static const ncm_container *nth(const ncm_pod *pod, size_t i)
{
        return i < pod->n_init_containers ? &pod->init_containers[i]
                                          : &pod->containers[i - pod->n_init_containers];
}

static size_t n_all(const ncm_pod *pod)
{
        return pod->n_init_containers + pod->n_containers;
}

/* ------------------------------------------------------------------------------------------
 * The CPU manager's part
 */

int ncm__node_cpu_promise(ncm_node *n, const ncm_pod *pod, const ncm_container *c, ncm_error *err)
{
        const ncm_cpuset *now = ncm_cpu_state_get(n->cpu_state, pod->uid, c->name);

        /* as the kubelet writes its baselines: only with the gate on */
        if (!now || !gate(n, NCM_GATE_RESIZE_EXCLUSIVE_CPUS, false))
                return 0;
        return ncm_cpu_state_set_promised(n->cpu_state, pod->uid, c->name, now, err);
}

int ncm__node_cpu_resize_hints(ncm_node *n, const ncm_tm_call *call, ncm_tm_hints *ret,
                               ncm_error *err)
{
        ncm_hint_desc *d = NULL;
        int r;

        if (call->container && !resizable(call->container))
                return 0; /* it has run: nothing of it changes */
        r = ncm_cpu_policy_resize_hints_describe(n->cpu, n->cpu_state, call->pod, call->container,
                                                 &d, err);
        if (r < 0 || !d)
                return r;
        return ncm_tm_hints_add_desc(ret, NCM_RESOURCE_CPU, d, err);
}

/* The cpu request container NAME had, as text ("0" without one). */
static const char *before_text(const node_txn *t, const char *name, char buf[NCM_QUANTITY_STRLEN])
{
        const ncm_container *c = t && t->before ? ncm_pod_find_container(t->before, name) : NULL;
        const ncm_quantity *q = c ? ncm_container_request(c, NCM_RESOURCE_CPU) : NULL;

        if (!q) {
                snprintf(buf, NCM_QUANTITY_STRLEN, "0");
                return buf;
        }
        return ncm_quantity_to_string(q, buf);
}

/* The NUMA nodes of CPUS, into B as "0-1". */
static void put_numa_of(const ncm_topo *t, const ncm_cpuset *cpus, ncm_buf *b)
{
        ncm_autoptr(ncm_cpuset) ids = ncm_cpuset_new();

        if (!ids)
                return;
        NCM_CPUSET_FOREACH(cpu, cpus)
        {
                const ncm_cpu_info *ci = ncm_topo_cpu(t, cpu);
                if (ci && ci->numa >= 0)
                        (void)ncm_cpuset_set(ids, ci->numa);
        }
        ncm_cpuset_format_list_buf(ids, b);
}

/* Why a resize of C to REQ CPUs from HAVE (promise PROMISED) is what it is, as steps of E. */
static void explain_cpu_resize(ncm_node *n, ncm_node_event *e, const ncm_container *c, int req,
                               const ncm_cpuset *have, const ncm_cpuset *promised,
                               const ncm_cpuset *free_before, const ncm_cpuset *now)
{
        ncm_buf b = NCM_BUF_INIT;

        ncm_buf_printf(&b, "resize of %s: %d -> %d exclusive CPUs; holds ", c->name,
                       have ? ncm_cpuset_weight(have) : 0, req);
        if (have)
                ncm_cpuset_format_list_buf(have, &b);
        ncm_buf_puts(&b, " (NUMA ");
        if (have)
                put_numa_of(n->topo, have, &b);
        ncm_buf_puts(&b, "), promised ");
        if (promised)
                ncm_cpuset_format_list_buf(promised, &b);
        else
                ncm_buf_puts(&b, "none");
        if (!ncm_buf_failed(&b))
                ncm__node_event_step(e, "%s", b.data);
        ncm_buf_done(&b);
        if (!now || !have)
                return;
        b = (ncm_buf)NCM_BUF_INIT;
        if (ncm_cpuset_weight(now) > ncm_cpuset_weight(have)) {
                ncm_autoptr(ncm_cpuset) added = ncm_cpuset_new();
                if (added) {
                        ncm_cpuset_andnot(added, now, have);
                        ncm_buf_puts(&b, "upsize: keeps ");
                        ncm_cpuset_format_list_buf(have, &b);
                        ncm_buf_puts(&b, ", adds ");
                        ncm_cpuset_format_list_buf(added, &b);
                        ncm_buf_puts(&b, " (NUMA ");
                        put_numa_of(n->topo, added, &b);
                        ncm_buf_puts(&b, ") out of the free CPUs ");
                        ncm_cpuset_format_list_buf(free_before, &b);
                }
        } else if (ncm_cpuset_weight(now) < ncm_cpuset_weight(have)) {
                ncm_autoptr(ncm_cpuset) gone = ncm_cpuset_new();
                if (gone) {
                        ncm_cpuset_andnot(gone, have, now);
                        ncm_buf_puts(&b, "downsize: keeps the promise and ");
                        ncm_cpuset_format_list_buf(now, &b);
                        ncm_buf_puts(&b, " in all, gives back ");
                        ncm_cpuset_format_list_buf(gone, &b);
                }
        } else {
                ncm_buf_puts(&b, "unchanged: ");
                ncm_cpuset_format_list_buf(now, &b);
        }
        if (!ncm_buf_failed(&b) && b.len)
                ncm__node_event_step(e, "%s", b.data);
        ncm_buf_done(&b);
}

/* isolatedCPUs: the pool an upsize of C (holding HAVE) grows in, out of the free CPUs FREE. */
static void explain_iso_resize(ncm_node *n, ncm_node_event *e, const ncm_pod *pod,
                               const ncm_container *c, const ncm_cpuset *have,
                               const ncm_cpuset *free)
{
        ncm_autoptr(ncm_cpuset) pool = NULL;
        ncm_autofree char *ps = NULL, *fs = NULL;
        int tier;

        if (!have || ncm_cpu_guaranteed_cpus(pod, c) <= ncm_cpuset_weight(have) ||
            !(pool = ncm_cpuset_dup(free)))
                return;
        tier = ncm_cpu_policy_isolation_resize_pool(n->cpu, pod, have, pool);
        if (tier == 0)
                return;
        ps = ncm_cpuset_format_list(pool);
        fs = ncm_cpuset_format_list(free);
        ncm__node_event_step(e, "isolatedCPUs %s: it grows %s: %s of the free CPUs %s",
                             ncm_cpu_isolation_name(ncm_cpu_policy_isolation(n->cpu, NULL)),
                             tier == 2   ? "only onto isolated CPUs (its pool)"
                             : tier == 1 ? "only onto CPUs that are not isolated"
                                         : "onto any, holding both already",
                             ps && ps[0] ? ps : "none", fs ? fs : "");
}

int ncm__node_cpu_resize_allocate(ncm_node *n, const ncm_tm_call *call, const ncm_hint *affinity,
                                  const char **ret_type, ncm_error *err)
{
        node_txn *txn = call->txn;
        const ncm_pod *pod = call->pod;
        const ncm_container *c = call->container;
        ncm_autoptr(ncm_cpuset) have = NULL;
        ncm_autoptr(ncm_cpuset) promised = NULL;
        ncm_autoptr(ncm_cpuset) free_before = ncm_cpuset_new();
        ncm_node_event *e = NULL;
        const ncm_cpuset *h, *p, *now;
        ncm_device_location *locs = NULL;
        ncm_autofree ncm_cpu_near *near = NULL;
        size_t nl = 0, nn = 0;
        char bt[NCM_QUANTITY_STRLEN];
        int r;

        if (!resizable(c))
                return 0;
        h = ncm_cpu_state_get(n->cpu_state, pod->uid, c->name);
        p = ncm_cpu_state_promised(n->cpu_state, pod->uid, c->name);
        if (!free_before || (h && !(have = ncm_cpuset_dup(h))) ||
            (p && !(promised = ncm_cpuset_dup(p))))
                return oom(err);
        ncm_cpu_policy_available(n->cpu, n->cpu_state, free_before);
        if (txn && txn->explain) {
                e = ncm__node_event_add(txn, NCM_NODE_EVENT_ALLOCATE, c->name, "cpu");
                if (!e)
                        return oom(err);
                e->hint = *affinity;
        }
        /* deviceLocalCPUs: prefer: the CPUs the resize chooses are chosen as at admission */
        if (h && (r = ncm__node_cpu_near(n, pod, c, &locs, &nl, &near, &nn, err)) < 0)
                return r;
        r = ncm_cpu_policy_resize_near(n->cpu, n->cpu_state, pod, c, affinity, near, nn,
                                       before_text(txn, c->name, bt), ret_type, err);
        now = ncm_cpu_state_get(n->cpu_state, pod->uid, c->name);
        if (!e) {
                ncm_device_locations_free(locs, nl);
                return r;
        }
        e->ok = r >= 0;
        if (r < 0) {
                e->text = strdup(err && err->msg[0] ? err->msg : ncm_strerror(-r));
                explain_cpu_resize(n, e, c, ncm_cpu_guaranteed_cpus(pod, c), have, promised,
                                   free_before, NULL);
                explain_iso_resize(n, e, pod, c, have, free_before);
                if (*ret_type && strcmp(*ret_type, NCM_CPU_REASON_PROHIBITED) == 0 && promised) {
                        ncm_autofree char *ps = ncm_cpuset_format_list(promised);
                        ncm__node_event_step(e,
                                             "below the promise: %d requested, but every one of "
                                             "the %d promised CPUs %s stays with the container",
                                             ncm_cpu_guaranteed_cpus(pod, c),
                                             ncm_cpuset_weight(promised), ps ? ps : "");
                }
                if (*ret_type && strcmp(*ret_type, NCM_CPU_REASON_PROMISED_MISSING) == 0)
                        ncm__node_event_step(e, "no promise is kept for it: it was admitted while "
                                                "InPlacePodVerticalScalingExclusiveCPUs was off");
                ncm_device_locations_free(locs, nl);
                return r;
        }
        e->text = now ? ncm_cpuset_format_list(now) : strdup("shared pool");
        if (now) {
                explain_cpu_resize(n, e, c, ncm_cpu_guaranteed_cpus(pod, c), have, promised,
                                   free_before, now);
                explain_iso_resize(n, e, pod, c, have, free_before);
        }
        if (now && have && nl && ncm_cpuset_weight(now) != ncm_cpuset_weight(have)) {
                /* the CPUs this resize chose: an upsize's added ones, a downsize's kept beyond
                 * the promise */
                ncm_autoptr(ncm_cpuset) chose = ncm_cpuset_new();
                const ncm_cpuset *kept =
                                ncm_cpuset_weight(now) > ncm_cpuset_weight(have) ? have : promised;
                /* an upsize's free CPUs its isolation pool keeps from it */
                ncm_autoptr(ncm_cpuset) off = NULL;
                if (ncm_cpuset_weight(now) > ncm_cpuset_weight(have) &&
                    (off = ncm_cpuset_dup(free_before))) {
                        ncm_cpu_policy_isolation_resize_pool(n->cpu, pod, have, off);
                        ncm_cpuset_andnot(off, free_before, off);
                }
                if (chose) {
                        ncm_cpuset_copy(chose, now);
                        if (kept)
                                ncm_cpuset_andnot(chose, chose, kept);
                        ncm__node_explain_near(n, e, locs, nl, near, nn, chose, off);
                }
        }
        ncm_device_locations_free(locs, nl);
        return 0;
}

/*
 * Why the merge of a refused resize refused, told on the CPU side: for each container that
 * must grow, its current NUMA nodes, their free CPUs, and whether more nodes would have to
 * join (which single-numa-node, or restricted without a preferred hint, refuses).
 */
static void explain_merge_refusal(ncm_node *n, node_txn *t, const ncm_pod *pod)
{
        ncm_node_event *e = NULL;

        for (size_t i = t->n_ev; i > 0; i--)
                if (t->ev[i - 1].kind == NCM_NODE_EVENT_MERGE && !t->ev[i - 1].ok) {
                        e = &t->ev[i - 1];
                        break;
                }
        if (!e)
                return;
        for (size_t i = 0; i < n_all(pod); i++) {
                const ncm_container *c = nth(pod, i);
                const ncm_cpuset *have = ncm_cpu_state_get(n->cpu_state, pod->uid, c->name);
                int req = ncm_cpu_guaranteed_cpus(pod, c), grow, tier;
                ncm_autoptr(ncm_cpuset) near = ncm_cpuset_new();
                ncm_autoptr(ncm_cpuset) freeset = ncm_cpuset_new();
                ncm_buf b = NCM_BUF_INIT;
                if (!have || !near || !freeset || !resizable(c) || req <= ncm_cpuset_weight(have))
                        continue;
                grow = req - ncm_cpuset_weight(have);
                ncm_cpu_policy_available(n->cpu, n->cpu_state, freeset);
                tier = ncm_cpu_policy_isolation_resize_pool(n->cpu, pod, have, freeset);
                NCM_CPUSET_FOREACH(cpu, have)
                {
                        const ncm_cpu_info *ci = ncm_topo_cpu(n->topo, cpu);
                        const ncm_cpuset *nc = ci ? ncm_topo_numa_cpus(n->topo, ci->numa) : NULL;
                        if (nc)
                                ncm_cpuset_or(near, near, nc);
                }
                ncm_cpuset_and(near, near, freeset);
                ncm_buf_printf(&b, "%s holds ", c->name);
                ncm_cpuset_format_list_buf(have, &b);
                ncm_buf_puts(&b, " on NUMA node(s) ");
                put_numa_of(n->topo, have, &b);
                ncm_buf_printf(&b, ", which have %d free CPU%s%s", ncm_cpuset_weight(near),
                               ncm_cpuset_weight(near) == 1 ? "" : "s",
                               tier == 2   ? " in its isolation pool (the isolated CPUs)"
                               : tier == 1 ? " that are not isolated (its isolation pool)"
                                           : "");
                if (ncm_cpuset_weight(near) >= grow) {
                        ncm_buf_printf(&b, ": room for the %d it adds", grow);
                } else if (ncm_cpuset_is_subset(freeset, near)) {
                        ncm_buf_printf(&b,
                                       "; it needs %d more, and no other NUMA node has a "
                                       "free CPU it may take",
                                       grow);
                } else {
                        ncm_autoptr(ncm_cpuset) far = ncm_cpuset_new();
                        if (far) {
                                ncm_cpuset_andnot(far, freeset, near);
                                ncm_buf_printf(&b,
                                               "; it needs %d more, so the affinity would have "
                                               "to grow to NUMA node(s) ",
                                               grow);
                                put_numa_of(n->topo, far, &b);
                                ncm_buf_printf(&b, " (free there: ");
                                ncm_cpuset_format_list_buf(far, &b);
                                ncm_buf_printf(&b, "), which the %s policy does not admit",
                                               ncm_node_config_tm_policy(n->cfg));
                        }
                }
                if (!ncm_buf_failed(&b))
                        ncm__node_event_step(e, "%s", b.data);
                ncm_buf_done(&b);
        }
}

/* ------------------------------------------------------------------------------------------
 * The kubelet's checks before the managers
 */

static bool lists_equal(const ncm_resource_list *a, const ncm_resource_list *b, bool skip_cpu_mem)
{
        size_t i = 0, j = 0;

        for (;;) {
                while (skip_cpu_mem && i < a->n &&
                       (strcmp(a->items[i].name, NCM_RESOURCE_CPU) == 0 ||
                        strcmp(a->items[i].name, NCM_RESOURCE_MEMORY) == 0))
                        i++;
                while (skip_cpu_mem && j < b->n &&
                       (strcmp(b->items[j].name, NCM_RESOURCE_CPU) == 0 ||
                        strcmp(b->items[j].name, NCM_RESOURCE_MEMORY) == 0))
                        j++;
                if (i == a->n || j == b->n)
                        return i == a->n && j == b->n;
                if (strcmp(a->items[i].name, b->items[j].name) != 0 ||
                    !ncm_quantity_equal(&a->items[i].quantity, &b->items[j].quantity))
                        return false;
                i++;
                j++;
        }
}

static bool resources_equal(const ncm_resources *a, const ncm_resources *b, bool skip_cpu_mem)
{
        return lists_equal(&a->requests, &b->requests, skip_cpu_mem) &&
               lists_equal(&a->limits, &b->limits, skip_cpu_mem);
}

static bool same_cdi(const ncm_container *a, const ncm_container *b)
{
        if (a->n_cdi_devices != b->n_cdi_devices)
                return false;
        for (size_t i = 0; i < a->n_cdi_devices; i++)
                if (strcmp(a->cdi_devices[i], b->cdi_devices[i]) != 0)
                        return false;
        return true;
}

/*
 * POD with the CDI devices HELD's containers were admitted with, where POD names none (the CRI
 * proxy's UpdateContainerResources carries none): a resize keeps a container's DRA devices, so
 * that their hints and locality count as at admission, and the registry keeps them. *RET is
 * NULL when POD already names them all.
 */
static int keep_cdi(const ncm_pod *held, const ncm_pod *pod, ncm_pod **ret, ncm_error *err)
{
        ncm_autoptr(ncm_pod) copy = NULL;

        *ret = NULL;
        for (size_t i = 0; i < n_all(pod); i++) {
                const ncm_container *a = nth(held, i), *b = nth(pod, i);
                int r;
                if (!a->n_cdi_devices || b->n_cdi_devices)
                        continue;
                if (!copy && !(copy = ncm_pod_dup(pod)))
                        return oom(err);
                r = ncm_pod_set_cdi_devices(copy, a->name, (const char *const *)a->cdi_devices,
                                            a->n_cdi_devices, err);
                if (r < 0)
                        return r;
        }
        *ret = NCM_TAKE_PTR(copy);
        return 0;
}

/*
 * POD with the annotations nodecm acts on (nodecm.io/isolated-cpus, CRI-O's knobs) that HELD
 * was admitted with, where POD gives none: they decided at admission which pool the
 * containers' CPUs are in and what their cgroups and interrupts do, and a resize keeps both
 * (CRI-O, too, reads them once, when it creates the container). A resize that gives one with
 * another value, or one HELD did not have, is refused: -EINVAL. *RET is NULL when POD already
 * holds them all.
 */
static int keep_annotations(const ncm_pod *held, const ncm_pod *pod, ncm_pod **ret, ncm_error *err)
{
        ncm_autoptr(ncm_pod) copy = NULL;

        *ret = NULL;
        for (size_t i = 0; i < pod->n_annotations; i++) {
                const ncm_pod_annotation *a = &pod->annotations[i];
                const char *was = ncm_pod_get_annotation(held, a->key);
                if (!was || strcmp(was, a->value) != 0)
                        return ncm_error_set(err, EINVAL,
                                             "resize of pod '%s': annotation %s may not change "
                                             "(it was %s%s%s at admission)",
                                             pod->uid, a->key, was ? "\"" : "", was ? was : "unset",
                                             was ? "\"" : "");
        }
        for (size_t i = 0; i < held->n_annotations; i++) {
                const ncm_pod_annotation *a = &held->annotations[i];
                int r;
                if (ncm_pod_get_annotation(pod, a->key))
                        continue;
                if (!copy && !(copy = ncm_pod_dup(pod)))
                        return oom(err);
                r = ncm_pod_set_annotation(copy, a->key, a->value, err);
                if (r < 0)
                        return r;
        }
        *ret = NCM_TAKE_PTR(copy);
        return 0;
}

/* What the API server accepts as a resize of OLD into NEW (the subresource's rules). */
static int check_request(const ncm_pod *old, const ncm_pod *new, ncm_error *err)
{
        if (old->n_init_containers != new->n_init_containers ||
            old->n_containers != new->n_containers)
                return ncm_error_set(err, EINVAL,
                                     "resize of pod '%s': containers may not be added or removed",
                                     new->uid);
        for (size_t i = 0; i < n_all(new); i++) {
                const ncm_container *a = nth(old, i), *b = nth(new, i);
                if (strcmp(a->name, b->name) != 0 || a->init != b->init || a->sidecar != b->sidecar)
                        return ncm_error_set(err, EINVAL,
                                             "resize of pod '%s': container %zu is '%s', was "
                                             "'%s': containers may not be renamed or reordered",
                                             new->uid, i, b->name, a->name);
                if (!resources_equal(&a->resources, &b->resources, resizable(b)))
                        return ncm_error_set(err, EINVAL,
                                             "resize of pod '%s': container '%s': only the cpu "
                                             "and memory of app containers and sidecars can be "
                                             "resized",
                                             new->uid, b->name);
                if (b->n_cdi_devices && !same_cdi(a, b))
                        return ncm_error_set(err, EINVAL,
                                             "resize of pod '%s': container '%s': its CDI "
                                             "devices may not change",
                                             new->uid, b->name);
        }
        if (old->has_pod_resources != new->has_pod_resources ||
            !resources_equal(&old->resources, &new->resources, false) ||
            !lists_equal(&old->overhead, &new->overhead, false))
                return ncm_error_set(err, EINVAL,
                                     "resize of pod '%s': pod-level resources and overhead are "
                                     "not resized by nodecm",
                                     new->uid);
        return 0;
}

/* Whether the request of RES changes between OLD and NEW in a resizable container. */
static bool request_changed(const ncm_pod *old, const ncm_pod *new, const char *res)
{
        for (size_t i = 0; i < n_all(new); i++) {
                const ncm_container *b = nth(new, i);
                const ncm_container *a = nth(old, i);
                const ncm_quantity *qa = ncm_container_request(a, res);
                const ncm_quantity *qb = ncm_container_request(b, res);
                if (!resizable(b))
                        continue;
                if (!qa != !qb || (qa && !ncm_quantity_equal(qa, qb)))
                        return true;
        }
        return false;
}

static void refuse(ncm_node_admission *a, const char *reason, const char *fmt, ...)
                NCM_PRINTF(3, 4);
static void refuse(ncm_node_admission *a, const char *reason, const char *fmt, ...)
{
        va_list ap;

        a->admitted = false;
        snprintf(a->reason, sizeof(a->reason), "%s", reason);
        va_start(ap, fmt);
        vsnprintf(a->message, sizeof(a->message), fmt, ap);
        va_end(ap);
}

/* The requests of POD as the kubelet's GetResourceRequest sums them. */
static int pod_request(const ncm_pod *pod, const char *res, int64_t *ret, ncm_error *err)
{
        ncm_resource_list l = {0};
        const ncm_quantity *q;
        int r = ncm_pod_requests(pod, 0, &l, err);

        if (r < 0)
                return r;
        q = ncm_resource_list_get(&l, res);
        *ret = !q                                   ? 0
               : strcmp(res, NCM_RESOURCE_CPU) == 0 ? ncm_quantity_milli_value(q)
                                                    : ncm_quantity_value(q);
        ncm_resource_list_done(&l);
        return 0;
}

/*
 * canResizePod's capacity check against the node's absolute allocatable (capacity less
 * kubeReserved and systemReserved; no eviction threshold): 1 with A refused, 0, -errno.
 */
static int check_capacity(ncm_node *n, const ncm_pod *pod, ncm_node_admission *a, ncm_error *err)
{
        const ncm_resource_list *kr = ncm_node_config_kube_reserved(n->cfg);
        const ncm_resource_list *sr = ncm_node_config_system_reserved(n->cfg);
        int64_t cap_cpu, cap_mem = -1, want_cpu, want_mem;
        const ncm_quantity *q;
        int r;

        q = ncm_resource_list_get(&n->fit_capacity, NCM_RESOURCE_CPU);
        cap_cpu = q ? ncm_quantity_milli_value(q) : (int64_t)ncm_topo_num_cpus(n->topo) * 1000;
        q = ncm_resource_list_get(&n->fit_capacity, NCM_RESOURCE_MEMORY);
        if (q)
                cap_mem = ncm_quantity_value(q);
        for (int k = 0; k < 2; k++) {
                const ncm_resource_list *l = k ? sr : kr;
                if (!l)
                        continue;
                if ((q = ncm_resource_list_get(l, NCM_RESOURCE_CPU)))
                        cap_cpu -= ncm_quantity_milli_value(q);
                if (cap_mem >= 0 && (q = ncm_resource_list_get(l, NCM_RESOURCE_MEMORY)))
                        cap_mem -= ncm_quantity_value(q);
        }
        if (cap_cpu < 0)
                cap_cpu = 0;
        r = pod_request(pod, NCM_RESOURCE_CPU, &want_cpu, err);
        if (r >= 0)
                r = pod_request(pod, NCM_RESOURCE_MEMORY, &want_mem, err);
        if (r < 0)
                return r;
        /* nodecm checks memory only when it knows the node's memory */
        if (cap_mem >= 0 && want_mem > (cap_mem < 0 ? 0 : cap_mem)) {
                refuse(a, NCM_RESIZE_REASON_INFEASIBLE,
                       "Node didn't have enough capacity: memory, requested: %lld, capacity: %lld",
                       (long long)want_mem, (long long)(cap_mem < 0 ? 0 : cap_mem));
                return 1;
        }
        if (want_cpu > cap_cpu) {
                refuse(a, NCM_RESIZE_REASON_INFEASIBLE,
                       "Node didn't have enough capacity: cpu, requested: %lld, capacity: %lld",
                       (long long)want_cpu, (long long)cap_cpu);
                return 1;
        }
        return 0;
}

/* The kubelet's refusals before the managers (canResizePod); 1 with A refused, 0, -errno. */
static int precheck(ncm_node *n, const ncm_pod *old, const ncm_pod *pod, unsigned flags,
                    ncm_node_admission *a, ncm_error *err)
{
        if (old->qos != pod->qos) {
                /* the API server's validation: the stored class, quoted as Go quotes it */
                refuse(a, NCM_RESIZE_REASON_INVALID,
                       "The Pod \"%s\" is invalid: spec: Invalid value: \"%s\": Pod QOS Class "
                       "may not change as a result of resizing",
                       pod->name && pod->name[0] ? pod->name : pod->uid,
                       ncm_qos_class_name(old->qos));
                return 1;
        }
        if (pod->qos == NCM_QOS_GUARANTEED) {
                if (!gate(n, NCM_GATE_RESIZE_EXCLUSIVE_CPUS, false) && static_cpu(n) &&
                    request_changed(old, pod, NCM_RESOURCE_CPU)) {
                        refuse(a, NCM_RESIZE_REASON_INFEASIBLE,
                               "Resize is infeasible for Guaranteed Pods alongside CPU Manager "
                               "policy \"static\"");
                        return 1;
                }
                if (gate(n, "MemoryManager", true) &&
                    !gate(n, NCM_GATE_RESIZE_EXCLUSIVE_MEMORY, false) &&
                    ncm_mem_policy_is_static(ncm_node_memory_policy(n)) &&
                    request_changed(old, pod, NCM_RESOURCE_MEMORY)) {
                        refuse(a, NCM_RESIZE_REASON_INFEASIBLE,
                               "Resize is infeasible for Guaranteed Pods alongside Memory "
                               "Manager policy \"Static\"");
                        return 1;
                }
        }
        if (ncm__node_fit_wanted(n, flags))
                return check_capacity(n, pod, a, err);
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * Enforcement
 */

/*
 * The resized pod on the machine: what shrinks first (containers' limits, then their
 * cpusets), then the shared pool (it gives up what grown containers take and gets what shrunk
 * ones release), then the pod cgroup and what grows (cpusets, then limits). No container is
 * ever outside both its old and its new cpuset, and no CPU is in a grown container's cpuset
 * while the shared containers still run on it. 1 with the enforcer's transaction open (the
 * caller commits it once the files are, or undoes it), 0 without an enforcer, or the
 * enforcer's error with its writes rolled back.
 */
static int enforce_resize(ncm_node *n, const ncm_pod *old, const ncm_pod *pod,
                          const ncm_cpuset *const *before, ncm_error *err)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        ncm_autofree ncm_enforce_container *v = NULL;
        ncm_autoptr(ncm_cpuset) shared = ncm_cpuset_new();
        ncm_cgroup_qos_usage usage;
        ncm_enforce_pod ep;
        ncm_enforce_resize rz;
        size_t nv = 0;
        char what[512];
        int r;

        if (!ops)
                return 0;
        if (!shared)
                return oom(err);
        snprintf(what, sizeof(what), "resize pod '%s'", pod->uid);
        r = ncm__node_enforce_prepare(n, pod, shared, &usage, &v, &nv, err);
        if (r < 0)
                return r;
        ep = (ncm_enforce_pod){pod, v, nv};
        rz = (ncm_enforce_resize){.before = old, .after = &ep, .cpus_before = before};
        r = ncm__node_enforce_begin(n, err);
        if (r >= 0 && ops->pod_resize) {
                rz.phase = NCM_ENFORCE_RESIZE_SHRINK;
                r = ops->pod_resize(ncm_enforcer_get_data(n->enforcer), &rz, &usage, err);
        }
        if (r >= 0)
                r = ncm__node_enforce_shared(n, err);
        if (r >= 0 && ops->pod_resize) {
                rz.phase = NCM_ENFORCE_RESIZE_GROW;
                r = ops->pod_resize(ncm_enforcer_get_data(n->enforcer), &rz, &usage, err);
        }
        /* CRI-O's knobs follow the new cpusets (banned IRQ CPUs, load balancing, a quota the
         * resize wrote back), as after an admission;
         * the caller commits them with the files */
        if (r >= 0)
                r = ncm__node_enforce_isolation(n, false, err);
        if (r < 0)
                return ncm__node_enforce_fail(n, r, what, err);
        return 1;
}

/* Every container's CPUs as they are now (NULL: on the shared pool), for enforcement. */
static int cpus_now(const ncm_node *n, const ncm_pod *pod, ncm_cpuset ***ret)
{
        size_t total = n_all(pod);
        ncm_cpuset **v = calloc(total + 1, sizeof(*v));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < total; i++) {
                const ncm_cpuset *own =
                                ncm_cpu_state_get(n->cpu_state, pod->uid, nth(pod, i)->name);
                v[i] = ncm_cpuset_new();
                if (!v[i]) {
                        for (size_t k = 0; k < i; k++)
                                ncm_cpuset_free(v[k]);
                        free(v);
                        return -ENOMEM;
                }
                if (own)
                        ncm_cpuset_copy(v[i], own);
                else
                        ncm_node_shared_pool(n, v[i]);
        }
        *ret = v;
        return 0;
}

static void cpus_free(ncm_cpuset **v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                ncm_cpuset_free(v[i]);
        free(v);
}

/* ------------------------------------------------------------------------------------------
 * The resize
 */

/*
 * Decide, enforce and record, as an admission does (node.c): one transaction whose files (the
 * checkpoints, the pod's record) commit together after the enforcer's writes and before its
 * commit; on a refusal or a failure everything is put back and nothing is written.
 */
static int resize(ncm_node *n, const ncm_pod *old, const ncm_pod *pod, unsigned flags,
                  ncm_node_admission *a, ncm_error *err)
{
        node_txn txn = {.n = n, .pod = pod, .before = old, .explain = (flags & NCM_NODE_EXPLAIN)};
        ncm__node_saved *saved = NULL;
        ncm_cpuset **before = NULL;
        ncm_pod *prev = NULL;
        ncm_tm_admit_result res;
        bool enforcing = false, committed = false;
        int r;

        r = cpus_now(n, pod, &before);
        if (r < 0)
                return oom(err);
        r = ncm__node_txn_begin(n, err);
        if (r < 0) {
                cpus_free(before, n_all(pod));
                return r;
        }
        ncm__node_txn_pod(n, pod->uid);
        r = ncm__node_save(n, pod, &saved, err);
        if (r < 0) {
                ncm__node_txn_end(n);
                cpus_free(before, n_all(pod));
                return r;
        }
        if (txn.explain) {
                ncm_tm_trace trace = {ncm__node_explain_trace, &txn};
                if (ncm__node_explain_begin(&txn) < 0)
                        r = oom(err);
                else
                        ncm_tm_set_trace(n->tm, &trace);
        }
        ncm_cpu_state_hold(n->cpu_state);
        if (r >= 0)
                r = ncm_tm_admit_op(n->tm, pod, NCM_TM_OP_RESIZE, &txn, &res, err);
        ncm_tm_set_trace(n->tm, NULL);
        if (r >= 0 && txn.trace_err < 0)
                r = oom(err);
        if (r >= 0 && !res.admit) {
                /* KEP-5554: what the managers refuse is infeasible, never retried */
                refuse(a, NCM_RESIZE_REASON_INFEASIBLE, "%s", res.message);
                if (txn.explain)
                        explain_merge_refusal(n, &txn, pod);
        }
        if (r >= 0 && a->reason[0] == '\0' && ncm__node_fit_wanted(n, flags)) {
                /* then the predicates beside the other pods: a resize waits until it fits */
                ncm_node_fit fit;
                r = ncm__node_fit_of(n, pod, &fit, err);
                if (r >= 0 && !fit.fit)
                        refuse(a, NCM_RESIZE_REASON_DEFERRED, "%s", fit.message);
        }
        if (r >= 0 && a->reason[0] == '\0') {
                /* the decision, written once, joins the transaction */
                r = ncm_cpu_state_flush(n->cpu_state, err);
                if (r >= 0)
                        r = ncm__node_mem_flush(n, err);
                if (r < 0)
                        ncm_cpu_state_hold(n->cpu_state);
        }
        if (r >= 0 && a->reason[0] == '\0') {
                /* the registry's record, the machine, then the files, then the machine's commit */
                r = ncm__node_pod_respec(n, pod, &prev, err);
                if (r >= 0) {
                        r = enforce_resize(n, old, pod, (const ncm_cpuset *const *)before, err);
                        enforcing = r > 0;
                }
                if (r >= 0)
                        r = ncm__node_txn_commit(n, err);
                committed = r >= 0;
                if (r < 0 && enforcing)
                        r = ncm__node_enforce_undo(n, r, err);
                else if (r >= 0 && enforcing)
                        r = ncm__node_enforce_commit(n, err); /* out of memory at worst */
        }
        if (!committed && (r < 0 || a->reason[0] != '\0')) {
                /* refused or failed before the commit: nothing was written, nothing will be */
                ncm_error e = NCM_ERROR_INIT;
                int rb;
                n->txn_doomed = n->txn != NULL;
                if (prev) {
                        ncm_pod *back = NULL;
                        if (ncm__node_pod_respec(n, prev, &back, NULL) >= 0)
                                ncm_pod_free(back);
                        prev = ncm_pod_free(prev);
                }
                rb = ncm__node_restore(n, pod, saved, &e);
                if (r >= 0 && rb < 0) {
                        if (err)
                                *err = e;
                        r = rb;
                }
        } else if (r >= 0) {
                a->admitted = true;
        }
        ncm__node_txn_end(n);
        ncm_pod_free(prev);
        ncm__node_saved_free(saved);
        cpus_free(before, n_all(pod));
        if (r >= 0) {
                a->events = txn.ev;
                a->n_events = txn.n_ev;
                txn.ev = NULL;
                txn.n_ev = txn.cap_ev = 0;
        }
        ncm__node_txn_done(&txn);
        return r;
}

int ncm_node_resize(ncm_node *n, const ncm_pod *pod, unsigned flags, ncm_node_admission **ret,
                    ncm_error *err)
{
        ncm_autoptr(ncm_node_admission) a = calloc(1, sizeof(*a));
        ncm_autoptr(ncm_pod) old = NULL;
        ncm_autoptr(ncm_pod) with_cdi = NULL;
        ncm_autoptr(ncm_pod) with_ann = NULL;
        const ncm_pod *held = ncm_node_pod(n, pod->uid);
        int r;

        if (!a)
                return oom(err);
        if (n->read_only)
                return ncm_error_set(err, EROFS, "%s: opened read-only", n->dir ? n->dir : "node");
        if (!held)
                return ncm_error_set(err, ENOENT, "resize of pod '%s': the node holds no such pod",
                                     pod->uid);
        if (!gate(n, "InPlacePodVerticalScaling", true))
                return ncm_error_set(err, ENOTSUP,
                                     "resize of pod '%s': the InPlacePodVerticalScaling feature "
                                     "gate is off: pods are not resized in place",
                                     pod->uid);
        r = check_request(held, pod, err);
        if (r < 0)
                return r;
        r = keep_cdi(held, pod, &with_cdi, err);
        if (r < 0)
                return r;
        if (with_cdi)
                pod = with_cdi;
        r = keep_annotations(held, pod, &with_ann, err);
        if (r < 0)
                return r;
        if (with_ann)
                pod = with_ann;
        /* the registry's spec is replaced on success: keep the one decided against */
        old = ncm_pod_dup(held);
        if (!old)
                return oom(err);
        r = precheck(n, old, pod, flags, a, err);
        if (r == 0)
                r = resize(n, old, pod, flags, a, err);
        if (r < 0)
                return r;
        /* the containers as they stand: after the resize, or as before it */
        r = ncm__node_result(n, a->admitted ? pod : old, a);
        if (r < 0)
                return oom(err);
        *ret = NCM_TAKE_PTR(a);
        return 0;
}

int ncm_node_resize_batch(ncm_node *n, const ncm_pod *pod, unsigned flags, ncm_fs_batch *batch,
                          ncm_node_admission **ret, ncm_error *err)
{
        ncm_fs_batch *prev = ncm__node_stage(n, batch);
        int r = ncm_node_resize(n, pod, flags, ret, err);

        n->stage = prev;
        return r;
}
