/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Isolated and nohz_full CPUs: the kernel's CPU list syntax (lib/test_bitmap.c's parselist
 * vectors, the kernel's own), the boot parameters as the kernel parses them, the reader on fake
 * machine roots (sysfs files, /proc/cmdline, cgroup v2 partitions, dumps with "(null)"), and
 * topology JSON's "isolated" / "nohz_full" flags.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "topology/topology-internal.h"
#include "testutil.h"

/* --- the kernel's CPU lists --- */

typedef struct list_case {
        int err; /* expected return */
        const char *in;
        int nbits;
        const char *want; /* canonical list when err == 0 */
} list_case;

/* lib/test_bitmap.c parselist_tests (bit masks spelled as lists), plus nodecm's own cases */
static const list_case list_cases[] = {
                {0, "0", 8, "0"},
                {0, "1", 8, "1"},
                {0, "0-15", 32, "0-15"},
                {0, "16-31", 32, "16-31"},
                {0, "0-31:1/2", 32, "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30"},
                {0, "1-31:1/2", 32, "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31"},
                {0, "0-31:1/4", 32, "0,4,8,12,16,20,24,28"},
                {0, "1-31:1/4", 32, "1,5,9,13,17,21,25,29"},
                {0, "0-31:4/4", 32, "0-31"},
                {0, "1-31:4/4", 32, "1-31"},
                {0, "0-31:1/4,32-63:2/4", 64,
                 "0,4,8,12,16,20,24,28,32-33,36-37,40-41,44-45,48-49,52-53,56-57,60-61"},
                {0, "  ,,  0-31:3/4  ,, 32-63:4/4  ,,  ", 64,
                 "0-2,4-6,8-10,12-14,16-18,20-22,24-26,28-30,32-63"},
                {0, "", 8, ""},
                {0, "\n", 8, ""},
                {0, ",,  ,,  , ,  ,", 8, ""},
                {0, " ,  ,,  , ,   \n", 8, ""},
                {0, "0-0", 8, "0"},
                {0, "1-1", 8, "1"},
                {0, "0-31:1/3,1-31:1/3,2-31:1/3", 32, "0-31"},
                {0, "1-10:8/12,8-31:24/29,0-31:0/3", 32, "1-31"},
                {0, "all", 32, "0-31"},
                {0, "0, 1, all,  ", 32, "0-31"},
                {0, "all:1/2", 32, "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30"},
                {0, "ALL:1/2", 32, "0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30"},
                {-EINVAL, "al", 8, NULL},
                {-EINVAL, "alll", 8, NULL},
                {-EINVAL, "-1", 8, NULL},
                {-EINVAL, "-0", 8, NULL},
                {-EINVAL, "10-1", 8, NULL},
                {-ERANGE, "8-8", 8, NULL},
                {-ERANGE, "0-31", 8, NULL},
                {-EINVAL, "0-31:", 32, NULL},
                {-EINVAL, "0-31:0", 32, NULL},
                {-EINVAL, "0-31:0/", 32, NULL},
                {-EINVAL, "0-31:0/0", 32, NULL},
                {-EINVAL, "0-31:1/0", 32, NULL},
                {-EINVAL, "0-31:10/1", 32, NULL},
                {-EOVERFLOW, "0-98765432123456789:10/1", 8, NULL},
                {-EINVAL, "a-31", 8, NULL},
                {-EINVAL, "0-a1", 8, NULL},
                {-EINVAL, "a-31:10/1", 8, NULL},
                {-EINVAL, "0-31:a/1", 8, NULL},
                {-EINVAL, "0-\n", 8, NULL},
                /* "N" is the last bit */
                {0, "N", 8, "7"},
                {0, "2-N", 8, "2-7"},
                {0, "0-N:1/2", 8, "0,2,4,6"},
                {0, "N-N", 1, "0"},
                {-EINVAL, "N-2", 8, NULL},
                {-EINVAL, "2-7x", 8, NULL},
};

