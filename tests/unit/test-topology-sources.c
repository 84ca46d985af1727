/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The non-sysfs sources: hwloc synthetic descriptions, lstopo XML (the hwloc 3.0 exports of
 * tests/data, a version-2 export made by the installed libhwloc, and damaged ones), the nodecm
 * JSON reader's validation with field paths, the writer's exact format and round trips, and
 * the source table. XML exports are also checked against sysfs discovery of the same machine.
 */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "base/json.h"
#include "topology/topology-internal.h"
#include "testutil.h"

static ncm_topo *synthetic(const char *desc)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_topo_from_synthetic(desc, &t, &err) < 0)
                fail_msg("synthetic \"%s\": %s", desc, err.msg);
        return t;
}

static char *json_of(const ncm_topo *t)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_topo_format_json(t, &b);
        assert_false(ncm_buf_failed(&b));
        return ncm_buf_steal(&b);
}

/* --- synthetic --- */

static void test_topology_synthetic_ids(void **state)
{
        ncm_topo *t = synthetic("package:2 numa:2 l3:1 core:2 pu:2");
        size_t n;
        (void)state;
        const ncm_cpu_info *c = ncm_topo_cpus(t, &n);
        assert_int_equal(n, 16);
        for (int i = 0; i < 16; i++) {
                /* PUs are numbered in tree order; core = its first PU; the L3 spans its
                 * NUMA node, so it is cadvisor's node cache and the uncore id is the socket */
                assert_int_equal(c[i].cpu, i);
                assert_int_equal(c[i].core, i & ~1);
                assert_int_equal(c[i].socket, i / 8);
                assert_int_equal(c[i].numa, i / 4);
                assert_int_equal(c[i].uncore, i / 8);
        }
        assert_int_equal(ncm_topo_num_cores(t), 8);
        assert_int_equal(ncm_topo_num_uncore_caches(t), 2);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 0), 10);
        assert_int_equal(ncm_topo_numa_distance(t, 0, 3), 20);
        ncm_topo_free(t);
        /* two L3 per NUMA node: uncore caches, named by their logical index (synthetic caches
         * have no os_index; the kernel numbers L3 ids the same way) */
        t = synthetic("package:2 numa:1 l3:2 core:2 pu:2");
        c = ncm_topo_cpus(t, &n);
        for (int i = 0; i < 16; i++)
                assert_int_equal(c[i].uncore, i / 4);
        ncm_topo_free(t);
}

static void test_topology_synthetic_without_l3_or_numa(void **state)
{
        ncm_topo *t = synthetic("package:2 core:4 pu:2");
        size_t n;
        (void)state;
        /* no L3: uncore = socket; hwloc adds one NUMA node for the machine */
        assert_int_equal(ncm_topo_cpu(t, 9)->uncore, 1);
        assert_int_equal(ncm_topo_cpu(t, 9)->socket, 1);
        (void)ncm_topo_numa_ids(t, &n);
        assert_int_equal(n, 1);
        assert_int_equal(ncm_topo_cpus_per_core(t), 2);
        ncm_topo_free(t);
        t = synthetic("pu:3");
        assert_int_equal(ncm_topo_num_cpus(t), 3);
        assert_int_equal(ncm_topo_num_cores(t), 3); /* no Core level: each PU its own core */
        /* no Package level: the package is unknown, -1 as the kernel prints it */
        assert_int_equal(ncm_topo_num_sockets(t), 1);
        assert_int_equal(ncm_topo_cpu(t, 2)->socket, -1);
        assert_int_equal(ncm_topo_cpu(t, 2)->uncore, -1);
        ncm_topo_free(t);
}

static void test_topology_synthetic_large(void **state)
{
        ncm_topo *t = synthetic("package:4 numa:16 l3:2 core:4 pu:2");
        (void)state;
        assert_int_equal(ncm_topo_num_cpus(t), 1024);
        assert_int_equal(ncm_topo_num_numa_nodes(t), 64);
        assert_int_equal(ncm_topo_num_uncore_caches(t), 128);
        ncm_topo_free(t);
        /* 8192 PUs; hierarchical, since hwloc is quadratic in siblings at one level */
        t = synthetic("package:8 core:128 pu:8");
        assert_int_equal(ncm_topo_num_cpus(t), 8192);
        ncm_topo_free(t);
}

static void expect_synthetic_error(const char *desc, int code, const char *msg)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_topo_from_synthetic(desc, &t, &err), -code);
        assert_null(t);
        if (!strstr(err.msg, msg))
                fail_msg("\"%s\": error \"%s\" lacks \"%s\"", desc, err.msg, msg);
}

