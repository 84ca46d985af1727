/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm node-allocatable: capacity - kube-reserved - system-reserved - hard eviction, as the
 * kubelet reports it in the node status, and what --enforce-node-allocatable limits the
 * kubepods and reserved cgroups to (optionally as a cgroup plan).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroups.h>
#include <nodecm/fs.h>
#include "cli.h"
#include "node-flags.h"

static void usage(FILE *f)
{
        fputs("Usage: nodecm node-allocatable [OPTIONS]\n\n"
              "Node allocatable the way the kubelet computes it: for each resource, capacity\n"
              "minus kube-reserved, system-reserved and the hard eviction thresholds (memory\n"
              "also minus the hugepages), and the limits --enforce-node-allocatable puts on the\n"
              "kubepods cgroup (capacity minus the reservations, eviction not subtracted, pid\n"
              "included) and on the reserved cgroups.\n\n"
              "  --capacity LIST                 cpu=4,memory=16Gi,ephemeral-storage=100Gi,\n"
              "                                  pid=4194304,hugepages-2Mi=0 (default: this\n"
              "                                  machine)\n"
              "  --kube-reserved LIST            e.g. cpu=500m,memory=1Gi (cpu, memory,\n"
              "  --system-reserved LIST          ephemeral-storage and pid only)\n"
              "  --eviction-hard LIST            e.g. memory.available<100Mi,nodefs.available<10%\n"
              "                                  (default: the kubelet's; '' for none)\n"
              "  --enforce-node-allocatable LIST pods, kube-reserved, system-reserved,\n"
              "                                  kube-reserved-compressible,\n"
              "                                  system-reserved-compressible or none\n"
              "                                  (default pods)\n"
              "  --kube-reserved-cgroup NAME     the existing cgroups the reservations are\n"
              "  --system-reserved-cgroup NAME   enforced on\n"
              "  --cpu-manager-policy none|static  none also writes all CPUs into kubepods'\n"
              "                                  cpuset (default none)\n"
              "  --plan                          print the cgroup writes of the enforcement\n"
              "  --driver, --cgroup-version, --root, --cgroup-root\n"
              "                                  as for 'nodecm cgroup plan' (with --plan)\n"
              "  --json                          one JSON object (quantities as the node status\n"
              "                                  writes them)\n"
              "  -h, --help                      show this help\n\n"
              "Exit status: 0 done, 1 a reservation exceeds capacity, 2 bad usage or input.\n",
              f);
}

enum {
        OPT_PLAN = 1000,
        OPT_JSON,
        OPT_DRIVER,
        OPT_VERSION,
        OPT_ROOT,
        OPT_CGROUP_ROOT,
        OPT_NODE,
};

static const char *const enforce_names[] = {"pods", "kube-reserved", "system-reserved",
                                            "kube-reserved-compressible",
                                            "system-reserved-compressible"};

static void put_q(ncm_buf *b, const ncm_resource_list *l, const char *name)
{
        const ncm_quantity *q = l ? ncm_resource_list_get(l, name) : NULL;
        char s[NCM_QUANTITY_STRLEN];

        ncm_buf_printf(b, "%-16s", q ? ncm_quantity_to_string(q, s) : "-");
}

static void json_list(ncm_buf *b, const char *key, const ncm_resource_list *l, bool first)
{
        if (!first)
                ncm_buf_puts(b, ", ");
        ncm_buf_printf(b, "\"%s\": {", key);
        for (size_t i = 0; l && i < l->n; i++) {
                char s[NCM_QUANTITY_STRLEN];
                if (i)
                        ncm_buf_puts(b, ", ");
                ncm_buf_json_string(b, l->items[i].name, strlen(l->items[i].name));
                ncm_buf_puts(b, ": ");
                ncm_quantity_to_string(&l->items[i].quantity, s);
                ncm_buf_json_string(b, s, strlen(s));
        }
        ncm_buf_putc(b, '}');
}

static void eviction_list(const ncm_eviction_thresholds *t, ncm_buf *b, bool json)
{
        for (size_t i = 0; i < t->n; i++) {
                const ncm_eviction_threshold *e = &t->items[i];
                char s[NCM_QUANTITY_STRLEN];
                if (i)
                        ncm_buf_puts(b, json ? ", " : ",");
                if (json)
                        ncm_buf_printf(b, "\"%s\": \"", e->signal);
                else
                        ncm_buf_printf(b, "%s<", e->signal);
                if (e->is_percentage)
                        ncm_buf_printf(b, "%g%%", (double)e->percentage * 100);
                else
                        ncm_buf_puts(b, ncm_quantity_to_string(&e->quantity, s));
                if (json)
                        ncm_buf_putc(b, '"');
        }
}

