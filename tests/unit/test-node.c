/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node: KubeletConfiguration errors (kubelet's texts), cpu_manager_test.go's tables that go
 * through NewManager and admission (TestCPUManagerGenerate, TestCPUManagerHandlePolicyOptions,
 * TestCPUManagerAddWithResvList, TestCPUManagerGetAllocatableCPUs,
 * TestCPUManagerAddWithInitContainers), topology-manager policies and scopes with the real CPU
 * provider, admission results (TopologyAffinityError, SMTAlignmentError,
 * UnexpectedAdmissionError), transactional failure, removal, restart, the state directory and
 * the explanation events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/fs.h>
#include <nodecm/node.h>
#include "node/node-internal.h"
#include "testutil.h"

/* ------------------------------------------------------------------------------------------
 * Helpers
 */

typedef struct fx {
        ncm_topo *t;
        ncm_node_config *cfg;
        ncm_node *n;
        ncm_fs_batch *batch; /* the owner's writes the node's join (NULL: none) */
} fx;

static ncm_topo *load_topo(const char *spec)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_topo *t = NULL;
        int r;

        if (strncmp(spec, "syn:", 4) == 0) {
                r = ncm_topo_from_synthetic(spec + 4, &t, &err);
        } else if (spec[0] == '{') {
                r = ncm_topo_parse_json(spec, strlen(spec), "topology", &t, &err);
        } else {
                char rel[128];
                char *path;
                snprintf(rel, sizeof(rel), "scenarios/topo/%s.json", spec);
                path = tu_data_path(rel);
                r = ncm_topo_load_json_file(path, &t, &err);
                free(path);
        }
        if (r < 0)
                fail_msg("%s: %s", spec, err.msg);
        return t;
}

/* Build a node; returns the error code (0 on success) with ERR filled. */
static int fx_try(fx *f, const char *topo, const char *kubelet, const char *state, ncm_error *err)
{
        ncm_node_options o = {0};
        int r;

        *f = (fx){0};
        f->t = load_topo(topo);
        r = ncm_node_config_parse(kubelet, strlen(kubelet), "kubelet", "node.kubelet", &f->cfg,
                                  err);
        if (r < 0)
                return r;
        if (state) {
                o.cpu_checkpoint = state;
                o.cpu_checkpoint_len = strlen(state);
                o.cpu_checkpoint_name = "node.state";
        }
        return ncm_node_new(f->t, f->cfg, &o, &f->n, err);
}

static void fx_new(fx *f, const char *topo, const char *kubelet, const char *state)
{
        ncm_error err = NCM_ERROR_INIT;
        if (fx_try(f, topo, kubelet, state, &err) < 0)
                fail_msg("node: %s", err.msg);
}

static void fx_done(fx *f)
{
        ncm_node_free(f->n);
        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->t);
        *f = (fx){0};
}

/* A container: name, cpu request, cpu limit (memory 1G both), sidecar. */
typedef struct ctr {
        const char *name;
        const char *request;
        const char *limit;
        bool sidecar;
} ctr;

static void put_ctrs(ncm_buf *b, const ctr *c)
{
        for (size_t i = 0; c && c[i].name; i++) {
                ncm_buf_printf(b, "%s{\"name\": \"%s\"%s", i ? ", " : "", c[i].name,
                               c[i].sidecar ? ", \"restartPolicy\": \"Always\"" : "");
                if (c[i].request)
                        ncm_buf_printf(b,
                                       ", \"resources\": {\"requests\": {\"cpu\": \"%s\", "
                                       "\"memory\": \"1G\"}, \"limits\": {\"cpu\": \"%s\", "
                                       "\"memory\": \"1G\"}}",
                                       c[i].request, c[i].limit);
                ncm_buf_putc(b, '}');
        }
}

static ncm_pod *pod_of(const char *uid, const ctr *init, const ctr *app)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p = NULL;

        ncm_buf_printf(&b, "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": {", uid,
                       uid);
        ncm_buf_puts(&b, "\"initContainers\": [");
        put_ctrs(&b, init);
        ncm_buf_puts(&b, "], \"containers\": [");
        put_ctrs(&b, app);
        ncm_buf_puts(&b, "]}}");
        if (tu_pod_parse_as_in_go(b.data, b.len, NULL, &p, &err) < 0)
                fail_msg("%s: %s", b.data, err.msg);
        ncm_buf_done(&b);
        return p;
}

static ncm_pod *simple_pod(const char *uid, const char *cpu)
{
        ctr app[] = {{"c", cpu, cpu, false}, {NULL, NULL, NULL, false}};
        return pod_of(uid, NULL, app);
}

/* Admit POD (freed), return the admission. */
static ncm_node_admission *admit(fx *f, ncm_pod *pod, unsigned flags)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_admission *a = NULL;
        if (ncm_node_admit_batch(f->n, pod, flags, f->batch, &a, &err) < 0)
                fail_msg("admit %s: %s", pod->uid, err.msg);
        ncm_pod_free(pod);
        return a;
}

static void expect_admitted(fx *f, ncm_pod *pod, const char *const *cpus)
{
        ncm_node_admission *a = admit(f, pod, 0);
        if (!a->admitted)
                fail_msg("refused: %s: %s", a->reason, a->message);
        for (size_t i = 0; cpus && cpus[i]; i++) {
                assert_true(i < a->n_containers);
                tu_assert_cpuset(a->containers[i].cpus, cpus[i]);
        }
        ncm_node_admission_free(a);
}

static void expect_refused(fx *f, ncm_pod *pod, const char *reason, const char *message)
{
        ncm_node_admission *a = admit(f, pod, 0);
        assert_false(a->admitted);
        assert_string_equal(a->reason, reason);
        assert_string_equal(a->message, message);
        assert_int_equal(a->n_containers, 0);
        ncm_node_admission_free(a);
}

static void expect_entry(fx *f, const char *pod, const char *c, const char *cpus)
{
        const ncm_cpuset *s = ncm_cpu_state_get(ncm_node_cpu_state(f->n), pod, c);
        if (!cpus) {
                assert_null(s);
                return;
        }
        assert_non_null(s);
        tu_assert_cpuset(s, cpus);
}

static void expect_default(fx *f, const char *cpus)
{
        tu_assert_cpuset(ncm_cpu_state_default(ncm_node_cpu_state(f->n)), cpus);
}

#define TOPO_4CPU                                                                                  \
        "{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, \"uncore\": 0},"        \
        " {\"cpu\": 1, \"core\": 1, \"socket\": 0, \"numa\": 0, \"uncore\": 0},"                   \
        " {\"cpu\": 2, \"core\": 2, \"socket\": 0, \"numa\": 0, \"uncore\": 0},"                   \
        " {\"cpu\": 3, \"core\": 3, \"socket\": 0, \"numa\": 0, \"uncore\": 0}]}"

/* 2 NUMA nodes (one per socket), 4 cores x 2 threads each, siblings adjacent: NUMA 0 = 0-7. */
#define TWO_NUMA "syn:package:2 numa:1 l3:1 core:4 pu:2"

/* ------------------------------------------------------------------------------------------
 * Configuration
 */

typedef struct cfg_case {
        const char *kubelet;
        const char *message; /* NULL: accepted */
        int code;
} cfg_case;

