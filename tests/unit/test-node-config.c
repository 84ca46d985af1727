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

/* The names asked as questions (the predicates the node and the front ends use). */
static void test_node_config_predicates(void **state)
{
        ncm_autoptr(ncm_node_config) d = parse_ok("{}");
        ncm_autoptr(ncm_node_config) c = NULL;
        ncm_autoptr(ncm_node_config) p = NULL;
        ncm_autofree char *path = tu_data_path("kubelet/kubeadm-config.yaml");
        (void)state;

        assert_false(ncm_node_config_cpu_policy_is_static(d));
        assert_true(ncm_node_config_tm_policy_is_none(d));
        assert_false(ncm_node_config_tm_policy_is_single_numa_node(d));
        assert_false(ncm_node_config_tm_scope_is_pod(d));
        assert_false(ncm_node_config_mem_policy_is_static(d));
        assert_false(ncm_node_config_cgroup_driver_is_systemd(d));
        assert_int_equal(ncm_node_config_enforcement_kind(d), NCM_NODE_ENFORCEMENT_CGROUPFS);

        assert_int_equal(ncm_node_config_load_file(path, &c, NULL), 0);
        assert_true(ncm_node_config_cpu_policy_is_static(c));
        assert_false(ncm_node_config_tm_policy_is_none(c));
        assert_true(ncm_node_config_tm_policy_is_single_numa_node(c));
        assert_true(ncm_node_config_tm_scope_is_pod(c));
        assert_true(ncm_node_config_cgroup_driver_is_systemd(c));

        p = parse_ok("{\"enforcement\": \"plan\", \"topologyManagerPolicy\": \"restricted\"}");
        assert_int_equal(ncm_node_config_enforcement_kind(p), NCM_NODE_ENFORCEMENT_PLAN);
        assert_false(ncm_node_config_tm_policy_is_none(p));
        assert_false(ncm_node_config_tm_policy_is_single_numa_node(p));
        p = ncm_node_config_free(p);
        p = parse_ok("{\"enforcement\": \"none\"}");
        assert_int_equal(ncm_node_config_enforcement_kind(p), NCM_NODE_ENFORCEMENT_NONE);
        p = ncm_node_config_free(p);
        p = parse_ok("{\"memoryManagerPolicy\": \"Static\", \"kubeReserved\": {\"memory\": "
                     "\"512Mi\"}, \"evictionHard\": {\"memory.available\": \"100Mi\"}, "
                     "\"reservedMemory\": [{\"numaNode\": 0, \"limits\": {\"memory\": "
                     "\"612Mi\"}}]}");
        assert_true(ncm_node_config_mem_policy_is_static(p));
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
                     "k: strict decoding error: unknown field \"cgroupRot\" (did you mean "
                     "\"cgroupRoot\"?)");
        /* nodecm's own fields are near misses too */
        expect_error("{\"fitAdmision\": \"never\"}", EINVAL,
                     "k: strict decoding error: unknown field \"fitAdmision\" (did you mean "
                     "\"fitAdmission\"?)");
        /* a partial list with cgroupsPerQOS off is fine when empty */
        {
                ncm_autoptr(ncm_node_config) c = parse_ok(
                                "{\"cgroupsPerQOS\": false, \"enforceNodeAllocatable\": []}");
                assert_int_equal(ncm_node_config_enforce(c), 0);
        }
}

static ncm_node_config *load(const char *file, ncm_node_config_decoding dec, int expect,
                             ncm_error *err)
{
        ncm_autofree char *path = tu_data_path(file);
        ncm_node_config *c = NULL;
        int r = ncm_node_config_load_file_ex(path, dec, &c, err);
        if (r != expect)
                fail_msg("%s: got %d (%s), expected %d", file, r, err->msg, expect);
        return c;
}

static void expect_warning(const ncm_node_config *c, size_t i, const char *text)
{
        if (i >= ncm_node_config_n_warnings(c) || !strstr(ncm_node_config_warning(c, i), text))
                fail_msg("warning %zu of %zu: '%s', expected '%s'", i,
                         ncm_node_config_n_warnings(c),
                         i < ncm_node_config_n_warnings(c) ? ncm_node_config_warning(c, i) : "-",
                         text);
}

