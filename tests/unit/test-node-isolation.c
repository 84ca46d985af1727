/* SPDX-License-Identifier: Apache-2.0 */
/*
 * isolatedCPUs on the node: the issue's machine (CPUs 2-7 isolated; exclusive-only keeps the
 * shared pool on 0-1, a Guaranteed pod that asks gets isolated CPUs, a Burstable pod never
 * does), the configuration's field and the refusals, the annotations' effect on the hints, the
 * status, the kubelet's behaviour under ignore, and a property test: under exclude and
 * exclusive-only, on random machines with random isolated CPUs, configurations and pods, no
 * container without exclusive CPUs is ever on an isolated or an exclusive CPU, exclude never
 * hands an isolated CPU out, and the shared pool is never empty.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/node.h>
#include <nodecm/topology.h>
#include "testutil.h"

/* A machine of N CPUs, one core each, one NUMA node, ISOLATED (kubelet list) isolated. */
static ncm_topo *flat(int n, const char *isolated)
{
        ncm_cpu_info *c = calloc((size_t)n, sizeof(*c));
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;

        for (int i = 0; i < n; i++)
                c[i] = (ncm_cpu_info){i, i, 0, 0, 0};
        assert_int_equal(ncm_topo_new(c, (size_t)n, NULL, 0, NULL, &t, &err), 0);
        free(c);
        if (isolated) {
                ncm_cpuset *s = tu_cpuset(isolated);
                assert_int_equal(ncm_topo_set_isolation(t, NCM_ISO_GIVEN_ISOLATED, s, &err), 0);
                ncm_cpuset_free(s);
        }
        return t;
}

static ncm_node_config *config(const char *text)
{
        ncm_node_config *c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_node_config_parse(text, strlen(text), "kubelet", "", &c, &err) < 0)
                fail_msg("config: %s", err.msg);
        return c;
}

static ncm_pod *pod(const char *uid, const char *annotation, const char *cpu, bool guaranteed)
{
        char text[1024];
        ncm_pod *p = NULL;
        ncm_error err = NCM_ERROR_INIT;

        snprintf(text, sizeof(text),
                 "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"%s%s%s}, \"spec\": "
                 "{\"containers\": [{\"name\": \"app\", \"resources\": {\"%s\": {\"cpu\": "
                 "\"%s\", \"memory\": \"1Gi\"}}}]}}",
                 uid, uid, annotation ? ", \"annotations\": {\"nodecm.io/isolated-cpus\": \"" : "",
                 annotation ? annotation : "", annotation ? "\"}" : "",
                 guaranteed ? "limits" : "requests", cpu);
        if (ncm_pod_parse(text, strlen(text), NULL, &p, &err) < 0)
                fail_msg("pod: %s", err.msg);
        return p;
}

/* Admit; returns the admission (caller frees), failing the test on errors. */
static ncm_node_admission *admit(ncm_node *n, const ncm_pod *p)
{
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_node_admit(n, p, 0, &a, &err) < 0)
                fail_msg("admit %s: %s", p->uid, err.msg);
        return a;
}

