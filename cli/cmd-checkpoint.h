/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `nodecm checkpoint`: the kinds of checkpoint file it knows. The command reads the file once,
 * asks each kind's probe() in turn whether the content is one of its files, and hands the file
 * to the first that says yes. A new kind (the device manager's kubelet_internal_checkpoint)
 * plugs in by defining a cli_checkpoint_kind in its own cli/checkpoint-<kind>.c and adding one
 * line to the table in cmd-checkpoint.c.
 *
 * Every operation builds its output in OUT (the command emits it once, on success) and reports
 * failure through ERR with a one-line message that starts with the file name; the return value
 * is >= 0 or -code, and the exit status follows ncm_error_exit_status(): 1 for a file that
 * fails verification (NCM_E_CHECKSUM, NCM_E_INVALID_STATE), 2 for unreadable or foreign input.
 */
#ifndef NODECM_CLI_CMD_CHECKPOINT_H
#define NODECM_CLI_CMD_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <nodecm/buf.h>
#include <nodecm/cpuset.h>
#include <nodecm/cpustate.h>
#include <nodecm/error.h>
#include <nodecm/kubelet-version.h>
#include <nodecm/topology.h>

/* The file and the options of the subcommand, parsed once for every kind. */
typedef struct cli_checkpoint_args {
        const char *path; /* as given on the command line */
        const char *text; /* the whole file, NUL-terminated */
        size_t len;
        bool json;                     /* show --json */
        const char *policy;            /* --policy NAME: the configured policy, or NULL */
        const ncm_cpuset *reserved;    /* --reserved LIST, or NULL */
        bool strict;                   /* --strict (strict-cpu-reservation) */
        const ncm_topo *topo;          /* verify: the machine to validate against, or NULL */
        const char *topo_desc;         /* "--fsroot DIR", "this machine", ... */
        const ncm_container_ref *refs; /* --container ID=POD/NAME (V1 migration) */
        size_t nrefs;
        const char *output; /* rewrite --output FILE, or NULL for in place */
        bool fix_checksum;  /* rewrite --fix-checksum */
        bool fit;           /* rewrite --fit: fit the state to the machine in TOPO */
        char *const *drop;  /* rewrite --drop POD: pods whose assignments are removed */
        size_t ndrop;
        const char *reserved_memory;         /* --reserved-memory (the kubelet's flag syntax) */
        ncm_kubelet_version kubelet_version; /* --kubelet-version ({0, 0}: the newest) */
        bool has_kubelet_version;
} cli_checkpoint_args;

typedef struct cli_checkpoint_kind {
        /* The file name the kubelet gives this kind, e.g. "cpu_manager_state". */
        const char *name;
        /* 1 if TEXT is this kind, 0 if not, -EINVAL (ERR set) if it is not JSON at all. */
        int (*probe)(const char *text, size_t len, const char *path, ncm_error *err);
        /* One summary line in OUT when the file is valid. */
        int (*verify)(const cli_checkpoint_args *a, ncm_buf *out, ncm_error *err);
        /* Human-readable (or --json) contents in OUT. */
        int (*show)(const cli_checkpoint_args *a, ncm_buf *out, ncm_error *err);
        /* Rewrite in the kubelet's canonical form; NULL when the kind has no writer. */
        int (*rewrite)(const cli_checkpoint_args *a, ncm_buf *out, ncm_error *err);
} cli_checkpoint_kind;

extern const cli_checkpoint_kind cli_checkpoint_kind_cpu;
extern const cli_checkpoint_kind cli_checkpoint_kind_device;
extern const cli_checkpoint_kind cli_checkpoint_kind_memory;

#endif
