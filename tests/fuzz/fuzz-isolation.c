/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the kernel was told about isolation, as nodecm reads it. The first byte picks a target:
 *  0: ncm_kernel_cpulist_parse (bitmap_parselist) with a width from the second byte: whatever
 *     parses stays inside the width, and its canonical list parses back to the same set;
 *  1: ncm__iso_parse_cmdline (isolcpus=, nohz_full=): every set stays inside the width;
 *  2: ncm_knobs_parse_mask (an affinity mask): whatever parses formats back to the same set;
 *  3: ncm_knobs_irqbalance_edit: the edited file has exactly one IRQBALANCE_BANNED_CPUS line
 *     (none when the line is removed), and every other line as it came;
 *  4: ncm_knob_memo_parse: whatever parses formats to text that parses to an equal memo.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroup-knobs.h>
#include <nodecm/topology.h>
#include "topology/topology-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_width(const ncm_cpuset *s, int nr)
{
        if (s && ncm_cpuset_last(s) >= nr)
                abort();
}

static void fuzz_mask(const char *text, size_t size)
{
        ncm_cpuset *s = NULL, *back = NULL;
        ncm_buf b = NCM_BUF_INIT;

        if (ncm_knobs_parse_mask(text, size, &s) < 0)
                return;
        ncm_knobs_format_mask(s, ncm_cpuset_last(s) + 1, &b);
        if (ncm_buf_failed(&b) || ncm_knobs_parse_mask(b.data, b.len, &back) < 0 ||
            !ncm_cpuset_equal(s, back))
                abort();
        ncm_buf_done(&b);
        ncm_cpuset_free(back);
        ncm_cpuset_free(s);
}

/* How many lines of TEXT set the banned CPUs. */
static size_t banned_lines(const char *text, size_t len)
{
        size_t n = 0;
        for (const char *p = text; p < text + len;) {
                const char *nl = memchr(p, '\n', (size_t)(text + len - p));
                size_t ll = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
                if (ll >= 23 && memcmp(p, "IRQBALANCE_BANNED_CPUS=", 23) == 0)
                        n++;
                p += ll + 1;
        }
        return n;
}

static void fuzz_irqbalance(const char *text, size_t size, bool remove)
{
        ncm_buf b = NCM_BUF_INIT;
        char *old = NULL;

        if (memchr(text, '\0', size))
                return; /* a text file */
        if (ncm_knobs_irqbalance_edit(text, size, remove ? NULL : "ff", &b, &old) < 0)
                abort();
        if (banned_lines(b.data ? b.data : "", b.len) != (remove ? 0u : 1u))
                abort();
        if ((old != NULL) != (banned_lines(text, size) > 0))
                abort();
        free(old);
        ncm_buf_done(&b);
}

static void fuzz_memo(const char *text, size_t size)
{
        ncm_knob_memo *m = NULL, *back = NULL;
        ncm_buf b = NCM_BUF_INIT;

        if (ncm_knob_memo_parse(text, size, "memo", &m, NULL) < 0)
                return;
        ncm_knob_memo_format(m, &b);
        if (ncm_buf_failed(&b) || ncm_knob_memo_parse(b.data, b.len, "back", &back, NULL) < 0 ||
            !ncm_knob_memo_equal(m, back))
                abort();
        ncm_buf_done(&b);
        ncm_knob_memo_free(back);
        ncm_knob_memo_free(m);
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
        switch (data[0] % 5) {
        case 2:
                fuzz_mask(text, size);
                return 0;
        case 3:
                fuzz_irqbalance(text, size, data[1] & 1);
                return 0;
        case 4:
                fuzz_memo(text, size);
                return 0;
        default:
                break;
        }
        if (data[0] % 5 == 0) {
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
