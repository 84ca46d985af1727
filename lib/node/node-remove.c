/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's removal of a container and of a pod, each in one transaction.
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nodecm/fs.h>
#include "base/json.h"
#include "cpumanager/state-internal.h"
#include "node-internal.h"
#include "pod/pod-internal.h"

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* ------------------------------------------------------------------------------------------
 * Removal
 */

/* What a removal may change in the CPU manager, as it was before. */

/* Whether the registry holds container NAME of UID, not yet removed. */
static bool registry_has(const ncm_node *n, const char *uid, const char *name)
{
        const node_pod *p = ncm__node_pod_find(n, uid);

        for (size_t i = 0; p && i < p->n; i++)
                if (strcmp(p->c[i].name, name) == 0)
                        return !p->c[i].removed;
        return false;
}

typedef struct removal {
        ncm__cpu_state_pod_saved *state; /* the pod's entries and the default set: nothing else
                                          * of the CPU state changes in a removal */
        ncm_cpu_policy_reuse *reuse;
        ncm_cpuset *default_before;
        node_mem_saved *mem; /* the memory manager's state of the pod */
} removal;

static void removal_done(removal *rm)
{
        ncm__cpu_state_pod_saved_free(rm->state);
        ncm_cpu_policy_reuse_free(rm->reuse);
        ncm_cpuset_free(rm->default_before);
        ncm__node_mem_saved_free(rm->mem);
}

static int removal_begin(ncm_node *n, const char *uid, removal *rm, ncm_error *err)
{
        *rm = (removal){0};
        rm->default_before = ncm_cpuset_dup(ncm_cpu_state_default(n->cpu_state));
        if (!rm->default_before)
                return oom(err);
        if (!n->enforcer && !n->txn)
                return 0; /* nothing after the decision can fail but memory */
        if (ncm__cpu_state_pod_save(n->cpu_state, uid, &rm->state) < 0 ||
            ncm_cpu_policy_reuse_save(n->cpu, &rm->reuse, NULL) < 0 ||
            ncm__node_mem_save(n->mem, uid, &rm->mem) < 0) {
                removal_done(rm);
                return oom(err);
        }
        return 0;
}

/*
 * Undo the CPU and memory managers' part of a removal whose enforcement or files failed (the
 * transaction doomed first: the disk holds the state as it was).
 */
static void removal_undo(ncm_node *n, removal *rm)
{
        if (!rm->state)
                return;
        (void)ncm__cpu_state_pod_restore(n->cpu_state, rm->state);
        (void)ncm_cpu_policy_reuse_restore(n->cpu, rm->reuse, NULL);
        (void)ncm__node_mem_restore(n, rm->mem, NULL);
}

/* The CPU manager's RemoveContainer for (UID, NAME); adds the CPUs it freed to RELEASED. */
static int release_cpus(ncm_node *n, const char *uid, const char *name, ncm_cpuset *released,
                        ncm_error *err)
{
        bool had = ncm_cpu_state_get(n->cpu_state, uid, name) != NULL;
        ncm_autoptr(ncm_cpuset) before = ncm_cpuset_dup(ncm_cpu_state_default(n->cpu_state));
        int r;

        if (!before)
                return oom(err);
        r = ncm_cpu_policy_remove_container(n->cpu, n->cpu_state, uid, name, err);
        if (r < 0)
                return r;
        if (released) {
                ncm_autoptr(ncm_cpuset) diff = ncm_cpuset_new();
                if (!diff)
                        return oom(err);
                ncm_cpuset_andnot(diff, ncm_cpu_state_default(n->cpu_state), before);
                ncm_cpuset_or(released, released, diff);
        }
        return had ? 1 : 0;
}

/* The topology manager and the registry forget (UID, NAME); 1 when the registry knew it. */
static int forget_container(ncm_node *n, const char *uid, const char *name)
{
        ncm_autofree char *id = NULL;
        node_pod *p = ncm__node_pod_find(n, uid);
        int known = 0;

        if (asprintf(&id, "%s/%s", uid, name) >= 0)
                ncm_tm_remove_container(n->tm, id);
        for (size_t i = 0; p && i < p->n; i++) {
                if (strcmp(p->c[i].name, name) == 0 && !p->c[i].removed) {
                        p->c[i].removed = true;
                        known = 1;
                }
        }
        return known;
}

/*
 * The enforcer's part of a removal whose shared pool may have moved (and, with POD, the pod's
 * cgroups removed, last: that cannot be undone): 1 with its transaction open, 0 without an
 * enforcer, or its error (rolled back).
 */
