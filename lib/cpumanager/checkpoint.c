/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_manager_state: decoding as Go's encoding/json decodes it into the kubelet's checkpoint
 * structs, the go-spew rendering its checksum covers, how each kubelet release reads a file, and
 * restoring. The writer is checkpoint-write.c.
 *
 * The text is checked once with Go's scanner (base/gojson.h: a syntax error anywhere wins over
 * any type error, in Go's words) and then decoded once per format (V4, V3, V2, V1), because the
 * kubelet's restore tries the formats in turn, in an order that changed with the releases, and a
 * file's meaning depends on which one decodes and verifies first. Go semantics reproduced here:
 *  - struct fields match exactly or under Go's case folding (for these ASCII names that is
 *    ASCII folding plus U+017F 'ſ' ~ 's' and U+212A 'K' ~ 'k'); unknown fields are ignored;
 *  - members are decoded in document order, a repeated key as often as it appears: a later
 *    member for a string or number field overwrites an earlier one, a map field keeps its map
 *    and merges the members' keys (the inner maps are replaced whole: Go decodes each map
 *    element into a fresh value);
 *  - JSON null leaves a string or number field as it was, makes a map nil (rendered "<nil>"),
 *    and decodes to the zero value as a map element;
 *  - strings are unquoted as Go unquotes them: invalid UTF-8 and lone surrogates become U+FFFD;
 *  - any type mismatch fails the whole decode with the first mismatch in document order,
 *    reported as json.UnmarshalTypeError words it (struct field path without map keys); the
 *    checksum goes through strconv.ParseUint, so "-0", fractions, exponents and values beyond
 *    2^64-1 are mismatches too.
 * Known difference (hostile inputs only, documented in docs/checkpoints.md): strings holding NUL
 * are refused rather than kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodecm/cpustate.h>
#include <nodecm/fs.h>
#include "base/array.h"
#include "base/gojson.h"
#include "base/kubelet-checkpoint.h"
#include "cpumanager/checkpoint-internal.h"
#include "cpumanager/state-internal.h"

/*
 * What one decoding pass decodes into: the kubelet's structs. V2 is the type named
 * CPUManagerCheckpoint up to 1.35 (in Go's error texts; the one whose errors a kubelet reports);
 * V4_OUTER is 1.37's CPUManagerCheckpoint, the V2 fields (embedded) then data and dataChecksum;
 * DATA is the CPUManagerCheckpointData that data holds.
 */
typedef enum decode_kind { KIND_V1, KIND_V2, KIND_V3, KIND_V4_OUTER, KIND_DATA } decode_kind;

typedef struct decoder {
        ncm_gojson *g;
        decode_kind kind;
        const char *struct_name; /* Go type name in error messages */
        ncm_cpu_checkpoint *c;
        /* KIND_V4_OUTER: data and dataChecksum as decoded */
        char *data;
        uint64_t data_checksum;
        int code; /* 0, or the first failure: EINVAL (type mismatch), ENOMEM */
        char msg[CKPT_MSG_MAX];
} decoder;

/* ---------------------------------------------------------------------------------------- */
/* Memory                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static void entries_free(ncm_cpu_checkpoint_entry *e, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(e[i].name);
                free(e[i].cpus);
        }
        free(e);
}

static void pod_free_fields(ncm_cpu_checkpoint_pod *p)
{
        free(p->uid);
        entries_free(p->entries, p->n);
}

static void pods_free(ncm_cpu_checkpoint_pod *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                pod_free_fields(&p[i]);
        free(p);
}

static void pod_entries_free(ncm_cpu_checkpoint_pod_entry *p, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(p[i].uid);
                free(p[i].cpus);
        }
        free(p);
}

ncm_cpu_checkpoint *ncm_cpu_checkpoint_free(ncm_cpu_checkpoint *c)
{
        if (!c)
                return NULL;
        free(c->policy_name);
        free(c->default_cpus);
        pods_free(c->pods, c->npods);
        entries_free(c->v1, c->nv1);
        pod_entries_free(c->pod_entries, c->npod_entries);
        pods_free(c->promised, c->npromised);
        pods_free(c->baselines, c->nbaselines);
        free(c->kubelet_error);
        free(c->data);
        free(c->data_error);
        ncm_cpu_checkpoint_free(c->v2_part);
        free(c);
        return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Go-style decoding                                                                         */
/* ---------------------------------------------------------------------------------------- */

static bool failed(const decoder *d)
{
        return d->code != 0;
}

static void fail_oom(decoder *d)
{
        if (!d->code) {
                d->code = ENOMEM;
                snprintf(d->msg, sizeof(d->msg), "out of memory");
        }
}

/* Go's UnmarshalTypeError for VALUE (a JSON kind, or "number <literal>"); the first one stays. */
static void type_error(decoder *d, const char *value, const char *field, const char *gotype)
{
        char value_type[64];
        if (d->code)
                return;
        d->code = EINVAL;
        if (field) {
                ncm__gojson_type_error_text(d->msg, sizeof(d->msg), value, d->struct_name, field,
                                            gotype);
        } else {
                snprintf(value_type, sizeof(value_type), "state.%s", d->struct_name);
                ncm__gojson_type_error_text(d->msg, sizeof(d->msg), value, NULL, NULL, value_type);
        }
}

/* A type error for the value of kind K at the cursor. */
static void type_error_at(decoder *d, ncm_gojson_kind k, const char *field, const char *gotype)
{
        type_error(d, ncm__gojson_kind_name(k), field, gotype);
}

/*
 * S (LEN bytes, malloc'd) as a C string. Go keeps NUL bytes in strings; C strings cannot, so
 * such a file is refused (a kubelet never writes one). Takes S; NULL when refused.
 */
static void nul_error(decoder *d, const char *field)
{
        if (!d->code) {
                d->code = EINVAL;
                snprintf(d->msg, sizeof(d->msg), "%s: string holds a NUL character", field);
        }
}

static char *c_string(decoder *d, char *s, size_t len, const char *field)
{
        if (ncm__ckpt_c_string(s, len))
                return s;
        free(s);
        nul_error(d, field);
        return NULL;
}

/* The string at the cursor, as Go's decoder delivers it. */
static char *take_string(decoder *d, const char *field)
{
        char *s;
        size_t len;
        if (ncm__gojson_string(d->g, &s, &len, NULL) < 0) {
                fail_oom(d);
                return NULL;
        }
        return c_string(d, s, len, field);
}

