/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The topology manager's scopes and admission with fake hint providers: kubelet's
 * topology_manager_test.go (NewManager, scope names, Admit), scope_test.go (GetAffinity,
 * AddContainer, RemoveContainer), scope_container_test.go / scope_pod_test.go (what the
 * providers are asked and what the policy merges), and the admission results of allocation
 * errors (admission.GetPodAdmitResult).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topologymanager.h>
#include "testutil.h"

/* ---------------------------------------------------------------- fakes */

typedef struct fake_provider {
        const char *name;
        /* hints for every container, and for the pod (pod scope) */
        const ncm_hint *hints;
        size_t n_hints;
        bool no_preference;     /* return no resources at all */
        bool two_resources;     /* also return "<name>-b" with the same hints */
        int fail_hints;         /* return this from get_*_hints */
        const char *fail_alloc; /* container whose allocation fails */
        const char *fail_type;  /* its error type, or NULL */
        int fail_alloc_code;    /* the code of that failure (0: NCM_E_UNSATISFIABLE) */
        const char *alt_for;    /* container that gets ALT_HINTS instead */
        const ncm_hint *alt_hints;
        size_t n_alt;
        char *log; /* shared call log */
} fake_provider;

static void logf_(char *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(char *log, const char *fmt, ...)
{
        va_list ap;
        size_t len = strlen(log);
        va_start(ap, fmt);
        vsnprintf(log + len, 2048 - len, fmt, ap);
        va_end(ap);
}

static int fill(fake_provider *f, const ncm_container *c, ncm_tm_hints *ret, ncm_error *err)
{
        bool alt = c && f->alt_for && strcmp(c->name, f->alt_for) == 0;
        char name[64];
        int r;
        if (f->fail_hints)
                return ncm_error_set(err, f->fail_hints, "hints failed");
        if (f->no_preference)
                return 0;
        r = ncm_tm_hints_add(ret, f->name, alt ? f->alt_hints : f->hints,
                             alt ? f->n_alt : f->n_hints, false, NULL, err);
        if (r < 0 || !f->two_resources)
                return r;
        snprintf(name, sizeof(name), "%s-b", f->name);
        return ncm_tm_hints_add(ret, name, f->hints, f->n_hints, false, NULL, err);
}

static int fake_container_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret,
                                ncm_error *err)
{
        fake_provider *f = data;
        logf_(f->log, "%s:hints(%s/%s) ", f->name, call->pod->uid, call->container->name);
        if (call->txn)
                logf_(f->log, "[%s] ", (const char *)call->txn);
        return fill(f, call->container, ret, err);
}

static int fake_pod_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret, ncm_error *err)
{
        fake_provider *f = data;
        assert_null(call->container);
        logf_(f->log, "%s:podhints(%s) ", f->name, call->pod->uid);
        return fill(f, NULL, ret, err);
}

static int fake_allocate(void *data, const ncm_tm_call *call, const ncm_hint *affinity,
                         const char **ret_type, ncm_error *err)
{
        fake_provider *f = data;
        const ncm_container *c = call->container;
        if (affinity->any)
                logf_(f->log, "%s:alloc(%s,any%s) ", f->name, c->name,
                      affinity->preferred ? ",p" : "");
        else
                logf_(f->log, "%s:alloc(%s,%llx%s) ", f->name, c->name,
                      (unsigned long long)affinity->numa, affinity->preferred ? ",p" : "");
        if (call->txn)
                logf_(f->log, "[%s] ", (const char *)call->txn);
        if (f->fail_alloc && strcmp(f->fail_alloc, c->name) == 0) {
                *ret_type = f->fail_type;
                return ncm_error_set(err,
                                     f->fail_alloc_code ? f->fail_alloc_code : NCM_E_UNSATISFIABLE,
                                     "%s cannot allocate for %s", f->name, c->name);
        }
        return 0;
}

static const ncm_tm_provider_ops fake_ops = {
                .name = "fake",
                .get_container_hints = fake_container_hints,
                .get_pod_hints = fake_pod_hints,
                .allocate = fake_allocate,
};

/* A pod with INIT init containers and APP app containers named i0.. and c0... */
typedef struct test_pod {
        ncm_pod pod;
        ncm_container init[4], app[4];
        char names[8][24];
} test_pod;

static void make_pod(test_pod *tp, const char *uid, size_t init, size_t app)
{
        memset(tp, 0, sizeof(*tp));
        for (size_t i = 0; i < init; i++) {
                snprintf(tp->names[i], sizeof(tp->names[i]), "i%zu", i);
                tp->init[i] = (ncm_container){.name = tp->names[i], .index = i, .init = true};
        }
        for (size_t i = 0; i < app; i++) {
                snprintf(tp->names[4 + i], sizeof(tp->names[4 + i]), "c%zu", i);
                tp->app[i] = (ncm_container){.name = tp->names[4 + i], .index = i};
        }
        tp->pod.uid = (char *)uid;
        tp->pod.name = (char *)"pod";
        tp->pod.ns = (char *)"default";
        tp->pod.init_containers = tp->init;
        tp->pod.n_init_containers = init;
        tp->pod.containers = tp->app;
        tp->pod.n_containers = app;
}

