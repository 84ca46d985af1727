/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's configuration model: a real kubelet config file, the kubelet's defaults, the
 * cgroup and node allocatable fields with their texts, and what a reload needs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/node-config.h>
#include "testutil.h"

static ncm_node_config *parse_ok(const char *text)
{
        ncm_node_config *c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_node_config_parse(text, strlen(text), "t", "", &c, &err);
        if (r < 0)
                fail_msg("%s: %s", text, err.msg);
        return c;
}

static void expect_error(const char *text, int code, const char *msg)
{
        ncm_node_config *c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_node_config_parse(text, strlen(text), "t", "k", &c, &err);
        if (r != -code || !strstr(err.msg, msg))
                fail_msg("%s: got %d '%s', expected %d '%s'", text, r, err.msg, -code, msg);
        assert_null(c);
}

static void test_node_config_kubeadm_file(void **state)
{
        ncm_autofree char *path = tu_data_path("kubelet/kubeadm-config.yaml");
        ncm_autoptr(ncm_node_config) c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_cgroup_pod_options o;
        const ncm_eviction_thresholds *ev;
        (void)state;

        assert_int_equal(ncm_node_config_load_file(path, &c, &err), 0);
        assert_string_equal(ncm_node_config_cpu_policy(c), "static");
        assert_string_equal(ncm_node_config_tm_policy(c), "single-numa-node");
        assert_string_equal(ncm_node_config_tm_scope(c), "pod");
        assert_string_equal(ncm_node_config_cgroup_driver(c), "systemd");
        assert_string_equal(ncm_node_config_cgroup_root(c), "/");
        assert_true(ncm_node_config_cgroups_per_qos(c));
        assert_int_equal(ncm_node_config_enforce(c), NCM_ENFORCE_PODS);
        /* reservedSystemCPUs "0" replaces kubeReserved's cpu: 1 in systemReserved */
        assert_int_equal(ncm_node_config_kube_reserved(c)->n, 1);
        assert_int_equal(ncm_node_config_system_reserved(c)->n, 2);
        /* a partial evictionHard replaces the defaults */
        ev = ncm_node_config_eviction_hard(c);
        assert_int_equal(ev->n, 1);
        assert_string_equal(ev->items[0].signal, "memory.available");
        /* 0s is the default, 10s */
        assert_true(ncm_node_config_reconcile_period_ns(c) == 10000000000LL);
        assert_true(ncm_node_config_feature_gate(c, "CPUManagerPolicyBetaOptions", false));
        assert_false(ncm_node_config_feature_gate(c, "NoSuchGate", false));
        ncm_node_config_pod_options(c, &o);
        assert_true(o.enforce_cpu_limits);
        assert_int_equal(o.cpu_period, 100000);
        assert_int_equal(o.pod_pids_limit, 4096);
        assert_true(o.static_cpu_manager);
        assert_true(o.disable_cpu_quota_with_exclusive_cpus);
}

/*
 * cmd/kubelet/app/server.go: with reservedSystemCPUs the kubelet deletes kubeReserved.cpu and
 * sets systemReserved.cpu to the number of reserved CPUs before it parses either list, so a
 * value there is never read, not even a malformed one.
 */
static void test_node_config_reserved_cpus_replace_reserved_cpu(void **state)
{
        ncm_autofree char *path = tu_data_path("kubelet/reserved-cpus.yaml");
        ncm_autoptr(ncm_node_config) c = NULL;
        ncm_autoptr(ncm_node_config) bad = NULL;
        ncm_autoptr(ncm_node_config) none = NULL;
        ncm_error err = NCM_ERROR_INIT;
        const ncm_resource_list *kube, *sys;
        (void)state;

        assert_int_equal(ncm_node_config_load_file(path, &c, &err), 0);
        kube = ncm_node_config_kube_reserved(c);
        sys = ncm_node_config_system_reserved(c);
        assert_non_null(kube);
        assert_null(ncm_resource_list_get(kube, "cpu"));
        assert_non_null(ncm_resource_list_get(kube, "memory"));
        assert_int_equal(ncm_quantity_milli_value(ncm_resource_list_get(sys, "cpu")), 2000);
        assert_non_null(ncm_resource_list_get(sys, "memory"));
        assert_int_equal(ncm_node_config_n_warnings(c), 1);
        assert_non_null(strstr(ncm_node_config_warning(c, 0),
                               "reservedSystemCPUs \"0-1\" overrides the cpu of kubeReserved"));

        /* the cpu values are not parsed at all */
        bad = parse_ok("{\"reservedSystemCPUs\": \"3\", \"kubeReserved\": {\"cpu\": \"1x\"}}");
        assert_int_equal(ncm_quantity_milli_value(ncm_resource_list_get(
                                         ncm_node_config_system_reserved(bad), "cpu")),
                         1000);
        assert_int_equal(ncm_node_config_kube_reserved(bad)->n, 0);
        /* no reservation named: systemReserved appears with the cpu alone, no warning */
        none = parse_ok("{\"reservedSystemCPUs\": \"0,2-3\"}");
        assert_null(ncm_node_config_kube_reserved(none));
        assert_int_equal(ncm_quantity_milli_value(ncm_resource_list_get(
                                         ncm_node_config_system_reserved(none), "cpu")),
                         3000);
        assert_int_equal(ncm_node_config_n_warnings(none), 0);
}

