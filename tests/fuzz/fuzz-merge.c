/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The `nodecm merge` document reader, and a differential check: whenever the kubelet's cross
 * product is small enough to walk, the fast merge must give exactly the reference's hint and
 * admission.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/json.h"
#include "topologymanager/tm-request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walking more permutations than this per input would make the fuzzer crawl. */
#define MAX_PERMUTATIONS 20000

static size_t permutations(const ncm_tm_request *r)
{
        size_t total = 1;
        for (size_t i = 0; i < r->n_providers; i++) {
                for (size_t j = 0; j < r->providers[i].n; j++) {
                        size_t n = r->providers[i].res[j].list.n;
                        if (n == 0)
                                continue;
                        if (total > MAX_PERMUTATIONS / n)
                                return MAX_PERMUTATIONS + 1;
                        total *= n;
                }
        }
        return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ncm_autojson o = NULL;
        ncm_autoptr(ncm_tm_request) req = NULL;
        ncm_autoptr(ncm_tm_policy) pol = NULL;
        ncm_hint fast, ref;
        bool admit_fast, admit_ref;
        ncm_tm_gates gates = {true, true};

        if (ncm__json_or_yaml_parse((const char *)data, size, "fuzz", &o, NULL) < 0 || !o)
                return 0;
        if (ncm__tm_request_from_json(o, &req, NULL) < 0)
                return 0;
        if (ncm__tm_request_policy(req, gates, &pol, NULL) < 0)
                return 0;
        if (permutations(req) > MAX_PERMUTATIONS)
                return 0;
        if (ncm_tm_policy_merge(pol, req->providers, req->n_providers, NCM_TM_MERGE_FAST, &fast,
                                &admit_fast, NULL) < 0 ||
            ncm_tm_policy_merge(pol, req->providers, req->n_providers, NCM_TM_MERGE_REFERENCE, &ref,
                                &admit_ref, NULL) < 0)
                return 0;
        if (fast.any != ref.any || fast.preferred != ref.preferred ||
            (!fast.any && fast.numa != ref.numa) || admit_fast != admit_ref)
                abort();
        return 0;
}
