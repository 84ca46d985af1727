/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU manager's in-memory state (kubelet state_mem.go semantics, the persistence hook) and
 * the static policy's start-up validation, with TestStaticPolicyStart's cases from the kubelet's
 * policy_static_test.go and every validateState error text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpustate.h>
#include "testutil.h"

static ncm_cpu_state *new_state(const char *policy)
{
        ncm_cpu_state *s = ncm_cpu_state_new(policy);
        assert_non_null(s);
        return s;
}

static void set(ncm_cpu_state *s, const char *pod, const char *ctr, const char *cpus)
{
        ncm_autoptr(ncm_cpuset) c = tu_cpuset(cpus);
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_cpu_state_set(s, pod, ctr, c, &err), 0);
}

static void set_default(ncm_cpu_state *s, const char *cpus)
{
        ncm_autoptr(ncm_cpuset) c = tu_cpuset(cpus);
        assert_int_equal(ncm_cpu_state_set_default(s, c, NULL), 0);
}

/* The state as one line: "policy|default|pod/ctr=cpus,...", in iteration order. */
static char *dump(const ncm_cpu_state *s)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        const char *pod, *ctr;
        const ncm_cpuset *cpus;
        ncm_buf_printf(&b, "%s|", ncm_cpu_state_policy(s));
        ncm_cpuset_format_list_buf(ncm_cpu_state_default(s), &b);
        ncm_buf_putc(&b, '|');
        while (ncm_cpu_state_next(s, &it, &pod, &ctr, &cpus)) {
                ncm_buf_printf(&b, "%s/%s=", pod, ctr);
                ncm_cpuset_format_list_buf(cpus, &b);
                ncm_buf_putc(&b, ';');
        }
        char *r = ncm_buf_steal(&b);
        assert_non_null(r);
        return r;
}

#define assert_dump(s, expect)                                                                     \
        do {                                                                                       \
                char *d_ = dump(s);                                                                \
                assert_string_equal(d_, expect);                                                   \
                free(d_);                                                                          \
        } while (0)

static void test_cpu_state_new_is_empty(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = new_state("static");
        ncm_autoptr(ncm_cpu_state) n = new_state(NULL);
        (void)state;
        assert_string_equal(ncm_cpu_state_policy(s), "static");
        assert_string_equal(ncm_cpu_state_policy(n), "");
        assert_true(ncm_cpuset_is_empty(ncm_cpu_state_default(s)));
        assert_int_equal(ncm_cpu_state_num_pods(s), 0);
        assert_int_equal(ncm_cpu_state_num_entries(s), 0);
        assert_null(ncm_cpu_state_get(s, "pod", "ctr"));
        assert_ptr_equal(ncm_cpu_state_get_or_default(s, "pod", "ctr"), ncm_cpu_state_default(s));
}

static void test_cpu_state_set_get_and_default(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = new_state("static");
        (void)state;
        set_default(s, "0-1,6-11");
        set(s, "pod", "c1", "2-3");
        set(s, "pod", "c2", "4-5");
        tu_assert_cpuset(ncm_cpu_state_get(s, "pod", "c1"), "2-3");
        tu_assert_cpuset(ncm_cpu_state_get_or_default(s, "pod", "c2"), "4-5");
        tu_assert_cpuset(ncm_cpu_state_get_or_default(s, "pod", "c3"), "0-1,6-11");
        tu_assert_cpuset(ncm_cpu_state_get_or_default(s, "other", "c1"), "0-1,6-11");
        assert_null(ncm_cpu_state_get(s, "pod", "c3"));
        /* Replacing keeps one entry; an empty set is a valid assignment (kubelet test). */
        set(s, "pod", "c1", "7");
        set(s, "pod", "c2", "");
        assert_int_equal(ncm_cpu_state_num_entries(s), 2);
        tu_assert_cpuset(ncm_cpu_state_get(s, "pod", "c1"), "7");
        assert_non_null(ncm_cpu_state_get(s, "pod", "c2"));
        assert_true(ncm_cpuset_is_empty(ncm_cpu_state_get(s, "pod", "c2")));
        assert_dump(s, "static|0-1,6-11|pod/c1=7;pod/c2=;");
}

