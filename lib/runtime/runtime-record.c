/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A record of the containers a runtime integration placed (the OCI hook's
 * ROOT/nodecm_oci_containers, the CRI proxy's ROOT/nodecm_cri_containers): each one's pod,
 * name, kind, cgroup or sandbox and resources, so that a later run or a restarted daemon can
 * rebuild a pod when another container joins, move a cpuset with the shared pool, and release
 * a container that is gone. One JSON object, rewritten whole and atomically under the node
 * directory's lock:
 *
 *   {"sandboxes": [{"id": "...", "pod": "<uid>"}],
 *    "containers": [{"id": "...", "pod": "<uid>", "podName": "", "podNamespace": "",
 *     "name": "app", "kind": "container", "qos": "Guaranteed", "cgroup": "/...",
 *     "sandbox": "...", "podAnnotations": {"cpu-quota.crio.io": "disable"}, "seq": 3,
 *     "resources": {"cpuShares": 2048, "cpuQuota": 200000,
 *     "cpuPeriod": 100000, "memoryLimit": 1073741824,
 *     "hugepages": [{"pageSize": 2097152, "limit": 4194304}]}}]}
 *
 * "qos" is absent when the class was not known; "cgroup" and "sandbox" when they are not
 * known (a CRI container's cgroup; an OCI container's sandbox); "id" is "" for a container
 * whose creation is in flight (the CRI). Containers are in creation order (seq).
 *
 * The CRI proxy does not rewrite its record for every CreateContainer (that costs the whole
 * record each time: O(containers) on the path the kubelet waits on). It appends to a journal
 * beside it, ROOT/nodecm_cri_journal, one JSON object per line:
 *
 *   {"gen": 4, "add": {<a container, as above>}, "sandbox": {"id": "...", "pod": "<uid>"}}
 *   {"gen": 4, "id": {"pod": "<uid>", "name": "app", "id": "..."}}
 *
 * "add" puts the container in (replacing the one of the same pod and name), with its sandbox
 * when new; "id" sets the runtime's id of a container. A record rewritten whole carries
 * "generation": G + 1 and the journal is emptied after it: lines of another generation than
 * the record's are what a crash left between the two, already in the record, and skipped. A
 * last line without its newline is an append a crash cut short, and ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/fs.h>
#include "base/array.h"
#include "base/journal.h"
#include "base/json.h"
#include "runtime-record.h"

#define REGISTRY_MAX (64u << 20)

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

void ncm__rt_container_done(ncm__rt_container *e)
{
        free(e->id);
        free(e->pod);
        free(e->pod_name);
        free(e->pod_ns);
        free(e->name);
        free(e->cgroup);
        free(e->sandbox);
        for (size_t i = 0; i < e->n_ann; i++) {
                free(e->ann[i].key);
                free(e->ann[i].value);
        }
        free(e->ann);
        *e = (ncm__rt_container){0};
}

/* Add KEY=VALUE to E's annotations (no check: a rebuilt pod checks them). -ENOMEM. */
static int ann_add(ncm__rt_container *e, const char *key, const char *value)
{
        size_t cap = e->n_ann;
        ncm_pod_annotation a = {strdup(key), strdup(value)};

        if (!a.key || !a.value || ncm__array_grow(e->ann, cap, e->n_ann) < 0) {
                free(a.key);
                free(a.value);
                return -ENOMEM;
        }
        e->ann[e->n_ann++] = a;
        return 0;
}

int ncm__rt_container_set_annotations(ncm__rt_container *e, const ncm_runtime_kv *a, size_t n)
{
        for (size_t i = 0; i < e->n_ann; i++) {
                free(e->ann[i].key);
                free(e->ann[i].value);
        }
        free(e->ann);
        e->ann = NULL;
        e->n_ann = 0;
        for (size_t i = 0; i < n; i++) {
                bool seen = false;
                if (!ncm_pod_annotation_known(a[i].key))
                        continue;
                /* a later one of the same key wins (the container's over its sandbox's) */
                for (size_t k = 0; k < e->n_ann && !seen; k++)
                        if (strcmp(e->ann[k].key, a[i].key) == 0) {
                                char *v = strdup(a[i].value);
                                if (!v)
                                        return -ENOMEM;
                                free(e->ann[k].value);
                                e->ann[k].value = v;
                                seen = true;
                        }
                if (!seen && ann_add(e, a[i].key, a[i].value) < 0)
                        return -ENOMEM;
        }
        return 0;
}

void ncm__rt_record_done(ncm__rt_record *r)
{
        for (size_t i = 0; i < r->n; i++)
                ncm__rt_container_done(&r->v[i]);
        free(r->v);
        for (size_t i = 0; i < r->n_sandboxes; i++) {
                free(r->sandboxes[i].id);
                free(r->sandboxes[i].pod);
        }
        free(r->sandboxes);
        *r = (ncm__rt_record){0};
}

ssize_t ncm__rt_record_find_sandbox(const ncm__rt_record *r, const char *id)
{
        for (size_t i = 0; i < r->n_sandboxes; i++)
                if (strcmp(r->sandboxes[i].id, id) == 0)
                        return (ssize_t)i;
        return -1;
}

int ncm__rt_record_add_sandbox(ncm__rt_record *r, const char *id, const char *pod)
{
        char *i, *p;

        if (ncm__rt_record_find_sandbox(r, id) >= 0)
                return 0;
        if (ncm__array_grow(r->sandboxes, r->cap_sandboxes, r->n_sandboxes) < 0)
                return -ENOMEM;
        i = strdup(id);
        p = strdup(pod);
        if (!i || !p) {
                free(i);
                free(p);
                return -ENOMEM;
        }
        r->sandboxes[r->n_sandboxes].id = i;
        r->sandboxes[r->n_sandboxes++].pod = p;
        return 0;
}

void ncm__rt_record_remove_sandbox(ncm__rt_record *r, size_t i)
{
        free(r->sandboxes[i].id);
        free(r->sandboxes[i].pod);
        memmove(&r->sandboxes[i], &r->sandboxes[i + 1],
                (r->n_sandboxes - i - 1) * sizeof(*r->sandboxes));
        r->n_sandboxes--;
}

ssize_t ncm__rt_record_find_id(const ncm__rt_record *r, const char *id)
{
        if (!id || !*id)
                return -1; /* "": a creation in flight, never a container's id */
        for (size_t i = 0; i < r->n; i++)
                if (strcmp(r->v[i].id, id) == 0)
                        return (ssize_t)i;
        return -1;
}

ssize_t ncm__rt_record_find_name(const ncm__rt_record *r, const char *pod, const char *name)
{
        for (size_t i = 0; i < r->n; i++)
                if (strcmp(r->v[i].pod, pod) == 0 && strcmp(r->v[i].name, name) == 0)
                        return (ssize_t)i;
        return -1;
}

bool ncm__rt_record_has_pod(const ncm__rt_record *r, const char *pod)
{
        for (size_t i = 0; i < r->n; i++)
                if (strcmp(r->v[i].pod, pod) == 0)
                        return true;
        return false;
}

int ncm__rt_record_add(ncm__rt_record *r, ncm__rt_container *e)
{
        if (ncm__array_grow(r->v, r->cap, r->n) < 0)
                return -ENOMEM;
        if (e->seq == 0 || e->seq < r->next_seq)
                e->seq = r->next_seq ? r->next_seq : 1;
        r->next_seq = e->seq + 1;
        r->v[r->n++] = *e;
        *e = (ncm__rt_container){0};
        return 0;
}

void ncm__rt_record_remove(ncm__rt_record *r, size_t i)
{
        ncm__rt_container_done(&r->v[i]);
        memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(*r->v));
        r->n--;
}

