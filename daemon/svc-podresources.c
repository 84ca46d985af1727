/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pod resources API v1 (and v1alpha1's List) on DIR/pod-resources/kubelet.sock
 * (nodecmd.podResourcesSocket; "none" turns it off), served by lib/podresources from the node.
 * Each call reads the node as a job on the queue, so that it never sees half a transaction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/podresources.h>
#include "nodecmd.h"

typedef struct podres {
        nodecmd *d;
        ncm_podres_server *srv;
        char *path;
} podres;

typedef struct run_arg {
        void (*run)(void *arg);
        void *arg;
} run_arg;

static void job(nodecmd *d, nodecmd_job *j, void *data)
{
        run_arg *ra = data;
        ra->run(ra->arg);
        free(ra);
        nodecmd_job_done(d, j);
}

/* Calls read the node in their turn on the queue. */
static void schedule(void *data, void (*run)(void *arg), void *arg)
{
        podres *pr = data;
        run_arg *ra = malloc(sizeof(*ra));

        if (ra) {
                ra->run = run;
                ra->arg = arg;
                if (nodecmd_submit(pr->d, "pod-resources", job, ra))
                        return;
                free(ra);
        }
        /* out of memory for the job: answer now rather than never */
        run(arg);
}

static int pr_start(nodecmd *d, void **ret, ncm_error *err)
{
        podres *pr = calloc(1, sizeof(*pr));
        ncm_podres_opts o = {0};
        ncm_rpc_opts ro;
        int r;

        if (!pr)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = pr;
        pr->d = d;
        r = nodecmd_socket_path(d, "podResourcesSocket", "pod-resources/kubelet.sock", &pr->path,
                                err);
        if (r < 0)
                return r;
        if (strcmp(pr->path, "none") == 0)
                return 0;
        nodecmd_rpc_opts(d, &ro);
        o.socket = pr->path;
        o.get = -1; /* KubeletPodResourcesGet as the configuration and release say */
        o.rpc = &ro;
        o.schedule = schedule;
        o.schedule_data = pr;
        r = ncm_podres_server_new(nodecmd_loop(d), nodecmd_node(d), &o, &pr->srv, err);
        if (r < 0)
                return r;
        nodecmd_log(d, NODECMD_INFO, "pod resources API listening", "socket=%s get=%s",
                    nodecmd_q(d, 0, pr->path),
                    ncm_podres_get_enabled(nodecmd_node(d)) ? "enabled" : "disabled");
        return 0;
}

static void closed(void *data)
{
        podres *pr = data;
        pr->srv = NULL;
        nodecmd_service_stopped(pr->d, pr);
}

static void pr_stop(void *data)
{
        podres *pr = data;
        if (pr->srv)
                ncm_podres_server_close(pr->srv, closed, pr);
        else
                nodecmd_service_stopped(pr->d, pr);
}

static void pr_free(void *data)
{
        podres *pr = data;
        if (!pr)
                return;
        free(pr->path);
        free(pr);
}

static void pr_metrics(void *data, ncm_buf *out)
{
        podres *pr = data;
        if (pr->srv)
                ncm_podres_server_metrics(pr->srv, out);
}

const nodecmd_service_ops nodecmd_podresources_service = {
                .name = "pod-resources",
                .start = pr_start,
                .stop = pr_stop,
                .free = pr_free,
                .metrics = pr_metrics,
};
