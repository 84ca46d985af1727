/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Resource lists (Kubernetes ResourceList) and the pod totals of component-helpers
 * (PodRequests / PodLimits). Go keeps these in maps; here they are arrays sorted by name, so
 * every iteration order is fixed and lookups are binary searches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include "base/json.h"
#include "pod/pod-internal.h"

/* Index of NAME in L, or -(insertion point) - 1. */
static ptrdiff_t find(const ncm_resource_list *l, const char *name)
{
        size_t lo = 0, hi = l->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(l->items[mid].name, name);
                if (c == 0)
                        return (ptrdiff_t)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -(ptrdiff_t)lo - 1;
}

const ncm_quantity *ncm_resource_list_get(const ncm_resource_list *l, const char *name)
{
        ptrdiff_t i = find(l, name);
        return i >= 0 ? &l->items[i].quantity : NULL;
}

const ncm_quantity *ncm_container_request(const ncm_container *c, const char *name)
{
        return ncm_resource_list_get(&c->resources.requests, name);
}

const ncm_quantity *ncm_container_limit(const ncm_container *c, const char *name)
{
        return ncm_resource_list_get(&c->resources.limits, name);
}

void ncm_resource_list_done(ncm_resource_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i].name);
        free(l->items);
        l->items = NULL;
        l->n = 0;
}

int ncm__resource_list_set(ncm_resource_list *l, const char *name, const ncm_quantity *q)
{
        ptrdiff_t i = find(l, name);
        ncm_resource *items;
        size_t at;
        char *copy;

        if (i >= 0) {
                l->items[i].quantity = *q;
                return 0;
        }
        at = (size_t)(-i - 1);
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        /* Lists are short (a handful of resources): grow one entry at a time. */
        items = realloc(l->items, (l->n + 1) * sizeof(*items));
        if (!items) {
                free(copy);
                return -ENOMEM;
        }
        memmove(items + at + 1, items + at, (l->n - at) * sizeof(*items));
        items[at].name = copy;
        items[at].quantity = *q;
        l->items = items;
        l->n++;
        return 0;
}

int ncm__resource_list_copy(const ncm_resource_list *src, ncm_resource_list *dst)
{
        ncm_resource_list out = {NULL, 0};
        if (src->n == 0) {
                *dst = out;
                return 0;
        }
        out.items = calloc(src->n, sizeof(*out.items));
        if (!out.items)
                return -ENOMEM;
        for (size_t i = 0; i < src->n; i++) {
                out.items[i].name = strdup(src->items[i].name);
                if (!out.items[i].name) {
                        ncm_resource_list_done(&out);
                        return -ENOMEM;
                }
                out.items[i].quantity = src->items[i].quantity;
                out.n++;
        }
        *dst = out;
        return 0;
}

int ncm__resource_list_add(ncm_resource_list *l, const ncm_resource_list *add, ncm_error *err)
{
        for (size_t i = 0; i < add->n; i++) {
                ptrdiff_t j = find(l, add->items[i].name);
                if (j < 0) {
                        if (ncm__resource_list_set(l, add->items[i].name, &add->items[i].quantity) <
                            0)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                } else if (ncm_quantity_add(&l->items[j].quantity, &add->items[i].quantity) < 0) {
                        return ncm_error_set(err, ERANGE,
                                             "%s: sum needs more than 38 significant digits",
                                             add->items[i].name);
                }
        }
        return 0;
}

