/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/oci on a fake machine: a directory laid out as a cgroup v1 mount (cpuset hierarchy with
 * the files the hook reads and writes) and a fake /proc whose PID/cgroup files put containers
 * in it. The runs go through the whole hook: state and config.json, identity, the record, the
 * node kept in a directory, admission, the cpusets written, poststop, stale containers,
 * refusals and failed writes undone. tests/integration/test-oci-runtimes.py does the same with
 * runc and podman.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include <nodecm/oci.h>
#include "testutil.h"

typedef struct fx {
        char *tmp;
        char cg[512], proc[512], node[512];
        ncm_topo *topo;
        ncm_node_config *cfg;
        ncm_oci_hook_options o;
        int next_pid;
} fx;

static void mkdirs(const char *path)
{
        char buf[1024];
        snprintf(buf, sizeof(buf), "%s", path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                (void)mkdir(buf, 0755);
                *p = '/';
        }
        (void)mkdir(buf, 0755);
}

static char *read_file(const char *path)
{
        char *text = NULL;
        size_t len = 0;
        if (ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &text, &len, NULL) < 0)
                return NULL;
        while (len && text[len - 1] == '\n')
                text[--len] = '\0';
        return text;
}

/* A cgroup of the fake mount with the cpuset files a runtime's cgroup has. */
static void fake_cgroup(fx *f, const char *cg, const char *cpus, const char *mems)
{
        char p[1024];
        snprintf(p, sizeof(p), "%s/cpuset%s", f->cg, cg);
        mkdirs(p);
        snprintf(p, sizeof(p), "%s/cpuset%s/cpuset.cpus", f->cg, cg);
        tu_write_file(p, cpus);
        snprintf(p, sizeof(p), "%s/cpuset%s/cpuset.mems", f->cg, cg);
        tu_write_file(p, mems);
}

static char *cg_cpus(fx *f, const char *cg)
{
        char p[1024];
        snprintf(p, sizeof(p), "%s/cpuset%s/cpuset.cpus", f->cg, cg);
        return read_file(p);
}

static void assert_cg_cpus(fx *f, const char *cg, const char *want)
{
        char *got = cg_cpus(f, cg);
        assert_non_null(got);
        if (strcmp(got, want) != 0)
                fail_msg("%s: cpuset.cpus %s, want %s", cg, got, want);
        free(got);
}

/* A container process: its /proc/PID/cgroup puts it in CG. Returns the PID. */
static int fake_process(fx *f, const char *cg)
{
        char p[1024], text[2048];
        int pid = f->next_pid++;
        snprintf(p, sizeof(p), "%s/proc/%d", f->proc, pid);
        mkdirs(p);
        snprintf(p, sizeof(p), "%s/proc/%d/cgroup", f->proc, pid);
        snprintf(text, sizeof(text),
                 "12:pids:%s\n4:memory:%s\n3:cpuset:%s\n2:cpu,cpuacct:%s\n0::/\n", cg, cg, cg, cg);
        tu_write_file(p, text);
        return pid;
}

static int setup(void **state)
{
        fx *f = calloc(1, sizeof(*f));
        /* the fake mount is cgroup v1: a kubelet from 1.35 on must be told to run there; the
         * hook's examples/oci/kubelet.yaml gives the NUMA nodes of the CPUs as cpuset.mems */
        const char *kubelet = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                              "\"failCgroupV1\": false, \"cpusetMems\": \"cpus\"}";
        assert_non_null(f);
        f->tmp = tu_mkdtemp();
        snprintf(f->cg, sizeof(f->cg), "%s/cgroup", f->tmp);
        snprintf(f->proc, sizeof(f->proc), "%s/root", f->tmp);
        snprintf(f->node, sizeof(f->node), "%s/node", f->tmp);
        fake_cgroup(f, "", "0-3", "0");
        fake_cgroup(f, "/ctrs", "0-3", "0");
        assert_int_equal(ncm_topo_from_synthetic("package:1 numa:1 core:4 pu:1", &f->topo, NULL),
                         0);
        assert_int_equal(ncm_node_config_parse(kubelet, strlen(kubelet), NULL, "", &f->cfg, NULL),
                         0);
        f->o.root_dir = f->node;
        f->o.topo = f->topo;
        f->o.cfg = f->cfg;
        f->o.cgroup_root = f->cg;
        f->o.cgroup_version = 1;
        f->o.proc_root = f->proc;
        f->o.machine_root = f->proc;
        f->next_pid = 100;
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fx *f = *state;
        tu_rm_rf(f->tmp);
        free(f->tmp);
        ncm_topo_free(f->topo);
        ncm_node_config_free(f->cfg);
        free(f);
        return 0;
}

