/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gRPC over HTTP/2, sans I/O: libnghttp2 for HTTP/2, our own gRPC framing, protobuf-c helpers.
 *
 * The core does no I/O and owns no clock or timer. A connection (ncm_rpc_conn) is fed the bytes
 * read from its socket (ncm_rpc_conn_recv), hands out the bytes to write (ncm_rpc_conn_pull /
 * ncm_rpc_conn_sent), and is told the time through its environment (ncm_rpc_env) and when its
 * next deadline passes (ncm_rpc_conn_tick). An event loop binding drives it:
 * include/nodecm/rpc-uv.h for libuv and unix sockets. Everything runs on one thread.
 *
 * Calls are unary or server-streaming: exactly one request message, any number of responses.
 * Messages are raw bytes (the serialized protobuf); ncm_rpc_pack() and ncm_rpc_unpack() convert
 * protobuf-c messages, and a proxy forwards the bytes without decoding them.
 *
 * Server side: a handler is called with the request message and owns the call until it calls
 * ncm_rpc_call_finish() exactly once, possibly much later (asynchronous answers). If the call ends
 * first (peer reset, connection lost, deadline passed), the call's on_cancel runs; the handler
 * must still call ncm_rpc_call_finish() to release it (sends then do nothing and return -EPIPE).
 *
 * Client side: ncm_rpc_conn_call() starts a call with its request; on_headers, on_message and
 * finally on_close (exactly once, with the status) report what came back. After on_close the call
 * handle is gone.
 *
 * Callbacks never run from inside nghttp2: they run when ncm_rpc_conn_recv(), ncm_rpc_conn_tick()
 * or ncm_rpc_conn_eof() are about to return. Callbacks may start and finish calls and free the
 * connection (the free then completes when the callback returns).
 */
#ifndef NODECM_RPC_H
#define NODECM_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/error.h>
#include <protobuf-c/protobuf-c.h>

