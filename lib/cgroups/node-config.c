/* SPDX-License-Identifier: Apache-2.0 */
/* The kubelet's node allocatable flags, gathered from a command line. */
#include <errno.h>
#include <string.h>

#include <nodecm/cgroups.h>
#include <nodecm/fs.h>

int ncm_cgroup_node_config_init(ncm_cgroup_node_config *c)
{
        memset(c, 0, sizeof(*c));
        ncm_cgroup_eviction_defaults(&c->eviction_hard);
        c->enforce_text = strdup("pods");
        c->cpu_manager_none = true;
        return c->enforce_text ? 0 : -ENOMEM;
}

void ncm_cgroup_node_config_done(ncm_cgroup_node_config *c)
{
        ncm_resource_list_done(&c->capacity);
        ncm_resource_list_done(&c->kube_reserved);
        ncm_resource_list_done(&c->system_reserved);
        free(c->enforce_text);
        free(c->kube_reserved_cgroup);
        free(c->system_reserved_cgroup);
        memset(c, 0, sizeof(*c));
}

/* Merge NEW into *DST (later values win), consuming NEW. */
static int merge(ncm_resource_list *dst, ncm_resource_list *add, ncm_error *err)
{
        for (size_t i = 0; i < add->n; i++)
                if (ncm_cgroup_resource_list_set(dst, add->items[i].name, &add->items[i].quantity) <
                    0) {
                        ncm_resource_list_done(add);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
        ncm_resource_list_done(add);
        return 1;
}

static int set_str(char **dst, const char *v, ncm_error *err)
{
        char *d = strdup(v);

        if (!d)
                return ncm_error_set(err, ENOMEM, "out of memory");
        free(*dst);
        *dst = d;
        return 1;
}

int ncm_cgroup_node_config_flag(ncm_cgroup_node_config *c, const char *name, const char *value,
                                ncm_error *err)
{
        ncm_resource_list l = {0};
        int r;

        if (strcmp(name, "capacity") == 0) {
                r = ncm_cgroup_parse_capacity(value, &l, err);
                if (r < 0)
                        return r;
                c->has_capacity = true;
                return merge(&c->capacity, &l, err);
        }
        if (strcmp(name, "kube-reserved") == 0 || strcmp(name, "system-reserved") == 0) {
                bool kube = name[0] == 'k';
                r = ncm_cgroup_parse_reserved(kube ? "--kube-reserved" : "--system-reserved", value,
                                              &l, err);
                if (r < 0)
                        return r;
                if (kube)
                        c->has_kube_reserved = true;
                else
                        c->has_system_reserved = true;
                return merge(kube ? &c->kube_reserved : &c->system_reserved, &l, err);
        }
        if (strcmp(name, "eviction-hard") == 0) {
                ncm_eviction_thresholds t;
                r = ncm_cgroup_parse_eviction_hard(value, &t, err);
                if (r < 0)
                        return r;
                c->eviction_hard = t;
                return 1;
        }
        if (strcmp(name, "enforce-node-allocatable") == 0)
                return set_str(&c->enforce_text, value, err);
        if (strcmp(name, "kube-reserved-cgroup") == 0)
                return set_str(&c->kube_reserved_cgroup, value, err);
        if (strcmp(name, "system-reserved-cgroup") == 0)
                return set_str(&c->system_reserved_cgroup, value, err);
        if (strcmp(name, "cpu-manager-policy") == 0) {
                if (strcmp(value, "none") == 0)
                        c->cpu_manager_none = true;
                else if (strcmp(value, "static") == 0)
                        c->cpu_manager_none = false;
                else
                        return ncm_error_set(err, EINVAL,
                                             "--cpu-manager-policy: unknown policy \"%s\" "
                                             "(none or static)",
                                             value);
                return 1;
        }
        return 0;
}

int ncm_cgroup_node_config_finish(ncm_cgroup_node_config *c, int sysrootfd, ncm_error *err)
{
        int r = ncm_cgroup_parse_enforce(c->enforce_text, c->kube_reserved_cgroup,
                                         c->system_reserved_cgroup, &c->enforce, err);

        if (r < 0)
                return r;
        if (!c->has_capacity) {
                ncm_resource_list l = {0};
                r = ncm_cgroup_machine_capacity(sysrootfd, "/var/lib/kubelet", &l, err);
                if (r < 0)
                        return ncm_error_prefix(err, "capacity of this machine");
                ncm_resource_list_done(&c->capacity);
                c->capacity = l;
        }
        return 0;
}

int ncm_cgroup_node_config_all_cpus(const ncm_cgroup_node_config *c, int sysrootfd,
                                    ncm_cpuset **ret, ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) s = NULL;

        *ret = NULL;
        if (!c->cpu_manager_none)
                return 0;
        if (c->has_capacity) {
                const ncm_quantity *q = ncm_resource_list_get(&c->capacity, NCM_RESOURCE_CPU);
                int64_t n = q ? ncm_quantity_value(q) : 0;
                if (n <= 0)
                        return 0;
                if (n > NCM_CPUSET_MAX_CPUS)
                        return ncm_error_set(err, ERANGE, "--capacity: cpu %lld: too many CPUs",
                                             (long long)n);
                s = ncm_cpuset_new();
                if (!s || ncm_cpuset_set_range(s, 0, (int)n - 1) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        } else {
                char buf[16384];
                ssize_t len = ncm_fs_read(sysrootfd, "/sys/devices/system/cpu/online", buf,
                                          sizeof(buf), err);
                int r;
                if (len < 0)
                        return (int)len;
                r = ncm_cpuset_parse_sysfs_list(buf, &s, err);
                if (r < 0)
                        return ncm_error_prefix(err, "/sys/devices/system/cpu/online");
        }
        *ret = NCM_TAKE_PTR(s);
        return 0;
}