static void test_topology_synthetic_errors(void **state)
{
        char long_desc[5000];
        (void)state;
        expect_synthetic_error("", EINVAL, "empty description");
        expect_synthetic_error("garbage", EINVAL,
                               "synthetic topology \"garbage\": hwloc cannot "
                               "parse it");
        expect_synthetic_error("core:2 pu:0", EINVAL, "hwloc cannot parse it");
        expect_synthetic_error("pu:8193", ERANGE, "more than 8192 PUs");
        expect_synthetic_error("core:100000 pu:100000", ERANGE, "more than 8192 PUs");
        expect_synthetic_error("core:99999999999999999999 pu:2", ERANGE, "more than 8192 PUs");
        memset(long_desc, ' ', sizeof(long_desc) - 1);
        long_desc[sizeof(long_desc) - 1] = '\0';
        expect_synthetic_error(long_desc, EINVAL, "longer than 4096 bytes");
}

/* --- XML --- */

static ncm_topo *xml_file(const char *name)
{
        char rel[256];
        char *path;
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        snprintf(rel, sizeof(rel), "topologies/%s.xml", name);
        path = tu_data_path(rel);
        if (ncm_topo_from_xml_file(path, &t, &err) < 0)
                fail_msg("%s: %s", name, err.msg);
        free(path);
        return t;
}

static void test_topology_xml_exports_load(void **state)
{
        static const struct {
                const char *name;
                int cpus, cores, sockets, numa_all;
        } xmls[] = {
                        /* cgroup-restricted exports hold only the allowed CPUs and nodes;
                         * CPUs whose node was left out (0-1, 12-15) are no node's */
                        {"16amd64-8n2c-cpusets-xml", 4, 4, 3, 4},
                        {"16em64t-4s2c2t-offlines-xml", 12, 7, 4, 1},
                        {"16em64t-4s2c2t-xml", 16, 8, 4, 1},
                        {"2i386-2c-nohugepage", 2, 2, 1, 1},
                        {"2i386-2t-hugepagesizecount", 2, 1, 1, 1},
                        {"32amd64-4s2n4c-cgroup2", 6, 6, 1, 6},
                        {"32em64t-2n8c+dax+nvme+mic+dimms", 16, 16, 2, 2},
                        {"64amd64-4p2n4ca2co", 64, 64, 4, 8},
                        {"fakeheterocpunuma", 20, 10, 2, 6},
                        {"fakepcilocalities", 40, 40, 4, 4},
                        {"nvidia-dgx-gb10-nomidr", 20, 20, 1, 1},
                        {"nvidia-dgx-gb10", 20, 20, 1, 1},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(xmls); i++) {
                ncm_topo *t = xml_file(xmls[i].name);
                size_t nn;
                (void)ncm_topo_numa_ids(t, &nn);
                if (ncm_topo_num_cpus(t) != xmls[i].cpus ||
                    ncm_topo_num_cores(t) != xmls[i].cores ||
                    ncm_topo_num_sockets(t) != xmls[i].sockets || (int)nn != xmls[i].numa_all)
                        fail_msg("%s: %d cpus %d cores %d sockets %zu numa", xmls[i].name,
                                 ncm_topo_num_cpus(t), ncm_topo_num_cores(t),
                                 ncm_topo_num_sockets(t), nn);
                ncm_topo_free(t);
        }
}

/* The machine root of an extracted dump (the directory holding sys/), as in the sysfs test. */
static char *extract_root(const char *name, char **tmp)
{
        char tmpl[] = "/dev/shm/nodecm-topo-XXXXXX";
        char rel[256], *tarball, *cmd, *root = NULL;
        FILE *p;
        char line[4096];

        if (access("/dev/shm", W_OK) == 0 && mkdtemp(tmpl))
                *tmp = strdup(tmpl);
        else
                *tmp = tu_mkdtemp();
        snprintf(rel, sizeof(rel), "topologies/%s.tar.bz2", name);
        tarball = tu_data_path(rel);
        if (asprintf(&cmd, "tar -xjf '%s' -C '%s' && find '%s' -maxdepth 4 -type d -name sys",
                     tarball, *tmp, *tmp) < 0)
                fail_msg("out of memory");
        p = popen(cmd, "r");
        if (p && fgets(line, sizeof(line), p)) {
                line[strcspn(line, "\n")] = '\0';
                line[strlen(line) - 4] = '\0'; /* strip "/sys" */
                root = strdup(line);
        }
        if (!p || pclose(p) != 0 || !root)
                fail_msg("cannot extract %s", tarball);
        free(cmd);
        free(tarball);
        return root;
}

/*
 * The same table but for uncore ids: an XML export never records cache ids, so nodecm names
 * an L3 by its logical index (what current x86 kernels give), while these dumps come from
 * kernels without cache id files, where cadvisor falls back to the socket.
 */
