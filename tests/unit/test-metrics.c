/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/metrics: the HTTP request head parser (good, incomplete, malformed, hostile heads), the
 * Prometheus text helpers, and the kubelet's metrics of a node after admissions and a refusal.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/metrics.h>
#include "testutil.h"

static int parse(const char *s, ncm_http_request *r)
{
        return ncm_http_parse_request(s, strlen(s), 8192, r);
}

static void test_metrics_http_good(void **state)
{
        ncm_http_request r;

        assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &r), 1);
        assert_string_equal(r.method, "GET");
        assert_string_equal(r.path, "/metrics");
        assert_int_equal(r.minor, 1);
        assert_true(r.keep_alive);
        assert_int_equal(r.head_len, strlen("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert_int_equal(parse("GET /metrics?name[]=x HTTP/1.0\r\n\r\n", &r), 1);
        assert_string_equal(r.path, "/metrics");
        assert_false(r.keep_alive);
        assert_int_equal(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r), 1);
        assert_true(r.keep_alive);
        assert_int_equal(parse("HEAD / HTTP/1.1\r\nConnection: foo, close\r\n\r\n", &r), 1);
        assert_false(r.keep_alive);
        /* bare LF, empty lines before the request line, a zero Content-Length */
        assert_int_equal(parse("\r\n\r\nGET /m HTTP/1.1\nContent-Length: 00\n\n", &r), 1);
        assert_string_equal(r.path, "/m");
        /* pipelined: the first head only */
        assert_int_equal(parse("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n", &r), 1);
        assert_string_equal(r.path, "/a");
        assert_int_equal(r.head_len, strlen("GET /a HTTP/1.1\r\n\r\n"));
}

static void test_metrics_http_incomplete(void **state)
{
        const char *full = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
        ncm_http_request r;

        for (size_t n = 0; n < strlen(full); n++)
                assert_int_equal(ncm_http_parse_request(full, n, 8192, &r), 0);
        assert_int_equal(parse("\r\n\r\n", &r), 0);
}

static void test_metrics_http_bad(void **state)
{
        static const struct {
                const char *in;
                int rc;
        } v[] = {
                        {"GET /metrics\r\n\r\n", -EBADMSG},
                        {"GET  /metrics HTTP/1.1\r\n\r\n", -EBADMSG},
                        {"GET /metrics HTTP/1.1 \r\n\r\n", -EBADMSG},
                        {"G(T /metrics HTTP/1.1\r\n\r\n", -EBADMSG},
                        {"GET /metrics HTTP/2.0\r\n\r\n", -EPROTONOSUPPORT},
                        {"GET /metrics HTTP/1.2\r\n\r\n", -EPROTONOSUPPORT},
                        {"GET /metrics HTTP/x.1\r\n\r\n", -EBADMSG},
                        {"GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n", -EBADMSG},
                        {"GET /metrics HTTP/1.1\r\n folded\r\n\r\n", -EBADMSG},
                        {"GET /metrics HTTP/1.1\r\nnocolon\r\n\r\n", -EBADMSG},
                        {"GET /metrics HTTP/1.1\r\nX: a\x01b\r\n\r\n", -EBADMSG},
                        {"POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\n", -EFBIG},
                        {"GET /metrics HTTP/1.1\r\nContent-Length: 5x\r\n\r\n", -EBADMSG},
                        {"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", -EFBIG},
                        {"GETGETGETGETGETGETGET / HTTP/1.1\r\n\r\n", -EBADMSG},
        };
        ncm_http_request r;
        char big[600];

        for (size_t i = 0; i < NCM_ELEMENTSOF(v); i++) {
                print_message("%s\n", v[i].in);
                assert_int_equal(parse(v[i].in, &r), v[i].rc);
        }
        /* a target above 255 bytes, a head above the limit, CRLFs for ever */
        memset(big, 'a', sizeof(big));
        memcpy(big, "GET /", 5);
        memcpy(big + 400, " HTTP/1.1\r\n\r\n", 14);
        big[414] = '\0';
        assert_int_equal(parse(big, &r), -EMSGSIZE);
        memset(big, 'a', sizeof(big));
        assert_int_equal(ncm_http_parse_request(big, sizeof(big), 512, &r), -EMSGSIZE);
        memset(big, '\n', sizeof(big));
        assert_int_equal(ncm_http_parse_request(big, sizeof(big), 512, &r), -EMSGSIZE);
}

