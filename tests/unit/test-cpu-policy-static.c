/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The static and none policies against kubelet's policy_static_test.go and
 * policy_none_test.go tables: Start/validateState, Allocate (options-insensitive, default,
 * full-pcpus-only, align-by-socket, reserved lists, uncore-cache alignment), reuse of
 * init-container CPUs, RemoveContainer, topology-aware allocation; plus NewManager's policy
 * choice.
 *
 * CPU sets in the tables are expressions over the test topology: "[0-3,8]" a list, "ALL" every
 * CPU, "S<n>" socket n, "U<n>" uncore cache n, joined with '+' (union) and '-' (difference), left
 * to right.
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

/* ------------------------------------------------------------------------------------------
 * Helpers
 */

static ncm_topo *topos[32];
static char topo_names[32][64];
static size_t ntopos;

static ncm_topo *topo(const char *name)
{
        ncm_error err = NCM_ERROR_INIT;
        char relpath[128];
        char *path;

        for (size_t i = 0; i < ntopos; i++)
                if (strcmp(topo_names[i], name) == 0)
                        return topos[i];
        assert_true(ntopos < NCM_ELEMENTSOF(topos));
        snprintf(relpath, sizeof(relpath), "cpumanager/topo/%s.json", name);
        path = tu_data_path(relpath);
        if (ncm_topo_load_json_file(path, &topos[ntopos], &err) < 0)
                fail_msg("%s: %s", path, err.msg);
        free(path);
        snprintf(topo_names[ntopos], sizeof(topo_names[0]), "%s", name);
        return topos[ntopos++];
}

static int teardown(void **state)
{
        for (size_t i = 0; i < ntopos; i++)
                ncm_topo_free(topos[i]);
        ntopos = 0;
        return 0;
}

/* Evaluate a set expression (see the file comment) on topology T. */
static ncm_cpuset *expr(const ncm_topo *t, const char *e)
{
        ncm_cpuset *acc = ncm_cpuset_new();
        char op = '+';

        assert_non_null(acc);
        while (e && *e) {
                ncm_cpuset *term = NULL;
                const char *end = e;

                if (*e == '[') {
                        char buf[1024];
                        end = strchr(e, ']');
                        assert_non_null(end);
                        snprintf(buf, sizeof(buf), "%.*s", (int)(end - e - 1), e + 1);
                        term = tu_cpuset(buf);
                        end++;
                } else if (strncmp(e, "ALL", 3) == 0) {
                        term = ncm_cpuset_new();
                        ncm_topo_all_cpus(t, term);
                        end = e + 3;
                } else if (*e == 'S') {
                        char *p;
                        long s = strtol(e + 1, &p, 10);
                        term = ncm_cpuset_dup(ncm_topo_socket_cpus(t, (int)s));
                        end = p;
                } else if (*e == 'U') {
                        char *p;
                        long u = strtol(e + 1, &p, 10);
                        const ncm_cpuset *cpus = ncm_topo_uncore_cpus(t, (int)u);
                        assert_non_null(cpus);
                        term = ncm_cpuset_dup(cpus);
                        end = p;
                } else {
                        fail_msg("bad set expression at %s", e);
                }
                if (op == '+')
                        ncm_cpuset_or(acc, acc, term);
                else
                        ncm_cpuset_andnot(acc, acc, term);
                ncm_cpuset_free(term);
                if (*end == '+' || *end == '-')
                        op = *end++;
                e = end;
        }
        return acc;
}

/* A pod like kubelet's makePod / makeMultiContainerPod(WithOptions). */
typedef struct ctr_spec {
        const char *request, *limit;
        bool sidecar;
} ctr_spec;

static void add_container(ncm_buf *b, const char *name, const ctr_spec *c)
{
        ncm_buf_printf(b,
                       "{\"name\": \"%s\",%s \"resources\": {\"requests\": {\"cpu\": \"%s\", "
                       "\"memory\": \"1G\"}, \"limits\": {\"cpu\": \"%s\", \"memory\": \"1G\"}}}",
                       name, c->sidecar ? " \"restartPolicy\": \"Always\"," : "", c->request,
                       c->limit);
}

static ncm_pod *make_pod_n(const char *uid, const char *const *init_names, const ctr_spec *init,
                           size_t ninit, const char *const *app_names, const ctr_spec *app,
                           size_t napp)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;

        ncm_buf_printf(&b, "{\"metadata\": {\"uid\": \"%s\", \"name\": \"pod\"}, \"spec\": {", uid);
        ncm_buf_puts(&b, "\"initContainers\": [");
        for (size_t i = 0; i < ninit; i++) {
                if (i)
                        ncm_buf_puts(&b, ", ");
                add_container(&b, init_names[i], &init[i]);
        }
        ncm_buf_puts(&b, "], \"containers\": [");
        for (size_t i = 0; i < napp; i++) {
                if (i)
                        ncm_buf_puts(&b, ", ");
                add_container(&b, app_names[i], &app[i]);
        }
        ncm_buf_puts(&b, "]}}");
        if (tu_pod_parse_as_in_go(b.data, b.len, "pod", &pod, &err) < 0)
                fail_msg("%s", err.msg);
        ncm_buf_done(&b);
        return pod;
}

static ncm_pod *make_pod(const char *uid, const char *name, const char *request, const char *limit)
{
        const char *names[] = {name};
        ctr_spec c = {request, limit, false};
        return make_pod_n(uid, NULL, NULL, 0, names, &c, 1);
}

/* makeMultiContainerPod: uid "podUID", containers initContainer-N / appContainer-N. */
static ncm_pod *make_multi(const ctr_spec *init, size_t ninit, const ctr_spec *app, size_t napp)
{
        static const char *const inames[] = {"initContainer-0", "initContainer-1",
                                             "initContainer-2", "initContainer-3"};
        static const char *const anames[] = {"appContainer-0", "appContainer-1", "appContainer-2",
                                             "appContainer-3"};
        return make_pod_n("podUID", inames, init, ninit, anames, app, napp);
}

