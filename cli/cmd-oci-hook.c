/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm oci-hook: an OCI runtime hook (createRuntime or prestart, and poststop). It reads the
 * container state on standard input and hands it to lib/oci, which does the work; this file
 * only parses options and prints.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodecm/oci.h>
#include "cli.h"
#include "kubelet-flags.h"
#include "source.h"

#define STATE_MAX (1u << 20)

static void usage(FILE *f)
{
        fputs("Usage: nodecm oci-hook [--stage createRuntime|prestart|poststop|reconcile] "
              "[OPTIONS]\n\n"
              "An OCI runtime hook (runc, crun, podman): the container's state on standard\n"
              "input, as the runtime gives it. At createRuntime (or prestart) a container that\n"
              "is nodecm's is admitted on the node kept in the root directory, as the kubelet's\n"
              "CPU and topology managers would admit its pod, and its cpuset (CPUs and their\n"
              "NUMA nodes) is written into its cgroup before its first instruction; every other\n"
              "shared container the hook placed follows the shared pool. At poststop it is\n"
              "released. A container is nodecm's when its annotations say nodecm.io/managed\n"
              "\"true\" or give a pod UID (nodecm.io/pod-uid, io.kubernetes.pod.uid,\n"
              "io.kubernetes.cri.sandbox-uid); any other one is kept on the shared pool (no\n"
              "stranger on an exclusive CPU) unless it says nodecm.io/managed \"false\" or\n"
              "--no-confine is given. docs/runtimes.md lists the annotations; CRI-O's\n"
              "cpu-load-balancing, cpu-quota and irq-load-balancing annotations are honoured\n"
              "(docs/isolation.md).\n\n"
              "  --stage S                 createRuntime, prestart or poststop (default: from\n"
              "                            the state's status: \"stopped\" is poststop); or\n"
              "                            reconcile (no state: the node the hooks keep gets\n"
              "                            its cpusets, knobs and interrupts back; a timer)\n"
              "  --root-dir DIR            the node's directory (default: the configuration's\n"
              "                            rootDirectory, else /var/lib/nodecm)\n"
              "  --cgroup-mount DIR        the cgroup mount root (default /sys/fs/cgroup)\n"
              "  --cgroup-version 1|2      a typical v1 or v2 layout at --cgroup-mount (tests)\n"
              "  --proc DIR                where /proc is (default /; tests)\n"
              "  --machine-root DIR        the machine's root for /proc/irq and irqbalance's\n"
              "                            file (default /; tests)\n"
              "  --no-confine              leave containers that are not nodecm's alone\n"
              "  --no-wait                 fail instead of waiting for the directory's lock\n"
              "  --json                    print what was done as one JSON line\n"
              "  -h, --help                show this help\n\n",
              f);
        /* apart: one literal would pass the 4095 characters C99 compilers must take */
        fputs(CLI_KUBELET_FLAGS_HELP
              "\n" CLI_SOURCE_HELP
              "\nExit status: 0 done (or not nodecm's container), 1 the admission was refused\n"
              "(the kubelet's reason on stderr; the runtime fails the container) or the kernel\n"
              "refused a write (everything undone), 2 bad usage or input,\n" CLI_EXIT_ENV,
              f);
}

enum {
        OPT_STAGE = 2000,
        OPT_MOUNT,
        OPT_VERSION,
        OPT_PROC,
        OPT_NO_WAIT,
        OPT_JSON,
        OPT_MACHINE,
        OPT_NO_CONFINE,
        OPT_KUBELET
};

