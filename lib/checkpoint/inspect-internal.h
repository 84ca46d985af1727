/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checkpoint inspection inside the library: each kind of file is a table of operations in its
 * own inspect-<kind>.c, listed once in inspect.c, which asks each kind's probe() in turn
 * whether the content is one of its files.
 */
#ifndef NCM_CHECKPOINT_INSPECT_INTERNAL_H
#define NCM_CHECKPOINT_INSPECT_INTERNAL_H

#include <nodecm/checkpoint.h>

struct ncm_checkpoint_kind {
        /* The file name the kubelet gives this kind, e.g. "cpu_manager_state". */
        const char *name;
        /* 1 if TEXT is this kind, 0 if not, -EINVAL (ERR set) if it is not JSON at all. */
        int (*probe)(const char *text, size_t len, const char *path, ncm_error *err);
        int (*verify)(const ncm_checkpoint_args *a, ncm_buf *out, ncm_error *err);
        int (*show)(const ncm_checkpoint_args *a, ncm_buf *out, ncm_error *err);
        /* NULL when the kind has no writer. */
        int (*rewrite)(const ncm_checkpoint_args *a, ncm_buf *out, ncm_error *err);
};

extern const ncm_checkpoint_kind ncm__checkpoint_kind_cpu;
extern const ncm_checkpoint_kind ncm__checkpoint_kind_device;
extern const ncm_checkpoint_kind ncm__checkpoint_kind_memory;

#endif