int ncm__rt_container_dup(const ncm__rt_container *e, ncm__rt_container *ret)
{
        ncm__rt_container c = *e;

        c.id = strdup(e->id ? e->id : "");
        c.pod = strdup(e->pod);
        c.pod_name = strdup(e->pod_name ? e->pod_name : "");
        c.pod_ns = strdup(e->pod_ns ? e->pod_ns : "");
        c.name = strdup(e->name);
        c.cgroup = strdup(e->cgroup ? e->cgroup : "");
        c.sandbox = strdup(e->sandbox ? e->sandbox : "");
        c.ann = NULL;
        c.n_ann = 0;
        if (!c.id || !c.pod || !c.pod_name || !c.pod_ns || !c.name || !c.cgroup || !c.sandbox) {
                ncm__rt_container_done(&c);
                return -ENOMEM;
        }
        for (size_t i = 0; i < e->n_ann; i++)
                if (ann_add(&c, e->ann[i].key, e->ann[i].value) < 0) {
                        ncm__rt_container_done(&c);
                        return -ENOMEM;
                }
        *ret = c;
        return 0;
}

int ncm__rt_record_pod(const ncm__rt_record *reg, const ncm__rt_container *newest, ncm_pod **ret,
                       ncm_error *err)
{
        ncm_autofree ncm_runtime_container *c = calloc(reg->n + 1, sizeof(*c));
        ncm_runtime_pod p = {0};
        ncm_pod *pod = NULL;
        size_t n = 0;
        int r;

        if (!c)
                return oom(err);
        for (size_t i = 0; i < reg->n; i++) {
                if (strcmp(reg->v[i].pod, newest->pod) != 0)
                        continue;
                c[n].name = reg->v[i].name;
                c[n].kind = reg->v[i].kind;
                c[n++].resources = reg->v[i].resources;
        }
        p.uid = newest->pod;
        p.name = newest->pod_name;
        p.namespace = newest->pod_ns && *newest->pod_ns ? newest->pod_ns : NULL;
        p.has_qos = newest->has_qos;
        p.qos = newest->qos;
        p.containers = c;
        p.n_containers = n;
        r = ncm_runtime_pod_build(&p, &pod, err);
        /* the pod's annotations as its containers carried them, the newest last */
        for (size_t i = 0; r >= 0 && i < reg->n; i++) {
                if (strcmp(reg->v[i].pod, newest->pod) != 0)
                        continue;
                for (size_t k = 0; r >= 0 && k < reg->v[i].n_ann; k++)
                        r = ncm_pod_set_annotation(pod, reg->v[i].ann[k].key,
                                                   reg->v[i].ann[k].value, err);
        }
        if (r < 0) {
                ncm_pod_free(pod);
                return r;
        }
        *ret = pod;
        return 0;
}

