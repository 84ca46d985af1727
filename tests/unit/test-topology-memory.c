/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory per NUMA node: cadvisor's meminfo and hugepage readers (pure parsers and real dumps),
 * the topology JSON "memory"/"hugepages" fields both ways, hwloc's synthetic "memory=", and
 * nodecm's override syntax.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "testutil.h"
#include "topology/topology-internal.h"

static void test_topology_memory_meminfo_parser(void **state)
{
        static const struct {
                const char *text;
                int r;
                uint64_t bytes;
        } cases[] = {
                        {"Node 0 MemTotal:        2096684 kB\nNode 0 MemFree: 1 kB\n", 0,
                         2096684ull * 1024},
                        {"MemTotal:5 kB", 0, 5120},
                        {"MemTotal:\n\t 7 kB", 0, 7168}, /* \s* crosses lines */
                        {"MemTotal: 7kB", -EINVAL, 0},   /* the space is part of the regexp */
                        {"MemTotal: 7 KB", -EINVAL, 0},  /* so is the case of kB */
                        {"MemTotal: x kB MemTotal: 9 kB", 0, 9216}, /* the first match, not line */
                        {"memtotal: 7 kB", -EINVAL, 0},
                        {"", -EINVAL, 0},
                        {"MemTotal: 99999999999999999999 kB", -ERANGE, 0},
        };
        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint64_t b = 0;
                int r = ncm__mem_meminfo_total(cases[i].text, strlen(cases[i].text), &b);
                if (r != cases[i].r)
                        fail_msg("case %zu: %d, expected %d", i, r, cases[i].r);
                if (r == 0 && b != cases[i].bytes)
                        fail_msg("case %zu: %llu bytes", i, (unsigned long long)b);
        }
}

static void test_topology_memory_hugepages_name(void **state)
{
        uint64_t kib = 0;
        (void)state;
        assert_int_equal(ncm__mem_hugepages_size("hugepages-2048kB", &kib), 0);
        assert_int_equal(kib, 2048);
        assert_int_equal(ncm__mem_hugepages_size("hugepages-1048576kB", &kib), 0);
        assert_int_equal(kib, 1048576);
        assert_int_equal(ncm__mem_hugepages_size("hugepages-64", &kib), 0);
        assert_int_equal(kib, 64);
        assert_int_equal(ncm__mem_hugepages_size("hugepages", &kib), -EINVAL);
        assert_int_equal(ncm__mem_hugepages_size("hugepages-kB", &kib), -EINVAL);
        assert_int_equal(ncm__mem_hugepages_size("hugepages-2MB", &kib), -EINVAL);
        assert_int_equal(ncm__mem_hugepages_size("hugepages-99999999999999999999kB", &kib),
                         -ERANGE);
}

static ncm_topo *discover(const char *root)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_topo *t = NULL;
        int fd = ncm_fs_open_root(root, &err);
        if (fd < 0 || ncm_topo_discover_sysfs(fd, &t, &err) < 0)
                fail_msg("%s: %s", root, err.msg);
        close(fd);
        return t;
}

/* A real dump with 2 MiB pools on every node: cadvisor's numbers, node by node. */
static void test_topology_memory_real_dump(void **state)
{
        char *tmp = NULL;
        char *root = tu_extract_topology("16amd64-4n4c-cgroup-distance-merge", &tmp);
        ncm_topo *t = discover(root);
        const ncm_hugepages *hp;
        size_t n;
        (void)state;
        assert_true(ncm_topo_has_memory(t));
        assert_int_equal(ncm_topo_numa_memory(t, 0, &hp, &n), 8589201408ull);
        assert_int_equal(n, 1);
        assert_int_equal(hp[0].page_size, 2048);
        assert_int_equal(hp[0].num_pages, 512);
        assert_int_equal(ncm_topo_numa_memory(t, 1, &hp, &n), 8589934592ull);
        assert_int_equal(ncm_topo_numa_memory(t, 42, &hp, &n), 0);
        assert_int_equal(n, 0);
        ncm_topo_free(t);
        tu_rm_rf(tmp);
        free(tmp);
        free(root);
}

