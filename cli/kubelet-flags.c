/* SPDX-License-Identifier: Apache-2.0 */
/* The kubelet's flags, as KubeletConfiguration fields laid over the --config file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroups.h>
#include "cli.h"
#include "kubelet-flags.h"

typedef enum kind {
        K_STRING,
        K_BOOL,
        K_INT,
        K_LIST, /* comma-separated -> []string */
        K_MAP,  /* k=v,... -> map, repeated flags add */
        K_EVICTION /* k<v,... -> map, a repeated flag replaces */,
        K_GATES, /* K=BOOL,... -> map of booleans, repeated flags add */
        K_MEMORY_QOS,
        K_RESERVED_MEMORY, /* the kubelet's --reserved-memory syntax -> reservedMemory list */
} kind;

static const struct flag_def {
        const char *flag;
        const char *field;
        kind kind;
} defs[] = {
                {"kube-reserved", "kubeReserved", K_MAP},
                {"system-reserved", "systemReserved", K_MAP},
                {"eviction-hard", "evictionHard", K_EVICTION},
                {"enforce-node-allocatable", "enforceNodeAllocatable", K_LIST},
                {"kube-reserved-cgroup", "kubeReservedCgroup", K_STRING},
                {"system-reserved-cgroup", "systemReservedCgroup", K_STRING},
                {"cpu-manager-policy", "cpuManagerPolicy", K_STRING},
                {"reserved-cpus", "reservedSystemCPUs", K_STRING},
                {"topology-manager-policy", "topologyManagerPolicy", K_STRING},
                {"topology-manager-scope", "topologyManagerScope", K_STRING},
                {"cgroup-root", "cgroupRoot", K_STRING},
                {"cgroup-driver", "cgroupDriver", K_STRING},
                {"cgroups-per-qos", "cgroupsPerQOS", K_BOOL},
                {"cpu-cfs-quota", "cpuCFSQuota", K_BOOL},
                {"cpu-cfs-quota-period", "cpuCFSQuotaPeriod", K_STRING},
                {"pod-pids-limit", "podPidsLimit", K_INT},
                {"feature-gates", "featureGates", K_GATES},
                {"memory-qos", "memoryReservationPolicy", K_MEMORY_QOS},
                {"memory-manager-policy", "memoryManagerPolicy", K_STRING},
                {"reserved-memory", "reservedMemory", K_RESERVED_MEMORY},
                {"kubelet-version", "kubeletVersion", K_STRING},
                {"root-dir", "rootDirectory", K_STRING},
                {"enforce", "enforcement", K_STRING},
};

typedef struct kv {
        char *k, *v;
} kv;

typedef struct value {
        bool given;
        char *scalar; /* STRING, BOOL, INT, MEMORY_QOS (as JSON text for BOOL/INT) */
        kv *pairs;    /* LIST (k only), MAP, EVICTION, GATES */
        size_t n;
} value;

struct cli_kubelet_flags {
        const char *config;                /* --config FILE */
        ncm_node_config_decoding decoding; /* --config-decoding */
        value v[NCM_ELEMENTSOF(defs)];
        ncm_mem_reservations reserved_memory; /* --reserved-memory, every flag appended */
};

cli_kubelet_flags *cli_kubelet_flags_new(void)
{
        return calloc(1, sizeof(cli_kubelet_flags));
}

static void value_clear(value *v)
{
        free(v->scalar);
        for (size_t i = 0; i < v->n; i++) {
                free(v->pairs[i].k);
                free(v->pairs[i].v);
        }
        free(v->pairs);
        *v = (value){0};
}

void cli_kubelet_flags_free(cli_kubelet_flags *f)
{
        if (!f)
                return;
        for (size_t i = 0; i < NCM_ELEMENTSOF(defs); i++)
                value_clear(&f->v[i]);
        ncm_mem_reservations_done(&f->reserved_memory);
        free(f);
}

