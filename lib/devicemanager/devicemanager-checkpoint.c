/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubelet_internal_checkpoint: read it as Go's encoding/json reads it into checkpoint.Data,
 * write it as json.Marshal writes it, and checksum it as the kubelet does (FNV-1a 32 over
 * the go-spew "%#v" rendering of checkpoint.checkpointData).
 *
 * The reader walks the document with base/gojson.h (Go's scanner, string unquoting and field
 * lookup) and applies Go's decoding rules for this schema, because they decide the value that
 * is hashed: null leaves a value alone (and makes a map or slice nil), a repeated field is
 * decoded again (maps merge, a slice is decoded over its elements), keys match
 * case-insensitively, invalid UTF-8 becomes U+FFFD.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include <nodecm/fs.h>
#include <nodecm/hash.h>
#include "base/array.h"
#include "base/gojson.h"
#include "base/kubelet-checkpoint.h"
#include "devicemanager-internal.h"

/* ---- freeing ---- */

void ncm__numa_ids_done(ncm_devmgr_numa_ids *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                ncm_devmgr_strv_free(v[i].ids);
        free(v);
}

static void strv_n_free(char **v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

static void entry_done(ncm_devmgr_checkpoint_entry *e)
{
        free(e->pod_uid);
        free(e->container_name);
        free(e->resource_name);
        ncm__numa_ids_done(e->device_ids, e->n_device_ids);
        free(e->alloc_resp);
        memset(e, 0, sizeof(*e));
}

static void entries_free(ncm_devmgr_checkpoint_entry *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                entry_done(&v[i]);
        free(v);
}

static void registered_free(ncm_devmgr_registered *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].resource);
                strv_n_free(v[i].ids, v[i].n_ids);
        }
        free(v);
}

ncm_devmgr_checkpoint *ncm_devmgr_checkpoint_free(ncm_devmgr_checkpoint *cp)
{
        if (!cp)
                return NULL;
        entries_free(cp->entries, cp->n_entries);
        registered_free(cp->registered, cp->n_registered);
        free(cp);
        return NULL;
}

int ncm__numa_ids_copy(ncm_devmgr_numa_ids **dst, size_t *dst_n, const ncm_devmgr_numa_ids *src,
                       size_t n)
{
        ncm_devmgr_numa_ids *v = NULL;
        if (n) {
                v = calloc(n, sizeof(*v));
                if (!v)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                v[i].node = src[i].node;
                v[i].ids_null = src[i].ids_null;
                v[i].n_ids = src[i].n_ids;
                if (src[i].ids_null)
                        continue;
                v[i].ids = ncm__strv_dup((const char *const *)src[i].ids, src[i].n_ids);
                if (!v[i].ids) {
                        ncm__numa_ids_done(v, n);
                        return -ENOMEM;
                }
        }
        *dst = v;
        *dst_n = n;
        return 0;
}

/* ---- reading as encoding/json reads into checkpoint.Data ---- */

static int type_error(const ncm_gojson *g, ncm_error *err, const char *path, const char *want,
                      ncm_gojson_kind k)
{
        return ncm_error_set(err, EINVAL, "%s: %s: expected %s, got %s", g->name, path, want,
                             ncm__gojson_kind_name(k));
}

static int nul_error(const ncm_gojson *g, ncm_error *err)
{
        return ncm_error_set(err, EINVAL, "%s: a string contains \\u0000, which is not supported",
                             g->name);
}

/* The string (or, from next_member(), the key) S of LEN bytes as a C string: NUL is refused. */
static int c_string(const ncm_gojson *g, char **s, size_t len, ncm_error *err)
{
        if (ncm__ckpt_c_string(*s, len))
                return 0;
        free(*s);
        *s = NULL;
        return nul_error(g, err);
}

static int dec_cstring(ncm_gojson *g, char **ret, size_t *ret_len, ncm_error *err)
{
        size_t len;
        int r = ncm__gojson_string(g, ret, &len, err);
        if (r < 0)
                return r;
        if (ret_len)
                *ret_len = len;
        return c_string(g, ret, len, err);
}

/* The next member's key, as a C string. */
static int next_key(ncm_gojson *g, bool *first, char **key, ncm_error *err)
{
        size_t len;
        int r = ncm__gojson_next_member(g, first, key, &len, err);
        if (r <= 0)
                return r;
        r = c_string(g, key, len, err);
        return r < 0 ? r : 1;
}

/* A Go string field: null leaves it alone. */
static int dec_string(ncm_gojson *g, const char *path, char **field, ncm_error *err)
{
        ncm_ckpt_bad bad;
        char *s;
        int r = ncm__ckpt_string_field(g, &s, NULL, &bad, err);

        if (r == -EINVAL)
                return bad.nul ? nul_error(g, err) : type_error(g, err, path, "string", bad.kind);
        if (r < 0)
                return r;
        if (r == 0) {
                free(*field);
                *field = s;
        }
        return 0;
}

