/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's resource-fit admission (nodecm/node-fit.h): noderesources' fitsRequest over
 * the scheduler framework's Resource (milli-CPU, memory and ephemeral storage in bytes, scalar
 * resources by name), and the predicate handler's reason and message for the first failure.
 *
 * The node's side (what the node knows of its allocatable, which pods count, and when the
 * check runs) is at the end: ncm__node_fit().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/devicemanager.h>
#include <nodecm/node-fit.h>
#include "base/array.h"
#include "node-internal.h"

#define RESOURCE_EPHEMERAL "ephemeral-storage"
#define RESOURCE_PODS "pods"

/* The framework's Resource: what one pod asks for, or what many ask for together. */
typedef struct fit_res {
        int64_t milli_cpu, memory, ephemeral;
        struct scalar {
                char *name;
                int64_t value;
        } * scalars;
        size_t n, cap;
} fit_res;

static int64_t add_sat(int64_t a, int64_t b)
{
        if (b > 0 && a > INT64_MAX - b)
                return INT64_MAX;
        if (b < 0 && a < INT64_MIN - b)
                return INT64_MIN;
        return a + b;
}

/* IsScalarResourceName: extended resources, hugepages, and names prefixed "kubernetes.io/". */
static bool is_scalar(const char *name)
{
        return ncm_devmgr_is_extended_resource_name(name) ||
               strncmp(name, NCM_RESOURCE_HUGEPAGES_PREFIX,
                       strlen(NCM_RESOURCE_HUGEPAGES_PREFIX)) == 0 ||
               strstr(name, "kubernetes.io/") != NULL;
}

static int64_t *scalar_of(fit_res *r, const char *name, bool add)
{
        for (size_t i = 0; i < r->n; i++)
                if (strcmp(r->scalars[i].name, name) == 0)
                        return &r->scalars[i].value;
        if (!add)
                return NULL;
        if (ncm__array_grow(r->scalars, r->cap, r->n) < 0)
                return NULL;
        r->scalars[r->n] = (struct scalar){strdup(name), 0};
        if (!r->scalars[r->n].name)
                return NULL;
        return &r->scalars[r->n++].value;
}

/* Add the requests L to R (Resource.Add). */
static int res_add(fit_res *r, const ncm_resource_list *l)
{
        for (size_t i = 0; i < l->n; i++) {
                const char *name = l->items[i].name;
                const ncm_quantity *q = &l->items[i].quantity;
                if (strcmp(name, NCM_RESOURCE_CPU) == 0) {
                        r->milli_cpu = add_sat(r->milli_cpu, ncm_quantity_milli_value(q));
                } else if (strcmp(name, NCM_RESOURCE_MEMORY) == 0) {
                        r->memory = add_sat(r->memory, ncm_quantity_value(q));
                } else if (strcmp(name, RESOURCE_EPHEMERAL) == 0) {
                        r->ephemeral = add_sat(r->ephemeral, ncm_quantity_value(q));
                } else if (is_scalar(name)) {
                        int64_t *v = scalar_of(r, name, true);
                        if (!v)
                                return -ENOMEM;
                        *v = add_sat(*v, ncm_quantity_value(q));
                }
        }
        return 0;
}

static void res_done(fit_res *r)
{
        for (size_t i = 0; i < r->n; i++)
                free(r->scalars[i].name);
        free(r->scalars);
        *r = (fit_res){0};
}

static int cmp_scalar(const void *a, const void *b)
{
        return strcmp(((const struct scalar *)a)->name, ((const struct scalar *)b)->name);
}

static void refuse(ncm_node_fit *ret, const char *name, int64_t requested, int64_t used,
                   int64_t capacity)
{
        ret->fit = false;
        snprintf(ret->reason, sizeof(ret->reason), "OutOf%s", name);
        snprintf(ret->message, sizeof(ret->message),
                 "Node didn't have enough resource: %s, requested: %lld, used: %lld, "
                 "capacity: %lld",
                 name, (long long)requested, (long long)used, (long long)capacity);
        snprintf(ret->resource, sizeof(ret->resource), "%s", name);
        ret->requested = requested;
        ret->used = used;
        ret->capacity = capacity;
}

/* One of cpu, memory, ephemeral-storage: checked only when requested and allocatable known. */
static bool fits_one(const ncm_resource_list *alloc, const char *name, int64_t req, int64_t used,
                     bool milli, ncm_node_fit *ret)
{
        const ncm_quantity *a = ncm_resource_list_get(alloc, name);
        int64_t cap;

        if (req <= 0 || !a)
                return true;
        cap = milli ? ncm_quantity_milli_value(a) : ncm_quantity_value(a);
        if (req <= cap - used)
                return true;
        refuse(ret, name, req, used, cap);
        return false;
}