static int def_index(const char *flag)
{
        if (strcmp(flag, "driver") == 0)
                flag = "cgroup-driver";
        for (size_t i = 0; i < NCM_ELEMENTSOF(defs); i++)
                if (strcmp(defs[i].flag, flag) == 0)
                        return (int)i;
        return -1;
}

/* Set K to V (a later value replaces an earlier one, keeping its place). */
static int put_pair(value *v, const char *k, size_t kl, const char *val, size_t vl)
{
        char *key = strndup(k, kl), *vv = val ? strndup(val, vl) : NULL;
        kv *np;

        if (!key || (val && !vv))
                goto oom;
        for (size_t i = 0; i < v->n; i++)
                if (strcmp(v->pairs[i].k, key) == 0) {
                        free(key);
                        free(v->pairs[i].v);
                        v->pairs[i].v = vv;
                        return 0;
                }
        np = realloc(v->pairs, (v->n + 1) * sizeof(*np));
        if (!np)
                goto oom;
        v->pairs = np;
        v->pairs[v->n++] = (kv){key, vv};
        return 0;
oom:
        free(key);
        free(vv);
        return -ENOMEM;
}

static int pair_cb(const char *k, size_t kl, const char *v, size_t vl, void *ud)
{
        return put_pair(ud, k, kl, v, vl);
}

