/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU table: construction rules and errors, kubelet's counts and derived sizes (§2.2/§2.3,
 * including kubelet's own Discover cases), NUMA ids and distances, the element tables and
 * their queries with the kernel's raw ids (negative, sparse, 64-bit), the core queries (also
 * with OUT aliasing the input), and randomized tables checked against a naive scan.
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

/* The ids of LEVEL holding CPUS, as "a,b,c". */
static void assert_ids_of(const ncm_topo *t, ncm_topo_level lv, const char *cpus, const char *want)
{
        ncm_autoptr(ncm_cpuset) s = tu_cpuset(cpus);
        int64_t ids[64];
        char got[256] = "";
        size_t n = ncm_topo_ids_of_cpus(t, lv, s, ids);
        for (size_t i = 0; i < n; i++)
                snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%lld", i ? "," : "",
                         (long long)ids[i]);
        if (strcmp(got, want) != 0)
                fail_msg("ids of %s: \"%s\", expected \"%s\"", cpus, got, want);
}

static void test_topology_cpus_of_ids(void **state)
{
        ncm_topo *t = dual_socket();
        ncm_autoptr(ncm_cpuset) out = ncm_cpuset_new();
        (void)state;

        ncm_topo_cpus_of_ids(t, NCM_TOPO_NUMA, (const int64_t[]){0}, 1, out);
        tu_assert_cpuset(out, "0-1,8-9");
        ncm_topo_cpus_of_ids(t, NCM_TOPO_NUMA, (const int64_t[]){1, 3, 5, 4000}, 4, out);
        tu_assert_cpuset(out, "2-3,6-7,10-11,14-15");
        ncm_topo_cpus_of_ids(t, NCM_TOPO_SOCKET, (const int64_t[]){1}, 1, out);
        tu_assert_cpuset(out, "4-7,12-15");
        ncm_topo_cpus_of_ids(t, NCM_TOPO_SOCKET, (const int64_t[]){9, -1}, 2, out);
        tu_assert_cpuset(out, "");
        ncm_topo_cpus_of_ids(t, NCM_TOPO_UNCORE, (const int64_t[]){11, 12}, 2, out);
        tu_assert_cpuset(out, "2-5,10-13");
        ncm_topo_cpus_of_ids(t, NCM_TOPO_UNCORE, NULL, 0, out);
        tu_assert_cpuset(out, "");

        ncm_autoptr(ncm_cpuset) c = tu_cpuset("0,3,7,8");
        ncm_topo_cpus_in_cores(t, c, out);
        tu_assert_cpuset(out, "0,3,7-8,11,15");
        ncm_topo_cpus_in_cores(t, c, c); /* OUT may be IDS */
        tu_assert_cpuset(c, "0,3,7-8,11,15");

        ncm_topo_all_cpus(t, out);
        tu_assert_cpuset(out, "0-15");
        tu_assert_cpuset(ncm_topo_all_cpus_ref(t), "0-15");
        ncm_topo_free(t);
}

static void test_topology_ids_of_cpus(void **state)
{
        ncm_topo *t = dual_socket();
        ncm_autoptr(ncm_cpuset) out = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) cpus = tu_cpuset("1,6,13,40");
        (void)state;
        assert_ids_of(t, NCM_TOPO_NUMA, "1,6,13,40", "0,2,3");
        assert_ids_of(t, NCM_TOPO_SOCKET, "1,6,13,40", "0,1");
        assert_ids_of(t, NCM_TOPO_UNCORE, "1,6,13,40", "10,12,13");
        assert_ids_of(t, NCM_TOPO_UNCORE, "", "");
        ncm_topo_cores_of_cpus(t, cpus, out);
        tu_assert_cpuset(out, "1,5-6");
        ncm_topo_cores_of_cpus(t, cpus, cpus); /* OUT may be CPUS */
        tu_assert_cpuset(cpus, "1,5-6");
        ncm_topo_free(t);
}

/*
 * The kernel's ids as they come: -1 on s390 and POWER7, 36 and 8442 on a Kunpeng 920,
 * 196611 on Itanium, a 32-bit cache id. Kept verbatim, sorted with -1 first (as Go sorts),
 * looked up by id, and the dense indices follow that order.
 */