static void test_node_isolation_issue_machine(void **state)
{
        ncm_topo *t = flat(8, "2-7");
        ncm_node_config *cfg = config("{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                      "\"0\", \"isolatedCPUs\": \"exclusive-only\"}");
        ncm_node *n = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpuset *pool = ncm_cpuset_new();
        ncm_pod *burst = pod("burst", NULL, "500m", false);
        ncm_pod *rt = pod("rt", "prefer", "2", true);
        ncm_pod *rt2 = pod("rt2", "require", "2", true);
        ncm_pod *web = pod("web", NULL, "1", true);
        ncm_pod *bad = pod("bad", "require", "500m", false);
        ncm_node_admission *a;
        ncm_buf b = NCM_BUF_INIT;

        (void)state;
        assert_int_equal(ncm_node_new(t, cfg, NULL, &n, &err), 0);
        /* the shared pool stays on 0-1 */
        ncm_node_shared_pool(n, pool);
        tu_assert_cpuset(pool, "0-1");
        /* a Burstable pod never gets isolated CPUs */
        a = admit(n, burst);
        assert_true(a->admitted);
        assert_false(a->containers[0].exclusive);
        tu_assert_cpuset(a->containers[0].cpus, "0-1");
        ncm_node_admission_free(a);
        /* a Guaranteed pod that asks gets isolated CPUs */
        a = admit(n, rt);
        assert_true(a->admitted);
        tu_assert_cpuset(a->containers[0].cpus, "2-3");
        ncm_node_admission_free(a);
        a = admit(n, rt2);
        assert_true(a->admitted);
        tu_assert_cpuset(a->containers[0].cpus, "4-5");
        ncm_node_admission_free(a);
        /* one that does not ask gets a non-isolated CPU while there is one */
        a = admit(n, web);
        assert_true(a->admitted);
        tu_assert_cpuset(a->containers[0].cpus, "1");
        ncm_node_admission_free(a);
        ncm_node_shared_pool(n, pool);
        tu_assert_cpuset(pool, "0");
        /* "require" on a container without exclusive CPUs: refused, saying why */
        a = admit(n, bad);
        assert_false(a->admitted);
        assert_string_equal(a->reason, "UnexpectedAdmissionError");
        assert_non_null(strstr(a->message, "nodecm.io/isolated-cpus: require: no container of "
                                           "the pod gets exclusive CPUs (a Burstable pod)"));
        ncm_node_admission_free(a);
        /* the Burstable pod's containers follow the pool; the status says it all */
        ncm_node_format_status_json(n, &b);
        assert_non_null(strstr(b.data, "\"sharedPool\": \"0\", \"isolatedCPUs\": "
                                       "\"exclusive-only\", \"isolated\": \"2-7\""));
        assert_non_null(strstr(b.data, "{\"cpu\": 6, \"socket\": 0, \"numa\": 0, \"core\": 6, "
                                       "\"isolated\": true, \"use\": \"isolated\"}"));
        ncm_buf_done(&b);
        ncm_node_format_cpu_map(n, &b);
        assert_non_null(strstr(b.data, "cpu 7 isolated"));
        assert_non_null(strstr(b.data, "shared pool: 0 (reserved CPUs included)\nisolated CPUs: "
                                       "2-7 (isolatedCPUs exclusive-only: for exclusive "
                                       "containers only)\n"));
        ncm_buf_done(&b);
        ncm_pod_free(burst);
        ncm_pod_free(rt);
        ncm_pod_free(rt2);
        ncm_pod_free(web);
        ncm_pod_free(bad);
        ncm_cpuset_free(pool);
        ncm_node_free(n);
        ncm_node_config_free(cfg);
        ncm_topo_free(t);
}

static void test_node_isolation_require_not_enough(void **state)
{
        ncm_topo *t = flat(8, "6-7");
        ncm_node_config *cfg = config("{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                      "\"0\", \"isolatedCPUs\": \"exclusive-only\"}");
        ncm_node *n = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p = pod("rt", "require", "3", true);
        ncm_node_admission *a;

        (void)state;
        assert_int_equal(ncm_node_new(t, cfg, NULL, &n, &err), 0);
        a = admit(n, p);
        assert_false(a->admitted);
        assert_string_equal(a->message,
                            "Allocate failed due to nodecm.io/isolated-cpus: require: not enough "
                            "free isolated CPUs: requested=3, available=2 (isolated CPUs 6-7), "
                            "which is unexpected");
        ncm_node_admission_free(a);
        ncm_pod_free(p);
        /* "prefer" with too few isolated CPUs takes others */
        p = pod("rt", "prefer", "3", true);
        a = admit(n, p);
        assert_true(a->admitted);
        tu_assert_cpuset(a->containers[0].cpus, "1-3");
        ncm_node_admission_free(a);
        ncm_pod_free(p);
        ncm_node_free(n);
        ncm_node_config_free(cfg);
        ncm_topo_free(t);
}