/* A []string decoded into a fresh (nil) slice, as a map element is: null stays nil. */
static int dec_strlist(ncm_gojson *g, const char *path, bool *is_null, char ***ids, size_t *n_ids,
                       ncm_error *err)
{
        ncm_gojson_kind k = ncm__gojson_peek(g);
        bool first = true;
        char **v = NULL;
        size_t n = 0, cap = 0;
        int r = 0;

        *is_null = true;
        *ids = NULL;
        *n_ids = 0;
        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(g);
                return 0;
        }
        if (k != NCM_GOJSON_ARRAY)
                return type_error(g, err, path, "array of strings", k);
        while (ncm__gojson_next_element(g, &first)) {
                char *s = NULL;
                k = ncm__gojson_peek(g);
                if (k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(g);
                        s = strdup("");
                } else if (k == NCM_GOJSON_STRING) {
                        if ((r = dec_cstring(g, &s, NULL, err)) < 0)
                                break;
                } else {
                        r = type_error(g, err, path, "string element", k);
                        break;
                }
                /* the slot after the new string is the (zeroed) terminator */
                if (!s || ncm__array_grow(v, cap, n + 1) < 0) {
                        free(s);
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                        break;
                }
                v[n++] = s;
        }
        if (r < 0) {
                strv_n_free(v, n);
                return r;
        }
        if (!v) {
                v = calloc(1, sizeof(*v));
                if (!v)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        *is_null = false;
        *ids = v;
        *n_ids = n;
        return 0;
}

/* DevicesPerNUMA (map[int64][]string): an object merges into the map, null makes it nil. */
static int dec_numa_map(ncm_gojson *g, const char *path, ncm_devmgr_checkpoint_entry *e,
                        ncm_error *err)
{
        ncm_gojson_kind k = ncm__gojson_peek(g);
        bool first = true;
        char *key = NULL;
        char sub[512];
        int r;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(g);
                ncm__numa_ids_done(e->device_ids, e->n_device_ids);
                e->device_ids = NULL;
                e->n_device_ids = 0;
                e->device_ids_null = true;
                return 0;
        }
        if (k != NCM_GOJSON_OBJECT)
                return type_error(g, err, path, "object", k);
        e->device_ids_null = false;
        while ((r = next_key(g, &first, &key, err)) > 0) {
                ncm_devmgr_numa_ids item = {0};
                int64_t node = 0;
                size_t at;

                snprintf(sub, sizeof(sub), "%.200s[%.200s]", path, key);
                r = dec_strlist(g, sub, &item.ids_null, &item.ids, &item.n_ids, err);
                if (r >= 0 && !ncm__gojson_parse_int64(key, strlen(key), &node))
                        r = ncm_error_set(err, EINVAL,
                                          "%s: %s: key \"%s\" is not a NUMA node number", g->name,
                                          path, key);
                free(key);
                key = NULL;
                if (r < 0) {
                        strv_n_free(item.ids, item.n_ids);
                        return r;
                }
                item.node = node;
                /* Replace an existing key, else insert in numeric order. */
                for (at = 0; at < e->n_device_ids && e->device_ids[at].node < node; at++)
                        ;
                if (at < e->n_device_ids && e->device_ids[at].node == node) {
                        strv_n_free(e->device_ids[at].ids, e->device_ids[at].n_ids);
                        e->device_ids[at] = item;
                } else {
                        ncm_devmgr_numa_ids *nv =
                                        realloc(e->device_ids, (e->n_device_ids + 1) * sizeof(*nv));
                        if (!nv) {
                                strv_n_free(item.ids, item.n_ids);
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        }
                        e->device_ids = nv;
                        memmove(nv + at + 1, nv + at, (e->n_device_ids - at) * sizeof(*nv));
                        nv[at] = item;
                        e->n_device_ids++;
                }
        }
        return r;
}

/*
 * Go decodes a JSON array over the slice a field already holds: element i of the array is
 * decoded into element i of the slice, and a shorter array only shortens the slice, so the
 * elements past its end stay in its capacity and reappear, as they were, when a later array is
 * longer again. (Go reallocates only when the array outgrows the capacity, and then no element
 * lies past the end, whatever the Go version's growth policy.) null and [] give a slice without
 * such leftovers, as does a base64 string for []byte (its spare capacity is zeroed).
 *
 * A slot keeps that for one PodDeviceEntries element: its AllocResp bytes up to MAX, the first
 * alloc_resp_len of them visible, in a buffer of CAP bytes.
 */
typedef struct slot {
        size_t max;
        size_t cap;
} slot;

/*
 * The PodDeviceEntries elements that exist: cp->entries[0..max), the first n_entries visible;
 * CAP and VCAP are the capacities of cp->entries and V.
 */
typedef struct slots {
        size_t max;
        slot *v;
        size_t cap, vcap;
} slots;

