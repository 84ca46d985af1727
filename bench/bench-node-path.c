/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 27's bound: an admission and a removal on the node's whole path (ncm_node_admit,
 * ncm_node_remove_pod: every provider, the transaction, the enforcer) cost the same whether the
 * node holds 0, 100 or 1,000 pods. The enforcer is the one nodecmd runs, cgroupfs, on a cgroup
 * v1 tree in a temporary directory (the tests' stand-in kernel, tests/unit/fakecg.c: the control
 * files a new cgroup gets), beside the none enforcer (the decisions alone). 1,024 CPUs
 * ("package:2 numa:2 core:128 pu:2"); the pods on the node: every fourth Guaranteed with one
 * exclusive CPU, the others Burstable (100m) on the shared pool. Timed: a Burstable pod (the
 * shared pool stays) and a Guaranteed pod of 4 CPUs (the pool shrinks: every running shared
 * container follows, which is O(shared containers) by nature).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodecm/enforcer.h>
#include <nodecm/node-config.h>
#include <nodecm/node.h>
#include <nodecm/pod.h>
#include <nodecm/topology.h>
#include "benchutil.h"
#include "fakecg.h"

typedef struct bnode {
        fake fk;
        bool cgroupfs;
        ncm_topo *topo;
        ncm_node_config *cfg;
        ncm_resource_list capacity;
        ncm_enforcer *e;
        ncm_node *node;
        ncm_pod *pod;
} bnode;

static void die(const char *what, const ncm_error *err)
{
        fprintf(stderr, "bench-node-path: %s: %s\n", what, err ? err->msg : "");
        exit(1);
}

/* The timed pods: Burstable, Guaranteed of 4 CPUs, or that with 2 GiB and a GPU on a node
 * with every provider. */
enum { POD_BURSTABLE, POD_GUARANTEED, POD_EVERY, POD_N };

static ncm_pod *make_pod(const char *uid, bool guaranteed, int cpus, bool gpu)
{
        char text[640];
        ncm_pod *p = NULL;
        ncm_error err = NCM_ERROR_INIT;

        if (guaranteed)
                snprintf(text, sizeof(text),
                         "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": "
                         "{\"containers\": [{\"name\": \"app\", \"resources\": {\"limits\": "
                         "{\"cpu\": \"%d\", \"memory\": \"%s\"%s}}}]}}",
                         uid, uid, cpus, gpu ? "2Gi" : "256Mi",
                         gpu ? ", \"example.com/gpu\": \"1\"" : "");
        else
                snprintf(text, sizeof(text),
                         "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": "
                         "{\"containers\": [{\"name\": \"web\", \"resources\": {\"requests\": "
                         "{\"cpu\": \"100m\", \"memory\": \"64Mi\"}}}]}}",
                         uid, uid);
        if (ncm_pod_parse(text, strlen(text), uid, &p, &err) < 0)
                die("pod", &err);
        return p;
}

