/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cgroupfs drivers on a fake tree: the files written per QoS class on v1 and v2 (golden
 * plans), apply / update / read back / remove through a root fd with a stand-in for the
 * kernel (control files appear on mkdir), undo on failure, refusal of foreign contents and of
 * removal with processes left, layout detection. Kernel semantics (EBUSY, ENOSPC, effective
 * cpusets) are covered by tests/integration/test-cgroups-v1.sh on real cgroups.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <nodecm/cgroups.h>
#include <nodecm/fs.h>

#include "base/json.h"
#include "fakecg.h"
#include "testutil.h"

#define UID_G "11111111-2222-3333-4444-555555555555"
#define UID_B "2a5f6c1e-0d6b-4c1a-9a55-7d0b3e9c1f00"
#define UID_BE "99999999-8888-7777-6666-555555555555"

static const char *const pod_g = "metadata: {name: db, uid: " UID_G "}\nspec:\n  containers:\n"
                                 "  - name: app\n    resources: {limits: {cpu: \"1\", memory: "
                                 "256Mi}}\n";
static const char *const pod_b = "metadata: {name: web, uid: " UID_B "}\nspec:\n  containers:\n"
                                 "  - name: app\n    resources: {requests: {cpu: 100m, memory: "
                                 "100Mi}, limits: {cpu: 200m, memory: 200Mi}}\n"
                                 "  - name: log\n    resources: {requests: {cpu: 50m}}\n";
static const char *const pod_be = "metadata: {name: batch, uid: " UID_BE "}\nspec:\n"
                                  "  containers:\n  - name: job\n";

static ncm_pod *pod_yaml(const char *yaml)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;
        if (ncm_pod_parse(yaml, strlen(yaml), "test", &pod, &err) < 0)
                fail_msg("pod: %s", err.msg);
        return pod;
}

static void manager(fake *f, ncm_cgroup_manager *m, const char *cgroup_root)
{
        ncm_cgroup_resources kp;
        ncm_autoptr(ncm_cpuset) all = tu_cpuset("0-3");
        ncm_resource_list rl = {0};
        ncm_error err = NCM_ERROR_INIT;

        if (ncm_cgroup_manager_init(m, &f->layout, &ncm_cgroup_naming_cgroupfs, cgroup_root, NULL,
                                    f->rootfd, &err) < 0)
                fail_msg("%s", err.msg);
        m->exec = f->exec;
        assert_int_equal(ncm_cgroup_parse_capacity("cpu=4,memory=8Gi,pid=4096", &rl, NULL), 0);
        assert_int_equal(ncm_cgroup_config_for_resource_list(&rl, false, all, &kp, NULL), 0);
        assert_int_equal(ncm_cgroup_manager_set_kubepods(m, &kp, NULL), 0);
        ncm_cgroup_resources_done(&kp);
        ncm_resource_list_done(&rl);
}

/* ---- the files per QoS class (golden plans of the pod cgroup alone) ---- */

static void golden_pod_plans(int version)
{
        static const struct {
                const char *yaml, *name;
        } pods[] = {{NULL, "guaranteed"}, {NULL, "burstable"}, {NULL, "besteffort"}};
        const char *yamls[] = {pod_g, pod_b, pod_be};
        ncm_cgroup_layout l;
        ncm_cgroup_pod_options o;
        ncm_cgroup_manager m;

        assert_int_equal(ncm_cgroup_layout_standard(&l, version, "/sys/fs/cgroup", NULL), 0);
        ncm_cgroup_pod_options_init(&o);
        o.pod_pids_limit = 1024;
        assert_int_equal(ncm_cgroup_manager_init(&m, &l, &ncm_cgroup_naming_cgroupfs, "/", &o, -1,
                                                 NULL),
                         0);
        for (size_t i = 0; i < NCM_ELEMENTSOF(pods); i++) {
                ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
                ncm_buf b = NCM_BUF_INIT;
                ncm_pod *pod = pod_yaml(yamls[i]);
                char golden[128];
                assert_int_equal(ncm_cgroup_manager_plan_pod(
                                                 &m, pod, NULL, NULL, 0, NULL,
                                                 NCM_CGROUP_PLAN_POD_ONLY |
                                                                 NCM_CGROUP_PLAN_NO_CONTAINERS,
                                                 &plan, NULL),
                                 0);
                ncm_cgroup_plan_format(&plan, &b);
                snprintf(golden, sizeof(golden), "cgroups/pod-v%d-%s.txt", version, pods[i].name);
                tu_assert_golden(golden, b.data);
                ncm_buf_done(&b);
                ncm_cgroup_plan_done(&plan);
                ncm_pod_free(pod);
        }
        ncm_cgroup_manager_done(&m);
}

