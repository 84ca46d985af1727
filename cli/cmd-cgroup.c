/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm cgroup plan|apply|show|remove|set-cpus POD: the kubelet's kubepods, QoS tier, pod
 * and container cgroups for a pod, planned (every directory and file, with values), made for
 * real through the cgroup mount root, or read back. Output is built in memory and written once.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroups.h>
#include <nodecm/fs.h>
#include <nodecm/pod.h>
#include "cli.h"
#include "node-flags.h"

#define MAX_CPUS_FLAGS 64

static void usage(FILE *f)
{
        fputs("Usage: nodecm cgroup plan POD [OPTIONS]\n"
              "       nodecm cgroup apply POD [OPTIONS] [--cpus [CONTAINER=]LIST]... [--mems "
              "LIST]\n"
              "       nodecm cgroup show POD [OPTIONS]\n"
              "       nodecm cgroup remove POD [OPTIONS]\n"
              "       nodecm cgroup set-cpus POD CONTAINER LIST [--mems LIST] [OPTIONS]\n\n"
              "The cgroups the kubelet makes for a pod: kubepods (node allocatable), the "
              "burstable\n"
              "and besteffort QoS tiers, the pod cgroup (ResourceConfigForPod) and, as the "
              "runtime\n"
              "writes them from the CRI values, one cgroup per sidecar and app container.\n"
              "POD is a Pod object in JSON or YAML ('-' reads standard input).\n\n"
              "  plan      print every directory and file, in order, with the values written\n"
              "  apply     create what is missing and write every value; undone on failure\n"
              "  show      read the pod's and its containers' cgroups back: cpu shares (from\n"
              "            cpu.weight on v2), CFS quota and period, memory limit, pids.max,\n"
              "            cpuset.cpus and cpuset.mems\n"
              "  remove    remove the pod cgroup (it must have no processes left) and update\n"
              "            the burstable tier\n"
              "  set-cpus  set one container cgroup's cpuset.cpus (and cpuset.mems): the CPU\n"
              "            manager's decision, applied live\n\n"
              "Cgroups:\n"
              "  --root DIR                the cgroup mount root (default /sys/fs/cgroup)\n"
              "  --driver cgroupfs|systemd naming driver (default cgroupfs; apply, remove and\n"
              "                            set-cpus need cgroupfs, systemd needs D-Bus)\n"
              "  --cgroup-version 1|2      plan for a typical v1 or v2 machine instead of the\n"
              "                            hierarchies found at --root\n"
              "  --cgroup-root NAME        the kubelet's --cgroup-root, in cgroupfs form; it must\n"
              "                            exist in every hierarchy (default /)\n"
              "  --cpus [CONTAINER=]LIST   cpuset.cpus of a container (all without CONTAINER=)\n"
              "  --mems LIST               cpuset.mems of the containers\n"
              "  --pod-only                leave kubepods and the QoS tiers alone\n"
              "  --no-containers           leave the container cgroups out\n"
              "  --json                    plan as one JSON object\n\n"
              "Kubelet settings:\n"
              "  --cpu-cfs-quota=BOOL      enforce CPU limits with CFS quota (default true)\n"
              "  --cpu-cfs-quota-period D  CFS period, 1ms..1s (default 100ms; another value\n"
              "                            implies the CustomCPUCFSQuotaPeriod feature gate)\n"
              "  --pod-pids-limit N        pids.max of pod cgroups (default -1: unset)\n"
              "  --memory-qos none|tiered  MemoryQoS on cgroup v2: TieredReservation writes\n"
              "                            memory.min / memory.low (default none)\n"
              "  --feature-gates LIST      CustomCPUCFSQuotaPeriod, PodLevelResources (default\n"
              "                            true), DisableCPUQuotaWithExclusiveCPUs (default true:\n"
              "                            with --cpu-manager-policy static, no CFS quota for\n"
              "                            containers with exclusive CPUs and their pod)\n"
              "  --capacity LIST           node capacity (cpu=4,memory=16Gi,pid=4194304);\n"
              "                            default: this machine\n"
              "  --kube-reserved LIST, --system-reserved LIST, --eviction-hard LIST,\n"
              "  --enforce-node-allocatable LIST, --kube-reserved-cgroup NAME,\n"
              "  --system-reserved-cgroup NAME, --cpu-manager-policy none|static\n"
              "                            as for the kubelet (see 'nodecm node-allocatable')\n"
              "  -h, --help                show this help\n\n"
              "Exit status: 0 done, 1 the cgroups are in a state nodecm will not change (foreign\n"
              "contents, processes left) or the reservations exceed capacity, 2 bad usage or\n"
              "input.\n",
              f);
}

