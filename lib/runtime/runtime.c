/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From what a runtime knows of a container back to the pod the kubelet was given: requests
 * recovered from shares, quota and limits; the QoS class from the pod cgroup's name; identity
 * from annotations; and the pod rebuilt as JSON and read like any other pod, so that defaulting,
 * validation and the QoS class are the pod module's, not a second copy of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include <nodecm/cgroups.h>
#include <nodecm/quantity.h>
#include <nodecm/runtime.h>
#include "base/json.h"
#include "pod/pod-internal.h"

/* The kubelet's MinShares and MaxShares (helpers_linux.go). */
#define MIN_SHARES 2
#define MAX_SHARES 262144

int ncm_runtime_parse_page_size(const char *s, int64_t *ret_bytes)
{
        static const struct {
                const char *unit;
                int shift;
        } units[] = {{"KB", 10}, {"MB", 20}, {"GB", 30}, {"TB", 40}, {"PB", 50}};
        int64_t v = 0;
        size_t i = 0;

        if (!s)
                return -EINVAL;
        for (; s[i] >= '0' && s[i] <= '9'; i++) {
                if (v > (INT64_MAX - 9) / 10)
                        return -EINVAL;
                v = v * 10 + (s[i] - '0');
        }
        if (i == 0 || v == 0)
                return -EINVAL;
        for (size_t u = 0; u < NCM_ELEMENTSOF(units); u++) {
                if (strcmp(s + i, units[u].unit) != 0)
                        continue;
                if (v > (INT64_MAX >> units[u].shift))
                        return -EINVAL;
                *ret_bytes = v << units[u].shift;
                return 0;
        }
        return -EINVAL;
}

/* ceil(a*1000/b) for a, b > 0 without overflow (a is at most INT64_MAX). */
static int64_t ceil_milli(int64_t a, int64_t b)
{
        ncm_int128 m = (ncm_int128)a * 1000;
        ncm_int128 q = (m + b - 1) / b;
        return q > INT64_MAX ? INT64_MAX : (int64_t)q;
}

int ncm_runtime_recover(const ncm_runtime_resources *r, bool has_qos, ncm_qos_class qos,
                        ncm_runtime_requests *ret, ncm_error *err)
{
        ncm_runtime_requests q = {-1, -1, -1, -1};
        /* shares between the two clamps map back to exactly one request */
        bool exact_shares = r->cpu_shares > MIN_SHARES && r->cpu_shares < MAX_SHARES;

        if (r->cpu_shares > MIN_SHARES)
                q.cpu_request = ceil_milli(r->cpu_shares, 1024);
        if (r->cpu_quota > 0 && r->cpu_period > 0)
                q.cpu_limit = ceil_milli(r->cpu_quota, r->cpu_period);
        if (r->memory_limit > 0)
                q.memory_limit = r->memory_limit;
        if (!has_qos) {
                *ret = q;
                return 0;
        }
        switch (qos) {
        case NCM_QOS_GUARANTEED: {
                int64_t cpu = exact_shares || q.cpu_limit < 0 ? q.cpu_request : q.cpu_limit;
                if (cpu <= 0 || q.memory_limit <= 0)
                        return ncm_error_set(err, EINVAL,
                                             "a Guaranteed container needs a CPU and a memory "
                                             "limit, the runtime has shares=%lld quota=%lld "
                                             "period=%lld memory=%lld",
                                             (long long)r->cpu_shares, (long long)r->cpu_quota,
                                             (long long)r->cpu_period, (long long)r->memory_limit);
                q.cpu_request = q.cpu_limit = cpu;
                q.memory_request = q.memory_limit;
                break;
        }
        case NCM_QOS_BURSTABLE:
                q.memory_request = 0;
                break;
        case NCM_QOS_BEST_EFFORT:
        default:
                q = (ncm_runtime_requests){-1, -1, -1, -1};
                break;
        }
        *ret = q;
        return 0;
}

/* ---- pod cgroup names ---------------------------------------------------------------------- */

