/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memory_manager_state, as each kubelet generation reads and writes it.
 *
 * Layouts (encoding/json: struct fields in declaration order, map keys sorted as strings, so
 * node "10" comes before node "2"; omitempty drops an empty entries/podEntries map):
 *   V1 (<= 1.35) {"policyName","machineState","entries","checksum"}
 *   V2 (1.36)    {"policyName","machineState","entries","podEntries","checksum"}
 *   V3 (1.37)    V1's four fields, then "data" (the JSON of {"policyName","machineState",
 *                "entries","podEntries"}) and "dataChecksum".
 * Checksums are FNV-1a 32 over go-spew's rendering (base/kubelet-checkpoint.h): V1's over
 * (*state.MemoryManagerCheckpoint){PolicyName MachineState Entries Checksum:0}, V2's the same
 * with PodEntries before Checksum, V3's V1 part over V1's rendering and dataChecksum over the
 * data string ("(string)" then its bytes). Inside, the NUMANodeMap is rendered with its int
 * keys sorted numerically (go-spew's order, not encoding/json's), pointers as "<*>" and nil
 * maps, slices and pointers as "<nil>".
 *
 * Reading follows each generation's fallbacks (V3 -> V2 -> V1 for 1.37; V2 -> V1 for 1.36);
 * 1.37 gives up at V3 when the file has data or a dataChecksum (its tests: a file with
 * dataChecksum but no data fails "could not load v3 checkpoint: failed to deserialize memory
 * manager checkpoint data: unexpected end of JSON input"). Decoding is Go's where it decides the
 * value: field names fold case, unknown fields are skipped, null leaves a value or makes a map
 * or slice nil, numbers follow strconv, a repeated map member replaces the earlier one. Known
 * simplification: a repeated member inside a block or table object replaces the whole slice
 * (Go decodes over the old elements); no kubelet writes one.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/fs.h>
#include <nodecm/hash.h>
#include <nodecm/memorymanager.h>
#include "base/array.h"
#include "base/gojson.h"
#include "base/kubelet-checkpoint.h"
#include "memorymanager/mm-internal.h"

/* The kubelet's checkpoint manager refuses nothing by size; nodecm caps what it reads. */
#define CKPT_MAX (64u << 20)
#define MSG_MAX 512

ncm_mem_checkpoint_version ncm_mem_checkpoint_version_of(ncm_kubelet_version v)
{
        if (v.major == 0 || ncm_kubelet_version_at_least(v, 1, 37))
                return NCM_MEM_CHECKPOINT_V3;
        if (ncm_kubelet_version_at_least(v, 1, 36))
                return NCM_MEM_CHECKPOINT_V2;
        return NCM_MEM_CHECKPOINT_V1;
}

/* ==========================================================================================
 * Writing: encoding/json
 */

static void put_u64(ncm_buf *b, uint64_t v)
{
        char tmp[24];
        snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
        ncm_buf_puts(b, tmp);
}

static void put_i64(ncm_buf *b, int64_t v)
{
        char tmp[24];
        snprintf(tmp, sizeof(tmp), "%" PRId64, v);
        ncm_buf_puts(b, tmp);
}

static void json_ints(ncm_buf *b, const int *v, size_t n, bool nil)
{
        if (nil) {
                ncm_buf_puts(b, "null");
                return;
        }
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                if (i)
                        ncm_buf_putc(b, ',');
                put_i64(b, v[i]);
        }
        ncm_buf_putc(b, ']');
}

static void json_str(ncm_buf *b, const char *s)
{
        ncm_buf_json_string(b, s, strlen(s));
}

static void json_blocks(ncm_buf *b, const ncm_mem_block *v, size_t n, bool nil)
{
        if (nil) {
                ncm_buf_puts(b, "null");
                return;
        }
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                ncm_buf_puts(b, i ? ",{\"numaAffinity\":" : "{\"numaAffinity\":");
                json_ints(b, v[i].numa, v[i].nnuma, v[i].numa_nil);
                ncm_buf_puts(b, ",\"type\":");
                json_str(b, v[i].type);
                ncm_buf_puts(b, ",\"size\":");
                put_u64(b, v[i].size);
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, ']');
}

/* Node indexes in encoding/json's key order: the ids as decimal strings, bytewise. */
static int cmp_id_text(const void *a, const void *b)
{
        char x[16], y[16];
        snprintf(x, sizeof(x), "%d", ((const ncm_mem_node *)*(const void *const *)a)->id);
        snprintf(y, sizeof(y), "%d", ((const ncm_mem_node *)*(const void *const *)b)->id);
        return strcmp(x, y);
}

void ncm__mem_format_machine(const ncm_mem_state *s, ncm_buf *b)
{
        const ncm_mem_node **order;

        if (s->nodes_nil) {
                ncm_buf_puts(b, "null");
                return;
        }
        order = malloc((s->nnodes ? s->nnodes : 1) * sizeof(*order));
        if (!order) {
                ncm_buf_puts(b, "\x01"); /* poison: the caller sees a failed buffer below */
                ncm_buf_done(b);
                return;
        }
        for (size_t i = 0; i < s->nnodes; i++)
                order[i] = &s->nodes[i];
        if (s->nnodes > 1)
                qsort(order, s->nnodes, sizeof(*order), cmp_id_text);
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < s->nnodes; i++) {
                const ncm_mem_node *n = order[i];
                ncm_buf_puts(b, i ? ",\"" : "\"");
                put_i64(b, n->id);
                ncm_buf_puts(b, "\":");
                if (n->nil) {
                        ncm_buf_puts(b, "null");
                        continue;
                }
                ncm_buf_puts(b, "{\"numberOfAssignments\":");
                put_i64(b, n->assignments);
                ncm_buf_puts(b, ",\"memoryMap\":");
                if (n->types_nil) {
                        ncm_buf_puts(b, "null");
                } else {
                        ncm_buf_putc(b, '{');
                        for (size_t k = 0; k < n->ntypes; k++) {
                                const ncm_mem_type *t = &n->types[k];
                                if (k)
                                        ncm_buf_putc(b, ',');
                                json_str(b, t->name);
                                ncm_buf_putc(b, ':');
                                if (t->nil) {
                                        ncm_buf_puts(b, "null");
                                        continue;
                                }
                                ncm_buf_puts(b, "{\"total\":");
                                put_u64(b, t->t.total);
                                ncm_buf_puts(b, ",\"systemReserved\":");
                                put_u64(b, t->t.system_reserved);
                                ncm_buf_puts(b, ",\"allocatable\":");
                                put_u64(b, t->t.allocatable);
                                ncm_buf_puts(b, ",\"reserved\":");
                                put_u64(b, t->t.reserved);
                                ncm_buf_puts(b, ",\"free\":");
                                put_u64(b, t->t.free);
                                ncm_buf_putc(b, '}');
                        }
                        ncm_buf_putc(b, '}');
                }
                ncm_buf_puts(b, ",\"cells\":");
                json_ints(b, n->cells, n->ncells, n->cells_nil);
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, '}');
        free(order);
}

