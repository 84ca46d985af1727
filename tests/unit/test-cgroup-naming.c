/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cgroup names and the two naming drivers: the tables of cgroup_manager_linux_test.go
 * (ToSystemd, its basename, empty parts, ToCgroupfs, ParseSystemdToCgroupName, NewCgroupName),
 * libcontainer's ExpandSlice, the QoS hierarchy's names for both drivers and round trips.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroups.h>

#include "testutil.h"

/* A name from components (NULL-terminated); "" parts are kept, as NewCgroupName does. */
static ncm_cgroup_name mk(const char *first, ...)
{
        ncm_cgroup_name n = NCM_CGROUP_NAME_INIT;
        va_list ap;

        va_start(ap, first);
        for (const char *p = first; p; p = va_arg(ap, const char *))
                assert_int_equal(ncm_cgroup_name_append(&n, p, NULL), 0);
        va_end(ap);
        return n;
}
#define NAME(...) mk(__VA_ARGS__, (const char *)NULL)
#define ROOT() mk(NULL)

static char *path_of(const ncm_cgroup_naming_ops *ops, const ncm_cgroup_name *n)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_cgroup_naming_to_path(ops, n, &b, &err) < 0)
                fail_msg("to_path: %s", err.msg);
        return ncm_buf_steal(&b);
}

static void expect_path(const ncm_cgroup_naming_ops *ops, ncm_cgroup_name n, const char *want)
{
        char *got = path_of(ops, &n);
        if (strcmp(got, want) != 0)
                fail_msg("%s: got %s, want %s", ncm_cgroup_naming_name(ops), got, want);
        free(got);
        ncm_cgroup_name_done(&n);
}

static void expect_basename(ncm_cgroup_name n, const char *want)
{
        char *got = path_of(&ncm_cgroup_naming_systemd, &n);
        const char *base = strcmp(got, "/") == 0 ? got : strrchr(got, '/') + 1;
        assert_string_equal(base, want);
        free(got);
        ncm_cgroup_name_done(&n);
}

/* TestCgroupNameToSystemdBasename */
static void test_cgroup_naming_systemd_basename(void **state)
{
        (void)state;
        expect_basename(ROOT(), "/");
        expect_basename(NAME("system"), "system.slice");
        expect_basename(NAME("system", "Burstable"), "system-Burstable.slice");
        expect_basename(NAME("Burstable", "pod-123"), "Burstable-pod_123.slice");
        expect_basename(NAME("test", "a", "b"), "test-a-b.slice");
        expect_basename(NAME("test", "a", "b", "Burstable"), "test-a-b-Burstable.slice");
        expect_basename(NAME("Burstable"), "Burstable.slice");
        expect_basename(NAME("BestEffort", "pod-6c1a4e95-6bb6-11e6-bc26-28d2444e470d"),
                        "BestEffort-pod_6c1a4e95_6bb6_11e6_bc26_28d2444e470d.slice");
}

/* TestCgroupNameToSystemd */
static void test_cgroup_naming_systemd(void **state)
{
        const ncm_cgroup_naming_ops *s = &ncm_cgroup_naming_systemd;
        (void)state;
        expect_path(s, ROOT(), "/");
        expect_path(s, NAME("Burstable"), "/Burstable.slice");
        expect_path(s, NAME("Burstable", "pod-123"), "/Burstable.slice/Burstable-pod_123.slice");
        expect_path(s, NAME("BestEffort", "pod-6c1a4e95-6bb6-11e6-bc26-28d2444e470d"),
                    "/BestEffort.slice/BestEffort-pod_6c1a4e95_6bb6_11e6_bc26_28d2444e470d.slice");
        expect_path(s, NAME("kubepods"), "/kubepods.slice");
        expect_path(s, NAME("kubepods", "burstable", "pod2a5f6c1e-0d6b-4c1a-9a55-7d0b3e9c1f00"),
                    "/kubepods.slice/kubepods-burstable.slice/"
                    "kubepods-burstable-pod2a5f6c1e_0d6b_4c1a_9a55_7d0b3e9c1f00.slice");
}

/* TestCgroupNameWithEmptyPartToSystemd */
static void test_cgroup_naming_systemd_empty_parts(void **state)
{
        const ncm_cgroup_naming_ops *s = &ncm_cgroup_naming_systemd;
        (void)state;
        expect_path(s, NAME("Burstable", ""), "/Burstable.slice");
        expect_path(s, NAME("", "Burstable", "pod-123"),
                    "/Burstable.slice/Burstable-pod_123.slice");
        expect_path(s, NAME("BestEffort", "", "pod-6c1a4e95-6bb6-11e6-bc26-28d2444e470d", ""),
                    "/BestEffort.slice/BestEffort-pod_6c1a4e95_6bb6_11e6_bc26_28d2444e470d.slice");
        expect_path(s, NAME("kubepods", ""), "/kubepods.slice");
        expect_path(s, NAME(""), "/");
}

