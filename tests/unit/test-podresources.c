/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod resources API answered from a node (ncm_podres_handle): List (sidecars then app
 * containers, regular init containers left out, one device entry per device and NUMA node,
 * exclusive CPU ids), GetAllocatableResources (healthy devices, allocatable CPUs), Get (found,
 * unknown, disabled by the feature gate or the kubelet release), v1alpha1's List, and requests
 * that do not decode. The server on a socket is tested against a python client
 * (tests/integration/test-deviceplugins.py).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/podresources.h>
#include <nodecm/topology.h>

#include "podresources-v1.pb-c.h"
#include "podresources-v1alpha1.pb-c.h"
#include "testutil.h"

typedef struct fixture {
        ncm_topo *t;
        ncm_node_config *cfg;
        ncm_node *n;
} fixture;

static const char devices[] = "{\"example.com/gpu\": [{\"id\": \"g0\", \"numa\": [0]}, "
                              "{\"id\": \"g1\", \"numa\": [1, 0]}, {\"id\": \"g2\", \"numa\": [1]},"
                              " {\"id\": \"g3\", \"numa\": [1], \"health\": \"Unhealthy\"}],"
                              " \"example.com/nic\": [{\"id\": \"n0\"}, {\"id\": \"n1\", "
                              "\"numa\": []}]}";

static const char pod_text[] =
                "{\"metadata\": {\"uid\": \"u1\", \"name\": \"web\", \"namespace\": \"prod\"},"
                " \"spec\": {\"initContainers\": ["
                "  {\"name\": \"init\", \"resources\": {\"limits\": {\"cpu\": \"1\", \"memory\": "
                "\"1Gi\"}}},"
                "  {\"name\": \"side\", \"restartPolicy\": \"Always\", \"resources\": {\"limits\": "
                "{\"cpu\": \"1\", \"memory\": \"1Gi\", \"example.com/nic\": \"1\"}}}],"
                " \"containers\": [{\"name\": \"app\", \"resources\": {\"limits\": {\"cpu\": \"2\","
                " \"memory\": \"1Gi\", \"example.com/gpu\": \"2\"}}},"
                "  {\"name\": \"shared\", \"resources\": {\"limits\": {\"cpu\": \"100m\", "
                "\"memory\": \"1Gi\"}}}]}}";

static void setup(fixture *f, const char *extra_config)
{
        char cfg[512];
        ncm_node_options o = {.devices = devices, .devices_len = sizeof(devices) - 1};
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;
        ncm_node_admission *a = NULL;

        snprintf(cfg, sizeof(cfg),
                 "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"%s}",
                 extra_config);
        memset(f, 0, sizeof(*f));
        assert_int_equal(ncm_topo_from_synthetic("package:2 numa:1 core:4 pu:1", &f->t, &err), 0);
        assert_int_equal(ncm_node_config_parse(cfg, strlen(cfg), "cfg", "", &f->cfg, &err), 0);
        if (ncm_node_new(f->t, f->cfg, &o, &f->n, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(ncm_pod_parse(pod_text, sizeof(pod_text) - 1, "pod", &pod, &err), 0);
        assert_int_equal(ncm_node_admit(f->n, pod, 0, &a, &err), 0);
        assert_true(a->admitted);
        ncm_node_admission_free(a);
        ncm_pod_free(pod);
}

static void teardown(fixture *f)
{
        ncm_node_free(f->n);
        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->t);
}

static ncm_buf call(fixture *f, ncm_podres_method m, bool get, const ProtobufCMessage *req,
                    int want, ncm_rpc_code want_code, ncm_error *err)
{
        ncm_buf reply = NCM_BUF_INIT;
        ncm_rpc_code code = NCM_RPC_OK;
        uint8_t b[1024];
        size_t len = req ? protobuf_c_message_pack(req, b) : 0;

        assert_int_equal(ncm_podres_handle(f->n, m, get, b, len, &reply, &code, err), want);
        assert_int_equal(code, want_code);
        return reply;
}

/* "resource:id@numa" for each device entry ("@-" without topology), joined by spaces */
static void devices_of(ncm_buf *out, V1__ContainerDevices **d, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(d[i]->n_device_ids, 1);
                ncm_buf_printf(out, "%s%s:%s@", i ? " " : "", d[i]->resource_name,
                               d[i]->device_ids[0]);
                if (!d[i]->topology)
                        ncm_buf_putc(out, '-');
                else
                        for (size_t k = 0; k < d[i]->topology->n_nodes; k++)
                                ncm_buf_printf(out, "%s%lld", k ? "," : "",
                                               (long long)d[i]->topology->nodes[k]->id);
        }
        ncm_buf_putc(out, '\0');
}

