/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#ifndef NODECM_VERSION
#define NODECM_VERSION "unknown"
#endif

/* One line per subcommand; each cmd-<name>.c adds its own. */
static const cli_command commands[] = {
                {"topology", "show the machine's CPUs, cores, sockets, NUMA nodes and caches",
                 cmd_topology},
                {"checkpoint", "verify, show and rewrite the kubelet's checkpoint files",
                 cmd_checkpoint},
                {"cgroup", "plan, apply and remove a pod's kubepods, QoS and pod cgroups",
                 cmd_cgroup},
                {"node-allocatable", "node allocatable from capacity and the reservation flags",
                 cmd_node_allocatable},
                {"merge", "merge topology hints as the kubelet's topology manager does", cmd_merge},
                {"take", "choose CPUs as the kubelet's CPU manager does (takeByTopology)",
                 cmd_take},
                {"hints", "the CPU manager's NUMA topology hints for a request", cmd_hints},
                {"simulate", "replay pods on a simulated node: CPUs, NUMA nodes, and why",
                 cmd_simulate},
                {"node", "a node kept in a directory: init, admit, remove, status, reconcile",
                 cmd_node},
                {"oci-hook", "an OCI runtime hook: pin a container at createRuntime, release it",
                 cmd_oci_hook},
                {"devices", "a running nodecmd's device plugin resources, devices and holders",
                 cmd_devices},
                {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
        fprintf(f, "Usage: nodecm COMMAND [OPTIONS]...\n\n"
                   "Kubelet-exact CPU, topology, device and cgroup decisions for a Linux node.\n\n"
                   "Commands:\n");
        for (const cli_command *c = commands; c->name; c++)
                fprintf(f, "  %-18s %s\n", c->name, c->summary);
        fprintf(f, "\nRun 'nodecm COMMAND --help' for a command's options.\n"
                   "Exit status: 0 done, 1 the request cannot be met, 2 bad usage or input, 3 the\n"
                   "environment failed (full or read-only disk, I/O error, no daemon answers):\n"
                   "retrying may succeed.\n");
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
            strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return 0;
        }
        if (strcmp(argv[1], "--version") == 0) {
                printf("nodecm %s\n", NODECM_VERSION);
                return 0;
        }
        for (const cli_command *c = commands; c->name; c++)
                if (strcmp(argv[1], c->name) == 0)
                        return c->run(argc - 1, argv + 1);
        fprintf(stderr, "nodecm: unknown command '%s' (see 'nodecm --help')\n", argv[1]);
        return 2;
}
