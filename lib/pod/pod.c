/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a Pod object into the model, then doing what the API server does before a kubelet
 * ever sees the pod: defaulting (requests from limits, pod-level resources, rounding to 1m)
 * and the validation rules the managers depend on.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "pod/pod-internal.h"

/* PATH + "." + the formatted field ("spec.containers[0]" when PATH is empty). */
NCM_PRINTF(2, 3) static char *sub(const char *path, const char *fmt, ...)
{
        ncm_autofree char *field = NULL;
        char *out = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&field, fmt, ap);
        va_end(ap);
        if (r < 0)
                return NULL;
        if (asprintf(&out, "%s%s%s", path, *path ? "." : "", field) < 0)
                return NULL;
        return out;
}

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/*
 * Field paths on the way of every container are built in the caller's buffer of PATH_MAX_LEN
 * (cut short when longer: they only name fields in messages), not with sub(): a pod of 100,000
 * containers would otherwise spend most of its parse in vasprintf.
 */
#define PATH_MAX_LEN 512

/* BUF = PATH + "." + A (A alone when PATH is empty) + B. */
static const char *join(char buf[PATH_MAX_LEN], const char *path, const char *a, const char *b)
{
        size_t n = 0;

        for (const char *s = path; *s && n < PATH_MAX_LEN - 1; s++)
                buf[n++] = *s;
        if (*path && n < PATH_MAX_LEN - 1)
                buf[n++] = '.';
        for (const char *s = a; *s && n < PATH_MAX_LEN - 1; s++)
                buf[n++] = *s;
        for (const char *s = b ? b : ""; *s && n < PATH_MAX_LEN - 1; s++)
                buf[n++] = *s;
        buf[n] = '\0';
        return buf;
}

/* BUF = PATH + "[" + I + "]". */
static const char *indexed(char buf[PATH_MAX_LEN], const char *path, size_t i)
{
        char num[24];
        size_t k = sizeof(num);

        num[--k] = '\0';
        num[--k] = ']';
        do
                num[--k] = (char)('0' + i % 10);
        while ((i /= 10) > 0);
        num[--k] = '[';
        join(buf, "", path, num + k);
        return buf;
}

/* BUF = PATH.spec.<list>[<index>].resources of container C. */
static const char *list_key(const ncm_container *c);
static const char *resources_path(char buf[PATH_MAX_LEN], const char *path, const ncm_container *c)
{
        char list[PATH_MAX_LEN], at[PATH_MAX_LEN];

        join(list, path, "spec.", list_key(c));
        indexed(at, list, c->index);
        return join(buf, at, "resources", NULL);
}

/*
 * An optional string member: *RET is NULL when absent or null. Type errors name the member.
 */
static int get_string(json_object *parent, const char *key, const char *path, const char **ret,
                      ncm_error *err)
{
        json_object *v = ncm__json_get(parent, key);
        ncm_autofree char *p = NULL;

        *ret = NULL;
        if (!v)
                return 0;
        if (!json_object_is_type(v, json_type_string)) {
                p = sub(path, "%s", key);
                if (!p)
                        return oom(err);
                return ncm__json_expect(v, json_type_string, p, err);
        }
        *ret = json_object_get_string(v);
        return 0;
}

/*
 * An identifier member (KEY of PARENT at PATH) checked with CHECK unless the pod is one the node
 * stored (NCM__POD_STORED); *RET is NULL when absent. A NUL byte inside is refused, never cut:
 * "u\u0000x" must not become another pod's "u".
 */
static int get_id(json_object *parent, const char *key, const char *path, unsigned flags,
                  int (*check)(const char *, size_t, const char *, ncm_error *), const char **ret,
                  ncm_error *err)
{
        char p[PATH_MAX_LEN];
        int r = get_string(parent, key, path, ret, err);

        if (r < 0 || !*ret || (flags & NCM__POD_STORED))
                return r;
        return check(*ret, (size_t)json_object_get_string_len(ncm__json_get(parent, key)),
                     join(p, path, key, NULL), err);
}

/* An optional object member: *RET is NULL when absent or null. */
static int get_object(json_object *parent, const char *key, const char *path, json_object **ret,
                      ncm_error *err)
{
        json_object *v = ncm__json_get(parent, key);
        ncm_autofree char *p = NULL;

        *ret = v;
        if (!v || json_object_is_type(v, json_type_object))
                return 0;
        p = sub(path, "%s", key);
        if (!p)
                return oom(err);
        return ncm__json_expect(v, json_type_object, p, err);
}