static void json_entries(const ncm_mem_state *s, ncm_buf *b)
{
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < s->npods; i++) {
                const ncm_mem_pod *p = &s->pods[i];
                if (i)
                        ncm_buf_putc(b, ',');
                json_str(b, p->uid);
                ncm_buf_putc(b, ':');
                if (p->nil) {
                        ncm_buf_puts(b, "null");
                        continue;
                }
                ncm_buf_putc(b, '{');
                for (size_t k = 0; k < p->n; k++) {
                        if (k)
                                ncm_buf_putc(b, ',');
                        json_str(b, p->c[k].name);
                        ncm_buf_putc(b, ':');
                        json_blocks(b, p->c[k].blocks, p->c[k].n, p->c[k].nil);
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, '}');
}

static void json_pod_entries(const ncm_mem_state *s, ncm_buf *b)
{
        ncm_buf_putc(b, '{');
        for (size_t i = 0; i < s->npod_entries; i++) {
                const ncm_mem_pod_entry *e = &s->pod_entries[i];
                if (i)
                        ncm_buf_putc(b, ',');
                json_str(b, e->uid);
                ncm_buf_puts(b, ":{\"memoryBlocks\":");
                json_blocks(b, e->blocks, e->n, e->nil);
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, '}');
}

/* The members every layout starts with; PODS: podEntries too (omitempty). */
static void json_body(const ncm_mem_state *s, bool pods, ncm_buf *b)
{
        ncm_buf_puts(b, "{\"policyName\":");
        json_str(b, s->policy);
        ncm_buf_puts(b, ",\"machineState\":");
        ncm__mem_format_machine(s, b);
        if (s->npods > 0) {
                ncm_buf_puts(b, ",\"entries\":");
                json_entries(s, b);
        }
        if (pods && s->npod_entries > 0) {
                ncm_buf_puts(b, ",\"podEntries\":");
                json_pod_entries(s, b);
        }
}

/* ==========================================================================================
 * go-spew's rendering, the checksums' input
 */

static void spew_ints(ncm_buf *b, const int *v, size_t n, bool nil)
{
        if (nil) {
                ncm__spew_nil(b);
                return;
        }
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                ncm__spew_sep(b, i);
                put_i64(b, v[i]);
        }
        ncm_buf_putc(b, ']');
}

static void spew_blocks(ncm_buf *b, const ncm_mem_block *v, size_t n, bool nil)
{
        if (nil) {
                ncm__spew_nil(b);
                return;
        }
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                ncm__spew_sep(b, i);
                ncm_buf_putc(b, '{');
                ncm__spew_field(b, 0, "NUMAAffinity", "[]int");
                spew_ints(b, v[i].numa, v[i].nnuma, v[i].numa_nil);
                ncm__spew_field(b, 1, "Type", "v1.ResourceName");
                ncm_buf_puts(b, v[i].type);
                ncm__spew_field(b, 2, "Size", "uint64");
                put_u64(b, v[i].size);
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, ']');
}

static void spew_machine(const ncm_mem_state *s, ncm_buf *b)
{
        if (s->nodes_nil) {
                ncm__spew_nil(b);
                return;
        }
        ncm_buf_puts(b, "map[");
        for (size_t i = 0; i < s->nnodes; i++) {
                const ncm_mem_node *n = &s->nodes[i];
                ncm__spew_sep(b, i);
                put_i64(b, n->id);
                ncm_buf_putc(b, ':');
                if (n->nil) {
                        ncm__spew_nil(b);
                        continue;
                }
                ncm_buf_puts(b, "<*>{");
                ncm__spew_field(b, 0, "NumberOfAssignments", "int");
                put_i64(b, n->assignments);
                ncm__spew_field(b, 1, "MemoryMap", "map[v1.ResourceName]*state.MemoryTable");
                if (n->types_nil) {
                        ncm__spew_nil(b);
                } else {
                        ncm_buf_puts(b, "map[");
                        for (size_t k = 0; k < n->ntypes; k++) {
                                const ncm_mem_type *t = &n->types[k];
                                ncm__spew_key(b, k, t->name);
                                if (t->nil) {
                                        ncm__spew_nil(b);
                                        continue;
                                }
                                ncm_buf_puts(b, "<*>{");
                                ncm__spew_field(b, 0, "TotalMemSize", "uint64");
                                put_u64(b, t->t.total);
                                ncm__spew_field(b, 1, "SystemReserved", "uint64");
                                put_u64(b, t->t.system_reserved);
                                ncm__spew_field(b, 2, "Allocatable", "uint64");
                                put_u64(b, t->t.allocatable);
                                ncm__spew_field(b, 3, "Reserved", "uint64");
                                put_u64(b, t->t.reserved);
                                ncm__spew_field(b, 4, "Free", "uint64");
                                put_u64(b, t->t.free);
                                ncm_buf_putc(b, '}');
                        }
                        ncm_buf_putc(b, ']');
                }
                ncm__spew_field(b, 2, "Cells", "[]int");
                spew_ints(b, n->cells, n->ncells, n->cells_nil);
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, ']');
}

static void spew_entries(const ncm_mem_state *s, ncm_buf *b)
{
        if (s->pods_nil) {
                ncm__spew_nil(b);
                return;
        }
        ncm_buf_puts(b, "map[");
        for (size_t i = 0; i < s->npods; i++) {
                const ncm_mem_pod *p = &s->pods[i];
                ncm__spew_key(b, i, p->uid);
                if (p->nil) {
                        ncm__spew_nil(b);
                        continue;
                }
                ncm_buf_puts(b, "map[");
                for (size_t k = 0; k < p->n; k++) {
                        ncm__spew_key(b, k, p->c[k].name);
                        spew_blocks(b, p->c[k].blocks, p->c[k].n, p->c[k].nil);
                }
                ncm_buf_putc(b, ']');
        }
        ncm_buf_putc(b, ']');
}

static void spew_pod_entries(const ncm_mem_state *s, ncm_buf *b)
{
        if (s->pod_entries_nil) {
                ncm__spew_nil(b);
                return;
        }
        ncm_buf_puts(b, "map[");
        for (size_t i = 0; i < s->npod_entries; i++) {
                const ncm_mem_pod_entry *e = &s->pod_entries[i];
                ncm__spew_key(b, i, e->uid);
                ncm_buf_putc(b, '{');
                ncm__spew_field(b, 0, "MemoryBlocks", "[]state.Block");
                spew_blocks(b, e->blocks, e->n, e->nil);
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, ']');
}

