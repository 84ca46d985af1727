/* SPDX-License-Identifier: Apache-2.0 */
/*
 * In-place resize in the CPU manager (KEP-5554): the allocator with must-keep CPUs (packed: the
 * kubelet's accumulator after taking them; distributed: spread over their NUMA nodes), the
 * static policy's resize and its refusals with KEP-5554's texts, resize hints, and promised
 * CPUs in the state and in cpu_manager_state (a state without promises writes the kubelet's
 * bytes; with them the file still verifies as V2).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpumanager.h>
#include <nodecm/cpustate.h>
#include <nodecm/pod.h>
#include <nodecm/topology.h>
#include "testutil.h"

/* 2 sockets = 2 NUMA nodes, 4 cores x 2 threads each: NUMA 0 = CPUs 0-7, NUMA 1 = 8-15. */
#define TWO_NUMA "package:2 numa:1 core:4 pu:2"

static ncm_topo *topo(const char *syn)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_topo *t = NULL;
        if (ncm_topo_from_synthetic(syn, &t, &err) < 0)
                fail_msg("%s: %s", syn, err.msg);
        return t;
}

static ncm_cpu_index *index_of(const ncm_topo *t)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpu_index *ix = NULL;
        if (ncm_cpu_index_new(t, &ix, &err) < 0)
                fail_msg("index: %s", err.msg);
        return ix;
}

static ncm_pod *pod_cpu(const char *uid, const char *cpu)
{
        char text[512];
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p = NULL;

        snprintf(text, sizeof(text),
                 "{\"metadata\": {\"uid\": \"%s\"}, \"spec\": {\"containers\": [{\"name\": \"c\", "
                 "\"resources\": {\"limits\": {\"cpu\": \"%s\", \"memory\": \"1G\"}}}]}}",
                 uid, cpu);
        if (ncm_pod_parse(text, strlen(text), NULL, &p, &err) < 0)
                fail_msg("%s", err.msg);
        return p;
}

/* ------------------------------------------------------------------------------------------
 * The allocator
 */

/*
 * The packed path is the kubelet's accumulator after it took MUST_KEEP: a fresh take over the
 * rest, needing the rest, plus MUST_KEEP. Checked over many available sets and keeps.
 */
static void test_cpu_resize_take_keep_packed_is_the_accumulator(void **state)
{
        ncm_topo *t = topo(TWO_NUMA);
        ncm_cpu_index *ix = index_of(t);
        unsigned seed = 7;
        (void)state;

        for (int round = 0; round < 500; round++) {
                ncm_cpuset *avail = ncm_cpuset_new(), *keep = ncm_cpuset_new();
                ncm_cpuset *rest = ncm_cpuset_new(), *got = ncm_cpuset_new();
                ncm_cpuset *want = ncm_cpuset_new();
                ncm_error e1 = NCM_ERROR_INIT, e2 = NCM_ERROR_INIT;
                int n, r1, r2;
                for (int cpu = 0; cpu < 16; cpu++) {
                        seed = seed * 1103515245 + 12345;
                        int v = (int)((seed >> 16) % 3);
                        if (v == 1)
                                ncm_cpuset_set(avail, cpu);
                        else if (v == 2)
                                ncm_cpuset_set(keep, cpu);
                }
                seed = seed * 1103515245 + 12345;
                n = ncm_cpuset_weight(keep) + (int)((seed >> 16) % 6);
                r1 = ncm_cpu_take_keep(ix, NULL, avail, keep, NULL, n, got, &e1);
                r2 = ncm_cpu_take(ix, NULL, avail, n - ncm_cpuset_weight(keep), rest, &e2);
                assert_int_equal(r1 < 0, r2 < 0);
                if (r1 >= 0) {
                        ncm_cpuset_or(want, rest, keep);
                        assert_true(ncm_cpuset_equal(got, want));
                        assert_int_equal(ncm_cpuset_weight(got), n);
                } else {
                        assert_string_equal(e1.msg, e2.msg);
                }
                ncm_cpuset_free(avail);
                ncm_cpuset_free(keep);
                ncm_cpuset_free(rest);
                ncm_cpuset_free(got);
                ncm_cpuset_free(want);
        }
        ncm_cpu_index_free(ix);
        ncm_topo_free(t);
}

