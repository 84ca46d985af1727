/* SPDX-License-Identifier: Apache-2.0 */
/* The three CPU-set text parsers; whatever parses must format and parse back to itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpuset.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = malloc(size + 1);
        ncm_cpuset *set = NULL;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        if (ncm_cpuset_parse_list(s, &set, NULL) == 0) {
                char *text = ncm_cpuset_format_list(set);
                ncm_cpuset *back = NULL;
                if (!text || ncm_cpuset_parse_list(text, &back, NULL) != 0 ||
                    !ncm_cpuset_equal(set, back))
                        abort();
                free(text);
                ncm_cpuset_free(back);
                ncm_cpuset_free(set);
        }
        if (ncm_cpuset_parse_sysfs_list(s, &set, NULL) == 0)
                ncm_cpuset_free(set);
        if (ncm_cpuset_parse_mask(s, &set, NULL) == 0)
                ncm_cpuset_free(set);
        free(s);
        return 0;
}
