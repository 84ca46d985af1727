/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRI-O's runtime-class knobs on the node (docs/isolation.md): which running containers ask
 * for which, the enforcer's isolation() call in every transaction of a node that has any, and
 * the memo of what to put back, kept in DIR/nodecm_isolation.
 *
 * Who gets a knob. CRI-O's annotations on a pod (cpu-load-balancing.crio.io,
 * cpu-quota.crio.io, irq-load-balancing.crio.io: "disable", or CRI-O's older "true") count
 * for its containers that hold exclusive CPUs: a Guaranteed pod's containers with whole CPUs.
 * Any other container of such a pod runs on the shared pool, where turning off balancing,
 * quota or interrupts would harm its neighbours; it gets none.
 *
 * Crash safety. The desired state is a function of what the node holds (nodecm_pods, whose
 * specs keep the annotations, and cpu_manager_state); what to put back is the memo, written
 * before the enforcer touches anything (the enforcer calls persist() between planning and
 * writing). Whatever moment a process dies at, the next start converges from both: a knob of a
 * container that has gone is undone, one of a container that is there is made again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/fs.h>
#include "base/array.h"
#include "node-internal.h"

static const char *const knob_annotation[NCM_KNOB_N] = {
                NCM_POD_ANNOTATION_CPU_LOAD_BALANCING,
                NCM_POD_ANNOTATION_CPU_QUOTA,
                NCM_POD_ANNOTATION_IRQ_LOAD_BALANCING,
};

unsigned ncm__node_pod_knobs(const ncm_pod *pod)
{
        unsigned k = 0;

        for (int i = 0; i < NCM_KNOB_N; i++)
                if (ncm__node_knob_on(pod, knob_annotation[i]))
                        k |= 1u << i;
        return k;
}

unsigned ncm_node_container_knobs(const ncm_node *n, const char *pod_uid, const char *name)
{
        return ncm__node_container_knobs(n, pod_uid, name);
}

unsigned ncm__node_container_knobs(const ncm_node *n, const char *pod_uid, const char *name)
{
        const ncm_pod *pod = ncm_node_pod(n, pod_uid);

        if (!pod || !ncm_cpu_state_get(n->cpu_state, pod_uid, name) ||
            ncm_node_container_removed(n, pod_uid, name))
                return 0;
        if (n->removing.uid && strcmp(n->removing.uid, pod_uid) == 0 &&
            (!n->removing.name || strcmp(n->removing.name, name) == 0))
                return 0;
        return ncm__node_pod_knobs(pod);
}

static char *memo_path(const ncm_node *n)
{
        char *p = NULL;
        if (asprintf(&p, "%s/%s", n->dir, NCM_NODE_ISOLATION_NAME) < 0)
                return NULL;
        return p;
}

int ncm__node_memo_load(ncm_node *n, ncm_error *err)
{
        ncm_autofree char *path = NULL, *text = NULL;
        ncm_knob_memo *m = NULL;
        size_t len = 0;
        int r;

        if (n->dir) {
                path = memo_path(n);
                if (!path)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                r = ncm_fs_read_all(AT_FDCWD, path, 1 << 24, &text, &len, NULL);
                if (r < 0 && r != -ENOENT)
                        return ncm_error_errno(err, -r, "%s", path);
                if (r >= 0) {
                        r = ncm_knob_memo_parse(text, len, path, &m, err);
                        if (r < 0)
                                return r;
                }
        }
        if (!m && !(m = ncm_knob_memo_new()))
                return ncm_error_set(err, ENOMEM, "out of memory");
        ncm_knob_memo_free(n->memo);
        n->memo = m;
        /* what the directory holds: nothing to write until it changes */
        ncm_knob_memo_free(n->memo_written);
        n->memo_written = ncm_knob_memo_dup(m);
        return 0;
}