static void test_cpu_state_set_copies_the_set(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = new_state("static");
        ncm_autoptr(ncm_cpuset) c = tu_cpuset("1-2");
        (void)state;
        assert_int_equal(ncm_cpu_state_set(s, "p", "c", c, NULL), 0);
        assert_int_equal(ncm_cpu_state_set_default(s, c, NULL), 0);
        ncm_cpuset_set(c, 5);
        tu_assert_cpuset(ncm_cpu_state_get(s, "p", "c"), "1-2");
        tu_assert_cpuset(ncm_cpu_state_default(s), "1-2");
}

static void test_cpu_state_delete_drops_empty_pod(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = new_state("static");
        (void)state;
        set(s, "pod", "c1", "0-1");
        set(s, "pod", "c2", "2-3");
        set(s, "other", "c1", "4");
        assert_int_equal(ncm_cpu_state_delete(s, "pod", "c1", NULL), 1);
        assert_int_equal(ncm_cpu_state_num_pods(s), 2);
        assert_int_equal(ncm_cpu_state_delete(s, "pod", "c1", NULL), 0);
        assert_int_equal(ncm_cpu_state_delete(s, "pod", "c2", NULL), 1);
        assert_int_equal(ncm_cpu_state_num_pods(s), 1);
        assert_string_equal(ncm_cpu_state_pod_uid(s, 0), "other");
        assert_int_equal(ncm_cpu_state_delete(s, "nope", "c1", NULL), 0);
        assert_int_equal(ncm_cpu_state_delete_pod(s, "other", NULL), 1);
        assert_int_equal(ncm_cpu_state_delete_pod(s, "other", NULL), 0);
        assert_int_equal(ncm_cpu_state_num_pods(s), 0);
}

/* kubelet TestCheckpointStateHelpers: set, get back the same set, delete, gone. */
static void test_cpu_state_helpers_ported(void **state)
{
        static const struct {
                const char *containers[2];
                const char *cpus[2];
        } cases[] = {
                        {{"c1", NULL}, {"0-1", NULL}},
                        {{"c1", "c2"}, {"0-1", "2-5"}},
                        {{"c1", NULL}, {"", NULL}},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_autoptr(ncm_cpu_state) s = new_state("none");
                set_default(s, "0-8");
                for (size_t j = 0; j < 2 && cases[i].containers[j]; j++) {
                        ncm_autoptr(ncm_cpuset) c = tu_cpuset(cases[i].cpus[j]);
                        set(s, "pod", cases[i].containers[j], cases[i].cpus[j]);
                        assert_true(ncm_cpuset_equal(
                                        ncm_cpu_state_get(s, "pod", cases[i].containers[j]), c));
                        assert_int_equal(ncm_cpu_state_delete(s, "pod", cases[i].containers[j],
                                                              NULL),
                                         1);
                        assert_null(ncm_cpu_state_get(s, "pod", cases[i].containers[j]));
                }
        }
}

/* kubelet TestCheckpointStateClear. */
static void test_cpu_state_clear(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = new_state("none");
        (void)state;
        set_default(s, "1,5,10");
        set(s, "pod", "container1", "1,4");
        assert_int_equal(ncm_cpu_state_clear(s, NULL), 0);
        assert_true(ncm_cpuset_is_empty(ncm_cpu_state_default(s)));
        assert_null(ncm_cpu_state_get(s, "pod", "container1"));
        assert_string_equal(ncm_cpu_state_policy(s), "none");
}

