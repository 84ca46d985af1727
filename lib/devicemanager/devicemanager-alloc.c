/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Allocation at admission: kubelet's Allocate / allocateContainerResources /
 * devicesToAllocate / filterByAffinity, and GetDeviceRunContainerOptions.
 *
 * Allocation works on a copy of the bookkeeping (dm_state) and commits it only when the
 * whole container succeeded, so a failure leaves nothing reserved.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include "devicemanager-internal.h"

/* ---- validating a container's extended resources ---- */

int ncm_devmgr_validate_container(const ncm_devmgr_container *c, ncm_error *err)
{
        if (!c || !c->name)
                return ncm_error_set(err, EINVAL, "container without a name");
        for (size_t i = 0; i < c->n_resources; i++) {
                const ncm_devmgr_resource *r = &c->resources[i];
                if (!r->name)
                        return ncm_error_set(err, EINVAL,
                                             "container \"%s\": resource %zu has no name", c->name,
                                             i);
                for (size_t k = 0; k < i; k++)
                        if (strcmp(c->resources[k].name, r->name) == 0)
                                return ncm_error_set(err, EINVAL,
                                                     "container \"%s\": resource %s listed twice",
                                                     c->name, r->name);
                if (!ncm_devmgr_is_extended_resource_name(r->name))
                        continue;
                if (r->limit < NCM_DEVMGR_UNSET)
                        return ncm_error_set(err, EINVAL,
                                             "container \"%s\": resources.limits[%s]: Invalid "
                                             "value: \"%" PRId64
                                             "\": must be greater than or equal to 0",
                                             c->name, r->name, r->limit);
                if (r->request < NCM_DEVMGR_UNSET)
                        return ncm_error_set(err, EINVAL,
                                             "container \"%s\": resources.requests[%s]: Invalid "
                                             "value: \"%" PRId64
                                             "\": must be greater than or equal to 0",
                                             c->name, r->name, r->request);
                if (r->request != NCM_DEVMGR_UNSET && r->limit == NCM_DEVMGR_UNSET)
                        return ncm_error_set(err, EINVAL,
                                             "container \"%s\": resources.limits[%s]: Required "
                                             "value: Limit must be set for non overcommitable "
                                             "resources",
                                             c->name, r->name);
                if (r->request != NCM_DEVMGR_UNSET && r->request != r->limit)
                        return ncm_error_set(err, EINVAL,
                                             "container \"%s\": resources.requests[%s]: Invalid "
                                             "value: \"%" PRId64 "\": must be equal to %s limit "
                                             "of %" PRId64,
                                             c->name, r->name, r->request, r->name, r->limit);
        }
        return 0;
}

/* The container's device requests: extended resources with a limit, sorted by name. */
typedef struct want {
        const char *name;
        int64_t count;
} want;

static int cmp_want(const void *a, const void *b)
{
        return strcmp(((const want *)a)->name, ((const want *)b)->name);
}

static int wanted(const ncm_devmgr_container *c, want **ret, size_t *ret_n)
{
        want *v = calloc(c->n_resources ? c->n_resources : 1, sizeof(*v));
        size_t n = 0;
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_resources; i++) {
                const ncm_devmgr_resource *r = &c->resources[i];
                if (!ncm_devmgr_is_extended_resource_name(r->name) || r->limit < 0)
                        continue;
                v[n++] = (want){r->name, r->limit};
        }
        qsort(v, n, sizeof(*v), cmp_want);
        *ret = v;
        *ret_n = n;
        return 0;
}

/* ---- helpers ---- */

/* Go's %q of S appended to B. */
static const char *quoted(ncm_buf *b, const char *s)
{
        ncm_buf_reset(b);
        ncm_buf_go_quote(b, s, strlen(s));
        return b->data ? b->data : "\"\"";
}

static bool device_resource(const ncm_devmgr *m, const dm_state *st, const char *res)
{
        const dm_resource *r = ncm__dm_resource(m, res);
        return (r && r->has_healthy) || ncm__rsets_get(&st->allocated, res);
}

