/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/cri's UpdateContainerResources machine (ncm_cri_sync), driven by hand: every action it
 * hands out is checked and every reply scripted, with the clock given, as nodecmd's loop drives
 * it against a runtime (tests/integration/test-cri-proxy.py, test-cri-race.py). A run (list,
 * the owner's decision, status, the updates that put a cpuset back), the intents (one call per
 * container at a time, the newest intent last), the failures told once or as a warning, a run
 * wanted during a run, the orphans' grace as a deadline.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cri.h>
#include "testutil.h"

#define GRACE 5000

static ncm_cri_sync *machine(void)
{
        ncm_cri_sync_options o = {.orphan_grace_ns = GRACE, .max_in_flight = 4};
        ncm_cri_sync *s = NULL;

        assert_int_equal(ncm_cri_sync_new(&o, 0, &s), 0);
        return s;
}

/* The next action, which must be WHAT. */
static ncm_cri_sync_action next(ncm_cri_sync *s, uint64_t now, int what)
{
        ncm_cri_sync_action a;

        assert_int_equal(ncm_cri_sync_next(s, now, &a), what ? 1 : 0);
        assert_int_equal(a.what, what);
        return a;
}

static uint64_t sent(ncm_cri_sync *s, uint64_t now, ncm_cri_method m, const char *id,
                     const char *cpus)
{
        ncm_cri_sync_action a = next(s, now, NCM_CRI_SYNC_SEND);

        assert_int_equal(a.req.method, m);
        if (id)
                assert_string_equal(a.req.id, id);
        if (cpus)
                assert_string_equal(a.req.cpuset_cpus, cpus);
        assert_int_equal(a.timeout_ms, 10000);
        return a.token;
}

static void noted(ncm_cri_sync *s, int kind, const char *id)
{
        ncm_cri_sync_action a = next(s, 0, NCM_CRI_SYNC_NOTE);

        assert_int_equal(a.note, kind);
        if (id)
                assert_string_equal(a.id, id);
}

static void reply(ncm_cri_sync *s, uint64_t token, ncm_rpc_code code)
{
        ncm_cri_reply r = {.code = code, .message = (char *)"scripted"};
        ncm_cri_sync_reply(s, token, &r, 0);
}

/* ContainerStatus of a running container on CPUS. */
static void status(ncm_cri_sync *s, uint64_t token, const char *id, const char *cpus)
{
        ncm_cri_container c = {.id = (char *)id, .state = NCM_CRI_CONTAINER_RUNNING};
        ncm_cri_reply r = {.code = NCM_RPC_OK,
                           .message = (char *)"",
                           .containers = &c,
                           .n_containers = 1};

        c.resources.cpuset_cpus = (char *)cpus;
        ncm_cri_sync_reply(s, token, &r, 0);
}

/* A ListContainers answered with N running containers c0, c1, ... */
static void listed(ncm_cri_sync *s, uint64_t token, size_t n)
{
        ncm_cri_container *v = calloc(n + 1, sizeof(*v));
        ncm_cri_reply r = {.code = NCM_RPC_OK, .containers = v, .n_containers = n};

        for (size_t i = 0; i < n; i++) {
                v[i].id = strdup(i ? "c1" : "c0");
                v[i].state = NCM_CRI_CONTAINER_RUNNING;
        }
        ncm_cri_sync_reply(s, token, &r, 0);
        /* what the machine did not take (a stopped one takes nothing) */
        ncm_cri_containers_free(r.containers, r.n_containers);
}

static ncm_cri_update *updates(size_t n, const char *const *ids, const char *const *cpus)
{
        ncm_cri_update *v = calloc(n + 1, sizeof(*v));

        for (size_t i = 0; i < n; i++) {
                v[i].id = strdup(ids[i]);
                v[i].cpuset_cpus = strdup(cpus[i]);
        }
        return v;
}

