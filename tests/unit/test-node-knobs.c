/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRI-O's runtime-class knobs done by the node's cgroup enforcers, on fake cgroup trees and a
 * fake machine root (/proc/irq, irqbalance's file): cpu-load-balancing on v1
 * (sched_load_balance on the container and its ancestors, given back when the last one goes)
 * and v2 (remote partitions, refused without cpuset.cpus.exclusive), cpu-quota (pod and
 * container), irq-load-balancing (every interrupt, the default affinity, irqbalance's banned
 * CPUs; what comes back), reconcile after the machine changed them (counted), a restart that
 * converges from the memo in the root directory, the plan enforcer's record, and the kubelet's
 * behaviour for pods without the annotations.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodecm/cgroup-knobs.h>
#include <nodecm/enforcer.h>
#include <nodecm/fs.h>
#include <nodecm/node.h>
#include "fakecg.h"
#include "testutil.h"

/* the kubelet's own quota stays on for exclusive containers, so the knob's effect shows;
 * failCgroupV1: false, or a kubelet from 1.35 on would not start on the v1 trees; no
 * resource-fit admission, which would refuse the sidecars' 100m past the 3 allocatable CPUs
 * these tests fill with exclusive ones */
#define KUBELET                                                                                    \
        "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "                       \
        "\"featureGates\": {\"DisableCPUQuotaWithExclusiveCPUs\": false}, "                        \
        "\"irqBalanceConfigFile\": \"/etc/default/irqbalance\", \"failCgroupV1\": false, "         \
        "\"fitAdmission\": \"never\"}"

typedef struct fx {
        fake fk;
        ncm_enforcer_cgroup_options o;
        bool plan;
        char *sys; /* the machine root: proc/irq, etc/default/irqbalance */
        int sysfd;
        char *dir; /* the node's directory, when kept */
        ncm_topo *t;
        ncm_node_config *cfg;
        ncm_resource_list capacity;
        ncm_enforcer *e;
        ncm_node *n;
} fx;

static void sys_put(fx *f, const char *path, const char *text)
{
        char full[4096];
        char *slash;

        snprintf(full, sizeof(full), "%s%s", f->sys, path);
        for (slash = strchr(full + strlen(f->sys) + 1, '/'); slash;
             slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                (void)mkdir(full, 0755);
                *slash = '/';
        }
        tu_write_file(full, text);
}

static char *sys_get(fx *f, const char *path)
{
        ncm_autofree char *text = NULL;
        size_t len = 0;
        assert_int_equal(ncm_fs_read_all(f->sysfd, path, 1 << 20, &text, &len, NULL), 0);
        while (len && text[len - 1] == '\n')
                text[--len] = '\0';
        return NCM_TAKE_PTR(text);
}

#define assert_sys(f, path, want)                                                                  \
        do {                                                                                       \
                char *got_ = sys_get((f), (path));                                                 \
                if (strcmp(got_, (want)) != 0)                                                     \
                        fail_msg("%s: [%s], want [%s]", (path), got_, (want));                     \
                free(got_);                                                                        \
        } while (0)

static void make_node(fx *f, ncm_error *err, int want)
{
        ncm_node_options no = {0};
        ncm_node_pod_record *recs = NULL;
        size_t nrec = 0;
        int r;

        ncm_enforcer_free(f->e);
        if (f->plan)
                assert_int_equal(ncm_enforcer_plan_new(&f->o, &f->e, err), 0);
        else
                assert_int_equal(ncm_enforcer_cgroupfs_new(&f->o, &f->e, err), 0);
        no.enforcer = f->e;
        if (f->dir) {
                no.state_dir = f->dir;
                no.restore = true;
                no.persist_pods = true;
                assert_int_equal(ncm_node_pods_load(f->dir, &recs, &nrec, NULL), 0);
                no.pods = recs;
                no.n_pods = nrec;
        }
        r = ncm_node_new(f->t, f->cfg, &no, &f->n, err);
        ncm_node_pod_records_free(recs, nrec);
        if (r != want)
                fail_msg("node: %d %s", r, err->msg);
}

static void fx_new_full(fx *f, int version, bool partitions, const char *enforcer, bool keep_dir)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_quantity q;

        memset(f, 0, sizeof(*f));
        fake_init(&f->fk, version, false);
        f->fk.partitions = partitions;
        f->sys = tu_mkdtemp();
        /* four CPUs: interrupts on every one, irqbalance with a setting of its own */
        sys_put(f, "/proc/irq/default_smp_affinity", "f\n");
        sys_put(f, "/proc/irq/0/smp_affinity", "f\n");
        sys_put(f, "/proc/irq/9/smp_affinity", "1\n");
        sys_put(f, "/proc/irq/24/smp_affinity", "f\n");
        sys_put(f, "/etc/default/irqbalance", "# irqbalance\nIRQBALANCE_ONESHOT=0\n");
        f->sysfd = ncm_fs_open_root(f->sys, NULL);
        assert_true(f->sysfd >= 0);
        if (keep_dir)
                f->dir = tu_mkdtemp();
        assert_int_equal(ncm_topo_from_synthetic("package:1 core:4 pu:1", &f->t, NULL), 0);
        assert_int_equal(ncm_node_config_parse(KUBELET, strlen(KUBELET), "k", "", &f->cfg, NULL),
                         0);
        assert_int_equal(ncm_quantity_parse("4", &q, NULL), 0);
        assert_int_equal(ncm_cgroup_resource_list_set(&f->capacity, "cpu", &q), 0);
        assert_int_equal(ncm_quantity_parse("8Gi", &q, NULL), 0);
        assert_int_equal(ncm_cgroup_resource_list_set(&f->capacity, "memory", &q), 0);
        f->o.mount_root = f->fk.dir;
        f->o.sys_root = f->sys;
        f->o.cgroup_version = version;
        f->o.capacity = &f->capacity;
        f->o.exec = &f->fk.exec;
        f->plan = strcmp(enforcer, "plan") == 0;
        make_node(f, &err, 0);
}

