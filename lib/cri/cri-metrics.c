/* SPDX-License-Identifier: Apache-2.0 */
/* The CRI integration's metrics (nodecmd's /metrics), Prometheus text. */
#include <inttypes.h>

#include <nodecm/cri.h>

void ncm_cri_metrics_format(const ncm_cri_counters *c, const ncm_cri_sync_stats *k,
                            const ncm_cri_proxy_stats *s, ncm_buf *out)
{
        ncm_buf_printf(out,
                       "# HELP nodecm_cri_create_container_total CreateContainer calls decided, "
                       "by outcome.\n"
                       "# TYPE nodecm_cri_create_container_total counter\n"
                       "nodecm_cri_create_container_total{outcome=\"admitted\"} %" PRIu64 "\n"
                       "nodecm_cri_create_container_total{outcome=\"refused\"} %" PRIu64 "\n"
                       "nodecm_cri_create_container_total{outcome=\"passed\"} %" PRIu64 "\n"
                       "# HELP nodecm_cri_create_container_seconds_total Time nodecmd spent "
                       "deciding CreateContainer calls (decoding, admission, the record written, "
                       "the request patched).\n"
                       "# TYPE nodecm_cri_create_container_seconds_total counter\n"
                       "nodecm_cri_create_container_seconds_total %g\n"
                       "# HELP nodecm_cri_released_total Containers and pods released after the "
                       "runtime removed them (or their creation failed).\n"
                       "# TYPE nodecm_cri_released_total counter\n"
                       "nodecm_cri_released_total %" PRIu64 "\n"
                       "# HELP nodecm_cri_stale_total Containers released because the runtime "
                       "no longer had them (removeStaleState).\n"
                       "# TYPE nodecm_cri_stale_total counter\n"
                       "nodecm_cri_stale_total %" PRIu64 "\n"
                       "# HELP nodecm_cri_reconcile_runs_total Runs of the CRI reconcile loop.\n"
                       "# TYPE nodecm_cri_reconcile_runs_total counter\n"
                       "nodecm_cri_reconcile_runs_total %" PRIu64 "\n"
                       "# HELP nodecm_cri_reconcile_updates_total UpdateContainerResources "
                       "calls that put a cpuset back.\n"
                       "# TYPE nodecm_cri_reconcile_updates_total counter\n"
                       "nodecm_cri_reconcile_updates_total %" PRIu64 "\n"
                       "# HELP nodecm_cri_reconcile_failures_total Runs that could not reach "
                       "or read the runtime.\n"
                       "# TYPE nodecm_cri_reconcile_failures_total counter\n"
                       "nodecm_cri_reconcile_failures_total %" PRIu64 "\n"
                       "# HELP nodecm_cri_reconcile_last_seconds How long the last run took.\n"
                       "# TYPE nodecm_cri_reconcile_last_seconds gauge\n"
                       "nodecm_cri_reconcile_last_seconds %g\n"
                       "# HELP nodecm_cri_reconcile_last_updates Containers the last run "
                       "updated.\n"
                       "# TYPE nodecm_cri_reconcile_last_updates gauge\n"
                       "nodecm_cri_reconcile_last_updates %" PRIu64 "\n"
                       "# HELP nodecm_cri_intent_updates_total UpdateContainerResources calls "
                       "that carried a commit's cpusets to a container.\n"
                       "# TYPE nodecm_cri_intent_updates_total counter\n"
                       "nodecm_cri_intent_updates_total %" PRIu64 "\n",
                       c->admitted, c->refused, c->passed, (double)c->create_ns / 1e9, c->released,
                       c->stale, k->runs, k->updates, k->failures, (double)k->last_ns / 1e9,
                       k->last_updates, k->intent_updates);
        if (s)
                ncm_buf_printf(out,
                               "# HELP nodecm_cri_proxy_calls_total Calls the CRI proxy "
                               "received.\n"
                               "# TYPE nodecm_cri_proxy_calls_total counter\n"
                               "nodecm_cri_proxy_calls_total %" PRIu64 "\n"
                               "# HELP nodecm_cri_proxy_unavailable_total Calls that found no "
                               "runtime to forward to.\n"
                               "# TYPE nodecm_cri_proxy_unavailable_total counter\n"
                               "nodecm_cri_proxy_unavailable_total %" PRIu64 "\n"
                               "# HELP nodecm_cri_proxy_runtime_errors_total Calls the runtime "
                               "answered with an error.\n"
                               "# TYPE nodecm_cri_proxy_runtime_errors_total counter\n"
                               "nodecm_cri_proxy_runtime_errors_total %" PRIu64 "\n",
                               s->calls, s->unavailable, s->failed);
}
