/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device topology hints: the kubelet's topology_hints_test.go tables (container scope and pod
 * scope, getCommonTestCases + getPodScopeTestCases), TestGetPodDeviceRequest, and the rules
 * the tables leave implicit (reusable devices, unhealthy devices in the preferred size,
 * devices on several nodes, no NUMA information).
 *
 * kubelet's tables use names such as "testdevice" that are not extended resource names;
 * nodecm only treats extended names as device resources, so they get a domain here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/devicemanager.h>
#include "testutil.h"

#define MAXD 8

typedef struct tdev {
        const char *id;
        int numa; /* -1: no topology; -2: topology with no nodes */
} tdev;

typedef struct tres {
        const char *name;
        tdev devs[MAXD];
} tres;

typedef struct talloc {
        const char *pod, *container, *resource;
        const char *ids[MAXD];
} talloc;

typedef struct tcont {
        const char *name;
        ncm_devmgr_container_type type;
        ncm_devmgr_resource res[3];
} tcont;

typedef struct tcase {
        const char *description;
        tcont init[2];
        tcont app[3];
        tres devices[2];
        talloc allocated[2];
        const char *expect[2][2]; /* resource, rendered hints */
} tcase;

/*
 * The table cases whose hints differ from kubelet 1.37 on (kubernetes PR #138244 walks only
 * the NUMA nodes of the resource's devices): description, resource, hints. The others have
 * devices on both nodes of the tables' machine and do not change.
 */
static const struct {
        const char *description, *resource, *hints;
} since137[] = {
                /* no device reports node 0 */
                {"Single Request, only one with alignment", "example.com/testdevice", "[{1} T]"},
                /* testdevice2's one device is on node 0 */
                {"2 device types, mixed configuration", "example.com/testdevice2", "[{0} T]"},
                /* both devices of the resource are on node 0 */
                {"Single device type, all already allocated to container", "example.com/testdevice",
                 "[{0} T]"},
};

/* The generations the tables run under: the last one before PR #138244, and the default. */
static const ncm_kubelet_version gens[] = {{1, 36}, {0, 0}};

#define R1 "example.com/testdevice1"
#define R2 "example.com/testdevice2"
#define RT "example.com/testdevice"
#define NR "example.com/notRegistered"
#define LIM(n, c)                                                                                  \
        {                                                                                          \
                n, c, NCM_DEVMGR_UNSET                                                             \
        }

/* Render hints as "[{0} T, {0,1} F]", "[]" (cannot be satisfied) or "nil". */
static char *render(const ncm_hint_list *l)
{
        ncm_buf b = NCM_BUF_INIT;
        if (l->nil) {
                ncm_buf_puts(&b, "nil");
                return ncm_buf_steal(&b);
        }
        ncm_buf_putc(&b, '[');
        for (size_t i = 0; i < l->n; i++) {
                int bits[64], n = ncm_bitmask_to_bits(l->hints[i].numa, bits);
                ncm_buf_puts(&b, i ? ", {" : "{");
                for (int k = 0; k < n; k++)
                        ncm_buf_printf(&b, k ? ",%d" : "%d", bits[k]);
                ncm_buf_puts(&b, l->hints[i].preferred ? "} T" : "} F");
        }
        ncm_buf_putc(&b, ']');
        return ncm_buf_steal(&b);
}

/* ---- the pods source: the test's pod and, for pod scope, "fakeOtherPod" ---- */

typedef struct pods {
        const char *uids[2];
        size_t n;
} pods;

static int active_pods(void *data, const char *const **ret, size_t *ret_n)
{
        pods *p = data;
        *ret = p->uids;
        *ret_n = p->n;
        return 0;
}

