/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod resources requests as a client sends them, answered from a node that holds a pod with
 * devices: the first byte picks the method (and whether Get is served), the rest is the
 * request message.
 */
#include <stdlib.h>
#include <string.h>

#include <nodecm/podresources.h>
#include <nodecm/topology.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* kept for the process's life: the node borrows the topology and the configuration */
static ncm_node *node;
static ncm_topo *topo;
static ncm_node_config *cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        static const char cfg_text[] = "{\"cpuManagerPolicy\": \"static\", "
                                       "\"reservedSystemCPUs\": \"0\"}";
        static const char devices[] = "{\"example.com/gpu\": [{\"id\": \"g0\", \"numa\": [0]}, "
                                      "{\"id\": \"g1\", \"numa\": [0, 1]}, {\"id\": \"g2\"}]}";
        static const char pod_text[] =
                        "{\"metadata\": {\"uid\": \"u1\", \"name\": \"p\", \"namespace\": \"ns\"},"
                        " \"spec\": {\"initContainers\": [{\"name\": \"side\", \"restartPolicy\": "
                        "\"Always\"}], \"containers\": [{\"name\": \"app\", \"resources\": "
                        "{\"limits\": {\"cpu\": \"2\", \"memory\": \"1Gi\", \"example.com/gpu\": "
                        "\"2\"}}}]}}";
        ncm_node_options o = {.devices = devices, .devices_len = sizeof(devices) - 1};
        ncm_pod *pod = NULL;
        ncm_node_admission *a = NULL;

        (void)argc;
        (void)argv;
        if (ncm_topo_from_synthetic("package:2 numa:1 core:4 pu:1", &topo, NULL) < 0 ||
            ncm_node_config_parse(cfg_text, sizeof(cfg_text) - 1, "cfg", "", &cfg, NULL) < 0 ||
            ncm_node_new(topo, cfg, &o, &node, NULL) < 0 ||
            ncm_pod_parse(pod_text, sizeof(pod_text) - 1, "pod", &pod, NULL) < 0 ||
            ncm_node_admit(node, pod, 0, &a, NULL) < 0)
                abort();
        ncm_node_admission_free(a);
        ncm_pod_free(pod);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ncm_buf reply = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_rpc_code code;

        if (size < 1)
                return 0;
        (void)ncm_podres_handle(node, (ncm_podres_method)(data[0] % NCM_PODRES_N_METHODS),
                                (data[0] & 0x80) != 0, data + 1, size - 1, &reply, &code, &err);
        ncm_buf_done(&reply);
        return 0;
}
