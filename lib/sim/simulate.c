/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The simulator: replays a scenario's steps on a node and writes what happened, as JSON lines
 * (DESIGN.md) or for people (one line per step, then a CPU map). docs/simulate.md describes both.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/node-resize.h>
#include "sim-internal.h"

/* ------------------------------------------------------------------------------------------
 * The run
 */

/* Hand step ST, whose line LINE holds (freed here), to the caller's step function. */
static int step_done(const ncm_simulate_options *o, ncm_simulate_step *st, ncm_buf *line,
                     const ncm_node *n, ncm_error *err)
{
        int r;

        if (line->len && line->data[line->len - 1] == '\n')
                line->data[--line->len] = '\0';
        if (ncm_buf_failed(line)) {
                ncm_buf_done(line);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        st->text = line->data ? line->data : "";
        r = o->step_fn(st, n, o->step_data, err);
        ncm_buf_done(line);
        return r;
}

/* The restarts' configurations, which the node borrows until it goes. */
struct cfg_list {
        ncm_node_config **v;
        size_t n;
};

typedef struct run_ctx {
        const ncm_simulate_options *o;
        ncm_node *n;
        ncm_buf *out;
        ncm_cpuset *released;
        ncm_simulate_summary *sum;
        size_t limit; /* steps to run */
        struct cfg_list *cfgs;
} run_ctx;

/* Run step ST (number I) on the node and write what it did. 1 once the last step has run. */
static int run_step(ncm__step *st, size_t i, void *data, ncm_error *err)
{
        run_ctx *c = data;
        const ncm_simulate_options *o = c->o;
        ncm_simulate_step done = {.index = i};
        ncm_buf line = NCM_BUF_INIT;
        int r;

        switch (st->kind) {
        case NCM__STEP_ADMIT:
        case NCM__STEP_RESIZE: {
                /* a resize is the pod admitted again, counted and printed as a resize */
                bool rz = st->kind == NCM__STEP_RESIZE;
                unsigned flags = o->explain || o->step_fn ? NCM_NODE_EXPLAIN : 0;
                void (*json)(ncm_buf *, long, const ncm_pod *, const ncm_node_admission *, bool) =
                                rz ? ncm_node_format_resize_json : ncm_node_format_admission_json;
                void (*text)(ncm_buf *, long, const ncm_pod *, const ncm_node_admission *, bool) =
                                rz ? ncm_node_format_resize_text : ncm_node_format_admission_text;
                ncm_autoptr(ncm_node_admission) a = NULL;
                r = rz ? ncm_node_resize(c->n, st->pod, flags, &a, err)
                       : ncm_node_admit(c->n, st->pod, flags, &a, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s.%s", st->path, rz ? "resize" : "admit");
                if (rz)
                        *(a->admitted ? &c->sum->resized : &c->sum->resize_refused) += 1;
                else
                        *(a->admitted ? &c->sum->admitted : &c->sum->rejected) += 1;
                (o->json ? json : text)(c->out, (long)i, st->pod, a, o->explain);
                if (o->step_fn) {
                        text(&line, -1, st->pod, a, false);
                        done = (ncm_simulate_step){.index = i,
                                                   .op = rz ? "resize" : "admit",
                                                   .pod = st->pod,
                                                   .admission = a};
                        r = step_done(o, &done, &line, c->n, err);
                        if (r < 0)
                                return r;
                }
                break;
        }
        case NCM__STEP_REMOVE:
        case NCM__STEP_REMOVE_POD: {
                /* the name goes with the pod: read it before */
                const char *container = st->kind == NCM__STEP_REMOVE ? st->container : NULL;
                const char *name = ncm_node_pod_name(c->n, st->pod_uid);
                ncm_autofree char *pname = name ? strdup(name) : NULL;
                r = container ? ncm_node_remove_container(c->n, st->pod_uid, container, c->released,
                                                          err)
                              : ncm_node_remove_pod(c->n, st->pod_uid, c->released, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s.%s", st->path,
                                                container ? "remove" : "removePod");
                if (o->json)
                        ncm_node_format_removal_json(c->out, (long)i, st->pod_uid, container, r,
                                                     c->released);
                else
                        ncm_node_format_removal_text(c->out, (long)i, st->pod_uid, pname, container,
                                                     r, c->released);
                if (o->step_fn) {
                        ncm_node_format_removal_text(&line, -1, st->pod_uid, pname, container, r,
                                                     c->released);
                        done.op = container ? "remove" : "removePod";
                        r = step_done(o, &done, &line, c->n, err);
                        if (r < 0)
                                return r;
                }
                break;
        }
        case NCM__STEP_RESTART: {
                const ncm_cpu_state *cs;
                const ncm_node_config *cfg = NULL;
                if (st->cfg) {
                        ncm_node_config **m = realloc(c->cfgs->v, (c->cfgs->n + 1) * sizeof(*m));
                        if (!m)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        c->cfgs->v = m;
                        cfg = c->cfgs->v[c->cfgs->n++] = NCM_TAKE_PTR(st->cfg);
                }
                r = ncm_node_restart(c->n, cfg, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s.restart", st->path);
                cs = ncm_node_cpu_state(c->n);
                if (o->json) {
                        ncm_buf_printf(c->out,
                                       "{\"step\": %zu, \"op\": \"restart\", "
                                       "\"restarted\": true}\n",
                                       i);
                } else {
                        ncm_buf_printf(c->out,
                                       "step %zu: restart: restored from "
                                       "cpu_manager_state and validated (policy %s, "
                                       "default set ",
                                       i, ncm_cpu_state_policy(cs));
                        ncm_cpuset_format_list_buf(ncm_cpu_state_default(cs), c->out);
                        ncm_buf_printf(c->out, ", %zu assignment%s)\n",
                                       ncm_cpu_state_num_entries(cs),
                                       ncm_cpu_state_num_entries(cs) == 1 ? "" : "s");
                }
                if (o->step_fn) {
                        ncm_buf_puts(&line, "restart: restored from cpu_manager_state "
                                            "and validated");
                        done.op = "restart";
                        r = step_done(o, &done, &line, c->n, err);
                        if (r < 0)
                                return r;
                }
                break;
        }
        }
        c->sum->steps++;
        return c->sum->steps >= c->limit ? 1 : 0;
}

static int simulate(const ncm_scenario *s, const ncm_simulate_options *o, ncm_buf *out,
                    ncm_simulate_summary *summary, struct cfg_list *cfgs, ncm_error *err)
{
        ncm_node_options nopts = {0};
        ncm_autoptr(ncm_enforcer) none = NULL;
        ncm_autoptr(ncm_node) n = NULL;
        ncm_autoptr(ncm_cpuset) released = ncm_cpuset_new();
        ncm_simulate_summary sum = {0};
        size_t limit;
        int r;

        if (!released)
                return ncm_error_set(err, ENOMEM, "out of memory");
        nopts.state_dir = o->state_dir;
        nopts.devices = s->devices_text;
        nopts.devices_len = s->devices_len;
        nopts.reference_merge = o->reference_merge;
        nopts.kubelet_version = o->kubelet_version;
        nopts.capacity = s->has_capacity ? &s->capacity : NULL;
        nopts.machine_root = s->machine_root;
        /* a simulation enforces nothing */
        r = ncm_enforcer_none_new(&none, err);
        if (r < 0)
                return r;
        nopts.enforcer = none;
        if (s->state_text) {
                nopts.cpu_checkpoint = s->state_text;
                nopts.cpu_checkpoint_len = s->state_len;
                nopts.cpu_checkpoint_name = "node.state";
        }
        r = ncm_node_new(s->topo, s->cfg, &nopts, &n, err);
        if (r < 0)
                return r;

        limit = o->max_steps && o->max_steps < s->n_steps ? o->max_steps : s->n_steps;
        if (limit > 0) {
                run_ctx c = {.o = o,
                             .n = n,
                             .out = out,
                             .released = released,
                             .sum = &sum,
                             .limit = limit,
                             .cfgs = cfgs};
                r = ncm__scenario_each_step(s, run_step, &c, err);
                if (r < 0)
                        return r;
        }
        if (o->step_fn) {
                ncm_buf line = NCM_BUF_INIT;
                ncm_simulate_step end = {.index = sum.steps, .op = "end"};
                r = step_done(o, &end, &line, n, err);
                if (r < 0)
                        return r;
        }
        if (o->json) {
                ncm_node_format_state_json(n, out);
        } else {
                r = ncm_node_format_cpu_map(n, out);
                if (r < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        if (ncm_buf_failed(out))
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (summary)
                *summary = sum;
        return 0;
}

int ncm_simulate(const ncm_scenario *s, const ncm_simulate_options *o, ncm_buf *out,
                 ncm_simulate_summary *summary, ncm_error *err)
{
        static const ncm_simulate_options defaults = {0};
        struct cfg_list cfgs = {0};
        int r = simulate(s, o ? o : &defaults, out, summary, &cfgs, err);

        /* after the node */
        for (size_t i = 0; i < cfgs.n; i++)
                ncm_node_config_free(cfgs.v[i]);
        free(cfgs.v);
        return r;
}