static bool same_but_uncore(const ncm_topo *a, const ncm_topo *b)
{
        size_t na, nb, ka, kb;
        const ncm_cpu_info *ca = ncm_topo_cpus(a, &na), *cb = ncm_topo_cpus(b, &nb);
        const int *ia = ncm_topo_numa_ids(a, &ka), *ib = ncm_topo_numa_ids(b, &kb);
        if (na != nb || ka != kb)
                return false;
        for (size_t i = 0; i < na; i++)
                if (ca[i].cpu != cb[i].cpu || ca[i].core != cb[i].core ||
                    ca[i].socket != cb[i].socket || ca[i].numa != cb[i].numa)
                        return false;
        for (size_t i = 0; i < ka; i++)
                for (size_t j = 0; j < ka; j++)
                        if (ia[i] != ib[i] ||
                            ncm_topo_numa_distance(a, ia[i], ia[j]) !=
                                            ncm_topo_numa_distance(b, ib[i], ib[j]))
                                return false;
        return true;
}

static void test_topology_xml_matches_sysfs_of_same_machine(void **state)
{
        /* pairs whose XML was exported from the same, unrestricted sysfs */
        static const char *const pairs[][2] = {
                        {"16em64t-4s2c2t-offlines-xml", "16em64t-4s2c2t-offlines"},
                        {"2i386-2c-nohugepage", "2i386-2c-nohugepage"},
                        {"2i386-2t-hugepagesizecount", "2i386-2t-hugepagesizecount"},
                        {"64amd64-4p2n4ca2co", "64amd64-4p2n4ca2co"},
                        {"nvidia-dgx-gb10", "nvidia-dgx-gb10"},
                        {"fakeheterocpunuma", "fakeheterocpunuma"},
                        {"32em64t-2n8c+dax+nvme+mic+dimms", "32em64t-2n8c+dax+nvme+mic+dimms"},
                        {"fakepcilocalities", "fakepcilocalities"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(pairs); i++) {
                char *tmp = NULL;
                char *root = extract_root(pairs[i][1], &tmp);
                ncm_topo *x = xml_file(pairs[i][0]);
                ncm_topo *s = NULL;
                ncm_error err = NCM_ERROR_INIT;
                int fd = ncm_fs_open_root(root, &err);
                assert_true(fd >= 0);
                if (ncm_topo_discover_sysfs(fd, &s, &err) < 0)
                        fail_msg("%s: %s", pairs[i][1], err.msg);
                close(fd);
                if (!same_but_uncore(x, s)) {
                        char *a = json_of(x), *b = json_of(s);
                        fail_msg("%s: XML and sysfs differ\n%s\n%s", pairs[i][0], a, b);
                }
                ncm_topo_free(x);
                ncm_topo_free(s);
                tu_rm_rf(tmp);
                free(tmp);
                free(root);
        }
}

/* An XML written by the installed libhwloc (format version 2) loads back to the same table. */
static void test_topology_xml_version2_export(void **state)
{
        hwloc_topology_t h;
        char *xml = NULL;
        int len = 0;
        ncm_topo *from_xml = NULL;
        /* hwloc's export gives each synthetic node its default 1 GiB, which the XML source
         * reads as the node's memory; the synthetic source takes memory only when told */
        ncm_topo *from_syn = synthetic("package:2 numa:1(memory=1GiB) l3:2 core:3 pu:2");
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(hwloc_topology_init(&h), 0);
        assert_int_equal(hwloc_topology_set_synthetic(h, "package:2 numa:1 l3:2 core:3 pu:2"), 0);
        assert_int_equal(hwloc_topology_load(h), 0);
        assert_int_equal(hwloc_topology_export_xmlbuffer(h, &xml, &len, 0), 0);
        if (ncm_topo_from_xml_buffer(xml, (size_t)len - 1, &from_xml, &err) < 0)
                fail_msg("%s", err.msg);
        assert_true(ncm_topo_equal(from_xml, from_syn));
        hwloc_free_xmlbuffer(h, xml);
        hwloc_topology_destroy(h);
        ncm_topo_free(from_xml);
        ncm_topo_free(from_syn);
}

static void expect_xml_error(const char *xml, size_t len, int code, const char *msg)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_topo_from_xml_buffer(xml, len, &t, &err), -code);
        assert_null(t);
        if (!strstr(err.msg, msg))
                fail_msg("error \"%s\" lacks \"%s\"", err.msg, msg);
}

