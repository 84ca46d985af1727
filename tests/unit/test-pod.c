/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod model: reading JSON and YAML pods, the API server's defaulting, every field error
 * with its exact message, the kubelet's QoS tables (pkg/apis/core/v1/helper/qos) and
 * component-helpers' PodRequests/PodLimits tables.
 *
 * The Go tables build v1.Pod values in code, which skips API defaulting; they are replayed
 * with NCM__POD_AS_GIVEN. Defaulting has tests of its own below.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/pod.h>
#include "base/json.h"
#include "pod/pod-internal.h"
#include "testutil.h"

/* --- building pods --- */

/* "cpu=1,memory=5" -> {"cpu":"1","memory":"5"}; NULL -> nothing written by the caller. */
static void put_list(ncm_buf *b, const char *spec)
{
        const char *p = spec;
        ncm_buf_putc(b, '{');
        while (*p) {
                const char *eq = strchr(p, '='), *end = strchr(p, ',');
                if (!end)
                        end = p + strlen(p);
                assert_non_null(eq);
                if (p != spec)
                        ncm_buf_putc(b, ',');
                ncm_buf_json_string(b, p, (size_t)(eq - p));
                ncm_buf_putc(b, ':');
                ncm_buf_json_string(b, eq + 1, (size_t)(end - eq - 1));
                p = *end ? end + 1 : end;
        }
        ncm_buf_putc(b, '}');
}

static void put_requirements(ncm_buf *b, const char *req, const char *lim)
{
        bool first = true;
        ncm_buf_putc(b, '{');
        if (req) {
                ncm_buf_puts(b, "\"requests\":");
                put_list(b, req);
                first = false;
        }
        if (lim) {
                if (!first)
                        ncm_buf_putc(b, ',');
                ncm_buf_puts(b, "\"limits\":");
                put_list(b, lim);
        }
        ncm_buf_putc(b, '}');
}

struct ctr {
        const char *name; /* NULL ends a list */
        const char *req, *lim;
        bool sidecar;
};

#define MAX_CTR 6

struct pod_spec {
        struct ctr init[MAX_CTR];
        struct ctr app[MAX_CTR];
        bool pod_level; /* write spec.resources */
        const char *pod_req, *pod_lim;
        const char *overhead;
};

static void put_containers(ncm_buf *b, const char *key, const struct ctr *cs)
{
        ncm_buf_printf(b, ",\"%s\":[", key);
        for (int i = 0; i < MAX_CTR && cs[i].name; i++) {
                if (i)
                        ncm_buf_putc(b, ',');
                ncm_buf_puts(b, "{\"name\":");
                ncm_buf_json_string(b, cs[i].name, strlen(cs[i].name));
                if (cs[i].sidecar)
                        ncm_buf_puts(b, ",\"restartPolicy\":\"Always\"");
                ncm_buf_puts(b, ",\"resources\":");
                put_requirements(b, cs[i].req, cs[i].lim);
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, ']');
}

static char *pod_json(const struct pod_spec *s)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_buf_puts(&b, "{\"metadata\":{\"uid\":\"uid-1\",\"name\":\"p\"},\"spec\":{\"x\":0");
        put_containers(&b, "initContainers", s->init);
        put_containers(&b, "containers", s->app);
        if (s->pod_level) {
                ncm_buf_puts(&b, ",\"resources\":");
                put_requirements(&b, s->pod_req, s->pod_lim);
        }
        if (s->overhead) {
                ncm_buf_puts(&b, ",\"overhead\":");
                put_list(&b, s->overhead);
        }
        ncm_buf_puts(&b, "}}");
        assert_false(ncm_buf_failed(&b));
        return ncm_buf_steal(&b);
}

static ncm_pod *from_json(const char *text, unsigned flags)
{
        ncm_autojson obj = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;
        if (ncm__json_parse(text, strlen(text), "test", &obj, &err) < 0)
                fail_msg("%s: %s", text, err.msg);
        if (ncm__pod_from_json_flags(obj, "", flags, &pod, &err) < 0)
                fail_msg("%s: %s", text, err.msg);
        return pod;
}

static ncm_pod *build(const struct pod_spec *s, unsigned flags)
{
        ncm_autofree char *text = pod_json(s);
        return from_json(text, flags);
}

/* Pods as text, JSON or YAML, through the public entry point. */
static ncm_pod *load(const char *text)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;
        if (ncm_pod_parse(text, strlen(text), "pod", &pod, &err) < 0)
                fail_msg("%s", err.msg);
        return pod;
}

static void expect_error(const char *text, int code, const char *msg)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = (ncm_pod *)(uintptr_t)1;
        int r = ncm_pod_parse(text, strlen(text), NULL, &pod, &err);
        if (r != -code || strcmp(err.msg, msg) != 0)
                fail_msg("%s\n  expected %d \"%s\"\n  got      %d \"%s\"", text, -code, msg, r,
                         err.msg);
        /* *ret untouched on failure */
        assert_ptr_equal(pod, (ncm_pod *)(uintptr_t)1);
}

/* L holds exactly the resources of WANT ("cpu=6,memory=15"), compared by value. */
static void assert_list(const ncm_resource_list *l, const char *want, const char *what)
{
        size_t n = 0;
        char buf[NCM_QUANTITY_STRLEN];
        const char *p = want;
        while (*p) {
                char name[128], val[64];
                const char *eq = strchr(p, '='), *end = strchr(p, ',');
                const ncm_quantity *got;
                ncm_quantity q;
                if (!end)
                        end = p + strlen(p);
                snprintf(name, sizeof(name), "%.*s", (int)(eq - p), p);
                snprintf(val, sizeof(val), "%.*s", (int)(end - eq - 1), eq + 1);
                assert_int_equal(ncm_quantity_parse(val, &q, NULL), 0);
                got = ncm_resource_list_get(l, name);
                if (!got)
                        fail_msg("%s: %s missing (want %s)", what, name, want);
                if (ncm_quantity_cmp(got, &q) != 0)
                        fail_msg("%s: %s = %s, want %s", what, name,
                                 ncm_quantity_to_string(got, buf), val);
                n++;
                p = *end ? end + 1 : end;
        }
        if (l->n != n)
                fail_msg("%s: %zu resources, want %zu (%s)", what, l->n, n, want);
        for (size_t i = 1; i < l->n; i++)
                assert_true(strcmp(l->items[i - 1].name, l->items[i].name) < 0);
}

static void assert_totals(const ncm_pod *pod, unsigned flags, const char *req, const char *lim,
                          const char *what)
{
        ncm_resource_list l = {(ncm_resource *)(uintptr_t)1, 99};
        ncm_error err = NCM_ERROR_INIT;
        if (req) {
                if (ncm_pod_requests(pod, flags, &l, &err) < 0)
                        fail_msg("%s: %s", what, err.msg);
                assert_list(&l, req, what);
                ncm_resource_list_done(&l);
        }
        if (lim) {
                if (ncm_pod_limits(pod, flags, &l, &err) < 0)
                        fail_msg("%s: %s", what, err.msg);
                assert_list(&l, lim, what);
                ncm_resource_list_done(&l);
        }
}

/* --- QoS (TestComputePodQOS) --- */

struct qos_case {
        const char *name;
        struct pod_spec spec;
        ncm_qos_class expect;
};