typedef struct ctr {
        const char *id;
        const char *annotations; /* JSON members */
        const char *resources;   /* linux.resources JSON */
        const char *cgroups_path;
} ctr;

/* Run the hook for C at STAGE ("creating" or "stopped"); returns what the hook returned. */
static int hook(fx *f, const ctr *c, const char *status, ncm_oci_hook_result *res, ncm_error *err)
{
        char cg[256], state[2048], config[2048];
        int pid = 0;

        snprintf(cg, sizeof(cg), "/ctrs/%s", c->id);
        if (strcmp(status, "stopped") != 0) {
                char p[1024];
                snprintf(p, sizeof(p), "%s/cpuset%s", f->cg, cg);
                if (access(p, F_OK) != 0)
                        fake_cgroup(f, cg, "0-3", "0");
                pid = fake_process(f, cg);
        }
        snprintf(state, sizeof(state),
                 "{\"ociVersion\": \"1.0.2\", \"id\": \"%s\", \"status\": \"%s\", \"pid\": %d, "
                 "\"bundle\": \"/nonexistent\", \"annotations\": {%s}}",
                 c->id, status, pid, c->annotations);
        snprintf(config, sizeof(config),
                 "{\"ociVersion\": \"1.0.2\", \"annotations\": {%s}, \"linux\": "
                 "{\"cgroupsPath\": \"%s\", \"resources\": %s}}",
                 c->annotations, c->cgroups_path ? c->cgroups_path : cg,
                 c->resources ? c->resources : "{}");
        f->o.config_text = config;
        f->o.config_len = strlen(config);
        return ncm_oci_hook_run(&f->o, state, strlen(state), res, err);
}

static void create_ok(fx *f, const ctr *c, const char *want_cpus, bool exclusive)
{
        ncm_oci_hook_result res = {0};
        ncm_error err = NCM_ERROR_INIT;
        int r = hook(f, c, "creating", &res, &err);
        if (r < 0)
                fail_msg("create %s: %s", c->id, err.msg);
        assert_int_equal(res.action, NCM_OCI_ADMITTED);
        assert_string_equal(res.cpus, want_cpus);
        assert_int_equal(res.exclusive, exclusive);
        assert_string_equal(res.mems, "0");
        ncm_oci_hook_result_done(&res);
}

static void poststop(fx *f, const ctr *c, ncm_oci_action want)
{
        ncm_oci_hook_result res = {0};
        ncm_error err = NCM_ERROR_INIT;
        int r = hook(f, c, "stopped", &res, &err);
        if (r < 0)
                fail_msg("poststop %s: %s", c->id, err.msg);
        assert_int_equal(res.stage, NCM_OCI_STAGE_POSTSTOP);
        assert_int_equal(res.action, want);
        ncm_oci_hook_result_done(&res);
}

#define GUARANTEED_1                                                                               \
        "{\"cpu\": {\"shares\": 1024, \"quota\": 100000, \"period\": 100000}, \"memory\": "        \
        "{\"limit\": 268435456}}"
#define GUARANTEED_2                                                                               \
        "{\"cpu\": {\"shares\": 2048, \"quota\": 200000, \"period\": 100000}, \"memory\": "        \
        "{\"limit\": 268435456}}"
#define FRACTIONAL                                                                                 \
        "{\"cpu\": {\"shares\": 512, \"quota\": 50000, \"period\": 100000}, \"memory\": "          \
        "{\"limit\": 268435456}}"
