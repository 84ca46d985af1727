/* SPDX-License-Identifier: Apache-2.0 */
/* The `nodecm merge` document: reading it, building its policy, writing the result. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "tm-request.h"

ncm_tm_request *ncm_tm_request_free(ncm_tm_request *r)
{
        if (!r)
                return NULL;
        free(r->policy);
        for (size_t i = 0; i < r->n_options; i++) {
                free((char *)r->options[i].key);
                free((char *)r->options[i].value);
        }
        free(r->options);
        free(r->numa);
        free(r->distances);
        for (size_t i = 0; i < r->n_providers; i++)
                ncm_tm_hints_done(&r->providers[i]);
        free(r->providers);
        ncm_tm_policy_free(r->built);
        free(r);
        return NULL;
}

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* Node ids of a JSON array at PATH into IDS (at most 64, each 0..63). */
static int parse_ids(json_object *a, const char *path, int *ids, size_t *ret_n, ncm_error *err)
{
        size_t n;
        int r = ncm__json_expect(a, json_type_array, path, err);
        if (r < 0)
                return r;
        n = json_object_array_length(a);
        for (size_t i = 0; i < n; i++) {
                char p[256];
                int64_t v;
                snprintf(p, sizeof(p), "%s[%zu]", path, i);
                r = ncm__json_int(json_object_array_get_idx(a, i), p, INT64_MIN, INT64_MAX, &v,
                                  err);
                if (r < 0)
                        return r;
                if (v < 0 || v > 63)
                        return ncm_error_set(err, EINVAL, "%s: bit number must be in range 0-63",
                                             p);
                if (i >= NCM_BITMASK_MAX_BITS)
                        return ncm_error_set(err, EINVAL, "%s: more than 64 NUMA nodes", path);
                ids[i] = (int)v;
        }
        *ret_n = n;
        return 0;
}

static int parse_hint(json_object *o, const char *path, ncm_hint *ret, ncm_error *err)
{
        ncm_hint h = {0};
        int r = ncm__json_expect(o, json_type_object, path, err);
        if (r < 0)
                return r;
        json_object_object_foreach(o, key, val)
        {
                char p[320];
                snprintf(p, sizeof(p), "%s.%s", path, key);
                if (strcmp(key, "numa") == 0) {
                        int ids[NCM_BITMASK_MAX_BITS];
                        size_t n;
                        if (!val) {
                                h.any = true;
                                continue;
                        }
                        r = parse_ids(val, p, ids, &n, err);
                        if (r < 0)
                                return r;
                        r = ncm_bitmask_from_bits(ids, n, &h.numa, err);
                        if (r < 0)
                                return r;
                } else if (strcmp(key, "preferred") == 0) {
                        r = ncm__json_expect(val, json_type_boolean, p, err);
                        if (r < 0)
                                return r;
                        h.preferred = json_object_get_boolean(val);
                } else {
                        return ncm_error_set(err, EINVAL, "%s: unknown field", p);
                }
        }
        /* Go's json leaves a missing NUMANodeAffinity nil. */
        if (!json_object_object_get_ex(o, "numa", NULL))
                h.any = true;
        *ret = h;
        return 0;
}

