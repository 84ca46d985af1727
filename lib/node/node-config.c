/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The KubeletConfiguration fields the node reads, checked as the kubelet checks them: its
 * decoder (string maps of strings), ValidateKubeletConfiguration (feature gates, topology
 * manager policy and scope, reservedSystemCPUs syntax), server.go's parseResourceList for
 * kubeReserved / systemReserved, and the managers' option parsing (NewManager). Checks that need
 * the machine are ncm_node_new()'s.
 */
#include <errno.h>
#include <stdarg.h>
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
                "reservedMemory",
                "memoryManagerPolicyOptions",
                "cpusetMems",
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
                "maxPods",
                "podsPerCore",
                "failCgroupV1",
                "singleProcessOOMKill",
                "fitAdmission",
                "isolatedCPUs",
                "irqBalanceConfigFile",
                "deviceLocalCPUs",
                "draTopologyHints",
                "cdiSpecDirs",
                "devicePCI",
};

const char *ncm__node_field(const ncm_node_config *c, const char *field, char *buf, size_t size)
{
        if (!c->path || !c->path[0])
                snprintf(buf, size, "%s", field);
        else
                snprintf(buf, size, "%s.%s", c->path, field);
        return buf;
}

ncm_node_config *ncm_node_config_free(ncm_node_config *c)
{
        if (!c)
                return NULL;
        if (c->src)
                json_object_put(c->src);
        free(c->path);
        free(c->cpu_policy);
        ncm__node_mem_config_done(c);
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
        for (size_t i = 0; i < c->n_warnings; i++)
                free(c->warnings[i]);
        free(c->warnings);
        ncm__node_locality_config_done(c);
        free(c);
        return NULL;
}

size_t ncm_node_config_n_warnings(const ncm_node_config *c)
{
        return c->n_warnings;
}

const char *ncm_node_config_warning(const ncm_node_config *c, size_t i)
{
        return i < c->n_warnings ? c->warnings[i] : NULL;
}

