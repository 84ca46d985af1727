/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "cri" enforcer: what the node's decisions become when a container runtime holds the
 * cgroups. It writes nothing: like "plan" it records, here the cpusets each container should
 * have (its intent), noted in the node's transaction, published at commit and dropped at
 * rollback. CreateContainer's patch reads the new container's intent; the others drain as
 * UpdateContainerResources calls (ncm_enforcer_cri_take: the intents that changed since the
 * last take, at most one per container however many transactions moved it). What the runtime
 * leaves to nodecmd on its cgroups (CRI-O's knobs: an inner "knobs" enforcer) is delegated:
 * every call reaches the inner enforcer too, in the same transaction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <nodecm/cri.h>
#include <nodecm/enforcer.h>
#include <nodecm/node.h>
#include "base/array.h"
#include "base/strindex.h"

/* One container's intent; CPUS NULL: a removal (pending only). */
typedef struct intent {
        char *pod, *name;
        char *cpus, *mems;
        bool dirty; /* published and not taken yet */
} intent;

typedef struct cri_enforcer {
        ncm_enforcer *inner; /* owned; NULL: nothing beside the cpusets */
        bool pin_shared;     /* not the none policy: the shared pool is pinned too */
        intent *have;        /* published */
        size_t n_have, cap_have;
        ncm__strindex ix; /* HAVE by (pod, name): a commit that moves the pool is O(N) */
        intent *pending;  /* this transaction's, in order; POD only with NAME NULL: pod removed */
        size_t n_pending, cap_pending;
} cri_enforcer;

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

static void intent_done(intent *i)
{
        free(i->pod);
        free(i->name);
        free(i->cpus);
        free(i->mems);
        *i = (intent){0};
}

static void pending_drop(cri_enforcer *e)
{
        for (size_t i = 0; i < e->n_pending; i++)
                intent_done(&e->pending[i]);
        e->n_pending = 0;
}

static void ce_free(void *data)
{
        cri_enforcer *e = data;

        if (!e)
                return;
        pending_drop(e);
        for (size_t i = 0; i < e->n_have; i++)
                intent_done(&e->have[i]);
        free(e->have);
        free(e->pending);
        ncm__strindex_done(&e->ix);
        ncm_enforcer_free(e->inner);
        free(e);
}

/* The inner enforcer's ops, or NULL. */
static const ncm_enforcer_ops *inner_ops(const cri_enforcer *e)
{
        return e->inner ? ncm_enforcer_get_ops(e->inner) : NULL;
}

static void *inner_data(const cri_enforcer *e)
{
        return ncm_enforcer_get_data(e->inner);
}

static int ce_start(void *data, const ncm_enforce_start *s, ncm_error *err)
{
        cri_enforcer *e = data;
        const ncm_enforcer_ops *in = inner_ops(e);

        /* the none policy pins nothing: its containers keep what the runtime gives them */
        e->pin_shared = strcmp(ncm_node_config_cpu_policy(s->cfg), "none") != 0;
        return in && in->start ? in->start(inner_data(e), s, err) : 0;
}

static int ce_begin(void *data, ncm_error *err)
{
        cri_enforcer *e = data;
        const ncm_enforcer_ops *in = inner_ops(e);

        pending_drop(e);
        return in && in->begin ? in->begin(inner_data(e), err) : 0;
}

/* MEMS as the CRI's cpuset_mems (the node's rule, ncm_node_container_mems), in *RET; NULL
 * when it is left to the runtime. */
static int format_mems(ncm_bitmask mems, char **ret)
{
        ncm_buf b = NCM_BUF_INIT;

        *ret = NULL;
        if (!mems)
                return 0;
        ncm_node_format_mems(mems, &b);
        if (ncm_buf_failed(&b))
                return -ENOMEM;
        *ret = ncm_buf_steal(&b);
        return *ret ? 0 : -ENOMEM;
}

/* Note POD's container NAME (NULL: the whole pod removed) with C's cpusets (NULL: removed). */
static int note(cri_enforcer *e, const char *pod, const char *name, const ncm_enforce_container *c,
                ncm_error *err)
{
        intent *i;

        if (ncm__array_grow(e->pending, e->cap_pending, e->n_pending) < 0)
                return oom(err);
        i = &e->pending[e->n_pending];
        *i = (intent){0};
        if (!(i->pod = strdup(pod)) || (name && !(i->name = strdup(name))) ||
            (c && (!(i->cpus = ncm_cpuset_format_list(c->cpus)) ||
                   format_mems(c->mems, &i->mems) < 0))) {
                intent_done(i);
                return oom(err);
        }
        e->n_pending++;
        return 0;
}

/* The running containers of P: their intents noted. */
static int note_pod(cri_enforcer *e, const ncm_enforce_pod *p, ncm_error *err)
{
        for (size_t k = 0; k < p->n_containers; k++) {
                const ncm_enforce_container *c = &p->containers[k];
                int r;
                if (c->init && !c->sidecar)
                        continue; /* it has run */
                if (!c->exclusive && !e->pin_shared)
                        continue;
                if (ncm_cpuset_is_empty(c->cpus))
                        continue;
                r = note(e, p->pod->uid, c->name, c, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int ce_pod_add(void *data, const ncm_enforce_pod *p, const ncm_cgroup_qos_usage *usage,
                      ncm_error *err)
{
        cri_enforcer *e = data;
        const ncm_enforcer_ops *in = inner_ops(e);
        int r = note_pod(e, p, err);

        if (r >= 0 && in && in->pod_add)
                r = in->pod_add(inner_data(e), p, usage, err);
        return r;
}

static int ce_pod_cpus(void *data, const ncm_enforce_pod *p, ncm_error *err)
{
        cri_enforcer *e = data;
        const ncm_enforcer_ops *in = inner_ops(e);
        int r = note_pod(e, p, err);

        if (r >= 0 && in && in->pod_cpus)
                r = in->pod_cpus(inner_data(e), p, err);
        return r;
}

static int ce_pod_resize(void *data, const ncm_enforce_resize *rs,
                         const ncm_cgroup_qos_usage *usage, ncm_error *err)
{
        cri_enforcer *e = data;
        const ncm_enforcer_ops *in = inner_ops(e);
        int r = 0;

        /* one intent per container: the phases only order writes this enforcer does not make */
        if (rs->phase == NCM_ENFORCE_RESIZE_GROW)
                r = note_pod(e, rs->after, err);
        if (r >= 0 && in && in->pod_resize)
                r = in->pod_resize(inner_data(e), rs, usage, err);
        return r;
}

static int ce_pod_remove(void *data, const ncm_pod *pod, const ncm_cgroup_qos_usage *usage,
                         ncm_error *err)
{
        cri_enforcer *e = data;
        const ncm_enforcer_ops *in = inner_ops(e);
        int r = note(e, pod->uid, NULL, NULL, err);

        if (r >= 0 && in && in->pod_remove)
                r = in->pod_remove(inner_data(e), pod, usage, err);
        return r;
}

static int ce_isolation(void *data, ncm_enforce_isolation *iso, ncm_error *err)
{
        cri_enforcer *e = data;
        const ncm_enforcer_ops *in = inner_ops(e);

        return in && in->isolation ? in->isolation(inner_data(e), iso, err) : 0;
}

typedef struct key {
        const intent *have;
        const char *pod, *name;
} key;

static bool key_eq(size_t pos, const void *ctx)
{
        const key *k = ctx;
        return strcmp(k->have[pos].pod, k->pod) == 0 && strcmp(k->have[pos].name, k->name) == 0;
}

static ssize_t find(const cri_enforcer *e, const char *pod, const char *name)
{
        key k = {e->have, pod, name};
        return ncm__strindex_find(&e->ix, ncm__strindex_hash(pod, name), key_eq, &k);
}

/* HAVE[I] leaves: the last one takes its place. */
static void have_del(cri_enforcer *e, size_t i)
{
        size_t last = e->n_have - 1;

        ncm__strindex_del(&e->ix, ncm__strindex_hash(e->have[i].pod, e->have[i].name), i);
        intent_done(&e->have[i]);
        if (i != last) {
                ncm__strindex_move(&e->ix,
                                   ncm__strindex_hash(e->have[last].pod, e->have[last].name), last,
                                   i);
                e->have[i] = e->have[last];
        }
        e->n_have--;
}

static bool same(const char *a, const char *b)
{
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Published: the pending intents become what the containers should have. Cannot fail. */
static void publish(cri_enforcer *e)
{
        for (size_t k = 0; k < e->n_pending; k++) {
                intent *p = &e->pending[k];
                ssize_t i;
                if (!p->name) {
                        /* a pod's removal: one walk per removed pod, not per container */
                        for (size_t j = e->n_have; j-- > 0;)
                                if (strcmp(e->have[j].pod, p->pod) == 0)
                                        have_del(e, j);
                        intent_done(p);
                        continue;
                }
                i = find(e, p->pod, p->name);
                if (i >= 0) {
                        bool changed = !same(e->have[i].cpus, p->cpus) ||
                                       !same(e->have[i].mems, p->mems);
                        bool dirty = e->have[i].dirty || changed;
                        intent_done(&e->have[i]);
                        e->have[i] = *p;
                        e->have[i].dirty = dirty;
                } else {
                        /* room was made at commit: a slot and an index entry per intent */
                        e->have[e->n_have] = *p;
                        e->have[e->n_have].dirty = true;
                        (void)ncm__strindex_add(&e->ix, ncm__strindex_hash(p->pod, p->name),
                                                e->n_have++);
                }
                *p = (intent){0};
        }
        e->n_pending = 0;
}

static int ce_commit(void *data, ncm_error *err)
{
        cri_enforcer *e = data;

        const ncm_enforcer_ops *in = inner_ops(e);
        int r;

        /* room for every pending intent first, so that publishing cannot fail halfway */
        if (e->n_pending && (ncm__array_grow(e->have, e->cap_have, e->n_have + e->n_pending) < 0 ||
                             ncm__strindex_reserve(&e->ix, e->n_pending) < 0))
                return oom(err);
        r = in && in->commit ? in->commit(inner_data(e), err) : 0;
        if (r < 0)
                return r;
        publish(e);
        return 0;
}

static int ce_rollback(void *data, ncm_error *err)
{
        cri_enforcer *e = data;
        const ncm_enforcer_ops *in = inner_ops(e);

        pending_drop(e);
        return in && in->rollback ? in->rollback(inner_data(e), err) : 0;
}

/* Without an inner enforcer that takes them, no isolation() calls (the node asks for none). */
static const ncm_enforcer_ops cri_ops = {
                .name = "cri",
                .start = ce_start,
                .begin = ce_begin,
                .pod_add = ce_pod_add,
                .pod_cpus = ce_pod_cpus,
                .pod_remove = ce_pod_remove,
                .commit = ce_commit,
                .rollback = ce_rollback,
                .free = ce_free,
                .pod_resize = ce_pod_resize,
};

static const ncm_enforcer_ops cri_isolation_ops = {
                .name = "cri",
                .start = ce_start,
                .begin = ce_begin,
                .pod_add = ce_pod_add,
                .pod_cpus = ce_pod_cpus,
                .pod_remove = ce_pod_remove,
                .commit = ce_commit,
                .rollback = ce_rollback,
                .free = ce_free,
                .isolation = ce_isolation,
                .pod_resize = ce_pod_resize,
};

int ncm_enforcer_cri_new(ncm_enforcer *inner, ncm_enforcer **ret, ncm_error *err)
{
        cri_enforcer *e = calloc(1, sizeof(*e));
        const ncm_enforcer_ops *in = inner ? ncm_enforcer_get_ops(inner) : NULL;

        if (!e) {
                ncm_enforcer_free(inner);
                return oom(err);
        }
        e->inner = inner;
        e->pin_shared = true;
        if (ncm_enforcer_new(in && in->isolation ? &cri_isolation_ops : &cri_ops, e, ret) < 0) {
                ce_free(e);
                return oom(err);
        }
        return 0;
}

static const cri_enforcer *of(const ncm_enforcer *e)
{
        const ncm_enforcer_ops *ops = e ? ncm_enforcer_get_ops(e) : NULL;

        return ops == &cri_ops || ops == &cri_isolation_ops ? ncm_enforcer_get_data(e) : NULL;
}

ncm_enforcer *ncm_enforcer_cri_inner(const ncm_enforcer *e)
{
        const cri_enforcer *ce = of(e);

        return ce ? ce->inner : NULL;
}

int ncm_enforcer_cri_intent(const ncm_enforcer *e, const char *pod_uid, const char *container,
                            const char **ret_cpus, const char **ret_mems)
{
        const cri_enforcer *ce = of(e);
        ssize_t i = ce ? find(ce, pod_uid, container) : -1;

        if (i < 0 || !ce->have[i].cpus)
                return 0;
        *ret_cpus = ce->have[i].cpus;
        *ret_mems = ce->have[i].mems;
        return 1;
}

int ncm_enforcer_cri_take(ncm_enforcer *e, ncm_cri_intent **ret, size_t *ret_n)
{
        cri_enforcer *ce = (cri_enforcer *)of(e);
        ncm_cri_intent *v;
        size_t n = 0;

        *ret = NULL;
        *ret_n = 0;
        if (!ce)
                return -EINVAL;
        for (size_t i = 0; i < ce->n_have; i++)
                n += ce->have[i].dirty && ce->have[i].cpus;
        v = calloc(n + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        n = 0;
        for (size_t i = 0; i < ce->n_have; i++) {
                const intent *h = &ce->have[i];
                if (!h->dirty || !h->cpus)
                        continue;
                v[n] = (ncm_cri_intent){strdup(h->pod), strdup(h->name), strdup(h->cpus),
                                        strdup(h->mems ? h->mems : "")};
                if (!v[n].pod_uid || !v[n].container || !v[n].cpuset_cpus || !v[n].cpuset_mems) {
                        ncm_cri_intents_free(v, n + 1);
                        return -ENOMEM;
                }
                n++;
        }
        /* taken whole or not at all */
        for (size_t i = 0; i < ce->n_have; i++)
                ce->have[i].dirty = false;
        *ret = v;
        *ret_n = n;
        return 0;
}

void ncm_cri_intents_free(ncm_cri_intent *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++) {
                free(v[i].pod_uid);
                free(v[i].container);
                free(v[i].cpuset_cpus);
                free(v[i].cpuset_mems);
        }
        free(v);
}
