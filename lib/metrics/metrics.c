/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Prometheus text format, and the kubelet's CPU and topology manager metrics of a node
 * under their kubelet names, help texts and labels (pkg/kubelet/metrics: facts carried over).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/metrics.h>

void ncm_metrics_header(ncm_buf *b, const char *name, const char *type, const char *help)
{
        ncm_buf_printf(b, "# HELP %s ", name);
        for (const char *p = help; *p; p++) {
                if (*p == '\\')
                        ncm_buf_puts(b, "\\\\");
                else if (*p == '\n')
                        ncm_buf_puts(b, "\\n");
                else
                        ncm_buf_putc(b, *p);
        }
        ncm_buf_printf(b, "\n# TYPE %s %s\n", name, type);
}

void ncm_metrics_label_value(ncm_buf *b, const char *v)
{
        for (const char *p = v; *p; p++) {
                if (*p == '\\' || *p == '"')
                        ncm_buf_putc(b, '\\');
                if (*p == '\n')
                        ncm_buf_puts(b, "\\n");
                else
                        ncm_buf_putc(b, *p);
        }
}

/* The shortest text that reads back as V (Go's strconv.FormatFloat(v, 'g', -1, 64)). */
static void put_double(ncm_buf *b, double v)
{
        char s[40];

        if (isinf(v)) {
                ncm_buf_puts(b, v > 0 ? "+Inf" : "-Inf");
                return;
        }
        if (isnan(v)) {
                ncm_buf_puts(b, "NaN");
                return;
        }
        if (v == (double)(int64_t)v && fabs(v) < 1e15) {
                ncm_buf_printf(b, "%lld", (long long)v);
                return;
        }
        for (int prec = 1; prec <= 17; prec++) {
                snprintf(s, sizeof(s), "%.*g", prec, v);
                if (strtod(s, NULL) == v)
                        break;
        }
        ncm_buf_puts(b, s);
}

void ncm_metrics_sample(ncm_buf *b, const char *name, const char *labels, double value)
{
        ncm_buf_puts(b, name);
        if (labels && labels[0])
                ncm_buf_printf(b, "{%s}", labels);
        ncm_buf_putc(b, ' ');
        put_double(b, value);
        ncm_buf_putc(b, '\n');
}

void ncm_histogram_init(ncm_histogram *h, const double *bounds, size_t n)
{
        memset(h, 0, sizeof(*h));
        h->bounds = bounds;
        h->n = n < NCM_ELEMENTSOF(h->counts) ? n : NCM_ELEMENTSOF(h->counts) - 1;
}

void ncm_histogram_observe(ncm_histogram *h, double v)
{
        for (size_t i = 0; i < h->n; i++)
                if (v <= h->bounds[i])
                        h->counts[i]++;
        h->counts[h->n]++;
        h->sum += v;
}

void ncm_histogram_format(ncm_buf *b, const char *name, const char *labels, const ncm_histogram *h)
{
        const char *sep = labels && labels[0] ? "," : "";

        for (size_t i = 0; i <= h->n; i++) {
                ncm_buf_printf(b, "%s_bucket{%s%sle=\"", name, labels ? labels : "", sep);
                put_double(b, i < h->n ? h->bounds[i] : INFINITY);
                ncm_buf_printf(b, "\"} %llu\n", (unsigned long long)h->counts[i]);
        }
        ncm_buf_printf(b, "%s_sum%s%s%s ", name, sep[0] ? "{" : "",
                       labels && labels[0] ? labels : "", sep[0] ? "}" : "");
        put_double(b, h->sum);
        ncm_buf_printf(b, "\n%s_count%s%s%s %llu\n", name, sep[0] ? "{" : "",
                       labels && labels[0] ? labels : "", sep[0] ? "}" : "",
                       (unsigned long long)h->counts[h->n]);
}

const double *ncm_metrics_tm_duration_buckets(size_t *n)
{
        /* metrics.ExponentialBuckets(.05, 2, 15) */
        static const double b[15] = {0.05, 0.1,  0.2,  0.4,   0.8,   1.6,   3.2,  6.4,
                                     12.8, 25.6, 51.2, 102.4, 204.8, 409.6, 819.2};
        *n = NCM_ELEMENTSOF(b);
        return b;
}

/* ---- the kubelet's metrics of a node ------------------------------------------------------ */

static const char *const scope_names[NCM_NODE_N_SCOPES] = {"container", "pod"};
static const char *const boundary_names[NCM_NODE_N_ALIGN] = {"numa_node", "physical_cpu",
                                                             "uncore_cache"};

