/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scenarios and the simulator through the library: the reader's errors (one line naming the
 * field), files relative to the scenario, the no-files mode, JSON lines that parse and agree
 * with the state, summaries, step limits, the errors that stop a simulation, and goldens.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/node.h>
#include <nodecm/sim.h>
#include "testutil.h"

static int parse(const char *text, unsigned flags, ncm_scenario **ret, ncm_error *err)
{
        return ncm_scenario_parse(text, strlen(text), "s.yaml", NULL, flags, ret, err);
}

static ncm_scenario *parse_ok(const char *text)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_scenario *s = NULL;
        if (parse(text, 0, &s, &err) < 0)
                fail_msg("%s", err.msg);
        return s;
}

#define NODE "node: {topology: {synthetic: \"package:2 numa:1 l3:1 core:4 pu:2\"}, "

typedef struct bad_case {
        const char *text;
        unsigned flags;
        const char *message;
} bad_case;

static const bad_case bad_cases[] = {
                {"", 0, "expected a scenario object, got null"},
                {"steps: []", 0, "node: required"},
                {"node: 3", 0, "node: expected object, got number"},
                {NODE "kubelet: {cpuManagerPolicy: foo}}", 0,
                 "node.kubelet.cpuManagerPolicy: unknown policy: \"foo\""},
                {NODE "kubelet: {}}\nsteps: {}", 0, "steps: expected array, got object"},
                {NODE "kubelet: {}}\nsteps: [3]", 0, "steps[0]: expected object, got number"},
                {NODE "kubelet: {}}\nsteps: [{}]", 0,
                 "steps[0]: a step is an object with one key: admit, remove, removePod, restart "
                 "or resize"},
                {NODE "kubelet: {}}\nsteps: [{admit: null}]", 0,
                 "steps[0].admit: expected a Pod object, got null"},
                {NODE "kubelet: {}}\nsteps: [{admit: {metadata: {uid: a}, spec: {containers: "
                      "[{name: c, resources: {requests: {cpu: \"2\"}, limits: {cpu: \"1\"}}}]}}}]",
                 0, NULL /* the pod module's request-above-limit text */},
                {NODE "kubelet: {}}\nsteps: [{removePod: 3}]", 0,
                 "steps[0].removePod: expected a pod UID (string), got number"},
                {NODE "kubelet: {}}\nsteps: [{removePod: {pod: \"\"}}]", 0,
                 "steps[0].removePod.pod: must not be empty"},
                {NODE "kubelet: {}}\nsteps: [{remove: {pod: a, container: b, x: 1}}]", 0,
                 "steps[0].remove.x: unknown field"},
                {NODE "kubelet: {}}\nsteps: [{restart: {kubelet: 3}}]", 0,
                 "steps[0].restart.kubelet: expected object, got number"},
                {NODE "kubelet: {}}\nsteps: [{restart: []}]", 0,
                 "steps[0].restart: expected object, got array"},
                {NODE "kubelet: {}}\ndescription: 3", 0,
                 "description: expected string, got number"},
                {NODE "state: 3}", 0, "node.state: expected object, got number"},
                {NODE "state: {file: x, defaultCpuSet: \"\"}}", 0,
                 "node.state.defaultCpuSet: unknown field"},
                {NODE "state: {file: x}}", NCM_SCENARIO_NO_FILES,
                 "node.state.file: files are not read in this mode"},
                {"node: {topology: {fsroot: /}}", NCM_SCENARIO_NO_FILES,
                 "node.topology.fsroot: files are not read in this mode"},
                {"node: {}", NCM_SCENARIO_NO_FILES, "node.topology: required"},
                {"node: {topology: {}}", 0,
                 "node.topology: give one of synthetic, fsroot, xml, file or inline cpus/numa"},
                {"node: {topology: {synthetic: 3}}", 0,
                 "node.topology.synthetic: expected string, got number"},
                {"node: {topology: {synthetic: \"pu:2\", rules: kubelet}}", 0,
                 "node.topology.rules: unknown rules \"kubelet\" (cadvisor or nodecm)"},
                {"node: {topology: {synthetic: \"pu:2\", rules: 1}}", 0,
                 "node.topology.rules: expected string, got number"},
                {"node: {topology: {synthetic: \"package:4096 core:4096\"}}", 0,
                 "node.topology.synthetic: more than 8192 CPUs"},
                {"node: {topology: {synthetic: \"core:2 pu:2(indexes=0,1,2,99999999999)\"}}", 0,
                 "node.topology.synthetic: index out of range (CPU ids end at 8191)"},
                {"node: {topology: {synthetic: \"core:2\", cores: 3}}", 0,
                 "node.topology.cores: unknown field"},
                {"node: {topology: {cpus: []}}", 0, NULL /* the topology module's text */},
};

