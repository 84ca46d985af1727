/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small device-plugin host for the integration tests: a node in ROOT (checkpoints written
 * there), the device-plugin host on ROOT/device-plugins, the pod resources server on
 * ROOT/pod-resources/kubelet.sock, all on one libuv loop, driven by line commands on stdin:
 *
 *   admit ID FILE      admit the pod in FILE; answers when decided (other commands go on)
 *   remove UID         remove a pod
 *   devices            the device manager's inventory
 *   plugins            the host's plugin connections
 *   metrics            the host's and the pod resources server's metrics
 *   quit               close everything and exit 0
 *
 * Every answer and every event is one JSON line on stdout ({"op": ...}); the host's log goes to
 * stderr, one line per event. Admissions run as the daemon runs them: one pass at a time on
 * the node, a pass that needs plugin answers gives the node back and runs again once they are
 * in (include/nodecm/deviceplugin.h).
 *
 *   dp-harness ROOT [--synthetic DESC] [--policy P] [--scope S] [--grace-ms N]
 *              [--capacity-ms N] [--allocate-timeout-ms N] [--dial-timeout-ms N]
 *              [--max-recv N] [--no-get]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <signal.h>
#include <uv.h>

#include <nodecm/deviceplugin.h>
#include <nodecm/node.h>
#include <nodecm/pod.h>
#include <nodecm/podresources.h>
#include <nodecm/topology.h>

typedef struct job job;
struct job {
        job *next;
        char *id;
        ncm_pod *pod;
        ncm_dp_session *s;
};

static uv_loop_t *loop;
static ncm_node *node;
static ncm_dp_host *host;
static ncm_podres_server *podres;
static job *queue, **queue_tail = &queue;
static uv_idle_t kick;
static uv_pipe_t in;
static char line[65536];
static size_t line_len;
static bool quitting;

static void out(ncm_buf *b)
{
        fwrite(b->data, 1, b->len, stdout);
        fflush(stdout);
        ncm_buf_done(b);
}

static void str(ncm_buf *b, const char *s)
{
        ncm_buf_json_string(b, s ? s : "", s ? strlen(s) : 0);
}

static void on_log(void *data, ncm_dp_level level, const char *msg, const ncm_dp_field *f, size_t n)
{
        static const char *const lv[] = {"E", "W", "I", "D"};
        (void)data;
        fprintf(stderr, "%s %s", lv[level], msg);
        for (size_t i = 0; i < n; i++)
                fprintf(stderr, " %s=\"%s\"", f[i].key, f[i].value ? f[i].value : "");
        fputc('\n', stderr);
}

static void on_changed(void *data, const char *resource)
{
        ncm_buf b = NCM_BUF_INIT;
        (void)data;
        ncm_buf_puts(&b, "{\"op\": \"changed\", \"resource\": ");
        str(&b, resource);
        ncm_buf_puts(&b, "}\n");
        out(&b);
}

/* ---- admissions ---- */

static void job_free(job *j)
{
        ncm_dp_session_free(j->s);
        ncm_pod_free(j->pod);
        free(j->id);
        free(j);
}

static void on_kick(uv_idle_t *h);

static void submit(job *j)
{
        j->next = NULL;
        *queue_tail = j;
        queue_tail = &j->next;
        uv_idle_start(&kick, on_kick);
}

static void answers_in(ncm_dp_session *s, void *data)
{
        (void)s;
        submit(data);
}

