/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DRA devices as a hint provider (nodecm's draTopologyHints: align; beyond the kubelet, whose
 * topology manager never hears of DRA devices: kubernetes/website#56232, and the attempt in
 * kubernetes/kubernetes#139982 was closed). A container's CDI devices (what the kubelet passes
 * in CreateContainer, or the pod's nodecm.io/cdi-devices) are located on the PCI bus
 * (node-locality.c), and each CDI kind ("vendor.com/class") gives the hints the kubelet gives a
 * device-plugin resource whose allocated devices they are: the smallest NUMA masks touching
 * every device are preferred, so a device on one node pins the container's CPUs there under
 * single-numa-node, and a device spanning nodes lets either do. Devices the locator cannot
 * place, or whose functions have no NUMA node, give no preference (the kubelet would refuse a
 * plugin resource mixing such devices; a DRA driver's "common" CDI device without nodes is
 * usual, and must not refuse the pod).
 *
 * Registered after the kubelet's providers, so with the option off nothing changes, and the
 * merge sees the kubelet's lists in the kubelet's order first. It allocates nothing: the
 * devices were allocated by the scheduler and prepared by their driver.
 *
 * A resize (NCM_TM_OP_RESIZE) changes cpu and memory only: a container keeps the CDI devices it
 * was admitted with (ncm_node_resize), so its hints are the admission's and the re-admission's
 * affinity still holds the devices' nodes (under single-numa-node an upsize grows on the
 * devices' node or is refused, as the device manager's held devices make it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node-internal.h"

/* The distinct CDI names of the containers CS[0..N), in order. */
static int names_of(const ncm_container *const *cs, size_t n, const char ***ret, size_t *ret_n)
{
        const char **v = NULL;
        size_t nv = 0, total = 0;

        for (size_t i = 0; i < n; i++)
                total += cs[i]->n_cdi_devices;
        v = calloc(total + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < cs[i]->n_cdi_devices; k++) {
                        bool seen = false;
                        for (size_t j = 0; j < nv && !seen; j++)
                                seen = strcmp(v[j], cs[i]->cdi_devices[k]) == 0;
                        if (!seen)
                                v[nv++] = cs[i]->cdi_devices[k];
                }
        *ret = v;
        *ret_n = nv;
        return 0;
}

static size_t kind_len(const char *name)
{
        const char *eq = strchr(name, '=');
        return eq ? (size_t)(eq - name) : strlen(name);
}

static int hints_of(ncm_node *n, const ncm_container *const *cs, size_t ncs, ncm_tm_hints *ret,
                    ncm_error *err)
{
        ncm_autofree const char **names = NULL;
        ncm_device_location *locs = NULL;
        ncm_autofree ncm_bitmask *masks = NULL;
        ncm_locator *l = NULL;
        size_t nn = 0, nl = 0, nids = 0;
        const int *ids = ncm_topo_numa_ids(n->topo, &nids);
        ncm_kubelet_version v =
                        n->kubelet_override.major ? n->kubelet_override : n->cfg->kubelet_version;
        int r;

        if (names_of(cs, ncs, &names, &nn) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (nn == 0)
                return 0;
        r = ncm__node_locator(n, &l, err);
        locs = calloc(nn, sizeof(*locs));
        masks = calloc(nn, sizeof(*masks));
        if (r >= 0 && (!locs || !masks))
                r = ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; r >= 0 && i < nn; i++, nl++)
                r = ncm_locator_cdi(l, names[i], &locs[i], err);
        /* per kind, in name order: the names are few, so a pass per kind is enough */
        for (size_t i = 0; r >= 0 && i < nn; i++) {
                size_t ki = kind_len(names[i]), nm = 0;
                bool first = true;
                char kind[256];
                ncm_hint_desc *d = NULL;

                for (size_t j = 0; j < i && first; j++)
                        first = !(kind_len(names[j]) == ki && strncmp(names[j], names[i], ki) == 0);
                if (!first)
                        continue;
                for (size_t j = i; j < nn; j++)
                        if (kind_len(names[j]) == ki && strncmp(names[j], names[i], ki) == 0 &&
                            locs[j].located && locs[j].numa)
                                masks[nm++] = locs[j].numa;
                if (nm == 0)
                        continue; /* nothing placed: no preference */
                r = ncm_devmgr_held_hints_describe(ids, nids, v, masks, nm, &d, err);
                snprintf(kind, sizeof(kind), "%.*s", (int)ki, names[i]);
                if (r >= 0 && d)
                        r = ncm_tm_hints_add_desc(ret, kind, d, err);
        }
        ncm_device_locations_free(locs, nl);
        return r < 0 ? r : 0;
}

static int dra_container_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret,
                               ncm_error *err)
{
        const ncm_container *c = call->container;
        return hints_of(data, &c, 1, ret, err);
}

