/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whole-scenario throughput: a 384-CPU machine with 8 NUMA nodes (2 sockets x 4 NUMA nodes x
 * 24 cores x 2 threads, CPUs 0-1 reserved) admits 1000 pods and removes them again, keeping
 * about 100 pods running: a sliding window where pod i is admitted and pod i-100 removed.
 * Pods cycle through Guaranteed 1, 2, 4 and 8 CPUs, a two-container pod with an init
 * container, and a Burstable pod. Each run builds the node from scratch (policies, index,
 * topology manager) and uses the in-memory checkpoint. Measured for each topology manager
 * policy, container scope (and pod scope for single-numa-node), with 16 GPUs for one case,
 * through the node API; then the whole simulator with each output mode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/node.h>
#include <nodecm/sim.h>
#include "benchutil.h"

#define NPODS 1000
#define WINDOW 100

static ncm_topo *topo;
static ncm_pod *pods[NPODS];
static ncm_pod *gpu_pods[NPODS]; /* the same, every 8th asking for one GPU too */
static char devices[2048];       /* 16 GPUs, 2 per NUMA node */

typedef struct run_case {
        ncm_node_config *cfg;
        size_t admitted, rejected;
        unsigned flags;
        bool gpus;
} run_case;

static ncm_pod *make_pod(size_t i, bool gpu)
{
        char text[1024];
        ncm_pod *p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        static const int sizes[] = {1, 2, 4, 8};

        switch (i % 6) {
        case 4:
                snprintf(text, sizeof(text),
                         "{\"metadata\": {\"uid\": \"pod-%zu\", \"name\": \"p%zu\"}, \"spec\": "
                         "{\"initContainers\": [{\"name\": \"init\", \"resources\": {\"limits\": "
                         "{\"cpu\": \"2\", \"memory\": \"1Gi\"}}}], \"containers\": [{\"name\": "
                         "\"app\", \"resources\": {\"limits\": {\"cpu\": \"2\", \"memory\": "
                         "\"1Gi\"}}}, {\"name\": \"side\", \"resources\": {\"limits\": {\"cpu\": "
                         "\"1\", \"memory\": \"1Gi\"}}}]}}",
                         i, i);
                break;
        case 5:
                snprintf(text, sizeof(text),
                         "{\"metadata\": {\"uid\": \"pod-%zu\", \"name\": \"p%zu\"}, \"spec\": "
                         "{\"containers\": [{\"name\": \"app\", \"resources\": {\"requests\": "
                         "{\"cpu\": \"500m\", \"memory\": \"1Gi\"}}}]}}",
                         i, i);
                break;
        default:
                snprintf(text, sizeof(text),
                         "{\"metadata\": {\"uid\": \"pod-%zu\", \"name\": \"p%zu\"}, \"spec\": "
                         "{\"containers\": [{\"name\": \"app\", \"resources\": {\"limits\": "
                         "{\"cpu\": \"%d\", \"memory\": \"1Gi\"%s}}}]}}",
                         i, i, sizes[i % 6], gpu && i % 8 == 0 ? ", \"example.com/gpu\": 1" : "");
        }
        if (ncm_pod_parse(text, strlen(text), NULL, &p, &err) < 0) {
                fprintf(stderr, "bench-simulate: %s\n", err.msg);
                exit(1);
        }
        return p;
}

