/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The registry's sums (node_sums) against the walk over every pod they stand for: after each
 * step of random admissions, removals (of pods and of containers), resizes and refusals, the
 * QoS tiers' requests and the fit admission's "used" read from the sums are the walk's, for
 * no pod left out, a held pod left out and an unknown one; sums that pass INT64_MAX are capped
 * as the walk's saturating additions are. The topology manager forgets a removed pod's hints
 * (found by its own index). Seeded: a failure names its seed and step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/node-config.h>
#include <nodecm/node-resize.h>
#include <nodecm/node.h>
#include <nodecm/topology.h>
#include <nodecm/topologymanager.h>
#include "node/node-internal.h"
#include "testutil.h"

#define KUBELET                                                                                    \
        "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", \"maxPods\": 500, "     \
        "\"featureGates\": {\"InPlacePodVerticalScalingExclusiveCPUs\": true}, "                   \
        "\"topologyManagerPolicy\": \"best-effort\"}"

typedef struct fx {
        ncm_topo *t;
        ncm_node_config *cfg;
        ncm_resource_list capacity;
        ncm_node *n;
} fx;

static void fx_new(fx *f, const char *cap)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_options o = {0};

        *f = (fx){0};
        if (ncm_topo_from_synthetic("package:2 numa:1 core:8 pu:2", &f->t, &err) < 0 ||
            ncm_node_config_parse(KUBELET, strlen(KUBELET), "kubelet", "", &f->cfg, &err) < 0 ||
            ncm_cgroup_parse_capacity(cap, &f->capacity, &err) < 0)
                fail_msg("%s", err.msg);
        o.capacity = &f->capacity;
        if (ncm_node_new(f->t, f->cfg, &o, &f->n, &err) < 0)
                fail_msg("node: %s", err.msg);
}

static void fx_done(fx *f)
{
        ncm_node_free(f->n);
        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->t);
        ncm_resource_list_done(&f->capacity);
}

/* A pod of 1 to 3 containers, each Guaranteed (whole CPUs), Burstable or BestEffort by KIND
 * (0, 1, 2); MEM: each container's memory; CPU its CPUs (Guaranteed) or milli-CPUs. */
static ncm_pod *make_pod(const char *uid, int kind, int n, int cpu, const char *mem)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p = NULL;

        ncm_buf_printf(&b,
                       "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": "
                       "{\"containers\": [",
                       uid, uid);
        for (int i = 0; i < n; i++) {
                const char *sep = i ? ", " : "";
                if (kind == 0)
                        ncm_buf_printf(&b,
                                       "%s{\"name\": \"c%d\", \"resources\": {\"limits\": "
                                       "{\"cpu\": \"%d\", \"memory\": \"%s\"}}}",
                                       sep, i, cpu, mem);
                else if (kind == 1)
                        ncm_buf_printf(&b,
                                       "%s{\"name\": \"c%d\", \"resources\": {\"requests\": "
                                       "{\"cpu\": \"%dm\", \"memory\": \"%s\", "
                                       "\"ephemeral-storage\": \"1Gi\"}}}",
                                       sep, i, cpu, mem);
                else
                        ncm_buf_printf(&b, "%s{\"name\": \"c%d\"}", sep, i);
        }
        ncm_buf_printf(&b, "]}}");
        if (ncm_pod_parse(b.data, b.len, NULL, &p, &err) < 0)
                fail_msg("%s: %s", b.data, err.msg);
        ncm_buf_done(&b);
        return p;
}

/* The sums read as the walk reads, for every way a reader leaves a pod out; whether the walk's
 * sums were capped. */
static bool check_sums(fx *f, const char *held, unsigned seed, int step)
{
        bool capped = false;

        static const char *const others[] = {NULL, "nobody"};
        ncm_error err = NCM_ERROR_INIT;

        for (int i = 0; i < 3; i++) {
                const char *except = i < 2 ? others[i] : held;
                ncm_cgroup_qos_usage a, b;
                if (i == 2 && !held)
                        continue;
                if (ncm__node_usage_of(f->n, except, &a, &err) < 0 ||
                    ncm__node_usage_walk(f->n, except, &b, &err) < 0)
                        fail_msg("seed %u step %d: usage: %s", seed, step, err.msg);
                capped |= b.guaranteed_memory == INT64_MAX || b.burstable_memory == INT64_MAX;
                if (memcmp(&a, &b, sizeof(a)) != 0)
                        fail_msg("seed %u step %d, %s left out: sums %lld/%lld/%lld, walk "
                                 "%lld/%lld/%lld",
                                 seed, step, except ? except : "none",
                                 (long long)a.burstable_cpu_milli, (long long)a.guaranteed_memory,
                                 (long long)a.burstable_memory, (long long)b.burstable_cpu_milli,
                                 (long long)b.guaranteed_memory, (long long)b.burstable_memory);
                if (!ncm__node_fit_sums_agree(f->n, except ? except : "new-pod"))
                        fail_msg("seed %u step %d: the fit sums differ from the walk (%s left "
                                 "out)",
                                 seed, step, except ? except : "none");
        }
        assert_int_equal(f->n->sums.n_unsummed, 0);
        return capped;
}

