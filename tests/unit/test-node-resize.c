/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's in-place resize: the kubelet's refusals with the gates off (texts exact: its
 * allocation manager's canResizePod), the API server's QoS refusal, the capacity check and the
 * Deferred fit, input the API server would not forward, KEP-5554's resize with the gates on in
 * both topology-manager scopes, pinned memory, transactions (a refusal leaves the state and
 * every file byte for byte), persistence across restarts, and the enforcer's order (what
 * shrinks, the shared pool, what grows), and isolated CPUs (a resize stays in its pool).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/enforcer.h>
#include <nodecm/fs.h>
#include <nodecm/node-resize.h>
#include <nodecm/node.h>
#include "testutil.h"

#define TWO_NUMA "package:2 numa:1 core:4 pu:2"
#define GATE_CPUS "\"featureGates\": {\"InPlacePodVerticalScalingExclusiveCPUs\": true}"

typedef struct fx {
        ncm_topo *t;
        ncm_node_config *cfg;
        ncm_enforcer *e;
        ncm_resource_list capacity;
        char *dir;
        ncm_node *n;
} fx;

/* A node on TOPO (synthetic) with the kubelet configuration KUBELET (JSON); DIR: a state
 * directory; PLAN: the plan enforcer (cgroup v1); CAP: a capacity ("cpu=16,memory=64Gi"). */
static void fx_new(fx *f, const char *syn, const char *kubelet, bool dir, bool plan,
                   const char *cap)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_options o = {0};

        *f = (fx){0};
        if (ncm_topo_from_synthetic(syn, &f->t, &err) < 0 ||
            ncm_topo_apply_memory_spec(f->t, "16Gi", &err) < 0 ||
            ncm_node_config_parse(kubelet, strlen(kubelet), "kubelet", "node.kubelet", &f->cfg,
                                  &err) < 0)
                fail_msg("%s", err.msg);
        if (plan) {
                ncm_enforcer_cgroup_options eo = {.cgroup_version = 1};
                if (ncm_enforcer_plan_new(&eo, &f->e, &err) < 0)
                        fail_msg("%s", err.msg);
                o.enforcer = f->e;
        }
        if (cap) {
                if (ncm_cgroup_parse_capacity(cap, &f->capacity, &err) < 0)
                        fail_msg("%s", err.msg);
                o.capacity = &f->capacity;
        }
        if (dir) {
                f->dir = tu_mkdtemp();
                o.state_dir = f->dir;
                o.persist_pods = true;
        }
        if (ncm_node_new(f->t, f->cfg, &o, &f->n, &err) < 0)
                fail_msg("node: %s", err.msg);
}

static void fx_done(fx *f)
{
        ncm_node_free(f->n);
        ncm_enforcer_free(f->e);
        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->t);
        ncm_resource_list_done(&f->capacity);
        if (f->dir) {
                tu_rm_rf(f->dir);
                free(f->dir);
        }
}

/* A pod: its containers "name=request/limit" (cpu; memory 1Gi both unless given as
 * "name=cpu/cpu/mem"), "+" marks a sidecar. */
static ncm_pod *pod(const char *uid, const char *const *ctrs)
{
        ncm_buf b = NCM_BUF_INIT, init = NCM_BUF_INIT, app = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p = NULL;

        for (size_t i = 0; ctrs[i]; i++) {
                char name[64], req[32], lim[32], mem[32] = "1Gi";
                bool side = ctrs[i][0] == '+';
                ncm_buf *to = side ? &init : &app;
                if (sscanf(ctrs[i] + side, "%63[^=]=%31[^/]/%31[^/]/%31s", name, req, lim, mem) < 3)
                        fail_msg("container %s", ctrs[i]);
                ncm_buf_printf(to,
                               "%s{\"name\": \"%s\"%s, \"resources\": {\"requests\": {\"cpu\": "
                               "\"%s\", \"memory\": \"%s\"}, \"limits\": {\"cpu\": \"%s\", "
                               "\"memory\": \"%s\"}}}",
                               to->len ? ", " : "", name,
                               side ? ", \"restartPolicy\": \"Always\"" : "", req, mem, lim, mem);
        }
        ncm_buf_printf(&b,
                       "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": "
                       "{\"initContainers\": [%s], \"containers\": [%s]}}",
                       uid, uid, init.data ? init.data : "", app.data ? app.data : "");
        if (ncm_pod_parse(b.data, b.len, NULL, &p, &err) < 0)
                fail_msg("%s: %s", b.data, err.msg);
        ncm_buf_done(&b);
        ncm_buf_done(&init);
        ncm_buf_done(&app);
        return p;
}