#ifdef __cplusplus
extern "C" {
#endif

/* gRPC status codes (grpc/include/grpc/impl/codegen/status.h), wire values. */
typedef enum ncm_rpc_code {
        NCM_RPC_OK = 0,
        NCM_RPC_CANCELLED = 1,
        NCM_RPC_UNKNOWN = 2,
        NCM_RPC_INVALID_ARGUMENT = 3,
        NCM_RPC_DEADLINE_EXCEEDED = 4,
        NCM_RPC_NOT_FOUND = 5,
        NCM_RPC_ALREADY_EXISTS = 6,
        NCM_RPC_PERMISSION_DENIED = 7,
        NCM_RPC_RESOURCE_EXHAUSTED = 8,
        NCM_RPC_FAILED_PRECONDITION = 9,
        NCM_RPC_ABORTED = 10,
        NCM_RPC_OUT_OF_RANGE = 11,
        NCM_RPC_UNIMPLEMENTED = 12,
        NCM_RPC_INTERNAL = 13,
        NCM_RPC_UNAVAILABLE = 14,
        NCM_RPC_DATA_LOSS = 15,
        NCM_RPC_UNAUTHENTICATED = 16,
} ncm_rpc_code;

/* "OK", "CANCELLED", ... as gRPC spells them; "CODE(n)" text for unknown values is not given:
 * returns NULL for a code outside 0..16. */
NCM_API const char *ncm_rpc_code_name(int code) NCM_PURE;

/*
 * Limits and timeouts of a connection. Start from ncm_rpc_opts_default() and change fields.
 * Memory held for one connection is bounded by: max_recv_msg per stream being received, one
 * stream window (stream_window) of unconsumed data per paused client stream, send_queue_max of
 * queued responses plus one message, and out_max of serialized frames not yet written.
 */
typedef struct ncm_rpc_opts {
        size_t max_recv_msg;             /* larger messages: RESOURCE_EXHAUSTED; default 4 MiB */
        size_t max_send_msg;             /* larger messages are refused; default 4 MiB */
        uint32_t max_concurrent_streams; /* advertised to the peer; default 100 */
        uint32_t stream_window;          /* HTTP/2 initial window per stream; default 1 MiB */
        uint32_t conn_window;            /* HTTP/2 window of the connection; default 4 MiB */
        size_t send_queue_high;          /* per call: send returns 1 above this; default 1 MiB */
        size_t send_queue_max;           /* per connection: send refuses above; default 8 MiB */
        size_t out_max;                  /* unwritten frames: stop reading above; default 256 KiB */
        uint32_t max_header_list;        /* bytes of a header block; default 64 KiB */
        uint32_t handshake_timeout_ms;   /* until the peer's preface+SETTINGS; default 10 s */
        uint32_t frame_timeout_ms;       /* a started frame must complete; default 10 s */
        uint32_t stall_timeout_ms;       /* the peer takes none of our output; default 30 s */
        uint32_t idle_timeout_ms;        /* no call open for this long: GOAWAY; 0 = never */
        const char *user_agent;          /* client; default "nodecm-rpc/VERSION"; copied */
        /*
         * What the connection refuses or catches, for its owner's log (the library prints
         * nothing): a server request refused for its headers (RST_STREAM PROTOCOL_ERROR), a
         * connection broken by the peer's protocol error, a unary handler that finished OK
         * without its one response message or sent a second one. LEVEL is
         * NCM_RPC_LOG_ERROR for our own bugs, NCM_RPC_LOG_WARN for the peer's; PATH is the
         * method path ("" when not known yet); WHAT says what and why. Runs on the
         * connection's thread, never inside nghttp2; it must not call into the connection.
         * NULL: nothing is told. Members below are appended, never reordered.
         */
        void (*log)(void *data, int level, const char *path, const char *what);
        void *log_data;
} ncm_rpc_opts;

/* Levels of ncm_rpc_opts.log. */
enum {
        NCM_RPC_LOG_ERROR = 0,
        NCM_RPC_LOG_WARN = 1,
};

/* The defaults above. */
NCM_API void ncm_rpc_opts_default(ncm_rpc_opts *opts);

/*
 * Metadata: custom headers of a call (not the pseudo-headers nor the ones gRPC reserves:
 * content-type, te, user-agent, grpc-*). Keys are lower case. Values of "-bin" keys are passed as
 * they are on the wire (base64); the transport does not decode them.
 */
typedef struct ncm_rpc_md {
        const char *key;
        const char *value;
} ncm_rpc_md;

/* The value of key in md[0..n) (first match), or NULL. */
NCM_API const char *ncm_rpc_md_get(const ncm_rpc_md *md, size_t n, const char *key);

/* The environment a binding gives a connection: its clock and a way to be told to look again. */
typedef struct ncm_rpc_env {
        /* Monotonic milliseconds. */
        uint64_t (*now_ms)(void *data);
        /*
         * The connection has something new to write or a new deadline, outside of recv/tick
         * (e.g. an asynchronous handler finished). The binding should pull and re-arm its timer
         * soon; it must not call back into the connection from inside wake.
         */
        void (*wake)(void *data);
        void *data;
} ncm_rpc_env;

typedef struct ncm_rpc_conn ncm_rpc_conn;
typedef struct ncm_rpc_server ncm_rpc_server;
typedef struct ncm_rpc_call ncm_rpc_call;

/* ---- server ---------------------------------------------------------------------------- */

/*
 * A method handler: req[0..len) is the request message (valid during the call only). The handler
 * owns call until ncm_rpc_call_finish().
 */
typedef void (*ncm_rpc_handler_fn)(ncm_rpc_call *call, const uint8_t *req, size_t len, void *data);

/* A server: options and the method table shared by its connections. NULL: out of memory. */
NCM_API ncm_rpc_server *ncm_rpc_server_new(const ncm_rpc_opts *opts);

/*
 * Free a server. Its connections must be freed first. Returns NULL.
 */
NCM_API ncm_rpc_server *ncm_rpc_server_free(ncm_rpc_server *srv);

/*
 * Route path ("/package.Service/Method") of a unary method to fn. A unary call that succeeds
 * carries exactly one response message, even an empty one (gRPC; grpc-go clients fail a call
 * without it: "EOF", or "cardinality violation" from 2025): the connection holds every unary
 * handler to it. A second ncm_rpc_call_send() returns -EPROTO and sends nothing;
 * ncm_rpc_call_finish(NCM_RPC_OK) without a message sent ends the call with INTERNAL
 * "grpc: unary handler finished OK without a response message" instead. Both are told to
 * opts.log as errors. Returns 0, -EEXIST for a path already routed, -EINVAL for a path not of
 * that form, -ENOMEM.
 */
NCM_API int ncm_rpc_server_add(ncm_rpc_server *srv, const char *path, ncm_rpc_handler_fn fn,
                               void *data);

/* As ncm_rpc_server_add() for a server-streaming method: any number of response messages. */
NCM_API int ncm_rpc_server_add_streaming(ncm_rpc_server *srv, const char *path,
                                         ncm_rpc_handler_fn fn, void *data);

/*
 * Route every path without a handler of its own to fn (a proxy forwarding unknown methods).
 * Without one, such calls end with UNIMPLEMENTED "unknown service S" or "unknown method M for
 * service S", as grpc-go answers. The fallback's calls are of no known kind: the message count
 * is the handler's business (a proxy relays what the upstream server sent).
 */
NCM_API void ncm_rpc_server_set_fallback(ncm_rpc_server *srv, ncm_rpc_handler_fn fn, void *data);

/* The server's options (as given, defaults applied). */
NCM_API const ncm_rpc_opts *ncm_rpc_server_opts(const ncm_rpc_server *srv) NCM_PURE;

/* A server-side connection on srv. NULL: out of memory. */
NCM_API ncm_rpc_conn *ncm_rpc_conn_new_server(ncm_rpc_server *srv, const ncm_rpc_env *env);

/* The method path of a call ("/package.Service/Method"). */
NCM_API const char *ncm_rpc_call_path(const ncm_rpc_call *call) NCM_PURE;

/* The request's custom metadata; *ret_n gets the count. */
NCM_API const ncm_rpc_md *ncm_rpc_call_metadata(const ncm_rpc_call *call, size_t *ret_n);

/* Milliseconds left before the call's deadline (grpc-timeout); -1 when it has none; 0 when passed.
 */
NCM_API int64_t ncm_rpc_call_timeout_left(const ncm_rpc_call *call);

/* True once the call has ended for the peer (cancelled, reset, deadline, connection lost). */
NCM_API bool ncm_rpc_call_is_cancelled(const ncm_rpc_call *call) NCM_PURE;

/*
 * Callbacks of a server call, all optional. on_cancel runs once if the call ends before the
 * handler finished it (code says why: CANCELLED, DEADLINE_EXCEEDED, UNAVAILABLE for a lost
 * connection). on_writable runs when queued responses drained below half of send_queue_high
 * after a send returned 1.
 */
typedef struct ncm_rpc_call_ops {
        void (*on_cancel)(ncm_rpc_call *call, ncm_rpc_code code, void *data);
        void (*on_writable)(ncm_rpc_call *call, void *data);
} ncm_rpc_call_ops;

/* Set the call's callbacks (ops is copied). */
NCM_API void ncm_rpc_call_set_ops(ncm_rpc_call *call, const ncm_rpc_call_ops *ops, void *data);

/*
 * Add response metadata: to the response headers (trailer false; only before the first message
 * or ncm_rpc_call_send_headers) or to the trailers. key must be a lower-case token not reserved
 * by gRPC, value printable ASCII. Returns 0, -EINVAL (bad key/value), -EALREADY (headers sent),
 * -ENOMEM.
 */
NCM_API int ncm_rpc_call_add_metadata(ncm_rpc_call *call, bool trailer, const char *key,
                                      const char *value);

/* Send the response headers now (a streaming call that has no message yet). Returns 0 or -EPIPE. */
NCM_API int ncm_rpc_call_send_headers(ncm_rpc_call *call);

/*
 * Queue one response message msg[0..len) (copied). Returns 0 when queued; 1 when queued and the
 * call's queue is now above send_queue_high (wait for on_writable before sending more); -ENOBUFS
 * when the connection's queue is above send_queue_max (not queued); -EMSGSIZE above max_send_msg;
 * -EPROTO for a second message of a unary call (not queued); -EPIPE when the call has ended;
 * -ENOMEM.
 */
NCM_API int ncm_rpc_call_send(ncm_rpc_call *call, const uint8_t *msg, size_t len);

/* As ncm_rpc_call_send() with a protobuf-c message. */
NCM_API int ncm_rpc_call_send_pb(ncm_rpc_call *call, const ProtobufCMessage *msg);

/*
 * End the call with a status (message may be NULL; any bytes, percent-encoded on the wire) and
 * release it: the handle is invalid afterwards. Queued messages are sent first. Without a
 * message sent before, an error goes out "trailers-only"; so does OK on a streaming call, while
 * OK on a unary call without its message becomes INTERNAL (ncm_rpc_server_add). Finishing a
 * cancelled call only releases it. Never fails.
 */
NCM_API void ncm_rpc_call_finish(ncm_rpc_call *call, ncm_rpc_code code, const char *message);

/* ---- client ---------------------------------------------------------------------------- */

/* A client-side connection. opts NULL: defaults. NULL: out of memory. */
NCM_API ncm_rpc_conn *ncm_rpc_conn_new_client(const ncm_rpc_opts *opts, const ncm_rpc_env *env);

/* Callbacks of a client call. on_close is required, the others optional. */
typedef struct ncm_rpc_client_ops {
        /* Response headers arrived; md: custom metadata. */
        void (*on_headers)(ncm_rpc_call *call, const ncm_rpc_md *md, size_t n, void *data);
        /* One response message (bytes valid during the callback). */
        void (*on_message)(ncm_rpc_call *call, const uint8_t *msg, size_t len, void *data);
        /*
         * The call ended: code and message (never NULL, "" when none) as sent by the server, or
         * derived as docs/rpc.md's table says; md: trailing metadata. The handle is freed after.
         */
        void (*on_close)(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                         const ncm_rpc_md *md, size_t n, void *data);
} ncm_rpc_client_ops;

/*
 * Start a call of path with the request req[0..len), custom metadata md[0..n_md) and a timeout
 * (milliseconds, sent as grpc-timeout and enforced here; 0 = none). On success *ret_call (may be
 * NULL) gets the handle, valid until on_close. Returns 0; -EINVAL (bad path or metadata);
 * -EMSGSIZE (req above max_send_msg); -ENOTCONN (the connection is closing or closed: GOAWAY,
 * EOF, error); -ENOMEM. on_close is never called from inside this function.
 */
NCM_API int ncm_rpc_conn_call(ncm_rpc_conn *conn, const char *path, const ncm_rpc_md *md,
                              size_t n_md, uint32_t timeout_ms, const uint8_t *req, size_t len,
                              const ncm_rpc_client_ops *ops, void *data, ncm_rpc_call **ret_call,
                              ncm_error *err);

/*
 * Cancel a client call: RST_STREAM CANCEL to the server; on_close runs (CANCELLED, "Cancelled")
 * when the current callback or recv returns, or from the next pull/tick. Idempotent.
 */
NCM_API void ncm_rpc_call_cancel(ncm_rpc_call *call);

/*
 * Flow control of a client call: while paused, received data is not acknowledged, so the server
 * can send at most one stream window more (a proxy whose downstream is slow). Messages that
 * arrive are still delivered.
 */
NCM_API void ncm_rpc_call_pause(ncm_rpc_call *call, bool paused);

/* ---- the connection ------------------------------------------------------------------------ */

/*
 * Free a connection. Live calls are ended first: client calls get on_close (UNAVAILABLE), server
 * calls get on_cancel and are detached (their handlers still finish them). Called from a callback
 * of this connection, the free completes when the callback returns. Returns NULL.
 */
NCM_API ncm_rpc_conn *ncm_rpc_conn_free(ncm_rpc_conn *conn);

/*
 * Feed bytes read from the peer. Returns 0, or a negative errno when the connection is broken
 * (protocol error: a GOAWAY is queued; pull what is left, then close). Callbacks run before it
 * returns.
 */
NCM_API int ncm_rpc_conn_recv(ncm_rpc_conn *conn, const uint8_t *data, size_t len, ncm_error *err);

/* The peer closed its side (read returned 0) or the socket failed: every open call ends. */
NCM_API void ncm_rpc_conn_eof(ncm_rpc_conn *conn);

/*
 * The bytes to write next: *ret_data and *ret_len (len 0: nothing). The bytes stay valid and
 * unchanged until ncm_rpc_conn_sent(); pull again only after that.
 */
NCM_API int ncm_rpc_conn_pull(ncm_rpc_conn *conn, const uint8_t **ret_data, size_t *ret_len);

/* n bytes of what pull returned were written. */
NCM_API void ncm_rpc_conn_sent(ncm_rpc_conn *conn, size_t n);

/* Whether the binding should read from the socket now (false: back-pressure, or done). */
NCM_API bool ncm_rpc_conn_want_read(const ncm_rpc_conn *conn);

/*
 * The connection has nothing left to do: both sides closed or an error or timeout ended it and
 * everything pullable was pulled. The binding closes the socket and frees the connection.
 */
NCM_API bool ncm_rpc_conn_done(const ncm_rpc_conn *conn);

/* The next time (now_ms clock) tick wants to run; UINT64_MAX: none. */
NCM_API uint64_t ncm_rpc_conn_next_tick(const ncm_rpc_conn *conn);

/* Run what is due: call deadlines, handshake, frame and idle timeouts. */
NCM_API void ncm_rpc_conn_tick(ncm_rpc_conn *conn);

/*
 * Graceful shutdown: GOAWAY (no new calls; calls in progress go on). The connection becomes done
 * when its last call ends. Client: new calls are refused with -ENOTCONN.
 */
NCM_API void ncm_rpc_conn_shutdown(ncm_rpc_conn *conn);

/* Number of calls in progress on the connection. */
NCM_API size_t ncm_rpc_conn_active_calls(const ncm_rpc_conn *conn) NCM_PURE;

/*
 * Whether new client calls can start on conn (no GOAWAY, EOF or error seen). A client reconnects
 * when this turns false.
 */
NCM_API bool ncm_rpc_conn_usable(const ncm_rpc_conn *conn) NCM_PURE;

/* ---- protobuf-c helpers -------------------------------------------------------------------- */

/* Serialize msg into a malloc'd buffer: *ret_buf (free() it) and *ret_len. Returns 0 or -ENOMEM. */
NCM_API int ncm_rpc_pack(const ProtobufCMessage *msg, uint8_t **ret_buf, size_t *ret_len);

/*
 * Parse data[0..len) as a message of type desc into *ret_msg (free it with
 * protobuf_c_message_free_unpacked). Returns 0 or -EINVAL.
 */
NCM_API int ncm_rpc_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                           ProtobufCMessage **ret_msg);

#ifdef __cplusplus
}
#endif

#endif
