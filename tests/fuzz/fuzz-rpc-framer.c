/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The gRPC wire parsers: the length-prefixed message framer fed in chunks whose sizes come from
 * the input, grpc-timeout, grpc-message percent-decoding and the HTTP/2 frame-boundary tracker.
 * Input: 1 byte max-size selector, then the byte stream; chunk sizes are taken from the stream.
 */
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        size_t max = (size_t)1 << (data[0] % 24);
        data++;
        size--;

        ncm__rpc_framer f;
        ncm__rpc_framer_init(&f, max);
        size_t off = 0;
        while (off < size) {
                size_t chunk = 1 + data[off] % 64;
                if (chunk > size - off)
                        chunk = size - off;
                const uint8_t *p = data + off;
                size_t n = chunk;
                int r = 0;
                while (n > 0) {
                        size_t used = 0;
                        ncm__rpc_message m = {0};
                        uint64_t announced = 0;
                        r = ncm__rpc_framer_feed(&f, p, n, &used, &m, &announced);
                        if (r < 0)
                                break;
                        if (used > n)
                                abort();
                        if (r == 1) {
                                if (m.len > max)
                                        abort();
                                free(m.msg);
                        }
                        p += used;
                        n -= used;
                }
                if (r < 0)
                        break;
                off += chunk;
        }
        ncm__rpc_framer_done(&f);

        uint64_t ms;
        (void)ncm__rpc_timeout_parse((const char *)data, size < 12 ? size : 12, &ms);
        char *d = ncm__rpc_percent_decode((const char *)data, size);
        if (d && strlen(d) > size)
                abort();
        free(d);
        ncm__rpc_h2track t;
        ncm__rpc_h2track_init(&t, true);
        ncm__rpc_h2track_feed(&t, data, size);
        (void)ncm__rpc_h2track_mid_frame(&t);
        return 0;
}
