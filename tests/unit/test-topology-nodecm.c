/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sysfs discovery with nodecm's friendlier rules (`--topology-rules nodecm`, not the
 * default; test-topology-sysfs.c checks the kubelet's): every dump of tests/data/topologies is
 * discovered and checked against hand-verified counts and online lists plus structural invariants;
 * several have golden JSON; damaged copies of a dump must fail with one message naming the file (or
 * follow the documented fallback); the pure assembly rules and sysfs parsers are checked on
 * hand-made inputs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
        r = ncm_topo_discover_sysfs_rules(fd, NCM_TOPO_RULES_NODECM, ret, err);
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
 * Every dump, with its online CPUs and counts: checked against the dump's files and hwloc's
 * .console for the machine (hwloc applies cgroup cpusets and merges identical NUMA nodes, the
 * kubelet does neither; docs/topology.md explains each difference).
 */
static const struct dump {
        const char *name;
        const char *online;
        int cores, sockets, numa_with_cpus, numa_all, uncore;
} dumps[] = {
                {"128ia64-17n4s2c", "0-127", 128, 64, 16, 17, 64},
                {"16amd64-4n4c-cgroup-distance-merge", "0-15", 16, 4, 4, 4, 4},
                {"16amd64-8n2c-cpusets", "0-3,5-15", 15, 8, 8, 8, 8},
                {"16amd64-8n2c", "0-15", 16, 8, 8, 8, 8},
                {"16em64t-4s2c2t-offlines", "0-1,3-4,6-12,15", 7, 4, 1, 1, 4},
                {"16em64t-4s2ca2c-cpusetreorder", "0-15", 16, 4, 1, 1, 4},
                {"16ia64-8n2s", "0-15", 16, 8, 8, 8, 16},
                {"20s390-2g6s4c", "0-19", 20, 8, 1, 1, 8},
                {"256ia64-64n2s2c", "0-255", 256, 128, 64, 64, 128},
                {"2arm-2c", "0-1", 2, 1, 1, 1, 1},
                {"2i386-2c-nohugepage", "0-1", 2, 1, 1, 1, 1},
                {"2i386-2t-hugepagesizecount", "0-1", 1, 1, 1, 1, 1},
                {"2pa-pcidomain32bits", "0-1", 2, 2, 1, 1, 2},
                {"2ps3-2t", "0-1", 1, 1, 1, 1, 1},
                {"32amd64-4s2n4c-cgroup2", "0-31", 32, 4, 8, 8, 8},
                {"32em64t-2n8c+dax+nvme+mic+dimms", "0-15", 16, 2, 2, 2, 2},
                {"40intel64-4n10c+pci-conflicts", "0-39", 40, 4, 4, 4, 4},
                {"48amd64-4pa2n6c-sparse", "0-47", 48, 4, 8, 8, 8},
                {"4fake-4gr1nu1pu", "0-3", 4, 1, 4, 4, 1},
                {"5intel64-hybrid-lakefield", "0-4", 5, 1, 1, 1, 1},
                {"64amd64-4p2n4ca2co", "0-63", 64, 4, 8, 8, 8},
                {"64fake-4n2s2ca2c2t", "0-63", 32, 8, 4, 4, 8},
                {"8em64t-2s2ca2c-buggynuma", "0-7", 8, 2, 1, 8, 2},
                {"8em64t-2s2ca2c", "0-7", 8, 2, 1, 1, 2},
                {"8em64t-2s4c-asymcaches", "0-7", 8, 2, 1, 1, 2},
                {"8ia64-2n2s2c", "0-7", 8, 4, 2, 2, 8},
                {"8ia64-2s2c2t", "0-7", 4, 2, 1, 1, 4},
                {"fakecpuid1f-64intel64-2p4d2n2c2t", "0-63", 32, 4, 16, 16, 8},
                {"fakeheterocpunuma", "0-23", 12, 2, 6, 7, 2},
                {"fakeheteromemtiers", "0-5", 6, 1, 3, 7, 1},
                {"fakememinitiators-1np2c+1npp+gi", "0-7", 8, 2, 4, 11, 2},
                {"fakepcilocalities", "0-39", 40, 4, 4, 4, 4},
                {"memorysidecaches", "0-79", 40, 2, 4, 4, 2},
                {"nvidia-dgx-gb10", "0-19", 20, 1, 1, 1, 2},
                {"nvidiagpunumanodes", "0-15,88-103", 8, 2, 2, 8, 4},
                {"offline-cpu0-node0", "4-20", 17, 2, 2, 2, 2},
};

