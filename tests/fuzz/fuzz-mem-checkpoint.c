/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memory_manager_state reading, every generation's reader, and the writer's round trip; and the
 * kubelet's --reserved-memory flag parser. The first byte picks: even, the checkpoint (its
 * value / 2 mod 3 picks the kubelet generation read as); odd, the flag. Properties checked on
 * every state that reads back:
 *  - each layout the writer gives reads back (with the generation that writes it) to an equal
 *    state, and writing it again gives the same bytes;
 *  - decoding without verification never fails where verified reading succeeded.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/memorymanager.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const ncm_mem_state *s)
{
        static const struct {
                ncm_mem_checkpoint_version v;
                ncm_kubelet_version k;
        } gens[] = {{NCM_MEM_CHECKPOINT_V1, {1, 35}},
                    {NCM_MEM_CHECKPOINT_V2, {1, 36}},
                    {NCM_MEM_CHECKPOINT_V3, {0, 0}}};
        for (size_t i = 0; i < 3; i++) {
                ncm_buf a = NCM_BUF_INIT, b = NCM_BUF_INIT;
                ncm_mem_state *t = NULL;
                ncm_mem_checkpoint_format(s, gens[i].v, &a);
                if (ncm_buf_failed(&a)) {
                        ncm_buf_done(&a);
                        continue;
                }
                if (ncm_mem_checkpoint_parse(a.data, a.len, "out", gens[i].k, NULL, true, &t, NULL,
                                             NULL) != 0)
                        abort();
                /* V1 has no podEntries: compare what it holds */
                if (gens[i].v != NCM_MEM_CHECKPOINT_V1 && !ncm_mem_state_equal(s, t))
                        abort();
                ncm_mem_checkpoint_format(t, gens[i].v, &b);
                if (!ncm_buf_failed(&b) && gens[i].v != NCM_MEM_CHECKPOINT_V1 &&
                    (a.len != b.len || memcmp(a.data, b.data, a.len) != 0))
                        abort();
                ncm_mem_state_free(t);
                ncm_buf_done(&a);
                ncm_buf_done(&b);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const ncm_kubelet_version gens[] = {{1, 35}, {1, 36}, {0, 0}};
        const char *text = (const char *)data + 1;
        size_t len = size ? size - 1 : 0;

        if (size == 0)
                return 0;
        if (data[0] & 1) {
                ncm_mem_reservations l = {0};
                char *s = malloc(len + 1);
                if (!s)
                        return 0;
                memcpy(s, text, len);
                s[len] = '\0';
                if (ncm_mem_reservations_parse_flag(s, &l, NULL) == 0)
                        (void)ncm_mem_reservations_validate(&l, NULL);
                ncm_mem_reservations_done(&l);
                free(s);
                return 0;
        }
        {
                ncm_mem_state *s = NULL, *d = NULL;
                ncm_mem_checkpoint_info info;
                int r = ncm_mem_checkpoint_parse(text, len, "in", gens[(data[0] / 2) % 3], NULL,
                                                 true, &s, &info, NULL);
                int q = ncm_mem_checkpoint_decode(text, len, "in", &d, &info, NULL);
                if (r == 0 && q != 0)
                        abort();
                if (r == 0)
                        check_round_trip(s);
                ncm_mem_state_free(s);
                ncm_mem_state_free(d);
        }
        return 0;
}