/* checksum.New of the checkpoint struct, its type named NAME; with PODS the V2 field too. */
static int spew_sum(const ncm_mem_state *s, const char *name, bool pods, uint32_t *ret)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_buf_printf(&b, "(*state.%s){", name);
        ncm__spew_field(&b, 0, "PolicyName", "string");
        ncm_buf_puts(&b, s->policy);
        ncm__spew_field(&b, 1, "MachineState", "state.NUMANodeMap");
        spew_machine(s, &b);
        ncm__spew_field(&b, 2, "Entries", "state.ContainerMemoryAssignments");
        spew_entries(s, &b);
        if (pods) {
                ncm__spew_field(&b, 3, "PodEntries", "state.PodMemoryAssignments");
                spew_pod_entries(s, &b);
        }
        ncm__spew_field(&b, pods ? 4 : 3, "Checksum", "checksum.Checksum");
        ncm_buf_puts(&b, "0}");
        return ncm__spew_sum(&b, ret);
}

/* checksum.New(string): go-spew renders a string as "(string)" and its bytes. */
static uint32_t string_sum(const char *s, size_t len)
{
        ncm_buf b = NCM_BUF_INIT;
        uint32_t v = 0;
        ncm_buf_puts(&b, "(string)");
        ncm_buf_append(&b, s, len);
        if (ncm__spew_sum(&b, &v) < 0)
                return 0;
        return v;
}

static void data_text(const ncm_mem_state *s, ncm_buf *b)
{
        json_body(s, true, b);
        ncm_buf_putc(b, '}');
}

int ncm_mem_checkpoint_sums(const ncm_mem_state *s, uint32_t *legacy, uint32_t *v2, uint32_t *data)
{
        int r = 0;
        if (legacy)
                r = spew_sum(s, "MemoryManagerCheckpoint", false, legacy);
        if (r >= 0 && v2)
                r = spew_sum(s, "MemoryManagerCheckpoint", true, v2);
        if (r >= 0 && data) {
                ncm_buf b = NCM_BUF_INIT;
                data_text(s, &b);
                if (ncm_buf_failed(&b))
                        r = -ENOMEM;
                else
                        *data = string_sum(b.data, b.len);
                ncm_buf_done(&b);
        }
        return r;
}

void ncm_mem_checkpoint_format(const ncm_mem_state *s, ncm_mem_checkpoint_version version,
                               ncm_buf *b)
{
        uint32_t legacy = 0, v2 = 0, data = 0;

        (void)ncm_mem_checkpoint_sums(s, &legacy, &v2, &data);
        switch (version) {
        case NCM_MEM_CHECKPOINT_V2:
                json_body(s, true, b);
                ncm__mem_promised_format(s, b);
                ncm_buf_puts(b, ",\"checksum\":");
                put_u64(b, v2);
                ncm_buf_putc(b, '}');
                break;
        case NCM_MEM_CHECKPOINT_V3: {
                ncm_buf d = NCM_BUF_INIT;
                json_body(s, false, b);
                ncm__mem_promised_format(s, b);
                ncm_buf_puts(b, ",\"checksum\":");
                put_u64(b, legacy);
                data_text(s, &d);
                ncm_buf_puts(b, ",\"data\":");
                if (ncm_buf_failed(&d))
                        ncm_buf_done(b);
                else
                        ncm_buf_json_string(b, d.data, d.len);
                ncm_buf_done(&d);
                ncm_buf_puts(b, ",\"dataChecksum\":");
                put_u64(b, data);
                ncm_buf_putc(b, '}');
                break;
        }
        default:
                json_body(s, false, b);
                ncm__mem_promised_format(s, b);
                ncm_buf_puts(b, ",\"checksum\":");
                put_u64(b, legacy);
                ncm_buf_putc(b, '}');
                break;
        }
}

int ncm_mem_checkpoint_write(const ncm_mem_state *s, ncm_mem_checkpoint_version version, int dirfd,
                             const char *path, ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT;
        int r;

        ncm_mem_checkpoint_format(s, version, &b);
        if (ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        r = ncm_fs_write_atomic(dirfd, path, b.data, b.len, 0600, err);
        ncm_buf_done(&b);
        return r;
}

/* ==========================================================================================
 * Reading: encoding/json into the generation's structs
 */

typedef struct decoder {
        ncm_gojson *g;
        const char *top; /* the Go struct being decoded, for type errors */
        int code;        /* first error: errno or NCM_E_*, 0 none */
        char msg[MSG_MAX];
} decoder;

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

/* json.UnmarshalTypeError for VALUE at FIELD (a JSON path) of Go struct STRUCT. */
static void type_error(decoder *d, const char *value, const char *strct, const char *field,
                       const char *gotype)
{
        if (d->code)
                return;
        d->code = EINVAL;
        ncm__gojson_type_error_text(d->msg, sizeof(d->msg), value, strct, field, gotype);
}

static void kind_error(decoder *d, ncm_gojson_kind k, const char *strct, const char *field,
                       const char *gotype)
{
        type_error(d, ncm__gojson_kind_name(k), strct, field, gotype);
}

/* A number into uint64 (UNSIGNED) or int; "number <lit>" type error when strconv refuses. */
static bool number(decoder *d, bool is_unsigned, const char *strct, const char *field,
                   const char *gotype, uint64_t *ru, int64_t *ri)
{
        const char *lit;
        size_t n = ncm__gojson_number(d->g, &lit);
        bool ok = is_unsigned ? ncm__gojson_parse_uint64(lit, n, ru)
                              : ncm__gojson_parse_int64(lit, n, ri);
        if (!ok) {
                char v[96];
                snprintf(v, sizeof(v), "number %.*s", (int)(n > 64 ? 64 : n), lit);
                type_error(d, v, strct, field, gotype);
        }
        return ok;
}

/* A string at the cursor as a C string (NUL inside refused: no kubelet writes one). */
static char *take_string(decoder *d, const char *field)
{
        char *s = NULL;
        size_t len = 0;
        if (ncm__gojson_string(d->g, &s, &len, NULL) < 0) {
                fail_oom(d);
                return NULL;
        }
        if (!ncm__ckpt_c_string(s, len)) {
                free(s);
                if (!d->code) {
                        d->code = EINVAL;
                        snprintf(d->msg, sizeof(d->msg), "%s: string holds a NUL character", field);
                }
                return NULL;
        }
        return s;
}

/* []int at the cursor. */
/* A map key holding a NUL (which the kubelet's strings cannot): the member is skipped, KEY
 * freed, and the decode fails with "FIELD: WHAT holds a NUL character". */
static bool key_refused(decoder *d, char *key, size_t klen, const char *field, const char *what)
{
        if (ncm__ckpt_c_string(key, klen))
                return false;
        free(key);
        ncm__gojson_skip(d->g);
        if (!d->code) {
                d->code = EINVAL;
                snprintf(d->msg, sizeof(d->msg), "%s: %s holds a NUL character", field, what);
        }
        return true;
}

static void decode_ints(decoder *d, const char *strct, const char *field, int **v, size_t *n,
                        bool *nil)
{
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        int *out = NULL;
        size_t cnt = 0, cap = 0;
        bool first = true;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
                free(*v);
                *v = NULL;
                *n = 0;
                *nil = true;
                return;
        }
        if (k != NCM_GOJSON_ARRAY) {
                kind_error(d, k, strct, field, "[]int");
                return;
        }
        while (!failed(d) && ncm__gojson_next_element(d->g, &first)) {
                int64_t x = 0;
                k = ncm__gojson_peek(d->g);
                if (k != NCM_GOJSON_NUMBER) {
                        if (k == NCM_GOJSON_NULL) {
                                ncm__gojson_skip(d->g);
                        } else {
                                kind_error(d, k, strct, field, "int");
                                break;
                        }
                } else if (!number(d, false, strct, field, "int", NULL, &x)) {
                        break;
                }
                if (ncm__array_grow(out, cap, cnt) < 0) {
                        fail_oom(d);
                        break;
                }
                if (x < INT32_MIN || x > INT32_MAX) {
                        /* Go's int is 64-bit; nodecm's NUMA ids are C ints */
                        if (!d->code) {
                                d->code = ERANGE;
                                snprintf(d->msg, sizeof(d->msg), "%s: %" PRId64 " out of range",
                                         field, x);
                        }
                        break;
                }
                out[cnt++] = (int)x;
        }
        if (failed(d)) {
                free(out);
                return;
        }
        free(*v);
        *v = out;
        *n = cnt;
        *nil = false;
}