static int cmp_key(const void *a, const void *b)
{
        /* Every array sorted here is of structs whose first member is the char * key. */
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Merge the sorted array ADD (NADD elements of SIZE bytes) into the sorted array *ARR (*N
 * elements); on equal keys ADD's element wins and the old one is released with FREE_FIELDS.
 * ADD's storage is consumed. false when out of memory (ADD is released then).
 */
static bool merge_sorted(void **arr, size_t *n, void *add, size_t nadd, size_t size,
                         void (*free_fields)(void *))
{
        if (*n == 0) {
                free(*arr);
                *arr = add;
                *n = nadd;
                return true;
        }
        char *out = calloc(*n + nadd, size);
        if (!out) {
                for (size_t i = 0; i < nadd; i++)
                        free_fields((char *)add + i * size);
                free(add);
                return false;
        }
        char *a = *arr, *b = add;
        size_t i = 0, j = 0, k = 0;
        while (i < *n || j < nadd) {
                int c = i == *n ? 1 : j == nadd ? -1 : cmp_key(a + i * size, b + j * size);
                if (c < 0) {
                        memcpy(out + k++ * size, a + i++ * size, size);
                } else {
                        if (c == 0)
                                free_fields(a + i++ * size);
                        memcpy(out + k++ * size, b + j++ * size, size);
                }
        }
        free(*arr);
        free(add);
        *arr = out;
        *n = k;
        return true;
}

static void entry_free_fields(void *p)
{
        ncm_cpu_checkpoint_entry *e = p;
        free(e->name);
        free(e->cpus);
}

static void pod_free_fields_v(void *p)
{
        pod_free_fields(p);
}

static void pod_entry_free_fields(void *p)
{
        ncm_cpu_checkpoint_pod_entry *e = p;
        free(e->uid);
        free(e->cpus);
}

typedef struct sort_ref {
        const char *key;
        size_t idx;
} sort_ref;

static int cmp_ref(const void *a, const void *b)
{
        const sort_ref *x = a, *y = b;
        int c = strcmp(x->key, y->key);
        return c ? c : x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Sort ARR (*N elements of SIZE bytes, first member the char * key, in document order) by key;
 * of equal keys (a repeated key, or two raw keys that decode to the same string) the later one
 * wins, as a later assignment to a Go map does. false when out of memory (ARR untouched).
 */
static bool sort_dedupe(void *arr, size_t *n, size_t size, void (*free_fields)(void *))
{
        char *a = arr;
        if (*n < 2)
                return true;
        sort_ref *refs = calloc(*n, sizeof(*refs));
        char *out = calloc(*n, size);
        if (!refs || !out) {
                free(refs);
                free(out);
                return false;
        }
        for (size_t i = 0; i < *n; i++)
                refs[i] = (sort_ref){*(char *const *)(a + i * size), i};
        qsort(refs, *n, sizeof(*refs), cmp_ref);
        size_t k = 0;
        for (size_t i = 0; i < *n; i++) {
                char *elem = a + refs[i].idx * size;
                if (i + 1 < *n && strcmp(refs[i].key, refs[i + 1].key) == 0)
                        free_fields(elem);
                else
                        memcpy(out + k++ * size, elem, size);
        }
        memcpy(a, out, k * size);
        free(out);
        free(refs);
        *n = k;
        return true;
}

/* A string field: null leaves it as it was. */
static void decode_string_field(decoder *d, const char *field, char **dst)
{
        ncm_ckpt_bad bad;
        char *s;
        int r = ncm__ckpt_string_field(d->g, &s, NULL, &bad, NULL);

        if (r == 0) {
                free(*dst);
                *dst = s;
        } else if (r == -ENOMEM) {
                fail_oom(d);
        } else if (r < 0 && bad.nul) {
                nul_error(d, field);
        } else if (r < 0) {
                type_error_at(d, bad.kind, field, "string");
        }
}

/*
 * checksum.Checksum (uint64) FIELD into *DST: strconv.ParseUint of the number's text; null
 * changes nothing.
 */
static void decode_checksum(decoder *d, const char *field, uint64_t *dst)
{
        ncm_ckpt_bad bad;
        char lit[300];

        if (ncm__ckpt_checksum_field(d->g, dst, &bad) >= 0)
                return;
        if (!bad.text) {
                type_error_at(d, bad.kind, field, "checksum.Checksum");
                return;
        }
        /* A sign, a fraction, an exponent or too many digits: "number 1e3". */
        snprintf(lit, sizeof(lit), "number %.*s", (int)(bad.len > 256 ? 256 : bad.len), bad.text);
        type_error(d, lit, field, "checksum.Checksum");
}

/*
 * One container's value, of the Go type FIELD's map holds: a string (entries, promised) or
 * data's ContainerCPUs (baselines). NULL on failure (D says why).
 */
typedef char *(*value_fn)(decoder *d, const char *field);

/* A string element; null is the zero value "". */
static char *string_value(decoder *d, const char *field)
{
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        char *v = NULL;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
                if (!(v = strdup("")))
                        fail_oom(d);
        } else if (k != NCM_GOJSON_STRING) {
                type_error_at(d, k, field, "string");
        } else {
                v = take_string(d, field);
        }
        return v;
}

/*
 * One ContainerCPUs of V4 data's baselines: {"baseline": "<cpus>"} (kubernetes PR #140314). A
 * null element is the zero value; a null or absent baseline is "".
 */
static char *container_cpus_value(decoder *d, const char *field)
{
        static const char *const fields[] = {"baseline"};
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        const char *outer = d->struct_name;
        char *baseline = NULL;
        bool first = true;
        int r, f;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
        } else if (k != NCM_GOJSON_OBJECT) {
                type_error_at(d, k, field, "state.ContainerCPUs");
        } else {
                /* Go names the innermost struct in a type error inside it. */
                d->struct_name = "ContainerCPUs";
                while (!failed(d) &&
                       (r = ncm__ckpt_next_field(d->g, &first, fields, 1, &f, NULL)) > 0) {
                        if (f < 0)
                                ncm__gojson_skip(d->g);
                        else
                                decode_string_field(d, "baselines.baseline", &baseline);
                }
                if (!failed(d) && r < 0)
                        fail_oom(d);
                d->struct_name = outer;
        }
        if (!failed(d) && !baseline && !(baseline = strdup("")))
                fail_oom(d);
        if (failed(d)) {
                free(baseline);
                return NULL;
        }
        return baseline;
}

/*
 * The map[string]<value> object at the cursor into a sorted entry array (map keys unique, the
 * later winning), each value decoded by VALUE. FIELD names the struct field in errors.
 */
static bool decode_string_map(decoder *d, const char *field, value_fn value,
                              ncm_cpu_checkpoint_entry **ret, size_t *ret_n)
{
        ncm_cpu_checkpoint_entry *e = NULL;
        size_t n = 0, cap = 0, klen;
        bool first = true;
        char *key;
        int r;

        while ((r = ncm__gojson_next_member(d->g, &first, &key, &klen, NULL)) > 0) {
                char *cpus = value(d, field), *name = NULL;
                if (cpus)
                        name = c_string(d, key, klen, "key");
                else
                        free(key);
                if (!failed(d) && ncm__array_grow(e, cap, n) < 0)
                        fail_oom(d);
                if (failed(d)) {
                        free(cpus);
                        free(name);
                        entries_free(e, n);
                        return false;
                }
                e[n].name = name;
                e[n].cpus = cpus;
                n++;
        }
        if (r < 0 || !sort_dedupe(e, &n, sizeof(*e), entry_free_fields)) {
                entries_free(e, n);
                fail_oom(d);
                return false;
        }
        *ret = e;
        *ret_n = n;
        return true;
}

/* A pod -> container -> value map: its Go types (for errors) and how a value decodes. */
typedef struct pod_map_type {
        const char *outer, *inner;
        value_fn value;
} pod_map_type;

static const pod_map_type string_maps = {"map[string]map[string]string", "map[string]string",
                                         string_value};
static const pod_map_type baseline_maps = {"map[string]map[string]state.ContainerCPUs",
                                           "map[string]state.ContainerCPUs", container_cpus_value};

/*
 * A pod -> container -> value member of type T into *PODS / *NPODS (FIELD names it in errors);
 * a repeated member merges into what is there, null empties it (*NIL, may be NULL).
 */