int ncm__resource_list_max(ncm_resource_list *l, const ncm_resource_list *add)
{
        for (size_t i = 0; i < add->n; i++) {
                const ncm_quantity *cur = ncm_resource_list_get(l, add->items[i].name);
                if (cur && ncm_quantity_cmp(&add->items[i].quantity, cur) <= 0)
                        continue;
                if (ncm__resource_list_set(l, add->items[i].name, &add->items[i].quantity) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* --- reading from JSON --- */

/* Length of the Unicode white space (unicode.IsSpace) encoded at S, or 0. */
static size_t space_at(const unsigned char *s, size_t n)
{
        if (n >= 1 && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')))
                return 1;
        if (n >= 2 && s[0] == 0xc2 && (s[1] == 0x85 || s[1] == 0xa0))
                return 2;
        if (n >= 3 && s[0] == 0xe1 && s[1] == 0x9a && s[2] == 0x80)
                return 3;
        if (n >= 3 && s[0] == 0xe2 && s[1] == 0x80 &&
            ((s[2] >= 0x80 && s[2] <= 0x8a) || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf))
                return 3;
        if (n >= 3 && s[0] == 0xe2 && s[1] == 0x81 && s[2] == 0x9f)
                return 3;
        if (n >= 3 && s[0] == 0xe3 && s[1] == 0x80 && s[2] == 0x80)
                return 3;
        return 0;
}

/* The same at the end of S[0..N). */
static size_t space_before(const unsigned char *s, size_t n)
{
        for (size_t k = 1; k <= 3 && k <= n; k++)
                if (space_at(s + n - k, k) == k)
                        return k;
        return 0;
}

int ncm__quantity_from_json(json_object *o, const char *path, ncm_quantity *ret, ncm_error *err)
{
        const char *text;
        size_t len, k;
        ncm_quantity q;
        ncm_error qerr = NCM_ERROR_INIT;
        int r;

        /* Quantity.UnmarshalJSON turns null into zero. */
        if (!o) {
                *ret = NCM_QUANTITY_ZERO;
                return 0;
        }
        r = ncm__json_scalar_text(o, path, &text, err);
        if (r < 0)
                return r;
        len = json_object_is_type(o, json_type_string) ? (size_t)json_object_get_string_len(o)
                                                       : strlen(text);
        if (json_object_is_type(o, json_type_int) && (strcmp(text, "18446744073709551615") == 0 ||
                                                      strcmp(text, "-9223372036854775808") == 0))
                /* json-c clamps integers it cannot hold to these; the real value is lost. */
                return ncm_error_set(
                                err, ERANGE,
                                "%s: number %s is out of range, write the quantity as a string",
                                path, text);
        while ((k = space_at((const unsigned char *)text, len)) > 0) {
                text += k;
                len -= k;
        }
        while ((k = space_before((const unsigned char *)text, len)) > 0)
                len -= k;
        r = ncm_quantity_parse_flags(text, len, NCM_QUANTITY_NO_CAP, &q, &qerr);
        if (r < 0) {
                ncm_buf b = NCM_BUF_INIT;
                ncm_buf_go_quote(&b, text, len);
                r = ncm_error_set(err, -r, "%s: invalid quantity %s: %s", path,
                                  ncm_buf_failed(&b) ? "" : b.data, qerr.msg);
                ncm_buf_done(&b);
                return r;
        }
        *ret = q;
        return 0;
}

/*
 * The largest quantity of resource NAME the kubelet holds: it reads cpu as MilliValue() into an
 * int64, which is exact up to apimachinery's MaxMilliValue ((2^63-1)/1000 cores, the bound it
 * checks Value() against before it takes MilliValue()), and every other resource as Value(),
 * exact up to 2^63-1. Beyond that Go's arithmetic wraps around: a pod asking for more would be
 * admitted with a negative or garbage request and poison every sum it takes part in.
 */
int ncm__resource_check_range(const char *name, const ncm_quantity *q, const char *path,
                              ncm_error *err)
{
        bool cpu = strcmp(name, NCM_RESOURCE_CPU) == 0;
        int64_t max = cpu ? INT64_MAX / 1000 : INT64_MAX;
        ncm_quantity limit = ncm_quantity_from_int(max, NCM_QUANTITY_DECIMAL_SI);
        char buf[NCM_QUANTITY_STRLEN];

        if (ncm_quantity_cmp(q, &limit) <= 0)
                return 0;
        return ncm_error_set(err, ERANGE,
                             "%s: invalid value \"%s\": must be no more than %lld (%s)", path,
                             ncm_quantity_to_string(q, buf), (long long)max,
                             cpu ? "the kubelet counts cpu in millicores, in an int64"
                                 : "the largest value the kubelet holds, an int64");
}

int ncm__resource_list_from_json(json_object *o, const char *path, ncm_resource_list *ret,
                                 ncm_error *err)
{
        ncm_resource_list l = {NULL, 0};
        int r;

        if (!o) {
                *ret = l;
                return 0;
        }
        r = ncm__json_expect(o, json_type_object, path, err);
        if (r < 0)
                return r;
        json_object_object_foreach(o, key, val)
        {
                char sub[512];
                ncm_quantity q;

                /* a stack buffer: this runs for every resource of every container */
                snprintf(sub, sizeof(sub), "%s.%s", path, key);
                if (key[0] == '\0') {
                        r = ncm_error_set(err, EINVAL, "%s: empty resource name", path);
                        goto fail;
                }
                r = ncm__quantity_from_json(val, sub, &q, err);
                if (r < 0)
                        goto fail;
                if (ncm_quantity_sign(&q) < 0) {
                        char buf[NCM_QUANTITY_STRLEN];
                        r = ncm_error_set(err, EINVAL,
                                          "%s: invalid value \"%s\": must be greater than or "
                                          "equal to 0",
                                          sub, ncm_quantity_to_string(&q, buf));
                        goto fail;
                }
                if (ncm__resource_list_set(&l, key, &q) < 0) {
                        r = ncm_error_set(err, ENOMEM, "%s: out of memory", path);
                        goto fail;
                }
        }
        *ret = l;
        return 0;
fail:
        ncm_resource_list_done(&l);
        return r;
}

/* --- pod totals --- */

bool ncm_resource_is_pod_level(const char *name)
{
        return strcmp(name, NCM_RESOURCE_CPU) == 0 || strcmp(name, NCM_RESOURCE_MEMORY) == 0 ||
               strncmp(name, NCM_RESOURCE_HUGEPAGES_PREFIX,
                       strlen(NCM_RESOURCE_HUGEPAGES_PREFIX)) == 0;
}

static bool has_pod_level_key(const ncm_resource_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                if (ncm_resource_is_pod_level(l->items[i].name))
                        return true;
        return false;
}

bool ncm_pod_level_resources_set(const ncm_pod *pod)
{
        return pod->has_pod_resources && (has_pod_level_key(&pod->resources.requests) ||
                                          has_pod_level_key(&pod->resources.limits));
}

static const ncm_resource_list *pick(const ncm_container *c, bool limits)
{
        return limits ? &c->resources.limits : &c->resources.requests;
}

int ncm__pod_aggregate(const ncm_pod *pod, bool limits, ncm_resource_list *ret, ncm_error *err)
{
        ncm_resource_list result = {NULL, 0}, sidecars = {NULL, 0}, init_max = {NULL, 0};
        int r = 0;

        for (size_t i = 0; i < pod->n_containers && r >= 0; i++)
                r = ncm__resource_list_add(&result, pick(&pod->containers[i], limits), err);
        /*
         * An init container runs beside the sidecars started before it, so its need is its
         * own resources plus theirs; sidecars keep running and add to the app containers.
         */
        for (size_t i = 0; i < pod->n_init_containers && r >= 0; i++) {
                const ncm_container *c = &pod->init_containers[i];
                ncm_resource_list use = {NULL, 0};
                if (c->sidecar) {
                        r = ncm__resource_list_add(&result, pick(c, limits), err);
                        if (r >= 0)
                                r = ncm__resource_list_add(&sidecars, pick(c, limits), err);
                        if (r >= 0)
                                r = ncm__resource_list_max(&init_max, &sidecars);
                } else {
                        r = ncm__resource_list_copy(pick(c, limits), &use);
                        if (r >= 0)
                                r = ncm__resource_list_add(&use, &sidecars, err);
                        if (r >= 0)
                                r = ncm__resource_list_max(&init_max, &use);
                        ncm_resource_list_done(&use);
                }
        }
        if (r >= 0)
                r = ncm__resource_list_max(&result, &init_max);
        ncm_resource_list_done(&sidecars);
        ncm_resource_list_done(&init_max);
        if (r < 0) {
                ncm_resource_list_done(&result);
                if (r == -ENOMEM)
                        return ncm_error_set(err, ENOMEM, "pod '%s': out of memory", pod->uid);
                return ncm_error_prefix(err, "pod '%s'", pod->uid);
        }
        *ret = result;
        return 0;
}

/* applyPodLevelResources: pod-level values of supported resources replace the aggregate. */
static int apply_pod_level(ncm_resource_list *l, const ncm_resource_list *pod_level)
{
        for (size_t i = 0; i < pod_level->n; i++)
                if (ncm_resource_is_pod_level(pod_level->items[i].name) &&
                    ncm__resource_list_set(l, pod_level->items[i].name,
                                           &pod_level->items[i].quantity) < 0)
                        return -ENOMEM;
        return 0;
}

int ncm_pod_requests(const ncm_pod *pod, unsigned flags, ncm_resource_list *ret, ncm_error *err)
{
        ncm_resource_list l;
        int r;

        r = ncm__pod_aggregate(pod, false, &l, err);
        if (r < 0)
                return r;
        if (!(flags & NCM_POD_SKIP_POD_LEVEL) && pod->has_pod_resources &&
            has_pod_level_key(&pod->resources.requests) &&
            apply_pod_level(&l, &pod->resources.requests) < 0)
                r = ncm_error_set(err, ENOMEM, "pod '%s': out of memory", pod->uid);
        if (r >= 0 && !(flags & NCM_POD_EXCLUDE_OVERHEAD)) {
                r = ncm__resource_list_add(&l, &pod->overhead, err);
                if (r < 0)
                        r = ncm_error_prefix(err, "pod '%s': overhead", pod->uid);
        }
        if (r < 0) {
                ncm_resource_list_done(&l);
                return r;
        }
        *ret = l;
        return 0;
}

int ncm_pod_limits(const ncm_pod *pod, unsigned flags, ncm_resource_list *ret, ncm_error *err)
{
        ncm_resource_list l;
        int r;

        r = ncm__pod_aggregate(pod, true, &l, err);
        if (r < 0)
                return r;
        if (!(flags & NCM_POD_SKIP_POD_LEVEL) && ncm_pod_level_resources_set(pod) &&
            apply_pod_level(&l, &pod->resources.limits) < 0)
                r = ncm_error_set(err, ENOMEM, "pod '%s': out of memory", pod->uid);
        /* Overhead only raises limits that exist and are not zero (zero means unlimited). */
        for (size_t i = 0; r >= 0 && !(flags & NCM_POD_EXCLUDE_OVERHEAD) && i < pod->overhead.n;
             i++) {
                ptrdiff_t j = find(&l, pod->overhead.items[i].name);
                if (j < 0 || ncm_quantity_is_zero(&l.items[j].quantity))
                        continue;
                if (ncm_quantity_add(&l.items[j].quantity, &pod->overhead.items[i].quantity) < 0)
                        r = ncm_error_set(err, ERANGE,
                                          "pod '%s': overhead: %s: sum needs more than 38 "
                                          "significant digits",
                                          pod->uid, pod->overhead.items[i].name);
        }
        if (r < 0) {
                ncm_resource_list_done(&l);
                return r;
        }
        *ret = l;
        return 0;
}

int ncm_resource_hugepage_size(const char *name, uint64_t *ret_bytes, ncm_error *err)
{
        size_t plen = strlen(NCM_RESOURCE_HUGEPAGES_PREFIX);
        ncm_error qerr = NCM_ERROR_INIT;
        ncm_quantity q;

        if (strncmp(name, NCM_RESOURCE_HUGEPAGES_PREFIX, plen) != 0)
                return ncm_error_set(err, ENOENT, "'%s' is not a hugepages resource", name);
        if (ncm_quantity_parse(name + plen, &q, &qerr) < 0)
                return ncm_error_set(err, EINVAL, "'%s': invalid hugepage size: %s", name,
                                     qerr.msg);
        if (ncm_quantity_sign(&q) <= 0)
                return ncm_error_set(err, EINVAL, "'%s': invalid hugepage size: must be positive",
                                     name);
        *ret_bytes = (uint64_t)ncm_quantity_value(&q);
        return 0;
}
