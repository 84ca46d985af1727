/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One gRPC connection over nghttp2, server or client side, without I/O.
 *
 * nghttp2 callbacks only record what happened (call state, an event queue); user callbacks run
 * from dispatch() once nghttp2 has returned, because nghttp2 must not be re-entered (no
 * mem_send, no session free from inside its callbacks). Calls are reference counted: the open
 * HTTP/2 stream, the user's handle and each queued event hold one.
 *
 * A server session runs with nghttp2's HTTP messaging checks off: they refuse an :authority
 * holding '/', which grpc-go before 1.57 sends when it dials a bare socket path (and the
 * kubelet's grpc-go server takes), and nghttp2 has no switch for that one check. The checks
 * themselves (RFC 9113 8.2 and 8.3: pseudo-headers, connection-specific headers, field names and
 * values) are made here instead, in check_header(), with any :authority allowed; a refused request
 * is reset with PROTOCOL_ERROR, as nghttp2 did, and told to opts.log. Client sessions keep
 * nghttp2's checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nghttp2/nghttp2.h>

#include <nodecm/buf.h>
#include <nodecm/rpc.h>

#include "base/array.h"
#include "rpc-internal.h"

/* nghttp2 1.60 deprecated the ssize_t API for nghttp2_ssize variants; Debian 12 has 1.52. */
#if NGHTTP2_VERSION_NUM >= 0x013c00
typedef nghttp2_ssize h2_ssize;
typedef nghttp2_data_provider2 h2_provider;
#define h2_submit_request nghttp2_submit_request2
#define h2_submit_response nghttp2_submit_response2
#define h2_mem_recv nghttp2_session_mem_recv2
#define h2_mem_send nghttp2_session_mem_send2
#else
typedef ssize_t h2_ssize;
typedef nghttp2_data_provider h2_provider;
#define h2_submit_request nghttp2_submit_request
#define h2_submit_response nghttp2_submit_response
#define h2_mem_recv nghttp2_session_mem_recv
#define h2_mem_send nghttp2_session_mem_send
#endif

#define NO_DEADLINE UINT64_MAX

typedef struct chunk {
        struct chunk *next;
        size_t len, off;
        uint8_t data[];
} chunk;

typedef struct md_list {
        ncm_rpc_md *v;
        size_t n, cap;
} md_list;

enum ev_type { EV_DISPATCH, EV_CANCEL, EV_WRITABLE, EV_HEADERS, EV_MESSAGE, EV_CLOSE };

/* What a server method's calls may send (ncm_rpc_server_add): one message, any, unchecked. */
enum call_kind { KIND_ANY, KIND_UNARY, KIND_STREAMING };

/* Request pseudo-headers seen (a request must have the first three, each at most once). */
enum {
        PH_METHOD = 1 << 0,
        PH_SCHEME = 1 << 1,
        PH_PATH = 1 << 2,
        PH_AUTHORITY = 1 << 3,
};

/* A line for opts.log, kept until the connection is out of nghttp2. */
typedef struct log_entry {
        int level;
        char *path;
        char *what;
} log_entry;

typedef struct event {
        enum ev_type type;
        ncm_rpc_call *call;
        ncm__rpc_message msg;
} event;

struct ncm_rpc_call {
        ncm_rpc_conn *conn; /* NULL once the connection is gone */
        ncm_rpc_call *prev, *next;
        unsigned refs;
        int32_t stream_id;
        bool client;
        bool stream_open;      /* holds the stream's reference */
        bool user_holds;       /* server: until finish; client: until on_close */
        bool peer_half_closed; /* the peer sent END_STREAM */
        bool wire_done;        /* our status went out (server) / the stream is being reset */
        bool ended;            /* the call is over for the peer */
        bool reported;         /* on_cancel / on_close delivered */
        uint64_t deadline;
        size_t header_bytes;
        ncm__rpc_framer framer;
        bool framer_failed;
        md_list md;         /* request metadata (server), response headers (client) */
        md_list md_trailer; /* response trailers (both sides) */
        md_list md_resp;    /* server: response header metadata */

        /* server */
        enum call_kind kind;
        size_t n_sent;     /* response messages queued */
        unsigned pseudo;   /* PH_* seen in the request headers */
        bool regular_seen; /* a regular header came: no pseudo-header after it */
        char refused[128]; /* why the request headers are refused (the first reason); "" */
        bool reset_sent;   /* ... and the stream was reset for it */
        char *path;
        char *content_type;
        char *encoding;
        bool have_timeout_err;
        bool dispatched;
        ncm__rpc_message req;
        bool headers_sent;
        bool finishing; /* status set, waiting for the queue to drain */
        bool want_writable;
        int status;
        char *status_msg;
        bool accept_identity;
        chunk *qhead, *qtail;
        size_t queued;
        ncm_rpc_call_ops sops;
        void *sdata;

        /* client */
        ncm_rpc_client_ops cops;
        void *cdata;
        uint8_t *reqbuf;
        size_t reqlen, reqoff;
        int http_status;
        int grpc_status; /* -1: none */
        char *grpc_message;
        int local_code; /* -1: none; else a status decided here (deadline, cancel, limit) */
        char *local_message;
        bool paused;
        size_t unconsumed;
        uint32_t close_error;
        bool data_end; /* END_STREAM came on a DATA frame */
};

typedef struct route {
        char *path;
        size_t service_len; /* "/pkg.Service" */
        enum call_kind kind;
        ncm_rpc_handler_fn fn;
        void *data;
} route;

struct ncm_rpc_server {
        ncm_rpc_opts opts;
        char *user_agent;
        route *routes;
        size_t n_routes, cap_routes;
        ncm_rpc_handler_fn fallback;
        void *fallback_data;
};

struct ncm_rpc_conn {
        nghttp2_session *h2;
        bool server;
        ncm_rpc_server *srv;
        ncm_rpc_opts opts;
        char *user_agent;
        ncm_rpc_env env;
        ncm__rpc_h2track track;

        uint8_t *out;
        size_t out_len, out_off, out_cap;

        event *ev;
        size_t n_ev, cap_ev;

        log_entry *logq;
        size_t n_log;

        ncm_rpc_call *calls;
        size_t n_open;
        size_t queued_total;

        uint64_t created, frame_started, idle_since;
        uint64_t write_progress; /* when pending output last moved */
        bool handshake_done;
        bool dead;    /* no more reading: EOF, error, timeout */
        bool abandon; /* dead and the rest of the output is not worth waiting for */
        uint64_t dead_since;
        bool goaway_recv;
        bool shutdown;
        int depth;
        bool free_pending;
        char *dead_reason;
};

/* ---- small helpers ---------------------------------------------------------------------- */

static uint64_t now_ms(const ncm_rpc_conn *c)
{
        return c->env.now_ms ? c->env.now_ms(c->env.data) : 0;
}

static void wake(ncm_rpc_conn *c)
{
        if (c->depth == 0 && c->env.wake)
                c->env.wake(c->env.data);
}

static char *dupn(const void *s, size_t n)
{
        char *p = malloc(n + 1);
        if (p) {
                memcpy(p, s, n);
                p[n] = 0;
        }
        return p;
}

static int md_add(md_list *l, const char *k, size_t kl, const char *v, size_t vl)
{
        if (ncm__array_grow(l->v, l->cap, l->n) < 0)
                return -ENOMEM;
        char *key = dupn(k, kl), *val = dupn(v, vl);
        if (!key || !val) {
                free(key);
                free(val);
                return -ENOMEM;
        }
        l->v[l->n++] = (ncm_rpc_md){key, val};
        return 0;
}

static void md_done(md_list *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free((char *)l->v[i].key);
                free((char *)l->v[i].value);
        }
        free(l->v);
        *l = (md_list){0};
}

static nghttp2_nv nv(const char *k, const char *v)
{
        return (nghttp2_nv){(uint8_t *)k, (uint8_t *)v, strlen(k), strlen(v), NGHTTP2_NV_FLAG_NONE};
}

void ncm_rpc_opts_default(ncm_rpc_opts *o)
{
        *o = (ncm_rpc_opts){
                        .max_recv_msg = 4 << 20,
                        .max_send_msg = 4 << 20,
                        .max_concurrent_streams = 100,
                        .stream_window = 1 << 20,
                        .conn_window = 4 << 20,
                        .send_queue_high = 1 << 20,
                        .send_queue_max = 8 << 20,
                        .out_max = 256 << 10,
                        .max_header_list = 64 << 10,
                        .handshake_timeout_ms = 10000,
                        .frame_timeout_ms = 10000,
                        .stall_timeout_ms = 30000,
                        .idle_timeout_ms = 0,
                        .user_agent = NULL,
        };
}

/* ---- calls ------------------------------------------------------------------------------- */