static ncm_devmgr *setup(const tcase *tc, pods *ps, const int *numa, size_t n_numa,
                         ncm_kubelet_version v)
{
        ncm_devmgr_pods_source src = {active_pods, NULL, NULL, ps};
        ncm_devmgr_config cfg = {.numa_nodes = numa,
                                 .n_numa_nodes = n_numa,
                                 .pods = &src,
                                 .kubelet_version = v};
        ncm_devmgr *m = NULL;
        ncm_error err = NCM_ERROR_INIT;

        assert_int_equal(ncm_devmgr_new(&cfg, &m, &err), 0);
        /* Devices already allocated come in through a checkpoint, as after a restart. */
        if (tc->allocated[0].pod) {
                ncm_devmgr_checkpoint cp = {0};
                ncm_devmgr_checkpoint_entry e[2];
                ncm_devmgr_numa_ids ids[2];
                size_t n = 0;
                for (; n < 2 && tc->allocated[n].pod; n++) {
                        size_t k = 0;
                        while (k < MAXD && tc->allocated[n].ids[k])
                                k++;
                        ids[n] = (ncm_devmgr_numa_ids){0, false, (char **)tc->allocated[n].ids, k};
                        e[n] = (ncm_devmgr_checkpoint_entry){(char *)tc->allocated[n].pod,
                                                             (char *)tc->allocated[n].container,
                                                             (char *)tc->allocated[n].resource,
                                                             false,
                                                             &ids[n],
                                                             1,
                                                             false,
                                                             (unsigned char *)"",
                                                             0};
                }
                cp.entries = e;
                cp.n_entries = n;
                assert_int_equal(ncm_devmgr_restore(m, &cp, NULL, &err), 0);
        }
        for (size_t r = 0; r < 2 && tc->devices[r].name; r++) {
                ncm_devmgr_device devs[MAXD];
                int64_t nodes[MAXD];
                uint64_t ep = 0;
                size_t n = 0;
                for (; n < MAXD && tc->devices[r].devs[n].id; n++) {
                        int nn = tc->devices[r].devs[n].numa;
                        nodes[n] = nn;
                        devs[n] = (ncm_devmgr_device){tc->devices[r].devs[n].id, "Healthy",
                                                      nn != -1, &nodes[n], nn >= 0 ? 1 : 0};
                }
                assert_int_equal(ncm_devmgr_plugin_connect(m, tc->devices[r].name,
                                                           &ncm_devmgr_standin_ops, NULL, NULL, &ep,
                                                           &err),
                                 0);
                assert_int_equal(ncm_devmgr_update_devices(m, tc->devices[r].name, ep, devs, n,
                                                           &err),
                                 0);
        }
        return m;
}

static size_t count_res(const tcont *c)
{
        size_t n = 0;
        while (n < 3 && c->res[n].name)
                n++;
        return n;
}

static void check(const tcase *tc, const ncm_devmgr_hints *h, ncm_kubelet_version v)
{
        size_t expected = 0;
        for (size_t i = 0; i < 2 && tc->expect[i][0]; i++) {
                const ncm_devmgr_resource_hints *got = NULL;
                const char *want = tc->expect[i][1];
                char *s;
                for (size_t k = 0; k < NCM_ELEMENTSOF(since137); k++)
                        if (ncm_kubelet_version_at_least(v, 1, 37) &&
                            strcmp(since137[k].description, tc->description) == 0 &&
                            strcmp(since137[k].resource, tc->expect[i][0]) == 0)
                                want = since137[k].hints;
                expected++;
                for (size_t k = 0; k < h->n; k++)
                        if (strcmp(h->v[k].resource, tc->expect[i][0]) == 0)
                                got = &h->v[k];
                if (!got)
                        fail_msg("%s: no hints for %s", tc->description, tc->expect[i][0]);
                s = render(&got->hints);
                if (strcmp(s, want) != 0)
                        fail_msg("%s: kubelet %d.%d: %s: expected %s, got %s", tc->description,
                                 v.major, v.minor, tc->expect[i][0], want, s);
                free(s);
        }
        /* Only device resources get an entry (notRegistered has none). */
        assert_int_equal(h->n, expected);
}