static void test_metrics_http_query(void **state)
{
        ncm_http_request r;
        char v[8];

        assert_int_equal(parse("GET /map/explain?pod=a%2Fb+c&x=1 HTTP/1.1\r\n\r\n", &r), 1);
        assert_string_equal(r.path, "/map/explain");
        assert_string_equal(r.query, "pod=a%2Fb+c&x=1");
        assert_int_equal(ncm_http_query_param(r.query, "pod", v, sizeof(v)), 5);
        assert_string_equal(v, "a/b c");
        assert_int_equal(ncm_http_query_param(r.query, "x", v, sizeof(v)), 1);
        assert_string_equal(v, "1");
        assert_int_equal(ncm_http_query_param(r.query, "po", v, sizeof(v)), -ENOENT);
        assert_int_equal(ncm_http_query_param("", "pod", v, sizeof(v)), -ENOENT);
        assert_int_equal(ncm_http_query_param("pod", "pod", v, sizeof(v)), -ENOENT);
        assert_int_equal(ncm_http_query_param("pod=", "pod", v, sizeof(v)), 0);
        assert_string_equal(v, "");
        assert_int_equal(ncm_http_query_param("pod=1&pod=2", "pod", v, sizeof(v)), 1);
        assert_string_equal(v, "1");
        assert_int_equal(ncm_http_query_param("pod=%zz", "pod", v, sizeof(v)), -EINVAL);
        assert_int_equal(ncm_http_query_param("pod=%4", "pod", v, sizeof(v)), -EINVAL);
        assert_int_equal(ncm_http_query_param("pod=a%00", "pod", v, sizeof(v)), -EINVAL);
        assert_int_equal(ncm_http_query_param("pod=12345678", "pod", v, sizeof(v)), -ENAMETOOLONG);
        assert_int_equal(ncm_http_query_param("pod=1234567", "pod", v, sizeof(v)), 7);
        assert_int_equal(parse("GET /map HTTP/1.1\r\n\r\n", &r), 1);
        assert_string_equal(r.query, "");
}

/* Server-sent events: each line of the data is a data: line, whatever ends it. */
static void test_metrics_sse_event(void **state)
{
        static const struct {
                const char *data;
                const char *out;
        } cases[] = {
                        {"7", "id: 3\ndata: 7\n\n"},
                        {"", "id: 3\ndata: \n\n"},
                        {NULL, "id: 3\ndata: \n\n"},
                        {"a\nb", "id: 3\ndata: a\ndata: b\n\n"},
                        {"a\r\nb\rc\n", "id: 3\ndata: a\ndata: b\ndata: c\n\n"},
                        {"\n\n", "id: 3\ndata: \ndata: \n\n"},
        };

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_buf b = NCM_BUF_INIT;
                ncm_http_sse_event(&b, 3, cases[i].data);
                assert_string_equal(b.data, cases[i].out);
                ncm_buf_done(&b);
        }
}

static void test_metrics_text(void **state)
{
        static const double bounds[] = {0.05, 0.1, 1};
        ncm_histogram h;
        ncm_buf b = NCM_BUF_INIT;

        ncm_metrics_header(&b, "x_total", "counter", "a\\b\nc");
        ncm_metrics_sample(&b, "x_total", "a=\"1\"", 3);
        ncm_metrics_sample(&b, "y", NULL, 0.25);
        ncm_histogram_init(&h, bounds, 3);
        ncm_histogram_observe(&h, 0.07);
        ncm_histogram_observe(&h, 5);
        ncm_histogram_format(&b, "d", NULL, &h);
        assert_string_equal(b.data, "# HELP x_total a\\\\b\\nc\n# TYPE x_total counter\n"
                                    "x_total{a=\"1\"} 3\ny 0.25\n"
                                    "d_bucket{le=\"0.05\"} 0\nd_bucket{le=\"0.1\"} 1\n"
                                    "d_bucket{le=\"1\"} 1\nd_bucket{le=\"+Inf\"} 2\n"
                                    "d_sum 5.07\nd_count 2\n");
        ncm_buf_done(&b);
}

static ncm_pod *pod_of(const char *text)
{
        ncm_pod *p = NULL;
        assert_int_equal(ncm_pod_parse(text, strlen(text), "pod", &p, NULL), 0);
        return p;
}

