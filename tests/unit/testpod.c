/* SPDX-License-Identifier: Apache-2.0 */
/* Pods as kubelet unit tests build them (testutil.h); an object of its own, so that only the
 * tests that parse pods link lib/pod. */
#include "base/json.h"
#include "pod/pod-internal.h"
#include "testutil.h"

int tu_pod_parse_as_in_go(const char *text, size_t len, const char *name, ncm_pod **ret,
                          ncm_error *err)
{
        json_object *obj = NULL;
        int r = ncm__json_or_yaml_parse(text, len, name ? name : "<input>", &obj, err);

        if (r < 0)
                return r;
        r = ncm__pod_from_json_flags(obj, "", NCM__POD_STORED, ret, err);
        json_object_put(obj);
        if (r < 0 && name)
                return ncm_error_prefix(err, "%s", name);
        return r;
}
