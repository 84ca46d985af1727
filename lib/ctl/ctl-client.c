/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control API's client side: a blocking call (or a watch) to a daemon's socket on a loop of
 * its own, and what a command prints for a reply, whether the reply came from a daemon or from
 * ncm_ctl_handle() in the same process.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/fs.h>
#include <nodecm/rpc-uv.h>
#include "base/json.h"
#include "ctl-internal.h"

/* As `nodecm node admit` reads a pod file (ncm_pod_load_file's limit). */
#define POD_FILE_MAX (64u << 20)

int ncm_ctl_read_pod(const char *path, char **ret, size_t *ret_len, const char **ret_name,
                     ncm_error *err)
{
        bool in = strcmp(path, "-") == 0;
        int r = ncm_fs_read_all(AT_FDCWD, in ? "/dev/stdin" : path, POD_FILE_MAX, ret, ret_len,
                                err);

        if (r < 0)
                return r;
        *ret_name = in ? "<stdin>" : path;
        return 0;
}

int ncm_ctl_config_section(const char *path, const char *name, char **ret, ncm_error *err)
{
        ncm_autojson doc = NULL;
        json_object *sec;
        const char *text;
        int r;

        if (strcmp(path, "-") == 0)
                return ncm_error_set(err, EINVAL, "the configuration must be a file, not '-'");
        /* read as the configuration itself is read (ncm_node_config_load_file) */
        r = ncm__json_load_file_ex(path, NCM_JSON_FIRST_DOCUMENT | NCM_JSON_GO, &doc, NULL, NULL,
                                   err);
        if (r < 0)
                return r;
        if (!doc || !json_object_is_type(doc, json_type_object))
                return ncm_error_set(err, EINVAL, "%s: expected an object", path);
        sec = ncm__json_get(doc, name);
        if (sec && !json_object_is_type(sec, json_type_object))
                return ncm_error_set(err, EINVAL, "%s: %s: expected an object, got %s", path, name,
                                     ncm__json_type_name(sec));
        text = sec ? json_object_to_json_string_ext(sec, JSON_C_TO_STRING_PLAIN) : "{}";
        *ret = strdup(text);
        return *ret ? 0 : ncm_error_set(err, ENOMEM, "out of memory");
}

/* ---- calls -------------------------------------------------------------------------------- */

typedef struct call_state {
        ncm_buf *reply;
        int (*fn)(const uint8_t *ev, size_t len, void *data);
        void *data;
        ncm_rpc_call *call;
        const char *socket;
        ncm_error *err;
        int r;        /* the outcome */
        int fn_r;     /* what FN returned to stop the watch */
        bool closed;  /* on_close ran */
        bool too_big; /* a reply above the buffer's means */
} call_state;

static void on_message(ncm_rpc_call *call, const uint8_t *msg, size_t len, void *data)
{
        call_state *s = data;

        if (s->fn) {
                if (s->fn_r == 0)
                        s->fn_r = s->fn(msg, len, s->data);
                if (s->fn_r != 0)
                        ncm_rpc_call_cancel(call);
                return;
        }
        ncm_buf_append(s->reply, msg, len);
}

static void on_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                     const ncm_rpc_md *md, size_t n, void *data)
{
        call_state *s = data;
        const char *ec = ncm_rpc_md_get(md, n, NCM_CTL_ERROR_CODE_MD);
        int e;

        s->closed = true;
        s->call = NULL;
        if (code == NCM_RPC_OK) {
                s->r = 0;
                return;
        }
        if (s->fn && s->fn_r != 0 && code == NCM_RPC_CANCELLED) {
                s->r = s->fn_r;
                return;
        }
        /* the daemon's own error: its code (for the exit status) and message, as they are */
        e = ec ? atoi(ec) : 0;
        if (e > 0) {
                s->r = ncm_error_set(s->err, e, "%s", message);
                return;
        }
        switch (code) {
        case NCM_RPC_UNAVAILABLE:
                s->r = ncm_error_set(s->err, ECONNRESET, "%s: the daemon went away (%s)", s->socket,
                                     message[0] ? message : "unavailable");
                break;
        case NCM_RPC_DEADLINE_EXCEEDED:
                s->r = ncm_error_set(s->err, ETIMEDOUT, "%s: no answer in time", s->socket);
                break;
        case NCM_RPC_INVALID_ARGUMENT:
                s->r = ncm_error_set(s->err, EINVAL, "%s", message);
                break;
        default:
                s->r = ncm_error_set(s->err, EPROTO, "%s: %s: %s", s->socket,
                                     ncm_rpc_code_name(code) ? ncm_rpc_code_name(code) : "?",
                                     message);
                break;
        }
}

static int run_call(const char *socket, ncm_ctl_method m, const uint8_t *req, size_t len,
                    uint32_t timeout_ms, call_state *s, ncm_error *err)
{
        static const ncm_rpc_client_ops ops = {.on_message = on_message, .on_close = on_close};
        const char *path = ncm_ctl_method_path(m);
        ncm_rpc_uv_client *cl = NULL;
        ncm_rpc_opts o;
        uv_loop_t loop;
        int r;

        if (!path)
                return ncm_error_set(err, EINVAL, "unknown method %d", (int)m);
        ncm_rpc_opts_default(&o);
        /* a CPU map or an explanation of a big machine is well above gRPC's 4 MiB default */
        o.max_recv_msg = 64u << 20;
        s->socket = socket;
        s->err = err;
        s->r = -EINPROGRESS;
        r = uv_loop_init(&loop);
        if (r < 0)
                return ncm_error_set(err, -r, "event loop: %s", uv_strerror(r));
        r = ncm_rpc_uv_connect(&loop, socket, &o, &cl, err);
        if (r >= 0) {
                r = ncm_rpc_conn_call(ncm_rpc_uv_client_conn(cl), path, NULL, 0, timeout_ms, req,
                                      len, &ops, s, &s->call, err);
                if (r >= 0) {
                        while (!s->closed && uv_run(&loop, UV_RUN_ONCE))
                                ;
                        r = s->closed ? s->r
                                      : ncm_error_set(err, EIO, "%s: call did not end", socket);
                }
                ncm_rpc_uv_client_close(cl);
        }
        /* let the closed handles go */
        uv_run(&loop, UV_RUN_DEFAULT);
        (void)uv_loop_close(&loop);
        return r;
}