static void test_cgroup_driver_v1_files_per_qos(void **state)
{
        (void)state;
        golden_pod_plans(1);
}

static void test_cgroup_driver_v2_files_per_qos(void **state)
{
        (void)state;
        golden_pod_plans(2);
}

/* The v1 order of one cgroup's writes, as libcontainer's fs manager does them. */
static void test_cgroup_driver_v1_write_order(void **state)
{
        ncm_cgroup_layout l;
        ncm_cgroup_resources r;
        ncm_cgroup_plan p = NCM_CGROUP_PLAN_INIT;
        ncm_autoptr(ncm_cpuset) cpus = tu_cpuset("1");
        const char *want[] = {"cpuset.cpus",
                              "memory.limit_in_bytes",
                              "cpu.shares",
                              "cpu.cfs_period_us",
                              "cpu.cfs_quota_us",
                              "pids.max",
                              "hugetlb.2MB.limit_in_bytes",
                              "hugetlb.2MB.rsvd.limit_in_bytes",
                              "hugetlb.1GB.limit_in_bytes",
                              "hugetlb.1GB.rsvd.limit_in_bytes"};
        size_t k = 0;
        (void)state;
        assert_int_equal(ncm_cgroup_layout_standard(&l, 1, "/", NULL), 0);
        ncm_cgroup_resources_init(&r);
        r.has_cpu_shares = r.has_cpu_quota = r.has_cpu_period = r.has_memory = r.has_pids = true;
        r.cpu_shares = 512;
        r.cpu_quota = -1;
        r.cpu_period = 100000;
        r.memory = 1 << 20;
        r.pids = -1;
        r.has_hugepages = true;
        assert_int_equal(ncm_cgroup_resources_set_cpuset(&r, cpus, NULL), 0);
        assert_int_equal(ncm_cgroup_ops_v1.plan_set(&l, "/x", &r, false, &p, NULL), 0);
        assert_int_equal(p.n_ops, NCM_ELEMENTSOF(want));
        for (size_t i = 0; i < p.n_ops; i++, k++) {
                const char *base = strrchr(p.ops[i].path, '/') + 1;
                assert_string_equal(base, want[k]);
        }
        assert_string_equal(p.ops[3].value, "100000");
        assert_true(p.ops[3].flags & NCM_CGROUP_OPF_RETRY_AFTER_NEXT);
        assert_string_equal(p.ops[4].value, "-1");
        assert_string_equal(p.ops[5].value, "max");
        assert_true(p.ops[2].flags & NCM_CGROUP_OPF_READBACK);
        ncm_cgroup_plan_done(&p);

        /* 0 means unset: nothing is written. */
        r.cpu_quota = 0;
        r.memory = 0;
        r.pids = 0;
        r.has_hugepages = false;
        assert_int_equal(ncm_cgroup_ops_v1.plan_set(&l, "/x", &r, false, &p, NULL), 0);
        assert_int_equal(p.n_ops, 3); /* cpuset.cpus, cpu.shares, period */
        ncm_cgroup_plan_done(&p);
        ncm_cgroup_resources_done(&r);
}