static void decode_block(decoder *d, const char *field, ncm_mem_block *b)
{
        static const char *const fields[] = {"numaAffinity", "type", "size"};
        char path[128];
        bool first = true;
        int r, f;

        while (!failed(d) && (r = ncm__ckpt_next_field(d->g, &first, fields, 3, &f, NULL)) > 0) {
                ncm_gojson_kind k = ncm__gojson_peek(d->g);
                snprintf(path, sizeof(path), "%s.%s", field, f >= 0 ? fields[f] : "");
                if (f < 0) {
                        ncm__gojson_skip(d->g);
                } else if (f == 0) {
                        decode_ints(d, "Block", path, &b->numa, &b->nnuma, &b->numa_nil);
                } else if (k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(d->g);
                } else if (f == 1) {
                        char *s;
                        if (k != NCM_GOJSON_STRING) {
                                kind_error(d, k, "Block", path, "v1.ResourceName");
                                break;
                        }
                        if (!(s = take_string(d, path)))
                                break;
                        free(b->type);
                        b->type = s;
                } else {
                        if (k != NCM_GOJSON_NUMBER) {
                                kind_error(d, k, "Block", path, "uint64");
                                break;
                        }
                        (void)number(d, true, "Block", path, "uint64", &b->size, NULL);
                }
        }
        if (r < 0)
                fail_oom(d);
}

/* []Block at the cursor (a value that is not yet decoded into: replaced). */
static void decode_blocks(decoder *d, const char *strct, const char *field, ncm_mem_block **v,
                          size_t *n, bool *nil)
{
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        ncm_mem_block *out = NULL;
        size_t cnt = 0, cap = 0;
        bool first = true;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
                ncm_mem_blocks_free(*v, *n);
                *v = NULL;
                *n = 0;
                *nil = true;
                return;
        }
        if (k != NCM_GOJSON_ARRAY) {
                kind_error(d, k, strct, field, "[]state.Block");
                return;
        }
        while (!failed(d) && ncm__gojson_next_element(d->g, &first)) {
                if (ncm__array_grow(out, cap, cnt) < 0) {
                        fail_oom(d);
                        break;
                }
                out[cnt] = (ncm_mem_block){0};
                k = ncm__gojson_peek(d->g);
                if (k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(d->g);
                } else if (k != NCM_GOJSON_OBJECT) {
                        kind_error(d, k, strct, field, "state.Block");
                        break;
                } else {
                        decode_block(d, field, &out[cnt]);
                }
                if (!out[cnt].type && !(out[cnt].type = strdup("")))
                        fail_oom(d);
                if (!out[cnt].numa && !out[cnt].numa_nil)
                        out[cnt].numa_nil = true;
                cnt++;
        }
        if (failed(d)) {
                ncm_mem_blocks_free(out, cnt);
                return;
        }
        ncm_mem_blocks_free(*v, *n);
        *v = out;
        *n = cnt;
        *nil = false;
}

static int cmp_type(const void *a, const void *b)
{
        return strcmp(((const ncm_mem_type *)a)->name, ((const ncm_mem_type *)b)->name);
}

static void decode_table(decoder *d, const char *field, ncm_mem_table *t)
{
        static const char *const fields[] = {"total", "systemReserved", "allocatable", "reserved",
                                             "free"};
        uint64_t *slot[] = {&t->total, &t->system_reserved, &t->allocatable, &t->reserved,
                            &t->free};
        char path[160];
        bool first = true;
        int r, f;

        while (!failed(d) && (r = ncm__ckpt_next_field(d->g, &first, fields, 5, &f, NULL)) > 0) {
                ncm_gojson_kind k = ncm__gojson_peek(d->g);
                if (f < 0 || k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(d->g);
                        continue;
                }
                snprintf(path, sizeof(path), "%s.%s", field, fields[f]);
                if (k != NCM_GOJSON_NUMBER) {
                        kind_error(d, k, "MemoryTable", path, "uint64");
                        break;
                }
                (void)number(d, true, "MemoryTable", path, "uint64", slot[f], NULL);
        }
        if (r < 0)
                fail_oom(d);
}

