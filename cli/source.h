/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The topology-source options every subcommand that needs a machine takes (DESIGN.md):
 * --fsroot DIR, --synthetic DESC, --xml FILE, --topology FILE; none means this machine
 * (--fsroot /). At most one may be given. --topology-rules cadvisor|nodecm picks how a machine
 * is read (the kubelet's rules by default; docs/topology.md).
 *
 * Use in a command:
 *
 *     static const struct option opts[] = {
 *             CLI_SOURCE_OPTIONS,
 *             {"json", no_argument, NULL, 'j'},
 *             {NULL, 0, NULL, 0},
 *     };
 *     cli_source src = CLI_SOURCE_INIT;
 *     while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
 *             if (cli_source_option(&src, c, optarg))
 *                     continue;
 *             switch (c) { ... }
 *     }
 *     if (cli_source_check(&src, "take") != 0)
 *             return 2;                        (usage error already printed)
 *     r = cli_source_load(&src, &topo, &err);
 *     if (r < 0)
 *             return cli_fail(r, &err);        (exit 2, one line naming the file or field)
 *
 * and CLI_SOURCE_HELP in the command's --help text.
 */
#ifndef NODECM_CLI_SOURCE_H
#define NODECM_CLI_SOURCE_H

#include <getopt.h>
#include <stdbool.h>
#include <nodecm/topology.h>

/* getopt_long values of the source options; above any short option character. */
enum {
        CLI_OPT_FSROOT = 0x1000,
        CLI_OPT_SYNTHETIC,
        CLI_OPT_XML,
        CLI_OPT_TOPOLOGY,
        CLI_OPT_TOPOLOGY_RULES,
        CLI_OPT_NUMA_MEMORY,
};

/* clang-format off */
#define CLI_SOURCE_OPTIONS                                                                         \
        {"fsroot", required_argument, NULL, CLI_OPT_FSROOT},                                       \
        {"synthetic", required_argument, NULL, CLI_OPT_SYNTHETIC},                                 \
        {"xml", required_argument, NULL, CLI_OPT_XML},                                             \
        {"topology", required_argument, NULL, CLI_OPT_TOPOLOGY},                                   \
        {"topology-rules", required_argument, NULL, CLI_OPT_TOPOLOGY_RULES},                       \
        {"numa-memory", required_argument, NULL, CLI_OPT_NUMA_MEMORY}
/* clang-format on */

#define CLI_SOURCE_HELP                                                                            \
        "Topology source (at most one; default: this machine):\n"                                  \
        "  --fsroot DIR       read sysfs under DIR (DIR/sys/devices/system/...), '/' for this\n"   \
        "                     machine\n"                                                           \
        "  --synthetic DESC   hwloc synthetic description, e.g. \"package:2 numa:2 l3:1 core:8 "   \
        "pu:2\"\n"                                                                                 \
        "  --xml FILE         lstopo XML export\n"                                                 \
        "  --topology FILE    nodecm topology JSON (as printed by 'nodecm topology --json'; '-' "  \
        "is stdin)\n"                                                                              \
        "  --topology-rules R how a machine is read: cadvisor (default, the kubelet's table) or\n" \
        "                     nodecm (friendlier: keeps CPUs in no NUMA node, renumbers odd "      \
        "ids)\n"                                                                                   \
        "  --numa-memory SPEC memory per NUMA node, replacing what the source gives:\n"            \
        "                     [ID:]SIZE[,hugepages-PAGE=COUNT]...[/...], e.g. \"64Gi,\n"           \
        "                     hugepages-1Gi=8\" for every node (docs/memory-manager.md)\n"

typedef struct cli_source {
        ncm_topo_source_kind kind; /* meaningful when arg != NULL */
        const char *arg;           /* NULL: this machine */
        int given;                 /* how many source options were seen */
        const char *first;         /* option names, for the "only one" message */
        const char *second;
        ncm_topo_rules rules;  /* --topology-rules */
        const char *bad_rules; /* an unknown --topology-rules value, refused by the check */
        const char *memory;    /* --numa-memory, applied after the source (NULL: none) */
} cli_source;

#define CLI_SOURCE_INIT                                                                            \
        {                                                                                          \
                .kind = NCM_TOPO_SOURCE_FSROOT, .rules = NCM_TOPO_RULES_CADVISOR                   \
        }

/*
 * Record OPT (a getopt_long return value) with its ARG when it is a source option. Returns
 * true when it was one (the caller then moves on to the next option), false otherwise.
 */
bool cli_source_option(cli_source *src, int opt, const char *arg);

/* After option parsing: print a usage error for CMD and return 2 when more than one source
 * was given or --topology-rules is unknown; 0 otherwise. */
int cli_source_check(const cli_source *src, const char *cmd);

/*
 * Build the topology from the chosen source (this machine when none). Errors are prefixed
 * with the option ("--fsroot /x: /sys/devices/system/cpu/online: ..."). More than one source
 * is also refused here (EINVAL), for callers that skip cli_source_check().
 */
int cli_source_load(const cli_source *src, ncm_topo **ret, ncm_error *err);

/*
 * Attach the source's PCI devices to T (ncm_topo_load_pci: this machine's or --fsroot's sysfs;
 * a --topology file carries its own). Errors are prefixed as cli_source_load()'s.
 */
int cli_source_load_pci(const cli_source *src, ncm_topo *t, ncm_error *err);

/* "--fsroot DIR" etc. describing the chosen source, for messages; "this machine" for none. */
const char *cli_source_describe(const cli_source *src, char *buf, size_t size);

#endif
