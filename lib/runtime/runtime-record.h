/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal to lib: the record of the containers a runtime integration placed (the OCI hook, the
 * CRI proxy), kept in a node's root directory (runtime-record.c says what the file holds).
 */
#ifndef NCM_RUNTIME_RECORD_H
#define NCM_RUNTIME_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <nodecm/buf.h>
#include <nodecm/error.h>
#include <nodecm/fs.h>
#include <nodecm/node.h>
#include <nodecm/runtime.h>

/* One container. */
typedef struct ncm__rt_container {
        char *id;       /* "" while its creation is in flight (CRI) */
        char *pod;      /* the pod's UID */
        char *pod_name; /* "" when none */
        char *pod_ns;   /* "" when none */
        char *name;     /* the container's name in its pod */
        ncm_runtime_kind kind;
        bool has_qos;
        ncm_qos_class qos;
        char *cgroup;  /* OCI: below the cpuset hierarchy (v1) or the root (v2); else "" */
        char *sandbox; /* CRI: its pod sandbox's id; else "" */
        ncm_runtime_resources resources;
        uint64_t seq; /* creation order */
        bool orphan;  /* not kept: recorded without an id by an earlier process (CRI) */
        /* the pod annotations nodecm reads (nodecm.io/isolated-cpus, CRI-O's knobs) among the
         * container's, for its rebuilt pod ("podAnnotations" in the file) */
        ncm_pod_annotation *ann;
        size_t n_ann;
} ncm__rt_container;

/*
 * The annotations of A[0..N) that a pod's spec would carry for nodecm (ncm_pod_annotation_known)
 * into E, replacing any; a later one of the same key wins (values are checked when the pod is
 * rebuilt). -ENOMEM.
 */
int ncm__rt_container_set_annotations(ncm__rt_container *e, const ncm_runtime_kv *a, size_t n);

/* A pod sandbox (CRI): its id and pod. */
typedef struct ncm__rt_sandbox {
        char *id;
        char *pod;
} ncm__rt_sandbox;

typedef struct ncm__rt_record {
        ncm__rt_container *v; /* in creation order */
        size_t n, cap;
        uint64_t next_seq;
        uint64_t generation; /* rewrites of the whole record (the CRI's journal) */
        ncm__rt_sandbox *sandboxes;
        size_t n_sandboxes, cap_sandboxes;
} ncm__rt_record;

void ncm__rt_container_done(ncm__rt_container *e);
/* A deep copy of E. -ENOMEM. */
int ncm__rt_container_dup(const ncm__rt_container *e, ncm__rt_container *ret);
/* The pod of NEWEST rebuilt from the record: its containers in creation order (NEWEST among
 * them), the pod's name, namespace and QoS class from NEWEST (ncm_runtime_pod_build). */
int ncm__rt_record_pod(const ncm__rt_record *reg, const ncm__rt_container *newest, ncm_pod **ret,
                       ncm_error *err);
void ncm__rt_record_done(ncm__rt_record *r);
/* Read DIR/FILE (missing: empty). Errors name the file and entry (-EINVAL). */
int ncm__rt_record_load(const char *dir, const char *file, ncm__rt_record *r, ncm_error *err);
/* Parse TEXT as the file NAME holds it. */
int ncm__rt_record_parse(const char *text, size_t len, const char *name, ncm__rt_record *r,
                         ncm_error *err);
void ncm__rt_record_format(const ncm__rt_record *r, ncm_buf *b);
/* Write it atomically (0600) to DIR/FILE; FLAGS: NCM_FS_WRITE_* (ncm_fs_write_atomic_flags). */
int ncm__rt_record_save(const char *dir, const char *file, const ncm__rt_record *r, unsigned flags,
                        ncm_error *err);
/*
 * The end of a record written with NCM_FS_WRITE_NO_DIRSYNC before node N's transaction: DIR's
 * fsync, unless N has fsynced it since SYNCS (ncm_node_dir_syncs() before the write), which made
 * the record's rename durable too. 0 or -errno.
 */
int ncm__rt_record_settle(const char *dir, const ncm_node *n, uint64_t syncs, ncm_error *err);
/* The journal (CRI; runtime-record.c says what it holds): the line of container E added (its
 * SANDBOX too when not given before: NULL), and the line of its runtime id, as of GEN. */
void ncm__rt_journal_add(ncm_buf *b, uint64_t gen, const ncm__rt_container *e,
                         const ncm__rt_sandbox *sandbox);
void ncm__rt_journal_id(ncm_buf *b, uint64_t gen, const char *pod, const char *name,
                        const char *id);
/*
 * Put the journal TEXT (the file NAME holds) into R: the lines of R's generation, in order.
 * Returns how many lines there were (a last one cut short counted: the journal is due to be
 * emptied), or -EINVAL naming NAME:LINE and the field.
 */
int ncm__rt_journal_apply(const char *text, size_t len, const char *name, ncm__rt_record *r,
                          ncm_error *err);
/* ncm__rt_journal_apply() of DIR/FILE (missing: 0 lines). */
int ncm__rt_journal_load(const char *dir, const char *file, ncm__rt_record *r, ncm_error *err);
/* Index of container ID ("" never matches) / of container NAME of POD; -1 when absent. */
ssize_t ncm__rt_record_find_id(const ncm__rt_record *r, const char *id);
ssize_t ncm__rt_record_find_name(const ncm__rt_record *r, const char *pod, const char *name);
/* Append E (taken) with the next sequence number. -ENOMEM. */
int ncm__rt_record_add(ncm__rt_record *r, ncm__rt_container *e);
/* Remove container I. */
void ncm__rt_record_remove(ncm__rt_record *r, size_t i);
/* Whether POD still has a container. */
bool ncm__rt_record_has_pod(const ncm__rt_record *r, const char *pod);
/* Sandboxes: find by id (-1), add (a known id: nothing), remove. */
ssize_t ncm__rt_record_find_sandbox(const ncm__rt_record *r, const char *id);
int ncm__rt_record_add_sandbox(ncm__rt_record *r, const char *id, const char *pod);
void ncm__rt_record_remove_sandbox(ncm__rt_record *r, size_t i);

#endif