int ncm__node_config_warn(ncm_node_config *c, ncm_error *err, const char *fmt, ...)
{
        char *s = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0 || ncm__array_grow(c->warnings, c->cap_warnings, c->n_warnings) < 0) {
                if (n >= 0)
                        free(s);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        c->warnings[c->n_warnings++] = s;
        return 0;
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

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The minor release of the kubelet C reproduces. */
static int kubelet_minor(const ncm_node_config *c)
{
        if (c->kubelet_version.major == 0)
                return NCM_KUBELET_DEFAULT_MINOR;
        return c->kubelet_version.minor > NCM_KUBELET_NEWEST_MINOR ? NCM_KUBELET_NEWEST_MINOR
                                                                   : c->kubelet_version.minor;
}

/* The Go map text of an option map ("map[a:b c:d]", keys sorted), as %v prints it. */
static void go_map_text(json_object *m, ncm_buf *b)
{
        const char *keys[256];
        size_t n = 0;

        json_object_object_foreach(m, k, v)
        {
                (void)v;
                if (n < NCM_ELEMENTSOF(keys))
                        keys[n++] = k;
        }
        qsort(keys, n, sizeof(*keys), cmp_str);
        ncm_buf_puts(b, "map[");
        for (size_t i = 0; i < n; i++) {
                json_object *val = ncm__json_get(m, keys[i]);
                ncm_buf_printf(b, "%s%s:%s", i ? " " : "", keys[i],
                               val && json_object_is_type(val, json_type_string)
                                               ? json_object_get_string(val)
                                               : "");
        }
        ncm_buf_putc(b, ']');
}

/*
 * An option map FIELD set while its gate is off: the kubelet's error, "WHAT map[...] require
 * feature gates GATES enabled"; 0 when the field is not set.
 */
static int option_map_refused(const ncm_node_config *c, json_object *o, const char *field,
                              const char *what, const char *gates, ncm_error *err)
{
        json_object *m = ncm__json_get(o, field);
        ncm_buf b = NCM_BUF_INIT;
        char path[256];
        int r;

        if (!m)
                return 0;
        go_map_text(m, &b);
        r = ncm_error_set(err, EINVAL, "%s: %s %s require feature gates %s enabled",
                          ncm__node_field(c, field, path, sizeof(path)), what,
                          b.data ? b.data : "map[]", gates);
        ncm_buf_done(&b);
        return r;
}

/*
 * featureGates, as the kubelet's SetFromMap sets them for its release (node-config-gates.c:
 * unknown and locked gates refused, GA and deprecated ones warned about), in name order (Go's
 * map order is random: the first error of several is then the first by name). The option gates
 * are applied, AllAlpha and AllBeta included for the option gates that are always alpha or
 * beta; other gates are kept by name for the readers that need them (gate()).
 */
static int parse_gates(ncm_node_config *c, json_object *o, ncm_error *err)
{
        json_object *v = ncm__json_get(o, "featureGates");
        size_t cap = c->n_gates, n = 0;
        ncm_autofree const char **names = NULL;
        bool set_alpha = false, set_beta = false, set_tm_alpha = false, set_tm_beta = false;
        bool all_alpha = false, all_beta = false;
        bool cpu_opts = true, tm_opts = true;
        int minor = kubelet_minor(c);
        char path[256];
        int r;

        c->cpu_gates = NCM_CPU_GATES_DEFAULT;
        c->tm_gates = NCM_TM_GATES_DEFAULT;
        ncm__node_field(c, "featureGates", path, sizeof(path));
        if (v && !json_object_is_type(v, json_type_object))
                return ncm_error_set(err, EINVAL, "%s: expected object, got %s", path,
                                     ncm__json_type_name(v));
        if (v) {
                names = calloc((size_t)json_object_object_length(v) + 1, sizeof(*names));
                if (!names)
                        return oom(err);
                json_object_object_foreach(v, key, val)
                {
                        (void)val;
                        names[n++] = key;
                }
                qsort(names, n, sizeof(*names), cmp_str);
        }
        for (size_t i = 0; i < n; i++) {
                const char *key = names[i];
                json_object *val = ncm__json_get(v, key);
                bool on;
                if (!val || !json_object_is_type(val, json_type_boolean))
                        return ncm_error_set(err, EINVAL, "%s.%s: expected boolean, got %s", path,
                                             key, val ? ncm__json_type_name(val) : "null");
                on = json_object_get_boolean(val);
                r = ncm__node_gate_set(c, path, key, on, minor, err);
                if (r < 0)
                        return r;
                if (ncm__array_grow(c->gates, cap, c->n_gates) < 0 ||
                    !(c->gates[c->n_gates].name = strdup(key)))
                        return oom(err);
                c->gates[c->n_gates++].on = on;
                if (strcmp(key, "CPUManagerPolicyAlphaOptions") == 0)
                        c->cpu_gates.alpha_options = on, set_alpha = true;
                else if (strcmp(key, "CPUManagerPolicyBetaOptions") == 0)
                        c->cpu_gates.beta_options = on, set_beta = true;
                else if (strcmp(key, "TopologyManagerPolicyAlphaOptions") == 0)
                        c->tm_gates.alpha_options = on, set_tm_alpha = true;
                else if (strcmp(key, "TopologyManagerPolicyBetaOptions") == 0)
                        c->tm_gates.beta_options = on, set_tm_beta = true;
                else if (strcmp(key, "AllAlpha") == 0)
                        all_alpha = on;
                else if (strcmp(key, "AllBeta") == 0)
                        all_beta = on;
                else if (strcmp(key, "CPUManagerPolicyOptions") == 0)
                        cpu_opts = on;
                else if (strcmp(key, "TopologyManagerPolicyOptions") == 0)
                        tm_opts = on;
        }
        /* AllAlpha/AllBeta set every alpha/beta gate not set by name */
        if (all_alpha && !set_alpha)
                c->cpu_gates.alpha_options = true;
        if (all_alpha && !set_tm_alpha)
                c->tm_gates.alpha_options = true;
        if (all_beta && !set_beta)
                c->cpu_gates.beta_options = true;
        if (all_beta && !set_tm_beta)
                c->tm_gates.beta_options = true;

        /* server.go: the option maps need their (GA, not always locked) gates */
        r = cpu_opts ? 0
                     : option_map_refused(c, o, "cpuManagerPolicyOptions",
                                          "CPU Manager policy options",
                                          "\"CPUManager\", \"CPUManagerPolicyOptions\"", err);
        if (r == 0 && !tm_opts)
                r = option_map_refused(c, o, "topologyManagerPolicyOptions",
                                       "topology manager policy options",
                                       "\"TopologyManagerPolicyOptions\"", err);
        return r;
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
                /* server.go replaces the cpu entries before it parses the lists: a value there
                 * is never read (override_reserved_cpu) */
                if (c->reserved_cpus && strcmp(p[i].key, "cpu") == 0) {
                        c->reserved_cpu_given = true;
                        continue;
                }
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

static void resource_list_del(ncm_resource_list *l, const char *name)
{
        for (size_t i = 0; i < l->n; i++) {
                if (strcmp(l->items[i].name, name) != 0)
                        continue;
                free(l->items[i].name);
                memmove(&l->items[i], &l->items[i + 1], (l->n - i - 1) * sizeof(*l->items));
                l->n--;
                return;
        }
}

/*
 * server.go, before it parses the reservations: "Option --reserved-cpus is specified, it will
 * overwrite the cpu setting in KubeReserved and SystemReserved" -- kubeReserved.cpu is
 * deleted and systemReserved.cpu becomes the number of reserved CPUs, so that node
 * allocatable, the kubepods limits and the static policy's reservation all count exactly the
 * reserved CPUs.
 */
static int override_reserved_cpu(ncm_node_config *c, ncm_error *err)
{
        unsigned count = ncm_cpuset_weight(c->reserved_cpus);
        char text[24];
        ncm_quantity q;

        snprintf(text, sizeof(text), "%u", count);
        if (ncm_quantity_parse(text, &q, err) < 0)
                return -EINVAL;
        resource_list_del(&c->kube_reserved, "cpu");
        if (ncm_cgroup_resource_list_set(&c->system_reserved, "cpu", &q) < 0)
                return oom(err);
        c->has_system_reserved = true;
        c->reserved_milli_set = true;
        c->reserved_milli = (int64_t)count * 1000;
        if (c->reserved_cpu_given)
                return ncm__node_config_warn(
                                c, err,
                                "reservedSystemCPUs \"%s\" overrides the cpu of kubeReserved "
                                "(removed) and systemReserved (set to %u), as the kubelet does",
                                c->reserved_cpus_text, count);
        return 0;
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
        /* the node's pod capacity (ValidateKubeletConfiguration's texts) */
        r = get_int64(c, o, "maxPods", 110, &c->max_pods, err);
        if (r >= 0)
                r = get_int64(c, o, "podsPerCore", 0, &c->pods_per_core, err);
        if (r < 0)
                return r;
        if (c->max_pods < INT32_MIN || c->max_pods > INT32_MAX || c->pods_per_core < INT32_MIN ||
            c->pods_per_core > INT32_MAX)
                return ncm_error_set(
                                err, ERANGE, "%s: out of range for an int32",
                                ncm__node_field(c,
                                                c->max_pods < INT32_MIN || c->max_pods > INT32_MAX
                                                                ? "maxPods"
                                                                : "podsPerCore",
                                                path, sizeof(path)));
        if (c->max_pods < 0)
                return ncm_error_set(err, EINVAL,
                                     "%s: invalid configuration: maxPods (--max-pods) %lld must "
                                     "not be a negative number",
                                     ncm__node_field(c, "maxPods", path, sizeof(path)),
                                     (long long)c->max_pods);
        if (c->pods_per_core < 0)
                return ncm_error_set(err, EINVAL,
                                     "%s: invalid configuration: podsPerCore (--pods-per-core) "
                                     "%lld must not be a negative number",
                                     ncm__node_field(c, "podsPerCore", path, sizeof(path)),
                                     (long long)c->pods_per_core);
        {
                ncm_autofree char *fit = NULL;
                r = get_string(c, o, "fitAdmission", "auto", &fit, err);
                if (r < 0)
                        return r;
                if (strcmp(fit, "auto") == 0)
                        c->fit_admission = NCM_NODE_FIT_AUTO;
                else if (strcmp(fit, "always") == 0)
                        c->fit_admission = NCM_NODE_FIT_ALWAYS;
                else if (strcmp(fit, "never") == 0)
                        c->fit_admission = NCM_NODE_FIT_NEVER;
                else
                        return ncm_error_set(err, EINVAL,
                                             "%s: unknown fitAdmission \"%s\" (auto, always or "
                                             "never)",
                                             ncm__node_field(c, "fitAdmission", path, sizeof(path)),
                                             fit);
        }
        /* failCgroupV1 defaults to true from 1.35 (KEP-5573, cgroup v1 unsupported) */
        r = get_bool(c, o, "failCgroupV1", kubelet_minor(c) >= 35, &c->fail_cgroup_v1, err);
        if (r >= 0) {
                bool single = true;
                r = get_bool(c, o, "singleProcessOOMKill", true, &single, err);
                c->single_oom_kill_off = ncm__json_get(o, "singleProcessOOMKill") && !single;
        }
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
        r = ncm__node_config_isolation(c, o, err);
        return r < 0 ? r : ncm__node_locality_config(c, o, err);
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
        if (r >= 0 && c->reserved_cpus)
                r = override_reserved_cpu(c, err);
        if (r < 0)
                return r;

        /* memory manager: memoryManagerPolicy, reservedMemory
         * (validateReservedMemoryConfiguration), memoryManagerPolicyOptions (node-memory.c) */
        r = ncm__node_mem_config(c, o, gate(c, "MemoryManagerDriftTolerance", false), err);
        if (r < 0)
                return r;

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

static int config_from_json(json_object *o, const char *path, ncm_node_config_decoding decoding,
                            const ncm_json_info *info, const ncm_node_config *base,
                            ncm_node_config **ret, ncm_error *err)
{
        ncm_autoptr(ncm_node_config) c = calloc(1, sizeof(*c));
        ncm_autojson view = NULL;
        int r;

        if (!c)
                return oom(err);
        c->path = strdup(path ? path : "");
        if (!c->path)
                return oom(err);
        c->decoding = decoding;
        c->src = json_object_get(o);
        /* a merge keeps what the base's document said (its repeats, its other documents) */
        for (size_t i = 0; base && i < base->n_doc_warnings; i++) {
                r = ncm__node_config_warn(c, err, "%s", base->warnings[i]);
                if (r < 0)
                        return r;
                c->n_doc_warnings = c->n_warnings;
        }
        if (json_object_is_type(o, json_type_object)) {
                r = ncm__node_config_check_kind(o, false, err);
                if (r < 0)
                        return c->path[0] ? ncm_error_prefix(err, "%s", c->path) : r;
                r = ncm__node_config_decode(c, o, info, &view, err);
                if (r < 0)
                        return r;
                o = view;
        }
        r = parse(c, o, err);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(c);
        return 0;
}

int ncm_node_config_from_json_ex(json_object *o, const char *path,
                                 ncm_node_config_decoding decoding, ncm_node_config **ret,
                                 ncm_error *err)
{
        ncm_autojson empty = NULL;

        if (!o) {
                empty = json_object_new_object();
                if (!empty)
                        return oom(err);
                o = empty;
        }
        return config_from_json(o, path, decoding, NULL, NULL, ret, err);
}

int ncm_node_config_from_json(json_object *o, const char *path, ncm_node_config **ret,
                              ncm_error *err)
{
        return ncm_node_config_from_json_ex(o, path, NCM_NODE_CONFIG_STRICT, ret, err);
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
        return config_from_json(merged, path, base->decoding, NULL, base, ret, err);
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

int ncm_node_config_decoding_parse(const char *s, ncm_node_config_decoding *ret)
{
        if (strcmp(s, "lenient") == 0)
                *ret = NCM_NODE_CONFIG_LENIENT;
        else if (strcmp(s, "strict") == 0)
                *ret = NCM_NODE_CONFIG_STRICT;
        else
                return -EINVAL;
        return 0;
}

int ncm_node_config_load_file_ex(const char *path, ncm_node_config_decoding decoding,
                                 ncm_node_config **ret, ncm_error *err)
{
        const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
        ncm_json_info info = {0};
        ncm_autojson o = NULL;
        size_t len = 0;
        int r;

        /* the first YAML document, repeats reported, JSON as Go decodes it
         * (sigs.k8s.io/yaml and sigs.k8s.io/json under the kubelet's codec) */
        r = ncm__json_load_file_ex(path, NCM_JSON_FIRST_DOCUMENT | NCM_JSON_GO, &o, &len, &info,
                                   err);
        if (r < 0)
                return r;
        /* pkg/kubelet/kubeletconfig/configfiles: "no configuration is an error" */
        if (len == 0)
                r = ncm_error_set(err, EINVAL, "kubelet config file \"%s\" was empty", name);
        if (r >= 0)
                r = ncm__node_config_check_kind(o, true, err);
        if (r < 0) {
                ncm__json_info_done(&info);
                return r == -ENOMEM || len == 0 ? r : ncm_error_prefix(err, "%s", name);
        }
        r = config_from_json(o, "", decoding, &info, NULL, ret, err);
        ncm__json_info_done(&info);
        if (r < 0 && r != -ENOMEM)
                ncm_error_prefix(err, "%s", name);
        return r;
}

int ncm_node_config_load_file(const char *path, ncm_node_config **ret, ncm_error *err)
{
        return ncm_node_config_load_file_ex(path, NCM_NODE_CONFIG_LENIENT, ret, err);
}

ncm_node_config_decoding ncm_node_config_get_decoding(const ncm_node_config *c)
{
        return c->decoding;
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

int64_t ncm_node_config_max_pods(const ncm_node_config *c)
{
        return c->max_pods;
}

int64_t ncm_node_config_pods_per_core(const ncm_node_config *c)
{
        return c->pods_per_core;
}

ncm_node_fit_admission ncm_node_config_fit_admission(const ncm_node_config *c)
{
        return c->fit_admission;
}

int ncm_node_config_check_host(const ncm_node_config *c, const ncm_cgroup_layout *l, ncm_error *err)
{
        char path[256];

        if (ncm_cgroup_layout_version(l) != 1)
                return 0;
        if (c->fail_cgroup_v1)
                return ncm_error_set(err, EINVAL,
                                     "%s: failed to validate kubelet configuration, error: "
                                     "kubelet is configured to not run on a host using cgroup "
                                     "v1. cgroup v1 support is %s (kubelet %s%d refuses %s; "
                                     "failCgroupV1: false lets it start)",
                                     ncm__node_field(c, "failCgroupV1", path, sizeof(path)),
                                     kubelet_minor(c) >= 35
                                                     ? "unsupported and will be removed in a "
                                                       "future release"
                                                     : "in maintenance mode",
                                     "1.", kubelet_minor(c),
                                     l->mode == NCM_CGROUP_MODE_HYBRID ? "cgroup v1 (hybrid)"
                                                                       : "cgroup v1");
        if (c->single_oom_kill_off)
                return ncm_error_set(
                                err, EINVAL,
                                "%s: failed to validate kubelet configuration, error: "
                                "invalid configuration: singleProcessOOMKill must not be "
                                "explicitly set to false when using cgroup v1",
                                ncm__node_field(c, "singleProcessOOMKill", path, sizeof(path)));
        return 0;
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
        ret->pod_level_resources = gate(c, "PodLevelResources", kubelet_minor(c) >= 34);
        ret->memory_qos = c->memory_qos;
        ret->pod_pids_limit = c->pod_pids_limit;
        ret->static_cpu_manager = strcmp(c->cpu_policy, "static") == 0;
        ret->disable_cpu_quota_with_exclusive_cpus =
                        gate(c, "DisableCPUQuotaWithExclusiveCPUs", true);
}

/* Fields a running node takes without a restart; every other known field needs one. */
static const char *const live_fields[] = {
                "cpuManagerReconcilePeriod",
                "fitAdmission",
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

/* ---- the configuration a node was started with (issue 20) ------------------------------- */

/*
 * What a node records of its configuration: the fields it reads but rootDirectory (the kubelet
 * takes it as a flag; a directory moved elsewhere is the same node).
 */
static bool recorded_field(const char *f)
{
        return strcmp(f, "rootDirectory") != 0;
}

/* The fields the node reads, as C took them (absent ones left out), in known_fields' order. */
static json_object *canonical(const ncm_node_config *c)
{
        json_object *o = json_object_new_object();

        for (size_t i = 0; o && i < NCM_ELEMENTSOF(known_fields); i++) {
                json_object *v = c->src && recorded_field(known_fields[i])
                                                 ? ncm__json_get(c->src, known_fields[i])
                                                 : NULL;
                if (v && json_object_object_add(o, known_fields[i], json_object_get(v)) < 0) {
                        json_object_put(v);
                        json_object_put(o);
                        return NULL;
                }
        }
        return o;
}

int ncm_node_config_format(const ncm_node_config *c, ncm_buf *b)
{
        json_object *o = canonical(c);
        const char *text;

        if (!o)
                return -ENOMEM;
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        ncm_buf_puts(b, "{\"apiVersion\": \"kubelet.config.k8s.io/v1beta1\", \"kind\": "
                        "\"KubeletConfiguration\"");
        /* the fields after the header: TEXT is "{...}", "{}" when none */
        if (text && strlen(text) > 2) {
                ncm_buf_puts(b, ", ");
                ncm_buf_append(b, text + 1, strlen(text) - 1);
        } else {
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, '\n');
        json_object_put(o);
        return ncm_buf_failed(b) ? -ENOMEM : 0;
}

int ncm_node_config_diff(const ncm_node_config *a, const ncm_node_config *b, ncm_buf *out)
{
        int n = 0;

        for (size_t i = 0; i < NCM_ELEMENTSOF(known_fields); i++) {
                const char *f = known_fields[i];
                json_object *x = a->src ? ncm__json_get(a->src, f) : NULL;
                json_object *y = b->src ? ncm__json_get(b->src, f) : NULL;
                if (!recorded_field(f) || (!x && !y) || (x && y && json_object_equal(x, y)))
                        continue;
                ncm_buf_printf(out, "%s%s: %s -> %s", n ? "; " : "", f,
                               x ? json_object_to_json_string_ext(x, JSON_C_TO_STRING_PLAIN)
                                 : "(unset)",
                               y ? json_object_to_json_string_ext(y, JSON_C_TO_STRING_PLAIN)
                                 : "(unset)");
                n++;
        }
        return ncm_buf_failed(out) ? -ENOMEM : n;
}
