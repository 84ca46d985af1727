/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Issue 21's bound: a whole admission with the memory manager (CPU manager static, memory
 * manager Static, a device plugin's GPUs, the restricted topology policy) on 16, 32 and 64
 * NUMA nodes, as the node runs it (ncm_node_admit: every provider's hints, the lazy merge, each
 * provider's Allocate, the checkpoints rendered in memory), then the pod's removal, next to the
 * same node with the CPU manager alone. Machines "package:2 numa:N/2 core:8 pu:2" (16 CPUs per
 * NUMA node), 64 GiB of memory and one GPU per NUMA node, about half the CPUs taken by
 * Guaranteed pods before the timed pod (4 CPUs, 2 GiB, one GPU). Each row runs in its own
 * process: its peak RSS is the whole process's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/node-config.h>
#include <nodecm/node.h>
#include <nodecm/pod.h>
#include <nodecm/topology.h>
#include "benchutil.h"

typedef struct bnode {
        ncm_topo *topo;
        ncm_node_config *cfg;
        ncm_node *node;
        ncm_pod *pod;
        int fill, fill_admitted;
        bool memory;
        bool hugepages; /* the timed pod asks for hugepages-2Mi beside its memory */
} bnode;

static void die(const char *what, const ncm_error *err)
{
        fprintf(stderr, "bench-mem-admission: %s: %s\n", what, err ? err->msg : "");
        exit(1);
}

static ncm_pod *make_pod(const char *uid, int cpus, const char *mem, const char *hp, bool gpu)
{
        char text[640];
        ncm_pod *p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        snprintf(text, sizeof(text),
                 "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": {\"containers\": "
                 "[{\"name\": \"app\", \"resources\": {\"limits\": {\"cpu\": \"%d\", "
                 "\"memory\": \"%s\"%s%s%s%s}}}]}}",
                 uid, uid, cpus, mem, hp ? ", \"hugepages-2Mi\": \"" : "", hp ? hp : "",
                 hp ? "\"" : "", gpu ? ", \"example.com/gpu\": \"1\"" : "");
        if (ncm_pod_parse(text, strlen(text), uid, &p, &err) < 0)
                die("pod", &err);
        return p;
}

static void bnode_init(bnode *b, int numa, bool memory, bool hugepages)
{
        char desc[96], *cfg, *devs;
        size_t cap = 4096 + (size_t)numa * 128, len = 0;
        ncm_node_options o = {0};
        ncm_error err = NCM_ERROR_INIT;
        size_t ncpu;
        int taken = 0;

        memset(b, 0, sizeof(*b));
        b->memory = memory;
        b->hugepages = hugepages;
        snprintf(desc, sizeof(desc), "package:2 numa:%d core:8 pu:2", numa / 2);
        if (ncm_topo_from_synthetic(desc, &b->topo, &err) < 0 ||
            ncm_topo_apply_memory_spec(b->topo, hugepages ? "64Gi,hugepages-2Mi=4096" : "64Gi",
                                       &err) < 0)
                die("topology", &err);
        cfg = malloc(cap);
        devs = malloc(cap);
        if (!cfg || !devs)
                die("out of memory", NULL);
        /* the reservation: kubeReserved + evictionHard = 128Mi on every NUMA node */
        len = (size_t)snprintf(cfg, cap,
                               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                               /* the kubelet's default of 110 pods would refuse the 64-node
                                * fill before its CPUs are half taken */
                               "\"maxPods\": 1000, "
                               "\"topologyManagerPolicy\": \"restricted\", "
                               "\"topologyManagerPolicyOptions\": "
                               "{\"max-allowable-numa-nodes\": \"%d\"}",
                               numa);
        if (memory) {
                len += (size_t)snprintf(cfg + len, cap - len,
                                        ", \"memoryManagerPolicy\": \"Static\", "
                                        "\"kubeReserved\": {\"memory\": \"%dMi\"}, "
                                        "\"evictionHard\": {\"memory.available\": \"100Mi\"}, "
                                        "\"reservedMemory\": [",
                                        numa * 128 - 100);
                for (int i = 0; i < numa; i++)
                        len += (size_t)snprintf(cfg + len, cap - len,
                                                "%s{\"numaNode\": %d, \"limits\": "
                                                "{\"memory\": \"128Mi\"}}",
                                                i ? ", " : "", i);
                len += (size_t)snprintf(cfg + len, cap - len, "]");
        }
        snprintf(cfg + len, cap - len, "}");
        if (ncm_node_config_parse(cfg, strlen(cfg), "bench", "", &b->cfg, &err) < 0)
                die("config", &err);
        if (memory) {
                len = (size_t)snprintf(devs, cap, "{\"example.com/gpu\": [");
                for (int i = 0; i < numa; i++)
                        len += (size_t)snprintf(devs + len, cap - len,
                                                "%s{\"id\": \"gpu%d\", \"numa\": [%d], "
                                                "\"health\": \"Healthy\"}",
                                                i ? ", " : "", i, i);
                snprintf(devs + len, cap - len, "]}");
                o.devices = devs;
                o.devices_len = strlen(devs);
        }
        if (ncm_node_new(b->topo, b->cfg, &o, &b->node, &err) < 0)
                die("node", &err);
        free(cfg);
        free(devs);
        /* about half the CPUs taken by pods of 1 to 8 CPUs, every fourth with a GPU */
        (void)ncm_topo_cpus(b->topo, &ncpu);
        while (taken < (int)ncpu / 2 && b->fill < 100000) {
                static const int sizes[] = {1, 3, 8, 2, 5};
                char uid[32];
                int i = b->fill++;
                ncm_node_admission *a = NULL;
                ncm_pod *p;
                snprintf(uid, sizeof(uid), "fill-%d", i);
                p = make_pod(uid, sizes[i % 5], "1Gi", NULL, memory && i % 4 == 0);
                if (ncm_node_admit(b->node, p, 0, &a, &err) < 0)
                        die("fill", &err);
                if (a->admitted) {
                        taken += sizes[i % 5];
                        b->fill_admitted++;
                }
                ncm_node_admission_free(a);
                ncm_pod_free(p);
        }
        b->pod = make_pod("bench", 4, "2Gi", hugepages ? "1Gi" : NULL, memory);
}

static void bnode_done(bnode *b)
{
        ncm_pod_free(b->pod);
        ncm_node_free(b->node);
        ncm_node_config_free(b->cfg);
        ncm_topo_free(b->topo);
}

static void admit_remove(void *arg)
{
        bnode *b = arg;
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_node_admit(b->node, b->pod, 0, &a, &err) < 0)
                die("admit", &err);
        if (!a->admitted) {
                fprintf(stderr, "bench-mem-admission: refused: %s\n", a->message);
                exit(1);
        }
        if (b->memory &&
            (a->n_containers != 1 || a->containers[0].n_memory != (b->hugepages ? 2u : 1u) ||
             a->containers[0].n_devices != 1))
                die("the pod got no memory block or no GPU", NULL);
        ncm_node_admission_free(a);
        if (ncm_node_remove_pod(b->node, "bench", NULL, &err) < 0)
                die("remove", &err);
}

typedef struct row_result {
        double ns;
        int fill, fill_admitted;
        long maxrss_kb;
} row_result;

typedef struct row_arg {
        int numa;
        bool memory, hugepages;
} row_arg;

static void row_child(void *arg, void *out)
{
        const row_arg *a = arg;
        row_result *r = out;
        bnode b;
        bnode_init(&b, a->numa, a->memory, a->hugepages);
        r->ns = bench_median_ns(admit_remove, &b, 100000);
        r->fill = b.fill;
        r->fill_admitted = b.fill_admitted;
        bnode_done(&b);
}

static bool row_in_child(int numa, bool memory, bool hugepages, row_result *out)
{
        row_arg a = {numa, memory, hugepages};
        return bench_in_child(row_child, &a, out, sizeof(*out), &out->maxrss_kb);
}

int main(int argc, char **argv)
{
        static const int sizes[] = {16, 32, 64};
        static const char *const target[] = {"≤ 200 µs", "≤ 500 µs, ≤ 8 MB", "≤ 1 ms, ≤ 8 MB"};

        if (argc == 3) {
                /* one row in this process, for a profiler: NUMA-NODES MEMORY(0|1|2: with
                 * hugepages) */
                bnode b;
                char b1[32];
                bnode_init(&b, atoi(argv[1]), atoi(argv[2]) != 0, atoi(argv[2]) == 2);
                printf("%s\n", bench_fmt_ns(bench_median_ns(admit_remove, &b, 100000), b1));
                bnode_done(&b);
                return 0;
        }

        printf("## Admission with the memory manager (bench-mem-admission)\n\n"
               "One pod (4 CPUs, 2 GiB of memory, one GPU) admitted and removed through the node "
               "(`ncm_node_admit`, `ncm_node_remove_pod`): the CPU manager (static), the memory "
               "manager (Static: every NUMA node's free memory, the group rule) and the device "
               "manager (one GPU per NUMA node) give their hints, the restricted policy merges "
               "them (lazily: the memory manager's list is described, the nodes already serving "
               "pods as its extras), each allocates, and `cpu_manager_state`, "
               "`memory_manager_state` and the device checkpoint are rendered in memory. "
               "Machines `package:2 numa:N/2 core:8 pu:2` with 64 GiB per NUMA node, about half "
               "the CPUs taken by Guaranteed pods of 1 to 8 CPUs and 1 GiB each (every fourth "
               "with a GPU) before the timed pod. *CPU only*: the same node with the CPU manager "
               "alone (no memory manager, no devices) and the same pod without the GPU; "
               "*hugepages-2Mi*: every NUMA node also has 8 GiB of 2 MiB pages and the pod "
               "asks for 1 GiB of them beside its memory, so its hints need both types to "
               "fit on a mask at once (the description's two dimensions); "
               "bench-admission's rows above time the topology manager without the node. Each "
               "row in a process of its own (peak RSS).\n\n");
        printf("| NUMA nodes | CPUs | providers | pods before | admission + removal | peak RSS | "
               "target |\n|---:|---:|---|---:|---:|---:|---|\n");
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                for (int memory = 0; memory < 3; memory++) {
                        static const char *const whats[] = {
                                        "CPU only", "CPU + memory + devices",
                                        "CPU + memory + hugepages-2Mi + devices"};
                        row_result r = {0};
                        char b1[32];
                        const char *what = whats[memory];
                        if (!row_in_child(sizes[i], memory > 0, memory == 2, &r)) {
                                printf("| %d | %d | %s | | failed | | %s |\n", sizes[i],
                                       sizes[i] * 16, what, memory ? target[i] : "");
                                continue;
                        }
                        printf("| %d | %d | %s | %d | %s | %.1f MB | %s |\n", sizes[i],
                               sizes[i] * 16, what, r.fill_admitted, bench_fmt_ns(r.ns, b1),
                               (double)r.maxrss_kb / 1024.0, memory ? target[i] : "");
                }
        }
        return 0;
}