/* The series of the aligned counters the kubelet creates at start (Add(0)), by policy. */
static bool series_exists(const ncm_node *n, bool failure, int scope, int boundary)
{
        const ncm_node_config *c = ncm_node_get_config(n);
        bool stat = strcmp(ncm_cpu_policy_name(ncm_node_cpu_policy(n)), "static") == 0;
        bool pod = strcmp(ncm_node_config_tm_scope(c), "pod") == 0;

        if (boundary == NCM_NODE_ALIGN_NUMA_NODE)
                return scope == (pod ? NCM_NODE_SCOPE_POD : NCM_NODE_SCOPE_CONTAINER);
        if (scope != NCM_NODE_SCOPE_CONTAINER || !stat)
                return false;
        /* the static policy's Start: aligned and failed physical_cpu, aligned uncore_cache */
        return boundary == NCM_NODE_ALIGN_PHYSICAL_CPU || !failure;
}

static void aligned(ncm_buf *b, const ncm_node *n, bool failure)
{
        const ncm_node_counters *k = ncm_node_get_counters(n);
        const char *name = failure ? "kubelet_container_aligned_compute_resources_failure_count"
                                   : "kubelet_container_aligned_compute_resources_count";
        char labels[96];

        ncm_metrics_header(b, name, "counter",
                           failure ? "Cumulative number of failures to allocate aligned compute "
                                     "resources to containers by alignment type."
                                   : "Cumulative number of aligned compute resources allocated "
                                     "to containers by alignment type.");
        /* the Go client sorts labels by name: boundary, then scope */
        for (int bd = 0; bd < NCM_NODE_N_ALIGN; bd++)
                for (int sc = 0; sc < NCM_NODE_N_SCOPES; sc++) {
                        uint64_t v = failure ? k->aligned_failures[sc][bd] : k->aligned[sc][bd];
                        if (!v && !series_exists(n, failure, sc, bd))
                                continue;
                        snprintf(labels, sizeof(labels), "boundary=\"%s\",scope=\"%s\"",
                                 boundary_names[bd], scope_names[sc]);
                        ncm_metrics_sample(b, name, labels, (double)v);
                }
}

void ncm_node_metrics_format(const ncm_node *n, bool *ever, size_t n_ever, ncm_buf *b)
{
        const ncm_node_counters *k = ncm_node_get_counters(n);
        const ncm_cpu_state *s = ncm_node_cpu_state(n);
        const ncm_cpu_policy *p = ncm_node_cpu_policy(n);
        const ncm_topo *t = ncm_node_topo(n);
        bool stat = strcmp(ncm_cpu_policy_name(p), "static") == 0;
        ncm_autoptr(ncm_cpuset) assigned = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();
        size_t nn;
        const int *ids = ncm_topo_numa_ids(t, &nn);
        char labels[64];

        if (!assigned || !pool) {
                b->oom = true;
                return;
        }
        ncm_cpu_state_assigned(s, assigned);
        if (stat) {
                const ncm_cpuset *reserved = ncm_cpu_policy_reserved(p);
                const ncm_cpuset *isolated = NULL;
                ncm_cpuset_copy(pool, ncm_cpu_state_default(s));
                if (reserved)
                        ncm_cpuset_andnot(pool, pool, reserved);
                /* isolatedCPUs keeps them out of the pool the gauge measures */
                if (ncm_cpu_policy_isolation(p, &isolated) != NCM_CPU_ISOLATION_IGNORE && isolated)
                        ncm_cpuset_andnot(pool, pool, isolated);
        }

        ncm_metrics_header(b, "kubelet_cpu_manager_pinning_requests_total", "counter",
                           "The number of cpu core allocations which required pinning.");
        ncm_metrics_sample(b, "kubelet_cpu_manager_pinning_requests_total", NULL,
                           (double)k->pinning_requests);
        ncm_metrics_header(b, "kubelet_cpu_manager_pinning_errors_total", "counter",
                           "The number of cpu core allocations which required pinning failed.");
        ncm_metrics_sample(b, "kubelet_cpu_manager_pinning_errors_total", NULL,
                           (double)k->pinning_errors);
        /* the memory manager's (a Guaranteed container under the Static policy) */
        ncm_metrics_header(b, "kubelet_memory_manager_pinning_requests_total", "counter",
                           "The number of memory pages allocations which required pinning.");
        ncm_metrics_sample(b, "kubelet_memory_manager_pinning_requests_total", NULL,
                           (double)k->mem_pinning_requests);
        ncm_metrics_header(b, "kubelet_memory_manager_pinning_errors_total", "counter",
                           "The number of memory pages allocations which required pinning that "
                           "failed.");
        ncm_metrics_sample(b, "kubelet_memory_manager_pinning_errors_total", NULL,
                           (double)k->mem_pinning_errors);
        /* the static policy's gauges; under the none policy the kubelet never sets them */
        ncm_metrics_header(b, "kubelet_cpu_manager_shared_pool_size_millicores", "gauge",
                           "The size of the shared CPU pool for non-guaranteed QoS pods, in "
                           "millicores.");
        ncm_metrics_sample(b, "kubelet_cpu_manager_shared_pool_size_millicores", NULL,
                           stat ? 1000.0 * ncm_cpuset_weight(pool) : 0);
        ncm_metrics_header(b, "kubelet_cpu_manager_exclusive_cpu_allocation_count", "gauge",
                           "The total number of CPUs exclusively allocated to containers running "
                           "on this node");
        ncm_metrics_sample(b, "kubelet_cpu_manager_exclusive_cpu_allocation_count", NULL,
                           stat ? (double)ncm_cpuset_weight(assigned) : 0);
        ncm_metrics_header(b, "kubelet_cpu_manager_allocation_per_numa", "gauge",
                           "Number of CPUs allocated per NUMA node");
        for (size_t i = 0; i < nn; i++) {
                const ncm_cpuset *nc = ncm_topo_numa_cpus(t, ids[i]);
                int count = 0;
                if (nc)
                        for (int cpu = ncm_cpuset_first(assigned); cpu >= 0;
                             cpu = ncm_cpuset_next(assigned, cpu))
                                count += ncm_cpuset_isset(nc, cpu);
                if (count && i < n_ever)
                        ever[i] = true;
                if (!count && (i >= n_ever || !ever[i]))
                        continue;
                snprintf(labels, sizeof(labels), "numa_node=\"%d\"", ids[i]);
                ncm_metrics_sample(b, "kubelet_cpu_manager_allocation_per_numa", labels, count);
        }
        aligned(b, n, false);
        aligned(b, n, true);
        ncm_metrics_header(b, "kubelet_topology_manager_admission_requests_total", "counter",
                           "The number of admission requests where resources have to be "
                           "aligned.");
        ncm_metrics_sample(b, "kubelet_topology_manager_admission_requests_total", NULL,
                           (double)k->tm_admissions);
        ncm_metrics_header(b, "kubelet_topology_manager_admission_errors_total", "counter",
                           "The number of admission request failures where resources could not "
                           "be aligned.");
        ncm_metrics_sample(b, "kubelet_topology_manager_admission_errors_total", NULL,
                           (double)k->tm_admission_errors);
        ncm_node_isolation_metrics_format(n, b);
}

