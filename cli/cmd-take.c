/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm take SOURCE --available LIST --count N [--option KEY=VALUE]... [--feature-gates G]:
 * kubelet's takeByTopology, the algorithm chosen from the options as the static policy does,
 * without admission checks. Prints the CPUs in kubelet's canonical form.
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
        fputs("Usage: nodecm take [SOURCE] --available LIST --count N [--option KEY=VALUE]...\n\n"
              "Choose N CPUs out of LIST exactly as the kubelet's CPU manager does\n"
              "(takeByTopology): whole NUMA nodes and sockets first, then uncore caches (with\n"
              "prefer-align-cpus-by-uncorecache), whole cores, single CPUs; or spread over NUMA\n"
              "nodes with distribute-cpus-across-numa. Prints the CPU list (e.g. 0-3,8).\n\n"
              "  --available LIST   the free CPUs, kubelet cpuset syntax (\"0-3,8\")\n"
              "  --count N          how many CPUs to take\n"
              "  --option KEY=VALUE a cpuManagerPolicyOptions entry (repeatable): "
              "full-pcpus-only,\n"
              "                     distribute-cpus-across-numa, align-by-socket,\n"
              "                     distribute-cpus-across-cores, strict-cpu-reservation,\n"
              "                     prefer-align-cpus-by-uncorecache; VALUE as Go's ParseBool\n"
              "  --feature-gates G  "
              "CPUManagerPolicyAlphaOptions=BOOL,CPUManagerPolicyBetaOptions=BOOL\n"
              "                     (default: alpha off, beta on, as the newest kubelet)\n"
              "  -h, --help         show this help\n\n" CLI_SOURCE_HELP
              "\nExit status: 0 done, 1 the request cannot be met (kubelet's error text),\n"
              "2 bad usage, a bad option or a source that cannot be read.\n",
              f);
}

/* Parse kubelet's --feature-gates list; only the two option gates are recognised. */
static int parse_gates(const char *cmd, const char *s, ncm_cpu_gates *g) {
        ncm_autofree char *copy = strdup(s);
        char *save = NULL;

        if (!copy)
                return cli_usage_error(cmd, "out of memory");
        for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(kv, '=');
                bool v;
                if (!eq || ncm_parse_go_bool(eq + 1, &v) < 0)
                        return cli_usage_error(cmd, "--feature-gates '%s': expected NAME=BOOL", kv);
                *eq = '\0';
                if (strcmp(kv, "CPUManagerPolicyAlphaOptions") == 0)
                        g->alpha_options = v;
                else if (strcmp(kv, "CPUManagerPolicyBetaOptions") == 0)
                        g->beta_options = v;
                else
                        return cli_usage_error(cmd, "--feature-gates: unknown gate '%s'", kv);
        }
        return 0;
}

static int parse_count(const char *cmd, const char *s, int *ret) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (!*s || *end || errno || v < 0 || v > INT_MAX)
                return cli_usage_error(cmd, "--count '%s': expected a number of CPUs (0 or more)",
                                       s);
        *ret = (int)v;
        return 0;
}

int cmd_take(int argc, char **argv) {
        static const struct option opts[] = {
                        CLI_SOURCE_OPTIONS,
                        {"available", required_argument, NULL, 'a'},
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
        ncm_autoptr(ncm_cpuset) got = NULL;
        ncm_autofree ncm_cpu_option *options = NULL;
        ncm_cpu_gates gates = NCM_CPU_GATES_DEFAULT;
        ncm_cpu_options o;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        size_t noptions = 0;
        int c, count = -1, rc;

        options = calloc((size_t)argc, sizeof(*options));
        if (!options)
                return cli_usage_error("take", "out of memory");
        opterr = 0;
        optind = 1;
        while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
                if (cli_source_option(&src, c, optarg))
                        continue;
                switch (c) {
                case 'a':
                        avail = ncm_cpuset_free(avail);
                        if (ncm_cpuset_parse_list(optarg, &avail, &err) < 0)
                                return cli_usage_error("take", "--available '%s': %s", optarg,
                                                       err.msg);
                        break;
                case 'n':
                        if (parse_count("take", optarg, &count) != 0)
                                return 2;
                        break;
                case 'o': {
                        char *eq = strchr(optarg, '=');
                        if (!eq)
                                return cli_usage_error("take", "--option '%s': expected KEY=VALUE",
                                                       optarg);
                        *eq = '\0';
                        options[noptions++] = (ncm_cpu_option){optarg, eq + 1};
                        break;
                }
                case 'g':
                        if (parse_gates("take", optarg, &gates) != 0)
                                return 2;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case ':':
                        return cli_usage_error("take", "option '%s' needs a value",
                                               argv[optind - 1]);
                default:
                        return cli_usage_error("take", "unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind < argc)
                return cli_usage_error("take", "unexpected argument '%s'", argv[optind]);
        if (!avail)
                return cli_usage_error("take", "--available LIST is required");
        if (count < 0)
                return cli_usage_error("take", "--count N is required");
        if (cli_source_check(&src, "take") != 0)
                return 2;
        if (ncm_cpu_options_parse(options, noptions, gates, &o, &err) < 0)
                return cli_fail(&err);
        if (cli_source_load(&src, &topo, &err) < 0 ||
            ncm_cpu_options_validate(&o, topo, NULL, &err) < 0 ||
            ncm_cpu_index_new(topo, &ix, &err) < 0)
                return cli_fail(&err);
        got = ncm_cpuset_new();
        if (!got) {
                ncm_error_set(&err, ENOMEM, "out of memory");
                return cli_fail(&err);
        }
        if (ncm_cpu_take(ix, &o, avail, count, got, &err) < 0)
                return cli_fail(&err);
        ncm_cpuset_format_list_buf(got, &out);
        ncm_buf_putc(&out, '\n');
        if (ncm_buf_failed(&out)) {
                ncm_buf_done(&out);
                ncm_error_set(&err, ENOMEM, "out of memory");
                return cli_fail(&err);
        }
        rc = cli_emit(out.data, out.len);
        ncm_buf_done(&out);
        return rc;
}
