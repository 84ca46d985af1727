/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm cgroup plan|apply|show|remove|set-cpus POD: the kubelet's kubepods, QoS tier, pod
 * and container cgroups for a pod, planned, made, read back or removed (lib/node's
 * ncm_node_cgroups and the cgroup manager do the work). Output is built in memory and written
 * once.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroups.h>
#include <nodecm/node-cgroups.h>
#include <nodecm/pod.h>
#include "cli.h"
#include "kubelet-flags.h"

#define MAX_CPUS_FLAGS 64

static void usage(FILE *f)
{
        fputs("Usage: nodecm cgroup plan|apply|show|remove POD [OPTIONS]\n"
              "       nodecm cgroup set-cpus POD CONTAINER LIST [--mems LIST] [OPTIONS]\n\n"
              "The cgroups the kubelet makes for a pod: kubepods (node allocatable), the "
              "burstable\nand besteffort QoS tiers, the pod cgroup (ResourceConfigForPod) and, "
              "as the runtime\nwrites them from the CRI values, one cgroup per sidecar and app "
              "container.\nPOD is a Pod object in JSON or YAML ('-' reads standard input).\n\n"
              "  plan      print every directory and file, in order, with the values written\n"
              "  apply     create what is missing and write every value; undone on failure\n"
              "  show      read the pod's and its containers' cgroups back\n"
              "  remove    remove the pod cgroup (no processes may be left) and update the\n"
              "            burstable tier\n"
              "  set-cpus  set one container cgroup's cpuset.cpus (and cpuset.mems)\n\n"
              "  --root DIR                the cgroup mount root (default /sys/fs/cgroup)\n"
              "  --cgroup-version 1|2      plan for a typical v1 or v2 machine\n"
              "  --cpus [CONTAINER=]LIST   cpuset.cpus of a container (all without CONTAINER=)\n"
              "  --mems LIST               cpuset.mems of the containers\n"
              "  --capacity LIST           node capacity (default: this machine)\n"
              "  --pod-only                leave kubepods and the QoS tiers alone\n"
              "  --no-containers           leave the container cgroups out\n"
              "  --json                    plan as one JSON object\n"
              "  -h, --help                show this help\n\n" CLI_KUBELET_FLAGS_HELP
              "\nExit status: 0 done, 1 the cgroups are in a state nodecm will not change, the\n"
              "kernel refused a write (everything undone) or the reservations exceed capacity,\n"
              "2 bad usage or input.\n",
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
        char name[32]; /* "cgroup apply", for messages */
        cli_kubelet_flags *flags;
        ncm_node_cgroups_options o;
        ncm_resource_list capacity;
        ncm_cgroup_container_cpus cpus[MAX_CPUS_FLAGS];
        size_t n_cpus;
        ncm_cpuset *mems;
        unsigned flags_plan;
        bool json;
} args;

static void args_done(args *a)
{
        for (size_t i = 0; i < a->n_cpus; i++) {
                free((char *)a->cpus[i].container);
                ncm_cpuset_free((ncm_cpuset *)a->cpus[i].cpus);
        }
        ncm_cpuset_free(a->mems);
        ncm_resource_list_done(&a->capacity);
        cli_kubelet_flags_free(a->flags);
}

/* One option; 0, or the exit status of a usage error (-1 for --help). */
static int option(args *a, int c, const char *name, const char *val)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_cpuset *set = NULL;

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
        case OPT_CPUS: {
                const char *eq = strchr(val, '=');
                if (a->n_cpus == MAX_CPUS_FLAGS)
                        return cli_usage_error(a->name, "--cpus: at most %d times", MAX_CPUS_FLAGS);
                if (ncm_cpuset_parse_list(eq ? eq + 1 : val, &set, &err) < 0)
                        return cli_usage_error(a->name, "--cpus '%s': %s", val, err.msg);
                a->cpus[a->n_cpus].container = eq ? strndup(val, (size_t)(eq - val)) : NULL;
                a->cpus[a->n_cpus++].cpus = set;
                return 0;
        }
        case OPT_MEMS:
                ncm_cpuset_free(a->mems);
                a->mems = NULL;
                if (ncm_cpuset_parse_list(val, &a->mems, &err) < 0)
                        return cli_usage_error(a->name, "--mems '%s': %s", val, err.msg);
                return 0;
        case OPT_CAPACITY: {
                ncm_resource_list add = {0};
                if (ncm_cgroup_parse_capacity(val, &add, &err) < 0)
                        return cli_usage_error(a->name, "--capacity: %s", err.msg);
                for (size_t i = 0; i < add.n; i++)
                        (void)ncm_cgroup_resource_list_set(&a->capacity, add.items[i].name,
                                                           &add.items[i].quantity);
                ncm_resource_list_done(&add);
                a->o.capacity = &a->capacity;
                return 0;
        }
        case OPT_POD_ONLY:
                a->flags_plan |= NCM_CGROUP_PLAN_POD_ONLY;
                return 0;
        case OPT_NO_CONTAINERS:
                a->flags_plan |= NCM_CGROUP_PLAN_NO_CONTAINERS;
                return 0;
        case OPT_JSON:
                a->json = true;
                return 0;
        case OPT_KUBELET:
                return cli_kubelet_flag(a->flags, a->name, name, val);
        case 'h':
                usage(stdout);
                return -1;
        default:
                return cli_usage_error(a->name, "unknown option '%s'", name);
        }
}

