/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The metrics endpoint: Prometheus text on GET /metrics over HTTP/1.1, on a unix socket
 * (default DIR/metrics.sock, 0600) or a loopback TCP address (nodecmd.metricsAddress; the
 * endpoint has no authentication, so nothing else is accepted). The request head is parsed by
 * lib/metrics (pure, fuzzed); this file is loop wiring with bounds: 64 connections, 8 KiB of
 * head, 10 s for a request to arrive, one request at a time per connection (pipelined ones
 * wait), the connection closed after an error.
 *
 * The node's metrics are computed when no job is at work on the node (between transactions),
 * else the last ones are served: a scrape never sees half a transaction.
 *
 * The same listener serves the node map (docs/map.md), read-only: GET /map is the page
 * (ncm_ctl_map_html, as `nodecm node status --html` writes it), made when the node is idle
 * and kept until the node changes. Its pods' explanations are not in it: replaying every
 * pod's admission takes a copy of the node each (about 150 ms for 100 pods on 1,024 CPUs, the
 * loop's time), so the page asks GET /map/explain?pod=UID for the one looked at, made when
 * the node is idle and kept until it changes. GET /map/events is a server-sent event stream that
 * says "changed" after the node's changes -- those the Watch stream reports, and reloads -- at most
 * once a second (a burst of admissions is one event, sent when the node is idle again, with
 * the new page already made), so that open pages load again once per change and never poll.
 * At most 32 streams; each hears a comment every 30 s, which finds the ones whose client left,
 * and one whose client reads nothing is closed once 64 KiB wait for it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <nodecm/map.h>
#include <nodecm/metrics.h>
#include "nodecmd.h"

#define CONNECTIONS_MAX 64
#define HEAD_MAX 8192
#define REQUEST_TIMEOUT_MS 10000
#define STREAMS_MAX 32
#define EVENT_INTERVAL_MS 1000 /* at most one map event a second */
#define BUSY_RETRY_MS 100      /* the node is at work: look again after this */
#define KEEPALIVE_MS 30000
#define STREAM_PENDING_MAX 65536 /* a stream's events not yet taken by the kernel */

typedef struct metrics metrics;

typedef struct conn {
        union {
                uv_tcp_t tcp;
                uv_pipe_t pipe;
                uv_stream_t stream;
                uv_handle_t handle;
        } h;
        uv_timer_t timer;
        uv_write_t wr;
        metrics *m;
        struct conn *next;
        char head[HEAD_MAX];
        size_t len;
        ncm_buf out;
        ncm_buf pending; /* a stream's events waiting for the write before them */
        bool writing, closing, close_after;
        bool streaming; /* answering GET /map/events: open until the client leaves */
        int handles;    /* open handles: the stream and the timer */
} conn;

struct metrics {
        nodecmd *d;
        char *address;
        bool is_unix;
        union {
                uv_tcp_t tcp;
                uv_pipe_t pipe;
                uv_stream_t stream;
                uv_handle_t handle;
        } listener;
        bool listening;
        conn *conns;
        size_t n_conns;
        bool stopping;

        ncm_buf node_text; /* the node's metrics as of the last idle moment */
        bool dirty;
        bool *ever; /* NUMA nodes that ever had exclusive CPUs */
        size_t n_ever;

        ncm_histogram tm_ms;     /* kubelet_topology_manager_admission_duration_ms */
        ncm_histogram admission; /* nodecm_admission_duration_seconds */
        uint64_t requests, refused;
        double start_time;

        /* the node map */
        ncm_buf map_page;       /* the page as of the last idle moment after a change */
        bool map_dirty;         /* the node changed since it was made */
        uint64_t map_changes;   /* changes so far (the events' data) */
        uint64_t map_sent;      /* the change the last event told */
        uint64_t map_sent_ns;   /* when */
        uv_timer_t map_timer;   /* the next event */
        uv_timer_t alive_timer; /* keepalive comments */
        int timers;             /* timers open */
        size_t n_streams;
        uint64_t map_renders, map_events;
        struct {
                char *uid, *text;
        } * explained; /* /map/explain's answers since the last change */
        size_t n_explained, cap_explained;
        uint64_t explained_at; /* the change they are of */
};

