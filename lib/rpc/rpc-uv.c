/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libuv binding: raw non-blocking unix sockets watched with uv_poll, so that every write is a
 * send(MSG_NOSIGNAL) of ours (uv_write uses write(2), which raises SIGPIPE on a closed peer) and
 * reading stops exactly when the connection asks for back-pressure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <nodecm/rpc-uv.h>

/* Reads per readable event before yielding to other connections. */
#define READS_PER_EVENT 8
#define READ_CHUNK 65536
/* A listener out of file descriptors pauses this long instead of spinning. */
#define ACCEPT_PAUSE_MS 100
/* A client whose connect() met a full backlog retries this often. */
#define CONNECT_RETRY_MS 5

typedef struct uvconn uvconn;

struct uvconn {
        uv_loop_t *loop;
        int fd;
        uv_poll_t poll;
        uv_timer_t timer;
        ncm_rpc_conn *conn;
        ncm_rpc_uv_server *srv; /* server side: the owner */
        ncm_rpc_uv_client *cl;  /* client side: the owner */
        uvconn *prev, *next;
        int poll_events;
        bool poll_started;
        bool want_write;
        bool closing;
        bool connecting;
        bool in_update;
        bool sock_closed;
        int handles; /* open uv handles: the timer, and the poll once started */
        uint64_t connect_deadline;
        struct sockaddr_un addr;
};

struct ncm_rpc_uv_server {
        uv_loop_t *loop;
        ncm_rpc_server *srv;
        int fd;
        uv_poll_t poll;
        uv_timer_t pause;
        char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
        uvconn *conns;
        size_t n_conns;
        bool closing;
        int handles;
        void (*on_closed)(void *);
        void *closed_data;
};

struct ncm_rpc_uv_client {
        uvconn *uc;
        ncm_rpc_conn *conn;
        bool closing;
};

static void update(uvconn *uc);
static void conn_close(uvconn *uc);

static uint64_t env_now(void *data)
{
        uvconn *uc = data;
        return uv_now(uc->loop);
}

static void on_timer(uv_timer_t *t);

static void env_wake(void *data)
{
        uvconn *uc = data;
        /* Not from inside the connection: update on the next loop turn. */
        if (!uc->closing && !uc->sock_closed)
                uv_timer_start(&uc->timer, on_timer, 0, 0);
}

int ncm_rpc_uv_target_path(const char *target, char *out, size_t n, ncm_error *err)
{
        const char *p = target;
        if (strncmp(p, "unix://", 7) == 0) {
                p += 7;
                if (p[0] != '/')
                        return ncm_error_set(err, EINVAL,
                                             "rpc target '%s': authority-based unix URIs are "
                                             "not supported",
                                             target);
        } else if (strncmp(p, "unix:", 5) == 0) {
                p += 5;
        } else if (strchr(p, ':') && p[0] != '/' && p[0] != '.') {
                return ncm_error_set(err, EINVAL, "rpc target '%s': not a unix socket", target);
        }
        if (!*p)
                return ncm_error_set(err, EINVAL, "rpc target '%s': empty path", target);
        size_t len = strlen(p);
        if (len >= n || len >= sizeof(((struct sockaddr_un *)0)->sun_path))
                return ncm_error_set(err, ENAMETOOLONG, "rpc target '%s': path too long", target);
        memcpy(out, p, len + 1);
        return 0;
}

/* ---- connections ----------------------------------------------------------------------- */

static void handle_gone(uvconn *uc)
{
        if (--uc->handles > 0 || !uc->closing)
                return;
        ncm_rpc_uv_server *s = uc->srv;
        free(uc);
        if (!s)
                return;
        s->n_conns--;
        if (s->closing && s->n_conns == 0 && s->handles == 0) {
                void (*cb)(void *) = s->on_closed;
                void *data = s->closed_data;
                free(s);
                if (cb)
                        cb(data);
        }
}

static void on_poll_closed(uv_handle_t *h)
{
        uvconn *uc = h->data;
        close(uc->fd);
        uc->fd = -1;
        handle_gone(uc);
}

static void on_timer_closed(uv_handle_t *h)
{
        handle_gone(h->data);
}

