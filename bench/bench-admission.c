/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a user waits for when a pod asks for exclusive CPUs on a machine with many NUMA nodes:
 * one admission as the node runs it (the topology manager's Admit: the CPU manager's hints
 * built fresh, the merge, the allocation), then the container's removal, on synthetic
 * machines "package:2 numa:N/2 core:8 pu:2" (16 CPUs per NUMA node) about half full. Two
 * ways: the hints listed (2^N - 1 masks walked, the fast merge) as before, and described
 * (ncm_cpu_policy_hints_describe, NCM_TM_MERGE_LAZY). Each row runs in its own process, so
 * its peak RSS is the whole process's for that machine and way. Then takeByTopology on the
 * same machines, with and without building the CPU index first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodecm/cpumanager.h>
#include <nodecm/pod.h>
#include <nodecm/sim.h>
#include <nodecm/topologymanager.h>
#include <nodecm/topology.h>
#include "benchutil.h"

typedef struct node {
        ncm_topo *topo;
        ncm_cpu_policy *cpu;
        ncm_cpu_state *state;
        ncm_tm *tm;
        bool describe;
        ncm_pod *pod;
        int fill; /* background pods admitted */
} node;

static int cpu_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret, ncm_error *err)
{
        node *n = data;
        const ncm_pod *pod = call->pod;
        const ncm_container *c = call->container;
        int r;

        if (n->describe) {
                ncm_hint_desc *d = NULL;
                r = ncm_cpu_policy_hints_describe(n->cpu, n->state, pod, c, &d, err);
                if (r < 0 || !d)
                        return r;
                return ncm_tm_hints_add_desc(ret, "cpu", d, err);
        }
        ncm_hint_list l = NCM_HINT_LIST_INIT;
        r = ncm_cpu_policy_hints(n->cpu, n->state, pod, c, &l, err);
        if (r >= 0 && !l.nil)
                r = ncm_tm_hints_add(ret, "cpu", l.hints, l.n, false, NULL, err);
        ncm_hint_list_done(&l);
        return r;
}

static int cpu_allocate(void *data, const ncm_tm_call *call, const ncm_hint *affinity,
                        const char **ret_type, ncm_error *err)
{
        node *n = data;
        (void)ret_type;
        return ncm_cpu_policy_allocate(n->cpu, n->state, call->pod, call->container, affinity, err);
}

static const ncm_tm_provider_ops cpu_ops = {
                .name = "cpu",
                .get_container_hints = cpu_hints,
                .allocate = cpu_allocate,
};

