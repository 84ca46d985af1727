/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubelet_internal_checkpoint: whatever parses must render, checksum, show and restore, and
 * the file nodecm writes from it must parse back to the same file (format is a fixed point).
 * The AllocResp bytes go through the protobuf decoder and back through the encoder.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/devicemanager.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_alloc_resp(const unsigned char *bytes, size_t len)
{
        ncm_devmgr_alloc_resp *r = NULL, *back = NULL;
        unsigned char *enc = NULL, *enc2 = NULL;
        size_t n = 0, n2 = 0;

        if (ncm_devmgr_alloc_resp_decode(bytes, len, &r, NULL) < 0)
                return;
        /* Encoding what was decoded, then decoding and encoding again, is stable. */
        if (ncm_devmgr_alloc_resp_encode(r, &enc, &n, NULL) < 0 ||
            ncm_devmgr_alloc_resp_decode(enc, n, &back, NULL) < 0 ||
            ncm_devmgr_alloc_resp_encode(back, &enc2, &n2, NULL) < 0 || n != n2 ||
            memcmp(enc, enc2, n) != 0)
                abort();
        free(enc);
        free(enc2);
        ncm_devmgr_alloc_resp_free(back);
        ncm_devmgr_alloc_resp_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ncm_devmgr_checkpoint *cp = NULL, *again = NULL, *from_mgr = NULL;
        ncm_buf out = NCM_BUF_INIT, out2 = NCM_BUF_INIT, show = NCM_BUF_INIT;
        ncm_devmgr *m = NULL;

        if (ncm_devmgr_checkpoint_parse((const char *)data, size, "fuzz", &cp, NULL) < 0)
                return 0;
        (void)ncm_devmgr_checkpoint_verify(cp, NULL);
        ncm_devmgr_checkpoint_format(cp, &out);
        if (ncm_buf_failed(&out))
                abort();
        if (ncm_devmgr_checkpoint_parse(out.data, out.len, "again", &again, NULL) < 0)
                abort();
        if (ncm_devmgr_checkpoint_verify(again, NULL) < 0)
                abort();
        ncm_devmgr_checkpoint_format(again, &out2);
        if (out.len != out2.len || memcmp(out.data, out2.data, out.len) != 0)
                abort();
        ncm_devmgr_checkpoint_show(cp, 0, &show);
        ncm_devmgr_checkpoint_show(cp, NCM_DEVMGR_SHOW_JSON, &show);
        for (size_t i = 0; i < cp->n_entries; i++)
                check_alloc_resp(cp->entries[i].alloc_resp, cp->entries[i].alloc_resp_len);

        /* The kubelet's readCheckpoint, then its writeCheckpoint. */
        if (ncm_devmgr_new(NULL, &m, NULL) < 0)
                abort();
        if (ncm_devmgr_restore(m, cp, NULL, NULL) == 0 &&
            ncm_devmgr_to_checkpoint(m, &from_mgr, NULL) == 0) {
                ncm_buf_reset(&out2);
                ncm_devmgr_checkpoint_format(from_mgr, &out2);
                ncm_devmgr_checkpoint_free(from_mgr);
        }
        ncm_devmgr_free(m);
        ncm_buf_done(&out);
        ncm_buf_done(&out2);
        ncm_buf_done(&show);
        ncm_devmgr_checkpoint_free(again);
        ncm_devmgr_checkpoint_free(cp);
        return 0;
}
