/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Topology: discovery (this machine and the 256-CPU 256ia64-64n2s2c dump, extracted from
 * tests/data to a temporary directory) with the kubelet's rules and with nodecm's, the other
 * sources, and the per-element queries the CPU allocator runs in its inner loops on a
 * 1024-CPU machine. A second section runs whole processes on the same dumps: `nodecm
 * topology --fsroot DIR` against hwloc's `lstopo-no-graphics --input DIR` (Debian hwloc-nox),
 * both printing their tree to /dev/null: what a user waits for.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "benchutil.h"

static void row(const char *what, const char *machine, double ns)
{
        char buf[32];
        printf("| %s | %s | %s |\n", what, machine, bench_fmt_ns(ns, buf));
}

/* --- discovery --- */

typedef struct discover_arg {
        int rootfd;
        ncm_topo_rules rules;
} discover_arg;

static void do_discover_pci(void *p)
{
        discover_arg *a = p;
        ncm_pci *pci = NULL;
        if (ncm_pci_discover_sysfs(a->rootfd, &pci, NULL) < 0)
                abort();
        ncm_pci_free(pci);
}

static void do_discover(void *p)
{
        discover_arg *a = p;
        ncm_topo *t = NULL;
        if (ncm_topo_discover_sysfs_rules(a->rootfd, a->rules, &t, NULL) < 0)
                abort();
        ncm_topo_free(t);
}

/* tests/data: $NCM_TEST_DATA, ./tests/data (run-bench.sh runs from the top), or the source
 * tree two levels above the executable (BUILD/bench/bench-topology). */
static char *find_data(void)
{
        const char *env = getenv("NCM_TEST_DATA");
        char exe[PATH_MAX], *p, *cand;
        ssize_t n;
        if (env && access(env, F_OK) == 0)
                return strdup(env);
        if (access("tests/data/topologies", F_OK) == 0)
                return strdup("tests/data");
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0)
                return NULL;
        exe[n] = '\0';
        for (int up = 0; up < 3 && (p = strrchr(exe, '/')); up++)
                *p = '\0';
        if (asprintf(&cand, "%s/tests/data", exe) < 0)
                return NULL;
        if (access(cand, F_OK) == 0)
                return cand;
        free(cand);
        return NULL;
}

