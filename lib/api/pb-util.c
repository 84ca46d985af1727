/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pb-util.h"

/* Room for one more pointer in A. */
static bool arena_room(ncm__pb_arena *a)
{
        if (a->failed)
                return false;
        if (a->n == a->cap) {
                size_t cap = a->cap ? a->cap * 2 : 32;
                void **v = realloc(a->v, cap * sizeof(*v));
                if (!v) {
                        a->failed = true;
                        return false;
                }
                a->v = v;
                a->cap = cap;
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
