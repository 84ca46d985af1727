/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The journal's line reader (base/journal.h): any text either fails with a message naming the
 * file and a line, or gives the lines of the file's generation in order, counts every whole
 * line, and tells a torn end exactly when the text does not end with a newline.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct count {
        size_t calls;
} count;

static int line(json_object *o, const char *where, void *userdata, ncm_error *err)
{
        count *c = userdata;

        if (strncmp(where, "journal: line ", 14) != 0 || !json_object_is_type(o, json_type_object))
                abort();
        c->calls++;
        /* an owner's refusal ends the reading, as a malformed line does */
        if (json_object_object_get_ex(o, "stop", NULL))
                return ncm_error_set(err, EINVAL, "%s: stop", where);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *text = (const char *)data;
        ncm__journal j = {.gen = size ? data[0] % 3 : 0};
        ncm_error err = NCM_ERROR_INIT;
        size_t newlines = 0;
        count c = {0};
        bool torn = false;
        int r;

        for (size_t i = 0; i < size; i++)
                newlines += data[i] == '\n';
        r = ncm__journal_read(&j, text, size, "journal", ": line ", line, &c, &torn, &err);
        if (r < 0) {
                if (strncmp(err.msg, "journal: line ", 14) != 0)
                        abort();
                return 0;
        }
        if (r != 0 || j.lines != newlines || c.calls > j.lines ||
            torn != (size > 0 && data[size - 1] != '\n'))
                abort();
        return 0;
}