static const struct qos_case qos_table[] = {
                {"guaranteed",
                 {.app = {{"guaranteed", "cpu=100m,memory=100Mi", "cpu=100m,memory=100Mi", false}}},
                 NCM_QOS_GUARANTEED},
                {"guaranteed-guaranteed",
                 {.app = {{"g1", "cpu=100m,memory=100Mi", "cpu=100m,memory=100Mi", false},
                          {"g2", "cpu=100m,memory=100Mi", "cpu=100m,memory=100Mi", false}}},
                 NCM_QOS_GUARANTEED},
                {"best-effort-best-effort",
                 {.app = {{"b1", "", "", false}, {"b2", "", "", false}}},
                 NCM_QOS_BEST_EFFORT},
                {"best-effort", {.app = {{"b", "", "", false}}}, NCM_QOS_BEST_EFFORT},
                {"best-effort-burstable",
                 {.app = {{"b", "", "", false}, {"burstable", "cpu=1", "cpu=2", false}}},
                 NCM_QOS_BURSTABLE},
                {"best-effort-guaranteed",
                 {.app = {{"b", "", "", false},
                          {"g", "cpu=10m,memory=100Mi", "cpu=10m,memory=100Mi", false}}},
                 NCM_QOS_BURSTABLE},
                {"burstable-cpu-guaranteed-memory",
                 {.app = {{"b", "memory=100Mi", "memory=100Mi", false}}},
                 NCM_QOS_BURSTABLE},
                {"burstable-no-limits",
                 {.app = {{"b", "cpu=100m,memory=100Mi", "", false}}},
                 NCM_QOS_BURSTABLE},
                {"burstable-guaranteed",
                 {.app = {{"b", "cpu=1,memory=100Mi", "cpu=2,memory=100Mi", false},
                          {"g", "cpu=100m,memory=100Mi", "cpu=100m,memory=100Mi", false}}},
                 NCM_QOS_BURSTABLE},
                {"burstable-unbounded-but-requests-match-limits",
                 {.app = {{"b", "cpu=100m,memory=100Mi", "cpu=200m,memory=200Mi", false},
                          {"u", "cpu=100m,memory=100Mi", "", false}}},
                 NCM_QOS_BURSTABLE},
                {"burstable-1",
                 {.app = {{"b", "cpu=10m,memory=100Mi", "cpu=100m,memory=200Mi", false}}},
                 NCM_QOS_BURSTABLE},
                {"burstable-2",
                 {.app = {{"b", "cpu=0,memory=0", "cpu=100m,memory=200Mi", false}}},
                 NCM_QOS_BURSTABLE},
                {"best-effort-hugepages",
                 {.app = {{"b", "cpu=0,memory=0,hugepages-2Mi=1Gi",
                           "cpu=0,memory=0,hugepages-2Mi=1Gi", false}}},
                 NCM_QOS_BEST_EFFORT},
                {"init-container",
                 {.init = {{"burstable", "cpu=10m,memory=100Mi", "cpu=100m,memory=200Mi", false}},
                  .app = {{"b", "", "", false}}},
                 NCM_QOS_BURSTABLE},
                {"guaranteed-with-pod-level-resources",
                 {.app = {{"b", "", "", false}},
                  .pod_level = true,
                  .pod_req = "cpu=10m,memory=100Mi",
                  .pod_lim = "cpu=10m,memory=100Mi"},
                 NCM_QOS_GUARANTEED},
                {"guaranteed-with-pod-and-container-level-resources",
                 {.app = {{"b", "cpu=3m,memory=10Mi", "cpu=5m,memory=20Mi", false}},
                  .pod_level = true,
                  .pod_req = "cpu=10m,memory=100Mi",
                  .pod_lim = "cpu=10m,memory=100Mi"},
                 NCM_QOS_GUARANTEED},
                {"burstable-with-pod-level-resources",
                 {.app = {{"b", "", "", false}},
                  .pod_level = true,
                  .pod_req = "cpu=10m,memory=10Mi",
                  .pod_lim = "cpu=20m,memory=50Mi"},
                 NCM_QOS_BURSTABLE},
                {"burstable-with-pod-and-container-level-resources",
                 {.app = {{"b", "cpu=5m,memory=10Mi", "cpu=5m,memory=10Mi", false}},
                  .pod_level = true,
                  .pod_req = "cpu=10m,memory=10Mi",
                  .pod_lim = "cpu=20m,memory=50Mi"},
                 NCM_QOS_BURSTABLE},
                {"burstable-with-pod-and-container-level-requests",
                 {.app = {{"b", "cpu=5m,memory=10Mi", "", false}},
                  .pod_level = true,
                  .pod_req = "cpu=10m,memory=10Mi",
                  .pod_lim = ""},
                 NCM_QOS_BURSTABLE},
                {"burstable-with-pod-and-container-level-resources-2",
                 {.app = {{"b", "cpu=5m,memory=10Mi", "", false},
                          {"g", "cpu=5m,memory=10Mi", "cpu=5m,memory=10Mi", false}},
                  .pod_level = true,
                  .pod_req = "cpu=10m,memory=10Mi",
                  .pod_lim = "cpu=5m"},
                 NCM_QOS_BURSTABLE},
                /* beyond the Go table */
                {"sidecar-best-effort-app-guaranteed",
                 {.init = {{"s", "", "", true}},
                  .app = {{"g", "cpu=1,memory=1Gi", "cpu=1,memory=1Gi", false}}},
                 NCM_QOS_BURSTABLE},
                {"all-guaranteed-with-init",
                 {.init = {{"i", "cpu=1,memory=1Gi", "cpu=1,memory=1Gi", false}},
                  .app = {{"g", "cpu=2,memory=1Gi", "cpu=2,memory=1Gi", false}}},
                 NCM_QOS_GUARANTEED},
                {"only-extended-resources",
                 {.app = {{"e", "example.com/gpu=1", "example.com/gpu=1", false}}},
                 NCM_QOS_BEST_EFFORT},
                {"equal-values-other-units",
                 {.app = {{"g", "cpu=1000m,memory=1Gi", "cpu=1,memory=1024Mi", false}}},
                 NCM_QOS_GUARANTEED},
                {"pod-level-empty-block-wins",
                 {.app = {{"g", "cpu=1,memory=1Gi", "cpu=1,memory=1Gi", false}}, .pod_level = true},
                 NCM_QOS_BEST_EFFORT},
};

static void test_pod_qos_table(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(qos_table); i++) {
                ncm_autoptr(ncm_pod) pod = build(&qos_table[i].spec, NCM__POD_AS_GIVEN);
                if (pod->qos != qos_table[i].expect)
                        fail_msg("%s: %s, want %s", qos_table[i].name, ncm_qos_class_name(pod->qos),
                                 ncm_qos_class_name(qos_table[i].expect));
                assert_int_equal(ncm_pod_compute_qos(pod), pod->qos);
        }
}

/* The same pods after API defaulting (the one the API server rejects left out). */
static void test_pod_qos_table_defaulted(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(qos_table); i++) {
                if (strcmp(qos_table[i].name,
                           "burstable-with-pod-and-container-level-resources-2") == 0)
                        continue;
                ncm_autoptr(ncm_pod) pod = build(&qos_table[i].spec, 0);
                if (pod->qos != qos_table[i].expect)
                        fail_msg("%s: %s, want %s", qos_table[i].name, ncm_qos_class_name(pod->qos),
                                 ncm_qos_class_name(qos_table[i].expect));
        }
}

static void test_pod_qos_names(void **state)
{
        (void)state;
        assert_string_equal(ncm_qos_class_name(NCM_QOS_GUARANTEED), "Guaranteed");
        assert_string_equal(ncm_qos_class_name(NCM_QOS_BURSTABLE), "Burstable");
        assert_string_equal(ncm_qos_class_name(NCM_QOS_BEST_EFFORT), "BestEffort");
}

/* A container with limits only is Guaranteed once the API server copies them into requests. */
static void test_pod_qos_limits_only_is_guaranteed(void **state)
{
        struct pod_spec s = {.app = {{"app", NULL, "cpu=2,memory=1Gi", false}}};
        (void)state;
        {
                ncm_autoptr(ncm_pod) raw = build(&s, NCM__POD_AS_GIVEN);
                assert_int_equal(raw->qos, NCM_QOS_BURSTABLE);
        }
        {
                ncm_autoptr(ncm_pod) pod = build(&s, 0);
                assert_int_equal(pod->qos, NCM_QOS_GUARANTEED);
                assert_list(&pod->containers[0].resources.requests, "cpu=2,memory=1Gi", "requests");
        }
}

/* --- totals (component-helpers) --- */

struct total_case {
        const char *name;
        struct pod_spec spec;
        unsigned flags;
        const char *req, *lim; /* NULL: not checked */
};

