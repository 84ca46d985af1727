/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The manager: scopes (container, pod, none) as an ops table, admission, the affinity store
 * (kubelet's podTopologyHints) and the container-id map (kubelet's containermap).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include "base/array.h"
#include "base/strindex.h"
#include "tm-internal.h"

typedef struct provider {
        const ncm_tm_provider_ops *ops;
        void *data;
} provider;

typedef struct stored_hint {
        char *pod_uid;
        char *container;
        ncm_hint hint;
} stored_hint;

typedef struct container_ref {
        char *id;
        char *pod_uid;
        char *container;
} container_ref;

typedef struct scope_ops {
        const char *name;
        int (*admit)(ncm_tm *tm, const ncm_pod *pod, void *txn, ncm_tm_admit_result *ret,
                     ncm_error *err);
} scope_ops;

struct ncm_tm {
        const scope_ops *scope;
        ncm_tm_policy *policy;
        ncm_tm_merge_mode mode;
        provider *providers;
        size_t n_providers, cap_providers;
        /* the stores grow with a pod's containers: indexed, so that each lookup is O(1) */
        stored_hint *hints;
        size_t n_hints, cap_hints;
        ncm__strindex hints_ix;     /* by (pod_uid, container) */
        ncm__strindex hints_pod_ix; /* by pod_uid: a pod's removal finds only its own */
        container_ref *refs;
        size_t n_refs, cap_refs;
        ncm__strindex refs_ix;     /* by id */
        ncm__strindex refs_pod_ix; /* by pod_uid */
        ncm_tm_metrics metrics;
        ncm_tm_trace trace; /* fn NULL: none */
        ncm_tm_op op;       /* of the admission under way */
};

/* --- the affinity store --- */

typedef struct hint_key {
        const ncm_tm *tm;
        const char *pod_uid, *container;
} hint_key;

static bool hint_is(size_t pos, const void *ctx)
{
        const hint_key *k = ctx;
        const stored_hint *s = &k->tm->hints[pos];
        return strcmp(s->pod_uid, k->pod_uid) == 0 && strcmp(s->container, k->container) == 0;
}

static uint32_t hint_hash(const stored_hint *s)
{
        return ncm__strindex_hash(s->pod_uid, s->container);
}

static uint32_t pod_hash(const char *pod_uid)
{
        return ncm__strindex_hash(pod_uid, NULL);
}

typedef struct pod_key {
        const ncm_tm *tm;
        const char *pod_uid;
} pod_key;

static bool hint_of_pod(size_t pos, const void *ctx)
{
        const pod_key *k = ctx;
        return strcmp(k->tm->hints[pos].pod_uid, k->pod_uid) == 0;
}

/* One of POD_UID's stored hints (its position), or -1. */
static ssize_t find_pod_hint(const ncm_tm *tm, const char *pod_uid)
{
        pod_key k = {tm, pod_uid};
        return ncm__strindex_find(&tm->hints_pod_ix, pod_hash(pod_uid), hint_of_pod, &k);
}

static stored_hint *find_hint(const ncm_tm *tm, const char *pod_uid, const char *container)
{
        hint_key k = {tm, pod_uid, container};
        ssize_t i = ncm__strindex_find(&tm->hints_ix, ncm__strindex_hash(pod_uid, container),
                                       hint_is, &k);
        return i < 0 ? NULL : &tm->hints[i];
}

static int set_hint(ncm_tm *tm, const char *pod_uid, const char *container, ncm_hint hint)
{
        stored_hint *s = find_hint(tm, pod_uid, container);
        char *u, *c;

        if (s) {
                s->hint = hint;
                return 0;
        }
        if (ncm__array_grow(tm->hints, tm->cap_hints, tm->n_hints) < 0 ||
            ncm__strindex_reserve(&tm->hints_ix, 1) < 0 ||
            ncm__strindex_reserve(&tm->hints_pod_ix, 1) < 0)
                return -ENOMEM;
        u = strdup(pod_uid);
        c = strdup(container);
        if (!u || !c) {
                free(u);
                free(c);
                return -ENOMEM;
        }
        tm->hints[tm->n_hints] = (stored_hint){u, c, hint};
        (void)ncm__strindex_add(&tm->hints_ix, hint_hash(&tm->hints[tm->n_hints]),
                                tm->n_hints); /* room reserved */
        (void)ncm__strindex_add(&tm->hints_pod_ix, pod_hash(u), tm->n_hints);
        tm->n_hints++;
        return 0;
}

