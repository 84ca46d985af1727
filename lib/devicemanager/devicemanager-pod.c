/* SPDX-License-Identifier: Apache-2.0 */
/* The device manager's entry points for the pod model (include/nodecm/pod.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/quantity.h>
#include "devicemanager-internal.h"

/* A count of devices from an extended-resource quantity, or -EINVAL if not an integer. */
static int count_of(const ncm_container *c, const char *field, const ncm_resource *r, int64_t *ret,
                    ncm_error *err)
{
        int64_t milli = ncm_quantity_milli_value(&r->quantity);
        if (milli % 1000 != 0) {
                char buf[NCM_QUANTITY_STRLEN];
                return ncm_error_set(err, EINVAL,
                                     "container \"%s\": resources.%s[%s]: Invalid value: \"%s\": "
                                     "must be an integer",
                                     c->name, field, r->name,
                                     ncm_quantity_to_string(&r->quantity, buf));
        }
        *ret = ncm_quantity_value(&r->quantity);
        return 0;
}

static ncm_devmgr_resource *find_res(ncm_devmgr_resource *v, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i].name, name) == 0)
                        return &v[i];
        return NULL;
}

/* *OUT points into *RES (malloc'd; free it) and into C's strings. */
static int convert(const ncm_container *c, ncm_devmgr_resource **res, ncm_devmgr_container *out,
                   ncm_error *err)
{
        size_t cap = c->resources.limits.n + c->resources.requests.n, n = 0;
        ncm_devmgr_resource *v = calloc(cap ? cap : 1, sizeof(*v));
        int k;

        if (!v)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (int pass = 0; pass < 2; pass++) {
                const ncm_resource_list *l = pass ? &c->resources.requests : &c->resources.limits;
                for (size_t i = 0; i < l->n; i++) {
                        const ncm_resource *r = &l->items[i];
                        ncm_devmgr_resource *d;
                        int64_t count = 0;
                        if (!ncm_devmgr_is_extended_resource_name(r->name))
                                continue;
                        if ((k = count_of(c, pass ? "requests" : "limits", r, &count, err)) < 0) {
                                free(v);
                                return k;
                        }
                        d = find_res(v, n, r->name);
                        if (!d) {
                                d = &v[n++];
                                *d = (ncm_devmgr_resource){r->name, NCM_DEVMGR_UNSET,
                                                           NCM_DEVMGR_UNSET};
                        }
                        if (pass)
                                d->request = count;
                        else
                                d->limit = count;
                }
        }
        *out = (ncm_devmgr_container){c->name,
                                      !c->init     ? NCM_DEVMGR_APP_CONTAINER
                                      : c->sidecar ? NCM_DEVMGR_SIDECAR_CONTAINER
                                                   : NCM_DEVMGR_INIT_CONTAINER,
                                      v, n};
        *res = v;
        return 0;
}

int ncm_devmgr_validate_pod(const ncm_pod *pod, ncm_error *err)
{
        for (int pass = 0; pass < 2; pass++) {
                const ncm_container *cs = pass ? pod->containers : pod->init_containers;
                size_t n = pass ? pod->n_containers : pod->n_init_containers;
                for (size_t i = 0; i < n; i++) {
                        ncm_autofree ncm_devmgr_resource *res = NULL;
                        ncm_devmgr_container dc;
                        int k = convert(&cs[i], &res, &dc, err);
                        if (k < 0 || (k = ncm_devmgr_validate_container(&dc, err)) < 0)
                                return k;
                }
        }
        return 0;
}

int ncm_devmgr_allocate_pod_container(ncm_devmgr *m, const ncm_pod *pod, const ncm_container *c,
                                      const ncm_hint *affinity, ncm_error *err)
{
        ncm_autofree ncm_devmgr_resource *res = NULL;
        ncm_devmgr_container dc;
        int k = convert(c, &res, &dc, err);
        if (k < 0)
                return k;
        return ncm_devmgr_allocate(m, pod->uid, &dc, affinity, err);
}

static int pod_container_hints(ncm_devmgr *m, const ncm_pod *pod, const ncm_container *c, bool desc,
                               ncm_devmgr_hints *ret, ncm_error *err)
{
        ncm_autofree ncm_devmgr_resource *res = NULL;
        ncm_devmgr_container dc;
        int k = convert(c, &res, &dc, err);
        if (k < 0)
                return k;
        return desc ? ncm_devmgr_container_hints_describe(m, pod->uid, &dc, ret, err)
                    : ncm_devmgr_container_hints(m, pod->uid, &dc, ret, err);
}

int ncm_devmgr_pod_container_hints(ncm_devmgr *m, const ncm_pod *pod, const ncm_container *c,
                                   ncm_devmgr_hints *ret, ncm_error *err)
{
        return pod_container_hints(m, pod, c, false, ret, err);
}

int ncm_devmgr_pod_container_hints_describe(ncm_devmgr *m, const ncm_pod *pod,
                                            const ncm_container *c, ncm_devmgr_hints *ret,
                                            ncm_error *err)
{
        return pod_container_hints(m, pod, c, true, ret, err);
}

int ncm_devmgr_pod_run_options(ncm_devmgr *m, const ncm_pod *pod, const ncm_container *c,
                               const ncm_hint *affinity, ncm_devmgr_alloc_resp **ret,
                               ncm_error *err)
{
        ncm_autofree ncm_devmgr_resource *res = NULL;
        ncm_devmgr_container dc;
        int k = convert(c, &res, &dc, err);
        if (k < 0)
                return k;
        return ncm_devmgr_run_options(m, pod->uid, &dc, affinity, ret, err);
}

static int pod_scope_hints(ncm_devmgr *m, const ncm_pod *pod, bool desc, ncm_devmgr_hints *ret,
                           ncm_error *err)
{
        size_t n = pod->n_init_containers + pod->n_containers;
        ncm_devmgr_container *dcs = calloc(n ? n : 1, sizeof(*dcs));
        ncm_devmgr_resource **res = calloc(n ? n : 1, sizeof(*res));
        ncm_devmgr_pod dp = {pod->uid, dcs, pod->n_init_containers, dcs + pod->n_init_containers,
                             pod->n_containers};
        int k = 0;

        if (!dcs || !res)
                k = ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; k == 0 && i < n; i++) {
                const ncm_container *c =
                                i < pod->n_init_containers
                                                ? &pod->init_containers[i]
                                                : &pod->containers[i - pod->n_init_containers];
                k = convert(c, &res[i], &dcs[i], err);
        }
        if (k == 0)
                k = desc ? ncm_devmgr_pod_hints_describe(m, &dp, ret, err)
                         : ncm_devmgr_pod_hints(m, &dp, ret, err);
        for (size_t i = 0; res && i < n; i++)
                free(res[i]);
        free(res);
        free(dcs);
        return k;
}

int ncm_devmgr_pod_scope_hints(ncm_devmgr *m, const ncm_pod *pod, ncm_devmgr_hints *ret,
                               ncm_error *err)
{
        return pod_scope_hints(m, pod, false, ret, err);
}

int ncm_devmgr_pod_scope_hints_describe(ncm_devmgr *m, const ncm_pod *pod, ncm_devmgr_hints *ret,
                                        ncm_error *err)
{
        return pod_scope_hints(m, pod, true, ret, err);
}
