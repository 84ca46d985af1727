/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Configs computed from pods: ResourceConfigForPod, the container values sent through CRI
 * (kuberuntime generateLinuxContainerResources) and the QoS tiers (UpdateCgroups).
 */
#include <errno.h>
#include <string.h>

#include <nodecm/cgroups.h>

static int64_t milli_of(const ncm_resource_list *l, const char *name)
{
        const ncm_quantity *q = ncm_resource_list_get(l, name);
        return q ? ncm_quantity_milli_value(q) : 0;
}

static int64_t value_of(const ncm_resource_list *l, const char *name)
{
        const ncm_quantity *q = ncm_resource_list_get(l, name);
        return q ? ncm_quantity_value(q) : 0;
}

static bool nonzero(const ncm_resource_list *l, const char *name)
{
        const ncm_quantity *q = ncm_resource_list_get(l, name);
        return q && !ncm_quantity_is_zero(q);
}

/* HugePageLimits: hugepages-<size> entries summed by page size. */
static int hugepages_of(const ncm_resource_list *l, ncm_cgroup_hugepage *out, size_t *n,
                        ncm_error *err)
{
        ncm_cgroup_resources tmp;

        ncm_cgroup_resources_init(&tmp);
        for (size_t i = 0; i < l->n; i++) {
                uint64_t size;
                int r = ncm_resource_hugepage_size(l->items[i].name, &size, NULL);
                if (r == -ENOENT)
                        continue;
                if (r < 0 || size > INT64_MAX)
                        continue; /* invalid names were refused when the pod was read */
                r = ncm_cgroup_resources_add_hugepage(&tmp, (int64_t)size,
                                                      ncm_quantity_value(&l->items[i].quantity));
                if (r < 0)
                        return ncm_error_set(err, -r, "%s: too many hugepage sizes or too large",
                                             l->items[i].name);
        }
        memcpy(out, tmp.hugepages, tmp.n_hugepages * sizeof(*out));
        *n = tmp.n_hugepages;
        return 0;
}

int ncm_cgroup_totals_for_pod(const ncm_pod *pod, const ncm_cgroup_pod_options *o,
                              ncm_cgroup_pod_totals *ret, ncm_error *err)
{
        unsigned flags = o->pod_level_resources ? 0 : NCM_POD_SKIP_POD_LEVEL;
        ncm_resource_list reqs = {0}, limits = {0};
        ncm_cgroup_pod_totals t;
        bool side_cpu = false, side_mem = false;
        int r;

        memset(&t, 0, sizeof(t));
        r = ncm_pod_requests(pod, flags, &reqs, err);
        if (r < 0)
                return r;
        r = ncm_pod_limits(pod, flags, &limits, err);
        if (r < 0) {
                ncm_resource_list_done(&reqs);
                return r;
        }
        t.qos = pod->qos;
        t.cpu_request_milli = milli_of(&reqs, NCM_RESOURCE_CPU);
        t.memory_request = value_of(&reqs, NCM_RESOURCE_MEMORY);
        t.cpu_limit_milli = milli_of(&limits, NCM_RESOURCE_CPU);
        t.memory_limit = value_of(&limits, NCM_RESOURCE_MEMORY);
        r = hugepages_of(&reqs, t.hugepages, &t.n_hugepages, err);
        ncm_resource_list_done(&reqs);
        ncm_resource_list_done(&limits);
        if (r < 0)
                return r;

        /* PodLimits' ContainerFn: app containers by their own limits... */
        t.cpu_limits_declared = t.memory_limits_declared = true;
        for (size_t i = 0; i < pod->n_containers; i++) {
                const ncm_resource_list *l = &pod->containers[i].resources.limits;
                if (!nonzero(l, NCM_RESOURCE_CPU))
                        t.cpu_limits_declared = false;
                if (!nonzero(l, NCM_RESOURCE_MEMORY))
                        t.memory_limits_declared = false;
        }
        /* ...init containers by their limits plus the sidecars' started before them. */
        for (size_t i = 0; i < pod->n_init_containers; i++) {
                const ncm_container *c = &pod->init_containers[i];
                bool cpu = nonzero(&c->resources.limits, NCM_RESOURCE_CPU);
                bool mem = nonzero(&c->resources.limits, NCM_RESOURCE_MEMORY);
                if (c->sidecar) {
                        side_cpu = side_cpu || cpu;
                        side_mem = side_mem || mem;
                        cpu = side_cpu;
                        mem = side_mem;
                } else {
                        cpu = cpu || side_cpu;
                        mem = mem || side_mem;
                }
                if (!cpu)
                        t.cpu_limits_declared = false;
                if (!mem)
                        t.memory_limits_declared = false;
        }
        if (o->pod_level_resources && ncm_pod_level_resources_set(pod)) {
                if (nonzero(&pod->resources.limits, NCM_RESOURCE_CPU))
                        t.cpu_limits_declared = true;
                if (nonzero(&pod->resources.limits, NCM_RESOURCE_MEMORY))
                        t.memory_limits_declared = true;
        }
        *ret = t;
        return 0;
}

