/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "cli.h"

/*
 * Print TEXT on stderr as one line: a name in a message may hold control characters, ANSI
 * escapes or bidi overrides (a hostile pod, a damaged file), which are shown escaped.
 */
static void put_line(const char *text)
{
        ncm_buf b = NCM_BUF_INIT;

        ncm_buf_put_printable(&b, text, strlen(text), 0);
        ncm_buf_putc(&b, '\n');
        fputs(ncm_buf_failed(&b) ? "nodecm: out of memory\n" : b.data, stderr);
        ncm_buf_done(&b);
}

int cli_fail(int r, const ncm_error *err)
{
        int code = err && err->code ? err->code : r < 0 ? -r : EINVAL;
        char line[NCM_ERROR_MSG_MAX + 16];

        snprintf(line, sizeof(line), "nodecm: %s",
                 err && err->msg[0] ? err->msg : ncm_strerror(code));
        put_line(line);
        return ncm_error_exit_status(code);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
        char msg[1024], line[1200];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        snprintf(line, sizeof(line), "nodecm %s: %s (see 'nodecm %s --help')", cmd, msg, cmd);
        put_line(line);
        return 2;
}

int cli_emit(const char *text, size_t len)
{
        ncm_buf safe = NCM_BUF_INIT;

        /* the output names pods and devices: nothing in them may act on a terminal */
        ncm_buf_put_printable(&safe, text, len, NCM_BUF_KEEP_NEWLINES);
        if (ncm_buf_failed(&safe)) {
                ncm_buf_done(&safe);
                fprintf(stderr, "nodecm: out of memory\n");
                return 2;
        }
        text = safe.data ? safe.data : "";
        len = safe.len;
        if (len && fwrite(text, 1, len, stdout) != len) {
                int e = errno;
                ncm_buf_done(&safe);
                fprintf(stderr, "nodecm: write to standard output: %s\n", strerror(e));
                return 2;
        }
        ncm_buf_done(&safe);
        if (fflush(stdout) != 0) {
                fprintf(stderr, "nodecm: write to standard output: %s\n", strerror(errno));
                return 2;
        }
        return 0;
}

int cli_emit_buf(ncm_buf *out)
{
        int rc;

        if (ncm_buf_failed(out)) {
                ncm_buf_done(out);
                return cli_fail(-ENOMEM, NULL);
        }
        rc = cli_emit(out->data ? out->data : "", out->len);
        ncm_buf_done(out);
        return rc;
}

/* SUB's own page (cli_subcommand). */
static void sub_usage(const char *cmd, const cli_sub *sub, void (*usage)(FILE *f),
                      void (*options)(FILE *f))
{
        if (!sub->synopsis || !options) {
                usage(stdout);
                return;
        }
        printf("Usage: nodecm %s %s\n\n%s\n", cmd, sub->synopsis, sub->about ? sub->about : "");
        options(stdout);
}

int cli_subcommand(int argc, char **argv, const char *cmd, const cli_sub *subs, size_t n,
                   const struct option *opts, cli_option_fn option, void *ud,
                   void (*usage)(FILE *f), void (*options)(FILE *f), cli_parsed *ret)
{
        int c, idx = 0, r = 0;
        size_t npos;

        if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
                usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? 2 : -1;
        }
        ret->sub = n;
        for (size_t i = 0; i < n; i++)
                if (strcmp(argv[1], subs[i].name) == 0)
                        ret->sub = i;
        if (ret->sub == n) {
                fprintf(stderr, "nodecm %s: unknown subcommand '%s' (", cmd, argv[1]);
                for (size_t i = 0; i < n; i++)
                        fprintf(stderr, "%s%s", i ? ", " : "", subs[i].name);
                fprintf(stderr, ")\n");
                return 2;
        }
        snprintf(ret->name, sizeof(ret->name), "%s %s", cmd, argv[1]);
        opterr = 0;
        optind = 1;
        while (r == 0 && (c = getopt_long(argc - 1, argv + 1, ":h", opts, &idx)) != -1) {
                if (c == 'h') {
                        sub_usage(cmd, &subs[ret->sub], usage, options);
                        return -1;
                }
                r = c == ':' ? cli_usage_error(ret->name, "option '%s' needs a value", argv[optind])
                    : c == '?' ? cli_usage_error(ret->name, "unknown option '%s'", argv[optind])
                               : option(ud, c, opts[idx].name, optarg);
        }
        if (r != 0)
                return r;
        npos = (size_t)(argc - 1 - optind);
        if (npos < subs[ret->sub].min || npos > subs[ret->sub].max)
                return cli_usage_error(ret->name, "expected %s", subs[ret->sub].what);
        for (size_t i = 0; i < 4; i++)
                ret->pos[i] = i < npos ? argv[1 + optind + i] : NULL;
        return 0;
}
