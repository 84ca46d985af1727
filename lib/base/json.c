/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include <nodecm/fs.h>
#include "base/array.h"
#include "base/gojson.h"
#include "base/json.h"

void ncm__text_line_col(const char *text, size_t off, size_t *line, size_t *col)
{
        *line = 1;
        *col = 1;
        for (size_t i = 0; i < off; i++) {
                if (text[i] == '\n') {
                        (*line)++;
                        *col = 1;
                } else {
                        (*col)++;
                }
        }
}

int ncm__json_parse(const char *text, size_t len, const char *name, json_object **ret,
                    ncm_error *err)
{
        json_tokener *tok;
        json_object *obj;
        enum json_tokener_error jerr;
        size_t end, line, col;

        if (len > INT32_MAX)
                return ncm_error_set(err, EFBIG, "%s: document too large", name);
        if (memchr(text, '\0', len))
                return ncm_error_set(err, EINVAL, "%s: NUL byte in JSON text", name);
        tok = json_tokener_new_ex(NCM_JSON_MAX_DEPTH);
        if (!tok)
                return ncm_error_set(err, ENOMEM, "%s: out of memory", name);
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        obj = json_tokener_parse_ex(tok, text, (int)len);
        jerr = json_tokener_get_error(tok);
        end = json_tokener_get_parse_end(tok);
        if (jerr == json_tokener_continue) {
                /* A bare top-level literal ("null", "5") only ends when json-c sees a
                 * terminator; hand it the NUL it would find in a C string. */
                obj = json_tokener_parse_ex(tok, "", 1);
                jerr = json_tokener_get_error(tok);
                end = len;
        }
        json_tokener_free(tok);
        if (jerr == json_tokener_continue || jerr == json_tokener_error_parse_eof) {
                ncm__text_line_col(text, len, &line, &col);
                return ncm_error_set(err, EINVAL, "%s:%zu:%zu: unexpected end of JSON input", name,
                                     line, col);
        }
        if (jerr != json_tokener_success) {
                ncm__text_line_col(text, end < len ? end : len, &line, &col);
                return ncm_error_set(err, EINVAL, "%s:%zu:%zu: invalid JSON: %s", name, line, col,
                                     json_tokener_error_desc(jerr));
        }
        for (size_t i = end; i < len; i++) {
                if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r') {
                        json_object_put(obj);
                        ncm__text_line_col(text, i, &line, &col);
                        return ncm_error_set(
                                        err, EINVAL,
                                        "%s:%zu:%zu: invalid JSON: data after the top-level value",
                                        name, line, col);
                }
        }
        *ret = obj;
        return 0;
}

void ncm__json_info_done(ncm_json_info *info)
{
        for (size_t i = 0; i < info->n_dups; i++)
                free(info->dups[i].path);
        free(info->dups);
        *info = (ncm_json_info){0};
}

/* --- JSON as Go decodes it into structs and maps (NCM_JSON_GO) --- */

typedef struct gobuild {
        ncm_gojson g;
        ncm_json_info *info;
        ncm_error *err;
        ncm_buf path; /* the path of the value being read */
} gobuild;

static int go_oom(gobuild *b)
{
        return ncm_error_set(b->err, ENOMEM, "%s: out of memory", b->g.name);
}

static int go_fail(gobuild *b, size_t pos, const char *what)
{
        size_t line, col;
        ncm__text_line_col(b->g.text, pos, &line, &col);
        return ncm_error_set(b->err, EINVAL, "%s:%zu:%zu: invalid JSON: %s", b->g.name, line, col,
                             what);
}

/*
 * What decoding LATER over the value EARLIER leaves (both taken), as encoding/json does for a
 * repeated key: objects merge member by member (a map keeps its entries, a struct its fields),
 * arrays element by element up to the later length, anything else is replaced.
 */