static const struct total_case total_table[] = {
                /* TestPodRequestsAndLimits */
                {"just-limit-no-overhead",
                 {.app = {{"foo", NULL, "cpu=9", false}}},
                 0,
                 "",
                 "cpu=9"},
                {"just-overhead",
                 {.app = {{"foo", NULL, NULL, false}}, .overhead = "cpu=5,memory=5"},
                 0,
                 "cpu=5,memory=5",
                 ""},
                {"req-and-overhead",
                 {.app = {{"foo", "cpu=1,memory=10", NULL, false}}, .overhead = "cpu=5,memory=5"},
                 0,
                 "cpu=6,memory=15",
                 ""},
                {"all-req-lim-and-overhead",
                 {.app = {{"foo", "cpu=1,memory=10", "cpu=2,memory=12", false}},
                  .overhead = "cpu=5,memory=5"},
                 0,
                 "cpu=6,memory=15",
                 "cpu=7,memory=17"},
                {"req-some-lim-and-overhead",
                 {.app = {{"foo", "cpu=1,memory=10", "cpu=2", false}},
                  .overhead = "cpu=5,memory=5"},
                 0,
                 "cpu=6,memory=15",
                 "cpu=7"},
                /* TestPodRequestsAndLimitsWithoutOverhead */
                {"two containers no overhead",
                 {.app = {{"foobar", "cpu=1,memory=5", "cpu=2,memory=10", false},
                          {"foobar2", "cpu=4,memory=12", "cpu=8,memory=24", false}}},
                 NCM_POD_EXCLUDE_OVERHEAD,
                 "cpu=5,memory=17",
                 "cpu=10,memory=34"},
                {"two containers with overhead excluded",
                 {.app = {{"foobar", "cpu=1,memory=5", "cpu=2,memory=10", false},
                          {"foobar2", "cpu=4,memory=12", "cpu=8,memory=24", false}},
                  .overhead = "cpu=3,memory=8"},
                 NCM_POD_EXCLUDE_OVERHEAD,
                 "cpu=5,memory=17",
                 "cpu=10,memory=34"},
                {"massive init",
                 {.init = {{"small-init", "cpu=1,memory=5", "cpu=1,memory=5", false},
                           {"big-init", "cpu=40,memory=120", "cpu=80,memory=240", false}},
                  .app = {{"foobar", "cpu=1,memory=5", "cpu=2,memory=10", false},
                          {"foobar2", "cpu=4,memory=12", "cpu=8,memory=24", false}},
                  .overhead = "cpu=3,memory=8"},
                 NCM_POD_EXCLUDE_OVERHEAD,
                 "cpu=40,memory=120",
                 "cpu=80,memory=240"},
                /* TestPodResourceRequests */
                {"larger init container",
                 {.init = {{"i", "cpu=4", NULL, false}}, .app = {{"c", "cpu=1", NULL, false}}},
                 0,
                 "cpu=4",
                 NULL},
                {"larger containers",
                 {.init = {{"i", "cpu=2", NULL, false}},
                  .app = {{"c1", "cpu=2", NULL, false}, {"c2", "cpu=3", NULL, false}}},
                 0,
                 "cpu=5",
                 NULL},
                {"pod overhead excluded",
                 {.init = {{"i", "cpu=2", NULL, false}},
                  .app = {{"c1", "cpu=2", NULL, false}, {"c2", "cpu=3", NULL, false}},
                  .overhead = "cpu=1"},
                 NCM_POD_EXCLUDE_OVERHEAD,
                 "cpu=5",
                 NULL},
                {"pod overhead included",
                 {.init = {{"i", "cpu=2", "cpu=2", false}},
                  .app = {{"c1", "cpu=2", NULL, false}, {"c2", "cpu=3", NULL, false}},
                  .overhead = "cpu=1,memory=1Gi"},
                 0,
                 "cpu=6,memory=1Gi",
                 "cpu=3"},
                /* TestPodResourceLimits, sidecars */
                {"restartable init container",
                 {.init = {{"restartable-init-1", NULL, "cpu=1", true}},
                  .app = {{"c", NULL, "cpu=1", false}}},
                 0,
                 NULL,
                 "cpu=2"},
                {"multiple restartable init containers",
                 {.init = {{"init-1", NULL, "cpu=5", false},
                           {"restartable-init-1", NULL, "cpu=1", true},
                           {"restartable-init-2", NULL, "cpu=2", true},
                           {"restartable-init-3", NULL, "cpu=3", true}},
                  .app = {{"c", NULL, "cpu=1", false}}},
                 0,
                 NULL,
                 "cpu=7"},
                {"multiple restartable and regular init containers",
                 {.init = {{"init-1", NULL, "cpu=5", false},
                           {"restartable-init-1", NULL, "cpu=1", true},
                           {"restartable-init-2", NULL, "cpu=2", true},
                           {"init-2", NULL, "cpu=5", false},
                           {"restartable-init-3", NULL, "cpu=3", true}},
                  .app = {{"c", NULL, "cpu=1", false}}},
                 0,
                 NULL,
                 "cpu=8"},
                {"restartable-init, init and regular",
                 {.init = {{"restartable-init-1", NULL, "cpu=10", true},
                           {"init-1", NULL, "cpu=200", false}},
                  .app = {{"c", NULL, "cpu=100", false}}},
                 0,
                 NULL,
                 "cpu=210"},
                {"unlimited init container",
                 {.init = {{"i1", NULL, "cpu=2,memory=2Gi", false}, {"i2", NULL, NULL, false}},
                  .app = {{"c", NULL, "cpu=1,memory=1Gi", false}}},
                 0,
                 NULL,
                 "cpu=2,memory=2Gi"},
                /* the same sidecar rules on requests */
                {"sidecar requests",
                 {.init = {{"init-1", "cpu=5", NULL, false},
                           {"restartable-init-1", "cpu=1", NULL, true},
                           {"restartable-init-2", "cpu=2", NULL, true},
                           {"init-2", "cpu=5", NULL, false},
                           {"restartable-init-3", "cpu=3", NULL, true}},
                  .app = {{"c", "cpu=1", NULL, false}}},
                 0,
                 "cpu=8",
                 NULL},
                /* TestPodLevelResourceRequests */
                {"nil", {.app = {{"c", NULL, NULL, false}}}, 0, "", ""},
                {"pod level memory, skip pod level",
                 {.app = {{"c", NULL, NULL, false}}, .pod_level = true, .pod_req = "memory=2Mi"},
                 NCM_POD_SKIP_POD_LEVEL,
                 "",
                 NULL},
                {"pod level memory",
                 {.app = {{"c", NULL, NULL, false}}, .pod_level = true, .pod_req = "memory=2Mi"},
                 0,
                 "memory=2Mi",
                 NULL},
                {"pod level memory and container level cpu",
                 {.app = {{"c", "cpu=2m", NULL, false}},
                  .pod_level = true,
                  .pod_req = "memory=2Mi"},
                 0,
                 "memory=2Mi,cpu=2m",
                 NULL},
                {"pod level unsupported resources at both levels",
                 {.app = {{"c", "storage=3Mi", NULL, false}},
                  .pod_level = true,
                  .pod_req = "storage=2Mi"},
                 0,
                 "storage=3Mi",
                 NULL},
                {"pod level unsupported resources at pod level",
                 {.app = {{"c", "memory=3Mi", NULL, false}},
                  .pod_level = true,
                  .pod_req = "storage=2Mi"},
                 0,
                 "memory=3Mi",
                 NULL},
                {"only container level",
                 {.app = {{"c", "memory=3Mi,cpu=2m", NULL, false}}},
                 0,
                 "memory=3Mi,cpu=2m",
                 NULL},
                {"both levels",
                 {.app = {{"c", "memory=3Mi,cpu=2m", NULL, false}},
                  .pod_level = true,
                  .pod_req = "memory=6Mi,cpu=8m"},
                 0,
                 "memory=6Mi,cpu=8m",
                 NULL},
                {"container and init",
                 {.init = {{"i", "memory=5Mi,cpu=4m", NULL, false}},
                  .app = {{"c", "memory=3Mi,cpu=2m", NULL, false}}},
                 0,
                 "memory=5Mi,cpu=4m",
                 NULL},
                {"container and init, skip pod level",
                 {.init = {{"i", "memory=5Mi,cpu=4m", NULL, false}},
                  .app = {{"c", "memory=3Mi,cpu=2m", NULL, false}}},
                 NCM_POD_SKIP_POD_LEVEL,
                 "memory=5Mi,cpu=4m",
                 NULL},
                {"container and sidecar",
                 {.init = {{"s", "memory=5Mi,cpu=4m", NULL, true}},
                  .app = {{"c", "memory=3Mi,cpu=2m", NULL, false}}},
                 0,
                 "memory=8Mi,cpu=6m",
                 NULL},
                {"container, sidecar and init",
                 {.init = {{"s", "memory=5Mi,cpu=4m", NULL, true},
                           {"i", "memory=6Mi,cpu=8m", NULL, false}},
                  .app = {{"c", "memory=3Mi,cpu=2m", NULL, false}}},
                 0,
                 "memory=11Mi,cpu=12m",
                 NULL},
                {"pod level over container, sidecar and init",
                 {.init = {{"s", "memory=5Mi,cpu=4m", NULL, true},
                           {"i", "memory=6Mi,cpu=8m", NULL, false}},
                  .app = {{"c", "memory=3Mi,cpu=2m", NULL, false}},
                  .pod_level = true,
                  .pod_req = "memory=15Mi,cpu=18m"},
                 0,
                 "memory=15Mi,cpu=18m",
                 NULL},
                {"pod level hugepages, single size",
                 {.app = {{"c", NULL, NULL, false}},
                  .pod_level = true,
                  .pod_req = "memory=10Mi,hugepages-2Mi=2Mi",
                  .pod_lim = "hugepages-2Mi=2Mi"},
                 0,
                 "memory=10Mi,hugepages-2Mi=2Mi",
                 "hugepages-2Mi=2Mi"},
                {"pod level hugepages, multiple sizes",
                 {.app = {{"c", NULL, NULL, false}},
                  .pod_level = true,
                  .pod_req = "cpu=1,hugepages-2Mi=2Mi,hugepages-1Gi=1Gi",
                  .pod_lim = "hugepages-2Mi=2Mi,hugepages-1Gi=1Gi"},
                 0,
                 "cpu=1,hugepages-2Mi=2Mi,hugepages-1Gi=1Gi",
                 NULL},
                {"pod and container hugepages, single size",
                 {.app = {{"c", "hugepages-2Mi=6Mi", "hugepages-2Mi=6Mi", false}},
                  .pod_level = true,
                  .pod_req = "cpu=1,hugepages-2Mi=10Mi",
                  .pod_lim = "hugepages-2Mi=10Mi"},
                 0,
                 "cpu=1,hugepages-2Mi=10Mi",
                 "hugepages-2Mi=10Mi"},
                {"pod and container hugepages, multiple sizes",
                 {.app = {{"c", "cpu=1,hugepages-1Gi=2Gi", "hugepages-1Gi=2Gi", false}},
                  .pod_level = true,
                  .pod_req = "cpu=1,hugepages-2Mi=10Mi,hugepages-1Gi=2Gi",
                  .pod_lim = "hugepages-2Mi=10Mi,hugepages-1Gi=2Gi"},
                 0,
                 "cpu=1,hugepages-2Mi=10Mi,hugepages-1Gi=2Gi",
                 NULL},
                {"hugepage sizes split between pod and container",
                 {.app = {{"c", "memory=4Mi,hugepages-1Gi=1Gi", "hugepages-1Gi=1Gi", false}},
                  .pod_level = true,
                  .pod_req = "cpu=1,hugepages-2Mi=10Mi",
                  .pod_lim = "hugepages-2Mi=10Mi"},
                 0,
                 "cpu=1,memory=4Mi,hugepages-2Mi=10Mi,hugepages-1Gi=1Gi",
                 "hugepages-2Mi=10Mi,hugepages-1Gi=1Gi"},
                /* pod-level limits replace the aggregate; overhead only raises non-zero limits */
                {"pod level limits and overhead",
                 {.app = {{"c", "cpu=1", "cpu=2,memory=0", false}},
                  .pod_level = true,
                  .pod_req = "cpu=1",
                  .pod_lim = "cpu=4",
                  .overhead = "cpu=250m,memory=64Mi"},
                 0,
                 "cpu=1250m,memory=64Mi",
                 "cpu=4250m,memory=0"},
                {"limits of unsupported resources only: no pod-level limits",
                 {.app = {{"c", NULL, "cpu=2", false}},
                  .pod_level = true,
                  .pod_lim = "ephemeral-storage=1Gi"},
                 0,
                 NULL,
                 "cpu=2"},
};