static void test_podresources_list(void **state)
{
        fixture f;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf r, s = NCM_BUF_INIT;
        V1__ListPodResourcesResponse *m;
        const V1__PodResources *p;
        (void)state;

        setup(&f, "");
        r = call(&f, NCM_PODRES_LIST, true, NULL, 0, NCM_RPC_OK, &err);
        m = v1__list_pod_resources_response__unpack(NULL, r.len, (const uint8_t *)r.data);
        assert_non_null(m);
        assert_int_equal(m->n_pod_resources, 1);
        p = m->pod_resources[0];
        assert_string_equal(p->name, "web");
        assert_string_equal(p->namespace_, "prod");
        /* the sidecar, then the app containers; the regular init container is left out */
        assert_int_equal(p->n_containers, 3);
        assert_string_equal(p->containers[0]->name, "side");
        assert_string_equal(p->containers[1]->name, "app");
        assert_string_equal(p->containers[2]->name, "shared");
        devices_of(&s, p->containers[0]->devices, p->containers[0]->n_devices);
        assert_string_equal(s.data, "example.com/nic:n0@-");
        ncm_buf_reset(&s);
        /* g1 is on NUMA nodes 0 and 1: listed under each */
        devices_of(&s, p->containers[1]->devices, p->containers[1]->n_devices);
        assert_string_equal(s.data, "example.com/gpu:g0@0 example.com/gpu:g1@0 "
                                    "example.com/gpu:g1@1");
        assert_int_equal(p->containers[1]->n_cpu_ids, 2);
        assert_int_equal(p->containers[2]->n_cpu_ids, 0); /* the shared pool is not listed */
        assert_int_equal(p->containers[1]->n_memory, 0);
        v1__list_pod_resources_response__free_unpacked(m, NULL);
        ncm_buf_done(&r);
        ncm_buf_done(&s);
        teardown(&f);
}

static void test_podresources_allocatable(void **state)
{
        fixture f;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf r, s = NCM_BUF_INIT;
        V1__AllocatableResourcesResponse *m;
        (void)state;

        setup(&f, "");
        r = call(&f, NCM_PODRES_GET_ALLOCATABLE, true, NULL, 0, NCM_RPC_OK, &err);
        m = v1__allocatable_resources_response__unpack(NULL, r.len, (const uint8_t *)r.data);
        assert_non_null(m);
        /* every healthy device, allocated or not, in the plugin's NUMA order; g3 is unhealthy;
         * n1's TopologyInfo has no node: no entry, as in the kubelet */
        devices_of(&s, m->devices, m->n_devices);
        assert_string_equal(s.data, "example.com/gpu:g0@0 example.com/gpu:g1@1 "
                                    "example.com/gpu:g1@0 example.com/gpu:g2@1 "
                                    "example.com/nic:n0@-");
        assert_int_equal(m->n_cpu_ids, 7); /* all but the reserved CPU 0 */
        assert_int_equal(m->cpu_ids[0], 1);
        assert_int_equal(m->n_memory, 0);
        v1__allocatable_resources_response__free_unpacked(m, NULL);
        ncm_buf_done(&r);
        ncm_buf_done(&s);
        teardown(&f);
}

/* isolatedCPUs exclude: the isolated CPUs are nobody's, so not allocatable either. */
static void test_podresources_allocatable_isolated(void **state)
{
        static const char cfg[] = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                  "\"0\", \"isolatedCPUs\": \"exclude\"}";
        fixture f = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf r;
        ncm_cpuset *iso = tu_cpuset("6-7");
        V1__AllocatableResourcesResponse *m;
        (void)state;

        assert_int_equal(ncm_topo_from_synthetic("package:2 numa:1 core:4 pu:1", &f.t, &err), 0);
        assert_int_equal(ncm_topo_set_isolation(f.t, NCM_ISO_GIVEN_ISOLATED, iso, &err), 0);
        assert_int_equal(ncm_node_config_parse(cfg, strlen(cfg), "cfg", "", &f.cfg, &err), 0);
        assert_int_equal(ncm_node_new(f.t, f.cfg, NULL, &f.n, &err), 0);
        r = call(&f, NCM_PODRES_GET_ALLOCATABLE, true, NULL, 0, NCM_RPC_OK, &err);
        m = v1__allocatable_resources_response__unpack(NULL, r.len, (const uint8_t *)r.data);
        assert_non_null(m);
        assert_int_equal(m->n_cpu_ids, 5);
        assert_int_equal(m->cpu_ids[0], 1);
        assert_int_equal(m->cpu_ids[4], 5);
        v1__allocatable_resources_response__free_unpacked(m, NULL);
        ncm_buf_done(&r);
        ncm_cpuset_free(iso);
        teardown(&f);
}

