/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU manager's in-memory state (kubelet cpumanager/state stateMemory + the checkpoint
 * hook of stateCheckpoint).
 *
 * Pods and their containers live in arrays sorted with strcmp (bytewise, as Go compares
 * strings), found by binary search. A node runs at most a few hundred pods, so insertion by
 * memmove is cheaper than any tree and keeps iteration order free.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpustate.h>
#include "base/array.h"
#include "base/sorted.h"
#include "cpumanager/state-internal.h"

typedef struct ctr_entry {
        char *name;
        ncm_cpuset *cpus;
        ncm_cpuset *promised; /* its CPUs at first admission (KEP-5554); NULL: none kept */
} ctr_entry;

typedef struct pod_entry {
        char *uid;
        size_t n, cap;
        ctr_entry *ctrs;
} pod_entry;

struct ncm_cpu_state {
        char *policy;
        ncm_cpuset *dflt;
        size_t n, cap;
        pod_entry *pods;
        ncm_cpu_state_persist_fn persist;
        void *userdata;
        void (*free_userdata)(void *);
        bool held;    /* ncm_cpu_state_hold(): changes are not persisted one by one */
        bool changed; /* a change happened while held */
        ncm_kubelet_version kubelet; /* whose cpu_manager_state layout it is written in */
};

/* Index of KEY in a name-sorted array, or where it would be inserted (*FOUND says which). */
static size_t at_or_insertion(ssize_t i, bool *found)
{
        *found = i >= 0;
        return i >= 0 ? (size_t)i : (size_t)(-i - 1);
}

static size_t find_pod(const ncm_cpu_state *s, const char *uid, bool *found)
{
        return at_or_insertion(ncm__sorted_find(s->pods, s->n, sizeof(*s->pods),
                                                offsetof(pod_entry, uid), uid),
                               found);
}

static size_t find_ctr(const pod_entry *p, const char *name, bool *found)
{
        return at_or_insertion(ncm__sorted_find(p->ctrs, p->n, sizeof(*p->ctrs),
                                                offsetof(ctr_entry, name), name),
                               found);
}

static void pod_done(pod_entry *p)
{
        for (size_t i = 0; i < p->n; i++) {
                free(p->ctrs[i].name);
                ncm_cpuset_free(p->ctrs[i].cpus);
                ncm_cpuset_free(p->ctrs[i].promised);
        }
        free(p->ctrs);
        free(p->uid);
        memset(p, 0, sizeof(*p));
}

static void clear_pods(ncm_cpu_state *s)
{
        for (size_t i = 0; i < s->n; i++)
                pod_done(&s->pods[i]);
        free(s->pods);
        s->pods = NULL;
        s->n = s->cap = 0;
}

ncm_cpu_state *ncm_cpu_state_new(const char *policy_name)
{
        ncm_cpu_state *s = calloc(1, sizeof(*s));
        if (!s)
                return NULL;
        s->policy = strdup(policy_name ? policy_name : "");
        s->dflt = ncm_cpuset_new();
        if (!s->policy || !s->dflt)
                return ncm_cpu_state_free(s);
        return s;
}

ncm_cpu_state *ncm_cpu_state_free(ncm_cpu_state *s)
{
        if (!s)
                return NULL;
        clear_pods(s);
        if (s->free_userdata)
                s->free_userdata(s->userdata);
        ncm_cpuset_free(s->dflt);
        free(s->policy);
        free(s);
        return NULL;
}

/* A copy of pod entry SP into *DP (zeroed); false when out of memory (*DP then done). */
static bool copy_pod(const pod_entry *sp, pod_entry *dp)
{
        dp->uid = strdup(sp->uid);
        if (!dp->uid)
                goto fail;
        if (sp->n) {
                dp->ctrs = calloc(sp->n, sizeof(*dp->ctrs));
                if (!dp->ctrs)
                        goto fail;
                dp->cap = sp->n;
        }
        for (size_t j = 0; j < sp->n; j++) {
                ctr_entry *dc = &dp->ctrs[j];
                dc->name = strdup(sp->ctrs[j].name);
                dc->cpus = ncm_cpuset_dup(sp->ctrs[j].cpus);
                dc->promised = sp->ctrs[j].promised ? ncm_cpuset_dup(sp->ctrs[j].promised) : NULL;
                dp->n = j + 1;
                if (!dc->name || !dc->cpus || (sp->ctrs[j].promised && !dc->promised))
                        goto fail;
        }
        return true;
fail:
        pod_done(dp);
        return false;
}

