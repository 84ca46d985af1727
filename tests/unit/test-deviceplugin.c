/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device plugin API's messages as the host reads them (lib/deviceplugin/dp-wire.c):
 * Register's checks with the kubelet's texts, ListAndWatch snapshots, options, the answers of
 * GetPreferredAllocation and Allocate, the requests the host sends, grpc-go's error texts.
 * The live host itself is tested against python plugins (tests/integration).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "deviceplugin-v1beta1.pb-c.h"
#include "deviceplugin/dp-internal.h"
#include "testutil.h"

static uint8_t *pack_msg(const ProtobufCMessage *m, size_t *len)
{
        uint8_t *b = malloc(protobuf_c_message_get_packed_size(m) + 1);
        *len = protobuf_c_message_pack(m, b);
        return b;
}

static int check_reg(const char *version, const char *endpoint, const char *resource,
                     size_t dir_len, ncm_error *err)
{
        V1beta1__RegisterRequest rq = V1BETA1__REGISTER_REQUEST__INIT;
        ncm__dp_register r = {0};
        size_t len;
        uint8_t *b;
        int k;

        rq.version = (char *)version;
        rq.endpoint = (char *)endpoint;
        rq.resource_name = (char *)resource;
        b = pack_msg(&rq.base, &len);
        k = ncm__dp_register_decode(b, len, &r, err);
        free(b);
        if (k < 0)
                return k;
        k = ncm__dp_register_check(&r, dir_len, err);
        ncm__dp_register_done(&r);
        return k;
}