static const cfg_case cfg_cases[] = {
                {"{}", NULL, 0},
                {"{\"cpuManagerPolicy\": \"invalid\"}",
                 "node.kubelet.cpuManagerPolicy: unknown policy: \"invalid\"", EINVAL},
                {"{\"cpuManagerPolicy\": 3}",
                 "node.kubelet.cpuManagerPolicy: expected string, got number", EINVAL},
                /* TestCPUManagerGenerate (through NewManager's reservation) */
                {"{\"cpuManagerPolicy\": \"static\"}",
                 "node.kubelet: [cpumanager] unable to determine reserved CPU resources for "
                 "static policy",
                 EINVAL},
                {"{\"cpuManagerPolicy\": \"static\", \"kubeReserved\": {\"cpu\": \"0\"}}",
                 "node.kubelet: [cpumanager] the static policy requires systemreserved.cpu + "
                 "kubereserved.cpu to be greater than zero",
                 EINVAL},
                {"{\"cpuManagerPolicy\": \"static\", \"systemReserved\": {\"cpu\": \"3\"}}", NULL,
                 0},
                {"{\"cpuManagerPolicy\": \"static\", \"kubeReserved\": {\"cpu\": \"250m\"}, "
                 "\"systemReserved\": {\"cpu\": \"250m\", \"memory\": \"1Gi\"}}",
                 NULL, 0},
                /* TestCPUManagerHandlePolicyOptions */
                {"{\"cpuManagerPolicy\": \"none\", \"cpuManagerPolicyOptions\": "
                 "{\"full-pcpus-only\": \"true\"}}",
                 "node.kubelet.cpuManagerPolicyOptions: new none policy error: None policy: "
                 "received unsupported options=map[full-pcpus-only:true]",
                 EINVAL},
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                 "\"cpuManagerPolicyOptions\": {\"foo\": \"true\"}}",
                 "node.kubelet.cpuManagerPolicyOptions: new static policy error: unknown CPU "
                 "Manager Policy option: \"foo\"",
                 EINVAL},
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                 "\"cpuManagerPolicyOptions\": {\"full-pcpus-only\": \"maybe\"}}",
                 "node.kubelet.cpuManagerPolicyOptions: new static policy error: bad value for "
                 "option \"full-pcpus-only\": strconv.ParseBool: parsing \"maybe\": invalid syntax",
                 EINVAL},
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                 "\"cpuManagerPolicyOptions\": {\"align-by-socket\": \"true\"}}",
                 "node.kubelet.cpuManagerPolicyOptions: new static policy error: CPU Manager "
                 "Policy Alpha-level Options not enabled, but option \"align-by-socket\" provided",
                 EINVAL},
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                 "\"featureGates\": {\"CPUManagerPolicyAlphaOptions\": true}, "
                 "\"cpuManagerPolicyOptions\": {\"align-by-socket\": \"true\"}}",
                 NULL, 0},
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                 "\"featureGates\": {\"CPUManagerPolicyBetaOptions\": false}, "
                 "\"cpuManagerPolicyOptions\": {\"distribute-cpus-across-numa\": \"true\"}}",
                 "node.kubelet.cpuManagerPolicyOptions: new static policy error: CPU Manager "
                 "Policy Beta-level Options not enabled, but option "
                 "\"distribute-cpus-across-numa\" provided",
                 EINVAL},
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                 "\"featureGates\": {\"CPUManagerPolicyAlphaOptions\": true}, "
                 "\"cpuManagerPolicyOptions\": {\"full-pcpus-only\": \"true\", "
                 "\"distribute-cpus-across-cores\": \"true\"}}",
                 "node.kubelet.cpuManagerPolicyOptions: new static policy error: static policy "
                 "options full-pcpus-only and distribute-cpus-across-cores can not be used at the "
                 "same time",
                 EINVAL},
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                 "\"featureGates\": {\"CPUManagerPolicyAlphaOptions\": true}, "
                 "\"topologyManagerPolicy\": \"single-numa-node\", "
                 "\"cpuManagerPolicyOptions\": {\"align-by-socket\": \"true\"}}",
                 "node.kubelet.cpuManagerPolicyOptions: new static policy error: Topolgy manager "
                 "single-numa-node policy is incompatible with CPUManager align-by-socket policy "
                 "option",
                 EINVAL},
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                 "\"cpuManagerPolicyOptions\": {\"full-pcpus-only\": true}}",
                 "node.kubelet.cpuManagerPolicyOptions.full-pcpus-only: expected string, got "
                 "boolean (the kubelet's decoder refuses it too: quote the value)",
                 EINVAL},
                /* reservedSystemCPUs: validation, then server.go's getReservedCPUs */
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0-x\"}",
                 "node.kubelet.reservedSystemCPUs: invalid configuration: unable to parse "
                 "reservedSystemCPUs (--reserved-cpus) 0-x, error: strconv.Atoi: parsing \"x\": "
                 "invalid syntax",
                 EINVAL},
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"3-1\"}",
                 "node.kubelet.reservedSystemCPUs: invalid configuration: unable to parse "
                 "reservedSystemCPUs (--reserved-cpus) 3-1, error: invalid range \"3-1\" (3 > 1)",
                 EINVAL},
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"14-17\"}",
                 "node.kubelet.reservedSystemCPUs: reserved-cpus: 14-17 is not a subset of "
                 "online-cpus: 0-15",
                 EINVAL},
                {"{\"reservedSystemCPUs\": \"0\", \"kubeReservedCgroup\": \"/kube\"}",
                 "node.kubelet.reservedSystemCPUs: invalid configuration: can't use "
                 "reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup "
                 "(--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)",
                 EINVAL},
                /* reservedSystemCPUs replaces kube/system-reserved cpu */
                {"{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0-1\", "
                 "\"kubeReserved\": {\"cpu\": \"0\"}}",
                 NULL, 0},
                /* parseResourceList */
                {"{\"kubeReserved\": {\"cpu\": \"1x\"}}",
                 "node.kubelet.kubeReserved.cpu: failed to parse quantity \"1x\" for \"cpu\" "
                 "resource: quantities must match the regular expression "
                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                 EINVAL},
                {"{\"systemReserved\": {\"cpu\": \"-1\"}}",
                 "node.kubelet.systemReserved.cpu: resource quantity for \"cpu\" cannot be "
                 "negative: -1",
                 EINVAL},
                {"{\"systemReserved\": {\"example.com/gpu\": \"1\"}}",
                 "node.kubelet.systemReserved: cannot reserve \"example.com/gpu\" resource",
                 EINVAL},
                {"{\"systemReserved\": {\"cpu\": 1}}",
                 "node.kubelet.systemReserved.cpu: expected string, got number (the kubelet's "
                 "decoder refuses it too: quote the value)",
                 EINVAL},
                /* topology manager (NewManager) */
                {"{\"topologyManagerPolicy\": \"foo\"}",
                 "node.kubelet.topologyManagerPolicy: unknown policy: \"foo\"", EINVAL},
                {"{\"topologyManagerScope\": \"node\"}",
                 "node.kubelet.topologyManagerScope: unknown scope: \"node\"", EINVAL},
                {"{\"topologyManagerPolicy\": \"restricted\", \"topologyManagerPolicyOptions\": "
                 "{\"foo\": \"1\"}}",
                 "node.kubelet.topologyManagerPolicyOptions: unknown Topology Manager Policy "
                 "option: \"foo\"",
                 EINVAL},
                /* the none policy does not look at its options */
                {"{\"topologyManagerPolicy\": \"none\", \"topologyManagerPolicyOptions\": "
                 "{\"foo\": \"1\"}}",
                 NULL, 0},
                {"{\"topologyManagerPolicy\": \"restricted\", \"topologyManagerPolicyOptions\": "
                 "{\"max-allowable-numa-nodes\": \"4\"}}",
                 "node.kubelet.topologyManagerPolicyOptions: the minimum value of "
                 "\"max-allowable-numa-nodes\" should not be less than 8",
                 EINVAL},
                {"{\"topologyManagerPolicy\": \"best-effort\", \"topologyManagerPolicyOptions\": "
                 "{\"prefer-closest-numa-nodes\": \"true\"}}",
                 NULL, 0},
                /* feature gates: TopologyManagerPolicyOptions is GA but not locked
                 * (feature_list.md); off, it refuses the options map, as server.go does */
                {"{\"featureGates\": {\"TopologyManagerPolicyOptions\": false}}", NULL, 0},
                {"{\"featureGates\": {\"TopologyManagerPolicyOptions\": false}, "
                 "\"topologyManagerPolicyOptions\": {\"prefer-closest-numa-nodes\": \"true\", "
                 "\"max-allowable-numa-nodes\": \"8\"}}",
                 "node.kubelet.topologyManagerPolicyOptions: topology manager policy options "
                 "map[max-allowable-numa-nodes:8 prefer-closest-numa-nodes:true] require feature "
                 "gates \"TopologyManagerPolicyOptions\" enabled",
                 EINVAL},
                {"{\"featureGates\": {\"CPUManagerPolicyOptions\": false}}",
                 "node.kubelet.featureGates: cannot set feature gate CPUManagerPolicyOptions to "
                 "false, feature is locked to true",
                 EINVAL},
                {"{\"featureGates\": {\"CPUManagerPolicyAlphaOptions\": \"true\"}}",
                 "node.kubelet.featureGates.CPUManagerPolicyAlphaOptions: expected boolean, got "
                 "string",
                 EINVAL},
                {"{\"featureGates\": {\"SomeOtherGate\": true}}",
                 "node.kubelet.featureGates: failed to set feature gates from initial flags-based "
                 "config: unrecognized feature gate: SomeOtherGate",
                 EINVAL},
                {"{\"featureGates\": {\"KubeletInUserNamespace\": true}}", NULL, 0},
                /* the rest of a real kubelet configuration is accepted */
                {"{\"apiVersion\": \"kubelet.config.k8s.io/v1beta1\", \"kind\": "
                 "\"KubeletConfiguration\", \"clusterDNS\": [\"10.96.0.10\"], "
                 "\"cpuManagerReconcilePeriod\": \"5s\", \"evictionHard\": "
                 "{\"memory.available\": \"100Mi\"}, \"memoryManagerPolicy\": \"None\"}",
                 NULL, 0},
                {"{\"CPUManagerPolicy\": \"static\"}",
                 "node.kubelet: strict decoding error: unknown field \"CPUManagerPolicy\" (the "
                 "kubelet's decoder is case-sensitive: it does not read it as "
                 "\"cpuManagerPolicy\") (the kubelet would decode it leniently and start; nodecm "
                 "does with --config-decoding lenient)",
                 EINVAL},
                {"{\"topologyManagerPolicyOption\": {}}",
                 "node.kubelet: strict decoding error: unknown field "
                 "\"topologyManagerPolicyOption\" (did you mean \"topologyManagerPolicyOptions\"?) "
                 "(the kubelet would decode it leniently and start; nodecm does with "
                 "--config-decoding lenient)",
                 EINVAL},
                /* validateReservedMemory: the default hard eviction reserves 100Mi of memory */
                {"{\"memoryManagerPolicy\": \"Static\"}",
                 "node.kubelet.memoryManagerPolicy: the total amount \"0\" of type \"memory\" "
                 "is not equal to the value \"100Mi\" determined by Node Allocatable feature",
                 EINVAL},
                {"{\"memoryManagerPolicy\": \"Static\", \"evictionHard\": {}}",
                 "node.kubelet.memoryManagerPolicy: [memorymanager] you should specify the system "
                 "reserved memory",
                 EINVAL},
                {"{\"memoryManagerPolicy\": \"static\"}",
                 "node.kubelet.memoryManagerPolicy: unknown policy: \"static\"", EINVAL},
                {"[]", "node.kubelet: expected object, got array", EINVAL},
};