/* Add the scalars and amounts of FROM to TO. -ENOMEM. */
static int res_merge(fit_res *to, const fit_res *from)
{
        to->milli_cpu = add_sat(to->milli_cpu, from->milli_cpu);
        to->memory = add_sat(to->memory, from->memory);
        to->ephemeral = add_sat(to->ephemeral, from->ephemeral);
        for (size_t i = 0; i < from->n; i++) {
                int64_t *v = scalar_of(to, from->scalars[i].name, true);
                if (!v)
                        return -ENOMEM;
                *v = add_sat(*v, from->scalars[i].value);
        }
        return 0;
}

/* The requests of POD as the framework's Resource. */
static int pod_res(const ncm_pod *pod, unsigned flags, fit_res *ret, ncm_error *err)
{
        unsigned rf = (flags & NCM_NODE_FIT_NO_POD_LEVEL) ? NCM_POD_SKIP_POD_LEVEL : 0;
        ncm_resource_list reqs = {0};
        int r = ncm_pod_requests(pod, rf, &reqs, err);

        if (r < 0)
                return r;
        r = res_add(ret, &reqs);
        ncm_resource_list_done(&reqs);
        if (r < 0) {
                res_done(ret);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        return 0;
}

/* fitsRequest for WANT beside USED (N_USED pods) in ALLOCATABLE. */
static void decide(fit_res *want, const fit_res *used, size_t n_used,
                   const ncm_resource_list *allocatable, ncm_node_fit *ret)
{
        const ncm_quantity *pods = ncm_resource_list_get(allocatable, RESOURCE_PODS);
        ncm_node_fit res = {.fit = true};

        /* the pod count first, whatever the pod asks for */
        if (pods && (int64_t)n_used + 1 > ncm_quantity_value(pods)) {
                refuse(&res, RESOURCE_PODS, 1, (int64_t)n_used, ncm_quantity_value(pods));
                *ret = res;
                return;
        }
        if (want->milli_cpu == 0 && want->memory == 0 && want->ephemeral == 0 && want->n == 0)
                goto out;
        if (!fits_one(allocatable, NCM_RESOURCE_CPU, want->milli_cpu, used->milli_cpu, true,
                      &res) ||
            !fits_one(allocatable, NCM_RESOURCE_MEMORY, want->memory, used->memory, false, &res) ||
            !fits_one(allocatable, RESOURCE_EPHEMERAL, want->ephemeral, used->ephemeral, false,
                      &res))
                goto out;
        /* the kubelet ranges over a map: a fixed order, by name, for a stable first failure */
        if (want->n > 1)
                qsort(want->scalars, want->n, sizeof(*want->scalars), cmp_scalar);
        for (size_t i = 0; i < want->n; i++) {
                const struct scalar *sc = &want->scalars[i];
                /* removeMissingExtendedResources: a resource the node does not have is not
                 * checked (nor, here, any other whose amount nodecm does not know) */
                const ncm_quantity *a = ncm_resource_list_get(allocatable, sc->name);
                int64_t in_use = 0, cap;
                for (size_t j = 0; j < used->n; j++)
                        if (strcmp(used->scalars[j].name, sc->name) == 0)
                                in_use = used->scalars[j].value;
                if (sc->value == 0 || !a)
                        continue;
                cap = ncm_quantity_value(a);
                if (sc->value > cap - in_use) {
                        refuse(&res, sc->name, sc->value, in_use, cap);
                        break;
                }
        }
out:
        *ret = res;
}

int ncm_node_fit_check(const ncm_pod *pod, const ncm_pod *const *others, size_t n_others,
                       const ncm_resource_list *allocatable, unsigned flags, ncm_node_fit *ret,
                       ncm_error *err)
{
        fit_res want = {0}, used = {0};
        int r = pod_res(pod, flags, &want, err);

        for (size_t i = 0; r >= 0 && i < n_others; i++) {
                fit_res o = {0};
                r = pod_res(others[i], flags, &o, err);
                if (r >= 0 && res_merge(&used, &o) < 0)
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                res_done(&o);
        }
        if (r >= 0)
                decide(&want, &used, n_others, allocatable, ret);
        res_done(&want);
        res_done(&used);
        return r;
}

/* ------------------------------------------------------------------------------------------
 * The node's side
 */

int ncm__node_fit_set_capacity(ncm_node *n, const ncm_resource_list *capacity, ncm_error *err)
{
        for (size_t i = 0; capacity && i < capacity->n; i++)
                if (ncm_cgroup_resource_list_set(&n->fit_capacity, capacity->items[i].name,
                                                 &capacity->items[i].quantity) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        return 0;
}

bool ncm__node_fit_wanted(const ncm_node *n, unsigned flags)
{
        switch (ncm_node_config_fit_admission(n->cfg)) {
        case NCM_NODE_FIT_ALWAYS:
                return true;
        case NCM_NODE_FIT_NEVER:
                return false;
        default:
                return !(flags & NCM_NODE_KUBELET_ADMITTED);
        }
}

/*
 * What the node knows of its allocatable: its capacity (given, else the topology's CPUs: the
 * kubelet's cpu capacity is cadvisor's NumCores, the online CPUs), less the reservations and
 * hard eviction thresholds (ncm_node_config_allocatable, reservations of resources the
 * capacity does not name left out), and the pod count (maxPods, or podsPerCore per CPU when
 * that is less: the kubelet's node status).
 */
static int node_allocatable(const ncm_node *n, ncm_resource_list *ret, ncm_error *err)
{
        ncm_resource_list cap = {0};
        ncm_node_allocatable na = {0};
        int cpus = ncm_topo_num_cpus(n->topo);
        int64_t pods = ncm_node_config_max_pods(n->cfg);
        int64_t per_core = ncm_node_config_pods_per_core(n->cfg);
        ncm_quantity q;
        int r = 0;

        for (size_t i = 0; i < n->fit_capacity.n && r >= 0; i++)
                r = ncm_cgroup_resource_list_set(&cap, n->fit_capacity.items[i].name,
                                                 &n->fit_capacity.items[i].quantity);
        if (r >= 0 && !ncm_resource_list_get(&cap, NCM_RESOURCE_CPU)) {
                q = ncm_quantity_from_int((int64_t)cpus, NCM_QUANTITY_DECIMAL_SI);
                r = ncm_cgroup_resource_list_set(&cap, NCM_RESOURCE_CPU, &q);
        }
        if (r < 0) {
                ncm_resource_list_done(&cap);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        /* reservations count over the capacity's resources only: nothing is refused for a
         * resource whose amount nodecm does not know */
        r = ncm_node_config_allocatable(n->cfg, &cap, &na, err);
        ncm_resource_list_done(&cap);
        if (r < 0)
                return r;
        if (per_core > 0 && per_core * (int64_t)cpus < pods)
                pods = per_core * (int64_t)cpus;
        q = ncm_quantity_from_int(pods, NCM_QUANTITY_DECIMAL_SI);
        r = ncm_cgroup_resource_list_set(&na.allocatable, RESOURCE_PODS, &q);
        if (r < 0) {
                ncm_node_allocatable_done(&na);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        *ret = na.allocatable;
        na.allocatable = (ncm_resource_list){0};
        ncm_node_allocatable_done(&na);
        return 0;
}

/* What a pod the node holds asks for, computed once for its record (node_pod.fit). */
struct ncm__node_fit_req {
        unsigned flags;
        fit_res res;
};

void ncm__node_fit_req_free(struct ncm__node_fit_req *q)
{
        if (!q)
                return;
        res_done(&q->res);
        free(q);
}

/* The fit parts of the pods in the registry's sums (node_sums), wide: see there. */
typedef struct ncm__node_fit_sum {
        unsigned flags; /* the parts' (the node's pod options) */
        node_wide milli_cpu, memory, ephemeral;
        struct wide_scalar {
                char *name;
                node_wide value;
        } * scalars;
        size_t n, cap;
} fit_sum;

void ncm__node_fit_sum_free(fit_sum *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n; i++)
                free(s->scalars[i].name);
        free(s->scalars);
        free(s);
}

static unsigned fit_flags(const ncm_node *n)
{
        ncm_cgroup_pod_options po;

        ncm_node_config_pod_options(n->cfg, &po);
        return po.pod_level_resources ? 0 : NCM_NODE_FIT_NO_POD_LEVEL;
}

static node_wide *wide_scalar_of(fit_sum *s, const char *name, bool add)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->scalars[i].name, name) == 0)
                        return &s->scalars[i].value;
        if (!add || ncm__array_grow(s->scalars, s->cap, s->n) < 0)
                return NULL;
        s->scalars[s->n] = (struct wide_scalar){strdup(name), 0};
        if (!s->scalars[s->n].name)
                return NULL;
        return &s->scalars[s->n++].value;
}

