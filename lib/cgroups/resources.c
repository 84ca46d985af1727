/* SPDX-License-Identifier: Apache-2.0 */
/* ResourceConfig and ResourceConfigForPod on plain totals (helpers_linux.go). */
#include <errno.h>
#include <string.h>

#include <nodecm/cgroups.h>

void ncm_cgroup_resources_init(ncm_cgroup_resources *r)
{
        memset(r, 0, sizeof(*r));
}

void ncm_cgroup_resources_done(ncm_cgroup_resources *r)
{
        ncm_cpuset_free(r->cpuset_cpus);
        ncm_cpuset_free(r->cpuset_mems);
        ncm_cgroup_resources_init(r);
}

int ncm_cgroup_resources_set_cpuset(ncm_cgroup_resources *r, const ncm_cpuset *cpus,
                                    const ncm_cpuset *mems)
{
        ncm_autoptr(ncm_cpuset) c = NULL;
        ncm_autoptr(ncm_cpuset) m = NULL;

        if (cpus && !(c = ncm_cpuset_dup(cpus)))
                return -ENOMEM;
        if (mems && !(m = ncm_cpuset_dup(mems)))
                return -ENOMEM;
        ncm_cpuset_free(r->cpuset_cpus);
        ncm_cpuset_free(r->cpuset_mems);
        r->cpuset_cpus = NCM_TAKE_PTR(c);
        r->cpuset_mems = NCM_TAKE_PTR(m);
        return 0;
}

int ncm_cgroup_resources_copy(ncm_cgroup_resources *dst, const ncm_cgroup_resources *src)
{
        *dst = *src;
        dst->cpuset_cpus = NULL;
        dst->cpuset_mems = NULL;
        if (ncm_cgroup_resources_set_cpuset(dst, src->cpuset_cpus, src->cpuset_mems) < 0) {
                ncm_cgroup_resources_init(dst);
                return -ENOMEM;
        }
        return 0;
}

int ncm_cgroup_resources_add_hugepage(ncm_cgroup_resources *r, int64_t page_size, int64_t limit)
{
        size_t i;

        r->has_hugepages = true;
        for (i = 0; i < r->n_hugepages; i++) {
                if (r->hugepages[i].page_size == page_size) {
                        /* saturated, as the kubelet's other sums: the largest limit is none */
                        if (__builtin_add_overflow(r->hugepages[i].limit, limit,
                                                   &r->hugepages[i].limit))
                                r->hugepages[i].limit = INT64_MAX;
                        return 0;
                }
                if (r->hugepages[i].page_size > page_size)
                        break;
        }
        if (r->n_hugepages == NCM_CGROUP_MAX_HUGEPAGE_SIZES)
                return -ENOSPC;
        memmove(&r->hugepages[i + 1], &r->hugepages[i],
                (r->n_hugepages - i) * sizeof(r->hugepages[0]));
        r->hugepages[i].page_size = page_size;
        r->hugepages[i].limit = limit;
        r->n_hugepages++;
        return 0;
}

void ncm_cgroup_pod_options_init(ncm_cgroup_pod_options *o)
{
        memset(o, 0, sizeof(*o));
        o->enforce_cpu_limits = true;
        o->cpu_period = NCM_CGROUP_QUOTA_PERIOD;
        o->custom_cpu_period = false;
        o->pod_level_resources = true;
        o->memory_qos = NCM_CGROUP_MEMORY_QOS_NONE;
        o->pod_pids_limit = -1;
        o->static_cpu_manager = false;
        o->disable_cpu_quota_with_exclusive_cpus = true;
}

int ncm_cgroup_config_from_totals(const ncm_cgroup_pod_totals *t, const ncm_cgroup_pod_options *o,
                                  ncm_cgroup_resources *ret, ncm_error *err)
{
        ncm_cgroup_resources r;
        uint64_t shares = ncm_cgroup_millicpu_to_shares(t->cpu_request_milli);
        int64_t quota = ncm_cgroup_millicpu_to_quota(t->cpu_limit_milli, (int64_t)o->cpu_period,
                                                     o->custom_cpu_period);

        (void)err;
        ncm_cgroup_resources_init(&r);
        /* The quota is not capped when CFS quota is disabled. */
        if (!o->enforce_cpu_limits)
                quota = -1;

        switch (t->qos) {
        case NCM_QOS_GUARANTEED:
                r.has_cpu_shares = r.has_cpu_quota = r.has_cpu_period = r.has_memory = true;
                r.cpu_shares = shares;
                r.cpu_quota = quota;
                r.cpu_period = o->cpu_period;
                r.memory = t->memory_limit;
                break;
        case NCM_QOS_BURSTABLE:
                r.has_cpu_shares = true;
                r.cpu_shares = shares;
                if (t->cpu_limits_declared) {
                        r.has_cpu_quota = r.has_cpu_period = true;
                        r.cpu_quota = quota;
                        r.cpu_period = o->cpu_period;
                }
                if (t->memory_limits_declared) {
                        r.has_memory = true;
                        r.memory = t->memory_limit;
                }
                break;
        case NCM_QOS_BEST_EFFORT:
        default:
                r.has_cpu_shares = true;
                r.cpu_shares = NCM_CGROUP_MIN_SHARES;
                break;
        }

        /* HugePageLimits(reqs): always set, so page sizes not requested are limited to 0. */
        r.has_hugepages = true;
        for (size_t i = 0; i < t->n_hugepages; i++)
                if (ncm_cgroup_resources_add_hugepage(&r, t->hugepages[i].page_size,
                                                      t->hugepages[i].limit) < 0)
                        return ncm_error_set(err, ERANGE, "hugepage limits out of range");

        /* KEP-2570 TieredReservation: protect the requests, by QoS tier. */
        if (o->memory_qos == NCM_CGROUP_MEMORY_QOS_TIERED && t->memory_request > 0) {
                if (t->qos == NCM_QOS_GUARANTEED) {
                        r.has_memory_min = true;
                        r.memory_min = t->memory_request;
                } else if (t->qos == NCM_QOS_BURSTABLE) {
                        r.has_memory_low = true;
                        r.memory_low = t->memory_request;
                }
        }

        /* Added by the pod container manager, not ResourceConfigForPod. */
        if (o->pod_pids_limit > 0) {
                r.has_pids = true;
                r.pids = o->pod_pids_limit;
        }
        *ret = r;
        return 0;
}