static bool has_topology_alignment(const dm_resource *r)
{
        for (size_t i = 0; r && i < r->n_devs; i++)
                if (r->devs[i].topology && r->devs[i].n_numa > 0)
                        return true;
        return false;
}

static bool pod_active(const ncm_devmgr *m, const char *pod)
{
        const char *const *uids = NULL;
        size_t n = 0;
        if (!m->has_pods || !m->pods.active_pods)
                return true;
        if (m->pods.active_pods(m->pods.data, &uids, &n) < 0)
                return true;
        for (size_t i = 0; i < n; i++)
                if (strcmp(uids[i], pod) == 0)
                        return true;
        return false;
}

static int stopped_error(const char *res, ncm_error *err)
{
        /* A decision, as every error of the kubelet's Allocate: UnexpectedAdmissionError. */
        return ncm_error_set(err, NCM_E_ADMISSION, "endpoint %s has been stopped", res);
}

/* ---- filterByAffinity ---- */

typedef struct split {
        ncm__strset aligned, unaligned, no_affinity;
} split;

static void split_done(split *s)
{
        ncm__strset_done(&s->aligned);
        ncm__strset_done(&s->unaligned);
        ncm__strset_done(&s->no_affinity);
}

/*
 * A device goes to the set of the first NUMA node that holds it in kubelet's node order:
 * nodes of the affinity first, then other real nodes, then the fake node -1 of devices
 * without topology. Whatever the ties between node sizes, that makes a device aligned if any
 * of its nodes is in the affinity, unaligned if it has another real node, else no-affinity.
 */