/* Dumps whose whole table is a golden file (each hand-checked, see docs/topology.md). */
static const char *const goldens[] = {
                "16em64t-4s2c2t-offlines",
                "20s390-2g6s4c",
                "2ps3-2t",
                "48amd64-4pa2n6c-sparse",
                "8ia64-2n2s2c",
                "8ia64-2s2c2t",
                "fakeheterocpunuma",
                "offline-cpu0-node0",
                "nvidiagpunumanodes",
                "2arm-2c",
};

static void check_invariants(const char *name, const ncm_topo *t)
{
        size_t n, nn;
        const ncm_cpu_info *c = ncm_topo_cpus(t, &n);
        const int *ids = ncm_topo_numa_ids(t, &nn);
        ncm_autoptr(ncm_cpuset) seen = ncm_cpuset_new();

        for (size_t i = 0; i < n; i++) {
                const ncm_cpu_info *core = ncm_topo_cpu(t, c[i].core);
                bool listed = false;
                if (i > 0 && c[i].cpu <= c[i - 1].cpu)
                        fail_msg("%s: table not sorted at cpu %d", name, c[i].cpu);
                if (ncm_cpuset_isset(seen, c[i].cpu))
                        fail_msg("%s: cpu %d twice", name, c[i].cpu);
                ncm_cpuset_set(seen, c[i].cpu);
                /* core = the lowest thread, itself a CPU of the core */
                if (!core || core->core != c[i].core || c[i].core > c[i].cpu)
                        fail_msg("%s: cpu %d has core %d, not its lowest thread", name, c[i].cpu,
                                 c[i].core);
                /* threads of a core share socket and NUMA node */
                if (core->socket != c[i].socket || core->numa != c[i].numa)
                        fail_msg("%s: cpu %d and its core %d disagree on socket/numa", name,
                                 c[i].cpu, c[i].core);
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

/* The tree names every CPU exactly once. */
static void check_tree(const char *name, const ncm_topo *t)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_autoptr(ncm_cpuset) seen = ncm_cpuset_new();
        size_t n;
        ncm_topo_format_tree(t, &b);
        assert_false(ncm_buf_failed(&b));
        for (char *line = strtok(b.data, "\n"); line; line = strtok(NULL, "\n")) {
                char *p = strstr(line, ": CPU ");
                if (strncmp(line, "      Core ", 11) != 0 || !p)
                        continue;
                for (p += 6; *p;) {
                        int cpu = (int)strtol(p, &p, 10);
                        if (ncm_cpuset_isset(seen, cpu))
                                fail_msg("%s: tree shows cpu %d twice", name, cpu);
                        ncm_cpuset_set(seen, cpu);
                        while (*p == ',' || *p == ' ')
                                p++;
                }
        }
        (void)ncm_topo_cpus(t, &n);
        assert_int_equal(ncm_cpuset_weight(seen), (int)n);
        ncm_buf_done(&b);
}

static void test_topology_sysfs_every_dump(void **state)
{
        (void)state;
        for (size_t d = 0; d < NCM_ELEMENTSOF(dumps); d++) {
                char *tmp = NULL;
                char *root = tu_extract_topology(dumps[d].name, &tmp);
                ncm_topo *t = discover_ok(root);
                ncm_autoptr(ncm_cpuset) all = ncm_cpuset_new();
                size_t nn;

                ncm_topo_all_cpus(t, all);
                tu_assert_cpuset(all, dumps[d].online);
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
                check_invariants(dumps[d].name, t);
                check_round_trip(dumps[d].name, t);
                check_tree(dumps[d].name, t);
                ncm_topo_free(t);
                tu_rm_rf(tmp);
                free(tmp);
                free(root);
        }
}

static void test_topology_sysfs_goldens(void **state)
{
        (void)state;
        for (size_t g = 0; g < NCM_ELEMENTSOF(goldens); g++) {
                char *tmp = NULL, rel[256];
                char *root = tu_extract_topology(goldens[g], &tmp);
                ncm_topo *t = discover_ok(root);
                ncm_buf b = NCM_BUF_INIT;
                ncm_topo_format_json(t, &b);
                snprintf(rel, sizeof(rel), "topologies/golden/nodecm/%s.json", goldens[g]);
                tu_assert_golden(rel, b.data);
                ncm_buf_done(&b);
                ncm_topo_free(t);
                tu_rm_rf(tmp);
                free(tmp);
                free(root);
        }
}

/* --- damaged copies --- */

typedef struct fixture {
        char *tmp;
        char *root;
} fixture;

static int setup_copy(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        /* HT, two sockets, global online list, L3 with id files, one NUMA node dir */
        f->root = tu_extract_topology("offline-cpu0-node0", &f->tmp);
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

static void put(const fixture *f, const char *rel, const char *data, size_t len)
{
        char *p;
        FILE *fp;
        if (asprintf(&p, "%s%s", f->root, rel) < 0)
                fail_msg("out of memory");
        (void)unlink(p);
        fp = fopen(p, "w");
        if (!fp || fwrite(data, 1, len, fp) != len || fclose(fp) != 0)
                fail_msg("cannot write %s", p);
        free(p);
}
#define PUT(f, rel, str) put((f), (rel), (str), sizeof(str) - 1)

static void rm(const fixture *f, const char *rel)
{
        char *p;
        if (asprintf(&p, "%s%s", f->root, rel) < 0)
                fail_msg("out of memory");
        tu_rm_rf(p);
        free(p);
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

static void test_topology_sysfs_bad_core_id(void **state)
{
        fixture *f = *state;
        PUT(f, "/sys/devices/system/cpu/cpu5/topology/core_id", "x1\n");
        expect_fail(f, EINVAL,
                    "/sys/devices/system/cpu/cpu5/topology/core_id: expected an "
                    "integer, got \"x1\"");
}

static void test_topology_sysfs_bad_online_list(void **state)
{
        fixture *f = *state;
        PUT(f, "/sys/devices/system/cpu/online", "4-20,x\n");
        expect_fail(f, EINVAL, "/sys/devices/system/cpu/online: invalid CPU list");
}

static void test_topology_sysfs_cpu_id_above_max(void **state)
{
        fixture *f = *state;
        PUT(f, "/sys/devices/system/cpu/online", "4-20,9000\n");
        expect_fail(f, ERANGE,
                    "/sys/devices/system/cpu/online: CPU list \"4-20,9000\": CPU id out "
                    "of range (maximum 8191)");
}

static void test_topology_sysfs_cpu_dir_above_max_without_online_list(void **state)
{
        fixture *f = *state;
        char *p;
        rm(f, "/sys/devices/system/cpu/online");
        if (asprintf(&p, "%s/sys/devices/system/cpu/cpu9000", f->root) < 0 || mkdir(p, 0755) < 0)
                fail_msg("mkdir");
        free(p);
        expect_fail(f, ERANGE, "cpuN directory with N above the maximum CPU id 8191");
}

static void test_topology_sysfs_bad_node_cpulist(void **state)
{
        fixture *f = *state;
        PUT(f, "/sys/devices/system/node/node1/cpulist", "1-\n");
        expect_fail(f, EINVAL, "/sys/devices/system/node/node1/cpulist: invalid CPU list");
}

static void test_topology_sysfs_bad_distance(void **state)
{
        fixture *f = *state;
        PUT(f, "/sys/devices/system/node/node1/distance", "21 ten\n");
        expect_fail(f, EINVAL, "/sys/devices/system/node/node1/distance: expected distances");
}

static void test_topology_sysfs_bad_cache_level(void **state)
{
        fixture *f = *state;
        PUT(f, "/sys/devices/system/cpu/cpu7/cache/index3/level", "three\n");
        expect_fail(f, EINVAL, "/sys/devices/system/cpu/cpu7/cache/index3/level");
}

static void test_topology_sysfs_bad_online_flag(void **state)
{
        fixture *f = *state;
        rm(f, "/sys/devices/system/cpu/online");
        PUT(f, "/sys/devices/system/cpu/cpu6/online", "2\n");
        expect_fail(f, EINVAL, "/sys/devices/system/cpu/cpu6/online: expected 0 or 1");
}

static void test_topology_sysfs_file_is_a_directory(void **state)
{
        fixture *f = *state;
        char *p;
        rm(f, "/sys/devices/system/cpu/cpu9/topology/physical_package_id");
        if (asprintf(&p, "%s/sys/devices/system/cpu/cpu9/topology/physical_package_id", f->root) <
                            0 ||
            mkdir(p, 0755) < 0)
                fail_msg("mkdir");
        free(p);
        expect_fail(f, EISDIR, "/sys/devices/system/cpu/cpu9/topology/physical_package_id");
}

static void test_topology_sysfs_oversized_file(void **state)
{
        fixture *f = *state;
        size_t n = 70000;
        char *big = malloc(n);
        memset(big, '1', n);
        put(f, "/sys/devices/system/cpu/cpu4/topology/core_id", big, n);
        free(big);
        expect_fail(f, EFBIG, "/sys/devices/system/cpu/cpu4/topology/core_id");
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

static void test_topology_sysfs_no_online_cpu(void **state)
{
        fixture *f = *state;
        PUT(f, "/sys/devices/system/cpu/online", "100-120\n");
        expect_fail(f, EINVAL, "no online CPU has a directory");
}

/* Documented fallbacks: these damage the dump but discovery goes on. */

static void test_topology_sysfs_nul_padding_and_spaces(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        put(f, "/sys/devices/system/cpu/cpu5/topology/physical_package_id", "1\n\0\0\0", 5);
        put(f, "/sys/devices/system/cpu/online", "4-20\n\0\0", 7);
        t = discover_ok(f->root);
        assert_int_equal(ncm_topo_cpu(t, 5)->socket, 1);
        assert_int_equal(ncm_topo_num_cpus(t), 17);
        ncm_topo_free(t);
}

static void test_topology_sysfs_without_online_list_uses_cpu_files(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        ncm_autoptr(ncm_cpuset) all = ncm_cpuset_new();
        rm(f, "/sys/devices/system/cpu/online");
        PUT(f, "/sys/devices/system/cpu/cpu5/online", "0\n");
        rm(f, "/sys/devices/system/cpu/cpu23/online");
        t = discover_ok(f->root);
        ncm_topo_all_cpus(t, all);
        /* the dump's own cpuN/online files; one without it counts as online (cpu0 usually) */
        tu_assert_cpuset(all, "4,6-20,23");
        ncm_topo_free(t);
}

static void test_topology_sysfs_empty_file_counts_as_missing(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        PUT(f, "/sys/devices/system/cpu/online", "\n");
        PUT(f, "/sys/devices/system/cpu/cpu4/topology/core_id", "");
        t = discover_ok(f->root);
        /* per-CPU online files, and cpu4 still a core of its own (thread siblings) */
        assert_int_equal(ncm_topo_cpu(t, 4)->core, 4);
        ncm_topo_free(t);
}

static void test_topology_sysfs_no_node_dir_is_one_node(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        size_t n;
        rm(f, "/sys/devices/system/node");
        t = discover_ok(f->root);
        const int *ids = ncm_topo_numa_ids(t, &n);
        assert_int_equal(n, 1);
        assert_int_equal(ids[0], 0);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 0), 10);
        ncm_topo_free(t);
}

static void test_topology_sysfs_unknown_package_ids_are_renumbered(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        char rel[128];
        for (int cpu = 4; cpu <= 20; cpu++) {
                snprintf(rel, sizeof(rel),
                         "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
                put(f, rel, cpu == 7 ? "70000\n" : "-1\n", cpu == 7 ? 6 : 3);
        }
        t = discover_ok(f->root);
        /* -1: grouped by core_siblings_list (even / odd CPUs here), numbered by lowest CPU;
         * cpu7 (70000) is a package of its own */
        assert_int_equal(ncm_topo_cpu(t, 4)->socket, 0);
        assert_int_equal(ncm_topo_cpu(t, 5)->socket, 1);
        assert_int_equal(ncm_topo_cpu(t, 7)->socket, 2);
        assert_int_equal(ncm_topo_cpu(t, 9)->socket, 1);
        assert_int_equal(ncm_topo_num_sockets(t), 3);
        ncm_topo_free(t);
}

static void test_topology_sysfs_l3_without_id_uses_lowest_cpu(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        rm(f, "/sys/devices/system/cpu/cpu9/cache/index3/id");
        t = discover_ok(f->root);
        /* one missing id names every L3 by its lowest online CPU */
        assert_int_equal(ncm_topo_cpu(t, 9)->uncore, 5);
        assert_int_equal(ncm_topo_cpu(t, 4)->uncore, 4);
        assert_int_equal(ncm_topo_num_uncore_caches(t), 2);
        ncm_topo_free(t);
}

static void test_topology_sysfs_symlinks_stay_in_root(void **state)
{
        fixture *f = *state;
        ncm_topo *t;
        char *p;
        rm(f, "/sys/devices/system/cpu/cpu6/topology/core_id");
        if (asprintf(&p, "%s/sys/devices/system/cpu/cpu6/topology/core_id", f->root) < 0 ||
            symlink("/etc/hostname", p) < 0)
                fail_msg("symlink");
        free(p);
        /* resolved inside the root, the link points nowhere: core_id counts as missing */
        t = discover_ok(f->root);
        assert_int_equal(ncm_topo_cpu(t, 6)->core, 6);
        ncm_topo_free(t);
}

/* --- the pure rules --- */

static ncm__raw_cpu raw(int cpu, int64_t pkg, int64_t core_id, int thread_first)
{
        return (ncm__raw_cpu){.cpu = cpu,
                              .package = pkg,
                              .core_id = core_id,
                              .book = NCM__RAW_NONE,
                              .drawer = NCM__RAW_NONE,
                              .thread_first = thread_first,
                              .package_first = -1,
                              .has_l3 = false,
                              .l3_id = NCM__RAW_NONE,
                              .l3_first = -1};
}

static void test_topology_assemble_unlisted_cpus_get_lowest_free_node(void **state)
{
        ncm__raw_cpu cpus[] = {raw(0, 0, 0, 0), raw(1, 0, 1, 1), raw(2, 0, 2, 2)};
        ncm_autoptr(ncm_cpuset) n0 = tu_cpuset("1");
        ncm_autoptr(ncm_cpuset) n2 = tu_cpuset("2");
        uint32_t row0[] = {10, 15, 25}, row2[] = {25, 30, 10};
        ncm__raw_node nodes[] = {{0, n0, row0, 3}, {2, n2, row2, 3}};
        ncm__raw_machine m = {cpus, 3, nodes, 2};
        ncm_topo *t = NULL;
        size_t n;
        (void)state;
        assert_int_equal(ncm__topo_assemble(&m, &t, NULL), 0);
        assert_int_equal(ncm_topo_cpu(t, 0)->numa, 1); /* extra node: lowest unused id */
        const int *ids = ncm_topo_numa_ids(t, &n);
        assert_int_equal(n, 3);
        assert_int_equal(ids[1], 1);
        /* rows of length 3 = directories + extra node: mapped onto 0, 1, 2 */
        assert_int_equal(ncm_topo_numa_distance(t, 0, 1), 15);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 2), 25);
        assert_int_equal(ncm_topo_numa_distance(t, 1, 1), 10);
        assert_int_equal(ncm_topo_numa_distance(t, 1, 2), 30); /* transposed from node 2 */
        ncm_topo_free(t);
}

static void test_topology_assemble_distance_rows_of_directories(void **state)
{
        ncm__raw_cpu cpus[] = {raw(0, 0, 0, 0), raw(1, 0, 1, 1)};
        ncm_autoptr(ncm_cpuset) n3 = tu_cpuset("0");
        ncm_autoptr(ncm_cpuset) n7 = tu_cpuset("");
        uint32_t row3[] = {10, 40}, row7[] = {41, 10, 99};
        ncm__raw_node nodes[] = {{3, n3, row3, 2}, {7, n7, row7, 3}};
        ncm__raw_machine m = {cpus, 2, nodes, 2};
        ncm_topo *t = NULL;
        (void)state;
        assert_int_equal(ncm__topo_assemble(&m, &t, NULL), 0);
        /* cpu1 is in no node: extra node 0; node 3's row covers the 2 directories; node 7's
         * row (3 entries) covers 0, 3, 7 */
        assert_int_equal(ncm_topo_cpu(t, 1)->numa, 0);
        assert_int_equal(ncm_topo_numa_distance(t, 3, 7), 40);
        assert_int_equal(ncm_topo_numa_distance(t, 7, 0), 41);
        assert_int_equal(ncm_topo_numa_distance(t, 7, 3), 10 /* as given */);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 3), 20); /* unknown both ways */
        assert_int_equal(ncm_topo_numa_distance(t, 0, 7), 41); /* transposed */
        ncm_topo_free(t);
}

