/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the configuration means for cgroups: the cgroup manager (naming driver, cgroup root,
 * the pod settings), node allocatable and the kubepods limits that enforce it.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include <nodecm/node-cgroups.h>
#include "node-internal.h"

int ncm_node_config_cgroup_manager(const ncm_node_config *c, const ncm_cgroup_layout *l, int rootfd,
                                   ncm_cgroup_manager *ret, ncm_error *err)
{
        ncm_cgroup_pod_options o;

        ncm_node_config_pod_options(c, &o);
        return ncm_cgroup_manager_init(ret, l, ncm_cgroup_naming_by_name(c->cgroup_driver),
                                       c->cgroup_root, &o, rootfd, err);
}

int ncm_node_config_allocatable(const ncm_node_config *c, const ncm_resource_list *capacity,
                                ncm_node_allocatable *ret, ncm_error *err)
{
        return ncm_cgroup_node_allocatable(capacity, ncm_node_config_kube_reserved(c),
                                           ncm_node_config_system_reserved(c), &c->eviction_hard,
                                           c->enforce, ret, err);
}

int ncm_node_config_kubepods(const ncm_node_config *c, const ncm_node_allocatable *na,
                             const ncm_cgroup_layout *l, const ncm_cpuset *all_cpus,
                             ncm_cgroup_resources *ret, ncm_error *err)
{
        bool none = strcmp(c->cpu_policy, "none") == 0;
        int r = ncm_cgroup_config_for_resource_list(&na->pods_limits, false, none ? all_cpus : NULL,
                                                    ret, err);

        if (r >= 0 && ncm_cgroup_layout_version(l) == 2 &&
            c->memory_qos == NCM_CGROUP_MEMORY_QOS_NONE) {
                /* Stale MemoryQoS protection is reset when MemoryQoS is off. */
                ret->has_memory_min = ret->has_memory_low = true;
                ret->memory_min = ret->memory_low = 0;
        }
        return r;
}

unsigned ncm_node_config_extra_controllers(const ncm_node_config *c)
{
        unsigned extra = 0;
        const ncm_resource_list *kube = ncm_node_config_kube_reserved(c);
        const ncm_resource_list *sys = ncm_node_config_system_reserved(c);
        bool reserved_enforced =
                        c->enforce & (NCM_ENFORCE_KUBE_RESERVED | NCM_ENFORCE_SYSTEM_RESERVED);

        if (c->pod_pids_limit > 0)
                extra |= NCM_CGROUP_CTRL_PIDS;
        for (int k = 0; k < 2 && reserved_enforced; k++) {
                const ncm_resource_list *l = k ? sys : kube;
                for (size_t i = 0; l && i < l->n; i++) {
                        if (strcmp(l->items[i].name, NCM_RESOURCE_PID) == 0)
                                extra |= NCM_CGROUP_CTRL_PIDS;
                        if (strncmp(l->items[i].name, NCM_RESOURCE_HUGEPAGES_PREFIX,
                                    strlen(NCM_RESOURCE_HUGEPAGES_PREFIX)) == 0)
                                extra |= NCM_CGROUP_CTRL_HUGETLB;
                }
        }
        return extra;
}

/* ------------------------------------------------------------------------------------------
 * A configuration's cgroups on one machine
 */

struct ncm_node_cgroups {
        const ncm_node_config *cfg;
        ncm_cgroup_layout layout;
        ncm_cgroup_manager m;
        bool have_m;
        int rootfd;
        bool has_na;
        ncm_node_allocatable na;
        ncm_resource_list capacity;
};

ncm_node_cgroups *ncm_node_cgroups_free(ncm_node_cgroups *c)
{
        if (!c)
                return NULL;
        if (c->have_m)
                ncm_cgroup_manager_done(&c->m);
        if (c->has_na)
                ncm_node_allocatable_done(&c->na);
        ncm_resource_list_done(&c->capacity);
        if (c->rootfd >= 0)
                close(c->rootfd);
        free(c);
        return NULL;
}

static int open_layout(ncm_node_cgroups *c, const ncm_node_cgroups_options *o, int sysfd,
                       const char *root, ncm_error *err)
{
        ncm_autofree char *mountinfo = NULL;
        ncm_autoclose int fd = -1;
        char real[PATH_MAX];
        int r;

        if (o->cgroup_version && !o->act)
                return ncm_cgroup_layout_standard(&c->layout, o->cgroup_version, root, err);
        if (!realpath(root, real))
                return ncm_error_errno(err, errno, "cgroup mount root '%s'", root);
        fd = ncm_fs_open_root(real, err);
        if (fd < 0)
                return fd;
        if (o->cgroup_version) {
                /* a tree laid out as a typical machine's (tests) */
                r = ncm_cgroup_layout_standard(&c->layout, o->cgroup_version, root, err);
        } else {
                r = ncm_fs_read_all(sysfd, "/proc/self/mountinfo", 1 << 22, &mountinfo, NULL, err);
                if (r >= 0)
                        r = ncm_cgroup_layout_detect(fd, real, mountinfo, sysfd, &c->layout, err);
        }
        if (r < 0)
                return r;
        if (o->act)
                c->rootfd = NCM_TAKE_FD(fd);
        return 0;
}

