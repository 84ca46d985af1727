/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's enforcement port on a fake cgroup tree, per enforcer: node allocatable at start,
 * an admission (pod and container cgroups, the exclusive cpuset, other pods' shared containers
 * following the pool), a refusal that writes nothing, an enforcement failure midway that leaves
 * state and tree byte-identical, a removal, reconcile; the plan and none enforcers; the
 * kubelet's required-controller check.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/enforcer.h>
#include <nodecm/fs.h>
#include <nodecm/node.h>
#include "fakecg.h"
#include "testutil.h"

/* failCgroupV1: false, or a kubelet from 1.35 on would not start on the v1 trees */
#define KUBELET                                                                                    \
        "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "                       \
        "\"topologyManagerPolicy\": \"single-numa-node\", \"failCgroupV1\": false}"

typedef struct fx {
        fake fk;
        ncm_topo *t;
        ncm_node_config *cfg;
        ncm_resource_list capacity;
        ncm_enforcer *e;
        ncm_node *n;
} fx;

static ncm_pod *pod_yaml(const char *uid, const char *qos_cpu)
{
        char text[1024];
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;

        if (qos_cpu)
                snprintf(text, sizeof(text),
                         "metadata: {name: %s, uid: %s}\nspec:\n  containers:\n  - name: app\n"
                         "    resources: {limits: {cpu: \"%s\", memory: 128Mi}}\n  - name: side\n"
                         "    resources: {limits: {cpu: 100m, memory: 64Mi}}\n",
                         uid, uid, qos_cpu);
        else
                snprintf(text, sizeof(text),
                         "metadata: {name: %s, uid: %s}\nspec:\n  containers:\n  - name: web\n"
                         "    resources: {requests: {cpu: 100m}}\n",
                         uid, uid);
        if (ncm_pod_parse(text, strlen(text), "test", &pod, &err) < 0)
                fail_msg("pod: %s", err.msg);
        return pod;
}

static int fx_try(fx *f, int version, const char *enforcer, ncm_error *err)
{
        ncm_enforcer_cgroup_options o = {0};
        ncm_node_options no = {0};
        ncm_quantity q;
        int r;

        memset(f, 0, sizeof(*f));
        fake_init(&f->fk, version, false);
        assert_int_equal(ncm_topo_from_synthetic("package:1 core:4 pu:1", &f->t, NULL), 0);
        assert_int_equal(ncm_node_config_parse(KUBELET, strlen(KUBELET), "k", "", &f->cfg, NULL),
                         0);
        assert_int_equal(ncm_quantity_parse("4", &q, NULL), 0);
        assert_int_equal(ncm_cgroup_resource_list_set(&f->capacity, "cpu", &q), 0);
        assert_int_equal(ncm_quantity_parse("8Gi", &q, NULL), 0);
        assert_int_equal(ncm_cgroup_resource_list_set(&f->capacity, "memory", &q), 0);
        o.mount_root = f->fk.dir;
        o.cgroup_version = version;
        o.capacity = &f->capacity;
        o.exec = &f->fk.exec;
        if (strcmp(enforcer, "cgroupfs") == 0)
                r = ncm_enforcer_cgroupfs_new(&o, &f->e, err);
        else if (strcmp(enforcer, "plan") == 0)
                r = ncm_enforcer_plan_new(&o, &f->e, err);
        else
                r = ncm_enforcer_none_new(&f->e, err);
        if (r < 0)
                return r;
        no.enforcer = f->e;
        return ncm_node_new(f->t, f->cfg, &no, &f->n, err);
}

static void fx_new(fx *f, int version, const char *enforcer)
{
        ncm_error err = NCM_ERROR_INIT;
        if (fx_try(f, version, enforcer, &err) < 0)
                fail_msg("node: %s", err.msg);
}

