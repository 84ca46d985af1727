/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI proxy's calls (ncm_cri_proxy_ops), each a job on the node: lib/cri decides and
 * answers the ticket (ncm_cri_node_answer_create, ncm_cri_node_answer_update); here they are
 * queued, logged, counted and told to every service (nodecmd_cri_changed), which is how the
 * intents a creation published reach the runtime.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "svc-cri.h"

typedef struct job_arg {
        cri *c;
        ncm_cri_ticket *t;
        ncm_cri_container_config cfg; /* CreateContainer: as the proxy decoded it */
        char *id;
        char *pod;
        char *name;
} job_arg;

static void arg_free(job_arg *a)
{
        ncm_cri_container_config_done(&a->cfg);
        free(a->id);
        free(a->pod);
        free(a->name);
        free(a);
}

static job_arg *arg_new(cri *c, ncm_cri_ticket *t, const char *id, const char *pod,
                        const char *name)
{
        job_arg *a = calloc(1, sizeof(*a));

        if (!a)
                return NULL;
        a->c = c;
        a->t = t;
        if ((id && !(a->id = strdup(id))) || (pod && !(a->pod = strdup(pod))) ||
            (name && !(a->name = strdup(name)))) {
                arg_free(a);
                return NULL;
        }
        return a;
}

/*
 * What an admission owes (ncm_cri_node_sync: the directory's fsync, the replaced files freed,
 * the next temporary files made), done once the runtime has answered and the answer is on its
 * way: none of it competes with the runtime's work on the creation the kubelet waits for.
 */
static void settle(cri *c)
{
        ncm_error err = NCM_ERROR_INIT;

        if (ncm_cri_node_sync(c->cn, &err) < 0)
                nodecmd_log(c->d, NODECMD_ERROR, "syncing the node directory failed", "error=%s",
                            nodecmd_q(c->d, 0, err.msg));
}