#define BURSTABLE "{\"cpu\": {\"shares\": 512}}"

static void test_oci_hook_pins_and_the_pool_follows(void **state)
{
        fx *f = *state;
        const ctr b = {"b1", "\"nodecm.io/pod-uid\": \"pb\"", BURSTABLE, NULL};
        const ctr g = {"g1", "\"nodecm.io/pod-uid\": \"pg\"", GUARANTEED_2, NULL};
        const ctr fr = {"f1", "\"nodecm.io/pod-uid\": \"pf\"", FRACTIONAL, NULL};
        const ctr be = {"e1", "\"nodecm.io/managed\": \"true\"", NULL, NULL};
        char *text;

        create_ok(f, &b, "0-3", false);
        assert_cg_cpus(f, "/ctrs/b1", "0-3");
        create_ok(f, &g, "1-2", true);
        assert_cg_cpus(f, "/ctrs/g1", "1-2");
        assert_cg_cpus(f, "/ctrs/b1", "0,3"); /* the shared pool shrank */
        create_ok(f, &fr, "0,3", false);
        create_ok(f, &be, "0,3", false);

        /* the record and the node agree */
        {
                char p[1024];
                snprintf(p, sizeof(p), "%s/%s", f->node, NCM_OCI_CONTAINERS_NAME);
                text = read_file(p);
                assert_non_null(text);
                assert_non_null(strstr(text, "\"id\": \"g1\", \"pod\": \"pg\""));
                /* a container without a pod UID is its own pod, named by its id */
                assert_non_null(strstr(text, "\"id\": \"e1\", \"pod\": \"e1\""));
                free(text);
        }

        poststop(f, &g, NCM_OCI_RELEASED);
        assert_cg_cpus(f, "/ctrs/b1", "0-3");
        assert_cg_cpus(f, "/ctrs/f1", "0-3");
        assert_cg_cpus(f, "/ctrs/e1", "0-3");
        poststop(f, &g, NCM_OCI_UNKNOWN); /* twice: nothing left to release */
        poststop(f, &b, NCM_OCI_RELEASED);
        poststop(f, &fr, NCM_OCI_RELEASED);
        poststop(f, &be, NCM_OCI_RELEASED);
}

static void test_oci_hook_skips_what_is_not_nodecms(void **state)
{
        fx *f = *state;
        static const struct {
                ctr c;
                const char *reason;
        } cases[] = {
                        {{"u1", "", NULL, NULL}, "no nodecm.io/managed or pod UID annotation"},
                        {{"u2",
                          "\"io.kubernetes.cri.container-type\": \"sandbox\", "
                          "\"io.kubernetes.cri.sandbox-uid\": \"p\"",
                          NULL, NULL},
                         "a pod sandbox container"},
                        {{"u3", "\"nodecm.io/pod-uid\": \"p\", \"nodecm.io/managed\": \"false\"",
                          NULL, NULL},
                         "nodecm.io/managed is \"false\""},
        };
        /* the opt-outs: --no-confine for all of them, nodecm.io/managed "false" for one */
        f->o.no_confine = true;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_oci_hook_result res = {0};
                ncm_error err = NCM_ERROR_INIT;
                ncm_buf b = NCM_BUF_INIT;
                assert_int_equal(hook(f, &cases[i].c, "creating", &res, &err), 0);
                assert_int_equal(res.action, NCM_OCI_SKIPPED);
                assert_string_equal(res.reason, cases[i].reason);
                ncm_oci_hook_result_json(&res, &b);
                assert_non_null(strstr(b.data, "\"action\": \"skipped\""));
                ncm_buf_done(&b);
                ncm_oci_hook_result_done(&res);
        }
        /* nothing was made: the node directory does not exist */
        assert_int_not_equal(access(f->node, F_OK), 0);
        /* a poststop with no node there is a container the hook never placed */
        poststop(f, &cases[0].c, NCM_OCI_UNKNOWN);
        f->o.no_confine = false;
}