static void call_free(ncm_rpc_call *call)
{
        ncm__rpc_framer_done(&call->framer);
        md_done(&call->md);
        md_done(&call->md_trailer);
        md_done(&call->md_resp);
        free(call->path);
        free(call->content_type);
        free(call->encoding);
        free(call->req.msg);
        free(call->status_msg);
        for (chunk *ch = call->qhead, *n; ch; ch = n) {
                n = ch->next;
                free(ch);
        }
        free(call->reqbuf);
        free(call->grpc_message);
        free(call->local_message);
        free(call);
}

static void call_unlink(ncm_rpc_call *call)
{
        ncm_rpc_conn *c = call->conn;
        if (!c)
                return;
        if (call->prev)
                call->prev->next = call->next;
        else
                c->calls = call->next;
        if (call->next)
                call->next->prev = call->prev;
        call->prev = call->next = NULL;
        c->queued_total -= call->queued;
        call->conn = NULL;
}

static void call_unref(ncm_rpc_call *call)
{
        if (--call->refs > 0)
                return;
        call_unlink(call);
        call_free(call);
}

static ncm_rpc_call *call_new(ncm_rpc_conn *c, bool client)
{
        ncm_rpc_call *call = calloc(1, sizeof(*call));
        if (!call)
                return NULL;
        call->conn = c;
        call->client = client;
        call->deadline = NO_DEADLINE;
        call->grpc_status = -1;
        call->local_code = -1;
        call->status = -1;
        ncm__rpc_framer_init(&call->framer, c->opts.max_recv_msg);
        call->next = c->calls;
        if (c->calls)
                c->calls->prev = call;
        c->calls = call;
        return call;
}

static int push_event(ncm_rpc_conn *c, enum ev_type type, ncm_rpc_call *call, ncm__rpc_message msg)
{
        if (ncm__array_grow(c->ev, c->cap_ev, c->n_ev) < 0)
                return -ENOMEM;
        call->refs++;
        c->ev[c->n_ev++] = (event){type, call, msg};
        return 0;
}

/*
 * Tell opts.log WHAT about PATH (may be NULL) once the connection is out of nghttp2. A line
 * that cannot be kept (out of memory, or a flood of refusals within one read) is dropped:
 * a log must not cost a connection its memory bound.
 */
static void log_later(ncm_rpc_conn *c, int level, const char *path, const char *what)
{
        if (!c->opts.log || c->n_log >= 64)
                return;
        if (c->n_log == 0) {
                c->logq = calloc(64, sizeof(*c->logq));
                if (!c->logq)
                        return;
        }
        char *p = strdup(path ? path : ""), *w = strdup(what);
        if (!p || !w) {
                free(p);
                free(w);
                return;
        }
        c->logq[c->n_log++] = (log_entry){level, p, w};
}

/* Deliver the kept lines (deliver false: only drop them). */
static void log_flush(ncm_rpc_conn *c, bool deliver)
{
        log_entry *q = c->logq;
        size_t n = c->n_log;

        c->logq = NULL;
        c->n_log = 0;
        for (size_t i = 0; i < n; i++) {
                if (deliver && c->opts.log)
                        c->opts.log(c->opts.log_data, q[i].level, q[i].path, q[i].what);
                free(q[i].path);
                free(q[i].what);
        }
        free(q);
}

static void stream_closed(ncm_rpc_conn *c, ncm_rpc_call *call)
{
        if (!call->stream_open)
                return;
        call->stream_open = false;
        if (--c->n_open == 0)
                c->idle_since = now_ms(c);
        if (call->unconsumed > 0 && c->h2) {
                nghttp2_session_consume_connection(c->h2, call->unconsumed);
                call->unconsumed = 0;
        }
        call_unref(call);
}

/* ---- server: answering ------------------------------------------------------------------ */

static h2_ssize srv_read(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *user);

static void append_md_nv(nghttp2_nv *nva, size_t *n, const md_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                nva[(*n)++] = nv(l->v[i].key, l->v[i].value);
}

/* Status headers: grpc-status and a percent-encoded grpc-message. */
typedef struct status_hdrs {
        char code[12];
        ncm_buf msg;
} status_hdrs;

static size_t add_status(nghttp2_nv *nva, size_t n, status_hdrs *st, int code, const char *msg)
{
        snprintf(st->code, sizeof(st->code), "%d", code);
        nva[n++] = nv("grpc-status", st->code);
        if (msg && *msg) {
                ncm__rpc_percent_encode(&st->msg, msg, strlen(msg));
                ncm_buf_putc(&st->msg, 0);
                if (!ncm_buf_failed(&st->msg))
                        nva[n++] = nv("grpc-message", st->msg.data);
        }
        return n;
}

static int submit_headers(ncm_rpc_conn *c, ncm_rpc_call *call)
{
        nghttp2_nv *nva = calloc(3 + call->md_resp.n, sizeof(*nva));
        if (!nva)
                return -ENOMEM;
        size_t n = 0;
        nva[n++] = nv(":status", "200");
        nva[n++] = nv("content-type", "application/grpc");
        if (call->accept_identity)
                nva[n++] = nv("grpc-accept-encoding", "identity");
        append_md_nv(nva, &n, &call->md_resp);
        h2_provider prd = {.source.ptr = call, .read_callback = srv_read};
        int r = h2_submit_response(c->h2, call->stream_id, nva, n, &prd);
        free(nva);
        if (r < 0)
                return -EIO;
        call->headers_sent = true;
        return 0;
}

/*
 * Put the call's status on the wire: trailers after the queued messages, or a trailers-only
 * response when nothing was sent. http_status other than 200 is for refusals (415).
 */
static void wire_status(ncm_rpc_conn *c, ncm_rpc_call *call, int code, const char *msg,
                        const char *http_status)
{
        if (call->wire_done || call->ended)
                return;
        call->wire_done = true;
        call->status = code;
        free(call->status_msg);
        call->status_msg = msg ? strdup(msg) : NULL;
        if (call->headers_sent || call->qhead) {
                call->finishing = true;
                if (!call->headers_sent) {
                        if (submit_headers(c, call) < 0)
                                nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, call->stream_id,
                                                          NGHTTP2_INTERNAL_ERROR);
                } else {
                        nghttp2_session_resume_data(c->h2, call->stream_id);
                }
                return;
        }
        nghttp2_nv *nva = calloc(6 + call->md_resp.n + call->md_trailer.n, sizeof(*nva));
        status_hdrs st = {.msg = NCM_BUF_INIT};
        if (!nva) {
                nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, call->stream_id,
                                          NGHTTP2_INTERNAL_ERROR);
                return;
        }
        size_t n = 0;
        nva[n++] = nv(":status", http_status ? http_status : "200");
        nva[n++] = nv("content-type", "application/grpc");
        if (call->accept_identity)
                nva[n++] = nv("grpc-accept-encoding", "identity");
        n = add_status(nva, n, &st, code, msg);
        append_md_nv(nva, &n, &call->md_resp);
        append_md_nv(nva, &n, &call->md_trailer);
        call->headers_sent = true;
        if (h2_submit_response(c->h2, call->stream_id, nva, n, NULL) < 0)
                nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, call->stream_id,
                                          NGHTTP2_INTERNAL_ERROR);
        ncm_buf_done(&st.msg);
        free(nva);
}

static void submit_trailers(ncm_rpc_conn *c, ncm_rpc_call *call)
{
        nghttp2_nv *nva = calloc(2 + call->md_trailer.n, sizeof(*nva));
        status_hdrs st = {.msg = NCM_BUF_INIT};
        if (!nva) {
                nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, call->stream_id,
                                          NGHTTP2_INTERNAL_ERROR);
                return;
        }
        size_t n = add_status(nva, 0, &st, call->status, call->status_msg);
        append_md_nv(nva, &n, &call->md_trailer);
        if (nghttp2_submit_trailer(c->h2, call->stream_id, nva, n) < 0)
                nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, call->stream_id,
                                          NGHTTP2_INTERNAL_ERROR);
        ncm_buf_done(&st.msg);
        free(nva);
}

static void maybe_writable(ncm_rpc_conn *c, ncm_rpc_call *call)
{
        if (call->want_writable && call->queued <= c->opts.send_queue_high / 2 &&
            !call->finishing) {
                call->want_writable = false;
                push_event(c, EV_WRITABLE, call, (ncm__rpc_message){0});
        }
}