/* requests and limits of a ResourceRequirements object at PATH. */
static int parse_resources(json_object *o, const char *path, ncm_resources *r, ncm_error *err)
{
        char rp[PATH_MAX_LEN], lp[PATH_MAX_LEN];
        json_object *req, *lim;
        int k;

        if (!o)
                return 0; /* no resources: nothing to read */
        join(rp, path, "requests", NULL);
        join(lp, path, "limits", NULL);
        if ((k = get_object(o, "requests", path, &req, err)) < 0 ||
            (k = get_object(o, "limits", path, &lim, err)) < 0)
                return k;
        k = ncm__resource_list_from_json(req, rp, &r->requests, err);
        if (k < 0)
                return k;
        return ncm__resource_list_from_json(lim, lp, &r->limits, err);
}

static void resources_done(ncm_resources *r)
{
        ncm_resource_list_done(&r->requests);
        ncm_resource_list_done(&r->limits);
}

static int parse_container(json_object *o, const char *path, bool init, size_t index,
                           unsigned flags, ncm_container *c, ncm_error *err)
{
        char np[PATH_MAX_LEN], rp[PATH_MAX_LEN];
        const char *name, *policy;
        json_object *res;
        int r;

        join(np, path, "name", NULL);
        join(rp, path, "resources", NULL);
        r = ncm__json_expect(o, json_type_object, path, err);
        if (r < 0)
                return r;
        if ((r = get_id(o, "name", path, flags,
                        flags & NCM__POD_RUNTIME ? ncm_pod_validate_uid : ncm_pod_validate_label,
                        &name, err)) < 0 ||
            (r = get_string(o, "restartPolicy", path, &policy, err)) < 0 ||
            (r = get_object(o, "resources", path, &res, err)) < 0)
                return r;
        if (!name || !*name)
                return ncm_error_set(err, EINVAL, "%s: required", np);
        c->name = strdup(name);
        if (!c->name)
                return oom(err);
        c->index = index;
        c->init = init;
        /* Only init containers can be restartable; an app container's policy is its own. */
        c->sidecar = init && policy && strcmp(policy, "Always") == 0;
        return parse_resources(res, rp, &c->resources, err);
}