/* Copy the pods of SRC into fresh storage; false when out of memory (*RET untouched). */
static bool copy_pods(const ncm_cpu_state *src, pod_entry **ret, size_t *ret_n)
{
        pod_entry *pods = NULL;
        size_t n = src->n;
        if (n) {
                pods = calloc(n, sizeof(*pods));
                if (!pods)
                        return false;
        }
        for (size_t i = 0; i < n; i++) {
                if (!copy_pod(&src->pods[i], &pods[i])) {
                        for (size_t k = 0; k < i; k++)
                                pod_done(&pods[k]);
                        free(pods);
                        return false;
                }
        }
        *ret = pods;
        *ret_n = n;
        return true;
}

ncm_cpu_state *ncm_cpu_state_dup(const ncm_cpu_state *s)
{
        ncm_autoptr(ncm_cpu_state) d = ncm_cpu_state_new(s->policy);
        if (!d)
                return NULL;
        ncm_cpuset_copy(d->dflt, s->dflt);
        if (!copy_pods(s, &d->pods, &d->n))
                return NULL;
        d->cap = d->n;
        d->kubelet = s->kubelet;
        return NCM_TAKE_PTR(d);
}

static bool pod_equal(const pod_entry *pa, const pod_entry *pb)
{
        if (strcmp(pa->uid, pb->uid) != 0 || pa->n != pb->n)
                return false;
        for (size_t j = 0; j < pa->n; j++) {
                const ncm_cpuset *xa = pa->ctrs[j].promised, *xb = pb->ctrs[j].promised;
                if (strcmp(pa->ctrs[j].name, pb->ctrs[j].name) != 0 ||
                    !ncm_cpuset_equal(pa->ctrs[j].cpus, pb->ctrs[j].cpus) || !xa != !xb ||
                    (xa && !ncm_cpuset_equal(xa, xb)))
                        return false;
        }
        return true;
}

bool ncm_cpu_state_equal(const ncm_cpu_state *a, const ncm_cpu_state *b)
{
        if (strcmp(a->policy, b->policy) != 0 || !ncm_cpuset_equal(a->dflt, b->dflt) ||
            a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!pod_equal(&a->pods[i], &b->pods[i]))
                        return false;
        return true;
}

void ncm_cpu_state_set_kubelet_version(ncm_cpu_state *s, ncm_kubelet_version v)
{
        s->kubelet = v;
}

ncm_kubelet_version ncm_cpu_state_kubelet_version(const ncm_cpu_state *s)
{
        return s->kubelet;
}

const char *ncm_cpu_state_policy(const ncm_cpu_state *s)
{
        return s->policy;
}

const ncm_cpuset *ncm_cpu_state_default(const ncm_cpu_state *s)
{
        return s->dflt;
}

const ncm_cpuset *ncm_cpu_state_get(const ncm_cpu_state *s, const char *pod, const char *container)
{
        bool found;
        size_t i = find_pod(s, pod, &found);
        if (!found)
                return NULL;
        size_t j = find_ctr(&s->pods[i], container, &found);
        return found ? s->pods[i].ctrs[j].cpus : NULL;
}

const ncm_cpuset *ncm_cpu_state_get_or_default(const ncm_cpu_state *s, const char *pod,
                                               const char *container)
{
        const ncm_cpuset *c = ncm_cpu_state_get(s, pod, container);
        return c ? c : s->dflt;
}

int ncm_cpu_state_persist(const ncm_cpu_state *s, ncm_error *err)
{
        if (!s->persist)
                return 0;
        int r = s->persist(s, s->userdata, err);
        return r < 0 ? r : 0;
}

/* After a mutation: persist it now (the kubelet's storeState), or note it while held. */
static int persist_change(ncm_cpu_state *s, ncm_error *err)
{
        if (s->held) {
                s->changed = true;
                return 0;
        }
        return ncm_cpu_state_persist(s, err);
}

void ncm_cpu_state_hold(ncm_cpu_state *s)
{
        s->held = true;
}