static void test_node_config_errors(void **state)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(cfg_cases); i++) {
                const cfg_case *c = &cfg_cases[i];
                ncm_error err = NCM_ERROR_INIT;
                fx f;
                int r = fx_try(&f, "syn:package:2 numa:1 l3:1 core:4 pu:2", c->kubelet, NULL, &err);
                if (!c->message) {
                        if (r < 0)
                                fail_msg("case %zu: %s", i, err.msg);
                } else {
                        if (r >= 0)
                                fail_msg("case %zu accepted, expected: %s", i, c->message);
                        assert_string_equal(err.msg, c->message);
                        assert_int_equal(err.code, c->code);
                        assert_int_equal(r, -c->code);
                        assert_int_equal(ncm_error_exit_status(err.code), 2);
                        assert_null(f.n);
                }
                fx_done(&f);
        }
}

static void test_node_config_defaults(void **state)
{
        fx f;
        fx_new(&f, TWO_NUMA, "{}", NULL);
        assert_string_equal(ncm_node_config_cpu_policy(f.cfg), "none");
        assert_string_equal(ncm_node_config_tm_policy(f.cfg), "none");
        assert_string_equal(ncm_node_config_tm_scope(f.cfg), "container");
        assert_string_equal(ncm_cpu_policy_name(ncm_node_cpu_policy(f.n)), "none");
        assert_string_equal(ncm_tm_scope_name(ncm_node_tm(f.n)), "none");
        /* a fresh none state: default "" (containers are not pinned) */
        expect_default(&f, "");
        fx_done(&f);
}

/* TestCPUManagerGenerate: the static policy reserves ceil(kube+system cpu) CPUs. */
static void test_node_generate_static(void **state)
{
        fx f;
        fx_new(&f, "single-socket-ht",
               "{\"cpuManagerPolicy\": \"static\", \"systemReserved\": {\"cpu\": \"3\"}}", NULL);
        assert_string_equal(ncm_cpu_policy_name(ncm_node_cpu_policy(f.n)), "static");
        /* takeByTopology(all, 3): core 0 whole, then one CPU */
        tu_assert_cpuset(ncm_cpu_policy_reserved(ncm_node_cpu_policy(f.n)), "0-1,4");
        expect_default(&f, "0-7");
        fx_done(&f);

        /* 500m rounds up to one CPU */
        fx_new(&f, "single-socket-ht",
               "{\"cpuManagerPolicy\": \"static\", \"kubeReserved\": {\"cpu\": \"250m\"}, "
               "\"systemReserved\": {\"cpu\": \"250m\"}}",
               NULL);
        tu_assert_cpuset(ncm_cpu_policy_reserved(ncm_node_cpu_policy(f.n)), "0");
        fx_done(&f);

        /* reservedSystemCPUs wins over kube-reserved cpu */
        fx_new(&f, "single-socket-ht",
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"3,7\", "
               "\"kubeReserved\": {\"cpu\": \"5\"}}",
               NULL);
        tu_assert_cpuset(ncm_cpu_policy_reserved(ncm_node_cpu_policy(f.n)), "3,7");
        fx_done(&f);
}

/* TestCPUManagerAddWithResvList */
static void test_node_add_with_resv_list(void **state)
{
        const char *want[] = {"1-2", NULL};
        fx f;
        fx_new(&f, TOPO_4CPU, "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}",
               NULL);
        expect_admitted(&f, simple_pod("fakePod", "2"), want);
        expect_default(&f, "0,3");
        expect_entry(&f, "fakePod", "c", "1-2");
        fx_done(&f);
}

/* TestCPUManagerGetAllocatableCPUs */
static void test_node_allocatable(void **state)
{
        ncm_autoptr(ncm_cpuset) s = ncm_cpuset_new();
        fx f;

        fx_new(&f, TOPO_4CPU, "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}",
               NULL);
        ncm_cpu_policy_allocatable(ncm_node_cpu_policy(f.n), s);
        tu_assert_cpuset(s, "1-3");
        fx_done(&f);
        fx_new(&f, TOPO_4CPU, "{}", NULL);
        ncm_cpu_policy_allocatable(ncm_node_cpu_policy(f.n), s);
        tu_assert_cpuset(s, "");
        /* none: containers are not pinned: their shared pool is every CPU */
        ncm_node_shared_pool(f.n, s);
        tu_assert_cpuset(s, "0-3");
        fx_done(&f);
}

/*
 * TestCPUManagerAddWithInitContainers through admission. kubelet's table builds the policy
 * with no reserved CPU, which NewManager refuses; here CPU 0 is reserved, so core 0 (CPUs 0,4)
 * is never whole and the expectations shift by one core (kubelet's (0,4),(1,5) become
 * (1,5),(2,6)), computed with kubelet's rules: whole free cores in id order, init-container
 * CPUs reusable by later containers.
 */
typedef struct init_case {
        const char *description;
        ctr init[3];
        ctr app[3];
        const char *want[5]; /* init containers then app containers; "" for shared */
        const char *dflt;
} init_case;