static void admit(fx *f, const char *uid, const char *const *ctrs)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_admission *a = NULL;
        ncm_pod *p = pod(uid, ctrs);

        if (ncm_node_admit(f->n, p, 0, &a, &err) < 0)
                fail_msg("admit: %s", err.msg);
        if (!a->admitted)
                fail_msg("refused: %s: %s", a->reason, a->message);
        ncm_node_admission_free(a);
        ncm_pod_free(p);
}

/* Resize to CTRS: 0 and *RET, or the error. */
static int try_resize(fx *f, const char *uid, const char *const *ctrs, unsigned flags,
                      ncm_node_admission **ret, ncm_error *err)
{
        ncm_pod *p = pod(uid, ctrs);
        int r = ncm_node_resize(f->n, p, flags, ret, err);
        ncm_pod_free(p);
        return r;
}

static void expect_resized(fx *f, const char *uid, const char *const *ctrs, const char *cpus0)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_admission *a = NULL;

        if (try_resize(f, uid, ctrs, 0, &a, &err) < 0)
                fail_msg("resize: %s", err.msg);
        if (!a->admitted)
                fail_msg("refused: %s: %s", a->reason, a->message);
        if (cpus0)
                tu_assert_cpuset(a->containers[0].cpus, cpus0);
        ncm_node_admission_free(a);
}

/* Refused with REASON and MESSAGE; the state, its checkpoint and the pod's spec unchanged. */
static void expect_refused(fx *f, const char *uid, const char *const *ctrs, const char *reason,
                           const char *message)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_admission *a = NULL;
        ncm_buf before = NCM_BUF_INIT, after = NCM_BUF_INIT, pb = NCM_BUF_INIT, pa = NCM_BUF_INIT;
        char *files_before = f->dir ? tu_file_text(f->dir, "cpu_manager_state") : NULL;
        char *pods_before = f->dir ? tu_file_text(f->dir, "nodecm_pods_journal") : NULL;

        ncm_node_format_cpu_checkpoint(f->n, &before);
        ncm_pod_format_json(ncm_node_pod(f->n, uid), &pb);
        if (try_resize(f, uid, ctrs, 0, &a, &err) < 0)
                fail_msg("resize: %s", err.msg);
        if (a->admitted)
                fail_msg("resized, expected %s: %s", reason, message);
        assert_string_equal(a->reason, reason);
        assert_string_equal(a->message, message);
        ncm_node_format_cpu_checkpoint(f->n, &after);
        ncm_pod_format_json(ncm_node_pod(f->n, uid), &pa);
        assert_string_equal(before.data, after.data);
        assert_string_equal(pb.data, pa.data);
        if (f->dir) {
                char *files_after = tu_file_text(f->dir, "cpu_manager_state");
                char *pods_after = tu_file_text(f->dir, "nodecm_pods_journal");
                assert_string_equal(files_before, files_after);
                assert_string_equal(pods_before, pods_after);
                free(files_after);
                free(pods_after);
        }
        free(files_before);
        free(pods_before);
        ncm_buf_done(&before);
        ncm_buf_done(&after);
        ncm_buf_done(&pb);
        ncm_buf_done(&pa);
        ncm_node_admission_free(a);
}

static const ncm_cpuset *entry(fx *f, const char *uid, const char *c)
{
        return ncm_cpu_state_get(ncm_node_cpu_state(f->n), uid, c);
}

/* ------------------------------------------------------------------------------------------
 * The kubelet's refusals
 */