static int parse_containers(json_object *spec, const char *path, const char *key, bool init,
                            unsigned flags, ncm_container **ret, size_t *ret_n, ncm_error *err)
{
        ncm_autofree char *lp = sub(path, "%s", key);
        json_object *arr = ncm__json_get(spec, key);
        ncm_container *cs;
        size_t n;
        int r;

        if (!lp)
                return oom(err);
        if (!arr)
                return 0;
        r = ncm__json_expect(arr, json_type_array, lp, err);
        if (r < 0)
                return r;
        n = json_object_array_length(arr);
        if (n == 0)
                return 0;
        cs = calloc(n, sizeof(*cs));
        if (!cs)
                return oom(err);
        /* Hand the array over first so that a failure below is freed with the pod. */
        *ret = cs;
        *ret_n = n;
        for (size_t i = 0; i < n; i++) {
                char cp[PATH_MAX_LEN];
                indexed(cp, lp, i);
                r = parse_container(json_object_array_get_idx(arr, i), cp, init, i, flags, &cs[i],
                                    err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const char *list_key(const ncm_container *c)
{
        return c->init ? "initContainers" : "containers";
}

typedef struct name_at {
        const char *name;
        size_t at; /* init containers, then app containers */
} name_at;

static int cmp_name_at(const void *a, const void *b)
{
        const name_at *x = a, *y = b;
        int c = strcmp(x->name, y->name);
        return c ? c : (x->at > y->at) - (x->at < y->at);
}

/*
 * Names must be unique across init and app containers; the first container (in spec order)
 * whose name an earlier one has is reported. Sorted, not compared pairwise: a pod of 25,000
 * containers would otherwise cost 300 million comparisons.
 */
static int check_names(const ncm_pod *pod, const char *path, ncm_error *err)
{
        size_t total = pod->n_init_containers + pod->n_containers, dup = SIZE_MAX;
        ncm_autofree name_at *v = malloc((total ? total : 1) * sizeof(*v));
        const ncm_container *c;

        if (!v)
                return oom(err);
        for (size_t i = 0; i < total; i++)
                v[i] = (name_at){i < pod->n_init_containers
                                                 ? pod->init_containers[i].name
                                                 : pod->containers[i - pod->n_init_containers].name,
                                 i};
        qsort(v, total, sizeof(*v), cmp_name_at);
        for (size_t i = 1; i < total; i++)
                if (strcmp(v[i - 1].name, v[i].name) == 0 && v[i].at < dup)
                        dup = v[i].at;
        if (dup == SIZE_MAX)
                return 0;
        c = dup < pod->n_init_containers ? &pod->init_containers[dup]
                                         : &pod->containers[dup - pod->n_init_containers];
        {
                ncm_autofree char *p = sub(path, "spec.%s[%zu].name", list_key(c), c->index);
                if (!p)
                        return oom(err);
                return ncm_error_set(err, EINVAL, "%s: duplicate container name \"%s\"", p,
                                     c->name);
        }
}

/* --- defaulting --- */

static bool is_hugepages(const char *name)
{
        return strncmp(name, NCM_RESOURCE_HUGEPAGES_PREFIX,
                       strlen(NCM_RESOURCE_HUGEPAGES_PREFIX)) == 0;
}

/* IsOvercommitAllowed: a native resource (no domain, or *kubernetes.io/) other than hugepages. */
static bool overcommit_allowed(const char *name)
{
        bool native = !strchr(name, '/') || strstr(name, "kubernetes.io/");
        return native && !is_hugepages(name);
}

/* SetDefaults_Pod for one container: a limit without a request becomes the request. */
static int default_requests(ncm_resources *r)
{
        for (size_t i = 0; i < r->limits.n; i++)
                if (!ncm_resource_list_get(&r->requests, r->limits.items[i].name) &&
                    ncm__resource_list_set(&r->requests, r->limits.items[i].name,
                                           &r->limits.items[i].quantity) < 0)
                        return -ENOMEM;
        return 0;
}

static bool all_containers_limit(const ncm_pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (!ncm_container_limit(&pod->init_containers[i], name))
                        return false;
        for (size_t i = 0; i < pod->n_containers; i++)
                if (!ncm_container_limit(&pod->containers[i], name))
                        return false;
        return true;
}

static bool has_pod_level_key(const ncm_resource_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                if (ncm_resource_is_pod_level(l->items[i].name))
                        return true;
        return false;
}

/*
 * The PodLevelResources defaulting of SetDefaults_Pod, in its order: hugepage limits from the
 * containers, then requests, then cpu/memory limits. Runs on unrounded values, as the API
 * server rounds only afterwards.
 */
static int default_pod_level(ncm_pod *pod, ncm_error *err)
{
        ncm_resources *pr = &pod->resources;
        ncm_resource_list aggr = {NULL, 0};
        int r = 0;

        /* defaultHugePagePodLimits */
        if (pr->limits.n > 0 || pr->requests.n > 0) {
                r = ncm__pod_aggregate(pod, true, &aggr, err);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < aggr.n && r >= 0; i++) {
                        const char *k = aggr.items[i].name;
                        if (!is_hugepages(k) || ncm_resource_list_get(&pr->requests, k) ||
                            ncm_resource_list_get(&pr->limits, k))
                                continue;
                        r = ncm__resource_list_set(&pr->limits, k, &aggr.items[i].quantity);
                }
                ncm_resource_list_done(&aggr);
                if (r < 0)
                        return oom(err);
        }

        /* defaultPodRequests */
        if (pr->limits.n > 0) {
                r = ncm__pod_aggregate(pod, false, &aggr, err);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < aggr.n && r >= 0; i++) {
                        const char *k = aggr.items[i].name;
                        if (ncm_resource_list_get(&pr->requests, k) ||
                            !ncm_resource_is_pod_level(k) || !overcommit_allowed(k))
                                continue;
                        r = ncm__resource_list_set(&pr->requests, k, &aggr.items[i].quantity);
                }
                ncm_resource_list_done(&aggr);
                for (size_t i = 0; i < pr->limits.n && r >= 0; i++) {
                        const char *k = pr->limits.items[i].name;
                        if (ncm_resource_list_get(&pr->requests, k) ||
                            !ncm_resource_is_pod_level(k))
                                continue;
                        r = ncm__resource_list_set(&pr->requests, k, &pr->limits.items[i].quantity);
                }
                if (r < 0)
                        return oom(err);
        }

        /* defaultPodLimits: only when requests but no limits are set at pod level */
        if (!has_pod_level_key(&pr->limits) && has_pod_level_key(&pr->requests)) {
                r = ncm__pod_aggregate(pod, true, &aggr, err);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < aggr.n && r >= 0; i++) {
                        const char *k = aggr.items[i].name;
                        if (ncm_resource_list_get(&pr->limits, k) ||
                            !ncm_resource_is_pod_level(k) || !overcommit_allowed(k) ||
                            !all_containers_limit(pod, k))
                                continue;
                        r = ncm__resource_list_set(&pr->limits, k, &aggr.items[i].quantity);
                }
                ncm_resource_list_done(&aggr);
                if (r < 0)
                        return oom(err);
        }
        return 0;
}

