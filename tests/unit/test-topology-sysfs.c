/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sysfs discovery with the kubelet's rules (cadvisor's GetNodesInfo and the kubelet's
 * Discover, the default): every dump of tests/data/topologies against its counts and its
 * golden table (each table also agrees with tests/cli/kubelet-topology.py, an independent
 * model of cadvisor, in test-topology-dumps.sh); each rule on the dumps that exercise it;
 * damaged copies of a small dump, with cadvisor's outcome (an error, or what cadvisor
 * makes of it); Go's readers (Atoi, Sscanf, ParseUint, isCPUOnline) and the pure assembly
 * on hand-made inputs. test-topology-nodecm.c checks the non-default nodecm rules.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "testutil.h"
#include "topology/topology-internal.h"

static int discover_at(const char *root, ncm_topo **ret, ncm_error *err)
{
        int fd = ncm_fs_open_root(root, err);
        int r;
        if (fd < 0)
                return fd;
        r = ncm_topo_discover_sysfs(fd, ret, err);
        close(fd);
        return r;
}

static ncm_topo *discover_ok(const char *root)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (discover_at(root, &t, &err) < 0)
                fail_msg("discovery of %s failed: %s", root, err.msg);
        return t;
}

/*
 * Every dump: the kubelet's CPUs and counts (cores, sockets, NUMA nodes with CPUs, NUMA
 * nodes listed, uncore caches). OVERLAP: a CPU listed in several node directories, so a
 * core's threads may end up in different nodes (the kubelet keeps the last node).
 */
static const struct dump {
        const char *name;
        const char *cpus;
        int cores, sockets, numa_with_cpus, numa_all, uncore;
        bool overlap;
} dumps[] = {
                {"128ia64-17n4s2c", "0-127", 128, 64, 16, 17, 64, false},
                {"16amd64-4n4c-cgroup-distance-merge", "0-15", 16, 4, 4, 4, 4, false},
                {"16amd64-8n2c-cpusets", "0-3,5-15", 15, 8, 8, 8, 8, false},
                {"16amd64-8n2c", "0-15", 16, 8, 8, 8, 8, false},
                {"16em64t-4s2c2t-offlines", "0-1,3-4,6-12,15", 7, 4, 1, 1, 4, false},
                {"16em64t-4s2ca2c-cpusetreorder", "0-15", 16, 4, 1, 1, 4, false},
                {"16ia64-8n2s", "0-15", 8, 8, 8, 8, 8, false},
                {"20s390-2g6s4c", "0-19", 8, 1, 1, 1, 1, false},
                {"256ia64-64n2s2c", "0-255", 256, 128, 64, 64, 128, false},
                {"2arm-2c", "0-1", 2, 1, 1, 1, 1, false},
                {"2i386-2c-nohugepage", "0-1", 2, 1, 1, 1, 1, false},
                {"2i386-2t-hugepagesizecount", "0-1", 1, 1, 1, 1, 1, false},
                {"2pa-pcidomain32bits", "0-1", 2, 2, 1, 1, 2, false},
                {"2ps3-2t", "", 0, 0, 0, 0, 0, false},
                {"32amd64-4s2n4c-cgroup2", "0-31", 32, 4, 8, 8, 4, false},
                {"32em64t-2n8c+dax+nvme+mic+dimms", "0-15", 16, 2, 2, 2, 2, false},
                {"40intel64-4n10c+pci-conflicts", "0-39", 40, 4, 4, 4, 4, false},
                {"48amd64-4pa2n6c-sparse", "0-47", 48, 4, 8, 8, 4, false},
                {"5intel64-hybrid-lakefield", "0-4", 5, 1, 1, 1, 1, false},
                {"64amd64-4p2n4ca2co", "0-63", 64, 4, 8, 8, 4, false},
                {"64fake-4n2s2ca2c2t", "0-63", 32, 8, 4, 4, 8, false},
                {"8em64t-2s2ca2c-buggynuma", "0-7", 8, 2, 8, 8, 2, false},
                {"8em64t-2s2ca2c", "0-7", 8, 2, 1, 1, 2, false},
                {"8em64t-2s4c-asymcaches", "0-7", 8, 2, 1, 1, 2, false},
                {"8ia64-2n2s2c", "0-7", 8, 4, 2, 2, 4, false},
                {"8ia64-2s2c2t", "0-7", 4, 2, 1, 1, 2, false},
                {"fakecpuid1f-64intel64-2p4d2n2c2t", "0-63", 32, 4, 16, 16, 8, false},
                {"fakeheterocpunuma", "0-3,8-23", 10, 2, 3, 6, 2, true},
                {"fakeheteromemtiers", "0-5", 6, 1, 3, 7, 1, false},
                {"fakememinitiators-1np2c+1npp+gi", "0-7", 4, 2, 4, 11, 2, false},
                {"fakepcilocalities", "0-39", 40, 4, 4, 4, 4, false},
                {"memorysidecaches", "0-79", 40, 2, 4, 4, 2, false},
                {"nvidia-dgx-gb10", "0-19", 20, 1, 1, 1, 1, false},
                {"nvidiagpunumanodes", "0-15,88-103", 8, 2, 2, 8, 2, false},
                {"offline-cpu0-node0", "5,7,9,11,13,15,17,19", 8, 1, 1, 1, 1, false},
};

static void check_invariants(const char *name, const ncm_topo *t, bool overlap)
{
        size_t n, nn;
        const ncm_cpu_info *c = ncm_topo_cpus(t, &n);
        const int *ids = ncm_topo_numa_ids(t, &nn);

        for (size_t i = 0; i < n; i++) {
                const ncm_cpu_info *core = ncm_topo_cpu(t, c[i].core);
                bool listed = false;
                if (i > 0 && c[i].cpu <= c[i - 1].cpu)
                        fail_msg("%s: table not sorted at cpu %d", name, c[i].cpu);
                /* core = the lowest thread of the core, itself a CPU of the table */
                if (!core || c[i].core > c[i].cpu)
                        fail_msg("%s: cpu %d has core %d, not a lower thread", name, c[i].cpu,
                                 c[i].core);
                /* without overlapping nodes, a core's threads share its socket and node */
                if (!overlap && (core->core != c[i].core || core->socket != c[i].socket ||
                                 core->numa != c[i].numa))
                        fail_msg("%s: cpu %d and its core %d disagree", name, c[i].cpu, c[i].core);
                for (size_t k = 0; k < nn; k++)
                        listed |= ids[k] == c[i].numa;
                if (!listed)
                        fail_msg("%s: cpu %d in unlisted NUMA node %d", name, c[i].cpu, c[i].numa);
        }
        for (size_t k = 1; k < nn; k++)
                if (ids[k] <= ids[k - 1])
                        fail_msg("%s: NUMA ids not ascending", name);
        for (size_t i = 0; i < nn; i++)
                if (ncm_topo_numa_distance(t, ids[i], ids[i]) < 0)
                        fail_msg("%s: no distance for node %d", name, ids[i]);
}