/* Close the socket (the connection object stays, dead, for a client to inspect). */
static void sock_close(uvconn *uc)
{
        if (uc->sock_closed)
                return;
        uc->sock_closed = true;
        if (uc->poll_started) {
                uv_poll_stop(&uc->poll);
                uv_close((uv_handle_t *)&uc->poll, on_poll_closed);
        } else if (uc->fd >= 0) {
                close(uc->fd);
                uc->fd = -1;
        }
}

static void conn_close(uvconn *uc)
{
        if (uc->closing)
                return;
        uc->closing = true;
        if (uc->srv) {
                ncm_rpc_uv_server *s = uc->srv;
                if (uc->prev)
                        uc->prev->next = uc->next;
                else
                        s->conns = uc->next;
                if (uc->next)
                        uc->next->prev = uc->prev;
                uc->prev = uc->next = NULL;
        }
        if (uc->cl) {
                uc->cl->uc = NULL;
                uc->cl = NULL;
        }
        /* The connection goes first: handlers and on_close learn now, not at handle close. */
        uc->conn = ncm_rpc_conn_free(uc->conn);
        sock_close(uc);
        uv_close((uv_handle_t *)&uc->timer, on_timer_closed);
}

static void on_poll(uv_poll_t *p, int status, int events);

static void set_poll(uvconn *uc, int events)
{
        if (uc->sock_closed || uc->connecting)
                return;
        if (!uc->poll_started) {
                if (uv_poll_init_socket(uc->loop, &uc->poll, uc->fd) < 0) {
                        ncm_rpc_conn_eof(uc->conn);
                        return;
                }
                uc->poll.data = uc;
                uc->poll_started = true;
                uc->handles++;
                uc->poll_events = -1;
        }
        if (events == uc->poll_events)
                return;
        uc->poll_events = events;
        if (events)
                uv_poll_start(&uc->poll, events, on_poll);
        else
                uv_poll_stop(&uc->poll);
}

static void flush(uvconn *uc)
{
        uc->want_write = false;
        while (uc->conn && !uc->closing && !uc->connecting && !uc->sock_closed) {
                const uint8_t *data;
                size_t len;
                ncm_rpc_conn_pull(uc->conn, &data, &len);
                if (uc->closing || len == 0)
                        return;
                ssize_t w = send(uc->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w < 0) {
                        if (errno == EAGAIN || errno == EWOULDBLOCK) {
                                uc->want_write = true;
                                return;
                        }
                        if (errno == EINTR)
                                continue;
                        ncm_rpc_conn_eof(uc->conn);
                        return;
                }
                ncm_rpc_conn_sent(uc->conn, (size_t)w);
                if ((size_t)w < len) {
                        uc->want_write = true;
                        return;
                }
        }
}

static void update(uvconn *uc)
{
        if (uc->closing || uc->in_update || uc->sock_closed)
                return;
        uc->in_update = true;
        flush(uc);
        if (uc->closing)
                return;
        uc->in_update = false;
        if (ncm_rpc_conn_done(uc->conn)) {
                /* A client keeps its dead connection until the user closes it. */
                if (uc->cl) {
                        sock_close(uc);
                        uv_timer_stop(&uc->timer);
                } else {
                        conn_close(uc);
                }
                return;
        }
        if (uc->connecting) {
                uv_timer_start(&uc->timer, on_timer, CONNECT_RETRY_MS, 0);
                return;
        }
        int ev = 0;
        if (ncm_rpc_conn_want_read(uc->conn))
                ev |= UV_READABLE | UV_DISCONNECT;
        if (uc->want_write)
                ev |= UV_WRITABLE;
        set_poll(uc, ev);
        uint64_t next = ncm_rpc_conn_next_tick(uc->conn);
        if (next == UINT64_MAX) {
                uv_timer_stop(&uc->timer);
        } else {
                uint64_t now = uv_now(uc->loop);
                uv_timer_start(&uc->timer, on_timer, next > now ? next - now : 0, 0);
        }
}

static void try_connect(uvconn *uc);

static void on_timer(uv_timer_t *t)
{
        uvconn *uc = t->data;
        if (uc->closing || uc->sock_closed)
                return;
        if (uc->connecting) {
                try_connect(uc);
                if (uc->closing)
                        return;
        }
        ncm_rpc_conn_tick(uc->conn);
        update(uc);
}

