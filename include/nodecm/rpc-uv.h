/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The libuv binding of lib/rpc: gRPC servers and clients on unix sockets, driven by one uv loop
 * on one thread. It owns the sockets (non-blocking, written with MSG_NOSIGNAL so a peer that went
 * away never raises SIGPIPE), feeds bytes to the sans-I/O connections of nodecm/rpc.h, applies
 * their back-pressure (a connection that cannot write stops being read) and runs their timers.
 *
 * Targets: "unix:/abs/path", "unix:///abs/path" or a plain path (as gRPC spells unix targets;
 * "unix://relative" is refused as gRPC does).
 */
#ifndef NODECM_RPC_UV_H
#define NODECM_RPC_UV_H

#include <uv.h>
#include <nodecm/rpc.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncm_rpc_uv_server ncm_rpc_uv_server;
typedef struct ncm_rpc_uv_client ncm_rpc_uv_client;

/*
 * The socket path of a target into out (size n). Returns 0, -EINVAL (not a unix target, or an
 * authority-based URI), -ENAMETOOLONG (longer than sun_path).
 */
NCM_API int ncm_rpc_uv_target_path(const char *target, char *out, size_t n, ncm_error *err);

/*
 * Serve srv on target: a stale socket file there is removed first (as the kubelet does), the
 * socket gets mode when mode is not 0. srv must outlive the returned server. Returns 0 with
 * *ret, or -errno (bind/listen failure, named in err).
 */
NCM_API int ncm_rpc_uv_listen(uv_loop_t *loop, ncm_rpc_server *srv, const char *target,
                              unsigned mode, ncm_rpc_uv_server **ret, ncm_error *err);

/*
 * Stop serving: the listening socket is closed and removed. graceful: every connection gets a
 * GOAWAY and closes when its calls are done; otherwise connections close now and handlers see
 * on_cancel. on_closed (may be NULL) runs once everything is closed; s is freed then.
 */
NCM_API void ncm_rpc_uv_server_close(ncm_rpc_uv_server *s, bool graceful,
                                     void (*on_closed)(void *data), void *data);

/* Connections currently open on s. */
NCM_API size_t ncm_rpc_uv_server_connections(const ncm_rpc_uv_server *s) NCM_PURE;

/*
 * Connect to target. AF_UNIX answers at once: a missing or refused socket is -ENOENT or
 * -ECONNREFUSED here (err names the path). Calls can be started on the connection right away.
 * opts NULL: defaults.
 */
NCM_API int ncm_rpc_uv_connect(uv_loop_t *loop, const char *target, const ncm_rpc_opts *opts,
                               ncm_rpc_uv_client **ret, ncm_error *err);

/* The client's connection, for ncm_rpc_conn_call(); ncm_rpc_conn_usable() says if it is alive. */
NCM_API ncm_rpc_conn *ncm_rpc_uv_client_conn(ncm_rpc_uv_client *cl) NCM_PURE;

/*
 * Close and free a client: calls still open end with UNAVAILABLE (their on_close runs before
 * this returns); the socket is closed when the loop next runs. Safe from a callback of its calls.
 */
NCM_API void ncm_rpc_uv_client_close(ncm_rpc_uv_client *cl);

#ifdef __cplusplus
}
#endif

#endif
