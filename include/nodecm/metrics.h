/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Metrics: the Prometheus text format (exposition format 0.0.4), the kubelet's metrics of a
 * node under their kubelet names, and the one HTTP request a metrics endpoint reads.
 *
 * The kubelet exports its container-manager metrics with the prefix "kubelet_" (spec §7,
 * devices D); ncm_node_metrics_format() writes those nodecm reproduces, from the node's state
 * (gauges) and its counters (ncm_node_get_counters). nodecm's own metrics are "nodecm_*".
 */
#ifndef NODECM_METRICS_H
#define NODECM_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/node.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the text format ---------------------------------------------------------------------- */

/* "# HELP NAME HELP\n# TYPE NAME TYPE\n" (HELP escaped as the format wants). */
NCM_API void ncm_metrics_header(ncm_buf *b, const char *name, const char *type, const char *help);

/* "NAME{LABELS} VALUE\n"; LABELS is 'k="v",...' or NULL/"" for none. */
NCM_API void ncm_metrics_sample(ncm_buf *b, const char *name, const char *labels, double value);

/* A label value escaped as the format wants (backslash, quote, newline). */
NCM_API void ncm_metrics_label_value(ncm_buf *b, const char *v);

/* A cumulative histogram: N upper bounds (ascending), their counts and the +Inf one. */
typedef struct ncm_histogram {
        const double *bounds;
        size_t n;
        uint64_t counts[32]; /* counts[i]: observations <= bounds[i]; counts[n]: all */
        double sum;
} ncm_histogram;

/* Set up H on BOUNDS (N <= 31, kept by pointer). */
NCM_API void ncm_histogram_init(ncm_histogram *h, const double *bounds, size_t n);
NCM_API void ncm_histogram_observe(ncm_histogram *h, double v);
/* NAME_bucket{le=...}, NAME_sum, NAME_count (LABELS prefix every le, may be NULL). */
NCM_API void ncm_histogram_format(ncm_buf *b, const char *name, const char *labels,
                                  const ncm_histogram *h);

/* The kubelet's buckets of topology_manager_admission_duration_ms: 0.05 ms doubling 15 times. */
NCM_API const double *ncm_metrics_tm_duration_buckets(size_t *n);

/* ---- the kubelet's metrics of a node -------------------------------------------------------- */

/*
 * Append the kubelet's CPU and topology manager metrics of N (HELP and TYPE included):
 * cpu_manager_pinning_requests_total, cpu_manager_pinning_errors_total,
 * memory_manager_pinning_requests_total, memory_manager_pinning_errors_total,
 * cpu_manager_shared_pool_size_millicores, cpu_manager_exclusive_cpu_allocation_count,
 * cpu_manager_allocation_per_numa{numa_node}, container_aligned_compute_resources_count and
 * _failure_count{scope,boundary}, topology_manager_admission_requests_total and _errors_total,
 * all with the prefix "kubelet_". The gauges are computed from the state at the moment, which
 * is what the kubelet's incremental updates arrive at; allocation_per_numa lists the NUMA
 * nodes that ever had exclusive CPUs (the kubelet's series; EVER[i] for the i-th of
 * ncm_topo_numa_ids(), N_EVER of them, kept by the caller and updated here) with their count
 * now (0 when they have none left, where the kubelet leaves the last count). The duration
 * histogram is the caller's (it is timed where admissions are served).
 */
NCM_API void ncm_node_metrics_format(const ncm_node *n, bool *ever, size_t n_ever, ncm_buf *b);

/*
 * Append nodecm's isolation metrics of N (docs/isolation.md), when the node has anything to
 * say (isolatedCPUs other than ignore, or a container with one of CRI-O's knobs, or a
 * reconcile that put one back): nodecm_isolated_cpus{mode} (the CPUs isolatedCPUs keeps out
 * of the shared pool), nodecm_isolation_containers{knob} (the containers each knob holds) and
 * nodecm_isolation_reconciled_total{what} (what the node found changed and put back:
 * "sched_load_balance", "partition", "cpu_quota", "irq_affinity", "irqbalance"; the cpusets a
 * reconcile rewrote are nodecmd's nodecm_reconcile_fixes_total).
 * ncm_node_metrics_format() ends with it.
 */
NCM_API void ncm_node_isolation_metrics_format(const ncm_node *n, ncm_buf *b);

/* ---- HTTP -------------------------------------------------------------------------------- */

/* The head of one HTTP/1.x request. */
typedef struct ncm_http_request {
        char method[16];
        char path[256]; /* the request target up to '?' */
        int minor;      /* HTTP/1.MINOR */
        bool keep_alive;
        size_t head_len; /* bytes of the head, the final CRLF CRLF included */
        char query[256]; /* the request target after '?' (without it), "" when none */
} ncm_http_request;

/*
 * Parse the request head at BUF[0..LEN): 1 when complete (*RET filled), 0 when more bytes are
 * needed (no CRLF CRLF yet within MAX_HEAD bytes), or a negative errno for the answer to give:
 * -EBADMSG (400: malformed), -EMSGSIZE (431: the head is above MAX_HEAD, or a target above
 * 255 bytes: 414), -EPROTONOSUPPORT (505: not HTTP/1.0 or 1.1), -EFBIG (413: a request with
 * a body; only GET and HEAD without one are served). Pure: no I/O, no allocation.
 */
NCM_API int ncm_http_parse_request(const char *buf, size_t len, size_t max_head,
                                   ncm_http_request *ret);

/*
 * The value of parameter NAME in QUERY ("pod=a%2Fb&x=1", as ncm_http_request.query holds it),
 * percent-decoded ('+' is a space) into OUT (SIZE bytes, NUL-terminated). Returns its length,
 * -ENOENT when QUERY has no NAME (the first one counts), -EINVAL for a bad escape or a NUL in
 * it, -ENAMETOOLONG when it does not fit. Pure.
 */
NCM_API int ncm_http_query_param(const char *query, const char *name, char *out, size_t size);

/*
 * Append one server-sent event (the HTML standard's text/event-stream): "id: ID", then DATA
 * as "data:" lines (one per line of DATA: a bare CR, LF or CRLF ends a line; an event cannot
 * carry a line break otherwise), then the empty line that dispatches it.
 */
NCM_API void ncm_http_sse_event(ncm_buf *b, uint64_t id, const char *data);

#ifdef __cplusplus
}
#endif
#endif