/* State from "pod/ctr=EXPR;pod/ctr=EXPR" and a default-set expression. */
static ncm_cpu_state *make_state(const ncm_topo *t, const char *assign, const char *dflt)
{
        ncm_cpu_state *s = ncm_cpu_state_new("static");
        char buf[2048], *save = NULL;

        assert_non_null(s);
        if (assign && *assign) {
                snprintf(buf, sizeof(buf), "%s", assign);
                for (char *a = strtok_r(buf, ";", &save); a; a = strtok_r(NULL, ";", &save)) {
                        char *slash = strchr(a, '/'), *eq = strchr(a, '=');
                        ncm_cpuset *set;
                        assert_non_null(slash);
                        assert_non_null(eq);
                        *slash = *eq = '\0';
                        set = expr(t, eq + 1);
                        assert_int_equal(ncm_cpu_state_set(s, a, slash + 1, set, NULL), 0);
                        ncm_cpuset_free(set);
                }
        }
        ncm_cpuset *d = expr(t, dflt);
        assert_int_equal(ncm_cpu_state_set_default(s, d, NULL), 0);
        ncm_cpuset_free(d);
        return s;
}

/* "k=v,k=v" into OPTS (storage in BUF). */
static size_t parse_opts(const char *spec, char *buf, size_t len, ncm_cpu_option *opts)
{
        size_t n = 0;
        char *save = NULL;

        if (!spec || !*spec)
                return 0;
        snprintf(buf, len, "%s", spec);
        for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(kv, '=');
                assert_non_null(eq);
                *eq = '\0';
                opts[n++] = (ncm_cpu_option){kv, eq + 1};
        }
        return n;
}

static ncm_cpu_policy *new_static(const ncm_topo *t, int num_reserved, const char *reserved,
                                  const char *options, ncm_error *err, int *ret)
{
        char buf[512];
        ncm_cpu_option opts[8];
        ncm_cpu_policy_config cfg = {.gates = {true, true}};
        ncm_cpu_policy *p = NULL;
        ncm_cpuset *resv = reserved ? expr(t, reserved) : NULL;

        cfg.options = opts;
        cfg.noptions = parse_opts(options, buf, sizeof(buf), opts);
        *ret = ncm_cpu_static_policy_new(t, num_reserved, resv, &cfg, &p, err);
        ncm_cpuset_free(resv);
        return p;
}

static void assert_set_expr(const ncm_topo *t, const ncm_cpuset *got, const char *e,
                            const char *what)
{
        ncm_cpuset *want = expr(t, e);
        if (!ncm_cpuset_equal(got, want)) {
                char *g = ncm_cpuset_format_list(got), *w = ncm_cpuset_format_list(want);
                fail_msg("%s: expected %s, got %s", what, w, g);
        }
        ncm_cpuset_free(want);
}

/* ------------------------------------------------------------------------------------------
 * TestStaticPolicyName, TestStaticPolicyStart, TestStaticPolicyStartWithResvList
 */

static void test_cpu_policy_static_name(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        int r;
        ncm_cpu_policy *p = new_static(topo("single-socket-ht"), 1, NULL, NULL, &err, &r);
        assert_int_equal(r, 0);
        assert_string_equal(ncm_cpu_policy_name(p), "static");
        tu_assert_cpuset(ncm_cpu_policy_reserved(p), "0");
        ncm_cpu_policy_free(p);
}

static const struct start_case {
        const char *desc;
        int num_reserved;
        const char *reserved; /* NULL: chosen by the allocator */
        const char *options;
        const char *assign, *dflt;
        const char *new_err; /* NewStaticPolicy error */
        const char *err;     /* Start error */
        const char *exp;     /* default set afterwards */
} start_cases[] = {
                {"non-corrupted state", 0, NULL, NULL, "fakePod/0=[0]", "[1-11]", NULL, NULL,
                 "[1-11]"},
                {"empty cpuset", 1, NULL, NULL, "", "", NULL, NULL, "[0-11]"},
                {"reserved cores 0 & 6 are not present in available cpuset", 2, NULL, NULL, "",
                 "[0-1]", NULL,
                 "not all reserved cpus: \"0,6\" are present in defaultCpuSet: \"0-1\"", NULL},
                {"some of reserved cores are present in available cpuset (strict)", 2, NULL,
                 "strict-cpu-reservation=true", "", "[0-1]", NULL,
                 "some of strictly reserved cpus: \"0\" are present in defaultCpuSet: \"0-1\"",
                 NULL},
                {"assigned core 2 is still present in available cpuset", 0, NULL, NULL,
                 "fakePod/0=[0-2]", "[2-11]", NULL,
                 "pod: fakePod, container: 0 cpuset: \"0-2\" overlaps with default cpuset \"2-11\"",
                 NULL},
                {"assigned core 2 is still present in available cpuset (strict)", 0, NULL,
                 "strict-cpu-reservation=true", "fakePod/0=[0-2]", "[2-11]", NULL,
                 "pod: fakePod, container: 0 cpuset: \"0-2\" overlaps with default cpuset \"2-11\"",
                 NULL},
                {"core 12 is not present in topology but is in state cpuset", 0, NULL, NULL,
                 "fakePod/0=[0-2];fakePod/1=[3-4]", "[5-12]", NULL,
                 "current set of available CPUs \"0-11\" doesn't match with CPUs in state \"0-12\"",
                 NULL},
                {"core 11 is present in topology but is not in state cpuset", 0, NULL, NULL,
                 "fakePod/0=[0-2];fakePod/1=[3-4]", "[5-10]", NULL,
                 "current set of available CPUs \"0-11\" doesn't match with CPUs in state \"0-10\"",
                 NULL},
                /* WithResvList */
                {"resv: empty cpuset", 2, "[0-1]", NULL, "", "", NULL, NULL, "[0-11]"},
                {"resv: empty cpuset, strict", 2, "[0-1]", "strict-cpu-reservation=true", "", "",
                 NULL, NULL, "[2-11]"},
                {"resv: reserved cores 0 & 1 are not present in available cpuset", 2, "[0-1]", NULL,
                 "", "[2-5]", NULL,
                 "not all reserved cpus: \"0-1\" are present in defaultCpuSet: \"2-5\"", NULL},
                {"resv: reserved cores 0 & 1 are present in available cpuset, strict", 2, "[0-1]",
                 "strict-cpu-reservation=true", "", "[0-5]", NULL,
                 "some of strictly reserved cpus: \"0-1\" are present in defaultCpuSet: \"0-5\"",
                 NULL},
                {"resv: inconsistency between numReservedCPUs and reserved", 1, "[0-1]", NULL, "",
                 "[0-11]",
                 "[cpumanager] unable to reserve the required amount of CPUs (size of 0-1 did not "
                 "equal "
                 "1)",
                 NULL, NULL},
};