static int filter_by_affinity(const dm_resource *r, const ncm__strset *available,
                              const ncm_hint *affinity, split *out)
{
        for (size_t i = 0; i < available->n; i++) {
                const char *id = available->v[i];
                const dm_device *d = r ? ncm__dm_device(r, id) : NULL;
                ncm__strset *to = &out->no_affinity;

                if (has_topology_alignment(r) && affinity && !affinity->any && d && d->topology &&
                    d->n_numa) {
                        bool in = false, real = false;
                        for (size_t k = 0; k < d->n_numa; k++) {
                                int64_t node = d->numa[k];
                                if (node >= 0 && node < NCM_BITMASK_MAX_BITS &&
                                    ncm_bitmask_isset(affinity->numa, (int)node))
                                        in = true;
                                else if (node != NCM_DEVMGR_NO_TOPOLOGY)
                                        real = true;
                        }
                        to = in ? &out->aligned : real ? &out->unaligned : &out->no_affinity;
                }
                if (ncm__strset_add(to, id) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* ---- devicesToAllocate ---- */

typedef struct alloc_ctx {
        ncm_devmgr *m;
        dm_state *st;
        const char *pod;
        const char *container;
        const char *res;
        dm_resource *r;
        int64_t needed;
        ncm__strset allocated; /* this call's devices */
} alloc_ctx;

/* kubelet's allocateRemainingFrom: take S \ allocated in sorted order. 1 when satisfied. */
static int take(alloc_ctx *a, const ncm__strset *s)
{
        dm_rset *in_use = ncm__rsets_ensure(&a->st->allocated, a->res);
        if (!in_use)
                return -ENOMEM;
        if (a->needed <= 0)
                return 1;
        for (size_t i = 0; i < s->n; i++) {
                const char *id = s->v[i];
                if (ncm__strset_has(&a->allocated, id))
                        continue;
                if (ncm__strset_add(&in_use->set, id) < 0 || ncm__strset_add(&a->allocated, id) < 0)
                        return -ENOMEM;
                if (--a->needed == 0)
                        return 1;
        }
        return 0;
}

/* callGetPreferredAllocationIfAvailable. *RET is the preferred set (empty: none). */
static void intersect(ncm__strset *dst, const ncm__strset *keep)
{
        size_t j = 0;
        for (size_t i = 0; i < dst->n; i++) {
                if (ncm__strset_has(keep, dst->v[i]))
                        dst->v[j++] = dst->v[i];
                else
                        free(dst->v[i]);
        }
        dst->n = j;
}

/*
 * The plugin's GetPreferredAllocation as the kubelet calls it: available = WITHIN plus the
 * devices already chosen (which it must include), and of its answer only the devices in WITHIN
 * are kept in *RET. Nothing is added when the plugin does not offer the call.
 */
static int preferred(alloc_ctx *a, const ncm__strset *within, int64_t size, ncm__strset *ret,
                     ncm_error *err)
{
        const dm_endpoint *ep = a->r ? a->r->ep : NULL;
        ncm__strset available = NCM__STRSET_INIT;
        ncm_error perr = NCM_ERROR_INIT;
        char **ids = NULL;
        size_t n = 0;
        int k;

        if (!ep)
                return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                     "endpoint not found in cache for a registered resource: %s",
                                     a->res);
        if (!ep->has_opts || !ep->opts.get_preferred_allocation_available)
                return 0;
        if (ncm__strset_copy(&available, within) < 0 ||
            ncm__strset_union(&available, &a->allocated) < 0) {
                ncm__strset_done(&available);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        if (ep->stopped || !ep->ops)
                k = stopped_error(a->res, &perr);
        else if (!ep->ops->get_preferred_allocation)
                k = ncm_error_set(&perr, ENOSYS, "GetPreferredAllocation is not implemented");
        else
                k = ep->ops->get_preferred_allocation(
                                ep->data, a->res, (const char *const *)available.v, available.n,
                                (const char *const *)a->allocated.v, a->allocated.n, (int32_t)size,
                                &ids, &n, &perr);
        ncm__strset_done(&available);
        if (k < 0)
                return ncm_error_set(err, perr.code ? perr.code : -k,
                                     "device plugin GetPreferredAllocation rpc failed with err: %s",
                                     perr.msg);
        for (size_t i = 0; i < n; i++) {
                if (k >= 0 && ids[i] && ncm__strset_add(ret, ids[i]) < 0)
                        k = -ENOMEM;
                free(ids[i]);
        }
        free(ids);
        if (k < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        intersect(ret, within);
        return 0;
}

static int less_than_required(alloc_ctx *a, int64_t required, ncm_error *err)
{
        return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                             "unexpectedly allocated less resources than required. Requested: "
                             "%" PRId64 ", Got: %" PRId64,
                             required, required - a->needed);
}

/*
 * The devices to give (pod, container) for RES: *OUT receives them (empty: no Allocate
 * call needed). The in-use set of A->st is updated as in the kubelet.
 */
static int devices_to_allocate(alloc_ctx *a, int64_t required, const ncm__strset *reusable,
                               const ncm_hint *affinity, ncm_error *err)
{
        const dm_entry *held = ncm__state_entry(a->st, a->pod, a->container, a->res);
        ncm__strset available = NCM__STRSET_INIT, pref = NCM__STRSET_INIT;
        split sp = {NCM__STRSET_INIT, NCM__STRSET_INIT, NCM__STRSET_INIT};
        ncm_buf q1 = NCM_BUF_INIT, q2 = NCM_BUF_INIT, q3 = NCM_BUF_INIT;
        const dm_rset *in_use;
        int k = 0;

        a->needed = required;
        if (held) {
                a->needed -= (int64_t)held->devices.n;
                if (a->needed != 0) {
                        k = ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                          "pod %s container %s changed request for resource %s "
                                          "from %zu to %" PRId64,
                                          quoted(&q1, a->pod), quoted(&q2, a->container),
                                          quoted(&q3, a->res), held->devices.n, required);
                        goto out;
                }
        }
        /* A kubelet restart with the container still running: it has its devices. */
        if (a->m->has_pods && a->m->pods.sources_ready && a->m->pods.container_running &&
            !a->m->pods.sources_ready(a->m->pods.data) &&
            a->m->pods.container_running(a->m->pods.data, a->pod, a->container))
                goto out;
        if (!a->r || !a->r->has_healthy) {
                k = ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                  "cannot allocate unregistered device %s", a->res);
                goto out;
        }
        if (a->r->healthy.n == 0) {
                k = ncm_error_set(
                                err, NCM_E_UNSATISFIABLE,
                                "no healthy devices present; cannot allocate unhealthy devices %s",
                                a->res);
                goto out;
        }
        if (held && !ncm__strset_is_subset(&held->devices, &a->r->healthy)) {
                k = ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                  "previously allocated devices are no longer healthy; cannot "
                                  "allocate unhealthy devices %s",
                                  a->res);
                goto out;
        }
        if (a->needed == 0)
                goto out;

        if (reusable && (k = take(a, reusable)) != 0)
                goto done;

        if (ncm__strset_copy(&available, &a->r->healthy) < 0)
                goto oom;
        in_use = ncm__rsets_get(&a->st->allocated, a->res);
        if (in_use)
                ncm__strset_subtract(&available, &in_use->set);
        ncm__dm_subtract_holds(a->m, a->pod, a->res, &available);
        if ((int64_t)available.n < a->needed) {
                k = ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                  "requested number of devices unavailable for %s. Requested: "
                                  "%" PRId64 ", Available: %zu",
                                  a->res, a->needed, available.n);
                goto out;
        }
        if (filter_by_affinity(a->r, &available, affinity, &sp) < 0)
                goto oom;

        if (a->needed < (int64_t)sp.aligned.n) {
                /* Everything fits in the aligned set: let the plugin choose within it. */
                k = preferred(a, &sp.aligned, required, &pref, err);
                if (k < 0)
                        goto out;
                if ((k = take(a, &pref)) != 0 || (k = take(a, &sp.aligned)) != 0)
                        goto done;
                k = less_than_required(a, required, err);
                goto out;
        }
        /* Honour the alignment first, then let the plugin choose the rest. */
        if ((k = take(a, &sp.aligned)) != 0)
                goto done;
        k = preferred(a, &available, required, &pref, err);
        if (k < 0)
                goto out;
        if ((k = take(a, &pref)) != 0 || (k = take(a, &sp.unaligned)) != 0 ||
            (k = take(a, &sp.no_affinity)) != 0)
                goto done;
        k = less_than_required(a, required, err);
        goto out;