static const char *kind_name(ncm_runtime_kind k)
{
        return ncm_runtime_kind_name(k);
}

static int kind_from_name(const char *s, ncm_runtime_kind *ret)
{
        static const ncm_runtime_kind kinds[] = {NCM_RUNTIME_CONTAINER, NCM_RUNTIME_INIT,
                                                 NCM_RUNTIME_SIDECAR};
        for (size_t i = 0; i < NCM_ELEMENTSOF(kinds); i++)
                if (strcmp(s, kind_name(kinds[i])) == 0) {
                        *ret = kinds[i];
                        return 0;
                }
        return -EINVAL;
}

static int get_string(json_object *o, const char *key, const char *path, bool required, char **ret,
                      ncm_error *err)
{
        json_object *v = ncm__json_get(o, key);
        char p[1024];

        snprintf(p, sizeof(p), "%s.%s", path, key);
        if (!v) {
                if (required)
                        return ncm_error_set(err, EINVAL, "%s: missing", p);
                *ret = strdup("");
                return *ret ? 0 : oom(err);
        }
        if (ncm__json_expect(v, json_type_string, p, err) < 0)
                return -EINVAL;
        if (required && !*json_object_get_string(v))
                return ncm_error_set(err, EINVAL, "%s: empty", p);
        *ret = strdup(json_object_get_string(v));
        return *ret ? 0 : oom(err);
}

