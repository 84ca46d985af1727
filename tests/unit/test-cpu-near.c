/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPUs near the container's devices (ncm_cpu_policy_allocate_near, nodecm's deviceLocalCPUs:
 * prefer) on issue 24's machine: two sockets of 8 cores x 2 threads (CPU c and c + 16 are a
 * core's threads), one NUMA node each, two L3 caches each (0-3, 4-7, 8-11, 12-15 and their
 * siblings), with a NIC whose local CPUs are socket 1's second L3. Without devices every
 * allocation is the kubelet's. With isolatedCPUs too (issue 23), isolation restricts which free
 * CPUs a container may take and locality only orders the ones it may: a device near isolated
 * CPUs, a device whose local CPUs are all isolated, one half isolated, the spill, and a
 * property test over random machines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include <nodecm/cpumanager.h>
#include <nodecm/cpustate.h>
#include <nodecm/pod.h>
#include <nodecm/topology.h>
#include "testutil.h"

typedef struct fixture {
        ncm_topo *t;
        ncm_cpu_policy *p;
        ncm_cpu_state *s;
} fixture;

static ncm_topo *machine(void)
{
        ncm_cpu_info c[32];
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;

        for (int cpu = 0; cpu < 32; cpu++) {
                int core = cpu % 16, sock = core / 8;
                c[cpu] = (ncm_cpu_info){cpu, core, sock, sock, core / 4};
        }
        if (ncm_topo_new(c, 32, NULL, 0, NULL, &t, &err) < 0)
                fail_msg("%s", err.msg);
        return t;
}

static void make_policy(fixture *f, bool full_pcpus)
{
        ncm_cpu_option opt = {"full-pcpus-only", "true"};
        ncm_cpu_policy_config cfg = {.policy = "static", .gates = NCM_CPU_GATES_DEFAULT};
        ncm_autoptr(ncm_cpuset) reserved = tu_cpuset("0,16");
        ncm_error err = NCM_ERROR_INIT;

        if (full_pcpus) {
                cfg.options = &opt;
                cfg.noptions = 1;
        }
        if (ncm_cpu_static_policy_new(f->t, 2, reserved, &cfg, &f->p, &err) < 0)
                fail_msg("%s", err.msg);
        f->s = ncm_cpu_state_new("static");
        assert_non_null(f->s);
        assert_int_equal(ncm_cpu_policy_start(f->p, f->s, &err), 0);
}

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        f->t = machine();
        make_policy(f, false);
        *state = f;
        return 0;
}

static int setup_full(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        f->t = machine();
        make_policy(f, true);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;
        ncm_cpu_state_free(f->s);
        ncm_cpu_policy_free(f->p);
        ncm_topo_free(f->t);
        free(f);
        return 0;
}

/* A Guaranteed pod UID of one container "app" with CPUS, annotated nodecm.io/isolated-cpus:
 * ISO unless NULL. */
static ncm_pod *pod_iso(const char *uid, int cpus, const char *iso)
{
        char text[640];
        ncm_pod *p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        snprintf(text, sizeof(text),
                 "{\"metadata\": {\"uid\": \"%s\"%s%s%s}, \"spec\": {\"containers\": "
                 "[{\"name\": \"app\", \"resources\": {\"limits\": {\"cpu\": \"%d\", "
                 "\"memory\": \"1G\"}}}]}}",
                 uid, iso ? ", \"annotations\": {\"nodecm.io/isolated-cpus\": \"" : "",
                 iso ? iso : "", iso ? "\"}" : "", cpus);
        if (ncm_pod_parse(text, strlen(text), NULL, &p, &err) < 0)
                fail_msg("%s", err.msg);
        return p;
}

static ncm_pod *pod(const char *uid, int cpus)
{
        return pod_iso(uid, cpus, NULL);
}

/* As expect(), for a pod annotated nodecm.io/isolated-cpus: ISO (NULL: not annotated). */
static void expect_iso(fixture *f, const char *uid, int cpus, const char *iso, int numa,
                       const char *local, const char *want)
{
        ncm_autoptr(ncm_pod) p = pod_iso(uid, cpus, iso);
        ncm_autoptr(ncm_cpuset) loc = local ? tu_cpuset(local) : NULL;
        ncm_cpu_near near = {"example.com/nic=vf0", loc};
        ncm_hint h = {0, true, true}; /* any */
        ncm_error err = NCM_ERROR_INIT;

        if (numa >= 0)
                h = (ncm_hint){(ncm_bitmask)1 << numa, false, true};
        if (ncm_cpu_policy_allocate_near(f->p, f->s, p, &p->containers[0], &h, &near, loc ? 1 : 0,
                                         &err) < 0)
                fail_msg("%s: %s", uid, err.msg);
        tu_assert_cpuset(ncm_cpu_state_get(f->s, uid, "app"), want);
}

