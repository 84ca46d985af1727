/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Resource configuration: the kubelet's conversions at their boundaries, the tables of
 * helpers_linux_test.go (ResourceConfigForPod with and without the CustomCPUCFSQuotaPeriod
 * gate, HugePageLimits, MemoryQoS), init containers and sidecars in the pod totals, container
 * values sent through CRI, the QoS tiers, node allocatable (node_container_manager_linux_test.go)
 * and the parsers of cgroup files and kubelet flags.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroups.h>

#include "testutil.h"

#define Mi (INT64_C(1) << 20)
#define Gi (INT64_C(1) << 30)

/* ---- conversions ---- */

static void test_cgroup_millicpu_to_shares_boundaries(void **state)
{
        (void)state;
        assert_int_equal(ncm_cgroup_millicpu_to_shares(0), 2);
        assert_int_equal(ncm_cgroup_millicpu_to_shares(1), 2);
        assert_int_equal(ncm_cgroup_millicpu_to_shares(2), 2);
        assert_int_equal(ncm_cgroup_millicpu_to_shares(3), 3);
        assert_int_equal(ncm_cgroup_millicpu_to_shares(100), 102);
        assert_int_equal(ncm_cgroup_millicpu_to_shares(1000), 1024);
        assert_int_equal(ncm_cgroup_millicpu_to_shares(256000), 262144);
        assert_int_equal(ncm_cgroup_millicpu_to_shares(256001), 262144);
        assert_int_equal(ncm_cgroup_millicpu_to_shares(INT64_C(1) << 40), 262144);
        assert_int_equal(ncm_cgroup_millicpu_to_shares(INT64_MAX), 262144);
        assert_int_equal(ncm_cgroup_millicpu_to_shares(-5), 2);
        assert_int_equal(ncm_cgroup_millicpu_to_shares(INT64_MIN), 2);
}

static void test_cgroup_millicpu_to_quota_table(void **state)
{
        /* TestMilliCPUToQuota */
        static const struct {
                int64_t milli, quota;
        } t[] = {{0, 0},       {5, 1000},    {9, 1000},      {10, 1000},
                 {200, 20000}, {500, 50000}, {1000, 100000}, {1500, 150000}};
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++)
                assert_int_equal(ncm_cgroup_millicpu_to_quota(t[i].milli, 100000, false),
                                 t[i].quota);
}

static void test_cgroup_millicpu_to_quota_period(void **state)
{
        (void)state;
        /* Without the gate the period is 100 ms whatever the config says. */
        assert_int_equal(ncm_cgroup_millicpu_to_quota(100, 5000, false), 10000);
        assert_int_equal(ncm_cgroup_millicpu_to_quota(200, 5000, true), 1000);
        assert_int_equal(ncm_cgroup_millicpu_to_quota(100, 5000, true), 1000); /* floor */
        assert_int_equal(ncm_cgroup_millicpu_to_quota(1000, 5000, true), 5000);
        assert_int_equal(ncm_cgroup_millicpu_to_quota(1000, 1000000, true), 1000000);
        assert_int_equal(ncm_cgroup_millicpu_to_quota(1, 1000, true), 1000);
        assert_int_equal(ncm_cgroup_millicpu_to_quota(0, 1000, true), 0);
        assert_int_equal(ncm_cgroup_millicpu_to_quota(INT64_MAX, 100000, false), INT64_MAX);
        assert_int_equal(ncm_cgroup_millicpu_to_quota(-10, 100000, false), 1000);
        assert_int_equal(ncm_cgroup_millicpu_to_quota(NCM_CGROUP_MIN_MILLICPU_LIMIT, 100000, false),
                         NCM_CGROUP_MIN_QUOTA_PERIOD);
}

static void test_cgroup_reverse_conversions(void **state)
{
        (void)state;
        assert_int_equal(ncm_cgroup_shares_to_millicpu(0), 0);
        assert_int_equal(ncm_cgroup_shares_to_millicpu(1), 0);
        assert_int_equal(ncm_cgroup_shares_to_millicpu(2), 2);
        assert_int_equal(ncm_cgroup_shares_to_millicpu(102), 100);
        assert_int_equal(ncm_cgroup_shares_to_millicpu(1024), 1000);
        assert_int_equal(ncm_cgroup_shares_to_millicpu(262144), 256000);
        assert_int_equal(ncm_cgroup_quota_to_millicpu(-1, 100000), 0);
        assert_int_equal(ncm_cgroup_quota_to_millicpu(20000, 100000), 200);
        assert_int_equal(ncm_cgroup_quota_to_millicpu(1000, 100000), 10);
        assert_int_equal(ncm_cgroup_quota_to_millicpu(1000, 5000), 200);
        assert_int_equal(ncm_cgroup_quota_to_millicpu(1000, 0), 0);
}

static void test_cgroup_weight_table(void **state)
{
        /* spec C.2: milliCPU -> shares -> kubelet linear / runtime quadratic weight */
        static const struct {
                int64_t milli;
                uint64_t shares, linear, oci;
        } t[] = {
                        {0, 2, 1, 1},
                        {10, 10, 1, 4},
                        {100, 102, 4, 17},
                        {250, 256, 10, 35},
                        {500, 512, 20, 59},
                        {1000, 1024, 39, 100},
                        {2000, 2048, 79, 174},
                        {4000, 4096, 157, 303},
                        {8000, 8192, 313, 532},
                        {64000, 65536, 2500, 3023},
                        {256000, 262144, 10000, 10000},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                uint64_t s = ncm_cgroup_millicpu_to_shares(t[i].milli);
                assert_int_equal(s, t[i].shares);
                assert_int_equal(ncm_cgroup_shares_to_weight(s), t[i].linear);
                assert_int_equal(ncm_cgroup_shares_to_weight_oci(s), t[i].oci);
        }
        assert_int_equal(ncm_cgroup_shares_to_weight(0), 0);
        assert_int_equal(ncm_cgroup_shares_to_weight_oci(0), 0);
        assert_int_equal(ncm_cgroup_shares_to_weight(1), 1);
        assert_int_equal(ncm_cgroup_shares_to_weight_oci(1), 1);
        assert_int_equal(ncm_cgroup_shares_to_weight(262143), 9999);
        assert_int_equal(ncm_cgroup_shares_to_weight_oci(262143), 10000);
        assert_int_equal(ncm_cgroup_shares_to_weight(UINT64_MAX), 10000);
        assert_int_equal(ncm_cgroup_weight_to_shares(0), 0);
        assert_int_equal(ncm_cgroup_weight_to_shares(1), 2);
        assert_int_equal(ncm_cgroup_weight_to_shares(100), 2597);
        assert_int_equal(ncm_cgroup_weight_to_shares(10000), 262144);
        assert_int_equal(ncm_cgroup_weight_to_shares(20000), 262144);
}

static void test_cgroup_hugepage_size_names(void **state)
{
        char b[32];
        (void)state;
        assert_int_equal(ncm_cgroup_hugepage_size_name(2097152, b, sizeof(b)), 0);
        assert_string_equal(b, "2MB");
        assert_int_equal(ncm_cgroup_hugepage_size_name(1073741824, b, sizeof(b)), 0);
        assert_string_equal(b, "1GB");
        assert_int_equal(ncm_cgroup_hugepage_size_name(65536, b, sizeof(b)), 0);
        assert_string_equal(b, "64KB");
        assert_int_equal(ncm_cgroup_hugepage_size_name(1000, b, sizeof(b)), 0);
        assert_string_equal(b, "1000B");
        assert_int_equal(ncm_cgroup_hugepage_size_name(INT64_C(16) << 40, b, sizeof(b)), 0);
        assert_string_equal(b, "16TB");
        assert_int_equal(ncm_cgroup_hugepage_size_name(1536, b, sizeof(b)), -EINVAL);
        assert_int_equal(ncm_cgroup_hugepage_size_name(0, b, sizeof(b)), -EINVAL);
        assert_int_equal(ncm_cgroup_hugepage_size_name(-2, b, sizeof(b)), -EINVAL);
        assert_int_equal(ncm_cgroup_hugepage_size_name(2097152, b, 3), -ENAMETOOLONG);
}

/* ---- ResourceConfigForPod (helpers_linux_test.go) ---- */

static ncm_pod *pod_yaml(const char *yaml)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;
        int r = ncm_pod_parse(yaml, strlen(yaml), "test", &pod, &err);
        if (r < 0)
                fail_msg("pod: %s", err.msg);
        return pod;
}

/* One container with requests REQ and limits LIM ("cpu: x, memory: y" flow maps). */
#define C1(req, lim)                                                                               \
        "metadata: {uid: u1}\nspec:\n  containers:\n  - name: a\n    resources: {requests: {" req  \
        "}, limits: {" lim "}}\n"
