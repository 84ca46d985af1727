/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "cli.h"

int cli_fail(const ncm_error *err)
{
        fprintf(stderr, "nodecm: %s\n", err->msg[0] ? err->msg : ncm_strerror(err->code));
        return ncm_error_exit_status(err->code ? err->code : EINVAL);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
        va_list ap;
        fprintf(stderr, "nodecm %s: ", cmd);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, " (see 'nodecm %s --help')\n", cmd);
        return 2;
}

int cli_emit(const char *text, size_t len)
{
        if (len && fwrite(text, 1, len, stdout) != len) {
                fprintf(stderr, "nodecm: write to standard output: %s\n", strerror(errno));
                return 2;
        }
        if (fflush(stdout) != 0) {
                fprintf(stderr, "nodecm: write to standard output: %s\n", strerror(errno));
                return 2;
        }
        return 0;
}

int cli_emit_buf(ncm_buf *out)
{
        ncm_error err = NCM_ERROR_INIT;
        int rc;

        if (ncm_buf_failed(out)) {
                ncm_buf_done(out);
                ncm_error_set(&err, ENOMEM, "out of memory");
                return cli_fail(&err);
        }
        rc = cli_emit(out->data ? out->data : "", out->len);
        ncm_buf_done(out);
        return rc;
}
