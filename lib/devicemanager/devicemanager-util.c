/* SPDX-License-Identifier: Apache-2.0 */
/* Sorted-name search, string sets, resource-keyed sets, UTF-8 checks and resource-name rules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include "base/array.h"
#include "devicemanager-internal.h"

/* ---- string sets ---- */

void ncm__strset_done(ncm__strset *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        *s = (ncm__strset)NCM__STRSET_INIT;
}

/* Index of X, or -(insertion point) - 1. */
static ssize_t find(const ncm__strset *s, const char *x)
{
        return ncm__sorted_find(s->v, s->n, sizeof(*s->v), 0, x);
}

bool ncm__strset_has(const ncm__strset *s, const char *x)
{
        return find(s, x) >= 0;
}

/* Room for N names. */
static int reserve(ncm__strset *s, size_t n)
{
        return n ? ncm__array_grow(s->v, s->cap, n - 1) : 0;
}

int ncm__strset_add(ncm__strset *s, const char *x)
{
        /* sets are mostly built from sorted input (snapshots, copies): append without a search */
        ssize_t i = s->n == 0 || strcmp(s->v[s->n - 1], x) < 0 ? -(ssize_t)s->n - 1 : find(s, x);
        size_t at;
        char *copy;

        if (i >= 0)
                return 0;
        at = (size_t)(-i - 1);
        if (reserve(s, s->n + 1) < 0)
                return -ENOMEM;
        copy = strdup(x);
        if (!copy)
                return -ENOMEM;
        memmove(s->v + at + 1, s->v + at, (s->n - at) * sizeof(*s->v));
        s->v[at] = copy;
        s->n++;
        return 1;
}

int ncm__strset_del(ncm__strset *s, const char *x)
{
        ssize_t i = find(s, x);
        if (i < 0)
                return 0;
        free(s->v[i]);
        memmove(s->v + i, s->v + i + 1, (s->n - (size_t)i - 1) * sizeof(*s->v));
        s->n--;
        return 1;
}

int ncm__strset_copy(ncm__strset *dst, const ncm__strset *src)
{
        ncm__strset t = NCM__STRSET_INIT;
        if (reserve(&t, src->n) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < src->n; i++) {
                t.v[i] = strdup(src->v[i]);
                if (!t.v[i]) {
                        ncm__strset_done(&t);
                        return -ENOMEM;
                }
                t.n++;
        }
        ncm__strset_done(dst);
        *dst = t;
        return 0;
}

int ncm__strset_union(ncm__strset *dst, const ncm__strset *src)
{
        for (size_t i = 0; i < src->n; i++)
                if (ncm__strset_add(dst, src->v[i]) < 0)
                        return -ENOMEM;
        return 0;
}

void ncm__strset_subtract(ncm__strset *dst, const ncm__strset *src)
{
        size_t j = 0;
        for (size_t i = 0; i < dst->n; i++) {
                if (ncm__strset_has(src, dst->v[i]))
                        free(dst->v[i]);
                else
                        dst->v[j++] = dst->v[i];
        }
        dst->n = j;
}

bool ncm__strset_is_subset(const ncm__strset *sub, const ncm__strset *super)
{
        for (size_t i = 0; i < sub->n; i++)
                if (!ncm__strset_has(super, sub->v[i]))
                        return false;
        return true;
}

char **ncm__strset_strv(const ncm__strset *s)
{
        return ncm__strv_dup((const char *const *)s->v, s->n);
}

char **ncm__strv_dup(const char *const *v, size_t n)
{
        char **r = calloc(n + 1, sizeof(*r));
        if (!r)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                r[i] = strdup(v[i]);
                if (!r[i]) {
                        ncm_devmgr_strv_free(r);
                        return NULL;
                }
        }
        return r;
}

void ncm_devmgr_strv_free(char **v)
{
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}

/* ---- resource-keyed sets ---- */

void ncm__rsets_done(dm_rsets *s)
{
        for (size_t i = 0; i < s->n; i++) {
                free(s->v[i].resource);
                ncm__strset_done(&s->v[i].set);
        }
        free(s->v);
        s->v = NULL;
        s->n = 0;
}