static ncm_tm *new_tm(const char *policy, const char *scope, size_t n_numa)
{
        static const int ids[] = {0, 1, 2, 3};
        ncm_tm_config cfg = {.policy = policy,
                             .scope = scope,
                             .gates = NCM_TM_GATES_DEFAULT,
                             .numa_ids = ids,
                             .n_numa = n_numa};
        ncm_error err = NCM_ERROR_INIT;
        ncm_tm *tm = NULL;
        if (ncm_tm_new(&cfg, &tm, &err) < 0)
                fail_msg("%s", err.msg);
        return tm;
}

/* ---------------------------------------------------------------- topology_manager_test.go */

static void test_tm_new_manager(void **state)
{
        static const int nine[] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
        static const ncm_tm_option unknown[] = {{"unknown-option", "true"}};
        static const ncm_tm_option closest[] = {{"prefer-closest-numa-nodes", "true"}};
        static const struct {
                const char *description;
                const char *policy;
                const ncm_tm_option *opts;
                size_t n_opts;
                size_t n_numa;
                const char *err; /* substring */
        } t[] = {
                        {"Policy is set to none", "none", NULL, 0, 1, NULL},
                        {"Policy is set to best-effort", "best-effort", NULL, 0, 1, NULL},
                        {"Policy is set to restricted", "restricted", NULL, 0, 1, NULL},
                        {"Policy is set to single-numa-node", "single-numa-node", NULL, 0, 1, NULL},
                        {"Policy is set to unknown", "unknown", NULL, 0, 1,
                         "unknown policy: \"unknown\""},
                        {"Unknown policy name best-effort policy", "best-effort", unknown, 1, 1,
                         "unknown Topology Manager Policy option:"},
                        {"Unknown policy name restricted policy", "restricted", unknown, 1, 1,
                         "unknown Topology Manager Policy option:"},
                        {"can't get NUMA distances", "best-effort", closest, 1, 1,
                         "error getting NUMA distances from cadvisor"},
                        {"more than 8 NUMA nodes", "best-effort", NULL, 0, 9,
                         "unsupported on machines with more than 8 NUMA Nodes"},
                        /* none short-circuits before options are even parsed */
                        {"none ignores options", "none", unknown, 1, 9, NULL},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm_tm_config cfg = {.policy = t[i].policy,
                                     .options = t[i].opts,
                                     .n_options = t[i].n_opts,
                                     .gates = NCM_TM_GATES_DEFAULT,
                                     .numa_ids = nine,
                                     .n_numa = t[i].n_numa};
                ncm_error err = NCM_ERROR_INIT;
                ncm_tm *tm = NULL;
                int r = ncm_tm_new(&cfg, &tm, &err);
                if (t[i].err) {
                        if (r != -EINVAL || !strstr(err.msg, t[i].err))
                                fail_msg("%s: %d %s", t[i].description, r, err.msg);
                        assert_null(tm);
                        continue;
                }
                if (r < 0)
                        fail_msg("%s: %s", t[i].description, err.msg);
                assert_string_equal(ncm_tm_policy_name(ncm_tm_get_policy(tm)), t[i].policy);
                assert_string_equal(ncm_tm_scope_name(tm),
                                    strcmp(t[i].policy, "none") == 0 ? "none" : "container");
                ncm_tm_free(tm);
        }
}

static void test_tm_manager_scope(void **state)
{
        static const struct {
                const char *scope, *expect, *err;
        } t[] = {
                        {"container", "container", NULL},
                        {"pod", "pod", NULL},
                        {NULL, "container", NULL},
                        {"unknown", NULL, "unknown scope: \"unknown\""},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                ncm_tm_config cfg = {.policy = "best-effort",
                                     .scope = t[i].scope,
                                     .gates = NCM_TM_GATES_DEFAULT};
                ncm_error err = NCM_ERROR_INIT;
                ncm_tm *tm = NULL;
                int r = ncm_tm_new(&cfg, &tm, &err);
                if (t[i].err) {
                        assert_int_equal(r, -EINVAL);
                        assert_string_equal(err.msg, t[i].err);
                        continue;
                }
                assert_int_equal(r, 0);
                assert_string_equal(ncm_tm_scope_name(tm), t[i].expect);
                ncm_tm_free(tm);
        }
}

