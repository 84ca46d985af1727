/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: reading JSON and YAML documents into json-c trees, and field access with errors
 * that name the field path. YAML is converted to the same tree (as sigs.k8s.io/yaml converts
 * YAML to JSON), so every reader handles one representation.
 */
#ifndef NCM_BASE_JSON_H
#define NCM_BASE_JSON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <nodecm/common.h>
#include <nodecm/error.h>

/* Deepest nesting accepted in either format (guards the parsers' recursion). */
#define NCM_JSON_MAX_DEPTH 64
/* Largest document read from a file. */
#define NCM_JSON_MAX_FILE (64u << 20)

static inline void ncm__json_putp(json_object **p)
{
        if (*p)
                json_object_put(*p);
}
#define ncm_autojson __attribute__((cleanup(ncm__json_putp))) json_object *

/* 1-based line and column (counted in bytes) of byte OFF in TEXT, for error messages. */
void ncm__text_line_col(const char *text, size_t off, size_t *line, size_t *col);

/*
 * Parse TEXT (LEN bytes) as strict JSON. NAME (a file name or "<stdin>") starts error messages:
 * "NAME:LINE:COL: <what>". The whole text must be one value (whitespace may follow).
 */
int ncm__json_parse(const char *text, size_t len, const char *name, json_object **ret,
                    ncm_error *err);

/* A key that was given twice in one object (ncm_json_info). */
typedef struct ncm_json_dup {
        char *path;  /* the key's path: "featureGates.Foo", "a[2].b" */
        size_t line; /* 1-based line of the repeat */
} ncm_json_dup;

/* What a read saw beside the tree, for readers that must act on it (a kubelet file). */
typedef struct ncm_json_info {
        bool yaml;          /* read as YAML */
        bool more;          /* text followed the first YAML document (NCM_JSON_FIRST_DOCUMENT) */
        size_t more_line;   /* ... starting on this line */
        ncm_json_dup *dups; /* repeated keys, in the order met (merge keys that overwrite too) */
        size_t n_dups, cap_dups;
        uint64_t aliased; /* YAML nodes an alias stood for */
} ncm_json_info;

/* Free what INFO holds (INFO itself is caller storage, zeroed before use). */
void ncm__json_info_done(ncm_json_info *info);

enum {
        /*
         * YAML: decode the first document and ignore whatever follows, as go-yaml v2's
         * Unmarshal (sigs.k8s.io/yaml, so the kubelet's --config) does; without it a second
         * document is an error.
         */
        NCM_JSON_FIRST_DOCUMENT = 1 << 0,
        /*
         * JSON: read as Go's decoder reads it into structs and maps (lib/base/gojson.h): Go's
         * syntax errors; a repeated key merges into the earlier value the way encoding/json
         * merges (an object into the map or struct it decoded before, member by member; an
         * array element by element; anything else replaced) instead of json-c's replace.
         */
        NCM_JSON_GO = 1 << 1,
};

/*
 * Parse TEXT as a YAML stream into the same tree, as sigs.k8s.io/yaml's YAMLToJSON does
 * (lib/base/yaml.c): plain scalars typed the way go-yaml v2 types them (null/~, YAML 1.1
 * booleans, integers, floats with their text preserved; anything quoted is a string), anchors
 * and aliases resolved (an alias shares the anchor's subtree), merge keys ("<<") applied, a
 * repeated key keeping its last value, aliasing bounded as go-yaml bounds it ("document
 * contains excessive aliasing"). One document unless FLAGS has NCM_JSON_FIRST_DOCUMENT;
 * non-scalar mapping keys are rejected. INFO (may be NULL) receives the repeats and what
 * followed the first document.
 */
int ncm__yaml_parse_ex(const char *text, size_t len, const char *name, unsigned flags,
                       json_object **ret, ncm_json_info *info, ncm_error *err);
int ncm__yaml_parse(const char *text, size_t len, const char *name, json_object **ret,
                    ncm_error *err);

/* An element of a streamed sequence (borrowed: dropped after the call). A positive return
 * stops the parse (*ret is then NULL), a negative one fails it with that error. */
typedef int (*ncm__yaml_item_fn)(json_object *item, size_t index, void *data, ncm_error *err);
/* The streamed sequence begins; ROOT (borrowed) holds what came before it in the document. */
typedef int (*ncm__yaml_start_fn)(json_object *root, void *data);

/*
 * ncm__yaml_parse() (one document) that calls START (may be NULL) when the sequence under the
 * root's KEY begins and hands each of its elements to FN as soon as it is complete and keeps only a
 * null in its place, so that a long sequence never stands in memory whole. *STREAMED tells whether
 * that happened: not when the sequence is anchored, repeated, merged in or absent, and the tree
 * then holds it as ncm__yaml_parse() would. Errors are ncm__yaml_parse()'s, at the same places.
 */
int ncm__yaml_parse_stream(const char *text, size_t len, const char *name, const char *key,
                           ncm__yaml_start_fn start, ncm__yaml_item_fn fn, void *data,
                           json_object **ret, bool *streamed, ncm_error *err);

/*
 * JSON when the first non-blank byte is '{' or '[', else YAML. FLAGS and INFO as above (JSON
 * repeats are reported only with NCM_JSON_GO).
 */
int ncm__json_or_yaml_parse_ex(const char *text, size_t len, const char *name, unsigned flags,
                               json_object **ret, ncm_json_info *info, ncm_error *err);
int ncm__json_or_yaml_parse(const char *text, size_t len, const char *name, json_object **ret,
                            ncm_error *err);

/*
 * Read PATH (a host path, or "-" for stdin) and parse it with ncm__json_or_yaml_parse_ex().
 * *RET_LEN (may be NULL) receives the file's length (a kubelet refuses an empty file).
 */
int ncm__json_load_file_ex(const char *path, unsigned flags, json_object **ret, size_t *ret_len,
                           ncm_json_info *info, ncm_error *err);
int ncm__json_load_file(const char *path, json_object **ret, ncm_error *err);

/* "object", "array", "string", "number", "boolean" or "null". */
const char *ncm__json_type_name(json_object *o);

/* Member KEY of object O (NULL if O is not an object or has no such key, or it is null). */
json_object *ncm__json_get(json_object *o, const char *key);

/*
 * Member of O whose key matches KEY as Go's encoding/json matches struct fields: an exact
 * match wins, else the last key that is equal under ASCII case folding.
 */
json_object *ncm__json_get_ci(json_object *o, const char *key);

/*
 * Type checks that fill err with "PATH: expected T, got U". Return 0 or -EINVAL.
 */
int ncm__json_expect(json_object *o, json_type type, const char *path, ncm_error *err);

/*
 * The textual value of a string or number (numbers keep their source text: "1e3", "2").
 * -EINVAL for other types.
 */
int ncm__json_scalar_text(json_object *o, const char *path, const char **ret, ncm_error *err);

/* An integer in [MIN, MAX] from a JSON number without fraction. -EINVAL / -ERANGE. */
int ncm__json_int(json_object *o, const char *path, int64_t min, int64_t max, int64_t *ret,
                  ncm_error *err);

#endif