static int enforce_removal(ncm_node *n, const char *skip_uid, const ncm_pod *pod,
                           const char *gone_uid, const char *gone_name,
                           const ncm_cpuset *default_before, const char *what, ncm_error *err)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        bool moved = !ncm_cpuset_equal(default_before, ncm_cpu_state_default(n->cpu_state));
        bool iso = ncm__node_isolation_active(n);
        ncm_cgroup_qos_usage usage;
        int r;

        if (!ops || (!moved && !iso && !(pod && ops->pod_remove)))
                return 0;
        r = pod ? ncm__node_usage_of(n, skip_uid, &usage, err) : 0;
        if (r >= 0)
                r = ncm__node_enforcer_begin(n, err);
        if (r >= 0 && moved)
                r = ncm__node_enforcer_shared(n, skip_uid, err);
        /* what goes (GONE_NAME NULL: the whole pod) counts as gone: its knobs are undone */
        if (r >= 0 && iso) {
                n->removing = (node_removing){gone_uid, gone_name};
                r = ncm__node_enforce_isolation(n, false, err);
                n->removing = (node_removing){NULL, NULL};
        }
        /* the removal of its cgroups comes last: it cannot be undone */
        if (r >= 0 && pod && ops->pod_remove)
                r = ops->pod_remove(ncm__node_enforcer_data(n), pod, &usage, err);
        if (r < 0)
                return ncm__node_enforcer_fail(n, r, what, err);
        return 1;
}

/* The files of a removal, then the enforcer's commit (ENFORCING: its transaction is open). */
static int removal_commit(ncm_node *n, bool enforcing, ncm_error *err)
{
        int r = ncm__node_txn_commit(n, err);

        if (r < 0)
                return enforcing ? ncm__node_enforcer_undo(n, r, err) : r;
        return enforcing ? ncm__node_enforcer_commit(n, err) : 0;
}

/* The CPU and memory managers' part of a removal: >0 when it released anything (RELEASED: its
 * CPUs), 0 when nothing, or -errno. NAME NULL: the whole pod, DATA its record (NULL: none). */
typedef int (*release_fn)(ncm_node *n, const char *uid, const char *name, void *data,
                          ncm_cpuset *released, ncm_error *err);

/*
 * The one skeleton of a removal, of a container (NAME) or of a pod (NAME NULL, SPEC the pod
 * as the registry holds it, NULL: unknown): one transaction that holds the record's change
 * (RECORD: it has one), RELEASE's and the enforcer's part, and the files; on any failure all
 * of it undone and the registry untouched. RELEASE's result, or -errno.
 */
static int removal_run(ncm_node *n, const char *uid, const char *name, const ncm_pod *spec,
                       bool record, release_fn release, void *data, ncm_cpuset *released,
                       ncm_error *err)
{
        removal rm;
        char what[512];
        bool enforcing = false;
        int r, had;

        if (released)
                ncm_cpuset_zero(released);
        if (n->read_only)
                return ncm_error_set(err, EROFS, "%s: opened read-only", n->dir ? n->dir : "node");
        r = ncm__node_txn_begin(n, err);
        if (r < 0)
                return r;
        ncm__node_txn_pod(n, uid);
        r = record ? ncm__node_persist_pod(n, uid, name, !name, err) : 0;
        if (r >= 0)
                r = removal_begin(n, uid, &rm, err);
        if (r < 0) {
                ncm__node_txn_end(n);
                return r;
        }
        ncm_cpu_state_hold(n->cpu_state);
        had = release(n, uid, name, data, released, err);
        r = had < 0 ? had : 0;
        if (r >= 0 && n->enforcer) {
                if (name)
                        snprintf(what, sizeof(what), "remove container '%s' of pod '%s'", name,
                                 uid);
                else
                        snprintf(what, sizeof(what), "remove pod '%s'", uid);
                r = enforce_removal(n, name ? NULL : uid, name ? NULL : spec, uid, name,
                                    rm.default_before, what, err);
                enforcing = r > 0;
        }
        if (r >= 0)
                r = removal_commit(n, enforcing, err);
        if (r < 0) {
                n->txn_doomed = n->txn != NULL;
                removal_undo(n, &rm);
                removal_done(&rm);
                if (released)
                        ncm_cpuset_zero(released);
                ncm__node_txn_end(n);
                return r;
        }
        removal_done(&rm);
        ncm__node_txn_end(n);
        return had;
}