#define PARTIAL                                                                                    \
        "metadata: {uid: u1}\nspec:\n  containers:\n"                                              \
        "  - name: a\n    resources: {requests: {cpu: 100m, memory: 100Mi}, limits: {cpu: 200m, "  \
        "memory: 200Mi}}\n"                                                                        \
        "  - name: b\n    resources: {requests: {cpu: 100m, memory: 100Mi}}\n"

typedef struct expect {
        uint64_t shares;
        bool quota_set;
        int64_t quota;
        uint64_t period;
        bool memory_set;
        int64_t memory;
} expect;

typedef struct rc_case {
        const char *name;
        const char *pod;
        bool enforce;
        uint64_t period;
        expect want;
} rc_case;

#define DEF 100000
#define TUNED 5000
#define NOQ false, 0, 0
#define NOM false, 0

static void check_case(const rc_case *c, bool custom)
{
        ncm_cgroup_pod_options o;
        ncm_cgroup_resources r;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = pod_yaml(c->pod);

        ncm_cgroup_pod_options_init(&o);
        o.enforce_cpu_limits = c->enforce;
        o.cpu_period = c->period;
        o.custom_cpu_period = custom;
        if (ncm_cgroup_config_for_pod(pod, &o, &r, &err) < 0)
                fail_msg("%s: %s", c->name, err.msg);
        if (!r.has_cpu_shares || r.cpu_shares != c->want.shares)
                fail_msg("%s: shares %llu, want %llu", c->name, (unsigned long long)r.cpu_shares,
                         (unsigned long long)c->want.shares);
        if (r.has_cpu_quota != c->want.quota_set || r.has_cpu_period != c->want.quota_set)
                fail_msg("%s: quota set %d, want %d", c->name, r.has_cpu_quota, c->want.quota_set);
        if (c->want.quota_set && (r.cpu_quota != c->want.quota || r.cpu_period != c->want.period))
                fail_msg("%s: quota %lld period %llu, want %lld %llu", c->name,
                         (long long)r.cpu_quota, (unsigned long long)r.cpu_period,
                         (long long)c->want.quota, (unsigned long long)c->want.period);
        if (r.has_memory != c->want.memory_set ||
            (c->want.memory_set && r.memory != c->want.memory))
                fail_msg("%s: memory %d %lld, want %d %lld", c->name, r.has_memory,
                         (long long)r.memory, c->want.memory_set, (long long)c->want.memory);
        assert_true(r.has_hugepages);
        assert_false(r.has_pids);
        assert_false(r.has_memory_min || r.has_memory_low);
        ncm_cgroup_resources_done(&r);
        ncm_pod_free(pod);
}

static const rc_case common_cases[] = {
                {"besteffort", C1("", ""), true, DEF, {2, NOQ, NOM}},
                {"burstable-no-limits",
                 C1("cpu: 100m, memory: 100Mi", ""),
                 true,
                 DEF,
                 {102, NOQ, NOM}},
                {"burstable-with-limits",
                 C1("cpu: 100m, memory: 100Mi", "cpu: 200m, memory: 200Mi"),
                 true,
                 DEF,
                 {102, true, 20000, DEF, true, 200 * Mi}},
                {"burstable-with-limits-no-cpu-enforcement",
                 C1("cpu: 100m, memory: 100Mi", "cpu: 200m, memory: 200Mi"),
                 false,
                 DEF,
                 {102, true, -1, DEF, true, 200 * Mi}},
                {"burstable-partial-limits", PARTIAL, true, DEF, {204, NOQ, NOM}},
                {"burstable-with-limits-no-cpu-enforcement-with-tuned-quota",
                 C1("cpu: 100m, memory: 100Mi", "cpu: 200m, memory: 200Mi"),
                 false,
                 TUNED,
                 {102, true, -1, TUNED, true, 200 * Mi}},
                {"burstable-partial-limits-with-tuned-quota",
                 PARTIAL,
                 true,
                 TUNED,
                 {204, NOQ, NOM}},
                {"guaranteed",
                 C1("cpu: 100m, memory: 100Mi", "cpu: 100m, memory: 100Mi"),
                 true,
                 DEF,
                 {102, true, 10000, DEF, true, 100 * Mi}},
                {"guaranteed-no-cpu-enforcement",
                 C1("cpu: 100m, memory: 100Mi", "cpu: 100m, memory: 100Mi"),
                 false,
                 DEF,
                 {102, true, -1, DEF, true, 100 * Mi}},
                {"guaranteed-no-cpu-enforcement-with-tuned-quota",
                 C1("cpu: 100m, memory: 100Mi", "cpu: 100m, memory: 100Mi"),
                 false,
                 TUNED,
                 {102, true, -1, TUNED, true, 100 * Mi}},
};

/* TestResourceConfigForPod: CustomCPUCFSQuotaPeriod off, PodLevelResources on. */
static const rc_case gate_off_cases[] = {
                {"burstable-with-limits-with-tuned-quota",
                 C1("cpu: 100m, memory: 100Mi", "cpu: 200m, memory: 200Mi"),
                 true,
                 TUNED,
                 {102, true, 20000, TUNED, true, 200 * Mi}},
                {"guaranteed-with-tuned-quota",
                 C1("cpu: 100m, memory: 100Mi", "cpu: 100m, memory: 100Mi"),
                 true,
                 TUNED,
                 {102, true, 10000, TUNED, true, 100 * Mi}},
                {"burstable-partial-limits-with-init-containers",
                 "metadata: {uid: u1}\nspec:\n  containers:\n"
                 "  - name: a\n    resources: {requests: {cpu: 100m, memory: 100m}, limits: {cpu: "
                 "100m, "
                 "memory: 100Mi}}\n"
                 "  - name: b\n    resources: {requests: {cpu: 100m, memory: 100m}}\n"
                 "  initContainers:\n"
                 "  - name: i1\n    resources: {requests: {cpu: 100m, memory: 100m}, limits: {cpu: "
                 "100m, "
                 "memory: 100Mi}}\n"
                 "  - name: i2\n    resources: {requests: {cpu: 100m, memory: 100m}}\n",
                 true,
                 TUNED,
                 {204, NOQ, NOM}},
                {"besteffort-with-pod-level-resources-enabled",
                 "metadata: {uid: u1}\nspec:\n  resources: {requests: {}, limits: {}}\n"
                 "  containers:\n  - name: a\n",
                 true,
                 DEF,
                 {2, NOQ, NOM}},
                {"burstable-with-pod-level-requests",
                 "metadata: {uid: u1}\nspec:\n  resources: {requests: {cpu: 100m, memory: 100Mi}}\n"
                 "  containers:\n  - name: a\n",
                 true,
                 DEF,
                 {102, NOQ, NOM}},
                {"burstable-with-pod-and-container-level-requests",
                 "metadata: {uid: u1}\nspec:\n  resources: {requests: {cpu: 100m, memory: 100Mi}}\n"
                 "  containers:\n  - name: a\n    resources: {requests: {cpu: 10m, memory: "
                 "50Mi}}\n",
                 true,
                 DEF,
                 {102, NOQ, NOM}},
                {"burstable-with-pod-level-resources",
                 "metadata: {uid: u1}\nspec:\n  resources: {requests: {cpu: 100m, memory: 100Mi}, "
                 "limits: {cpu: 200m, memory: 200Mi}}\n  containers:\n  - name: a\n",
                 true,
                 DEF,
                 {102, true, 20000, DEF, true, 200 * Mi}},
                {"burstable-with-pod-and-container-level-resources",
                 "metadata: {uid: u1}\nspec:\n  resources: {requests: {cpu: 100m, memory: 100Mi}, "
                 "limits: {cpu: 200m, memory: 200Mi}}\n  containers:\n  - name: a\n    resources: "
                 "{requests: {cpu: 10m, memory: 50Mi}, limits: {cpu: 50m, memory: 100Mi}}\n",
                 true,
                 DEF,
                 {102, true, 20000, DEF, true, 200 * Mi}},
                /* "burstable-with-partial-pod-level-resources-limits" (pod requests 300Mi,
                 * container limits 200Mi) is left out: the API server defaults the pod-level limits
                 * to 200Mi and then refuses the pod, so the kubelet never sees it. */
                {"guaranteed-with-pod-level-resources",
                 "metadata: {uid: u1}\nspec:\n  resources: {requests: {cpu: 100m, memory: 100Mi}, "
                 "limits: {cpu: 100m, memory: 100Mi}}\n  containers:\n  - name: a\n",
                 true,
                 DEF,
                 {102, true, 10000, DEF, true, 100 * Mi}},
                {"guaranteed-with-pod-and-container-level-resources",
                 "metadata: {uid: u1}\nspec:\n  resources: {requests: {cpu: 100m, memory: 100Mi}, "
                 "limits: {cpu: 100m, memory: 100Mi}}\n  containers:\n  - name: a\n    resources: "
                 "{requests: {cpu: 10m, memory: 50Mi}, limits: {cpu: 50m, memory: 100Mi}}\n",
                 true,
                 DEF,
                 {102, true, 10000, DEF, true, 100 * Mi}},
                {"guaranteed-pod-level-resources-with-init-containers",
                 "metadata: {uid: u1}\nspec:\n  resources: {requests: {cpu: 100m, memory: 100Mi}, "
                 "limits: {cpu: 100m, memory: 100Mi}}\n  containers:\n  - name: a\n    resources: "
                 "{requests: {cpu: 10m, memory: 50Mi}, limits: {cpu: 50m, memory: 50Mi}}\n"
                 "  initContainers:\n  - name: i\n    resources: {requests: {cpu: 10m, memory: "
                 "50Mi}, "
                 "limits: {cpu: 50m, memory: 50Mi}}\n",
                 true,
                 DEF,
                 {102, true, 10000, DEF, true, 100 * Mi}},
};