static void drop_hint(ncm_tm *tm, size_t i)
{
        size_t last = tm->n_hints - 1;

        ncm__strindex_del(&tm->hints_ix, hint_hash(&tm->hints[i]), i);
        ncm__strindex_del(&tm->hints_pod_ix, pod_hash(tm->hints[i].pod_uid), i);
        if (i != last) {
                ncm__strindex_move(&tm->hints_ix, hint_hash(&tm->hints[last]), last, i);
                ncm__strindex_move(&tm->hints_pod_ix, pod_hash(tm->hints[last].pod_uid), last, i);
        }
        free(tm->hints[i].pod_uid);
        free(tm->hints[i].container);
        tm->hints[i] = tm->hints[last];
        tm->n_hints--;
}

ncm_hint ncm_tm_get_affinity(const ncm_tm *tm, const char *pod_uid, const char *container)
{
        const stored_hint *s = find_hint(tm, pod_uid, container);
        return s ? s->hint : (ncm_hint){.any = true, .preferred = false};
}

typedef struct ref_key {
        const ncm_tm *tm;
        const char *id;
} ref_key;

static bool ref_is(size_t pos, const void *ctx)
{
        const ref_key *k = ctx;
        return strcmp(k->tm->refs[pos].id, k->id) == 0;
}

static bool ref_of_pod(size_t pos, const void *ctx)
{
        const pod_key *k = ctx;
        return strcmp(k->tm->refs[pos].pod_uid, k->pod_uid) == 0;
}

/* One of POD_UID's container ids (its position), or -1. */
static ssize_t find_pod_ref(const ncm_tm *tm, const char *pod_uid)
{
        pod_key k = {tm, pod_uid};
        return ncm__strindex_find(&tm->refs_pod_ix, pod_hash(pod_uid), ref_of_pod, &k);
}

static container_ref *find_ref(const ncm_tm *tm, const char *id)
{
        ref_key k = {tm, id};
        ssize_t i = ncm__strindex_find(&tm->refs_ix, ncm__strindex_hash(id, NULL), ref_is, &k);
        return i < 0 ? NULL : &tm->refs[i];
}

static void drop_ref(ncm_tm *tm, size_t i)
{
        size_t last = tm->n_refs - 1;

        ncm__strindex_del(&tm->refs_ix, ncm__strindex_hash(tm->refs[i].id, NULL), i);
        /* a ref whose pod was taken (ncm_tm_remove_container) left this index already */
        if (tm->refs[i].pod_uid)
                ncm__strindex_del(&tm->refs_pod_ix, pod_hash(tm->refs[i].pod_uid), i);
        if (i != last) {
                ncm__strindex_move(&tm->refs_ix, ncm__strindex_hash(tm->refs[last].id, NULL), last,
                                   i);
                ncm__strindex_move(&tm->refs_pod_ix, pod_hash(tm->refs[last].pod_uid), last, i);
        }
        free(tm->refs[i].id);
        free(tm->refs[i].pod_uid);
        free(tm->refs[i].container);
        tm->refs[i] = tm->refs[last];
        tm->n_refs--;
}