/* RemoveContainer's release: its CPUs, then its memory, in the same commit. */
static int release_container(ncm_node *n, const char *uid, const char *name, void *data,
                             ncm_cpuset *released, ncm_error *err)
{
        int had = release_cpus(n, uid, name, released, err);
        int r = ncm_cpu_state_flush(n->cpu_state, had < 0 ? NULL : err);

        r = had < 0 ? had : r < 0 ? r : had;
        if (r >= 0) {
                /* the memory manager's RemoveContainer, in the same commit */
                int mr = ncm__node_mem_release(n, uid, name, err);
                if (mr >= 0)
                        mr = ncm__node_mem_flush(n, err);
                if (mr < 0)
                        r = mr;
                else if (mr > 0 && had == 0)
                        had = 1;
        }
        return r < 0 ? r : had;
}

int ncm_node_remove_container(ncm_node *n, const char *pod_uid, const char *name,
                              ncm_cpuset *released, ncm_error *err)
{
        /* its record changes exactly when the registry knows the container */
        bool rec = n->persist_pods && registry_has(n, pod_uid, name);
        int had = removal_run(n, pod_uid, name, NULL, rec, release_container, NULL, released, err);

        if (had < 0)
                return had;
        return (forget_container(n, pod_uid, name) || had > 0) ? 1 : 0;
}

/* The names of POD_UID's entries in the CPU state, NULL-terminated (*RET): the state's pods are
 * sorted by UID, so the pod is found without a look at the others. */
static int state_entries(const ncm_node *n, const char *pod_uid, char ***ret)
{
        const ncm_cpu_state *s = n->cpu_state;
        size_t lo, nn = 0;
        char **names;

        if (ncm__cpu_state_find_pod(s, pod_uid, &lo))
                nn = ncm_cpu_state_pod_num_containers(s, lo);
        names = calloc(nn + 1, sizeof(*names));
        if (!names)
                return -ENOMEM;
        for (size_t i = 0; i < nn; i++) {
                names[i] = strdup(ncm_cpu_state_container_name(s, lo, i));
                if (!names[i]) {
                        ncm__node_strv_free(names);
                        return -ENOMEM;
                }
        }
        *ret = names;
        return 0;
}

/* A pod's release: every container's CPUs, then the pod's memory, in the same commit. */
static int release_pod(ncm_node *n, const char *pod_uid, const char *name, void *data,
                       ncm_cpuset *released, ncm_error *err)
{
        node_pod *p = data;
        char **names = NULL;
        int any = p ? 1 : 0, r = 0;

        (void)name;
        /* the registry's containers (init, then app, in spec order), then entries it does not
         * know (restored from a checkpoint), in name order */
        for (size_t i = 0; p && i < p->n && r >= 0; i++)
                r = release_cpus(n, pod_uid, p->c[i].name, released, err);
        if (r >= 0 && state_entries(n, pod_uid, &names) < 0)
                r = oom(err);
        for (size_t i = 0; names && names[i] && r >= 0; i++) {
                r = release_cpus(n, pod_uid, names[i], released, err);
                /* a policy that keeps no entries (none) leaves restored ones: drop */
                if (r >= 0 && ncm_cpu_state_get(n->cpu_state, pod_uid, names[i]))
                        r = ncm_cpu_state_delete(n->cpu_state, pod_uid, names[i], err);
                any = 1;
        }
        ncm__node_strv_free(names);
        {
                int w = ncm_cpu_state_flush(n->cpu_state, r < 0 ? NULL : err);
                if (r >= 0 && w < 0)
                        r = w;
        }
        if (r >= 0) {
                int mr = ncm__node_mem_release_pod(n, p ? p->spec : NULL, pod_uid, err);
                if (mr >= 0)
                        mr = ncm__node_mem_flush(n, err);
                if (mr < 0)
                        r = mr;
                else
                        any |= mr;
        }
        return r < 0 ? r : any;
}

int ncm_node_remove_pod(ncm_node *n, const char *pod_uid, ncm_cpuset *released, ncm_error *err)
{
        node_pod *p = ncm__node_pod_find(n, pod_uid);
        int any = removal_run(n, pod_uid, NULL, p ? p->spec : NULL, n->persist_pods && p,
                              release_pod, p, released, err);
        int r;

        if (any < 0)
                return any;
        /*
         * The pod goes whole: the registry's record and the topology manager's store of it at
         * once below (one container at a time would be quadratic in its size).
         *
         * The device manager releases a pod's devices when the pod goes, not per container: its
         * checkpoint is a commit of its own, after the pod's (a crash between the two leaves
         * devices held by a pod no record knows, which the kubelet's restart frees too).
         */
        r = ncm_devmgr_remove_pod(n->dev, pod_uid, err);
        if (r < 0)
                return r;
        any |= r;
        ncm_tm_remove_pod(n->tm, pod_uid);
        ncm__node_pod_forget(n, pod_uid);
        return any;
}
