/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The simulator: replays a scenario's steps on a node and writes what happened, as JSON lines
 * (DESIGN.md) or for people (one line per step, then a CPU map). docs/simulate.md describes both.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim-internal.h"

/* ------------------------------------------------------------------------------------------
 * JSON pieces (", " and ": " separators, as every nodecm JSON line)
 */

static void json_str(ncm_buf *b, const char *s)
{
        ncm_buf_json_string(b, s ? s : "", s ? strlen(s) : 0);
}

static void json_cpus(ncm_buf *b, const ncm_cpuset *s)
{
        ncm_buf_putc(b, '"');
        ncm_cpuset_format_list_buf(s, b);
        ncm_buf_putc(b, '"');
}

static void json_idlist(ncm_buf *b, const int *ids, size_t n)
{
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++)
                ncm_buf_printf(b, "%s%d", i ? ", " : "", ids[i]);
        ncm_buf_putc(b, ']');
}

static void json_hint(ncm_buf *b, const ncm_hint *h)
{
        ncm_buf_puts(b, "{\"numa\": ");
        if (h->any) {
                ncm_buf_puts(b, "null");
        } else {
                int bits[NCM_BITMASK_MAX_BITS];
                int k = ncm_bitmask_to_bits(h->numa, bits);
                ncm_buf_putc(b, '[');
                for (int i = 0; i < k; i++)
                        ncm_buf_printf(b, "%s%d", i ? ", " : "", bits[i]);
                ncm_buf_putc(b, ']');
        }
        ncm_buf_printf(b, ", \"preferred\": %s}", h->preferred ? "true" : "false");
}

static void json_hints(ncm_buf *b, const ncm_tm_hints *h)
{
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < h->n; i++) {
                const ncm_hint_list *l = &h->res[i].list;
                if (i)
                        ncm_buf_puts(b, ", ");
                json_str(b, h->res[i].resource);
                ncm_buf_puts(b, ": ");
                if (l->nil) {
                        ncm_buf_puts(b, "null");
                        continue;
                }
                ncm_buf_putc(b, '[');
                for (size_t j = 0; j < l->n; j++) {
                        if (j)
                                ncm_buf_puts(b, ", ");
                        json_hint(b, &l->hints[j]);
                }
                ncm_buf_putc(b, ']');
        }
        ncm_buf_putc(b, '}');
}

static void json_events(ncm_buf *b, const ncm_node_admission *a)
{
        static const char *const kinds[] = {"hints", "merge", "allocate"};

        ncm_buf_puts(b, ", \"explain\": [");
        for (size_t i = 0; i < a->n_events; i++) {
                const ncm_node_event *e = &a->events[i];
                if (i)
                        ncm_buf_puts(b, ", ");
                ncm_buf_printf(b, "{\"event\": \"%s\", \"container\": ", kinds[e->kind]);
                if (e->container)
                        json_str(b, e->container);
                else
                        ncm_buf_puts(b, "null");
                if (e->provider) {
                        ncm_buf_puts(b, ", \"provider\": ");
                        json_str(b, e->provider);
                }
                switch (e->kind) {
                case NCM_NODE_EVENT_HINTS:
                        ncm_buf_puts(b, ", \"hints\": ");
                        json_hints(b, &e->hints);
                        break;
                case NCM_NODE_EVENT_MERGE:
                        ncm_buf_puts(b, ", \"merged\": ");
                        json_hint(b, &e->hint);
                        ncm_buf_printf(b, ", \"admit\": %s, \"why\": ", e->ok ? "true" : "false");
                        json_str(b, e->text);
                        break;
                case NCM_NODE_EVENT_ALLOCATE:
                        ncm_buf_puts(b, ", \"affinity\": ");
                        json_hint(b, &e->hint);
                        ncm_buf_printf(b, ", \"ok\": %s, \"result\": ", e->ok ? "true" : "false");
                        json_str(b, e->text);
                        ncm_buf_puts(b, ", \"steps\": [");
                        for (size_t k = 0; k < e->n_steps; k++) {
                                if (k)
                                        ncm_buf_puts(b, ", ");
                                json_str(b, e->steps[k]);
                        }
                        ncm_buf_putc(b, ']');
                        break;
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, ']');
}

/* {"example.com/gpu": ["gpu0", "gpu1"]} */
static void json_devices(ncm_buf *b, const ncm_devmgr_assignment *as, size_t n)
{
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < n; i++) {
                ncm_buf_puts(b, i ? ", " : "");
                json_str(b, as[i].resource);
                ncm_buf_puts(b, ": [");
                for (size_t k = 0; k < as[i].n_ids; k++) {
                        ncm_buf_puts(b, k ? ", " : "");
                        json_str(b, as[i].ids[k]);
                }
                ncm_buf_putc(b, ']');
        }
        ncm_buf_putc(b, '}');
}