static void test_cpu_resize_take_keep_refuses_below_keep(void **state)
{
        ncm_topo *t = topo(TWO_NUMA);
        ncm_cpu_index *ix = index_of(t);
        ncm_cpuset *keep = tu_cpuset("2-5"), *avail = tu_cpuset("6-15");
        ncm_cpuset *got = tu_cpuset("1");
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(ncm_cpu_take_keep(ix, NULL, avail, keep, NULL, 2, got, &err),
                         -NCM_E_UNSATISFIABLE);
        assert_string_equal(err.msg, "requested number of CPUs ( 2 ) are less than number of "
                                     "retained CPUs ( 4 )");
        tu_assert_cpuset(got, "1"); /* untouched */
        /* reusable first: a downsize keeps 2-3 and takes 2 of 4-5 before any other */
        ncm_cpuset_free(keep);
        keep = tu_cpuset("2-3");
        ncm_cpuset *reuse = tu_cpuset("4-7");
        assert_int_equal(ncm_cpu_take_keep(ix, NULL, avail, keep, reuse, 6, got, &err), 0);
        tu_assert_cpuset(got, "2-7");
        ncm_cpuset_free(reuse);
        ncm_cpuset_free(keep);
        ncm_cpuset_free(avail);
        ncm_cpuset_free(got);
        ncm_cpu_index_free(ix);
        ncm_topo_free(t);
}

/* distribute-cpus-across-numa: what an upsize adds goes to the nodes it spans already. */
static void test_cpu_resize_take_keep_distributed_stays_on_its_nodes(void **state)
{
        ncm_topo *t = topo("package:1 numa:4 core:4 pu:1");
        ncm_cpu_index *ix = index_of(t);
        ncm_cpu_options o = {.distribute_cpus_across_numa = true};
        /* 2 + 2 on nodes 0 and 1 (CPUs 0-3, 4-7): 4 more, 2 + 2, not on the emptier 2 and 3 */
        ncm_cpuset *keep = tu_cpuset("0-1,4-5"), *avail = tu_cpuset("2-3,6-15");
        ncm_cpuset *got = ncm_cpuset_new();
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(ncm_cpu_take_keep(ix, &o, avail, keep, NULL, 8, got, &err), 0);
        tu_assert_cpuset(got, "0-7");
        /* too little room on them: spread over every node as for a new container */
        assert_int_equal(ncm_cpu_take_keep(ix, &o, avail, keep, NULL, 12, got, &err), 0);
        assert_int_equal(ncm_cpuset_weight(got), 12);
        assert_true(ncm_cpuset_is_subset(keep, got));
        ncm_cpuset_free(keep);
        ncm_cpuset_free(avail);
        ncm_cpuset_free(got);
        ncm_cpu_index_free(ix);
        ncm_topo_free(t);
}

/* ------------------------------------------------------------------------------------------
 * The static policy
 */

typedef struct pfx {
        ncm_topo *t;
        ncm_cpu_policy *p;
        ncm_cpu_state *s;
} pfx;

static void pfx_new(pfx *f, const char *syn, const ncm_cpu_option *opts, size_t nopts)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpu_policy_config c = {0};
        ncm_cpuset *res = tu_cpuset("0");

        f->t = topo(syn);
        c.policy = "static";
        c.options = opts;
        c.noptions = nopts;
        c.gates = (ncm_cpu_gates){true, true};
        c.reserved_cpus = res;
        if (ncm_cpu_policy_new(f->t, &c, &f->p, &err) < 0)
                fail_msg("policy: %s", err.msg);
        f->s = ncm_cpu_state_new("static");
        if (ncm_cpu_policy_start(f->p, f->s, &err) < 0)
                fail_msg("start: %s", err.msg);
        ncm_cpuset_free(res);
}

static void pfx_done(pfx *f)
{
        ncm_cpu_state_free(f->s);
        ncm_cpu_policy_free(f->p);
        ncm_topo_free(f->t);
}

