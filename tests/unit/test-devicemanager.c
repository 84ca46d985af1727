/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device manager: resource names, the registry (snapshots, health, capacity, the grace
 * period with a fake clock, plugin instances), allocation (the kubelet's manager_test.go and
 * topology_hints_test.go allocation tables: TestPodContainerDeviceAllocation,
 * TestPodContainerDeviceToAllocate, TestInitContainerDeviceAllocation,
 * TestRestartableInitContainerDeviceAllocation, TestTopologyAlignedAllocation,
 * TestGetPreferredAllocationParameters, TestFilterByAffinity, TestDevicePreStartContainer,
 * TestGetDeviceRunContainerOptions, TestUpdateCapacityAllocatable,
 * TestEndpointSyncOnDisconnect), errors that change nothing, release, and property tests
 * over random registries and pods.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/devicemanager.h>
#include <nodecm/fs.h>
#include "testutil.h"

#define R1 "domain1.com/resource1"
#define R2 "domain2.com/resource2"
#define R3 "domain2.com/resource3"
#define UNSET NCM_DEVMGR_UNSET

/* ---- a fake clock ---- */

static int64_t fake_now(void *data)
{
        return *(int64_t *)data;
}

/* ---- a scriptable plugin ---- */

typedef enum stub_kind {
        STUB_EMPTY = 0, /* an empty ContainerAllocateResponse */
        STUB_KUBELET,   /* kubelet's allocateStubFunc (dev1, dev2) */
        STUB_RES2,      /* kubelet's resource2 stub (dev3, dev4 -> env key2) */
} stub_kind;

typedef struct tplug {
        stub_kind kind;
        int allocate_calls;
        int fail_allocate; /* -errno to return */
        bool no_response;
        const char *const *preferred; /* what GetPreferredAllocation answers */
        size_t n_preferred;
        int pref_calls;
        char **avail, **must;
        size_t n_avail, n_must;
        int32_t size;
        int prestart_calls;
        char **prestart;
        size_t n_prestart;
        int released;
} tplug;

static char **copy_ids(const char *const *ids, size_t n)
{
        char **v = calloc(n + 1, sizeof(*v));
        for (size_t i = 0; i < n; i++)
                v[i] = strdup(ids[i]);
        return v;
}

static void free_ids(char **v)
{
        ncm_devmgr_strv_free(v);
}

static void tplug_done(tplug *p)
{
        free_ids(p->avail);
        free_ids(p->must);
        free_ids(p->prestart);
        p->avail = p->must = p->prestart = NULL;
}

static int tp_allocate(void *data, const char *resource, const char *const *ids, size_t n,
                       ncm_devmgr_alloc_resp **ret, ncm_error *err)
{
        tplug *p = data;
        ncm_devmgr_alloc_resp *r;
        (void)resource;
        p->allocate_calls++;
        if (p->fail_allocate)
                return ncm_error_set(err, -p->fail_allocate,
                                     "rpc error: code = Unknown desc = allocation refused");
        if (p->no_response) {
                *ret = NULL;
                return 0;
        }
        r = ncm_devmgr_alloc_resp_new();
        for (size_t i = 0; i < n; i++) {
                if (p->kind == STUB_KUBELET && strcmp(ids[i], "dev1") == 0) {
                        ncm_devmgr_alloc_resp_add_device(r, "/dev/aaa", "/dev/aaa", "mrw");
                        ncm_devmgr_alloc_resp_add_device(r, "/dev/bbb", "/dev/bbb", "mrw");
                        ncm_devmgr_alloc_resp_add_mount(r, "/container_dir1/file1",
                                                        "host_dir1/file1", true);
                } else if (p->kind == STUB_KUBELET && strcmp(ids[i], "dev2") == 0) {
                        ncm_devmgr_alloc_resp_add_device(r, "/dev/ccc", "/dev/ccc", "mrw");
                        ncm_devmgr_alloc_resp_add_mount(r, "/container_dir1/file2",
                                                        "host_dir1/file2", true);
                        ncm_devmgr_alloc_resp_add_env(r, "key1", "val1");
                } else if (p->kind == STUB_RES2 && strcmp(ids[i], "dev3") == 0) {
                        ncm_devmgr_alloc_resp_add_env(r, "key2", "val2");
                } else if (p->kind == STUB_RES2 && strcmp(ids[i], "dev4") == 0) {
                        ncm_devmgr_alloc_resp_add_env(r, "key2", "val3");
                }
        }
        *ret = r;
        return 0;
}

static int tp_preferred(void *data, const char *resource, const char *const *available,
                        size_t n_available, const char *const *must_include, size_t n_must_include,
                        int32_t size, char ***ret, size_t *ret_n, ncm_error *err)
{
        tplug *p = data;
        (void)resource;
        (void)err;
        p->pref_calls++;
        free_ids(p->avail);
        free_ids(p->must);
        p->avail = copy_ids(available, n_available);
        p->n_avail = n_available;
        p->must = copy_ids(must_include, n_must_include);
        p->n_must = n_must_include;
        p->size = size;
        *ret = p->n_preferred ? copy_ids(p->preferred, p->n_preferred) : NULL;
        *ret_n = p->n_preferred;
        return 0;
}

static int tp_prestart(void *data, const char *resource, const char *const *ids, size_t n,
                       ncm_error *err)
{
        tplug *p = data;
        (void)resource;
        (void)err;
        p->prestart_calls++;
        free_ids(p->prestart);
        p->prestart = copy_ids(ids, n);
        p->n_prestart = n;
        return 0;
}

static void tp_release(void *data)
{
        ((tplug *)data)->released++;
}

static const ncm_devmgr_plugin_ops tp_ops = {"test", tp_allocate, tp_preferred, tp_prestart,
                                             tp_release};

/* ---- helpers ---- */

typedef struct tdev {
        const char *id;
        int numa; /* -1: no topology */
        const char *health;
} tdev;

static uint64_t connect(ncm_devmgr *m, const char *res, tplug *p, bool preferred, bool prestart)
{
        ncm_devmgr_plugin_options o = {prestart, preferred};
        ncm_error err = NCM_ERROR_INIT;
        uint64_t ep = 0;
        assert_int_equal(ncm_devmgr_plugin_connect(m, res, &tp_ops, p, &o, &ep, &err), 0);
        return ep;
}

static void update(ncm_devmgr *m, const char *res, uint64_t ep, const tdev *d, size_t n)
{
        ncm_devmgr_device *devs = calloc(n ? n : 1, sizeof(*devs));
        int64_t *nodes = calloc(n ? n : 1, sizeof(*nodes));
        ncm_error err = NCM_ERROR_INIT;
        for (size_t i = 0; i < n; i++) {
                nodes[i] = d[i].numa;
                devs[i] = (ncm_devmgr_device){d[i].id, d[i].health ? d[i].health : "Healthy",
                                              d[i].numa >= 0, &nodes[i], d[i].numa >= 0 ? 1 : 0};
        }
        if (ncm_devmgr_update_devices(m, res, ep, devs, n, &err) < 0)
                fail_msg("update %s: %s", res, err.msg);
        free(devs);
        free(nodes);
}

static ncm_devmgr *new_manager(const int *numa, size_t n_numa, int64_t *clock)
{
        ncm_devmgr_config cfg = {.numa_nodes = numa,
                                 .n_numa_nodes = n_numa,
                                 .now = clock ? fake_now : NULL,
                                 .now_data = clock};
        ncm_devmgr *m = NULL;
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_devmgr_new(&cfg, &m, &err), 0);
        return m;
}

static size_t in_use(const ncm_devmgr *m, const char *res)
{
        char **v = NULL;
        size_t n = 0;
        if (ncm_devmgr_allocated_devices(m, res, &v, &n) < 0)
                return 0;
        free_ids(v);
        return n;
}

/* The devices (pod, container) holds for RES, as "a,b,c" (malloc'd), "" when none. */
static char *held(const ncm_devmgr *m, const char *pod, const char *cont, const char *res)
{
        ncm_devmgr_assignment *a = NULL;
        ncm_buf b = NCM_BUF_INIT;
        size_t n = 0;
        assert_int_equal(ncm_devmgr_container_devices(m, pod, cont, &a, &n), 0);
        for (size_t i = 0; i < n; i++)
                if (strcmp(a[i].resource, res) == 0)
                        for (size_t k = 0; k < a[i].n_ids; k++)
                                ncm_buf_printf(&b, k ? ",%s" : "%s", a[i].ids[k]);
        ncm_devmgr_assignments_free(a, n);
        if (!b.data)
                return strdup("");
        return ncm_buf_steal(&b);
}

static size_t count_csv(const char *s)
{
        size_t n = *s ? 1 : 0;
        for (; *s; s++)
                n += *s == ',';
        return n;
}

/* true if every device of the csv A is in the csv B. */
static bool csv_subset(const char *a, const char *b)
{
        char *copy = strdup(a), *save = NULL;
        bool ok = true;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                size_t l = strlen(t);
                const char *p = b;
                bool found = false;
                while ((p = strstr(p, t))) {
                        if ((p == b || p[-1] == ',') && (p[l] == ',' || p[l] == '\0')) {
                                found = true;
                                break;
                        }
                        p++;
                }
                ok = ok && found;
        }
        free(copy);
        return ok;
}

static bool csv_disjoint(const char *a, const char *b)
{
        char *copy = strdup(a), *save = NULL;
        bool ok = true;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
                if (csv_subset(t, b))
                        ok = false;
        free(copy);
        return ok;
}

static char *snapshot(const ncm_devmgr *m)
{
        ncm_devmgr_checkpoint *cp = NULL;
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_devmgr_to_checkpoint(m, &cp, &err), 0);
        ncm_devmgr_checkpoint_format(cp, &b);
        ncm_devmgr_checkpoint_free(cp);
        return ncm_buf_steal(&b);
}

static int alloc1(ncm_devmgr *m, const char *pod, const char *cont, ncm_devmgr_container_type type,
                  const char *res, int64_t count, const ncm_hint *aff, ncm_error *err)
{
        ncm_devmgr_resource rr[] = {{res, count, UNSET}};
        ncm_devmgr_container c = {cont, type, rr, 1};
        return ncm_devmgr_allocate(m, pod, &c, aff, err);
}

static ncm_hint mask_hint(int a, int b)
{
        ncm_hint h = {0, false, true};
        if (a >= 0)
                h.numa |= (ncm_bitmask)1 << a;
        if (b >= 0)
                h.numa |= (ncm_bitmask)1 << b;
        return h;
}

/* ---- resource names ---- */

static void test_devicemanager_resource_names(void **state)
{
        static const char *const good[] = {
                        "example.com/gpu",
                        "nvidia.com/gpu",
                        "a/b",
                        "domain1.com/resource1",
                        "fake-domain/resource",
                        "vendor.com/GPU_x.1",
                        "x.y/Z",
                        "a.b/123456789012345678901234567890123456789012345678901234567890123"};
        static const char *const bad[] = {
                        "gpu",
                        "kubernetes.io/gpu",
                        "foo.kubernetes.io/x",
                        "requests.example.com/gpu",
                        "a/b/c",
                        "Example.com/gpu",
                        "example.com/-gpu",
                        "example.com/gpu-",
                        "example.com/",
                        "/gpu",
                        "ex_ample.com/gpu",
                        "-example.com/gpu",
                        "example..com/gpu",
                        "cpu",
                        "hugepages-2Mi",
                        "",
                        "a.b/1234567890123456789012345678901234567890123456789012345678901234"};
        char prefix[300];
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        for (size_t i = 0; i < NCM_ELEMENTSOF(good); i++)
                if (!ncm_devmgr_is_extended_resource_name(good[i]))
                        fail_msg("%s should be valid", good[i]);
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++)
                if (ncm_devmgr_is_extended_resource_name(bad[i]))
                        fail_msg("%s should be invalid", bad[i]);
        assert_false(ncm_devmgr_is_extended_resource_name(NULL));
        /* "requests." + the prefix must stay within 253 characters. */
        memset(prefix, 'a', 244);
        strcpy(prefix + 244, "/x");
        assert_true(ncm_devmgr_is_extended_resource_name(prefix));
        memset(prefix, 'a', 245);
        strcpy(prefix + 245, "/x");
        assert_false(ncm_devmgr_is_extended_resource_name(prefix));

        assert_int_equal(ncm_devmgr_validate_resource_name("gpu", &err), -EINVAL);
        assert_string_equal(err.msg, "the ResourceName \"gpu\" is invalid");
        assert_int_equal(ncm_devmgr_validate_resource_name("a\"b/c", &err), -EINVAL);
        assert_string_equal(err.msg, "the ResourceName \"a\\\"b/c\" is invalid");
        assert_int_equal(ncm_devmgr_validate_resource_name("example.com/gpu", &err), 0);
}

