/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/runtime: requests recovered from what the kubelet sends (round trips through the
 * kubelet's own conversions), pod cgroup names of both drivers, identity from annotations, and
 * pods rebuilt with the QoS class their cgroup says.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroups.h>
#include <nodecm/runtime.h>
#include "testutil.h"

/* What the kubelet sends for a container (calculateLinuxResources), with quota enforced. */
static ncm_runtime_resources kubelet_sends(int64_t req, int64_t lim, int64_t mem, int64_t period)
{
        ncm_runtime_resources r = {0};
        r.cpu_shares = (int64_t)ncm_cgroup_millicpu_to_shares(req == 0 && lim > 0 ? lim : req);
        r.cpu_quota = ncm_cgroup_millicpu_to_quota(lim, period, true);
        r.cpu_period = period;
        r.memory_limit = mem;
        return r;
}

static void test_runtime_recover_round_trips_requests(void **state)
{
        (void)state;
        /* every request the shares carry exactly: 3m .. 256 CPUs */
        for (int64_t m = 3; m < 256000; m += (m < 5000 ? 1 : 997)) {
                ncm_runtime_resources r = kubelet_sends(m, 0, 0, 100000);
                ncm_runtime_requests q;
                assert_int_equal(ncm_runtime_recover(&r, false, NCM_QOS_BURSTABLE, &q, NULL), 0);
                assert_int_equal(q.cpu_request, m);
                assert_int_equal(q.cpu_limit, -1);
        }
}

static void test_runtime_recover_round_trips_limits(void **state)
{
        static const int64_t periods[] = {100000, 1000, 33333, 250000, 1000000};
        (void)state;
        for (size_t p = 0; p < NCM_ELEMENTSOF(periods); p++) {
                /* the quota's floor of 1000 µs makes limits below it come back as the floor */
                int64_t floor_m = (1000 * 1000 + periods[p] - 1) / periods[p];
                for (int64_t m = 1; m < 300000; m += (m < 3000 ? 1 : 1009)) {
                        ncm_runtime_resources r = kubelet_sends(m, m, 1 << 30, periods[p]);
                        ncm_runtime_requests q;
                        int64_t want = m < floor_m ? floor_m : m;
                        assert_int_equal(ncm_runtime_recover(&r, false, 0, &q, NULL), 0);
                        if (m * periods[p] / 1000 < 1000)
                                want = floor_m;
                        assert_int_equal(q.cpu_limit, want);
                        assert_int_equal(q.memory_limit, 1 << 30);
                        assert_int_equal(q.memory_request, -1);
                }
        }
}

static void test_runtime_recover_by_qos(void **state)
{
        ncm_runtime_resources r = kubelet_sends(2000, 2000, 1 << 30, 100000);
        ncm_runtime_requests q;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(ncm_runtime_recover(&r, true, NCM_QOS_GUARANTEED, &q, NULL), 0);
        assert_int_equal(q.cpu_request, 2000);
        assert_int_equal(q.cpu_limit, 2000);
        assert_int_equal(q.memory_request, 1 << 30);
        assert_int_equal(q.memory_limit, 1 << 30);

        /* Burstable: the memory request is unknown and said to be 0 */
        assert_int_equal(ncm_runtime_recover(&r, true, NCM_QOS_BURSTABLE, &q, NULL), 0);
        assert_int_equal(q.cpu_request, 2000);
        assert_int_equal(q.memory_request, 0);
        assert_int_equal(q.memory_limit, 1 << 30);

        /* BestEffort: nothing, whatever the runtime shows */
        assert_int_equal(ncm_runtime_recover(&r, true, NCM_QOS_BEST_EFFORT, &q, NULL), 0);
        assert_int_equal(q.cpu_request, -1);
        assert_int_equal(q.cpu_limit, -1);
        assert_int_equal(q.memory_limit, -1);

        /* quota disabled (cpuCFSQuota false, DisableCPUQuotaWithExclusiveCPUs): the shares */
        r.cpu_quota = -1;
        assert_int_equal(ncm_runtime_recover(&r, true, NCM_QOS_GUARANTEED, &q, NULL), 0);
        assert_int_equal(q.cpu_limit, 2000);
        r.cpu_quota = 0;
        r.cpu_period = 0;
        assert_int_equal(ncm_runtime_recover(&r, true, NCM_QOS_GUARANTEED, &q, NULL), 0);
        assert_int_equal(q.cpu_request, 2000);

        /* beyond 256 CPUs the shares saturate: the quota says it */
        r = kubelet_sends(300000, 300000, 1 << 30, 100000);
        assert_int_equal(r.cpu_shares, 262144);
        assert_int_equal(ncm_runtime_recover(&r, true, NCM_QOS_GUARANTEED, &q, NULL), 0);
        assert_int_equal(q.cpu_request, 300000);

        /* a Guaranteed container without a memory limit cannot be */
        r = kubelet_sends(1000, 1000, 0, 100000);
        assert_int_equal(ncm_runtime_recover(&r, true, NCM_QOS_GUARANTEED, &q, &err), -EINVAL);
        assert_string_equal(err.msg, "a Guaranteed container needs a CPU and a memory limit, the "
                                     "runtime has shares=1024 quota=100000 period=100000 "
                                     "memory=0");

        /* the minimum shares carry no request */
        r = kubelet_sends(0, 0, 0, 100000);
        assert_int_equal(r.cpu_shares, 2);
        assert_int_equal(ncm_runtime_recover(&r, false, 0, &q, NULL), 0);
        assert_int_equal(q.cpu_request, -1);
        assert_int_equal(q.cpu_limit, -1);
}

static void test_runtime_pod_cgroup_names(void **state)
{
        static const struct {
                const char *path;
                int ret;
                ncm_qos_class qos;
                const char *uid;
        } cases[] = {
                        {"/kubepods/pod2a5f6c1e-0d6b", 1, NCM_QOS_GUARANTEED, "2a5f6c1e-0d6b"},
                        {"kubepods/burstable/podabc", 1, NCM_QOS_BURSTABLE, "abc"},
                        {"/kubepods/besteffort/podx-y/0123abcd", 1, NCM_QOS_BEST_EFFORT, "x-y"},
                        {"/custom/root/kubepods/burstable/podu1/ctr", 1, NCM_QOS_BURSTABLE, "u1"},
                        {"/kubepods.slice/kubepods-burstable.slice/"
                         "kubepods-burstable-pod2a5f_0d6b.slice",
                         1, NCM_QOS_BURSTABLE, "2a5f-0d6b"},
                        {"/kubepods.slice/kubepods-pod11_22.slice", 1, NCM_QOS_GUARANTEED, "11-22"},
                        {"kubepods-besteffort-podu_2.slice:cri-containerd:0123", 1,
                         NCM_QOS_BEST_EFFORT, "u-2"},
                        {"/kubepods/pod", 0, 0, NULL},
                        {"/pod123", 0, 0, NULL},
                        {"/nodecm-test/ctr1", 0, 0, NULL},
                        {"/kubepods/burstable", 0, 0, NULL},
                        {"/other/burstable/podabc", 0, 0, NULL},
                        {"kubepods-burstable-pod.slice", 0, 0, NULL},
                        {"kubepods-burstable-pod-x.slice", 0, 0, NULL},
                        {"system.slice:docker:abc", 0, 0, NULL},
                        {"", 0, 0, NULL},
                        {"///", 0, 0, NULL},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                char uid[64] = "";
                ncm_qos_class qos = (ncm_qos_class)-1;
                int r = ncm_runtime_pod_cgroup_qos(cases[i].path, &qos, uid, sizeof(uid));
                if (r != cases[i].ret)
                        fail_msg("%s: %d", cases[i].path, r);
                if (r == 1) {
                        assert_int_equal(qos, cases[i].qos);
                        assert_string_equal(uid, cases[i].uid);
                }
        }
        {
                char small[3];
                ncm_qos_class qos;
                assert_int_equal(ncm_runtime_pod_cgroup_qos("/kubepods/podabc", &qos, small, 3),
                                 -ENAMETOOLONG);
                assert_int_equal(ncm_runtime_pod_cgroup_qos("/kubepods/podabc", &qos, NULL, 0), 1);
        }
}

static void test_runtime_identify(void **state)
{
        ncm_runtime_identity id;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        /* containerd's annotations */
        {
                const ncm_runtime_kv a[] = {
                                {"io.kubernetes.cri.container-type", "container"},
                                {"io.kubernetes.cri.sandbox-uid", "u1"},
                                {"io.kubernetes.cri.sandbox-name", "web"},
                                {"io.kubernetes.cri.sandbox-namespace", "prod"},
                                {"io.kubernetes.cri.container-name", "app"},
                };
                assert_int_equal(ncm_runtime_identify(a, NCM_ELEMENTSOF(a), &id, NULL), 0);
                assert_true(id.managed);
                assert_string_equal(id.pod_uid, "u1");
                assert_string_equal(id.pod_name, "web");
                assert_string_equal(id.pod_namespace, "prod");
                assert_string_equal(id.container_name, "app");
                assert_int_equal(id.kind, NCM_RUNTIME_CONTAINER);
                assert_false(id.has_qos);
        }
        /* CRI-O (the kubelet's labels) and the kubelet's container type; a sandbox is never
         * managed */
        {
                ncm_runtime_kv a[] = {
                                {"io.kubernetes.pod.uid", "u2"},
                                {"io.kubernetes.container.name", "setup"},
                                {"io.kubernetes.container.type", "init"},
                                {"io.kubernetes.cri-o.ContainerType", "container"},
                };
                assert_int_equal(ncm_runtime_identify(a, NCM_ELEMENTSOF(a), &id, NULL), 0);
                assert_true(id.managed);
                assert_int_equal(id.kind, NCM_RUNTIME_INIT);
                assert_null(id.pod_namespace);
                a[3].value = "sandbox";
                assert_int_equal(ncm_runtime_identify(a, NCM_ELEMENTSOF(a), &id, NULL), 0);
                assert_false(id.managed);
                assert_int_equal(id.kind, NCM_RUNTIME_SANDBOX);
                a[2].value = "ephemeral";
                a[3].value = "container";
                assert_int_equal(ncm_runtime_identify(a, NCM_ELEMENTSOF(a), &id, NULL), 0);
                assert_false(id.managed);
        }
        /* nodecm's own win over the others; managed false wins over a UID */
        {
                ncm_runtime_kv a[] = {
                                {"io.kubernetes.pod.uid", "k8s"},
                                {NCM_ANNOTATION_POD_UID, "mine"},
                                {NCM_ANNOTATION_CONTAINER_TYPE, "sidecar"},
                                {NCM_ANNOTATION_QOS_CLASS, "Burstable"},
                                {NCM_ANNOTATION_MANAGED, "false"},
                };
                assert_int_equal(ncm_runtime_identify(a, NCM_ELEMENTSOF(a), &id, NULL), 0);
                assert_string_equal(id.pod_uid, "mine");
                assert_int_equal(id.kind, NCM_RUNTIME_SIDECAR);
                assert_true(id.has_qos);
                assert_int_equal(id.qos, NCM_QOS_BURSTABLE);
                assert_false(id.managed);
                a[4].value = "true";
                assert_int_equal(ncm_runtime_identify(a, NCM_ELEMENTSOF(a), &id, NULL), 0);
                assert_true(id.managed);
        }
        /* managed without a pod: the caller makes one; nothing at all: not managed */
        {
                const ncm_runtime_kv a[] = {{NCM_ANNOTATION_MANAGED, "true"}};
                assert_int_equal(ncm_runtime_identify(a, 1, &id, NULL), 0);
                assert_true(id.managed);
                assert_null(id.pod_uid);
                assert_int_equal(ncm_runtime_identify(NULL, 0, &id, NULL), 0);
                assert_false(id.managed);
        }
        /* bad words name the annotation */
        {
                ncm_runtime_kv a[] = {{NCM_ANNOTATION_MANAGED, "yes"}};
                assert_int_equal(ncm_runtime_identify(a, 1, &id, &err), -EINVAL);
                assert_string_equal(err.msg, "annotation nodecm.io/managed: expected \"true\" or "
                                             "\"false\", got \"yes\"");
                a[0] = (ncm_runtime_kv){NCM_ANNOTATION_QOS_CLASS, "guaranteed"};
                assert_int_equal(ncm_runtime_identify(a, 1, &id, &err), -EINVAL);
                assert_string_equal(err.msg,
                                    "annotation nodecm.io/qos-class: expected \"Guaranteed\", "
                                    "\"Burstable\" or \"BestEffort\", got \"guaranteed\"");
                a[0] = (ncm_runtime_kv){NCM_ANNOTATION_CONTAINER_TYPE, "app"};
                assert_int_equal(ncm_runtime_identify(a, 1, &id, &err), -EINVAL);
        }
}

static void test_runtime_page_size(void **state)
{
        int64_t v = 0;
        (void)state;
        assert_int_equal(ncm_runtime_parse_page_size("2MB", &v), 0);
        assert_int_equal(v, 2 << 20);
        assert_int_equal(ncm_runtime_parse_page_size("1GB", &v), 0);
        assert_int_equal(v, 1 << 30);
        assert_int_equal(ncm_runtime_parse_page_size("64KB", &v), 0);
        assert_int_equal(v, 64 << 10);
        assert_int_equal(ncm_runtime_parse_page_size("2Mi", &v), -EINVAL);
        assert_int_equal(ncm_runtime_parse_page_size("MB", &v), -EINVAL);
        assert_int_equal(ncm_runtime_parse_page_size("0MB", &v), -EINVAL);
        assert_int_equal(ncm_runtime_parse_page_size("99999999999999999999MB", &v), -EINVAL);
        assert_int_equal(ncm_runtime_parse_page_size("9999999999999PB", &v), -EINVAL);
        assert_int_equal(ncm_runtime_parse_page_size(NULL, &v), -EINVAL);
}

static void test_runtime_pod_build(void **state)
{
        ncm_runtime_container c[3] = {
                        {"setup", NCM_RUNTIME_INIT, kubelet_sends(2000, 2000, 1 << 30, 100000)},
                        {"app", NCM_RUNTIME_CONTAINER, kubelet_sends(2000, 2000, 1 << 30, 100000)},
                        {"log", NCM_RUNTIME_SIDECAR, kubelet_sends(500, 500, 1 << 28, 100000)},
        };
        ncm_runtime_pod p = {"uid-1", "web", NULL, true, NCM_QOS_GUARANTEED, c, 3};
        ncm_pod *pod = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(ncm_runtime_pod_build(&p, &pod, &err), 0);
        assert_int_equal(pod->qos, NCM_QOS_GUARANTEED);
        assert_string_equal(pod->ns, "default");
        assert_int_equal(pod->n_init_containers, 2);
        assert_int_equal(pod->n_containers, 1);
        assert_string_equal(pod->init_containers[0].name, "setup");
        assert_false(pod->init_containers[0].sidecar);
        assert_string_equal(pod->init_containers[1].name, "log");
        assert_true(pod->init_containers[1].sidecar);
        assert_int_equal(
                        ncm_quantity_milli_value(ncm_container_request(&pod->containers[0], "cpu")),
                        2000);
        pod = ncm_pod_free(pod);

        /* init containers alone (the kubelet creates them first): they stand in as app ones */
        p.n_containers = 1;
        assert_int_equal(ncm_runtime_pod_build(&p, &pod, &err), 0);
        assert_int_equal(pod->n_init_containers, 0);
        assert_int_equal(pod->n_containers, 1);
        assert_string_equal(pod->containers[0].name, "setup");
        pod = ncm_pod_free(pod);

        /* a Burstable cgroup with containers that look Guaranteed stays Burstable */
        p.n_containers = 3;
        p.qos = NCM_QOS_BURSTABLE;
        assert_int_equal(ncm_runtime_pod_build(&p, &pod, &err), 0);
        assert_int_equal(pod->qos, NCM_QOS_BURSTABLE);
        pod = ncm_pod_free(pod);

        /* unknown QoS: computed as the API server would, from limits alone */
        p.has_qos = false;
        assert_int_equal(ncm_runtime_pod_build(&p, &pod, &err), 0);
        assert_int_equal(pod->qos, NCM_QOS_GUARANTEED);
        pod = ncm_pod_free(pod);

        /* a Guaranteed cgroup whose containers cannot be */
        c[1].resources.memory_limit = 0;
        p.has_qos = true;
        p.qos = NCM_QOS_GUARANTEED;
        assert_int_equal(ncm_runtime_pod_build(&p, &pod, &err), -EINVAL);
        assert_null(pod);
        assert_non_null(strstr(err.msg, "container 'app': a Guaranteed container needs"));

        /* a BestEffort cgroup: no requests at all, hugepages included */
        c[1].resources.n_hugepages = 1;
        c[1].resources.hugepages[0].page_size = 2 << 20;
        c[1].resources.hugepages[0].limit = 4 << 20;
        p.qos = NCM_QOS_BEST_EFFORT;
        assert_int_equal(ncm_runtime_pod_build(&p, &pod, &err), 0);
        assert_int_equal(pod->qos, NCM_QOS_BEST_EFFORT);
        assert_null(ncm_container_limit(&pod->containers[0], "hugepages-2Mi"));
        pod = ncm_pod_free(pod);

        /* hugepages become requests and limits of their resource name */
        p.has_qos = false;
        c[1].resources.memory_limit = 1 << 30;
        assert_int_equal(ncm_runtime_pod_build(&p, &pod, &err), 0);
        assert_int_equal(ncm_quantity_value(
                                         ncm_container_limit(&pod->containers[0], "hugepages-2Mi")),
                         4 << 20);
        assert_int_equal(ncm_quantity_value(ncm_container_request(&pod->containers[0],
                                                                  "hugepages-2Mi")),
                         4 << 20);
        pod = ncm_pod_free(pod);

        /* names the pod module refuses are refused with its words */
        c[0].name = "app";
        assert_int_equal(ncm_runtime_pod_build(&p, &pod, &err), -EINVAL);
        p.uid = "";
        assert_int_equal(ncm_runtime_pod_build(&p, &pod, &err), -EINVAL);
        assert_string_equal(err.msg, "a pod without a UID");
        p.uid = "u";
        p.n_containers = 0;
        assert_int_equal(ncm_runtime_pod_build(&p, &pod, &err), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_runtime_recover_round_trips_requests),
                        cmocka_unit_test(test_runtime_recover_round_trips_limits),
                        cmocka_unit_test(test_runtime_recover_by_qos),
                        cmocka_unit_test(test_runtime_pod_cgroup_names),
                        cmocka_unit_test(test_runtime_identify),
                        cmocka_unit_test(test_runtime_page_size),
                        cmocka_unit_test(test_runtime_pod_build),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