static void run(void *arg)
{
        run_case *c = arg;
        ncm_node *n = NULL;
        ncm_error err = NCM_ERROR_INIT;

        ncm_node_options o = {0};
        ncm_pod **set = c->gpus ? gpu_pods : pods;

        if (c->gpus) {
                o.devices = devices;
                o.devices_len = strlen(devices);
        }
        if (ncm_node_new(topo, c->cfg, &o, &n, &err) < 0) {
                fprintf(stderr, "bench-simulate: %s\n", err.msg);
                exit(1);
        }
        c->admitted = c->rejected = 0;
        for (size_t i = 0; i < NPODS + WINDOW; i++) {
                if (i < NPODS) {
                        ncm_node_admission *a = NULL;
                        if (ncm_node_admit(n, set[i], c->flags, &a, &err) < 0) {
                                fprintf(stderr, "bench-simulate: %s\n", err.msg);
                                exit(1);
                        }
                        if (a->admitted)
                                c->admitted++;
                        else
                                c->rejected++;
                        ncm_node_admission_free(a);
                }
                if (i >= WINDOW && ncm_node_remove_pod(n, set[i - WINDOW]->uid, NULL, &err) < 0) {
                        fprintf(stderr, "bench-simulate: %s\n", err.msg);
                        exit(1);
                }
        }
        ncm_node_free(n);
}

static ncm_node_config *config(const char *policy, const char *scope)
{
        char text[512];
        ncm_node_config *c = NULL;
        ncm_error err = NCM_ERROR_INIT;

        snprintf(text, sizeof(text),
                 "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0-1\", "
                 "\"topologyManagerPolicy\": \"%s\", \"topologyManagerScope\": \"%s\"}",
                 policy, scope);
        if (ncm_node_config_parse(text, strlen(text), NULL, "", &c, &err) < 0) {
                fprintf(stderr, "bench-simulate: %s\n", err.msg);
                exit(1);
        }
        return c;
}

/* The whole simulator on a scenario text (parsing included), JSON output. */
typedef struct sim_case {
        ncm_scenario *s;
        ncm_simulate_options o;
} sim_case;

static void run_sim(void *arg)
{
        sim_case *c = arg;
        ncm_buf out = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_simulate(c->s, &c->o, &out, NULL, &err) < 0) {
                fprintf(stderr, "bench-simulate: %s\n", err.msg);
                exit(1);
        }
        ncm_buf_done(&out);
}

static ncm_scenario *scenario(const char *policy)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_scenario *s = NULL;
        ncm_error err = NCM_ERROR_INIT;

        ncm_buf_printf(&b,
                       "{\"node\": {\"topology\": {\"synthetic\": \"package:2 numa:4 l3:1 core:24 "
                       "pu:2\"}, \"kubelet\": {\"cpuManagerPolicy\": \"static\", "
                       "\"reservedSystemCPUs\": \"0-1\", \"topologyManagerPolicy\": \"%s\"}}, "
                       "\"steps\": [",
                       policy);
        for (size_t i = 0; i < NPODS + WINDOW; i++) {
                if (i < NPODS)
                        ncm_buf_printf(&b,
                                       "%s{\"admit\": {\"metadata\": {\"uid\": \"pod-%zu\"}, "
                                       "\"spec\": {\"containers\": [{\"name\": \"app\", "
                                       "\"resources\": {\"limits\": {\"cpu\": \"%d\", "
                                       "\"memory\": \"1Gi\"}}}]}}}",
                                       i ? ", " : "", i, 1 << (i % 4));
                if (i >= WINDOW)
                        ncm_buf_printf(&b, ", {\"removePod\": \"pod-%zu\"}", i - WINDOW);
        }
        ncm_buf_puts(&b, "]}");
        if (ncm_scenario_parse(b.data, b.len, "bench", NULL, NCM_SCENARIO_NO_FILES, &s, &err) < 0) {
                fprintf(stderr, "bench-simulate: %s\n", err.msg);
                exit(1);
        }
        ncm_buf_done(&b);
        return s;
}