static void test_node_resize_gate_off_is_the_kubelets_refusal(void **state)
{
        fx f;
        const char *const g2[] = {"app=2/2", NULL}, *const g4[] = {"app=4/4", NULL};
        const char *const f5[] = {"app=500m/500m", NULL}, *const f7[] = {"app=700m/700m", NULL};
        const char *const b1[] = {"app=500m/1", NULL}, *const b2[] = {"app=700m/2", NULL};
        (void)state;

        fx_new(&f, TWO_NUMA, "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}",
               true, false, NULL);
        admit(&f, "g", g2);
        admit(&f, "f", f5);
        admit(&f, "b", b1);
        /* every Guaranteed pod whose cpu changes, exclusive or fractional */
        expect_refused(&f, "g", g4, "Infeasible",
                       "Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "
                       "\"static\"");
        expect_refused(&f, "f", f7, "Infeasible",
                       "Resize is infeasible for Guaranteed Pods alongside CPU Manager policy "
                       "\"static\"");
        assert_null(ncm_cpu_state_promised(ncm_node_cpu_state(f.n), "g", "app"));
        /* a Burstable pod: its shares and quota only */
        expect_resized(&f, "b", b2, NULL);
        {
                char q[NCM_QUANTITY_STRLEN];
                const ncm_quantity *lim =
                                ncm_container_limit(&ncm_node_pod(f.n, "b")->containers[0], "cpu");
                assert_string_equal(ncm_quantity_to_string(lim, q), "2");
        }
        fx_done(&f);
}

static void test_node_resize_api_server_and_input(void **state)
{
        fx f;
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_admission *a = NULL;
        const char *const g2[] = {"app=2/2", NULL}, *const burst[] = {"app=1/2", NULL};
        const char *const renamed[] = {"other=2/2", NULL};
        const char *const more[] = {"app=2/2", "x=1/1", NULL};
        const char *const hp[] = {"app=2/2/2Gi", NULL};
        (void)state;

        fx_new(&f, TWO_NUMA,
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", " GATE_CPUS "}",
               false, false, NULL);
        admit(&f, "g", g2);
        expect_refused(&f, "g", burst, "Invalid",
                       "The Pod \"g\" is invalid: spec: Invalid value: \"Guaranteed\": Pod QOS "
                       "Class may not change as a result of resizing");
        assert_int_equal(try_resize(&f, "nope", g2, 0, &a, &err), -ENOENT);
        assert_string_equal(err.msg, "resize of pod 'nope': the node holds no such pod");
        assert_int_equal(try_resize(&f, "g", renamed, 0, &a, &err), -EINVAL);
        assert_string_equal(err.msg, "resize of pod 'g': container 0 is 'other', was 'app': "
                                     "containers may not be renamed or reordered");
        assert_int_equal(try_resize(&f, "g", more, 0, &a, &err), -EINVAL);
        assert_string_equal(err.msg, "resize of pod 'g': containers may not be added or removed");
        /* memory may change (2Gi), but nothing else than cpu and memory */
        assert_int_equal(try_resize(&f, "g", hp, 0, &a, &err), 0);
        assert_true(a->admitted);
        ncm_node_admission_free(a);
        fx_done(&f);
}

static void test_node_resize_capacity_and_deferred(void **state)
{
        fx f;
        const char *const g2[] = {"app=2/2", NULL}, *const g9[] = {"app=9/9", NULL};
        const char *const g7[] = {"app=7/7", NULL}, *const g3[] = {"app=3/3", NULL};
        (void)state;

        /* 8 CPUs of capacity (the topology has 16), less the reserved CPU (reservedSystemCPUs
         * replaces kubeReserved's and systemReserved's cpu, as the kubelet's server does) */
        fx_new(&f, TWO_NUMA,
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", " GATE_CPUS "}",
               false, false, "cpu=8,memory=64Gi");
        admit(&f, "g", g2);
        admit(&f, "h", g2);
        expect_refused(&f, "g", g9, "Infeasible",
                       "Node didn't have enough capacity: cpu, requested: 9000, capacity: 7000");
        /* 7 fits the node but not beside h's 2 (allocatable 7 with one reserved CPU) */
        expect_refused(&f, "g", g7, "Deferred",
                       "Node didn't have enough resource: cpu, requested: 7000, used: 2000, "
                       "capacity: 7000");
        expect_resized(&f, "g", g3, NULL);
        assert_int_equal(ncm_cpuset_weight(entry(&f, "g", "app")), 3);
        fx_done(&f);
}

/* ------------------------------------------------------------------------------------------
 * KEP-5554 with the gate on
 */

