/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device manager in the node: built with the machine's NUMA nodes, fed the scenario's
 * devices through the stand-in plugin (a snapshot per resource, as a registering plugin sends
 * it), registered as the first topology-manager hint provider (the kubelet's order: device
 * manager, CPU manager), its kubelet_internal_checkpoint kept beside cpu_manager_state.
 *
 * The node keeps its own table of the devices (id, NUMA nodes, health) for explanations and
 * output; the device manager has the authority on everything else.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/json.h"
#include "node-internal.h"

/* ------------------------------------------------------------------------------------------
 * The device table
 */

void ncm_node_devices_done(ncm_node_devices *t)
{
        for (size_t i = 0; i < t->n; i++) {
                free(t->v[i].resource);
                free(t->v[i].id);
        }
        free(t->v);
        *t = (ncm_node_devices){0};
}

/* The devices section (already checked by the device manager) as a table, resources and ids
 * sorted. */
int ncm_node_devices_parse(const char *text, size_t len, ncm_node_devices *ret, ncm_error *err)
{
        ncm_autojson root = NULL;
        ncm_node_devices t = {0};
        size_t cap = 0;
        int r;

        *ret = (ncm_node_devices){0};
        if (!text)
                return 0;
        r = ncm__json_parse(text, len, "node.devices", &root, err);
        if (r < 0)
                return r;
        if (!root || !json_object_is_type(root, json_type_object))
                return 0;
        json_object_object_foreach(root, res, list)
        {
                if (!list || !json_object_is_type(list, json_type_array))
                        continue;
                for (size_t i = 0; i < json_object_array_length(list); i++) {
                        json_object *d = json_object_array_get_idx(list, i);
                        json_object *id = ncm__json_get(d, "id"), *numa = ncm__json_get(d, "numa");
                        json_object *health = ncm__json_get(d, "health");
                        ncm_node_device *e;
                        if (!id || !json_object_is_type(id, json_type_string))
                                continue;
                        if (ncm__array_grow(t.v, cap, t.n) < 0)
                                goto oom;
                        e = &t.v[t.n];
                        e->resource = strdup(res);
                        e->id = strdup(json_object_get_string(id));
                        t.n++;
                        if (!e->resource || !e->id)
                                goto oom;
                        e->healthy = !health || strcmp(json_object_get_string(health),
                                                       NCM_DEVMGR_HEALTHY) == 0;
                        if (numa && json_object_is_type(numa, json_type_array)) {
                                e->topology = true;
                                for (size_t j = 0; j < json_object_array_length(numa); j++) {
                                        int64_t v = json_object_get_int64(
                                                        json_object_array_get_idx(numa, j));
                                        if (v >= 0 && v < 64)
                                                e->numa |= (ncm_bitmask)1 << v;
                                }
                        }
                }
        }
        /* sorted: resource, then id */
        for (size_t i = 1; i < t.n; i++)
                for (size_t j = i; j > 0; j--) {
                        int c = strcmp(t.v[j - 1].resource, t.v[j].resource);
                        ncm_node_device tmp;
                        if (c < 0 || (c == 0 && strcmp(t.v[j - 1].id, t.v[j].id) <= 0))
                                break;
                        tmp = t.v[j];
                        t.v[j] = t.v[j - 1];
                        t.v[j - 1] = tmp;
                }
        *ret = t;
        return 0;
oom:
        ncm_node_devices_done(&t);
        return ncm_error_set(err, ENOMEM, "out of memory");
}