/* nodecm's own admission latency buckets: 50 us to 2.5 s */
static const double admission_buckets[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                           0.0025,  0.005,  0.01,    0.025,  0.05,
                                           0.1,     0.25,   0.5,     1,      2.5};

/* ---- the body -------------------------------------------------------------------------------- */

static void process_metrics(metrics *m, ncm_buf *b)
{
        long pages = 0, rss = 0;
        FILE *f = fopen("/proc/self/statm", "r");

        if (f) {
                if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
                        rss = 0;
                fclose(f);
        }
        ncm_metrics_header(b, "process_resident_memory_bytes", "gauge",
                           "Resident memory size in bytes.");
        ncm_metrics_sample(b, "process_resident_memory_bytes", NULL,
                           (double)rss * (double)sysconf(_SC_PAGESIZE));
        ncm_metrics_header(b, "process_start_time_seconds", "gauge",
                           "Start time of the process since unix epoch in seconds.");
        ncm_metrics_sample(b, "process_start_time_seconds", NULL, m->start_time);
}

static void body(metrics *m, ncm_buf *b)
{
        if (m->dirty && nodecmd_queue_length(m->d) == 0) {
                ncm_buf_reset(&m->node_text);
                ncm_node_metrics_format(nodecmd_node(m->d), m->ever, m->n_ever, &m->node_text);
                m->dirty = false;
        }
        ncm_buf_append(b, m->node_text.data, m->node_text.len);
        ncm_metrics_header(b, "kubelet_topology_manager_admission_duration_ms", "histogram",
                           "Duration in milliseconds to serve a pod admission request.");
        ncm_histogram_format(b, "kubelet_topology_manager_admission_duration_ms", NULL, &m->tm_ms);
        ncm_metrics_header(b, "nodecm_admission_duration_seconds", "histogram",
                           "Time nodecmd took to decide, persist and enforce an admission.");
        ncm_histogram_format(b, "nodecm_admission_duration_seconds", NULL, &m->admission);
        ncm_metrics_header(b, "nodecm_queue_length", "gauge",
                           "Calls waiting for or working on the node.");
        ncm_metrics_sample(b, "nodecm_queue_length", NULL, (double)nodecmd_queue_length(m->d));
        nodecmd_service_metrics(m->d, b);
        process_metrics(m, b);
}

/* ---- the node map ---------------------------------------------------------------------------- */

/* Make the page again if the node changed and is idle now. Returns whether it is current. */
static bool map_refresh(metrics *m)
{
        ncm_buf b = NCM_BUF_INIT;

        if (!m->map_dirty)
                return true;
        if (nodecmd_queue_length(m->d) > 0)
                return false;
        if (ncm_ctl_map_html(nodecmd_target(m->d), &b, "/map/events", "/map/explain?pod=") < 0 ||
            ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return false;
        }
        ncm_buf_done(&m->map_page);
        m->map_page = b;
        m->map_dirty = false;
        m->map_renders++;
        return true;
}

/* ---- connections ----------------------------------------------------------------------------- */

static void maybe_stopped(metrics *m)
{
        if (m->stopping && !m->listening && !m->conns && !m->timers)
                nodecmd_service_stopped(m->d, m);
}

