/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ContainerAllocateResponse: the plain C form, its protobuf encoding (Go's byte layout) and
 * decoding (protobuf-c, plus the checks Go's proto.Unmarshal makes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include "deviceplugin-v1beta1.pb-c.h"
#include "devicemanager-internal.h"

static void kv_free(ncm_devmgr_kv *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].key);
                free(v[i].value);
        }
        free(v);
}

ncm_devmgr_alloc_resp *ncm_devmgr_alloc_resp_new(void)
{
        return calloc(1, sizeof(ncm_devmgr_alloc_resp));
}

ncm_devmgr_alloc_resp *ncm_devmgr_alloc_resp_free(ncm_devmgr_alloc_resp *r)
{
        if (!r)
                return NULL;
        kv_free(r->envs, r->n_envs);
        kv_free(r->annotations, r->n_annotations);
        for (size_t i = 0; i < r->n_mounts; i++) {
                free(r->mounts[i].container_path);
                free(r->mounts[i].host_path);
        }
        free(r->mounts);
        for (size_t i = 0; i < r->n_devices; i++) {
                free(r->devices[i].container_path);
                free(r->devices[i].host_path);
                free(r->devices[i].permissions);
        }
        free(r->devices);
        for (size_t i = 0; i < r->n_cdi_devices; i++)
                free(r->cdi_devices[i]);
        free(r->cdi_devices);
        free(r);
        return NULL;
}

/* Grow an array of ELEM-byte items by one; the new item is zeroed. */
static void *grow(void *arr, size_t n, size_t elem)
{
        char *v = realloc(arr, (n + 1) * elem);
        if (v)
                memset(v + n * elem, 0, elem);
        return v;
}

static int add_kv(ncm_devmgr_kv **v, size_t *n, const char *key, const char *value)
{
        ncm_devmgr_kv *nv = grow(*v, *n, sizeof(**v));
        char *k, *val;
        if (!nv)
                return -ENOMEM;
        *v = nv;
        k = strdup(key ? key : "");
        val = strdup(value ? value : "");
        if (!k || !val) {
                free(k);
                free(val);
                return -ENOMEM;
        }
        nv[*n] = (ncm_devmgr_kv){k, val};
        (*n)++;
        return 0;
}

int ncm_devmgr_alloc_resp_add_env(ncm_devmgr_alloc_resp *r, const char *key, const char *value)
{
        return add_kv(&r->envs, &r->n_envs, key, value);
}

int ncm_devmgr_alloc_resp_add_annotation(ncm_devmgr_alloc_resp *r, const char *key,
                                         const char *value)
{
        return add_kv(&r->annotations, &r->n_annotations, key, value);
}

int ncm_devmgr_alloc_resp_add_mount(ncm_devmgr_alloc_resp *r, const char *container_path,
                                    const char *host_path, bool read_only)
{
        ncm_devmgr_mount *v = grow(r->mounts, r->n_mounts, sizeof(*v));
        char *c, *h;
        if (!v)
                return -ENOMEM;
        r->mounts = v;
        c = strdup(container_path ? container_path : "");
        h = strdup(host_path ? host_path : "");
        if (!c || !h) {
                free(c);
                free(h);
                return -ENOMEM;
        }
        v[r->n_mounts++] = (ncm_devmgr_mount){c, h, read_only};
        return 0;
}

int ncm_devmgr_alloc_resp_add_device(ncm_devmgr_alloc_resp *r, const char *container_path,
                                     const char *host_path, const char *permissions)
{
        ncm_devmgr_devspec *v = grow(r->devices, r->n_devices, sizeof(*v));
        char *c, *h, *p;
        if (!v)
                return -ENOMEM;
        r->devices = v;
        c = strdup(container_path ? container_path : "");
        h = strdup(host_path ? host_path : "");
        p = strdup(permissions ? permissions : "");
        if (!c || !h || !p) {
                free(c);
                free(h);
                free(p);
                return -ENOMEM;
        }
        v[r->n_devices++] = (ncm_devmgr_devspec){c, h, p};
        return 0;
}

int ncm_devmgr_alloc_resp_add_cdi_device(ncm_devmgr_alloc_resp *r, const char *name)
{
        char **v = grow(r->cdi_devices, r->n_cdi_devices, sizeof(*v));
        if (!v)
                return -ENOMEM;
        r->cdi_devices = v;
        v[r->n_cdi_devices] = strdup(name ? name : "");
        if (!v[r->n_cdi_devices])
                return -ENOMEM;
        r->n_cdi_devices++;
        return 0;
}