static void test_topology_isolation_kernel_cpulist(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(list_cases); i++) {
                const list_case *c = &list_cases[i];
                ncm_cpuset *s = NULL;
                int r = ncm_kernel_cpulist_parse(c->in, strlen(c->in), c->nbits, &s);
                if (r != c->err)
                        fail_msg("\"%s\" (%d bits): got %d, want %d", c->in, c->nbits, r, c->err);
                if (c->err == 0) {
                        tu_assert_cpuset(s, c->want);
                        ncm_cpuset_free(s);
                } else {
                        assert_null(s);
                }
        }
}

static void test_topology_isolation_kernel_cpulist_bounds(void **state)
{
        ncm_cpuset *s = NULL;

        (void)state;
        /* the bitmap's width is the machine's, bounded by the cpuset domain */
        assert_int_equal(ncm_kernel_cpulist_parse("0", 1, 0, &s), -ERANGE);
        assert_int_equal(ncm_kernel_cpulist_parse("0", 1, NCM_CPUSET_MAX_CPUS + 1, &s), -ERANGE);
        assert_int_equal(ncm_kernel_cpulist_parse("0-N:1/4096", 10, NCM_CPUSET_MAX_CPUS, &s), 0);
        tu_assert_cpuset(s, "0,4096");
        ncm_cpuset_free(s);
        /* the length is honoured: no terminator needed */
        assert_int_equal(ncm_kernel_cpulist_parse("3-5,9", 3, 16, &s), 0);
        tu_assert_cpuset(s, "3-5");
        ncm_cpuset_free(s);
}

/* --- the command line --- */

typedef struct cmdline_case {
        const char *cmdline;
        int nr_cpus;
        /* expected per source, "-" for none */
        const char *domain, *managed_irq, *nohz, *nohz_full;
} cmdline_case;

static const cmdline_case cmdline_cases[] = {
                {"ro quiet", 8, "-", "-", "-", "-"},
                {"isolcpus=2-7", 8, "2-7", "-", "-", "-"},
                {"isolcpus=domain,managed_irq,2-7 nohz_full=2-7", 8, "2-7", "2-7", "-", "2-7"},
                {"isolcpus=managed_irq,2-7", 8, "-", "2-7", "-", "-"},
                {"isolcpus=nohz,domain,managed_irq,2-N", 4, "2-3", "2-3", "2-3", "-"},
                /* a lone "N" reads as a flag to the kernel, which then walks past the end */
                {"isolcpus=domain,N", 4, "-", "-", "-", "-"},
                /* flags the kernel does not know are skipped, with any list */
                {"isolcpus=future_flag,2-3", 8, "2-3", "-", "-", "-"},
                /* a flag with other characters makes the kernel ignore the parameter */
                {"isolcpus=bad-flag,2-3", 8, "-", "-", "-", "-"},
                /* a flag alone: the kernel walks past the end, nothing is isolated */
                {"isolcpus=domain", 8, "-", "-", "-", "-"},
                /* a list that does not parse, or beyond the machine, is ignored */
                {"isolcpus=2-x nohz_full=9", 8, "-", "-", "-", "-"},
                /* quotes, as next_arg removes them, and dashes for underscores */
                {"\"isolcpus=1,3\" nohz-full=\"4-5\"", 8, "1,3", "-", "-", "4-5"},
                /* after "--" the parameters are init's */
                {"root=/dev/sda -- isolcpus=1", 8, "-", "-", "-", "-"},
                /* a parameter that only starts like one */
                {"xisolcpus=1 isolcpus_=2 isolcpus", 8, "-", "-", "-", "-"},
                /* several: the union */
                {"isolcpus=1 isolcpus=managed_irq,domain,5\n", 8, "1,5", "5", "-", "-"},
                {"  \t nohz_full=all  ", 4, "-", "-", "-", "0-3"},
};

static void expect_set(const ncm_cpuset *s, const char *want, const char *what, const char *in)
{
        if (strcmp(want, "-") == 0) {
                if (s)
                        fail_msg("%s of \"%s\": expected nothing", what, in);
                return;
        }
        if (!s)
                fail_msg("%s of \"%s\": expected %s, got nothing", what, in, want);
        tu_assert_cpuset(s, want);
}

