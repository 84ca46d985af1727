/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU topology hints against kubelet's topology_hints_test.go (TestPodGuaranteedCPUs,
 * TestGetTopologyHints, TestGetPodTopologyHints, TestGetPodTopologyHintsWithPolicyOptions),
 * plus the generator's order, reusable-CPU rules, scale and JSON form.
 *
 * kubelet's tests sort hints before comparing (its mask order comes from an unsorted id list);
 * nodecm's order is fixed, so the expectations below are in that order and compared as is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpumanager.h>
#include <nodecm/cpustate.h>
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

/* "{0}+ {1}- {0,1}-": each hint as its NUMA ids, '+' preferred, '-' not. */
static void format_hints(const ncm_hint_list *l, char *buf, size_t len)
{
        size_t o = 0;

        buf[0] = '\0';
        if (l->nil) {
                snprintf(buf, len, "nil");
                return;
        }
        for (size_t i = 0; i < l->n; i++) {
                int bits[64];
                int nb = ncm_bitmask_to_bits(l->hints[i].numa, bits);
                o += (size_t)snprintf(buf + o, len - o, "%s{", i ? " " : "");
                for (int j = 0; j < nb; j++)
                        o += (size_t)snprintf(buf + o, len - o, j ? ",%d" : "%d", bits[j]);
                o += (size_t)snprintf(buf + o, len - o, "}%c", l->hints[i].preferred ? '+' : '-');
        }
}

static void assert_hints(const ncm_hint_list *l, const char *want, const char *what)
{
        char got[8192];
        format_hints(l, got, sizeof(got));
        if (strcmp(got, want) != 0)
                fail_msg("%s: expected [%s], got [%s]", what, want, got);
}

typedef struct ctr_opts {
        const char *request, *limit;
        bool sidecar;
} ctr_opts;

static void add_ctr(ncm_buf *b, const char *name, const ctr_opts *c)
{
        ncm_buf_printf(b,
                       "{\"name\": \"%s\",%s \"resources\": {\"requests\": {\"cpu\": \"%s\", "
                       "\"memory\": \"1G\"}, \"limits\": {\"cpu\": \"%s\", \"memory\": \"1G\"}}}",
                       name, c->sidecar ? " \"restartPolicy\": \"Always\"," : "", c->request,
                       c->limit);
}

/* makeMultiContainerPodWithOptions (uid "podUID") or makePod (one app container). */
static ncm_pod *make_pod(const char *uid, const ctr_opts *init, size_t ninit, const ctr_opts *app,
                         size_t napp, const char *app_name, const char *pod_level)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;
        char name[64];

        ncm_buf_printf(&b, "{\"metadata\": {\"uid\": \"%s\", \"name\": \"pod\"}, \"spec\": {", uid);
        if (pod_level)
                ncm_buf_printf(&b,
                               "\"resources\": {\"requests\": {\"cpu\": \"%s\", \"memory\": "
                               "\"1G\"}, \"limits\": {\"cpu\": \"%s\", \"memory\": \"1G\"}}, ",
                               pod_level, pod_level);
        ncm_buf_puts(&b, "\"initContainers\": [");
        for (size_t i = 0; i < ninit; i++) {
                snprintf(name, sizeof(name), "initContainer-%zu", i);
                if (i)
                        ncm_buf_puts(&b, ", ");
                add_ctr(&b, name, &init[i]);
        }
        ncm_buf_puts(&b, "], \"containers\": [");
        for (size_t i = 0; i < napp; i++) {
                snprintf(name, sizeof(name), "appContainer-%zu", i);
                if (i)
                        ncm_buf_puts(&b, ", ");
                add_ctr(&b, app_name ? app_name : name, &app[i]);
        }
        ncm_buf_puts(&b, "]}}");
        if (tu_pod_parse_as_in_go(b.data, b.len, "pod", &pod, &err) < 0)
                fail_msg("%s", err.msg);
        ncm_buf_done(&b);
        return pod;
}

static ncm_pod *make_simple(const char *cpus)
{
        ctr_opts c = {cpus, cpus, false};
        return make_pod("fakePod", NULL, 0, &c, 1, "fakeContainer", NULL);
}

