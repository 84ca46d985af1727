/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy front end: kubelet's NewManager choice of policy, the calls the node makes
 * (dispatched through the ops table), guaranteedCPUs / podGuaranteedCPUs, and the none policy.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cpumanager-policy.h"

/* ------------------------------------------------------------------------------------------
 * Dispatch
 */

ncm_cpu_policy *ncm_cpu_policy_free(ncm_cpu_policy *p)
{
        if (!p)
                return NULL;
        if (p->ops->destroy)
                p->ops->destroy(p);
        ncm_cpuset_free(p->reserved);
        ncm_cpuset_free(p->isolated);
        ncm_cpu_index_free(p->ix);
        free(p);
        return NULL;
}

const char *ncm_cpu_policy_name(const ncm_cpu_policy *p)
{
        return p->ops->name;
}

const ncm_cpu_options *ncm_cpu_policy_options(const ncm_cpu_policy *p)
{
        return &p->opts;
}

const ncm_cpuset *ncm_cpu_policy_reserved(const ncm_cpu_policy *p)
{
        return p->reserved;
}

const ncm_cpu_index *ncm_cpu_policy_index(const ncm_cpu_policy *p)
{
        return p->ix;
}

void ncm_cpu_policy_set_trace(ncm_cpu_policy *p, const ncm_cpu_trace *trace)
{
        p->trace = trace && trace->fn ? *trace : (ncm_cpu_trace){NULL, NULL};
}

int ncm_cpu_policy_start(ncm_cpu_policy *p, ncm_cpu_state *s, ncm_error *err)
{
        return p->ops->start(p, s, err);
}

int ncm_cpu_policy_allocate(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod,
                            const ncm_container *c, const ncm_hint *affinity, ncm_error *err)
{
        return p->ops->allocate(p, s, pod, c, affinity, err);
}

int ncm_cpu_policy_allocate_near(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod,
                                 const ncm_container *c, const ncm_hint *affinity,
                                 const ncm_cpu_near *near, size_t n, ncm_error *err)
{
        if (n == 0 || !p->ops->allocate_near)
                return p->ops->allocate(p, s, pod, c, affinity, err);
        return p->ops->allocate_near(p, s, pod, c, affinity, near, n, err);
}

int ncm_cpu_policy_remove_container(ncm_cpu_policy *p, ncm_cpu_state *s, const char *pod_uid,
                                    const char *name, ncm_error *err)
{
        return p->ops->remove_container(p, s, pod_uid, name, err);
}

int ncm_cpu_policy_hints(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                         const ncm_container *c, ncm_hint_list *out, ncm_error *err)
{
        return p->ops->hints(p, s, pod, c, out, err);
}

int ncm_cpu_policy_pod_hints(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                             ncm_hint_list *out, ncm_error *err)
{
        return p->ops->pod_hints(p, s, pod, out, err);
}

int ncm_cpu_policy_hints_describe(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                                  const ncm_container *c, ncm_hint_desc **ret, ncm_error *err)
{
        if (!p->ops->hints_describe) {
                *ret = NULL;
                return 0;
        }
        return p->ops->hints_describe(p, s, pod, c, ret, err);
}

int ncm_cpu_policy_pod_hints_describe(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                                      ncm_hint_desc **ret, ncm_error *err)
{
        if (!p->ops->pod_hints_describe) {
                *ret = NULL;
                return 0;
        }
        return p->ops->pod_hints_describe(p, s, pod, ret, err);
}

void ncm_cpu_policy_allocatable(const ncm_cpu_policy *p, ncm_cpuset *out)
{
        p->ops->allocatable(p, out);
}

void ncm_cpu_policy_available(const ncm_cpu_policy *p, const ncm_cpu_state *s, ncm_cpuset *out)
{
        p->ops->available(p, s, out);
}

void ncm_cpu_policy_available_physical(const ncm_cpu_policy *p, const ncm_cpu_state *s,
                                       ncm_cpuset *out)
{
        p->ops->available_physical(p, s, out);
}

/* ------------------------------------------------------------------------------------------
 * cpusToReuse, saved and restored
 */

struct ncm_cpu_policy_reuse {
        char *pod_uid; /* NULL: no entry */
        ncm_cpuset *cpus;
};

