/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control API, nodecm.v1.Node (lib/api/nodecm-v1.proto), as both of its front ends use it:
 * nodecmd serves it on its control socket, and `nodecm node ...` runs the very same handlers
 * either on a node it opened itself (--root-dir) or through the daemon (--connect). So the two
 * print the same bytes by construction: the reply of a call carries, when asked, the output
 * the command prints.
 *
 *   request  ncm_ctl_request_pack()          a request message from plain fields
 *   serve    ncm_ctl_handle()                 one call on a node: the reply, and what changed
 *   client   ncm_ctl_call(), ncm_ctl_watch()  a blocking call to a daemon's socket
 *   print    ncm_ctl_reply_output()           a reply's output text and its verdict
 *
 * Messages cross this API packed (protobuf bytes), so that no caller needs the generated
 * protobuf-c types. Nothing here is thread-safe; a node serves one call at a time.
 */
#ifndef NODECM_CTL_H
#define NODECM_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/node.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The service, and its methods in a fixed order. */
#define NCM_CTL_SERVICE "nodecm.v1.Node"

typedef enum ncm_ctl_method {
        NCM_CTL_ADMIT = 0,
        NCM_CTL_REMOVE_CONTAINER,
        NCM_CTL_REMOVE_POD,
        NCM_CTL_LIST_PODS,
        NCM_CTL_GET_STATE,
        NCM_CTL_EXPLAIN,
        NCM_CTL_WATCH, /* server streaming: events, see ncm_ctl_result.event */
        NCM_CTL_RECONCILE,
        NCM_CTL_LIST_DEVICES, /* the device manager's resources and devices (`nodecm devices`) */
        NCM_CTL_RESIZE,       /* an in-place resize (nodecm/node-resize.h) */
        NCM_CTL_N_METHODS,
} ncm_ctl_method;

/* "/nodecm.v1.Node/Admit", ...; NULL for a value out of range. */
NCM_API const char *ncm_ctl_method_path(ncm_ctl_method m) NCM_PURE;
/* "Admit", ... (the method's name alone). */
NCM_API const char *ncm_ctl_method_name(ncm_ctl_method m) NCM_PURE;
/* The method of PATH, or -1. */
NCM_API int ncm_ctl_method_from_path(const char *path) NCM_PURE;
/* Whether M changes the node (it must then be the only call at work on it). */
NCM_API bool ncm_ctl_method_mutates(ncm_ctl_method m) NCM_PURE;

/* How a reply's output is written (the proto's Format). */
typedef enum ncm_ctl_format {
        NCM_CTL_FORMAT_NONE = 0,
        NCM_CTL_FORMAT_JSON = 1,
        NCM_CTL_FORMAT_TEXT = 2,
        NCM_CTL_FORMAT_HTML = 3, /* GetState: the node map (nodecm/map.h), one page */
} ncm_ctl_format;

/* The fields of a request; each method reads the ones it takes. */
typedef struct ncm_ctl_request {
        const char *pod; /* Admit, Explain, Resize: the pod's text (JSON or YAML) */
        size_t pod_len;
        const char *source;    /* Admit, Explain, Resize: its file name for errors */
        bool explain;          /* Admit, Resize */
        const char *pod_uid;   /* RemoveContainer, RemovePod */
        const char *container; /* RemoveContainer */
        ncm_ctl_format format;
        bool locations; /* ListDevices: where each device is, also when the node's configuration
                           uses no device locality (docs/devices.md) */
} ncm_ctl_request;

/* Append the packed request message of M to OUT. -EINVAL (M out of range), -ENOMEM. */
NCM_API int ncm_ctl_request_pack(ncm_ctl_method m, const ncm_ctl_request *r, ncm_buf *out);

/*
 * Read a pod file as `nodecm node admit` does ("-": standard input; at most 64 MiB): *RET
 * (malloc'd, NUL-terminated), *RET_LEN, and the name errors use (*RET_NAME: PATH or
 * "<stdin>", static or PATH itself). Errors name the file.
 */
NCM_API int ncm_ctl_read_pod(const char *path, char **ret, size_t *ret_len, const char **ret_name,
                             ncm_error *err);

/*
 * ncm_ctl_read_pod(), the pod read here (its errors name PATH) and *RET what the node reads of
 * it (ncm_pod_format_json: no image, env or probes), for a request to a daemon: a daemon
 * accepts requests of NCM_CTL_REQUEST_MAX bytes at most.
 */
NCM_API int ncm_ctl_read_pod_compact(const char *path, char **ret, size_t *ret_len,
                                     const char **ret_name, ncm_error *err);

