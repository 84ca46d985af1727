/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CDI names and spec files (include/nodecm/cdi.h). The name checks and their texts are CDI's
 * (api/producer identifiers.go); the spec reader keeps what locating a device needs and checks
 * what CDI's newSpec checks about it (version, kind, device names, duplicates, no devices).
 * A spec is a tree from lib/base/json.h (JSON or YAML), so its depth and size are bounded
 * there and here.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cdi.h>
#include "base/json.h"

#define MAX_DEVICES 65536
#define MAX_NODES 1024

static bool is_letter(char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_alnum(char c)
{
        return is_letter(c) || (c >= '0' && c <= '9');
}

/* Go's %q of S[0..LEN) into OUT (bounded; a cut quote still names the value). */
static const char *q(char *out, size_t size, const char *s, size_t len)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_buf_go_quote(&b, s, len > 256 ? 256 : len);
        snprintf(out, size, "%s", b.data ? b.data : "\"\"");
        ncm_buf_done(&b);
        return out;
}

/* validateVendorOrClassName: the reason, or NULL when S[0..LEN) is valid. */
static const char *vendor_or_class_error(const char *s, size_t len, char *buf, size_t size)
{
        char qs[300];

        if (len == 0)
                return "empty name";
        if (!is_letter(s[0])) {
                snprintf(buf, size, "%s, should start with letter", q(qs, sizeof(qs), s, len));
                return buf;
        }
        for (size_t i = 1; i + 1 < len; i++)
                if (!is_alnum(s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.') {
                        snprintf(buf, size, "invalid character '%c' in name %s", s[i],
                                 q(qs, sizeof(qs), s, len));
                        return buf;
                }
        if (!is_alnum(s[len - 1])) {
                snprintf(buf, size, "%s, should end with a letter or digit",
                         q(qs, sizeof(qs), s, len));
                return buf;
        }
        return NULL;
}

/* ValidateDeviceName: the reason, or NULL. */
static const char *device_name_error(const char *s, size_t len, char *buf, size_t size)
{
        char qs[300];

        if (len == 0)
                return "invalid (empty) device name";
        /* CDI's own words, "class" included */
        if (!is_alnum(s[0])) {
                snprintf(buf, size, "invalid class %s, should start with a letter or digit",
                         q(qs, sizeof(qs), s, len));
                return buf;
        }
        for (size_t i = 1; i + 1 < len; i++)
                if (!is_alnum(s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.' && s[i] != ':') {
                        snprintf(buf, size, "invalid character '%c' in device name %s", s[i],
                                 q(qs, sizeof(qs), s, len));
                        return buf;
                }
        if (len > 1 && !is_alnum(s[len - 1])) {
                snprintf(buf, size, "invalid name %s, should end with a letter or digit",
                         q(qs, sizeof(qs), s, len));
                return buf;
        }
        return NULL;
}

int ncm_cdi_check_kind(const char *kind, ncm_error *err)
{
        const char *slash = kind ? strchr(kind, '/') : NULL;
        char why[600], qs[300];
        const char *e;

        if (!kind || !slash || slash == kind || !slash[1])
                return ncm_error_set(err, EINVAL, "kind %s does not contain a /",
                                     q(qs, sizeof(qs), kind ? kind : "", kind ? strlen(kind) : 0));
        if ((e = vendor_or_class_error(kind, (size_t)(slash - kind), why, sizeof(why))))
                return ncm_error_set(err, EINVAL, "invalid vendor. %s", e);
        if ((e = vendor_or_class_error(slash + 1, strlen(slash + 1), why, sizeof(why))))
                return ncm_error_set(err, EINVAL, "invalid class. %s", e);
        return 0;
}

int ncm_cdi_check_name(const char *dev, ncm_error *err)
{
        char why[600], qs[300];
        const char *eq, *slash, *e;
        size_t len = dev ? strlen(dev) : 0;

        q(qs, sizeof(qs), dev ? dev : "", len);
        /* parseDevice: anything that does not split into VENDOR/CLASS=NAME has no vendor */
        eq = dev ? strchr(dev, '=') : NULL;
        slash = eq ? memchr(dev, '/', (size_t)(eq - dev)) : NULL;
        if (!dev || !*dev || dev[0] == '/' || !eq || eq == dev || !eq[1] || !slash ||
            slash == dev || slash + 1 == eq)
                return ncm_error_set(err, EINVAL, "unqualified device %s, missing vendor", qs);
        if ((e = vendor_or_class_error(dev, (size_t)(slash - dev), why, sizeof(why))))
                return ncm_error_set(err, EINVAL, "invalid device %s: invalid vendor. %s", qs, e);
        if ((e = vendor_or_class_error(slash + 1, (size_t)(eq - slash - 1), why, sizeof(why))))
                return ncm_error_set(err, EINVAL, "invalid device %s: invalid class. %s", qs, e);
        if ((e = device_name_error(eq + 1, strlen(eq + 1), why, sizeof(why))))
                return ncm_error_set(err, EINVAL, "invalid device %s: %s", qs, e);
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * Specs
 */

static void nodes_free(ncm_cdi_node *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].path);
                free(v[i].host_path);
        }
        free(v);
}

