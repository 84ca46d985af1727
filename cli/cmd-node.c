/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm node init|admit|resize|remove|status|reconcile|pods|explain --root-dir DIR: a node kept in
 * a directory, driven from the shell one command at a time (lib/node's ncm_node_dir does the work:
 * the lock, the kubelet's start, persistence, the enforcer). With --connect SOCKET the same
 * commands (and watch) go to a running nodecmd instead. Either way the command is one call of
 * the control API (lib/ctl), run in this process on the opened node or by the daemon, so the
 * output and the exit status are the same. Output is built in memory and written once.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/ctl.h>
#include <nodecm/enforcer.h>
#include <nodecm/fs.h>
#include <nodecm/node.h>
#include "cli.h"
#include "kubelet-flags.h"
#include "source.h"

static void options(FILE *f);

static void usage(FILE *f)
{
        fputs("Usage: nodecm node init [OPTIONS]\n"
              "       nodecm node admit POD [--explain] [OPTIONS]\n"
              "       nodecm node resize POD [--explain] [OPTIONS]\n"
              "       nodecm node remove POD_UID [CONTAINER] [OPTIONS]\n"
              "       nodecm node status [--json | --html FILE] [OPTIONS]\n"
              "       nodecm node reconcile [OPTIONS]\n"
              "       nodecm node pods [--json] [OPTIONS]\n"
              "       nodecm node explain POD [--json] [OPTIONS]\n"
              "       nodecm node watch --connect SOCKET\n\n"
              "A node whose state lives in --root-dir DIR, as the kubelet's lives in its root\n"
              "directory: cpu_manager_state, kubelet_internal_checkpoint and\n"
              "memory_manager_state (the kubelet's format, 0600), nodecm_pods and\n"
              "nodecm_pods_journal (the pods it holds), nodecm_config (the configuration init\n"
              "recorded) and nodecm.lock. Every command takes the lock (a second one waits),\n"
              "restores and validates the state as the kubelet does at start, acts, persists\n"
              "and enforces, all or nothing.\n\n"
              "  init       create DIR and a fresh state (or validate the one there) and enforce\n"
              "             node allocatable and the QoS tiers\n"
              "  admit      admit POD (JSON or YAML, '-' for stdin): its containers' CPUs, NUMA\n"
              "             nodes and devices; the pod and container cgroups and every shared\n"
              "             container's cpuset follow\n"
              "  resize     resize POD in place: the whole pod again (the same UID) with new\n"
              "             cpu and memory; exclusive CPUs and pinned memory move only with the\n"
              "             kubelet's gates (InPlacePodVerticalScalingExclusiveCPUs, ...Memory);\n"
              "             refused: the reason (Infeasible, Deferred, Invalid) on stderr\n"
              "  remove     release a pod (or one of its containers) and its cgroups\n"
              "  status     the CPU map: who holds each CPU, the shared pool, reserved CPUs\n"
              "  reconcile  write every container's cpuset again from the state\n"
              "  pods       the pods the node holds and their containers' CPUs\n"
              "  explain    what admitting POD would do, and why; nothing changes\n"
              "  watch      print each admission and removal of a running nodecmd as it\n"
              "             happens (one JSON line each)\n\n",
              f);
        options(f);
}

/* What every subcommand takes, and the exit statuses (its own page ends with them). */
static void options(FILE *f)
{
        fputs("  --root-dir DIR            the node's directory (default: the configuration's\n"
              "                            rootDirectory, else /var/lib/nodecm)\n"
              "  --connect SOCKET          ask the nodecmd serving SOCKET (its DIR/nodecm.sock)\n"
              "                            instead of opening the directory: the same output\n"
              "  --timeout SECONDS         --connect: how long to wait for an answer (default\n"
              "                            30; 0 waits for ever)\n"
              "  --enforce cgroupfs|plan|none  what the decisions become (default: the\n"
              "                            configuration's enforcement, else cgroupfs); plan\n"
              "                            prints the cgroup writes instead\n"
              "  --root DIR                the cgroup mount root (default /sys/fs/cgroup)\n"
              "  --cgroup-version 1|2      a typical v1 or v2 layout at --root (plan, tests)\n"
              "  --capacity LIST           node capacity (default: this machine)\n"
              "  --no-wait                 fail instead of waiting for another command's lock\n"
              "  --explain                 admit, resize: the hints, the merge and the\n"
              "                            allocator's steps (resize: why a refusal refused)\n"
              "  --json                    one JSON line (admit, resize, remove: as simulate's\n"
              "                            step; status: the state line plus the CPU map and\n"
              "                            pods)\n"
              "  --html FILE               status: write the node map to FILE, one\n"
              "                            self-contained page (docs/map.md)\n"
              "  -h, --help                show this help\n\n" CLI_KUBELET_FLAGS_HELP
              "\n" CLI_SOURCE_HELP
              "\nExit status: 0 done, 1 refused (the kubelet's reason on stderr), the state does\n"
              "not fit the configuration, or the kernel refused a write (everything undone), 2\n"
              "bad usage or input, 3 the environment failed and a retry may succeed: a full or\n"
              "read-only disk or an I/O error (nothing changed), no nodecmd at --connect, or\n"
              "one that did not answer within --timeout, the lock held with --no-wait.\n",
              f);
}

enum {
        OPT_ROOT = 2000,
        OPT_VERSION,
        OPT_CAPACITY,
        OPT_NO_WAIT,
        OPT_EXPLAIN,
        OPT_JSON,
        OPT_CONNECT,
        OPT_TIMEOUT,
        OPT_KUBELET,
        OPT_HTML
};

typedef struct args {
        const char *cmd;
        const char *name;
        cli_kubelet_flags *flags;
        cli_source src;
        ncm_enforcer_cgroup_options eo;
        ncm_resource_list capacity;
        const char *connect;
        const char *html; /* status --html FILE */
        unsigned timeout_s;
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
        case OPT_CONNECT:
                a->connect = val;
                return 0;
        case OPT_HTML:
                a->html = val;
                return 0;
        case OPT_TIMEOUT: {
                char *end;
                unsigned long v = strtoul(val, &end, 10);
                if (!val[0] || *end || v > 86400)
                        return cli_usage_error(a->name,
                                               "--timeout: expected seconds (0 to 86400), got '%s'",
                                               val);
                a->timeout_s = (unsigned)v;
                return 0;
        }
        case OPT_KUBELET:
                return cli_kubelet_flag(a->flags, a->name, name, val);
        default:
                return 0;
        }
}

