/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: state operations the checkpoint reader needs and callers must not use. */
#ifndef NCM_CPUMANAGER_STATE_INTERNAL_H
#define NCM_CPUMANAGER_STATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <nodecm/cpustate.h>

/*
 * Add POD with no container (a restored `"entries":{"pod":{}}` keeps its key, and is written
 * back, as in the kubelet). *RET_INDEX (may be NULL) receives the pod's index. Returns 1 if
 * added, 0 if it existed, -ENOMEM.
 */
int ncm__cpu_state_add_pod(ncm_cpu_state *s, const char *pod, size_t *ret_index);

/* ncm_cpu_state_set() without running the persistence hook. 0 or -ENOMEM (state unchanged). */
int ncm__cpu_state_set_nopersist(ncm_cpu_state *s, const char *pod, const char *container,
                                 const ncm_cpuset *cpus);

/* ncm_cpu_state_set_promised() without the hook: -ENOENT (no entry), -ENOMEM. */
int ncm__cpu_state_set_promised_nopersist(ncm_cpu_state *s, const char *pod, const char *container,
                                          const ncm_cpuset *cpus);

/*
 * One pod's entries and the default set, saved (a removal's undo: only what it can change,
 * not the whole state). 0 or -ENOMEM. The restore puts them back as they were (the other pods'
 * entries untouched), persisting (or noting, while held) when anything changed: 0, -ENOMEM
 * (S untouched), or the persistence hook's error.
 */
/* The index of POD among the state's pods (ncm_cpu_state_pod_uid), found by its UID without a
 * look at the others: true, or false when it has no key. */
bool ncm__cpu_state_find_pod(const ncm_cpu_state *s, const char *pod, size_t *ret_index);

typedef struct ncm__cpu_state_pod_saved ncm__cpu_state_pod_saved;
int ncm__cpu_state_pod_save(const ncm_cpu_state *s, const char *pod,
                            ncm__cpu_state_pod_saved **ret);
int ncm__cpu_state_pod_restore(ncm_cpu_state *s, const ncm__cpu_state_pod_saved *v);
void ncm__cpu_state_pod_saved_free(ncm__cpu_state_pod_saved *v);

#endif