static void fx_new(fx *f, int version, bool partitions)
{
        fx_new_full(f, version, partitions, "cgroupfs", false);
}

static void fx_done(fx *f)
{
        ncm_node_free(f->n);
        ncm_enforcer_free(f->e);
        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->t);
        ncm_resource_list_done(&f->capacity);
        fake_done(&f->fk);
        close(f->sysfd);
        tu_rm_rf(f->sys);
        free(f->sys);
        if (f->dir) {
                tu_rm_rf(f->dir);
                free(f->dir);
        }
}

/* A Guaranteed pod: app with CPU whole CPUs, a 100m sidecar; ANNOTATIONS a YAML map body. */
static ncm_pod *knob_pod(const char *uid, const char *cpu, const char *annotations)
{
        char text[1024];
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;

        snprintf(text, sizeof(text),
                 "metadata: {name: %s, uid: %s, annotations: {%s}}\nspec:\n  containers:\n"
                 "  - name: app\n    resources: {limits: {cpu: \"%s\", memory: 128Mi}}\n"
                 "  - name: side\n    resources: {limits: {cpu: 100m, memory: 64Mi}}\n",
                 uid, uid, annotations, cpu);
        if (ncm_pod_parse(text, strlen(text), "test", &pod, &err) < 0)
                fail_msg("pod: %s", err.msg);
        return pod;
}

static void admit_ok(fx *f, const ncm_pod *pod)
{
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_node_admit(f->n, pod, 0, &a, &err) < 0)
                fail_msg("admit %s: %s", pod->uid, err.msg);
        if (!a->admitted)
                fail_msg("admit %s: %s", pod->uid, a->message);
        ncm_node_admission_free(a);
}

static void remove_ok(fx *f, const char *uid)
{
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_node_remove_pod(f->n, uid, NULL, &err) < 0)
                fail_msg("remove %s: %s", uid, err.msg);
}

static char *memo_text(const fx *f)
{
        ncm_buf b = NCM_BUF_INIT;
        const ncm_knob_memo *m = ncm_node_knob_memo(f->n);
        if (m)
                ncm_knob_memo_format(m, &b);
        else
                ncm_buf_puts(&b, "{}\n");
        return ncm_buf_steal(&b);
}