static h2_ssize srv_read(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *user)
{
        ncm_rpc_conn *c = user;
        ncm_rpc_call *call = src->ptr;
        size_t n = 0;
        while (n < length && call->qhead) {
                chunk *ch = call->qhead;
                size_t take = ch->len - ch->off;
                if (take > length - n)
                        take = length - n;
                memcpy(buf + n, ch->data + ch->off, take);
                ch->off += take;
                n += take;
                if (ch->off == ch->len) {
                        call->qhead = ch->next;
                        if (!call->qhead)
                                call->qtail = NULL;
                        call->queued -= ch->len;
                        c->queued_total -= ch->len;
                        free(ch);
                }
        }
        maybe_writable(c, call);
        if (!call->qhead && call->finishing) {
                *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
                call->finishing = false;
                submit_trailers(c, call);
                return (h2_ssize)n;
        }
        if (n == 0)
                return NGHTTP2_ERR_DEFERRED;
        return (h2_ssize)n;
}

/* ---- server: requests ------------------------------------------------------------------- */

static const route *find_route(const ncm_rpc_server *srv, const char *path, bool *known_service)
{
        *known_service = false;
        const char *slash = strrchr(path, '/');
        size_t svc_len = slash ? (size_t)(slash - path) : 0;
        for (size_t i = 0; i < srv->n_routes; i++) {
                if (strcmp(srv->routes[i].path, path) == 0)
                        return &srv->routes[i];
                if (slash && srv->routes[i].service_len == svc_len &&
                    memcmp(srv->routes[i].path, path, svc_len) == 0)
                        *known_service = true;
        }
        return NULL;
}

static bool grpc_content_type(const char *ct)
{
        /* As grpc-go: "application/grpc", optionally followed by "+subtype" or ";params". */
        if (!ct || strncmp(ct, "application/grpc", 16) != 0)
                return false;
        return ct[16] == 0 || ct[16] == '+' || ct[16] == ';';
}

/* The request headers are complete: refuse what is not a gRPC call of a known method. */
static void srv_headers_done(ncm_rpc_conn *c, ncm_rpc_call *call)
{
        if (!grpc_content_type(call->content_type)) {
                ncm_buf m = NCM_BUF_INIT;
                const char *ct = call->content_type ? call->content_type : "";
                ncm_buf_puts(&m, "invalid gRPC request content-type ");
                ncm_buf_go_quote(&m, ct, strlen(ct));
                ncm_buf_putc(&m, 0);
                wire_status(c, call, NCM_RPC_INVALID_ARGUMENT, ncm_buf_failed(&m) ? "" : m.data,
                            "415");
                ncm_buf_done(&m);
                return;
        }
        if (call->have_timeout_err) {
                wire_status(c, call, NCM_RPC_INTERNAL, "malformed grpc-timeout", NULL);
                return;
        }
        const char *path = call->path ? call->path : "";
        bool known = false;
        const char *sm = path[0] == '/' ? path + 1 : path;
        const char *slash = strrchr(sm, '/');
        if (!slash) {
                ncm_buf m = NCM_BUF_INIT;
                ncm_buf_puts(&m, "malformed method name: ");
                ncm_buf_go_quote(&m, path, strlen(path));
                ncm_buf_putc(&m, 0);
                wire_status(c, call, NCM_RPC_UNIMPLEMENTED, ncm_buf_failed(&m) ? "" : m.data, NULL);
                ncm_buf_done(&m);
                return;
        }
        if (find_route(c->srv, path, &known) || c->srv->fallback)
                return;
        ncm_buf m = NCM_BUF_INIT;
        if (known)
                ncm_buf_printf(&m, "unknown method %s for service %.*s", slash + 1,
                               (int)(slash - sm), sm);
        else
                ncm_buf_printf(&m, "unknown service %.*s", (int)(slash - sm), sm);
        wire_status(c, call, NCM_RPC_UNIMPLEMENTED, ncm_buf_failed(&m) ? "" : m.data, NULL);
        ncm_buf_done(&m);
}

