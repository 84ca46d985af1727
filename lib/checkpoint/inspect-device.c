/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device manager's kubelet_internal_checkpoint as a kind of `nodecm checkpoint`.
 *
 * verify: decode as the kubelet does and check the checksum (a mismatch is exit 1; the kubelet
 * itself would silently start with no device state). show: the decoded contents, AllocResp
 * included. rewrite: the kubelet's exact bytes with a fresh checksum, optionally without the
 * entries of drained pods (--drop) or accepting a hand-edited file (--fix-checksum).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>

#include <nodecm/devicemanager.h>
#include <nodecm/fs.h>
#include "inspect-internal.h"

static int device_probe(const char *text, size_t len, const char *path, ncm_error *err)
{
        return ncm_devmgr_checkpoint_probe(text, len, path, err);
}

/* The options that describe a CPU manager configuration mean nothing for this file. */
static int refuse_cpu_options(const ncm_checkpoint_args *a, ncm_error *err)
{
        if (a->policy || a->reserved || a->strict || a->topo || a->nrefs || a->fit)
                return ncm_error_set(err, EINVAL,
                                     "%s: %s: --policy, --reserved, --strict, --container, --fit "
                                     "and topology sources apply to cpu_manager_state files",
                                     a->path, NCM_DEVMGR_CHECKPOINT_NAME);
        return 0;
}

static int parse(const ncm_checkpoint_args *a, ncm_devmgr_checkpoint **ret, ncm_error *err)
{
        int r = refuse_cpu_options(a, err);
        if (r < 0)
                return r;
        return ncm_devmgr_checkpoint_parse(a->text, a->len, a->path, ret, err);
}

static void summary(ncm_buf *out, const ncm_devmgr_checkpoint *cp)
{
        size_t pods = 0;
        for (size_t i = 0; i < cp->n_entries; i++) {
                bool seen = false;
                for (size_t j = 0; j < i && !seen; j++)
                        seen = strcmp(cp->entries[i].pod_uid, cp->entries[j].pod_uid) == 0;
                pods += !seen;
        }
        ncm_buf_printf(out, "%zu entr%s (%zu pod%s), %zu registered resource%s", cp->n_entries,
                       cp->n_entries == 1 ? "y" : "ies", pods, pods == 1 ? "" : "s",
                       cp->n_registered, cp->n_registered == 1 ? "" : "s");
}

static int device_verify(const ncm_checkpoint_args *a, ncm_buf *out, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
        int r = parse(a, &cp, err);
        if (r < 0)
                return r;
        r = ncm_devmgr_checkpoint_verify(cp, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s", a->path);
        ncm_buf_printf(out, "%s: %s, ", a->path, NCM_DEVMGR_CHECKPOINT_NAME);
        summary(out, cp);
        ncm_buf_printf(out, ", checksum %" PRIu64 " verified\n", cp->checksum);
        return 0;
}

static int device_show(const ncm_checkpoint_args *a, ncm_buf *out, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
        int r;
        if (a->reserved)
                return ncm_error_set(err, EINVAL,
                                     "%s: %s: --reserved applies to cpu_manager_state "
                                     "files",
                                     a->path, NCM_DEVMGR_CHECKPOINT_NAME);
        r = parse(a, &cp, err);
        if (r < 0)
                return r;
        ncm_devmgr_checkpoint_show(cp, a->json ? NCM_DEVMGR_SHOW_JSON : 0, out);
        return 0;
}

static int device_rewrite(const ncm_checkpoint_args *a, ncm_buf *out, ncm_error *err)
{
        ncm_autoptr(ncm_devmgr_checkpoint) cp = NULL;
        const char *target = a->output ? a->output : a->path;
        ncm_buf text = NCM_BUF_INIT;
        size_t dropped = 0;
        bool fixed = false;
        int r = parse(a, &cp, err);
        if (r < 0)
                return r;
        if (ncm_devmgr_checkpoint_verify(cp, NULL) < 0) {
                if (!a->fix_checksum) {
                        ncm_error e = NCM_ERROR_INIT;
                        (void)ncm_devmgr_checkpoint_verify(cp, &e);
                        return ncm_error_set(err, NCM_E_CHECKSUM,
                                             "%s: %s (--fix-checksum accepts the content as it is)",
                                             a->path, e.msg);
                }
                fixed = true;
        }
        for (size_t i = 0; i < a->ndrop; i++) {
                int n = ncm_devmgr_checkpoint_drop_pod(cp, a->drop[i]);
                if (n <= 0)
                        return ncm_error_set(err, NCM_E_NOT_FOUND, "%s: --drop %s: no such pod",
                                             a->path, a->drop[i]);
                dropped += (size_t)n;
        }
        ncm_devmgr_checkpoint_format(cp, &text);
        if (ncm_buf_failed(&text)) {
                ncm_buf_done(&text);
                return ncm_error_set(err, ENOMEM, "%s: out of memory", a->path);
        }
        if (!a->output && text.len == a->len && memcmp(text.data, a->text, a->len) == 0) {
                ncm_buf_printf(out,
                               "%s: already in the kubelet's form (checksum %" PRIu64
                               "), left as it is\n",
                               a->path, ncm_devmgr_checkpoint_checksum(cp));
                ncm_buf_done(&text);
                return 0;
        }
        /* Go's os.CreateTemp makes the kubelet's file 0600. */
        r = ncm_fs_write_atomic(AT_FDCWD, target, text.data, text.len, 0600, err);
        ncm_buf_done(&text);
        if (r < 0)
                return r;
        ncm_buf_printf(out, "%s: written as %s with checksum %" PRIu64 "%s", target,
                       NCM_DEVMGR_CHECKPOINT_NAME, ncm_devmgr_checkpoint_checksum(cp),
                       fixed ? ", checksum recomputed" : "");
        if (dropped)
                ncm_buf_printf(out, "; %zu entr%s of drained pods removed", dropped,
                               dropped == 1 ? "y" : "ies");
        ncm_buf_putc(out, '\n');
        return 0;
}

const ncm_checkpoint_kind ncm__checkpoint_kind_device = {
                .name = NCM_DEVMGR_CHECKPOINT_NAME,
                .probe = device_probe,
                .verify = device_verify,
                .show = device_show,
                .rewrite = device_rewrite,
};
