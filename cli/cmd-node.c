/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm node init|admit|remove|status|reconcile --root-dir DIR: a node kept in a directory,
 * driven from the shell one command at a time (lib/node's ncm_node_dir does the work: the lock,
 * the kubelet's start, persistence, the enforcer). Output is built in memory and written once.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/enforcer.h>
#include <nodecm/node.h>
#include "cli.h"
#include "kubelet-flags.h"
#include "source.h"

static void usage(FILE *f)
{
        fputs("Usage: nodecm node init [OPTIONS]\n"
              "       nodecm node admit POD [--explain] [OPTIONS]\n"
              "       nodecm node remove POD_UID [CONTAINER] [OPTIONS]\n"
              "       nodecm node status [OPTIONS]\n"
              "       nodecm node reconcile [OPTIONS]\n\n"
              "A node whose state lives in --root-dir DIR, as the kubelet's lives in its root\n"
              "directory: cpu_manager_state and kubelet_internal_checkpoint (the kubelet's\n"
              "format, 0600), nodecm_pods (the pods it holds) and nodecm.lock. Every command\n"
              "takes the lock (a second one waits), restores and validates the state as the\n"
              "kubelet does at start, acts, persists and enforces, all or nothing.\n\n"
              "  init       create DIR and a fresh state (or validate the one there) and enforce\n"
              "             node allocatable and the QoS tiers\n"
              "  admit      admit POD (JSON or YAML, '-' for stdin): its containers' CPUs, NUMA\n"
              "             nodes and devices; the pod and container cgroups and every shared\n"
              "             container's cpuset follow\n"
              "  remove     release a pod (or one of its containers) and its cgroups\n"
              "  status     the CPU map: who holds each CPU, the shared pool, reserved CPUs\n"
              "  reconcile  write every container's cpuset again from the state\n\n"
              "  --root-dir DIR            the node's directory (default: the configuration's\n"
              "                            rootDirectory, else /var/lib/nodecm)\n"
              "  --enforce cgroupfs|plan|none  what the decisions become (default: the\n"
              "                            configuration's enforcement, else cgroupfs); plan\n"
              "                            prints the cgroup writes instead\n"
              "  --root DIR                the cgroup mount root (default /sys/fs/cgroup)\n"
              "  --cgroup-version 1|2      a typical v1 or v2 layout at --root (plan, tests)\n"
              "  --capacity LIST           node capacity (default: this machine)\n"
              "  --no-wait                 fail instead of waiting for another command's lock\n"
              "  --explain                 admit: the hints, the merge and the allocator's steps\n"
              "  --json                    one JSON line (admit: as simulate's admit line;\n"
              "                            status: the state line plus the CPU map and pods)\n"
              "  -h, --help                show this help\n\n" CLI_KUBELET_FLAGS_HELP
              "\n" CLI_SOURCE_HELP
              "\nExit status: 0 done, 1 refused (the kubelet's reason on stderr), the state does\n"
              "not fit the configuration, or the kernel refused a write (everything undone), 2\n"
              "bad usage or input.\n",
              f);
}

enum {
        OPT_ROOT = 2000,
        OPT_VERSION,
        OPT_CAPACITY,
        OPT_NO_WAIT,
        OPT_EXPLAIN,
        OPT_JSON,
        OPT_KUBELET
};

typedef struct args {
        const char *cmd;
        const char *name;
        cli_kubelet_flags *flags;
        cli_source src;
        ncm_enforcer_cgroup_options eo;
        ncm_resource_list capacity;
        bool no_wait, explain, json;
} args;

static int option(void *ud, int c, const char *name, const char *val)
{
        args *a = ud;

        if (cli_source_option(&a->src, c, val))
                return 0;
        switch (c) {
        case OPT_ROOT:
                a->eo.mount_root = val;
                return 0;
        case OPT_VERSION:
                if (strcmp(val, "1") != 0 && strcmp(val, "2") != 0)
                        return cli_usage_error(a->name,
                                               "--cgroup-version: expected 1 or 2, got '%s'", val);
                a->eo.cgroup_version = val[0] - '0';
                return 0;
        case OPT_CAPACITY:
                a->eo.capacity = &a->capacity;
                return cli_capacity_option(&a->capacity, a->name, val);
        case OPT_NO_WAIT:
                a->no_wait = true;
                return 0;
        case OPT_EXPLAIN:
                a->explain = true;
                return 0;
        case OPT_JSON:
                a->json = true;
                return 0;
        case OPT_KUBELET:
                return cli_kubelet_flag(a->flags, a->name, name, val);
        default:
                return 0;
        }
}

static int make_enforcer(args *a, const ncm_node_config *cfg, ncm_enforcer **ret, ncm_error *err)
{
        const char *kind = ncm_node_config_enforcement(cfg);

        if (strcmp(a->cmd, "status") == 0 || strcmp(kind, "none") == 0)
                return ncm_enforcer_none_new(ret, err);
        if (strcmp(kind, "plan") == 0)
                return ncm_enforcer_plan_new(&a->eo, ret, err);
        return ncm_enforcer_cgroupfs_new(&a->eo, ret, err);
}

/* The command's own work on the opened node. */
static int act(args *a, ncm_node *n, const char *const *pos, ncm_buf *out, ncm_error *err)
{
        if (strcmp(a->cmd, "admit") == 0) {
                ncm_autoptr(ncm_pod) pod = NULL;
                ncm_autoptr(ncm_node_admission) adm = NULL;
                int r = ncm_pod_load_file(pos[0], &pod, err);
                if (r >= 0)
                        r = ncm_node_admit(n, pod, a->explain ? NCM_NODE_EXPLAIN : 0, &adm, err);
                if (r < 0)
                        return r;
                if (a->json)
                        ncm_node_format_admission_json(out, -1, pod, adm, a->explain);
                else
                        ncm_node_format_admission_text(out, -1, pod, adm, a->explain);
                if (!adm->admitted)
                        return ncm_error_set(err, NCM_E_ADMISSION, "%s: %s", adm->reason,
                                             adm->message);
                return 0;
        }
        if (strcmp(a->cmd, "remove") == 0) {
                ncm_autoptr(ncm_cpuset) rel = ncm_cpuset_new();
                int r = !rel     ? ncm_error_set(err, ENOMEM, "out of memory")
                        : pos[1] ? ncm_node_remove_container(n, pos[0], pos[1], rel, err)
                                 : ncm_node_remove_pod(n, pos[0], rel, err);
                if (r < 0)
                        return r;
                ncm_buf_printf(out, "{\"op\": \"%s\", \"pod\": ", pos[1] ? "remove" : "removePod");
                ncm_buf_json_string(out, pos[0], strlen(pos[0]));
                if (pos[1]) {
                        ncm_buf_puts(out, ", \"container\": ");
                        ncm_buf_json_string(out, pos[1], strlen(pos[1]));
                }
                ncm_buf_printf(out, ", \"removed\": %s, \"released\": \"", r ? "true" : "false");
                ncm_cpuset_format_list_buf(rel, out);
                ncm_buf_puts(out, "\"}\n");
                return 0;
        }
        if (strcmp(a->cmd, "status") == 0) {
                if (a->json) {
                        ncm_node_format_status_json(n, out);
                        return 0;
                }
                return ncm_node_format_cpu_map(n, out) < 0
                                       ? ncm_error_set(err, ENOMEM, "out of memory")
                                       : 0;
        }
        if (strcmp(a->cmd, "reconcile") == 0)
                return ncm_node_reconcile(n, err);
        return 0;
}

static int run(args *a, const char *const *pos)
{
        ncm_autoptr(ncm_node_config) cfg = NULL;
        ncm_autoptr(ncm_topo) topo = NULL;
        ncm_autoptr(ncm_enforcer) e = NULL;
        ncm_autoptr(ncm_node_dir) d = NULL;
        ncm_node_dir_options o = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        const char *dir;
        const ncm_cgroup_plan *plan;
        int r = cli_kubelet_config(a->flags, &cfg);

        if (r != 0)
                return r;
        dir = ncm_node_config_root_dir(cfg)[0] ? ncm_node_config_root_dir(cfg) : "/var/lib/nodecm";
        if ((r = cli_source_load(&a->src, &topo, &err)) < 0 ||
            (r = make_enforcer(a, cfg, &e, &err)) < 0)
                return cli_fail(r, &err);
        o.enforcer = e;
        o.flags = (a->no_wait ? NCM_NODE_DIR_NOWAIT : 0) |
                  (strcmp(a->cmd, "init") == 0 ? NCM_NODE_DIR_INIT : 0) |
                  (strcmp(a->cmd, "reconcile") == 0 ? NCM_NODE_DIR_START : 0);
        r = ncm_node_dir_open(dir, topo, cfg, &o, &d, &err);
        if (r >= 0)
                r = act(a, ncm_node_dir_node(d), pos, &out, &err);
        if (r >= 0 && (strcmp(a->cmd, "init") == 0 || strcmp(a->cmd, "reconcile") == 0))
                ncm_buf_printf(&out, "%s: node in %s (%s enforcer)\n", a->cmd, dir,
                               ncm_enforcer_name(e));
        plan = ncm_enforcer_plan_get(e);
        if (plan && plan->n_steps) {
                /* what the plan enforcer recorded: to stderr when stdout is JSON */
                ncm_buf p = NCM_BUF_INIT;
                ncm_cgroup_plan_format(plan, &p);
                if (a->json)
                        fputs(p.data ? p.data : "", stderr);
                else
                        ncm_buf_printf(&out, "\n%s", p.data ? p.data : "");
                ncm_buf_done(&p);
        }
        if (r < 0 && err.code == NCM_E_ADMISSION) {
                int rc = cli_emit_buf(&out);
                return rc ? rc : cli_fail(r, &err);
        }
        if (r < 0) {
                ncm_buf_done(&out);
                return cli_fail(r, &err);
        }
        return cli_emit_buf(&out);
}

int cmd_node(int argc, char **argv)
{
        static const cli_sub subs[] = {
                        {"init", 0, 0, "no argument"},           {"admit", 1, 1, "one POD file"},
                        {"remove", 1, 2, "POD_UID [CONTAINER]"}, {"status", 0, 0, "no argument"},
                        {"reconcile", 0, 0, "no argument"},
        };
        static const struct option opts[] = {
                        CLI_SOURCE_OPTIONS,
                        {"root", required_argument, NULL, OPT_ROOT},
                        {"cgroup-version", required_argument, NULL, OPT_VERSION},
                        {"capacity", required_argument, NULL, OPT_CAPACITY},
                        {"no-wait", no_argument, NULL, OPT_NO_WAIT},
                        {"explain", no_argument, NULL, OPT_EXPLAIN},
                        {"json", no_argument, NULL, OPT_JSON},
                        CLI_KUBELET_FLAG_OPTIONS(OPT_KUBELET),
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        args a = {.src = CLI_SOURCE_INIT};
        cli_parsed p;
        int r;

        a.flags = cli_kubelet_flags_new();
        a.name = p.name;
        r = !a.flags ? cli_usage_error("node", "out of memory")
                     : cli_subcommand(argc, argv, "node", subs, NCM_ELEMENTSOF(subs), opts, option,
                                      &a, usage, &p);
        if (r == 0) {
                a.cmd = subs[p.sub].name;
                if (a.explain && strcmp(a.cmd, "admit") != 0)
                        r = cli_usage_error(a.name, "--explain is for admit only");
        }
        if (r == 0)
                r = cli_source_check(&a.src, a.name);
        if (r == 0)
                r = run(&a, p.pos);
        ncm_resource_list_done(&a.capacity);
        cli_kubelet_flags_free(a.flags);
        return r < 0 ? 0 : r;
}
