/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to lib/cri. */
#ifndef NCM_CRI_INTERNAL_H
#define NCM_CRI_INTERNAL_H

#include <stddef.h>
#include <nodecm/cri.h>

/* Like ncm_cri_call(), but DONE may take what the reply owns (zeroing what it took). */
typedef void (*ncm__cri_take_fn)(ncm_cri_reply *r, void *data);
int ncm__cri_call(ncm_rpc_conn *conn, const ncm_cri_request *req, uint32_t timeout_ms,
                  ncm__cri_take_fn done, void *data, ncm_error *err);

/*
 * The cpusets a container on CPUS gets: CPUS as a list and the NUMA nodes of those CPUs in
 * TOPO ("" when none is known). 1 with both set (malloc'd), 0 with both NULL for no CPUs,
 * -ENOMEM.
 */
int ncm__cri_cpusets(const ncm_topo *topo, const ncm_cpuset *cpus, char **ret_cpus,
                     char **ret_mems);

#endif
