/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm hints SOURCE --available LIST [--reusable LIST] --count N [--option KEY=VALUE]...:
 * kubelet's generateCPUTopologyHints. Prints the hints as a JSON array in kubelet's order.
 */
#include <stdio.h>

#include "cli.h"
#include "cpu-args.h"

static void usage(FILE *f)
{
        fputs("Usage: nodecm hints [SOURCE] --available LIST [--reusable LIST] --count N\n"
              "                    [--option KEY=VALUE]...\n\n"
              "Generate the CPU manager's topology hints for a request of N exclusive CPUs, as\n"
              "the kubelet's static policy does: one hint per set of NUMA nodes whose free CPUs\n"
              "(plus the reusable ones, which must all lie inside it) can hold N, ordered by the\n"
              "number of nodes, then by node ids; preferred when it is as narrow as the\n"
              "narrowest set whose capacity holds N (or, with align-by-socket, when it spans the\n"
              "fewest sockets such a set needs). Prints a JSON array:\n"
              "  [{\"numa\": [0], \"preferred\": true}, {\"numa\": [0, 1], \"preferred\": false}]\n"
              "An empty array means no NUMA placement can satisfy the request.\n\n"
              "  --available LIST   the free CPUs (the static policy's available pool)\n"
              "  --reusable LIST    CPUs the container may reuse (a finished init container's)\n"
              "  --count N          how many CPUs are requested\n" CLI_CPU_OPTIONS_HELP
              "\nExit status: 0 done (also for an empty array), 2 bad usage, a bad option or a\n"
              "source that cannot be read.\n",
              f);
}

int cmd_hints(int argc, char **argv)
{
        cli_cpu_args a = {0};
        ncm_hint_list hints = NCM_HINT_LIST_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        int rc = cli_cpu_args_parse("hints", argc, argv, true, usage, &a);

        if (rc < 0) {
                if (cli_cpu_args_prepare(&a, &err) >= 0 &&
                    ncm_cpu_hints_generate(a.index, &a.opts, a.available, a.reusable, a.count,
                                           &hints, &err) >= 0) {
                        ncm_cpu_hints_format_json(&hints, &out);
                        ncm_buf_putc(&out, '\n');
                }
                rc = err.code ? cli_fail(&err) : cli_emit_buf(&out);
        }
        ncm_hint_list_done(&hints);
        ncm_buf_done(&out);
        cli_cpu_args_done(&a);
        return rc;
}