static void test_pod_totals_table(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(total_table); i++) {
                const struct total_case *c = &total_table[i];
                ncm_autoptr(ncm_pod) pod = build(&c->spec, NCM__POD_AS_GIVEN);
                assert_totals(pod, c->flags, c->req, c->lim, c->name);
        }
}

/* TestIsPodLevelResourcesSet / TestIsPodLevelLimitsSet */
static void test_pod_level_resources_set(void **state)
{
        static const struct {
                bool present;
                const char *req, *lim;
                bool expect;
        } table[] = {
                        {false, NULL, NULL, false},
                        {true, NULL, NULL, false},
                        {true, "ephemeral-storage=1Mi", NULL, false},
                        {true, NULL, "ephemeral-storage=1Mi", false},
                        {true, "ephemeral-storage=1Mi,cpu=1m", NULL, true},
                        {true, NULL, "ephemeral-storage=1Mi,cpu=1m", true},
                        {true, "hugepages-1Gi=1Gi", NULL, true},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++) {
                struct pod_spec s = {.app = {{"c", NULL, NULL, false}},
                                     .pod_level = table[i].present,
                                     .pod_req = table[i].req,
                                     .pod_lim = table[i].lim};
                ncm_autoptr(ncm_pod) pod = build(&s, NCM__POD_AS_GIVEN);
                assert_int_equal(ncm_pod_level_resources_set(pod), table[i].expect);
                assert_int_equal(pod->has_pod_resources, table[i].present);
        }
        assert_true(ncm_resource_is_pod_level("cpu"));
        assert_true(ncm_resource_is_pod_level("memory"));
        assert_true(ncm_resource_is_pod_level("hugepages-2Mi"));
        assert_false(ncm_resource_is_pod_level("ephemeral-storage"));
        assert_false(ncm_resource_is_pod_level("example.com/gpu"));
}

/* --- reading pods and API defaulting --- */

static const char yaml_pod[] = "apiVersion: v1\n"
                               "kind: Pod\n"
                               "metadata:\n"
                               "  name: web\n"
                               "  namespace: shop\n"
                               "  uid: 2a5f6c1e-0d6b-4c1a-9a55-7d0b3e9c1f00\n"
                               "spec:\n"
                               "  initContainers:\n"
                               "  - name: setup\n"
                               "    image: busybox\n"
                               "    resources:\n"
                               "      limits: {cpu: \"2\", memory: 1Gi}\n"
                               "  - name: proxy\n"
                               "    restartPolicy: Always\n"
                               "    resources:\n"
                               "      requests: {cpu: 500m}\n"
                               "      limits: {cpu: 1}\n"
                               "  containers:\n"
                               "  - name: app\n"
                               "    ports: [{containerPort: 80}]\n"
                               "    resources:\n"
                               "      requests:\n"
                               "        cpu: 1.5\n"
                               "        memory: 512Mi\n"
                               "      limits:\n"
                               "        cpu: 2\n"
                               "        memory: 1Gi\n"
                               "        hugepages-2Mi: 4Mi\n"
                               "status:\n"
                               "  qosClass: Guaranteed\n";

