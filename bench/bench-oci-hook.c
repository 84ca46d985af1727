/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OCI hook: what a runtime waits for at createRuntime and poststop, a whole `nodecm
 * oci-hook` process (start, the configuration and the machine read, the lock, the checkpoints
 * restored, the admission, three files written and synced, the cpusets written) from fork to
 * exit, with the state on its standard input. The node directory is on /tmp's filesystem (a
 * disk, as /var/lib is); cgroups are a directory laid out as a v1 cpuset hierarchy, and, when
 * run as root on a v1 host, the real one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchutil.h"

#define RUNS 31

static char *nodecm;

static void put_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
                fprintf(stderr, "bench-oci-hook: write %s: %s\n", path, strerror(errno));
                exit(1);
        }
}

static void mkdir_p(const char *path)
{
        char buf[PATH_MAX];
        snprintf(buf, sizeof(buf), "%s", path);
        for (char *p = buf + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        (void)mkdir(buf, 0755);
                        *p = '/';
                }
        (void)mkdir(buf, 0755);
}

static void remove_tree(const char *dir)
{
        pid_t pid = fork();
        int status;
        if (pid == 0) {
                execlp("rm", "rm", "-rf", dir, (char *)NULL);
                _exit(127);
        }
        if (pid > 0)
                (void)waitpid(pid, &status, 0);
}

typedef struct env {
        char tmp[64];
        char cg[128];   /* the cgroup mount root given to the hook */
        char hier[128]; /* its cpuset hierarchy */
        bool fake;      /* a directory, not the kernel's */
        char parent[64];
        const char *source_opt, *source_arg;
        char machine[128]; /* --machine-root (64 interrupts, irqbalance's file), or "" */
        int next_pid;
} env;

/* Run the hook with STATE on its standard input; returns the wall time in ns, 0 on failure. */
static uint64_t run_hook(const env *e, const char *state)
{
        char root[128], cfg[128], proc[128];
        char *argv[24];
        int n = 0, fds[2], status;
        uint64_t t0, t1;
        pid_t pid;

        snprintf(root, sizeof(root), "%s/node", e->tmp);
        snprintf(cfg, sizeof(cfg), "%s/kubelet.yaml", e->tmp);
        snprintf(proc, sizeof(proc), "%s/proc-root", e->tmp);
        argv[n++] = nodecm;
        argv[n++] = "oci-hook";
        argv[n++] = "--root-dir";
        argv[n++] = root;
        argv[n++] = "--config";
        argv[n++] = cfg;
        argv[n++] = "--proc";
        argv[n++] = proc;
        if (e->fake) {
                argv[n++] = "--cgroup-mount";
                argv[n++] = (char *)e->cg;
                argv[n++] = "--cgroup-version";
                argv[n++] = "1";
        }
        if (e->machine[0]) {
                argv[n++] = "--machine-root";
                argv[n++] = (char *)e->machine;
        }
        if (e->source_opt) {
                argv[n++] = (char *)e->source_opt;
                argv[n++] = (char *)e->source_arg;
        }
        argv[n] = NULL;
        if (pipe(fds) < 0)
                return 0;
        t0 = bench_now_ns();
        pid = fork();
        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);
                dup2(fds[0], 0);
                dup2(null, 1);
                close(fds[0]);
                close(fds[1]);
                execv(nodecm, argv);
                _exit(127);
        }
        close(fds[0]);
        (void)!write(fds[1], state, strlen(state));
        close(fds[1]);
        if (pid < 0 || waitpid(pid, &status, 0) < 0)
                return 0;
        t1 = bench_now_ns();
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return 0;
        return t1 - t0;
}

/* A container: its cgroup (cpus and mems like its parent's), its process's /proc/PID/cgroup,
 * its bundle; returns the create state. */