static void test_cpu_state_iterates_in_bytewise_order(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = new_state("static");
        (void)state;
        /* Inserted out of order; uppercase sorts before lowercase, UTF-8 after ASCII. */
        set(s, "b", "z", "9");
        set(s, "\xc3\xa9t\xc3\xa9", "x", "8");
        set(s, "a", "b", "2");
        set(s, "B", "a", "3");
        set(s, "a", "a", "1");
        set(s, "a", "A", "0");
        set(s, "", "", "7");
        assert_dump(s, "static||/=7;B/a=3;a/A=0;a/a=1;a/b=2;b/z=9;\xc3\xa9t\xc3\xa9/x=8;");
        assert_int_equal(ncm_cpu_state_num_pods(s), 5);
        assert_string_equal(ncm_cpu_state_pod_uid(s, 2), "a");
        assert_int_equal(ncm_cpu_state_pod_index(s, "a"), 2);
        assert_int_equal(ncm_cpu_state_pod_index(s, ""), 0);
        assert_int_equal(ncm_cpu_state_pod_index(s, "\xc3\xa9t\xc3\xa9"), 4);
        assert_true(ncm_cpu_state_pod_index(s, "A") == SIZE_MAX);
        assert_true(ncm_cpu_state_pod_index(s, "c") == SIZE_MAX);
        assert_int_equal(ncm_cpu_state_pod_num_containers(s, 2), 3);
        assert_string_equal(ncm_cpu_state_container_name(s, 2, 0), "A");
        tu_assert_cpuset(ncm_cpu_state_container_cpus(s, 2, 2), "2");
        {
                ncm_autoptr(ncm_cpuset) all = ncm_cpuset_new();
                ncm_cpu_state_assigned(s, all);
                tu_assert_cpuset(all, "0-3,7-9");
        }
}

static void test_cpu_state_iterator_accepts_null_outputs(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = new_state("static");
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        int n = 0;
        (void)state;
        set(s, "p1", "c", "1");
        set(s, "p2", "c", "2");
        while (ncm_cpu_state_next(s, &it, NULL, NULL, NULL))
                n++;
        assert_int_equal(n, 2);
        assert_false(ncm_cpu_state_next(s, &it, NULL, NULL, NULL));
}

static void test_cpu_state_dup_and_equal(void **state)
{
        ncm_autoptr(ncm_cpu_state) a = new_state("static");
        ncm_autoptr(ncm_cpu_state) b = NULL;
        ncm_autoptr(ncm_cpu_state) c = new_state("none");
        (void)state;
        set_default(a, "0-1,6-11");
        set(a, "p", "c1", "2-3");
        set(a, "q", "c2", "4-5");
        b = ncm_cpu_state_dup(a);
        assert_non_null(b);
        assert_true(ncm_cpu_state_equal(a, b));
        set(b, "q", "c2", "4");
        assert_false(ncm_cpu_state_equal(a, b));
        tu_assert_cpuset(ncm_cpu_state_get(a, "q", "c2"), "4-5");
        /* Same content under another policy name is a different state. */
        assert_int_equal(ncm_cpu_state_assign(c, a, NULL), 0);
        assert_false(ncm_cpu_state_equal(a, c));
        assert_string_equal(ncm_cpu_state_policy(c), "none");
        assert_dump(c, "none|0-1,6-11|p/c1=2-3;q/c2=4-5;");
        assert_int_equal(ncm_cpu_state_assign(c, c, NULL), 0);
        assert_dump(c, "none|0-1,6-11|p/c1=2-3;q/c2=4-5;");
}

typedef struct hook_log {
        int calls;
        int fail_at; /* call number that fails, 0 = never */
        char last[256];
        bool freed;
} hook_log;

static int hook(const ncm_cpu_state *s, void *userdata, ncm_error *err)
{
        hook_log *log = userdata;
        char *d = dump(s);
        log->calls++;
        snprintf(log->last, sizeof(log->last), "%s", d);
        free(d);
        if (log->calls == log->fail_at)
                return ncm_error_set(err, EIO, "disk full");
        return 0;
}

static void hook_free(void *userdata)
{
        ((hook_log *)userdata)->freed = true;
}