static void test_cgroup_driver_v2_values(void **state)
{
        ncm_cgroup_layout l;
        ncm_cgroup_resources r;
        ncm_cgroup_plan p = NCM_CGROUP_PLAN_INIT;
        (void)state;
        assert_int_equal(ncm_cgroup_layout_standard(&l, 2, "/sys/fs/cgroup", NULL), 0);
        ncm_cgroup_resources_init(&r);
        r.has_cpu_shares = r.has_cpu_quota = r.has_cpu_period = r.has_memory = true;
        r.cpu_shares = 1024;
        r.cpu_quota = -1;
        r.cpu_period = 0;
        r.memory = -1;
        assert_int_equal(ncm_cgroup_ops_v2.plan_set(&l, "/kubepods/x", &r, true, &p, NULL), 0);
        /* subtree_control of the parent, mkdir, memory.max, cpu.weight, cpu.max */
        assert_int_equal(p.n_ops, 5);
        assert_string_equal(p.ops[0].path, "/kubepods/cgroup.subtree_control");
        assert_string_equal(p.ops[0].value, "+cpuset +cpu +io +memory +hugetlb +pids +rdma +misc");
        assert_int_equal(p.ops[1].kind, NCM_CGROUP_OP_MKDIR);
        assert_string_equal(p.ops[2].value, "max");
        assert_string_equal(p.ops[3].path, "/kubepods/x/cpu.weight");
        assert_string_equal(p.ops[3].value, "39");
        assert_string_equal(p.ops[4].value, "max 100000");
        ncm_cgroup_plan_done(&p);
        /* A container's weight is the runtime's. */
        r.oci_weight = true;
        r.cpu_quota = 20000;
        r.cpu_period = 50000;
        assert_int_equal(ncm_cgroup_ops_v2.plan_set(&l, "/kubepods/x", &r, false, &p, NULL), 0);
        assert_string_equal(p.ops[1].value, "100");
        assert_string_equal(p.ops[2].value, "20000 50000");
        ncm_cgroup_plan_done(&p);
        ncm_cgroup_resources_done(&r);
}

/* ---- apply, update, read back, remove ---- */