static void test_scenario_errors(void **state)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad_cases); i++) {
                ncm_error err = NCM_ERROR_INIT;
                ncm_scenario *s = NULL;
                int r = parse(bad_cases[i].text, bad_cases[i].flags, &s, &err);
                if (r >= 0)
                        fail_msg("case %zu accepted: %s", i, bad_cases[i].text);
                assert_null(s);
                assert_int_equal(ncm_error_exit_status(err.code), 2);
                assert_null(strchr(err.msg, '\n'));
                if (bad_cases[i].message)
                        assert_string_equal(err.msg, bad_cases[i].message);
        }
}

static void test_scenario_files(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_scenario *s = NULL;
        char *path = tu_data_path("../../examples/restart-checkpoint.yaml");
        ncm_simulate_summary sum;
        ncm_buf out = NCM_BUF_INIT;

        /* node.state.file is relative to the scenario's directory */
        if (ncm_scenario_load_file(path, 0, &s, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(ncm_scenario_num_steps(s), 4);
        assert_int_equal(ncm_topo_num_cpus(ncm_scenario_topo(s)), 16);
        assert_int_equal(ncm_simulate(s, NULL, &out, &sum, &err), 0);
        assert_int_equal(sum.steps, 4);
        assert_int_equal(sum.admitted, 2);
        assert_int_equal(sum.rejected, 0);
        ncm_buf_done(&out);
        ncm_scenario_free(s);
        s = NULL;

        /* ... and refused in the no-files mode */
        assert_int_equal(ncm_scenario_load_file(path, NCM_SCENARIO_NO_FILES, &s, &err), -EINVAL);
        assert_string_equal(err.msg, "node.state.file: files are not read in this mode");
        free(path);

        /* a topology JSON file, relative to BASE_DIR */
        {
                const char *text = "node: {topology: {file: topo/single-socket-ht.json}}";
                char *base = tu_data_path("scenarios");
                assert_int_equal(ncm_scenario_parse(text, strlen(text), "t", base, 0, &s, &err), 0);
                assert_int_equal(ncm_topo_num_cpus(ncm_scenario_topo(s)), 8);
                ncm_scenario_free(s);
                s = NULL;
                assert_true(ncm_scenario_parse(text, strlen(text), "t", "/nonexistent", 0, &s,
                                               &err) < 0);
                assert_non_null(strstr(err.msg, "node.topology.file: "));
                free(base);
        }
}

/* Every JSON line parses; the state line is the node's state; steps are numbered. */
static void test_simulate_json_lines(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_scenario *s = NULL;
        char *path = tu_data_path("../../examples/web-db.yaml");
        ncm_simulate_options o = {.json = true, .explain = true};
        ncm_simulate_summary sum;
        ncm_buf out = NCM_BUF_INIT;
        size_t lines = 0;
        char *save = NULL;

        if (ncm_scenario_load_file(path, 0, &s, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(ncm_simulate(s, &o, &out, &sum, &err), 0);
        assert_int_equal(sum.steps, ncm_scenario_num_steps(s));
        assert_int_equal(sum.rejected, 1);
        for (char *line = strtok_r(out.data, "\n", &save); line;
             line = strtok_r(NULL, "\n", &save)) {
                json_object *o1 = json_tokener_parse(line), *v = NULL;
                if (!o1)
                        fail_msg("not JSON: %s", line);
                if (json_object_object_get_ex(o1, "step", &v))
                        assert_int_equal(json_object_get_int(v), (int)lines);
                else
                        assert_int_equal(lines, ncm_scenario_num_steps(s)); /* the state line */
                json_object_put(o1);
                lines++;
        }
        assert_int_equal(lines, ncm_scenario_num_steps(s) + 1);
        ncm_buf_done(&out);

        /* max_steps */
        o.max_steps = 2;
        o.explain = false;
        assert_int_equal(ncm_simulate(s, &o, &out, &sum, &err), 0);
        assert_int_equal(sum.steps, 2);
        tu_assert_golden("scenarios/golden/web-db.two-steps", out.data);
        ncm_buf_done(&out);
        ncm_scenario_free(s);
        free(path);
}

static void test_simulate_stops(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        ncm_scenario *s;

        /* a starting state the kubelet refuses: exit status 1, named */
        s = parse_ok(NODE "kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: \"0\"},"
                          " state: {defaultCpuSet: \"1-15\", entries: {p: {c: \"0\"}}}}");
        assert_int_equal(ncm_simulate(s, NULL, &out, NULL, &err), -NCM_E_INVALID_STATE);
        assert_string_equal(err.msg, "node.state: start cpu manager error: not all reserved cpus: "
                                     "\"0\" are present in defaultCpuSet: \"1-15\"");
        ncm_buf_done(&out);
        ncm_scenario_free(s);

        /* a restart whose new configuration refuses the checkpoint */
        s = parse_ok(NODE "kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: \"0\"}}\n"
                          "steps: [{admit: {metadata: {uid: a}, spec: {containers: [{name: c, "
                          "resources: {limits: {cpu: \"2\", memory: 1G}}}]}}},"
                          " {restart: {kubelet: {cpuManagerPolicy: none}}}]");
        assert_int_equal(ncm_simulate(s, NULL, &out, NULL, &err), -NCM_E_INVALID_STATE);
        assert_string_equal(err.msg, "steps[1].restart: could not restore state from checkpoint: "
                                     "configured policy \"none\" differs from state checkpoint "
                                     "policy \"static\", please drain this node and delete the "
                                     "CPU manager checkpoint file \"cpu_manager_state\" before "
                                     "restarting Kubelet");
        ncm_buf_done(&out);
        ncm_scenario_free(s);

        /* a configuration the machine refuses, found when the node starts */
        s = parse_ok(NODE "kubelet: {cpuManagerPolicy: static, reservedSystemCPUs: \"99\"}}");
        assert_int_equal(ncm_simulate(s, NULL, &out, NULL, &err), -EINVAL);
        assert_string_equal(err.msg, "node.kubelet.reservedSystemCPUs: reserved-cpus: 99 is not a "
                                     "subset of online-cpus: 0-15");
        ncm_buf_done(&out);
        ncm_scenario_free(s);
}

/* A YAML state with unquoted numbers reads as the strings the kubelet's file would hold. */
static void test_simulate_state_numbers(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_simulate_options o = {.json = true};
        ncm_buf out = NCM_BUF_INIT;
        ncm_scenario *s;

        s = parse_ok("node: {topology: {synthetic: \"core:2 pu:1\"}, kubelet: {cpuManagerPolicy: "
                     "static,"
                     " reservedSystemCPUs: \"0\"}, state: {defaultCpuSet: 0, entries: {p: {c: "
                     "1}}}}");
        assert_int_equal(ncm_simulate(s, &o, &out, NULL, &err), 0);
        assert_string_equal(out.data,
                            "{\"op\": \"state\", \"defaultCpuSet\": \"0\", \"entries\": {\"p\": "
                            "{\"c\": \"1\"}}}\n");
        ncm_buf_done(&out);
        ncm_scenario_free(s);
}

/* Run TEXT (YAML or JSON) with OPTIONS into a fresh string: the output, or "error: MESSAGE". */
static char *run_text(const char *text, size_t len, const ncm_simulate_options *o)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_scenario *s = NULL;
        ncm_buf out = NCM_BUF_INIT;
        char *r;

        if (ncm_scenario_parse(text, len, "s.yaml", NULL, 0, &s, &err) < 0 ||
            ncm_simulate(s, o, &out, NULL, &err) < 0) {
                ncm_buf_done(&out);
                ncm_scenario_free(s);
                assert_true(asprintf(&r, "error: %s", err.msg) > 0);
                return r;
        }
        ncm_scenario_free(s);
        r = strdup(out.data ? out.data : "");
        ncm_buf_done(&out);
        return r;
}

#define STEPS_NODE                                                                                 \
        "node: {topology: {synthetic: \"package:2 numa:1 l3:1 core:4 pu:2\"}, kubelet: "           \
        "{cpuManagerPolicy: static, reservedSystemCPUs: \"0\"}}\n"
#define POD(uid, cpu)                                                                              \
        "{metadata: {uid: " uid                                                                    \
        "}, spec: {containers: [{name: c, resources: {limits: {cpu: \"" cpu "\", memory: 1G}}}]}}"

/* Admit, remove, admit again through an alias to an earlier step, restart, remove. */
#define SIX_STEPS                                                                                  \
        "  - admit: &a " POD("a", "2") "\n  - admit: " POD(                                        \
                        "b", "3") "\n  - removePod: a\n  - admit: *a\n  - restart: {}\n"           \
                                  "  - remove: {pod: b, container: c}\n"

/*
 * YAML steps stream (read one at a time, twice: checked, then run); what the reader keeps
 * instead (an anchored or repeated steps key, JSON) must give the same output, and every error
 * must be the one the whole-tree reader gave, in the same order.
 */
static void test_scenario_streams(void **state)
{
        static const char streamed[] = STEPS_NODE "steps:\n" SIX_STEPS;
        /* the same steps, kept whole: anchored, so an alias could take them all */
        static const char anchored[] = STEPS_NODE "steps: &all\n" SIX_STEPS;
        /* a repeated key: the last one counts, as in the tree */
        static const char repeated[] = STEPS_NODE "steps: [{removePod: zz}]\nsteps:\n" SIX_STEPS;
        static const struct {
                const char *text, *message;
        } errors[] = {
                        /* the node is checked before any step, wherever it is */
                        {"steps: [{admit: null}]\nnode: 3",
                         "error: node: expected object, got number"},
                        /* a syntax error anywhere comes before any step's */
                        {STEPS_NODE "steps: [{admit: null}, {removePod: a}]\nx: [",
                         "error: s.yaml:4:1: invalid YAML: did not find expected node content "
                         "while "
                         "parsing a flow node"},
                        /* an unknown top-level key after the steps, before them */
                        {STEPS_NODE "steps: [{admit: null}]\nextra: 1",
                         "error: extra: unknown field"},
                        {STEPS_NODE "steps: [{removePod: a}, {removePod: a}, {admit: 7}]",
                         "error: steps[2].admit: expected object, got number"},
                        /* an alias into a later step's anchor is unknown, as in the tree */
                        {STEPS_NODE "steps: [{removePod: *x}, {removePod: &x a}]",
                         "error: s.yaml:2:21: invalid YAML: unknown anchor 'x' referenced"},
        };
        ncm_simulate_options o = {.json = true, .explain = true};
        char *want = run_text(streamed, strlen(streamed), &o);
        char *got;

        (void)state;
        assert_null(strstr(want, "error: "));
        got = run_text(anchored, strlen(anchored), &o);
        assert_string_equal(got, want);
        free(got);
        got = run_text(repeated, strlen(repeated), &o);
        assert_string_equal(got, want);
        free(got);
        /* the first three steps, as in the whole run */
        o.max_steps = 3;
        got = run_text(streamed, strlen(streamed), &o);
        {
                const char *end = got;
                for (int i = 0; i < 3; i++)
                        end = strchr(end, '\n') + 1;
                assert_int_equal(strncmp(got, want, (size_t)(end - got)), 0);
                assert_int_equal(strncmp(end, "{\"op\": \"state\"", 14), 0);
        }
        free(got);
        free(want);
        for (size_t i = 0; i < NCM_ELEMENTSOF(errors); i++) {
                got = run_text(errors[i].text, strlen(errors[i].text), NULL);
                assert_string_equal(got, errors[i].message);
                free(got);
        }
}

/* Cut short at every byte: one error or a run, never a crash or a leak (under ASan). */
static void test_scenario_stream_truncated(void **state)
{
        static const char text[] = STEPS_NODE "steps:\n" SIX_STEPS
                                              "  - restart: {kubelet: {cpuManagerPolicy: none}}\n";

        (void)state;
        for (size_t n = 0; n <= sizeof(text) - 1; n++) {
                ncm_error err = NCM_ERROR_INIT;
                ncm_scenario *s = NULL;
                ncm_buf out = NCM_BUF_INIT;
                int r = ncm_scenario_parse(text, n, "s.yaml", NULL, 0, &s, &err);
                if (r < 0) {
                        assert_null(s);
                        assert_non_null(err.msg);
                        assert_null(strchr(err.msg, '\n'));
                        continue;
                }
                (void)ncm_simulate(s, NULL, &out, NULL, &err);
                ncm_buf_done(&out);
                ncm_scenario_free(s);
        }
}

/* Many steps: counted, checked and run one at a time; an error deep inside is named by index. */
static void test_scenario_stream_huge(void **state)
{
        enum { N = 20000 };
        ncm_buf text = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_simulate_options o = {0};
        ncm_simulate_summary sum;
        ncm_scenario *s = NULL;
        ncm_buf out = NCM_BUF_INIT;

        (void)state;
        ncm_buf_puts(&text, STEPS_NODE "steps:\n");
        for (size_t i = 0; i < N; i++)
                ncm_buf_printf(&text,
                               i % 2 ? "  - removePod: p%zu\n"
                                     : "  - admit: {metadata: {uid: p%zu}, spec: {containers: "
                                       "[{name: c, resources: {limits: {cpu: \"1\", memory: "
                                       "1G}}}]}}\n",
                               i / 2);
        assert_false(ncm_buf_failed(&text));
        assert_int_equal(ncm_scenario_parse(text.data, text.len, "s.yaml", NULL, 0, &s, &err), 0);
        assert_int_equal(ncm_scenario_num_steps(s), N);
        assert_int_equal(ncm_simulate(s, &o, &out, &sum, &err), 0);
        assert_int_equal(sum.steps, N);
        assert_int_equal(sum.admitted, N / 2);
        ncm_buf_done(&out);
        ncm_scenario_free(s);

        /* the last step broken */
        ncm_buf_puts(&text, "  - admit: {metadata: {uid: x}, spec: {containers: [{name: c, "
                            "resources: {limits: {cpu: \"2x\"}}}]}}\n");
        assert_int_equal(ncm_scenario_parse(text.data, text.len, "s.yaml", NULL, 0, &s, &err),
                         -EINVAL);
        assert_non_null(strstr(err.msg, "steps[20000].admit.spec.containers[0].resources.limits"
                                        ".cpu: "));
        ncm_buf_done(&text);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_scenario_errors),
                        cmocka_unit_test(test_scenario_files),
                        cmocka_unit_test(test_simulate_json_lines),
                        cmocka_unit_test(test_simulate_stops),
                        cmocka_unit_test(test_simulate_state_numbers),
                        cmocka_unit_test(test_scenario_streams),
                        cmocka_unit_test(test_scenario_stream_truncated),
                        cmocka_unit_test(test_scenario_stream_huge),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