ncm_cdi_spec *ncm_cdi_spec_free(ncm_cdi_spec *s)
{
        if (!s)
                return NULL;
        free(s->version);
        free(s->kind);
        for (size_t i = 0; i < s->n_devices; i++) {
                free(s->devices[i].name);
                nodes_free(s->devices[i].nodes, s->devices[i].n_nodes);
        }
        free(s->devices);
        nodes_free(s->nodes, s->n_nodes);
        free(s);
        return NULL;
}

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

static int string_at(json_object *o, const char *key, const char *path, bool required, char **ret,
                     ncm_error *err)
{
        json_object *v = ncm__json_get(o, key);
        char p[512];
        int r;

        snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", key);
        if (!v) {
                if (required)
                        return ncm_error_set(err, EINVAL, "%s: missing", p);
                return 0;
        }
        if ((r = ncm__json_expect(v, json_type_string, p, err)) < 0)
                return r;
        if (strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
                return ncm_error_set(err, EINVAL, "%s: holds a NUL byte", p);
        *ret = strdup(json_object_get_string(v));
        return *ret ? 0 : oom(err);
}

static int read_node(json_object *o, const char *path, ncm_cdi_node *n, ncm_error *err)
{
        static const char types[] = "bcup";
        ncm_autofree char *type = NULL;
        char p[600];
        int r;

        n->major = n->minor = -1;
        if ((r = ncm__json_expect(o, json_type_object, path, err)) < 0)
                return r;
        if ((r = string_at(o, "path", path, true, &n->path, err)) < 0)
                return r;
        if (!n->path[0])
                return ncm_error_set(err, EINVAL, "%s.path: invalid (empty) device path", path);
        if ((r = string_at(o, "hostPath", path, false, &n->host_path, err)) < 0)
                return r;
        if ((r = string_at(o, "type", path, false, &type, err)) < 0)
                return r;
        if (type && type[0]) {
                if (strlen(type) != 1 || !strchr(types, type[0]))
                        return ncm_error_set(err, EINVAL,
                                             "%s.type: device %s: invalid type \"%.16s\" (b, c, u "
                                             "or p)",
                                             path, n->path, type);
                n->type = type[0];
        }
        for (int k = 0; k < 2; k++) {
                const char *key = k ? "minor" : "major";
                json_object *v = ncm__json_get(o, key);
                int64_t x;
                if (!v)
                        continue;
                snprintf(p, sizeof(p), "%s.%s", path, key);
                if ((r = ncm__json_int(v, p, 0, UINT32_MAX, &x, err)) < 0)
                        return r;
                *(k ? &n->minor : &n->major) = x;
        }
        return 0;
}

/* containerEdits.deviceNodes of O (may be absent) into *RET / *RET_N. */
static int read_edits(json_object *o, const char *path, ncm_cdi_node **ret, size_t *ret_n,
                      ncm_error *err)
{
        json_object *edits = ncm__json_get(o, "containerEdits"), *nodes;
        char p[512];
        size_t n;
        int r;

        *ret = NULL;
        *ret_n = 0;
        if (!edits)
                return 0;
        snprintf(p, sizeof(p), "%s%scontainerEdits", path, *path ? "." : "");
        if ((r = ncm__json_expect(edits, json_type_object, p, err)) < 0)
                return r;
        nodes = ncm__json_get(edits, "deviceNodes");
        if (!nodes)
                return 0;
        snprintf(p, sizeof(p), "%s%scontainerEdits.deviceNodes", path, *path ? "." : "");
        if ((r = ncm__json_expect(nodes, json_type_array, p, err)) < 0)
                return r;
        n = json_object_array_length(nodes);
        if (n > MAX_NODES)
                return ncm_error_set(err, ERANGE, "%s: %zu device nodes, more than %d", p, n,
                                     MAX_NODES);
        *ret = calloc(n ? n : 1, sizeof(**ret));
        if (!*ret)
                return oom(err);
        for (size_t i = 0; i < n; i++) {
                char pi[560];
                snprintf(pi, sizeof(pi), "%s[%zu]", p, i);
                *ret_n = i + 1;
                r = read_node(json_object_array_get_idx(nodes, i), pi, &(*ret)[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* "MAJOR.MINOR.PATCH", each a decimal number (CDI's versions, "v" allowed before). */
static bool valid_version(const char *v)
{
        int parts = 0;

        if (*v == 'v')
                v++;
        for (;;) {
                size_t k = strspn(v, "0123456789");
                if (k == 0 || k > 9)
                        return false;
                v += k;
                parts++;
                if (*v != '.')
                        break;
                v++;
        }
        return parts == 3 && !*v;
}

static int cmp_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* No device name twice (sorted, so that a spec of many devices costs n log n). */
static int check_unique(const ncm_cdi_spec *s, ncm_error *err)
{
        ncm_autofree char **names = malloc(s->n_devices * sizeof(*names));
        char qs[300];

        if (!names)
                return oom(err);
        for (size_t i = 0; i < s->n_devices; i++)
                names[i] = s->devices[i].name;
        qsort(names, s->n_devices, sizeof(*names), cmp_name);
        for (size_t i = 1; i < s->n_devices; i++)
                if (strcmp(names[i - 1], names[i]) == 0) {
                        const char *n = strchr(names[i], '=') + 1;
                        return ncm_error_set(err, EINVAL, "invalid spec, multiple device %s",
                                             q(qs, sizeof(qs), n, strlen(n)));
                }
        return 0;
}

static int parse_tree(json_object *root, ncm_cdi_spec *s, ncm_error *err)
{
        json_object *devs;
        char qs[300];
        size_t n;
        int r;

        if (!root || json_object_is_type(root, json_type_null))
                return ncm_error_set(err, EINVAL, "no spec data");
        if ((r = ncm__json_expect(root, json_type_object, "spec", err)) < 0)
                return r;
        if ((r = string_at(root, "cdiVersion", "", false, &s->version, err)) < 0)
                return r;
        if (!s->version || !valid_version(s->version))
                return ncm_error_set(err, EINVAL, "invalid version %s",
                                     q(qs, sizeof(qs), s->version ? s->version : "",
                                       s->version ? strlen(s->version) : 0));
        if ((r = string_at(root, "kind", "", true, &s->kind, err)) < 0)
                return r;
        if ((r = ncm_cdi_check_kind(s->kind, err)) < 0)
                return ncm_error_prefix(err, "kind");
        if ((r = read_edits(root, "", &s->nodes, &s->n_nodes, err)) < 0)
                return r;
        devs = ncm__json_get(root, "devices");
        if (!devs)
                return ncm_error_set(err, EINVAL, "invalid spec, no devices");
        if ((r = ncm__json_expect(devs, json_type_array, "devices", err)) < 0)
                return r;
        n = json_object_array_length(devs);
        if (n == 0)
                return ncm_error_set(err, EINVAL, "invalid spec, no devices");
        if (n > MAX_DEVICES)
                return ncm_error_set(err, ERANGE, "devices: %zu devices, more than %d", n,
                                     MAX_DEVICES);
        s->devices = calloc(n, sizeof(*s->devices));
        if (!s->devices)
                return oom(err);
        for (size_t i = 0; i < n; i++) {
                json_object *d = json_object_array_get_idx(devs, i);
                ncm_cdi_device *dev = &s->devices[i];
                ncm_autofree char *name = NULL;
                char p[64], why[600];
                const char *e;

                s->n_devices = i + 1;
                snprintf(p, sizeof(p), "devices[%zu]", i);
                if ((r = ncm__json_expect(d, json_type_object, p, err)) < 0)
                        return r;
                if ((r = string_at(d, "name", p, true, &name, err)) < 0)
                        return r;
                if ((e = device_name_error(name, strlen(name), why, sizeof(why))))
                        return ncm_error_set(err, EINVAL, "failed add device %s: %s",
                                             q(qs, sizeof(qs), name, strlen(name)), e);
                if (asprintf(&dev->name, "%s=%s", s->kind, name) < 0) {
                        dev->name = NULL;
                        return oom(err);
                }
                if ((r = read_edits(d, p, &dev->nodes, &dev->n_nodes, err)) < 0)
                        return r;
        }
        return check_unique(s, err);
}

int ncm_cdi_spec_parse(const char *text, size_t len, const char *name, ncm_cdi_spec **ret,
                       ncm_error *err)
{
        ncm_autojson root = NULL;
        ncm_autoptr(ncm_cdi_spec) s = NULL;
        const char *nm = name ? name : "<spec>";
        int r;

        if (len > NCM_CDI_SPEC_MAX)
                return ncm_error_set(err, EFBIG, "%s: larger than %u bytes", nm, NCM_CDI_SPEC_MAX);
        r = ncm__json_or_yaml_parse(text, len, nm, &root, err);
        if (r < 0)
                return r;
        s = calloc(1, sizeof(*s));
        if (!s)
                return oom(err);
        r = parse_tree(root, s, err);
        if (r < 0)
                return r == -ENOMEM ? r : ncm_error_prefix(err, "%s", nm);
        *ret = NCM_TAKE_PTR(s);
        return 0;
}