/* SetDefaults_ResourceList: every stored value is rounded up to a multiple of 1m. */
static void round_list(ncm_resource_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                (void)ncm_quantity_round_up(&l->items[i].quantity, -3);
}

/* --- validation --- */

/*
 * ValidateResourceRequirements' request/limit rules: a request may not exceed its limit, and a
 * resource that cannot be overcommitted (hugepages, extended resources) needs a limit equal to
 * the request.
 */
static int check_requirements(const ncm_resources *r, const char *path, ncm_error *err)
{
        for (size_t i = 0; i < r->requests.n; i++) {
                const char *k = r->requests.items[i].name;
                const ncm_quantity *req = &r->requests.items[i].quantity;
                const ncm_quantity *lim = ncm_resource_list_get(&r->limits, k);
                char rb[NCM_QUANTITY_STRLEN], lb[NCM_QUANTITY_STRLEN];
                const char *rule;
                ncm_autofree char *p = NULL;

                if (!lim && overcommit_allowed(k))
                        continue;
                if (!lim) {
                        p = sub(path, "limits.%s", k);
                        if (!p)
                                return oom(err);
                        return ncm_error_set(err, EINVAL,
                                             "%s: required: a limit must be set for a "
                                             "resource that cannot be overcommitted",
                                             p);
                }
                if (!overcommit_allowed(k) && ncm_quantity_cmp(req, lim) != 0)
                        rule = "must be equal to";
                else if (ncm_quantity_cmp(req, lim) > 0)
                        rule = "must be less than or equal to";
                else
                        continue;
                p = sub(path, "requests.%s", k);
                if (!p)
                        return oom(err);
                return ncm_error_set(err, EINVAL, "%s: invalid value \"%s\": %s %s limit of %s", p,
                                     ncm_quantity_to_string(req, rb), rule, k,
                                     ncm_quantity_to_string(lim, lb));
        }
        return 0;
}

/* Every quantity of L (at PATH.KEY) within what the kubelet holds. */
static int check_range(const ncm_resource_list *l, const char *path, const char *key,
                       ncm_error *err)
{
        for (size_t i = 0; i < l->n; i++) {
                char kp[PATH_MAX_LEN], p[PATH_MAX_LEN];
                /* the path only for the message */
                if (ncm__resource_check_range(l->items[i].name, &l->items[i].quantity, "", NULL) >=
                    0)
                        continue;
                join(kp, path, key, NULL);
                return ncm__resource_check_range(l->items[i].name, &l->items[i].quantity,
                                                 join(p, kp, l->items[i].name, NULL), err);
        }
        return 0;
}

/*
 * The pod's totals (ncm_pod_requests / ncm_pod_limits) must be within what the kubelet holds
 * too: it sums the containers before it converts (ResourceConfigForPod), and a sum beyond an
 * int64 wraps around there.
 */