/* No stranger on an exclusive CPU: what is not nodecm's stays on the shared pool. */
static void test_oci_hook_confines_strangers(void **state)
{
        fx *f = *state;
        const ctr plain = {"plain", "", GUARANTEED_2, NULL};
        const ctr pause = {"pause",
                           "\"io.kubernetes.cri.container-type\": \"sandbox\", "
                           "\"io.kubernetes.cri.sandbox-uid\": \"p\"",
                           NULL, NULL};
        const ctr out = {"out", "\"nodecm.io/managed\": \"false\"", NULL, NULL};
        const ctr g = {"g1", "\"nodecm.io/pod-uid\": \"pg\"", GUARANTEED_2, NULL};
        ncm_oci_hook_result res = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf b = NCM_BUF_INIT;
        char p[1024], *text;

        /* a plain container, as `podman run --cpus 2 --memory 1g` makes it */
        assert_int_equal(hook(f, &plain, "creating", &res, &err), 0);
        assert_int_equal(res.action, NCM_OCI_CONFINED);
        assert_string_equal(res.cpus, "0-3");
        ncm_oci_hook_result_json(&res, &b);
        assert_string_equal(b.data, "{\"stage\": \"create\", \"id\": \"plain\", \"action\": "
                                    "\"confined\", \"cpus\": \"0-3\", \"cgroup\": "
                                    "\"/ctrs/plain\"}\n");
        ncm_buf_done(&b);
        ncm_oci_hook_result_done(&res);
        assert_int_equal(hook(f, &pause, "creating", &res, &err), 0);
        assert_int_equal(res.action, NCM_OCI_CONFINED);
        ncm_oci_hook_result_done(&res);
        /* the opt-out */
        assert_int_equal(hook(f, &out, "creating", &res, &err), 0);
        assert_int_equal(res.action, NCM_OCI_SKIPPED);
        ncm_oci_hook_result_done(&res);
        /* a pinned container: the strangers leave its CPUs, the opted-out one stays */
        create_ok(f, &g, "1-2", true);
        assert_cg_cpus(f, "/ctrs/plain", "0,3");
        assert_cg_cpus(f, "/ctrs/pause", "0,3");
        assert_cg_cpus(f, "/ctrs/out", "0-3");
        snprintf(p, sizeof(p), "%s/%s", f->node, NCM_OCI_CONFINED_NAME);
        text = read_file(p);
        assert_non_null(strstr(text, "\"id\": \"plain\""));
        assert_null(strstr(text, "\"id\": \"out\""));
        free(text);
        /* the stranger's poststop lets it go; the pinned one's gives the CPUs back */
        poststop(f, &plain, NCM_OCI_CONFINED);
        poststop(f, &g, NCM_OCI_RELEASED);
        assert_cg_cpus(f, "/ctrs/pause", "0-3");
        text = read_file(p);
        assert_null(strstr(text, "\"id\": \"plain\""));
        free(text);
        /* a stranger whose cgroup went without a poststop is forgotten */
        snprintf(p, sizeof(p), "%s/cpuset/ctrs/pause", f->cg);
        tu_rm_rf(p);
        poststop(f, &g, NCM_OCI_UNKNOWN);
        snprintf(p, sizeof(p), "%s/%s", f->node, NCM_OCI_CONFINED_NAME);
        text = read_file(p);
        assert_null(strstr(text, "\"id\": \"pause\""));
        free(text);
}

