/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm take SOURCE --available LIST --count N [--option KEY=VALUE]... [--feature-gates G]:
 * kubelet's takeByTopology, the algorithm chosen from the options as the static policy does,
 * without admission checks. Prints the CPUs in kubelet's canonical form.
 */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "cpu-args.h"

static void usage(FILE *f)
{
        fputs("Usage: nodecm take [SOURCE] --available LIST --count N [--option KEY=VALUE]...\n\n"
              "Choose N CPUs out of LIST exactly as the kubelet's CPU manager does\n"
              "(takeByTopology): whole NUMA nodes and sockets first, then uncore caches (with\n"
              "prefer-align-cpus-by-uncorecache), whole cores, single CPUs; or spread over NUMA\n"
              "nodes with distribute-cpus-across-numa. Prints the CPU list (e.g. 0-3,8).\n\n"
              "  --available LIST   the free CPUs, kubelet cpuset syntax (\"0-3,8\")\n"
              "  --count N          how many CPUs to take\n" CLI_CPU_OPTIONS_HELP
              "\nExit status: 0 done, 1 the request cannot be met (kubelet's error text),\n"
              "2 bad usage, a bad option or a source that cannot be read,\n" CLI_EXIT_ENV,
              f);
}

int cmd_take(int argc, char **argv)
{
        cli_cpu_args a = {0};
        ncm_autoptr(ncm_cpuset) got = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        int r = -ENOMEM, rc = cli_cpu_args_parse("take", argc, argv, false, usage, &a);

        if (rc < 0) {
                got = ncm_cpuset_new();
                if (got && (r = cli_cpu_args_prepare(&a, &err)) >= 0 &&
                    (r = ncm_cpu_take(a.index, &a.opts, a.available, a.count, got, &err)) >= 0) {
                        ncm_cpuset_format_list_buf(got, &out);
                        ncm_buf_putc(&out, '\n');
                }
                rc = r < 0 ? cli_fail(r, &err) : cli_emit_buf(&out);
        }
        ncm_buf_done(&out);
        cli_cpu_args_done(&a);
        return rc;
}
