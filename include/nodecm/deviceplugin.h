/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubelet's side of the device plugin API v1beta1, live, on one libuv loop: what makes
 * nodecmd a device-plugin host that plugins written for the kubelet work against unchanged.
 *
 *   Registration  v1beta1.Registration on DIR/kubelet.sock. Register checks the version and the
 *                 resource name with the kubelet's texts, refuses an endpoint that is not a
 *                 socket name in DIR, dials the plugin's socket (retrying for 10 s, as the
 *                 kubelet's blocking dial), calls GetDevicePluginOptions, connects the plugin
 *                 to the device manager (replacing the resource's previous endpoint) and only
 *                 then answers; the ListAndWatch stream starts after.
 *   ListAndWatch  every message is a complete snapshot of the resource's devices, health and
 *                 NUMA nodes, given to the device manager (ncm_devmgr_update_devices, which
 *                 writes the checkpoint). The stream's end, garbage on it, a message above the
 *                 receive limit or the plugin's death: the endpoint stops, its devices turn
 *                 unhealthy (allocatable 0, still held by their containers), and the resource
 *                 goes after the grace period unless the plugin registers again.
 *   directory     at start every socket in DIR is removed (the kubelet's clean-up, which makes
 *                 plugins register again); DIR is watched, and kubelet.sock is created again
 *                 when something deletes it, so plugins see what they see at a kubelet restart.
 *   capacity      the kubelet's GetCapacity on a timer: resources whose plugin left more than
 *                 the grace period ago are dropped.
 *   plugin calls  GetPreferredAllocation, Allocate and PreStartContainer are the device
 *                 manager's plugin ops (ncm_devmgr_plugin_ops), answered through sessions.
 *
 * Sessions: how a synchronous admission makes remote calls. The node's admission is one
 * synchronous, all-or-nothing transaction, and the loop must never wait in it. So a plugin call
 * made inside the transaction is answered from the session's answers when it has one; when it
 * has none the call is recorded and fails with -EINPROGRESS, which is not an admission decision:
 * ncm_node_admit() fails and rolls everything back. The caller then fetches the recorded calls
 * (ncm_dp_session_fetch; the loop runs on, other admissions go on) and runs the transaction
 * again when the answers are in; the same decisions make the same calls, which the session now
 * answers. While a pod waits, the devices its Allocate calls asked for are held for it
 * (ncm_devmgr_hold), as the kubelet's allocatedDevices holds them during its RPC, so a second
 * pass decides as the first did. A pass is one job on the node:
 *
 *     s = ncm_dp_session_new(host);
 *   pass:
 *     ncm_dp_session_enter(s);
 *     r = ncm_node_admit(node, pod, 0, &a, &err);      (or anything that calls the plugins)
 *     ncm_dp_session_leave(s);
 *     if (ncm_dp_session_pending(s)) {                  (r is -EINPROGRESS; the node is as before)
 *             ncm_dp_session_fetch(s, again, data);     (again() runs the pass once answered)
 *             return;
 *     }
 *     ... use r and a ...; ncm_dp_session_free(s);
 *
 * A failed plugin call (its status, or the timeout) is an answer too: the pass then makes the
 * kubelet's decision with the kubelet's text ("Allocate failed due to rpc error: code = Unknown
 * desc = ..., which is unexpected").
 *
 * Everything runs on the loop's thread; nothing here is thread-safe. The library never logs:
 * what a kubelet would log goes to the events' log callback.
 */
#ifndef NODECM_DEVICEPLUGIN_H
#define NODECM_DEVICEPLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/devicemanager.h>
#include <nodecm/error.h>
#include <nodecm/rpc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The Registration service's method, and the plugin's (kubelet's constants). */
#define NCM_DP_REGISTER_PATH "/v1beta1.Registration/Register"
#define NCM_DP_OPTIONS_PATH "/v1beta1.DevicePlugin/GetDevicePluginOptions"
#define NCM_DP_LIST_AND_WATCH_PATH "/v1beta1.DevicePlugin/ListAndWatch"
#define NCM_DP_PREFERRED_PATH "/v1beta1.DevicePlugin/GetPreferredAllocation"
#define NCM_DP_ALLOCATE_PATH "/v1beta1.DevicePlugin/Allocate"
#define NCM_DP_PRE_START_PATH "/v1beta1.DevicePlugin/PreStartContainer"
/* The Registration socket's name in the plugin directory. */
#define NCM_DP_SOCKET_NAME "kubelet.sock"

typedef struct ncm_dp_host ncm_dp_host;
typedef struct ncm_dp_session ncm_dp_session;

typedef enum ncm_dp_level {
        NCM_DP_ERROR = 0,
        NCM_DP_WARN,
        NCM_DP_INFO,
        NCM_DP_DEBUG,
} ncm_dp_level;

/* A key and value of a log event (value may be NULL: none). */
typedef struct ncm_dp_field {
        const char *key;
        const char *value;
} ncm_dp_field;

/* What the host tells its owner. Every member is optional. */
typedef struct ncm_dp_host_events {
        /* An event the kubelet would log: MSG and its fields (valid during the call). */
        void (*log)(void *data, ncm_dp_level level, const char *msg, const ncm_dp_field *fields,
                    size_t n);
        /*
         * The device manager's view of RESOURCE changed: a plugin registered or left, a
         * snapshot arrived, the resource was dropped after its grace period.
         */
        void (*changed)(void *data, const char *resource);
        void *data;
} ncm_dp_host_events;

typedef struct ncm_dp_host_opts {
        /* The plugin directory: DIR/kubelet.sock and the plugins' sockets (created 0750). */
        const char *dir;
        /* kubelet.sock's mode; 0: 0600. */
        unsigned socket_mode;
        /* How long Register keeps dialing a plugin socket that is not there yet, and then
         * waits for GetDevicePluginOptions (kubelet: 10 s dial, options without deadline). */
        uint32_t dial_timeout_ms;
        /*
         * Deadlines of the plugin calls. PreStartContainer: 30 s (the kubelet's). Allocate and
         * GetPreferredAllocation: 30 s; the kubelet sets none, so a hanging plugin blocks its
         * admissions for ever (kubernetes issue 117435; the 30 s of kubernetes PR 131383 is
         * used here). 0 in any of these: the default.
         */
        uint32_t allocate_timeout_ms;
        uint32_t preferred_timeout_ms;
        uint32_t pre_start_timeout_ms;
        /* How often the grace period is checked (the kubelet's node status period); 0: 10 s. */
        uint32_t capacity_period_ms;
        /* The grace period itself; 0: the kubelet's 5 minutes (ncm_devmgr_set_stop_grace). */
        uint64_t grace_period_ms;
        /* Transport limits of the Registration server and the plugin connections (NULL:
         * defaults, docs/rpc.md; a ListAndWatch message above max_recv_msg ends the stream). */
        const ncm_rpc_opts *rpc;
} ncm_dp_host_opts;

/*
 * A host on LOOP feeding M (borrowed; see ncm_dp_host_attach). Options are copied; EV may be
 * NULL. Nothing is started yet. Returns 0 with *RET, -EINVAL (no directory), -ENOMEM.
 */
NCM_API int ncm_dp_host_new(uv_loop_t *loop, ncm_devmgr *m, const ncm_dp_host_opts *opts,
                            const ncm_dp_host_events *ev, ncm_dp_host **ret, ncm_error *err);

/*
 * Start: create the directory (0750), remove the sockets in it (not the checkpoint, not
 * other files), listen on kubelet.sock, watch the directory, start the capacity timer.
 * Errors name the path (the host is then as before start).
 */
NCM_API int ncm_dp_host_start(ncm_dp_host *h, ncm_error *err);

/*
 * The node's device manager was replaced by M (a restart or reload rebuilt it; the old one
 * is gone): every plugin still connected registers on M again with its options and its last
 * snapshot. Sessions keep their answers; their holds are placed on M at their next pass.
 */
NCM_API void ncm_dp_host_attach(ncm_dp_host *h, ncm_devmgr *m);

/*
 * Stop: the Registration socket is closed and removed, plugin connections are closed (their
 * resources stop as at a kubelet shutdown), sessions' calls are cancelled. ON_CLOSED (may be
 * NULL) runs from the loop once every handle is closed; the host is freed then. Sessions
 * still open must be freed by their owners (they answer nothing any more).
 */
NCM_API void ncm_dp_host_close(ncm_dp_host *h, void (*on_closed)(void *data), void *data);

/* The directory and Registration socket path (valid while the host lives). */
NCM_API const char *ncm_dp_host_dir(const ncm_dp_host *h) NCM_PURE;
NCM_API const char *ncm_dp_host_socket(const ncm_dp_host *h) NCM_PURE;

/* One plugin connection as the host sees it (ncm_dp_host_plugins). */
typedef struct ncm_dp_plugin_info {
        const char *resource;
        const char *socket; /* the plugin's socket path */
        const char *state;  /* "dialing", "options", "running", "ended", "replaced" */
        bool current;       /* the resource's endpoint in the device manager */
        uint64_t snapshots; /* ListAndWatch messages received */
        uint64_t devices;   /* devices in the last one */
} ncm_dp_plugin_info;

/*
 * The plugin connections (registering, running, replaced but still connected), by resource
 * then age. *RET is malloc'd (free it; strings point into the host and stay valid until the
 * loop runs again). 0 or -ENOMEM.
 */
NCM_API int ncm_dp_host_plugins(const ncm_dp_host *h, ncm_dp_plugin_info **ret, size_t *ret_n);

/*
 * Append the host's metrics in Prometheus text with the kubelet's names:
 * kubelet_device_plugin_registration_total{resource_name} and
 * kubelet_device_plugin_alloc_duration_seconds{resource_name} (a histogram with the default
 * buckets), plus nodecm_device_plugin_calls_total{method,code}.
 */
NCM_API void ncm_dp_host_metrics(const ncm_dp_host *h, ncm_buf *out);

/* ---- sessions ---- */

/* A new session on H. NULL: out of memory. */
NCM_API ncm_dp_session *ncm_dp_session_new(ncm_dp_host *h);

/*
 * Free S: calls in flight are cancelled (their plugins see RST_STREAM CANCEL), its holds are
 * released, a pending fetch callback never runs. NULL-safe. Returns NULL.
 */
NCM_API ncm_dp_session *ncm_dp_session_free(ncm_dp_session *s);

/*
 * Plugin calls made until ncm_dp_session_leave() are answered from S (one session at a time
 * per host). Entering clears S's pending flag.
 */
NCM_API void ncm_dp_session_enter(ncm_dp_session *s);
/* End the pass: what its Allocate calls asked for is held for their pod until the next pass. */
NCM_API void ncm_dp_session_leave(ncm_dp_session *s);

/* Whether the last pass made a plugin call S had no answer for (its result must be dropped). */
NCM_API bool ncm_dp_session_pending(const ncm_dp_session *s) NCM_PURE;

/*
 * Make the calls the last pass recorded. DONE(S, DATA) runs from the loop, never from inside
 * this call, once every answer is in (a failure or a timeout is an answer). Returns 0, or
 * -EALREADY when a fetch is in progress, -EINVAL when nothing is pending.
 */
NCM_API int ncm_dp_session_fetch(ncm_dp_session *s, void (*done)(ncm_dp_session *s, void *data),
                                 void *data, ncm_error *err);

/* How many rounds of calls S made, and how many calls in all (for logs and tests). */
NCM_API unsigned ncm_dp_session_rounds(const ncm_dp_session *s) NCM_PURE;
NCM_API unsigned ncm_dp_session_calls(const ncm_dp_session *s) NCM_PURE;

/* After this many rounds a pass that still needs answers is refused (answers kept changing). */
#define NCM_DP_MAX_ROUNDS 8

#ifdef __cplusplus
}
#endif
#endif