static void json_admit(ncm_buf *b, size_t step, const ncm_pod *pod, const ncm_node_admission *a,
                       bool explain)
{
        ncm_buf_printf(b, "{\"step\": %zu, \"op\": \"admit\", \"pod\": ", step);
        json_str(b, pod->uid);
        ncm_buf_printf(b, ", \"admitted\": %s", a->admitted ? "true" : "false");
        if (a->admitted) {
                ncm_buf_puts(b, ", \"containers\": [");
                for (size_t i = 0; i < a->n_containers; i++) {
                        const ncm_node_container_result *c = &a->containers[i];
                        if (i)
                                ncm_buf_puts(b, ", ");
                        ncm_buf_puts(b, "{\"name\": ");
                        json_str(b, c->name);
                        if (c->sidecar)
                                ncm_buf_puts(b, ", \"sidecar\": true");
                        else if (c->init)
                                ncm_buf_puts(b, ", \"init\": true");
                        ncm_buf_printf(b, ", \"exclusive\": %s, \"cpus\": ",
                                       c->exclusive ? "true" : "false");
                        json_cpus(b, c->cpus);
                        ncm_buf_puts(b, ", \"numa\": ");
                        json_idlist(b, c->numa, c->n_numa);
                        ncm_buf_puts(b, ", \"devices\": ");
                        json_devices(b, c->devices, c->n_devices);
                        ncm_buf_putc(b, '}');
                }
                ncm_buf_putc(b, ']');
        } else {
                ncm_buf_puts(b, ", \"reason\": ");
                json_str(b, a->reason);
                ncm_buf_puts(b, ", \"message\": ");
                json_str(b, a->message);
        }
        if (explain)
                json_events(b, a);
        ncm_buf_puts(b, "}\n");
}

/* ------------------------------------------------------------------------------------------
 * Human output
 */

/* People read pod names; the JSON lines carry the UIDs. */
static void put_pod(ncm_buf *b, const char *name, const char *uid)
{
        ncm_buf_puts(b, name && name[0] ? name : uid);
}

/* "NUMA 0-1,3": runs as in CPU lists, but only between non-negative ids ("-1,0", not "-1-0"). */
static void put_numa(ncm_buf *b, const int *ids, size_t n)
{
        ncm_buf_puts(b, "NUMA ");
        for (size_t i = 0; i < n;) {
                size_t j = i;
                while (ids[i] >= 0 && j + 1 < n && ids[j + 1] == ids[j] + 1)
                        j++;
                ncm_buf_printf(b, "%s%d", i ? "," : "", ids[i]);
                if (j > i)
                        ncm_buf_printf(b, "-%d", ids[j]);
                i = j + 1;
        }
}

static void put_hints(ncm_buf *b, const ncm_tm_hints *h)
{
        if (h->n == 0) {
                ncm_buf_puts(b, "no preference");
                return;
        }
        for (size_t i = 0; i < h->n; i++) {
                const ncm_hint_list *l = &h->res[i].list;
                ncm_buf_printf(b, "%s%s:", i ? "; " : "", h->res[i].resource);
                if (l->nil)
                        ncm_buf_puts(b, " no preference");
                else if (l->n == 0)
                        ncm_buf_puts(b, " none (cannot be satisfied)");
                for (size_t j = 0; j < l->n; j++) {
                        ncm_buf_putc(b, ' ');
                        ncm_hint_format(&l->hints[j], true, b);
                }
        }
}

static void human_events(ncm_buf *b, const ncm_node_admission *a)
{
        for (size_t i = 0; i < a->n_events; i++) {
                const ncm_node_event *e = &a->events[i];
                const char *who = e->container ? e->container : "pod";
                switch (e->kind) {
                case NCM_NODE_EVENT_HINTS:
                        ncm_buf_printf(b, "    %s: %s hints: ", who, e->provider);
                        put_hints(b, &e->hints);
                        ncm_buf_putc(b, '\n');
                        break;
                case NCM_NODE_EVENT_MERGE:
                        ncm_buf_printf(b, "    %s: merged ", who);
                        ncm_hint_format(&e->hint, true, b);
                        ncm_buf_printf(b, ": %s\n", e->text ? e->text : "");
                        break;
                case NCM_NODE_EVENT_ALLOCATE:
                        ncm_buf_printf(b, "    %s: %s allocate with affinity ", who, e->provider);
                        ncm_hint_format(&e->hint, true, b);
                        ncm_buf_printf(b, ": %s%s\n",
                                       e->ok ? "" : "failed: ", e->text ? e->text : "");
                        for (size_t k = 0; k < e->n_steps; k++)
                                ncm_buf_printf(b, "      %s\n", e->steps[k]);
                        break;
                }
        }
}