static void test_topology_assemble_core_grouping(void **state)
{
        /* s390-like: one core_id for three CPUs that are not thread siblings; x86-like: two
         * threads; no core information at all: each CPU its own core */
        ncm__raw_cpu cpus[] = {raw(0, 0, 1, 0),
                               raw(1, 0, 1, 1),
                               raw(2, 0, 1, 2),
                               raw(3, 0, 5, -1),
                               raw(4, 0, 5, -1),
                               raw(5, 0, NCM__RAW_NONE, -1),
                               raw(6, 0, NCM__RAW_NONE, -1),
                               raw(7, 0, NCM__RAW_NONE, 6)};
        ncm__raw_machine m = {cpus, 8, NULL, 0};
        ncm_topo *t = NULL;
        (void)state;
        assert_int_equal(ncm__topo_assemble(&m, &t, NULL), 0);
        assert_int_equal(ncm_topo_cpu(t, 1)->core, 1);
        assert_int_equal(ncm_topo_cpu(t, 2)->core, 2);
        assert_int_equal(ncm_topo_cpu(t, 4)->core, 3);
        assert_int_equal(ncm_topo_cpu(t, 5)->core, 5);
        assert_int_equal(ncm_topo_cpu(t, 6)->core, 6);
        assert_int_equal(ncm_topo_cpu(t, 7)->core, 7); /* siblings name 6, which has none */
        ncm_topo_free(t);
}