static void test_tm_admit_table(void **state)
{
        /* TestAdmit: NUMA nodes {0,1}; each case runs in container and in pod scope. */
        static const ncm_hint pref0[] = {{1, false, true}, {3, false, false}};
        static const ncm_hint pref01[] = {{1, false, true}, {2, false, true}, {3, false, false}};
        static const ncm_hint nopref[] = {{3, false, false}};
        static const struct {
                const char *name;
                const char *policy;
                bool has_provider;
                const ncm_hint *hints;
                size_t n;
                bool expect;
        } t[] = {
                        {"QOSClass set as BestEffort. None Policy. No Hints.", "none", false, NULL,
                         0, true},
                        {"QOSClass set as BestEffort. single-numa-node Policy. No Hints.",
                         "single-numa-node", true, NULL, 0, true},
                        {"QOSClass set as BestEffort. Restricted Policy. No Hints.", "restricted",
                         true, NULL, 0, true},
                        {"QOSClass set as Guaranteed. BestEffort Policy. Preferred Affinity.",
                         "best-effort", true, pref0, 2, true},
                        {"QOSClass set as Guaranteed. BestEffort Policy. More than one Preferred "
                         "Affinity.",
                         "best-effort", true, pref01, 3, true},
                        {"QOSClass set as Guaranteed. BestEffort Policy. No Preferred Affinity.",
                         "best-effort", true, nopref, 1, true},
                        {"QOSClass set as Guaranteed. Restricted Policy. Preferred Affinity.",
                         "restricted", true, pref0, 2, true},
                        {"QOSClass set as Guaranteed. Restricted Policy. More than one Preferred "
                         "affinity.",
                         "restricted", true, pref01, 3, true},
                        {"QOSClass set as Guaranteed. Restricted Policy. No Preferred affinity.",
                         "restricted", true, nopref, 1, false},
                        {"single-numa-node Policy. Preferred Affinity.", "single-numa-node", true,
                         pref0, 2, true},
                        {"single-numa-node Policy. No Preferred affinity.", "single-numa-node",
                         true, nopref, 1, false},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                for (int s = 0; s < 2; s++) {
                        char log[2048] = "";
                        fake_provider f = {.name = "res",
                                           .hints = t[i].hints,
                                           .n_hints = t[i].n,
                                           .no_preference = !t[i].hints,
                                           .log = log};
                        ncm_tm *tm = new_tm(t[i].policy, s ? "pod" : "container", 2);
                        ncm_tm_admit_result res;
                        test_pod tp;
                        make_pod(&tp, "uid", 0, 1);
                        if (t[i].has_provider)
                                assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &f), 0);
                        assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, NULL), 0);
                        if (res.admit != t[i].expect)
                                fail_msg("%s (%s scope): admit %d", t[i].name,
                                         s ? "pod" : "container", res.admit);
                        if (!res.admit) {
                                assert_string_equal(res.reason, "TopologyAffinityError");
                                assert_string_equal(res.message,
                                                    "Resources cannot be allocated with "
                                                    "Topology locality");
                        }
                        ncm_tm_free(tm);
                }
        }
}

/* ---------------------------------------------------------------- scope_test.go */

static void test_tm_get_affinity_add_remove(void **state)
{
        static const ncm_hint h[] = {{1, false, true}};
        char log[2048] = "";
        fake_provider f = {.name = "cpu", .hints = h, .n_hints = 1, .log = log};
        ncm_tm *tm = new_tm("restricted", "container", 2);
        ncm_tm_admit_result res;
        ncm_hint a;
        test_pod tp;
        (void)state;

        /* TestGetAffinity: nothing stored -> the zero hint {nil, false}. */
        a = ncm_tm_get_affinity(tm, "0aafa4c4-38e8-11e9-bcb1-a4bf01040474", "nginx");
        assert_true(a.any && !a.preferred);

        make_pod(&tp, "pod-a", 1, 2);
        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &f), 0);
        assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, NULL), 0);
        assert_true(res.admit);
        for (size_t i = 0; i < 3; i++) {
                a = ncm_tm_get_affinity(tm, "pod-a", i == 0 ? "i0" : i == 1 ? "c0" : "c1");
                assert_true(!a.any && a.numa == 1 && a.preferred);
        }

        /* TestAddContainer / TestRemoveContainer */
        assert_int_equal(ncm_tm_add_container(tm, "pod-a", "c0", "id-c0"), 0);
        assert_int_equal(ncm_tm_add_container(tm, "pod-a", "c1", "id-c1"), 0);
        assert_int_equal(ncm_tm_remove_container(tm, "unknown-id"), 0);
        assert_int_equal(ncm_tm_remove_container(tm, "id-c0"), 0);
        assert_true(ncm_tm_get_affinity(tm, "pod-a", "c0").any);
        assert_false(ncm_tm_get_affinity(tm, "pod-a", "c1").any);
        /* A restarted container: a new id for the same (pod, name) keeps the hint when the old
         * id goes. */
        assert_int_equal(ncm_tm_add_container(tm, "pod-a", "c1", "id-c1-restarted"), 0);
        assert_int_equal(ncm_tm_remove_container(tm, "id-c1"), 0);
        assert_false(ncm_tm_get_affinity(tm, "pod-a", "c1").any);
        assert_int_equal(ncm_tm_remove_container(tm, "id-c1-restarted"), 0);
        assert_true(ncm_tm_get_affinity(tm, "pod-a", "c1").any);
        /* Re-adding an id replaces its mapping. */
        assert_int_equal(ncm_tm_add_container(tm, "pod-a", "i0", "id-x"), 0);
        assert_int_equal(ncm_tm_add_container(tm, "pod-a", "c1", "id-x"), 0);
        assert_int_equal(ncm_tm_remove_container(tm, "id-x"), 0);
        assert_false(ncm_tm_get_affinity(tm, "pod-a", "i0").any);
        /* ncm_tm_remove_pod drops the rest. */
        assert_int_equal(ncm_tm_remove_pod(tm, "pod-a"), 1);
        assert_true(ncm_tm_get_affinity(tm, "pod-a", "i0").any);
        assert_int_equal(ncm_tm_remove_pod(tm, "pod-a"), 0);
        ncm_tm_free(tm);
}

