/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a live device-plugin host and the pod resources API read from the manager or keep in
 * it: holds of devices whose Allocate is in flight, the grace period setting, the merged
 * responses of a container, the inventory of resources and devices, and a container's devices
 * per NUMA node.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "devicemanager-internal.h"

void ncm_devmgr_set_stop_grace(ncm_devmgr *m, int64_t ns)
{
        m->stop_grace_ns = ns > 0 ? ns : NCM_DEVMGR_STOP_GRACE_NS;
}

const char *ncm_devmgr_calling_pod(const ncm_devmgr *m)
{
        return m->call_pod;
}

const char *ncm_devmgr_calling_container(const ncm_devmgr *m)
{
        return m->call_container;
}

/* ---- holds ---- */

static void hold_done(dm_hold *h)
{
        free(h->pod);
        free(h->resource);
        ncm__strset_done(&h->ids);
}

void ncm__dm_holds_free(ncm_devmgr *m)
{
        for (size_t i = 0; i < m->n_holds; i++)
                hold_done(&m->holds[i]);
        free(m->holds);
        m->holds = NULL;
        m->n_holds = m->cap_holds = 0;
}

int ncm_devmgr_hold(ncm_devmgr *m, uint64_t owner, const char *pod_uid, const char *resource,
                    const char *const *ids, size_t n)
{
        dm_hold h = {owner, strdup(pod_uid), strdup(resource), NCM__STRSET_INIT};
        if (!h.pod || !h.resource)
                goto oom;
        for (size_t i = 0; i < n; i++)
                if (ncm__strset_add(&h.ids, ids[i]) < 0)
                        goto oom;
        if (ncm__array_grow(m->holds, m->cap_holds, m->n_holds) < 0)
                goto oom;
        m->holds[m->n_holds++] = h;
        return 0;
oom:
        hold_done(&h);
        return -ENOMEM;
}

void ncm_devmgr_release_holds(ncm_devmgr *m, uint64_t owner)
{
        size_t k = 0;

        for (size_t i = 0; i < m->n_holds; i++) {
                if (m->holds[i].owner == owner)
                        hold_done(&m->holds[i]);
                else
                        m->holds[k++] = m->holds[i];
        }
        m->n_holds = k;
}

size_t ncm_devmgr_num_held(const ncm_devmgr *m)
{
        size_t n = 0;
        for (size_t i = 0; i < m->n_holds; i++)
                n += m->holds[i].ids.n;
        return n;
}

void ncm__dm_subtract_holds(const ncm_devmgr *m, const char *pod, const char *resource,
                            ncm__strset *set)
{
        for (size_t i = 0; i < m->n_holds; i++) {
                const dm_hold *h = &m->holds[i];
                if (strcmp(h->resource, resource) == 0 && (!pod || strcmp(h->pod, pod) != 0))
                        ncm__strset_subtract(set, &h->ids);
        }
}

static bool is_held(const ncm_devmgr *m, const char *resource, const char *id)
{
        for (size_t i = 0; i < m->n_holds; i++)
                if (strcmp(m->holds[i].resource, resource) == 0 &&
                    ncm__strset_has(&m->holds[i].ids, id))
                        return true;
        return false;
}

/* ---- inventory ---- */

static void device_info_done(ncm_devmgr_device_info *d)
{
        free(d->id);
        free(d->health);
        free(d->numa);
        free(d->pod);
        free(d->container);
}

static int cmp_info_id(const void *key, const void *elem)
{
        return strcmp(key, ((const ncm_devmgr_device_info *)elem)->id);
}

/* Who holds each allocated device of RI: the first entry (pod, container order) naming it. */
static int fill_holders(const ncm_devmgr *m, ncm_devmgr_resource_info *ri)
{
        for (size_t i = 0; i < m->st.n_entries; i++) {
                const dm_entry *e = &m->st.entries[i];
                if (strcmp(e->resource, ri->resource) != 0)
                        continue;
                for (size_t k = 0; k < e->devices.n; k++) {
                        ncm_devmgr_device_info *d =
                                        bsearch(e->devices.v[k], ri->devices, ri->n_devices,
                                                sizeof(*ri->devices), cmp_info_id);
                        if (!d || d->pod)
                                continue;
                        d->pod = strdup(e->pod);
                        d->container = strdup(e->container);
                        if (!d->pod || !d->container)
                                return -ENOMEM;
                }
        }
        return 0;
}

