/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The allocator against kubelet's own tables (cpu_assignment_test.go), kept as data in
 * tests/data/cpumanager/take-cases.txt, plus the accumulator's take/satisfied/failed checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpumanager.h>
#include <nodecm/topology.h>
#include "cpumanager/cpumanager-alloc.h"
#include "testutil.h"

typedef struct topo_entry {
        char name[64];
        ncm_topo *topo;
        ncm_cpu_index *ix;
} topo_entry;

static topo_entry topos[32];
static size_t ntopos;

static ncm_cpu_index *load_index(const char *name)
{
        ncm_error err = NCM_ERROR_INIT;
        char rel[128];
        char *path;

        for (size_t i = 0; i < ntopos; i++)
                if (strcmp(topos[i].name, name) == 0)
                        return topos[i].ix;
        assert_true(ntopos < NCM_ELEMENTSOF(topos));
        snprintf(rel, sizeof(rel), "cpumanager/topo/%s.json", name);
        path = tu_data_path(rel);
        if (ncm_topo_load_json_file(path, &topos[ntopos].topo, &err) < 0)
                fail_msg("%s: %s", path, err.msg);
        free(path);
        if (ncm_cpu_index_new(topos[ntopos].topo, &topos[ntopos].ix, &err) < 0)
                fail_msg("%s: %s", name, err.msg);
        snprintf(topos[ntopos].name, sizeof(topos[ntopos].name), "%s", name);
        return topos[ntopos++].ix;
}

static int teardown_topos(void **state)
{
        for (size_t i = 0; i < ntopos; i++) {
                ncm_cpu_index_free(topos[i].ix);
                ncm_topo_free(topos[i].topo);
        }
        ntopos = 0;
        return 0;
}

static char *trim(char *s)
{
        while (*s == ' ')
                s++;
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n'))
                s[--n] = '\0';
        return s;
}

static ncm_cpuset *parse_set(const char *s)
{
        return tu_cpuset(strcmp(s, "-") == 0 ? "" : s);
}

/* FN under the rules of generation GEN (the internal entry points take them directly). */
static int take_gen(const ncm_cpu_index *ix, const char *fn, ncm__gen gen, const ncm_cpuset *avail,
                    int n, ncm_cpuset *got, ncm_error *err)
{
        uint64_t *dense = calloc(2 * (size_t)ix->words, sizeof(uint64_t));
        int size, r;

        assert_non_null(dense);
        size = ncm__dense_from_set(ix, avail, dense);
        if (strncmp(fn, "dist", 4) == 0)
                r = ncm__take_distributed_dense_traced(ix, gen, dense, size, n, atoi(fn + 4), false,
                                                       strstr(fn, "+align") != NULL, NULL,
                                                       dense + ix->words, err);
        else
                r = ncm__take_packed_dense_traced(
                                ix, gen, dense, size, n, strcmp(fn, "spread") == 0,
                                strcmp(fn, "packed+uncore") == 0, NULL, dense + ix->words, err);
        if (r >= 0)
                ncm__set_from_dense(ix, dense + ix->words, got);
        free(dense);
        return r;
}

/*
 * Run one line of take-cases.txt; returns false (after printing why) on a mismatch. FN may end
 * in "@X.Y": the case is kubelet X.Y's (its generation's rules); otherwise the newest's.
 */
