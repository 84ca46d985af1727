/* SPDX-License-Identifier: Apache-2.0 */
/* Checkpoint inspection: the kinds, recognised from the content, and the operations. */
#include <errno.h>

#include <nodecm/memorymanager.h>
#include "inspect-internal.h"

/* Every kind of checkpoint file, tried in order. */
static const ncm_checkpoint_kind *const kinds[] = {
                /* before the CPU manager's: a memory_manager_state has policyName and entries
                 * too, but only it has machineState */
                &ncm__checkpoint_kind_memory,
                &ncm__checkpoint_kind_cpu,
                &ncm__checkpoint_kind_device,
                NULL,
};

int ncm_checkpoint_probe(const ncm_checkpoint_args *a, const ncm_checkpoint_kind **ret,
                         ncm_error *err)
{
        const ncm_checkpoint_kind *kind = NULL;

        *ret = NULL;
        for (size_t i = 0; kinds[i] && !kind; i++) {
                int r = kinds[i]->probe(a->text, a->len, a->path, err);
                if (r < 0)
                        return r;
                if (r > 0)
                        kind = kinds[i];
        }
        if (!kind)
                return ncm_error_set(err, EINVAL, "%s: not a checkpoint file nodecm knows (%s)",
                                     a->path,
                                     "expected cpu_manager_state, memory_manager_state or "
                                     "kubelet_internal_checkpoint");
        if (a->reserved_memory && kind != &ncm__checkpoint_kind_memory)
                return ncm_error_set(err, EINVAL, "%s: %s: --reserved-memory applies to %s files",
                                     a->path, kind->name, NCM_MEM_CHECKPOINT_NAME);
        *ret = kind;
        return 0;
}

const char *ncm_checkpoint_kind_name(const ncm_checkpoint_kind *kind)
{
        return kind->name;
}

int ncm_checkpoint_verify(const ncm_checkpoint_kind *kind, const ncm_checkpoint_args *a,
                          ncm_buf *out, ncm_error *err)
{
        return kind->verify(a, out, err);
}

int ncm_checkpoint_show(const ncm_checkpoint_kind *kind, const ncm_checkpoint_args *a, ncm_buf *out,
                        ncm_error *err)
{
        return kind->show(a, out, err);
}

int ncm_checkpoint_rewrite(const ncm_checkpoint_kind *kind, const ncm_checkpoint_args *a,
                           ncm_buf *out, ncm_error *err)
{
        if (!kind->rewrite)
                return ncm_error_set(err, ENOTSUP, "%s: %s files cannot be rewritten", a->path,
                                     kind->name);
        return kind->rewrite(a, out, err);
}