/* []byte: a base64 string, null (nil), or an array of byte values decoded over the slice. */
static int dec_bytes(ncm_gojson *g, const char *path, ncm_devmgr_checkpoint_entry *e, slot *sl,
                     ncm_error *err)
{
        ncm_gojson_kind k = ncm__gojson_peek(g);
        bool first = true;
        size_t i = 0;
        int r = 0;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(g);
                free(e->alloc_resp);
                e->alloc_resp = NULL;
                e->alloc_resp_len = 0;
                e->alloc_resp_null = true;
                *sl = (slot){0, 0};
                return 0;
        }
        if (k == NCM_GOJSON_STRING) {
                unsigned char *data = NULL;
                size_t slen, len = 0, bad = 0;
                char *s;
                if ((r = dec_cstring(g, &s, &slen, err)) < 0)
                        return r;
                r = ncm_base64_decode(s, slen, &data, &len, &bad);
                free(s);
                if (r == -ENOMEM)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                if (r < 0)
                        return ncm_error_set(err, EINVAL,
                                             "%s: %s: illegal base64 data at input byte %zu",
                                             g->name, path, bad);
                free(e->alloc_resp);
                e->alloc_resp = data;
                e->alloc_resp_len = len;
                e->alloc_resp_null = false;
                *sl = (slot){len, len};
                return 0;
        }
        if (k != NCM_GOJSON_ARRAY)
                return type_error(g, err, path, "base64 string", k);
        while (ncm__gojson_next_element(g, &first)) {
                if (ncm__array_grow(e->alloc_resp, sl->cap, i) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                if (i == sl->max)
                        e->alloc_resp[sl->max++] = 0;
                if (i >= e->alloc_resp_len)
                        e->alloc_resp_len = i + 1;
                e->alloc_resp_null = false;
                k = ncm__gojson_peek(g);
                if (k == NCM_GOJSON_NULL) {
                        /* null leaves the byte as it is. */
                        ncm__gojson_skip(g);
                } else if (k == NCM_GOJSON_NUMBER) {
                        const char *text;
                        size_t n = ncm__gojson_number(g, &text);
                        uint64_t v = 0;
                        /* strconv.ParseUint, then uint8's range. */
                        if (!ncm__gojson_parse_uint64(text, n, &v) || v > 255)
                                return ncm_error_set(err, EINVAL,
                                                     "%s: %s: cannot unmarshal number %.*s into a "
                                                     "byte",
                                                     g->name, path, (int)(n > 32 ? 32 : n), text);
                        e->alloc_resp[i] = (unsigned char)v;
                } else {
                        return type_error(g, err, path, "byte value", k);
                }
                i++;
        }
        if (i == 0) {
                /* [] is a new empty slice: nothing left past its end. */
                unsigned char *empty = malloc(1);
                if (!empty)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                free(e->alloc_resp);
                e->alloc_resp = empty;
                *sl = (slot){0, 1};
        }
        e->alloc_resp_len = i;
        e->alloc_resp_null = false;
        return 0;
}

static int zero_entry(ncm_devmgr_checkpoint_entry *e)
{
        memset(e, 0, sizeof(*e));
        e->pod_uid = strdup("");
        e->container_name = strdup("");
        e->resource_name = strdup("");
        e->device_ids_null = true;
        e->alloc_resp_null = true;
        if (!e->pod_uid || !e->container_name || !e->resource_name) {
                entry_done(e);
                return -ENOMEM;
        }
        return 0;
}

static const char *const entry_fields[] = {"PodUID", "ContainerName", "ResourceName", "DeviceIDs",
                                           "AllocResp"};

/* A PodDevicesEntry struct, decoded over E: null leaves it as it is. */
static int dec_entry(ncm_gojson *g, const char *path, ncm_devmgr_checkpoint_entry *e, slot *sl,
                     ncm_error *err)
{
        ncm_gojson_kind k = ncm__gojson_peek(g);
        bool first = true;
        char sub[512];
        int r, f;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(g);
                return 0;
        }
        if (k != NCM_GOJSON_OBJECT)
                return type_error(g, err, path, "object", k);
        while ((r = ncm__ckpt_next_field(g, &first, entry_fields, NCM_ELEMENTSOF(entry_fields), &f,
                                         err)) > 0) {
                if (f >= 0)
                        snprintf(sub, sizeof(sub), "%.400s.%s", path, entry_fields[f]);
                switch (f) {
                case 0:
                        r = dec_string(g, sub, &e->pod_uid, err);
                        break;
                case 1:
                        r = dec_string(g, sub, &e->container_name, err);
                        break;
                case 2:
                        r = dec_string(g, sub, &e->resource_name, err);
                        break;
                case 3:
                        r = dec_numa_map(g, sub, e, err);
                        break;
                case 4:
                        r = dec_bytes(g, sub, e, sl, err);
                        break;
                default:
                        ncm__gojson_skip(g);
                        break;
                }
                if (r < 0)
                        return r;
        }
        return r;
}

/* Free the PodDeviceEntries elements past the first KEEP. */
static void drop_entries(ncm_devmgr_checkpoint *cp, slots *sl, size_t keep)
{
        for (size_t i = keep; i < sl->max; i++)
                entry_done(&cp->entries[i]);
        if (cp->n_entries > keep)
                cp->n_entries = keep;
        sl->max = keep;
        if (keep == 0) {
                free(cp->entries);
                cp->entries = NULL;
                sl->cap = 0;
        }
}

/*
 * []PodDevicesEntry: null makes it nil; an array is decoded over the elements the slice has
 * (see struct slot): a repeated PodDeviceEntries updates the earlier entries field by field,
 * and an element past the old end starts from the zero entry or what was left there.
 */