static void test_pod_yaml(void **state)
{
        ncm_autoptr(ncm_pod) pod = load(yaml_pod);
        const ncm_container *c;
        (void)state;
        assert_string_equal(pod->uid, "2a5f6c1e-0d6b-4c1a-9a55-7d0b3e9c1f00");
        assert_string_equal(pod->name, "web");
        assert_string_equal(pod->ns, "shop");
        assert_int_equal(pod->n_init_containers, 2);
        assert_int_equal(pod->n_containers, 1);
        assert_false(pod->has_pod_resources);
        /* status.qosClass is ignored: the API server recomputes it. */
        assert_int_equal(pod->qos, NCM_QOS_BURSTABLE);

        c = &pod->init_containers[0];
        assert_string_equal(c->name, "setup");
        assert_true(c->init);
        assert_false(c->sidecar);
        assert_int_equal(c->index, 0);
        assert_list(&c->resources.requests, "cpu=2,memory=1Gi", "setup requests");
        c = &pod->init_containers[1];
        assert_true(c->sidecar);
        assert_int_equal(c->index, 1);
        assert_list(&c->resources.requests, "cpu=500m", "proxy requests");
        c = &pod->containers[0];
        assert_false(c->init);
        assert_false(c->sidecar);
        assert_list(&c->resources.requests, "cpu=1500m,memory=512Mi,hugepages-2Mi=4Mi",
                    "app requests");
        assert_list(&c->resources.limits, "cpu=2,memory=1Gi,hugepages-2Mi=4Mi", "app limits");

        assert_ptr_equal(ncm_pod_find_container(pod, "proxy"), &pod->init_containers[1]);
        assert_ptr_equal(ncm_pod_find_container(pod, "app"), &pod->containers[0]);
        assert_null(ncm_pod_find_container(pod, "nope"));
        assert_non_null(ncm_container_request(&pod->containers[0], "cpu"));
        assert_int_equal(
                        ncm_quantity_milli_value(ncm_container_request(&pod->containers[0], "cpu")),
                        1500);
        assert_int_equal(ncm_quantity_value(ncm_container_limit(&pod->containers[0], "memory")),
                         1073741824);
        assert_null(ncm_container_request(&pod->init_containers[1], "memory"));
        assert_null(ncm_container_limit(&pod->containers[0], "example.com/gpu"));

        /* app 1.5 + sidecar 0.5 = 2 vs init 2 (+ no earlier sidecar); memory: init 1Gi */
        assert_totals(pod, 0, "cpu=2,memory=1Gi,hugepages-2Mi=4Mi",
                      "cpu=3,memory=1Gi,hugepages-2Mi=4Mi", "yaml pod");
}

static void test_pod_json_numbers_and_strings(void **state)
{
        char b[NCM_QUANTITY_STRLEN];
        ncm_autoptr(ncm_pod) pod = load("{\"metadata\": {\"uid\": \"u\"}, \"spec\": "
                                        "{\"containers\": [{\"name\": \"a\", "
                                        "\"resources\": {\"requests\": {\"cpu\": 0.5, \"memory\": "
                                        "1e9, \"example.com/x\": "
                                        "null, \"ephemeral-storage\": \" 1Gi\\u00a0\\n\"}, "
                                        "\"limits\": {\"cpu\": 1, "
                                        "\"memory\": \"1e9\", \"example.com/x\": 0}}}]}}");
        const ncm_resource_list *req = &pod->containers[0].resources.requests;
        (void)state;
        assert_string_equal(ncm_quantity_to_string(ncm_resource_list_get(req, "cpu"), b), "500m");
        assert_string_equal(ncm_quantity_to_string(ncm_resource_list_get(req, "memory"), b), "1e9");
        /* null is a present, zero quantity */
        assert_true(ncm_quantity_is_zero(ncm_resource_list_get(req, "example.com/x")));
        assert_string_equal(
                        ncm_quantity_to_string(ncm_resource_list_get(req, "ephemeral-storage"), b),
                        "1Gi");
        assert_string_equal(pod->name, "");
        assert_string_equal(pod->ns, "default");
        assert_int_equal(pod->qos, NCM_QOS_BURSTABLE);
}

/* SetDefaults_ResourceList rounds every value up to 1m. */
static void test_pod_defaulting_rounds_to_milli(void **state)
{
        char b[NCM_QUANTITY_STRLEN];
        struct pod_spec s = {.app = {{"a", "cpu=100n,memory=1.0001", "cpu=0.0001,memory=2", false}},
                             .overhead = "cpu=1u"};
        (void)state;
        {
                ncm_autoptr(ncm_pod) pod = build(&s, 0);
                const ncm_container *c = &pod->containers[0];
                assert_string_equal(ncm_quantity_to_string(ncm_container_request(c, "cpu"), b),
                                    "1m");
                assert_string_equal(ncm_quantity_to_string(ncm_container_limit(c, "cpu"), b), "1m");
                assert_string_equal(ncm_quantity_to_string(ncm_container_request(c, "memory"), b),
                                    "1001m");
                assert_string_equal(
                                ncm_quantity_to_string(ncm_resource_list_get(&pod->overhead, "cpu"),
                                                       b),
                                "1m");
        }
        {
                ncm_autoptr(ncm_pod) raw = build(&s, NCM__POD_AS_GIVEN);
                assert_string_equal(
                                ncm_quantity_to_string(
                                                ncm_container_request(&raw->containers[0], "cpu"),
                                                b),
                                "100n");
        }
}

static void test_pod_defaulting_pod_level(void **state)
{
        (void)state;
        {
                /* defaultPodRequests: cpu from the containers' aggregate, memory from the limit */
                struct pod_spec s = {.init = {{"i", "cpu=300m", NULL, false}},
                                     .app = {{"a", "cpu=500m", NULL, false},
                                             {"b", "cpu=250m", NULL, false}},
                                     .pod_level = true,
                                     .pod_lim = "cpu=2,memory=1Gi"};
                ncm_autoptr(ncm_pod) pod = build(&s, 0);
                assert_list(&pod->resources.requests, "cpu=750m,memory=1Gi", "pod requests");
                assert_list(&pod->resources.limits, "cpu=2,memory=1Gi", "pod limits");
                assert_int_equal(pod->qos, NCM_QOS_BURSTABLE);
                assert_totals(pod, 0, "cpu=750m,memory=1Gi", "cpu=2,memory=1Gi", "pod level");
        }
        {
                /* no container requests: requests = limits, Guaranteed */
                struct pod_spec s = {.app = {{"a", NULL, NULL, false}, {"b", NULL, NULL, false}},
                                     .pod_level = true,
                                     .pod_lim = "cpu=2,memory=1Gi"};
                ncm_autoptr(ncm_pod) pod = build(&s, 0);
                assert_list(&pod->resources.requests, "cpu=2,memory=1Gi", "pod requests");
                assert_int_equal(pod->qos, NCM_QOS_GUARANTEED);
        }
        {
                /* defaultHugePagePodLimits, then requests from those limits */
                struct pod_spec s = {.app = {{"a", NULL, "hugepages-2Mi=4Mi", false}},
                                     .pod_level = true,
                                     .pod_req = "cpu=1"};
                ncm_autoptr(ncm_pod) pod = build(&s, 0);
                assert_list(&pod->resources.limits, "hugepages-2Mi=4Mi", "pod limits");
                assert_list(&pod->resources.requests, "cpu=1,hugepages-2Mi=4Mi", "pod requests");
                assert_int_equal(pod->qos, NCM_QOS_BURSTABLE);
        }
        {
                /* defaultPodLimits: only for resources every container limits */
                struct pod_spec s = {.init = {{"i", NULL, "cpu=3", false}},
                                     .app = {{"a", NULL, "cpu=1,memory=1Gi", false},
                                             {"b", NULL, "cpu=1", false}},
                                     .pod_level = true,
                                     .pod_req = "cpu=2,memory=1Gi"};
                ncm_autoptr(ncm_pod) pod = build(&s, 0);
                assert_list(&pod->resources.limits, "cpu=3", "pod limits");
                assert_list(&pod->resources.requests, "cpu=2,memory=1Gi", "pod requests");
        }
        {
                /* spec.resources absent: nothing at pod level */
                struct pod_spec s = {.app = {{"a", NULL, "cpu=1", false}}};
                ncm_autoptr(ncm_pod) pod = build(&s, 0);
                assert_false(pod->has_pod_resources);
                assert_int_equal(pod->resources.requests.n, 0);
                assert_int_equal(pod->resources.limits.n, 0);
        }
}

