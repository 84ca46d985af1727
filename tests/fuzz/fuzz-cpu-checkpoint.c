/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_manager_state reading: probe, decode in every format (V4's data included) as each kubelet
 * release reads it, verify, render, restore, and the writer's round trip. Properties checked on
 * every input that restores:
 *  - written in each release's layout (V2 for 1.36, V4 for 1.37), the file decodes as that
 *    layout with a verified checksum (a V4's V2 part verifying too) and that release reads it as
 *    written;
 *  - it restores to an equal state;
 *  - writing that state again gives the same bytes (the writer is a fixed point);
 *  - the kubelet's start-up validation neither crashes nor changes a state it rejects.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpustate.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const ncm_cpu_state *s, ncm_kubelet_version v)
{
        ncm_buf a = NCM_BUF_INIT, b = NCM_BUF_INIT;
        ncm_cpu_checkpoint *c = NULL;
        ncm_cpu_state *w = ncm_cpu_state_dup(s), *s2 = NULL;
        ncm_cpu_checkpoint_format f = ncm_cpu_checkpoint_format_of(v);

        if (!w)
                return;
        ncm_cpu_state_set_kubelet_version(w, v);
        ncm_cpu_checkpoint_format_state(w, &a);
        if (ncm_buf_failed(&a))
                goto out;
        if (ncm_cpu_checkpoint_parse_version(a.data, a.len, "out", v, &c, NULL) != 0)
                abort();
        if (c->format != f || c->read_as != f)
                abort();
        if (f == NCM_CPU_CHECKPOINT_V2 && c->match != NCM_CPU_CHECKSUM_LEGACY)
                abort();
        if (f == NCM_CPU_CHECKPOINT_V4 &&
            (c->match != NCM_CPU_CHECKSUM_DATA || c->v2_part->match != NCM_CPU_CHECKSUM_LEGACY))
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
        ncm_cpu_state_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const ncm_kubelet_version releases[] = {{1, 35}, {1, 36}, {1, 37}};
        const char *text = (const char *)data;
        ncm_buf r = NCM_BUF_INIT;

        (void)ncm_cpu_checkpoint_probe(text, size, "fuzz", NULL);
        for (size_t k = 0; k < sizeof(releases) / sizeof(releases[0]); k++) {
                ncm_cpu_checkpoint *c = NULL;
                ncm_cpu_state *s = NULL;

                if (ncm_cpu_checkpoint_parse_version(text, size, "fuzz", releases[k], &c, NULL) !=
                    0)
                        return 0;
                /* a release loads the file or says why not */
                if (!c->read_as != !!c->kubelet_error)
                        abort();
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
                        check_round_trip(s, (ncm_kubelet_version){1, 36});
                        check_round_trip(s, (ncm_kubelet_version){1, 37});
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
                } else if (c->format == NCM_CPU_CHECKPOINT_V4) {
                        /* what --fix-checksum takes must restore unless a cpuset is bad */
                        (void)ncm_cpu_checkpoint_accept(c, NULL);
                }
                ncm_cpu_state_free(s);
                ncm_cpu_checkpoint_free(c);
        }
        return 0;
}