bool ncm_cgroup_container_has_exclusive_cpus(const ncm_pod *pod, const ncm_container *c,
                                             const ncm_cgroup_pod_options *o)
{
        const ncm_quantity *q = ncm_container_request(c, NCM_RESOURCE_CPU);

        return o->static_cpu_manager && pod->qos == NCM_QOS_GUARANTEED && q &&
               ncm_quantity_sign(q) > 0 && ncm_quantity_is_integer(q);
}

/* podHasExclusiveCPUs: any container, init containers included, holds exclusive CPUs. */
static bool pod_has_exclusive_cpus(const ncm_pod *pod, const ncm_cgroup_pod_options *o)
{
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (ncm_cgroup_container_has_exclusive_cpus(pod, &pod->init_containers[i], o))
                        return true;
        for (size_t i = 0; i < pod->n_containers; i++)
                if (ncm_cgroup_container_has_exclusive_cpus(pod, &pod->containers[i], o))
                        return true;
        return false;
}

int ncm_cgroup_config_for_pod(const ncm_pod *pod, const ncm_cgroup_pod_options *o,
                              ncm_cgroup_resources *ret, ncm_error *err)
{
        ncm_cgroup_pod_options eff = *o;
        ncm_cgroup_pod_totals t;
        int r = ncm_cgroup_totals_for_pod(pod, o, &t, err);

        if (r < 0)
                return r;
        if (o->disable_cpu_quota_with_exclusive_cpus && pod_has_exclusive_cpus(pod, o))
                eff.enforce_cpu_limits = false;
        return ncm_cgroup_config_from_totals(&t, &eff, ret, err);
}

