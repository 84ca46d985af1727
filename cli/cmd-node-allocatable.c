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
#include <nodecm/node-cgroups.h>
#include "cli.h"
#include "kubelet-flags.h"

static void usage(FILE *f)
{
        fputs("Usage: nodecm node-allocatable [OPTIONS]\n\n"
              "Node allocatable the way the kubelet computes it: for each resource, capacity\n"
              "minus kube-reserved, system-reserved and the hard eviction thresholds (memory\n"
              "also minus the hugepages), and the limits --enforce-node-allocatable puts on the\n"
              "kubepods cgroup (capacity minus the reservations, eviction not subtracted, pid\n"
              "included) and on the reserved cgroups.\n\n"
              "  --capacity LIST           cpu=4,memory=16Gi,ephemeral-storage=100Gi,\n"
              "                            pid=4194304,hugepages-2Mi=0 (default: this machine)\n"
              "  --plan                    print the cgroup writes of the enforcement\n"
              "  --cgroup-version 1|2      plan for a typical v1 or v2 machine (with --plan)\n"
              "  --root DIR                the cgroup mount root (default /sys/fs/cgroup)\n"
              "  --json                    one JSON object (quantities as the node status\n"
              "                            writes them)\n"
              "  -h, --help                show this help\n\n" CLI_KUBELET_FLAGS_HELP
              "\nWith --cpu-manager-policy none (the default) kubepods' cpuset is every CPU.\n\n"
              "Exit status: 0 done, 1 a reservation exceeds capacity, 2 bad usage or input.\n",
              f);
}

