/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's state for people and tools: the state line (the CPU state and the device
 * assignments as JSON) and the CPU map (socket, NUMA node, core; who holds each CPU; the shared
 * pool; the devices).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/node-resize.h>
#include "node-internal.h"

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

/* ------------------------------------------------------------------------------------------
 * An admission's result, as a JSON line or for people (also the simulator's admit steps)
 */

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

/*
 * {"cpu": [hints]}: each resource's hints, a described list paged (the first
 * NCM_NODE_EXPLAIN_HINTS_MAX). When a list is cut, "total" follows: {"cpu": 65535} (null for
 * one that cannot be counted: devices on several nodes touching more than 24 nodes).
 */
static void json_hints(ncm_buf *b, const ncm_tm_hints *h)
{
        bool cut = false;

        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < h->n; i++) {
                ncm_hint_list l = NCM_HINT_LIST_INIT;
                uint64_t total = 0;
                if (i)
                        ncm_buf_puts(b, ", ");
                json_str(b, h->res[i].resource);
                ncm_buf_puts(b, ": ");
                if (ncm_hint_page(&h->res[i].list, h->res[i].desc, 0, NCM_NODE_EXPLAIN_HINTS_MAX,
                                  &l, &total, NULL) < 0) {
                        ncm_hint_list_done(&l);
                        ncm_buf_puts(b, "null");
                        continue;
                }
                if (l.nil) {
                        ncm_buf_puts(b, "null");
                        continue;
                }
                cut = cut || total > l.n;
                ncm_buf_putc(b, '[');
                for (size_t j = 0; j < l.n; j++) {
                        if (j)
                                ncm_buf_puts(b, ", ");
                        json_hint(b, &l.hints[j]);
                }
                ncm_buf_putc(b, ']');
                ncm_hint_list_done(&l);
        }
        ncm_buf_putc(b, '}');
        if (!cut)
                return;
        ncm_buf_puts(b, ", \"total\": {");
        for (size_t i = 0, k = 0; i < h->n; i++) {
                uint64_t total = 0;
                ncm_hint_list l = NCM_HINT_LIST_INIT;
                int r;
                if (!h->res[i].desc)
                        continue;
                r = ncm_hint_page(&h->res[i].list, h->res[i].desc, 0, NCM_NODE_EXPLAIN_HINTS_MAX,
                                  &l, &total, NULL);
                ncm_hint_list_done(&l);
                if (r < 0 || total <= NCM_NODE_EXPLAIN_HINTS_MAX)
                        continue;
                ncm_buf_puts(b, k++ ? ", " : "");
                json_str(b, h->res[i].resource);
                if (r == 1)
                        ncm_buf_puts(b, ": null");
                else
                        ncm_buf_printf(b, ": %llu", (unsigned long long)total);
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
                        /* notes on the hints (the memory manager's group rule) */
                        for (size_t k = 0; k < e->n_steps; k++) {
                                ncm_buf_puts(b, k ? ", " : ", \"notes\": [");
                                json_str(b, e->steps[k]);
                        }
                        if (e->n_steps)
                                ncm_buf_putc(b, ']');
                        break;
                case NCM_NODE_EVENT_MERGE:
                        ncm_buf_puts(b, ", \"merged\": ");
                        json_hint(b, &e->hint);
                        ncm_buf_printf(b, ", \"admit\": %s, \"why\": ", e->ok ? "true" : "false");
                        json_str(b, e->text);
                        /* notes on a refusal (a resize's: what the containers would need) */
                        for (size_t k = 0; k < e->n_steps; k++) {
                                ncm_buf_puts(b, k ? ", " : ", \"notes\": [");
                                json_str(b, e->steps[k]);
                        }
                        if (e->n_steps)
                                ncm_buf_putc(b, ']');
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

/* An admission's or a resize's line: OP, its verdict under KEY; a resize always lists its
 * containers (as they stand after it, or as before it when refused). */
static void format_decision_json(ncm_buf *b, long step, const char *op, const char *key,
                                 const ncm_pod *pod, const ncm_node_admission *a, bool explain)
{
        bool list = a->admitted || strcmp(op, "resize") == 0;

        if (step >= 0)
                ncm_buf_printf(b, "{\"step\": %ld, \"op\": \"%s\", \"pod\": ", step, op);
        else
                ncm_buf_printf(b, "{\"op\": \"%s\", \"pod\": ", op);
        json_str(b, pod->uid);
        ncm_buf_printf(b, ", \"%s\": %s", key, a->admitted ? "true" : "false");
        if (!a->admitted) {
                ncm_buf_puts(b, ", \"reason\": ");
                json_str(b, a->reason);
                ncm_buf_puts(b, ", \"message\": ");
                json_str(b, a->message);
        }
        if (list) {
                /* a run of containers on the same CPUs (the shared pool) writes them once */
                ncm_buf same = NCM_BUF_INIT;
                const ncm_node_container_result *prev = NULL;
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
                        ncm_buf_puts(b, c->exclusive ? ", \"exclusive\": true, \"cpus\": "
                                                     : ", \"exclusive\": false, \"cpus\": ");
                        if (!prev || !ncm_cpuset_equal(prev->cpus, c->cpus)) {
                                same.len = 0;
                                json_cpus(&same, c->cpus);
                                ncm_buf_puts(&same, ", \"numa\": ");
                                json_idlist(&same, c->numa, c->n_numa);
                        }
                        prev = c;
                        ncm_buf_append(b, same.data, same.len);
                        ncm_buf_puts(b, ", \"devices\": ");
                        json_devices(b, c->devices, c->n_devices);
                        if (c->n_memory) {
                                ncm_buf_puts(b, ", \"memory\": ");
                                ncm__node_mem_format_blocks_json(b, c->memory, c->n_memory);
                        }
                        ncm_buf_putc(b, '}');
                }
                ncm_buf_putc(b, ']');
                ncm_buf_done(&same);
        }
        if (explain)
                json_events(b, a);
        ncm_buf_puts(b, "}\n");
}

