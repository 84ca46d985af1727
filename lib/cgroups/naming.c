/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cgroup names (CgroupName) and the two naming drivers of cgroup_manager_linux.go, plus
 * libcontainer's ExpandSlice for the systemd form.
 */
#include <errno.h>
#include <string.h>

#include <nodecm/cgroups.h>
#include "cgroups-internal.h"

#define SLICE_SUFFIX ".slice"

void ncm_cgroup_name_done(ncm_cgroup_name *name)
{
        for (size_t i = 0; i < name->n; i++)
                free(name->parts[i]);
        name->n = 0;
}

static int push(ncm_cgroup_name *name, const char *s, size_t len, ncm_error *err)
{
        char *c;

        if (name->n == NCM_CGROUP_NAME_MAX_DEPTH)
                return ncm_error_set(err, E2BIG, "cgroup name deeper than %d components",
                                     NCM_CGROUP_NAME_MAX_DEPTH);
        c = strndup(s, len);
        if (!c)
                return ncm_error_set(err, ENOMEM, "out of memory");
        name->parts[name->n++] = c;
        return 0;
}

int ncm_cgroup_name_copy(ncm_cgroup_name *dst, const ncm_cgroup_name *src)
{
        for (size_t i = 0; i < src->n; i++) {
                if (push(dst, src->parts[i], strlen(src->parts[i]), NULL) < 0) {
                        ncm_cgroup_name_done(dst);
                        return -ENOMEM;
                }
        }
        return 0;
}

static int check_component(const char *s, size_t len, ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT;
        int r = 0;

        if (memchr(s, '/', len) || memchr(s, '_', len) || memchr(s, '\0', len) ||
            (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.')) {
                ncm_buf_go_quote(&b, s, len);
                r = ncm_error_set(err, EINVAL, "invalid character in component [%s] of CgroupName",
                                  b.data ? b.data : "");
                ncm_buf_done(&b);
        }
        return r;
}

int ncm_cgroup_name_append(ncm_cgroup_name *name, const char *component, ncm_error *err)
{
        size_t len = strlen(component);
        int r = check_component(component, len, err);

        if (r < 0)
                return r;
        return push(name, component, len, err);
}

int ncm_cgroup_name_append_name(ncm_cgroup_name *name, const ncm_cgroup_name *tail, ncm_error *err)
{
        for (size_t i = 0; i < tail->n; i++) {
                int r = ncm_cgroup_name_append(name, tail->parts[i], err);
                if (r < 0)
                        return r;
        }
        return 0;
}

bool ncm_cgroup_name_equal(const ncm_cgroup_name *a, const ncm_cgroup_name *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (strcmp(a->parts[i], b->parts[i]) != 0)
                        return false;
        return true;
}

void ncm_cgroup_name_format(const ncm_cgroup_name *name, ncm_buf *b)
{
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < name->n; i++) {
                if (i)
                        ncm_buf_putc(b, ' ');
                ncm_buf_go_quote(b, name->parts[i], strlen(name->parts[i]));
        }
        ncm_buf_putc(b, ']');
}

/* ---- cgroupfs ---- */

/* "/" + path.Join(components): empty components vanish. */
static int cgroupfs_to_path(const ncm_cgroup_name *name, ncm_buf *b, ncm_error *err)
{
        bool any = false;

        (void)err;
        for (size_t i = 0; i < name->n; i++) {
                if (!name->parts[i][0])
                        continue;
                ncm_buf_putc(b, '/');
                ncm_buf_puts(b, name->parts[i]);
                any = true;
        }
        if (!any)
                ncm_buf_putc(b, '/');
        return 0;
}

/*
 * ParseCgroupfsToCgroupName: one leading '/' dropped, then split on '/' (so "/a/" is
 * ["a" ""]; "/" and "" are the root). "." and ".." are refused rather than resolved.
 */