static void resource_info_done(ncm_devmgr_resource_info *r)
{
        free(r->resource);
        for (size_t i = 0; i < r->n_devices; i++)
                device_info_done(&r->devices[i]);
        free(r->devices);
}

void ncm_devmgr_inventory_done(ncm_devmgr_inventory *inv)
{
        for (size_t i = 0; i < inv->n; i++)
                resource_info_done(&inv->v[i]);
        free(inv->v);
        inv->v = NULL;
        inv->n = 0;
}

static int fill_device(const ncm_devmgr *m, const char *name, const dm_resource *r,
                       const dm_rset *in_use, const dm_device *src, const char *id,
                       ncm_devmgr_device_info *d)
{
        d->id = strdup(id);
        if (!d->id)
                return -ENOMEM;
        d->healthy = r && r->has_healthy && ncm__strset_has(&r->healthy, id);
        d->allocated = in_use && ncm__strset_has(&in_use->set, id);
        d->held = is_held(m, name, id);
        if (!src)
                return 0;
        d->health = strdup(src->health ? src->health : "");
        if (!d->health)
                return -ENOMEM;
        d->topology = src->topology;
        if (src->n_numa) {
                d->numa = malloc(src->n_numa * sizeof(*d->numa));
                if (!d->numa)
                        return -ENOMEM;
                memcpy(d->numa, src->numa, src->n_numa * sizeof(*d->numa));
                d->n_numa = src->n_numa;
        }
        return 0;
}

/* Ids of R's devices, its health sets and what is allocated from it, sorted and unique. */
static int all_ids(const dm_resource *r, const dm_rset *in_use, ncm__strset *ret)
{
        for (size_t i = 0; r && i < r->n_devs; i++)
                if (ncm__strset_add(ret, r->devs[i].id) < 0)
                        return -ENOMEM;
        if (r &&
            (ncm__strset_union(ret, &r->healthy) < 0 || ncm__strset_union(ret, &r->unhealthy) < 0))
                return -ENOMEM;
        if (in_use && ncm__strset_union(ret, &in_use->set) < 0)
                return -ENOMEM;
        return 0;
}

static int fill_resource(const ncm_devmgr *m, const char *name, ncm_devmgr_resource_info *ri)
{
        const dm_resource *r = ncm__dm_resource(m, name);
        const dm_rset *in_use = ncm__rsets_get(&m->st.allocated, name);
        ncm__strset ids = NCM__STRSET_INIT;
        int64_t now = ncm__dm_now(m);

        ri->resource = strdup(name);
        if (!ri->resource)
                return -ENOMEM;
        if (r && r->ep) {
                const dm_endpoint *ep = r->ep;
                ri->endpoint = ep->stopped ? NCM_DEVMGR_ENDPOINT_STOPPED
                                           : NCM_DEVMGR_ENDPOINT_RUNNING;
                ri->options = ep->opts;
                ri->plugin = ep->ops ? ep->ops->name : NULL;
                if (ep->stopped) {
                        ri->stopped_ns = now - ep->stop_time;
                        ri->grace_left_ns = m->stop_grace_ns - ri->stopped_ns;
                        if (ri->grace_left_ns < 0)
                                ri->grace_left_ns = 0;
                }
        }
        if (r) {
                ri->allocatable = r->has_healthy ? (int64_t)r->healthy.n : 0;
                ri->capacity = ri->allocatable + (r->has_unhealthy ? (int64_t)r->unhealthy.n : 0);
        }
        ri->allocated = in_use ? (int64_t)in_use->set.n : 0;
        if (all_ids(r, in_use, &ids) < 0)
                goto oom;
        if (ids.n) {
                ri->devices = calloc(ids.n, sizeof(*ri->devices));
                if (!ri->devices)
                        goto oom;
        }
        for (size_t i = 0; i < ids.n; i++) {
                const dm_device *d = r ? ncm__dm_device(r, ids.v[i]) : NULL;
                ri->n_devices = i + 1;
                if (fill_device(m, name, r, in_use, d, ids.v[i], &ri->devices[i]) < 0)
                        goto oom;
        }
        ncm__strset_done(&ids);
        return fill_holders(m, ri);
oom:
        ncm__strset_done(&ids);
        return -ENOMEM;
}

