/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The manager object, the device registry (plugin endpoints, snapshots, capacity and the
 * grace period), the allocation bookkeeping shared with allocation and hints, and the
 * bridge between the manager and its checkpoint.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nodecm/bitmask.h>
#include "devicemanager-internal.h"

static int64_t monotonic_now(void *data)
{
        struct timespec ts;
        (void)data;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ncm__dm_now(const ncm_devmgr *m)
{
        return m->now(m->now_data);
}

/* ---- lifecycle ---- */

int ncm_devmgr_new(const ncm_devmgr_config *cfg, ncm_devmgr **ret, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr) m = NULL;
        ncm_devmgr_config empty = {0};

        if (!cfg)
                cfg = &empty;
        if (ncm_kubelet_version_check(cfg->kubelet_version, err) < 0)
                return -EINVAL;
        if (cfg->n_numa_nodes > NCM_BITMASK_MAX_BITS)
                return ncm_error_set(err, EINVAL, "%zu NUMA nodes: at most %d are supported",
                                     cfg->n_numa_nodes, NCM_BITMASK_MAX_BITS);
        m = calloc(1, sizeof(*m));
        if (!m)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < cfg->n_numa_nodes; i++) {
                /*
                 * Any id: the kubelet builds a NUMA mask of them only for hints, which a
                 * topology manager policy other than none asks for (and then the mask's
                 * "bit number must be in range 0-63" comes from there).
                 */
                int id = cfg->numa_nodes[i];
                for (size_t k = 0; k < i; k++)
                        if (cfg->numa_nodes[k] == id)
                                return ncm_error_set(err, EINVAL, "NUMA node %d listed twice", id);
                m->numa_nodes[i] = id;
        }
        m->n_numa_nodes = (int)cfg->n_numa_nodes;
        m->now = cfg->now ? cfg->now : monotonic_now;
        m->now_data = cfg->now_data;
        if (cfg->pods) {
                m->has_pods = true;
                m->pods = *cfg->pods;
        }
        m->ckpt_rootfd = cfg->checkpoint_rootfd;
        m->ckpt_write = cfg->checkpoint_write;
        m->ckpt_write_data = cfg->checkpoint_write_data;
        if (cfg->checkpoint_path) {
                m->ckpt_path = strdup(cfg->checkpoint_path);
                if (!m->ckpt_path)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        m->flags = cfg->flags;
        m->device_numa_walk = ncm_kubelet_version_at_least(cfg->kubelet_version, 1, 37);
        m->next_endpoint = 1;
        m->stop_grace_ns = NCM_DEVMGR_STOP_GRACE_NS;
        *ret = NCM_TAKE_PTR(m);
        return 0;
}

static void device_done(dm_device *d)
{
        free(d->id);
        free(d->health);
        free(d->numa);
}

static void devices_free(dm_device *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                device_done(&v[i]);
        free(v);
}

static void endpoint_free(dm_endpoint *ep)
{
        if (!ep)
                return;
        if (ep->ops && ep->ops->release)
                ep->ops->release(ep->data);
        free(ep);
}

static void resource_done(dm_resource *r)
{
        free(r->name);
        devices_free(r->devs, r->n_devs);
        ncm__strset_done(&r->healthy);
        ncm__strset_done(&r->unhealthy);
        endpoint_free(r->ep);
}

ncm_devmgr *ncm_devmgr_free(ncm_devmgr *m)
{
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_res; i++)
                resource_done(&m->res[i]);
        free(m->res);
        ncm__state_done(&m->st);
        ncm__dm_holds_free(m);
        free(m->ckpt_path);
        free(m);
        return NULL;
}

/* ---- resources ---- */

static ssize_t res_find(const ncm_devmgr *m, const char *name)
{
        return ncm__sorted_find(m->res, m->n_res, sizeof(*m->res), offsetof(dm_resource, name),
                                name);
}

dm_resource *ncm__dm_resource(const ncm_devmgr *m, const char *name)
{
        ssize_t i = res_find(m, name);
        return i >= 0 ? &m->res[i] : NULL;
}

static dm_resource *res_ensure(ncm_devmgr *m, const char *name)
{
        ssize_t i = res_find(m, name);
        size_t at;
        dm_resource *v;
        char *copy;

        if (i >= 0)
                return &m->res[i];
        at = (size_t)(-i - 1);
        copy = strdup(name);
        if (!copy)
                return NULL;
        v = ncm__sorted_insert(m->res, m->n_res, sizeof(*v), at);
        if (!v) {
                free(copy);
                return NULL;
        }
        m->res = v;
        v[at].name = copy;
        m->n_res++;
        return &v[at];
}