static void test_topology_isolation_cmdline(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cmdline_cases); i++) {
                const cmdline_case *c = &cmdline_cases[i];
                ncm_cpuset *v[NCM_ISO_N_SOURCES] = {0};
                assert_int_equal(ncm__iso_parse_cmdline(c->cmdline, strlen(c->cmdline), c->nr_cpus,
                                                        v),
                                 0);
                expect_set(v[NCM_ISO_ISOLCPUS_DOMAIN], c->domain, "domain", c->cmdline);
                expect_set(v[NCM_ISO_ISOLCPUS_MANAGED_IRQ], c->managed_irq, "managed_irq",
                           c->cmdline);
                expect_set(v[NCM_ISO_ISOLCPUS_NOHZ], c->nohz, "nohz", c->cmdline);
                expect_set(v[NCM_ISO_NOHZ_FULL], c->nohz_full, "nohz_full", c->cmdline);
                for (int k = 0; k < NCM_ISO_N_SOURCES; k++)
                        ncm_cpuset_free(v[k]);
        }
}

static void test_topology_isolation_cmdline_nul(void **state)
{
        static const char text[] = "isolcpus=1\0isolcpus=2";
        ncm_cpuset *v[NCM_ISO_N_SOURCES] = {0};

        (void)state;
        /* a NUL ends the command line, as it does for the kernel */
        assert_int_equal(ncm__iso_parse_cmdline(text, sizeof(text) - 1, 8, v), 0);
        tu_assert_cpuset(v[NCM_ISO_ISOLCPUS_DOMAIN], "1");
        for (int k = 0; k < NCM_ISO_N_SOURCES; k++)
                ncm_cpuset_free(v[k]);
}

/* --- fake machines --- */

typedef struct machine {
        char *tmp;
        char *root;
} machine;

static void put(const machine *m, const char *rel, const char *text)
{
        char path[4096];
        char *slash;

        snprintf(path, sizeof(path), "%s%s", m->root, rel);
        for (slash = strchr(path + strlen(m->root) + 1, '/'); slash;
             slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                (void)mkdir(path, 0755);
                *slash = '/';
        }
        tu_write_file(path, text);
}

static ncm_topo *discover(const machine *m)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int fd = ncm_fs_open_root(m->root, &err);

        assert_true(fd >= 0);
        if (ncm_topo_discover_sysfs(fd, &t, &err) < 0)
                fail_msg("discover: %s", err.msg);
        close(fd);
        return t;
}

static void machine_done(machine *m)
{
        tu_rm_rf(m->tmp);
        free(m->tmp);
        free(m->root);
}

static void test_topology_isolation_fake_machine(void **state)
{
        machine m;
        ncm_topo *t;
        ncm_buf b = NCM_BUF_INIT;

        (void)state;
        /* the machine: CPUs 2-7 isolated, 0-1 for the rest */
        m.root = tu_extract_topology("8em64t-2s2ca2c", &m.tmp);
        put(&m, "/proc/cmdline",
            "BOOT_IMAGE=/vmlinuz root=/dev/sda ro isolcpus=managed_irq,domain,2-7 "
            "nohz_full=4-N rcu_nocbs=2-7\n");
        put(&m, "/sys/devices/system/cpu/isolated", "2-7\n");
        put(&m, "/sys/devices/system/cpu/nohz_full", "4-7\n");
        t = discover(&m);
        tu_assert_cpuset(ncm_topo_isolated_cpus(t), "2-7");
        tu_assert_cpuset(ncm_topo_nohz_full_cpus(t), "4-7");
        tu_assert_cpuset(ncm_topo_isolation_source(t, NCM_ISO_SYSFS_ISOLATED), "2-7");
        tu_assert_cpuset(ncm_topo_isolation_source(t, NCM_ISO_ISOLCPUS_DOMAIN), "2-7");
        tu_assert_cpuset(ncm_topo_isolation_source(t, NCM_ISO_ISOLCPUS_MANAGED_IRQ), "2-7");
        tu_assert_cpuset(ncm_topo_isolation_source(t, NCM_ISO_NOHZ_FULL), "4-7");
        assert_null(ncm_topo_isolation_source(t, NCM_ISO_PARTITIONS));
        ncm_topo_format_tree(t, &b);
        assert_non_null(strstr(b.data, "Isolated CPUs: 2-7 (sysfs isolated 2-7, isolcpus=domain "
                                       "2-7)\n"));
        assert_non_null(strstr(b.data, "nohz_full CPUs: 4-7 (sysfs nohz_full 4-7, nohz_full= "
                                       "4-7)\n"));
        assert_non_null(strstr(b.data, "(isolcpus=managed_irq): 2-7\n"));
        ncm_buf_done(&b);
        ncm_topo_free(t);
        machine_done(&m);
}