/* strconv.ParseBool, as Go's flag package uses it. */
static int parse_bool(const char *s, bool *ret)
{
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

/* The values (the names are checked with the configuration: which gates exist depends on the
 * kubelet release, --kubelet-version). */
static int check_gates(const value *v, const char *cmd)
{
        for (size_t i = 0; i < v->n; i++) {
                bool on;
                if (parse_bool(v->pairs[i].v, &on) < 0)
                        return cli_usage_error(cmd,
                                               "--feature-gates: invalid value of %s=%s, err: "
                                               "strconv.ParseBool: parsing \"%s\": invalid syntax",
                                               v->pairs[i].k, v->pairs[i].v, v->pairs[i].v);
        }
        return 0;
}

int cli_kubelet_flag(cli_kubelet_flags *f, const char *cmd, const char *name, const char *val)
{
        ncm_error err = NCM_ERROR_INIT;
        int i, r = 0;
        value *v;

        if (strcmp(name, "config") == 0) {
                f->config = val;
                return 0;
        }
        if (strcmp(name, "config-decoding") == 0) {
                if (ncm_node_config_decoding_parse(val, &f->decoding) < 0)
                        return cli_usage_error(cmd,
                                               "--config-decoding: expected lenient or strict, "
                                               "got '%s'",
                                               val);
                return 0;
        }
        i = def_index(name);
        if (i < 0)
                return cli_usage_error(cmd, "unknown option '--%s'", name);
        v = &f->v[i];
        v->given = true;
        switch (defs[i].kind) {
        case K_STRING:
        case K_INT:
        case K_MEMORY_QOS:
        case K_BOOL:
                if (defs[i].kind == K_BOOL) {
                        bool on;
                        if (parse_bool(val, &on) < 0)
                                return cli_usage_error(cmd, "--%s: invalid boolean '%s'", name,
                                                       val);
                        val = on ? "true" : "false";
                } else if (defs[i].kind == K_INT) {
                        char *end;
                        errno = 0;
                        (void)strtoll(val, &end, 10);
                        if (!*val || *end || errno)
                                return cli_usage_error(cmd, "--%s: invalid number '%s'", name, val);
                } else if (defs[i].kind == K_MEMORY_QOS) {
                        if (strcmp(val, "none") == 0)
                                val = "None";
                        else if (strcmp(val, "tiered") == 0)
                                val = "TieredReservation";
                        else
                                return cli_usage_error(cmd,
                                                       "--%s: expected none or tiered, got '%s'",
                                                       name, val);
                }
                free(v->scalar);
                v->scalar = strdup(val);
                if (!v->scalar)
                        r = -ENOMEM;
                break;
        case K_RESERVED_MEMORY:
                /* ReservedMemoryVar: repeated flags append, an empty one clears */
                r = ncm_mem_reservations_parse_flag(val, &f->reserved_memory, &err);
                if (r == -ENOMEM)
                        break;
                if (r < 0)
                        return cli_usage_error(cmd, "--%s: %s", name, err.msg);
                break;
        case K_LIST:
                value_clear(v);
                v->given = true;
                for (const char *p = val; *p && r >= 0;) {
                        size_t len = strcspn(p, ",");
                        if (len)
                                r = put_pair(v, p, len, NULL, 0);
                        p += len + (p[len] == ',');
                }
                break;
        case K_EVICTION:
        case K_MAP:
        case K_GATES:
                if (defs[i].kind == K_EVICTION) {
                        /* a repeated --eviction-hard replaces the earlier one */
                        value_clear(v);
                        v->given = true;
                }
                r = ncm_cgroup_parse_map_flag(val, defs[i].kind == K_EVICTION ? '<' : '=', pair_cb,
                                              v, &err);
                if (r == -ENOMEM)
                        break;
                if (r < 0)
                        return cli_usage_error(cmd, "--%s: %s", name, err.msg);
                if (defs[i].kind == K_GATES)
                        return check_gates(v, cmd);
                break;
        }
        if (r < 0) {
                return cli_fail(-ENOMEM, NULL);
        }
        return 0;
}

bool cli_kubelet_flag_given(const cli_kubelet_flags *f, const char *name)
{
        int i = def_index(name);
        return i >= 0 && f->v[i].given;
}

static void put_str(ncm_buf *b, const char *s)
{
        ncm_buf_json_string(b, s, strlen(s));
}

/* The flags as a JSON object of KubeletConfiguration fields. */
static void overlay(const cli_kubelet_flags *f, ncm_buf *b)
{
        bool first = true;
        int period = def_index("cpu-cfs-quota-period"), gates = def_index("feature-gates");
        bool imply = f->v[period].given && strcmp(f->v[period].scalar, "100ms") != 0;

        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < NCM_ELEMENTSOF(defs); i++) {
                const value *v = &f->v[i];
                /* a CFS period other than the default implies its gate unless the gate is given */
                if (i == (size_t)gates && imply) {
                        bool given = false;
                        for (size_t k = 0; k < v->n; k++)
                                given = given ||
                                        strcmp(v->pairs[k].k, "CustomCPUCFSQuotaPeriod") == 0;
                        if (!given) {
                                ncm_buf_printf(b,
                                               "%s\"featureGates\": {\"CustomCPUCFSQuotaPeriod\": "
                                               "true",
                                               first ? "" : ", ");
                                for (size_t k = 0; k < v->n; k++) {
                                        ncm_buf_puts(b, ", ");
                                        put_str(b, v->pairs[k].k);
                                        ncm_buf_printf(b, ": %s", v->pairs[k].v);
                                }
                                ncm_buf_putc(b, '}');
                                first = false;
                                continue;
                        }
                }
                if (!v->given)
                        continue;
                ncm_buf_puts(b, first ? "" : ", ");
                first = false;
                put_str(b, defs[i].field);
                ncm_buf_puts(b, ": ");
                switch (defs[i].kind) {
                case K_STRING:
                case K_MEMORY_QOS:
                        put_str(b, v->scalar);
                        break;
                case K_BOOL:
                case K_INT:
                        ncm_buf_puts(b, v->scalar);
                        break;
                case K_LIST:
                        ncm_buf_putc(b, '[');
                        for (size_t k = 0; k < v->n; k++) {
                                ncm_buf_puts(b, k ? ", " : "");
                                put_str(b, v->pairs[k].k);
                        }
                        ncm_buf_putc(b, ']');
                        break;
                case K_RESERVED_MEMORY:
                        ncm_buf_putc(b, '[');
                        for (size_t k = 0; k < f->reserved_memory.n; k++) {
                                const ncm_mem_reservation *rm = &f->reserved_memory.r[k];
                                char q[NCM_QUANTITY_STRLEN];
                                ncm_buf_printf(b, "%s{\"numaNode\": %d, \"limits\": {",
                                               k ? ", " : "", rm->numa);
                                put_str(b, rm->type);
                                ncm_buf_puts(b, ": ");
                                put_str(b, ncm_quantity_to_string(&rm->q, q));
                                ncm_buf_puts(b, "}}");
                        }
                        ncm_buf_putc(b, ']');
                        break;
                case K_MAP:
                case K_EVICTION:
                case K_GATES:
                        ncm_buf_putc(b, '{');
                        for (size_t k = 0; k < v->n; k++) {
                                bool on = false;
                                ncm_buf_puts(b, k ? ", " : "");
                                put_str(b, v->pairs[k].k);
                                ncm_buf_puts(b, ": ");
                                if (defs[i].kind == K_GATES) {
                                        (void)parse_bool(v->pairs[k].v, &on);
                                        ncm_buf_puts(b, on ? "true" : "false");
                                } else {
                                        put_str(b, v->pairs[k].v);
                                }
                        }
                        ncm_buf_putc(b, '}');
                        break;
                }
        }
        ncm_buf_putc(b, '}');
}