/* CRI-O's knobs through the hook: the annotations travel in the record to the pod. */
static void test_oci_hook_knobs(void **state)
{
        fx *f = *state;
        const ctr g = {"g1",
                       "\"nodecm.io/pod-uid\": \"pg\", \"cpu-load-balancing.crio.io\": "
                       "\"disable\", \"irq-load-balancing.crio.io\": \"disable\"",
                       GUARANTEED_2, NULL};
        char p[1024], *text;

        snprintf(p, sizeof(p), "%s/cpuset/ctrs", f->cg);
        mkdirs(p);
        snprintf(p, sizeof(p), "%s/cpuset/ctrs/cpuset.sched_load_balance", f->cg);
        tu_write_file(p, "1\n");
        fake_cgroup(f, "/ctrs/g1", "0-3", "0");
        snprintf(p, sizeof(p), "%s/cpuset/ctrs/g1/cpuset.sched_load_balance", f->cg);
        tu_write_file(p, "1\n");
        snprintf(p, sizeof(p), "%s/proc/irq/5", f->proc);
        mkdirs(p);
        snprintf(p, sizeof(p), "%s/proc/irq/5/smp_affinity", f->proc);
        tu_write_file(p, "f\n");
        snprintf(p, sizeof(p), "%s/proc/irq/default_smp_affinity", f->proc);
        tu_write_file(p, "f\n");
        create_ok(f, &g, "1-2", true);
        snprintf(p, sizeof(p), "%s/cpuset/ctrs/g1/cpuset.sched_load_balance", f->cg);
        text = read_file(p);
        assert_string_equal(text, "0");
        free(text);
        snprintf(p, sizeof(p), "%s/cpuset/ctrs/cpuset.sched_load_balance", f->cg);
        text = read_file(p);
        assert_string_equal(text, "0");
        free(text);
        snprintf(p, sizeof(p), "%s/proc/irq/5/smp_affinity", f->proc);
        text = read_file(p);
        assert_string_equal(text, "9");
        free(text);
        snprintf(p, sizeof(p), "%s/%s", f->node, NCM_OCI_CONTAINERS_NAME);
        text = read_file(p);
        assert_non_null(strstr(text, "\"podAnnotations\": {\"cpu-load-balancing.crio.io\": "
                                     "\"disable\", \"irq-load-balancing.crio.io\": \"disable\"}"));
        free(text);
        poststop(f, &g, NCM_OCI_RELEASED);
        snprintf(p, sizeof(p), "%s/cpuset/ctrs/cpuset.sched_load_balance", f->cg);
        text = read_file(p);
        assert_string_equal(text, "1");
        free(text);
        snprintf(p, sizeof(p), "%s/proc/irq/5/smp_affinity", f->proc);
        text = read_file(p);
        assert_string_equal(text, "f");
        free(text);
}

/*
 * An ancestor without cpuset.sched_load_balance (a cgroup going away, a tree the hook reads
 * through a dump) is passed over: the container's own file is still written.
 */
static void test_oci_hook_knobs_ancestor_gone(void **state)
{
        fx *f = *state;
        const ctr g = {"g1",
                       "\"nodecm.io/pod-uid\": \"pg\", \"cpu-load-balancing.crio.io\": \"disable\"",
                       GUARANTEED_2, NULL};
        char p[1024], *text;

        fake_cgroup(f, "/ctrs/g1", "0-3", "0");
        snprintf(p, sizeof(p), "%s/cpuset/ctrs/g1/cpuset.sched_load_balance", f->cg);
        tu_write_file(p, "1\n");
        create_ok(f, &g, "1-2", true);
        text = read_file(p);
        assert_string_equal(text, "0");
        free(text);
        poststop(f, &g, NCM_OCI_RELEASED);
}

static void test_oci_hook_refusal_changes_nothing(void **state)
{
        fx *f = *state;
        const ctr g = {"g1", "\"nodecm.io/pod-uid\": \"pg\"", GUARANTEED_2, NULL};
        const ctr b = {"b1", "\"nodecm.io/pod-uid\": \"pb\"", BURSTABLE, NULL};
        const ctr big = {"g2", "\"nodecm.io/pod-uid\": \"pg2\"", GUARANTEED_2, NULL};
        ncm_oci_hook_result res = {0};
        ncm_error err = NCM_ERROR_INIT;
        char p[1024], *before, *after;

        create_ok(f, &g, "1-2", true);
        create_ok(f, &b, "0,3", false);
        snprintf(p, sizeof(p), "%s/%s", f->node, NCM_OCI_CONTAINERS_NAME);
        before = read_file(p);
        assert_int_equal(hook(f, &big, "creating", &res, &err), -NCM_E_ADMISSION);
        assert_string_equal(err.msg, "UnexpectedAdmissionError: Allocate failed due to not "
                                     "enough cpus available to satisfy request: requested=2, "
                                     "available=1, which is unexpected");
        after = read_file(p);
        assert_string_equal(before, after);
        free(before);
        free(after);
        assert_cg_cpus(f, "/ctrs/b1", "0,3");
        assert_cg_cpus(f, "/ctrs/g2", "0-3"); /* untouched: the runtime fails it */
}

