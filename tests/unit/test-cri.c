/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/cri's messages: what the kubelet sends decoded into plain structs, forwarded requests
 * with nodecm's fields set in them (the others kept, unknown ones included), requests encoded,
 * and bytes that are not the message refused.
 * The client is tested against a real containerd (tests/integration/test-cri-client.py), and
 * the patches against containerd's own decoder by the CRI proxy's tests.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cri.h>
#include "cri-runtime-v1.pb-c.h"
#include "testutil.h"

typedef Runtime__V1__ContainerConfig__AnnotationsEntry ann_entry;

/* A CreateContainerRequest as the kubelet builds one: Guaranteed, 2 CPUs, 1 GiB. */
static uint8_t *kubelet_create(size_t *ret_len, const char *client_cpuset)
{
        Runtime__V1__CreateContainerRequest req = RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;
        Runtime__V1__ContainerConfig cfg = RUNTIME__V1__CONTAINER_CONFIG__INIT;
        Runtime__V1__ContainerMetadata md = RUNTIME__V1__CONTAINER_METADATA__INIT;
        Runtime__V1__LinuxContainerConfig lx = RUNTIME__V1__LINUX_CONTAINER_CONFIG__INIT;
        Runtime__V1__LinuxContainerResources res = RUNTIME__V1__LINUX_CONTAINER_RESOURCES__INIT;
        Runtime__V1__HugepageLimit h1 = RUNTIME__V1__HUGEPAGE_LIMIT__INIT;
        Runtime__V1__HugepageLimit h2 = RUNTIME__V1__HUGEPAGE_LIMIT__INIT;
        Runtime__V1__HugepageLimit *hp[] = {&h1, &h2};
        ann_entry a1 = RUNTIME__V1__CONTAINER_CONFIG__ANNOTATIONS_ENTRY__INIT;
        ann_entry a2 = RUNTIME__V1__CONTAINER_CONFIG__ANNOTATIONS_ENTRY__INIT;
        ann_entry *ap[] = {&a1, &a2};
        Runtime__V1__ContainerConfig__LabelsEntry l1 =
                        RUNTIME__V1__CONTAINER_CONFIG__LABELS_ENTRY__INIT;
        Runtime__V1__ContainerConfig__LabelsEntry *lp[] = {&l1};
        Runtime__V1__KeyValue e1 = RUNTIME__V1__KEY_VALUE__INIT;
        Runtime__V1__KeyValue *ep[] = {&e1};
        Runtime__V1__PodSandboxConfig sb = RUNTIME__V1__POD_SANDBOX_CONFIG__INIT;
        Runtime__V1__PodSandboxMetadata smd = RUNTIME__V1__POD_SANDBOX_METADATA__INIT;
        Runtime__V1__LinuxPodSandboxConfig slx = RUNTIME__V1__LINUX_POD_SANDBOX_CONFIG__INIT;
        uint8_t *buf;
        size_t n;

        md.name = "app";
        md.attempt = 2;
        res.cpu_shares = 2048;
        res.cpu_quota = 200000;
        res.cpu_period = 100000;
        res.memory_limit_in_bytes = 1 << 30;
        res.oom_score_adj = -997;
        res.cpuset_cpus = (char *)client_cpuset;
        h1.page_size = "2MB";
        h1.limit = 0;
        h2.page_size = "1GB";
        h2.limit = 1u << 30;
        res.n_hugepage_limits = 2;
        res.hugepage_limits = hp;
        lx.resources = &res;
        a1.key = "io.kubernetes.container.type";
        a1.value = "init";
        a2.key = "team";
        a2.value = "a";
        l1.key = "io.kubernetes.pod.uid";
        l1.value = "uid-1";
        e1.key = "PATH";
        e1.value = "/bin";
        cfg.metadata = &md;
        cfg.linux = &lx;
        cfg.n_annotations = 2;
        cfg.annotations = ap;
        cfg.n_labels = 1;
        cfg.labels = lp;
        cfg.n_envs = 1;
        cfg.envs = ep;
        smd.name = "db";
        smd.uid = "uid-1";
        smd.namespace_ = "prod";
        slx.cgroup_parent = "/kubepods/poduid-1";
        sb.metadata = &smd;
        sb.linux = &slx;
        req.pod_sandbox_id = "sandbox-1";
        req.config = &cfg;
        req.sandbox_config = &sb;
        n = protobuf_c_message_get_packed_size(&req.base);
        buf = malloc(n + 4096);
        assert_non_null(buf);
        protobuf_c_message_pack(&req.base, buf);
        *ret_len = n;
        return buf;
}