/* TestResourceConfigForPodWithCustomCPUCFSQuotaPeriod: the gate on. */
static const rc_case gate_on_cases[] = {
                {"burstable-with-limits-with-tuned-quota",
                 C1("cpu: 100m, memory: 100Mi", "cpu: 200m, memory: 200Mi"),
                 true,
                 TUNED,
                 {102, true, 1000, TUNED, true, 200 * Mi}},
                {"guaranteed-with-tuned-quota",
                 C1("cpu: 100m, memory: 100Mi", "cpu: 100m, memory: 100Mi"),
                 true,
                 TUNED,
                 {102, true, 1000, TUNED, true, 100 * Mi}},
};

static void test_cgroup_resource_config_for_pod(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(common_cases); i++)
                check_case(&common_cases[i], false);
        for (size_t i = 0; i < NCM_ELEMENTSOF(gate_off_cases); i++)
                check_case(&gate_off_cases[i], false);
}

static void test_cgroup_resource_config_custom_period(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(common_cases); i++)
                check_case(&common_cases[i], true);
        for (size_t i = 0; i < NCM_ELEMENTSOF(gate_on_cases); i++)
                check_case(&gate_on_cases[i], true);
}

static void test_cgroup_pod_level_gate_off(void **state)
{
        ncm_cgroup_pod_options o;
        ncm_cgroup_pod_totals t;
        ncm_pod *pod = pod_yaml("metadata: {uid: u1}\nspec:\n  resources: {requests: {cpu: 100m, "
                                "memory: 100Mi}, limits: {cpu: 200m, memory: 200Mi}}\n"
                                "  containers:\n  - name: a\n    resources: {requests: {cpu: 10m, "
                                "memory: 50Mi}, limits: {cpu: 50m, memory: 100Mi}}\n");
        (void)state;
        ncm_cgroup_pod_options_init(&o);
        o.pod_level_resources = false;
        assert_int_equal(ncm_cgroup_totals_for_pod(pod, &o, &t, NULL), 0);
        /* The containers' aggregate, not spec.resources. */
        assert_int_equal(t.cpu_request_milli, 10);
        assert_int_equal(t.cpu_limit_milli, 50);
        assert_int_equal(t.memory_limit, 100 * Mi);
        ncm_pod_free(pod);
}

/* TestHugePageLimits */
static void test_cgroup_hugepage_limits(void **state)
{
        ncm_cgroup_pod_options o;
        ncm_cgroup_resources r;
        ncm_pod *one = pod_yaml("metadata: {uid: u1}\nspec:\n  containers:\n  - name: a\n    "
                                "resources: {requests: {hugepages-2Mi: \"128\"}, limits: "
                                "{hugepages-2Mi: \"128\"}}\n");
        ncm_pod *two = pod_yaml("metadata: {uid: u1}\nspec:\n  containers:\n  - name: a\n    "
                                "resources:\n      requests: {hugepages-2Mi: \"128\", "
                                "hugepages-2097152: \"256\", hugepages-4Mi: \"512\"}\n      "
                                "limits: {hugepages-2Mi: \"128\", hugepages-2097152: \"256\", "
                                "hugepages-4Mi: \"512\"}\n");
        (void)state;
        ncm_cgroup_pod_options_init(&o);
        o.enforce_cpu_limits = false;
        o.cpu_period = 0;
        assert_int_equal(ncm_cgroup_config_for_pod(one, &o, &r, NULL), 0);
        assert_true(r.has_hugepages);
        assert_int_equal(r.n_hugepages, 1);
        assert_int_equal(r.hugepages[0].page_size, 2 * Mi);
        assert_int_equal(r.hugepages[0].limit, 128);
        ncm_cgroup_resources_done(&r);
        assert_int_equal(ncm_cgroup_config_for_pod(two, &o, &r, NULL), 0);
        assert_int_equal(r.n_hugepages, 2);
        assert_int_equal(r.hugepages[0].page_size, 2 * Mi);
        assert_int_equal(r.hugepages[0].limit, 384);
        assert_int_equal(r.hugepages[1].page_size, 4 * Mi);
        assert_int_equal(r.hugepages[1].limit, 512);
        ncm_cgroup_resources_done(&r);
        ncm_pod_free(one);
        ncm_pod_free(two);
}

/*
 * TestResourceConfigForPodWithEnforceMemoryQoS, with v1.37's TieredReservation: Guaranteed
 * pods protect their requests with memory.min, Burstable ones with memory.low (older kubelets
 * used memory.min for both), BestEffort nothing.
 */
static void test_cgroup_memory_qos_tiered(void **state)
{
        static const struct {
                const char *pod;
                bool min;
                int64_t value;
        } t[] = {
                        {C1("", ""), false, 0},
                        {C1("cpu: 100m, memory: 100Mi", ""), false, 100 * Mi},
                        {C1("cpu: 100m, memory: 100Mi", "cpu: 200m, memory: 200Mi"), false,
                         100 * Mi},
                        {PARTIAL, false, 200 * Mi},
                        {C1("cpu: 100m, memory: 100Mi", "cpu: 100m, memory: 100Mi"), true,
                         100 * Mi},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm_cgroup_pod_options o;
                ncm_cgroup_resources r;
                ncm_pod *pod = pod_yaml(t[i].pod);
                ncm_cgroup_pod_options_init(&o);
                o.memory_qos = NCM_CGROUP_MEMORY_QOS_TIERED;
                assert_int_equal(ncm_cgroup_config_for_pod(pod, &o, &r, NULL), 0);
                if (t[i].value == 0) {
                        assert_false(r.has_memory_min || r.has_memory_low);
                } else if (t[i].min) {
                        assert_true(r.has_memory_min);
                        assert_false(r.has_memory_low);
                        assert_int_equal(r.memory_min, t[i].value);
                } else {
                        assert_true(r.has_memory_low);
                        assert_false(r.has_memory_min);
                        assert_int_equal(r.memory_low, t[i].value);
                }
                ncm_cgroup_resources_done(&r);
                ncm_pod_free(pod);
        }
}

static void test_cgroup_pod_pids_limit(void **state)
{
        ncm_cgroup_pod_options o;
        ncm_cgroup_resources r;
        ncm_pod *pod = pod_yaml(C1("", ""));
        (void)state;
        ncm_cgroup_pod_options_init(&o);
        o.pod_pids_limit = 0;
        assert_int_equal(ncm_cgroup_config_for_pod(pod, &o, &r, NULL), 0);
        assert_false(r.has_pids);
        ncm_cgroup_resources_done(&r);
        o.pod_pids_limit = 1024;
        assert_int_equal(ncm_cgroup_config_for_pod(pod, &o, &r, NULL), 0);
        assert_true(r.has_pids);
        assert_int_equal(r.pids, 1024);
        ncm_cgroup_resources_done(&r);
        ncm_pod_free(pod);
}

