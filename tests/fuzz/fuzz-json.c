/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON and YAML readers that every document goes through. */
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
        return 0;
}