static void test_topology_assemble_uncore_rules(void **state)
{
        ncm__raw_cpu cpus[] = {raw(0, 0, 0, 0), raw(1, 0, 0, 0), raw(2, 1, 0, 2), raw(3, 1, 0, 2),
                               raw(4, 2, 0, 4)};
        ncm__raw_machine m = {cpus, 5, NULL, 0};
        ncm_topo *t = NULL;
        (void)state;
        /* ids too large: renumbered by lowest CPU; cpu4 has no L3: its socket (2) */
        cpus[0].has_l3 = cpus[1].has_l3 = cpus[2].has_l3 = cpus[3].has_l3 = true;
        cpus[0].l3_id = cpus[1].l3_id = 90000;
        cpus[2].l3_id = cpus[3].l3_id = 10;
        assert_int_equal(ncm__topo_assemble(&m, &t, NULL), 0);
        assert_int_equal(ncm_topo_cpu(t, 0)->uncore, 0);
        assert_int_equal(ncm_topo_cpu(t, 2)->uncore, 1);
        assert_int_equal(ncm_topo_cpu(t, 4)->uncore, 2);
        t = ncm_topo_free(t);
        /* an L3 with an unknown CPU set is private to the core */
        cpus[2].l3_id = NCM__RAW_NONE;
        cpus[2].l3_first = -1;
        cpus[3].l3_first = -1;
        cpus[0].l3_first = cpus[1].l3_first = 0;
        assert_int_equal(ncm__topo_assemble(&m, &t, NULL), 0);
        assert_int_equal(ncm_topo_cpu(t, 0)->uncore, 0);
        assert_int_equal(ncm_topo_cpu(t, 3)->uncore, 2);
        ncm_topo_free(t);
}

