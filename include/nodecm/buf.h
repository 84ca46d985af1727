/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A growable string buffer on caller storage. Appends never fail loudly: an allocation failure
 * sets a sticky flag, later appends are ignored, and the caller checks ncm_buf_failed() once at
 * the end. The contents are always NUL-terminated when data != NULL.
 *
 * It also writes text exactly as Go does where the kubelet's bytes matter: JSON strings as
 * encoding/json.Marshal escapes them and strconv.Quote for error messages.
 */
#ifndef NODECM_BUF_H
#define NODECM_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <nodecm/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncm_buf {
        char *data;
        size_t len;
        size_t cap;
        bool oom;
} ncm_buf;

#define NCM_BUF_INIT                                                                               \
        {                                                                                          \
                NULL, 0, 0, false                                                                  \
        }

/* Release the storage; the buffer is empty and usable again. */
NCM_API void ncm_buf_done(ncm_buf *b);
/* Forget the contents but keep the storage (and clear the failure flag). */
NCM_API void ncm_buf_reset(ncm_buf *b);
/* true if an append failed for lack of memory. */
NCM_API bool ncm_buf_failed(const ncm_buf *b);
/* Hand over the contents (malloc'd, NUL-terminated; "" when empty). NULL if an append failed. */
NCM_API char *ncm_buf_steal(ncm_buf *b);

NCM_API void ncm_buf_append(ncm_buf *b, const void *data, size_t len);
NCM_API void ncm_buf_puts(ncm_buf *b, const char *s);
NCM_API void ncm_buf_putc(ncm_buf *b, char c);
NCM_API void ncm_buf_printf(ncm_buf *b, const char *fmt, ...) NCM_PRINTF(2, 3);

/*
 * Append S (LEN bytes) as a JSON string literal, quotes included, escaped as Go's
 * encoding/json.Marshal does: \" \\ \b \f \n \r \t, other control bytes as \u00XX, '<' '>' '&'
 * as \u003c \u003e \u0026, U+2028/U+2029 as \u2028/\u2029, invalid UTF-8 as \ufffd.
 */
NCM_API void ncm_buf_json_string(ncm_buf *b, const char *s, size_t len);

/*
 * Append S as Go's strconv.Quote renders it (used in kubelet error texts such as
 * `strconv.Atoi: parsing "x": invalid syntax`). Non-ASCII runes are treated as printable
 * except C1 controls and the Unicode format/separator characters; Go's full unicode.IsPrint
 * table is not reproduced.
 */
NCM_API void ncm_buf_go_quote(ncm_buf *b, const char *s, size_t len);

enum {
        NCM_BUF_KEEP_NEWLINES = 1 << 0, /* ncm_buf_put_printable: '\n' passes as is */
};

/*
 * Append S (LEN bytes) for a terminal or a log: what could act on the terminal or reorder what
 * it shows -- control characters (ESC starts ANSI sequences), DEL, C1 controls, bidi overrides
 * and other format marks -- as \u00XX / \uXXXX, invalid UTF-8 as \xNN, everything else as it
 * is; a tab stays, a '\n' only with NCM_BUF_KEEP_NEWLINES. JSON written by ncm_buf_json_string
 * passes through with the same meaning (its escapes are JSON's).
 */
NCM_API void ncm_buf_put_printable(ncm_buf *b, const char *s, size_t len, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