static void test_cgroup_driver_v1_apply_and_remove(void **state)
{
        fake f;
        ncm_cgroup_manager m;
        ncm_cgroup_resources back;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *g = pod_yaml(pod_g), *b = pod_yaml(pod_b);
        ncm_autoptr(ncm_cpuset) one = tu_cpuset("1");
        ncm_autoptr(ncm_cpuset) two = tu_cpuset("2");
        ncm_cgroup_container_cpus cpus[] = {{"app", one, NULL}};
        const char *gdir = "/kubepods/pod" UID_G;
        int r;
        (void)state;
        fake_init(&f, 1, true);
        manager(&f, &m, NULL);

        r = ncm_cgroup_manager_apply_pod(&m, g, cpus, 1, NULL, 0, &err);
        if (r < 0)
                fail_msg("%s", err.msg);
        assert_true(r > 0);
        assert_file(&f, "/cpuset/kubepods/cpuset.cpus", "0-3");
        assert_file(&f, "/cpuset/kubepods/cpuset.mems", "0");
        assert_file(&f, "/cpuset/kubepods/pod" UID_G "/cpuset.cpus", "0-3");
        assert_file(&f, "/cpuset/kubepods/pod" UID_G "/app/cpuset.cpus", "1");
        assert_file(&f, "/cpuset/kubepods/pod" UID_G "/app/cpuset.mems", "0");
        assert_file(&f, "/cpu/kubepods/cpu.shares", "4096");
        assert_file(&f, "/memory/kubepods/memory.limit_in_bytes", "8589934592");
        assert_file(&f, "/pids/kubepods/pids.max", "4096");
        assert_file(&f, "/cpu/kubepods/burstable/cpu.shares", "2");
        assert_file(&f, "/cpu/kubepods/besteffort/cpu.shares", "2");
        assert_file(&f, "/hugetlb/kubepods/hugetlb.2MB.limit_in_bytes", "4611686018427387904");
        assert_file(&f, "/hugetlb/kubepods/hugetlb.1GB.rsvd.limit_in_bytes", "4611686018427387904");
        assert_file(&f, "/cpu/kubepods/pod" UID_G "/cpu.shares", "1024");
        assert_file(&f, "/cpu/kubepods/pod" UID_G "/cpu.cfs_quota_us", "100000");
        assert_file(&f, "/memory/kubepods/pod" UID_G "/memory.limit_in_bytes", "268435456");
        assert_file(&f, "/hugetlb/kubepods/pod" UID_G "/hugetlb.2MB.limit_in_bytes", "0");
        assert_file(&f, "/cpu/kubepods/pod" UID_G "/app/cpu.cfs_quota_us", "100000");

        assert_int_equal(m.ops->exists(&m.layout, f.rootfd, gdir, NULL), 1);
        assert_int_equal(m.ops->exists(&m.layout, f.rootfd, "/kubepods/podnope", &err), 0);
        assert_non_null(strstr(err.msg, "has some missing paths: /sys/fs/cgroup/cpuset/kubepods/"
                                        "podnope, /sys/fs/cgroup/memory/kubepods/podnope"));
        assert_int_equal(m.ops->read(&m.layout, f.rootfd, gdir, &back, NULL), 0);
        assert_int_equal(back.cpu_shares, 1024);
        assert_int_equal(back.cpu_quota, 100000);
        assert_int_equal(back.cpu_period, 100000);
        assert_int_equal(back.memory, 256 << 20);
        assert_int_equal(back.pids, NCM_CGROUP_LIMIT_MAX);
        tu_assert_cpuset(back.cpuset_cpus, "0-3");
        ncm_cgroup_resources_done(&back);

        /* Applying again changes nothing; the Burstable pod raises the tier's shares. */
        assert_int_equal(ncm_cgroup_manager_apply_pod(&m, g, cpus, 1, NULL, 0, &err), 0);
        assert_true(ncm_cgroup_manager_apply_pod(&m, b, NULL, 0, NULL, 0, &err) > 0);
        assert_file(&f, "/cpu/kubepods/burstable/cpu.shares", "153");
        assert_file(&f, "/cpu/kubepods/burstable/pod" UID_B "/log/cpu.cfs_quota_us", "-1");
        assert_file(&f, "/cpu/kubepods/burstable/pod" UID_B "/log/cpu.shares", "51");

        /* The CPU manager moves the container. */
        assert_int_equal(ncm_cgroup_manager_set_container_cpuset(&m, UID_G, NCM_QOS_GUARANTEED,
                                                                 "app", two, NULL, &err),
                         1);
        assert_file(&f, "/cpuset/kubepods/pod" UID_G "/app/cpuset.cpus", "2");
        assert_int_equal(ncm_cgroup_manager_set_container_cpuset(&m, UID_G, NCM_QOS_GUARANTEED,
                                                                 "nope", two, NULL, &err),
                         -ENOENT);

        /* A process left in the pod: removal is refused and nothing changes. */
        fake_put(f.rootfd, "/memory/kubepods/pod" UID_G "/app", "cgroup.procs", "4242\n");
        fake_put(f.rootfd, "/cpu/kubepods/pod" UID_G "/app", "cgroup.procs", "4242\n");
        assert_int_equal(ncm_cgroup_manager_remove_pod(&m, g, &err), -NCM_E_INVALID_STATE);
        assert_non_null(strstr(err.msg, "still has 1 process(es) (pid 4242)"));
        fake_put(f.rootfd, "/memory/kubepods/pod" UID_G "/app", "cgroup.procs", "");
        fake_put(f.rootfd, "/cpu/kubepods/pod" UID_G "/app", "cgroup.procs", "");

        assert_true(ncm_cgroup_manager_remove_pod(&m, g, &err) > 0);
        assert_int_equal(ncm_fs_exists(f.rootfd, "/cpu/kubepods/pod" UID_G), 0);
        assert_int_equal(ncm_fs_exists(f.rootfd, "/systemd/kubepods/pod" UID_G), 0);
        assert_true(ncm_cgroup_manager_remove_pod(&m, b, &err) > 0);
        assert_file(&f, "/cpu/kubepods/burstable/cpu.shares", "2");
        /* Removing what is gone is not an error (and changes nothing). */
        assert_int_equal(ncm_cgroup_manager_remove_pod(&m, b, &err), 0);
        ncm_cgroup_manager_done(&m);
        ncm_pod_free(g);
        ncm_pod_free(b);
        fake_done(&f);
}

