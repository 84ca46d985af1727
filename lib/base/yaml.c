/* SPDX-License-Identifier: Apache-2.0 */
/*
 * YAML into the json-c tree that lib/base/json.h hands out, as sigs.k8s.io/yaml's YAMLToJSON
 * reads it (go-yaml v2 underneath), because that is how the kubelet and the API server read
 * every YAML file nodecm takes from them:
 *
 *  - plain scalars are typed by go-yaml v2's resolver, anything quoted is a string;
 *  - anchors and aliases are resolved: an alias shares its anchor's subtree (json_get), which
 *    is safe because the tree is read-only once built, and costs no copy;
 *  - a merge key ("<<", plain) copies the members of a mapping, or of each mapping of a
 *    sequence, into the mapping it is in, in go-yaml v2's order: the members are set when the
 *    key is met, so a key given before it is overwritten and one given after it wins, and of a
 *    sequence the earlier mappings win (they are applied last);
 *  - a repeated key keeps the last value (yaml.Unmarshal's map decoding); with an info the
 *    repeat is reported, because go-yaml's strict mode (UnmarshalStrict, the kubelet's first
 *    try) refuses it ("key ... already set in map") and merges that overwrite count as well.
 *
 * Aliasing is bounded as go-yaml v2 bounds it (decoder.unmarshal): every node decoded counts,
 * the nodes an alias stands for count again as aliased, and a document with more than 100
 * aliased among more than 1000 decoded, at a ratio above allowedAliasRatio (99% up to 400,000
 * nodes, falling to 10% at 4,000,000), is refused with go-yaml's "document contains excessive
 * aliasing". The counts are checked after each alias, where go-yaml's ratio peaks, so a
 * billion-laughs document stops after a few thousand nodes and nothing ever expands it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <yaml.h>

#include <nodecm/buf.h>
#include "base/array.h"
#include "base/json.h"

static bool str_in(const char *s, const char *const *list)
{
        for (; *list; list++)
                if (strcmp(s, *list) == 0)
                        return true;
        return false;
}

static bool is_decimal_int(const char *s)
{
        if (*s == '+' || *s == '-')
                s++;
        if (!*s)
                return false;
        for (; *s; s++)
                if ((*s < '0' || *s > '9') && *s != '_')
                        return false;
        return true;
}

static bool is_float(const char *s)
{
        bool digits = false;
        if (*s == '+' || *s == '-')
                s++;
        while (*s >= '0' && *s <= '9')
                s++, digits = true;
        if (*s == '.') {
                s++;
                while (*s >= '0' && *s <= '9')
                        s++, digits = true;
        }
        if (!digits)
                return false;
        if (*s == 'e' || *s == 'E') {
                s++;
                if (*s == '+' || *s == '-')
                        s++;
                if (*s < '0' || *s > '9')
                        return false;
                while (*s >= '0' && *s <= '9')
                        s++;
        }
        return *s == '\0';
}

/* A plain (unquoted, untagged) scalar, typed the way go-yaml v2 resolves it. */
static json_object *resolve_plain(const char *s)
{
        static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
        static const char *const trues[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                            "True", "TRUE", "on",  "On",  "ON",  NULL};
        static const char *const falses[] = {"n",     "N",     "no",  "No",  "NO",  "false",
                                             "False", "FALSE", "off", "Off", "OFF", NULL};
        char digits[64];
        size_t n = 0;

        if (str_in(s, nulls))
                return NULL;
        if (str_in(s, trues))
                return json_object_new_boolean(1);
        if (str_in(s, falses))
                return json_object_new_boolean(0);
        if (is_decimal_int(s) && strlen(s) < sizeof(digits)) {
                long long v;
                char *end;
                for (const char *p = s; *p; p++)
                        if (*p != '_')
                                digits[n++] = *p;
                digits[n] = '\0';
                errno = 0;
                v = strtoll(digits, &end, 10);
                if (errno == 0 && *end == '\0')
                        return json_object_new_int64(v);
                return json_object_new_double_s(strtod(digits, NULL), digits);
        }
        if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b')) && s[2]) {
                int base = s[1] == 'x' ? 16 : s[1] == 'o' ? 8 : 2;
                char *end;
                long long v;
                errno = 0;
                v = strtoll(s + 2, &end, base);
                if (errno == 0 && *end == '\0')
                        return json_object_new_int64(v);
        }
        if (is_float(s))
                return json_object_new_double_s(strtod(s, NULL), s);
        return json_object_new_string(s);
}