int ncm_cpu_state_flush(ncm_cpu_state *s, ncm_error *err)
{
        bool changed = s->changed;

        s->held = false;
        s->changed = false;
        return changed ? ncm_cpu_state_persist(s, err) : 0;
}

int ncm__cpu_state_add_pod(ncm_cpu_state *s, const char *pod, size_t *ret_index)
{
        bool found;
        size_t i = find_pod(s, pod, &found);
        if (!found) {
                char *uid = strdup(pod);
                if (!uid || ncm__array_grow(s->pods, s->cap, s->n) < 0) {
                        free(uid);
                        return -ENOMEM;
                }
                memmove(&s->pods[i + 1], &s->pods[i], (s->n - i) * sizeof(*s->pods));
                s->pods[i] = (pod_entry){.uid = uid};
                s->n++;
        }
        if (ret_index)
                *ret_index = i;
        return found ? 0 : 1;
}

/* Remove pod I (with whatever containers it has). */
static void remove_pod_at(ncm_cpu_state *s, size_t i)
{
        pod_done(&s->pods[i]);
        memmove(&s->pods[i], &s->pods[i + 1], (s->n - i - 1) * sizeof(*s->pods));
        s->n--;
}

int ncm__cpu_state_set_nopersist(ncm_cpu_state *s, const char *pod, const char *container,
                                 const ncm_cpuset *cpus)
{
        bool found;
        size_t pi, ci;
        int r;

        /* Allocate first so that out of memory leaves the state as it was. */
        ncm_autoptr(ncm_cpuset) copy = ncm_cpuset_dup(cpus);
        if (!copy)
                return -ENOMEM;
        r = ncm__cpu_state_add_pod(s, pod, &pi);
        if (r < 0)
                return r;
        bool new_pod = r > 0;
        pod_entry *p = &s->pods[pi];
        ci = find_ctr(p, container, &found);
        if (found) {
                ncm_cpuset_free(p->ctrs[ci].cpus);
                p->ctrs[ci].cpus = NCM_TAKE_PTR(copy);
                return 0;
        }
        char *name = strdup(container);
        if (!name || ncm__array_grow(p->ctrs, p->cap, p->n) < 0) {
                free(name);
                if (new_pod)
                        remove_pod_at(s, pi);
                return -ENOMEM;
        }
        memmove(&p->ctrs[ci + 1], &p->ctrs[ci], (p->n - ci) * sizeof(*p->ctrs));
        p->ctrs[ci] = (ctr_entry){.name = name, .cpus = NCM_TAKE_PTR(copy)};
        p->n++;
        return 0;
}

int ncm_cpu_state_set(ncm_cpu_state *s, const char *pod, const char *container,
                      const ncm_cpuset *cpus, ncm_error *err)
{
        int r = ncm__cpu_state_set_nopersist(s, pod, container, cpus);
        if (r < 0)
                return ncm_error_set(err, -r,
                                     "set CPUs of container '%s' in pod '%s': out of memory",
                                     container, pod);
        return persist_change(s, err);
}

int ncm_cpu_state_set_default(ncm_cpu_state *s, const ncm_cpuset *cpus, ncm_error *err)
{
        ncm_cpuset_copy(s->dflt, cpus);
        return persist_change(s, err);
}

int ncm_cpu_state_delete(ncm_cpu_state *s, const char *pod, const char *container, ncm_error *err)
{
        bool found;
        int removed = 0, r;
        size_t pi = find_pod(s, pod, &found);
        if (found) {
                pod_entry *p = &s->pods[pi];
                size_t ci = find_ctr(p, container, &found);
                if (found) {
                        free(p->ctrs[ci].name);
                        ncm_cpuset_free(p->ctrs[ci].cpus);
                        ncm_cpuset_free(p->ctrs[ci].promised);
                        memmove(&p->ctrs[ci], &p->ctrs[ci + 1], (p->n - ci - 1) * sizeof(*p->ctrs));
                        p->n--;
                        removed = 1;
                }
                /* kubelet: delete(s.assignments, podUID) once the pod's map is empty. */
                if (p->n == 0)
                        remove_pod_at(s, pi);
        }
        r = persist_change(s, err);
        return r < 0 ? r : removed;
}

