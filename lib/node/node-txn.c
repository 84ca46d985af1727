/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's admission and its transaction: every write of one decision in one batch, committed
 * all or nothing (node.c, "Transactions").
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nodecm/fs.h>
#include "base/array.h"
#include "base/json.h"
#include "node-internal.h"
#include "pod/pod-internal.h"

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* ------------------------------------------------------------------------------------------
 * Admission
 */

ncm_node_admission *ncm_node_admission_free(ncm_node_admission *a)
{
        if (!a)
                return NULL;
        for (size_t i = 0; i < a->n_containers; i++) {
                free(a->containers[i].name);
                ncm_cpuset_free(a->containers[i].cpus);
                free(a->containers[i].numa);
                ncm_devmgr_assignments_free(a->containers[i].devices, a->containers[i].n_devices);
                ncm_devmgr_alloc_resp_free(a->containers[i].device_options);
                ncm_mem_blocks_free(a->containers[i].memory, a->containers[i].n_memory);
        }
        free(a->containers);
        for (size_t i = 0; i < a->n_events; i++)
                ncm__node_event_done(&a->events[i]);
        free(a->events);
        free(a);
        return NULL;
}

/* What an admission may change, as it was before. */
typedef struct snapshot {
        ncm_cpuset *default_set;
        ncm_cpu_state *full;        /* only when the pod already had entries */
        bool pod_known;             /* in the registry */
        ncm_tm_pod_hints *tm_hints; /* only when known */
        ncm_cpu_policy_reuse *policy_reuse;
        char **dev_had; /* the pod's containers that held devices, NULL-terminated */
        node_mem_saved *mem;
} snapshot;

void ncm__node_strv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

static bool strv_contains(char *const *v, const char *s)
{
        for (size_t i = 0; v && v[i]; i++)
                if (strcmp(v[i], s) == 0)
                        return true;
        return false;
}

static void snapshot_done(snapshot *s)
{
        ncm_cpuset_free(s->default_set);
        ncm_cpu_state_free(s->full);
        ncm_tm_pod_hints_free(s->tm_hints);
        ncm_cpu_policy_reuse_free(s->policy_reuse);
        ncm__node_strv_free(s->dev_had);
        ncm__node_mem_saved_free(s->mem);
}

/* The containers of POD that hold devices now, into *RET (NULL-terminated). */
static int containers_with_devices(const ncm_node *n, const ncm_pod *pod, char ***ret)
{
        size_t total = pod->n_init_containers + pod->n_containers, k = 0;
        char **v = calloc(total + 1, sizeof(*v));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < total; i++) {
                const ncm_container *c = ncm__node_nth_container(pod, i);
                ncm_devmgr_assignment *as = NULL;
                size_t na = 0;
                if (ncm_devmgr_container_devices(n->dev, pod->uid, c->name, &as, &na) < 0) {
                        ncm__node_strv_free(v);
                        return -ENOMEM;
                }
                ncm_devmgr_assignments_free(as, na);
                if (na > 0 && !(v[k++] = strdup(c->name))) {
                        ncm__node_strv_free(v);
                        return -ENOMEM;
                }
        }
        *ret = v;
        return 0;
}

static int snapshot_take(ncm_node *n, const ncm_pod *pod, snapshot *s, ncm_error *err)
{
        const char *uid = pod->uid;

        *s = (snapshot){0};
        s->default_set = ncm_cpuset_dup(ncm_cpu_state_default(n->cpu_state));
        if (!s->default_set)
                goto fail;
        if (ncm_cpu_state_pod_index(n->cpu_state, uid) != SIZE_MAX &&
            !(s->full = ncm_cpu_state_dup(n->cpu_state)))
                goto fail;
        if (ncm_cpu_policy_reuse_save(n->cpu, &s->policy_reuse, NULL) < 0)
                goto fail;
        s->pod_known = ncm__node_pod_find(n, uid) != NULL;
        if (s->pod_known && ncm_tm_pod_hints_save(n->tm, uid, &s->tm_hints, NULL) < 0)
                goto fail;
        if (containers_with_devices(n, pod, &s->dev_had) < 0)
                goto fail;
        if (ncm__node_mem_save(n->mem, uid, &s->mem) < 0)
                goto fail;
        return 0;
fail:
        snapshot_done(s);
        return oom(err);
}

