/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU table: construction rules and errors, kubelet's counts and derived sizes (§2.2/§2.3,
 * including kubelet's own Discover cases), NUMA ids and distances, the cpus_in_* and *_of_cpus
 * queries (also with OUT aliasing the input), and randomized tables checked against a naive
 * scan of the table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topology.h>
#include "testutil.h"

#define CPU(c, co, s, n, u)                                                                        \
        {                                                                                          \
                .cpu = (c), .core = (co), .socket = (s), .numa = (n), .uncore = (u)                \
        }

/* kubelet Test_Discover "OneSocketHT": 4 cores x 2 threads, threads i and i+4. */
static const ncm_cpu_info one_socket_ht[] = {
                CPU(0, 0, 0, 0, 0), CPU(1, 1, 0, 0, 0), CPU(2, 2, 0, 0, 0), CPU(3, 3, 0, 0, 0),
                CPU(4, 0, 0, 0, 0), CPU(5, 1, 0, 0, 0), CPU(6, 2, 0, 0, 0), CPU(7, 3, 0, 0, 0),
};

/* Two sockets, two NUMA nodes each, one L3 per NUMA node, 2 cores x 2 threads per node; the
 * table is given out of order on purpose. */
static ncm_topo *dual_socket(void)
{
        ncm_cpu_info cpus[16];
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        for (int i = 0; i < 16; i++) {
                int cpu = 15 - i;
                int core = cpu % 8; /* threads cpu and cpu + 8 */
                cpus[i] = (ncm_cpu_info){.cpu = cpu,
                                         .core = core,
                                         .socket = core / 4,
                                         .numa = core / 2,
                                         .uncore = 10 + core / 2};
        }
        int ids[] = {3, 1, 0, 2, 5}; /* node 5 has no CPUs */
        /* distances in the order of ids above */
        uint32_t d[25];
        for (int a = 0; a < 5; a++)
                for (int b = 0; b < 5; b++)
                        d[a * 5 + b] = a == b ? 10 : (uint32_t)(20 + ids[a] + ids[b]);
        assert_int_equal(ncm_topo_new(cpus, 16, ids, 5, d, &t, &err), 0);
        return t;
}

static void test_topology_counts_one_socket_ht(void **state)
{
        ncm_topo *t = NULL;
        size_t n;
        (void)state;
        assert_int_equal(ncm_topo_new(one_socket_ht, 8, NULL, 0, NULL, &t, NULL), 0);
        assert_int_equal(ncm_topo_num_cpus(t), 8);
        assert_int_equal(ncm_topo_num_cores(t), 4);
        assert_int_equal(ncm_topo_num_sockets(t), 1);
        assert_int_equal(ncm_topo_num_numa_nodes(t), 1);
        assert_int_equal(ncm_topo_num_uncore_caches(t), 1);
        assert_int_equal(ncm_topo_cpus_per_core(t), 2);
        assert_int_equal(ncm_topo_cpus_per_socket(t), 8);
        assert_int_equal(ncm_topo_cpus_per_uncore(t), 8);
        const int *ids = ncm_topo_numa_ids(t, &n);
        assert_int_equal(n, 1);
        assert_int_equal(ids[0], 0);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 0), 10);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 1), -1);
        ncm_topo_free(t);
}

static void test_topology_table_sorted_and_lookup(void **state)
{
        ncm_topo *t = dual_socket();
        size_t n;
        (void)state;
        const ncm_cpu_info *c = ncm_topo_cpus(t, &n);
        assert_int_equal(n, 16);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(c[i].cpu, (int)i);
        assert_int_equal(ncm_topo_cpu(t, 9)->core, 1);
        assert_int_equal(ncm_topo_cpu(t, 9)->uncore, 10);
        assert_int_equal(ncm_topo_cpu(t, 14)->numa, 3);
        assert_null(ncm_topo_cpu(t, 16));
        assert_null(ncm_topo_cpu(t, -1));
        assert_null(ncm_topo_cpu(t, 100000));
        ncm_topo_free(t);
}

static void test_topology_counts_and_sizes(void **state)
{
        ncm_topo *t = dual_socket();
        (void)state;
        assert_int_equal(ncm_topo_num_cpus(t), 16);
        assert_int_equal(ncm_topo_num_cores(t), 8);
        assert_int_equal(ncm_topo_num_sockets(t), 2);
        /* node 5 has no CPU: kubelet's NumNUMANodes counts only nodes with CPUs */
        assert_int_equal(ncm_topo_num_numa_nodes(t), 4);
        assert_int_equal(ncm_topo_num_uncore_caches(t), 4);
        assert_int_equal(ncm_topo_cpus_per_core(t), 2);
        assert_int_equal(ncm_topo_cpus_per_socket(t), 8);
        assert_int_equal(ncm_topo_cpus_per_uncore(t), 4);
        ncm_topo_free(t);
}

