/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sessions: the plugin calls of a synchronous transaction, answered asynchronously.
 *
 * The device manager calls a plugin from inside an allocation (ncm_devmgr_plugin_ops). Here
 * such a call is looked up in the entered session's answers by (plugin instance, method,
 * request bytes): a known answer is returned as the RPC would have returned it, an unknown
 * call is recorded and fails with -EINPROGRESS, which unwinds the whole transaction (the node
 * rolls back: it is not a decision). ncm_dp_session_fetch() then makes the recorded calls
 * and, when all are answered, lets the owner run the transaction again. The request bytes
 * are the key because they carry every input of the call (device ids sorted, sizes), so a
 * pass that decides as the one before makes the very same calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "dp-host.h"

typedef enum a_state {
        A_ASKED = 0, /* recorded by a pass, not sent */
        A_FLIGHT,    /* sent */
        A_DONE,      /* answered (or failed) */
} a_state;

typedef struct dp_answer {
        ncm_dp_session *s; /* NULL: the session is gone, the call's on_close frees this */
        uint64_t ep_serial;
        int method;
        char *resource;
        uint8_t *req;
        size_t req_len;
        a_state state;
        ncm_rpc_call *call;
        uint64_t t_start;
        int code;
        char *message;
        uint8_t *resp;
        size_t resp_len;
        bool have_resp;
} dp_answer;

/* What one Allocate of the current pass asked for, held for its pod until the next pass. */
typedef struct pass_hold {
        char *pod;
        char *resource;
        char **ids;
        size_t n;
} pass_hold;

struct ncm_dp_session {
        ncm_dp_host *h; /* NULL once the host closed */
        ncm_dp_session *next;
        uint64_t owner;
        dp_answer **answers;
        size_t n_answers, cap_answers;
        bool pending;
        bool fetching;
        unsigned rounds;
        unsigned calls;
        unsigned in_flight;
        void (*done)(ncm_dp_session *s, void *data);
        void *done_data;
        uv_timer_t *timer;
        pass_hold *holds;
        size_t n_holds, cap_holds;
};

static const char *const paths[DP_N_METHODS] = {NCM_DP_OPTIONS_PATH, NCM_DP_LIST_AND_WATCH_PATH,
                                                NCM_DP_PREFERRED_PATH, NCM_DP_ALLOCATE_PATH,
                                                NCM_DP_PRE_START_PATH};

static void answer_free(dp_answer *a)
{
        free(a->resource);
        free(a->req);
        free(a->message);
        free(a->resp);
        free(a);
}

static void holds_clear(ncm_dp_session *s)
{
        for (size_t i = 0; i < s->n_holds; i++) {
                free(s->holds[i].pod);
                free(s->holds[i].resource);
                for (size_t k = 0; k < s->holds[i].n; k++)
                        free(s->holds[i].ids[k]);
                free(s->holds[i].ids);
        }
        free(s->holds);
        s->holds = NULL;
        s->n_holds = s->cap_holds = 0;
}

static void session_unlink(ncm_dp_session *s)
{
        if (!s->h)
                return;
        for (ncm_dp_session **p = &s->h->sessions; *p; p = &(*p)->next)
                if (*p == s) {
                        *p = s->next;
                        break;
                }
        if (s->h->current == s)
                s->h->current = NULL;
}

static void timer_closed(uv_handle_t *hd)
{
        free(hd);
}

ncm_dp_session *ncm_dp_session_new(ncm_dp_host *h)
{
        ncm_dp_session *s = calloc(1, sizeof(*s));

        if (!s)
                return NULL;
        s->timer = malloc(sizeof(*s->timer));
        if (!s->timer) {
                free(s);
                return NULL;
        }
        uv_timer_init(h->loop, s->timer);
        s->timer->data = s;
        s->h = h;
        s->owner = ++h->next_owner;
        s->next = h->sessions;
        h->sessions = s;
        return s;
}