static void test_node_knobs_v1_balance_and_quota(void **state)
{
        fx f;
        ncm_autoptr(ncm_pod) p = knob_pod("rt", "2",
                                          "cpu-load-balancing.crio.io: disable, "
                                          "cpu-quota.crio.io: disable");
        ncm_autoptr(ncm_pod) q = knob_pod("rt2", "1", "cpu-load-balancing.crio.io: \"true\"");
        ncm_autoptr(ncm_pod) plain = knob_pod("plain", "1", "x: y");
        char *memo = NULL;
        ncm_error err = NCM_ERROR_INIT;

        (void)state;
        fx_new(&f, 1, false);
        admit_ok(&f, plain);
        /* the kubelet's pod: nothing of the knobs */
        assert_file(&f.fk, "/cpuset/kubepods/podplain/app/cpuset.sched_load_balance", "1");
        assert_file(&f.fk, "/cpu/kubepods/podplain/cpu.cfs_quota_us", "110000");
        admit_ok(&f, p);
        assert_int_equal(ncm_node_container_knobs(f.n, "rt", "app"),
                         NCM_KNOB_CPU_LOAD_BALANCING | NCM_KNOB_CPU_QUOTA);
        /* the shared sidecar gets none */
        assert_int_equal(ncm_node_container_knobs(f.n, "rt", "side"), 0);
        assert_file(&f.fk, "/cpuset/kubepods/podrt/app/cpuset.cpus", "2-3");
        assert_file(&f.fk, "/cpuset/kubepods/podrt/app/cpuset.sched_load_balance", "0");
        assert_file(&f.fk, "/cpuset/kubepods/podrt/cpuset.sched_load_balance", "0");
        assert_file(&f.fk, "/cpuset/kubepods/cpuset.sched_load_balance", "0");
        assert_file(&f.fk, "/cpuset/kubepods/podrt/side/cpuset.sched_load_balance", "1");
        assert_file(&f.fk, "/cpuset/kubepods/podplain/cpuset.sched_load_balance", "1");
        assert_file(&f.fk, "/cpuset/cpuset.sched_load_balance", "1"); /* not the node's */
        assert_file(&f.fk, "/cpu/kubepods/podrt/cpu.cfs_quota_us", "-1");
        assert_file(&f.fk, "/cpu/kubepods/podrt/app/cpu.cfs_quota_us", "-1");
        assert_file(&f.fk, "/cpu/kubepods/podrt/side/cpu.cfs_quota_us", "10000");
        memo = memo_text(&f);
        assert_string_equal(memo, "{\"sched_load_balance:/cpuset/kubepods/cpuset.sched_load_"
                                  "balance\": \"1\",\n \"sched_load_balance:/cpuset/kubepods/podrt/"
                                  "cpuset.sched_load_balance\": \"1\"}\n");
        free(memo);
        /* a second one shares kubepods */
        remove_ok(&f, "plain");
        admit_ok(&f, q);
        assert_file(&f.fk, "/cpuset/kubepods/podrt2/cpuset.sched_load_balance", "0");
        /* the machine changed behind the node's back: a reconcile puts it back, counted */
        fake_put(f.fk.rootfd, "/cpuset/kubepods", "cpuset.sched_load_balance", "1\n");
        fake_put(f.fk.rootfd, "/cpu/kubepods/podrt/app", "cpu.cfs_quota_us", "200000\n");
        assert_true(ncm_node_reconcile(f.n, &err) >= 0);
        assert_file(&f.fk, "/cpuset/kubepods/cpuset.sched_load_balance", "0");
        assert_file(&f.fk, "/cpu/kubepods/podrt/app/cpu.cfs_quota_us", "-1");
        assert_int_equal(ncm_node_isolation_counters_get(f.n)
                                         ->fixed[NCM_KNOB_FIX_SCHED_LOAD_BALANCE],
                         1);
        assert_int_equal(ncm_node_isolation_counters_get(f.n)->fixed[NCM_KNOB_FIX_CPU_QUOTA], 1);
        /* nothing off: a reconcile writes nothing */
        assert_int_equal(ncm_node_reconcile(f.n, &err), 0);
        assert_int_equal(ncm_node_isolation_counters_get(f.n)
                                         ->fixed[NCM_KNOB_FIX_SCHED_LOAD_BALANCE],
                         1);
        /* the first one goes: kubepods stays (rt2 is below it), podrt's is gone with it */
        remove_ok(&f, "rt");
        assert_file(&f.fk, "/cpuset/kubepods/cpuset.sched_load_balance", "0");
        /* the last one goes: kubepods gets its value back, the memo is empty */
        remove_ok(&f, "rt2");
        assert_file(&f.fk, "/cpuset/kubepods/cpuset.sched_load_balance", "1");
        memo = memo_text(&f);
        assert_string_equal(memo, "{}\n");
        free(memo);
        fx_done(&f);
}