static void test_topology_derived_sizes_are_integer_averages(void **state)
{
        /* 3 CPUs, 2 cores (one with SMT), 2 sockets: 3/2 = 1 everywhere. */
        const ncm_cpu_info cpus[] = {CPU(0, 0, 0, 0, 0), CPU(1, 0, 0, 0, 0), CPU(2, 2, 1, 0, 1)};
        ncm_topo *t = NULL;
        (void)state;
        assert_int_equal(ncm_topo_new(cpus, 3, NULL, 0, NULL, &t, NULL), 0);
        assert_int_equal(ncm_topo_cpus_per_core(t), 1);
        assert_int_equal(ncm_topo_cpus_per_socket(t), 1);
        assert_int_equal(ncm_topo_cpus_per_uncore(t), 1);
        ncm_topo_free(t);
}

static void test_topology_numa_ids_and_distances(void **state)
{
        ncm_topo *t = dual_socket();
        size_t n;
        (void)state;
        const int *ids = ncm_topo_numa_ids(t, &n);
        assert_int_equal(n, 5);
        int expect[] = {0, 1, 2, 3, 5};
        for (size_t i = 0; i < n; i++)
                assert_int_equal(ids[i], expect[i]);
        /* caller order was permuted; the matrix must follow the ids, not positions */
        assert_int_equal(ncm_topo_numa_distance(t, 0, 0), 10);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 1), 21);
        assert_int_equal(ncm_topo_numa_distance(t, 3, 1), 24);
        assert_int_equal(ncm_topo_numa_distance(t, 2, 5), 27);
        assert_int_equal(ncm_topo_numa_distance(t, 5, 5), 10);
        assert_int_equal(ncm_topo_numa_distance(t, 4, 0), -1);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 6), -1);
        assert_int_equal(ncm_topo_numa_distance(t, -1, 0), -1);
        const uint32_t *m = ncm_topo_numa_distances(t, &n);
        assert_int_equal(n, 5);
        assert_int_equal(m[1 * 5 + 4], 26); /* nodes 1 and 5 */
        ncm_topo_free(t);
}

static void test_topology_default_distances(void **state)
{
        const ncm_cpu_info cpus[] = {CPU(0, 0, 0, 0, 0), CPU(1, 1, 0, 2, 0)};
        int ids[] = {2, 0, 1};
        ncm_topo *t = NULL;
        (void)state;
        assert_int_equal(ncm_topo_new(cpus, 2, ids, 3, NULL, &t, NULL), 0);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 0), 10);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 2), 20);
        assert_int_equal(ncm_topo_numa_distance(t, 1, 2), 20);
        assert_int_equal(ncm_topo_num_numa_nodes(t), 2);
        ncm_topo_free(t);
}

static void test_topology_cpus_in_queries(void **state)
{
        ncm_topo *t = dual_socket();
        ncm_autoptr(ncm_cpuset) out = ncm_cpuset_new();
        (void)state;

        ncm_autoptr(ncm_cpuset) n0 = tu_cpuset("0");
        ncm_topo_cpus_in_numa(t, n0, out);
        tu_assert_cpuset(out, "0-1,8-9");
        ncm_autoptr(ncm_cpuset) n13 = tu_cpuset("1,3,5,4000");
        ncm_topo_cpus_in_numa(t, n13, out);
        tu_assert_cpuset(out, "2-3,6-7,10-11,14-15");

        ncm_autoptr(ncm_cpuset) s1 = tu_cpuset("1");
        ncm_topo_cpus_in_sockets(t, s1, out);
        tu_assert_cpuset(out, "4-7,12-15");
        ncm_autoptr(ncm_cpuset) s9 = tu_cpuset("9");
        ncm_topo_cpus_in_sockets(t, s9, out);
        tu_assert_cpuset(out, "");

        ncm_autoptr(ncm_cpuset) c = tu_cpuset("0,3,7,8");
        ncm_topo_cpus_in_cores(t, c, out);
        tu_assert_cpuset(out, "0,3,7-8,11,15");

        ncm_autoptr(ncm_cpuset) u = tu_cpuset("11-12");
        ncm_topo_cpus_in_uncore(t, u, out);
        tu_assert_cpuset(out, "2-5,10-13");

        ncm_autoptr(ncm_cpuset) none = ncm_cpuset_new();
        ncm_topo_cpus_in_uncore(t, none, out);
        tu_assert_cpuset(out, "");

        ncm_topo_all_cpus(t, out);
        tu_assert_cpuset(out, "0-15");
        tu_assert_cpuset(ncm_topo_all_cpus_ref(t), "0-15");
        ncm_topo_free(t);
}