static void decide(ncm_cri_sync *s, uint64_t now, bool release, size_t n_listed, size_t n,
                   const char *const *ids, const char *const *cpus)
{
        ncm_cri_sync_action a = next(s, now, NCM_CRI_SYNC_DECIDE);

        assert_int_equal(a.n_listed, n_listed);
        assert_int_equal(a.release_orphans, release);
        ncm_cri_containers_free(a.listed, a.n_listed);
        ncm_cri_sync_decided(s, 0, updates(n, ids, cpus), n, now);
}

/* A run: listed, decided, the status of each, the one off put back. */
static void test_cri_sync_run(void **state)
{
        ncm_cri_sync *s = machine();
        const char *ids[] = {"c0", "c1"}, *cpus[] = {"1", "0"};
        uint64_t list, st0, st1, up;

        (void)state;
        /* a new machine wants a run: what a previous process left */
        list = sent(s, 0, NCM_CRI_LIST_CONTAINERS, NULL, NULL);
        next(s, 0, 0);
        listed(s, list, 2);
        /* before the orphans' grace: they are not released yet, and a deadline says when */
        decide(s, 0, false, 2, 2, ids, cpus);
        assert_int_equal(ncm_cri_sync_deadline(s), GRACE);
        st0 = sent(s, 0, NCM_CRI_CONTAINER_STATUS, "c0", NULL);
        st1 = sent(s, 0, NCM_CRI_CONTAINER_STATUS, "c1", NULL);
        next(s, 0, 0);
        /* c0 is off (changed behind nodecm's back): put back; c1 is right */
        status(s, st0, "c0", "0-3");
        noted(s, NCM_CRI_SYNC_NOTE_PUT_BACK, "c0");
        up = sent(s, 0, NCM_CRI_UPDATE_CONTAINER_RESOURCES, "c0", "1");
        status(s, st1, "c1", "0");
        next(s, 0, 0);
        reply(s, up, NCM_RPC_OK);
        next(s, 0, 0);
        assert_int_equal(ncm_cri_sync_get_stats(s)->runs, 1);
        assert_int_equal(ncm_cri_sync_get_stats(s)->updates, 1);
        assert_int_equal(ncm_cri_sync_get_stats(s)->last_updates, 1);
        /* the grace is over: a run that may release them */
        ncm_cri_sync_tick(s, GRACE);
        list = sent(s, GRACE, NCM_CRI_LIST_CONTAINERS, NULL, NULL);
        listed(s, list, 0);
        decide(s, GRACE, true, 0, 0, NULL, NULL);
        next(s, GRACE, 0);
        assert_int_equal(ncm_cri_sync_deadline(s), UINT64_MAX);
        assert_int_equal(ncm_cri_sync_get_stats(s)->runs, 2);
        ncm_cri_sync_free(s);
}

/* Intents: sent at once, one call per container at a time, the newest last. */
static void test_cri_sync_intents(void **state)
{
        ncm_cri_sync *s = machine();
        const char *ids[] = {"a", "b"}, *first[] = {"2", "0"}, *newer[] = {"3"}, *newest[] = {"4"};
        uint64_t list, ta, tb, ta2;

        (void)state;
        list = sent(s, 0, NCM_CRI_LIST_CONTAINERS, NULL, NULL);
        assert_int_equal(ncm_cri_sync_intents(s, updates(2, ids, first), 2), 0);
        tb = sent(s, 0, NCM_CRI_UPDATE_CONTAINER_RESOURCES, "b", "0");
        ta = sent(s, 0, NCM_CRI_UPDATE_CONTAINER_RESOURCES, "a", "2");
        /* a's next intents wait for its call; the newest replaces the one that waits */
        assert_int_equal(ncm_cri_sync_intents(s, updates(1, ids, newer), 1), 0);
        assert_int_equal(ncm_cri_sync_intents(s, updates(1, ids, newest), 1), 0);
        next(s, 0, 0);
        reply(s, tb, NCM_RPC_OK);
        /* a run decided meanwhile leaves a to its intent, and asks about b */
        listed(s, list, 0);
        decide(s, 0, false, 0, 2, ids, first);
        sent(s, 0, NCM_CRI_CONTAINER_STATUS, "b", NULL);
        next(s, 0, 0);
        reply(s, ta, NCM_RPC_OK);
        ta2 = sent(s, 0, NCM_CRI_UPDATE_CONTAINER_RESOURCES, "a", "4");
        reply(s, ta2, NCM_RPC_OK);
        assert_int_equal(ncm_cri_sync_get_stats(s)->intent_updates, 3);
        ncm_cri_sync_free(s);
}