static int rollback(ncm_node *n, const ncm_pod *pod, snapshot *s, ncm_error *err)
{
        const char *uid = pod->uid;
        char **now = NULL;
        int r;

        /* devices first (the kubelet's provider order): what this admission gave, then CPUs */
        r = containers_with_devices(n, pod, &now);
        if (r < 0)
                return oom(err);
        for (size_t i = 0; now[i] && r >= 0; i++)
                if (!strv_contains(s->dev_had, now[i]))
                        r = ncm_devmgr_remove_container(n->dev, uid, now[i], err);
        ncm__node_strv_free(now);
        if (r < 0)
                return r;
        r = 0;

        if (s->full) {
                if (!ncm_cpu_state_equal(n->cpu_state, s->full))
                        r = ncm_cpu_state_assign(n->cpu_state, s->full, err);
        } else {
                if (ncm_cpu_state_pod_index(n->cpu_state, uid) != SIZE_MAX)
                        r = ncm_cpu_state_delete_pod(n->cpu_state, uid, err);
                if (r >= 0 &&
                    !ncm_cpuset_equal(ncm_cpu_state_default(n->cpu_state), s->default_set))
                        r = ncm_cpu_state_set_default(n->cpu_state, s->default_set, err);
        }
        if (r < 0)
                return r;
        if (!s->pod_known)
                ncm_tm_remove_pod(n->tm, uid);
        else
                r = ncm_tm_pod_hints_restore(n->tm, s->tm_hints, err);
        if (r >= 0)
                r = ncm_cpu_policy_reuse_restore(n->cpu, s->policy_reuse, err);
        if (r >= 0)
                r = ncm__node_mem_restore(n, s->mem, err);
        return r;
}

/* The NUMA nodes of CPUS (ascending ids) into IDS (room for every node); how many. */
static size_t numa_of_cpus(const ncm_node *n, const ncm_cpuset *cpus, int *ids)
{
        int64_t small[64];
        ncm_autofree int64_t *heap = NULL;
        int64_t *idv = small;
        size_t nn = (size_t)ncm_topo_num_numa_nodes(n->topo), k;

        if (nn > NCM_ELEMENTSOF(small) && !(idv = heap = malloc(nn * sizeof(*heap))))
                return SIZE_MAX;
        k = ncm_topo_ids_of_cpus(n->topo, NCM_TOPO_NUMA, cpus, idv);
        for (size_t i = 0; i < k; i++)
                ids[i] = (int)idv[i];
        return k;
}