int ncm_devmgr_inventory_get(const ncm_devmgr *m, ncm_devmgr_inventory *ret)
{
        ncm_devmgr_inventory inv = {0};
        ncm__strset names = NCM__STRSET_INIT;
        int k = 0;

        for (size_t i = 0; i < m->n_res && k == 0; i++)
                k = ncm__strset_add(&names, m->res[i].name) < 0 ? -ENOMEM : 0;
        for (size_t i = 0; i < m->st.allocated.n && k == 0; i++)
                k = ncm__strset_add(&names, m->st.allocated.v[i].resource) < 0 ? -ENOMEM : 0;
        if (k == 0 && names.n && !(inv.v = calloc(names.n, sizeof(*inv.v))))
                k = -ENOMEM;
        for (size_t i = 0; i < names.n && k == 0; i++) {
                inv.n = i + 1;
                k = fill_resource(m, names.v[i], &inv.v[i]);
        }
        ncm__strset_done(&names);
        if (k < 0) {
                ncm_devmgr_inventory_done(&inv);
                return k;
        }
        ncm_devmgr_inventory_done(ret);
        *ret = inv;
        return 0;
}

/* ---- a container's devices per NUMA node ---- */

void ncm_devmgr_numa_assignments_free(ncm_devmgr_numa_assignment *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].resource);
                ncm__numa_ids_done(v[i].numa, v[i].n_numa);
        }
        free(v);
}

int ncm_devmgr_container_numa(const ncm_devmgr *m, const char *pod_uid, const char *container,
                              ncm_devmgr_numa_assignment **ret, size_t *ret_n)
{
        ncm_devmgr_numa_assignment *v = NULL;
        size_t n = 0;

        /* entries are sorted by pod, container, resource */
        for (size_t i = 0; i < m->st.n_entries; i++) {
                const dm_entry *e = &m->st.entries[i];
                ncm_devmgr_numa_assignment *nv;
                if (strcmp(e->pod, pod_uid) != 0 || strcmp(e->container, container) != 0)
                        continue;
                nv = realloc(v, (n + 1) * sizeof(*nv));
                if (!nv)
                        goto oom;
                v = nv;
                v[n] = (ncm_devmgr_numa_assignment){strdup(e->resource), NULL, 0};
                n++;
                if (!v[n - 1].resource ||
                    ncm__numa_ids_copy(&v[n - 1].numa, &v[n - 1].n_numa, e->numa, e->n_numa) < 0)
                        goto oom;
        }
        *ret = v;
        *ret_n = n;
        return 0;
oom:
        ncm_devmgr_numa_assignments_free(v, n);
        return -ENOMEM;
}

/* ---- rendering ---- */

static const char *endpoint_name(ncm_devmgr_endpoint_state s)
{
        return s == NCM_DEVMGR_ENDPOINT_RUNNING   ? "running"
               : s == NCM_DEVMGR_ENDPOINT_STOPPED ? "stopped"
                                                  : "none";
}

static void json_str(ncm_buf *b, const char *s)
{
        ncm_buf_json_string(b, s, strlen(s));
}

