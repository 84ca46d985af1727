/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm hints SOURCE --available LIST [--reusable LIST] --count N [--option KEY=VALUE]...:
 * kubelet's generateCPUTopologyHints. Prints the hints as a JSON array in kubelet's order.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpumanager.h>
#include "cli.h"
#include "source.h"

static void usage(FILE *f) {
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
              "  --count N          how many CPUs are requested\n"
              "  --option KEY=VALUE a cpuManagerPolicyOptions entry (repeatable)\n"
              "  --feature-gates G  "
              "CPUManagerPolicyAlphaOptions=BOOL,CPUManagerPolicyBetaOptions=BOOL\n"
              "                     (default: alpha off, beta on, as the newest kubelet)\n"
              "  -h, --help         show this help\n\n" CLI_SOURCE_HELP
              "\nExit status: 0 done (also for an empty array), 2 bad usage, a bad option or a\n"
              "source that cannot be read.\n",
              f);
}

static int parse_gates(const char *s, ncm_cpu_gates *g) {
        ncm_autofree char *copy = strdup(s);
        char *save = NULL;

        if (!copy)
                return cli_usage_error("hints", "out of memory");
        for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(kv, '=');
                bool v;
                if (!eq || ncm_parse_go_bool(eq + 1, &v) < 0)
                        return cli_usage_error("hints", "--feature-gates '%s': expected NAME=BOOL",
                                               kv);
                *eq = '\0';
                if (strcmp(kv, "CPUManagerPolicyAlphaOptions") == 0)
                        g->alpha_options = v;
                else if (strcmp(kv, "CPUManagerPolicyBetaOptions") == 0)
                        g->beta_options = v;
                else
                        return cli_usage_error("hints", "--feature-gates: unknown gate '%s'", kv);
        }
        return 0;
}

int cmd_hints(int argc, char **argv) {
        static const struct option opts[] = {
                        CLI_SOURCE_OPTIONS,
                        {"available", required_argument, NULL, 'a'},
                        {"reusable", required_argument, NULL, 'r'},
                        {"count", required_argument, NULL, 'n'},
                        {"option", required_argument, NULL, 'o'},
                        {"feature-gates", required_argument, NULL, 'g'},
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        cli_source src = CLI_SOURCE_INIT;
        ncm_autoptr(ncm_topo) topo = NULL;
        ncm_autoptr(ncm_cpu_index) ix = NULL;
        ncm_autoptr(ncm_cpuset) avail = NULL;
        ncm_autoptr(ncm_cpuset) reusable = NULL;
        ncm_autofree ncm_cpu_option *options = NULL;
        ncm_cpu_gates gates = NCM_CPU_GATES_DEFAULT;
        ncm_hint_list hints = NCM_HINT_LIST_INIT;
        ncm_cpu_options o;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        size_t noptions = 0;
        int c, count = -1, rc;
        char *end;
        long v;

        options = calloc((size_t)argc, sizeof(*options));
        if (!options)
                return cli_usage_error("hints", "out of memory");
        opterr = 0;
        optind = 1;
        while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
                if (cli_source_option(&src, c, optarg))
                        continue;
                switch (c) {
                case 'a':
                        avail = ncm_cpuset_free(avail);
                        if (ncm_cpuset_parse_list(optarg, &avail, &err) < 0)
                                return cli_usage_error("hints", "--available '%s': %s", optarg,
                                                       err.msg);
                        break;
                case 'r':
                        reusable = ncm_cpuset_free(reusable);
                        if (ncm_cpuset_parse_list(optarg, &reusable, &err) < 0)
                                return cli_usage_error("hints", "--reusable '%s': %s", optarg,
                                                       err.msg);
                        break;
                case 'n':
                        errno = 0;
                        v = strtol(optarg, &end, 10);
                        if (!*optarg || *end || errno || v < 0 || v > INT_MAX)
                                return cli_usage_error("hints",
                                                       "--count '%s': expected a number of CPUs (0 "
                                                       "or more)",
                                                       optarg);
                        count = (int)v;
                        break;
                case 'o': {
                        char *eq = strchr(optarg, '=');
                        if (!eq)
                                return cli_usage_error("hints", "--option '%s': expected KEY=VALUE",
                                                       optarg);
                        *eq = '\0';
                        options[noptions++] = (ncm_cpu_option){optarg, eq + 1};
                        break;
                }
                case 'g':
                        if (parse_gates(optarg, &gates) != 0)
                                return 2;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case ':':
                        return cli_usage_error("hints", "option '%s' needs a value",
                                               argv[optind - 1]);
                default:
                        return cli_usage_error("hints", "unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind < argc)
                return cli_usage_error("hints", "unexpected argument '%s'", argv[optind]);
        if (!avail)
                return cli_usage_error("hints", "--available LIST is required");
        if (count < 0)
                return cli_usage_error("hints", "--count N is required");
        if (cli_source_check(&src, "hints") != 0)
                return 2;
        if (ncm_cpu_options_parse(options, noptions, gates, &o, &err) < 0)
                return cli_fail(&err);
        if (cli_source_load(&src, &topo, &err) < 0 ||
            ncm_cpu_options_validate(&o, topo, NULL, &err) < 0 ||
            ncm_cpu_index_new(topo, &ix, &err) < 0)
                return cli_fail(&err);
        if (ncm_cpu_hints_generate(ix, &o, avail, reusable, count, &hints, &err) < 0) {
                ncm_hint_list_done(&hints);
                return cli_fail(&err);
        }
        ncm_cpu_hints_format_json(&hints, &out);
        ncm_buf_putc(&out, '\n');
        ncm_hint_list_done(&hints);
        if (ncm_buf_failed(&out)) {
                ncm_buf_done(&out);
                ncm_error_set(&err, ENOMEM, "out of memory");
                return cli_fail(&err);
        }
        rc = cli_emit(out.data, out.len);
        ncm_buf_done(&out);
        return rc;
}