static const tcase common_cases[] = {
                {"Single Request, no alignment",
                 {{0}},
                 {{"fakeContainer", 0, {LIM(RT, 1)}}},
                 {{RT, {{"Dev1", -1}, {"Dev2", -1}, {"Dev3", -2}, {"Dev4", -2}}}},
                 {{0}},
                 {{RT, "nil"}}},
                {"Single Request, only one with alignment",
                 {{0}},
                 {{"fakeContainer", 0, {LIM(RT, 1)}}},
                 {{RT, {{"Dev1", -1}, {"Dev2", 1}}}},
                 {{0}},
                 {{RT, "[{1} T, {0,1} F]"}}},
                {"Single Request, one device per socket",
                 {{0}},
                 {{"fakeContainer", 0, {LIM(RT, 1)}}},
                 {{RT, {{"Dev1", 0}, {"Dev2", 1}}}},
                 {{0}},
                 {{RT, "[{0} T, {1} T, {0,1} F]"}}},
                {"Request for 2, one device per socket",
                 {{0}},
                 {{"fakeContainer", 0, {LIM(RT, 2)}}},
                 {{RT, {{"Dev1", 0}, {"Dev2", 1}}}},
                 {{0}},
                 {{RT, "[{0,1} T]"}}},
                {"Request for 2, 2 devices per socket",
                 {{0}},
                 {{"fakeContainer", 0, {LIM(RT, 2)}}},
                 {{RT, {{"Dev1", 0}, {"Dev2", 1}, {"Dev3", 0}, {"Dev4", 1}}}},
                 {{0}},
                 {{RT, "[{0} T, {1} T, {0,1} F]"}}},
                {"Request for 2, optimal on 1 NUMA node, forced cross-NUMA",
                 {{0}},
                 {{"fakeContainer", 0, {LIM(RT, 2)}}},
                 {{RT, {{"Dev1", 0}, {"Dev2", 1}, {"Dev3", 0}, {"Dev4", 1}}}},
                 {{"fakePod", "fakeOtherContainer", RT, {"Dev1", "Dev2"}}},
                 {{RT, "[{0,1} F]"}}},
                {"2 device types, mixed configuration",
                 {{0}},
                 {{"fakeContainer", 0, {LIM(R1, 2), LIM(R2, 1)}}},
                 {{R1, {{"Dev1", 0}, {"Dev2", 1}, {"Dev3", 0}, {"Dev4", 1}}}, {R2, {{"Dev1", 0}}}},
                 {{0}},
                 {{R1, "[{0} T, {1} T, {0,1} F]"}, {R2, "[{0} T, {0,1} F]"}}},
                {"Single device type, more requested than available",
                 {{0}},
                 {{"fakeContainer", 0, {LIM(RT, 6)}}},
                 {{RT, {{"Dev1", 0}, {"Dev2", 0}, {"Dev3", 1}, {"Dev4", 1}}}},
                 {{0}},
                 {{RT, "[]"}}},
                {"Single device type, all already allocated to container",
                 {{0}},
                 {{"fakeContainer", 0, {LIM(RT, 2)}}},
                 {{RT, {{"Dev1", 0}, {"Dev2", 0}}}},
                 {{"fakePod", "fakeContainer", RT, {"Dev1", "Dev2"}}},
                 {{RT, "[{0} T, {0,1} F]"}}},
                {"Single device type, less already allocated to container than requested",
                 {{0}},
                 {{"fakeContainer", 0, {LIM(RT, 4)}}},
                 {{RT, {{"Dev1", 0}, {"Dev2", 0}, {"Dev3", 1}, {"Dev4", 1}}}},
                 {{"fakePod", "fakeContainer", RT, {"Dev1", "Dev2"}}},
                 {{RT, "[]"}}},
                {"Single device type, more already allocated to container than requested",
                 {{0}},
                 {{"fakeContainer", 0, {LIM(RT, 2)}}},
                 {{RT, {{"Dev1", 0}, {"Dev2", 0}, {"Dev3", 1}, {"Dev4", 1}}}},
                 {{"fakePod", "fakeContainer", RT, {"Dev1", "Dev2", "Dev3", "Dev4"}}},
                 {{RT, "[]"}}},
};