static void conn_handle_closed(uv_handle_t *h)
{
        conn *c = h->data;
        metrics *m = c->m;

        if (--c->handles > 0)
                return;
        for (conn **p = &m->conns; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        m->n_conns--;
        if (c->streaming)
                m->n_streams--;
        ncm_buf_done(&c->out);
        ncm_buf_done(&c->pending);
        free(c);
        maybe_stopped(m);
}

static void conn_close(conn *c)
{
        if (c->closing)
                return;
        c->closing = true;
        uv_close(&c->h.handle, conn_handle_closed);
        uv_close((uv_handle_t *)&c->timer, conn_handle_closed);
}

static void on_timeout(uv_timer_t *t)
{
        conn_close(t->data);
}

static void serve_next(conn *c);
static void stream_flush(conn *c);

static void on_written(uv_write_t *w, int status)
{
        conn *c = w->data;

        c->writing = false;
        ncm_buf_reset(&c->out);
        if (status < 0 || c->close_after || c->m->stopping) {
                conn_close(c);
                return;
        }
        if (c->streaming) {
                stream_flush(c);
                return;
        }
        uv_timer_start(&c->timer, on_timeout, REQUEST_TIMEOUT_MS, 0);
        serve_next(c);
}

/* Write what a stream has pending, unless a write is under way (it comes back here). */
static void stream_flush(conn *c)
{
        uv_buf_t buf;
        ncm_buf t;

        if (c->writing || c->closing || !c->pending.len)
                return;
        t = c->out;
        c->out = c->pending;
        c->pending = t;
        ncm_buf_reset(&c->pending);
        buf = uv_buf_init(c->out.data, (unsigned)c->out.len);
        c->wr.data = c;
        c->writing = true;
        if (uv_write(&c->wr, &c->h.stream, &buf, 1, on_written) < 0) {
                c->writing = false;
                conn_close(c);
        }
}

static void stream_send(conn *c, const ncm_buf *ev)
{
        ncm_buf_append(&c->pending, ev->data, ev->len);
        /* a client that reads nothing is dropped before it costs more than a few pages */
        if (ncm_buf_failed(&c->pending) || c->pending.len > STREAM_PENDING_MAX) {
                conn_close(c);
                return;
        }
        stream_flush(c);
}

/* Tell every stream about change number M->map_changes. */
static void map_broadcast(metrics *m)
{
        ncm_buf ev = NCM_BUF_INIT;
        char data[32];

        snprintf(data, sizeof(data), "%llu", (unsigned long long)m->map_changes);
        ncm_http_sse_event(&ev, m->map_changes, data);
        for (conn *c = m->conns; c; c = c->next)
                if (c->streaming)
                        stream_send(c, &ev);
        ncm_buf_done(&ev);
        m->map_sent = m->map_changes;
        m->map_sent_ns = nodecmd_now_ns();
        m->map_events++;
}

static void map_tick(uv_timer_t *t)
{
        metrics *m = t->data;

        if (m->stopping || m->map_sent == m->map_changes)
                return;
        if (!m->n_streams) {
                /* nobody to tell: the page is made when someone asks for it */
                m->map_sent = m->map_changes;
                return;
        }
        /* after a burst the page is made once, before the pages that are told come for it */
        if (!map_refresh(m)) {
                uv_timer_start(&m->map_timer, map_tick, BUSY_RETRY_MS, 0);
                return;
        }
        map_broadcast(m);
}

/* The node changed: an event follows, a second after the last one at the soonest. */
static void map_changed(metrics *m)
{
        uint64_t now = nodecmd_now_ns(), next = m->map_sent_ns + EVENT_INTERVAL_MS * 1000000ull;

        m->map_dirty = true;
        m->map_changes++;
        if (!m->timers || m->stopping || uv_is_active((uv_handle_t *)&m->map_timer))
                return;
        uv_timer_start(&m->map_timer, map_tick,
                       m->map_sent_ns && next > now ? (next - now) / 1000000 + 1 : 0, 0);
}

static void alive_tick(uv_timer_t *t)
{
        metrics *m = t->data;
        ncm_buf ev = NCM_BUF_INIT;

        ncm_buf_puts(&ev, ": alive\n\n");
        for (conn *c = m->conns; c; c = c->next)
                if (c->streaming)
                        stream_send(c, &ev);
        ncm_buf_done(&ev);
}

static void respond(conn *c, int status, const char *reason, const char *ctype, const char *extra,
                    const ncm_buf *payload, bool head_only)
{
        size_t blen = payload ? payload->len : 0;
        uv_buf_t buf;

        ncm_buf_printf(&c->out,
                       "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n",
                       status, reason, ctype, blen, extra ? extra : "",
                       c->close_after ? "Connection: close\r\n" : "");
        if (payload && !head_only)
                ncm_buf_append(&c->out, payload->data, payload->len);
        if (ncm_buf_failed(&c->out)) {
                conn_close(c);
                return;
        }
        uv_timer_stop(&c->timer);
        /* a request at a time: pipelined ones wait for this answer to go */
        uv_read_stop(&c->h.stream);
        buf = uv_buf_init(c->out.data, (unsigned)c->out.len);
        c->wr.data = c;
        c->writing = true;
        if (uv_write(&c->wr, &c->h.stream, &buf, 1, on_written) < 0) {
                c->writing = false;
                conn_close(c);
        }
}

static void text_response(conn *c, int status, const char *reason, const char *text,
                          const char *extra)
{
        ncm_buf b = NCM_BUF_INIT;

        ncm_buf_puts(&b, text);
        respond(c, status, reason, "text/plain; charset=utf-8", extra, &b, false);
        ncm_buf_done(&b);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);

/* GET /map: the page as of the node's last idle moment (made now when it changed since). */
static void serve_map(conn *c, bool head_only)
{
        metrics *m = c->m;

        if (!map_refresh(m) && !m->map_page.len) {
                /* never made yet, and the node is at work: the client comes back */
                text_response(c, 503, "Service Unavailable", "the node is busy; try again\n",
                              "Retry-After: 1\r\n");
                return;
        }
        respond(c, 200, "OK", "text/html; charset=utf-8", "Cache-Control: no-store\r\n",
                &m->map_page, head_only);
}

/* Room for one more answer in M->explained. 0, -ENOMEM. */
static int explained_room(metrics *m)
{
        size_t cap = m->cap_explained ? m->cap_explained * 2 : 16;
        void *v;

        if (m->n_explained < m->cap_explained)
                return 0;
        v = realloc(m->explained, cap * sizeof(*m->explained));
        if (!v)
                return -ENOMEM;
        m->explained = v;
        m->cap_explained = cap;
        return 0;
}

static void explained_clear(metrics *m)
{
        for (size_t i = 0; i < m->n_explained; i++) {
                free(m->explained[i].uid);
                free(m->explained[i].text);
        }
        m->n_explained = 0;
}

/* GET /map/explain?pod=UID: why the pod holds what it holds, decided again on a copy. */
static void serve_explain(conn *c, const char *query, bool head_only)
{
        metrics *m = c->m;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf b = NCM_BUF_INIT;
        char uid[256];
        int r;

        if (ncm_http_query_param(query, "pod", uid, sizeof(uid)) <= 0) {
                m->refused++;
                text_response(c, 400, "Bad Request", "expected /map/explain?pod=UID\n", NULL);
                return;
        }
        if (m->explained_at != m->map_changes) {
                explained_clear(m);
                m->explained_at = m->map_changes;
        }
        for (size_t i = 0; i < m->n_explained; i++)
                if (strcmp(m->explained[i].uid, uid) == 0) {
                        text_response(c, 200, "OK", m->explained[i].text,
                                      "Cache-Control: no-store\r\n");
                        return;
                }
        if (nodecmd_queue_length(m->d) > 0) {
                text_response(c, 503, "Service Unavailable", "the node is busy; try again\n",
                              "Retry-After: 1\r\n");
                return;
        }
        r = ncm_map_explain_pod(nodecmd_node(m->d), uid, &b, &err);
        if (r == -ENOENT) {
                m->refused++;
                text_response(c, 404, "Not Found", "no such pod on the node\n", NULL);
        } else if (r < 0) {
                c->close_after = true;
                text_response(c, 500, "Internal Server Error", err.msg, NULL);
        } else {
                /* kept until the node changes; a client asking for ever new UIDs finds none */
                if (m->n_explained < 4096 && explained_room(m) == 0) {
                        m->explained[m->n_explained].uid = strdup(uid);
                        m->explained[m->n_explained].text = strdup(b.data ? b.data : "");
                        if (m->explained[m->n_explained].uid && m->explained[m->n_explained].text)
                                m->n_explained++;
                        else {
                                free(m->explained[m->n_explained].uid);
                                free(m->explained[m->n_explained].text);
                        }
                }
                respond(c, 200, "OK", "text/plain; charset=utf-8", "Cache-Control: no-store\r\n",
                        &b, head_only);
        }
        ncm_buf_done(&b);
}

/* GET /map/events: a stream that stays open; events come from map_broadcast(). */
static void serve_events(conn *c, bool head_only)
{
        metrics *m = c->m;
        ncm_buf b = NCM_BUF_INIT;

        if (head_only) {
                respond(c, 200, "OK", "text/event-stream", "Cache-Control: no-store\r\n", NULL,
                        true);
                return;
        }
        if (m->n_streams >= STREAMS_MAX || !m->timers) {
                c->close_after = true;
                text_response(c, 503, "Service Unavailable", "too many event streams\n",
                              "Retry-After: 10\r\n");
                return;
        }
        /* no Content-Length: the body is the stream; the client's retry after a drop is 2 s */
        ncm_buf_puts(&b, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                         "Cache-Control: no-store\r\nConnection: close\r\n\r\nretry: 2000\n\n");
        c->streaming = true;
        c->close_after = false;
        m->n_streams++;
        uv_timer_stop(&c->timer);
        c->len = 0; /* what the client sends from now on is read and dropped */
        stream_send(c, &b);
        ncm_buf_done(&b);
}

/* Answer the request at the head of the buffer, if it is complete. */
static void serve_next(conn *c)
{
        metrics *m = c->m;
        ncm_http_request r;
        int rc = ncm_http_parse_request(c->head, c->len, HEAD_MAX, &r);

        if (rc == 0) {
                if (!c->closing)
                        uv_read_start(&c->h.stream, on_alloc, on_read);
                return;
        }
        m->requests++;
        if (rc < 0) {
                /* after a malformed request the stream cannot be trusted: answer and close */
                c->close_after = true;
                m->refused++;
                switch (rc) {
                case -EMSGSIZE:
                        text_response(c, 431, "Request Header Fields Too Large",
                                      "request head too large\n", NULL);
                        break;
                case -EPROTONOSUPPORT:
                        text_response(c, 505, "HTTP Version Not Supported",
                                      "HTTP/1.0 and HTTP/1.1 only\n", NULL);
                        break;
                case -EFBIG:
                        text_response(c, 413, "Content Too Large", "requests have no body here\n",
                                      NULL);
                        break;
                default:
                        text_response(c, 400, "Bad Request", "malformed request\n", NULL);
                        break;
                }
                return;
        }
        memmove(c->head, c->head + r.head_len, c->len - r.head_len);
        c->len -= r.head_len;
        c->close_after = !r.keep_alive;
        if (strcmp(r.method, "GET") != 0 && strcmp(r.method, "HEAD") != 0) {
                m->refused++;
                text_response(c, 405, "Method Not Allowed", "GET or HEAD\n",
                              "Allow: GET, HEAD\r\n");
        } else if (strcmp(r.path, "/metrics") == 0) {
                ncm_buf b = NCM_BUF_INIT;
                body(m, &b);
                if (ncm_buf_failed(&b)) {
                        c->close_after = true;
                        text_response(c, 500, "Internal Server Error", "out of memory\n", NULL);
                } else {
                        respond(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", NULL, &b,
                                strcmp(r.method, "HEAD") == 0);
                }
                ncm_buf_done(&b);
        } else if (strcmp(r.path, "/healthz") == 0) {
                text_response(c, 200, "OK", "ok\n", NULL);
        } else if (strcmp(r.path, "/map") == 0) {
                serve_map(c, strcmp(r.method, "HEAD") == 0);
        } else if (strcmp(r.path, "/map/events") == 0) {
                serve_events(c, strcmp(r.method, "HEAD") == 0);
        } else if (strcmp(r.path, "/map/explain") == 0) {
                serve_explain(c, r.query, strcmp(r.method, "HEAD") == 0);
        } else {
                m->refused++;
                text_response(c, 404, "Not Found", "try /metrics or /map\n", NULL);
        }
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
        conn *c = h->data;

        *buf = uv_buf_init(c->head + c->len, (unsigned)(HEAD_MAX - c->len));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        conn *c = s->data;

        if (n < 0) {
                conn_close(c);
                return;
        }
        c->len += (size_t)n;
        if (c->streaming) {
                c->len = 0;
                return;
        }
        if (c->writing)
                return;
        serve_next(c);
}

static void on_connection(uv_stream_t *srv, int status)
{
        metrics *m = srv->data;
        conn *c;

        if (status < 0)
                return;
        c = calloc(1, sizeof(*c));
        if (!c)
                return;
        c->m = m;
        if (m->is_unix)
                uv_pipe_init(nodecmd_loop(m->d), &c->h.pipe, 0);
        else
                uv_tcp_init(nodecmd_loop(m->d), &c->h.tcp);
        uv_timer_init(nodecmd_loop(m->d), &c->timer);
        c->h.handle.data = c;
        c->timer.data = c;
        c->handles = 2;
        c->next = m->conns;
        m->conns = c;
        m->n_conns++;
        if (uv_accept(srv, &c->h.stream) < 0 || m->n_conns > CONNECTIONS_MAX) {
                /* beyond the bound the connection is taken and closed: no backlog builds up */
                conn_close(c);
                return;
        }
        uv_timer_start(&c->timer, on_timeout, REQUEST_TIMEOUT_MS, 0);
        uv_read_start(&c->h.stream, on_alloc, on_read);
}

/* ---- the service ----------------------------------------------------------------------------- */

/* Whether HOST (no brackets) is a loopback address. */
static bool loopback(const char *host)
{
        struct in_addr a4;
        struct in6_addr a6;

        if (strcmp(host, "localhost") == 0)
                return true;
        if (inet_pton(AF_INET, host, &a4) == 1)
                return (ntohl(a4.s_addr) >> 24) == 127;
        if (inet_pton(AF_INET6, host, &a6) == 1)
                return IN6_IS_ADDR_LOOPBACK(&a6);
        return false;
}

static int listen_tcp(metrics *m, ncm_error *err)
{
        char host[128];
        const char *colon = strrchr(m->address, ':');
        const char *h = m->address;
        size_t hl;
        struct sockaddr_storage ss;
        char *end;
        long port;
        int r;

        if (!colon)
                return ncm_error_set(err, EINVAL,
                                     "nodecmd.metricsAddress: \"%s\": expected HOST:PORT or "
                                     "unix:PATH",
                                     m->address);
        hl = (size_t)(colon - h);
        if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
                h++;
                hl -= 2;
        }
        port = strtol(colon + 1, &end, 10);
        if (hl >= sizeof(host) || *end || port < 0 || port > 65535 || colon[1] == '\0')
                return ncm_error_set(err, EINVAL,
                                     "nodecmd.metricsAddress: \"%s\": expected HOST:PORT with a "
                                     "port from 0 (any free one) to 65535",
                                     m->address);
        memcpy(host, h, hl);
        host[hl] = '\0';
        if (!loopback(host))
                return ncm_error_set(err, EINVAL,
                                     "nodecmd.metricsAddress: \"%s\": only a loopback address "
                                     "(127.0.0.0/8, ::1, localhost) or unix:PATH; the endpoint "
                                     "has no authentication",
                                     m->address);
        if (strcmp(host, "localhost") == 0)
                snprintf(host, sizeof(host), "127.0.0.1");
        if (strchr(host, ':'))
                r = uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)&ss);
        else
                r = uv_ip4_addr(host, (int)port, (struct sockaddr_in *)&ss);
        if (r >= 0) {
                uv_tcp_init(nodecmd_loop(m->d), &m->listener.tcp);
                m->listening = true;
                r = uv_tcp_bind(&m->listener.tcp, (struct sockaddr *)&ss, 0);
        }
        if (r >= 0)
                r = uv_listen(&m->listener.stream, 64, on_connection);
        if (r < 0)
                return ncm_error_set(err, -r, "metrics: listen on %s: %s", m->address,
                                     uv_strerror(r));
        if (port == 0) {
                /* say which port the kernel chose */
                struct sockaddr_storage bound;
                int blen = sizeof(bound);
                char name[64] = "";
                if (uv_tcp_getsockname(&m->listener.tcp, (struct sockaddr *)&bound, &blen) == 0) {
                        if (bound.ss_family == AF_INET6) {
                                uv_ip6_name((struct sockaddr_in6 *)&bound, name, sizeof(name));
                                port = ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
                                free(m->address);
                                m->address = NULL;
                                if (asprintf(&m->address, "[%s]:%ld", name, port) < 0)
                                        m->address = NULL;
                        } else {
                                uv_ip4_name((struct sockaddr_in *)&bound, name, sizeof(name));
                                port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
                                free(m->address);
                                m->address = NULL;
                                if (asprintf(&m->address, "%s:%ld", name, port) < 0)
                                        m->address = NULL;
                        }
                        if (!m->address)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                }
        }
        return 0;
}