static void print_result(job *j, int r, const ncm_error *err, const ncm_node_admission *a)
{
        ncm_buf b = NCM_BUF_INIT;

        ncm_buf_puts(&b, "{\"op\": \"admit\", \"id\": ");
        str(&b, j->id);
        ncm_buf_puts(&b, ", \"pod\": ");
        str(&b, j->pod->uid);
        ncm_buf_printf(&b, ", \"rounds\": %u, \"calls\": %u", ncm_dp_session_rounds(j->s),
                       ncm_dp_session_calls(j->s));
        if (r < 0) {
                ncm_buf_puts(&b, ", \"error\": ");
                str(&b, err->msg);
                ncm_buf_puts(&b, "}\n");
                out(&b);
                return;
        }
        ncm_buf_printf(&b, ", \"admitted\": %s", a->admitted ? "true" : "false");
        if (!a->admitted) {
                ncm_buf_puts(&b, ", \"reason\": ");
                str(&b, a->reason);
                ncm_buf_puts(&b, ", \"message\": ");
                str(&b, a->message);
        }
        ncm_buf_puts(&b, ", \"containers\": [");
        for (size_t i = 0; i < a->n_containers; i++) {
                const ncm_node_container_result *c = &a->containers[i];
                char *cpus = ncm_cpuset_format_list(c->cpus);
                ncm_buf_puts(&b, i ? ", {\"name\": " : "{\"name\": ");
                str(&b, c->name);
                ncm_buf_printf(&b,
                               ", \"exclusive\": %s, \"cpus\": ", c->exclusive ? "true" : "false");
                str(&b, cpus);
                free(cpus);
                ncm_buf_puts(&b, ", \"numa\": [");
                for (size_t k = 0; k < c->n_numa; k++)
                        ncm_buf_printf(&b, "%s%d", k ? ", " : "", c->numa[k]);
                ncm_buf_puts(&b, "], \"devices\": {");
                for (size_t k = 0; k < c->n_devices; k++) {
                        ncm_buf_puts(&b, k ? ", " : "");
                        str(&b, c->devices[k].resource);
                        ncm_buf_puts(&b, ": [");
                        for (size_t x = 0; x < c->devices[k].n_ids; x++) {
                                ncm_buf_puts(&b, x ? ", " : "");
                                str(&b, c->devices[k].ids[x]);
                        }
                        ncm_buf_putc(&b, ']');
                }
                ncm_buf_puts(&b, "}, \"options\": ");
                if (c->device_options)
                        ncm_devmgr_alloc_resp_json(c->device_options, &b);
                else
                        ncm_buf_puts(&b, "null");
                ncm_buf_putc(&b, '}');
        }
        ncm_buf_puts(&b, "]}\n");
        out(&b);
}

static void run_pass(job *j)
{
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r;

        ncm_dp_session_enter(j->s);
        r = ncm_node_admit(node, j->pod, 0, &a, &err);
        ncm_dp_session_leave(j->s);
        if (ncm_dp_session_pending(j->s)) {
                /* the node is as before: ask the plugins, give the node to the others */
                ncm_node_admission_free(a);
                if (ncm_dp_session_fetch(j->s, answers_in, j, &err) < 0) {
                        print_result(j, -EIO, &err, NULL);
                        job_free(j);
                }
                return;
        }
        print_result(j, r, &err, a);
        ncm_node_admission_free(a);
        job_free(j);
}

static void on_kick(uv_idle_t *h)
{
        job *j = queue;

        if (!j) {
                uv_idle_stop(h);
                return;
        }
        /* one pass per loop turn: the loop (and the plugins' answers) go on in between */
        queue = j->next;
        if (!queue)
                queue_tail = &queue;
        run_pass(j);
}

/* ---- commands ---- */

static void closed(void *data)
{
        (void)data;
}

static void quit(void)
{
        if (quitting)
                return;
        quitting = true;
        uv_read_stop((uv_stream_t *)&in);
        uv_close((uv_handle_t *)&in, NULL);
        uv_idle_stop(&kick);
        uv_close((uv_handle_t *)&kick, NULL);
        while (queue) {
                job *j = queue;
                queue = j->next;
                job_free(j);
        }
        ncm_podres_server_close(podres, closed, NULL);
        ncm_dp_host_close(host, closed, NULL);
}

