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

#endif