static int get_int(json_object *o, const char *key, const char *path, int64_t min, int64_t *ret,
                   ncm_error *err)
{
        json_object *v = ncm__json_get(o, key);
        char p[1024];

        *ret = 0;
        if (!v)
                return 0;
        snprintf(p, sizeof(p), "%s.%s", path, key);
        return ncm__json_int(v, p, min, INT64_MAX, ret, err);
}

static int parse_entry(json_object *o, const char *path, ncm__rt_container *e, ncm_error *err)
{
        json_object *res, *q, *k, *huge;
        char p[400];
        int64_t seq;
        int r;

        if (ncm__json_expect(o, json_type_object, path, err) < 0)
                return -EINVAL;
        if ((r = get_string(o, "id", path, false, &e->id, err)) < 0 ||
            (r = get_string(o, "pod", path, true, &e->pod, err)) < 0 ||
            (r = get_string(o, "podName", path, false, &e->pod_name, err)) < 0 ||
            (r = get_string(o, "podNamespace", path, false, &e->pod_ns, err)) < 0 ||
            (r = get_string(o, "name", path, true, &e->name, err)) < 0 ||
            (r = get_string(o, "cgroup", path, false, &e->cgroup, err)) < 0 ||
            (r = get_string(o, "sandbox", path, false, &e->sandbox, err)) < 0 ||
            (r = get_int(o, "seq", path, 1, &seq, err)) < 0)
                return r;
        e->seq = (uint64_t)seq;
        k = ncm__json_get(o, "podAnnotations");
        if (k) {
                snprintf(p, sizeof(p), "%s.podAnnotations", path);
                if (ncm__json_expect(k, json_type_object, p, err) < 0)
                        return -EINVAL;
                json_object_object_foreach(k, key, val)
                {
                        if (!json_object_is_type(val, json_type_string))
                                return ncm_error_set(err, EINVAL, "%s.%s: expected string", p, key);
                        if (ncm_pod_annotation_known(key) &&
                            ann_add(e, key, json_object_get_string(val)) < 0)
                                return oom(err);
                }
        }
        k = ncm__json_get(o, "kind");
        if (k && (!json_object_is_type(k, json_type_string) ||
                  kind_from_name(json_object_get_string(k), &e->kind) < 0))
                return ncm_error_set(err, EINVAL, "%s.kind: expected container, init or sidecar",
                                     path);
        q = ncm__json_get(o, "qos");
        if (q) {
                const char *s = json_object_is_type(q, json_type_string) ? json_object_get_string(q)
                                                                         : "";
                e->has_qos = true;
                if (strcmp(s, "Guaranteed") == 0)
                        e->qos = NCM_QOS_GUARANTEED;
                else if (strcmp(s, "Burstable") == 0)
                        e->qos = NCM_QOS_BURSTABLE;
                else if (strcmp(s, "BestEffort") == 0)
                        e->qos = NCM_QOS_BEST_EFFORT;
                else
                        return ncm_error_set(err, EINVAL, "%s.qos: expected a QoS class", path);
        }
        res = ncm__json_get(o, "resources");
        if (!res)
                return 0;
        snprintf(p, sizeof(p), "%s.resources", path);
        if (ncm__json_expect(res, json_type_object, p, err) < 0)
                return -EINVAL;
        if ((r = get_int(res, "cpuShares", p, 0, &e->resources.cpu_shares, err)) < 0 ||
            (r = get_int(res, "cpuQuota", p, -1, &e->resources.cpu_quota, err)) < 0 ||
            (r = get_int(res, "cpuPeriod", p, 0, &e->resources.cpu_period, err)) < 0 ||
            (r = get_int(res, "memoryLimit", p, 0, &e->resources.memory_limit, err)) < 0)
                return r;
        huge = ncm__json_get(res, "hugepages");
        if (huge) {
                size_t n;
                char hp[500];
                snprintf(hp, sizeof(hp), "%s.hugepages", p);
                if (ncm__json_expect(huge, json_type_array, hp, err) < 0)
                        return -EINVAL;
                n = json_object_array_length(huge);
                if (n > NCM_RUNTIME_MAX_HUGEPAGES)
                        return ncm_error_set(err, EINVAL, "%s: more than %d sizes", hp,
                                             NCM_RUNTIME_MAX_HUGEPAGES);
                for (size_t i = 0; i < n; i++) {
                        json_object *h = json_object_array_get_idx(huge, i);
                        char ip[600];
                        snprintf(ip, sizeof(ip), "%s[%zu]", hp, i);
                        if (ncm__json_expect(h, json_type_object, ip, err) < 0)
                                return -EINVAL;
                        if ((r = get_int(h, "pageSize", ip, 1, &e->resources.hugepages[i].page_size,
                                         err)) < 0 ||
                            (r = get_int(h, "limit", ip, 0, &e->resources.hugepages[i].limit,
                                         err)) < 0)
                                return r;
                        if (e->resources.hugepages[i].page_size == 0)
                                return ncm_error_set(err, EINVAL, "%s.pageSize: missing", ip);
                }
                e->resources.n_hugepages = n;
        }
        return 0;
}

