/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a device plugin sends the host, decoded as the host decodes it (lib/deviceplugin/
 * dp-wire.c): the first byte picks the message (RegisterRequest with the kubelet's checks,
 * ListAndWatchResponse fed to a device manager, DevicePluginOptions,
 * PreferredAllocationResponse, AllocateResponse), the rest is the message.
 */
#include <stdlib.h>
#include <string.h>

#include "deviceplugin/dp-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ncm_error err = NCM_ERROR_INIT;

        if (size < 1)
                return 0;
        switch (data[0] % 5) {
        case 0: {
                ncm__dp_register r = {0};
                if (ncm__dp_register_decode(data + 1, size - 1, &r, &err) == 0) {
                        (void)ncm__dp_register_check(&r, 40, &err);
                        ncm__dp_register_done(&r);
                }
                break;
        }
        case 1: {
                ncm__dp_snapshot s = {0};
                if (ncm__dp_snapshot_decode(data + 1, size - 1, &s, &err) == 0) {
                        static const int numa[] = {0, 1};
                        ncm_devmgr_config cfg = {.numa_nodes = numa, .n_numa_nodes = 2};
                        ncm_devmgr *m = NULL;
                        uint64_t ep = 0;
                        if (ncm_devmgr_new(&cfg, &m, &err) == 0 &&
                            ncm_devmgr_plugin_connect(m, "example.com/dev", &ncm_devmgr_standin_ops,
                                                      NULL, &ncm_devmgr_standin_options, &ep,
                                                      &err) == 0)
                                (void)ncm_devmgr_update_devices(m, "example.com/dev", ep, s.devices,
                                                                s.n, &err);
                        ncm_devmgr_free(m);
                        ncm__dp_snapshot_done(&s);
                }
                break;
        }
        case 2: {
                ncm_devmgr_plugin_options o;
                (void)ncm__dp_options_decode(data + 1, size - 1, &o, &err);
                break;
        }
        case 3: {
                char **ids = NULL;
                size_t n = 0;
                if (ncm__dp_preferred_decode(data + 1, size - 1, &ids, &n, &err) == 0) {
                        for (size_t i = 0; i < n; i++)
                                free(ids[i]);
                        free(ids);
                }
                break;
        }
        default: {
                ncm_devmgr_alloc_resp *r = NULL;
                if (ncm__dp_allocate_decode(data + 1, size - 1, &r, &err) == 0)
                        ncm_devmgr_alloc_resp_free(r);
                break;
        }
        }
        return 0;
}