/* go-yaml v2's alias_ratio_range_low / _high. */
#define ALIAS_RANGE_LOW 400000.0
#define ALIAS_RANGE_HIGH 4000000.0

/* allowedAliasRatio (go-yaml v2 decode.go). */
static double allowed_alias_ratio(uint64_t decodes)
{
        if ((double)decodes <= ALIAS_RANGE_LOW)
                return 0.99;
        if ((double)decodes >= ALIAS_RANGE_HIGH)
                return 0.10;
        return 0.99 -
               0.89 * (((double)decodes - ALIAS_RANGE_LOW) / (ALIAS_RANGE_HIGH - ALIAS_RANGE_LOW));
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

typedef struct anchor {
        char *name;
        json_object *obj; /* a reference of ours (NULL for a null scalar) */
        uint64_t size;    /* go-yaml decodes of its node, aliases inside expanded */
        bool done;        /* its node is complete (an alias to it inside it recurses) */
} anchor;

typedef struct frame {
        json_object *node; /* the mapping or sequence being filled */
        bool merge;        /* the value of a merge key: owned here, merged into the parent */
        char *name;        /* its path component ("key" or "[3]"), for repeated-key reports */
        char *key;         /* a mapping's pending key, or NULL */
        bool merge_key;    /* ... and it is "<<" */
        ssize_t anchor;    /* index of the anchor it defines, or -1 */
        uint64_t size;     /* go-yaml decodes so far: itself, keys, values */
} frame;

typedef struct ybuild {
        const char *name;
        unsigned flags;
        ncm_json_info *info;
        ncm_error *err;
        frame stack[NCM_JSON_MAX_DEPTH];
        int depth;
        json_object *root;
        bool have_root;
        uint64_t root_size;
        anchor *anchors;
        size_t n_anchors, cap_anchors;
        uint64_t decodes, aliased;
        /* streaming (ncm__yaml_parse_stream): the sequence under the root's key stream_key */
        const char *stream_key;
        ncm__yaml_start_fn start_fn;
        ncm__yaml_item_fn item_fn;
        void *item_data;
        json_object *stream_seq; /* the one streamed (a reference), or NULL */
        unsigned n_stream_seqs;  /* sequences met under that key (a repeat is not streamed) */
        bool stop;               /* item_fn asked to stop */
} ybuild;

static int oom(ybuild *b)
{
        return ncm_error_set(b->err, ENOMEM, "%s: out of memory", b->name);
}

static int fail_at(ybuild *b, const yaml_mark_t *m, const char *fmt, ...) NCM_PRINTF(3, 4);
static int fail_at(ybuild *b, const yaml_mark_t *m, const char *fmt, ...)
{
        char what[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return ncm_error_set(b->err, EINVAL, "%s:%zu:%zu: invalid YAML: %s", b->name, m->line + 1,
                             m->column + 1, what);
}

static int parser_error(ybuild *b, const yaml_parser_t *p)
{
        const char *what = p->problem ? p->problem : "invalid YAML";
        if (p->context)
                return fail_at(b, &p->problem_mark, "%s %s", what, p->context);
        return fail_at(b, &p->problem_mark, "%s", what);
}

/* The latest anchor named NAME (a redefinition replaces it), or -1. */
static ssize_t anchor_find(const ybuild *b, const char *name)
{
        for (size_t i = b->n_anchors; i > 0; i--)
                if (strcmp(b->anchors[i - 1].name, name) == 0)
                        return (ssize_t)(i - 1);
        return -1;
}

/* Define anchor NAME for OBJ (borrowed: a reference is taken). Its index, or -ENOMEM. */
static ssize_t anchor_add(ybuild *b, const char *name, json_object *obj)
{
        anchor *a;

        if (ncm__array_grow(b->anchors, b->cap_anchors, b->n_anchors) < 0)
                return -ENOMEM;
        a = &b->anchors[b->n_anchors];
        a->name = strdup(name);
        if (!a->name)
                return -ENOMEM;
        a->obj = obj ? json_object_get(obj) : NULL;
        a->size = 0;
        a->done = false;
        return (ssize_t)b->n_anchors++;
}

/* "a.b[2].c": the path of member KEY (NULL: none) below the first DEPTH frames. */
static char *path_of(const ybuild *b, int depth, const char *key)
{
        ncm_buf p = NCM_BUF_INIT;

        for (int i = 0; i < depth; i++) {
                const char *n = b->stack[i].name;
                if (!n || !n[0])
                        continue;
                if (p.len && n[0] != '[')
                        ncm_buf_putc(&p, '.');
                ncm_buf_puts(&p, n);
        }
        if (key) {
                if (p.len)
                        ncm_buf_putc(&p, '.');
                ncm_buf_puts(&p, key);
        }
        if (ncm_buf_failed(&p)) {
                ncm_buf_done(&p);
                return NULL;
        }
        return p.data ? ncm_buf_steal(&p) : strdup("");
}

static int report_dup(ybuild *b, int depth, const char *key, size_t line)
{
        ncm_json_info *in = b->info;

        if (!in)
                return 0;
        if (ncm__array_grow(in->dups, in->cap_dups, in->n_dups) < 0)
                return oom(b);
        in->dups[in->n_dups].path = path_of(b, depth + 1, key);
        if (!in->dups[in->n_dups].path)
                return oom(b);
        in->dups[in->n_dups++].line = line;
        return 0;
}

/* Set KEY of the mapping of frame DEPTH to VAL (taken), reporting a repeat. */
static int set_key(ybuild *b, int depth, const char *key, json_object *val, size_t line)
{
        json_object *m = b->stack[depth].node;

        if (json_object_object_get_ex(m, key, NULL) && report_dup(b, depth, key, line) < 0) {
                json_object_put(val);
                return -ENOMEM;
        }
        if (json_object_object_add(m, key, val) < 0) {
                json_object_put(val);
                return oom(b);
        }
        return 0;
}

/* Merge the members of SRC (a mapping) into the mapping of frame DEPTH. */
static int merge_map(ybuild *b, int depth, json_object *src, const yaml_mark_t *m)
{
        if (!src || !json_object_is_type(src, json_type_object))
                return fail_at(b, m, "map merge requires map or sequence of maps as the value");
        json_object_object_foreach(src, k, v)
        {
                int r = set_key(b, depth, k, v ? json_object_get(v) : NULL, m->line + 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Merge SRC, the value of a merge key, into frame DEPTH: a mapping, or a sequence of them. */
static int merge_value(ybuild *b, int depth, json_object *src, const yaml_mark_t *m)
{
        if (src && json_object_is_type(src, json_type_array)) {
                /* earlier mappings take precedence: apply them last */
                for (size_t i = json_object_array_length(src); i > 0; i--) {
                        int r = merge_map(b, depth, json_object_array_get_idx(src, i - 1), m);
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        return merge_map(b, depth, src, m);
}

/*
 * Put a complete value CHILD (taken) where it belongs: the root, the next element of a
 * sequence, the key of a mapping (KEY_TEXT, its scalar text; NULL for a collection), or its
 * pending key's value, merged when that key is "<<".
 */
static int place(ybuild *b, json_object *child, const char *key_text, const yaml_mark_t *m)
{
        frame *top;
        int r;

        if (b->depth == 0) {
                b->root = child;
                b->have_root = true;
                return 0;
        }
        top = &b->stack[b->depth - 1];
        if (json_object_is_type(top->node, json_type_array)) {
                if (json_object_array_add(top->node, child) < 0) {
                        json_object_put(child);
                        return oom(b);
                }
                return 0;
        }
        if (!top->key) {
                json_object_put(child);
                if (!key_text)
                        return fail_at(b, m, "mapping keys must be scalars");
                top->key = strdup(key_text);
                if (!top->key)
                        return oom(b);
                top->merge_key = false;
                return 0;
        }
        if (top->merge_key) {
                r = merge_value(b, b->depth - 1, child, m);
                json_object_put(child);
        } else {
                r = set_key(b, b->depth - 1, top->key, child, m->line + 1);
        }
        free(top->key);
        top->key = NULL;
        top->merge_key = false;
        return r;
}

/* Count SIZE decodes of a node that is not a collection's start (its parent's, or the root's). */
static void count(ybuild *b, uint64_t size)
{
        b->decodes = add_sat(b->decodes, size);
        if (b->depth > 0)
                b->stack[b->depth - 1].size = add_sat(b->stack[b->depth - 1].size, size);
        else
                b->root_size = add_sat(b->root_size, size);
}

/*
 * The element just completed in the streamed sequence goes to the caller and out of the tree
 * (its slot stays, as null, so that later elements keep their indexes in paths).
 */
static int stream_item(ybuild *b)
{
        size_t i;
        int r;

        if (!b->stream_seq || b->depth != 2 || b->stack[1].node != b->stream_seq)
                return 0;
        i = json_object_array_length(b->stream_seq) - 1;
        r = b->item_fn(json_object_array_get_idx(b->stream_seq, i), i, b->item_data, b->err);
        if (r > 0)
                b->stop = true;
        if (json_object_array_put_idx(b->stream_seq, i, NULL) < 0)
                return oom(b);
        return r < 0 ? r : 0;
}

static int on_scalar(ybuild *b, const yaml_event_t *ev)
{
        const char *v = (const char *)ev->data.scalar.value;
        bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                     ev->data.scalar.plain_implicit;
        frame *top = b->depth ? &b->stack[b->depth - 1] : NULL;
        bool is_key = top && json_object_is_type(top->node, json_type_object) && !top->key;
        json_object *o;
        const char *key_text = v;
        int r;

        if (strlen(v) != ev->data.scalar.length)
                return fail_at(b, &ev->start_mark, "NUL in scalar");
        count(b, 1);
        o = plain ? resolve_plain(v) : json_object_new_string(v);
        if (!o &&
            !(plain && str_in(v, (const char *const[]){"", "~", "null", "Null", "NULL", NULL})))
                return oom(b);
        if (ev->data.scalar.anchor) {
                ssize_t a = anchor_add(b, (const char *)ev->data.scalar.anchor, o);
                if (a < 0) {
                        json_object_put(o);
                        return oom(b);
                }
                b->anchors[a].size = 1;
                b->anchors[a].done = true;
        }
        /* a resolved key is written as YAMLToJSON writes it ("yes" -> "true", 0x10 -> 16);
         * it has no way to write a null one */
        if (is_key && plain && o)
                key_text = json_object_get_string(o);
        else if (is_key && plain)
                return fail_at(b, &ev->start_mark, "unsupported map key of type: <nil>");
        if (is_key) {
                r = place(b, o ? json_object_get(o) : NULL, key_text, &ev->start_mark);
                json_object_put(o);
                if (r >= 0 && plain && strcmp(v, "<<") == 0)
                        top->merge_key = true;
                return r;
        }
        r = place(b, o, NULL, &ev->start_mark);
        return r < 0 ? r : stream_item(b);
}

static int on_alias(ybuild *b, const yaml_event_t *ev)
{
        const char *name = (const char *)ev->data.alias.anchor;
        frame *top = b->depth ? &b->stack[b->depth - 1] : NULL;
        ssize_t i = anchor_find(b, name);
        const anchor *a;
        int r;

        if (i < 0)
                return fail_at(b, &ev->start_mark, "unknown anchor '%s' referenced", name);
        a = &b->anchors[i];
        if (!a->done)
                return fail_at(b, &ev->start_mark, "anchor '%s' value contains itself", name);
        count(b, add_sat(1, a->size));
        b->aliased = add_sat(b->aliased, a->size);
        if (b->info)
                b->info->aliased = b->aliased;
        if (b->aliased > 100 && b->decodes > 1000 &&
            (double)b->aliased / (double)b->decodes > allowed_alias_ratio(b->decodes))
                return fail_at(b, &ev->start_mark,
                               "document contains excessive aliasing (%llu of %llu nodes come "
                               "from aliases)",
                               (unsigned long long)b->aliased, (unsigned long long)b->decodes);
        if (top && json_object_is_type(top->node, json_type_object) && !top->key) {
                if (a->obj && (json_object_is_type(a->obj, json_type_object) ||
                               json_object_is_type(a->obj, json_type_array)))
                        return fail_at(b, &ev->start_mark, "mapping keys must be scalars");
                return place(b, NULL, a->obj ? json_object_get_string(a->obj) : "null",
                             &ev->start_mark);
        }
        r = place(b, a->obj ? json_object_get(a->obj) : NULL, NULL, &ev->start_mark);
        return r < 0 ? r : stream_item(b);
}

static int on_start(ybuild *b, const yaml_event_t *ev)
{
        bool seq = ev->type == YAML_SEQUENCE_START_EVENT;
        const yaml_char_t *anchor_name =
                        seq ? ev->data.sequence_start.anchor : ev->data.mapping_start.anchor;
        frame *top = b->depth ? &b->stack[b->depth - 1] : NULL;
        json_object *o = seq ? json_object_new_array() : json_object_new_object();
        bool merge = top && json_object_is_type(top->node, json_type_object) && top->key &&
                     top->merge_key;
        char *name = NULL;
        frame *f;
        int r;

        if (!o)
                return oom(b);
        if (b->depth == NCM_JSON_MAX_DEPTH) {
                json_object_put(o);
                return fail_at(b, &ev->start_mark, "nesting deeper than %d", NCM_JSON_MAX_DEPTH);
        }
        if (top && json_object_is_type(top->node, json_type_object) && !top->key) {
                json_object_put(o);
                return fail_at(b, &ev->start_mark, "mapping keys must be scalars");
        }
        if (top && json_object_is_type(top->node, json_type_array)) {
                char idx[32];
                snprintf(idx, sizeof(idx), "[%zu]", json_object_array_length(top->node));
                name = strdup(idx);
        } else {
                name = strdup(top && !merge ? top->key : "");
        }
        if (!name) {
                json_object_put(o);
                return oom(b);
        }
        /* the parent (or the root) holds it; the frame borrows it, except a merge's value */
        if (!merge) {
                r = place(b, json_object_get(o), NULL, &ev->start_mark);
                if (r < 0) {
                        json_object_put(o);
                        free(name);
                        return r;
                }
                json_object_put(o);
        }
        f = &b->stack[b->depth++];
        *f = (frame){.node = o, .merge = merge, .name = name, .anchor = -1, .size = 1};
        /* only a plain sequence straight under the root's key: an anchored one could be
         * aliased later, whole, and a repeated key means the last one counts */
        if (b->stream_key && seq && b->depth == 2 && !merge && !anchor_name &&
            json_object_is_type(b->stack[0].node, json_type_object) &&
            strcmp(name, b->stream_key) == 0 && b->n_stream_seqs++ == 0) {
                b->stream_seq = json_object_get(o);
                if (b->start_fn && (r = b->start_fn(b->stack[0].node, b->item_data)) < 0)
                        return r;
        }
        if (anchor_name) {
                f->anchor = anchor_add(b, (const char *)anchor_name, o);
                if (f->anchor < 0)
                        return oom(b);
        }
        b->decodes = add_sat(b->decodes, 1);
        return 0;
}

static void frame_done(frame *f)
{
        if (f->merge)
                json_object_put(f->node);
        free(f->name);
        free(f->key);
        *f = (frame){0};
}

static int on_end(ybuild *b, const yaml_event_t *ev)
{
        frame f = b->stack[--b->depth];
        int r = 0;

        b->stack[b->depth] = (frame){0};
        if (f.anchor >= 0) {
                b->anchors[f.anchor].size = f.size;
                b->anchors[f.anchor].done = true;
        }
        if (b->depth > 0)
                b->stack[b->depth - 1].size = add_sat(b->stack[b->depth - 1].size, f.size);
        else
                b->root_size = add_sat(b->root_size, f.size);
        if (f.merge) {
                frame *top = &b->stack[b->depth - 1];
                r = merge_value(b, b->depth - 1, f.node, &ev->start_mark);
                free(top->key);
                top->key = NULL;
                top->merge_key = false;
        }
        frame_done(&f);
        return r < 0 ? r : stream_item(b);
}

static void build_done(ybuild *b)
{
        while (b->depth > 0)
                frame_done(&b->stack[--b->depth]);
        for (size_t i = 0; i < b->n_anchors; i++) {
                free(b->anchors[i].name);
                if (b->anchors[i].obj)
                        json_object_put(b->anchors[i].obj);
        }
        free(b->anchors);
        if (b->stream_seq)
                json_object_put(b->stream_seq);
}

static int yaml_build(ybuild *bp, const char *text, size_t len, json_object **ret)
{
        ybuild b = *bp;
        const char *name = b.name;
        unsigned flags = b.flags;
        ncm_json_info *info = b.info;
        ncm_error *err = b.err;
        yaml_parser_t parser;
        yaml_event_t ev;
        int docs = 0, r = 0;
        bool done = false;

        if (!yaml_parser_initialize(&parser))
                return ncm_error_set(err, ENOMEM, "%s: out of memory", name);
        if (info)
                info->yaml = true;
        yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
        while (!done && r >= 0 && !b.stop) {
                if (!yaml_parser_parse(&parser, &ev)) {
                        r = parser_error(&b, &parser);
                        break;
                }
                switch (ev.type) {
                case YAML_STREAM_END_EVENT:
                        done = true;
                        break;
                case YAML_DOCUMENT_START_EVENT:
                        if (++docs > 1)
                                r = fail_at(&b, &ev.start_mark, "more than one document");
                        else
                                b.decodes = add_sat(b.decodes, 1);
                        break;
                case YAML_DOCUMENT_END_EVENT:
                        if (!(flags & NCM_JSON_FIRST_DOCUMENT))
                                break;
                        /* go-yaml's Unmarshal decodes the first document and never looks
                         * further: whatever follows, even broken, is ignored */
                        done = true;
                        yaml_event_delete(&ev);
                        if (!yaml_parser_parse(&parser, &ev)) {
                                if (info) {
                                        info->more = true;
                                        info->more_line = parser.problem_mark.line + 1;
                                }
                                yaml_parser_delete(&parser);
                                goto out;
                        }
                        if (ev.type != YAML_STREAM_END_EVENT && info) {
                                info->more = true;
                                info->more_line = ev.start_mark.line + 1;
                        }
                        break;
                case YAML_ALIAS_EVENT:
                        r = on_alias(&b, &ev);
                        break;
                case YAML_SCALAR_EVENT:
                        r = on_scalar(&b, &ev);
                        break;
                case YAML_SEQUENCE_START_EVENT:
                case YAML_MAPPING_START_EVENT:
                        r = on_start(&b, &ev);
                        break;
                case YAML_SEQUENCE_END_EVENT:
                case YAML_MAPPING_END_EVENT:
                        r = on_end(&b, &ev);
                        break;
                default:
                        break;
                }
                yaml_event_delete(&ev);
        }
        yaml_parser_delete(&parser);
out:
        /* streamed: the root holds the very sequence whose elements went to the caller */
        bp->n_stream_seqs = b.stream_seq && b.have_root && !b.stop &&
                                                            ncm__json_get(b.root, b.stream_key) ==
                                                                            b.stream_seq
                                            ? 1
                                            : 0;
        build_done(&b);
        if (r < 0 || b.stop) {
                if (b.root)
                        json_object_put(b.root);
                *ret = NULL;
                return r;
        }
        *ret = b.root;
        return 0;
}

int ncm__yaml_parse_ex(const char *text, size_t len, const char *name, unsigned flags,
                       json_object **ret, ncm_json_info *info, ncm_error *err)
{
        ybuild b = {.name = name, .flags = flags, .info = info, .err = err};
        return yaml_build(&b, text, len, ret);
}

int ncm__yaml_parse_stream(const char *text, size_t len, const char *name, const char *key,
                           ncm__yaml_start_fn start, ncm__yaml_item_fn fn, void *data,
                           json_object **ret, bool *streamed, ncm_error *err)
{
        ybuild b = {.name = name,
                    .err = err,
                    .stream_key = key,
                    .start_fn = start,
                    .item_fn = fn,
                    .item_data = data};
        int r = yaml_build(&b, text, len, ret);
        *streamed = b.n_stream_seqs == 1;
        return r;
}

int ncm__yaml_parse(const char *text, size_t len, const char *name, json_object **ret,
                    ncm_error *err)
{
        return ncm__yaml_parse_ex(text, len, name, 0, ret, NULL, err);
}