static int dec_entries(ncm_gojson *g, ncm_devmgr_checkpoint *cp, slots *sl, ncm_error *err)
{
        ncm_gojson_kind k = ncm__gojson_peek(g);
        bool first = true;
        size_t i = 0;
        char path[64];
        int r;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(g);
                drop_entries(cp, sl, 0);
                cp->entries_null = true;
                return 0;
        }
        if (k != NCM_GOJSON_ARRAY)
                return type_error(g, err, "Data.PodDeviceEntries", "array", k);
        cp->entries_null = false;
        while (ncm__gojson_next_element(g, &first)) {
                if (i == sl->max) {
                        if (ncm__array_grow(cp->entries, sl->cap, i) < 0 ||
                            ncm__array_grow(sl->v, sl->vcap, i) < 0 ||
                            zero_entry(&cp->entries[i]) < 0)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        sl->v[i] = (slot){0, 0};
                        sl->max++;
                }
                if (i >= cp->n_entries)
                        cp->n_entries = i + 1;
                snprintf(path, sizeof(path), "Data.PodDeviceEntries[%zu]", i);
                if ((r = dec_entry(g, path, &cp->entries[i], &sl->v[i], err)) < 0)
                        return r;
                i++;
        }
        if (i == 0)
                drop_entries(cp, sl, 0); /* [] is a new empty slice */
        else
                cp->n_entries = i;
        return 0;
}

/* map[string][]string: an object merges into the map, null makes it nil. */
static int dec_registered(ncm_gojson *g, ncm_devmgr_checkpoint *cp, ncm_error *err)
{
        ncm_gojson_kind k = ncm__gojson_peek(g);
        bool first = true;
        char *key = NULL;
        char path[512];
        int r;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(g);
                registered_free(cp->registered, cp->n_registered);
                cp->registered = NULL;
                cp->n_registered = 0;
                cp->registered_null = true;
                return 0;
        }
        if (k != NCM_GOJSON_OBJECT)
                return type_error(g, err, "Data.RegisteredDevices", "object", k);
        cp->registered_null = false;
        while ((r = next_key(g, &first, &key, err)) > 0) {
                ncm_devmgr_registered item = {0};
                size_t at;
                int cmp = 1;

                snprintf(path, sizeof(path), "Data.RegisteredDevices[%.400s]", key);
                r = dec_strlist(g, path, &item.ids_null, &item.ids, &item.n_ids, err);
                if (r < 0) {
                        free(key);
                        return r;
                }
                item.resource = key;
                key = NULL;
                for (at = 0; at < cp->n_registered; at++) {
                        cmp = strcmp(cp->registered[at].resource, item.resource);
                        if (cmp >= 0)
                                break;
                }
                if (at < cp->n_registered && cmp == 0) {
                        free(cp->registered[at].resource);
                        strv_n_free(cp->registered[at].ids, cp->registered[at].n_ids);
                        cp->registered[at] = item;
                } else {
                        ncm_devmgr_registered *nv = realloc(cp->registered,
                                                            (cp->n_registered + 1) * sizeof(*nv));
                        if (!nv) {
                                free(item.resource);
                                strv_n_free(item.ids, item.n_ids);
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        }
                        cp->registered = nv;
                        memmove(nv + at + 1, nv + at, (cp->n_registered - at) * sizeof(*nv));
                        nv[at] = item;
                        cp->n_registered++;
                }
        }
        return r;
}

static int dec_data(ncm_gojson *g, ncm_devmgr_checkpoint *cp, slots *sl, ncm_error *err)
{
        static const char *const fields[] = {"PodDeviceEntries", "RegisteredDevices"};
        ncm_gojson_kind k = ncm__gojson_peek(g);
        bool first = true;
        int r, f;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(g);
                return 0;
        }
        if (k != NCM_GOJSON_OBJECT)
                return type_error(g, err, "Data", "object", k);
        while ((r = ncm__ckpt_next_field(g, &first, fields, NCM_ELEMENTSOF(fields), &f, err)) > 0) {
                if (f == 0)
                        r = dec_entries(g, cp, sl, err);
                else if (f == 1)
                        r = dec_registered(g, cp, err);
                else
                        ncm__gojson_skip(g);
                if (r < 0)
                        return r;
        }
        return r;
}

/* checksum.Checksum (uint64): strconv.ParseUint of the number's text. */
static int dec_checksum(ncm_gojson *g, ncm_devmgr_checkpoint *cp, ncm_error *err)
{
        ncm_ckpt_bad bad;

        if (ncm__ckpt_checksum_field(g, &cp->checksum, &bad) >= 0)
                return 0;
        if (!bad.text)
                return type_error(g, err, "Checksum", "number", bad.kind);
        return ncm_error_set(err, EINVAL,
                             "%s: Checksum: cannot unmarshal number %.*s into a 64-bit "
                             "unsigned integer",
                             g->name, (int)(bad.len > 40 ? 40 : bad.len), bad.text);
}

static const char *const top_fields[] = {"Data", "Checksum"};

