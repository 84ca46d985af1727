/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm cgroup plan|apply|show|remove|set-cpus POD: the kubelet's kubepods, QoS tier, pod
 * and container cgroups for a pod, planned, made, read back or removed (lib/node's
 * ncm_node_cgroups and the cgroup manager do the work; this file only parses and prints).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodecm/node-cgroups.h>
#include <nodecm/node.h>
#include "cli.h"
#include "kubelet-flags.h"

#define MAX_CPUS 64

static void options(FILE *f);

static void usage(FILE *f)
{
        fputs("Usage: nodecm cgroup plan|apply|show|remove POD [OPTIONS]\n"
              "       nodecm cgroup set-cpus POD CONTAINER LIST [OPTIONS]\n\n"
              "The cgroups the kubelet makes for a pod (POD: JSON or YAML, '-' for stdin):\n"
              "kubepods (node allocatable), the burstable and besteffort QoS tiers, the pod\n"
              "cgroup and, as the runtime writes them from the CRI values, one cgroup per sidecar\n"
              "and app container.\n\n"
              "  plan      print the cgroups' directories and files with their values\n"
              "  apply     make the cgroups and write their values (undone on failure)\n"
              "  show      read the cgroups' values back\n"
              "  remove    remove the pod's cgroups (no process may be left in them)\n"
              "  set-cpus  set one container's cpuset.cpus\n\n",
              f);
        options(f);
}

/* What every subcommand takes, and the exit statuses (its own page ends with them). */
static void options(FILE *f)
{
        fputs("  --root DIR                the cgroup mount root (default /sys/fs/cgroup)\n"
              "  --cgroup-version 1|2      plan for a typical v1 or v2 machine\n"
              "  --cpus [CONTAINER=]LIST   a container's cpuset.cpus (all without CONTAINER=);\n"
              "                            with --root-dir DIR, apply takes the cpusets of the\n"
              "                            node's state unless --cpus overrides them\n"
              "  --mems LIST               cpuset.mems of the containers\n"
              "  --capacity LIST           node capacity (default: this machine)\n"
              "  --pod-only                leave kubepods and the QoS tiers alone\n"
              "  --no-containers           leave the container cgroups out\n"
              "  --json                    plan as one JSON object\n"
              "  -h, --help                show this help\n\n" CLI_KUBELET_FLAGS_HELP
              "  --root-dir DIR            a node's directory: apply, remove and set-cpus take\n"
              "                            its lock\n"
              "\nExit status: 0 done, 1 the cgroups are in a state nodecm will not change, the\n"
              "kernel refused a write (everything undone) or the reservations exceed capacity,\n"
              "2 bad usage or input,\n" CLI_EXIT_ENV,
              f);
}

enum {
        OPT_VERSION = 1000,
        OPT_ROOT,
        OPT_CPUS,
        OPT_MEMS,
        OPT_CAPACITY,
        OPT_POD_ONLY,
        OPT_NO_CONTAINERS,
        OPT_JSON,
        OPT_KUBELET
};

typedef struct args {
        const char *cmd;
        const char *name; /* "cgroup apply", for messages */
        cli_kubelet_flags *flags;
        ncm_node_cgroups_options o;
        ncm_resource_list capacity;
        ncm_node_cpusets cpus; /* --cpus, or the node's state */
        char *names[MAX_CPUS]; /* the containers of --cpus */
        ncm_cpuset *mems;
        unsigned plan_flags;
        bool json;
} args;