static void test_node_resize_single_numa_node(void **state)
{
        fx f;
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_admission *a = NULL;
        const char *const g4[] = {"app=4/4", NULL}, *const g6[] = {"app=6/6", NULL};
        const char *const g10[] = {"app=10/10", NULL};
        (void)state;

        fx_new(&f, TWO_NUMA,
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
               "\"topologyManagerPolicy\": \"single-numa-node\", " GATE_CPUS "}",
               false, false, NULL);
        admit(&f, "g", g4);
        expect_resized(&f, "g", g6, "2-7");
        expect_refused(&f, "g", g10, "Infeasible",
                       "Resources cannot be allocated with Topology locality");
        /* --explain says which NUMA node was missing */
        assert_int_equal(try_resize(&f, "g", g10, NCM_NODE_EXPLAIN, &a, &err), 0);
        {
                ncm_buf b = NCM_BUF_INIT;
                ncm_node_format_resize_text(&b, -1, ncm_node_pod(f.n, "g"), a, true);
                assert_non_null(strstr(b.data, "app holds 2-7 on NUMA node(s) 0, which have 1 "
                                               "free CPU; it needs 4 more, so the affinity would "
                                               "have to grow to NUMA node(s) 1 (free there: "
                                               "8-15), which the single-numa-node policy does "
                                               "not admit"));
                ncm_buf_done(&b);
        }
        ncm_node_admission_free(a);
        fx_done(&f);
}

static void test_node_resize_pod_scope_and_sidecar(void **state)
{
        fx f;
        const char *const p1[] = {"+log=1/1", "app=2/2", NULL};
        const char *const p2[] = {"+log=1/1", "app=4/4", NULL};
        const char *const p3[] = {"+log=2/2", "app=2/2", NULL};
        char *promise;
        (void)state;

        fx_new(&f, TWO_NUMA,
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
               "\"topologyManagerPolicy\": \"restricted\", \"topologyManagerScope\": "
               "\"pod\", " GATE_CPUS "}",
               false, false, NULL);
        admit(&f, "p", p1);
        expect_resized(&f, "p", p2, NULL);
        assert_int_equal(ncm_cpuset_weight(entry(&f, "p", "app")), 4);
        /* a sidecar is resized too; the app back to its promise */
        expect_resized(&f, "p", p3, NULL);
        assert_int_equal(ncm_cpuset_weight(entry(&f, "p", "log")), 2);
        promise = ncm_cpuset_format_list(
                        ncm_cpu_state_promised(ncm_node_cpu_state(f.n), "p", "app"));
        tu_assert_cpuset(entry(&f, "p", "app"), promise);
        free(promise);
        fx_done(&f);
}

/*
 * The promise is kept in cpu_manager_state and survives a restart: as the kubelet's baseline
 * inside V4 data (1.37, the default), as nodecm's own member of a V2 file (1.36).
 */
static void test_node_resize_restart_keeps_the_promise(void **state)
{
        static const struct {
                const char *version; /* kubeletVersion, "" for the default */
                const char *where;   /* the promise in the file */
        } gens[] = {
                        {"", "\\\"baselines\\\":{\\\"g\\\":{\\\"app\\\":{\\\"baseline\\\":"
                             "\\\"2-5\\\"}}}"},
                        {"\"kubeletVersion\": \"1.36\", ",
                         "\"promised\":{\"g\":{\"app\":\"2-5\"}}"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(gens); i++) {
                fx f;
                ncm_error err = NCM_ERROR_INIT;
                const char *const g4[] = {"app=4/4", NULL}, *const g8[] = {"app=8/8", NULL};
                const char *const g2[] = {"app=2/2", NULL};
                char cfg[512];
                char *text;

                snprintf(cfg, sizeof(cfg),
                         "{%s\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                         "" GATE_CPUS "}",
                         gens[i].version);
                fx_new(&f, TWO_NUMA, cfg, true, false, NULL);
                admit(&f, "g", g4);
                expect_resized(&f, "g", g8, "2-9");
                text = tu_file_text(f.dir, "cpu_manager_state");
                if (!strstr(text, gens[i].where))
                        fail_msg("%s: no %s in %s", cfg, gens[i].where, text);
                free(text);
                assert_int_equal(ncm_node_restart(f.n, NULL, &err), 0);
                tu_assert_cpuset(ncm_cpu_state_promised(ncm_node_cpu_state(f.n), "g", "app"),
                                 "2-5");
                tu_assert_cpuset(entry(&f, "g", "app"), "2-9");
                expect_refused(&f, "g", g2, "Infeasible",
                               "prohibitedCPUAllocation Error: Skip resize, Not allowed to reduce "
                               "container exclusively allocated pool below promised, (requested "
                               "CPUs = 2, allocated CPUs = 8, promised CPUs = 4, guaranteed CPUs "
                               "= 2)");
                expect_resized(&f, "g", g4, "2-5");
                fx_done(&f);
        }
}

