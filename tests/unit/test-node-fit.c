/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's resource-fit admission: the predicate (ncm_node_fit_check) on tables in the
 * shape of the scheduler's noderesources tests (TestEnoughRequests: a pod, the pods already on
 * the node, the node's allocatable; the first insufficient resource with what was requested,
 * used and allocatable), and the node's use of it: allocatable from the configuration, the
 * managers' reason first, nothing changed by a refusal, the kubelet-in-front flag and
 * fitAdmission.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <nodecm/node-fit.h>
#include <nodecm/node.h>
#include "testutil.h"

static ncm_pod *pod(const char *uid, const char *spec)
{
        char text[2048];
        ncm_pod *p = NULL;
        ncm_error err = NCM_ERROR_INIT;

        snprintf(text, sizeof(text),
                 "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": %s}", uid, uid,
                 spec);
        if (ncm_pod_parse(text, strlen(text), NULL, &p, &err) < 0)
                fail_msg("pod %s: %s", text, err.msg);
        return p;
}

/* {"containers": [{"name": "c", "resources": {"requests": {REQ}}}]} */
static ncm_pod *pod_req(const char *uid, const char *req)
{
        char spec[1024];
        /* extended resources cannot be overcommitted: give them as limits */
        snprintf(spec, sizeof(spec),
                 "{\"containers\": [{\"name\": \"c\", \"resources\": {\"%s\": {%s}}}]}",
                 strchr(req, '/') ? "limits" : "requests", req);
        return pod(uid, spec);
}

static void alloc_of(ncm_resource_list *l, const char *text)
{
        ncm_error err = NCM_ERROR_INIT;
        *l = (ncm_resource_list){0};
        if (text[0] && ncm_cgroup_parse_capacity(text, l, &err) < 0)
                fail_msg("allocatable %s: %s", text, err.msg);
}

typedef struct fit_case {
        const char *name;
        const char *spec;    /* the pod's spec (JSON) */
        const char *used;    /* one pod already on the node requesting this (NULL: none) */
        const char *alloc;   /* allocatable, the --capacity syntax */
        const char *reason;  /* NULL: fits */
        const char *message; /* the kubelet's, when refused */
} fit_case;

#define APP(req) "{\"containers\": [{\"name\": \"a\", \"resources\": {\"requests\": {" req "}}}]}"
/* extended resources and hugepages cannot be overcommitted: a limit, copied to the request */
#define APPL(lim) "{\"containers\": [{\"name\": \"a\", \"resources\": {\"limits\": {" lim "}}}]}"
#define INIT(ireq, req)                                                                            \
        "{\"initContainers\": [{\"name\": \"i\", \"resources\": {\"requests\": {" ireq "}}}], "    \
        "\"containers\": [{\"name\": \"a\", \"resources\": {\"requests\": {" req "}}}]}"