static void test_cpu_state_persist_hook_runs_after_every_mutation(void **state)
{
        hook_log log = {0};
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        {
                ncm_autoptr(ncm_cpu_state) s = new_state("static");
                ncm_cpu_state_set_persist(s, hook, &log, hook_free);
                assert_int_equal(log.calls, 0);
                set_default(s, "0-7");
                assert_string_equal(log.last, "static|0-7|");
                set(s, "p", "c", "1");
                assert_string_equal(log.last, "static|0-7|p/c=1;");
                /* The kubelet stores after Delete even when there was nothing to delete. */
                assert_int_equal(ncm_cpu_state_delete(s, "x", "y", NULL), 0);
                assert_int_equal(log.calls, 3);
                assert_int_equal(ncm_cpu_state_delete(s, "p", "c", NULL), 1);
                assert_string_equal(log.last, "static|0-7|");
                assert_int_equal(ncm_cpu_state_clear(s, NULL), 0);
                assert_int_equal(ncm_cpu_state_persist(s, NULL), 0);
                assert_int_equal(log.calls, 6);

                /* A failing hook: the change stays in memory, the error is returned. */
                log.fail_at = 7;
                {
                        ncm_autoptr(ncm_cpuset) c = tu_cpuset("3");
                        assert_int_equal(ncm_cpu_state_set(s, "p", "c", c, &err), -EIO);
                }
                assert_string_equal(err.msg, "disk full");
                tu_assert_cpuset(ncm_cpu_state_get(s, "p", "c"), "3");

                /* The dup has no hook. */
                {
                        ncm_autoptr(ncm_cpu_state) d = ncm_cpu_state_dup(s);
                        set(d, "p", "c", "4");
                        assert_int_equal(log.calls, 7);
                }
                assert_false(log.freed);
        }
        assert_true(log.freed);
}

static void test_cpu_state_replacing_hook_releases_userdata(void **state)
{
        hook_log a = {0}, b = {0};
        ncm_autoptr(ncm_cpu_state) s = new_state("static");
        (void)state;
        ncm_cpu_state_set_persist(s, hook, &a, hook_free);
        ncm_cpu_state_set_persist(s, hook, &a, hook_free); /* same userdata: kept */
        assert_false(a.freed);
        ncm_cpu_state_set_persist(s, hook, &b, hook_free);
        assert_true(a.freed);
        ncm_cpu_state_set_persist(s, NULL, NULL, NULL);
        assert_true(b.freed);
        set_default(s, "1");
        assert_int_equal(a.calls + b.calls, 0);
        assert_int_equal(ncm_cpu_state_persist(s, NULL), 0);
}

/* --------------------------------------------------------------------------------------- */
/* validateState                                                                            */
/* --------------------------------------------------------------------------------------- */

typedef struct start_case {
        const char *description;
        const char *reserved; /* the set the kubelet would have reserved for the test */
        bool strict;
        const char *assignments[4][3]; /* pod, container, cpus */
        const char *dflt;
        const char *exp_err; /* NULL: valid */
        const char *exp_default;
        int exp_ret;
} start_case;

/* topoDualSocketHT: 12 CPUs, 2 sockets, 6 cores; CPU 0's sibling is 6. */
#define DUAL_SOCKET_HT "0-11"