static void command(char *cmd)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        char *arg = strchr(cmd, ' ');

        if (arg)
                *arg++ = '\0';
        if (strcmp(cmd, "admit") == 0 && arg && strchr(arg, ' ')) {
                job *j = calloc(1, sizeof(*j));
                char *file = strchr(arg, ' ');
                *file++ = '\0';
                j->id = strdup(arg);
                j->s = ncm_dp_session_new(host);
                if (ncm_pod_load_file(file, &j->pod, &err) < 0) {
                        ncm_buf_puts(&b, "{\"op\": \"admit\", \"id\": ");
                        str(&b, j->id);
                        ncm_buf_puts(&b, ", \"error\": ");
                        str(&b, err.msg);
                        ncm_buf_puts(&b, "}\n");
                        out(&b);
                        ncm_dp_session_free(j->s);
                        free(j->id);
                        free(j);
                        return;
                }
                submit(j);
        } else if (strcmp(cmd, "remove") == 0 && arg) {
                int r = ncm_node_remove_pod(node, arg, NULL, &err);
                ncm_buf_printf(&b, "{\"op\": \"remove\", \"result\": %d, \"error\": ", r);
                str(&b, r < 0 ? err.msg : "");
                ncm_buf_puts(&b, "}\n");
                out(&b);
        } else if (strcmp(cmd, "devices") == 0) {
                ncm_devmgr_inventory inv = {0};
                ncm_devmgr_inventory_get(ncm_node_devmgr(node), &inv);
                ncm_buf_puts(&b, "{\"op\": \"devices\", \"inventory\": ");
                ncm_devmgr_inventory_json(&inv, &b);
                b.len--; /* the newline */
                ncm_buf_printf(&b, ", \"held\": %zu}\n",
                               ncm_devmgr_num_held(ncm_node_devmgr(node)));
                ncm_devmgr_inventory_done(&inv);
                out(&b);
        } else if (strcmp(cmd, "plugins") == 0) {
                ncm_dp_plugin_info *v = NULL;
                size_t n = 0;
                ncm_dp_host_plugins(host, &v, &n);
                ncm_buf_puts(&b, "{\"op\": \"plugins\", \"plugins\": [");
                for (size_t i = 0; i < n; i++) {
                        ncm_buf_puts(&b, i ? ", {\"resource\": " : "{\"resource\": ");
                        str(&b, v[i].resource);
                        ncm_buf_puts(&b, ", \"socket\": ");
                        str(&b, v[i].socket);
                        ncm_buf_printf(&b,
                                       ", \"state\": \"%s\", \"current\": %s, \"snapshots\": %llu, "
                                       "\"devices\": %llu}",
                                       v[i].state, v[i].current ? "true" : "false",
                                       (unsigned long long)v[i].snapshots,
                                       (unsigned long long)v[i].devices);
                }
                ncm_buf_puts(&b, "]}\n");
                free(v);
                out(&b);
        } else if (strcmp(cmd, "metrics") == 0) {
                ncm_buf m = NCM_BUF_INIT;
                ncm_dp_host_metrics(host, &m);
                ncm_podres_server_metrics(podres, &m);
                ncm_buf_puts(&b, "{\"op\": \"metrics\", \"text\": ");
                ncm_buf_json_string(&b, m.data ? m.data : "", m.len);
                ncm_buf_puts(&b, "}\n");
                ncm_buf_done(&m);
                out(&b);
        } else if (strcmp(cmd, "quit") == 0) {
                quit();
        } else {
                ncm_buf_puts(&b, "{\"op\": \"error\", \"error\": \"unknown command\"}\n");
                out(&b);
        }
}

static void alloc_cb(uv_handle_t *h, size_t size, uv_buf_t *buf)
{
        static char space[65536];
        (void)h;
        (void)size;
        buf->base = space;
        buf->len = sizeof(space);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
        (void)s;
        if (n < 0) {
                quit();
                return;
        }
        for (ssize_t i = 0; i < n; i++) {
                char c = buf->base[i];
                if (c == '\n') {
                        line[line_len] = '\0';
                        line_len = 0;
                        command(line);
                        if (quitting)
                                return;
                } else if (line_len + 1 < sizeof(line)) {
                        line[line_len++] = c;
                }
        }
}