static int copy_uid(const char *s, size_t len, bool systemd, char *buf, size_t size)
{
        if (!buf)
                return 0;
        if (len + 1 > size)
                return -ENAMETOOLONG;
        for (size_t i = 0; i < len; i++)
                buf[i] = systemd && s[i] == '_' ? '-' : s[i];
        buf[len] = '\0';
        return 0;
}

static bool comp_is(const char *s, size_t len, const char *word)
{
        return len == strlen(word) && memcmp(s, word, len) == 0;
}

/* One systemd slice name "kubepods[-burstable|-besteffort]-pod<uid>.slice". */
static int slice_qos(const char *s, size_t len, ncm_qos_class *qos, char *buf, size_t size)
{
        static const struct {
                const char *prefix;
                ncm_qos_class qos;
        } tiers[] = {
                        {"kubepods-burstable-pod", NCM_QOS_BURSTABLE},
                        {"kubepods-besteffort-pod", NCM_QOS_BEST_EFFORT},
                        {"kubepods-pod", NCM_QOS_GUARANTEED},
        };
        const size_t suffix = strlen(".slice");

        if (len <= suffix || memcmp(s + len - suffix, ".slice", suffix) != 0)
                return 0;
        len -= suffix;
        for (size_t i = 0; i < NCM_ELEMENTSOF(tiers); i++) {
                size_t pl = strlen(tiers[i].prefix);
                int r;
                /* a UID has no dash left in systemd's spelling; anything else is not a pod */
                if (len <= pl || memcmp(s, tiers[i].prefix, pl) != 0 ||
                    memchr(s + pl, '-', len - pl))
                        continue;
                r = copy_uid(s + pl, len - pl, true, buf, size);
                if (r < 0)
                        return r;
                *qos = tiers[i].qos;
                return 1;
        }
        return 0;
}

int ncm_runtime_pod_cgroup_qos(const char *path, ncm_qos_class *ret_qos, char *uid_buf,
                               size_t uid_size)
{
        const char *comp[64];
        size_t lens[64], n = 0;
        const char *p = path, *colon;
        ncm_qos_class qos = NCM_QOS_BEST_EFFORT;

        if (!path)
                return 0;
        /* runc's systemd form "slice:prefix:name": only the slice names the pod */
        colon = strchr(path, ':');
        if (colon && path[0] != '/') {
                int r = slice_qos(path, (size_t)(colon - path), &qos, uid_buf, uid_size);
                if (r > 0)
                        *ret_qos = qos;
                return r;
        }
        while (*p && n < NCM_ELEMENTSOF(comp)) {
                const char *e;
                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                e = strchr(p, '/');
                if (!e)
                        e = p + strlen(p);
                comp[n] = p;
                lens[n++] = (size_t)(e - p);
                p = e;
        }
        for (size_t i = 0; i < n; i++) {
                int r = slice_qos(comp[i], lens[i], &qos, uid_buf, uid_size);
                if (r != 0) {
                        if (r > 0)
                                *ret_qos = qos;
                        return r;
                }
                if (lens[i] <= 3 || memcmp(comp[i], "pod", 3) != 0 || i == 0)
                        continue;
                if (comp_is(comp[i - 1], lens[i - 1], "kubepods"))
                        qos = NCM_QOS_GUARANTEED;
                else if (i >= 2 && comp_is(comp[i - 2], lens[i - 2], "kubepods") &&
                         comp_is(comp[i - 1], lens[i - 1], "burstable"))
                        qos = NCM_QOS_BURSTABLE;
                else if (i >= 2 && comp_is(comp[i - 2], lens[i - 2], "kubepods") &&
                         comp_is(comp[i - 1], lens[i - 1], "besteffort"))
                        qos = NCM_QOS_BEST_EFFORT;
                else
                        continue;
                r = copy_uid(comp[i] + 3, lens[i] - 3, false, uid_buf, uid_size);
                if (r < 0)
                        return r;
                *ret_qos = qos;
                return 1;
        }
        return 0;
}

/* ---- identity ------------------------------------------------------------------------------ */

