/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The KubeletConfiguration fields the node reads, checked as the kubelet checks them: its
 * decoder (string maps of strings), ValidateKubeletConfiguration (feature gates, topology
 * manager policy and scope, reservedSystemCPUs syntax), server.go's parseResourceList for
 * kubeReserved / systemReserved, and the managers' option parsing (NewManager). Checks that need
 * the machine are ncm_node_new()'s.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nodecm/duration.h>
#include "base/array.h"
#include "base/json.h"
#include "node-internal.h"

/* The fields read here, for the typo check. */
static const char *const known_fields[] = {
                "cpuManagerPolicy",
                "cpuManagerPolicyOptions",
                "cpuManagerReconcilePeriod",
                "reservedSystemCPUs",
                "kubeReserved",
                "systemReserved",
                "kubeReservedCgroup",
                "systemReservedCgroup",
                "topologyManagerPolicy",
                "topologyManagerScope",
                "topologyManagerPolicyOptions",
                "featureGates",
                "memoryManagerPolicy",
                "kubeletVersion",
                "cgroupRoot",
                "cgroupDriver",
                "cgroupsPerQOS",
                "cpuCFSQuota",
                "cpuCFSQuotaPeriod",
                "podPidsLimit",
                "enforceNodeAllocatable",
                "evictionHard",
                "mergeDefaultEvictionSettings",
                "memoryReservationPolicy",
                "rootDirectory",
                "enforcement",
                "isolatedCPUs",
                "irqBalanceConfigFile",
};

/* Real KubeletConfiguration fields close to the ones above (not typos). */
static const char *const other_fields[] = {
                "reservedMemory",         "systemCgroups", "kubeletCgroups", "evictionSoft",
                "evictionMinimumReclaim", "podsPerCore",   "kubeAPIQPS",     "kubeAPIBurst",
};

const char *ncm__node_field(const ncm_node_config *c, const char *field, char *buf, size_t size)
{
        if (!c->path || !c->path[0])
                snprintf(buf, size, "%s", field);
        else
                snprintf(buf, size, "%s.%s", c->path, field);
        return buf;
}

static int edit_distance(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);
        int row[64];

        if (la >= 63 || lb >= 63)
                return 99;
        for (size_t j = 0; j <= lb; j++)
                row[j] = (int)j;
        for (size_t i = 1; i <= la; i++) {
                int prev = row[0];
                row[0] = (int)i;
                for (size_t j = 1; j <= lb; j++) {
                        int cur = row[j];
                        int best = prev + (a[i - 1] != b[j - 1]);
                        if (row[j] + 1 < best)
                                best = row[j] + 1;
                        if (row[j - 1] + 1 < best)
                                best = row[j - 1] + 1;
                        row[j] = best;
                        prev = cur;
                }
        }
        return row[lb];
}

static bool is_known(const char *key)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(known_fields); i++)
                if (strcmp(key, known_fields[i]) == 0)
                        return true;
        for (size_t i = 0; i < NCM_ELEMENTSOF(other_fields); i++)
                if (strcmp(key, other_fields[i]) == 0)
                        return true;
        return false;
}

/* A probable misspelling of a field we read, or NULL. */
static const char *typo_of(const char *key)
{
        if (is_known(key))
                return NULL;
        for (size_t i = 0; i < NCM_ELEMENTSOF(known_fields); i++) {
                int d;
                if (strcasecmp(key, known_fields[i]) == 0)
                        return known_fields[i];
                d = edit_distance(key, known_fields[i]);
                if (d <= 2 && strlen(key) > 6)
                        return known_fields[i];
        }
        return NULL;
}

ncm_node_config *ncm_node_config_free(ncm_node_config *c)
{
        if (!c)
                return NULL;
        if (c->src)
                json_object_put(c->src);
        free(c->path);
        free(c->cpu_policy);
        for (size_t i = 0; i < c->n_cpu_opts; i++) {
                free((char *)c->cpu_opts[i].key);
                free((char *)c->cpu_opts[i].value);
        }
        free(c->cpu_opts);
        free(c->reserved_cpus_text);
        ncm_cpuset_free(c->reserved_cpus);
        free(c->tm_policy);
        free(c->tm_scope);
        for (size_t i = 0; i < c->n_tm_opts; i++) {
                free((char *)c->tm_opts[i].key);
                free((char *)c->tm_opts[i].value);
        }
        free(c->tm_opts);
        for (size_t i = 0; i < c->n_gates; i++)
                free(c->gates[i].name);
        free(c->gates);
        free(c->cgroup_root);
        free(c->cgroup_driver);
        free(c->kube_reserved_cgroup);
        free(c->system_reserved_cgroup);
        ncm_resource_list_done(&c->kube_reserved);
        ncm_resource_list_done(&c->system_reserved);
        free(c->root_dir);
        free(c->enforcement);
        free(c->irqbalance_config);
        free(c);
        return NULL;
}

const char *ncm_node_config_cpu_policy(const ncm_node_config *c)
{
        return c->cpu_policy;
}

const char *ncm_node_config_tm_policy(const ncm_node_config *c)
{
        return c->tm_policy;
}