void ncm_node_isolation_metrics_format(const ncm_node *n, ncm_buf *b)
{
        const ncm_cpu_policy *p = ncm_node_cpu_policy(n);
        const ncm_node_isolation_counters *c = ncm_node_isolation_counters_get(n);
        const ncm_cpuset *isolated = NULL;
        ncm_cpu_isolation mode = ncm_cpu_policy_isolation(p, &isolated);
        unsigned count[NCM_KNOB_N] = {0};
        bool any = mode != NCM_CPU_ISOLATION_IGNORE;
        char labels[96];

        for (size_t i = 0; i < ncm_node_num_pods(n); i++) {
                const ncm_pod *pod = ncm_node_pod_at(n, i);
                for (size_t k = 0; k < pod->n_init_containers + pod->n_containers; k++) {
                        const ncm_container *ct =
                                        k < pod->n_init_containers
                                                        ? &pod->init_containers[k]
                                                        : &pod->containers[k -
                                                                           pod->n_init_containers];
                        unsigned knobs = ncm_node_container_knobs(n, pod->uid, ct->name);
                        for (int j = 0; j < NCM_KNOB_N; j++)
                                if (knobs & (1u << j)) {
                                        count[j]++;
                                        any = true;
                                }
                }
        }
        for (int k = 0; k < NCM_KNOB_FIX_N; k++)
                any = any || c->fixed[k];
        if (!any)
                return;
        ncm_metrics_header(b, "nodecm_isolated_cpus", "gauge",
                           "The CPUs isolatedCPUs keeps out of the shared pool (0 under ignore).");
        snprintf(labels, sizeof(labels), "mode=\"%s\"", ncm_cpu_isolation_name(mode));
        ncm_metrics_sample(b, "nodecm_isolated_cpus", labels,
                           isolated ? ncm_cpuset_weight(isolated) : 0);
        ncm_metrics_header(b, "nodecm_isolation_containers", "gauge",
                           "Running containers with one of CRI-O's knobs, by knob.");
        for (int j = 0; j < NCM_KNOB_N; j++) {
                snprintf(labels, sizeof(labels), "knob=\"%s\"", ncm_knob_name(1u << j));
                ncm_metrics_sample(b, "nodecm_isolation_containers", labels, count[j]);
        }
        ncm_metrics_header(b, "nodecm_isolation_reconciled_total", "counter",
                           "What the knobs found changed on the machine and put back, by kind.");
        for (int k = 0; k < NCM_KNOB_FIX_N; k++) {
                snprintf(labels, sizeof(labels), "what=\"%s\"", ncm_knob_fix_name((ncm_knob_fix)k));
                ncm_metrics_sample(b, "nodecm_isolation_reconciled_total", labels,
                                   (double)c->fixed[k]);
        }
}