enum {
        OPT_DRIVER = 1000,
        OPT_VERSION,
        OPT_ROOT,
        OPT_CGROUP_ROOT,
        OPT_CPUS,
        OPT_MEMS,
        OPT_PIDS,
        OPT_CFS_QUOTA,
        OPT_CFS_PERIOD,
        OPT_MEMORY_QOS,
        OPT_FEATURE_GATES,
        OPT_POD_ONLY,
        OPT_NO_CONTAINERS,
        OPT_JSON,
        OPT_NODE, /* a node allocatable flag, passed on by name */
};

typedef struct args {
        const char *cmd;
        const char *cmdname; /* "cgroup apply", for messages */
        const char *pod_path;
        const char *container; /* set-cpus */
        const char *cpus_text; /* set-cpus */
        const char *driver;
        int version; /* 0: detect */
        const char *root;
        const char *cgroup_root;
        const char *cpus[MAX_CPUS_FLAGS];
        size_t n_cpus;
        const char *mems;
        bool pod_only, no_containers, json;
        ncm_cgroup_pod_options options;
        ncm_cgroup_node_config node;
        bool custom_period_gate_set;
        ncm_error *gate_err;
} args;

static int parse_bool(const char *s, bool *ret)
{
        /* strconv.ParseBool, as Go's flag package uses. */
        static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
        static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};

        for (size_t i = 0; i < NCM_ELEMENTSOF(yes); i++) {
                if (strcmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

/* A Go duration of whole microseconds ("100ms", "5ms", "1s", "2500us"). */
static int parse_duration_us(const char *s, int64_t *ret)
{
        static const struct {
                const char *unit;
                int64_t us;
        } units[] = {{"us", 1}, {"\xc2\xb5s", 1}, {"ms", 1000}, {"s", 1000000}, {"m", 60000000}};
        char *end;
        long long v;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno)
                return -ERANGE;
        for (size_t i = 0; i < NCM_ELEMENTSOF(units); i++)
                if (strcmp(end, units[i].unit) == 0) {
                        if (v > INT64_MAX / units[i].us)
                                return -ERANGE;
                        *ret = v * units[i].us;
                        return 0;
                }
        return -EINVAL;
}

/* One NAME=BOOL of --feature-gates (the gates that shape pod cgroups). */
static int gate(const char *k, size_t kl, const char *v, size_t vl, void *userdata)
{
        args *a = userdata;
        char value[16];
        bool on;

        if (vl >= sizeof(value))
                vl = sizeof(value) - 1;
        memcpy(value, v, vl);
        value[vl] = '\0';
        if (parse_bool(value, &on) < 0)
                return ncm_error_set(a->gate_err, EINVAL,
                                     "invalid value of %.*s=%s, err: strconv.ParseBool: parsing "
                                     "\"%s\": invalid syntax",
                                     (int)kl, k, value, value);
        if (kl == 23 && memcmp(k, "CustomCPUCFSQuotaPeriod", kl) == 0) {
                a->options.custom_cpu_period = on;
                a->custom_period_gate_set = true;
        } else if (kl == 17 && memcmp(k, "PodLevelResources", kl) == 0) {
                a->options.pod_level_resources = on;
        } else if (kl == 32 && memcmp(k, "DisableCPUQuotaWithExclusiveCPUs", kl) == 0) {
                a->options.disable_cpu_quota_with_exclusive_cpus = on;
        } else {
                return ncm_error_set(a->gate_err, EINVAL, "unrecognized feature gate: %.*s",
                                     (int)kl, k);
        }
        return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
        static const struct option opts[] = {
                        {"driver", required_argument, NULL, OPT_DRIVER},
                        {"cgroup-version", required_argument, NULL, OPT_VERSION},
                        {"root", required_argument, NULL, OPT_ROOT},
                        {"cgroup-root", required_argument, NULL, OPT_CGROUP_ROOT},
                        {"cpus", required_argument, NULL, OPT_CPUS},
                        {"mems", required_argument, NULL, OPT_MEMS},
                        {"pod-pids-limit", required_argument, NULL, OPT_PIDS},
                        {"cpu-cfs-quota", required_argument, NULL, OPT_CFS_QUOTA},
                        {"cpu-cfs-quota-period", required_argument, NULL, OPT_CFS_PERIOD},
                        {"memory-qos", required_argument, NULL, OPT_MEMORY_QOS},
                        {"feature-gates", required_argument, NULL, OPT_FEATURE_GATES},
                        {"pod-only", no_argument, NULL, OPT_POD_ONLY},
                        {"no-containers", no_argument, NULL, OPT_NO_CONTAINERS},
                        {"json", no_argument, NULL, OPT_JSON},
                        CLI_NODE_FLAG_OPTIONS(OPT_NODE),
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        const char *cmd = a->cmd;
        int c, idx = 0;

        opterr = 0;
        optind = 1;
        while ((c = getopt_long(argc, argv, ":h", opts, &idx)) != -1) {
                ncm_error err = NCM_ERROR_INIT;
                int64_t v;
                int r;
                switch (c) {
                case 'h':
                        usage(stdout);
                        return 1;
                case OPT_DRIVER:
                        if (!ncm_cgroup_naming_by_name(optarg))
                                return cli_usage_error(cmd,
                                                       "--driver: unknown driver '%s' "
                                                       "(cgroupfs or systemd)",
                                                       optarg);
                        a->driver = optarg;
                        break;
                case OPT_VERSION:
                        if (strcmp(optarg, "1") != 0 && strcmp(optarg, "2") != 0)
                                return cli_usage_error(cmd,
                                                       "--cgroup-version: expected 1 or 2, "
                                                       "got '%s'",
                                                       optarg);
                        a->version = optarg[0] - '0';
                        break;
                case OPT_ROOT:
                        a->root = optarg;
                        break;
                case OPT_CGROUP_ROOT:
                        a->cgroup_root = optarg;
                        break;
                case OPT_CPUS:
                        if (a->n_cpus == MAX_CPUS_FLAGS)
                                return cli_usage_error(cmd, "--cpus: at most %d times",
                                                       MAX_CPUS_FLAGS);
                        a->cpus[a->n_cpus++] = optarg;
                        break;
                case OPT_MEMS:
                        a->mems = optarg;
                        break;
                case OPT_PIDS:
                        if (ncm_cgroup_parse_int64(optarg, &v) < 0 || strchr(optarg, '\n'))
                                return cli_usage_error(cmd,
                                                       "--pod-pids-limit: invalid number "
                                                       "'%s'",
                                                       optarg);
                        a->options.pod_pids_limit = v;
                        break;
                case OPT_CFS_QUOTA:
                        if (parse_bool(optarg, &a->options.enforce_cpu_limits) < 0)
                                return cli_usage_error(cmd,
                                                       "--cpu-cfs-quota: invalid boolean "
                                                       "'%s'",
                                                       optarg);
                        break;
                case OPT_CFS_PERIOD:
                        r = parse_duration_us(optarg, &v);
                        if (r < 0)
                                return cli_usage_error(cmd,
                                                       "--cpu-cfs-quota-period: invalid "
                                                       "duration '%s'",
                                                       optarg);
                        if (v < NCM_CGROUP_MIN_QUOTA_PERIOD || v > NCM_CGROUP_MAX_QUOTA_PERIOD)
                                return cli_usage_error(cmd,
                                                       "--cpu-cfs-quota-period: %s must be "
                                                       "between 1ms and 1sec, inclusive",
                                                       optarg);
                        a->options.cpu_period = (uint64_t)v;
                        break;
                case OPT_MEMORY_QOS:
                        if (strcmp(optarg, "none") == 0)
                                a->options.memory_qos = NCM_CGROUP_MEMORY_QOS_NONE;
                        else if (strcmp(optarg, "tiered") == 0)
                                a->options.memory_qos = NCM_CGROUP_MEMORY_QOS_TIERED;
                        else
                                return cli_usage_error(cmd,
                                                       "--memory-qos: expected none or "
                                                       "tiered, got '%s'",
                                                       optarg);
                        break;
                case OPT_FEATURE_GATES:
                        a->gate_err = &err;
                        r = ncm_cgroup_parse_map_flag(optarg, '=', gate, a, &err);
                        if (r < 0) {
                                ncm_error_prefix(&err, "--feature-gates");
                                cli_fail(&err);
                                return -2;
                        }
                        break;
                case OPT_POD_ONLY:
                        a->pod_only = true;
                        break;
                case OPT_NO_CONTAINERS:
                        a->no_containers = true;
                        break;
                case OPT_JSON:
                        a->json = true;
                        break;
                case OPT_NODE:
                        r = ncm_cgroup_node_config_flag(&a->node, opts[idx].name, optarg, &err);
                        if (r < 0) {
                                cli_fail(&err);
                                return -2;
                        }
                        break;
                case ':':
                        return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
                default:
                        return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
                }
        }
        /* A non-default period implies its feature gate unless the gate is given. */
        if (a->options.cpu_period != NCM_CGROUP_QUOTA_PERIOD) {
                if (!a->custom_period_gate_set)
                        a->options.custom_cpu_period = true;
                else if (!a->options.custom_cpu_period)
                        return cli_usage_error(cmd,
                                               "invalid configuration: cpuCFSQuotaPeriod "
                                               "(--cpu-cfs-quota-period) %lluus requires feature "
                                               "gate CustomCPUCFSQuotaPeriod",
                                               (unsigned long long)a->options.cpu_period);
        }
        a->options.static_cpu_manager = !a->node.cpu_manager_none;
        return 0;
}

/* The layout to plan for or to act on, and the root fd when acting. */
static int open_layout(const args *a, bool act, ncm_cgroup_layout *ret, int *ret_fd, ncm_error *err)
{
        const char *root = a->root ? a->root : "/sys/fs/cgroup";
        ncm_autoclose int fd = -1;
        ncm_autoclose int sysfd = -1;
        ncm_autofree char *mountinfo = NULL;
        char real[PATH_MAX];
        int r;

        if (a->version && !act)
                return ncm_cgroup_layout_standard(ret, a->version, root, err);
        if (!realpath(root, real))
                return ncm_error_errno(err, errno, "--root '%s'", root);
        fd = ncm_fs_open_root(real, err);
        if (fd < 0)
                return fd;
        sysfd = ncm_fs_open_root("/", err);
        if (sysfd < 0)
                return sysfd;
        r = ncm_fs_read_all(sysfd, "/proc/self/mountinfo", 1 << 22, &mountinfo, NULL, err);
        if (r < 0)
                return r;
        r = ncm_cgroup_layout_detect(fd, real, mountinfo, sysfd, ret, err);
        if (r < 0)
                return r;
        if (a->version && a->version != ncm_cgroup_layout_version(ret))
                return ncm_error_set(err, EINVAL, "--cgroup-version %d: '%s' is cgroup v%d",
                                     a->version, real, ncm_cgroup_layout_version(ret));
        if (ret_fd)
                *ret_fd = NCM_TAKE_FD(fd);
        return 0;
}

/* kubepods' node allocatable config from the node flags. */
static int kubepods_config(args *a, const ncm_cgroup_layout *l, int sysfd,
                           ncm_cgroup_resources *ret, ncm_error *err)
{
        ncm_node_allocatable na;
        ncm_autoptr(ncm_cpuset) all = NULL;
        int r;

        r = ncm_cgroup_node_config_finish(&a->node, sysfd, err);
        if (r < 0)
                return r;
        r = ncm_cgroup_node_allocatable(&a->node.capacity,
                                        a->node.has_kube_reserved ? &a->node.kube_reserved : NULL,
                                        a->node.has_system_reserved ? &a->node.system_reserved
                                                                    : NULL,
                                        &a->node.eviction_hard, a->node.enforce, &na, err);
        if (r < 0)
                return r;
        r = ncm_cgroup_node_config_all_cpus(&a->node, sysfd, &all, err);
        if (r >= 0)
                r = ncm_cgroup_config_for_resource_list(&na.pods_limits, false, all, ret, err);
        ncm_node_allocatable_done(&na);
        if (r >= 0 && ncm_cgroup_layout_version(l) == 2 &&
            a->options.memory_qos == NCM_CGROUP_MEMORY_QOS_NONE) {
                /* Stale MemoryQoS protection is reset when MemoryQoS is off. */
                ret->has_memory_min = ret->has_memory_low = true;
                ret->memory_min = ret->memory_low = 0;
        }
        return r;
}

typedef struct cpus_flags {
        ncm_cgroup_container_cpus items[MAX_CPUS_FLAGS];
        ncm_cpuset *sets[MAX_CPUS_FLAGS];
        char *names[MAX_CPUS_FLAGS];
        size_t n;
        ncm_cpuset *mems;
} cpus_flags;

static void cpus_flags_done(cpus_flags *f)
{
        for (size_t i = 0; i < f->n; i++) {
                ncm_cpuset_free(f->sets[i]);
                free(f->names[i]);
        }
        ncm_cpuset_free(f->mems);
        memset(f, 0, sizeof(*f));
}

static int parse_cpus_flags(const args *a, cpus_flags *f, ncm_error *err)
{
        memset(f, 0, sizeof(*f));
        for (size_t i = 0; i < a->n_cpus; i++) {
                const char *eq = strchr(a->cpus[i], '=');
                const char *list = eq ? eq + 1 : a->cpus[i];
                int r;
                if (eq) {
                        f->names[f->n] = strndup(a->cpus[i], (size_t)(eq - a->cpus[i]));
                        if (!f->names[f->n])
                                return ncm_error_set(err, ENOMEM, "out of memory");
                }
                r = ncm_cpuset_parse_list(list, &f->sets[f->n], err);
                if (r < 0) {
                        free(f->names[f->n]);
                        f->names[f->n] = NULL;
                        return ncm_error_prefix(err, "--cpus '%s'", a->cpus[i]);
                }
                f->items[f->n].container = f->names[f->n];
                f->items[f->n].cpus = f->sets[f->n];
                f->n++;
        }
        if (a->mems) {
                int r = ncm_cpuset_parse_list(a->mems, &f->mems, err);
                if (r < 0)
                        return ncm_error_prefix(err, "--mems '%s'", a->mems);
        }
        return 0;
}

static const char *mode_name(const ncm_cgroup_layout *l)
{
        switch (l->mode) {
        case NCM_CGROUP_MODE_V1:
                return "cgroup v1";
        case NCM_CGROUP_MODE_HYBRID:
                return "cgroup v1 (hybrid)";
        case NCM_CGROUP_MODE_UNIFIED:
                return "cgroup v2";
        }
        return "?";
}

static void put_i64(ncm_buf *b, const char *key, bool has, int64_t v, bool max_is_minus_one)
{
        if (!has)
                ncm_buf_printf(b, " %s=-", key);
        else if (max_is_minus_one && v == -1)
                ncm_buf_printf(b, " %s=max", key);
        else
                ncm_buf_printf(b, " %s=%lld", key, (long long)v);
}

static void put_set(ncm_buf *b, const char *key, const ncm_cpuset *s)
{
        ncm_buf_printf(b, " %s=", key);
        if (s)
                ncm_cpuset_format_list_buf(s, b);
        else
                ncm_buf_putc(b, '-');
}

/* One line: the cgroup PATH as the kernel has it now. */
static int show_one(const ncm_cgroup_manager *m, const char *path, ncm_buf *out, ncm_error *err)
{
        ncm_cgroup_resources res;
        ncm_error why = NCM_ERROR_INIT;
        int r = m->ops->exists(&m->layout, m->rootfd, path, &why);

        if (r < 0)
                return ncm_error_set(err, why.code, "%s", why.msg);
        if (r == 0) {
                ncm_buf_printf(out, "%s: missing\n", path);
                return 0;
        }
        r = m->ops->read(&m->layout, m->rootfd, path, &res, err);
        if (r < 0)
                return r;
        ncm_buf_puts(out, path);
        ncm_buf_putc(out, ':');
        put_i64(out, "shares", res.has_cpu_shares, (int64_t)res.cpu_shares, false);
        put_i64(out, "quota", res.has_cpu_quota, res.cpu_quota, true);
        put_i64(out, "period", res.has_cpu_period, (int64_t)res.cpu_period, false);
        put_i64(out, "memory", res.has_memory, res.memory, true);
        put_i64(out, "pids", res.has_pids, res.pids, true);
        put_set(out, "cpus", res.cpuset_cpus);
        put_set(out, "mems", res.cpuset_mems);
        ncm_buf_putc(out, '\n');
        ncm_cgroup_resources_done(&res);
        return 0;
}

static int show(const ncm_cgroup_manager *m, const ncm_pod *pod, ncm_buf *out, ncm_error *err)
{
        ncm_cgroup_name name = NCM_CGROUP_NAME_INIT;
        ncm_autofree char *ppath = NULL;
        ncm_error why = NCM_ERROR_INIT;
        int r;

        r = ncm_cgroup_pod_name(m->cgroup_root, true, pod->qos, pod->uid, &name, err);
        if (r >= 0)
                r = ncm_cgroup_manager_path(m, &name, &ppath, err);
        ncm_cgroup_name_done(&name);
        if (r < 0)
                return r;
        r = m->ops->exists(&m->layout, m->rootfd, ppath, &why);
        if (r == 0)
                return ncm_error_set(err, NCM_E_NOT_FOUND, "pod %s has no cgroup: %s", pod->uid,
                                     why.msg);
        r = show_one(m, ppath, out, err);
        /* Sidecars in start order, then app containers: as apply makes them. */
        for (size_t pass = 0; r >= 0 && pass < 2; pass++) {
                const ncm_container *cs = pass ? pod->containers : pod->init_containers;
                size_t n = pass ? pod->n_containers : pod->n_init_containers;
                for (size_t i = 0; r >= 0 && i < n; i++) {
                        ncm_buf cpath = NCM_BUF_INIT;
                        if (!pass && !cs[i].sidecar)
                                continue;
                        r = m->naming->container_path(ppath, cs[i].name, &cpath, err);
                        if (r >= 0 && ncm_buf_failed(&cpath))
                                r = ncm_error_set(err, ENOMEM, "out of memory");
                        if (r >= 0)
                                r = show_one(m, cpath.data, out, err);
                        ncm_buf_done(&cpath);
                }
        }
        return r;
}

static int run(args *a)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_autoptr(ncm_pod) pod = NULL;
        ncm_autoclose int rootfd = -1;
        ncm_autoclose int sysfd = -1;
        ncm_cgroup_layout layout;
        ncm_cgroup_manager m;
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        ncm_cgroup_resources kp;
        cpus_flags cf;
        ncm_buf out = NCM_BUF_INIT;
        const ncm_cgroup_naming_ops *naming =
                        ncm_cgroup_naming_by_name(a->driver ? a->driver : "cgroupfs");
        bool act = strcmp(a->cmd, "plan") != 0;
        unsigned flags = (a->pod_only ? NCM_CGROUP_PLAN_POD_ONLY : 0) |
                         (a->no_containers ? NCM_CGROUP_PLAN_NO_CONTAINERS : 0);
        int r;

        if (act && naming != &ncm_cgroup_naming_cgroupfs && strcmp(a->cmd, "show") != 0)
                return cli_usage_error(a->cmdname,
                                       "--driver systemd: cgroups of the systemd driver "
                                       "are made by systemd over D-Bus; use 'nodecm "
                                       "cgroup plan' to see them");
        if (act && a->json)
                return cli_usage_error(a->cmdname, "--json is for plan only");
        r = ncm_pod_load_file(a->pod_path, &pod, &err);
        if (r < 0)
                return cli_fail(&err);
        sysfd = ncm_fs_open_root("/", &err);
        if (sysfd < 0)
                return cli_fail(&err);
        r = parse_cpus_flags(a, &cf, &err);
        if (r < 0) {
                cpus_flags_done(&cf);
                return cli_fail(&err);
        }
        r = open_layout(a, act, &layout, act ? &rootfd : NULL, &err);
        if (r >= 0)
                r = ncm_cgroup_manager_init(&m, &layout, naming, a->cgroup_root, &a->options,
                                            rootfd, &err);
        if (r < 0) {
                cpus_flags_done(&cf);
                return cli_fail(&err);
        }
        if (strcmp(a->cmd, "plan") == 0 || strcmp(a->cmd, "apply") == 0) {
                if (!a->pod_only) {
                        r = kubepods_config(a, &layout, sysfd, &kp, &err);
                        if (r >= 0) {
                                r = ncm_cgroup_manager_set_kubepods(&m, &kp, &err);
                                ncm_cgroup_resources_done(&kp);
                        }
                }
                if (r >= 0 && !act) {
                        r = ncm_cgroup_manager_plan_pod(&m, pod, NULL, cf.items, cf.n, cf.mems,
                                                        flags, &plan, &err);
                        if (r >= 0 && a->json) {
                                ncm_buf_puts(&out, "{\"pod\": ");
                                ncm_buf_json_string(&out, pod->uid, strlen(pod->uid));
                                ncm_buf_printf(&out,
                                               ", \"qos\": \"%s\", \"driver\": \"%s\", "
                                               "\"cgroupVersion\": %d, \"plan\": ",
                                               ncm_qos_class_name(pod->qos), naming->name,
                                               ncm_cgroup_layout_version(&layout));
                                ncm_cgroup_plan_format_json(&plan, &out);
                                /* Close the wrapper after the plan's own line. */
                                if (out.len && out.data[out.len - 1] == '\n')
                                        out.len--;
                                ncm_buf_puts(&out, "}\n");
                        } else if (r >= 0) {
                                ncm_buf_printf(&out,
                                               "# pod %s/%s uid %s (%s): %s driver, %s at %s\n\n",
                                               pod->ns, pod->name, pod->uid,
                                               ncm_qos_class_name(pod->qos), naming->name,
                                               mode_name(&layout), layout.display_root);
                                ncm_cgroup_plan_format(&plan, &out);
                        }
                } else if (r >= 0) {
                        r = ncm_cgroup_manager_apply_pod(&m, pod, cf.items, cf.n, cf.mems, flags,
                                                         &err);
                }
        } else if (strcmp(a->cmd, "show") == 0) {
                r = show(&m, pod, &out, &err);
        } else if (strcmp(a->cmd, "remove") == 0) {
                r = ncm_cgroup_manager_remove_pod(&m, pod, &err);
        } else {
                ncm_autoptr(ncm_cpuset) cpus = NULL;
                const ncm_container *c = ncm_pod_find_container(pod, a->container);
                if (!c || (c->init && !c->sidecar)) {
                        r = ncm_error_set(&err, EINVAL,
                                          "pod '%s' has no long-running container '%s'", pod->uid,
                                          a->container);
                } else {
                        r = ncm_cpuset_parse_list(a->cpus_text, &cpus, &err);
                        if (r < 0)
                                ncm_error_prefix(&err, "cpuset '%s'", a->cpus_text);
                }
                if (r >= 0)
                        r = ncm_cgroup_manager_set_container_cpuset(
                                        &m, pod->uid, pod->qos, a->container, cpus, cf.mems, &err);
        }
        if (r >= 0 && act && strcmp(a->cmd, "show") != 0) {
                ncm_autofree char *path = NULL;
                ncm_cgroup_name name = NCM_CGROUP_NAME_INIT;
                int changes = r;
                r = ncm_cgroup_pod_name(m.cgroup_root, true, pod->qos, pod->uid, &name, &err);
                if (r >= 0)
                        r = ncm_cgroup_manager_path(&m, &name, &path, &err);
                ncm_cgroup_name_done(&name);
                if (r >= 0)
                        ncm_buf_printf(&out, "%s: pod %s (%s) at %s: %d change(s)\n", a->cmd,
                                       pod->uid, ncm_qos_class_name(pod->qos), path, changes);
        }
        ncm_cgroup_plan_done(&plan);
        ncm_cgroup_manager_done(&m);
        cpus_flags_done(&cf);
        if (r < 0) {
                ncm_buf_done(&out);
                return cli_fail(&err);
        }
        return cli_emit_buf(&out);
}

int cmd_cgroup(int argc, char **argv)
{
        char cmdname[32];
        args a;
        size_t positional;
        int r;

        memset(&a, 0, sizeof(a));
        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        a.cmd = argv[1];
        snprintf(cmdname, sizeof(cmdname), "cgroup %.20s", argv[1]);
        if (strcmp(a.cmd, "--help") == 0 || strcmp(a.cmd, "-h") == 0 ||
            strcmp(a.cmd, "help") == 0) {
                usage(stdout);
                return 0;
        }
        if (strcmp(a.cmd, "plan") != 0 && strcmp(a.cmd, "apply") != 0 &&
            strcmp(a.cmd, "remove") != 0 && strcmp(a.cmd, "set-cpus") != 0 &&
            strcmp(a.cmd, "show") != 0)
                return cli_usage_error("cgroup",
                                       "unknown subcommand '%s' (plan, apply, show, "
                                       "remove or set-cpus)",
                                       a.cmd);
        ncm_cgroup_pod_options_init(&a.options);
        if (ncm_cgroup_node_config_init(&a.node) < 0) {
                ncm_error err = NCM_ERROR_INIT;
                ncm_error_set(&err, ENOMEM, "out of memory");
                return cli_fail(&err);
        }
        a.cmd = cmdname;
        a.cmdname = cmdname;
        r = parse_args(argc - 1, argv + 1, &a);
        if (r != 0) {
                ncm_cgroup_node_config_done(&a.node);
                return r == 1 ? 0 : 2;
        }
        positional = (size_t)(argc - 1 - optind);
        a.cmd = argv[1];
        if (positional != (strcmp(a.cmd, "set-cpus") == 0 ? 3u : 1u)) {
                ncm_cgroup_node_config_done(&a.node);
                return cli_usage_error(cmdname, strcmp(a.cmd, "set-cpus") == 0
                                                                ? "expected POD CONTAINER LIST"
                                                                : "expected one POD file");
        }
        a.pod_path = argv[1 + optind];
        if (positional == 3) {
                a.container = argv[2 + optind];
                a.cpus_text = argv[3 + optind];
        }
        r = run(&a);
        ncm_cgroup_node_config_done(&a.node);
        return r;
}