ncm_dp_session *ncm_dp_session_free(ncm_dp_session *s)
{
        if (!s)
                return NULL;
        if (s->h && s->h->m)
                ncm_devmgr_release_holds(s->h->m, s->owner);
        session_unlink(s);
        for (size_t i = 0; i < s->n_answers; i++) {
                dp_answer *a = s->answers[i];
                if (a->state == A_FLIGHT && a->call) {
                        /* its on_close comes later and frees it */
                        a->s = NULL;
                        ncm_rpc_call_cancel(a->call);
                } else {
                        answer_free(a);
                }
        }
        free(s->answers);
        holds_clear(s);
        s->timer->data = NULL;
        uv_timer_stop(s->timer);
        uv_close((uv_handle_t *)s->timer, timer_closed);
        free(s);
        return NULL;
}

/* The host closes: sessions answer nothing more; their holds go now. */
void ncm__dp_sessions_orphan(ncm_dp_host *h)
{
        while (h->sessions) {
                ncm_dp_session *s = h->sessions;
                if (h->m)
                        ncm_devmgr_release_holds(h->m, s->owner);
                h->sessions = s->next;
                s->h = NULL;
        }
        h->current = NULL;
}

void ncm_dp_session_enter(ncm_dp_session *s)
{
        s->pending = false;
        holds_clear(s);
        if (s->h)
                s->h->current = s;
}

void ncm_dp_session_leave(ncm_dp_session *s)
{
        ncm_dp_host *h = s->h;

        if (!h)
                return;
        if (h->current == s)
                h->current = NULL;
        if (!h->m)
                return;
        ncm_devmgr_release_holds(h->m, s->owner);
        for (size_t i = 0; i < s->n_holds; i++) {
                const pass_hold *p = &s->holds[i];
                /* out of memory: the pod is not protected; its next pass decides again */
                (void)ncm_devmgr_hold(h->m, s->owner, p->pod, p->resource,
                                      (const char *const *)p->ids, p->n);
        }
}

bool ncm_dp_session_pending(const ncm_dp_session *s)
{
        return s->pending;
}

unsigned ncm_dp_session_rounds(const ncm_dp_session *s)
{
        return s->rounds;
}

unsigned ncm_dp_session_calls(const ncm_dp_session *s)
{
        return s->calls;
}

/* ---- fetching ---- */

static void run_done(uv_timer_t *t)
{
        ncm_dp_session *s = t->data;
        void (*done)(ncm_dp_session *, void *);

        if (!s || !s->done)
                return;
        done = s->done;
        s->done = NULL;
        s->fetching = false;
        done(s, s->done_data);
}

static void maybe_done(ncm_dp_session *s)
{
        if (s->in_flight == 0 && s->done)
                uv_timer_start(s->timer, run_done, 0, 0);
}

static void answer_set(dp_answer *a, int code, const char *message)
{
        a->state = A_DONE;
        a->code = code;
        free(a->message);
        a->message = strdup(message ? message : "");
}

static void answer_message(ncm_rpc_call *call, const uint8_t *msg, size_t len, void *data)
{
        dp_answer *a = data;
        (void)call;
        if (a->have_resp)
                return;
        a->resp = malloc(len ? len : 1);
        if (!a->resp)
                return;
        if (len)
                memcpy(a->resp, msg, len);
        a->resp_len = len;
        a->have_resp = true;
}

static void answer_close(ncm_rpc_call *call, ncm_rpc_code code, const char *message,
                         const ncm_rpc_md *md, size_t n, void *data)
{
        dp_answer *a = data;
        ncm_dp_session *s = a->s;

        (void)call;
        (void)md;
        (void)n;
        a->call = NULL;
        if (!s) {
                answer_free(a);
                return;
        }
        if (s->h) {
                ncm__dp_count_call(s->h, a->method, code);
                if (a->method == DP_ALLOCATE)
                        ncm__dp_observe_alloc(s->h, a->resource,
                                              (double)(uv_hrtime() - a->t_start) / 1e9);
        }
        if (code == NCM_RPC_OK && !a->have_resp) {
                code = NCM_RPC_INTERNAL;
                message = "grpc: the server sent no response message";
        }
        answer_set(a, code, message);
        s->in_flight--;
        maybe_done(s);
}

static const ncm_rpc_client_ops answer_ops = {.on_message = answer_message,
                                              .on_close = answer_close};