/* An error about a field that came from a flag names the flag instead. */
static void name_flag(const cli_kubelet_flags *f, ncm_error *err)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(defs); i++) {
                size_t len = strlen(defs[i].field);
                char msg[NCM_ERROR_MSG_MAX];
                const char *rest;
                if (!f->v[i].given || strncmp(err->msg, defs[i].field, len) != 0 ||
                    (err->msg[len] != ':' && err->msg[len] != '.'))
                        continue;
                rest = err->msg + len;
                if (*rest == '.')
                        rest += strcspn(rest, ":");
                snprintf(msg, sizeof(msg), "--%s%s", defs[i].flag, rest);
                memcpy(err->msg, msg, sizeof(msg));
                return;
        }
}

int cli_kubelet_config(const cli_kubelet_flags *f, ncm_node_config **ret)
{
        ncm_autoptr(ncm_node_config) base = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf b = NCM_BUF_INIT;
        int r;

        if (f->config &&
            (r = ncm_node_config_load_file_ex(f->config, f->decoding, &base, &err)) < 0)
                return cli_fail(r, &err);
        overlay(f, &b);
        if (ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return cli_fail(-ENOMEM, NULL);
        }
        if (base)
                r = ncm_node_config_merge_text(base, b.data, b.len, "flags", "", ret, &err);
        else
                r = ncm_node_config_parse(b.data, b.len, "flags", "", ret, &err);
        ncm_buf_done(&b);
        if (r < 0) {
                name_flag(f, &err);
                return cli_fail(r, &err);
        }
        cli_config_warnings(*ret, f->config);
        return 0;
}

void cli_config_warnings(const ncm_node_config *c, const char *file)
{
        for (size_t i = 0; i < ncm_node_config_n_warnings(c); i++)
                fprintf(stderr, "nodecm: warning: %s%s%s\n", file ? file : "", file ? ": " : "",
                        ncm_node_config_warning(c, i));
}

int cli_capacity_option(ncm_resource_list *l, const char *cmd, const char *val)
{
        ncm_resource_list add = {0};
        ncm_error err = NCM_ERROR_INIT;
        int r = 0;

        if (ncm_cgroup_parse_capacity(val, &add, &err) < 0)
                return cli_usage_error(cmd, "--capacity: %s", err.msg);
        for (size_t i = 0; i < add.n && r >= 0; i++)
                r = ncm_cgroup_resource_list_set(l, add.items[i].name, &add.items[i].quantity);
        ncm_resource_list_done(&add);
        return r < 0 ? cli_usage_error(cmd, "--capacity: out of memory") : 0;
}
