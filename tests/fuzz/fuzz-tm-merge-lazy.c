/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lazy merge against kubelet's walk: the fuzzer's bytes drive the generator of the
 * differential tests (tests/unit/tm-lazy-gen.h) - a machine of up to 12 NUMA nodes, providers
 * with described lists shaped like the CPU and device managers', explicit, nil and empty
 * lists, every policy, prefer-closest on or off - and NCM_TM_MERGE_LAZY must give the hint and
 * admission of NCM_TM_MERGE_REFERENCE (of the fast merge when the walk would be too long).
 */
#include <stdint.h>
#include <stdlib.h>

#include "../unit/tm-lazy-gen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walking more permutations than this per input would make the fuzzer crawl. */
#define MAX_PERMUTATIONS 20000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        lg_rng r = {.data = data, .n = size};
        lg_scenario s;
        ncm_tm_options o;
        ncm_tm_policy *p = NULL;
        ncm_hint want, got;
        bool want_admit, admit;
        ncm_tm_merge_mode mode;

        if (lg_scenario_random(&r, &s, 1, 12, (unsigned)lg_below(&r, 60)) < 0) {
                lg_scenario_done(&s);
                return 0;
        }
        o = (ncm_tm_options){s.closest, 64};
        if (ncm_tm_policy_new(s.policy, &o, s.m.ids, s.m.n, s.m.dist, &p, NULL) < 0)
                abort();
        mode = lg_permutations(&s) <= MAX_PERMUTATIONS ? NCM_TM_MERGE_REFERENCE : NCM_TM_MERGE_FAST;
        if (ncm_tm_policy_merge(p, s.prov, s.n_prov, mode, &want, &want_admit, NULL) < 0 ||
            ncm_tm_policy_merge(p, s.prov, s.n_prov, NCM_TM_MERGE_LAZY, &got, &admit, NULL) < 0)
                abort();
        if (got.any != want.any || got.preferred != want.preferred ||
            (!got.any && got.numa != want.numa) || admit != want_admit)
                abort();
        ncm_tm_policy_free(p);
        lg_scenario_done(&s);
        return 0;
}