static void test_topology_xml_errors(void **state)
{
        size_t len;
        char *good = tu_read_data("topologies/2i386-2t-hugepagesizecount.xml", &len);
        char *bad;
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        expect_xml_error("", 0, EINVAL, "empty XML");
        expect_xml_error("garbage", 7, EINVAL, "hwloc cannot load this XML");
        expect_xml_error("<topology version=\"2.0\"><object", 31, EINVAL,
                         "hwloc cannot load this XML");
        expect_xml_error("<x>\0</x>", 8, EINVAL, "NUL byte in XML");
        /* truncated in the middle */
        expect_xml_error(good, len / 2, EINVAL, "hwloc cannot load this XML");
        /* a PU whose os_index is above the maximum */
        bad = strdup(good);
        {
                char *pu = strstr(bad, "type=\"PU\" os_index=\"1\"");
                assert_non_null(pu);
                memcpy(pu + strlen("type=\"PU\" os_index=\""), "9", 1);
                /* os_index="9" keeps the length; make it 9000 in a copy with room */
        }
        {
                char *big = malloc(len + 8);
                char *pu = strstr(bad, "type=\"PU\" os_index=\"9\"");
                size_t at = (size_t)(pu - bad) + strlen("type=\"PU\" os_index=\"9");
                memcpy(big, bad, at);
                memcpy(big + at, "000", 3);
                memcpy(big + at + 3, bad + at, len - at + 1);
                expect_xml_error(big, len + 3, ERANGE, "PU L#1 has os_index 9000");
                free(big);
        }
        free(bad);
        /* two PUs with one os_index (hwloc loads that): refused under both rules */
        bad = strdup(good);
        {
                char *pu = strstr(bad, "type=\"PU\" os_index=\"1\"");
                assert_non_null(pu);
                pu[strlen("type=\"PU\" os_index=\"")] = '0';
        }
        for (int rules = 0; rules < NCM_TOPO_RULES_N; rules++) {
                assert_int_equal(ncm__topo_from_xml_buffer_rules(bad, len, (ncm_topo_rules)rules,
                                                                 &t, &err),
                                 -EINVAL);
                assert_null(t);
                if (!strstr(err.msg, "XML topology: two PUs with os_index 0"))
                        fail_msg("error \"%s\"", err.msg);
        }
        free(bad);
        assert_int_equal(ncm_topo_from_xml_file("/nonexistent/x.xml", &t, &err), -ENOENT);
        assert_non_null(strstr(err.msg, "/nonexistent/x.xml"));
        free(good);
}

/* --- JSON --- */

static ncm_topo *json(const char *text)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_topo_parse_json(text, strlen(text), "t.json", &t, &err) < 0)
                fail_msg("%s", err.msg);
        return t;
}

static void test_topology_json_writer_format(void **state)
{
        ncm_topo *t = synthetic("package:2 numa:1 core:1 pu:2");
        char *s = json_of(t);
        (void)state;
        assert_string_equal(s, "{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                               "\"uncore\": 0},\n"
                               "          {\"cpu\": 1, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                               "\"uncore\": 0},\n"
                               "          {\"cpu\": 2, \"core\": 2, \"socket\": 1, \"numa\": 1, "
                               "\"uncore\": 1},\n"
                               "          {\"cpu\": 3, \"core\": 2, \"socket\": 1, \"numa\": 1, "
                               "\"uncore\": 1}],\n"
                               " \"numa\": [{\"id\": 0, \"distances\": [10, 20]},\n"
                               "          {\"id\": 1, \"distances\": [20, 10]}]}\n");
        free(s);
        ncm_topo_free(t);
}

static void test_topology_json_round_trips(void **state)
{
        static const char *const descs[] = {"pu:1", "package:2 numa:2 l3:1 core:8 pu:2",
                                            "package:4 numa:16 l3:2 core:4 pu:2"};
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(descs); i++) {
                ncm_topo *t = synthetic(descs[i]);
                char *s = json_of(t);
                ncm_topo *back = json(s);
                char *s2 = json_of(back);
                assert_true(ncm_topo_equal(t, back));
                assert_string_equal(s, s2);
                free(s);
                free(s2);
                ncm_topo_free(t);
                ncm_topo_free(back);
        }
}