static const char *arg_of(int argc, char **argv, const char *name, const char *def)
{
        for (int i = 2; i + 1 < argc; i++)
                if (strcmp(argv[i], name) == 0)
                        return argv[i + 1];
        return def;
}

static bool flag(int argc, char **argv, const char *name)
{
        for (int i = 2; i < argc; i++)
                if (strcmp(argv[i], name) == 0)
                        return true;
        return false;
}

int main(int argc, char **argv)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_topo *t = NULL;
        ncm_node_config *cfg = NULL;
        ncm_node_options no = {0};
        ncm_dp_host_opts ho = {0};
        ncm_podres_opts po = {0};
        ncm_rpc_opts ro;
        ncm_dp_host_events ev = {on_log, on_changed, NULL};
        char cfgtext[512], dir[4096], sock[4096];

        if (argc < 2) {
                fprintf(stderr, "usage: dp-harness ROOT [options]\n");
                return 2;
        }
        /* nothing of a test outlives it */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        loop = uv_default_loop();
        if (ncm_topo_from_synthetic(
                            arg_of(argc, argv, "--synthetic", "package:2 numa:1 core:4 pu:1"), &t,
                            &err) < 0)
                goto fail;
        snprintf(cfgtext, sizeof(cfgtext),
                 "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                 "\"topologyManagerPolicy\": \"%s\", \"topologyManagerScope\": \"%s\"}",
                 arg_of(argc, argv, "--policy", "single-numa-node"),
                 arg_of(argc, argv, "--scope", "container"));
        if (ncm_node_config_parse(cfgtext, strlen(cfgtext), "config", "", &cfg, &err) < 0)
                goto fail;
        no.state_dir = argv[1];
        if (ncm_node_new(t, cfg, &no, &node, &err) < 0)
                goto fail;
        snprintf(dir, sizeof(dir), "%s/device-plugins", argv[1]);
        snprintf(sock, sizeof(sock), "%s/pod-resources/kubelet.sock", argv[1]);
        ncm_rpc_opts_default(&ro);
        ro.max_recv_msg = (size_t)atol(arg_of(argc, argv, "--max-recv", "4194304"));
        ho.dir = dir;
        ho.rpc = &ro;
        ho.grace_period_ms = (uint64_t)atol(arg_of(argc, argv, "--grace-ms", "0"));
        ho.capacity_period_ms = (uint32_t)atol(arg_of(argc, argv, "--capacity-ms", "0"));
        ho.allocate_timeout_ms = (uint32_t)atol(arg_of(argc, argv, "--allocate-timeout-ms", "0"));
        ho.dial_timeout_ms = (uint32_t)atol(arg_of(argc, argv, "--dial-timeout-ms", "0"));
        if (ncm_dp_host_new(loop, ncm_node_device_manager(node), &ho, &ev, &host, &err) < 0 ||
            ncm_dp_host_start(host, &err) < 0)
                goto fail;
        po.socket = sock;
        po.get = flag(argc, argv, "--no-get") ? 0 : -1;
        if (ncm_podres_server_new(loop, node, &po, &podres, &err) < 0)
                goto fail;
        uv_idle_init(loop, &kick);
        uv_pipe_init(loop, &in, 0);
        uv_pipe_open(&in, 0);
        uv_read_start((uv_stream_t *)&in, alloc_cb, on_read);
        printf("{\"op\": \"ready\"}\n");
        fflush(stdout);
        uv_run(loop, UV_RUN_DEFAULT);
        uv_loop_close(loop);
        ncm_node_free(node);
        ncm_node_config_free(cfg);
        ncm_topo_free(t);
        return 0;
fail:
        fprintf(stderr, "dp-harness: %s\n", err.msg);
        return 1;
}