const char *ncm_runtime_kind_name(ncm_runtime_kind k)
{
        switch (k) {
        case NCM_RUNTIME_CONTAINER:
                return "container";
        case NCM_RUNTIME_INIT:
                return "init";
        case NCM_RUNTIME_SIDECAR:
                return "sidecar";
        case NCM_RUNTIME_SANDBOX:
                return "sandbox";
        case NCM_RUNTIME_EPHEMERAL:
                return "ephemeral";
        }
        return "container";
}

static const char *get(const ncm_runtime_kv *a, size_t n, const char *key)
{
        for (size_t i = 0; i < n; i++)
                if (a[i].key && a[i].value && strcmp(a[i].key, key) == 0)
                        return a[i].value;
        return NULL;
}

/* The first of KEYS (NULL-terminated) that A has, non-empty. */
static const char *first(const ncm_runtime_kv *a, size_t n, const char *const *keys)
{
        for (; *keys; keys++) {
                const char *v = get(a, n, *keys);
                if (v && *v)
                        return v;
        }
        return NULL;
}

int ncm_runtime_identify(const ncm_runtime_kv *a, size_t n, ncm_runtime_identity *ret,
                         ncm_error *err)
{
        static const char *const uid_keys[] = {NCM_ANNOTATION_POD_UID, "io.kubernetes.pod.uid",
                                               "io.kubernetes.cri.sandbox-uid", NULL};
        static const char *const name_keys[] = {NCM_ANNOTATION_POD_NAME, "io.kubernetes.pod.name",
                                                "io.kubernetes.cri.sandbox-name", NULL};
        static const char *const ns_keys[] = {NCM_ANNOTATION_POD_NAMESPACE,
                                              "io.kubernetes.pod.namespace",
                                              "io.kubernetes.cri.sandbox-namespace", NULL};
        static const char *const ctr_keys[] = {NCM_ANNOTATION_CONTAINER_NAME,
                                               "io.kubernetes.container.name",
                                               "io.kubernetes.cri.container-name", NULL};
        ncm_runtime_identity id = {0};
        const char *managed = get(a, n, NCM_ANNOTATION_MANAGED);
        const char *type = get(a, n, NCM_ANNOTATION_CONTAINER_TYPE);
        const char *qos = get(a, n, NCM_ANNOTATION_QOS_CLASS);
        const char *v;

        if (managed && strcmp(managed, "true") != 0 && strcmp(managed, "false") != 0)
                return ncm_error_set(err, EINVAL,
                                     "annotation %s: expected \"true\" or \"false\", got \"%s\"",
                                     NCM_ANNOTATION_MANAGED, managed);
        id.pod_uid = first(a, n, uid_keys);
        id.pod_name = first(a, n, name_keys);
        id.pod_namespace = first(a, n, ns_keys);
        id.container_name = first(a, n, ctr_keys);
        id.kind = NCM_RUNTIME_CONTAINER;
        if (type) {
                if (strcmp(type, "container") == 0)
                        id.kind = NCM_RUNTIME_CONTAINER;
                else if (strcmp(type, "init") == 0)
                        id.kind = NCM_RUNTIME_INIT;
                else if (strcmp(type, "sidecar") == 0)
                        id.kind = NCM_RUNTIME_SIDECAR;
                else
                        return ncm_error_set(err, EINVAL,
                                             "annotation %s: expected \"container\", \"init\" or "
                                             "\"sidecar\", got \"%s\"",
                                             NCM_ANNOTATION_CONTAINER_TYPE, type);
        } else if ((v = get(a, n, "io.kubernetes.container.type"))) {
                if (strcmp(v, "init") == 0)
                        id.kind = NCM_RUNTIME_INIT;
                else if (strcmp(v, "ephemeral") == 0)
                        id.kind = NCM_RUNTIME_EPHEMERAL;
        }
        if (((v = get(a, n, "io.kubernetes.cri.container-type")) && strcmp(v, "sandbox") == 0) ||
            ((v = get(a, n, "io.kubernetes.cri-o.ContainerType")) && strcmp(v, "sandbox") == 0))
                id.kind = NCM_RUNTIME_SANDBOX;
        if (qos) {
                id.has_qos = true;
                if (strcmp(qos, "Guaranteed") == 0)
                        id.qos = NCM_QOS_GUARANTEED;
                else if (strcmp(qos, "Burstable") == 0)
                        id.qos = NCM_QOS_BURSTABLE;
                else if (strcmp(qos, "BestEffort") == 0)
                        id.qos = NCM_QOS_BEST_EFFORT;
                else
                        return ncm_error_set(err, EINVAL,
                                             "annotation %s: expected \"Guaranteed\", "
                                             "\"Burstable\" or \"BestEffort\", got \"%s\"",
                                             NCM_ANNOTATION_QOS_CLASS, qos);
        }
        id.managed = (managed ? strcmp(managed, "true") == 0 : id.pod_uid != NULL) &&
                     id.kind != NCM_RUNTIME_SANDBOX && id.kind != NCM_RUNTIME_EPHEMERAL;
        *ret = id;
        return 0;
}