static void test_topology_json_accepts_hand_written(void **state)
{
        /* any CPU order, no "numa" (defaults), sparse ids, CPU-less node, own distances */
        ncm_topo *t = json("{\"cpus\": [{\"cpu\": 5, \"core\": 4, \"socket\": 1, \"numa\": 2, "
                           "\"uncore\": 7}, {\"cpu\": 4, \"core\": 4, \"socket\": 1, \"numa\": 2, "
                           "\"uncore\": 7}]}");
        size_t n;
        (void)state;
        assert_int_equal(ncm_topo_cpus(t, &n)[0].cpu, 4);
        assert_int_equal(*ncm_topo_numa_ids(t, &n), 2);
        assert_int_equal(ncm_topo_numa_distance(t, 2, 2), 10);
        ncm_topo_free(t);
        t = json("{\"numa\": [{\"id\": 3, \"distances\": [10, 31]}, {\"id\": 1, \"distances\": "
                 "[31, "
                 "10]}], \"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 1, "
                 "\"uncore\": 0}]}");
        assert_int_equal(ncm_topo_numa_distance(t, 1, 3), 31);
        assert_int_equal(ncm_topo_numa_distance(t, 3, 3), 10);
        (void)ncm_topo_numa_ids(t, &n);
        assert_int_equal(n, 2);
        ncm_topo_free(t);
}

/*
 * The kubelet's table of machines with the kernel's raw ids (a Kunpeng 920's package 8442 and
 * node 36, s390's -1, Itanium's 196611 and 983297, a 32-bit cache id) reads and prints back
 * verbatim: nothing is range-checked but CPU ids, nothing renumbered.
 */
static void test_topology_json_raw_ids_round_trip(void **state)
{
        static const char text[] =
                        "{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": -1, \"numa\": -1, "
                        "\"uncore\": -1},\n"
                        "          {\"cpu\": 1, \"core\": 1, \"socket\": 8442, \"numa\": 36, "
                        "\"uncore\": 4294967295},\n"
                        "          {\"cpu\": 64, \"core\": 64, \"socket\": 196611, \"numa\": "
                        "983297, \"uncore\": 196611}],\n"
                        " \"numa\": [{\"id\": -1, \"distances\": [10, 20, 30]},\n"
                        "          {\"id\": 36, \"distances\": [20, 10, 40]},\n"
                        "          {\"id\": 983297, \"distances\": [30, 40, 10]}]}\n";
        ncm_topo *t = json(text);
        ncm_buf b = NCM_BUF_INIT;
        (void)state;
        assert_int_equal(ncm_topo_cpu(t, 1)->socket, 8442);
        assert_true(ncm_topo_cpu(t, 1)->uncore == INT64_C(4294967295));
        assert_int_equal(ncm_topo_numa_distance(t, -1, 983297), 30);
        ncm_topo_format_json(t, &b);
        assert_string_equal(b.data, text);
        ncm_buf_done(&b);
        ncm_topo_free(t);
        /* an empty table (a machine whose CPUs cadvisor cannot place) round-trips too */
        t = json("{\"cpus\": []}");
        ncm_topo_format_json(t, &b);
        assert_string_equal(b.data, "{\"cpus\": [],\n \"numa\": []}\n");
        ncm_buf_done(&b);
        ncm_topo_free(t);
}

static void expect_json_error(const char *text, int code, const char *msg)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_topo_parse_json(text, strlen(text), "t.json", &t, &err);
        if (r != -code || strcmp(err.msg, msg) != 0)
                fail_msg("%s\n  got %d \"%s\"\n  expected -%d \"%s\"", text, r, err.msg, code, msg);
        assert_null(t);
}

#define C0 "{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, \"uncore\": 0}"

