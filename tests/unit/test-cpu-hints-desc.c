/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU manager's hints as descriptions (ncm_cpu_hints_describe, the policy's
 * *_hints_describe): listed, they must be the generator's lists hint for hint. Kubelet's
 * GetTopologyHints / GetPodTopologyHints table (the one test-cpu-hints.c runs on the lists),
 * then random machines (sockets, NUMA nodes per socket, scattered ids, uneven nodes, CPUs the
 * index does not know) with random free and reusable CPUs and align-by-socket on and off,
 * against ncm_cpu_hints_generate().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpumanager.h>
#include <nodecm/cpustate.h>
#include <nodecm/hintdesc.h>
#include <nodecm/pod.h>
#include <nodecm/topology.h>
#include "testutil.h"

static ncm_topo *load_topo(const char *name)
{
        ncm_error err = NCM_ERROR_INIT;
        char relpath[128];
        char *path;
        ncm_topo *t = NULL;

        snprintf(relpath, sizeof(relpath), "cpumanager/topo/%s.json", name);
        path = tu_data_path(relpath);
        if (ncm_topo_load_json_file(path, &t, &err) < 0)
                fail_msg("%s: %s", path, err.msg);
        free(path);
        return t;
}

/* "{0}+ {1}- {0,1}-": each hint as its NUMA ids, '+' preferred, '-' not; "nil". */
static void format_hints(const ncm_hint_list *l, char *buf, size_t len)
{
        size_t o = 0;

        buf[0] = '\0';
        if (l->nil) {
                snprintf(buf, len, "nil");
                return;
        }
        for (size_t i = 0; i < l->n && o + 200 < len; i++) {
                int bits[64];
                int nb = ncm_bitmask_to_bits(l->hints[i].numa, bits);
                o += (size_t)snprintf(buf + o, len - o, "%s{", i ? " " : "");
                for (int j = 0; j < nb; j++)
                        o += (size_t)snprintf(buf + o, len - o, j ? ",%d" : "%d", bits[j]);
                o += (size_t)snprintf(buf + o, len - o, "}%c", l->hints[i].preferred ? '+' : '-');
        }
}

/* A description (NULL: no preference) as the list it stands for. */
static void listed(const ncm_hint_desc *d, ncm_hint_list *out)
{
        *out = (ncm_hint_list)NCM_HINT_LIST_INIT;
        if (!d) {
                out->nil = true;
                return;
        }
        assert_int_equal(ncm_hint_desc_materialize(d, 1 << 20, out, NULL), 0);
}

static ncm_pod *make_pod(const char *cpus, const char *pod_level)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;

        ncm_buf_puts(&b, "{\"metadata\": {\"uid\": \"fakePod\", \"name\": \"pod\"}, \"spec\": {");
        if (pod_level)
                ncm_buf_printf(&b,
                               "\"resources\": {\"requests\": {\"cpu\": \"%s\", \"memory\": "
                               "\"1G\"}, \"limits\": {\"cpu\": \"%s\", \"memory\": \"1G\"}}, ",
                               pod_level, pod_level);
        ncm_buf_printf(&b,
                       "\"containers\": [{\"name\": \"fakeContainer\", \"resources\": "
                       "{\"requests\": {\"cpu\": \"%s\", \"memory\": \"1G\"}, \"limits\": "
                       "{\"cpu\": \"%s\", \"memory\": \"1G\"}}}]}}",
                       cpus, cpus);
        if (tu_pod_parse_as_in_go(b.data, b.len, "pod", &pod, &err) < 0)
                fail_msg("%s", err.msg);
        ncm_buf_done(&b);
        return pod;
}

/* kubelet's returnTestCases (topology_hints_test.go), as test-cpu-hints.c runs them. */
static const struct hint_case {
        const char *name;
        const char *cpus;
        const char *assigned;
        const char *dflt;
        const char *pod_level;
        const char *expect;
} hint_cases[] = {
                {"Request 2 CPUs, 4 available on NUMA 0, 6 available on NUMA 1", "2", NULL, "2-11",
                 NULL, "{0}+ {1}+ {0,1}-"},
                {"Request 5 CPUs, 4 available on NUMA 0, 6 available on NUMA 1", "5", NULL, "2-11",
                 NULL, "{1}+ {0,1}-"},
                {"Request 7 CPUs, 4 available on NUMA 0, 6 available on NUMA 1", "7", NULL, "2-11",
                 NULL, "{0,1}+"},
                {"Request 11 CPUs, 4 available on NUMA 0, 6 available on NUMA 1", "11", NULL,
                 "2-11", NULL, ""},
                {"Request 2 CPUs, 1 available on NUMA 0, 1 available on NUMA 1", "2", NULL, "0,3",
                 NULL, "{0,1}-"},
                {"Request more CPUs than available", "5", NULL, "0-3", NULL, ""},
                {"Regenerate Single-Node NUMA Hints if already allocated 1/2", "2", "0,6", "", NULL,
                 "{0}+ {0,1}-"},
                {"Regenerate Single-Node NUMA Hints if already allocated 2/2", "2", "3,9", "", NULL,
                 "{1}+ {0,1}-"},
                {"Regenerate Cross-NUMA Hints if already allocated", "11", "0-10", "", NULL,
                 "{0,1}+"},
                {"Requested less than already allocated", "2", "0,3,6,9", "", NULL, ""},
                {"Requested more than already allocated", "11", "0,3,6,9", "", NULL, ""},
                {"Pod has pod level resources, no hint generation", "4", NULL, "0-3", "5", "nil"},
};