static void test_node_knobs_v2_partitions(void **state)
{
        fx f;
        ncm_autoptr(ncm_pod) p = knob_pod("rt", "2", "cpu-load-balancing.crio.io: disable");
        char *memo = NULL;

        (void)state;
        fx_new(&f, 2, true);
        admit_ok(&f, p);
        assert_file(&f.fk, "/kubepods/cpuset.cpus", "0-3");
        assert_file(&f.fk, "/kubepods/cpuset.cpus.exclusive", "1-2");
        assert_file(&f.fk, "/kubepods/podrt/cpuset.cpus", "0-3");
        assert_file(&f.fk, "/kubepods/podrt/cpuset.cpus.exclusive", "1-2");
        assert_file(&f.fk, "/kubepods/podrt/app/cpuset.cpus", "1-2");
        assert_file(&f.fk, "/kubepods/podrt/app/cpuset.cpus.exclusive", "1-2");
        assert_file(&f.fk, "/kubepods/podrt/app/cpuset.cpus.partition", "isolated");
        assert_file(&f.fk, "/kubepods/podrt/side/cpuset.cpus.partition", "member");
        memo = memo_text(&f);
        assert_non_null(strstr(memo, "\"partition:/kubepods/podrt/app\": \"isolated\""));
        free(memo);
        remove_ok(&f, "rt");
        /* the ancestors give the CPUs back (the kernel takes "" only as a newline) */
        assert_file(&f.fk, "/kubepods/cpuset.cpus.exclusive", "");
        memo = memo_text(&f);
        assert_string_equal(memo, "{}\n");
        free(memo);
        fx_done(&f);
}

static void test_node_knobs_v2_unsupported(void **state)
{
        fx f;
        ncm_autoptr(ncm_pod) p = knob_pod("rt", "2", "cpu-load-balancing.crio.io: disable");
        ncm_autoptr(ncm_pod) q = knob_pod("q", "2", "cpu-quota.crio.io: disable");
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;
        char *before, *after;

        (void)state;
        fx_new(&f, 2, false);
        before = ncm_cpuset_format_list(ncm_cpu_state_default(ncm_node_cpu_state(f.n)));
        assert_int_equal(ncm_node_admit(f.n, p, 0, &a, &err), -NCM_E_ENFORCEMENT);
        assert_non_null(strstr(err.msg, "cpu-load-balancing.crio.io: disable needs cgroup v2 "
                                        "remote partitions (cpuset.cpus.exclusive, Linux 6.7 or "
                                        "later): "));
        assert_non_null(strstr(err.msg, "/kubepods has no cpuset.cpus.exclusive"));
        assert_non_null(strstr(err.msg, "rolled back"));
        after = ncm_cpuset_format_list(ncm_cpu_state_default(ncm_node_cpu_state(f.n)));
        assert_string_equal(before, after);
        free(before);
        free(after);
        /* the quota needs no partition */
        admit_ok(&f, q);
        /* (a kernel reads "max 100000" back; the fake tree what was written) */
        assert_file(&f.fk, "/kubepods/podq/cpu.max", "max");
        assert_file(&f.fk, "/kubepods/podq/app/cpu.max", "max");
        fx_done(&f);
}