static void fx_done(fx *f)
{
        ncm_node_free(f->n);
        ncm_enforcer_free(f->e);
        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->t);
        ncm_resource_list_done(&f->capacity);
        fake_done(&f->fk);
}

static ncm_node_admission *admit(fx *f, const ncm_pod *pod, int want_rc, ncm_error *err)
{
        ncm_node_admission *a = NULL;
        int r = ncm_node_admit(f->n, pod, 0, &a, err);
        if (r != want_rc)
                fail_msg("admit %s: %d (%s), want %d", pod->uid, r, err->msg, want_rc);
        return a;
}

/* The file of a v1 cpuset or v2 unified cgroup at REL below kubepods. */
static void cpuset_path(const fx *f, const char *rel, char *buf, size_t size)
{
        snprintf(buf, size, "%s/kubepods/%s/cpuset.cpus", f->fk.version == 1 ? "/cpuset" : "", rel);
}

static char *state_text(const fx *f)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_node_format_state_json(f->n, &b);
        return ncm_buf_steal(&b);
}

static void test_node_enforce_cgroupfs_admit_remove(void **state)
{
        (void)state;
        for (int version = 1; version <= 2; version++) {
                fx f;
                ncm_error err = NCM_ERROR_INIT;
                ncm_autoptr(ncm_pod) b = pod_yaml("bbbb", NULL);
                ncm_autoptr(ncm_pod) g = pod_yaml("gggg", "2");
                ncm_node_admission *a;
                ncm_autoptr(ncm_cpuset) rel = ncm_cpuset_new();
                char p[512];

                fx_new(&f, version, "cgroupfs");
                /* node allocatable at start: kubepods and the tiers exist */
                assert_int_equal(ncm_fs_exists(f.fk.rootfd, version == 1 ? "/cpu/kubepods/burstable"
                                                                         : "/kubepods/besteffort"),
                                 1);
                a = admit(&f, b, 0, &err);
                assert_true(a->admitted);
                ncm_node_admission_free(a);
                cpuset_path(&f, "burstable/podbbbb/web", p, sizeof(p));
                assert_file(&f.fk, p, "0-3");

                a = admit(&f, g, 0, &err);
                assert_true(a->admitted);
                ncm_node_admission_free(a);
                /* the exclusive CPUs, and the shared pool for everyone else */
                cpuset_path(&f, "podgggg/app", p, sizeof(p));
                assert_file(&f.fk, p, "1-2");
                cpuset_path(&f, "podgggg/side", p, sizeof(p));
                assert_file(&f.fk, p, "0,3");
                cpuset_path(&f, "burstable/podbbbb/web", p, sizeof(p));
                assert_file(&f.fk, p, "0,3");

                /* the Guaranteed pod goes: the pool grows back for the burstable one */
                assert_int_equal(ncm_node_remove_pod(f.n, "gggg", rel, &err), 1);
                tu_assert_cpuset(rel, "1-2");
                assert_file(&f.fk, p, "0-3");
                assert_int_equal(ncm_fs_exists(f.fk.rootfd, version == 1 ? "/cpu/kubepods/podgggg"
                                                                         : "/kubepods/podgggg"),
                                 0);
                fx_done(&f);
        }
}

static void test_node_enforce_refusal_writes_nothing(void **state)
{
        (void)state;
        for (int version = 1; version <= 2; version++) {
                fx f;
                ncm_error err = NCM_ERROR_INIT;
                ncm_autoptr(ncm_pod) big = pod_yaml("huge", "8");
                ncm_node_admission *a;
                char *before, *after, *s1, *s2;

                fx_new(&f, version, "cgroupfs");
                before = fake_snapshot(&f.fk);
                s1 = state_text(&f);
                a = admit(&f, big, 0, &err);
                assert_false(a->admitted);
                ncm_node_admission_free(a);
                after = fake_snapshot(&f.fk);
                s2 = state_text(&f);
                assert_string_equal(before, after);
                assert_string_equal(s1, s2);
                free(before);
                free(after);
                free(s1);
                free(s2);
                fx_done(&f);
        }
}

