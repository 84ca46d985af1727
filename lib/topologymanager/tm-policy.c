/* SPDX-License-Identifier: Apache-2.0 */
/* The four policies (an ops table each), their construction and Merge. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include "tm-internal.h"

/* Other merges than the lazy one list described lists first, up to this many hints each. */
#define MATERIALIZE_MAX ((size_t)1 << 22)

static bool admit_always(const ncm_hint *hint)
{
        (void)hint;
        return true;
}

static bool admit_preferred(const ncm_hint *hint)
{
        return hint->preferred;
}

static const ncm__tm_policy_ops policy_none = {
                .name = NCM_TM_POLICY_NONE,
                .merges = false,
                .can_admit = admit_always,
};

static const ncm__tm_policy_ops policy_best_effort = {
                .name = NCM_TM_POLICY_BEST_EFFORT,
                .merges = true,
                .can_admit = admit_always,
};

static const ncm__tm_policy_ops policy_restricted = {
                .name = NCM_TM_POLICY_RESTRICTED,
                .merges = true,
                .can_admit = admit_preferred,
};

static const ncm__tm_policy_ops policy_single_numa_node = {
                .name = NCM_TM_POLICY_SINGLE_NUMA_NODE,
                .merges = true,
                .single_numa_filter = true,
                .default_to_any = true,
                .can_admit = admit_preferred,
};

static const ncm__tm_policy_ops *const policies[] = {
                &policy_none,
                &policy_best_effort,
                &policy_restricted,
                &policy_single_numa_node,
};

int ncm_tm_policy_new(const char *name, const ncm_tm_options *opts, const int *numa_ids,
                      size_t n_numa, const uint64_t *distances, ncm_tm_policy **ret, ncm_error *err)
{
        const ncm__tm_policy_ops *ops = NULL;
        ncm_autoptr(ncm_tm_policy) p = NULL;
        int r;

        for (size_t i = 0; i < NCM_ELEMENTSOF(policies); i++)
                if (name && strcmp(policies[i]->name, name) == 0)
                        ops = policies[i];

        p = calloc(1, sizeof(*p));
        if (!p)
                return ncm_error_set(err, ENOMEM, "out of memory");
        p->opts = opts ? *opts : NCM_TM_OPTIONS_DEFAULT;
        memset(p->numa.pos, -1, sizeof(p->numa.pos));
        if (ops == &policy_none) {
                /* kubelet short-circuits "none": no options, no NUMA information. */
                p->ops = ops;
                p->opts = NCM_TM_OPTIONS_DEFAULT;
                *ret = NCM_TAKE_PTR(p);
                return 0;
        }

        /* kubelet's NewManager order: NUMA information, the node limit, the policy name. */
        r = ncm__tm_numa_init(&p->numa, numa_ids, n_numa, NULL, err);
        if (r < 0)
                return r;
        if (p->opts.prefer_closest_numa) {
                if (!distances && n_numa > 0)
                        return ncm_error_set(err, EINVAL,
                                             "cannot discover NUMA topology: error getting NUMA "
                                             "distances from cadvisor");
                ncm__tm_numa_done(&p->numa);
                r = ncm__tm_numa_init(&p->numa, numa_ids, n_numa, distances, err);
                if (r < 0)
                        return r;
        }
        if (n_numa > (size_t)p->opts.max_allowable_numa_nodes)
                return ncm_error_set(err, EINVAL,
                                     "unsupported on machines with more than %d NUMA Nodes",
                                     p->opts.max_allowable_numa_nodes);
        if (!ops) {
                ncm_buf b = NCM_BUF_INIT;
                ncm_buf_puts(&b, "unknown policy: \"");
                ncm_buf_puts(&b, name ? name : "");
                ncm_buf_putc(&b, '"');
                r = ncm_buf_failed(&b) ? ncm_error_set(err, ENOMEM, "out of memory")
                                       : ncm_error_set(err, EINVAL, "%s", b.data);
                ncm_buf_done(&b);
                return r;
        }
        p->ops = ops;
        *ret = NCM_TAKE_PTR(p);
        return 0;
}

ncm_tm_policy *ncm_tm_policy_free(ncm_tm_policy *p)
{
        if (p) {
                ncm__tm_numa_done(&p->numa);
                free(p);
        }
        return NULL;
}

const char *ncm_tm_policy_name(const ncm_tm_policy *p)
{
        return p->ops->name;
}

bool ncm_tm_policy_is_none(const ncm_tm_policy *p)
{
        return strcmp(p->ops->name, NCM_TM_POLICY_NONE) == 0;
}

ncm_bitmask ncm_tm_policy_default_affinity(const ncm_tm_policy *p)
{
        return p->numa.all;
}

bool ncm_tm_policy_alignment_guaranteed(const ncm_tm_policy *p)
{
        return p->ops == &policy_single_numa_node;
}

bool ncm_tm_policy_can_admit(const ncm_tm_policy *p, const ncm_hint *hint)
{
        return p->ops->can_admit(hint);
}