/*
 * The kubelet's codec: the only registered version is v1beta1; kind and apiVersion are
 * required; an empty file or an empty document is no configuration. The texts are the
 * kubelet's (configfiles.go, the json serializer's missing-kind error, the scheme's
 * not-registered error).
 */
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
        assert_non_null(strstr(err.msg, "no kind \"Pod\" is registered for version \"v1\""));
        assert_int_equal(strncmp(err.msg, path, strlen(path)), 0);
        tu_write_file(path, "apiVersion: kubelet.config.k8s.io/v2\nkind: KubeletConfiguration\n");
        assert_int_equal(ncm_node_config_load_file(path, &c, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "for version \"kubelet.config.k8s.io/v2\""));
        tu_write_file(path, "kind: KubeletConfiguration\ncgroupDriver: nope\n");
        assert_int_equal(ncm_node_config_load_file(path, &c, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "Object 'apiVersion' is missing in "
                                        "'{\"kind\":\"KubeletConfiguration\",\"cgroupDriver\":"
                                        "\"nope\"}'"));
        tu_write_file(path, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: "
                            "KubeletConfiguration\ncgroupDriver: nope\n");
        assert_int_equal(ncm_node_config_load_file(path, &c, &err), -EINVAL);
        assert_non_null(strstr(err.msg, ": cgroupDriver: unknown cgroup driver"));
        tu_write_file(path, "- 1\n");
        assert_int_equal(ncm_node_config_load_file(path, &c, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "couldn't get version/kind"));
        tu_write_file(path, "apiVersion: 1\nkind: KubeletConfiguration\n");
        assert_int_equal(ncm_node_config_load_file(path, &c, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "cannot unmarshal number into Go struct field "
                                        ".apiVersion of type string"));
        assert_null(c);
        tu_rm_rf(dir);

        c = load("kubelet/apiversion-v1.yaml", NCM_NODE_CONFIG_LENIENT, -EINVAL, &err);
        assert_non_null(strstr(err.msg, "failed to decode: no kind \"KubeletConfiguration\" is "
                                        "registered for version \"kubelet.config.k8s.io/v1\""));
        c = load("kubelet/no-kind.yaml", NCM_NODE_CONFIG_LENIENT, -EINVAL, &err);
        assert_non_null(strstr(err.msg, "failed to decode: Object 'Kind' is missing in "
                                        "'{\"cpuManagerPolicy\":\"static\",\"reservedSystemCPUs\":"
                                        "\"0\"}'"));
        c = load("kubelet/empty.yaml", NCM_NODE_CONFIG_LENIENT, -EINVAL, &err);
        assert_non_null(strstr(err.msg, "kubelet config file \""));
        assert_non_null(strstr(err.msg, "empty.yaml\" was empty"));
        c = load("kubelet/comments-only.yaml", NCM_NODE_CONFIG_LENIENT, -EINVAL, &err);
        assert_non_null(strstr(err.msg, "failed to decode: Object 'Kind' is missing in 'null'"));
        assert_null(c);
}

/*
 * A field the kubelet does not know (amazon-eks-ami's "CPUManagerPolicy", capitalised: the
 * decoder is case-sensitive) fails strict decoding; the kubelet then decodes leniently, ignores
 * it and starts with the none policy. nodecm: the same with a warning naming the field, or a
 * refusal with the kubelet's strict text.
 */
