/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU manager's state and its kubelet-compatible checkpoint file `cpu_manager_state`.
 *
 * The state is what the kubelet's cpumanager/state package keeps: the policy name, the default
 * CPU set (the shared pool) and, per pod UID and container name, the CPU set assigned to that
 * container. Pods and containers are kept sorted bytewise (strcmp order), so every listing,
 * every error that names "the first offender" and every file written is deterministic where the
 * kubelet iterates Go maps in random order.
 *
 * Three parts:
 *  1. the in-memory state (ncm_cpu_state_*), with an optional persistence hook so that, as in
 *     the kubelet, every mutation rewrites the checkpoint;
 *  2. start-up validation (ncm_cpu_state_validate), the static policy's validateState;
 *  3. the checkpoint file (ncm_cpu_checkpoint_*): reading V1, V2, V3 and V4 files with their
 *     checksums as a chosen kubelet release reads them (each release tries the formats in its
 *     own order and words its refusals its own way), restoring (and migrating V1) into a state,
 *     and writing the layout of the state's kubelet release byte for byte (V2 up to 1.36, V4
 *     from 1.37; docs/checkpoints.md "The formats by kubelet release").
 *
 * Strings (pod UIDs, container names, policy names) are NUL-terminated and may be empty; the
 * state copies everything it is given. Nothing here is thread-safe: callers serialise access to
 * one state (the kubelet holds a mutex around every call).
 */
#ifndef NODECM_CPUSTATE_H
#define NODECM_CPUSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/cpuset.h>
#include <nodecm/error.h>
#include <nodecm/kubelet-version.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* 1. In-memory state                                                                          */
/* ------------------------------------------------------------------------------------------ */

typedef struct ncm_cpu_state ncm_cpu_state;

/*
 * Persistence hook, called after every successful in-memory mutation with the state as it now
 * is. Return >= 0 on success or -errno / -NCM_E_* with ERR filled. The mutation is kept in memory
 * even when the hook fails (the kubelet logs "Failed to store state to checkpoint" and carries
 * on); the mutator then returns the hook's error so the caller can decide.
 */
typedef int (*ncm_cpu_state_persist_fn)(const ncm_cpu_state *s, void *userdata, ncm_error *err);

/*
 * A new empty state: policy POLICY_NAME (NULL means ""), empty default set, no assignments, no
 * persistence hook. NULL when out of memory.
 */
NCM_API ncm_cpu_state *ncm_cpu_state_new(const char *policy_name);

/* Free S (NULL is fine), releasing the hook's userdata through its free function. Returns NULL. */
NCM_API ncm_cpu_state *ncm_cpu_state_free(ncm_cpu_state *s);
NCM_DEFINE_AUTOPTR(ncm_cpu_state, ncm_cpu_state_free)

/*
 * A deep copy of S: policy, default set and assignments (empty pods included). The copy has no
 * persistence hook. NULL when out of memory.
 */
NCM_API ncm_cpu_state *ncm_cpu_state_dup(const ncm_cpu_state *s);

/*
 * true when A and B have the same policy name, default set and assignments. A pod present with
 * no containers (possible only in a restored file, `"entries":{"pod":{}}`) counts, as it does
 * for Go's reflect.DeepEqual in the kubelet tests.
 */
NCM_API bool ncm_cpu_state_equal(const ncm_cpu_state *a, const ncm_cpu_state *b) NCM_PURE;

/* The policy name ("static", "none", ...). Never NULL. */
NCM_API const char *ncm_cpu_state_policy(const ncm_cpu_state *s) NCM_PURE;

/* The default CPU set (shared pool). Never NULL; owned by S, valid until the next mutation. */
NCM_API const ncm_cpuset *ncm_cpu_state_default(const ncm_cpu_state *s) NCM_PURE;

/*
 * kubelet GetCPUSet: the set assigned to (POD, CONTAINER), or NULL when there is none. Owned by
 * S, valid until the next mutation.
 */
NCM_API const ncm_cpuset *ncm_cpu_state_get(const ncm_cpu_state *s, const char *pod,
                                            const char *container) NCM_PURE;