static void test_node_knobs_irqs(void **state)
{
        fx f;
        ncm_autoptr(ncm_pod) p = knob_pod("rt", "2", "irq-load-balancing.crio.io: disable");
        ncm_error err = NCM_ERROR_INIT;

        (void)state;
        fx_new(&f, 1, false);
        /* an interrupt whose file cannot be read is passed over */
        sys_put(&f, "/proc/irq/7/smp_affinity/x", "");
        admit_ok(&f, p);
        /* CPUs 1-2 banned */
        assert_sys(&f, "/proc/irq/default_smp_affinity", "9");
        assert_sys(&f, "/proc/irq/0/smp_affinity", "9");
        assert_sys(&f, "/proc/irq/9/smp_affinity", "1");
        assert_sys(&f, "/proc/irq/24/smp_affinity", "9");
        assert_sys(&f, "/etc/default/irqbalance",
                   "# irqbalance\nIRQBALANCE_ONESHOT=0\nIRQBALANCE_BANNED_CPUS=\"6\"");
        /* irqbalance spreads an interrupt again: a reconcile takes the banned CPUs out */
        sys_put(&f, "/proc/irq/24/smp_affinity", "e\n");
        assert_true(ncm_node_reconcile(f.n, &err) >= 0);
        assert_sys(&f, "/proc/irq/24/smp_affinity", "8");
        assert_int_equal(ncm_node_isolation_counters_get(f.n)->fixed[NCM_KNOB_FIX_IRQ_AFFINITY], 1);
        /* the container goes: its CPUs come back where they were, irqbalance as it was */
        remove_ok(&f, "rt");
        assert_sys(&f, "/proc/irq/default_smp_affinity", "f");
        assert_sys(&f, "/proc/irq/0/smp_affinity", "f");
        assert_sys(&f, "/proc/irq/9/smp_affinity", "1");
        assert_sys(&f, "/proc/irq/24/smp_affinity", "e");
        assert_sys(&f, "/etc/default/irqbalance", "# irqbalance\nIRQBALANCE_ONESHOT=0");
        fx_done(&f);
}

/* A restart converges from the root directory: the memo says what to put back. */
static void test_node_knobs_restart_converges(void **state)
{
        fx f;
        ncm_autoptr(ncm_pod) p = knob_pod("rt", "2", "irq-load-balancing.crio.io: disable");
        ncm_error err = NCM_ERROR_INIT;
        char *file = NULL;

        (void)state;
        fx_new_full(&f, 1, false, "cgroupfs", true);
        admit_ok(&f, p);
        assert_sys(&f, "/proc/irq/0/smp_affinity", "9");
        file = tu_file_text(f.dir, NCM_NODE_ISOLATION_NAME);
        assert_non_null(strstr(file, "\"irq:0\": \"f\""));
        /* the process dies; meanwhile the machine rewrites an interrupt */
        ncm_node_free(f.n);
        f.n = NULL;
        sys_put(&f, "/proc/irq/0/smp_affinity", "f\n");
        make_node(&f, &err, 0);
        assert_sys(&f, "/proc/irq/0/smp_affinity", "9");
        assert_int_equal(ncm_node_isolation_counters_get(f.n)->fixed[NCM_KNOB_FIX_IRQ_AFFINITY], 1);
        /* the process dies again, and the pod with it: the next start restores */
        ncm_node_free(f.n);
        f.n = NULL;
        {
                char path[4096];
                snprintf(path, sizeof(path), "%s/%s", f.dir, NCM_NODE_PODS_NAME);
                unlink(path);
                snprintf(path, sizeof(path), "%s/%s", f.dir, NCM_NODE_PODS_JOURNAL_NAME);
                unlink(path);
        }
        make_node(&f, &err, 0);
        assert_sys(&f, "/proc/irq/0/smp_affinity", "f");
        assert_sys(&f, "/proc/irq/default_smp_affinity", "f");
        free(file);
        file = tu_file_text(f.dir, NCM_NODE_ISOLATION_NAME);
        assert_string_equal(file, "{}\n");
        free(file);
        fx_done(&f);
}