static const start_case start_cases[] = {
                {"non-corrupted state",
                 "",
                 false,
                 {{"fakePod", "0", "0"}},
                 "1-11",
                 NULL,
                 "1-11",
                 0},
                /* numReservedCPUs 1 takes CPU 0; a fresh state gets every CPU. */
                {"empty cpuset", "0", false, {{NULL}}, "", NULL, "0-11", 1},
                /* numReservedCPUs 2 takes core 0: CPUs 0 and 6. */
                {"reserved cores 0 & 6 are not present in available cpuset",
                 "0,6",
                 false,
                 {{NULL}},
                 "0-1",
                 "not all reserved cpus: \"0,6\" are present in defaultCpuSet: \"0-1\"",
                 NULL,
                 0},
                {"some of reserved cores are present in available cpuset "
                 "(StrictCPUReservationOption)",
                 "0,6",
                 true,
                 {{NULL}},
                 "0-1",
                 "some of strictly reserved cpus: \"0\" are present in defaultCpuSet: \"0-1\"",
                 NULL,
                 0},
                {"assigned core 2 is still present in available cpuset",
                 "",
                 false,
                 {{"fakePod", "0", "0-2"}},
                 "2-11",
                 "pod: fakePod, container: 0 cpuset: \"0-2\" overlaps with default cpuset \"2-11\"",
                 NULL,
                 0},
                {"assigned core 2 is still present in available cpuset "
                 "(StrictCPUReservationOption)",
                 "",
                 true,
                 {{"fakePod", "0", "0-2"}},
                 "2-11",
                 "pod: fakePod, container: 0 cpuset: \"0-2\" overlaps with default cpuset \"2-11\"",
                 NULL,
                 0},
                {"core 12 is not present in topology but is in state cpuset",
                 "",
                 false,
                 {{"fakePod", "0", "0-2"}, {"fakePod", "1", "3-4"}},
                 "5-12",
                 "current set of available CPUs \"0-11\" doesn't match with CPUs in state \"0-12\"",
                 NULL,
                 0},
                {"core 11 is present in topology but is not in state cpuset",
                 "",
                 false,
                 {{"fakePod", "0", "0-2"}, {"fakePod", "1", "3-4"}},
                 "5-10",
                 "current set of available CPUs \"0-11\" doesn't match with CPUs in state \"0-10\"",
                 NULL,
                 0},
                /* Beyond the kubelet's table: the remaining branches. */
                {"default cpuset cannot be empty when assignments exist",
                 "",
                 false,
                 {{"fakePod", "0", "0-2"}},
                 "",
                 "default cpuset cannot be empty",
                 NULL,
                 0},
                {"fresh state with strict reservation leaves the reserved CPUs out",
                 "0,6",
                 true,
                 {{NULL}},
                 "",
                 NULL,
                 "1-5,7-11",
                 1},
                {"strict: reserved CPUs outside the default set and the assignments",
                 "0,6",
                 true,
                 {{"p", "c", "1-2"}},
                 "3-5,7-11",
                 NULL,
                 "3-5,7-11",
                 0},
                {"strict: a reserved CPU held by a container breaks the CPU accounting",
                 "0,6",
                 true,
                 {{"p", "c", "0-2"}},
                 "3-5,7-11",
                 "current set of available CPUs \"1-5,7-11\" doesn't match with CPUs in state "
                 "\"0-5,7-11\"",
                 NULL,
                 0},
                {"reserved set that shrank but stays in the default set is accepted",
                 "0",
                 false,
                 {{"p", "c", "2-3"}},
                 "0-1,4-11",
                 NULL,
                 "0-1,4-11",
                 0},
                {"the first overlapping container in sorted order is reported",
                 "",
                 false,
                 {{"pod-b", "x", "1"}, {"pod-a", "z", "2"}, {"pod-a", "y", "3"}},
                 "1-11",
                 "pod: pod-a, container: y cpuset: \"3\" overlaps with default cpuset \"1-11\"",
                 NULL,
                 0},
};

static void run_start_case(const start_case *tc)
{
        ncm_autoptr(ncm_cpu_state) s = new_state("static");
        ncm_autoptr(ncm_cpuset) all = tu_cpuset(DUAL_SOCKET_HT);
        ncm_autoptr(ncm_cpuset) resv = tu_cpuset(tc->reserved);
        ncm_error err = NCM_ERROR_INIT;
        int r;

        print_message("case: %s\n", tc->description);
        for (size_t i = 0; i < 4 && tc->assignments[i][0]; i++)
                set(s, tc->assignments[i][0], tc->assignments[i][1], tc->assignments[i][2]);
        set_default(s, tc->dflt);
        r = ncm_cpu_state_validate(s, all, resv, tc->strict, &err);
        if (tc->exp_err) {
                assert_int_equal(r, -NCM_E_INVALID_STATE);
                assert_int_equal(err.code, NCM_E_INVALID_STATE);
                assert_string_equal(err.msg, tc->exp_err);
                return;
        }
        assert_int_equal(r, tc->exp_ret);
        tu_assert_cpuset(ncm_cpu_state_default(s), tc->exp_default);
}