static void decode_pod_map(decoder *d, const char *field, const pod_map_type *t,
                           ncm_cpu_checkpoint_pod **dst, size_t *ndst, bool *nil)
{
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        ncm_cpu_checkpoint_pod *pods = NULL;
        size_t n = 0, cap = 0, klen;
        bool first = true;
        char *key;
        int r;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
                pods_free(*dst, *ndst);
                *dst = NULL;
                *ndst = 0;
                if (nil)
                        *nil = true;
                return;
        }
        if (k != NCM_GOJSON_OBJECT) {
                type_error_at(d, k, field, t->outer);
                return;
        }
        if (nil)
                *nil = false;
        while ((r = ncm__gojson_next_member(d->g, &first, &key, &klen, NULL)) > 0) {
                ncm_cpu_checkpoint_pod p = {0};
                k = ncm__gojson_peek(d->g);
                if (k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(d->g);
                        p.nil = true;
                } else if (k != NCM_GOJSON_OBJECT) {
                        type_error_at(d, k, field, t->inner);
                } else {
                        decode_string_map(d, field, t->value, &p.entries, &p.n);
                }
                if (!failed(d))
                        p.uid = c_string(d, key, klen, "key");
                else
                        free(key);
                if (!failed(d) && ncm__array_grow(pods, cap, n) < 0)
                        fail_oom(d);
                if (failed(d)) {
                        pod_free_fields(&p);
                        pods_free(pods, n);
                        return;
                }
                pods[n++] = p;
        }
        if (r < 0 || !sort_dedupe(pods, &n, sizeof(*pods), pod_free_fields_v)) {
                pods_free(pods, n);
                fail_oom(d);
                return;
        }
        /* A repeated member decodes into the map it already has. */
        if (!merge_sorted((void **)dst, ndst, pods, n, sizeof(*pods), pod_free_fields_v))
                fail_oom(d);
}

static void decode_entries_v2(decoder *d)
{
        decode_pod_map(d, "entries", &string_maps, &d->c->pods, &d->c->npods, &d->c->entries_nil);
}

static void decode_entries_v1(decoder *d)
{
        ncm_cpu_checkpoint *c = d->c;
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        ncm_cpu_checkpoint_entry *e = NULL;
        size_t n = 0;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
                entries_free(c->v1, c->nv1);
                c->v1 = NULL;
                c->nv1 = 0;
                c->entries_nil = true;
                return;
        }
        if (k != NCM_GOJSON_OBJECT) {
                type_error_at(d, k, "entries", "map[string]string");
                return;
        }
        c->entries_nil = false;
        if (!decode_string_map(d, "entries", string_value, &e, &n))
                return;
        if (!merge_sorted((void **)&c->v1, &c->nv1, e, n, sizeof(*e), entry_free_fields))
                fail_oom(d);
}

/*
 * One V3 PodEntry. Its cpuSet is a cpuset.CPUSet read from the cpuset string (the checksum
 * renders the parsed elements, so it is validated here).
 */
static void decode_pod_entry(decoder *d, ncm_cpu_checkpoint_pod_entry *pe)
{
        static const char *const fields[] = {"cpuSet"};
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        bool first = true;
        int r, f;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
                return;
        }
        if (k != NCM_GOJSON_OBJECT) {
                type_error_at(d, k, "podEntries", "state.PodEntry");
                return;
        }
        while ((r = ncm__ckpt_next_field(d->g, &first, fields, NCM_ELEMENTSOF(fields), &f, NULL)) >
               0) {
                k = ncm__gojson_peek(d->g);
                if (f < 0 || k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(d->g);
                        continue;
                }
                if (k != NCM_GOJSON_STRING) {
                        type_error_at(d, k, "podEntries.cpuSet", "cpuset.CPUSet");
                        return;
                }
                char *s = take_string(d, "podEntries.cpuSet");
                if (!s)
                        return;
                ncm_error e = NCM_ERROR_INIT;
                ncm_cpuset *set = NULL;
                if (ncm_cpuset_parse_list(s, &set, &e) < 0) {
                        if (!d->code) {
                                d->code = EINVAL;
                                snprintf(d->msg, sizeof(d->msg),
                                         "podEntries: could not parse cpuset %.64s: %.256s", s,
                                         e.msg);
                        }
                        free(s);
                        return;
                }
                ncm_cpuset_free(set);
                free(pe->cpus);
                pe->cpus = s;
                pe->has_cpus = true;
        }
        if (r < 0)
                fail_oom(d);
}

static void decode_pod_entries(decoder *d)
{
        ncm_cpu_checkpoint *c = d->c;
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        ncm_cpu_checkpoint_pod_entry *pe = NULL;
        size_t n = 0, cap = 0, klen;
        bool first = true;
        char *key;
        int r;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
                pod_entries_free(c->pod_entries, c->npod_entries);
                c->pod_entries = NULL;
                c->npod_entries = 0;
                c->pod_entries_nil = true;
                c->has_pod_entries = false;
                return;
        }
        if (k != NCM_GOJSON_OBJECT) {
                type_error_at(d, k, "podEntries", "state.PodCPUAssignments");
                return;
        }
        c->pod_entries_nil = false;
        c->has_pod_entries = true;
        while ((r = ncm__gojson_next_member(d->g, &first, &key, &klen, NULL)) > 0) {
                ncm_cpu_checkpoint_pod_entry p = {0};
                decode_pod_entry(d, &p);
                if (!failed(d) && !p.cpus && !(p.cpus = strdup("")))
                        fail_oom(d);
                if (!failed(d))
                        p.uid = c_string(d, key, klen, "key");
                else
                        free(key);
                if (!failed(d) && ncm__array_grow(pe, cap, n) < 0)
                        fail_oom(d);
                if (failed(d)) {
                        pod_entry_free_fields(&p);
                        pod_entries_free(pe, n);
                        return;
                }
                pe[n++] = p;
        }
        if (r < 0 || !sort_dedupe(pe, &n, sizeof(*pe), pod_entry_free_fields)) {
                pod_entries_free(pe, n);
                fail_oom(d);
                return;
        }
        if (!merge_sorted((void **)&c->pod_entries, &c->npod_entries, pe, n, sizeof(*pe),
                          pod_entry_free_fields))
                fail_oom(d);
}

/* V4 data's baselines, map[string]map[string]ContainerCPUs, into the checkpoint. */
static void decode_baselines(decoder *d)
{
        decode_pod_map(d, "baselines", &baseline_maps, &d->c->baselines, &d->c->nbaselines, NULL);
}

/* The struct fields each kind decodes, in declaration order, and their JSON names. */
enum field_id {
        FIELD_POLICY,
        FIELD_DEFAULT,
        FIELD_ENTRIES,
        FIELD_CHECKSUM,
        FIELD_POD_ENTRIES,
        FIELD_DATA,
        FIELD_DATA_CHECKSUM,
        FIELD_BASELINES,
};

static const char *const field_names[] = {
                [FIELD_POLICY] = "policyName",
                [FIELD_DEFAULT] = "defaultCpuSet",
                [FIELD_ENTRIES] = "entries",
                [FIELD_CHECKSUM] = "checksum",
                [FIELD_POD_ENTRIES] = "podEntries",
                [FIELD_DATA] = "data",
                [FIELD_DATA_CHECKSUM] = "dataChecksum",
                [FIELD_BASELINES] = "baselines",
};

typedef struct kind_def {
        const char *struct_name;
        size_t n;
        enum field_id fields[6];
} kind_def;

static const kind_def kinds[] = {
                [KIND_V1] = {"CPUManagerCheckpointV1",
                             4,
                             {FIELD_POLICY, FIELD_DEFAULT, FIELD_ENTRIES, FIELD_CHECKSUM}},
                [KIND_V2] = {"CPUManagerCheckpoint",
                             4,
                             {FIELD_POLICY, FIELD_DEFAULT, FIELD_ENTRIES, FIELD_CHECKSUM}},
                [KIND_V3] = {"CPUManagerCheckpointV3",
                             5,
                             {FIELD_POLICY, FIELD_DEFAULT, FIELD_ENTRIES, FIELD_CHECKSUM,
                              FIELD_POD_ENTRIES}},
                [KIND_V4_OUTER] = {"CPUManagerCheckpoint",
                                   6,
                                   {FIELD_POLICY, FIELD_DEFAULT, FIELD_ENTRIES, FIELD_CHECKSUM,
                                    FIELD_DATA, FIELD_DATA_CHECKSUM}},
                [KIND_DATA] = {"CPUManagerCheckpointData",
                               5,
                               {FIELD_POLICY, FIELD_DEFAULT, FIELD_ENTRIES, FIELD_POD_ENTRIES,
                                FIELD_BASELINES}},
};