static void check_round_trip(const char *name, const ncm_topo *t)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_topo *back = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_topo_format_json(t, &b);
        assert_false(ncm_buf_failed(&b));
        if (ncm_topo_parse_json(b.data, b.len, name, &back, &err) < 0)
                fail_msg("%s: JSON does not read back: %s", name, err.msg);
        assert_true(ncm_topo_equal(t, back));
        ncm_topo_free(back);
        ncm_buf_done(&b);
}

static void test_topology_sysfs_every_dump(void **state)
{
        (void)state;
        for (size_t d = 0; d < NCM_ELEMENTSOF(dumps); d++) {
                char *tmp = NULL, rel[256];
                char *root = tu_extract_topology(dumps[d].name, &tmp);
                ncm_topo *t = discover_ok(root);
                ncm_autoptr(ncm_cpuset) all = ncm_cpuset_new();
                ncm_buf b = NCM_BUF_INIT;
                size_t nn;

                ncm_topo_all_cpus(t, all);
                tu_assert_cpuset(all, dumps[d].cpus);
                if (ncm_topo_num_cpus(t) != ncm_cpuset_weight(all) ||
                    ncm_topo_num_cores(t) != dumps[d].cores ||
                    ncm_topo_num_sockets(t) != dumps[d].sockets ||
                    ncm_topo_num_numa_nodes(t) != dumps[d].numa_with_cpus ||
                    ncm_topo_num_uncore_caches(t) != dumps[d].uncore)
                        fail_msg("%s: counts %d cpus %d cores %d sockets %d numa %d uncore",
                                 dumps[d].name, ncm_topo_num_cpus(t), ncm_topo_num_cores(t),
                                 ncm_topo_num_sockets(t), ncm_topo_num_numa_nodes(t),
                                 ncm_topo_num_uncore_caches(t));
                (void)ncm_topo_numa_ids(t, &nn);
                assert_int_equal(nn, dumps[d].numa_all);
                check_invariants(dumps[d].name, t, dumps[d].overlap);
                check_round_trip(dumps[d].name, t);
                /* the whole table, reviewed against the dump (docs/topology.md) */
                ncm_topo_format_json(t, &b);
                snprintf(rel, sizeof(rel), "topologies/golden/%s.json", dumps[d].name);
                tu_assert_golden(rel, b.data);
                ncm_buf_done(&b);
                ncm_topo_free(t);
                tu_rm_rf(tmp);
                free(tmp);
                free(root);
        }
}

/* --- each rule on a dump that exercises it --- */

static ncm_topo *dump_topo(const char *name)
{
        char *tmp = NULL;
        char *root = tu_extract_topology(name, &tmp);
        ncm_topo *t = discover_ok(root);
        tu_rm_rf(tmp);
        free(tmp);
        free(root);
        return t;
}

static void expect_cpu(const ncm_topo *t, int cpu, int core, int socket, int numa, int64_t uncore)
{
        const ncm_cpu_info *c = ncm_topo_cpu(t, cpu);
        if (!c)
                fail_msg("cpu %d is not in the table", cpu);
        if (c->core != core || c->socket != socket || c->numa != numa || c->uncore != uncore)
                fail_msg("cpu %d: core %d socket %d numa %d uncore %lld, expected %d %d %d %lld",
                         cpu, c->core, c->socket, c->numa, (long long)c->uncore, core, socket, numa,
                         (long long)uncore);
}

static void expect_numa_ids(const ncm_topo *t, const int *want, size_t n)
{
        size_t got;
        const int *ids = ncm_topo_numa_ids(t, &got);
        assert_int_equal(got, n);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(ids[i], want[i]);
}

static void test_rule_no_node_directory_groups_by_package(void **state)
{
        /* arm without NUMA: the package (3) is the node; no caches: uncore = the package */
        ncm_topo *t = dump_topo("2arm-2c");
        (void)state;
        expect_cpu(t, 0, 0, 3, 3, 3);
        expect_cpu(t, 1, 1, 3, 3, 3);
        expect_numa_ids(t, (int[]){3}, 1);
        assert_int_equal(ncm_topo_numa_distance(t, 3, 3), 10);
        ncm_topo_free(t);
}

static void test_rule_s390_books_drawers_and_minus_one(void **state)
{
        /* s390: physical_package_id -1 everywhere, core_id repeats across books and drawers;
         * a core is (core_id, package, book, drawer), every id stays -1 */
        ncm_topo *t = dump_topo("20s390-2g6s4c");
        (void)state;
        expect_cpu(t, 0, 0, -1, -1, -1);
        expect_cpu(t, 2, 0, -1, -1, -1);
        expect_cpu(t, 3, 3, -1, -1, -1);
        expect_cpu(t, 6, 3, -1, -1, -1);
        assert_int_equal(ncm_topo_num_cores(t), 8);
        expect_numa_ids(t, (int[]){-1}, 1);
        ncm_topo_free(t);
}

static void test_rule_no_package_file_is_an_empty_table(void **state)
{
        /* PS3: no physical_package_id at all; cadvisor reports no node and the kubelet an
         * empty table (it still counts the CPU directories, so it does not fail) */
        ncm_topo *t = dump_topo("2ps3-2t");
        size_t n;
        (void)state;
        assert_int_equal(ncm_topo_num_cpus(t), 0);
        (void)ncm_topo_numa_ids(t, &n);
        assert_int_equal(n, 0);
        ncm_topo_free(t);
}

static void test_rule_no_core_id_anywhere_fails(void **state)
{
        /* node directories but no core_id: cadvisor finds no CPU and the kubelet stops */
        char *tmp = NULL;
        char *root = tu_extract_topology("4fake-4gr1nu1pu", &tmp);
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(discover_at(root, &t, &err), -EINVAL);
        assert_string_equal(err.msg, "could not detect number of cpus");
        assert_null(t);
        tu_rm_rf(tmp);
        free(tmp);
        free(root);
}

static void test_rule_cpus_of_no_node_are_left_out(void **state)
{
        /* node0 is offline (no directory): its online CPUs 4, 6, .. 20 are no NUMA node's
         * and so not the kubelet's; node 1 keeps its id */
        ncm_topo *t = dump_topo("offline-cpu0-node0");
        (void)state;
        assert_null(ncm_topo_cpu(t, 4));
        expect_cpu(t, 5, 5, 1, 1, 1);
        expect_numa_ids(t, (int[]){1}, 1);
        ncm_topo_free(t);
}

static void test_rule_cpumap_and_last_node_wins(void **state)
{
        /* no cpuM links, no cpulist: the nodes' cpumaps. CPUs 4-7 are in no node; 16-23 are
         * in nodes 3, 4 and 5 and the last (node5, glob order) keeps them */
        ncm_topo *t = dump_topo("fakeheterocpunuma");
        (void)state;
        assert_null(ncm_topo_cpu(t, 4));
        expect_cpu(t, 0, 0, 0, 0, 0);
        expect_cpu(t, 8, 8, 0, 1, 0);
        expect_cpu(t, 16, 16, 1, 5, 1);
        expect_cpu(t, 20, 20, 1, 5, 1);
        expect_numa_ids(t, (int[]){0, 1, 2, 3, 4, 5}, 6);
        ncm_topo_free(t);
}