static void test_node_knobs_plan_enforcer(void **state)
{
        fx f;
        ncm_autoptr(ncm_pod) p = knob_pod("rt", "2",
                                          "cpu-load-balancing.crio.io: disable, "
                                          "cpu-quota.crio.io: disable, "
                                          "irq-load-balancing.crio.io: disable");
        ncm_buf b = NCM_BUF_INIT;

        (void)state;
        fx_new_full(&f, 1, false, "plan", false);
        admit_ok(&f, p);
        ncm_cgroup_plan_format(ncm_enforcer_plan_get(f.e), &b);
        assert_non_null(strstr(b.data, "# cpu-load-balancing: container: "
                                       "/cpuset/kubepods/podrt/app/cpuset.sched_load_balance\n"
                                       "write    "));
        assert_non_null(strstr(b.data, "/cpuset/kubepods/podrt/app/cpuset.sched_load_balance 0\n"));
        assert_non_null(strstr(b.data, "/cpu/kubepods/podrt/cpu.cfs_quota_us -1\n"));
        ncm_buf_done(&b);
        ncm_cgroup_plan_format(ncm_enforcer_plan_machine_get(f.e), &b);
        assert_non_null(strstr(b.data, "/proc/irq/default_smp_affinity 9\n"));
        ncm_buf_done(&b);
        fx_done(&f);
}

/* A best-effort write the kernel refuses is passed over; others still fail. */
static void test_node_knobs_best_effort(void **state)
{
        fake fk;
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        ncm_error err = NCM_ERROR_INIT;

        (void)state;
        fake_init(&fk, 1, false);
        assert_int_equal(ncm_fs_mkdir(fk.rootfd, "/cpuset/d", 0755, NULL), 1);
        assert_int_equal(ncm_fs_mkdir(fk.rootfd, "/cpuset/d/smp_affinity", 0755, NULL), 1);
        assert_int_equal(ncm_cgroup_plan_add(&plan, NCM_CGROUP_OP_WRITE, NCM_CGROUP_OPF_BEST_EFFORT,
                                             "/cpuset/d/smp_affinity", "1"),
                         0);
        assert_int_equal(ncm_cgroup_plan_apply(&plan, fk.rootfd, NULL, &err), 0);
        plan.ops[0].flags = 0;
        assert_true(ncm_cgroup_plan_apply(&plan, fk.rootfd, NULL, &err) < 0);
        ncm_cgroup_plan_done(&plan);
        fake_done(&fk);
}

/* The pure pieces: masks, irqbalance's file, the memo. */
/* containerd's names for the knobs enforcer: the sandbox's cgroup parent, then an id */
static int resolve_cri(void *data, const char *uid, const char *name, char **ret)
{
        char path[256];

        (void)data;
        snprintf(path, sizeof(path), "/kubepods/pod%s/ctr-%s-%s", uid, uid, name);
        *ret = strdup(path);
        return *ret ? 0 : -ENOMEM;
}

static void cri_cgroups(fx *f, const char *uid)
{
        static const char *const hiers[] = {"cpuset", "cpu"};
        char p[256];

        for (size_t i = 0; i < NCM_ELEMENTSOF(hiers); i++)
                for (int d = 0; d < 3; d++) {
                        if (d == 0)
                                snprintf(p, sizeof(p), "/%s/kubepods", hiers[i]);
                        else if (d == 1)
                                snprintf(p, sizeof(p), "/%s/kubepods/pod%s", hiers[i], uid);
                        else
                                snprintf(p, sizeof(p), "/%s/kubepods/pod%s/ctr-%s-app", hiers[i],
                                         uid, uid);
                        if (ncm_fs_mkdir(f->fk.rootfd, p, 0755, NULL) == 1)
                                fake_v1_files(&f->fk, p, hiers[i]);
                }
        snprintf(p, sizeof(p), "/cpu/kubepods/pod%s/ctr-%s-app", uid, uid);
        fake_put(f->fk.rootfd, p, "cpu.cfs_quota_us", "200000\n");
}