/* cadvisor's failures name the file; a missing meminfo or hugepages directory is no error. */
static void test_topology_memory_damaged(void **state)
{
        char *tmp = NULL;
        char *root = tu_extract_topology("16amd64-4n4c-cgroup-distance-merge", &tmp);
        char path[1024];
        ncm_error err = NCM_ERROR_INIT;
        ncm_topo *t = NULL;
        int fd;
        (void)state;

        snprintf(path, sizeof(path), "%s/sys/devices/system/node/node1/meminfo", root);
        assert_int_equal(unlink(path), 0);
        snprintf(path, sizeof(path), "%s/sys/devices/system/node/node2/hugepages", root);
        tu_rm_rf(path);
        t = discover(root);
        assert_int_equal(ncm_topo_numa_memory(t, 1, NULL, NULL), 0);
        {
                size_t n = 9;
                (void)ncm_topo_numa_memory(t, 2, NULL, &n);
                assert_int_equal(n, 0);
        }
        t = ncm_topo_free(t);

        snprintf(path, sizeof(path), "%s/sys/devices/system/node/node0/meminfo", root);
        tu_write_file(path, "Node 0 MemFree: 1 kB\n");
        fd = ncm_fs_open_root(root, &err);
        assert_int_equal(ncm_topo_discover_sysfs(fd, &t, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "node0/meminfo"));
        tu_write_file(path, "Node 0 MemTotal: 4 kB\n");
        snprintf(path, sizeof(path),
                 "%s/sys/devices/system/node/node3/hugepages/hugepages-2048kB/nr_hugepages", root);
        tu_write_file(path, "lots\n");
        err = (ncm_error)NCM_ERROR_INIT;
        assert_int_equal(ncm_topo_discover_sysfs(fd, &t, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "could not parse file nr_hugepage for hugepages-2048kB"));
        close(fd);
        tu_rm_rf(tmp);
        free(tmp);
        free(root);
}