int ncm_ctl_call(const char *socket, ncm_ctl_method m, const uint8_t *req, size_t len,
                 uint32_t timeout_ms, ncm_buf *reply, ncm_error *err)
{
        call_state s = {.reply = reply};
        int r = run_call(socket, m, req, len, timeout_ms, &s, err);

        if (r >= 0 && ncm_buf_failed(reply))
                return ncm_error_set(err, ENOMEM, "out of memory");
        return r;
}

int ncm_ctl_watch(const char *socket, int (*fn)(const uint8_t *ev, size_t len, void *data),
                  void *data, ncm_error *err)
{
        ncm_buf req = NCM_BUF_INIT;
        call_state s = {.fn = fn, .data = data};
        int r = ncm_ctl_request_pack(NCM_CTL_WATCH, NULL, &req);

        if (r < 0)
                return ncm_error_set(err, -r, "out of memory");
        r = run_call(socket, NCM_CTL_WATCH, (const uint8_t *)req.data, req.len, 0, &s, err);
        ncm_buf_done(&req);
        return r;
}

/* ---- what a command prints ---------------------------------------------------------------- */

static int undecodable(ncm_ctl_method m, ncm_error *err)
{
        return ncm_error_set(err, EINVAL, "%s: the reply does not decode", ncm_ctl_method_name(m));
}

int ncm_ctl_reply_output(ncm_ctl_method m, const uint8_t *reply, size_t len, ncm_buf *out,
                         ncm_error *err)
{
        int r = 0;

        switch (m) {
        case NCM_CTL_ADMIT:
        case NCM_CTL_EXPLAIN: {
                Nodecm__V1__Admission *a = nodecm__v1__admission__unpack(NULL, len, reply);
                if (!a)
                        return undecodable(m, err);
                ncm_buf_puts(out, a->output);
                if (!a->admitted)
                        r = ncm_error_set(err, NCM_E_ADMISSION, "%s: %s", a->reason, a->message);
                nodecm__v1__admission__free_unpacked(a, NULL);
                break;
        }
        case NCM_CTL_RESIZE: {
                Nodecm__V1__ResizeResult *a = nodecm__v1__resize_result__unpack(NULL, len, reply);
                if (!a)
                        return undecodable(m, err);
                ncm_buf_puts(out, a->output);
                if (!a->resized)
                        r = ncm_error_set(err, NCM_E_ADMISSION, "%s: %s", a->reason, a->message);
                nodecm__v1__resize_result__free_unpacked(a, NULL);
                break;
        }
        case NCM_CTL_REMOVE_CONTAINER:
        case NCM_CTL_REMOVE_POD: {
                Nodecm__V1__Removal *a = nodecm__v1__removal__unpack(NULL, len, reply);
                if (!a)
                        return undecodable(m, err);
                ncm_buf_puts(out, a->output);
                nodecm__v1__removal__free_unpacked(a, NULL);
                break;
        }
        case NCM_CTL_LIST_PODS: {
                Nodecm__V1__PodList *a = nodecm__v1__pod_list__unpack(NULL, len, reply);
                if (!a)
                        return undecodable(m, err);
                ncm_buf_puts(out, a->output);
                nodecm__v1__pod_list__free_unpacked(a, NULL);
                break;
        }
        case NCM_CTL_GET_STATE: {
                Nodecm__V1__State *a = nodecm__v1__state__unpack(NULL, len, reply);
                if (!a)
                        return undecodable(m, err);
                ncm_buf_puts(out, a->output);
                nodecm__v1__state__free_unpacked(a, NULL);
                break;
        }
        case NCM_CTL_RECONCILE: {
                Nodecm__V1__Reconciliation *a =
                                nodecm__v1__reconciliation__unpack(NULL, len, reply);
                if (!a)
                        return undecodable(m, err);
                ncm_buf_puts(out, a->output);
                nodecm__v1__reconciliation__free_unpacked(a, NULL);
                break;
        }
        case NCM_CTL_LIST_DEVICES: {
                Nodecm__V1__DeviceList *a = nodecm__v1__device_list__unpack(NULL, len, reply);
                if (!a)
                        return undecodable(m, err);
                ncm_buf_puts(out, a->output);
                nodecm__v1__device_list__free_unpacked(a, NULL);
                break;
        }
        default:
                return ncm_error_set(err, EINVAL, "%s has no output", ncm_ctl_method_name(m));
        }
        if (ncm_buf_failed(out))
                return ncm_error_set(err, ENOMEM, "out of memory");
        return r;
}

int ncm_ctl_event_json(const uint8_t *ev, size_t len, ncm_buf *out, ncm_error *err)
{
        Nodecm__V1__Event *e = nodecm__v1__event__unpack(NULL, len, ev);

        if (!e)
                return ncm_error_set(err, EINVAL, "an event does not decode");
        ncm_buf_puts(out, e->json);
        nodecm__v1__event__free_unpacked(e, NULL);
        return ncm_buf_failed(out) ? ncm_error_set(err, ENOMEM, "out of memory") : 0;
}