static bool run_case(int lineno, char *fields[5])
{
        char fnbuf[64];
        const char *fn = fnbuf;
        char *at;
        ncm__gen gen = NCM__GEN_DEFAULT;
        bool old = false;
        ncm_cpu_index *ix = load_index(fields[1]);
        ncm_cpuset *avail = parse_set(fields[2]);
        int n = atoi(fields[3]);
        const char *expect = fields[4];
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpuset *got = ncm_cpuset_new();
        char actual[4096];
        bool ok;
        int r = 0;

        snprintf(fnbuf, sizeof(fnbuf), "%s", fields[0]);
        if ((at = strchr(fnbuf, '@')) != NULL) {
                ncm_kubelet_version v;
                *at = '\0';
                if (ncm_kubelet_version_parse(at + 1, &v, &err) < 0)
                        fail_msg("line %d: %s", lineno, err.msg);
                gen = ncm__gen_of(v);
                old = true;
        }
        assert_non_null(got);
        if (strncmp(fn, "free-", 5) == 0) {
                acc a;
                uint64_t *dense = calloc((size_t)ix->words, sizeof(uint64_t));
                int64_t *ids = malloc(((size_t)ix->lmax[4] + (size_t)ix->maxn + 1) *
                                      sizeof(int64_t));
                int what = strcmp(fn, "free-numa") == 0           ? K_NUMA
                           : strncmp(fn, "free-sockets", 12) == 0 ? K_SOCK
                           : strcmp(fn, "free-cores") == 0        ? K_CORE
                                                                  : -1;
                size_t o = 0;

                assert_non_null(dense);
                assert_non_null(ids);
                ncm__dense_from_set(ix, avail, dense);
                assert_int_equal(ncm__acc_init(&a, ix, dense, 0, false), 0);
                a.gen = gen;
                int m = ncm__acc_free_list(&a, what, ids);
                if (strcmp(fn, "free-sockets") == 0)
                        for (int i = 1; i < m; i++)
                                for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
                                        int64_t t = ids[j];
                                        ids[j] = ids[j - 1];
                                        ids[j - 1] = t;
                                }
                actual[0] = '\0';
                for (int i = 0; i < m; i++)
                        o += (size_t)snprintf(actual + o, sizeof(actual) - o, i ? ",%lld" : "%lld",
                                              (long long)ids[i]);
                if (m == 0)
                        snprintf(actual, sizeof(actual), "-");
                ncm__acc_done(&a);
                free(dense);
                free(ids);
        } else {
                if (old)
                        r = take_gen(ix, fn, gen, avail, n, got, &err);
                else if (strcmp(fn, "packed") == 0)
                        r = ncm_cpu_take_packed(ix, avail, n, false, false, got, &err);
                else if (strcmp(fn, "packed+uncore") == 0)
                        r = ncm_cpu_take_packed(ix, avail, n, false, true, got, &err);
                else if (strcmp(fn, "spread") == 0)
                        r = ncm_cpu_take_packed(ix, avail, n, true, false, got, &err);
                else if (strncmp(fn, "dist", 4) == 0)
                        r = ncm_cpu_take_distributed(ix, avail, n, atoi(fn + 4), false,
                                                     strstr(fn, "+align") != NULL, got, &err);
                else
                        fail_msg("line %d: unknown function %s", lineno, fn);
                if (r < 0) {
                        assert_int_equal(err.code, NCM_E_UNSATISFIABLE);
                        snprintf(actual, sizeof(actual), "!%s", err.msg);
                } else {
                        char *s = ncm_cpuset_format_list(got);
                        snprintf(actual, sizeof(actual), "%s", s[0] ? s : "-");
                        free(s);
                }
        }
        ok = strcmp(actual, expect) == 0;
        if (!ok)
                print_error("take-cases.txt:%d: %s %s avail=%s n=%d: expected %s, got %s\n", lineno,
                            fields[0], fields[1], fields[2], n, expect, actual);
        ncm_cpuset_free(avail);
        ncm_cpuset_free(got);
        return ok;
}

static void test_cpu_assignment_kubelet_tables(void **state)
{
        char *text = tu_read_data("cpumanager/take-cases.txt", NULL);
        char *save = NULL, *line;
        int lineno = 0, failures = 0, cases = 0;

        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *fields[5], *p = line, *bar;
                int nf = 0;

                lineno++;
                if (line[0] == '#' || line[0] == '\0')
                        continue;
                while (nf < 5) {
                        bar = nf < 4 ? strstr(p, " | ") : NULL;
                        if (bar)
                                *bar = '\0';
                        fields[nf++] = trim(p);
                        if (!bar)
                                break;
                        p = bar + 3;
                }
                if (nf != 5)
                        fail_msg("take-cases.txt:%d: expected 5 fields", lineno);
                cases++;
                if (!run_case(lineno, fields))
                        failures++;
        }
        free(text);
        if (failures)
                fail_msg("%d of %d cases failed", failures, cases);
        print_message("%d kubelet cases\n", cases);
}