static void test_rule_core_is_core_id_and_package_within_a_node(void **state)
{
        /* ia64: two CPUs of a node share (core_id, package) without being thread siblings in
         * the dump; cadvisor makes one core of them */
        ncm_topo *t = dump_topo("16ia64-8n2s");
        const ncm_cpu_info *c1 = ncm_topo_cpu(t, 1);
        (void)state;
        assert_non_null(c1);
        assert_int_equal(c1->core, 0);
        assert_int_equal(ncm_topo_num_cores(t), 8);
        ncm_topo_free(t);
}

static void test_rule_raw_ids(void **state)
{
        /* sparse node ids (33, 34, 45, 72, 73) and ia64's package ids as the kernel prints
         * them */
        ncm_topo *t = dump_topo("48amd64-4pa2n6c-sparse");
        ncm_topo *ia = dump_topo("8ia64-2n2s2c");
        (void)state;
        expect_numa_ids(t, (int[]){0, 1, 2, 33, 34, 45, 72, 73}, 8);
        expect_cpu(t, 18, 18, 1, 33, 1);
        expect_cpu(ia, 1, 1, 196611, 0, 196611);
        expect_cpu(ia, 5, 5, 196867, 1, 196867);
        ncm_topo_free(t);
        ncm_topo_free(ia);
}

static void test_rule_uncore_is_the_l3_id(void **state)
{
        /* L3 ids present and the L3 smaller or larger than a node: the uncore id is the L3's
         * id; memorysidecaches' L3 spans two nodes of a package */
        ncm_topo *t = dump_topo("fakecpuid1f-64intel64-2p4d2n2c2t");
        ncm_topo *m = dump_topo("memorysidecaches");
        (void)state;
        assert_int_equal(ncm_topo_num_uncore_caches(t), 8);
        assert_int_equal(ncm_topo_num_uncore_caches(m), 2);
        ncm_topo_free(t);
        ncm_topo_free(m);
}

static void test_rule_cache_without_id_gives_the_socket(void **state)
{
        /* older kernels have no cache id file: cadvisor's cache read fails, so the uncore id
         * is the package (4, though each of the 8 nodes has its own L3) */
        ncm_topo *t = dump_topo("32amd64-4s2n4c-cgroup2");
        size_t n;
        const ncm_cpu_info *c = ncm_topo_cpus(t, &n);
        (void)state;
        for (size_t i = 0; i < n; i++)
                assert_int_equal(c[i].uncore, c[i].socket);
        ncm_topo_free(t);
}

static void test_rule_only_the_machine_online_list(void **state)
{
        /* no global online list: every CPU counts as online; the offline ones (cpuN/online
         * 0) drop out because they have no topology files */
        ncm_topo *t = dump_topo("16em64t-4s2c2t-offlines");
        (void)state;
        assert_null(ncm_topo_cpu(t, 2));
        assert_non_null(ncm_topo_cpu(t, 3));
        ncm_topo_free(t);
}

static void test_rule_links_named_not_followed(void **state)
{
        /* 16amd64-8n2c's cpuM links point at "." in the dump: the names say which CPUs */
        ncm_topo *t = dump_topo("16amd64-8n2c");
        (void)state;
        expect_cpu(t, 0, 0, 0, 0, 0);
        expect_cpu(t, 3, 3, 1, 1, 1);
        ncm_topo_free(t);
}

/* --- damaged copies --- */

typedef struct fixture {
        char *tmp;
        char *root;
} fixture;

static int setup_copy(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        /* six CPUs, package 0, nodes 0-2 with two CPUs each (cpuM links) and four memory-only
         * nodes, an online list, one L3 (id 0) over all six */
        f->root = tu_extract_topology("fakeheteromemtiers", &f->tmp);
        *state = f;
        return 0;
}

static int teardown_copy(void **state)
{
        fixture *f = *state;
        tu_rm_rf(f->tmp);
        free(f->tmp);
        free(f->root);
        free(f);
        return 0;
}

static char *at(const fixture *f, const char *rel)
{
        char *p;
        if (asprintf(&p, "%s%s", f->root, rel) < 0)
                fail_msg("out of memory");
        return p;
}

static void put(const fixture *f, const char *rel, const char *data, size_t len)
{
        char *p = at(f, rel);
        FILE *fp;
        (void)unlink(p);
        fp = fopen(p, "w");
        if (!fp || fwrite(data, 1, len, fp) != len || fclose(fp) != 0)
                fail_msg("cannot write %s", p);
        free(p);
}
#define PUT(f, rel, str) put((f), (rel), (str), sizeof(str) - 1)

static void rm(const fixture *f, const char *rel)
{
        char *p = at(f, rel);
        tu_rm_rf(p);
        free(p);
}

static void mkdir_at(const fixture *f, const char *rel)
{
        char *p = at(f, rel);
        if (mkdir(p, 0755) < 0)
                fail_msg("mkdir %s", p);
        free(p);
}

static void link_at(const fixture *f, const char *target, const char *rel)
{
        char *p = at(f, rel);
        if (symlink(target, p) < 0)
                fail_msg("symlink %s", p);
        free(p);
}

/* Give every L3 the id 7, so that the uncore id (7) and the package (0) differ. */
static void l3_id_7(const fixture *f)
{
        char rel[128];
        for (int cpu = 0; cpu < 6; cpu++) {
                snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/cache/index3/id", cpu);
                put(f, rel, "7\n", 2);
        }
}

/* Discovery fails with CODE and a one-line message that contains WHAT. */
static void expect_fail(const fixture *f, int code, const char *what)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = discover_at(f->root, &t, &err);
        if (r != -code || !strstr(err.msg, what) || strchr(err.msg, '\n'))
                fail_msg("expected -%d naming \"%s\", got %d \"%s\"", code, what, r, err.msg);
        assert_null(t);
}

static void expect_cpus(const fixture *f, const char *cpus)
{
        ncm_topo *t = discover_ok(f->root);
        ncm_autoptr(ncm_cpuset) all = ncm_cpuset_new();
        ncm_topo_all_cpus(t, all);
        tu_assert_cpuset(all, cpus);
        ncm_topo_free(t);
}

static void test_copy_as_shipped(void **state)
{
        fixture *f = *state;
        ncm_topo *t = discover_ok(f->root);
        (void)state;
        expect_cpu(t, 0, 0, 0, 0, 0);
        expect_cpu(t, 3, 3, 0, 1, 0);
        expect_cpu(t, 5, 5, 0, 2, 0);
        expect_numa_ids(t, (int[]){0, 1, 2, 4, 6, 8, 9}, 7);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 9), 20);
        ncm_topo_free(t);
}