/* ---- the pod ------------------------------------------------------------------------------- */

static void put_milli(ncm_buf *b, const char *key, int64_t milli, bool *first_item)
{
        ncm_buf_printf(b, "%s\"%s\": \"%lldm\"", *first_item ? "" : ", ", key, (long long)milli);
        *first_item = false;
}

static void put_bytes(ncm_buf *b, const char *key, int64_t v, bool *first_item)
{
        ncm_buf_printf(b, "%s\"%s\": \"%lld\"", *first_item ? "" : ", ", key, (long long)v);
        *first_item = false;
}

static int put_hugepages(ncm_buf *b, const ncm_runtime_resources *r, bool *first_item)
{
        for (size_t i = 0; i < r->n_hugepages && i < NCM_RUNTIME_MAX_HUGEPAGES; i++) {
                char name[64];
                if (r->hugepages[i].limit <= 0)
                        continue;
                /* "hugepages-2Mi": the resource name of the page size */
                if (ncm_cgroup_hugepage_size_name(r->hugepages[i].page_size, name, sizeof(name)) <
                    0)
                        return -EINVAL;
                ncm_buf_printf(b, "%s\"hugepages-", *first_item ? "" : ", ");
                for (const char *s = name; *s && *s != 'B'; s++)
                        ncm_buf_putc(b, *s);
                ncm_buf_printf(b, "i\": \"%lld\"", (long long)r->hugepages[i].limit);
                *first_item = false;
        }
        return 0;
}

static int put_container(ncm_buf *b, const ncm_runtime_pod *p, const ncm_runtime_container *c,
                         bool sidecar_policy, ncm_error *err)
{
        ncm_runtime_requests q;
        bool first_item = true;
        int r = ncm_runtime_recover(&c->resources, p->has_qos, p->qos, &q, err);

        if (r < 0)
                return ncm_error_prefix(err, "container '%s'", c->name);
        ncm_buf_puts(b, "{\"name\": ");
        ncm_buf_json_string(b, c->name, strlen(c->name));
        if (sidecar_policy && c->kind == NCM_RUNTIME_SIDECAR)
                ncm_buf_puts(b, ", \"restartPolicy\": \"Always\"");
        ncm_buf_puts(b, ", \"resources\": {\"requests\": {");
        if (q.cpu_request >= 0)
                put_milli(b, "cpu", q.cpu_request, &first_item);
        if (q.memory_request >= 0)
                put_bytes(b, "memory", q.memory_request, &first_item);
        /* hugepages: requests equal limits (the API server requires it) */
        if (p->qos != NCM_QOS_BEST_EFFORT || !p->has_qos)
                if (put_hugepages(b, &c->resources, &first_item) < 0)
                        goto bad_page;
        ncm_buf_puts(b, "}, \"limits\": {");
        first_item = true;
        if (q.cpu_limit >= 0)
                put_milli(b, "cpu", q.cpu_limit, &first_item);
        if (q.memory_limit >= 0)
                put_bytes(b, "memory", q.memory_limit, &first_item);
        if (p->qos != NCM_QOS_BEST_EFFORT || !p->has_qos)
                if (put_hugepages(b, &c->resources, &first_item) < 0)
                        goto bad_page;
        ncm_buf_puts(b, "}}}");
        return 0;
bad_page:
        return ncm_error_set(err, EINVAL,
                             "container '%s': a hugepage size that is not a power of "
                             "two of at least 1KB",
                             c->name);
}