static void run_hint_cases(bool pod_scope)
{
        ncm_topo *t = load_topo("hints-dual-numa-ht");
        ncm_cpu_policy_config cfg = {.gates = NCM_CPU_GATES_DEFAULT};
        ncm_cpu_policy *p = NULL;

        assert_int_equal(ncm_cpu_static_policy_new(t, 0, NULL, &cfg, &p, NULL), 0);
        for (size_t i = 0; i < NCM_ELEMENTSOF(hint_cases); i++) {
                const struct hint_case *c = &hint_cases[i];
                ncm_pod *pod = make_pod(c->cpus, c->pod_level);
                ncm_cpu_state *s = ncm_cpu_state_new("static");
                ncm_cpuset *d = tu_cpuset(c->dflt);
                ncm_hint_desc *desc = NULL;
                ncm_hint_list hints;
                ncm_error err = NCM_ERROR_INIT;
                char got[1024];
                int r;

                assert_int_equal(ncm_cpu_state_set_default(s, d, NULL), 0);
                if (c->assigned) {
                        ncm_cpuset *a = tu_cpuset(c->assigned);
                        assert_int_equal(ncm_cpu_state_set(s, "fakePod", "fakeContainer", a, NULL),
                                         0);
                        ncm_cpuset_free(a);
                }
                if (pod_scope)
                        r = ncm_cpu_policy_pod_hints_describe(p, s, pod, &desc, &err);
                else
                        r = ncm_cpu_policy_hints_describe(p, s, pod, &pod->containers[0], &desc,
                                                          &err);
                if (r < 0)
                        fail_msg("%s: %s", c->name, err.msg);
                listed(desc, &hints);
                format_hints(&hints, got, sizeof(got));
                if (strcmp(got, c->expect) != 0)
                        fail_msg("%s: expected [%s], got [%s]", c->name, c->expect, got);
                ncm_hint_list_done(&hints);
                ncm_hint_desc_free(desc);
                ncm_cpuset_free(d);
                ncm_cpu_state_free(s);
                ncm_pod_free(pod);
        }
        ncm_cpu_policy_free(p);
        ncm_topo_free(t);
}

static void test_cpu_hints_desc_container(void **state)
{
        (void)state;
        run_hint_cases(false);
}

static void test_cpu_hints_desc_pod(void **state)
{
        (void)state;
        run_hint_cases(true);
}

/* ---- random machines against the generator ---- */

typedef struct rng {
        uint64_t s;
} rng;