static void test_oci_hook_stale_containers_are_released(void **state)
{
        fx *f = *state;
        const ctr g = {"g1", "\"nodecm.io/pod-uid\": \"pg\"", GUARANTEED_2, NULL};
        const ctr b = {"b1", "\"nodecm.io/pod-uid\": \"pb\"", BURSTABLE, NULL};
        ncm_oci_hook_result res = {0};
        ncm_error err = NCM_ERROR_INIT;
        char p[1024];

        create_ok(f, &g, "1-2", true);
        /* the runtime was killed: g1's cgroup went without a poststop */
        snprintf(p, sizeof(p), "%s/cpuset/ctrs/g1", f->cg);
        tu_rm_rf(p);
        assert_int_equal(hook(f, &b, "creating", &res, &err), 0);
        assert_int_equal(res.stale, 1);
        assert_string_equal(res.cpus, "0-3");
        ncm_oci_hook_result_done(&res);
}

static void test_oci_hook_is_idempotent_and_pods_group(void **state)
{
        fx *f = *state;
        const ctr a = {"a1",
                       "\"io.kubernetes.pod.uid\": \"pod-a\", \"io.kubernetes.container.name\": "
                       "\"app\"",
                       GUARANTEED_1, "/kubepods/podpod-a/a1"};
        const ctr s = {"a2",
                       "\"io.kubernetes.pod.uid\": \"pod-a\", \"io.kubernetes.container.name\": "
                       "\"log\"",
                       FRACTIONAL, "/kubepods/podpod-a/a2"};
        const ctr a_again = {"a3",
                             "\"io.kubernetes.pod.uid\": \"pod-a\", "
                             "\"io.kubernetes.container.name\": \"app\"",
                             GUARANTEED_1, "/kubepods/podpod-a/a3"};
        const ctr bad = {"a4",
                         "\"io.kubernetes.pod.uid\": \"pod-b\", \"io.kubernetes.container.name\": "
                         "\"app\"",
                         BURSTABLE, "/kubepods/podpod-b/a4"};
        ncm_oci_hook_result res = {0};
        ncm_error err = NCM_ERROR_INIT;

        create_ok(f, &a, "1", true);
        create_ok(f, &a, "1", true); /* prestart and createRuntime both ran */
        create_ok(f, &s, "0,2-3", false);
        /* a new instance of "app" (the container restarted) keeps its CPUs */
        create_ok(f, &a_again, "1", true);
        /* the cgroup path says Guaranteed; shares alone cannot be */
        assert_int_equal(hook(f, &bad, "creating", &res, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "container 'app': a Guaranteed container needs"));
        poststop(f, &a, NCM_OCI_UNKNOWN); /* replaced by a3 */
        poststop(f, &a_again, NCM_OCI_RELEASED);
        poststop(f, &s, NCM_OCI_RELEASED);
}

/* An init container's exclusive CPUs are reused by the app container that follows it, as the
 * kubelet's cpusToReuse does, once the pod is admitted again with both. */
static void test_oci_hook_init_container_cpus_are_reused(void **state)
{
        fx *f = *state;
        const ctr init = {"i1",
                          "\"io.kubernetes.pod.uid\": \"pi\", \"io.kubernetes.container.name\": "
                          "\"setup\", \"io.kubernetes.container.type\": \"init\"",
                          GUARANTEED_2, "/kubepods/podpi/i1"};
        const ctr app = {"i2",
                         "\"io.kubernetes.pod.uid\": \"pi\", \"io.kubernetes.container.name\": "
                         "\"app\", \"io.kubernetes.container.type\": \"container\"",
                         GUARANTEED_2, "/kubepods/podpi/i2"};
        const ctr other = {"o1", "\"nodecm.io/pod-uid\": \"po\"", GUARANTEED_1, NULL};

        create_ok(f, &init, "1-2", true);
        create_ok(f, &app, "1-2", true);
        /* the pool lost only the two CPUs both hold */
        create_ok(f, &other, "3", true);
        poststop(f, &init, NCM_OCI_RELEASED);
        /* the app container still holds them: nothing joined the pool */
        assert_cg_cpus(f, "/ctrs/i2", "1-2");
        poststop(f, &app, NCM_OCI_RELEASED);
        poststop(f, &other, NCM_OCI_RELEASED);
}