const char *ncm_node_config_tm_scope(const ncm_node_config *c)
{
        return c->tm_scope;
}

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* A string field: *RET = a copy, or DEF when absent. */
static int get_string(const ncm_node_config *c, json_object *o, const char *field, const char *def,
                      char **ret, ncm_error *err)
{
        json_object *v = ncm__json_get(o, field);
        char path[256];
        const char *s = def;

        if (v) {
                if (!json_object_is_type(v, json_type_string))
                        return ncm_error_set(err, EINVAL, "%s: expected string, got %s",
                                             ncm__node_field(c, field, path, sizeof(path)),
                                             ncm__json_type_name(v));
                s = json_object_get_string(v);
        }
        if (!s) {
                *ret = NULL;
                return 0;
        }
        *ret = strdup(s);
        return *ret ? 0 : oom(err);
}

/*
 * A map[string]string field. Keys and values are copied into KEYS/VALUES arrays of *RET_N
 * pairs (file order). Go's decoder refuses values that are not strings, and so does nodecm.
 */
typedef struct kv {
        char *key;
        char *value;
} kv;

static void kv_free(kv *p, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(p[i].key);
                free(p[i].value);
        }
        free(p);
}

static int get_string_map(const ncm_node_config *c, json_object *o, const char *field, kv **ret,
                          size_t *ret_n, ncm_error *err)
{
        json_object *v = ncm__json_get(o, field);
        char path[256];
        kv *p = NULL;
        size_t n = 0;

        *ret = NULL;
        *ret_n = 0;
        if (!v)
                return 0;
        ncm__node_field(c, field, path, sizeof(path));
        if (!json_object_is_type(v, json_type_object))
                return ncm_error_set(err, EINVAL, "%s: expected object, got %s", path,
                                     ncm__json_type_name(v));
        p = calloc((size_t)json_object_object_length(v) + 1, sizeof(*p));
        if (!p)
                return oom(err);
        json_object_object_foreach(v, key, val)
        {
                if (!val || !json_object_is_type(val, json_type_string)) {
                        int r = ncm_error_set(err, EINVAL,
                                              "%s.%s: expected string, got %s (the kubelet's "
                                              "decoder refuses it too: quote the value)",
                                              path, key, val ? ncm__json_type_name(val) : "null");
                        kv_free(p, n);
                        return r;
                }
                p[n].key = strdup(key);
                p[n].value = strdup(json_object_get_string(val));
                n++;
                if (!p[n - 1].key || !p[n - 1].value) {
                        kv_free(p, n);
                        return oom(err);
                }
        }
        *ret = p;
        *ret_n = n;
        return 0;
}

/*
 * featureGates (component-base SetFromMap): booleans. The option gates are applied; the GA
 * gates of the option maps are locked to true; other names are accepted and ignored (nodecm
 * does not know every kubelet gate).
 */
static int parse_gates(ncm_node_config *c, json_object *o, ncm_error *err)
{
        json_object *v = ncm__json_get(o, "featureGates");
        size_t cap = c->n_gates;
        char path[256];

        c->cpu_gates = NCM_CPU_GATES_DEFAULT;
        c->tm_gates = NCM_TM_GATES_DEFAULT;
        if (!v)
                return 0;
        ncm__node_field(c, "featureGates", path, sizeof(path));
        if (!json_object_is_type(v, json_type_object))
                return ncm_error_set(err, EINVAL, "%s: expected object, got %s", path,
                                     ncm__json_type_name(v));
        json_object_object_foreach(v, key, val)
        {
                bool on;
                if (!val || !json_object_is_type(val, json_type_boolean))
                        return ncm_error_set(err, EINVAL, "%s.%s: expected boolean, got %s", path,
                                             key, val ? ncm__json_type_name(val) : "null");
                on = json_object_get_boolean(val);
                if (ncm__array_grow(c->gates, cap, c->n_gates) < 0 ||
                    !(c->gates[c->n_gates].name = strdup(key)))
                        return oom(err);
                c->gates[c->n_gates++].on = on;
                if (strcmp(key, "CPUManagerPolicyAlphaOptions") == 0)
                        c->cpu_gates.alpha_options = on;
                else if (strcmp(key, "CPUManagerPolicyBetaOptions") == 0)
                        c->cpu_gates.beta_options = on;
                else if (strcmp(key, "TopologyManagerPolicyAlphaOptions") == 0)
                        c->tm_gates.alpha_options = on;
                else if (strcmp(key, "TopologyManagerPolicyBetaOptions") == 0)
                        c->tm_gates.beta_options = on;
                else if ((strcmp(key, "CPUManagerPolicyOptions") == 0 ||
                          strcmp(key, "TopologyManagerPolicyOptions") == 0 ||
                          strcmp(key, "CPUManager") == 0 || strcmp(key, "TopologyManager") == 0) &&
                         !on)
                        return ncm_error_set(err, EINVAL,
                                             "%s: cannot set feature gate %s to false, feature "
                                             "is locked to true",
                                             path, key);
        }
        return 0;
}