/* Allocate CPUS for a new pod UID near LOCAL (NULL: no device) with hint NUMA (-1: none);
 * the CPUs it got must be WANT. */
static void expect(fixture *f, const char *uid, int cpus, int numa, const char *local,
                   const char *want)
{
        expect_iso(f, uid, cpus, NULL, numa, local, want);
}

static void test_cpu_near_prefers_local_cpus(void **state)
{
        fixture *f = *state;
        /* the kubelet's choice in NUMA node 1 is its first cores; the NIC's are its L3's */
        expect(f, "kubelet", 4, 1, NULL, "8-9,24-25");
        expect(f, "near", 4, 1, "12-15,28-31", "12-13,28-29");
        /* without a hint (topology manager none) the local CPUs come first too */
        expect(f, "any", 4, -1, "12-15,28-31", "14-15,30-31");
}

static void test_cpu_near_then_uncore_then_hint(void **state)
{
        fixture *f = *state;
        /* two local cores, then the rest of their L3 */
        expect(f, "a", 6, 1, "12-13,28-29", "12-14,28-30");
        /* the local cores are gone: the L3's last core, then the rest of the hint's node */
        expect(f, "b", 6, 1, "12-13,28-29", "8-9,15,24-25,31");
}

static void test_cpu_near_outside_the_hint(void **state)
{
        fixture *f = *state;
        /* a device the hint does not cover adds nothing: the kubelet's choice */
        expect(f, "a", 4, 0, "12-15,28-31", "1-2,17-18");
}

static void test_cpu_near_spill(void **state)
{
        fixture *f = *state;
        /* more than the hint's node holds: local, node 1, then the kubelet's spill */
        expect(f, "a", 18, 1, "12-15,28-31", "1,8-15,17,24-31");
}

static void test_cpu_near_whole_cores(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_cpuset) def = NULL;
        ncm_error err = NCM_ERROR_INIT;

        /* CPU 13 is taken by someone: only whole free cores are local steps */
        def = ncm_cpuset_dup(ncm_cpu_state_default(f->s));
        ncm_cpuset_clr(def, 13);
        assert_int_equal(ncm_cpu_state_set_default(f->s, def, &err), 0);
        expect(f, "a", 4, 1, "12-15,28-31", "12,14,28,30");
        /* one whole core left in the L3 (29 alone is no core): it, then the hint's node */
        expect(f, "b", 4, 1, "12-15,28-31", "8,15,24,31");
}

static void test_cpu_near_none_and_zero(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_pod) p = pod("z", 4);
        ncm_cpu_policy *none = NULL;
        ncm_cpu_state *s = ncm_cpu_state_new("none");
        ncm_autoptr(ncm_cpuset) loc = tu_cpuset("12-15");
        ncm_cpu_near near = {"d", loc};
        ncm_hint h = {(ncm_bitmask)2, false, true};
        ncm_error err = NCM_ERROR_INIT;

        /* no device: ncm_cpu_policy_allocate exactly */
        assert_int_equal(ncm_cpu_policy_allocate_near(f->p, f->s, p, &p->containers[0], &h, &near,
                                                      0, &err),
                         0);
        tu_assert_cpuset(ncm_cpu_state_get(f->s, "z", "app"), "8-9,24-25");
        /* the none policy pins nothing, near or not */
        assert_int_equal(ncm_cpu_none_policy_new(NULL, 0, &none, &err), 0);
        assert_int_equal(ncm_cpu_policy_allocate_near(none, s, p, &p->containers[0], &h, &near, 1,
                                                      &err),
                         0);
        assert_null(ncm_cpu_state_get(s, "z", "app"));
        ncm_cpu_policy_free(none);
        ncm_cpu_state_free(s);
}