static void test_copy_bad_core_id_fails(void **state)
{
        fixture *f = *state;
        PUT(f, "/sys/devices/system/cpu/cpu5/topology/core_id", "x1\n");
        expect_fail(f, EINVAL,
                    "/sys/devices/system/cpu/cpu5/topology/core_id: expected an integer, got "
                    "\"x1\"");
}

static void test_copy_empty_or_padded_core_id_fails(void **state)
{
        fixture *f = *state;
        /* Atoi("") fails, and TrimSpace keeps NULs: both stop the kubelet */
        PUT(f, "/sys/devices/system/cpu/cpu4/topology/core_id", "");
        expect_fail(f, EINVAL, "/sys/devices/system/cpu/cpu4/topology/core_id");
        put(f, "/sys/devices/system/cpu/cpu4/topology/core_id", "4\n\0\0", 4);
        expect_fail(f, EINVAL, "/sys/devices/system/cpu/cpu4/topology/core_id");
}

static void test_copy_core_id_as_atoi_reads_it(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        /* spaces trimmed, a sign allowed; cpu1 joins cpu0's core, cpu2 gets core_id 1 */
        PUT(f, "/sys/devices/system/cpu/cpu1/topology/core_id", " \t+0\r\n");
        PUT(f, "/sys/devices/system/cpu/cpu3/topology/core_id", "-2\n");
        PUT(f, "/sys/devices/system/cpu/cpu2/topology/core_id", "-2\n");
        t = discover_ok(f->root);
        expect_cpu(t, 1, 0, 0, 0, 0);
        expect_cpu(t, 3, 2, 0, 1, 0);
        ncm_topo_free(t);
}

static void test_copy_missing_core_or_package_drops_the_cpu(void **state)
{
        fixture *f = *state;
        rm(f, "/sys/devices/system/cpu/cpu2/topology/core_id");
        rm(f, "/sys/devices/system/cpu/cpu5/topology/physical_package_id");
        expect_cpus(f, "0-1,3-4");
}

static void test_copy_package_ids_as_read(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        PUT(f, "/sys/devices/system/cpu/cpu0/topology/physical_package_id", "-1\n");
        PUT(f, "/sys/devices/system/cpu/cpu1/topology/physical_package_id", "2147483647\n");
        t = discover_ok(f->root);
        expect_cpu(t, 0, 0, -1, 0, 0);
        expect_cpu(t, 1, 1, 2147483647, 0, 0);
        ncm_topo_free(t);
        /* beyond an int: Go would keep it, nodecm's table cannot */
        PUT(f, "/sys/devices/system/cpu/cpu1/topology/physical_package_id", "2147483648\n");
        expect_fail(f, ERANGE,
                    "/sys/devices/system/cpu/cpu1/topology/physical_package_id: 2147483648 is "
                    "out of range");
}

static void test_copy_online_list_read_left_to_right(void **state)
{
        fixture *f = *state;
        /* isCPUOnline stops at the first malformed entry: CPUs listed before it are online */
        PUT(f, "/sys/devices/system/cpu/online", "0-2,x,3-5\n");
        expect_cpus(f, "0-2");
        PUT(f, "/sys/devices/system/cpu/online", "5,1-1,3-2,0\n");
        expect_cpus(f, "1,5");
        /* a CPU's own online file means nothing to cadvisor */
        PUT(f, "/sys/devices/system/cpu/online", "0-5\n");
        PUT(f, "/sys/devices/system/cpu/cpu3/online", "0\n");
        expect_cpus(f, "0-5");
        rm(f, "/sys/devices/system/cpu/online");
        expect_cpus(f, "0-5");
}

static void test_copy_empty_online_list_fails(void **state)
{
        fixture *f = *state;
        /* no CPU online: cadvisor's node path counts no thread and the kubelet stops */
        PUT(f, "/sys/devices/system/cpu/online", "");
        expect_fail(f, EINVAL, "could not detect number of cpus");
        rm(f, "/sys/devices/system/cpu/online");
        mkdir_at(f, "/sys/devices/system/cpu/online");
        expect_fail(f, EINVAL, "could not detect number of cpus");
}

static void test_copy_cache_failure_ends_the_node(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        l3_id_7(f);
        /* cpu2's caches cannot be read (level not a number): cpu2 and the rest of node 1
         * (cpu3) get none, so their uncore id is the package; node 2 is read again */
        PUT(f, "/sys/devices/system/cpu/cpu2/cache/index0/level", "one\n");
        t = discover_ok(f->root);
        expect_cpu(t, 1, 1, 0, 0, 7);
        expect_cpu(t, 2, 2, 0, 1, 0);
        expect_cpu(t, 3, 3, 0, 1, 0);
        expect_cpu(t, 4, 4, 0, 2, 7);
        ncm_topo_free(t);
        /* the same on cpu3: cpu2 keeps its cache */
        PUT(f, "/sys/devices/system/cpu/cpu2/cache/index0/level", "1\n");
        rm(f, "/sys/devices/system/cpu/cpu3/cache/index1/type");
        t = discover_ok(f->root);
        expect_cpu(t, 2, 2, 0, 1, 7);
        expect_cpu(t, 3, 3, 0, 1, 0);
        ncm_topo_free(t);
}

static void test_copy_cache_files_as_sscanf_reads_them(void **state)
{
        fixture *f = *state;
        static const struct {
                const char *file, *content;
                bool ok;
        } cases[] = {
                        {"id", "  7 trailing", true},
                        {"id", "\n7", false}, /* a newline before the number */
                        {"id", "", false},
                        {"size", "512K\n", true},
                        {"size", "512 K\n", false},
                        {"size", "-512K\n", false}, /* a uint64 */
                        {"size", "512\n", false},
                        {"level", "3rd\n", true},
                        {"shared_cpu_map", "00000000,0000003f\n", true},
                        {"shared_cpu_map", "0x3f\n", false},
                        {"shared_cpu_map", "3f,\n", false},
                        {"shared_cpu_map", "00000000000000000000003f\n", true},
        };
        char rel[128];
        l3_id_7(f);
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_topo *t;
                snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu0/cache/index3/%s",
                         cases[i].file);
                put(f, rel, cases[i].content, strlen(cases[i].content));
                t = discover_ok(f->root);
                /* read: cpu0's and cpu1's uncore is the L3; not read: node 0 has none */
                if (ncm_topo_cpu(t, 1)->uncore != (cases[i].ok ? 7 : 0))
                        fail_msg("%s \"%s\": uncore %lld", cases[i].file, cases[i].content,
                                 (long long)ncm_topo_cpu(t, 1)->uncore);
                ncm_topo_free(t);
                l3_id_7(f);
                PUT(f, "/sys/devices/system/cpu/cpu0/cache/index3/size", "8192K\n");
                PUT(f, "/sys/devices/system/cpu/cpu0/cache/index3/level", "3\n");
                PUT(f, "/sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_map", "3f\n");
        }
}