static void test_metrics_node(void **state)
{
        static const char cfgtext[] = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                      "\"0\", \"topologyManagerPolicy\": \"single-numa-node\", "
                                      "\"cpuManagerPolicyOptions\": {\"full-pcpus-only\": "
                                      "\"true\"}}";
        ncm_autoptr(ncm_topo) t = NULL;
        ncm_autoptr(ncm_node_config) cfg = NULL;
        ncm_autoptr(ncm_node) n = NULL;
        ncm_autoptr(ncm_pod) p1 = pod_of("{\"metadata\": {\"uid\": \"a\"}, \"spec\": "
                                         "{\"containers\": [{\"name\": \"c\", \"resources\": "
                                         "{\"limits\": {\"cpu\": \"2\", \"memory\": \"1Gi\"}}}]}}");
        ncm_autoptr(ncm_pod) p2 = pod_of("{\"metadata\": {\"uid\": \"b\"}, \"spec\": "
                                         "{\"containers\": [{\"name\": \"c\", \"resources\": "
                                         "{\"limits\": {\"cpu\": \"3\", \"memory\": \"1Gi\"}}}]}}");
        ncm_node_admission *a = NULL;
        ncm_buf b = NCM_BUF_INIT;
        bool ever[2] = {false, false};

        assert_int_equal(ncm_topo_load(NCM_TOPO_SOURCE_SYNTHETIC, "package:2 numa:1 core:4 pu:2",
                                       &t, NULL),
                         0);
        assert_int_equal(ncm_node_config_parse(cfgtext, strlen(cfgtext), "k", "", &cfg, NULL), 0);
        assert_int_equal(ncm_node_new(t, cfg, NULL, &n, NULL), 0);
        assert_int_equal(ncm_node_admit(n, p1, 0, &a, NULL), 0);
        assert_true(a->admitted);
        a = ncm_node_admission_free(a);
        /* 3 CPUs are not whole cores: SMTAlignmentError, a pinning error */
        assert_int_equal(ncm_node_admit(n, p2, 0, &a, NULL), 0);
        assert_false(a->admitted);
        a = ncm_node_admission_free(a);
        ncm_node_metrics_format(n, ever, 2, &b);
        assert_false(ncm_buf_failed(&b));
        print_message("%s", b.data);
        assert_non_null(strstr(b.data, "\nkubelet_cpu_manager_pinning_requests_total 2\n"));
        assert_non_null(strstr(b.data, "\nkubelet_cpu_manager_pinning_errors_total 1\n"));
        /* 16 CPUs, reserved 0 (and its sibling not), 2 taken: 13 CPUs shared */
        assert_non_null(strstr(b.data,
                               "\nkubelet_cpu_manager_shared_pool_size_millicores 13000\n"));
        assert_non_null(strstr(b.data, "\nkubelet_cpu_manager_exclusive_cpu_allocation_count 2\n"));
        assert_non_null(strstr(b.data,
                               "\nkubelet_cpu_manager_allocation_per_numa{numa_node=\"0\"} 2\n"));
        assert_null(strstr(b.data, "numa_node=\"1\"} "));
        assert_non_null(strstr(b.data,
                               "\nkubelet_container_aligned_compute_resources_count{boundary="
                               "\"physical_cpu\",scope=\"container\"} 1\n"));
        assert_non_null(strstr(b.data,
                               "\nkubelet_container_aligned_compute_resources_failure_count{"
                               "boundary=\"physical_cpu\",scope=\"container\"} 1\n"));
        assert_non_null(strstr(b.data, "\nkubelet_topology_manager_admission_requests_total 2\n"));
        assert_non_null(strstr(b.data, "\nkubelet_topology_manager_admission_errors_total 1\n"));
        assert_true(ever[0]);
        assert_false(ever[1]);
        /* the pod goes: NUMA node 0 keeps its series, now at 0 */
        assert_int_equal(ncm_node_remove_pod(n, "a", NULL, NULL), 1);
        ncm_buf_reset(&b);
        ncm_node_metrics_format(n, ever, 2, &b);
        assert_non_null(strstr(b.data,
                               "\nkubelet_cpu_manager_allocation_per_numa{numa_node=\"0\"} 0\n"));
        /* the kubelet's node: nothing of nodecm's isolation */
        assert_null(strstr(b.data, "nodecm_isol"));
        ncm_buf_done(&b);
}

/* isolatedCPUs and CRI-O's knobs in the metrics (docs/isolation.md). */
static void test_metrics_isolation(void **state)
{
        static const char cfgtext[] = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                      "\"0\", \"isolatedCPUs\": \"exclusive-only\"}";
        ncm_autoptr(ncm_topo) t = NULL;
        ncm_autoptr(ncm_node_config) cfg = NULL;
        ncm_autoptr(ncm_node) n = NULL;
        ncm_autoptr(ncm_cpuset) iso = ncm_cpuset_new();
        ncm_autoptr(ncm_pod) p = pod_of("{\"metadata\": {\"uid\": \"a\", \"annotations\": "
                                        "{\"cpu-quota.crio.io\": \"disable\"}}, \"spec\": "
                                        "{\"containers\": [{\"name\": \"c\", \"resources\": "
                                        "{\"limits\": {\"cpu\": \"2\", \"memory\": \"1Gi\"}}}]}}");
        ncm_node_admission *a = NULL;
        ncm_buf b = NCM_BUF_INIT;
        bool ever[1] = {false};

        (void)state;
        assert_int_equal(ncm_topo_load(NCM_TOPO_SOURCE_SYNTHETIC, "core:8 pu:1", &t, NULL), 0);
        assert_int_equal(ncm_cpuset_set_range(iso, 4, 7), 0);
        assert_int_equal(ncm_topo_set_isolation(t, NCM_ISO_GIVEN_ISOLATED, iso, NULL), 0);
        assert_int_equal(ncm_node_config_parse(cfgtext, strlen(cfgtext), "k", "", &cfg, NULL), 0);
        assert_int_equal(ncm_node_new(t, cfg, NULL, &n, NULL), 0);
        assert_int_equal(ncm_node_admit(n, p, 0, &a, NULL), 0);
        assert_true(a->admitted);
        a = ncm_node_admission_free(a);
        ncm_node_metrics_format(n, ever, 1, &b);
        /* 8 CPUs: 0 reserved, 1-2 exclusive, 4-7 isolated: the pool is 0 and 3, 3 without 0 */
        assert_non_null(strstr(b.data, "\nkubelet_cpu_manager_shared_pool_size_millicores 1000\n"));
        assert_non_null(strstr(b.data, "\nnodecm_isolated_cpus{mode=\"exclusive-only\"} 4\n"));
        assert_non_null(strstr(b.data, "\nnodecm_isolation_containers{knob=\"cpu-quota\"} 1\n"));
        assert_non_null(strstr(b.data, "\nnodecm_isolation_reconciled_total{what=\"irq_affinity\"}"
                                       " 0\n"));
        ncm_buf_done(&b);
}