#define KUBELET_MEM_FMT                                                                            \
        "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "                       \
        "\"topologyManagerPolicy\": \"single-numa-node\", \"memoryManagerPolicy\": "               \
        "\"Static\", \"kubeReserved\": {\"memory\": \"512Mi\"}, "                                  \
        "\"systemReserved\": "                                                                     \
        "{\"memory\": \"512Mi\"}, \"evictionHard\": {\"memory.available\": "                       \
        "\"100Mi\"}, \"reservedMemory\": [{\"numaNode\": 0, \"limits\": "                          \
        "{\"memory\": \"562Mi\"}}, {\"numaNode\": 1, \"limits\": {\"memory\": "                    \
        "\"562Mi\"}}], \"featureGates\": "                                                         \
        "{\"InPlacePodVerticalScalingExclusiveCPUs\": true%s}}"

/* Pinned memory: the kubelet's refusal with its gate off, then KEP-5554's rules with it on. */
static void test_node_resize_memory(void **state)
{
        const char *const m4[] = {"app=2/2/4Gi", NULL}, *const m6[] = {"app=2/2/6Gi", NULL};
        const char *const m3[] = {"app=2/2/3Gi", NULL}, *const m16[] = {"app=2/2/16Gi", NULL};
        char kubelet[1024];
        fx f;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        snprintf(kubelet, sizeof(kubelet), KUBELET_MEM_FMT, "");
        fx_new(&f, TWO_NUMA, kubelet, false, false, NULL);
        admit(&f, "m", m4);
        expect_refused(&f, "m", m6, "Infeasible",
                       "Resize is infeasible for Guaranteed Pods alongside Memory Manager policy "
                       "\"Static\"");
        fx_done(&f);

        snprintf(kubelet, sizeof(kubelet), KUBELET_MEM_FMT,
                 ", \"InPlacePodVerticalScalingExclusiveMemory\": true");
        fx_new(&f, TWO_NUMA, kubelet, true, false, NULL);
        admit(&f, "m", m4);
        expect_resized(&f, "m", m6, NULL);
        assert_int_equal(ncm_node_restart(f.n, NULL, &err), 0);
        expect_refused(&f, "m", m3, "Infeasible",
                       "prohibitedMemoryAllocation Error: Skip resize, Not allowed to reduce "
                       "container exclusively allocated memory below promised, (requested memory "
                       "= 3221225472, allocated memory = 6442450944, promised memory = "
                       "4294967296)");
        expect_refused(&f, "m", m16, "Infeasible",
                       "Allocate failed due to [memorymanager] resize of container app: NUMA "
                       "node(s) 0 have 10148118528 bytes of memory free, 10737418240 more are "
                       "needed (pinned memory does not move to other NUMA nodes), which is "
                       "unexpected");
        fx_done(&f);
}

/* ------------------------------------------------------------------------------------------
 * Enforcement
 */

/* The plan's step titles and written files, one per line (hugetlb left out). */
static char *plan_lines(fx *f, size_t from)
{
        const ncm_cgroup_plan *plan = ncm_enforcer_plan_get(f->e);
        ncm_buf b = NCM_BUF_INIT, out = NCM_BUF_INIT;

        ncm_cgroup_plan_format(plan, &b);
        for (char *line = b.data, *end; line && *line; line = end ? end + 1 : NULL) {
                end = strchr(line, '\n');
                if (end)
                        *end = '\0';
                /* the pod's cgroups: the node's and the tiers' are written as they were */
                if ((size_t)(line - b.data) < from || !strstr(line, "write ") ||
                    strstr(line, "hugetlb") || !strstr(line, "/kubepods/pod"))
                        continue;
                ncm_buf_printf(&out, "%s\n", strstr(line, "/kubepods"));
        }
        ncm_buf_done(&b);
        return ncm_buf_steal(&out);
}

static size_t plan_len(fx *f)
{
        ncm_buf b = NCM_BUF_INIT;
        size_t n;
        ncm_cgroup_plan_format(ncm_enforcer_plan_get(f->e), &b);
        n = b.len;
        ncm_buf_done(&b);
        return n;
}