/* One option; 0, or the exit status of a usage error. */
static int option(void *ud, int c, const char *name, const char *val)
{
        args *a = ud;
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpuset *set = NULL;
        const char *eq = strchr(val ? val : "", '=');

        switch (c) {
        case OPT_VERSION:
                if (strcmp(val, "1") != 0 && strcmp(val, "2") != 0)
                        return cli_usage_error(a->name,
                                               "--cgroup-version: expected 1 or 2, got '%s'", val);
                a->o.cgroup_version = val[0] - '0';
                return 0;
        case OPT_ROOT:
                a->o.mount_root = val;
                return 0;
        case OPT_CPUS:
                if (a->cpus.n == MAX_CPUS)
                        return cli_usage_error(a->name, "--cpus: at most %d times", MAX_CPUS);
                if (ncm_cpuset_parse_list(eq ? eq + 1 : val, &set, &err) < 0)
                        return cli_usage_error(a->name, "--cpus '%s': %s", val, err.msg);
                a->names[a->cpus.n] = eq ? strndup(val, (size_t)(eq - val)) : NULL;
                a->cpus.v[a->cpus.n].container = a->names[a->cpus.n];
                a->cpus.v[a->cpus.n++].cpus = set;
                return 0;
        case OPT_MEMS:
                a->mems = ncm_cpuset_free(a->mems);
                if (ncm_cpuset_parse_list(val, &a->mems, &err) < 0)
                        return cli_usage_error(a->name, "--mems '%s': %s", val, err.msg);
                return 0;
        case OPT_CAPACITY:
                a->o.capacity = &a->capacity;
                return cli_capacity_option(&a->capacity, a->name, val);
        case OPT_POD_ONLY:
                a->plan_flags |= NCM_CGROUP_PLAN_POD_ONLY;
                return 0;
        case OPT_NO_CONTAINERS:
                a->plan_flags |= NCM_CGROUP_PLAN_NO_CONTAINERS;
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

/* The command on POD with the cgroups CG; output in OUT. */
static int act(args *a, const ncm_node_cgroups *cg, const ncm_pod *pod, const char *container,
               const ncm_cpuset *cpus, ncm_buf *out, ncm_error *err)
{
        const ncm_cgroup_manager *m = ncm_node_cgroups_manager(cg);
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        ncm_autofree char *path = NULL;
        int r;

        if (strcmp(a->cmd, "show") == 0)
                return ncm_node_cgroups_show_pod(cg, pod, out, err);
        if (strcmp(a->cmd, "set-cpus") == 0)
                r = ncm_node_cgroups_set_cpus(cg, pod, container, cpus, a->mems, err);
        else if (strcmp(a->cmd, "remove") == 0)
                r = ncm_cgroup_manager_remove_pod(m, pod, err);
        else if (strcmp(a->cmd, "apply") == 0)
                r = ncm_cgroup_manager_apply_pod(m, pod, a->cpus.v, a->cpus.n, a->mems,
                                                 a->plan_flags, err);
        else if ((r = ncm_cgroup_manager_plan_pod(m, pod, NULL, a->cpus.v, a->cpus.n, a->mems,
                                                  a->plan_flags, &plan, err)) >= 0)
                ncm_node_cgroups_format_plan(cg, pod, &plan, a->json, out);
        ncm_cgroup_plan_done(&plan);
        if (r < 0 || strcmp(a->cmd, "plan") == 0)
                return r;
        if (ncm_cgroup_manager_container_path(m, pod->uid, pod->qos, NULL, &path, err) < 0)
                return -1;
        ncm_buf_printf(out, "%s: pod %s (%s) at %s: %d change(s)\n", a->cmd, pod->uid,
                       ncm_qos_class_name(pod->qos), path, r);
        return 0;
}

static int run(args *a, const char *const *pos)
{
        ncm_autoptr(ncm_node_config) cfg = NULL;
        ncm_autoptr(ncm_node_cgroups) cg = NULL;
        ncm_autoptr(ncm_pod) pod = NULL;
        ncm_autoptr(ncm_cpuset) cpus = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        bool plan = strcmp(a->cmd, "plan") == 0, show = strcmp(a->cmd, "show") == 0;
        const char *dir = NULL;
        int r = cli_kubelet_config(a->flags, &cfg), lockfd = -1;

        if (r != 0)
                return r;
        if (!plan && a->json)
                return cli_usage_error(a->name, "--json is for plan only");
        if (!plan && !show && ncm_node_config_cgroup_driver_is_systemd(cfg))
                return cli_usage_error(a->name,
                                       "--cgroup-driver systemd: its cgroups are made by "
                                       "systemd over D-Bus; 'nodecm cgroup plan' shows them");
        if (pos[2] && !pos[2][0])
                return cli_usage_error(a->name, "an empty cpuset for '%s' (give a LIST)", pos[1]);
        if (pos[2] && ncm_cpuset_parse_list(pos[2], &cpus, &err) < 0)
                return cli_usage_error(a->name, "cpuset '%s': %s", pos[2], err.msg);
        if (ncm_node_config_root_dir(cfg)[0])
                dir = ncm_node_config_root_dir(cfg);
        /* a node's cgroups change under its lock, never beside one of its commands */
        if (dir && !plan && !show && (lockfd = ncm_node_dir_lock(dir, 0, &err)) < 0)
                return cli_fail(lockfd, &err);
        a->o.act = !plan;
        /* kubepods' limits only where they are written */
        a->o.no_allocatable = (a->plan_flags & NCM_CGROUP_PLAN_POD_ONLY) ||
                              (!plan && strcmp(a->cmd, "apply") != 0);
        r = ncm_pod_load_file(pos[0], &pod, &err);
        if (r >= 0 && dir && a->cpus.n == 0 && (plan || strcmp(a->cmd, "apply") == 0)) {
                /* the CPUs the node's state gives each container */
                free(a->cpus.v);
                a->cpus.v = NULL;
                r = ncm_node_dir_pod_cpusets(dir, pod, &a->cpus, &err);
        }
        if (r >= 0)
                r = ncm_node_cgroups_open(cfg, &a->o, &cg, &err);
        if (r >= 0)
                r = act(a, cg, pod, pos[1], cpus, &out, &err);
        if (lockfd >= 0)
                close(lockfd);
        if (r < 0) {
                ncm_buf_done(&out);
                return cli_fail(r, &err);
        }
        return cli_emit_buf(&out);
}

int cmd_cgroup(int argc, char **argv)
{
        static const cli_sub subs[] = {
                        {"plan", 1, 1, "one POD file", "plan POD [--json] [OPTIONS]",
                         "Print every cgroup directory the kubelet makes for POD (JSON or YAML,\n"
                         "'-' for stdin) and every file it writes there, with its value:\n"
                         "kubepods (node allocatable), the QoS tiers, the pod cgroup and one\n"
                         "cgroup per container as the runtime writes it from the CRI values.\n"
                         "Nothing is written.\n"},
                        {"apply", 1, 1, "one POD file", "apply POD [OPTIONS]",
                         "Make the cgroups plan prints and write their values; a write the\n"
                         "kernel refuses undoes everything apply did.\n"},
                        {"show", 1, 1, "one POD file", "show POD [OPTIONS]",
                         "Read POD's cgroups back: each file plan would write, with the value it\n"
                         "holds now.\n"},
                        {"remove", 1, 1, "one POD file", "remove POD [OPTIONS]",
                         "Remove POD's cgroup and its containers' cgroups; no process may be\n"
                         "left in them.\n"},
                        {"set-cpus", 3, 3, "POD CONTAINER LIST",
                         "set-cpus POD CONTAINER LIST [OPTIONS]",
                         "Set the cpuset.cpus of POD's container CONTAINER to LIST (kubelet\n"
                         "cpuset syntax, \"0-3,8\"), as the CPU manager's reconcile does.\n"},
        };
        static const struct option opts[] = {
                        {"cgroup-version", required_argument, NULL, OPT_VERSION},
                        {"root", required_argument, NULL, OPT_ROOT},
                        {"cpus", required_argument, NULL, OPT_CPUS},
                        {"mems", required_argument, NULL, OPT_MEMS},
                        {"capacity", required_argument, NULL, OPT_CAPACITY},
                        {"pod-only", no_argument, NULL, OPT_POD_ONLY},
                        {"no-containers", no_argument, NULL, OPT_NO_CONTAINERS},
                        {"json", no_argument, NULL, OPT_JSON},
                        CLI_KUBELET_FLAG_OPTIONS(OPT_KUBELET),
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        args a = {.cpus = {calloc(MAX_CPUS, sizeof(ncm_cgroup_container_cpus)), 0}};
        cli_parsed p;
        int r;

        a.flags = cli_kubelet_flags_new();
        a.name = p.name;
        r = !a.flags || !a.cpus.v ? cli_usage_error("cgroup", "out of memory")
                                  : cli_subcommand(argc, argv, "cgroup", subs, NCM_ELEMENTSOF(subs),
                                                   opts, option, &a, usage, options, &p);
        if (r == 0) {
                a.cmd = subs[p.sub].name;
                r = run(&a, p.pos);
        }
        for (size_t i = 0; i < MAX_CPUS; i++)
                free(a.names[i]);
        ncm_node_cpusets_done(&a.cpus);
        ncm_cpuset_free(a.mems);
        ncm_resource_list_done(&a.capacity);
        cli_kubelet_flags_free(a.flags);
        return r < 0 ? 0 : r;
}