/* Extract DUMP into a new temporary directory; returns the root (DIR/DUMP). */
static char *extract(const char *data, const char *dump, char *tmp, size_t size)
{
        char tarball[PATH_MAX], *root;
        pid_t pid;
        int status;
        snprintf(tmp, size, "%s",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm/nodecm-bench-XXXXXX"
                                               : "/tmp/nodecm-bench-XXXXXX");
        if (!mkdtemp(tmp))
                return NULL;
        snprintf(tarball, sizeof(tarball), "%s/topologies/%s.tar.bz2", data, dump);
        pid = fork();
        if (pid == 0) {
                execlp("tar", "tar", "-xjf", tarball, "-C", tmp, (char *)NULL);
                _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
                return NULL;
        if (asprintf(&root, "%s/%s", tmp, dump) < 0)
                return NULL;
        return root;
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

/* --- whole processes --- */

#define ROUNDS 40 /* rounds per row: each runs nodecm (before, when asked) and lstopo once */
#define BLOCKS 5  /* the ratio is also taken per block of ROUNDS / BLOCKS rounds: its spread */

/* ARGV run once with its output to /dev/null: wall and CPU (user + system) nanoseconds.
 * false when it could not run or did not exit 0. */
static bool run_once(char *const *argv, double *wall, double *cpu)
{
        struct rusage ru;
        int status;
        uint64_t t0 = bench_now_ns();
        pid_t pid = fork();

        if (pid == 0) {
                int fd = open("/dev/null", O_WRONLY);
                if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
                        _exit(126);
                execvp(argv[0], argv);
                _exit(127);
        }
        if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
                return false;
        *wall = (double)(bench_now_ns() - t0);
        *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static double median_of(const double *v, size_t n)
{
        double tmp[ROUNDS];
        memcpy(tmp, v, n * sizeof(*v));
        qsort(tmp, n, sizeof(*tmp), bench_cmp_double);
        return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* One program's runs in a row: wall and CPU time of each round. */
typedef struct runs {
        char *const *argv;
        double wall[ROUNDS], cpu[ROUNDS];
} runs;

/* "| nodecm | lstopo | ratio | ratio's spread over the blocks | CPU time ratio |" of N against L */
static void print_ratio(const char *machine, const runs *n, const runs *l)
{
        char b1[32], b2[32];
        double lo = 0, hi = 0;

        for (int k = 0; k < BLOCKS; k++) {
                size_t per = ROUNDS / BLOCKS;
                double r = median_of(l->wall + k * per, per) / median_of(n->wall + k * per, per);
                lo = k == 0 || r < lo ? r : lo;
                hi = k == 0 || r > hi ? r : hi;
        }
        printf("| %s | %s | %s | %.1fx | %.1fx to %.1fx | %.1fx |\n", machine,
               bench_fmt_ns(median_of(n->wall, ROUNDS), b1),
               bench_fmt_ns(median_of(l->wall, ROUNDS), b2),
               median_of(l->wall, ROUNDS) / median_of(n->wall, ROUNDS), lo, hi,
               median_of(l->cpu, ROUNDS) / median_of(n->cpu, ROUNDS));
}

/*
 * One row: nodecm and lstopo on ROOT (NULL: this machine), run in turns (which goes first
 * alternates) so that both meet the same load; BEFORE (NULL: none), another nodecm build, takes
 * its turn too and gets a row of its own. Both read the machine's PCI devices too (nodecm's
 * tree lists them, lstopo's shows them); NO_PCI leaves them out of both (--no-pci, --no-io).
 */
static void process_row(const char *nodecm, const char *before, const char *root,
                        const char *machine, bool no_pci)
{
        char *nargv[] = {(char *)nodecm,
                         "topology",
                         "--fsroot",
                         (char *)(root ? root : "/"),
                         no_pci ? "--no-pci" : NULL,
                         NULL};
        char *bargv[NCM_ELEMENTSOF(nargv)];
        char *largv[] = {"lstopo-no-graphics", "--input", (char *)root, no_pci ? "--no-io" : NULL,
                         NULL};
        char *largv_here[] = {"lstopo-no-graphics", no_pci ? "--no-io" : NULL, NULL};
        static runs n, b, l;
        runs *order[3];
        size_t nprog = before ? 3 : 2;
        double w, c;

        memcpy(bargv, nargv, sizeof(nargv));
        bargv[0] = (char *)before;
        n.argv = nargv;
        b.argv = bargv;
        l.argv = root ? largv : largv_here;
        if (!run_once(l.argv, &w, &c)) {
                printf("| %s | not run: lstopo-no-graphics failed or is missing (Debian "
                       "hwloc-nox) | | | | |\n",
                       machine);
                return;
        }
        for (int i = 0; i < ROUNDS; i++) {
                order[0] = i % 2 ? &l : &n;
                order[1] = i % 2 ? &n : &l;
                order[2] = &b;
                for (size_t k = 0; k < nprog; k++)
                        if (!run_once(order[k]->argv, &order[k]->wall[i], &order[k]->cpu[i])) {
                                printf("| %s | not run: %s failed | | | | |\n", machine,
                                       order[k] == &l ? "lstopo" : order[k]->argv[0]);
                                return;
                        }
        }
        print_ratio(machine, &n, &l);
        if (before) {
                char m[200];
                snprintf(m, sizeof(m), "%s, before", machine);
                print_ratio(m, &b, &l);
        }
}

static const struct {
        const char *dump, *machine;
        bool no_pci; /* also without PCI devices (the dump has some) */
} process_dumps[] = {
                {"256ia64-64n2s2c", "256ia64-64n2s2c (256 CPUs, 64 NUMA nodes)", false},
                {"fakepci-256", "fakepci-256 (the same, 208 PCI functions)", true},
                {"128ia64-17n4s2c", "128ia64-17n4s2c (128 CPUs, 17 NUMA nodes)", false},
                {"fakecpuid1f-64intel64-2p4d2n2c2t", "fakecpuid1f (64 CPUs, 16 nodes, L3 ids)",
                 false},
                {"nvidiagpunumanodes", "nvidiagpunumanodes (32 CPUs, 8 nodes)", true},
};

/* The 1-minute load average, as /proc/loadavg says; -1 when unknown. */
static double load_average(void)
{
        double v = -1;
        FILE *f = fopen("/proc/loadavg", "r");
        if (f) {
                if (fscanf(f, "%lf", &v) != 1)
                        v = -1;
                fclose(f);
        }
        return v;
}

static void processes(const char *data)
{
        char *nodecm = bench_build_program("nodecm");
        const char *before = getenv("NCM_BENCH_NODECM_BEFORE");
        char version[64] = "not installed";
        double load0 = load_average();
        FILE *v = popen("lstopo-no-graphics --version 2>/dev/null", "r");
        if (v) {
                if (fgets(version, sizeof(version), v))
                        version[strcspn(version, "\n")] = '\0';
                pclose(v);
        }
        if (before && access(before, X_OK) != 0)
                before = NULL;

        printf("## Topology discovery against hwloc (whole processes)\n\n"
               "What a user waits for: `nodecm topology --fsroot DIR` (the kubelet's rules) "
               "against\n`lstopo-no-graphics --input DIR` (%s, Debian hwloc-nox), each "
               "a new process\nprinting its tree to /dev/null, on the same extracted dumps "
               "(tmpfs), in turns: %d rounds\nper row, each running both (which goes first "
               "alternates), so that both meet the same load.\nTimes are the medians of the "
               "rounds' wall times; the spread is the ratio in each fifth of the\nrounds, and "
               "the last column the ratio of their CPU times (user + system), which the load\n"
               "moves less. Both list the PCI devices (but on the rows that say not). Targets: "
               "nodecm at\nleast 5x faster on the 256-CPU dump (issue 14), and with PCI devices "
               "on it (issue 24:\nfakepci-256, the dump with 16 PCI roots grafted on).%s\n\n",
               version, ROUNDS,
               before ? "\nRows marked \"before\" ran another build of nodecm in the same "
                        "rounds (NCM_BENCH_NODECM_BEFORE)."
                      : "");
        printf("| machine | nodecm | lstopo | lstopo / nodecm | spread | CPU time |\n"
               "|---|---|---|---|---|---|\n");
        if (!nodecm) {
                printf("| all | not run: no nodecm binary beside bench/ | | | | |\n");
                return;
        }
        process_row(nodecm, before, NULL, "this machine (no --input)", false);
        for (size_t i = 0; data && i < sizeof(process_dumps) / sizeof(process_dumps[0]); i++) {
                char tmp[PATH_MAX];
                char *root = extract(data, process_dumps[i].dump, tmp, sizeof(tmp));
                char *inner = NULL;
                if (root) {
                        /* some tarballs hold the machine one level down */
                        const char *at = root;
                        if (asprintf(&inner, "%s/fsroot", root) >= 0 && access(inner, F_OK) == 0)
                                at = inner;
                        process_row(nodecm, before, at, process_dumps[i].machine, false);
                        if (process_dumps[i].no_pci) {
                                char m[160];
                                snprintf(m, sizeof(m), "%s, no PCI (--no-pci, --no-io)",
                                         process_dumps[i].machine);
                                process_row(nodecm, before, at, m, true);
                        }
                } else {
                        printf("| %s | not run: cannot extract | | | | |\n",
                               process_dumps[i].machine);
                }
                free(inner);
                remove_tree(tmp);
                free(root);
        }
        free(nodecm);
        printf("\nLoad average (1 minute) at the start of these rows: %.2f, at their end: %.2f.\n",
               load0, load_average());
        printf("\nnodecm reads what cadvisor reads and nothing else (docs/topology.md, \"What is "
               "opened\"):\non the 256-CPU dump 835 opens; they, their reads and closes are "
               "most of its time, each\nopen walking from a directory held open (`cpu`, "
               "`node`, `nodeN`, `/sys/devices`) rather\nthan from the root, and the rest is "
               "starting a process that maps libc, libm and hwloc's\nlibraries (the others are "
               "linked in: `-Dstatic_deps`). Where cadvisor reads every cache of\neach core "
               "(`fakecpuid1f`: five files per cache), so does nodecm, and the gap to lstopo\n"
               "narrows.\n\nPCI devices narrow it the same way: per function nodecm reads "
               "what lstopo reads (its\nlink, and uevent, numa_node and local_cpus: ten system "
               "calls), at about half of lstopo's\ncost, so with 208 functions the ratio falls "
               "toward that. Those system calls alone, made\nby a program that does nothing "
               "else, take about a fifth of lstopo's run on fakepci-256:\nthe 5x target for "
               "that row is out of reach of any reader of those files\n(docs/topology.md, "
               "\"PCI devices\").\n");
}

/* --- other sources --- */

static void do_synthetic(void *p)
{
        ncm_topo *t = NULL;
        if (ncm_topo_from_synthetic(p, &t, NULL) < 0)
                abort();
        ncm_topo_free(t);
}

typedef struct text_arg {
        const char *text;
        size_t len;
} text_arg;

static void do_parse_json(void *p)
{
        text_arg *a = p;
        ncm_topo *t = NULL;
        if (ncm_topo_parse_json(a->text, a->len, "bench", &t, NULL) < 0)
                abort();
        ncm_topo_free(t);
}

static void do_format_json(void *p)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_topo_format_json(p, &b);
        ncm_buf_done(&b);
}

typedef struct table_arg {
        const ncm_cpu_info *cpus;
        size_t n;
        const int *ids;
        size_t nn;
        const uint32_t *dist;
} table_arg;

static void do_new(void *p)
{
        table_arg *a = p;
        ncm_topo *t = NULL;
        if (ncm_topo_new(a->cpus, a->n, a->ids, a->nn, a->dist, &t, NULL) < 0)
                abort();
        ncm_topo_free(t);
}

/* --- queries --- */

typedef struct query_arg {
        const ncm_topo *t;
        ncm_cpuset *ids; /* CPU or core ids */
        ncm_cpuset *out;
        int kind;
        int64_t list[1024]; /* element ids for the element queries, or their output */
        size_t n;
} query_arg;

static volatile int sink;

static void do_query(void *p)
{
        query_arg *a = p;
        switch (a->kind) {
        case 0:
                ncm_topo_cpus_of_ids(a->t, NCM_TOPO_NUMA, a->list, a->n, a->out);
                break;
        case 1:
                ncm_topo_cpus_of_ids(a->t, NCM_TOPO_SOCKET, a->list, a->n, a->out);
                break;
        case 2:
                ncm_topo_cpus_in_cores(a->t, a->ids, a->out);
                break;
        case 3:
                ncm_topo_cpus_of_ids(a->t, NCM_TOPO_UNCORE, a->list, a->n, a->out);
                break;
        case 4:
                sink = (int)ncm_topo_ids_of_cpus(a->t, NCM_TOPO_NUMA, a->ids, a->list);
                break;
        case 5:
                ncm_topo_cores_of_cpus(a->t, a->ids, a->out);
                break;
        case 6: {
                int s = 0;
                for (int c = 0; c < 1024; c++)
                        s += ncm_topo_cpu(a->t, c)->core;
                sink = s;
                break;
        }
        case 7: {
                int s = 0;
                for (int i = 0; i < 64; i++)
                        for (int j = 0; j < 64; j++)
                                s += ncm_topo_numa_distance(a->t, i, j);
                sink = s;
                break;
        }
        }
}

int main(void)
{
        char machine[96];
        ncm_error err = NCM_ERROR_INIT;
        discover_arg da;
        ncm_topo *big = NULL;
        char *data = find_data();
        char tmp[PATH_MAX];

        printf("## Topology\n\n");
        printf("Discovery reads every file once per run (no cache). Queries run on a 1024-CPU\n"
               "synthetic machine (`package:4 numa:16 l3:2 core:4 pu:2`: 64 NUMA nodes, 128 L3,\n"
               "512 cores); each query takes a list of 4 element ids (cores: 64 cores, id\n"
               "lookups: 64 CPUs).\n\n");
        printf("| operation | machine | median |\n|---|---|---|\n");

        da.rules = NCM_TOPO_RULES_CADVISOR;
        da.rootfd = ncm_fs_open_root("/", &err);
        if (da.rootfd >= 0) {
                ncm_topo *t = NULL;
                if (ncm_topo_discover_sysfs(da.rootfd, &t, &err) == 0) {
                        snprintf(machine, sizeof(machine), "this machine (%d CPUs)",
                                 ncm_topo_num_cpus(t));
                        ncm_topo_free(t);
                        row("sysfs discovery", machine, bench_median_ns(do_discover, &da, 1000));
                }
                close(da.rootfd);
        }
        if (data) {
                char *root = extract(data, "256ia64-64n2s2c", tmp, sizeof(tmp));
                if (root && (da.rootfd = ncm_fs_open_root(root, &err)) >= 0) {
                        row("sysfs discovery", "256ia64-64n2s2c dump (256 CPUs, 64 NUMA nodes)",
                            bench_median_ns(do_discover, &da, 200));
                        da.rules = NCM_TOPO_RULES_NODECM;
                        row("sysfs discovery, --topology-rules nodecm",
                            "256ia64-64n2s2c dump (256 CPUs, 64 NUMA nodes)",
                            bench_median_ns(do_discover, &da, 200));
                        close(da.rootfd);
                } else {
                        printf("| sysfs discovery | 256ia64-64n2s2c dump | not run: cannot "
                               "extract |\n");
                }
                remove_tree(tmp);
                free(root);
                /* the PCI devices alone: what `nodecm topology` adds to the discovery above */
                root = extract(data, "fakepci-256", tmp, sizeof(tmp));
                if (root && (da.rootfd = ncm_fs_open_root(root, &err)) >= 0) {
                        row("PCI discovery (ncm_pci_discover_sysfs)",
                            "fakepci-256 dump (208 PCI functions)",
                            bench_median_ns(do_discover_pci, &da, 200));
                        close(da.rootfd);
                }
                remove_tree(tmp);
                free(root);
        } else {
                printf("| sysfs discovery | 256ia64-64n2s2c dump | not run: tests/data not "
                       "found |\n");
        }

        row("hwloc synthetic", "1024 CPUs",
            bench_median_ns(do_synthetic, "package:4 numa:16 l3:2 core:4 pu:2", 200));
        if (ncm_topo_from_synthetic("package:4 numa:16 l3:2 core:4 pu:2", &big, NULL) < 0)
                return 1;
        {
                ncm_buf b = NCM_BUF_INIT;
                table_arg ta;
                text_arg tx;
                ncm_topo_format_json(big, &b);
                tx.text = b.data;
                tx.len = b.len;
                ta.cpus = ncm_topo_cpus(big, &ta.n);
                ta.ids = ncm_topo_numa_ids(big, &ta.nn);
                ta.dist = ncm_topo_numa_distances(big, &ta.nn);
                row("ncm_topo_new (build all indexes)", "1024 CPUs",
                    bench_median_ns(do_new, &ta, 100000));
                row("JSON write", "1024 CPUs", bench_median_ns(do_format_json, big, 100000));
                row("JSON read", "1024 CPUs", bench_median_ns(do_parse_json, &tx, 100000));
                ncm_buf_done(&b);
        }
        {
                static const char *const names[] = {
                                "cpus_of_ids (4 NUMA nodes)",  "cpus_of_ids (4 sockets)",
                                "cpus_in_cores (64 cores)",    "cpus_of_ids (4 L3)",
                                "ids_of_cpus (NUMA, 64 CPUs)", "cores_of_cpus (64 CPUs)",
                                "ncm_topo_cpu x1024",          "numa_distance x4096",
                };
                static const char *const ids[] = {"0,17,33,63",  "0-3",       "0-127:2",
                                                  "1,40,80,127", "0-1023:16", "0-1023:16",
                                                  "0",           "0"};
                for (int k = 0; k < 8; k++) {
                        static query_arg qa;
                        qa = (query_arg){big, ncm_cpuset_new(), ncm_cpuset_new(), k, {0}, 0};
                        if (strstr(ids[k], ":")) {
                                /* "a-b:step" */
                                int a, b2, step;
                                sscanf(ids[k], "%d-%d:%d", &a, &b2, &step);
                                for (int i = a; i <= b2; i += step)
                                        ncm_cpuset_set(qa.ids, i);
                        } else {
                                ncm_cpuset *s = NULL;
                                ncm_cpuset_parse_list(ids[k], &s, NULL);
                                ncm_cpuset_copy(qa.ids, s);
                                ncm_cpuset_free(s);
                        }
                        NCM_CPUSET_FOREACH(id, qa.ids)
                        {
                                qa.list[qa.n++] = id;
                        }
                        row(names[k], "1024 CPUs", bench_median_ns(do_query, &qa, 10000000));
                        ncm_cpuset_free(qa.ids);
                        ncm_cpuset_free(qa.out);
                }
        }
        ncm_topo_free(big);
        printf("\n");
        processes(data);
        free(data);
        return 0;
}