static void answer_start(ncm_dp_session *s, dp_answer *a)
{
        ncm_dp_host *h = s->h;
        dp_endpoint *ep = ncm__dp_endpoint_by_serial(h, a->ep_serial);
        ncm_error err = NCM_ERROR_INIT;
        int r;

        if (!ep || ep->state != EP_RUNNING || !ep->cl) {
                answer_set(a, NCM_RPC_UNAVAILABLE, "connection closed");
                return;
        }
        a->t_start = uv_hrtime();
        a->state = A_FLIGHT;
        s->in_flight++;
        s->calls++;
        r = ncm_rpc_conn_call(ncm_rpc_uv_client_conn(ep->cl), paths[a->method], NULL, 0,
                              h->timeout_ms[a->method], a->req, a->req_len, &answer_ops, a,
                              &a->call, &err);
        if (r < 0) {
                s->in_flight--;
                answer_set(a, r == -ENOTCONN ? NCM_RPC_UNAVAILABLE : NCM_RPC_INTERNAL, err.msg);
        }
}

int ncm_dp_session_fetch(ncm_dp_session *s, void (*done)(ncm_dp_session *s, void *data), void *data,
                         ncm_error *err)
{
        bool any = false;

        if (s->fetching)
                return ncm_error_set(err, EALREADY, "device plugin calls already in flight");
        for (size_t i = 0; i < s->n_answers; i++)
                any |= s->answers[i]->state == A_ASKED;
        if (!any)
                return ncm_error_set(err, EINVAL, "no device plugin call is pending");
        s->fetching = true;
        s->done = done;
        s->done_data = data;
        s->rounds++;
        for (size_t i = 0; i < s->n_answers; i++) {
                dp_answer *a = s->answers[i];
                if (a->state != A_ASKED)
                        continue;
                if (!s->h)
                        answer_set(a, NCM_RPC_UNAVAILABLE, "the device plugin host is stopping");
                else
                        answer_start(s, a);
        }
        maybe_done(s);
        return 0;
}

/* ---- the plugin ops ---- */

/*
 * The answer of EP's METHOD with REQ in the entered session: 1 with *RET when answered, 0
 * when the call was recorded (or is in flight), -errno with ERR set otherwise.
 */