int ncm_cpu_state_delete_pod(ncm_cpu_state *s, const char *pod, ncm_error *err)
{
        bool found;
        int removed = 0, r;
        size_t pi = find_pod(s, pod, &found);
        if (found) {
                removed = (int)s->pods[pi].n;
                remove_pod_at(s, pi);
        }
        r = persist_change(s, err);
        return r < 0 ? r : removed;
}

int ncm_cpu_state_clear(ncm_cpu_state *s, ncm_error *err)
{
        ncm_cpuset_zero(s->dflt);
        clear_pods(s);
        return persist_change(s, err);
}

int ncm_cpu_state_assign(ncm_cpu_state *s, const ncm_cpu_state *src, ncm_error *err)
{
        pod_entry *pods;
        size_t n;
        if (s == src)
                return persist_change(s, err);
        if (!copy_pods(src, &pods, &n))
                return ncm_error_set(err, ENOMEM, "copy CPU state: out of memory");
        clear_pods(s);
        s->pods = pods;
        s->n = s->cap = n;
        ncm_cpuset_copy(s->dflt, src->dflt);
        return persist_change(s, err);
}

void ncm_cpu_state_set_persist(ncm_cpu_state *s, ncm_cpu_state_persist_fn fn, void *userdata,
                               void (*free_userdata)(void *))
{
        if (s->free_userdata && !(fn && s->userdata == userdata))
                s->free_userdata(s->userdata);
        s->persist = fn;
        s->userdata = fn ? userdata : NULL;
        s->free_userdata = fn ? free_userdata : NULL;
}

size_t ncm_cpu_state_pod_index(const ncm_cpu_state *s, const char *uid)
{
        bool found;
        size_t i = find_pod(s, uid, &found);

        return found ? i : SIZE_MAX;
}

size_t ncm_cpu_state_num_pods(const ncm_cpu_state *s)
{
        return s->n;
}

size_t ncm_cpu_state_num_entries(const ncm_cpu_state *s)
{
        size_t n = 0;
        for (size_t i = 0; i < s->n; i++)
                n += s->pods[i].n;
        return n;
}

const char *ncm_cpu_state_pod_uid(const ncm_cpu_state *s, size_t pod)
{
        return s->pods[pod].uid;
}

size_t ncm_cpu_state_pod_num_containers(const ncm_cpu_state *s, size_t pod)
{
        return s->pods[pod].n;
}

const char *ncm_cpu_state_container_name(const ncm_cpu_state *s, size_t pod, size_t ctr)
{
        return s->pods[pod].ctrs[ctr].name;
}

const ncm_cpuset *ncm_cpu_state_container_cpus(const ncm_cpu_state *s, size_t pod, size_t ctr)
{
        return s->pods[pod].ctrs[ctr].cpus;
}

bool ncm_cpu_state_next(const ncm_cpu_state *s, ncm_cpu_state_iter *it, const char **pod,
                        const char **container, const ncm_cpuset **cpus)
{
        while (it->pod < s->n && it->ctr >= s->pods[it->pod].n) {
                it->pod++;
                it->ctr = 0;
        }
        if (it->pod >= s->n)
                return false;
        const pod_entry *p = &s->pods[it->pod];
        const ctr_entry *c = &p->ctrs[it->ctr++];
        if (pod)
                *pod = p->uid;
        if (container)
                *container = c->name;
        if (cpus)
                *cpus = c->cpus;
        return true;
}

void ncm_cpu_state_assigned(const ncm_cpu_state *s, ncm_cpuset *out)
{
        ncm_cpuset_zero(out);
        for (size_t i = 0; i < s->n; i++)
                for (size_t j = 0; j < s->pods[i].n; j++)
                        ncm_cpuset_or(out, out, s->pods[i].ctrs[j].cpus);
}

/* ---- promised CPUs (KEP-5554) -------------------------------------------------------------- */

static ctr_entry *find_entry(const ncm_cpu_state *s, const char *pod, const char *container)
{
        bool found;
        size_t i = find_pod(s, pod, &found), j;

        if (!found)
                return NULL;
        j = find_ctr(&s->pods[i], container, &found);
        return found ? &s->pods[i].ctrs[j] : NULL;
}

const ncm_cpuset *ncm_cpu_state_promised(const ncm_cpu_state *s, const char *pod,
                                         const char *container)
{
        const ctr_entry *e = find_entry(s, pod, container);
        return e ? e->promised : NULL;
}