done:
        if (k < 0)
                goto oom;
        k = 0;
        goto out;
oom:
        k = ncm_error_set(err, ENOMEM, "out of memory");
out:
        ncm__strset_done(&available);
        ncm__strset_done(&pref);
        split_done(&sp);
        ncm_buf_done(&q1);
        ncm_buf_done(&q2);
        ncm_buf_done(&q3);
        return k;
}

/* ---- recording an allocation ---- */

static int numa_append(dm_entry *e, int64_t node, const char *id)
{
        size_t at;
        ncm_devmgr_numa_ids *d;
        char **nv;

        for (at = 0; at < e->n_numa && e->numa[at].node < node; at++)
                ;
        if (at == e->n_numa || e->numa[at].node != node) {
                ncm_devmgr_numa_ids *v = realloc(e->numa, (e->n_numa + 1) * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                e->numa = v;
                memmove(v + at + 1, v + at, (e->n_numa - at) * sizeof(*v));
                v[at] = (ncm_devmgr_numa_ids){node, false, NULL, 0};
                e->n_numa++;
        }
        d = &e->numa[at];
        nv = realloc(d->ids, (d->n_ids + 2) * sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        d->ids = nv;
        nv[d->n_ids] = strdup(id);
        if (!nv[d->n_ids])
                return -ENOMEM;
        nv[++d->n_ids] = NULL;
        return 0;
}

/* podDevices.insert with the devices listed per NUMA node (-1: no topology). */
static int record(alloc_ctx *a, ncm_devmgr_alloc_resp *resp, ncm_error *err)
{
        dm_entry e = {0};

        e.resp = resp;
        e.pod = strdup(a->pod);
        e.container = strdup(a->container);
        e.resource = strdup(a->res);
        if (!e.pod || !e.container || !e.resource ||
            ncm__strset_copy(&e.devices, &a->allocated) < 0)
                goto oom;
        for (size_t i = 0; i < a->allocated.n; i++) {
                const char *id = a->allocated.v[i];
                const dm_device *d = a->r ? ncm__dm_device(a->r, id) : NULL;
                if (!d || !d->topology || d->n_numa == 0) {
                        if (numa_append(&e, NCM_DEVMGR_NO_TOPOLOGY, id) < 0)
                                goto oom;
                        continue;
                }
                for (size_t k = 0; k < d->n_numa; k++)
                        if (numa_append(&e, d->numa[k], id) < 0)
                                goto oom;
        }
        if (ncm_devmgr_alloc_resp_encode(resp, &e.resp_bytes, &e.resp_len, err) < 0) {
                ncm__entry_done(&e);
                return -ENOMEM;
        }
        if (ncm__state_put(a->st, &e) < 0)
                goto oom;
        return 0;
oom:
        ncm__entry_done(&e);
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* ---- Allocate ---- */

static int call_allocate(alloc_ctx *a, ncm_devmgr_alloc_resp **resp, ncm_error *err)
{
        const dm_endpoint *ep = a->r ? a->r->ep : NULL;
        int k;

        *resp = NULL;
        if (!ep)
                return ncm_error_set(err, NCM_E_UNSATISFIABLE, "unknown Device Plugin %s", a->res);
        if (ep->stopped || !ep->ops)
                return stopped_error(a->res, err);
        k = ep->ops->allocate(ep->data, a->res, (const char *const *)a->allocated.v, a->allocated.n,
                              resp, err);
        if (k < 0) {
                *resp = ncm_devmgr_alloc_resp_free(*resp);
                if (!err || !err->code)
                        ncm_error_set(err, -k, "device plugin Allocate failed");
                return k;
        }
        if (!*resp)
                return ncm_error_set(err, EPROTO, "no containers return in allocation response ");
        return 0;
}

/* addContainerAllocatedResources / removeContainerAllocatedResources on the reuse pool. */
static int update_reuse(dm_state *st, const char *pod, const char *container, bool add)
{
        for (size_t i = 0; i < st->n_entries; i++) {
                const dm_entry *e = &st->entries[i];
                dm_rset *s;
                if (strcmp(e->pod, pod) != 0 || strcmp(e->container, container) != 0)
                        continue;
                s = ncm__rsets_ensure(&st->reuse, e->resource);
                if (!s)
                        return -ENOMEM;
                if (add) {
                        if (ncm__strset_union(&s->set, &e->devices) < 0)
                                return -ENOMEM;
                } else {
                        ncm__strset_subtract(&s->set, &e->devices);
                }
        }
        return 0;
}

/* allocateContainerResources on ST. *WROTE tells whether something was allocated. */
static int allocate_resources(ncm_devmgr *m, dm_state *st, const char *pod,
                              const ncm_devmgr_container *c, const ncm_hint *affinity,
                              bool *allocated_any, ncm_error *err)
{
        ncm_autofree want *w = NULL;
        size_t n = 0;
        bool gc_done = false;
        int k;

        if (wanted(c, &w, &n) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                alloc_ctx a = {m, st, pod, c->name, w[i].name, NULL, 0, NCM__STRSET_INIT};
                ncm_devmgr_alloc_resp *resp = NULL;
                const dm_rset *reuse;

                if (!device_resource(m, st, w[i].name)) {
                        if ((m->flags & NCM_DEVMGR_SKIP_UNKNOWN_RESOURCES) || w[i].count == 0)
                                continue;
                        return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                             "cannot allocate unregistered device %s", w[i].name);
                }
                if (!gc_done) {
                        /* Garbage-collect stranded devices, into the working copy. */
                        dm_state live = m->st;
                        m->st = *st;
                        k = ncm__dm_gc(m, err);
                        *st = m->st;
                        m->st = live;
                        if (k < 0)
                                return k;
                        gc_done = true;
                }
                a.r = ncm__dm_resource(m, w[i].name);
                reuse = st->reuse_pod && strcmp(st->reuse_pod, pod) == 0
                                        ? ncm__rsets_get(&st->reuse, w[i].name)
                                        : NULL;
                k = devices_to_allocate(&a, w[i].count, reuse ? &reuse->set : NULL, affinity, err);
                if (k < 0 || a.allocated.n == 0) {
                        ncm__strset_done(&a.allocated);
                        if (k < 0)
                                return k;
                        continue;
                }
                k = call_allocate(&a, &resp, err);
                if (k >= 0)
                        k = record(&a, resp, err);
                else
                        ncm_devmgr_alloc_resp_free(resp);
                ncm__strset_done(&a.allocated);
                if (k < 0)
                        return k;
                *allocated_any = true;
        }
        return 0;
}

int ncm_devmgr_allocate(ncm_devmgr *m, const char *pod_uid, const ncm_devmgr_container *c,
                        const ncm_hint *affinity, ncm_error *err)
{
        dm_state t = {0}, old;
        bool any = false;
        int k;

        if (!pod_uid)
                return ncm_error_set(err, EINVAL, "allocate: pod UID needed");
        if ((k = ncm_devmgr_validate_container(c, err)) < 0)
                return k;
        if (ncm__state_copy(&t, &m->st) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        /* devicesToReuse keeps only the pod being admitted. */
        if (!t.reuse_pod || strcmp(t.reuse_pod, pod_uid) != 0) {
                free(t.reuse_pod);
                ncm__rsets_done(&t.reuse);
                t.reuse_pod = strdup(pod_uid);
                if (!t.reuse_pod) {
                        ncm__state_done(&t);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
        }
        m->call_pod = pod_uid;
        m->call_container = c->name;
        k = allocate_resources(m, &t, pod_uid, c, affinity, &any, err);
        m->call_pod = m->call_container = NULL;
        if (k >= 0 && update_reuse(&t, pod_uid, c->name, c->type == NCM_DEVMGR_INIT_CONTAINER) < 0)
                k = ncm_error_set(err, ENOMEM, "out of memory");
        if (k < 0) {
                ncm__state_done(&t);
                return k;
        }
        old = m->st;
        m->st = t;
        if (any && (k = ncm__dm_checkpoint(m, err)) < 0) {
                /* The kubelet fails the allocation when the checkpoint cannot be written. */
                m->st = old;
                ncm__state_done(&t);
                return k;
        }
        ncm__state_done(&old);
        return 0;
}

/* ---- GetDeviceRunContainerOptions ---- */

static int pre_start_if_needed(ncm_devmgr *m, const char *pod, const char *container,
                               const char *res, ncm_error *err)
{
        const dm_resource *r = ncm__dm_resource(m, res);
        const dm_endpoint *ep = r ? r->ep : NULL;
        const dm_entry *e;
        ncm_error perr = NCM_ERROR_INIT;
        int k;

        if (!ep)
                return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                     "endpoint not found in cache for a registered resource: %s",
                                     res);
        if (!ep->has_opts || !ep->opts.pre_start_required)
                return 0;
        e = ncm__state_entry(&m->st, pod, container, res);
        if (!e)
                return ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                     "no devices found allocated in local cache for pod %s, "
                                     "container %s, resource %s",
                                     pod, container, res);
        if (ep->stopped || !ep->ops)
                k = stopped_error(res, &perr);
        else if (!ep->ops->pre_start_container)
                k = ncm_error_set(&perr, ENOSYS, "PreStartContainer is not implemented");
        else
                k = ep->ops->pre_start_container(ep->data, res, (const char *const *)e->devices.v,
                                                 e->devices.n, &perr);
        if (k < 0)
                return ncm_error_set(err, perr.code ? perr.code : -k,
                                     "device plugin PreStartContainer rpc failed with err: %s",
                                     perr.msg);
        return 0;
}

static bool kv_seen(const ncm_devmgr_kv *v, size_t n, const char *key)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i].key, key) == 0)
                        return true;
        return false;
}