/* A pod's stored hints, saved before a re-admission that changes them and restored after. */
/*
 * The stores give room back after many containers went (issue 20: a pod of 100,000 containers
 * must not leave the node at its peak), and what stays is still found by its keys, the
 * containers' hints and their ids both.
 */
static void test_tm_stores_shrink_and_stay_indexed(void **state)
{
        static const ncm_hint h[] = {{1, false, true}};
        char log[2048] = "";
        fake_provider f = {.name = "cpu", .hints = h, .n_hints = 1, .log = log};
        ncm_tm *tm = new_tm("restricted", "container", 2);
        ncm_tm_admit_result res;
        char uid[16], id[32];
        (void)state;

        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &f), 0);
        for (int i = 0; i < 60; i++) {
                test_pod tp;
                snprintf(uid, sizeof(uid), "p%d", i);
                make_pod(&tp, uid, 0, 4);
                log[0] = '\0';
                assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, NULL), 0);
                assert_true(res.admit);
                for (int c = 0; c < 4; c++) {
                        snprintf(id, sizeof(id), "id-%d-%d", i, c);
                        assert_int_equal(ncm_tm_add_container(tm, uid, tp.names[4 + c], id), 0);
                }
        }
        /* all but the last two go: 8 hints and ids of 240 */
        for (int i = 0; i < 58; i++) {
                snprintf(uid, sizeof(uid), "p%d", i);
                assert_int_equal(ncm_tm_remove_pod(tm, uid), 4);
        }
        for (int i = 0; i < 60; i++) {
                snprintf(uid, sizeof(uid), "p%d", i);
                assert_int_equal(ncm_tm_get_affinity(tm, uid, "c3").any, i < 58);
        }
        /* an id that stayed still finds its container; one that went finds nothing */
        assert_int_equal(ncm_tm_remove_container(tm, "id-59-2"), 0);
        assert_true(ncm_tm_get_affinity(tm, "p59", "c2").any);
        assert_false(ncm_tm_get_affinity(tm, "p59", "c1").any);
        assert_int_equal(ncm_tm_remove_container(tm, "id-3-1"), 0);
        assert_int_equal(ncm_tm_remove_pod(tm, "p58"), 4);
        assert_int_equal(ncm_tm_remove_pod(tm, "p59"), 3);
        ncm_tm_free(tm);
}