/* parseResourceList (kubelet server.go) for kubeReserved / systemReserved; adds the cpu. */
static int parse_reserved(ncm_node_config *c, json_object *o, const char *field, ncm_error *err)
{
        kv *p = NULL;
        size_t n = 0;
        char path[256];
        int r;

        r = get_string_map(c, o, field, &p, &n, err);
        if (r < 0)
                return r;
        if (ncm__json_get(o, field)) {
                if (field[0] == 'k')
                        c->has_kube_reserved = true;
                else
                        c->has_system_reserved = true;
        }
        ncm__node_field(c, field, path, sizeof(path));
        for (size_t i = 0; i < n && r >= 0; i++) {
                ncm_quantity q;
                ncm_error e = NCM_ERROR_INIT;
                if (strcmp(p[i].key, "cpu") != 0 && strcmp(p[i].key, "memory") != 0 &&
                    strcmp(p[i].key, "ephemeral-storage") != 0 && strcmp(p[i].key, "pid") != 0) {
                        r = ncm_error_set(err, EINVAL, "%s: cannot reserve \"%s\" resource", path,
                                          p[i].key);
                        break;
                }
                if (ncm_quantity_parse(p[i].value, &q, &e) < 0) {
                        r = ncm_error_set(err, EINVAL,
                                          "%s.%s: failed to parse quantity \"%s\" for \"%s\" "
                                          "resource: %s",
                                          path, p[i].key, p[i].value, p[i].key, e.msg);
                        break;
                }
                if (ncm_quantity_sign(&q) < 0) {
                        r = ncm_error_set(err, EINVAL,
                                          "%s.%s: resource quantity for \"%s\" cannot be "
                                          "negative: %s",
                                          path, p[i].key, p[i].key, p[i].value);
                        break;
                }
                if (ncm_cgroup_resource_list_set(field[0] == 'k' ? &c->kube_reserved
                                                                 : &c->system_reserved,
                                                 p[i].key, &q) < 0) {
                        r = oom(err);
                        break;
                }
                if (strcmp(p[i].key, "cpu") == 0) {
                        int64_t m = ncm_quantity_milli_value(&q);
                        c->reserved_milli_set = true;
                        if (m > INT64_MAX - c->reserved_milli) {
                                r = ncm_error_set(err, ERANGE, "%s.cpu: reservation too large",
                                                  path);
                                break;
                        }
                        c->reserved_milli += m;
                }
        }
        kv_free(p, n);
        return r;
}

#define NS_PER_MS INT64_C(1000000)
#define NS_PER_S INT64_C(1000000000)

static int get_bool(const ncm_node_config *c, json_object *o, const char *field, bool def,
                    bool *ret, ncm_error *err)
{
        json_object *v = ncm__json_get(o, field);
        char path[256];

        *ret = def;
        if (!v)
                return 0;
        if (!json_object_is_type(v, json_type_boolean))
                return ncm_error_set(err, EINVAL, "%s: expected boolean, got %s",
                                     ncm__node_field(c, field, path, sizeof(path)),
                                     ncm__json_type_name(v));
        *ret = json_object_get_boolean(v);
        return 0;
}

static int get_int64(const ncm_node_config *c, json_object *o, const char *field, int64_t def,
                     int64_t *ret, ncm_error *err)
{
        json_object *v = ncm__json_get(o, field);
        char path[256];

        *ret = def;
        if (!v)
                return 0;
        return ncm__json_int(v, ncm__node_field(c, field, path, sizeof(path)), INT64_MIN, INT64_MAX,
                             ret, err);
}

/* A metav1.Duration: a Go duration string. */
static int get_duration(const ncm_node_config *c, json_object *o, const char *field, int64_t def,
                        int64_t *ret, ncm_error *err)
{
        json_object *v = ncm__json_get(o, field);
        char path[256];

        *ret = def;
        if (!v)
                return 0;
        ncm__node_field(c, field, path, sizeof(path));
        if (!json_object_is_type(v, json_type_string))
                return ncm_error_set(err, EINVAL, "%s: expected string, got %s", path,
                                     ncm__json_type_name(v));
        if (ncm_duration_parse(json_object_get_string(v), ret, err) < 0)
                return ncm_error_prefix(err, "%s", path);
        return 0;
}

/* A []string joined with commas into *RET (DEF when absent). */
static int get_string_list(const ncm_node_config *c, json_object *o, const char *field,
                           const char *def, char **ret, ncm_error *err)
{
        json_object *v = ncm__json_get(o, field);
        ncm_buf b = NCM_BUF_INIT;
        char path[256];

        ncm__node_field(c, field, path, sizeof(path));
        if (!v) {
                *ret = strdup(def);
                return *ret ? 0 : oom(err);
        }
        if (!json_object_is_type(v, json_type_array))
                return ncm_error_set(err, EINVAL, "%s: expected array, got %s", path,
                                     ncm__json_type_name(v));
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                json_object *e = json_object_array_get_idx(v, i);
                if (!e || !json_object_is_type(e, json_type_string)) {
                        ncm_buf_done(&b);
                        return ncm_error_set(err, EINVAL, "%s[%zu]: expected string, got %s", path,
                                             i, e ? ncm__json_type_name(e) : "null");
                }
                ncm_buf_printf(&b, "%s%s", i ? "," : "", json_object_get_string(e));
        }
        if (ncm_buf_failed(&b))
                return oom(err);
        *ret = b.data ? ncm_buf_steal(&b) : strdup("");
        return *ret ? 0 : oom(err);
}

