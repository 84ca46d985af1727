/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's node allocatable flags, taken by both 'cgroup' and 'node-allocatable'. One table
 * so that a flag added to ncm_cgroup_node_config_flag() reaches both commands at once.
 */
#ifndef NODECM_CLI_NODE_FLAGS_H
#define NODECM_CLI_NODE_FLAGS_H

#include <getopt.h>

#define CLI_NODE_FLAG(name, val)                                                                   \
        {                                                                                          \
                name, required_argument, NULL, val                                                 \
        }

/*
 * The getopt_long() entries of the node flags, all returning VAL: the command passes the matched
 * entry's name (opts[idx].name) and optarg to ncm_cgroup_node_config_flag(), which knows the
 * flags by these names. The help texts stay with each command, which words them differently.
 */
#define CLI_NODE_FLAG_OPTIONS(val)                                                                 \
        CLI_NODE_FLAG("capacity", val), CLI_NODE_FLAG("kube-reserved", val),                       \
                        CLI_NODE_FLAG("system-reserved", val),                                     \
                        CLI_NODE_FLAG("eviction-hard", val),                                       \
                        CLI_NODE_FLAG("enforce-node-allocatable", val),                            \
                        CLI_NODE_FLAG("kube-reserved-cgroup", val),                                \
                        CLI_NODE_FLAG("system-reserved-cgroup", val),                              \
                        CLI_NODE_FLAG("cpu-manager-policy", val)

#endif
