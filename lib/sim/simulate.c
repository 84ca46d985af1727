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

int ncm_simulate(const ncm_scenario *s, const ncm_simulate_options *o, ncm_buf *out,
                 ncm_simulate_summary *summary, ncm_error *err)
{
        static const ncm_simulate_options defaults = {0};
        ncm_node_options nopts = {0};
        ncm_autoptr(ncm_enforcer) none = NULL;
        ncm_autoptr(ncm_node) n = NULL;
        ncm_autoptr(ncm_cpuset) released = ncm_cpuset_new();
        ncm_simulate_summary sum = {0};
        size_t limit;
        int r;

        if (!o)
                o = &defaults;
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
        for (size_t i = 0; i < limit; i++) {
                const ncm__step *st = &s->steps[i];
                ncm_simulate_step done = {.index = i};
                ncm_buf line = NCM_BUF_INIT;
                switch (st->kind) {
                case NCM__STEP_ADMIT:
                case NCM__STEP_RESIZE: {
                        /* a resize is the pod admitted again, counted and printed as a resize */
                        bool rz = st->kind == NCM__STEP_RESIZE;
                        unsigned flags = o->explain || o->step_fn ? NCM_NODE_EXPLAIN : 0;
                        void (*json)(ncm_buf *, long, const ncm_pod *, const ncm_node_admission *,
                                     bool) = rz ? ncm_node_format_resize_json
                                                : ncm_node_format_admission_json;
                        void (*text)(ncm_buf *, long, const ncm_pod *, const ncm_node_admission *,
                                     bool) = rz ? ncm_node_format_resize_text
                                                : ncm_node_format_admission_text;
                        ncm_autoptr(ncm_node_admission) a = NULL;
                        r = rz ? ncm_node_resize(n, st->pod, flags, &a, err)
                               : ncm_node_admit(n, st->pod, flags, &a, err);
                        if (r < 0)
                                return ncm_error_prefix(err, "%s.%s", st->path,
                                                        rz ? "resize" : "admit");
                        if (rz)
                                *(a->admitted ? &sum.resized : &sum.resize_refused) += 1;
                        else
                                *(a->admitted ? &sum.admitted : &sum.rejected) += 1;
                        (o->json ? json : text)(out, (long)i, st->pod, a, o->explain);
                        if (o->step_fn) {
                                text(&line, -1, st->pod, a, false);
                                done = (ncm_simulate_step){.index = i,
                                                           .op = rz ? "resize" : "admit",
                                                           .pod = st->pod,
                                                           .admission = a};
                                r = step_done(o, &done, &line, n, err);
                                if (r < 0)
                                        return r;
                        }
                        break;
                }
                case NCM__STEP_REMOVE:
                case NCM__STEP_REMOVE_POD: {
                        /* the name goes with the pod: read it before */
                        const char *container = st->kind == NCM__STEP_REMOVE ? st->container : NULL;
                        const char *name = ncm_node_pod_name(n, st->pod_uid);
                        ncm_autofree char *pname = name ? strdup(name) : NULL;
                        r = container ? ncm_node_remove_container(n, st->pod_uid, container,
                                                                  released, err)
                                      : ncm_node_remove_pod(n, st->pod_uid, released, err);
                        if (r < 0)
                                return ncm_error_prefix(err, "%s.%s", st->path,
                                                        container ? "remove" : "removePod");
                        if (o->json)
                                ncm_node_format_removal_json(out, (long)i, st->pod_uid, container,
                                                             r, released);
                        else
                                ncm_node_format_removal_text(out, (long)i, st->pod_uid, pname,
                                                             container, r, released);
                        if (o->step_fn) {
                                ncm_node_format_removal_text(&line, -1, st->pod_uid, pname,
                                                             container, r, released);
                                done.op = container ? "remove" : "removePod";
                                r = step_done(o, &done, &line, n, err);
                                if (r < 0)
                                        return r;
                        }
                        break;
                }
                case NCM__STEP_RESTART: {
                        const ncm_cpu_state *cs;
                        r = ncm_node_restart(n, st->cfg, err);
                        if (r < 0)
                                return ncm_error_prefix(err, "%s.restart", st->path);
                        cs = ncm_node_cpu_state(n);
                        if (o->json) {
                                ncm_buf_printf(out,
                                               "{\"step\": %zu, \"op\": \"restart\", "
                                               "\"restarted\": true}\n",
                                               i);
                        } else {
                                ncm_buf_printf(out,
                                               "step %zu: restart: restored from "
                                               "cpu_manager_state and validated (policy %s, "
                                               "default set ",
                                               i, ncm_cpu_state_policy(cs));
                                ncm_cpuset_format_list_buf(ncm_cpu_state_default(cs), out);
                                ncm_buf_printf(out, ", %zu assignment%s)\n",
                                               ncm_cpu_state_num_entries(cs),
                                               ncm_cpu_state_num_entries(cs) == 1 ? "" : "s");
                        }
                        if (o->step_fn) {
                                ncm_buf_puts(&line, "restart: restored from cpu_manager_state "
                                                    "and validated");
                                done.op = "restart";
                                r = step_done(o, &done, &line, n, err);
                                if (r < 0)
                                        return r;
                        }
                        break;
                }
                }
                sum.steps++;
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
