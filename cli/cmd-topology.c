/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm topology [SOURCE] [--json]: the machine as the CPU and topology managers see it.
 * The output is built in memory and written once, so an error leaves stdout empty.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <nodecm/topology.h>
#include "cli.h"
#include "source.h"

static void usage(FILE *f)
{
        fputs("Usage: nodecm topology [SOURCE] [--json] [--no-pci]\n\n"
              "Show the CPUs, cores, sockets, NUMA nodes and uncore (L3) caches of a machine with\n"
              "the kubelet's meaning of each id, as a tree (socket, NUMA node, uncore cache, "
              "core,\n"
              "CPU threads) followed by the totals, then its PCI devices by locality (NUMA node\n"
              "and local CPUs as the kernel reports them; PCI root, bridges, devices).\n\n"
              "  --json             print nodecm topology JSON instead (read back by --topology);\n"
              "                     its \"pci\" lists the PCI devices\n"
              "  --no-pci           leave the PCI devices out (the CPU table only, as the kubelet\n"
              "                     sees it)\n"
              "  -h, --help         show this help\n\n" CLI_SOURCE_HELP
              "\nExit status: 0 done, 2 bad usage or a source that cannot be read.\n",
              f);
}

int cmd_topology(int argc, char **argv)
{
        static const struct option opts[] = {
                        CLI_SOURCE_OPTIONS,
                        {"json", no_argument, NULL, 'j'},
                        {"no-pci", no_argument, NULL, 'P'},
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        cli_source src = CLI_SOURCE_INIT;
        ncm_autoptr(ncm_topo) topo = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        bool json = false, pci = true;
        int c, r, rc;

        opterr = 0;
        optind = 1;
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                if (cli_source_option(&src, c, optarg))
                        continue;
                switch (c) {
                case 'j':
                        json = true;
                        break;
                case 'P':
                        pci = false;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case ':':
                        return cli_usage_error("topology", "option '%s' needs a value",
                                               argv[optind - 1]);
                default:
                        return cli_usage_error("topology", "unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind < argc)
                return cli_usage_error("topology", "unexpected argument '%s'", argv[optind]);
        if (cli_source_check(&src, "topology") != 0)
                return 2;
        if ((r = cli_source_load(&src, &topo, &err)) < 0)
                return cli_fail(r, &err);
        if (pci && (r = cli_source_load_pci(&src, topo, &err)) < 0)
                return cli_fail(r, &err);
        if (!pci)
                ncm_topo_set_pci(topo, NULL); /* a --topology file's too */
        if (json) {
                ncm_topo_format_json(topo, &out);
        } else {
                ncm_topo_format_tree(topo, &out);
                ncm_pci_format_tree(ncm_topo_pci(topo), &out);
        }
        rc = cli_emit_buf(&out);
        return rc;
}