static void test_cpu_policy_static_start(void **state)
{
        const ncm_topo *t = topo("dual-socket-ht");

        for (size_t i = 0; i < NCM_ELEMENTSOF(start_cases); i++) {
                const struct start_case *c = &start_cases[i];
                ncm_error err = NCM_ERROR_INIT;
                int r;
                ncm_cpu_policy *p =
                                new_static(t, c->num_reserved, c->reserved, c->options, &err, &r);
                if (c->new_err) {
                        assert_int_equal(r, -EINVAL);
                        assert_string_equal(err.msg, c->new_err);
                        continue;
                }
                if (r < 0)
                        fail_msg("%s: %s", c->desc, err.msg);
                ncm_cpu_state *s = make_state(t, c->assign, c->dflt);
                r = ncm_cpu_policy_start(p, s, &err);
                if (c->err) {
                        if (r >= 0)
                                fail_msg("%s: expected an error", c->desc);
                        assert_int_equal(r, -NCM_E_INVALID_STATE);
                        assert_string_equal(err.msg, c->err);
                } else {
                        if (r < 0)
                                fail_msg("%s: %s", c->desc, err.msg);
                        assert_set_expr(t, ncm_cpu_state_default(s), c->exp, c->desc);
                }
                ncm_cpu_state_free(s);
                ncm_cpu_policy_free(p);
        }
}

/* ------------------------------------------------------------------------------------------
 * TestStaticPolicyAdd and TestStaticPolicyAddWithResvList
 */

typedef struct add_case {
        const char *desc;
        const char *topo;
        int num_reserved;
        const char *reserved;
        const char *options;
        const char *assign, *dflt;
        const char *ctr, *request, *limit;
        int hint[4];     /* NUMA nodes of the affinity, -1 terminated; {-1}: none */
        const char *err; /* NULL: success */
        int err_code;
        const char *exp; /* NULL: no allocation expected */
} add_case;

#define NOHINT                                                                                     \
        {                                                                                          \
                -1                                                                                 \
        }

static const add_case insensitive_cases[] = {
                {"GuPodMultipleCores, SingleSocketHT, ExpectAllocOneCore", "single-socket-ht", 1,
                 NULL, NULL, "fakePod/fakeContainer100=[2-3,6-7]", "[0-1,4-5]", "fakeContainer3",
                 "2000m", "2000m", NOHINT, NULL, 0, "[1,5]"},
                {"GuPodMultipleCores, DualSocketHT, ExpectAllocOneSocket", "dual-socket-ht", 1,
                 NULL, NULL, "fakePod/fakeContainer100=[2]", "[0-1,3-11]", "fakeContainer3",
                 "6000m", "6000m", NOHINT, NULL, 0, "[1,3,5,7,9,11]"},
                {"GuPodMultipleCores, DualSocketHT, ExpectAllocThreeCores", "dual-socket-ht", 1,
                 NULL, NULL, "fakePod/fakeContainer100=[1,5]", "[0,2-4,6-11]", "fakeContainer3",
                 "6000m", "6000m", NOHINT, NULL, 0, "[2-4,8-10]"},
                {"GuPodMultipleCores, DualSocketNoHT, ExpectAllocOneSocket", "dual-socket-noht", 1,
                 NULL, NULL, "fakePod/fakeContainer100=[]", "[0-1,3-7]", "fakeContainer1", "4000m",
                 "4000m", NOHINT, NULL, 0, "[4-7]"},
                {"GuPodMultipleCores, DualSocketNoHT, ExpectAllocFourCores", "dual-socket-noht", 1,
                 NULL, NULL, "fakePod/fakeContainer100=[4-5]", "[0-1,3,6-7]", "fakeContainer1",
                 "4000m", "4000m", NOHINT, NULL, 0, "[1,3,6-7]"},
                {"GuPodMultipleCores, DualSocketHT, ExpectAllocOneSocketOneCore", "dual-socket-ht",
                 1, NULL, NULL, "fakePod/fakeContainer100=[2]", "[0-1,3-11]", "fakeContainer3",
                 "8000m", "8000m", NOHINT, NULL, 0, "[1,3-5,7,9-11]"},
                {"NonGuPod, SingleSocketHT, NoAlloc", "single-socket-ht", 1, NULL, NULL, "",
                 "[0-7]", "fakeContainer1", "1000m", "2000m", NOHINT, NULL, 0, NULL},
                {"GuPodNonIntegerCore, SingleSocketHT, NoAlloc", "single-socket-ht", 1, NULL, NULL,
                 "", "[0-7]", "fakeContainer4", "977m", "977m", NOHINT, NULL, 0, NULL},
                {"GuPodMultipleCores, topoQuadSocketFourWayHT, ExpectAllocSock0",
                 "quad-socket-four-way-ht", 0, NULL, NULL, "fakePod/fakeContainer100=[3-7,11]",
                 "ALL-[3-7,11]", "fakeContainer5", "72000m", "72000m", NOHINT, NULL, 0, "S0"},
                {"GuPodMultipleCores, topoQuadSocketFourWayHT, "
                 "ExpectAllocAllFullCoresFromThreeSockets",
                 "quad-socket-four-way-ht", 0, NULL, NULL,
                 "fakePod/"
                 "fakeContainer100=ALL-[1,25,13,38,2,9,11,35,23,48,12,51,53,173,113,233,54,61]",
                 "[1,25,13,38,2,9,11,35,23,48,12,51,53,173,113,233,54,61]", "fakeCcontainer5",
                 "12000m", "12000m", NOHINT, NULL, 0, "[1,25,13,38,11,35,23,48,53,173,113,233]"},
                {"GuPodMultipleCores, topoQuadSocketFourWayHT, ExpectAllocAllSock1+FullCore",
                 "quad-socket-four-way-ht", 0, NULL, NULL,
                 "fakePod/fakeContainer100=ALL-S1-[10,34,22,47,53,173,61,181,108,228,115,235]",
                 "S1+[10,34,22,47,53,173,61,181,108,228,115,235]", "fakeContainer5", "76000m",
                 "76000m", NOHINT, NULL, 0, "S1+[10,34,22,47]"},
};

#define NOT_ENOUGH(r, a)                                                                           \
        "not enough cpus available to satisfy request: requested=" #r ", available=" #a,           \
                        NCM_E_UNSATISFIABLE