static ncm_cpu_checkpoint_format format_of_kind(decode_kind kind)
{
        switch (kind) {
        case KIND_V1:
                return NCM_CPU_CHECKPOINT_V1;
        case KIND_V3:
                return NCM_CPU_CHECKPOINT_V3;
        case KIND_DATA:
                return NCM_CPU_CHECKPOINT_V4;
        default:
                /* the V4 outer struct is decoded as its V2 part */
                return NCM_CPU_CHECKPOINT_V2;
        }
}

/* Decode G's document as KIND into a new checkpoint; NULL with D->code/msg on failure. */
static ncm_cpu_checkpoint *decode(decoder *d, ncm_gojson *g, decode_kind kind)
{
        const kind_def *def = &kinds[kind];
        ncm_cpu_checkpoint *c = calloc(1, sizeof(*c));
        const char *names[NCM_ELEMENTSOF(def->fields)];
        ncm_gojson_kind k;

        d->g = g;
        d->kind = kind;
        d->code = 0;
        d->msg[0] = '\0';
        d->struct_name = def->struct_name;
        d->c = c;
        if (!c) {
                fail_oom(d);
                return NULL;
        }
        c->format = format_of_kind(kind);
        c->policy_name = strdup("");
        c->default_cpus = strdup("");
        if (!c->policy_name || !c->default_cpus)
                fail_oom(d);
        for (size_t i = 0; i < def->n; i++)
                names[i] = field_names[def->fields[i]];

        ncm__gojson_rewind(g);
        k = ncm__gojson_peek(g);
        if (!failed(d) && k == NCM_GOJSON_OBJECT) {
                bool first = true;
                int r = 0, f;
                while (!failed(d) &&
                       (r = ncm__ckpt_next_field(g, &first, names, def->n, &f, NULL)) > 0) {
                        switch (f < 0 ? -1 : (int)def->fields[f]) {
                        case FIELD_POLICY:
                                decode_string_field(d, "policyName", &c->policy_name);
                                break;
                        case FIELD_DEFAULT:
                                decode_string_field(d, "defaultCpuSet", &c->default_cpus);
                                break;
                        case FIELD_ENTRIES:
                                if (kind == KIND_V1)
                                        decode_entries_v1(d);
                                else
                                        decode_entries_v2(d);
                                break;
                        case FIELD_CHECKSUM:
                                decode_checksum(d, "checksum", &c->checksum);
                                break;
                        case FIELD_POD_ENTRIES:
                                decode_pod_entries(d);
                                break;
                        case FIELD_DATA:
                                decode_string_field(d, "data", &d->data);
                                break;
                        case FIELD_DATA_CHECKSUM:
                                decode_checksum(d, "dataChecksum", &d->data_checksum);
                                break;
                        case FIELD_BASELINES:
                                decode_baselines(d);
                                break;
                        default:
                                ncm__gojson_skip(g);
                                break;
                        }
                }
                if (r < 0)
                        fail_oom(d);
        } else if (!failed(d) && k != NCM_GOJSON_NULL) {
                type_error_at(d, k, NULL, NULL);
        }
        if (failed(d)) {
                free(d->data);
                d->data = NULL;
                return ncm_cpu_checkpoint_free(c);
        }
        return c;
}

/* ---------------------------------------------------------------------------------------- */
/* The go-spew rendering                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* map[string]string: "map[k:v k:v]"; elements carry no type prefix. */
static void render_string_map(ncm_buf *b, const ncm_cpu_checkpoint_entry *e, size_t n)
{
        ncm_buf_puts(b, "map[");
        for (size_t i = 0; i < n; i++) {
                ncm__spew_key(b, i, e[i].name);
                ncm_buf_puts(b, e[i].cpus);
        }
        ncm_buf_putc(b, ']');
}

/* A cpuset.CPUSet as spew shows its map[int]struct{}: numeric keys ascending. */
static void render_cpuset_elems(ncm_buf *b, const ncm_cpu_checkpoint_pod_entry *pe)
{
        ncm_buf_puts(b, "{CPUSet:(cpuset.CPUSet){elems:(map[int]struct {})");
        if (!pe->has_cpus) {
                /* No cpuSet member: the zero CPUSet, whose map is nil. */
                ncm__spew_nil(b);
                ncm_buf_puts(b, "}}");
                return;
        }
        ncm_cpuset *set = NULL;
        (void)ncm_cpuset_parse_list(pe->cpus, &set, NULL);
        ncm_buf_puts(b, "map[");
        bool first = true;
        if (set) {
                NCM_CPUSET_FOREACH(cpu, set)
                {
                        ncm_buf_printf(b, first ? "%d:{}" : " %d:{}", cpu);
                        first = false;
                }
        }
        ncm_cpuset_free(set);
        ncm_buf_puts(b, "]}}");
}

void ncm_cpu_checkpoint_render(const ncm_cpu_checkpoint *c, bool native, ncm_buf *b)
{
        const char *type = "CPUManagerCheckpoint";
        if (c->format == NCM_CPU_CHECKPOINT_V4) {
                /* checksum.New(cp.Data): dump.ForHash of a string */
                ncm_buf_puts(b, "(string)");
                if (c->data)
                        ncm_buf_puts(b, c->data);
                return;
        }
        if (native && c->format == NCM_CPU_CHECKPOINT_V2)
                type = "CPUManagerCheckpointV2";
        else if (native && c->format == NCM_CPU_CHECKPOINT_V3)
                type = "CPUManagerCheckpointV3";

        ncm_buf_printf(b, "(*state.%s){", type);
        ncm__spew_field(b, 0, "PolicyName", "string");
        ncm_buf_puts(b, c->policy_name);
        ncm__spew_field(b, 1, "DefaultCPUSet", "string");
        ncm_buf_puts(b, c->default_cpus);
        if (c->format == NCM_CPU_CHECKPOINT_V1) {
                ncm__spew_field(b, 2, "Entries", "map[string]string");
                if (c->entries_nil)
                        ncm__spew_nil(b);
                else
                        render_string_map(b, c->v1, c->nv1);
        } else {
                ncm__spew_field(b, 2, "Entries", "map[string]map[string]string");
                if (c->entries_nil) {
                        ncm__spew_nil(b);
                } else {
                        ncm_buf_puts(b, "map[");
                        for (size_t i = 0; i < c->npods; i++) {
                                ncm__spew_key(b, i, c->pods[i].uid);
                                if (c->pods[i].nil)
                                        ncm__spew_nil(b);
                                else
                                        render_string_map(b, c->pods[i].entries, c->pods[i].n);
                        }
                        ncm_buf_putc(b, ']');
                }
        }
        if (c->format == NCM_CPU_CHECKPOINT_V3) {
                ncm__spew_field(b, 3, "PodEntries", "state.PodCPUAssignments");
                if (c->pod_entries_nil) {
                        ncm__spew_nil(b);
                } else {
                        ncm_buf_puts(b, "map[");
                        for (size_t i = 0; i < c->npod_entries; i++) {
                                ncm__spew_key(b, i, c->pod_entries[i].uid);
                                render_cpuset_elems(b, &c->pod_entries[i]);
                        }
                        ncm_buf_putc(b, ']');
                }
        }
        /* the checksum is rendered as it was when hashed: zero */
        ncm__spew_field(b, 4, "Checksum", "checksum.Checksum");
        ncm_buf_puts(b, "0}");
}

/* FNV-1a 32 of a rendering; false when out of memory. */
static bool rendering_sum(const ncm_cpu_checkpoint *c, bool native, uint32_t *ret)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_cpu_checkpoint_render(c, native, &b);
        return ncm__spew_sum(&b, ret) == 0;
}