int ncm_tm_add_container(ncm_tm *tm, const char *pod_uid, const char *container,
                         const char *container_id)
{
        char *id = strdup(container_id), *u = strdup(pod_uid), *c = strdup(container);
        container_ref *r;

        if (!id || !u || !c)
                goto oom;
        r = find_ref(tm, container_id);
        if (ncm__strindex_reserve(&tm->refs_pod_ix, 1) < 0)
                goto oom;
        if (r) {
                /* the same id, the same hash: the id index stays as it is; the pod's may not */
                size_t pos = (size_t)(r - tm->refs);
                ncm__strindex_del(&tm->refs_pod_ix, pod_hash(r->pod_uid), pos);
                (void)ncm__strindex_add(&tm->refs_pod_ix, pod_hash(u), pos); /* room reserved */
                free(r->id);
                free(r->pod_uid);
                free(r->container);
                *r = (container_ref){id, u, c};
                return 0;
        }
        if (ncm__array_grow(tm->refs, tm->cap_refs, tm->n_refs) < 0 ||
            ncm__strindex_add(&tm->refs_ix, ncm__strindex_hash(id, NULL), tm->n_refs) < 0)
                goto oom;
        (void)ncm__strindex_add(&tm->refs_pod_ix, pod_hash(u), tm->n_refs); /* room reserved */
        tm->refs[tm->n_refs++] = (container_ref){id, u, c};
        return 0;
oom:
        free(id);
        free(u);
        free(c);
        return -ENOMEM;
}

int ncm_tm_remove_container(ncm_tm *tm, const char *container_id)
{
        container_ref *r = find_ref(tm, container_id);
        char *u, *c;

        if (!r)
                return 0;
        u = r->pod_uid;
        c = r->container;
        ncm__strindex_del(&tm->refs_pod_ix, pod_hash(u), (size_t)(r - tm->refs));
        r->pod_uid = r->container = NULL;
        drop_ref(tm, (size_t)(r - tm->refs));
        /* A restarted container may already map another id to the same (pod, name): keep the
         * hint then. */
        for (size_t i = 0; i < tm->n_refs; i++)
                if (strcmp(tm->refs[i].pod_uid, u) == 0 && strcmp(tm->refs[i].container, c) == 0)
                        goto out;
        for (size_t i = 0; i < tm->n_hints; i++) {
                if (strcmp(tm->hints[i].pod_uid, u) == 0 &&
                    strcmp(tm->hints[i].container, c) == 0) {
                        drop_hint(tm, i);
                        break;
                }
        }
out:
        free(u);
        free(c);
        return 0;
}

/*
 * After a big pod went, the stores give its room back (down to twice what they hold), and
 * their indexes too: a pod of 100,000 containers must not leave the node at its peak. Best
 * effort: without memory the stores stay as they are.
 */
/* A store of N entries of SIZE bytes in V with room for *CAP: V at twice N when it is 4 times
 * too big (or as it was), and its index IX rebuilt; HASH gives entry I's key, once V is in TM. */
static bool too_big(size_t n, size_t cap)
{
        return cap > 64 && n < cap / 4;
}

static void *shrunk(void *v, size_t size, size_t n, size_t *cap)
{
        void *w = realloc(v, (n * 2 + 8) * size);

        if (!w)
                return v;
        *cap = n * 2 + 8;
        return w;
}

static void reindex(ncm__strindex *ix, size_t n, uint32_t (*hash)(const ncm_tm *tm, size_t i),
                    const ncm_tm *tm)
{
        ncm__strindex fresh = {0};

        if (ncm__strindex_reserve(&fresh, n) < 0)
                return;
        for (size_t i = 0; i < n; i++)
                (void)ncm__strindex_add(&fresh, hash(tm, i), i);
        ncm__strindex_done(ix);
        *ix = fresh;
}

static uint32_t hint_at(const ncm_tm *tm, size_t i)
{
        return hint_hash(&tm->hints[i]);
}

static uint32_t ref_at(const ncm_tm *tm, size_t i)
{
        return ncm__strindex_hash(tm->refs[i].id, NULL);
}

static uint32_t hint_pod_at(const ncm_tm *tm, size_t i)
{
        return pod_hash(tm->hints[i].pod_uid);
}

static uint32_t ref_pod_at(const ncm_tm *tm, size_t i)
{
        return pod_hash(tm->refs[i].pod_uid);
}