static const add_case other_cases[] = {
                /* defaultOptionsTestCases */
                {"GuPodSingleCore, SingleSocketHT, ExpectAllocOneCPU", "single-socket-ht", 1, NULL,
                 NULL, "", "[0-7]", "fakeContainer2", "1000m", "1000m", NOHINT, NULL, 0, "[4]"},
                {"GuPodMultipleCores, topoQuadSocketFourWayHT, ExpectAllocCPUs",
                 "quad-socket-four-way-ht", 0, NULL, NULL,
                 "fakePod/fakeContainer100=ALL-[10,11,53,37,55,67,52]", "[10,11,53,67,52]",
                 "fakeContainer5", "5000m", "5000m", NOHINT, NULL, 0, "[10,11,53,67,52]"},
                {"GuPodSingleCore, SingleSocketHT, ExpectError", "single-socket-ht", 1, NULL, NULL,
                 "", "[0-7]", "fakeContainer2", "8000m", "8000m", NOHINT, NOT_ENOUGH(8, 7), NULL},
                {"GuPodMultipleCores, SingleSocketHT, ExpectSameAllocation", "single-socket-ht", 1,
                 NULL, NULL, "fakePod/fakeContainer3=[2-3,6-7]", "[0-1,4-5]", "fakeContainer3",
                 "4000m", "4000m", NOHINT, NULL, 0, "[2-3,6-7]"},
                {"GuPodMultipleCores, DualSocketHT, NoAllocExpectError", "dual-socket-ht", 1, NULL,
                 NULL, "fakePod/fakeContainer100=[1-3]", "[0,4-11]", "fakeContainer5", "10000m",
                 "10000m", NOHINT, NOT_ENOUGH(10, 8), NULL},
                {"GuPodMultipleCores, SingleSocketHT, NoAllocExpectError", "single-socket-ht", 1,
                 NULL, NULL, "fakePod/fakeContainer100=[1-6]", "[0,7]", "fakeContainer5", "2000m",
                 "2000m", NOHINT, NOT_ENOUGH(2, 1), NULL},
                {"GuPodMultipleCores, topoQuadSocketFourWayHT, NoAlloc", "quad-socket-four-way-ht",
                 0, NULL, NULL, "fakePod/fakeContainer100=ALL-[10,11,53,37,55,67,52]",
                 "[10,11,53,37,55,67,52]", "fakeContainer5", "76000m", "76000m", NOHINT,
                 NOT_ENOUGH(76, 7), NULL},
                /* smtalignOptionTestCases */
                {"SMT: GuPodSingleCore, SingleSocketHT, ExpectAllocOneCPU", "single-socket-ht", 1,
                 NULL, "full-pcpus-only=true", "", "[0-7]", "fakeContainer2", "1000m", "1000m",
                 NOHINT, "SMT Alignment Error: requested 1 cpus not multiple cpus per core = 2",
                 NCM_E_ADMISSION, NULL},
                {"SMT: GuPodMultipleCores, topoQuadSocketFourWayHT, ExpectAllocOneCPUs",
                 "quad-socket-four-way-ht", 8, NULL, "full-pcpus-only=true", "", "ALL",
                 "fakeContainer15", "15000m", "15000m", NOHINT,
                 "SMT Alignment Error: requested 15 cpus not multiple cpus per core = 4",
                 NCM_E_ADMISSION, NULL},
                {"SMT: GuPodManyCores, topoDualSocketHT, ExpectDoNotAllocPartialCPU",
                 "dual-socket-ht", 2, "[1,6]", "full-pcpus-only=true", "", "[0,2-5,7-11]",
                 "fakeContainerBug113537_1", "10000m", "10000m", NOHINT,
                 "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 8, "
                 "requested CPUs = 10, CPUs per core = 2",
                 NCM_E_ADMISSION, NULL},
                {"SMT: GuPodManyCores, topoDualSocketHT, AutoReserve, ExpectAllocAllCPUs",
                 "dual-socket-ht", 2, NULL, "full-pcpus-only=true", "", "[1-5,7-11]",
                 "fakeContainerBug113537_2", "10000m", "10000m", NOHINT, NULL, 0, "[1-5,7-11]"},
                {"SMT: GuPodManyCores, topoDualSocketHT, ExpectAllocAllCPUs", "dual-socket-ht", 2,
                 "[0,6]", "full-pcpus-only=true", "", "[1-5,7-11]", "fakeContainerBug113537_2",
                 "10000m", "10000m", NOHINT, NULL, 0, "[1-5,7-11]"},
                /* alignBySocketOptionTestCases */
                {"Align by socket: true, cpu's within same socket of numa in hint are part of "
                 "allocation",
                 "dual-socket-multi-numa-ht",
                 1,
                 NULL,
                 "align-by-socket=true",
                 "",
                 "[2,11,21,22]",
                 "fakeContainer2",
                 "2000m",
                 "2000m",
                 {0, 2, -1},
                 NULL,
                 0,
                 "[2,11]"},
                {"Align by socket: false, cpu's are taken strictly from NUMA nodes in hint",
                 "dual-socket-multi-numa-ht",
                 1,
                 NULL,
                 "align-by-socket=false",
                 "",
                 "[2,11,21,22]",
                 "fakeContainer2",
                 "2000m",
                 "2000m",
                 {0, 2, -1},
                 NULL,
                 0,
                 "[2,21]"},
                /* TestStaticPolicyAddWithResvList */
                {"Resv: GuPodSingleCore, SingleSocketHT, ExpectError", "single-socket-ht", 1, "[0]",
                 NULL, "", "[0-7]", "fakeContainer2", "8000m", "8000m", NOHINT, NOT_ENOUGH(8, 7),
                 NULL},
                {"Resv: GuPodSingleCore, SingleSocketHT, ExpectAllocOneCPU", "single-socket-ht", 2,
                 "[0-1]", NULL, "", "[0-7]", "fakeContainer2", "1000m", "1000m", NOHINT, NULL, 0,
                 "[4]"},
                {"Resv: GuPodMultipleCores, SingleSocketHT, ExpectAllocOneCore", "single-socket-ht",
                 2, "[0-1]", NULL, "fakePod/fakeContainer100=[2-3,6-7]", "[0-1,4-5]",
                 "fakeContainer3", "2000m", "2000m", NOHINT, NULL, 0, "[4-5]"},
                /* TestTopologyAwareAllocateCPUs (allocateCPUs with a NUMA mask, no reservation) */
                {"Request 2 CPUs, No BitMask", "dual-socket-ht", 0, NULL, NULL, "", "[0-11]", "c",
                 "2", "2", NOHINT, NULL, 0, "[0,6]"},
                {"Request 2 CPUs, BitMask on Socket 0",
                 "dual-socket-ht",
                 0,
                 NULL,
                 NULL,
                 "",
                 "[0-11]",
                 "c",
                 "2",
                 "2",
                 {0, -1},
                 NULL,
                 0,
                 "[0,6]"},
                {"Request 2 CPUs, BitMask on Socket 1",
                 "dual-socket-ht",
                 0,
                 NULL,
                 NULL,
                 "",
                 "[0-11]",
                 "c",
                 "2",
                 "2",
                 {1, -1},
                 NULL,
                 0,
                 "[1,7]"},
                {"Request 8 CPUs, BitMask on Socket 0",
                 "dual-socket-ht",
                 0,
                 NULL,
                 NULL,
                 "",
                 "[0-11]",
                 "c",
                 "8",
                 "8",
                 {0, -1},
                 NULL,
                 0,
                 "[0-2,4,6-8,10]"},
                {"Request 8 CPUs, BitMask on Socket 1",
                 "dual-socket-ht",
                 0,
                 NULL,
                 NULL,
                 "",
                 "[0-11]",
                 "c",
                 "8",
                 "8",
                 {1, -1},
                 NULL,
                 0,
                 "[0-1,3,5-7,9,11]"},
};