void ncm_node_format_admission_json(ncm_buf *b, long step, const ncm_pod *pod,
                                    const ncm_node_admission *a, bool explain)
{
        format_decision_json(b, step, "admit", "admitted", pod, a, explain);
}

void ncm_node_format_resize_json(ncm_buf *b, long step, const ncm_pod *pod,
                                 const ncm_node_admission *a, bool explain)
{
        format_decision_json(b, step, "resize", "resized", pod, a, explain);
}

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
                ncm_hint_list l = NCM_HINT_LIST_INIT;
                uint64_t total = 0;
                int r;
                ncm_buf_printf(b, "%s%s:", i ? "; " : "", h->res[i].resource);
                r = ncm_hint_page(&h->res[i].list, h->res[i].desc, 0, NCM_NODE_EXPLAIN_HINTS_MAX,
                                  &l, &total, NULL);
                if (r < 0) {
                        ncm_hint_list_done(&l);
                        ncm_buf_puts(b, " (hints not shown: out of memory)");
                        continue;
                }
                if (l.nil)
                        ncm_buf_puts(b, " no preference");
                else if (total == 0)
                        ncm_buf_puts(b, " none (cannot be satisfied)");
                for (size_t j = 0; j < l.n; j++) {
                        ncm_buf_putc(b, ' ');
                        ncm_hint_format(&l.hints[j], true, b);
                }
                if (total > l.n)
                        ncm_buf_printf(b, " … (%zu of %s%llu hints)", l.n, r ? "at least " : "",
                                       (unsigned long long)total);
                ncm_hint_list_done(&l);
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
                        for (size_t k = 0; k < e->n_steps; k++)
                                ncm_buf_printf(b, "      %s\n", e->steps[k]);
                        break;
                case NCM_NODE_EVENT_MERGE:
                        ncm_buf_printf(b, "    %s: merged ", who);
                        ncm_hint_format(&e->hint, true, b);
                        ncm_buf_printf(b, ": %s\n", e->text ? e->text : "");
                        for (size_t k = 0; k < e->n_steps; k++)
                                ncm_buf_printf(b, "      %s\n", e->steps[k]);
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

/* The containers of A for people: "; app exclusive 2-3 (NUMA 0) ..." */
static void containers_text(ncm_buf *b, const ncm_node_admission *a)
{
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
                                ncm_buf_printf(b, "%s%s", q ? "," : "", c->devices[k].ids[q]);
                }
                ncm__node_mem_format_blocks_text(b, c->memory, c->n_memory);
        }
}