/* Compute C's checksums and classify its stored one. false when out of memory. */
static bool classify(ncm_cpu_checkpoint *c)
{
        if (!rendering_sum(c, false, &c->legacy_checksum))
                return false;
        if (c->format == NCM_CPU_CHECKPOINT_V4) {
                /* DataChecksum.Verify(Data): no rendering but the string's, no 0 accepted */
                c->native_checksum = c->legacy_checksum;
                c->match = c->checksum == c->legacy_checksum ? NCM_CPU_CHECKSUM_DATA
                                                             : NCM_CPU_CHECKSUM_MISMATCH;
                return true;
        }
        if (c->format == NCM_CPU_CHECKPOINT_V1)
                c->native_checksum = c->legacy_checksum;
        else if (!rendering_sum(c, true, &c->native_checksum))
                return false;

        if (c->checksum == 0 && c->format != NCM_CPU_CHECKPOINT_V3)
                c->match = NCM_CPU_CHECKSUM_ZERO;
        else if (c->checksum == c->legacy_checksum)
                c->match = NCM_CPU_CHECKSUM_LEGACY;
        else if (c->checksum == c->native_checksum)
                c->match = NCM_CPU_CHECKSUM_NATIVE;
        else
                c->match = NCM_CPU_CHECKSUM_MISMATCH;
        return true;
}

/* ---------------------------------------------------------------------------------------- */
/* Parsing                                                                                   */
/* ---------------------------------------------------------------------------------------- */

int ncm_cpu_checkpoint_probe(const char *text, size_t len, const char *name, ncm_error *err)
{
        /* not "data": the device manager's checkpoint has a "Data" member */
        static const char *const kind_fields[] = {"policyName", "defaultCpuSet", "entries",
                                                  "podEntries", "dataChecksum"};

        return ncm__ckpt_probe(text, len, name, 0, kind_fields, NCM_ELEMENTSOF(kind_fields), err);
}

/*
 * nodecm's "promised" member (docs/checkpoints.md): no kubelet reads it, so it is read in a pass
 * of its own, after the kubelet's decoding decided the file. Returns 0, or
 * -NCM_E_INVALID_STATE naming the member when it is not a promised map.
 */
static int decode_promised(ncm_gojson *g, ncm_cpu_checkpoint *c, const char *name, ncm_error *err)
{
        static const char *const fields[] = {"promised"};
        decoder d = {0};
        bool first = true;
        int r = 0, f;

        d.g = g;
        d.kind = KIND_V2;
        d.struct_name = "CPUManagerCheckpoint";
        d.c = c;
        ncm__gojson_rewind(g);
        if (ncm__gojson_peek(g) != NCM_GOJSON_OBJECT)
                return 0;
        while (!failed(&d) && (r = ncm__ckpt_next_field(g, &first, fields, 1, &f, NULL)) > 0) {
                if (f == 0)
                        decode_pod_map(&d, "promised", &string_maps, &c->promised, &c->npromised,
                                       NULL);
                else
                        ncm__gojson_skip(g);
        }
        if (d.code == ENOMEM || (!failed(&d) && r < 0))
                return ncm_error_set(err, ENOMEM, "%s: out of memory", name);
        if (failed(&d))
                return ncm_error_set(err, NCM_E_INVALID_STATE, "%s: promised: %s", name, d.msg);
        return 0;
}

/*
 * Whether 1.37 finds data or a dataChecksum in G's document: encoding/json leaves them set
 * even when another member fails to decode (it keeps the first type error and decodes on), and
 * a V4 load that fails with either set is final ("could not load v4 checkpoint"). The last
 * string "data" and the last valid "dataChecksum" win; null and values of another type leave
 * them as they were. 1 yes, 0 no, -ENOMEM.
 */
static int scan_data_members(ncm_gojson *g)
{
        static const char *const fields[] = {"policyName", "defaultCpuSet", "entries",
                                             "checksum",   "data",          "dataChecksum"};
        bool first = true, nonempty = false;
        uint64_t sum = 0, v;
        ncm_ckpt_bad bad;
        int r, f;

        ncm__gojson_rewind(g);
        if (ncm__gojson_peek(g) != NCM_GOJSON_OBJECT)
                return 0;
        while ((r = ncm__ckpt_next_field(g, &first, fields, NCM_ELEMENTSOF(fields), &f, NULL)) >
               0) {
                if (f == 4 && ncm__gojson_peek(g) == NCM_GOJSON_STRING) {
                        char *str;
                        size_t len;
                        if (ncm__gojson_string(g, &str, &len, NULL) < 0)
                                return -ENOMEM;
                        free(str);
                        nonempty = len > 0;
                } else if (f == 5 && ncm__ckpt_checksum_field(g, &v, &bad) == 0) {
                        sum = v;
                } else if (f != 5) {
                        ncm__gojson_skip(g);
                }
        }
        if (r < 0)
                return -ENOMEM;
        return nonempty || sum != 0;
}

/* How the V4 struct fares with a document (1.37's first attempt). */
typedef struct v4_attempt {
        ncm_cpu_checkpoint *c; /* it decoded and has data: the V4 file (data may not decode) */
        bool has_data;         /* data or dataChecksum set: a failed load is final */
        bool loads;            /* decodes, data decodes, dataChecksum verifies */
        char err[CKPT_MSG_MAX + 64]; /* why it does not load, in 1.37's words */
} v4_attempt;

static int attempt_v4(ncm_gojson *g, const char *name, v4_attempt *a, ncm_error *err)
{
        ncm_autoptr(ncm_cpu_checkpoint) outer = NULL;
        ncm_autoptr(ncm_cpu_checkpoint) c = NULL;
        ncm_autofree char *data = NULL;
        ncm_gojson dg;
        decoder d = {0}, dd = {0};
        int r;

        r = scan_data_members(g);
        if (r < 0)
                return ncm_error_set(err, ENOMEM, "%s: out of memory", name);
        a->has_data = r > 0;
        outer = decode(&d, g, KIND_V4_OUTER);
        if (!outer) {
                if (d.code == ENOMEM)
                        return ncm_error_set(err, ENOMEM, "%s: out of memory", name);
                snprintf(a->err, sizeof(a->err),
                         "failed to deserialize cpu manager checkpoint: %.900s", d.msg);
                return 0;
        }
        data = d.data;
        if (!a->has_data)
                return 0; /* 1.37 falls back to the older formats without a word */
        if (!classify(outer))
                return ncm_error_set(err, ENOMEM, "%s: out of memory", name);
        if (!data && !(data = strdup("")))
                return ncm_error_set(err, ENOMEM, "%s: out of memory", name);

        /* json.Unmarshal([]byte(cp.Data), &cp.CheckpointData) */
        if (ncm__gojson_init(&dg, data, strlen(data), name, NULL) < 0) {
                snprintf(dd.msg, sizeof(dd.msg), "%s", dg.syntax);
                dd.code = EINVAL;
        } else {
                c = decode(&dd, &dg, KIND_DATA);
                if (!c && dd.code == ENOMEM)
                        return ncm_error_set(err, ENOMEM, "%s: out of memory", name);
        }
        if (!c) {
                /* the file is V4 all the same: nothing in it that 1.37 could load */
                c = calloc(1, sizeof(*c));
                if (!c || !(c->policy_name = strdup("")) || !(c->default_cpus = strdup("")) ||
                    !(c->data_error = strdup(dd.msg)))
                        return ncm_error_set(err, ENOMEM, "%s: out of memory", name);
                c->format = NCM_CPU_CHECKPOINT_V4;
        }
        c->data = NCM_TAKE_PTR(data);
        c->checksum = d.data_checksum;
        if (!classify(c))
                return ncm_error_set(err, ENOMEM, "%s: out of memory", name);
        c->v2_part = NCM_TAKE_PTR(outer);
        a->loads = !c->data_error && c->match == NCM_CPU_CHECKSUM_DATA;
        if (c->data_error)
                snprintf(a->err, sizeof(a->err),
                         "failed to deserialize cpu manager checkpoint data: %.900s",
                         c->data_error);
        else
                snprintf(a->err, sizeof(a->err), "checkpoint is corrupted");
        a->c = NCM_TAKE_PTR(c);
        return 0;
}