static void run_add_case(const add_case *c, const char *options)
{
        const ncm_topo *t = topo(c->topo);
        ncm_error err = NCM_ERROR_INIT;
        int r;
        ncm_cpu_policy *p = new_static(t, c->num_reserved, c->reserved, options, &err, &r);
        ncm_cpu_state *s;
        ncm_pod *pod;
        ncm_hint hint = {0, false, true};
        const ncm_cpuset *got;

        if (r < 0)
                fail_msg("%s: new: %s", c->desc, err.msg);
        s = make_state(t, c->assign, c->dflt);
        pod = make_pod("fakePod", c->ctr, c->request, c->limit);
        for (int i = 0; c->hint[i] >= 0; i++)
                hint.numa |= UINT64_C(1) << c->hint[i];
        r = ncm_cpu_policy_allocate(p, s, pod, &pod->containers[0], c->hint[0] >= 0 ? &hint : NULL,
                                    &err);
        if (c->err) {
                if (r >= 0)
                        fail_msg("%s [%s]: expected error %s", c->desc, options ? options : "",
                                 c->err);
                assert_int_equal(r, -c->err_code);
                assert_string_equal(err.msg, c->err);
        } else if (r < 0) {
                fail_msg("%s [%s]: %s", c->desc, options ? options : "", err.msg);
        }
        got = ncm_cpu_state_get(s, "fakePod", c->ctr);
        if (c->exp) {
                if (!got)
                        fail_msg("%s: container not in the state", c->desc);
                assert_set_expr(t, got, c->exp, c->desc);
                assert_false(ncm_cpuset_intersects(got, ncm_cpu_state_default(s)));
        } else if (got) {
                fail_msg("%s: unexpected assignment", c->desc);
        }
        ncm_pod_free(pod);
        ncm_cpu_state_free(s);
        ncm_cpu_policy_free(p);
}

static void test_cpu_policy_static_add(void **state)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(insensitive_cases); i++) {
                run_add_case(&insensitive_cases[i], NULL);
                run_add_case(&insensitive_cases[i], "full-pcpus-only=true");
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(other_cases); i++)
                run_add_case(&other_cases[i], other_cases[i].options);
}

/* ------------------------------------------------------------------------------------------
 * TestStaticPolicyReuseCPUs, TestStaticPolicyDoNotReuseCPUs, TestStaticPolicyRemove
 */

static void allocate_all(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod)
{
        ncm_error err = NCM_ERROR_INIT;
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (ncm_cpu_policy_allocate(p, s, pod, &pod->init_containers[i], NULL, &err) < 0)
                        fail_msg("%s", err.msg);
        for (size_t i = 0; i < pod->n_containers; i++)
                if (ncm_cpu_policy_allocate(p, s, pod, &pod->containers[i], NULL, &err) < 0)
                        fail_msg("%s", err.msg);
}

static void test_cpu_policy_static_reuse_init_cpus(void **state)
{
        const ncm_topo *t = topo("single-socket-ht");
        ctr_spec init = {"4000m", "4000m", false}, app = {"2000m", "2000m", false};
        ncm_pod *pod = make_multi(&init, 1, &app, 1);
        ncm_cpu_state *s = make_state(t, "", "[0-7]");
        int r;
        ncm_cpu_policy *p = new_static(t, 0, NULL, NULL, NULL, &r);

        assert_int_equal(r, 0);
        allocate_all(p, s, pod);
        tu_assert_cpuset(ncm_cpu_state_default(s), "2-3,6-7");
        tu_assert_cpuset(ncm_cpu_state_get(s, "podUID", "initContainer-0"), "0-1,4-5");
        tu_assert_cpuset(ncm_cpu_state_get(s, "podUID", "appContainer-0"), "0,4");
        assert_int_equal(ncm_cpu_policy_remove_container(p, s, "podUID", "initContainer-0", NULL),
                         0);
        tu_assert_cpuset(ncm_cpu_state_default(s), "1-3,5-7");
        assert_null(ncm_cpu_state_get(s, "podUID", "initContainer-0"));
        ncm_cpu_policy_free(p);
        ncm_cpu_state_free(s);
        ncm_pod_free(pod);
}

static void test_cpu_policy_static_sidecar_cpus_not_reused(void **state)
{
        const ncm_topo *t = topo("single-socket-ht");
        ctr_spec init = {"4000m", "4000m", true}, app = {"2000m", "2000m", false};
        ncm_pod *pod = make_multi(&init, 1, &app, 1);
        ncm_cpu_state *s = make_state(t, "", "[0-7]");
        int r;
        ncm_cpu_policy *p = new_static(t, 0, NULL, NULL, NULL, &r);

        assert_int_equal(r, 0);
        allocate_all(p, s, pod);
        tu_assert_cpuset(ncm_cpu_state_default(s), "3,7");
        ncm_cpu_policy_free(p);
        ncm_cpu_state_free(s);
        ncm_pod_free(pod);
}

/*
 * cpusToReuse saved and restored: another pod's allocation replaces it (kubelet keeps one pod),
 * a restore brings back exactly the saved pod and set, and the pod's next container reuses them.
 */