static char *container(env *e, const char *id, const char *annotations, const char *resources)
{
        char p[1024], text[4096], *state;
        int pid = e->next_pid++;

        snprintf(p, sizeof(p), "%s/%s/%s", e->hier, e->parent, id);
        mkdir_p(p);
        if (e->fake) {
                snprintf(p, sizeof(p), "%s/%s/%s/cpuset.cpus", e->hier, e->parent, id);
                put_file(p, "0\n");
                snprintf(p, sizeof(p), "%s/%s/%s/cpuset.mems", e->hier, e->parent, id);
                put_file(p, "0\n");
                snprintf(p, sizeof(p), "%s/%s/%s/cpuset.sched_load_balance", e->hier, e->parent,
                         id);
                put_file(p, "1\n");
        } else {
                char v[256];
                FILE *f;
                snprintf(p, sizeof(p), "%s/%s/cpuset.cpus", e->hier, e->parent);
                f = fopen(p, "r");
                if (!f || !fgets(v, sizeof(v), f))
                        exit(1);
                fclose(f);
                snprintf(p, sizeof(p), "%s/%s/%s/cpuset.cpus", e->hier, e->parent, id);
                put_file(p, v);
                snprintf(p, sizeof(p), "%s/%s/%s/cpuset.mems", e->hier, e->parent, id);
                put_file(p, "0\n");
        }
        snprintf(p, sizeof(p), "%s/proc-root/proc/%d", e->tmp, pid);
        mkdir_p(p);
        snprintf(p, sizeof(p), "%s/proc-root/proc/%d/cgroup", e->tmp, pid);
        snprintf(text, sizeof(text), "3:cpuset:/%s/%s\n", e->parent, id);
        put_file(p, text);
        snprintf(p, sizeof(p), "%s/bundles/%s", e->tmp, id);
        mkdir_p(p);
        snprintf(p, sizeof(p), "%s/bundles/%s/config.json", e->tmp, id);
        snprintf(text, sizeof(text), "{\"annotations\": {%s}, \"linux\": {\"resources\": %s}}",
                 annotations, resources);
        put_file(p, text);
        if (asprintf(&state,
                     "{\"ociVersion\": \"1.0.2\", \"id\": \"%s\", \"status\": \"creating\", "
                     "\"pid\": %d, \"bundle\": \"%s/bundles/%s\", \"annotations\": {%s}}",
                     id, pid, e->tmp, id, annotations) < 0)
                exit(1);
        return state;
}