/* Sidecars count in the totals, and in the limits-declared check of the init containers. */
static void test_cgroup_sidecars_and_init_containers(void **state)
{
        ncm_cgroup_pod_options o;
        ncm_cgroup_pod_totals t;
        ncm_cgroup_resources r;
        /* init i (no limits) starts after sidecar s (limits): its cumulative limits are s's. */
        ncm_pod *after = pod_yaml(
                        "metadata: {uid: u1}\nspec:\n  initContainers:\n"
                        "  - name: s\n    restartPolicy: Always\n    resources: {limits: {cpu: "
                        "100m, "
                        "memory: 100Mi}}\n"
                        "  - name: i\n    resources: {requests: {cpu: 50m}}\n"
                        "  containers:\n  - name: a\n    resources: {limits: {cpu: 200m, memory: "
                        "200Mi}}\n");
        /* init i before the sidecar: nothing declared for it. */
        ncm_pod *before = pod_yaml(
                        "metadata: {uid: u1}\nspec:\n  initContainers:\n"
                        "  - name: i\n    resources: {requests: {cpu: 50m}}\n"
                        "  - name: s\n    restartPolicy: Always\n    resources: {limits: {cpu: "
                        "100m, "
                        "memory: 100Mi}}\n"
                        "  containers:\n  - name: a\n    resources: {limits: {cpu: 200m, memory: "
                        "200Mi}}\n");
        /* A big init container raises the requests above the sum of the long-running ones. */
        ncm_pod *big = pod_yaml(
                        "metadata: {uid: u1}\nspec:\n  initContainers:\n"
                        "  - name: s\n    restartPolicy: Always\n    resources: {requests: {cpu: "
                        "100m}}\n"
                        "  - name: i\n    resources: {requests: {cpu: \"2\"}}\n"
                        "  containers:\n  - name: a\n    resources: {requests: {cpu: 300m}}\n");
        (void)state;
        ncm_cgroup_pod_options_init(&o);

        assert_int_equal(after->qos, NCM_QOS_BURSTABLE);
        assert_int_equal(ncm_cgroup_totals_for_pod(after, &o, &t, NULL), 0);
        assert_int_equal(t.cpu_request_milli, 300);
        assert_int_equal(t.cpu_limit_milli, 300);
        assert_int_equal(t.memory_limit, 300 * Mi);
        assert_true(t.cpu_limits_declared);
        assert_true(t.memory_limits_declared);
        assert_int_equal(ncm_cgroup_config_from_totals(&t, &o, &r, NULL), 0);
        assert_int_equal(r.cpu_shares, 307);
        assert_true(r.has_cpu_quota);
        assert_int_equal(r.cpu_quota, 30000);
        assert_int_equal(r.memory, 300 * Mi);
        ncm_cgroup_resources_done(&r);

        assert_int_equal(ncm_cgroup_totals_for_pod(before, &o, &t, NULL), 0);
        assert_false(t.cpu_limits_declared);
        assert_false(t.memory_limits_declared);
        assert_int_equal(ncm_cgroup_config_from_totals(&t, &o, &r, NULL), 0);
        assert_false(r.has_cpu_quota);
        assert_false(r.has_memory);
        ncm_cgroup_resources_done(&r);

        /* max(100m + 300m, 100m + 2000m) */
        assert_int_equal(ncm_cgroup_totals_for_pod(big, &o, &t, NULL), 0);
        assert_int_equal(t.cpu_request_milli, 2100);
        ncm_pod_free(after);
        ncm_pod_free(before);
        ncm_pod_free(big);
}

static void test_cgroup_overhead_counts(void **state)
{
        ncm_cgroup_pod_options o;
        ncm_cgroup_pod_totals t;
        ncm_pod *pod = pod_yaml("metadata: {uid: u1}\nspec:\n  overhead: {cpu: 250m, memory: "
                                "120Mi}\n  containers:\n  - name: a\n    resources: {limits: "
                                "{cpu: \"1\", memory: 1Gi}}\n");
        (void)state;
        ncm_cgroup_pod_options_init(&o);
        assert_int_equal(ncm_cgroup_totals_for_pod(pod, &o, &t, NULL), 0);
        assert_int_equal(t.qos, NCM_QOS_GUARANTEED);
        assert_int_equal(t.cpu_request_milli, 1250);
        assert_int_equal(t.cpu_limit_milli, 1250);
        assert_int_equal(t.memory_limit, Gi + 120 * Mi);
        ncm_pod_free(pod);
}

static void test_cgroup_totals_boundaries(void **state)
{
        ncm_cgroup_pod_options o;
        ncm_cgroup_pod_totals t;
        ncm_cgroup_resources r;
        (void)state;
        ncm_cgroup_pod_options_init(&o);
        memset(&t, 0, sizeof(t));
        t.qos = NCM_QOS_GUARANTEED;
        t.cpu_request_milli = t.cpu_limit_milli = 1;
        t.memory_limit = 1;
        assert_int_equal(ncm_cgroup_config_from_totals(&t, &o, &r, NULL), 0);
        assert_int_equal(r.cpu_shares, 2);
        assert_int_equal(r.cpu_quota, 1000);
        assert_int_equal(r.cpu_period, 100000);
        assert_int_equal(r.memory, 1);
        ncm_cgroup_resources_done(&r);
        t.cpu_request_milli = t.cpu_limit_milli = INT64_MAX;
        t.memory_limit = INT64_MAX;
        assert_int_equal(ncm_cgroup_config_from_totals(&t, &o, &r, NULL), 0);
        assert_int_equal(r.cpu_shares, 262144);
        assert_int_equal(r.cpu_quota, INT64_MAX);
        assert_int_equal(r.memory, INT64_MAX);
        ncm_cgroup_resources_done(&r);
}

/* ---- container values sent through CRI ---- */

static void test_cgroup_container_config(void **state)
{
        ncm_cgroup_pod_options o;
        ncm_cgroup_resources r;
        ncm_autoptr(ncm_cpuset) cpus = tu_cpuset("2-3");
        ncm_pod *pod = pod_yaml(
                        "metadata: {uid: u1}\nspec:\n  containers:\n"
                        "  - name: a\n    resources: {requests: {cpu: 100m, memory: 64Mi}, limits: "
                        "{cpu: 200m, memory: 128Mi, hugepages-2Mi: 4Mi}}\n"
                        "  - name: b\n");
        (void)state;
        ncm_cgroup_pod_options_init(&o);
        assert_int_equal(ncm_cgroup_config_for_container(pod, &pod->containers[0], &o, cpus, NULL,
                                                         &r, NULL),
                         0);
        assert_int_equal(r.cpu_shares, 102);
        assert_int_equal(r.cpu_quota, 20000);
        assert_int_equal(r.cpu_period, 100000);
        assert_int_equal(r.memory, 128 * Mi);
        assert_true(r.oci_weight);
        assert_int_equal(r.n_hugepages, 1);
        assert_int_equal(r.hugepages[0].limit, 4 * Mi);
        tu_assert_cpuset(r.cpuset_cpus, "2-3");
        assert_null(r.cpuset_mems);
        ncm_cgroup_resources_done(&r);

        /* BestEffort container: 2 shares, no quota (0), the period still sent. */
        assert_int_equal(ncm_cgroup_config_for_container(pod, &pod->containers[1], &o, NULL, NULL,
                                                         &r, NULL),
                         0);
        assert_int_equal(r.cpu_shares, 2);
        assert_true(r.has_cpu_quota);
        assert_int_equal(r.cpu_quota, 0);
        assert_int_equal(r.cpu_period, 100000);
        assert_int_equal(r.memory, 0);
        assert_null(r.cpuset_cpus);
        ncm_cgroup_resources_done(&r);

        o.enforce_cpu_limits = false;
        assert_int_equal(ncm_cgroup_config_for_container(pod, &pod->containers[0], &o, NULL, NULL,
                                                         &r, NULL),
                         0);
        assert_false(r.has_cpu_quota);
        assert_false(r.has_cpu_period);
        ncm_cgroup_resources_done(&r);

        o.enforce_cpu_limits = true;
        o.custom_cpu_period = true;
        o.cpu_period = 5000;
        assert_int_equal(ncm_cgroup_config_for_container(pod, &pod->containers[0], &o, NULL, NULL,
                                                         &r, NULL),
                         0);
        assert_int_equal(r.cpu_quota, 1000);
        assert_int_equal(r.cpu_period, 5000);
        ncm_cgroup_resources_done(&r);
        ncm_pod_free(pod);
}