static const fit_case cases[] = {
                {"no resources requested always fits", "{\"containers\": [{\"name\": \"a\"}]}",
                 "\"cpu\": \"10\", \"memory\": \"20\"", "cpu=10,memory=20,pods=32", NULL, NULL},
                {"too many resources fails", APP("\"cpu\": \"1\", \"memory\": \"1\""),
                 "\"cpu\": \"10\", \"memory\": \"20\"", "cpu=10,memory=20,pods=32", "OutOfcpu",
                 "Node didn't have enough resource: cpu, requested: 1000, used: 10000, capacity: "
                 "10000"},
                {"too many resources fails due to init container cpu",
                 INIT("\"cpu\": \"3\", \"memory\": \"1\"", "\"cpu\": \"1\", \"memory\": \"1\""),
                 "\"cpu\": \"8\", \"memory\": \"19\"", "cpu=10,memory=20,pods=32", "OutOfcpu",
                 "Node didn't have enough resource: cpu, requested: 3000, used: 8000, capacity: "
                 "10000"},
                {"init container cpu fits because it's the max, not sum",
                 INIT("\"cpu\": \"3\", \"memory\": \"1\"", "\"cpu\": \"1\", \"memory\": \"1\""),
                 "\"cpu\": \"5\", \"memory\": \"19\"", "cpu=10,memory=20,pods=32", NULL, NULL},
                {"both resources fit", APP("\"cpu\": \"1\", \"memory\": \"1\""),
                 "\"cpu\": \"5\", \"memory\": \"5\"", "cpu=10,memory=20,pods=32", NULL, NULL},
                {"one resource memory fits", APP("\"cpu\": \"2\", \"memory\": \"1\""),
                 "\"cpu\": \"9\", \"memory\": \"5\"", "cpu=10,memory=20,pods=32", "OutOfcpu",
                 "Node didn't have enough resource: cpu, requested: 2000, used: 9000, capacity: "
                 "10000"},
                {"one resource cpu fits", APP("\"cpu\": \"1\", \"memory\": \"2\""),
                 "\"cpu\": \"5\", \"memory\": \"19\"", "cpu=10,memory=20,pods=32", "OutOfmemory",
                 "Node didn't have enough resource: memory, requested: 2, used: 19, capacity: 20"},
                {"equal edge case", APP("\"cpu\": \"5\", \"memory\": \"19\""),
                 "\"cpu\": \"5\", \"memory\": \"1\"", "cpu=10,memory=20,pods=32", NULL, NULL},
                {"extended resource fits", APPL("\"example.com/aaa\": \"1\""), NULL,
                 "cpu=10,example.com/aaa=5,pods=32", NULL, NULL},
                {"extended resource capacity enforced", APPL("\"example.com/aaa\": \"10\""), NULL,
                 "cpu=10,example.com/aaa=5,pods=32", "OutOfexample.com/aaa",
                 "Node didn't have enough resource: example.com/aaa, requested: 10, used: 0, "
                 "capacity: 5"},
                {"extended resource allocatable enforced for used",
                 APPL("\"example.com/aaa\": \"1\""), "\"example.com/aaa\": \"5\"",
                 "cpu=10,example.com/aaa=5,pods=32", "OutOfexample.com/aaa",
                 "Node didn't have enough resource: example.com/aaa, requested: 1, used: 5, "
                 "capacity: 5"},
                {"extended resource the node does not have is dropped (cluster-level)",
                 APPL("\"example.com/bbb\": \"100\""), NULL, "cpu=10,pods=32", NULL, NULL},
                {"hugepages in bytes", APPL("\"hugepages-2Mi\": \"6Mi\", \"memory\": \"6Mi\""),
                 NULL, "cpu=10,memory=1Gi,hugepages-2Mi=4Mi,pods=32", "OutOfhugepages-2Mi",
                 "Node didn't have enough resource: hugepages-2Mi, requested: 6291456, used: 0, "
                 "capacity: 4194304"},
                {"ephemeral storage", APP("\"ephemeral-storage\": \"10Gi\""),
                 "\"ephemeral-storage\": \"95Gi\"", "cpu=10,ephemeral-storage=100Gi,pods=32",
                 "OutOfephemeral-storage",
                 "Node didn't have enough resource: ephemeral-storage, requested: 10737418240, "
                 "used: 102005473280, capacity: 107374182400"},
                {"too many pods, whatever the pod requests",
                 "{\"containers\": [{\"name\": \"a\"}]}", "\"cpu\": \"1\"", "cpu=10,pods=1",
                 "OutOfpods",
                 "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"},
                {"the first failure: cpu before memory", APP("\"cpu\": \"20\", \"memory\": \"40\""),
                 NULL, "cpu=10,memory=20,pods=32", "OutOfcpu",
                 "Node didn't have enough resource: cpu, requested: 20000, used: 0, capacity: "
                 "10000"},
                {"scalars in name order",
                 APPL("\"example.com/zzz\": \"9\", \"example.com/aaa\": \"9\""), NULL,
                 "example.com/aaa=1,example.com/zzz=1,pods=32", "OutOfexample.com/aaa",
                 "Node didn't have enough resource: example.com/aaa, requested: 9, used: 0, "
                 "capacity: 1"},
                {"a resource nodecm does not know the amount of is not checked",
                 APP("\"cpu\": \"1\", \"memory\": \"100Gi\""), NULL, "cpu=10,pods=32", NULL, NULL},
                {"fractions round up as Quantity.Value() does",
                 APPL("\"example.com/aaa\": \"1500m\""), NULL, "example.com/aaa=1,pods=32",
                 "OutOfexample.com/aaa",
                 "Node didn't have enough resource: example.com/aaa, requested: 2, used: 0, "
                 "capacity: 1"},
                {"overhead counts",
                 "{\"overhead\": {\"cpu\": \"500m\"}, \"containers\": [{\"name\": "
                 "\"a\", \"resources\": {\"requests\": {\"cpu\": \"1\"}}}]}",
                 NULL, "cpu=1200m,pods=32", "OutOfcpu",
                 "Node didn't have enough resource: cpu, requested: 1500, used: 0, capacity: 1200"},
                {"sidecars add to the app containers",
                 "{\"initContainers\": [{\"name\": \"s\", \"restartPolicy\": \"Always\", "
                 "\"resources\": {\"requests\": {\"cpu\": \"2\"}}}], \"containers\": [{\"name\": "
                 "\"a\", \"resources\": {\"requests\": {\"cpu\": \"2\"}}}]}",
                 NULL, "cpu=3,pods=32", "OutOfcpu",
                 "Node didn't have enough resource: cpu, requested: 4000, used: 0, capacity: 3000"},
};