static void test_oci_hook_failed_write_is_undone(void **state)
{
        fx *f = *state;
        const ctr b = {"b1", "\"nodecm.io/pod-uid\": \"pb\"", BURSTABLE, NULL};
        const ctr g = {"g1", "\"nodecm.io/pod-uid\": \"pg\"", GUARANTEED_2, NULL};
        ncm_oci_hook_result res = {0};
        ncm_error err = NCM_ERROR_INIT;
        char p[1024];

        create_ok(f, &b, "0-3", false);
        /* g1's cpuset.mems cannot be written: its cpus write must be undone too */
        fake_cgroup(f, "/ctrs/g1", "0-3", "0");
        snprintf(p, sizeof(p), "%s/cpuset/ctrs/g1/cpuset.mems", f->cg);
        unlink(p);
        assert_int_equal(mkdir(p, 0755), 0);
        assert_int_equal(hook(f, &g, "creating", &res, &err), -NCM_E_ENFORCEMENT);
        assert_non_null(strstr(err.msg, "rolled back"));
        assert_cg_cpus(f, "/ctrs/g1", "0-3");
        assert_cg_cpus(f, "/ctrs/b1", "0-3");
        {
                char *text;
                snprintf(p, sizeof(p), "%s/%s", f->node, NCM_OCI_CONTAINERS_NAME);
                text = read_file(p);
                assert_null(strstr(text, "g1"));
                free(text);
        }
}