static void test_cpu_policy_static_reuse_save_restore(void **state)
{
        const ncm_topo *t = topo("single-socket-ht");
        ctr_spec init = {"4000m", "4000m", false}, app = {"2000m", "2000m", false};
        ctr_spec q_init = {"2000m", "2000m", false}, q_app = {"100m", "100m", false};
        const char *const q_init_names[] = {"q-init"}, *const q_app_names[] = {"q-app"};
        ncm_pod *pod = make_multi(&init, 1, &app, 1);
        ncm_pod *q = make_pod_n("Q", q_init_names, &q_init, 1, q_app_names, &q_app, 1);
        ncm_cpu_state *s = make_state(t, "", "[0-7]");
        ncm_cpu_policy_reuse *empty = NULL, *saved = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r;
        ncm_cpu_policy *p = new_static(t, 0, NULL, NULL, NULL, &r);

        assert_int_equal(r, 0);
        assert_null(ncm_cpu_policy_reuse_get(p, "podUID"));
        assert_int_equal(ncm_cpu_policy_reuse_save(p, &empty, &err), 0);

        assert_int_equal(ncm_cpu_policy_allocate(p, s, pod, &pod->init_containers[0], NULL, &err),
                         0);
        tu_assert_cpuset(ncm_cpu_policy_reuse_get(p, "podUID"), "0-1,4-5");
        assert_int_equal(ncm_cpu_policy_reuse_save(p, &saved, &err), 0);

        assert_int_equal(ncm_cpu_policy_allocate(p, s, q, &q->init_containers[0], NULL, &err), 0);
        assert_null(ncm_cpu_policy_reuse_get(p, "podUID"));
        tu_assert_cpuset(ncm_cpu_policy_reuse_get(p, "Q"), "2,6");

        assert_int_equal(ncm_cpu_policy_reuse_restore(p, saved, &err), 0);
        tu_assert_cpuset(ncm_cpu_policy_reuse_get(p, "podUID"), "0-1,4-5");
        assert_null(ncm_cpu_policy_reuse_get(p, "Q"));
        /* the state is the caller's: Q keeps its CPUs; the app container reuses the init's */
        tu_assert_cpuset(ncm_cpu_state_get(s, "Q", "q-init"), "2,6");
        assert_int_equal(ncm_cpu_policy_allocate(p, s, pod, &pod->containers[0], NULL, &err), 0);
        tu_assert_cpuset(ncm_cpu_state_get(s, "podUID", "appContainer-0"), "0,4");
        tu_assert_cpuset(ncm_cpu_policy_reuse_get(p, "podUID"), "1,5");

        /* restoring "no entry" drops the pod */
        assert_int_equal(ncm_cpu_policy_reuse_restore(p, empty, &err), 0);
        assert_null(ncm_cpu_policy_reuse_get(p, "podUID"));

        ncm_cpu_policy_reuse_free(saved);
        ncm_cpu_policy_reuse_free(empty);
        ncm_cpu_policy_free(p);
        ncm_cpu_state_free(s);
        ncm_pod_free(q);
        ncm_pod_free(pod);
}

/* The none policy keeps no cpusToReuse: saving and restoring do nothing. */
static void test_cpu_policy_none_reuse_save_restore(void **state)
{
        ncm_cpu_policy *p = NULL;
        ncm_autoptr(ncm_cpu_policy_reuse) saved = NULL;

        assert_int_equal(ncm_cpu_none_policy_new(NULL, 0, &p, NULL), 0);
        assert_int_equal(ncm_cpu_policy_reuse_save(p, &saved, NULL), 0);
        assert_non_null(saved);
        assert_int_equal(ncm_cpu_policy_reuse_restore(p, saved, NULL), 0);
        assert_null(ncm_cpu_policy_reuse_get(p, "podUID"));
        ncm_cpu_policy_free(p);
}

static void test_cpu_policy_static_remove(void **state)
{
        static const struct {
                const char *desc, *ctr, *assign, *dflt, *exp;
        } cases[] = {
                        {"DeAllocOneContainer", "fakeContainer1", "fakePod/fakeContainer1=[1-3]",
                         "[4-7]", "[1-7]"},
                        {"DeAllocOneContainer, BeginEmpty", "fakeContainer1",
                         "fakePod/fakeContainer1=[1-3];fakePod/fakeContainer2=[4-7]", "", "[1-3]"},
                        {"DeAllocTwoContainer", "fakeContainer1",
                         "fakePod/fakeContainer1=[1,3,5];fakePod/fakeContainer2=[2,4]", "[6-7]",
                         "[1,3,5-7]"},
                        {"NoDeAlloc", "fakeContainer2", "fakePod/fakeContainer1=[1,3,5]",
                         "[2,4,6-7]", "[2,4,6-7]"},
        };
        const ncm_topo *t = topo("single-socket-ht");

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                int r;
                ncm_cpu_policy *p = new_static(t, 0, NULL, NULL, NULL, &r);
                ncm_cpu_state *s = make_state(t, cases[i].assign, cases[i].dflt);
                assert_int_equal(ncm_cpu_policy_remove_container(p, s, "fakePod", cases[i].ctr,
                                                                 NULL),
                                 0);
                assert_set_expr(t, ncm_cpu_state_default(s), cases[i].exp, cases[i].desc);
                assert_null(ncm_cpu_state_get(s, "fakePod", cases[i].ctr));
                ncm_cpu_state_free(s);
                ncm_cpu_policy_free(p);
        }
}

/* ------------------------------------------------------------------------------------------
 * Pools, SMT error texts, NewManager's policy choice, the none policy (policy_none_test.go)
 */

static void test_cpu_policy_static_pools(void **state)
{
        const ncm_topo *t = topo("dual-socket-ht");
        ncm_cpu_state *s = make_state(t, "p/c=[2,8]", "[0-1,3-7,9-11]");
        ncm_cpuset *out = ncm_cpuset_new();
        int r;
        /* reserving 1 and 6 reaches into cores {1,7} and {0,6} */
        ncm_cpu_policy *p = new_static(t, 2, "[1,6]", NULL, NULL, &r);

        assert_int_equal(r, 0);
        ncm_cpu_policy_allocatable(p, out);
        tu_assert_cpuset(out, "0,2-5,7-11");
        ncm_cpu_policy_available(p, s, out);
        tu_assert_cpuset(out, "0,3-5,7,9-11");
        ncm_cpu_policy_available_physical(p, s, out);
        tu_assert_cpuset(out, "3-5,9-11");
        ncm_cpuset_free(out);
        ncm_cpu_state_free(s);
        ncm_cpu_policy_free(p);
}

