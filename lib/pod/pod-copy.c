/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A pod copied, and written back as a Pod object that ncm_pod_parse() reads into the same
 * model (for the node's record of the pods it admitted).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/pod.h>
#include "pod/pod-internal.h"

static int list_copy(ncm_resource_list *dst, const ncm_resource_list *src)
{
        *dst = (ncm_resource_list){NULL, 0};
        if (src->n == 0)
                return 0;
        dst->items = calloc(src->n, sizeof(*dst->items));
        if (!dst->items)
                return -ENOMEM;
        for (size_t i = 0; i < src->n; i++) {
                dst->items[i].name = strdup(src->items[i].name);
                dst->items[i].quantity = src->items[i].quantity;
                dst->n = i + 1;
                if (!dst->items[i].name)
                        return -ENOMEM;
        }
        return 0;
}

static int containers_copy(ncm_container **dst, const ncm_container *src, size_t n)
{
        ncm_container *v = calloc(n + 1, sizeof(*v));

        *dst = v;
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                v[i] = src[i];
                v[i].name = NULL;
                v[i].resources = (ncm_resources){{NULL, 0}, {NULL, 0}};
                v[i].cdi_devices = NULL;
                v[i].n_cdi_devices = 0;
        }
        for (size_t i = 0; i < n; i++) {
                v[i].name = strdup(src[i].name);
                if (!v[i].name || list_copy(&v[i].resources.requests, &src[i].resources.requests) ||
                    list_copy(&v[i].resources.limits, &src[i].resources.limits) ||
                    ncm__container_cdi_copy(&v[i], &src[i]) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static void containers_free(ncm_container *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++) {
                free(v[i].name);
                ncm_resource_list_done(&v[i].resources.requests);
                ncm_resource_list_done(&v[i].resources.limits);
                ncm__container_cdi_free(&v[i]);
        }
        free(v);
}

ncm_pod *ncm_pod_dup(const ncm_pod *src)
{
        ncm_pod *p = calloc(1, sizeof(*p));
        int r;

        if (!p)
                return NULL;
        *p = *src;
        p->uid = strdup(src->uid);
        p->name = strdup(src->name ? src->name : "");
        p->ns = strdup(src->ns ? src->ns : "default");
        p->init_containers = p->containers = NULL;
        p->resources = (ncm_resources){{NULL, 0}, {NULL, 0}};
        p->overhead = (ncm_resource_list){NULL, 0};
        r = (!p->uid || !p->name || !p->ns) ? -ENOMEM : 0;
        if (r >= 0)
                r = containers_copy(&p->init_containers, src->init_containers,
                                    src->n_init_containers);
        if (r >= 0)
                r = containers_copy(&p->containers, src->containers, src->n_containers);
        if (r >= 0)
                r = list_copy(&p->resources.requests, &src->resources.requests);
        if (r >= 0)
                r = list_copy(&p->resources.limits, &src->resources.limits);
        if (r >= 0)
                r = list_copy(&p->overhead, &src->overhead);
        if (r >= 0)
                r = ncm__pod_annotations_copy(src, p);
        else
                p->annotations = NULL, p->n_annotations = 0;
        if (r < 0) {
                /* the copies made so far; the counts are the source's */
                free(p->uid);
                free(p->name);
                free(p->ns);
                containers_free(p->init_containers,
                                p->init_containers ? src->n_init_containers : 0);
                containers_free(p->containers, p->containers ? src->n_containers : 0);
                ncm_resource_list_done(&p->resources.requests);
                ncm_resource_list_done(&p->resources.limits);
                ncm_resource_list_done(&p->overhead);
                ncm__pod_annotations_free(p->annotations, p->n_annotations);
                free(p);
                return NULL;
        }
        return p;
}

static void put_str(ncm_buf *b, const char *s)
{
        ncm_buf_json_string(b, s, strlen(s));
}

static void put_list(ncm_buf *b, const ncm_resource_list *l)
{
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < l->n; i++) {
                char q[NCM_QUANTITY_STRLEN];
                ncm_buf_puts(b, i ? ", " : "");
                put_str(b, l->items[i].name);
                ncm_buf_puts(b, ": ");
                put_str(b, ncm_quantity_to_string(&l->items[i].quantity, q));
        }
        ncm_buf_putc(b, '}');
}

static void put_resources(ncm_buf *b, const ncm_resources *r)
{
        ncm_buf_puts(b, "{\"requests\": ");
        put_list(b, &r->requests);
        ncm_buf_puts(b, ", \"limits\": ");
        put_list(b, &r->limits);
        ncm_buf_putc(b, '}');
}

static void put_containers(ncm_buf *b, const ncm_container *v, size_t n)
{
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                ncm_buf_puts(b, i ? ", {\"name\": " : "{\"name\": ");
                put_str(b, v[i].name);
                if (v[i].sidecar)
                        ncm_buf_puts(b, ", \"restartPolicy\": \"Always\"");
                ncm_buf_puts(b, ", \"resources\": ");
                put_resources(b, &v[i].resources);
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, ']');
}

void ncm_pod_format_json(const ncm_pod *pod, ncm_buf *b)
{
        ncm_buf_puts(b, "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"uid\": ");
        put_str(b, pod->uid);
        ncm_buf_puts(b, ", \"name\": ");
        put_str(b, pod->name ? pod->name : "");
        ncm_buf_puts(b, ", \"namespace\": ");
        put_str(b, pod->ns ? pod->ns : "default");
        ncm__pod_annotations_format(pod, b);
        ncm_buf_puts(b, "}, \"spec\": {");
        if (pod->n_init_containers) {
                ncm_buf_puts(b, "\"initContainers\": ");
                put_containers(b, pod->init_containers, pod->n_init_containers);
                ncm_buf_puts(b, ", ");
        }
        ncm_buf_puts(b, "\"containers\": ");
        put_containers(b, pod->containers, pod->n_containers);
        if (pod->has_pod_resources) {
                ncm_buf_puts(b, ", \"resources\": ");
                put_resources(b, &pod->resources);
        }
        if (pod->overhead.n) {
                ncm_buf_puts(b, ", \"overhead\": ");
                put_list(b, &pod->overhead);
        }
        ncm_buf_puts(b, "}}\n");
}