/* map[v1.ResourceName]*MemoryTable at the cursor, into node N (merging, as Go does). */
static void decode_memory_map(decoder *d, const char *field, ncm_mem_node *n)
{
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        bool first = true;
        char *key;
        size_t klen;
        int r;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
                for (size_t i = 0; i < n->ntypes; i++)
                        free(n->types[i].name);
                free(n->types);
                n->types = NULL;
                n->ntypes = 0;
                n->types_nil = true;
                return;
        }
        if (k != NCM_GOJSON_OBJECT) {
                kind_error(d, k, "NUMANodeState", field, "map[v1.ResourceName]*state.MemoryTable");
                return;
        }
        n->types_nil = false;
        while (!failed(d) && (r = ncm__gojson_next_member(d->g, &first, &key, &klen, NULL)) > 0) {
                ncm_mem_type t = {0};
                size_t cap = n->ntypes, i;
                if (key_refused(d, key, klen, field, "key"))
                        break;
                t.name = key;
                k = ncm__gojson_peek(d->g);
                if (k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(d->g);
                        t.nil = true;
                } else if (k != NCM_GOJSON_OBJECT) {
                        kind_error(d, k, "NUMANodeState", field, "state.MemoryTable");
                } else {
                        decode_table(d, field, &t.t);
                }
                if (failed(d)) {
                        free(t.name);
                        break;
                }
                for (i = 0; i < n->ntypes; i++)
                        if (strcmp(n->types[i].name, t.name) == 0)
                                break;
                if (i < n->ntypes) {
                        /* a repeated key: Go decodes a fresh value and replaces */
                        free(n->types[i].name);
                        n->types[i] = t;
                        continue;
                }
                if (ncm__array_grow(n->types, cap, n->ntypes) < 0) {
                        free(t.name);
                        fail_oom(d);
                        break;
                }
                n->types[n->ntypes++] = t;
        }
        if (r < 0)
                fail_oom(d);
        if (n->ntypes > 1)
                qsort(n->types, n->ntypes, sizeof(*n->types), cmp_type);
}

static void decode_node(decoder *d, const char *field, ncm_mem_node *n)
{
        static const char *const fields[] = {"numberOfAssignments", "memoryMap", "cells"};
        char path[128];
        bool first = true;
        int r, f;

        while (!failed(d) && (r = ncm__ckpt_next_field(d->g, &first, fields, 3, &f, NULL)) > 0) {
                ncm_gojson_kind k = ncm__gojson_peek(d->g);
                if (f < 0) {
                        ncm__gojson_skip(d->g);
                        continue;
                }
                snprintf(path, sizeof(path), "%s.%s", field, fields[f]);
                if (f == 1) {
                        decode_memory_map(d, path, n);
                } else if (f == 2) {
                        decode_ints(d, "NUMANodeState", path, &n->cells, &n->ncells, &n->cells_nil);
                } else if (k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(d->g);
                } else if (k != NCM_GOJSON_NUMBER) {
                        kind_error(d, k, "NUMANodeState", path, "int");
                } else {
                        (void)number(d, false, "NUMANodeState", path, "int", NULL, &n->assignments);
                }
        }
        if (r < 0)
                fail_oom(d);
}

static int cmp_node(const void *a, const void *b)
{
        int x = ((const ncm_mem_node *)a)->id, y = ((const ncm_mem_node *)b)->id;
        return (x > y) - (x < y);
}

/* NUMANodeMap at the cursor into S (a repeated field merges keys, as Go does). */
static void decode_machine(decoder *d, ncm_mem_state *s)
{
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        bool first = true;
        char *key;
        size_t klen;
        int r;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
                ncm__mem_nodes_free(s->nodes, s->nnodes);
                s->nodes = NULL;
                s->nnodes = 0;
                s->nodes_nil = true;
                return;
        }
        if (k != NCM_GOJSON_OBJECT) {
                kind_error(d, k, d->top, "machineState", "state.NUMANodeMap");
                return;
        }
        s->nodes_nil = false;
        while (!failed(d) && (r = ncm__gojson_next_member(d->g, &first, &key, &klen, NULL)) > 0) {
                ncm_mem_node n = {0};
                int64_t id = 0;
                size_t cap = s->nnodes, i;
                bool ok = ncm__gojson_parse_int64(key, klen, &id);

                if (!ok || id < INT32_MIN || id > INT32_MAX) {
                        char v[96];
                        snprintf(v, sizeof(v), "number %.*s", (int)(klen > 64 ? 64 : klen), key);
                        free(key);
                        ncm__gojson_skip(d->g);
                        if (!ok) {
                                type_error(d, v, NULL, NULL, "int");
                        } else if (!d->code) {
                                d->code = ERANGE;
                                snprintf(d->msg, sizeof(d->msg),
                                         "machineState: NUMA node %" PRId64 " out of range", id);
                        }
                        break;
                }
                free(key);
                n.id = (int)id;
                k = ncm__gojson_peek(d->g);
                if (k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(d->g);
                        n.nil = true;
                        n.types_nil = n.cells_nil = true;
                } else if (k != NCM_GOJSON_OBJECT) {
                        kind_error(d, k, d->top, "machineState", "state.NUMANodeState");
                } else {
                        /* a new *NUMANodeState: absent fields stay Go's zero values (nil) */
                        n.types_nil = n.cells_nil = true;
                        decode_node(d, "machineState", &n);
                }
                if (failed(d)) {
                        ncm__mem_node_done(&n);
                        break;
                }
                for (i = 0; i < s->nnodes; i++)
                        if (s->nodes[i].id == n.id)
                                break;
                if (i < s->nnodes) {
                        ncm__mem_node_done(&s->nodes[i]);
                        s->nodes[i] = n;
                        continue;
                }
                if (ncm__array_grow(s->nodes, cap, s->nnodes) < 0) {
                        ncm__mem_node_done(&n);
                        fail_oom(d);
                        break;
                }
                s->nodes[s->nnodes++] = n;
        }
        if (r < 0)
                fail_oom(d);
        if (s->nnodes > 1)
                qsort(s->nodes, s->nnodes, sizeof(*s->nodes), cmp_node);
}

static int cmp_container(const void *a, const void *b)
{
        return strcmp(((const ncm_mem_container *)a)->name, ((const ncm_mem_container *)b)->name);
}

static int cmp_pod(const void *a, const void *b)
{
        return strcmp(((const ncm_mem_pod *)a)->uid, ((const ncm_mem_pod *)b)->uid);
}

static int cmp_pod_entry(const void *a, const void *b)
{
        return strcmp(((const ncm_mem_pod_entry *)a)->uid, ((const ncm_mem_pod_entry *)b)->uid);
}

/* map[string][]Block at the cursor, into a new pod P (members of one object). */
static void decode_pod(decoder *d, ncm_mem_pod *p)
{
        bool first = true;
        char *key;
        size_t klen;
        int r;

        while (!failed(d) && (r = ncm__gojson_next_member(d->g, &first, &key, &klen, NULL)) > 0) {
                ncm_mem_container c = {0};
                size_t cap = p->n, i;
                if (key_refused(d, key, klen, "entries", "container name"))
                        break;
                c.name = key;
                decode_blocks(d, d->top, "entries", &c.blocks, &c.n, &c.nil);
                if (failed(d)) {
                        ncm__mem_container_done(&c);
                        break;
                }
                for (i = 0; i < p->n; i++)
                        if (strcmp(p->c[i].name, c.name) == 0)
                                break;
                if (i < p->n) {
                        ncm__mem_container_done(&p->c[i]);
                        p->c[i] = c;
                        continue;
                }
                if (ncm__array_grow(p->c, cap, p->n) < 0) {
                        ncm__mem_container_done(&c);
                        fail_oom(d);
                        break;
                }
                p->c[p->n++] = c;
        }
        if (r < 0)
                fail_oom(d);
        if (p->n > 1)
                qsort(p->c, p->n, sizeof(*p->c), cmp_container);
}