void ncm_devmgr_inventory_json(const ncm_devmgr_inventory *inv, ncm_buf *out)
{
        ncm_buf_puts(out, "{\"resources\": [");
        for (size_t i = 0; i < inv->n; i++) {
                const ncm_devmgr_resource_info *r = &inv->v[i];
                ncm_buf_puts(out, i ? ", {\"resource\": " : "{\"resource\": ");
                json_str(out, r->resource);
                ncm_buf_printf(out, ", \"endpoint\": \"%s\"", endpoint_name(r->endpoint));
                if (r->plugin) {
                        ncm_buf_puts(out, ", \"plugin\": ");
                        json_str(out, r->plugin);
                }
                if (r->endpoint != NCM_DEVMGR_ENDPOINT_NONE)
                        ncm_buf_printf(out,
                                       ", \"options\": {\"preStartRequired\": %s, "
                                       "\"getPreferredAllocationAvailable\": %s}",
                                       r->options.pre_start_required ? "true" : "false",
                                       r->options.get_preferred_allocation_available ? "true"
                                                                                     : "false");
                if (r->endpoint == NCM_DEVMGR_ENDPOINT_STOPPED)
                        ncm_buf_printf(out,
                                       ", \"stoppedSeconds\": %.3f, \"graceLeftSeconds\": %.3f",
                                       (double)r->stopped_ns / 1e9, (double)r->grace_left_ns / 1e9);
                ncm_buf_printf(out,
                               ", \"capacity\": %lld, \"allocatable\": %lld, \"allocated\": %lld, "
                               "\"devices\": [",
                               (long long)r->capacity, (long long)r->allocatable,
                               (long long)r->allocated);
                for (size_t k = 0; k < r->n_devices; k++) {
                        const ncm_devmgr_device_info *d = &r->devices[k];
                        ncm_buf_puts(out, k ? ", {\"id\": " : "{\"id\": ");
                        json_str(out, d->id);
                        if (d->health) {
                                ncm_buf_puts(out, ", \"health\": ");
                                json_str(out, d->health);
                        }
                        ncm_buf_printf(out, ", \"healthy\": %s, \"numa\": ",
                                       d->healthy ? "true" : "false");
                        if (!d->topology) {
                                ncm_buf_puts(out, "null");
                        } else {
                                ncm_buf_putc(out, '[');
                                for (size_t j = 0; j < d->n_numa; j++)
                                        ncm_buf_printf(out, "%s%lld", j ? ", " : "",
                                                       (long long)d->numa[j]);
                                ncm_buf_putc(out, ']');
                        }
                        ncm_buf_printf(out, ", \"allocated\": %s", d->allocated ? "true" : "false");
                        if (d->held)
                                ncm_buf_puts(out, ", \"held\": true");
                        if (d->pod) {
                                ncm_buf_puts(out, ", \"pod\": ");
                                json_str(out, d->pod);
                                ncm_buf_puts(out, ", \"container\": ");
                                json_str(out, d->container);
                        }
                        ncm_buf_putc(out, '}');
                }
                ncm_buf_puts(out, "]}");
        }
        ncm_buf_puts(out, "]}\n");
}

void ncm_devmgr_inventory_text(const ncm_devmgr_inventory *inv, ncm_buf *out)
{
        if (!inv->n) {
                ncm_buf_puts(out, "no device plugin resources\n");
                return;
        }
        for (size_t i = 0; i < inv->n; i++) {
                const ncm_devmgr_resource_info *r = &inv->v[i];
                ncm_buf_printf(out, "%s: plugin %s", r->resource, endpoint_name(r->endpoint));
                if (r->endpoint == NCM_DEVMGR_ENDPOINT_STOPPED)
                        ncm_buf_printf(out,
                                       " %.0fs ago (removed in %.0fs unless it registers again)",
                                       (double)r->stopped_ns / 1e9, (double)r->grace_left_ns / 1e9);
                if (r->endpoint != NCM_DEVMGR_ENDPOINT_NONE &&
                    (r->options.pre_start_required ||
                     r->options.get_preferred_allocation_available))
                        ncm_buf_printf(out, " (%s%s%s)",
                                       r->options.pre_start_required ? "PreStartContainer" : "",
                                       r->options.pre_start_required &&
                                                                       r->options.get_preferred_allocation_available
                                                       ? ", "
                                                       : "",
                                       r->options.get_preferred_allocation_available
                                                       ? "GetPreferredAllocation"
                                                       : "");
                ncm_buf_printf(out, "; capacity %lld, allocatable %lld, allocated %lld\n",
                               (long long)r->capacity, (long long)r->allocatable,
                               (long long)r->allocated);
                for (size_t k = 0; k < r->n_devices; k++) {
                        const ncm_devmgr_device_info *d = &r->devices[k];
                        ncm_buf_printf(out, "  %s  %s  NUMA ", d->id,
                                       d->healthy ? "healthy" : "unhealthy");
                        if (!d->topology || !d->n_numa)
                                ncm_buf_putc(out, '-');
                        for (size_t j = 0; d->topology && j < d->n_numa; j++)
                                ncm_buf_printf(out, "%s%lld", j ? "," : "", (long long)d->numa[j]);
                        if (d->pod)
                                ncm_buf_printf(out, "  %s/%s", d->pod, d->container);
                        else if (d->held)
                                ncm_buf_puts(out, "  held (admission in progress)");
                        else
                                ncm_buf_puts(out, "  free");
                        ncm_buf_putc(out, '\n');
                }
        }
}