/* TestCgroupNameToCgroupfs */
static void test_cgroup_naming_cgroupfs(void **state)
{
        const ncm_cgroup_naming_ops *c = &ncm_cgroup_naming_cgroupfs;
        (void)state;
        expect_path(c, ROOT(), "/");
        expect_path(c, NAME("Burstable"), "/Burstable");
        expect_path(c, NAME("kubepods", "burstable", "pod1234-abcd"),
                    "/kubepods/burstable/pod1234-abcd");
        /* path.Join drops empty parts. */
        expect_path(c, NAME("a", "", "b"), "/a/b");
        expect_path(c, NAME(""), "/");
}

static void expect_parse(const ncm_cgroup_naming_ops *ops, const char *path, size_t n, ...)
{
        ncm_cgroup_name name = NCM_CGROUP_NAME_INIT;
        ncm_error err = NCM_ERROR_INIT;
        va_list ap;

        if (ncm_cgroup_naming_from_path(ops, path, &name, &err) < 0)
                fail_msg("%s: %s", path, err.msg);
        if (name.n != n)
                fail_msg("%s: %zu parts, want %zu", path, name.n, n);
        va_start(ap, n);
        for (size_t i = 0; i < n; i++)
                assert_string_equal(name.parts[i], va_arg(ap, const char *));
        va_end(ap);
        ncm_cgroup_name_done(&name);
}

/* TestParseSystemdToCgroupName, TestNewCgroupName and ParseCgroupfsToCgroupName */
static void test_cgroup_naming_parse(void **state)
{
        const ncm_cgroup_naming_ops *s = &ncm_cgroup_naming_systemd;
        const ncm_cgroup_naming_ops *c = &ncm_cgroup_naming_cgroupfs;
        ncm_cgroup_name name = NCM_CGROUP_NAME_INIT;
        (void)state;
        expect_parse(s, "/test", 1, "test");
        expect_parse(s, "/test.slice", 1, "test");
        expect_parse(s, "/", 0);
        expect_parse(s,
                     "/kubepods.slice/kubepods-burstable.slice/"
                     "kubepods-burstable-pod2a5f6c1e_0d6b_4c1a_9a55_7d0b3e9c1f00.slice",
                     3, "kubepods", "burstable", "pod2a5f6c1e-0d6b-4c1a-9a55-7d0b3e9c1f00");
        expect_parse(c, "/", 0);
        expect_parse(c, "", 0);
        expect_parse(c, "/kubepods/burstable", 2, "kubepods", "burstable");
        /* ParseCgroupfsToCgroupName("/a/") is ["a" ""]; NewCgroupName keeps appending. */
        expect_parse(c, "/a/", 2, "a", "");
        assert_int_equal(ncm_cgroup_naming_from_path(c, "/a/", &name, NULL), 0);
        assert_int_equal(ncm_cgroup_name_append(&name, "b", NULL), 0);
        assert_int_equal(name.n, 3);
        assert_string_equal(name.parts[1], "");
        assert_string_equal(name.parts[2], "b");
        ncm_cgroup_name_done(&name);
        assert_int_equal(ncm_cgroup_naming_from_path(c, "/a/../b", &name, NULL), -EINVAL);
        assert_int_equal(name.n, 0);
}

static void test_cgroup_naming_invalid_components(void **state)
{
        ncm_cgroup_name n = NCM_CGROUP_NAME_INIT;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm_cgroup_name_append(&n, "a_b", &err), -EINVAL);
        assert_string_equal(err.msg, "invalid character in component [\"a_b\"] of CgroupName");
        assert_int_equal(ncm_cgroup_name_append(&n, "a/b", &err), -EINVAL);
        assert_int_equal(ncm_cgroup_name_append(&n, "..", &err), -EINVAL);
        assert_int_equal(ncm_cgroup_name_append(&n, ".", &err), -EINVAL);
        assert_int_equal(n.n, 0);
        for (int i = 0; i < NCM_CGROUP_NAME_MAX_DEPTH; i++)
                assert_int_equal(ncm_cgroup_name_append(&n, "x", NULL), 0);
        assert_int_equal(ncm_cgroup_name_append(&n, "x", &err), -E2BIG);
        ncm_cgroup_name_done(&n);
}