static void do_read(uvconn *uc)
{
        uint8_t buf[READ_CHUNK];
        for (int i = 0; i < READS_PER_EVENT && !uc->closing; i++) {
                if (!ncm_rpc_conn_want_read(uc->conn))
                        break;
                ssize_t r = recv(uc->fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN && errno != EWOULDBLOCK)
                                ncm_rpc_conn_eof(uc->conn);
                        break;
                }
                if (r == 0) {
                        ncm_rpc_conn_eof(uc->conn);
                        break;
                }
                ncm_rpc_conn_recv(uc->conn, buf, (size_t)r, NULL);
                if ((size_t)r < sizeof(buf))
                        break;
        }
}

static void on_poll(uv_poll_t *p, int status, int events)
{
        uvconn *uc = p->data;
        if (uc->closing || uc->sock_closed)
                return;
        if (status < 0) {
                ncm_rpc_conn_eof(uc->conn);
        } else {
                if (events & UV_WRITABLE)
                        uc->want_write = false;
                if (events & (UV_READABLE | UV_DISCONNECT))
                        do_read(uc);
        }
        update(uc);
}

static uvconn *uvconn_new(uv_loop_t *loop, int fd, const ncm_rpc_opts *opts, ncm_rpc_server *srv)
{
        uvconn *uc = calloc(1, sizeof(*uc));
        if (!uc)
                return NULL;
        uc->loop = loop;
        uc->fd = fd;
        ncm_rpc_env env = {.now_ms = env_now, .wake = env_wake, .data = uc};
        uc->conn = srv ? ncm_rpc_conn_new_server(srv, &env) : ncm_rpc_conn_new_client(opts, &env);
        if (!uc->conn) {
                free(uc);
                return NULL;
        }
        uv_timer_init(loop, &uc->timer);
        uc->timer.data = uc;
        uc->handles = 1;
        return uc;
}

/* ---- server ---------------------------------------------------------------------------- */

static void on_accept(uv_poll_t *p, int status, int events);

static void on_accept_resume(uv_timer_t *t)
{
        ncm_rpc_uv_server *s = t->data;
        if (!s->closing)
                uv_poll_start(&s->poll, UV_READABLE, on_accept);
}

static void on_accept(uv_poll_t *p, int status, int events)
{
        ncm_rpc_uv_server *s = p->data;
        for (int i = 0; i < 64 && !s->closing; i++) {
                int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                            errno == ENOMEM) {
                                uv_poll_stop(&s->poll);
                                uv_timer_start(&s->pause, on_accept_resume, ACCEPT_PAUSE_MS, 0);
                        }
                        return;
                }
                uvconn *uc = uvconn_new(s->loop, fd, NULL, s->srv);
                if (!uc) {
                        close(fd);
                        continue;
                }
                uc->srv = s;
                uc->next = s->conns;
                if (s->conns)
                        s->conns->prev = uc;
                s->conns = uc;
                s->n_conns++;
                update(uc);
        }
}

static void on_server_handle_closed(uv_handle_t *h)
{
        ncm_rpc_uv_server *s = h->data;
        if (--s->handles > 0 || s->n_conns > 0)
                return;
        /* Otherwise the last connection's handle_gone() frees s. */
        void (*cb)(void *) = s->on_closed;
        void *data = s->closed_data;
        free(s);
        if (cb)
                cb(data);
}