int ncm__rsets_copy(dm_rsets *dst, const dm_rsets *src)
{
        dm_rsets t = {NULL, 0};
        if (src->n) {
                t.v = calloc(src->n, sizeof(*t.v));
                if (!t.v)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < src->n; i++) {
                t.v[i].resource = strdup(src->v[i].resource);
                t.n++;
                if (!t.v[i].resource || ncm__strset_copy(&t.v[i].set, &src->v[i].set) < 0) {
                        ncm__rsets_done(&t);
                        return -ENOMEM;
                }
        }
        ncm__rsets_done(dst);
        *dst = t;
        return 0;
}

static ssize_t rsets_find(const dm_rsets *s, const char *resource)
{
        return ncm__sorted_find(s->v, s->n, sizeof(*s->v), offsetof(dm_rset, resource), resource);
}

dm_rset *ncm__rsets_get(const dm_rsets *s, const char *resource)
{
        ssize_t i = rsets_find(s, resource);
        return i >= 0 ? &s->v[i] : NULL;
}

dm_rset *ncm__rsets_ensure(dm_rsets *s, const char *resource)
{
        ssize_t i = rsets_find(s, resource);
        size_t at;
        dm_rset *v;
        char *name;

        if (i >= 0)
                return &s->v[i];
        at = (size_t)(-i - 1);
        name = strdup(resource);
        if (!name)
                return NULL;
        v = ncm__sorted_insert(s->v, s->n, sizeof(*v), at);
        if (!v) {
                free(name);
                return NULL;
        }
        s->v = v;
        v[at] = (dm_rset){name, NCM__STRSET_INIT};
        s->n++;
        return &v[at];
}

void ncm__rsets_remove(dm_rsets *s, const char *resource)
{
        ssize_t i = rsets_find(s, resource);
        if (i < 0)
                return;
        free(s->v[i].resource);
        ncm__strset_done(&s->v[i].set);
        memmove(s->v + i, s->v + i + 1, (s->n - (size_t)i - 1) * sizeof(*s->v));
        s->n--;
}

/* ---- resource names (apimachinery IsQualifiedName, core/v1 helper) ---- */

static bool alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool lower_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* IsDNS1123Subdomain: <= 253 bytes of dot-separated [a-z0-9]([-a-z0-9]*[a-z0-9])? labels. */
static bool dns1123_subdomain(const char *s, size_t len)
{
        size_t i = 0;
        if (len == 0 || len > 253)
                return false;
        for (;;) {
                size_t start = i;
                while (i < len && s[i] != '.') {
                        if (!lower_alnum(s[i]) && s[i] != '-')
                                return false;
                        i++;
                }
                if (i == start || !lower_alnum(s[start]) || !lower_alnum(s[i - 1]))
                        return false;
                if (i == len)
                        return true;
                i++; /* the dot */
        }
}

/* The name part of a qualified name: 1..63 bytes of ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]. */
static bool qualified_name_part(const char *s, size_t len)
{
        if (len == 0 || len > 63)
                return false;
        if (!alnum(s[0]) || !alnum(s[len - 1]))
                return false;
        for (size_t i = 0; i < len; i++)
                if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
                        return false;
        return true;
}

bool ncm_devmgr_is_extended_resource_name(const char *name)
{
        static const char requests[] = "requests.";
        const char *slash;

        if (!name)
                return false;
        /* IsNativeResource: no '/', or a "kubernetes.io/" prefixed name anywhere in it. */
        slash = strchr(name, '/');
        if (!slash || strstr(name, "kubernetes.io/"))
                return false;
        if (strncmp(name, requests, sizeof(requests) - 1) == 0)
                return false;
        /* IsQualifiedName("requests." + name): exactly one '/', prefix a DNS-1123 subdomain. */
        if (strchr(slash + 1, '/'))
                return false;
        {
                size_t plen = (size_t)(slash - name);
                char prefix[256 + sizeof(requests)];
                if (plen + sizeof(requests) - 1 > 253)
                        return false;
                memcpy(prefix, requests, sizeof(requests) - 1);
                memcpy(prefix + sizeof(requests) - 1, name, plen);
                if (!dns1123_subdomain(prefix, plen + sizeof(requests) - 1))
                        return false;
        }
        return qualified_name_part(slash + 1, strlen(slash + 1));
}

int ncm_devmgr_validate_resource_name(const char *name, ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT;
        int r;

        if (ncm_devmgr_is_extended_resource_name(name))
                return 0;
        if (name)
                ncm_buf_go_quote(&b, name, strlen(name));
        r = ncm_error_set(err, EINVAL, "the ResourceName %s is invalid", b.data ? b.data : "\"\"");
        ncm_buf_done(&b);
        return r;
}