/* Admit POD's container c, keeping its promise. */
static void admit(pfx *f, ncm_pod *pod)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint any = {.any = true};
        if (ncm_cpu_policy_allocate(f->p, f->s, pod, &pod->containers[0], &any, &err) < 0)
                fail_msg("allocate: %s", err.msg);
        assert_int_equal(ncm_cpu_state_set_promised(f->s, pod->uid, "c",
                                                    ncm_cpu_state_get(f->s, pod->uid, "c"), &err),
                         0);
}

static int resize(pfx *f, ncm_pod *pod, const char *before, const char **type, ncm_error *err)
{
        ncm_hint any = {.any = true};
        return ncm_cpu_policy_resize(f->p, f->s, pod, &pod->containers[0], &any, before, type, err);
}

/* KEP-5554's example: 4 -> 8 -> 12 -> 6, promised 4; never below 4. */
static void test_cpu_resize_policy_kep_example(void **state)
{
        pfx f;
        ncm_error err = NCM_ERROR_INIT;
        const char *type = NULL;
        ncm_pod *p4 = pod_cpu("p", "4"), *p8 = pod_cpu("p", "8"), *p12 = pod_cpu("p", "12");
        ncm_pod *p6 = pod_cpu("p", "6"), *p2 = pod_cpu("p", "2");
        (void)state;

        pfx_new(&f, TWO_NUMA, NULL, 0);
        admit(&f, p4);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-5");
        /* node 0 has 3 free CPUs (1, 6-7): the kubelet's packed order takes core 6 and core 8 */
        assert_int_equal(resize(&f, p8, "4", &type, &err), 0);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-9");
        assert_int_equal(resize(&f, p12, "8", &type, &err), 0);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-13");
        tu_assert_cpuset(ncm_cpu_state_default(f.s), "0-1,14-15");
        assert_int_equal(resize(&f, p6, "12", &type, &err), 0);
        /* the promise and two more of its own CPUs; the rest back to the pool */
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-7");
        tu_assert_cpuset(ncm_cpu_state_default(f.s), "0-1,8-15");
        tu_assert_cpuset(ncm_cpu_state_promised(f.s, "p", "c"), "2-5");
        assert_int_equal(resize(&f, p2, "6", &type, &err), -NCM_E_ADMISSION);
        assert_string_equal(type, NCM_CPU_REASON_PROHIBITED);
        assert_string_equal(err.msg,
                            "prohibitedCPUAllocation Error: Skip resize, Not allowed to reduce "
                            "container exclusively allocated pool below promised, (requested CPUs "
                            "= 2, allocated CPUs = 6, promised CPUs = 4, guaranteed CPUs = 2)");
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-7");
        ncm_pod_free(p4);
        ncm_pod_free(p8);
        ncm_pod_free(p12);
        ncm_pod_free(p6);
        ncm_pod_free(p2);
        pfx_done(&f);
}

static void test_cpu_resize_policy_refusals(void **state)
{
        pfx f;
        ncm_error err = NCM_ERROR_INIT;
        const char *type = NULL;
        ncm_pod *ex = pod_cpu("p", "2"), *frac = pod_cpu("p", "1500m");
        ncm_pod *sh = pod_cpu("q", "500m"), *shx = pod_cpu("q", "2");
        (void)state;

        pfx_new(&f, TWO_NUMA, NULL, 0);
        admit(&f, ex);
        assert_int_equal(resize(&f, frac, "2", &type, &err), -NCM_E_ADMISSION);
        assert_string_equal(type, NCM_CPU_REASON_INCONSISTENT);
        assert_string_equal(err.msg, "inconsistentCPUAllocation Error: Not allowed to move a "
                                     "container from  exclusively allocated pool to shared pool, "
                                     "not allowed (requested CPUs = 1500m, allocated CPUs = 2)");
        /* shared before: fractional to whole is the other inconsistency */
        assert_int_equal(resize(&f, shx, "500m", &type, &err), -NCM_E_ADMISSION);
        assert_string_equal(err.msg, "inconsistentCPUAllocation Error: Not allowed to move a "
                                     "container from shared pool to exclusively allocated pool, "
                                     "(requested CPUs = 2, allocated CPUs = 500m)");
        /* shared to shared changes nothing of the CPU manager's */
        assert_int_equal(resize(&f, sh, "700m", &type, &err), 0);
        assert_null(type);
        /* no promise kept: the KEP's getPromisedCPUSet error */
        assert_int_equal(ncm_cpu_state_set_promised(f.s, "p", "c", NULL, &err), 0);
        ncm_pod_free(frac);
        frac = pod_cpu("p", "4");
        assert_int_equal(resize(&f, frac, "2", &type, &err), -NCM_E_ADMISSION);
        assert_string_equal(type, NCM_CPU_REASON_PROMISED_MISSING);
        assert_string_equal(err.msg, "getPromisedCPUSet Error: Skip resize, unable to get "
                                     "PromisedCPUSet, nothing to be done, (podUID = p, "
                                     "containerName c)");
        ncm_pod_free(ex);
        ncm_pod_free(frac);
        ncm_pod_free(sh);
        ncm_pod_free(shx);
        pfx_done(&f);
}