static json_object *go_merge(json_object *earlier, json_object *later)
{
        if (earlier && later && json_object_is_type(earlier, json_type_object) &&
            json_object_is_type(later, json_type_object)) {
                json_object_object_foreach(later, k, v)
                {
                        json_object *e = NULL;
                        if (json_object_object_get_ex(earlier, k, &e) && e)
                                v = go_merge(json_object_get(e), json_object_get(v));
                        else if (v)
                                json_object_get(v);
                        json_object_object_add(earlier, k, v);
                }
                json_object_put(later);
                return earlier;
        }
        if (earlier && later && json_object_is_type(earlier, json_type_array) &&
            json_object_is_type(later, json_type_array)) {
                size_t n = json_object_array_length(earlier);
                for (size_t i = 0; i < json_object_array_length(later) && i < n; i++) {
                        json_object *e = json_object_array_get_idx(earlier, i);
                        json_object *l = json_object_array_get_idx(later, i);
                        json_object_array_put_idx(later, i,
                                                  go_merge(e ? json_object_get(e) : NULL,
                                                           l ? json_object_get(l) : NULL));
                }
        }
        if (earlier)
                json_object_put(earlier);
        return later;
}

static int go_value(gobuild *b, int depth, json_object **ret);

static int go_object(gobuild *b, int depth, json_object **ret)
{
        json_object *o = json_object_new_object();
        size_t plen = b->path.len;
        bool first = true;
        int r;

        if (!o)
                return go_oom(b);
        for (;;) {
                char *key = NULL;
                size_t klen = 0, at;
                json_object *v = NULL, *e = NULL;
                r = ncm__gojson_next_member(&b->g, &first, &key, &klen, b->err);
                if (r <= 0)
                        break;
                at = b->g.pos;
                if (strlen(key) != klen) {
                        free(key);
                        r = go_fail(b, at, "NUL in an object key");
                        break;
                }
                if (plen)
                        ncm_buf_putc(&b->path, '.');
                ncm_buf_puts(&b->path, key);
                r = go_value(b, depth + 1, &v);
                if (r >= 0 && json_object_object_get_ex(o, key, &e)) {
                        ncm_json_info *in = b->info;
                        size_t line, col;
                        ncm__text_line_col(b->g.text, at, &line, &col);
                        if (in && ncm__array_grow(in->dups, in->cap_dups, in->n_dups) >= 0 &&
                            !ncm_buf_failed(&b->path) &&
                            (in->dups[in->n_dups].path = strndup(b->path.data, b->path.len)))
                                in->dups[in->n_dups++].line = line;
                        else if (in)
                                r = go_oom(b);
                        v = go_merge(e ? json_object_get(e) : NULL, v);
                }
                if (r >= 0 && json_object_object_add(o, key, v) < 0)
                        r = go_oom(b);
                else if (r < 0 && v)
                        json_object_put(v);
                free(key);
                b->path.len = plen;
                if (b->path.data)
                        b->path.data[plen] = '\0';
                if (r < 0)
                        break;
        }
        if (r < 0) {
                json_object_put(o);
                return r;
        }
        *ret = o;
        return 0;
}

