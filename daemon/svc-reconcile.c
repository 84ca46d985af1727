/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reconcile loop: the kubelet's reconcileState every cpuManagerReconcilePeriod, through the
 * node's enforcer (every running container's cpuset written again from the state, counting the
 * ones that were off), and at once after a change that moved the shared pool instead of up to
 * a period later as the kubelet does. Runs are jobs on the node's queue; at most one waits.
 * It is the one reconcile of every enforcer: after each run the services that keep something
 * in step hear it (nodecmd_reconciled: the CRI service's runtime, whose containers the cri
 * enforcer's intents and a run against the runtime bring back).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nodecmd.h"

typedef struct reconcile {
        nodecmd *d;
        uv_timer_t timer;
        uint64_t period_ms;
        bool queued;  /* a run waits in the queue */
        bool stopped; /* stop() ran */
        uint64_t runs, fixed, failures;
        uint64_t last_ns; /* the duration of the last run */
} reconcile;

static void run(nodecmd *d, nodecmd_job *job, void *data)
{
        reconcile *rc = data;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t t0 = nodecmd_now_ns();
        int r;

        rc->queued = false;
        r = ncm_node_reconcile(nodecmd_node(d), &err);
        rc->last_ns = nodecmd_now_ns() - t0;
        rc->runs++;
        if (r < 0) {
                rc->failures++;
                nodecmd_log(d, NODECMD_WARN, "reconcile failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
        } else {
                rc->fixed += (uint64_t)r;
                nodecmd_log(d, r > 0 ? NODECMD_INFO : NODECMD_DEBUG, "reconciled",
                            "fixed=%d duration_us=%" PRIu64, r, rc->last_ns / 1000);
        }
        nodecmd_job_done(d, job);
        nodecmd_reconciled(d);
}

static void submit(reconcile *rc)
{
        if (rc->queued || rc->stopped || nodecmd_stopping(rc->d))
                return;
        if (nodecmd_submit(rc->d, "reconcile", run, rc))
                rc->queued = true;
}

static void tick(uv_timer_t *t)
{
        submit(t->data);
}

static void arm(reconcile *rc)
{
        rc->period_ms = nodecmd_reconcile_period_ms(rc->d);
        uv_timer_start(&rc->timer, tick, rc->period_ms, rc->period_ms);
}

static int rc_start(nodecmd *d, void **ret, ncm_error *err)
{
        reconcile *rc = calloc(1, sizeof(*rc));

        if (!rc)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = rc;
        rc->d = d;
        uv_timer_init(nodecmd_loop(d), &rc->timer);
        rc->timer.data = rc;
        arm(rc);
        nodecmd_log(d, NODECMD_INFO, "reconcile loop started", "period_ms=%" PRIu64, rc->period_ms);
        return 0;
}

static void rc_changed(void *data, const nodecmd_change *c)
{
        reconcile *rc = data;

        if (!c->error && c->res && c->res->pool_changed)
                submit(rc);
}

static void rc_reload(void *data)
{
        arm(data);
}

static void timer_closed(uv_handle_t *h)
{
        reconcile *rc = h->data;
        nodecmd_service_stopped(rc->d, rc);
}

static void rc_stop(void *data)
{
        reconcile *rc = data;

        rc->stopped = true;
        uv_close((uv_handle_t *)&rc->timer, timer_closed);
}

static void rc_free(void *data)
{
        free(data);
}

static void rc_metrics(void *data, ncm_buf *out)
{
        reconcile *rc = data;

        ncm_buf_printf(out,
                       "# HELP nodecm_reconcile_runs_total Runs of the reconcile loop (the "
                       "kubelet's reconcileState).\n"
                       "# TYPE nodecm_reconcile_runs_total counter\n"
                       "nodecm_reconcile_runs_total %" PRIu64 "\n"
                       "# HELP nodecm_reconcile_fixes_total Containers whose cpuset the "
                       "reconcile loop found off and wrote again.\n"
                       "# TYPE nodecm_reconcile_fixes_total counter\n"
                       "nodecm_reconcile_fixes_total %" PRIu64 "\n"
                       "# HELP nodecm_reconcile_failures_total Reconcile runs that failed.\n"
                       "# TYPE nodecm_reconcile_failures_total counter\n"
                       "nodecm_reconcile_failures_total %" PRIu64 "\n"
                       "# HELP nodecm_reconcile_period_seconds cpuManagerReconcilePeriod in "
                       "force.\n"
                       "# TYPE nodecm_reconcile_period_seconds gauge\n"
                       "nodecm_reconcile_period_seconds %g\n",
                       rc->runs, rc->fixed, rc->failures, (double)rc->period_ms / 1000.0);
}

const nodecmd_service_ops nodecmd_reconcile_service = {
                .name = "reconcile",
                .start = rc_start,
                .changed = rc_changed,
                .reload = rc_reload,
                .stop = rc_stop,
                .free = rc_free,
                .metrics = rc_metrics,
};