/* DisableCPUQuotaWithExclusiveCPUs with the static policy: no quota where CPUs are exclusive. */
static void test_cgroup_exclusive_cpus_no_quota(void **state)
{
        ncm_cgroup_pod_options o;
        ncm_cgroup_resources r;
        ncm_pod *g = pod_yaml("metadata: {uid: u1}\nspec:\n  containers:\n"
                              "  - name: a\n    resources: {limits: {cpu: \"2\", memory: 1Gi}}\n"
                              "  - name: b\n    resources: {limits: {cpu: 500m, memory: 1Gi}}\n");
        ncm_pod *frac = pod_yaml(C1("cpu: 1500m, memory: 1Gi", "cpu: 1500m, memory: 1Gi"));
        (void)state;
        ncm_cgroup_pod_options_init(&o);
        assert_true(o.disable_cpu_quota_with_exclusive_cpus);
        assert_false(ncm_cgroup_container_has_exclusive_cpus(g, &g->containers[0], &o));
        o.static_cpu_manager = true;
        assert_true(ncm_cgroup_container_has_exclusive_cpus(g, &g->containers[0], &o));
        assert_false(ncm_cgroup_container_has_exclusive_cpus(g, &g->containers[1], &o));
        assert_false(ncm_cgroup_container_has_exclusive_cpus(frac, &frac->containers[0], &o));

        assert_int_equal(ncm_cgroup_config_for_pod(g, &o, &r, NULL), 0);
        assert_int_equal(r.cpu_quota, -1);
        assert_int_equal(r.cpu_period, 100000);
        ncm_cgroup_resources_done(&r);
        assert_int_equal(ncm_cgroup_config_for_container(g, &g->containers[0], &o, NULL, NULL, &r,
                                                         NULL),
                         0);
        assert_int_equal(r.cpu_quota, -1);
        ncm_cgroup_resources_done(&r);
        assert_int_equal(ncm_cgroup_config_for_container(g, &g->containers[1], &o, NULL, NULL, &r,
                                                         NULL),
                         0);
        assert_int_equal(r.cpu_quota, 50000);
        ncm_cgroup_resources_done(&r);
        /* No exclusive CPUs, no change. */
        assert_int_equal(ncm_cgroup_config_for_pod(frac, &o, &r, NULL), 0);
        assert_int_equal(r.cpu_quota, 150000);
        ncm_cgroup_resources_done(&r);
        /* The gate off: quotas everywhere. */
        o.disable_cpu_quota_with_exclusive_cpus = false;
        assert_int_equal(ncm_cgroup_config_for_pod(g, &o, &r, NULL), 0);
        assert_int_equal(r.cpu_quota, 250000);
        ncm_cgroup_resources_done(&r);
        ncm_pod_free(g);
        ncm_pod_free(frac);
}

/* ---- QoS tiers ---- */

static void test_cgroup_qos_tiers(void **state)
{
        ncm_cgroup_layout v1, v2;
        ncm_cgroup_pod_options o;
        ncm_cgroup_qos_usage u = {0, 0, 0};
        ncm_cgroup_qos_configs c;
        ncm_pod *b1 = pod_yaml(C1("cpu: 100m, memory: 100Mi", ""));
        ncm_pod *b2 = pod_yaml(C1("cpu: 250m, memory: 50Mi", "cpu: \"1\""));
        ncm_pod *g = pod_yaml(C1("cpu: \"1\", memory: 1Gi", "cpu: \"1\", memory: 1Gi"));
        ncm_pod *be = pod_yaml(C1("", ""));
        (void)state;
        ncm_cgroup_pod_options_init(&o);
        assert_int_equal(ncm_cgroup_layout_standard(&v1, 1, "/sys/fs/cgroup", NULL), 0);
        assert_int_equal(ncm_cgroup_layout_standard(&v2, 2, "/sys/fs/cgroup", NULL), 0);

        /* No Burstable pod: 2 shares. */
        assert_int_equal(ncm_cgroup_qos_tier_configs(&u, &v1, &o, &c, NULL), 0);
        assert_int_equal(c.burstable.cpu_shares, 2);
        assert_int_equal(c.besteffort.cpu_shares, 2);
        assert_false(c.guaranteed.has_cpu_shares);
        ncm_cgroup_qos_configs_done(&c);

        assert_int_equal(ncm_cgroup_qos_usage_add_pod(&u, b1, NULL), 0);
        assert_int_equal(ncm_cgroup_qos_usage_add_pod(&u, b2, NULL), 0);
        assert_int_equal(ncm_cgroup_qos_usage_add_pod(&u, g, NULL), 0);
        assert_int_equal(ncm_cgroup_qos_usage_add_pod(&u, be, NULL), 0);
        assert_int_equal(u.burstable_cpu_milli, 350);
        assert_int_equal(u.burstable_memory, 150 * Mi);
        assert_int_equal(u.guaranteed_memory, Gi);
        {
                /* sums stop at INT64_MAX: no pod makes another's admission fail (issue 20) */
                ncm_cgroup_qos_usage big = {INT64_MAX - 1, INT64_MAX - 1, INT64_MAX - 1};
                assert_int_equal(ncm_cgroup_qos_usage_add_pod(&big, b1, NULL), 0);
                assert_int_equal(ncm_cgroup_qos_usage_add_pod(&big, g, NULL), 0);
                assert_int_equal(big.burstable_cpu_milli, INT64_MAX);
                assert_int_equal(big.burstable_memory, INT64_MAX);
                assert_int_equal(big.guaranteed_memory, INT64_MAX);
        }

        assert_int_equal(ncm_cgroup_qos_tier_configs(&u, &v1, &o, &c, NULL), 0);
        assert_int_equal(c.burstable.cpu_shares, 358);
        assert_int_equal(c.besteffort.cpu_shares, 2);
        /* Every tier's hugetlb is unbounded for every page size. */
        assert_int_equal(c.guaranteed.n_hugepages, 2);
        assert_int_equal(c.burstable.hugepages[0].limit, NCM_CGROUP_HUGEPAGE_UNBOUNDED);
        assert_int_equal(c.besteffort.hugepages[1].limit, NCM_CGROUP_HUGEPAGE_UNBOUNDED);
        assert_false(c.burstable.has_memory_low);
        ncm_cgroup_qos_configs_done(&c);

        /* v2 without MemoryQoS resets burstable memory.low; with it, the tiers protect. */
        assert_int_equal(ncm_cgroup_qos_tier_configs(&u, &v2, &o, &c, NULL), 0);
        assert_true(c.burstable.has_memory_low);
        assert_int_equal(c.burstable.memory_low, 0);
        assert_false(c.guaranteed.has_memory_min);
        ncm_cgroup_qos_configs_done(&c);
        o.memory_qos = NCM_CGROUP_MEMORY_QOS_TIERED;
        assert_int_equal(ncm_cgroup_qos_tier_configs(&u, &v2, &o, &c, NULL), 0);
        assert_int_equal(c.guaranteed.memory_min, Gi + 150 * Mi);
        assert_int_equal(c.burstable.memory_low, 150 * Mi);
        ncm_cgroup_qos_configs_done(&c);
        ncm_pod_free(b1);
        ncm_pod_free(b2);
        ncm_pod_free(g);
        ncm_pod_free(be);
}

/* ---- node allocatable (node_container_manager_linux_test.go) ---- */

static void rlist(ncm_resource_list *l, const char *cpu, const char *mem)
{
        ncm_quantity q;
        memset(l, 0, sizeof(*l));
        if (cpu && *cpu) {
                assert_int_equal(ncm_quantity_parse(cpu, &q, NULL), 0);
                assert_int_equal(ncm_cgroup_resource_list_set(l, "cpu", &q), 0);
        }
        if (mem && *mem) {
                assert_int_equal(ncm_quantity_parse(mem, &q, NULL), 0);
                assert_int_equal(ncm_cgroup_resource_list_set(l, "memory", &q), 0);
        }
}

static int64_t milli(const ncm_resource_list *l, const char *name)
{
        const ncm_quantity *q = ncm_resource_list_get(l, name);
        return q ? ncm_quantity_milli_value(q) : -1;
}

static int64_t mq(const char *s)
{
        ncm_quantity q;
        assert_int_equal(ncm_quantity_parse(s, &q, NULL), 0);
        return ncm_quantity_milli_value(&q);
}

typedef struct na_case {
        const char *kcpu, *kmem, *scpu, *smem, *ccpu, *cmem;
        int threshold;           /* 0 none, 1 quantity 100Mi, 2 percentage 0.05 */
        const char *rcpu, *rmem; /* reservation (NULL: absent) */
        const char *ecpu, *emem; /* enforcement: allocatable absolute (NULL: absent) */
} na_case;

static const na_case na_cases[] = {
                {"100m", "100Mi", "50m", "50Mi", "10", "10Gi", 0, "150m", "150Mi", "9850m",
                 "10090Mi"},
                {"100m", "100Mi", "50m", "50Mi", "10", "10Gi", 1, "150m", "250Mi", "9850m",
                 "10090Mi"},
                {"100m", "100Mi", "50m", "50Mi", "10", "10Gi", 2, "150m", "694157320", "9850m",
                 "10090Mi"},
                {"", "", "", "", "10", "10Gi", 0, NULL, NULL, "10", "10Gi"},
                {"", "100Mi", "50m", "50Mi", "10", "10Gi", 0, "50m", "150Mi", "9950m", "10090Mi"},
                {"50m", "100Mi", "", "50Mi", "10", "10Gi", 0, "50m", "150Mi", "9950m", "10090Mi"},
                {"", "100Mi", "", "50Mi", "10", "", 0, NULL, NULL, "10", NULL},
};

