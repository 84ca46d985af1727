/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The nodecm topology JSON reader. Whatever it accepts must write back (ncm_topo_format_json)
 * to text that reads to an equal topology and writes identically, and must format as a tree
 * (its PCI devices too).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/topology.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ncm_topo *t = NULL, *back = NULL;
        ncm_buf a = NCM_BUF_INIT, b = NCM_BUF_INIT, tree = NCM_BUF_INIT;

        if (ncm_topo_parse_json((const char *)data, size, "fuzz", &t, NULL) != 0)
                return 0;
        ncm_topo_format_json(t, &a);
        if (ncm_buf_failed(&a) || ncm_topo_parse_json(a.data, a.len, "again", &back, NULL) != 0 ||
            !ncm_topo_equal(t, back))
                abort();
        ncm_topo_format_json(back, &b);
        if (ncm_buf_failed(&b) || a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
                abort();
        ncm_topo_format_tree(t, &tree);
        ncm_pci_format_tree(ncm_topo_pci(t), &tree);
        ncm_buf_done(&a);
        ncm_buf_done(&b);
        ncm_buf_done(&tree);
        ncm_topo_free(t);
        ncm_topo_free(back);
        return 0;
}