static void test_topology_assemble_no_cpu(void **state)
{
        ncm__raw_machine m = {NULL, 0, NULL, 0};
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm__topo_assemble(&m, &t, &err), -EINVAL);
        assert_string_equal(err.msg, "could not detect number of cpus");
}

static void test_topology_sysfs_parsers(void **state)
{
        int v = 7;
        uint32_t d[4];
        (void)state;
        assert_int_equal(ncm__sysfs_parse_int("12\n", &v), 0);
        assert_int_equal(v, 12);
        assert_int_equal(ncm__sysfs_parse_int("-1\n", &v), 0);
        assert_int_equal(v, -1);
        assert_int_equal(ncm__sysfs_parse_int("2147483647", &v), 0);
        assert_int_equal(ncm__sysfs_parse_int("-2147483648", &v), 0);
        assert_int_equal(v, -2147483647 - 1);
        assert_int_equal(ncm__sysfs_parse_int("2147483648", &v), -ERANGE);
        assert_int_equal(ncm__sysfs_parse_int("99999999999999999999", &v), -ERANGE);
        assert_int_equal(ncm__sysfs_parse_int("", &v), -EINVAL);
        assert_int_equal(ncm__sysfs_parse_int("-", &v), -EINVAL);
        assert_int_equal(ncm__sysfs_parse_int(" 1", &v), -EINVAL);
        assert_int_equal(ncm__sysfs_parse_int("1x", &v), -EINVAL);
        assert_int_equal(ncm__sysfs_parse_int("0x10", &v), -EINVAL);

        assert_int_equal(ncm__sysfs_parse_distances("10 21 21 10\n", d, 4), 4);
        assert_int_equal(d[1], 21);
        assert_int_equal(ncm__sysfs_parse_distances("10  20\n", d, 4), 2);
        assert_int_equal(ncm__sysfs_parse_distances("10 20 30 40 50", d, 4), -E2BIG);
        assert_int_equal(ncm__sysfs_parse_distances("10 -20", d, 4), -EINVAL);
        assert_int_equal(ncm__sysfs_parse_distances("10,20", d, 4), -EINVAL);
        assert_int_equal(ncm__sysfs_parse_distances("\n", d, 4), -EINVAL);
        assert_int_equal(ncm__sysfs_parse_distances("99999999999", d, 4), -ERANGE);

        assert_int_equal(ncm__sysfs_equals("Unified\n", "Unified"), 1);
        assert_int_equal(ncm__sysfs_equals("Unified2", "Unified"), 0);
}