int main(void)
{
        static const struct {
                const char *policy, *scope;
        } cases[] = {
                        {"none", "container"},       {"best-effort", "container"},
                        {"restricted", "container"}, {"single-numa-node", "container"},
                        {"single-numa-node", "pod"},
        };
        ncm_error err = NCM_ERROR_INIT;
        char b1[32], b2[32];

        if (ncm_topo_from_synthetic("package:2 numa:4 l3:1 core:24 pu:2", &topo, &err) < 0) {
                fprintf(stderr, "bench-simulate: %s\n", err.msg);
                return 1;
        }
        for (size_t i = 0; i < NPODS; i++) {
                pods[i] = make_pod(i, false);
                gpu_pods[i] = make_pod(i, true);
        }
        {
                size_t o = (size_t)snprintf(devices, sizeof(devices), "{\"example.com/gpu\": [");
                for (int g = 0; g < 16; g++)
                        o += (size_t)snprintf(devices + o, sizeof(devices) - o,
                                              "%s{\"id\": \"gpu%d\", \"numa\": [%d]}",
                                              g ? ", " : "", g, g / 2);
                snprintf(devices + o, sizeof(devices) - o, "]}");
        }

        printf("## Whole-scenario throughput (`nodecm simulate`)\n\n");
        printf("384 CPUs (2 sockets x 4 NUMA nodes x 24 cores x 2 threads), static CPU manager, "
               "CPUs 0-1 reserved.\n%d pods admitted and removed again with about %d running "
               "(a sliding window); pods of 1, 2, 4 and 8 exclusive CPUs, one with an init "
               "container and two app containers, one Burstable. Each run builds the node, "
               "checkpoint in memory.\n\n",
               NPODS, WINDOW);
        printf("| topology manager | scope | admitted / refused | per scenario | per pod "
               "(admit + remove) |\n|---|---|---|---|---|\n");
        for (size_t k = 0; k < NCM_ELEMENTSOF(cases); k++) {
                run_case c = {config(cases[k].policy, cases[k].scope), 0, 0, 0, false};
                double ns = bench_median_ns(run, &c, 50);
                printf("| %s | %s | %zu / %zu | %s | %s |\n", cases[k].policy, cases[k].scope,
                       c.admitted, c.rejected, bench_fmt_ns(ns, b1), bench_fmt_ns(ns / NPODS, b2));
                if (k == 3) {
                        c.flags = NCM_NODE_EXPLAIN;
                        ns = bench_median_ns(run, &c, 50);
                        printf("| %s, with explanations | %s | %zu / %zu | %s | %s |\n",
                               cases[k].policy, cases[k].scope, c.admitted, c.rejected,
                               bench_fmt_ns(ns, b1), bench_fmt_ns(ns / NPODS, b2));
                        c.flags = 0;
                        c.gpus = true;
                        ns = bench_median_ns(run, &c, 50);
                        printf("| %s, 16 GPUs (every 8th pod asks for one) | %s | %zu / %zu | %s "
                               "| %s |\n",
                               cases[k].policy, cases[k].scope, c.admitted, c.rejected,
                               bench_fmt_ns(ns, b1), bench_fmt_ns(ns / NPODS, b2));
                }
                ncm_node_config_free(c.cfg);
        }

        printf("\nThe simulator itself (`ncm_simulate`: node, steps, output; the scenario already "
               "read), single-numa-node, pods of 1, 2, 4, 8 CPUs:\n\n"
               "| output | per scenario | per step |\n|---|---|---|\n");
        {
                sim_case c = {scenario("single-numa-node"), {0}};
                size_t steps = ncm_scenario_num_steps(c.s);
                static const char *const names[] = {"human", "--json", "--json --explain"};
                for (int m = 0; m < 3; m++) {
                        double ns;
                        c.o.json = m > 0;
                        c.o.explain = m > 1;
                        ns = bench_median_ns(run_sim, &c, 50);
                        printf("| %s | %s | %s |\n", names[m], bench_fmt_ns(ns, b1),
                               bench_fmt_ns(ns / (double)steps, b2));
                }
                ncm_scenario_free(c.s);
        }
        for (size_t i = 0; i < NPODS; i++) {
                ncm_pod_free(pods[i]);
                ncm_pod_free(gpu_pods[i]);
        }
        ncm_topo_free(topo);
        return 0;
}