static void test_topology_memory_json_round_trip(void **state)
{
        static const char text[] =
                        "{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                        "\"uncore\": 0},"
                        "{\"cpu\": 1, \"core\": 1, \"socket\": 0, \"numa\": 1, \"uncore\": 0}],"
                        "\"numa\": [{\"id\": 0, \"memory\": 1024, \"hugepages\": [{\"page_size\": "
                        "1048576, \"num_pages\": 4}, {\"page_size\": 2048, \"num_pages\": 8}]},"
                        "{\"id\": 1, \"memory\": 2048}]}";
        ncm_error err = NCM_ERROR_INIT;
        ncm_topo *t = NULL, *u = NULL;
        ncm_buf b = NCM_BUF_INIT;
        const ncm_hugepages *hp;
        size_t n;
        (void)state;
        if (ncm_topo_parse_json(text, sizeof(text) - 1, "t.json", &t, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(ncm_topo_numa_memory(t, 0, &hp, &n), 1024);
        assert_int_equal(n, 2);
        assert_int_equal(hp[0].page_size, 2048); /* sorted by page size */
        assert_int_equal(hp[1].num_pages, 4);
        ncm_topo_format_json(t, &b);
        assert_non_null(strstr(b.data, "\"memory\": 1024, \"hugepages\": [{\"page_size\": 2048, "
                                       "\"num_pages\": 8}, {\"page_size\": 1048576, "
                                       "\"num_pages\": 4}]"));
        assert_non_null(strstr(b.data, "\"memory\": 2048, \"hugepages\": []"));
        if (ncm_topo_parse_json(b.data, b.len, "again", &u, &err) < 0)
                fail_msg("%s", err.msg);
        assert_true(ncm_topo_equal(t, u));
        ncm_buf_done(&b);
        ncm_topo_free(u);
        ncm_topo_free(t);
}

static void test_topology_memory_json_errors(void **state)
{
        static const struct {
                const char *numa;
                const char *msg;
        } cases[] = {
                        {"[{\"id\": 0, \"memory\": -1}]", "numa[0].memory"},
                        {"[{\"id\": 0, \"memory\": \"1Gi\"}]", "numa[0].memory"},
                        {"[{\"id\": 0, \"hugepages\": {}}]", "numa[0].hugepages"},
                        {"[{\"id\": 0, \"hugepages\": [{\"page_size\": 0, \"num_pages\": 1}]}]",
                         "numa[0].hugepages[0].page_size"},
                        {"[{\"id\": 0, \"hugepages\": [{\"page_size\": 4}]}]",
                         "numa[0].hugepages[0].num_pages: missing"},
                        {"[{\"id\": 0, \"hugepages\": [{\"page_size\": 4, \"num_pages\": 1, \"x\": "
                         "1}]}]",
                         "numa[0].hugepages[0].x: unknown field"},
                        {"[{\"id\": 0, \"hugepages\": [{\"page_size\": 4, \"num_pages\": 1}, "
                         "{\"page_size\": 4, \"num_pages\": 2}]}]",
                         "page size 4 also in [0]"},
        };
        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char text[512];
                ncm_error err = NCM_ERROR_INIT;
                ncm_topo *t = NULL;
                snprintf(text, sizeof(text),
                         "{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                         "\"uncore\": 0}], \"numa\": %s}",
                         cases[i].numa);
                assert_true(ncm_topo_parse_json(text, strlen(text), "t.json", &t, &err) < 0);
                if (!strstr(err.msg, cases[i].msg))
                        fail_msg("case %zu: %s", i, err.msg);
        }
}

static void test_topology_memory_synthetic_and_spec(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_topo *t = NULL;
        const ncm_hugepages *hp;
        size_t n;
        (void)state;
        assert_int_equal(ncm_topo_from_synthetic("package:2 numa:1 core:2 pu:1", &t, &err), 0);
        assert_false(ncm_topo_has_memory(t));
        assert_int_equal(ncm_topo_numa_memory(t, 0, NULL, NULL), 0);
        t = ncm_topo_free(t);
        assert_int_equal(ncm_topo_from_synthetic("package:2 numa:1(memory=8GiB) core:2 pu:1", &t,
                                                 &err),
                         0);
        assert_int_equal(ncm_topo_numa_memory(t, 1, &hp, &n), 8ull << 30);
        assert_int_equal(n, 0);

        if (ncm_topo_apply_memory_spec(t, "16Gi,hugepages-2Mi=512/1:4Gi,hugepages-1Gi=2", &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(ncm_topo_numa_memory(t, 0, &hp, &n), 16ull << 30);
        assert_int_equal(n, 1);
        assert_int_equal(hp[0].page_size, 2048);
        assert_int_equal(hp[0].num_pages, 512);
        assert_int_equal(ncm_topo_numa_memory(t, 1, &hp, &n), 4ull << 30);
        assert_int_equal(n, 1);
        assert_int_equal(hp[0].page_size, 1048576);

        assert_int_equal(ncm_topo_apply_memory_spec(t, "7:1Gi", &err), -ENOENT);
        assert_non_null(strstr(err.msg, "NUMA node 7"));
        assert_int_equal(ncm_topo_apply_memory_spec(t, "lots", &err), -EINVAL);
        assert_int_equal(ncm_topo_apply_memory_spec(t, "1Gi,hugepages-100=2", &err), -EINVAL);
        assert_int_equal(ncm_topo_apply_memory_spec(t, "1Gi,huge=2", &err), -EINVAL);
        assert_int_equal(ncm_topo_apply_memory_spec(t, "", &err), -EINVAL);
        assert_int_equal(ncm_topo_apply_memory_spec(t, "x:1Gi", &err), -EINVAL);
        assert_int_equal(ncm_topo_apply_memory_spec(t, "1Gi,hugepages-2Mi=1,hugepages-2Mi=2", &err),
                         -EINVAL);
        ncm_topo_free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_topology_memory_meminfo_parser),
                        cmocka_unit_test(test_topology_memory_hugepages_name),
                        cmocka_unit_test(test_topology_memory_real_dump),
                        cmocka_unit_test(test_topology_memory_damaged),
                        cmocka_unit_test(test_topology_memory_json_round_trip),
                        cmocka_unit_test(test_topology_memory_json_errors),
                        cmocka_unit_test(test_topology_memory_synthetic_and_spec),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