static void test_topology_isolation_partitions(void **state)
{
        machine m;
        ncm_topo *t;

        (void)state;
        /* cgroup v2 (pure or hybrid): the root's cpuset.cpus.isolated; the kernel's own files
         * say nothing (a boot without isolcpus) */
        m.root = tu_extract_topology("8em64t-2s2ca2c", &m.tmp);
        put(&m, "/sys/devices/system/cpu/isolated", "\n");
        put(&m, "/sys/fs/cgroup/unified/cpuset.cpus.isolated", "6-7\n");
        t = discover(&m);
        tu_assert_cpuset(ncm_topo_isolated_cpus(t), "6-7");
        tu_assert_cpuset(ncm_topo_isolation_source(t, NCM_ISO_PARTITIONS), "6-7");
        tu_assert_cpuset(ncm_topo_isolation_source(t, NCM_ISO_SYSFS_ISOLATED), "");
        assert_true(ncm_cpuset_is_empty(ncm_topo_nohz_full_cpus(t)));
        ncm_topo_free(t);
        /* the pure v2 mount wins over the unified one */
        put(&m, "/sys/fs/cgroup/cpuset.cpus.isolated", "5\n");
        t = discover(&m);
        tu_assert_cpuset(ncm_topo_isolated_cpus(t), "5");
        ncm_topo_free(t);
        machine_done(&m);
}

static void test_topology_isolation_bad_file(void **state)
{
        machine m;
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int fd;

        (void)state;
        m.root = tu_extract_topology("8em64t-2s2ca2c", &m.tmp);
        put(&m, "/sys/devices/system/cpu/isolated", "2-x\n");
        fd = ncm_fs_open_root(m.root, &err);
        assert_int_equal(ncm_topo_discover_sysfs(fd, &t, &err), -EINVAL);
        assert_null(t);
        assert_non_null(strstr(err.msg, "/sys/devices/system/cpu/isolated"));
        close(fd);
        machine_done(&m);
}

/* Real dumps: "(null)" with padding (an unallocated nohz_full mask), empty files. */
static void test_topology_isolation_dumps(void **state)
{
        static const char *const names[] = {"nvidia-dgx-gb10", "nvidiagpunumanodes",
                                            "5intel64-hybrid-lakefield", "memorysidecaches"};
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(names); i++) {
                machine m;
                ncm_topo *t;
                m.root = tu_extract_topology(names[i], &m.tmp);
                t = discover(&m);
                assert_true(ncm_cpuset_is_empty(ncm_topo_isolated_cpus(t)));
                assert_true(ncm_cpuset_is_empty(ncm_topo_nohz_full_cpus(t)));
                ncm_topo_free(t);
                machine_done(&m);
        }
}

/* --- JSON --- */

