/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device plugins: the kubelet's device-plugin side (lib/deviceplugin) on
 * DIR/device-plugins (nodecmd.devicePluginsDirectory), feeding the node's device manager, and
 * the control service's calls answered through device-plugin sessions: every pass of a call
 * runs inside a session (nodecmd_call_hook); a pass that asks a plugin something it has no
 * answer for gives the node back and runs again when the answer is in (docs/devices.md,
 * "Plugin calls during an admission: sessions"). All decisions are the library's; this file
 * wires it to the daemon's loop, log, configuration and metrics.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/deviceplugin.h>
#include <nodecm/duration.h>
#include "nodecmd.h"

typedef struct devices {
        nodecmd *d;
        ncm_dp_host *host;
        char *dir;
} devices;

/* One control call's session, and how to queue the call again. */
typedef struct call_ctx {
        ncm_dp_session *s;
        void (*retry)(void *arg);
        void *arg;
} call_ctx;

/* ---- the log and the configuration -------------------------------------------------------- */

static void on_log(void *data, ncm_dp_level level, const char *msg, const ncm_dp_field *f, size_t n)
{
        devices *dv = data;
        ncm_buf kv = NCM_BUF_INIT;

        if (!nodecmd_log_enabled(dv->d, (nodecmd_level)level))
                return;
        for (size_t i = 0; i < n && i < 4; i++)
                ncm_buf_printf(&kv, "%s%s=%s", i ? " " : "", f[i].key,
                               nodecmd_q(dv->d, (int)i, f[i].value));
        nodecmd_log(dv->d, (nodecmd_level)level, msg, "%s", kv.data ? kv.data : "");
        ncm_buf_done(&kv);
}

static void on_changed(void *data, const char *resource)
{
        devices *dv = data;
        nodecmd_log(dv->d, NODECMD_DEBUG, "device plugin resource changed", "resource=%s",
                    nodecmd_q(dv->d, 0, resource));
}

/* A duration of the nodecmd section ("30s", "5m"), in milliseconds; DEF when absent. */
static int section_ms(nodecmd *d, const char *key, uint64_t def, uint64_t *ret, ncm_error *err)
{
        json_object *v = NULL;
        int64_t ns;
        int r;

        *ret = def;
        if (!json_object_object_get_ex(nodecmd_section(d), key, &v) || !v)
                return 0;
        r = ncm_duration_parse(json_object_get_string(v), &ns, err);
        if (r < 0)
                return ncm_error_prefix(err, "nodecmd.%s", key);
        if (ns <= 0)
                return ncm_error_set(err, EINVAL, "nodecmd.%s: must be positive, got '%s'", key,
                                     json_object_get_string(v));
        *ret = (uint64_t)ns / 1000000u ? (uint64_t)ns / 1000000u : 1;
        return 0;
}

/* ---- the call hook: sessions around the control service's calls --------------------------- */

static void *hook_enter(void *data, ncm_ctl_method method, void *ctx)
{
        devices *dv = data;
        call_ctx *c = ctx;

        /* only calls that change the node reach plugins (Explain decides on a copy) */
        if (!ncm_ctl_method_mutates(method) || !dv->host)
                return ctx;
        if (!c) {
                c = calloc(1, sizeof(*c));
                if (c)
                        c->s = ncm_dp_session_new(dv->host);
                if (!c || !c->s) {
                        free(c);
                        return NULL; /* out of memory: the call runs without a session */
                }
        }
        ncm_dp_session_enter(c->s);
        return c;
}

static void answers_in(ncm_dp_session *s, void *data)
{
        call_ctx *c = data;
        (void)s;
        c->retry(c->arg);
}