static void srv_message(ncm_rpc_conn *c, ncm_rpc_call *call, ncm__rpc_message msg)
{
        if (call->dispatched || call->wire_done) {
                /* Unary and server-streaming calls take one message; later ones are dropped,
                 * as grpc-go does not read past the first. */
                free(msg.msg);
                return;
        }
        if (msg.compressed) {
                free(msg.msg);
                call->accept_identity = true;
                ncm_buf m = NCM_BUF_INIT;
                const char *enc = call->encoding ? call->encoding : "";
                ncm_buf_puts(&m, "grpc: Decompressor is not installed for grpc-encoding ");
                ncm_buf_go_quote(&m, enc, strlen(enc));
                ncm_buf_putc(&m, 0);
                wire_status(c, call, NCM_RPC_UNIMPLEMENTED, ncm_buf_failed(&m) ? "" : m.data, NULL);
                ncm_buf_done(&m);
                return;
        }
        call->req = msg;
        call->dispatched = true;
        if (push_event(c, EV_DISPATCH, call, (ncm__rpc_message){0}) < 0)
                wire_status(c, call, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory", NULL);
}

/* ---- client: status --------------------------------------------------------------------- */

static int http_to_code(int status)
{
        /* gRPC's doc/http-grpc-status-mapping.md */
        switch (status) {
        case 400:
                return NCM_RPC_INTERNAL;
        case 401:
                return NCM_RPC_UNAUTHENTICATED;
        case 403:
                return NCM_RPC_PERMISSION_DENIED;
        case 404:
                return NCM_RPC_UNIMPLEMENTED;
        case 429:
        case 502:
        case 503:
        case 504:
                return NCM_RPC_UNAVAILABLE;
        default:
                return NCM_RPC_UNKNOWN;
        }
}

static int rst_to_code(uint32_t e)
{
        /* grpc-go's http2ErrConvTab */
        switch (e) {
        case NGHTTP2_REFUSED_STREAM:
                return NCM_RPC_UNAVAILABLE;
        case NGHTTP2_CANCEL:
                return NCM_RPC_CANCELLED;
        case NGHTTP2_ENHANCE_YOUR_CALM:
        case NGHTTP2_FLOW_CONTROL_ERROR:
                return NCM_RPC_RESOURCE_EXHAUSTED;
        case NGHTTP2_INADEQUATE_SECURITY:
                return NCM_RPC_PERMISSION_DENIED;
        default:
                return NCM_RPC_INTERNAL;
        }
}

static void set_local(ncm_rpc_call *call, int code, const char *msg)
{
        if (call->local_code >= 0 || call->grpc_status >= 0)
                return;
        call->local_code = code;
        call->local_message = strdup(msg);
}

/* Decide the final status of a client call whose stream closed with error_code. */
static void cli_close(ncm_rpc_conn *c, ncm_rpc_call *call)
{
        if (call->ended)
                return;
        call->ended = true;
        if (call->local_code < 0 && call->grpc_status < 0) {
                char m[96];
                if (call->http_status != 0 && call->http_status != 200) {
                        snprintf(m, sizeof(m),
                                 "unexpected HTTP status code received from server: %d",
                                 call->http_status);
                        set_local(call, http_to_code(call->http_status), m);
                } else if (call->close_error != NGHTTP2_NO_ERROR) {
                        snprintf(m, sizeof(m),
                                 "stream terminated by RST_STREAM with error code: %u",
                                 call->close_error);
                        set_local(call, rst_to_code(call->close_error), m);
                } else if (c->dead && !call->data_end) {
                        set_local(call, NCM_RPC_UNAVAILABLE,
                                  c->dead_reason ? c->dead_reason : "connection closed");
                } else {
                        set_local(call, NCM_RPC_INTERNAL,
                                  "server closed the stream without sending trailers");
                }
        }
        push_event(c, EV_CLOSE, call, (ncm__rpc_message){0});
}

/* ---- nghttp2 callbacks ------------------------------------------------------------------ */

static ncm_rpc_call *stream_call(nghttp2_session *s, int32_t id)
{
        return nghttp2_session_get_stream_user_data(s, id);
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
        ncm_rpc_conn *c = user;
        if (!c->server || f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
                return 0;
        ncm_rpc_call *call = call_new(c, false);
        if (!call)
                return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        call->stream_id = f->hd.stream_id;
        call->refs = 1;
        call->stream_open = true;
        c->n_open++;
        nghttp2_session_set_stream_user_data(s, f->hd.stream_id, call);
        return 0;
}

static bool name_is(const uint8_t *n, size_t nl, const char *s)
{
        return nl == strlen(s) && memcmp(n, s, nl) == 0;
}

/* Refuse CALL's request for the first reason found (WHY, about the header NAME, if any). */
static void refuse(ncm_rpc_call *call, const char *why, const uint8_t *name, size_t namelen)
{
        ncm_buf m = NCM_BUF_INIT;

        if (call->refused[0])
                return;
        ncm_buf_puts(&m, why);
        if (name) {
                ncm_buf_putc(&m, ' ');
                ncm_buf_go_quote(&m, (const char *)name, namelen < 64 ? namelen : 64);
        }
        ncm_buf_putc(&m, 0);
        snprintf(call->refused, sizeof(call->refused), "%s", ncm_buf_failed(&m) ? why : m.data);
        ncm_buf_done(&m);
}

static bool is_connection_specific(const uint8_t *n, size_t nl)
{
        static const char *const names[] = {"connection", "keep-alive", "proxy-connection",
                                            "transfer-encoding", "upgrade"};
        for (size_t i = 0; i < NCM_ELEMENTSOF(names); i++)
                if (nl == strlen(names[i]) && memcmp(n, names[i], nl) == 0)
                        return true;
        return false;
}

/* Why nghttp2's HTTP messaging would refuse the pseudo-header NAME, or NULL. */
static const char *check_pseudo(ncm_rpc_call *call, bool trailer, const uint8_t *name,
                                size_t namelen, size_t valuelen)
{
        static const struct {
                const char *name;
                unsigned bit;
        } pseudo[] = {{":method", PH_METHOD},
                      {":scheme", PH_SCHEME},
                      {":path", PH_PATH},
                      {":authority", PH_AUTHORITY}};
        unsigned bit = 0;

        for (size_t i = 0; i < NCM_ELEMENTSOF(pseudo); i++)
                if (namelen == strlen(pseudo[i].name) && memcmp(name, pseudo[i].name, namelen) == 0)
                        bit = pseudo[i].bit;
        if (trailer)
                return "pseudo-header in trailers:";
        if (!bit)
                return "unknown pseudo-header";
        if (call->regular_seen)
                return "pseudo-header after a regular header:";
        if (call->pseudo & bit)
                return "repeated pseudo-header";
        call->pseudo |= bit;
        /* any :authority, even empty: grpc-go's server does not look at it */
        if (bit != PH_AUTHORITY && valuelen == 0)
                return "empty pseudo-header";
        return NULL;
}

/*
 * What nghttp2's HTTP messaging checked of a request header (see the top of this file), with
 * any :authority allowed. TRAILER: a header of the request's trailers, where no pseudo-header
 * may be. Records the first refusal in the call.
 */
static void check_header(ncm_rpc_call *call, bool trailer, const uint8_t *name, size_t namelen,
                         const uint8_t *value, size_t valuelen)
{
        const char *why = NULL;

        if (namelen > 0 && name[0] == ':') {
                why = check_pseudo(call, trailer, name, namelen, valuelen);
        } else {
                call->regular_seen = true;
                if (namelen == 0 || !nghttp2_check_header_name(name, namelen))
                        why = "invalid header name";
                else if (is_connection_specific(name, namelen))
                        why = "connection-specific header";
                else if (namelen == 2 && memcmp(name, "te", 2) == 0 &&
                         !(valuelen == 8 && memcmp(value, "trailers", 8) == 0))
                        why = "te other than \"trailers\":";
        }
        if (!why && !nghttp2_check_header_value(value, valuelen))
                why = "invalid value of header";
        if (why)
                refuse(call, why, name, namelen);
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
        ncm_rpc_conn *c = user;
        ncm_rpc_call *call = stream_call(s, f->hd.stream_id);
        if (!call || f->hd.type != NGHTTP2_HEADERS)
                return 0;
        call->header_bytes += namelen + valuelen + 32;
        if (call->header_bytes > c->opts.max_header_list) {
                if (c->server)
                        log_later(c, NCM_RPC_LOG_WARN, call->path,
                                  "request refused: header list larger than max_header_list");
                return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        const char *n = (const char *)name, *v = (const char *)value;
        int r = 0;
        if (c->server) {
                check_header(call, f->headers.cat != NGHTTP2_HCAT_REQUEST, name, namelen, value,
                             valuelen);
                if (call->refused[0] || f->headers.cat != NGHTTP2_HCAT_REQUEST)
                        return 0;
                if (name_is(name, namelen, ":path")) {
                        free(call->path);
                        call->path = dupn(v, valuelen);
                } else if (name_is(name, namelen, "content-type")) {
                        free(call->content_type);
                        call->content_type = dupn(v, valuelen);
                } else if (name_is(name, namelen, "grpc-encoding")) {
                        free(call->encoding);
                        call->encoding = dupn(v, valuelen);
                } else if (name_is(name, namelen, "grpc-timeout")) {
                        uint64_t ms;
                        if (ncm__rpc_timeout_parse(v, valuelen, &ms) < 0)
                                call->have_timeout_err = true;
                        else
                                call->deadline = now_ms(c) + ms;
                } else if (!ncm__rpc_reserved_header(n, namelen)) {
                        r = md_add(&call->md, n, namelen, v, valuelen);
                }
                return r < 0 ? NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE : 0;
        }
        /* Client: response headers, or trailers (also a trailers-only response). */
        bool trailer = f->headers.cat == NGHTTP2_HCAT_HEADERS ||
                       (f->hd.flags & NGHTTP2_FLAG_END_STREAM);
        if (name_is(name, namelen, ":status")) {
                int st = 0;
                for (size_t i = 0; i < valuelen && i < 4; i++)
                        st = st * 10 + (v[i] - '0');
                call->http_status = st;
        } else if (name_is(name, namelen, "grpc-status")) {
                int st = 0;
                for (size_t i = 0; i < valuelen && i < 6; i++) {
                        if (v[i] < '0' || v[i] > '9') {
                                st = NCM_RPC_UNKNOWN;
                                break;
                        }
                        st = st * 10 + (v[i] - '0');
                }
                call->grpc_status = st;
        } else if (name_is(name, namelen, "grpc-message")) {
                free(call->grpc_message);
                call->grpc_message = ncm__rpc_percent_decode(v, valuelen);
        } else if (!ncm__rpc_reserved_header(n, namelen)) {
                r = md_add(trailer ? &call->md_trailer : &call->md, n, namelen, v, valuelen);
        }
        return r < 0 ? NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE : 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
        ncm_rpc_conn *c = user;
        switch (f->hd.type) {
        case NGHTTP2_SETTINGS:
                if (!(f->hd.flags & NGHTTP2_FLAG_ACK))
                        c->handshake_done = true;
                return 0;
        case NGHTTP2_GOAWAY:
                c->goaway_recv = true;
                return 0;
        case NGHTTP2_HEADERS:
        case NGHTTP2_DATA:
                break;
        default:
                return 0;
        }
        ncm_rpc_call *call = stream_call(s, f->hd.stream_id);
        if (!call)
                return 0;
        bool end = f->hd.flags & NGHTTP2_FLAG_END_STREAM;
        if (c->server) {
                bool request = f->hd.type == NGHTTP2_HEADERS &&
                               f->headers.cat == NGHTTP2_HCAT_REQUEST;
                if (request && !call->refused[0] &&
                    (call->pseudo & (PH_METHOD | PH_SCHEME | PH_PATH)) !=
                                    (PH_METHOD | PH_SCHEME | PH_PATH))
                        refuse(call, "missing :method, :scheme or :path", NULL, 0);
                if (f->hd.type == NGHTTP2_HEADERS && !request && !end && !call->refused[0])
                        refuse(call, "trailers without END_STREAM", NULL, 0);
                if (call->refused[0] && !call->reset_sent) {
                        call->reset_sent = true;
                        ncm_buf m = NCM_BUF_INIT;
                        ncm_buf_printf(&m, "request refused: %s", call->refused);
                        log_later(c, NCM_RPC_LOG_WARN, call->path,
                                  ncm_buf_failed(&m) ? "request refused" : m.data);
                        ncm_buf_done(&m);
                        /* as nghttp2's own checks reset it; a handler already running hears
                         * on_cancel when the stream closes */
                        if (!call->dispatched)
                                call->wire_done = true;
                        nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id,
                                                  NGHTTP2_PROTOCOL_ERROR);
                        return 0;
                }
                if (request)
                        srv_headers_done(c, call);
                if (end) {
                        call->peer_half_closed = true;
                        if (!call->dispatched && !call->wire_done)
                                wire_status(c, call, NCM_RPC_INTERNAL,
                                            ncm__rpc_framer_partial(&call->framer)
                                                            ? "grpc: truncated request message"
                                                            : "grpc: request message missing",
                                            NULL);
                }
                return 0;
        }
        if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_RESPONSE && !end &&
            call->cops.on_headers)
                push_event(c, EV_HEADERS, call, (ncm__rpc_message){0});
        if (end && f->hd.type == NGHTTP2_DATA)
                call->data_end = true;
        return 0;
}

static int on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t stream_id, const uint8_t *data,
                         size_t len, void *user)
{
        ncm_rpc_conn *c = user;
        ncm_rpc_call *call = stream_call(s, stream_id);
        if (!call || call->ended || call->framer_failed || (!call->client && call->wire_done)) {
                nghttp2_session_consume(s, stream_id, len);
                return 0;
        }
        if (call->client && call->paused)
                call->unconsumed += len;
        else
                nghttp2_session_consume(s, stream_id, len);

        while (len > 0) {
                size_t used = 0;
                ncm__rpc_message msg = {0};
                uint64_t announced = 0;
                int r = ncm__rpc_framer_feed(&call->framer, data, len, &used, &msg, &announced);
                if (r < 0) {
                        char m[128];
                        int code = NCM_RPC_INTERNAL;
                        if (r == -EMSGSIZE) {
                                code = NCM_RPC_RESOURCE_EXHAUSTED;
                                snprintf(m, sizeof(m),
                                         "grpc: received message larger than max (%llu vs. %zu)",
                                         (unsigned long long)announced, c->opts.max_recv_msg);
                        } else if (r == -ENOMEM) {
                                code = NCM_RPC_RESOURCE_EXHAUSTED;
                                snprintf(m, sizeof(m), "out of memory");
                        } else {
                                snprintf(m, sizeof(m), "grpc: invalid message flag");
                        }
                        call->framer_failed = true;
                        ncm__rpc_framer_done(&call->framer);
                        if (call->client) {
                                set_local(call, code, m);
                                nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, stream_id,
                                                          NGHTTP2_CANCEL);
                        } else {
                                wire_status(c, call, code, m, NULL);
                        }
                        return 0;
                }
                data += used;
                len -= used;
                if (r == 1) {
                        if (!call->client) {
                                srv_message(c, call, msg);
                        } else if (msg.compressed) {
                                free(msg.msg);
                                call->framer_failed = true;
                                set_local(call, NCM_RPC_INTERNAL,
                                          "grpc: compressed message received, no compression "
                                          "was negotiated");
                                nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, stream_id,
                                                          NGHTTP2_CANCEL);
                                return 0;
                        } else if (push_event(c, EV_MESSAGE, call, msg) < 0) {
                                free(msg.msg);
                                return NGHTTP2_ERR_CALLBACK_FAILURE;
                        }
                }
        }
        return 0;
}