static bool gate(const ncm_node_config *c, const char *name, bool def)
{
        bool on = def;
        for (size_t i = 0; i < c->n_gates; i++)
                if (strcmp(c->gates[i].name, name) == 0)
                        on = c->gates[i].on;
        return on;
}

/* evictionHard: the defaults when absent; else the given signals (plus, with
 * mergeDefaultEvictionSettings, the defaults of the others). */
static int parse_eviction(ncm_node_config *c, json_object *o, ncm_error *err)
{
        json_object *v = ncm__json_get(o, "evictionHard");
        bool merge = false;
        char path[256];
        int r;

        r = get_bool(c, o, "mergeDefaultEvictionSettings", false, &merge, err);
        if (r < 0)
                return r;
        ncm_cgroup_eviction_defaults(&c->eviction_hard);
        if (!v)
                return 0;
        ncm__node_field(c, "evictionHard", path, sizeof(path));
        if (!json_object_is_type(v, json_type_object))
                return ncm_error_set(err, EINVAL, "%s: expected object, got %s", path,
                                     ncm__json_type_name(v));
        if (!merge)
                c->eviction_hard.n = 0;
        json_object_object_foreach(v, key, val)
        {
                if (!val || !json_object_is_type(val, json_type_string))
                        return ncm_error_set(err, EINVAL, "%s.%s: expected string, got %s", path,
                                             key, val ? ncm__json_type_name(val) : "null");
                r = ncm_cgroup_eviction_set(&c->eviction_hard, key, json_object_get_string(val),
                                            err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s", path);
        }
        return 0;
}

/*
 * The fields that shape cgroups and node allocatable, with the kubelet's validation texts
 * (ValidateKubeletConfiguration) where it checks them.
 */
static int parse_cgroup_fields(ncm_node_config *c, json_object *o, ncm_error *err)
{
        ncm_autofree char *enforce = NULL;
        ncm_autofree char *mrp = NULL;
        char path[256];
        int r;

        r = get_string(c, o, "cgroupRoot", "", &c->cgroup_root, err);
        if (r >= 0 && !c->cgroup_root[0]) {
                free(c->cgroup_root);
                c->cgroup_root = strdup("/");
                r = c->cgroup_root ? 0 : oom(err);
        }
        if (r >= 0)
                r = get_string(c, o, "cgroupDriver", "cgroupfs", &c->cgroup_driver, err);
        if (r < 0)
                return r;
        {
                /* a root the kubelet could not name (it would panic) */
                ncm_cgroup_name probe = NCM_CGROUP_NAME_INIT;
                ncm_error e = NCM_ERROR_INIT;
                r = ncm_cgroup_qos_names(c->cgroup_root, true, &probe, NULL, NULL, &e);
                ncm_cgroup_name_done(&probe);
                if (r == -ENOMEM)
                        return oom(err);
                if (r < 0)
                        return ncm_error_set(err, EINVAL, "%s: \"%s\": %s",
                                             ncm__node_field(c, "cgroupRoot", path, sizeof(path)),
                                             c->cgroup_root, e.msg);
        }
        if (!ncm_cgroup_naming_by_name(c->cgroup_driver))
                return ncm_error_set(err, EINVAL,
                                     "%s: unknown cgroup driver \"%s\" (cgroupfs or "
                                     "systemd)",
                                     ncm__node_field(c, "cgroupDriver", path, sizeof(path)),
                                     c->cgroup_driver);
        r = get_bool(c, o, "cgroupsPerQOS", true, &c->cgroups_per_qos, err);
        if (r >= 0)
                r = get_bool(c, o, "cpuCFSQuota", true, &c->cpu_cfs_quota, err);
        if (r >= 0)
                r = get_duration(c, o, "cpuCFSQuotaPeriod", 100 * NS_PER_MS,
                                 &c->cpu_cfs_quota_period_ns, err);
        if (r < 0)
                return r;
        ncm__node_field(c, "cpuCFSQuotaPeriod", path, sizeof(path));
        {
                char d[NCM_DURATION_STRLEN];
                ncm_duration_format(c->cpu_cfs_quota_period_ns, d);
                if (!gate(c, "CustomCPUCFSQuotaPeriod", false) &&
                    c->cpu_cfs_quota_period_ns != 100 * NS_PER_MS)
                        return ncm_error_set(err, EINVAL,
                                             "%s: invalid configuration: cpuCFSQuotaPeriod "
                                             "(--cpu-cfs-quota-period) {%s} requires feature gate "
                                             "CustomCPUCFSQuotaPeriod",
                                             path, d);
                if (c->cpu_cfs_quota_period_ns < NS_PER_MS || c->cpu_cfs_quota_period_ns > NS_PER_S)
                        return ncm_error_set(err, EINVAL,
                                             "%s: invalid configuration: cpuCFSQuotaPeriod "
                                             "(--cpu-cfs-quota-period) {%s} must be between 1ms "
                                             "and 1sec, inclusive",
                                             path, d);
        }
        r = get_int64(c, o, "podPidsLimit", -1, &c->pod_pids_limit, err);
        if (r >= 0)
                r = get_string(c, o, "memoryReservationPolicy", "None", &mrp, err);
        if (r < 0)
                return r;
        if (strcmp(mrp, "None") == 0)
                c->memory_qos = NCM_CGROUP_MEMORY_QOS_NONE;
        else if (strcmp(mrp, "TieredReservation") == 0)
                c->memory_qos = NCM_CGROUP_MEMORY_QOS_TIERED;
        else
                return ncm_error_set(
                                err, EINVAL, "%s: unknown policy: \"%s\"",
                                ncm__node_field(c, "memoryReservationPolicy", path, sizeof(path)),
                                mrp);

        r = get_string(c, o, "kubeReservedCgroup", "", &c->kube_reserved_cgroup, err);
        if (r >= 0)
                r = get_string(c, o, "systemReservedCgroup", "", &c->system_reserved_cgroup, err);
        if (r >= 0)
                r = get_string_list(c, o, "enforceNodeAllocatable", "pods", &enforce, err);
        if (r < 0)
                return r;
        ncm__node_field(c, "enforceNodeAllocatable", path, sizeof(path));
        if (!c->cgroups_per_qos && enforce[0])
                return ncm_error_set(err, EINVAL,
                                     "%s: invalid configuration: enforceNodeAllocatable "
                                     "(--enforce-node-allocatable) is not supported unless "
                                     "cgroupsPerQOS (--cgroups-per-qos) feature is turned on",
                                     path);
        r = ncm_cgroup_parse_enforce(enforce, c->kube_reserved_cgroup, c->system_reserved_cgroup,
                                     &c->enforce, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s", path);
        r = parse_eviction(c, o, err);
        if (r < 0)
                return r;
        r = get_string(c, o, "rootDirectory", "", &c->root_dir, err);
        if (r >= 0)
                r = get_string(c, o, "enforcement", "cgroupfs", &c->enforcement, err);
        if (r < 0)
                return r;
        if (strcmp(c->enforcement, "cgroupfs") != 0 && strcmp(c->enforcement, "plan") != 0 &&
            strcmp(c->enforcement, "none") != 0)
                return ncm_error_set(err, EINVAL,
                                     "%s: unknown enforcement \"%s\" (cgroupfs, plan or none)",
                                     ncm__node_field(c, "enforcement", path, sizeof(path)),
                                     c->enforcement);
        return ncm__node_config_isolation(c, o, err);
}

static int check_tm_names(ncm_node_config *c, ncm_error *err)
{
        static const char *const policies[] = {NCM_TM_POLICY_NONE, NCM_TM_POLICY_BEST_EFFORT,
                                               NCM_TM_POLICY_RESTRICTED,
                                               NCM_TM_POLICY_SINGLE_NUMA_NODE};
        char path[256];
        bool ok = false;

        for (size_t i = 0; i < NCM_ELEMENTSOF(policies); i++)
                ok = ok || strcmp(c->tm_policy, policies[i]) == 0;
        if (!ok)
                return ncm_error_set(
                                err, EINVAL, "%s: unknown policy: \"%s\"",
                                ncm__node_field(c, "topologyManagerPolicy", path, sizeof(path)),
                                c->tm_policy);
        /* the kubelet's configuration validation checks the scope whatever the policy */
        if (strcmp(c->tm_scope, NCM_TM_SCOPE_CONTAINER) != 0 &&
            strcmp(c->tm_scope, NCM_TM_SCOPE_POD) != 0)
                return ncm_error_set(err, EINVAL, "%s: unknown scope: \"%s\"",
                                     ncm__node_field(c, "topologyManagerScope", path, sizeof(path)),
                                     c->tm_scope);
        return 0;
}

static int parse(ncm_node_config *c, json_object *o, ncm_error *err)
{
        char path[256];
        kv *p = NULL;
        size_t n = 0;
        int r;

        if (!json_object_is_type(o, json_type_object))
                return ncm_error_set(err, EINVAL, "%s: expected object, got %s",
                                     c->path[0] ? c->path : "kubelet configuration",
                                     ncm__json_type_name(o));
        json_object_object_foreach(o, key, val)
        {
                const char *t = typo_of(key);
                (void)val;
                if (t)
                        return ncm_error_set(err, EINVAL,
                                             "%s: unknown field (did you mean \"%s\"?)",
                                             ncm__node_field(c, key, path, sizeof(path)), t);
        }

        /* ValidateKubeletConfiguration: gates first */
        r = parse_gates(c, o, err);
        if (r < 0)
                return r;
        r = get_string(c, o, "topologyManagerPolicy", NCM_TM_POLICY_NONE, &c->tm_policy, err);
        if (r < 0)
                return r;
        r = get_string(c, o, "topologyManagerScope", NCM_TM_SCOPE_CONTAINER, &c->tm_scope, err);
        if (r < 0)
                return r;
        r = check_tm_names(c, err);
        if (r < 0)
                return r;

        r = get_string(c, o, "reservedSystemCPUs", NULL, &c->reserved_cpus_text, err);
        if (r < 0)
                return r;
        if (c->reserved_cpus_text && !c->reserved_cpus_text[0]) {
                free(c->reserved_cpus_text);
                c->reserved_cpus_text = NULL;
        }
        if (c->reserved_cpus_text) {
                ncm_error e = NCM_ERROR_INIT;
                ncm_autofree char *krc = NULL;
                ncm_autofree char *src = NULL;

                r = get_string(c, o, "kubeReservedCgroup", "", &krc, err);
                if (r >= 0)
                        r = get_string(c, o, "systemReservedCgroup", "", &src, err);
                if (r < 0)
                        return r;
                ncm__node_field(c, "reservedSystemCPUs", path, sizeof(path));
                if (krc[0] || src[0])
                        return ncm_error_set(err, EINVAL,
                                             "%s: invalid configuration: can't use "
                                             "reservedSystemCPUs (--reserved-cpus) with "
                                             "systemReservedCgroup (--system-reserved-cgroup) or "
                                             "kubeReservedCgroup (--kube-reserved-cgroup)",
                                             path);
                r = ncm_cpuset_parse_list(c->reserved_cpus_text, &c->reserved_cpus, &e);
                if (r < 0)
                        return ncm_error_set(err, EINVAL,
                                             "%s: invalid configuration: unable to parse "
                                             "reservedSystemCPUs (--reserved-cpus) %s, error: %s",
                                             path, c->reserved_cpus_text, e.msg);
                if (ncm_cpuset_is_empty(c->reserved_cpus)) {
                        c->reserved_cpus = ncm_cpuset_free(c->reserved_cpus);
                        free(c->reserved_cpus_text);
                        c->reserved_cpus_text = NULL;
                }
        }

        /* server.go: parseResourceList */
        r = parse_reserved(c, o, "kubeReserved", err);
        if (r < 0)
                return r;
        r = parse_reserved(c, o, "systemReserved", err);
        if (r < 0)
                return r;

        {
                ncm_autofree char *mm = NULL;
                r = get_string(c, o, "memoryManagerPolicy", "None", &mm, err);
                if (r < 0)
                        return r;
                if (strcmp(mm, "None") != 0)
                        return ncm_error_set(
                                        err, EINVAL,
                                        strcmp(mm, "Static") == 0
                                                        ? "%s: \"%s\": nodecm has no memory "
                                                          "manager (only \"None\" is supported)"
                                                        : "%s: unknown policy: \"%s\"",
                                        ncm__node_field(c, "memoryManagerPolicy", path,
                                                        sizeof(path)),
                                        mm);
        }

        /* cpuManagerReconcilePeriod: a duration (the reconcile loop of a running node) */
        r = get_duration(c, o, "cpuManagerReconcilePeriod", 10 * NS_PER_S, &c->reconcile_period_ns,
                         err);
        if (r < 0)
                return r;
        /* v1beta1 defaulting: 0 is nodeStatusUpdateFrequency, whose default is 10s */
        if (c->reconcile_period_ns == 0)
                c->reconcile_period_ns = 10 * NS_PER_S;

        /* topology manager options: NewManager parses them unless the policy is none */
        r = get_string_map(c, o, "topologyManagerPolicyOptions", &p, &n, err);
        if (r < 0)
                return r;
        c->tm_opts = calloc(n + 1, sizeof(*c->tm_opts));
        if (!c->tm_opts) {
                kv_free(p, n);
                return oom(err);
        }
        for (size_t i = 0; i < n; i++) {
                c->tm_opts[i].key = p[i].key;
                c->tm_opts[i].value = p[i].value;
        }
        c->n_tm_opts = n;
        free(p);
        p = NULL;
        if (strcmp(c->tm_policy, NCM_TM_POLICY_NONE) != 0) {
                ncm_tm_options to;
                r = ncm_tm_options_parse(c->tm_opts, c->n_tm_opts, c->tm_gates, &to, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s",
                                                ncm__node_field(c, "topologyManagerPolicyOptions",
                                                                path, sizeof(path)));
        }

        /* nodecm's own field: which kubelet release to reproduce (a string: 1.30 as a YAML
         * number would read as 1.3) */
        {
                ncm_autofree char *text = NULL;
                json_object *v = ncm__json_get(o, "kubeletVersion");
                ncm__node_field(c, "kubeletVersion", path, sizeof(path));
                if (v && !json_object_is_type(v, json_type_string))
                        return ncm_error_set(err, EINVAL,
                                             "%s: expected string, got %s (quote it, e.g. "
                                             "\"1.35\")",
                                             path, ncm__json_type_name(v));
                r = get_string(c, o, "kubeletVersion", NULL, &text, err);
                if (r < 0)
                        return r;
                if (text && ncm_kubelet_version_parse(text, &c->kubelet_version, err) < 0)
                        return ncm_error_prefix(err, "%s", path);
        }

        /* CPU manager: policy name, then its options (NewManager / NewStaticPolicy) */
        r = get_string(c, o, "cpuManagerPolicy", "none", &c->cpu_policy, err);
        if (r < 0)
                return r;
        if (strcmp(c->cpu_policy, "none") != 0 && strcmp(c->cpu_policy, "static") != 0)
                return ncm_error_set(err, EINVAL, "%s: unknown policy: \"%s\"",
                                     ncm__node_field(c, "cpuManagerPolicy", path, sizeof(path)),
                                     c->cpu_policy);
        r = get_string_map(c, o, "cpuManagerPolicyOptions", &p, &n, err);
        if (r < 0)
                return r;
        c->cpu_opts = calloc(n + 1, sizeof(*c->cpu_opts));
        if (!c->cpu_opts) {
                kv_free(p, n);
                return oom(err);
        }
        for (size_t i = 0; i < n; i++) {
                c->cpu_opts[i].key = p[i].key;
                c->cpu_opts[i].value = p[i].value;
        }
        c->n_cpu_opts = n;
        free(p);
        ncm__node_field(c, "cpuManagerPolicyOptions", path, sizeof(path));
        if (strcmp(c->cpu_policy, "none") == 0) {
                ncm_cpu_policy *np = NULL;
                r = ncm_cpu_none_policy_new(c->cpu_opts, c->n_cpu_opts, &np, err);
                ncm_cpu_policy_free(np);
                if (r < 0)
                        return ncm_error_prefix(err, "%s: new none policy error", path);
        } else {
                ncm_cpu_options co;
                r = ncm_cpu_options_parse_version(c->cpu_opts, c->n_cpu_opts, c->cpu_gates,
                                                  c->kubelet_version, &co, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s: new static policy error", path);
        }
        return parse_cgroup_fields(c, o, err);
}

static int config_from_json(json_object *o, const char *path, ncm_node_config **ret, ncm_error *err)
{
        ncm_autoptr(ncm_node_config) c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return oom(err);
        c->path = strdup(path ? path : "");
        if (!c->path)
                return oom(err);
        c->src = json_object_get(o);
        r = parse(c, o, err);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(c);
        return 0;
}

int ncm_node_config_from_json(json_object *o, const char *path, ncm_node_config **ret,
                              ncm_error *err)
{
        ncm_autojson empty = NULL;

        if (!o) {
                empty = json_object_new_object();
                if (!empty)
                        return oom(err);
                o = empty;
        }
        return config_from_json(o, path, ret, err);
}

int ncm_node_config_parse(const char *text, size_t len, const char *name, const char *path,
                          ncm_node_config **ret, ncm_error *err)
{
        ncm_autojson o = NULL;
        int r = ncm__json_or_yaml_parse(text, len, name ? name : "<config>", &o, err);
        if (r < 0)
                return r;
        if (!o || json_object_is_type(o, json_type_null))
                return ncm_node_config_from_json(NULL, path, ret, err);
        return ncm_node_config_from_json(o, path, ret, err);
}

int ncm_node_config_merge(const ncm_node_config *base, json_object *o, const char *path,
                          ncm_node_config **ret, ncm_error *err)
{
        ncm_autojson merged = json_object_new_object();

        if (!merged)
                return oom(err);
        if (o && !json_object_is_type(o, json_type_object))
                return ncm_error_set(err, EINVAL, "%s: expected object, got %s",
                                     path && path[0] ? path : "kubelet configuration",
                                     ncm__json_type_name(o));
        if (base->src && json_object_is_type(base->src, json_type_object)) {
                json_object_object_foreach(base->src, bk, bv)
                {
                        if (json_object_object_add(merged, bk, json_object_get(bv)) < 0)
                                return oom(err);
                }
        }
        if (o) {
                json_object_object_foreach(o, ok, ov)
                {
                        json_object *bv = ncm__json_get(merged, ok);
                        /* feature gates merge gate by gate, as the kubelet's flags over its
                         * file do; every other field is replaced */
                        if (strcmp(ok, "featureGates") == 0 && bv && ov &&
                            json_object_is_type(bv, json_type_object) &&
                            json_object_is_type(ov, json_type_object)) {
                                json_object *g = json_object_new_object();
                                if (!g)
                                        return oom(err);
                                json_object_object_foreach(bv, gk, gv)
                                                json_object_object_add(g, gk, json_object_get(gv));
                                json_object_object_foreach(ov, hk, hv)
                                                json_object_object_add(g, hk, json_object_get(hv));
                                if (json_object_object_add(merged, ok, g) < 0) {
                                        json_object_put(g);
                                        return oom(err);
                                }
                                continue;
                        }
                        if (json_object_object_add(merged, ok, json_object_get(ov)) < 0)
                                return oom(err);
                }
        }
        return config_from_json(merged, path, ret, err);
}

int ncm_node_config_merge_text(const ncm_node_config *base, const char *text, size_t len,
                               const char *name, const char *path, ncm_node_config **ret,
                               ncm_error *err)
{
        ncm_autojson o = NULL;
        int r = ncm__json_or_yaml_parse(text, len, name ? name : "<config>", &o, err);
        if (r < 0)
                return r;
        return ncm_node_config_merge(base, o && !json_object_is_type(o, json_type_null) ? o : NULL,
                                     path, ret, err);
}

int ncm_node_config_load_file(const char *path, ncm_node_config **ret, ncm_error *err)
{
        static const char *const versions[] = {"kubelet.config.k8s.io/v1beta1",
                                               "kubelet.config.k8s.io/v1alpha1",
                                               "kubelet.config.k8s.io/v1"};
        const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
        ncm_autojson o = NULL;
        json_object *v;
        int r;

        r = ncm__json_load_file(path, &o, err);
        if (r < 0)
                return r;
        if (!o || json_object_is_type(o, json_type_null))
                return ncm_node_config_from_json(NULL, "", ret, err);
        if (!json_object_is_type(o, json_type_object))
                return ncm_error_set(err, EINVAL,
                                     "%s: expected a KubeletConfiguration object, got %s", name,
                                     ncm__json_type_name(o));
        v = ncm__json_get(o, "kind");
        if (v && (!json_object_is_type(v, json_type_string) ||
                  strcmp(json_object_get_string(v), "KubeletConfiguration") != 0))
                return ncm_error_set(err, EINVAL, "%s: kind: expected KubeletConfiguration, got %s",
                                     name, json_object_to_json_string(v));
        v = ncm__json_get(o, "apiVersion");
        if (v) {
                bool ok = false;
                for (size_t i = 0;
                     i < NCM_ELEMENTSOF(versions) && json_object_is_type(v, json_type_string); i++)
                        ok = ok || strcmp(json_object_get_string(v), versions[i]) == 0;
                if (!ok)
                        return ncm_error_set(err, EINVAL,
                                             "%s: apiVersion: expected "
                                             "kubelet.config.k8s.io/v1beta1, got %s",
                                             name, json_object_to_json_string(v));
        }
        r = ncm_node_config_from_json(o, "", ret, err);
        if (r < 0 && r != -ENOMEM)
                ncm_error_prefix(err, "%s", name);
        return r;
}

const char *ncm_node_config_cgroup_root(const ncm_node_config *c)
{
        return c->cgroup_root;
}

const char *ncm_node_config_cgroup_driver(const ncm_node_config *c)
{
        return c->cgroup_driver;
}

bool ncm_node_config_cgroups_per_qos(const ncm_node_config *c)
{
        return c->cgroups_per_qos;
}

unsigned ncm_node_config_enforce(const ncm_node_config *c)
{
        return c->enforce;
}

const char *ncm_node_config_kube_reserved_cgroup(const ncm_node_config *c)
{
        return c->kube_reserved_cgroup;
}

const char *ncm_node_config_system_reserved_cgroup(const ncm_node_config *c)
{
        return c->system_reserved_cgroup;
}

const ncm_resource_list *ncm_node_config_kube_reserved(const ncm_node_config *c)
{
        return c->has_kube_reserved ? &c->kube_reserved : NULL;
}

const ncm_resource_list *ncm_node_config_system_reserved(const ncm_node_config *c)
{
        return c->has_system_reserved ? &c->system_reserved : NULL;
}

const ncm_eviction_thresholds *ncm_node_config_eviction_hard(const ncm_node_config *c)
{
        return &c->eviction_hard;
}

bool ncm_node_config_feature_gate(const ncm_node_config *c, const char *name, bool def)
{
        return gate(c, name, def);
}

int64_t ncm_node_config_reconcile_period_ns(const ncm_node_config *c)
{
        return c->reconcile_period_ns;
}

const char *ncm_node_config_root_dir(const ncm_node_config *c)
{
        return c->root_dir;
}

const char *ncm_node_config_enforcement(const ncm_node_config *c)
{
        return c->enforcement;
}

void ncm_node_config_pod_options(const ncm_node_config *c, ncm_cgroup_pod_options *ret)
{
        ncm_cgroup_pod_options_init(ret);
        ret->enforce_cpu_limits = c->cpu_cfs_quota;
        ret->cpu_period = (uint64_t)(c->cpu_cfs_quota_period_ns / 1000);
        ret->custom_cpu_period = gate(c, "CustomCPUCFSQuotaPeriod", false);
        ret->pod_level_resources = gate(c, "PodLevelResources", true);
        ret->memory_qos = c->memory_qos;
        ret->pod_pids_limit = c->pod_pids_limit;
        ret->static_cpu_manager = strcmp(c->cpu_policy, "static") == 0;
        ret->disable_cpu_quota_with_exclusive_cpus =
                        gate(c, "DisableCPUQuotaWithExclusiveCPUs", true);
}

/* Fields a running node takes without a restart; every other known field needs one. */
static const char *const live_fields[] = {
                "cpuManagerReconcilePeriod",
                "cpuCFSQuota",
                "cpuCFSQuotaPeriod",
                "podPidsLimit",
                "evictionHard",
                "mergeDefaultEvictionSettings",
                "memoryReservationPolicy",
};

static bool is_live(const char *field)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(live_fields); i++)
                if (strcmp(field, live_fields[i]) == 0)
                        return true;
        return false;
}

ncm_node_config_change ncm_node_config_compare(const ncm_node_config *old_cfg,
                                               const ncm_node_config *new_cfg,
                                               const char **ret_field)
{
        ncm_node_config_change change = NCM_NODE_CONFIG_UNCHANGED;

        if (ret_field)
                *ret_field = NULL;
        for (size_t i = 0; i < NCM_ELEMENTSOF(known_fields); i++) {
                const char *f = known_fields[i];
                json_object *a = old_cfg->src ? ncm__json_get(old_cfg->src, f) : NULL;
                json_object *b = new_cfg->src ? ncm__json_get(new_cfg->src, f) : NULL;
                if ((!a && !b) || (a && b && json_object_equal(a, b)))
                        continue;
                if (is_live(f)) {
                        if (change == NCM_NODE_CONFIG_UNCHANGED)
                                change = NCM_NODE_CONFIG_LIVE;
                        continue;
                }
                if (ret_field)
                        *ret_field = f;
                return NCM_NODE_CONFIG_RESTART;
        }
        return change;
}
