/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --explain: the events of an admission (each provider's hints, the merge and why its result
 * won, each allocation and how the allocator chose), recorded while the topology manager runs
 * the admission: the hints and the merge from the topology manager's trace, the allocations by
 * the providers through the transaction their calls carry.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "node-internal.h"

ncm_node_event *ncm__node_event_add(node_txn *t, ncm_node_event_kind kind, const char *container,
                                    const char *provider)
{
        ncm_node_event *e;

        if (ncm__array_grow(t->ev, t->cap_ev, t->n_ev) < 0)
                return NULL;
        e = &t->ev[t->n_ev];
        *e = (ncm_node_event){.kind = kind, .provider = provider};
        e->hints = (ncm_tm_hints)NCM_TM_HINTS_INIT;
        if (container && !(e->container = strdup(container)))
                return NULL;
        t->n_ev++;
        return e;
}

void ncm__node_event_done(ncm_node_event *e)
{
        free(e->container);
        ncm_tm_hints_done(&e->hints);
        free(e->text);
        for (size_t i = 0; i < e->n_steps; i++)
                free(e->steps[i]);
        free(e->steps);
}

int ncm__node_event_step(ncm_node_event *e, const char *fmt, ...)
{
        va_list ap;
        char *s = NULL;
        char **nv;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        if (!s)
                return -ENOMEM;
        nv = realloc(e->steps, (e->n_steps + 1) * sizeof(*nv));
        if (!nv) {
                free(s);
                return -ENOMEM;
        }
        e->steps = nv;
        e->steps[e->n_steps++] = s;
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * Why the merge chose its hint, told from what the topology manager's trace reported
 */

static const char *const provider_names[NODE_N_PROVIDERS] = {
                [NODE_PROVIDER_DEVICES] = "devices",
                [NODE_PROVIDER_CPU] = "cpu",
                [NODE_PROVIDER_MEMORY] = "memory",
                [NODE_PROVIDER_DRA] = "dra",
};

static void merge_reset(node_txn *t)
{
        for (size_t i = 0; i < t->n_lists; i++) {
                free(t->lists[i].resource);
                free(t->lists[i].hints);
                ncm_hint_desc_free(t->lists[i].desc);
        }
        t->n_lists = 0;
        t->n_cand = 0;
        t->cand_more = false;
        memset(t->shown, 0, sizeof(t->shown));
}

void ncm__node_txn_done(node_txn *t)
{
        merge_reset(t);
        free(t->lists);
        free(t->cand);
        for (size_t i = 0; i < t->n_ev; i++)
                ncm__node_event_done(&t->ev[i]);
        free(t->ev);
        t->ev = NULL;
        t->n_ev = t->cap_ev = 0;
        t->lists = NULL;
        t->cand = NULL;
        t->cap_lists = t->cap_cand = 0;
}

int ncm__node_explain_begin(node_txn *t)
{
        const ncm_tm_policy *pol = ncm_tm_get_policy(t->n->tm);
        ncm_node_event *e;

        if (!ncm_tm_policy_is_none(pol))
                return 0;
        e = ncm__node_event_add(t, NCM_NODE_EVENT_MERGE, NULL, NULL);
        if (!e)
                return -ENOMEM;
        e->hint = (ncm_hint){.any = true, .preferred = false};
        e->ok = true;
        e->text = strdup("topology manager policy none: no hints are gathered or merged; "
                         "every container is allocated without NUMA affinity");
        return e->text ? 0 : -ENOMEM;
}

static const char *list_name(const node_merge_list *l)
{
        return l->resource ? l->resource : provider_names[l->provider];
}

/* How many of a described list's preferred hints an explanation names, and looks through. */
#define PREFERRED_SHOWN 16
#define PREFERRED_LOOKED_AT 4096

/*
 * The preferred hints of list L, as " [0]* [1]*"; " nothing preferred" when it has none. A
 * described list can have very many: the first PREFERRED_SHOWN are named, in the kubelet's
 * order, then " …" when more may follow (the walk stops after PREFERRED_LOOKED_AT hints).
 */
static void put_preferred(const node_merge_list *l, bool snn, ncm_buf *b)
{
        bool none = true;

        if (l->desc) {
                ncm_hint_desc_iter it;
                ncm_hint h;
                int shown = 0, looked = 0, last = ncm_hint_desc_preferred_size(l->desc);
                bool more = false;
                ncm_hint_desc_iter_init(&it, l->desc);
                while (ncm_hint_desc_iter_next(&it, &h)) {
                        /* past the preferred size only socket alignment prefers a hint */
                        if (!ncm_hint_desc_socket_aligned(l->desc) &&
                            ncm_bitmask_count(h.numa) > last)
                                break;
                        if (++looked > PREFERRED_LOOKED_AT ||
                            (h.preferred && shown == PREFERRED_SHOWN)) {
                                more = true;
                                break;
                        }
                        if (!h.preferred)
                                continue;
                        ncm_buf_putc(b, ' ');
                        ncm_hint_format(&h, false, b);
                        shown++;
                        none = false;
                }
                if (more)
                        ncm_buf_puts(b, " …");
                none = none && !more;
        }
        for (size_t j = 0; j < l->n; j++) {
                if (!l->hints[j].preferred)
                        continue;
                ncm_buf_putc(b, ' ');
                ncm_hint_format(&l->hints[j], false, b);
                none = false;
        }
        if (none)
                ncm_buf_puts(b, snn ? " no preferred single-NUMA hint" : " nothing preferred");
}

/* The reasoning about the merged hint M over the lists and candidates recorded in T. */
static void merge_text(const node_txn *t, const ncm_tm_trace_event *m, ncm_buf *b)
{
        const char *policy = ncm_tm_policy_name(ncm_tm_get_policy(t->n->tm));
        bool snn = ncm_node_config_tm_policy_is_single_numa_node(t->n->cfg);
        bool emptied = false;

        for (size_t i = 0; i < t->n_lists; i++) {
                if (t->lists[i].kind == NCM_TM_LIST_UNSATISFIABLE)
                        ncm_buf_printf(b, "%s cannot be satisfied (no hint); ",
                                       list_name(&t->lists[i]));
                emptied = emptied || (t->lists[i].n == 0 && !t->lists[i].desc);
        }
        if (m->hint.preferred) {
                if (t->n_cand <= 1) {
                        ncm_buf_puts(b, "preferred by every resource");
                } else {
                        ncm_buf_puts(b, "preferred by every resource; of the candidates");
                        for (size_t c = 0; c < t->n_cand; c++) {
                                ncm_buf_puts(b, " [");
                                ncm_bitmask_format_ids(t->cand[c], b);
                                ncm_buf_putc(b, ']');
                        }
                        if (t->cand_more)
                                ncm_buf_puts(b, " …");
                        if (m->closest)
                                ncm_buf_printf(b,
                                               " it is the closest (fewest NUMA nodes, then "
                                               "lowest average distance %.1f, then lowest ids)",
                                               m->avg_distance);
                        else
                                ncm_buf_puts(b, " it is the narrowest (fewest NUMA nodes, then "
                                                "lowest ids)");
                }
                if (snn && m->hint.any)
                        ncm_buf_puts(b, "; it spans every NUMA node, which single-numa-node "
                                        "stores as no affinity");
        } else if (snn && emptied) {
                bool first = true;
                ncm_buf_puts(b, "single-numa-node keeps only preferred hints for one NUMA node "
                                "(or any), and none is left for");
                for (size_t i = 0; i < t->n_lists; i++) {
                        if (t->lists[i].n != 0 || t->lists[i].desc)
                                continue;
                        ncm_buf_printf(b, "%s %s", first ? "" : ",", list_name(&t->lists[i]));
                        first = false;
                }
                ncm_buf_puts(b, ": nothing to merge, the result is not preferred");
        } else {
                ncm_buf_puts(b, "no NUMA set is preferred by every resource (");
                for (size_t i = 0; i < t->n_lists; i++) {
                        ncm_buf_printf(b, "%s%s:", i ? "; " : "", list_name(&t->lists[i]));
                        put_preferred(&t->lists[i], snn, b);
                }
                ncm_buf_puts(b, "); the best merge that is not preferred is ");
                ncm_hint_format(&m->hint, false, b);
        }
        if (m->admit)
                ncm_buf_printf(b, "; %s admits it", policy);
        else
                ncm_buf_printf(b, "; %s admits only preferred hints: %s", policy,
                               NCM_TM_REASON_TOPOLOGY_AFFINITY);
}

static int on_hints(node_txn *t, const ncm_tm_trace_event *ev)
{
        const char *container = ev->call && ev->call->container ? ev->call->container->name : NULL;
        ncm_node_event *e;

        if (ev->provider >= NODE_N_PROVIDERS)
                return 0;
        /* A container without devices (or DRA devices): the device manager has no preference,
         * nothing to show (neither its hints nor its list in the merge's account). */
        if ((ev->provider == NODE_PROVIDER_DEVICES || ev->provider == NODE_PROVIDER_DRA) &&
            ev->hints->n == 0)
                return 0;
        /* Likewise the memory manager for a container it does not pin (and its None policy). */
        if (ev->provider == NODE_PROVIDER_MEMORY && ev->hints->n == 0)
                return 0;
        t->shown[ev->provider] = true;
        e = ncm__node_event_add(t, NCM_NODE_EVENT_HINTS, container, provider_names[ev->provider]);
        if (!e)
                return -ENOMEM;
        if (ev->provider == NODE_PROVIDER_MEMORY)
                ncm__node_mem_explain_hints(t->n, e);
        for (size_t i = 0; i < ev->hints->n; i++) {
                const ncm_tm_resource_hints *rh = &ev->hints->res[i];
                int r;
                uint64_t total = 0;
                /* a description is listed when its list is short (machines up to 8 NUMA
                 * nodes), else kept as it is: a few hundred bytes, however many hints */
                if (rh->desc && (ncm_hint_desc_count(rh->desc, &total, NULL) < 0 ||
                                 total > NCM_NODE_EXPLAIN_HINTS_MAX)) {
                        ncm_hint_desc *d = ncm_hint_desc_dup(rh->desc);
                        r = d ? ncm_tm_hints_add_desc(&e->hints, rh->resource, d, NULL) : -ENOMEM;
                } else if (rh->desc) {
                        ncm_hint_list *l;
                        r = ncm_tm_hints_add(&e->hints, rh->resource, NULL, 0, false, &l, NULL);
                        if (r >= 0)
                                r = ncm_hint_desc_materialize(rh->desc, NCM_NODE_EXPLAIN_HINTS_MAX,
                                                              l, NULL);
                } else {
                        r = ncm_tm_hints_add(&e->hints, rh->resource, rh->list.hints, rh->list.n,
                                             rh->list.nil, NULL, NULL);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int on_list(node_txn *t, const ncm_tm_trace_event *ev)
{
        node_merge_list *l;

        if (ev->provider >= NODE_N_PROVIDERS || !t->shown[ev->provider])
                return 0;
        if (ncm__array_grow(t->lists, t->cap_lists, t->n_lists) < 0)
                return -ENOMEM;
        l = &t->lists[t->n_lists];
        *l = (node_merge_list){.provider = ev->provider, .kind = ev->list};
        if (ev->resource && !(l->resource = strdup(ev->resource)))
                return -ENOMEM;
        if (ev->list_desc && !(l->desc = ncm_hint_desc_dup(ev->list_desc))) {
                free(l->resource);
                return -ENOMEM;
        }
        if (ev->n_list_hints && ev->list_hints) {
                l->hints = malloc(ev->n_list_hints * sizeof(*l->hints));
                if (!l->hints) {
                        free(l->resource);
                        ncm_hint_desc_free(l->desc);
                        return -ENOMEM;
                }
                memcpy(l->hints, ev->list_hints, ev->n_list_hints * sizeof(*l->hints));
                l->n = ev->n_list_hints;
        }
        t->n_lists++;
        return 0;
}

static int on_candidate(node_txn *t, const ncm_tm_trace_event *ev)
{
        if (ncm__array_grow(t->cand, t->cap_cand, t->n_cand) < 0)
                return -ENOMEM;
        t->cand_more = t->cand_more || ev->more;
        t->cand[t->n_cand++] =
                        ev->hint.any ? ncm_tm_policy_default_affinity(ncm_tm_get_policy(t->n->tm))
                                     : ev->hint.numa;
        return 0;
}

static int on_merged(node_txn *t, const ncm_tm_trace_event *ev)
{
        const char *container = ev->call && ev->call->container ? ev->call->container->name : NULL;
        ncm_buf b = NCM_BUF_INIT;
        ncm_node_event *e;

        merge_text(t, ev, &b);
        merge_reset(t);
        if (ncm_buf_failed(&b))
                return -ENOMEM;
        e = ncm__node_event_add(t, NCM_NODE_EVENT_MERGE, container, NULL);
        if (!e) {
                ncm_buf_done(&b);
                return -ENOMEM;
        }
        e->hint = ev->hint;
        e->ok = ev->admit;
        e->text = ncm_buf_steal(&b);
        return e->text ? 0 : -ENOMEM;
}

void ncm__node_explain_trace(void *data, const ncm_tm_trace_event *ev)
{
        node_txn *t = data;
        int r = 0;

        if (t->trace_err < 0)
                return;
        switch (ev->kind) {
        case NCM_TM_TRACE_HINTS:
                r = on_hints(t, ev);
                break;
        case NCM_TM_TRACE_LIST:
                r = on_list(t, ev);
                break;
        case NCM_TM_TRACE_CANDIDATE:
                r = on_candidate(t, ev);
                break;
        case NCM_TM_TRACE_MERGED:
                r = on_merged(t, ev);
                break;
        }
        if (r < 0)
                t->trace_err = r;
}

/* ------------------------------------------------------------------------------------------
 * How takeByTopology's choice decomposes into the topology's levels
 */

void ncm__node_explain_take(const ncm_topo *t, const ncm_cpuset *available,
                            const ncm_cpuset *chosen, ncm_node_event *e)
{
        ncm_autoptr(ncm_cpuset) left = ncm_cpuset_dup(chosen);
        ncm_autoptr(ncm_cpuset) tmp = ncm_cpuset_new();
        bool numa_first = ncm_topo_num_sockets(t) >= ncm_topo_num_numa_nodes(t);
        size_t ncpu = 0, nids;
        const ncm_cpu_info *cpus = ncm_topo_cpus(t, &ncpu);
        ncm_autofree int64_t *ids = malloc((ncpu ? ncpu : 1) * sizeof(*ids));

        if (!left || !ids || !tmp)
                return;
        /* whole first- and second-level elements (NUMA nodes and sockets) */
        for (int level = 0; level < 2; level++) {
                bool numa = (level == 0) == numa_first;
                nids = ncm_topo_ids_of_cpus(t, numa ? NCM_TOPO_NUMA : NCM_TOPO_SOCKET, left, ids);
                for (size_t k = 0; k < nids; k++) {
                        int id = (int)ids[k];
                        const ncm_cpuset *s = numa ? ncm_topo_numa_cpus(t, id)
                                                   : ncm_topo_socket_cpus(t, id);
                        if (!s || !ncm_cpuset_is_subset(s, left) ||
                            !ncm_cpuset_is_subset(s, available))
                                continue;
                        {
                                ncm_autofree char *txt = ncm_cpuset_format_list(s);
                                ncm__node_event_step(e, "  whole %s %d: %s",
                                                     numa ? "NUMA node" : "socket", id,
                                                     txt ? txt : "");
                        }
                        ncm_cpuset_andnot(left, left, s);
                }
        }
        if (ncm_cpuset_is_empty(left))
                return;
        /* whole cores, then single threads, grouped by NUMA node */
        nids = ncm_topo_ids_of_cpus(t, NCM_TOPO_NUMA, left, ids);
        for (size_t x = 0; x < nids; x++) {
                int node = (int)ids[x];
                ncm_buf cores = NCM_BUF_INIT, single = NCM_BUF_INIT;
                for (size_t i = 0; i < ncpu; i++) {
                        const ncm_cpu_info *ci = &cpus[i];
                        size_t nt = 0;
                        const int *th;
                        bool whole = true;
                        ncm_buf txt = NCM_BUF_INIT;

                        if (ci->numa != node || ci->core != ci->cpu ||
                            !ncm_cpuset_isset(left, ci->cpu))
                                goto next_core;
                        th = ncm_topo_core_cpus(t, ci->core, &nt);
                        for (size_t k = 0; k < nt; k++) {
                                whole = whole && ncm_cpuset_isset(left, th[k]) &&
                                        ncm_cpuset_isset(available, th[k]);
                                ncm_buf_printf(&txt, "%s%d", k ? "," : "", th[k]);
                        }
                        if (whole && nt > 1)
                                ncm_buf_printf(&cores, "%s%d (%s)", cores.len ? ", " : "", ci->core,
                                               txt.data ? txt.data : "");
                next_core:
                        ncm_buf_done(&txt);
                }
                for (size_t i = 0; i < ncpu; i++) {
                        const ncm_cpu_info *ci = &cpus[i];
                        size_t nt = 0;
                        const int *th;
                        bool whole = true;
                        if (ci->numa != node || !ncm_cpuset_isset(left, ci->cpu))
                                continue;
                        th = ncm_topo_core_cpus(t, ci->core, &nt);
                        for (size_t k = 0; k < nt; k++)
                                whole = whole && ncm_cpuset_isset(left, th[k]) &&
                                        ncm_cpuset_isset(available, th[k]);
                        if (whole && nt > 1)
                                continue;
                        ncm_buf_printf(&single, "%s%d (core %d)", single.len ? ", " : "", ci->cpu,
                                       ci->core);
                }
                if (cores.len)
                        ncm__node_event_step(e, "  NUMA node %d: whole cores %s", node, cores.data);
                if (single.len)
                        ncm__node_event_step(e, "  NUMA node %d: single CPUs %s", node,
                                             single.data);
                ncm_buf_done(&cores);
                ncm_buf_done(&single);
        }
}