static void test_copy_node_sized_cache_is_not_uncore(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        l3_id_7(f);
        /* an L3 of node 1's size (2 cores x 1 thread) is a node cache: uncore = package */
        PUT(f, "/sys/devices/system/cpu/cpu2/cache/index3/shared_cpu_map", "c\n");
        /* a level-2 cache is never uncore */
        PUT(f, "/sys/devices/system/cpu/cpu4/cache/index3/level", "2\n");
        t = discover_ok(f->root);
        expect_cpu(t, 0, 0, 0, 0, 7);
        expect_cpu(t, 2, 2, 0, 1, 0);
        expect_cpu(t, 3, 3, 0, 1, 7);
        expect_cpu(t, 4, 4, 0, 2, 0);
        ncm_topo_free(t);
}

static void test_copy_nodes_in_glob_order(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        /* node10 sorts between node1 and node2: it takes cpu0 from node 0, node 2 takes
         * cpu4 back */
        mkdir_at(f, "/sys/devices/system/node/node10");
        link_at(f, "../../cpu/cpu0", "/sys/devices/system/node/node10/cpu0");
        link_at(f, "../../cpu/cpu4", "/sys/devices/system/node/node10/cpu4");
        t = discover_ok(f->root);
        expect_cpu(t, 0, 0, 0, 10, 0);
        expect_cpu(t, 1, 1, 0, 0, 0);
        expect_cpu(t, 4, 4, 0, 2, 0);
        expect_numa_ids(t, (int[]){0, 1, 2, 4, 6, 8, 9, 10}, 8);
        /* node 10 has no distance row: 10 to itself, 20 to the others */
        assert_int_equal(ncm_topo_numa_distance(t, 10, 10), 10);
        assert_int_equal(ncm_topo_numa_distance(t, 10, 2), 20);
        ncm_topo_free(t);
}

static void test_copy_node_cpus_from_cpulist_or_cpumap(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        rm(f, "/sys/devices/system/node/node1/cpu2");
        rm(f, "/sys/devices/system/node/node1/cpu3");
        PUT(f, "/sys/devices/system/node/node1/cpulist", "3\n");
        t = discover_ok(f->root);
        assert_null(ncm_topo_cpu(t, 2));
        expect_cpu(t, 3, 3, 0, 1, 0);
        ncm_topo_free(t);
        rm(f, "/sys/devices/system/node/node1/cpulist");
        PUT(f, "/sys/devices/system/node/node1/cpumap", "00000004\n");
        t = discover_ok(f->root);
        expect_cpu(t, 2, 2, 0, 1, 0);
        assert_null(ncm_topo_cpu(t, 3));
        ncm_topo_free(t);
        PUT(f, "/sys/devices/system/node/node2/cpulist", "1-\n"); /* not read: links */
        PUT(f, "/sys/devices/system/node/node1/cpumap", "xyz\n");
        expect_fail(f, EINVAL, "/sys/devices/system/node/node1/cpumap");
}

static void test_copy_distances(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        /*
         * Rows are indexed by node id, as the kubelet reads cadvisor's (distances[a][b]), however
         * long: node 0's "10 20" gives 0->1 20 (asymmetric: node 1's own row gives 1->0 33); an
         * entry past a row's end (0->2) comes from the other row, else 10/20.
         */
        PUT(f, "/sys/devices/system/node/node0/distance", "10 20\n");
        PUT(f, "/sys/devices/system/node/node1/distance", "33 10 20 20 20 20 20\n");
        rm(f, "/sys/devices/system/node/node2/distance");
        t = discover_ok(f->root);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 1), 20);
        assert_int_equal(ncm_topo_numa_distance(t, 1, 0), 33);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 0), 10);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 2), 20);
        assert_int_equal(ncm_topo_numa_distance(t, 2, 1), 20);
        ncm_topo_free(t);
        /* ParseUint on fields split at single spaces */
        PUT(f, "/sys/devices/system/node/node1/distance", "20  10 20 20 20 20 20\n");
        expect_fail(f, EINVAL, "/sys/devices/system/node/node1/distance: expected distances");
        PUT(f, "/sys/devices/system/node/node1/distance", "20 ten\n");
        expect_fail(f, EINVAL, "/sys/devices/system/node/node1/distance");
        PUT(f, "/sys/devices/system/node/node1/distance", "20 4294967296\n");
        expect_fail(f, ERANGE, "/sys/devices/system/node/node1/distance");
}

static void test_copy_symlinks_stay_in_root(void **state)
{
        fixture *f = *state;
        rm(f, "/sys/devices/system/cpu/cpu3/topology/core_id");
        /* resolved inside the root, the link points nowhere: no core_id, no CPU 3 */
        link_at(f, "/etc/hostname", "/sys/devices/system/cpu/cpu3/topology/core_id");
        expect_cpus(f, "0-2,4-5");
}

static void rename_at(const fixture *f, const char *from, const char *to)
{
        char *a = at(f, from), *b = at(f, to);
        if (rename(a, b) < 0)
                fail_msg("rename %s", a);
        free(a);
        free(b);
}

/*
 * Files are opened from the directories discovery holds open (cpu, node, nodeN), a walk that
 * follows no symlink; where one is on the way the walk starts again from the root, which
 * follows it inside the root: a dump's directories that are links read as before, and none
 * leads out of the root.
 */
static void test_copy_directories_through_symlinks(void **state)
{
        fixture *f = *state;
        ncm_topo *t = discover_ok(f->root);
        uint64_t mem1 = ncm_topo_numa_memory(t, 1, NULL, NULL);
        ncm_topo_free(t);

        mkdir_at(f, "/moved");
        rename_at(f, "/sys/devices/system/cpu/cpu3/topology", "/moved/topology3");
        link_at(f, "/moved/topology3", "/sys/devices/system/cpu/cpu3/topology");
        rename_at(f, "/sys/devices/system/node/node1", "/moved/node1");
        link_at(f, "/moved/node1", "/sys/devices/system/node/node1");
        rename_at(f, "/sys/devices/system/node/node0/meminfo", "/moved/meminfo0");
        link_at(f, "../../../../../moved/meminfo0", "/sys/devices/system/node/node0/meminfo");
        /* the host's /etc is not the root's: no topology directory, no CPU 4 */
        rm(f, "/sys/devices/system/cpu/cpu4/topology");
        link_at(f, "/etc", "/sys/devices/system/cpu/cpu4/topology");

        t = discover_ok(f->root);
        expect_cpu(t, 3, 3, 0, 1, 0);
        expect_cpu(t, 2, 2, 0, 1, 0);
        assert_null(ncm_topo_cpu(t, 4));
        assert_int_equal(ncm_topo_numa_memory(t, 1, NULL, NULL), mem1);
        assert_true(ncm_topo_numa_memory(t, 0, NULL, NULL) > 0);
        ncm_topo_free(t);
}

static void test_copy_file_is_a_directory(void **state)
{
        fixture *f = *state;
        rm(f, "/sys/devices/system/cpu/cpu1/topology/physical_package_id");
        mkdir_at(f, "/sys/devices/system/cpu/cpu1/topology/physical_package_id");
        expect_fail(f, EISDIR, "/sys/devices/system/cpu/cpu1/topology/physical_package_id");
}