static void test_node_fit_predicate_table(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                const fit_case *c = &cases[i];
                ncm_autoptr(ncm_pod) p = pod("p", c->spec);
                ncm_autoptr(ncm_pod) u = c->used ? pod_req("u", c->used) : NULL;
                const ncm_pod *others[1] = {u};
                ncm_resource_list alloc;
                ncm_node_fit fit;
                ncm_error err = NCM_ERROR_INIT;

                alloc_of(&alloc, c->alloc);
                if (ncm_node_fit_check(p, others, u ? 1 : 0, &alloc, 0, &fit, &err) < 0)
                        fail_msg("%s: %s", c->name, err.msg);
                ncm_resource_list_done(&alloc);
                if (!c->reason) {
                        if (!fit.fit)
                                fail_msg("%s: refused %s %s", c->name, fit.reason, fit.message);
                        continue;
                }
                if (fit.fit)
                        fail_msg("%s: fits, expected %s", c->name, c->reason);
                if (strcmp(fit.reason, c->reason) != 0 || strcmp(fit.message, c->message) != 0)
                        fail_msg("%s: %s '%s', expected %s '%s'", c->name, fit.reason, fit.message,
                                 c->reason, c->message);
        }
}

/* pod-level resources replace the containers' aggregate unless the gate is off */
static void test_node_fit_pod_level_resources(void **state)
{
        ncm_autoptr(ncm_pod) p = pod("p", "{\"resources\": {\"requests\": {\"cpu\": \"4\"}}, "
                                          "\"containers\": [{\"name\": \"a\", \"resources\": "
                                          "{\"requests\": {\"cpu\": \"1\"}}}]}");
        ncm_resource_list alloc;
        ncm_node_fit fit;
        (void)state;

        alloc_of(&alloc, "cpu=2,pods=10");
        assert_int_equal(ncm_node_fit_check(p, NULL, 0, &alloc, 0, &fit, NULL), 0);
        assert_false(fit.fit);
        assert_int_equal(fit.requested, 4000);
        assert_int_equal(ncm_node_fit_check(p, NULL, 0, &alloc, NCM_NODE_FIT_NO_POD_LEVEL, &fit,
                                            NULL),
                         0);
        assert_true(fit.fit);
        ncm_resource_list_done(&alloc);
}

/* ---- the node ---- */

typedef struct nfx {
        ncm_topo *t;
        ncm_node_config *cfg;
        ncm_node *n;
        ncm_resource_list cap;
} nfx;

static void nfx_new(nfx *f, const char *synthetic, const char *kubelet, const char *capacity,
                    const char *state_dir)
{
        ncm_node_options o = {0};
        ncm_error err = NCM_ERROR_INIT;

        *f = (nfx){0};
        assert_int_equal(ncm_topo_from_synthetic(synthetic, &f->t, NULL), 0);
        if (ncm_node_config_parse(kubelet, strlen(kubelet), NULL, "", &f->cfg, &err) < 0)
                fail_msg("config: %s", err.msg);
        if (capacity) {
                alloc_of(&f->cap, capacity);
                o.capacity = &f->cap;
        }
        o.state_dir = state_dir;
        if (ncm_node_new(f->t, f->cfg, &o, &f->n, &err) < 0)
                fail_msg("node: %s", err.msg);
}

static void nfx_done(nfx *f)
{
        ncm_node_free(f->n);
        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->t);
        ncm_resource_list_done(&f->cap);
}