/* P's requests for the fit admission (P->fit), computed once for its record, with FLAGS. */
static int pod_fit_req(node_pod *p, unsigned flags, ncm_error *err)
{
        struct ncm__node_fit_req *q;
        int r;

        if (p->fit && p->fit->flags == flags)
                return 0;
        q = calloc(1, sizeof(*q));
        if (!q)
                return ncm_error_set(err, ENOMEM, "out of memory");
        q->flags = flags;
        r = pod_res(p->spec, flags, &q->res, err);
        if (r < 0) {
                free(q);
                return r;
        }
        ncm__node_fit_req_free(p->fit);
        p->fit = q;
        return 0;
}

int ncm__node_fit_sum_enter(ncm_node *n, node_pod *p)
{
        unsigned flags = fit_flags(n);
        fit_sum *s = n->sums.fit;
        node_wide *v[64];
        const fit_res *f;
        int r;

        if (!s) {
                s = n->sums.fit = calloc(1, sizeof(*s));
                if (!s)
                        return -ENOMEM;
                s->flags = flags;
        }
        if (s->flags != flags)
                return -EINVAL;
        r = pod_fit_req(p, flags, NULL);
        if (r < 0)
                return r;
        f = &p->fit->res;
        if (f->milli_cpu < 0 || f->memory < 0 || f->ephemeral < 0 || f->n > NCM_ELEMENTSOF(v))
                return -ERANGE;
        /* every slot first: a part is added whole or not at all */
        for (size_t i = 0; i < f->n; i++) {
                if (f->scalars[i].value < 0)
                        return -ERANGE;
                v[i] = wide_scalar_of(s, f->scalars[i].name, true);
                if (!v[i])
                        return -ENOMEM;
        }
        s->milli_cpu += f->milli_cpu;
        s->memory += f->memory;
        s->ephemeral += f->ephemeral;
        for (size_t i = 0; i < f->n; i++)
                *v[i] += f->scalars[i].value;
        return 0;
}