static int cgroupfs_from_path(const char *path, ncm_cgroup_name *ret, ncm_error *err)
{
        ncm_cgroup_name n = NCM_CGROUP_NAME_INIT;
        const char *p = path[0] == '/' ? path + 1 : path;

        while (*p || (n.n > 0 && p[-1] == '/')) {
                const char *slash = strchr(p, '/');
                size_t len = slash ? (size_t)(slash - p) : strlen(p);
                int r = (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')
                                        ? ncm_error_set(err, EINVAL,
                                                        "cgroup path '%s': '.' and '..' are not "
                                                        "allowed",
                                                        path)
                                        : push(&n, p, len, err);
                if (r < 0) {
                        ncm_cgroup_name_done(&n);
                        return r;
                }
                if (!slash)
                        break;
                p = slash + 1;
        }
        *ret = n;
        return 0;
}

static int check_container(const char *container, ncm_error *err)
{
        if (!*container || strchr(container, '/') || strcmp(container, ".") == 0 ||
            strcmp(container, "..") == 0)
                return ncm_error_set(err, EINVAL, "invalid container name '%s'", container);
        return 0;
}

static int cgroupfs_container_path(const char *pod_path, const char *container, ncm_buf *b,
                                   ncm_error *err)
{
        int r = check_container(container, err);

        if (r < 0)
                return r;
        ncm_buf_puts(b, pod_path);
        if (strcmp(pod_path, "/") != 0)
                ncm_buf_putc(b, '/');
        ncm_buf_puts(b, container);
        return 0;
}

const ncm_cgroup_naming_ops ncm_cgroup_naming_cgroupfs = {
                .name = "cgroupfs",
                .to_path = cgroupfs_to_path,
                .from_path = cgroupfs_from_path,
                .container_path = cgroupfs_container_path,
};

/* ---- systemd ---- */

int ncm_cgroup_expand_slice(const char *slice, ncm_buf *b, ncm_error *err)
{
        size_t len = strlen(slice), slen = strlen(SLICE_SUFFIX), name_len;
        const char *p;
        size_t start;
        ncm_buf out = NCM_BUF_INIT;

        if (len < slen || strcmp(slice + len - slen, SLICE_SUFFIX) != 0 || strchr(slice, '/'))
                return ncm_error_set(err, EINVAL, "invalid slice name: %s", slice);
        name_len = len - slen;
        if (name_len == 1 && slice[0] == '-') {
                ncm_buf_putc(b, '/');
                return 0;
        }
        /* Each dash-separated prefix is a parent slice: a-b-c -> /a.slice/a-b.slice/... */
        p = slice;
        start = 0;
        for (size_t i = 0; i <= name_len; i++) {
                if (i < name_len && p[i] != '-')
                        continue;
                if (i == start) {
                        ncm_buf_done(&out);
                        return ncm_error_set(err, EINVAL, "invalid slice name: %s", slice);
                }
                ncm_buf_putc(&out, '/');
                ncm_buf_append(&out, p, i);
                ncm_buf_puts(&out, SLICE_SUFFIX);
                start = i + 1;
        }
        if (ncm_buf_failed(&out)) {
                ncm_buf_done(&out);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        ncm_buf_append(b, out.data, out.len);
        ncm_buf_done(&out);
        return 0;
}

static int systemd_to_path(const ncm_cgroup_name *name, ncm_buf *b, ncm_error *err)
{
        ncm_buf slice = NCM_BUF_INIT;
        int r;

        bool any = false;

        for (size_t i = 0; i < name->n; i++)
                any = any || name->parts[i][0];
        if (!any) {
                ncm_buf_putc(b, '/');
                return 0;
        }
        for (size_t i = 0, k = 0; i < name->n; i++) {
                /* Empty components are skipped (TestCgroupNameWithEmptyPartToSystemd). */
                if (!name->parts[i][0])
                        continue;
                if (k++)
                        ncm_buf_putc(&slice, '-');
                /* systemd treats '-' as a step in the hierarchy: escape it as '_'. */
                for (const char *c = name->parts[i]; *c; c++)
                        ncm_buf_putc(&slice, *c == '-' ? '_' : *c);
        }
        ncm_buf_puts(&slice, SLICE_SUFFIX);
        if (ncm_buf_failed(&slice)) {
                ncm_buf_done(&slice);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        r = ncm_cgroup_expand_slice(slice.data, b, err);
        if (r < 0)
                ncm_error_prefix(err, "error converting cgroup name to systemd format");
        ncm_buf_done(&slice);
        return r;
}

/* ParseSystemdToCgroupName: the last element, without ".slice", split on '-', '_' -> '-'. */
static int systemd_from_path(const char *path, ncm_cgroup_name *ret, ncm_error *err)
{
        ncm_cgroup_name n = NCM_CGROUP_NAME_INIT;
        size_t len = strlen(path);
        const char *base;
        size_t blen, slen = strlen(SLICE_SUFFIX);

        while (len > 1 && path[len - 1] == '/')
                len--;
        if (len == 0 || (len == 1 && path[0] == '/')) {
                *ret = n;
                return 0;
        }
        base = path + len;
        while (base > path && base[-1] != '/')
                base--;
        blen = (size_t)(path + len - base);
        if (blen >= slen && memcmp(base + blen - slen, SLICE_SUFFIX, slen) == 0)
                blen -= slen;
        for (size_t start = 0, i = 0; i <= blen; i++) {
                if (i < blen && base[i] != '-')
                        continue;
                {
                        char comp[256];
                        size_t cl = i - start;
                        int r;
                        if (cl >= sizeof(comp)) {
                                ncm_cgroup_name_done(&n);
                                return ncm_error_set(err, ENAMETOOLONG,
                                                     "cgroup path '%s': component too long", path);
                        }
                        for (size_t k = 0; k < cl; k++)
                                comp[k] = base[start + k] == '_' ? '-' : base[start + k];
                        r = push(&n, comp, cl, err);
                        if (r < 0) {
                                ncm_cgroup_name_done(&n);
                                return r;
                        }
                }
                start = i + 1;
        }
        *ret = n;
        return 0;
}

static int systemd_container_path(const char *pod_path, const char *container, ncm_buf *b,
                                  ncm_error *err)
{
        int r = check_container(container, err);

        if (r < 0)
                return r;
        /* Runtimes name container scopes "<prefix>-<id>.scope" inside the pod slice. */
        ncm_buf_puts(b, pod_path);
        if (strcmp(pod_path, "/") != 0)
                ncm_buf_putc(b, '/');
        ncm_buf_printf(b, "nodecm-%s.scope", container);
        return 0;
}

const ncm_cgroup_naming_ops ncm_cgroup_naming_systemd = {
                .name = "systemd",
                .to_path = systemd_to_path,
                .from_path = systemd_from_path,
                .container_path = systemd_container_path,
};

const ncm_cgroup_naming_ops *ncm_cgroup_naming_by_name(const char *name)
{
        if (strcmp(name, "cgroupfs") == 0)
                return &ncm_cgroup_naming_cgroupfs;
        if (strcmp(name, "systemd") == 0)
                return &ncm_cgroup_naming_systemd;
        return NULL;
}

/* ---- the QoS hierarchy ---- */

static int root_name(const char *cgroup_root, ncm_cgroup_name *ret, ncm_error *err)
{
        ncm_cgroup_name n = NCM_CGROUP_NAME_INIT;
        int r = cgroupfs_from_path(cgroup_root, &n, err);

        if (r < 0)
                return r;
        for (size_t i = 0; i < n.n; i++) {
                r = check_component(n.parts[i], strlen(n.parts[i]), err);
                if (r < 0) {
                        ncm_cgroup_name_done(&n);
                        return r;
                }
        }
        *ret = n;
        return 0;
}

int ncm_cgroup_qos_names(const char *cgroup_root, bool cgroups_per_qos,
                         ncm_cgroup_name *ret_guaranteed, ncm_cgroup_name *ret_burstable,
                         ncm_cgroup_name *ret_besteffort, ncm_error *err)
{
        ncm_cgroup_name g = NCM_CGROUP_NAME_INIT, bu = NCM_CGROUP_NAME_INIT,
                        be = NCM_CGROUP_NAME_INIT;
        int r = root_name(cgroup_root, &g, err);

        if (r < 0)
                return r;
        if (cgroups_per_qos)
                r = ncm_cgroup_name_append(&g, NCM_CGROUP_KUBEPODS, err);
        if (r >= 0)
                r = ncm_cgroup_name_copy(&bu, &g);
        if (r >= 0)
                r = ncm_cgroup_name_copy(&be, &g);
        if (r >= 0 && cgroups_per_qos) {
                r = ncm_cgroup_name_append(&bu, NCM_CGROUP_BURSTABLE, err);
                if (r >= 0)
                        r = ncm_cgroup_name_append(&be, NCM_CGROUP_BESTEFFORT, err);
        }
        if (r < 0) {
                ncm_cgroup_name_done(&g);
                ncm_cgroup_name_done(&bu);
                ncm_cgroup_name_done(&be);
                return r == -ENOMEM ? ncm_error_set(err, ENOMEM, "out of memory") : r;
        }
        if (ret_guaranteed)
                *ret_guaranteed = g;
        else
                ncm_cgroup_name_done(&g);
        if (ret_burstable)
                *ret_burstable = bu;
        else
                ncm_cgroup_name_done(&bu);
        if (ret_besteffort)
                *ret_besteffort = be;
        else
                ncm_cgroup_name_done(&be);
        return 0;
}

int ncm_cgroup_pod_name(const char *cgroup_root, bool cgroups_per_qos, ncm_qos_class qos,
                        const char *pod_uid, ncm_cgroup_name *ret, ncm_error *err)
{
        ncm_cgroup_name g = NCM_CGROUP_NAME_INIT, bu = NCM_CGROUP_NAME_INIT,
                        be = NCM_CGROUP_NAME_INIT;
        ncm_cgroup_name *tier;
        ncm_buf comp = NCM_BUF_INIT;
        int r;

        if (!pod_uid || !*pod_uid)
                return ncm_error_set(err, EINVAL, "pod has no metadata.uid");
        r = ncm_cgroup_qos_names(cgroup_root, cgroups_per_qos, &g, &bu, &be, err);
        if (r < 0)
                return r;
        tier = qos == NCM_QOS_GUARANTEED ? &g : qos == NCM_QOS_BURSTABLE ? &bu : &be;
        ncm_buf_printf(&comp, NCM_CGROUP_POD_PREFIX "%s", pod_uid);
        r = ncm_buf_failed(&comp) ? ncm_error_set(err, ENOMEM, "out of memory")
                                  : ncm_cgroup_name_append(tier, comp.data, err);
        if (r < 0)
                ncm_error_prefix(err, "pod uid '%s'", pod_uid);
        ncm_buf_done(&comp);
        if (r >= 0) {
                *ret = *tier;
                tier->n = 0;
        }
        ncm_cgroup_name_done(&g);
        ncm_cgroup_name_done(&bu);
        ncm_cgroup_name_done(&be);
        return r;
}

const char *ncm_cgroup_naming_name(const ncm_cgroup_naming_ops *d)
{
        return d->name;
}

int ncm_cgroup_naming_to_path(const ncm_cgroup_naming_ops *d, const ncm_cgroup_name *name,
                              ncm_buf *b, ncm_error *err)
{
        return d->to_path(name, b, err);
}

int ncm_cgroup_naming_from_path(const ncm_cgroup_naming_ops *d, const char *path,
                                ncm_cgroup_name *ret, ncm_error *err)
{
        return d->from_path(path, ret, err);
}

int ncm_cgroup_naming_container_path(const ncm_cgroup_naming_ops *d, const char *pod_path,
                                     const char *container, ncm_buf *b, ncm_error *err)
{
        return d->container_path(pod_path, container, b, err);
}