static void test_topology_isolation_json(void **state)
{
        static const char text[] =
                        "{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                        "\"uncore\": 0},\n"
                        "          {\"cpu\": 1, \"core\": 1, \"socket\": 0, \"numa\": 0, "
                        "\"uncore\": 0, \"isolated\": true, \"nohz_full\": true},\n"
                        "          {\"cpu\": 2, \"core\": 2, \"socket\": 0, \"numa\": 0, "
                        "\"uncore\": 0, \"isolated\": true}],\n"
                        " \"numa\": [{\"id\": 0, \"distances\": [10]}]}\n";
        ncm_topo *t = NULL, *u = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf b = NCM_BUF_INIT;

        (void)state;
        assert_int_equal(ncm_topo_parse_json(text, strlen(text), "t.json", &t, &err), 0);
        tu_assert_cpuset(ncm_topo_isolated_cpus(t), "1-2");
        tu_assert_cpuset(ncm_topo_nohz_full_cpus(t), "1");
        tu_assert_cpuset(ncm_topo_isolation_source(t, NCM_ISO_GIVEN_ISOLATED), "1-2");
        ncm_topo_format_json(t, &b);
        assert_string_equal(b.data, text);
        assert_int_equal(ncm_topo_parse_json(b.data, b.len, "back", &u, &err), 0);
        assert_true(ncm_topo_equal(t, u));
        ncm_topo_free(u);
        /* a different mark is a different machine */
        assert_int_equal(ncm_topo_parse_json(text, strlen(text) - 0, "t.json", &u, &err), 0);
        assert_int_equal(ncm_topo_set_isolation(u, NCM_ISO_GIVEN_ISOLATED, NULL, &err), 0);
        assert_false(ncm_topo_equal(t, u));
        ncm_topo_free(u);
        ncm_buf_done(&b);
        ncm_topo_free(t);
}

/* A CPU's marks and its NUMA node's memory in one file: the reader keeps both, the writer
 * gives both back, and equality sees each. */
static void test_topology_isolation_json_memory(void **state)
{
        static const char text[] =
                        "{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                        "\"uncore\": 0},\n"
                        "          {\"cpu\": 1, \"core\": 1, \"socket\": 0, \"numa\": 0, "
                        "\"uncore\": 0, \"isolated\": true, \"nohz_full\": true}],\n"
                        " \"numa\": [{\"id\": 0, \"distances\": [10], \"memory\": 4096, "
                        "\"hugepages\": [{\"page_size\": 2048, \"num_pages\": 8}]}]}\n";
        ncm_topo *t = NULL, *u = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf b = NCM_BUF_INIT;
        size_t nhp = 0;

        (void)state;
        assert_int_equal(ncm_topo_parse_json(text, strlen(text), "t.json", &t, &err), 0);
        tu_assert_cpuset(ncm_topo_isolated_cpus(t), "1");
        tu_assert_cpuset(ncm_topo_nohz_full_cpus(t), "1");
        assert_int_equal(ncm_topo_numa_memory(t, 0, NULL, &nhp), 4096);
        assert_int_equal(nhp, 1);
        ncm_topo_format_json(t, &b);
        assert_string_equal(b.data, text);
        assert_int_equal(ncm_topo_parse_json(b.data, b.len, "back", &u, &err), 0);
        assert_true(ncm_topo_equal(t, u));
        /* the marks differ, the memory does not: a different machine */
        assert_int_equal(ncm_topo_set_isolation(u, NCM_ISO_GIVEN_NOHZ_FULL, NULL, &err), 0);
        assert_false(ncm_topo_equal(t, u));
        ncm_topo_free(u);
        /* the memory differs, the marks do not */
        assert_int_equal(ncm_topo_parse_json(b.data, b.len, "back", &u, &err), 0);
        assert_int_equal(ncm_topo_set_numa_memory(u, 0, 8192, NULL, 0, &err), 0);
        assert_false(ncm_topo_equal(t, u));
        ncm_topo_free(u);
        ncm_buf_done(&b);
        ncm_topo_free(t);
}

/* Bad marks; and marks read, then the file refused further on: nothing is kept (ASan sees
 * any leak). */