static void test_cgroup_naming_format(void **state)
{
        ncm_cgroup_name n = NAME("kubepods", "a\"b");
        ncm_buf b = NCM_BUF_INIT;
        (void)state;
        ncm_cgroup_name_format(&n, &b);
        assert_string_equal(b.data, "[\"kubepods\" \"a\\\"b\"]");
        ncm_buf_done(&b);
        ncm_cgroup_name_done(&n);
}

static void expect_expand(const char *in, const char *want)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_cgroup_expand_slice(in, &b, &err);

        if (want) {
                if (r < 0)
                        fail_msg("%s: %s", in, err.msg);
                assert_string_equal(b.data, want);
        } else {
                assert_int_equal(r, -EINVAL);
                assert_true(strncmp(err.msg, "invalid slice name: ", 20) == 0);
                assert_int_equal(b.len, 0);
        }
        ncm_buf_done(&b);
}

/* libcontainer's ExpandSlice */
static void test_cgroup_naming_expand_slice(void **state)
{
        (void)state;
        expect_expand("-.slice", "/");
        expect_expand("test.slice", "/test.slice");
        expect_expand("test-a.slice", "/test.slice/test-a.slice");
        expect_expand("test-a-b.slice", "/test.slice/test-a.slice/test-a-b.slice");
        expect_expand("kubepods-burstable-pod1_2.slice",
                      "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1_2.slice");
        expect_expand("test", NULL);
        expect_expand("test.scope", NULL);
        expect_expand(".slice", NULL);
        expect_expand("test--a.slice", NULL);
        expect_expand("-test.slice", NULL);
        expect_expand("test-.slice", NULL);
        expect_expand("a/b.slice", NULL);
}

static void expect_qos(const char *root, const ncm_cgroup_naming_ops *ops, const char *g,
                       const char *bu, const char *be)
{
        ncm_cgroup_name ng, nbu, nbe;
        char *p;

        assert_int_equal(ncm_cgroup_qos_names(root, true, &ng, &nbu, &nbe, NULL), 0);
        p = path_of(ops, &ng);
        assert_string_equal(p, g);
        free(p);
        p = path_of(ops, &nbu);
        assert_string_equal(p, bu);
        free(p);
        p = path_of(ops, &nbe);
        assert_string_equal(p, be);
        free(p);
        ncm_cgroup_name_done(&ng);
        ncm_cgroup_name_done(&nbu);
        ncm_cgroup_name_done(&nbe);
}

static void test_cgroup_naming_qos_hierarchy(void **state)
{
        ncm_cgroup_name n;
        ncm_error err = NCM_ERROR_INIT;
        char *p;
        (void)state;
        expect_qos("/", &ncm_cgroup_naming_cgroupfs, "/kubepods", "/kubepods/burstable",
                   "/kubepods/besteffort");
        expect_qos("/", &ncm_cgroup_naming_systemd, "/kubepods.slice",
                   "/kubepods.slice/kubepods-burstable.slice",
                   "/kubepods.slice/kubepods-besteffort.slice");
        expect_qos("/nodecm-test-1", &ncm_cgroup_naming_cgroupfs, "/nodecm-test-1/kubepods",
                   "/nodecm-test-1/kubepods/burstable", "/nodecm-test-1/kubepods/besteffort");
        expect_qos("/nodecm-test-1", &ncm_cgroup_naming_systemd,
                   "/nodecm_test_1.slice/nodecm_test_1-kubepods.slice",
                   "/nodecm_test_1.slice/nodecm_test_1-kubepods.slice/"
                   "nodecm_test_1-kubepods-burstable.slice",
                   "/nodecm_test_1.slice/nodecm_test_1-kubepods.slice/"
                   "nodecm_test_1-kubepods-besteffort.slice");

        /* Without cgroupsPerQOS everything is the root. */
        assert_int_equal(ncm_cgroup_qos_names("/", false, &n, NULL, NULL, NULL), 0);
        assert_int_equal(n.n, 0);
        ncm_cgroup_name_done(&n);

        /* Guaranteed pods sit directly in kubepods. */
        assert_int_equal(ncm_cgroup_pod_name("/", true, NCM_QOS_GUARANTEED, "ab-cd", &n, NULL), 0);
        p = path_of(&ncm_cgroup_naming_systemd, &n);
        assert_string_equal(p, "/kubepods.slice/kubepods-podab_cd.slice");
        free(p);
        p = path_of(&ncm_cgroup_naming_cgroupfs, &n);
        assert_string_equal(p, "/kubepods/podab-cd");
        free(p);
        ncm_cgroup_name_done(&n);
        assert_int_equal(ncm_cgroup_pod_name("/", true, NCM_QOS_BEST_EFFORT, "x", &n, NULL), 0);
        p = path_of(&ncm_cgroup_naming_cgroupfs, &n);
        assert_string_equal(p, "/kubepods/besteffort/podx");
        free(p);
        ncm_cgroup_name_done(&n);

        assert_int_equal(ncm_cgroup_pod_name("/", true, NCM_QOS_BURSTABLE, "", &n, &err), -EINVAL);
        assert_int_equal(ncm_cgroup_pod_name("/", true, NCM_QOS_BURSTABLE, "a_b", &n, &err),
                         -EINVAL);
        assert_non_null(strstr(err.msg, "pod uid 'a_b'"));
        assert_int_equal(ncm_cgroup_qos_names("/a_b", true, &n, NULL, NULL, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "invalid character in component [\"a_b\"]"));
        assert_int_equal(ncm_cgroup_qos_names("/a/../b", true, &n, NULL, NULL, &err), -EINVAL);
}