static void test_cgroup_driver_v2_apply_and_read_back(void **state)
{
        fake f;
        ncm_cgroup_manager m;
        ncm_cgroup_resources back;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *g = pod_yaml(pod_g);
        ncm_autoptr(ncm_cpuset) one = tu_cpuset("1");
        ncm_cgroup_container_cpus cpus[] = {{NULL, one, NULL}};
        int r;
        (void)state;
        fake_init(&f, 2, false);
        manager(&f, &m, NULL);
        r = ncm_cgroup_manager_apply_pod(&m, g, cpus, 1, NULL, 0, &err);
        if (r < 0)
                fail_msg("%s", err.msg);
        assert_file(&f, "/cgroup.subtree_control",
                    "+cpuset +cpu +io +memory +hugetlb +pids +rdma +misc");
        assert_file(&f, "/kubepods/cgroup.subtree_control",
                    "+cpuset +cpu +io +memory +hugetlb +pids +rdma +misc");
        assert_file(&f, "/kubepods/cgroup.controllers",
                    "cpuset cpu io memory hugetlb pids rdma misc");
        assert_file(&f, "/kubepods/cpu.weight", "157");
        assert_file(&f, "/kubepods/memory.max", "8589934592");
        assert_file(&f, "/kubepods/cpuset.cpus", "0-3");
        assert_file(&f, "/kubepods/hugetlb.2MB.max", "4611686018427387904");
        assert_file(&f, "/kubepods/burstable/cpu.weight", "1");
        assert_file(&f, "/kubepods/pod" UID_G "/cpu.weight", "39");
        assert_file(&f, "/kubepods/pod" UID_G "/cpu.max", "100000 100000");
        assert_file(&f, "/kubepods/pod" UID_G "/memory.max", "268435456");
        assert_file(&f, "/kubepods/pod" UID_G "/app/cpu.weight", "100");
        assert_file(&f, "/kubepods/pod" UID_G "/app/cpuset.cpus", "1");
        assert_int_equal(m.ops->exists(&m.layout, f.rootfd, "/kubepods/pod" UID_G, NULL), 1);
        fake_put(f.rootfd, "/kubepods/pod" UID_G, "cgroup.controllers", "cpu memory");
        assert_int_equal(m.ops->exists(&m.layout, f.rootfd, "/kubepods/pod" UID_G, &err), 0);
        assert_non_null(strstr(err.msg, "has some missing controllers: cpuset, hugetlb, pids"));
        assert_int_equal(m.ops->read(&m.layout, f.rootfd, "/kubepods/pod" UID_G, &back, NULL), 0);
        /* cpu.weight 39 reads back as 998 shares, not 1024: the linear map loses precision. */
        assert_int_equal(back.cpu_shares, 998);
        assert_int_equal(back.cpu_quota, 100000);
        assert_int_equal(back.memory, 256 << 20);
        ncm_cgroup_resources_done(&back);
        assert_true(ncm_cgroup_manager_remove_pod(&m, g, &err) > 0);
        assert_int_equal(ncm_fs_exists(f.rootfd, "/kubepods/pod" UID_G), 0);
        ncm_cgroup_manager_done(&m);
        ncm_pod_free(g);
        fake_done(&f);
}

/* Without the hugetlb .rsvd files (kernels before 5.7) they are skipped, not an error. */
static void test_cgroup_driver_optional_rsvd(void **state)
{
        fake f;
        ncm_cgroup_manager m;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *be = pod_yaml(pod_be);
        (void)state;
        fake_init(&f, 1, false);
        manager(&f, &m, NULL);
        if (ncm_cgroup_manager_apply_pod(&m, be, NULL, 0, NULL, 0, &err) < 0)
                fail_msg("%s", err.msg);
        assert_file(&f, "/hugetlb/kubepods/besteffort/pod" UID_BE "/hugetlb.1GB.limit_in_bytes",
                    "0");
        assert_int_equal(ncm_fs_exists(f.rootfd, "/hugetlb/kubepods/hugetlb.2MB.rsvd."
                                                 "limit_in_bytes"),
                         0);
        ncm_cgroup_manager_done(&m);
        ncm_pod_free(be);
        fake_done(&f);
}

