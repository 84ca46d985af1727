/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node: construction and start-up in the kubelet's order, admission through the topology
 * manager with per-step transactions, removal, restart from the checkpoint files.
 *
 * Transactions. An admission changes the CPU state (the default set and the pod's entries),
 * the CPU policy's cpusToReuse (the init-container CPUs the pod's later containers may reuse),
 * the topology manager's affinity store and the node's pod registry. Before an admission the
 * node keeps the default set and, only when the pod already has entries (a re-admission), a
 * copy of the whole state; a refused or failed admission puts them back (one more checkpoint
 * write, so the file ends as it began), drops the pod's hints (a known pod gets its earlier
 * ones back), and puts back cpusToReuse as the policy saved it. The cost per step is one copy
 * of the default set and of cpusToReuse (and of a known pod's hints), not of the state.
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
 * The pod registry (sorted by UID)
 */

void ncm__node_pod_done(node_pod *p)
{
        ncm__node_fit_req_free(p->fit);
        ncm_pod_free(p->spec);
        free(p->uid);
        free(p->name);
        for (size_t i = 0; i < p->n; i++)
                free(p->c[i].name);
        free(p->c);
}

static size_t pod_lower_bound(const ncm_node *n, const char *uid)
{
        size_t lo = 0, hi = n->n_pods;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(n->pods[mid]->uid, uid) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

node_pod *ncm__node_pod_find(const ncm_node *n, const char *uid)
{
        size_t i = pod_lower_bound(n, uid);
        return i < n->n_pods && strcmp(n->pods[i]->uid, uid) == 0 ? n->pods[i] : NULL;
}

void ncm__node_pod_forget(ncm_node *n, const char *uid)
{
        size_t i = pod_lower_bound(n, uid);
        if (i >= n->n_pods || strcmp(n->pods[i]->uid, uid) != 0)
                return;
        ncm__node_sums_leave(n, n->pods[i]);
        ncm__node_pod_done(n->pods[i]);
        free(n->pods[i]);
        memmove(&n->pods[i], &n->pods[i + 1], (n->n_pods - i - 1) * sizeof(*n->pods));
        n->n_pods--;
}

const ncm_container *ncm__node_nth_container(const ncm_pod *pod, size_t i)
{
        return i < pod->n_init_containers ? &pod->init_containers[i]
                                          : &pod->containers[i - pod->n_init_containers];
}

/* Build the registry entry for POD (not inserted). */
int ncm__node_pod_make(const ncm_pod *pod, node_pod *ret)
{
        size_t total = pod->n_init_containers + pod->n_containers;
        node_pod p = {0};

        p.uid = strdup(pod->uid);
        p.name = strdup(pod->name ? pod->name : "");
        p.c = calloc(total + 1, sizeof(*p.c));
        p.spec = ncm_pod_dup(pod);
        if (!p.uid || !p.name || !p.c || !p.spec) {
                ncm__node_pod_done(&p);
                return -ENOMEM;
        }
        for (size_t i = 0; i < total; i++) {
                const ncm_container *c = ncm__node_nth_container(pod, i);
                p.c[i].name = strdup(c->name);
                if (!p.c[i].name) {
                        p.n = i;
                        ncm__node_pod_done(&p);
                        return -ENOMEM;
                }
                p.c[i].init = c->init;
                p.c[i].sidecar = c->sidecar;
        }
        p.n = total;
        *ret = p;
        return 0;
}

/* Insert or replace (a re-admission replaces the pod's record). Takes P. */
int ncm__node_pod_put(ncm_node *n, node_pod *p)
{
        size_t i = pod_lower_bound(n, p->uid);

        node_pod *rec;

        if (i < n->n_pods && strcmp(n->pods[i]->uid, p->uid) == 0) {
                ncm__node_sums_leave(n, n->pods[i]);
                ncm__node_pod_done(n->pods[i]);
                *n->pods[i] = *p;
                ncm__node_sums_enter(n, n->pods[i]);
                return 0;
        }
        rec = malloc(sizeof(*rec));
        if (!rec || ncm__array_grow(n->pods, n->cap_pods, n->n_pods) < 0) {
                free(rec);
                ncm__node_pod_done(p);
                return -ENOMEM;
        }
        *rec = *p;
        memmove(&n->pods[i + 1], &n->pods[i], (n->n_pods - i) * sizeof(*n->pods));
        n->pods[i] = rec;
        n->n_pods++;
        ncm__node_sums_enter(n, rec);
        return 0;
}

/* A copy of registry entry P (its spec and removed containers). */
int ncm__node_pod_copy(const node_pod *p, node_pod *ret)
{
        node_pod c;
        int r = ncm__node_pod_make(p->spec, &c);

        if (r < 0)
                return r;
        for (size_t i = 0; i < c.n && i < p->n; i++)
                c.c[i].removed = p->c[i].removed;
        *ret = c;
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * Managers: built together at start-up and at a restart, swapped in only when all succeeded
 */

typedef struct managers {
        ncm_tm *tm;
        ncm_devmgr *dev;
        ncm_cpu_policy *cpu;
        ncm_cpu_state *cpu_state;
        ncm_cpuset *isolated; /* isolatedCPUs' CPUs, NULL under ignore */
        node_mem *mem;
} managers;

static void managers_done(managers *m)
{
        m->mem = ncm__node_mem_free(m->mem);
        m->tm = ncm_tm_free(m->tm);
        m->dev = ncm_devmgr_free(m->dev);
        m->cpu = ncm_cpu_policy_free(m->cpu);
        m->cpu_state = ncm_cpu_state_free(m->cpu_state);
        m->isolated = ncm_cpuset_free(m->isolated);
}

/* Where the CPU state comes from. */
typedef enum state_source {
        SOURCE_FRESH,     /* no checkpoint file: a new state */
        SOURCE_TEXT,      /* a given cpu_manager_state (written to the directory first) */
        SOURCE_DIRECTORY, /* the file in the state directory (restart) */
} state_source;

static char *cpu_checkpoint_path(const ncm_node *n)
{
        char *p = NULL;
        if (asprintf(&p, "%s/%s", n->dir, NCM_CPU_CHECKPOINT_NAME) < 0)
                return NULL;
        return p;
}

/* The persistence hook of a node with a directory: cpu_manager_state through the node's writes. */
static int persist_cpu(const ncm_cpu_state *s, void *userdata, ncm_error *err)
{
        ncm_node *n = userdata;
        ncm_autofree char *path = NULL;
        ncm_buf b = NCM_BUF_INIT;
        int r;

        /* a pod's change under group commit: its journal line is the commit, the file catches
         * up later (ncm_node_flush) */
        if (n->txn && n->txn_pod && !n->txn_doomed && ncm__node_deferring(n)) {
                n->txn_cpu = true;
                return 0;
        }
        path = cpu_checkpoint_path(n);
        if (!path)
                return oom(err);
        ncm_cpu_checkpoint_format_state(s, &b);
        r = ncm_buf_failed(&b) ? oom(err) : ncm__node_write(n, path, b.data, b.len, err);
        ncm_buf_done(&b);
        return r;
}

/* kubelet's restore error, for states read from memory. */
static int restore_error(ncm_error *err, const char *file)
{
        int code = err && err->code ? err->code : NCM_E_INVALID_STATE;
        if (code != NCM_E_CHECKSUM)
                code = NCM_E_INVALID_STATE;
        if (err) {
                char msg[NCM_ERROR_MSG_MAX];
                snprintf(msg, sizeof(msg), "%s", err->msg);
                ncm_error_set(err, code,
                              "could not restore state from checkpoint: %s, please drain this "
                              "node and delete the CPU manager checkpoint file \"%s\" before "
                              "restarting Kubelet",
                              msg, file);
        }
        return -code;
}

static int state_from_text(const char *text, size_t len, const char *name, const char *policy,
                           ncm_kubelet_version v, ncm_cpu_state **ret, ncm_error *err)
{
        ncm_autoptr(ncm_cpu_checkpoint) cp = NULL;
        int r;

        r = ncm_cpu_checkpoint_parse_version(text, len, name, v, &cp, err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return restore_error(err, NCM_CPU_CHECKPOINT_NAME);
        r = ncm_cpu_checkpoint_restore(cp, policy, NULL, 0, ret, err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return restore_error(err, NCM_CPU_CHECKPOINT_NAME);
        return 0;
}

static int build_tm(ncm_node *n, const ncm_node_config *cfg, ncm_tm **ret, ncm_error *err)
{
        size_t nn = 0, nd = 0;
        const int *ids = ncm_topo_numa_ids(n->topo, &nn);
        const uint32_t *d32 = ncm_topo_numa_distances(n->topo, &nd);
        ncm_autofree uint64_t *d64 = NULL;
        ncm_tm_config tc = {0};
        char path[256];
        int r;

        int no_row;

        /* kubelet's NUMAInfo keeps cadvisor's rows: a node without one makes
         * prefer-closest-numa-nodes fail, so no matrix is given then */
        if (d32 && nd == nn && nn > 0 && ncm_topo_numa_distances_missing(n->topo, &no_row) < 0) {
                d64 = calloc(nn * nn, sizeof(*d64));
                if (!d64)
                        return oom(err);
                for (size_t i = 0; i < nn * nn; i++)
                        d64[i] = d32[i];
        }
        tc.policy = cfg->tm_policy;
        tc.scope = cfg->tm_scope;
        tc.options = cfg->tm_opts;
        tc.n_options = cfg->n_tm_opts;
        tc.gates = cfg->tm_gates;
        tc.numa_ids = ids;
        tc.n_numa = nn;
        tc.distances = d64;
        /* The providers describe their hints; the lazy merge reads the descriptions as they
         * are. kubelet's walk (--reference-merge) lists them first. */
        tc.merge_mode = n->reference_merge ? NCM_TM_MERGE_REFERENCE : NCM_TM_MERGE_LAZY;
        r = ncm_tm_new(&tc, ret, err);
        if (r < 0 && r != -ENOMEM)
                ncm_error_prefix(err, "%s",
                                 ncm__node_field(cfg, "topologyManagerPolicy", path, sizeof(path)));
        return r;
}

static int build_cpu(ncm_node *n, const ncm_node_config *cfg, ncm_cpu_policy **ret, ncm_error *err)
{
        ncm_cpu_policy_config pc = {0};
        ncm_kubelet_version v = cfg->kubelet_version;
        char path[256];
        int r;

        if (n->kubelet_override.major)
                v = n->kubelet_override;
        if (ncm_node_config_cpu_policy_is_static(cfg)) {
                /* option checks that need the machine: name them as the option field */
                ncm_cpu_options o;
                r = ncm_cpu_options_parse_version(cfg->cpu_opts, cfg->n_cpu_opts, cfg->cpu_gates, v,
                                                  &o, err);
                if (r >= 0)
                        r = ncm_cpu_options_validate(&o, n->topo, cfg->tm_policy, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s: new static policy error",
                                                ncm__node_field(cfg, "cpuManagerPolicyOptions",
                                                                path, sizeof(path)));
        }
        pc.policy = cfg->cpu_policy;
        pc.options = cfg->cpu_opts;
        pc.noptions = cfg->n_cpu_opts;
        pc.gates = cfg->cpu_gates;
        pc.reserved_cpus = cfg->reserved_cpus;
        pc.reserved_millicpu_set = cfg->reserved_milli_set;
        pc.reserved_millicpu = cfg->reserved_milli;
        pc.topology_manager_policy = cfg->tm_policy;
        pc.kubelet_version = v;
        r = ncm_cpu_policy_new(n->topo, &pc, ret, err);
        if (r < 0 && r != -ENOMEM)
                ncm_error_prefix(err, "%s", cfg->path[0] ? cfg->path : "kubelet configuration");
        return r;
}

/*
 * NewContainerManager + Start for CFG, the state from SRC (TEXT/LEN/NAME for SOURCE_TEXT).
 * Registers providers with N as their data; N's own fields are not changed.
 */
static int build(ncm_node *n, const ncm_node_config *cfg, state_source src, const char *text,
                 size_t len, const char *name, const char *dev_text, size_t dev_len,
                 const char *mem_text, size_t mem_len, managers *ret, ncm_error *err)
{
        managers m = {0};
        ncm_autofree char *file = NULL;
        /* cpu_manager_state is read and written as this release does */
        ncm_kubelet_version kv =
                        n->kubelet_override.major ? n->kubelet_override : cfg->kubelet_version;
        char path[256];
        int r;

        /* server.go getReservedCPUs */
        if (cfg->reserved_cpus && !ncm_cpuset_is_subset(cfg->reserved_cpus, n->all_cpus)) {
                ncm_autofree char *all = ncm_cpuset_format_list(n->all_cpus);
                return ncm_error_set(err, EINVAL,
                                     "%s: reserved-cpus: %s is not a subset of online-cpus: %s",
                                     ncm__node_field(cfg, "reservedSystemCPUs", path, sizeof(path)),
                                     cfg->reserved_cpus_text, all ? all : "");
        }
        r = build_tm(n, cfg, &m.tm, err);
        if (r < 0)
                goto fail;
        r = ncm__node_dev_new(n, &m.dev, err);
        if (r < 0)
                goto fail;
        r = build_cpu(n, cfg, &m.cpu, err);
        if (r < 0)
                goto fail;
        /* kubelet's order: device manager, CPU manager (, memory manager); then nodecm's */
        if (ncm_tm_add_provider(m.tm, &ncm__node_device_provider, n) < 0 ||
            ncm_tm_add_provider(m.tm, &ncm__node_cpu_provider, n) < 0 ||
            ncm_tm_add_provider(m.tm, &ncm__node_memory_provider, n) < 0 ||
            (ncm_node_config_dra_hints(cfg) &&
             ncm_tm_add_provider(m.tm, &ncm__node_dra_provider, n) < 0)) {
                r = oom(err);
                goto fail;
        }

        if (n->dir) {
                file = cpu_checkpoint_path(n);
                if (!file) {
                        r = oom(err);
                        goto fail;
                }
        }
        switch (src) {
        case SOURCE_FRESH:
                /* no file: the kubelet writes a fresh checkpoint, then Start fills it */
                m.cpu_state = ncm_cpu_state_new(ncm_cpu_policy_name(m.cpu));
                if (!m.cpu_state) {
                        r = oom(err);
                        goto fail;
                }
                ncm_cpu_state_set_kubelet_version(m.cpu_state, kv);
                if (file) {
                        r = persist_cpu(m.cpu_state, n, err);
                        if (r < 0)
                                goto fail;
                }
                break;
        case SOURCE_TEXT:
                if (file) {
                        /* as if the kubelet found it in its root directory */
                        r = ncm__node_write(n, file, text, len, err);
                        if (r >= 0)
                                r = ncm_cpu_checkpoint_load_version(AT_FDCWD, file,
                                                                    ncm_cpu_policy_name(m.cpu),
                                                                    NULL, 0, kv, &m.cpu_state, err);
                } else {
                        r = state_from_text(text, len, name, ncm_cpu_policy_name(m.cpu), kv,
                                            &m.cpu_state, err);
                }
                if (r < 0)
                        goto fail;
                break;
        case SOURCE_DIRECTORY:
                r = ncm_cpu_checkpoint_load_version(AT_FDCWD, file, ncm_cpu_policy_name(m.cpu),
                                                    NULL, 0, kv, &m.cpu_state, err);
                if (r < 0)
                        goto fail;
                break;
        }
        if (file)
                ncm_cpu_state_set_persist(m.cpu_state, persist_cpu, n, NULL);
        r = ncm__node_isolation_setup(n, cfg, m.cpu, m.cpu_state, &m.isolated, err);
        if (r < 0)
                goto fail;
        r = ncm_cpu_policy_start(m.cpu, m.cpu_state, err);
        if (r < 0) {
                if (r != -ENOMEM)
                        ncm_error_prefix(err, "start cpu manager error");
                goto fail;
        }
        /* then the device manager's Start; its plugins register and report their devices */
        r = ncm__node_dev_start(n, m.dev, dev_text, dev_len, src == SOURCE_DIRECTORY, err);
        if (r < 0)
                goto fail;
        /* then the memory manager's (memory_manager_state beside cpu_manager_state) */
        r = ncm__node_mem_new(n, cfg,
                              src == SOURCE_DIRECTORY ? NODE_MEM_FROM_FILE
                              : mem_text              ? NODE_MEM_TEXT
                                                      : NODE_MEM_FRESH,
                              mem_text, mem_len, &m.mem, err);
        if (r < 0)
                goto fail;
        *ret = m;
        return 0;
fail:
        managers_done(&m);
        return r;
}

static void install(ncm_node *n, managers *m)
{
        managers old = {n->tm, n->dev, n->cpu, n->cpu_state, n->isolated, n->mem};
        n->tm = m->tm;
        n->dev = m->dev;
        n->cpu = m->cpu;
        n->cpu_state = m->cpu_state;
        n->isolated = m->isolated;
        n->mem = m->mem;
        *m = (managers){0};
        managers_done(&old);
}

/* A pod the node held before (restored): in the registry, its containers known by id. */
static int restore_pod(ncm_node *n, const ncm_node_pod_record *rec)
{
        node_pod p;
        int r = ncm__node_pod_make(rec->pod, &p);

        if (r < 0)
                return r;
        for (size_t i = 0; rec->removed && rec->removed[i]; i++)
                for (size_t k = 0; k < p.n; k++)
                        if (strcmp(p.c[k].name, rec->removed[i]) == 0)
                                p.c[k].removed = true;
        r = ncm__node_pod_put(n, &p);
        if (r >= 0)
                r = ncm__node_add_container_ids(n, rec->pod);
        return r;
}

int ncm_node_new(const ncm_topo *t, const ncm_node_config *cfg, const ncm_node_options *opts,
                 ncm_node **ret, ncm_error *err)
{
        ncm_autoptr(ncm_node) n = calloc(1, sizeof(*n));
        managers m = {0};
        int r;

        if (!n)
                return oom(err);
        if (ncm_topo_num_cpus(t) == 0)
                return ncm_error_set(err, EINVAL, "could not detect number of cpus");
        n->topo = t;
        n->cfg = cfg;
        n->dirfd = -1;
        if (opts) {
                if ((r = ncm_kubelet_version_check(opts->kubelet_version, err)) < 0)
                        return r;
                n->kubelet_override = opts->kubelet_version;
                n->enforcer = opts->enforcer;
                n->persist_pods = opts->persist_pods && opts->state_dir;
                n->attach = opts->attach;
                n->faults = opts->faults;
                n->read_only = opts->read_only;
                if (opts->machine_root && !(n->machine_root = strdup(opts->machine_root)))
                        return oom(err);
                if ((r = ncm__node_fit_set_capacity(n, opts->capacity, err)) < 0)
                        return r;
        }
        n->all_cpus = ncm_cpuset_new();
        if (!n->all_cpus)
                return oom(err);
        ncm_topo_all_cpus(t, n->all_cpus);
        if (opts && opts->devices) {
                n->devices_json = strndup(opts->devices, opts->devices_len);
                if (!n->devices_json)
                        return oom(err);
                n->devices_len = opts->devices_len;
                r = ncm_node_devices_parse(n->devices_json, n->devices_len, &n->devices, err);
                if (r < 0)
                        return r;
        }
        if (opts) {
                n->reference_merge = opts->reference_merge;
                if (opts->state_dir) {
                        struct stat st;
                        n->dir = strdup(opts->state_dir);
                        if (!n->dir ||
                            asprintf(&n->undo_path, "%s/%s", n->dir, NCM_NODE_UNDO_NAME) < 0)
                                return oom(err);
                        if (stat(n->dir, &st) < 0)
                                return ncm_error_errno(err, errno, "%s", n->dir);
                        if (!S_ISDIR(st.st_mode))
                                return ncm_error_set(err, ENOTDIR, "%s: not a directory", n->dir);
                }
        }
        if (opts) {
                n->restoring = opts->pods;
                n->n_restoring = opts->n_pods;
        }
        if (opts && opts->cpu_checkpoint) {
                const char *name = opts->cpu_checkpoint_name ? opts->cpu_checkpoint_name
                                                             : NCM_CPU_CHECKPOINT_NAME;
                r = build(n, cfg, SOURCE_TEXT, opts->cpu_checkpoint, opts->cpu_checkpoint_len, name,
                          NULL, 0, opts->mem_checkpoint, opts->mem_checkpoint_len, &m, err);
                if (r < 0 && r != -ENOMEM && (r == -NCM_E_INVALID_STATE || r == -NCM_E_CHECKSUM))
                        ncm_error_prefix(err, "%s", name);
        } else if (opts && opts->restore && n->dir) {
                /* the kubelet's start: the files found in its root directory, else fresh */
                ncm_autofree char *file = cpu_checkpoint_path(n);
                if (!file)
                        return oom(err);
                r = ncm_fs_exists(AT_FDCWD, file);
                if (r < 0)
                        return ncm_error_errno(err, -r, "%s", file);
                r = build(n, cfg, r ? SOURCE_DIRECTORY : SOURCE_FRESH, NULL, 0, NULL, NULL, 0, NULL,
                          0, &m, err);
        } else {
                r = build(n, cfg, SOURCE_FRESH, NULL, 0, NULL, NULL, 0, NULL, 0, &m, err);
        }
        n->restoring = NULL;
        n->n_restoring = 0;
        if (r < 0)
                return r;
        install(n, &m);
        for (size_t i = 0; opts && i < opts->n_pods; i++) {
                r = restore_pod(n, &opts->pods[i]);
                if (r < 0)
                        return oom(err);
        }
        r = ncm__node_memo_load(n, err);
        if (r >= 0)
                r = ncm__node_enforce_start(n, err);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(n);
        return 0;
}

ncm_node *ncm_node_free(ncm_node *n)
{
        managers m;

        if (!n)
                return NULL;
        m = (managers){n->tm, n->dev, n->cpu, n->cpu_state, n->isolated, n->mem};
        managers_done(&m);
        free(n->devices_json);
        ncm_node_devices_done(&n->devices);
        ncm_cpuset_free(n->all_cpus);
        for (size_t i = 0; i < n->n_pods; i++) {
                ncm__node_pod_done(n->pods[i]);
                free(n->pods[i]);
        }
        free(n->pods);
        ncm__node_fit_sum_free(n->sums.fit);
        free(n->dir);
        free(n->undo_path);
        ncm_fs_batch_free(n->own);
        ncm_knob_memo_free(n->memo);
        ncm_knob_memo_free(n->memo_written);
        free(n->machine_root);
        ncm_locator_free(n->locator);
        ncm_resource_list_done(&n->fit_capacity);
        free(n);
        return NULL;
}

int ncm_node_restart(ncm_node *n, const ncm_node_config *cfg, ncm_error *err)
{
        const ncm_node_config *use = cfg ? cfg : n->cfg;
        managers m = {0};
        int r;

        r = ncm_cpu_state_persist(n->cpu_state, err);
        if (r >= 0)
                r = ncm__node_mem_flush(n, err);
        if (r < 0)
                return r;
        if (n->dir) {
                /* the device manager has written its file on every change already */
                r = build(n, use, SOURCE_DIRECTORY, NULL, 0, NULL, NULL, 0, NULL, 0, &m, err);
        } else {
                ncm_buf b = NCM_BUF_INIT, d = NCM_BUF_INIT, mb = NCM_BUF_INIT;
                ncm_cpu_checkpoint_format_state(n->cpu_state, &b);
                ncm__node_mem_text(n->mem, &mb);
                r = ncm__node_dev_checkpoint_text(n->dev, &d, err);
                if (r >= 0 && (ncm_buf_failed(&b) || ncm_buf_failed(&mb)))
                        r = oom(err);
                if (r >= 0)
                        r = build(n, use, SOURCE_TEXT, b.data, b.len, NCM_CPU_CHECKPOINT_NAME,
                                  d.data, d.len, mb.data, mb.len, &m, err);
                ncm_buf_done(&b);
                ncm_buf_done(&d);
                ncm_buf_done(&mb);
        }
        if (r < 0)
                return r;
        install(n, &m);
        n->cfg = use;
        /* the locator reads the configuration: the new one's at its next use */
        n->locator = ncm_locator_free(n->locator);
        return 0;
}

int ncm_node_copy(const ncm_node *n, ncm_node **ret, ncm_error *err)
{
        ncm_autoptr(ncm_node) c = calloc(1, sizeof(*c));
        ncm_buf b = NCM_BUF_INIT, d = NCM_BUF_INIT;
        managers m = {0};
        int r;

        if (!c)
                return oom(err);
        c->topo = n->topo;
        c->cfg = n->cfg;
        c->dirfd = -1;
        c->reference_merge = n->reference_merge;
        c->kubelet_override = n->kubelet_override;
        c->all_cpus = ncm_cpuset_dup(n->all_cpus);
        if (!c->all_cpus || ncm__node_fit_set_capacity(c, &n->fit_capacity, err) < 0)
                return oom(err);
        if (n->machine_root && !(c->machine_root = strdup(n->machine_root)))
                return oom(err);
        if (n->devices_json) {
                c->devices_json = strndup(n->devices_json, n->devices_len);
                if (!c->devices_json)
                        return oom(err);
                c->devices_len = n->devices_len;
                r = ncm_node_devices_parse(c->devices_json, c->devices_len, &c->devices, err);
                if (r < 0)
                        return r;
        }
        /* the state as a restart would read it back: the checkpoints, in memory */
        ncm_buf mb = NCM_BUF_INIT;
        ncm_cpu_checkpoint_format_state(n->cpu_state, &b);
        ncm__node_mem_text(n->mem, &mb);
        r = ncm__node_dev_checkpoint_text(n->dev, &d, err);
        if (r >= 0 && (ncm_buf_failed(&b) || ncm_buf_failed(&mb)))
                r = oom(err);
        if (r >= 0)
                r = build(c, c->cfg, SOURCE_TEXT, b.data, b.len, NCM_CPU_CHECKPOINT_NAME, d.data,
                          d.len, mb.data, mb.len, &m, err);
        ncm_buf_done(&b);
        ncm_buf_done(&d);
        ncm_buf_done(&mb);
        if (r < 0)
                return r;
        install(c, &m);
        /* the pods come after the build: the isolated CPUs are N's, own partitions known */
        if (n->isolated) {
                ncm_cpuset_free(c->isolated);
                c->isolated = ncm_cpuset_dup(n->isolated);
                if (!c->isolated)
                        return oom(err);
                r = ncm_cpu_policy_set_isolation(c->cpu, c->cfg->isolated_cpus, n->isolated, err);
                if (r < 0)
                        return r;
        }
        r = ncm__node_dev_copy_live(n->dev, c->dev, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n->n_pods; i++) {
                node_pod p;
                r = ncm__node_pod_copy(n->pods[i], &p);
                if (r >= 0)
                        r = ncm__node_pod_put(c, &p);
                if (r >= 0)
                        r = ncm__node_add_container_ids(c, p.spec);
                if (r < 0)
                        return oom(err);
        }
        *ret = NCM_TAKE_PTR(c);
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * Inspection
 */

const ncm_topo *ncm_node_topo(const ncm_node *n)
{
        return n->topo;
}

const ncm_enforcer *ncm_node_enforcer(const ncm_node *n)
{
        return n->enforcer;
}

const ncm_node_config *ncm_node_get_config(const ncm_node *n)
{
        return n->cfg;
}

const ncm_cpu_state *ncm_node_cpu_state(const ncm_node *n)
{
        return n->cpu_state;
}

const ncm_cpu_policy *ncm_node_cpu_policy(const ncm_node *n)
{
        return n->cpu;
}

const ncm_tm *ncm_node_tm(const ncm_node *n)
{
        return n->tm;
}

const ncm_devmgr *ncm_node_devmgr(const ncm_node *n)
{
        return n->dev;
}

ncm_devmgr *ncm_node_device_manager(ncm_node *n)
{
        return n->dev;
}

ncm_kubelet_version ncm_node_kubelet_version(const ncm_node *n)
{
        return n->kubelet_override.major ? n->kubelet_override : n->cfg->kubelet_version;
}

void ncm_node_shared_pool(const ncm_node *n, ncm_cpuset *out)
{
        if (!ncm_cpu_policy_is_static(n->cpu))
                ncm_cpuset_copy(out, n->all_cpus);
        else
                ncm_cpuset_copy(out, ncm_cpu_state_default(n->cpu_state));
        /* isolatedCPUs: the kubelet's default set keeps them; the shared pool does not */
        if (n->isolated)
                ncm_cpuset_andnot(out, out, n->isolated);
}

const ncm_node_devices *ncm_node_get_devices(const ncm_node *n)
{
        return &n->devices;
}

size_t ncm_node_num_pods(const ncm_node *n)
{
        return n->n_pods;
}

const ncm_pod *ncm_node_pod_at(const ncm_node *n, size_t i)
{
        return i < n->n_pods ? n->pods[i]->spec : NULL;
}

const ncm_pod *ncm_node_pod(const ncm_node *n, const char *pod_uid)
{
        const node_pod *p = ncm__node_pod_find(n, pod_uid);
        return p ? p->spec : NULL;
}

bool ncm_node_container_removed(const ncm_node *n, const char *pod_uid, const char *name)
{
        const node_pod *p = ncm__node_pod_find(n, pod_uid);
        for (size_t i = 0; p && i < p->n; i++)
                if (strcmp(p->c[i].name, name) == 0)
                        return p->c[i].removed;
        return false;
}

int ncm_node_container_cpus(const ncm_node *n, const char *pod_uid, const char *name,
                            ncm_cpuset *out)
{
        const ncm_cpuset *own = ncm_cpu_state_get(n->cpu_state, pod_uid, name);
        if (own) {
                ncm_cpuset_copy(out, own);
                return 1;
        }
        ncm_node_shared_pool(n, out);
        return 0;
}

const char *ncm_node_pod_name(const ncm_node *n, const char *pod_uid)
{
        const node_pod *p = ncm__node_pod_find(n, pod_uid);
        return p ? p->name : NULL;
}

void ncm_node_format_cpu_checkpoint(const ncm_node *n, ncm_buf *b)
{
        ncm_cpu_checkpoint_format_state(n->cpu_state, b);
}

/* ------------------------------------------------------------------------------------------
 * Enforcement: the node's side of the enforcer's transactions
 */

/* P's part of the QoS tiers' sums, by its parts' order. */
static int64_t *qos_part(node_pod *p, size_t i)
{
        return i == 0   ? &p->qos.burstable_cpu_milli
               : i == 1 ? &p->qos.guaranteed_memory
                        : &p->qos.burstable_memory;
}

void ncm__node_sums_enter(ncm_node *n, node_pod *p)
{
        ncm_cgroup_qos_usage u = {0, 0, 0};
        bool ok;

        p->summed = false;
        if (!p->spec)
                return;
        n->sums.n_specs++;
        if (ncm__node_pod_knobs(p->spec))
                n->sums.n_knobbed++;
        ok = ncm_cgroup_qos_usage_add_pod(&u, p->spec, NULL) >= 0 && u.burstable_cpu_milli >= 0 &&
             u.guaranteed_memory >= 0 && u.burstable_memory >= 0;
        p->qos = u;
        if (ok && ncm__node_fit_sum_enter(n, p) < 0)
                ok = false;
        if (!ok) {
                n->sums.n_unsummed++;
                return;
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(n->sums.qos); i++)
                n->sums.qos[i] += *qos_part(p, i);
        p->summed = true;
}

void ncm__node_sums_leave(ncm_node *n, node_pod *p)
{
        if (!p->spec)
                return;
        n->sums.n_specs--;
        if (ncm__node_pod_knobs(p->spec))
                n->sums.n_knobbed--;
        if (!p->summed) {
                n->sums.n_unsummed--;
                return;
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(n->sums.qos); i++)
                n->sums.qos[i] -= *qos_part(p, i);
        ncm__node_fit_sum_leave(n, p);
        p->summed = false;
}

/* A wide sum as the walk's saturating one makes it. */
static int64_t capped(node_wide v)
{
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The Burstable and Guaranteed requests of the pods the node holds, EXCEPT_UID left out: the
 * registry's sums, less that pod's part. */
int ncm__node_usage_of(const ncm_node *n, const char *except_uid, ncm_cgroup_qos_usage *ret,
                       ncm_error *err)
{
        node_wide v[3];
        node_pod *except = except_uid ? ncm__node_pod_find(n, except_uid) : NULL;

        if (n->sums.n_unsummed > 0)
                return ncm__node_usage_walk(n, except_uid, ret, err);
        for (size_t i = 0; i < NCM_ELEMENTSOF(v); i++)
                v[i] = n->sums.qos[i] - (except && except->summed ? *qos_part(except, i) : 0);
        *ret = (ncm_cgroup_qos_usage){capped(v[0]), capped(v[1]), capped(v[2])};
        return 0;
}

/* The same by walking every pod. */
int ncm__node_usage_walk(const ncm_node *n, const char *except_uid, ncm_cgroup_qos_usage *ret,
                         ncm_error *err)
{
        ncm_cgroup_qos_usage u = {0, 0, 0};

        for (size_t i = 0; i < n->n_pods; i++) {
                int r;
                if (!n->pods[i]->spec || (except_uid && strcmp(n->pods[i]->uid, except_uid) == 0))
                        continue;
                r = ncm_cgroup_qos_usage_add_pod(&u, n->pods[i]->spec, err);
                if (r < 0)
                        return r;
        }
        *ret = u;
        return 0;
}

static bool is_removed(const node_pod *rec, const char *name)
{
        for (size_t i = 0; rec && i < rec->n; i++)
                if (strcmp(rec->c[i].name, name) == 0)
                        return rec->c[i].removed;
        return false;
}

/* is_removed() of the I-th container of REC's spec, named NAME: the record is in spec order, so
 * O(1) for it (a walk over a pod of thousands of containers would be quadratic). */
static bool is_removed_at(const node_pod *rec, size_t i, const char *name)
{
        if (rec && i < rec->n && strcmp(rec->c[i].name, name) == 0)
                return rec->c[i].removed;
        return is_removed(rec, name);
}

/*
 * POD's containers as the enforcer sees them: exclusive CPUs from the state, the shared pool
 * SHARED for the others, and each one's cpuset.mems. With ONLY_SHARED, just the running
 * containers on the shared pool.
 */
static int enforce_view(const ncm_node *n, const ncm_pod *pod, const node_pod *rec,
                        const ncm_cpuset *shared, bool only_shared, ncm_enforce_container **ret,
                        size_t *ret_n)
{
        size_t total = pod->n_init_containers + pod->n_containers, k = 0;
        ncm_enforce_container *v = calloc(total + 1, sizeof(*v));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < total; i++) {
                const ncm_container *c = ncm__node_nth_container(pod, i);
                const ncm_cpuset *own = ncm_cpu_state_get(n->cpu_state, pod->uid, c->name);
                if (only_shared &&
                    (own || (c->init && !c->sidecar) || is_removed_at(rec, i, c->name)))
                        continue;
                v[k] = (ncm_enforce_container){.name = c->name,
                                               .init = c->init,
                                               .sidecar = c->sidecar,
                                               .exclusive = own != NULL,
                                               .cpus = own ? own : shared};
                (void)ncm_node_container_mems(n, pod->uid, c->name, v[k].cpus, &v[k].mems);
                k++;
        }
        *ret = v;
        *ret_n = k;
        return 0;
}

const ncm_enforcer_ops *ncm__node_enforcer_ops(const ncm_node *n)
{
        return n->enforcer ? ncm_enforcer_get_ops(n->enforcer) : NULL;
}

void *ncm__node_enforcer_data(const ncm_node *n)
{
        return ncm_enforcer_get_data(n->enforcer);
}

/* The shared pool moved: every running container on it, of every pod but SKIP_UID, follows. */
int ncm__node_enforcer_shared(ncm_node *n, const char *skip_uid, ncm_error *err)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        ncm_autoptr(ncm_cpuset) shared = ncm_cpuset_new();

        if (!shared)
                return oom(err);
        if (!ops->pod_cpus)
                return 0;
        ncm_node_shared_pool(n, shared);
        for (size_t i = 0; i < n->n_pods; i++) {
                const node_pod *rec = n->pods[i];
                ncm_autofree ncm_enforce_container *v = NULL;
                ncm_enforce_pod ep;
                size_t nv = 0;
                int r;
                if (!rec->spec || (skip_uid && strcmp(rec->uid, skip_uid) == 0))
                        continue;
                if (enforce_view(n, rec->spec, rec, shared, true, &v, &nv) < 0)
                        return oom(err);
                if (nv == 0)
                        continue;
                ep = (ncm_enforce_pod){rec->spec, v, nv};
                r = ops->pod_cpus(ncm__node_enforcer_data(n), &ep, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int ncm__node_enforcer_begin(ncm_node *n, ncm_error *err)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        return ops->begin ? ops->begin(ncm__node_enforcer_data(n), err) : 0;
}

int ncm__node_enforcer_commit(ncm_node *n, ncm_error *err)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        return ops->commit ? ops->commit(ncm__node_enforcer_data(n), err) : 0;
}

/*
 * An enforcement step failed with ERR: undo the enforcer's writes; the caller then undoes its
 * decisions. ERR becomes `WHAT: <the failure> (rolled back)`, with the enforcement code (exit
 * status 1), or says what could not be put back.
 */
int ncm__node_enforcer_fail(ncm_node *n, int r, const char *what, ncm_error *err)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        ncm_error e = NCM_ERROR_INIT;
        char msg[NCM_ERROR_MSG_MAX];
        int rb = ops->rollback ? ops->rollback(ncm__node_enforcer_data(n), &e) : 0;

        if (r == -ENOMEM)
                return r;
        snprintf(msg, sizeof(msg), "%s", err && err->msg[0] ? err->msg : ncm_strerror(-r));
        if (rb < 0)
                return ncm_error_set(err, NCM_E_ENFORCEMENT, "%s: %s (%s enforcer: %s)", what, msg,
                                     ncm_enforcer_name(n->enforcer), e.msg);
        return ncm_error_set(err, NCM_E_ENFORCEMENT,
                             "%s: %s (%s enforcer; the decision and every write were rolled "
                             "back)",
                             what, msg, ncm_enforcer_name(n->enforcer));
}

/*
 * Enforce the admission of POD (decided, in the registry): 1 with the enforcer's transaction
 * open (the caller commits it, ncm__node_enforcer_commit, or undoes it, ncm__node_enforcer_undo), 0
 * without an enforcer, or the enforcer's error with its writes rolled back.
 */
int ncm__node_enforce_admission(ncm_node *n, const ncm_pod *pod, const ncm_cpuset *default_before,
                                ncm_error *err)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        ncm_autoptr(ncm_cpuset) shared = ncm_cpuset_new();
        ncm_autofree ncm_enforce_container *v = NULL;
        ncm_cgroup_qos_usage usage;
        ncm_enforce_pod ep;
        size_t nv = 0;
        char what[512];
        int r;

        if (!ops)
                return 0;
        if (!shared)
                return oom(err);
        snprintf(what, sizeof(what), "enforce pod '%s'", pod->uid);
        r = ncm__node_enforce_prepare(n, pod, shared, &usage, &v, &nv, err);
        if (r < 0)
                return r;
        r = ncm__node_enforcer_begin(n, err);
        if (r < 0)
                return ncm__node_enforcer_fail(n, r, what, err);
        ep = (ncm_enforce_pod){pod, v, nv};
        if (ops->pod_add)
                r = ops->pod_add(ncm__node_enforcer_data(n), &ep, &usage, err);
        if (r >= 0 && !ncm_cpuset_equal(default_before, ncm_cpu_state_default(n->cpu_state)))
                r = ncm__node_enforcer_shared(n, pod->uid, err);
        /* CRI-O's knobs follow (committed with the files, by the caller) */
        if (r >= 0)
                r = ncm__node_enforce_isolation(n, false, err);
        if (r < 0)
                return ncm__node_enforcer_fail(n, r, what, err);
        return 1;
}

/*
 * The files of a change could not be written after the enforcer's writes: those are undone.
 * ERR (the write's failure, its code kept: an environment failure, not a refusal) says so.
 */
int ncm__node_enforcer_undo(ncm_node *n, int r, ncm_error *err)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        ncm_error e = NCM_ERROR_INIT;
        int rb = ops && ops->rollback ? ops->rollback(ncm__node_enforcer_data(n), &e) : 0;

        if (rb < 0)
                ncm_error_prefix(err, "(%s enforcer: its writes could not be rolled back: %s)",
                                 ncm_enforcer_name(n->enforcer), e.msg);
        return r;
}

int ncm_node_reconcile(ncm_node *n, ncm_error *err)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        ncm_autoptr(ncm_cpuset) shared = ncm_cpuset_new();
        int r, fixed = 0;

        if (!ops || !ops->pod_cpus)
                return 0;
        if (!shared)
                return oom(err);
        ncm_node_shared_pool(n, shared);
        r = ncm__node_enforcer_begin(n, err);
        for (size_t i = 0; i < n->n_pods && r >= 0; i++) {
                const node_pod *rec = n->pods[i];
                ncm_autofree ncm_enforce_container *v = NULL;
                ncm_enforce_pod ep;
                size_t nv = 0, k = 0;
                if (!rec->spec)
                        continue;
                if (enforce_view(n, rec->spec, rec, shared, false, &v, &nv) < 0) {
                        r = oom(err);
                        break;
                }
                /* running containers only: not removed, not plain init containers (V holds
                 * every container, in spec order) */
                for (size_t j = 0; j < nv; j++)
                        if (!(v[j].init && !v[j].sidecar) && !is_removed_at(rec, j, v[j].name))
                                v[k++] = v[j];
                ep = (ncm_enforce_pod){rec->spec, v, k};
                if (k)
                        r = ops->pod_cpus(ncm__node_enforcer_data(n), &ep, err);
                if (r > 0)
                        fixed += r;
        }
        /* the knobs' fixes are counted apart (ncm_node_isolation_counters_get) */
        if (r >= 0)
                r = ncm__node_enforce_isolation(n, true, err);
        if (r >= 0)
                r = ncm__node_enforcer_commit(n, err);
        if (r < 0)
                return ncm__node_enforcer_fail(n, r, "reconcile", err);
        return fixed;
}

int ncm__node_enforce_start(ncm_node *n, ncm_error *err)
{
        const ncm_enforcer_ops *ops = ncm__node_enforcer_ops(n);
        ncm_cgroup_qos_usage usage;
        ncm_enforce_start st;
        int r;

        ncm_autoptr(ncm_cpuset) unalloc = NULL;

        if (!ops)
                return 0;
        r = ncm__node_usage_of(n, NULL, &usage, err);
        if (r < 0)
                return r;
        /* isolatedCPUs exclude: no pod gets them, so node allocatable leaves them out */
        if (n->isolated && n->cfg->isolated_cpus == NCM_CPU_ISOLATION_EXCLUDE) {
                unalloc = ncm_cpuset_dup(n->isolated);
                if (!unalloc)
                        return oom(err);
                ncm_cpuset_andnot(unalloc, unalloc, ncm_cpu_policy_reserved(n->cpu));
        }
        st = (ncm_enforce_start){n->cfg, n->all_cpus, &usage, n->attach, unalloc};
        r = ops->start ? ops->start(ncm__node_enforcer_data(n), &st, err) : 0;
        if (r < 0 && r != -ENOMEM)
                ncm_error_prefix(err, "start %s enforcer", ncm_enforcer_name(n->enforcer));
        /* a start converges the knobs: what a crash left half done is finished or undone */
        if (r >= 0 && !n->attach && ncm__node_isolation_active(n)) {
                r = ncm__node_enforcer_begin(n, err);
                if (r >= 0)
                        r = ncm__node_enforce_isolation(n, true, err);
                if (r >= 0)
                        r = ncm__node_enforcer_commit(n, err);
                if (r < 0)
                        r = ncm__node_enforcer_fail(n, r, "start: CRI-O's knobs", err);
        }
        return r;
}

int ncm__node_enforce_shared(ncm_node *n, ncm_error *err)
{
        return ncm__node_enforcer_ops(n) ? ncm__node_enforcer_shared(n, NULL, err) : 0;
}

int ncm__node_enforce_begin(ncm_node *n, ncm_error *err)
{
        return ncm__node_enforcer_ops(n) ? ncm__node_enforcer_begin(n, err) : 0;
}

int ncm__node_enforce_commit(ncm_node *n, ncm_error *err)
{
        return ncm__node_enforcer_ops(n) ? ncm__node_enforcer_commit(n, err) : 0;
}

int ncm__node_enforce_fail(ncm_node *n, int r, const char *what, ncm_error *err)
{
        return ncm__node_enforcer_ops(n) ? ncm__node_enforcer_fail(n, r, what, err) : r;
}

int ncm__node_enforce_undo(ncm_node *n, int r, ncm_error *err)
{
        return ncm__node_enforcer_undo(n, r, err);
}

int ncm__node_enforce_prepare(const ncm_node *n, const ncm_pod *pod, ncm_cpuset *shared,
                              ncm_cgroup_qos_usage *usage, ncm_enforce_container **ret,
                              size_t *ret_n, ncm_error *err)
{
        int r;

        ncm_node_shared_pool(n, shared);
        r = ncm__node_usage_of(n, pod->uid, usage, err);
        if (r >= 0 && enforce_view(n, pod, NULL, shared, false, ret, ret_n) < 0)
                r = oom(err);
        return r;
}