/* The checkpoint.Data document at G into CP. */
static int dec_document(ncm_gojson *g, ncm_devmgr_checkpoint *cp, slots *sl, ncm_error *err)
{
        ncm_gojson_kind k = ncm__gojson_peek(g);
        bool first = true;
        int r, f;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(g);
                return 0;
        }
        if (k != NCM_GOJSON_OBJECT)
                return ncm_error_set(err, EINVAL,
                                     "%s: expected a JSON object (checkpoint.Data), got %s",
                                     g->name, ncm__gojson_kind_name(k));
        while ((r = ncm__ckpt_next_field(g, &first, top_fields, NCM_ELEMENTSOF(top_fields), &f,
                                         err)) > 0) {
                if (f == 0)
                        r = dec_data(g, cp, sl, err);
                else if (f == 1)
                        r = dec_checksum(g, cp, err);
                else
                        ncm__gojson_skip(g);
                if (r < 0)
                        return r;
        }
        return r;
}

int ncm_devmgr_checkpoint_parse(const char *text, size_t len, const char *name,
                                ncm_devmgr_checkpoint **ret, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
        slots sl = {0, NULL, 0, 0};
        ncm_gojson g;
        int r;

        if (!name)
                name = "<checkpoint>";
        r = ncm__ckpt_open(&g, text, len, name, NCM_DEVMGR_CHECKPOINT_MAX, err);
        if (r < 0)
                return r;
        /* The kubelet decodes into a value that starts with [] and {} (not nil). */
        cp = calloc(1, sizeof(*cp));
        if (!cp)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = dec_document(&g, cp, &sl, err);
        /* What is left past the slice's end is of no more use once the document is read. */
        for (size_t i = cp->n_entries; i < sl.max; i++)
                entry_done(&cp->entries[i]);
        free(sl.v);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(cp);
        return 0;
}

int ncm_devmgr_checkpoint_probe(const char *text, size_t len, const char *name, ncm_error *err)
{
        /* "Data" alone: a bare {"Checksum": ...} could be any checkpoint */
        return ncm__ckpt_probe(text, len, name ? name : "<checkpoint>", NCM_DEVMGR_CHECKPOINT_MAX,
                               top_fields, 1, err);
}

int ncm_devmgr_checkpoint_drop_pod(ncm_devmgr_checkpoint *cp, const char *pod_uid)
{
        size_t out = 0;
        int dropped = 0;
        for (size_t i = 0; i < cp->n_entries; i++) {
                if (strcmp(cp->entries[i].pod_uid, pod_uid) == 0) {
                        entry_done(&cp->entries[i]);
                        dropped++;
                } else {
                        cp->entries[out++] = cp->entries[i];
                }
        }
        cp->n_entries = out;
        return dropped;
}

int ncm_devmgr_checkpoint_load(int rootfd, const char *path, ncm_devmgr_checkpoint **ret,
                               ncm_error *err)
{
        ncm_autofree char *text = NULL;
        size_t len = 0;
        int r;

        r = ncm_fs_read_all(rootfd, path, NCM_DEVMGR_CHECKPOINT_MAX, &text, &len, err);
        if (r == -EFBIG)
                return ncm_error_set(err, EFBIG, "%s: checkpoint larger than %u bytes", path,
                                     NCM_DEVMGR_CHECKPOINT_MAX);
        if (r < 0)
                return r;
        return ncm_devmgr_checkpoint_parse(text, len, path, ret, err);
}

/* ---- go-spew rendering and checksum ---- */

static void spew_entry(ncm_buf *b, const ncm_devmgr_checkpoint_entry *e)
{
        /* a slice element: a struct without its type */
        ncm_buf_putc(b, '{');
        ncm__spew_field(b, 0, "PodUID", "string");
        ncm_buf_puts(b, e->pod_uid);
        ncm__spew_field(b, 1, "ContainerName", "string");
        ncm_buf_puts(b, e->container_name);
        ncm__spew_field(b, 2, "ResourceName", "string");
        ncm_buf_puts(b, e->resource_name);
        ncm__spew_field(b, 3, "DeviceIDs", "checkpoint.DevicesPerNUMA");
        if (e->device_ids_null) {
                ncm__spew_nil(b);
        } else {
                ncm_buf_puts(b, "map[");
                for (size_t k = 0; k < e->n_device_ids; k++) {
                        char key[24];
                        snprintf(key, sizeof(key), "%" PRId64, e->device_ids[k].node);
                        ncm__spew_key(b, k, key);
                        ncm__spew_strings(b, e->device_ids[k].ids_null, e->device_ids[k].ids,
                                          e->device_ids[k].n_ids);
                }
                ncm_buf_putc(b, ']');
        }
        ncm__spew_field(b, 4, "AllocResp", "[]uint8");
        ncm__spew_bytes(b, e->alloc_resp_null, e->alloc_resp, e->alloc_resp_len);
        ncm_buf_putc(b, '}');
}