static void test_cpu_near_sets(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_cpuset) a = tu_cpuset("13,99");
        ncm_autoptr(ncm_cpuset) b = tu_cpuset("2");
        ncm_autoptr(ncm_cpuset) local = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) uncore = ncm_cpuset_new();
        ncm_cpu_near near[] = {{"x", a}, {"y", b}, {"z", NULL}};

        ncm_cpu_near_sets(f->t, near, 3, local, uncore);
        tu_assert_cpuset(local, "2,13");
        tu_assert_cpuset(uncore, "0-3,12-19,28-31");
}

/* ------------------------------------------------------------------------------------------
 * With isolatedCPUs: isolation restricts the candidates, locality orders them
 */

static void isolate(fixture *f, ncm_cpu_isolation mode, const char *isolated)
{
        ncm_autoptr(ncm_cpuset) iso = tu_cpuset(isolated);
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_cpu_policy_set_isolation(f->p, mode, iso, &err), 0);
}

static void test_cpu_near_isolated_pool_near_the_device(void **state)
{
        fixture *f = *state;
        /* socket 1 isolated: the isolated container takes the pool's CPUs nearest the NIC */
        isolate(f, NCM_CPU_ISOLATION_EXCLUSIVE_ONLY, "8-15,24-31");
        expect_iso(f, "rt", 4, "require", 1, "12-15,28-31", "12-13,28-29");
        /* one that does not ask never gets them, however near (the kubelet's first cores, as
         * if it had no device) */
        expect_iso(f, "web", 4, NULL, -1, "12-15,28-31", "1-2,17-18");
}

static void test_cpu_near_device_on_isolated_cpus(void **state)
{
        fixture *f = *state;
        /* every local CPU of the NIC is isolated: a container that does not ask gets the rest
         * of the hint's node, the kubelet's choice there */
        isolate(f, NCM_CPU_ISOLATION_EXCLUSIVE_ONLY, "12-15,28-31");
        expect_iso(f, "web", 4, NULL, 1, "12-15,28-31", "8-9,24-25");
        /* and one that does gets them */
        expect_iso(f, "rt", 2, "prefer", 1, "12-15,28-31", "12,28");
}

static void test_cpu_near_device_on_isolated_cpus_exclude(void **state)
{
        fixture *f = *state;
        /* under exclude nobody gets them, whatever the pod says */
        isolate(f, NCM_CPU_ISOLATION_EXCLUDE, "12-15,28-31");
        expect_iso(f, "rt", 4, "prefer", 1, "12-15,28-31", "8-9,24-25");
        expect_iso(f, "any", 4, NULL, -1, "12-15,28-31", "10-11,26-27");
}

static void test_cpu_near_device_half_isolated(void **state)
{
        fixture *f = *state;
        /* the NIC's L3 is half isolated: each side takes its own half first */
        isolate(f, NCM_CPU_ISOLATION_EXCLUSIVE_ONLY, "14-15,30-31");
        expect_iso(f, "rt", 2, "require", 1, "12-15,28-31", "14,30");
        expect_iso(f, "web", 2, NULL, 1, "12-15,28-31", "12,28");
        /* the last non-isolated local core, then the hint's node; never the isolated core */
        expect_iso(f, "web2", 4, NULL, 1, "12-15,28-31", "8,13,24,29");
}

static void test_cpu_near_device_outside_the_isolated_pool(void **state)
{
        fixture *f = *state;
        /* the NIC's CPUs are not isolated, the pool is node 1's first L3: an isolated
         * container never takes the NIC's CPUs, the pool's are all it may have */
        isolate(f, NCM_CPU_ISOLATION_EXCLUSIVE_ONLY, "8-11,24-27");
        expect_iso(f, "rt", 4, "require", 1, "12-15,28-31", "8-9,24-25");
        expect_iso(f, "web", 4, NULL, 1, "12-15,28-31", "12-13,28-29");
}

static void test_cpu_near_isolated_spill(void **state)
{
        fixture *f = *state;
        /* exclusive-only lets a container that does not ask spill onto isolated CPUs when the
         * others hold too few (docs/isolation.md): every free CPU is then a candidate, and
         * locality orders them as without isolation */
        isolate(f, NCM_CPU_ISOLATION_EXCLUSIVE_ONLY, "2-15,18-31");
        expect_iso(f, "web", 4, NULL, -1, "12-15,28-31", "12-13,28-29");
        /* "require" never spills: only isolated CPUs, or a refusal */
        expect_iso(f, "rt", 4, "require", 1, "12-15,28-31", "14-15,30-31");
}

