/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>

#include "api/pb-strings.h"

#define MAX_DEPTH 32

/* A varint at *P (before END) into *V; false when cut short or longer than 10 bytes. */
static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
        uint64_t x = 0;

        for (unsigned shift = 0; *p < end && shift < 70; shift += 7) {
                uint8_t b = *(*p)++;
                x |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *v = x;
                        return true;
                }
        }
        return false;
}

static int check(const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *end,
                 int depth, ncm_error *err)
{
        while (p < end) {
                uint64_t key, n;
                const ProtobufCFieldDescriptor *f;

                if (!varint(&p, end, &key))
                        return 0;
                switch (key & 7) {
                case 0:
                        if (!varint(&p, end, &n))
                                return 0;
                        continue;
                case 1:
                        if (end - p < 8)
                                return 0;
                        p += 8;
                        continue;
                case 5:
                        if (end - p < 4)
                                return 0;
                        p += 4;
                        continue;
                case 2:
                        break;
                default:
                        return 0; /* groups and unknown wire types: the unpack refuses them */
                }
                if (!varint(&p, end, &n) || n > (uint64_t)(end - p))
                        return 0;
                f = key >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(
                                                             d, (unsigned)(key >> 3))
                                           : NULL;
                if (f && f->type == PROTOBUF_C_TYPE_STRING && memchr(p, 0, (size_t)n))
                        return ncm_error_set(err, EINVAL, "%s.%s: a NUL byte in a string", d->name,
                                             f->name);
                if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && depth < MAX_DEPTH) {
                        int r = check((const ProtobufCMessageDescriptor *)f->descriptor, p, p + n,
                                      depth + 1, err);
                        if (r < 0)
                                return r;
                }
                p += n;
        }
        return 0;
}

int ncm__pb_check_strings(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                          ncm_error *err)
{
        return check(desc, data, data + len, 0, err);
}