/* kubelet GetCPUSetOrDefault: the container's set if assigned, else the default set. */
NCM_API const ncm_cpuset *ncm_cpu_state_get_or_default(const ncm_cpu_state *s, const char *pod,
                                                       const char *container) NCM_PURE;

/*
 * kubelet SetCPUSet: assign a copy of CPUS (which may be empty) to (POD, CONTAINER), replacing any
 * previous set, then persist. 0 on success; -ENOMEM (state unchanged) or the hook's error.
 */
NCM_API int ncm_cpu_state_set(ncm_cpu_state *s, const char *pod, const char *container,
                              const ncm_cpuset *cpus, ncm_error *err);

/*
 * kubelet SetDefaultCPUSet: replace the default set with a copy of CPUS, then persist.
 * 0 on success; -ENOMEM (state unchanged) or the hook's error.
 */
NCM_API int ncm_cpu_state_set_default(ncm_cpu_state *s, const ncm_cpuset *cpus, ncm_error *err);

/*
 * kubelet Delete: remove (POD, CONTAINER); the pod's key goes too when it has no container left.
 * Persists in every case, as the kubelet does, even when nothing was removed. Returns 1 if an
 * entry was removed, 0 if there was none, or the hook's error.
 */
NCM_API int ncm_cpu_state_delete(ncm_cpu_state *s, const char *pod, const char *container,
                                 ncm_error *err);

/*
 * Remove every container of POD and the pod's key (not a kubelet state call: the kubelet deletes
 * container by container; this is for repair tools and pod removal). Persists. Returns the
 * number of containers removed (0 if the pod was unknown) or the hook's error.
 */
NCM_API int ncm_cpu_state_delete_pod(ncm_cpu_state *s, const char *pod, ncm_error *err);

/*
 * kubelet ClearState: empty default set, no assignments (the policy name stays). Persists.
 */
NCM_API int ncm_cpu_state_clear(ncm_cpu_state *s, ncm_error *err);

/*
 * kubelet SetDefaultCPUSet + SetCPUAssignments in one step: make S's default set and assignments
 * a copy of SRC's (S keeps its own policy name and hook), then persist once. -ENOMEM leaves S
 * unchanged.
 */
NCM_API int ncm_cpu_state_assign(ncm_cpu_state *s, const ncm_cpu_state *src, ncm_error *err);

/*
 * Install (or with FN == NULL remove) the persistence hook. USERDATA is handed to FN and, when S
 * is freed or the hook replaced, to FREE_USERDATA (may be NULL); with FN == NULL both are
 * ignored and the previous hook's userdata is released. Installing does not persist; call
 * ncm_cpu_state_persist() for that.
 */
NCM_API void ncm_cpu_state_set_persist(ncm_cpu_state *s, ncm_cpu_state_persist_fn fn,
                                       void *userdata, void (*free_userdata)(void *));

/* Run the persistence hook now (kubelet storeState). 0 when there is no hook. */
NCM_API int ncm_cpu_state_persist(const ncm_cpu_state *s, ncm_error *err);

/*
 * Hold persistence: until ncm_cpu_state_flush(), mutations change S without running the hook.
 * For a caller that makes several changes as one transaction: the kubelet writes after every
 * Set, and a crash between the default set's write and the container's leaves a file its
 * own restart refuses ("current set of available CPUs ... doesn't match"); one write at the
 * end leaves either state.
 */
NCM_API void ncm_cpu_state_hold(ncm_cpu_state *s);

/* Release the hold and, when S changed while held, run the hook once. */
NCM_API int ncm_cpu_state_flush(ncm_cpu_state *s, ncm_error *err);

/*
 * The kubelet release whose cpu_manager_state layout S is written in
 * (ncm_cpu_checkpoint_format_state() and everything that writes through it): {0, 0}, the default
 * of a new state, is the newest released kubelet. A restored state carries the release it was
 * read as; ncm_cpu_state_dup() copies it; ncm_cpu_state_equal() and ncm_cpu_state_assign() ignore
 * it (it is how the state is written, not what it holds). Setting it does not persist.
 */
NCM_API void ncm_cpu_state_set_kubelet_version(ncm_cpu_state *s, ncm_kubelet_version v);
NCM_API ncm_kubelet_version ncm_cpu_state_kubelet_version(const ncm_cpu_state *s) NCM_PURE;

