/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm merge FILE: the topology manager's merge of given provider hints (DESIGN.md). The
 * result is printed whether or not the policy admits it; admission decides the exit status.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/topologymanager.h>
#include "cli.h"

static void usage(FILE *f)
{
        fputs("Usage: nodecm merge [--reference] FILE\n\n"
              "Run the topology manager's hint merge on the providers' hints in FILE (JSON or\n"
              "YAML, '-' for standard input) and print the merged hint and whether the policy\n"
              "admits it:\n\n"
              "  {\"policy\": \"restricted\",\n"
              "   \"options\": {\"prefer-closest-numa-nodes\": \"true\"},\n"
              "   \"numa\": [0, 1], \"distances\": {\"0\": [10, 11], \"1\": [11, 10]},\n"
              "   \"providers\": [{\"cpu\": [{\"numa\": [0], \"preferred\": true}]},\n"
              "                 {\"example.com/gpu\": [{\"numa\": null, \"preferred\": true}]},\n"
              "                 null]}\n"
              "  -> {\"numa\": [0], \"preferred\": true, \"admit\": true}\n\n"
              "policy is none, best-effort, restricted or single-numa-node; options are kubelet's\n"
              "topologyManagerPolicyOptions; numa lists the machine's NUMA node ids; distances\n"
              "(needed with prefer-closest-numa-nodes) gives each node's distances to the nodes\n"
              "of numa, in that order. A provider of null has no preference, a resource whose\n"
              "list is null has no preference, an empty list cannot be satisfied, and a hint\n"
              "with \"numa\": null means any NUMA node. A result of \"numa\": null is kubelet's\n"
              "nil affinity.\n\n"
              "  --reference        walk the cross product of all hints as the kubelet does\n"
              "                     (same result; slow with many NUMA nodes)\n"
              "  -h, --help         show this help\n\n"
              "Exit status: 0 admitted, 1 not admitted (the result is still printed, and the\n"
              "kubelet's reason on standard error), 2 bad usage or bad input,\n" CLI_EXIT_ENV,
              f);
}

int cmd_merge(int argc, char **argv)
{
        static const struct option opts[] = {
                        {"reference", no_argument, NULL, 'r'},
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        ncm_tm_merge_mode mode = NCM_TM_MERGE_FAST;
        ncm_autoptr(ncm_tm_request) req = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        const char *path;
        ncm_hint hint;
        bool admit;
        int c, r, rc;

        opterr = 0;
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'r':
                        mode = NCM_TM_MERGE_REFERENCE;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        return cli_usage_error("merge", "unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind >= argc)
                return cli_usage_error("merge", "missing FILE");
        if (optind + 1 < argc)
                return cli_usage_error("merge", "unexpected argument '%s'", argv[optind + 1]);
        path = argv[optind];

        if ((r = ncm_tm_request_load(path, NCM_TM_GATES_DEFAULT, &req, &err)) < 0 ||
            (r = ncm_tm_request_merge(req, mode, &hint, &admit, &err)) < 0)
                return cli_fail(r, &err);

        ncm_tm_result_format_json(&hint, admit, &out);
        ncm_buf_putc(&out, '\n');
        rc = cli_emit_buf(&out);
        if (rc != 0)
                return rc;
        if (!admit) {
                fprintf(stderr, "nodecm: %s: %s\n", NCM_TM_REASON_TOPOLOGY_AFFINITY,
                        NCM_TM_MESSAGE_TOPOLOGY_AFFINITY);
                return 1;
        }
        return 0;
}
