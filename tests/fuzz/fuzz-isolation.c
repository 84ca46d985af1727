/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the kernel was told about isolation, as nodecm reads it. The first byte picks a target:
 *  0: ncm_kernel_cpulist_parse (bitmap_parselist) with a width from the second byte: whatever
 *     parses stays inside the width, and its canonical list parses back to the same set;
 *  1: ncm__iso_parse_cmdline (isolcpus=, nohz_full=): every set stays inside the width.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topology.h>
#include "topology/topology-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_width(const ncm_cpuset *s, int nr)
{
        if (s && ncm_cpuset_last(s) >= nr)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *text;
        int nr;

        if (size < 2)
                return 0;
        nr = 1 + data[1] * 32; /* 1..8161 */
        text = (const char *)data + 2;
        size -= 2;
        if (data[0] % 2 == 0) {
                ncm_cpuset *s = NULL, *back = NULL;
                char *list;
                if (ncm_kernel_cpulist_parse(text, size, nr, &s) < 0)
                        return 0;
                check_width(s, nr);
                list = ncm_cpuset_format_list(s);
                if (!list || ncm_kernel_cpulist_parse(list, strlen(list), nr, &back) < 0 ||
                    !ncm_cpuset_equal(s, back))
                        abort();
                free(list);
                ncm_cpuset_free(back);
                ncm_cpuset_free(s);
        } else {
                ncm_cpuset *v[NCM_ISO_N_SOURCES] = {0};
                if (ncm__iso_parse_cmdline(text, size, nr, v) < 0)
                        return 0;
                for (int k = 0; k < NCM_ISO_N_SOURCES; k++) {
                        check_width(v[k], nr);
                        ncm_cpuset_free(v[k]);
                }
        }
        return 0;
}