const ncm_cpuset *ncm_cpu_policy_reuse_get(const ncm_cpu_policy *p, const char *pod_uid)
{
        const ncm_cpuset *set;
        const char *uid = NULL;

        if (!p->ops->reuse)
                return NULL;
        set = p->ops->reuse(p, &uid);
        return uid && strcmp(uid, pod_uid) == 0 ? set : NULL;
}

ncm_cpu_policy_reuse *ncm_cpu_policy_reuse_free(ncm_cpu_policy_reuse *r)
{
        if (!r)
                return NULL;
        free(r->pod_uid);
        ncm_cpuset_free(r->cpus);
        free(r);
        return NULL;
}

int ncm_cpu_policy_reuse_save(const ncm_cpu_policy *p, ncm_cpu_policy_reuse **ret, ncm_error *err)
{
        ncm_autoptr(ncm_cpu_policy_reuse) r = calloc(1, sizeof(*r));
        const char *uid = NULL;
        const ncm_cpuset *set = NULL;

        if (!r)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (p->ops->reuse)
                set = p->ops->reuse(p, &uid);
        if (uid) {
                r->pod_uid = strdup(uid);
                r->cpus = ncm_cpuset_dup(set);
                if (!r->pod_uid || !r->cpus)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        *ret = NCM_TAKE_PTR(r);
        return 0;
}

int ncm_cpu_policy_reuse_restore(ncm_cpu_policy *p, const ncm_cpu_policy_reuse *saved,
                                 ncm_error *err)
{
        if (!p->ops->reuse_set)
                return 0;
        return p->ops->reuse_set(p, saved->pod_uid, saved->cpus, err);
}

/* ------------------------------------------------------------------------------------------
 * guaranteedCPUs / podGuaranteedCPUs (spec §4.4, §4.8)
 */

int ncm_cpu_guaranteed_cpus(const ncm_pod *pod, const ncm_container *c)
{
        const ncm_quantity *q;
        int64_t v;

        if (pod->qos != NCM_QOS_GUARANTEED)
                return 0;
        q = ncm_container_request(c, NCM_RESOURCE_CPU);
        if (!q || !ncm_quantity_is_integer(q))
                return 0;
        v = ncm_quantity_value(q);
        /* kubelet's int is 64-bit; more CPUs than an int holds cannot be met either way */
        return v > INT_MAX ? INT_MAX : (int)v;
}

static int add_sat(int a, int b)
{
        long s = (long)a + b;
        return s > INT_MAX ? INT_MAX : (int)s;
}

int ncm_cpu_pod_guaranteed_cpus(const ncm_pod *pod)
{
        int init = 0, sidecars = 0, app = 0, long_running;

        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const ncm_container *c = &pod->init_containers[i];
                int r;
                if (!ncm_container_request(c, NCM_RESOURCE_CPU))
                        continue;
                r = ncm_cpu_guaranteed_cpus(pod, c);
                /* a sidecar runs on beside every later init container and the app */
                if (c->sidecar)
                        sidecars = add_sat(sidecars, r);
                else if (add_sat(sidecars, r) > init)
                        init = add_sat(sidecars, r);
        }
        for (size_t i = 0; i < pod->n_containers; i++) {
                const ncm_container *c = &pod->containers[i];
                if (ncm_container_request(c, NCM_RESOURCE_CPU))
                        app = add_sat(app, ncm_cpu_guaranteed_cpus(pod, c));
        }
        long_running = add_sat(app, sidecars);
        return init > long_running ? init : long_running;
}

/* ------------------------------------------------------------------------------------------
 * The none policy (spec §4.11): no exclusive CPUs, no hints, nothing allocatable.
 */

static int none_start(ncm_cpu_policy *p, ncm_cpu_state *s, ncm_error *err)
{
        return 0;
}

static int none_allocate(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod,
                         const ncm_container *c, const ncm_hint *affinity, ncm_error *err)
{
        return 0;
}

static int none_remove(ncm_cpu_policy *p, ncm_cpu_state *s, const char *pod_uid, const char *name,
                       ncm_error *err)
{
        return 0;
}

static int none_hints(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                      const ncm_container *c, ncm_hint_list *out, ncm_error *err)
{
        out->nil = true;
        return 0;
}