/* The memory manager's counters (examples/memory-hugepages-db.yaml): two Guaranteed pods
 * pinned, a third refused by the memory manager's Allocate (its hugepages fit no node). */
static void test_metrics_memory(void **state)
{
        static const char cfgtext[] =
                        "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                        "\"topologyManagerPolicy\": \"single-numa-node\", "
                        "\"memoryManagerPolicy\": \"Static\", \"kubeReserved\": {\"memory\": "
                        "\"512Mi\"}, \"systemReserved\": {\"memory\": \"512Mi\"}, "
                        "\"evictionHard\": {\"memory.available\": \"100Mi\"}, "
                        "\"reservedMemory\": [{\"numaNode\": 0, \"limits\": {\"memory\": "
                        "\"562Mi\"}}, {\"numaNode\": 1, \"limits\": {\"memory\": \"562Mi\"}}]}";
        static const char *const hp[] = {"4Gi", "6Gi", "5Gi"};
        ncm_autoptr(ncm_topo) t = NULL;
        ncm_autoptr(ncm_node_config) cfg = NULL;
        ncm_autoptr(ncm_node) n = NULL;
        ncm_buf b = NCM_BUF_INIT;
        bool ever[2] = {false, false};
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(ncm_topo_load(NCM_TOPO_SOURCE_SYNTHETIC, "package:2 numa:1 core:4 pu:2",
                                       &t, NULL),
                         0);
        assert_int_equal(ncm_topo_apply_memory_spec(t, "16Gi,hugepages-1Gi=8", NULL), 0);
        assert_int_equal(ncm_node_config_parse(cfgtext, strlen(cfgtext), "k", "", &cfg, NULL), 0);
        if (ncm_node_new(t, cfg, NULL, &n, &err) < 0)
                fail_msg("%s", err.msg);
        for (int i = 0; i < 3; i++) {
                char text[512];
                ncm_autoptr(ncm_pod) p = NULL;
                ncm_node_admission *a = NULL;
                snprintf(text, sizeof(text),
                         "{\"metadata\": {\"uid\": \"p%d\"}, \"spec\": {\"containers\": "
                         "[{\"name\": "
                         "\"c\", \"resources\": {\"limits\": {\"cpu\": \"2\", \"memory\": \"%s\", "
                         "\"hugepages-1Gi\": \"%s\"}}}]}}",
                         i, i == 2 ? "2Gi" : "4Gi", hp[i]);
                p = pod_of(text);
                assert_int_equal(ncm_node_admit(n, p, 0, &a, NULL), 0);
                assert_int_equal(a->admitted, i < 2);
                if (i == 2)
                        assert_string_equal(a->reason, "UnexpectedAdmissionError");
                ncm_node_admission_free(a);
        }
        ncm_node_metrics_format(n, ever, 2, &b);
        assert_false(ncm_buf_failed(&b));
        assert_non_null(strstr(b.data, "\nkubelet_memory_manager_pinning_requests_total 3\n"));
        assert_non_null(strstr(b.data, "\nkubelet_memory_manager_pinning_errors_total 1\n"));
        ncm_buf_done(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_metrics_http_good),
                        cmocka_unit_test(test_metrics_http_incomplete),
                        cmocka_unit_test(test_metrics_http_bad),
                        cmocka_unit_test(test_metrics_http_query),
                        cmocka_unit_test(test_metrics_sse_event),
                        cmocka_unit_test(test_metrics_text),
                        cmocka_unit_test(test_metrics_node),
                        cmocka_unit_test(test_metrics_isolation),
                        cmocka_unit_test(test_metrics_memory),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
