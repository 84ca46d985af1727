/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPUs near the container's devices (ncm_cpu_policy_allocate_near, nodecm's deviceLocalCPUs:
 * prefer) on issue 24's machine: two sockets of 8 cores x 2 threads (CPU c and c + 16 are a
 * core's threads), one NUMA node each, two L3 caches each (0-3, 4-7, 8-11, 12-15 and their
 * siblings), with a NIC whose local CPUs are socket 1's second L3. Without devices every
 * allocation is the kubelet's.
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

static ncm_pod *pod(const char *uid, int cpus)
{
        char text[512];
        ncm_pod *p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        snprintf(text, sizeof(text),
                 "{\"metadata\": {\"uid\": \"%s\"}, \"spec\": {\"containers\": [{\"name\": "
                 "\"app\", \"resources\": {\"limits\": {\"cpu\": \"%d\", \"memory\": \"1G\"}}}]}}",
                 uid, cpus);
        if (ncm_pod_parse(text, strlen(text), NULL, &p, &err) < 0)
                fail_msg("%s", err.msg);
        return p;
}

/* Allocate CPUS for a new pod UID near LOCAL (NULL: no device) with hint NUMA (-1: none);
 * the CPUs it got must be WANT. */
static void expect(fixture *f, const char *uid, int cpus, int numa, const char *local,
                   const char *want)
{
        ncm_autoptr(ncm_pod) p = pod(uid, cpus);
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
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
