/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Go durations. Whatever parses prints as Go's String(), which parses back to the same value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/duration.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char text[256], out[NCM_DURATION_STRLEN];
        int64_t v, back;

        if (size >= sizeof(text))
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (ncm_duration_parse(text, &v, NULL) < 0)
                return 0;
        ncm_duration_format(v, out);
        if (strlen(out) >= NCM_DURATION_STRLEN - 1)
                abort();
        if (ncm_duration_parse(out, &back, NULL) < 0 || back != v)
                abort();
        return 0;
}