/* full-pcpus-only: whole cores only, the container's own CPUs count as available. */
static void test_cpu_resize_policy_full_pcpus(void **state)
{
        static const ncm_cpu_option opts[] = {{NCM_CPU_OPT_FULL_PCPUS_ONLY, "true"}};
        pfx f;
        ncm_error err = NCM_ERROR_INIT;
        const char *type = NULL;
        ncm_pod *p2 = pod_cpu("p", "2"), *p3 = pod_cpu("p", "3"), *p14 = pod_cpu("p", "14");
        ncm_pod *p16 = pod_cpu("p", "16");
        (void)state;

        pfx_new(&f, TWO_NUMA, opts, 1);
        admit(&f, p2);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-3");
        assert_int_equal(resize(&f, p3, "2", &type, &err), -NCM_E_ADMISSION);
        assert_string_equal(type, NCM_CPU_REASON_SMT_ALIGNMENT);
        assert_string_equal(err.msg,
                            "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2");
        /* 14 = its 2 + the 12 free physical CPUs (core 0 holds a reserved CPU) */
        assert_int_equal(resize(&f, p14, "2", &type, &err), 0);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-15");
        assert_int_equal(resize(&f, p16, "14", &type, &err), -NCM_E_ADMISSION);
        assert_string_equal(err.msg, "SMT Alignment Error: not enough free physical CPUs: "
                                     "available physical CPUs = 14, requested CPUs = 16, CPUs per "
                                     "core = 2");
        ncm_pod_free(p2);
        ncm_pod_free(p3);
        ncm_pod_free(p14);
        ncm_pod_free(p16);
        pfx_done(&f);
}

static int resize_near(pfx *f, ncm_pod *pod, const ncm_hint *aff, const char *local,
                       const char *before, ncm_error *err)
{
        ncm_cpuset *l = tu_cpuset(local);
        ncm_cpu_near near = {"example.com/nic=vf0", l};
        const char *type = NULL;
        int r = ncm_cpu_policy_resize_near(f->p, f->s, pod, &pod->containers[0], aff, &near, 1,
                                           before, &type, err);
        ncm_cpuset_free(l);
        return r;
}

/*
 * deviceLocalCPUs on a resize: the CPUs a resize chooses follow the admission's preference (the
 * devices' local CPUs, then their uncore caches, inside the hint); what is kept is kept.
 */