int ncm_cgroup_config_for_container(const ncm_pod *pod, const ncm_container *c,
                                    const ncm_cgroup_pod_options *o, const ncm_cpuset *cpus,
                                    const ncm_cpuset *mems, ncm_cgroup_resources *ret,
                                    ncm_error *err)
{
        const ncm_quantity *req = ncm_container_request(c, NCM_RESOURCE_CPU);
        const ncm_quantity *lim = ncm_container_limit(c, NCM_RESOURCE_CPU);
        ncm_cgroup_resources r;
        int64_t limit_milli = lim ? ncm_quantity_milli_value(lim) : 0;
        int rc;

        ncm_cgroup_resources_init(&r);
        /* A limit without a request stands for the request (kuberuntime repeats the API
         * server's defaulting for old objects). */
        r.has_cpu_shares = true;
        if (!req && limit_milli != 0)
                r.cpu_shares = ncm_cgroup_millicpu_to_shares(limit_milli);
        else
                r.cpu_shares = ncm_cgroup_millicpu_to_shares(req ? ncm_quantity_milli_value(req)
                                                                 : 0);
        if (o->enforce_cpu_limits) {
                int64_t period = o->custom_cpu_period ? (int64_t)o->cpu_period
                                                      : NCM_CGROUP_QUOTA_PERIOD;
                r.has_cpu_quota = r.has_cpu_period = true;
                r.cpu_quota = o->disable_cpu_quota_with_exclusive_cpus &&
                                                              ncm_cgroup_container_has_exclusive_cpus(
                                                                              pod, c, o)
                                              ? -1
                                              : ncm_cgroup_millicpu_to_quota(limit_milli, period,
                                                                             true);
                r.cpu_period = (uint64_t)period;
        }
        r.has_memory = true;
        r.memory = value_of(&c->resources.limits, NCM_RESOURCE_MEMORY);
        r.oci_weight = true;
        /* TieredReservation protects each container's request, by the pod's QoS class. */
        if (o->memory_qos == NCM_CGROUP_MEMORY_QOS_TIERED) {
                int64_t mreq = value_of(&c->resources.requests, NCM_RESOURCE_MEMORY);
                if (mreq > 0 && pod->qos == NCM_QOS_GUARANTEED) {
                        r.has_memory_min = true;
                        r.memory_min = mreq;
                } else if (mreq > 0 && pod->qos == NCM_QOS_BURSTABLE) {
                        r.has_memory_low = true;
                        r.memory_low = mreq;
                }
        }
        /* GetHugepageLimitsFromResources: every page size at 0 unless the limits say so. */
        r.has_hugepages = true;
        {
                ncm_cgroup_hugepage hp[NCM_CGROUP_MAX_HUGEPAGE_SIZES];
                size_t n = 0;
                rc = hugepages_of(&c->resources.limits, hp, &n, err);
                if (rc < 0)
                        return rc;
                for (size_t i = 0; i < n; i++)
                        (void)ncm_cgroup_resources_add_hugepage(&r, hp[i].page_size, hp[i].limit);
        }
        rc = ncm_cgroup_resources_set_cpuset(&r, cpus, mems);
        if (rc < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = r;
        return 0;
}

/* A + B, saturated: the tiers' sums are limits, and no pod may make another's fail. */
static int64_t add_sat(int64_t a, int64_t b)
{
        int64_t s;
        if (__builtin_add_overflow(a, b, &s))
                return b > 0 ? INT64_MAX : INT64_MIN;
        return s;
}

int ncm_cgroup_qos_usage_add_pod(ncm_cgroup_qos_usage *u, const ncm_pod *pod, ncm_error *err)
{
        ncm_resource_list reqs = {0};
        int64_t cpu, mem;
        int r = ncm_pod_requests(pod, 0, &reqs, err);

        if (r < 0)
                return r;
        cpu = milli_of(&reqs, NCM_RESOURCE_CPU);
        mem = value_of(&reqs, NCM_RESOURCE_MEMORY);
        ncm_resource_list_done(&reqs);
        /*
         * The kubelet's sums wrap around (Go's int64); nodecm's stop at the largest value, which
         * the kernel takes as "no limit" (shares and memory are clamped when written).
         */
        if (pod->qos == NCM_QOS_BURSTABLE) {
                u->burstable_cpu_milli = add_sat(u->burstable_cpu_milli, cpu);
                u->burstable_memory = add_sat(u->burstable_memory, mem);
        } else if (pod->qos == NCM_QOS_GUARANTEED) {
                u->guaranteed_memory = add_sat(u->guaranteed_memory, mem);
        }
        return 0;
}

void ncm_cgroup_qos_configs_done(ncm_cgroup_qos_configs *c)
{
        ncm_cgroup_resources_done(&c->guaranteed);
        ncm_cgroup_resources_done(&c->burstable);
        ncm_cgroup_resources_done(&c->besteffort);
}

static void unbounded_hugepages(const ncm_cgroup_layout *l, ncm_cgroup_resources *r)
{
        r->has_hugepages = true;
        for (size_t i = 0; i < l->n_hugepage_sizes; i++)
                (void)ncm_cgroup_resources_add_hugepage(r, l->hugepage_sizes[i],
                                                        NCM_CGROUP_HUGEPAGE_UNBOUNDED);
}

int ncm_cgroup_qos_tier_configs(const ncm_cgroup_qos_usage *u, const ncm_cgroup_layout *l,
                                const ncm_cgroup_pod_options *o, ncm_cgroup_qos_configs *ret,
                                ncm_error *err)
{
        ncm_cgroup_qos_configs c;

        (void)err;
        ncm_cgroup_resources_init(&c.guaranteed);
        ncm_cgroup_resources_init(&c.burstable);
        ncm_cgroup_resources_init(&c.besteffort);

        c.besteffort.has_cpu_shares = true;
        c.besteffort.cpu_shares = NCM_CGROUP_MIN_SHARES;
        c.burstable.has_cpu_shares = true;
        c.burstable.cpu_shares = ncm_cgroup_millicpu_to_shares(u->burstable_cpu_milli);

        unbounded_hugepages(l, &c.guaranteed);
        unbounded_hugepages(l, &c.burstable);
        unbounded_hugepages(l, &c.besteffort);

        if (ncm_cgroup_layout_version(l) == 2) {
                if (o->memory_qos == NCM_CGROUP_MEMORY_QOS_TIERED) {
                        /* A parent's protection must cover its children's. */
                        c.guaranteed.has_memory_min = true;
                        if (__builtin_add_overflow(u->guaranteed_memory, u->burstable_memory,
                                                   &c.guaranteed.memory_min))
                                c.guaranteed.memory_min = INT64_MAX;
                        c.burstable.has_memory_low = true;
                        c.burstable.memory_low = u->burstable_memory;
                } else {
                        /* Roll back what an earlier MemoryQoS kubelet left behind. */
                        c.burstable.has_memory_low = true;
                        c.burstable.memory_low = 0;
                }
        }
        *ret = c;
        return 0;
}
