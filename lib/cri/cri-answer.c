/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The proxy's tickets answered from the node's decisions: a CreateContainer or an
 * UpdateContainerResources decided (cri-node.c), then forwarded, patched or as it came, or
 * refused with the kubelet's reason. The owner (nodecmd) only runs each as a job, logs and
 * tells its services; the protocol is here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cri.h>

/* A creation's identity, the ticket's data from the admission to the runtime's answer. */
typedef struct identity {
        char *pod, *name;
} identity;

static void refuse_failed(ncm_cri_ticket *t, int r, const ncm_error *e)
{
        ncm_cri_ticket_refuse(t, r == -ENOMEM ? NCM_RPC_RESOURCE_EXHAUSTED : NCM_RPC_INTERNAL,
                              e->msg);
}

int ncm_cri_node_answer_create(ncm_cri_node *cn, ncm_cri_ticket *t, ncm_cri_container_config *c,
                               ncm_cri_decision *dec, ncm_error *err)
{
        ncm_error e = NCM_ERROR_INIT;
        ncm_buf patched = NCM_BUF_INIT;
        size_t len;
        const uint8_t *req = ncm_cri_ticket_request(t, &len);
        identity *id = NULL;
        int r;

        *dec = (ncm_cri_decision){0};
        dec->ctl = (ncm_ctl_result)NCM_CTL_RESULT_INIT;
        r = ncm_cri_node_create(cn, c, dec, &e);
        if (r < 0) {
                refuse_failed(t, r, &e);
                if (err)
                        *err = e;
                return r;
        }
        switch (dec->action) {
        case NCM_CRI_PASS:
                /* not a pod nodecm holds: on the shared pool (cpusets set), off every exclusive
                 * CPU, else as it came */
                if (!dec->cpuset_cpus)
                        ncm_cri_ticket_forward(t, req, len);
                else if (ncm_cri_decision_apply_config(dec, c, &patched, &e) < 0)
                        ncm_cri_ticket_refuse(t, NCM_RPC_INTERNAL, e.msg);
                else
                        ncm_cri_ticket_forward(t, (const uint8_t *)patched.data, patched.len);
                break;
        case NCM_CRI_REFUSE:
                ncm_cri_ticket_refuse(t, dec->code, dec->message);
                break;
        default:
                id = calloc(1, sizeof(*id));
                if (id &&
                    (!(id->pod = strdup(dec->pod_uid)) || !(id->name = strdup(dec->container))))
                        r = -ENOMEM;
                r = id && r >= 0 ? ncm_cri_decision_apply_config(dec, c, &patched, &e) : -ENOMEM;
                if (r < 0) {
                        /* what was decided goes: the kubelet will try again */
                        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
                        (void)ncm_cri_node_created(cn, dec->pod_uid, dec->container, NULL, &res,
                                                   NULL);
                        ncm_ctl_result_done(&res);
                        if (id) {
                                free(id->pod);
                                free(id->name);
                                free(id);
                        }
                        ncm_cri_ticket_refuse(t, NCM_RPC_INTERNAL,
                                              r == -ENOMEM && !e.msg[0] ? "out of memory" : e.msg);
                        r = 0;
                        break;
                }
                /* recorded when the runtime answers (ncm_cri_ticket_take_identity) */
                ncm_cri_ticket_set_data(t, id);
                ncm_cri_ticket_forward(t, (const uint8_t *)patched.data, patched.len);
                break;
        }
        ncm_buf_done(&patched);
        return 0;
}

int ncm_cri_ticket_take_identity(ncm_cri_ticket *t, char **ret_pod, char **ret_name)
{
        identity *id = ncm_cri_ticket_data(t);

        *ret_pod = *ret_name = NULL;
        if (!id)
                return 0;
        ncm_cri_ticket_set_data(t, NULL);
        *ret_pod = id->pod;
        *ret_name = id->name;
        free(id);
        return 1;
}

int ncm_cri_node_answer_update(ncm_cri_node *cn, ncm_cri_ticket *t, ncm_cri_decision *dec,
                               ncm_error *err)
{
        ncm_error e = NCM_ERROR_INIT;
        ncm_cri_resources res = {0};
        ncm_buf patched = NCM_BUF_INIT;
        char *cid = NULL;
        size_t len;
        const uint8_t *req = ncm_cri_ticket_request(t, &len);
        int r;

        *dec = (ncm_cri_decision){0};
        dec->ctl = (ncm_ctl_result)NCM_CTL_RESULT_INIT;
        r = ncm_cri_decode_update_resources(req, len, &cid, &res, &e);
        if (r >= 0)
                r = ncm_cri_node_update(cn, cid, &res, dec, &e);
        free(cid);
        ncm_cri_resources_done(&res);
        if (r < 0) {
                refuse_failed(t, r, &e);
                if (err)
                        *err = e;
                return r;
        }
        if (dec->action == NCM_CRI_REFUSE)
                ncm_cri_ticket_refuse(t, dec->code, dec->message);
        else if (dec->action == NCM_CRI_ADMIT && dec->cpuset_cpus &&
                 ncm_cri_patch_update_resources(req, len, dec->cpuset_cpus, dec->cpuset_mems,
                                                &patched, NULL) == 0)
                ncm_cri_ticket_forward(t, (const uint8_t *)patched.data, patched.len);
        else
                ncm_cri_ticket_forward(t, req, len);
        ncm_buf_done(&patched);
        return 0;
}