static void test_copy_oversized_file(void **state)
{
        fixture *f = *state;
        size_t n = 70000;
        char *big = malloc(n);
        memset(big, '1', n);
        put(f, "/sys/devices/system/cpu/cpu4/topology/core_id", big, n);
        free(big);
        expect_fail(f, EFBIG, "/sys/devices/system/cpu/cpu4/topology/core_id");
}

static void test_copy_cpu_id_above_max(void **state)
{
        fixture *f = *state;
        mkdir_at(f, "/sys/devices/system/cpu/cpu9000");
        expect_fail(f, ERANGE, "/sys/devices/system/cpu/cpu9000: id above the maximum of 8191");
}

static void test_copy_s390_book_and_drawer_text(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        char rel[128];
        /* book_id on the first CPU read makes the machine s390: then book_id and drawer_id
         * split cores and are compared as text ("1" and "01" differ), and a CPU without
         * them is left out */
        for (int cpu = 0; cpu < 6; cpu++) {
                snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
                put(f, rel, "0\n", 2);
                snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/topology/book_id", cpu);
                put(f, rel, cpu == 1 ? "01\n" : "1\n", cpu == 1 ? 3 : 2);
                snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%d/topology/drawer_id", cpu);
                if (cpu != 5)
                        put(f, rel, "a\n", 2);
        }
        t = discover_ok(f->root);
        expect_cpu(t, 0, 0, 0, 0, 0);
        expect_cpu(t, 1, 1, 0, 0, 0);
        expect_cpu(t, 2, 2, 0, 1, 0);
        expect_cpu(t, 3, 2, 0, 1, 0);
        assert_null(ncm_topo_cpu(t, 5));
        ncm_topo_free(t);
}

static void test_copy_no_node_directory(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        /* CPUs grouped by package; offline CPUs still name their package (a node without
         * CPUs), and there are no distances but the default */
        rm(f, "/sys/devices/system/node");
        PUT(f, "/sys/devices/system/cpu/cpu5/topology/physical_package_id", "4\n");
        PUT(f, "/sys/devices/system/cpu/online", "0-4\n");
        t = discover_ok(f->root);
        expect_cpu(t, 0, 0, 0, 0, 0);
        assert_null(ncm_topo_cpu(t, 5));
        expect_numa_ids(t, (int[]){0, 4}, 2);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 4), 20);
        ncm_topo_free(t);
}

static void test_topology_sysfs_not_a_sysfs_tree(void **state)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        char *dir = tu_mkdtemp();
        (void)state;
        assert_int_equal(discover_at(dir, &t, &err), -ENOENT);
        assert_non_null(strstr(err.msg, "/sys/devices/system/cpu: no cpuN directory"));
        tu_rm_rf(dir);
        free(dir);
        assert_int_equal(discover_at("/nonexistent-nodecm", &t, &err), -ENOENT);
        assert_non_null(strstr(err.msg, "/nonexistent-nodecm"));
}

static void test_topology_sysfs_this_machine(void **state)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        /* whatever this machine is, the kubelet's reading of it succeeds */
        if (discover_at("/", &t, &err) < 0)
                fail_msg("this machine: %s", err.msg);
        check_invariants("this machine", t, false);
        check_round_trip("this machine", t);
        assert_true(ncm_topo_num_cpus(t) >= 1);
        ncm_topo_free(t);
}

/* --- Go's readers --- */

static int atoi_of(const char *s, int64_t *v)
{
        return ncm__cad_atoi(s, strlen(s), v);
}

static void test_go_atoi(void **state)
{
        int64_t v = 0;
        (void)state;
        assert_int_equal(atoi_of("12\n", &v), 0);
        assert_int_equal(v, 12);
        assert_int_equal(atoi_of(" \t-1 \v\f\r\n", &v), 0);
        assert_int_equal(v, -1);
        assert_int_equal(atoi_of("+7", &v), 0);
        assert_int_equal(v, 7);
        assert_int_equal(atoi_of("007", &v), 0);
        assert_int_equal(v, 7);
        assert_int_equal(atoi_of("\xc2\xa0"
                                 "5\xe3\x80\x80",
                                 &v),
                         0); /* U+00A0, U+3000 */
        assert_int_equal(v, 5);
        assert_int_equal(atoi_of("9223372036854775807", &v), 0);
        assert_int_equal(v, INT64_MAX);
        assert_int_equal(atoi_of("-9223372036854775808", &v), 0);
        assert_int_equal(v, INT64_MIN);
        assert_int_equal(atoi_of("9223372036854775808", &v), -ERANGE);
        assert_int_equal(atoi_of("99999999999999999999999", &v), -ERANGE);
        assert_int_equal(atoi_of("", &v), -EINVAL);
        assert_int_equal(atoi_of("\n", &v), -EINVAL);
        assert_int_equal(atoi_of("-", &v), -EINVAL);
        assert_int_equal(atoi_of("+-1", &v), -EINVAL);
        assert_int_equal(atoi_of("1 2", &v), -EINVAL);
        assert_int_equal(atoi_of("0x10", &v), -EINVAL);
        assert_int_equal(atoi_of("1_000", &v), -EINVAL);
        assert_int_equal(ncm__cad_atoi("3\0", 2, &v), -EINVAL); /* NUL is no space */
        assert_int_equal(atoi_of("\x85"
                                 "3",
                                 &v),
                         -EINVAL); /* not UTF-8 */
}

static bool online_of(const char *list, int cpu)
{
        return ncm__cad_online(list, list ? strlen(list) : 0, cpu);
}

static void test_go_is_cpu_online(void **state)
{
        (void)state;
        assert_true(online_of(NULL, 42));
        assert_false(online_of("", 0));
        assert_false(online_of("\n", 0));
        assert_true(online_of("0-3,8\n", 8));
        assert_true(online_of("0-3,8\n", 2));
        assert_false(online_of("0-3,8\n", 4));
        assert_true(online_of("0-3,x", 1));   /* found before the bad entry */
        assert_false(online_of("x,0-3", 1));  /* the bad entry first */
        assert_false(online_of("0-3,,5", 5)); /* an empty entry is bad */
        assert_false(online_of("3-1,2", 2));  /* min > max */
        assert_false(online_of("1-2-3,2", 2));
        assert_false(online_of("-2,2", 2));
        assert_false(online_of("0, 1", 1)); /* ParseUint(" 1") */
        assert_true(online_of(" 1 \n", 1));
        assert_true(online_of("65535", 65535));
        assert_false(online_of("65536,1", 1)); /* outside uint16 */
        assert_true(online_of("0-65535", 8191));
}

