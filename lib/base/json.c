/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include <nodecm/fs.h>
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

/* --- YAML --- */

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

typedef struct yaml_frame {
        json_object *node;
        char *key; /* pending mapping key, or NULL */
} yaml_frame;

static int yaml_error(ncm_error *err, const char *name, const yaml_parser_t *p)
{
        const char *what = p->problem ? p->problem : "invalid YAML";
        if (p->context)
                return ncm_error_set(err, EINVAL, "%s:%zu:%zu: invalid YAML: %s %s", name,
                                     p->problem_mark.line + 1, p->problem_mark.column + 1, what,
                                     p->context);
        return ncm_error_set(err, EINVAL, "%s:%zu:%zu: invalid YAML: %s", name,
                             p->problem_mark.line + 1, p->problem_mark.column + 1, what);
}

/* Attach CHILD (owned) to the innermost container, or make it the root. */
static int attach(yaml_frame *stack, int depth, json_object **root, json_object *child,
                  const char *scalar_text, const char *name, const yaml_mark_t *mark,
                  ncm_error *err)
{
        yaml_frame *top;

        if (depth == 0) {
                *root = child;
                return 0;
        }
        top = &stack[depth - 1];
        if (json_object_is_type(top->node, json_type_array)) {
                json_object_array_add(top->node, child);
                return 0;
        }
        if (!top->key) {
                /* This value is a key: keys must be scalars. */
                if (!scalar_text) {
                        json_object_put(child);
                        return ncm_error_set(
                                        err, EINVAL,
                                        "%s:%zu:%zu: invalid YAML: mapping keys must be scalars",
                                        name, mark->line + 1, mark->column + 1);
                }
                json_object_put(child);
                top->key = strdup(scalar_text);
                if (!top->key)
                        return ncm_error_set(err, ENOMEM, "%s: out of memory", name);
                return 0;
        }
        json_object_object_add(top->node, top->key, child);
        free(top->key);
        top->key = NULL;
        return 0;
}

int ncm__yaml_parse(const char *text, size_t len, const char *name, json_object **ret,
                    ncm_error *err)
{
        yaml_parser_t parser;
        yaml_event_t ev;
        yaml_frame stack[NCM_JSON_MAX_DEPTH];
        int depth = 0, docs = 0, r = 0;
        json_object *root = NULL;
        bool done = false;

        if (!yaml_parser_initialize(&parser))
                return ncm_error_set(err, ENOMEM, "%s: out of memory", name);
        yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
        while (!done) {
                if (!yaml_parser_parse(&parser, &ev)) {
                        r = yaml_error(err, name, &parser);
                        break;
                }
                switch (ev.type) {
                case YAML_STREAM_END_EVENT:
                        done = true;
                        break;
                case YAML_DOCUMENT_START_EVENT:
                        if (++docs > 1)
                                r = ncm_error_set(
                                                err, EINVAL,
                                                "%s:%zu:%zu: invalid YAML: more than one document",
                                                name, ev.start_mark.line + 1,
                                                ev.start_mark.column + 1);
                        break;
                case YAML_ALIAS_EVENT:
                        r = ncm_error_set(err, EINVAL,
                                          "%s:%zu:%zu: invalid YAML: aliases are not supported",
                                          name, ev.start_mark.line + 1, ev.start_mark.column + 1);
                        break;
                case YAML_SCALAR_EVENT: {
                        const char *v = (const char *)ev.data.scalar.value;
                        json_object *o;
                        bool plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                                     ev.data.scalar.plain_implicit;
                        if (strlen(v) != ev.data.scalar.length) {
                                r = ncm_error_set(err, EINVAL,
                                                  "%s:%zu:%zu: invalid YAML: NUL in scalar", name,
                                                  ev.start_mark.line + 1, ev.start_mark.column + 1);
                                break;
                        }
                        o = plain ? resolve_plain(v) : json_object_new_string(v);
                        r = attach(stack, depth, &root, o, v, name, &ev.start_mark, err);
                        break;
                }
                case YAML_SEQUENCE_START_EVENT:
                case YAML_MAPPING_START_EVENT: {
                        json_object *o = ev.type == YAML_SEQUENCE_START_EVENT
                                                         ? json_object_new_array()
                                                         : json_object_new_object();
                        if (!o) {
                                r = ncm_error_set(err, ENOMEM, "%s: out of memory", name);
                                break;
                        }
                        if (depth == NCM_JSON_MAX_DEPTH) {
                                json_object_put(o);
                                r = ncm_error_set(
                                                err, EINVAL,
                                                "%s:%zu:%zu: invalid YAML: nesting deeper than %d",
                                                name, ev.start_mark.line + 1,
                                                ev.start_mark.column + 1, NCM_JSON_MAX_DEPTH);
                                break;
                        }
                        /* The parent (or root) takes the reference; the stack borrows it. */
                        r = attach(stack, depth, &root, o, NULL, name, &ev.start_mark, err);
                        if (r < 0)
                                break;
                        stack[depth].node = o;
                        stack[depth].key = NULL;
                        depth++;
                        break;
                }
                case YAML_SEQUENCE_END_EVENT:
                case YAML_MAPPING_END_EVENT:
                        depth--;
                        free(stack[depth].key);
                        stack[depth].key = NULL;
                        break;
                default:
                        break;
                }
                yaml_event_delete(&ev);
                if (r < 0)
                        break;
        }
        for (int i = 0; i < depth; i++)
                free(stack[i].key);
        yaml_parser_delete(&parser);
        if (r < 0) {
                if (root)
                        json_object_put(root);
                return r;
        }
        *ret = root;
        return 0;
}

int ncm__json_or_yaml_parse(const char *text, size_t len, const char *name, json_object **ret,
                            ncm_error *err)
{
        size_t i = 0;
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
                i++;
        if (i < len && (text[i] == '{' || text[i] == '['))
                return ncm__json_parse(text, len, name, ret, err);
        return ncm__yaml_parse(text, len, name, ret, err);
}

int ncm__json_load_file(const char *path, json_object **ret, ncm_error *err)
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
        return ncm__json_or_yaml_parse(text, len, strcmp(path, "-") == 0 ? "<stdin>" : path, ret,
                                       err);
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