static void test_node_config_lenient_decoding(void **state)
{
        ncm_autoptr(ncm_node_config) c = NULL;
        ncm_autoptr(ncm_node_config) anchors = NULL;
        ncm_autoptr(ncm_node_config) two = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        c = load("kubelet/eks-case.json", NCM_NODE_CONFIG_LENIENT, 0, &err);
        assert_string_equal(ncm_node_config_cpu_policy(c), "none");
        assert_int_equal(ncm_node_config_n_warnings(c), 1);
        expect_warning(c, 0,
                       "unknown field \"CPUManagerPolicy\" (the kubelet's decoder is "
                       "case-sensitive: it does not read it as \"cpuManagerPolicy\"): the kubelet "
                       "ignores it (lenient decoding, after strict decoding failed)");
        assert_null(load("kubelet/eks-case.json", NCM_NODE_CONFIG_STRICT, -EINVAL, &err));
        assert_non_null(strstr(err.msg, "eks-case.json: strict decoding error: unknown field "
                                        "\"CPUManagerPolicy\""));

        /* anchors, aliases and a merge key read; the repeats go-yaml's strict mode refuses */
        anchors = load("kubelet/anchors-repeats.yaml", NCM_NODE_CONFIG_LENIENT, 0, &err);
        assert_string_equal(ncm_node_config_cpu_policy(anchors), "static");
        assert_int_equal(ncm_quantity_value(ncm_resource_list_get(
                                         ncm_node_config_system_reserved(anchors), "memory")),
                         512 << 20);
        assert_int_equal(ncm_quantity_value(ncm_resource_list_get(
                                         ncm_node_config_kube_reserved(anchors), "memory")),
                         1 << 30);
        expect_warning(anchors, 0,
                       "line 11: key \"memory\" (systemReserved.memory) already set in map: the "
                       "kubelet keeps the last value");
        expect_warning(anchors, 1, "line 14: key \"cpuManagerPolicy\" already set in map");
        assert_null(load("kubelet/anchors-repeats.yaml", NCM_NODE_CONFIG_STRICT, -EINVAL, &err));
        assert_non_null(strstr(err.msg, "strict decoding error: line 11: key \"memory\" already "
                                        "set in map, line 14: key \"cpuManagerPolicy\" already "
                                        "set in map"));

        /* the first document only, whatever follows */
        two = load("kubelet/two-documents.yaml", NCM_NODE_CONFIG_STRICT, 0, &err);
        assert_string_equal(ncm_node_config_cpu_policy(two), "static");
        expect_warning(two, 0,
                       "line 8: a second YAML document: the kubelet reads the first "
                       "one only");
}

/* Unknown, misspelt and nested unknown fields; a field newer than the chosen kubelet; JSON
 * repeats merge as Go merges them. */
static void test_node_config_unknown_fields(void **state)
{
        ncm_autofree char *dir = tu_mkdtemp();
        char path[4096];
        ncm_autoptr(ncm_node_config) c = NULL;
        ncm_autoptr(ncm_node_config) old = NULL;
        ncm_autoptr(ncm_node_config) j = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        snprintf(path, sizeof(path), "%s/k.yaml", dir);
        tu_write_file(path, "apiVersion: kubelet.config.k8s.io/v1beta1\n"
                            "kind: KubeletConfiguration\n"
                            "cpuManagerPolcy: static\n"
                            "authentication: {x509: {clientCAFiel: /ca}}\n"
                            "logging: {format: json, options: {json: {infoBufferSize: \"0\"}}}\n"
                            "nodecmd: {logLevel: info}\n"
                            "kubeletVersion: \"1.35\"\n"
                            "memoryReservationPolicy: TieredReservation\n");
        assert_int_equal(ncm_node_config_load_file(path, &c, &err), 0);
        assert_int_equal(ncm_node_config_n_warnings(c), 3);
        expect_warning(c, 0,
                       "unknown field \"cpuManagerPolcy\" (did you mean "
                       "\"cpuManagerPolicy\"?): the kubelet ignores it");
        expect_warning(c, 1, "unknown field \"authentication.x509.clientCAFiel\"");
        expect_warning(c, 2,
                       "unknown field \"memoryReservationPolicy\" (kubelet 1.35 has no such "
                       "field: it came in 1.36)");
        /* not read either: kubelet 1.35 has no memory reservation policy */
        {
                ncm_cgroup_pod_options o;
                ncm_node_config_pod_options(c, &o);
                assert_int_equal(o.memory_qos, NCM_CGROUP_MEMORY_QOS_NONE);
        }
        assert_int_equal(ncm_node_config_load_file_ex(path, NCM_NODE_CONFIG_STRICT, &old, &err),
                         -EINVAL);
        assert_non_null(strstr(err.msg, "unknown field \"cpuManagerPolcy\" (did you mean "
                                        "\"cpuManagerPolicy\"?), unknown field "
                                        "\"authentication.x509.clientCAFiel\" (did you mean "
                                        "\"clientCAFile\"?), unknown field "
                                        "\"memoryReservationPolicy\" (kubelet 1.35 has no such "
                                        "field: it came in 1.36)"));

        snprintf(path, sizeof(path), "%s/k.json", dir);
        tu_write_file(path, "{\"apiVersion\": \"kubelet.config.k8s.io/v1beta1\", \"kind\": "
                            "\"KubeletConfiguration\",\n \"kubeReserved\": {\"cpu\": \"1\"},\n "
                            "\"kubeReserved\": {\"memory\": \"1Gi\"}}");
        assert_int_equal(ncm_node_config_load_file(path, &j, &err), 0);
        assert_int_equal(ncm_node_config_kube_reserved(j)->n, 2);
        expect_warning(j, 0, "line 3: duplicate field \"kubeReserved\": the kubelet decodes both");
        assert_int_equal(ncm_node_config_load_file_ex(path, NCM_NODE_CONFIG_STRICT, &old, &err),
                         -EINVAL);
        assert_non_null(strstr(err.msg, "strict decoding error: duplicate field \"kubeReserved\""));
        tu_rm_rf(dir);
}