static void test_topology_sysfs_this_machine(void **state)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        /* whatever this machine is, discovery succeeds and keeps its invariants */
        if (discover_at("/", &t, &err) < 0)
                fail_msg("this machine: %s", err.msg);
        check_invariants("this machine", t);
        check_round_trip("this machine", t);
        assert_true(ncm_topo_num_cpus(t) >= 1);
        ncm_topo_free(t);
}

#define COPY_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup_copy, teardown_copy)

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_topology_sysfs_parsers),
                        cmocka_unit_test(test_topology_assemble_unlisted_cpus_get_lowest_free_node),
                        cmocka_unit_test(test_topology_assemble_distance_rows_of_directories),
                        cmocka_unit_test(test_topology_assemble_core_grouping),
                        cmocka_unit_test(test_topology_assemble_uncore_rules),
                        cmocka_unit_test(test_topology_assemble_no_cpu),
                        cmocka_unit_test(test_topology_sysfs_every_dump),
                        cmocka_unit_test(test_topology_sysfs_goldens),
                        cmocka_unit_test(test_topology_sysfs_this_machine),
                        cmocka_unit_test(test_topology_sysfs_not_a_sysfs_tree),
                        COPY_TEST(test_topology_sysfs_bad_core_id),
                        COPY_TEST(test_topology_sysfs_bad_online_list),
                        COPY_TEST(test_topology_sysfs_cpu_id_above_max),
                        COPY_TEST(test_topology_sysfs_cpu_dir_above_max_without_online_list),
                        COPY_TEST(test_topology_sysfs_bad_node_cpulist),
                        COPY_TEST(test_topology_sysfs_bad_distance),
                        COPY_TEST(test_topology_sysfs_bad_cache_level),
                        COPY_TEST(test_topology_sysfs_bad_online_flag),
                        COPY_TEST(test_topology_sysfs_file_is_a_directory),
                        COPY_TEST(test_topology_sysfs_oversized_file),
                        COPY_TEST(test_topology_sysfs_no_online_cpu),
                        COPY_TEST(test_topology_sysfs_nul_padding_and_spaces),
                        COPY_TEST(test_topology_sysfs_without_online_list_uses_cpu_files),
                        COPY_TEST(test_topology_sysfs_empty_file_counts_as_missing),
                        COPY_TEST(test_topology_sysfs_no_node_dir_is_one_node),
                        COPY_TEST(test_topology_sysfs_unknown_package_ids_are_renumbered),
                        COPY_TEST(test_topology_sysfs_l3_without_id_uses_lowest_cpu),
                        COPY_TEST(test_topology_sysfs_symlinks_stay_in_root),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