enum {
        OPT_PLAN = 1000,
        OPT_JSON,
        OPT_VERSION,
        OPT_ROOT,
        OPT_CAPACITY,
        OPT_KUBELET,
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

static void format_text(const ncm_node_config *c, const ncm_resource_list *capacity,
                        const ncm_node_allocatable *na, ncm_buf *b)
{
        const ncm_eviction_thresholds *ev = ncm_node_config_eviction_hard(c);
        unsigned enforce = ncm_node_config_enforce(c);

        ncm_buf_printf(b, "%-20s%-16s%-16s%-16s%-16s%-16s%s\n", "RESOURCE", "CAPACITY",
                       "KUBE-RESERVED", "SYSTEM-RESERVED", "EVICTION-HARD", "ALLOCATABLE",
                       "KUBEPODS-LIMIT");
        for (size_t i = 0; i < capacity->n; i++) {
                const char *name = capacity->items[i].name;
                bool pid = strcmp(name, NCM_RESOURCE_PID) == 0;
                ncm_buf_printf(b, "%-20s", pid ? "pid (internal)" : name);
                put_q(b, capacity, name);
                put_q(b, ncm_node_config_kube_reserved(c), name);
                put_q(b, ncm_node_config_system_reserved(c), name);
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
        ncm_buf_puts(b, "\neviction-hard: ");
        if (ev->n)
                eviction_list(ev, b, false);
        else
                ncm_buf_puts(b, "none");
        ncm_buf_puts(b, "\nenforce-node-allocatable: ");
        {
                bool any = false;
                for (size_t i = 0; i < NCM_ELEMENTSOF(enforce_names); i++)
                        if (enforce & (1u << i)) {
                                ncm_buf_printf(b, "%s%s", any ? "," : "", enforce_names[i]);
                                any = true;
                        }
                if (!any)
                        ncm_buf_puts(b, "none");
        }
        ncm_buf_putc(b, '\n');
}

static void format_json(const ncm_node_config *c, const ncm_resource_list *capacity,
                        const ncm_node_allocatable *na, ncm_buf *b)
{
        bool any = false;

        ncm_buf_putc(b, '{');
        json_list(b, "capacity", capacity, true);
        json_list(b, "kubeReserved", ncm_node_config_kube_reserved(c), false);
        json_list(b, "systemReserved", ncm_node_config_system_reserved(c), false);
        ncm_buf_puts(b, ", \"evictionHard\": {");
        eviction_list(ncm_node_config_eviction_hard(c), b, true);
        ncm_buf_putc(b, '}');
        json_list(b, "evictionReservation", &na->eviction, false);
        json_list(b, "reservation", &na->reservation, false);
        json_list(b, "allocatable", &na->allocatable, false);
        json_list(b, "kubepodsLimits", &na->pods_limits, false);
        ncm_buf_puts(b, ", \"enforceNodeAllocatable\": [");
        for (size_t i = 0; i < NCM_ELEMENTSOF(enforce_names); i++)
                if (ncm_node_config_enforce(c) & (1u << i)) {
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
                        {"cgroup-version", required_argument, NULL, OPT_VERSION},
                        {"root", required_argument, NULL, OPT_ROOT},
                        {"capacity", required_argument, NULL, OPT_CAPACITY},
                        CLI_KUBELET_FLAG_OPTIONS(OPT_KUBELET),
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        ncm_autoptr(cli_kubelet_flags) flags = cli_kubelet_flags_new();
        ncm_autoptr(ncm_node_config) cfg = NULL;
        ncm_autoptr(ncm_node_cgroups) cg = NULL;
        ncm_node_cgroups_options o = {0};
        ncm_resource_list capacity = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        bool plan = false, json = false, has_capacity = false;
        int c, idx = 0, r = 0;

        if (!flags)
                return cli_fail(-ENOMEM, NULL);
        opterr = 0;
        optind = 1;
        while (r == 0 && (c = getopt_long(argc, argv, ":h", opts, &idx)) != -1) {
                switch (c) {
                case 'h':
                        usage(stdout);
                        ncm_resource_list_done(&capacity);
                        return 0;
                case OPT_PLAN:
                        plan = true;
                        break;
                case OPT_JSON:
                        json = true;
                        break;
                case OPT_VERSION:
                        if (strcmp(optarg, "1") != 0 && strcmp(optarg, "2") != 0)
                                r = cli_usage_error("node-allocatable",
                                                    "--cgroup-version: expected 1 or 2, got '%s'",
                                                    optarg);
                        else
                                o.cgroup_version = optarg[0] - '0';
                        break;
                case OPT_ROOT:
                        o.mount_root = optarg;
                        break;
                case OPT_CAPACITY:
                        r = cli_capacity_option(&capacity, "node-allocatable", optarg);
                        has_capacity = true;
                        break;
                case OPT_KUBELET:
                        r = cli_kubelet_flag(flags, "node-allocatable", opts[idx].name, optarg);
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
        if (r == 0)
                r = cli_kubelet_config(flags, &cfg);
        if (r != 0) {
                ncm_resource_list_done(&capacity);
                return r;
        }
        o.capacity = has_capacity ? &capacity : NULL;
        r = ncm_node_cgroups_open(cfg, &o, &cg, &err);
        ncm_resource_list_done(&capacity);
        if (r < 0)
                return cli_fail(r, &err);
        /* the numbers stand; that the kubelet would not start on this host is worth a word */
        if (!o.cgroup_version &&
            ncm_node_config_check_host(cfg, ncm_node_cgroups_layout(cg), &err) < 0)
                fprintf(stderr, "nodecm: warning: %s (this host)\n", err.msg);
        if (json)
                format_json(cfg, ncm_node_cgroups_capacity(cg), ncm_node_cgroups_allocatable(cg),
                            &out);
        else
                format_text(cfg, ncm_node_cgroups_capacity(cg), ncm_node_cgroups_allocatable(cg),
                            &out);
        if (plan) {
                ncm_cgroup_plan p = NCM_CGROUP_PLAN_INIT;
                r = ncm_node_cgroups_plan_node(cg, &p, &err);
                if (r >= 0) {
                        ncm_buf_putc(&out, '\n');
                        ncm_cgroup_plan_format(&p, &out);
                }
                ncm_cgroup_plan_done(&p);
                if (r < 0) {
                        ncm_buf_done(&out);
                        return cli_fail(r, &err);
                }
        }
        return cli_emit_buf(&out);
}