const ncm_node_device *ncm_node_devices_find(const ncm_node_devices *t, const char *resource,
                                             const char *id)
{
        for (size_t i = 0; i < t->n; i++)
                if (strcmp(t->v[i].resource, resource) == 0 && strcmp(t->v[i].id, id) == 0)
                        return &t->v[i];
        return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Construction and start-up
 */

char *ncm__node_dev_checkpoint_path(const ncm_node *n)
{
        char *p = NULL;
        if (!n->dir)
                return NULL;
        if (asprintf(&p, "%s/%s", n->dir, NCM_DEVMGR_CHECKPOINT_NAME) < 0)
                return NULL;
        return p;
}

/* The checkpoint through the node's writes: into its owner's batch while staged. */
static int dev_checkpoint_write(void *data, const char *path, const char *text, size_t len,
                                ncm_error *err)
{
        return ncm__node_write(data, path, text, len, err);
}

int ncm__node_dev_new(ncm_node *n, ncm_devmgr **ret, ncm_error *err)
{
        size_t nn = 0;
        const int *ids = ncm_topo_numa_ids(n->topo, &nn);
        ncm_autofree char *path = ncm__node_dev_checkpoint_path(n);
        ncm_devmgr_config cfg = {0};

        if (n->dir && !path)
                return ncm_error_set(err, ENOMEM, "out of memory");
        cfg.numa_nodes = ids;
        cfg.n_numa_nodes = nn;
        cfg.checkpoint_path = path;
        cfg.checkpoint_rootfd = AT_FDCWD;
        cfg.checkpoint_write = dev_checkpoint_write;
        cfg.checkpoint_write_data = n;
        /* the release the node reproduces: the command line's, else the configuration's */
        cfg.kubelet_version =
                        n->kubelet_override.major ? n->kubelet_override : n->cfg->kubelet_version;
        return ncm_devmgr_new(&cfg, ret, err);
}

/*
 * The device manager's Start: restore its checkpoint (TEXT in memory, or the state directory's
 * file when RESTORE_FILE), then the plugins register again and send their devices.
 */
int ncm__node_dev_start(ncm_node *n, ncm_devmgr *dev, const char *text, size_t len,
                        bool restore_file, ncm_error *err)
{
        int r = 0;

        if (restore_file) {
                ncm_autofree char *path = ncm__node_dev_checkpoint_path(n);
                if (!path)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                r = ncm_devmgr_load_checkpoint(dev, AT_FDCWD, path, err);
        } else if (text) {
                ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
                r = ncm_devmgr_checkpoint_parse(text, len, NCM_DEVMGR_CHECKPOINT_NAME, &cp, err);
                if (r >= 0)
                        r = ncm_devmgr_checkpoint_verify(cp, err);
                if (r >= 0)
                        r = ncm_devmgr_restore(dev, cp, NULL, err);
        }
        if (r < 0)
                return r;
        if (n->devices_json)
                r = ncm_devmgr_apply_devices_json(dev, n->devices_json, n->devices_len,
                                                  "node.devices", err);
        return r < 0 ? r : 0;
}

/* The device manager's checkpoint as the kubelet would write it now (for a restart in memory). */
int ncm__node_dev_checkpoint_text(const ncm_devmgr *dev, ncm_buf *b, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
        int r = ncm_devmgr_to_checkpoint(dev, &cp, err);
        if (r < 0)
                return r;
        ncm_devmgr_checkpoint_format(cp, b);
        return ncm_buf_failed(b) ? ncm_error_set(err, ENOMEM, "out of memory") : 0;
}

/*
 * A copy decides on what the plugins report now (ncm_node_copy, for what-ifs): every resource
 * whose plugin is registered gets its current devices through the stand-in, which calls no
 * plugin (a what-if must not reach one) and asks for neither a preferred allocation nor
 * PreStartContainer. Resources whose plugin went away stay as the checkpoint restored them.
 */
int ncm__node_dev_copy_live(const ncm_devmgr *src, ncm_devmgr *dst, ncm_error *err)
{
        ncm_devmgr_inventory inv = {0};
        int r = 0;

        if (ncm_devmgr_inventory_get(src, &inv) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < inv.n && r >= 0; i++) {
                const ncm_devmgr_resource_info *ri = &inv.v[i];
                ncm_devmgr_device *devs;
                uint64_t ep = 0;
                if (ri->endpoint != NCM_DEVMGR_ENDPOINT_RUNNING)
                        continue;
                devs = calloc(ri->n_devices ? ri->n_devices : 1, sizeof(*devs));
                if (!devs) {
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                        break;
                }
                for (size_t k = 0; k < ri->n_devices; k++) {
                        const ncm_devmgr_device_info *d = &ri->devices[k];
                        /* a device of the checkpoint only (allocated, no longer reported): out */
                        devs[k] = (ncm_devmgr_device){d->id, d->health, d->topology, d->numa,
                                                      d->n_numa};
                }
                r = ncm_devmgr_plugin_connect(dst, ri->resource, &ncm_devmgr_standin_ops, NULL,
                                              &ncm_devmgr_standin_options, &ep, err);
                if (r >= 0) {
                        size_t n = 0;
                        for (size_t k = 0; k < ri->n_devices; k++)
                                if (ri->devices[k].health)
                                        devs[n++] = devs[k];
                        r = ncm_devmgr_update_devices(dst, ri->resource, ep, devs, n, err);
                }
                free(devs);
        }
        ncm_devmgr_inventory_done(&inv);
        return r < 0 ? r : 0;
}

/* ------------------------------------------------------------------------------------------
 * The hint provider
 */

/* Each resource's hints as the device manager gave them: a description, or nil / empty. */
static int to_tm_hints(ncm_devmgr_hints *dh, ncm_tm_hints *ret, ncm_error *err)
{
        for (size_t i = 0; i < dh->n; i++) {
                ncm_devmgr_resource_hints *rh = &dh->v[i];
                int r;
                if (rh->desc)
                        r = ncm_tm_hints_add_desc(ret, rh->resource, NCM_TAKE_PTR(rh->desc), err);
                else
                        r = ncm_tm_hints_add(ret, rh->resource, rh->hints.hints, rh->hints.n,
                                             rh->hints.nil, NULL, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int dev_container_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret,
                               ncm_error *err)
{
        ncm_node *n = data;
        ncm_devmgr_hints dh = NCM_DEVMGR_HINTS_INIT;
        int r = ncm_devmgr_pod_container_hints_describe(n->dev, call->pod, call->container, &dh,
                                                        err);

        if (r >= 0)
                r = to_tm_hints(&dh, ret, err);
        ncm_devmgr_hints_done(&dh);
        return r;
}

static int dev_pod_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret, ncm_error *err)
{
        ncm_node *n = data;
        ncm_devmgr_hints dh = NCM_DEVMGR_HINTS_INIT;
        int r = ncm_devmgr_pod_scope_hints_describe(n->dev, call->pod, &dh, err);

        if (r >= 0)
                r = to_tm_hints(&dh, ret, err);
        ncm_devmgr_hints_done(&dh);
        return r;
}

static bool has_devices(const ncm_container *c)
{
        for (size_t i = 0; i < c->resources.limits.n; i++)
                if (ncm_devmgr_is_extended_resource_name(c->resources.limits.items[i].name))
                        return true;
        for (size_t i = 0; i < c->resources.requests.n; i++)
                if (ncm_devmgr_is_extended_resource_name(c->resources.requests.items[i].name))
                        return true;
        return false;
}

/* The NUMA nodes RESOURCE/ID reports, as the device manager knows them now: *RET_MASK, and
 * false when the device has no topology (or is not known). */
static bool device_numa(const ncm_devmgr_inventory *inv, const char *resource, const char *id,
                        ncm_bitmask *ret_mask)
{
        *ret_mask = 0;
        for (size_t i = 0; i < inv->n; i++) {
                if (strcmp(inv->v[i].resource, resource) != 0)
                        continue;
                for (size_t k = 0; k < inv->v[i].n_devices; k++) {
                        const ncm_devmgr_device_info *d = &inv->v[i].devices[k];
                        if (strcmp(d->id, id) != 0)
                                continue;
                        for (size_t j = 0; j < d->n_numa; j++)
                                if (d->numa[j] >= 0 && d->numa[j] < NCM_BITMASK_MAX_BITS)
                                        *ret_mask |= (ncm_bitmask)1 << d->numa[j];
                        return d->topology && *ret_mask;
                }
        }
        return false;
}

/* What the container holds and, against the affinity, where each device sits. */
static void explain_devices(ncm_node *n, ncm_node_event *e, const ncm_pod *pod,
                            const ncm_container *c, const ncm_hint *aff, bool had)
{
        ncm_devmgr_assignment *as = NULL;
        ncm_devmgr_inventory inv = {0};
        size_t na = 0;
        ncm_buf text = NCM_BUF_INIT;

        if (ncm_devmgr_container_devices(n->dev, pod->uid, c->name, &as, &na) < 0 ||
            ncm_devmgr_inventory_get(n->dev, &inv) < 0) {
                ncm_devmgr_assignments_free(as, na);
                return;
        }
        for (size_t i = 0; i < na; i++) {
                ncm_buf_printf(&text, "%s%s: ", i ? "; " : "", as[i].resource);
                for (size_t k = 0; k < as[i].n_ids; k++) {
                        ncm_bitmask numa;
                        bool topo = device_numa(&inv, as[i].resource, as[i].ids[k], &numa);
                        ncm_buf mb = NCM_BUF_INIT;
                        const char *where;

                        ncm_buf_printf(&text, "%s%s", k ? "," : "", as[i].ids[k]);
                        if (!topo) {
                                where = "no NUMA affinity of its own";
                                ncm_buf_puts(&mb, "-");
                        } else {
                                ncm_bitmask_format_ids(numa, &mb);
                                where = aff->any                   ? "no NUMA hint"
                                        : (numa & ~aff->numa) == 0 ? "aligned with the hint"
                                        : (numa & aff->numa) != 0  ? "partly in the hint"
                                                                   : "outside the hint";
                        }
                        ncm__node_event_step(e, "%s %s (NUMA %s): %s", as[i].resource, as[i].ids[k],
                                             mb.data ? mb.data : "-", had ? "already held" : where);
                        ncm_buf_done(&mb);
                }
        }
        free(e->text);
        e->text = ncm_buf_steal(&text);
        ncm_devmgr_assignments_free(as, na);
        ncm_devmgr_inventory_done(&inv);
}

static int dev_allocate(void *data, const ncm_tm_call *call, const ncm_hint *affinity,
                        const char **ret_type, ncm_error *err)
{
        ncm_node *n = data;
        node_txn *txn = call->txn;
        const ncm_pod *pod = call->pod;
        const ncm_container *c = call->container;
        ncm_node_event *e = NULL;
        ncm_devmgr_assignment *before = NULL;
        size_t nbefore = 0;
        int r;

        (void)ret_type;
        if (!has_devices(c))
                return 0;
        if (txn && txn->explain) {
                if (ncm_devmgr_container_devices(n->dev, pod->uid, c->name, &before, &nbefore) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                ncm_devmgr_assignments_free(before, nbefore);
                e = ncm__node_event_add(txn, NCM_NODE_EVENT_ALLOCATE, c->name, "devices");
                if (!e)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                e->hint = *affinity;
        }
        r = ncm_devmgr_allocate_pod_container(n->dev, pod, c, affinity, err);
        if (r >= 0) {
                /*
                 * What reaches the container (the kubelet's GetDeviceRunContainerOptions at its
                 * start): PreStartContainer for the plugins that ask for it. Inside the
                 * admission, so that a plugin that fails it leaves nothing half-admitted.
                 */
                ncm_devmgr_alloc_resp *opts = NULL;
                r = ncm_devmgr_pod_run_options(n->dev, pod, c, affinity, &opts, err);
                ncm_devmgr_alloc_resp_free(opts);
        }
        if (r < 0) {
                if (e) {
                        e->ok = false;
                        e->text = strdup(err && err->msg[0] ? err->msg : ncm_strerror(-r));
                }
                return r;
        }
        if (e) {
                e->ok = true;
                explain_devices(n, e, pod, c, affinity, nbefore > 0);
        }
        return 0;
}

const ncm_tm_provider_ops ncm__node_device_provider = {
                .name = "device manager",
                .get_container_hints = dev_container_hints,
                .get_pod_hints = dev_pod_hints,
                .allocate = dev_allocate,
};

/* ------------------------------------------------------------------------------------------
 * Scenario checks: what the scheduler or the API server would have refused
 */

int ncm_node_devices_check_pod(const ncm_node_devices *t, const ncm_pod *pod, const char *path,
                               ncm_error *err)
{
        int r = ncm_devmgr_validate_pod(pod, err);

        if (r < 0)
                return ncm_error_prefix(err, "%s", path);
        for (size_t i = 0; i < pod->n_init_containers + pod->n_containers; i++) {
                bool init = i < pod->n_init_containers;
                const ncm_container *c = init ? &pod->init_containers[i]
                                              : &pod->containers[i - pod->n_init_containers];
                for (size_t k = 0; k < c->resources.limits.n; k++) {
                        const ncm_resource *res = &c->resources.limits.items[k];
                        int64_t have = 0, want;
                        if (!ncm_devmgr_is_extended_resource_name(res->name))
                                continue;
                        for (size_t j = 0; j < t->n; j++)
                                have += strcmp(t->v[j].resource, res->name) == 0;
                        want = ncm_quantity_value(&res->quantity);
                        if (have == 0)
                                return ncm_error_set(err, EINVAL,
                                                     "%s.spec.%s[%zu].resources.limits.%s: unknown "
                                                     "resource: node.devices has no \"%s\"",
                                                     path, init ? "initContainers" : "containers",
                                                     init ? i : i - pod->n_init_containers,
                                                     res->name, res->name);
                        if (want > have)
                                return ncm_error_set(err, EINVAL,
                                                     "%s.spec.%s[%zu].resources.limits.%s: %lld "
                                                     "devices requested, node.devices has %lld",
                                                     path, init ? "initContainers" : "containers",
                                                     init ? i : i - pod->n_init_containers,
                                                     res->name, (long long)want, (long long)have);
                }
        }
        return 0;
}