/* A write that fails halfway: every directory made is gone, every value restored. */
static void test_cgroup_driver_undo_on_failure(void **state)
{
        for (int version = 1; version <= 2; version++) {
                fake f;
                ncm_cgroup_manager m;
                ncm_error err = NCM_ERROR_INIT;
                ncm_pod *g = pod_yaml(pod_g), *b = pod_yaml(pod_b);
                char *before, *after;
                (void)state;
                fake_init(&f, version, true);
                manager(&f, &m, NULL);
                /* kubepods and the tiers exist already, with values that will change. */
                assert_true(ncm_cgroup_manager_apply_pod(&m, b, NULL, 0, NULL, 0, &err) > 0);
                before = fake_snapshot(&f);
                f.fail_on = "pod" UID_G;
                assert_true(ncm_cgroup_manager_apply_pod(&m, g, NULL, 0, NULL, 0, &err) < 0);
                assert_non_null(strstr(err.msg, "pod" UID_G));
                assert_null(strstr(err.msg, "undo incomplete"));
                after = fake_snapshot(&f);
                assert_string_equal(before, after);
                free(before);
                free(after);
                ncm_cgroup_manager_done(&m);
                ncm_pod_free(g);
                ncm_pod_free(b);
                fake_done(&f);
        }
}

static void test_cgroup_driver_refuses_foreign_contents(void **state)
{
        fake f;
        ncm_cgroup_manager m;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *g = pod_yaml(pod_g);
        char *before, *after;
        (void)state;
        fake_init(&f, 1, true);
        manager(&f, &m, NULL);
        assert_int_equal(ncm_fs_mkdir(f.rootfd, "/memory/kubepods", 0755, NULL), 1);
        assert_int_equal(ncm_fs_mkdir(f.rootfd, "/memory/kubepods/pod" UID_G, 0755, NULL), 1);
        assert_int_equal(ncm_fs_mkdir(f.rootfd, "/memory/kubepods/pod" UID_G "/intruder", 0755,
                                      NULL),
                         1);
        before = fake_snapshot(&f);
        assert_int_equal(ncm_cgroup_manager_apply_pod(&m, g, NULL, 0, NULL, 0, &err),
                         -NCM_E_INVALID_STATE);
        assert_non_null(strstr(err.msg, "already holds the cgroup 'intruder'"));
        assert_int_equal(ncm_error_exit_status(err.code), 1);
        after = fake_snapshot(&f);
        assert_string_equal(before, after);
        free(before);
        free(after);
        ncm_cgroup_manager_done(&m);
        ncm_pod_free(g);
        fake_done(&f);
}

static void test_cgroup_driver_cgroup_root(void **state)
{
        fake f;
        ncm_cgroup_manager m;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *g = pod_yaml(pod_g);
        (void)state;
        fake_init(&f, 1, true);
        manager(&f, &m, "/nodecm-test");
        assert_int_equal(ncm_cgroup_manager_apply_pod(&m, g, NULL, 0, NULL, 0, &err), -ENOENT);
        assert_non_null(strstr(err.msg, "invalid configuration: cgroup \"/nodecm-test\" has some "
                                        "missing paths: /sys/fs/cgroup/cpuset/nodecm-test"));
        assert_int_equal(ncm_fs_exists(f.rootfd, "/cpu/nodecm-test"), 0);
        /* The parent made (and its cpuset filled) by someone else: the tree goes below it. */
        {
                static const char *const h[] = {"cpuset", "memory",  "cpu",    "cpuacct",
                                                "pids",   "hugetlb", "systemd"};
                for (size_t i = 0; i < NCM_ELEMENTSOF(h); i++) {
                        char p[64];
                        snprintf(p, sizeof(p), "/%s/nodecm-test", h[i]);
                        assert_int_equal(ncm_fs_mkdir(f.rootfd, p, 0755, NULL), 1);
                        fake_v1_files(&f, p, h[i]);
                }
                fake_put(f.rootfd, "/cpuset/nodecm-test", "cpuset.cpus", "2-3\n");
                fake_put(f.rootfd, "/cpuset/nodecm-test", "cpuset.mems", "0\n");
        }
        if (ncm_cgroup_manager_apply_pod(&m, g, NULL, 0, NULL, NCM_CGROUP_PLAN_POD_ONLY, &err) >= 0)
                fail_msg("pod-only apply without kubepods should fail");
        assert_non_null(strstr(err.msg, "No such file or directory"));
        if (ncm_cgroup_manager_apply_pod(&m, g, NULL, 0, NULL, 0, &err) < 0)
                fail_msg("%s", err.msg);
        assert_file(&f, "/cpu/nodecm-test/kubepods/pod" UID_G "/cpu.shares", "1024");
        ncm_cgroup_manager_done(&m);
        ncm_pod_free(g);
        fake_done(&f);
}