static void test_tm_pod_hints_save_restore(void **state)
{
        static const ncm_hint n0[] = {{1, false, true}};
        static const ncm_hint n1[] = {{2, false, true}};
        char log[2048] = "";
        fake_provider f = {.name = "cpu", .hints = n0, .n_hints = 1, .log = log};
        ncm_tm *tm = new_tm("restricted", "container", 2);
        ncm_tm_pod_hints *saved = NULL, *none = NULL;
        ncm_tm_admit_result res;
        ncm_hint a;
        test_pod p1, p2, other;
        (void)state;

        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &f), 0);
        make_pod(&p1, "p", 0, 1);
        make_pod(&other, "other", 0, 1);
        assert_int_equal(ncm_tm_admit(tm, &p1.pod, NULL, &res, NULL), 0);
        assert_true(res.admit);
        assert_int_equal(ncm_tm_admit(tm, &other.pod, NULL, &res, NULL), 0);
        assert_true(res.admit);
        assert_int_equal(ncm_tm_pod_hints_save(tm, "p", &saved, NULL), 0);

        /* p again, now with c1: c0 moves to node 1, c1 gets node 1 and fails to allocate */
        f.hints = n1;
        f.fail_alloc = "c1";
        make_pod(&p2, "p", 0, 2);
        assert_int_equal(ncm_tm_admit(tm, &p2.pod, NULL, &res, NULL), 0);
        assert_false(res.admit);
        assert_int_equal(ncm_tm_get_affinity(tm, "p", "c0").numa, 2);
        assert_int_equal(ncm_tm_get_affinity(tm, "p", "c1").numa, 2);

        assert_int_equal(ncm_tm_pod_hints_restore(tm, saved, NULL), 0);
        a = ncm_tm_get_affinity(tm, "p", "c0");
        assert_true(!a.any && a.numa == 1 && a.preferred);
        a = ncm_tm_get_affinity(tm, "p", "c1");
        assert_true(a.any && !a.preferred);
        a = ncm_tm_get_affinity(tm, "other", "c0");
        assert_true(!a.any && a.numa == 1 && a.preferred);
        /* restoring twice changes nothing more */
        assert_int_equal(ncm_tm_pod_hints_restore(tm, saved, NULL), 0);
        assert_int_equal(ncm_tm_get_affinity(tm, "p", "c0").numa, 1);

        /* a pod saved without hints gets none back; the others keep theirs */
        f.fail_alloc = NULL;
        assert_int_equal(ncm_tm_pod_hints_save(tm, "fresh", &none, NULL), 0);
        make_pod(&p2, "fresh", 1, 1);
        assert_int_equal(ncm_tm_admit(tm, &p2.pod, NULL, &res, NULL), 0);
        assert_true(res.admit);
        assert_false(ncm_tm_get_affinity(tm, "fresh", "i0").any);
        assert_int_equal(ncm_tm_pod_hints_restore(tm, none, NULL), 0);
        assert_true(ncm_tm_get_affinity(tm, "fresh", "i0").any);
        assert_true(ncm_tm_get_affinity(tm, "fresh", "c0").any);
        assert_int_equal(ncm_tm_get_affinity(tm, "p", "c0").numa, 1);
        assert_int_equal(ncm_tm_get_affinity(tm, "other", "c0").numa, 1);
        assert_int_equal(ncm_tm_remove_pod(tm, "fresh"), 0);
        ncm_tm_pod_hints_free(none);
        ncm_tm_pod_hints_free(saved);
        ncm_tm_free(tm);
}

/* ---------------------------------------------------------------- scopes */

static void test_tm_container_scope_order_and_store(void **state)
{
        /* Init containers first, then app containers; providers in registration order; the
         * affinity each allocate sees is the one stored for its container. */
        static const ncm_hint cpu[] = {{1, false, true}, {2, false, true}, {3, false, false}};
        static const ncm_hint dev[] = {{2, false, true}, {3, false, false}};
        char log[2048] = "";
        fake_provider a = {.name = "dev", .hints = dev, .n_hints = 2, .log = log};
        fake_provider b = {.name = "cpu", .hints = cpu, .n_hints = 3, .log = log};
        ncm_tm *tm = new_tm("single-numa-node", "container", 2);
        ncm_tm_admit_result res;
        test_pod tp;
        (void)state;
        make_pod(&tp, "p", 1, 2);
        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &a), 0);
        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &b), 0);
        assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, NULL), 0);
        assert_true(res.admit);
        assert_string_equal(log, "dev:hints(p/i0) cpu:hints(p/i0) dev:alloc(i0,2,p) "
                                 "cpu:alloc(i0,2,p) "
                                 "dev:hints(p/c0) cpu:hints(p/c0) dev:alloc(c0,2,p) "
                                 "cpu:alloc(c0,2,p) "
                                 "dev:hints(p/c1) cpu:hints(p/c1) dev:alloc(c1,2,p) "
                                 "cpu:alloc(c1,2,p) ");
        assert_int_equal(ncm_tm_get_metrics(tm)->admission_requests_total, 1);
        assert_int_equal(ncm_tm_get_metrics(tm)->aligned_container, 3);
        assert_int_equal(ncm_tm_get_metrics(tm)->admission_errors_total, 0);
        ncm_tm_free(tm);
}

static void test_tm_pod_scope_merges_once(void **state)
{
        static const ncm_hint cpu[] = {{1, false, true}, {3, false, false}};
        char log[2048] = "";
        fake_provider a = {.name = "cpu", .hints = cpu, .n_hints = 2, .log = log};
        fake_provider b = {.name = "mem", .no_preference = true, .log = log};
        ncm_tm *tm = new_tm("restricted", "pod", 2);
        ncm_tm_admit_result res;
        test_pod tp;
        (void)state;
        make_pod(&tp, "p", 1, 1);
        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &a), 0);
        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &b), 0);
        assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, NULL), 0);
        assert_true(res.admit);
        assert_string_equal(log, "cpu:podhints(p) mem:podhints(p) cpu:alloc(i0,1,p) "
                                 "mem:alloc(i0,1,p) cpu:alloc(c0,1,p) mem:alloc(c0,1,p) ");
        assert_int_equal(ncm_tm_get_metrics(tm)->aligned_pod, 0); /* restricted: no metric */
        ncm_tm_free(tm);
}