static void test_cpu_near_isolated_whole_cores(void **state)
{
        fixture *f = *state;
        /* full-pcpus-only: isolation and locality both keep cores whole */
        isolate(f, NCM_CPU_ISOLATION_EXCLUSIVE_ONLY, "13-15,28-31");
        /* the NIC's whole isolated cores */
        expect_iso(f, "rt", 4, "require", 1, "12-15,28-31", "13-14,29-30");
        /* core 12/28 is half isolated: 12 alone is no core, so nothing near is left for a
         * container that does not ask; the hint's node */
        expect_iso(f, "web", 2, NULL, 1, "12-15,28-31", "8,24");
}

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return n ? (uint32_t)(rng % n) : 0;
}

/* One or two devices near random CPUs: a random uncore cache's, a NUMA node's, or any few. */
static size_t random_near(const ncm_topo *t, ncm_cpu_near *near, ncm_cpuset **sets)
{
        size_t n = 1 + rnd(2), nu = 0, nn = 0;
        const int *numa = ncm_topo_numa_ids(t, &nn);
        int ncpu = ncm_topo_num_cpus(t);

        (void)ncm_topo_level_ids(t, NCM_TOPO_UNCORE, &nu);
        for (size_t i = 0; i < n; i++) {
                ncm_cpuset_zero(sets[i]);
                switch (rnd(3)) {
                case 0:
                        ncm_cpuset_copy(sets[i],
                                        ncm_topo_level_cpus(t, NCM_TOPO_UNCORE, rnd((uint32_t)nu)));
                        break;
                case 1:
                        ncm_cpuset_copy(sets[i], ncm_topo_numa_cpus(t, numa[rnd((uint32_t)nn)]));
                        break;
                default:
                        for (int k = 0; k < 3; k++)
                                (void)ncm_cpuset_set(sets[i], (int)rnd((uint32_t)ncpu));
                }
                near[i] = (ncm_cpu_near){"example.com/dev=d", sets[i]};
        }
        return n;
}

/*
 * On random machines, isolated CPUs, modes, options, hints, devices and pods, the allocation
 * near the devices (1) only takes CPUs the isolation lets the container have, as the hints
 * and the allocation without devices see them, and (2) succeeds exactly when the allocation
 * without devices does: locality orders, it never widens or narrows the candidates.
 */