/* The topology is this machine's. */
static bool source_is_here(const args *a)
{
        return !a->src.arg ||
               (a->src.kind == NCM_TOPO_SOURCE_FSROOT && strcmp(a->src.arg, "/") == 0);
}

/*
 * Node allocatable of the machine the command is given, not of this one: without --capacity, a
 * machine of another source has its own CPUs (the topology's), and, from a dump, its own
 * memory, hugepages and pid limit where the dump has them (nothing of this machine's, which
 * --synthetic used to take).
 */
static int source_capacity(args *a, const ncm_topo *topo, ncm_error *err)
{
        bool here = source_is_here(a);
        ncm_quantity cpus = ncm_quantity_from_int((int64_t)ncm_topo_num_cpus(topo),
                                                  NCM_QUANTITY_DECIMAL_SI);
        int r;

        if (a->eo.capacity || here)
                return 0;
        if (a->src.kind == NCM_TOPO_SOURCE_FSROOT) {
                ncm_autoclose int fd = ncm_fs_open_root(a->src.arg, err);
                if (fd < 0)
                        return fd;
                r = ncm_cgroup_machine_capacity(fd, a->src.arg, &a->capacity, err);
                if (r < 0)
                        return ncm_error_prefix(err, "capacity of %s", a->src.arg);
        }
        if (ncm_cgroup_resource_list_set(&a->capacity, NCM_RESOURCE_CPU, &cpus) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        a->eo.capacity = &a->capacity;
        return 0;
}

/* The commands that only look: no lock held against readers, nothing written. */
static bool read_only(const char *cmd)
{
        return strcmp(cmd, "status") == 0 || strcmp(cmd, "pods") == 0 ||
               strcmp(cmd, "explain") == 0;
}

static int make_enforcer(args *a, const ncm_node_config *cfg, ncm_enforcer **ret, ncm_error *err)
{
        const char *kind = ncm_node_config_enforcement(cfg);

        if (read_only(a->cmd) || strcmp(kind, "none") == 0)
                return ncm_enforcer_none_new(ret, err);
        if (strcmp(kind, "plan") == 0)
                return ncm_enforcer_plan_new(&a->eo, ret, err);
        return ncm_enforcer_cgroupfs_new(&a->eo, ret, err);
}

/* The control API's method for the command, and its request. */
static int request(args *a, const char *const *pos, ncm_ctl_method *ret_m, ncm_buf *req,
                   char **pod_text, ncm_error *err)
{
        ncm_ctl_request q = {0};
        ncm_ctl_method m;
        int r;

        q.format = a->json   ? NCM_CTL_FORMAT_JSON
                   : a->html ? NCM_CTL_FORMAT_HTML
                             : NCM_CTL_FORMAT_TEXT;
        if (strcmp(a->cmd, "admit") == 0 || strcmp(a->cmd, "explain") == 0 ||
            strcmp(a->cmd, "resize") == 0) {
                m = strcmp(a->cmd, "admit") == 0    ? NCM_CTL_ADMIT
                    : strcmp(a->cmd, "resize") == 0 ? NCM_CTL_RESIZE
                                                    : NCM_CTL_EXPLAIN;
                /* to a daemon, what it reads of the pod: requests are bounded */
                r = a->connect ? ncm_ctl_read_pod_compact(pos[0], pod_text, &q.pod_len, &q.source,
                                                          err)
                               : ncm_ctl_read_pod(pos[0], pod_text, &q.pod_len, &q.source, err);
                if (r < 0)
                        return r;
                q.pod = *pod_text;
                q.explain = a->explain;
        } else if (strcmp(a->cmd, "remove") == 0) {
                m = pos[1] ? NCM_CTL_REMOVE_CONTAINER : NCM_CTL_REMOVE_POD;
                q.pod_uid = pos[0];
                q.container = pos[1];
        } else if (strcmp(a->cmd, "status") == 0) {
                m = NCM_CTL_GET_STATE;
        } else if (strcmp(a->cmd, "pods") == 0) {
                m = NCM_CTL_LIST_PODS;
        } else if (strcmp(a->cmd, "reconcile") == 0) {
                m = NCM_CTL_RECONCILE;
        } else {
                return ncm_error_set(err, EINVAL, "%s: not a control API call", a->cmd);
        }
        if (ncm_ctl_request_pack(m, &q, req) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret_m = m;
        return 0;
}

/*
 * The command's own work: one control API call, on the node opened here (T) or by the daemon
 * at --connect (T NULL); its output appended to OUT.
 */
static int act(args *a, const ncm_ctl_target *t, const char *const *pos, ncm_buf *out,
               ncm_error *err)
{
        ncm_autofree char *pod_text = NULL;
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        ncm_buf req = NCM_BUF_INIT, reply = NCM_BUF_INIT;
        ncm_ctl_method m = NCM_CTL_GET_STATE;
        int r;

        if (strcmp(a->cmd, "init") == 0)
                return 0;
        r = request(a, pos, &m, &req, &pod_text, err);
        if (r >= 0 && t) {
                r = ncm_ctl_handle(t, m, (const uint8_t *)req.data, req.len, &res, err);
                if (r >= 0) {
                        reply = res.reply;
                        res.reply = (ncm_buf)NCM_BUF_INIT;
                }
        } else if (r >= 0) {
                r = ncm_ctl_call(a->connect, m, (const uint8_t *)req.data, req.len,
                                 a->timeout_s * 1000u, &reply, err);
        }
        if (r >= 0)
                r = ncm_ctl_reply_output(m, (const uint8_t *)reply.data, reply.len, out, err);
        ncm_ctl_result_done(&res);
        ncm_buf_done(&req);
        ncm_buf_done(&reply);
        return r;
}

static int print_event(const uint8_t *ev, size_t len, void *data)
{
        ncm_buf line = NCM_BUF_INIT;
        ncm_error *err = data;
        int r = ncm_ctl_event_json(ev, len, &line, err);

        if (r >= 0 && cli_emit(line.data ? line.data : "", line.len) != 0)
                r = ncm_error_set(err, EPIPE, "write to standard output: %s", strerror(EPIPE));
        ncm_buf_done(&line);
        return r < 0 ? r : 0;
}

/*
 * Print OUT and end with R: a refused admission prints what was decided before its error;
 * another error prints nothing but the error.
 */
static int finish(int r, ncm_buf *out, ncm_error *err)
{
        if (r < 0 && err->code == NCM_E_ADMISSION) {
                int rc = cli_emit_buf(out);
                return rc ? rc : cli_fail(r, err);
        }
        if (r < 0) {
                ncm_buf_done(out);
                return cli_fail(r, err);
        }
        return cli_emit_buf(out);
}

/* status --html FILE: the page goes to FILE (whole or not at all), nothing to stdout. */
static int finish_html(const args *a, int r, ncm_buf *out, ncm_error *err)
{
        if (r >= 0 && ncm_buf_failed(out))
                r = ncm_error_set(err, ENOMEM, "out of memory");
        if (r >= 0)
                r = ncm_fs_write_atomic(AT_FDCWD, a->html, out->data ? out->data : "", out->len,
                                        0644, err);
        if (r < 0 && err->code != ENOMEM)
                ncm_error_prefix(err, "--html");
        ncm_buf_done(out);
        return r < 0 ? cli_fail(r, err) : 0;
}

/* nodecm node ... --connect SOCKET: the daemon does the work. */
static int run_connected(args *a, const char *const *pos)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        int r;

        if (strcmp(a->cmd, "watch") == 0) {
                r = ncm_ctl_watch(a->connect, print_event, &err, &err);
                return r < 0 ? cli_fail(r, &err) : 0;
        }
        r = act(a, NULL, pos, &out, &err);
        return a->html ? finish_html(a, r, &out, &err) : finish(r, &out, &err);
}

static void list_cleanup(ncm_resource_list *l)
{
        ncm_resource_list_done(l);
}

static int run(args *a, const char *const *pos)
{
        ncm_autoptr(ncm_node_config) cfg = NULL;
        ncm_autoptr(ncm_topo) topo = NULL;
        ncm_autoptr(ncm_enforcer) e = NULL;
        ncm_autoptr(ncm_node_dir) d = NULL;
        ncm_autofree char *dir_owned = NULL;
        ncm_node_dir_options o = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        const char *dir;
        const ncm_cgroup_plan *plan;
        ncm_ctl_target t = {0};
        __attribute__((cleanup(list_cleanup))) ncm_resource_list machine = {0};
        int r;

        if (a->connect)
                return run_connected(a, pos);
        r = cli_kubelet_config_given(a->flags) ? cli_kubelet_config(a->flags, &cfg)
                                               : cli_kubelet_config_quiet(a->flags, &cfg);
        if (r != 0)
                return r;
        dir_owned = strdup(ncm_node_config_root_dir(cfg)[0] ? ncm_node_config_root_dir(cfg)
                                                            : "/var/lib/nodecm");
        if (!dir_owned)
                return cli_fail(-ENOMEM, NULL);
        dir = dir_owned;
        if (!cli_kubelet_config_given(a->flags)) {
                /* no --config: the one the node was initialised with, the flags over it */
                ncm_autoptr(ncm_node_config) rec = NULL;
                r = ncm_node_dir_config(dir, &rec, &err);
                if (r < 0 && r != -ENOENT)
                        return cli_fail(r, &err);
                ncm_error_clear(&err);
                if (r >= 0) {
                        cfg = ncm_node_config_free(cfg);
                        r = cli_kubelet_config_over(a->flags, rec, &cfg);
                        if (r != 0)
                                return r;
                } else {
                        cli_config_warnings(cfg, NULL); /* no record: the flags' is the one */
                }
        }
        if ((r = cli_source_load(&a->src, &topo, &err)) < 0 ||
            (r = source_capacity(a, topo, &err)) < 0 || (r = make_enforcer(a, cfg, &e, &err)) < 0)
                return cli_fail(r, &err);
        o.enforcer = e;
        /* the resource-fit admission's capacity: --capacity, else this machine's when the
         * topology is this machine's (a synthetic one has no memory to speak of) */
        o.capacity = a->eo.capacity;
        if (!o.capacity && source_is_here(a)) {
                ncm_autoclose int rootfd = ncm_fs_open_root("/", &err);
                if (rootfd < 0 ||
                    (r = ncm_cgroup_machine_capacity(rootfd, dir, &machine, &err)) < 0)
                        return cli_fail(rootfd < 0 ? rootfd : r, &err);
                o.capacity = &machine;
        }
        /* device locality reads the machine the topology came from */
        if (a->src.arg && a->src.kind == NCM_TOPO_SOURCE_FSROOT)
                o.machine_root = a->src.arg;
        o.flags = (a->no_wait ? NCM_NODE_DIR_NOWAIT : 0) |
                  (strcmp(a->cmd, "init") == 0 ? NCM_NODE_DIR_INIT : 0) |
                  (strcmp(a->cmd, "reconcile") == 0 ? NCM_NODE_DIR_START : 0) |
                  (read_only(a->cmd) ? NCM_NODE_DIR_READ_ONLY : 0);
        r = ncm_node_dir_open(dir, topo, cfg, &o, &d, &err);
        if (r >= 0) {
                t.node = ncm_node_dir_node(d);
                t.dir = dir;
                t.enforcer = ncm_enforcer_name(e);
                r = act(a, &t, pos, &out, &err);
        }
        if (r >= 0 && strcmp(a->cmd, "init") == 0)
                ncm_buf_printf(&out, "%s: node in %s (%s enforcer)\n", a->cmd, dir,
                               ncm_enforcer_name(e));
        /* what the plan enforcer recorded, the cgroups' then the machine's (CRI-O's
         * irq-load-balancing): to stderr when stdout is JSON */
        for (int i = 0; i < 2; i++) {
                ncm_buf p = NCM_BUF_INIT;
                plan = i ? ncm_enforcer_plan_machine_get(e) : ncm_enforcer_plan_get(e);
                if (!plan || !plan->n_steps)
                        continue;
                ncm_cgroup_plan_format(plan, &p);
                if (a->json)
                        fputs(p.data ? p.data : "", stderr);
                else
                        ncm_buf_printf(&out, "\n%s", p.data ? p.data : "");
                ncm_buf_done(&p);
        }
        return a->html ? finish_html(a, r, &out, &err) : finish(r, &out, &err);
}

int cmd_node(int argc, char **argv)
{
        static const cli_sub subs[] = {
                        {"init", 0, 0, "no argument", "init [OPTIONS]",
                         "Create the node's directory (mode 0700) and a fresh state, or validate\n"
                         "the one there as the kubelet does when it starts, then enforce node\n"
                         "allocatable on kubepods and the reserved cgroups and create the QoS\n"
                         "tiers. The configuration is recorded in DIR/nodecm_config: later\n"
                         "commands start from it and refuse another; init with a new one is the\n"
                         "kubelet restarting with it. A failed init leaves no file behind.\n"},
                        {"admit", 1, 1, "one POD file", "admit POD [--explain] [OPTIONS]",
                         "Admit POD (a Pod, JSON or YAML, '-' for standard input) through the\n"
                         "topology manager, the CPU manager and the device manager, and print\n"
                         "its containers' CPUs, NUMA nodes and devices. The pod and container\n"
                         "cgroups are made with the kubelet's values and every other shared\n"
                         "container follows the shared pool. A refused pod exits 1 with the\n"
                         "kubelet's reason and changes nothing; the same pod again changes\n"
                         "nothing; another spec under a UID the node holds is refused.\n"},
                        {"resize", 1, 1, "one POD file", "resize POD [--explain] [OPTIONS]",
                         "Resize POD in place: the whole pod again (the same UID, as the node\n"
                         "holds it) with new cpu and memory requests and limits. Exclusive CPUs\n"
                         "and pinned memory move only with the kubelet's gates\n"
                         "(InPlacePodVerticalScalingExclusiveCPUs, ...ExclusiveMemory): an upsize\n"
                         "keeps the CPUs the container holds, a downsize never gives up its\n"
                         "promised ones; the shared pool and every shared container follow. A\n"
                         "refused resize exits 1 with its reason (Infeasible, Deferred, Invalid)\n"
                         "and changes nothing; a pod the node does not hold is bad input (2).\n"},
                        {"remove", 1, 2, "POD_UID [CONTAINER]",
                         "remove POD_UID [CONTAINER] [OPTIONS]",
                         "Release the pod POD_UID (its cgroups are removed; no process may be\n"
                         "left in them) or only its container CONTAINER; the shared pool grows\n"
                         "back for every shared container. A pod the node does not hold: nothing\n"
                         "to remove (exit 0), as for a second remove.\n"},
                        {"status", 0, 0, "no argument", "status [--json | --html FILE] [OPTIONS]",
                         "The CPU map: who holds each CPU, the shared pool and the reserved\n"
                         "CPUs; with --json the state line, each CPU's use and holders, and the\n"
                         "pods; with --html FILE the node's map, one self-contained page written\n"
                         "to FILE (docs/map.md).\n"},
                        {"reconcile", 0, 0, "no argument", "reconcile [OPTIONS]",
                         "Write every running container's cpuset again from the state, as the\n"
                         "kubelet's reconcileState does.\n"},
                        {"pods", 0, 0, "no argument", "pods [--json] [OPTIONS]",
                         "The pods the node holds, with each container's CPUs (its own, or the\n"
                         "shared pool).\n"},
                        {"explain", 1, 1, "one POD file", "explain POD [--json] [OPTIONS]",
                         "What admitting POD would do, and why: every provider's hints, the\n"
                         "merged hint and how the CPUs were chosen. Nothing changes.\n"},
                        {"watch", 0, 0, "no argument", "watch --connect SOCKET",
                         "Print each admission and removal of the nodecmd serving SOCKET as it\n"
                         "happens, one JSON line each, until the daemon stops.\n"},
        };
        static const struct option opts[] = {
                        CLI_SOURCE_OPTIONS,
                        {"root", required_argument, NULL, OPT_ROOT},
                        {"cgroup-version", required_argument, NULL, OPT_VERSION},
                        {"capacity", required_argument, NULL, OPT_CAPACITY},
                        {"no-wait", no_argument, NULL, OPT_NO_WAIT},
                        {"explain", no_argument, NULL, OPT_EXPLAIN},
                        {"json", no_argument, NULL, OPT_JSON},
                        {"connect", required_argument, NULL, OPT_CONNECT},
                        {"timeout", required_argument, NULL, OPT_TIMEOUT},
                        {"html", required_argument, NULL, OPT_HTML},
                        CLI_KUBELET_FLAG_OPTIONS(OPT_KUBELET),
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        args a = {.src = CLI_SOURCE_INIT, .timeout_s = 30};
        cli_parsed p;
        int r;

        a.flags = cli_kubelet_flags_new();
        a.name = p.name;
        r = !a.flags ? cli_usage_error("node", "out of memory")
                     : cli_subcommand(argc, argv, "node", subs, NCM_ELEMENTSOF(subs), opts, option,
                                      &a, usage, options, &p);
        if (r == 0) {
                a.cmd = subs[p.sub].name;
                if (a.explain && strcmp(a.cmd, "admit") != 0 && strcmp(a.cmd, "resize") != 0)
                        r = cli_usage_error(a.name, "--explain is for admit and resize only");
                else if (a.html && strcmp(a.cmd, "status") != 0)
                        r = cli_usage_error(a.name, "--html is for status only");
                else if (a.html && a.json)
                        r = cli_usage_error(a.name, "--html and --json: one or the other");
                else if (a.connect && strcmp(a.cmd, "init") == 0)
                        r = cli_usage_error(a.name, "--connect: a running nodecmd has started "
                                                    "its node already");
                else if (!a.connect && strcmp(a.cmd, "watch") == 0)
                        r = cli_usage_error(a.name, "watch needs --connect SOCKET (a running "
                                                    "nodecmd)");
        }
        if (r == 0)
                r = cli_source_check(&a.src, a.name);
        if (r == 0)
                r = run(&a, p.pos);
        ncm_resource_list_done(&a.capacity);
        cli_kubelet_flags_free(a.flags);
        return r < 0 ? 0 : r;
}