void ncm_devmgr_checkpoint_spew(const ncm_devmgr_checkpoint *cp, ncm_buf *b)
{
        ncm_buf_puts(b, "(checkpoint.checkpointData){");
        ncm__spew_field(b, 0, "PodDeviceEntries", "[]checkpoint.PodDevicesEntry");
        if (cp->entries_null) {
                ncm__spew_nil(b);
        } else {
                ncm_buf_putc(b, '[');
                for (size_t i = 0; i < cp->n_entries; i++) {
                        ncm__spew_sep(b, i);
                        spew_entry(b, &cp->entries[i]);
                }
                ncm_buf_putc(b, ']');
        }
        ncm__spew_field(b, 1, "RegisteredDevices", "map[string][]string");
        if (cp->registered_null) {
                ncm__spew_nil(b);
        } else {
                ncm_buf_puts(b, "map[");
                for (size_t i = 0; i < cp->n_registered; i++) {
                        ncm__spew_key(b, i, cp->registered[i].resource);
                        ncm__spew_strings(b, cp->registered[i].ids_null, cp->registered[i].ids,
                                          cp->registered[i].n_ids);
                }
                ncm_buf_putc(b, ']');
        }
        ncm_buf_putc(b, '}');
}

uint64_t ncm_devmgr_checkpoint_checksum(const ncm_devmgr_checkpoint *cp)
{
        ncm_buf b = NCM_BUF_INIT;
        uint32_t h;

        ncm_devmgr_checkpoint_spew(cp, &b);
        /* out of memory: a value no 32-bit checksum can match */
        return ncm__spew_sum(&b, &h) < 0 ? UINT64_MAX : h;
}

int ncm_devmgr_checkpoint_verify(const ncm_devmgr_checkpoint *cp, ncm_error *err)
{
        uint64_t computed = ncm_devmgr_checkpoint_checksum(cp);
        if (computed != cp->checksum)
                return ncm_error_set(err, NCM_E_CHECKSUM,
                                     "checkpoint is corrupted (checksum %" PRIu64
                                     ", computed %" PRIu64 ")",
                                     cp->checksum, computed);
        return 0;
}

/* ---- encoding/json output ---- */

static void json_str(ncm_buf *b, const char *s)
{
        ncm_buf_json_string(b, s, strlen(s));
}

static void json_strv(ncm_buf *b, bool is_null, char *const *v, size_t n)
{
        if (is_null) {
                ncm_buf_puts(b, "null");
                return;
        }
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                if (i)
                        ncm_buf_putc(b, ',');
                json_str(b, v[i]);
        }
        ncm_buf_putc(b, ']');
}

typedef struct numa_key {
        char text[24];
        size_t index;
} numa_key;

static int cmp_numa_key(const void *a, const void *b)
{
        return strcmp(((const numa_key *)a)->text, ((const numa_key *)b)->text);
}

/* encoding/json sorts map keys by their text: "-1" < "0" < "10" < "2". */
static void json_numa_map(ncm_buf *b, const ncm_devmgr_checkpoint_entry *e)
{
        numa_key *keys;
        if (e->device_ids_null) {
                ncm_buf_puts(b, "null");
                return;
        }
        keys = calloc(e->n_device_ids ? e->n_device_ids : 1, sizeof(*keys));
        if (!keys) {
                b->oom = true;
                return;
        }
        for (size_t i = 0; i < e->n_device_ids; i++) {
                snprintf(keys[i].text, sizeof(keys[i].text), "%" PRId64, e->device_ids[i].node);
                keys[i].index = i;
        }
        qsort(keys, e->n_device_ids, sizeof(*keys), cmp_numa_key);
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < e->n_device_ids; i++) {
                const ncm_devmgr_numa_ids *d = &e->device_ids[keys[i].index];
                if (i)
                        ncm_buf_putc(b, ',');
                ncm_buf_printf(b, "\"%s\":", keys[i].text);
                json_strv(b, d->ids_null, d->ids, d->n_ids);
        }
        ncm_buf_putc(b, '}');
        free(keys);
}