/* Number of pod keys (pods with no container included). */
NCM_API size_t ncm_cpu_state_num_pods(const ncm_cpu_state *s) NCM_PURE;
/* Number of (pod, container) assignments. */
NCM_API size_t ncm_cpu_state_num_entries(const ncm_cpu_state *s) NCM_PURE;

/*
 * Indexed access in sorted order: pods by UID, then each pod's containers by name (bytewise).
 * Indexes must be in range. Pointers are owned by S and valid until the next mutation.
 */
NCM_API const char *ncm_cpu_state_pod_uid(const ncm_cpu_state *s, size_t pod) NCM_PURE;
/* The index of pod UID in that order, or SIZE_MAX when S holds no key for it. */
NCM_API size_t ncm_cpu_state_pod_index(const ncm_cpu_state *s, const char *uid) NCM_PURE;
NCM_API size_t ncm_cpu_state_pod_num_containers(const ncm_cpu_state *s, size_t pod) NCM_PURE;
NCM_API const char *ncm_cpu_state_container_name(const ncm_cpu_state *s, size_t pod,
                                                 size_t ctr) NCM_PURE;
NCM_API const ncm_cpuset *ncm_cpu_state_container_cpus(const ncm_cpu_state *s, size_t pod,
                                                       size_t ctr) NCM_PURE;

/* Position in an iteration over all assignments; start from NCM_CPU_STATE_ITER_INIT. */
typedef struct ncm_cpu_state_iter {
        size_t pod;
        size_t ctr;
} ncm_cpu_state_iter;
#define NCM_CPU_STATE_ITER_INIT                                                                    \
        {                                                                                          \
                0, 0                                                                               \
        }

/*
 * Next assignment in sorted order (pod UID, then container name; pods without containers are
 * skipped). Any of POD, CONTAINER, CPUS may be NULL. false when done. Mutating S invalidates the
 * iteration.
 *
 *     ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
 *     const char *pod, *ctr;
 *     const ncm_cpuset *cpus;
 *     while (ncm_cpu_state_next(s, &it, &pod, &ctr, &cpus))
 *             ...;
 */
NCM_API bool ncm_cpu_state_next(const ncm_cpu_state *s, ncm_cpu_state_iter *it, const char **pod,
                                const char **container, const ncm_cpuset **cpus);

/* OUT = union of every container's set (all exclusively assigned CPUs). */
NCM_API void ncm_cpu_state_assigned(const ncm_cpu_state *s, ncm_cpuset *out);

/*
 * Promised CPUs (KEP-5554, in-place resize of exclusive CPUs): the CPUs a container got at its
 * first admission, which a resize never takes away. The kubelet keeps them as the "baseline" of
 * each container inside the V4 checkpoint's data (1.37 layout on); nodecm writes them there for
 * those releases and as its own "promised" member of a V2 file for older ones
 * (docs/cpu-manager.md "The promise in cpu_manager_state"). nodecm records them only with the
 * InPlacePodVerticalScalingExclusiveCPUs gate on, so that a state without them is the kubelet's
 * own. A promise lives and dies with its container's entry (set, delete, delete_pod and clear
 * drop it with the entry; dup, equal and assign include it).
 */

/* The promised CPUs of (POD, CONTAINER), or NULL when none are kept. Owned by S. */
NCM_API const ncm_cpuset *ncm_cpu_state_promised(const ncm_cpu_state *s, const char *pod,
                                                 const char *container) NCM_PURE;
/* The same by index (as ncm_cpu_state_container_cpus). */
NCM_API const ncm_cpuset *ncm_cpu_state_container_promised(const ncm_cpu_state *s, size_t pod,
                                                           size_t ctr) NCM_PURE;
/* Whether any container has promised CPUs. */
NCM_API bool ncm_cpu_state_has_promised(const ncm_cpu_state *s) NCM_PURE;
/*
 * Keep a copy of CPUS as the promise of (POD, CONTAINER), which must hold CPUs (-ENOENT
 * otherwise); NULL forgets it. Persists. -ENOMEM leaves S unchanged.
 */