static void test_node_enforce_failure_rolls_back(void **state)
{
        (void)state;
        for (int version = 1; version <= 2; version++) {
                fx f;
                ncm_error err = NCM_ERROR_INIT;
                ncm_autoptr(ncm_pod) b = pod_yaml("bbbb", NULL);
                ncm_autoptr(ncm_pod) g = pod_yaml("gggg", "2");
                ncm_node_admission *a;
                char *before, *after, *s1, *s2;
                char p[512];

                fx_new(&f, version, "cgroupfs");
                a = admit(&f, b, 0, &err);
                ncm_node_admission_free(a);
                before = fake_snapshot(&f.fk);
                s1 = state_text(&f);
                /* the new pod's cgroup breaks halfway */
                f.fk.fail_on = "podgggg";
                assert_null(admit(&f, g, -NCM_E_ENFORCEMENT, &err));
                assert_non_null(strstr(err.msg, "enforce pod 'gggg'"));
                assert_non_null(strstr(err.msg, "rolled back"));
                after = fake_snapshot(&f.fk);
                s2 = state_text(&f);
                assert_string_equal(before, after);
                assert_string_equal(s1, s2);
                free(after);
                free(s2);

                /* the same once the tree behaves */
                f.fk.fail_on = NULL;
                a = admit(&f, g, 0, &err);
                assert_true(a->admitted);
                ncm_node_admission_free(a);
                cpuset_path(&f, "burstable/podbbbb/web", p, sizeof(p));
                assert_file(&f.fk, p, "0,3");

                /* a removal that cannot finish (a process left in the pod cgroup) is undone,
                 * the shared containers' cpusets included */
                free(before);
                free(s1);
                fake_put(f.fk.rootfd,
                         version == 1 ? "/cpu/kubepods/podgggg/app" : "/kubepods/podgggg/app",
                         "cgroup.procs", "4242\n");
                before = fake_snapshot(&f.fk);
                s1 = state_text(&f);
                assert_int_equal(ncm_node_remove_pod(f.n, "gggg", NULL, &err), -NCM_E_ENFORCEMENT);
                assert_non_null(strstr(err.msg, "pid 4242"));
                assert_non_null(strstr(err.msg, "rolled back"));
                after = fake_snapshot(&f.fk);
                s2 = state_text(&f);
                assert_string_equal(before, after);
                assert_string_equal(s1, s2);
                free(before);
                free(after);
                free(s1);
                free(s2);
                fx_done(&f);
        }
}

static void test_node_enforce_reconcile(void **state)
{
        fx f;
        ncm_error err = NCM_ERROR_INIT;
        ncm_autoptr(ncm_pod) b = pod_yaml("bbbb", NULL);
        ncm_autoptr(ncm_pod) g = pod_yaml("gggg", "2");
        ncm_node_admission *a;
        char p[512];
        (void)state;

        fx_new(&f, 1, "cgroupfs");
        a = admit(&f, b, 0, &err);
        ncm_node_admission_free(a);
        a = admit(&f, g, 0, &err);
        ncm_node_admission_free(a);
        /* someone rewrote the cpusets; reconcile puts the state's back */
        cpuset_path(&f, "podgggg/app", p, sizeof(p));
        fake_put(f.fk.rootfd, "/cpuset/kubepods/podgggg/app", "cpuset.cpus", "0-3\n");
        fake_put(f.fk.rootfd, "/cpuset/kubepods/burstable/podbbbb/web", "cpuset.cpus", "1\n");
        /* it counts what it found off, and finds nothing off the second time */
        assert_int_equal(ncm_node_reconcile(f.n, &err), 2);
        assert_file(&f.fk, p, "1-2");
        assert_file(&f.fk, "/cpuset/kubepods/burstable/podbbbb/web/cpuset.cpus", "0,3");
        assert_int_equal(ncm_node_reconcile(f.n, &err), 0);
        fx_done(&f);
}