static const init_case init_cases[] = {
                {"No Guaranteed Init CPUs",
                 {{"i0", "100m", "100m", false}},
                 {{"a0", "4000m", "4000m", false}},
                 {"", "1-2,5-6"},
                 "0,3-4,7"},
                {"Equal Number of Guaranteed CPUs",
                 {{"i0", "4000m", "4000m", false}},
                 {{"a0", "4000m", "4000m", false}},
                 {"1-2,5-6", "1-2,5-6"},
                 "0,3-4,7"},
                {"More Init Container Guaranteed CPUs",
                 {{"i0", "6000m", "6000m", false}},
                 {{"a0", "4000m", "4000m", false}},
                 {"1-3,5-7", "1-2,5-6"},
                 "0,4"},
                {"Less Init Container Guaranteed CPUs",
                 {{"i0", "2000m", "2000m", false}},
                 {{"a0", "4000m", "4000m", false}},
                 {"1,5", "1-2,5-6"},
                 "0,3-4,7"},
                {"Multi Init Container Equal CPUs",
                 {{"i0", "2000m", "2000m", false}, {"i1", "2000m", "2000m", false}},
                 {{"a0", "2000m", "2000m", false}},
                 {"1,5", "1,5", "1,5"},
                 "0,2-4,6-7"},
                {"Multi Init Container Less CPUs",
                 {{"i0", "4000m", "4000m", false}, {"i1", "4000m", "4000m", false}},
                 {{"a0", "2000m", "2000m", false}},
                 {"1-2,5-6", "1-2,5-6", "1,5"},
                 "0,3-4,7"},
                {"Multi Init Container More CPUs",
                 {{"i0", "2000m", "2000m", false}, {"i1", "2000m", "2000m", false}},
                 {{"a0", "4000m", "4000m", false}},
                 {"1,5", "1,5", "1-2,5-6"},
                 "0,3-4,7"},
                {"Multi Init Container Increasing CPUs",
                 {{"i0", "2000m", "2000m", false}, {"i1", "4000m", "4000m", false}},
                 {{"a0", "6000m", "6000m", false}},
                 {"1,5", "1-2,5-6", "1-3,5-7"},
                 "0,4"},
                {"Multi Init, Multi App Container Split CPUs",
                 {{"i0", "2000m", "2000m", false}, {"i1", "4000m", "4000m", false}},
                 {{"a0", "2000m", "2000m", false}, {"a1", "2000m", "2000m", false}},
                 {"1,5", "1-2,5-6", "1,5", "2,6"},
                 "0,3-4,7"},
                /* restartable init containers (sidecars) neither lend nor borrow */
                {"Sidecar then init then app",
                 {{"s0", "2000m", "2000m", true}, {"i1", "2000m", "2000m", false}},
                 {{"a0", "2000m", "2000m", false}},
                 {"1,5", "2,6", "2,6"},
                 "0,3-4,7"},
};

static void test_node_add_with_init_containers(void **state)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(init_cases); i++) {
                const init_case *c = &init_cases[i];
                ncm_node_admission *a;
                fx f;

                fx_new(&f, "single-socket-ht",
                       "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}", NULL);
                a = admit(&f, pod_of("podUID", c->init, c->app), 0);
                if (!a->admitted)
                        fail_msg("%s: refused: %s", c->description, a->message);
                for (size_t k = 0; k < a->n_containers; k++) {
                        const ncm_node_container_result *cr = &a->containers[k];
                        if (!c->want[k][0]) {
                                if (cr->exclusive)
                                        fail_msg("%s: %s is exclusive", c->description, cr->name);
                                expect_entry(&f, "podUID", cr->name, NULL);
                        } else {
                                assert_true(cr->exclusive);
                                expect_entry(&f, "podUID", cr->name, c->want[k]);
                        }
                }
                expect_default(&f, c->dflt);
                ncm_node_admission_free(a);
                fx_done(&f);
        }
}

/* ------------------------------------------------------------------------------------------
 * The topology manager with the real CPU provider
 */

static const char *kubelet_tm(const char *policy, const char *scope, char *buf, size_t n)
{
        snprintf(buf, n,
                 "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0-1\", "
                 "\"topologyManagerPolicy\": \"%s\", \"topologyManagerScope\": \"%s\"}",
                 policy, scope);
        return buf;
}

/* NUMA 0 = 0-7 (0-1 reserved), NUMA 1 = 8-15. After 4+4: NUMA 0 has 6,7 free, NUMA 1 12-15. */
static void fill_4_4(fx *f)
{
        const char *a[] = {"2-5", NULL}, *b[] = {"8-11", NULL};
        expect_admitted(f, simple_pod("a", "4"), a);
        expect_admitted(f, simple_pod("b", "4"), b);
}

static void test_node_tm_policies(void **state)
{
        char buf[256];
        fx f;

        /* 6 CPUs are free, but no NUMA node has 6: the only hint, [0,1], is not preferred */
        fx_new(&f, TWO_NUMA, kubelet_tm("best-effort", "container", buf, sizeof(buf)), NULL);
        fill_4_4(&f);
        {
                const char *c[] = {"6-7,12-15", NULL};
                expect_admitted(&f, simple_pod("c", "6"), c);
        }
        fx_done(&f);

        fx_new(&f, TWO_NUMA, kubelet_tm("restricted", "container", buf, sizeof(buf)), NULL);
        fill_4_4(&f);
        expect_refused(&f, simple_pod("c", "6"), NCM_TM_REASON_TOPOLOGY_AFFINITY,
                       NCM_TM_MESSAGE_TOPOLOGY_AFFINITY);
        expect_default(&f, "0-1,6-7,12-15");
        fx_done(&f);

        fx_new(&f, TWO_NUMA, kubelet_tm("single-numa-node", "container", buf, sizeof(buf)), NULL);
        fill_4_4(&f);
        expect_refused(&f, simple_pod("c", "6"), NCM_TM_REASON_TOPOLOGY_AFFINITY,
                       NCM_TM_MESSAGE_TOPOLOGY_AFFINITY);
        /* 9 CPUs fit no NUMA node even on an empty machine: refused */
        fx_done(&f);
        fx_new(&f, TWO_NUMA, kubelet_tm("single-numa-node", "container", buf, sizeof(buf)), NULL);
        expect_refused(&f, simple_pod("big", "9"), NCM_TM_REASON_TOPOLOGY_AFFINITY,
                       NCM_TM_MESSAGE_TOPOLOGY_AFFINITY);
        /*
         * ... while restricted takes [0,1], which is then preferred (the narrowest that fits),
         * and takeByTopology starts with the whole free NUMA node 1
         */
        fx_done(&f);
        fx_new(&f, TWO_NUMA, kubelet_tm("restricted", "container", buf, sizeof(buf)), NULL);
        {
                const char *c[] = {"2,8-15", NULL};
                expect_admitted(&f, simple_pod("big", "9"), c);
        }
        fx_done(&f);

        /* none: allocated with no NUMA affinity (the zero hint) */
        fx_new(&f, TWO_NUMA, kubelet_tm("none", "container", buf, sizeof(buf)), NULL);
        {
                ncm_node_admission *a = admit(&f, simple_pod("a", "2"), 0);
                assert_true(a->admitted);
                assert_true(a->containers[0].affinity.any);
                assert_false(a->containers[0].affinity.preferred);
                tu_assert_cpuset(a->containers[0].cpus, "2-3");
                ncm_node_admission_free(a);
        }
        fx_done(&f);
}

static void test_node_tm_scopes(void **state)
{
        ctr app[] = {{"left", "4", "4", false},
                     {"right", "4", "4", false},
                     {NULL, NULL, NULL, false}};
        char buf[256];
        fx f;

        /* container scope: each container on its own; NUMA 0 holds 6, so "right" moves */
        fx_new(&f, TWO_NUMA, kubelet_tm("single-numa-node", "container", buf, sizeof(buf)), NULL);
        {
                const char *want[] = {"2-5", "8-11", NULL};
                ncm_node_admission *a;
                expect_admitted(&f, pod_of("p", NULL, app), want);
                /* the stored affinities */
                a = admit(&f, pod_of("p", NULL, app), 0); /* re-admission: same CPUs */
                assert_true(a->admitted);
                tu_assert_cpuset(a->containers[0].cpus, "2-5");
                tu_assert_cpuset(a->containers[1].cpus, "8-11");
                assert_int_equal(a->containers[0].affinity.numa, 1);
                assert_int_equal(a->containers[1].affinity.numa, 2);
                ncm_node_admission_free(a);
        }
        fx_done(&f);

        /* pod scope: 8 CPUs for the pod: only NUMA 1 has them */
        fx_new(&f, TWO_NUMA, kubelet_tm("single-numa-node", "pod", buf, sizeof(buf)), NULL);
        {
                const char *want[] = {"8-11", "12-15", NULL};
                expect_admitted(&f, pod_of("p", NULL, app), want);
                /* then nothing of 4 fits: NUMA 0 has 6 but a pod of 8 does not fit */
                expect_refused(&f, pod_of("q", NULL, app), NCM_TM_REASON_TOPOLOGY_AFFINITY,
                               NCM_TM_MESSAGE_TOPOLOGY_AFFINITY);
        }
        fx_done(&f);
}