/* A frame nghttp2 refused (its own checks: flow control, stream states, ...): told to the log. */
static int on_invalid_frame(nghttp2_session *s, const nghttp2_frame *f, int lib_error, void *user)
{
        ncm_rpc_conn *c = user;
        ncm_rpc_call *call = stream_call(s, f->hd.stream_id);
        char m[160];

        snprintf(m, sizeof(m), "HTTP/2 frame (type %u, stream %d) refused: %s",
                 (unsigned)f->hd.type, f->hd.stream_id, nghttp2_strerror(lib_error));
        log_later(c, NCM_RPC_LOG_WARN, call ? call->path : NULL, m);
        return 0;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
        ncm_rpc_conn *c = user;
        if (!c->server || f->hd.type != NGHTTP2_HEADERS || !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
                return 0;
        ncm_rpc_call *call = stream_call(s, f->hd.stream_id);
        /* The response is complete; a client still sending (an oversized request) is told to
         * stop, as HTTP/2 section 8.1 allows. */
        if (call && !call->peer_half_closed)
                nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id, NGHTTP2_NO_ERROR);
        return 0;
}

/*
 * CALL's stream is gone (ERROR_CODE, HTTP/2's): a client call closes; a server call ends, and a
 * handler still at work learns that it is gone.
 */
static void call_gone(ncm_rpc_conn *c, ncm_rpc_call *call, uint32_t error_code)
{
        if (call->client) {
                call->close_error = error_code;
                cli_close(c, call);
        } else if (!call->ended) {
                call->ended = true;
                if (call->user_holds || (call->dispatched && !call->wire_done))
                        push_event(c, EV_CANCEL, call, (ncm__rpc_message){0});
        }
}

static int on_stream_close(nghttp2_session *s, int32_t stream_id, uint32_t error_code, void *user)
{
        ncm_rpc_conn *c = user;
        ncm_rpc_call *call = stream_call(s, stream_id);
        if (!call)
                return 0;
        nghttp2_session_set_stream_user_data(s, stream_id, NULL);
        call_gone(c, call, error_code);
        stream_closed(c, call);
        return 0;
}

/* ---- connection --------------------------------------------------------------------------- */

static int conn_init(ncm_rpc_conn *c, const ncm_rpc_opts *opts, const ncm_rpc_env *env)
{
        ncm_rpc_opts d;
        ncm_rpc_opts_default(&d);
        c->opts = opts ? *opts : d;
        if (c->opts.user_agent) {
                c->user_agent = strdup(c->opts.user_agent);
                if (!c->user_agent)
                        return -ENOMEM;
        }
        c->opts.user_agent = c->user_agent;
        if (env)
                c->env = *env;
        c->created = c->idle_since = c->frame_started = c->write_progress = now_ms(c);
        ncm__rpc_h2track_init(&c->track, c->server);

        nghttp2_session_callbacks *cb;
        nghttp2_option *opt;
        if (nghttp2_session_callbacks_new(&cb) != 0)
                return -ENOMEM;
        if (nghttp2_option_new(&opt) != 0) {
                nghttp2_session_callbacks_del(cb);
                return -ENOMEM;
        }
        nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
        nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
        nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
        nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
        nghttp2_option_set_no_auto_window_update(opt, 1);
        if (c->server) {
                nghttp2_option_set_no_http_messaging(opt, 1);
                nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, on_invalid_frame);
        }
        nghttp2_option_set_max_send_header_block_length(opt, c->opts.max_header_list + 1024);
        int r = c->server ? nghttp2_session_server_new2(&c->h2, cb, c, opt)
                          : nghttp2_session_client_new2(&c->h2, cb, c, opt);
        nghttp2_session_callbacks_del(cb);
        nghttp2_option_del(opt);
        if (r != 0)
                return -ENOMEM;
        nghttp2_settings_entry iv[] = {
                        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, c->opts.max_concurrent_streams},
                        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, c->opts.stream_window},
                        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, c->opts.max_header_list},
                        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        };
        /* ENABLE_PUSH is a client-only setting. */
        if (nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, iv,
                                    c->server ? 3 : NCM_ELEMENTSOF(iv)) != 0)
                return -ENOMEM;
        if (c->opts.conn_window > 65535)
                nghttp2_session_set_local_window_size(c->h2, NGHTTP2_FLAG_NONE, 0,
                                                      (int32_t)c->opts.conn_window);
        return 0;
}

ncm_rpc_conn *ncm_rpc_conn_new_server(ncm_rpc_server *srv, const ncm_rpc_env *env)
{
        ncm_rpc_conn *c = calloc(1, sizeof(*c));
        if (!c)
                return NULL;
        c->server = true;
        c->srv = srv;
        if (conn_init(c, &srv->opts, env) < 0)
                return ncm_rpc_conn_free(c);
        return c;
}

ncm_rpc_conn *ncm_rpc_conn_new_client(const ncm_rpc_opts *opts, const ncm_rpc_env *env)
{
        ncm_rpc_conn *c = calloc(1, sizeof(*c));
        if (!c)
                return NULL;
        if (conn_init(c, opts, env) < 0)
                return ncm_rpc_conn_free(c);
        return c;
}

static void set_dead(ncm_rpc_conn *c, const char *reason)
{
        if (c->dead)
                return;
        c->dead = true;
        c->dead_since = now_ms(c);
        if (reason && !c->dead_reason)
                c->dead_reason = strdup(reason);
}

/* End every call still open because the connection is gone. */
static void end_all_calls(ncm_rpc_conn *c)
{
        for (ncm_rpc_call *call = c->calls; call; call = call->next)
                if (call->stream_open)
                        call_gone(c, call, NGHTTP2_NO_ERROR);
        for (ncm_rpc_call *call = c->calls, *n; call; call = n) {
                n = call->next;
                if (call->stream_open) {
                        call->refs++;
                        stream_closed(c, call);
                        n = call->next;
                        call_unref(call);
                }
        }
}

static void really_free(ncm_rpc_conn *c);

/*
 * Tell the client its call ended (once: the caller checks call->reported): with the local
 * reason when there is one, else the server's status; the user's hold on the call goes with it.
 */
static void report_close(ncm_rpc_call *call)
{
        int code = call->local_code >= 0 ? call->local_code : call->grpc_status;
        const char *m = call->local_code >= 0 ? call->local_message : call->grpc_message;

        call->reported = true;
        call->cops.on_close(call, (ncm_rpc_code)code, m ? m : "", call->md_trailer.v,
                            call->md_trailer.n, call->cdata);
        if (call->user_holds) {
                call->user_holds = false;
                call_unref(call);
        }
}