/* Admit UID requesting REQ with FLAGS; "" when admitted, else "Reason: message". */
static const char *admit(nfx *f, const char *uid, const char *req, unsigned flags)
{
        static char out[1200];
        ncm_autoptr(ncm_pod) p = pod_req(uid, req);
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;

        if (ncm_node_admit(f->n, p, flags, &a, &err) < 0)
                fail_msg("admit %s: %s", uid, err.msg);
        if (a->admitted)
                out[0] = '\0';
        else
                snprintf(out, sizeof(out), "%s: %s", a->reason, a->message);
        ncm_node_admission_free(a);
        return out;
}

/* On TOPOLOGY with configuration K, two empty pods fit and a third is refused for pods. */
static void two_pods_fit(const char *topology, const char *k)
{
        nfx f;

        nfx_new(&f, topology, k, NULL, NULL);
        assert_string_equal(admit(&f, "a", "", 0), "");
        assert_string_equal(admit(&f, "b", "", 0), "");
        assert_string_equal(admit(&f, "c", "", 0),
                            "OutOfpods: Node didn't have enough resource: pods, requested: 1, "
                            "used: 2, capacity: 2");
        nfx_done(&f);
}

/*
 * The none policy pins nothing, so only the predicates stop a pod that does not fit: 4 CPUs,
 * two pods of 2, the third is OutOfcpu. The reservations count (allocatable), as do maxPods
 * and podsPerCore.
 */
static void test_node_fit_node_refuses(void **state)
{
        nfx f;
        (void)state;

        nfx_new(&f, "package:1 core:4 pu:1", "{}", NULL, NULL);
        assert_string_equal(admit(&f, "a", "\"cpu\": \"2\"", 0), "");
        assert_string_equal(admit(&f, "b", "\"cpu\": \"2\"", 0), "");
        assert_string_equal(admit(&f, "c", "\"cpu\": \"100m\"", 0),
                            "OutOfcpu: Node didn't have enough resource: cpu, requested: 100, "
                            "used: 4000, capacity: 4000");
        /* the same pod again (a re-admission) does not count itself */
        assert_string_equal(admit(&f, "b", "\"cpu\": \"2\"", 0), "");
        /* behind a kubelet, the kubelet checked */
        assert_string_equal(admit(&f, "c", "\"cpu\": \"100m\"", NCM_NODE_KUBELET_ADMITTED), "");
        nfx_done(&f);

        /* kubeReserved and the memory capacity given */
        nfx_new(&f, "package:1 core:4 pu:1",
                "{\"kubeReserved\": {\"cpu\": \"1\", \"memory\": \"1Gi\"}}", "memory=4Gi", NULL);
        assert_string_equal(admit(&f, "a", "\"cpu\": \"3\", \"memory\": \"2Gi\"", 0), "");
        assert_string_equal(admit(&f, "b", "\"memory\": \"1Gi\"", 0),
                            "OutOfmemory: Node didn't have enough resource: memory, requested: "
                            "1073741824, used: 2147483648, capacity: 3116367872");
        assert_string_equal(admit(&f, "c", "\"cpu\": \"1m\"", 0),
                            "OutOfcpu: Node didn't have enough resource: cpu, requested: 1, used: "
                            "3000, capacity: 3000");
        nfx_done(&f);

        /* maxPods, and podsPerCore when it allows fewer */
        two_pods_fit("package:1 core:4 pu:1", "{\"maxPods\": 2}");
        two_pods_fit("package:1 core:2 pu:1", "{\"podsPerCore\": 1, \"maxPods\": 10}");
}

/* fitAdmission: never checks, always checks even behind a kubelet */
static void test_node_fit_setting(void **state)
{
        nfx f;
        (void)state;

        nfx_new(&f, "package:1 core:2 pu:1", "{\"fitAdmission\": \"never\"}", NULL, NULL);
        assert_string_equal(admit(&f, "a", "\"cpu\": \"8\"", 0), "");
        nfx_done(&f);
        nfx_new(&f, "package:1 core:2 pu:1", "{\"fitAdmission\": \"always\"}", NULL, NULL);
        assert_string_equal(admit(&f, "a", "\"cpu\": \"8\"", NCM_NODE_KUBELET_ADMITTED),
                            "OutOfcpu: Node didn't have enough resource: cpu, requested: 8000, "
                            "used: 0, capacity: 2000");
        nfx_done(&f);
        {
                ncm_node_config *c = NULL;
                ncm_error err = NCM_ERROR_INIT;
                const char *k = "{\"fitAdmission\": \"sometimes\"}";
                assert_int_equal(ncm_node_config_parse(k, strlen(k), NULL, "", &c, &err), -EINVAL);
                assert_string_equal(err.msg,
                                    "fitAdmission: unknown fitAdmission \"sometimes\" (auto, "
                                    "always or never)");
                k = "{\"maxPods\": -1}";
                assert_int_equal(ncm_node_config_parse(k, strlen(k), NULL, "", &c, &err), -EINVAL);
                assert_string_equal(err.msg, "maxPods: invalid configuration: maxPods (--max-pods) "
                                             "-1 must not be a negative number");
        }
}