static void test_cpu_state_validate_kubelet_start_cases(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(start_cases); i++)
                run_start_case(&start_cases[i]);
}

static void test_cpu_state_validate_after_last_delete_is_fresh(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = new_state("static");
        ncm_autoptr(ncm_cpuset) all = tu_cpuset("0-3");
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        set(s, "p", "c", "1");
        assert_int_equal(ncm_cpu_state_delete(s, "p", "c", NULL), 1);
        /* Delete dropped the key, so the state is fresh again. */
        assert_int_equal(ncm_cpu_state_validate(s, all, NULL, false, &err), 1);
        tu_assert_cpuset(ncm_cpu_state_default(s), "0-3");
        /* Validating again: now valid and unchanged. */
        assert_int_equal(ncm_cpu_state_validate(s, all, NULL, false, &err), 0);
}

static void test_cpu_state_validate_fresh_state_is_persisted(void **state)
{
        hook_log log = {0};
        ncm_autoptr(ncm_cpu_state) s = new_state("static");
        ncm_autoptr(ncm_cpuset) all = tu_cpuset("0-7");
        ncm_autoptr(ncm_cpuset) resv = tu_cpuset("0");
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        ncm_cpu_state_set_persist(s, hook, &log, NULL);
        assert_int_equal(ncm_cpu_state_validate(s, all, resv, true, &err), 1);
        assert_int_equal(log.calls, 1);
        assert_string_equal(log.last, "static|1-7|");
        /* A valid restored state is not rewritten. */
        assert_int_equal(ncm_cpu_state_validate(s, all, resv, true, &err), 0);
        assert_int_equal(log.calls, 1);
        /* An invalid one is left alone. */
        set(s, "p", "c", "1");
        assert_int_equal(log.calls, 2);
        assert_int_equal(ncm_cpu_state_validate(s, all, resv, true, &err), -NCM_E_INVALID_STATE);
        assert_int_equal(log.calls, 2);
        tu_assert_cpuset(ncm_cpu_state_default(s), "1-7");
}

static void test_cpu_state_validate_exit_status_is_one(void **state)
{
        (void)state;
        assert_int_equal(ncm_error_exit_status(NCM_E_INVALID_STATE), 1);
}