static uint64_t next(rng *r)
{
        uint64_t z = (r->s += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static unsigned below(rng *r, unsigned n)
{
        return (unsigned)(next(r) % n);
}

static ncm_topo *random_topo(rng *r, int *ret_ncpu)
{
        ncm_cpu_info cpus[512];
        int sockets = 1 + (int)below(r, 3), per_socket = 1 + (int)below(r, 4);
        int ids[16], n = 0, numa_ids_n = sockets * per_socket;
        bool scattered = below(r, 3) == 0;
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;

        for (int i = 0; i < numa_ids_n; i++)
                ids[i] = scattered ? i * 5 + (int)below(r, 5) : i;
        for (int s = 0; s < sockets; s++) {
                for (int k = 0; k < per_socket; k++) {
                        int node = ids[s * per_socket + k];
                        int cores = 1 + (int)below(r, 4);
                        /* sometimes a NUMA node shared by two sockets */
                        int sock = below(r, 10) == 0 ? (s + 1) % sockets : s;
                        for (int c = 0; c < cores; c++) {
                                int core = n;
                                for (int th = 0; th < 2 && n < 500; th++) {
                                        cpus[n] = (ncm_cpu_info){n, core, sock, node, sock};
                                        n++;
                                }
                        }
                }
        }
        if (ncm_topo_new(cpus, (size_t)n, NULL, 0, NULL, &t, &err) < 0)
                fail_msg("%s", err.msg);
        *ret_ncpu = n;
        return t;
}

static void test_cpu_hints_desc_random(void **state)
{
        rng r = {31};
        (void)state;
        for (int iter = 0; iter < 2000; iter++) {
                int ncpu;
                ncm_topo *t = random_topo(&r, &ncpu);
                ncm_cpu_index *ix = NULL;
                ncm_cpuset *avail = ncm_cpuset_new(), *reuse = ncm_cpuset_new();
                ncm_cpu_options o = {0};
                ncm_hint_list want = NCM_HINT_LIST_INIT, got;
                ncm_hint_desc *d = NULL;
                int req = (int)below(&r, (unsigned)ncpu + 3);

                assert_int_equal(ncm_cpu_index_new(t, &ix, NULL), 0);
                o.align_by_socket = below(&r, 3) == 0;
                for (int c = 0; c < ncpu + 4; c++) {
                        if (below(&r, 100) < 55)
                                (void)ncm_cpuset_set(avail, c); /* beyond NCPU: unknown CPUs */
                        else if (below(&r, 100) < 4)
                                (void)ncm_cpuset_set(reuse, c);
                }
                assert_int_equal(ncm_cpu_hints_generate(ix, &o, avail, reuse, req, &want, NULL), 0);
                assert_int_equal(ncm_cpu_hints_describe(ix, &o, avail, reuse, req, &d, NULL), 0);
                listed(d, &got);
                assert_int_equal(got.n, want.n);
                for (size_t i = 0; i < want.n; i++) {
                        if (got.hints[i].numa != want.hints[i].numa ||
                            got.hints[i].preferred != want.hints[i].preferred)
                                fail_msg("request %d, hint %zu: generated %llx%s, described %llx%s",
                                         req, i, (unsigned long long)want.hints[i].numa,
                                         want.hints[i].preferred ? "+" : "-",
                                         (unsigned long long)got.hints[i].numa,
                                         got.hints[i].preferred ? "+" : "-");
                }
                ncm_hint_list_done(&want);
                ncm_hint_list_done(&got);
                ncm_hint_desc_free(d);
                ncm_cpuset_free(avail);
                ncm_cpuset_free(reuse);
                ncm_cpu_index_free(ix);
                ncm_topo_free(t);
        }
}

/* 64 NUMA nodes: the generator stops at 32, the description does not. */
static void test_cpu_hints_desc_64_nodes(void **state)
{
        ncm_cpu_info cpus[64 * 4];
        ncm_topo *t = NULL;
        ncm_cpu_index *ix = NULL;
        ncm_cpuset *avail = ncm_cpuset_new();
        ncm_hint_desc *d = NULL;
        ncm_hint_list l = NCM_HINT_LIST_INIT;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t count;
        ncm_hint_desc_iter it;
        ncm_hint h;
        (void)state;

        for (int i = 0; i < 64 * 4; i++)
                cpus[i] = (ncm_cpu_info){i, i / 2 * 2, i / 128, i / 4, i / 128};
        assert_int_equal(ncm_topo_new(cpus, 64 * 4, NULL, 0, NULL, &t, NULL), 0);
        assert_int_equal(ncm_cpu_index_new(t, &ix, NULL), 0);
        for (int i = 0; i < 64 * 4; i += 2)
                (void)ncm_cpuset_set(avail, i);
        assert_int_equal(ncm_cpu_hints_generate(ix, NULL, avail, NULL, 2, &l, &err), -E2BIG);
        assert_int_equal(ncm_cpu_hints_describe(ix, NULL, avail, NULL, 2, &d, NULL), 0);
        assert_int_equal(ncm_hint_desc_preferred_size(d), 1);
        assert_int_equal(ncm_hint_desc_count(d, &count, NULL), 0);
        assert_int_equal(count, UINT64_MAX); /* every non-empty mask: 2^64 - 1 */
        ncm_hint_desc_iter_init(&it, d);
        assert_true(ncm_hint_desc_iter_next(&it, &h));
        assert_int_equal(h.numa, 1);
        assert_true(h.preferred);
        ncm_hint_list_done(&l);
        ncm_hint_desc_free(d);
        ncm_cpuset_free(avail);
        ncm_cpu_index_free(ix);
        ncm_topo_free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cpu_hints_desc_container),
                        cmocka_unit_test(test_cpu_hints_desc_pod),
                        cmocka_unit_test(test_cpu_hints_desc_random),
                        cmocka_unit_test(test_cpu_hints_desc_64_nodes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