ncm_cpu_checkpoint_format ncm_cpu_checkpoint_format_of(ncm_kubelet_version v)
{
        if (v.major == 0 || ncm_kubelet_version_at_least(v, 1, 37))
                return NCM_CPU_CHECKPOINT_V4;
        return NCM_CPU_CHECKPOINT_V2;
}

/* The decoding attempts of one document, each format once. */
typedef struct attempts {
        ncm_cpu_checkpoint *c1, *c2, *c3;
        decoder d1, d2, d3;
        v4_attempt a4;
} attempts;

static void attempts_done(attempts *t)
{
        ncm_cpu_checkpoint_free(t->c1);
        ncm_cpu_checkpoint_free(t->c2);
        ncm_cpu_checkpoint_free(t->c3);
        ncm_cpu_checkpoint_free(t->a4.c);
}

/*
 * How release V (PodLevelResourceManagers off) reads the attempts T: the format it loads the
 * file as, or 0 with its words for the refusal in MSG. Each release returns the error of the
 * last format it tried (kubernetes pkg/kubelet/cm/cpumanager/state/state_checkpoint.go):
 *  - up to 1.35: V1, then V2 (the V2 type is CPUManagerCheckpoint: its rendering is the only
 *    one it verifies);
 *  - 1.36 (PRs #134768, #137751): V2 (native rendering, then legacy), then V1;
 *  - 1.37 on (PR #139102): V4, a failure final when data or dataChecksum is set; then V3
 *    (native or legacy rendering, no 0 accepted), V2, V1.
 */
static ncm_cpu_checkpoint_format read_as(const attempts *t, ncm_kubelet_version v, char *msg,
                                         size_t size)
{
        ncm_cpu_checksum_match m1 = t->c1 ? t->c1->match : NCM_CPU_CHECKSUM_MISMATCH;
        ncm_cpu_checksum_match m2 = t->c2 ? t->c2->match : NCM_CPU_CHECKSUM_MISMATCH;
        ncm_cpu_checksum_match m3 = t->c3 ? t->c3->match : NCM_CPU_CHECKSUM_MISMATCH;
        bool ok1 = m1 == NCM_CPU_CHECKSUM_ZERO || m1 == NCM_CPU_CHECKSUM_LEGACY;
        bool ok2 = m2 == NCM_CPU_CHECKSUM_ZERO || m2 == NCM_CPU_CHECKSUM_LEGACY;
        bool ok2_native = ok2 || m2 == NCM_CPU_CHECKSUM_NATIVE;
        bool ok3 = m3 == NCM_CPU_CHECKSUM_LEGACY || m3 == NCM_CPU_CHECKSUM_NATIVE;
        const char *e1 = t->c1 ? "checkpoint is corrupted" : t->d1.msg;
        const char *e2 = t->c2 ? "checkpoint is corrupted" : t->d2.msg;

        if (v.major != 0 && !ncm_kubelet_version_at_least(v, 1, 36)) {
                if (ok1)
                        return NCM_CPU_CHECKPOINT_V1;
                if (ok2)
                        return NCM_CPU_CHECKPOINT_V2;
                snprintf(msg, size, "%s", e2);
                return 0;
        }
        if (v.major != 0 && !ncm_kubelet_version_at_least(v, 1, 37)) {
                if (ok2_native)
                        return NCM_CPU_CHECKPOINT_V2;
                if (ok1)
                        return NCM_CPU_CHECKPOINT_V1;
                snprintf(msg, size, "%s", e1);
                return 0;
        }
        if (t->a4.loads)
                return NCM_CPU_CHECKPOINT_V4;
        if (t->a4.has_data) {
                snprintf(msg, size, "could not load v4 checkpoint: %.900s", t->a4.err);
                return 0;
        }
        if (ok3)
                return NCM_CPU_CHECKPOINT_V3;
        if (ok2_native)
                return NCM_CPU_CHECKPOINT_V2;
        if (ok1)
                return NCM_CPU_CHECKPOINT_V1;
        snprintf(msg, size, "%s", e1);
        return 0;
}

int ncm__cpu_checkpoint_parse_full(const char *text, size_t len, const char *name,
                                   ncm_kubelet_version v, ncm_cpu_checkpoint **ret,
                                   char kubelet_msg[CKPT_MSG_MAX], ncm_error *err)
{
        ncm_gojson g;
        attempts t = {0};
        ncm_cpu_checkpoint **pick = NULL;
        ncm_cpu_checkpoint_format as;
        char kmsg[CKPT_MSG_MAX] = "";
        int r;

        r = ncm_kubelet_version_check(v, err);
        if (r < 0)
                return r;
        r = ncm__gojson_init(&g, text, len, name, err);
        if (r < 0) {
                /* The kubelet prints Go's json.SyntaxError text, without a position. */
                if (kubelet_msg)
                        snprintf(kubelet_msg, CKPT_MSG_MAX, "%s", g.syntax);
                return r;
        }

        r = attempt_v4(&g, name, &t.a4, err);
        if (r < 0)
                goto out;
        t.c2 = decode(&t.d2, &g, KIND_V2);
        t.c1 = decode(&t.d1, &g, KIND_V1);
        t.c3 = decode(&t.d3, &g, KIND_V3);
        if (t.d1.code == ENOMEM || t.d2.code == ENOMEM || t.d3.code == ENOMEM ||
            (t.c1 && !classify(t.c1)) || (t.c2 && !classify(t.c2)) || (t.c3 && !classify(t.c3))) {
                r = ncm_error_set(err, ENOMEM, "%s: out of memory", name);
                goto out;
        }
        as = read_as(&t, v, kmsg, sizeof(kmsg));

        /* The file's layout, whatever the release makes of it. */
        if (t.a4.c)
                pick = &t.a4.c;
        else if (t.c2 && t.c2->match != NCM_CPU_CHECKSUM_MISMATCH)
                pick = &t.c2;
        else if (t.c1 && t.c1->match != NCM_CPU_CHECKSUM_MISMATCH)
                pick = &t.c1;
        else if (t.c3 && (t.c3->match != NCM_CPU_CHECKSUM_MISMATCH || t.c3->has_pod_entries))
                pick = &t.c3;
        else if (t.c2)
                pick = &t.c2;
        else if (t.c1)
                pick = &t.c1;
        if (!pick) {
                const char *m = t.d2.msg;
                if (kubelet_msg)
                        snprintf(kubelet_msg, CKPT_MSG_MAX, "%s", kmsg);
                /* Report the V2 decoder's view unless the entries look like V1's strings. */
                if (t.d2.code == EINVAL && strstr(t.d2.msg, "of type map[string]string") &&
                    strstr(t.d2.msg, "unmarshal string"))
                        m = t.d1.msg;
                r = ncm_error_set(err, NCM_E_INVALID_STATE, "%s: %s", name, m);
                goto out;
        }
        (*pick)->kubelet = v;
        (*pick)->read_as = as;
        if (!as && !((*pick)->kubelet_error = strdup(kmsg))) {
                r = ncm_error_set(err, ENOMEM, "%s: out of memory", name);
                goto out;
        }
        r = decode_promised(&g, *pick, name, err);
        if (r < 0)
                goto out;
        *ret = *pick;
        *pick = NULL;
        r = 0;
out:
        attempts_done(&t);
        return r;
}