static void test_topology_raw_ids(void **state)
{
        const ncm_cpu_info cpus[] = {
                        CPU(0, 0, 8442, 36, INT64_C(4294967295)),
                        CPU(1, 1, 8442, 36, INT64_C(4294967295)),
                        CPU(2, 2, -1, -1, -1),
                        CPU(3, 3, 196611, 983297, INT64_C(196611)),
                        CPU(4, 4, -1, -1, INT64_C(-1)),
        };
        int numa[] = {983297, -1, 36, 70000};
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        size_t n;
        (void)state;
        if (ncm_topo_new(cpus, 5, numa, 4, NULL, &t, &err) < 0)
                fail_msg("%s", err.msg);
        const int64_t *s = ncm_topo_level_ids(t, NCM_TOPO_SOCKET, &n);
        assert_int_equal(n, 3);
        assert_int_equal(s[0], -1);
        assert_int_equal(s[1], 8442);
        assert_int_equal(s[2], 196611);
        const int64_t *u = ncm_topo_level_ids(t, NCM_TOPO_UNCORE, &n);
        assert_int_equal(n, 3);
        assert_true(u[2] == INT64_C(4294967295));
        const int *ids = ncm_topo_numa_ids(t, &n);
        assert_int_equal(n, 4);
        assert_int_equal(ids[0], -1);
        assert_int_equal(ids[3], 983297);
        assert_int_equal(ncm_topo_num_numa_nodes(t), 3);
        assert_int_equal(ncm_topo_num_sockets(t), 3);
        assert_int_equal(ncm_topo_level_index(t, NCM_TOPO_SOCKET, -1), 0);
        assert_int_equal(ncm_topo_level_index(t, NCM_TOPO_SOCKET, 196611), 2);
        assert_int_equal(ncm_topo_level_index(t, NCM_TOPO_SOCKET, 0), -1);
        assert_int_equal(ncm_topo_level_of_cpu(t, NCM_TOPO_NUMA, 3), 2);
        assert_int_equal(ncm_topo_level_of_cpu(t, NCM_TOPO_NUMA, 9), -1);
        tu_assert_cpuset(ncm_topo_level_cpus(t, NCM_TOPO_NUMA, 0), "2,4");
        assert_null(ncm_topo_level_cpus(t, NCM_TOPO_NUMA, 3));
        tu_assert_cpuset(ncm_topo_socket_cpus(t, -1), "2,4");
        tu_assert_cpuset(ncm_topo_numa_cpus(t, 36), "0-1");
        assert_null(ncm_topo_numa_cpus(t, 70000)); /* listed, but without CPUs */
        tu_assert_cpuset(ncm_topo_uncore_cpus(t, INT64_C(4294967295)), "0-1");
        assert_int_equal(ncm_topo_numa_distance(t, -1, 983297), 20);
        assert_ids_of(t, NCM_TOPO_NUMA, "0-4", "-1,36,983297");
        assert_ids_of(t, NCM_TOPO_UNCORE, "0,3", "196611,4294967295");
        ncm_topo_free(t);
}

