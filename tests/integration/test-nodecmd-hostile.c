/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hostile clients against a running nodecmd (started here on a temporary root directory, with
 * a 256-CPU machine so that its replies are large):
 *
 *   garbage bytes; a connection that says nothing, one that stops after the preface, one that
 *   stops in the middle of a frame; 200 half-open connections held while 1,000 clients call
 *   at once; a 100 MiB message; a client that pipelines requests for large replies and never
 *   reads them; garbage and a never-ending head on the metrics endpoint; more node-map event
 *   streams than it takes, and bad node-map queries.
 *
 * After each, a well-behaved call is still served. At the end: the daemon's peak RSS grew by
 * less than a bound far below what buffering the 100 MiB message or the unread replies would
 * take, the node's files are byte for byte what they were (hostile clients write nothing), and
 * SIGTERM ends the daemon with exit status 0. No timing is asserted.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>
#include <nodecm/ctl.h>
#include <nodecm/rpc-uv.h>
#include "hostile.h"

#define CONCURRENT 1000
#define HALF_OPEN 200
/* Peak RSS growth allowed (kB): the 100 MiB message alone would exceed it. */
#define RSS_BOUND_KB (64 * 1024)
#define RSS_BOUND_ASAN_KB (192 * 1024)

static const char PREFACE[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
static char dir[256], sock[300], msock[300];
static pid_t daemon_pid = -1;

static int connect_to(const char *path)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        struct timeval tv = {.tv_sec = 60}; /* a guard against hanging, not a measured limit */
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        return fd;
}

/* ---- well-behaved clients ------------------------------------------------------------------ */

/* N clients at once, one call of M each with REQ; how many got OK. */
static int calls(int n, ncm_ctl_method m, const uint8_t *req, size_t len, result *res)
{
        ncm_rpc_opts o;

        ncm_rpc_opts_default(&o);
        o.max_send_msg = 128u << 20;
        o.max_recv_msg = 64u << 20;
        return calls_at_once(n, sock, &o, ncm_ctl_method_path(m), req, len, res);
}

static bool still_serving(void)
{
        ncm_buf req = NCM_BUF_INIT, reply = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_ctl_request q = {.format = NCM_CTL_FORMAT_NONE};
        int r;

        ncm_ctl_request_pack(NCM_CTL_LIST_PODS, &q, &req);
        r = ncm_ctl_call(sock, NCM_CTL_LIST_PODS, (const uint8_t *)req.data, req.len, 60000, &reply,
                         &err);
        if (r < 0)
                printf("# ListPods: %s\n", err.msg);
        ncm_buf_done(&req);
        ncm_buf_done(&reply);
        return r >= 0;
}