static void test_topology_queries_accept_out_aliasing_ids(void **state)
{
        ncm_topo *t = dual_socket();
        (void)state;
        ncm_autoptr(ncm_cpuset) s = tu_cpuset("0,3");
        ncm_topo_cpus_in_numa(t, s, s);
        tu_assert_cpuset(s, "0-1,6-9,14-15");
        ncm_topo_free(t);
        t = dual_socket();
        ncm_autoptr(ncm_cpuset) c = tu_cpuset("1,2");
        ncm_topo_cpus_in_cores(t, c, c);
        tu_assert_cpuset(c, "1-2,9-10");
        ncm_autoptr(ncm_cpuset) so = tu_cpuset("1");
        ncm_topo_cpus_in_sockets(t, so, so);
        tu_assert_cpuset(so, "4-7,12-15");
        ncm_autoptr(ncm_cpuset) u = tu_cpuset("13");
        ncm_topo_cpus_in_uncore(t, u, u);
        tu_assert_cpuset(u, "6-7,14-15");
        ncm_autoptr(ncm_cpuset) k = tu_cpuset("5,14");
        ncm_topo_numa_of_cpus(t, k, k);
        tu_assert_cpuset(k, "2-3");
        ncm_topo_free(t);
}

static void test_topology_ids_of_cpus(void **state)
{
        ncm_topo *t = dual_socket();
        ncm_autoptr(ncm_cpuset) out = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) cpus = tu_cpuset("1,6,13,40");
        (void)state;
        ncm_topo_numa_of_cpus(t, cpus, out);
        tu_assert_cpuset(out, "0,2-3");
        ncm_topo_sockets_of_cpus(t, cpus, out);
        tu_assert_cpuset(out, "0-1");
        ncm_topo_cores_of_cpus(t, cpus, out);
        tu_assert_cpuset(out, "1,5-6");
        ncm_topo_uncore_of_cpus(t, cpus, out);
        tu_assert_cpuset(out, "10,12-13");
        ncm_topo_free(t);
}

static void test_topology_element_refs(void **state)
{
        ncm_topo *t = dual_socket();
        size_t n;
        (void)state;
        tu_assert_cpuset(ncm_topo_numa_cpus(t, 2), "4-5,12-13");
        assert_null(ncm_topo_numa_cpus(t, 5));
        assert_null(ncm_topo_numa_cpus(t, -3));
        tu_assert_cpuset(ncm_topo_socket_cpus(t, 0), "0-3,8-11");
        assert_null(ncm_topo_socket_cpus(t, 2));
        tu_assert_cpuset(ncm_topo_uncore_cpus(t, 13), "6-7,14-15");
        assert_null(ncm_topo_uncore_cpus(t, 0));
        const int *m = ncm_topo_core_cpus(t, 3, &n);
        assert_int_equal(n, 2);
        assert_int_equal(m[0], 3);
        assert_int_equal(m[1], 11);
        assert_null(ncm_topo_core_cpus(t, 9, &n));
        assert_int_equal(n, 0);
        ncm_topo_free(t);
}

static void expect_new_error(const ncm_cpu_info *cpus, size_t n, const int *ids, size_t nn,
                             const uint32_t *d, int code, const char *msg)
{
        ncm_topo *t = (ncm_topo *)0x1;
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_topo_new(cpus, n, ids, nn, d, &t, &err), -code);
        assert_ptr_equal(t, (ncm_topo *)0x1); /* untouched on failure */
        if (strcmp(err.msg, msg) != 0)
                fail_msg("error \"%s\", expected \"%s\"", err.msg, msg);
}

static void test_topology_new_rejects_bad_tables(void **state)
{
        (void)state;
        expect_new_error(NULL, 0, NULL, 0, NULL, EINVAL, "could not detect number of cpus");
        const ncm_cpu_info dup[] = {CPU(0, 0, 0, 0, 0), CPU(1, 1, 0, 0, 0), CPU(0, 0, 0, 0, 0)};
        expect_new_error(dup, 3, NULL, 0, NULL, EINVAL, "cpus[2].cpu: duplicate cpu 0");
        const ncm_cpu_info big[] = {CPU(0, 0, 0, 0, 0), CPU(8192, 0, 0, 0, 0)};
        expect_new_error(big, 2, NULL, 0, NULL, ERANGE,
                         "cpus[1].cpu: 8192 is out of range [0, 8191]");
        const ncm_cpu_info neg[] = {CPU(0, 0, -1, 0, 0)};
        expect_new_error(neg, 1, NULL, 0, NULL, ERANGE,
                         "cpus[0].socket: -1 is out of range [0, 8191]");
        const ncm_cpu_info un[] = {CPU(0, 0, 0, 0, 9000)};
        expect_new_error(un, 1, NULL, 0, NULL, ERANGE,
                         "cpus[0].uncore: 9000 is out of range [0, 8191]");
        const ncm_cpu_info n1[] = {CPU(0, 0, 0, 0, 0), CPU(1, 1, 0, 1, 0)};
        int only0[] = {0};
        expect_new_error(n1, 2, only0, 1, NULL, EINVAL,
                         "cpu 1: NUMA node 1 is not in the list of NUMA nodes");
        int dupn[] = {0, 1, 0};
        expect_new_error(n1, 2, dupn, 3, NULL, EINVAL, "numa[2].id: duplicate NUMA node 0");
        int badn[] = {0, -2};
        expect_new_error(n1, 2, badn, 2, NULL, ERANGE, "numa[1].id: -2 is out of range [0, 8191]");
        uint32_t d[] = {10};
        expect_new_error(n1, 2, NULL, 0, d, EINVAL,
                         "NUMA distances given without the list of NUMA nodes");
}

