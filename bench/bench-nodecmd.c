/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecmd, the node agent, as a user waits for it (issue 11's targets): start-up (discover,
 * restore, validate, listening) on this machine and on the 256-CPU dump; the Admit round trip
 * over the control socket from a C client and from python3-grpcio on a 64-CPU machine; the
 * daemon's RSS with 100 pods on a 384-CPU machine; 10,000 admissions and removals in a row and
 * what they do to the RSS. The daemon is the build's nodecmd, in its own process.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodecm/ctl.h>
#include <nodecm/rpc-uv.h>
#include "benchctl.h"
#include "benchutil.h"

typedef struct daemon_proc {
        pid_t pid;
        char root[512];
        char sock[600];
        char log[600];
        double wall_ms;    /* fork to the control socket answering */
        double startup_ms; /* as the daemon logged it */
} daemon_proc;

static char nodecmd_path[1100];

static double logged_startup(const char *log)
{
        char line[1024];
        double v = -1;
        FILE *f = fopen(log, "r");

        while (f && fgets(line, sizeof(line), f)) {
                char *p = strstr(line, "startup_ms=");
                if (p)
                        v = strtod(p + 11, NULL);
        }
        if (f)
                fclose(f);
        return v;
}

/* Start nodecmd on ROOT with CONFIG and the topology ARGS; wait until its socket answers. */
static int start(daemon_proc *d, const char *root, const char *config, const char *topo_opt,
                 const char *topo_arg)
{
        uint64_t t0;

        snprintf(d->root, sizeof(d->root), "%s", root);
        snprintf(d->sock, sizeof(d->sock), "%s/nodecm.sock", root);
        snprintf(d->log, sizeof(d->log), "%s.log", root);
        t0 = bench_now_ns();
        d->pid = fork();
        if (d->pid == 0) {
                int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                dup2(fd, 2);
                if (topo_opt)
                        execl(nodecmd_path, nodecmd_path, "--config", config, "--root-dir", root,
                              topo_opt, topo_arg, (char *)NULL);
                else
                        execl(nodecmd_path, nodecmd_path, "--config", config, "--root-dir", root,
                              (char *)NULL);
                _exit(127);
        }
        while (!bench_can_connect(d->sock)) {
                if (waitpid(d->pid, NULL, WNOHANG) == d->pid) {
                        fprintf(stderr, "bench-nodecmd: nodecmd did not start (%s)\n", d->log);
                        return -1;
                }
                usleep(200);
        }
        d->wall_ms = (double)(bench_now_ns() - t0) / 1e6;
        /* the socket answers a moment before the daemon logs that it is ready */
        for (int i = 0; i < 400 && (d->startup_ms = logged_startup(d->log)) < 0; i++)
                usleep(5000);
        return 0;
}