static void test_node_isolation_exclude(void **state)
{
        ncm_topo *t = flat(8, "2-7");
        ncm_node_config *cfg = config("{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                      "\"0\", \"isolatedCPUs\": \"exclude\"}");
        ncm_node *n = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p = pod("g", NULL, "2", true);
        ncm_pod *one = pod("one", "prefer", "1", true);
        ncm_pod *req = pod("req", "require", "1", true);
        ncm_cpuset *s = ncm_cpuset_new();
        ncm_node_admission *a;

        (void)state;
        assert_int_equal(ncm_node_new(t, cfg, NULL, &n, &err), 0);
        /* isolated CPUs are not allocatable, not available */
        ncm_cpu_policy_allocatable(ncm_node_cpu_policy(n), s);
        tu_assert_cpuset(s, "1");
        ncm_cpu_policy_available(ncm_node_cpu_policy(n), ncm_node_cpu_state(n), s);
        tu_assert_cpuset(s, "1");
        a = admit(n, p);
        assert_false(a->admitted);
        assert_string_equal(a->message, "Allocate failed due to not enough cpus available to "
                                        "satisfy request: requested=2, available=1, which is "
                                        "unexpected");
        ncm_node_admission_free(a);
        a = admit(n, req);
        assert_false(a->admitted);
        assert_non_null(strstr(a->message, "isolatedCPUs is exclude"));
        ncm_node_admission_free(a);
        a = admit(n, one);
        assert_true(a->admitted);
        tu_assert_cpuset(a->containers[0].cpus, "1");
        ncm_node_admission_free(a);
        ncm_node_shared_pool(n, s);
        tu_assert_cpuset(s, "0");
        ncm_pod_free(p);
        ncm_pod_free(one);
        ncm_pod_free(req);
        ncm_cpuset_free(s);
        ncm_node_free(n);
        ncm_node_config_free(cfg);
        ncm_topo_free(t);
}

/* ignore is the kubelet: isolated CPUs are in the pool, and taken like any other. */
static void test_node_isolation_ignore_is_kubelet(void **state)
{
        ncm_topo *t = flat(8, "2-7");
        ncm_node_config *cfg = config("{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                      "\"0\"}");
        ncm_node *n = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpuset *s = ncm_cpuset_new();
        ncm_pod *p = pod("g", "require", "3", true);
        ncm_node_admission *a;
        ncm_buf b = NCM_BUF_INIT;

        (void)state;
        assert_int_equal(ncm_node_config_isolated_cpus(cfg), NCM_CPU_ISOLATION_IGNORE);
        assert_int_equal(ncm_node_new(t, cfg, NULL, &n, &err), 0);
        ncm_node_shared_pool(n, s);
        tu_assert_cpuset(s, "0-7");
        a = admit(n, p);
        assert_true(a->admitted);
        tu_assert_cpuset(a->containers[0].cpus, "1-3");
        ncm_node_admission_free(a);
        ncm_node_format_status_json(n, &b);
        assert_null(strstr(b.data, "isolatedCPUs"));
        assert_non_null(strstr(b.data, "\"core\": 7, \"isolated\": true, \"use\": \"shared\"}"));
        ncm_buf_done(&b);
        ncm_node_format_cpu_map(n, &b);
        assert_non_null(strstr(b.data, "isolated CPUs: 2-7 (isolatedCPUs ignore: used like any "
                                       "other, as the kubelet does)\n"));
        ncm_buf_done(&b);
        ncm_pod_free(p);
        ncm_cpuset_free(s);
        ncm_node_free(n);
        ncm_node_config_free(cfg);
        ncm_topo_free(t);
}

