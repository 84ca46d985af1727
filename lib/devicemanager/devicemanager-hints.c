/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Topology hints: kubelet's GetTopologyHints / GetPodTopologyHints and
 * generateDeviceTopologyHints.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/bitmask.h>
#include <nodecm/hintdesc.h>
#include "devicemanager-internal.h"

void ncm_devmgr_hints_done(ncm_devmgr_hints *h)
{
        for (size_t i = 0; i < h->n; i++) {
                free(h->v[i].resource);
                ncm_hint_list_done(&h->v[i].hints);
                ncm_hint_desc_free(h->v[i].desc);
        }
        free(h->v);
        h->v = NULL;
        h->n = 0;
}

/* A device resource's request: name and count, sorted by name. */
typedef struct dreq {
        const char *name;
        int64_t count;
} dreq;

static int cmp_request(const void *a, const void *b)
{
        return strcmp(((const dreq *)a)->name, ((const dreq *)b)->name);
}

static bool has_topology_alignment(const dm_resource *r)
{
        for (size_t i = 0; r && i < r->n_devs; i++)
                if (r->devs[i].topology && r->devs[i].n_numa > 0)
                        return true;
        return false;
}

/* The NUMA mask of a device of the resource, or 0 when unknown or without topology. */
static ncm_bitmask device_mask(const dm_resource *r, const char *id, bool *topology)
{
        const dm_device *d = r ? ncm__dm_device(r, id) : NULL;
        if (topology)
                *topology = d && d->topology;
        return d ? d->mask : 0;
}

/*
 * The NUMA nodes the hints walk, into IDS (returns how many). Before kubelet 1.37 the
 * machine's. Since (kubernetes PR #138244, deviceNUMANodes) the machine's nodes, in the
 * machine's order, that a registered device of the resource reports, whatever its health
 * or allocation: a device on several nodes brings all of them, a device without topology
 * none, a node the machine does not have is ignored. The masks that add device-less nodes
 * are no longer hints; the others keep their order and flags, because a device-less node
 * never adds a device to a mask, so the smallest mask holding the request has device nodes
 * only. No device node at all: nothing is walked, the list is empty (no mask could hold a
 * device before either).
 */
static int walked_nodes(const ncm_devmgr *m, const dm_resource *r, int *ids)
{
        ncm_bitmask on = 0;
        int n = 0;

        if (!m->device_numa_walk) {
                memcpy(ids, m->numa_nodes, (size_t)m->n_numa_nodes * sizeof(int));
                return m->n_numa_nodes;
        }
        for (size_t i = 0; r && i < r->n_devs; i++)
                on |= r->devs[i].mask;
        for (int i = 0; i < m->n_numa_nodes; i++)
                if (on & ((ncm_bitmask)1 << m->numa_nodes[i]))
                        ids[n++] = m->numa_nodes[i];
        return n;
}

/*
 * generateDeviceTopologyHints: every non-empty subset of the walked NUMA nodes (smaller
 * first) that holds enough available devices, and all reusable ones; preferred when as
 * small as the smallest subset holding REQUEST devices of the resource, healthy or not.
 */
static int generate(const ncm_devmgr *m, const dm_resource *r, const ncm__strset *available,
                    const ncm__strset *reusable, int64_t request, ncm_hint_list *out)
{
        ncm_bitmask_iter it;
        ncm_bitmask mask;
        int ids[NCM_BITMASK_MAX_BITS], n = walked_nodes(m, r, ids);
        int min_size = n;

        *out = (ncm_hint_list)NCM_HINT_LIST_INIT;
        if (n == 0)
                return 0;
        if (ncm_bitmask_iter_init(&it, ids, n, NULL) < 0)
                return -EINVAL;
        while (ncm_bitmask_iter_next(&it, &mask)) {
                int64_t in_mask = 0, matching = 0;
                bool drop = false;

                for (size_t i = 0; r && i < r->n_devs; i++)
                        if (r->devs[i].mask & mask)
                                in_mask++;
                if (in_mask >= request && ncm_bitmask_count(mask) < min_size)
                        min_size = ncm_bitmask_count(mask);
                for (size_t i = 0; reusable && i < reusable->n && !drop; i++) {
                        bool topo;
                        ncm_bitmask dm = device_mask(r, reusable->v[i], &topo);
                        if (!topo)
                                continue;
                        if (!(dm & mask))
                                drop = true;
                        else
                                matching++;
                }
                if (drop)
                        continue;
                for (size_t i = 0; i < available->n; i++)
                        if (device_mask(r, available->v[i], NULL) & mask)
                                matching++;
                if (matching < request)
                        continue;
                if (ncm_hint_list_append(out, (ncm_hint){mask, false, false}) < 0) {
                        ncm_hint_list_done(out);
                        return -ENOMEM;
                }
        }
        for (size_t i = 0; i < out->n; i++)
                if (ncm_bitmask_count(out->hints[i].numa) == min_size)
                        out->hints[i].preferred = true;
        return 0;
}

