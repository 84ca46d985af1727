/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device plugins: what a user waits for when a pod needs a device.
 *
 *  - one admission of a Guaranteed pod with 1 CPU and 1 device of a 64-device resource, through
 *    the device-plugin host and a real python3-grpcio plugin (tests/integration/
 *    deviceplugin_peer.py): every pass of the admission, the Allocate round trip, the
 *    checkpoints written (fsync) -- against the same admission without the device;
 *  - a ListAndWatch snapshot of 30,000 devices processed by the host: decoded, applied to the
 *    device manager, kubelet_internal_checkpoint written (target: at most 50 ms), and the same
 *    end to end from a python plugin (one health flip; python builds the 770 kB message).
 *
 * The node keeps its checkpoints in a temporary directory, as nodecmd does in its root.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodecm/deviceplugin.h>
#include <nodecm/node.h>
#include <nodecm/topology.h>

#include "benchutil.h"
#include "deviceplugin-v1beta1.pb-c.h"
#include "deviceplugin/dp-internal.h"

#ifndef NCM_SOURCE_ROOT
#define NCM_SOURCE_ROOT "."
#endif

#define ADMISSIONS 200

static uv_loop_t *loop;
static ncm_dp_host *host;
static ncm_node *node;
static char root[] = "/tmp/ncm-bench-dp-XXXXXX";
static char stubs[256];
static int changed_count;

static void on_changed(void *data, const char *resource)
{
        (void)data;
        (void)resource;
        changed_count++;
}

static void row(const char *what, double *ns, int n, const char *target)
{
        char m[32], p[32];
        qsort(ns, (size_t)n, sizeof(*ns), bench_cmp_double);
        printf("| %s | %s | %s | %s |\n", what, bench_fmt_ns(ns[n / 2], m),
               bench_fmt_ns(ns[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1], p), target);
}

/* ---- a python plugin ---- */

static pid_t plugin(const char *socket, const char *resource, const char *count, int *in_fd)
{
        int fds[2];
        pid_t pid;
        char script[512], dir[512];

        if (pipe(fds) < 0)
                return -1;
        fflush(stdout); /* a child must not write what this process buffered */
        snprintf(script, sizeof(script), "%s/tests/integration/deviceplugin_peer.py",
                 NCM_SOURCE_ROOT);
        snprintf(dir, sizeof(dir), "%s/device-plugins", root);
        pid = fork();
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives the bench */
                dup2(fds[0], 0);
                close(fds[0]);
                close(fds[1]);
                if (!freopen("/dev/null", "w", stdout))
                        _exit(1);
                execl("/usr/bin/python3", "python3", script, "--stubs", stubs, "--dir", dir,
                      "--socket", socket, "--resource", resource, "--count", count, "--numa-nodes",
                      "2", "--envs-only", (char *)NULL);
                _exit(127);
        }
        close(fds[0]);
        *in_fd = fds[1];
        return pid;
}

static int64_t allocatable(const char *resource)
{
        ncm_devmgr_inventory inv = {0};
        int64_t n = -1;
        ncm_devmgr_inventory_get(ncm_node_devmgr(node), &inv);
        for (size_t i = 0; i < inv.n; i++)
                if (strcmp(inv.v[i].resource, resource) == 0)
                        n = inv.v[i].allocatable;
        ncm_devmgr_inventory_done(&inv);
        return n;
}

static bool wait_allocatable(const char *resource, int64_t n, double seconds)
{
        uint64_t end = bench_now_ns() + (uint64_t)(seconds * 1e9);
        while (allocatable(resource) != n) {
                if (bench_now_ns() > end)
                        return false;
                uv_run(loop, UV_RUN_ONCE);
        }
        return true;
}

/* ---- an admission as nodecmd runs it: passes until the plugins' answers are in ---- */

static bool answered;

static void answers_in(ncm_dp_session *s, void *data)
{
        (void)s;
        (void)data;
        answered = true;
}

static double wait_ns; /* of the last admission */

static int admit(const ncm_pod *pod)
{
        ncm_dp_session *s = ncm_dp_session_new(host);
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r;

        wait_ns = 0;
        for (;;) {
                ncm_dp_session_enter(s);
                r = ncm_node_admit(node, pod, 0, &a, &err);
                ncm_dp_session_leave(s);
                if (!ncm_dp_session_pending(s))
                        break;
                ncm_node_admission_free(a);
                a = NULL;
                answered = false;
                if (ncm_dp_session_fetch(s, answers_in, NULL, &err) < 0)
                        break;
                {
                        uint64_t t1 = bench_now_ns();
                        while (!answered)
                                uv_run(loop, UV_RUN_ONCE);
                        wait_ns += (double)(bench_now_ns() - t1);
                }
        }
        if (r >= 0 && !a->admitted)
                r = -1;
        if (r < 0)
                fprintf(stderr, "bench-deviceplugin: %s %s\n", err.msg, a ? a->message : "");
        ncm_node_admission_free(a);
        ncm_dp_session_free(s);
        return r;
}

