/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Static policy options against kubelet's policy_options_test.go (availability per gate, with
 * the newest maturity levels; machine validation; compatibility) and the option parsing cases
 * of policy_static_test.go (TestStaticPolicyOptions), plus the exact error texts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpumanager.h>
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

/* TestPolicyDefaultsAvailable and TestPolicyOptionsAvailable, newest maturity levels. */
static void test_cpu_policy_options_available(void **state)
{
        static const struct {
                const char *option;
                bool alpha, beta, available;
        } cases[] = {
                        {"this-option-does-not-exist", false, true, false},
                        {"this-option-does-not-exist", false, false, false},
                        {"this-option-does-not-exist", true, true, false},
                        {"full-pcpus-only", false, true, true},
                        {"full-pcpus-only", false, false, true}, /* stable since 1.33 */
                        {"align-by-socket", true, true, true},
                        {"align-by-socket", false, true, false},
                        {"distribute-cpus-across-numa", true, true, true},
                        {"distribute-cpus-across-numa", false, true, true},
                        {"distribute-cpus-across-numa", true, false, false},
                        {"distribute-cpus-across-cores", true, true, true},
                        {"distribute-cpus-across-cores", false, true, false},
                        {"strict-cpu-reservation", false, false, true},
                        {"prefer-align-cpus-by-uncorecache", false, false, true},
        };

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_cpu_gates g = {cases[i].alpha, cases[i].beta};
                int r = ncm_cpu_option_check_available(cases[i].option, g, NULL);
                if ((r == 0) != cases[i].available)
                        fail_msg("option %s alpha=%d beta=%d: available=%d, expected %d",
                                 cases[i].option, cases[i].alpha, cases[i].beta, r == 0,
                                 cases[i].available);
        }
        /* the default gates are the newest kubelet's: alpha off, beta on */
        assert_false(NCM_CPU_GATES_DEFAULT.alpha_options);
        assert_true(NCM_CPU_GATES_DEFAULT.beta_options);
        assert_int_equal(ncm_cpu_option_maturity_of("align-by-socket"), NCM_CPU_OPTION_ALPHA);
        assert_int_equal(ncm_cpu_option_maturity_of("nope"), NCM_CPU_OPTION_UNKNOWN);
}