static void test_node_isolation_refusals(void **state)
{
        static const struct {
                const char *isolated, *config, *msg;
        } cases[] = {
                        {"0-7", "{\"isolatedCPUs\": \"exclude\"}",
                         "isolatedCPUs: exclude: every CPU of the machine (0-7) is isolated: the "
                         "shared pool would be empty"},
                        {"0-3",
                         "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0-1\", "
                         "\"isolatedCPUs\": \"exclusive-only\"}",
                         "isolatedCPUs: exclusive-only: the reserved CPUs (0-1) are all isolated "
                         "(0-3): the shared pool would be left on isolated CPUs only, and empty "
                         "once exclusive CPUs are handed out; reserve at least one CPU that is "
                         "not isolated"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_topo *t = flat(8, cases[i].isolated);
                ncm_node_config *cfg = config(cases[i].config);
                ncm_node *n = NULL;
                ncm_error err = NCM_ERROR_INIT;
                assert_int_equal(ncm_node_new(t, cfg, NULL, &n, &err), -EINVAL);
                assert_null(n);
                assert_string_equal(err.msg, cases[i].msg);
                ncm_node_config_free(cfg);
                ncm_topo_free(t);
        }
}

static void test_node_isolation_config_fields(void **state)
{
        static const struct {
                const char *text, *msg;
        } bad[] = {
                        {"{\"isolatedCPUs\": \"exclusive\"}",
                         "isolatedCPUs: unknown value \"exclusive\" (ignore, exclude or "
                         "exclusive-only)"},
                        {"{\"isolatedCPUs\": true}", "isolatedCPUs: expected string, got boolean"},
                        {"{\"irqBalanceConfigFile\": \"etc/x\"}",
                         "irqBalanceConfigFile: \"etc/x\": expected an absolute path, \"none\" "
                         "or \"\""},
                        {"{\"isolatedCPU\": \"exclude\"}",
                         "strict decoding error: unknown field \"isolatedCPU\" (did you mean "
                         "\"isolatedCPUs\"?) (the kubelet would decode it leniently and start; "
                         "nodecm does with --config-decoding lenient)"},
        };
        ncm_node_config *c;
        (void)state;
        c = config("{\"isolatedCPUs\": \"exclude\", \"irqBalanceConfigFile\": "
                   "\"/etc/default/irqbalance\"}");
        assert_int_equal(ncm_node_config_isolated_cpus(c), NCM_CPU_ISOLATION_EXCLUDE);
        assert_string_equal(ncm_node_config_irqbalance_config(c), "/etc/default/irqbalance");
        ncm_node_config_free(c);
        c = config("{}");
        assert_string_equal(ncm_node_config_irqbalance_config(c), "");
        ncm_node_config_free(c);
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++) {
                ncm_error err = NCM_ERROR_INIT;
                c = NULL;
                assert_int_equal(ncm_node_config_parse(bad[i].text, strlen(bad[i].text), "k", "",
                                                       &c, &err),
                                 -EINVAL);
                assert_string_equal(err.msg, bad[i].msg);
        }
        /* a change of mode is a restart: the pools are built from it */
        {
                ncm_node_config *a = config("{}"), *b = config("{\"isolatedCPUs\": \"exclude\"}");
                const char *field = NULL;
                assert_int_equal(ncm_node_config_compare(a, b, &field), NCM_NODE_CONFIG_RESTART);
                assert_string_equal(field, "isolatedCPUs");
                ncm_node_config_free(a);
                ncm_node_config_free(b);
        }
}

static void test_node_isolation_annotation_errors(void **state)
{
        static const char text[] = "{\"metadata\": {\"uid\": \"u\", \"annotations\": "
                                   "{\"nodecm.io/isolated-cpus\": \"always\"}}, \"spec\": "
                                   "{\"containers\": [{\"name\": \"a\"}]}}";
        static const char quota[] = "{\"metadata\": {\"uid\": \"u\", \"annotations\": "
                                    "{\"cpu-quota.crio.io\": \"off\", \"other\": 3}}, \"spec\": "
                                    "{\"containers\": [{\"name\": \"a\"}]}}";
        ncm_pod *p = NULL;
        ncm_error err = NCM_ERROR_INIT;

        (void)state;
        assert_int_equal(ncm_pod_parse(text, strlen(text), "p.yaml", &p, &err), -EINVAL);
        assert_string_equal(err.msg, "p.yaml: metadata.annotations[\"nodecm.io/isolated-cpus\"]: "
                                     "\"always\": expected \"prefer\" or \"require\"");
        assert_int_equal(ncm_pod_parse(quota, strlen(quota), "p.yaml", &p, &err), -EINVAL);
        assert_string_equal(err.msg, "p.yaml: metadata.annotations[\"cpu-quota.crio.io\"]: "
                                     "\"off\": expected \"disable\" or \"enable\"");
}