static void test_node_enforce_plan_and_none(void **state)
{
        ncm_autoptr(ncm_pod) g = pod_yaml("gggg", "2");
        ncm_autoptr(ncm_pod) big = pod_yaml("huge", "8");
        (void)state;
        for (int i = 0; i < 2; i++) {
                fx f;
                ncm_error err = NCM_ERROR_INIT;
                ncm_node_admission *a;
                char *before = NULL, *after;
                const ncm_cgroup_plan *plan;
                size_t steps = 0;

                fx_new(&f, 1, i ? "none" : "plan");
                before = fake_snapshot(&f.fk);
                plan = ncm_enforcer_plan_get(f.e);
                if (i)
                        assert_null(plan);
                else
                        steps = plan->n_steps;
                assert_true(i || steps > 0); /* node allocatable and the tiers */
                a = admit(&f, big, 0, &err);
                assert_false(a->admitted);
                ncm_node_admission_free(a);
                if (!i)
                        assert_int_equal(plan->n_steps, steps);
                a = admit(&f, g, 0, &err);
                assert_true(a->admitted);
                ncm_node_admission_free(a);
                if (!i) {
                        ncm_buf b = NCM_BUF_INIT;
                        assert_true(plan->n_steps > steps);
                        ncm_cgroup_plan_format(plan, &b);
                        assert_non_null(strstr(b.data, "/kubepods/podgggg/app/cpuset.cpus 1-2"));
                        ncm_buf_done(&b);
                }
                /* neither touches the tree */
                after = fake_snapshot(&f.fk);
                assert_string_equal(before, after);
                free(before);
                free(after);
                fx_done(&f);
        }
}

static void test_node_enforce_required_controllers(void **state)
{
        ncm_cgroup_layout l;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(ncm_cgroup_layout_standard(&l, 1, "/sys/fs/cgroup", NULL), 0);
        assert_int_equal(ncm_cgroup_layout_check_controllers(&l, NCM_CGROUP_CTRL_PIDS, NULL, &err),
                         0);
        /* this machine's kind: no hugetlb hierarchy */
        for (size_t i = 0; i < l.n_hierarchies; i++)
                if (l.hierarchies[i].controllers &
                    (NCM_CGROUP_CTRL_HUGETLB | NCM_CGROUP_CTRL_MEMORY | NCM_CGROUP_CTRL_CPUACCT))
                        l.hierarchies[i].controllers = 0;
        assert_int_equal(ncm_cgroup_layout_check_controllers(&l, 0, NULL, &err),
                         -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "system validation failed - Following Cgroup subsystem not "
                                     "mounted: [cpuacct memory]");
        assert_int_equal(ncm_cgroup_layout_check_controllers(&l, NCM_CGROUP_CTRL_HUGETLB, NULL,
                                                             &err),
                         -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "system validation failed - Following Cgroup subsystem not "
                                     "mounted: [cpuacct hugetlb memory]");

        assert_int_equal(ncm_cgroup_layout_standard(&l, 2, "/sys/fs/cgroup", NULL), 0);
        l.v2_controllers &= ~(NCM_CGROUP_CTRL_CPUSET | NCM_CGROUP_CTRL_PIDS);
        assert_int_equal(ncm_cgroup_layout_check_controllers(&l, 0, "kubepods", &err),
                         -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "cgroup [\"kubepods\"] has some missing controllers: cpuset");
        assert_int_equal(ncm_cgroup_layout_check_controllers(&l, NCM_CGROUP_CTRL_PIDS, NULL, &err),
                         -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "cgroup [\"kubepods\"] has some missing controllers: "
                                     "cpuset, pids");
}