static void test_topology_equal(void **state)
{
        ncm_topo *a = dual_socket(), *b = dual_socket(), *c = NULL;
        (void)state;
        assert_true(ncm_topo_equal(a, b));
        assert_int_equal(ncm_topo_new(one_socket_ht, 8, NULL, 0, NULL, &c, NULL), 0);
        assert_false(ncm_topo_equal(a, c));
        ncm_topo_free(a);
        ncm_topo_free(b);
        ncm_topo_free(c);
        assert_null(ncm_topo_free(NULL));
}

/* Random sparse tables, every query checked against a scan of the table. */
static void test_topology_random_tables_match_naive_scan(void **state)
{
        (void)state;
        srand(12345);
        for (int round = 0; round < 60; round++) {
                size_t n = 1 + (size_t)(rand() % 300);
                ncm_cpu_info *cpus = calloc(n, sizeof(*cpus));
                ncm_autoptr(ncm_cpuset) used = ncm_cpuset_new();
                ncm_topo *t = NULL;
                ncm_error err = NCM_ERROR_INIT;
                assert_non_null(cpus);
                for (size_t i = 0; i < n; i++) {
                        int c;
                        do
                                c = rand() % (round % 3 == 0 ? 8192 : 1024);
                        while (ncm_cpuset_isset(used, c));
                        ncm_cpuset_set(used, c);
                        cpus[i] = (ncm_cpu_info){c, rand() % 400, rand() % 9, rand() % 70,
                                                 rand() % 8192};
                }
                if (ncm_topo_new(cpus, n, NULL, 0, NULL, &t, &err) < 0)
                        fail_msg("%s", err.msg);
                for (int q = 0; q < 20; q++) {
                        ncm_autoptr(ncm_cpuset) ids = ncm_cpuset_new();
                        ncm_autoptr(ncm_cpuset) got = ncm_cpuset_new();
                        ncm_autoptr(ncm_cpuset) want = ncm_cpuset_new();
                        int kind = q % 4;
                        for (int k = 0; k < 1 + rand() % 10; k++)
                                ncm_cpuset_set(ids, rand() % (kind == 3 ? 8192 : 400));
                        for (size_t i = 0; i < n; i++) {
                                int id = kind == 0   ? cpus[i].numa
                                         : kind == 1 ? cpus[i].socket
                                         : kind == 2 ? cpus[i].core
                                                     : cpus[i].uncore;
                                if (ncm_cpuset_isset(ids, id))
                                        ncm_cpuset_set(want, cpus[i].cpu);
                        }
                        if (kind == 0)
                                ncm_topo_cpus_in_numa(t, ids, got);
                        else if (kind == 1)
                                ncm_topo_cpus_in_sockets(t, ids, got);
                        else if (kind == 2)
                                ncm_topo_cpus_in_cores(t, ids, got);
                        else
                                ncm_topo_cpus_in_uncore(t, ids, got);
                        assert_true(ncm_cpuset_equal(got, want));
                }
                free(cpus);
                ncm_topo_free(t);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_topology_counts_one_socket_ht),
                        cmocka_unit_test(test_topology_table_sorted_and_lookup),
                        cmocka_unit_test(test_topology_counts_and_sizes),
                        cmocka_unit_test(test_topology_derived_sizes_are_integer_averages),
                        cmocka_unit_test(test_topology_numa_ids_and_distances),
                        cmocka_unit_test(test_topology_default_distances),
                        cmocka_unit_test(test_topology_cpus_in_queries),
                        cmocka_unit_test(test_topology_queries_accept_out_aliasing_ids),
                        cmocka_unit_test(test_topology_ids_of_cpus),
                        cmocka_unit_test(test_topology_element_refs),
                        cmocka_unit_test(test_topology_new_rejects_bad_tables),
                        cmocka_unit_test(test_topology_equal),
                        cmocka_unit_test(test_topology_random_tables_match_naive_scan),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