/*
 * The knobs enforcer (nodecmd in front of a CRI runtime): the knobs on the cgroups the runtime
 * made, found through the resolver, for two pods at once, each with its own pod cgroup and
 * kubepods shared; the runtime's cgroups are not created or given cpusets.
 */
static void test_node_knobs_cri_runtime_cgroups(void **state)
{
        fx f;
        ncm_autoptr(ncm_pod) p = knob_pod("rt", "1",
                                          "cpu-load-balancing.crio.io: disable, "
                                          "cpu-quota.crio.io: disable");
        ncm_autoptr(ncm_pod) q = knob_pod("rt2", "1", "cpu-load-balancing.crio.io: disable");
        ncm_node_options no = {0};
        ncm_error err = NCM_ERROR_INIT;
        char *memo = NULL;

        (void)state;
        fx_new(&f, 1, false);
        ncm_node_free(f.n);
        ncm_enforcer_free(f.e);
        assert_int_equal(ncm_enforcer_knobs_new(&f.o, &f.e, &err), 0);
        ncm_enforcer_knobs_set_resolver(f.e, resolve_cri, NULL);
        no.enforcer = f.e;
        if (ncm_node_new(f.t, f.cfg, &no, &f.n, &err) < 0)
                fail_msg("node: %s", err.msg);
        cri_cgroups(&f, "rt");
        cri_cgroups(&f, "rt2");
        admit_ok(&f, p);
        admit_ok(&f, q);
        for (int i = 0; i < 2; i++) {
                const char *uid = i ? "rt2" : "rt";
                char dir[128];
                snprintf(dir, sizeof(dir),
                         "/cpuset/kubepods/pod%s/ctr-%s-app/cpuset.sched_load_balance", uid, uid);
                assert_file(&f.fk, dir, "0");
                snprintf(dir, sizeof(dir), "/cpuset/kubepods/pod%s/cpuset.sched_load_balance", uid);
                assert_file(&f.fk, dir, "0");
        }
        assert_file(&f.fk, "/cpuset/kubepods/cpuset.sched_load_balance", "0");
        assert_file(&f.fk, "/cpu/kubepods/podrt/ctr-rt-app/cpu.cfs_quota_us", "-1");
        assert_file(&f.fk, "/cpu/kubepods/podrt2/ctr-rt2-app/cpu.cfs_quota_us", "200000");
        /* the runtime's cpusets are the CRI's to set */
        assert_file(&f.fk, "/cpuset/kubepods/podrt/ctr-rt-app/cpuset.cpus", "");
        remove_ok(&f, "rt");
        assert_file(&f.fk, "/cpuset/kubepods/cpuset.sched_load_balance", "0");
        remove_ok(&f, "rt2");
        assert_file(&f.fk, "/cpuset/kubepods/cpuset.sched_load_balance", "1");
        memo = memo_text(&f);
        assert_string_equal(memo, "{}\n");
        free(memo);
        fx_done(&f);
}