/* ------------------------------------------------------------------------------------------
 * TestPodGuaranteedCPUs
 */

static void test_cpu_hints_pod_guaranteed_cpus(void **state)
{
        const ctr_opts z = {"0", "0", false}, two = {"2", "2", false}, five = {"5", "5", false};
        const ctr_opts two_four[] = {{"2", "2", false}, {"4", "4", false}};
        const ctr_opts one = {"1", "1", false}, s1 = {"1", "1", true};
        const ctr_opts init10[] = {
                        {"5", "5", false}, {"1", "1", true}, {"2", "2", true}, {"3", "3", true}};
        const ctr_opts init11[] = {{"5", "5", false},
                                   {"1", "1", true},
                                   {"2", "2", true},
                                   {"5", "5", false},
                                   {"3", "3", true}};
        const ctr_opts init12[] = {{"10", "10", true}, {"200", "200", false}};
        const ctr_opts app12 = {"100", "100", false};
        const struct {
                const ctr_opts *init;
                size_t ninit;
                const ctr_opts *app;
                size_t napp;
                int expect;
        } cases[] = {
                        {&z, 1, &z, 1, 0},       {&z, 1, &two, 1, 0},
                        {&two, 1, &z, 1, 0},     {&two, 1, &two, 1, 2},
                        {&five, 1, &five, 1, 5}, {&two, 1, &five, 1, 5},
                        {&five, 1, &two, 1, 5},  {two_four, 2, two_four, 2, 6},
                        {&s1, 1, &one, 1, 2},    {init10, 4, &one, 1, 7},
                        {init11, 5, &one, 1, 8}, {init12, 2, &app12, 1, 210},
        };

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_pod *pod = make_pod("podUID", cases[i].init, cases[i].ninit, cases[i].app,
                                        cases[i].napp, NULL, NULL);
                if (ncm_cpu_pod_guaranteed_cpus(pod) != cases[i].expect)
                        fail_msg("TestCase%02zu: expected %d, got %d", i + 1, cases[i].expect,
                                 ncm_cpu_pod_guaranteed_cpus(pod));
                ncm_pod_free(pod);
        }
}

/* ------------------------------------------------------------------------------------------
 * TestGetTopologyHints / TestGetPodTopologyHints (returnTestCases)
 */

static const struct hint_case {
        const char *name;
        const char *cpus;     /* the container's request = limit */
        const char *assigned; /* the container's CPUs in the state, or NULL */
        const char *dflt;
        const char *pod_level; /* pod-level resources (PodLevelResources on) */
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
                ctr_opts o = {c->cpus, c->cpus, false};
                ncm_pod *pod = make_pod("fakePod", NULL, 0, &o, 1, "fakeContainer", c->pod_level);
                ncm_cpu_state *s = ncm_cpu_state_new("static");
                ncm_cpuset *d = tu_cpuset(c->dflt);
                ncm_hint_list hints = NCM_HINT_LIST_INIT;
                ncm_error err = NCM_ERROR_INIT;
                int r;

                assert_int_equal(ncm_cpu_state_set_default(s, d, NULL), 0);
                if (c->assigned) {
                        ncm_cpuset *a = tu_cpuset(c->assigned);
                        assert_int_equal(ncm_cpu_state_set(s, "fakePod", "fakeContainer", a, NULL),
                                         0);
                        ncm_cpuset_free(a);
                }
                if (pod_scope)
                        r = ncm_cpu_policy_pod_hints(p, s, pod, &hints, &err);
                else
                        r = ncm_cpu_policy_hints(p, s, pod, &pod->containers[0], &hints, &err);
                if (r < 0)
                        fail_msg("%s: %s", c->name, err.msg);
                assert_hints(&hints, c->expect, c->name);
                ncm_hint_list_done(&hints);
                ncm_cpuset_free(d);
                ncm_cpu_state_free(s);
                ncm_pod_free(pod);
        }
        ncm_cpu_policy_free(p);
        ncm_topo_free(t);
}

static void test_cpu_hints_container(void **state)
{
        run_hint_cases(false);
}

static void test_cpu_hints_pod(void **state)
{
        run_hint_cases(true);
}