static void test_cgroup_naming_container_paths(void **state)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm_cgroup_naming_container_path(&ncm_cgroup_naming_cgroupfs,
                                                          "/kubepods/podx", "app", &b, NULL),
                         0);
        assert_string_equal(b.data, "/kubepods/podx/app");
        ncm_buf_reset(&b);
        assert_int_equal(ncm_cgroup_naming_container_path(&ncm_cgroup_naming_systemd,
                                                          "/kubepods.slice/kubepods-podx.slice",
                                                          "app", &b, NULL),
                         0);
        assert_string_equal(b.data, "/kubepods.slice/kubepods-podx.slice/nodecm-app.scope");
        ncm_buf_reset(&b);
        assert_int_equal(ncm_cgroup_naming_container_path(&ncm_cgroup_naming_cgroupfs, "/p", "..",
                                                          &b, &err),
                         -EINVAL);
        assert_int_equal(ncm_cgroup_naming_container_path(&ncm_cgroup_naming_cgroupfs, "/p", "a/b",
                                                          &b, &err),
                         -EINVAL);
        ncm_buf_done(&b);
        assert_ptr_equal(ncm_cgroup_naming_by_name("systemd"), &ncm_cgroup_naming_systemd);
        assert_ptr_equal(ncm_cgroup_naming_by_name("cgroupfs"), &ncm_cgroup_naming_cgroupfs);
        assert_null(ncm_cgroup_naming_by_name("Systemd"));
}

/* Names survive a trip through either driver (no '_' in components, by construction). */
static void test_cgroup_naming_round_trip(void **state)
{
        static const char *const comps[] = {"kubepods", "burstable",
                                            "pod6c1a4e95-6bb6-11e6-bc26-28d2444e470d", "a-b-c",
                                            "x"};
        (void)state;
        for (size_t len = 1; len <= NCM_ELEMENTSOF(comps); len++) {
                const ncm_cgroup_naming_ops *drivers[] = {&ncm_cgroup_naming_cgroupfs,
                                                          &ncm_cgroup_naming_systemd};
                ncm_cgroup_name n = NCM_CGROUP_NAME_INIT;
                for (size_t i = 0; i < len; i++)
                        assert_int_equal(ncm_cgroup_name_append(&n, comps[i], NULL), 0);
                for (size_t d = 0; d < 2; d++) {
                        ncm_cgroup_name back = NCM_CGROUP_NAME_INIT;
                        char *p = path_of(drivers[d], &n);
                        assert_int_equal(ncm_cgroup_naming_from_path(drivers[d], p, &back, NULL),
                                         0);
                        if (!ncm_cgroup_name_equal(&n, &back))
                                fail_msg("%s: %s did not read back",
                                         ncm_cgroup_naming_name(drivers[d]), p);
                        ncm_cgroup_name_done(&back);
                        free(p);
                }
                ncm_cgroup_name_done(&n);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cgroup_naming_systemd_basename),
                        cmocka_unit_test(test_cgroup_naming_systemd),
                        cmocka_unit_test(test_cgroup_naming_systemd_empty_parts),
                        cmocka_unit_test(test_cgroup_naming_cgroupfs),
                        cmocka_unit_test(test_cgroup_naming_parse),
                        cmocka_unit_test(test_cgroup_naming_invalid_components),
                        cmocka_unit_test(test_cgroup_naming_format),
                        cmocka_unit_test(test_cgroup_naming_expand_slice),
                        cmocka_unit_test(test_cgroup_naming_qos_hierarchy),
                        cmocka_unit_test(test_cgroup_naming_container_paths),
                        cmocka_unit_test(test_cgroup_naming_round_trip),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