static const tcase pod_scope_cases[] = {
                {"2 device types, user container only",
                 {{0}},
                 {{"fakeContainer1", 0, {LIM(R1, 2)}},
                  {"fakeContainer2", 0, {LIM(R2, 2)}},
                  {"fakeContainer3", 0, {LIM(NR, 2)}}},
                 {{R1, {{"Dev1", 0}, {"Dev2", 0}, {"Dev3", 1}, {"Dev4", 1}}},
                  {R2, {{"Dev1", 0}, {"Dev2", 0}, {"Dev3", 1}, {"Dev4", 1}}}},
                 {{0}},
                 {{R1, "[{0} T, {1} T, {0,1} F]"}, {R2, "[{0} T, {1} T, {0,1} F]"}}},
                {"2 device types, request resources for init containers and user container",
                 {{"init0", NCM_DEVMGR_INIT_CONTAINER, {LIM(R1, 1), LIM(R2, 1)}},
                  {"init1", NCM_DEVMGR_INIT_CONTAINER, {LIM(R1, 1), LIM(R2, 2)}}},
                 {{"fakeContainer1", 0, {LIM(R1, 1), LIM(R2, 1)}},
                  {"fakeContainer2", 0, {LIM(R1, 1), LIM(R2, 1)}},
                  {"fakeContainer3", 0, {LIM(NR, 1)}}},
                 {{R1, {{"Dev1", 0}, {"Dev2", 0}, {"Dev3", 1}, {"Dev4", 1}}},
                  {R2, {{"Dev1", 0}, {"Dev2", 0}, {"Dev3", 1}, {"Dev4", 1}}}},
                 {{0}},
                 {{R1, "[{0} T, {1} T, {0,1} F]"}, {R2, "[{0} T, {1} T, {0,1} F]"}}},
                {"2 device types, user container only, optimal on 1 NUMA node, forced cross-NUMA",
                 {{0}},
                 {{"fakeContainer1", 0, {LIM(R1, 1), LIM(R2, 1)}},
                  {"fakeContainer2", 0, {LIM(R1, 1), LIM(R2, 1)}},
                  {"fakeContainer3", 0, {LIM(NR, 1)}}},
                 {{R1, {{"Dev1", 0}, {"Dev2", 0}, {"Dev3", 1}, {"Dev4", 1}}},
                  {R2, {{"Dev1", 0}, {"Dev2", 0}, {"Dev3", 1}, {"Dev4", 1}}}},
                 {{"fakeOtherPod", "fakeOtherContainer", R1, {"Dev1", "Dev3"}},
                  {"fakeOtherPod", "fakeOtherContainer", R2, {"Dev1", "Dev3"}}},
                 {{R1, "[{0,1} F]"}, {R2, "[{0,1} F]"}}},
};

static const int two_nodes[] = {0, 1};

static void test_device_hints_container_scope_table(void **state)
{
        (void)state;
        for (size_t i = 0; i < 2 * NCM_ELEMENTSOF(common_cases); i++) {
                const tcase *tc = &common_cases[i / 2];
                pods ps = {{"fakePod"}, 1};
                ncm_kubelet_version v = gens[i % 2];
                ncm_devmgr *m = setup(tc, &ps, two_nodes, 2, v);
                ncm_devmgr_hints h = NCM_DEVMGR_HINTS_INIT;
                ncm_error err = NCM_ERROR_INIT;
                ncm_devmgr_container c = {tc->app[0].name, tc->app[0].type, tc->app[0].res,
                                          count_res(&tc->app[0])};
                assert_int_equal(ncm_devmgr_container_hints(m, "fakePod", &c, &h, &err), 0);
                check(tc, &h, v);
                ncm_devmgr_hints_done(&h);
                ncm_devmgr_free(m);
        }
}