static void test_node_admission_errors(void **state)
{
        fx f;

        fx_new(&f, "single-socket-ht",
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
               "\"cpuManagerPolicyOptions\": {\"full-pcpus-only\": \"true\"}}",
               NULL);
        expect_refused(&f, simple_pod("odd", "3"), NCM_CPU_REASON_SMT_ALIGNMENT,
                       "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2");
        expect_refused(&f, simple_pod("big", "8"), NCM_CPU_REASON_SMT_ALIGNMENT,
                       "SMT Alignment Error: not enough free physical CPUs: available physical "
                       "CPUs = 6, requested CPUs = 8, CPUs per core = 2");
        expect_default(&f, "0-7");
        fx_done(&f);

        fx_new(&f, "single-socket-ht",
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}", NULL);
        expect_refused(&f, simple_pod("big", "8"), NCM_TM_REASON_UNEXPECTED,
                       "Allocate failed due to not enough cpus available to satisfy request: "
                       "requested=8, available=7, which is unexpected");
        fx_done(&f);
}

/* ------------------------------------------------------------------------------------------
 * Transactions
 */

static void test_node_rollback(void **state)
{
        char buf[256];
        ncm_cpu_state *before;
        fx f;

        fx_new(&f, TWO_NUMA, kubelet_tm("best-effort", "container", buf, sizeof(buf)), NULL);
        {
                const char *want[] = {"2-4", NULL};
                expect_admitted(&f, simple_pod("p1", "3"), want);
        }
        before = ncm_cpu_state_dup(ncm_node_cpu_state(f.n));
        {
                /* the first container is allocated, the second cannot be: all undone */
                ctr app[] = {{"a", "4", "4", false},
                             {"b", "20", "20", false},
                             {NULL, NULL, NULL, false}};
                expect_refused(&f, pod_of("p2", NULL, app), NCM_TM_REASON_UNEXPECTED,
                               "Allocate failed due to not enough cpus available to satisfy "
                               "request: requested=13, available=0, which is unexpected");
        }
        assert_true(ncm_cpu_state_equal(before, ncm_node_cpu_state(f.n)));
        /* the refused pod's hints are gone, the node does not know it */
        assert_true(ncm_tm_get_affinity(ncm_node_tm(f.n), "p2", "a").any);
        assert_null(ncm_node_pod_name(f.n, "p2"));
        assert_string_equal(ncm_node_pod_name(f.n, "p1"), "p1");
        ncm_cpu_state_free(before);

        /* a re-admission that fails keeps the pod's earlier CPUs */
        {
                ctr app[] = {{"c", "3", "3", false},
                             {"z", "30", "30", false},
                             {NULL, NULL, NULL, false}};
                before = ncm_cpu_state_dup(ncm_node_cpu_state(f.n));
                expect_refused(&f, pod_of("p1", NULL, app), NCM_TM_REASON_UNEXPECTED,
                               "Allocate failed due to not enough cpus available to satisfy "
                               "request: requested=19, available=0, which is unexpected");
                assert_true(ncm_cpu_state_equal(before, ncm_node_cpu_state(f.n)));
                ncm_cpu_state_free(before);
        }
        fx_done(&f);
}

/*
 * The CPU policy's cpusToReuse is restored too: pod P's init container left CPUs for P's
 * later containers; a refused pod Q made the policy forget them; the rollback gives them back,
 * which P's hints show (every reusable CPU must lie in a hint's NUMA nodes).
 */
static void test_node_rollback_reuse(void **state)
{
        ctr p_init[] = {{"i", "4", "4", false}, {NULL, NULL, NULL, false}};
        ctr p_app[] = {{"a", "2", "2", false}, {NULL, NULL, NULL, false}};
        ctr q_init[] = {{"j", "2", "2", false}, {NULL, NULL, NULL, false}};
        ctr q_app[] = {{"b", "30", "30", false}, {NULL, NULL, NULL, false}};
        ctr probe[] = {{"z", "2", "2", false}, {NULL, NULL, NULL, false}};
        ncm_hint_list l = NCM_HINT_LIST_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pz;
        char buf[256];
        fx f;

        fx_new(&f, TWO_NUMA, kubelet_tm("best-effort", "container", buf, sizeof(buf)), NULL);
        {
                const char *want[] = {"2-5", "2-3", NULL};
                expect_admitted(&f, pod_of("P", p_init, p_app), want);
        }
        tu_assert_cpuset(ncm_cpu_policy_reuse_get(ncm_node_cpu_policy(f.n), "P"), "4-5");
        {
                ncm_node_admission *a = admit(&f, pod_of("Q", q_init, q_app), 0);
                assert_false(a->admitted);
                ncm_node_admission_free(a);
        }
        tu_assert_cpuset(ncm_cpu_policy_reuse_get(ncm_node_cpu_policy(f.n), "P"), "4-5");
        /* the policy itself: a 2-CPU container of P must include the reusable 4-5 (NUMA 0) */
        pz = pod_of("P", NULL, probe);
        assert_int_equal(ncm_cpu_policy_hints(f.n->cpu, ncm_node_cpu_state(f.n), pz,
                                              &pz->containers[0], &l, &err),
                         0);
        assert_int_equal(l.n, 2);
        assert_int_equal(l.hints[0].numa, 1); /* [0] */
        assert_int_equal(l.hints[1].numa, 3); /* [0,1]; never [1] alone */
        ncm_hint_list_done(&l);
        ncm_pod_free(pz);
        fx_done(&f);
}

static void refuse(fx *f, ncm_pod *pod)
{
        ncm_node_admission *a = admit(f, pod, 0);
        assert_false(a->admitted);
        ncm_node_admission_free(a);
}

/*
 * A refused admission leaves the policy's cpusToReuse exactly as it was, read through the
 * policy's own API: no entry stays no entry, another pod's entry comes back, and so does the
 * pod's own entry when its re-admission had used up the reusable CPUs before failing.
 */
static void test_node_rollback_reuse_exact(void **state)
{
        ctr p_init[] = {{"i", "4", "4", false}, {NULL, NULL, NULL, false}};
        ctr p_app[] = {{"a", "2", "2", false}, {NULL, NULL, NULL, false}};
        ctr p_again[] = {{"a", "2", "2", false},
                         {"c", "2", "2", false},
                         {"z", "30", "30", false},
                         {NULL, NULL, NULL, false}};
        ctr q_init[] = {{"j", "2", "2", false}, {NULL, NULL, NULL, false}};
        ctr q_app[] = {{"b", "30", "30", false}, {NULL, NULL, NULL, false}};
        char buf[256];
        fx f;

        fx_new(&f, TWO_NUMA, kubelet_tm("best-effort", "container", buf, sizeof(buf)), NULL);
        const ncm_cpu_policy *p = ncm_node_cpu_policy(f.n);

        /* nothing to reuse before; Q's init container gets an entry, the rollback drops it */
        refuse(&f, pod_of("Q", q_init, q_app));
        assert_null(ncm_cpu_policy_reuse_get(p, "Q"));

        {
                const char *want[] = {"2-5", "2-3", NULL};
                expect_admitted(&f, pod_of("P", p_init, p_app), want);
        }
        tu_assert_cpuset(ncm_cpu_policy_reuse_get(p, "P"), "4-5");
        refuse(&f, pod_of("Q", q_init, q_app));
        tu_assert_cpuset(ncm_cpu_policy_reuse_get(p, "P"), "4-5");
        assert_null(ncm_cpu_policy_reuse_get(p, "Q"));

        /* P again: "c" takes the reusable 4-5, "z" cannot be met; 4-5 are P's to reuse again */
        refuse(&f, pod_of("P", p_init, p_again));
        tu_assert_cpuset(ncm_cpu_policy_reuse_get(p, "P"), "4-5");
        expect_entry(&f, "P", "c", NULL);
        fx_done(&f);
}

