/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecmd --config FILE [--root-dir DIR]: the node agent. main() parses the command line,
 * installs the process-wide settings (SIGPIPE ignored) and hands over to the core.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "daemon.h"

#ifndef NODECM_VERSION
#define NODECM_VERSION "unknown"
#endif

static void usage(FILE *f)
{
        fputs("Usage: nodecmd --config FILE [--root-dir DIR] [OPTIONS]\n\n"
              "The nodecm node agent: the kubelet's CPU, topology and device managers as a\n"
              "daemon. It restores the node kept in DIR (the kubelet's checkpoints, validated as\n"
              "the kubelet validates them), takes DIR's lock, enforces node allocatable, and\n"
              "serves the control API on DIR/nodecm.sock (`nodecm node ... --connect`), the\n"
              "device-plugin Registration and the pod resources API, keeps every container's\n"
              "cpuset in line with the state (each cpuManagerReconcilePeriod, and at once when\n"
              "the shared pool moves) and exports Prometheus metrics. With --cri-listen it is\n"
              "also a CRI proxy that pins containers as they are created.\n\n"
              "  --config FILE        a KubeletConfiguration (YAML or JSON); its nodecmd section\n"
              "                       holds nodecmd's own settings (controlSocket,\n"
              "                       metricsAddress, logLevel, devicePluginsDirectory,\n"
              "                       devicePluginAllocateTimeout, devicePluginGracePeriod,\n"
              "                       podResourcesSocket, runtimeEndpoint, criListen;\n"
              "                       man nodecmd)\n"
              "  --root-dir DIR       the node's directory (default: the configuration's\n"
              "                       rootDirectory, else /var/lib/nodecm)\n"
              "  --log-level LEVEL    error, warn, info (default) or debug\n"
              "  --cgroup-mount DIR   the cgroup mount root (default /sys/fs/cgroup)\n"
              "  --runtime-endpoint E a CRI runtime (unix:///run/containerd/containerd.sock):\n"
              "                       cpusets go through its UpdateContainerResources, not\n"
              "                       cgroupfs (the section's runtimeEndpoint)\n"
              "  --cri-listen SOCKET  serve the CRI there, forwarding to the runtime: the\n"
              "                       kubelet's --container-runtime-endpoint (criListen)\n"
              "  --fsroot DIR | --synthetic DESC | --xml FILE | --topology FILE\n"
              "                       the machine (default: this one), as for nodecm\n"
              "  --topology-rules R   cadvisor (default) or nodecm\n"
              "  --numa-memory SPEC   the NUMA nodes' memory and hugepages, as for nodecm\n"
              "  -h, --help           show this help\n"
              "  --version            show the version\n\n"
              "Signals: SIGTERM or SIGINT stop (calls in flight finish, exit 0); SIGHUP\n"
              "re-reads FILE (fields that need a restart are refused, with a log line).\n"
              "Exit status: 0 stopped, 1 the node cannot start (its state does not fit the\n"
              "configuration, DIR is in use), 2 bad usage or configuration.\n",
              f);
}

enum {
        OPT_CONFIG = 0x100,
        OPT_ROOT_DIR,
        OPT_LOG_LEVEL,
        OPT_CGROUP_MOUNT,
        OPT_FSROOT,
        OPT_SYNTHETIC,
        OPT_XML,
        OPT_TOPOLOGY,
        OPT_RULES,
        OPT_NUMA_MEMORY,
        OPT_VERSION,
        OPT_RUNTIME_ENDPOINT,
        OPT_CRI_LISTEN,
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
        va_list ap;