int ncm_rpc_uv_listen(uv_loop_t *loop, ncm_rpc_server *srv, const char *target, unsigned mode,
                      ncm_rpc_uv_server **ret, ncm_error *err)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        int r = ncm_rpc_uv_target_path(target, sa.sun_path, sizeof(sa.sun_path), err);
        if (r < 0)
                return r;
        struct stat st;
        if (lstat(sa.sun_path, &st) == 0 && S_ISSOCK(st.st_mode))
                (void)unlink(sa.sun_path);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return ncm_error_errno(err, errno, "socket for '%s'", sa.sun_path);
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                r = errno;
                close(fd);
                return ncm_error_errno(err, r, "bind '%s'", sa.sun_path);
        }
        if ((mode && chmod(sa.sun_path, mode) < 0) || listen(fd, SOMAXCONN) < 0) {
                r = errno;
                close(fd);
                (void)unlink(sa.sun_path);
                return ncm_error_errno(err, r, "listen on '%s'", sa.sun_path);
        }
        ncm_rpc_uv_server *s = calloc(1, sizeof(*s));
        if (!s || uv_poll_init_socket(loop, &s->poll, fd) < 0) {
                free(s);
                close(fd);
                (void)unlink(sa.sun_path);
                return ncm_error_set(err, ENOMEM, "listen on '%s': out of memory", sa.sun_path);
        }
        s->loop = loop;
        s->srv = srv;
        s->fd = fd;
        memcpy(s->path, sa.sun_path, sizeof(s->path));
        s->poll.data = s;
        uv_timer_init(loop, &s->pause);
        s->pause.data = s;
        uv_poll_start(&s->poll, UV_READABLE, on_accept);
        *ret = s;
        return 0;
}

void ncm_rpc_uv_server_close(ncm_rpc_uv_server *s, bool graceful, void (*on_closed)(void *data),
                             void *data)
{
        if (s->closing)
                return;
        s->closing = true;
        s->on_closed = on_closed;
        s->closed_data = data;
        (void)unlink(s->path);
        uv_poll_stop(&s->poll);
        s->handles = 2;
        uv_close((uv_handle_t *)&s->poll, on_server_handle_closed);
        uv_close((uv_handle_t *)&s->pause, on_server_handle_closed);
        close(s->fd);
        s->fd = -1;
        for (uvconn *uc = s->conns, *n; uc; uc = n) {
                n = uc->next;
                if (graceful) {
                        ncm_rpc_conn_shutdown(uc->conn);
                        update(uc);
                } else {
                        conn_close(uc);
                }
        }
}

size_t ncm_rpc_uv_server_connections(const ncm_rpc_uv_server *s)
{
        return s->n_conns;
}

/* ---- client ---------------------------------------------------------------------------- */

static void try_connect(uvconn *uc)
{
        if (connect(uc->fd, (struct sockaddr *)&uc->addr, sizeof(uc->addr)) == 0 ||
            errno == EISCONN) {
                uc->connecting = false;
                return;
        }
        if (errno == EAGAIN && uv_now(uc->loop) < uc->connect_deadline)
                return;
        uc->connecting = false;
        ncm_rpc_conn_eof(uc->conn);
}

int ncm_rpc_uv_connect(uv_loop_t *loop, const char *target, const ncm_rpc_opts *opts,
                       ncm_rpc_uv_client **ret, ncm_error *err)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        int r = ncm_rpc_uv_target_path(target, sa.sun_path, sizeof(sa.sun_path), err);
        if (r < 0)
                return r;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return ncm_error_errno(err, errno, "socket for '%s'", sa.sun_path);
        bool again = false;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                if (errno != EAGAIN) {
                        r = errno;
                        close(fd);
                        return ncm_error_errno(err, r, "connect '%s'", sa.sun_path);
                }
                /* The listener's backlog is full: retry from the loop. */
                again = true;
        }
        ncm_rpc_uv_client *cl = calloc(1, sizeof(*cl));
        uvconn *uc = cl ? uvconn_new(loop, fd, opts, NULL) : NULL;
        if (!uc) {
                free(cl);
                close(fd);
                return ncm_error_set(err, ENOMEM, "connect '%s': out of memory", sa.sun_path);
        }
        uc->addr = sa;
        uc->cl = cl;
        cl->uc = uc;
        cl->conn = uc->conn;
        if (again) {
                ncm_rpc_opts d;
                ncm_rpc_opts_default(&d);
                uc->connecting = true;
                uc->connect_deadline = uv_now(loop) +
                                       (opts ? opts->handshake_timeout_ms : d.handshake_timeout_ms);
        }
        update(uc);
        *ret = cl;
        return 0;
}

ncm_rpc_conn *ncm_rpc_uv_client_conn(ncm_rpc_uv_client *cl)
{
        return cl->conn;
}

void ncm_rpc_uv_client_close(ncm_rpc_uv_client *cl)
{
        if (cl->closing)
                return;
        cl->closing = true;
        if (cl->uc)
                conn_close(cl->uc);
        free(cl);
}