/* TestGetPodTopologyHintsWithPolicyOptions */
static void test_cpu_hints_align_by_socket(void **state)
{
        static const struct {
                const char *desc, *cpus, *dflt, *align, *expect;
        } cases[] = {
                        {"AlignBySocket:false, Preferred hints does not contains socket aligned "
                         "hints",
                         "2", "2-3,11", "false",
                         "{0}+ {0,1}- {0,2}- {0,3}- {0,1,2}- {0,1,3}- {0,2,3}- {0,1,2,3}-"},
                        {"AlignBySocket:true Preferred hints contains socket aligned hints", "2",
                         "2-3,11", "true",
                         "{0}+ {0,1}+ {0,2}- {0,3}- {0,1,2}- {0,1,3}- {0,2,3}- {0,1,2,3}-"},
                        {"AlignBySocket:true Preferred hints are spread across socket since 2 "
                         "sockets are "
                         "required",
                         "41", "0-28,40-57", "true", "{0,1,2}+ {0,1,2,3}+"},
        };
        ncm_topo *t = load_topo("dual-socket-multi-numa-ht");

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_cpu_option opt = {"align-by-socket", cases[i].align};
                ncm_cpu_policy_config cfg = {.options = &opt, .noptions = 1, .gates = {true, true}};
                ncm_cpu_policy *p = NULL;
                ncm_pod *pod = make_simple(cases[i].cpus);
                ncm_cpu_state *s = ncm_cpu_state_new("static");
                ncm_cpuset *d = tu_cpuset(cases[i].dflt);
                ncm_hint_list hints = NCM_HINT_LIST_INIT;

                assert_int_equal(ncm_cpu_static_policy_new(t, 0, NULL, &cfg, &p, NULL), 0);
                assert_int_equal(ncm_cpu_state_set_default(s, d, NULL), 0);
                assert_int_equal(ncm_cpu_policy_pod_hints(p, s, pod, &hints, NULL), 0);
                assert_hints(&hints, cases[i].expect, cases[i].desc);
                ncm_hint_list_done(&hints);
                ncm_cpuset_free(d);
                ncm_cpu_state_free(s);
                ncm_pod_free(pod);
                ncm_cpu_policy_free(p);
        }
        ncm_topo_free(t);
}

/* ------------------------------------------------------------------------------------------
 * The generator itself
 */

/* Every non-empty subset, by size, then lexicographic by node position. */
static void test_cpu_hints_order_and_reusable(void **state)
{
        ncm_topo *t = load_topo("dual-socket-multi-numa-ht");
        ncm_cpu_index *ix = NULL;
        ncm_cpuset *all = tu_cpuset("0-79");
        ncm_cpuset *none = tu_cpuset("");
        ncm_cpuset *reuse = tu_cpuset("20,30");
        ncm_cpuset *unknown = tu_cpuset("100");
        ncm_hint_list l = NCM_HINT_LIST_INIT;

        assert_int_equal(ncm_cpu_index_new(t, &ix, NULL), 0);
        assert_int_equal(ncm_cpu_hints_generate(ix, NULL, all, NULL, 1, &l, NULL), 0);
        assert_hints(&l,
                     "{0}+ {1}+ {2}+ {3}+ {0,1}- {0,2}- {0,3}- {1,2}- {1,3}- {2,3}- {0,1,2}- "
                     "{0,1,3}- {0,2,3}- {1,2,3}- {0,1,2,3}-",
                     "all masks");
        ncm_hint_list_done(&l);
        /* reusable CPUs pin the masks to their nodes and count in full */
        assert_int_equal(ncm_cpu_hints_generate(ix, NULL, none, reuse, 2, &l, NULL), 0);
        assert_hints(&l, "{2,3}- {0,2,3}- {1,2,3}- {0,1,2,3}-", "reusable");
        ncm_hint_list_done(&l);
        /* Go's map lookup of an unknown CPU reads NUMA node 0 */
        assert_int_equal(ncm_cpu_hints_generate(ix, NULL, none, unknown, 1, &l, NULL), 0);
        assert_hints(&l, "{0}+ {0,1}- {0,2}- {0,3}- {0,1,2}- {0,1,3}- {0,2,3}- {0,1,2,3}-",
                     "unknown reusable CPU");
        ncm_hint_list_done(&l);
        /* request 0 fits everywhere; a request above capacity prefers nothing narrower */
        assert_int_equal(ncm_cpu_hints_generate(ix, NULL, all, NULL, 81, &l, NULL), 0);
        assert_int_equal(l.n, 0);
        assert_false(l.nil);
        ncm_hint_list_done(&l);
        ncm_cpuset_free(all);
        ncm_cpuset_free(none);
        ncm_cpuset_free(reuse);
        ncm_cpuset_free(unknown);
        ncm_cpu_index_free(ix);
        ncm_topo_free(t);
}