static void test_oci_state_and_config_errors(void **state)
{
        static const struct {
                const char *state;
                const char *msg;
        } states[] = {
                        {"", "state:1:1: unexpected end of JSON input"},
                        {"[]", "state: expected object, got array"},
                        {"{\"status\": \"creating\"}", "state: id: missing"},
                        {"{\"id\": \"x\"}", "state: status: missing"},
                        {"{\"id\": \"x\", \"status\": \"creating\", \"pid\": \"1\"}",
                         "state: pid: expected an integer, got string"},
                        {"{\"id\": \"x\", \"status\": \"creating\", \"pid\": -1}", NULL},
                        {"{\"id\": \"x\", \"status\": \"creating\", \"annotations\": {\"a\": 1}}",
                         "state: annotations.a: expected string, got number"},
        };
        static const struct {
                const char *config;
                const char *msg;
        } configs[] = {
                        {"{\"linux\": {\"resources\": {\"cpu\": {\"quota\": \"x\"}}}}",
                         "config.json: linux.resources.cpu.quota: expected an integer, got string"},
                        {"{\"linux\": {\"resources\": {\"cpu\": {\"shares\": -5}}}}", NULL},
                        {"{\"linux\": {\"cgroupsPath\": 5}}", NULL},
                        {"{\"linux\": {\"resources\": {\"hugepageLimits\": [{\"pageSize\": "
                         "\"2Mi\", \"limit\": 1}]}}}",
                         NULL},
                        {"{\"annotations\": []}", "config.json: annotations: expected object, got "
                                                  "array"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(states); i++) {
                ncm_oci_state s = {0};
                ncm_error err = NCM_ERROR_INIT;
                int r = ncm_oci_state_parse(states[i].state, strlen(states[i].state), &s, &err);
                /* out of range (a negative pid) is -ERANGE, anything else -EINVAL */
                assert_true(r == -EINVAL || r == -ERANGE);
                if (states[i].msg && strstr(err.msg, states[i].msg) == NULL)
                        fail_msg("%s: %s", states[i].state, err.msg);
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(configs); i++) {
                ncm_oci_config c = {0};
                ncm_error err = NCM_ERROR_INIT;
                int r = ncm_oci_config_parse(configs[i].config, strlen(configs[i].config), NULL, &c,
                                             &err);
                assert_true(r == -EINVAL || r == -ERANGE);
                if (configs[i].msg && strcmp(err.msg, configs[i].msg) != 0)
                        fail_msg("%s: %s", configs[i].config, err.msg);
        }
        {
                const char *cfg = "{\"annotations\": {\"k\": \"v\"}, \"linux\": {\"cgroupsPath\": "
                                  "\"/a/b\", \"resources\": {\"cpu\": {\"shares\": 2048, "
                                  "\"quota\": -1, \"period\": 100000}, \"memory\": {\"limit\": "
                                  "-1}, \"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": "
                                  "0}, {\"pageSize\": \"1GB\", \"limit\": 1073741824}]}}, "
                                  "\"process\": {\"args\": [\"x\"]}}";
                ncm_oci_config c = {0};
                assert_int_equal(ncm_oci_config_parse(cfg, strlen(cfg), NULL, &c, NULL), 0);
                assert_int_equal(c.n_annotations, 1);
                assert_string_equal(c.cgroups_path, "/a/b");
                assert_int_equal(c.resources.cpu_shares, 2048);
                assert_int_equal(c.resources.cpu_quota, -1);
                assert_int_equal(c.resources.memory_limit, 0);
                assert_int_equal(c.resources.n_hugepages, 1);
                assert_int_equal(c.resources.hugepages[0].page_size, 1 << 30);
                ncm_oci_config_done(&c);
        }
}

static void test_oci_hook_missing_cgroup(void **state)
{
        fx *f = *state;
        const char *st = "{\"id\": \"x\", \"status\": \"creating\", \"pid\": 4242}";
        const char *cfg = "{\"annotations\": {\"nodecm.io/managed\": \"true\"}}";
        ncm_oci_hook_result res = {0};
        ncm_error err = NCM_ERROR_INIT;
        char p[1024];

        f->o.config_text = cfg;
        f->o.config_len = strlen(cfg);
        snprintf(p, sizeof(p), "%s/proc/4242", f->proc);
        mkdirs(p);
        snprintf(p, sizeof(p), "%s/proc/4242/cgroup", f->proc);
        tu_write_file(p, "4:memory:/x\n0::/x\n");
        assert_int_equal(ncm_oci_hook_run(&f->o, st, strlen(st), &res, &err), -ENOENT);
        assert_string_equal(err.msg, "container 'x': process 4242 has no cpuset cgroup");
        st = "{\"id\": \"x\", \"status\": \"creating\"}";
        assert_int_equal(ncm_oci_hook_run(&f->o, st, strlen(st), &res, &err), -EINVAL);
        assert_string_equal(err.msg, "container 'x': the state has no pid (run the hook at "
                                     "createRuntime or prestart)");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test_setup_teardown(test_oci_hook_pins_and_the_pool_follows,
                                                        setup, teardown),
                        cmocka_unit_test_setup_teardown(test_oci_hook_skips_what_is_not_nodecms,
                                                        setup, teardown),
                        cmocka_unit_test_setup_teardown(test_oci_hook_confines_strangers, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_oci_hook_knobs, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_oci_hook_knobs_ancestor_gone, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_oci_hook_refusal_changes_nothing,
                                                        setup, teardown),
                        cmocka_unit_test_setup_teardown(test_oci_hook_stale_containers_are_released,
                                                        setup, teardown),
                        cmocka_unit_test_setup_teardown(test_oci_hook_is_idempotent_and_pods_group,
                                                        setup, teardown),
                        cmocka_unit_test_setup_teardown(
                                        test_oci_hook_init_container_cpus_are_reused, setup,
                                        teardown),
                        cmocka_unit_test_setup_teardown(test_oci_hook_failed_write_is_undone, setup,
                                                        teardown),
                        cmocka_unit_test(test_oci_state_and_config_errors),
                        cmocka_unit_test_setup_teardown(test_oci_hook_missing_cgroup, setup,
                                                        teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