static void test_cgroup_node_allocatable_tables(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(na_cases); i++) {
                const na_case *c = &na_cases[i];
                ncm_resource_list kube, sys, cap;
                ncm_eviction_thresholds hard = {0};
                ncm_node_allocatable na;
                ncm_error err = NCM_ERROR_INIT;
                rlist(&kube, c->kcpu, c->kmem);
                rlist(&sys, c->scpu, c->smem);
                rlist(&cap, c->ccpu, c->cmem);
                if (c->threshold) {
                        hard.n = 1;
                        snprintf(hard.items[0].signal, sizeof(hard.items[0].signal),
                                 "memory.available");
                        if (c->threshold == 1) {
                                assert_int_equal(ncm_quantity_parse("100Mi",
                                                                    &hard.items[0].quantity, NULL),
                                                 0);
                        } else {
                                hard.items[0].is_percentage = true;
                                hard.items[0].percentage = 0.05f;
                        }
                }
                if (ncm_cgroup_node_allocatable(&cap, &kube, &sys, &hard, NCM_ENFORCE_PODS, &na,
                                                &err) < 0)
                        fail_msg("case %zu: %s", i + 1, err.msg);
                assert_int_equal(milli(&na.reservation, "cpu"), c->rcpu ? mq(c->rcpu) : -1);
                assert_int_equal(milli(&na.reservation, "memory"), c->rmem ? mq(c->rmem) : -1);
                assert_int_equal(milli(&na.pods_limits, "cpu"), c->ecpu ? mq(c->ecpu) : -1);
                assert_int_equal(milli(&na.pods_limits, "memory"), c->emem ? mq(c->emem) : -1);
                ncm_node_allocatable_done(&na);
                ncm_resource_list_done(&kube);
                ncm_resource_list_done(&sys);
                ncm_resource_list_done(&cap);
        }
}

static void test_cgroup_node_allocatable_ephemeral_storage(void **state)
{
        static const struct {
                const char *kube, *cap;
                int threshold;
                const char *want;
                bool invalid;
        } t[] = {
                        {"100Mi", "10Gi", 0, "100Mi", false},
                        {"100Mi", "10Gi", 1, "200Mi", false},
                        {"150Mi", "10Gi", 2, "694157320", false},
                        {"100Mi", "500Mi", 0, "100Mi", false},
                        {"20Gi", "20Gi", 1, NULL, true},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm_resource_list kube = {0}, cap = {0};
                ncm_eviction_thresholds hard = {0};
                ncm_node_allocatable na;
                ncm_error err = NCM_ERROR_INIT;
                ncm_quantity q;
                int r;
                assert_int_equal(ncm_quantity_parse(t[i].kube, &q, NULL), 0);
                assert_int_equal(ncm_cgroup_resource_list_set(&kube, "ephemeral-storage", &q), 0);
                assert_int_equal(ncm_quantity_parse(t[i].cap, &q, NULL), 0);
                assert_int_equal(ncm_cgroup_resource_list_set(&cap, "ephemeral-storage", &q), 0);
                if (t[i].threshold) {
                        hard.n = 1;
                        snprintf(hard.items[0].signal, sizeof(hard.items[0].signal),
                                 "nodefs.available");
                        if (t[i].threshold == 1) {
                                assert_int_equal(ncm_quantity_parse("100Mi",
                                                                    &hard.items[0].quantity, NULL),
                                                 0);
                        } else {
                                hard.items[0].is_percentage = true;
                                hard.items[0].percentage = 0.05f;
                        }
                }
                r = ncm_cgroup_node_allocatable(&cap, &kube, NULL, &hard, NCM_ENFORCE_PODS, &na,
                                                &err);
                if (t[i].invalid) {
                        assert_int_equal(r, -NCM_E_UNSATISFIABLE);
                } else {
                        assert_int_equal(r, 0);
                        assert_int_equal(milli(&na.reservation, "ephemeral-storage"),
                                         mq(t[i].want));
                        ncm_node_allocatable_done(&na);
                }
                ncm_resource_list_done(&kube);
                ncm_resource_list_done(&cap);
        }
}

/* TestNodeAllocatableInputValidation, with the kubelet's message. */
static void test_cgroup_node_allocatable_validation(void **state)
{
        ncm_resource_list kube, sys, cap;
        ncm_eviction_thresholds hard = {0};
        ncm_node_allocatable na;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        rlist(&kube, "5", "10Gi");
        rlist(&sys, "5", "10Gi");
        rlist(&cap, "10", "11Gi");
        hard.n = 1;
        snprintf(hard.items[0].signal, sizeof(hard.items[0].signal), "memory.available");
        assert_int_equal(ncm_quantity_parse("2Gi", &hard.items[0].quantity, NULL), 0);
        assert_int_equal(ncm_cgroup_node_allocatable(&cap, &kube, &sys, &hard, NCM_ENFORCE_PODS,
                                                     &na, &err),
                         -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg,
                            "invalid Node Allocatable configuration. Resource \"memory\" has a "
                            "reservation of 22Gi but capacity of 11Gi. Expected capacity >= "
                            "reservation.");
        assert_int_equal(ncm_error_exit_status(err.code), 1);
        ncm_resource_list_done(&kube);
        ncm_resource_list_done(&sys);
        ncm_resource_list_done(&cap);
}

static void test_cgroup_node_allocatable_status(void **state)
{
        ncm_resource_list cap = {0}, kube = {0};
        ncm_eviction_thresholds hard;
        ncm_node_allocatable na;
        ncm_error err = NCM_ERROR_INIT;
        char s[NCM_QUANTITY_STRLEN];
        (void)state;
        assert_int_equal(ncm_cgroup_parse_capacity("cpu=4,memory=16Gi,hugepages-2Mi=1Gi,"
                                                   "hugepages-1Gi=0,ephemeral-storage=100Gi,"
                                                   "pid=4194304",
                                                   &cap, &err),
                         0);
        assert_int_equal(ncm_cgroup_parse_reserved("--kube-reserved",
                                                   "cpu=500m,memory=1Gi,pid=1000", &kube, &err),
                         0);
        ncm_cgroup_eviction_defaults(&hard);
        assert_int_equal(ncm_cgroup_node_allocatable(&cap, &kube, NULL, &hard, NCM_ENFORCE_PODS,
                                                     &na, &err),
                         0);
        /* Reported: pid is internal; memory loses the hugepages and 100Mi of eviction. */
        assert_null(ncm_resource_list_get(&na.allocatable, "pid"));
        assert_string_equal(
                        ncm_quantity_to_string(ncm_resource_list_get(&na.allocatable, "cpu"), s),
                        "3500m");
        assert_string_equal(
                        ncm_quantity_to_string(ncm_resource_list_get(&na.allocatable, "memory"), s),
                        "14236Mi");
        assert_string_equal(ncm_quantity_to_string(ncm_resource_list_get(&na.allocatable,
                                                                         "ephemeral-storage"),
                                                   s),
                            /* 10% as float32 is a little more than 10% */
                            "96636764000");
        /* kubepods: eviction not subtracted, pid included. */
        assert_string_equal(
                        ncm_quantity_to_string(ncm_resource_list_get(&na.pods_limits, "memory"), s),
                        "15Gi");
        assert_string_equal(
                        ncm_quantity_to_string(ncm_resource_list_get(&na.pods_limits, "pid"), s),
                        "4193304");
        ncm_node_allocatable_done(&na);

        /* Without "pods" the kubepods limits are the whole capacity. */
        assert_int_equal(ncm_cgroup_node_allocatable(&cap, &kube, NULL, &hard, 0, &na, &err), 0);
        assert_string_equal(
                        ncm_quantity_to_string(ncm_resource_list_get(&na.pods_limits, "memory"), s),
                        "16Gi");
        ncm_node_allocatable_done(&na);
        ncm_resource_list_done(&cap);
        ncm_resource_list_done(&kube);
}

/* TestGetCgroupConfig */
static void test_cgroup_config_for_resource_list(void **state)
{
        ncm_resource_list rl;
        ncm_cgroup_resources r;
        ncm_error err = NCM_ERROR_INIT;
        ncm_autoptr(ncm_cpuset) all = tu_cpuset("0-3");
        (void)state;
        assert_int_equal(ncm_cgroup_config_for_resource_list(NULL, false, NULL, &r, &err), -EINVAL);
        rlist(&rl, "100m", "200Mi");
        assert_int_equal(ncm_cgroup_config_for_resource_list(&rl, true, NULL, &r, NULL), 0);
        assert_true(r.has_cpu_shares);
        assert_false(r.has_memory || r.has_pids || r.has_hugepages);
        ncm_cgroup_resources_done(&r);
        assert_int_equal(ncm_cgroup_config_for_resource_list(&rl, false, all, &r, NULL), 0);
        assert_int_equal(r.cpu_shares, 102);
        assert_int_equal(r.memory, 200 * Mi);
        assert_true(r.has_hugepages);
        tu_assert_cpuset(r.cpuset_cpus, "0-3");
        ncm_cgroup_resources_done(&r);
        ncm_resource_list_done(&rl);
        rlist(&rl, NULL, "200Mi");
        assert_int_equal(ncm_cgroup_config_for_resource_list(&rl, false, NULL, &r, NULL), 0);
        assert_true(r.has_memory);
        assert_false(r.has_cpu_shares);
        ncm_cgroup_resources_done(&r);
        ncm_resource_list_done(&rl);
}