/* TestCPUAccumulatorTake */
static void test_cpu_assignment_accumulator_take(void **state)
{
        static const struct {
                const char *avail;
                const char *takes[9];
                int n;
                bool satisfied, failed;
        } cases[] = {
                        {"0-7", {"", NULL}, 1, false, false},
                        {"", {"", NULL}, 1, false, true},
                        {"0-7", {"0", NULL}, 1, true, false},
                        {"0-7", {"0", NULL}, 2, false, false},
                        {"0-2", {"0", "1", NULL}, 4, false, true},
                        {"0-7", {"0", "1", "2", "3", "4", "5", "6", "7", NULL}, 8, true, false},
        };
        ncm_cpu_index *ix = load_index("single-socket-ht");

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_cpuset *avail = tu_cpuset(cases[i].avail);
                uint64_t dense[1] = {0};
                int taken = 0;
                acc a;

                ncm__dense_from_set(ix, avail, dense);
                assert_int_equal(ncm__acc_init(&a, ix, dense, cases[i].n, false), 0);
                for (int t = 0; cases[i].takes[t]; t++)
                        if (cases[i].takes[t][0]) {
                                int c = atoi(cases[i].takes[t]);
                                ncm__acc_take_cpu(&a, ix->cpu_dense[c]);
                                taken++;
                                assert_false(bit_get(a.free, ix->cpu_dense[c]));
                                assert_true(bit_get(a.result, ix->cpu_dense[c]));
                        }
                assert_int_equal(a.needed < 1, cases[i].satisfied);
                assert_int_equal(a.needed > a.nfree, cases[i].failed);
                assert_int_equal(a.needed, cases[i].n - taken);
                ncm__acc_done(&a);
                ncm_cpuset_free(avail);
        }
}

/* The public entry point picks the algorithm the way the static policy does. */
static void test_cpu_assignment_entry_point_follows_options(void **state)
{
        ncm_cpu_index *ix = load_index("dual-socket-multi-numa-ht");
        ncm_cpuset *all = tu_cpuset("0-79");
        ncm_cpuset *got = ncm_cpuset_new();
        ncm_cpu_options o = {0};

        assert_int_equal(ncm_cpu_take(ix, NULL, all, 64, got, NULL), 0);
        tu_assert_cpuset(got, "0-31,40-71");
        o.distribute_cpus_across_numa = true;
        assert_int_equal(ncm_cpu_take(ix, &o, all, 64, got, NULL), 0);
        tu_assert_cpuset(got, "0-7,10-17,20-27,30-37,40-47,50-57,60-67,70-77");
        /* full-pcpus-only makes the group a whole core: 26 = 13 cores over 2 NUMA nodes */
        o.full_pcpus_only = true;
        assert_int_equal(ncm_cpu_take(ix, &o, all, 26, got, NULL), 0);
        tu_assert_cpuset(got, "0-6,10-15,40-46,50-55");
        o = (ncm_cpu_options){.distribute_cpus_across_cores = true};
        assert_int_equal(ncm_cpu_take(ix, &o, all, 8, got, NULL), 0);
        tu_assert_cpuset(got, "0-7");
        ncm_cpuset_free(all);
        ncm_cpuset_free(got);
}

/* An error leaves RET untouched and says kubelet's words. */
static void test_cpu_assignment_error_keeps_result(void **state)
{
        ncm_cpu_index *ix = load_index("single-socket-ht");
        ncm_cpuset *avail = tu_cpuset("0,2,4,6");
        ncm_cpuset *got = tu_cpuset("42");
        ncm_error err = NCM_ERROR_INIT;

        assert_int_equal(ncm_cpu_take_packed(ix, avail, 5, false, false, got, &err),
                         -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "not enough cpus available to satisfy request: requested=5, "
                                     "available=4");
        tu_assert_cpuset(got, "42");
        assert_int_equal(ncm_error_exit_status(err.code), 1);
        /* CPUs unknown to the topology count in "available" but cannot be taken */
        ncm_cpuset_free(avail);
        avail = tu_cpuset("0,2,100-101");
        assert_int_equal(ncm_cpu_take_packed(ix, avail, 3, false, false, got, &err),
                         -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "not enough cpus available to satisfy request: requested=3, "
                                     "available=4");
        assert_int_equal(ncm_cpu_take_distributed(ix, avail, 2, 0, false, false, got, &err),
                         -EINVAL);
        ncm_cpuset_free(avail);
        ncm_cpuset_free(got);
}