/* Run the queued events' callbacks. Returns false when the connection was freed by one. */
static bool dispatch(ncm_rpc_conn *c)
{
        c->depth++;
        for (size_t i = 0; i < c->n_ev; i++) {
                event e = c->ev[i];
                ncm_rpc_call *call = e.call;
                switch (e.type) {
                case EV_DISPATCH: {
                        const route *rt = NULL;
                        bool known;
                        if (call->ended || call->wire_done)
                                break;
                        rt = find_route(c->srv, call->path, &known);
                        ncm_rpc_handler_fn fn = rt ? rt->fn : c->srv->fallback;
                        void *data = rt ? rt->data : c->srv->fallback_data;
                        call->kind = rt ? rt->kind : KIND_ANY;
                        call->user_holds = true;
                        call->refs++;
                        ncm__rpc_message req = call->req;
                        call->req = (ncm__rpc_message){0};
                        fn(call, req.msg, req.len, data);
                        free(req.msg);
                        break;
                }
                case EV_CANCEL:
                        if (!call->reported && call->user_holds) {
                                call->reported = true;
                                if (call->sops.on_cancel)
                                        call->sops.on_cancel(
                                                        call,
                                                        call->deadline != NO_DEADLINE &&
                                                                                        now_ms(c) >= call->deadline
                                                                        ? NCM_RPC_DEADLINE_EXCEEDED
                                                                        : NCM_RPC_CANCELLED,
                                                        call->sdata);
                        }
                        break;
                case EV_WRITABLE:
                        if (call->user_holds && !call->ended && call->sops.on_writable)
                                call->sops.on_writable(call, call->sdata);
                        break;
                case EV_HEADERS:
                        if (!call->reported && call->cops.on_headers)
                                call->cops.on_headers(call, call->md.v, call->md.n, call->cdata);
                        break;
                case EV_MESSAGE:
                        if (!call->reported && call->cops.on_message)
                                call->cops.on_message(call, e.msg.msg, e.msg.len, call->cdata);
                        free(e.msg.msg);
                        break;
                case EV_CLOSE:
                        if (!call->reported)
                                report_close(call);
                        break;
                }
                call_unref(call);
        }
        c->n_ev = 0;
        c->depth--;
        if (c->depth == 0 && c->free_pending) {
                really_free(c);
                return false;
        }
        return true;
}

/*
 * Everything that enters the connection from outside ends here: callbacks run only at the
 * outermost level, never nested in another callback. Returns false if the connection was freed.
 */
static bool leave(ncm_rpc_conn *c)
{
        if (c->depth == 0 && c->n_log > 0)
                log_flush(c, true);
        if (c->depth > 0 || (c->n_ev == 0 && !c->free_pending))
                return true;
        return dispatch(c);
}

int ncm_rpc_conn_recv(ncm_rpc_conn *c, const uint8_t *data, size_t len, ncm_error *err)
{
        if (c->dead)
                return 0;
        c->depth++;
        /* A frame's clock starts when it starts, not at its last byte: a peer trickling one
         * byte at a time does not keep a frame open for ever. */
        bool was_mid = ncm__rpc_h2track_mid_frame(&c->track);
        uint64_t completed = c->track.completed;
        ncm__rpc_h2track_feed(&c->track, data, len);
        if (!was_mid || c->track.completed != completed)
                c->frame_started = now_ms(c);
        h2_ssize n = h2_mem_recv(c->h2, data, len);
        int r = 0;
        if (n < 0) {
                r = ncm_error_set(err, EPROTO, "HTTP/2: %s", nghttp2_strerror((int)n));
                if (c->server) {
                        char m[128];
                        snprintf(m, sizeof(m), "connection refused: HTTP/2: %s",
                                 nghttp2_strerror((int)n));
                        log_later(c, NCM_RPC_LOG_WARN, NULL, m);
                }
                /* nghttp2 queued a GOAWAY for protocol errors; send it, then close. */
                set_dead(c, "HTTP/2 protocol error");
                end_all_calls(c);
        }
        c->depth--;
        leave(c);
        return r;
}

void ncm_rpc_conn_eof(ncm_rpc_conn *c)
{
        c->depth++;
        set_dead(c, "connection closed");
        c->abandon = true;
        end_all_calls(c);
        c->depth--;
        leave(c);
}

int ncm_rpc_conn_pull(ncm_rpc_conn *c, const uint8_t **ret_data, size_t *ret_len)
{
        c->depth++;
        if (c->out_off == c->out_len) {
                c->out_off = c->out_len = 0;
                size_t fill = c->opts.out_max / 2 ? c->opts.out_max / 2 : 16384;
                while (!c->abandon && c->out_len < fill) {
                        const uint8_t *p;
                        h2_ssize n = h2_mem_send(c->h2, &p);
                        if (n <= 0) {
                                if (n < 0) {
                                        set_dead(c, "HTTP/2 send error");
                                        end_all_calls(c);
                                }
                                break;
                        }
                        if (c->out_len + (size_t)n > c->out_cap) {
                                size_t cap = c->out_cap ? c->out_cap : 16384;
                                while (cap < c->out_len + (size_t)n)
                                        cap *= 2;
                                uint8_t *o = realloc(c->out, cap);
                                if (!o) {
                                        set_dead(c, "out of memory");
                                        c->abandon = true;
                                        end_all_calls(c);
                                        break;
                                }
                                c->out = o;
                                c->out_cap = cap;
                        }
                        memcpy(c->out + c->out_len, p, (size_t)n);
                        c->out_len += (size_t)n;
                }
                if (c->out_len > 0)
                        c->write_progress = now_ms(c);
                /* Idle connections hold no output buffer (1,000 of them would hold 16 MiB). */
                if (c->out_len == 0 && c->out_cap > 0) {
                        free(c->out);
                        c->out = NULL;
                        c->out_cap = 0;
                }
        }
        c->depth--;
        if (!leave(c)) {
                *ret_data = NULL;
                *ret_len = 0;
                return 0;
        }
        *ret_data = c->out ? c->out + c->out_off : NULL;
        *ret_len = c->out_len - c->out_off;
        return 0;
}

void ncm_rpc_conn_sent(ncm_rpc_conn *c, size_t n)
{
        if (n > 0)
                c->write_progress = now_ms(c);
        c->out_off += n;
        if (c->out_off > c->out_len)
                c->out_off = c->out_len;
}

bool ncm_rpc_conn_want_read(const ncm_rpc_conn *c)
{
        return !c->dead && c->out_len - c->out_off < c->opts.out_max / 2 &&
               nghttp2_session_want_read(c->h2);
}

bool ncm_rpc_conn_done(const ncm_rpc_conn *c)
{
        if (c->out_off < c->out_len && !c->abandon)
                return false;
        if (c->abandon)
                return true;
        if (nghttp2_session_want_write(c->h2))
                return false;
        if (c->dead)
                return true;
        if ((c->goaway_recv || c->shutdown) && c->n_open == 0)
                return true;
        return !nghttp2_session_want_read(c->h2);
}

/* Output waits for the peer: unwritten frames, or responses queued behind its windows. */
static bool output_pending(const ncm_rpc_conn *c)
{
        return c->out_off < c->out_len || c->queued_total > 0;
}

uint64_t ncm_rpc_conn_next_tick(const ncm_rpc_conn *c)
{
        uint64_t t = NO_DEADLINE;
        if (c->n_ev > 0)
                return 0;
        if (c->dead)
                return c->abandon ? NO_DEADLINE : c->dead_since + c->opts.frame_timeout_ms;
        for (const ncm_rpc_call *call = c->calls; call; call = call->next)
                if (call->stream_open && !call->ended && call->deadline < t)
                        t = call->deadline;
        if (!c->handshake_done && c->opts.handshake_timeout_ms) {
                uint64_t h = c->created + c->opts.handshake_timeout_ms;
                if (h < t)
                        t = h;
        }
        if (c->opts.frame_timeout_ms && ncm__rpc_h2track_mid_frame(&c->track)) {
                uint64_t h = c->frame_started + c->opts.frame_timeout_ms;
                if (h < t)
                        t = h;
        }
        if (c->opts.stall_timeout_ms && output_pending(c)) {
                uint64_t h = c->write_progress + c->opts.stall_timeout_ms;
                if (h < t)
                        t = h;
        }
        if (c->opts.idle_timeout_ms && c->n_open == 0 && !c->shutdown) {
                uint64_t h = c->idle_since + c->opts.idle_timeout_ms;
                if (h < t)
                        t = h;
        }
        return t;
}

static void timeout_conn(ncm_rpc_conn *c, const char *why)
{
        nghttp2_session_terminate_session(c->h2, NGHTTP2_NO_ERROR);
        set_dead(c, why);
        end_all_calls(c);
}