/* Repair: fit the default set to a machine, keeping the exclusive assignments. */
static void test_cpu_state_fit(void **state)
{
        static const struct {
                const char *all, *reserved;
                bool strict;
                const char *dflt, *assigned; /* assigned: p/c's set, "" for none */
                int ret;
                const char *exp; /* the default set, or the error */
        } cases[] = {
                        /* CPUs 8-11 added: the kubelet refuses to start; fitting gives them to the
                           pool. */
                        {"0-11", "", false, "0-1,4-7", "2-3", 1, "0-1,4-11"},
                        {"0-11", "", false, "0-1,4-11", "2-3", 0, "0-1,4-11"},
                        /* strict-cpu-reservation turned on with CPU 0 reserved. */
                        {"0-7", "0", true, "0-1,4-7", "2-3", 1, "1,4-7"},
                        /* reserved CPU list grew, still outside the containers. */
                        {"0-7", "0-1", false, "0,4-7", "2-3", 1, "0-1,4-7"},
                        /* a fresh state: what the kubelet would initialise. */
                        {"0-7", "0", true, "", "", 1, "1-7"},
                        {"0-2", "", false, "0-1", "2-3", -NCM_E_INVALID_STATE,
                         "pod: p, container: c cpuset: \"2-3\" holds CPUs \"3\" that are not on "
                         "this "
                         "machine; drain that pod first"},
                        {"0-7", "2", true, "0-1,4-7", "2-3", -NCM_E_INVALID_STATE,
                         "pod: p, container: c cpuset: \"2-3\" holds CPUs \"2\" that are not "
                         "available "
                         "(absent or strictly reserved); drain that pod first"},
                        {"0-7", "3", false, "0-1,4-7", "2-3", -NCM_E_INVALID_STATE,
                         "pod: p, container: c cpuset: \"2-3\" holds reserved CPUs \"3\", which "
                         "must stay "
                         "in the shared pool; drain that pod first"},
                        {"0-7", "8", false, "0-1,4-7", "2-3", -NCM_E_INVALID_STATE,
                         "reserved CPUs \"8\" are not on this machine"},
                        {"0-7", "8", true, "0-1,4-7", "2-3", 0, "0-1,4-7"},
                        {"2-3", "", false, "0-1", "2-3", -NCM_E_INVALID_STATE,
                         "containers hold every CPU (\"2-3\"): nothing is left for the shared "
                         "pool"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_autoptr(ncm_cpu_state) s = new_state("static");
                ncm_autoptr(ncm_cpuset) all = tu_cpuset(cases[i].all);
                ncm_autoptr(ncm_cpuset) resv = tu_cpuset(cases[i].reserved);
                ncm_error err = NCM_ERROR_INIT;
                print_message("fit case %zu\n", i);
                set_default(s, cases[i].dflt);
                if (cases[i].assigned[0])
                        set(s, "p", "c", cases[i].assigned);
                ncm_autoptr(ncm_cpu_state) before = ncm_cpu_state_dup(s);
                assert_int_equal(ncm_cpu_state_fit(s, all, resv, cases[i].strict, &err),
                                 cases[i].ret);
                if (cases[i].ret < 0) {
                        assert_string_equal(err.msg, cases[i].exp);
                        assert_true(ncm_cpu_state_equal(s, before));
                        continue;
                }
                tu_assert_cpuset(ncm_cpu_state_default(s), cases[i].exp);
                /* The kubelet would now start. */
                assert_int_equal(ncm_cpu_state_validate(s, all, resv, cases[i].strict, &err), 0);
        }
        {
                /* Two containers on one CPU cannot both be kept. */
                ncm_autoptr(ncm_cpu_state) s = new_state("static");
                ncm_autoptr(ncm_cpuset) all = tu_cpuset("0-7");
                ncm_error err = NCM_ERROR_INIT;
                set_default(s, "0-1");
                set(s, "a", "x", "2-4");
                set(s, "b", "y", "4-5");
                assert_int_equal(ncm_cpu_state_fit(s, all, NULL, false, &err),
                                 -NCM_E_INVALID_STATE);
                assert_string_equal(err.msg, "pod: b, container: y cpuset: \"4-5\" overlaps CPUs "
                                             "another container holds; drain one of them first");
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cpu_state_new_is_empty),
                        cmocka_unit_test(test_cpu_state_set_get_and_default),
                        cmocka_unit_test(test_cpu_state_set_copies_the_set),
                        cmocka_unit_test(test_cpu_state_delete_drops_empty_pod),
                        cmocka_unit_test(test_cpu_state_helpers_ported),
                        cmocka_unit_test(test_cpu_state_clear),
                        cmocka_unit_test(test_cpu_state_iterates_in_bytewise_order),
                        cmocka_unit_test(test_cpu_state_iterator_accepts_null_outputs),
                        cmocka_unit_test(test_cpu_state_dup_and_equal),
                        cmocka_unit_test(test_cpu_state_persist_hook_runs_after_every_mutation),
                        cmocka_unit_test(test_cpu_state_replacing_hook_releases_userdata),
                        cmocka_unit_test(test_cpu_state_validate_kubelet_start_cases),
                        cmocka_unit_test(test_cpu_state_validate_after_last_delete_is_fresh),
                        cmocka_unit_test(test_cpu_state_validate_fresh_state_is_persisted),
                        cmocka_unit_test(test_cpu_state_validate_exit_status_is_one),
                        cmocka_unit_test(test_cpu_state_fit),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