/* ---- flags ---- */

static void expect_flag_error(int (*fn)(const char *, ncm_error *), const char *in, const char *msg)
{
        ncm_error err = NCM_ERROR_INIT;
        int r = fn(in, &err);
        if (r >= 0)
                fail_msg("'%s' accepted", in);
        if (!strstr(err.msg, msg))
                fail_msg("'%s': got [%s], want [%s]", in, err.msg, msg);
        assert_int_equal(ncm_error_exit_status(err.code), 2);
}

static int eviction(const char *s, ncm_error *err)
{
        ncm_eviction_thresholds t;
        return ncm_cgroup_parse_eviction_hard(s, &t, err);
}

static int reserved(const char *s, ncm_error *err)
{
        ncm_resource_list l = {0};
        int r = ncm_cgroup_parse_reserved("--kube-reserved", s, &l, err);
        ncm_resource_list_done(&l);
        return r;
}

static int enforce(const char *s, ncm_error *err)
{
        unsigned e;
        return ncm_cgroup_parse_enforce(s, NULL, NULL, &e, err);
}

static void test_cgroup_eviction_flag(void **state)
{
        ncm_eviction_thresholds t;
        (void)state;
        assert_int_equal(ncm_cgroup_parse_eviction_hard("memory.available<100Mi, "
                                                        "nodefs.available < 10%,"
                                                        "imagefs.available<0%",
                                                        &t, NULL),
                         0);
        assert_int_equal(t.n, 2);
        assert_string_equal(t.items[0].signal, "memory.available");
        assert_int_equal(ncm_quantity_value(&t.items[0].quantity), 100 * Mi);
        assert_string_equal(t.items[1].signal, "nodefs.available");
        assert_true(t.items[1].is_percentage);
        assert_true(t.items[1].percentage == 10.0f / 100);
        assert_int_equal(ncm_cgroup_parse_eviction_hard("", &t, NULL), 0);
        assert_int_equal(t.n, 0);
        assert_int_equal(ncm_cgroup_parse_eviction_hard("memory.available<100%", &t, NULL), 0);
        assert_int_equal(t.n, 0);
        expect_flag_error(eviction, "memory.free<1Gi", "unsupported eviction signal memory.free");
        expect_flag_error(eviction, "memory.available<-1", "must be positive: -1");
        expect_flag_error(eviction, "memory.available<0", "must be positive: 0");
        expect_flag_error(eviction, "nodefs.available<101%",
                          "eviction percentage threshold nodefs.available must be <= 100%: 101%");
        expect_flag_error(eviction, "nodefs.available<-5%", "must be >= 0%: -5%");
        expect_flag_error(eviction, "nodefs.available<x%", "invalid syntax");
        expect_flag_error(eviction, "memory.available<1ki", "unable to parse quantity's suffix");
        expect_flag_error(eviction, "memory.available<1x", "quantities must match");
        expect_flag_error(eviction, "memory.available=1Gi", "malformed pair, expect string<string");
}

static void test_cgroup_reserved_flag(void **state)
{
        ncm_resource_list l = {0};
        char s[NCM_QUANTITY_STRLEN];
        (void)state;
        assert_int_equal(ncm_cgroup_parse_reserved("--kube-reserved",
                                                   " memory = 1Gi ,cpu=500m,,cpu=250m", &l, NULL),
                         0);
        assert_int_equal(l.n, 2);
        assert_string_equal(l.items[0].name, "cpu");
        assert_string_equal(ncm_quantity_to_string(&l.items[0].quantity, s), "250m");
        ncm_resource_list_done(&l);
        expect_flag_error(reserved, "gpu=1", "--kube-reserved: cannot reserve \"gpu\" resource");
        expect_flag_error(reserved, "cpu=-1",
                          "resource quantity for \"cpu\" cannot be negative: -1");
        expect_flag_error(reserved, "cpu=1ki",
                          "failed to parse quantity \"1ki\" for \"cpu\" resource: unable to parse "
                          "quantity's suffix");
        expect_flag_error(reserved, "memory", "malformed pair, expect string=string");
        expect_flag_error(reserved, "memory=", "failed to parse quantity \"\" for \"memory\"");
}

static void test_cgroup_enforce_flag(void **state)
{
        unsigned e = 0;
        (void)state;
        assert_int_equal(ncm_cgroup_parse_enforce("pods", NULL, NULL, &e, NULL), 0);
        assert_int_equal(e, NCM_ENFORCE_PODS);
        assert_int_equal(ncm_cgroup_parse_enforce("", NULL, NULL, &e, NULL), 0);
        assert_int_equal(e, 0);
        assert_int_equal(ncm_cgroup_parse_enforce("none", NULL, NULL, &e, NULL), 0);
        assert_int_equal(e, 0);
        assert_int_equal(ncm_cgroup_parse_enforce("pods,kube-reserved,system-reserved-"
                                                  "compressible",
                                                  "/kube", "/system", &e, NULL),
                         0);
        assert_int_equal(e, NCM_ENFORCE_PODS | NCM_ENFORCE_KUBE_RESERVED |
                                            NCM_ENFORCE_SYSTEM_RESERVED_COMPRESSIBLE);
        expect_flag_error(enforce, "pods,none", "may not contain additional enforcements");
        expect_flag_error(enforce, "kube-reserved",
                          "kubeReservedCgroup (--kube-reserved-cgroup) "
                          "must be specified");
        expect_flag_error(enforce, "system-reserved", "systemReservedCgroup");
        expect_flag_error(enforce, "podz", "option \"podz\" specified for enforceNodeAllocatable");
}

/* ---- parsers ---- */

static void test_cgroup_parse_values(void **state)
{
        int64_t v = 7, q = 0, p = 0;
        (void)state;
        assert_int_equal(ncm_cgroup_parse_limit("max", &v), 0);
        assert_int_equal(v, NCM_CGROUP_LIMIT_MAX);
        assert_int_equal(ncm_cgroup_parse_limit("max\n", &v), 0);
        assert_int_equal(ncm_cgroup_parse_limit("123\n", &v), 0);
        assert_int_equal(v, 123);
        assert_int_equal(ncm_cgroup_parse_limit("9223372036854771712\n", &v), 0);
        assert_int_equal(v, INT64_C(9223372036854771712));
        assert_int_equal(ncm_cgroup_parse_limit("18446744073709551615", &v), 0);
        assert_int_equal(v, NCM_CGROUP_LIMIT_MAX);
        v = 7;
        assert_int_equal(ncm_cgroup_parse_limit("18446744073709551616", &v), -ERANGE);
        assert_int_equal(ncm_cgroup_parse_limit("", &v), -EINVAL);
        assert_int_equal(ncm_cgroup_parse_limit("-1", &v), -EINVAL);
        assert_int_equal(ncm_cgroup_parse_limit("1\n\n", &v), -EINVAL);
        assert_int_equal(ncm_cgroup_parse_limit("max ", &v), -EINVAL);
        assert_int_equal(v, 7);
        assert_int_equal(ncm_cgroup_parse_int64("-1\n", &v), 0);
        assert_int_equal(v, -1);
        assert_int_equal(ncm_cgroup_parse_int64("-9223372036854775808", &v), 0);
        assert_int_equal(v, INT64_MIN);
        assert_int_equal(ncm_cgroup_parse_int64("9223372036854775808", &v), -ERANGE);
        assert_int_equal(ncm_cgroup_parse_int64("-", &v), -EINVAL);
        assert_int_equal(ncm_cgroup_parse_cpu_max("max 100000\n", &q, &p), 0);
        assert_int_equal(q, -1);
        assert_int_equal(p, 100000);
        assert_int_equal(ncm_cgroup_parse_cpu_max("50000 100000", &q, &p), 0);
        assert_int_equal(q, 50000);
        assert_int_equal(ncm_cgroup_parse_cpu_max("max", &q, &p), -EINVAL);
        assert_int_equal(ncm_cgroup_parse_cpu_max("1 0", &q, &p), -EINVAL);
        assert_int_equal(ncm_cgroup_parse_cpu_max("x 1", &q, &p), -EINVAL);
        assert_int_equal(ncm_cgroup_parse_cpu_max("1  1", &q, &p), -EINVAL);
        assert_int_equal(ncm_cgroup_parse_cpu_max("1 99999999999999999999", &q, &p), -ERANGE);
}