/* The CPU manager's view of a pod: requests per container, init/sidecar flags. */
static void test_pod_cpu_manager_view(void **state)
{
        ncm_autoptr(ncm_pod) pod =
                        load("metadata: {uid: p1, name: web}\n"
                             "spec:\n"
                             "  initContainers:\n"
                             "  - {name: init, resources: {limits: {cpu: 4, memory: 1Gi}}}\n"
                             "  - {name: side, restartPolicy: Always, resources: {limits: {cpu: 1, "
                             "memory: 1Gi}}}\n"
                             "  containers:\n"
                             "  - {name: app, resources: {limits: {cpu: 2500m, memory: 1Gi}}}\n"
                             "  - {name: app2, resources: {limits: {cpu: '2', memory: 1Gi}}}\n");
        const ncm_quantity *q;
        (void)state;
        assert_int_equal(pod->qos, NCM_QOS_GUARANTEED);
        q = ncm_container_request(&pod->containers[0], NCM_RESOURCE_CPU);
        assert_false(ncm_quantity_is_integer(q));
        q = ncm_container_request(&pod->containers[1], NCM_RESOURCE_CPU);
        assert_true(ncm_quantity_is_integer(q));
        assert_int_equal(ncm_quantity_value(q), 2);
        assert_false(pod->init_containers[0].sidecar);
        assert_true(pod->init_containers[1].sidecar);
}

static void test_pod_hugepage_size(void **state)
{
        uint64_t v = 0;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm_resource_hugepage_size("hugepages-2Mi", &v, NULL), 0);
        assert_int_equal(v, 2097152);
        assert_int_equal(ncm_resource_hugepage_size("hugepages-1Gi", &v, NULL), 0);
        assert_int_equal(v, 1073741824);
        assert_int_equal(ncm_resource_hugepage_size("cpu", &v, &err), -ENOENT);
        assert_string_equal(err.msg, "'cpu' is not a hugepages resource");
        assert_int_equal(ncm_resource_hugepage_size("hugepages-x", &v, &err), -EINVAL);
        assert_string_equal(err.msg,
                            "'hugepages-x': invalid hugepage size: " NCM_QUANTITY_ERR_FORMAT);
        assert_int_equal(ncm_resource_hugepage_size("hugepages-0", &v, &err), -EINVAL);
        assert_string_equal(err.msg, "'hugepages-0': invalid hugepage size: must be positive");
        assert_int_equal(v, 1073741824);
}

/* --- errors --- */

#define C0 "{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":\"a\""
#define RES(x) C0 ",\"resources\":" x "}]}}"