static int result_containers(ncm_node *n, const ncm_pod *pod, ncm_node_admission *a)
{
        size_t total = pod->n_init_containers + pod->n_containers;
        size_t nn = (size_t)ncm_topo_num_numa_nodes(n->topo), n_shared;
        ncm_autoptr(ncm_cpuset) shared = ncm_cpuset_new();
        ncm_autofree int *shared_numa = malloc((nn + 1) * sizeof(int));

        if (!shared || !shared_numa)
                return -ENOMEM;
        ncm_node_shared_pool(n, shared);
        /* once for every container on the shared pool (most of a big pod's) */
        n_shared = numa_of_cpus(n, shared, shared_numa);
        if (n_shared == SIZE_MAX)
                return -ENOMEM;
        a->containers = calloc(total + 1, sizeof(*a->containers));
        if (!a->containers)
                return -ENOMEM;
        for (size_t i = 0; i < total; i++) {
                const ncm_container *c = ncm__node_nth_container(pod, i);
                ncm_node_container_result *cr = &a->containers[i];
                const ncm_cpuset *own = ncm_cpu_state_get(n->cpu_state, pod->uid, c->name);

                a->n_containers = i + 1;
                cr->name = strdup(c->name);
                cr->cpus = ncm_cpuset_dup(own ? own : shared);
                cr->numa = malloc((nn + 1) * sizeof(*cr->numa));
                if (!cr->name || !cr->cpus || !cr->numa)
                        return -ENOMEM;
                cr->init = c->init;
                cr->sidecar = c->sidecar;
                cr->exclusive = own != NULL;
                if (own) {
                        cr->n_numa = numa_of_cpus(n, own, cr->numa);
                        if (cr->n_numa == SIZE_MAX)
                                return -ENOMEM;
                } else {
                        memcpy(cr->numa, shared_numa, n_shared * sizeof(int));
                        cr->n_numa = n_shared;
                }
                cr->affinity = ncm_tm_get_affinity(n->tm, pod->uid, c->name);
                if (ncm_devmgr_container_devices(n->dev, pod->uid, c->name, &cr->devices,
                                                 &cr->n_devices) < 0 ||
                    ncm_devmgr_container_options(n->dev, pod->uid, c->name, &cr->device_options) <
                                    0 ||
                    ncm__node_mem_result(n, pod->uid, c->name, cr) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The runtime's container id for the topology manager's store: "<uid>/<name>". */
int ncm__node_add_container_ids(ncm_node *n, const ncm_pod *pod)
{
        for (size_t i = 0; i < pod->n_init_containers + pod->n_containers; i++) {
                const ncm_container *c = ncm__node_nth_container(pod, i);
                ncm_autofree char *id = NULL;
                if (asprintf(&id, "%s/%s", pod->uid, c->name) < 0)
                        return -ENOMEM;
                if (ncm_tm_add_container(n->tm, pod->uid, c->name, id) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* The topology manager's metrics of an admission (its container-scope alignment is counted
 * as the CPU manager allocates, node-cpu.c). */
static void count_admission(ncm_node *n, const ncm_tm_admit_result *res)
{
        ncm_node_counters *k = &n->counters;
        bool snn = ncm_node_config_tm_policy_is_single_numa_node(n->cfg);
        int scope = ncm_node_config_tm_scope_is_pod(n->cfg) ? NCM_NODE_SCOPE_POD
                                                            : NCM_NODE_SCOPE_CONTAINER;

        k->tm_admissions++;
        if (!res->admit) {
                k->tm_admission_errors++;
                /* the merge refused it (not an allocation) */
                if (snn && strcmp(res->reason, "TopologyAffinityError") == 0)
                        k->aligned_failures[scope][NCM_NODE_ALIGN_NUMA_NODE]++;
        } else if (snn && scope == NCM_NODE_SCOPE_POD) {
                k->aligned[NCM_NODE_SCOPE_POD][NCM_NODE_ALIGN_NUMA_NODE]++;
        }
}

const ncm_node_counters *ncm_node_get_counters(const ncm_node *n)
{
        return &n->counters;
}

uint64_t ncm_node_dir_syncs(const ncm_node *n)
{
        return n->dir_syncs;
}

/*
 * The caller's batch for the one decision it asks: set around the call only (a decision's
 * nested transactions see it, nothing after it does).
 */
ncm_fs_batch *ncm__node_stage(ncm_node *n, ncm_fs_batch *batch)
{
        ncm_fs_batch *prev = n->stage;

        if (batch)
                n->stage = batch;
        return prev;
}

int ncm_node_admit_batch(ncm_node *n, const ncm_pod *pod, unsigned flags, ncm_fs_batch *batch,
                         ncm_node_admission **ret, ncm_error *err)
{
        ncm_fs_batch *prev = ncm__node_stage(n, batch);
        int r = ncm_node_admit(n, pod, flags, ret, err);

        n->stage = prev;
        return r;
}

int ncm__node_txn_begin(ncm_node *n, ncm_error *err)
{
        int r;

        if (!n->dir || n->read_only || n->txn_depth++ > 0)
                return 0;
        if (!n->stage && !n->own && !(n->own = ncm_fs_batch_new())) {
                n->txn_depth--;
                return oom(err);
        }
        n->txn = n->stage ? n->stage : n->own;
        ncm_fs_batch_set_faults(n->txn, n->faults);
        r = ncm_fs_batch_set_undo(n->txn, AT_FDCWD, n->undo_path, err);
        if (r < 0) {
                n->txn = NULL;
                n->txn_depth--;
                return r;
        }
        n->txn_doomed = false;
        n->txn_replaced = false;
        n->txn_jn = n->pods_jn;
        n->txn_cpu = false;
        n->txn_pod = NULL;
        return 0;
}

bool ncm__node_deferring(const ncm_node *n)
{
        return n->defer_sync && !n->stage && n->pods_journal && n->persist_pods && !n->read_only;
}

void ncm__node_txn_pod(ncm_node *n, const char *uid)
{
        if (n->txn && n->txn_depth == 1)
                n->txn_pod = uid;
}

void ncm_node_defer_sync(ncm_node *n, bool on)
{
        n->defer_sync = on;
}

bool ncm_node_unsynced(const ncm_node *n)
{
        return n->unsynced;
}

bool ncm_node_behind(const ncm_node *n)
{
        return n->unsynced || n->cpu_behind ||
               (n->pods_journal && ncm__journal_over(&n->pods_jn, n->n_pods, 0));
}

int ncm_node_sync(ncm_node *n, ncm_error *err)
{
        ncm_autofree char *journal = NULL;
        int r;

        if (!n->unsynced)
                return 0;
        if (asprintf(&journal, "%s/%s", n->dir, NCM_NODE_PODS_JOURNAL_NAME) < 0)
                return oom(err);
        r = ncm_fs_sync_data(AT_FDCWD, journal, n->faults, err);
        if (r >= 0)
                n->unsynced = false;
        return r;
}

static int flush_files(ncm_node *n, ncm_error *err);

int ncm_node_flush(ncm_node *n, ncm_error *err)
{
        bool defer = n->defer_sync;
        int r = ncm_node_sync(n, err);

        if (r < 0 || !n->dir || n->read_only)
                return r;
        n->defer_sync = false; /* its own writes are durable when it returns */
        r = flush_files(n, err);
        n->defer_sync = defer;
        return r;
}

static int flush_files(ncm_node *n, ncm_error *err)
{
        int r = 0;

        /* the kubelet's file whole and durable (its directory synced) before the journal that
         * says what it lacks may be emptied */
        if (n->cpu_behind) {
                r = ncm_cpu_state_persist(n->cpu_state, err);
                if (r < 0)
                        return r;
                n->cpu_behind = false;
        }
        if (n->pods_journal && ncm__journal_over(&n->pods_jn, n->n_pods, 0))
                r = ncm__node_persist_pods(n, err);
        return r;
}

int ncm__node_txn_commit(ncm_node *n, ncm_error *err)
{
        bool deferring;
        int r;

        if (!n->txn || n->txn_depth > 1)
                return 0;
        if (n->txn_doomed)
                return ncm_error_set(err, EIO, "commit of a failed transaction");
        deferring = ncm__node_deferring(n);
        /* the pod's entries as they are now, after its record: the journal is the commit */
        if (n->txn_cpu) {
                r = ncm__node_cpu_line(n, n->txn_pod, err);
                if (r < 0) {
                        n->txn_doomed = true;
                        return r;
                }
        }
        /* an owner's batch leaves the directory's fsync to it (ncm_fs_batch_settle); under
         * group commit the appends' fdatasync is the caller's (ncm_node_sync) */
        r = ncm_fs_batch_commit(n->txn,
                                (n->stage ? NCM_FS_WRITE_NO_DIRSYNC : 0) |
                                                (deferring ? NCM_FS_APPEND_NO_SYNC : 0),
                                err);
        if (r < 0) {
                n->txn_doomed = true;
                return r;
        }
        /* what it appended to the journal waits for ncm_node_sync (a fold replaced it whole) */
        if (deferring && n->pods_jn.gen == n->txn_jn.gen && n->pods_jn.lines != n->txn_jn.lines)
                n->unsynced = true;
        if (n->txn_cpu)
                n->cpu_behind = true;
        if (!n->stage && n->txn_replaced)
                n->dir_syncs++; /* the commit ended with the directory's fsync */
        return 0;
}

void ncm__node_txn_end(ncm_node *n)
{
        if (!n->txn || --n->txn_depth > 0)
                return;
        /* what was not committed goes, and the journal's count with it */
        if (ncm_fs_batch_size(n->txn) > 0 || n->txn_doomed) {
                ncm_fs_batch_drop(n->txn);
                n->pods_jn = n->txn_jn;
        }
        n->txn = NULL;
        n->txn_doomed = false;
        n->txn_cpu = false;
        n->txn_pod = NULL;
}

int ncm__node_write(ncm_node *n, const char *path, const void *data, size_t len, ncm_error *err)
{
        int r;

        if (n->read_only || n->txn_doomed)
                return 0; /* nothing to write, or a rollback's: the disk holds it still */
        if (n->txn) {
                n->txn_replaced = true;
                return ncm_fs_batch_write(n->txn, AT_FDCWD, path, data, len, 0600, err);
        }
        /* outside a decision (start-up, a device plugin's change): a commit of its own */
        r = ncm__node_txn_begin(n, err);
        if (r < 0)
                return r;
        if (!n->txn) /* no directory */
                return ncm_fs_write_atomic(AT_FDCWD, path, data, len, 0600, err);
        r = ncm__node_write(n, path, data, len, err);
        if (r >= 0)
                r = ncm__node_txn_commit(n, err);
        ncm__node_txn_end(n);
        return r;
}

/* Whether the registry's record of POD (if any) is POD itself, its removed containers none. */
static bool held_as_is(const ncm_node *n, const ncm_pod *pod)
{
        const node_pod *p = ncm__node_pod_find(n, pod->uid);
        ncm_buf a = NCM_BUF_INIT, b = NCM_BUF_INIT;
        bool same;

        if (!p || !p->spec)
                return false;
        for (size_t i = 0; i < p->n; i++)
                if (p->c[i].removed)
                        return false;
        ncm_pod_format_json(p->spec, &a);
        ncm_pod_format_json(pod, &b);
        same = !ncm_buf_failed(&a) && !ncm_buf_failed(&b) && a.len == b.len &&
               memcmp(a.data, b.data, a.len) == 0;
        ncm_buf_done(&a);
        ncm_buf_done(&b);
        return same;
}

int ncm_node_admit(ncm_node *n, const ncm_pod *pod, unsigned flags, ncm_node_admission **ret,
                   ncm_error *err)
{
        ncm_autoptr(ncm_node_admission) a = calloc(1, sizeof(*a));
        node_txn txn = {.n = n, .pod = pod, .explain = (flags & NCM_NODE_EXPLAIN) != 0};
        ncm_tm_admit_result res;
        snapshot snap;
        node_pod rec;
        bool same_record;
        int r;

        if (!a)
                return oom(err);
        if (n->read_only)
                return ncm_error_set(err, EROFS, "%s: opened read-only", n->dir ? n->dir : "node");
        /* a DRA driver writes a claim's CDI spec just before its container is created */
        if (n->locator)
                ncm_locator_refresh(n->locator);
        r = ncm__node_txn_begin(n, err);
        if (r < 0)
                return r;
        ncm__node_txn_pod(n, pod->uid);
        /*
         * The kubelet's resource-fit predicates, before anything changes (node-fit.c). Inside
         * the transaction: a refusal here, as any refusal, drops the owner's staged writes
         * with the node's (nothing written at all).
         */
        if (!(flags & NCM__NODE_NO_FIT) && ncm__node_fit_wanted(n, flags)) {
                r = ncm__node_fit_admit(n, pod, flags, ret, err);
                if (r != 0) {
                        n->txn_doomed = n->txn != NULL;
                        ncm__node_txn_end(n);
                        return r < 0 ? r : 0;
                }
        }
        r = snapshot_take(n, pod, &snap, err);
        if (r < 0) {
                ncm__node_txn_end(n);
                return r;
        }
        same_record = held_as_is(n, pod);
        if (txn.explain) {
                ncm_tm_trace trace = {ncm__node_explain_trace, &txn};
                r = ncm__node_explain_begin(&txn);
                if (r < 0) {
                        snapshot_done(&snap);
                        ncm__node_txn_done(&txn);
                        ncm__node_txn_end(n);
                        return oom(err);
                }
                ncm_tm_set_trace(n->tm, &trace);
        }
        /* the decision is written once, whole (ncm_cpu_state_hold), and joins the transaction */
        ncm_cpu_state_hold(n->cpu_state);
        r = ncm_tm_admit(n->tm, pod, &txn, &res, err);
        ncm_tm_set_trace(n->tm, NULL);
        if (r >= 0)
                count_admission(n, &res);

        if (r >= 0 && txn.trace_err < 0)
                r = oom(err);
        if (r >= 0 && res.admit) {
                r = ncm_cpu_state_flush(n->cpu_state, err);
                if (r >= 0)
                        r = ncm__node_mem_flush(n, err);
                if (r < 0)
                        ncm_cpu_state_hold(n->cpu_state); /* the rollback below writes once */
        }
        if (r < 0 || !res.admit) {
                /* refused or failed before any commit: nothing was written, nothing will be */
                ncm_error e = NCM_ERROR_INIT;
                int rb;
                n->txn_doomed = n->txn != NULL;
                rb = rollback(n, pod, &snap, &e);
                if (rb >= 0)
                        rb = ncm_cpu_state_flush(n->cpu_state, &e);
                else
                        (void)ncm_cpu_state_flush(n->cpu_state, NULL);
                snapshot_done(&snap);
                ncm__node_txn_end(n);
                if (r >= 0 && rb < 0) {
                        if (err)
                                *err = e;
                        r = rb;
                }
                if (r < 0) {
                        ncm__node_txn_done(&txn);
                        return r;
                }
                a->admitted = false;
                snprintf(a->reason, sizeof(a->reason), "%s", res.reason);
                snprintf(a->message, sizeof(a->message), "%s", res.message);
        } else {
                /*
                 * The registry, the enforcer's writes, then the files in one commit, then the
                 * enforcer's commit: a refusal by the enforcer writes no file, a failed commit
                 * undoes the enforcer's writes (and the commit itself).
                 */
                node_pod old = {0};
                node_pod *prev = ncm__node_pod_find(n, pod->uid);
                bool had = false, put = false, enforcing = false;
                r = prev ? ncm__node_pod_copy(prev, &old) : 0;
                had = prev && r >= 0;
                if (r >= 0)
                        r = ncm__node_pod_make(pod, &rec);
                if (r >= 0) {
                        r = ncm__node_pod_put(n, &rec);
                        put = r >= 0;
                }
                if (r < 0)
                        r = oom(err);
                /* the same pod again, as it is held: its record needs no line */
                if (r >= 0 && n->persist_pods && !same_record)
                        r = ncm__node_persist_pod(n, pod->uid, NULL, false, err);
                if (r >= 0) {
                        r = ncm__node_enforce_admission(n, pod, snap.default_set, err);
                        enforcing = r > 0;
                }
                if (r >= 0)
                        r = ncm__node_txn_commit(n, err);
                if (r < 0 && enforcing) {
                        r = ncm__node_enforcer_undo(n, r, err);
                } else if (r >= 0 && enforcing) {
                        r = ncm__node_enforcer_commit(
                                        n, err); /* out of memory at worst: the files stand */
                }
                if (r < 0 && !n->txn_doomed && n->txn && ncm_fs_batch_size(n->txn) == 0) {
                        /* committed, then the enforcer's commit ran out of memory */
                        ncm__node_txn_end(n);
                        if (had)
                                ncm__node_pod_done(&old);
                        snapshot_done(&snap);
                        ncm__node_txn_done(&txn);
                        return r;
                }
                if (r < 0) {
                        ncm_error e = NCM_ERROR_INIT;
                        n->txn_doomed = n->txn != NULL;
                        if (put && had) {
                                (void)ncm__node_pod_put(n, &old);
                                had = false;
                        } else if (put) {
                                ncm__node_pod_forget(n, pod->uid);
                        }
                        if (had)
                                ncm__node_pod_done(&old);
                        ncm_cpu_state_hold(n->cpu_state);
                        (void)rollback(n, pod, &snap, &e);
                        (void)ncm_cpu_state_flush(n->cpu_state, &e);
                        snapshot_done(&snap);
                        ncm__node_txn_end(n);
                        ncm__node_txn_done(&txn);
                        return r;
                }
                ncm__node_txn_end(n);
                if (had)
                        ncm__node_pod_done(&old);
                snapshot_done(&snap);
                r = ncm__node_add_container_ids(n, pod);
                if (r >= 0)
                        r = result_containers(n, pod, a);
                if (r < 0) {
                        ncm__node_txn_done(&txn);
                        return oom(err);
                }
                a->admitted = true;
        }
        a->events = NCM_TAKE_PTR(txn.ev);
        a->n_events = txn.n_ev;
        txn.n_ev = 0;
        ncm__node_txn_done(&txn);
        *ret = NCM_TAKE_PTR(a);
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * Hooks for the resize (node-resize.c): an admission's transaction, made of the same parts
 */

struct ncm__node_saved {
        snapshot snap;
};

int ncm__node_save(ncm_node *n, const ncm_pod *pod, ncm__node_saved **ret, ncm_error *err)
{
        ncm__node_saved *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return oom(err);
        r = snapshot_take(n, pod, &s->snap, err);
        if (r < 0) {
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

ncm__node_saved *ncm__node_saved_free(ncm__node_saved *s)
{
        if (s) {
                snapshot_done(&s->snap);
                free(s);
        }
        return NULL;
}

int ncm__node_restore(ncm_node *n, const ncm_pod *pod, ncm__node_saved *s, ncm_error *err)
{
        int r;

        ncm_cpu_state_hold(n->cpu_state);
        r = rollback(n, pod, &s->snap, err);
        if (r >= 0)
                r = ncm_cpu_state_flush(n->cpu_state, err);
        else
                (void)ncm_cpu_state_flush(n->cpu_state, NULL);
        return r;
}

const ncm_cpuset *ncm__node_saved_default(const ncm__node_saved *s)
{
        return s->snap.default_set;
}

int ncm__node_result(ncm_node *n, const ncm_pod *pod, ncm_node_admission *a)
{
        return result_containers(n, pod, a);
}

int ncm__node_pod_respec(ncm_node *n, const ncm_pod *pod, ncm_pod **ret_old, ncm_error *err)
{
        node_pod *p = ncm__node_pod_find(n, pod->uid);
        ncm_pod *spec, *old;
        int r = 0;

        if (!p)
                return ncm_error_set(err, ENOENT, "pod '%s' is not on the node", pod->uid);
        spec = ncm_pod_dup(pod);
        if (!spec)
                return oom(err);
        /* the registry's sums take the new requests */
        ncm__node_sums_leave(n, p);
        old = p->spec;
        p->spec = spec;
        p->fit = (ncm__node_fit_req_free(p->fit), NULL);
        ncm__node_sums_enter(n, p);
        if (n->persist_pods)
                r = ncm__node_persist_pod(n, pod->uid, NULL, false, err);
        if (r < 0) {
                ncm__node_sums_leave(n, p);
                p->spec = old;
                p->fit = (ncm__node_fit_req_free(p->fit), NULL);
                ncm__node_sums_enter(n, p);
                ncm_pod_free(spec);
                if (n->persist_pods)
                        (void)ncm__node_persist_pod(n, pod->uid, NULL, false, NULL);
                return r;
        }
        *ret_old = old;
        return 0;
}
