/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A container's CDI devices in the pod model: read from the NCM_POD_CDI_ANNOTATION of a Pod
 * object, set by a front end that learns them elsewhere (the CRI's CreateContainer), and
 * written back into the annotation so that the node's record of a pod reads back the same.
 * A Pod object carries them in an annotation because its spec does not: the kubelet learns a
 * container's DRA devices from the drivers, after admission (docs/pod.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cdi.h>
#include "base/json.h"
#include "pod/pod-internal.h"

void ncm__container_cdi_free(ncm_container *c)
{
        for (size_t i = 0; i < c->n_cdi_devices; i++)
                free(c->cdi_devices[i]);
        free(c->cdi_devices);
        c->cdi_devices = NULL;
        c->n_cdi_devices = 0;
}

/* A copy of NAMES[0..N) into *RET, every name checked. */
static int copy_names(const char *const *names, size_t n, char ***ret, ncm_error *err)
{
        char **v;

        *ret = NULL;
        if (n == 0)
                return 0;
        if (n > NCM_POD_CDI_MAX)
                return ncm_error_set(err, E2BIG, "%zu CDI devices, more than %d", n,
                                     NCM_POD_CDI_MAX);
        for (size_t i = 0; i < n; i++) {
                int r = ncm_cdi_check_name(names[i], err);
                if (r < 0)
                        return r;
        }
        v = calloc(n, sizeof(*v));
        if (!v)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
                if (!(v[i] = strdup(names[i]))) {
                        for (size_t k = 0; k < i; k++)
                                free(v[k]);
                        free(v);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
        *ret = v;
        return 0;
}

int ncm__container_cdi_copy(ncm_container *dst, const ncm_container *src)
{
        char **v = NULL;
        int r = copy_names((const char *const *)src->cdi_devices, src->n_cdi_devices, &v, NULL);
        if (r < 0)
                return r;
        dst->cdi_devices = v;
        dst->n_cdi_devices = src->n_cdi_devices;
        return 0;
}

/* The pod model is read-only to its users; its own module fills it in. */
static ncm_container *find(ncm_pod *pod, const char *name)
{
        return (ncm_container *)ncm_pod_find_container(pod, name);
}

int ncm_pod_set_cdi_devices(ncm_pod *pod, const char *name, const char *const *names, size_t n,
                            ncm_error *err)
{
        ncm_container *c = find(pod, name);
        char **v = NULL;
        int r;

        if (!c)
                return ncm_error_set(err, ENOENT, "pod %s has no container \"%s\"", pod->uid, name);
        r = copy_names(names, n, &v, err);
        if (r < 0)
                return r;
        ncm__container_cdi_free(c);
        c->cdi_devices = v;
        c->n_cdi_devices = n;
        return 0;
}

int ncm__pod_read_cdi(ncm_pod *pod, json_object *meta, const char *path, ncm_error *err)
{
        json_object *ann = ncm__json_get(meta, "annotations"), *v;
        ncm_autojson obj = NULL;
        char p[512];
        int r;

        snprintf(p, sizeof(p), "%s.annotations", path);
        if (!ann)
                return 0;
        if ((r = ncm__json_expect(ann, json_type_object, p, err)) < 0)
                return r;
        v = ncm__json_get(ann, NCM_POD_CDI_ANNOTATION);
        snprintf(p, sizeof(p), "%s.annotations[%s]", path, NCM_POD_CDI_ANNOTATION);
        if (!v)
                return 0;
        if ((r = ncm__json_expect(v, json_type_string, p, err)) < 0)
                return r;
        r = ncm__json_parse(json_object_get_string(v), (size_t)json_object_get_string_len(v), p,
                            &obj, err);
        if (r < 0)
                return r;
        if ((r = ncm__json_expect(obj, json_type_object, p, err)) < 0)
                return r;
        json_object_object_foreach(obj, cname, list)
        {
                ncm_container *c = find(pod, cname);
                ncm_autofree const char **names = NULL;
                size_t n;

                if (!c)
                        return ncm_error_set(err, EINVAL, "%s: the pod has no container \"%s\"", p,
                                             cname);
                if ((r = ncm__json_expect(list, json_type_array, p, err)) < 0)
                        return ncm_error_prefix(err, "container \"%s\"", cname);
                n = json_object_array_length(list);
                names = calloc(n ? n : 1, sizeof(*names));
                if (!names)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(list, i);
                        if (!json_object_is_type(e, json_type_string) ||
                            strlen(json_object_get_string(e)) !=
                                            (size_t)json_object_get_string_len(e))
                                return ncm_error_set(err, EINVAL,
                                                     "%s: container \"%s\": [%zu]: expected a CDI "
                                                     "device name",
                                                     p, cname, i);
                        names[i] = json_object_get_string(e);
                }
                ncm__container_cdi_free(c);
                r = copy_names(names, n, &c->cdi_devices, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s: container \"%s\"", p, cname);
                c->n_cdi_devices = n;
        }
        return 0;
}

static void put_names(const ncm_container *v, size_t n, bool *first, ncm_buf *b)
{
        for (size_t i = 0; i < n; i++) {
                if (!v[i].n_cdi_devices)
                        continue;
                ncm_buf_puts(b, *first ? "" : ", ");
                *first = false;
                ncm_buf_json_string(b, v[i].name, strlen(v[i].name));
                ncm_buf_puts(b, ": [");
                for (size_t k = 0; k < v[i].n_cdi_devices; k++) {
                        if (k)
                                ncm_buf_puts(b, ", ");
                        ncm_buf_json_string(b, v[i].cdi_devices[k], strlen(v[i].cdi_devices[k]));
                }
                ncm_buf_putc(b, ']');
        }
}

void ncm__pod_put_cdi(const ncm_pod *pod, bool *first, ncm_buf *b)
{
        ncm_buf inner = NCM_BUF_INIT;
        bool none = true;

        ncm_buf_putc(&inner, '{');
        put_names(pod->init_containers, pod->n_init_containers, &none, &inner);
        put_names(pod->containers, pod->n_containers, &none, &inner);
        ncm_buf_putc(&inner, '}');
        if (!none && !ncm_buf_failed(&inner)) {
                ncm_buf_puts(b, *first ? "" : ", ");
                *first = false;
                ncm_buf_json_string(b, NCM_POD_CDI_ANNOTATION, strlen(NCM_POD_CDI_ANNOTATION));
                ncm_buf_puts(b, ": ");
                ncm_buf_json_string(b, inner.data, inner.len);
        } else if (ncm_buf_failed(&inner)) {
                b->oom = true;
        }
        ncm_buf_done(&inner);
}