static void test_tm_none_scope_allocates_with_zero_hint(void **state)
{
        static const ncm_hint cpu[] = {{1, false, true}};
        char log[2048] = "";
        fake_provider a = {.name = "cpu", .hints = cpu, .n_hints = 1, .log = log};
        ncm_tm *tm = new_tm("none", "pod", 2);
        ncm_tm_admit_result res;
        test_pod tp;
        (void)state;
        make_pod(&tp, "p", 1, 1);
        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &a), 0);
        assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, NULL), 0);
        assert_true(res.admit);
        assert_string_equal(log, "cpu:alloc(i0,any) cpu:alloc(c0,any) ");
        ncm_tm_free(tm);
}

static void test_tm_allocation_errors(void **state)
{
        static const ncm_hint cpu[] = {{1, false, true}};
        static const struct {
                const char *policy, *scope, *type, *reason, *message;
                const char *log;
        } t[] = {
                        {"best-effort", "container", "SMTAlignmentError", "SMTAlignmentError",
                         "cpu cannot allocate for c0",
                         "dev:hints(p/c0) cpu:hints(p/c0) dev:alloc(c0,1,p) cpu:alloc(c0,1,p) "},
                        {"restricted", "pod", NULL, "UnexpectedAdmissionError",
                         "Allocate failed due to cpu cannot allocate for c0, which is unexpected",
                         "dev:podhints(p) cpu:podhints(p) dev:alloc(c0,1,p) cpu:alloc(c0,1,p) "},
                        /* none: the errors are still the providers' */
                        {"none", "container", NULL, "UnexpectedAdmissionError",
                         "Allocate failed due to cpu cannot allocate for c0, which is unexpected",
                         "dev:alloc(c0,any) cpu:alloc(c0,any) "},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                char log[2048] = "";
                fake_provider a = {.name = "dev", .hints = cpu, .n_hints = 1, .log = log};
                fake_provider b = {.name = "cpu",
                                   .hints = cpu,
                                   .n_hints = 1,
                                   .log = log,
                                   .fail_alloc = "c0",
                                   .fail_type = t[i].type};
                ncm_tm *tm = new_tm(t[i].policy, t[i].scope, 2);
                ncm_tm_admit_result res;
                test_pod tp;
                make_pod(&tp, "p", 0, 2);
                assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &a), 0);
                assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &b), 0);
                assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, NULL), 0);
                assert_false(res.admit);
                assert_string_equal(res.reason, t[i].reason);
                assert_string_equal(res.message, t[i].message);
                assert_string_equal(log, t[i].log); /* c1 is never reached */
                assert_int_equal(ncm_tm_get_metrics(tm)->admission_errors_total,
                                 strcmp(t[i].policy, "none") == 0 ? 0 : 1);
                ncm_tm_free(tm);
        }
}

static void test_tm_container_scope_refusal_midway(void **state)
{
        /* c0 fits on node 0; c1 asks for something no single node gives. c0 keeps its hint and
         * allocation, the pod is refused at c1, and c1 gets neither. */
        static const ncm_hint ok[] = {{1, false, true}};
        static const ncm_hint wide[] = {{3, false, false}};
        char log[2048] = "";
        fake_provider a = {.name = "cpu",
                           .hints = ok,
                           .n_hints = 1,
                           .alt_for = "c1",
                           .alt_hints = wide,
                           .n_alt = 1,
                           .log = log};
        ncm_tm *tm = new_tm("single-numa-node", "container", 2);
        ncm_tm_admit_result res;
        test_pod tp;
        (void)state;
        make_pod(&tp, "q", 0, 2);
        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &a), 0);
        assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, NULL), 0);
        assert_false(res.admit);
        assert_string_equal(res.reason, "TopologyAffinityError");
        assert_string_equal(log, "cpu:hints(q/c0) cpu:alloc(c0,1,p) cpu:hints(q/c1) ");
        assert_false(ncm_tm_get_affinity(tm, "q", "c0").any);
        assert_true(ncm_tm_get_affinity(tm, "q", "c1").any);
        assert_int_equal(ncm_tm_get_metrics(tm)->failure_container, 1);
        assert_int_equal(ncm_tm_get_metrics(tm)->aligned_container, 1);
        assert_int_equal(ncm_tm_get_metrics(tm)->admission_requests_total, 1);
        assert_int_equal(ncm_tm_get_metrics(tm)->admission_errors_total, 1);
        ncm_tm_free(tm);
}