static void test_deviceplugin_register_checks(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        char long_name[200];
        (void)state;

        assert_int_equal(check_reg("v1beta1", "gpu.sock", "example.com/gpu", 30, &err), 0);
        assert_int_equal(check_reg("v1alpha", "gpu.sock", "example.com/gpu", 30, &err), -EINVAL);
        assert_string_equal(err.msg, "requested API version \"v1alpha\" is not supported by "
                                     "kubelet. Supported version is [\"v1beta1\"]");
        /* the version is checked before the name, as the kubelet does */
        assert_int_equal(check_reg("", "gpu.sock", "gpu", 30, &err), -EINVAL);
        assert_string_equal(err.msg, "requested API version \"\" is not supported by kubelet. "
                                     "Supported version is [\"v1beta1\"]");
        assert_int_equal(check_reg("v1beta1", "gpu.sock", "gpu", 30, &err), -EINVAL);
        assert_string_equal(err.msg, "the ResourceName \"gpu\" is invalid");
        assert_int_equal(check_reg("v1beta1", "gpu.sock", "kubernetes.io/gpu", 30, &err), -EINVAL);
        assert_string_equal(err.msg, "the ResourceName \"kubernetes.io/gpu\" is invalid");
        assert_int_equal(check_reg("v1beta1", "gpu.sock", "requests.example.com/gpu", 30, &err),
                         -EINVAL);
        /* endpoints: a socket name in the directory, nothing else */
        static const char *const bad[] = {"", ".", "..", "../x.sock", "a/b.sock", "/abs.sock"};
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++) {
                assert_int_equal(check_reg("v1beta1", bad[i], "example.com/gpu", 30, &err),
                                 -EINVAL);
                assert_non_null(strstr(err.msg, "must be the name of a socket in the device "
                                                "plugin directory"));
        }
        assert_int_equal(check_reg("v1beta1", "../x.sock", "example.com/gpu", 30, &err), -EINVAL);
        assert_string_equal(err.msg, "invalid endpoint \"../x.sock\": must be the name of a "
                                     "socket in the device plugin directory");
        memset(long_name, 'a', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = '\0';
        assert_int_equal(check_reg("v1beta1", long_name, "example.com/gpu", 30, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "longer than a unix socket path can be"));
        /* not UTF-8, and not protobuf at all */
        assert_int_equal(check_reg("v1beta1", "gpu\xff.sock", "example.com/gpu", 30, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "grpc: error unmarshalling request: string field contains "
                                     "invalid UTF-8");
        {
                ncm__dp_register r = {0};
                static const uint8_t garbage[] = {0x0a, 0x10, 'x'};
                assert_int_equal(ncm__dp_register_decode(garbage, sizeof(garbage), &r, &err),
                                 -EINVAL);
                assert_string_equal(err.msg, "grpc: error unmarshalling request: proto: cannot "
                                             "parse invalid wire-format data");
        }
}

static void test_deviceplugin_snapshot(void **state)
{
        V1beta1__ListAndWatchResponse lw = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
        V1beta1__Device d[3], *dv[3] = {&d[0], &d[1], &d[2]};
        V1beta1__TopologyInfo t0 = V1BETA1__TOPOLOGY_INFO__INIT, t2 = V1BETA1__TOPOLOGY_INFO__INIT;
        V1beta1__NUMANode n0 = V1BETA1__NUMANODE__INIT, n1 = V1BETA1__NUMANODE__INIT;
        V1beta1__NUMANode *nv[2] = {&n0, &n1};
        ncm__dp_snapshot s = {0};
        ncm_error err = NCM_ERROR_INIT;
        size_t len;
        uint8_t *b;
        (void)state;

        for (int i = 0; i < 3; i++)
                v1beta1__device__init(&d[i]);
        n0.id = 0;
        n1.id = 1;
        t0.n_nodes = 2;
        t0.nodes = nv;
        d[0].id = "g0";
        d[0].health = "Healthy";
        d[0].topology = &t0;
        d[1].id = "g1";
        d[1].health = "Unhealthy";
        d[2].id = "g2";
        d[2].health = "";
        d[2].topology = &t2; /* a TopologyInfo without nodes */
        lw.n_devices = 3;
        lw.devices = dv;
        b = pack_msg(&lw.base, &len);
        assert_int_equal(ncm__dp_snapshot_decode(b, len, &s, &err), 0);
        assert_int_equal(s.n, 3);
        assert_string_equal(s.devices[0].id, "g0");
        assert_true(s.devices[0].topology);
        assert_int_equal(s.devices[0].n_numa, 2);
        assert_int_equal(s.devices[0].numa[1], 1);
        assert_string_equal(s.devices[1].health, "Unhealthy");
        assert_false(s.devices[1].topology);
        assert_true(s.devices[2].topology);
        assert_int_equal(s.devices[2].n_numa, 0);
        ncm__dp_snapshot_done(&s);
        free(b);

        /* an empty snapshot is one: no devices */
        assert_int_equal(ncm__dp_snapshot_decode(NULL, 0, &s, &err), 0);
        assert_int_equal(s.n, 0);
        ncm__dp_snapshot_done(&s);

        d[1].id = "g\xc3\x28";
        b = pack_msg(&lw.base, &len);
        assert_int_equal(ncm__dp_snapshot_decode(b, len, &s, &err), -EINVAL);
        assert_string_equal(err.msg, "grpc: failed to unmarshal the received message: string "
                                     "field contains invalid UTF-8");
        free(b);
        {
                static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
                assert_int_equal(ncm__dp_snapshot_decode(garbage, sizeof(garbage), &s, &err),
                                 -EINVAL);
                assert_string_equal(err.msg, "grpc: failed to unmarshal the received message: "
                                             "proto: cannot parse invalid wire-format data");
        }
}

static void test_deviceplugin_answers(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_devmgr_plugin_options o;
        char **ids = NULL;
        size_t n = 0, len;
        uint8_t *b;
        (void)state;

        {
                V1beta1__DevicePluginOptions m = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
                m.get_preferred_allocation_available = true;
                b = pack_msg(&m.base, &len);
                assert_int_equal(ncm__dp_options_decode(b, len, &o, &err), 0);
                assert_false(o.pre_start_required);
                assert_true(o.get_preferred_allocation_available);
                free(b);
        }
        {
                V1beta1__PreferredAllocationResponse m =
                                V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
                V1beta1__ContainerPreferredAllocationResponse c0 =
                                V1BETA1__CONTAINER_PREFERRED_ALLOCATION_RESPONSE__INIT;
                V1beta1__ContainerPreferredAllocationResponse *cv[1] = {&c0};
                char *pick[] = {"g3", "g1"};
                c0.n_deviceids = 2;
                c0.deviceids = pick;
                m.n_container_responses = 1;
                m.container_responses = cv;
                b = pack_msg(&m.base, &len);
                assert_int_equal(ncm__dp_preferred_decode(b, len, &ids, &n, &err), 0);
                assert_int_equal(n, 2);
                assert_string_equal(ids[0], "g3");
                assert_string_equal(ids[1], "g1");
                for (size_t i = 0; i < n; i++)
                        free(ids[i]);
                free(ids);
                free(b);
                /* no container response: no preference (the kubelet would panic) */
                assert_int_equal(ncm__dp_preferred_decode(NULL, 0, &ids, &n, &err), 0);
                assert_null(ids);
                assert_int_equal(n, 0);
        }
        {
                V1beta1__AllocateResponse m = V1BETA1__ALLOCATE_RESPONSE__INIT;
                V1beta1__ContainerAllocateResponse c0 = V1BETA1__CONTAINER_ALLOCATE_RESPONSE__INIT,
                                                   c1 = V1BETA1__CONTAINER_ALLOCATE_RESPONSE__INIT;
                V1beta1__ContainerAllocateResponse *cv[2] = {&c0, &c1};
                V1beta1__ContainerAllocateResponse__EnvsEntry e0 =
                                V1BETA1__CONTAINER_ALLOCATE_RESPONSE__ENVS_ENTRY__INIT;
                V1beta1__ContainerAllocateResponse__EnvsEntry *ev[1] = {&e0};
                V1beta1__CDIDevice cdi = V1BETA1__CDIDEVICE__INIT;
                V1beta1__CDIDevice *cdv[1] = {&cdi};
                ncm_devmgr_alloc_resp *r = NULL;

                e0.key = "A";
                e0.value = "first";
                c0.n_envs = 1;
                c0.envs = ev;
                cdi.name = "vendor.com/gpu=second";
                c1.n_cdi_devices = 1;
                c1.cdi_devices = cdv;
                m.n_container_responses = 2;
                m.container_responses = cv;
                b = pack_msg(&m.base, &len);
                /* the kubelet sends one container request and reads container_responses[0] */
                assert_int_equal(ncm__dp_allocate_decode(b, len, &r, &err), 0);
                assert_non_null(r);
                assert_int_equal(r->n_envs, 1);
                assert_string_equal(r->envs[0].value, "first");
                assert_int_equal(r->n_cdi_devices, 0);
                r = ncm_devmgr_alloc_resp_free(r);
                free(b);
                assert_int_equal(ncm__dp_allocate_decode(NULL, 0, &r, &err), 0);
                assert_null(r);
                e0.value = "\xff";
                b = pack_msg(&m.base, &len);
                assert_int_equal(ncm__dp_allocate_decode(b, len, &r, &err), -EINVAL);
                assert_string_equal(err.msg, "grpc: failed to unmarshal the received message: "
                                             "string field contains invalid UTF-8");
                free(b);
        }
}

static void test_deviceplugin_requests(void **state)
{
        const char *ids[] = {"a", "b"};
        uint8_t *b = NULL;
        size_t len = 0;
        (void)state;

        assert_int_equal(ncm__dp_allocate_request(ids, 2, &b, &len), 0);
        {
                V1beta1__AllocateRequest *m = v1beta1__allocate_request__unpack(NULL, len, b);
                assert_non_null(m);
                assert_int_equal(m->n_container_requests, 1);
                assert_int_equal(m->container_requests[0]->n_devices_ids, 2);
                assert_string_equal(m->container_requests[0]->devices_ids[1], "b");
                v1beta1__allocate_request__free_unpacked(m, NULL);
        }
        free(b);
        assert_int_equal(ncm__dp_preferred_request(ids, 2, ids, 1, 2, &b, &len), 0);
        {
                V1beta1__PreferredAllocationRequest *m =
                                v1beta1__preferred_allocation_request__unpack(NULL, len, b);
                assert_non_null(m);
                assert_int_equal(m->n_container_requests, 1);
                assert_int_equal(m->container_requests[0]->n_available_deviceids, 2);
                assert_int_equal(m->container_requests[0]->n_must_include_deviceids, 1);
                assert_int_equal(m->container_requests[0]->allocation_size, 2);
                v1beta1__preferred_allocation_request__free_unpacked(m, NULL);
        }
        free(b);
        assert_int_equal(ncm__dp_pre_start_request(ids, 1, &b, &len), 0);
        /* field 1, length 1, "a" */
        assert_int_equal(len, 3);
        assert_memory_equal(b,
                            "\x0a\x01"
                            "a",
                            3);
        free(b);
}

static void test_deviceplugin_go_errors(void **state)
{
        ncm_buf b = NCM_BUF_INIT;
        (void)state;

        assert_string_equal(ncm__dp_go_code(NCM_RPC_CANCELLED), "Canceled");
        assert_string_equal(ncm__dp_go_code(NCM_RPC_DEADLINE_EXCEEDED), "DeadlineExceeded");
        assert_string_equal(ncm__dp_go_code(99), "Unknown");
        ncm__dp_rpc_error(&b, NCM_RPC_UNKNOWN, "boom", true);
        assert_string_equal(b.data, "rpc error: code = Unknown desc = boom");
        ncm_buf_reset(&b);
        ncm__dp_rpc_error(&b, NCM_RPC_DEADLINE_EXCEEDED, "Deadline Exceeded", true);
        assert_string_equal(b.data, "rpc error: code = DeadlineExceeded desc = context deadline "
                                    "exceeded");
        ncm_buf_done(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_deviceplugin_register_checks),
                        cmocka_unit_test(test_deviceplugin_snapshot),
                        cmocka_unit_test(test_deviceplugin_answers),
                        cmocka_unit_test(test_deviceplugin_requests),
                        cmocka_unit_test(test_deviceplugin_go_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