static void decode_entries(decoder *d, ncm_mem_state *s)
{
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        bool first = true;
        char *key;
        size_t klen;
        int r;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
                for (size_t i = 0; i < s->npods; i++)
                        ncm__mem_pod_done(&s->pods[i]);
                free(s->pods);
                s->pods = NULL;
                s->npods = 0;
                s->pods_nil = true;
                return;
        }
        if (k != NCM_GOJSON_OBJECT) {
                kind_error(d, k, d->top, "entries", "state.ContainerMemoryAssignments");
                return;
        }
        s->pods_nil = false;
        while (!failed(d) && (r = ncm__gojson_next_member(d->g, &first, &key, &klen, NULL)) > 0) {
                ncm_mem_pod p = {0};
                size_t cap = s->npods, i;
                if (key_refused(d, key, klen, "entries", "pod UID"))
                        break;
                p.uid = key;
                k = ncm__gojson_peek(d->g);
                if (k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(d->g);
                        p.nil = true;
                } else if (k != NCM_GOJSON_OBJECT) {
                        kind_error(d, k, d->top, "entries", "map[string][]state.Block");
                } else {
                        decode_pod(d, &p);
                }
                if (failed(d)) {
                        ncm__mem_pod_done(&p);
                        break;
                }
                for (i = 0; i < s->npods; i++)
                        if (strcmp(s->pods[i].uid, p.uid) == 0)
                                break;
                if (i < s->npods) {
                        ncm__mem_pod_done(&s->pods[i]);
                        s->pods[i] = p;
                        continue;
                }
                if (ncm__array_grow(s->pods, cap, s->npods) < 0) {
                        ncm__mem_pod_done(&p);
                        fail_oom(d);
                        break;
                }
                s->pods[s->npods++] = p;
        }
        if (r < 0)
                fail_oom(d);
        if (s->npods > 1)
                qsort(s->pods, s->npods, sizeof(*s->pods), cmp_pod);
}

static void decode_pod_entries(decoder *d, ncm_mem_state *s)
{
        static const char *const fields[] = {"memoryBlocks"};
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        bool first = true;
        char *key;
        size_t klen;
        int r;

        if (k == NCM_GOJSON_NULL) {
                ncm__gojson_skip(d->g);
                for (size_t i = 0; i < s->npod_entries; i++)
                        ncm__mem_pod_entry_done(&s->pod_entries[i]);
                free(s->pod_entries);
                s->pod_entries = NULL;
                s->npod_entries = 0;
                s->pod_entries_nil = true;
                return;
        }
        if (k != NCM_GOJSON_OBJECT) {
                kind_error(d, k, d->top, "podEntries", "state.PodMemoryAssignments");
                return;
        }
        s->pod_entries_nil = false;
        while (!failed(d) && (r = ncm__gojson_next_member(d->g, &first, &key, &klen, NULL)) > 0) {
                ncm_mem_pod_entry e = {.nil = true};
                size_t cap = s->npod_entries, i;
                bool ffirst = true;
                int f;
                if (key_refused(d, key, klen, "podEntries", "pod UID"))
                        break;
                e.uid = key;
                k = ncm__gojson_peek(d->g);
                if (k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(d->g);
                } else if (k != NCM_GOJSON_OBJECT) {
                        kind_error(d, k, d->top, "podEntries", "state.PodEntry");
                } else {
                        while (!failed(d) &&
                               (r = ncm__ckpt_next_field(d->g, &ffirst, fields, 1, &f, NULL)) > 0) {
                                if (f < 0)
                                        ncm__gojson_skip(d->g);
                                else
                                        decode_blocks(d, "PodEntry", "podEntries.memoryBlocks",
                                                      &e.blocks, &e.n, &e.nil);
                        }
                        if (r < 0)
                                fail_oom(d);
                }
                if (failed(d)) {
                        ncm__mem_pod_entry_done(&e);
                        break;
                }
                for (i = 0; i < s->npod_entries; i++)
                        if (strcmp(s->pod_entries[i].uid, e.uid) == 0)
                                break;
                if (i < s->npod_entries) {
                        ncm__mem_pod_entry_done(&s->pod_entries[i]);
                        s->pod_entries[i] = e;
                        continue;
                }
                if (ncm__array_grow(s->pod_entries, cap, s->npod_entries) < 0) {
                        ncm__mem_pod_entry_done(&e);
                        fail_oom(d);
                        break;
                }
                s->pod_entries[s->npod_entries++] = e;
        }
        if (r < 0)
                fail_oom(d);
        if (s->npod_entries > 1)
                qsort(s->pod_entries, s->npod_entries, sizeof(*s->pod_entries), cmp_pod_entry);
}

/* What one decode of the top-level object found besides the state. */
typedef struct top_fields {
        uint64_t checksum;
        char *data; /* V3 */
        size_t data_len;
        uint64_t data_checksum;
} top_fields;

/*
 * Decode the struct at the cursor into S: PODS the podEntries field, V3 the data and
 * dataChecksum fields (into TOP).
 */