static int parse_sandboxes(json_object *list, const char *name, ncm__rt_record *reg, ncm_error *err)
{
        char p[300];
        size_t n;

        snprintf(p, sizeof(p), "%s: sandboxes", name);
        if (ncm__json_expect(list, json_type_array, p, err) < 0)
                return -EINVAL;
        n = json_object_array_length(list);
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(list, i);
                ncm_autofree char *id = NULL;
                ncm_autofree char *pod = NULL;
                char ip[340];
                int r;
                snprintf(ip, sizeof(ip), "%s[%zu]", p, i);
                if (ncm__json_expect(o, json_type_object, ip, err) < 0)
                        return -EINVAL;
                if ((r = get_string(o, "id", ip, true, &id, err)) < 0 ||
                    (r = get_string(o, "pod", ip, true, &pod, err)) < 0)
                        return r;
                if (ncm__rt_record_find_sandbox(reg, id) >= 0)
                        return ncm_error_set(err, EINVAL, "%s.id: \"%s\" listed twice", ip, id);
                if (ncm__rt_record_add_sandbox(reg, id, pod) < 0)
                        return oom(err);
        }
        return 0;
}

int ncm__rt_record_parse(const char *text, size_t len, const char *name, ncm__rt_record *ret,
                         ncm_error *err)
{
        ncm_autojson root = NULL;
        ncm__rt_record reg = {0};
        json_object *list;
        size_t n;
        int r;

        r = ncm__json_parse(text, len, name, &root, err);
        if (r < 0)
                return r;
        if (ncm__json_expect(root, json_type_object, name, err) < 0)
                return -EINVAL;
        {
                char p[300];
                int64_t gen = 0;
                snprintf(p, sizeof(p), "%s: generation", name);
                list = ncm__json_get(root, "generation");
                if (list && (r = ncm__json_int(list, p, 0, INT64_MAX, &gen, err)) < 0)
                        return r;
                reg.generation = (uint64_t)gen;
        }
        list = ncm__json_get(root, "sandboxes");
        if (list && (r = parse_sandboxes(list, name, &reg, err)) < 0) {
                ncm__rt_record_done(&reg);
                return r;
        }
        list = ncm__json_get(root, "containers");
        if (!list) {
                *ret = reg;
                return 0;
        }
        {
                char p[300];
                snprintf(p, sizeof(p), "%s: containers", name);
                if (ncm__json_expect(list, json_type_array, p, err) < 0) {
                        ncm__rt_record_done(&reg);
                        return -EINVAL;
                }
        }
        n = json_object_array_length(list);
        for (size_t i = 0; i < n; i++) {
                ncm__rt_container e = {0};
                char p[300];
                snprintf(p, sizeof(p), "%s: containers[%zu]", name, i);
                r = parse_entry(json_object_array_get_idx(list, i), p, &e, err);
                if (r >= 0 && ncm__rt_record_find_id(&reg, e.id) >= 0)
                        r = ncm_error_set(err, EINVAL, "%s.id: \"%s\" listed twice", p, e.id);
                if (r >= 0 && ncm__rt_record_find_name(&reg, e.pod, e.name) >= 0)
                        r = ncm_error_set(err, EINVAL,
                                          "%s: container \"%s\" of pod \"%s\" "
                                          "listed twice",
                                          p, e.name, e.pod);
                if (r >= 0 && e.seq < reg.next_seq)
                        r = ncm_error_set(err, EINVAL, "%s.seq: not in creation order", p);
                if (r >= 0 && ncm__rt_record_add(&reg, &e) < 0)
                        r = oom(err);
                if (r < 0) {
                        ncm__rt_container_done(&e);
                        ncm__rt_record_done(&reg);
                        return r;
                }
        }
        *ret = reg;
        return 0;
}

