/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's flags that nodecm commands take (--kube-reserved, --cgroup-root, ...), mapped
 * to their KubeletConfiguration fields here and nowhere else: each flag becomes a field of an
 * overlay laid over the --config file (or the defaults), and the configuration's errors, which
 * name fields, are told back with the flag the user typed.
 */
#ifndef NODECM_CLI_KUBELET_FLAGS_H
#define NODECM_CLI_KUBELET_FLAGS_H

#include <getopt.h>
#include <stdbool.h>
#include <nodecm/buf.h>
#include <nodecm/error.h>
#include <nodecm/kubelet-version.h>
#include <nodecm/memorymanager.h>
#include <nodecm/node-config.h>

#define CLI_KUBELET_FLAG(name, val)                                                                \
        {                                                                                          \
                name, required_argument, NULL, val                                                 \
        }

/*
 * The getopt_long() entries of the flags, all returning VAL; the command passes the matched
 * entry's name (opts[idx].name) and optarg to cli_kubelet_flag(). "config" is the kubelet's
 * --config FILE.
 */
#define CLI_KUBELET_FLAG_OPTIONS(val)                                                              \
        CLI_KUBELET_FLAG("config", val), CLI_KUBELET_FLAG("config-decoding", val),                 \
                        CLI_KUBELET_FLAG("kube-reserved", val),                                    \
                        CLI_KUBELET_FLAG("system-reserved", val),                                  \
                        CLI_KUBELET_FLAG("eviction-hard", val),                                    \
                        CLI_KUBELET_FLAG("enforce-node-allocatable", val),                         \
                        CLI_KUBELET_FLAG("kube-reserved-cgroup", val),                             \
                        CLI_KUBELET_FLAG("system-reserved-cgroup", val),                           \
                        CLI_KUBELET_FLAG("cpu-manager-policy", val),                               \
                        CLI_KUBELET_FLAG("reserved-cpus", val),                                    \
                        CLI_KUBELET_FLAG("topology-manager-policy", val),                          \
                        CLI_KUBELET_FLAG("topology-manager-scope", val),                           \
                        CLI_KUBELET_FLAG("cgroup-root", val),                                      \
                        CLI_KUBELET_FLAG("cgroup-driver", val), CLI_KUBELET_FLAG("driver", val),   \
                        CLI_KUBELET_FLAG("cgroups-per-qos", val),                                  \
                        CLI_KUBELET_FLAG("cpu-cfs-quota", val),                                    \
                        CLI_KUBELET_FLAG("cpu-cfs-quota-period", val),                             \
                        CLI_KUBELET_FLAG("pod-pids-limit", val),                                   \
                        CLI_KUBELET_FLAG("feature-gates", val),                                    \
                        CLI_KUBELET_FLAG("memory-qos", val),                                       \
                        CLI_KUBELET_FLAG("memory-manager-policy", val),                            \
                        CLI_KUBELET_FLAG("reserved-memory", val),                                  \
                        CLI_KUBELET_FLAG("kubelet-version", val),                                  \
                        CLI_KUBELET_FLAG("root-dir", val), CLI_KUBELET_FLAG("enforce", val)

/* The help lines of those flags, for a command's usage. */
#define CLI_KUBELET_FLAGS_HELP                                                                     \
        "Kubelet settings (KubeletConfiguration; flags override the file):\n"                      \
        "  --config FILE             a kubelet configuration file (YAML or JSON)\n"                \
        "  --config-decoding lenient|strict\n"                                                     \
        "                            lenient (default): read FILE as the kubelet does, a field\n"  \
        "                            it does not know a warning; strict: refuse it\n"              \
        "  --cpu-manager-policy none|static, --reserved-cpus LIST,\n"                              \
        "  --topology-manager-policy P, --topology-manager-scope container|pod\n"                  \
        "  --kube-reserved LIST, --system-reserved LIST (cpu=500m,memory=1Gi)\n"                   \
        "  --eviction-hard LIST      memory.available<100Mi,... ('' for none)\n"                   \
        "  --enforce-node-allocatable LIST, --kube-reserved-cgroup NAME,\n"                        \
        "  --system-reserved-cgroup NAME\n"                                                        \
        "  --cgroup-root NAME, --cgroup-driver cgroupfs|systemd (alias --driver),\n"               \
        "  --cgroups-per-qos BOOL\n"                                                               \
        "  --cpu-cfs-quota BOOL      enforce CPU limits with CFS quota (default true)\n"           \
        "  --cpu-cfs-quota-period D  1ms..1s (another value than 100ms implies the\n"              \
        "                            CustomCPUCFSQuotaPeriod feature gate)\n"                      \
        "  --pod-pids-limit N        pids.max of pod cgroups (default -1: unset)\n"                \
        "  --memory-qos none|tiered  memoryReservationPolicy None or TieredReservation\n"          \
        "  --memory-manager-policy None|Static, --reserved-memory 0:memory=1Gi[;1:...]\n"          \
        "  --feature-gates LIST      K=BOOL,...\n"                                                 \
        "  --kubelet-version X.Y     the kubelet release to reproduce (default: the newest\n"      \
        "                            released, 1." NCM_KUBELET_MINOR_STR(                          \
                        NCM_KUBELET_DEFAULT_MINOR) ")\n"

typedef struct cli_kubelet_flags cli_kubelet_flags;

/* A new, empty set of flags; NULL when out of memory. */
cli_kubelet_flags *cli_kubelet_flags_new(void);
void cli_kubelet_flags_free(cli_kubelet_flags *f);
NCM_DEFINE_AUTOPTR(cli_kubelet_flags, cli_kubelet_flags_free)

/*
 * Take flag NAME (without "--") with VALUE. Returns 0, or prints a usage error for CMD and
 * returns 2 (a value the flag syntax refuses: a malformed pair, a bad boolean).
 */
int cli_kubelet_flag(cli_kubelet_flags *f, const char *cmd, const char *name, const char *value);

/* Was flag NAME (a field's flag) given? */
bool cli_kubelet_flag_given(const cli_kubelet_flags *f, const char *name);

/*
 * The configuration: the --config file (or the defaults) with the flags laid over it. On
 * error prints it (a field that came from a flag is named by that flag) and returns the exit
 * status; 0 with *RET set.
 */
int cli_kubelet_config(const cli_kubelet_flags *f, ncm_node_config **ret);

/* Print C's warnings on stderr, one line each: "nodecm: warning: FILE: ..." (FILE may be
 * NULL). */
void cli_config_warnings(const ncm_node_config *c, const char *file);

/*
 * A --capacity LIST (cpu=4,memory=16Gi,...): added to L (a repeated flag adds, as the kubelet's
 * map flags do). 0, or a usage error for CMD printed and 2.
 */
int cli_capacity_option(ncm_resource_list *l, const char *cmd, const char *val);

#endif