static bool hook_leave(void *data, void *ctx, int r, void (*retry)(void *arg), void *arg)
{
        devices *dv = data;
        call_ctx *c = ctx;
        ncm_error err = NCM_ERROR_INIT;

        (void)r;
        if (!c)
                return false;
        ncm_dp_session_leave(c->s);
        if (!ncm_dp_session_pending(c->s))
                return false;
        c->retry = retry;
        c->arg = arg;
        if (ncm_dp_session_fetch(c->s, answers_in, c, &err) < 0) {
                nodecmd_log(dv->d, NODECMD_ERROR, "device plugin calls failed", "error=%s",
                            nodecmd_q(dv->d, 0, err.msg));
                return false;
        }
        return true;
}

static void hook_done(void *data, void *ctx)
{
        call_ctx *c = ctx;
        (void)data;
        if (!c)
                return;
        ncm_dp_session_free(c->s);
        free(c);
}

static const nodecmd_call_hook hook = {hook_enter, hook_leave, hook_done};

/* ---- the service -------------------------------------------------------------------------- */

static int dv_start(nodecmd *d, void **ret, ncm_error *err)
{
        devices *dv = calloc(1, sizeof(*dv));
        ncm_dp_host_events ev = {on_log, on_changed, NULL};
        ncm_dp_host_opts o = {0};
        ncm_rpc_opts ro;
        uint64_t ms;
        int r;

        if (!dv)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = dv;
        dv->d = d;
        ev.data = dv;
        r = nodecmd_socket_path(d, "devicePluginsDirectory", "device-plugins", &dv->dir, err);
        if (r < 0)
                return r;
        nodecmd_rpc_opts(d, &ro);
        /* grpc-go's limits, as the kubelet's plugin clients have them: a ListAndWatch list
         * above 4 MiB ends the stream */
        ro.max_recv_msg = 4u << 20;
        ro.idle_timeout_ms = 0; /* a ListAndWatch stream is idle for hours */
        o.dir = dv->dir;
        o.rpc = &ro;
        r = section_ms(d, "devicePluginAllocateTimeout", 30000, &ms, err);
        if (r < 0)
                return r;
        o.allocate_timeout_ms = o.preferred_timeout_ms = (uint32_t)ms;
        r = section_ms(d, "devicePluginGracePeriod", 0, &ms, err);
        if (r < 0)
                return r;
        o.grace_period_ms = ms;
        r = ncm_dp_host_new(nodecmd_loop(d), ncm_node_device_manager(nodecmd_node(d)), &o, &ev,
                            &dv->host, err);
        if (r >= 0)
                r = ncm_dp_host_start(dv->host, err);
        if (r < 0)
                return r;
        nodecmd_set_call_hook(d, &hook, dv);
        return 0;
}

static void dv_reload(void *data)
{
        devices *dv = data;
        /* the node was rebuilt from its checkpoints: the connected plugins register again */
        ncm_dp_host_attach(dv->host, ncm_node_device_manager(nodecmd_node(dv->d)));
}

static void host_closed(void *data)
{
        devices *dv = data;
        dv->host = NULL;
        nodecmd_service_stopped(dv->d, dv);
}

static void dv_stop(void *data)
{
        devices *dv = data;
        void *hd = NULL;

        if (nodecmd_call_hook_get(dv->d, &hd) == &hook && hd == dv)
                nodecmd_set_call_hook(dv->d, NULL, NULL);
        if (dv->host)
                ncm_dp_host_close(dv->host, host_closed, dv);
        else
                nodecmd_service_stopped(dv->d, dv);
}

static void dv_free(void *data)
{
        devices *dv = data;
        if (!dv)
                return;
        free(dv->dir);
        free(dv);
}

static void dv_metrics(void *data, ncm_buf *out)
{
        devices *dv = data;
        if (dv->host)
                ncm_dp_host_metrics(dv->host, out);
}

const nodecmd_service_ops nodecmd_devices_service = {
                .name = "device-plugins",
                .start = dv_start,
                .reload = dv_reload,
                .stop = dv_stop,
                .free = dv_free,
                .metrics = dv_metrics,
};