/* deviceRunContainerOptions: merge the cached responses, first one wins. */
static int merge_options(const ncm_devmgr *m, const char *pod, const char *container,
                         ncm_devmgr_alloc_resp **ret)
{
        ncm_autoptr(ncm_devmgr_alloc_resp) o = NULL;
        bool found = false;

        for (size_t i = 0; i < m->st.n_entries; i++) {
                const dm_entry *e = &m->st.entries[i];
                const ncm_devmgr_alloc_resp *r = e->resp;
                if (strcmp(e->pod, pod) != 0 || strcmp(e->container, container) != 0)
                        continue;
                if (!found) {
                        o = ncm_devmgr_alloc_resp_new();
                        if (!o)
                                return -ENOMEM;
                        found = true;
                }
                if (!r)
                        continue;
                for (size_t k = 0; k < r->n_envs; k++)
                        if (!kv_seen(o->envs, o->n_envs, r->envs[k].key) &&
                            ncm_devmgr_alloc_resp_add_env(o, r->envs[k].key, r->envs[k].value) < 0)
                                return -ENOMEM;
                for (size_t k = 0; k < r->n_devices; k++) {
                        bool dup = false;
                        for (size_t j = 0; j < o->n_devices && !dup; j++)
                                dup = strcmp(o->devices[j].container_path,
                                             r->devices[k].container_path) == 0;
                        if (!dup &&
                            ncm_devmgr_alloc_resp_add_device(o, r->devices[k].container_path,
                                                             r->devices[k].host_path,
                                                             r->devices[k].permissions) < 0)
                                return -ENOMEM;
                }
                for (size_t k = 0; k < r->n_mounts; k++) {
                        bool dup = false;
                        for (size_t j = 0; j < o->n_mounts && !dup; j++)
                                dup = strcmp(o->mounts[j].container_path,
                                             r->mounts[k].container_path) == 0;
                        if (!dup && ncm_devmgr_alloc_resp_add_mount(o, r->mounts[k].container_path,
                                                                    r->mounts[k].host_path,
                                                                    r->mounts[k].read_only) < 0)
                                return -ENOMEM;
                }
                for (size_t k = 0; k < r->n_annotations; k++)
                        if (!kv_seen(o->annotations, o->n_annotations, r->annotations[k].key) &&
                            ncm_devmgr_alloc_resp_add_annotation(o, r->annotations[k].key,
                                                                 r->annotations[k].value) < 0)
                                return -ENOMEM;
                for (size_t k = 0; k < r->n_cdi_devices; k++) {
                        bool dup = false;
                        for (size_t j = 0; j < o->n_cdi_devices && !dup; j++)
                                dup = strcmp(o->cdi_devices[j], r->cdi_devices[k]) == 0;
                        if (!dup && ncm_devmgr_alloc_resp_add_cdi_device(o, r->cdi_devices[k]) < 0)
                                return -ENOMEM;
                }
        }
        *ret = NCM_TAKE_PTR(o);
        return 0;
}