/* The CPUs the none policy writes into kubepods' cpuset. */
static int all_cpus_of(const ncm_node_cgroups_options *o, int sysfd, ncm_cpuset **ret,
                       ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) s = NULL;

        if (o->all_cpus) {
                s = ncm_cpuset_dup(o->all_cpus);
        } else if (o->capacity) {
                const ncm_quantity *q = ncm_resource_list_get(o->capacity, NCM_RESOURCE_CPU);
                int64_t n = q ? ncm_quantity_value(q) : 0;
                if (n > NCM_CPUSET_MAX_CPUS)
                        return ncm_error_set(err, ERANGE, "capacity: cpu %lld: too many CPUs",
                                             (long long)n);
                s = ncm_cpuset_new();
                if (s && n > 0 && ncm_cpuset_set_range(s, 0, (int)n - 1) < 0)
                        s = ncm_cpuset_free(s);
        } else {
                char buf[16384];
                ssize_t len = ncm_fs_read(sysfd, "/sys/devices/system/cpu/online", buf, sizeof(buf),
                                          err);
                if (len < 0)
                        return (int)len;
                if (ncm_cpuset_parse_sysfs_list(buf, &s, err) < 0)
                        return ncm_error_prefix(err, "/sys/devices/system/cpu/online");
        }
        if (!s)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = NCM_TAKE_PTR(s);
        return 0;
}

int ncm_node_cgroups_open(const ncm_node_config *cfg, const ncm_node_cgroups_options *o,
                          ncm_node_cgroups **ret, ncm_error *err)
{
        static const ncm_node_cgroups_options defaults = {0};
        ncm_autoptr(ncm_node_cgroups) c = calloc(1, sizeof(*c));
        ncm_autoptr(ncm_cpuset) all = NULL;
        ncm_autoclose int sysfd = -1;
        ncm_cgroup_resources kp;
        const char *root;
        int r;

        if (!o)
                o = &defaults;
        if (!c)
                return ncm_error_set(err, ENOMEM, "out of memory");
        c->cfg = cfg;
        c->rootfd = -1;
        root = o->mount_root ? o->mount_root : "/sys/fs/cgroup";
        if (o->cgroup_version && o->cgroup_version != 1 && o->cgroup_version != 2)
                return ncm_error_set(err, EINVAL, "cgroup version %d: expected 1 or 2",
                                     o->cgroup_version);
        sysfd = ncm_fs_open_root(o->sys_root ? o->sys_root : "/", err);
        if (sysfd < 0)
                return sysfd;
        r = open_layout(c, o, sysfd, root, err);
        if (r < 0)
                return r;
        r = ncm_node_config_cgroup_manager(cfg, &c->layout, c->rootfd, &c->m, err);
        if (r < 0)
                return r;
        c->have_m = true;
        if (o->exec)
                c->m.exec = *o->exec;
        if (o->no_allocatable) {
                *ret = NCM_TAKE_PTR(c);
                return 0;
        }
        if (o->capacity) {
                for (size_t i = 0; i < o->capacity->n; i++)
                        if (ncm_cgroup_resource_list_set(&c->capacity, o->capacity->items[i].name,
                                                         &o->capacity->items[i].quantity) < 0)
                                return ncm_error_set(err, ENOMEM, "out of memory");
        } else {
                const char *rd = ncm_node_config_root_dir(cfg);
                r = ncm_cgroup_machine_capacity(sysfd, rd[0] ? rd : "/", &c->capacity, err);
                if (r < 0)
                        return ncm_error_prefix(err, "capacity of this machine");
        }
        r = ncm_node_config_allocatable(cfg, &c->capacity, &c->na, err);
        if (r < 0)
                return r;
        c->has_na = true;
        if (o->unallocatable_cpus && !ncm_cpuset_is_empty(o->unallocatable_cpus)) {
                /* isolatedCPUs exclude: those CPUs are nobody's, as if reserved */
                ncm_quantity q = ncm_quantity_from_scaled(ncm_cpuset_weight(o->unallocatable_cpus),
                                                          0, NCM_QUANTITY_DECIMAL_SI);
                ncm_resource_list *lists[] = {&c->na.allocatable, &c->na.pods_limits};
                for (size_t i = 0; i < NCM_ELEMENTSOF(lists); i++)
                        for (size_t k = 0; k < lists[i]->n; k++) {
                                ncm_quantity *v = &lists[i]->items[k].quantity;
                                if (strcmp(lists[i]->items[k].name, NCM_RESOURCE_CPU) != 0)
                                        continue;
                                ncm_quantity_sub(v, &q);
                                if (ncm_quantity_sign(v) < 0)
                                        *v = ncm_quantity_from_int(0, NCM_QUANTITY_DECIMAL_SI);
                        }
        }
        if (strcmp(ncm_node_config_cpu_policy(cfg), "none") == 0) {
                r = all_cpus_of(o, sysfd, &all, err);
                if (r < 0)
                        return r;
        }
        r = ncm_node_config_kubepods(cfg, &c->na, &c->layout, all, &kp, err);
        if (r < 0)
                return r;
        r = ncm_cgroup_manager_set_kubepods(&c->m, &kp, err);
        ncm_cgroup_resources_done(&kp);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(c);
        return 0;
}

