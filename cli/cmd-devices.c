/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm devices --connect SOCKET [--json]: the device plugin resources of a running nodecmd,
 * their plugins, devices, health, NUMA nodes and who holds each device. One control API call
 * (ListDevices); the daemon writes the output (lib/devicemanager's inventory), this prints it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/ctl.h>
#include "cli.h"

static void usage(FILE *f)
{
        fputs("Usage: nodecm devices --connect SOCKET [--json] [--locations] [--timeout "
              "SECONDS]\n\n"
              "The device plugin resources of the nodecmd serving SOCKET (its DIR/nodecm.sock):\n"
              "for each resource its plugin (running; stopped, with the time left before the\n"
              "resource is removed unless the plugin registers again; none), what the plugin\n"
              "asks for (PreStartContainer, GetPreferredAllocation), capacity, allocatable and\n"
              "allocated counts; for each device its health, NUMA nodes and the pod/container\n"
              "holding it.\n\n"
              "  --connect SOCKET    the daemon's control socket (required)\n"
              "  --json              one JSON object: {\"resources\": [{\"resource\", "
              "\"endpoint\",\n"
              "                      \"options\", \"capacity\", \"allocatable\", \"allocated\",\n"
              "                      \"devices\": [{\"id\", \"health\", \"healthy\", \"numa\",\n"
              "                      \"allocated\", \"pod\", \"container\"}]}]}\n"
              "  --locations         also where each device is: its PCI functions, NUMA nodes and\n"
              "                      local CPUs, and how nodecm found them (device ids, device\n"
              "                      nodes, CDI specs, devicePCI), for the plugins' devices and\n"
              "                      the CDI devices of the machine (shown anyway when the\n"
              "                      daemon's configuration uses device locality); with --json\n"
              "                      a \"locations\" list: [{\"device\", \"located\", \"how\",\n"
              "                      \"pci\", \"numa\", \"local_cpus\"}]\n"
              "  --timeout SECONDS   how long to wait for an answer (default 30; 0 for ever)\n"
              "  -h, --help          show this help\n\n"
              "Exit status: 0 done, 2 bad usage or the daemon cannot be reached.\n",
              f);
}

int cmd_devices(int argc, char **argv)
{
        static const struct option opts[] = {
                        {"connect", required_argument, NULL, 'c'},
                        {"json", no_argument, NULL, 'j'},
                        {"locations", no_argument, NULL, 'l'},
                        {"timeout", required_argument, NULL, 't'},
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        const char *connect = NULL;
        unsigned long timeout_s = 30;
        bool json = false;
        ncm_ctl_request q = {0};
        ncm_buf req = NCM_BUF_INIT, reply = NCM_BUF_INIT, out = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        int c, r;

        opterr = 0;
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'c':
                        connect = optarg;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'l':
                        q.locations = true;
                        break;
                case 't': {
                        char *end;
                        timeout_s = strtoul(optarg, &end, 10);
                        if (!optarg[0] || *end || timeout_s > 86400)
                                return cli_usage_error("devices",
                                                       "--timeout: expected seconds (0 to 86400), "
                                                       "got '%s'",
                                                       optarg);
                        break;
                }
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        return cli_usage_error("devices", "unknown or incomplete option '%s'",
                                               argv[optind - 1]);
                }
        }
        if (optind < argc)
                return cli_usage_error("devices", "unexpected argument '%s'", argv[optind]);
        if (!connect)
                return cli_usage_error("devices", "--connect SOCKET is required (a running "
                                                  "nodecmd's DIR/nodecm.sock)");
        q.format = json ? NCM_CTL_FORMAT_JSON : NCM_CTL_FORMAT_TEXT;
        r = ncm_ctl_request_pack(NCM_CTL_LIST_DEVICES, &q, &req);
        if (r >= 0)
                r = ncm_ctl_call(connect, NCM_CTL_LIST_DEVICES, (const uint8_t *)req.data, req.len,
                                 (uint32_t)timeout_s * 1000u, &reply, &err);
        if (r >= 0)
                r = ncm_ctl_reply_output(NCM_CTL_LIST_DEVICES, (const uint8_t *)reply.data,
                                         reply.len, &out, &err);
        ncm_buf_done(&req);
        ncm_buf_done(&reply);
        if (r < 0) {
                ncm_buf_done(&out);
                return cli_fail(r, &err);
        }
        return cli_emit_buf(&out);
}
