/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checkpoint inspection: read, check and repair the kubelet's checkpoint files
 * (cpu_manager_state, memory_manager_state, kubelet_internal_checkpoint) as a given kubelet
 * release would. The kind of file is recognised from its content; each kind verifies (one
 * summary line), shows (text or JSON) and, where the kubelet writes that kind, rewrites it in
 * the kubelet's canonical form (atomically, to the file itself or to an output file).
 *
 * Every operation builds its output in OUT and reports failure through ERR with a one-line
 * message that starts with the file name; the return value is >= 0 or -code:
 * NCM_E_CHECKSUM and NCM_E_INVALID_STATE for a file that fails verification, EINVAL for
 * foreign or malformed input. The messages name `nodecm checkpoint`'s options where an option
 * does not apply to the file.
 */
#ifndef NODECM_CHECKPOINT_H
#define NODECM_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/cpuset.h>
#include <nodecm/cpustate.h>
#include <nodecm/error.h>
#include <nodecm/kubelet-version.h>
#include <nodecm/topology.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The file and what the operation is asked: the options of `nodecm checkpoint`. */
typedef struct ncm_checkpoint_args {
        const char *path; /* the file's name, as messages show it */
        const char *text; /* the whole file, NUL-terminated */
        size_t len;
        bool json;                     /* show: JSON */
        const char *policy;            /* the configured CPU manager policy, or NULL */
        const ncm_cpuset *reserved;    /* the reserved CPUs, or NULL */
        bool strict;                   /* strict-cpu-reservation */
        const ncm_topo *topo;          /* verify: the machine to validate against, or NULL */
        const char *topo_desc;         /* how messages name it: "--fsroot DIR", "this machine" */
        const ncm_container_ref *refs; /* container ids for a V1 file's migration */
        size_t nrefs;
        const char *output; /* rewrite: the file to write, or NULL for the file itself */
        bool fix_checksum;  /* rewrite: accept a file whose checksum fails */
        bool fit;           /* rewrite: fit the state to the machine in TOPO */
        char *const *drop;  /* rewrite: pods whose assignments are removed */
        size_t ndrop;
        const char *reserved_memory;         /* --reserved-memory (the kubelet's flag syntax) */
        ncm_kubelet_version kubelet_version; /* the release ({0, 0}: the newest) */
        bool has_kubelet_version;
        /* Where warnings go, one line each ("FILE: ..."), or NULL to drop them. */
        ncm_buf *warnings;
} ncm_checkpoint_args;

/* A kind of checkpoint file. */
typedef struct ncm_checkpoint_kind ncm_checkpoint_kind;

/*
 * The kind of A's file, from its content, into *RET. -EINVAL (ERR set) when it is not JSON,
 * not a kind nodecm knows, or when A asks what does not apply to its kind (reserved memory of
 * a file that is not memory_manager_state).
 */
NCM_API int ncm_checkpoint_probe(const ncm_checkpoint_args *a, const ncm_checkpoint_kind **ret,
                                 ncm_error *err);
/* The file name the kubelet gives KIND: "cpu_manager_state", ... */
NCM_API const char *ncm_checkpoint_kind_name(const ncm_checkpoint_kind *kind) NCM_PURE;

/* One summary line in OUT when the file is valid for the release. */
NCM_API int ncm_checkpoint_verify(const ncm_checkpoint_kind *kind, const ncm_checkpoint_args *a,
                                  ncm_buf *out, ncm_error *err);
/* The contents, human-readable or (A->json) JSON, in OUT. */
NCM_API int ncm_checkpoint_show(const ncm_checkpoint_kind *kind, const ncm_checkpoint_args *a,
                                ncm_buf *out, ncm_error *err);
/* Rewrite the file (or A->output); what changed in OUT. -ENOTSUP for a kind without writer. */
NCM_API int ncm_checkpoint_rewrite(const ncm_checkpoint_kind *kind, const ncm_checkpoint_args *a,
                                   ncm_buf *out, ncm_error *err);

#ifdef __cplusplus
}
#endif

#endif