static bool bench_admissions(const char *extra, double *ns, double *waits)
{
        for (int i = 0; i < ADMISSIONS; i++) {
                char text[512];
                ncm_pod *pod = NULL;
                uint64_t t0;
                int r;
                snprintf(text, sizeof(text),
                         "{\"metadata\": {\"uid\": \"b-%d\", \"name\": \"b\"}, \"spec\": "
                         "{\"containers\": [{\"name\": \"app\", \"resources\": {\"limits\": "
                         "{\"cpu\": \"1\", \"memory\": \"1Gi\"%s}}}]}}",
                         i, extra);
                if (ncm_pod_parse(text, strlen(text), "pod", &pod, NULL) < 0)
                        return false;
                t0 = bench_now_ns();
                r = admit(pod);
                ns[i] = (double)(bench_now_ns() - t0);
                waits[i] = wait_ns;
                ncm_node_remove_pod(node, pod->uid, NULL, NULL);
                ncm_pod_free(pod);
                if (r < 0)
                        return false;
        }
        return true;
}

/* ---- 30,000 devices processed in-process ---- */

typedef struct snap_arg {
        uint8_t *msg;
        size_t len;
        ncm_devmgr *m;
        uint64_t ep;
} snap_arg;

static void process_snapshot(void *p)
{
        snap_arg *a = p;
        ncm__dp_snapshot s = {0};
        if (ncm__dp_snapshot_decode(a->msg, a->len, &s, NULL) < 0 ||
            ncm_devmgr_update_devices(a->m, "example.com/big", a->ep, s.devices, s.n, NULL) < 0)
                abort();
        ncm__dp_snapshot_done(&s);
}

static int snapshot_30000(double *with_ckpt, double *without, size_t *bytes)
{
        enum { N = 30000 };
        V1beta1__ListAndWatchResponse lw = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
        V1beta1__Device *d = calloc(N, sizeof(*d));
        V1beta1__Device **dv = calloc(N, sizeof(*dv));
        V1beta1__TopologyInfo t[2] = {V1BETA1__TOPOLOGY_INFO__INIT, V1BETA1__TOPOLOGY_INFO__INIT};
        V1beta1__NUMANode n[2] = {V1BETA1__NUMANODE__INIT, V1BETA1__NUMANODE__INIT};
        V1beta1__NUMANode *nv[2] = {&n[0], &n[1]};
        char(*ids)[16] = calloc(N, 16);
        static const int numa[] = {0, 1};
        char path[512];
        snap_arg a = {0};

        n[1].id = 1;
        t[0].n_nodes = t[1].n_nodes = 1;
        t[0].nodes = &nv[0];
        t[1].nodes = &nv[1];
        for (int i = 0; i < N; i++) {
                v1beta1__device__init(&d[i]);
                snprintf(ids[i], 16, "dev-%05d", i);
                d[i].id = ids[i];
                d[i].health = "Healthy";
                d[i].topology = &t[i % 2];
                dv[i] = &d[i];
        }
        lw.n_devices = N;
        lw.devices = dv;
        a.len = protobuf_c_message_get_packed_size(&lw.base);
        a.msg = malloc(a.len);
        protobuf_c_message_pack(&lw.base, a.msg);
        *bytes = a.len;
        for (int pass = 0; pass < 2; pass++) {
                ncm_devmgr_config cfg = {.numa_nodes = numa, .n_numa_nodes = 2};
                snprintf(path, sizeof(path), "%s/kubelet_internal_checkpoint.bench", root);
                if (pass == 0) {
                        cfg.checkpoint_path = path;
                        cfg.checkpoint_rootfd = AT_FDCWD;
                }
                if (ncm_devmgr_new(&cfg, &a.m, NULL) < 0 ||
                    ncm_devmgr_plugin_connect(a.m, "example.com/big", &ncm_devmgr_standin_ops, NULL,
                                              &ncm_devmgr_standin_options, &a.ep, NULL) < 0)
                        return -1;
                *(pass == 0 ? with_ckpt : without) = bench_median_ns(process_snapshot, &a, 20);
                a.m = ncm_devmgr_free(a.m);
        }
        free(a.msg);
        free(d);
        free(dv);
        free(ids);
        return 0;
}