static int read_stdin(char **ret, size_t *ret_len)
{
        size_t cap = 4096, len = 0;
        char *buf = malloc(cap);

        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n;
                if (len == cap) {
                        char *nb;
                        if (cap >= STATE_MAX) {
                                free(buf);
                                return -EFBIG;
                        }
                        nb = realloc(buf, cap * 2);
                        if (!nb) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = nb;
                        cap *= 2;
                }
                n = read(STDIN_FILENO, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = errno;
                        free(buf);
                        return -e;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        *ret = buf;
        *ret_len = len;
        return 0;
}

/* --stage reconcile: the node the hooks keep, reconciled (a timer runs it); no state. */
static int reconcile_node(ncm_oci_hook_options *o, const cli_source *src,
                          const ncm_node_config *cfg, bool json)
{
        ncm_autoptr(ncm_topo) topo = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        unsigned knobs[NCM_KNOB_FIX_N] = {0};
        size_t stale = 0;
        int fixed = 0, r;

        o->root_dir = ncm_node_config_root_dir(cfg)[0] ? ncm_node_config_root_dir(cfg)
                                                       : "/var/lib/nodecm";
        o->cfg = cfg;
        r = cli_source_load(src, &topo, &err);
        if (r < 0)
                return cli_fail(r, &err);
        o->topo = topo;
        r = ncm_oci_reconcile(o, &fixed, knobs, &stale, &err);
        if (r < 0)
                return cli_fail(r, &err);
        if (json) {
                ncm_buf_printf(&out, "{\"stage\": \"reconcile\", \"cpusets\": %d, \"stale\": %zu",
                               fixed, stale);
                for (int k = 0; k < NCM_KNOB_FIX_N; k++)
                        ncm_buf_printf(&out, ", \"%s\": %u", ncm_knob_fix_name((ncm_knob_fix)k),
                                       knobs[k]);
                ncm_buf_puts(&out, "}\n");
        }
        return cli_emit_buf(&out);
}

int cmd_oci_hook(int argc, char **argv)
{
        static const struct option opts[] = {
                        CLI_SOURCE_OPTIONS,
                        {"stage", required_argument, NULL, OPT_STAGE},
                        {"cgroup-mount", required_argument, NULL, OPT_MOUNT},
                        {"cgroup-version", required_argument, NULL, OPT_VERSION},
                        {"proc", required_argument, NULL, OPT_PROC},
                        {"machine-root", required_argument, NULL, OPT_MACHINE},
                        {"no-confine", no_argument, NULL, OPT_NO_CONFINE},
                        {"no-wait", no_argument, NULL, OPT_NO_WAIT},
                        {"json", no_argument, NULL, OPT_JSON},
                        CLI_KUBELET_FLAG_OPTIONS(OPT_KUBELET),
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        ncm_oci_hook_options o = {0};
        cli_source src = CLI_SOURCE_INIT;
        cli_kubelet_flags *flags = cli_kubelet_flags_new();
        ncm_autoptr(ncm_node_config) cfg = NULL;
        ncm_autoptr(ncm_topo) topo = NULL;
        ncm_autofree char *state = NULL;
        ncm_oci_hook_result res = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        bool json = false, reconcile = false;
        size_t len = 0;
        int c, idx = 0, r = 0;

        if (!flags)
                return cli_usage_error("oci-hook", "out of memory");
        opterr = 0;
        optind = 1;
        while (r == 0 && (c = getopt_long(argc, argv, ":h", opts, &idx)) != -1) {
                if (cli_source_option(&src, c, optarg))
                        continue;
                switch (c) {
                case OPT_STAGE:
                        if (strcmp(optarg, "createRuntime") == 0 || strcmp(optarg, "prestart") == 0)
                                o.stage = NCM_OCI_STAGE_CREATE;
                        else if (strcmp(optarg, "poststop") == 0)
                                o.stage = NCM_OCI_STAGE_POSTSTOP;
                        else if (strcmp(optarg, "reconcile") == 0)
                                reconcile = true;
                        else
                                r = cli_usage_error("oci-hook",
                                                    "--stage: expected createRuntime, prestart, "
                                                    "poststop or reconcile, got '%s'",
                                                    optarg);
                        break;
                case OPT_MOUNT:
                        o.cgroup_root = optarg;
                        break;
                case OPT_VERSION:
                        if (strcmp(optarg, "1") != 0 && strcmp(optarg, "2") != 0)
                                r = cli_usage_error("oci-hook",
                                                    "--cgroup-version: expected 1 or 2, got '%s'",
                                                    optarg);
                        o.cgroup_version = optarg[0] - '0';
                        break;
                case OPT_PROC:
                        o.proc_root = optarg;
                        break;
                case OPT_MACHINE:
                        o.machine_root = optarg;
                        break;
                case OPT_NO_CONFINE:
                        o.no_confine = true;
                        break;
                case OPT_NO_WAIT:
                        o.no_wait = true;
                        break;
                case OPT_JSON:
                        json = true;
                        break;
                case OPT_KUBELET:
                        r = cli_kubelet_flag(flags, "oci-hook", opts[idx].name, optarg);
                        break;
                case 'h':
                        usage(stdout);
                        cli_kubelet_flags_free(flags);
                        return 0;
                case ':':
                        r = cli_usage_error("oci-hook", "option '%s' needs a value",
                                            argv[optind - 1]);
                        break;
                default:
                        r = cli_usage_error("oci-hook", "unknown option '%s'", argv[optind - 1]);
                        break;
                }
        }
        if (r == 0 && optind < argc)
                r = cli_usage_error("oci-hook", "unexpected argument '%s'", argv[optind]);
        if (r == 0)
                r = cli_source_check(&src, "oci-hook");
        if (r == 0)
                r = cli_kubelet_config(flags, &cfg);
        cli_kubelet_flags_free(flags);
        if (r != 0)
                return r;
        if (reconcile)
                return reconcile_node(&o, &src, cfg, json);
        r = read_stdin(&state, &len);
        if (r < 0)
                return cli_fail(ncm_error_set(&err, -r, "reading the state on standard input: %s",
                                              r == -EFBIG ? "larger than 1 MiB" : strerror(-r)),
                                &err);
        o.root_dir = ncm_node_config_root_dir(cfg)[0] ? ncm_node_config_root_dir(cfg)
                                                      : "/var/lib/nodecm";
        o.cfg = cfg;
        r = cli_source_load(&src, &topo, &err);
        if (r < 0)
                return cli_fail(r, &err);
        o.topo = topo;
        r = ncm_oci_hook_run(&o, state, len, &res, &err);
        if (r < 0)
                return cli_fail(r, &err);
        if (json)
                ncm_oci_hook_result_json(&res, &out);
        ncm_oci_hook_result_done(&res);
        return cli_emit_buf(&out);
}