static void test_node_resize_enforcement_order(void **state)
{
        fx f;
        const char *const p4[] = {"app=4/4", "side=500m/500m", NULL};
        const char *const p8[] = {"app=8/8", "side=700m/700m", NULL};
        size_t at;
        char *grow, *shrink;
        (void)state;

        fx_new(&f, TWO_NUMA,
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
               "\"failCgroupV1\": false, " GATE_CPUS "}",
               false, true, "cpu=16,memory=64Gi");
        admit(&f, "p", p4);
        at = plan_len(&f);
        expect_resized(&f, "p", p8, "2-9");
        grow = plan_lines(&f, at);
        /* the shared container first leaves the CPUs app takes; then the pod cgroup, app's
         * cpuset widened, then the limits rise */
        assert_string_equal(grow, "/kubepods/podp/side/cpuset.cpus 0-1,10-15\n"
                                  "/kubepods/podp/memory.limit_in_bytes 2147483648\n"
                                  "/kubepods/podp/cpu.shares 8908  (read back)\n"
                                  "/kubepods/podp/cpu.cfs_period_us 100000  (on EINVAL, again "
                                  "after the next write)\n"
                                  "/kubepods/podp/cpu.cfs_quota_us -1\n"
                                  "/kubepods/podp/app/cpuset.cpus 2-9\n"
                                  "/kubepods/podp/app/cpu.shares 8192  (read back)\n"
                                  "/kubepods/podp/side/cpu.shares 716  (read back)\n"
                                  "/kubepods/podp/side/cpu.cfs_period_us 100000  (on EINVAL, "
                                  "again after the next write)\n"
                                  "/kubepods/podp/side/cpu.cfs_quota_us 70000\n");
        at = plan_len(&f);
        expect_resized(&f, "p", p4, "2-5");
        shrink = plan_lines(&f, at);
        /* the other way round: limits fall, app's cpuset narrows, then the pool widens */
        assert_string_equal(shrink,
                            "/kubepods/podp/app/cpu.shares 4096  (read back)\n"
                            "/kubepods/podp/app/cpuset.cpus 2-5\n"
                            "/kubepods/podp/side/cpu.shares 512  (read back)\n"
                            "/kubepods/podp/side/cpu.cfs_period_us 100000  (on EINVAL, again "
                            "after the next write)\n"
                            "/kubepods/podp/side/cpu.cfs_quota_us 50000\n"
                            "/kubepods/podp/side/cpuset.cpus 0-1,6-15\n"
                            "/kubepods/podp/memory.limit_in_bytes 2147483648\n"
                            "/kubepods/podp/cpu.shares 4608  (read back)\n"
                            "/kubepods/podp/cpu.cfs_period_us 100000  (on EINVAL, again after the "
                            "next write)\n"
                            "/kubepods/podp/cpu.cfs_quota_us -1\n");
        free(grow);
        free(shrink);
        fx_done(&f);
}

/* ------------------------------------------------------------------------------------------
 * With isolated CPUs (isolatedCPUs, issue 23): a resize stays in the container's pool
 */

/* POD as pod(), annotated nodecm.io/isolated-cpus: ASK. */
static ncm_pod *pod_asking(const char *uid, const char *const *ctrs, const char *ask)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p = pod(uid, ctrs);
        if (ncm_pod_set_annotation(p, NCM_POD_ANNOTATION_ISOLATED_CPUS, ask, &err) < 0)
                fail_msg("%s", err.msg);
        return p;
}

static void admit_asking(fx *f, const char *uid, const char *const *ctrs, const char *ask,
                         const char *cpus)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_admission *a = NULL;
        ncm_pod *p = pod_asking(uid, ctrs, ask);

        if (ncm_node_admit(f->n, p, 0, &a, &err) < 0)
                fail_msg("admit: %s", err.msg);
        if (!a->admitted)
                fail_msg("refused: %s: %s", a->reason, a->message);
        tu_assert_cpuset(a->containers[0].cpus, cpus);
        ncm_node_admission_free(a);
        ncm_pod_free(p);
}