static void test_cpu_resize_policy_near(void **state)
{
        static const ncm_cpu_option full[] = {{NCM_CPU_OPT_FULL_PCPUS_ONLY, "true"}};
        pfx f;
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint any = {.any = true}, node0 = {.numa = 1, .preferred = true};
        ncm_pod *p2 = pod_cpu("p", "2"), *p4 = pod_cpu("p", "4"), *p8 = pod_cpu("p", "8");
        (void)state;

        pfx_new(&f, TWO_NUMA, NULL, 0);
        admit(&f, p2);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-3");
        /* upsize: the device's CPUs first, then its socket (the synthetic machine's uncore) */
        assert_int_equal(resize_near(&f, p4, &any, "12-13", "2", &err), 0);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-3,12-13");
        assert_int_equal(resize_near(&f, p8, &any, "12-13", "4", &err), 0);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-3,8-13");
        tu_assert_cpuset(ncm_cpu_state_default(f.s), "0-1,4-7,14-15");
        /* downsize: the promise, then its own CPUs near the device */
        assert_int_equal(resize_near(&f, p4, &any, "12-13", "8", &err), 0);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-3,12-13");
        tu_assert_cpuset(ncm_cpu_state_promised(f.s, "p", "c"), "2-3");
        tu_assert_cpuset(ncm_cpu_state_default(f.s), "0-1,4-11,14-15");
        /* a device outside the hint adds nothing: the hint's CPUs, as without one */
        assert_int_equal(resize_near(&f, p8, &node0, "14-15", "4", &err), 0);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-7,12-13");
        pfx_done(&f);

        /* without a device the resize is ncm_cpu_policy_resize()'s: the kubelet's 2-5 */
        pfx_new(&f, TWO_NUMA, NULL, 0);
        admit(&f, p2);
        assert_int_equal(ncm_cpu_policy_resize_near(f.p, f.s, p4, &p4->containers[0], &any, NULL, 0,
                                                    "2", &(const char *){NULL}, &err),
                         0);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-5");
        pfx_done(&f);

        /* full-pcpus-only: a device's half core is not taken alone; whole cores near it are */
        pfx_new(&f, TWO_NUMA, full, 1);
        admit(&f, p2);
        assert_int_equal(resize_near(&f, p4, &any, "13", "2", &err), 0);
        tu_assert_cpuset(ncm_cpu_state_get(f.s, "p", "c"), "2-3,8-9");
        pfx_done(&f);
        ncm_pod_free(p2);
        ncm_pod_free(p4);
        ncm_pod_free(p8);
}

/* Resize hints: the masks hold the CPUs the container keeps. */
static void test_cpu_resize_hints(void **state)
{
        pfx f;
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint_list h = {0};
        const char *type = NULL;
        ncm_pod *p4 = pod_cpu("p", "4"), *p6 = pod_cpu("p", "6"), *p10 = pod_cpu("p", "10");
        ncm_buf b = NCM_BUF_INIT;
        (void)state;

        pfx_new(&f, TWO_NUMA, NULL, 0);
        admit(&f, p4);
        /* 6 fits on node 0 (3 free beside its 1-4): [0] preferred, the pair too */
        assert_int_equal(ncm_cpu_policy_resize_hints(f.p, f.s, p6, &p6->containers[0], &h, &err),
                         0);
        ncm_cpu_hints_format_json(&h, &b);
        assert_string_equal(b.data, "[{\"numa\": [0], \"preferred\": true}, {\"numa\": [0, 1], "
                                    "\"preferred\": false}]");
        ncm_hint_list_done(&h);
        ncm_buf_done(&b);
        /* 10 needs node 1 too: only [0,1], never [1] alone */
        assert_int_equal(ncm_cpu_policy_resize_hints(f.p, f.s, p10, &p10->containers[0], &h, &err),
                         0);
        b = (ncm_buf)NCM_BUF_INIT;
        ncm_cpu_hints_format_json(&h, &b);
        assert_string_equal(b.data, "[{\"numa\": [0, 1], \"preferred\": true}]");
        ncm_hint_list_done(&h);
        ncm_buf_done(&b);
        (void)type;
        ncm_pod_free(p4);
        ncm_pod_free(p6);
        ncm_pod_free(p10);
        pfx_done(&f);
}

/* ------------------------------------------------------------------------------------------
 * Promised CPUs in the state and the checkpoint
 */