void ncm__node_fit_sum_leave(ncm_node *n, const node_pod *p)
{
        fit_sum *s = n->sums.fit;
        const fit_res *f = &p->fit->res;

        s->milli_cpu -= f->milli_cpu;
        s->memory -= f->memory;
        s->ephemeral -= f->ephemeral;
        for (size_t i = 0; i < f->n; i++)
                *wide_scalar_of(s, f->scalars[i].name, false) -= f->scalars[i].value;
}

static int64_t capped(node_wide v)
{
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/*
 * The requests of the pods the node holds (the kubelet's active pods), the pod UID left out (a
 * re-admission after a restart), into *USED and *K (how many): the registry's sums less that
 * pod's part.
 */
static int used_of_sums(ncm_node *n, const char *uid, fit_res *used, size_t *k)
{
        const fit_sum *s = n->sums.fit;
        const node_pod *self = ncm__node_pod_find(n, uid);
        const fit_res *own = self && self->spec ? &self->fit->res : NULL;

        *k = n->sums.n_specs - (own ? 1 : 0);
        if (!s)
                return 0;
        used->milli_cpu = capped(s->milli_cpu - (own ? own->milli_cpu : 0));
        used->memory = capped(s->memory - (own ? own->memory : 0));
        used->ephemeral = capped(s->ephemeral - (own ? own->ephemeral : 0));
        for (size_t i = 0; i < s->n; i++) {
                node_wide v = s->scalars[i].value;
                int64_t *to = scalar_of(used, s->scalars[i].name, true);
                if (!to)
                        return -ENOMEM;
                for (size_t j = 0; own && j < own->n; j++)
                        if (strcmp(own->scalars[j].name, s->scalars[i].name) == 0)
                                v -= own->scalars[j].value;
                *to = capped(v);
        }
        return 0;
}

/* The same by walking every pod: while a pod is held that is not summed. */
static int used_of_walk(ncm_node *n, const char *uid, unsigned flags, fit_res *used, size_t *k,
                        ncm_error *err)
{
        int r = 0;

        *k = 0;
        for (size_t i = 0; r >= 0 && i < n->n_pods; i++) {
                node_pod *p = n->pods[i];
                fit_res tmp = {0};
                const fit_res *part;
                if (!p->spec || strcmp(p->uid, uid) == 0)
                        continue;
                /* a summed pod keeps the part it was summed with */
                if (!p->summed) {
                        r = pod_fit_req(p, flags, err);
                        if (r < 0)
                                break;
                }
                part = &p->fit->res;
                if (p->fit->flags != flags) {
                        r = pod_res(p->spec, flags, &tmp, err);
                        if (r < 0)
                                break;
                        part = &tmp;
                }
                if (res_merge(used, part) < 0)
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                res_done(&tmp);
                (*k)++;
        }
        return r;
}

static int node_fit_used(ncm_node *n, const char *uid, unsigned flags, bool walk, fit_res *used,
                         size_t *k, ncm_error *err)
{
        if (walk || n->sums.n_unsummed > 0 || (n->sums.fit && n->sums.fit->flags != flags))
                return used_of_walk(n, uid, flags, used, k, err);
        if (used_of_sums(n, uid, used, k) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        return 0;
}

static int64_t scalar_in(fit_res *r, const char *name)
{
        int64_t *v = scalar_of(r, name, false);
        return v ? *v : 0;
}

bool ncm__node_fit_sums_agree(ncm_node *n, const char *uid)
{
        unsigned flags = fit_flags(n);
        fit_res a = {0}, b = {0};
        size_t ka = 0, kb = 0;
        bool same = node_fit_used(n, uid, flags, false, &a, &ka, NULL) >= 0 &&
                    node_fit_used(n, uid, flags, true, &b, &kb, NULL) >= 0 && ka == kb &&
                    a.milli_cpu == b.milli_cpu && a.memory == b.memory &&
                    a.ephemeral == b.ephemeral;

        for (size_t i = 0; same && i < a.n; i++)
                same = a.scalars[i].value == scalar_in(&b, a.scalars[i].name);
        for (size_t i = 0; same && i < b.n; i++)
                same = b.scalars[i].value == scalar_in(&a, b.scalars[i].name);
        res_done(&a);
        res_done(&b);
        return same;
}

static int node_fit(ncm_node *n, const ncm_pod *pod, ncm_node_fit *ret, ncm_error *err)
{
        ncm_resource_list alloc = {0};
        fit_res want = {0}, used = {0};
        unsigned flags = fit_flags(n);
        size_t k = 0;
        int r;

        r = pod_res(pod, flags, &want, err);
        if (r >= 0)
                r = node_fit_used(n, pod->uid, flags, false, &used, &k, err);
        if (r >= 0)
                r = node_allocatable(n, &alloc, err);
        if (r >= 0)
                decide(&want, &used, k, &alloc, ret);
        ncm_resource_list_done(&alloc);
        res_done(&want);
        res_done(&used);
        return r;
}

static void add_counters(ncm_node_counters *to, const ncm_node_counters *from)
{
        to->pinning_requests += from->pinning_requests;
        to->pinning_errors += from->pinning_errors;
        to->tm_admissions += from->tm_admissions;
        to->tm_admission_errors += from->tm_admission_errors;
        for (int s = 0; s < NCM_NODE_N_SCOPES; s++)
                for (int b = 0; b < NCM_NODE_N_ALIGN; b++) {
                        to->aligned[s][b] += from->aligned[s][b];
                        to->aligned_failures[s][b] += from->aligned_failures[s][b];
                }
}

int ncm__node_fit_admit(ncm_node *n, const ncm_pod *pod, unsigned flags, ncm_node_admission **ret,
                        ncm_error *err)
{
        ncm_autoptr(ncm_node) copy = NULL;
        ncm_autoptr(ncm_node_admission) a = NULL;
        ncm_node_fit fit;
        int r;

        r = node_fit(n, pod, &fit, err);
        if (r < 0 || fit.fit)
                return r;
        /*
         * The kubelet's resource managers admit first (their handler is registered before the
         * predicates'): when they refuse too, theirs is the reason it reports. They are asked
         * on a copy, so that this refusal changes nothing of N -- no state, no file -- while
         * what they count is counted, as the kubelet counts an admission the predicates then
         * refuse.
         */
        r = ncm_node_copy(n, &copy, err);
        if (r >= 0)
                r = ncm_node_admit(copy, pod, flags | NCM__NODE_NO_FIT, &a, err);
        if (r < 0)
                return r;
        add_counters(&n->counters, ncm_node_get_counters(copy));
        if (a->admitted) {
                /* the refusal keeps what the managers' admission explained, not its result */
                ncm_node_admission *no = calloc(1, sizeof(*no));
                if (!no)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                no->events = a->events;
                no->n_events = a->n_events;
                a->events = NULL;
                a->n_events = 0;
                snprintf(no->reason, sizeof(no->reason), "%.63s", fit.reason);
                snprintf(no->message, sizeof(no->message), "%s", fit.message);
                ncm_node_admission_free(a);
                a = no;
        }
        *ret = NCM_TAKE_PTR(a);
        return 1;
}

int ncm__node_fit_of(ncm_node *n, const ncm_pod *pod, ncm_node_fit *ret, ncm_error *err)
{
        return node_fit(n, pod, ret, err);
}
