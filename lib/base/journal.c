/* SPDX-License-Identifier: Apache-2.0 */
/* A generational JSON-lines journal (journal.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "base/journal.h"
#include "base/json.h"

void ncm__journal_begin(const ncm__journal *j, ncm_buf *b)
{
        ncm_buf_printf(b, "{\"gen\": %llu, ", (unsigned long long)j->gen);
}

void ncm__journal_end(ncm_buf *b)
{
        ncm_buf_puts(b, "}\n");
}

int ncm__journal_append(ncm__journal *j, ncm_fs_batch *batch, const char *path, const ncm_buf *line,
                        ncm_error *err)
{
        size_t k = 0;
        int r;

        if (ncm_buf_failed(line))
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < line->len; i++)
                k += line->data[i] == '\n';
        r = ncm_fs_batch_append(batch, AT_FDCWD, path, line->data, line->len, 0600, err);
        if (r >= 0)
                j->lines += k;
        return r;
}

bool ncm__journal_over(const ncm__journal *j, size_t records, size_t adding)
{
        return j->lines + adding > records + NCM__JOURNAL_SLACK;
}

void ncm__journal_compacted(ncm__journal *j)
{
        j->gen++;
        j->lines = 0;
}

int ncm__journal_read(ncm__journal *j, const char *text, size_t len, const char *path,
                      const char *sep, ncm__journal_line_fn fn, void *userdata, bool *ret_torn,
                      ncm_error *err)
{
        size_t at = 0, line = 0;

        j->lines = 0;
        if (ret_torn)
                *ret_torn = false;
        while (at < len) {
                const char *nl = memchr(text + at, '\n', len - at);
                ncm_autojson o = NULL;
                json_object *g;
                int64_t gen;
                char where[320], gp[340];
                int r;

                if (!nl) {
                        if (ret_torn)
                                *ret_torn = true; /* an append a crash cut short: ignored */
                        return 0;
                }
                line++;
                j->lines++;
                snprintf(where, sizeof(where), "%s%s%zu", path, sep, line);
                r = ncm__json_parse(text + at, (size_t)(nl - (text + at)), where, &o, err);
                at = (size_t)(nl - text) + 1;
                if (r < 0)
                        return r;
                if (ncm__json_expect(o, json_type_object, where, err) < 0)
                        return -EINVAL;
                snprintf(gp, sizeof(gp), "%s: gen", where);
                g = ncm__json_get(o, "gen");
                if (!g)
                        return ncm_error_set(err, EINVAL, "%s: missing", gp);
                r = ncm__json_int(g, gp, 0, INT64_MAX, &gen, err);
                if (r < 0)
                        return r;
                if ((uint64_t)gen != j->gen)
                        continue; /* in the file already (a crash before the journal emptied) */
                r = fn(o, where, userdata, err);
                if (r < 0)
                        return r;
        }
        return 0;
}
