/* SPDX-License-Identifier: Apache-2.0 */
/*
 * QoS classes as the kubelet's ComputePodQOS (pkg/apis/core/v1/helper/qos) decides them. Only
 * cpu and memory count; hugepages and extended resources never change the class.
 */
#include <string.h>

#include "pod/pod-internal.h"

const char *ncm_qos_class_name(ncm_qos_class qos)
{
        switch (qos) {
        case NCM_QOS_GUARANTEED:
                return "Guaranteed";
        case NCM_QOS_BURSTABLE:
                return "Burstable";
        case NCM_QOS_BEST_EFFORT:
                break;
        }
        return "BestEffort";
}

ncm_qos_class ncm__resources_qos(const ncm_resources *r)
{
        static const char *const supported[] = {NCM_RESOURCE_CPU, NCM_RESOURCE_MEMORY};
        const ncm_quantity zero = NCM_QUANTITY_ZERO;
        bool have = false, best_effort_seen = false;

        /* Any entry at all, even of an unsupported resource, leaves BestEffort to the loop. */
        if (r->requests.n == 0 && r->limits.n == 0)
                return NCM_QOS_BEST_EFFORT;
        for (size_t i = 0; i < NCM_ELEMENTSOF(supported); i++) {
                const ncm_quantity *req = ncm_resource_list_get(&r->requests, supported[i]);
                const ncm_quantity *lim = ncm_resource_list_get(&r->limits, supported[i]);
                bool best_effort;

                /* A missing value counts as zero. */
                if (!req)
                        req = &zero;
                if (!lim)
                        lim = &zero;
                if (!ncm_quantity_equal(req, lim))
                        return NCM_QOS_BURSTABLE;
                best_effort = ncm_quantity_is_zero(req);
                if (!have) {
                        have = true;
                        best_effort_seen = best_effort;
                } else if (best_effort != best_effort_seen) {
                        return NCM_QOS_BURSTABLE;
                }
        }
        return best_effort_seen ? NCM_QOS_BEST_EFFORT : NCM_QOS_GUARANTEED;
}

ncm_qos_class ncm_pod_compute_qos(const ncm_pod *pod)
{
        const ncm_container *lists[2] = {pod->init_containers, pod->containers};
        size_t counts[2] = {pod->n_init_containers, pod->n_containers};
        ncm_qos_class pod_qos = NCM_QOS_BEST_EFFORT;
        bool have = false;

        /* With pod-level resources (even an empty block) they alone decide. */
        if (pod->has_pod_resources)
                return ncm__resources_qos(&pod->resources);
        for (int l = 0; l < 2; l++) {
                for (size_t i = 0; i < counts[l]; i++) {
                        ncm_qos_class q = ncm__resources_qos(&lists[l][i].resources);
                        if (q == NCM_QOS_BURSTABLE)
                                return q;
                        if (!have) {
                                have = true;
                                pod_qos = q;
                        } else if (q != pod_qos) {
                                /* Guaranteed and BestEffort containers together. */
                                return NCM_QOS_BURSTABLE;
                        }
                }
        }
        return pod_qos;
}
