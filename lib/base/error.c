/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/error.h>

/* Mark a cut message so a reader knows it is incomplete. */
static void mark_truncated(char *msg, size_t size)
{
        memcpy(msg + size - 4, "...", 4);
}

static void vformat(ncm_error *err, const char *fmt, va_list ap) NCM_PRINTF(2, 0);
static void vformat(ncm_error *err, const char *fmt, va_list ap)
{
        int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        if (n < 0)
                err->msg[0] = '\0';
        else if ((size_t)n >= sizeof(err->msg))
                mark_truncated(err->msg, sizeof(err->msg));
}

int ncm_error_set(ncm_error *err, int code, const char *fmt, ...)
{
        if (code < 0)
                code = -code;
        if (code == 0)
                code = EINVAL;
        if (err) {
                va_list ap;
                err->code = code;
                va_start(ap, fmt);
                vformat(err, fmt, ap);
                va_end(ap);
        }
        return -code;
}

int ncm_error_errno(ncm_error *err, int code, const char *fmt, ...)
{
        if (code < 0)
                code = -code;
        if (code == 0)
                code = EIO;
        if (err) {
                va_list ap;
                size_t len;
                err->code = code;
                va_start(ap, fmt);
                vformat(err, fmt, ap);
                va_end(ap);
                len = strlen(err->msg);
                if (len < sizeof(err->msg) - 1) {
                        int n = snprintf(err->msg + len, sizeof(err->msg) - len, ": %s",
                                         ncm_strerror(code));
                        if (n < 0 || (size_t)n >= sizeof(err->msg) - len)
                                mark_truncated(err->msg, sizeof(err->msg));
                }
        }
        return -code;
}

int ncm_error_prefix(ncm_error *err, const char *fmt, ...)
{
        char prefix[NCM_ERROR_MSG_MAX];
        char old[NCM_ERROR_MSG_MAX];
        va_list ap;
        int n;

        if (!err)
                return -EINVAL;
        if (err->code == 0)
                err->code = EINVAL;
        va_start(ap, fmt);
        n = vsnprintf(prefix, sizeof(prefix), fmt, ap);
        va_end(ap);
        if (n < 0)
                return -err->code;
        memcpy(old, err->msg, sizeof(old));
        n = snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
        if (n < 0 || (size_t)n >= sizeof(err->msg))
                mark_truncated(err->msg, sizeof(err->msg));
        return -err->code;
}

void ncm_error_clear(ncm_error *err)
{
        if (err) {
                err->code = 0;
                err->msg[0] = '\0';
        }
}

const char *ncm_strerror(int code)
{
        if (code < 0)
                code = -code;
        switch (code) {
#define NCM_ERR_DESC_(name, val, desc, status)                                                     \
        case val:                                                                                  \
                return desc;
                NCM_ERRNO_MAP(NCM_ERR_DESC_)
#undef NCM_ERR_DESC_
        default:
                return strerror(code);
        }
}

int ncm_error_exit_status(int code)
{
        if (code < 0)
                code = -code;
        switch (code) {
#define NCM_ERR_STATUS_(name, val, desc, status)                                                   \
        case val:                                                                                  \
                return status;
                NCM_ERRNO_MAP(NCM_ERR_STATUS_)
#undef NCM_ERR_STATUS_
        case 0:
                return 0;
        /* the environment failed, not the request: a retry may get past it */
        case ENOSPC:
        case EDQUOT:
        case EROFS:
        case EIO:
        case ENOMEM:
        case EAGAIN:
        case ETIMEDOUT:
        case ECONNREFUSED:
        case ECONNRESET:
        case ECONNABORTED:
        case ENOTCONN:
        case EPIPE:
        case ESHUTDOWN:
        case EHOSTUNREACH:
        case ENETUNREACH:
        case ENETDOWN:
        case ENOBUFS:
        case EMFILE:
        case ENFILE:
        case ENOLCK:
        case EINTR:
                return 3;
        default:
                return 2;
        }
}