/* Forget a resource that holds nothing any more. */
static void res_drop_if_empty(ncm_devmgr *m, dm_resource *r)
{
        size_t at = (size_t)(r - m->res);
        if (r->has_all || r->has_healthy || r->has_unhealthy || r->ep)
                return;
        resource_done(r);
        memmove(m->res + at, m->res + at + 1, (m->n_res - at - 1) * sizeof(*m->res));
        m->n_res--;
}

const dm_device *ncm__dm_device(const dm_resource *r, const char *id)
{
        ssize_t i = ncm__sorted_find(r->devs, r->n_devs, sizeof(*r->devs), offsetof(dm_device, id),
                                     id);
        return i >= 0 ? &r->devs[i] : NULL;
}

/* ---- endpoints ---- */

int ncm_devmgr_plugin_connect(ncm_devmgr *m, const char *resource, const ncm_devmgr_plugin_ops *ops,
                              void *data, const ncm_devmgr_plugin_options *opts,
                              uint64_t *ret_endpoint, ncm_error *err)
{
        dm_endpoint *ep;
        dm_resource *r;
        int k;

        if ((k = ncm_devmgr_validate_resource_name(resource, err)) < 0)
                return k;
        if (!ops || !ops->allocate)
                return ncm_error_set(err, EINVAL, "resource %s: plugin without an Allocate call",
                                     resource);
        ep = calloc(1, sizeof(*ep));
        if (!ep)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = res_ensure(m, resource);
        if (!r) {
                free(ep);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        ep->id = m->next_endpoint++;
        ep->ops = ops;
        ep->data = data;
        ep->has_opts = true;
        if (opts)
                ep->opts = *opts;
        endpoint_free(r->ep);
        r->ep = ep;
        if (ret_endpoint)
                *ret_endpoint = ep->id;
        return 0;
}

/* kubelet's markResourceUnhealthy. 0 or -ENOMEM (then nothing moved). */
static int mark_unhealthy(dm_resource *r)
{
        ncm__strset u = NCM__STRSET_INIT;
        if (ncm__strset_copy(&u, &r->unhealthy) < 0 ||
            (r->has_healthy && ncm__strset_union(&u, &r->healthy) < 0)) {
                ncm__strset_done(&u);
                return -ENOMEM;
        }
        if (r->has_healthy)
                ncm__strset_done(&r->healthy);
        ncm__strset_done(&r->unhealthy);
        r->unhealthy = u;
        r->has_unhealthy = true;
        return 0;
}

int ncm_devmgr_plugin_disconnect(ncm_devmgr *m, const char *resource, uint64_t endpoint)
{
        dm_resource *r = resource ? ncm__dm_resource(m, resource) : NULL;
        if (!r || !r->ep || r->ep->id != endpoint)
                return 0;
        /* Out of memory here would leave devices healthy; a device that stays schedulable
         * for a moment is the lesser harm, and the grace period still starts. */
        (void)mark_unhealthy(r);
        r->ep->stopped = true;
        r->ep->stop_time = ncm__dm_now(m);
        return 1;
}

int ncm_devmgr_plugin_detach(ncm_devmgr *m, const char *resource, uint64_t endpoint)
{
        dm_resource *r = resource ? ncm__dm_resource(m, resource) : NULL;
        if (!r || !r->ep || r->ep->id != endpoint)
                return 0;
        if (!r->ep->stopped)
                (void)ncm_devmgr_plugin_disconnect(m, resource, endpoint);
        r->ep->ops = NULL;
        r->ep->data = NULL;
        return 1;
}

static int cmp_device(const void *a, const void *b)
{
        return strcmp(((const dm_device *)a)->id, ((const dm_device *)b)->id);
}

int ncm_devmgr_update_devices(ncm_devmgr *m, const char *resource, uint64_t endpoint,
                              const ncm_devmgr_device *devices, size_t n, ncm_error *err)
{
        ncm__strset healthy = NCM__STRSET_INIT, unhealthy = NCM__STRSET_INIT;
        dm_device *devs = NULL;
        dm_resource *r;
        int k;

        if ((k = ncm_devmgr_validate_resource_name(resource, err)) < 0)
                return k;
        r = ncm__dm_resource(m, resource);
        if (endpoint != 0 && (!r || !r->ep || r->ep->id != endpoint))
                return ncm_error_set(err, ESTALE,
                                     "resource %s: device update from a plugin instance that is "
                                     "no longer registered, ignored",
                                     resource);
        if (n) {
                devs = calloc(n, sizeof(*devs));
                if (!devs)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
                const ncm_devmgr_device *d = &devices[i];
                if (!d->id) {
                        k = ncm_error_set(err, EINVAL, "resource %s: device %zu has no ID",
                                          resource, i);
                        goto fail;
                }
                devs[i].id = strdup(d->id);
                devs[i].health = strdup(d->health ? d->health : "");
                devs[i].topology = d->topology;
                devs[i].n_numa = d->topology ? d->n_numa : 0;
                if (devs[i].n_numa) {
                        devs[i].numa = malloc(devs[i].n_numa * sizeof(*devs[i].numa));
                        if (devs[i].numa)
                                memcpy(devs[i].numa, d->numa,
                                       devs[i].n_numa * sizeof(*devs[i].numa));
                }
                if (!devs[i].id || !devs[i].health || (devs[i].n_numa && !devs[i].numa)) {
                        k = ncm_error_set(err, ENOMEM, "out of memory");
                        goto fail;
                }
                for (size_t j = 0; j < devs[i].n_numa; j++)
                        if (devs[i].numa[j] >= 0 && devs[i].numa[j] < NCM_BITMASK_MAX_BITS)
                                devs[i].mask |= (ncm_bitmask)1 << devs[i].numa[j];
        }
        if (n > 1)
                qsort(devs, n, sizeof(*devs), cmp_device);
        for (size_t i = 1; i < n; i++)
                if (strcmp(devs[i - 1].id, devs[i].id) == 0) {
                        ncm_buf q = NCM_BUF_INIT;
                        ncm_buf_go_quote(&q, devs[i].id, strlen(devs[i].id));
                        k = ncm_error_set(err, EINVAL,
                                          "resource %s: duplicate device ID %s in plugin update",
                                          resource, q.data ? q.data : "");
                        ncm_buf_done(&q);
                        goto fail;
                }
        for (size_t i = 0; i < n; i++) {
                bool ok = strcmp(devs[i].health, NCM_DEVMGR_HEALTHY) == 0;
                if (ncm__strset_add(ok ? &healthy : &unhealthy, devs[i].id) < 0) {
                        k = ncm_error_set(err, ENOMEM, "out of memory");
                        goto fail;
                }
        }
        r = res_ensure(m, resource);
        if (!r) {
                k = ncm_error_set(err, ENOMEM, "out of memory");
                goto fail;
        }
        devices_free(r->devs, r->n_devs);
        r->devs = devs;
        r->n_devs = n;
        r->has_all = true;
        ncm__strset_done(&r->healthy);
        ncm__strset_done(&r->unhealthy);
        r->healthy = healthy;
        r->unhealthy = unhealthy;
        r->has_healthy = r->has_unhealthy = true;
        return ncm__dm_checkpoint(m, err);

fail:
        devices_free(devs, n);
        ncm__strset_done(&healthy);
        ncm__strset_done(&unhealthy);
        return k;
}

/* ---- capacity ---- */

static bool grace_expired(const ncm_devmgr *m, const dm_endpoint *ep, int64_t now)
{
        return ep->stopped && now - ep->stop_time > m->stop_grace_ns;
}

static int strv_add_unique(char ***v, size_t *n, const char *s)
{
        char **nv;
        for (size_t i = 0; i < *n; i++)
                if (strcmp((*v)[i], s) == 0)
                        return 0;
        nv = realloc(*v, (*n + 2) * sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        *v = nv;
        nv[*n] = strdup(s);
        if (!nv[*n])
                return -ENOMEM;
        nv[++*n] = NULL;
        return 0;
}

static ncm_devmgr_capacity_entry *cap_entry(ncm_devmgr_capacity *c, const char *res)
{
        ncm_devmgr_capacity_entry *v;
        for (size_t i = 0; i < c->n_entries; i++)
                if (strcmp(c->entries[i].resource, res) == 0)
                        return &c->entries[i];
        v = realloc(c->entries, (c->n_entries + 1) * sizeof(*v));
        if (!v)
                return NULL;
        c->entries = v;
        v[c->n_entries] = (ncm_devmgr_capacity_entry){strdup(res), 0, 0};
        if (!v[c->n_entries].resource)
                return NULL;
        return &v[c->n_entries++];
}

void ncm_devmgr_capacity_done(ncm_devmgr_capacity *c)
{
        for (size_t i = 0; i < c->n_entries; i++)
                free(c->entries[i].resource);
        free(c->entries);
        ncm_devmgr_strv_free(c->deleted);
        memset(c, 0, sizeof(*c));
}

int ncm_devmgr_get_capacity(ncm_devmgr *m, ncm_devmgr_capacity *ret, ncm_error *err)
{
        ncm_devmgr_capacity c = {0};
        int64_t now = ncm__dm_now(m);
        bool dropped = false;

        /* Compute first, so that running out of memory changes nothing. */
        for (int pass = 0; pass < 2; pass++) {
                for (size_t i = 0; i < m->n_res; i++) {
                        dm_resource *r = &m->res[i];
                        bool has = pass == 0 ? r->has_healthy : r->has_unhealthy;
                        ncm_devmgr_capacity_entry *e;
                        if (!has)
                                continue;
                        if (!r->ep || grace_expired(m, r->ep, now)) {
                                if (strv_add_unique(&c.deleted, &c.n_deleted, r->name) < 0)
                                        goto oom;
                                continue;
                        }
                        e = cap_entry(&c, r->name);
                        if (!e)
                                goto oom;
                        if (pass == 0) {
                                e->capacity += (int64_t)r->healthy.n;
                                e->allocatable = (int64_t)r->healthy.n;
                        } else {
                                e->capacity += (int64_t)r->unhealthy.n;
                        }
                }
        }
        /* Drop what expired: endpoint and health sets (allDevices stays, as in the kubelet). */
        for (size_t i = 0; i < c.n_deleted; i++) {
                dm_resource *r = ncm__dm_resource(m, c.deleted[i]);
                endpoint_free(r->ep);
                r->ep = NULL;
                ncm__strset_done(&r->healthy);
                ncm__strset_done(&r->unhealthy);
                r->has_healthy = r->has_unhealthy = false;
                res_drop_if_empty(m, r);
                dropped = true;
        }
        ncm_devmgr_capacity_done(ret);
        *ret = c;
        return dropped ? ncm__dm_checkpoint(m, err) : 0;

oom:
        ncm_devmgr_capacity_done(&c);
        return ncm_error_set(err, ENOMEM, "out of memory");
}

bool ncm_devmgr_is_device_resource(const ncm_devmgr *m, const char *resource)
{
        const dm_resource *r = ncm__dm_resource(m, resource);
        return (r && r->has_healthy) || ncm__rsets_get(&m->st.allocated, resource);
}

int ncm_devmgr_healthy_devices(const ncm_devmgr *m, const char *resource, char ***ret,
                               size_t *ret_n)
{
        const dm_resource *r = ncm__dm_resource(m, resource);
        char **v;
        if (!r || !r->has_healthy)
                return -ENOENT;
        v = ncm__strset_strv(&r->healthy);
        if (!v)
                return -ENOMEM;
        *ret = v;
        if (ret_n)
                *ret_n = r->healthy.n;
        return 0;
}

int ncm_devmgr_allocated_devices(const ncm_devmgr *m, const char *resource, char ***ret,
                                 size_t *ret_n)
{
        const dm_rset *s = ncm__rsets_get(&m->st.allocated, resource);
        char **v;
        if (!s)
                return -ENOENT;
        v = ncm__strset_strv(&s->set);
        if (!v)
                return -ENOMEM;
        *ret = v;
        if (ret_n)
                *ret_n = s->set.n;
        return 0;
}

/* ---- allocation bookkeeping ---- */

void ncm__entry_done(dm_entry *e)
{
        free(e->pod);
        free(e->container);
        free(e->resource);
        ncm__numa_ids_done(e->numa, e->n_numa);
        ncm__strset_done(&e->devices);
        ncm_devmgr_alloc_resp_free(e->resp);
        free(e->resp_bytes);
        memset(e, 0, sizeof(*e));
}

void ncm__state_done(dm_state *st)
{
        for (size_t i = 0; i < st->n_entries; i++)
                ncm__entry_done(&st->entries[i]);
        free(st->entries);
        ncm__rsets_done(&st->allocated);
        free(st->reuse_pod);
        ncm__rsets_done(&st->reuse);
        memset(st, 0, sizeof(*st));
}

static int entry_copy(dm_entry *dst, const dm_entry *src)
{
        memset(dst, 0, sizeof(*dst));
        dst->pod = strdup(src->pod);
        dst->container = strdup(src->container);
        dst->resource = strdup(src->resource);
        dst->ids_null = src->ids_null;
        if (!dst->pod || !dst->container || !dst->resource ||
            ncm__numa_ids_copy(&dst->numa, &dst->n_numa, src->numa, src->n_numa) < 0 ||
            ncm__strset_copy(&dst->devices, &src->devices) < 0)
                goto oom;
        if (src->resp && !(dst->resp = ncm_devmgr_alloc_resp_dup(src->resp)))
                goto oom;
        if (src->resp_bytes) {
                dst->resp_bytes = malloc(src->resp_len ? src->resp_len : 1);
                if (!dst->resp_bytes)
                        goto oom;
                memcpy(dst->resp_bytes, src->resp_bytes, src->resp_len);
                dst->resp_len = src->resp_len;
        }
        return 0;
oom:
        ncm__entry_done(dst);
        return -ENOMEM;
}

int ncm__state_copy(dm_state *dst, const dm_state *src)
{
        dm_state t = {0};
        if (src->n_entries) {
                t.entries = calloc(src->n_entries, sizeof(*t.entries));
                if (!t.entries)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < src->n_entries; i++) {
                if (entry_copy(&t.entries[i], &src->entries[i]) < 0)
                        goto oom;
                t.n_entries++;
        }
        if (ncm__rsets_copy(&t.allocated, &src->allocated) < 0 ||
            ncm__rsets_copy(&t.reuse, &src->reuse) < 0)
                goto oom;
        if (src->reuse_pod && !(t.reuse_pod = strdup(src->reuse_pod)))
                goto oom;
        ncm__state_done(dst);
        *dst = t;
        return 0;
oom:
        ncm__state_done(&t);
        return -ENOMEM;
}

static int cmp_key(const dm_entry *e, const char *pod, const char *container, const char *resource)
{
        int c = strcmp(e->pod, pod);
        if (c)
                return c;
        c = strcmp(e->container, container);
        if (c)
                return c;
        return strcmp(e->resource, resource);
}

static ssize_t entry_find(const dm_state *st, const char *pod, const char *container,
                          const char *resource)
{
        size_t lo = 0, hi = st->n_entries;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = cmp_key(&st->entries[mid], pod, container, resource);
                if (c == 0)
                        return (ssize_t)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -(ssize_t)lo - 1;
}

dm_entry *ncm__state_entry(const dm_state *st, const char *pod, const char *container,
                           const char *resource)
{
        ssize_t i = entry_find(st, pod, container, resource);
        return i >= 0 ? &st->entries[i] : NULL;
}

int ncm__state_put(dm_state *st, dm_entry *e)
{
        ssize_t i = entry_find(st, e->pod, e->container, e->resource);
        size_t at;
        dm_entry *v;

        if (i >= 0) {
                ncm__entry_done(&st->entries[i]);
                st->entries[i] = *e;
                memset(e, 0, sizeof(*e));
                return 0;
        }
        at = (size_t)(-i - 1);
        v = realloc(st->entries, (st->n_entries + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        st->entries = v;
        memmove(v + at + 1, v + at, (st->n_entries - at) * sizeof(*v));
        v[at] = *e;
        memset(e, 0, sizeof(*e));
        st->n_entries++;
        return 0;
}

int ncm__state_recompute_allocated(dm_state *st)
{
        dm_rsets a = {NULL, 0};
        for (size_t i = 0; i < st->n_entries; i++) {
                const dm_entry *e = &st->entries[i];
                dm_rset *s = ncm__rsets_ensure(&a, e->resource);
                if (!s || (e->resp && ncm__strset_union(&s->set, &e->devices) < 0)) {
                        ncm__rsets_done(&a);
                        return -ENOMEM;
                }
        }
        ncm__rsets_done(&st->allocated);
        st->allocated = a;
        return 0;
}

static bool listed(const char *const *uids, size_t n, const char *pod)
{
        for (size_t k = 0; k < n; k++)
                if (strcmp(uids[k], pod) == 0)
                        return true;
        return false;
}

/* Drop the entries of pods not in UIDS. Returns the number of pods dropped. */
static int drop_inactive(dm_state *st, const char *const *uids, size_t n)
{
        size_t out = 0;
        int pods = 0;

        /* Entries are sorted by pod, so a pod's entries are adjacent. */
        for (size_t i = 0; i < st->n_entries; i++)
                if (!listed(uids, n, st->entries[i].pod) &&
                    (i == 0 || strcmp(st->entries[i - 1].pod, st->entries[i].pod) != 0))
                        pods++;
        for (size_t i = 0; i < st->n_entries; i++) {
                if (listed(uids, n, st->entries[i].pod))
                        st->entries[out++] = st->entries[i];
                else
                        ncm__entry_done(&st->entries[i]);
        }
        st->n_entries = out;
        return pods;
}

int ncm_devmgr_update_allocated(ncm_devmgr *m, const char *const *active_pod_uids, size_t n)
{
        dm_state t = {0};
        int pods;

        /* Work on a copy so that running out of memory leaves the state as it was. */
        if (ncm__state_copy(&t, &m->st) < 0)
                return -ENOMEM;
        pods = drop_inactive(&t, active_pod_uids, n);
        if (pods == 0) {
                ncm__state_done(&t);
                return 0;
        }
        if (ncm__state_recompute_allocated(&t) < 0) {
                ncm__state_done(&t);
                return -ENOMEM;
        }
        ncm__state_done(&m->st);
        m->st = t;
        return pods;
}

int ncm__dm_gc(ncm_devmgr *m, ncm_error *err)
{
        const char *const *uids = NULL;
        size_t n = 0;
        int r;

        if (!m->has_pods || !m->pods.active_pods)
                return 0;
        r = m->pods.active_pods(m->pods.data, &uids, &n);
        if (r < 0)
                return ncm_error_set(err, -r, "listing active pods failed");
        if (m->pods.sources_ready && !m->pods.sources_ready(m->pods.data))
                return 0;
        r = ncm_devmgr_update_allocated(m, uids, n);
        if (r < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        return r;
}

static int remove_where(ncm_devmgr *m, const char *pod, const char *container, ncm_error *err)
{
        dm_state t = {0};
        size_t out = 0;
        int removed = 0;

        if (ncm__state_copy(&t, &m->st) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < t.n_entries; i++) {
                dm_entry *e = &t.entries[i];
                if (strcmp(e->pod, pod) == 0 &&
                    (!container || strcmp(e->container, container) == 0)) {
                        if (t.reuse_pod && strcmp(t.reuse_pod, pod) == 0) {
                                dm_rset *s = ncm__rsets_get(&t.reuse, e->resource);
                                if (s)
                                        ncm__strset_subtract(&s->set, &e->devices);
                        }
                        ncm__entry_done(e);
                        removed = 1;
                } else {
                        t.entries[out++] = *e;
                }
        }
        t.n_entries = out;
        if (!container && t.reuse_pod && strcmp(t.reuse_pod, pod) == 0) {
                free(t.reuse_pod);
                t.reuse_pod = NULL;
                ncm__rsets_done(&t.reuse);
        }
        if (!removed) {
                ncm__state_done(&t);
                return 0;
        }
        if (ncm__state_recompute_allocated(&t) < 0) {
                ncm__state_done(&t);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        ncm__state_done(&m->st);
        m->st = t;
        {
                int r = ncm__dm_checkpoint(m, err);
                return r < 0 ? r : 1;
        }
}

int ncm_devmgr_remove_container(ncm_devmgr *m, const char *pod_uid, const char *container,
                                ncm_error *err)
{
        if (!pod_uid || !container)
                return ncm_error_set(err, EINVAL, "remove: pod UID and container name needed");
        return remove_where(m, pod_uid, container, err);
}

int ncm_devmgr_remove_pod(ncm_devmgr *m, const char *pod_uid, ncm_error *err)
{
        if (!pod_uid)
                return ncm_error_set(err, EINVAL, "remove: pod UID needed");
        return remove_where(m, pod_uid, NULL, err);
}

int ncm_devmgr_container_devices(const ncm_devmgr *m, const char *pod_uid, const char *container,
                                 ncm_devmgr_assignment **ret, size_t *ret_n)
{
        ncm_devmgr_assignment *v = NULL;
        size_t n = 0;

        for (size_t i = 0; i < m->st.n_entries; i++) {
                const dm_entry *e = &m->st.entries[i];
                ncm_devmgr_assignment *nv;
                if (strcmp(e->pod, pod_uid) != 0 || strcmp(e->container, container) != 0)
                        continue;
                nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv)
                        goto oom;
                v = nv;
                v[n].resource = strdup(e->resource);
                v[n].ids = ncm__strset_strv(&e->devices);
                v[n].n_ids = e->devices.n;
                n++;
                if (!v[n - 1].resource || !v[n - 1].ids)
                        goto oom;
        }
        *ret = v;
        *ret_n = n;
        return 0;
oom:
        ncm_devmgr_assignments_free(v, n);
        return -ENOMEM;
}

void ncm_devmgr_assignments_free(ncm_devmgr_assignment *a, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(a[i].resource);
                ncm_devmgr_strv_free(a[i].ids);
        }
        free(a);
}

/* ---- checkpoint bridge ---- */

int ncm_devmgr_to_checkpoint(const ncm_devmgr *m, ncm_devmgr_checkpoint **ret, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr_checkpoint) cp = calloc(1, sizeof(*cp));
        if (!cp)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < m->st.n_entries; i++) {
                const dm_entry *e = &m->st.entries[i];
                ncm_devmgr_checkpoint_entry *ce, *nv;
                /* toCheckpointData skips entries without an allocation response. */
                if (!e->resp)
                        continue;
                nv = realloc(cp->entries, (cp->n_entries + 1) * sizeof(*nv));
                if (!nv)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                cp->entries = nv;
                ce = &nv[cp->n_entries++];
                memset(ce, 0, sizeof(*ce));
                ce->pod_uid = strdup(e->pod);
                ce->container_name = strdup(e->container);
                ce->resource_name = strdup(e->resource);
                ce->device_ids_null = e->ids_null;
                if (!ce->pod_uid || !ce->container_name || !ce->resource_name ||
                    ncm__numa_ids_copy(&ce->device_ids, &ce->n_device_ids, e->numa, e->n_numa) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                if (e->resp_bytes) {
                        ce->alloc_resp = malloc(e->resp_len ? e->resp_len : 1);
                        if (!ce->alloc_resp)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        memcpy(ce->alloc_resp, e->resp_bytes, e->resp_len);
                        ce->alloc_resp_len = e->resp_len;
                } else if (ncm_devmgr_alloc_resp_encode(e->resp, &ce->alloc_resp,
                                                        &ce->alloc_resp_len, err) < 0) {
                        return -ENOMEM;
                }
        }
        /* A nil slice when there is nothing: encoding/json writes null. */
        cp->entries_null = cp->n_entries == 0;
        for (size_t i = 0; i < m->n_res; i++) {
                const dm_resource *r = &m->res[i];
                ncm_devmgr_registered *nv;
                if (!r->has_healthy)
                        continue;
                nv = realloc(cp->registered, (cp->n_registered + 1) * sizeof(*nv));
                if (!nv)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                cp->registered = nv;
                nv[cp->n_registered] = (ncm_devmgr_registered){0};
                nv[cp->n_registered].resource = strdup(r->name);
                nv[cp->n_registered].ids = ncm__strset_strv(&r->healthy);
                nv[cp->n_registered].n_ids = r->healthy.n;
                cp->n_registered++;
                if (!nv[cp->n_registered - 1].resource || !nv[cp->n_registered - 1].ids)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        cp->checksum = ncm_devmgr_checkpoint_checksum(cp);
        *ret = NCM_TAKE_PTR(cp);
        return 0;
}

int ncm_devmgr_write_checkpoint(const ncm_devmgr *m, int rootfd, const char *path, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
        int r = ncm_devmgr_to_checkpoint(m, &cp, err);
        if (r < 0)
                return r;
        return ncm_devmgr_checkpoint_write(rootfd, path, cp, err);
}

int ncm__dm_checkpoint(const ncm_devmgr *m, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
        ncm_buf b = NCM_BUF_INIT;
        int r;

        if (!m->ckpt_path)
                return 0;
        if (!m->ckpt_write)
                return ncm_devmgr_write_checkpoint(m, m->ckpt_rootfd, m->ckpt_path, err);
        r = ncm_devmgr_to_checkpoint(m, &cp, err);
        if (r < 0)
                return r;
        ncm_devmgr_checkpoint_format(cp, &b);
        r = ncm_buf_failed(&b)
                            ? ncm_error_set(err, ENOMEM, "%s: out of memory", m->ckpt_path)
                            : m->ckpt_write(m->ckpt_write_data, m->ckpt_path, b.data, b.len, err);
        ncm_buf_done(&b);
        return r;
}

/* An entry of the checkpoint as podDevices.insert() would record it. */
static int entry_from_checkpoint(dm_entry *e, const ncm_devmgr_checkpoint_entry *ce, ncm_error *err)
{
        int r;
        memset(e, 0, sizeof(*e));
        /* proto.Unmarshal of nil bytes succeeds with an empty response. */
        r = ncm_devmgr_alloc_resp_decode(ce->alloc_resp, ce->alloc_resp_len, &e->resp, err);
        if (r < 0)
                return r;
        e->pod = strdup(ce->pod_uid);
        e->container = strdup(ce->container_name);
        e->resource = strdup(ce->resource_name);
        e->ids_null = ce->device_ids_null;
        e->resp_bytes = malloc(ce->alloc_resp_len ? ce->alloc_resp_len : 1);
        if (!e->pod || !e->container || !e->resource || !e->resp_bytes ||
            ncm__numa_ids_copy(&e->numa, &e->n_numa, ce->device_ids, ce->n_device_ids) < 0)
                goto oom;
        if (ce->alloc_resp_len)
                memcpy(e->resp_bytes, ce->alloc_resp, ce->alloc_resp_len);
        e->resp_len = ce->alloc_resp_len;
        for (size_t i = 0; i < e->n_numa; i++)
                for (size_t k = 0; k < e->numa[i].n_ids; k++)
                        if (ncm__strset_add(&e->devices, e->numa[i].ids[k]) < 0)
                                goto oom;
        return 0;
oom:
        ncm__entry_done(e);
        return ncm_error_set(err, ENOMEM, "out of memory");
}

int ncm_devmgr_restore(ncm_devmgr *m, const ncm_devmgr_checkpoint *cp, size_t *ret_skipped,
                       ncm_error *err)
{
        dm_state t = {0};
        dm_endpoint **eps = NULL;
        size_t skipped = 0, n_eps = cp->n_registered;
        int64_t now = ncm__dm_now(m);

        if (ncm__state_copy(&t, &m->st) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < cp->n_entries; i++) {
                dm_entry e;
                ncm_error local = NCM_ERROR_INIT;
                int r = entry_from_checkpoint(&e, &cp->entries[i], &local);
                if (r == -ENOMEM)
                        goto oom;
                if (r < 0) {
                        /* "Can't unmarshal allocResp": the kubelet logs and skips it. */
                        skipped++;
                        continue;
                }
                if (ncm__state_put(&t, &e) < 0) {
                        ncm__entry_done(&e);
                        goto oom;
                }
        }
        if (ncm__state_recompute_allocated(&t) < 0)
                goto oom;
        /* Prepare every stopped endpoint and resource slot before changing anything. */
        if (n_eps && !(eps = calloc(n_eps, sizeof(*eps))))
                goto oom;
        for (size_t i = 0; i < n_eps; i++) {
                eps[i] = calloc(1, sizeof(**eps));
                if (!eps[i] || !res_ensure(m, cp->registered[i].resource))
                        goto oom;
        }
        for (size_t i = 0; i < n_eps; i++) {
                dm_resource *r = ncm__dm_resource(m, cp->registered[i].resource);
                ncm__strset_done(&r->healthy);
                ncm__strset_done(&r->unhealthy);
                r->has_healthy = r->has_unhealthy = true;
                endpoint_free(r->ep);
                eps[i]->id = m->next_endpoint++;
                eps[i]->stopped = true;
                eps[i]->stop_time = now;
                r->ep = eps[i];
        }
        free(eps);
        ncm__state_done(&m->st);
        m->st = t;
        if (ret_skipped)
                *ret_skipped = skipped;
        return 0;
oom:
        for (size_t i = 0; eps && i < n_eps; i++)
                free(eps[i]);
        free(eps);
        /* Resource slots created above hold nothing and are dropped again. */
        for (size_t i = m->n_res; i-- > 0;)
                res_drop_if_empty(m, &m->res[i]);
        ncm__state_done(&t);
        return ncm_error_set(err, ENOMEM, "out of memory");
}

int ncm_devmgr_load_checkpoint(ncm_devmgr *m, int rootfd, const char *path, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
        int r = ncm_devmgr_checkpoint_load(rootfd, path, &cp, err);
        if (r == -ENOENT) {
                ncm_error_clear(err);
                return 0;
        }
        if (r < 0)
                return r;
        r = ncm_devmgr_checkpoint_verify(cp, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s", path);
        r = ncm_devmgr_restore(m, cp, NULL, err);
        return r < 0 ? r : 1;
}
