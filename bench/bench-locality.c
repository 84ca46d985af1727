/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device locality at admission (issue 24): what locating a container's devices adds to its
 * admission. On issue 24's fake machine (tests/data/topologies/fakepci-2s4r, extracted to a
 * tmpfs: its PCI devices, CDI specs and /sys/dev links are the node's machine), a Guaranteed
 * pod with 4 CPUs, an SR-IOV VF from a device plugin (its id a PCI address) and a DRA GPU (a CDI
 * name whose spec's device node is traced through /sys/dev) is admitted and removed through the
 * node API, with the settings off (the kubelet's admission), with deviceLocalCPUs: prefer, and
 * with draTopologyHints: align too. Every admission checks the CDI spec directories again (a
 * driver writes a claim's spec just before its container is created) and reads them again
 * when they changed, as in the last row, where a spec changes before each admission; the
 * machine's PCI devices are read once per node. Target: within the admission's existing bounds
 * (the control API's 300 µs Admit, the CRI proxy's 1 ms).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodecm/node.h>
#include "benchutil.h"

typedef struct lcase {
        ncm_node *node;
        ncm_pod *pod;
        int touch_dfd; /* >= 0: a spec in it changes (its times) before each admission */
} lcase;

static void admit_remove(void *arg)
{
        lcase *c = arg;
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;

        if (c->touch_dfd >= 0 && utimensat(c->touch_dfd, "example-gpu.yaml", NULL, 0) < 0) {
                perror("bench-locality: utimensat");
                exit(1);
        }
        if (ncm_node_admit(c->node, c->pod, 0, &a, &err) < 0 || !a->admitted) {
                fprintf(stderr, "bench-locality: %s\n", a ? a->message : err.msg);
                exit(1);
        }
        ncm_node_admission_free(a);
        if (ncm_node_remove_pod(c->node, c->pod->uid, NULL, &err) < 0) {
                fprintf(stderr, "bench-locality: %s\n", err.msg);
                exit(1);
        }
}

/* tests/data as bench-topology finds it: $NCM_TEST_DATA, or the source tree. */
static char *find_data(void)
{
        const char *env = getenv("NCM_TEST_DATA");
        char *p = NULL;
        if (env && access(env, F_OK) == 0)
                return strdup(env);
        if (access("tests/data/topologies", F_OK) == 0)
                return strdup("tests/data");
        if (asprintf(&p, "%s/tests/data", NCM_SOURCE_ROOT) >= 0 && access(p, F_OK) == 0)
                return p;
        free(p);
        return NULL;
}

static int run(const char *cmd)
{
        int st = system(cmd);
        return st == 0 ? 0 : -1;
}

static void row(const char *what, const char *root, ncm_topo *t, const char *kubelet,
                const char *devices, const char *pod_text, bool touch, double *base)
{
        ncm_node_config *cfg = NULL;
        ncm_node_options o = {0};
        ncm_error err = NCM_ERROR_INIT;
        lcase c = {.touch_dfd = -1};
        char dir[PATH_MAX];
        char b1[32];
        double ns;

        if (ncm_node_config_parse(kubelet, strlen(kubelet), NULL, "", &cfg, &err) < 0 ||
            ncm_pod_parse(pod_text, strlen(pod_text), NULL, &c.pod, &err) < 0) {
                fprintf(stderr, "bench-locality: %s\n", err.msg);
                exit(1);
        }
        o.devices = devices;
        o.devices_len = strlen(devices);
        o.machine_root = root;
        if (ncm_node_new(t, cfg, &o, &c.node, &err) < 0) {
                fprintf(stderr, "bench-locality: %s\n", err.msg);
                exit(1);
        }
        if (touch) {
                snprintf(dir, sizeof(dir), "%s/etc/cdi", root);
                c.touch_dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (c.touch_dfd < 0) {
                        perror(dir);
                        exit(1);
                }
        }
        ns = bench_median_ns(admit_remove, &c, 2000);
        if (c.touch_dfd >= 0)
                close(c.touch_dfd);
        if (*base == 0)
                *base = ns;
        printf("| %s | %s | +%s |\n", what, bench_fmt_ns(ns, b1),
               bench_fmt_ns(ns - *base > 0 ? ns - *base : 0, (char[32]){0}));
        ncm_node_free(c.node);
        ncm_pod_free(c.pod);
        ncm_node_config_free(cfg);
}

int main(void)
{
        static const char devices[] = "{\"example.com/nic\": [{\"id\": \"0000:c1:00.2\", \"numa\": "
                                      "[1]}, {\"id\": \"0000:c1:00.3\", \"numa\": [1]}]}";
        static const char pod[] =
                        "{\"metadata\": {\"uid\": \"p1\", \"name\": \"dpdk\", \"annotations\": "
                        "{\"nodecm.io/cdi-devices\": \"{\\\"app\\\": "
                        "[\\\"example.com/gpu=gpu1\\\", "
                        "\\\"example.com/gpu=common\\\"]}\"}}, \"spec\": {\"containers\": "
                        "[{\"name\": \"app\", \"resources\": {\"limits\": {\"cpu\": \"4\", "
                        "\"memory\": \"1Gi\", \"example.com/nic\": \"1\"}}}]}}";
        static const char off[] = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                  "\"0,16\", \"topologyManagerPolicy\": \"single-numa-node\"}";
        static const char prefer[] = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                     "\"0,16\", \"topologyManagerPolicy\": \"single-numa-node\", "
                                     "\"deviceLocalCPUs\": \"prefer\"}";
        static const char both[] = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                   "\"0,16\", \"topologyManagerPolicy\": \"single-numa-node\", "
                                   "\"deviceLocalCPUs\": \"prefer\", \"draTopologyHints\": "
                                   "\"align\"}";
        char *data = find_data();
        char tmp[] = "/dev/shm/nodecm-bench-loc-XXXXXX";
        char cmd[PATH_MAX * 2 + 64], root[PATH_MAX];
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;
        double base = 0;

        printf("## Device locality at admission (bench-locality)\n\n"
               "A Guaranteed pod with 4 CPUs, an SR-IOV VF (a device plugin's, its id a PCI "
               "address) and a DRA GPU\n(a CDI name whose spec's device node is traced through "
               "/sys/dev), admitted and removed through\nthe node API on issue 24's fake "
               "machine (`fakepci-2s4r`, on a tmpfs). With locality on, every\nadmission "
               "checks the CDI spec directories again and reads them when they changed\n(last "
               "row: a spec changed before each admission); the PCI devices are read once per "
               "node.\nTarget "
               "(issue 24): within the admission's existing bounds (the control API's 300 µs "
               "Admit,\nthe CRI proxy's 1 ms overhead).\n\n");
        printf("| settings | admission + removal | added |\n|---|---:|---:|\n");
        if (!data || (!mkdtemp(tmp) && !mkdtemp(strcpy(tmp, "/tmp/nodecm-bench-loc-XXXXXX")))) {
                printf("| all | not run: tests/data not found | |\n");
                return 0;
        }
        snprintf(cmd, sizeof(cmd), "tar -xjf '%s/topologies/fakepci-2s4r.tar.bz2' -C '%s'", data,
                 tmp);
        snprintf(root, sizeof(root), "%s/fakepci-2s4r", tmp);
        if (run(cmd) < 0 || ncm_topo_load(NCM_TOPO_SOURCE_FSROOT, root, &t, &err) < 0) {
                printf("| all | not run: cannot extract fakepci-2s4r | |\n");
        } else {
                row("off (the kubelet's admission)", root, t, off, devices, pod, false, &base);
                row("deviceLocalCPUs: prefer", root, t, prefer, devices, pod, false, &base);
                row("deviceLocalCPUs: prefer, draTopologyHints: align", root, t, both, devices, pod,
                    false, &base);
                row("the same, a CDI spec changed before each admission", root, t, both, devices,
                    pod, true, &base);
        }
        ncm_topo_free(t);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        (void)run(cmd);
        free(data);
        return 0;
}