void ncm__tm_policy_set_andset(ncm_tm_policy *p, ncm__tm_andset_method method)
{
        p->andset = method;
}

int ncm__tm_policy_merge_traced(const ncm_tm_policy *p, const ncm_tm_hints *providers, size_t n,
                                ncm_tm_merge_mode mode, const ncm_tm_trace *trace,
                                const ncm_tm_call *call, ncm_hint *ret_hint, bool *ret_admit,
                                ncm_error *err)
{
        ncm__tm_lists lists = {0, NULL, NULL};
        ncm_autofree const ncm_hint_desc **descs = NULL;
        ncm__tm_merger m;
        ncm_hint best;
        int r;

        if (trace && !trace->fn)
                trace = NULL;
        if (!p->ops->merges) {
                /* nonePolicy.Merge: the zero hint {nil, false}, admitted. */
                *ret_hint = (ncm_hint){.any = true, .preferred = false};
                *ret_admit = true;
                return 0;
        }
        if (mode != NCM_TM_MERGE_LAZY) {
                /* The fast merge and kubelet's walk take lists: list what is described. */
                for (size_t i = 0; i < n; i++) {
                        for (size_t j = 0; j < providers[i].n; j++) {
                                ncm_tm_hints *listed = NULL;
                                if (!providers[i].res[j].desc)
                                        continue;
                                r = ncm__tm_providers_materialize(providers, n, MATERIALIZE_MAX,
                                                                  &listed, err);
                                if (r < 0)
                                        return r;
                                r = ncm__tm_policy_merge_traced(p, listed, n, mode, trace, call,
                                                                ret_hint, ret_admit, err);
                                for (size_t k = 0; k < n; k++)
                                        ncm_tm_hints_done(&listed[k]);
                                free(listed);
                                return r;
                        }
                }
        }
        /* filterProvidersHints, then filterSingleNumaHints for single-numa-node. */
        r = ncm__tm_filter_providers_desc(providers, n, p->ops->single_numa_filter, &lists, &descs);
        if (r < 0)
                return ncm_error_set(err, -r, "out of memory");
        /* single-numa-node always compares with Narrowest, even with prefer-closest. */
        ncm__tm_merger_init(&m, &p->numa,
                            p->opts.prefer_closest_numa && !p->ops->single_numa_filter, lists.lists,
                            lists.n);
        m.andset = p->andset;
        if (descs)
                ncm__tm_merger_set_descs(&m, descs);
        if (trace)
                r = ncm__tm_trace_lists(&m, providers, n, trace, call);
        if (r >= 0) {
                if (mode == NCM_TM_MERGE_REFERENCE)
                        r = ncm__tm_merge_reference(&m, &best);
                else if (mode == NCM_TM_MERGE_LAZY)
                        r = ncm__tm_merge_lazy(&m, &best);
                else
                        r = ncm__tm_merge_fast(&m, &best);
        }
        ncm__tm_lists_done(&lists);
        if (r == -EDOM)
                return ncm_error_set(err, EDOM,
                                     "a described hint list reaches outside the topology "
                                     "manager's NUMA nodes");
        if (r < 0)
                return ncm_error_set(err, -r, "out of memory");
        if (p->ops->default_to_any && !best.any && best.numa == p->numa.all)
                best = (ncm_hint){.any = true, .preferred = best.preferred};
        *ret_hint = best;
        *ret_admit = p->ops->can_admit(&best);
        if (trace) {
                ncm_tm_trace_event ev = {.kind = NCM_TM_TRACE_MERGED, .call = call};
                ev.hint = best;
                ev.admit = *ret_admit;
                ev.closest = m.closest;
                if (m.closest)
                        ev.avg_distance = ncm__tm_numa_avg(&p->numa,
                                                           best.any ? p->numa.all : best.numa);
                trace->fn(trace->data, &ev);
        }
        return 0;
}

int ncm_tm_policy_merge(const ncm_tm_policy *p, const ncm_tm_hints *providers, size_t n,
                        ncm_tm_merge_mode mode, ncm_hint *ret_hint, bool *ret_admit, ncm_error *err)
{
        return ncm__tm_policy_merge_traced(p, providers, n, mode, NULL, NULL, ret_hint, ret_admit,
                                           err);
}

void ncm_tm_admit_result_set(ncm_tm_admit_result *r, const char *type, const char *message)
{
        memset(r, 0, sizeof(*r));
        if (!message) {
                r->admit = true;
                return;
        }
        if (type) {
                snprintf(r->reason, sizeof(r->reason), "%s", type);
                snprintf(r->message, sizeof(r->message), "%s", message);
        } else {
                snprintf(r->reason, sizeof(r->reason), "%s", NCM_TM_REASON_UNEXPECTED);
                snprintf(r->message, sizeof(r->message),
                         "Allocate failed due to %s, which is unexpected", message);
        }
}