/*
 * The same list as a description: the walked nodes, each available device on its nodes, each
 * reusable device with topology required and counted once, every device of the resource as
 * capacity (include/nodecm/hintdesc.h).
 */
static int describe(const ncm_devmgr *m, const dm_resource *r, const ncm__strset *available,
                    const ncm__strset *reusable, int64_t request, ncm_hint_desc **ret)
{
        ncm_autoptr(ncm_hint_desc) d = NULL;
        int ids[NCM_BITMASK_MAX_BITS], n = walked_nodes(m, r, ids);
        int k = ncm_hint_desc_new(ids, (size_t)n, request, &d, NULL);

        if (k < 0)
                return k;
        for (size_t i = 0; r && i < r->n_devs && k >= 0; i++)
                k = ncm_hint_desc_add_capacity(d, r->devs[i].mask, 1);
        for (size_t i = 0; reusable && i < reusable->n && k >= 0; i++) {
                bool topo;
                ncm_bitmask dm = device_mask(r, reusable->v[i], &topo);
                if (!topo)
                        continue;
                k = ncm_hint_desc_require(d, dm);
                ncm_hint_desc_add_base(d, 1);
        }
        for (size_t i = 0; i < available->n && k >= 0; i++)
                k = ncm_hint_desc_add_available(d, device_mask(r, available->v[i], NULL), 1);
        if (k >= 0)
                k = ncm_hint_desc_seal(d, NULL);
        if (k < 0)
                return k;
        *ret = NCM_TAKE_PTR(d);
        return 0;
}

int ncm_devmgr_held_hints_describe(const int *numa_nodes, size_t n_numa, ncm_kubelet_version v,
                                   const ncm_bitmask *devices, size_t n, ncm_hint_desc **ret,
                                   ncm_error *err)
{
        ncm_autoptr(ncm_hint_desc) d = NULL;
        int ids[NCM_BITMASK_MAX_BITS];
        size_t nids = 0;
        ncm_bitmask on = 0;
        bool walk_devices = ncm_kubelet_version_at_least(v, 1, 37);
        int k;

        *ret = NULL;
        if (n == 0)
                return 0;
        if (n_numa > NCM_BITMASK_MAX_BITS)
                return ncm_error_set(err, EINVAL, "more than %d NUMA nodes", NCM_BITMASK_MAX_BITS);
        for (size_t i = 0; i < n; i++)
                on |= devices[i];
        for (size_t i = 0; i < n_numa; i++) {
                if (numa_nodes[i] < 0 || numa_nodes[i] >= NCM_BITMASK_MAX_BITS)
                        return ncm_error_set(err, EINVAL, "NUMA node %d: above %d", numa_nodes[i],
                                             NCM_BITMASK_MAX_BITS - 1);
                if (!walk_devices || (on & ((ncm_bitmask)1 << numa_nodes[i])))
                        ids[nids++] = numa_nodes[i];
        }
        k = ncm_hint_desc_new(ids, nids, (int64_t)n, &d, err);
        /* the resource's devices are the held ones: capacity and availability alike */
        for (size_t i = 0; i < n && k >= 0; i++)
                k = ncm_hint_desc_add_capacity(d, devices[i], 1);
        for (size_t i = 0; i < n && k >= 0; i++)
                k = ncm_hint_desc_add_available(d, devices[i], 1);
        if (k >= 0)
                k = ncm_hint_desc_seal(d, err);
        if (k < 0)
                return k == -ENOMEM ? ncm_error_set(err, ENOMEM, "out of memory") : k;
        *ret = NCM_TAKE_PTR(d);
        return 0;
}

static int add_result(ncm_devmgr_hints *h, const char *res, ncm_hint_list *l, ncm_hint_desc **desc)
{
        ncm_devmgr_resource_hints *v = realloc(h->v, (h->n + 1) * sizeof(*v));
        char *name;
        if (!v)
                return -ENOMEM;
        h->v = v;
        name = strdup(res);
        if (!name)
                return -ENOMEM;
        v[h->n].resource = name;
        v[h->n].hints = *l;
        v[h->n].desc = *desc;
        *l = (ncm_hint_list)NCM_HINT_LIST_INIT;
        *desc = NULL;
        h->n++;
        return 0;
}