void ncm_node_format_admission_text(ncm_buf *b, long step, const ncm_pod *pod,
                                    const ncm_node_admission *a, bool explain)
{
        if (step >= 0)
                ncm_buf_printf(b, "step %ld: ", step);
        ncm_buf_puts(b, "admit ");
        put_pod(b, pod->name, pod->uid);
        if (!a->admitted) {
                ncm_buf_printf(b, ": rejected: %s: %s\n", a->reason, a->message);
        } else {
                ncm_buf_puts(b, ": admitted:");
                containers_text(b, a);
                ncm_buf_putc(b, '\n');
        }
        if (explain)
                human_events(b, a);
}

void ncm_node_format_resize_text(ncm_buf *b, long step, const ncm_pod *pod,
                                 const ncm_node_admission *a, bool explain)
{
        if (step >= 0)
                ncm_buf_printf(b, "step %ld: ", step);
        ncm_buf_puts(b, "resize ");
        put_pod(b, pod->name, pod->uid);
        if (!a->admitted)
                ncm_buf_printf(b, ": not resized: %s: %s\n", a->reason, a->message);
        else {
                ncm_buf_puts(b, ": resized:");
                containers_text(b, a);
                ncm_buf_putc(b, '\n');
        }
        if (explain)
                human_events(b, a);
}

void ncm_node_format_removal_json(ncm_buf *b, long step, const char *pod_uid, const char *container,
                                  int removed, const ncm_cpuset *released)
{
        const char *op = container ? "remove" : "removePod";

        if (step >= 0)
                ncm_buf_printf(b, "{\"step\": %ld, \"op\": \"%s\", \"pod\": ", step, op);
        else
                ncm_buf_printf(b, "{\"op\": \"%s\", \"pod\": ", op);
        json_str(b, pod_uid);
        if (container) {
                ncm_buf_puts(b, ", \"container\": ");
                json_str(b, container);
        }
        ncm_buf_printf(b, ", \"removed\": %s, \"released\": \"", removed > 0 ? "true" : "false");
        ncm_cpuset_format_list_buf(released, b);
        ncm_buf_puts(b, "\"}\n");
}

void ncm_node_format_removal_text(ncm_buf *b, long step, const char *pod_uid, const char *pod_name,
                                  const char *container, int removed, const ncm_cpuset *released)
{
        if (step >= 0)
                ncm_buf_printf(b, "step %ld: ", step);
        ncm_buf_puts(b, container ? "remove " : "removePod ");
        put_pod(b, pod_name, pod_uid);
        if (container)
                ncm_buf_printf(b, " container %s", container);
        if (removed <= 0)
                ncm_buf_puts(b, ": nothing to remove\n");
        else if (ncm_cpuset_is_empty(released))
                ncm_buf_puts(b, ": removed, no CPUs released\n");
        else {
                ncm_buf_puts(b, ": released ");
                ncm_cpuset_format_list_buf(released, b);
                ncm_buf_puts(b, " to the shared pool\n");
        }
}

/* ------------------------------------------------------------------------------------------
 * The state
 */

static int cmp_str(const void *x, const void *y)
{
        return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every device assignment: {"<pod>": {"<container>": {"<resource>": ["<id>", ...]}}}, sorted. */
static void json_state_devices(ncm_buf *b, const ncm_node *n)
{
        ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
        const char *pod = NULL, *ctr = NULL;

        if (ncm_devmgr_to_checkpoint(ncm_node_devmgr(n), &cp, NULL) < 0) {
                ncm_buf_puts(b, "{}");
                return;
        }
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < cp->n_entries; i++) {
                const ncm_devmgr_checkpoint_entry *e = &cp->entries[i];
                size_t nids = 0, k = 0;
                char **ids;

                if (!pod || strcmp(pod, e->pod_uid) != 0) {
                        ncm_buf_puts(b, pod ? "}}, " : "");
                        json_str(b, e->pod_uid);
                        ncm_buf_puts(b, ": {");
                        pod = e->pod_uid;
                        ctr = NULL;
                }
                if (!ctr || strcmp(ctr, e->container_name) != 0) {
                        ncm_buf_puts(b, ctr ? "}, " : "");
                        json_str(b, e->container_name);
                        ncm_buf_puts(b, ": {");
                        ctr = e->container_name;
                } else {
                        ncm_buf_puts(b, ", ");
                }
                json_str(b, e->resource_name);
                ncm_buf_puts(b, ": [");
                for (size_t j = 0; j < e->n_device_ids; j++)
                        nids += e->device_ids[j].n_ids;
                ids = calloc(nids + 1, sizeof(*ids));
                for (size_t j = 0; ids && j < e->n_device_ids; j++)
                        for (size_t q = 0; q < e->device_ids[j].n_ids; q++)
                                ids[k++] = e->device_ids[j].ids[q];
                if (ids)
                        qsort(ids, k, sizeof(*ids), cmp_str);
                for (size_t j = 0; j < k; j++) {
                        if (j && strcmp(ids[j], ids[j - 1]) == 0)
                                continue; /* a device on several NUMA nodes is listed under each */
                        ncm_buf_puts(b, j ? ", " : "");
                        json_str(b, ids[j]);
                }
                free(ids);
                ncm_buf_putc(b, ']');
        }
        ncm_buf_puts(b, pod ? "}}}" : "}");
}