/* Bytes of an HTTP/2 client session with N GetState (text) requests, made by nghttp2. */
static size_t pipelined(int n, const uint8_t *msg, size_t len, uint8_t *out, size_t cap)
{
        const char *path = ncm_ctl_method_path(NCM_CTL_GET_STATE);
        nghttp2_session_callbacks *cb;
        nghttp2_session *s;
        size_t total = 0;
        nghttp2_nv nva[] = {
                        {(uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0},
                        {(uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0},
                        {(uint8_t *)":path", (uint8_t *)path, 5, strlen(path), 0},
                        {(uint8_t *)":authority", (uint8_t *)"x", 10, 1, 0},
                        {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0},
                        {(uint8_t *)"te", (uint8_t *)"trailers", 2, 8, 0},
        };

        nghttp2_session_callbacks_new(&cb);
        nghttp2_session_client_new(&s, cb, NULL);
        nghttp2_session_callbacks_del(cb);
        nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0);
        for (int i = 0; i < n; i++)
                nghttp2_submit_headers(s, NGHTTP2_FLAG_NONE, -1, NULL, nva, 6, NULL);
        for (;;) {
                const uint8_t *p;
                ssize_t k = nghttp2_session_mem_send(s, &p);
                if (k <= 0 || total + (size_t)k > cap)
                        break;
                memcpy(out + total, p, (size_t)k);
                total += (size_t)k;
        }
        /* one DATA frame with END_STREAM per stream (ids 1, 3, ...): the gRPC message */
        for (int i = 0; i < n && total + 9 + 5 + len <= cap; i++) {
                uint32_t id = 1 + 2 * (uint32_t)i, fl = 5 + (uint32_t)len;
                uint8_t h[14] = {(uint8_t)(fl >> 16),
                                 (uint8_t)(fl >> 8),
                                 (uint8_t)fl,
                                 NGHTTP2_DATA,
                                 NGHTTP2_FLAG_END_STREAM,
                                 (uint8_t)(id >> 24),
                                 (uint8_t)(id >> 16),
                                 (uint8_t)(id >> 8),
                                 (uint8_t)id,
                                 0,
                                 (uint8_t)(len >> 24),
                                 (uint8_t)(len >> 16),
                                 (uint8_t)(len >> 8),
                                 (uint8_t)len};
                memcpy(out + total, h, sizeof(h));
                memcpy(out + total + sizeof(h), msg, len);
                total += sizeof(h) + len;
        }
        nghttp2_session_del(s);
        return total;
}

/* ---- the daemon ---------------------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
        char *buf = NULL;
        FILE *f = fopen(path, "rb");
        long n;

        if (!f)
                return NULL;
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        fseek(f, 0, SEEK_SET);
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
                free(buf);
                buf = NULL;
        }
        if (buf)
                buf[n] = '\0';
        fclose(f);
        *len = (size_t)n;
        return buf;
}

static int start_daemon(const char *nodecmd)
{
        char cfg[320], log[320];
        FILE *f;

        snprintf(cfg, sizeof(cfg), "%s/kubelet.yaml", dir);
        snprintf(log, sizeof(log), "%s/nodecmd.log", dir);
        f = fopen(cfg, "w");
        if (!f)
                return -1;
        fputs("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
              "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\n"
              "topologyManagerPolicy: best-effort\nenforcement: none\n",
              f);
        fclose(f);
        daemon_pid = fork();
        if (daemon_pid == 0) {
                char root[320];
                int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                dup2(fd, 2);
                snprintf(root, sizeof(root), "%s/root", dir);
                execl(nodecmd, nodecmd, "--config", cfg, "--root-dir", root, "--synthetic",
                      "package:2 numa:2 core:32 pu:2", (char *)NULL);
                _exit(127);
        }
        for (int i = 0; i < 6000; i++) {
                int fd = connect_to(sock);
                if (fd >= 0) {
                        close(fd);
                        return 0;
                }
                if (waitpid(daemon_pid, NULL, WNOHANG) == daemon_pid)
                        return -1;
                usleep(10000);
        }
        return -1;
}

static void cleanup(void)
{
        char cmd[400];

        if (daemon_pid > 0)
                kill(daemon_pid, SIGKILL);
        if (dir[0]) {
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        fprintf(stderr, "# could not remove %s\n", dir);
        }
}

int main(void)
{
        const char *nodecmd = getenv("NCM_NODECMD");
        const char *san = getenv("NCM_SANITIZE");
        long bound = san && strcmp(san, "none") != 0 ? RSS_BOUND_ASAN_KB : RSS_BOUND_KB;
        char buf[65536], path[400], d[512];
        static uint8_t reqs[1 << 20];
        char *state0, *pods0, *state1, *pods1;
        size_t sl0, pl0, sl1, pl1;
        long base, peak;
        result res;
        int fd, ok, status;

        if (!nodecmd) {
                printf("SKIP: NCM_NODECMD not set (run through meson test)\n");
                return 77;
        }
        signal(SIGPIPE, SIG_IGN);
        {
                struct rlimit rl;
                if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                        rl.rlim_cur = rl.rlim_max;
                        (void)setrlimit(RLIMIT_NOFILE, &rl);
                }
        }
        snprintf(dir, sizeof(dir), "%s/ncm-hostile-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(dir))
                return 1;
        atexit(cleanup);
        snprintf(sock, sizeof(sock), "%s/root/nodecm.sock", dir);
        snprintf(msock, sizeof(msock), "%s/root/metrics.sock", dir);
        if (start_daemon(nodecmd) < 0) {
                check("nodecmd starts", false, NULL);
                return 1;
        }

        /* a pod, so that the node has state to keep safe */
        {
                static const char pod[] = "{\"metadata\": {\"uid\": \"keep\"}, \"spec\": "
                                          "{\"containers\": [{\"name\": \"c\", \"resources\": "
                                          "{\"limits\": {\"cpu\": \"4\", \"memory\": \"1Gi\"}}}]}}";
                ncm_ctl_request q = {.pod = pod, .pod_len = strlen(pod)};
                ncm_buf req = NCM_BUF_INIT, reply = NCM_BUF_INIT;
                ncm_error err = NCM_ERROR_INIT;
                ncm_ctl_request_pack(NCM_CTL_ADMIT, &q, &req);
                check("admit a pod",
                      ncm_ctl_call(sock, NCM_CTL_ADMIT, (const uint8_t *)req.data, req.len, 60000,
                                   &reply, &err) >= 0,
                      err.msg);
                ncm_buf_done(&req);
                ncm_buf_done(&reply);
        }
        /* the kubelet's file catches up just after the answer (group commit: docs/nodecmd.md,
         * "Durability"); waited for, bounded by a guard, not timed */
        snprintf(path, sizeof(path), "%s/root/cpu_manager_state", dir);
        for (int i = 0; i < 3000; i++) {
                state0 = read_file(path, &sl0);
                if (!state0 || strstr(state0, "\"keep\""))
                        break;
                free(state0);
                usleep(10000);
        }
        snprintf(path, sizeof(path), "%s/root/nodecm_pods", dir);
        pods0 = read_file(path, &pl0);
        check("still serving", still_serving(), NULL);
        base = status_kb(daemon_pid, "VmRSS:");

        /* garbage: the daemon answers with a GOAWAY at most, and closes */
        fd = connect_to(sock);
        for (size_t i = 0; i < 4096; i++)
                buf[i] = (char)(i * 7919 >> 3);
        send(fd, buf, 4096, MSG_NOSIGNAL);
        check("garbage: connection closed", server_closes(fd), NULL);
        close(fd);
        check("garbage: still serving", still_serving(), NULL);

        /* silence, a preface then silence, half a frame: each closed by a timeout */
        {
                const uint8_t half[] = {0, 0, 12, NGHTTP2_SETTINGS, 0, 0, 0, 0, 0, 0, 3};
                int a = connect_to(sock), b = connect_to(sock), c = connect_to(sock);
                send(b, PREFACE, 24, MSG_NOSIGNAL);
                send(c, PREFACE, 24, MSG_NOSIGNAL);
                send(c, half, sizeof(half), MSG_NOSIGNAL);
                check("half-open: the daemon serves others meanwhile", still_serving(), NULL);
                check("silent connection closed", server_closes(a), NULL);
                check("preface then silence: closed", server_closes(b), NULL);
                check("half a frame: closed", server_closes(c), NULL);
                close(a);
                close(b);
                close(c);
        }

        /* 200 half-open connections held while 1,000 clients call at once */
        {
                int held[HALF_OPEN];
                ncm_buf req = NCM_BUF_INIT;
                ncm_ctl_request q = {.format = NCM_CTL_FORMAT_JSON};
                ncm_ctl_request_pack(NCM_CTL_GET_STATE, &q, &req);
                for (int i = 0; i < HALF_OPEN; i++) {
                        held[i] = connect_to(sock);
                        send(held[i], PREFACE, 24, MSG_NOSIGNAL);
                }
                ok = calls(CONCURRENT, NCM_CTL_GET_STATE, (const uint8_t *)req.data, req.len, &res);
                snprintf(d, sizeof(d), "(%d of %d OK, last: %s)", ok, CONCURRENT, res.last_msg);
                check("1000 concurrent clients beside 200 half-open ones", ok == CONCURRENT, d);
                for (int i = 0; i < HALF_OPEN; i++)
                        close(held[i]);
                ncm_buf_done(&req);
        }

        /* 100 MiB: refused from its length prefix, never buffered */
        {
                size_t big = 100u << 20;
                uint8_t *m = calloc(1, big);
                calls(1, NCM_CTL_ADMIT, m, big, &res);
                check("100 MiB message refused", res.last_code == NCM_RPC_RESOURCE_EXHAUSTED,
                      res.last_msg);
                free(m);
                check("100 MiB message: still serving", still_serving(), NULL);
        }

        /* a client that asks for 100 CPU maps of 128 CPUs and never reads a byte */
        {
                ncm_buf req = NCM_BUF_INIT;
                ncm_ctl_request q = {.format = NCM_CTL_FORMAT_TEXT};
                size_t n;
                int slow;
                ncm_ctl_request_pack(NCM_CTL_GET_STATE, &q, &req);
                n = pipelined(100, (const uint8_t *)req.data, req.len, reqs, sizeof(reqs));
                slow = connect_to(sock);
                send(slow, reqs, n, MSG_NOSIGNAL);
                usleep(500 * 1000); /* let the daemon fill what it may (no assertion on time) */
                check("a client that never reads: still serving", still_serving(), NULL);
                ok = calls(100, NCM_CTL_LIST_PODS, (const uint8_t *)"", 0, &res);
                check("a client that never reads: 100 more clients served", ok == 100, NULL);
                close(slow);
                ncm_buf_done(&req);
        }

        /* the metrics endpoint: garbage, a head that never ends, an oversized head */
        {
                int g = connect_to(msock), h = connect_to(msock);
                char resp[256] = "";
                ssize_t n;
                send(g, "\x16\x03\x01garbage\r\n\r\n", 14, MSG_NOSIGNAL);
                n = recv(g, resp, sizeof(resp) - 1, 0);
                check("metrics: garbage gets a 400", n > 0 && strstr(resp, " 400 "), resp);
                close(g);
                memset(buf, 'a', sizeof(buf));
                memcpy(buf, "GET /", 5);
                send(h, buf, 16384, MSG_NOSIGNAL);
                n = recv(h, resp, sizeof(resp) - 1, 0);
                resp[n > 0 ? n : 0] = '\0';
                check("metrics: an endless head gets a 431", n > 0 && strstr(resp, " 431 "), resp);
                close(h);
                g = connect_to(msock);
                send(g, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 35, MSG_NOSIGNAL);
                n = recv(g, resp, sizeof(resp) - 1, 0);
                resp[n > 0 ? n : 0] = '\0';
                check("metrics: still served", n > 0 && strstr(resp, " 200 "), resp);
                close(g);
        }

        /* the node map's routes: more event streams than allowed, hostile queries */
        {
                static const char events[] = "GET /map/events HTTP/1.1\r\n\r\n";
                static const char page[] = "GET /map HTTP/1.1\r\nConnection: close\r\n\r\n";
                int streams[40], g;
                int got200 = 0, got503 = 0;
                char resp[512] = "";
                ssize_t n;
                static const struct {
                        const char *req, *status;
                } bad[] = {
                                {"GET /map/explain HTTP/1.1\r\n\r\n", " 400 "},
                                {"GET /map/explain?pod=%zz HTTP/1.1\r\n\r\n", " 400 "},
                                {"GET /map/explain?pod=a%00b HTTP/1.1\r\n\r\n", " 400 "},
                                {"GET /map/explain?pod=nobody HTTP/1.1\r\n\r\n", " 404 "},
                                {"POST /map HTTP/1.1\r\nContent-Length: 0\r\n\r\n", " 405 "},
                                {"GET /map/events?x HTTP/1.0\r\n\r\n", " 200 "},
                };
                for (size_t i = 0; i < 40; i++) {
                        streams[i] = connect_to(msock);
                        send(streams[i], events, strlen(events), MSG_NOSIGNAL);
                        n = recv(streams[i], resp, sizeof(resp) - 1, 0);
                        resp[n > 0 ? n : 0] = '\0';
                        got200 += n > 0 && strstr(resp, " 200 ") != NULL;
                        got503 += n > 0 && strstr(resp, " 503 ") != NULL;
                }
                snprintf(d, sizeof(d), "(%d streams, %d refused)", got200, got503);
                check("map: at most 32 event streams, the others refused",
                      got200 == 32 && got503 == 8, d);
                g = connect_to(msock);
                send(g, page, strlen(page), MSG_NOSIGNAL);
                n = recv(g, resp, sizeof(resp) - 1, 0);
                resp[n > 0 ? n : 0] = '\0';
                check("map: the page served beside the streams", n > 0 && strstr(resp, " 200 "),
                      resp);
                close(g);
                for (size_t i = 0; i < 40; i++)
                        close(streams[i]);
                for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++) {
                        g = connect_to(msock);
                        send(g, bad[i].req, strlen(bad[i].req), MSG_NOSIGNAL);
                        n = recv(g, resp, sizeof(resp) - 1, 0);
                        resp[n > 0 ? n : 0] = '\0';
                        check(bad[i].req, n > 0 && strstr(resp, bad[i].status), resp);
                        close(g);
                }
        }

        check("after everything: still serving", still_serving(), NULL);
        peak = status_kb(daemon_pid, "VmHWM:");
        snprintf(d, sizeof(d), "(%ld kB at rest, peak %ld kB, bound +%ld kB)", base, peak, bound);
        check("memory stayed bounded", base > 0 && peak > 0 && peak - base < bound, d);
        snprintf(path, sizeof(path), "%s/root/cpu_manager_state", dir);
        state1 = read_file(path, &sl1);
        snprintf(path, sizeof(path), "%s/root/nodecm_pods", dir);
        pods1 = read_file(path, &pl1);
        check("nothing written",
              state0 && state1 && pods0 && pods1 && sl0 == sl1 && pl0 == pl1 &&
                              !memcmp(state0, state1, sl0) && !memcmp(pods0, pods1, pl0),
              NULL);
        free(state0);
        free(state1);
        free(pods0);
        free(pods1);
        kill(daemon_pid, SIGTERM);
        waitpid(daemon_pid, &status, 0);
        daemon_pid = -1;
        check("SIGTERM: exit 0", WIFEXITED(status) && WEXITSTATUS(status) == 0, NULL);
        if (check_failures()) {
                snprintf(path, sizeof(path), "tail -20 '%s/nodecmd.log' >&2", dir);
                if (system(path) != 0)
                        fprintf(stderr, "# no log\n");
        }
        return check_failures() ? 1 : 0;
}