static void test_cpu_policy_options_error_texts(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpu_gates off = {false, false};

        assert_int_equal(ncm_cpu_option_check_available("bogus", off, &err), -EINVAL);
        assert_string_equal(err.msg, "unknown CPU Manager Policy option: \"bogus\"");
        assert_int_equal(ncm_cpu_option_check_available("align-by-socket", off, &err), -EINVAL);
        assert_string_equal(err.msg, "CPU Manager Policy Alpha-level Options not enabled, but "
                                     "option \"align-by-socket\" provided");
        assert_int_equal(ncm_cpu_option_check_available("distribute-cpus-across-numa", off, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "CPU Manager Policy Beta-level Options not enabled, but "
                                     "option \"distribute-cpus-across-numa\" provided");
        /* Go's %q escapes */
        assert_int_equal(ncm_cpu_option_check_available("a\"b\n", off, &err), -EINVAL);
        assert_string_equal(err.msg, "unknown CPU Manager Policy option: \"a\\\"b\\n\"");
}

/* strconv.ParseBool */
static void test_cpu_policy_options_parse_bool(void **state)
{
        static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
        static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
        static const char *const bad[] = {"", "yes", "tRUE", "True ", " 1", "2", "on", "enabled!"};
        bool v;

        for (size_t i = 0; i < NCM_ELEMENTSOF(yes); i++) {
                assert_int_equal(ncm_parse_go_bool(yes[i], &v), 0);
                assert_true(v);
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(no); i++) {
                assert_int_equal(ncm_parse_go_bool(no[i], &v), 0);
                assert_false(v);
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++)
                assert_int_equal(ncm_parse_go_bool(bad[i], &v), -EINVAL);
}

/* TestStaticPolicyOptions */
static void test_cpu_policy_options_parse(void **state)
{
        ncm_cpu_options o = {.align_by_socket = true};
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpu_gates g = NCM_CPU_GATES_DEFAULT;
        ncm_cpu_option bad1[] = {{"badValue1", ""}};
        ncm_cpu_option bad2[] = {{"badValue1", ""}, {"badvalue2", "aaaa"}};
        ncm_cpu_option good[] = {{"full-pcpus-only", "true"}};
        ncm_cpu_option badval[] = {{"full-pcpus-only", "enabled!"}};
        ncm_cpu_option mixed[] = {{"full-pcpus-only", "1"}, {"badvalue2", "lorem ipsum"}};
        ncm_cpu_option dup[] = {{"full-pcpus-only", "1"}, {"full-pcpus-only", "0"}};

        /* nil and empty args */
        assert_int_equal(ncm_cpu_options_parse(NULL, 0, g, &o, &err), 0);
        assert_false(o.align_by_socket || o.full_pcpus_only);
        assert_int_equal(ncm_cpu_options_parse(bad1, 1, g, &o, &err), -EINVAL);
        assert_string_equal(err.msg, "unknown CPU Manager Policy option: \"badValue1\"");
        /* Go reports one of several bad keys at random; nodecm the first in sorted order */
        assert_int_equal(ncm_cpu_options_parse(bad2, 2, g, &o, &err), -EINVAL);
        assert_string_equal(err.msg, "unknown CPU Manager Policy option: \"badValue1\"");
        assert_int_equal(ncm_cpu_options_parse(good, 1, g, &o, &err), 0);
        assert_true(o.full_pcpus_only);
        assert_false(o.distribute_cpus_across_numa || o.align_by_socket ||
                     o.distribute_cpus_across_cores || o.strict_cpu_reservation ||
                     o.prefer_align_by_uncore_cache);
        assert_int_equal(ncm_cpu_options_parse(badval, 1, g, &o, &err), -EINVAL);
        assert_string_equal(err.msg, "bad value for option \"full-pcpus-only\": strconv.ParseBool: "
                                     "parsing \"enabled!\": invalid syntax");
        assert_int_equal(ncm_cpu_options_parse(mixed, 2, g, &o, &err), -EINVAL);
        assert_string_equal(err.msg, "unknown CPU Manager Policy option: \"badvalue2\"");
        assert_int_equal(ncm_cpu_options_parse(dup, 2, g, &o, &err), -EINVAL);
        assert_string_equal(err.msg, "duplicate CPU Manager Policy option: \"full-pcpus-only\"");
        /* RET untouched on failure */
        assert_true(o.full_pcpus_only);
}

/* TestPolicyOptionsCompatibility and the other mutual exclusions, in kubelet's order. */
static void test_cpu_policy_options_exclusions(void **state)
{
        static const struct {
                const char *a, *b;
                const char *err; /* NULL: compatible */
        } cases[] = {
                        {"full-pcpus-only", NULL, NULL},
                        {"distribute-cpus-across-cores", NULL, NULL},
                        {"full-pcpus-only", "distribute-cpus-across-cores",
                         "static policy options full-pcpus-only and distribute-cpus-across-cores "
                         "can not "
                         "be used at the same time"},
                        {"distribute-cpus-across-numa", "distribute-cpus-across-cores",
                         "static policy options distribute-cpus-across-numa and "
                         "distribute-cpus-across-cores can not be used at the same time"},
                        {"prefer-align-cpus-by-uncorecache", "distribute-cpus-across-cores",
                         "static policy options prefer-align-cpus-by-uncorecache and "
                         "distribute-cpus-across-cores can not be used at the same time"},
                        {"prefer-align-cpus-by-uncorecache", "distribute-cpus-across-numa",
                         "static policy options prefer-align-cpus-by-uncorecache and "
                         "distribute-cpus-across-numa can not be used at the same time"},
                        {"full-pcpus-only", "distribute-cpus-across-numa", NULL},
                        {"full-pcpus-only", "prefer-align-cpus-by-uncorecache", NULL},
                        {"align-by-socket", "distribute-cpus-across-numa", NULL},
        };
        ncm_cpu_gates g = {true, true};

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_cpu_option o[2] = {{cases[i].a, "true"}, {cases[i].b, "true"}};
                ncm_cpu_options out;
                ncm_error err = NCM_ERROR_INIT;
                int r = ncm_cpu_options_parse(o, cases[i].b ? 2 : 1, g, &out, &err);
                if (!cases[i].err) {
                        if (r < 0)
                                fail_msg("%s + %s: %s", cases[i].a, cases[i].b, err.msg);
                        continue;
                }
                assert_int_equal(r, -EINVAL);
                assert_string_equal(err.msg, cases[i].err);
        }
        /* set to false, an option does not conflict */
        ncm_cpu_option off[] = {{"full-pcpus-only", "true"},
                                {"distribute-cpus-across-cores", "false"}};
        ncm_cpu_options out;
        assert_int_equal(ncm_cpu_options_parse(off, 2, g, &out, NULL), 0);
        /* all three exclusions hold: the first in kubelet's order is reported */
        ncm_cpu_option three[] = {{"prefer-align-cpus-by-uncorecache", "true"},
                                  {"distribute-cpus-across-cores", "true"},
                                  {"full-pcpus-only", "true"}};
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_cpu_options_parse(three, 3, g, &out, &err), -EINVAL);
        assert_string_equal(err.msg, "static policy options full-pcpus-only and "
                                     "distribute-cpus-across-cores can not be used at the same "
                                     "time");
}

