/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The error object. Library functions return >= 0 on success and -code on failure, and fill an
 * optional ncm_error with a one-line message naming the file, field or value at fault. The
 * library never prints; the CLI prints err.msg once.
 *
 * Codes are positive errno values, or NCM_E_* for nodecm's own conditions. ncm_error_exit_status()
 * maps a code to the CLI exit status of DESIGN.md (1: well-formed request that cannot be met,
 * 2: bad usage or bad input, 3: the environment failed -- a full or read-only disk, an I/O
 * error, no daemon to talk to or one that did not answer in time, a lock held -- so that the
 * same request may succeed when retried).
 *
 * Unlike STYLE.md rule 5, the message is complete by itself: functions reporting a failed system
 * call use ncm_error_errno(), which appends strerror(). Kubelet-exact messages (cpuset parsing,
 * admission errors) therefore print verbatim, with nothing appended.
 */
#ifndef NODECM_ERROR_H
#define NODECM_ERROR_H

#include <stdbool.h>
#include <nodecm/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCM_ERROR_MSG_MAX 1024

typedef struct ncm_error {
        int code;                    /* positive errno or NCM_E_*; 0 when unset */
        char msg[NCM_ERROR_MSG_MAX]; /* always NUL-terminated; "..." marks truncation */
} ncm_error;

#define NCM_ERROR_INIT                                                                             \
        {                                                                                          \
                0,                                                                                 \
                {                                                                                  \
                        0                                                                          \
                }                                                                                  \
        }

/*
 * nodecm's own error codes, above the errno range. X(name, value, description, exit status).
 */
#define NCM_ERRNO_MAP(X)                                                                           \
        X(UNSATISFIABLE, 4096, "request cannot be satisfied", 1)                                   \
        X(ADMISSION, 4097, "pod admission refused", 1)                                             \
        X(INVALID_STATE, 4098, "state failed validation", 1)                                       \
        X(CHECKSUM, 4099, "checkpoint checksum mismatch", 1)                                       \
        X(NOT_FOUND, 4100, "not found", 2)                                                         \
        X(ENFORCEMENT, 4101, "enforcement failed", 1)                                              \
        X(UNAVAILABLE, 4102, "service unavailable", 3)

enum {
#define NCM_ERR_ENUM_(name, val, desc, status) NCM_E_##name = val,
        NCM_ERRNO_MAP(NCM_ERR_ENUM_)
#undef NCM_ERR_ENUM_
};

/*
 * Set err (when not NULL) to code and a printf-formatted message. Returns -code, so callers can
 * write `return ncm_error_set(err, EINVAL, "...")`.
 */
NCM_API int ncm_error_set(ncm_error *err, int code, const char *fmt, ...) NCM_PRINTF(3, 4);

/* As ncm_error_set(), and appends ": <strerror(code)>" to the message. */
NCM_API int ncm_error_errno(ncm_error *err, int code, const char *fmt, ...) NCM_PRINTF(3, 4);

/*
 * Prefix the message in err with a formatted context and ": ". Returns -err->code (or -EINVAL
 * when err holds no code). A NULL err is ignored.
 */
NCM_API int ncm_error_prefix(ncm_error *err, const char *fmt, ...) NCM_PRINTF(2, 3);

/* Reset err to "no error". */
NCM_API void ncm_error_clear(ncm_error *err);

/* Description of a code: strerror() for errno values, the NCM_ERRNO_MAP text for NCM_E_*. */
NCM_API const char *ncm_strerror(int code);

/*
 * The CLI exit status for an error code: 1 for "cannot be met" codes; 3 for failures of the
 * environment a retry may get past (ENOSPC, EDQUOT, EROFS, EIO, ENOMEM, EAGAIN/EWOULDBLOCK,
 * ETIMEDOUT, the connection errors, EMFILE/ENFILE, NCM_E_UNAVAILABLE); else 2.
 */
NCM_API int ncm_error_exit_status(int code);

#ifdef __cplusplus
}
#endif
#endif