static void human_admit(ncm_buf *b, size_t step, const ncm_pod *pod, const ncm_node_admission *a,
                        bool explain)
{
        ncm_buf_printf(b, "step %zu: admit ", step);
        put_pod(b, pod->name, pod->uid);
        if (!a->admitted) {
                ncm_buf_printf(b, ": rejected: %s: %s\n", a->reason, a->message);
        } else {
                ncm_buf_puts(b, ": admitted:");
                for (size_t i = 0; i < a->n_containers; i++) {
                        const ncm_node_container_result *c = &a->containers[i];
                        ncm_buf_printf(b, "%s %s%s %s ", i ? ";" : "", c->name,
                                       c->sidecar ? " (sidecar)"
                                       : c->init  ? " (init)"
                                                  : "",
                                       c->exclusive ? "exclusive" : "shared");
                        ncm_cpuset_format_list_buf(c->cpus, b);
                        ncm_buf_puts(b, " (");
                        put_numa(b, c->numa, c->n_numa);
                        ncm_buf_putc(b, ')');
                        for (size_t k = 0; k < c->n_devices; k++) {
                                ncm_buf_printf(b, " %s=", c->devices[k].resource);
                                for (size_t q = 0; q < c->devices[k].n_ids; q++)
                                        ncm_buf_printf(b, "%s%s", q ? "," : "",
                                                       c->devices[k].ids[q]);
                        }
                }
                ncm_buf_putc(b, '\n');
        }
        if (explain)
                human_events(b, a);
}

/* ------------------------------------------------------------------------------------------
 * The run
 */

static void human_step_pod(ncm_buf *b, const ncm_node *n, const char *uid, const char *name)
{
        put_pod(b, name ? name : ncm_node_pod_name(n, uid), uid);
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
                switch (st->kind) {
                case NCM__STEP_ADMIT: {
                        ncm_autoptr(ncm_node_admission) a = NULL;
                        r = ncm_node_admit(n, st->pod, o->explain ? NCM_NODE_EXPLAIN : 0, &a, err);
                        if (r < 0)
                                return ncm_error_prefix(err, "%s.admit", st->path);
                        if (a->admitted)
                                sum.admitted++;
                        else
                                sum.rejected++;
                        if (o->json)
                                json_admit(out, i, st->pod, a, o->explain);
                        else
                                human_admit(out, i, st->pod, a, o->explain);
                        break;
                }
                case NCM__STEP_REMOVE: {
                        const char *name = ncm_node_pod_name(n, st->pod_uid);
                        ncm_autofree char *pname = name ? strdup(name) : NULL;
                        r = ncm_node_remove_container(n, st->pod_uid, st->container, released, err);
                        if (r < 0)
                                return ncm_error_prefix(err, "%s.remove", st->path);
                        if (o->json) {
                                ncm_buf_printf(out,
                                               "{\"step\": %zu, \"op\": \"remove\", \"pod\": ", i);
                                json_str(out, st->pod_uid);
                                ncm_buf_puts(out, ", \"container\": ");
                                json_str(out, st->container);
                                ncm_buf_printf(out, ", \"removed\": %s, \"released\": ",
                                               r > 0 ? "true" : "false");
                                json_cpus(out, released);
                                ncm_buf_puts(out, "}\n");
                        } else {
                                ncm_buf_printf(out, "step %zu: remove ", i);
                                human_step_pod(out, n, st->pod_uid, pname);
                                ncm_buf_printf(out, " container %s: ", st->container);
                                if (r == 0)
                                        ncm_buf_puts(out, "nothing to remove\n");
                                else if (ncm_cpuset_is_empty(released))
                                        ncm_buf_puts(out, "removed, no CPUs released\n");
                                else {
                                        ncm_buf_puts(out, "released ");
                                        ncm_cpuset_format_list_buf(released, out);
                                        ncm_buf_puts(out, " to the shared pool\n");
                                }
                        }
                        break;
                }
                case NCM__STEP_REMOVE_POD: {
                        const char *name = ncm_node_pod_name(n, st->pod_uid);
                        ncm_autofree char *pname = name ? strdup(name) : NULL;
                        r = ncm_node_remove_pod(n, st->pod_uid, released, err);
                        if (r < 0)
                                return ncm_error_prefix(err, "%s.removePod", st->path);
                        if (o->json) {
                                ncm_buf_printf(out,
                                               "{\"step\": %zu, \"op\": \"removePod\", \"pod\": ",
                                               i);
                                json_str(out, st->pod_uid);
                                ncm_buf_printf(out, ", \"removed\": %s, \"released\": ",
                                               r > 0 ? "true" : "false");
                                json_cpus(out, released);
                                ncm_buf_puts(out, "}\n");
                        } else {
                                ncm_buf_printf(out, "step %zu: removePod ", i);
                                human_step_pod(out, n, st->pod_uid, pname);
                                ncm_buf_puts(out, ": ");
                                if (r == 0)
                                        ncm_buf_puts(out, "nothing to remove\n");
                                else if (ncm_cpuset_is_empty(released))
                                        ncm_buf_puts(out, "removed, no CPUs released\n");
                                else {
                                        ncm_buf_puts(out, "released ");
                                        ncm_cpuset_format_list_buf(released, out);
                                        ncm_buf_puts(out, " to the shared pool\n");
                                }
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
                        break;
                }
                }
                sum.steps++;
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