static void test_cri_method_paths(void **state)
{
        (void)state;
        for (int m = 0; m < NCM_CRI_N_METHODS; m++)
                assert_int_equal(ncm_cri_method_from_path(ncm_cri_method_path(m)), m);
        assert_string_equal(ncm_cri_method_path(NCM_CRI_CREATE_CONTAINER),
                            "/runtime.v1.RuntimeService/CreateContainer");
        assert_null(ncm_cri_method_path(NCM_CRI_N_METHODS));
        assert_int_equal(ncm_cri_method_from_path("/runtime.v1.RuntimeService/Exec"), -1);
        assert_int_equal(ncm_cri_method_from_path(NULL), -1);
        assert_string_equal(ncm_cri_container_state_name(1), "CONTAINER_RUNNING");
        assert_string_equal(ncm_cri_container_state_name(99), "CONTAINER_UNKNOWN");
}

static void test_cri_decode_create_container(void **state)
{
        size_t len;
        uint8_t *msg = kubelet_create(&len, "");
        ncm_cri_container_config c;
        (void)state;

        assert_int_equal(ncm_cri_decode_create_container(msg, len, &c, NULL), 0);
        assert_string_equal(c.pod_sandbox_id, "sandbox-1");
        assert_string_equal(c.name, "app");
        assert_int_equal(c.attempt, 2);
        assert_string_equal(ncm_cri_kvs_get(&c.annotations, "io.kubernetes.container.type"),
                            "init");
        assert_string_equal(ncm_cri_kvs_get(&c.labels, "io.kubernetes.pod.uid"), "uid-1");
        assert_true(c.resources.present);
        assert_int_equal(c.resources.r.cpu_shares, 2048);
        assert_int_equal(c.resources.r.cpu_quota, 200000);
        assert_int_equal(c.resources.r.cpu_period, 100000);
        assert_int_equal(c.resources.r.memory_limit, 1 << 30);
        /* limits of 0 mean none: only the 1GB one */
        assert_int_equal(c.resources.r.n_hugepages, 1);
        assert_int_equal(c.resources.r.hugepages[0].page_size, 1 << 30);
        assert_string_equal(c.resources.cpuset_cpus, "");
        assert_true(c.has_sandbox);
        assert_string_equal(c.sandbox.uid, "uid-1");
        assert_string_equal(c.sandbox.namespace, "prod");
        assert_string_equal(c.sandbox.cgroup_parent, "/kubepods/poduid-1");
        assert_false(c.sandbox.resources.present);
        ncm_cri_container_config_done(&c);
        free(msg);
}

/* DRA's CDI devices: field 17 (kubelet 1.31+), and before it "cdi.k8s.io/" annotations. */
static void test_cri_decode_cdi_devices(void **state)
{
        Runtime__V1__CreateContainerRequest req = RUNTIME__V1__CREATE_CONTAINER_REQUEST__INIT;
        Runtime__V1__ContainerConfig cfg = RUNTIME__V1__CONTAINER_CONFIG__INIT;
        Runtime__V1__ContainerMetadata md = RUNTIME__V1__CONTAINER_METADATA__INIT;
        Runtime__V1__CDIDevice d1 = RUNTIME__V1__CDIDEVICE__INIT;
        Runtime__V1__CDIDevice d2 = RUNTIME__V1__CDIDEVICE__INIT;
        Runtime__V1__CDIDevice d3 = RUNTIME__V1__CDIDEVICE__INIT;
        Runtime__V1__CDIDevice *dp[] = {&d1, &d2, &d3};
        ann_entry a1 = RUNTIME__V1__CONTAINER_CONFIG__ANNOTATIONS_ENTRY__INIT;
        ann_entry a2 = RUNTIME__V1__CONTAINER_CONFIG__ANNOTATIONS_ENTRY__INIT;
        ann_entry *ap[] = {&a1, &a2};
        ncm_cri_container_config c;
        uint8_t *buf;
        size_t n;
        (void)state;

        md.name = "app";
        d1.name = "k8s.gpu.example.com/gpu=claim-1-gpu0";
        d2.name = "vendor.com/nic=vf0";
        d3.name = "";
        a1.key = "cdi.k8s.io/vendor.nic_vf0";
        a1.value = "vendor.com/nic=vf0,vendor.com/nic=vf1";
        a2.key = "cdi.k8s.io.other/x";
        a2.value = "not=cdi";
        cfg.metadata = &md;
        cfg.n_cdi_devices = 3;
        cfg.cdi_devices = dp;
        cfg.n_annotations = 2;
        cfg.annotations = ap;
        req.config = &cfg;
        n = protobuf_c_message_get_packed_size(&req.base);
        buf = malloc(n);
        assert_non_null(buf);
        protobuf_c_message_pack(&req.base, buf);
        assert_int_equal(ncm_cri_decode_create_container(buf, n, &c, NULL), 0);
        assert_int_equal(c.n_cdi_devices, 3);
        assert_string_equal(c.cdi_devices[0], "vendor.com/nic=vf0");
        assert_string_equal(c.cdi_devices[1], "vendor.com/nic=vf1");
        assert_string_equal(c.cdi_devices[2], "k8s.gpu.example.com/gpu=claim-1-gpu0");
        ncm_cri_container_config_done(&c);
        free(buf);
}