/* How many steps ended with a capped sum. */
static int run(unsigned seed, const char *cap, const char *const *mems, size_t n_mems)
{
        fx f;
        int capped = 0;
        ncm_error err = NCM_ERROR_INIT;
        int next = 0;

        fx_new(&f, cap);
        srand(seed);
        for (int step = 0; step < 400; step++) {
                size_t held = ncm_node_num_pods(f.n);
                int op = rand() % 10;
                char uid[32];
                const char *some = held ? ncm_node_pod_at(f.n, (size_t)rand() % held)->uid : NULL;
                if (op < 5 || !some) {
                        int kind = rand() % 3, nc = 1 + rand() % 3;
                        int cpu = kind == 0 ? 1 + rand() % 2 : 50 + rand() % 900;
                        ncm_node_admission *a = NULL;
                        ncm_pod *p;
                        /* now and then a pod the node holds again (a re-admission) */
                        if (some && rand() % 8 == 0)
                                snprintf(uid, sizeof(uid), "%s", some);
                        else
                                snprintf(uid, sizeof(uid), "pod-%04d", next++);
                        p = make_pod(uid, kind, nc, cpu, mems[(size_t)rand() % n_mems]);
                        if (ncm_node_admit(f.n, p, 0, &a, &err) < 0)
                                fail_msg("seed %u step %d: admit: %s", seed, step, err.msg);
                        ncm_node_admission_free(a);
                        ncm_pod_free(p);
                } else if (op < 8) {
                        snprintf(uid, sizeof(uid), "%s", some);
                        if (ncm_node_remove_pod(f.n, uid, NULL, &err) < 0)
                                fail_msg("seed %u step %d: remove: %s", seed, step, err.msg);
                        /* the topology manager kept none of its hints */
                        for (int c = 0; c < 3; c++) {
                                char name[8];
                                snprintf(name, sizeof(name), "c%d", c);
                                assert_true(ncm_tm_get_affinity(f.n->tm, uid, name).any);
                        }
                } else if (op < 9) {
                        snprintf(uid, sizeof(uid), "%s", some);
                        if (ncm_node_remove_container(f.n, uid, "c0", NULL, &err) < 0)
                                fail_msg("seed %u step %d: remove c0: %s", seed, step, err.msg);
                } else {
                        /* a resize to a pod of the same shape with other amounts (refused or
                         * not: the sums follow what the registry holds) */
                        const ncm_pod *old = ncm_node_pod_at(f.n, (size_t)rand() % held);
                        int kind = old->qos == NCM_QOS_GUARANTEED  ? 0
                                   : old->qos == NCM_QOS_BURSTABLE ? 1
                                                                   : 2;
                        ncm_node_admission *a = NULL;
                        ncm_pod *p;
                        snprintf(uid, sizeof(uid), "%s", old->uid);
                        p = make_pod(uid, kind, (int)old->n_containers,
                                     kind == 0 ? 1 + rand() % 2 : 50 + rand() % 900,
                                     mems[(size_t)rand() % n_mems]);
                        (void)ncm_node_resize(f.n, p, 0, &a, NULL);
                        ncm_node_admission_free(a);
                        ncm_pod_free(p);
                }
                held = ncm_node_num_pods(f.n);
                capped += check_sums(&f,
                                     held ? ncm_node_pod_at(f.n, (size_t)rand() % held)->uid : NULL,
                                     seed, step);
        }
        fx_done(&f);
        return capped;
}

static void test_node_sums_random(void **state)
{
        static const char *const mems[] = {"64Mi", "128Mi", "1Gi", "300M"};
        (void)state;
        for (unsigned seed = 1; seed <= 12; seed++)
                run(seed, "cpu=16,memory=64Gi,ephemeral-storage=100Gi", mems, 4);
}

/* Requests whose sums pass INT64_MAX: the sums are capped where the walk saturates. */
static void test_node_sums_saturate(void **state)
{
        static const char *const mems[] = {"2Ei", "1Ei", "1Gi"};
        int capped = 0;
        (void)state;
        for (unsigned seed = 100; seed < 104; seed++)
                capped += run(seed, "cpu=16", mems, 3); /* memory unknown: not refused */
        assert_true(capped > 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_node_sums_random),
                        cmocka_unit_test(test_node_sums_saturate),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