/*
 * A refused re-admission of a known pod puts its stored hints back: the new container that
 * got a hint (and CPUs) before the refusal has none again, the old one keeps its own.
 */
static void test_node_rollback_hints(void **state)
{
        ctr again[] = {{"c", "3", "3", false},
                       {"z1", "8", "8", false},
                       {"z2", "8", "8", false},
                       {NULL, NULL, NULL, false}};
        char buf[256];
        ncm_hint before, h;
        fx f;

        fx_new(&f, TWO_NUMA, kubelet_tm("best-effort", "container", buf, sizeof(buf)), NULL);
        {
                const char *want[] = {"2-4", NULL};
                expect_admitted(&f, simple_pod("p1", "3"), want);
        }
        before = ncm_tm_get_affinity(ncm_node_tm(f.n), "p1", "c");
        assert_false(before.any);

        /* z1 takes NUMA node 1 whole; z2 then finds 3 free CPUs */
        refuse(&f, pod_of("p1", NULL, again));
        h = ncm_tm_get_affinity(ncm_node_tm(f.n), "p1", "c");
        assert_true(!h.any && h.numa == before.numa && h.preferred == before.preferred);
        h = ncm_tm_get_affinity(ncm_node_tm(f.n), "p1", "z1");
        assert_true(h.any && !h.preferred);
        assert_true(ncm_tm_get_affinity(ncm_node_tm(f.n), "p1", "z2").any);
        expect_entry(&f, "p1", "z1", NULL);
        expect_default(&f, "0-1,5-15");
        fx_done(&f);
}

/* ------------------------------------------------------------------------------------------
 * Removal, restart, state directory, explanations
 */

static void test_node_remove(void **state)
{
        ctr init[] = {{"i", "4", "4", false}, {NULL, NULL, NULL, false}};
        ctr app[] = {{"a", "2", "2", false}, {NULL, NULL, NULL, false}};
        ncm_autoptr(ncm_cpuset) rel = ncm_cpuset_new();
        ncm_error err = NCM_ERROR_INIT;
        fx f;

        fx_new(&f, "single-socket-ht",
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}",
               "{\"policyName\": \"static\", \"defaultCpuSet\": \"0-2,4-6\", \"entries\": "
               "{\"old\": {\"x\": \"3,7\"}}}");
        {
                const char *want[] = {"1-2,5-6", "1,5", NULL};
                expect_admitted(&f, pod_of("p", init, app), want);
        }
        /* the init container ends: the app keeps 1,5 */
        assert_int_equal(ncm_node_remove_container(f.n, "p", "i", rel, &err), 1);
        tu_assert_cpuset(rel, "2,6");
        expect_default(&f, "0,2,4,6");
        /* nothing to remove */
        assert_int_equal(ncm_node_remove_container(f.n, "p", "i", rel, &err), 0);
        assert_int_equal(ncm_node_remove_container(f.n, "nope", "i", rel, &err), 0);
        tu_assert_cpuset(rel, "");
        /* a pod known only from the checkpoint */
        assert_int_equal(ncm_node_remove_pod(f.n, "old", rel, &err), 1);
        tu_assert_cpuset(rel, "3,7");
        assert_int_equal(ncm_node_remove_pod(f.n, "p", rel, &err), 1);
        tu_assert_cpuset(rel, "1,5");
        expect_default(&f, "0-7");
        assert_int_equal(ncm_cpu_state_num_entries(ncm_node_cpu_state(f.n)), 0);
        assert_int_equal(ncm_node_remove_pod(f.n, "p", rel, &err), 0);
        fx_done(&f);
}

static void test_node_restart(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_config *none = NULL, *resv = NULL;
        ncm_cpu_state *before;
        fx f;

        fx_new(&f, "single-socket-ht",
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}", NULL);
        {
                const char *want[] = {"1,5", NULL};
                expect_admitted(&f, simple_pod("p", "2"), want);
        }
        before = ncm_cpu_state_dup(ncm_node_cpu_state(f.n));
        assert_int_equal(ncm_node_restart(f.n, NULL, &err), 0);
        assert_true(ncm_cpu_state_equal(before, ncm_node_cpu_state(f.n)));
        /* re-admission after the restart: the same CPUs (Allocate is idempotent) */
        {
                const char *want[] = {"1,5", NULL};
                expect_admitted(&f, simple_pod("p", "2"), want);
        }

        /* the kubelet refuses a checkpoint of another policy; the node stays as it was */
        assert_int_equal(ncm_node_config_parse("{}", 2, NULL, "restart", &none, &err), 0);
        assert_int_equal(ncm_node_restart(f.n, none, &err), -NCM_E_INVALID_STATE);
        assert_string_equal(err.msg, "could not restore state from checkpoint: configured policy "
                                     "\"none\" differs from state checkpoint policy \"static\", "
                                     "please drain this node and delete the CPU manager "
                                     "checkpoint file \"cpu_manager_state\" before restarting "
                                     "Kubelet");
        assert_true(ncm_cpu_state_equal(before, ncm_node_cpu_state(f.n)));
        assert_ptr_equal(ncm_node_get_config(f.n), f.cfg);

        /* new reserved CPUs that a pod holds */
        {
                const char *txt = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                  "\"0-1\"}";
                assert_int_equal(ncm_node_config_parse(txt, strlen(txt), NULL, "restart", &resv,
                                                       &err),
                                 0);
        }
        assert_int_equal(ncm_node_restart(f.n, resv, &err), -NCM_E_INVALID_STATE);
        assert_string_equal(err.msg, "start cpu manager error: not all reserved cpus: \"0-1\" are "
                                     "present in defaultCpuSet: \"0,2-4,6-7\"");
        assert_int_equal(ncm_error_exit_status(err.code), 1);
        /* the node still works */
        {
                const char *want[] = {"2,6", NULL};
                expect_admitted(&f, simple_pod("q", "2"), want);
        }
        ncm_cpu_state_free(before);
        fx_done(&f);
        ncm_node_config_free(none);
        ncm_node_config_free(resv);
}

/* States the kubelet refuses at start-up: exit status 1, kubelet's texts. */
static void test_node_start_state(void **state)
{
        static const struct {
                const char *state;
                const char *message;
                int code;
        } cases[] = {
                        {"{\"policyName\": \"static\", \"defaultCpuSet\": \"0-7\", "
                         "\"entries\": {\"p\": {\"c\": \"1\"}}}",
                         "node.state: start cpu manager error: pod: p, container: c cpuset: \"1\" "
                         "overlaps with default cpuset \"0-7\"",
                         NCM_E_INVALID_STATE},
                        {"{\"policyName\": \"static\", \"defaultCpuSet\": \"\", "
                         "\"entries\": {\"p\": {\"c\": \"1\"}}}",
                         "node.state: start cpu manager error: default cpuset cannot be empty",
                         NCM_E_INVALID_STATE},
                        {"{\"policyName\": \"static\", \"defaultCpuSet\": \"0-7\", \"checksum\": "
                         "1}",
                         NULL, NCM_E_INVALID_STATE},
                        {"{\"policyName\": \"static\", \"defaultCpuSet\": 7}", NULL,
                         NCM_E_INVALID_STATE},
                        {"{\"defaultCpuSet\": \"0-7\"}", NULL, NCM_E_INVALID_STATE},
                        {"[1]", NULL, NCM_E_INVALID_STATE},
        };
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_error err = NCM_ERROR_INIT;
                fx f;
                int r = fx_try(&f, "single-socket-ht",
                               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}",
                               cases[i].state, &err);
                if (r >= 0)
                        fail_msg("case %zu accepted", i);
                assert_int_equal(r, -cases[i].code);
                assert_int_equal(ncm_error_exit_status(err.code), 1);
                if (cases[i].message)
                        assert_string_equal(err.msg, cases[i].message);
                else
                        assert_non_null(strstr(err.msg, "node.state: could not restore state "
                                                        "from checkpoint: "));
                fx_done(&f);
        }
        /* a valid one: fresh default for an empty file */
        {
                fx f;
                fx_new(&f, "single-socket-ht",
                       "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}",
                       "{\"policyName\": \"static\", \"defaultCpuSet\": \"\"}");
                expect_default(&f, "0-7");
                fx_done(&f);
        }
}