static void test_pod_errors(void **state)
{
        static const struct {
                const char *text;
                int code;
                const char *msg;
        } table[] = {
                        {"[]", EINVAL, "expected a Pod object, got array"},
                        {"null", EINVAL, "expected a Pod object, got null"},
                        {"{\"metadata\":\"x\"}", EINVAL, "metadata: expected object, got string"},
                        {"{}", EINVAL, "metadata.uid: required"},
                        {"{\"metadata\":{\"uid\":\"\"}}", EINVAL, "metadata.uid: required"},
                        {"{\"metadata\":{\"uid\":null}}", EINVAL, "metadata.uid: required"},
                        {"{\"metadata\":{\"uid\":5}}", EINVAL,
                         "metadata.uid: expected string, got number"},
                        {"{\"metadata\":{\"uid\":\"u\",\"name\":1}}", EINVAL,
                         "metadata.name: expected string, got number"},
                        {"{\"metadata\":{\"uid\":\"u\",\"namespace\":[]}}", EINVAL,
                         "metadata.namespace: expected string, got array"},
                        {"{\"metadata\":{\"uid\":\"u\"}}", EINVAL,
                         "spec.containers: at least one container is required"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":[]}", EINVAL,
                         "spec: expected object, got array"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"containers\":[]}}", EINVAL,
                         "spec.containers: at least one container is required"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"containers\":{}}}", EINVAL,
                         "spec.containers: expected array, got object"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"initContainers\":[{\"name\":"
                         "\"i\"}]}}",
                         EINVAL, "spec.containers: at least one container is required"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"containers\":[\"x\"]}}", EINVAL,
                         "spec.containers[0]: expected object, got string"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"containers\":[{}]}}", EINVAL,
                         "spec.containers[0].name: required"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":\"a\"},"
                         "{\"name\":"
                         "\"\"}]}}",
                         EINVAL, "spec.containers[1].name: required"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":3}]}}",
                         EINVAL, "spec.containers[0].name: expected string, got number"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"initContainers\":{}}}", EINVAL,
                         "spec.initContainers: expected array, got object"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"initContainers\":[{\"name\":"
                         "\"i\","
                         "\"restartPolicy\":1}],\"containers\":[{\"name\":\"a\"}]}}",
                         EINVAL,
                         "spec.initContainers[0].restartPolicy: expected string, got number"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"initContainers\":[{\"name\":"
                         "\"a\"}],"
                         "\"containers\":[{\"name\":\"a\"}]}}",
                         EINVAL, "spec.containers[0].name: duplicate container name \"a\""},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":\"a\"},"
                         "{\"name\":"
                         "\"b\"},{\"name\":\"a\"}]}}",
                         EINVAL, "spec.containers[2].name: duplicate container name \"a\""},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"initContainers\":[{\"name\":"
                         "\"i\"},{"
                         "\"name\":\"i\"}],\"containers\":[{\"name\":\"a\"}]}}",
                         EINVAL, "spec.initContainers[1].name: duplicate container name \"i\""},
                        {RES("\"x\""), EINVAL,
                         "spec.containers[0].resources: expected object, got string"},
                        {RES("{\"requests\":[]}"), EINVAL,
                         "spec.containers[0].resources.requests: expected object, got array"},
                        {RES("{\"limits\":{\"cpu\":true}}"), EINVAL,
                         "spec.containers[0].resources.limits.cpu: expected string or number, got "
                         "boolean"},
                        {RES("{\"limits\":{\"cpu\":{}}}"), EINVAL,
                         "spec.containers[0].resources.limits.cpu: expected string or number, got "
                         "object"},
                        {"{\"metadata\":{\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":\"a\"},"
                         "{\"name\":"
                         "\"b\",\"resources\":{\"limits\":{\"cpu\":\"2x\"}}}]}}",
                         EINVAL,
                         "spec.containers[1].resources.limits.cpu: invalid quantity \"2x\": "
                         "quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
                        {RES("{\"requests\":{\"memory\":\"1i\"}}"), EINVAL,
                         "spec.containers[0].resources.requests.memory: invalid quantity \"1i\": "
                         "unable "
                         "to parse quantity's suffix"},
                        {RES("{\"requests\":{\"memory\":\"e-10\"}}"), EINVAL,
                         "spec.containers[0].resources.requests.memory: invalid quantity \"e-10\": "
                         "unable "
                         "to parse numeric part of quantity"},
                        {RES("{\"requests\":{\"memory\":\"\"}}"), EINVAL,
                         "spec.containers[0].resources.requests.memory: invalid quantity \"\": "
                         "quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
                        {RES("{\"requests\":{\"memory\":\"1\\t2\"}}"), EINVAL,
                         "spec.containers[0].resources.requests.memory: invalid quantity "
                         "\"1\\t2\": "
                         "quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
                        {RES("{\"requests\":{\"cpu\":\"-1\"}}"), EINVAL,
                         "spec.containers[0].resources.requests.cpu: invalid value \"-1\": must be "
                         "greater "
                         "than or equal to 0"},
                        {RES("{\"limits\":{\"memory\":-0.5}}"), EINVAL,
                         "spec.containers[0].resources.limits.memory: invalid value \"-500m\": "
                         "must be "
                         "greater than or equal to 0"},
                        {RES("{\"limits\":{\"\":\"1\"}}"), EINVAL,
                         "spec.containers[0].resources.limits: empty resource name"},
                        {RES("{\"limits\":{\"memory\":\"1000000000000000000000000000000000000001\"}"
                             "}"),
                         ERANGE,
                         "spec.containers[0].resources.limits.memory: invalid quantity "
                         "\"1000000000000000000000000000000000000001\": quantity needs more than "
                         "38 "
                         "significant digits"},
                        {RES("{\"limits\":{\"memory\":99999999999999999999}}"), ERANGE,
                         "spec.containers[0].resources.limits.memory: number 18446744073709551615 "
                         "is out "
                         "of range, write the quantity as a string"},
                        {RES("{\"requests\":{\"cpu\":\"2\"},\"limits\":{\"cpu\":\"1\"}}"), EINVAL,
                         "spec.containers[0].resources.requests.cpu: invalid value \"2\": must be "
                         "less than "
                         "or equal to cpu limit of 1"},
                        {RES("{\"requests\":{\"memory\":\"1.5Gi\"},\"limits\":{\"memory\":\"1Gi\"}"
                             "}"),
                         EINVAL,
                         "spec.containers[0].resources.requests.memory: invalid value \"1536Mi\": "
                         "must be "
                         "less than or equal to memory limit of 1Gi"},
                        {RES("{\"requests\":{\"example.com/gpu\":\"1\"}}"), EINVAL,
                         "spec.containers[0].resources.limits.example.com/gpu: required: a limit "
                         "must be "
                         "set for a resource that cannot be overcommitted"},
                        {RES("{\"requests\":{\"example.com/gpu\":\"1\"},\"limits\":{\"example.com/"
                             "gpu\":"
                             "\"2\"}}"),
                         EINVAL,
                         "spec.containers[0].resources.requests.example.com/gpu: invalid value "
                         "\"1\": must "
                         "be equal to example.com/gpu limit of 2"},
                        {RES("{\"requests\":{\"hugepages-2Mi\":\"2Mi\"},\"limits\":{\"hugepages-"
                             "2Mi\":"
                             "\"4Mi\"}}"),
                         EINVAL,
                         "spec.containers[0].resources.requests.hugepages-2Mi: invalid value "
                         "\"2Mi\": must "
                         "be equal to hugepages-2Mi limit of 4Mi"},
                        {C0 "}],\"resources\":\"x\"}}", EINVAL,
                         "spec.resources: expected object, got string"},
                        {C0 "}],\"resources\":{\"limits\":{\"cpu\":\"1x\"}}}}", EINVAL,
                         "spec.resources.limits.cpu: invalid quantity \"1x\": quantities must "
                         "match the "
                         "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
                        {C0 "}],\"resources\":{\"requests\":{\"cpu\":\"2\"},\"limits\":{\"cpu\":"
                            "\"1\"}}}}",
                         EINVAL,
                         "spec.resources.requests.cpu: invalid value \"2\": must be less than or "
                         "equal to "
                         "cpu limit of 1"},
                        {C0 "}],\"overhead\":[]}}", EINVAL,
                         "spec.overhead: expected object, got array"},
                        {C0 "}],\"overhead\":{\"cpu\":\"-1m\"}}}", EINVAL,
                         "spec.overhead.cpu: invalid value \"-1m\": must be greater than or equal "
                         "to 0"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++)
                expect_error(table[i].text, table[i].code, table[i].msg);
}

static void test_pod_error_names_file(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;
        const char *bad = "metadata: {uid: u}\nspec:\n  containers:\n  - name: a\n    resources:\n"
                          "      limits: {cpu: 2x}\n";
        (void)state;
        assert_int_equal(ncm_pod_parse(bad, strlen(bad), "pod.yaml", &pod, &err), -EINVAL);
        assert_string_equal(err.msg,
                            "pod.yaml: spec.containers[0].resources.limits.cpu: invalid quantity "
                            "\"2x\": quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        assert_int_equal(ncm_pod_parse("{\"a\": ", 6, "pod.json", &pod, &err), -EINVAL);
        assert_int_equal(strncmp(err.msg, "pod.json:1:", 11), 0);
        assert_int_equal(ncm_pod_parse("[1]", 3, "pod.json", &pod, &err), -EINVAL);
        assert_string_equal(err.msg, "pod.json: expected a Pod object, got array");
        assert_null(pod);
}

/* A scenario file embeds pods: errors carry the scenario's own field path. */
static void test_pod_embedded_paths(void **state)
{
        const char *doc = "{\"steps\": [{\"admit\": {\"metadata\": {\"uid\": \"p\"}, \"spec\": "
                          "{\"containers\": [{\"name\": \"a\"}, {\"name\": \"b\", \"resources\": "
                          "{\"limits\": {\"cpu\": \"2x\"}}}]}}}, {\"admit\": []}]}";
        ncm_autojson obj = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;
        json_object *steps;
        (void)state;
        assert_int_equal(ncm__json_parse(doc, strlen(doc), "s", &obj, NULL), 0);
        steps = ncm__json_get(obj, "steps");
        assert_int_equal(ncm__pod_from_json(ncm__json_get(json_object_array_get_idx(steps, 0),
                                                          "admit"),
                                            "steps[0].admit", &pod, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "steps[0].admit.spec.containers[1].resources.limits.cpu: "
                                     "invalid quantity \"2x\": quantities must match the regular "
                                     "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
        assert_int_equal(ncm__pod_from_json(ncm__json_get(json_object_array_get_idx(steps, 1),
                                                          "admit"),
                                            "steps[1].admit", &pod, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "steps[1].admit: expected object, got array");
        assert_null(pod);
}

static void test_pod_load_file(void **state)
{
        ncm_autofree char *dir = tu_mkdtemp();
        ncm_autofree char *path = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;
        FILE *f;
        (void)state;
        assert_true(asprintf(&path, "%s/pod.yaml", dir) > 0);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(yaml_pod, f);
        fclose(f);
        assert_int_equal(ncm_pod_load_file(path, &pod, &err), 0);
        assert_string_equal(pod->name, "web");
        pod = ncm_pod_free(pod);
        assert_null(pod);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("metadata: {uid: u}\n", f);
        fclose(f);
        assert_int_equal(ncm_pod_load_file(path, &pod, &err), -EINVAL);
        {
                ncm_autofree char *want = NULL;
                assert_true(asprintf(&want,
                                     "%s: spec.containers: at least one container is "
                                     "required",
                                     path) > 0);
                assert_string_equal(err.msg, want);
        }
        unlink(path);
        assert_true(ncm_pod_load_file(path, &pod, &err) < 0);
        assert_non_null(strstr(err.msg, "pod.yaml"));
        assert_null(pod);
        tu_rm_rf(dir);
        assert_null(ncm_pod_free(NULL));
}

static void test_pod_totals_overflow(void **state)
{
        ncm_resource_list l = {NULL, 0};
        ncm_error err = NCM_ERROR_INIT;
        struct pod_spec s = {.app = {{"a", "memory=1e30", NULL, false},
                                     {"b", "memory=1n", NULL, false}}};
        (void)state;
        ncm_autoptr(ncm_pod) pod = build(&s, NCM__POD_AS_GIVEN);
        assert_int_equal(ncm_pod_requests(pod, 0, &l, &err), -ERANGE);
        assert_string_equal(err.msg,
                            "pod 'uid-1': memory: sum needs more than 38 significant digits");
        assert_null(l.items);
}

/* A copy and the written form read back hold the same pod (compared through the written form). */
static void test_pod_dup_and_format_round_trip(void **state)
{
        static const char *const files[] = {
                        "cgroups/pods/guaranteed.yaml",
                        "cgroups/pods/burstable.yaml",
                        "cgroups/pods/besteffort.json",
        };
        static const char sidecar[] =
                        "{\"metadata\": {\"uid\": \"u1\", \"name\": \"n\"}, \"spec\": {"
                        "\"initContainers\": [{\"name\": \"i\", \"resources\": {\"limits\": "
                        "{\"cpu\": \"1\", \"memory\": \"1Gi\"}}}, {\"name\": \"s\", "
                        "\"restartPolicy\": "
                        "\"Always\", \"resources\": {\"requests\": {\"cpu\": \"250m\"}}}], "
                        "\"containers\": [{\"name\": \"c\", \"resources\": {\"limits\": {\"cpu\": "
                        "\"2\", \"memory\": \"1Gi\", \"example.com/gpu\": \"1\"}}}], "
                        "\"resources\": {\"limits\": {\"cpu\": \"4\", \"memory\": \"2Gi\"}}, "
                        "\"overhead\": {\"cpu\": \"100m\"}}}";
        (void)state;
        for (size_t i = 0; i <= NCM_ELEMENTSOF(files); i++) {
                ncm_autofree char *text = NULL;
                size_t len = 0;
                ncm_autoptr(ncm_pod) pod = NULL;
                ncm_autoptr(ncm_pod) copy = NULL;
                ncm_autoptr(ncm_pod) back = NULL;
                ncm_buf a = NCM_BUF_INIT, b = NCM_BUF_INIT, c = NCM_BUF_INIT;
                ncm_error err = NCM_ERROR_INIT;

                if (i < NCM_ELEMENTSOF(files)) {
                        text = tu_read_data(files[i], &len);
                } else {
                        text = strdup(sidecar);
                        len = strlen(sidecar);
                }
                assert_int_equal(ncm_pod_parse(text, len, "pod", &pod, &err), 0);
                copy = ncm_pod_dup(pod);
                assert_non_null(copy);
                ncm_pod_format_json(pod, &a);
                ncm_pod_format_json(copy, &b);
                assert_false(ncm_buf_failed(&a));
                assert_string_equal(a.data, b.data);
                assert_int_equal(ncm_pod_parse(a.data, a.len, "written", &back, &err), 0);
                ncm_pod_format_json(back, &c);
                assert_string_equal(a.data, c.data);
                assert_int_equal(back->qos, pod->qos);
                assert_int_equal(back->n_init_containers, pod->n_init_containers);
                for (size_t k = 0; k < pod->n_init_containers; k++)
                        assert_int_equal(back->init_containers[k].sidecar,
                                         pod->init_containers[k].sidecar);
                ncm_buf_done(&a);
                ncm_buf_done(&b);
                ncm_buf_done(&c);
        }
}

/* The containers' CDI devices: the annotation, set by a front end, copied, written back. */
static void test_pod_cdi_devices(void **state)
{
        static const char text[] =
                        "metadata:\n"
                        "  uid: u1\n"
                        "  annotations:\n"
                        "    other: x\n"
                        "    nodecm.io/cdi-devices: '{\"app\": [\"example.com/gpu=gpu1\", "
                        "\"example.com/gpu=common\"], \"init\": []}'\n"
                        "spec:\n"
                        "  initContainers: [{name: init}]\n"
                        "  containers: [{name: app}, {name: side}]\n";
        static const char *const names[] = {"vendor.com/nic=vf0"};
        static const char *const bad[] = {"nic0"};
        ncm_autoptr(ncm_pod) pod = load(text);
        ncm_autoptr(ncm_pod) copy = NULL;
        ncm_autoptr(ncm_pod) back = NULL;
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(pod->containers[0].n_cdi_devices, 2);
        assert_string_equal(pod->containers[0].cdi_devices[1], "example.com/gpu=common");
        assert_int_equal(pod->init_containers[0].n_cdi_devices, 0);
        assert_int_equal(pod->containers[1].n_cdi_devices, 0);

        assert_int_equal(ncm_pod_set_cdi_devices(pod, "side", names, 1, &err), 0);
        assert_int_equal(ncm_pod_set_cdi_devices(pod, "side", bad, 1, &err), -EINVAL);
        assert_string_equal(err.msg, "unqualified device \"nic0\", missing vendor");
        assert_int_equal(ncm_pod_set_cdi_devices(pod, "nope", names, 1, &err), -ENOENT);
        assert_string_equal(pod->containers[1].cdi_devices[0], "vendor.com/nic=vf0");

        copy = ncm_pod_dup(pod);
        assert_non_null(copy);
        assert_string_equal(copy->containers[1].cdi_devices[0], "vendor.com/nic=vf0");
        ncm_pod_format_json(copy, &b);
        assert_non_null(strstr(b.data, "\"annotations\": {\"nodecm.io/cdi-devices\": "
                                       "\"{\\\"app\\\": [\\\"example.com/gpu=gpu1\\\", "));
        back = load(b.data);
        assert_int_equal(back->containers[0].n_cdi_devices, 2);
        assert_string_equal(back->containers[1].cdi_devices[0], "vendor.com/nic=vf0");
        ncm_buf_done(&b);

        /* a pod without any writes no annotation */
        assert_int_equal(ncm_pod_set_cdi_devices(copy, "app", NULL, 0, &err), 0);
        assert_int_equal(ncm_pod_set_cdi_devices(copy, "side", NULL, 0, &err), 0);
        ncm_pod_format_json(copy, &b);
        assert_null(strstr(b.data, "annotations"));
        ncm_buf_done(&b);
}

static void test_pod_cdi_errors(void **state)
{
        (void)state;
        expect_error("{\"metadata\": {\"uid\": \"u\", \"annotations\": []}, \"spec\": "
                     "{\"containers\": [{\"name\": \"app\"}]}}",
                     EINVAL, "metadata.annotations: expected object, got array");
        expect_error("{\"metadata\": {\"uid\": \"u\", \"annotations\": {\"nodecm.io/cdi-devices\": "
                     "1}}, \"spec\": {\"containers\": [{\"name\": \"app\"}]}}",
                     EINVAL,
                     "metadata.annotations[nodecm.io/cdi-devices]: expected string, got number");
        expect_error("{\"metadata\": {\"uid\": \"u\", \"annotations\": {\"nodecm.io/cdi-devices\": "
                     "\"[\\\"a/b=c\\\"]\"}}, \"spec\": {\"containers\": [{\"name\": \"app\"}]}}",
                     EINVAL,
                     "metadata.annotations[nodecm.io/cdi-devices]: expected object, got array");
        expect_error("{\"metadata\": {\"uid\": \"u\", \"annotations\": {\"nodecm.io/cdi-devices\": "
                     "\"{\\\"db\\\": [\\\"a/b=c\\\"]}\"}}, \"spec\": {\"containers\": "
                     "[{\"name\": \"app\"}]}}",
                     EINVAL,
                     "metadata.annotations[nodecm.io/cdi-devices]: the pod has no container "
                     "\"db\"");
        expect_error("{\"metadata\": {\"uid\": \"u\", \"annotations\": {\"nodecm.io/cdi-devices\": "
                     "\"{\\\"app\\\": [\\\"a/b=-c\\\"]}\"}}, \"spec\": {\"containers\": "
                     "[{\"name\": \"app\"}]}}",
                     EINVAL,
                     "metadata.annotations[nodecm.io/cdi-devices]: container \"app\": invalid "
                     "device \"a/b=-c\": invalid class \"-c\", should start with a letter or "
                     "digit");
        expect_error("{\"metadata\": {\"uid\": \"u\", \"annotations\": {\"nodecm.io/cdi-devices\": "
                     "\"{\\\"app\\\": [7]}\"}}, \"spec\": {\"containers\": [{\"name\": \"app\"}]}}",
                     EINVAL,
                     "metadata.annotations[nodecm.io/cdi-devices]: container \"app\": [0]: "
                     "expected a CDI device name");
        expect_error("{\"metadata\": {\"uid\": \"u\", \"annotations\": {\"nodecm.io/cdi-devices\": "
                     "\"{oops\"}}, \"spec\": {\"containers\": [{\"name\": \"app\"}]}}",
                     EINVAL,
                     "metadata.annotations[nodecm.io/cdi-devices]:1:2: invalid JSON: quoted object "
                     "property name expected");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_pod_cdi_devices),
                        cmocka_unit_test(test_pod_cdi_errors),
                        cmocka_unit_test(test_pod_qos_table),
                        cmocka_unit_test(test_pod_qos_table_defaulted),
                        cmocka_unit_test(test_pod_qos_names),
                        cmocka_unit_test(test_pod_qos_limits_only_is_guaranteed),
                        cmocka_unit_test(test_pod_totals_table),
                        cmocka_unit_test(test_pod_level_resources_set),
                        cmocka_unit_test(test_pod_yaml),
                        cmocka_unit_test(test_pod_json_numbers_and_strings),
                        cmocka_unit_test(test_pod_defaulting_rounds_to_milli),
                        cmocka_unit_test(test_pod_defaulting_pod_level),
                        cmocka_unit_test(test_pod_cpu_manager_view),
                        cmocka_unit_test(test_pod_hugepage_size),
                        cmocka_unit_test(test_pod_errors),
                        cmocka_unit_test(test_pod_error_names_file),
                        cmocka_unit_test(test_pod_embedded_paths),
                        cmocka_unit_test(test_pod_load_file),
                        cmocka_unit_test(test_pod_totals_overflow),
                        cmocka_unit_test(test_pod_dup_and_format_round_trip),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