static void test_node_config_defaults(void **state)
{
        ncm_autoptr(ncm_node_config) c = parse_ok("{}");
        ncm_cgroup_pod_options o;
        (void)state;
        assert_string_equal(ncm_node_config_cgroup_driver(c), "cgroupfs");
        assert_string_equal(ncm_node_config_cgroup_root(c), "/");
        assert_null(ncm_node_config_kube_reserved(c));
        assert_int_equal(ncm_node_config_enforce(c), NCM_ENFORCE_PODS);
        assert_int_equal(ncm_node_config_eviction_hard(c)->n, 5);
        assert_string_equal(ncm_node_config_root_dir(c), "");
        ncm_node_config_pod_options(c, &o);
        assert_int_equal(o.pod_pids_limit, -1);
        assert_false(o.static_cpu_manager);
        assert_false(o.custom_cpu_period);
}

static void test_node_config_cgroup_fields(void **state)
{
        ncm_autoptr(ncm_node_config) c = parse_ok(
                        "{\"cgroupRoot\": \"/nodecm\", \"cgroupsPerQOS\": true, \"cpuCFSQuota\": "
                        "false, \"cpuCFSQuotaPeriod\": \"5ms\", \"featureGates\": "
                        "{\"CustomCPUCFSQuotaPeriod\": true}, \"enforceNodeAllocatable\": "
                        "[\"pods\", \"kube-reserved\"], \"kubeReservedCgroup\": \"/kube\", "
                        "\"evictionHard\": {\"memory.available\": \"1Gi\"}, "
                        "\"mergeDefaultEvictionSettings\": true, \"rootDirectory\": "
                        "\"/var/lib/x\"}");
        ncm_cgroup_pod_options o;
        (void)state;
        assert_string_equal(ncm_node_config_cgroup_root(c), "/nodecm");
        assert_int_equal(ncm_node_config_enforce(c), NCM_ENFORCE_PODS | NCM_ENFORCE_KUBE_RESERVED);
        assert_string_equal(ncm_node_config_kube_reserved_cgroup(c), "/kube");
        /* merged: the given memory.available and the four other defaults */
        assert_int_equal(ncm_node_config_eviction_hard(c)->n, 5);
        assert_string_equal(ncm_node_config_root_dir(c), "/var/lib/x");
        ncm_node_config_pod_options(c, &o);
        assert_false(o.enforce_cpu_limits);
        assert_int_equal(o.cpu_period, 5000);
        assert_true(o.custom_cpu_period);
}

static void test_node_config_errors(void **state)
{
        (void)state;
        expect_error("{\"cgroupDriver\": \"sysd\"}", EINVAL,
                     "k.cgroupDriver: unknown cgroup driver \"sysd\"");
        expect_error("{\"cpuCFSQuotaPeriod\": \"200ms\"}", EINVAL,
                     "k.cpuCFSQuotaPeriod: invalid configuration: cpuCFSQuotaPeriod "
                     "(--cpu-cfs-quota-period) {200ms} requires feature gate "
                     "CustomCPUCFSQuotaPeriod");
        expect_error("{\"cpuCFSQuotaPeriod\": \"2s\", \"featureGates\": "
                     "{\"CustomCPUCFSQuotaPeriod\": true}}",
                     EINVAL, "{2s} must be between 1ms and 1sec, inclusive");
        expect_error("{\"cpuCFSQuotaPeriod\": \"5x\"}", EINVAL,
                     "k.cpuCFSQuotaPeriod: time: unknown unit \"x\" in duration \"5x\"");
        expect_error("{\"cpuManagerReconcilePeriod\": 10}", EINVAL,
                     "k.cpuManagerReconcilePeriod: expected string");
        expect_error("{\"cgroupsPerQOS\": \"yes\"}", EINVAL, "k.cgroupsPerQOS: expected boolean");
        expect_error("{\"podPidsLimit\": \"10\"}", EINVAL, "k.podPidsLimit");
        expect_error("{\"enforceNodeAllocatable\": [\"all\"]}", EINVAL,
                     "option \"all\" specified for enforceNodeAllocatable");
        expect_error("{\"enforceNodeAllocatable\": \"pods\"}", EINVAL,
                     "k.enforceNodeAllocatable: expected array");
        expect_error("{\"enforceNodeAllocatable\": [\"kube-reserved\"]}", EINVAL,
                     "kubeReservedCgroup (--kube-reserved-cgroup) must be specified");
        expect_error("{\"cgroupsPerQOS\": false}", EINVAL,
                     "enforceNodeAllocatable (--enforce-node-allocatable) is not supported "
                     "unless cgroupsPerQOS (--cgroups-per-qos) feature is turned on");
        expect_error("{\"evictionHard\": {\"memory.free\": \"1Gi\"}}", EINVAL,
                     "k.evictionHard: unsupported eviction signal memory.free");
        expect_error("{\"evictionHard\": {\"memory.available\": 5}}", EINVAL,
                     "k.evictionHard.memory.available: expected string");
        expect_error("{\"memoryReservationPolicy\": \"Static\"}", EINVAL,
                     "k.memoryReservationPolicy: unknown policy: \"Static\"");
        expect_error("{\"cgroupRot\": \"/\"}", EINVAL,
                     "k.cgroupRot: unknown field (did you mean \"cgroupRoot\"?)");
        /* a partial list with cgroupsPerQOS off is fine when empty */
        {
                ncm_autoptr(ncm_node_config) c = parse_ok(
                                "{\"cgroupsPerQOS\": false, \"enforceNodeAllocatable\": []}");
                assert_int_equal(ncm_node_config_enforce(c), 0);
        }
}

