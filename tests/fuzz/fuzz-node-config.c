/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet configuration model: any text either fails with a message or gives a
 * configuration whose getters answer, and that compares unchanged with itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/node-config.h>
#include "base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ncm_node_config *c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_cgroup_pod_options o;

        if (ncm_node_config_parse((const char *)data, size, "fuzz", "k", &c, &err) < 0) {
                if (!err.msg[0])
                        abort();
                /* a kubelet file: strict errors become warnings, each a line */
                {
                        json_object *doc = NULL;
                        ncm_error e2 = NCM_ERROR_INIT;
                        if (ncm__json_or_yaml_parse_ex((const char *)data, size, "fuzz",
                                                       NCM_JSON_FIRST_DOCUMENT | NCM_JSON_GO, &doc,
                                                       NULL, NULL) == 0 &&
                            ncm_node_config_from_json_ex(doc, "k", NCM_NODE_CONFIG_LENIENT, &c,
                                                         &e2) == 0) {
                                for (size_t i = 0; i < ncm_node_config_n_warnings(c); i++)
                                        if (!ncm_node_config_warning(c, i)[0])
                                                abort();
                                c = ncm_node_config_free(c);
                        }
                        if (doc)
                                json_object_put(doc);
                }
                return 0;
        }
        ncm_node_config_pod_options(c, &o);
        if (!ncm_node_config_cgroup_root(c) || !ncm_node_config_cgroup_driver(c) ||
            ncm_node_config_compare(c, c, NULL) != NCM_NODE_CONFIG_UNCHANGED)
                abort();
        ncm_node_config_free(c);
        return 0;
}