static void bnode_init(bnode *b, int pods, bool cgroupfs, int kind)
{
        static const char cfg[] = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                  "\"0\", \"maxPods\": 2000, \"topologyManagerPolicy\": "
                                  "\"restricted\", \"failCgroupV1\": false}";
        /* the memory manager (Static, 128Mi reserved on each of the 4 NUMA nodes) beside the CPU
         * manager, and a device plugin's GPU on each NUMA node */
        static const char cfg_every[] =
                        "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                        "\"maxPods\": 2000, \"topologyManagerPolicy\": \"restricted\", "
                        "\"failCgroupV1\": false, \"memoryManagerPolicy\": \"Static\", "
                        "\"kubeReserved\": {\"memory\": \"412Mi\"}, \"evictionHard\": "
                        "{\"memory.available\": \"100Mi\"}, \"reservedMemory\": "
                        "[{\"numaNode\": 0, \"limits\": {\"memory\": \"128Mi\"}}, "
                        "{\"numaNode\": 1, \"limits\": {\"memory\": \"128Mi\"}}, "
                        "{\"numaNode\": 2, \"limits\": {\"memory\": \"128Mi\"}}, "
                        "{\"numaNode\": 3, \"limits\": {\"memory\": \"128Mi\"}}]}";
        static const char devs[] =
                        "{\"example.com/gpu\": [{\"id\": \"gpu0\", \"numa\": [0], \"health\": "
                        "\"Healthy\"}, {\"id\": \"gpu1\", \"numa\": [1], \"health\": "
                        "\"Healthy\"}, {\"id\": \"gpu2\", \"numa\": [2], \"health\": "
                        "\"Healthy\"}, {\"id\": \"gpu3\", \"numa\": [3], \"health\": "
                        "\"Healthy\"}]}";
        const char *c = kind == POD_EVERY ? cfg_every : cfg;
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_options o = {0};
        ncm_quantity q;

        memset(b, 0, sizeof(*b));
        b->cgroupfs = cgroupfs;
        if (ncm_topo_from_synthetic("package:2 numa:2 core:128 pu:2", &b->topo, &err) < 0 ||
            ncm_topo_apply_memory_spec(b->topo, "64Gi", &err) < 0)
                die("topology", &err);
        if (ncm_node_config_parse(c, strlen(c), "bench", "", &b->cfg, &err) < 0)
                die("config", &err);
        if (kind == POD_EVERY) {
                o.devices = devs;
                o.devices_len = strlen(devs);
        }
        if (cgroupfs) {
                ncm_enforcer_cgroup_options eo = {0};
                fake_init(&b->fk, 1, false);
                if (ncm_quantity_parse("1024", &q, NULL) < 0 ||
                    ncm_cgroup_resource_list_set(&b->capacity, "cpu", &q) < 0 ||
                    ncm_quantity_parse("4Ti", &q, NULL) < 0 ||
                    ncm_cgroup_resource_list_set(&b->capacity, "memory", &q) < 0)
                        die("capacity", NULL);
                eo.mount_root = b->fk.dir;
                eo.cgroup_version = 1;
                eo.capacity = &b->capacity;
                eo.exec = &b->fk.exec;
                if (ncm_enforcer_cgroupfs_new(&eo, &b->e, &err) < 0)
                        die("enforcer", &err);
                o.enforcer = b->e;
        }
        if (ncm_node_new(b->topo, b->cfg, &o, &b->node, &err) < 0)
                die("node", &err);
        for (int i = 0; i < pods; i++) {
                char uid[32];
                ncm_node_admission *a = NULL;
                ncm_pod *p;
                snprintf(uid, sizeof(uid), "fill-%04d", i);
                p = make_pod(uid, i % 4 == 0, 1, false);
                if (ncm_node_admit(b->node, p, 0, &a, &err) < 0)
                        die("fill", &err);
                if (!a->admitted)
                        die("fill refused", NULL);
                ncm_node_admission_free(a);
                ncm_pod_free(p);
        }
        b->pod = make_pod("bench", kind != POD_BURSTABLE, 4, kind == POD_EVERY);
}

static void bnode_done(bnode *b)
{
        ncm_pod_free(b->pod);
        ncm_node_free(b->node);
        ncm_enforcer_free(b->e);
        ncm_node_config_free(b->cfg);
        ncm_resource_list_done(&b->capacity);
        ncm_topo_free(b->topo);
        if (b->cgroupfs)
                fake_done(&b->fk);
}

/* Admit and remove the timed pod N times; the medians of each half into *ADMIT and *REMOVE. */
static void time_pairs(bnode *b, int n, double *admit, double *remove)
{
        double *ta = calloc((size_t)n, sizeof(*ta)), *tr = calloc((size_t)n, sizeof(*tr));
        ncm_error err = NCM_ERROR_INIT;

        if (!ta || !tr)
                die("out of memory", NULL);
        for (int i = 0; i < n; i++) {
                ncm_node_admission *a = NULL;
                uint64_t t0 = bench_now_ns(), t1, t2, t3;
                if (ncm_node_admit(b->node, b->pod, 0, &a, &err) < 0)
                        die("admit", &err);
                t1 = bench_now_ns();
                if (!a->admitted)
                        die("admit refused", NULL);
                ncm_node_admission_free(a); /* the caller's, not the node's */
                t2 = bench_now_ns();
                if (ncm_node_remove_pod(b->node, "bench", NULL, &err) < 0)
                        die("remove", &err);
                t3 = bench_now_ns();
                ta[i] = (double)(t1 - t0);
                tr[i] = (double)(t3 - t2);
        }
        qsort(ta, (size_t)n, sizeof(*ta), bench_cmp_double);
        qsort(tr, (size_t)n, sizeof(*tr), bench_cmp_double);
        *admit = ta[n / 2];
        *remove = tr[n / 2];
        free(ta);
        free(tr);
}

