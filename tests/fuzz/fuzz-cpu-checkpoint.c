/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_manager_state reading: probe, decode in every format, verify, render, restore, and the
 * writer's round trip. Properties checked on every input that restores:
 *  - the written file decodes as V2 with a verified legacy checksum;
 *  - it restores to an equal state;
 *  - writing that state again gives the same bytes (the writer is a fixed point);
 *  - the kubelet's start-up validation neither crashes nor changes a state it rejects.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpustate.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const ncm_cpu_state *s)
{
        ncm_buf a = NCM_BUF_INIT, b = NCM_BUF_INIT;
        ncm_cpu_checkpoint *c = NULL;
        ncm_cpu_state *s2 = NULL;

        ncm_cpu_checkpoint_format_state(s, &a);
        if (ncm_buf_failed(&a))
                goto out;
        if (ncm_cpu_checkpoint_parse(a.data, a.len, "out", &c, NULL) != 0)
                abort();
        if (c->format != NCM_CPU_CHECKPOINT_V2 || c->match != NCM_CPU_CHECKSUM_LEGACY)
                abort();
        if (ncm_cpu_checkpoint_restore(c, ncm_cpu_state_policy(s), NULL, 0, &s2, NULL) != 0)
                abort();
        if (!ncm_cpu_state_equal(s, s2))
                abort();
        ncm_cpu_checkpoint_format_state(s2, &b);
        if (!ncm_buf_failed(&b) && (a.len != b.len || memcmp(a.data, b.data, a.len) != 0))
                abort();
out:
        ncm_buf_done(&a);
        ncm_buf_done(&b);
        ncm_cpu_checkpoint_free(c);
        ncm_cpu_state_free(s2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *text = (const char *)data;
        ncm_cpu_checkpoint *c = NULL;
        ncm_cpu_state *s = NULL;
        ncm_buf r = NCM_BUF_INIT;

        (void)ncm_cpu_checkpoint_probe(text, size, "fuzz", NULL);
        if (ncm_cpu_checkpoint_parse(text, size, "fuzz", &c, NULL) != 0)
                return 0;
        (void)ncm_cpu_checkpoint_verify(c, NULL);
        ncm_cpu_checkpoint_render(c, false, &r);
        ncm_cpu_checkpoint_render(c, true, &r);
        ncm_buf_done(&r);

        /* V1 entries migrate onto a fixed container map: every ID to one pod. */
        ncm_container_ref refs[4] = {
                        {"a", "pod", "a"},
                        {"b", "pod", "b"},
                        {"containerID1", "pod", "container1"},
                        {"containerID2", "pod", "container2"},
        };
        if (ncm_cpu_checkpoint_restore(c, NULL, refs, 4, &s, NULL) == 0) {
                check_round_trip(s);
                ncm_cpuset *all = ncm_cpuset_new();
                ncm_cpuset *resv = ncm_cpuset_new();
                if (all && resv && ncm_cpuset_set_range(all, 0, 63) == 0 &&
                    ncm_cpuset_set(resv, 0) == 0) {
                        ncm_cpu_state *before = ncm_cpu_state_dup(s);
                        int v = ncm_cpu_state_validate(s, all, resv, size & 1, NULL);
                        if (before && v < 0 && !ncm_cpu_state_equal(before, s))
                                abort();
                        ncm_cpu_state_free(before);
                        /* A state that fits is one the kubelet accepts. */
                        ncm_cpu_state *f = ncm_cpu_state_dup(s);
                        if (f && ncm_cpu_state_fit(f, all, resv, size & 2, NULL) >= 0 &&
                            ncm_cpu_state_validate(f, all, resv, size & 2, NULL) != 0)
                                abort();
                        ncm_cpu_state_free(f);
                }
                ncm_cpuset_free(all);
                ncm_cpuset_free(resv);
        }
        ncm_cpu_state_free(s);
        ncm_cpu_checkpoint_free(c);
        return 0;
}
