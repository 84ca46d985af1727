/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pods from JSON or YAML, with and without the API server's defaulting, then everything the
 * managers compute from them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/pod.h>
#include "base/json.h"
#include "pod/pod-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(const ncm_pod *pod)
{
        ncm_resource_list l;

        if (pod->n_containers == 0 || !pod->uid[0])
                abort();
        if (ncm_pod_compute_qos(pod) != pod->qos)
                abort();
        if (ncm_pod_requests(pod, 0, &l, NULL) == 0)
                ncm_resource_list_done(&l);
        if (ncm_pod_limits(pod, 0, &l, NULL) == 0)
                ncm_resource_list_done(&l);
        if (ncm_pod_requests(pod, NCM_POD_SKIP_POD_LEVEL | NCM_POD_EXCLUDE_OVERHEAD, &l, NULL) == 0)
                ncm_resource_list_done(&l);
        (void)ncm_pod_level_resources_set(pod);
        for (size_t i = 0; i < pod->n_containers; i++) {
                const ncm_container *c = &pod->containers[i];
                if (ncm_pod_find_container(pod, c->name) != c)
                        abort();
                for (size_t j = 0; j < c->resources.limits.n; j++) {
                        uint64_t bytes;
                        (void)ncm_resource_hugepage_size(c->resources.limits.items[j].name, &bytes,
                                                         NULL);
                }
                if (ncm_container_request(c, NCM_RESOURCE_CPU))
                        (void)ncm_quantity_is_integer(ncm_container_request(c, NCM_RESOURCE_CPU));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        json_object *obj = NULL;
        ncm_pod *pod = NULL;

        if (ncm_pod_parse((const char *)data, size, "fuzz", &pod, NULL) == 0) {
                exercise(pod);
                ncm_pod_free(pod);
        }
        if (ncm__json_or_yaml_parse((const char *)data, size, "fuzz", &obj, NULL) == 0) {
                pod = NULL;
                if (ncm__pod_from_json_flags(obj, "x", NCM__POD_AS_GIVEN, &pod, NULL) == 0) {
                        exercise(pod);
                        ncm_pod_free(pod);
                }
                if (obj)
                        json_object_put(obj);
        }
        return 0;
}