/* ------------------------------------------------------------------------------------------
 * The property
 */

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return n ? (uint32_t)(rng % n) : 0;
}

/* The invariants, after every step. */
static void check(const ncm_node *n, ncm_cpu_isolation mode, const ncm_cpuset *iso,
                  unsigned long seed, int step)
{
        ncm_cpuset *pool = ncm_cpuset_new(), *excl = ncm_cpuset_new(), *c = ncm_cpuset_new();
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        const char *pu, *cn;
        const ncm_cpuset *cs;

        ncm_node_shared_pool(n, pool);
        while (ncm_cpu_state_next(ncm_node_cpu_state(n), &it, &pu, &cn, &cs)) {
                if (mode == NCM_CPU_ISOLATION_EXCLUDE && ncm_cpuset_intersects(cs, iso))
                        fail_msg("seed %lu step %d: exclude handed out an isolated CPU", seed,
                                 step);
                ncm_cpuset_or(excl, excl, cs);
        }
        if (ncm_cpuset_is_empty(pool))
                fail_msg("seed %lu step %d: empty shared pool", seed, step);
        if (ncm_cpuset_intersects(pool, iso) || ncm_cpuset_intersects(pool, excl))
                fail_msg("seed %lu step %d: shared pool on an isolated or exclusive CPU", seed,
                         step);
        for (size_t i = 0; i < ncm_node_num_pods(n); i++) {
                const ncm_pod *p = ncm_node_pod_at(n, i);
                for (size_t k = 0; k < p->n_containers; k++) {
                        if (ncm_node_container_cpus(n, p->uid, p->containers[k].name, c) > 0)
                                continue;
                        if (ncm_cpuset_intersects(c, iso) || ncm_cpuset_intersects(c, excl))
                                fail_msg("seed %lu step %d: %s/%s (not exclusive) on an isolated "
                                         "or exclusive CPU",
                                         seed, step, p->uid, p->containers[k].name);
                }
        }
        ncm_cpuset_free(pool);
        ncm_cpuset_free(excl);
        ncm_cpuset_free(c);
}