/* The memory manager's Static policy: List gives each container its blocks (ContainerMemory),
 * GetAllocatableResources every node's allocatable memory per type, as the kubelet does. */
static void test_podresources_memory(void **state)
{
        static const char cfgtext[] =
                        "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                        "\"memoryManagerPolicy\": \"Static\", \"kubeReserved\": {\"memory\": "
                        "\"156Mi\"}, \"evictionHard\": {\"memory.available\": \"100Mi\"}, "
                        "\"reservedMemory\": [{\"numaNode\": 0, \"limits\": {\"memory\": "
                        "\"128Mi\"}}, {\"numaNode\": 1, \"limits\": {\"memory\": \"128Mi\"}}]}";
        fixture f;
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_options o = {.devices = devices, .devices_len = sizeof(devices) - 1};
        ncm_pod *pod = NULL;
        ncm_node_admission *a = NULL;
        ncm_buf r;
        V1__ListPodResourcesResponse *m;
        V1__AllocatableResourcesResponse *al;
        const V1__ContainerResources *app;
        (void)state;

        memset(&f, 0, sizeof(f));
        assert_int_equal(ncm_topo_from_synthetic("package:2 numa:1 core:4 pu:1", &f.t, &err), 0);
        assert_int_equal(ncm_topo_apply_memory_spec(f.t, "4Gi", &err), 0);
        assert_int_equal(ncm_node_config_parse(cfgtext, sizeof(cfgtext) - 1, "cfg", "", &f.cfg,
                                               &err),
                         0);
        if (ncm_node_new(f.t, f.cfg, &o, &f.n, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(ncm_pod_parse(pod_text, sizeof(pod_text) - 1, "pod", &pod, &err), 0);
        assert_int_equal(ncm_node_admit(f.n, pod, 0, &a, &err), 0);
        assert_true(a->admitted);
        ncm_node_admission_free(a);
        ncm_pod_free(pod);

        r = call(&f, NCM_PODRES_LIST, true, NULL, 0, NCM_RPC_OK, &err);
        m = v1__list_pod_resources_response__unpack(NULL, r.len, (const uint8_t *)r.data);
        assert_non_null(m);
        assert_int_equal(m->pod_resources[0]->n_containers, 3);
        /* every container of the Guaranteed pod is pinned: one block of 1Gi of memory each */
        for (size_t i = 0; i < 3; i++) {
                const V1__ContainerResources *c = m->pod_resources[0]->containers[i];
                assert_int_equal(c->n_memory, 1);
                assert_string_equal(c->memory[0]->memory_type, "memory");
                assert_int_equal(c->memory[0]->size, 1ull << 30);
                assert_non_null(c->memory[0]->topology);
                assert_true(c->memory[0]->topology->n_nodes >= 1);
        }
        /* the app's block lies where its GPUs and CPUs are */
        app = m->pod_resources[0]->containers[1];
        assert_string_equal(app->name, "app");
        v1__list_pod_resources_response__free_unpacked(m, NULL);
        ncm_buf_done(&r);

        r = call(&f, NCM_PODRES_GET_ALLOCATABLE, true, NULL, 0, NCM_RPC_OK, &err);
        al = v1__allocatable_resources_response__unpack(NULL, r.len, (const uint8_t *)r.data);
        assert_non_null(al);
        /* one block per node: 4Gi less the 128Mi reserved on it */
        assert_int_equal(al->n_memory, 2);
        for (size_t i = 0; i < 2; i++) {
                assert_string_equal(al->memory[i]->memory_type, "memory");
                assert_int_equal(al->memory[i]->size, (4ull << 30) - (128ull << 20));
                assert_int_equal(al->memory[i]->topology->n_nodes, 1);
                assert_int_equal(al->memory[i]->topology->nodes[0]->id, (int64_t)i);
        }
        v1__allocatable_resources_response__free_unpacked(al, NULL);
        ncm_buf_done(&r);
        teardown(&f);
}

static void test_podresources_get(void **state)
{
        fixture f;
        ncm_error err = NCM_ERROR_INIT;
        V1__GetPodResourcesRequest q = V1__GET_POD_RESOURCES_REQUEST__INIT;
        V1__GetPodResourcesResponse *m;
        ncm_buf r;
        (void)state;

        setup(&f, "");
        q.pod_name = "web";
        q.pod_namespace = "prod";
        r = call(&f, NCM_PODRES_GET, true, &q.base, 0, NCM_RPC_OK, &err);
        m = v1__get_pod_resources_response__unpack(NULL, r.len, (const uint8_t *)r.data);
        assert_non_null(m);
        assert_string_equal(m->pod_resources->name, "web");
        assert_int_equal(m->pod_resources->n_containers, 3);
        v1__get_pod_resources_response__free_unpacked(m, NULL);
        ncm_buf_done(&r);
        q.pod_namespace = "default";
        r = call(&f, NCM_PODRES_GET, true, &q.base, -ENOENT, NCM_RPC_UNKNOWN, &err);
        assert_string_equal(err.msg, "pod web in namespace default not found");
        ncm_buf_done(&r);
        r = call(&f, NCM_PODRES_GET, false, &q.base, -EPERM, NCM_RPC_UNKNOWN, &err);
        assert_string_equal(err.msg, "PodResources API Get method disabled");
        ncm_buf_done(&r);
        /* KubeletPodResourcesGet: on by default from 1.34 */
        assert_true(ncm_podres_get_enabled(f.n));
        teardown(&f);
        setup(&f, ", \"kubeletVersion\": \"1.33\"");
        assert_false(ncm_podres_get_enabled(f.n));
        teardown(&f);
        setup(&f, ", \"featureGates\": {\"KubeletPodResourcesGet\": false}");
        assert_false(ncm_podres_get_enabled(f.n));
        teardown(&f);
}

static void test_podresources_v1alpha1_and_garbage(void **state)
{
        fixture f;
        ncm_error err = NCM_ERROR_INIT;
        V1alpha1__ListPodResourcesResponse *m;
        ncm_buf r = NCM_BUF_INIT;
        ncm_rpc_code code;
        static const uint8_t garbage[] = {0x0a, 0x7f, 0x01};
        (void)state;

        setup(&f, "");
        r = call(&f, NCM_PODRES_LIST_V1ALPHA1, true, NULL, 0, NCM_RPC_OK, &err);
        m = v1alpha1__list_pod_resources_response__unpack(NULL, r.len, (const uint8_t *)r.data);
        assert_non_null(m);
        /* app containers only; devices without topology, one entry per device and node */
        assert_int_equal(m->pod_resources[0]->n_containers, 2);
        assert_string_equal(m->pod_resources[0]->containers[0]->name, "app");
        assert_int_equal(m->pod_resources[0]->containers[0]->n_devices, 3);
        v1alpha1__list_pod_resources_response__free_unpacked(m, NULL);
        ncm_buf_done(&r);
        for (int i = 0; i < NCM_PODRES_N_METHODS; i++) {
                assert_int_equal(ncm_podres_handle(f.n, (ncm_podres_method)i, true, garbage,
                                                   sizeof(garbage), &r, &code, &err),
                                 -EINVAL);
                assert_int_equal(code, NCM_RPC_INTERNAL);
                assert_non_null(strstr(err.msg, "grpc: error unmarshalling request"));
        }
        ncm_buf_done(&r);
        assert_string_equal(ncm_podres_method_path(NCM_PODRES_GET), "/v1.PodResourcesLister/Get");
        assert_int_equal(ncm_podres_method_from_path("/v1alpha1.PodResourcesLister/List"),
                         NCM_PODRES_LIST_V1ALPHA1);
        assert_int_equal(ncm_podres_method_from_path("/v1.PodResourcesLister/Watch"), -1);
        teardown(&f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_podresources_list),
                        cmocka_unit_test(test_podresources_allocatable),
                        cmocka_unit_test(test_podresources_allocatable_isolated),
                        cmocka_unit_test(test_podresources_memory),
                        cmocka_unit_test(test_podresources_get),
                        cmocka_unit_test(test_podresources_v1alpha1_and_garbage),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