static int lookup(dp_endpoint *ep, int method, const char *resource, uint8_t *req, size_t len,
                  dp_answer **ret, ncm_error *err)
{
        ncm_dp_session *s = ep->h->current;
        dp_answer *a;

        if (!s) {
                free(req);
                return ncm_error_set(err, EWOULDBLOCK,
                                     "device plugin %s: %s needs an asynchronous session (a "
                                     "device plugin host on a loop)",
                                     resource, ncm__dp_method_name(method));
        }
        for (size_t i = 0; i < s->n_answers; i++) {
                a = s->answers[i];
                if (a->ep_serial != ep->serial || a->method != method || a->req_len != len ||
                    memcmp(a->req, req, len) != 0)
                        continue;
                free(req);
                if (a->state != A_DONE) {
                        s->pending = true;
                        return ncm_error_set(err, EINPROGRESS, "waiting for device plugin %s: %s",
                                             resource, ncm__dp_method_name(method));
                }
                *ret = a;
                return 1;
        }
        if (s->rounds >= NCM_DP_MAX_ROUNDS) {
                free(req);
                return ncm_error_set(err, NCM_E_ADMISSION,
                                     "device plugin calls did not settle after %d rounds (the "
                                     "devices kept changing while the plugins answered)",
                                     NCM_DP_MAX_ROUNDS);
        }
        a = calloc(1, sizeof(*a));
        if (!a || ncm__array_grow(s->answers, s->cap_answers, s->n_answers) < 0 ||
            !(a->resource = strdup(resource))) {
                free(a);
                free(req);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        a->s = s;
        a->ep_serial = ep->serial;
        a->method = method;
        a->req = req;
        a->req_len = len;
        s->answers[s->n_answers++] = a;
        s->pending = true;
        return ncm_error_set(err, EINPROGRESS, "waiting for device plugin %s: %s", resource,
                             ncm__dp_method_name(method));
}

/* A failed call as the kubelet reports it: the grpc-go error, a decision. */
static int call_failed(const dp_answer *a, ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT;
        int r;

        ncm__dp_rpc_error(&b, a->code, a->message, true);
        r = ncm_error_set(err, NCM_E_ADMISSION, "%s", b.data ? b.data : "rpc error");
        ncm_buf_done(&b);
        return r;
}

/* Remember what an Allocate of this pass asks for (held for the pod at leave). */
static void hold_request(dp_endpoint *ep, const char *resource, const char *const *ids, size_t n)
{
        ncm_dp_session *s = ep->h->current;
        const char *pod = ep->h->m ? ncm_devmgr_calling_pod(ep->h->m) : NULL;
        pass_hold *p;

        if (!s || !pod)
                return;
        if (ncm__array_grow(s->holds, s->cap_holds, s->n_holds) < 0)
                return;
        p = &s->holds[s->n_holds];
        *p = (pass_hold){strdup(pod), strdup(resource), calloc(n ? n : 1, sizeof(char *)), 0};
        s->n_holds++;
        if (!p->pod || !p->resource || !p->ids)
                return;
        for (size_t i = 0; i < n; i++) {
                if (!(p->ids[i] = strdup(ids[i])))
                        return;
                p->n++;
        }
}

int ncm__dp_op_allocate(void *data, const char *resource, const char *const *ids, size_t n,
                        ncm_devmgr_alloc_resp **ret, ncm_error *err)
{
        dp_endpoint *ep = data;
        dp_answer *a = NULL;
        uint8_t *req;
        size_t len;
        int r;

        if (ncm__dp_allocate_request(ids, n, &req, &len) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        hold_request(ep, resource, ids, n);
        r = lookup(ep, DP_ALLOCATE, resource, req, len, &a, err);
        if (r <= 0)
                return r;
        if (a->code != NCM_RPC_OK)
                return call_failed(a, err);
        r = ncm__dp_allocate_decode(a->resp, a->resp_len, ret, err);
        if (r == -EINVAL) {
                /* grpc-go fails such a call with Internal and the decoder's text */
                ncm_buf b = NCM_BUF_INIT;
                ncm__dp_rpc_error(&b, NCM_RPC_INTERNAL, err ? err->msg : "", false);
                r = ncm_error_set(err, NCM_E_ADMISSION, "%s", b.data ? b.data : "rpc error");
                ncm_buf_done(&b);
        }
        return r;
}

int ncm__dp_op_preferred(void *data, const char *resource, const char *const *available,
                         size_t n_available, const char *const *must_include, size_t n_must_include,
                         int32_t size, char ***ret, size_t *ret_n, ncm_error *err)
{
        dp_endpoint *ep = data;
        dp_answer *a = NULL;
        uint8_t *req;
        size_t len;
        int r;

        if (ncm__dp_preferred_request(available, n_available, must_include, n_must_include, size,
                                      &req, &len) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = lookup(ep, DP_PREFERRED, resource, req, len, &a, err);
        if (r <= 0)
                return r;
        if (a->code != NCM_RPC_OK)
                return call_failed(a, err);
        r = ncm__dp_preferred_decode(a->resp, a->resp_len, ret, ret_n, err);
        if (r == -EINVAL) {
                ncm_buf b = NCM_BUF_INIT;
                ncm__dp_rpc_error(&b, NCM_RPC_INTERNAL, err ? err->msg : "", false);
                r = ncm_error_set(err, NCM_E_ADMISSION, "%s", b.data ? b.data : "rpc error");
                ncm_buf_done(&b);
        }
        return r;
}

int ncm__dp_op_pre_start(void *data, const char *resource, const char *const *ids, size_t n,
                         ncm_error *err)
{
        dp_endpoint *ep = data;
        dp_answer *a = NULL;
        uint8_t *req;
        size_t len;
        int r;

        if (ncm__dp_pre_start_request(ids, n, &req, &len) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = lookup(ep, DP_PRE_START, resource, req, len, &a, err);
        if (r <= 0)
                return r;
        return a->code != NCM_RPC_OK ? call_failed(a, err) : 0;
}