static void test_node_resize_isolated_pool(void **state)
{
        fx f;
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_admission *a = NULL;
        ncm_autoptr(ncm_cpuset) iso = tu_cpuset("2-7");
        ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();
        const char *const g1[] = {"app=1/1", NULL}, *const g2[] = {"app=2/2", NULL};
        const char *const g4[] = {"app=4/4", NULL}, *const g6[] = {"app=6/6", NULL};
        ncm_pod *p;
        (void)state;

        /* issue 23's machine: CPUs 2-7 isolated, exclusive-only, CPU 0 reserved */
        *(&f) = (fx){0};
        if (ncm_topo_from_synthetic("package:1 core:8 pu:1", &f.t, &err) < 0 ||
            ncm_topo_set_isolation(f.t, NCM_ISO_GIVEN_ISOLATED, iso, &err) < 0)
                fail_msg("%s", err.msg);
        {
                const char *k = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                "\"0\", \"isolatedCPUs\": \"exclusive-only\", " GATE_CPUS "}";
                if (ncm_node_config_parse(k, strlen(k), "kubelet", "node.kubelet", &f.cfg, &err) <
                                    0 ||
                    ncm_node_new(f.t, f.cfg, NULL, &f.n, &err) < 0)
                        fail_msg("%s", err.msg);
        }
        admit_asking(&f, "rt", g2, "prefer", "2-3");
        admit(&f, "web", g1);
        tu_assert_cpuset(entry(&f, "web", "app"), "1");
        /* a container on the other CPUs never grows onto isolated ones, free as they are */
        expect_refused(&f, "web", g2, "Infeasible",
                       "Allocate failed due to isolatedCPUs exclusive-only: resize of app: it "
                       "holds no isolated CPU and never grows onto one: 1 more requested, 0 free "
                       "that are not isolated (isolated CPUs 2-7), which is unexpected");
        /* one in the isolated pool grows there (the resized pod names no annotation: it keeps
         * the one it was admitted with) */
        expect_resized(&f, "rt", g4, "2-5");
        assert_string_equal(ncm_pod_get_annotation(ncm_node_pod(f.n, "rt"),
                                                   NCM_POD_ANNOTATION_ISOLATED_CPUS),
                            "prefer");
        admit_asking(&f, "rt2", g2, "require", "6-7");
        /* and only there */
        expect_refused(&f, "rt", g6, "Infeasible",
                       "Allocate failed due to isolatedCPUs exclusive-only: resize of app: it is "
                       "in the isolated pool (holds 2-5) and grows only onto isolated CPUs: 2 "
                       "more requested, 0 free isolated (isolated CPUs 2-7), which is unexpected");
        /* the pool the resize chose from, in --explain */
        assert_int_equal(try_resize(&f, "rt", g6, NCM_NODE_EXPLAIN, &a, &err), 0);
        {
                ncm_buf b = NCM_BUF_INIT;
                ncm_node_format_resize_text(&b, -1, ncm_node_pod(f.n, "rt"), a, true);
                assert_non_null(strstr(b.data, "isolatedCPUs exclusive-only: it grows only onto "
                                               "isolated CPUs (its pool): none of the free CPUs "));
                ncm_buf_done(&b);
        }
        ncm_node_admission_free(a);
        /* the annotation decided the pool at admission: it may not change */
        p = pod_asking("rt", g4, "require");
        assert_int_equal(ncm_node_resize(f.n, p, 0, &a, &err), -EINVAL);
        assert_string_equal(err.msg, "resize of pod 'rt': annotation nodecm.io/isolated-cpus may "
                                     "not change (it was \"prefer\" at admission)");
        ncm_pod_free(p);
        /* a downsize keeps the promise; the shared pool never gets an isolated CPU */
        expect_resized(&f, "rt", g2, "2-3");
        ncm_node_shared_pool(f.n, pool);
        tu_assert_cpuset(pool, "0");
        fx_done(&f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_node_resize_gate_off_is_the_kubelets_refusal),
                        cmocka_unit_test(test_node_resize_api_server_and_input),
                        cmocka_unit_test(test_node_resize_capacity_and_deferred),
                        cmocka_unit_test(test_node_resize_single_numa_node),
                        cmocka_unit_test(test_node_resize_pod_scope_and_sidecar),
                        cmocka_unit_test(test_node_resize_restart_keeps_the_promise),
                        cmocka_unit_test(test_node_resize_memory),
                        cmocka_unit_test(test_node_resize_enforcement_order),
                        cmocka_unit_test(test_node_resize_isolated_pool),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