static int check_totals(const ncm_pod *pod, const char *path, ncm_error *err)
{
        for (int lim = 0; lim < 2; lim++) {
                ncm_resource_list l = {NULL, 0};
                int r = lim ? ncm_pod_limits(pod, 0, &l, err) : ncm_pod_requests(pod, 0, &l, err);
                for (size_t i = 0; r >= 0 && i < l.n; i++) {
                        ncm_autofree char *p = sub(path, "spec: the pod's %s of %s",
                                                   lim ? "limits" : "requests", l.items[i].name);
                        r = p ? ncm__resource_check_range(l.items[i].name, &l.items[i].quantity, p,
                                                          err)
                              : oom(err);
                }
                ncm_resource_list_done(&l);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int finish(ncm_pod *pod, const char *path, unsigned flags, ncm_error *err)
{
        ncm_container *lists[2] = {pod->init_containers, pod->containers};
        size_t counts[2] = {pod->n_init_containers, pod->n_containers};
        int r;

        if (flags & NCM__POD_AS_GIVEN) {
                pod->qos = ncm_pod_compute_qos(pod);
                return 0;
        }

        for (int l = 0; l < 2; l++)
                for (size_t i = 0; i < counts[l]; i++)
                        if (default_requests(&lists[l][i].resources) < 0)
                                return oom(err);
        if (pod->has_pod_resources) {
                r = default_pod_level(pod, err);
                if (r < 0)
                        return r;
        }
        for (int l = 0; l < 2; l++) {
                for (size_t i = 0; i < counts[l]; i++) {
                        round_list(&lists[l][i].resources.requests);
                        round_list(&lists[l][i].resources.limits);
                }
        }
        round_list(&pod->resources.requests);
        round_list(&pod->resources.limits);
        round_list(&pod->overhead);

        for (int l = 0; l < 2 && !(flags & NCM__POD_STORED); l++) {
                for (size_t i = 0; i < counts[l]; i++) {
                        const ncm_container *c = &lists[l][i];
                        char p[PATH_MAX_LEN];
                        if (!c->resources.requests.n && !c->resources.limits.n)
                                continue;
                        resources_path(p, path, c);
                        /* limits first: a request copied from its limit names the limit */
                        if ((r = check_range(&c->resources.limits, p, "limits", err)) < 0 ||
                            (r = check_range(&c->resources.requests, p, "requests", err)) < 0)
                                return r;
                }
        }
        if (!(flags & NCM__POD_STORED)) {
                ncm_autofree char *p = sub(path, "spec");
                if (!p)
                        return oom(err);
                if ((r = check_range(&pod->resources.limits, p, "resources.limits", err)) < 0 ||
                    (r = check_range(&pod->resources.requests, p, "resources.requests", err)) < 0 ||
                    (r = check_range(&pod->overhead, p, "overhead", err)) < 0)
                        return r;
        }

        for (int l = 0; l < 2; l++) {
                for (size_t i = 0; i < counts[l]; i++) {
                        const ncm_container *c = &lists[l][i];
                        char p[PATH_MAX_LEN];
                        if (!c->resources.requests.n)
                                continue;
                        r = check_requirements(&c->resources, resources_path(p, path, c), err);
                        if (r < 0)
                                return r;
                }
        }
        if (pod->has_pod_resources) {
                ncm_autofree char *p = sub(path, "spec.resources");
                if (!p)
                        return oom(err);
                r = check_requirements(&pod->resources, p, err);
                if (r < 0)
                        return r;
        }
        r = flags & NCM__POD_STORED ? 0 : check_totals(pod, path, err);
        if (r < 0)
                return r;
        pod->qos = ncm_pod_compute_qos(pod);
        return 0;
}

int ncm__pod_from_json_flags(json_object *obj, const char *path, unsigned flags, ncm_pod **ret,
                             ncm_error *err)
{
        ncm_autoptr(ncm_pod) pod = NULL;
        ncm_autofree char *spec_path = sub(path, "spec");
        ncm_autofree char *meta_path = sub(path, "metadata");
        json_object *meta, *spec, *res, *overhead;
        const char *uid, *name, *ns;
        int r;

        if (!spec_path || !meta_path)
                return oom(err);
        if (!obj || !json_object_is_type(obj, json_type_object)) {
                if (*path)
                        return ncm__json_expect(obj, json_type_object, path, err);
                return ncm_error_set(err, EINVAL, "expected a Pod object, got %s",
                                     ncm__json_type_name(obj));
        }
        pod = calloc(1, sizeof(*pod));
        if (!pod)
                return oom(err);

        if ((r = get_object(obj, "metadata", path, &meta, err)) < 0 ||
            (r = get_id(meta, "uid", meta_path, flags, ncm_pod_validate_uid, &uid, err)) < 0)
                return r;
        /* an empty name or namespace is absent, as the API server's defaulting has it */
        if ((r = get_string(meta, "name", meta_path, &name, err)) >= 0 && name && *name)
                r = get_id(meta, "name", meta_path, flags, ncm_pod_validate_name, &name, err);
        if (r >= 0 && (r = get_string(meta, "namespace", meta_path, &ns, err)) >= 0 && ns && *ns)
                r = get_id(meta, "namespace", meta_path, flags, ncm_pod_validate_label, &ns, err);
        if (r < 0)
                return r;
        if (!uid || !*uid)
                return ncm_error_set(err, EINVAL, "%s.uid: required", meta_path);
        pod->uid = strdup(uid);
        pod->name = strdup(name ? name : "");
        pod->ns = strdup(ns && *ns ? ns : "default");
        if (!pod->uid || !pod->name || !pod->ns)
                return oom(err);
        r = ncm__pod_read_annotations(meta, meta_path, pod, err);
        if (r < 0)
                return r;

        r = get_object(obj, "spec", path, &spec, err);
        if (r < 0)
                return r;
        r = parse_containers(spec, spec_path, "initContainers", true, flags, &pod->init_containers,
                             &pod->n_init_containers, err);
        if (r < 0)
                return r;
        r = parse_containers(spec, spec_path, "containers", false, flags, &pod->containers,
                             &pod->n_containers, err);
        if (r < 0)
                return r;
        if (pod->n_containers == 0)
                return ncm_error_set(err, EINVAL,
                                     "%s.containers: at least one container is required",
                                     spec_path);
        r = check_names(pod, path, err);
        if (r < 0)
                return r;
        r = ncm__pod_read_cdi(pod, meta, meta_path, err);
        if (r < 0)
                return r;

        if ((r = get_object(spec, "resources", spec_path, &res, err)) < 0 ||
            (r = get_object(spec, "overhead", spec_path, &overhead, err)) < 0)
                return r;
        if (res) {
                ncm_autofree char *p = sub(spec_path, "resources");
                if (!p)
                        return oom(err);
                pod->has_pod_resources = true;
                r = parse_resources(res, p, &pod->resources, err);
                if (r < 0)
                        return r;
        }
        if (overhead) {
                ncm_autofree char *p = sub(spec_path, "overhead");
                if (!p)
                        return oom(err);
                r = ncm__resource_list_from_json(overhead, p, &pod->overhead, err);
                if (r < 0)
                        return r;
        }

        r = finish(pod, path, flags, err);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(pod);
        return 0;
}

int ncm__pod_from_json(json_object *obj, const char *path, ncm_pod **ret, ncm_error *err)
{
        return ncm__pod_from_json_flags(obj, path, 0, ret, err);
}

int ncm_pod_parse(const char *text, size_t len, const char *name, ncm_pod **ret, ncm_error *err)
{
        ncm_autojson obj = NULL;
        int r;

        r = ncm__json_or_yaml_parse(text, len, name ? name : "<input>", &obj, err);
        if (r < 0)
                return r;
        r = ncm__pod_from_json(obj, "", ret, err);
        if (r < 0 && name)
                return ncm_error_prefix(err, "%s", name);
        return r;
}

int ncm_pod_load_file(const char *path, ncm_pod **ret, ncm_error *err)
{
        ncm_autojson obj = NULL;
        int r;

        r = ncm__json_load_file(path, &obj, err);
        if (r < 0)
                return r;
        r = ncm__pod_from_json(obj, "", ret, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s", strcmp(path, "-") == 0 ? "<stdin>" : path);
        return r;
}

static void containers_free(ncm_container *cs, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(cs[i].name);
                resources_done(&cs[i].resources);
                ncm__container_cdi_free(&cs[i]);
        }
        free(cs);
}

ncm_pod *ncm_pod_free(ncm_pod *pod)
{
        if (!pod)
                return NULL;
        free(pod->uid);
        free(pod->name);
        free(pod->ns);
        containers_free(pod->init_containers, pod->n_init_containers);
        containers_free(pod->containers, pod->n_containers);
        resources_done(&pod->resources);
        ncm_resource_list_done(&pod->overhead);
        ncm__pod_annotations_free(pod->annotations, pod->n_annotations);
        free(pod);
        return NULL;
}

const ncm_container *ncm_pod_find_container(const ncm_pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (strcmp(pod->init_containers[i].name, name) == 0)
                        return &pod->init_containers[i];
        for (size_t i = 0; i < pod->n_containers; i++)
                if (strcmp(pod->containers[i].name, name) == 0)
                        return &pod->containers[i];
        return NULL;
}
