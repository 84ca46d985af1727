/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm hints SOURCE --available LIST [--reusable LIST] --count N [--option KEY=VALUE]...
 * [--limit N [--offset K]]: kubelet's generateCPUTopologyHints. Prints the hints as a JSON
 * array in kubelet's order, or with --limit one page of them and their total.
 *
 * The hints are described (ncm_cpu_hints_describe), never held as a list: the array is
 * written as the description's iterator produces it, and the total is counted without
 * walking the masks, so 32 or 64 NUMA nodes cost what the output costs.
 */
#include <stdio.h>

#include "cli.h"
#include "cpu-args.h"

/* Flush the output buffer to stdout every so many bytes while streaming. */
#define STREAM_CHUNK (1 << 20)

static void usage(FILE *f)
{
        fputs("Usage: nodecm hints [SOURCE] --available LIST [--reusable LIST] --count N\n"
              "                    [--option KEY=VALUE]... [--limit N [--offset K]]\n\n"
              "Generate the CPU manager's topology hints for a request of N exclusive CPUs, as\n"
              "the kubelet's static policy does: one hint per set of NUMA nodes whose free CPUs\n"
              "(plus the reusable ones, which must all lie inside it) can hold N, ordered by the\n"
              "number of nodes, then by node ids; preferred when it is as narrow as the\n"
              "narrowest set whose capacity holds N (or, with align-by-socket, when it spans the\n"
              "fewest sockets such a set needs). Prints a JSON array:\n"
              "  [{\"numa\": [0], \"preferred\": true}, {\"numa\": [0, 1], \"preferred\": false}]\n"
              "An empty array means no NUMA placement can satisfy the request. A machine with\n"
              "N NUMA nodes has up to 2^N - 1 hints: --limit prints one page instead,\n"
              "  {\"total\": 4294967295, \"offset\": 0, \"limit\": 2, \"hints\": [...]}\n"
              "with the exact number of hints (counted, not listed) and at most N of them from\n"
              "position K on (skipping costs time, not memory).\n\n"
              "  --available LIST   the free CPUs (the static policy's available pool)\n"
              "  --reusable LIST    CPUs the container may reuse (a finished init container's)\n"
              "  --count N          how many CPUs are requested\n"
              "  --limit N          print at most N hints and the total\n"
              "  --offset K         with --limit: start at the K-th hint (0 "
              "first)\n" CLI_CPU_OPTIONS_HELP
              "\nExit status: 0 done (also for an empty array), 2 bad usage, a bad option or a\n"
              "source that cannot be read,\n" CLI_EXIT_ENV,
              f);
}

/* The page: total, then LIMIT hints from OFFSET on. */
static int page(const cli_cpu_args *a, const ncm_hint_desc *d, ncm_buf *out, ncm_error *err)
{
        ncm_hint_list l = NCM_HINT_LIST_INIT;
        uint64_t total;
        int r = ncm_hint_page(NULL, d, (uint64_t)a->offset, (size_t)a->limit, &l, &total, err);

        if (r < 0)
                return r;
        ncm_buf_printf(out, "{\"total\": %llu, \"offset\": %lld, \"limit\": %lld, \"hints\": ",
                       (unsigned long long)total, a->offset, a->limit);
        ncm_cpu_hints_format_json(&l, out);
        ncm_buf_puts(out, "}\n");
        ncm_hint_list_done(&l);
        return 0;
}

/* The whole array, written out in chunks as the iterator goes: never all in memory. */
static int stream(const ncm_hint_desc *d, ncm_buf *out)
{
        ncm_hint_desc_iter it;
        ncm_hint h;
        bool first = true;
        int rc;

        ncm_buf_putc(out, '[');
        ncm_hint_desc_iter_init(&it, d);
        while (ncm_hint_desc_iter_next(&it, &h)) {
                if (!first)
                        ncm_buf_puts(out, ", ");
                first = false;
                ncm_hint_format_json(&h, out);
                if (out->len >= STREAM_CHUNK) {
                        rc = cli_emit_buf(out);
                        if (rc != 0)
                                return rc;
                        *out = (ncm_buf)NCM_BUF_INIT;
                }
        }
        ncm_buf_puts(out, "]\n");
        return cli_emit_buf(out);
}

int cmd_hints(int argc, char **argv)
{
        cli_cpu_args a = {0};
        ncm_hint_desc *d = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        int r, rc = cli_cpu_args_parse("hints", argc, argv, true, usage, &a);

        if (rc < 0) {
                /* Everything that can fail on the input fails before the first byte. */
                if ((r = cli_cpu_args_prepare(&a, &err)) < 0 ||
                    (r = ncm_cpu_hints_describe(a.index, &a.opts, a.available, a.reusable, a.count,
                                                &d, &err)) < 0)
                        rc = cli_fail(r, &err);
                else if (a.limit >= 0)
                        rc = (r = page(&a, d, &out, &err)) < 0 ? cli_fail(r, &err)
                                                               : cli_emit_buf(&out);
                else
                        rc = stream(d, &out);
        }
        ncm_buf_done(&out);
        ncm_hint_desc_free(d);
        cli_cpu_args_done(&a);
        return rc;
}