static void test_cpu_policy_manager_choice(void **state)
{
        const ncm_topo *t = topo("dual-socket-ht");
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpu_policy *p = NULL;
        ncm_cpu_option bad[] = {{"full-pcpus-only", "maybe"}};
        ncm_cpu_option two[] = {{"z", "1"}, {"full-pcpus-only", "true"}};
        ncm_cpuset *resv = tu_cpuset("0,6,7");
        ncm_cpu_policy_config cfg = {.policy = "static", .gates = NCM_CPU_GATES_DEFAULT};

        assert_int_equal(ncm_cpu_policy_new(t, &cfg, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "[cpumanager] unable to determine reserved CPU resources for "
                                     "static policy");
        cfg.reserved_millicpu_set = true;
        assert_int_equal(ncm_cpu_policy_new(t, &cfg, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "[cpumanager] the static policy requires systemreserved.cpu "
                                     "+ kubereserved.cpu to be greater than zero");
        /* ceil(1500m) = 2 CPUs, chosen as one whole core */
        cfg.reserved_millicpu = 1500;
        assert_int_equal(ncm_cpu_policy_new(t, &cfg, &p, &err), 0);
        tu_assert_cpuset(ncm_cpu_policy_reserved(p), "0,6");
        p = ncm_cpu_policy_free(p);
        /* --reserved-cpus replaces the reservation */
        cfg.reserved_cpus = resv;
        assert_int_equal(ncm_cpu_policy_new(t, &cfg, &p, &err), 0);
        tu_assert_cpuset(ncm_cpu_policy_reserved(p), "0,6-7");
        p = ncm_cpu_policy_free(p);
        cfg.options = bad;
        cfg.noptions = 1;
        assert_int_equal(ncm_cpu_policy_new(t, &cfg, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "new static policy error: bad value for option "
                                     "\"full-pcpus-only\": strconv.ParseBool: parsing \"maybe\": "
                                     "invalid syntax");
        cfg.policy = "dynamic";
        assert_int_equal(ncm_cpu_policy_new(t, &cfg, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "unknown policy: \"dynamic\"");
        cfg.policy = "none";
        cfg.options = two;
        cfg.noptions = 2;
        assert_int_equal(ncm_cpu_policy_new(t, &cfg, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "new none policy error: None policy: received unsupported "
                                     "options=map[full-pcpus-only:true z:1]");
        cfg.policy = NULL;
        cfg.noptions = 0;
        assert_int_equal(ncm_cpu_policy_new(t, &cfg, &p, &err), 0);
        assert_string_equal(ncm_cpu_policy_name(p), "none");
        ncm_cpu_policy_free(p);
        ncm_cpuset_free(resv);
}

/* ------------------------------------------------------------------------------------------
 * TestStaticPolicyAddWithUncoreAlignment, kept as data in tests/data/cpumanager/uncore-cases.txt
 */

static char *trim(char *s)
{
        size_t n;

        while (*s == ' ')
                s++;
        n = strlen(s);
        while (n > 0 && s[n - 1] == ' ')
                s[--n] = '\0';
        return s;
}

/* The data file's short option names, as the option map the policy takes. */
static void expand_options(const char *abbrev, char *buf, size_t size)
{
        static const struct {
                const char *abbrev, *option;
        } names[] = {{"full", "full-pcpus-only=true"},
                     {"uncore", "prefer-align-cpus-by-uncorecache=true"},
                     {"strict", "strict-cpu-reservation=true"}};
        char copy[128], *save = NULL;
        size_t o = 0;

        snprintf(copy, sizeof(copy), "%s", abbrev);
        buf[0] = '\0';
        for (char *a = strtok_r(copy, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
                size_t i;
                for (i = 0; i < NCM_ELEMENTSOF(names); i++)
                        if (strcmp(a, names[i].abbrev) == 0)
                                break;
                if (i == NCM_ELEMENTSOF(names))
                        fail_msg("uncore-cases.txt: unknown option '%s'", a);
                o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? "," : "", names[i].option);
        }
}

/* Run one case (the seven fields of a line); false, after printing why, on a mismatch. */
static bool run_uncore_case(int lineno, char *f[7])
{
        const ncm_topo *t = topo(f[1]);
        ncm_cpuset *reserved = tu_cpuset(f[2]);
        ncm_cpuset *dflt = expr(t, f[4]);
        ncm_cpuset *got = ncm_cpuset_new();
        ncm_cpu_state *s = ncm_cpu_state_new("static");
        ncm_error err = NCM_ERROR_INIT;
        ctr_spec app[4] = {{NULL, NULL, false}};
        char requests[4][16], options[256], resv[256], *save = NULL;
        size_t napp = 0;
        ncm_cpu_policy *p;
        ncm_pod *pod;
        bool ok = true;
        int r;

        assert_non_null(got);
        assert_non_null(s);
        expand_options(f[3], options, sizeof(options));
        snprintf(resv, sizeof(resv), "[%s]", f[2]);
        p = new_static(t, ncm_cpuset_weight(reserved), resv, options, &err, &r);
        if (r < 0)
                fail_msg("line %d: %s: new: %s", lineno, f[0], err.msg);
        /* The kubelet's test keeps the invariant that reserved CPUs are never in the default set.
         */
        ncm_cpuset_andnot(dflt, dflt, reserved);
        assert_int_equal(ncm_cpu_state_set_default(s, dflt, NULL), 0);
        for (char *q = strtok_r(f[5], ",", &save); q; q = strtok_r(NULL, ",", &save)) {
                assert_true(napp < NCM_ELEMENTSOF(app));
                snprintf(requests[napp], sizeof(requests[napp]), "%s", q);
                app[napp] = (ctr_spec){requests[napp], requests[napp], false};
                napp++;
        }
        pod = make_multi(NULL, 0, app, napp);
        for (size_t i = 0; i < napp && ok; i++) {
                if (ncm_cpu_policy_allocate(p, s, pod, &pod->containers[i], NULL, &err) < 0) {
                        print_error("line %d: %s: allocate %s: %s\n", lineno, f[0],
                                    pod->containers[i].name, err.msg);
                        ok = false;
                }
        }
        if (ok && strncmp(f[6], "cpus ", 5) == 0) {
                const ncm_cpuset *c = ncm_cpu_state_get(s, "podUID", pod->containers[0].name);
                if (c)
                        ncm_cpuset_copy(got, c);
        } else if (ok && strncmp(f[6], "uncore ", 7) == 0) {
                ncm_autoptr(ncm_cpuset) all = ncm_cpuset_new();
                assert_non_null(all);
                for (size_t i = 0; i < napp; i++) {
                        const ncm_cpuset *c =
                                        ncm_cpu_state_get(s, "podUID", pod->containers[i].name);
                        if (c)
                                ncm_cpuset_or(all, all, c);
                }
                {
                        /* the uncore ids of these tables are small: list them as a set */
                        int64_t ids[64];
                        size_t m = ncm_topo_ids_of_cpus(t, NCM_TOPO_UNCORE, all, ids);
                        ncm_cpuset_zero(got);
                        for (size_t k = 0; k < m; k++)
                                ncm_cpuset_set(got, (int)ids[k]);
                }
        } else if (ok) {
                fail_msg("line %d: bad EXPECT '%s'", lineno, f[6]);
        }
        if (ok) {
                ncm_cpuset *want = tu_cpuset(strchr(f[6], ' ') + 1);
                if (!ncm_cpuset_equal(got, want)) {
                        char *g = ncm_cpuset_format_list(got);
                        print_error("line %d: %s: expected %s, got %s %s\n", lineno, f[0], f[6],
                                    strncmp(f[6], "cpus", 4) == 0 ? "cpus" : "uncore", g);
                        free(g);
                        ok = false;
                }
                ncm_cpuset_free(want);
        }
        ncm_pod_free(pod);
        ncm_cpu_policy_free(p);
        ncm_cpu_state_free(s);
        ncm_cpuset_free(got);
        ncm_cpuset_free(dflt);
        ncm_cpuset_free(reserved);
        return ok;
}

static void test_cpu_policy_static_uncore_alignment(void **state)
{
        size_t len;
        char *text = tu_read_data("cpumanager/uncore-cases.txt", &len);
        char *save = NULL;
        int lineno = 0, cases = 0, failed = 0;

        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *f[7], *fsave = NULL;
                int n = 0;
                lineno++;
                if (line[0] == '#' || line[0] == '\0')
                        continue;
                for (char *x = strtok_r(line, "|", &fsave); x && n < 7;
                     x = strtok_r(NULL, "|", &fsave))
                        f[n++] = trim(x);
                if (n != 7)
                        fail_msg("uncore-cases.txt:%d: expected 7 fields", lineno);
                cases++;
                if (!run_uncore_case(lineno, f))
                        failed++;
        }
        free(text);
        assert_int_equal(cases, 27);
        if (failed)
                fail_msg("%d of %d uncore cases failed", failed, cases);
}

static void test_cpu_policy_none(void **state)
{
        const ncm_topo *t = topo("single-socket-ht");
        ncm_cpu_policy *p = NULL;
        ncm_cpu_state *s = make_state(t, "", "");
        ncm_pod *pod = make_pod("fakePod", "fakeContainer", "1000m", "1000m");
        ncm_cpuset *out = tu_cpuset("1");
        ncm_hint_list hints = NCM_HINT_LIST_INIT;

        assert_int_equal(ncm_cpu_none_policy_new(NULL, 0, &p, NULL), 0);
        assert_string_equal(ncm_cpu_policy_name(p), "none");
        assert_int_equal(ncm_cpu_policy_start(p, s, NULL), 0);
        assert_int_equal(ncm_cpu_policy_allocate(p, s, pod, &pod->containers[0], NULL, NULL), 0);
        assert_null(ncm_cpu_state_get(s, "fakePod", "fakeContainer"));
        assert_int_equal(ncm_cpu_policy_remove_container(p, s, "fakePod", "fakeContainer", NULL),
                         0);
        assert_int_equal(ncm_cpu_policy_hints(p, s, pod, &pod->containers[0], &hints, NULL), 0);
        assert_true(hints.nil);
        assert_int_equal(ncm_cpu_policy_pod_hints(p, s, pod, &hints, NULL), 0);
        assert_true(hints.nil);
        ncm_cpu_policy_allocatable(p, out);
        assert_true(ncm_cpuset_is_empty(out));
        tu_assert_cpuset(ncm_cpu_state_default(s), "");
        ncm_hint_list_done(&hints);
        ncm_cpuset_free(out);
        ncm_pod_free(pod);
        ncm_cpu_state_free(s);
        ncm_cpu_policy_free(p);
}

/* Options are validated against the machine and the topology manager policy. */
static void test_cpu_policy_static_validates_options(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpu_policy *p = NULL;
        ncm_cpu_option o[] = {{"align-by-socket", "true"}};
        ncm_cpu_policy_config cfg = {.options = o,
                                     .noptions = 1,
                                     .gates = {true, true},
                                     .topology_manager_policy = "single-numa-node"};

        assert_int_equal(ncm_cpu_static_policy_new(topo("dual-socket-multi-numa-ht"), 1, NULL, &cfg,
                                                   &p, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "Topolgy manager single-numa-node policy is incompatible "
                                     "with CPUManager align-by-socket policy option");
        cfg.gates.alpha_options = false;
        assert_int_equal(ncm_cpu_static_policy_new(topo("dual-socket-multi-numa-ht"), 1, NULL, &cfg,
                                                   &p, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "CPU Manager Policy Alpha-level Options not enabled, but "
                                     "option \"align-by-socket\" provided");
        /* an unknown reserved CPU */
        ncm_cpuset *resv = tu_cpuset("3,40,41");
        cfg.noptions = 0;
        assert_int_equal(ncm_cpu_static_policy_new(topo("single-socket-ht"), 3, resv, &cfg, &p,
                                                   &err),
                         -EINVAL);
        assert_string_equal(err.msg, "[cpumanager] unable to build the reserved physical CPUs "
                                     "from the reserved set: unknown CPU ID: 40");
        ncm_cpuset_free(resv);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cpu_policy_static_name),
                        cmocka_unit_test(test_cpu_policy_static_start),
                        cmocka_unit_test(test_cpu_policy_static_add),
                        cmocka_unit_test(test_cpu_policy_static_reuse_init_cpus),
                        cmocka_unit_test(test_cpu_policy_static_sidecar_cpus_not_reused),
                        cmocka_unit_test(test_cpu_policy_static_reuse_save_restore),
                        cmocka_unit_test(test_cpu_policy_none_reuse_save_restore),
                        cmocka_unit_test(test_cpu_policy_static_uncore_alignment),
                        cmocka_unit_test(test_cpu_policy_static_remove),
                        cmocka_unit_test(test_cpu_policy_static_pools),
                        cmocka_unit_test(test_cpu_policy_manager_choice),
                        cmocka_unit_test(test_cpu_policy_none),
                        cmocka_unit_test(test_cpu_policy_static_validates_options),
        };
        return cmocka_run_group_tests(tests, NULL, teardown);
}