static char *stopped(const env *e, const char *id)
{
        char *s;
        if (asprintf(&s,
                     "{\"ociVersion\": \"1.0.2\", \"id\": \"%s\", \"status\": \"stopped\", "
                     "\"bundle\": \"%s/bundles/%s\"}",
                     id, e->tmp, id) < 0)
                exit(1);
        return s;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

#define GUARANTEED                                                                                 \
        "{\"cpu\": {\"shares\": 1024, \"quota\": 100000, \"period\": 100000}, \"memory\": "        \
        "{\"limit\": 268435456}}"

/* Time create and poststop of a Guaranteed container RUNS times; print two rows. */
static void row_pair(env *e, const char *what, const char *machine)
{
        char *cs = container(e, "bench-g", "\"nodecm.io/pod-uid\": \"bench-g\"", GUARANTEED);
        char *ps = stopped(e, "bench-g");
        uint64_t c[RUNS], p[RUNS];
        char b1[32], b2[32], b3[32], b4[32];
        int bad = 0;

        for (int i = 0; i < RUNS; i++) {
                c[i] = run_hook(e, cs);
                p[i] = run_hook(e, ps);
                bad += c[i] == 0 || p[i] == 0;
        }
        free(cs);
        free(ps);
        if (bad) {
                printf("| create, %s | %s | failed | |\n", what, machine);
                return;
        }
        qsort(c, RUNS, sizeof(*c), cmp_u64);
        qsort(p, RUNS, sizeof(*p), cmp_u64);
        printf("| createRuntime, %s | %s | %s | %s |\n", what, machine,
               bench_fmt_ns((double)c[RUNS / 2], b1), bench_fmt_ns((double)c[RUNS * 9 / 10], b2));
        printf("| poststop, %s | %s | %s | %s |\n", what, machine,
               bench_fmt_ns((double)p[RUNS / 2], b3), bench_fmt_ns((double)p[RUNS * 9 / 10], b4));
}

/* Time createRuntime of a container that is not nodecm's (ANNOTATIONS) RUNS times. */
static void row_stranger(env *e, const char *id, const char *annotations, const char *what,
                         const char *machine)
{
        char *s = container(e, id, annotations, "{}");
        uint64_t t[RUNS];
        char b1[32], b2[32];
        int bad = 0;
        for (int i = 0; i < RUNS; i++) {
                t[i] = run_hook(e, s);
                bad += t[i] == 0;
        }
        free(s);
        if (bad) {
                printf("| createRuntime, %s | %s | failed | |\n", what, machine);
                return;
        }
        qsort(t, RUNS, sizeof(*t), cmp_u64);
        printf("| createRuntime, %s | %s | %s | %s |\n", what, machine,
               bench_fmt_ns((double)t[RUNS / 2], b1), bench_fmt_ns((double)t[RUNS * 9 / 10], b2));
}

/*
 * A machine root for CRI-O's irq-load-balancing: 64 interrupts on every CPU, irqbalance's
 * file. On tmpfs (/dev/shm) when there is one, as /proc/irq is in memory: on a disk each
 * interrupt's file would cost a truncation and a journal entry that /proc/irq does not.
 */
static bool machine_init(env *e)
{
        char p[256];
        snprintf(e->machine, sizeof(e->machine), "%s/nodecm-bench-machine-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(e->machine)) {
                e->machine[0] = '\0';
                return false;
        }
        snprintf(p, sizeof(p), "%s/etc/default", e->machine);
        mkdir_p(p);
        snprintf(p, sizeof(p), "%s/etc/default/irqbalance", e->machine);
        put_file(p, "IRQBALANCE_ONESHOT=0\n");
        snprintf(p, sizeof(p), "%s/proc/irq", e->machine);
        mkdir_p(p);
        snprintf(p, sizeof(p), "%s/proc/irq/default_smp_affinity", e->machine);
        put_file(p, "ff\n");
        for (int i = 0; i < 64; i++) {
                snprintf(p, sizeof(p), "%s/proc/irq/%d", e->machine, i);
                mkdir_p(p);
                snprintf(p, sizeof(p), "%s/proc/irq/%d/smp_affinity", e->machine, i);
                put_file(p, "ff\n");
        }
        return true;
}

static bool env_init(env *e, bool fake)
{
        memset(e, 0, sizeof(*e));
        snprintf(e->tmp, sizeof(e->tmp), "/tmp/nodecm-bench-oci-XXXXXX");
        if (!mkdtemp(e->tmp))
                return false;
        e->fake = fake;
        e->next_pid = 1000;
        snprintf(e->parent, sizeof(e->parent), "nodecm-bench-%d", (int)getpid());
        if (fake) {
                char p[1024];
                snprintf(e->cg, sizeof(e->cg), "%s/cgroup", e->tmp);
                snprintf(e->hier, sizeof(e->hier), "%s/cgroup/cpuset", e->tmp);
                snprintf(p, sizeof(p), "%s/%s", e->hier, e->parent);
                mkdir_p(p);
                snprintf(p, sizeof(p), "%s/%s/cpuset.mems", e->hier, e->parent);
                put_file(p, "0\n");
        } else {
                char p[1024];
                snprintf(e->hier, sizeof(e->hier), "/sys/fs/cgroup/cpuset");
                snprintf(p, sizeof(p), "%s/%s", e->hier, e->parent);
                if (mkdir(p, 0755) < 0)
                        return false;
                {
                        char cmd[4096];
                        snprintf(cmd, sizeof(cmd),
                                 "cat %s/cpuset.cpus > %s/cpuset.cpus && cat %s/cpuset.mems > "
                                 "%s/cpuset.mems",
                                 e->hier, p, e->hier, p);
                        if (system(cmd) != 0)
                                return false;
                }
        }
        {
                char p[256];
                snprintf(p, sizeof(p), "%s/kubelet.yaml", e->tmp);
                /* failCgroupV1: false, or a kubelet from 1.35 on refuses this v1 host */
                put_file(p, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: "
                            "KubeletConfiguration\ncpuManagerPolicy: static\n"
                            "reservedSystemCPUs: \"0\"\nfailCgroupV1: false\n");
        }
        return true;
}

static void env_done(env *e)
{
        if (!e->fake) {
                char cmd[1024];
                snprintf(cmd, sizeof(cmd),
                         "find %s/%s -depth -type d -exec rmdir {} \\; 2>/dev/null", e->hier,
                         e->parent);
                (void)!system(cmd);
        }
        remove_tree(e->tmp);
        if (e->machine[0])
                remove_tree(e->machine);
}

int main(void)
{
        env e;

        nodecm = bench_build_program("nodecm");
        printf("## OCI hook (`nodecm oci-hook`)\n\n"
               "What a runtime (runc, crun, podman) waits for at createRuntime and poststop: a "
               "whole\n`nodecm oci-hook` process from fork to exit, the state on its standard "
               "input (start, the\nconfiguration and this machine's topology read, the lock, the "
               "checkpoints restored, the\nadmission or release, three files written and "
               "fsynced, the cpusets written). The node\ndirectory is on /tmp's filesystem (a "
               "disk, as /var/lib/nodecm is). %d runs each.\nTarget (issue 13): at most 15 ms.\n\n",
               RUNS);
        if (!nodecm) {
                printf("Not run: no nodecm binary beside the bench.\n");
                return 0;
        }
        printf("| run | cgroups | median | p90 |\n|---|---|---|---|\n");
        if (env_init(&e, true)) {
                row_pair(&e, "Guaranteed (own CPU; the pool moves)", "directory tree");
                for (int i = 0; i < 50; i++) {
                        char id[32], *s;
                        snprintf(id, sizeof(id), "shared-%d", i);
                        s = container(&e, id, "\"nodecm.io/managed\": \"true\"", "{}");
                        (void)run_hook(&e, s);
                        free(s);
                }
                row_pair(&e, "Guaranteed, 50 shared containers follow the pool", "directory tree");
                row_stranger(&e, "bench-u", "\"other\": \"x\"",
                             "a container that is not nodecm's, confined to the shared pool",
                             "directory tree");
                row_stranger(&e, "bench-o", "\"nodecm.io/managed\": \"false\"",
                             "a container that opts out (nodecm.io/managed: false)",
                             "directory tree");
                env_done(&e);
        }
        if (env_init(&e, true)) {
                char *cs, *ps;
                uint64_t c[RUNS], p[RUNS];
                char b[4][32];
                int bad = !machine_init(&e);
                cs = container(&e, "bench-k",
                               "\"nodecm.io/pod-uid\": \"bench-k\", "
                               "\"cpu-load-balancing.crio.io\": \"disable\", "
                               "\"irq-load-balancing.crio.io\": \"disable\"",
                               GUARANTEED);
                ps = stopped(&e, "bench-k");
                for (int i = 0; i < RUNS; i++) {
                        c[i] = run_hook(&e, cs);
                        p[i] = run_hook(&e, ps);
                        bad += c[i] == 0 || p[i] == 0;
                }
                free(cs);
                free(ps);
                qsort(c, RUNS, sizeof(*c), cmp_u64);
                qsort(p, RUNS, sizeof(*p), cmp_u64);
                if (bad)
                        printf("| CRI-O's knobs | directory tree | failed | |\n");
                else
                        printf("| createRuntime, Guaranteed with cpu- and irq-load-balancing "
                               "disabled (64 interrupts) | directory tree | %s | %s |\n"
                               "| poststop, the same (the knobs put back) | directory tree | %s "
                               "| %s |\n",
                               bench_fmt_ns((double)c[RUNS / 2], b[0]),
                               bench_fmt_ns((double)c[RUNS * 9 / 10], b[1]),
                               bench_fmt_ns((double)p[RUNS / 2], b[2]),
                               bench_fmt_ns((double)p[RUNS * 9 / 10], b[3]));
                env_done(&e);
        }
        if (geteuid() == 0 && access("/sys/fs/cgroup/cpuset/cpuset.cpus", W_OK) == 0 &&
            env_init(&e, false)) {
                row_pair(&e, "Guaranteed (own CPU; the pool moves)", "this machine's v1 cpuset");
                env_done(&e);
        }
        {
                /* the fsyncs make every row sensitive to what else uses the disk */
                FILE *la = fopen("/proc/loadavg", "r");
                double l1 = -1;
                if (la && fscanf(la, "%lf", &l1) == 1)
                        printf("\nLoad average (1 min) at the end of the run: %.2f on %ld CPUs.\n",
                               l1, sysconf(_SC_NPROCESSORS_ONLN));
                if (la)
                        fclose(la);
        }
        printf("\nThe time is mostly the process itself: starting a program linked with its "
               "shared\nlibraries, reading the KubeletConfiguration and sysfs, and the fsyncs of "
               "cpu_manager_state,\nnodecm_pods and nodecm_oci_containers; each shared container "
               "that follows the pool costs\none read and one write of its cpuset.cpus. A "
               "container that is not nodecm's is confined\n(the lock, the node restored, its "
               "cpuset written, nodecm_oci_confined fsynced) unless it\nopts out; CRI-O's knobs "
               "add nodecm_isolation (fsynced) and a read and a write\nof each interrupt's file "
               "(here on tmpfs).\n");
        free(nodecm);
        return 0;
}
