/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod annotations nodecm acts on (docs/isolation.md). Only those are kept, checked against
 * their words, so that a typo in a value is an error naming it rather than a feature silently
 * left on; every other annotation is read past, whatever it holds, as the managers ignore them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/json.h"
#include "pod/pod-internal.h"

static const struct {
        const char *key;
        const char *const words[4];
} known[] = {
                {NCM_POD_ANNOTATION_CPU_LOAD_BALANCING, {"disable", "enable", "true", NULL}},
                {NCM_POD_ANNOTATION_CPU_QUOTA, {"disable", "enable", "true", NULL}},
                {NCM_POD_ANNOTATION_IRQ_LOAD_BALANCING, {"disable", "enable", "true", NULL}},
                {NCM_POD_ANNOTATION_ISOLATED_CPUS, {"prefer", "require", NULL, NULL}},
};

static int find_known(const char *key)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(known); i++)
                if (strcmp(key, known[i].key) == 0)
                        return (int)i;
        return -1;
}

bool ncm_pod_annotation_known(const char *key)
{
        return key && find_known(key) >= 0;
}

/* VALUE is one of KEY's words; else -EINVAL naming PATH's annotation and the words. */
static int check(int k, const char *path, const char *value, ncm_error *err)
{
        char words[96] = "";

        for (size_t i = 0; known[k].words[i]; i++) {
                if (strcmp(value, known[k].words[i]) == 0)
                        return 0;
                /* "true" is CRI-O's older spelling of "disable": accepted, not advertised */
                if (strcmp(known[k].words[i], "true") == 0)
                        continue;
                strcat(words, i ? " or \"" : "\"");
                strcat(words, known[k].words[i]);
                strcat(words, "\"");
        }
        return ncm_error_set(err, EINVAL, "%s%sannotations[\"%s\"]: \"%.64s\": expected %s", path,
                             *path ? "." : "", known[k].key, value, words);
}

static int cmp_key(const void *a, const void *b)
{
        return strcmp(((const ncm_pod_annotation *)a)->key, ((const ncm_pod_annotation *)b)->key);
}

const char *ncm_pod_get_annotation(const ncm_pod *pod, const char *key)
{
        for (size_t i = 0; i < pod->n_annotations; i++)
                if (strcmp(pod->annotations[i].key, key) == 0)
                        return pod->annotations[i].value;
        return NULL;
}

static int put(ncm_pod *pod, const char *key, const char *value, ncm_error *err)
{
        char *v = strdup(value);
        size_t cap = pod->n_annotations;

        if (!v)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < pod->n_annotations; i++)
                if (strcmp(pod->annotations[i].key, key) == 0) {
                        free(pod->annotations[i].value);
                        pod->annotations[i].value = v;
                        return 0;
                }
        if (ncm__array_grow(pod->annotations, cap, pod->n_annotations) < 0 ||
            !(pod->annotations[pod->n_annotations].key = strdup(key))) {
                free(v);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        pod->annotations[pod->n_annotations++].value = v;
        qsort(pod->annotations, pod->n_annotations, sizeof(*pod->annotations), cmp_key);
        return 0;
}

int ncm_pod_set_annotation(ncm_pod *pod, const char *key, const char *value, ncm_error *err)
{
        int k = key ? find_known(key) : -1;
        int r;

        if (k < 0)
                return ncm_error_set(err, EINVAL, "annotation \"%s\": not one nodecm reads",
                                     key ? key : "");
        r = check(k, "metadata", value ? value : "", err);
        return r < 0 ? r : put(pod, key, value, err);
}

int ncm__pod_read_annotations(json_object *meta, const char *meta_path, ncm_pod *pod,
                              ncm_error *err)
{
        json_object *a = meta ? ncm__json_get(meta, "annotations") : NULL;
        char path[512];
        int r;

        if (!a)
                return 0;
        snprintf(path, sizeof(path), "%s%sannotations", meta_path, *meta_path ? "." : "");
        if ((r = ncm__json_expect(a, json_type_object, path, err)) < 0)
                return r;
        json_object_object_foreach(a, key, val)
        {
                int k = find_known(key);
                char vp[600];
                if (k < 0)
                        continue;
                snprintf(vp, sizeof(vp), "%s[\"%s\"]", path, key);
                if ((r = ncm__json_expect(val, json_type_string, vp, err)) < 0 ||
                    (r = check(k, meta_path, json_object_get_string(val), err)) < 0 ||
                    (r = put(pod, key, json_object_get_string(val), err)) < 0)
                        return r;
        }
        return 0;
}

void ncm__pod_annotations_free(ncm_pod_annotation *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].key);
                free(v[i].value);
        }
        free(v);
}

int ncm__pod_annotations_copy(const ncm_pod *src, ncm_pod *dst)
{
        dst->annotations = NULL;
        dst->n_annotations = 0;
        for (size_t i = 0; i < src->n_annotations; i++)
                if (put(dst, src->annotations[i].key, src->annotations[i].value, NULL) < 0)
                        return -ENOMEM;
        return 0;
}

void ncm__pod_annotations_format(const ncm_pod *pod, ncm_buf *b)
{
        ncm_buf inner = NCM_BUF_INIT;
        bool first = true;

        for (size_t i = 0; i < pod->n_annotations; i++) {
                ncm_buf_puts(&inner, first ? "" : ", ");
                first = false;
                ncm_buf_json_string(&inner, pod->annotations[i].key,
                                    strlen(pod->annotations[i].key));
                ncm_buf_puts(&inner, ": ");
                ncm_buf_json_string(&inner, pod->annotations[i].value,
                                    strlen(pod->annotations[i].value));
        }
        /* the CDI devices live in the containers, not in this list, but share the object */
        ncm__pod_put_cdi(pod, &first, &inner);
        if (ncm_buf_failed(&inner)) {
                b->oom = true;
        } else if (!first) {
                ncm_buf_puts(b, ", \"annotations\": {");
                ncm_buf_append(b, inner.data, inner.len);
                ncm_buf_putc(b, '}');
        }
        ncm_buf_done(&inner);
}