static void test_node_config_file_kind(void **state)
{
        ncm_autofree char *dir = tu_mkdtemp();
        char path[4096];
        ncm_node_config *c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        snprintf(path, sizeof(path), "%s/pod.yaml", dir);
        tu_write_file(path, "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n");
        assert_int_equal(ncm_node_config_load_file(path, &c, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "kind: expected KubeletConfiguration, got \"Pod\""));
        assert_int_equal(strncmp(err.msg, path, strlen(path)), 0);
        tu_write_file(path, "apiVersion: kubelet.config.k8s.io/v2\nkind: KubeletConfiguration\n");
        assert_int_equal(ncm_node_config_load_file(path, &c, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "apiVersion: expected kubelet.config.k8s.io/v1beta1"));
        tu_write_file(path, "kind: KubeletConfiguration\ncgroupDriver: nope\n");
        assert_int_equal(ncm_node_config_load_file(path, &c, &err), -EINVAL);
        assert_non_null(strstr(err.msg, ": cgroupDriver: unknown cgroup driver"));
        assert_null(c);
        tu_rm_rf(dir);
}

static void test_node_config_compare(void **state)
{
        static const struct {
                const char *a, *b;
                ncm_node_config_change want;
                const char *field;
        } t[] = {
                        {"{}", "{}", NCM_NODE_CONFIG_UNCHANGED, NULL},
                        {"{\"clusterDNS\": [\"1.1.1.1\"]}", "{}", NCM_NODE_CONFIG_UNCHANGED, NULL},
                        {"{}", "{\"podPidsLimit\": 10}", NCM_NODE_CONFIG_LIVE, NULL},
                        {"{\"cpuManagerReconcilePeriod\": \"5s\"}", "{}", NCM_NODE_CONFIG_LIVE,
                         NULL},
                        {"{}",
                         "{\"cpuManagerPolicy\": \"static\", \"kubeReserved\": {\"cpu\": "
                         "\"1\"}}",
                         NCM_NODE_CONFIG_RESTART, "cpuManagerPolicy"},
                        {"{\"podPidsLimit\": 1}", "{\"podPidsLimit\": 2, \"cgroupRoot\": \"/x\"}",
                         NCM_NODE_CONFIG_RESTART, "cgroupRoot"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm_autoptr(ncm_node_config) a = parse_ok(t[i].a);
                ncm_autoptr(ncm_node_config) b = parse_ok(t[i].b);
                const char *field = "x";
                assert_int_equal(ncm_node_config_compare(a, b, &field), t[i].want);
                if (t[i].field)
                        assert_string_equal(field, t[i].field);
                else
                        assert_null(field);
        }
}

static void test_node_config_merge_text(void **state)
{
        ncm_autoptr(ncm_node_config) base = parse_ok("{\"cpuManagerPolicy\": \"static\", "
                                                     "\"kubeReserved\": {\"cpu\": \"1\"}}");
        ncm_autoptr(ncm_node_config) m = NULL;
        ncm_error err = NCM_ERROR_INIT;
        static const char overlay[] = "podPidsLimit: 7\ncgroupDriver: systemd\n";
        ncm_cgroup_pod_options o;
        (void)state;
        assert_int_equal(ncm_node_config_merge_text(base, overlay, strlen(overlay), "flags", "", &m,
                                                    &err),
                         0);
        assert_string_equal(ncm_node_config_cpu_policy(m), "static");
        assert_string_equal(ncm_node_config_cgroup_driver(m), "systemd");
        ncm_node_config_pod_options(m, &o);
        assert_int_equal(o.pod_pids_limit, 7);
        assert_non_null(ncm_node_config_kube_reserved(m));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_node_config_kubeadm_file),
                        cmocka_unit_test(test_node_config_reserved_cpus_replace_reserved_cpu),
                        cmocka_unit_test(test_node_config_defaults),
                        cmocka_unit_test(test_node_config_cgroup_fields),
                        cmocka_unit_test(test_node_config_errors),
                        cmocka_unit_test(test_node_config_file_kind),
                        cmocka_unit_test(test_node_config_compare),
                        cmocka_unit_test(test_node_config_merge_text),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
