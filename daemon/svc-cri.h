/* SPDX-License-Identifier: Apache-2.0 */
/* Private to the CRI service (svc-cri.c) and its proxy's calls (svc-cri-proxy.c). */
#ifndef NODECMD_SVC_CRI_H
#define NODECMD_SVC_CRI_H

#include <nodecm/cri.h>
#include "nodecmd.h"

typedef struct cri {
        nodecmd *d;
        bool active;
        ncm_cri_node *cn;
        ncm_cri_proxy *proxy;
        ncm_rpc_uv_client *client; /* without a proxy: the runtime, for the calls */
        const char *endpoint;
        ncm_cri_sync *sync; /* the UpdateContainerResources calls (lib/cri) */
        uv_timer_t timer;   /* its deadline */
        bool timer_up;
        bool stopping;
        int closing;        /* parts still closing at stop */
        ncm_cri_counters k; /* metrics */
} cri;

/* Tell every service what a decision did (the CRI service sends the intents it published). */
void nodecmd_cri_changed(cri *c, ncm_ctl_method m, const ncm_ctl_result *res, int error,
                         uint64_t t0);

/* The proxy's calls, each a job on the node (svc-cri-proxy.c). */
extern const ncm_cri_proxy_ops nodecmd_cri_proxy_ops;

#endif