/* DIR/FILE's text into *TEXT and its path into *PATH: 1, or 0 when there is no such file. */
static int read_file(const char *dir, const char *file, char **path, char **text, size_t *len,
                     ncm_error *err)
{
        int r;

        if (asprintf(path, "%s/%s", dir, file) < 0) {
                *path = NULL;
                return oom(err);
        }
        r = ncm_fs_read_all(AT_FDCWD, *path, REGISTRY_MAX, text, len, err);
        if (r == -ENOENT) {
                ncm_error_clear(err);
                return 0;
        }
        return r < 0 ? r : 1;
}

int ncm__rt_record_load(const char *dir, const char *file, ncm__rt_record *ret, ncm_error *err)
{
        ncm_autofree char *path = NULL;
        ncm_autofree char *text = NULL;
        size_t len = 0;
        int r = read_file(dir, file, &path, &text, &len, err);

        if (r == 0)
                *ret = (ncm__rt_record){0};
        if (r <= 0)
                return r;
        return ncm__rt_record_parse(text, len, path, ret, err);
}

static void put_str(ncm_buf *b, const char *key, const char *v)
{
        ncm_buf_printf(b, ", \"%s\": ", key);
        ncm_buf_json_string(b, v, strlen(v));
}

/* Container E as the record's JSON holds it. */
static void format_entry(const ncm__rt_container *e, ncm_buf *b)
{
        const ncm_runtime_resources *r = &e->resources;

        ncm_buf_puts(b, "{\"id\": ");
        ncm_buf_json_string(b, e->id, strlen(e->id));
        put_str(b, "pod", e->pod);
        put_str(b, "podName", e->pod_name ? e->pod_name : "");
        put_str(b, "podNamespace", e->pod_ns ? e->pod_ns : "");
        put_str(b, "name", e->name);
        put_str(b, "kind", kind_name(e->kind));
        if (e->has_qos)
                put_str(b, "qos", ncm_qos_class_name(e->qos));
        if (e->cgroup && *e->cgroup)
                put_str(b, "cgroup", e->cgroup);
        if (e->sandbox && *e->sandbox)
                put_str(b, "sandbox", e->sandbox);
        if (e->n_ann) {
                ncm_buf_puts(b, ", \"podAnnotations\": {");
                for (size_t i = 0; i < e->n_ann; i++) {
                        ncm_buf_puts(b, i ? ", " : "");
                        ncm_buf_json_string(b, e->ann[i].key, strlen(e->ann[i].key));
                        ncm_buf_puts(b, ": ");
                        ncm_buf_json_string(b, e->ann[i].value, strlen(e->ann[i].value));
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_printf(b,
                       ", \"seq\": %llu, \"resources\": {\"cpuShares\": %lld, "
                       "\"cpuQuota\": %lld, \"cpuPeriod\": %lld, \"memoryLimit\": %lld, "
                       "\"hugepages\": [",
                       (unsigned long long)e->seq, (long long)r->cpu_shares,
                       (long long)r->cpu_quota, (long long)r->cpu_period,
                       (long long)r->memory_limit);
        for (size_t h = 0; h < r->n_hugepages; h++)
                ncm_buf_printf(b, "%s{\"pageSize\": %lld, \"limit\": %lld}", h ? ", " : "",
                               (long long)r->hugepages[h].page_size,
                               (long long)r->hugepages[h].limit);
        ncm_buf_puts(b, "]}}");
}

void ncm__rt_record_format(const ncm__rt_record *reg, ncm_buf *b)
{
        ncm_buf_puts(b, "{");
        if (reg->generation)
                ncm_buf_printf(b, "\"generation\": %llu, ", (unsigned long long)reg->generation);
        if (reg->n_sandboxes) {
                ncm_buf_puts(b, "\"sandboxes\": [");
                for (size_t i = 0; i < reg->n_sandboxes; i++) {
                        ncm_buf_puts(b, i ? ",\n  {\"id\": " : "\n  {\"id\": ");
                        ncm_buf_json_string(b, reg->sandboxes[i].id, strlen(reg->sandboxes[i].id));
                        put_str(b, "pod", reg->sandboxes[i].pod);
                        ncm_buf_puts(b, "}");
                }
                ncm_buf_puts(b, "\n], ");
        }
        ncm_buf_puts(b, "\"containers\": [");
        for (size_t i = 0; i < reg->n; i++) {
                ncm_buf_puts(b, i ? ",\n  " : "\n  ");
                format_entry(&reg->v[i], b);
        }
        ncm_buf_puts(b, reg->n ? "\n]}\n" : "]}\n");
}

/* ---- the journal (the CRI proxy's) -------------------------------------------------------- */

void ncm__rt_journal_add(ncm_buf *b, uint64_t gen, const ncm__rt_container *e,
                         const ncm__rt_sandbox *sandbox)
{
        ncm__journal j = {.gen = gen};

        ncm__journal_begin(&j, b);
        ncm_buf_puts(b, "\"add\": ");
        format_entry(e, b);
        if (sandbox) {
                ncm_buf_puts(b, ", \"sandbox\": {\"id\": ");
                ncm_buf_json_string(b, sandbox->id, strlen(sandbox->id));
                put_str(b, "pod", sandbox->pod);
                ncm_buf_puts(b, "}");
        }
        ncm__journal_end(b);
}

void ncm__rt_journal_id(ncm_buf *b, uint64_t gen, const char *pod, const char *name, const char *id)
{
        ncm__journal j = {.gen = gen};

        ncm__journal_begin(&j, b);
        ncm_buf_puts(b, "\"id\": {\"pod\": ");
        ncm_buf_json_string(b, pod, strlen(pod));
        put_str(b, "name", name);
        put_str(b, "id", id);
        ncm_buf_puts(b, "}");
        ncm__journal_end(b);
}

/* Whether container K of REG is not POD's NAME (an id given to another container). */
static bool other(const ncm__rt_record *reg, ssize_t k, const char *pod, const char *name)
{
        return k >= 0 && (strcmp(reg->v[k].pod, pod) != 0 || strcmp(reg->v[k].name, name) != 0);
}

/* The "add" line O (at P, "FILE:LINE") put into REG. */
static int journal_add(json_object *o, json_object *add, const char *p, ncm__rt_record *reg,
                       ncm_error *err)
{
        ncm__rt_container e = {0};
        json_object *sb = ncm__json_get(o, "sandbox");
        ncm_autofree char *sid = NULL;
        ncm_autofree char *pod = NULL;
        char q[400];
        ssize_t k;
        int r;

        snprintf(q, sizeof(q), "%s: add", p);
        r = parse_entry(add, q, &e, err);
        if (r >= 0 && e.seq == 0)
                r = ncm_error_set(err, EINVAL, "%s.seq: missing", q);
        if (r >= 0 && e.id[0] && other(reg, ncm__rt_record_find_id(reg, e.id), e.pod, e.name))
                r = ncm_error_set(err, EINVAL, "%s.id: \"%s\" listed twice", q, e.id);
        if (r >= 0 && sb) {
                snprintf(q, sizeof(q), "%s: sandbox", p);
                if (ncm__json_expect(sb, json_type_object, q, err) < 0)
                        r = -EINVAL;
                if (r >= 0)
                        r = get_string(sb, "id", q, true, &sid, err);
                if (r >= 0)
                        r = get_string(sb, "pod", q, true, &pod, err);
        }
        if (r < 0) {
                ncm__rt_container_done(&e);
                return r;
        }
        k = ncm__rt_record_find_name(reg, e.pod, e.name);
        if (k >= 0) {
                /* a new attempt takes the place (and the order) of the old, as when written */
                e.seq = reg->v[k].seq;
                ncm__rt_container_done(&reg->v[k]);
                reg->v[k] = e;
        } else if (ncm__rt_record_add(reg, &e) < 0) {
                ncm__rt_container_done(&e);
                return oom(err);
        }
        if (sid && ncm__rt_record_add_sandbox(reg, sid, pod) < 0)
                return oom(err);
        return 0;
}

/* The "id" line ID (at P) put into REG. */
static int journal_id(json_object *id, const char *p, ncm__rt_record *reg, ncm_error *err)
{
        ncm_autofree char *pod = NULL;
        ncm_autofree char *name = NULL;
        ncm_autofree char *cid = NULL;
        char q[400];
        ssize_t k;
        int r;

        snprintf(q, sizeof(q), "%s: id", p);
        if (ncm__json_expect(id, json_type_object, q, err) < 0)
                return -EINVAL;
        if ((r = get_string(id, "pod", q, true, &pod, err)) < 0 ||
            (r = get_string(id, "name", q, true, &name, err)) < 0 ||
            (r = get_string(id, "id", q, true, &cid, err)) < 0)
                return r;
        if (other(reg, ncm__rt_record_find_id(reg, cid), pod, name))
                return ncm_error_set(err, EINVAL, "%s.id: \"%s\" listed twice", q, cid);
        k = ncm__rt_record_find_name(reg, pod, name);
        if (k < 0)
                return 0; /* not added in this generation: nothing to name */
        free(reg->v[k].id);
        reg->v[k].id = NCM_TAKE_PTR(cid);
        return 0;
}

/* One line of the journal, of the record's generation, put into the record USERDATA. */
static int journal_line(json_object *o, const char *where, void *userdata, ncm_error *err)
{
        json_object *add = ncm__json_get(o, "add");
        json_object *id = ncm__json_get(o, "id");

        if (add)
                return journal_add(o, add, where, userdata, err);
        if (id)
                return journal_id(id, where, userdata, err);
        return ncm_error_set(err, EINVAL, "%s: expected \"add\" or \"id\"", where);
}

int ncm__rt_journal_apply(const char *text, size_t len, const char *name, ncm__rt_record *reg,
                          ncm_error *err)
{
        ncm__journal j = {.gen = reg->generation};
        bool torn = false;
        int r = ncm__journal_read(&j, text, len, name, ":", journal_line, reg, &torn, err);

        if (r < 0)
                return r;
        return (int)j.lines + torn;
}

int ncm__rt_journal_load(const char *dir, const char *file, ncm__rt_record *reg, ncm_error *err)
{
        ncm_autofree char *path = NULL;
        ncm_autofree char *text = NULL;
        size_t len = 0;
        int r = read_file(dir, file, &path, &text, &len, err);

        if (r <= 0)
                return r;
        return ncm__rt_journal_apply(text, len, path, reg, err);
}

int ncm__rt_record_save(const char *dir, const char *file, const ncm__rt_record *reg,
                        unsigned flags, ncm_error *err)
{
        ncm_autofree char *path = NULL;
        ncm_buf b = NCM_BUF_INIT;
        int r;

        if (asprintf(&path, "%s/%s", dir, file) < 0)
                return oom(err);
        ncm__rt_record_format(reg, &b);
        if (ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return oom(err);
        }
        r = ncm_fs_write_atomic_flags(AT_FDCWD, path, b.data, b.len, 0600, flags, err);
        ncm_buf_done(&b);
        return r;
}

int ncm__rt_record_settle(const char *dir, const ncm_node *n, uint64_t syncs, ncm_error *err)
{
        return ncm_node_dir_syncs(n) == syncs ? ncm_fs_sync_dir(AT_FDCWD, dir, err) : 0;
}