int ncm_cpu_checkpoint_parse_version(const char *text, size_t len, const char *name,
                                     ncm_kubelet_version v, ncm_cpu_checkpoint **ret,
                                     ncm_error *err)
{
        return ncm__cpu_checkpoint_parse_full(text, len, name, v, ret, NULL, err);
}

int ncm_cpu_checkpoint_parse(const char *text, size_t len, const char *name,
                             ncm_cpu_checkpoint **ret, ncm_error *err)
{
        return ncm_cpu_checkpoint_parse_version(text, len, name, NCM_KUBELET_VERSION_DEFAULT, ret,
                                                err);
}

int ncm_cpu_checkpoint_accept(ncm_cpu_checkpoint *c, ncm_error *err)
{
        if (c->format == NCM_CPU_CHECKPOINT_V4 && c->data_error)
                return ncm_error_set(err, NCM_E_INVALID_STATE,
                                     "its data does not decode (%s): there is no content to take",
                                     c->data_error);
        if (c->match == NCM_CPU_CHECKSUM_MISMATCH)
                c->match = c->format == NCM_CPU_CHECKPOINT_V4 ? NCM_CPU_CHECKSUM_DATA
                                                              : NCM_CPU_CHECKSUM_LEGACY;
        c->read_as = c->format;
        free(c->kubelet_error);
        c->kubelet_error = NULL;
        return 0;
}

static const char *format_name(ncm_cpu_checkpoint_format f)
{
        static const char *const names[] = {"?", "V1", "V2", "V3", "V4"};
        return (size_t)f < NCM_ELEMENTSOF(names) ? names[f] : "?";
}

int ncm_cpu_checkpoint_verify(const ncm_cpu_checkpoint *c, ncm_error *err)
{
        if (c->format == NCM_CPU_CHECKPOINT_V4 && c->data_error)
                return ncm_error_set(err, NCM_E_CHECKSUM,
                                     "checkpoint is corrupted: its data does not decode: %s",
                                     c->data_error);
        if (c->match != NCM_CPU_CHECKSUM_MISMATCH)
                return 0;
        if (c->format == NCM_CPU_CHECKPOINT_V4)
                return ncm_error_set(err, NCM_E_CHECKSUM,
                                     "checkpoint is corrupted: dataChecksum %" PRIu64
                                     " in the file, but its data hashes to %" PRIu32,
                                     c->checksum, c->legacy_checksum);
        if (c->format == NCM_CPU_CHECKPOINT_V1)
                return ncm_error_set(err, NCM_E_CHECKSUM,
                                     "checkpoint is corrupted: checksum %" PRIu64
                                     " in the file, but its V1 content hashes to %" PRIu32,
                                     c->checksum, c->legacy_checksum);
        return ncm_error_set(err, NCM_E_CHECKSUM,
                             "checkpoint is corrupted: checksum %" PRIu64
                             " in the file, but its %s content hashes to %" PRIu32
                             " (CPUManagerCheckpoint) or %" PRIu32 " (CPUManagerCheckpoint%s)",
                             c->checksum, format_name(c->format), c->legacy_checksum,
                             c->native_checksum, format_name(c->format));
}

/* ---------------------------------------------------------------------------------------- */
/* Restore                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static const ncm_container_ref *find_ref(const ncm_container_ref *refs, size_t n, const char *id)
{
        /* ContainerMap is a Go map keyed by container ID: the last Add wins. */
        for (size_t i = n; i-- > 0;)
                if (strcmp(refs[i].container_id, id) == 0)
                        return &refs[i];
        return NULL;
}

static int parse_cpus(const char *text, ncm_cpuset **ret, ncm_error *err)
{
        ncm_error e = NCM_ERROR_INIT;
        int r = ncm_cpuset_parse_list(text, ret, &e);
        if (r < 0 && err)
                *err = e;
        return r;
}

/* One (pod, container, cpuset text) to restore; CPUS NULL for a pod key without containers. */
typedef struct restore_item {
        const char *pod;
        const char *ctr;
        const char *cpus;
        const char *id; /* V1 container ID */
} restore_item;

static int cmp_item(const void *a, const void *b)
{
        const restore_item *x = a, *y = b;
        int c = strcmp(x->pod, y->pod);
        if (c == 0)
                c = strcmp(x->ctr, y->ctr);
        if (c == 0)
                c = strcmp(x->id, y->id);
        return c;
}

/*
 * The kubelet's V2 view of C: V2 entries as they are, V1 entries migrated through REFS (kubelet
 * migrateV1CheckpointToV2Checkpoint). Sorted by pod, then container; when two V1 container IDs
 * map to the same container the bytewise larger ID wins (Go: whichever its map order visits
 * last). The strings point into C and REFS.
 */
static int restore_items(const ncm_cpu_checkpoint *c, const ncm_container_ref *refs, size_t nrefs,
                         ncm_kubelet_version v, restore_item **ret, size_t *ret_n, ncm_error *err)
{
        size_t n = 0, k = 0;
        if (c->format == NCM_CPU_CHECKPOINT_V1)
                n = c->nv1;
        else
                for (size_t i = 0; i < c->npods; i++)
                        n += c->pods[i].n ? c->pods[i].n : 1;
        restore_item *items = n ? calloc(n, sizeof(*items)) : NULL;
        if (n && !items)
                return ncm_error_set(err, ENOMEM, "restore CPU state: out of memory");

        if (c->format == NCM_CPU_CHECKPOINT_V1) {
                for (size_t i = 0; i < c->nv1; i++) {
                        const ncm_container_ref *ref = find_ref(refs, nrefs, c->v1[i].name);
                        if (!ref) {
                                free(items);
                                /* the wrapping changed with 1.36's restore (PR #134768) */
                                return ncm_error_set(
                                                err, NCM_E_INVALID_STATE,
                                                "%s: containerID '%s' not found in initial "
                                                "containers list",
                                                ncm_kubelet_version_at_least(v, 1, 36)
                                                                ? "failed to migrate checkpoint "
                                                                  "from v1 to v2"
                                                                : "error migrating v1 checkpoint "
                                                                  "state to v2 checkpoint state",
                                                c->v1[i].name);
                        }
                        items[k++] = (restore_item){ref->pod_uid, ref->container_name,
                                                    c->v1[i].cpus, c->v1[i].name};
                }
                if (k > 1)
                        qsort(items, k, sizeof(*items), cmp_item);
                /* Keep only the last of each run of equal (pod, container). */
                size_t w = 0;
                for (size_t i = 0; i < k; i++) {
                        if (i + 1 < k && strcmp(items[i].pod, items[i + 1].pod) == 0 &&
                            strcmp(items[i].ctr, items[i + 1].ctr) == 0)
                                continue;
                        items[w++] = items[i];
                }
                k = w;
        } else {
                for (size_t i = 0; i < c->npods; i++) {
                        const ncm_cpu_checkpoint_pod *p = &c->pods[i];
                        if (p->n == 0)
                                items[k++] = (restore_item){p->uid, NULL, NULL, NULL};
                        for (size_t j = 0; j < p->n; j++)
                                items[k++] = (restore_item){p->uid, p->entries[j].name,
                                                            p->entries[j].cpus, NULL};
                }
        }
        *ret = items;
        *ret_n = k;
        return 0;
}

/*
 * The promises (NP pods in P: V4 data's baselines or nodecm's "promised" member, named WHAT in
 * errors) into S, whose entries are restored: each must name a container that holds CPUs and be
 * part of them (a resize never takes a promised CPU away), else the state is inconsistent
 * (-NCM_E_INVALID_STATE naming the container). An empty baseline promises nothing.
 */