static int stop(daemon_proc *d)
{
        int st = -1;

        kill(d->pid, SIGTERM);
        waitpid(d->pid, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- a C client on one kept connection (benchctl) ------------------------------------------ */

static int bench_open(bench_client *c, const char *sock)
{
        ncm_error err = NCM_ERROR_INIT;

        if (bench_client_open(c, sock, NULL, &err) < 0) {
                fprintf(stderr, "bench-nodecmd: %s\n", err.msg);
                return -1;
        }
        return 0;
}

static char *pod_json(int i, int cpus)
{
        char *s = NULL;

        if (asprintf(&s,
                     "{\"metadata\": {\"name\": \"p%d\", \"uid\": \"uid-%06d\"}, \"spec\": "
                     "{\"containers\": [{\"name\": \"app\", \"resources\": {\"limits\": {\"cpu\": "
                     "\"%d\", \"memory\": \"64Mi\"}}}]}}",
                     i, i, cpus) < 0)
                return NULL;
        return s;
}

/* N Burstable pods (1Mi of memory, no CPU: any machine takes them) admitted on the node at SOCK,
 * held: what a busy node holds around the timed pod. */
static bool fill(const char *sock, int n)
{
        bench_client c;
        bool ok = bench_open(&c, sock) == 0;

        for (int i = 0; ok && i < n; i++) {
                ncm_autofree char *pod = NULL;
                ncm_ctl_request q;
                ok = asprintf(&pod,
                              "{\"metadata\": {\"name\": \"held%d\", \"uid\": "
                              "\"held-%06d\"}, \"spec\": {\"containers\": [{\"name\": "
                              "\"app\", \"resources\": {\"requests\": {\"memory\": "
                              "\"1Mi\"}}}]}}",
                              i, i) >= 0;
                q = (ncm_ctl_request){.pod = pod, .pod_len = pod ? strlen(pod) : 0};
                ok = ok && bench_client_call(&c, NCM_CTL_ADMIT, &q) >= 0;
        }
        bench_client_close(&c);
        return ok;
}

/* Admit pod I (timed) then remove it (untimed); the admission's nanoseconds, or < 0. */
static double admit_remove(bench_client *c, int i)
{
        ncm_autofree char *pod = pod_json(i, 2);
        char uid[32];
        ncm_ctl_request q = {.pod = pod, .pod_len = strlen(pod)};
        uint64_t t0 = bench_now_ns();
        double ns;

        if (bench_client_call(c, NCM_CTL_ADMIT, &q) < 0)
                return -1;
        ns = (double)(bench_now_ns() - t0);
        snprintf(uid, sizeof(uid), "uid-%06d", i);
        q = (ncm_ctl_request){.pod_uid = uid};
        if (bench_client_call(c, NCM_CTL_REMOVE_POD, &q) < 0)
                return -1;
        return ns;
}

static void row(const char *what, double *ns, int n, const char *target)
{
        char m[32], p[32];

        qsort(ns, (size_t)n, sizeof(*ns), bench_cmp_double);
        printf("| %s | %d | %s | %s | %s |\n", what, n, bench_fmt_ns(ns[n / 2], m),
               bench_fmt_ns(ns[(size_t)n * 99 / 100], p), target);
}

static bool c_round_trips(const char *sock, int n, const char *what, const char *target, int *next)
{
        bench_client c;
        double *ns = calloc((size_t)n, sizeof(double));
        bool ok = ns && bench_open(&c, sock) == 0;

        for (int i = 0; ok && i < n / 10; i++) /* warm-up */
                ok = admit_remove(&c, (*next)++) >= 0;
        for (int i = 0; ok && i < n; i++)
                ok = (ns[i] = admit_remove(&c, (*next)++)) >= 0;
        if (ok)
                row(what, ns, n, target);
        else
                printf("| %s | - | failed | - | %s |\n", what, target);
        bench_client_close(&c);
        free(ns);
        return ok;
}

/* python3-grpcio: AdmitRequest and RemovePodRequest encoded by hand (field 1 only). */
static const char py_client[] =
                "import sys, time, grpc\n"
                "def lv(b):\n"
                "    out = bytearray([0x0a])\n"
                "    n = len(b)\n"
                "    while n > 0x7f:\n"
                "        out.append((n & 0x7f) | 0x80); n >>= 7\n"
                "    out.append(n)\n"
                "    return bytes(out) + b\n"
                "target, n, base = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])\n"
                "ch = grpc.insecure_channel(target)\n"
                "admit = ch.unary_unary('/nodecm.v1.Node/Admit')\n"
                "remove = ch.unary_unary('/nodecm.v1.Node/RemovePod')\n"
                "def pod(i):\n"
                "    return ('{\"metadata\": {\"name\": \"p%d\", \"uid\": \"py-%06d\"}, \"spec\": "
                "'\n"
                "            '{\"containers\": [{\"name\": \"app\", \"resources\": {\"limits\": '\n"
                "            '{\"cpu\": \"2\", \"memory\": \"64Mi\"}}}]}}' % (i, i)).encode()\n"
                "ns = []\n"
                "for i in range(base, base + n + n // 10):\n"
                "    req = lv(pod(i))\n"
                "    t = time.perf_counter_ns()\n"
                "    admit(req)\n"
                "    dt = time.perf_counter_ns() - t\n"
                "    remove(lv(('py-%06d' % i).encode()))\n"
                "    if i >= base + n // 10:\n"
                "        ns.append(dt)\n"
                "print(' '.join(map(str, ns)))\n";

static bool py_round_trips(const char *sock, int n, const char *what, const char *target)
{
        char cmd[1024];
        double *ns = calloc((size_t)n, sizeof(double));
        FILE *p;
        int k = 0;
        bool ok;

        setenv("NCM_BENCH_PY", py_client, 1);
        snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"$NCM_BENCH_PY\" unix:%s %d 500000", sock,
                 n);
        p = popen(cmd, "r");
        while (p && k < n && fscanf(p, "%lf", &ns[k]) == 1)
                k++;
        ok = p && pclose(p) == 0 && k == n;
        if (ok)
                row(what, ns, n, target);
        else
                printf("| %s | - | not run (python3-grpcio missing or failed) | - | %s |\n", what,
                       target);
        free(ns);
        return ok;
}

/* ---- the runs ----------------------------------------------------------------------------------
 */

static int write_config(const char *path, const char *extra)
{
        FILE *f = fopen(path, "w");

        if (!f)
                return -1;
        fprintf(f,
                "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                "cpuManagerPolicy: static\nreservedSystemCPUs: \"0\"\nenforcement: none\n"
                "%s",
                extra ? extra : "");
        return fclose(f);
}

static char *extract_dump(const char *data, const char *dump, const char *into)
{
        char cmd[2048], *root = NULL;

        snprintf(cmd, sizeof(cmd), "tar -xjf '%s/topologies/%s.tar.bz2' -C '%s'", data, dump, into);
        if (system(cmd) != 0)
                return NULL;
        if (asprintf(&root, "%s/%s", into, dump) < 0)
                return NULL;
        return root;
}

/* Median start-up over 9 restarts of a node kept in ROOT (the first start initialises it and
 * admits PODS Burstable pods, held across the restarts); the RSS after the last restart. */
static void startup_row(const char *what, const char *root, const char *config,
                        const char *topo_opt, const char *topo_arg, int pods, const char *target)
{
        double wall[9], logged[9];
        daemon_proc d;
        char m[32], l[32];
        long rss = 0;

        if (start(&d, root, config, topo_opt, topo_arg) < 0 || (pods > 0 && !fill(d.sock, pods)) ||
            stop(&d) != 0) {
                printf("| %s | not run | | | %s |\n", what, target);
                return;
        }
        for (int i = 0; i < 9; i++) {
                if (start(&d, root, config, topo_opt, topo_arg) < 0) {
                        printf("| %s | not run | | | %s |\n", what, target);
                        return;
                }
                wall[i] = d.wall_ms * 1e6;
                logged[i] = d.startup_ms * 1e6;
                rss = bench_status_kb(d.pid, "VmRSS:");
                stop(&d);
        }
        qsort(wall, 9, sizeof(double), bench_cmp_double);
        qsort(logged, 9, sizeof(double), bench_cmp_double);
        printf("| %s | %s | %s | %ld kB | %s |\n", what, bench_fmt_ns(logged[4], l),
               bench_fmt_ns(wall[4], m), rss, target);
}

/* ---- issue 27: one durable write per batch (group commit) ------------------------------ */

/* Admit+remove pairs per second of CLIENTS processes, each on its own connection, PAIRS each. */
static double pairs_per_s(const char *sock, int clients, int pairs, int base)
{
        pid_t pid[8];
        uint64_t t0 = bench_now_ns();
        bool ok = true;

        for (int k = 0; k < clients; k++) {
                pid[k] = fork();
                if (pid[k] == 0) {
                        bench_client c;
                        bool good = bench_open(&c, sock) == 0;
                        for (int i = 0; good && i < pairs; i++)
                                good = admit_remove(&c, base + k * pairs + i) >= 0;
                        bench_client_close(&c);
                        _exit(good ? 0 : 1);
                }
        }
        for (int k = 0; k < clients; k++) {
                int st = 0;
                waitpid(pid[k], &st, 0);
                ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
        }
        return ok ? (double)clients * pairs / ((double)(bench_now_ns() - t0) / 1e9) : -1;
}

/* The round trip with 1,000 pods on the node, and the throughput of 1 and 4 clients, with
 * nodecmd.commit: each (every call durable alone, the kubelet's files current at its answer:
 * the daemon before issue 27) and group (the journal is the commit point, one fdatasync per
 * group of calls). */
static void group_commit_rows(const char *tmp, const char *ram, int *next)
{
        static const char *const where[] = {"tmpfs", "ext4 (/var/tmp)"};
        static const char *const modes[] = {"each", "group"};
        char path[1024], root[700], extra[256];
        daemon_proc d;

        printf("\nGroup commit (issue 27): the Admit round trip on the 64-CPU machine with 1,000 "
               "pods on the node\n(10m each, on the shared pool), a 2-CPU pod admitted (timed) "
               "and removed, one client;\nthen admit+remove pairs per second of 1 and 4 "
               "clients (one connection each). `commit: each`\nis the daemon as it was (every "
               "call fsyncs its files alone); `group` (the default) commits\nby the journal, "
               "one fdatasync shared by the calls that arrived meanwhile.\n\n");
        printf("| node on | commit | round trip median | p99 | 1 client pairs/s | 4 clients "
               "pairs/s | ratio | target |\n|---|---|---|---|---|---|---|---|\n");
        for (size_t f = 0; f < 2; f++) {
                for (size_t m = 0; m < 2; m++) {
                        int n = f == 0 ? 1000 : 300;
                        double *ns = calloc((size_t)n, sizeof(double));
                        double one = -1, four = -1;
                        char med[32], p99[32];
                        bench_client c;
                        bool ok;
                        snprintf(extra, sizeof(extra),
                                 "topologyManagerPolicy: best-effort\nnodecmd:\n  commit: %s\n",
                                 modes[m]);
                        snprintf(path, sizeof(path), "%s/kgc-%s.yaml", ram, modes[m]);
                        write_config(path, extra);
                        snprintf(root, sizeof(root), "%s/gc-%zu-%s", f == 0 ? ram : tmp, f,
                                 modes[m]);
                        if (!ns || start(&d, root, path, "--synthetic",
                                         "package:2 numa:1 core:16 pu:2") != 0) {
                                free(ns);
                                continue;
                        }
                        ok = fill(d.sock, 1000) && bench_open(&c, d.sock) == 0;
                        for (int i = 0; ok && i < n / 10; i++) /* warm-up */
                                ok = admit_remove(&c, (*next)++) >= 0;
                        for (int i = 0; ok && i < n; i++)
                                ok = (ns[i] = admit_remove(&c, (*next)++)) >= 0;
                        bench_client_close(&c);
                        if (ok) {
                                qsort(ns, (size_t)n, sizeof(*ns), bench_cmp_double);
                                one = pairs_per_s(d.sock, 1, n / 2, *next);
                                *next += n / 2;
                                four = pairs_per_s(d.sock, 4, n / 2, *next);
                                *next += 4 * (n / 2);
                        }
                        if (ok && one > 0 && four > 0)
                                printf("| %s | %s | %s | %s | %.0f | %.0f | %.2f× | %s |\n",
                                       where[f], modes[m], bench_fmt_ns(ns[n / 2], med),
                                       bench_fmt_ns(ns[(size_t)n * 99 / 100], p99), one, four,
                                       four / one,
                                       m == 0   ? "(before)"
                                       : f == 0 ? "median <= 250 µs"
                                                : "median <= 0.6 ms; 4 clients >= 3×");
                        else
                                printf("| %s | %s | failed | | | | | |\n", where[f], modes[m]);
                        stop(&d);
                        free(ns);
                }
        }
}

int main(void)
{
        const char *data = getenv("NCM_TEST_DATA") ? getenv("NCM_TEST_DATA") : "tests/data";
        char exe[1024], tmp[256], ram[256], path[1024], config[512], root[600];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        daemon_proc d;
        bench_client c;
        int next = 0;
        bool python = access("/usr/bin/python3", X_OK) == 0 &&
                      system("/usr/bin/python3 -c 'import grpc' 2>/dev/null") == 0;

        if (n < 0)
                return 1;
        exe[n] = '\0';
        /* BUILD/bench/bench-nodecmd -> BUILD/nodecmd */
        *strrchr(exe, '/') = '\0';
        *strrchr(exe, '/') = '\0';
        snprintf(nodecmd_path, sizeof(nodecmd_path), "%s/nodecmd", exe);
        if (access(nodecmd_path, X_OK) != 0) {
                printf("## nodecmd\n\nnot run: no %s\n", nodecmd_path);
                return 0;
        }
        snprintf(tmp, sizeof(tmp), "/var/tmp/ncm-bench-nodecmd-XXXXXX");
        snprintf(ram, sizeof(ram), "%s/ncm-bench-nodecmd-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(tmp) || !mkdtemp(ram))
                return 1;
        snprintf(config, sizeof(config), "%s/kubelet.yaml", ram);
        write_config(config, NULL);
        /* NCM_BENCH_NODECMD=group: only the group-commit rows (repeated runs on a busy VM) */
        if (getenv("NCM_BENCH_NODECMD") && strcmp(getenv("NCM_BENCH_NODECMD"), "group") == 0) {
                group_commit_rows(tmp, ram, &next);
                snprintf(path, sizeof(path), "rm -rf '%s' '%s'", tmp, ram);
                return system(path) == 0 ? 0 : 1;
        }

        printf("## nodecmd: start-up, Admit round trip, RSS\n\n");
        printf("The build's nodecmd in its own process (enforcement none: the rows measure the "
               "daemon, not\ncgroupfs). Start-up is from fork() to the control socket "
               "answering, a restart of a node\nkept in a directory (discover the topology, "
               "restore and validate the checkpoints, take\nthe lock, listen); the daemon's own "
               "figure (`startup_ms` in its log) leaves out exec and\nthe dynamic loader. "
               "Median of 9 restarts; the RSS after the last. *1,000 pods*: the node holds 1,000 "
               "Burstable\npods (1Mi of memory each) across the restarts (`maxPods: 2000`), "
               "restored "
               "from its files at each.\n\n");
        printf("| machine | nodecmd's startup_ms | fork to listening | RSS after | target "
               "|\n|---|---|---|---|---|\n");
        snprintf(root, sizeof(root), "%s/here", tmp);
        startup_row("this machine (sysfs)", root, config, NULL, NULL, 0, "<= 20 ms");
        {
                char cfgk[600];
                snprintf(cfgk, sizeof(cfgk), "%s/k1k.yaml", ram);
                write_config(cfgk, "maxPods: 2000\n");
                snprintf(root, sizeof(root), "%s/here1k", tmp);
                startup_row("this machine (sysfs), 1,000 pods", root, cfgk, NULL, NULL, 1000,
                            "<= 10 ms, RSS <= 8 MB (issue 27)");
        }
        {
                char *dump = extract_dump(data, "256ia64-64n2s2c", ram);
                char cfg2[600];
                snprintf(cfg2, sizeof(cfg2), "%s/k256.yaml", ram);
                /* the kubelet refuses a topology manager policy beyond 8 NUMA nodes */
                write_config(cfg2, NULL);
                snprintf(root, sizeof(root), "%s/d256", tmp);
                if (dump)
                        startup_row("256 CPUs, 64 NUMA nodes (256ia64-64n2s2c dump)", root, cfg2,
                                    "--fsroot", dump, 0, "<= 50 ms");
                else
                        printf("| 256-CPU dump | not run: cannot extract | | <= 50 ms |\n");
                free(dump);
        }

        printf("\nAdmit round trip on a 64-CPU machine (`package:2 numa:1 core:16 pu:2`, static, "
               "best-effort):\na pod with one 2-CPU container admitted, then removed (not "
               "timed), over one kept connection;\nevery admission is timed alone. The daemon "
               "makes each change durable before it answers\n(an append to its journal and "
               "one fdatasync, group commit: docs/nodecmd.md, \"Durability\"),\nso the disk's "
               "sync is part of the round trip. The rows with the node on a tmpfs measure\nthe "
               "daemon; the ext4 row what this VM's disk adds.\n\n");
        printf("| client | admissions | median | p99 | target |\n|---|---|---|---|---|\n");
        snprintf(path, sizeof(path), "%s/k64.yaml", ram);
        write_config(path, "topologyManagerPolicy: best-effort\n");
        snprintf(root, sizeof(root), "%s/n64", ram);
        if (start(&d, root, path, "--synthetic", "package:2 numa:1 core:16 pu:2") == 0) {
                c_round_trips(d.sock, 2000, "C (lib/rpc), node on tmpfs", "median <= 300 µs",
                              &next);
                if (python)
                        py_round_trips(d.sock, 1000, "python3-grpcio 1.51, node on tmpfs",
                                       "median <= 300 µs");
                else
                        printf("| python3-grpcio | - | not installed | - | median <= 300 µs |\n");
                stop(&d);
        }
        snprintf(root, sizeof(root), "%s/n64", tmp);
        if (start(&d, root, path, "--synthetic", "package:2 numa:1 core:16 pu:2") == 0) {
                c_round_trips(d.sock, 200, "C (lib/rpc), node on ext4 (/var/tmp)", "(disk)", &next);
                stop(&d);
        }
        /* the same with 1,000 pods held (issue 27: the node's size must not show) */
        snprintf(path, sizeof(path), "%s/k64k.yaml", ram);
        write_config(path, "topologyManagerPolicy: best-effort\nmaxPods: 2000\n");
        snprintf(root, sizeof(root), "%s/n64k", ram);
        if (start(&d, root, path, "--synthetic", "package:2 numa:1 core:16 pu:2") == 0) {
                if (fill(d.sock, 1000))
                        c_round_trips(d.sock, 2000, "C (lib/rpc), node on tmpfs, 1,000 pods held",
                                      "median <= 250 µs (issue 27)", &next);
                stop(&d);
        }
        snprintf(root, sizeof(root), "%s/n64k", tmp);
        if (start(&d, root, path, "--synthetic", "package:2 numa:1 core:16 pu:2") == 0) {
                if (fill(d.sock, 1000))
                        c_round_trips(d.sock, 200, "C (lib/rpc), node on ext4, 1,000 pods held",
                                      "median <= 0.6 ms (issue 27)", &next);
                stop(&d);
        }

        group_commit_rows(tmp, ram, &next);

        printf("\nRSS of the daemon (VmRSS, kB) on a 384-CPU machine (`package:2 numa:2 core:48 "
               "pu:2`),\nand across 10,000 admissions and removals on the 64-CPU one (a growth "
               "would be a leak):\n\n");
        printf("| what | kB | target |\n|---|---|---|\n");
        snprintf(root, sizeof(root), "%s/n384", ram);
        snprintf(path, sizeof(path), "%s/k384.yaml", ram);
        write_config(path, "topologyManagerPolicy: best-effort\n");
        if (start(&d, root, path, "--synthetic", "package:2 numa:2 core:48 pu:2") == 0) {
                long started = bench_status_kb(d.pid, "VmRSS:"), with, peak;
                bool ok = bench_open(&c, d.sock) == 0;
                for (int i = 0; ok && i < 100; i++) {
                        ncm_autofree char *pod = pod_json(900000 + i, 1 + (i % 3));
                        ncm_ctl_request q = {.pod = pod, .pod_len = strlen(pod)};
                        ok = bench_client_call(&c, NCM_CTL_ADMIT, &q) >= 0;
                }
                bench_client_close(&c);
                with = bench_status_kb(d.pid, "VmRSS:");
                peak = bench_status_kb(d.pid, "VmHWM:");
                printf("| 384 CPUs: started, listening | %ld | |\n", started);
                printf("| 384 CPUs: with 100 pods admitted%s | %ld (peak %ld) | <= 8 MB (8192 kB) "
                       "|\n",
                       ok ? "" : " (some failed)", with, peak);
                stop(&d);
        }
        snprintf(root, sizeof(root), "%s/n64b", ram);
        snprintf(path, sizeof(path), "%s/k64.yaml", ram);
        if (start(&d, root, path, "--synthetic", "package:2 numa:1 core:16 pu:2") == 0) {
                long after1k = 0, after10k;
                bool ok = bench_open(&c, d.sock) == 0;
                for (int i = 0; ok && i < 10000; i++) {
                        ok = admit_remove(&c, next++) >= 0;
                        if (i == 999)
                                after1k = bench_status_kb(d.pid, "VmRSS:");
                }
                bench_client_close(&c);
                after10k = bench_status_kb(d.pid, "VmRSS:");
                printf("| 64 CPUs: after 1,000 admissions and removals | %ld | |\n", after1k);
                printf("| 64 CPUs: after 10,000%s | %ld (%+ld) | no growth |\n",
                       ok ? "" : " (some failed)", after10k, after10k - after1k);
                stop(&d);
        }
        snprintf(path, sizeof(path), "rm -rf '%s' '%s'", tmp, ram);
        if (system(path) != 0)
                fprintf(stderr, "bench-nodecmd: could not remove %s\n", tmp);
        return 0;
}
