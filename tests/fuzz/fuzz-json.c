/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The JSON and YAML readers that every document goes through, and the kubelet-file reader's
 * modes: first YAML document only with repeats reported (anchors, aliases and merge keys on
 * the way), and JSON decoded with Go's merge of repeated keys.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        json_object *o = NULL;
        if (ncm__json_parse((const char *)data, size, "fuzz", &o, NULL) == 0 && o)
                json_object_put(o);
        o = NULL;
        if (ncm__yaml_parse((const char *)data, size, "fuzz", &o, NULL) == 0 && o)
                json_object_put(o);
        o = NULL;
        {
                ncm_json_info in = {0};
                if (ncm__json_or_yaml_parse_ex((const char *)data, size, "fuzz",
                                               NCM_JSON_FIRST_DOCUMENT | NCM_JSON_GO, &o, &in,
                                               NULL) == 0 &&
                    o) {
                        /* serialising walks every shared alias subtree: bounded by the limit */
                        (void)json_object_to_json_string(o);
                        json_object_put(o);
                }
                for (size_t i = 0; i < in.n_dups; i++)
                        if (!in.dups[i].path || !in.dups[i].line)
                                abort();
                ncm__json_info_done(&in);
        }
        return 0;
}