const ncm_cgroup_manager *ncm_node_cgroups_manager(const ncm_node_cgroups *c)
{
        return &c->m;
}

const ncm_cgroup_layout *ncm_node_cgroups_layout(const ncm_node_cgroups *c)
{
        return &c->layout;
}

const char *ncm_node_cgroups_mode_name(const ncm_node_cgroups *c)
{
        switch (c->layout.mode) {
        case NCM_CGROUP_MODE_V1:
                return "cgroup v1";
        case NCM_CGROUP_MODE_HYBRID:
                return "cgroup v1 (hybrid)";
        case NCM_CGROUP_MODE_UNIFIED:
                return "cgroup v2";
        }
        return "?";
}

const ncm_resource_list *ncm_node_cgroups_capacity(const ncm_node_cgroups *c)
{
        return c->has_na ? &c->capacity : NULL;
}

const ncm_node_allocatable *ncm_node_cgroups_allocatable(const ncm_node_cgroups *c)
{
        return c->has_na ? &c->na : NULL;
}

int ncm_node_cgroups_plan_node(const ncm_node_cgroups *c, ncm_cgroup_plan *plan, ncm_error *err)
{
        const ncm_node_config *cfg = c->cfg;
        const ncm_cgroup_resources *kp = c->m.has_kubepods ? &c->m.kubepods : NULL;

        return ncm_cgroup_manager_plan_node(&c->m, ncm_node_config_enforce(cfg),
                                            ncm_node_config_kube_reserved_cgroup(cfg),
                                            ncm_node_config_kube_reserved(cfg),
                                            ncm_node_config_system_reserved_cgroup(cfg),
                                            ncm_node_config_system_reserved(cfg),
                                            kp ? kp->cpuset_cpus : NULL, plan, err);
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

int ncm_node_cgroups_show_pod(const ncm_node_cgroups *c, const ncm_pod *pod, ncm_buf *out,
                              ncm_error *err)
{
        const ncm_cgroup_manager *m = &c->m;
        ncm_autofree char *ppath = NULL;
        ncm_error why = NCM_ERROR_INIT;
        int r;

        if (m->rootfd < 0)
                return ncm_error_set(err, EBADF, "no cgroup root to read");
        r = ncm_cgroup_manager_container_path(m, pod->uid, pod->qos, NULL, &ppath, err);
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
                        ncm_autofree char *cpath = NULL;
                        if (!pass && !cs[i].sidecar)
                                continue;
                        r = ncm_cgroup_manager_container_path(m, pod->uid, pod->qos, cs[i].name,
                                                              &cpath, err);
                        if (r >= 0)
                                r = show_one(m, cpath, out, err);
                }
        }
        return r;
}

void ncm_node_cgroups_format_plan(const ncm_node_cgroups *c, const ncm_pod *pod,
                                  const ncm_cgroup_plan *plan, bool json, ncm_buf *out)
{
        const ncm_cgroup_manager *m = &c->m;

        if (!json) {
                ncm_buf_printf(out, "# pod %s/%s uid %s (%s): %s driver, %s at %s\n\n", pod->ns,
                               pod->name, pod->uid, ncm_qos_class_name(pod->qos), m->naming->name,
                               ncm_node_cgroups_mode_name(c), m->layout.display_root);
                ncm_cgroup_plan_format(plan, out);
                return;
        }
        ncm_buf_puts(out, "{\"pod\": ");
        ncm_buf_json_string(out, pod->uid, strlen(pod->uid));
        ncm_buf_printf(out,
                       ", \"qos\": \"%s\", \"driver\": \"%s\", \"cgroupVersion\": %d, "
                       "\"plan\": ",
                       ncm_qos_class_name(pod->qos), m->naming->name,
                       ncm_cgroup_layout_version(&m->layout));
        ncm_cgroup_plan_format_json(plan, out);
        /* close the wrapper after the plan's own line */
        if (out->len && out->data[out->len - 1] == '\n')
                out->len--;
        ncm_buf_puts(out, "}\n");
}

int ncm_node_cgroups_set_cpus(const ncm_node_cgroups *c, const ncm_pod *pod, const char *container,
                              const ncm_cpuset *cpus, const ncm_cpuset *mems, ncm_error *err)
{
        const ncm_container *ct = ncm_pod_find_container(pod, container);

        if (!ct || (ct->init && !ct->sidecar))
                return ncm_error_set(err, EINVAL, "pod '%s' has no long-running container '%s'",
                                     pod->uid, container);
        return ncm_cgroup_manager_set_container_cpuset(&c->m, pod->uid, pod->qos, container, cpus,
                                                       mems, err);
}