static int restore_promised(const ncm_cpu_checkpoint_pod *pods, size_t np, const char *what,
                            ncm_cpu_state *s, ncm_error *err)
{
        for (size_t i = 0; i < np; i++) {
                const ncm_cpu_checkpoint_pod *p = &pods[i];
                for (size_t j = 0; j < p->n; j++) {
                        const ncm_cpu_checkpoint_entry *e = &p->entries[j];
                        const ncm_cpuset *have = ncm_cpu_state_get(s, p->uid, e->name);
                        ncm_autoptr(ncm_cpuset) set = NULL;
                        ncm_error pe = NCM_ERROR_INIT;
                        int r;
                        if (!e->cpus[0])
                                continue;
                        if (parse_cpus(e->cpus, &set, &pe) < 0)
                                return ncm_error_set(err, NCM_E_INVALID_STATE,
                                                     "%s: could not parse cpuset \"%s\" "
                                                     "for container \"%s\" in pod \"%s\": %s",
                                                     what, e->cpus, e->name, p->uid, pe.msg);
                        if (!have || !ncm_cpuset_is_subset(set, have)) {
                                ncm_autofree char *hs = have ? ncm_cpuset_format_list(have) : NULL;
                                return ncm_error_set(err, NCM_E_INVALID_STATE,
                                                     "%s: cpuset \"%s\" of container \"%s\" "
                                                     "in pod \"%s\" is not part of its CPUs "
                                                     "\"%s\"",
                                                     what, e->cpus, e->name, p->uid, hs ? hs : "");
                        }
                        r = ncm__cpu_state_set_promised_nopersist(s, p->uid, e->name, set);
                        if (r < 0)
                                return ncm_error_set(err, -r, "restore CPU state: out of memory");
                }
        }
        return 0;
}

int ncm_cpu_checkpoint_restore(const ncm_cpu_checkpoint *c, const char *policy_name,
                               const ncm_container_ref *refs, size_t nrefs, ncm_cpu_state **ret,
                               ncm_error *err)
{
        ncm_autofree restore_item *items = NULL;
        size_t ne = 0;
        ncm_autoptr(ncm_cpu_state) s = NULL;

        ncm_autoptr(ncm_cpuset) set = NULL;
        ncm_error e = NCM_ERROR_INIT;
        ncm_kubelet_version kubelet = c->kubelet;
        const ncm_cpu_checkpoint *file = c;
        int r;

        if (!c->read_as)
                return ncm_error_set(err, NCM_E_INVALID_STATE, "%s",
                                     c->kubelet_error ? c->kubelet_error
                                                      : "checkpoint is corrupted");
        /* What the release loaded: an older one reads a V4 file's V2 fields */
        if (c->format == NCM_CPU_CHECKPOINT_V4 && c->read_as != NCM_CPU_CHECKPOINT_V4)
                c = c->v2_part;

        s = ncm_cpu_state_new(c->policy_name);
        if (!s)
                return ncm_error_set(err, ENOMEM, "restore CPU state: out of memory");
        ncm_cpu_state_set_kubelet_version(s, kubelet);

        /* The V2 entries (V1 ones migrated), in sorted order. */
        r = restore_items(c, refs, nrefs, kubelet, &items, &ne, err);
        if (r < 0)
                return r;

        if (policy_name && strcmp(policy_name, c->policy_name) != 0) {
                ncm_buf b = NCM_BUF_INIT;
                ncm_buf_puts(&b, "configured policy ");
                ncm_buf_go_quote(&b, policy_name, strlen(policy_name));
                ncm_buf_puts(&b, " differs from state checkpoint policy ");
                ncm_buf_go_quote(&b, c->policy_name, strlen(c->policy_name));
                r = ncm_error_set(err, NCM_E_INVALID_STATE, "%s",
                                  b.data ? b.data : "configured policy differs");
                ncm_buf_done(&b);
                return r;
        }

        if (parse_cpus(c->default_cpus, &set, &e) < 0) {
                ncm_buf b = NCM_BUF_INIT;
                ncm_buf_puts(&b, "could not parse default cpu set ");
                ncm_buf_go_quote(&b, c->default_cpus, strlen(c->default_cpus));
                r = ncm_error_set(err, NCM_E_INVALID_STATE, "%s: %s", b.data ? b.data : "", e.msg);
                ncm_buf_done(&b);
                return r;
        }
        (void)ncm_cpu_state_set_default(s, set, NULL); /* no hook yet: cannot fail */
        set = ncm_cpuset_free(set);

        for (size_t i = 0; i < ne; i++) {
                const restore_item *it = &items[i];
                if (!it->cpus) {
                        /* A pod key without containers (or "pod": null) keeps its key. */
                        if (ncm__cpu_state_add_pod(s, it->pod, NULL) < 0)
                                return ncm_error_set(err, ENOMEM,
                                                     "restore CPU state: out of memory");
                        continue;
                }
                if (parse_cpus(it->cpus, &set, &e) < 0) {
                        ncm_buf b = NCM_BUF_INIT;
                        ncm_buf_puts(&b, "could not parse cpuset ");
                        ncm_buf_go_quote(&b, it->cpus, strlen(it->cpus));
                        ncm_buf_puts(&b, " for container ");
                        ncm_buf_go_quote(&b, it->ctr, strlen(it->ctr));
                        ncm_buf_puts(&b, " in pod ");
                        ncm_buf_go_quote(&b, it->pod, strlen(it->pod));
                        r = ncm_error_set(err, NCM_E_INVALID_STATE, "%s: %s", b.data ? b.data : "",
                                          e.msg);
                        ncm_buf_done(&b);
                        return r;
                }
                r = ncm__cpu_state_set_nopersist(s, it->pod, it->ctr, set);
                set = ncm_cpuset_free(set);
                if (r < 0)
                        return ncm_error_set(err, -r, "restore CPU state: out of memory");
        }
        /* V4 data keeps the kubelet's baselines; nodecm's own member is read otherwise */
        if (c->nbaselines)
                r = restore_promised(c->baselines, c->nbaselines, "baselines", s, err);
        else
                r = restore_promised(file->promised, file->npromised, "promised", s, err);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(s);
        return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The state as the kubelet's storeState sees it                                           */
/* ---------------------------------------------------------------------------------------- */

ncm_cpu_checkpoint *ncm__cpu_checkpoint_of_state(const ncm_cpu_state *s)
{
        ncm_autoptr(ncm_cpu_checkpoint) c = calloc(1, sizeof(ncm_cpu_checkpoint));
        if (!c)
                return NULL;
        c->format = NCM_CPU_CHECKPOINT_V2;
        c->policy_name = strdup(ncm_cpu_state_policy(s));
        c->default_cpus = ncm_cpuset_format_list(ncm_cpu_state_default(s));
        if (!c->policy_name || !c->default_cpus)
                return NULL;
        c->npods = ncm_cpu_state_num_pods(s);
        if (c->npods) {
                c->pods = calloc(c->npods, sizeof(*c->pods));
                if (!c->pods) {
                        c->npods = 0;
                        return NULL;
                }
        }
        for (size_t i = 0; i < c->npods; i++) {
                ncm_cpu_checkpoint_pod *p = &c->pods[i];
                size_t n = ncm_cpu_state_pod_num_containers(s, i);
                p->uid = strdup(ncm_cpu_state_pod_uid(s, i));
                if (!p->uid)
                        return NULL;
                if (n) {
                        p->entries = calloc(n, sizeof(*p->entries));
                        if (!p->entries)
                                return NULL;
                }
                for (size_t j = 0; j < n; j++) {
                        p->n = j + 1;
                        p->entries[j].name = strdup(ncm_cpu_state_container_name(s, i, j));
                        p->entries[j].cpus = ncm_cpuset_format_list(
                                        ncm_cpu_state_container_cpus(s, i, j));
                        if (!p->entries[j].name || !p->entries[j].cpus)
                                return NULL;
                }
        }
        if (!classify(c))
                return NULL;
        c->checksum = c->legacy_checksum;
        c->match = NCM_CPU_CHECKSUM_LEGACY;
        return NCM_TAKE_PTR(c);
}