static void expect_parse_error(const char *text, const char *msg)
{
        ncm_node_config *c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_node_config_parse(text, strlen(text), "t", "", &c, &err);
        if (r != -EINVAL || !strstr(err.msg, msg))
                fail_msg("%s: got %d '%s', expected '%s'", text, r, err.msg, msg);
        assert_null(c);
}

/*
 * featureGates as each kubelet release's SetFromMap sets them: the gates it knows (the table in
 * node-config-gates.c), the ones locked to their default, the GA and deprecated ones logged.
 */
static void test_node_config_feature_gates_per_release(void **state)
{
        ncm_autoptr(ncm_node_config) c32 = NULL;
        ncm_autoptr(ncm_node_config) opts32 = NULL;
        ncm_autoptr(ncm_node_config) alpha = NULL;
        (void)state;

        /* CPUManager: GA and locked in 1.32, its last release */
        c32 = parse_ok("{\"kubeletVersion\": \"1.32\", \"featureGates\": {\"CPUManager\": true}}");
        assert_int_equal(ncm_node_config_n_warnings(c32), 1);
        assert_string_equal(ncm_node_config_warning(c32, 0),
                            "featureGates: Setting GA feature gate CPUManager=true. It will be "
                            "removed in a future release.");
        expect_parse_error("{\"kubeletVersion\": \"1.32\", \"featureGates\": {\"CPUManager\": "
                           "false}}",
                           "featureGates: cannot set feature gate CPUManager to false, feature is "
                           "locked to true");
        expect_parse_error("{\"kubeletVersion\": \"1.33\", \"featureGates\": {\"CPUManager\": "
                           "true}}",
                           "featureGates: failed to set feature gates from initial flags-based "
                           "config: unrecognized feature gate: CPUManager (kubelet 1.33: 1.32 was "
                           "the last to know it)");
        /* the newest release by default; a gate newer than the chosen one */
        expect_parse_error("{\"featureGates\": {\"CPUManager\": true}}",
                           "unrecognized feature gate: CPUManager (kubelet 1.37");
        expect_parse_error("{\"kubeletVersion\": \"1.33\", \"featureGates\": "
                           "{\"DRAConsumableCapacity\": true}}",
                           "unrecognized feature gate: DRAConsumableCapacity (kubelet 1.33: it "
                           "came in 1.34)");
        /* several: the first by name (Go's map order is random) */
        expect_parse_error("{\"featureGates\": {\"Zzz\": true, \"Aaa\": true}}",
                           "unrecognized feature gate: Aaa");
        /* CPUManagerPolicyOptions is locked from 1.33; in 1.32, off, it refuses the options as
         * server.go did */
        expect_parse_error("{\"featureGates\": {\"CPUManagerPolicyOptions\": false}}",
                           "cannot set feature gate CPUManagerPolicyOptions to false, feature is "
                           "locked to true");
        opts32 = parse_ok("{\"kubeletVersion\": \"1.32\", \"featureGates\": "
                          "{\"CPUManagerPolicyOptions\": false}}");
        expect_parse_error(
                        "{\"kubeletVersion\": \"1.32\", \"featureGates\": "
                        "{\"CPUManagerPolicyOptions\": false}, \"cpuManagerPolicy\": "
                        "\"static\", \"reservedSystemCPUs\": \"0\", \"cpuManagerPolicyOptions\": "
                        "{\"full-pcpus-only\": \"true\"}}",
                        "cpuManagerPolicyOptions: CPU Manager policy options "
                        "map[full-pcpus-only:true] require feature gates \"CPUManager\", "
                        "\"CPUManagerPolicyOptions\" enabled");
        /* AllAlpha turns the alpha option gates on */
        alpha = parse_ok("{\"featureGates\": {\"AllAlpha\": true}, \"cpuManagerPolicy\": "
                         "\"static\", \"reservedSystemCPUs\": \"0\", \"cpuManagerPolicyOptions\": "
                         "{\"distribute-cpus-across-cores\": \"true\"}}");
        expect_parse_error("{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                           "\"cpuManagerPolicyOptions\": {\"distribute-cpus-across-cores\": "
                           "\"true\"}}",
                           "Alpha-level Options not enabled");
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

/* What a node's directory records (issue 20): a canonical form that reads back the same, and
 * the fields two configurations differ in. */
static void test_node_config_format_and_diff(void **state)
{
        const char *a = "{\"apiVersion\": \"kubelet.config.k8s.io/v1beta1\", "
                        "\"kind\": \"KubeletConfiguration\", \"reservedSystemCPUs\": \"0\", "
                        "\"cpuManagerPolicy\": \"static\", \"rootDirectory\": \"/x\", "
                        "\"kubeReserved\": {\"cpu\": \"500m\"}}";
        const char *b = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0-1\", "
                        "\"topologyManagerPolicy\": \"best-effort\", \"rootDirectory\": \"/y\"}";
        ncm_node_config *ca = NULL, *cb = NULL, *back = NULL;
        ncm_buf t = NCM_BUF_INIT, t2 = NCM_BUF_INIT, d = NCM_BUF_INIT;
        (void)state;

        assert_int_equal(ncm_node_config_parse(a, strlen(a), NULL, "", &ca, NULL), 0);
        assert_int_equal(ncm_node_config_parse(b, strlen(b), NULL, "", &cb, NULL), 0);
        assert_int_equal(ncm_node_config_format(ca, &t), 0);
        assert_string_equal(t.data, "{\"apiVersion\": \"kubelet.config.k8s.io/v1beta1\", \"kind\": "
                                    "\"KubeletConfiguration\", \"cpuManagerPolicy\":\"static\","
                                    "\"reservedSystemCPUs\":\"0\",\"kubeReserved\":{\"cpu\":"
                                    "\"500m\"}}\n");
        assert_int_equal(ncm_node_config_parse(t.data, t.len, NULL, "", &back, NULL), 0);
        assert_int_equal(ncm_node_config_format(back, &t2), 0);
        assert_string_equal(t.data, t2.data);
        assert_int_equal(ncm_node_config_diff(ca, back, &d), 0);
        assert_int_equal(ncm_node_config_diff(ca, cb, &d), 3);
        assert_string_equal(d.data, "reservedSystemCPUs: \"0\" -> \"0-1\"; kubeReserved: "
                                    "{\"cpu\":\"500m\"} -> (unset); topologyManagerPolicy: (unset) "
                                    "-> \"best-effort\"");
        ncm_buf_done(&t);
        ncm_buf_done(&t2);
        ncm_buf_done(&d);
        ncm_node_config_free(ca);
        ncm_node_config_free(cb);
        ncm_node_config_free(back);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_node_config_kubeadm_file),
                        cmocka_unit_test(test_node_config_reserved_cpus_replace_reserved_cpu),
                        cmocka_unit_test(test_node_config_defaults),
                        cmocka_unit_test(test_node_config_predicates),
                        cmocka_unit_test(test_node_config_cgroup_fields),
                        cmocka_unit_test(test_node_config_errors),
                        cmocka_unit_test(test_node_config_file_kind),
                        cmocka_unit_test(test_node_config_lenient_decoding),
                        cmocka_unit_test(test_node_config_unknown_fields),
                        cmocka_unit_test(test_node_config_feature_gates_per_release),
                        cmocka_unit_test(test_node_config_compare),
                        cmocka_unit_test(test_node_config_merge_text),
                        cmocka_unit_test(test_node_config_format_and_diff),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
