/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "pb-util.h"

/* Room for one more pointer in A. */
static bool arena_room(ncm__pb_arena *a)
{
        if (a->failed)
                return false;
        if (ncm__array_grow(a->v, a->cap, a->n) < 0) {
                a->failed = true;
                return false;
        }
        return true;
}

void *ncm__pb_alloc(ncm__pb_arena *a, size_t size)
{
        void *p;

        if (!arena_room(a))
                return NULL;
        p = calloc(1, size ? size : 1);
        if (!p) {
                a->failed = true;
                return NULL;
        }
        a->v[a->n++] = p;
        return p;
}

char *ncm__pb_str(ncm__pb_arena *a, const char *s)
{
        size_t len = strlen(s ? s : "");
        char *p = ncm__pb_alloc(a, len + 1);

        if (p)
                memcpy(p, s ? s : "", len);
        return p ? p : (char *)"";
}

char *ncm__pb_take(ncm__pb_arena *a, char *s)
{
        if (!s || !arena_room(a)) {
                free(s);
                a->failed = true;
                return (char *)"";
        }
        a->v[a->n++] = s;
        return s;
}

void ncm__pb_arena_done(ncm__pb_arena *a)
{
        for (size_t i = 0; i < a->n; i++)
                free(a->v[i]);
        free(a->v);
        *a = (ncm__pb_arena){0};
}

/* protobuf-c's output buffer, appending to an ncm_buf: no copy through a temporary */
typedef struct buf_sink {
        ProtobufCBuffer base;
        ncm_buf *out;
} buf_sink;

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
        ncm_buf_append(((buf_sink *)b)->out, data, len);
}

int ncm__pb_append(const ProtobufCMessage *msg, ncm_buf *out)
{
        buf_sink s = {{sink_append}, out};

        /* an empty message still leaves OUT allocated, so that callers can tell it apart */
        ncm_buf_append(out, "", 0);
        protobuf_c_message_pack_to_buffer(msg, &s.base);
        return ncm_buf_failed(out) ? -ENOMEM : 0;
}

int ncm__pb_pack(const ProtobufCMessage *msg, uint8_t **ret, size_t *ret_len)
{
        size_t len = protobuf_c_message_get_packed_size(msg);
        uint8_t *b = malloc(len ? len : 1);

        if (!b)
                return -ENOMEM;
        *ret_len = protobuf_c_message_pack(msg, b);
        *ret = b;
        return 0;
}

/*
 * Whether M packs into bytes that decode again: protobuf-c keeps the unknown fields it read and
 * writes them back, but reads some it cannot write back readably (field number 0, numbers past
 * the 29 bits a tag holds). A walk of the message and every message below it: no allocation,
 * no second decode.
 */
bool ncm__pb_writable(const ProtobufCMessage *m)
{
        const ProtobufCMessageDescriptor *d;

        if (!m)
                return true;
        for (size_t i = 0; i < m->n_unknown_fields; i++)
                if (m->unknown_fields[i].tag == 0 || m->unknown_fields[i].tag > 0x1fffffffu)
                        return false;
        d = m->descriptor;
        for (unsigned i = 0; i < d->n_fields; i++) {
                const ProtobufCFieldDescriptor *f = &d->fields[i];
                const char *base = (const char *)m;
                if (f->type != PROTOBUF_C_TYPE_MESSAGE)
                        continue;
                if (f->label == PROTOBUF_C_LABEL_REPEATED) {
                        size_t n = *(const size_t *)(base + f->quantifier_offset);
                        ProtobufCMessage *const *v =
                                        *(ProtobufCMessage *const *const *)(base + f->offset);
                        for (size_t k = 0; k < n; k++)
                                if (!ncm__pb_writable(v[k]))
                                        return false;
                        continue;
                }
                /* a oneof's member only when it is the one set */
                if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                    *(const uint32_t *)(base + f->quantifier_offset) != f->id)
                        continue;
                if (!ncm__pb_writable(*(ProtobufCMessage *const *)(base + f->offset)))
                        return false;
        }
        return true;
}