NCM_API int ncm_cpu_state_set_promised(ncm_cpu_state *s, const char *pod, const char *container,
                                       const ncm_cpuset *cpus, ncm_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 2. Start-up validation                                                                      */
/* ------------------------------------------------------------------------------------------ */

/*
 * The static policy's Start → validateState, with the kubelet's checks in its order and its
 * exact error texts:
 *
 *  ALL = ALL_CPUS, minus RESERVED when STRICT (strict-cpu-reservation).
 *  1. Empty default set: with any pod key present → "default cpuset cannot be empty"; otherwise
 *     the state is fresh: the default set becomes ALL (persisted) and the function returns 1.
 *  2. STRICT: RESERVED ∩ default ≠ ∅ →
 *       `some of strictly reserved cpus: "<reserved∩default>" are present in defaultCpuSet:
 * "<default>"` otherwise: RESERVED ⊄ default → `not all reserved cpus: "<reserved>" are present in
 * defaultCpuSet: "<default>"`
 *  3. For each assignment: default ∩ set ≠ ∅ →
 *       `pod: <uid>, container: <name> cpuset: "<set>" overlaps with default cpuset "<default>"`
 *     The kubelet reports the first offender in Go's random map order; here the first in sorted
 *     order (pod UID, then container name, bytewise), so the message is reproducible.
 *  4. default ∪ all container sets ≠ ALL →
 *       `current set of available CPUs "<ALL>" doesn't match with CPUs in state "<known>"`
 *
 * Pod-level sets (V3 podEntries, PodLevelResourceManagers gate) are not part of the state and
 * do not take part in check 4 (the gate is off by default).
 *
 * RESERVED may be NULL (no reserved CPUs). Returns 0 when the state is valid and unchanged,
 * 1 when a fresh state was initialised (or the hook's error if persisting it failed), and
 * -NCM_E_INVALID_STATE with the kubelet's text in ERR when it is invalid.
 */
NCM_API int ncm_cpu_state_validate(ncm_cpu_state *s, const ncm_cpuset *all_cpus,
                                   const ncm_cpuset *reserved, bool strict, ncm_error *err);

/*
 * Repair (nodecm's own, not a kubelet operation): make S pass ncm_cpu_state_validate() on a
 * machine whose CPUs are ALL_CPUS while keeping every exclusive assignment. The default set
 * becomes ALL (ALL_CPUS, minus RESERVED when STRICT) minus the CPUs held by containers — what it
 * would be had the kubelet started on this machine and admitted the same containers. This is
 * the fix for "current set of available CPUs ... doesn't match" after CPUs were added or a
 * reservation changed, without draining the node.
 *
 * Refused with -NCM_E_INVALID_STATE and a message naming the container, S untouched, when an
 * assignment cannot be kept: it holds CPUs the machine does not have (or, with STRICT, reserved
 * CPUs), CPUs another container holds, or (not STRICT) reserved CPUs, which must stay in the
 * shared pool; when (not STRICT) reserved CPUs are not on the machine; or when nothing would be
 * left for the shared pool. Containers are examined in
 * sorted order. Returns 1 when the default set changed (persisted), 0 when it was right already.
 */
NCM_API int ncm_cpu_state_fit(ncm_cpu_state *s, const ncm_cpuset *all_cpus,
                              const ncm_cpuset *reserved, bool strict, ncm_error *err);

/* ------------------------------------------------------------------------------------------ */
/* 3. The checkpoint file cpu_manager_state                                                    */
/* ------------------------------------------------------------------------------------------ */

/* The file name the kubelet uses inside its root directory (default /var/lib/kubelet). */
#define NCM_CPU_CHECKPOINT_NAME "cpu_manager_state"

/* Largest checkpoint file read (a node's worth of pods is a few hundred kilobytes at most). */
#define NCM_CPU_CHECKPOINT_MAX_SIZE (16u << 20)

typedef enum ncm_cpu_checkpoint_format {
        NCM_CPU_CHECKPOINT_V1 = 1, /* entries: container ID -> cpuset (kubelet <= 1.17) */
        NCM_CPU_CHECKPOINT_V2 = 2, /* entries: pod UID -> container name -> cpuset (<= 1.36) */
        NCM_CPU_CHECKPOINT_V3 = 3, /* V2 + podEntries (1.36 with PodLevelResourceManagers) */
        NCM_CPU_CHECKPOINT_V4 = 4, /* V2's fields for older kubelets + data + dataChecksum (1.37) */
} ncm_cpu_checkpoint_format;

/*
 * The layout kubelet release V writes (PodLevelResourceManagers off): V2 up to 1.36, V4 from
 * 1.37 (kubernetes PR #139102). The default, {0, 0}, is the newest released kubelet's: V4.
 */
NCM_API ncm_cpu_checkpoint_format ncm_cpu_checkpoint_format_of(ncm_kubelet_version v) NCM_PURE;

typedef enum ncm_cpu_checksum_match {
        NCM_CPU_CHECKSUM_MISMATCH = 0, /* no rendering hashes to the stored checksum */
        NCM_CPU_CHECKSUM_ZERO,         /* stored checksum 0: accepted unverified (V1 and V2) */
        NCM_CPU_CHECKSUM_LEGACY,       /* rendering named state.CPUManagerCheckpoint */
        NCM_CPU_CHECKSUM_NATIVE,       /* rendering named state.CPUManagerCheckpointV2 / V3 */
        NCM_CPU_CHECKSUM_DATA,         /* V4: dataChecksum is the checksum of data */
} ncm_cpu_checksum_match;

/* One container of a pod (V2/V3), or one V1 entry (NAME is then the container ID). */
typedef struct ncm_cpu_checkpoint_entry {
        char *name;
        char *cpus; /* the cpuset text exactly as in the file (not re-canonicalised) */
} ncm_cpu_checkpoint_entry;

typedef struct ncm_cpu_checkpoint_pod {
        char *uid;
        bool nil; /* the file has "<uid>": null */
        size_t n; /* containers, sorted bytewise by name */
        ncm_cpu_checkpoint_entry *entries;
} ncm_cpu_checkpoint_pod;

/* A V3 pod-level entry: "podEntries": {"<uid>": {"cpuSet": "<cpus>"}}. */
typedef struct ncm_cpu_checkpoint_pod_entry {
        char *uid;
        char *cpus;    /* "" when absent */
        bool has_cpus; /* the "cpuSet" member is present */
} ncm_cpu_checkpoint_pod_entry;

/*
 * A decoded cpu_manager_state file: the strings exactly as loaded (they are what the checksum
 * covers), the stored checksum and the outcome of its verification, and how one kubelet release
 * reads it. Read-only for callers.
 *
 * FORMAT is the file's layout. For V4 the policy, default set, entries and pod entries are those
 * of its data (what 1.37 reads), CHECKSUM is the stored dataChecksum and LEGACY_CHECKSUM and
 * NATIVE_CHECKSUM both the checksum computed over data; V2_PART holds the V2 fields before data
 * (what a kubelet up to 1.36 reads), decoded and verified as a V2 file of its own.
 */
typedef struct ncm_cpu_checkpoint {
        ncm_cpu_checkpoint_format format;
        char *policy_name;
        char *default_cpus; /* text as in the file */
        bool entries_nil;   /* "entries": null (renders <nil>, never verifies) */
        size_t npods;       /* V2/V3/V4 entries, sorted bytewise by UID */
        ncm_cpu_checkpoint_pod *pods;
        size_t nv1; /* V1 entries, sorted bytewise by container ID */
        ncm_cpu_checkpoint_entry *v1;
        bool has_pod_entries; /* V3 (or V4 data): "podEntries" present (and not null) */
        bool pod_entries_nil; /* V3: "podEntries": null (renders <nil>) */
        size_t npod_entries;  /* podEntries, sorted bytewise by UID */
        ncm_cpu_checkpoint_pod_entry *pod_entries;
        uint64_t checksum; /* as stored */
        ncm_cpu_checksum_match match;
        uint32_t legacy_checksum; /* FNV-1a of the legacy rendering of this format */
        uint32_t native_checksum; /* FNV-1a of the native rendering (V2, V3; V1: legacy) */
        /* The kubelet release whose reading READ_AS and KUBELET_ERROR describe. */
        ncm_kubelet_version kubelet;
        /*
         * The format that release loads the file as, 0 when it refuses it. It may differ from
         * FORMAT: a kubelet up to 1.36 reads a V4 file's V2 part (V2), one up to 1.35 tries V1
         * first and so loads a V2 file with checksum 0 and no entries as V1, 1.37 loads a V3 file
         * (its pod-level sets dropped with the gate off).
         */
        ncm_cpu_checkpoint_format read_as;
        /*
         * What that release reports when it refuses this file (READ_AS 0), or NULL when it loads
         * it: the error of the last format it tried, in its words (docs/checkpoints.md), e.g.
         * `json: cannot unmarshal object into Go struct field CPUManagerCheckpointV1.entries of
         * type string` (1.36, 1.37) or `checkpoint is corrupted` (up to 1.35), or for 1.37 a V4
         * file's own `could not load v4 checkpoint: ...`.
         */
        char *kubelet_error;
        /*
         * nodecm's "promised" member (pod UID -> container -> CPUs at first admission), read
         * beside the kubelet's fields and outside its checksum; sorted as PODS. No kubelet reads
         * it (an unknown field to encoding/json).
         */
        size_t npromised;
        ncm_cpu_checkpoint_pod *promised;
        /* V4: the data member as decoded (the JSON of the kubelet's CPUManagerCheckpointData). */
        char *data;
        /* V4: why data does not decode, in Go's words (e.g. "unexpected end of JSON input"). */
        char *data_error;
        /* V4: the V2 fields before data, as a V2 file (FORMAT V2, its own checksum status). */
        struct ncm_cpu_checkpoint *v2_part;
        /*
         * V4 data: the in-place resize's "baselines", pod UID -> container -> {"baseline":
         * CPUs} (the CPUs of the first admission: nodecm's promise), sorted as PODS, each
         * entry's CPUS the baseline text.
         */
        size_t nbaselines;
        ncm_cpu_checkpoint_pod *baselines;
} ncm_cpu_checkpoint;

/*
 * Is TEXT a cpu_manager_state file? Used to pick the kind of a checkpoint from its content.
 * Returns 1 when TEXT is a JSON object with a member matching (as Go matches field names,
 * ASCII case-insensitively) policyName, defaultCpuSet, entries, podEntries or dataChecksum; 0
 * when it is JSON of another kind; -EINVAL (message in ERR, naming NAME) when it is not JSON at
 * all.
 */
NCM_API int ncm_cpu_checkpoint_probe(const char *text, size_t len, const char *name,
                                     ncm_error *err);

/*
 * Decode TEXT (LEN bytes; NAME starts error messages) in every format, as encoding/json decodes
 * it into the kubelet's structs, and classify its layout:
 *  - V4 when it has a non-empty "data" or a non-zero "dataChecksum" (what 1.37 goes by) and its
 *    V2 fields decode; data is then decoded and dataChecksum verified;
 *  - else V2 when it decodes as V2 and its checksum verifies (0, legacy or native rendering);
 *  - else V1 when it decodes as V1 (entries map container IDs to strings) and verifies;
 *  - else V3 when it verifies as V3 (a kubelet with PodLevelResourceManagers on wrote it);
 *  - else the first format that decodes (V3 if it has podEntries, else V2, else V1), with
 *    match == NCM_CPU_CHECKSUM_MISMATCH.
 * Then READ_AS and KUBELET_ERROR say how kubelet release V (PodLevelResourceManagers off)
 * reads it: up to 1.35 V1 then V2; 1.36 V2 then V1; 1.37 and later V4 (refusing a file that has
 * data or a dataChecksum when V4 fails), then V3, V2, V1.
 * Field names match as Go matches them (case folding). Unknown fields are ignored.
 *
 * Returns 0 with *RET set (even for a checksum mismatch or a file release V refuses: see
 * ncm_cpu_checkpoint_verify() and READ_AS); -EINVAL when TEXT is not JSON or V is not a release
 * nodecm reproduces; -NCM_E_INVALID_STATE when it decodes in no format, with a message in Go's
 * form, e.g. `json: cannot unmarshal number into Go struct field
 * CPUManagerCheckpoint.policyName of type string`; -ENOMEM.
 */
NCM_API int ncm_cpu_checkpoint_parse_version(const char *text, size_t len, const char *name,
                                             ncm_kubelet_version v, ncm_cpu_checkpoint **ret,
                                             ncm_error *err);

/* ncm_cpu_checkpoint_parse_version() for the newest released kubelet. */
NCM_API int ncm_cpu_checkpoint_parse(const char *text, size_t len, const char *name,
                                     ncm_cpu_checkpoint **ret, ncm_error *err);

/*
 * Take C's content as it is, its checksum as if it verified (`nodecm checkpoint rewrite
 * --fix-checksum`: the operator vouches for a file edited by hand): C->read_as becomes its
 * format and C->kubelet_error goes. -NCM_E_INVALID_STATE when there is no content to take (a V4
 * file whose data does not decode), C unchanged.
 */
NCM_API int ncm_cpu_checkpoint_accept(ncm_cpu_checkpoint *c, ncm_error *err);

/* Free C (NULL is fine). Returns NULL. */
NCM_API ncm_cpu_checkpoint *ncm_cpu_checkpoint_free(ncm_cpu_checkpoint *c);
NCM_DEFINE_AUTOPTR(ncm_cpu_checkpoint, ncm_cpu_checkpoint_free)

/*
 * 0 when C's checksum verified (V4: its dataChecksum); else -NCM_E_CHECKSUM with the kubelet's
 * CorruptCheckpointError text "checkpoint is corrupted" followed by the stored and computed
 * checksums, or for V4 why its data does not decode.
 */
NCM_API int ncm_cpu_checkpoint_verify(const ncm_cpu_checkpoint *c, ncm_error *err);

/*
 * Append the go-spew rendering the checksum covers (k8s dump.ForHash of the checkpoint struct
 * pointer with Checksum 0) to B. NATIVE selects the type name CPUManagerCheckpointV2 /
 * CPUManagerCheckpointV3 instead of CPUManagerCheckpoint (V1 files always render under the
 * legacy name, as the kubelet's V1 verifier replaces it). For V4 it is what dataChecksum
 * covers, the data string's: "(string)" and the data.
 */
NCM_API void ncm_cpu_checkpoint_render(const ncm_cpu_checkpoint *c, bool native, ncm_buf *b);

/* An entry of the kubelet's initial container map (runtime container ID -> pod, container). */
typedef struct ncm_container_ref {
        const char *container_id;
        const char *pod_uid;
        const char *container_name;
} ncm_container_ref;

/*
 * kubelet restoreState on a decoded file, as release C->kubelet does it. In order: a file that
 * release refuses (C->read_as 0) fails with C->kubelet_error; what it loaded as V1 is migrated
 * through REFS (NREFS entries; a later duplicate container ID wins) — an unknown ID fails with
 * `failed to migrate checkpoint from v1 to v2: containerID '<id>' not found in initial containers
 * list` (up to 1.35: `error migrating v1 checkpoint state to v2 checkpoint state: containerID
 * ...`; V1 entries are looked up in sorted order, so the reported ID is the bytewise first
 * unknown one); then, when POLICY_NAME is not NULL, `configured policy "<cfg>" differs from
 * state checkpoint policy "<file>"`; then `could not parse default cpu set "<s>": <cpuset
 * error>` and `could not parse cpuset "<s>" for container "<c>" in pod "<p>": <cpuset error>`
 * (pods and containers in sorted order). All failures return -NCM_E_INVALID_STATE (the kubelet's
 * start-up refusal). The content is what that release read: a V4 file's data for 1.37 and
 * later, its V2 part for older releases. The promises come from a V4 data's baselines, else
 * from nodecm's "promised" member.
 *
 * On success *RET is a new state (policy = the file's policy name, no hook, kubelet version
 * C->kubelet, so it is written back in that release's layout).
 */
NCM_API int ncm_cpu_checkpoint_restore(const ncm_cpu_checkpoint *c, const char *policy_name,
                                       const ncm_container_ref *refs, size_t nrefs,
                                       ncm_cpu_state **ret, ncm_error *err);

/*
 * The kubelet's file for S, appended to B, in the layout of S's kubelet release
 * (ncm_cpu_state_kubelet_version(), ncm_cpu_checkpoint_format_of()). Go encoding/json compact
 * output, canonical cpuset strings, map keys sorted bytewise, "entries" omitted when there is no
 * pod key, no trailing newline:
 *  - V2 (up to 1.36): {"policyName":…,"defaultCpuSet":…,"entries":{…},"checksum":N}, N the
 *    legacy (CPUManagerCheckpoint) rendering's checksum, which every kubelet accepts (1.36
 *    writes it so too, kubernetes PR #137751);
 *  - V4 (1.37 on): the same four fields, then "data", the JSON of
 *    {"policyName","defaultCpuSet","entries","baselines"} as a string, and "dataChecksum",
 *    FNV-1a of "(string)" and the data.
 * When S keeps promised CPUs (ncm_cpu_state_set_promised): in V4 they are data's
 * "baselines" ({"<pod>":{"<container>":{"baseline":"<cpus>"}}}, the kubelet's place for them);
 * in V2 nodecm's "promised" member follows "entries" (the shape of entries), outside the
 * checksum, which every kubelet ignores. Without promises the bytes are the kubelet's.
 */
NCM_API void ncm_cpu_checkpoint_format_state(const ncm_cpu_state *s, ncm_buf *b);

/*
 * Write S as ncm_cpu_checkpoint_format_state() formats it to PATH under ROOTFD (AT_FDCWD for
 * host paths) with ncm_fs_write_atomic() (temporary file, fsync, rename, fsync of the
 * directory), mode 0600 for a new file (an existing one keeps its mode), as the kubelet's file
 * store writes it.
 */
NCM_API int ncm_cpu_checkpoint_write(const ncm_cpu_state *s, int rootfd, const char *path,
                                     ncm_error *err);

/*
 * ncm_cpu_checkpoint_write() with ncm_fs_write_atomic_flags()' FLAGS (NCM_FS_WRITE_*; 0: the
 * same), for a caller that syncs the directory once for several files.
 */
NCM_API int ncm_cpu_checkpoint_write_flags(const ncm_cpu_state *s, int rootfd, const char *path,
                                           unsigned flags, ncm_error *err);

/*
 * Make every mutation of S rewrite PATH (kubelet behaviour): installs a persistence hook that
 * calls ncm_cpu_checkpoint_write(). ROOTFD is duplicated (AT_FDCWD is kept as is) so the caller
 * may close its own. Does not write; call ncm_cpu_state_persist() for that.
 */
NCM_API int ncm_cpu_state_attach_checkpoint(ncm_cpu_state *s, int rootfd, const char *path,
                                            ncm_error *err);

/*
 * kubelet NewCheckpointState for the CPU manager of release V: read PATH under ROOTFD as V reads
 * it (ncm_cpu_checkpoint_parse_version()) and restore it with ncm_cpu_checkpoint_restore()
 * (POLICY_NAME, REFS as there). When the file does not exist a new empty state (POLICY_NAME,
 * default "") is created and written in V's layout, as the kubelet does, and 1 is returned; 0
 * when restored. The file is never rewritten otherwise: a corrupt or foreign file is reported,
 * not replaced. Errors are wrapped as the kubelet wraps them:
 *   could not restore state from checkpoint: <cause>, please drain this node and delete the CPU
 *   manager checkpoint file "<path>" before restarting Kubelet
 * (-NCM_E_INVALID_STATE or -NCM_E_CHECKSUM; -errno for I/O errors, named by path; -EINVAL for
 * a release nodecm does not reproduce). *RET has no hook (attach one with
 * ncm_cpu_state_attach_checkpoint()) and writes V's layout.
 */
NCM_API int ncm_cpu_checkpoint_load_version(int rootfd, const char *path, const char *policy_name,
                                            const ncm_container_ref *refs, size_t nrefs,
                                            ncm_kubelet_version v, ncm_cpu_state **ret,
                                            ncm_error *err);

/* ncm_cpu_checkpoint_load_version() for the newest released kubelet. */
NCM_API int ncm_cpu_checkpoint_load(int rootfd, const char *path, const char *policy_name,
                                    const ncm_container_ref *refs, size_t nrefs,
                                    ncm_cpu_state **ret, ncm_error *err);

#ifdef __cplusplus
}
#endif
#endif
