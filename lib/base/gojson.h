/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: reading JSON exactly as Go's encoding/json reads it.
 *
 * The kubelet checksums its checkpoint files over the value encoding/json *decodes*, not over
 * the bytes, so a reader that wants to verify such a file must reproduce Go's decoding rules
 * where they change the value. lib/base/json.h (json-c trees) cannot: json-c collapses a
 * repeated key, validates UTF-8 differently and words its errors its own way. This module is a
 * pull decoder over the text instead, in two steps.
 *
 * 1. ncm__gojson_init() checks the whole document first, as json.Unmarshal does (checkValid)
 *    before it decodes anything: a syntax error anywhere wins over a type error anywhere. The
 *    scanner is Go's state machine, so the same inputs fail with the same SyntaxError text
 *    ("invalid character 'x' after object key", "unexpected end of JSON input", "invalid
 *    character '[' exceeded max depth" beyond NCM_GOJSON_MAX_DEPTH levels), including its
 *    quirks (a document ending in "1." fails with "invalid character ' ' after decimal point",
 *    the space Go feeds its scanner at the end of input).
 *
 * 2. The caller walks the checked document with peek/skip/string/number/bool and the member and
 *    element iterators, deciding at each value what Go would do with it for its own schema:
 *    every member is delivered in document order, a repeated key included, so the caller can
 *    apply Go's rules (a map field decodes into the map it already has and merges; a string or
 *    number is replaced; a slice decodes over its existing elements; null sets a map or slice
 *    to nil and leaves anything else as it was). ncm__gojson_field() is Go's struct field
 *    lookup (exact name first, then case folding), ncm__gojson_type_error_text() words
 *    json.UnmarshalTypeError, and ncm__gojson_parse_uint64/int64() are strconv's number rules.
 *
 * The walking functions require a checked document and a value of the kind they read at the
 * cursor (call ncm__gojson_peek() first); they never read outside the text, and the only error
 * they can return is -ENOMEM. Nothing here allocates except ncm__gojson_string() and the keys
 * ncm__gojson_next_member() returns; no state outlives the ncm_gojson the caller owns.
 */
#ifndef NCM_BASE_GOJSON_H
#define NCM_BASE_GOJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/common.h>
#include <nodecm/error.h>

/* encoding/json's scanner refuses more nesting than this (maxNestingDepth). */
#define NCM_GOJSON_MAX_DEPTH 10000

/* Room for the longest SyntaxError text the scanner produces, with its NUL. */
#define NCM_GOJSON_SYNTAX_MAX 96

/* What the cursor is at. */
typedef enum ncm_gojson_kind {
        NCM_GOJSON_END = 0, /* nothing left but whitespace */
        NCM_GOJSON_OBJECT,
        NCM_GOJSON_ARRAY,
        NCM_GOJSON_STRING,
        NCM_GOJSON_NUMBER,
        NCM_GOJSON_BOOL,
        NCM_GOJSON_NULL,
} ncm_gojson_kind;

/* A cursor over one checked document. Plain data: copy it to keep a position. */
typedef struct ncm_gojson {
        const char *text;
        size_t len;
        size_t pos;
        const char *name; /* starts error messages */
        /* After a failed ncm__gojson_init(): Go's SyntaxError text and its byte offset. */
        char syntax[NCM_GOJSON_SYNTAX_MAX];
        size_t syntax_offset;
} ncm_gojson;

/*
 * Check TEXT (LEN bytes, any content: NUL bytes are just invalid characters) as Go's scanner
 * does. Returns 0 when it is one JSON value with only whitespace around it, else -EINVAL with
 * Go's SyntaxError text in MSG (MSG_SIZE bytes, truncated if short) and in *RET_OFFSET the
 * offset of the offending byte (LEN at the end of input). Pure; allocates nothing.
 */
int ncm__gojson_check(const char *text, size_t len, size_t *ret_offset, char *msg, size_t msg_size);

/*
 * Check TEXT with ncm__gojson_check() and set G at its start. NAME (a file name; NULL for
 * "<json>") starts error messages. On a syntax error returns -EINVAL with
 * "NAME:LINE:COL: invalid JSON: <Go's text>" (or "NAME:LINE:COL: unexpected end of JSON
 * input") in ERR; G then holds Go's own text in G->syntax, which is what a Go program prints.
 * LINE and COL are 1-based, COL in bytes.
 */