static void test_topology_json_errors(void **state)
{
        (void)state;
        expect_json_error("", EINVAL, "t.json:1:1: unexpected end of JSON input");
        expect_json_error("{\"cpus\": [" C0 "]} x", EINVAL,
                          "t.json:1:72: invalid JSON: unexpected character");
        expect_json_error("[]", EINVAL, "t.json: topology: expected object, got array");
        expect_json_error("{}", EINVAL, "t.json: cpus: missing");
        expect_json_error("{\"cpus\": null}", EINVAL, "t.json: cpus: expected array, got null");
        expect_json_error("{\"cpus\": {}}", EINVAL, "t.json: cpus: expected array, got object");
        expect_json_error("{\"cpus\": [" C0 "], \"cpu\": 1}", EINVAL, "t.json: cpu: unknown field");
        expect_json_error("{\"cpus\": [" C0 ", 3]}", EINVAL,
                          "t.json: cpus[1]: expected object, got number");
        expect_json_error("{\"cpus\": [" C0 ", {\"cpu\": 1, \"core\": 0, \"socket\": 0, "
                          "\"numa\": 0}]}",
                          EINVAL, "t.json: cpus[1].uncore: missing");
        expect_json_error("{\"cpus\": [" C0 ", " C0 ", {\"cpu\": 2, \"core\": \"0\", "
                          "\"socket\": 0, \"numa\": 0, \"uncore\": 0}, " C0 "]}",
                          EINVAL, "t.json: cpus[2].core: expected an integer, got string");
        expect_json_error("{\"cpus\": [{\"cpu\": 0.5, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                          "\"uncore\": 0}]}",
                          EINVAL, "t.json: cpus[0].cpu: expected an integer, got 0.5");
        expect_json_error("{\"cpus\": [{\"cpu\": 0, \"core\": null, \"socket\": 0, \"numa\": 0, "
                          "\"uncore\": 0}]}",
                          EINVAL, "t.json: cpus[0].core: expected an integer, got null");
        expect_json_error("{\"cpus\": [{\"cpu\": 8192, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                          "\"uncore\": 0}]}",
                          ERANGE, "t.json: cpus[0].cpu: 8192 is out of range [0, 8191]");
        expect_json_error("{\"cpus\": [{\"cpu\": 1, \"core\": -1, \"socket\": -1, \"numa\": 0, "
                          "\"uncore\": 0}]}",
                          ERANGE, "t.json: cpus[0].core: -1 is out of range [0, 8191]");
        expect_json_error("{\"cpus\": [{\"cpu\": 1, \"core\": 1, \"socket\": 2147483648, "
                          "\"numa\": 0, \"uncore\": 0}]}",
                          ERANGE,
                          "t.json: cpus[0].socket: 2147483648 is out of range [-2147483648, "
                          "2147483647]");
        expect_json_error("{\"cpus\": [{\"cpu\": 1, \"core\": 1, \"socket\": 0, \"numa\": "
                          "-2147483649, \"uncore\": 0}]}",
                          ERANGE,
                          "t.json: cpus[0].numa: -2147483649 is out of range [-2147483648, "
                          "2147483647]");
        expect_json_error("{\"cpus\": [{\"cpu\": 1, \"core\": 1, \"socket\": 0, \"numa\": 0, "
                          "\"uncore\": 9223372036854775808}]}",
                          ERANGE,
                          "t.json: cpus[0].uncore: 9223372036854775808 is out of range "
                          "[-9223372036854775808, 9223372036854775807]");
        expect_json_error("{\"cpus\": [{\"cpu\": 1, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                          "\"uncore\": 0, \"thread\": 1}]}",
                          EINVAL, "t.json: cpus[0].thread: unknown field");
        expect_json_error("{\"cpus\": [" C0 ", {\"cpu\": 1, \"core\": 0, \"socket\": 0, "
                          "\"numa\": 0, \"uncore\": 0}, " C0 "]}",
                          EINVAL, "t.json: cpus[2].cpu: duplicate cpu 0");
        expect_json_error("{\"cpus\": [" C0 ", {\"cpu\": 1, \"core\": 0, \"socket\": 0, "
                          "\"numa\": 4, \"uncore\": 0}], \"numa\": [{\"id\": 0, \"distances\": "
                          "[10]}]}",
                          EINVAL, "t.json: cpus[1].numa: NUMA node 4 is not listed in numa");
        expect_json_error("{\"cpus\": [" C0 "], \"numa\": []}", EINVAL,
                          "t.json: cpus[0].numa: NUMA node 0 is not listed in numa");
        expect_json_error("{\"cpus\": [" C0 "], \"numa\": {}}", EINVAL,
                          "t.json: numa: expected array, got object");
        expect_json_error(
                        "{\"cpus\": [" C0 "], \"numa\": [{\"id\": 0, \"distances\": [10, 20]}]}",
                        EINVAL,
                        "t.json: numa[0].distances: expected 1 entries (one per NUMA node), got 2");
        expect_json_error("{\"cpus\": [" C0 "], \"numa\": [{\"id\": 0, \"distances\": [10, 20]}, "
                          "{\"id\": 1}]}",
                          EINVAL,
                          "t.json: numa[1].distances: missing (other nodes give distances)");
        expect_json_error("{\"cpus\": [" C0 "], \"numa\": [{\"id\": 0}, {\"id\": 1, "
                          "\"distances\": [20, 10]}]}",
                          EINVAL,
                          "t.json: numa[1].distances: given, but earlier nodes give no distances");
        expect_json_error("{\"cpus\": [" C0 "], \"numa\": [{\"id\": 0, \"distances\": [10, -20]}, "
                          "{\"id\": 1, \"distances\": [20, 10]}]}",
                          ERANGE,
                          "t.json: numa[0].distances[1]: -20 is out of range [0, 2147483647]");
        expect_json_error("{\"cpus\": [" C0 "], \"numa\": [{\"id\": 0, \"distances\": null}]}",
                          EINVAL, "t.json: numa[0].distances: expected array, got null");
        expect_json_error("{\"cpus\": [" C0 "], \"numa\": [{\"id\": 0}, {\"id\": 0}]}", EINVAL,
                          "t.json: numa[1].id: duplicate NUMA node 0 (also numa[0])");
        expect_json_error("{\"cpus\": [" C0 "], \"numa\": [{\"id\": 9000000000}]}", ERANGE,
                          "t.json: numa[0].id: 9000000000 is out of range [-2147483648, "
                          "2147483647]");
        expect_json_error("{\"cpus\": [" C0 "], \"numa\": [{\"node\": 0}]}", EINVAL,
                          "t.json: numa[0].node: unknown field");
}