static void shrink_stores(ncm_tm *tm)
{
        if (too_big(tm->n_hints, tm->cap_hints)) {
                tm->hints = shrunk(tm->hints, sizeof(*tm->hints), tm->n_hints, &tm->cap_hints);
                reindex(&tm->hints_ix, tm->n_hints, hint_at, tm);
                reindex(&tm->hints_pod_ix, tm->n_hints, hint_pod_at, tm);
        }
        if (too_big(tm->n_refs, tm->cap_refs)) {
                tm->refs = shrunk(tm->refs, sizeof(*tm->refs), tm->n_refs, &tm->cap_refs);
                reindex(&tm->refs_ix, tm->n_refs, ref_at, tm);
                reindex(&tm->refs_pod_ix, tm->n_refs, ref_pod_at, tm);
        }
}

int ncm_tm_remove_pod(ncm_tm *tm, const char *pod_uid)
{
        int dropped = 0;
        ssize_t i;

        /* by the pod's index: the other pods' entries are not looked at */
        while ((i = find_pod_hint(tm, pod_uid)) >= 0) {
                drop_hint(tm, (size_t)i);
                dropped++;
        }
        while ((i = find_pod_ref(tm, pod_uid)) >= 0)
                drop_ref(tm, (size_t)i);
        shrink_stores(tm);
        return dropped;
}

/* --- a pod's hints, saved and restored --- */

typedef struct saved_hint {
        char *container;
        ncm_hint hint;
} saved_hint;

struct ncm_tm_pod_hints {
        char *pod_uid;
        saved_hint *v;
        size_t n;
};

ncm_tm_pod_hints *ncm_tm_pod_hints_free(ncm_tm_pod_hints *h)
{
        if (!h)
                return NULL;
        for (size_t i = 0; i < h->n; i++)
                free(h->v[i].container);
        free(h->v);
        free(h->pod_uid);
        free(h);
        return NULL;
}

int ncm_tm_pod_hints_save(const ncm_tm *tm, const char *pod_uid, ncm_tm_pod_hints **ret,
                          ncm_error *err)
{
        ncm_autoptr(ncm_tm_pod_hints) h = calloc(1, sizeof(*h));
        size_t n = 0;

        if (!h || !(h->pod_uid = strdup(pod_uid)))
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < tm->n_hints; i++)
                if (strcmp(tm->hints[i].pod_uid, pod_uid) == 0)
                        n++;
        if (n && !(h->v = calloc(n, sizeof(*h->v))))
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < tm->n_hints; i++) {
                if (strcmp(tm->hints[i].pod_uid, pod_uid) != 0)
                        continue;
                h->v[h->n].container = strdup(tm->hints[i].container);
                if (!h->v[h->n].container)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                h->v[h->n++].hint = tm->hints[i].hint;
        }
        *ret = NCM_TAKE_PTR(h);
        return 0;
}

static void free_entries(stored_hint *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].pod_uid);
                free(v[i].container);
        }
        free(v);
}