static void pod_of(const tcase *tc, ncm_devmgr_container *ic, size_t *ni, ncm_devmgr_container *ac,
                   size_t *na)
{
        *ni = *na = 0;
        for (size_t k = 0; k < 2 && tc->init[k].name; k++)
                ic[(*ni)++] = (ncm_devmgr_container){tc->init[k].name, tc->init[k].type,
                                                     tc->init[k].res, count_res(&tc->init[k])};
        for (size_t k = 0; k < 3 && tc->app[k].name; k++)
                ac[(*na)++] = (ncm_devmgr_container){tc->app[k].name, tc->app[k].type,
                                                     tc->app[k].res, count_res(&tc->app[k])};
}

static void test_device_hints_pod_scope_table(void **state)
{
        (void)state;
        for (int set = 0; set < 2; set++) {
                const tcase *cases = set ? pod_scope_cases : common_cases;
                size_t n = set ? NCM_ELEMENTSOF(pod_scope_cases) : NCM_ELEMENTSOF(common_cases);
                for (size_t i = 0; i < 2 * n; i++) {
                        const tcase *tc = &cases[i / 2];
                        pods ps = {{"fakePod", "fakeOtherPod"}, 2};
                        ncm_kubelet_version v = gens[i % 2];
                        ncm_devmgr *m = setup(tc, &ps, two_nodes, 2, v);
                        ncm_devmgr_hints h = NCM_DEVMGR_HINTS_INIT;
                        ncm_error err = NCM_ERROR_INIT;
                        ncm_devmgr_container ic[2], ac[3];
                        ncm_devmgr_pod pod = {"fakePod", ic, 0, ac, 0};
                        pod_of(tc, ic, &pod.n_init_containers, ac, &pod.n_containers);
                        assert_int_equal(ncm_devmgr_pod_hints(m, &pod, &h, &err), 0);
                        check(tc, &h, v);
                        ncm_devmgr_hints_done(&h);
                        ncm_devmgr_free(m);
                }
        }
}