static void test_cgroup_parse_proc_cgroup(void **state)
{
        ncm_cgroup_proc_entry e;
        const char *l;
        (void)state;
        l = "4:memory:/process_api/8f58\n";
        assert_int_equal(ncm_cgroup_parse_proc_cgroup_line(l, strlen(l), &e), 0);
        assert_int_equal(e.id, 4);
        assert_int_equal(e.controllers_len, 6);
        assert_memory_equal(e.controllers, "memory", 6);
        assert_int_equal(e.path_len, 17);
        l = "0::/";
        assert_int_equal(ncm_cgroup_parse_proc_cgroup_line(l, strlen(l), &e), 0);
        assert_int_equal(e.controllers_len, 0);
        l = "9:name=systemd:/a:b";
        assert_int_equal(ncm_cgroup_parse_proc_cgroup_line(l, strlen(l), &e), 0);
        assert_int_equal(e.path_len, 4);
        l = "1::/x";
        assert_int_equal(ncm_cgroup_parse_proc_cgroup_line(l, strlen(l), &e), -EINVAL);
        l = "0:cpu:/";
        assert_int_equal(ncm_cgroup_parse_proc_cgroup_line(l, strlen(l), &e), -EINVAL);
        l = "a:b:/";
        assert_int_equal(ncm_cgroup_parse_proc_cgroup_line(l, strlen(l), &e), -EINVAL);
        l = "1:cpu:";
        assert_int_equal(ncm_cgroup_parse_proc_cgroup_line(l, strlen(l), &e), -EINVAL);
        l = "4294967296:cpu:/";
        assert_int_equal(ncm_cgroup_parse_proc_cgroup_line(l, strlen(l), &e), -ERANGE);
}

static void test_cgroup_parse_mountinfo(void **state)
{
        ncm_mountinfo_entry e;
        char buf[64];
        const char *l;
        (void)state;
        l = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n";
        assert_int_equal(ncm_cgroup_parse_mountinfo_line(l, strlen(l), &e), 0);
        assert_int_equal(e.id, 32);
        assert_int_equal(e.parent_id, 31);
        assert_int_equal(e.fstype_len, 6);
        assert_memory_equal(e.super_options, "rw,cpu", 6);
        assert_int_equal(ncm_cgroup_parse_controllers(e.super_options, e.super_options_len),
                         NCM_CGROUP_CTRL_CPU);
        l = "36 35 98:0 /mnt1 /mnt\\040two rw,noatime master:1 shared:2 - ext3 /dev/root "
            "rw,errors=continue";
        assert_int_equal(ncm_cgroup_parse_mountinfo_line(l, strlen(l), &e), 0);
        assert_int_equal(ncm_cgroup_unescape_mount_path(e.mount_point, e.mount_point_len, buf,
                                                        sizeof(buf)),
                         0);
        assert_string_equal(buf, "/mnt two");
        assert_int_equal(ncm_cgroup_unescape_mount_path("\\04", 3, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(ncm_cgroup_unescape_mount_path("\\000", 4, buf, sizeof(buf)), -EINVAL);
        assert_int_equal(ncm_cgroup_unescape_mount_path("abcd", 4, buf, 4), -ENAMETOOLONG);
        l = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 ext3 /dev/root rw";
        assert_int_equal(ncm_cgroup_parse_mountinfo_line(l, strlen(l), &e), -EINVAL);
        l = "36 35 98:0 /mnt1 /mnt2 rw - ext3 /dev/root";
        assert_int_equal(ncm_cgroup_parse_mountinfo_line(l, strlen(l), &e), -EINVAL);
        l = "36 35 98:0 /mnt1 /mnt2 rw - ext3 /dev/root rw extra";
        assert_int_equal(ncm_cgroup_parse_mountinfo_line(l, strlen(l), &e), -EINVAL);
        l = "36 35 98x0 /mnt1 /mnt2 rw - ext3 /dev/root rw";
        assert_int_equal(ncm_cgroup_parse_mountinfo_line(l, strlen(l), &e), -EINVAL);
        assert_int_equal(ncm_cgroup_parse_controllers("rw,name=systemd", 15),
                         NCM_CGROUP_CTRL_SYSTEMD);
        l = "cpuset cpu io memory hugetlb pids rdma misc\n";
        assert_int_equal(ncm_cgroup_parse_controllers(l, strlen(l)),
                         NCM_CGROUP_CTRL_CPUSET | NCM_CGROUP_CTRL_CPU | NCM_CGROUP_CTRL_IO |
                                         NCM_CGROUP_CTRL_MEMORY | NCM_CGROUP_CTRL_HUGETLB |
                                         NCM_CGROUP_CTRL_PIDS | NCM_CGROUP_CTRL_RDMA |
                                         NCM_CGROUP_CTRL_MISC);
}

static int collect(const char *k, size_t kl, const char *v, size_t vl, void *ud)
{
        ncm_buf *b = ud;
        ncm_buf_printf(b, "[%.*s|%.*s]", (int)kl, k, (int)vl, v);
        return 0;
}

static void test_cgroup_parse_map_flag(void **state)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm_cgroup_parse_map_flag(" cpu = 500m ,memory=1Gi,,a=b=c,", '=', collect,
                                                   &b, NULL),
                         0);
        assert_string_equal(b.data, "[cpu|500m][memory|1Gi][a|b=c]");
        ncm_buf_reset(&b);
        assert_int_equal(ncm_cgroup_parse_map_flag("", '=', collect, &b, NULL), 0);
        assert_int_equal(b.len, 0);
        assert_int_equal(ncm_cgroup_parse_map_flag("x<1,y", '<', collect, &b, &err), -EINVAL);
        assert_string_equal(err.msg, "malformed pair, expect string<string");
        ncm_buf_done(&b);
}

static void test_cgroup_parse_meminfo(void **state)
{
        int64_t v = 0;
        (void)state;
        assert_int_equal(ncm_cgroup_parse_meminfo_total("MemFree: 1 kB\nMemTotal:       16318556 "
                                                        "kB\n",
                                                        &v),
                         0);
        assert_int_equal(v, INT64_C(16318556) * 1024);
        assert_int_equal(ncm_cgroup_parse_meminfo_total("MemFree: 1 kB\n", &v), -ENOENT);
        assert_int_equal(ncm_cgroup_parse_meminfo_total("MemTotal: 12\n", &v), -EINVAL);
        assert_int_equal(ncm_cgroup_parse_meminfo_total("MemTotal: x kB\n", &v), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cgroup_millicpu_to_shares_boundaries),
                        cmocka_unit_test(test_cgroup_millicpu_to_quota_table),
                        cmocka_unit_test(test_cgroup_millicpu_to_quota_period),
                        cmocka_unit_test(test_cgroup_reverse_conversions),
                        cmocka_unit_test(test_cgroup_weight_table),
                        cmocka_unit_test(test_cgroup_hugepage_size_names),
                        cmocka_unit_test(test_cgroup_resource_config_for_pod),
                        cmocka_unit_test(test_cgroup_resource_config_custom_period),
                        cmocka_unit_test(test_cgroup_pod_level_gate_off),
                        cmocka_unit_test(test_cgroup_hugepage_limits),
                        cmocka_unit_test(test_cgroup_memory_qos_tiered),
                        cmocka_unit_test(test_cgroup_pod_pids_limit),
                        cmocka_unit_test(test_cgroup_sidecars_and_init_containers),
                        cmocka_unit_test(test_cgroup_overhead_counts),
                        cmocka_unit_test(test_cgroup_totals_boundaries),
                        cmocka_unit_test(test_cgroup_container_config),
                        cmocka_unit_test(test_cgroup_exclusive_cpus_no_quota),
                        cmocka_unit_test(test_cgroup_qos_tiers),
                        cmocka_unit_test(test_cgroup_node_allocatable_tables),
                        cmocka_unit_test(test_cgroup_node_allocatable_ephemeral_storage),
                        cmocka_unit_test(test_cgroup_node_allocatable_validation),
                        cmocka_unit_test(test_cgroup_node_allocatable_status),
                        cmocka_unit_test(test_cgroup_config_for_resource_list),
                        cmocka_unit_test(test_cgroup_eviction_flag),
                        cmocka_unit_test(test_cgroup_reserved_flag),
                        cmocka_unit_test(test_cgroup_enforce_flag),
                        cmocka_unit_test(test_cgroup_parse_values),
                        cmocka_unit_test(test_cgroup_parse_proc_cgroup),
                        cmocka_unit_test(test_cgroup_parse_mountinfo),
                        cmocka_unit_test(test_cgroup_parse_map_flag),
                        cmocka_unit_test(test_cgroup_parse_meminfo),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