static void plan_out(const args *a, const ncm_node_cgroups *cg, const ncm_pod *pod,
                     const ncm_cgroup_plan *plan, ncm_buf *out)
{
        const ncm_cgroup_manager *m = ncm_node_cgroups_manager(cg);

        if (!a->json) {
                ncm_buf_printf(out, "# pod %s/%s uid %s (%s): %s driver, %s at %s\n\n", pod->ns,
                               pod->name, pod->uid, ncm_qos_class_name(pod->qos), m->naming->name,
                               ncm_node_cgroups_mode_name(cg), m->layout.display_root);
                ncm_cgroup_plan_format(plan, out);
                return;
        }
        ncm_buf_puts(out, "{\"pod\": ");
        ncm_buf_json_string(out, pod->uid, strlen(pod->uid));
        ncm_buf_printf(out,
                       ", \"qos\": \"%s\", \"driver\": \"%s\", \"cgroupVersion\": %d, \"plan\": ",
                       ncm_qos_class_name(pod->qos), m->naming->name,
                       ncm_cgroup_layout_version(&m->layout));
        ncm_cgroup_plan_format_json(plan, out);
        /* close the wrapper after the plan's own line */
        if (out->len && out->data[out->len - 1] == '\n')
                out->len--;
        ncm_buf_puts(out, "}\n");
}