int main(void)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_topo *t = NULL;
        ncm_node_config *cfg = NULL;
        ncm_node_options no = {0};
        ncm_dp_host_opts ho = {0};
        ncm_dp_host_events ev = {NULL, on_changed, NULL};
        static const char cfg_text[] = "{\"cpuManagerPolicy\": \"static\", "
                                       "\"reservedSystemCPUs\": \"0\", "
                                       "\"topologyManagerPolicy\": \"single-numa-node\"}";
        char cmd[1024], dir[512];
        double with_dev[ADMISSIONS], without_dev[ADMISSIONS], ckpt = 0, nockpt = 0, e2e[8];
        double waits[ADMISSIONS], waits_none[ADMISSIONS];
        size_t bytes = 0;
        int small_in = -1, big_in = -1, n_e2e = 0;
        pid_t small = -1, big = -1;
        bool ok;

        printf("## Device plugins (bench-deviceplugin)\n\n");
        if (!mkdtemp(root))
                return 1;
        snprintf(stubs, sizeof(stubs), "%s/stubs", root);
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p %s && /usr/bin/python3 -m grpc_tools.protoc -I %s/lib/api "
                 "--python_out=%s --grpc_python_out=%s deviceplugin-v1beta1.proto "
                 "deviceplugin-v1beta1_svc.proto 2>/dev/null",
                 stubs, NCM_SOURCE_ROOT, stubs, stubs);
        ok = system(cmd) == 0;
        loop = uv_default_loop();
        if (ncm_topo_from_synthetic("package:2 numa:1 core:8 pu:2", &t, &err) < 0 ||
            ncm_node_config_parse(cfg_text, sizeof(cfg_text) - 1, "cfg", "", &cfg, &err) < 0)
                return 1;
        no.state_dir = root;
        if (ncm_node_new(t, cfg, &no, &node, &err) < 0)
                return 1;
        snprintf(dir, sizeof(dir), "%s/device-plugins", root);
        ho.dir = dir;
        if (ncm_dp_host_new(loop, ncm_node_device_manager(node), &ho, &ev, &host, &err) < 0 ||
            ncm_dp_host_start(host, &err) < 0) {
                fprintf(stderr, "bench-deviceplugin: %s\n", err.msg);
                return 1;
        }
        if (ok) {
                small = plugin("small.sock", "example.com/gpu", "64", &small_in);
                ok = wait_allocatable("example.com/gpu", 64, 60);
        }
        ok = ok && bench_admissions(", \"example.com/gpu\": \"1\"", with_dev, waits) &&
             bench_admissions("", without_dev, waits_none);
        /* the 30,000-device plugin only now: its devices would be in every checkpoint above */
        if (ok) {
                big = plugin("big.sock", "example.com/big", "30000", &big_in);
                ok = wait_allocatable("example.com/big", 30000, 120);
        }
        /* one health flip among 30,000 devices, python plugin to applied */
        for (int i = 0; ok && i < 8; i++) {
                const char *c = i % 2 ? "health dev-00000 Healthy\n"
                                      : "health dev-00000 Unhealthy\n";
                uint64_t t0 = bench_now_ns();
                if (write(big_in, c, strlen(c)) < 0 ||
                    !wait_allocatable("example.com/big", i % 2 ? 30000 : 29999, 60)) {
                        ok = false;
                        break;
                }
                e2e[n_e2e++] = (double)(bench_now_ns() - t0);
        }
        if (snapshot_30000(&ckpt, &nockpt, &bytes) < 0)
                return 1;
        printf("A Guaranteed pod with 1 CPU and 1 device of a 64-device resource admitted through "
               "the device-plugin host (`lib/deviceplugin`) and a python3-grpcio plugin: the "
               "admission's passes, the Allocate round trip, the checkpoints written with fsync. "
               "Measured per admission (%d of each), next to the same pod without the device; "
               "the node is a synthetic 2-socket, 16-CPU machine with the single-numa-node "
               "policy.\n\n",
               ADMISSIONS);
        printf("| what | median | p99 | target |\n|---|---|---|---|\n");
        if (ok) {
                row("admission, 1 CPU + 1 device (Allocate through the plugin)", with_dev,
                    ADMISSIONS, "reported against the row below");
                row("... of which waiting for the plugin's answers (the Allocate round trip)",
                    waits, ADMISSIONS, "");
                row("admission, 1 CPU, no device", without_dev, ADMISSIONS, "reference");
        } else {
                printf("| admission through a python plugin | not measured | | python3-grpcio "
                       "missing or the plugin did not start |\n");
        }
        {
                char a[32], b[32];
                printf("| ListAndWatch: 30,000 devices (%zu kB) processed: decoded, applied, "
                       "checkpoint written | %s | | at most 50 ms |\n",
                       bytes / 1000, bench_fmt_ns(ckpt, a));
                printf("| ... the same without the checkpoint write | %s | | |\n",
                       bench_fmt_ns(nockpt, b));
        }
        if (ok && n_e2e) {
                char m[32];
                qsort(e2e, (size_t)n_e2e, sizeof(*e2e), bench_cmp_double);
                printf("| ListAndWatch end to end: one health flip among 30,000 devices, python "
                       "plugin to applied | %s | | (python builds and sends the whole list) |\n",
                       bench_fmt_ns(e2e[n_e2e / 2], m));
        }
        if (small > 0)
                kill(small, SIGKILL);
        if (big > 0)
                kill(big, SIGKILL);
        if (small > 0)
                waitpid(small, NULL, 0);
        if (big > 0)
                waitpid(big, NULL, 0);
        ncm_dp_host_close(host, NULL, NULL);
        uv_run(loop, UV_RUN_DEFAULT);
        ncm_node_free(node);
        ncm_node_config_free(cfg);
        ncm_topo_free(t);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
        (void)!system(cmd);
        return 0;
}