static void test_node_state_dir(void **state)
{
        char *dir = tu_mkdtemp();
        ncm_node_options o = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf want = NCM_BUF_INIT;
        char path[512];
        char *text = NULL;
        size_t len = 0;
        fx f = {0};

        f.t = load_topo("single-socket-ht");
        {
                const char *k = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}";
                assert_int_equal(ncm_node_config_parse(k, strlen(k), NULL, "", &f.cfg, &err), 0);
        }
        o.state_dir = dir;
        if (ncm_node_new(f.t, f.cfg, &o, &f.n, &err) < 0)
                fail_msg("%s", err.msg);
        snprintf(path, sizeof(path), "%s/cpu_manager_state", dir);
        {
                const char *w[] = {"1,5", NULL};
                expect_admitted(&f, simple_pod("p", "2"), w);
        }
        assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &text, &len, &err), 0);
        ncm_node_format_cpu_checkpoint(f.n, &want);
        assert_string_equal(text, want.data);
        /* kubelet 1.37's layout (the default kubeletVersion): V2's fields, then data */
        assert_string_equal(
                        text,
                        "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,2-4,6-7\","
                        "\"entries\":{\"p\":{\"c\":\"1,5\"}},\"checksum\":2017250748,"
                        "\"data\":\"{\\\"policyName\\\":\\\"static\\\",\\\"defaultCpuSet\\\":"
                        "\\\"0,2-4,6-7\\\",\\\"entries\\\":{\\\"p\\\":{\\\"c\\\":\\\"1,5\\\"}}}\","
                        "\"dataChecksum\":1260601657}");
        free(text);
        /* a restart reads the file back */
        assert_int_equal(ncm_node_restart(f.n, NULL, &err), 0);
        expect_entry(&f, "p", "c", "1,5");
        ncm_buf_done(&want);
        fx_done(&f);
        tu_rm_rf(dir);
        free(dir);
}

static void test_node_explain(void **state)
{
        char buf[256];
        ncm_node_admission *a;
        fx f;

        fx_new(&f, TWO_NUMA, kubelet_tm("single-numa-node", "container", buf, sizeof(buf)), NULL);
        a = admit(&f, simple_pod("p", "4"), NCM_NODE_EXPLAIN);
        assert_true(a->admitted);
        assert_int_equal(a->n_events, 3);
        assert_int_equal(a->events[0].kind, NCM_NODE_EVENT_HINTS);
        assert_string_equal(a->events[0].provider, "cpu");
        assert_string_equal(a->events[0].container, "c");
        assert_int_equal(a->events[0].hints.n, 1);
        assert_string_equal(a->events[0].hints.res[0].resource, "cpu");
        assert_int_equal(a->events[0].hints.res[0].list.n, 3); /* [0] [1] [0,1] */
        assert_int_equal(a->events[1].kind, NCM_NODE_EVENT_MERGE);
        assert_int_equal(a->events[1].hint.numa, 1);
        assert_true(a->events[1].hint.preferred);
        assert_true(a->events[1].ok);
        assert_non_null(strstr(a->events[1].text, "narrowest"));
        assert_int_equal(a->events[2].kind, NCM_NODE_EVENT_ALLOCATE);
        assert_string_equal(a->events[2].text, "2-5");
        /* the allocator's own trace: which level took which CPUs */
        assert_int_equal(a->events[2].n_steps, 5);
        assert_string_equal(a->events[2].steps[0], "4 exclusive CPUs from the free CPUs 2-15");
        assert_string_equal(a->events[2].steps[1], "hint NUMA 0: its free CPUs: 2-7 (6 free)");
        assert_string_equal(a->events[2].steps[2], "takeByTopologyNUMAPacked(4) from 2-7:");
        assert_string_equal(a->events[2].steps[3], "  whole core 2: 2-3");
        assert_string_equal(a->events[2].steps[4], "  whole core 4: 4-5");
        ncm_node_admission_free(a);

        /* a refusal still explains the merge */
        a = admit(&f, simple_pod("q", "9"), NCM_NODE_EXPLAIN);
        assert_false(a->admitted);
        assert_int_equal(a->n_events, 2);
        assert_int_equal(a->events[1].kind, NCM_NODE_EVENT_MERGE);
        assert_false(a->events[1].ok);
        assert_non_null(strstr(a->events[1].text, "TopologyAffinityError"));
        ncm_node_admission_free(a);

        /* without the flag: no events */
        a = admit(&f, simple_pod("r", "2"), 0);
        assert_int_equal(a->n_events, 0);
        ncm_node_admission_free(a);
        fx_done(&f);
}

/* ------------------------------------------------------------------------------------------
 * Devices
 */

#define GPUS                                                                                       \
        "{\"example.com/gpu\": [{\"id\": \"gpu0\", \"numa\": [0]}, {\"id\": \"gpu1\", \"numa\": "  \
        "[0]}, "                                                                                   \
        "{\"id\": \"gpu2\", \"numa\": [1]}, {\"id\": \"gpu3\", \"numa\": [1], \"health\": "        \
        "\"Unhealthy\"}]}"

static ncm_pod *gpu_pod(const char *uid, const char *cpu, int gpus)
{
        char text[512];
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p = NULL;
        snprintf(text, sizeof(text),
                 "{\"metadata\": {\"uid\": \"%s\"}, \"spec\": {\"containers\": [{\"name\": \"c\", "
                 "\"resources\": {\"limits\": {\"cpu\": \"%s\", \"memory\": \"1G\", "
                 "\"example.com/gpu\": %d}}}]}}",
                 uid, cpu, gpus);
        if (ncm_pod_parse(text, strlen(text), NULL, &p, &err) < 0)
                fail_msg("%s", err.msg);
        return p;
}

static void expect_devices(const ncm_node_admission *a, size_t at, const char *ids)
{
        ncm_buf b = NCM_BUF_INIT;
        const ncm_node_container_result *c = &a->containers[at];
        for (size_t i = 0; i < c->n_devices; i++)
                for (size_t k = 0; k < c->devices[i].n_ids; k++)
                        ncm_buf_printf(&b, "%s%s", b.len ? "," : "", c->devices[i].ids[k]);
        assert_string_equal(b.data ? b.data : "", ids);
        ncm_buf_done(&b);
}

static void fx_new_devices(fx *f, const char *kubelet, const char *state_dir)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_options o = {.devices = GPUS, .devices_len = strlen(GPUS), .state_dir = state_dir};
        *f = (fx){0};
        f->t = load_topo(TWO_NUMA);
        if (ncm_node_config_parse(kubelet, strlen(kubelet), NULL, "", &f->cfg, &err) < 0 ||
            ncm_node_new(f->t, f->cfg, &o, &f->n, &err) < 0)
                fail_msg("%s", err.msg);
}

/* Devices and CPUs aligned by single-numa-node; the device manager's hints come first. */
static void test_node_devices_aligned(void **state)
{
        char buf[256];
        ncm_node_admission *a;
        fx f;

        fx_new_devices(&f, kubelet_tm("single-numa-node", "container", buf, sizeof(buf)), NULL);
        a = admit(&f, gpu_pod("a", "2", 2), NCM_NODE_EXPLAIN);
        assert_true(a->admitted);
        expect_devices(a, 0, "gpu0,gpu1");
        tu_assert_cpuset(a->containers[0].cpus, "2-3");
        /* events: device hints, CPU hints, merge, device allocation, CPU allocation */
        assert_int_equal(a->n_events, 5);
        assert_string_equal(a->events[0].provider, "devices");
        assert_string_equal(a->events[1].provider, "cpu");
        assert_int_equal(a->events[2].kind, NCM_NODE_EVENT_MERGE);
        assert_string_equal(a->events[3].provider, "devices");
        assert_string_equal(a->events[3].text, "example.com/gpu: gpu0,gpu1");
        assert_string_equal(a->events[3].steps[0], "example.com/gpu gpu0 (NUMA 0): aligned with "
                                                   "the hint");
        ncm_node_admission_free(a);
        /* 2 more: NUMA 1 has one healthy GPU, NUMA 0 none: refused */
        expect_refused(&f, gpu_pod("b", "2", 2), NCM_TM_REASON_TOPOLOGY_AFFINITY,
                       NCM_TM_MESSAGE_TOPOLOGY_AFFINITY);
        a = admit(&f, gpu_pod("c", "2", 1), 0);
        assert_true(a->admitted);
        expect_devices(a, 0, "gpu2");
        tu_assert_cpuset(a->containers[0].cpus, "8-9");
        ncm_node_admission_free(a);
        /* nothing healthy left */
        expect_refused(&f, gpu_pod("d", "2", 1), NCM_TM_REASON_TOPOLOGY_AFFINITY,
                       NCM_TM_MESSAGE_TOPOLOGY_AFFINITY);
        fx_done(&f);

        /* best-effort: the allocation itself fails, with the device manager's text */
        fx_new_devices(&f, kubelet_tm("best-effort", "container", buf, sizeof(buf)), NULL);
        a = admit(&f, gpu_pod("a", "2", 3), 0);
        assert_true(a->admitted);
        expect_devices(a, 0, "gpu0,gpu1,gpu2");
        ncm_node_admission_free(a);
        expect_refused(&f, gpu_pod("b", "2", 1), NCM_TM_REASON_UNEXPECTED,
                       "Allocate failed due to requested number of devices unavailable for "
                       "example.com/gpu. Requested: 1, Available: 0, which is unexpected");
        fx_done(&f);
}