/* An empty table is the kubelet's view of a machine whose CPUs cadvisor cannot place. */
static void test_topology_empty_table(void **state)
{
        ncm_topo *t = NULL;
        ncm_autoptr(ncm_cpuset) out = ncm_cpuset_new();
        size_t n = 9;
        (void)state;
        assert_int_equal(ncm_topo_new(NULL, 0, NULL, 0, NULL, &t, NULL), 0);
        assert_int_equal(ncm_topo_num_cpus(t), 0);
        assert_int_equal(ncm_topo_num_sockets(t), 0);
        assert_int_equal(ncm_topo_cpus_per_core(t), 0);
        (void)ncm_topo_numa_ids(t, &n);
        assert_int_equal(n, 0);
        assert_null(ncm_topo_cpu(t, 0));
        ncm_topo_cores_of_cpus(t, ncm_topo_all_cpus_ref(t), out);
        tu_assert_cpuset(out, "");
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
        assert_int_equal(ncm_topo_level_index(t, NCM_TOPO_UNCORE, 12), 2);
        tu_assert_cpuset(ncm_topo_level_cpus(t, NCM_TOPO_UNCORE, 2), "4-5,12-13");
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
        const ncm_cpu_info dup[] = {CPU(0, 0, 0, 0, 0), CPU(1, 1, 0, 0, 0), CPU(0, 0, 0, 0, 0)};
        expect_new_error(dup, 3, NULL, 0, NULL, EINVAL, "cpus[2].cpu: duplicate cpu 0");
        const ncm_cpu_info big[] = {CPU(0, 0, 0, 0, 0), CPU(8192, 0, 0, 0, 0)};
        expect_new_error(big, 2, NULL, 0, NULL, ERANGE,
                         "cpus[1].cpu: 8192 is out of range [0, 8191]");
        const ncm_cpu_info core[] = {CPU(0, 0, 0, 0, 0), CPU(1, -1, 0, 0, 0)};
        expect_new_error(core, 2, NULL, 0, NULL, ERANGE,
                         "cpus[1].core: -1 is out of range [0, 8191]");
        const ncm_cpu_info n1[] = {CPU(0, 0, 0, 0, 0), CPU(1, 1, 0, 1, 0)};
        int only0[] = {0};
        expect_new_error(n1, 2, only0, 1, NULL, EINVAL,
                         "cpu 1: NUMA node 1 is not in the list of NUMA nodes");
        int dupn[] = {0, 1, 0};
        expect_new_error(n1, 2, dupn, 3, NULL, EINVAL, "numa[2].id: duplicate NUMA node 0");
        int dupneg[] = {-2, 1, 0, -2};
        expect_new_error(n1, 2, dupneg, 4, NULL, EINVAL, "numa[3].id: duplicate NUMA node -2");
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

/* Random tables with arbitrary ids, every query checked against a scan of the table. */
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
                /* small id ranges give collisions; wide ones sparse and negative ids */
                int64_t spread = round % 2 ? 9 : 2000000;
                assert_non_null(cpus);
                for (size_t i = 0; i < n; i++) {
                        int c;
                        do
                                c = rand() % (round % 3 == 0 ? 8192 : 1024);
                        while (ncm_cpuset_isset(used, c));
                        ncm_cpuset_set(used, c);
                        cpus[i] = (ncm_cpu_info){
                                        c, rand() % 400, (int)(rand() % spread - spread / 2),
                                        (int)(rand() % spread - 1), (int64_t)rand() * 4 - spread};
                }
                if (ncm_topo_new(cpus, n, NULL, 0, NULL, &t, &err) < 0)
                        fail_msg("%s", err.msg);
                for (int q = 0; q < 20; q++) {
                        ncm_autoptr(ncm_cpuset) got = ncm_cpuset_new();
                        ncm_autoptr(ncm_cpuset) want = ncm_cpuset_new();
                        ncm_autoptr(ncm_cpuset) core_ids = ncm_cpuset_new();
                        int64_t ids[12];
                        size_t nid = 1 + (size_t)(rand() % 10);
                        int kind = q % 4;
                        for (size_t k = 0; k < nid; k++) {
                                /* half of the ids are taken from the table, half made up */
                                const ncm_cpu_info *ci = &cpus[(size_t)rand() % n];
                                int64_t from = kind == 0   ? ci->numa
                                               : kind == 1 ? ci->socket
                                               : kind == 2 ? ci->core
                                                           : ci->uncore;
                                ids[k] = rand() % 2 ? from : rand() % 400;
                                if (kind == 2)
                                        ncm_cpuset_set(core_ids, (int)ids[k]);
                        }
                        for (size_t i = 0; i < n; i++) {
                                int64_t id = kind == 0   ? cpus[i].numa
                                             : kind == 1 ? cpus[i].socket
                                             : kind == 2 ? cpus[i].core
                                                         : cpus[i].uncore;
                                for (size_t k = 0; k < nid; k++)
                                        if (ids[k] == id)
                                                ncm_cpuset_set(want, cpus[i].cpu);
                        }
                        if (kind == 2)
                                ncm_topo_cpus_in_cores(t, core_ids, got);
                        else
                                ncm_topo_cpus_of_ids(t,
                                                     kind == 0   ? NCM_TOPO_NUMA
                                                     : kind == 1 ? NCM_TOPO_SOCKET
                                                                 : NCM_TOPO_UNCORE,
                                                     ids, nid, got);
                        assert_true(ncm_cpuset_equal(got, want));
                }
                /* ids_of_cpus: ascending, distinct, and exactly the ids of the CPUs given */
                for (int lv = 0; lv < NCM_TOPO_N_LEVELS; lv++) {
                        int64_t *ids = malloc(n * sizeof(*ids));
                        size_t m;
                        assert_non_null(ids);
                        m = ncm_topo_ids_of_cpus(t, (ncm_topo_level)lv, used, ids);
                        for (size_t k = 1; k < m; k++)
                                assert_true(ids[k - 1] < ids[k]);
                        for (size_t i = 0; i < n; i++) {
                                int64_t id = lv == NCM_TOPO_NUMA     ? cpus[i].numa
                                             : lv == NCM_TOPO_SOCKET ? cpus[i].socket
                                                                     : cpus[i].uncore;
                                int e = ncm_topo_level_of_cpu(t, (ncm_topo_level)lv, cpus[i].cpu);
                                assert_true(e >= 0 && (size_t)e < m && ids[e] == id);
                                assert_int_equal(ncm_topo_level_index(t, (ncm_topo_level)lv, id),
                                                 e);
                        }
                        free(ids);
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
                        cmocka_unit_test(test_topology_cpus_of_ids),
                        cmocka_unit_test(test_topology_ids_of_cpus),
                        cmocka_unit_test(test_topology_raw_ids),
                        cmocka_unit_test(test_topology_empty_table),
                        cmocka_unit_test(test_topology_element_refs),
                        cmocka_unit_test(test_topology_new_rejects_bad_tables),
                        cmocka_unit_test(test_topology_equal),
                        cmocka_unit_test(test_topology_random_tables_match_naive_scan),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