/*
 * Hints for each request. POD/CONTAINER select the devices already held (CONTAINER NULL:
 * the whole pod); REUSE adds the pod's reusable devices (container scope only).
 */
static int hints_for(ncm_devmgr *m, const char *pod, const char *container, const dreq *req,
                     size_t n, bool reuse, bool desc, ncm_devmgr_hints *ret, ncm_error *err)
{
        ncm_devmgr_hints h = NCM_DEVMGR_HINTS_INIT;

        for (size_t i = 0; i < n; i++) {
                const char *res = req[i].name;
                const dm_resource *r = ncm__dm_resource(m, res);
                ncm__strset held = NCM__STRSET_INIT, available = NCM__STRSET_INIT,
                            all = NCM__STRSET_INIT;
                const ncm__strset *reusable = NULL;
                ncm_hint_list l = NCM_HINT_LIST_INIT;
                ncm_hint_desc *dd = NULL;
                int k = 0;

                if (!has_topology_alignment(r)) {
                        l.nil = true;
                        goto add;
                }
                /* Devices already allocated (e.g. after a restart): same hints again. */
                for (size_t e = 0; e < m->st.n_entries && k == 0; e++) {
                        const dm_entry *en = &m->st.entries[e];
                        if (strcmp(en->pod, pod) == 0 && strcmp(en->resource, res) == 0 &&
                            (!container || strcmp(en->container, container) == 0))
                                k = ncm__strset_union(&held, &en->devices);
                }
                if (k < 0)
                        goto oom;
                if (held.n > 0) {
                        if ((int64_t)held.n == req[i].count)
                                k = desc ? describe(m, r, &held, NULL, req[i].count, &dd)
                                         : generate(m, r, &held, NULL, req[i].count, &l);
                        goto add;
                }
                if (r->has_healthy && ncm__strset_copy(&available, &r->healthy) < 0)
                        goto oom;
                {
                        const dm_rset *in_use = ncm__rsets_get(&m->st.allocated, res);
                        if (in_use)
                                ncm__strset_subtract(&available, &in_use->set);
                        ncm__dm_subtract_holds(m, pod, res, &available);
                }
                if (reuse && m->st.reuse_pod && strcmp(m->st.reuse_pod, pod) == 0) {
                        const dm_rset *s = ncm__rsets_get(&m->st.reuse, res);
                        reusable = s ? &s->set : NULL;
                }
                if (ncm__strset_copy(&all, &available) < 0 ||
                    (reusable && ncm__strset_union(&all, reusable) < 0))
                        goto oom;
                if ((int64_t)all.n < req[i].count)
                        goto add;
                k = desc ? describe(m, r, &available, reusable, req[i].count, &dd)
                         : generate(m, r, &available, reusable, req[i].count, &l);
        add:
                ncm__strset_done(&held);
                ncm__strset_done(&available);
                ncm__strset_done(&all);
                if (k < 0 || add_result(&h, res, &l, &dd) < 0) {
                        ncm_hint_list_done(&l);
                        ncm_hint_desc_free(dd);
                        ncm_devmgr_hints_done(&h);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
                continue;
        oom:
                ncm__strset_done(&held);
                ncm__strset_done(&available);
                ncm__strset_done(&all);
                ncm_devmgr_hints_done(&h);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        ncm_devmgr_hints_done(ret);
        *ret = h;
        return 0;
}

static bool device_resource(const ncm_devmgr *m, const char *res)
{
        const dm_resource *r = ncm__dm_resource(m, res);
        return (r && r->has_healthy) || ncm__rsets_get(&m->st.allocated, res);
}

static int container_hints(ncm_devmgr *m, const char *pod_uid, const ncm_devmgr_container *c,
                           bool desc, ncm_devmgr_hints *ret, ncm_error *err)
{
        ncm_autofree dreq *req = NULL;
        size_t n = 0;
        int k;

        if (!pod_uid)
                return ncm_error_set(err, EINVAL, "hints: pod UID needed");
        if ((k = ncm_devmgr_validate_container(c, err)) < 0)
                return k;
        if ((k = ncm__dm_gc(m, err)) < 0)
                return k;
        req = calloc(c->n_resources ? c->n_resources : 1, sizeof(*req));
        if (!req)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < c->n_resources; i++) {
                const ncm_devmgr_resource *r = &c->resources[i];
                if (!ncm_devmgr_is_extended_resource_name(r->name) || r->limit < 0 ||
                    !device_resource(m, r->name))
                        continue;
                req[n++] = (dreq){r->name, r->limit};
        }
        qsort(req, n, sizeof(*req), cmp_request);
        return hints_for(m, pod_uid, c->name, req, n, true, desc, ret, err);
}

int ncm_devmgr_container_hints(ncm_devmgr *m, const char *pod_uid, const ncm_devmgr_container *c,
                               ncm_devmgr_hints *ret, ncm_error *err)
{
        return container_hints(m, pod_uid, c, false, ret, err);
}

int ncm_devmgr_container_hints_describe(ncm_devmgr *m, const char *pod_uid,
                                        const ncm_devmgr_container *c, ncm_devmgr_hints *ret,
                                        ncm_error *err)
{
        return container_hints(m, pod_uid, c, true, ret, err);
}

static int64_t limit_of(const ncm_devmgr_container *c, const char *resource, bool *present)
{
        for (size_t i = 0; i < c->n_resources; i++)
                if (strcmp(c->resources[i].name, resource) == 0 && c->resources[i].limit >= 0) {
                        *present = true;
                        return c->resources[i].limit;
                }
        return 0;
}

int64_t ncm_devmgr_pod_limit(const ncm_devmgr_pod *pod, const char *resource)
{
        int64_t sum = 0, sidecars = 0, init_max = 0;
        bool present = false;

        for (size_t i = 0; i < pod->n_containers; i++)
                sum += limit_of(&pod->containers[i], resource, &present);
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const ncm_devmgr_container *c = &pod->init_containers[i];
                int64_t l = limit_of(c, resource, &present), eff;
                if (c->type == NCM_DEVMGR_SIDECAR_CONTAINER) {
                        sum += l;
                        sidecars += l;
                        eff = sidecars;
                } else {
                        eff = l + sidecars;
                }
                if (eff > init_max)
                        init_max = eff;
        }
        if (!present)
                return NCM_DEVMGR_UNSET;
        return sum > init_max ? sum : init_max;
}