static int dra_pod_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret, ncm_error *err)
{
        const ncm_pod *pod = call->pod;
        size_t n = pod->n_init_containers + pod->n_containers;
        ncm_autofree const ncm_container **cs = calloc(n + 1, sizeof(*cs));

        if (!cs)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < pod->n_init_containers; i++)
                cs[i] = &pod->init_containers[i];
        for (size_t i = 0; i < pod->n_containers; i++)
                cs[pod->n_init_containers + i] = &pod->containers[i];
        return hints_of(data, cs, n, ret, err);
}

/* Where each CDI device is, against the affinity, for --explain. */
static int dra_allocate(void *data, const ncm_tm_call *call, const ncm_hint *affinity,
                        const char **ret_type, ncm_error *err)
{
        ncm_node *n = data;
        node_txn *txn = call->txn;
        const ncm_container *c = call->container;
        ncm_device_location *locs = NULL;
        ncm_node_event *e;
        ncm_buf text = NCM_BUF_INIT;
        size_t nl = 0;
        int r;

        (void)ret_type;
        if (!txn || !txn->explain || !c->n_cdi_devices)
                return 0;
        r = ncm__node_container_locations(n, call->pod, c, false, true, &locs, &nl, err);
        if (r < 0)
                return r;
        e = ncm__node_event_add(txn, NCM_NODE_EVENT_ALLOCATE, c->name, "dra");
        if (!e) {
                ncm_device_locations_free(locs, nl);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        e->hint = *affinity;
        e->ok = true;
        if (call->op == NCM_TM_OP_RESIZE)
                ncm__node_event_step(e, "resize: the devices stay (DRA devices are not resized)");
        for (size_t i = 0; i < nl; i++) {
                const ncm_device_location *d = &locs[i];
                ncm_buf mb = NCM_BUF_INIT;
                const char *where;
                ncm_buf_printf(&text, "%s%s", i ? ", " : "", d->device);
                if (!d->located) {
                        ncm__node_event_step(e, "%s: not located (%s): no hint", d->device, d->how);
                        continue;
                }
                if (d->numa)
                        ncm_bitmask_format_ids(d->numa, &mb);
                where = !d->numa                           ? "no NUMA node: no hint"
                        : affinity->any                    ? "no NUMA hint"
                        : (d->numa & ~affinity->numa) == 0 ? "aligned with the hint"
                        : (d->numa & affinity->numa) != 0  ? "partly in the hint"
                                                           : "outside the hint";
                ncm__node_event_step(e, "%s: PCI %s%s (NUMA %s) by %s: %s", d->device, d->pci[0],
                                     d->n_pci > 1 ? ",..." : "", mb.data ? mb.data : "-", d->how,
                                     where);
                ncm_buf_done(&mb);
        }
        e->text = ncm_buf_steal(&text);
        ncm_device_locations_free(locs, nl);
        return 0;
}

const ncm_tm_provider_ops ncm__node_dra_provider = {
                .name = "dra devices",
                .get_container_hints = dra_container_hints,
                .get_pod_hints = dra_pod_hints,
                .allocate = dra_allocate,
};