int ncm__gojson_init(ncm_gojson *g, const char *text, size_t len, const char *name, ncm_error *err);

/* Back to the start of the document, to decode it again (e.g. as another struct). */
void ncm__gojson_rewind(ncm_gojson *g);

/* The kind of the value at the cursor (after whitespace), NCM_GOJSON_END after the last one. */
ncm_gojson_kind ncm__gojson_peek(ncm_gojson *g);

/*
 * The word json.UnmarshalTypeError uses for a JSON value of kind K: "object", "array",
 * "string", "number", "bool", "null" ("end of input" for NCM_GOJSON_END).
 */
const char *ncm__gojson_kind_name(ncm_gojson_kind k) NCM_PURE;

/* Move past the value at the cursor, whatever it is (null included). */
void ncm__gojson_skip(ncm_gojson *g);

/* Read the true/false at the cursor. */
bool ncm__gojson_bool(ncm_gojson *g);

/*
 * Read the number at the cursor: *RET_TEXT points at its literal text in the document (as Go
 * passes it to strconv), the length is returned.
 */
size_t ncm__gojson_number(ncm_gojson *g, const char **ret_text);

/*
 * Read the string at the cursor, unquoted as Go's decoder unquotes it: escapes decoded, a
 * valid surrogate pair joined, a lone surrogate escape and each byte of invalid UTF-8 replaced
 * by U+FFFD. *RET is malloc'd and NUL-terminated; *RET_LEN (may be NULL) is its length, which
 * exceeds strlen(*RET) when the string holds \u0000 (Go keeps it; callers that need C strings
 * must decide). 0, or -ENOMEM ("NAME: out of memory" in ERR) with the cursor unmoved.
 */
int ncm__gojson_string(ncm_gojson *g, char **ret, size_t *ret_len, ncm_error *err);

/*
 * Iterate the members of the object at the cursor. Start with *FIRST true. Returns 1 with the
 * next member's key in *RET_KEY (unquoted as ncm__gojson_string() does, malloc'd, length in
 * *RET_KEY_LEN, which may be NULL) and the cursor at its value, which the caller must then
 * consume (decode it or ncm__gojson_skip() it); 0 after the closing brace; -ENOMEM. Repeated
 * keys are all delivered, in document order.
 */
int ncm__gojson_next_member(ncm_gojson *g, bool *first, char **ret_key, size_t *ret_key_len,
                            ncm_error *err);

/*
 * Iterate the elements of the array at the cursor. Start with *FIRST true. true with the
 * cursor at the next element, which the caller must consume; false after the closing bracket.
 */
bool ncm__gojson_next_element(ncm_gojson *g, bool *first);

/*
 * Go's struct field lookup for KEY (KEY_LEN bytes, as unquoted): the index in NAMES (N field
 * names, ASCII) of the field named exactly KEY, else of the first field whose name equals KEY
 * under Go's case folding, else -1. Folding maps each rune to the smallest of its Unicode
 * simple-fold orbit, so besides ASCII case, U+017F (long s) matches 's' and U+212A (Kelvin
 * sign) matches 'k'.
 */
int ncm__gojson_field(const char *key, size_t key_len, const char *const *names, size_t n) NCM_PURE;

/* True when KEY (KEY_LEN bytes) equals the ASCII NAME under Go's case folding. */
bool ncm__gojson_fold_equal(const char *key, size_t key_len, const char *name) NCM_PURE;

/*
 * json.UnmarshalTypeError's text into BUF (SIZE bytes, truncated if short):
 * "json: cannot unmarshal VALUE into Go struct field STRUCT.FIELD of type GO_TYPE", or with
 * FIELD NULL "json: cannot unmarshal VALUE into Go value of type GO_TYPE". VALUE is the JSON
 * kind (ncm__gojson_kind_name()), or "number <literal>" where Go parsed a number and failed.
 */
void ncm__gojson_type_error_text(char *buf, size_t size, const char *value, const char *struct_name,
                                 const char *field, const char *go_type);

/* strconv.ParseUint(S, 10, 64) on S (N bytes): decimal digits only, no sign, no overflow. */
bool ncm__gojson_parse_uint64(const char *s, size_t n, uint64_t *ret);

/* strconv.ParseInt(S, 10, 64): an optional '+' or '-', then decimal digits, in range. */
bool ncm__gojson_parse_int64(const char *s, size_t n, int64_t *ret);

#endif