/* Write the memo to DIR/nodecm_isolation (nothing without a directory, or when unchanged). */
static int memo_persist(void *data, ncm_error *err)
{
        ncm_node *n = data;
        ncm_autofree char *path = NULL;
        ncm_buf b = NCM_BUF_INIT;
        int r;

        if (!n->dir || (n->memo_written && ncm_knob_memo_equal(n->memo, n->memo_written)))
                return 0;
        path = memo_path(n);
        if (!path)
                return ncm_error_set(err, ENOMEM, "out of memory");
        ncm_knob_memo_format(n->memo, &b);
        r = ncm_buf_failed(&b) ? ncm_error_set(err, ENOMEM, "out of memory")
                               : ncm__node_write(n, path, b.data, b.len, err);
        ncm_buf_done(&b);
        if (r >= 0) {
                ncm_knob_memo *w = ncm_knob_memo_dup(n->memo);
                ncm_knob_memo_free(n->memo_written);
                n->memo_written = w; /* NULL (out of memory): written again next time */
        }
        return r;
}

/*
 * Every transaction of a node whose enforcer has isolation() calls it: with no knob and an
 * empty memo it plans nothing and reads nothing (the cgroupfs enforcer), or keeps the
 * containers the node does not hold on the shared pool (the OCI hook's).
 */
bool ncm__node_isolation_active(const ncm_node *n)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        return ops && ops->isolation;
}

int ncm__node_enforce_isolation(ncm_node *n, bool reconcile, ncm_error *err)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        ncm_autoptr(ncm_cpuset) shared = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) banned = ncm_cpuset_new();
        ncm_autoptr(ncm_knob_memo) before = NULL;
        ncm_enforce_knobbed *v = NULL;
        size_t nv = 0, cap = 0;
        ncm_enforce_isolation iso = {0};
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        const char *pu, *cn;
        const ncm_cpuset *cs;
        int r;

        if (!ncm__node_isolation_active(n))
                return 0;
        if (!shared || !banned)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (!n->memo && ncm__node_memo_load(n, err) < 0)
                return -ENOMEM;
        before = ncm_knob_memo_dup(n->memo);
        if (!before)
                return ncm_error_set(err, ENOMEM, "out of memory");
        /* without a pod that asks for a knob no container has one: no walk over them all */
        while (n->sums.n_knobbed > 0 && ncm_cpu_state_next(n->cpu_state, &it, &pu, &cn, &cs)) {
                unsigned k = ncm__node_container_knobs(n, pu, cn);
                if (!k)
                        continue;
                if (ncm__array_grow(v, cap, nv) < 0) {
                        free(v);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
                v[nv++] = (ncm_enforce_knobbed){ncm_node_pod(n, pu), cn, cs, k};
                if (k & NCM_KNOB_IRQ_LOAD_BALANCING)
                        ncm_cpuset_or(banned, banned, cs);
        }
        ncm_node_shared_pool(n, shared);
        iso.shared = shared;
        iso.all_cpus = n->all_cpus;
        iso.containers = v;
        iso.n_containers = nv;
        iso.irq_banned = banned;
        iso.irqbalance = ncm_node_config_irqbalance_config(n->cfg);
        iso.memo = n->memo;
        iso.persist = memo_persist;
        iso.persist_data = n;
        r = ops->isolation(ncm_enforcer_get_data(n->enforcer), &iso, err);
        free(v);
        if (r < 0) {
                /* the enforcer's rollback puts the machine back; the memo goes back too */
                ncm_knob_memo_free(n->memo);
                n->memo = NCM_TAKE_PTR(before);
                (void)memo_persist(n, NULL);
                return r;
        }
        /* what a reconcile (or a start) found off; an admission's own writes are not fixes */
        for (int k = 0; reconcile && k < NCM_KNOB_FIX_N; k++)
                n->counters_iso.fixed[k] += iso.fixed[k];
        return memo_persist(n, err);
}

const ncm_knob_memo *ncm_node_knob_memo(const ncm_node *n)
{
        return n->memo;
}

const ncm_node_isolation_counters *ncm_node_isolation_counters_get(const ncm_node *n)
{
        return &n->counters_iso;
}