/* CreateContainer: decided and answered by lib/cri; logged and told here. */
static void job_create(nodecmd *d, nodecmd_job *job, void *data)
{
        job_arg *a = data;
        cri *c = a->c;
        ncm_cri_decision dec;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t t0 = nodecmd_now_ns();

        c->k.creates++;
        if (ncm_cri_node_answer_create(c->cn, a->t, &a->cfg, &dec, &err) < 0) {
                nodecmd_log(d, NODECMD_WARN, "CreateContainer failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
        } else if (dec.action == NCM_CRI_PASS) {
                c->k.passed++;
        } else if (dec.action == NCM_CRI_REFUSE) {
                c->k.refused++;
                nodecmd_log(d, NODECMD_INFO, "CreateContainer refused", "error=%s",
                            nodecmd_q(d, 0, dec.message));
                nodecmd_cri_changed(c, NCM_CTL_ADMIT, &dec.ctl, 0, t0);
        } else {
                c->k.admitted++;
                nodecmd_log(d, NODECMD_INFO, "container admitted", "pod=%s container=%s cpus=%s",
                            nodecmd_q(d, 0, dec.pod_uid), nodecmd_q(d, 1, dec.container),
                            nodecmd_q(d, 2, dec.cpuset_cpus ? dec.cpuset_cpus : ""));
                nodecmd_cri_changed(c, NCM_CTL_ADMIT, &dec.ctl, 0, t0);
        }
        ncm_cri_decision_done(&dec);
        arg_free(a);
        c->k.create_ns += nodecmd_now_ns() - t0;
        nodecmd_job_done(d, job);
}

/* T's call as job FN (WHAT), or refused at once (stopping, out of memory); CFG (may be NULL) is
 * the job's: the job decides on the proxy's decoding, the request is decoded once. */
static void submit_ticket(cri *c, ncm_cri_ticket *t, const char *what, nodecmd_job_fn fn,
                          ncm_cri_container_config *cfg)
{
        job_arg *a;

        if (c->stopping || nodecmd_stopping(c->d)) {
                ncm_cri_ticket_refuse(t, NCM_RPC_UNAVAILABLE, "nodecmd is stopping");
                return;
        }
        a = arg_new(c, t, NULL, NULL, NULL);
        if (a && cfg) {
                a->cfg = *cfg;
                *cfg = (ncm_cri_container_config){0};
        }
        if (!a || !nodecmd_submit(c->d, what, fn, a)) {
                if (a)
                        arg_free(a);
                ncm_cri_ticket_refuse(t, NCM_RPC_RESOURCE_EXHAUSTED, "out of memory");
        }
}

static void on_create(void *data, ncm_cri_ticket *t, ncm_cri_container_config *cfg)
{
        submit_ticket(data, t, "CreateContainer", job_create, cfg);
}

static void job_created(nodecmd *d, nodecmd_job *job, void *data)
{
        job_arg *a = data;
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t t0 = nodecmd_now_ns();
        int r = ncm_cri_node_created(a->c->cn, a->pod, a->name, a->id, &res, &err);

        if (r < 0)
                nodecmd_log(d, NODECMD_WARN, "recording a container failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
        settle(a->c);
        if (!a->id) {
                a->c->k.released++;
                nodecmd_cri_changed(a->c, NCM_CTL_REMOVE_CONTAINER, &res, r < 0 ? r : 0, t0);
        }
        ncm_ctl_result_done(&res);
        arg_free(a);
        nodecmd_job_done(d, job);
}

static void on_created(void *data, ncm_cri_ticket *t, const char *id)
{
        cri *c = data;
        job_arg *a;
        char *pod, *name;

        if (!ncm_cri_ticket_take_identity(t, &pod, &name))
                return; /* forwarded as it came: nothing of nodecm's */
        /* stopping: the next start's reconcile settles it from the record */
        a = c->stopping ? NULL : arg_new(c, NULL, id, NULL, NULL);
        if (a) {
                a->pod = pod;
                a->name = name;
        } else {
                free(pod);
                free(name);
        }
        if (c->stopping)
                return;
        if (!a || !nodecmd_submit(c->d, "CreateContainer answered", job_created, a)) {
                if (a)
                        arg_free(a);
                nodecmd_log(c->d, NODECMD_ERROR, "a created container is not recorded",
                            "id=%s reason=%s", nodecmd_q(c->d, 0, id ? id : ""), "out of memory");
        }
}

static void job_sandbox(nodecmd *d, nodecmd_job *job, void *data)
{
        job_arg *a = data;
        ncm_cri_sandbox_config cfg = {0};
        ncm_error err = NCM_ERROR_INIT;

        cfg.uid = a->pod;
        if (ncm_cri_node_sandbox(a->c->cn, a->id, &cfg, &err) < 0)
                nodecmd_log(d, NODECMD_WARN, "recording a sandbox failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
        arg_free(a);
        nodecmd_job_done(d, job);
}

static void on_sandbox(void *data, const char *id, const ncm_cri_sandbox_config *cfg)
{
        cri *c = data;
        job_arg *a = c->stopping ? NULL : arg_new(c, NULL, id, cfg->uid, NULL);

        if (!a || !nodecmd_submit(c->d, "RunPodSandbox answered", job_sandbox, a)) {
                if (a)
                        arg_free(a);
        }
}

static void job_removed(nodecmd *d, nodecmd_job *job, void *data)
{
        job_arg *a = data;
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t t0 = nodecmd_now_ns();
        bool pod = a->name != NULL; /* a sandbox */
        int r = pod ? ncm_cri_node_sandbox_removed(a->c->cn, a->id, &res, &err)
                    : ncm_cri_node_container_removed(a->c->cn, a->id, &res, &err);

        if (r < 0)
                nodecmd_log(d, NODECMD_WARN, "release failed", "id=%s error=%s",
                            nodecmd_q(d, 0, a->id), nodecmd_q(d, 1, err.msg));
        if (r > 0 || res.changed) {
                a->c->k.released++;
                nodecmd_cri_changed(a->c, pod ? NCM_CTL_REMOVE_POD : NCM_CTL_REMOVE_CONTAINER, &res,
                                    r < 0 ? r : 0, t0);
        }
        ncm_ctl_result_done(&res);
        arg_free(a);
        nodecmd_job_done(d, job);
}

static void submit_removed(cri *c, const char *id, bool sandbox)
{
        /* stopping: the next start's reconcile finds it gone and releases it */
        job_arg *a = c->stopping ? NULL : arg_new(c, NULL, id, NULL, sandbox ? "sandbox" : NULL);

        if (!a || !nodecmd_submit(c->d, sandbox ? "RemovePodSandbox" : "RemoveContainer",
                                  job_removed, a)) {
                if (a)
                        arg_free(a);
        }
}

static void on_container_removed(void *data, const char *id)
{
        submit_removed(data, id, false);
}

static void on_sandbox_removed(void *data, const char *id)
{
        submit_removed(data, id, true);
}

/*
 * UpdateContainerResources: for a container nodecm placed, new shares, quota or memory are an
 * in-place resize, decided and answered by lib/cri (ncm_cri_node_answer_update). The shared
 * pool follows through the intents the resize published.
 */
static void job_update(nodecmd *d, nodecmd_job *job, void *data)
{
        job_arg *a = data;
        cri *c = a->c;
        ncm_cri_decision dec;
        ncm_error err = NCM_ERROR_INIT;
        uint64_t t0 = nodecmd_now_ns();
        int r = ncm_cri_node_answer_update(c->cn, a->t, &dec, &err);

        if (r < 0) {
                nodecmd_log(d, NODECMD_WARN, "UpdateContainerResources failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
        } else if (dec.action == NCM_CRI_REFUSE) {
                nodecmd_log(d, NODECMD_INFO, "resize refused", "pod=%s container=%s error=%s",
                            nodecmd_q(d, 0, dec.pod_uid), nodecmd_q(d, 1, dec.container),
                            nodecmd_q(d, 2, dec.message));
                nodecmd_cri_changed(c, NCM_CTL_RESIZE, &dec.ctl, 0, t0);
        } else if (dec.ctl.resize) {
                if (dec.action == NCM_CRI_ADMIT && dec.cpuset_cpus)
                        nodecmd_log(d, NODECMD_INFO, "container resized",
                                    "pod=%s container=%s cpus=%s", nodecmd_q(d, 0, dec.pod_uid),
                                    nodecmd_q(d, 1, dec.container),
                                    nodecmd_q(d, 2, dec.cpuset_cpus));
                nodecmd_cri_changed(c, NCM_CTL_RESIZE, &dec.ctl, 0, t0);
                /* what the resize's commit owes (the directory's fsync), once it is on its way */
                if (dec.action == NCM_CRI_ADMIT)
                        settle(c);
        }
        ncm_cri_decision_done(&dec);
        arg_free(a);
        nodecmd_job_done(d, job);
}

static void on_update(void *data, ncm_cri_ticket *t, const char *id)
{
        (void)id; /* decoded in the job, with the resources */
        submit_ticket(data, t, "UpdateContainerResources", job_update, NULL);
}

static int on_cpusets(void *data, const char *id, char **ret_cpus, char **ret_mems)
{
        cri *c = data;
        /* a read between jobs: every job finishes its node transaction before it yields */
        return ncm_cri_node_cpusets(c->cn, id, ret_cpus, ret_mems);
}

const ncm_cri_proxy_ops nodecmd_cri_proxy_ops = {
                .sandbox_ran = on_sandbox,
                .container_create = on_create,
                .container_created = on_created,
                .container_removed = on_container_removed,
                .sandbox_removed = on_sandbox_removed,
                .container_cpusets = on_cpusets,
                .container_update = on_update,
};