/* ---- layout detection and plan formats ---- */

static void test_cgroup_driver_detect(void **state)
{
        ncm_cgroup_layout l;
        ncm_error err = NCM_ERROR_INIT;
        char *dir = tu_mkdtemp();
        int fd = ncm_fs_open_root(dir, NULL);
        struct statfs st;
        (void)state;
        assert_int_equal(ncm_cgroup_layout_detect(fd, dir, "", -1, &l, &err), -ENOTSUP);
        assert_non_null(strstr(err.msg, "is not a cgroup filesystem"));
        close(fd);
        tu_rm_rf(dir);
        free(dir);

        /* This machine, when it has cgroups at all. */
        if (statfs("/sys/fs/cgroup", &st) == 0) {
                char *mountinfo = NULL;
                int root = ncm_fs_open_root("/sys/fs/cgroup", NULL);
                int sys = ncm_fs_open_root("/", NULL);
                assert_int_equal(ncm_fs_read_all(sys, "/proc/self/mountinfo", 1 << 22, &mountinfo,
                                                 NULL, NULL),
                                 0);
                if (ncm_cgroup_layout_detect(root, "/sys/fs/cgroup", mountinfo, sys, &l, &err) ==
                    0) {
                        const ncm_cgroup_hierarchy *cpu =
                                        ncm_cgroup_layout_find(&l, NCM_CGROUP_CTRL_CPU);
                        struct statfs u;
                        char cpudir[64] = "";
                        bool v1 = l.mode != NCM_CGROUP_MODE_UNIFIED;
                        if (cpu)
                                snprintf(cpudir, sizeof(cpudir), "%s", cpu->dir);
                        if (l.mode == NCM_CGROUP_MODE_UNIFIED) {
                                assert_int_equal(l.n_hierarchies, 1);
                        } else if (cpu) {
                                assert_int_equal(cpu->dir[0], '/');
                                assert_int_equal(strlen(cpu->dir), strcspn(cpu->dir + 1, "/") + 1);
                        }
                        /* Hybrid (this machine kind): v1 hierarchies and cgroup2 at unified/,
                         * which on its own is a unified tree. */
                        if (l.mode != NCM_CGROUP_MODE_UNIFIED &&
                            statfs("/sys/fs/cgroup/unified", &u) == 0 &&
                            (unsigned long)u.f_type == 0x63677270UL) {
                                int ufd = ncm_fs_open_root("/sys/fs/cgroup/unified", NULL);
                                assert_int_equal(l.mode, NCM_CGROUP_MODE_HYBRID);
                                assert_int_equal(ncm_cgroup_layout_version(&l), 1);
                                assert_int_equal(ncm_cgroup_layout_detect(ufd,
                                                                          "/sys/fs/cgroup/unified",
                                                                          mountinfo, sys, &l, &err),
                                                 0);
                                assert_int_equal(l.mode, NCM_CGROUP_MODE_UNIFIED);
                                assert_int_equal(ncm_cgroup_layout_version(&l), 2);
                                close(ufd);
                        }
                        /* A single v1 hierarchy is not a cgroup mount root. */
                        if (*cpudir && v1) {
                                char p[128];
                                int hfd;
                                snprintf(p, sizeof(p), "/sys/fs/cgroup%s", cpudir);
                                hfd = ncm_fs_open_root(p, NULL);
                                assert_int_equal(ncm_cgroup_layout_detect(hfd, p, mountinfo, sys,
                                                                          &l, &err),
                                                 -ENOTSUP);
                                assert_non_null(strstr(err.msg, "single cgroup v1 hierarchy"));
                                close(hfd);
                        }
                }
                free(mountinfo);
                close(root);
                close(sys);
        }
}