static const char *qos_word(ncm_qos_class q)
{
        return ncm_qos_class_name(q);
}

/* Whether C goes to spec.initContainers; ALL_APP: every container is an app container. */
static bool in_init(const ncm_runtime_container *c, bool all_app)
{
        return !all_app && (c->kind == NCM_RUNTIME_INIT || c->kind == NCM_RUNTIME_SIDECAR);
}

int ncm_runtime_pod_build(const ncm_runtime_pod *p, ncm_pod **ret, ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_autoptr(ncm_pod) pod = NULL;
        bool any = false, all_app = true;
        int r = 0;

        if (!p->uid || !*p->uid)
                return ncm_error_set(err, EINVAL, "a pod without a UID");
        if (p->n_containers == 0)
                return ncm_error_set(err, EINVAL, "pod '%s': no container", p->uid);
        /*
         * The kubelet creates a pod's init containers before its app containers, and a pod
         * needs one of those: until the first app container comes, the init containers stand
         * in as app containers. Their CPUs are the same either way (an init container's
         * exclusive CPUs become reusable when the pod is admitted again with it in its place).
         */
        for (size_t i = 0; i < p->n_containers; i++)
                if (p->containers[i].kind != NCM_RUNTIME_INIT &&
                    p->containers[i].kind != NCM_RUNTIME_SIDECAR)
                        all_app = false;
        ncm_buf_puts(&b, "{\"metadata\": {\"uid\": ");
        ncm_buf_json_string(&b, p->uid, strlen(p->uid));
        ncm_buf_puts(&b, ", \"name\": ");
        ncm_buf_json_string(&b, p->name ? p->name : "", p->name ? strlen(p->name) : 0);
        ncm_buf_puts(&b, ", \"namespace\": ");
        ncm_buf_json_string(&b, p->namespace ? p->namespace : "default",
                            strlen(p->namespace ? p->namespace : "default"));
        ncm_buf_puts(&b, "}, \"spec\": {\"initContainers\": [");
        for (int pass = 0; pass < 2; pass++) {
                if (pass == 1)
                        ncm_buf_puts(&b, "], \"containers\": [");
                any = false;
                for (size_t i = 0; i < p->n_containers && r >= 0; i++) {
                        const ncm_runtime_container *c = &p->containers[i];
                        if (in_init(c, all_app) != (pass == 0))
                                continue;
                        if (any)
                                ncm_buf_puts(&b, ", ");
                        any = true;
                        r = put_container(&b, p, c, !all_app, err);
                }
        }
        ncm_buf_puts(&b, "]}}");
        if (r >= 0 && ncm_buf_failed(&b))
                r = ncm_error_set(err, ENOMEM, "out of memory");
        if (r >= 0) {
                /* a runtime's ids name containers made without Kubernetes (NCM__POD_RUNTIME) */
                json_object *obj = NULL;
                r = ncm__json_parse(b.data, b.len, "pod", &obj, err);
                if (r >= 0)
                        r = ncm__pod_from_json_flags(obj, "", NCM__POD_RUNTIME, &pod, err);
                json_object_put(obj);
        }
        ncm_buf_done(&b);
        if (r < 0)
                return r;
        if (p->has_qos && pod->qos != p->qos)
                return ncm_error_set(err, EINVAL,
                                     "pod '%s': its cgroup says %s, its containers' resources make "
                                     "it %s",
                                     p->uid, qos_word(p->qos), qos_word(pod->qos));
        *ret = NCM_TAKE_PTR(pod);
        return 0;
}
