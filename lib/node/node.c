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

static void pod_done(node_pod *p)
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
                if (strcmp(n->pods[mid].uid, uid) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static node_pod *pod_find(const ncm_node *n, const char *uid)
{
        size_t i = pod_lower_bound(n, uid);
        return i < n->n_pods && strcmp(n->pods[i].uid, uid) == 0 ? &n->pods[i] : NULL;
}

static void pod_forget(ncm_node *n, const char *uid)
{
        size_t i = pod_lower_bound(n, uid);
        if (i >= n->n_pods || strcmp(n->pods[i].uid, uid) != 0)
                return;
        pod_done(&n->pods[i]);
        memmove(&n->pods[i], &n->pods[i + 1], (n->n_pods - i - 1) * sizeof(*n->pods));
        n->n_pods--;
}

static const ncm_container *nth_container(const ncm_pod *pod, size_t i)
{
        return i < pod->n_init_containers ? &pod->init_containers[i]
                                          : &pod->containers[i - pod->n_init_containers];
}

/* Build the registry entry for POD (not inserted). */
static int pod_make(const ncm_pod *pod, node_pod *ret)
{
        size_t total = pod->n_init_containers + pod->n_containers;
        node_pod p = {0};

        p.uid = strdup(pod->uid);
        p.name = strdup(pod->name ? pod->name : "");
        p.c = calloc(total + 1, sizeof(*p.c));
        p.spec = ncm_pod_dup(pod);
        if (!p.uid || !p.name || !p.c || !p.spec) {
                pod_done(&p);
                return -ENOMEM;
        }
        for (size_t i = 0; i < total; i++) {
                const ncm_container *c = nth_container(pod, i);
                p.c[i].name = strdup(c->name);
                if (!p.c[i].name) {
                        p.n = i;
                        pod_done(&p);
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
static int pod_put(ncm_node *n, node_pod *p)
{
        size_t i = pod_lower_bound(n, p->uid);

        if (i < n->n_pods && strcmp(n->pods[i].uid, p->uid) == 0) {
                pod_done(&n->pods[i]);
                n->pods[i] = *p;
                return 0;
        }
        if (ncm__array_grow(n->pods, n->cap_pods, n->n_pods) < 0) {
                pod_done(p);
                return -ENOMEM;
        }
        memmove(&n->pods[i + 1], &n->pods[i], (n->n_pods - i) * sizeof(*n->pods));
        n->pods[i] = *p;
        n->n_pods++;
        return 0;
}

/* A copy of registry entry P (its spec and removed containers). */
static int pod_copy(const node_pod *p, node_pod *ret)
{
        node_pod c;
        int r = pod_make(p->spec, &c);

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
        node_mem *mem;
} managers;

static void managers_done(managers *m)
{
        m->mem = ncm__node_mem_free(m->mem);
        m->tm = ncm_tm_free(m->tm);
        m->dev = ncm_devmgr_free(m->dev);
        m->cpu = ncm_cpu_policy_free(m->cpu);
        m->cpu_state = ncm_cpu_state_free(m->cpu_state);
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
        ncm_autofree char *path = cpu_checkpoint_path(n);
        ncm_buf b = NCM_BUF_INIT;
        int r;

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
                           ncm_cpu_state **ret, ncm_error *err)
{
        ncm_autoptr(ncm_cpu_checkpoint) cp = NULL;
        int r;

        r = ncm_cpu_checkpoint_parse(text, len, name, &cp, err);
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
        if (strcmp(cfg->cpu_policy, "static") == 0) {
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
                                r = ncm_cpu_checkpoint_load(AT_FDCWD, file,
                                                            ncm_cpu_policy_name(m.cpu), NULL, 0,
                                                            &m.cpu_state, err);
                } else {
                        r = state_from_text(text, len, name, ncm_cpu_policy_name(m.cpu),
                                            &m.cpu_state, err);
                }
                if (r < 0)
                        goto fail;
                break;
        case SOURCE_DIRECTORY:
                r = ncm_cpu_checkpoint_load(AT_FDCWD, file, ncm_cpu_policy_name(m.cpu), NULL, 0,
                                            &m.cpu_state, err);
                if (r < 0)
                        goto fail;
                break;
        }
        if (file)
                ncm_cpu_state_set_persist(m.cpu_state, persist_cpu, n, NULL);
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
        managers old = {n->tm, n->dev, n->cpu, n->cpu_state, n->mem};
        n->tm = m->tm;
        n->dev = m->dev;
        n->cpu = m->cpu;
        n->cpu_state = m->cpu_state;
        n->mem = m->mem;
        *m = (managers){0};
        managers_done(&old);
}

static int add_container_ids(ncm_node *n, const ncm_pod *pod);

/* A pod the node held before (restored): in the registry, its containers known by id. */
static int restore_pod(ncm_node *n, const ncm_node_pod_record *rec)
{
        node_pod p;
        int r = pod_make(rec->pod, &p);

        if (r < 0)
                return r;
        for (size_t i = 0; rec->removed && rec->removed[i]; i++)
                for (size_t k = 0; k < p.n; k++)
                        if (strcmp(p.c[k].name, rec->removed[i]) == 0)
                                p.c[k].removed = true;
        r = pod_put(n, &p);
        if (r >= 0)
                r = add_container_ids(n, rec->pod);
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
        if (r < 0)
                return r;
        install(n, &m);
        for (size_t i = 0; opts && i < opts->n_pods; i++) {
                r = restore_pod(n, &opts->pods[i]);
                if (r < 0)
                        return oom(err);
        }
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
        m = (managers){n->tm, n->dev, n->cpu, n->cpu_state, n->mem};
        managers_done(&m);
        free(n->devices_json);
        ncm_node_devices_done(&n->devices);
        ncm_cpuset_free(n->all_cpus);
        for (size_t i = 0; i < n->n_pods; i++)
                pod_done(&n->pods[i]);
        free(n->pods);
        free(n->dir);
        free(n->undo_path);
        ncm_fs_batch_free(n->own);
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
        r = ncm__node_dev_copy_live(n->dev, c->dev, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n->n_pods; i++) {
                node_pod p;
                r = pod_copy(&n->pods[i], &p);
                if (r >= 0)
                        r = pod_put(c, &p);
                if (r >= 0)
                        r = add_container_ids(c, p.spec);
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
        if (strcmp(ncm_cpu_policy_name(n->cpu), "none") == 0)
                ncm_cpuset_copy(out, n->all_cpus);
        else
                ncm_cpuset_copy(out, ncm_cpu_state_default(n->cpu_state));
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
        return i < n->n_pods ? n->pods[i].spec : NULL;
}

const ncm_pod *ncm_node_pod(const ncm_node *n, const char *pod_uid)
{
        const node_pod *p = pod_find(n, pod_uid);
        return p ? p->spec : NULL;
}

bool ncm_node_container_removed(const ncm_node *n, const char *pod_uid, const char *name)
{
        const node_pod *p = pod_find(n, pod_uid);
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
        const node_pod *p = pod_find(n, pod_uid);
        return p ? p->name : NULL;
}

void ncm_node_format_cpu_checkpoint(const ncm_node *n, ncm_buf *b)
{
        ncm_cpu_checkpoint_format_state(n->cpu_state, b);
}

/* ------------------------------------------------------------------------------------------
 * Admission
 */

static int enforce_admission(ncm_node *n, const ncm_pod *pod, const ncm_cpuset *default_before,
                             ncm_error *err);
static int persist_pod(ncm_node *n, const char *uid, const char *rm_name, bool drop,
                       ncm_error *err);

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

static bool has_pod_key(const ncm_cpu_state *s, const char *uid)
{
        size_t lo = 0, hi = ncm_cpu_state_num_pods(s);
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(ncm_cpu_state_pod_uid(s, mid), uid);
                if (c == 0)
                        return true;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
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

static void strv_free(char **v)
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
        strv_free(s->dev_had);
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
                const ncm_container *c = nth_container(pod, i);
                ncm_devmgr_assignment *as = NULL;
                size_t na = 0;
                if (ncm_devmgr_container_devices(n->dev, pod->uid, c->name, &as, &na) < 0) {
                        strv_free(v);
                        return -ENOMEM;
                }
                ncm_devmgr_assignments_free(as, na);
                if (na > 0 && !(v[k++] = strdup(c->name))) {
                        strv_free(v);
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
        if (has_pod_key(n->cpu_state, uid) && !(s->full = ncm_cpu_state_dup(n->cpu_state)))
                goto fail;
        if (ncm_cpu_policy_reuse_save(n->cpu, &s->policy_reuse, NULL) < 0)
                goto fail;
        s->pod_known = pod_find(n, uid) != NULL;
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
        strv_free(now);
        if (r < 0)
                return r;
        r = 0;

        if (s->full) {
                if (!ncm_cpu_state_equal(n->cpu_state, s->full))
                        r = ncm_cpu_state_assign(n->cpu_state, s->full, err);
        } else {
                if (has_pod_key(n->cpu_state, uid))
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
                const ncm_container *c = nth_container(pod, i);
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
static int add_container_ids(ncm_node *n, const ncm_pod *pod)
{
        for (size_t i = 0; i < pod->n_init_containers + pod->n_containers; i++) {
                const ncm_container *c = nth_container(pod, i);
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
        bool snn = strcmp(ncm_node_config_tm_policy(n->cfg), "single-numa-node") == 0;
        int scope = strcmp(ncm_node_config_tm_scope(n->cfg), "pod") == 0 ? NCM_NODE_SCOPE_POD
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
        n->txn_gen = n->pods_gen;
        n->txn_lines = n->pods_journal_lines;
        return 0;
}

int ncm__node_txn_commit(ncm_node *n, ncm_error *err)
{
        int r;

        if (!n->txn || n->txn_depth > 1)
                return 0;
        if (n->txn_doomed)
                return ncm_error_set(err, EIO, "commit of a failed transaction");
        /* an owner's batch leaves the directory's fsync to it (ncm_fs_batch_settle) */
        r = ncm_fs_batch_commit(n->txn, n->stage ? NCM_FS_WRITE_NO_DIRSYNC : 0, err);
        if (r < 0) {
                n->txn_doomed = true;
                return r;
        }
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
                n->pods_gen = n->txn_gen;
                n->pods_journal_lines = n->txn_lines;
        }
        n->txn = NULL;
        n->txn_doomed = false;
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

static int enforce_commit(ncm_node *n, ncm_error *err);
static int enforce_undo(ncm_node *n, int r, ncm_error *err);

/* Whether the registry's record of POD (if any) is POD itself, its removed containers none. */
static bool held_as_is(const ncm_node *n, const ncm_pod *pod)
{
        const node_pod *p = pod_find(n, pod->uid);
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
                node_pod *prev = pod_find(n, pod->uid);
                bool had = false, put = false, enforcing = false;
                r = prev ? pod_copy(prev, &old) : 0;
                had = prev && r >= 0;
                if (r >= 0)
                        r = pod_make(pod, &rec);
                if (r >= 0) {
                        r = pod_put(n, &rec);
                        put = r >= 0;
                }
                if (r < 0)
                        r = oom(err);
                /* the same pod again, as it is held: its record needs no line */
                if (r >= 0 && n->persist_pods && !same_record)
                        r = persist_pod(n, pod->uid, NULL, false, err);
                if (r >= 0) {
                        r = enforce_admission(n, pod, snap.default_set, err);
                        enforcing = r > 0;
                }
                if (r >= 0)
                        r = ncm__node_txn_commit(n, err);
                if (r < 0 && enforcing) {
                        r = enforce_undo(n, r, err);
                } else if (r >= 0 && enforcing) {
                        r = enforce_commit(n, err); /* out of memory at worst: the files stand */
                }
                if (r < 0 && !n->txn_doomed && n->txn && ncm_fs_batch_size(n->txn) == 0) {
                        /* committed, then the enforcer's commit ran out of memory */
                        ncm__node_txn_end(n);
                        if (had)
                                pod_done(&old);
                        snapshot_done(&snap);
                        ncm__node_txn_done(&txn);
                        return r;
                }
                if (r < 0) {
                        ncm_error e = NCM_ERROR_INIT;
                        n->txn_doomed = n->txn != NULL;
                        if (put && had) {
                                (void)pod_put(n, &old);
                                had = false;
                        } else if (put) {
                                pod_forget(n, pod->uid);
                        }
                        if (had)
                                pod_done(&old);
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
                        pod_done(&old);
                snapshot_done(&snap);
                r = add_container_ids(n, pod);
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
        node_pod *p = pod_find(n, pod->uid);
        ncm_pod *spec, *old;
        int r = 0;

        if (!p)
                return ncm_error_set(err, ENOENT, "pod '%s' is not on the node", pod->uid);
        spec = ncm_pod_dup(pod);
        if (!spec)
                return oom(err);
        old = p->spec;
        p->spec = spec;
        p->fit = (ncm__node_fit_req_free(p->fit), NULL);
        if (n->persist_pods)
                r = persist_pod(n, pod->uid, NULL, false, err);
        if (r < 0) {
                p->spec = old;
                ncm_pod_free(spec);
                if (n->persist_pods)
                        (void)persist_pod(n, pod->uid, NULL, false, NULL);
                return r;
        }
        *ret_old = old;
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * Enforcement: the node's side of the enforcer's transactions
 */

/* The Burstable and Guaranteed requests of the pods the node holds, EXCEPT_UID left out. */
static int usage_of(const ncm_node *n, const char *except_uid, ncm_cgroup_qos_usage *ret,
                    ncm_error *err)
{
        ncm_cgroup_qos_usage u = {0, 0, 0};

        for (size_t i = 0; i < n->n_pods; i++) {
                int r;
                if (!n->pods[i].spec || (except_uid && strcmp(n->pods[i].uid, except_uid) == 0))
                        continue;
                r = ncm_cgroup_qos_usage_add_pod(&u, n->pods[i].spec, err);
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
 * SHARED for the others. With ONLY_SHARED, just the running containers on the shared pool.
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
                const ncm_container *c = nth_container(pod, i);
                const ncm_cpuset *own = ncm_cpu_state_get(n->cpu_state, pod->uid, c->name);
                if (only_shared &&
                    (own || (c->init && !c->sidecar) || is_removed_at(rec, i, c->name)))
                        continue;
                v[k++] = (ncm_enforce_container){.name = c->name,
                                                 .init = c->init,
                                                 .sidecar = c->sidecar,
                                                 .exclusive = own != NULL,
                                                 .cpus = own ? own : shared};
        }
        *ret = v;
        *ret_n = k;
        return 0;
}

static const ncm_enforcer_ops *enforcer_ops(const ncm_node *n)
{
        return n->enforcer ? ncm_enforcer_get_ops(n->enforcer) : NULL;
}

static void *enforcer_data(const ncm_node *n)
{
        return ncm_enforcer_get_data(n->enforcer);
}

/* The shared pool moved: every running container on it, of every pod but SKIP_UID, follows. */
static int enforce_shared(ncm_node *n, const char *skip_uid, ncm_error *err)
{
        const ncm_enforcer_ops *ops = enforcer_ops(n);
        ncm_autoptr(ncm_cpuset) shared = ncm_cpuset_new();

        if (!shared)
                return oom(err);
        if (!ops->pod_cpus)
                return 0;
        ncm_node_shared_pool(n, shared);
        for (size_t i = 0; i < n->n_pods; i++) {
                const node_pod *rec = &n->pods[i];
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
                r = ops->pod_cpus(enforcer_data(n), &ep, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int enforce_begin(ncm_node *n, ncm_error *err)
{
        const ncm_enforcer_ops *ops = enforcer_ops(n);
        return ops->begin ? ops->begin(enforcer_data(n), err) : 0;
}

static int enforce_commit(ncm_node *n, ncm_error *err)
{
        const ncm_enforcer_ops *ops = enforcer_ops(n);
        return ops->commit ? ops->commit(enforcer_data(n), err) : 0;
}

/*
 * An enforcement step failed with ERR: undo the enforcer's writes; the caller then undoes its
 * decisions. ERR becomes `WHAT: <the failure> (rolled back)`, with the enforcement code (exit
 * status 1), or says what could not be put back.
 */
static int enforce_fail(ncm_node *n, int r, const char *what, ncm_error *err)
{
        const ncm_enforcer_ops *ops = enforcer_ops(n);
        ncm_error e = NCM_ERROR_INIT;
        char msg[NCM_ERROR_MSG_MAX];
        int rb = ops->rollback ? ops->rollback(enforcer_data(n), &e) : 0;

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
 * open (the caller commits it, enforce_commit, or undoes it, enforce_undo), 0 without an
 * enforcer, or the enforcer's error with its writes rolled back.
 */
static int enforce_admission(ncm_node *n, const ncm_pod *pod, const ncm_cpuset *default_before,
                             ncm_error *err)
{
        const ncm_enforcer_ops *ops = enforcer_ops(n);
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
        r = enforce_begin(n, err);
        if (r < 0)
                return enforce_fail(n, r, what, err);
        ep = (ncm_enforce_pod){pod, v, nv};
        if (ops->pod_add)
                r = ops->pod_add(enforcer_data(n), &ep, &usage, err);
        if (r >= 0 && !ncm_cpuset_equal(default_before, ncm_cpu_state_default(n->cpu_state)))
                r = enforce_shared(n, pod->uid, err);
        if (r < 0)
                return enforce_fail(n, r, what, err);
        return 1;
}

/*
 * The files of a change could not be written after the enforcer's writes: those are undone.
 * ERR (the write's failure, its code kept: an environment failure, not a refusal) says so.
 */
static int enforce_undo(ncm_node *n, int r, ncm_error *err)
{
        const ncm_enforcer_ops *ops = enforcer_ops(n);
        ncm_error e = NCM_ERROR_INIT;
        int rb = ops && ops->rollback ? ops->rollback(enforcer_data(n), &e) : 0;

        if (rb < 0)
                ncm_error_prefix(err, "(%s enforcer: its writes could not be rolled back: %s)",
                                 ncm_enforcer_name(n->enforcer), e.msg);
        return r;
}

int ncm_node_reconcile(ncm_node *n, ncm_error *err)
{
        const ncm_enforcer_ops *ops = enforcer_ops(n);
        ncm_autoptr(ncm_cpuset) shared = ncm_cpuset_new();
        int r, fixed = 0;

        if (!ops || !ops->pod_cpus)
                return 0;
        if (!shared)
                return oom(err);
        ncm_node_shared_pool(n, shared);
        r = enforce_begin(n, err);
        for (size_t i = 0; i < n->n_pods && r >= 0; i++) {
                const node_pod *rec = &n->pods[i];
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
                        r = ops->pod_cpus(enforcer_data(n), &ep, err);
                if (r > 0)
                        fixed += r;
        }
        if (r >= 0)
                r = enforce_commit(n, err);
        if (r < 0)
                return enforce_fail(n, r, "reconcile", err);
        return fixed;
}

int ncm__node_enforce_start(ncm_node *n, ncm_error *err)
{
        const ncm_enforcer_ops *ops = enforcer_ops(n);
        ncm_cgroup_qos_usage usage;
        ncm_enforce_start st;
        int r;

        if (!ops || !ops->start)
                return 0;
        r = usage_of(n, NULL, &usage, err);
        if (r < 0)
                return r;
        st = (ncm_enforce_start){n->cfg, n->all_cpus, &usage, n->attach};
        r = ops->start(enforcer_data(n), &st, err);
        if (r < 0 && r != -ENOMEM)
                ncm_error_prefix(err, "start %s enforcer", ncm_enforcer_name(n->enforcer));
        return r;
}

int ncm__node_enforce_shared(ncm_node *n, ncm_error *err)
{
        return enforcer_ops(n) ? enforce_shared(n, NULL, err) : 0;
}

int ncm__node_enforce_begin(ncm_node *n, ncm_error *err)
{
        return enforcer_ops(n) ? enforce_begin(n, err) : 0;
}

int ncm__node_enforce_commit(ncm_node *n, ncm_error *err)
{
        return enforcer_ops(n) ? enforce_commit(n, err) : 0;
}

int ncm__node_enforce_fail(ncm_node *n, int r, const char *what, ncm_error *err)
{
        return enforcer_ops(n) ? enforce_fail(n, r, what, err) : r;
}

int ncm__node_enforce_undo(ncm_node *n, int r, ncm_error *err)
{
        return enforce_undo(n, r, err);
}

int ncm__node_enforce_prepare(const ncm_node *n, const ncm_pod *pod, ncm_cpuset *shared,
                              ncm_cgroup_qos_usage *usage, ncm_enforce_container **ret,
                              size_t *ret_n, ncm_error *err)
{
        int r;

        ncm_node_shared_pool(n, shared);
        r = usage_of(n, pod->uid, usage, err);
        if (r >= 0 && enforce_view(n, pod, NULL, shared, false, ret, ret_n) < 0)
                r = oom(err);
        return r;
}

/* ------------------------------------------------------------------------------------------
 * Removal
 */

/* What a removal may change in the CPU manager, as it was before. */

/* Whether the registry holds container NAME of UID, not yet removed. */
static bool registry_has(const ncm_node *n, const char *uid, const char *name)
{
        const node_pod *p = pod_find(n, uid);

        for (size_t i = 0; p && i < p->n; i++)
                if (strcmp(p->c[i].name, name) == 0)
                        return !p->c[i].removed;
        return false;
}

typedef struct removal {
        ncm_cpu_state *state;
        ncm_cpu_policy_reuse *reuse;
        ncm_cpuset *default_before;
        node_mem_saved *mem; /* the memory manager's state of the pod */
} removal;

static void removal_done(removal *rm)
{
        ncm_cpu_state_free(rm->state);
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
        rm->state = ncm_cpu_state_dup(n->cpu_state);
        if (!rm->state || ncm_cpu_policy_reuse_save(n->cpu, &rm->reuse, NULL) < 0 ||
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
        if (!ncm_cpu_state_equal(n->cpu_state, rm->state))
                (void)ncm_cpu_state_assign(n->cpu_state, rm->state, NULL);
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
        node_pod *p = pod_find(n, uid);
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
                           const ncm_cpuset *default_before, const char *what, ncm_error *err)
{
        const ncm_enforcer_ops *ops = enforcer_ops(n);
        bool moved = !ncm_cpuset_equal(default_before, ncm_cpu_state_default(n->cpu_state));
        ncm_cgroup_qos_usage usage;
        int r;

        if (!ops || (!moved && !(pod && ops->pod_remove)))
                return 0;
        r = pod ? usage_of(n, skip_uid, &usage, err) : 0;
        if (r >= 0)
                r = enforce_begin(n, err);
        if (r >= 0 && moved)
                r = enforce_shared(n, skip_uid, err);
        if (r >= 0 && pod && ops->pod_remove)
                r = ops->pod_remove(enforcer_data(n), pod, &usage, err);
        if (r < 0)
                return enforce_fail(n, r, what, err);
        return 1;
}

/* The files of a removal, then the enforcer's commit (ENFORCING: its transaction is open). */
static int removal_commit(ncm_node *n, bool enforcing, ncm_error *err)
{
        int r = ncm__node_txn_commit(n, err);

        if (r < 0)
                return enforcing ? enforce_undo(n, r, err) : r;
        return enforcing ? enforce_commit(n, err) : 0;
}

int ncm_node_remove_container(ncm_node *n, const char *pod_uid, const char *name,
                              ncm_cpuset *released, ncm_error *err)
{
        removal rm;
        char what[512];
        /* its record changes exactly when the registry knows the container */
        bool rec = n->persist_pods && registry_has(n, pod_uid, name);
        bool enforcing = false;
        int r, had;

        if (released)
                ncm_cpuset_zero(released);
        if (n->read_only)
                return ncm_error_set(err, EROFS, "%s: opened read-only", n->dir ? n->dir : "node");
        r = ncm__node_txn_begin(n, err);
        if (r < 0)
                return r;
        r = rec ? persist_pod(n, pod_uid, name, false, err) : 0;
        if (r >= 0)
                r = removal_begin(n, pod_uid, &rm, err);
        if (r < 0) {
                ncm__node_txn_end(n);
                return r;
        }
        ncm_cpu_state_hold(n->cpu_state);
        had = release_cpus(n, pod_uid, name, released, err);
        r = ncm_cpu_state_flush(n->cpu_state, had < 0 ? NULL : err);
        r = had < 0 ? had : r < 0 ? r : had;
        if (r >= 0) {
                /* the memory manager's RemoveContainer, in the same commit */
                int mr = ncm__node_mem_release(n, pod_uid, name, err);
                if (mr >= 0)
                        mr = ncm__node_mem_flush(n, err);
                if (mr < 0)
                        r = mr;
                else if (mr > 0 && had == 0)
                        had = 1;
        }
        if (r >= 0 && n->enforcer) {
                snprintf(what, sizeof(what), "remove container '%s' of pod '%s'", name, pod_uid);
                r = enforce_removal(n, NULL, NULL, rm.default_before, what, err);
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
        return (forget_container(n, pod_uid, name) || had > 0) ? 1 : 0;
}

/* The names of POD_UID's entries in the CPU state, NULL-terminated (*RET). */
static int state_entries(const ncm_node *n, const char *pod_uid, char ***ret)
{
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        const char *pu, *cn;
        char **names = NULL;
        size_t nn = 0, cap = 0;

        while (ncm_cpu_state_next(n->cpu_state, &it, &pu, &cn, NULL)) {
                if (strcmp(pu, pod_uid) != 0)
                        continue;
                /* the slot after the new name is the (zeroed) terminator */
                if (ncm__array_grow(names, cap, nn + 1) < 0) {
                        strv_free(names);
                        return -ENOMEM;
                }
                names[nn] = strdup(cn);
                if (!names[nn]) {
                        strv_free(names);
                        return -ENOMEM;
                }
                nn++;
        }
        *ret = names;
        return 0;
}

int ncm_node_remove_pod(ncm_node *n, const char *pod_uid, ncm_cpuset *released, ncm_error *err)
{
        node_pod *p = pod_find(n, pod_uid);
        char **names = NULL;
        removal rm;
        char what[512];
        int any = p ? 1 : 0, r;
        bool enforcing = false;

        if (released)
                ncm_cpuset_zero(released);
        if (n->read_only)
                return ncm_error_set(err, EROFS, "%s: opened read-only", n->dir ? n->dir : "node");
        r = ncm__node_txn_begin(n, err);
        if (r < 0)
                return r;
        r = n->persist_pods && p ? persist_pod(n, pod_uid, NULL, true, err) : 0;
        if (r >= 0)
                r = removal_begin(n, pod_uid, &rm, err);
        if (r < 0) {
                ncm__node_txn_end(n);
                return r;
        }
        ncm_cpu_state_hold(n->cpu_state);
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
        if (r >= 0 && n->enforcer) {
                snprintf(what, sizeof(what), "remove pod '%s'", pod_uid);
                r = enforce_removal(n, pod_uid, p ? p->spec : NULL, rm.default_before, what, err);
                enforcing = r > 0;
        }
        if (r >= 0)
                r = removal_commit(n, enforcing, err);
        if (r < 0) {
                n->txn_doomed = n->txn != NULL;
                removal_undo(n, &rm);
                removal_done(&rm);
                strv_free(names);
                if (released)
                        ncm_cpuset_zero(released);
                ncm__node_txn_end(n);
                return r;
        }
        removal_done(&rm);
        ncm__node_txn_end(n);
        /* the pod goes whole: the registry's record and the topology manager's store of it at
         * once below (one container at a time would be quadratic in its size) */
        strv_free(names);
        /*
         * The device manager releases a pod's devices when the pod goes, not per container: its
         * checkpoint is a commit of its own, after the pod's (a crash between the two leaves
         * devices held by a pod no record knows, which the kubelet's restart frees too).
         */
        r = ncm_devmgr_remove_pod(n->dev, pod_uid, err);
        if (r < 0)
                return r;
        any |= r;
        ncm_tm_remove_pod(n->tm, pod_uid);
        pod_forget(n, pod_uid);
        return any;
}

/* ------------------------------------------------------------------------------------------
 * The pods of a persistent node: dir/nodecm_pods
 *
 *   {"generation": 3, "pods": [
 *   {"removed": ["init"], "pod": {"apiVersion": "v1", "kind": "Pod", ...}},
 *   ...]}
 *
 * sorted by pod UID, one record per line, each pod as ncm_pod_format_json() writes it; and its
 * journal dir/nodecm_pods_journal, what changed since, one line per change:
 *
 *   {"gen": 3, "put": {"removed": [], "pod": {...}}}
 *   {"gen": 3, "drop": "<uid>"}
 *
 * A change appends its pod's line instead of rewriting every pod (O(pod), not O(node)). The
 * file is rewritten whole, as the next generation and with the journal replaced by an empty
 * one after it, when the journal has grown past the pods by JOURNAL_SLACK lines, on a rollback,
 * and when a start found the journal's last line cut short by a crash. Lines of another
 * generation (a crash between the two files) are skipped.
 */

#define JOURNAL_SLACK 64

/* Pod P's record, container RM_NAME counted as removed too (NULL: none). */
static void format_pod_record(const node_pod *p, const char *rm_name, ncm_buf *b)
{
        bool first = true;

        ncm_buf_puts(b, "{\"removed\": [");
        for (size_t k = 0; k < p->n; k++) {
                if (!p->c[k].removed && !(rm_name && strcmp(p->c[k].name, rm_name) == 0))
                        continue;
                ncm_buf_puts(b, first ? "" : ", ");
                ncm_buf_json_string(b, p->c[k].name, strlen(p->c[k].name));
                first = false;
        }
        ncm_buf_puts(b, "], \"pod\": ");
        ncm_pod_format_json(p->spec, b);
        if (b->len && b->data[b->len - 1] == '\n')
                b->len--;
        ncm_buf_putc(b, '}');
}

/*
 * Write dir/nodecm_pods from the registry as it will be once SKIP_UID is removed (NULL: none)
 * and container RM_NAME of RM_UID is marked removed (NULL: none), without changing the
 * registry: removals write the record first, so that a crash between the files leaves CPUs
 * held by a pod no one knows (a retried removal frees them) rather than a pod that lost them.
 * The next generation, its journal emptied after it.
 */
static int persist_pods_view(ncm_node *n, const char *skip_uid, const char *rm_uid,
                             const char *rm_name, ncm_error *err)
{
        ncm_autofree char *path = NULL;
        ncm_autofree char *journal = NULL;
        ncm_buf b = NCM_BUF_INIT;
        bool any = false;
        int r;

        if (asprintf(&path, "%s/%s", n->dir, NCM_NODE_PODS_NAME) < 0 ||
            asprintf(&journal, "%s/%s", n->dir, NCM_NODE_PODS_JOURNAL_NAME) < 0)
                return oom(err);
        ncm_buf_printf(&b, "{\"generation\": %llu, \"pods\": [",
                       (unsigned long long)n->pods_gen + 1);
        for (size_t i = 0; i < n->n_pods; i++) {
                const node_pod *p = &n->pods[i];
                if (skip_uid && strcmp(p->uid, skip_uid) == 0)
                        continue;
                ncm_buf_puts(&b, any ? ",\n" : "\n");
                any = true;
                format_pod_record(p, rm_uid && strcmp(p->uid, rm_uid) == 0 ? rm_name : NULL, &b);
        }
        ncm_buf_puts(&b, "]}\n");
        if (ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return oom(err);
        }
        r = ncm__node_txn_begin(n, err);
        if (r >= 0)
                r = ncm__node_write(n, path, b.data, b.len, err);
        ncm_buf_done(&b);
        /* after the pods: a crash between the two leaves lines of the last generation, skipped */
        if (r >= 0)
                r = ncm__node_write(n, journal, "", 0, err);
        if (r >= 0) {
                n->pods_gen++;
                n->pods_journal_lines = 0;
        }
        if (r >= 0)
                r = ncm__node_txn_commit(n, err);
        ncm__node_txn_end(n);
        return r;
}

int ncm__node_persist_pods(ncm_node *n, ncm_error *err)
{
        return persist_pods_view(n, NULL, NULL, NULL, err);
}

void ncm__node_pods_journal(ncm_node *n, uint64_t generation, size_t lines)
{
        n->pods_gen = generation;
        n->pods_journal_lines = lines;
        n->pods_journal = true;
}

/*
 * The change to POD_UID's record: its line appended to the journal (its record as it will be
 * with container RM_NAME removed too; DROP, or not in the registry: the pod gone), or, for a
 * node that keeps no journal or whose journal has grown long, the whole file as
 * persist_pods_view() writes it. A rollback writes the pod's line as the registry has it again.
 */
static int persist_pod(ncm_node *n, const char *uid, const char *rm_name, bool drop, ncm_error *err)
{
        const node_pod *p = pod_find(n, uid);
        ncm_autofree char *journal = NULL;
        ncm_buf line = NCM_BUF_INIT;
        int r;

        /* the whole file now and then: a transaction that fails puts the generation back */
        if (!n->pods_journal || n->pods_journal_lines >= n->n_pods + JOURNAL_SLACK)
                return persist_pods_view(n, drop ? uid : NULL, drop ? NULL : uid, rm_name, err);
        if (asprintf(&journal, "%s/%s", n->dir, NCM_NODE_PODS_JOURNAL_NAME) < 0)
                return oom(err);
        ncm_buf_printf(&line, "{\"gen\": %llu, ", (unsigned long long)n->pods_gen);
        if (drop || !p) {
                ncm_buf_puts(&line, "\"drop\": ");
                ncm_buf_json_string(&line, uid, strlen(uid));
        } else {
                ncm_buf_puts(&line, "\"put\": ");
                format_pod_record(p, rm_name, &line);
        }
        ncm_buf_puts(&line, "}\n");
        if (ncm_buf_failed(&line)) {
                ncm_buf_done(&line);
                return oom(err);
        }
        /* a line of the transaction: appended and fdatasynced by its commit */
        r = ncm__node_txn_begin(n, err);
        if (r >= 0 && n->txn)
                r = ncm_fs_batch_append(n->txn, AT_FDCWD, journal, line.data, line.len, 0600, err);
        if (r >= 0)
                n->pods_journal_lines++;
        if (r >= 0)
                r = ncm__node_txn_commit(n, err);
        ncm__node_txn_end(n);
        ncm_buf_done(&line);
        return r;
}

void ncm_node_pod_records_free(ncm_node_pod_record *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++) {
                ncm_pod_free(v[i].pod);
                strv_free(v[i].removed);
        }
        free(v);
}

/* Record REC (WHERE in PATH) into *RET. */
static int parse_pod_record(json_object *rec, const char *path, const char *where,
                            ncm_node_pod_record *ret, ncm_error *err)
{
        json_object *pod = rec && json_object_is_type(rec, json_type_object)
                                           ? ncm__json_get(rec, "pod")
                                           : NULL;
        json_object *removed = pod ? ncm__json_get(rec, "removed") : NULL;
        int r;

        if (!pod)
                return ncm_error_set(err, EINVAL, "%s: %s: no pod", path, where);
        /* what the node holds loads as it was admitted (NCM__POD_STORED) */
        r = ncm__pod_from_json_flags(pod, where, NCM__POD_STORED, &ret->pod, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s", path);
        if (removed && json_object_is_type(removed, json_type_array)) {
                size_t k = json_object_array_length(removed);
                ret->removed = calloc(k + 1, sizeof(char *));
                for (size_t j = 0; ret->removed && j < k; j++) {
                        json_object *e = json_object_array_get_idx(removed, j);
                        ret->removed[j] = strdup(e && json_object_is_type(e, json_type_string)
                                                                 ? json_object_get_string(e)
                                                                 : "");
                }
        }
        return 0;
}

/* The index of UID in V (sorted by pod UID), or where it would go (*FOUND false). */
static size_t record_find(const ncm_node_pod_record *v, size_t n, const char *uid, bool *found)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(v[mid].pod->uid, uid) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = lo < n && strcmp(v[lo].pod->uid, uid) == 0;
        return lo;
}

int ncm__node_pods_journal_apply(const char *text, size_t len, const char *path, uint64_t gen,
                                 ncm_node_pod_record **v, size_t *n, size_t *cap, size_t *lines,
                                 bool *torn, ncm_error *err)
{
        size_t at = 0, line = 0;

        *lines = 0;
        *torn = false;
        while (at < len) {
                const char *nl = memchr(text + at, '\n', len - at);
                ncm_autojson o = NULL;
                json_object *g, *put, *drop;
                ncm_node_pod_record rec = {0};
                int64_t lg;
                char where[64], gp[80];
                bool found;
                size_t k;
                int r;

                if (!nl) {
                        *torn = true; /* an append a crash cut short: ignored */
                        return 0;
                }
                line++;
                (*lines)++;
                snprintf(where, sizeof(where), "line %zu", line);
                r = ncm__json_parse(text + at, (size_t)(nl - (text + at)), where, &o, err);
                at = (size_t)(nl - text) + 1;
                if (r < 0)
                        return ncm_error_prefix(err, "%s", path);
                snprintf(gp, sizeof(gp), "%s: gen", where);
                g = json_object_is_type(o, json_type_object) ? ncm__json_get(o, "gen") : NULL;
                if (!g)
                        return ncm_error_set(err, EINVAL, "%s: %s: missing", path, gp);
                if (ncm__json_int(g, gp, 0, INT64_MAX, &lg, err) < 0)
                        return ncm_error_prefix(err, "%s", path);
                if ((uint64_t)lg != gen)
                        continue; /* in the file already (a crash before the journal emptied) */
                put = ncm__json_get(o, "put");
                drop = ncm__json_get(o, "drop");
                if (drop) {
                        if (!json_object_is_type(drop, json_type_string))
                                return ncm_error_set(err, EINVAL, "%s: %s: drop: expected a string",
                                                     path, where);
                        k = record_find(*v, *n, json_object_get_string(drop), &found);
                        if (found) {
                                ncm_pod_free((*v)[k].pod);
                                strv_free((*v)[k].removed);
                                memmove(&(*v)[k], &(*v)[k + 1], (*n - k - 1) * sizeof(**v));
                                (*n)--;
                        }
                        continue;
                }
                if (!put)
                        return ncm_error_set(err, EINVAL, "%s: %s: expected \"put\" or \"drop\"",
                                             path, where);
                r = parse_pod_record(put, path, where, &rec, err);
                if (r < 0)
                        return r;
                k = record_find(*v, *n, rec.pod->uid, &found);
                if (found) {
                        ncm_pod_free((*v)[k].pod);
                        strv_free((*v)[k].removed);
                        (*v)[k] = rec;
                        continue;
                }
                if (ncm__array_grow(*v, *cap, *n) < 0) {
                        ncm_pod_free(rec.pod);
                        strv_free(rec.removed);
                        return oom(err);
                }
                memmove(&(*v)[k + 1], &(*v)[k], (*n - k) * sizeof(**v));
                (*v)[k] = rec;
                (*n)++;
        }
        return 0;
}

int ncm__node_pods_load(const char *dir, ncm_node_pod_record **ret, size_t *ret_n,
                        uint64_t *ret_gen, size_t *ret_lines, bool *ret_torn, ncm_error *err)
{
        ncm_autofree char *path = NULL;
        ncm_autofree char *journal = NULL;
        ncm_autofree char *text = NULL;
        ncm_autojson doc = NULL;
        ncm_node_pod_record *v = NULL;
        json_object *pods, *g;
        size_t n = 0, cap = 0, jlen = 0, lines = 0;
        int64_t gen = 0;
        bool torn = false;
        int r;

        if (asprintf(&path, "%s/%s", dir, NCM_NODE_PODS_NAME) < 0 ||
            asprintf(&journal, "%s/%s", dir, NCM_NODE_PODS_JOURNAL_NAME) < 0)
                return oom(err);
        r = ncm_fs_exists(AT_FDCWD, path);
        if (r > 0) {
                r = ncm__json_load_file(path, &doc, err);
                if (r < 0)
                        return r;
                pods = doc ? ncm__json_get(doc, "pods") : NULL;
                if (!pods || !json_object_is_type(pods, json_type_array))
                        return ncm_error_set(err, EINVAL, "%s: pods: expected array", path);
                g = ncm__json_get(doc, "generation");
                if (g && ncm__json_int(g, "generation", 0, INT64_MAX, &gen, err) < 0)
                        return ncm_error_prefix(err, "%s", path);
                n = json_object_array_length(pods);
                cap = n + 1;
                v = calloc(cap, sizeof(*v));
                if (!v)
                        return oom(err);
                for (size_t i = 0; i < n; i++) {
                        char where[64];
                        snprintf(where, sizeof(where), "pods[%zu]", i);
                        r = parse_pod_record(json_object_array_get_idx(pods, i), path, where, &v[i],
                                             err);
                        if (r < 0) {
                                ncm_node_pod_records_free(v, n);
                                return r;
                        }
                }
        }
        r = ncm_fs_read_all(AT_FDCWD, journal, 64u << 20, &text, &jlen, err);
        if (r == -ENOENT) {
                ncm_error_clear(err);
                r = 0;
        } else if (r >= 0) {
                r = ncm__node_pods_journal_apply(text, jlen, journal, (uint64_t)gen, &v, &n, &cap,
                                                 &lines, &torn, err);
        }
        if (r < 0) {
                ncm_node_pod_records_free(v, n);
                return r;
        }
        *ret = v;
        *ret_n = n;
        if (ret_gen)
                *ret_gen = (uint64_t)gen;
        if (ret_lines)
                *ret_lines = lines;
        if (ret_torn)
                *ret_torn = torn;
        return 0;
}

int ncm_node_pods_load(const char *dir, ncm_node_pod_record **ret, size_t *ret_n, ncm_error *err)
{
        return ncm__node_pods_load(dir, ret, ret_n, NULL, NULL, NULL, err);
}
