/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the configuration means for cgroups: the cgroup manager (naming driver, cgroup root,
 * the pod settings), node allocatable and the kubepods limits that enforce it.
 */
#include <errno.h>
#include <string.h>

#include "node-internal.h"

int ncm_node_config_cgroup_manager(const ncm_node_config *c, const ncm_cgroup_layout *l,
                                   int rootfd, ncm_cgroup_manager *ret, ncm_error *err)
{
        ncm_cgroup_pod_options o;

        ncm_node_config_pod_options(c, &o);
        return ncm_cgroup_manager_init(ret, l, ncm_cgroup_naming_by_name(c->cgroup_driver),
                                       c->cgroup_root, &o, rootfd, err);
}

int ncm_node_config_allocatable(const ncm_node_config *c, const ncm_resource_list *capacity,
                                ncm_node_allocatable *ret, ncm_error *err)
{
        return ncm_cgroup_node_allocatable(capacity, ncm_node_config_kube_reserved(c),
                                           ncm_node_config_system_reserved(c), &c->eviction_hard,
                                           c->enforce, ret, err);
}

int ncm_node_config_kubepods(const ncm_node_config *c, const ncm_node_allocatable *na,
                             const ncm_cgroup_layout *l, const ncm_cpuset *all_cpus,
                             ncm_cgroup_resources *ret, ncm_error *err)
{
        bool none = strcmp(c->cpu_policy, "none") == 0;
        int r = ncm_cgroup_config_for_resource_list(&na->pods_limits, false,
                                                    none ? all_cpus : NULL, ret, err);

        if (r >= 0 && ncm_cgroup_layout_version(l) == 2 &&
            c->memory_qos == NCM_CGROUP_MEMORY_QOS_NONE) {
                /* Stale MemoryQoS protection is reset when MemoryQoS is off. */
                ret->has_memory_min = ret->has_memory_low = true;
                ret->memory_min = ret->memory_low = 0;
        }
        return r;
}

unsigned ncm_node_config_extra_controllers(const ncm_node_config *c)
{
        unsigned extra = 0;
        const ncm_resource_list *kube = ncm_node_config_kube_reserved(c);
        const ncm_resource_list *sys = ncm_node_config_system_reserved(c);
        bool reserved_enforced = c->enforce & (NCM_ENFORCE_KUBE_RESERVED |
                                               NCM_ENFORCE_SYSTEM_RESERVED);

        if (c->pod_pids_limit > 0)
                extra |= NCM_CGROUP_CTRL_PIDS;
        for (int k = 0; k < 2 && reserved_enforced; k++) {
                const ncm_resource_list *l = k ? sys : kube;
                for (size_t i = 0; l && i < l->n; i++) {
                        if (strcmp(l->items[i].name, NCM_RESOURCE_PID) == 0)
                                extra |= NCM_CGROUP_CTRL_PIDS;
                        if (strncmp(l->items[i].name, NCM_RESOURCE_HUGEPAGES_PREFIX,
                                    strlen(NCM_RESOURCE_HUGEPAGES_PREFIX)) == 0)
                                extra |= NCM_CGROUP_CTRL_HUGETLB;
                }
        }
        return extra;
}