void ncm_devmgr_checkpoint_format(const ncm_devmgr_checkpoint *cp, ncm_buf *b)
{
        ncm_buf_puts(b, "{\"Data\":{\"PodDeviceEntries\":");
        if (cp->entries_null) {
                ncm_buf_puts(b, "null");
        } else {
                ncm_buf_putc(b, '[');
                for (size_t i = 0; i < cp->n_entries; i++) {
                        const ncm_devmgr_checkpoint_entry *e = &cp->entries[i];
                        if (i)
                                ncm_buf_putc(b, ',');
                        ncm_buf_puts(b, "{\"PodUID\":");
                        json_str(b, e->pod_uid);
                        ncm_buf_puts(b, ",\"ContainerName\":");
                        json_str(b, e->container_name);
                        ncm_buf_puts(b, ",\"ResourceName\":");
                        json_str(b, e->resource_name);
                        ncm_buf_puts(b, ",\"DeviceIDs\":");
                        json_numa_map(b, e);
                        ncm_buf_puts(b, ",\"AllocResp\":");
                        if (e->alloc_resp_null) {
                                ncm_buf_puts(b, "null");
                        } else {
                                ncm_buf_putc(b, '"');
                                ncm_base64_encode(b, e->alloc_resp, e->alloc_resp_len);
                                ncm_buf_putc(b, '"');
                        }
                        ncm_buf_putc(b, '}');
                }
                ncm_buf_putc(b, ']');
        }
        ncm_buf_puts(b, ",\"RegisteredDevices\":");
        if (cp->registered_null) {
                ncm_buf_puts(b, "null");
        } else {
                ncm_buf_putc(b, '{');
                for (size_t i = 0; i < cp->n_registered; i++) {
                        if (i)
                                ncm_buf_putc(b, ',');
                        json_str(b, cp->registered[i].resource);
                        ncm_buf_putc(b, ':');
                        json_strv(b, cp->registered[i].ids_null, cp->registered[i].ids,
                                  cp->registered[i].n_ids);
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_printf(b, "},\"Checksum\":%" PRIu64 "}", ncm_devmgr_checkpoint_checksum(cp));
}

int ncm_devmgr_checkpoint_write(int rootfd, const char *path, const ncm_devmgr_checkpoint *cp,
                                ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT;
        int r;

        ncm_devmgr_checkpoint_format(cp, &b);
        if (ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return ncm_error_set(err, ENOMEM, "%s: out of memory", path);
        }
        r = ncm_fs_write_atomic(rootfd, path, b.data, b.len, 0600, err);
        ncm_buf_done(&b);
        return r;
}

/* ---- show ---- */

static void show_resp_text(ncm_buf *b, const ncm_devmgr_alloc_resp *r)
{
        for (size_t i = 0; i < r->n_envs; i++)
                ncm_buf_printf(b, "    env %s=%s\n", r->envs[i].key, r->envs[i].value);
        for (size_t i = 0; i < r->n_mounts; i++)
                ncm_buf_printf(b, "    mount %s <- %s%s\n", r->mounts[i].container_path,
                               r->mounts[i].host_path, r->mounts[i].read_only ? " (ro)" : "");
        for (size_t i = 0; i < r->n_devices; i++)
                ncm_buf_printf(b, "    device %s <- %s (%s)\n", r->devices[i].container_path,
                               r->devices[i].host_path, r->devices[i].permissions);
        for (size_t i = 0; i < r->n_annotations; i++)
                ncm_buf_printf(b, "    annotation %s=%s\n", r->annotations[i].key,
                               r->annotations[i].value);
        for (size_t i = 0; i < r->n_cdi_devices; i++)
                ncm_buf_printf(b, "    cdi %s\n", r->cdi_devices[i]);
}

static void json_kv(ncm_buf *b, const ncm_devmgr_kv *v, size_t n)
{
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < n; i++) {
                if (i)
                        ncm_buf_putc(b, ',');
                json_str(b, v[i].key);
                ncm_buf_putc(b, ':');
                json_str(b, v[i].value);
        }
        ncm_buf_putc(b, '}');
}

static void show_resp_json(ncm_buf *b, const ncm_devmgr_alloc_resp *r)
{
        ncm_buf_puts(b, "{\"envs\":");
        json_kv(b, r->envs, r->n_envs);
        ncm_buf_puts(b, ",\"mounts\":[");
        for (size_t i = 0; i < r->n_mounts; i++) {
                if (i)
                        ncm_buf_putc(b, ',');
                ncm_buf_puts(b, "{\"containerPath\":");
                json_str(b, r->mounts[i].container_path);
                ncm_buf_puts(b, ",\"hostPath\":");
                json_str(b, r->mounts[i].host_path);
                ncm_buf_printf(b, ",\"readOnly\":%s}", r->mounts[i].read_only ? "true" : "false");
        }
        ncm_buf_puts(b, "],\"devices\":[");
        for (size_t i = 0; i < r->n_devices; i++) {
                if (i)
                        ncm_buf_putc(b, ',');
                ncm_buf_puts(b, "{\"containerPath\":");
                json_str(b, r->devices[i].container_path);
                ncm_buf_puts(b, ",\"hostPath\":");
                json_str(b, r->devices[i].host_path);
                ncm_buf_puts(b, ",\"permissions\":");
                json_str(b, r->devices[i].permissions);
                ncm_buf_putc(b, '}');
        }
        ncm_buf_puts(b, "],\"annotations\":");
        json_kv(b, r->annotations, r->n_annotations);
        ncm_buf_puts(b, ",\"cdiDevices\":");
        json_strv(b, false, r->cdi_devices, r->n_cdi_devices);
        ncm_buf_putc(b, '}');
}

void ncm_devmgr_alloc_resp_json(const ncm_devmgr_alloc_resp *r, ncm_buf *out)
{
        show_resp_json(out, r);
}

static void show_text(const ncm_devmgr_checkpoint *cp, ncm_buf *b)
{
        uint64_t computed = ncm_devmgr_checkpoint_checksum(cp);

        ncm_buf_puts(b, "device manager checkpoint (kubelet_internal_checkpoint)\n");
        if (computed == cp->checksum)
                ncm_buf_printf(b, "checksum: %" PRIu64 " (matches the data)\n", cp->checksum);
        else
                ncm_buf_printf(b,
                               "checksum: %" PRIu64 " (does NOT match: the data gives %" PRIu64
                               "; the kubelet would ignore this file)\n",
                               cp->checksum, computed);
        ncm_buf_puts(b, "registered devices (healthy):");
        if (cp->registered_null)
                ncm_buf_puts(b, " null\n");
        else if (cp->n_registered == 0)
                ncm_buf_puts(b, " none\n");
        else
                ncm_buf_putc(b, '\n');
        for (size_t i = 0; i < cp->n_registered; i++) {
                const ncm_devmgr_registered *r = &cp->registered[i];
                ncm_buf_printf(b, "  %s:", r->resource);
                if (r->ids_null)
                        ncm_buf_puts(b, " null");
                else if (r->n_ids == 0)
                        ncm_buf_puts(b, " none");
                for (size_t k = 0; k < r->n_ids; k++)
                        ncm_buf_printf(b, " %s", r->ids[k]);
                ncm_buf_putc(b, '\n');
        }
        ncm_buf_puts(b, "allocations:");
        if (cp->entries_null)
                ncm_buf_puts(b, " null\n");
        else if (cp->n_entries == 0)
                ncm_buf_puts(b, " none\n");
        else
                ncm_buf_putc(b, '\n');
        for (size_t i = 0; i < cp->n_entries; i++) {
                const ncm_devmgr_checkpoint_entry *e = &cp->entries[i];
                ncm_devmgr_alloc_resp *resp = NULL;
                ncm_error err = NCM_ERROR_INIT;

                ncm_buf_printf(b, "  pod %s container %s resource %s\n", e->pod_uid,
                               e->container_name, e->resource_name);
                if (e->device_ids_null)
                        ncm_buf_puts(b, "    devices: null\n");
                for (size_t k = 0; k < e->n_device_ids; k++) {
                        const ncm_devmgr_numa_ids *d = &e->device_ids[k];
                        if (d->node == NCM_DEVMGR_NO_TOPOLOGY)
                                ncm_buf_puts(b, "    no NUMA node:");
                        else
                                ncm_buf_printf(b, "    NUMA node %" PRId64 ":", d->node);
                        if (d->ids_null)
                                ncm_buf_puts(b, " null");
                        for (size_t j = 0; j < d->n_ids; j++)
                                ncm_buf_printf(b, " %s", d->ids[j]);
                        ncm_buf_putc(b, '\n');
                }
                if (e->alloc_resp_null) {
                        ncm_buf_puts(b, "    AllocResp: null (the kubelet skips this entry)\n");
                        continue;
                }
                if (ncm_devmgr_alloc_resp_decode(e->alloc_resp, e->alloc_resp_len, &resp, &err) <
                    0) {
                        ncm_buf_printf(b, "    AllocResp: %s (the kubelet skips this entry)\n",
                                       err.msg);
                        continue;
                }
                show_resp_text(b, resp);
                ncm_devmgr_alloc_resp_free(resp);
        }
}

static void show_json(const ncm_devmgr_checkpoint *cp, ncm_buf *b)
{
        uint64_t computed = ncm_devmgr_checkpoint_checksum(cp);

        ncm_buf_printf(b,
                       "{\"file\":\"kubelet_internal_checkpoint\",\"checksum\":%" PRIu64
                       ",\"computed\":%" PRIu64 ",\"valid\":%s,\"registeredDevices\":",
                       cp->checksum, computed, computed == cp->checksum ? "true" : "false");
        if (cp->registered_null) {
                ncm_buf_puts(b, "null");
        } else {
                ncm_buf_putc(b, '{');
                for (size_t i = 0; i < cp->n_registered; i++) {
                        if (i)
                                ncm_buf_putc(b, ',');
                        json_str(b, cp->registered[i].resource);
                        ncm_buf_putc(b, ':');
                        json_strv(b, cp->registered[i].ids_null, cp->registered[i].ids,
                                  cp->registered[i].n_ids);
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_puts(b, ",\"entries\":");
        if (cp->entries_null) {
                ncm_buf_puts(b, "null");
        } else {
                ncm_buf_putc(b, '[');
                for (size_t i = 0; i < cp->n_entries; i++) {
                        const ncm_devmgr_checkpoint_entry *e = &cp->entries[i];
                        ncm_devmgr_alloc_resp *resp = NULL;
                        ncm_error err = NCM_ERROR_INIT;

                        if (i)
                                ncm_buf_putc(b, ',');
                        ncm_buf_puts(b, "{\"podUID\":");
                        json_str(b, e->pod_uid);
                        ncm_buf_puts(b, ",\"containerName\":");
                        json_str(b, e->container_name);
                        ncm_buf_puts(b, ",\"resourceName\":");
                        json_str(b, e->resource_name);
                        ncm_buf_puts(b, ",\"deviceIDs\":");
                        json_numa_map(b, e);
                        ncm_buf_puts(b, ",\"allocResp\":");
                        if (e->alloc_resp_null) {
                                ncm_buf_puts(b, "null");
                        } else if (ncm_devmgr_alloc_resp_decode(e->alloc_resp, e->alloc_resp_len,
                                                                &resp, &err) < 0) {
                                ncm_buf_puts(b, "null,\"allocRespError\":");
                                json_str(b, err.msg);
                        } else {
                                show_resp_json(b, resp);
                                ncm_devmgr_alloc_resp_free(resp);
                        }
                        ncm_buf_putc(b, '}');
                }
                ncm_buf_putc(b, ']');
        }
        ncm_buf_puts(b, "}\n");
}

void ncm_devmgr_checkpoint_show(const ncm_devmgr_checkpoint *cp, unsigned flags, ncm_buf *out)
{
        if (flags & NCM_DEVMGR_SHOW_JSON)
                show_json(cp, out);
        else
                show_text(cp, out);
}