static ncm_pod *make_pod(const char *uid, int cpus)
{
        char text[512];
        ncm_pod *p = NULL;
        snprintf(text, sizeof(text),
                 "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": {\"containers\": "
                 "[{\"name\": \"app\", \"resources\": {\"limits\": {\"cpu\": \"%d\", "
                 "\"memory\": \"1Gi\"}}}]}}",
                 uid, uid, cpus);
        if (ncm_pod_parse(text, strlen(text), uid, &p, NULL) < 0)
                abort();
        return p;
}

static void node_init(node *n, int numa, bool describe)
{
        char desc[96];
        ncm_cpu_policy_config cfg = {.gates = NCM_CPU_GATES_DEFAULT};
        char maxn[16];
        ncm_tm_option opt = {"max-allowable-numa-nodes", maxn};
        const int *ids;
        size_t nids;

        memset(n, 0, sizeof(*n));
        snprintf(desc, sizeof(desc), "package:2 numa:%d core:8 pu:2", numa / 2);
        snprintf(maxn, sizeof(maxn), "%d", numa < 8 ? 8 : numa);
        if (ncm_topo_from_synthetic(desc, &n->topo, NULL) < 0 ||
            ncm_cpu_static_policy_new(n->topo, 0, NULL, &cfg, &n->cpu, NULL) < 0)
                abort();
        n->state = ncm_cpu_state_new("static");
        if (!n->state || ncm_cpu_policy_start(n->cpu, n->state, NULL) < 0)
                abort();
        ids = ncm_topo_numa_ids(n->topo, &nids);
        {
                ncm_tm_config tc = {.policy = "restricted",
                                    .scope = "container",
                                    .options = &opt,
                                    .n_options = 1,
                                    .gates = NCM_TM_GATES_DEFAULT,
                                    .numa_ids = ids,
                                    .n_numa = nids,
                                    .merge_mode = describe ? NCM_TM_MERGE_LAZY : NCM_TM_MERGE_FAST};
                if (ncm_tm_new(&tc, &n->tm, NULL) < 0 ||
                    ncm_tm_add_provider(n->tm, &cpu_ops, n) < 0)
                        abort();
        }
        n->describe = describe;
        /* about half the machine taken by pods of 1 to 8 CPUs, spread by the allocator */
        {
                size_t ncpu;
                int taken = 0, i = 0;
                (void)ncm_topo_cpus(n->topo, &ncpu);
                while (taken < (int)ncpu / 2) {
                        static const int sizes[] = {1, 3, 8, 2, 5};
                        char uid[32];
                        ncm_tm_admit_result res;
                        ncm_pod *p;
                        snprintf(uid, sizeof(uid), "fill-%d", i);
                        p = make_pod(uid, sizes[i % 5]);
                        if (ncm_tm_admit(n->tm, p, NULL, &res, NULL) < 0)
                                abort();
                        if (res.admit)
                                taken += sizes[i % 5];
                        ncm_pod_free(p);
                        if (++i > 100000)
                                break;
                }
                n->fill = i;
        }
        n->pod = make_pod("bench", 4);
}

static void node_done(node *n)
{
        ncm_pod_free(n->pod);
        ncm_tm_free(n->tm);
        ncm_cpu_state_free(n->state);
        ncm_cpu_policy_free(n->cpu);
        ncm_topo_free(n->topo);
}

static void admit_remove(void *arg)
{
        node *n = arg;
        ncm_tm_admit_result res;
        if (ncm_tm_admit(n->tm, n->pod, NULL, &res, NULL) < 0 || !res.admit)
                abort();
        if (ncm_cpu_policy_remove_container(n->cpu, n->state, "bench", "app", NULL) < 0)
                abort();
        (void)ncm_tm_remove_pod(n->tm, "bench");
}

static void hints_only(void *arg)
{
        node *n = arg;
        ncm_tm_hints h = NCM_TM_HINTS_INIT;
        ncm_tm_call call = {.pod = n->pod, .container = &n->pod->containers[0]};
        if (cpu_hints(n, &call, &h, NULL) < 0)
                abort();
        ncm_tm_hints_done(&h);
}

typedef struct merge_arg {
        node *n;
        ncm_tm_hints h;
} merge_arg;

static void merge_only(void *arg)
{
        merge_arg *m = arg;
        ncm_hint hint;
        bool admit;
        if (ncm_tm_policy_merge(ncm_tm_get_policy(m->n->tm), &m->h, 1,
                                m->n->describe ? NCM_TM_MERGE_LAZY : NCM_TM_MERGE_FAST, &hint,
                                &admit, NULL) < 0)
                abort();
}

typedef struct row_result {
        double admit, hints, merge;
        int fill;
        long maxrss_kb;
} row_result;

static void run_row(int numa, bool describe, row_result *out)
{
        node n;
        merge_arg m;
        uint64_t iters = numa >= 16 && !describe ? 20 : 100000;

        node_init(&n, numa, describe);
        out->admit = bench_median_ns(admit_remove, &n, iters);
        out->hints = bench_median_ns(hints_only, &n, iters);
        m.n = &n;
        m.h = (ncm_tm_hints)NCM_TM_HINTS_INIT;
        {
                ncm_tm_call call = {.pod = n.pod, .container = &n.pod->containers[0]};
                if (cpu_hints(&n, &call, &m.h, NULL) < 0)
                        abort();
        }
        out->merge = bench_median_ns(merge_only, &m, iters);
        ncm_tm_hints_done(&m.h);
        out->fill = n.fill;
        node_done(&n);
}

/* Run a row in a child: its peak RSS is the row's alone. false when it failed. */
typedef struct row_arg {
        int numa;
        bool describe;
} row_arg;

static void row_child(void *arg, void *out)
{
        const row_arg *a = arg;
        run_row(a->numa, a->describe, out);
}

static bool row_in_child(int numa, bool describe, row_result *out)
{
        row_arg a = {numa, describe};
        return bench_in_child(row_child, &a, out, sizeof(*out), &out->maxrss_kb);
}

/* ---- the lazy merge alone, several described lists ---- */

typedef struct merge3 {
        ncm_tm_policy *p;
        ncm_tm_hints prov[3];
        ncm_hint got;
} merge3;

static void merge3_run(void *arg)
{
        merge3 *m = arg;
        bool admit;
        if (ncm_tm_policy_merge(m->p, m->prov, 3, NCM_TM_MERGE_LAZY, &m->got, &admit, NULL) < 0)
                abort();
}

/*
 * Three providers whose described lists need at least 1, 2 and 3 nodes (one unit per node):
 * no mask is preferred by all, so the non-preferred search decides (bench-tm-merge's "mixed
 * sizes", without the lists).
 */
static double mixed_sizes(int numa, const char *policy, bool closest, bool gpus, ncm_hint *ret)
{
        int ids[64];
        uint64_t *dist = calloc((size_t)numa * (size_t)numa, sizeof(*dist));
        ncm_tm_options o = {closest, numa};
        merge3 m = {0};
        double ns;

        if (!dist)
                abort();
        for (int i = 0; i < numa; i++)
                ids[i] = i;
        for (int i = 0; i < numa; i++)
                for (int j = 0; j < numa; j++)
                        dist[i * numa + j] = i == j ? 10 : (i / 4 == j / 4 ? 12 : 20 + (i + j) % 3);
        if (ncm_tm_policy_new(policy, &o, ids, (size_t)numa, dist, &m.p, NULL) < 0)
                abort();
        for (int k = 0; k < 3; k++) {
                ncm_hint_desc *d = NULL;
                /* GPUs: 40 CPUs (16 a node, 3 nodes), 2 GPUs (one on every 8th node), none */
                int64_t req = gpus ? (k == 0 ? 40 : k == 1 ? 2 : 0) : k + 1;
                if (ncm_hint_desc_new(ids, (size_t)numa, req, &d, NULL) < 0)
                        abort();
                for (int i = 0; i < numa; i++) {
                        int64_t w = !gpus ? 1 : k == 0 ? 16 : k == 1 ? i % 8 == 0 : 0;
                        if (ncm_hint_desc_add_available(d, UINT64_C(1) << i, w) < 0 ||
                            ncm_hint_desc_add_capacity(d, UINT64_C(1) << i, w) < 0)
                                abort();
                }
                if (gpus && k == 2)
                        ncm_hint_desc_set_empty(d); /* a resource that cannot be satisfied */
                m.prov[k] = (ncm_tm_hints)NCM_TM_HINTS_INIT;
                if (ncm_hint_desc_seal(d, NULL) < 0 ||
                    ncm_tm_hints_add_desc(&m.prov[k], "r", d, NULL) < 0)
                        abort();
        }
        ns = bench_median_ns(merge3_run, &m, 100000);
        *ret = m.got;
        for (int k = 0; k < 3; k++)
                ncm_tm_hints_done(&m.prov[k]);
        ncm_tm_policy_free(m.p);
        free(dist);
        return ns;
}

/* ---- whole scenarios ---- */

typedef struct scen_run {
        const char *text;
        size_t len;
        ncm_simulate_options o;
        size_t admitted, rejected, out_len;
} scen_run;

/* What `nodecm simulate` does after reading the file: parse, replay, output in memory. */
static void scen_once(void *arg)
{
        scen_run *c = arg;
        ncm_scenario *s = NULL;
        ncm_buf out = NCM_BUF_INIT;
        ncm_simulate_summary sum;
        ncm_error err = NCM_ERROR_INIT;

        if (ncm_scenario_parse(c->text, c->len, "bench", NULL, 0, &s, &err) < 0 ||
            ncm_simulate(s, &c->o, &out, &sum, &err) < 0) {
                fprintf(stderr, "bench-admission: %s\n", err.msg);
                abort();
        }
        c->admitted = sum.admitted;
        c->rejected = sum.rejected;
        c->out_len = out.len;
        ncm_buf_done(&out);
        ncm_scenario_free(s);
}

typedef struct scen_result {
        double ns;
        size_t admitted, rejected, out_len;
        long maxrss_kb;
} scen_result;

/* The scenario of tools/gen-many-numa.sh PER_SOCKET, or FILE; run in a child for its RSS. */
static bool scenario_row(const char *file, int per_socket, bool explain, bool json,
                         const char *state_dir, scen_result *out)
{
        int fd[2], status;
        pid_t pid;
        struct rusage ru;
        ssize_t got;

        if (pipe(fd) < 0)
                return false;
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
                char cmd[128], *text = NULL;
                size_t len = 0, cap = 0;
                FILE *f;
                scen_run c = {0};
                scen_result r = {0};

                close(fd[0]);
                if (file) {
                        f = fopen(file, "r");
                } else {
                        snprintf(cmd, sizeof(cmd), "sh tools/gen-many-numa.sh %d", per_socket);
                        f = popen(cmd, "r");
                }
                if (!f)
                        _exit(1);
                for (;;) {
                        if (len + 65536 > cap) {
                                cap = 2 * cap + 65536;
                                text = realloc(text, cap);
                                if (!text)
                                        _exit(1);
                        }
                        size_t n = fread(text + len, 1, cap - len, f);
                        if (n == 0)
                                break;
                        len += n;
                }
                if (file)
                        fclose(f);
                else if (pclose(f) != 0)
                        _exit(1);
                c.text = text;
                c.len = len;
                c.o.explain = explain;
                c.o.json = json;
                c.o.state_dir = state_dir;
                r.ns = bench_median_ns(scen_once, &c, 5);
                r.admitted = c.admitted;
                r.rejected = c.rejected;
                r.out_len = c.out_len;
                free(text);
                if (write(fd[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
                        _exit(1);
                _exit(0);
        }
        close(fd[1]);
        got = read(fd[0], out, sizeof(*out));
        close(fd[0]);
        if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
                return false;
        out->maxrss_kb = ru.ru_maxrss;
        return got == (ssize_t)sizeof(*out) && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ---- takeByTopology ---- */

typedef struct take_arg {
        const ncm_topo *t;
        ncm_cpu_index *ix;
        ncm_cpuset *avail, *out;
        bool build;
} take_arg;

static void take(void *arg)
{
        take_arg *a = arg;
        ncm_cpu_index *ix = a->ix;
        if (a->build && ncm_cpu_index_new(a->t, &ix, NULL) < 0)
                abort();
        if (ncm_cpu_take(ix, NULL, a->avail, 4, a->out, NULL) < 0)
                abort();
        if (a->build)
                ncm_cpu_index_free(ix);
}

int main(void)
{
        static const int sizes[] = {2, 4, 8, 16, 32, 64};
        static const char *const today[] = {"", "", "", "5–30 ms", "killed at 24 GB", "error"};
        static const char *const target[] = {
                        "", "", "", "≤ 200 µs", "≤ 500 µs, ≤ 8 MB", "≤ 1 ms, ≤ 8 MB"};
        char b1[32], b2[32], b3[32];

        printf("## Admission on many NUMA nodes (bench-admission)\n\n"
               "One pod asking for 4 exclusive CPUs, admitted as the node admits it (the topology "
               "manager's Admit with the CPU manager as provider: hints built fresh, merge, "
               "allocation) and removed again, `restricted` policy, container scope, on "
               "`package:2 numa:N/2 core:8 pu:2` (16 CPUs per NUMA node) with about half of the "
               "CPUs already taken by pods of 1 to 8 CPUs. *listed*: the CPU manager lists every "
               "hint (2^N − 1 masks walked) and the fast merge reads them, as nodecm did before; "
               "*described*: it describes them (`ncm_cpu_policy_hints_describe`) and the lazy "
               "merge searches the description. Hints and merge are also timed alone. RSS: peak "
               "of a process that builds the machine, fills it and runs the row. The checkpoint "
               "write of a persistent node is not included (see the simulate rows).\n\n");
        printf("| NUMA nodes | CPUs | hints | admission + removal | hints alone | merge alone | "
               "peak RSS | before (issue 14) | target |\n");
        printf("|---:|---:|---|---:|---:|---:|---:|---|---|\n");
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                for (int describe = 0; describe < 2; describe++) {
                        row_result r = {0};
                        int n = sizes[i];
                        if (!describe && n > 16) {
                                printf("| %d | %d | listed | — (2^%d − 1 hints) | | | | %s | |\n",
                                       n, n * 16, n, today[i]);
                                continue;
                        }
                        if (!row_in_child(n, describe, &r)) {
                                printf("| %d | %d | %s | failed | | | | | |\n", n, n * 16,
                                       describe ? "described" : "listed");
                                continue;
                        }
                        printf("| %d | %d | %s | %s | %s | %s | %.1f MB | %s | %s |\n", n, n * 16,
                               describe ? "described" : "listed", bench_fmt_ns(r.admit, b1),
                               bench_fmt_ns(r.hints, b2), bench_fmt_ns(r.merge, b3),
                               (double)r.maxrss_kb / 1024.0, describe ? "" : today[i],
                               describe ? target[i] : "");
                }
        }

        printf("\n### The lazy merge alone, three described lists\n\n"
               "Three providers whose described lists need at least 1, 2 and 3 NUMA nodes (one "
               "unit per node, so every mask of the right size fits): no mask is preferred by "
               "all three, the non-preferred search over the achievable ANDs decides (the split "
               "of the excluded nodes among three lists). Listed, these are 3 × (2^N − 1) "
               "hints; bench-tm-merge has the fast merge on them up to 16 nodes (1.3 ms).\n\n");
        printf("*GPUs*: a CPU list needing 3 nodes (40 CPUs, 16 per node), a GPU list needing 2 "
               "of the GPUs on every 8th node, and a resource that cannot be satisfied: the "
               "non-preferred search with two described lists.\n\n");
        printf("| lists | NUMA nodes | policy | prefer-closest | result | lazy merge |\n"
               "|---|---:|---|---|---|---:|\n");
        for (size_t i = 2; i < 2 * (sizeof(sizes) / sizeof(sizes[0])) - 2; i++) {
                bool gpus = i >= sizeof(sizes) / sizeof(sizes[0]);
                int numa = sizes[gpus ? i - (sizeof(sizes) / sizeof(sizes[0])) + 2 : i];
                for (int v = 0; v < 3; v++) {
                        ncm_hint h;
                        char bits[200] = "";
                        int b[64], nb;
                        double ns = mixed_sizes(numa, v == 0 ? "best-effort" : "restricted", v == 2,
                                                gpus, &h);
                        nb = ncm_bitmask_to_bits(h.numa, b);
                        for (int k = 0; k < nb; k++)
                                snprintf(bits + strlen(bits), sizeof(bits) - strlen(bits),
                                         k ? ",%d" : "%d", b[k]);
                        printf("| %s | %d | %s | %s | {%s}, %s | %s |\n",
                               gpus ? "GPUs" : "1, 2, 3 nodes", numa,
                               v == 0 ? "best-effort" : "restricted", v == 2 ? "on" : "off", bits,
                               h.preferred ? "preferred" : "not", bench_fmt_ns(ns, b1));
                }
        }

        printf("\n### Whole scenarios on many NUMA nodes\n\n"
               "`nodecm simulate` without reading the file: the scenario parsed and replayed, the "
               "output built in memory, in a process of its own (peak RSS). 1,000 pods admitted "
               "and removed with the restricted policy, CPUs / 7 of them running at a time (1, "
               "2, 4, 8 and 24 CPUs, an init container with two app containers, a Burstable "
               "pod): `examples/many-numa/restricted-32-numa.yaml` (2 sockets, 32 NUMA nodes, "
               "512 CPUs) and the same shape from `tools/gen-many-numa.sh` for 16 and 64 NUMA "
               "nodes. *checkpoints*: with a state directory (`--state-dir`, on this machine's "
               "disk), so every change writes the kubelet's `cpu_manager_state` (temporary "
               "file, fsync, rename) before the step goes on.\n\n");
        printf("| NUMA nodes | CPUs | output | admitted / refused | per scenario | peak RSS | "
               "before (issue 14) | target |\n|---:|---:|---|---|---:|---:|---|---|\n");
        {
                static const struct {
                        int per_socket;
                        bool explain, json, ckpt;
                        const char *before, *target;
                } sc[] = {
                                {8, false, false, false, "", ""},
                                {8, true, false, false, "78 s, 3.8 GB", "≤ 2 s, ≤ 100 MB"},
                                {8, true, true, false, "", ""},
                                {16, false, false, false, "killed at 24 GB", "< 1 s, < 50 MB"},
                                {16, false, false, true, "", ""},
                                {16, true, true, false, "", ""},
                                {32, false, false, false, "error", ""},
                };
                for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
                        scen_result r = {0};
                        char dir[] = "/tmp/ncm-bench-XXXXXX";
                        const char *sd = NULL;
                        bool ok;
                        if (sc[i].ckpt && !(sd = mkdtemp(dir)))
                                abort();
                        ok = scenario_row(sc[i].per_socket == 16 ? "examples/many-numa/"
                                                                   "restricted-32-numa.yaml"
                                                                 : NULL,
                                          sc[i].per_socket, sc[i].explain, sc[i].json, sd, &r);
                        if (sd) {
                                char path[256];
                                snprintf(path, sizeof(path), "%s/cpu_manager_state", sd);
                                unlink(path);
                                rmdir(sd);
                        }
                        if (!ok) {
                                printf("| %d | %d | failed | | | | | |\n", sc[i].per_socket * 2,
                                       sc[i].per_socket * 32);
                                continue;
                        }
                        printf("| %d | %d | %s%s | %zu / %zu | %s | %.1f MB | %s | %s |\n",
                               sc[i].per_socket * 2, sc[i].per_socket * 32,
                               sc[i].json ? "--json" : "human",
                               sc[i].explain ? " --explain"
                               : sc[i].ckpt  ? ", checkpoints"
                                             : "",
                               r.admitted, r.rejected, bench_fmt_ns(r.ns, b1),
                               (double)r.maxrss_kb / 1024.0, sc[i].before, sc[i].target);
                }
        }

        printf("\n### takeByTopology with and without the CPU index\n\n"
               "4 CPUs taken from the free CPUs of the same half-full machines (default options); "
               "*with index*: the per-topology index is built once, as the CPU manager keeps it; "
               "*building it*: `ncm_cpu_index_new` on every call, as a one-shot tool would.\n\n");
        printf("| NUMA nodes | CPUs | with index | building it |\n|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                node n;
                take_arg a;
                double with, build;
                node_init(&n, sizes[i], true);
                a.t = n.topo;
                a.ix = (ncm_cpu_index *)ncm_cpu_policy_index(n.cpu);
                a.avail = ncm_cpuset_new();
                a.out = ncm_cpuset_new();
                ncm_cpu_policy_available(n.cpu, n.state, a.avail);
                a.build = false;
                with = bench_median_ns(take, &a, 1000000);
                a.build = true;
                build = bench_median_ns(take, &a, 100000);
                printf("| %d | %d | %s | %s |\n", sizes[i], sizes[i] * 16, bench_fmt_ns(with, b1),
                       bench_fmt_ns(build, b2));
                ncm_cpuset_free(a.avail);
                ncm_cpuset_free(a.out);
                node_done(&n);
        }
        return 0;
}
