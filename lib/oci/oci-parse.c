/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The two documents a hook reads: the container state on standard input and the bundle's
 * config.json. Both come from the runtime, which may be any runtime at any version, so only the
 * fields nodecm uses are read, and each is type-checked with an error that names it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/oci.h>
#include "base/json.h"
#include "oci-internal.h"

#define STATE_MAX (1u << 20)
#define CONFIG_MAX (16u << 20)

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

void ncm__oci_kv_free(ncm_runtime_kv *kv, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free((char *)kv[i].key);
                free((char *)kv[i].value);
        }
        free(kv);
}

/* An optional string member KEY of O into *RET (NULL when absent). */
static int opt_string(json_object *o, const char *key, const char *path, char **ret, ncm_error *err)
{
        json_object *v = ncm__json_get(o, key);
        char *s;

        *ret = NULL;
        if (!v)
                return 0;
        if (ncm__json_expect(v, json_type_string, path, err) < 0)
                return -EINVAL;
        /* a NUL would cut the string here, and a container id or pod UID with it */
        if (strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
                return ncm_error_set(err, EINVAL, "%s: a NUL byte in a string", path);
        s = strdup(json_object_get_string(v));
        if (!s)
                return oom(err);
        *ret = s;
        return 0;
}

/* An object of strings (annotations), sorted by key so that lookups see one order. */
static int kv_object(json_object *o, const char *path, ncm_runtime_kv **ret, size_t *ret_n,
                     ncm_error *err)
{
        ncm_runtime_kv *v = NULL;
        size_t n = 0, cap;

        *ret = NULL;
        *ret_n = 0;
        if (!o)
                return 0;
        if (ncm__json_expect(o, json_type_object, path, err) < 0)
                return -EINVAL;
        cap = (size_t)json_object_object_length(o);
        v = calloc(cap + 1, sizeof(*v));
        if (!v)
                return oom(err);
        json_object_object_foreach(o, key, val)
        {
                if (!val || !json_object_is_type(val, json_type_string)) {
                        ncm__oci_kv_free(v, n);
                        return ncm_error_set(err, EINVAL, "%s.%s: expected string, got %s", path,
                                             key, ncm__json_type_name(val));
                }
                if (strlen(json_object_get_string(val)) !=
                    (size_t)json_object_get_string_len(val)) {
                        ncm__oci_kv_free(v, n);
                        return ncm_error_set(err, EINVAL, "%s.%s: a NUL byte in a string", path,
                                             key);
                }
                v[n].key = strdup(key);
                v[n].value = strdup(json_object_get_string(val));
                n++;
                if (!v[n - 1].key || !v[n - 1].value) {
                        ncm__oci_kv_free(v, n);
                        return oom(err);
                }
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

void ncm_oci_state_done(ncm_oci_state *s)
{
        if (!s)
                return;
        free(s->oci_version);
        free(s->id);
        free(s->status);
        free(s->bundle);
        ncm__oci_kv_free(s->annotations, s->n_annotations);
        *s = (ncm_oci_state){0};
}

int ncm_oci_state_parse(const char *text, size_t len, ncm_oci_state *ret, ncm_error *err)
{
        ncm_autojson root = NULL;
        ncm_oci_state s = {0};
        json_object *v;
        int r;

        if (len > STATE_MAX)
                return ncm_error_set(err, EFBIG, "state: larger than %u bytes", STATE_MAX);
        r = ncm__json_parse(text, len, "state", &root, err);
        if (r < 0)
                return r;
        if (ncm__json_expect(root, json_type_object, "state", err) < 0)
                return -EINVAL;
        if ((r = opt_string(root, "ociVersion", "state: ociVersion", &s.oci_version, err)) < 0 ||
            (r = opt_string(root, "id", "state: id", &s.id, err)) < 0 ||
            (r = opt_string(root, "status", "state: status", &s.status, err)) < 0 ||
            (r = opt_string(root, "bundle", "state: bundle", &s.bundle, err)) < 0)
                goto fail;
        if (!s.id || !*s.id) {
                r = ncm_error_set(err, EINVAL, "state: id: missing");
                goto fail;
        }
        if (!s.status) {
                r = ncm_error_set(err, EINVAL, "state: status: missing");
                goto fail;
        }
        v = ncm__json_get(root, "pid");
        if (v) {
                int64_t pid;
                r = ncm__json_int(v, "state: pid", 0, INT32_MAX, &pid, err);
                if (r < 0)
                        goto fail;
                s.pid = (int)pid;
        }
        r = kv_object(ncm__json_get(root, "annotations"), "state: annotations", &s.annotations,
                      &s.n_annotations, err);
        if (r < 0)
                goto fail;
        *ret = s;
        return 0;
fail:
        ncm_oci_state_done(&s);
        return r;
}

void ncm_oci_config_done(ncm_oci_config *c)
{
        if (!c)
                return;
        ncm__oci_kv_free(c->annotations, c->n_annotations);
        free(c->cgroups_path);
        *c = (ncm_oci_config){0};
}

/* An optional integer member KEY of O in [MIN, MAX] into *RET (unchanged when absent). */
static int opt_int(json_object *o, const char *key, const char *name, const char *path, int64_t min,
                   int64_t max, int64_t *ret, ncm_error *err)
{
        char p[256];
        json_object *v = ncm__json_get(o, key);

        if (!v)
                return 0;
        snprintf(p, sizeof(p), "%s: %s.%s", name, path, key);
        return ncm__json_int(v, p, min, max, ret, err);
}

static int parse_resources(json_object *res, const char *name, ncm_runtime_resources *out,
                           ncm_error *err)
{
        char p[256];
        json_object *cpu, *mem, *huge;
        int r;

        snprintf(p, sizeof(p), "%s: linux.resources", name);
        if (ncm__json_expect(res, json_type_object, p, err) < 0)
                return -EINVAL;
        cpu = ncm__json_get(res, "cpu");
        if (cpu) {
                snprintf(p, sizeof(p), "%s: linux.resources.cpu", name);
                if (ncm__json_expect(cpu, json_type_object, p, err) < 0)
                        return -EINVAL;
                /* shares and period are uint64 in the spec; above int64 nothing is sane */
                if ((r = opt_int(cpu, "shares", name, "linux.resources.cpu", 0, INT64_MAX,
                                 &out->cpu_shares, err)) < 0 ||
                    (r = opt_int(cpu, "quota", name, "linux.resources.cpu", -1, INT64_MAX,
                                 &out->cpu_quota, err)) < 0 ||
                    (r = opt_int(cpu, "period", name, "linux.resources.cpu", 0, INT64_MAX,
                                 &out->cpu_period, err)) < 0)
                        return r;
        }
        mem = ncm__json_get(res, "memory");
        if (mem) {
                snprintf(p, sizeof(p), "%s: linux.resources.memory", name);
                if (ncm__json_expect(mem, json_type_object, p, err) < 0)
                        return -EINVAL;
                r = opt_int(mem, "limit", name, "linux.resources.memory", INT64_MIN, INT64_MAX,
                            &out->memory_limit, err);
                if (r < 0)
                        return r;
                if (out->memory_limit < 0)
                        out->memory_limit = 0;
        }
        huge = ncm__json_get(res, "hugepageLimits");
        if (huge) {
                size_t n;
                snprintf(p, sizeof(p), "%s: linux.resources.hugepageLimits", name);
                if (ncm__json_expect(huge, json_type_array, p, err) < 0)
                        return -EINVAL;
                n = json_object_array_length(huge);
                for (size_t i = 0; i < n; i++) {
                        json_object *h = json_object_array_get_idx(huge, i);
                        json_object *ps;
                        int64_t size = 0, limit = 0;
                        snprintf(p, sizeof(p), "%s: linux.resources.hugepageLimits[%zu]", name, i);
                        if (ncm__json_expect(h, json_type_object, p, err) < 0)
                                return -EINVAL;
                        ps = ncm__json_get(h, "pageSize");
                        if (!ps || !json_object_is_type(ps, json_type_string) ||
                            ncm_runtime_parse_page_size(json_object_get_string(ps), &size) < 0)
                                return ncm_error_set(
                                                err, EINVAL,
                                                "%s.pageSize: expected a size like "
                                                "\"2MB\", got %s",
                                                p, ps ? json_object_to_json_string(ps) : "nothing");
                        r = opt_int(h, "limit", name, p + strlen(name) + 2, 0, INT64_MAX, &limit,
                                    err);
                        if (r < 0)
                                return r;
                        if (limit == 0)
                                continue;
                        if (out->n_hugepages == NCM_RUNTIME_MAX_HUGEPAGES)
                                return ncm_error_set(err, EINVAL, "%s: more than %d hugepage sizes",
                                                     p, NCM_RUNTIME_MAX_HUGEPAGES);
                        out->hugepages[out->n_hugepages].page_size = size;
                        out->hugepages[out->n_hugepages++].limit = limit;
                }
        }
        return 0;
}

int ncm_oci_config_parse(const char *text, size_t len, const char *name, ncm_oci_config *ret,
                         ncm_error *err)
{
        ncm_autojson root = NULL;
        ncm_oci_config c = {0};
        json_object *linux_, *res;
        char p[256];
        int r;

        if (!name)
                name = "config.json";
        if (len > CONFIG_MAX)
                return ncm_error_set(err, EFBIG, "%s: larger than %u bytes", name, CONFIG_MAX);
        r = ncm__json_parse(text, len, name, &root, err);
        if (r < 0)
                return r;
        if (ncm__json_expect(root, json_type_object, name, err) < 0)
                return -EINVAL;
        snprintf(p, sizeof(p), "%s: annotations", name);
        r = kv_object(ncm__json_get(root, "annotations"), p, &c.annotations, &c.n_annotations, err);
        if (r < 0)
                return r;
        linux_ = ncm__json_get(root, "linux");
        if (linux_) {
                snprintf(p, sizeof(p), "%s: linux", name);
                r = ncm__json_expect(linux_, json_type_object, p, err) < 0 ? -EINVAL : 0;
                if (r >= 0) {
                        snprintf(p, sizeof(p), "%s: linux.cgroupsPath", name);
                        r = opt_string(linux_, "cgroupsPath", p, &c.cgroups_path, err);
                }
                res = r >= 0 ? ncm__json_get(linux_, "resources") : NULL;
                if (res)
                        r = parse_resources(res, name, &c.resources, err);
                if (r < 0) {
                        ncm_oci_config_done(&c);
                        return r;
                }
        }
        *ret = c;
        return 0;
}