static void test_cpu_near_isolation_property(void **state)
{
        static const char *const synth[] = {"core:4 pu:2", "package:2 core:4 pu:2",
                                            "package:2 numa:2 core:3 pu:2", "core:8 pu:1",
                                            "package:2 numa:2 core:2 pu:4"};
        static const char *const ann[] = {NULL, "prefer", "require"};
        ncm_cpuset *sets[2] = {ncm_cpuset_new(), ncm_cpuset_new()};
        ncm_autoptr(ncm_cpuset) reserved = tu_cpuset("0");
        ncm_autoptr(ncm_cpuset) iso = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) cand = ncm_cpuset_new();
        int allocated = 0, refused = 0;

        (void)state;
        for (unsigned long seed = 1; seed <= 300; seed++) {
                ncm_topo *t = NULL;
                ncm_cpu_policy *p = NULL, *q = NULL;
                ncm_cpu_state *s = ncm_cpu_state_new("static"), *sq = ncm_cpu_state_new("static");
                ncm_cpu_option opt = {"full-pcpus-only", "true"};
                ncm_cpu_policy_config cfg = {.policy = "static", .gates = NCM_CPU_GATES_DEFAULT};
                ncm_cpu_isolation mode;
                ncm_error err = NCM_ERROR_INIT;
                size_t nn = 0;
                const int *numa;

                rng = seed * 0x9e3779b97f4a7c15ull;
                assert_int_equal(ncm_topo_from_synthetic(synth[rnd(NCM_ELEMENTSOF(synth))], &t,
                                                         &err),
                                 0);
                numa = ncm_topo_numa_ids(t, &nn);
                ncm_cpuset_zero(iso);
                for (int cpu = 1; cpu < ncm_topo_num_cpus(t); cpu++)
                        if (rnd(2) == 0)
                                (void)ncm_cpuset_set(iso, cpu);
                mode = rnd(3) ? NCM_CPU_ISOLATION_EXCLUSIVE_ONLY : NCM_CPU_ISOLATION_EXCLUDE;
                if (rnd(3) == 0) {
                        cfg.options = &opt;
                        cfg.noptions = 1;
                }
                if (ncm_cpu_static_policy_new(t, 1, reserved, &cfg, &p, &err) < 0 ||
                    ncm_cpu_static_policy_new(t, 1, reserved, &cfg, &q, &err) < 0)
                        fail_msg("seed %lu: %s", seed, err.msg);
                assert_int_equal(ncm_cpu_policy_set_isolation(p, mode, iso, &err), 0);
                assert_int_equal(ncm_cpu_policy_set_isolation(q, mode, iso, &err), 0);
                assert_int_equal(ncm_cpu_policy_start(p, s, &err), 0);
                assert_int_equal(ncm_cpu_policy_start(q, sq, &err), 0);
                for (int step = 0; step < 20; step++) {
                        char uid[16];
                        int cpus = 1 + (int)rnd(4), r, rq;
                        ncm_cpu_near near[2];
                        size_t n_near = random_near(t, near, sets);
                        ncm_hint h = {0, true, true};
                        ncm_autoptr(ncm_pod) pod = NULL;
                        ncm_error eq = NCM_ERROR_INIT;

                        snprintf(uid, sizeof(uid), "p%d", step);
                        pod = pod_iso(uid, cpus, ann[rnd(3)]);
                        if (rnd(2))
                                h = (ncm_hint){(ncm_bitmask)1 << numa[rnd((uint32_t)nn)], false,
                                               true};
                        ncm_cpuset_andnot(cand, ncm_cpu_state_default(s), reserved);
                        (void)ncm_cpu_policy_isolation_restrict(p, pod, cpus, NULL, cand);
                        r = ncm_cpu_policy_allocate_near(p, s, pod, &pod->containers[0], &h, near,
                                                         n_near, &err);
                        rq = ncm_cpu_policy_allocate(q, sq, pod, &pod->containers[0], &h, &eq);
                        if ((r < 0) != (rq < 0))
                                fail_msg("seed %lu step %d: near %d (%s), without devices %d "
                                         "(%s)",
                                         seed, step, r, err.msg, rq, eq.msg);
                        if (r < 0) {
                                refused++;
                        } else {
                                const ncm_cpuset *got = ncm_cpu_state_get(s, uid, "app");
                                assert_non_null(got);
                                assert_int_equal(ncm_cpuset_weight(got), cpus);
                                if (!ncm_cpuset_is_subset(got, cand))
                                        fail_msg("seed %lu step %d: took a CPU its isolation "
                                                 "keeps from it",
                                                 seed, step);
                                allocated++;
                        }
                        /* both sides give CPUs back alike, so the states stay comparable */
                        if (rnd(3) == 0) {
                                ncm_cpu_policy_remove_container(p, s, uid, "app", &err);
                                ncm_cpu_policy_remove_container(q, sq, uid, "app", &eq);
                        }
                        /* the plain side follows the near side's choice */
                        assert_int_equal(ncm_cpu_state_assign(sq, s, &eq), 0);
                }
                ncm_cpu_state_free(s);
                ncm_cpu_state_free(sq);
                ncm_cpu_policy_free(p);
                ncm_cpu_policy_free(q);
                ncm_topo_free(t);
        }
        ncm_cpuset_free(sets[0]);
        ncm_cpuset_free(sets[1]);
        /* both outcomes were exercised */
        assert_true(allocated > 1000);
        assert_true(refused > 100);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test_setup_teardown(test_cpu_near_prefers_local_cpus, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_cpu_near_then_uncore_then_hint, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_cpu_near_outside_the_hint, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_cpu_near_spill, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_cpu_near_whole_cores, setup_full,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_cpu_near_none_and_zero, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_cpu_near_sets, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_cpu_near_isolated_pool_near_the_device,
                                                        setup, teardown),
                        cmocka_unit_test_setup_teardown(test_cpu_near_device_on_isolated_cpus,
                                                        setup, teardown),
                        cmocka_unit_test_setup_teardown(
                                        test_cpu_near_device_on_isolated_cpus_exclude, setup,
                                        teardown),
                        cmocka_unit_test_setup_teardown(test_cpu_near_device_half_isolated, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(
                                        test_cpu_near_device_outside_the_isolated_pool, setup,
                                        teardown),
                        cmocka_unit_test_setup_teardown(test_cpu_near_isolated_spill, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_cpu_near_isolated_whole_cores,
                                                        setup_full, teardown),
                        cmocka_unit_test(test_cpu_near_isolation_property),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