/*
 * Kubelets before 1.37 compare a socket's free CPUs with the average socket size, and a socket
 * that passes is taken whole as the topology lists it: on an asymmetric machine that reaches
 * CPUs outside the available set. The newest kubelet compares with the socket's own size.
 * Through the public entry point, as `nodecm take --kubelet-version` runs it.
 */
static void test_cpu_assignment_uneven_sockets_per_generation(void **state)
{
        /* one NUMA node; socket 0: CPUs 0-9 (10), socket 1: 10-15 (6); average 8 per socket */
        ncm_cpu_index *ix = load_index("uneven-sockets");
        ncm_cpuset *avail = tu_cpuset("2-9,10-15");
        ncm_cpuset *got = ncm_cpuset_new();
        ncm_cpu_options o = {.kubelet_version = {1, 36}};

        /* 1.36: socket 0 has 8 free CPUs == average: "free"; 10 needed -> takes all of 0-9 */
        assert_int_equal(ncm_cpu_take(ix, &o, avail, 10, got, NULL), 0);
        tu_assert_cpuset(got, "0-9");
        /* newest: socket 1 (6 of 6 free) whole, then single-thread cores 2-5 */
        o.kubelet_version = NCM_KUBELET_VERSION_DEFAULT;
        assert_int_equal(ncm_cpu_take(ix, &o, avail, 10, got, NULL), 0);
        tu_assert_cpuset(got, "2-5,10-15");
        o.kubelet_version = (ncm_kubelet_version){1, 37};
        assert_int_equal(ncm_cpu_take(ix, &o, avail, 10, got, NULL), 0);
        tu_assert_cpuset(got, "2-5,10-15");
        ncm_cpuset_free(avail);
        ncm_cpuset_free(got);
}

/*
 * kubelet keeps its best NUMA combination as a Go slice that later combinations overwrite in
 * place (8 of 12 nodes here): the combination read back holds a node with one free CPU, the
 * distribution shrinks to 1 per node, and the remainder cannot be placed. kubelet spins in its
 * remainder loop; nodecm reports kubelet's accounting error instead.
 */
static void test_cpu_assignment_distributed_go_aliasing(void **state)
{
        ncm_cpu_info cpus[96];
        ncm_topo *t = NULL;
        ncm_cpu_index *ix = NULL;
        ncm_cpuset *avail = tu_cpuset(
                        "3,6,9,12,14,22,24,28,36,40,50-53,55,57,64,71-72,74,81,83-84,93,95");
        ncm_cpuset *got = ncm_cpuset_new();
        ncm_error err = NCM_ERROR_INIT;

        /* 4 sockets x 3 NUMA nodes x 4 cores x 2 adjacent threads */
        for (int i = 0; i < 96; i++)
                cpus[i] = (ncm_cpu_info){i, i & ~1, i / 24, i / 8, i / 8};
        assert_int_equal(ncm_topo_new(cpus, 96, NULL, 0, NULL, &t, NULL), 0);
        assert_int_equal(ncm_cpu_index_new(t, &ix, NULL), 0);
        assert_int_equal(ncm_cpu_take_distributed(ix, avail, 20, 1, false, false, got, &err),
                         -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "accounting error, not enough CPUs allocated, remaining: 3");
        ncm_cpuset_free(avail);
        ncm_cpuset_free(got);
        ncm_cpu_index_free(ix);
        ncm_topo_free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cpu_assignment_kubelet_tables),
                        cmocka_unit_test(test_cpu_assignment_accumulator_take),
                        cmocka_unit_test(test_cpu_assignment_entry_point_follows_options),
                        cmocka_unit_test(test_cpu_assignment_error_keeps_result),
                        cmocka_unit_test(test_cpu_assignment_uneven_sockets_per_generation),
                        cmocka_unit_test(test_cpu_assignment_distributed_go_aliasing),
        };
        return cmocka_run_group_tests(tests, NULL, teardown_topos);
}