static void test_topology_json_value_with_path_prefix(void **state)
{
        ncm_autojson o = NULL;
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        const char *text = "{\"synthetic\": \"x\", \"cpus\": [" C0 ", " C0 "]}";
        (void)state;
        assert_int_equal(ncm__json_parse(text, strlen(text), "s", &o, NULL), 0);
        assert_int_equal(ncm_topo_from_json_value(o, "node.topology", false, &t, &err), -EINVAL);
        assert_string_equal(err.msg, "node.topology.synthetic: unknown field");
        assert_int_equal(ncm_topo_from_json_value(o, "node.topology", true, &t, &err), -EINVAL);
        assert_string_equal(err.msg, "node.topology.cpus[1].cpu: duplicate cpu 0");
        assert_null(t);
}

static void test_topology_json_file(void **state)
{
        char *dir = tu_mkdtemp();
        char *path;
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        FILE *f;
        (void)state;
        if (asprintf(&path, "%s/t.json", dir) < 0)
                fail_msg("out of memory");
        f = fopen(path, "w");
        fputs("{\"cpus\": [" C0 "]}\n", f);
        fclose(f);
        assert_int_equal(ncm_topo_load_json_file(path, &t, &err), 0);
        assert_int_equal(ncm_topo_num_cpus(t), 1);
        t = ncm_topo_free(t);
        f = fopen(path, "w");
        fputs("{\"cpus\": [" C0 ", 7]}\n", f);
        fclose(f);
        assert_int_equal(ncm_topo_load_json_file(path, &t, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "/t.json: cpus[1]: expected object, got number"));
        assert_int_equal(ncm_topo_load(NCM_TOPO_SOURCE_JSON, path, &t, &err), -EINVAL);
        tu_rm_rf(dir);
        free(dir);
        free(path);
}

/* --- the source table --- */

static void test_topology_source_table(void **state)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_string_equal(ncm_topo_source_name(NCM_TOPO_SOURCE_FSROOT), "fsroot");
        assert_string_equal(ncm_topo_source_name(NCM_TOPO_SOURCE_JSON), "topology");
        assert_null(ncm_topo_source_name(NCM_TOPO_SOURCE_N_KINDS));
        assert_int_equal(ncm_topo_source_from_name("synthetic"), NCM_TOPO_SOURCE_SYNTHETIC);
        assert_int_equal(ncm_topo_source_from_name("xml"), NCM_TOPO_SOURCE_XML);
        assert_int_equal(ncm_topo_source_from_name("file"), NCM_TOPO_SOURCE_JSON);
        assert_int_equal(ncm_topo_source_from_name("cpus"), -1);
        assert_int_equal(ncm_topo_load(NCM_TOPO_SOURCE_SYNTHETIC, "pu:2", &t, &err), 0);
        assert_int_equal(ncm_topo_num_cpus(t), 2);
        t = ncm_topo_free(t);
        assert_int_equal(ncm_topo_load(NCM_TOPO_SOURCE_FSROOT, "/", &t, &err), 0);
        t = ncm_topo_free(t);
        assert_int_equal(ncm_topo_load(NCM_TOPO_SOURCE_SYNTHETIC, NULL, &t, &err), -EINVAL);
        assert_int_equal(ncm_topo_load(NCM_TOPO_SOURCE_N_KINDS, "x", &t, &err), -EINVAL);
        assert_int_equal(ncm_topo_load(NCM_TOPO_SOURCE_FSROOT, "/nonexistent-nodecm", &t, &err),
                         -ENOENT);
        assert_null(t);
}