        fputs("nodecmd: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputs(" (see 'nodecmd --help')\n", stderr);
        return 2;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                        {"config", required_argument, NULL, OPT_CONFIG},
                        {"root-dir", required_argument, NULL, OPT_ROOT_DIR},
                        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
                        {"cgroup-mount", required_argument, NULL, OPT_CGROUP_MOUNT},
                        {"fsroot", required_argument, NULL, OPT_FSROOT},
                        {"synthetic", required_argument, NULL, OPT_SYNTHETIC},
                        {"xml", required_argument, NULL, OPT_XML},
                        {"topology", required_argument, NULL, OPT_TOPOLOGY},
                        {"topology-rules", required_argument, NULL, OPT_RULES},
                        {"numa-memory", required_argument, NULL, OPT_NUMA_MEMORY},
                        {"help", no_argument, NULL, 'h'},
                        {"version", no_argument, NULL, OPT_VERSION},
                        {"runtime-endpoint", required_argument, NULL, OPT_RUNTIME_ENDPOINT},
                        {"cri-listen", required_argument, NULL, OPT_CRI_LISTEN},
                        {NULL, 0, NULL, 0},
        };
        nodecmd_options o = {.topo_kind = NCM_TOPO_SOURCE_FSROOT};
        ncm_error err = NCM_ERROR_INIT;
        nodecmd *d = NULL;
        int c, r, sources = 0;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                switch (c) {
                case OPT_CONFIG:
                        o.config = optarg;
                        break;
                case OPT_ROOT_DIR:
                        o.root_dir = optarg;
                        break;
                case OPT_LOG_LEVEL:
                        if (nodecmd_level_from_name(optarg) < 0)
                                return usage_error("--log-level: expected error, warn, info or "
                                                   "debug, got '%s'",
                                                   optarg);
                        o.log_level = optarg;
                        break;
                case OPT_CGROUP_MOUNT:
                        o.cgroup_mount = optarg;
                        break;
                case OPT_RUNTIME_ENDPOINT:
                        o.runtime_endpoint = optarg;
                        break;
                case OPT_CRI_LISTEN:
                        o.cri_listen = optarg;
                        break;
                case OPT_FSROOT:
                case OPT_SYNTHETIC:
                case OPT_XML:
                case OPT_TOPOLOGY:
                        o.topo_kind = c == OPT_FSROOT      ? NCM_TOPO_SOURCE_FSROOT
                                      : c == OPT_SYNTHETIC ? NCM_TOPO_SOURCE_SYNTHETIC
                                      : c == OPT_XML       ? NCM_TOPO_SOURCE_XML
                                                           : NCM_TOPO_SOURCE_JSON;
                        o.topo_arg = optarg;
                        sources++;
                        break;
                case OPT_NUMA_MEMORY:
                        o.topo_memory = optarg;
                        break;
                case OPT_RULES:
                        r = ncm_topo_rules_from_name(optarg);
                        if (r < 0)
                                return usage_error("--topology-rules: unknown rules '%s' "
                                                   "(cadvisor or nodecm)",
                                                   optarg);
                        o.topo_rules = (ncm_topo_rules)r;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case OPT_VERSION:
                        printf("nodecmd %s\n", NODECM_VERSION);
                        return 0;
                case ':':
                        return usage_error("%s: missing value", argv[optind - 1]);
                default:
                        return usage_error("unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind < argc)
                return usage_error("unexpected argument '%s'", argv[optind]);
        if (!o.config)
                return usage_error("%s", "--config FILE is required");
        if (sources > 1)
                return usage_error("%s", "give at most one topology source");

        /* every write to a socket is MSG_NOSIGNAL; this covers stderr going to a closed pipe */
        signal(SIGPIPE, SIG_IGN);
        /* one fd per client: a soft limit of 1024 would cap the clients well below what the
         * daemon bounds by itself (systemd's advice: raise the soft limit to the hard one) */
        {
                struct rlimit rl;
                if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                        rl.rlim_cur = rl.rlim_max;
                        (void)setrlimit(RLIMIT_NOFILE, &rl);
                }
        }
        r = nodecmd_new(&o, &d, &err);
        if (r < 0) {
                fprintf(stderr, "nodecmd: %s\n", err.msg[0] ? err.msg : ncm_strerror(err.code));
                nodecmd_free(d);
                /* DIR in use is a request that cannot be met now, not bad input */
                return err.code == EWOULDBLOCK
                                       ? 1
                                       : ncm_error_exit_status(err.code ? err.code : EINVAL);
        }
        r = nodecmd_run(d);
        nodecmd_log(d, NODECMD_INFO, "stopped", "exit=%d", r);
        nodecmd_free(d);
        return r;
}