const ncm_cpuset *ncm_cpu_state_container_promised(const ncm_cpu_state *s, size_t pod, size_t ctr)
{
        return s->pods[pod].ctrs[ctr].promised;
}

bool ncm_cpu_state_has_promised(const ncm_cpu_state *s)
{
        for (size_t i = 0; i < s->n; i++)
                for (size_t j = 0; j < s->pods[i].n; j++)
                        if (s->pods[i].ctrs[j].promised)
                                return true;
        return false;
}

int ncm__cpu_state_set_promised_nopersist(ncm_cpu_state *s, const char *pod, const char *container,
                                          const ncm_cpuset *cpus)
{
        ctr_entry *e = find_entry(s, pod, container);
        ncm_cpuset *copy = NULL;

        if (!e)
                return -ENOENT;
        if (cpus && !(copy = ncm_cpuset_dup(cpus)))
                return -ENOMEM;
        ncm_cpuset_free(e->promised);
        e->promised = copy;
        return 0;
}

int ncm_cpu_state_set_promised(ncm_cpu_state *s, const char *pod, const char *container,
                               const ncm_cpuset *cpus, ncm_error *err)
{
        int r = ncm__cpu_state_set_promised_nopersist(s, pod, container, cpus);

        if (r == -ENOENT)
                return ncm_error_set(err, ENOENT, "container '%s' of pod '%s' holds no CPUs",
                                     container, pod);
        if (r < 0)
                return ncm_error_set(err, -r,
                                     "set promised CPUs of container '%s' in pod '%s': "
                                     "out of memory",
                                     container, pod);
        return persist_change(s, err);
}

/* One pod's entries and the default set, as they were (ncm__cpu_state_pod_save). */
struct ncm__cpu_state_pod_saved {
        bool had;      /* the pod had a key */
        pod_entry pod; /* its entries (had) */
        char *uid;
        ncm_cpuset *dflt;
};

void ncm__cpu_state_pod_saved_free(ncm__cpu_state_pod_saved *v)
{
        if (!v)
                return;
        pod_done(&v->pod);
        free(v->uid);
        ncm_cpuset_free(v->dflt);
        free(v);
}

int ncm__cpu_state_pod_save(const ncm_cpu_state *s, const char *pod, ncm__cpu_state_pod_saved **ret)
{
        ncm__cpu_state_pod_saved *v = calloc(1, sizeof(*v));
        bool found;
        size_t i;

        if (!v)
                return -ENOMEM;
        i = find_pod(s, pod, &found);
        v->had = found;
        v->uid = strdup(pod);
        v->dflt = ncm_cpuset_dup(s->dflt);
        if (!v->uid || !v->dflt || (found && !copy_pod(&s->pods[i], &v->pod))) {
                ncm__cpu_state_pod_saved_free(v);
                return -ENOMEM;
        }
        *ret = v;
        return 0;
}

int ncm__cpu_state_pod_restore(ncm_cpu_state *s, const ncm__cpu_state_pod_saved *v)
{
        pod_entry fresh = {0};
        bool found;
        size_t i = find_pod(s, v->uid, &found);

        if (ncm_cpuset_equal(s->dflt, v->dflt) &&
            (found ? v->had && pod_equal(&s->pods[i], &v->pod) : !v->had))
                return 0;
        /* whatever can fail first: S is then restored or untouched */
        if (v->had && (!copy_pod(&v->pod, &fresh) ||
                       (!found && ncm__array_grow(s->pods, s->cap, s->n) < 0))) {
                pod_done(&fresh);
                return -ENOMEM;
        }
        if (found && v->had) {
                pod_done(&s->pods[i]);
                s->pods[i] = fresh;
        } else if (found) {
                remove_pod_at(s, i);
        } else if (v->had) {
                memmove(&s->pods[i + 1], &s->pods[i], (s->n - i) * sizeof(*s->pods));
                s->pods[i] = fresh;
                s->n++;
        }
        ncm_cpuset_copy(s->dflt, v->dflt);
        return persist_change(s, NULL);
}

bool ncm__cpu_state_find_pod(const ncm_cpu_state *s, const char *pod, size_t *ret_index)
{
        bool found;
        *ret_index = find_pod(s, pod, &found);
        return found;
}
