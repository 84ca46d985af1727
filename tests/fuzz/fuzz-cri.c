/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI messages the proxy and the client decode, from bytes a kubelet or a runtime (or
 * anyone on the socket) sends: every decoder, then the patches built on what decoded.
 * Input: 1 selector byte, then the message.
 */
#include <stdlib.h>
#include <string.h>

#include <nodecm/cri.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ncm_buf out = NCM_BUF_INIT;
        unsigned sel;

        if (size < 1)
                return 0;
        sel = data[0] % 8;
        data++;
        size--;
        switch (sel) {
        case 0: {
                ncm_cri_container_config c;
                const ncm_runtime_kv ann[] = {{"a", "b"}};
                const char *const cdi[] = {"v.com/x=y"};
                const ncm_cri_container_patch p = {.cpuset_cpus = "1-2",
                                                   .cpuset_mems = "0",
                                                   .annotations = ann,
                                                   .n_annotations = 1,
                                                   .cdi_devices = cdi,
                                                   .n_cdi_devices = 1};
                if (ncm_cri_decode_create_container(data, size, &c, NULL) == 0) {
                        /* what decodes is patched, or refused when it would not decode
                         * again; what is patched decodes with nodecm's fields */
                        ncm_cri_container_config_done(&c);
                        if (ncm_cri_patch_create_container(data, size, &p, &out, NULL) != 0)
                                break;
                        if (ncm_cri_decode_create_container((const uint8_t *)out.data, out.len, &c,
                                                            NULL) != 0)
                                abort();
                        if (strcmp(c.resources.cpuset_cpus, "1-2") != 0)
                                abort();
                        ncm_cri_container_config_done(&c);
                }
                break;
        }
        case 1: {
                ncm_cri_sandbox_config s;
                if (ncm_cri_decode_run_pod_sandbox(data, size, &s, NULL) == 0)
                        ncm_cri_sandbox_config_done(&s);
                break;
        }
        case 2: {
                ncm_cri_resources r;
                char *id = NULL;
                if (ncm_cri_decode_update_resources(data, size, &id, &r, NULL) == 0) {
                        free(id);
                        ncm_cri_resources_done(&r);
                        if (ncm_cri_patch_update_resources(data, size, "3", NULL, &out, NULL) ==
                            0) {
                                if (ncm_cri_decode_update_resources((const uint8_t *)out.data,
                                                                    out.len, &id, &r, NULL) != 0)
                                        abort();
                                free(id);
                                ncm_cri_resources_done(&r);
                        }
                }
                break;
        }
        case 3: {
                ncm_cri_container *v = NULL;
                size_t n = 0;
                if (ncm_cri_decode_containers(data, size, &v, &n, NULL) == 0)
                        ncm_cri_containers_free(v, n);
                break;
        }
        case 4: {
                ncm_cri_sandbox *v = NULL;
                size_t n = 0;
                if (ncm_cri_decode_sandboxes(data, size, &v, &n, NULL) == 0)
                        ncm_cri_sandboxes_free(v, n);
                break;
        }
        case 5: {
                ncm_cri_container c;
                if (ncm_cri_decode_container_status(data, size, &c, NULL) == 0)
                        ncm_cri_container_done(&c);
                break;
        }
        case 6: {
                ncm_cri_version v;
                if (ncm_cri_decode_version(data, size, &v, NULL) == 0)
                        ncm_cri_version_done(&v);
                break;
        }
        default: {
                char *id = NULL;
                if (ncm_cri_decode_id(data, size, &id, NULL) == 0)
                        free(id);
                break;
        }
        }
        ncm_buf_done(&out);
        return 0;
}