/* TestGetPodDeviceRequest: the pod-level counts (component-helpers PodLimits). */
static void test_device_hints_pod_device_request_table(void **state)
{
        static const struct {
                const char *description;
                tcont init[2];
                tcont app[2];
                int64_t gpu, nic; /* expected; NCM_DEVMGR_UNSET: absent */
        } cases[] = {
                        {"empty pod", {{0}}, {{0}}, NCM_DEVMGR_UNSET, NCM_DEVMGR_UNSET},
                        {"Init container requests device plugin resource",
                         {{"i0", NCM_DEVMGR_INIT_CONTAINER, {LIM("cpu", 2), LIM("gpu", 2)}}},
                         {{0}},
                         2,
                         NCM_DEVMGR_UNSET},
                        {"Init containers request device plugin resource",
                         {{"i0", NCM_DEVMGR_INIT_CONTAINER, {LIM("gpu", 2)}},
                          {"i1", NCM_DEVMGR_INIT_CONTAINER, {LIM("gpu", 4)}}},
                         {{0}},
                         4,
                         NCM_DEVMGR_UNSET},
                        {"User container requests device plugin resource",
                         {{0}},
                         {{"a0", 0, {LIM("gpu", 2)}}},
                         2,
                         NCM_DEVMGR_UNSET},
                        {"Init containers and user containers request the same amount of device "
                         "plugin "
                         "resources",
                         {{"i0", NCM_DEVMGR_INIT_CONTAINER, {LIM("gpu", 2), LIM("nic", 2)}},
                          {"i1", NCM_DEVMGR_INIT_CONTAINER, {LIM("gpu", 2), LIM("nic", 2)}}},
                         {{"a0", 0, {LIM("gpu", 1), LIM("nic", 1)}},
                          {"a1", 0, {LIM("gpu", 1), LIM("nic", 1)}}},
                         2,
                         2},
                        {"Init containers request more device plugin resources than user "
                         "containers",
                         {{"i0", NCM_DEVMGR_INIT_CONTAINER, {LIM("gpu", 2), LIM("nic", 1)}},
                          {"i1", NCM_DEVMGR_INIT_CONTAINER, {LIM("gpu", 3), LIM("nic", 2)}}},
                         {{"a0", 0, {LIM("gpu", 1), LIM("nic", 1)}}, {"a1", 0, {LIM("gpu", 1)}}},
                         3,
                         2},
                        {"User containers request more device plugin resources than init "
                         "containers",
                         {{"i0", NCM_DEVMGR_INIT_CONTAINER, {LIM("gpu", 2), LIM("nic", 1)}},
                          {"i1", NCM_DEVMGR_INIT_CONTAINER, {LIM("gpu", 2), LIM("nic", 1)}}},
                         {{"a0", 0, {LIM("gpu", 3), LIM("nic", 2)}},
                          {"a1", 0, {LIM("gpu", 3), LIM("nic", 2)}}},
                         6,
                         4},
                        /* Sidecars (not in the kubelet table): they add up, and count for the init
                         * containers started after them. */
                        {"sidecar before a regular init container",
                         {{"s0", NCM_DEVMGR_SIDECAR_CONTAINER, {LIM("gpu", 1)}},
                          {"i1", NCM_DEVMGR_INIT_CONTAINER, {LIM("gpu", 3)}}},
                         {{"a0", 0, {LIM("gpu", 1)}}},
                         4,
                         NCM_DEVMGR_UNSET},
                        {"sidecar after the regular init container",
                         {{"i0", NCM_DEVMGR_INIT_CONTAINER, {LIM("gpu", 3)}},
                          {"s1", NCM_DEVMGR_SIDECAR_CONTAINER, {LIM("gpu", 1)}}},
                         {{"a0", 0, {LIM("gpu", 1)}}},
                         3,
                         NCM_DEVMGR_UNSET},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_devmgr_container ic[2], ac[2];
                ncm_devmgr_pod pod = {"p", ic, 0, ac, 0};
                for (size_t k = 0; k < 2 && cases[i].init[k].name; k++)
                        ic[pod.n_init_containers++] = (ncm_devmgr_container){
                                        cases[i].init[k].name, cases[i].init[k].type,
                                        cases[i].init[k].res, count_res(&cases[i].init[k])};
                for (size_t k = 0; k < 2 && cases[i].app[k].name; k++)
                        ac[pod.n_containers++] = (ncm_devmgr_container){
                                        cases[i].app[k].name, cases[i].app[k].type,
                                        cases[i].app[k].res, count_res(&cases[i].app[k])};
                if (ncm_devmgr_pod_limit(&pod, "gpu") != cases[i].gpu ||
                    ncm_devmgr_pod_limit(&pod, "nic") != cases[i].nic)
                        fail_msg("%s: got gpu %" PRId64 " nic %" PRId64, cases[i].description,
                                 ncm_devmgr_pod_limit(&pod, "gpu"),
                                 ncm_devmgr_pod_limit(&pod, "nic"));
        }
}

/* ---- rules the tables leave implicit ---- */

static char *one_hint(ncm_devmgr *m, const char *pod, const char *cname,
                      ncm_devmgr_container_type type, const char *res, int64_t count)
{
        ncm_devmgr_resource rr[] = {{res, count, NCM_DEVMGR_UNSET}};
        ncm_devmgr_container c = {cname, type, rr, 1};
        ncm_devmgr_hints h = NCM_DEVMGR_HINTS_INIT;
        ncm_error err = NCM_ERROR_INIT;
        char *s;
        assert_int_equal(ncm_devmgr_container_hints(m, pod, &c, &h, &err), 0);
        assert_int_equal(h.n, 1);
        s = render(&h.v[0].hints);
        ncm_devmgr_hints_done(&h);
        return s;
}

