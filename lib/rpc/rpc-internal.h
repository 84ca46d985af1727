/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internals of lib/rpc shared between its files, the unit tests and the fuzz targets: the pure
 * parsers of the gRPC wire (message framing, grpc-timeout, grpc-message percent-encoding) and the
 * HTTP/2 frame-boundary tracker that the frame timeout relies on.
 */
#ifndef NCM_RPC_INTERNAL_H
#define NCM_RPC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>

/*
 * The gRPC length-prefixed message reader: 1 flag byte, 4-byte big-endian length, payload. Bytes
 * are fed in any chunks; the payload buffer is allocated only once the prefix has shown the
 * length to be within max, so an announced 100 MiB message costs nothing.
 */
typedef struct ncm__rpc_framer {
        uint8_t hdr[5];
        size_t hdr_len;
        uint8_t *msg;
        size_t msg_len;  /* announced length */
        size_t msg_have; /* bytes of payload received */
        size_t max;
} ncm__rpc_framer;

/* A complete message handed out by the framer; msg is malloc'd (NULL for length 0). */
typedef struct ncm__rpc_message {
        uint8_t *msg;
        size_t len;
        bool compressed;
} ncm__rpc_message;

void ncm__rpc_framer_init(ncm__rpc_framer *f, size_t max);
void ncm__rpc_framer_done(ncm__rpc_framer *f);

/*
 * Consume bytes from data[0..len) into f. Returns 1 when a message is complete (*ret_msg holds it,
 * *ret_used the bytes consumed; feed the rest again), 0 when all bytes were consumed without
 * completing one, -EMSGSIZE when the announced length exceeds max (*ret_len_announced holds it),
 * -EPROTO for a flag byte other than 0 or 1, -ENOMEM. After an error the framer is unusable.
 */
int ncm__rpc_framer_feed(ncm__rpc_framer *f, const uint8_t *data, size_t len, size_t *ret_used,
                         ncm__rpc_message *ret_msg, uint64_t *ret_len_announced);

/* True when the framer holds part of a message (a stream ending now is truncated). */
bool ncm__rpc_framer_partial(const ncm__rpc_framer *f);

/* Append the 5-byte prefix for a message of len bytes (uncompressed). */
void ncm__rpc_frame_prefix(uint8_t out[5], size_t len);

/*
 * grpc-timeout: 1 to 8 ASCII digits and a unit H M S m u n. Returns 0 with *ret_ms (rounded up to
 * whole milliseconds, capped at UINT32_MAX), -EINVAL otherwise.
 */
int ncm__rpc_timeout_parse(const char *s, size_t len, uint64_t *ret_ms);

/* Format ms as grpc-timeout ("500m", "100S"...) into out (at least 10 bytes). */
void ncm__rpc_timeout_format(uint64_t ms, char out[16]);

/* Percent-encode s[0..len) as grpc-message: bytes outside 0x20..0x7E and '%' become %XX. */
void ncm__rpc_percent_encode(ncm_buf *b, const char *s, size_t len);

/*
 * Decode a grpc-message value. Invalid escapes are kept verbatim (as gRPC does). Returns a
 * malloc'd NUL-terminated string or NULL for out of memory.
 */
char *ncm__rpc_percent_decode(const char *s, size_t len);

/*
 * Where the peer is in the HTTP/2 byte stream: inside the client preface, a frame header or a
 * frame payload. Used only to know whether a frame was started and not finished, so that a
 * peer sending half a frame can be timed out; nghttp2 validates the frames themselves.
 */
typedef struct ncm__rpc_h2track {
        uint32_t preface_left; /* bytes of the 24-byte client preface still expected */
        uint8_t hdr[9];
        uint32_t hdr_len;
        uint32_t payload_left;
        uint64_t completed; /* frames (and the preface) seen whole */
} ncm__rpc_h2track;

void ncm__rpc_h2track_init(ncm__rpc_h2track *t, bool server);
void ncm__rpc_h2track_feed(ncm__rpc_h2track *t, const uint8_t *data, size_t len);
/* True when a preface or frame has started and not ended. */
bool ncm__rpc_h2track_mid_frame(const ncm__rpc_h2track *t);

/* Whether name is reserved by gRPC/HTTP2 and so not custom metadata. */
bool ncm__rpc_reserved_header(const char *name, size_t len);

/* Whether key is a valid custom metadata key (lower-case token, not reserved). */
bool ncm__rpc_valid_md_key(const char *key);

/* Whether value is printable ASCII (what a metadata value may hold). */
bool ncm__rpc_valid_md_value(const char *value);

#endif