static void test_go_sscanf_int(void **state)
{
        int64_t v = 0;
        const char *s, *p;
        (void)state;
        s = p = "  42K";
        assert_true(ncm__cad_scan_int(&p, s + strlen(s), true, &v));
        assert_int_equal(v, 42);
        assert_int_equal(*p, 'K');
        s = p = "-3\n";
        assert_true(ncm__cad_scan_int(&p, s + strlen(s), false, &v));
        assert_int_equal(v, -3);
        s = p = "-3";
        assert_false(ncm__cad_scan_int(&p, s + strlen(s), true, &v));
        s = p = "\n3";
        assert_false(ncm__cad_scan_int(&p, s + strlen(s), false, &v));
        s = p = "\r\n3";
        assert_false(ncm__cad_scan_int(&p, s + strlen(s), false, &v));
        s = p = "\r3";
        assert_true(ncm__cad_scan_int(&p, s + strlen(s), false, &v));
        s = p = "18446744073709551615K";
        assert_true(ncm__cad_scan_int(&p, s + strlen(s), true, &v));
        s = p = "18446744073709551616K";
        assert_false(ncm__cad_scan_int(&p, s + strlen(s), true, &v));
        s = p = "9223372036854775808";
        assert_false(ncm__cad_scan_int(&p, s + strlen(s), false, &v));
        s = p = "";
        assert_false(ncm__cad_scan_int(&p, s, false, &v));
        /* the end bound is respected */
        s = p = "12";
        assert_true(ncm__cad_scan_int(&p, s + 1, false, &v));
        assert_int_equal(v, 1);
}

static int weight_of(const char *s)
{
        return ncm__cad_map_weight(s, strlen(s));
}

static void test_go_cpu_count(void **state)
{
        (void)state;
        assert_int_equal(weight_of("3f\n"), 6);
        assert_int_equal(weight_of("00000000,0000003f\n"), 6);
        assert_int_equal(weight_of("ffffffffffffffff,1"), 65);
        assert_int_equal(weight_of("0000000000000000000000ff"), 8); /* leading zeros */
        assert_int_equal(weight_of("1ffffffffffffffff"), -1);       /* beyond 64 bits */
        assert_int_equal(weight_of("0x3"), -1);
        assert_int_equal(weight_of("3,"), -1);
        assert_int_equal(weight_of(""), -1);
        assert_int_equal(weight_of(" 3 , 1 "), 3);
}

static void test_go_distances(void **state)
{
        uint32_t d[4];
        (void)state;
        assert_int_equal(ncm__cad_distances("10 21\n", 6, d, 4), 2);
        assert_int_equal(d[1], 21);
        assert_int_equal(ncm__cad_distances("10  21", 6, d, 4), -EINVAL);
        assert_int_equal(ncm__cad_distances("10\t21", 5, d, 4), -EINVAL);
        assert_int_equal(ncm__cad_distances("", 0, d, 4), -EINVAL);
        assert_int_equal(ncm__cad_distances("+10", 3, d, 4), -EINVAL);
        assert_int_equal(ncm__cad_distances("1 2 3 4 5", 9, d, 4), -E2BIG);
        assert_int_equal(ncm__cad_distances("4294967295", 10, d, 4), 1);
        assert_int_equal(ncm__cad_distances("4294967296", 10, d, 4), -ERANGE);
}

static void test_go_glob_order(void **state)
{
        (void)state;
        assert_true(ncm__glob_cmp(10, 2) < 0);
        assert_true(ncm__glob_cmp(2, 10) > 0);
        assert_true(ncm__glob_cmp(1, 10) < 0);
        assert_int_equal(ncm__glob_cmp(7, 7), 0);
}

/* --- the pure assembly --- */

static ncm__cad_cpu ccpu(int cpu, int64_t core_id, int64_t package)
{
        return (ncm__cad_cpu){.cpu = cpu,
                              .online = true,
                              .has_core = true,
                              .has_package = true,
                              .core_id = core_id,
                              .package = package};
}

/* Caches for the assembly tests: CPU c has one L3 of id 100 + c / 4 shared by 4 CPUs; a CPU
 * listed in FAIL cannot be read. */
typedef struct fake_caches {
        int fail;
        int calls;
} fake_caches;

static int fake_cache_fn(void *data, int cpu, ncm__cad_cache **ret, size_t *n, ncm_error *err)
{
        fake_caches *fc = data;
        (void)err;
        fc->calls++;
        if (cpu == fc->fail)
                return 1;
        *ret = calloc(2, sizeof(**ret));
        (*ret)[0] = (ncm__cad_cache){.id = 5, .level = 2, .ncpus = 1};
        (*ret)[1] = (ncm__cad_cache){.id = 100 + cpu / 4, .level = 3, .ncpus = 4};
        *n = 2;
        return 0;
}

static void test_assemble_cache_failure_stops_the_node(void **state)
{
        ncm__cad_cpu cpus[] = {ccpu(0, 0, 0), ccpu(1, 1, 0), ccpu(2, 2, 0),
                               ccpu(4, 0, 1), ccpu(5, 1, 1), ccpu(6, 2, 1)};
        int n0[] = {0, 1, 2}, n1[] = {4, 5, 6};
        ncm__cad_node nodes[] = {{0, n0, 3, NULL, 0}, {1, n1, 3, NULL, 0}};
        fake_caches fc = {.fail = 1};
        ncm__cad_machine m = {cpus, 6, nodes, 2, false, fake_cache_fn, &fc, true};
        ncm_topo *t = NULL;
        (void)state;
        assert_int_equal(ncm__cad_assemble(&m, &t, NULL), 0);
        expect_cpu(t, 0, 0, 0, 0, 100);
        expect_cpu(t, 1, 1, 0, 0, 0); /* failed: the package */
        expect_cpu(t, 2, 2, 0, 0, 0); /* after the failure: not read */
        expect_cpu(t, 4, 4, 1, 1, 101);
        expect_cpu(t, 6, 6, 1, 1, 101);
        assert_int_equal(fc.calls, 2 + 3);
        ncm_topo_free(t);
}

static void test_assemble_node_cache_by_size(void **state)
{
        /* 4 single-thread cores in the node and an L3 of 4 CPUs: a node cache */
        ncm__cad_cpu cpus[] = {ccpu(0, 0, 9), ccpu(1, 1, 9), ccpu(2, 2, 9), ccpu(3, 3, 9)};
        int n0[] = {0, 1, 2, 3};
        ncm__cad_node nodes[] = {{0, n0, 4, NULL, 0}};
        fake_caches fc = {.fail = -1};
        ncm__cad_machine m = {cpus, 4, nodes, 1, false, fake_cache_fn, &fc, true};
        ncm_topo *t = NULL;
        (void)state;
        assert_int_equal(ncm__cad_assemble(&m, &t, NULL), 0);
        expect_cpu(t, 3, 3, 9, 0, 9);
        ncm_topo_free(t);
        /* drop one CPU: 3 cores, the 4-CPU L3 is uncore */
        m.ncpus = 3;
        nodes[0].ncpus = 3;
        assert_int_equal(ncm__cad_assemble(&m, &t, NULL), 0);
        expect_cpu(t, 2, 2, 9, 0, 100);
        ncm_topo_free(t);
}