static void test_cri_patch_create_container(void **state)
{
        size_t len;
        uint8_t *msg = kubelet_create(&len, "0-7");
        const ncm_cri_device dev[] = {{"/dev/gpu0", "/dev/nvidia0", "rw"}};
        const ncm_cri_mount mnt[] = {{"/usr/lib/gpu", "/opt/gpu/lib", true}};
        const ncm_runtime_kv env[] = {{"GPU_VISIBLE", "0"}};
        const ncm_runtime_kv ann[] = {{"team", "b"}, {"nodecm.io/cpus", "3"}};
        const char *const cdi[] = {"vendor.com/gpu=gpu0"};
        ncm_cri_container_patch p = {"3", "0", dev, 1, mnt, 1, env, 1, ann, 2, cdi, 1};
        ncm_buf b = NCM_BUF_INIT;
        Runtime__V1__CreateContainerRequest *m;
        ncm_cri_container_config c;
        (void)state;

        assert_int_equal(ncm_cri_patch_create_container(msg, len, &p, &b, NULL), 0);
        m = runtime__v1__create_container_request__unpack(NULL, b.len, (const uint8_t *)b.data);
        assert_non_null(m);
        /* the kubelet's fields stay; nodecm's cpuset wins over the client's */
        assert_string_equal(m->config->metadata->name, "app");
        assert_int_equal(m->config->linux->resources->cpu_shares, 2048);
        assert_int_equal(m->config->linux->resources->cpu_quota, 200000);
        assert_string_equal(m->config->linux->resources->cpuset_cpus, "3");
        assert_string_equal(m->config->linux->resources->cpuset_mems, "0");
        assert_string_equal(m->sandbox_config->metadata->uid, "uid-1");
        /* repeated fields grow */
        assert_int_equal(m->config->n_envs, 2);
        assert_string_equal(m->config->envs[1]->key, "GPU_VISIBLE");
        assert_int_equal(m->config->n_devices, 1);
        assert_string_equal(m->config->devices[0]->host_path, "/dev/nvidia0");
        assert_int_equal(m->config->n_mounts, 1);
        assert_true(m->config->mounts[0]->readonly);
        assert_int_equal(m->config->n_cdi_devices, 1);
        assert_string_equal(m->config->cdi_devices[0]->name, "vendor.com/gpu=gpu0");
        protobuf_c_message_free_unpacked(&m->base, NULL);
        /* annotations replaced by key, added otherwise */
        assert_int_equal(ncm_cri_decode_create_container((const uint8_t *)b.data, b.len, &c, NULL),
                         0);
        assert_string_equal(ncm_cri_kvs_get(&c.annotations, "team"), "b");
        assert_string_equal(ncm_cri_kvs_get(&c.annotations, "nodecm.io/cpus"), "3");
        assert_int_equal(c.annotations.n, 3);
        assert_string_equal(c.resources.cpuset_cpus, "3");
        ncm_cri_container_config_done(&c);
        ncm_buf_done(&b);
        free(msg);
}

