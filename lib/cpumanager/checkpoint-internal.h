/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: what the cpu_manager_state reader (checkpoint.c) lends its writer (checkpoint-write.c).
 */
#ifndef NCM_CPUMANAGER_CHECKPOINT_INTERNAL_H
#define NCM_CPUMANAGER_CHECKPOINT_INTERNAL_H

#include <nodecm/cpustate.h>
#include <nodecm/kubelet-version.h>

/* Room for a decoding error in Go's words (and the kubelet's wrapping of it). */
#define CKPT_MSG_MAX NCM_ERROR_MSG_MAX

/*
 * ncm_cpu_checkpoint_parse_version() that also copies, when TEXT decodes in no format, what
 * release V says of it into KUBELET_MSG (may be NULL): Go's SyntaxError text, a type error or
 * "checkpoint is corrupted".
 */
int ncm__cpu_checkpoint_parse_full(const char *text, size_t len, const char *name,
                                   ncm_kubelet_version v, ncm_cpu_checkpoint **ret,
                                   char kubelet_msg[CKPT_MSG_MAX], ncm_error *err);

/*
 * The V2 checkpoint the kubelet's storeState builds from S (canonical cpuset strings), its
 * checksum the legacy rendering's. NULL when out of memory.
 */
ncm_cpu_checkpoint *ncm__cpu_checkpoint_of_state(const ncm_cpu_state *s);

#endif
