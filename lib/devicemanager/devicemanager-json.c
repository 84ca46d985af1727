/* SPDX-License-Identifier: Apache-2.0 */
/* The scenario's "devices" section (DESIGN.md) and the simulator's per-container output. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "devicemanager-internal.h"

typedef struct res_devices {
        const char *name;
        ncm_devmgr_device *devs;
        int64_t *nodes; /* storage for every device's numa list */
        size_t n;
} res_devices;

static void res_devices_done(res_devices *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].devs);
                free(v[i].nodes);
        }
        free(v);
}

static int cmp_res(const void *a, const void *b)
{
        return strcmp(((const res_devices *)a)->name, ((const res_devices *)b)->name);
}

static int cmp_dev(const void *a, const void *b)
{
        return strcmp(((const ncm_devmgr_device *)a)->id, ((const ncm_devmgr_device *)b)->id);
}

/* One resource's list: [{"id": "gpu0", "numa": [0], "health": "Healthy"}, ...]. */
static int parse_list(json_object *list, const char *base, res_devices *out, ncm_error *err)
{
        size_t n, total = 0, used = 0;
        char path[512];
        int k;

        snprintf(path, sizeof(path), "%.400s", base);
        if ((k = ncm__json_expect(list, json_type_array, path, err)) < 0)
                return k;
        n = json_object_array_length(list);
        for (size_t i = 0; i < n; i++) {
                json_object *numa = ncm__json_get(json_object_array_get_idx(list, i), "numa");
                if (numa && json_object_is_type(numa, json_type_array))
                        total += json_object_array_length(numa);
        }
        out->devs = calloc(n ? n : 1, sizeof(*out->devs));
        out->nodes = calloc(total ? total : 1, sizeof(*out->nodes));
        out->n = n;
        if (!out->devs || !out->nodes)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                json_object *d = json_object_array_get_idx(list, i), *id, *health, *numa;
                ncm_devmgr_device *dev = &out->devs[i];

                snprintf(path, sizeof(path), "%.400s[%zu]", base, i);
                if ((k = ncm__json_expect(d, json_type_object, path, err)) < 0)
                        return k;
                id = ncm__json_get(d, "id");
                snprintf(path, sizeof(path), "%.400s[%zu].id", base, i);
                if (!id)
                        return ncm_error_set(err, EINVAL, "%s: required", path);
                if ((k = ncm__json_expect(id, json_type_string, path, err)) < 0)
                        return k;
                dev->id = json_object_get_string(id);
                /* A device without "health" is healthy: what a plugin reports for a device it
                 * does not check. */
                dev->health = NCM_DEVMGR_HEALTHY;
                health = ncm__json_get(d, "health");
                snprintf(path, sizeof(path), "%.400s[%zu].health", base, i);
                if (health) {
                        if ((k = ncm__json_expect(health, json_type_string, path, err)) < 0)
                                return k;
                        dev->health = json_object_get_string(health);
                }
                /* "numa" absent or null: no TopologyInfo; [] a TopologyInfo without nodes. */
                numa = ncm__json_get(d, "numa");
                if (!numa)
                        continue;
                snprintf(path, sizeof(path), "%.400s[%zu].numa", base, i);
                if ((k = ncm__json_expect(numa, json_type_array, path, err)) < 0)
                        return k;
                dev->topology = true;
                dev->numa = out->nodes + used;
                dev->n_numa = json_object_array_length(numa);
                for (size_t j = 0; j < dev->n_numa; j++) {
                        snprintf(path, sizeof(path), "%.400s[%zu].numa[%zu]", base, i, j);
                        k = ncm__json_int(json_object_array_get_idx(numa, j), path, INT64_MIN,
                                          INT64_MAX, &out->nodes[used++], err);
                        if (k < 0)
                                return k;
                }
        }
        /* Refuse a duplicate here, before anything is applied. */
        {
                ncm_devmgr_device *sorted = calloc(n ? n : 1, sizeof(*sorted));
                if (!sorted)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                memcpy(sorted, out->devs, n * sizeof(*sorted));
                qsort(sorted, n, sizeof(*sorted), cmp_dev);
                for (size_t i = 1; i < n; i++)
                        if (strcmp(sorted[i - 1].id, sorted[i].id) == 0) {
                                k = ncm_error_set(err, EINVAL, "%s: duplicate device ID \"%s\"",
                                                  base, sorted[i].id);
                                free(sorted);
                                return k;
                        }
                free(sorted);
        }
        return 0;
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

int ncm_devmgr_apply_devices_json(ncm_devmgr *m, const char *text, size_t len, const char *name,
                                  ncm_error *err)
{
        ncm_autojson root = NULL;
        res_devices *v = NULL;
        size_t n = 0, i = 0;
        char base[600];
        int k;

        if (!name)
                name = "devices";
        /* json-c's tokener wants more input after a bare top-level literal. */
        {
                size_t a = 0, z = len;
                while (a < z && is_space(text[a]))
                        a++;
                while (z > a && is_space(text[z - 1]))
                        z--;
                if (z - a == 4 && memcmp(text + a, "null", 4) == 0)
                        return 0;
        }
        if ((k = ncm__json_parse(text, len, name, &root, err)) < 0)
                return k;
        if (json_object_is_type(root, json_type_null))
                return 0;
        if ((k = ncm__json_expect(root, json_type_object, name, err)) < 0)
                return k;
        n = (size_t)json_object_object_length(root);
        v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return ncm_error_set(err, ENOMEM, "out of memory");
        json_object_object_foreach(root, key, list)
        {
                snprintf(base, sizeof(base), "%.100s: %.400s", name, key);
                v[i].name = key;
                if ((k = ncm_devmgr_validate_resource_name(key, err)) < 0) {
                        ncm_error_prefix(err, "%.100s", name);
                        goto out;
                }
                k = parse_list(list, base, &v[i], err);
                i++;
                if (k < 0)
                        goto out;
        }
        qsort(v, n, sizeof(*v), cmp_res);
        for (i = 0; i < n; i++) {
                uint64_t ep = 0;
                k = ncm_devmgr_plugin_connect(m, v[i].name, &ncm_devmgr_standin_ops, NULL,
                                              &ncm_devmgr_standin_options, &ep, err);
                if (k >= 0)
                        k = ncm_devmgr_update_devices(m, v[i].name, ep, v[i].devs, v[i].n, err);
                if (k < 0)
                        goto out;
        }
        k = 0;
out:
        res_devices_done(v, n);
        return k;
}

void ncm_devmgr_container_devices_json(const ncm_devmgr *m, const char *pod_uid,
                                       const char *container, ncm_buf *out)
{
        bool first = true;
        ncm_buf_putc(out, '{');
        for (size_t i = 0; i < m->st.n_entries; i++) {
                const dm_entry *e = &m->st.entries[i];
                if (strcmp(e->pod, pod_uid) != 0 || strcmp(e->container, container) != 0)
                        continue;
                if (!first)
                        ncm_buf_putc(out, ',');
                first = false;
                ncm_buf_json_string(out, e->resource, strlen(e->resource));
                ncm_buf_puts(out, ":[");
                for (size_t k = 0; k < e->devices.n; k++) {
                        if (k)
                                ncm_buf_putc(out, ',');
                        ncm_buf_json_string(out, e->devices.v[k], strlen(e->devices.v[k]));
                }
                ncm_buf_putc(out, ']');
        }
        ncm_buf_putc(out, '}');
}