static ncm_devmgr *simple_v(const int *numa, size_t n_numa, const ncm_devmgr_device *devs, size_t n,
                            ncm_kubelet_version v)
{
        ncm_devmgr_config cfg = {.numa_nodes = numa, .n_numa_nodes = n_numa, .kubelet_version = v};
        ncm_devmgr *m = NULL;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t ep;
        assert_int_equal(ncm_devmgr_new(&cfg, &m, &err), 0);
        assert_int_equal(ncm_devmgr_plugin_connect(m, RT, &ncm_devmgr_standin_ops, NULL, NULL, &ep,
                                                   &err),
                         0);
        assert_int_equal(ncm_devmgr_update_devices(m, RT, ep, devs, n, &err), 0);
        return m;
}

static ncm_devmgr *simple(const int *numa, size_t n_numa, const ncm_devmgr_device *devs, size_t n)
{
        return simple_v(numa, n_numa, devs, n, NCM_KUBELET_VERSION_DEFAULT);
}

#define expect_hints(m, pod, c, type, res, count, want)                                            \
        do {                                                                                       \
                char *s_ = one_hint(m, pod, c, type, res, count);                                  \
                assert_string_equal(s_, want);                                                     \
                free(s_);                                                                          \
        } while (0)

static const int64_t N0[] = {0}, N1[] = {1}, N01[] = {0, 1}, N99[] = {99}, NM3[] = {-3};

static void test_device_hints_reusable_devices(void **state)
{
        const ncm_devmgr_device devs[] = {{"Dev1", "Healthy", true, N0, 1},
                                          {"Dev2", "Healthy", true, N0, 1},
                                          {"Dev3", "Healthy", true, N1, 1},
                                          {"Dev4", "Healthy", true, N1, 1},
                                          {"Dev5", "Healthy", false, NULL, 0}};
        ncm_devmgr *m = simple(two_nodes, 2, devs, NCM_ELEMENTSOF(devs));
        ncm_devmgr_resource one[] = {{RT, 1, NCM_DEVMGR_UNSET}};
        ncm_devmgr_container init = {"init", NCM_DEVMGR_INIT_CONTAINER, one, 1};
        ncm_hint aff = {(ncm_bitmask)1 << 1, false, true};
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        /* The init container gets Dev3 (NUMA 1); its device is reusable by the app containers
         * of the same pod: every hint must hold it. */
        assert_int_equal(ncm_devmgr_allocate(m, "p", &init, &aff, &err), 0);
        expect_hints(m, "p", "app", NCM_DEVMGR_APP_CONTAINER, RT, 2, "[{1} T, {0,1} F]");
        /* Another pod has nothing to reuse, and Dev3 is in use. */
        expect_hints(m, "q", "app", NCM_DEVMGR_APP_CONTAINER, RT, 2, "[{0} T, {0,1} F]");
        ncm_devmgr_free(m);
}

static void test_device_hints_preferred_size_counts_every_device(void **state)
{
        /* NUMA 0 has two devices, one unhealthy: it still makes a single node "big enough",
         * so {1} is preferred and {0} is not offered at all. */
        const ncm_devmgr_device devs[] = {{"Dev1", "Healthy", true, N0, 1},
                                          {"Dev2", "Unhealthy", true, N0, 1},
                                          {"Dev3", "Healthy", true, N1, 1},
                                          {"Dev4", "Healthy", true, N1, 1}};
        ncm_devmgr *m = simple(two_nodes, 2, devs, NCM_ELEMENTSOF(devs));
        (void)state;
        expect_hints(m, "p", "c", NCM_DEVMGR_APP_CONTAINER, RT, 2, "[{1} T, {0,1} F]");
        expect_hints(m, "p", "c", NCM_DEVMGR_APP_CONTAINER, RT, 4, "[]");
        ncm_devmgr_free(m);
}