static int listen_unix(metrics *m, const char *path, ncm_error *err)
{
        int r;

        (void)unlink(path);
        uv_pipe_init(nodecmd_loop(m->d), &m->listener.pipe, 0);
        m->listening = true;
        r = uv_pipe_bind(&m->listener.pipe, path);
        if (r >= 0)
                r = chmod(path, 0600) < 0 ? -errno : 0;
        if (r >= 0)
                r = uv_listen(&m->listener.stream, 64, on_connection);
        if (r < 0)
                return ncm_error_set(err, -r, "metrics: listen on '%s': %s", path, uv_strerror(r));
        return 0;
}

static int metrics_start(nodecmd *d, void **ret, ncm_error *err)
{
        metrics *m = calloc(1, sizeof(*m));
        const char *path;
        size_t nn, nb;
        const double *tmb = ncm_metrics_tm_duration_buckets(&nb);
        struct timeval tv;
        int r;

        if (!m)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = m;
        m->d = d;
        m->dirty = true;
        m->map_dirty = true;
        gettimeofday(&tv, NULL);
        m->start_time = (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
        ncm_histogram_init(&m->tm_ms, tmb, nb);
        ncm_histogram_init(&m->admission, admission_buckets, NCM_ELEMENTSOF(admission_buckets));
        ncm_topo_numa_ids(ncm_node_topo(nodecmd_node(d)), &nn);
        m->ever = calloc(nn + 1, sizeof(*m->ever));
        m->n_ever = nn;
        if (!m->ever)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = nodecmd_socket_path(d, "metricsAddress", "metrics.sock", &m->address, err);
        if (r < 0)
                return r;
        if (strcmp(m->address, "none") == 0) {
                nodecmd_log(d, NODECMD_INFO, "metrics endpoint off", "metricsAddress=none");
                return 0;
        }
        path = strncmp(m->address, "unix:", 5) == 0 ? m->address + 5 : m->address;
        m->is_unix = path[0] == '/';
        r = m->is_unix ? listen_unix(m, path, err) : listen_tcp(m, err);
        if (r < 0)
                return r;
        m->listener.handle.data = m;
        uv_timer_init(nodecmd_loop(d), &m->map_timer);
        uv_timer_init(nodecmd_loop(d), &m->alive_timer);
        m->map_timer.data = m->alive_timer.data = m;
        m->timers = 2;
        uv_timer_start(&m->alive_timer, alive_tick, KEEPALIVE_MS, KEEPALIVE_MS);
        nodecmd_log(d, NODECMD_INFO, "metrics endpoint listening", "address=%s map=/map",
                    nodecmd_q(d, 0, m->address));
        return 0;
}

static void metrics_changed(void *data, const nodecmd_change *c)
{
        metrics *m = data;

        m->dirty = true;
        if (!c->error && (c->sequence || (c->res && c->res->changed)))
                map_changed(m);
        if (c->method == NCM_CTL_ADMIT && !c->error && c->res && c->res->admission) {
                /* the kubelet observes time.Since(start).Milliseconds(): whole milliseconds */
                ncm_histogram_observe(&m->tm_ms, floor((double)c->duration_ns / 1e6));
                ncm_histogram_observe(&m->admission, (double)c->duration_ns / 1e9);
        }
}

static void metrics_reload(void *data)
{
        metrics *m = data;

        /* the node was rebuilt with the new configuration: its policies may read otherwise */
        m->dirty = true;
        map_changed(m);
}

static void listener_closed(uv_handle_t *h)
{
        metrics *m = h->data;

        m->listening = false;
        maybe_stopped(m);
}

static void timer_closed(uv_handle_t *h)
{
        metrics *m = h->data;

        m->timers--;
        maybe_stopped(m);
}

static void metrics_stop(void *data)
{
        metrics *m = data;

        m->stopping = true;
        /* connections between requests go now; one being answered goes once written */
        for (conn *c = m->conns; c; c = c->next)
                if (!c->writing)
                        conn_close(c);
        if (m->timers) {
                uv_close((uv_handle_t *)&m->map_timer, timer_closed);
                uv_close((uv_handle_t *)&m->alive_timer, timer_closed);
        }
        if (m->listening) {
                if (m->is_unix) {
                        const char *path = strncmp(m->address, "unix:", 5) == 0 ? m->address + 5
                                                                                : m->address;
                        (void)unlink(path);
                }
                uv_close(&m->listener.handle, listener_closed);
        } else {
                maybe_stopped(m);
        }
}

static void metrics_free(void *data)
{
        metrics *m = data;

        if (!m)
                return;
        ncm_buf_done(&m->node_text);
        ncm_buf_done(&m->map_page);
        explained_clear(m);
        free(m->explained);
        free(m->ever);
        free(m->address);
        free(m);
}

/* One metric of the service: its HELP and TYPE, and its sample. */
static void metric(ncm_buf *out, const char *name, const char *type, const char *help, double v)
{
        ncm_metrics_header(out, name, type, help);
        ncm_metrics_sample(out, name, NULL, v);
}

static void metrics_metrics(void *data, ncm_buf *out)
{
        metrics *m = data;

        metric(out, "nodecm_metrics_requests_total", "counter",
               "HTTP requests to the metrics endpoint.", (double)m->requests);
        metric(out, "nodecm_map_renders_total", "counter",
               "Node map pages made (once after each change a client asked for).",
               (double)m->map_renders);
        metric(out, "nodecm_map_changes_total", "counter",
               "Changes of the node the map heard of (the events' data).", (double)m->map_changes);
        metric(out, "nodecm_map_events_total", "counter",
               "Change events sent to the node map's streams.", (double)m->map_events);
        metric(out, "nodecm_map_streams", "gauge",
               "Open event streams of the node map (/map/events).", (double)m->n_streams);
}

const nodecmd_service_ops nodecmd_metrics_service = {
                .name = "metrics",
                .start = metrics_start,
                .changed = metrics_changed,
                .reload = metrics_reload,
                .stop = metrics_stop,
                .free = metrics_free,
                .metrics = metrics_metrics,
};