static void test_cgroup_driver_plan_json(void **state)
{
        ncm_cgroup_layout l;
        ncm_cgroup_manager m;
        ncm_cgroup_plan p = NCM_CGROUP_PLAN_INIT;
        ncm_buf b = NCM_BUF_INIT;
        ncm_pod *g = pod_yaml(pod_g);
        json_object *doc = NULL, *steps;
        (void)state;
        assert_int_equal(ncm_cgroup_layout_standard(&l, 2, "/", NULL), 0);
        assert_int_equal(ncm_cgroup_manager_init(&m, &l, &ncm_cgroup_naming_systemd, NULL, NULL, -1,
                                                 NULL),
                         0);
        assert_int_equal(ncm_cgroup_manager_plan_pod(&m, g, NULL, NULL, 0, NULL, 0, &p, NULL), 0);
        ncm_cgroup_plan_format_json(&p, &b);
        assert_int_equal(ncm__json_parse(b.data, b.len, "plan", &doc, NULL), 0);
        steps = ncm__json_get(doc, "steps");
        assert_int_equal(json_object_array_length(steps), 5);
        assert_string_equal(json_object_get_string(ncm__json_get(
                                            json_object_array_get_idx(steps, 3), "cgroup")),
                            "/kubepods.slice/kubepods-pod"
                            "11111111_2222_3333_4444_555555555555.slice");
        /* A root of "/" does not double the slash. */
        assert_non_null(strstr(b.data, "\"path\": \"/kubepods.slice/cgroup.subtree_control\""));
        json_object_put(doc);
        ncm_buf_done(&b);
        ncm_cgroup_plan_done(&p);
        ncm_cgroup_manager_done(&m);
        ncm_pod_free(g);
}

static void test_cgroup_driver_children_and_pids(void **state)
{
        fake f;
        char **kids = NULL;
        int pids[4];
        size_t n = 0;
        (void)state;
        fake_init(&f, 1, true);
        assert_int_equal(ncm_fs_mkdir(f.rootfd, "/cpu/a", 0755, NULL), 1);
        assert_int_equal(ncm_fs_mkdir(f.rootfd, "/cpu/a/y", 0755, NULL), 1);
        assert_int_equal(ncm_fs_mkdir(f.rootfd, "/memory/a", 0755, NULL), 1);
        assert_int_equal(ncm_fs_mkdir(f.rootfd, "/memory/a/x", 0755, NULL), 1);
        assert_int_equal(ncm_fs_mkdir(f.rootfd, "/memory/a/y", 0755, NULL), 1);
        assert_int_equal(ncm_cgroup_children(&f.layout, f.rootfd, "/a", &kids, NULL), 0);
        assert_string_equal(kids[0], "x");
        assert_string_equal(kids[1], "y");
        assert_null(kids[2]);
        ncm_cgroup_strv_free(kids);
        fake_put(f.rootfd, "/cpu/a/y", "cgroup.procs", "7\n8\n");
        fake_put(f.rootfd, "/memory/a", "cgroup.procs", "7\n");
        assert_int_equal(ncm_cgroup_pids(&f.layout, f.rootfd, "/a", pids, 4, &n, NULL), 0);
        assert_int_equal(n, 2);
        fake_done(&f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cgroup_driver_v1_files_per_qos),
                        cmocka_unit_test(test_cgroup_driver_v2_files_per_qos),
                        cmocka_unit_test(test_cgroup_driver_v1_write_order),
                        cmocka_unit_test(test_cgroup_driver_v2_values),
                        cmocka_unit_test(test_cgroup_driver_v1_apply_and_remove),
                        cmocka_unit_test(test_cgroup_driver_v2_apply_and_read_back),
                        cmocka_unit_test(test_cgroup_driver_optional_rsvd),
                        cmocka_unit_test(test_cgroup_driver_undo_on_failure),
                        cmocka_unit_test(test_cgroup_driver_refuses_foreign_contents),
                        cmocka_unit_test(test_cgroup_driver_cgroup_root),
                        cmocka_unit_test(test_cgroup_driver_detect),
                        cmocka_unit_test(test_cgroup_driver_plan_json),
                        cmocka_unit_test(test_cgroup_driver_children_and_pids),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