static void test_node_knobs_pieces(void **state)
{
        ncm_cpuset *s = NULL;
        ncm_buf b = NCM_BUF_INIT;
        char *old = NULL;
        ncm_knob_memo *m = NULL;
        ncm_error err = NCM_ERROR_INIT;
        static const char memo[] = "{\"b\": \"2\", \"a\": \"1\"}";

        (void)state;
        assert_int_equal(ncm_knobs_parse_mask("ff,00000001", 11, &s), 0);
        tu_assert_cpuset(s, "0,32-39");
        ncm_knobs_format_mask(s, 40, &b);
        assert_string_equal(b.data, "ff,00000001");
        ncm_buf_done(&b);
        ncm_knobs_format_mask(s, 72, &b);
        assert_string_equal(b.data, "00,000000ff,00000001");
        ncm_buf_done(&b);
        ncm_cpuset_free(s);
        s = NULL;
        assert_int_equal(ncm_knobs_parse_mask("fg", 2, &s), -EINVAL);
        assert_int_equal(ncm_knobs_parse_mask("1,2", 3, &s), -EINVAL);

        {
                static const char t[] = "A=1\nIRQBALANCE_BANNED_CPUS='3'\nB=2";
                assert_int_equal(ncm_knobs_irqbalance_edit(t, strlen(t), "c", &b, &old), 0);
        }
        assert_string_equal(b.data, "A=1\nIRQBALANCE_BANNED_CPUS=\"c\"\nB=2");
        assert_string_equal(old, "3");
        free(old);
        ncm_buf_done(&b);
        assert_int_equal(ncm_knobs_irqbalance_edit("A=1", 3, "c", &b, &old), 0);
        assert_string_equal(b.data, "A=1\nIRQBALANCE_BANNED_CPUS=\"c\"\n");
        assert_null(old);
        ncm_buf_done(&b);
        {
                static const char t[] = "IRQBALANCE_BANNED_CPUS=1\nA\n";
                assert_int_equal(ncm_knobs_irqbalance_edit(t, strlen(t), NULL, &b, NULL), 0);
        }
        assert_string_equal(b.data, "A\n");
        ncm_buf_done(&b);

        assert_int_equal(ncm_knob_memo_parse(memo, strlen(memo), "m", &m, &err), 0);
        assert_string_equal(ncm_knob_memo_key(m, 0), "a");
        assert_int_equal(ncm_knob_memo_keep(m, "a", "9"), 0);
        assert_string_equal(ncm_knob_memo_get(m, "a"), "1");
        ncm_knob_memo_drop(m, "a");
        assert_null(ncm_knob_memo_get(m, "a"));
        ncm_knob_memo_format(m, &b);
        assert_string_equal(b.data, "{\"b\": \"2\"}\n");
        ncm_buf_done(&b);
        ncm_knob_memo_free(m);
        assert_int_equal(ncm_knob_memo_parse("{\"a\": 1}", 8, "m", &m, &err), -EINVAL);
        assert_string_equal(err.msg, "m: \"a\": expected string, got number");
        assert_int_equal(ncm_knob_memo_parse("[", 1, "m", &m, &err), -EINVAL);
        assert_string_equal(ncm_knob_annotation(NCM_KNOB_CPU_QUOTA), "cpu-quota.crio.io");
        {
                /* a runtime's cgroup: its pod's parent and kubepods, as the kubelet names them */
                static const struct {
                        const char *cg, *pod, *top;
                } v[] = {
                                {"/kubepods/burstable/podu/c", "/kubepods/burstable/podu",
                                 "/kubepods"},
                                {"/x/kubepods.slice/kubepods-podu.slice/cri-c.scope",
                                 "/x/kubepods.slice/kubepods-podu.slice", "/x/kubepods.slice"},
                                {"/machine.slice/libpod-c.scope", NULL, NULL},
                                {"/c", NULL, NULL},
                                {"c", NULL, NULL},
                };
                for (size_t i = 0; i < NCM_ELEMENTSOF(v); i++) {
                        char *pod = NULL, *top = NULL;
                        assert_int_equal(ncm_knobs_runtime_cgroups(v[i].cg, &pod, &top), 0);
                        if (v[i].pod)
                                assert_string_equal(pod, v[i].pod);
                        else
                                assert_null(pod);
                        if (v[i].top)
                                assert_string_equal(top, v[i].top);
                        else
                                assert_null(top);
                        free(pod);
                        free(top);
                }
        }
        assert_null(ncm_knobs_irqbalance_file(-1, "none"));
        assert_null(ncm_knobs_irqbalance_file(-1, ""));
        assert_string_equal(ncm_knobs_irqbalance_file(-1, "/etc/x"), "/etc/x");
        assert_null(ncm_knob_name(3));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_node_knobs_v1_balance_and_quota),
                        cmocka_unit_test(test_node_knobs_v2_partitions),
                        cmocka_unit_test(test_node_knobs_v2_unsupported),
                        cmocka_unit_test(test_node_knobs_irqs),
                        cmocka_unit_test(test_node_knobs_restart_converges),
                        cmocka_unit_test(test_node_knobs_plan_enforcer),
                        cmocka_unit_test(test_node_knobs_best_effort),
                        cmocka_unit_test(test_node_knobs_cri_runtime_cgroups),
                        cmocka_unit_test(test_node_knobs_pieces),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
