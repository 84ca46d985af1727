/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cpu-args.h"

/* Parse kubelet's --feature-gates list; only the two option gates are recognised. */
static int parse_gates(const char *cmd, char *s, ncm_cpu_gates *g)
{
        char *save = NULL;

        for (char *kv = strtok_r(s, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
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

static int parse_count(const char *cmd, const char *s, int *ret)
{
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

static int parse_size(const char *cmd, const char *opt, const char *s, long long *ret)
{
        char *end;
        long long v;

        errno = 0;
        v = strtoll(s, &end, 10);
        if (!*s || *end || errno || v < 0)
                return cli_usage_error(cmd, "%s '%s': expected a number (0 or more)", opt, s);
        *ret = v;
        return 0;
}

static int parse_set(const char *cmd, const char *opt, const char *s, ncm_cpuset **set)
{
        ncm_error err = NCM_ERROR_INIT;
        *set = ncm_cpuset_free(*set);
        if (ncm_cpuset_parse_list(s, set, &err) < 0)
                return cli_usage_error(cmd, "%s '%s': %s", opt, s, err.msg);
        return 0;
}

int cli_cpu_args_parse(const char *cmd, int argc, char **argv, bool with_reusable,
                       void (*usage)(FILE *f), cli_cpu_args *a)
{
        static const struct option opts[] = {
                        CLI_SOURCE_OPTIONS,
                        {"available", required_argument, NULL, 'a'},
                        {"reusable", required_argument, NULL, 'r'},
                        {"count", required_argument, NULL, 'n'},
                        {"option", required_argument, NULL, 'o'},
                        {"feature-gates", required_argument, NULL, 'g'},
                        {"kubelet-version", required_argument, NULL, 'k'},
                        {"limit", required_argument, NULL, 'l'},
                        {"offset", required_argument, NULL, 'O'},
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        int c;

        a->src = (cli_source)CLI_SOURCE_INIT;
        a->count = -1;
        a->limit = -1;
        a->gates = NCM_CPU_GATES_DEFAULT;
        a->options = calloc((size_t)argc, sizeof(*a->options));
        if (!a->options)
                return cli_usage_error(cmd, "out of memory");
        opterr = 0;
        optind = 1;
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                if (cli_source_option(&a->src, c, optarg))
                        continue;
                switch (c) {
                case 'a':
                        if (parse_set(cmd, "--available", optarg, &a->available) != 0)
                                return 2;
                        break;
                case 'r':
                        /* by name: argv[optind - 1] is the value when it came separately */
                        if (!with_reusable)
                                return cli_usage_error(cmd, "unknown option '--reusable'");
                        if (parse_set(cmd, "--reusable", optarg, &a->reusable) != 0)
                                return 2;
                        break;
                case 'n':
                        if (parse_count(cmd, optarg, &a->count) != 0)
                                return 2;
                        break;
                case 'o': {
                        char *eq = strchr(optarg, '=');
                        if (!eq)
                                return cli_usage_error(cmd, "--option '%s': expected KEY=VALUE",
                                                       optarg);
                        *eq = '\0';
                        a->options[a->noptions++] = (ncm_cpu_option){optarg, eq + 1};
                        break;
                }
                case 'g':
                        if (parse_gates(cmd, optarg, &a->gates) != 0)
                                return 2;
                        break;
                case 'k':
                        if (cli_kubelet_version(cmd, optarg, &a->kubelet_version) != 0)
                                return 2;
                        break;
                case 'l':
                case 'O':
                        /* paging belongs to the hints listing (the command with --reusable) */
                        if (!with_reusable)
                                return cli_usage_error(cmd, "unknown option '%s'",
                                                       c == 'l' ? "--limit" : "--offset");
                        if (parse_size(cmd, c == 'l' ? "--limit" : "--offset", optarg,
                                       c == 'l' ? &a->limit : &a->offset) != 0)
                                return 2;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case ':':
                        return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
                default:
                        return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind < argc)
                return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
        if (!a->available)
                return cli_usage_error(cmd, "--available LIST is required");
        if (a->count < 0)
                return cli_usage_error(cmd, "--count N is required");
        if (a->offset > 0 && a->limit < 0)
                return cli_usage_error(cmd, "--offset needs --limit");
        if (cli_source_check(&a->src, cmd) != 0)
                return 2;
        return -1;
}

int cli_kubelet_version(const char *cmd, const char *s, ncm_kubelet_version *ret)
{
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_kubelet_version_parse(s, ret, &err) < 0)
                return cli_usage_error(cmd, "--kubelet-version: %s", err.msg);
        return 0;
}

int cli_cpu_args_prepare(cli_cpu_args *a, ncm_error *err)
{
        int r = ncm_cpu_options_parse_version(a->options, a->noptions, a->gates, a->kubelet_version,
                                              &a->opts, err);
        if (r < 0)
                return r;
        r = cli_source_load(&a->src, &a->topo, err);
        if (r < 0)
                return r;
        {
                /* CPUs the machine does not have cannot be free on it */
                ncm_autoptr(ncm_cpuset) all = ncm_cpuset_new();
                ncm_autoptr(ncm_cpuset) out = ncm_cpuset_new();
                if (!all || !out)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                ncm_topo_all_cpus(a->topo, all);
                ncm_cpuset_andnot(out, a->available, all);
                if (!ncm_cpuset_is_empty(out)) {
                        ncm_autofree char *o = ncm_cpuset_format_list(out);
                        ncm_autofree char *m = ncm_cpuset_format_list(all);
                        return ncm_error_set(err, EINVAL,
                                             "--available: CPUs %s are not on the machine (%s)",
                                             o ? o : "?", m ? m : "?");
                }
        }
        r = ncm_cpu_options_validate(&a->opts, a->topo, NULL, err);
        if (r < 0)
                return r;
        return ncm_cpu_index_new(a->topo, &a->index, err);
}

void cli_cpu_args_done(cli_cpu_args *a)
{
        ncm_cpu_index_free(a->index);
        ncm_topo_free(a->topo);
        ncm_cpuset_free(a->available);
        ncm_cpuset_free(a->reusable);
        free(a->options);
        *a = (cli_cpu_args){0};
}