static int run(args *a, const char *pod_path, const char *container, const char *list)
{
        ncm_autoptr(ncm_node_config) cfg = NULL;
        ncm_autoptr(ncm_node_cgroups) cg = NULL;
        ncm_autoptr(ncm_pod) pod = NULL;
        ncm_autoptr(ncm_cpuset) cpus = NULL;
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        const ncm_cgroup_manager *m;
        const ncm_container *c;
        bool plan_only = strcmp(a->cmd, "plan") == 0;
        int r = cli_kubelet_config(a->flags, &cfg);

        if (r != 0)
                return r;
        if (!plan_only && a->json)
                return cli_usage_error(a->name, "--json is for plan only");
        if (!plan_only && strcmp(ncm_node_config_cgroup_driver(cfg), "cgroupfs") != 0 &&
            strcmp(a->cmd, "show") != 0)
                return cli_usage_error(a->name, "--cgroup-driver systemd: cgroups of the systemd "
                                                "driver are made by systemd over D-Bus; use "
                                                "'nodecm cgroup plan' to see them");
        if (list && !list[0])
                return cli_usage_error(a->name, "an empty cpuset for '%s' (give a LIST)",
                                       container);
        if (list && ncm_cpuset_parse_list(list, &cpus, &err) < 0)
                return cli_usage_error(a->name, "cpuset '%s': %s", list, err.msg);
        if (ncm_pod_load_file(pod_path, &pod, &err) < 0)
                return cli_fail(&err);
        a->o.act = !plan_only;
        a->o.no_allocatable = (a->flags_plan & NCM_CGROUP_PLAN_POD_ONLY) ||
                              (!plan_only && strcmp(a->cmd, "apply") != 0);
        if (ncm_node_cgroups_open(cfg, &a->o, &cg, &err) < 0)
                return cli_fail(&err);
        m = ncm_node_cgroups_manager(cg);
        if (plan_only) {
                r = ncm_cgroup_manager_plan_pod(m, pod, NULL, a->cpus, a->n_cpus, a->mems,
                                                a->flags_plan, &plan, &err);
                if (r >= 0)
                        plan_out(a, cg, pod, &plan, &out);
        } else if (strcmp(a->cmd, "apply") == 0) {
                r = ncm_cgroup_manager_apply_pod(m, pod, a->cpus, a->n_cpus, a->mems, a->flags_plan,
                                                 &err);
        } else if (strcmp(a->cmd, "show") == 0) {
                r = ncm_node_cgroups_show_pod(cg, pod, &out, &err);
        } else if (strcmp(a->cmd, "remove") == 0) {
                r = ncm_cgroup_manager_remove_pod(m, pod, &err);
        } else {
                c = ncm_pod_find_container(pod, container);
                if (!c || (c->init && !c->sidecar))
                        r = ncm_error_set(&err, EINVAL,
                                          "pod '%s' has no long-running container '%s'", pod->uid,
                                          container);
                else
                        r = ncm_cgroup_manager_set_container_cpuset(m, pod->uid, pod->qos,
                                                                    container, cpus, a->mems, &err);
        }
        if (r >= 0 && !plan_only && strcmp(a->cmd, "show") != 0) {
                ncm_autofree char *path = NULL;
                int changes = r;
                r = ncm_cgroup_manager_container_path(m, pod->uid, pod->qos, NULL, &path, &err);
                if (r >= 0)
                        ncm_buf_printf(&out, "%s: pod %s (%s) at %s: %d change(s)\n", a->cmd,
                                       pod->uid, ncm_qos_class_name(pod->qos), path, changes);
        }
        ncm_cgroup_plan_done(&plan);
        if (r < 0) {
                ncm_buf_done(&out);
                return cli_fail(&err);
        }
        return cli_emit_buf(&out);
}

int cmd_cgroup(int argc, char **argv)
{
        static const char *const cmds[] = {"plan", "apply", "show", "remove", "set-cpus"};
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
        args a = {0};
        bool known = false, set_cpus;
        size_t want;
        int c, idx = 0, r = 0;

        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
            strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return 0;
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(cmds); i++)
                known = known || strcmp(argv[1], cmds[i]) == 0;
        if (!known)
                return cli_usage_error("cgroup",
                                       "unknown subcommand '%s' (plan, apply, show, remove or "
                                       "set-cpus)",
                                       argv[1]);
        a.cmd = argv[1];
        snprintf(a.name, sizeof(a.name), "cgroup %s", a.cmd);
        a.flags = cli_kubelet_flags_new();
        if (!a.flags)
                return cli_usage_error(a.name, "out of memory");
        opterr = 0;
        optind = 1;
        while (r == 0 && (c = getopt_long(argc - 1, argv + 1, ":h", opts, &idx)) != -1)
                r = c == ':' ? cli_usage_error(a.name, "option '%s' needs a value", argv[optind])
                             : option(&a, c, c == '?' ? argv[optind] : opts[idx].name, optarg);
        set_cpus = strcmp(a.cmd, "set-cpus") == 0;
        want = set_cpus ? 3 : 1;
        if (r == 0 && (size_t)(argc - 1 - optind) != want)
                r = cli_usage_error(a.name, set_cpus ? "expected POD CONTAINER LIST"
                                                     : "expected one POD file");
        if (r == 0)
                r = run(&a, argv[1 + optind], set_cpus ? argv[2 + optind] : NULL,
                        set_cpus ? argv[3 + optind] : NULL);
        args_done(&a);
        return r < 0 ? 0 : r;
}