static void test_node_isolation_property(void **state)
{
        static const char *const synth[] = {"core:4 pu:2", "package:2 core:4 pu:2",
                                            "package:2 numa:2 core:3 pu:2", "core:8 pu:1",
                                            "package:2 numa:2 core:2 pu:4"};
        static const char *const tm[] = {"none", "best-effort", "restricted", "single-numa-node"};
        static const char *const opts[] = {"",
                                           ", \"cpuManagerPolicyOptions\": "
                                           "{\"full-pcpus-only\": \"true\"}",
                                           ", \"cpuManagerPolicyOptions\": "
                                           "{\"distribute-cpus-across-numa\": \"true\"}"};
        static const char *const ann[] = {NULL, "prefer", "require"};
        int checked = 0, refused = 0;

        (void)state;
        for (unsigned long seed = 1; seed <= 400; seed++) {
                ncm_topo *t = NULL;
                ncm_error err = NCM_ERROR_INIT;
                ncm_cpuset *iso = ncm_cpuset_new();
                ncm_node_config *cfg;
                ncm_node *n = NULL;
                ncm_cpu_isolation mode;
                bool stat = rnd(4) != 0;
                char text[1024], *isol;
                int ncpu, r;

                rng = seed * 0x9e3779b97f4a7c15ull;
                assert_int_equal(ncm_topo_from_synthetic(synth[rnd(NCM_ELEMENTSOF(synth))], &t,
                                                         &err),
                                 0);
                ncpu = ncm_topo_num_cpus(t);
                for (int cpu = 0; cpu < ncpu; cpu++)
                        if (rnd(3) == 0)
                                ncm_cpuset_set(iso, cpu);
                if (rnd(8) == 0) /* now and then, a machine with every CPU isolated */
                        ncm_cpuset_set_range(iso, 0, ncpu - 1);
                assert_int_equal(ncm_topo_set_isolation(t, NCM_ISO_PARTITIONS, iso, &err), 0);
                mode = rnd(2) ? NCM_CPU_ISOLATION_EXCLUDE : NCM_CPU_ISOLATION_EXCLUSIVE_ONLY;
                snprintf(text, sizeof(text),
                         "{\"cpuManagerPolicy\": \"%s\", \"reservedSystemCPUs\": \"%d\", "
                         "\"topologyManagerPolicy\": \"%s\", \"isolatedCPUs\": \"%s\"%s}",
                         stat ? "static" : "none", (int)rnd((uint32_t)ncpu),
                         tm[rnd(NCM_ELEMENTSOF(tm))], ncm_cpu_isolation_name(mode),
                         stat ? opts[rnd(NCM_ELEMENTSOF(opts))] : "");
                if (!stat) { /* the none policy takes no reserved CPUs: cut them out */
                        char *from = strstr(text, ", \"reservedSystemCPUs\"");
                        const char *to = strstr(text, ", \"topologyManagerPolicy\"");
                        memmove(from, to, strlen(to) + 1);
                }
                cfg = config(text);
                r = ncm_node_new(t, cfg, NULL, &n, &err);
                if (r < 0) {
                        /* refused only as documented: the pool would be empty or isolated */
                        if (r != -EINVAL || !strstr(err.msg, "isolatedCPUs: "))
                                fail_msg("seed %lu: %s: %s", seed, text, err.msg);
                        refused++;
                        goto next;
                }
                isol = ncm_cpuset_format_list(iso);
                check(n, mode, iso, seed, -1);
                for (int step = 0; step < 24; step++) {
                        char uid[32];
                        int kind = (int)rnd(5);
                        snprintf(uid, sizeof(uid), "p%d", (int)rnd(12));
                        if (kind == 0 && ncm_node_pod(n, uid)) {
                                assert_true(ncm_node_remove_pod(n, uid, NULL, &err) >= 0);
                        } else if (!ncm_node_pod(n, uid)) {
                                char cpu[16];
                                bool g = kind != 1;
                                ncm_pod *p;
                                ncm_node_admission *a = NULL;
                                if (kind == 4)
                                        snprintf(cpu, sizeof(cpu), "%dm", 100 + (int)rnd(900));
                                else
                                        snprintf(cpu, sizeof(cpu), "%d", 1 + (int)rnd(4));
                                p = pod(uid, ann[rnd(3)], cpu, g);
                                if (ncm_node_admit(n, p, 0, &a, &err) < 0)
                                        fail_msg("seed %lu: admit: %s", seed, err.msg);
                                ncm_node_admission_free(a);
                                ncm_pod_free(p);
                        }
                        check(n, mode, iso, seed, step);
                        checked++;
                }
                free(isol);
                ncm_node_free(n);
        next:
                ncm_node_config_free(cfg);
                ncm_cpuset_free(iso);
                ncm_topo_free(t);
        }
        /* both sides were exercised */
        assert_true(checked > 5000);
        assert_true(refused > 10);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_node_isolation_issue_machine),
                        cmocka_unit_test(test_node_isolation_require_not_enough),
                        cmocka_unit_test(test_node_isolation_exclude),
                        cmocka_unit_test(test_node_isolation_ignore_is_kubelet),
                        cmocka_unit_test(test_node_isolation_refusals),
                        cmocka_unit_test(test_node_isolation_config_fields),
                        cmocka_unit_test(test_node_isolation_annotation_errors),
                        cmocka_unit_test(test_node_isolation_property),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
