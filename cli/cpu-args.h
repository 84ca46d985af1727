/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The arguments `nodecm take` and `nodecm hints` share: a topology source, --available,
 * --reusable (hints only), --count, --option KEY=VALUE (cpuManagerPolicyOptions) and
 * --feature-gates, and the machine they prepare from them (options parsed and validated as
 * the static policy does, the allocator's index built).
 */
#ifndef NODECM_CLI_CPU_ARGS_H
#define NODECM_CLI_CPU_ARGS_H

#include <stdbool.h>
#include <stdio.h>
#include <nodecm/cpumanager.h>
#include "source.h"

typedef struct cli_cpu_args {
        cli_source src;
        ncm_cpuset *available; /* --available (required) */
        ncm_cpuset *reusable;  /* --reusable, or NULL */
        int count;             /* --count (required) */
        long long limit;       /* hints --limit (-1: none) */
        long long offset;      /* hints --offset */
        ncm_cpu_option *options;
        size_t noptions;
        ncm_cpu_gates gates;
        ncm_kubelet_version kubelet_version; /* --kubelet-version; {0, 0}: the newest */
        /* Prepared by cli_cpu_args_prepare(). */
        ncm_topo *topo;
        ncm_cpu_index *index;
        ncm_cpu_options opts;
} cli_cpu_args;

/* The help line of --kubelet-version (every command that allocates takes it). */
#define CLI_KUBELET_VERSION_HELP                                                                                                      \
        "  --kubelet-version X.Y  decide as kubelet X.Y does (1." NCM_KUBELET_MINOR_STR(                                              \
                        NCM_KUBELET_OLDEST_MINOR) " and newer; default: the\n"                                                        \
                                                  "                     newest released, "                                            \
                                                  "1." NCM_KUBELET_MINOR_STR(NCM_KUBELET_DEFAULT_MINOR) "; 1." NCM_KUBELET_MINOR_STR( \
                                                                  NCM_KUBELET_NEWEST_MINOR) " is "                                    \
                                                                                            "the "                                    \
                                                                                            "deve"                                    \
                                                                                            "lopm"                                    \
                                                                                            "ent "                                    \
                                                                                            "bran"                                    \
                                                                                            "ch);"                                    \
                                                                                            "\n"                                      \
                                                                                            "    "                                    \
                                                                                            "    "                                    \
                                                                                            "    "                                    \
                                                                                            "    "                                    \
                                                                                            "    "                                    \
                                                                                            " see"                                    \
                                                                                            " doc"                                    \
                                                                                            "s/"                                      \
                                                                                            "cpu-"                                    \
                                                                                            "mana"                                    \
                                                                                            "ger."                                    \
                                                                                            "md "                                     \
                                                                                            "\"Ku"                                    \
                                                                                            "bele"                                    \
                                                                                            "t "                                      \
                                                                                            "gene"                                    \
                                                                                            "rati"                                    \
                                                                                            "ons"                                     \
                                                                                            "\"\n"

/* Help lines for the shared options, to put in a command's usage text. */
#define CLI_CPU_OPTIONS_HELP                                                                       \
        "  --option KEY=VALUE a cpuManagerPolicyOptions entry (repeatable): full-pcpus-only,\n"    \
        "                     distribute-cpus-across-numa, align-by-socket,\n"                     \
        "                     distribute-cpus-across-cores, strict-cpu-reservation,\n"             \
        "                     prefer-align-cpus-by-uncorecache; VALUE as Go's ParseBool\n"         \
        "  --feature-gates G  "                                                                    \
        "CPUManagerPolicyAlphaOptions=BOOL,CPUManagerPolicyBetaOptions=BOOL\n"                     \
        "                     (default: alpha off, beta on, as the newest "                        \
        "kubelet)\n" CLI_KUBELET_VERSION_HELP                                                      \
        "  -h, --help         show this help\n\n" CLI_SOURCE_HELP

/*
 * Parse ARGV of command CMD into A (which must be zeroed). WITH_REUSABLE accepts --reusable.
 * Returns -1 when the command should go on, otherwise the exit status to return at once (0
 * after printing USAGE for --help, 2 after a one-line usage error).
 */
int cli_cpu_args_parse(const char *cmd, int argc, char **argv, bool with_reusable,
                       void (*usage)(FILE *f), cli_cpu_args *a);

/* Load the machine, parse and validate the options, build the allocator's index. */
int cli_cpu_args_prepare(cli_cpu_args *a, ncm_error *err);

/* --kubelet-version's value into *RET; a usage error for CMD (returns 2) when it is bad. */
int cli_kubelet_version(const char *cmd, const char *s, ncm_kubelet_version *ret);

/* Release everything A holds. */
void cli_cpu_args_done(cli_cpu_args *a);

#endif