static void test_cpu_resize_state_promised(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpu_state *s = ncm_cpu_state_new("static"), *d;
        ncm_cpuset *a = tu_cpuset("2-3"), *p = tu_cpuset("2");
        (void)state;

        assert_int_equal(ncm_cpu_state_set_promised(s, "u", "c", p, &err), -ENOENT);
        assert_int_equal(ncm_cpu_state_set(s, "u", "c", a, &err), 0);
        assert_false(ncm_cpu_state_has_promised(s));
        d = ncm_cpu_state_dup(s);
        assert_int_equal(ncm_cpu_state_set_promised(s, "u", "c", p, &err), 0);
        assert_true(ncm_cpu_state_has_promised(s));
        assert_false(ncm_cpu_state_equal(s, d));
        assert_int_equal(ncm_cpu_state_assign(d, s, &err), 0);
        assert_true(ncm_cpu_state_equal(s, d));
        tu_assert_cpuset(ncm_cpu_state_promised(d, "u", "c"), "2");
        /* a new set keeps the promise; deleting the entry drops it */
        assert_int_equal(ncm_cpu_state_set(s, "u", "c", p, &err), 0);
        tu_assert_cpuset(ncm_cpu_state_promised(s, "u", "c"), "2");
        assert_int_equal(ncm_cpu_state_delete(s, "u", "c", &err), 1);
        assert_null(ncm_cpu_state_promised(s, "u", "c"));
        ncm_cpu_state_free(s);
        ncm_cpu_state_free(d);
        ncm_cpuset_free(a);
        ncm_cpuset_free(p);
}

static ncm_cpu_state *state_of(const char *dflt, const char *cpus, const char *promised)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpu_state *s = ncm_cpu_state_new("static");
        ncm_cpuset *d = tu_cpuset(dflt), *c = tu_cpuset(cpus);
        assert_int_equal(ncm_cpu_state_set_default(s, d, &err), 0);
        assert_int_equal(ncm_cpu_state_set(s, "4aec46af", "mysqld", c, &err), 0);
        if (promised) {
                ncm_cpuset *p = tu_cpuset(promised);
                assert_int_equal(ncm_cpu_state_set_promised(s, "4aec46af", "mysqld", p, &err), 0);
                ncm_cpuset_free(p);
        }
        ncm_cpuset_free(d);
        ncm_cpuset_free(c);
        return s;
}

static void test_cpu_resize_checkpoint_promised(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpu_state *plain = state_of("0-1,6-11", "2-5", NULL);
        ncm_cpu_state *prom = state_of("0-1,6-11", "2-5", "2-3");
        ncm_cpu_checkpoint *c = NULL;
        ncm_cpu_state *back = NULL;
        ncm_buf a = NCM_BUF_INIT, b = NCM_BUF_INIT;
        (void)state;

        /* 1.36's V2: nodecm's own member (the V4 layout keeps it as data's baselines) */
        ncm_cpu_state_set_kubelet_version(plain, (ncm_kubelet_version){1, 36});
        ncm_cpu_state_set_kubelet_version(prom, (ncm_kubelet_version){1, 36});
        ncm_cpu_checkpoint_format_state(plain, &a);
        ncm_cpu_checkpoint_format_state(prom, &b);
        /* no promise: the kubelet's bytes; with one: the same checksum, the member before it */
        assert_string_equal(a.data, "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-1,6-11\","
                                    "\"entries\":{\"4aec46af\":{\"mysqld\":\"2-5\"}},"
                                    "\"checksum\":1195950791}");
        assert_string_equal(b.data, "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-1,6-11\","
                                    "\"entries\":{\"4aec46af\":{\"mysqld\":\"2-5\"}},"
                                    "\"promised\":{\"4aec46af\":{\"mysqld\":\"2-3\"}},"
                                    "\"checksum\":1195950791}");
        assert_int_equal(ncm_cpu_checkpoint_parse(b.data, b.len, "f", &c, &err), 0);
        assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V2);
        assert_int_equal(ncm_cpu_checkpoint_verify(c, &err), 0);
        assert_null(c->kubelet_error);
        assert_int_equal(ncm_cpu_checkpoint_restore(c, "static", NULL, 0, &back, &err), 0);
        assert_true(ncm_cpu_state_equal(back, prom));
        ncm_cpu_state_free(back);
        ncm_cpu_checkpoint_free(c);
        /* 1.37's V4: the promise is the kubelet's baseline inside data, no member of nodecm's */
        ncm_buf_done(&b);
        ncm_cpu_state_set_kubelet_version(prom, (ncm_kubelet_version){1, 37});
        ncm_cpu_checkpoint_format_state(prom, &b);
        assert_null(strstr(b.data, "\"promised\""));
        assert_non_null(strstr(b.data, "\\\"baselines\\\":{\\\"4aec46af\\\":{\\\"mysqld\\\":"
                                       "{\\\"baseline\\\":\\\"2-3\\\"}}}"));
        assert_int_equal(ncm_cpu_checkpoint_parse(b.data, b.len, "f", &c, &err), 0);
        assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V4);
        assert_int_equal(c->nbaselines, 1);
        assert_int_equal(ncm_cpu_checkpoint_restore(c, "static", NULL, 0, &back, &err), 0);
        assert_true(ncm_cpu_state_equal(back, prom));
        ncm_cpu_state_free(back);
        ncm_cpu_checkpoint_free(c);
        ncm_cpu_state_free(plain);
        ncm_cpu_state_free(prom);
        ncm_buf_done(&a);
        ncm_buf_done(&b);
}