void ncm_node_format_state_json(const ncm_node *n, ncm_buf *b)
{
        const ncm_cpu_state *s = ncm_node_cpu_state(n);

        ncm_buf_puts(b, "{\"op\": \"state\", \"defaultCpuSet\": ");
        json_cpus(b, ncm_cpu_state_default(s));
        ncm_buf_puts(b, ", \"entries\": {");
        for (size_t p = 0; p < ncm_cpu_state_num_pods(s); p++) {
                if (p)
                        ncm_buf_puts(b, ", ");
                json_str(b, ncm_cpu_state_pod_uid(s, p));
                ncm_buf_puts(b, ": {");
                for (size_t c = 0; c < ncm_cpu_state_pod_num_containers(s, p); c++) {
                        if (c)
                                ncm_buf_puts(b, ", ");
                        json_str(b, ncm_cpu_state_container_name(s, p, c));
                        ncm_buf_puts(b, ": ");
                        json_cpus(b, ncm_cpu_state_container_cpus(s, p, c));
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, '}');
        if (n->devices.n) {
                /* the device manager's assignments: pod -> container -> resource -> ids */
                ncm_buf_puts(b, ", \"devices\": ");
                json_state_devices(b, n);
        }
        ncm__node_mem_format_state_json(n, b);
        ncm_buf_puts(b, "}\n");
}

/* Owner labels of each CPU for the map: "reserved", "shared", "<pod>/<container>[+...]". */
typedef struct cpu_label {
        int cpu;
        char *text;
} cpu_label;

static const char *pod_label(const ncm_node *n, const char *uid)
{
        const char *name = ncm_node_pod_name(n, uid);
        return name && name[0] ? name : uid;
}

static int label_cpus(const ncm_node *n, char **labels, size_t max_cpu)
{
        const ncm_cpu_state *s = ncm_node_cpu_state(n);
        const ncm_cpu_policy *p = ncm_node_cpu_policy(n);
        const ncm_cpuset *reserved = ncm_cpu_policy_reserved(p);
        bool none = strcmp(ncm_cpu_policy_name(p), "none") == 0;
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        const char *pu, *cn;
        const ncm_cpuset *cs;

        while (ncm_cpu_state_next(s, &it, &pu, &cn, &cs)) {
                NCM_CPUSET_FOREACH(cpu, cs)
                {
                        char *old, *nl = NULL;
                        if ((size_t)cpu >= max_cpu)
                                continue;
                        old = labels[cpu];
                        if (old && strncmp(old, pod_label(n, pu), strlen(pod_label(n, pu))) == 0 &&
                            old[strlen(pod_label(n, pu))] == '/') {
                                if (asprintf(&nl, "%s+%s", old, cn) < 0)
                                        return -ENOMEM;
                        } else if (old) {
                                if (asprintf(&nl, "%s,%s/%s", old, pod_label(n, pu), cn) < 0)
                                        return -ENOMEM;
                        } else if (asprintf(&nl, "%s/%s", pod_label(n, pu), cn) < 0) {
                                return -ENOMEM;
                        }
                        free(old);
                        labels[cpu] = nl;
                }
        }
        for (size_t cpu = 0; cpu < max_cpu; cpu++) {
                const char *t = NULL;
                if (labels[cpu] || !ncm_topo_cpu(ncm_node_topo(n), (int)cpu))
                        continue;
                if (n->isolated && ncm_cpuset_isset(n->isolated, (int)cpu) &&
                    (none || !ncm_cpuset_isset(reserved, (int)cpu)))
                        t = "isolated"; /* isolatedCPUs: out of the shared pool */
                else if (none)
                        t = "shared";
                else if (ncm_cpuset_isset(reserved, (int)cpu))
                        t = "reserved";
                else if (ncm_cpuset_isset(ncm_cpu_state_default(s), (int)cpu))
                        t = "shared";
                else
                        t = "-";
                labels[cpu] = strdup(t);
                if (!labels[cpu])
                        return -ENOMEM;
        }
        return 0;
}

/* Each device: its NUMA nodes and who holds it (or free / unhealthy). */
static void human_devices(ncm_buf *b, const ncm_node *n)
{
        const ncm_node_devices *t = &n->devices;
        ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
        int w = 0;

        if (!t->n || ncm_devmgr_to_checkpoint(ncm_node_devmgr(n), &cp, NULL) < 0)
                return;
        for (size_t i = 0; i < t->n; i++)
                if ((int)strlen(t->v[i].id) > w)
                        w = (int)strlen(t->v[i].id);
        ncm_buf_puts(b, "devices:\n");
        for (size_t i = 0; i < t->n; i++) {
                const ncm_node_device *d = &t->v[i];
                ncm_buf holders = NCM_BUF_INIT, numa = NCM_BUF_INIT;

                if (i == 0 || strcmp(t->v[i - 1].resource, d->resource) != 0)
                        ncm_buf_printf(b, "  %s\n", d->resource);
                for (size_t e = 0; e < cp->n_entries; e++) {
                        const ncm_devmgr_checkpoint_entry *en = &cp->entries[e];
                        bool has = false;
                        if (strcmp(en->resource_name, d->resource) != 0)
                                continue;
                        for (size_t j = 0; j < en->n_device_ids && !has; j++)
                                for (size_t q = 0; q < en->device_ids[j].n_ids && !has; q++)
                                        has = strcmp(en->device_ids[j].ids[q], d->id) == 0;
                        if (has)
                                ncm_buf_printf(&holders, "%s%s/%s", holders.len ? "," : "",
                                               pod_label(n, en->pod_uid), en->container_name);
                }
                if (d->topology && d->numa) {
                        ncm_buf_puts(&numa, "NUMA ");
                        ncm_bitmask_format_ids(d->numa, &numa);
                } else {
                        ncm_buf_puts(&numa, "no NUMA node");
                }
                ncm_buf_printf(b, "    %-*s  %-12s %s%s\n", w, d->id, numa.data,
                               holders.len  ? holders.data
                               : d->healthy ? "free"
                                            : "",
                               d->healthy    ? ""
                               : holders.len ? " (unhealthy)"
                                             : "unhealthy");
                ncm_buf_done(&holders);
                ncm_buf_done(&numa);
        }
}

static int cmp_info(const void *x, const void *y)
{
        const ncm_cpu_info *a = x, *b = y;
        if (a->socket != b->socket)
                return a->socket < b->socket ? -1 : 1;
        if (a->numa != b->numa)
                return a->numa < b->numa ? -1 : 1;
        if (a->core != b->core)
                return a->core < b->core ? -1 : 1;
        return a->cpu < b->cpu ? -1 : a->cpu > b->cpu;
}

int ncm_node_format_cpu_map(const ncm_node *n, ncm_buf *b)
{
        const ncm_topo *t = ncm_node_topo(n);
        const ncm_cpu_policy *p = ncm_node_cpu_policy(n);
        const ncm_node_config *cfg = ncm_node_get_config(n);
        size_t ncpu = 0, max_cpu;
        const ncm_cpu_info *cpus = ncm_topo_cpus(t, &ncpu);
        ncm_cpu_info *sorted;
        char **labels;
        int width = 0, idw = 1, r = 0;

        max_cpu = ncpu ? (size_t)cpus[ncpu - 1].cpu + 1 : 0;
        labels = calloc(max_cpu + 1, sizeof(*labels));
        sorted = calloc(ncpu + 1, sizeof(*sorted));
        if (!labels || !sorted) {
                free(labels);
                free(sorted);
                return -ENOMEM;
        }
        r = label_cpus(n, labels, max_cpu);
        if (r < 0)
                goto out;
        memcpy(sorted, cpus, ncpu * sizeof(*sorted));
        qsort(sorted, ncpu, sizeof(*sorted), cmp_info);
        for (size_t i = 0; i < ncpu; i++) {
                int w = (int)strlen(labels[sorted[i].cpu]);
                if (w > width)
                        width = w;
        }
        for (size_t m = max_cpu; m >= 10; m /= 10)
                idw++;

        ncm_buf_printf(b, "\nCPU map: cpuManagerPolicy %s", ncm_cpu_policy_name(p));
        if (!ncm_cpuset_is_empty(ncm_cpu_policy_reserved(p))) {
                ncm_buf_puts(b, " (reserved ");
                ncm_cpuset_format_list_buf(ncm_cpu_policy_reserved(p), b);
                ncm_buf_putc(b, ')');
        }
        ncm_buf_printf(b, ", topologyManagerPolicy %s, topologyManagerScope %s\n",
                       ncm_node_config_tm_policy(cfg), ncm_node_config_tm_scope(cfg));
        for (size_t i = 0; i < ncpu;) {
                const ncm_cpu_info *ci = &sorted[i];
                if (i == 0 || sorted[i - 1].socket != ci->socket)
                        ncm_buf_printf(b, "socket %d\n", ci->socket);
                if (i == 0 || sorted[i - 1].socket != ci->socket || sorted[i - 1].numa != ci->numa)
                        ncm_buf_printf(b, "  NUMA node %d\n", ci->numa);
                ncm_buf_printf(b, "    core %*d:", idw, ci->core);
                {
                        size_t j = i;
                        while (j < ncpu && sorted[j].socket == ci->socket &&
                               sorted[j].numa == ci->numa && sorted[j].core == ci->core) {
                                bool last = j + 1 >= ncpu || sorted[j + 1].core != ci->core ||
                                            sorted[j + 1].numa != ci->numa ||
                                            sorted[j + 1].socket != ci->socket;
                                ncm_buf_printf(b, "  cpu %*d %-*s", idw, sorted[j].cpu,
                                               last ? 0 : width, labels[sorted[j].cpu]);
                                j++;
                        }
                        i = j;
                }
                ncm_buf_putc(b, '\n');
        }
        if (strcmp(ncm_cpu_policy_name(p), "none") == 0 && !n->isolated) {
                ncm_buf_puts(b, "none policy: containers are not pinned and run on every CPU\n");
        } else if (strcmp(ncm_cpu_policy_name(p), "none") == 0) {
                ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();
                if (!pool) {
                        r = -ENOMEM;
                        goto out;
                }
                ncm_node_shared_pool(n, pool);
                ncm_buf_puts(b, "none policy: containers run on ");
                ncm_cpuset_format_list_buf(pool, b);
                ncm_buf_putc(b, '\n');
        } else {
                const ncm_cpu_options *o = ncm_cpu_policy_options(p);
                ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();
                if (!pool) {
                        r = -ENOMEM;
                        goto out;
                }
                ncm_node_shared_pool(n, pool);
                ncm_buf_puts(b, "shared pool: ");
                ncm_cpuset_format_list_buf(pool, b);
                if (!ncm_cpuset_is_empty(ncm_cpu_policy_reserved(p)))
                        ncm_buf_puts(b, o->strict_cpu_reservation ? " (reserved CPUs excluded: "
                                                                    "strict-cpu-reservation)"
                                                                  : " (reserved CPUs included)");
                ncm_buf_putc(b, '\n');
        }
        r = ncm__node_format_isolation_text(n, b);
        if (r < 0)
                goto out;
        ncm__node_mem_format_map(n, b);
        human_devices(b, n);
out:
        for (size_t i = 0; i < max_cpu; i++)
                free(labels[i]);
        free(labels);
        free(sorted);
        return r;
}

void ncm_node_format_status_json(const ncm_node *n, ncm_buf *b)
{
        const ncm_cpu_policy *p = ncm_node_cpu_policy(n);
        const ncm_cpu_state *s = ncm_node_cpu_state(n);
        const ncm_topo *t = ncm_node_topo(n);
        ncm_autoptr(ncm_cpuset) shared = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) cpus = ncm_cpuset_new();
        size_t ncpu = 0;
        const ncm_cpu_info *info = ncm_topo_cpus(t, &ncpu);

        if (!shared || !cpus) {
                b->oom = true; /* the caller sees it in ncm_buf_failed() */
                return;
        }
        ncm_node_format_state_json(n, b);
        if (b->len >= 2)
                b->len -= 2; /* reopen the object: "}\n" */
        ncm_node_shared_pool(n, shared);
        ncm_buf_puts(b, ", \"policy\": ");
        json_str(b, ncm_cpu_policy_name(p));
        ncm_buf_puts(b, ", \"reserved\": ");
        json_cpus(b, ncm_cpu_policy_reserved(p));
        ncm_buf_puts(b, ", \"sharedPool\": ");
        json_cpus(b, shared);
        ncm__node_format_isolation_json(n, b);
        ncm_buf_puts(b, ", \"cpus\": [");
        for (size_t i = 0; i < ncpu; i++) {
                const ncm_cpu_info *ci = &info[i];
                ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
                const char *pu, *cn;
                const ncm_cpuset *cs;
                bool held = false;
                ncm_buf_printf(b, "%s{\"cpu\": %d, \"socket\": %d, \"numa\": %d, \"core\": %d",
                               i ? ", " : "", ci->cpu, ci->socket, ci->numa, ci->core);
                if (ncm_cpuset_isset(ncm_topo_isolated_cpus(t), ci->cpu))
                        ncm_buf_puts(b, ", \"isolated\": true");
                if (ncm_cpuset_isset(ncm_topo_nohz_full_cpus(t), ci->cpu))
                        ncm_buf_puts(b, ", \"nohz_full\": true");
                while (ncm_cpu_state_next(s, &it, &pu, &cn, &cs)) {
                        if (!ncm_cpuset_isset(cs, ci->cpu))
                                continue;
                        ncm_buf_puts(b, held ? ", {\"pod\": "
                                             : ", \"use\": \"exclusive\", "
                                               "\"holders\": [{\"pod\": ");
                        json_str(b, pu);
                        ncm_buf_puts(b, ", \"name\": ");
                        json_str(b, ncm_node_pod_name(n, pu) ? ncm_node_pod_name(n, pu) : "");
                        ncm_buf_puts(b, ", \"container\": ");
                        json_str(b, cn);
                        ncm_buf_putc(b, '}');
                        held = true;
                }
                if (held)
                        ncm_buf_puts(b, "]}");
                else
                        ncm_buf_printf(b, ", \"use\": \"%s\"}",
                                       strcmp(ncm_cpu_policy_name(p),
                                              "none") != 0 && ncm_cpuset_isset(ncm_cpu_policy_reserved(p),
                                                                               ci->cpu)
                                                       ? "reserved"
                                       : ncm_cpuset_isset(shared, ci->cpu) ? "shared"
                                       : n->isolated && ncm_cpuset_isset(n->isolated, ci->cpu)
                                                       ? "isolated"
                                                       : "free");
        }
        ncm_buf_puts(b, "], \"pods\": [");
        for (size_t i = 0; i < ncm_node_num_pods(n); i++) {
                const ncm_pod *pod = ncm_node_pod_at(n, i);
                size_t total = pod->n_init_containers + pod->n_containers;
                ncm_buf_puts(b, i ? ", {\"uid\": " : "{\"uid\": ");
                json_str(b, pod->uid);
                ncm_buf_puts(b, ", \"name\": ");
                json_str(b, pod->name);
                ncm_buf_puts(b, ", \"namespace\": ");
                json_str(b, pod->ns);
                ncm_buf_printf(b, ", \"qos\": \"%s\", \"containers\": [",
                               ncm_qos_class_name(pod->qos));
                for (size_t k = 0; k < total; k++) {
                        const ncm_container *c =
                                        k < pod->n_init_containers
                                                        ? &pod->init_containers[k]
                                                        : &pod->containers[k -
                                                                           pod->n_init_containers];
                        int ex = ncm_node_container_cpus(n, pod->uid, c->name, cpus);
                        ncm_buf_puts(b, k ? ", {\"name\": " : "{\"name\": ");
                        json_str(b, c->name);
                        if (c->sidecar)
                                ncm_buf_puts(b, ", \"sidecar\": true");
                        else if (c->init)
                                ncm_buf_puts(b, ", \"init\": true");
                        ncm_buf_printf(b, ", \"exclusive\": %s, \"cpus\": ",
                                       ex > 0 ? "true" : "false");
                        json_cpus(b, cpus);
                        ncm__node_format_knobs_json(n, pod->uid, c->name, b);
                        if (ncm_node_container_removed(n, pod->uid, c->name))
                                ncm_buf_puts(b, ", \"removed\": true");
                        ncm_buf_putc(b, '}');
                }
                ncm_buf_puts(b, "]}");
        }
        ncm_buf_puts(b, "]}\n");
}