/* ---- registry, capacity, grace period ---- */

static void expect_capacity(ncm_devmgr *m, const char *res, int64_t cap, int64_t alloc,
                            size_t n_deleted)
{
        ncm_devmgr_capacity c = {0};
        ncm_error err = NCM_ERROR_INIT;
        bool found = false;
        assert_int_equal(ncm_devmgr_get_capacity(m, &c, &err), 0);
        for (size_t i = 0; i < c.n_entries; i++)
                if (strcmp(c.entries[i].resource, res) == 0) {
                        found = true;
                        if (c.entries[i].capacity != cap || c.entries[i].allocatable != alloc)
                                fail_msg("%s: capacity %" PRId64 "/%" PRId64 ", expected %" PRId64
                                         "/%" PRId64,
                                         res, c.entries[i].capacity, c.entries[i].allocatable, cap,
                                         alloc);
                }
        if (cap >= 0 && !found)
                fail_msg("%s missing from capacity", res);
        if (cap < 0 && found)
                fail_msg("%s should not be in capacity", res);
        assert_int_equal(c.n_deleted, n_deleted);
        ncm_devmgr_capacity_done(&c);
}

/* TestUpdateCapacityAllocatable, with a fake clock instead of a back-dated stop time. */
static void test_devicemanager_capacity_allocatable(void **state)
{
        int64_t clock = 1000;
        ncm_devmgr *m = new_manager(NULL, 0, &clock), *m2;
        tplug p1 = {0}, p2 = {0};
        tdev devs[] = {{"Device1", -1, "Healthy"},
                       {"Device2", -1, "Healthy"},
                       {"Device3", -1, "Unhealthy"}};
        ncm_devmgr_capacity c = {0};
        ncm_error err = NCM_ERROR_INIT;
        uint64_t e1, e2;
        char *dir = tu_mkdtemp(), *path;
        (void)state;

        e1 = connect(m, R1, &p1, false, false);
        update(m, R1, e1, devs, 3);
        expect_capacity(m, R1, 3, 2, 0);
        /* Deleting an unhealthy device changes capacity, not allocatable. */
        update(m, R1, e1, devs, 2);
        expect_capacity(m, R1, 2, 2, 0);
        /* A healthy device turning unhealthy reduces allocatable. */
        devs[1].health = "Unhealthy";
        update(m, R1, e1, devs, 3);
        expect_capacity(m, R1, 3, 1, 0);
        /* Deleting a healthy device reduces both. */
        update(m, R1, e1, devs + 1, 2);
        expect_capacity(m, R1, 2, 0, 0);
        /* Another resource. */
        e2 = connect(m, R2, &p2, false, false);
        update(m, R2, e2, devs, 3);
        assert_int_equal(ncm_devmgr_get_capacity(m, &c, &err), 0);
        assert_int_equal(c.n_entries, 2);
        ncm_devmgr_capacity_done(&c);
        expect_capacity(m, R2, 3, 1, 0);

        /* R1's plugin goes away: everything unhealthy at once, capacity stays... */
        assert_int_equal(ncm_devmgr_plugin_disconnect(m, R1, e1), 1);
        expect_capacity(m, R1, 2, 0, 0);
        /* ... through exactly the grace period ... */
        clock += NCM_DEVMGR_STOP_GRACE_NS;
        expect_capacity(m, R1, 2, 0, 0);
        /* ... and is dropped after it. */
        clock += 1;
        assert_int_equal(ncm_devmgr_get_capacity(m, &c, &err), 0);
        assert_int_equal(c.n_deleted, 1);
        assert_string_equal(c.deleted[0], R1);
        assert_int_equal(c.n_entries, 1);
        assert_string_equal(c.entries[0].resource, R2);
        assert_int_equal(c.entries[0].capacity, 3);
        ncm_devmgr_capacity_done(&c);
        assert_int_equal(p1.released, 1);
        assert_false(ncm_devmgr_is_device_resource(m, R1));
        expect_capacity(m, R1, -1, -1, 0);

        /* R2 stopped: capacity 3, allocatable 0, nothing removed. */
        assert_int_equal(ncm_devmgr_plugin_disconnect(m, R2, e2), 1);
        expect_capacity(m, R2, 3, 0, 0);

        /* Written and read back: R2 gets a stopped endpoint, capacity 0, and is still a
         * device plugin resource. */
        assert_int_equal(asprintf(&path, "%s/kubelet_internal_checkpoint", dir) > 0, 1);
        assert_int_equal(ncm_devmgr_write_checkpoint(m, AT_FDCWD, path, &err), 0);
        m2 = new_manager(NULL, 0, &clock);
        assert_int_equal(ncm_devmgr_load_checkpoint(m2, AT_FDCWD, path, &err), 1);
        expect_capacity(m2, R2, 0, 0, 0);
        assert_true(ncm_devmgr_is_device_resource(m2, R2));
        /* ... and dropped when its plugin never comes back. */
        clock += NCM_DEVMGR_STOP_GRACE_NS + 1;
        expect_capacity(m2, R2, -1, -1, 1);
        assert_false(ncm_devmgr_is_device_resource(m2, R2));

        ncm_devmgr_free(m2);
        ncm_devmgr_free(m);
        assert_int_equal(p2.released, 1);
        free(path);
        tu_rm_rf(dir);
        free(dir);
}