static void test_tm_calculate_affinity_assorted(void **state)
{
        /* scope_container_test.go "Assorted HintProviders", merged by best-effort on 5 nodes:
         * provider 1 has two resources, provider 2 two more, provider 3 no preference. */
        static const ncm_hint r1[] = {{1, false, true}, {3, false, false}};
        static const ncm_hint r2[] = {{4, false, true}, {0x18, false, false}};
        char log[2048] = "";
        fake_provider a = {.name = "resource-1",
                           .hints = r1,
                           .n_hints = 2,
                           .two_resources = true,
                           .log = log};
        fake_provider b = {.name = "resource-2",
                           .hints = r2,
                           .n_hints = 2,
                           .two_resources = true,
                           .log = log};
        fake_provider c = {.name = "resource-3", .no_preference = true, .log = log};
        static const int ids[] = {0, 1, 2, 3, 4};
        ncm_tm_config cfg = {.policy = "best-effort",
                             .gates = NCM_TM_GATES_DEFAULT,
                             .numa_ids = ids,
                             .n_numa = 5};
        ncm_tm *tm = NULL;
        ncm_tm_admit_result res;
        ncm_hint aff;
        test_pod tp;
        (void)state;
        assert_int_equal(ncm_tm_new(&cfg, &tm, NULL), 0);
        make_pod(&tp, "p", 0, 1);
        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &a), 0);
        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &b), 0);
        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &c), 0);
        for (int mode = 0; mode < 2; mode++) {
                ncm_tm_set_merge_mode(tm, (ncm_tm_merge_mode)mode);
                assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, NULL), 0);
                assert_true(res.admit);
                /* No common mask: the non-preferred {0,1} & {3,4} is empty, {0} & {2} too; the
                 * fallback is every node, not preferred. */
                aff = ncm_tm_get_affinity(tm, "p", "c0");
                assert_true(!aff.any && aff.numa == 0x1f && !aff.preferred);
        }
        ncm_tm_free(tm);
}

static void test_tm_provider_hint_failure(void **state)
{
        char log[2048] = "";
        fake_provider a = {.name = "cpu", .fail_hints = EIO, .log = log};
        ncm_tm *tm = new_tm("best-effort", "container", 2);
        ncm_error err = NCM_ERROR_INIT;
        ncm_tm_admit_result res = {.admit = true};
        test_pod tp;
        (void)state;
        make_pod(&tp, "p", 0, 1);
        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &a), 0);
        assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, &err), -EIO);
        assert_string_equal(err.msg, "fake hints for pod 'p': hints failed");
        assert_true(res.admit); /* untouched */
        ncm_tm_free(tm);
}

static void test_tm_allocation_failure_is_not_a_decision(void **state)
{
        /* The topology manager classifies: EINVAL and nodecm's admission codes are refusals,
         * anything else (memory, I/O) a failure that ncm_tm_admit() returns. */
        static const ncm_hint one[] = {{1, false, true}};
        static const struct {
                int code;
                int rc;
                const char *reason;
        } t[] = {
                        {NCM_E_UNSATISFIABLE, 0, "UnexpectedAdmissionError"},
                        {NCM_E_ADMISSION, 0, "UnexpectedAdmissionError"},
                        {EINVAL, 0, "UnexpectedAdmissionError"},
                        {EIO, -EIO, NULL},
                        {ENOMEM, -ENOMEM, NULL},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                char log[2048] = "";
                fake_provider a = {.name = "cpu",
                                   .hints = one,
                                   .n_hints = 1,
                                   .log = log,
                                   .fail_alloc = "c0",
                                   .fail_alloc_code = t[i].code};
                ncm_tm *tm = new_tm("restricted", "container", 2);
                ncm_error err = NCM_ERROR_INIT;
                ncm_tm_admit_result res = {.admit = true};
                test_pod tp;
                make_pod(&tp, "p", 0, 1);
                assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &a), 0);
                assert_int_equal(ncm_tm_admit(tm, &tp.pod, (void *)"T", &res, &err), t[i].rc);
                assert_string_equal(log, "cpu:hints(p/c0) [T] cpu:alloc(c0,1,p) [T] ");
                if (t[i].reason) {
                        assert_false(res.admit);
                        assert_string_equal(res.reason, t[i].reason);
                } else {
                        assert_true(res.admit); /* untouched */
                        assert_int_equal(err.code, t[i].code);
                        assert_string_equal(err.msg, "cpu cannot allocate for c0");
                }
                ncm_tm_free(tm);
        }
}

