/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pure parsers of PCI discovery, on the raw bytes. The first byte picks one: 0 a PCI
 * address (ncm_pci_parse_address: whatever it accepts it writes canonically, and the canonical
 * form parses to itself), 1 a sysfs hex file (ncm__pci_parse_hex), 2 a sysfs path
 * (ncm__pci_path_chain: the address it finds parses, as do the root's bridges), 3 a uevent
 * file (ncm__pci_parse_uevent: what it accepts is in range).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topology.h>
#include "topology/topology-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s, a[NCM_PCI_ADDRESS_MAX], b[NCM_PCI_ADDRESS_MAX];

        if (size < 1 || size > 4096)
                return 0;
        s = malloc(size);
        if (!s)
                return 0;
        memcpy(s, data + 1, size - 1);
        s[size - 1] = '\0';
        switch (data[0] % 4) {
        case 0:
                if (ncm_pci_parse_address(s, a) == 0 &&
                    (ncm_pci_parse_address(a, b) != 0 || strcmp(a, b) != 0))
                        abort();
                break;
        case 1: {
                int64_t v = -1;
                if (ncm__pci_parse_hex(s, 0xffffff, &v) == 0 && (v < 0 || v > 0xffffff))
                        abort();
                break;
        }
        case 3: {
                int64_t c = -1;
                int32_t v = -1, d = -1;
                if (ncm__pci_parse_uevent(s, &c, &v, &d) == 0 &&
                    (c < 0 || c > 0xffffff || v < 0 || v > 0xffff || d < 0 || d > 0xffff))
                        abort();
                break;
        }
        default: {
                char *root = NULL, **br = NULL;
                size_t nb = 0;
                int r = ncm__pci_path_chain(s, a, true, &root, &br, &nb);
                if (r > 0) {
                        if (ncm_pci_parse_address(a, b) != 0)
                                abort();
                        for (size_t i = 0; i < nb; i++)
                                if (ncm_pci_parse_address(br[i], b) != 0)
                                        abort();
                }
                free(root);
                ncm_pci_strv_free(br, nb);
        }
        }
        free(s);
        return 0;
}