int ncm_devmgr_run_options(ncm_devmgr *m, const char *pod_uid, const ncm_devmgr_container *c,
                           const ncm_hint *affinity, ncm_devmgr_alloc_resp **ret, ncm_error *err)
{
        ncm_autofree want *w = NULL;
        size_t n = 0;
        bool reallocate = false;
        int k;

        if (!pod_uid)
                return ncm_error_set(err, EINVAL, "run options: pod UID needed");
        if ((k = ncm_devmgr_validate_container(c, err)) < 0)
                return k;
        if (wanted(c, &w, &n) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                if (!device_resource(m, &m->st, w[i].name) || w[i].count == 0)
                        continue;
                m->call_pod = pod_uid;
                m->call_container = c->name;
                k = pre_start_if_needed(m, pod_uid, c->name, w[i].name, err);
                m->call_pod = m->call_container = NULL;
                if (k < 0)
                        return k;
                if (!pod_active(m, pod_uid))
                        continue;
                /* A device resource without cached state: a race at node restart. */
                if (!ncm__state_entry(&m->st, pod_uid, c->name, w[i].name))
                        reallocate = true;
        }
        if (reallocate && (k = ncm_devmgr_allocate(m, pod_uid, c, affinity, err)) < 0)
                return k;
        *ret = NULL;
        if (merge_options(m, pod_uid, c->name, ret) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        return 0;
}

int ncm_devmgr_container_options(const ncm_devmgr *m, const char *pod_uid, const char *container,
                                 ncm_devmgr_alloc_resp **ret)
{
        *ret = NULL;
        return merge_options(m, pod_uid, container, ret);
}

int ncm_devmgr_allocation_resp(const ncm_devmgr *m, const char *pod_uid, const char *container,
                               const char *resource, ncm_devmgr_alloc_resp **ret)
{
        *ret = NULL;
        for (size_t i = 0; i < m->st.n_entries; i++) {
                const dm_entry *e = &m->st.entries[i];
                if (strcmp(e->pod, pod_uid) != 0 || strcmp(e->container, container) != 0 ||
                    strcmp(e->resource, resource) != 0 || !e->resp)
                        continue;
                *ret = ncm_devmgr_alloc_resp_dup(e->resp);
                return *ret ? 0 : -ENOMEM;
        }
        return 0;
}

/* ---- the stand-in plugin ---- */

static int standin_allocate(void *data, const char *resource, const char *const *ids, size_t n,
                            ncm_devmgr_alloc_resp **ret, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr_alloc_resp) r = ncm_devmgr_alloc_resp_new();
        ncm_buf key = NCM_BUF_INIT, val = NCM_BUF_INIT, cdi = NCM_BUF_INIT;
        int k = 0;

        (void)data;
        if (!r)
                return ncm_error_set(err, ENOMEM, "out of memory");
        ncm_buf_puts(&key, "NODECM_DEVICES_");
        for (const char *p = resource; *p; p++) {
                char ch = *p;
                if (ch >= 'a' && ch <= 'z')
                        ch = (char)(ch - 'a' + 'A');
                else if (!(ch >= 'A' && ch <= 'Z') && !(ch >= '0' && ch <= '9'))
                        ch = '_';
                ncm_buf_putc(&key, ch);
        }
        for (size_t i = 0; i < n; i++) {
                if (i)
                        ncm_buf_putc(&val, ',');
                ncm_buf_puts(&val, ids[i]);
        }
        ncm_buf_putc(&val, '\0');
        val.len--;
        if (ncm_buf_failed(&key) || ncm_buf_failed(&val) ||
            ncm_devmgr_alloc_resp_add_env(r, key.data, val.data ? val.data : "") < 0)
                k = -ENOMEM;
        for (size_t i = 0; k == 0 && i < n; i++) {
                ncm_buf_reset(&cdi);
                ncm_buf_printf(&cdi, "%s=%s", resource, ids[i]);
                if (ncm_buf_failed(&cdi) || ncm_devmgr_alloc_resp_add_cdi_device(r, cdi.data) < 0)
                        k = -ENOMEM;
        }
        ncm_buf_done(&key);
        ncm_buf_done(&val);
        ncm_buf_done(&cdi);
        if (k < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = NCM_TAKE_PTR(r);
        return 0;
}

const ncm_devmgr_plugin_ops ncm_devmgr_standin_ops = {
                .name = "stand-in",
                .allocate = standin_allocate,
};

const ncm_devmgr_plugin_options ncm_devmgr_standin_options = {
                .pre_start_required = false,
                .get_preferred_allocation_available = false,
};