/* Records trace events as text. */
static void on_trace(void *data, const ncm_tm_trace_event *ev)
{
        char *log = data;
        switch (ev->kind) {
        case NCM_TM_TRACE_HINTS:
                logf_(log, "H%zu(%s,%zu) ", ev->provider,
                      ev->call && ev->call->container ? ev->call->container->name : "pod",
                      ev->hints->n);
                break;
        case NCM_TM_TRACE_LIST:
                logf_(log, "L%zu(%s,%d", ev->provider, ev->resource ? ev->resource : "-",
                      (int)ev->list);
                for (size_t i = 0; i < ev->n_list_hints; i++) {
                        const ncm_hint *h = &ev->list_hints[i];
                        if (h->any)
                                logf_(log, ",any%s", h->preferred ? "*" : "");
                        else
                                logf_(log, ",%llx%s", (unsigned long long)h->numa,
                                      h->preferred ? "*" : "");
                }
                logf_(log, ") ");
                break;
        case NCM_TM_TRACE_CANDIDATE:
                logf_(log, "C%llx ", (unsigned long long)ev->hint.numa);
                break;
        case NCM_TM_TRACE_MERGED:
                if (ev->hint.any)
                        logf_(log, "Many");
                else
                        logf_(log, "M%llx", (unsigned long long)ev->hint.numa);
                logf_(log, "%s%s ", ev->hint.preferred ? "*" : "", ev->admit ? "" : "!");
                break;
        }
}

static void test_tm_merge_trace(void **state)
{
        /* The trace reports each provider's answer, the normalised lists (resources sorted),
         * the preferred candidates (fewest nodes first) and the result, identically for both
         * merges; a provider with an empty list makes the resource unsatisfiable. */
        static const ncm_hint cpu[] = {{2, false, true}, {1, false, true}, {3, false, false}};
        static const ncm_hint gpu[] = {{1, false, true}, {2, false, true}, {3, false, false}};
        static const struct {
                const char *policy;
                size_t n_gpu;
                const char *want;
        } t[] = {
                        {"best-effort", 3,
                         "H0(c0,1) H1(c0,1) L0(cpu,0,2*,1*,3) L1(gpu,0,1*,2*,3) C1 C2 M1* "},
                        {"best-effort", 0, "H0(c0,1) H1(c0,1) L0(cpu,0,2*,1*,3) L1(gpu,2,any) M1 "},
                        {"single-numa-node", 0,
                         "H0(c0,1) H1(c0,1) L0(cpu,0,2*,1*) L1(gpu,2) Many! "},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                for (int mode = 0; mode < 2; mode++) {
                        char log[2048] = "", tlog[2048] = "";
                        fake_provider a = {.name = "cpu", .hints = cpu, .n_hints = 3, .log = log};
                        fake_provider b = {.name = "gpu",
                                           .hints = gpu,
                                           .n_hints = t[i].n_gpu,
                                           .log = log};
                        ncm_tm_trace tr = {on_trace, tlog};
                        ncm_tm *tm = new_tm(t[i].policy, "container", 2);
                        ncm_tm_admit_result res;
                        test_pod tp;
                        make_pod(&tp, "p", 0, 1);
                        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &a), 0);
                        assert_int_equal(ncm_tm_add_provider(tm, &fake_ops, &b), 0);
                        ncm_tm_set_merge_mode(tm, (ncm_tm_merge_mode)mode);
                        ncm_tm_set_trace(tm, &tr);
                        assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, NULL), 0);
                        assert_string_equal(tlog, t[i].want);
                        ncm_tm_set_trace(tm, NULL);
                        tlog[0] = '\0';
                        ncm_tm_remove_pod(tm, "p");
                        assert_int_equal(ncm_tm_admit(tm, &tp.pod, NULL, &res, NULL), 0);
                        assert_string_equal(tlog, "");
                        ncm_tm_free(tm);
                }
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_tm_new_manager),
                        cmocka_unit_test(test_tm_manager_scope),
                        cmocka_unit_test(test_tm_admit_table),
                        cmocka_unit_test(test_tm_get_affinity_add_remove),
                        cmocka_unit_test(test_tm_stores_shrink_and_stay_indexed),
                        cmocka_unit_test(test_tm_pod_hints_save_restore),
                        cmocka_unit_test(test_tm_container_scope_order_and_store),
                        cmocka_unit_test(test_tm_pod_scope_merges_once),
                        cmocka_unit_test(test_tm_none_scope_allocates_with_zero_hint),
                        cmocka_unit_test(test_tm_allocation_errors),
                        cmocka_unit_test(test_tm_container_scope_refusal_midway),
                        cmocka_unit_test(test_tm_calculate_affinity_assorted),
                        cmocka_unit_test(test_tm_provider_hint_failure),
                        cmocka_unit_test(test_tm_allocation_failure_is_not_a_decision),
                        cmocka_unit_test(test_tm_merge_trace),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