static void test_assemble_threads_and_skips(void **state)
{
        /* threads by (core_id, package) in glob order of the node's list; offline and
         * incomplete CPUs skipped; a listed CPU without a directory skipped */
        ncm__cad_cpu cpus[] = {ccpu(0, 7, 0), ccpu(1, 7, 0),  ccpu(2, 8, 0),
                               ccpu(3, 8, 0), ccpu(10, 7, 0), ccpu(11, 7, 1)};
        int n0[] = {0, 1, 10, 11, 2, 3, 12};
        ncm__cad_node nodes[] = {{5, n0, 7, NULL, 0}};
        ncm__cad_machine m = {cpus, 6, nodes, 1, false, NULL, NULL, true};
        ncm_topo *t = NULL;
        (void)state;
        cpus[3].online = false;
        cpus[2].has_core = false;
        assert_int_equal(ncm__cad_assemble(&m, &t, NULL), 0);
        expect_cpu(t, 10, 0, 0, 5, 0);
        expect_cpu(t, 11, 11, 1, 5, 1);
        assert_null(ncm_topo_cpu(t, 2));
        assert_null(ncm_topo_cpu(t, 3));
        assert_null(ncm_topo_cpu(t, 12));
        ncm_topo_free(t);
}

static void test_assemble_s390(void **state)
{
        ncm__cad_cpu cpus[] = {ccpu(0, 1, -1), ccpu(1, 1, -1), ccpu(2, 1, -1)};
        ncm__cad_machine m = {cpus, 3, NULL, 0, true, NULL, NULL, true};
        ncm_topo *t = NULL;
        char b0[] = "0", b1[] = "1", d[] = "4";
        (void)state;
        cpus[0].has_book = cpus[1].has_book = cpus[2].has_book = true;
        cpus[0].has_drawer = cpus[1].has_drawer = true;
        cpus[0].book = b0;
        cpus[1].book = b1;
        cpus[2].book = b0;
        cpus[0].drawer = cpus[1].drawer = d;
        assert_int_equal(ncm__cad_assemble(&m, &t, NULL), 0);
        expect_cpu(t, 0, 0, -1, -1, -1);
        expect_cpu(t, 1, 1, -1, -1, -1);
        assert_null(ncm_topo_cpu(t, 2)); /* no drawer_id */
        ncm_topo_free(t);
}

static void test_assemble_nothing_found(void **state)
{
        ncm__cad_cpu cpus[] = {ccpu(0, 0, 0)};
        int n0[] = {1};
        ncm__cad_node nodes[] = {{0, n0, 1, NULL, 0}};
        ncm__cad_machine m = {cpus, 1, nodes, 1, false, NULL, NULL, true};
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm__cad_assemble(&m, &t, &err), -EINVAL);
        assert_string_equal(err.msg, "could not detect number of cpus");
        /* a node listing a CPU twice: the kubelet's getUniqueCoreID error */
        {
                int twice[] = {0, 0};
                ncm__cad_node n2[] = {{0, twice, 2, NULL, 0}};
                ncm__cad_machine m2 = {cpus, 1, n2, 1, false, NULL, NULL, true};
                assert_int_equal(ncm__cad_assemble(&m2, &t, &err), -EINVAL);
                assert_string_equal(err.msg, "cpus provided are not unique");
        }
        /* without nodes and without any package: an empty table */
        cpus[0].has_package = false;
        m.nodes = NULL;
        m.nnodes = 0;
        assert_int_equal(ncm__cad_assemble(&m, &t, &err), 0);
        assert_int_equal(ncm_topo_num_cpus(t), 0);
        ncm_topo_free(t);
}

#define COPY_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup_copy, teardown_copy)

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_go_atoi),
                        cmocka_unit_test(test_go_is_cpu_online),
                        cmocka_unit_test(test_go_sscanf_int),
                        cmocka_unit_test(test_go_cpu_count),
                        cmocka_unit_test(test_go_distances),
                        cmocka_unit_test(test_go_glob_order),
                        cmocka_unit_test(test_assemble_cache_failure_stops_the_node),
                        cmocka_unit_test(test_assemble_node_cache_by_size),
                        cmocka_unit_test(test_assemble_threads_and_skips),
                        cmocka_unit_test(test_assemble_s390),
                        cmocka_unit_test(test_assemble_nothing_found),
                        cmocka_unit_test(test_topology_sysfs_every_dump),
                        cmocka_unit_test(test_rule_no_node_directory_groups_by_package),
                        cmocka_unit_test(test_rule_s390_books_drawers_and_minus_one),
                        cmocka_unit_test(test_rule_no_package_file_is_an_empty_table),
                        cmocka_unit_test(test_rule_no_core_id_anywhere_fails),
                        cmocka_unit_test(test_rule_cpus_of_no_node_are_left_out),
                        cmocka_unit_test(test_rule_cpumap_and_last_node_wins),
                        cmocka_unit_test(test_rule_core_is_core_id_and_package_within_a_node),
                        cmocka_unit_test(test_rule_raw_ids),
                        cmocka_unit_test(test_rule_uncore_is_the_l3_id),
                        cmocka_unit_test(test_rule_cache_without_id_gives_the_socket),
                        cmocka_unit_test(test_rule_only_the_machine_online_list),
                        cmocka_unit_test(test_rule_links_named_not_followed),
                        cmocka_unit_test(test_topology_sysfs_this_machine),
                        cmocka_unit_test(test_topology_sysfs_not_a_sysfs_tree),
                        COPY_TEST(test_copy_as_shipped),
                        COPY_TEST(test_copy_bad_core_id_fails),
                        COPY_TEST(test_copy_empty_or_padded_core_id_fails),
                        COPY_TEST(test_copy_core_id_as_atoi_reads_it),
                        COPY_TEST(test_copy_missing_core_or_package_drops_the_cpu),
                        COPY_TEST(test_copy_package_ids_as_read),
                        COPY_TEST(test_copy_online_list_read_left_to_right),
                        COPY_TEST(test_copy_empty_online_list_fails),
                        COPY_TEST(test_copy_cache_failure_ends_the_node),
                        COPY_TEST(test_copy_cache_files_as_sscanf_reads_them),
                        COPY_TEST(test_copy_node_sized_cache_is_not_uncore),
                        COPY_TEST(test_copy_nodes_in_glob_order),
                        COPY_TEST(test_copy_node_cpus_from_cpulist_or_cpumap),
                        COPY_TEST(test_copy_distances),
                        COPY_TEST(test_copy_symlinks_stay_in_root),
                        COPY_TEST(test_copy_directories_through_symlinks),
                        COPY_TEST(test_copy_file_is_a_directory),
                        COPY_TEST(test_copy_oversized_file),
                        COPY_TEST(test_copy_cpu_id_above_max),
                        COPY_TEST(test_copy_s390_book_and_drawer_text),
                        COPY_TEST(test_copy_no_node_directory),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