/*
 * The largest request nodecmd's control socket accepts: a pod of about 7,500 containers written
 * as tersely as JSON allows (about 2,000 as ncm_pod_format_json writes them), which it admits
 * in well under 100 ms, its only thread held up no longer (bench/RESULTS.md, "Big pods"). The
 * API server stores up to 1.5 MiB per object, but that counts every field: what a node reads
 * of a pod is a small part of it.
 */
#define NCM_CTL_REQUEST_MAX (128u << 10)

/*
 * The top-level section NAME of the configuration file PATH (YAML or JSON, "-" is not
 * allowed), as compact JSON text in *RET (malloc'd): "{}" when the file has none. A section
 * that is not an object is -EINVAL naming the file and the section. A daemon keeps its own
 * settings there, beside the KubeletConfiguration fields (which ignore it).
 */
NCM_API int ncm_ctl_config_section(const char *path, const char *name, char **ret, ncm_error *err);

/* ---- serving ------------------------------------------------------------------------------ */

/* What the handlers work on. */
typedef struct ncm_ctl_target {
        ncm_node *node;
        const char *dir;      /* the node's root directory, for messages */
        const char *enforcer; /* the enforcer's name, for messages */
        /*
         * Admit may give a pod the node holds another spec: a runtime's pod, which grows
         * container by container (the CRI proxy). Otherwise another spec under a held UID is
         * -EEXIST: the kubelet treats a pod's UID as immutable.
         */
        bool respec;
        /*
         * a kubelet stands in front of this caller (the CRI proxy): admissions are made with
         * NCM_NODE_KUBELET_ADMITTED
         */
        bool kubelet_admitted;
} ncm_ctl_target;

/* One handled call. */
typedef struct ncm_ctl_result {
        ncm_buf reply;      /* the packed response message */
        ncm_buf event;      /* a packed Event (sequence unset) when the node changed, else empty */
        bool changed;       /* the node's persistent state changed */
        bool pool_changed;  /* the shared pool moved: containers sharing it need new cpusets */
        bool admission;     /* an admission was decided (Admit; counts for metrics) */
        bool admitted;      /* ... and admitted */
        int64_t reconciled; /* Reconcile: containers whose cpuset was written again */
        bool resize;        /* a resize was decided (Resize) */
        bool resized;       /* ... and resized */
} ncm_ctl_result;

#define NCM_CTL_RESULT_INIT                                                                        \
        {                                                                                          \
                NCM_BUF_INIT, NCM_BUF_INIT, false, false, false, false, 0, false, false            \
        }

NCM_API void ncm_ctl_result_done(ncm_ctl_result *r);

/*
 * Handle one call of method M with the packed request REQ[0..LEN) on T's node, as the kubelet's
 * container manager would: Admit admits (a refusal is an answer: Admission.admitted false),
 * RemoveContainer and RemovePod release, ListPods and GetState read, Explain decides on a copy
 * of the node and changes nothing, Reconcile writes every container's cpuset again. Watch
 * takes no node work: its reply is empty and its events come from the other calls' results.
 * Every change is persisted before this returns.
 *
 * Returns 0 with *RET filled (release with ncm_ctl_result_done), or -errno with ERR naming
 * the fault: a request that does not decode or a bad pod (-EINVAL, ERR's text as the
 * daemon-less command's), a node failure (the node is as before).
 */
NCM_API int ncm_ctl_handle(const ncm_ctl_target *t, ncm_ctl_method m, const uint8_t *req,
                           size_t len, ncm_ctl_result *ret, ncm_error *err);

/*
 * The typed entries behind Admit, Resize and RemoveContainer/RemovePod, for callers that hold
 * the pod already (the CRI proxy, a handler that unpacked a request): one road into the node,
 * no request packed and no reply parsed. Each decides on T's node (with T's kubelet flag) and
 * reports as the call reports it: RES gets the packed reply (with FORMAT's output), the Watch
 * event, and whether the node and its shared pool changed (pool_changed: the containers
 * sharing it need new cpusets).
 *
 * ncm_ctl_admit(): ncm_node_admit_batch() of POD (another spec under a held UID is -EEXIST
 * unless T->respec), FLAGS NCM_CTL_FLAG_EXPLAIN records the decision's steps; BATCH (may be NULL)
 * the caller's writes the node's join, committed with them or dropped with them on a refusal.
 * *RET_ADM (may be NULL) the outcome itself (ncm_node_admission_free). Errors as
 * ncm_node_admit().
 */
