/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scenarios: the reader (JSON or YAML, no files), then a bounded simulation through the node
 * API, checking after every step what must always hold: the CPU state still passes the
 * kubelet's start-up validation (no CPU lost, none given twice), a refused admission or resize
 * changed nothing, and the simulator's own run (JSON and human output, explanations) completes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/node-resize.h>
#include <nodecm/node.h>
#include <nodecm/sim.h>
#include "sim/sim-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_STEPS 24
#define MAX_CPUS 256
#define MAX_NUMA 8

/*
 * The kubelet's allocator compares free counts with the machine's *average* CPUs per core and
 * socket and then takes whole elements as the topology lists them, so on an irregular machine
 * it can hand out a reserved CPU (nodecm does the same, bug for bug). The invariant below holds
 * on regular machines only.
 */
static bool regular(const ncm_topo *t)
{
        size_t n = 0;
        const ncm_cpu_info *c = ncm_topo_cpus(t, &n);
        int per_core = ncm_topo_cpus_per_core(t), per_socket = ncm_topo_cpus_per_socket(t);

        for (size_t i = 0; i < n; i++) {
                size_t k = 0;
                const ncm_cpuset *s = ncm_topo_socket_cpus(t, c[i].socket);
                (void)ncm_topo_core_cpus(t, c[i].core, &k);
                if ((int)k != per_core || !s || ncm_cpuset_weight(s) != per_socket)
                        return false;
        }
        return true;
}

static void check_state(const ncm_node *n)
{
        const ncm_cpu_policy *p = ncm_node_cpu_policy(n);
        ncm_cpu_state *copy;
        ncm_autoptr(ncm_cpuset) all = ncm_cpuset_new();

        if (strcmp(ncm_cpu_policy_name(p), "static") != 0 || !all || !regular(ncm_node_topo(n)))
                return;
        /* strict-cpu-reservation lets exclusive CPUs empty the shared pool, which validateState
         * then refuses, as in the kubelet (kubernetes#141196) */
        if (ncm_cpu_policy_options(p)->strict_cpu_reservation &&
            ncm_cpuset_is_empty(ncm_cpu_state_default(ncm_node_cpu_state(n))))
                return;
        copy = ncm_cpu_state_dup(ncm_node_cpu_state(n));
        if (!copy)
                return;
        ncm_topo_all_cpus(ncm_node_topo(n), all);
        if (ncm_cpu_state_validate(copy, all, ncm_cpu_policy_reserved(p),
                                   ncm_cpu_policy_options(p)->strict_cpu_reservation, NULL) != 0)
                abort();
        ncm_cpu_state_free(copy);
}

typedef struct fuzz_run {
        ncm_node *n;
        ncm_node_config *cfgs[MAX_STEPS]; /* the restarts', which the node borrows */
        size_t n_cfgs;
} fuzz_run;

/* Each step, as the scenario reader hands it over, checked against the node as it ran. */
static int fuzz_step(ncm__step *st, size_t i, void *data, ncm_error *err)
{
        fuzz_run *run = data;
        ncm_node *n = run->n;
        ncm_cpu_state *before = ncm_cpu_state_dup(ncm_node_cpu_state(n));
        ncm_node_admission *a = NULL;
        const ncm_node_config *cfg;
        int r = 0;

        (void)err;
        if (!before)
                return 1;
        switch (st->kind) {
        case NCM__STEP_ADMIT:
                r = ncm_node_admit(n, st->pod, NCM_NODE_EXPLAIN, &a, NULL);
                if (r == 0 && !a->admitted && !ncm_cpu_state_equal(before, ncm_node_cpu_state(n)))
                        abort();
                ncm_node_admission_free(a);
                break;
        case NCM__STEP_REMOVE:
                r = ncm_node_remove_container(n, st->pod_uid, st->container, NULL, NULL);
                break;
        case NCM__STEP_REMOVE_POD:
                r = ncm_node_remove_pod(n, st->pod_uid, NULL, NULL);
                break;
        case NCM__STEP_RESIZE:
                /* refused, or not a resize at all (no such pod, a change the API
                 * server would refuse): nothing changed */
                r = ncm_node_resize(n, st->pod, NCM_NODE_EXPLAIN, &a, NULL);
                if ((r < 0 || !a->admitted) && !ncm_cpu_state_equal(before, ncm_node_cpu_state(n)))
                        abort();
                ncm_node_admission_free(a);
                if (r != -ENOMEM)
                        r = 0;
                break;
        case NCM__STEP_RESTART:
                cfg = st->cfg ? run->cfgs[run->n_cfgs++] = NCM_TAKE_PTR(st->cfg) : NULL;
                r = ncm_node_restart(n, cfg, NULL);
                /* a refused restart leaves the node as it was */
                if (r < 0 && !ncm_cpu_state_equal(before, ncm_node_cpu_state(n)))
                        abort();
                r = 0;
                break;
        }
        ncm_cpu_state_free(before);
        if (r < 0)
                return 1;
        check_state(n);
        return i + 1 >= MAX_STEPS ? 1 : 0;
}

static void run_steps(const ncm_scenario *s)
{
        ncm_node_options o = {0};
        fuzz_run run = {0};

        o.devices = s->devices_text;
        o.devices_len = s->devices_len;
        if (s->state_text) {
                o.cpu_checkpoint = s->state_text;
                o.cpu_checkpoint_len = s->state_len;
                o.cpu_checkpoint_name = "node.state";
        }
        if (ncm_node_new(s->topo, s->cfg, &o, &run.n, NULL) < 0)
                return;
        check_state(run.n);
        (void)ncm__scenario_each_step(s, fuzz_step, &run, NULL);
        ncm_node_free(run.n);
        for (size_t i = 0; i < run.n_cfgs; i++)
                ncm_node_config_free(run.cfgs[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ncm_scenario *s = NULL;
        const ncm_topo *t;
        size_t nn = 0;

        if (ncm_scenario_parse((const char *)data, size, "fuzz", NULL, NCM_SCENARIO_NO_FILES, &s,
                               NULL) < 0)
                return 0;
        t = ncm_scenario_topo(s);
        (void)ncm_topo_numa_ids(t, &nn);
        if (ncm_topo_num_cpus(t) <= MAX_CPUS && nn <= MAX_NUMA) {
                ncm_simulate_options o = {.json = true, .explain = true, .max_steps = MAX_STEPS};
                ncm_buf out = NCM_BUF_INIT;

                run_steps(s);
                (void)ncm_simulate(s, &o, &out, NULL, NULL);
                ncm_buf_reset(&out);
                o.json = false;
                (void)ncm_simulate(s, &o, &out, NULL, NULL);
                ncm_buf_done(&out);
        }
        ncm_scenario_free(s);
        return 0;
}