/* A failed update is a debug line once, a warning the second time in a row; NOT_FOUND is a
 * removal that raced it; a failed list ends the run. */
static void test_cri_sync_failures(void **state)
{
        ncm_cri_sync *s = machine();
        const char *ids[] = {"a", "gone"}, *cpus[] = {"1", "1"};
        uint64_t list, t;

        (void)state;
        list = sent(s, 0, NCM_CRI_LIST_CONTAINERS, NULL, NULL);
        reply(s, list, NCM_RPC_UNAVAILABLE);
        noted(s, NCM_CRI_SYNC_NOTE_LIST_FAILED, NULL);
        assert_int_equal(ncm_cri_sync_get_stats(s)->failures, 1);
        next(s, 0, 0);

        assert_int_equal(ncm_cri_sync_intents(s, updates(1, ids, cpus), 1), 0);
        t = sent(s, 0, NCM_CRI_UPDATE_CONTAINER_RESOURCES, "a", "1");
        reply(s, t, NCM_RPC_UNKNOWN);
        noted(s, NCM_CRI_SYNC_NOTE_FAILED_ONCE, "a");
        assert_int_equal(ncm_cri_sync_intents(s, updates(1, ids, cpus), 1), 0);
        t = sent(s, 0, NCM_CRI_UPDATE_CONTAINER_RESOURCES, "a", "1");
        reply(s, t, NCM_RPC_UNKNOWN);
        noted(s, NCM_CRI_SYNC_NOTE_FAILED, "a");
        assert_int_equal(ncm_cri_sync_intents(s, updates(1, ids + 1, cpus), 1), 0);
        t = sent(s, 0, NCM_CRI_UPDATE_CONTAINER_RESOURCES, "gone", "1");
        reply(s, t, NCM_RPC_NOT_FOUND);
        noted(s, NCM_CRI_SYNC_NOTE_GONE, "gone");
        next(s, 0, 0);
        /* a reply nobody waits for (a token never given) changes nothing */
        reply(s, 999, NCM_RPC_OK);
        next(s, 0, 0);
        ncm_cri_sync_free(s);
}

/* A run wanted during a run follows it; nothing new starts once stopped. */
static void test_cri_sync_again_and_stop(void **state)
{
        ncm_cri_sync *s = machine();
        uint64_t list;

        (void)state;
        list = sent(s, 0, NCM_CRI_LIST_CONTAINERS, NULL, NULL);
        ncm_cri_sync_want(s);
        next(s, 0, 0);
        listed(s, list, 1);
        decide(s, 0, false, 1, 0, NULL, NULL);
        list = sent(s, 0, NCM_CRI_LIST_CONTAINERS, NULL, NULL);
        ncm_cri_sync_stop(s);
        listed(s, list, 1);
        next(s, 0, 0);
        ncm_cri_sync_want(s);
        {
                const char *ids[] = {"a"}, *cpus[] = {"1"};
                assert_int_equal(ncm_cri_sync_intents(s, updates(1, ids, cpus), 1), 0);
        }
        next(s, 0, 0);
        assert_int_equal(ncm_cri_sync_deadline(s), UINT64_MAX);
        ncm_cri_sync_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cri_sync_run),
                        cmocka_unit_test(test_cri_sync_intents),
                        cmocka_unit_test(test_cri_sync_failures),
                        cmocka_unit_test(test_cri_sync_again_and_stop),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
