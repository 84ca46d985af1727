/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: the framing both kubelet checkpoint files share (cpu_manager_state and
 * kubelet_internal_checkpoint), below their schemas.
 *
 * The kubelet's checkpoint manager stores a struct as encoding/json writes it, with a
 * Checksum member holding FNV-1a 32 of the struct as go-spew's "%#v" renders it (with the
 * checksum field zero). Reading one back means decoding as encoding/json decodes into that
 * struct (base/gojson.h does the JSON; this adds the pieces both schemas repeat: the size
 * limit, the probe, the struct member loop, string and checksum fields), and verifying it means
 * rendering the decoded value as go-spew does (the ncm__spew_* vocabulary: typed fields, nil,
 * maps and slices) and hashing the rendering.
 *
 * Error wording stays with the callers: the CPU manager's decoder reproduces Go's
 * UnmarshalTypeError texts (the kubelet prints them), the device manager's names the JSON path.
 * So the decoding helpers report what was wrong in an ncm_ckpt_bad and leave the words to them.
 */
#ifndef NCM_BASE_KUBELET_CHECKPOINT_H
#define NCM_BASE_KUBELET_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/error.h>
#include "base/gojson.h"

/* ---- reading ---- */

/*
 * Check TEXT (LEN bytes) and set G at its start, as ncm__gojson_init() does, after refusing a
 * text longer than MAX bytes (0: no limit) with -EFBIG "NAME: checkpoint larger than MAX bytes".
 */
int ncm__ckpt_open(ncm_gojson *g, const char *text, size_t len, const char *name, size_t max,
                   ncm_error *err);

/*
 * Whether TEXT looks like this kind of checkpoint: a JSON object with at least one member that
 * is one of FIELDS (N struct field names, Go's lookup). 1 yes, 0 no; -EINVAL (syntax) or
 * -EFBIG as ncm__ckpt_open(); -ENOMEM.
 */
int ncm__ckpt_probe(const char *text, size_t len, const char *name, size_t max,
                    const char *const *fields, size_t n, ncm_error *err);

/*
 * Iterate the members of the struct (JSON object) at the cursor, as encoding/json assigns them
 * to a struct with the N fields FIELDS: start with *FIRST true. Returns 1 with the cursor at the
 * member's value and *RET_FIELD its field's index (Go's lookup: exact, then case folding), or -1
 * for a member the struct has no field for (the caller skips its value); 0 after the last
 * member; -ENOMEM. A repeated member is delivered each time, in document order, as Go decodes it.
 */
int ncm__ckpt_next_field(ncm_gojson *g, bool *first, const char *const *fields, size_t n,
                         int *ret_field, ncm_error *err);

/* What a decoding helper found at the cursor instead of the value it wanted. */
typedef struct ncm_ckpt_bad {
        ncm_gojson_kind kind; /* the JSON kind found (a mismatch), or the kind wanted */
        bool nul;             /* a string holding NUL: Go keeps it, a C string cannot */
        const char *text;     /* a number strconv refused: its literal (in the document) */
        size_t len;
} ncm_ckpt_bad;

/* True when the string S of LEN bytes (as unquoted) holds no NUL, so it is S as a C string. */
bool ncm__ckpt_c_string(const char *s, size_t len);

/*
 * A Go string field at the cursor. 0 with the value in *RET (malloc'd, a C string) and its
 * length in *RET_LEN (may be NULL); 1 for null, which leaves a Go string as it was (nothing
 * returned); -EINVAL with *BAD: another kind (bad->kind) or a NUL inside (bad->nul), the value
 * consumed; -ENOMEM ("NAME: out of memory" in ERR), the cursor unmoved.
 */
int ncm__ckpt_string_field(ncm_gojson *g, char **ret, size_t *ret_len, ncm_ckpt_bad *bad,
                           ncm_error *err);

/*
 * The checksum.Checksum (uint64) field at the cursor, read as strconv.ParseUint reads the
 * number's text: 0 with *RET set; 1 for null (*RET untouched); -EINVAL with *BAD: another kind
 * (bad->kind), or a number ParseUint refuses ("-0", a fraction, an exponent, past 2^64-1: its
 * literal in bad->text/len, bad->kind NCM_GOJSON_NUMBER). The value is consumed.
 */
int ncm__ckpt_checksum_field(ncm_gojson *g, uint64_t *ret, ncm_ckpt_bad *bad);

/* ---- go-spew's "%#v" rendering, the text the checksum covers ---- */

/* A nil map, slice or pointer: "<nil>". */
void ncm__spew_nil(ncm_buf *b);

/* Element I of a slice, map or struct: the space before every one but the first. */
void ncm__spew_sep(ncm_buf *b, size_t i);

/* Field I of a struct, before its value: "Name:(type)", separated. */
void ncm__spew_field(ncm_buf *b, size_t i, const char *name, const char *type);

/* Entry I of a map, before its value: "key:", separated (elements carry no type). */
void ncm__spew_key(ncm_buf *b, size_t i, const char *key);

/* A []string: "[a b c]", or "<nil>" when NIL. */
void ncm__spew_strings(ncm_buf *b, bool nil, char *const *v, size_t n);

/* A []byte: "[1 2 3]" in decimal, or "<nil>" when NIL. */
void ncm__spew_bytes(ncm_buf *b, bool nil, const unsigned char *v, size_t n);

/*
 * The kubelet's checksum of the rendering in B: FNV-1a 32 over its bytes, into *RET. B is
 * released. -ENOMEM when an append to B ran out of memory (no checksum then).
 */
int ncm__spew_sum(ncm_buf *b, uint32_t *ret);

#endif