/* TestEndpointSyncOnDisconnect and the healthy-device lists (GetAllocatableDevices). */
static void test_devicemanager_disconnect_and_health(void **state)
{
        int64_t clock = 0;
        ncm_devmgr *m = new_manager(NULL, 0, &clock);
        tplug p = {0};
        tdev devs[] = {{"Device1", -1, "Healthy"},
                       {"Device2", -1, "Healthy"},
                       {"Device3", -1, "Unhealthy"}};
        tdev odd[] = {{"a", -1, "healthy"}, {"b", -1, ""}, {"c", -1, "Healthy "}};
        char **v = NULL;
        size_t n = 0;
        uint64_t ep;
        (void)state;

        ep = connect(m, R1, &p, false, false);
        update(m, R1, ep, devs, 3);
        assert_int_equal(ncm_devmgr_healthy_devices(m, R1, &v, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(v[0], "Device1");
        assert_string_equal(v[1], "Device2");
        assert_null(v[2]);
        free_ids(v);
        /* Unhealthy becomes healthy. */
        devs[2].health = "Healthy";
        update(m, R1, ep, devs, 3);
        assert_int_equal(ncm_devmgr_healthy_devices(m, R1, &v, &n), 0);
        assert_int_equal(n, 3);
        free_ids(v);
        /* Only the exact string "Healthy" is healthy. */
        update(m, R1, ep, odd, 3);
        assert_int_equal(ncm_devmgr_healthy_devices(m, R1, &v, &n), 0);
        assert_int_equal(n, 0);
        free_ids(v);
        expect_capacity(m, R1, 3, 0, 0);

        update(m, R1, ep, devs, 3);
        assert_int_equal(ncm_devmgr_plugin_disconnect(m, R1, ep), 1);
        expect_capacity(m, R1, 3, 0, 0);
        clock += 2 * NCM_DEVMGR_STOP_GRACE_NS;
        expect_capacity(m, R1, -1, -1, 1);
        assert_int_equal(ncm_devmgr_healthy_devices(m, R1, &v, &n), -ENOENT);
        ncm_devmgr_free(m);
}

static void test_devicemanager_plugin_instances(void **state)
{
        ncm_devmgr *m = new_manager(NULL, 0, NULL);
        tplug old = {0}, fresh = {0};
        tdev a[] = {{"Dev1", -1, NULL}, {"Dev2", -1, NULL}}, b[] = {{"Dev3", -1, NULL}};
        ncm_error err = NCM_ERROR_INIT;
        ncm_devmgr_device dev = {"x", "Healthy", false, NULL, 0};
        uint64_t e1, e2;
        char *before;
        (void)state;

        e1 = connect(m, R1, &old, false, false);
        update(m, R1, e1, a, 2);
        /* A re-registration replaces the endpoint, devices stay until its first snapshot. */
        e2 = connect(m, R1, &fresh, false, false);
        assert_true(e2 != e1);
        assert_int_equal(old.released, 1);
        expect_capacity(m, R1, 2, 2, 0);
        update(m, R1, e2, b, 1);
        expect_capacity(m, R1, 1, 1, 0);
        /* The old instance's late disconnect and updates change nothing. */
        before = snapshot(m);
        assert_int_equal(ncm_devmgr_plugin_disconnect(m, R1, e1), 0);
        assert_int_equal(ncm_devmgr_update_devices(m, R1, e1, &dev, 1, &err), -ESTALE);
        assert_non_null(strstr(err.msg, "no longer registered"));
        assert_int_equal(ncm_devmgr_plugin_disconnect(m, "example.com/none", e2), 0);
        expect_capacity(m, R1, 1, 1, 0);
        {
                char *after = snapshot(m);
                assert_string_equal(before, after);
                free(after);
        }
        free(before);
        /* Bad resource names are refused everywhere. */
        assert_int_equal(ncm_devmgr_plugin_connect(m, "gpu", &tp_ops, &old, NULL, NULL, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "the ResourceName \"gpu\" is invalid");
        assert_int_equal(ncm_devmgr_update_devices(m, "gpu", 0, &dev, 1, &err), -EINVAL);
        ncm_devmgr_free(m);
        assert_int_equal(fresh.released, 1);
        assert_int_equal(old.released, 1);
}

static void test_devicemanager_duplicate_ids_rejected(void **state)
{
        ncm_devmgr *m = new_manager(NULL, 0, NULL);
        tplug p = {0};
        tdev a[] = {{"Dev1", -1, NULL}, {"Dev2", -1, NULL}};
        tdev dup[] = {{"Dev9", -1, NULL}, {"Dev1", 0, "Unhealthy"}, {"Dev1", -1, NULL}};
        ncm_devmgr_device devs[3], noid = {NULL, "Healthy", false, NULL, 0};
        ncm_error err = NCM_ERROR_INIT;
        uint64_t ep;
        char *before, *after;
        (void)state;

        ep = connect(m, R1, &p, false, false);
        update(m, R1, ep, a, 2);
        before = snapshot(m);
        for (size_t i = 0; i < 3; i++)
                devs[i] = (ncm_devmgr_device){dup[i].id, "Healthy", false, NULL, 0};
        assert_int_equal(ncm_devmgr_update_devices(m, R1, ep, devs, 3, &err), -EINVAL);
        assert_string_equal(err.msg,
                            "resource " R1 ": duplicate device ID \"Dev1\" in plugin update");
        assert_int_equal(ncm_devmgr_update_devices(m, R1, ep, &noid, 1, &err), -EINVAL);
        after = snapshot(m);
        assert_string_equal(before, after);
        expect_capacity(m, R1, 2, 2, 0);
        free(before);
        free(after);
        ncm_devmgr_free(m);
}

/* ---- allocation: the kubelet's tables ---- */

/* TestPodContainerDeviceAllocation + TestGetDeviceRunContainerOptions' counts. */
static void test_devicemanager_pod_container_allocation(void **state)
{
        static const int numa[] = {0};
        ncm_devmgr *m = new_manager(numa, 1, NULL);
        tplug p1 = {.kind = STUB_KUBELET}, p2 = {.kind = STUB_RES2};
        tdev d1[] = {{"dev1", 0, NULL}, {"dev2", 0, NULL}};
        tdev d2[] = {{"dev3", -1, NULL}, {"dev4", -1, NULL}};
        ncm_devmgr_resource pod0[] = {{R1, 2, UNSET}, {"cpu", 2, UNSET}, {R2, 1, UNSET}};
        ncm_devmgr_resource pod1[] = {{R1, 1, UNSET}};
        ncm_devmgr_resource pod2[] = {{R2, 1, UNSET}};
        ncm_devmgr_container c0 = {"c", 0, pod0, 3}, c1 = {"c", 0, pod1, 1}, c2 = {"c", 0, pod2, 1};
        ncm_devmgr_alloc_resp *o = NULL;
        ncm_error err = NCM_ERROR_INIT;
        char *before;
        (void)state;

        update(m, R1, connect(m, R1, &p1, false, false), d1, 2);
        update(m, R2, connect(m, R2, &p2, false, false), d2, 2);

        /* Two of resource1 and one of resource2. */
        assert_int_equal(ncm_devmgr_allocate(m, "pod0", &c0, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_run_options(m, "pod0", &c0, NULL, &o, &err), 0);
        assert_int_equal(o->n_devices, 3);
        assert_int_equal(o->n_mounts, 2);
        assert_int_equal(o->n_envs, 2);
        ncm_devmgr_alloc_resp_free(o);
        assert_int_equal(in_use(m, R1), 2);
        assert_int_equal(in_use(m, R2), 1);

        /* Not enough resource1 left: the kubelet's error, nothing changes. */
        before = snapshot(m);
        assert_int_equal(ncm_devmgr_allocate(m, "pod1", &c1, NULL, &err), -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "requested number of devices unavailable for "
                                     "domain1.com/resource1. Requested: 1, Available: 0");
        {
                char *after = snapshot(m);
                assert_string_equal(before, after);
                free(after);
        }
        free(before);
        assert_int_equal(ncm_devmgr_run_options(m, "pod1", &c1, NULL, &o, &err),
                         -NCM_E_UNSATISFIABLE);
        assert_int_equal(in_use(m, R1), 2);
        assert_int_equal(in_use(m, R2), 1);

        /* The last resource2. */
        assert_int_equal(ncm_devmgr_allocate(m, "pod2", &c2, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_run_options(m, "pod2", &c2, NULL, &o, &err), 0);
        assert_int_equal(o->n_devices, 0);
        assert_int_equal(o->n_mounts, 0);
        assert_int_equal(o->n_envs, 1);
        ncm_devmgr_alloc_resp_free(o);
        assert_int_equal(in_use(m, R1), 2);
        assert_int_equal(in_use(m, R2), 2);
        {
                char *h = held(m, "pod2", "c", R2);
                assert_string_equal(h, "dev4");
                free(h);
        }
        ncm_devmgr_free(m);
}

/* TestGetDeviceRunContainerOptions: a pod that leaves the active list has no options. */
typedef struct pods {
        const char *uids[4];
        size_t n;
        bool ready;
        const char *running_pod, *running_container;
} pods;

static int active_pods(void *data, const char *const **ret, size_t *ret_n)
{
        pods *p = data;
        *ret = p->uids;
        *ret_n = p->n;
        return 0;
}

static bool sources_ready(void *data)
{
        return ((pods *)data)->ready;
}

static bool container_running(void *data, const char *pod, const char *container)
{
        pods *p = data;
        return p->running_pod && strcmp(p->running_pod, pod) == 0 &&
               strcmp(p->running_container, container) == 0;
}

static ncm_devmgr *manager_with_pods(pods *ps, const int *numa, size_t n_numa)
{
        ncm_devmgr_pods_source src = {active_pods, sources_ready, container_running, ps};
        ncm_devmgr_config cfg = {.numa_nodes = numa, .n_numa_nodes = n_numa, .pods = &src};
        ncm_devmgr *m = NULL;
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_devmgr_new(&cfg, &m, &err), 0);
        return m;
}

static void test_devicemanager_run_options_follow_active_pods(void **state)
{
        static const int numa[] = {0};
        pods ps = {{"pod1", "pod2"}, 2, true, NULL, NULL};
        ncm_devmgr *m = manager_with_pods(&ps, numa, 1);
        tplug p1 = {.kind = STUB_KUBELET}, p2 = {.kind = STUB_RES2};
        tdev d1[] = {{"dev1", 0, NULL}, {"dev2", 0, NULL}};
        tdev d2[] = {{"dev3", -1, NULL}, {"dev4", -1, NULL}};
        ncm_devmgr_resource r1[] = {{R1, 2, UNSET}, {R2, 1, UNSET}}, r2[] = {{R2, 1, UNSET}};
        ncm_devmgr_container c1 = {"c", 0, r1, 2}, c2 = {"c", 0, r2, 1};
        ncm_devmgr_alloc_resp *o = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        update(m, R1, connect(m, R1, &p1, false, false), d1, 2);
        update(m, R2, connect(m, R2, &p2, false, false), d2, 2);
        assert_int_equal(ncm_devmgr_allocate(m, "pod1", &c1, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_allocate(m, "pod2", &c2, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_run_options(m, "pod1", &c1, NULL, &o, &err), 0);
        assert_int_equal(o->n_devices, 3);
        assert_int_equal(o->n_mounts, 2);
        assert_int_equal(o->n_envs, 2);
        ncm_devmgr_alloc_resp_free(o);

        /* pod1 is no longer active: its devices are collected, no options, no error. */
        ps.uids[0] = "pod2";
        ps.n = 1;
        assert_int_equal(ncm_devmgr_update_allocated(m, ps.uids, ps.n), 1);
        assert_int_equal(ncm_devmgr_run_options(m, "pod1", &c1, NULL, &o, &err), 0);
        assert_null(o);
        assert_int_equal(in_use(m, R1), 0);
        assert_int_equal(in_use(m, R2), 1);
        ncm_devmgr_free(m);
}

/* TestPodContainerDeviceToAllocate: the error checks before anything is taken. */
static void test_devicemanager_devices_to_allocate_errors(void **state)
{
        ncm_devmgr *m = new_manager(NULL, 0, NULL);
        tplug p = {0};
        static char *ids12[] = {"dev1", "dev2", NULL}, *ids5[] = {"dev5", NULL};
        ncm_devmgr_numa_ids n12 = {0, false, ids12, 2}, n5 = {-1, false, ids5, 1};
        ncm_devmgr_checkpoint_entry e[] = {
                        {"pod1", "con1", R1, false, &n12, 1, false, (unsigned char *)"", 0},
                        {"pod2", "con2", R2, false, &n5, 1, false, (unsigned char *)"", 0},
                        {"pod3", "con3", R3, false, &n5, 1, false, (unsigned char *)"", 0}};
        ncm_devmgr_checkpoint cp = {false, e, 3, false, NULL, 0, 0};
        tdev d3[] = {{"dev7", -1, NULL}, {"dev8", -1, NULL}};
        ncm_error err = NCM_ERROR_INIT;
        char *before, *after;
        (void)state;

        assert_int_equal(ncm_devmgr_restore(m, &cp, NULL, &err), 0);
        /* resource1: registered, no healthy device; resource2 never registered; resource3's
         * previously allocated dev5 is gone. */
        update(m, R1, connect(m, R1, &p, false, false), NULL, 0);
        update(m, R3, connect(m, R3, &p, false, false), d3, 2);
        before = snapshot(m);

        assert_int_equal(alloc1(m, "pod1", "con1", 0, R1, 2, NULL, &err), -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "no healthy devices present; cannot allocate unhealthy "
                                     "devices domain1.com/resource1");
        assert_int_equal(alloc1(m, "pod2", "con2", 0, R2, 1, NULL, &err), -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "cannot allocate unregistered device domain2.com/resource2");
        assert_int_equal(alloc1(m, "pod3", "con3", 0, R3, 1, NULL, &err), -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "previously allocated devices are no longer healthy; cannot "
                                     "allocate unhealthy devices domain2.com/resource3");
        /* A container whose request changed since its devices were given. */
        assert_int_equal(alloc1(m, "pod1", "con1", 0, R1, 3, NULL, &err), -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "pod \"pod1\" container \"con1\" changed request for "
                                     "resource \"domain1.com/resource1\" from 2 to 3");
        assert_int_equal(p.allocate_calls, 0);
        after = snapshot(m);
        assert_string_equal(before, after);
        free(before);
        free(after);
        ncm_devmgr_free(m);
}

static void test_devicemanager_container_restart_keeps_devices(void **state)
{
        ncm_devmgr *m = new_manager(NULL, 0, NULL);
        tplug p = {0};
        tdev d[] = {{"a", -1, NULL}, {"b", -1, NULL}, {"c", -1, NULL}};
        ncm_error err = NCM_ERROR_INIT;
        char *h1, *h2;
        (void)state;

        update(m, R1, connect(m, R1, &p, false, false), d, 3);
        assert_int_equal(alloc1(m, "p", "c", 0, R1, 2, NULL, &err), 0);
        assert_int_equal(p.allocate_calls, 1);
        h1 = held(m, "p", "c", R1);
        /* The same request again (a restarted container): no plugin call, same devices. */
        assert_int_equal(alloc1(m, "p", "c", 0, R1, 2, NULL, &err), 0);
        assert_int_equal(p.allocate_calls, 1);
        h2 = held(m, "p", "c", R1);
        assert_string_equal(h1, "a,b");
        assert_string_equal(h1, h2);
        free(h1);
        free(h2);
        ncm_devmgr_free(m);
}

/* After a kubelet restart, a running container gets nothing new while sources are not
 * ready (no plugin call). */
static void test_devicemanager_restart_running_container(void **state)
{
        pods ps = {{"p"}, 1, false, "p", "c"};
        ncm_devmgr *m = manager_with_pods(&ps, NULL, 0);
        tplug p = {0};
        tdev d[] = {{"a", -1, NULL}};
        ncm_error err = NCM_ERROR_INIT;
        char *h;
        (void)state;

        update(m, R1, connect(m, R1, &p, false, false), d, 1);
        assert_int_equal(alloc1(m, "p", "c", 0, R1, 1, NULL, &err), 0);
        assert_int_equal(p.allocate_calls, 0);
        h = held(m, "p", "c", R1);
        assert_string_equal(h, "");
        free(h);
        /* Another container is allocated normally. */
        assert_int_equal(alloc1(m, "p", "d", 0, R1, 1, NULL, &err), 0);
        assert_int_equal(p.allocate_calls, 1);
        ncm_devmgr_free(m);
}

/* TestInitContainerDeviceAllocation. */
static void test_devicemanager_init_container_reuse(void **state)
{
        ncm_devmgr *m = new_manager(NULL, 0, NULL);
        tplug p1 = {.kind = STUB_KUBELET}, p2 = {.kind = STUB_RES2};
        tdev d1[] = {{"dev1", -1, NULL}, {"dev2", -1, NULL}};
        tdev d2[] = {{"dev3", 0, NULL}, {"dev4", 0, NULL}};
        ncm_devmgr_resource i1[] = {{R1, 1, UNSET}}, i2[] = {{R1, 2, UNSET}};
        ncm_devmgr_resource a[] = {{R1, 1, UNSET}, {R2, 1, UNSET}};
        ncm_devmgr_container ci1 = {"init1", NCM_DEVMGR_INIT_CONTAINER, i1, 1},
                             ci2 = {"init2", NCM_DEVMGR_INIT_CONTAINER, i2, 1},
                             ca1 = {"app1", 0, a, 2}, ca2 = {"app2", 0, a, 2};
        ncm_error err = NCM_ERROR_INIT;
        char *h_i1, *h_i2, *h_a1, *h_a2;
        (void)state;

        update(m, R1, connect(m, R1, &p1, false, false), d1, 2);
        update(m, R2, connect(m, R2, &p2, false, false), d2, 2);
        assert_int_equal(ncm_devmgr_allocate(m, "pod", &ci1, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_allocate(m, "pod", &ci2, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_allocate(m, "pod", &ca1, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_allocate(m, "pod", &ca2, NULL, &err), 0);
        h_i1 = held(m, "pod", "init1", R1);
        h_i2 = held(m, "pod", "init2", R1);
        h_a1 = held(m, "pod", "app1", R1);
        h_a2 = held(m, "pod", "app2", R1);
        assert_int_equal(count_csv(h_i1), 1);
        assert_int_equal(count_csv(h_i2), 2);
        assert_int_equal(count_csv(h_a1), 1);
        assert_int_equal(count_csv(h_a2), 1);
        assert_true(csv_subset(h_i1, h_i2));
        assert_true(csv_subset(h_a1, h_i2));
        assert_true(csv_subset(h_a2, h_i2));
        assert_true(csv_disjoint(h_a1, h_a2));
        /* Only two devices exist, yet five requests were met. */
        assert_int_equal(in_use(m, R1), 2);
        free(h_i1);
        free(h_i2);
        free(h_a1);
        free(h_a2);
        ncm_devmgr_free(m);
}

/* TestRestartableInitContainerDeviceAllocation: sidecars keep their devices. */
static void test_devicemanager_sidecars_do_not_donate(void **state)
{
        ncm_devmgr *m = new_manager(NULL, 0, NULL);
        tplug p = {0};
        tdev d[] = {{"dev1", -1, NULL}, {"dev2", -1, NULL}, {"dev3", -1, NULL},
                    {"dev4", -1, NULL}, {"dev5", -1, NULL}, {"dev6", -1, NULL}};
        ncm_error err = NCM_ERROR_INIT;
        char *reg, *s2, *s3, *a1, *a2;
        (void)state;

        update(m, R1, connect(m, R1, &p, false, false), d, 6);
        assert_int_equal(alloc1(m, "pod", "regular", NCM_DEVMGR_INIT_CONTAINER, R1, 3, NULL, &err),
                         0);
        assert_int_equal(alloc1(m, "pod", "sidecar2", NCM_DEVMGR_SIDECAR_CONTAINER, R1, 1, NULL,
                                &err),
                         0);
        assert_int_equal(alloc1(m, "pod", "sidecar3", NCM_DEVMGR_SIDECAR_CONTAINER, R1, 2, NULL,
                                &err),
                         0);
        assert_int_equal(alloc1(m, "pod", "app1", 0, R1, 1, NULL, &err), 0);
        assert_int_equal(alloc1(m, "pod", "app2", 0, R1, 2, NULL, &err), 0);
        reg = held(m, "pod", "regular", R1);
        s2 = held(m, "pod", "sidecar2", R1);
        s3 = held(m, "pod", "sidecar3", R1);
        a1 = held(m, "pod", "app1", R1);
        a2 = held(m, "pod", "app2", R1);
        assert_int_equal(count_csv(reg), 3);
        assert_int_equal(count_csv(s2), 1);
        assert_int_equal(count_csv(s3), 2);
        assert_int_equal(count_csv(a1), 1);
        assert_int_equal(count_csv(a2), 2);
        assert_true(csv_subset(s2, reg));
        assert_true(csv_subset(s3, reg));
        {
                const char *ded[] = {s2, s3, a1, a2};
                for (size_t i = 0; i < 4; i++)
                        for (size_t k = i + 1; k < 4; k++)
                                assert_true(csv_disjoint(ded[i], ded[k]));
        }
        free(reg);
        free(s2);
        free(s3);
        free(a1);
        free(a2);
        ncm_devmgr_free(m);
}

/* TestTopologyAlignedAllocation. */
typedef struct align_case {
        const char *description;
        int request;
        int n_devs;
        int numa_of[8]; /* per device Dev<i+1> in the short cases; -1: no topology */
        ncm_hint hint;
        int big; /* 0: short list; 1: Dev0-99 on 0, Dev100-199 on 1; 2: 100 on 1;
                    3: Dev0-2 on 0, Dev3-99 on 1 */
        const char *preferred[5];
        const char *expected_preferred[5];
        int align[4]; /* expected count per NUMA node 0..3 */
} align_case;

static void test_devicemanager_topology_aligned_allocation(void **state)
{
        static const int numa4[] = {0, 1, 2, 3};
        const align_case cases[] = {
                        {"Single Request, no alignment",
                         1,
                         2,
                         {-1, -1},
                         mask_hint(0, 1),
                         0,
                         {NULL},
                         {NULL},
                         {0}},
                        {"Request for 1, partial alignment",
                         1,
                         2,
                         {-1, 1},
                         mask_hint(1, -1),
                         0,
                         {NULL},
                         {NULL},
                         {0, 1}},
                        {"Single Request, socket 0",
                         1,
                         2,
                         {0, 1},
                         mask_hint(0, -1),
                         0,
                         {NULL},
                         {NULL},
                         {1}},
                        {"Single Request, socket 1",
                         1,
                         2,
                         {0, 1},
                         mask_hint(1, -1),
                         0,
                         {NULL},
                         {NULL},
                         {0, 1}},
                        {"Request for 2, socket 0",
                         2,
                         4,
                         {0, 1, 0, 1},
                         mask_hint(0, -1),
                         0,
                         {NULL},
                         {NULL},
                         {2}},
                        {"Request for 2, socket 1",
                         2,
                         4,
                         {0, 1, 0, 1},
                         mask_hint(1, -1),
                         0,
                         {NULL},
                         {NULL},
                         {0, 2}},
                        {"Request for 4, unsatisfiable, prefer socket 0",
                         4,
                         6,
                         {0, 1, 0, 1, 0, 1},
                         mask_hint(0, -1),
                         0,
                         {NULL},
                         {NULL},
                         {3, 1}},
                        {"Request for 4, unsatisfiable, prefer socket 1",
                         4,
                         6,
                         {0, 1, 0, 1, 0, 1},
                         mask_hint(1, -1),
                         0,
                         {NULL},
                         {NULL},
                         {1, 3}},
                        {"Request for 4, multisocket",
                         4,
                         8,
                         {0, 1, 2, 3, 0, 1, 2, 3},
                         mask_hint(1, 3),
                         0,
                         {NULL},
                         {NULL},
                         {0, 2, 0, 2}},
                        {"Request for 5, socket 0, preferred aligned accepted",
                         5,
                         0,
                         {0},
                         mask_hint(0, -1),
                         1,
                         {"Dev0", "Dev19", "Dev83", "Dev42", "Dev77"},
                         {"Dev0", "Dev19", "Dev83", "Dev42", "Dev77"},
                         {5}},
                        {"Request for 5, socket 0, preferred aligned accepted, unaligned ignored",
                         5,
                         0,
                         {0},
                         mask_hint(0, -1),
                         1,
                         {"Dev0", "Dev19", "Dev83", "Dev150", "Dev186"},
                         {"Dev0", "Dev19", "Dev83"},
                         {5}},
                        {"Request for 5, socket 1, preferred aligned accepted, bogus ignored",
                         5,
                         0,
                         {0},
                         mask_hint(1, -1),
                         2,
                         {"Dev0", "Dev19", "Dev83", "bogus0", "bogus1"},
                         {"Dev0", "Dev19", "Dev83"},
                         {0, 5}},
                        {"Request for 5, multisocket, preferred accepted",
                         5,
                         0,
                         {0},
                         mask_hint(0, -1),
                         3,
                         {"Dev0", "Dev1", "Dev2", "Dev42", "Dev83"},
                         {"Dev0", "Dev1", "Dev2", "Dev42", "Dev83"},
                         {3, 2}},
                        {"Request for 5, multisocket, preferred unaligned accepted, bogus ignored",
                         5,
                         0,
                         {0},
                         mask_hint(0, -1),
                         3,
                         {"Dev0", "Dev1", "Dev2", "Dev42", "bogus0"},
                         {"Dev0", "Dev1", "Dev2", "Dev42"},
                         {3, 2}},
        };
        (void)state;

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                const align_case *tc = &cases[i];
                ncm_devmgr *m = new_manager(numa4, 4, NULL);
                tplug p = {0};
                tdev devs[200];
                char names[200][16];
                size_t n = 0, np = 0;
                int got[4] = {0};
                ncm_error err = NCM_ERROR_INIT;
                ncm_devmgr_assignment *as = NULL;
                size_t nas = 0;

                if (tc->big == 0) {
                        for (int k = 0; k < tc->n_devs; k++) {
                                snprintf(names[n], sizeof(names[n]), "Dev%d", k + 1);
                                devs[n] = (tdev){names[n], tc->numa_of[k], NULL};
                                n++;
                        }
                } else {
                        int count = tc->big == 1 ? 200 : 100;
                        for (int k = 0; k < count; k++) {
                                int node = tc->big == 1   ? (k < 100 ? 0 : 1)
                                           : tc->big == 2 ? 1
                                                          : (k < 3 ? 0 : 1);
                                snprintf(names[n], sizeof(names[n]), "Dev%d", k);
                                devs[n] = (tdev){names[n], node, NULL};
                                n++;
                        }
                }
                while (np < 5 && tc->preferred[np])
                        np++;
                p.preferred = tc->preferred;
                p.n_preferred = np;
                update(m, "example.com/resource",
                       connect(m, "example.com/resource", &p, np > 0, false), devs, n);
                if (alloc1(m, "podUID", "containerName", 0, "example.com/resource", tc->request,
                           &tc->hint, &err) < 0)
                        fail_msg("%s: %s", tc->description, err.msg);
                assert_int_equal(ncm_devmgr_container_devices(m, "podUID", "containerName", &as,
                                                              &nas),
                                 0);
                assert_int_equal(nas, 1);
                if ((int)as[0].n_ids != tc->request)
                        fail_msg("%s: %zu devices", tc->description, as[0].n_ids);
                for (size_t k = 0; k < 5 && tc->expected_preferred[k]; k++) {
                        bool found = false;
                        for (size_t j = 0; j < as[0].n_ids; j++)
                                found |= strcmp(as[0].ids[j], tc->expected_preferred[k]) == 0;
                        if (!found)
                                fail_msg("%s: %s not allocated", tc->description,
                                         tc->expected_preferred[k]);
                }
                for (size_t j = 0; j < as[0].n_ids; j++)
                        for (size_t k = 0; k < n; k++)
                                if (strcmp(devs[k].id, as[0].ids[j]) == 0 && devs[k].numa >= 0)
                                        got[devs[k].numa]++;
                for (int k = 0; k < 4; k++)
                        if (got[k] != tc->align[k])
                                fail_msg("%s: NUMA %d got %d devices, expected %d", tc->description,
                                         k, got[k], tc->align[k]);
                ncm_devmgr_assignments_free(as, nas);
                tplug_done(&p);
                ncm_devmgr_free(m);
        }
}

/* TestGetPreferredAllocationParameters: what the plugin is asked. */
static void test_devicemanager_preferred_allocation_parameters(void **state)
{
        static const int numa2[] = {0, 1};
        static const struct {
                const char *description;
                int request;
                int numa[8];
                const char *allocated[4]; /* in use before */
                const char *reusable[2];  /* of those, held by this pod's init container */
                const char *expected_available;
                const char *expected_must;
                int expected_size;
        } cases[] = {
                        {"Request for 1, socket 0, 0 already allocated, 0 reusable",
                         1,
                         {0, 0, 0, 0},
                         {NULL},
                         {NULL},
                         "Dev0,Dev1,Dev2,Dev3",
                         "",
                         1},
                        {"Request for 4, socket 0, 2 already allocated, 2 reusable",
                         4,
                         {0, 0, 0, 0, 0, 0, 0, 0},
                         {"Dev0", "Dev5"},
                         {"Dev0", "Dev5"},
                         "Dev0,Dev1,Dev2,Dev3,Dev4,Dev5,Dev6,Dev7",
                         "Dev0,Dev5",
                         4},
                        {"Request for 4, socket 0, 4 already allocated, 2 reusable",
                         4,
                         {0, 0, 0, 0, 0, 0, 0, 0},
                         {"Dev0", "Dev5", "Dev4", "Dev1"},
                         {"Dev0", "Dev5"},
                         "Dev0,Dev2,Dev3,Dev5,Dev6,Dev7",
                         "Dev0,Dev5",
                         4},
                        {"Request for 6, multisocket, 2 already allocated, 2 reusable",
                         6,
                         {0, 0, 0, 0, 1, 1, 1, 1},
                         {"Dev1", "Dev6"},
                         {"Dev1", "Dev6"},
                         "Dev0,Dev1,Dev2,Dev3,Dev4,Dev5,Dev6,Dev7",
                         "Dev0,Dev1,Dev2,Dev3,Dev6",
                         6},
                        {"Request for 6, multisocket, 4 already allocated, 2 reusable",
                         6,
                         {0, 0, 0, 0, 1, 1, 1, 1},
                         {"Dev0", "Dev1", "Dev6", "Dev7"},
                         {"Dev1", "Dev6"},
                         "Dev1,Dev2,Dev3,Dev4,Dev5,Dev6",
                         "Dev1,Dev2,Dev3,Dev6",
                         6},
        };
        (void)state;

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_devmgr *m = new_manager(numa2, 2, NULL);
                tplug p = {0};
                tdev devs[8];
                char names[8][16];
                size_t n = 0, n_reuse = 0, n_other = 0;
                char *reuse_ids[3] = {NULL}, *other_ids[5] = {NULL};
                ncm_devmgr_numa_ids nr = {0, false, reuse_ids, 0}, no = {0, false, other_ids, 0};
                ncm_devmgr_checkpoint_entry e[2];
                ncm_devmgr_checkpoint cp = {false, e, 0, false, NULL, 0, 0};
                ncm_hint h = mask_hint(0, -1);
                ncm_error err = NCM_ERROR_INIT;
                ncm_buf got = NCM_BUF_INIT;

                for (int k = 0; k < (i == 0 ? 4 : 8); k++) {
                        snprintf(names[k], sizeof(names[k]), "Dev%d", k);
                        devs[n++] = (tdev){names[k], cases[i].numa[k], NULL};
                }
                /* Devices in use: the reusable ones by this pod's init container, the others
                 * by another pod. */
                for (size_t k = 0; k < 4 && cases[i].allocated[k]; k++) {
                        bool reusable = false;
                        for (size_t j = 0; j < 2 && cases[i].reusable[j]; j++)
                                reusable |= strcmp(cases[i].reusable[j], cases[i].allocated[k]) ==
                                            0;
                        if (reusable)
                                reuse_ids[n_reuse++] = (char *)cases[i].allocated[k];
                        else
                                other_ids[n_other++] = (char *)cases[i].allocated[k];
                }
                nr.n_ids = n_reuse;
                no.n_ids = n_other;
                if (n_reuse)
                        e[cp.n_entries++] = (ncm_devmgr_checkpoint_entry){
                                        "podUID", "init", "example.com/resource", false, &nr,
                                        1,        false,  (unsigned char *)"",    0};
                if (n_other)
                        e[cp.n_entries++] = (ncm_devmgr_checkpoint_entry){
                                        "other", "c",   "example.com/resource", false, &no,
                                        1,       false, (unsigned char *)"",    0};
                assert_int_equal(ncm_devmgr_restore(m, &cp, NULL, &err), 0);
                update(m, "example.com/resource",
                       connect(m, "example.com/resource", &p, true, false), devs, n);
                if (n_reuse)
                        assert_int_equal(alloc1(m, "podUID", "init", NCM_DEVMGR_INIT_CONTAINER,
                                                "example.com/resource", (int64_t)n_reuse, &h, &err),
                                         0);
                assert_int_equal(p.allocate_calls, 0);
                if (alloc1(m, "podUID", "containerName", 0, "example.com/resource",
                           cases[i].request, &h, &err) < 0)
                        fail_msg("%s: %s", cases[i].description, err.msg);
                assert_int_equal(p.pref_calls, 1);
                for (size_t k = 0; k < p.n_avail; k++)
                        ncm_buf_printf(&got, k ? ",%s" : "%s", p.avail[k]);
                ncm_buf_putc(&got, '|');
                for (size_t k = 0; k < p.n_must; k++)
                        ncm_buf_printf(&got, k ? ",%s" : "%s", p.must[k]);
                ncm_buf_printf(&got, "|%d", p.size);
                {
                        char want[256];
                        snprintf(want, sizeof(want), "%s|%s|%d", cases[i].expected_available,
                                 cases[i].expected_must, cases[i].expected_size);
                        if (strcmp(got.data, want) != 0)
                                fail_msg("%s: asked %s, expected %s", cases[i].description,
                                         got.data, want);
                }
                ncm_buf_done(&got);
                tplug_done(&p);
                ncm_devmgr_free(m);
        }
}

/* TestFilterByAffinity, through the allocation it steers. */
static void test_devicemanager_filter_by_affinity(void **state)
{
        static const int numa3[] = {0, 1, 2};
        static const int64_t n1[] = {1}, n12[] = {1, 2}, n2[] = {2};
        const ncm_devmgr_device devs[] = {{"dev1", "Healthy", true, n1, 1},
                                          {"dev2", "Healthy", true, n12, 2},
                                          {"dev3", "Healthy", true, n2, 1},
                                          {"dev4", "Healthy", true, n2, 1},
                                          {"dev5", "Healthy", false, NULL, 0}};
        static char *others[] = {"dev3", "dev4", "dev5", NULL};
        ncm_devmgr_numa_ids on = {-1, false, others, 3};
        ncm_devmgr_checkpoint_entry e = {
                        "other", "c", R1, false, &on, 1, false, (unsigned char *)"", 0};
        ncm_devmgr_checkpoint cp = {false, &e, 1, false, NULL, 0, 0};
        ncm_hint h2 = mask_hint(2, -1);
        ncm_error err = NCM_ERROR_INIT;
        ncm_devmgr *m;
        tplug p = {0};
        char *h;
        (void)state;

        /* Available {dev1, dev2}, affinity {2}: dev2 (nodes 1 and 2) is aligned, dev1 not. */
        m = new_manager(numa3, 3, NULL);
        assert_int_equal(ncm_devmgr_restore(m, &cp, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_update_devices(m, R1, connect(m, R1, &p, false, false), devs, 5,
                                                   &err),
                         0);
        assert_int_equal(alloc1(m, "p", "c", 0, R1, 1, &h2, &err), 0);
        h = held(m, "p", "c", R1);
        assert_string_equal(h, "dev2");
        free(h);
        ncm_devmgr_free(m);

        /* Available dev1-5: aligned {dev2, dev3, dev4}, unaligned {dev1}, no affinity
         * {dev5}, taken in that order. */
        m = new_manager(numa3, 3, NULL);
        assert_int_equal(ncm_devmgr_update_devices(m, R1, connect(m, R1, &p, false, false), devs, 5,
                                                   &err),
                         0);
        assert_int_equal(alloc1(m, "p", "c", 0, R1, 3, &h2, &err), 0);
        h = held(m, "p", "c", R1);
        assert_string_equal(h, "dev2,dev3,dev4");
        free(h);
        assert_int_equal(alloc1(m, "p", "d", 0, R1, 1, &h2, &err), 0);
        h = held(m, "p", "d", R1);
        assert_string_equal(h, "dev1");
        free(h);
        assert_int_equal(alloc1(m, "p", "e", 0, R1, 1, &h2, &err), 0);
        h = held(m, "p", "e", R1);
        assert_string_equal(h, "dev5");
        free(h);
        /* Without an affinity every device is "no affinity": sorted order. */
        ncm_devmgr_free(m);
        m = new_manager(numa3, 3, NULL);
        assert_int_equal(ncm_devmgr_update_devices(m, R1, connect(m, R1, &p, false, false), devs, 5,
                                                   &err),
                         0);
        assert_int_equal(alloc1(m, "p", "c", 0, R1, 3, NULL, &err), 0);
        h = held(m, "p", "c", R1);
        assert_string_equal(h, "dev1,dev2,dev3");
        free(h);
        ncm_devmgr_free(m);
}

/* TestDevicePreStartContainer. */
static void test_devicemanager_pre_start_container(void **state)
{
        ncm_devmgr *m = new_manager(NULL, 0, NULL);
        tplug p = {.kind = STUB_KUBELET};
        tdev d[] = {{"dev1", -1, NULL}, {"dev2", -1, NULL}};
        ncm_devmgr_resource two[] = {{R1, 2, UNSET}}, zero[] = {{R1, 0, UNSET}};
        ncm_devmgr_container c = {"c", 0, two, 1}, c0 = {"c", 0, zero, 1};
        ncm_devmgr_alloc_resp *o = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        update(m, R1, connect(m, R1, &p, false, true), d, 2);
        assert_int_equal(ncm_devmgr_allocate(m, "pod", &c, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_run_options(m, "pod", &c, NULL, &o, &err), 0);
        assert_int_equal(p.prestart_calls, 1);
        assert_int_equal(p.n_prestart, 2);
        assert_string_equal(p.prestart[0], "dev1");
        assert_string_equal(p.prestart[1], "dev2");
        assert_int_equal(o->n_devices, 3);
        assert_int_equal(o->n_mounts, 2);
        assert_int_equal(o->n_envs, 1);
        ncm_devmgr_alloc_resp_free(o);
        /* A quantity of 0: allocation succeeds, PreStartContainer is skipped. */
        assert_int_equal(ncm_devmgr_allocate(m, "pod2", &c0, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_run_options(m, "pod2", &c0, NULL, &o, &err), 0);
        assert_int_equal(p.prestart_calls, 1);
        ncm_devmgr_alloc_resp_free(o);
        tplug_done(&p);
        ncm_devmgr_free(m);
}

static void test_devicemanager_run_options_merge_first_wins(void **state)
{
        ncm_devmgr *m = new_manager(NULL, 0, NULL);
        tplug p1 = {.kind = STUB_KUBELET}, p2 = {.kind = STUB_KUBELET};
        tdev d[] = {{"dev1", -1, NULL}, {"dev2", -1, NULL}};
        ncm_devmgr_resource rr[] = {{R2, 2, UNSET}, {R1, 2, UNSET}};
        ncm_devmgr_container c = {"c", 0, rr, 2};
        ncm_devmgr_alloc_resp *o = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        /* Both resources answer with the same paths and env: duplicates are dropped. */
        update(m, R1, connect(m, R1, &p1, false, false), d, 2);
        update(m, R2, connect(m, R2, &p2, false, false), d, 2);
        assert_int_equal(ncm_devmgr_allocate(m, "pod", &c, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_run_options(m, "pod", &c, NULL, &o, &err), 0);
        assert_int_equal(o->n_devices, 3);
        assert_int_equal(o->n_mounts, 2);
        assert_int_equal(o->n_envs, 1);
        ncm_devmgr_alloc_resp_free(o);
        ncm_devmgr_free(m);
}

/* ---- errors change nothing ---- */

static void test_devicemanager_invalid_containers(void **state)
{
        ncm_devmgr *m = new_manager(NULL, 0, NULL);
        tplug p = {0};
        tdev d[] = {{"a", -1, NULL}, {"b", -1, NULL}};
        ncm_error err = NCM_ERROR_INIT;
        char *before, *after;
        (void)state;

        update(m, R1, connect(m, R1, &p, false, false), d, 2);
        before = snapshot(m);
        {
                ncm_devmgr_resource rr[] = {{R1, 1, 2}};
                ncm_devmgr_container c = {"app", 0, rr, 1};
                assert_int_equal(ncm_devmgr_allocate(m, "p", &c, NULL, &err), -EINVAL);
                assert_string_equal(err.msg,
                                    "container \"app\": resources.requests[" R1
                                    "]: Invalid value: \"2\": must be equal to " R1 " limit of 1");
        }
        {
                ncm_devmgr_resource rr[] = {{R1, UNSET, 1}};
                ncm_devmgr_container c = {"app", 0, rr, 1};
                assert_int_equal(ncm_devmgr_allocate(m, "p", &c, NULL, &err), -EINVAL);
                assert_string_equal(err.msg, "container \"app\": resources.limits[" R1
                                             "]: Required value: Limit must be set for non "
                                             "overcommitable resources");
        }
        {
                ncm_devmgr_resource rr[] = {{R1, -5, UNSET}};
                ncm_devmgr_container c = {"app", 0, rr, 1};
                assert_int_equal(ncm_devmgr_allocate(m, "p", &c, NULL, &err), -EINVAL);
                assert_non_null(strstr(err.msg, "must be greater than or equal to 0"));
        }
        {
                ncm_devmgr_resource rr[] = {{R1, 1, UNSET}, {R1, 1, UNSET}};
                ncm_devmgr_container c = {"app", 0, rr, 2};
                assert_int_equal(ncm_devmgr_allocate(m, "p", &c, NULL, &err), -EINVAL);
                assert_non_null(strstr(err.msg, "listed twice"));
        }
        {
                /* cpu may have requests below limits; it is not a device resource. */
                ncm_devmgr_resource rr[] = {{"cpu", 2, 1}, {R1, 1, 1}};
                ncm_devmgr_container c = {"app", 0, rr, 2};
                assert_int_equal(ncm_devmgr_validate_container(&c, &err), 0);
        }
        /* More than the capacity. */
        assert_int_equal(alloc1(m, "p", "app", 0, R1, 3, NULL, &err), -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "requested number of devices unavailable for " R1
                                     ". Requested: 3, Available: 2");
        /* Unknown extended resource: error, or skipped as the kubelet does. */
        assert_int_equal(alloc1(m, "p", "app", 0, "example.com/unknown", 1, NULL, &err),
                         -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "cannot allocate unregistered device example.com/unknown");
        after = snapshot(m);
        assert_string_equal(before, after);
        free(after);
        free(before);
        assert_int_equal(p.allocate_calls, 0);
        ncm_devmgr_free(m);

        {
                ncm_devmgr_config cfg = {0};
                cfg.flags = NCM_DEVMGR_SKIP_UNKNOWN_RESOURCES;
                assert_int_equal(ncm_devmgr_new(&cfg, &m, &err), 0);
                assert_int_equal(alloc1(m, "p", "app", 0, "example.com/unknown", 1, NULL, &err), 0);
                ncm_devmgr_free(m);
        }
}

static void test_devicemanager_failure_rolls_back(void **state)
{
        ncm_devmgr *m = new_manager(NULL, 0, NULL);
        tplug p1 = {0}, p2 = {0};
        tdev d[] = {{"a", -1, NULL}, {"b", -1, NULL}};
        ncm_devmgr_resource rr[] = {{R1, 1, UNSET}, {R2, 1, UNSET}};
        ncm_devmgr_resource init_rr[] = {{R1, 2, UNSET}};
        ncm_devmgr_container c = {"app", 0, rr, 2},
                             init = {"init", NCM_DEVMGR_INIT_CONTAINER, init_rr, 1};
        ncm_error err = NCM_ERROR_INIT;
        char *before, *after, *h;
        (void)state;

        update(m, R1, connect(m, R1, &p1, false, false), d, 2);
        update(m, R2, connect(m, R2, &p2, false, false), d, 2);
        assert_int_equal(ncm_devmgr_allocate(m, "pod", &init, NULL, &err), 0);
        before = snapshot(m);

        /* R1 is allocated first (a plugin call is made), then R2's plugin fails: R1's
         * device is not left reserved, nor recorded, and the reuse pool is intact. */
        p2.fail_allocate = -EIO;
        assert_int_equal(ncm_devmgr_allocate(m, "pod", &c, NULL, &err), -EIO);
        assert_string_equal(err.msg, "rpc error: code = Unknown desc = allocation refused");
        assert_int_equal(p1.allocate_calls, 2);
        after = snapshot(m);
        assert_string_equal(before, after);
        free(after);
        assert_int_equal(in_use(m, R2), 0);
        /* No container response at all. */
        p2.fail_allocate = 0;
        p2.no_response = true;
        assert_int_equal(ncm_devmgr_allocate(m, "pod", &c, NULL, &err), -EPROTO);
        assert_string_equal(err.msg, "no containers return in allocation response ");
        after = snapshot(m);
        assert_string_equal(before, after);
        free(after);
        /* Succeeds once the plugin answers; R1 still comes from the init container. */
        p2.no_response = false;
        assert_int_equal(ncm_devmgr_allocate(m, "pod", &c, NULL, &err), 0);
        h = held(m, "pod", "app", R1);
        assert_string_equal(h, "a");
        free(h);
        free(before);
        ncm_devmgr_free(m);
}

static void test_devicemanager_checkpoint_write_failure_rolls_back(void **state)
{
        char *dir = tu_mkdtemp(), *path;
        ncm_devmgr_config cfg = {0};
        ncm_devmgr *m = NULL;
        tplug p = {0};
        tdev d[] = {{"a", -1, NULL}};
        ncm_error err = NCM_ERROR_INIT;
        char *back = NULL;
        size_t n;
        (void)state;

        assert_int_equal(asprintf(&path, "%s/sub/kubelet_internal_checkpoint", dir) > 0, 1);
        cfg.checkpoint_path = path;
        cfg.checkpoint_rootfd = AT_FDCWD;
        assert_int_equal(ncm_devmgr_new(&cfg, &m, &err), 0);
        /* The snapshot is applied even though its checkpoint cannot be written... */
        assert_true(ncm_devmgr_update_devices(m, R1, connect(m, R1, &p, false, false),
                                              &(ncm_devmgr_device){"a", "Healthy", false, NULL, 0},
                                              1, &err) < 0);
        expect_capacity(m, R1, 1, 1, 0);
        /* ... but an allocation is not (the kubelet fails it too). */
        assert_true(alloc1(m, "p", "c", 0, R1, 1, NULL, &err) < 0);
        assert_int_equal(in_use(m, R1), 0);
        /* Once the directory exists every change is written. */
        {
                char *sub;
                assert_int_equal(asprintf(&sub, "%s/sub", dir) > 0, 1);
                assert_int_equal(ncm_fs_mkdir(AT_FDCWD, sub, 0750, &err), 1);
                free(sub);
        }
        update(m, R1, 0, d, 1);
        assert_int_equal(alloc1(m, "p", "c", 0, R1, 1, NULL, &err), 0);
        assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &back, &n, &err), 0);
        assert_non_null(strstr(back, "\"PodUID\":\"p\",\"ContainerName\":\"c\""));
        free(back);
        assert_int_equal(ncm_devmgr_remove_pod(m, "p", &err), 1);
        assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &back, &n, &err), 0);
        assert_non_null(strstr(back, "\"PodDeviceEntries\":null"));
        free(back);
        ncm_devmgr_free(m);
        free(path);
        tu_rm_rf(dir);
        free(dir);
}

/* ---- release ---- */

static void test_devicemanager_release(void **state)
{
        pods ps = {{"p", "q"}, 2, true, NULL, NULL};
        ncm_devmgr *m = manager_with_pods(&ps, NULL, 0);
        tplug p = {0};
        tdev d[] = {{"a", -1, NULL}, {"b", -1, NULL}, {"c", -1, NULL}};
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        update(m, R1, connect(m, R1, &p, false, false), d, 3);
        assert_int_equal(alloc1(m, "p", "c1", 0, R1, 1, NULL, &err), 0);
        assert_int_equal(alloc1(m, "p", "c2", 0, R1, 1, NULL, &err), 0);
        assert_int_equal(alloc1(m, "q", "c1", 0, R1, 1, NULL, &err), 0);
        assert_int_equal(in_use(m, R1), 3);
        assert_int_equal(alloc1(m, "r", "c1", 0, R1, 1, NULL, &err), -NCM_E_UNSATISFIABLE);

        assert_int_equal(ncm_devmgr_remove_container(m, "p", "c1", &err), 1);
        assert_int_equal(ncm_devmgr_remove_container(m, "p", "c1", &err), 0);
        assert_int_equal(in_use(m, R1), 2);
        assert_int_equal(ncm_devmgr_remove_pod(m, "p", &err), 1);
        assert_int_equal(ncm_devmgr_remove_pod(m, "p", &err), 0);
        assert_int_equal(in_use(m, R1), 1);
        /* q leaves the active list: the next allocation collects it first. */
        ps.uids[1] = "r";
        assert_int_equal(alloc1(m, "r", "c1", 0, R1, 3, NULL, &err), 0);
        assert_int_equal(in_use(m, R1), 3);
        {
                char *h = held(m, "q", "c1", R1);
                assert_string_equal(h, "");
                free(h);
        }
        /* While sources are not ready, nothing is collected. */
        ps.ready = false;
        ps.n = 0;
        assert_int_equal(alloc1(m, "s", "c1", 0, R1, 1, NULL, &err), -NCM_E_UNSATISFIABLE);
        ncm_devmgr_free(m);
}

static void test_devicemanager_standin_plugin(void **state)
{
        ncm_devmgr *m = new_manager(NULL, 0, NULL);
        ncm_devmgr_device d[] = {{"gpu1", "Healthy", false, NULL, 0},
                                 {"gpu0", "Healthy", false, NULL, 0}};
        ncm_devmgr_resource rr[] = {{"example.com/gpu", 2, 2}};
        ncm_devmgr_container c = {"app", 0, rr, 1};
        ncm_devmgr_alloc_resp *o = NULL;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t ep;
        (void)state;

        assert_int_equal(ncm_devmgr_plugin_connect(m, "example.com/gpu", &ncm_devmgr_standin_ops,
                                                   NULL, &ncm_devmgr_standin_options, &ep, &err),
                         0);
        assert_int_equal(ncm_devmgr_update_devices(m, "example.com/gpu", ep, d, 2, &err), 0);
        assert_int_equal(ncm_devmgr_allocate(m, "p", &c, NULL, &err), 0);
        assert_int_equal(ncm_devmgr_run_options(m, "p", &c, NULL, &o, &err), 0);
        assert_int_equal(o->n_envs, 1);
        assert_string_equal(o->envs[0].key, "NODECM_DEVICES_EXAMPLE_COM_GPU");
        assert_string_equal(o->envs[0].value, "gpu0,gpu1");
        assert_int_equal(o->n_cdi_devices, 2);
        assert_string_equal(o->cdi_devices[0], "example.com/gpu=gpu0");
        assert_string_equal(o->cdi_devices[1], "example.com/gpu=gpu1");
        assert_int_equal(o->n_devices + o->n_mounts + o->n_annotations, 0);
        ncm_devmgr_alloc_resp_free(o);
        ncm_devmgr_free(m);
}

/* ---- the simulator's devices section ---- */

static void test_devicemanager_scenario_devices(void **state)
{
        static const int numa2[] = {0, 1};
        static const struct {
                const char *json, *msg;
        } bad[] = {
                        {"{\"gpu\": []}", "scenario.json: the ResourceName \"gpu\" is invalid"},
                        {"{\"a/b\": {}}", "scenario.json: a/b: expected array, got object"},
                        {"{\"a/b\": [{\"numa\": [0]}]}", "scenario.json: a/b[0].id: required"},
                        {"{\"a/b\": [{\"id\": 1}]}",
                         "scenario.json: a/b[0].id: expected string, got number"},
                        {"{\"a/b\": [{\"id\": \"x\", \"numa\": [\"0\"]}]}",
                         "scenario.json: a/b[0].numa[0]: expected"},
                        {"{\"a/b\": [{\"id\": \"x\", \"numa\": 0}]}",
                         "scenario.json: a/b[0].numa: expected array, got number"},
                        {"{\"a/b\": [{\"id\": \"x\", \"health\": true}]}",
                         "scenario.json: a/b[0].health: expected string, got boolean"},
                        {"{\"c/d\": [], \"a/b\": [{\"id\": \"x\"}, {\"id\": \"x\"}]}",
                         "scenario.json: a/b: duplicate device ID \"x\""},
                        {"[]", "scenario.json: expected object, got array"},
                        {"{", "scenario.json:1:2:"},
        };
        const char *good = "{\"example.com/gpu\": [{\"id\": \"gpu0\", \"numa\": [0], "
                           "\"health\": \"Healthy\"}, {\"id\": \"gpu1\", \"numa\": [1]}, "
                           "{\"id\": \"gpu2\", \"health\": \"Unhealthy\"}], "
                           "\"example.com/nic\": []}";
        ncm_devmgr *m = new_manager(numa2, 2, NULL);
        ncm_devmgr_capacity c = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint h0 = mask_hint(0, -1);
        ncm_buf b = NCM_BUF_INIT;
        (void)state;

        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++) {
                assert_true(ncm_devmgr_apply_devices_json(m, bad[i].json, strlen(bad[i].json),
                                                          "scenario.json", &err) < 0);
                if (strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) != 0)
                        fail_msg("%s: got '%s', expected '%s'", bad[i].json, err.msg, bad[i].msg);
        }
        /* Nothing was applied by any of them. */
        assert_int_equal(ncm_devmgr_get_capacity(m, &c, &err), 0);
        assert_int_equal(c.n_entries, 0);
        ncm_devmgr_capacity_done(&c);

        assert_int_equal(
                        ncm_devmgr_apply_devices_json(m, good, strlen(good), "scenario.json", &err),
                        0);
        expect_capacity(m, "example.com/gpu", 3, 2, 0);
        expect_capacity(m, "example.com/nic", 0, 0, 0);
        assert_int_equal(alloc1(m, "p", "app", 0, "example.com/gpu", 1, &h0, &err), 0);
        ncm_devmgr_container_devices_json(m, "p", "app", &b);
        assert_string_equal(b.data, "{\"example.com/gpu\":[\"gpu0\"]}");
        ncm_buf_reset(&b);
        ncm_devmgr_container_devices_json(m, "p", "other", &b);
        assert_string_equal(b.data, "{}");
        ncm_buf_done(&b);
        /* null applies nothing. */
        assert_int_equal(ncm_devmgr_apply_devices_json(m, "null", 4, NULL, &err), 0);
        ncm_devmgr_free(m);
}

/* ---- the pod model ---- */

static void test_devicemanager_pod_model(void **state)
{
        static const int numa2[] = {0, 1};
        const char *yaml = "metadata: {uid: p1, name: web}\n"
                           "spec:\n"
                           "  initContainers:\n"
                           "  - name: init\n"
                           "    resources: {limits: {example.com/gpu: 1}}\n"
                           "  - name: side\n"
                           "    restartPolicy: Always\n"
                           "    resources: {limits: {example.com/gpu: 1}}\n"
                           "  containers:\n"
                           "  - name: app\n"
                           "    resources: {limits: {cpu: 1, example.com/gpu: \"2\"}}\n";
        ncm_devmgr *m = new_manager(numa2, 2, NULL);
        ncm_devmgr_device d[] = {{"g0", "Healthy", true, (const int64_t[]){0}, 1},
                                 {"g1", "Healthy", true, (const int64_t[]){1}, 1},
                                 {"g2", "Healthy", true, (const int64_t[]){1}, 1},
                                 {"g3", "Healthy", true, (const int64_t[]){0}, 1}};
        ncm_pod *pod = NULL;
        ncm_devmgr_hints h = NCM_DEVMGR_HINTS_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint any = {0, true, true};
        uint64_t ep;
        char *s;
        (void)state;

        assert_int_equal(ncm_pod_parse(yaml, strlen(yaml), "pod.yaml", &pod, &err), 0);
        assert_int_equal(ncm_devmgr_validate_pod(pod, &err), 0);
        assert_int_equal(ncm_devmgr_plugin_connect(m, "example.com/gpu", &ncm_devmgr_standin_ops,
                                                   NULL, NULL, &ep, &err),
                         0);
        assert_int_equal(ncm_devmgr_update_devices(m, "example.com/gpu", ep, d, 4, &err), 0);
        /* Pod scope: sidecar 1 + app 2 = 3, more than the init container's 1 + 1. */
        assert_int_equal(ncm_devmgr_pod_scope_hints(m, pod, &h, &err), 0);
        assert_int_equal(h.n, 1);
        assert_int_equal(h.v[0].hints.n, 1);
        assert_int_equal(h.v[0].hints.hints[0].numa, 3);
        ncm_devmgr_hints_done(&h);
        assert_int_equal(ncm_devmgr_pod_container_hints(m, pod, &pod->containers[0], &h, &err), 0);
        assert_int_equal(h.v[0].hints.n, 3);
        ncm_devmgr_hints_done(&h);
        for (size_t i = 0; i < pod->n_init_containers; i++)
                assert_int_equal(ncm_devmgr_allocate_pod_container(m, pod, &pod->init_containers[i],
                                                                   &any, &err),
                                 0);
        assert_int_equal(ncm_devmgr_allocate_pod_container(m, pod, &pod->containers[0], &any, &err),
                         0);
        /* The sidecar reuses the regular init container's device and keeps it, so the app
         * gets two others. */
        s = held(m, "p1", "init", "example.com/gpu");
        assert_string_equal(s, "g0");
        free(s);
        s = held(m, "p1", "side", "example.com/gpu");
        assert_string_equal(s, "g0");
        free(s);
        s = held(m, "p1", "app", "example.com/gpu");
        assert_string_equal(s, "g1,g2");
        free(s);
        ncm_pod_free(pod);
        pod = NULL;

        /* Extended resources must be integers. */
        yaml = "metadata: {uid: p2}\nspec:\n  containers:\n  - name: app\n"
               "    resources: {limits: {example.com/gpu: 500m}}\n";
        assert_int_equal(ncm_pod_parse(yaml, strlen(yaml), "pod.yaml", &pod, &err), 0);
        assert_int_equal(ncm_devmgr_validate_pod(pod, &err), -EINVAL);
        assert_string_equal(err.msg, "container \"app\": resources.limits[example.com/gpu]: "
                                     "Invalid value: \"500m\": must be an integer");
        /* (Requests that differ from limits are refused by the pod model already; the
         * plain API's check is in test_devicemanager_invalid_containers.) */
        ncm_pod_free(pod);
        ncm_devmgr_free(m);
}

/* ---- properties over random registries and pods ---- */

static uint64_t rnd_state;

static uint32_t rnd(uint32_t n)
{
        rnd_state ^= rnd_state << 13;
        rnd_state ^= rnd_state >> 7;
        rnd_state ^= rnd_state << 17;
        return (uint32_t)(rnd_state % n);
}

typedef struct prop_pod {
        char uid[8];
        ncm_devmgr_container_type type[4]; /* init containers first, as in a pod spec */
        int64_t count[4][2];
} prop_pod;

/* Every device is held by one pod at most, and within a pod by one container at most, except
 * the devices of regular init containers, which later containers of the same pod reuse. */
static void check_exclusive(const ncm_devmgr *m, const char *res, const prop_pod *pods_,
                            size_t n_pods)
{
        ncm_devmgr_checkpoint *cp = NULL;
        ncm_error err = NCM_ERROR_INIT;
        char **use = NULL;
        size_t n_use = 0;

        assert_int_equal(ncm_devmgr_to_checkpoint(m, &cp, &err), 0);
        for (size_t i = 0; i < cp->n_entries; i++) {
                const ncm_devmgr_checkpoint_entry *a = &cp->entries[i];
                if (strcmp(a->resource_name, res) != 0)
                        continue;
                for (size_t k = i + 1; k < cp->n_entries; k++) {
                        const ncm_devmgr_checkpoint_entry *b = &cp->entries[k];
                        bool same_pod = strcmp(a->pod_uid, b->pod_uid) == 0;
                        bool init_share = false;
                        if (strcmp(b->resource_name, res) != 0)
                                continue;
                        if (same_pod)
                                for (size_t p = 0; p < n_pods; p++)
                                        if (strcmp(pods_[p].uid, a->pod_uid) == 0)
                                                init_share = pods_[p].type[a->container_name[1] -
                                                                           '0'] ==
                                                                             NCM_DEVMGR_INIT_CONTAINER ||
                                                             pods_[p].type[b->container_name[1] -
                                                                           '0'] ==
                                                                             NCM_DEVMGR_INIT_CONTAINER;
                        if (init_share)
                                continue;
                        for (size_t x = 0; x < a->n_device_ids; x++)
                                for (size_t y = 0; y < a->device_ids[x].n_ids; y++)
                                        for (size_t u = 0; u < b->n_device_ids; u++)
                                                for (size_t v = 0; v < b->device_ids[u].n_ids; v++)
                                                        if (strcmp(a->device_ids[x].ids[y],
                                                                   b->device_ids[u].ids[v]) == 0)
                                                                fail_msg("%s held by %s/%s and "
                                                                         "%s/%s",
                                                                         a->device_ids[x].ids[y],
                                                                         a->pod_uid,
                                                                         a->container_name,
                                                                         b->pod_uid,
                                                                         b->container_name);
                }
        }
        /* The in-use set is exactly the union of what containers hold. */
        if (ncm_devmgr_allocated_devices(m, res, &use, &n_use) == 0) {
                for (size_t i = 0; i < n_use; i++) {
                        bool found = false;
                        for (size_t k = 0; k < cp->n_entries && !found; k++)
                                if (strcmp(cp->entries[k].resource_name, res) == 0)
                                        for (size_t x = 0; x < cp->entries[k].n_device_ids; x++)
                                                for (size_t y = 0;
                                                     y < cp->entries[k].device_ids[x].n_ids; y++)
                                                        found |= strcmp(cp->entries[k].device_ids[x]
                                                                                        .ids[y],
                                                                        use[i]) == 0;
                        assert_true(found);
                }
                free_ids(use);
        }
        ncm_devmgr_checkpoint_free(cp);
}

static void test_devicemanager_properties(void **state)
{
        static const char *const res[] = {"example.com/a", "example.com/b"};
        static const char *const pref[] = {"d3", "d0", "d7"};
        static const int numa[] = {0, 1, 2, 3};
        unsigned failures = 0, successes = 0;
        (void)state;

        for (uint64_t seed = 1; seed <= 150; seed++) {
                ncm_devmgr *m = new_manager(numa, 4, NULL);
                tplug plugs[2] = {{0}, {0}};
                uint64_t eps[2];
                tdev devs[2][10];
                char names[2][10][24];
                size_t n_devs[2];
                prop_pod pods_[6];
                ncm_error err = NCM_ERROR_INIT;

                rnd_state = seed * 0x9E3779B97F4A7C15ull;
                for (int r = 0; r < 2; r++) {
                        n_devs[r] = 1 + rnd(9);
                        for (size_t k = 0; k < n_devs[r]; k++) {
                                snprintf(names[r][k], sizeof(names[r][k]), "d%zu", k);
                                devs[r][k] = (tdev){names[r][k], (int)rnd(5) - 1,
                                                    rnd(5) ? "Healthy" : "Unhealthy"};
                        }
                        eps[r] = connect(m, res[r], &plugs[r], rnd(2), false);
                        plugs[r].preferred = pref;
                        plugs[r].n_preferred = rnd(4);
                        update(m, res[r], eps[r], devs[r], n_devs[r]);
                }
                for (size_t p = 0; p < 6; p++) {
                        int n_init = (int)rnd(3);
                        snprintf(pods_[p].uid, sizeof(pods_[p].uid), "p%zu", p);
                        for (int c = 0; c < 4; c++) {
                                pods_[p].type[c] = c >= n_init ? NCM_DEVMGR_APP_CONTAINER
                                                   : rnd(2)    ? NCM_DEVMGR_INIT_CONTAINER
                                                               : NCM_DEVMGR_SIDECAR_CONTAINER;
                                pods_[p].count[c][0] = rnd(3);
                                pods_[p].count[c][1] = rnd(3);
                        }
                }
                for (int step = 0; step < 40; step++) {
                        size_t p = rnd(6);
                        uint32_t op = rnd(10);
                        if (op < 6) {
                                /* Admit (or re-admit, as after a restart) the pod's containers
                                 * in order; a failure rejects the pod, which then goes. */
                                for (int c = 0; c < 4; c++) {
                                        ncm_devmgr_resource rr[2] = {
                                                        {res[0], pods_[p].count[c][0], UNSET},
                                                        {res[1], pods_[p].count[c][1], UNSET}};
                                        char cname[4] = {'c', (char)('0' + c), 0};
                                        ncm_devmgr_container cont = {cname, pods_[p].type[c], rr,
                                                                     2};
                                        ncm_hint h = mask_hint((int)rnd(4), -1);
                                        char *before = snapshot(m), *after;
                                        int k = ncm_devmgr_allocate(m, pods_[p].uid, &cont,
                                                                    rnd(2) ? &h : NULL, &err);
                                        after = snapshot(m);
                                        if (k < 0) {
                                                /* A failure leaves nothing behind. */
                                                assert_int_equal(err.code, NCM_E_UNSATISFIABLE);
                                                assert_string_equal(before, after);
                                                failures++;
                                        } else {
                                                successes++;
                                        }
                                        free(before);
                                        free(after);
                                        if (k < 0) {
                                                ncm_devmgr_remove_pod(m, pods_[p].uid, &err);
                                                break;
                                        }
                                }
                        } else if (op < 8) {
                                ncm_devmgr_remove_pod(m, pods_[p].uid, &err);
                        } else {
                                /* Health flips in a new snapshot. */
                                int r = (int)rnd(2);
                                size_t k = rnd((uint32_t)n_devs[r]);
                                devs[r][k].health = rnd(2) ? "Healthy" : "Unhealthy";
                                update(m, res[r], eps[r], devs[r], n_devs[r]);
                        }
                        check_exclusive(m, res[0], pods_, 6);
                        check_exclusive(m, res[1], pods_, 6);
                }
                /* Everything released comes back: the whole healthy set can be taken again. */
                for (size_t p = 0; p < 6; p++)
                        ncm_devmgr_remove_pod(m, pods_[p].uid, &err);
                for (int r = 0; r < 2; r++) {
                        char **h = NULL;
                        size_t nh = 0;
                        assert_int_equal(in_use(m, res[r]), 0);
                        assert_int_equal(ncm_devmgr_healthy_devices(m, res[r], &h, &nh), 0);
                        free_ids(h);
                        if (nh)
                                assert_int_equal(alloc1(m, "all", "c", 0, res[r], (int64_t)nh, NULL,
                                                        &err),
                                                 0);
                        assert_int_equal(in_use(m, res[r]), nh);
                        tplug_done(&plugs[r]);
                }
                ncm_devmgr_free(m);
        }
        /* The runs exercise both outcomes. */
        assert_true(failures > 100);
        assert_true(successes > 1000);
}

/* ---- what a live plugin host uses: holds, the calling pod, inventory, options, detach ---- */

typedef struct calling {
        tplug p;
        const ncm_devmgr *m;
        char pod[32], container[32];
} calling;

static int calling_allocate(void *data, const char *resource, const char *const *ids, size_t n,
                            ncm_devmgr_alloc_resp **ret, ncm_error *err)
{
        calling *c = data;
        snprintf(c->pod, sizeof(c->pod), "%s", ncm_devmgr_calling_pod(c->m));
        snprintf(c->container, sizeof(c->container), "%s", ncm_devmgr_calling_container(c->m));
        return tp_allocate(&c->p, resource, ids, n, ret, err);
}

static const ncm_devmgr_plugin_ops calling_ops = {"calling", calling_allocate, NULL, NULL, NULL};

static void test_devicemanager_live_host_support(void **state)
{
        static const int numa[] = {0, 1};
        static const tdev devs[] = {
                        {"d0", 0, NULL}, {"d1", 0, NULL}, {"d2", 1, NULL}, {"d3", -1, "Unhealthy"}};
        int64_t clock = 1000;
        ncm_devmgr *m = new_manager(numa, 2, &clock);
        calling cp = {.p = {STUB_EMPTY}};
        ncm_devmgr_plugin_options o = {false, false};
        ncm_error err = NCM_ERROR_INIT;
        ncm_devmgr_inventory inv = {0};
        ncm_devmgr_numa_assignment *na = NULL;
        ncm_devmgr_alloc_resp *opts = NULL;
        ncm_devmgr_hints hints = NCM_DEVMGR_HINTS_INIT;
        ncm_devmgr_resource rr[] = {{R1, 2, UNSET}};
        ncm_devmgr_container c = {"app", NCM_DEVMGR_APP_CONTAINER, rr, 1};
        ncm_hint any = {0, true, true};
        const char *ids[] = {"d0", "d1"};
        size_t nn = 0;
        uint64_t ep = 0;
        char *h;
        (void)state;

        cp.m = m;
        assert_int_equal(ncm_devmgr_plugin_connect(m, R1, &calling_ops, &cp, &o, &ep, &err), 0);
        update(m, R1, ep, devs, 4);
        assert_null(ncm_devmgr_calling_pod(m));

        /* holds: d0 and d1 held for pod A are out of reach of pod B, not of A */
        assert_int_equal(ncm_devmgr_hold(m, 7, "A", R1, ids, 2), 0);
        assert_int_equal(ncm_devmgr_num_held(m), 2);
        assert_int_equal(ncm_devmgr_container_hints(m, "B", &c, &hints, &err), 0);
        assert_int_equal(hints.n, 1);
        assert_int_equal(hints.v[0].hints.n, 0); /* only d2 is left: 2 cannot be satisfied */
        ncm_devmgr_hints_done(&hints);
        assert_int_equal(ncm_devmgr_allocate(m, "B", &c, &any, &err), -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "requested number of devices unavailable for " R1
                                     ". Requested: 2, Available: 1");
        assert_int_equal(ncm_devmgr_allocate(m, "A", &c, &any, &err), 0);
        assert_string_equal(cp.pod, "A");
        assert_string_equal(cp.container, "app");
        assert_null(ncm_devmgr_calling_pod(m));
        h = held(m, "A", "app", R1);
        assert_string_equal(h, "d0,d1");
        free(h);
        ncm_devmgr_release_holds(m, 7);
        assert_int_equal(ncm_devmgr_num_held(m), 0);

        /* the inventory: endpoint, capacity, devices and who holds them */
        assert_int_equal(ncm_devmgr_inventory_get(m, &inv), 0);
        assert_int_equal(inv.n, 1);
        assert_string_equal(inv.v[0].resource, R1);
        assert_int_equal(inv.v[0].endpoint, NCM_DEVMGR_ENDPOINT_RUNNING);
        assert_string_equal(inv.v[0].plugin, "calling");
        assert_int_equal(inv.v[0].capacity, 4);
        assert_int_equal(inv.v[0].allocatable, 3);
        assert_int_equal(inv.v[0].allocated, 2);
        assert_int_equal(inv.v[0].n_devices, 4);
        assert_string_equal(inv.v[0].devices[0].pod, "A");
        assert_string_equal(inv.v[0].devices[1].container, "app");
        assert_null(inv.v[0].devices[2].pod);
        assert_false(inv.v[0].devices[3].healthy);
        assert_false(inv.v[0].devices[3].topology);
        {
                ncm_buf b = NCM_BUF_INIT;
                ncm_devmgr_inventory_json(&inv, &b);
                assert_non_null(strstr(b.data, "{\"id\": \"d3\", \"health\": \"Unhealthy\", "
                                               "\"healthy\": false, \"numa\": null, "
                                               "\"allocated\": false}"));
                ncm_buf_reset(&b);
                ncm_devmgr_inventory_text(&inv, &b);
                assert_non_null(strstr(b.data, "  d0  healthy  NUMA 0  A/app\n"));
                ncm_buf_done(&b);
        }
        ncm_devmgr_inventory_done(&inv);

        /* a container's devices per NUMA node, its merged options */
        assert_int_equal(ncm_devmgr_container_numa(m, "A", "app", &na, &nn), 0);
        assert_int_equal(nn, 1);
        assert_int_equal(na[0].n_numa, 1);
        assert_int_equal(na[0].numa[0].node, 0);
        assert_int_equal(na[0].numa[0].n_ids, 2);
        ncm_devmgr_numa_assignments_free(na, nn);
        assert_int_equal(ncm_devmgr_container_options(m, "A", "app", &opts), 0);
        assert_non_null(opts);
        opts = ncm_devmgr_alloc_resp_free(opts);
        assert_int_equal(ncm_devmgr_container_options(m, "A", "other", &opts), 0);
        assert_null(opts);

        /* detach: the endpoint stops and forgets its ops (no release), allocations stay */
        assert_int_equal(ncm_devmgr_plugin_detach(m, R1, ep + 1), 0);
        assert_int_equal(ncm_devmgr_plugin_detach(m, R1, ep), 1);
        assert_int_equal(ncm_devmgr_inventory_get(m, &inv), 0);
        assert_int_equal(inv.v[0].endpoint, NCM_DEVMGR_ENDPOINT_STOPPED);
        assert_null(inv.v[0].plugin);
        assert_int_equal(inv.v[0].allocatable, 0);
        assert_int_equal(inv.v[0].allocated, 2);
        ncm_devmgr_inventory_done(&inv);
        assert_int_equal(alloc1(m, "C", "app", NCM_DEVMGR_APP_CONTAINER, R1, 1, NULL, &err),
                         -NCM_E_UNSATISFIABLE);

        /* a shorter grace period: dropped once it has passed */
        ncm_devmgr_set_stop_grace(m, 1000);
        {
                ncm_devmgr_capacity cap = {0};
                clock += 999;
                assert_int_equal(ncm_devmgr_get_capacity(m, &cap, &err), 0);
                assert_int_equal(cap.n_deleted, 0);
                clock += 2;
                assert_int_equal(ncm_devmgr_get_capacity(m, &cap, &err), 0);
                assert_int_equal(cap.n_deleted, 1);
                ncm_devmgr_capacity_done(&cap);
        }
        assert_int_equal(cp.p.released, 0);
        ncm_devmgr_free(m);
        tplug_done(&cp.p);
}

/* A stopped endpoint is an admission decision (UnexpectedAdmissionError), as in the kubelet. */
static void test_devicemanager_stopped_endpoint_is_a_decision(void **state)
{
        static const int numa[] = {0};
        static const tdev devs[] = {{"d0", 0, NULL}};
        ncm_devmgr *m = new_manager(numa, 1, NULL);
        tplug p = {STUB_EMPTY};
        ncm_error err = NCM_ERROR_INIT;
        uint64_t ep = connect(m, R1, &p, false, false);
        ncm_devmgr_resource rr[] = {{R1, 1, UNSET}};
        ncm_devmgr_container c = {"app", NCM_DEVMGR_APP_CONTAINER, rr, 1};
        (void)state;

        update(m, R1, ep, devs, 1);
        assert_int_equal(ncm_devmgr_plugin_disconnect(m, R1, ep), 1);
        /* a snapshot without an instance check (the kubelet's tests feed them) makes the
         * device healthy while the endpoint stays stopped */
        update(m, R1, 0, devs, 1);
        assert_int_equal(ncm_devmgr_allocate(m, "A", &c, NULL, &err), -NCM_E_ADMISSION);
        assert_string_equal(err.msg, "endpoint " R1 " has been stopped");
        assert_int_equal(p.allocate_calls, 0);
        ncm_devmgr_free(m);
        tplug_done(&p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_devicemanager_resource_names),
                        cmocka_unit_test(test_devicemanager_capacity_allocatable),
                        cmocka_unit_test(test_devicemanager_disconnect_and_health),
                        cmocka_unit_test(test_devicemanager_plugin_instances),
                        cmocka_unit_test(test_devicemanager_duplicate_ids_rejected),
                        cmocka_unit_test(test_devicemanager_pod_container_allocation),
                        cmocka_unit_test(test_devicemanager_run_options_follow_active_pods),
                        cmocka_unit_test(test_devicemanager_devices_to_allocate_errors),
                        cmocka_unit_test(test_devicemanager_container_restart_keeps_devices),
                        cmocka_unit_test(test_devicemanager_restart_running_container),
                        cmocka_unit_test(test_devicemanager_init_container_reuse),
                        cmocka_unit_test(test_devicemanager_sidecars_do_not_donate),
                        cmocka_unit_test(test_devicemanager_topology_aligned_allocation),
                        cmocka_unit_test(test_devicemanager_preferred_allocation_parameters),
                        cmocka_unit_test(test_devicemanager_filter_by_affinity),
                        cmocka_unit_test(test_devicemanager_pre_start_container),
                        cmocka_unit_test(test_devicemanager_run_options_merge_first_wins),
                        cmocka_unit_test(test_devicemanager_invalid_containers),
                        cmocka_unit_test(test_devicemanager_failure_rolls_back),
                        cmocka_unit_test(test_devicemanager_checkpoint_write_failure_rolls_back),
                        cmocka_unit_test(test_devicemanager_release),
                        cmocka_unit_test(test_devicemanager_standin_plugin),
                        cmocka_unit_test(test_devicemanager_scenario_devices),
                        cmocka_unit_test(test_devicemanager_pod_model),
                        cmocka_unit_test(test_devicemanager_properties),
                        cmocka_unit_test(test_devicemanager_live_host_support),
                        cmocka_unit_test(test_devicemanager_stopped_endpoint_is_a_decision),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