static int none_pod_hints(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                          ncm_hint_list *out, ncm_error *err)
{
        out->nil = true;
        return 0;
}

static void none_empty(const ncm_cpu_policy *p, ncm_cpuset *out)
{
        ncm_cpuset_zero(out);
}

static void none_empty_s(const ncm_cpu_policy *p, const ncm_cpu_state *s, ncm_cpuset *out)
{
        ncm_cpuset_zero(out);
}

static const ncm_cpu_policy_ops none_ops = {
                .name = "none",
                .start = none_start,
                .allocate = none_allocate,
                .remove_container = none_remove,
                .hints = none_hints,
                .pod_hints = none_pod_hints,
                .allocatable = none_empty,
                .available = none_empty_s,
                .available_physical = none_empty_s,
};

static int cmp_opt(const void *x, const void *y)
{
        const ncm_cpu_option *a = x, *b = y;
        return strcmp(a->key, b->key);
}

int ncm_cpu_none_policy_new(const ncm_cpu_option *options, size_t noptions, ncm_cpu_policy **ret,
                            ncm_error *err)
{
        ncm_cpu_policy *p;

        if (noptions > 0) {
                /* Go prints a map[string]string with %v as map[k:v k:v], keys sorted */
                ncm_autofree ncm_cpu_option *sorted = malloc(noptions * sizeof(*sorted));
                ncm_buf b = NCM_BUF_INIT;
                int r;

                if (!sorted)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                memcpy(sorted, options, noptions * sizeof(*sorted));
                qsort(sorted, noptions, sizeof(*sorted), cmp_opt);
                ncm_buf_puts(&b, "map[");
                for (size_t i = 0; i < noptions; i++)
                        ncm_buf_printf(&b, "%s%s:%s", i ? " " : "", sorted[i].key, sorted[i].value);
                ncm_buf_putc(&b, ']');
                r = ncm_error_set(err, EINVAL, "None policy: received unsupported options=%s",
                                  ncm_buf_failed(&b) ? "map[...]" : b.data);
                ncm_buf_done(&b);
                return r;
        }
        p = calloc(1, sizeof(*p));
        if (!p || !(p->reserved = ncm_cpuset_new())) {
                free(p);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        p->ops = &none_ops;
        *ret = p;
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * NewManager's choice (spec §5.1)
 */

int ncm_cpu_policy_new(const ncm_topo *t, const ncm_cpu_policy_config *cfg, ncm_cpu_policy **ret,
                       ncm_error *err)
{
        const char *name = cfg->policy ? cfg->policy : "none";
        int64_t milli = cfg->reserved_millicpu;
        bool have = cfg->reserved_millicpu_set;
        int r;

        if (strcmp(name, "none") == 0) {
                r = ncm_cpu_none_policy_new(cfg->options, cfg->noptions, ret, err);
                if (r < 0)
                        ncm_error_prefix(err, "new none policy error");
                return r;
        }
        if (strcmp(name, "static") != 0)
                return ncm_error_set(err, EINVAL, "unknown policy: \"%s\"", name);

        /* --reserved-cpus overrides kube-reserved and system-reserved cpu */
        if (cfg->reserved_cpus && !ncm_cpuset_is_empty(cfg->reserved_cpus)) {
                milli = (int64_t)ncm_cpuset_weight(cfg->reserved_cpus) * 1000;
                have = true;
        }
        if (!have)
                return ncm_error_set(err, EINVAL,
                                     "[cpumanager] unable to determine reserved CPU resources "
                                     "for static policy");
        if (milli == 0)
                return ncm_error_set(err, EINVAL,
                                     "[cpumanager] the static policy requires systemreserved.cpu "
                                     "+ kubereserved.cpu to be greater than zero");
        /* int(math.Ceil(float64(milli) / 1000)) */
        int64_t num = milli > 0 ? (milli + 999) / 1000 : -((-milli) / 1000);
        if (num > INT_MAX)
                num = INT_MAX;
        r = ncm_cpu_static_policy_new(t, (int)num, cfg->reserved_cpus, cfg, ret, err);
        if (r < 0)
                ncm_error_prefix(err, "new static policy error");
        return r;
}