int ncm_tm_pod_hints_restore(ncm_tm *tm, const ncm_tm_pod_hints *saved, ncm_error *err)
{
        stored_hint *fresh = calloc(saved->n + 1, sizeof(*fresh));

        /* Whatever can fail comes first, so that TM is either restored or untouched: the new
         * entries, then room for them beside the current ones (dropping frees nothing). */
        if (!fresh)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < saved->n; i++) {
                fresh[i].pod_uid = strdup(saved->pod_uid);
                fresh[i].container = strdup(saved->v[i].container);
                fresh[i].hint = saved->v[i].hint;
                if (!fresh[i].pod_uid || !fresh[i].container) {
                        free_entries(fresh, i + 1);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
        }
        if (saved->n && ncm__array_grow(tm->hints, tm->cap_hints, tm->n_hints + saved->n - 1) < 0) {
                free_entries(fresh, saved->n);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        if (ncm__strindex_reserve(&tm->hints_ix, saved->n) < 0 ||
            ncm__strindex_reserve(&tm->hints_pod_ix, saved->n) < 0) {
                free_entries(fresh, saved->n);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        for (ssize_t i; (i = find_pod_hint(tm, saved->pod_uid)) >= 0;)
                drop_hint(tm, (size_t)i);
        for (size_t i = 0; i < saved->n; i++) {
                tm->hints[tm->n_hints] = fresh[i];
                /* room reserved */
                (void)ncm__strindex_add(&tm->hints_ix, hint_hash(&fresh[i]), tm->n_hints);
                (void)ncm__strindex_add(&tm->hints_pod_ix, pod_hash(fresh[i].pod_uid), tm->n_hints);
                tm->n_hints++;
        }
        free(fresh);
        return 0;
}

/* --- admission --- */

static void free_hints(ncm_tm_hints *h, size_t n)
{
        for (size_t i = 0; i < n; i++)
                ncm_tm_hints_done(&h[i]);
        free(h);
}

static const ncm_tm_trace *trace_of(const ncm_tm *tm)
{
        return tm->trace.fn ? &tm->trace : NULL;
}

/* kubelet's calculateAffinity: every provider's hints (CALL->container NULL: the pod's), then
 * Merge. */
static int calculate_affinity(ncm_tm *tm, const ncm_tm_call *call, ncm_hint *ret_hint,
                              bool *ret_admit, ncm_error *err)
{
        ncm_tm_hints *all = calloc(tm->n_providers + 1, sizeof(*all));
        const ncm_tm_trace *trace = trace_of(tm);
        int r = 0;

        if (!all)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < tm->n_providers && r >= 0; i++) {
                const provider *p = &tm->providers[i];
                if (call->container && p->ops->get_container_hints)
                        r = p->ops->get_container_hints(p->data, call, &all[i], err);
                else if (!call->container && p->ops->get_pod_hints)
                        r = p->ops->get_pod_hints(p->data, call, &all[i], err);
                if (r < 0) {
                        r = ncm_error_prefix(err, "%s hints for pod '%s'",
                                             p->ops->name ? p->ops->name : "provider",
                                             call->pod->uid);
                } else if (trace) {
                        ncm_tm_trace_event ev = {.kind = NCM_TM_TRACE_HINTS, .call = call};
                        ev.provider = i;
                        ev.hints = &all[i];
                        trace->fn(trace->data, &ev);
                }
        }
        if (r >= 0)
                r = ncm__tm_policy_merge_traced(tm->policy, all, tm->n_providers, tm->mode, trace,
                                                call, ret_hint, ret_admit, err);
        free_hints(all, tm->n_providers);
        return r;
}

/* The provider errors that are the kubelet's admission errors, not failures of nodecm. */
static bool is_decision(int code)
{
        return code == NCM_E_UNSATISFIABLE || code == NCM_E_ADMISSION || code == EINVAL;
}

/*
 * kubelet's allocateAlignedResources: every provider's allocate in order; the first error
 * becomes the admission result when it is a decision. Returns 1 when allocated, 0 when refused
 * (RET filled), -errno on a failure (ERR set).
 */
static int allocate_aligned(ncm_tm *tm, const ncm_pod *pod, const ncm_container *c, void *txn,
                            ncm_tm_admit_result *ret, ncm_error *err)
{
        ncm_hint affinity = ncm_tm_get_affinity(tm, pod->uid, c->name);
        ncm_tm_call call = {.txn = txn, .pod = pod, .container = c, .op = tm->op};

        for (size_t i = 0; i < tm->n_providers; i++) {
                const provider *p = &tm->providers[i];
                ncm_error e = NCM_ERROR_INIT;
                const char *type = NULL;
                int r;
                if (!p->ops->allocate)
                        continue;
                r = p->ops->allocate(p->data, &call, &affinity, &type, &e);
                if (r >= 0)
                        continue;
                if (!e.code)
                        e.code = -r;
                if (!is_decision(e.code)) {
                        if (err)
                                *err = e;
                        return -e.code;
                }
                ncm_tm_admit_result_set(ret, type, e.msg[0] ? e.msg : ncm_strerror(e.code));
                return 0;
        }
        return 1;
}

static void refuse_affinity(ncm_tm_admit_result *ret)
{
        ncm_tm_admit_result_set(ret, NCM_TM_REASON_TOPOLOGY_AFFINITY,
                                NCM_TM_MESSAGE_TOPOLOGY_AFFINITY);
}

/* Init containers then app containers, as kubelet's append(InitContainers, Containers...). */
static const ncm_container *nth_container(const ncm_pod *pod, size_t i)
{
        return i < pod->n_init_containers ? &pod->init_containers[i]
                                          : &pod->containers[i - pod->n_init_containers];
}

static int admit_container_scope(ncm_tm *tm, const ncm_pod *pod, void *txn,
                                 ncm_tm_admit_result *ret, ncm_error *err)
{
        bool aligned = ncm_tm_policy_alignment_guaranteed(tm->policy);

        for (size_t i = 0; i < pod->n_init_containers + pod->n_containers; i++) {
                const ncm_container *c = nth_container(pod, i);
                ncm_tm_call call = {.txn = txn, .pod = pod, .container = c, .op = tm->op};
                ncm_hint best;
                bool admit;
                int r = calculate_affinity(tm, &call, &best, &admit, err);
                if (r < 0)
                        return r;
                if (!admit) {
                        if (aligned)
                                tm->metrics.failure_container++;
                        tm->metrics.admission_errors_total++;
                        refuse_affinity(ret);
                        return 0;
                }
                if (set_hint(tm, pod->uid, c->name, best) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                r = allocate_aligned(tm, pod, c, txn, ret, err);
                if (r <= 0) {
                        tm->metrics.admission_errors_total++;
                        return r;
                }
                if (aligned)
                        tm->metrics.aligned_container++;
        }
        ncm_tm_admit_result_set(ret, NULL, NULL);
        return 0;
}

static int admit_pod_scope(ncm_tm *tm, const ncm_pod *pod, void *txn, ncm_tm_admit_result *ret,
                           ncm_error *err)
{
        bool aligned = ncm_tm_policy_alignment_guaranteed(tm->policy);
        ncm_tm_call call = {.txn = txn, .pod = pod, .container = NULL, .op = tm->op};
        ncm_hint best;
        bool admit;
        int r = calculate_affinity(tm, &call, &best, &admit, err);

        if (r < 0)
                return r;
        if (!admit) {
                if (aligned)
                        tm->metrics.failure_pod++;
                tm->metrics.admission_errors_total++;
                refuse_affinity(ret);
                return 0;
        }
        for (size_t i = 0; i < pod->n_init_containers + pod->n_containers; i++) {
                const ncm_container *c = nth_container(pod, i);
                if (set_hint(tm, pod->uid, c->name, best) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                r = allocate_aligned(tm, pod, c, txn, ret, err);
                if (r <= 0) {
                        tm->metrics.admission_errors_total++;
                        return r;
                }
        }
        if (aligned)
                tm->metrics.aligned_pod++;
        ncm_tm_admit_result_set(ret, NULL, NULL);
        return 0;
}

/* kubelet's admitPolicyNone: allocate every container, no hints. */
static int admit_none_scope(ncm_tm *tm, const ncm_pod *pod, void *txn, ncm_tm_admit_result *ret,
                            ncm_error *err)
{
        for (size_t i = 0; i < pod->n_init_containers + pod->n_containers; i++) {
                int r = allocate_aligned(tm, pod, nth_container(pod, i), txn, ret, err);
                if (r <= 0)
                        return r;
        }
        ncm_tm_admit_result_set(ret, NULL, NULL);
        return 0;
}

static const scope_ops scope_container = {NCM_TM_SCOPE_CONTAINER, admit_container_scope};
static const scope_ops scope_pod = {NCM_TM_SCOPE_POD, admit_pod_scope};
static const scope_ops scope_none = {NCM_TM_SCOPE_NONE, admit_none_scope};

int ncm_tm_admit(ncm_tm *tm, const ncm_pod *pod, void *txn, ncm_tm_admit_result *ret,
                 ncm_error *err)
{
        return ncm_tm_admit_op(tm, pod, NCM_TM_OP_ADMIT, txn, ret, err);
}

int ncm_tm_admit_op(ncm_tm *tm, const ncm_pod *pod, ncm_tm_op op, void *txn,
                    ncm_tm_admit_result *ret, ncm_error *err)
{
        ncm_tm_admit_result res;
        int r;

        tm->metrics.admission_requests_total++;
        tm->op = op;
        r = tm->scope->admit(tm, pod, txn, &res, err);
        tm->op = NCM_TM_OP_ADMIT;
        if (r < 0)
                return r;
        *ret = res;
        return 0;
}

/* --- construction --- */

int ncm_tm_new(const ncm_tm_config *cfg, ncm_tm **ret, ncm_error *err)
{
        const char *policy = cfg->policy ? cfg->policy : NCM_TM_POLICY_NONE;
        const char *scope = cfg->scope ? cfg->scope : NCM_TM_SCOPE_CONTAINER;
        ncm_tm_options opts = NCM_TM_OPTIONS_DEFAULT;
        ncm_autoptr(ncm_tm) tm = calloc(1, sizeof(ncm_tm));
        int r;

        if (!tm)
                return ncm_error_set(err, ENOMEM, "out of memory");
        tm->mode = cfg->merge_mode;
        if (strcmp(policy, NCM_TM_POLICY_NONE) == 0) {
                tm->scope = &scope_none;
        } else {
                r = ncm_tm_options_parse(cfg->options, cfg->n_options, cfg->gates, &opts, err);
                if (r < 0)
                        return r;
        }
        r = ncm_tm_policy_new(policy, &opts, cfg->numa_ids, cfg->n_numa, cfg->distances,
                              &tm->policy, err);
        if (r < 0)
                return r;
        if (!tm->scope) {
                if (strcmp(scope, NCM_TM_SCOPE_CONTAINER) == 0)
                        tm->scope = &scope_container;
                else if (strcmp(scope, NCM_TM_SCOPE_POD) == 0)
                        tm->scope = &scope_pod;
                else {
                        ncm_buf b = NCM_BUF_INIT;
                        ncm_buf_printf(&b, "unknown scope: \"%s\"", scope);
                        r = ncm_buf_failed(&b) ? ncm_error_set(err, ENOMEM, "out of memory")
                                               : ncm_error_set(err, EINVAL, "%s", b.data);
                        ncm_buf_done(&b);
                        return r;
                }
        }
        *ret = NCM_TAKE_PTR(tm);
        return 0;
}

ncm_tm *ncm_tm_free(ncm_tm *tm)
{
        if (!tm)
                return NULL;
        while (tm->n_hints > 0)
                drop_hint(tm, tm->n_hints - 1);
        while (tm->n_refs > 0)
                drop_ref(tm, tm->n_refs - 1);
        free(tm->hints);
        free(tm->refs);
        ncm__strindex_done(&tm->hints_ix);
        ncm__strindex_done(&tm->refs_ix);
        ncm__strindex_done(&tm->hints_pod_ix);
        ncm__strindex_done(&tm->refs_pod_ix);
        free(tm->providers);
        ncm_tm_policy_free(tm->policy);
        free(tm);
        return NULL;
}

const char *ncm_tm_scope_name(const ncm_tm *tm)
{
        return tm->scope->name;
}

const ncm_tm_policy *ncm_tm_get_policy(const ncm_tm *tm)
{
        return tm->policy;
}

const ncm_tm_metrics *ncm_tm_get_metrics(const ncm_tm *tm)
{
        return &tm->metrics;
}

void ncm_tm_set_merge_mode(ncm_tm *tm, ncm_tm_merge_mode mode)
{
        tm->mode = mode;
}

void ncm_tm_set_trace(ncm_tm *tm, const ncm_tm_trace *trace)
{
        tm->trace = trace && trace->fn ? *trace : (ncm_tm_trace){NULL, NULL};
}

int ncm_tm_add_provider(ncm_tm *tm, const ncm_tm_provider_ops *ops, void *data)
{
        if (ncm__array_grow(tm->providers, tm->cap_providers, tm->n_providers) < 0)
                return -ENOMEM;
        tm->providers[tm->n_providers++] = (provider){ops, data};
        return 0;
}