static int add_name(dreq **v, size_t *n, const char *name)
{
        dreq *nv;
        for (size_t i = 0; i < *n; i++)
                if (strcmp((*v)[i].name, name) == 0)
                        return 0;
        nv = realloc(*v, (*n + 1) * sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        *v = nv;
        nv[(*n)++] = (dreq){name, 0};
        return 0;
}

static int pod_hints(ncm_devmgr *m, const ncm_devmgr_pod *pod, bool desc, ncm_devmgr_hints *ret,
                     ncm_error *err)
{
        ncm_autofree dreq *req = NULL;
        size_t n = 0, out = 0;
        int k;

        if (!pod || !pod->uid)
                return ncm_error_set(err, EINVAL, "hints: pod UID needed");
        for (int pass = 0; pass < 2; pass++) {
                const ncm_devmgr_container *cs = pass ? pod->containers : pod->init_containers;
                size_t nc = pass ? pod->n_containers : pod->n_init_containers;
                for (size_t i = 0; i < nc; i++) {
                        if ((k = ncm_devmgr_validate_container(&cs[i], err)) < 0)
                                return k;
                        for (size_t j = 0; j < cs[i].n_resources; j++)
                                if (ncm_devmgr_is_extended_resource_name(cs[i].resources[j].name) &&
                                    add_name(&req, &n, cs[i].resources[j].name) < 0)
                                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
        }
        if ((k = ncm__dm_gc(m, err)) < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                int64_t l = ncm_devmgr_pod_limit(pod, req[i].name);
                if (l < 0 || !device_resource(m, req[i].name))
                        continue;
                req[out++] = (dreq){req[i].name, l};
        }
        if (out)
                qsort(req, out, sizeof(*req), cmp_request);
        return hints_for(m, pod->uid, NULL, req, out, false, desc, ret, err);
}

int ncm_devmgr_pod_hints(ncm_devmgr *m, const ncm_devmgr_pod *pod, ncm_devmgr_hints *ret,
                         ncm_error *err)
{
        return pod_hints(m, pod, false, ret, err);
}

int ncm_devmgr_pod_hints_describe(ncm_devmgr *m, const ncm_devmgr_pod *pod, ncm_devmgr_hints *ret,
                                  ncm_error *err)
{
        return pod_hints(m, pod, true, ret, err);
}