static void test_topology_rules(void **state)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        const char *desc = "package:2 numa:2 l3:1 core:2 pu:2";
        char *path = tu_data_path("topologies/fakeheterocpunuma.xml");
        (void)state;
        assert_string_equal(ncm_topo_rules_name(NCM_TOPO_RULES_CADVISOR), "cadvisor");
        assert_string_equal(ncm_topo_rules_name(NCM_TOPO_RULES_NODECM), "nodecm");
        assert_null(ncm_topo_rules_name(NCM_TOPO_RULES_N));
        assert_int_equal(ncm_topo_rules_from_name("cadvisor"), NCM_TOPO_RULES_CADVISOR);
        assert_int_equal(ncm_topo_rules_from_name("nodecm"), NCM_TOPO_RULES_NODECM);
        assert_int_equal(ncm_topo_rules_from_name("kubelet"), -1);
        assert_int_equal(ncm_topo_rules_from_name(NULL), -1);
        /* an L3 per NUMA node: cadvisor's node cache (uncore = socket), nodecm's uncore */
        assert_int_equal(ncm_topo_load_rules(NCM_TOPO_SOURCE_SYNTHETIC, desc,
                                             NCM_TOPO_RULES_CADVISOR, &t, &err),
                         0);
        assert_int_equal(ncm_topo_num_uncore_caches(t), 2);
        t = ncm_topo_free(t);
        assert_int_equal(ncm_topo_load_rules(NCM_TOPO_SOURCE_SYNTHETIC, desc, NCM_TOPO_RULES_NODECM,
                                             &t, &err),
                         0);
        assert_int_equal(ncm_topo_num_uncore_caches(t), 4);
        t = ncm_topo_free(t);
        /* hwloc attaches the CPU-less node 2 above nodes 0 and 1 (cpuset 0-3,8-11): the
         * kernel lists no CPU in it, so the kubelet's CPUs 0-3 stay in node 0; CPUs 4-7 are in
         * no node (the kubelet leaves them out, nodecm's rules keep them in an extra node) */
        assert_int_equal(ncm_topo_load_rules(NCM_TOPO_SOURCE_XML, path, NCM_TOPO_RULES_CADVISOR, &t,
                                             &err),
                         0);
        assert_int_equal(ncm_topo_cpu(t, 0)->numa, 0);
        assert_int_equal(ncm_topo_cpu(t, 8)->numa, 1);
        assert_null(ncm_topo_cpu(t, 4));
        t = ncm_topo_free(t);
        assert_int_equal(ncm_topo_load_rules(NCM_TOPO_SOURCE_XML, path, NCM_TOPO_RULES_NODECM, &t,
                                             &err),
                         0);
        assert_non_null(ncm_topo_cpu(t, 4));
        t = ncm_topo_free(t);
        free(path);
}

static void test_topology_tree_format(void **state)
{
        ncm_topo *t = json("{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                           "\"uncore\": 0}, {\"cpu\": 2, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                           "\"uncore\": 0}, {\"cpu\": 1, \"core\": 1, \"socket\": 1, \"numa\": 1, "
                           "\"uncore\": 1}], \"numa\": [{\"id\": 0, \"distances\": [10, 21, 31]}, "
                           "{\"id\": 1, \"distances\": [21, 10, 31]}, {\"id\": 2, \"distances\": "
                           "[31, 31, 10]}]}");
        ncm_buf b = NCM_BUF_INIT;
        (void)state;
        ncm_topo_format_tree(t, &b);
        assert_string_equal(b.data, "Socket 0\n"
                                    "  NUMA node 0\n"
                                    "    Uncore cache 0\n"
                                    "      Core 0: CPU 0, 2\n"
                                    "Socket 1\n"
                                    "  NUMA node 1\n"
                                    "    Uncore cache 1\n"
                                    "      Core 1: CPU 1\n"
                                    "NUMA nodes without CPUs: 2\n"
                                    "NUMA distances:\n"
                                    "           0     1     2\n"
                                    "     0    10    21    31\n"
                                    "     1    21    10    31\n"
                                    "     2    31    31    10\n"
                                    "Total: 3 CPUs, 2 cores, 2 sockets, 2 NUMA nodes (+1 without "
                                    "CPUs), 2 uncore caches, 1 thread per core\n");
        ncm_buf_done(&b);
        ncm_topo_free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_topology_synthetic_ids),
                        cmocka_unit_test(test_topology_synthetic_without_l3_or_numa),
                        cmocka_unit_test(test_topology_synthetic_large),
                        cmocka_unit_test(test_topology_synthetic_errors),
                        cmocka_unit_test(test_topology_xml_exports_load),
                        cmocka_unit_test(test_topology_xml_matches_sysfs_of_same_machine),
                        cmocka_unit_test(test_topology_xml_version2_export),
                        cmocka_unit_test(test_topology_xml_errors),
                        cmocka_unit_test(test_topology_json_writer_format),
                        cmocka_unit_test(test_topology_json_round_trips),
                        cmocka_unit_test(test_topology_json_accepts_hand_written),
                        cmocka_unit_test(test_topology_json_raw_ids_round_trip),
                        cmocka_unit_test(test_topology_json_errors),
                        cmocka_unit_test(test_topology_json_value_with_path_prefix),
                        cmocka_unit_test(test_topology_json_file),
                        cmocka_unit_test(test_topology_source_table),
                        cmocka_unit_test(test_topology_rules),
                        cmocka_unit_test(test_topology_tree_format),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