void ncm_rpc_conn_tick(ncm_rpc_conn *c)
{
        uint64_t now = now_ms(c);
        c->depth++;
        if (c->dead) {
                if (!c->abandon && now >= c->dead_since + c->opts.frame_timeout_ms)
                        c->abandon = true;
        } else if (!c->handshake_done && c->opts.handshake_timeout_ms &&
                   now >= c->created + c->opts.handshake_timeout_ms) {
                timeout_conn(c, "HTTP/2 handshake timed out");
        } else if (c->opts.frame_timeout_ms && ncm__rpc_h2track_mid_frame(&c->track) &&
                   now >= c->frame_started + c->opts.frame_timeout_ms) {
                timeout_conn(c, "HTTP/2 frame timed out");
        } else if (c->opts.stall_timeout_ms && output_pending(c) &&
                   now >= c->write_progress + c->opts.stall_timeout_ms) {
                /* The peer took nothing we had for it, neither from the socket nor by opening
                 * its flow-control window: give up on it. */
                set_dead(c, "peer stopped reading");
                c->abandon = true;
                end_all_calls(c);
        } else if (c->opts.idle_timeout_ms && c->n_open == 0 && !c->shutdown &&
                   now >= c->idle_since + c->opts.idle_timeout_ms) {
                ncm_rpc_conn_shutdown(c);
        } else {
                for (ncm_rpc_call *call = c->calls; call; call = call->next) {
                        if (!call->stream_open || call->ended || call->deadline > now)
                                continue;
                        call->deadline = now; /* so that on_cancel reports DEADLINE_EXCEEDED */
                        if (call->client) {
                                set_local(call, NCM_RPC_DEADLINE_EXCEEDED, "Deadline Exceeded");
                                nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, call->stream_id,
                                                          NGHTTP2_CANCEL);
                                call->deadline = NO_DEADLINE;
                        } else {
                                if (call->user_holds || (call->dispatched && !call->wire_done))
                                        push_event(c, EV_CANCEL, call, (ncm__rpc_message){0});
                                wire_status(c, call, NCM_RPC_DEADLINE_EXCEEDED, "Deadline Exceeded",
                                            NULL);
                                call->ended = true;
                        }
                }
        }
        c->depth--;
        leave(c);
}

void ncm_rpc_conn_shutdown(ncm_rpc_conn *c)
{
        if (c->shutdown || c->dead)
                return;
        c->shutdown = true;
        if (c->server)
                nghttp2_submit_goaway(c->h2, NGHTTP2_FLAG_NONE,
                                      nghttp2_session_get_last_proc_stream_id(c->h2),
                                      NGHTTP2_NO_ERROR, NULL, 0);
        else
                nghttp2_session_terminate_session(c->h2, NGHTTP2_NO_ERROR);
        wake(c);
}

size_t ncm_rpc_conn_active_calls(const ncm_rpc_conn *c)
{
        return c->n_open;
}

bool ncm_rpc_conn_usable(const ncm_rpc_conn *c)
{
        return !c->dead && !c->goaway_recv && !c->shutdown;
}

static void really_free(ncm_rpc_conn *c)
{
        c->free_pending = false;
        c->depth++;
        set_dead(c, "connection closed");
        c->abandon = true;
        end_all_calls(c);
        c->depth--;
        /* Deliver what end_all_calls queued (on_cancel, on_close), then drop the rest. */
        if (c->n_ev > 0) {
                c->depth++;
                size_t n = c->n_ev;
                c->n_ev = 0;
                event *ev = c->ev;
                c->ev = NULL;
                c->cap_ev = 0;
                for (size_t i = 0; i < n; i++) {
                        ncm_rpc_call *call = ev[i].call;
                        if (ev[i].type == EV_CANCEL && !call->reported && call->user_holds) {
                                call->reported = true;
                                if (call->sops.on_cancel)
                                        call->sops.on_cancel(call, NCM_RPC_UNAVAILABLE,
                                                             call->sdata);
                        } else if (ev[i].type == EV_CLOSE && !call->reported) {
                                report_close(call);
                        }
                        free(ev[i].msg.msg);
                        call_unref(call);
                }
                free(ev);
                c->depth--;
        }
        /* Server calls still held by handlers are detached from the connection. */
        while (c->calls)
                call_unlink(c->calls);
        free(c->ev);
        log_flush(c, false);
        nghttp2_session_del(c->h2);
        free(c->out);
        free(c->user_agent);
        free(c->dead_reason);
        free(c);
}

ncm_rpc_conn *ncm_rpc_conn_free(ncm_rpc_conn *c)
{
        if (!c)
                return NULL;
        if (c->depth > 0) {
                c->free_pending = true;
                return NULL;
        }
        really_free(c);
        return NULL;
}

/* ---- server API ----------------------------------------------------------------------------- */

ncm_rpc_server *ncm_rpc_server_new(const ncm_rpc_opts *opts)
{
        ncm_rpc_server *srv = calloc(1, sizeof(*srv));
        if (!srv)
                return NULL;
        if (opts)
                srv->opts = *opts;
        else
                ncm_rpc_opts_default(&srv->opts);
        if (srv->opts.user_agent) {
                srv->user_agent = strdup(srv->opts.user_agent);
                if (!srv->user_agent) {
                        free(srv);
                        return NULL;
                }
                srv->opts.user_agent = srv->user_agent;
        }
        return srv;
}

ncm_rpc_server *ncm_rpc_server_free(ncm_rpc_server *srv)
{
        if (!srv)
                return NULL;
        for (size_t i = 0; i < srv->n_routes; i++)
                free(srv->routes[i].path);
        free(srv->routes);
        free(srv->user_agent);
        free(srv);
        return NULL;
}

static int server_add(ncm_rpc_server *srv, const char *path, enum call_kind kind,
                      ncm_rpc_handler_fn fn, void *data)
{
        const char *slash = path[0] == '/' ? strrchr(path, '/') : NULL;
        if (!slash || slash == path || slash[1] == 0 || !fn)
                return -EINVAL;
        bool known;
        if (find_route(srv, path, &known))
                return -EEXIST;
        if (ncm__array_grow(srv->routes, srv->cap_routes, srv->n_routes) < 0)
                return -ENOMEM;
        char *p = strdup(path);
        if (!p)
                return -ENOMEM;
        srv->routes[srv->n_routes++] = (route){p, (size_t)(slash - path), kind, fn, data};
        return 0;
}

int ncm_rpc_server_add(ncm_rpc_server *srv, const char *path, ncm_rpc_handler_fn fn, void *data)
{
        return server_add(srv, path, KIND_UNARY, fn, data);
}

int ncm_rpc_server_add_streaming(ncm_rpc_server *srv, const char *path, ncm_rpc_handler_fn fn,
                                 void *data)
{
        return server_add(srv, path, KIND_STREAMING, fn, data);
}

void ncm_rpc_server_set_fallback(ncm_rpc_server *srv, ncm_rpc_handler_fn fn, void *data)
{
        srv->fallback = fn;
        srv->fallback_data = data;
}

const ncm_rpc_opts *ncm_rpc_server_opts(const ncm_rpc_server *srv)
{
        return &srv->opts;
}

const char *ncm_rpc_call_path(const ncm_rpc_call *call)
{
        return call->path ? call->path : "";
}

const ncm_rpc_md *ncm_rpc_call_metadata(const ncm_rpc_call *call, size_t *ret_n)
{
        *ret_n = call->client ? 0 : call->md.n;
        return call->client ? NULL : call->md.v;
}

int64_t ncm_rpc_call_timeout_left(const ncm_rpc_call *call)
{
        if (call->deadline == NO_DEADLINE)
                return -1;
        if (!call->conn)
                return 0;
        uint64_t now = now_ms(call->conn);
        return now >= call->deadline ? 0 : (int64_t)(call->deadline - now);
}

bool ncm_rpc_call_is_cancelled(const ncm_rpc_call *call)
{
        return call->ended || !call->conn;
}

void ncm_rpc_call_set_ops(ncm_rpc_call *call, const ncm_rpc_call_ops *ops, void *data)
{
        call->sops = ops ? *ops : (ncm_rpc_call_ops){0};
        call->sdata = data;
}

int ncm_rpc_call_add_metadata(ncm_rpc_call *call, bool trailer, const char *key, const char *value)
{
        if (!ncm__rpc_valid_md_key(key) || !ncm__rpc_valid_md_value(value))
                return -EINVAL;
        if (!trailer && call->headers_sent)
                return -EALREADY;
        return md_add(trailer ? &call->md_trailer : &call->md_resp, key, strlen(key), value,
                      strlen(value));
}