static void decode_struct(decoder *d, ncm_mem_state *s, bool pods, bool v3, top_fields *top)
{
        static const char *const fields[] = {"policyName",  "machineState", "entries",
                                             "checksum",    "podEntries",   "data",
                                             "dataChecksum"};
        ncm_gojson_kind k = ncm__gojson_peek(d->g);
        bool first = true;
        int r, f;

        if (k != NCM_GOJSON_OBJECT) {
                if (k == NCM_GOJSON_NULL)
                        ncm__gojson_skip(d->g);
                else
                        kind_error(d, k, NULL, NULL, d->top);
                return;
        }
        while (!failed(d) && (r = ncm__ckpt_next_field(d->g, &first, fields, 7, &f, NULL)) > 0) {
                if ((f == 4 && !pods) || (f >= 5 && !v3) || (f == 3 && !top))
                        f = -1;
                k = ncm__gojson_peek(d->g);
                if (f == 1) {
                        decode_machine(d, s);
                } else if (f == 2) {
                        decode_entries(d, s);
                } else if (f == 4) {
                        decode_pod_entries(d, s);
                } else if (f < 0 || k == NCM_GOJSON_NULL) {
                        ncm__gojson_skip(d->g);
                } else if (f == 0 || f == 5) {
                        char *str;
                        if (k != NCM_GOJSON_STRING) {
                                kind_error(d, k, d->top, fields[f], "string");
                                break;
                        }
                        if (f == 0) {
                                if (!(str = take_string(d, "policyName")))
                                        break;
                                free(s->policy);
                                s->policy = str;
                        } else {
                                size_t len = 0;
                                if (ncm__gojson_string(d->g, &str, &len, NULL) < 0) {
                                        fail_oom(d);
                                        break;
                                }
                                free(top->data);
                                top->data = str;
                                top->data_len = len;
                        }
                } else {
                        ncm_ckpt_bad bad = {0};
                        uint64_t *slot = f == 3 ? &top->checksum : &top->data_checksum;
                        int q = ncm__ckpt_checksum_field(d->g, slot, &bad);
                        if (q < 0) {
                                if (bad.kind == NCM_GOJSON_NUMBER) {
                                        char v[96];
                                        snprintf(v, sizeof(v), "number %.*s",
                                                 (int)(bad.len > 64 ? 64 : bad.len), bad.text);
                                        type_error(d, v, d->top, fields[f], "checksum.Checksum");
                                } else {
                                        kind_error(d, bad.kind, d->top, fields[f],
                                                   "checksum.Checksum");
                                }
                        }
                }
        }
        if (r < 0)
                fail_oom(d);
}

/* Go's newMemoryManagerCheckpoint*: empty (not nil) maps. */
static ncm_mem_state *fresh_state(void)
{
        return ncm_mem_state_new("");
}

typedef enum attempt_kind {
        TRY_V1_LEGACY, /* <= 1.35 and 1.37's V1: the legacy rendering only */
        TRY_V1_136,    /* 1.36's V1: the native V1 rendering, then the legacy one */
        TRY_V2_136,    /* 1.36's V2 (= MemoryManagerCheckpoint, podEntries in the sum) */
        TRY_V2_137,    /* 1.37's V2 (legacy name over the V2 struct) */
        TRY_V3,        /* 1.37's dual layout */
} attempt_kind;

typedef struct attempt {
        ncm_mem_state *s;
        int code;
        char msg[MSG_MAX];
        top_fields top;
        ncm_mem_checkpoint_info info;
} attempt;

static void attempt_done(attempt *a)
{
        a->s = ncm_mem_state_free(a->s);
        free(a->top.data);
        a->top.data = NULL;
}

static void set_corrupt(attempt *a)
{
        a->code = NCM_E_CHECKSUM;
        snprintf(a->msg, sizeof(a->msg), "checkpoint is corrupted");
}

/* Decode TEXT as the struct of KIND into A (a->code set on failure). */
static int try_decode(const char *text, size_t len, attempt_kind kind, attempt *a)
{
        static const char *const names[] = {"MemoryManagerCheckpoint", "MemoryManagerCheckpointV1",
                                            "MemoryManagerCheckpoint", "MemoryManagerCheckpointV2",
                                            "MemoryManagerCheckpoint"};
        ncm_gojson g;
        decoder d = {0};
        int r;

        *a = (attempt){0};
        a->s = fresh_state();
        if (!a->s)
                return -ENOMEM;
        r = ncm__gojson_init(&g, text, len, NULL, NULL);
        if (r < 0) {
                a->code = EINVAL;
                snprintf(a->msg, sizeof(a->msg), "%s", g.syntax);
                return 0;
        }
        d.g = &g;
        d.top = names[kind];
        if (kind == TRY_V1_LEGACY)
                d.top = "MemoryManagerCheckpointV1";
        decode_struct(&d, a->s, kind == TRY_V2_136 || kind == TRY_V2_137, kind == TRY_V3, &a->top);
        if (d.code == ENOMEM)
                return -ENOMEM;
        if (d.code) {
                a->code = d.code;
                snprintf(a->msg, sizeof(a->msg), "%s", d.msg);
        }
        return 0;
}

/* V3: the data string decoded as MemoryManagerCheckpointData into a fresh state. */
static int decode_data(attempt *a)
{
        ncm_gojson g;
        decoder d = {0};
        ncm_mem_state *s = fresh_state();
        const char *data = a->top.data ? a->top.data : "";
        int r;

        if (!s)
                return -ENOMEM;
        r = ncm__gojson_init(&g, data, a->top.data ? a->top.data_len : 0, NULL, NULL);
        if (r < 0) {
                ncm_mem_state_free(s);
                a->code = EINVAL;
                snprintf(a->msg, sizeof(a->msg),
                         "failed to deserialize memory manager checkpoint data: %s", g.syntax);
                return 0;
        }
        d.g = &g;
        d.top = "MemoryManagerCheckpointData";
        decode_struct(&d, s, true, false, NULL);
        if (d.code == ENOMEM) {
                ncm_mem_state_free(s);
                return -ENOMEM;
        }
        if (d.code) {
                ncm_mem_state_free(s);
                a->code = d.code;
                snprintf(a->msg, sizeof(a->msg),
                         "failed to deserialize memory manager checkpoint data: %.400s", d.msg);
                return 0;
        }
        ncm_mem_state_free(a->s);
        a->s = s;
        return 0;
}

/* GetCheckpoint with the struct of KIND: unmarshal, then VerifyChecksum. */
static int try_load(const char *text, size_t len, attempt_kind kind, attempt *a)
{
        uint32_t legacy = 0, v2 = 0, native = 0;
        int r = try_decode(text, len, kind, a);

        if (r < 0 || a->code)
                return r;
        if (kind == TRY_V3) {
                r = decode_data(a);
                if (r < 0 || a->code)
                        return r;
                a->info.version = NCM_MEM_CHECKPOINT_V3;
                a->info.checksum = a->top.checksum;
                a->info.data_checksum = a->top.data_checksum;
                a->info.data_sum = string_sum(a->top.data ? a->top.data : "",
                                              a->top.data ? a->top.data_len : 0);
                a->info.verified = a->info.data_sum == a->top.data_checksum;
                a->info.has_pod_entries = a->s->npod_entries > 0;
                if (!a->info.verified)
                        set_corrupt(a);
                return 0;
        }
        r = ncm_mem_checkpoint_sums(a->s, &legacy, &v2, NULL);
        if (r < 0)
                return r;
        a->info.checksum = a->top.checksum;
        a->info.legacy_sum = legacy;
        a->info.v2_sum = v2;
        a->info.has_pod_entries = a->s->npod_entries > 0;
        switch (kind) {
        case TRY_V2_136:
        case TRY_V2_137:
                a->info.version = NCM_MEM_CHECKPOINT_V2;
                a->info.verified = a->top.checksum == v2;
                break;
        case TRY_V1_136:
                a->info.version = NCM_MEM_CHECKPOINT_V1;
                r = spew_sum(a->s, "MemoryManagerCheckpointV1", false, &native);
                if (r < 0)
                        return r;
                a->info.verified = a->top.checksum == 0 || a->top.checksum == legacy ||
                                   a->top.checksum == native;
                break;
        default:
                a->info.version = NCM_MEM_CHECKPOINT_V1;
                a->info.verified = a->top.checksum == 0 || a->top.checksum == legacy;
                break;
        }
        if (!a->info.verified)
                set_corrupt(a);
        return 0;
}