static void test_device_hints_multi_node_and_odd_ids(void **state)
{
        const ncm_devmgr_device devs[] = {{"Dev1", "Healthy", true, N01, 2},
                                          {"Dev2", "Healthy", true, N99, 1},
                                          {"Dev3", "Healthy", true, NM3, 1}};
        static const int four[] = {0, 1, 2, 3};
        ncm_devmgr *m = simple(two_nodes, 2, devs, NCM_ELEMENTSOF(devs));
        (void)state;

        /* Dev1 is on both nodes; nodes 99 and -3 match no mask. */
        expect_hints(m, "p", "c", NCM_DEVMGR_APP_CONTAINER, RT, 1, "[{0} T, {1} T, {0,1} F]");
        expect_hints(m, "p", "c", NCM_DEVMGR_APP_CONTAINER, RT, 2, "[]");
        /* A request of 0 fits everywhere; single nodes are the smallest. */
        expect_hints(m, "p", "c", NCM_DEVMGR_APP_CONTAINER, RT, 0, "[{0} T, {1} T, {0,1} F]");
        ncm_devmgr_free(m);

        /* Four nodes: subsets by size, then lexicographically. Since 1.37 nodes 2 and 3,
         * which no device reports, are not walked. */
        {
                const ncm_devmgr_device d4[] = {{"a", "Healthy", true, N0, 1},
                                                {"b", "Healthy", true, N1, 1}};
                m = simple_v(four, 4, d4, 2, (ncm_kubelet_version){1, 36});
                expect_hints(m, "p", "c", NCM_DEVMGR_APP_CONTAINER, RT, 2,
                             "[{0,1} T, {0,1,2} F, {0,1,3} F, {0,1,2,3} F]");
                ncm_devmgr_free(m);
                m = simple(four, 4, d4, 2);
                expect_hints(m, "p", "c", NCM_DEVMGR_APP_CONTAINER, RT, 2, "[{0,1} T]");
                ncm_devmgr_free(m);
        }
        /* No NUMA information on the machine: no mask at all, so nothing fits. */
        m = simple(NULL, 0, devs, NCM_ELEMENTSOF(devs));
        expect_hints(m, "p", "c", NCM_DEVMGR_APP_CONTAINER, RT, 1, "[]");
        ncm_devmgr_free(m);
}

static void test_device_hints_unknown_and_non_device_resources(void **state)
{
        const ncm_devmgr_device devs[] = {{"Dev1", "Healthy", true, N0, 1}};
        ncm_devmgr *m = simple(two_nodes, 2, devs, 1);
        ncm_devmgr_resource rr[] = {
                        {"cpu", 2, 2}, {"example.com/unknown", 1, NCM_DEVMGR_UNSET}, {RT, 1, 1}};
        ncm_devmgr_container c = {"c", NCM_DEVMGR_APP_CONTAINER, rr, 3};
        ncm_devmgr_hints h = NCM_DEVMGR_HINTS_INIT;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(ncm_devmgr_container_hints(m, "p", &c, &h, &err), 0);
        assert_int_equal(h.n, 1);
        assert_string_equal(h.v[0].resource, RT);
        ncm_devmgr_hints_done(&h);
        /* An invalid container is refused. */
        rr[2].request = 2;
        assert_int_equal(ncm_devmgr_container_hints(m, "p", &c, &h, &err), -EINVAL);
        assert_int_equal(h.n, 0);
        ncm_devmgr_free(m);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_device_hints_container_scope_table),
                        cmocka_unit_test(test_device_hints_pod_scope_table),
                        cmocka_unit_test(test_device_hints_pod_device_request_table),
                        cmocka_unit_test(test_device_hints_reusable_devices),
                        cmocka_unit_test(test_device_hints_preferred_size_counts_every_device),
                        cmocka_unit_test(test_device_hints_multi_node_and_odd_ids),
                        cmocka_unit_test(test_device_hints_unknown_and_non_device_resources),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