/* 16 NUMA nodes: 65535 masks in kubelet order; sparse NUMA ids keep their own bits. */
static void test_cpu_hints_sixteen_nodes(void **state)
{
        ncm_cpu_info cpus[64];
        ncm_topo *t = NULL;
        ncm_cpu_index *ix = NULL;
        ncm_cpuset *avail = tu_cpuset("0-63");
        ncm_hint_list l = NCM_HINT_LIST_INIT;
        size_t idx = 0;

        for (int i = 0; i < 64; i++)
                cpus[i] = (ncm_cpu_info){i, i, i / 32, (i / 4) * 3, i / 4};
        assert_int_equal(ncm_topo_new(cpus, 64, NULL, 0, NULL, &t, NULL), 0);
        assert_int_equal(ncm_cpu_index_new(t, &ix, NULL), 0);
        assert_int_equal(ncm_cpu_hints_generate(ix, NULL, avail, NULL, 8, &l, NULL), 0);
        /* every mask of >= 2 nodes holds 8 CPUs */
        assert_int_equal(l.n, 65535 - 16);
        /* check the order against a straightforward enumeration of positions */
        for (int k = 2; k <= 16; k++) {
                int pos[16];
                for (int j = 0; j < k; j++)
                        pos[j] = j;
                for (;;) {
                        ncm_bitmask m = 0;
                        for (int j = 0; j < k; j++)
                                m |= UINT64_C(1) << (pos[j] * 3);
                        assert_true(idx < l.n);
                        if (l.hints[idx].numa != m)
                                fail_msg("hint %zu: mask %llx, expected %llx", idx,
                                         (unsigned long long)l.hints[idx].numa,
                                         (unsigned long long)m);
                        assert_int_equal(l.hints[idx].preferred, k == 2);
                        idx++;
                        int j = k - 1;
                        while (j >= 0 && pos[j] == 16 - k + j)
                                j--;
                        if (j < 0)
                                break;
                        pos[j]++;
                        for (int q = j + 1; q < k; q++)
                                pos[q] = pos[q - 1] + 1;
                }
        }
        assert_int_equal(idx, l.n);
        ncm_hint_list_done(&l);
        ncm_cpuset_free(avail);
        ncm_cpu_index_free(ix);
        ncm_topo_free(t);
}

static void test_cpu_hints_json(void **state)
{
        ncm_hint h[] = {{1, false, true}, {3, false, false}, {0, true, true}};
        ncm_hint_list l = {false, 3, 3, h};
        ncm_buf b = NCM_BUF_INIT;

        ncm_cpu_hints_format_json(&l, &b);
        assert_string_equal(b.data,
                            "[{\"numa\": [0], \"preferred\": true}, {\"numa\": [0, 1], "
                            "\"preferred\": false}, {\"numa\": null, \"preferred\": true}]");
        ncm_buf_reset(&b);
        l.n = 0;
        ncm_cpu_hints_format_json(&l, &b);
        assert_string_equal(b.data, "[]");
        ncm_buf_done(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cpu_hints_pod_guaranteed_cpus),
                        cmocka_unit_test(test_cpu_hints_container),
                        cmocka_unit_test(test_cpu_hints_pod),
                        cmocka_unit_test(test_cpu_hints_align_by_socket),
                        cmocka_unit_test(test_cpu_hints_order_and_reusable),
                        cmocka_unit_test(test_cpu_hints_sixteen_nodes),
                        cmocka_unit_test(test_cpu_hints_json),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