ncm_devmgr_alloc_resp *ncm_devmgr_alloc_resp_dup(const ncm_devmgr_alloc_resp *r)
{
        ncm_autoptr(ncm_devmgr_alloc_resp) d = ncm_devmgr_alloc_resp_new();
        if (!d)
                return NULL;
        for (size_t i = 0; i < r->n_envs; i++)
                if (ncm_devmgr_alloc_resp_add_env(d, r->envs[i].key, r->envs[i].value) < 0)
                        return NULL;
        for (size_t i = 0; i < r->n_mounts; i++)
                if (ncm_devmgr_alloc_resp_add_mount(d, r->mounts[i].container_path,
                                                    r->mounts[i].host_path,
                                                    r->mounts[i].read_only) < 0)
                        return NULL;
        for (size_t i = 0; i < r->n_devices; i++)
                if (ncm_devmgr_alloc_resp_add_device(d, r->devices[i].container_path,
                                                     r->devices[i].host_path,
                                                     r->devices[i].permissions) < 0)
                        return NULL;
        for (size_t i = 0; i < r->n_annotations; i++)
                if (ncm_devmgr_alloc_resp_add_annotation(d, r->annotations[i].key,
                                                         r->annotations[i].value) < 0)
                        return NULL;
        for (size_t i = 0; i < r->n_cdi_devices; i++)
                if (ncm_devmgr_alloc_resp_add_cdi_device(d, r->cdi_devices[i]) < 0)
                        return NULL;
        return NCM_TAKE_PTR(d);
}

/* ---- encoding, byte for byte as Go's proto.Marshal ---- */

enum { WT_VARINT = 0, WT_LEN = 2 };

static void put_varint(ncm_buf *b, uint64_t v)
{
        unsigned char tmp[10];
        size_t n = 0;
        do {
                tmp[n] = (unsigned char)(v & 0x7f);
                v >>= 7;
                if (v)
                        tmp[n] |= 0x80;
                n++;
        } while (v);
        ncm_buf_append(b, tmp, n);
}

static void put_tag(ncm_buf *b, unsigned field, unsigned wt)
{
        put_varint(b, ((uint64_t)field << 3) | wt);
}

static void put_bytes(ncm_buf *b, unsigned field, const void *data, size_t len)
{
        put_tag(b, field, WT_LEN);
        put_varint(b, len);
        ncm_buf_append(b, data, len);
}

/* A proto3 string field: omitted when empty. */
static void put_string(ncm_buf *b, unsigned field, const char *s)
{
        if (s && *s)
                put_bytes(b, field, s, strlen(s));
}

/* A map<string,string> entry: Go writes key and value even when empty. */
static void put_map_entry(ncm_buf *b, unsigned field, const ncm_devmgr_kv *kv, ncm_buf *tmp)
{
        const char *k = kv->key ? kv->key : "", *v = kv->value ? kv->value : "";
        ncm_buf_reset(tmp);
        put_bytes(tmp, 1, k, strlen(k));
        put_bytes(tmp, 2, v, strlen(v));
        put_bytes(b, field, tmp->data, tmp->len);
}