int ncm_mem_checkpoint_probe(const char *text, size_t len, const char *name, ncm_error *err)
{
        static const char *const fields[] = {"machineState"};
        return ncm__ckpt_probe(text, len, name, CKPT_MAX, fields, 1, err);
}

int ncm_mem_checkpoint_parse(const char *text, size_t len, const char *name, ncm_kubelet_version v,
                             const char *policy, bool pod_level, ncm_mem_state **ret,
                             ncm_mem_checkpoint_info *info, ncm_error *err)
{
        ncm_mem_checkpoint_version gen = ncm_mem_checkpoint_version_of(v);
        attempt a = {0};
        int r;

        if (!name)
                name = NCM_MEM_CHECKPOINT_NAME;
        if (len > CKPT_MAX)
                return ncm_error_set(err, EFBIG, "%s: checkpoint larger than %u bytes", name,
                                     CKPT_MAX);
        if (gen == NCM_MEM_CHECKPOINT_V3) {
                r = try_load(text, len, TRY_V3, &a);
                if (r < 0)
                        goto oom;
                if (a.code && (a.top.data || a.top.data_checksum != 0)) {
                        /* the file is a V3 one: its failure is final */
                        char msg[MSG_MAX];
                        snprintf(msg, sizeof(msg), "%s", a.msg);
                        snprintf(a.msg, sizeof(a.msg), "could not load v3 checkpoint: %.450s", msg);
                } else if (a.code) {
                        attempt_done(&a);
                        r = try_load(text, len, TRY_V2_137, &a);
                        if (r < 0)
                                goto oom;
                        if (a.code) {
                                attempt_done(&a);
                                r = try_load(text, len, TRY_V1_LEGACY, &a);
                                if (r < 0)
                                        goto oom;
                        }
                }
        } else if (gen == NCM_MEM_CHECKPOINT_V2) {
                r = try_load(text, len, TRY_V2_136, &a);
                if (r < 0)
                        goto oom;
                if (a.code) {
                        attempt_done(&a);
                        r = try_load(text, len, TRY_V1_136, &a);
                        if (r < 0)
                                goto oom;
                }
        } else {
                r = try_load(text, len, TRY_V1_LEGACY, &a);
                if (r < 0)
                        goto oom;
        }
        if (a.code) {
                int code = a.code;
                ncm_error_set(err, code, "%s: %s", name, a.msg);
                if (info)
                        *info = a.info;
                attempt_done(&a);
                return -code;
        }
        if (!pod_level) {
                /* without the gate the kubelet restores no pod-level assignments */
                for (size_t i = 0; i < a.s->npod_entries; i++)
                        ncm__mem_pod_entry_done(&a.s->pod_entries[i]);
                a.s->npod_entries = 0;
        }
        if (policy && strcmp(policy, a.s->policy) != 0) {
                ncm_error_set(err, NCM_E_INVALID_STATE,
                              "%s: [memorymanager] configured policy \"%s\" differs from state "
                              "checkpoint policy \"%s\"",
                              name, policy, a.s->policy);
                if (info)
                        *info = a.info;
                attempt_done(&a);
                return -NCM_E_INVALID_STATE;
        }
        r = ncm__mem_promised_parse(text, len, name, a.s, err);
        if (r < 0) {
                if (info)
                        *info = a.info;
                attempt_done(&a);
                return r;
        }
        if (info)
                *info = a.info;
        *ret = NCM_TAKE_PTR(a.s);
        attempt_done(&a);
        return 0;
oom:
        attempt_done(&a);
        return ncm_error_set(err, ENOMEM, "out of memory");
}

int ncm_mem_checkpoint_decode(const char *text, size_t len, const char *name, ncm_mem_state **ret,
                              ncm_mem_checkpoint_info *info, ncm_error *err)
{
        attempt a = {0};
        uint32_t legacy = 0, v2 = 0;
        int r;

        if (!name)
                name = NCM_MEM_CHECKPOINT_NAME;
        if (len > CKPT_MAX)
                return ncm_error_set(err, EFBIG, "%s: checkpoint larger than %u bytes", name,
                                     CKPT_MAX);
        r = try_decode(text, len, TRY_V3, &a);
        if (r >= 0 && !a.code && (a.top.data || a.top.data_checksum)) {
                r = decode_data(&a);
                a.info.version = NCM_MEM_CHECKPOINT_V3;
        } else if (r >= 0) {
                attempt_done(&a);
                r = try_decode(text, len, TRY_V2_137, &a);
                a.info.version = a.s && a.s->npod_entries ? NCM_MEM_CHECKPOINT_V2
                                                          : NCM_MEM_CHECKPOINT_V1;
                if (r >= 0 && a.code) {
                        /* a V1 file read as V1, as every reader falls back to: a podEntries
                         * member V1 does not have must not stop what verified reading accepts */
                        attempt_done(&a);
                        r = try_decode(text, len, TRY_V1_LEGACY, &a);
                        a.info.version = NCM_MEM_CHECKPOINT_V1;
                }
        }
        if (r < 0) {
                attempt_done(&a);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        if (a.code) {
                int code = a.code;
                ncm_error_set(err, code, "%s: %s", name, a.msg);
                attempt_done(&a);
                return -code;
        }
        if (ncm_mem_checkpoint_sums(a.s, &legacy, &v2, NULL) < 0) {
                attempt_done(&a);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        a.info.checksum = a.top.checksum;
        a.info.data_checksum = a.top.data_checksum;
        a.info.legacy_sum = legacy;
        a.info.v2_sum = v2;
        a.info.has_pod_entries = a.s->npod_entries > 0;
        if (a.info.version == NCM_MEM_CHECKPOINT_V3) {
                a.info.data_sum = string_sum(a.top.data ? a.top.data : "",
                                             a.top.data ? a.top.data_len : 0);
                a.info.verified = a.info.data_sum == a.top.data_checksum;
        } else {
                a.info.verified = a.top.checksum == 0 || a.top.checksum == legacy ||
                                  a.top.checksum == v2;
        }
        if (info)
                *info = a.info;
        *ret = NCM_TAKE_PTR(a.s);
        attempt_done(&a);
        return 0;
}
