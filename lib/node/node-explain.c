/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --explain: the events of an admission (each provider's hints, the merge and why its result
 * won, each allocation and how the allocator chose), recorded while the topology manager runs
 * the admission, the merge recomputed from the recorded hints with the node's own policy.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node-internal.h"

ncm_node_event *ncm__node_event_add(node_admission_ctx *ctx, ncm_node_event_kind kind,
                                    const char *container, const char *provider)
{
        ncm_node_event *e;

        if (ctx->n_ev == ctx->cap_ev) {
                size_t cap = ctx->cap_ev ? ctx->cap_ev * 2 : 8;
                ncm_node_event *nv = realloc(ctx->ev, cap * sizeof(*nv));
                if (!nv)
                        return NULL;
                ctx->ev = nv;
                ctx->cap_ev = cap;
        }
        e = &ctx->ev[ctx->n_ev];
        *e = (ncm_node_event){.kind = kind, .provider = provider};
        e->hints = (ncm_tm_hints)NCM_TM_HINTS_INIT;
        if (container && !(e->container = strdup(container)))
                return NULL;
        ctx->n_ev++;
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

void ncm__node_format_mask(ncm_buf *b, ncm_bitmask m)
{
        int bits[NCM_BITMASK_MAX_BITS];
        int k = ncm_bitmask_to_bits(m, bits);
        for (int i = 0; i < k; i++)
                ncm_buf_printf(b, "%s%d", i ? "," : "", bits[i]);
}

void ncm__node_format_hint(ncm_buf *b, const ncm_hint *h, bool mark)
{
        if (h->any) {
                ncm_buf_puts(b, "any");
        } else {
                ncm_buf_putc(b, '[');
                ncm__node_format_mask(b, h->numa);
                ncm_buf_putc(b, ']');
        }
        if (mark && h->preferred)
                ncm_buf_putc(b, '*');
}

/* ------------------------------------------------------------------------------------------
 * Why the merge chose its hint
 */

typedef struct rlist {
        const char *provider;
        const char *resource; /* NULL: the provider has no preference at all */
        ncm_hint *h;
        size_t n;
        bool unsatisfiable; /* an empty list: the provider cannot satisfy the resource */
} rlist;

static bool mask_in(const ncm_bitmask *v, size_t n, ncm_bitmask m)
{
        for (size_t i = 0; i < n; i++)
                if (v[i] == m)
                        return true;
        return false;
}

static double avg_distance(const ncm_topo *t, ncm_bitmask m)
{
        int bits[NCM_BITMASK_MAX_BITS];
        int k = ncm_bitmask_to_bits(m, bits);
        double sum = 0;
        for (int i = 0; i < k; i++)
                for (int j = 0; j < k; j++)
                        sum += ncm_topo_numa_distance(t, bits[i], bits[j]);
        return k ? sum / ((double)k * k) : 0;
}

/* After single-numa-node's filter (preferred, and "any" or one node), is L empty? */
static bool snn_empty(const rlist *l)
{
        for (size_t j = 0; j < l->n; j++)
                if (l->h[j].preferred && (l->h[j].any || ncm_bitmask_count(l->h[j].numa) == 1))
                        return false;
        return true;
}

static bool snn_emptied(const rlist *lists, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (snn_empty(&lists[i]))
                        return true;
        return false;
}

/*
 * The kubelet's normalisation of the providers' answers (filterProvidersHints, and the
 * single-numa-node filter), then the reasoning about the merged hint RESULT.
 */
static int explain_merge(ncm_node *n, ncm_node_event *const *runs, size_t nruns,
                         const ncm_hint *result, bool admit, ncm_buf *b)
{
        const char *policy = ncm_tm_policy_name(ncm_tm_get_policy(n->tm));
        bool snn = strcmp(policy, NCM_TM_POLICY_SINGLE_NUMA_NODE) == 0;
        ncm_bitmask all = ncm_tm_policy_default_affinity(ncm_tm_get_policy(n->tm));
        ncm_tm_options to = NCM_TM_OPTIONS_DEFAULT;
        static ncm_hint any_pref = {.any = true, .preferred = true};
        static ncm_hint any_nopref = {.any = true, .preferred = false};
        rlist *lists = NULL;
        size_t nl = 0, cap = 0;
        ncm_bitmask *cand = NULL;
        size_t nc = 0;
        bool all_any = true;
        int r = 0;

        (void)ncm_tm_options_parse(n->cfg->tm_opts, n->cfg->n_tm_opts, n->cfg->tm_gates, &to, NULL);
        for (size_t i = 0; i < nruns; i++)
                cap += runs[i]->hints.n ? runs[i]->hints.n : 1;
        lists = calloc(cap + 1, sizeof(*lists));
        if (!lists)
                return -ENOMEM;
        for (size_t i = 0; i < nruns; i++) {
                const ncm_tm_hints *h = &runs[i]->hints;
                /* resources in ascending name order, as the merge does */
                size_t order[64], k = h->n < 64 ? h->n : 64;
                for (size_t j = 0; j < k; j++)
                        order[j] = j;
                for (size_t j = 1; j < k; j++)
                        for (size_t q = j; q > 0 && strcmp(h->res[order[q - 1]].resource,
                                                           h->res[order[q]].resource) > 0;
                             q--) {
                                size_t t = order[q];
                                order[q] = order[q - 1];
                                order[q - 1] = t;
                        }
                if (h->n == 0) {
                        lists[nl++] = (rlist){runs[i]->provider, NULL, &any_pref, 1, false};
                        continue;
                }
                for (size_t j = 0; j < k; j++) {
                        const ncm_tm_resource_hints *rh = &h->res[order[j]];
                        rlist *l = &lists[nl++];
                        l->provider = runs[i]->provider;
                        l->resource = rh->resource;
                        if (rh->list.nil) {
                                l->h = &any_pref;
                                l->n = 1;
                        } else if (rh->list.n == 0) {
                                l->h = &any_nopref;
                                l->n = 1;
                                l->unsatisfiable = true;
                        } else {
                                l->h = rh->list.hints;
                                l->n = rh->list.n;
                        }
                }
        }

        /* resources that cannot be satisfied at all */
        for (size_t i = 0; i < nl; i++)
                if (lists[i].unsatisfiable)
                        ncm_buf_printf(b, "%s cannot be satisfied (no hint); ", lists[i].resource);

        /* the preferred candidates: masks every list offers as preferred (or as "any") */
        cand = calloc(64 * (nl + 1) + 2, sizeof(*cand));
        if (!cand) {
                free(lists);
                return -ENOMEM;
        }
        for (size_t i = 0; i < nl; i++) {
                bool has_any = false;
                for (size_t j = 0; j < lists[i].n; j++) {
                        const ncm_hint *h = &lists[i].h[j];
                        if (!h->preferred)
                                continue;
                        if (snn && !h->any && ncm_bitmask_count(h->numa) != 1)
                                continue;
                        if (h->any)
                                has_any = true;
                        else if (!mask_in(cand, nc, h->numa) && nc < 64 * (nl + 1))
                                cand[nc++] = h->numa;
                }
                all_any = all_any && has_any;
        }
        {
                size_t keep = 0;
                for (size_t c = 0; c < nc; c++) {
                        bool ok = true;
                        for (size_t i = 0; i < nl && ok; i++) {
                                bool found = false;
                                for (size_t j = 0; j < lists[i].n && !found; j++) {
                                        const ncm_hint *h = &lists[i].h[j];
                                        found = h->preferred && (h->any || h->numa == cand[c]);
                                }
                                ok = found;
                        }
                        if (ok)
                                cand[keep++] = cand[c];
                }
                nc = keep;
                if (all_any && !mask_in(cand, nc, all))
                        cand[nc++] = all;
        }

        if (result->preferred) {
                ncm_bitmask won = result->any ? all : result->numa;
                if (nc <= 1) {
                        ncm_buf_puts(b, "preferred by every resource");
                } else {
                        bool closest = to.prefer_closest_numa && !snn;
                        ncm_buf_puts(b, "preferred by every resource; of the candidates");
                        for (size_t c = 0; c < nc; c++) {
                                ncm_buf_puts(b, " [");
                                ncm__node_format_mask(b, cand[c]);
                                ncm_buf_putc(b, ']');
                        }
                        if (closest) {
                                ncm_buf_printf(b,
                                               " it is the closest (fewest NUMA nodes, then "
                                               "lowest average distance %.1f, then lowest ids)",
                                               avg_distance(n->topo, won));
                        } else {
                                ncm_buf_puts(b, " it is the narrowest (fewest NUMA nodes, then "
                                                "lowest ids)");
                        }
                }
                if (snn && result->any)
                        ncm_buf_puts(b, "; it spans every NUMA node, which single-numa-node "
                                        "stores as no affinity");
        } else if (snn && snn_emptied(lists, nl)) {
                bool first = true;
                ncm_buf_puts(b, "single-numa-node keeps only preferred hints for one NUMA node "
                                "(or any), and none is left for");
                for (size_t i = 0; i < nl; i++) {
                        if (!snn_empty(&lists[i]))
                                continue;
                        ncm_buf_printf(b, "%s %s", first ? "" : ",",
                                       lists[i].resource ? lists[i].resource : lists[i].provider);
                        first = false;
                }
                ncm_buf_puts(b, ": nothing to merge, the result is not preferred");
        } else {
                ncm_buf_puts(b, "no NUMA set is preferred by every resource (");
                for (size_t i = 0; i < nl; i++) {
                        bool first = true;
                        ncm_buf_printf(b, "%s%s:", i ? "; " : "",
                                       lists[i].resource ? lists[i].resource : lists[i].provider);
                        for (size_t j = 0; j < lists[i].n; j++) {
                                const ncm_hint *h = &lists[i].h[j];
                                if (!h->preferred)
                                        continue;
                                if (snn && !h->any && ncm_bitmask_count(h->numa) != 1)
                                        continue;
                                ncm_buf_putc(b, ' ');
                                ncm__node_format_hint(b, h, false);
                                first = false;
                        }
                        if (first)
                                ncm_buf_puts(b, snn ? " no preferred single-NUMA hint"
                                                    : " nothing preferred");
                }
                ncm_buf_puts(b, "); the best merge that is not preferred is ");
                ncm__node_format_hint(b, result, false);
        }
        if (admit)
                ncm_buf_printf(b, "; %s admits it", policy);
        else
                ncm_buf_printf(b, "; %s admits only preferred hints: %s", policy,
                               NCM_TM_REASON_TOPOLOGY_AFFINITY);
        if (ncm_buf_failed(b))
                r = -ENOMEM;
        free(cand);
        free(lists);
        return r;
}

static bool same_target(const ncm_node_event *a, const ncm_node_event *b)
{
        if (!a->container || !b->container)
                return !a->container && !b->container;
        return strcmp(a->container, b->container) == 0;
}

int ncm__node_explain_merges(ncm_node *n, node_admission_ctx *ctx, ncm_error *err)
{
        const ncm_tm_policy *pol = ncm_tm_get_policy(n->tm);
        node_admission_ctx out = {0};
        size_t i = 0;

        if (strcmp(ncm_tm_policy_name(pol), NCM_TM_POLICY_NONE) == 0) {
                ncm_node_event *e = ncm__node_event_add(&out, NCM_NODE_EVENT_MERGE, NULL, NULL);
                if (!e)
                        goto oom;
                e->hint = (ncm_hint){.any = true, .preferred = false};
                e->ok = true;
                e->text = strdup("topology manager policy none: no hints are gathered or merged; "
                                 "every container is allocated without NUMA affinity");
                if (!e->text)
                        goto oom;
        }
        while (i < ctx->n_ev) {
                size_t j = i;
                ncm_node_event **runs;
                ncm_tm_hints *provs;
                ncm_node_event *m;
                ncm_hint hint;
                bool admit;
                ncm_buf b = NCM_BUF_INIT;
                int r;

                if (ctx->ev[i].kind != NCM_NODE_EVENT_HINTS) {
                        ncm_node_event *e = ncm__node_event_add(&out, ctx->ev[i].kind, NULL, NULL);
                        if (!e)
                                goto oom;
                        *e = ctx->ev[i]; /* move */
                        ctx->ev[i] = (ncm_node_event){0};
                        i++;
                        continue;
                }
                while (j < ctx->n_ev && ctx->ev[j].kind == NCM_NODE_EVENT_HINTS &&
                       same_target(&ctx->ev[j], &ctx->ev[i]))
                        j++;
                runs = calloc(j - i + 1, sizeof(*runs));
                provs = calloc(j - i + 1, sizeof(*provs));
                if (!runs || !provs) {
                        free(runs);
                        free(provs);
                        goto oom;
                }
                for (size_t k = i; k < j; k++) {
                        runs[k - i] = &ctx->ev[k];
                        provs[k - i] = ctx->ev[k].hints; /* shallow: read only */
                }
                r = ncm_tm_policy_merge(pol, provs, j - i,
                                        n->reference_merge ? NCM_TM_MERGE_REFERENCE
                                                           : NCM_TM_MERGE_FAST,
                                        &hint, &admit, err);
                if (r >= 0)
                        r = explain_merge(n, runs, j - i, &hint, admit, &b);
                free(runs);
                free(provs);
                if (r < 0) {
                        ncm_buf_done(&b);
                        goto fail;
                }
                for (size_t k = i; k < j; k++) {
                        ncm_node_event *e =
                                        ncm__node_event_add(&out, NCM_NODE_EVENT_HINTS, NULL, NULL);
                        if (!e) {
                                ncm_buf_done(&b);
                                goto oom;
                        }
                        *e = ctx->ev[k];
                        ctx->ev[k] = (ncm_node_event){0};
                }
                {
                        const char *target = out.ev[out.n_ev - 1].container;
                        char *copy = target ? strdup(target) : NULL;
                        m = (!target || copy) ? ncm__node_event_add(&out, NCM_NODE_EVENT_MERGE,
                                                                    NULL, NULL)
                                              : NULL;
                        if (!m) {
                                free(copy);
                                ncm_buf_done(&b);
                                goto oom;
                        }
                        m->container = copy;
                }
                m->hint = hint;
                m->ok = admit;
                m->text = ncm_buf_steal(&b);
                if (!m->text)
                        goto oom;
                i = j;
        }
        for (size_t k = 0; k < ctx->n_ev; k++)
                ncm__node_event_done(&ctx->ev[k]);
        free(ctx->ev);
        ctx->ev = out.ev;
        ctx->n_ev = out.n_ev;
        ctx->cap_ev = out.cap_ev;
        return 0;
oom:
        ncm_error_set(err, ENOMEM, "out of memory");
fail:
        for (size_t k = 0; k < out.n_ev; k++)
                ncm__node_event_done(&out.ev[k]);
        free(out.ev);
        return err && err->code ? -err->code : -ENOMEM;
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