/* TestValidateStaticPolicyOptions */
static void test_cpu_policy_options_validate(void **state)
{
        static const struct {
                const char *desc, *option, *topo, *tm;
                bool fails;
        } cases[] = {
                        {"Align by socket not enabled", "full-pcpus-only",
                         "dual-socket-multi-numa-ht", "single-numa-node", false},
                        {"Align by socket enabled with topology manager single numa node",
                         "align-by-socket", "dual-socket-multi-numa-ht", "single-numa-node", true},
                        {"Align by socket enabled with num_sockets > num_numa", "align-by-socket",
                         "fake-multi-socket-dual-socket-per-numa-ht", "none", true},
                        {"Align by socket enabled: with topology manager None policy",
                         "align-by-socket", "dual-socket-multi-numa-ht", "none", false},
                        {"Align by socket enabled: with topology manager best-effort policy",
                         "align-by-socket", "dual-socket-multi-numa-ht", "best-effort", false},
                        {"Align by socket enabled: with topology manager restricted policy",
                         "align-by-socket", "dual-socket-multi-numa-ht", "restricted", false},
        };

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_topo *t = load_topo(cases[i].topo);
                ncm_cpu_option o = {cases[i].option, "true"};
                ncm_cpu_options opts;
                ncm_error err = NCM_ERROR_INIT;
                int r;

                assert_int_equal(ncm_cpu_options_parse(&o, 1, (ncm_cpu_gates){true, true}, &opts,
                                                       NULL),
                                 0);
                r = ncm_cpu_options_validate(&opts, t, cases[i].tm, &err);
                if ((r < 0) != cases[i].fails)
                        fail_msg("%s: got %d (%s)", cases[i].desc, r, err.msg);
                if (r < 0 && strcmp(cases[i].topo, "dual-socket-multi-numa-ht") != 0)
                        assert_string_equal(err.msg,
                                            "Align by socket is not compatible with hardware "
                                            "where number of sockets are more than number of "
                                            "NUMA");
                ncm_topo_free(t);
        }
}