/* A refused pod gives its devices back; the checkpoint file ends as it began; restarts keep
 * the assignments. */
static void test_node_devices_rollback_restart(void **state)
{
        char *dir = tu_mkdtemp();
        char path[512], buf[256];
        char *before = NULL, *after = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_admission *a;
        fx f;

        fx_new_devices(&f, kubelet_tm("best-effort", "container", buf, sizeof(buf)), dir);
        a = admit(&f, gpu_pod("keep", "2", 1), 0);
        assert_true(a->admitted);
        ncm_node_admission_free(a);
        snprintf(path, sizeof(path), "%s/kubelet_internal_checkpoint", dir);
        assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &before, NULL, &err), 0);
        {
                /* one GPU for "c", then 40 CPUs for "d": refused, gpu1 goes back */
                const char *t = "{\"metadata\": {\"uid\": \"x\"}, \"spec\": {\"containers\": "
                                "[{\"name\": \"c\", \"resources\": {\"limits\": "
                                "{\"example.com/gpu\": 1, \"cpu\": \"1\", \"memory\": \"1G\"}}}, "
                                "{\"name\": \"d\", \"resources\": "
                                "{\"limits\": {\"cpu\": \"40\", \"memory\": \"1G\"}}}]}}";
                ncm_pod *p = NULL;
                assert_int_equal(ncm_pod_parse(t, strlen(t), NULL, &p, &err), 0);
                a = admit(&f, p, 0);
                assert_false(a->admitted);
                ncm_node_admission_free(a);
        }
        assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &after, NULL, &err), 0);
        assert_string_equal(before, after);
        free(after);
        /* a restart reads both files back */
        assert_int_equal(ncm_node_restart(f.n, NULL, &err), 0);
        a = admit(&f, gpu_pod("next", "2", 2), 0);
        assert_true(a->admitted);
        expect_devices(a, 0, "gpu1,gpu2");
        ncm_node_admission_free(a);
        free(before);
        fx_done(&f);
        tu_rm_rf(dir);
        free(dir);

        /* in memory too */
        fx_new_devices(&f, kubelet_tm("none", "container", buf, sizeof(buf)), NULL);
        a = admit(&f, gpu_pod("p", "1", 2), 0);
        ncm_node_admission_free(a);
        assert_int_equal(ncm_node_restart(f.n, NULL, &err), 0);
        a = admit(&f, gpu_pod("q", "1", 2), 0);
        assert_false(a->admitted); /* gpu0, gpu1 still held by p; gpu3 unhealthy */
        ncm_node_admission_free(a);
        {
                ncm_autoptr(ncm_cpuset) rel = ncm_cpuset_new();
                assert_int_equal(ncm_node_remove_pod(f.n, "p", rel, &err), 1);
        }
        a = admit(&f, gpu_pod("q", "1", 2), 0);
        assert_true(a->admitted);
        ncm_node_admission_free(a);
        fx_done(&f);
}

static char *read_text(const char *dir, const char *name)
{
        char path[512], *text = NULL;
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &text, NULL, NULL) < 0)
                return strdup("");
        return text;
}

/*
 * Writes staged into the owner's batch (ncm_node_admit_batch): the owner's own line and the
 * node's files (the device manager's checkpoint, cpu_manager_state) are committed together by
 * the admission; a refusal drops the owner's line with them, writing nothing.
 */
static void test_node_stage_writes(void **state)
{
        static const char *const files[] = {"kubelet_internal_checkpoint", "cpu_manager_state",
                                            "owner_journal"};
        char *dir = tu_mkdtemp();
        char buf[256], path[512], *before[3], *now;
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_admission *a;
        ncm_fs_batch *b = ncm_fs_batch_new();
        fx f;

        (void)state;
        snprintf(path, sizeof(path), "%s/owner_journal", dir);
        fx_new_devices(&f, kubelet_tm("best-effort", "container", buf, sizeof(buf)), dir);
        for (size_t i = 0; i < 3; i++)
                before[i] = read_text(dir, files[i]);
        f.batch = b;
        assert_int_equal(ncm_fs_batch_append(b, AT_FDCWD, path, "keep\n", 5, 0600, &err), 0);
        a = admit(&f, gpu_pod("keep", "2", 1), 0);
        f.batch = NULL;
        assert_true(a->admitted);
        ncm_node_admission_free(a);
        assert_int_equal(ncm_fs_batch_size(b), 0);
        for (size_t i = 0; i < 3; i++) {
                now = read_text(dir, files[i]);
                assert_non_null(strstr(now, "keep"));
                free(before[i]);
                before[i] = now;
        }
        /* the directory's fsync is the owner's to do */
        assert_true(ncm_fs_batch_owed(b) > 0);
        assert_int_equal(ncm_fs_batch_settle(b, 0, &err), 0);

        /* refused (40 CPUs): the owner's line goes with the node's writes, nothing is written */
        f.batch = b;
        assert_int_equal(ncm_fs_batch_append(b, AT_FDCWD, path, "big\n", 4, 0600, &err), 0);
        a = admit(&f, gpu_pod("big", "40", 1), 0);
        f.batch = NULL;
        assert_false(a->admitted);
        ncm_node_admission_free(a);
        assert_int_equal(ncm_fs_batch_size(b), 0);
        b = ncm_fs_batch_free(b);
        for (size_t i = 0; i < 3; i++) {
                now = read_text(dir, files[i]);
                assert_string_equal(now, before[i]);
                free(now);
                free(before[i]);
        }
        /* what was committed is what a restart finds */
        assert_int_equal(ncm_node_restart(f.n, NULL, &err), 0);
        a = admit(&f, gpu_pod("next", "2", 2), 0);
        assert_true(a->admitted);
        expect_devices(a, 0, "gpu1,gpu2");
        ncm_node_admission_free(a);
        fx_done(&f);
        tu_rm_rf(dir);
        free(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_node_config_errors),
                        cmocka_unit_test(test_node_config_defaults),
                        cmocka_unit_test(test_node_generate_static),
                        cmocka_unit_test(test_node_add_with_resv_list),
                        cmocka_unit_test(test_node_allocatable),
                        cmocka_unit_test(test_node_add_with_init_containers),
                        cmocka_unit_test(test_node_tm_policies),
                        cmocka_unit_test(test_node_tm_scopes),
                        cmocka_unit_test(test_node_admission_errors),
                        cmocka_unit_test(test_node_rollback),
                        cmocka_unit_test(test_node_rollback_reuse),
                        cmocka_unit_test(test_node_rollback_reuse_exact),
                        cmocka_unit_test(test_node_rollback_hints),
                        cmocka_unit_test(test_node_remove),
                        cmocka_unit_test(test_node_restart),
                        cmocka_unit_test(test_node_start_state),
                        cmocka_unit_test(test_node_state_dir),
                        cmocka_unit_test(test_node_explain),
                        cmocka_unit_test(test_node_devices_aligned),
                        cmocka_unit_test(test_node_stage_writes),
                        cmocka_unit_test(test_node_devices_rollback_restart),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
