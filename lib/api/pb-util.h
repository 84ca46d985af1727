/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: building and packing protobuf-c messages, the one way lib/ does it. A message
 * built from borrowed strings and arrays keeps what it had to allocate in an arena, freed
 * together once the message is packed; a failed allocation marks the arena, and a marked
 * arena's message is not packed.
 */
#ifndef NCM_API_PB_UTIL_H
#define NCM_API_PB_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>
#include <nodecm/buf.h>

/* Every allocation of one message being built. Zero-initialised is empty. */
typedef struct ncm__pb_arena {
        void **v;
        size_t n, cap;
        bool failed; /* an allocation failed: the message must not be packed */
} ncm__pb_arena;

/* SIZE zeroed bytes owned by A; NULL (A marked failed) when out of memory. */
void *ncm__pb_alloc(ncm__pb_arena *a, size_t size);
/* A copy of S (NULL: "") owned by A; "" (A marked failed) when out of memory. */
char *ncm__pb_str(ncm__pb_arena *a, const char *s);
/* S (malloc'd, may be NULL: A marked failed) becomes A's; "" when it could not. */
char *ncm__pb_take(ncm__pb_arena *a, char *s);
void ncm__pb_arena_done(ncm__pb_arena *a);

/* Pack MSG and append it to OUT (allocated even for an empty message); -ENOMEM. */
int ncm__pb_append(const ProtobufCMessage *msg, ncm_buf *out);
/* Whether MSG (a decoded message, maybe edited) packs into bytes that decode again. */
bool ncm__pb_writable(const ProtobufCMessage *msg);
/* Pack MSG into *RET (malloc'd, at least one byte) and *RET_LEN; -ENOMEM. */
int ncm__pb_pack(const ProtobufCMessage *msg, uint8_t **ret, size_t *ret_len);

#endif