static int parse_provider(json_object *o, const char *path, ncm_tm_hints *ret, ncm_error *err)
{
        int r;

        if (!o)
                return 0; /* null: no preference */
        r = ncm__json_expect(o, json_type_object, path, err);
        if (r < 0)
                return r;
        json_object_object_foreach(o, resource, list)
        {
                char p[256];
                ncm_hint_list *hl;
                size_t n;

                snprintf(p, sizeof(p), "%s.%s", path, resource);
                r = ncm_tm_hints_add(ret, resource, NULL, 0, list == NULL, &hl, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s", p);
                if (!list)
                        continue;
                r = ncm__json_expect(list, json_type_array, p, err);
                if (r < 0)
                        return r;
                n = json_object_array_length(list);
                for (size_t i = 0; i < n; i++) {
                        char hp[300];
                        ncm_hint h;
                        snprintf(hp, sizeof(hp), "%s[%zu]", p, i);
                        r = parse_hint(json_object_array_get_idx(list, i), hp, &h, err);
                        if (r < 0)
                                return r;
                        if (ncm_hint_list_append(hl, h) < 0)
                                return oom(err);
                }
        }
        return 0;
}

static int parse_distances(json_object *o, ncm_tm_request *req, ncm_error *err)
{
        size_t n = req->n_numa;
        int r = ncm__json_expect(o, json_type_object, "distances", err);
        if (r < 0)
                return r;
        req->distances = calloc(n ? n * n : 1, sizeof(uint64_t));
        if (!req->distances)
                return oom(err);
        json_object_object_foreach(o, key, row)
        {
                char p[256], canon[16];
                size_t at = SIZE_MAX;
                snprintf(p, sizeof(p), "distances.%s", key);
                for (size_t i = 0; i < n; i++) {
                        snprintf(canon, sizeof(canon), "%d", req->numa[i]);
                        if (strcmp(canon, key) == 0)
                                at = i;
                }
                if (at == SIZE_MAX)
                        return ncm_error_set(err, EINVAL, "%s: not a NUMA node listed in numa", p);
                r = ncm__json_expect(row, json_type_array, p, err);
                if (r < 0)
                        return r;
                if (json_object_array_length(row) != n)
                        return ncm_error_set(err, EINVAL,
                                             "%s: expected %zu distances (one per NUMA node, in "
                                             "the order of numa), got %zu",
                                             p, n, json_object_array_length(row));
                for (size_t j = 0; j < n; j++) {
                        char ep[300];
                        int64_t v;
                        snprintf(ep, sizeof(ep), "%s[%zu]", p, j);
                        r = ncm__json_int(json_object_array_get_idx(row, j), ep, 0, INT64_MAX, &v,
                                          err);
                        if (r < 0)
                                return r;
                        req->distances[at * n + j] = (uint64_t)v;
                }
        }
        for (size_t i = 0; i < n; i++) {
                char canon[16];
                snprintf(canon, sizeof(canon), "%d", req->numa[i]);
                if (!json_object_object_get_ex(o, canon, NULL))
                        return ncm_error_set(err, EINVAL, "distances: no entry for NUMA node %d",
                                             req->numa[i]);
        }
        return 0;
}

int ncm__tm_request_from_json(json_object *o, ncm_tm_request **ret, ncm_error *err)
{
        ncm_autoptr(ncm_tm_request) req = NULL;
        json_object *v;
        int ids[NCM_BITMASK_MAX_BITS];
        int r;

        r = ncm__json_expect(o, json_type_object, "document", err);
        if (r < 0)
                return r;
        req = calloc(1, sizeof(*req));
        if (!req)
                return oom(err);
        json_object_object_foreach(o, key, val)
        {
                (void)val;
                if (strcmp(key, "policy") != 0 && strcmp(key, "options") != 0 &&
                    strcmp(key, "numa") != 0 && strcmp(key, "distances") != 0 &&
                    strcmp(key, "providers") != 0)
                        return ncm_error_set(err, EINVAL, "%s: unknown field", key);
        }

        v = ncm__json_get(o, "policy");
        if (!v)
                return ncm_error_set(err, EINVAL, "policy: missing");
        r = ncm__json_expect(v, json_type_string, "policy", err);
        if (r < 0)
                return r;
        req->policy = strdup(json_object_get_string(v));
        if (!req->policy)
                return oom(err);

        v = ncm__json_get(o, "options");
        if (v) {
                size_t k = 0;
                r = ncm__json_expect(v, json_type_object, "options", err);
                if (r < 0)
                        return r;
                req->options = calloc((size_t)json_object_object_length(v) + 1,
                                      sizeof(*req->options));
                if (!req->options)
                        return oom(err);
                json_object_object_foreach(v, okey, oval)
                {
                        char p[256];
                        snprintf(p, sizeof(p), "options.%s", okey);
                        r = ncm__json_expect(oval, json_type_string, p, err);
                        if (r < 0)
                                return r;
                        req->options[k].key = strdup(okey);
                        req->options[k].value = strdup(json_object_get_string(oval));
                        req->n_options = ++k;
                        if (!req->options[k - 1].key || !req->options[k - 1].value)
                                return oom(err);
                }
        }

        v = ncm__json_get(o, "numa");
        if (!v)
                return ncm_error_set(err, EINVAL, "numa: missing");
        r = parse_ids(v, "numa", ids, &req->n_numa, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < req->n_numa; i++)
                for (size_t j = 0; j < i; j++)
                        if (ids[i] == ids[j])
                                return ncm_error_set(err, EINVAL,
                                                     "numa[%zu]: NUMA node %d listed twice", i,
                                                     ids[i]);
        req->numa = malloc((req->n_numa ? req->n_numa : 1) * sizeof(int));
        if (!req->numa)
                return oom(err);
        memcpy(req->numa, ids, req->n_numa * sizeof(int));

        v = ncm__json_get(o, "distances");
        if (v) {
                r = parse_distances(v, req, err);
                if (r < 0)
                        return r;
        }

        v = ncm__json_get(o, "providers");
        if (v) {
                r = ncm__json_expect(v, json_type_array, "providers", err);
                if (r < 0)
                        return r;
                req->n_providers = json_object_array_length(v);
                req->providers = calloc(req->n_providers + 1, sizeof(*req->providers));
                if (!req->providers)
                        return oom(err);
                for (size_t i = 0; i < req->n_providers; i++) {
                        char p[64];
                        snprintf(p, sizeof(p), "providers[%zu]", i);
                        r = parse_provider(json_object_array_get_idx(v, i), p, &req->providers[i],
                                           err);
                        if (r < 0)
                                return r;
                }
        }
        *ret = NCM_TAKE_PTR(req);
        return 0;
}

int ncm__tm_request_policy(const ncm_tm_request *r, ncm_tm_gates gates, ncm_tm_policy **ret,
                           ncm_error *err)
{
        ncm_tm_options opts = NCM_TM_OPTIONS_DEFAULT;
        int k;

        /* kubelet parses options only for a policy other than none. */
        if (strcmp(r->policy, NCM_TM_POLICY_NONE) != 0) {
                k = ncm_tm_options_parse(r->options, r->n_options, gates, &opts, err);
                if (k < 0)
                        return ncm_error_prefix(err, "options");
        }
        k = ncm_tm_policy_new(r->policy, &opts, r->numa, r->n_numa, r->distances, ret, err);
        if (k < 0) {
                if (strncmp(err ? err->msg : "", "unknown policy", 14) == 0)
                        return ncm_error_prefix(err, "policy");
                if (strncmp(err ? err->msg : "", "cannot discover", 15) == 0)
                        return ncm_error_prefix(err, "distances");
                return ncm_error_prefix(err, "numa");
        }
        return 0;
}

void ncm_tm_result_format_json(const ncm_hint *hint, bool admit, ncm_buf *b)
{
        ncm_buf_puts(b, "{\"numa\": ");
        if (hint->any) {
                ncm_buf_puts(b, "null");
        } else {
                int bits[NCM_BITMASK_MAX_BITS];
                int n = ncm_bitmask_to_bits(hint->numa, bits);
                ncm_buf_putc(b, '[');
                for (int i = 0; i < n; i++)
                        ncm_buf_printf(b, "%s%d", i ? ", " : "", bits[i]);
                ncm_buf_putc(b, ']');
        }
        ncm_buf_printf(b, ", \"preferred\": %s, \"admit\": %s}", hint->preferred ? "true" : "false",
                       admit ? "true" : "false");
}

int ncm_tm_request_load(const char *path, ncm_tm_gates gates, ncm_tm_request **ret, ncm_error *err)
{
        ncm_autoptr(ncm_tm_request) req = NULL;
        ncm_autojson doc = NULL;
        int r;

        r = ncm__json_load_file(path, &doc, err);
        if (r < 0)
                return r;
        r = ncm__tm_request_from_json(doc, &req, err);
        if (r >= 0)
                r = ncm__tm_request_policy(req, gates, &req->built, err);
        if (r < 0) {
                /* Bad input is bad input, even where the policy used a "cannot be met" code. */
                ncm_error_prefix(err, "%s", strcmp(path, "-") == 0 ? "<stdin>" : path);
                if (err && err->code != ENOMEM)
                        err->code = EINVAL;
                return r == -ENOMEM ? r : -EINVAL;
        }
        *ret = NCM_TAKE_PTR(req);
        return 0;
}

int ncm_tm_request_merge(const ncm_tm_request *r, ncm_tm_merge_mode mode, ncm_hint *ret_hint,
                         bool *ret_admit, ncm_error *err)
{
        if (!r->built)
                return ncm_error_set(err, EINVAL, "merge request without a policy");
        return ncm_tm_policy_merge(r->built, r->providers, r->n_providers, mode, ret_hint,
                                   ret_admit, err);
}