typedef struct row_arg {
        int pods;
        bool cgroupfs;
        int kind;
} row_arg;

typedef struct row_result {
        double admit, remove;
        long maxrss_kb;
} row_result;

static void row_child(void *arg, void *out)
{
        const row_arg *a = arg;
        row_result *r = out;
        bnode b;

        bnode_init(&b, a->pods, a->cgroupfs, a->kind);
        time_pairs(&b, 10, &r->admit, &r->remove); /* warm up */
        time_pairs(&b, a->cgroupfs ? 101 : 2001, &r->admit, &r->remove);
        bnode_done(&b);
}

int main(int argc, char **argv)
{
        static const int pods[] = {0, 100, 1000};

        /* the stand-in tree on tmpfs, as the kernel's cgroupfs is in memory: a disk's
         * metadata writes are no cost of the node's */
        if (access("/dev/shm", W_OK) == 0)
                setenv("NCM_TEST_BUILD", "/dev/shm", 0);

        if (argc == 4) {
                /* one row in this process, for a profiler: PODS CGROUPFS(0|1) KIND(0 Burstable,
                 * 1 Guaranteed, 2 every provider) */
                bnode b;
                double a, r;
                char b1[32], b2[32];
                bnode_init(&b, atoi(argv[1]), atoi(argv[2]) != 0, atoi(argv[3]));
                time_pairs(&b, atoi(argv[2]) ? 101 : 2001, &a, &r);
                printf("admit %s remove %s\n", bench_fmt_ns(a, b1), bench_fmt_ns(r, b2));
                bnode_done(&b);
                return 0;
        }
        printf("## The node's whole path with 0, 100 and 1,000 pods (bench-node-path)\n\n"
               "One pod admitted (`ncm_node_admit`: every provider's hints, the merge, the "
               "allocation, the transaction, the enforcer) and removed (`ncm_node_remove_pod`) "
               "on a node of 1,024 CPUs (`package:2 numa:2 core:128 pu:2`, static CPU manager, "
               "restricted topology policy) that already holds 0, 100 or 1,000 pods (every "
               "fourth Guaranteed with one exclusive CPU, the others Burstable, 100m, on the "
               "shared pool). *cgroupfs*: the enforcer nodecmd runs, on a cgroup v1 tree in a "
               "temporary directory (the tests' stand-in kernel makes a new cgroup's control "
               "files; the kernel's own cost of a cgroup write is not in it); *none*: the "
               "decisions and the registry alone. *Burstable*: the timed pod takes no CPU, the "
               "shared pool stays; *Guaranteed 4 CPUs*: the pool shrinks and grows back, so every "
               "running container on it follows (a cpuset write each: O(shared containers) by "
               "nature); *every provider*: the same with 2 GiB and a GPU, on the node with the "
               "memory manager (Static, 64 GiB per NUMA node) and a device plugin's GPU on each "
               "NUMA node beside the CPU manager: the whole admission. Medians of 101 (cgroupfs) "
               "or 2,001 (none) pairs, each row in a process "
               "of its own (peak RSS). Target (issue 27): admission and removal with 1,000 pods "
               "within 1.5x of 10 pods.\n\n");
        printf("| enforcer | timed pod | pods on the node | admission | removal | peak RSS |\n"
               "|---|---|---:|---:|---:|---:|\n");
        for (int cg = 1; cg >= 0; cg--) {
                for (int g = 0; g < POD_N; g++) {
                        for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
                                static const char *const whats[] = {
                                                "Burstable", "Guaranteed 4 CPUs",
                                                "Guaranteed 4 CPUs, 2 GiB, GPU: every provider"};
                                row_arg a = {pods[i], cg != 0, g};
                                row_result r = {0};
                                char b1[32], b2[32];
                                const char *en = cg ? "cgroupfs" : "none";
                                const char *what = whats[g];
                                if (!bench_in_child(row_child, &a, &r, sizeof(r), &r.maxrss_kb)) {
                                        printf("| %s | %s | %d | failed | | |\n", en, what,
                                               pods[i]);
                                        continue;
                                }
                                printf("| %s | %s | %d | %s | %s | %.1f MB |\n", en, what, pods[i],
                                       bench_fmt_ns(r.admit, b1), bench_fmt_ns(r.remove, b2),
                                       (double)r.maxrss_kb / 1024.0);
                                fflush(stdout);
                        }
                }
        }
        (void)argc;
        (void)argv;
        return 0;
}