static int go_value(gobuild *b, int depth, json_object **ret)
{
        ncm_gojson_kind k = ncm__gojson_peek(&b->g);
        size_t at = b->g.pos;

        *ret = NULL;
        if ((k == NCM_GOJSON_OBJECT || k == NCM_GOJSON_ARRAY) && depth >= NCM_JSON_MAX_DEPTH)
                return go_fail(b, at, "nesting deeper than the reader's limit");
        switch (k) {
        case NCM_GOJSON_OBJECT:
                return go_object(b, depth, ret);
        case NCM_GOJSON_ARRAY: {
                json_object *a = json_object_new_array();
                size_t plen = b->path.len, i = 0;
                bool first = true;
                if (!a)
                        return go_oom(b);
                while (ncm__gojson_next_element(&b->g, &first)) {
                        json_object *v = NULL;
                        int r;
                        ncm_buf_printf(&b->path, "[%zu]", i++);
                        r = go_value(b, depth + 1, &v);
                        b->path.len = plen;
                        if (r >= 0 && json_object_array_add(a, v) < 0)
                                r = go_oom(b);
                        if (r < 0) {
                                json_object_put(a);
                                return r;
                        }
                }
                *ret = a;
                return 0;
        }
        case NCM_GOJSON_STRING: {
                char *s = NULL;
                size_t n = 0;
                int r = ncm__gojson_string(&b->g, &s, &n, b->err);
                if (r < 0)
                        return r;
                if (strlen(s) != n) {
                        free(s);
                        return go_fail(b, at, "NUL in a string");
                }
                *ret = json_object_new_string_len(s, (int)n);
                free(s);
                return *ret ? 0 : go_oom(b);
        }
        case NCM_GOJSON_NUMBER: {
                const char *t = NULL;
                size_t n = ncm__gojson_number(&b->g, &t);
                char lit[64];
                int64_t v;
                if (ncm__gojson_parse_int64(t, n, &v)) {
                        *ret = json_object_new_int64(v);
                } else {
                        if (n >= sizeof(lit))
                                n = sizeof(lit) - 1;
                        memcpy(lit, t, n);
                        lit[n] = '\0';
                        *ret = json_object_new_double_s(strtod(lit, NULL), lit);
                }
                return *ret ? 0 : go_oom(b);
        }
        case NCM_GOJSON_BOOL:
                *ret = json_object_new_boolean(ncm__gojson_bool(&b->g));
                return *ret ? 0 : go_oom(b);
        default:
                ncm__gojson_skip(&b->g);
                return 0;
        }
}

static int json_parse_go(const char *text, size_t len, const char *name, json_object **ret,
                         ncm_json_info *info, ncm_error *err)
{
        gobuild b = {.info = info, .err = err};
        json_object *o = NULL;
        int r;

        if (len > INT32_MAX)
                return ncm_error_set(err, EFBIG, "%s: document too large", name);
        r = ncm__gojson_init(&b.g, text, len, name, err);
        if (r < 0)
                return r;
        r = go_value(&b, 0, &o);
        ncm_buf_done(&b.path);
        if (r < 0)
                return r;
        *ret = o;
        return 0;
}

int ncm__json_or_yaml_parse_ex(const char *text, size_t len, const char *name, unsigned flags,
                               json_object **ret, ncm_json_info *info, ncm_error *err)
{
        size_t i = 0;
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
                i++;
        if (i < len && (text[i] == '{' || text[i] == '[')) {
                if (flags & NCM_JSON_GO)
                        return json_parse_go(text, len, name, ret, info, err);
                return ncm__json_parse(text, len, name, ret, err);
        }
        return ncm__yaml_parse_ex(text, len, name, flags, ret, info, err);
}

int ncm__json_or_yaml_parse(const char *text, size_t len, const char *name, json_object **ret,
                            ncm_error *err)
{
        return ncm__json_or_yaml_parse_ex(text, len, name, 0, ret, NULL, err);
}

int ncm__json_load_file_ex(const char *path, unsigned flags, json_object **ret, size_t *ret_len,
                           ncm_json_info *info, ncm_error *err)
{
        ncm_autofree char *text = NULL;
        size_t len;
        int r;

        if (strcmp(path, "-") == 0)
                r = ncm_fs_read_all(AT_FDCWD, "/dev/stdin", NCM_JSON_MAX_FILE, &text, &len, err);
        else
                r = ncm_fs_read_all(AT_FDCWD, path, NCM_JSON_MAX_FILE, &text, &len, err);
        if (r < 0)
                return r;
        if (ret_len)
                *ret_len = len;
        return ncm__json_or_yaml_parse_ex(text, len, strcmp(path, "-") == 0 ? "<stdin>" : path,
                                          flags, ret, info, err);
}

int ncm__json_load_file(const char *path, json_object **ret, ncm_error *err)
{
        return ncm__json_load_file_ex(path, 0, ret, NULL, NULL, err);
}