/* A request carrying a field nodecm's .proto does not know keeps it through a patch. */
static void test_cri_patch_keeps_unknown_fields(void **state)
{
        size_t len;
        uint8_t *msg = kubelet_create(&len, "");
        ncm_cri_container_patch p = {.cpuset_cpus = "1"};
        ncm_buf b = NCM_BUF_INIT;
        /* field 99 (varint 7) at the top, as a newer kubelet might send */
        const uint8_t unknown[] = {0x98, 0x06, 0x07};
        (void)state;

        memcpy(msg + len, unknown, sizeof(unknown));
        len += sizeof(unknown);
        assert_int_equal(ncm_cri_patch_create_container(msg, len, &p, &b, NULL), 0);
        assert_true(b.len >= sizeof(unknown));
        assert_non_null(memmem(b.data, b.len, unknown, sizeof(unknown)));
        ncm_buf_done(&b);
        /* a request without a config gets one */
        {
                const uint8_t bare[] = {0x0a, 0x01, 's'};
                Runtime__V1__CreateContainerRequest *m;
                assert_int_equal(ncm_cri_patch_create_container(bare, sizeof(bare), &p, &b, NULL),
                                 0);
                m = runtime__v1__create_container_request__unpack(NULL, b.len,
                                                                  (const uint8_t *)b.data);
                assert_string_equal(m->config->linux->resources->cpuset_cpus, "1");
                protobuf_c_message_free_unpacked(&m->base, NULL);
        }
        ncm_buf_done(&b);
        /* protobuf-c reads a field number 0 it cannot write back readably: refused */
        {
                const uint8_t zero[] = {0x80, 0x00, 0x00};
                ncm_error err = NCM_ERROR_INIT;
                assert_int_equal(ncm_cri_patch_create_container(zero, sizeof(zero), &p, &b, &err),
                                 -EINVAL);
                assert_string_equal(err.msg,
                                    "CreateContainerRequest: does not decode once written again");
                assert_int_equal(b.len, 0);
                ncm_buf_done(&b);
        }
        free(msg);
}

static void test_cri_patch_update_resources(void **state)
{
        Runtime__V1__UpdateContainerResourcesRequest req =
                        RUNTIME__V1__UPDATE_CONTAINER_RESOURCES_REQUEST__INIT;
        Runtime__V1__LinuxContainerResources res = RUNTIME__V1__LINUX_CONTAINER_RESOURCES__INIT;
        ncm_buf b = NCM_BUF_INIT;
        ncm_cri_resources r;
        uint8_t buf[512];
        char *id = NULL;
        size_t n;
        (void)state;

        req.container_id = "c1";
        res.cpuset_cpus = "0-15";
        res.cpu_shares = 512;
        req.linux = &res;
        n = protobuf_c_message_pack(&req.base, buf);
        assert_int_equal(ncm_cri_patch_update_resources(buf, n, "2-3", "1", &b, NULL), 0);
        assert_int_equal(ncm_cri_decode_update_resources((const uint8_t *)b.data, b.len, &id, &r,
                                                         NULL),
                         0);
        assert_string_equal(id, "c1");
        assert_string_equal(r.cpuset_cpus, "2-3");
        assert_string_equal(r.cpuset_mems, "1");
        assert_int_equal(r.r.cpu_shares, 512);
        free(id);
        ncm_cri_resources_done(&r);
        ncm_buf_done(&b);
}

static void test_cri_request_encode(void **state)
{
        ncm_cri_request q = {.method = NCM_CRI_LIST_CONTAINERS,
                             .state = NCM_CRI_CONTAINER_RUNNING,
                             .pod_sandbox_id = "s1"};
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(ncm_cri_request_encode(&q, &b, NULL), 0);
        {
                Runtime__V1__ListContainersRequest *m =
                                runtime__v1__list_containers_request__unpack(
                                                NULL, b.len, (const uint8_t *)b.data);
                assert_non_null(m);
                assert_int_equal(m->filter->state->state, 1);
                assert_string_equal(m->filter->pod_sandbox_id, "s1");
                protobuf_c_message_free_unpacked(&m->base, NULL);
        }
        ncm_buf_reset(&b);
        q = (ncm_cri_request){.method = NCM_CRI_UPDATE_CONTAINER_RESOURCES,
                              .id = "c9",
                              .cpuset_cpus = "1"};
        assert_int_equal(ncm_cri_request_encode(&q, &b, NULL), 0);
        {
                char *id = NULL;
                ncm_cri_resources r;
                assert_int_equal(ncm_cri_decode_update_resources((const uint8_t *)b.data, b.len,
                                                                 &id, &r, NULL),
                                 0);
                assert_string_equal(id, "c9");
                assert_string_equal(r.cpuset_cpus, "1");
                free(id);
                ncm_cri_resources_done(&r);
        }
        ncm_buf_reset(&b);
        q = (ncm_cri_request){.method = NCM_CRI_VERSION};
        assert_int_equal(ncm_cri_request_encode(&q, &b, NULL), 0);
        {
                Runtime__V1__VersionRequest *m = runtime__v1__version_request__unpack(
                                NULL, b.len, (const uint8_t *)b.data);
                assert_string_equal(m->version, "0.1.0");
                protobuf_c_message_free_unpacked(&m->base, NULL);
        }
        q = (ncm_cri_request){.method = NCM_CRI_CREATE_CONTAINER};
        assert_int_equal(ncm_cri_request_encode(&q, &b, &err), -EINVAL);
        assert_string_equal(err.msg, "/runtime.v1.RuntimeService/CreateContainer: not a call the "
                                     "CRI client makes");
        q = (ncm_cri_request){.method = NCM_CRI_CONTAINER_STATUS};
        assert_int_equal(ncm_cri_request_encode(&q, &b, &err), -EINVAL);
        ncm_buf_done(&b);
}