int ncm_rpc_call_send_headers(ncm_rpc_call *call)
{
        ncm_rpc_conn *c = call->conn;
        if (!c || call->ended || call->wire_done)
                return -EPIPE;
        if (call->headers_sent)
                return 0;
        int r = submit_headers(c, call);
        if (r == 0)
                wake(c);
        return r;
}

int ncm_rpc_call_send(ncm_rpc_call *call, const uint8_t *msg, size_t len)
{
        ncm_rpc_conn *c = call->conn;
        if (!c || call->ended || call->wire_done || !call->user_holds)
                return -EPIPE;
        if (call->kind == KIND_UNARY && call->n_sent > 0) {
                if (c->opts.log)
                        c->opts.log(c->opts.log_data, NCM_RPC_LOG_ERROR, call->path,
                                    "unary handler sent a second response message: not sent");
                return -EPROTO;
        }
        if (len > c->opts.max_send_msg)
                return -EMSGSIZE;
        if (c->queued_total > c->opts.send_queue_max)
                return -ENOBUFS;
        chunk *ch = malloc(sizeof(*ch) + 5 + len);
        if (!ch)
                return -ENOMEM;
        ch->next = NULL;
        ch->len = 5 + len;
        ch->off = 0;
        ncm__rpc_frame_prefix(ch->data, len);
        if (len)
                memcpy(ch->data + 5, msg, len);
        if (!call->headers_sent && submit_headers(c, call) < 0) {
                free(ch);
                return -ENOMEM;
        }
        if (!output_pending(c))
                c->write_progress = now_ms(c);
        if (call->qtail)
                call->qtail->next = ch;
        else
                call->qhead = ch;
        call->qtail = ch;
        call->queued += ch->len;
        call->n_sent++;
        c->queued_total += ch->len;
        nghttp2_session_resume_data(c->h2, call->stream_id);
        wake(c);
        if (call->queued > c->opts.send_queue_high) {
                call->want_writable = true;
                return 1;
        }
        return 0;
}

int ncm_rpc_call_send_pb(ncm_rpc_call *call, const ProtobufCMessage *msg)
{
        uint8_t *buf;
        size_t len;
        int r = ncm_rpc_pack(msg, &buf, &len);
        if (r < 0)
                return r;
        r = ncm_rpc_call_send(call, buf, len);
        free(buf);
        return r;
}

void ncm_rpc_call_finish(ncm_rpc_call *call, ncm_rpc_code code, const char *message)
{
        ncm_rpc_conn *c = call->conn;
        if (!call->user_holds)
                return;
        if (c && !call->ended) {
                if (code == NCM_RPC_OK && call->kind == KIND_UNARY && call->n_sent == 0 &&
                    !call->wire_done) {
                        /* a Trailers-Only OK would be a protocol violation the client sees as
                         * EOF or a cardinality violation: a bug of ours, said as such */
                        code = NCM_RPC_INTERNAL;
                        message = "grpc: unary handler finished OK without a response message";
                        if (c->opts.log)
                                c->opts.log(c->opts.log_data, NCM_RPC_LOG_ERROR, call->path,
                                            message);
                }
                wire_status(c, call, code, message, NULL);
                wake(c);
        }
        call->user_holds = false;
        call->reported = true;
        call_unref(call);
}

/* ---- client API ----------------------------------------------------------------------------- */

static h2_ssize cli_read(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *src, void *user)
{
        ncm_rpc_call *call = src->ptr;
        size_t n = call->reqlen - call->reqoff;
        if (n > length)
                n = length;
        memcpy(buf, call->reqbuf + call->reqoff, n);
        call->reqoff += n;
        if (call->reqoff == call->reqlen) {
                *flags |= NGHTTP2_DATA_FLAG_EOF;
                free(call->reqbuf);
                call->reqbuf = NULL;
        }
        return (h2_ssize)n;
}

int ncm_rpc_conn_call(ncm_rpc_conn *c, const char *path, const ncm_rpc_md *md, size_t n_md,
                      uint32_t timeout_ms, const uint8_t *req, size_t len,
                      const ncm_rpc_client_ops *ops, void *data, ncm_rpc_call **ret_call,
                      ncm_error *err)
{
        if (c->server || !ops || !ops->on_close)
                return ncm_error_set(err, EINVAL, "rpc: a client call needs on_close");
        if (!path || path[0] != '/' || !strchr(path + 1, '/'))
                return ncm_error_set(err, EINVAL, "rpc: invalid method path '%s'",
                                     path ? path : "");
        for (size_t i = 0; i < n_md; i++)
                if (!ncm__rpc_valid_md_key(md[i].key) || !ncm__rpc_valid_md_value(md[i].value))
                        return ncm_error_set(err, EINVAL, "rpc: invalid metadata '%s'", md[i].key);
        if (len > c->opts.max_send_msg)
                return ncm_error_set(err, EMSGSIZE,
                                     "grpc: trying to send message larger than max (%zu vs. %zu)",
                                     len, c->opts.max_send_msg);
        if (!ncm_rpc_conn_usable(c))
                return ncm_error_set(err, ENOTCONN, "rpc: connection %s",
                                     c->dead_reason ? c->dead_reason : "is closing");

        ncm_rpc_call *call = call_new(c, true);
        if (!call)
                return ncm_error_set(err, ENOMEM, "rpc: out of memory");
        call->cops = *ops;
        call->cdata = data;
        call->reqlen = 5 + len;
        call->reqbuf = malloc(call->reqlen);
        nghttp2_nv *nva = calloc(8 + n_md, sizeof(*nva));
        if (!call->reqbuf || !nva) {
                free(nva);
                call_unlink(call);
                call_free(call);
                return ncm_error_set(err, ENOMEM, "rpc: out of memory");
        }
        ncm__rpc_frame_prefix(call->reqbuf, len);
        if (len)
                memcpy(call->reqbuf + 5, req, len);

        char tmo[16];
        size_t n = 0;
        nva[n++] = nv(":method", "POST");
        nva[n++] = nv(":scheme", "http");
        nva[n++] = nv(":path", path);
        nva[n++] = nv(":authority", "localhost");
        nva[n++] = nv("content-type", "application/grpc");
        nva[n++] = nv("te", "trailers");
        nva[n++] = nv("user-agent", c->user_agent ? c->user_agent : "nodecm-rpc/0.1");
        if (timeout_ms) {
                ncm__rpc_timeout_format(timeout_ms, tmo);
                nva[n++] = nv("grpc-timeout", tmo);
                call->deadline = now_ms(c) + timeout_ms;
        }
        for (size_t i = 0; i < n_md; i++)
                nva[n++] = nv(md[i].key, md[i].value);
        h2_provider prd = {.source.ptr = call, .read_callback = cli_read};
        int32_t id = h2_submit_request(c->h2, NULL, nva, n, &prd, call);
        free(nva);
        if (id < 0) {
                call_unlink(call);
                call_free(call);
                return ncm_error_set(err,
                                     id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE ? ENOTCONN : ENOMEM,
                                     "rpc: %s", nghttp2_strerror(id));
        }
        call->stream_id = id;
        call->refs = 2; /* the stream and the user */
        call->stream_open = true;
        call->user_holds = true;
        c->n_open++;
        if (ret_call)
                *ret_call = call;
        wake(c);
        return 0;
}

void ncm_rpc_call_cancel(ncm_rpc_call *call)
{
        ncm_rpc_conn *c = call->conn;
        if (!c || !call->client || call->ended)
                return;
        set_local(call, NCM_RPC_CANCELLED, "Cancelled");
        nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, call->stream_id, NGHTTP2_CANCEL);
        wake(c);
}

void ncm_rpc_call_pause(ncm_rpc_call *call, bool paused)
{
        ncm_rpc_conn *c = call->conn;
        call->paused = paused;
        if (!paused && c && call->unconsumed > 0) {
                if (call->stream_open)
                        nghttp2_session_consume(c->h2, call->stream_id, call->unconsumed);
                else
                        nghttp2_session_consume_connection(c->h2, call->unconsumed);
                call->unconsumed = 0;
                wake(c);
        }
}

/* ---- protobuf-c --------------------------------------------------------------------------- */

int ncm_rpc_pack(const ProtobufCMessage *msg, uint8_t **ret_buf, size_t *ret_len)
{
        size_t len = protobuf_c_message_get_packed_size(msg);
        uint8_t *buf = malloc(len ? len : 1);
        if (!buf)
                return -ENOMEM;
        protobuf_c_message_pack(msg, buf);
        *ret_buf = buf;
        *ret_len = len;
        return 0;
}

int ncm_rpc_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                   ProtobufCMessage **ret_msg)
{
        ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, len, data);
        if (!m)
                return -EINVAL;
        *ret_msg = m;
        return 0;
}