#define NCM_CTL_FLAG_EXPLAIN (1u << 0)
NCM_API int ncm_ctl_admit(const ncm_ctl_target *t, const ncm_pod *pod, unsigned flags,
                          ncm_fs_batch *batch, ncm_ctl_format format, ncm_ctl_result *res,
                          ncm_node_admission **ret_adm, ncm_error *err);

/* ncm_ctl_admit() for a resize: ncm_node_resize_batch() of POD, errors as ncm_node_resize(). */
NCM_API int ncm_ctl_resize(const ncm_ctl_target *t, const ncm_pod *pod, unsigned flags,
                           ncm_fs_batch *batch, ncm_ctl_format format, ncm_ctl_result *res,
                           ncm_node_admission **ret_adm, ncm_error *err);

/*
 * The release of container CONTAINER of pod UID (CONTAINER NULL: the whole pod), as
 * RemoveContainer (RemovePod) reports it. An identifier the node does not hold and the API
 * server would not produce is -EINVAL.
 */
NCM_API int ncm_ctl_remove(const ncm_ctl_target *t, const char *uid, const char *container,
                           ncm_ctl_format format, ncm_ctl_result *res, ncm_error *err);

/*
 * The packed Event EV[0..LEN) with its sequence number set, appended to OUT (protobuf's
 * "last value wins" lets the field come first). -ENOMEM.
 */
NCM_API int ncm_ctl_event_sequence(const uint8_t *ev, size_t len, uint64_t seq, ncm_buf *out);

/*
 * The gRPC status of an error code (positive errno or NCM_E_*): INVALID_ARGUMENT for bad
 * input, NOT_FOUND, FAILED_PRECONDITION for a request that cannot be met, RESOURCE_EXHAUSTED
 * for memory, INTERNAL otherwise. The code itself travels in the trailer NCM_CTL_ERROR_CODE_MD.
 */
NCM_API int ncm_ctl_status_of_error(int code) NCM_PURE;
#define NCM_CTL_ERROR_CODE_MD "nodecm-error-code"

/*
 * The node map of T's node (nodecm/map.h), appended to OUT: what GetState writes for
 * FORMAT_HTML, and nodecmd serves at /map. Titled with the host name and T's directory and
 * enforcer, dated now (UTC), each pod's admission replayed on a copy of the node to explain
 * it (NCM_MAP_REPLAY) -- or, with EXPLAIN_URL, left to the page to fetch when it is looked at
 * (ncm_map_explain_pod). EVENTS_URL: a live page. Both as ncm_map_html_options. 0, -ENOMEM.
 */
NCM_API int ncm_ctl_map_html(const ncm_ctl_target *t, ncm_buf *out, const char *events_url,
                             const char *explain_url);

/* ---- client ------------------------------------------------------------------------------- */

/*
 * One unary call of M to the daemon at SOCKET (a path or "unix:" target), waiting at most
 * TIMEOUT_MS (0: no deadline): the packed reply is appended to REPLY. An error status comes
 * back as -code with ERR holding the daemon's message and code (so that the command exits as
 * the daemon-less one would); a daemon that cannot be reached is -errno naming SOCKET.
 */
NCM_API int ncm_ctl_call(const char *socket, ncm_ctl_method m, const uint8_t *req, size_t len,
                         uint32_t timeout_ms, ncm_buf *reply, ncm_error *err);

/*
 * Watch the daemon at SOCKET: FN runs with each packed Event as it arrives, until it returns
 * nonzero (which this then returns), the stream ends (0) or fails (-errno, ERR says why).
 */
NCM_API int ncm_ctl_watch(const char *socket, int (*fn)(const uint8_t *ev, size_t len, void *data),
                          void *data, ncm_error *err);

/*
 * What a command prints for reply REPLY[0..LEN) of M: its output appended to OUT, and the
 * verdict: 0, or for an Admit or a Resize that was refused -NCM_E_ADMISSION with ERR
 * "REASON: MESSAGE" (exit status 1, as the daemon-less command). -EINVAL when REPLY does not
 * decode.
 */
NCM_API int ncm_ctl_reply_output(ncm_ctl_method m, const uint8_t *reply, size_t len, ncm_buf *out,
                                 ncm_error *err);

/* An Event's "json" line (with a newline) appended to OUT. -EINVAL when EV does not decode. */
NCM_API int ncm_ctl_event_json(const uint8_t *ev, size_t len, ncm_buf *out, ncm_error *err);

#ifdef __cplusplus
}
#endif
#endif