/* Kubelet versions as users write them, and the releases nodecm reproduces. */
static void test_cpu_policy_options_kubelet_version(void **state)
{
        static const struct {
                const char *text;
                int major, minor; /* -1: refused */
        } cases[] = {
                        {"1.35", 1, 35},        {"v1.35", 1, 35},
                        {"1.36.4", 1, 36},      {"v1.37.0-rc.1", 1, 37},
                        {"1.37.0+k3s1", 1, 37}, {"1.32", 1, 32},
                        {"1.40", 1, 40},        {"2.0", 2, 0},
                        {"1.31", -1, 0},        {"1.9", -1, 0},
                        {"0.0", -1, 0},         {"1", -1, 0},
                        {"1.", -1, 0},          {".35", -1, 0},
                        {"1.35x", -1, 0},       {"1.35.", -1, 0},
                        {"v", -1, 0},           {"", -1, 0},
                        {" 1.35", -1, 0},       {"1.3500000000", -1, 0},
        };
        ncm_error err = NCM_ERROR_INIT;
        char buf[32];

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_kubelet_version v = {7, 7};
                int r = ncm_kubelet_version_parse(cases[i].text, &v, &err);
                if (cases[i].major < 0) {
                        if (r != -EINVAL)
                                fail_msg("\"%s\" accepted", cases[i].text);
                        assert_int_equal(v.major, 7); /* untouched */
                } else if (r != 0 || v.major != cases[i].major || v.minor != cases[i].minor) {
                        fail_msg("\"%s\": %d %d.%d", cases[i].text, r, v.major, v.minor);
                }
        }
        assert_int_equal(ncm_kubelet_version_parse("1.30", &(ncm_kubelet_version){0}, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "kubelet version 1.30: nodecm reproduces kubelet 1.32 and "
                                     "newer");
        assert_int_equal(ncm_kubelet_version_parse("latest", &(ncm_kubelet_version){0}, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "kubelet version \"latest\": expected MAJOR.MINOR, e.g. "
                                     "\"1.35\"");
        assert_string_equal(ncm_kubelet_version_format(NCM_KUBELET_VERSION_DEFAULT, buf, 32),
                            "1.37");
        assert_string_equal(ncm_kubelet_version_format((ncm_kubelet_version){1, 33}, buf, 32),
                            "1.33");
        /* the default is the newest released kubelet, not the development branch */
        assert_true(ncm_kubelet_version_at_least(NCM_KUBELET_VERSION_DEFAULT, 1,
                                                 NCM_KUBELET_DEFAULT_MINOR));
        assert_false(ncm_kubelet_version_at_least(NCM_KUBELET_VERSION_DEFAULT, 1,
                                                  NCM_KUBELET_DEFAULT_MINOR + 1));
        assert_string_equal(ncm_kubelet_version_format((ncm_kubelet_version){1, 38}, buf, 32),
                            "1.38");
        /* versions set in a struct, not parsed, are checked where the library takes them */
        assert_int_equal(ncm_kubelet_version_check((ncm_kubelet_version){1, 31}, &err), -EINVAL);
        assert_string_equal(err.msg, "kubelet version 1.31: nodecm reproduces kubelet 1.32 and "
                                     "newer");
        assert_int_equal(ncm_kubelet_version_check((ncm_kubelet_version){0, 5}, &err), -EINVAL);
        assert_int_equal(ncm_kubelet_version_check((ncm_kubelet_version){-1, 40}, &err), -EINVAL);
        assert_int_equal(ncm_kubelet_version_check(NCM_KUBELET_VERSION_DEFAULT, &err), 0);
        assert_int_equal(ncm_kubelet_version_check((ncm_kubelet_version){1, 32}, &err), 0);
        assert_true(ncm_kubelet_version_at_least((ncm_kubelet_version){1, 37}, 1, 37));
        assert_false(ncm_kubelet_version_at_least((ncm_kubelet_version){1, 36}, 1, 37));
        assert_true(ncm_kubelet_version_at_least((ncm_kubelet_version){2, 0}, 1, 99));
}

/* Options graduate release by release; the gates they need follow. */
static void test_cpu_policy_options_maturity_per_release(void **state)
{
        static const struct {
                const char *option;
                int minor;
                ncm_cpu_option_maturity m;
        } cases[] = {
                        {"full-pcpus-only", 32, NCM_CPU_OPTION_BETA},
                        {"full-pcpus-only", 33, NCM_CPU_OPTION_STABLE},
                        {"distribute-cpus-across-numa", 32, NCM_CPU_OPTION_ALPHA},
                        {"distribute-cpus-across-numa", 33, NCM_CPU_OPTION_BETA},
                        {"distribute-cpus-across-numa", 37, NCM_CPU_OPTION_BETA},
                        {"strict-cpu-reservation", 32, NCM_CPU_OPTION_ALPHA},
                        {"strict-cpu-reservation", 34, NCM_CPU_OPTION_BETA},
                        {"strict-cpu-reservation", 35, NCM_CPU_OPTION_STABLE},
                        {"prefer-align-cpus-by-uncorecache", 33, NCM_CPU_OPTION_ALPHA},
                        {"prefer-align-cpus-by-uncorecache", 34, NCM_CPU_OPTION_BETA},
                        {"prefer-align-cpus-by-uncorecache", 36, NCM_CPU_OPTION_STABLE},
                        {"align-by-socket", 37, NCM_CPU_OPTION_ALPHA},
                        {"distribute-cpus-across-cores", 32, NCM_CPU_OPTION_ALPHA},
                        {"distribute-cpus-across-cores", 30, NCM_CPU_OPTION_UNKNOWN},
                        {"nope", 37, NCM_CPU_OPTION_UNKNOWN},
        };
        const ncm_cpu_option strict = {"strict-cpu-reservation", "true"};
        ncm_cpu_options o;
        ncm_error err = NCM_ERROR_INIT;

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_kubelet_version v = {1, cases[i].minor};
                if (ncm_cpu_option_maturity_in(cases[i].option, v) != cases[i].m)
                        fail_msg("%s in 1.%d: %d, expected %d", cases[i].option, cases[i].minor,
                                 ncm_cpu_option_maturity_in(cases[i].option, v), cases[i].m);
        }
        /* alpha in 1.32: refused with the default gates, accepted with the alpha gate */
        assert_int_equal(ncm_cpu_options_parse_version(&strict, 1, NCM_CPU_GATES_DEFAULT,
                                                       (ncm_kubelet_version){1, 32}, &o, &err),
                         -EINVAL);
        assert_string_equal(err.msg, "CPU Manager Policy Alpha-level Options not enabled, but "
                                     "option \"strict-cpu-reservation\" provided");
        assert_int_equal(ncm_cpu_options_parse_version(&strict, 1, (ncm_cpu_gates){true, true},
                                                       (ncm_kubelet_version){1, 32}, &o, &err),
                         0);
        assert_true(o.strict_cpu_reservation);
        assert_int_equal(o.kubelet_version.minor, 32);
        /* the plain parser is the newest kubelet's */
        assert_int_equal(ncm_cpu_options_parse(&strict, 1, NCM_CPU_GATES_DEFAULT, &o, &err), 0);
        assert_int_equal(o.kubelet_version.major, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cpu_policy_options_available),
                        cmocka_unit_test(test_cpu_policy_options_error_texts),
                        cmocka_unit_test(test_cpu_policy_options_parse_bool),
                        cmocka_unit_test(test_cpu_policy_options_parse),
                        cmocka_unit_test(test_cpu_policy_options_exclusions),
                        cmocka_unit_test(test_cpu_policy_options_validate),
                        cmocka_unit_test(test_cpu_policy_options_kubelet_version),
                        cmocka_unit_test(test_cpu_policy_options_maturity_per_release),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