/* Start a node on a fake tree of VERSION with configuration K; the enforcer's start result. */
static int start_with(int version, const char *k, ncm_error *err)
{
        ncm_enforcer_cgroup_options o = {0};
        ncm_enforcer *e = NULL;
        ncm_node_config *cfg = NULL;
        ncm_topo *t = NULL;
        ncm_node *n = NULL;
        ncm_node_options no = {0};
        ncm_resource_list cap = {0};
        ncm_quantity q;
        fake fk;
        int r;

        fake_init(&fk, version, false);
        o.mount_root = fk.dir;
        o.cgroup_version = version;
        o.exec = &fk.exec;
        assert_int_equal(ncm_quantity_parse("2", &q, NULL), 0);
        assert_int_equal(ncm_cgroup_resource_list_set(&cap, "cpu", &q), 0);
        o.capacity = &cap;
        assert_int_equal(ncm_topo_from_synthetic("package:1 core:2 pu:1", &t, NULL), 0);
        assert_int_equal(ncm_node_config_parse(k, strlen(k), "k", "", &cfg, NULL), 0);
        assert_int_equal(ncm_enforcer_cgroupfs_new(&o, &e, err), 0);
        no.enforcer = e;
        r = ncm_node_new(t, cfg, &no, &n, err);
        ncm_node_free(n);
        ncm_enforcer_free(e);
        ncm_node_config_free(cfg);
        ncm_topo_free(t);
        ncm_resource_list_done(&cap);
        fake_done(&fk);
        return r;
}

static void test_node_enforce_systemd_driver_refused(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(start_with(1, "{\"cgroupDriver\": \"systemd\", \"failCgroupV1\": false}",
                                    &err),
                         -EINVAL);
        assert_non_null(strstr(err.msg, "start cgroupfs enforcer: cgroupDriver systemd"));
}

/*
 * validation_linux.go: the kubelet refuses cgroup v1 when failCgroupV1 is set, which it is by
 * default from 1.35 (KEP-5573); singleProcessOOMKill: false is refused there too.
 */
static void test_node_enforce_fail_cgroup_v1(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(start_with(1, "{}", &err), -EINVAL);
        assert_non_null(strstr(err.msg, "failCgroupV1: failed to validate kubelet configuration, "
                                        "error: kubelet is configured to not run on a host "
                                        "using cgroup v1. cgroup v1 support is unsupported and "
                                        "will be removed in a future release"));
        assert_int_equal(start_with(2, "{}", &err), 0);
        assert_int_equal(start_with(1, "{\"failCgroupV1\": false}", &err), 0);
        /* 1.34 did not refuse by default; set, it words it as maintenance mode */
        assert_int_equal(start_with(1, "{\"kubeletVersion\": \"1.34\"}", &err), 0);
        assert_int_equal(start_with(1, "{\"kubeletVersion\": \"1.34\", \"failCgroupV1\": true}",
                                    &err),
                         -EINVAL);
        assert_non_null(strstr(err.msg, "cgroup v1 support is in maintenance mode"));
        assert_int_equal(start_with(1, "{\"failCgroupV1\": false, \"singleProcessOOMKill\": false}",
                                    &err),
                         -EINVAL);
        assert_non_null(strstr(err.msg, "invalid configuration: singleProcessOOMKill must not be "
                                        "explicitly set to false when using cgroup v1"));
        assert_int_equal(start_with(2, "{\"singleProcessOOMKill\": false}", &err), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_node_enforce_cgroupfs_admit_remove),
                        cmocka_unit_test(test_node_enforce_refusal_writes_nothing),
                        cmocka_unit_test(test_node_enforce_failure_rolls_back),
                        cmocka_unit_test(test_node_enforce_reconcile),
                        cmocka_unit_test(test_node_enforce_plan_and_none),
                        cmocka_unit_test(test_node_enforce_required_controllers),
                        cmocka_unit_test(test_node_enforce_systemd_driver_refused),
                        cmocka_unit_test(test_node_enforce_fail_cgroup_v1),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