static void format_text(const ncm_cgroup_node_config *c, const ncm_node_allocatable *na, ncm_buf *b)
{
        bool has_pid = ncm_resource_list_get(&c->capacity, NCM_RESOURCE_PID) != NULL;

        ncm_buf_printf(b, "%-20s%-16s%-16s%-16s%-16s%-16s%s\n", "RESOURCE", "CAPACITY",
                       "KUBE-RESERVED", "SYSTEM-RESERVED", "EVICTION-HARD", "ALLOCATABLE",
                       "KUBEPODS-LIMIT");
        for (size_t i = 0; i < c->capacity.n; i++) {
                const char *name = c->capacity.items[i].name;
                bool pid = strcmp(name, NCM_RESOURCE_PID) == 0;
                ncm_buf_printf(b, "%-20s", pid ? "pid (internal)" : name);
                put_q(b, &c->capacity, name);
                put_q(b, c->has_kube_reserved ? &c->kube_reserved : NULL, name);
                put_q(b, c->has_system_reserved ? &c->system_reserved : NULL, name);
                put_q(b, &na->eviction, name);
                put_q(b, pid ? NULL : &na->allocatable, name);
                {
                        const ncm_quantity *q = ncm_resource_list_get(&na->pods_limits, name);
                        char s[NCM_QUANTITY_STRLEN];
                        ncm_buf_puts(b, q ? ncm_quantity_to_string(q, s) : "-");
                }
                /* Trailing blanks of the fixed columns are not wanted. */
                while (b->len && b->data[b->len - 1] == ' ')
                        b->len--;
                ncm_buf_putc(b, '\n');
        }
        (void)has_pid;
        ncm_buf_puts(b, "\neviction-hard: ");
        if (c->eviction_hard.n)
                eviction_list(&c->eviction_hard, b, false);
        else
                ncm_buf_puts(b, "none");
        ncm_buf_puts(b, "\nenforce-node-allocatable: ");
        {
                bool any = false;
                for (size_t i = 0; i < NCM_ELEMENTSOF(enforce_names); i++)
                        if (c->enforce & (1u << i)) {
                                ncm_buf_printf(b, "%s%s", any ? "," : "", enforce_names[i]);
                                any = true;
                        }
                if (!any)
                        ncm_buf_puts(b, "none");
        }
        ncm_buf_putc(b, '\n');
}

static void format_json(const ncm_cgroup_node_config *c, const ncm_node_allocatable *na, ncm_buf *b)
{
        bool any = false;

        ncm_buf_putc(b, '{');
        json_list(b, "capacity", &c->capacity, true);
        json_list(b, "kubeReserved", c->has_kube_reserved ? &c->kube_reserved : NULL, false);
        json_list(b, "systemReserved", c->has_system_reserved ? &c->system_reserved : NULL, false);
        ncm_buf_puts(b, ", \"evictionHard\": {");
        eviction_list(&c->eviction_hard, b, true);
        ncm_buf_putc(b, '}');
        json_list(b, "evictionReservation", &na->eviction, false);
        json_list(b, "reservation", &na->reservation, false);
        json_list(b, "allocatable", &na->allocatable, false);
        json_list(b, "kubepodsLimits", &na->pods_limits, false);
        ncm_buf_puts(b, ", \"enforceNodeAllocatable\": [");
        for (size_t i = 0; i < NCM_ELEMENTSOF(enforce_names); i++)
                if (c->enforce & (1u << i)) {
                        ncm_buf_printf(b, "%s\"%s\"", any ? ", " : "", enforce_names[i]);
                        any = true;
                }
        ncm_buf_puts(b, "]}\n");
}