static void test_cpu_resize_checkpoint_bad_promise(void **state)
{
        static const struct {
                const char *text;
                int parse, restore;
                const char *msg;
        } cases[] = {
                        {"\"promised\":{\"4aec46af\":{\"mysqld\":\"2-7\"}},", 0,
                         -NCM_E_INVALID_STATE,
                         "promised: cpuset \"2-7\" of container \"mysqld\" in pod \"4aec46af\" is "
                         "not part "
                         "of its CPUs \"2-5\""},
                        {"\"promised\":{\"4aec46af\":{\"other\":\"2\"}},", 0, -NCM_E_INVALID_STATE,
                         "promised: cpuset \"2\" of container \"other\" in pod \"4aec46af\" is not "
                         "part of "
                         "its CPUs \"\""},
                        {"\"promised\":{\"4aec46af\":{\"mysqld\":\"x\"}},", 0, -NCM_E_INVALID_STATE,
                         "promised: could not parse cpuset \"x\" for container \"mysqld\" in pod "
                         "\"4aec46af\": strconv.Atoi: parsing \"x\": invalid syntax"},
                        {"\"promised\":[1],", -NCM_E_INVALID_STATE, 0,
                         "f: promised: json: cannot unmarshal array into Go struct field "
                         "CPUManagerCheckpoint.promised of type map[string]map[string]string"},
        };
        (void)state;

        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                char text[512];
                ncm_error err = NCM_ERROR_INIT;
                ncm_cpu_checkpoint *c = NULL;
                ncm_cpu_state *s = NULL;
                int r;
                snprintf(text, sizeof(text),
                         "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-1,6-11\",\"entries\":"
                         "{\"4aec46af\":{\"mysqld\":\"2-5\"}},%s\"checksum\":1195950791}",
                         cases[i].text);
                r = ncm_cpu_checkpoint_parse(text, strlen(text), "f", &c, &err);
                assert_int_equal(r, cases[i].parse);
                if (r == 0) {
                        r = ncm_cpu_checkpoint_restore(c, "static", NULL, 0, &s, &err);
                        assert_int_equal(r, cases[i].restore);
                        ncm_cpu_checkpoint_free(c);
                }
                assert_string_equal(err.msg, cases[i].msg);
                assert_null(s);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cpu_resize_take_keep_packed_is_the_accumulator),
                        cmocka_unit_test(test_cpu_resize_take_keep_refuses_below_keep),
                        cmocka_unit_test(test_cpu_resize_take_keep_distributed_stays_on_its_nodes),
                        cmocka_unit_test(test_cpu_resize_policy_kep_example),
                        cmocka_unit_test(test_cpu_resize_policy_refusals),
                        cmocka_unit_test(test_cpu_resize_policy_full_pcpus),
                        cmocka_unit_test(test_cpu_resize_policy_near),
                        cmocka_unit_test(test_cpu_resize_hints),
                        cmocka_unit_test(test_cpu_resize_state_promised),
                        cmocka_unit_test(test_cpu_resize_checkpoint_promised),
                        cmocka_unit_test(test_cpu_resize_checkpoint_bad_promise),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