/*
 * The kubelet's allocation handler admits before the predicates: a Guaranteed pod the static
 * policy cannot give CPUs to is refused with the CPU manager's reason, not OutOfcpu, though
 * both refuse it. And a refusal changes nothing: not the state, not its file.
 */
static void test_node_fit_managers_first_and_nothing_changes(void **state)
{
        ncm_autofree char *dir = tu_mkdtemp();
        char path[4096];
        struct stat before, after;
        ncm_autofree char *text0 = NULL;
        ncm_autofree char *text1 = NULL;
        uint64_t tm0;
        nfx f;
        const char *r;
        (void)state;

        nfx_new(&f, "package:1 core:4 pu:1",
                "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}", NULL, dir);
        /* a Guaranteed pod holds CPUs 1-2: one CPU is left in the shared pool */
        {
                ncm_autoptr(ncm_pod) g =
                                pod("a", "{\"containers\": [{\"name\": \"c\", \"resources\": "
                                         "{\"limits\": {\"cpu\": \"2\", \"memory\": "
                                         "\"1Gi\"}}}]}");
                ncm_node_admission *a = NULL;
                assert_int_equal(ncm_node_admit(f.n, g, 0, &a, NULL), 0);
                assert_true(a->admitted);
                ncm_node_admission_free(a);
        }
        snprintf(path, sizeof(path), "%s/cpu_manager_state", dir);
        assert_int_equal(stat(path, &before), 0);
        text0 = tu_file_text(dir, "cpu_manager_state");
        tm0 = ncm_node_get_counters(f.n)->tm_admissions;
        /* 3 more CPUs: the CPU manager has 1 and refuses first, though the predicates would
         * refuse it too */
        {
                char spec[512];
                ncm_autoptr(ncm_pod) p = NULL;
                ncm_node_admission *a = NULL;
                snprintf(spec, sizeof(spec),
                         "{\"containers\": [{\"name\": \"c\", \"resources\": {\"limits\": "
                         "{\"cpu\": \"3\", \"memory\": \"1Gi\"}}}]}");
                p = pod("g", spec);
                assert_int_equal(ncm_node_admit(f.n, p, 0, &a, NULL), 0);
                assert_false(a->admitted);
                assert_string_equal(a->reason, "UnexpectedAdmissionError");
                assert_non_null(strstr(a->message, "not enough cpus available"));
                ncm_node_admission_free(a);
        }
        /* a Burstable pod the CPU manager admits: the predicates refuse it */
        r = admit(&f, "b", "\"cpu\": \"1500m\"", 0);
        assert_string_equal(r, "OutOfcpu: Node didn't have enough resource: cpu, requested: "
                               "1500, used: 2000, capacity: 3000");
        assert_int_equal(stat(path, &after), 0);
        text1 = tu_file_text(dir, "cpu_manager_state");
        assert_string_equal(text0, text1);
        assert_true(before.st_ino == after.st_ino);
        assert_true(before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
                    before.st_mtim.tv_nsec == after.st_mtim.tv_nsec);
        /* the managers' admissions were counted, as the kubelet counts them */
        assert_int_equal(ncm_node_get_counters(f.n)->tm_admissions, tm0 + 2);
        nfx_done(&f);
        tu_rm_rf(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_node_fit_predicate_table),
                        cmocka_unit_test(test_node_fit_pod_level_resources),
                        cmocka_unit_test(test_node_fit_node_refuses),
                        cmocka_unit_test(test_node_fit_setting),
                        cmocka_unit_test(test_node_fit_managers_first_and_nothing_changes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