const char *ncm__json_type_name(json_object *o)
{
        switch (json_object_get_type(o)) {
        case json_type_null:
                return "null";
        case json_type_boolean:
                return "boolean";
        case json_type_double:
        case json_type_int:
                return "number";
        case json_type_object:
                return "object";
        case json_type_array:
                return "array";
        case json_type_string:
                return "string";
        }
        return "unknown";
}

json_object *ncm__json_get(json_object *o, const char *key)
{
        json_object *v = NULL;
        if (!o || !json_object_is_type(o, json_type_object))
                return NULL;
        if (!json_object_object_get_ex(o, key, &v))
                return NULL;
        return v;
}

static bool ascii_fold_equal(const char *a, const char *b)
{
        for (; *a && *b; a++, b++) {
                char x = *a, y = *b;
                if (x >= 'A' && x <= 'Z')
                        x = (char)(x - 'A' + 'a');
                if (y >= 'A' && y <= 'Z')
                        y = (char)(y - 'A' + 'a');
                if (x != y)
                        return false;
        }
        return *a == *b;
}

json_object *ncm__json_get_ci(json_object *o, const char *key)
{
        json_object *found = NULL;
        if (!o || !json_object_is_type(o, json_type_object))
                return NULL;
        if (json_object_object_get_ex(o, key, &found))
                return found;
        json_object_object_foreach(o, k, v)
        {
                if (ascii_fold_equal(k, key))
                        found = v;
        }
        return found;
}

int ncm__json_expect(json_object *o, json_type type, const char *path, ncm_error *err)
{
        static const char *const names[] = {
                        [json_type_null] = "null",     [json_type_boolean] = "boolean",
                        [json_type_double] = "number", [json_type_int] = "number",
                        [json_type_object] = "object", [json_type_array] = "array",
                        [json_type_string] = "string",
        };
        if (json_object_is_type(o, type))
                return 0;
        if ((type == json_type_int || type == json_type_double) &&
            (json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double)))
                return 0;
        return ncm_error_set(err, EINVAL, "%s: expected %s, got %s", path, names[type],
                             ncm__json_type_name(o));
}

int ncm__json_scalar_text(json_object *o, const char *path, const char **ret, ncm_error *err)
{
        if (json_object_is_type(o, json_type_string) || json_object_is_type(o, json_type_int) ||
            json_object_is_type(o, json_type_double)) {
                *ret = json_object_get_string(o);
                return 0;
        }
        return ncm_error_set(err, EINVAL, "%s: expected string or number, got %s", path,
                             ncm__json_type_name(o));
}

int ncm__json_int(json_object *o, const char *path, int64_t min, int64_t max, int64_t *ret,
                  ncm_error *err)
{
        int64_t v;
        if (json_object_is_type(o, json_type_double)) {
                double d = json_object_get_double(o);
                if (d != floor(d) || !isfinite(d))
                        return ncm_error_set(err, EINVAL, "%s: expected an integer, got %s", path,
                                             json_object_get_string(o));
                if (d < (double)min || d > (double)max)
                        return ncm_error_set(err, ERANGE, "%s: %s is out of range [%lld, %lld]",
                                             path, json_object_get_string(o), (long long)min,
                                             (long long)max);
                *ret = (int64_t)d;
                return 0;
        }
        if (!json_object_is_type(o, json_type_int))
                return ncm_error_set(err, EINVAL, "%s: expected an integer, got %s", path,
                                     ncm__json_type_name(o));
        errno = 0;
        v = json_object_get_int64(o);
        /* json-c keeps numbers above INT64_MAX as uint64 and saturates them here silently */
        if (v == INT64_MAX && strcmp(json_object_get_string(o), "9223372036854775807") != 0)
                errno = ERANGE;
        if (errno == ERANGE || v < min || v > max)
                return ncm_error_set(err, ERANGE, "%s: %s is out of range [%lld, %lld]", path,
                                     json_object_get_string(o), (long long)min, (long long)max);
        *ret = v;
        return 0;
}