int cmd_node_allocatable(int argc, char **argv)
{
        static const struct option opts[] = {
                        {"plan", no_argument, NULL, OPT_PLAN},
                        {"json", no_argument, NULL, OPT_JSON},
                        {"driver", required_argument, NULL, OPT_DRIVER},
                        {"cgroup-version", required_argument, NULL, OPT_VERSION},
                        {"root", required_argument, NULL, OPT_ROOT},
                        {"cgroup-root", required_argument, NULL, OPT_CGROUP_ROOT},
                        CLI_NODE_FLAG_OPTIONS(OPT_NODE),
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        ncm_cgroup_node_config node;
        ncm_node_allocatable na;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        ncm_autoclose int sysfd = -1;
        const ncm_cgroup_naming_ops *naming = &ncm_cgroup_naming_cgroupfs;
        const char *root = "/sys/fs/cgroup", *cgroup_root = NULL;
        bool plan = false, json = false;
        int version = 0, c, idx = 0, r = 0, rc;

        if (ncm_cgroup_node_config_init(&node) < 0) {
                ncm_error_set(&err, ENOMEM, "out of memory");
                return cli_fail(&err);
        }
        opterr = 0;
        optind = 1;
        while (r == 0 && (c = getopt_long(argc, argv, ":h", opts, &idx)) != -1) {
                switch (c) {
                case 'h':
                        usage(stdout);
                        ncm_cgroup_node_config_done(&node);
                        return 0;
                case OPT_PLAN:
                        plan = true;
                        break;
                case OPT_JSON:
                        json = true;
                        break;
                case OPT_DRIVER:
                        naming = ncm_cgroup_naming_by_name(optarg);
                        if (!naming)
                                r = cli_usage_error("node-allocatable",
                                                    "--driver: unknown driver '%s' (cgroupfs or "
                                                    "systemd)",
                                                    optarg);
                        break;
                case OPT_VERSION:
                        if (strcmp(optarg, "1") != 0 && strcmp(optarg, "2") != 0)
                                r = cli_usage_error("node-allocatable",
                                                    "--cgroup-version: expected 1 or 2, got '%s'",
                                                    optarg);
                        else
                                version = optarg[0] - '0';
                        break;
                case OPT_ROOT:
                        root = optarg;
                        break;
                case OPT_CGROUP_ROOT:
                        cgroup_root = optarg;
                        break;
                case OPT_NODE:
                        if (ncm_cgroup_node_config_flag(&node, opts[idx].name, optarg, &err) < 0)
                                r = cli_fail(&err);
                        break;
                case ':':
                        r = cli_usage_error("node-allocatable", "option '%s' needs a value",
                                            argv[optind - 1]);
                        break;
                default:
                        r = cli_usage_error("node-allocatable", "unknown option '%s'",
                                            argv[optind - 1]);
                        break;
                }
        }
        if (r == 0 && optind < argc)
                r = cli_usage_error("node-allocatable", "unexpected argument '%s'", argv[optind]);
        if (r == 0 && plan && json)
                r = cli_usage_error("node-allocatable", "--plan and --json do not go together");
        if (r != 0) {
                ncm_cgroup_node_config_done(&node);
                return r;
        }
        sysfd = ncm_fs_open_root("/", &err);
        r = sysfd < 0 ? sysfd : ncm_cgroup_node_config_finish(&node, sysfd, &err);
        if (r >= 0)
                r = ncm_cgroup_node_allocatable(
                                &node.capacity, node.has_kube_reserved ? &node.kube_reserved : NULL,
                                node.has_system_reserved ? &node.system_reserved : NULL,
                                &node.eviction_hard, node.enforce, &na, &err);
        if (r < 0) {
                ncm_cgroup_node_config_done(&node);
                return cli_fail(&err);
        }
        if (json)
                format_json(&node, &na, &out);
        else
                format_text(&node, &na, &out);
        if (plan) {
                ncm_cgroup_layout layout;
                ncm_cgroup_manager m;
                ncm_cgroup_plan p = NCM_CGROUP_PLAN_INIT;
                ncm_cgroup_resources kp;
                ncm_autoptr(ncm_cpuset) all = NULL;
                ncm_autofree char *mountinfo = NULL;

                if (version) {
                        r = ncm_cgroup_layout_standard(&layout, version, root, &err);
                } else {
                        char real[PATH_MAX];
                        ncm_autoclose int fd = -1;
                        if (!realpath(root, real)) {
                                r = ncm_error_errno(&err, errno, "--root '%s'", root);
                        } else {
                                fd = ncm_fs_open_root(real, &err);
                                r = fd < 0 ? fd
                                           : ncm_fs_read_all(sysfd, "/proc/self/mountinfo", 1 << 22,
                                                             &mountinfo, NULL, &err);
                                if (r >= 0)
                                        r = ncm_cgroup_layout_detect(fd, real, mountinfo, sysfd,
                                                                     &layout, &err);
                        }
                }
                if (r >= 0)
                        r = ncm_cgroup_manager_init(&m, &layout, naming, cgroup_root, NULL, -1,
                                                    &err);
                if (r >= 0) {
                        r = ncm_cgroup_node_config_all_cpus(&node, sysfd, &all, &err);
                        if (r >= 0)
                                r = ncm_cgroup_config_for_resource_list(&na.pods_limits, false, all,
                                                                        &kp, &err);
                        if (r >= 0) {
                                if (ncm_cgroup_layout_version(&layout) == 2) {
                                        kp.has_memory_min = kp.has_memory_low = true;
                                        kp.memory_min = kp.memory_low = 0;
                                }
                                r = ncm_cgroup_manager_set_kubepods(&m, &kp, &err);
                                ncm_cgroup_resources_done(&kp);
                        }
                        if (r >= 0)
                                r = ncm_cgroup_manager_plan_node(
                                                &m, node.enforce, node.kube_reserved_cgroup,
                                                node.has_kube_reserved ? &node.kube_reserved : NULL,
                                                node.system_reserved_cgroup,
                                                node.has_system_reserved ? &node.system_reserved
                                                                         : NULL,
                                                all, &p, &err);
                        if (r >= 0) {
                                ncm_buf_putc(&out, '\n');
                                ncm_cgroup_plan_format(&p, &out);
                        }
                        ncm_cgroup_plan_done(&p);
                        ncm_cgroup_manager_done(&m);
                }
        }
        ncm_node_allocatable_done(&na);
        ncm_cgroup_node_config_done(&node);
        if (r < 0) {
                ncm_buf_done(&out);
                return cli_fail(&err);
        }
        rc = cli_emit_buf(&out);
        return rc;
}