static void test_cri_decode_refuses_garbage(void **state)
{
        size_t len;
        uint8_t *msg = kubelet_create(&len, "");
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        /* every truncation of a real request either decodes or is refused, never more */
        for (size_t cut = 0; cut < len; cut++) {
                ncm_cri_container_config c;
                int r = ncm_cri_decode_create_container(msg, cut, &c, &err);
                if (r == 0)
                        ncm_cri_container_config_done(&c);
                else
                        assert_int_equal(r, -EINVAL);
        }
        {
                const uint8_t bad[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f};
                ncm_cri_sandbox_config s;
                ncm_cri_container *v = NULL;
                size_t n;
                char *id;
                assert_int_equal(ncm_cri_decode_run_pod_sandbox(bad, sizeof(bad), &s, &err),
                                 -EINVAL);
                assert_string_equal(err.msg, "RunPodSandboxRequest: does not decode");
                assert_int_equal(ncm_cri_decode_containers(bad, sizeof(bad), &v, &n, &err),
                                 -EINVAL);
                assert_int_equal(ncm_cri_decode_id(bad, sizeof(bad), &id, &err), -EINVAL);
        }
        free(msg);
}

static void test_cri_decode_lists(void **state)
{
        Runtime__V1__ListContainersResponse resp = RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
        Runtime__V1__Container c1 = RUNTIME__V1__CONTAINER__INIT;
        Runtime__V1__ContainerMetadata md = RUNTIME__V1__CONTAINER_METADATA__INIT;
        Runtime__V1__Container *cp[] = {&c1};
        Runtime__V1__ListPodSandboxResponse sresp = RUNTIME__V1__LIST_POD_SANDBOX_RESPONSE__INIT;
        Runtime__V1__PodSandbox s1 = RUNTIME__V1__POD_SANDBOX__INIT;
        Runtime__V1__PodSandbox *sp[] = {&s1};
        uint8_t buf[1024];
        ncm_cri_container *v = NULL;
        ncm_cri_sandbox *sv = NULL;
        size_t n, len;
        (void)state;

        md.name = "app";
        c1.id = "c1";
        c1.pod_sandbox_id = "s1";
        c1.metadata = &md;
        c1.state = RUNTIME__V1__CONTAINER_STATE__CONTAINER_EXITED;
        resp.n_containers = 1;
        resp.containers = cp;
        len = protobuf_c_message_pack(&resp.base, buf);
        assert_int_equal(ncm_cri_decode_containers(buf, len, &v, &n, NULL), 0);
        assert_int_equal(n, 1);
        assert_string_equal(v[0].id, "c1");
        assert_string_equal(v[0].name, "app");
        assert_int_equal(v[0].state, NCM_CRI_CONTAINER_EXITED);
        ncm_cri_containers_free(v, n);

        s1.id = "s1";
        s1.state = RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_NOTREADY;
        sresp.n_items = 1;
        sresp.items = sp;
        len = protobuf_c_message_pack(&sresp.base, buf);
        assert_int_equal(ncm_cri_decode_sandboxes(buf, len, &sv, &n, NULL), 0);
        assert_int_equal(n, 1);
        assert_false(sv[0].ready);
        assert_string_equal(sv[0].uid, "");
        ncm_cri_sandboxes_free(sv, n);

        /* empty replies are lists of none */
        assert_int_equal(ncm_cri_decode_containers(NULL, 0, &v, &n, NULL), 0);
        assert_int_equal(n, 0);
        ncm_cri_containers_free(v, n);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cri_method_paths),
                        cmocka_unit_test(test_cri_decode_create_container),
                        cmocka_unit_test(test_cri_decode_cdi_devices),
                        cmocka_unit_test(test_cri_patch_create_container),
                        cmocka_unit_test(test_cri_patch_keeps_unknown_fields),
                        cmocka_unit_test(test_cri_patch_update_resources),
                        cmocka_unit_test(test_cri_request_encode),
                        cmocka_unit_test(test_cri_decode_refuses_garbage),
                        cmocka_unit_test(test_cri_decode_lists),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