static void test_topology_isolation_json_errors(void **state)
{
        static const struct {
                const char *text;
                int code;
                const char *msg;
        } cases[] = {
                        {"{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                         "\"uncore\": 0, \"isolated\": 1}]}",
                         EINVAL, "x.json: cpus[0].isolated: expected a boolean, got number"},
                        {"{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                         "\"uncore\": 0, \"nohz_full\": \"yes\"}]}",
                         EINVAL, "x.json: cpus[0].nohz_full: expected a boolean, got string"},
                        {"{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                         "\"uncore\": 0, \"isolate\": true}]}",
                         EINVAL, "x.json: cpus[0].isolate: unknown field"},
                        {"{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                         "\"uncore\": 0, \"isolated\": true}, {\"cpu\": 1, \"core\": 1, "
                         "\"socket\": 0, \"numa\": 0, \"uncore\": 0, \"nohz_full\": 1}]}",
                         EINVAL, "x.json: cpus[1].nohz_full: expected a boolean, got number"},
                        {"{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                         "\"uncore\": 0, \"isolated\": true}], \"numa\": [{\"id\": 0, "
                         "\"memory\": -1}]}",
                         ERANGE,
                         "x.json: numa[0].memory: -1 is out of range [0, 9223372036854775807]"},
                        {"{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 1, "
                         "\"uncore\": 0, \"nohz_full\": true}], \"numa\": [{\"id\": 0, "
                         "\"memory\": 1024}]}",
                         EINVAL, "x.json: cpus[0].numa: NUMA node 1 is not listed in numa"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_topo *t = NULL;
                ncm_error err = NCM_ERROR_INIT;
                assert_int_equal(ncm_topo_parse_json(cases[i].text, strlen(cases[i].text), "x.json",
                                                     &t, &err),
                                 -cases[i].code);
                assert_null(t);
                assert_string_equal(err.msg, cases[i].msg);
        }
}

static void test_topology_isolation_set(void **state)
{
        ncm_topo *t = NULL;
        ncm_cpuset *s = tu_cpuset("1,7,100");
        ncm_error err = NCM_ERROR_INIT;

        (void)state;
        assert_int_equal(ncm_topo_from_synthetic("core:4 pu:2", &t, &err), 0);
        /* CPUs the machine does not have are dropped */
        assert_int_equal(ncm_topo_set_isolation(t, NCM_ISO_PARTITIONS, s, &err), 0);
        tu_assert_cpuset(ncm_topo_isolated_cpus(t), "1,7");
        /* managed_irq marks nothing */
        assert_int_equal(ncm_topo_set_isolation(t, NCM_ISO_ISOLCPUS_MANAGED_IRQ, s, &err), 0);
        tu_assert_cpuset(ncm_topo_isolated_cpus(t), "1,7");
        assert_true(ncm_cpuset_is_empty(ncm_topo_nohz_full_cpus(t)));
        assert_int_equal(ncm_topo_set_isolation(t, NCM_ISO_N_SOURCES, s, &err), -EINVAL);
        assert_string_equal(ncm_iso_source_name(NCM_ISO_ISOLCPUS_DOMAIN), "isolcpus=domain");
        assert_null(ncm_iso_source_name(NCM_ISO_N_SOURCES));
        ncm_cpuset_free(s);
        ncm_topo_free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_topology_isolation_kernel_cpulist),
                        cmocka_unit_test(test_topology_isolation_kernel_cpulist_bounds),
                        cmocka_unit_test(test_topology_isolation_cmdline),
                        cmocka_unit_test(test_topology_isolation_cmdline_nul),
                        cmocka_unit_test(test_topology_isolation_fake_machine),
                        cmocka_unit_test(test_topology_isolation_partitions),
                        cmocka_unit_test(test_topology_isolation_bad_file),
                        cmocka_unit_test(test_topology_isolation_dumps),
                        cmocka_unit_test(test_topology_isolation_json),
                        cmocka_unit_test(test_topology_isolation_json_errors),
                        cmocka_unit_test(test_topology_isolation_json_memory),
                        cmocka_unit_test(test_topology_isolation_set),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