int ncm_devmgr_alloc_resp_encode(const ncm_devmgr_alloc_resp *r, unsigned char **ret,
                                 size_t *ret_len, ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT, tmp = NCM_BUF_INIT;
        unsigned char *out;
        size_t len;

        for (size_t i = 0; i < r->n_envs; i++)
                put_map_entry(&b, 1, &r->envs[i], &tmp);
        for (size_t i = 0; i < r->n_mounts; i++) {
                ncm_buf_reset(&tmp);
                put_string(&tmp, 1, r->mounts[i].container_path);
                put_string(&tmp, 2, r->mounts[i].host_path);
                if (r->mounts[i].read_only) {
                        put_tag(&tmp, 3, WT_VARINT);
                        put_varint(&tmp, 1);
                }
                put_bytes(&b, 2, tmp.data, tmp.len);
        }
        for (size_t i = 0; i < r->n_devices; i++) {
                ncm_buf_reset(&tmp);
                put_string(&tmp, 1, r->devices[i].container_path);
                put_string(&tmp, 2, r->devices[i].host_path);
                put_string(&tmp, 3, r->devices[i].permissions);
                put_bytes(&b, 3, tmp.data, tmp.len);
        }
        for (size_t i = 0; i < r->n_annotations; i++)
                put_map_entry(&b, 4, &r->annotations[i], &tmp);
        for (size_t i = 0; i < r->n_cdi_devices; i++) {
                ncm_buf_reset(&tmp);
                put_string(&tmp, 1, r->cdi_devices[i]);
                put_bytes(&b, 5, tmp.data, tmp.len);
        }
        if (ncm_buf_failed(&b) || ncm_buf_failed(&tmp)) {
                ncm_buf_done(&b);
                ncm_buf_done(&tmp);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        ncm_buf_done(&tmp);
        len = b.len;
        out = b.data ? (unsigned char *)b.data : malloc(1);
        if (!out)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = out;
        *ret_len = len;
        return 0;
}

/* ---- decoding ---- */

static int cmp_kv(const void *a, const void *b)
{
        return strcmp(((const ncm_devmgr_kv *)a)->key, ((const ncm_devmgr_kv *)b)->key);
}

/* Go map semantics: the last entry of a key wins; then sort by key. */
static void unique_keys(ncm_devmgr_kv *v, size_t *n)
{
        size_t out = 0;
        for (size_t i = 0; i < *n; i++) {
                size_t j;
                for (j = 0; j < out; j++)
                        if (strcmp(v[j].key, v[i].key) == 0)
                                break;
                if (j < out) {
                        free(v[j].value);
                        free(v[i].key);
                        v[j].value = v[i].value;
                } else {
                        v[out++] = v[i];
                }
        }
        *n = out;
        if (out > 1)
                qsort(v, out, sizeof(*v), cmp_kv);
}

static bool utf8(const char *s)
{
        return !s || ncm__utf8_valid(s, strlen(s));
}

static int check_utf8(const V1beta1__ContainerAllocateResponse *m, ncm_error *err)
{
        const char *bad = NULL;
        for (size_t i = 0; i < m->n_envs && !bad; i++)
                if (!utf8(m->envs[i]->key) || !utf8(m->envs[i]->value))
                        bad = "envs";
        for (size_t i = 0; i < m->n_mounts && !bad; i++)
                if (!utf8(m->mounts[i]->container_path) || !utf8(m->mounts[i]->host_path))
                        bad = "mounts";
        for (size_t i = 0; i < m->n_devices && !bad; i++)
                if (!utf8(m->devices[i]->container_path) || !utf8(m->devices[i]->host_path) ||
                    !utf8(m->devices[i]->permissions))
                        bad = "devices";
        for (size_t i = 0; i < m->n_annotations && !bad; i++)
                if (!utf8(m->annotations[i]->key) || !utf8(m->annotations[i]->value))
                        bad = "annotations";
        for (size_t i = 0; i < m->n_cdi_devices && !bad; i++)
                if (!utf8(m->cdi_devices[i]->name))
                        bad = "cdi_devices";
        if (bad)
                return ncm_error_set(err, EINVAL,
                                     "invalid ContainerAllocateResponse: %s: string field "
                                     "contains invalid UTF-8",
                                     bad);
        return 0;
}

int ncm_devmgr_alloc_resp_decode(const void *data, size_t len, ncm_devmgr_alloc_resp **ret,
                                 ncm_error *err)
{
        static const uint8_t empty[1];
        V1beta1__ContainerAllocateResponse *m;
        ncm_autoptr(ncm_devmgr_alloc_resp) r = NULL;
        int k = 0;

        m = v1beta1__container_allocate_response__unpack(NULL, len,
                                                         len ? (const uint8_t *)data : empty);
        if (!m)
                return ncm_error_set(err, EINVAL,
                                     "invalid ContainerAllocateResponse: malformed protobuf "
                                     "(%zu bytes)",
                                     len);
        /* protobuf-c hands out strings NUL-terminated: one with an embedded NUL reads short here
         * (the checkpoint keeps the wire bytes, so nothing is lost there). */
        if (check_utf8(m, err) < 0) {
                v1beta1__container_allocate_response__free_unpacked(m, NULL);
                return -EINVAL;
        }
        r = ncm_devmgr_alloc_resp_new();
        if (!r)
                k = -ENOMEM;
        for (size_t i = 0; k == 0 && i < m->n_envs; i++)
                k = ncm_devmgr_alloc_resp_add_env(r, m->envs[i]->key, m->envs[i]->value);
        for (size_t i = 0; k == 0 && i < m->n_mounts; i++)
                k = ncm_devmgr_alloc_resp_add_mount(r, m->mounts[i]->container_path,
                                                    m->mounts[i]->host_path,
                                                    m->mounts[i]->read_only);
        for (size_t i = 0; k == 0 && i < m->n_devices; i++)
                k = ncm_devmgr_alloc_resp_add_device(r, m->devices[i]->container_path,
                                                     m->devices[i]->host_path,
                                                     m->devices[i]->permissions);
        for (size_t i = 0; k == 0 && i < m->n_annotations; i++)
                k = ncm_devmgr_alloc_resp_add_annotation(r, m->annotations[i]->key,
                                                         m->annotations[i]->value);
        for (size_t i = 0; k == 0 && i < m->n_cdi_devices; i++)
                k = ncm_devmgr_alloc_resp_add_cdi_device(r, m->cdi_devices[i]->name);
        v1beta1__container_allocate_response__free_unpacked(m, NULL);
        if (k < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        unique_keys(r->envs, &r->n_envs);
        unique_keys(r->annotations, &r->n_annotations);
        *ret = NCM_TAKE_PTR(r);
        return 0;
}
