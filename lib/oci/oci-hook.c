/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One run of the OCI hook: who the container is, its cgroup, its pod rebuilt and admitted (or
 * released) on the node kept in the root directory, under that directory's lock.
 *
 * Crash safety. The hook's record of containers is written before an admission and after a
 * release, so that whatever moment the hook dies at, the record knows every container the
 * node holds; an entry the node does not hold (the admission never happened) is harmless: its
 * cgroup goes when the runtime fails the container, and the next run drops it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include "oci-internal.h"

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

void ncm_oci_hook_result_done(ncm_oci_hook_result *r)
{
        if (!r)
                return;
        free(r->id);
        free(r->reason);
        free(r->pod_uid);
        free(r->container);
        free(r->cpus);
        free(r->mems);
        free(r->cgroup);
        *r = (ncm_oci_hook_result){0};
}

/* What a run works with once the node is open. */
typedef struct hook_env {
        int rootfd;
        int sysfd; /* the machine, for CRI-O's irq-load-balancing */
        ncm_cgroup_layout layout;
        char hier[64];
        oci_registry reg;
        oci_registry confined; /* containers kept on the shared pool */
        ncm_enforcer *enf;
        ncm_node_dir *dir;
        ncm_node *node;
        bool dirty;          /* the registry changed and must be saved */
        bool confined_dirty; /* the record of confined containers changed */
} hook_env;

static void env_done(hook_env *env)
{
        env->dir = ncm_node_dir_close(env->dir);
        env->enf = ncm_enforcer_free(env->enf);
        ncm__rt_record_done(&env->reg);
        ncm__rt_record_done(&env->confined);
        if (env->rootfd >= 0)
                close(env->rootfd);
        if (env->sysfd >= 0)
                close(env->sysfd);
        env->rootfd = env->sysfd = -1;
}

/* The cgroup mount and its cpuset hierarchy. */
static int env_cgroups(const ncm_oci_hook_options *o, hook_env *env, ncm_error *err)
{
        const char *root = o->cgroup_root ? o->cgroup_root : "/sys/fs/cgroup";
        const ncm_cgroup_hierarchy *h;
        int r;

        env->rootfd = ncm_fs_open_root(root, err);
        if (env->rootfd < 0)
                return env->rootfd;
        if (o->cgroup_version) {
                r = ncm_cgroup_layout_standard(&env->layout, o->cgroup_version, root, err);
        } else {
                ncm_autofree char *mi = NULL;
                r = ncm_fs_read_all(AT_FDCWD, "/proc/self/mountinfo", 1 << 24, &mi, NULL, err);
                if (r >= 0)
                        r = ncm_cgroup_layout_detect(env->rootfd, root, mi, -1, &env->layout, err);
        }
        /* the kubelet's start-up check of its configuration against this host */
        if (r >= 0)
                r = ncm_node_config_check_host(o->cfg, &env->layout, err);
        if (r < 0)
                return r;
        h = ncm_cgroup_layout_find(&env->layout, NCM_CGROUP_CTRL_CPUSET);
        if (!h)
                return ncm_error_set(err, ENOENT, "%s: no cpuset controller", root);
        snprintf(env->hier, sizeof(env->hier), "%s", h->dir);
        return 0;
}

/* Open the node (taking the lock), then read the record. */
static int env_open(const ncm_oci_hook_options *o, unsigned flags, hook_env *env, ncm_error *err)
{
        static const char *const names[] = {NCM_OCI_CONTAINERS_NAME, NCM_OCI_CONFINED_NAME, NULL};
        ncm_node_dir_options dopt = {0};
        oci_enforcer_options eo = {0};
        int r;

        env->sysfd = ncm_fs_open_root(o->machine_root ? o->machine_root : "/", err);
        if (env->sysfd < 0)
                return env->sysfd;
        eo = (oci_enforcer_options){env->rootfd, env->hier,      &env->layout, o->topo,
                                    &env->reg,   &env->confined, env->sysfd};
        r = ncm__oci_enforcer_new(&eo, &env->enf, err);
        if (r < 0)
                return r;
        dopt.flags = flags | (o->no_wait ? NCM_NODE_DIR_NOWAIT : 0);
        dopt.enforcer = env->enf;
        dopt.kubelet_version = o->kubelet_version;
        r = ncm_node_dir_open(o->root_dir, o->topo, o->cfg, &dopt, &env->dir, err);
        if (r < 0)
                return r;
        env->node = ncm_node_dir_node(env->dir);
        /* a temporary file of ours that a crash left: the lock says no one is writing it */
        r = ncm_fs_clean_tmp(AT_FDCWD, o->root_dir, names, err);
        if (r >= 0)
                r = ncm__rt_record_load(o->root_dir, NCM_OCI_CONTAINERS_NAME, &env->reg, err);
        if (r >= 0)
                r = ncm__rt_record_load(o->root_dir, NCM_OCI_CONFINED_NAME, &env->confined, err);
        return r;
}

/* Release entry K: the container, and its pod when it was the pod's last one. */
static int release(hook_env *env, size_t k, ncm_cpuset *released, ncm_error *err)
{
        ncm_autofree char *pod = strdup(env->reg.v[k].pod);
        int r;

        if (!pod)
                return oom(err);
        r = ncm_node_remove_container(env->node, pod, env->reg.v[k].name, released, err);
        if (r < 0)
                return r;
        ncm__rt_record_remove(&env->reg, k);
        env->dirty = true;
        if (!ncm__rt_record_has_pod(&env->reg, pod) && ncm_node_pod(env->node, pod)) {
                ncm_autoptr(ncm_cpuset) more = ncm_cpuset_new();
                if (!more)
                        return oom(err);
                r = ncm_node_remove_pod(env->node, pod, more, err);
                if (r < 0)
                        return r;
                if (released)
                        ncm_cpuset_or(released, released, more);
        }
        return 0;
}

/* removeStaleState: containers whose cgroup has gone without a poststop (confined ones too). */
static int prune(hook_env *env, const char *skip_id, size_t *count, ncm_error *err)
{
        for (size_t i = env->confined.n; i-- > 0;) {
                if (skip_id && strcmp(env->confined.v[i].id, skip_id) == 0)
                        continue;
                if (ncm__oci_cgroup_exists(env->rootfd, env->hier, env->confined.v[i].cgroup) != 0)
                        continue;
                ncm__rt_record_remove(&env->confined, i);
                env->confined_dirty = true;
                (*count)++;
        }
        for (size_t i = env->reg.n; i-- > 0;) {
                int r;
                if (skip_id && strcmp(env->reg.v[i].id, skip_id) == 0)
                        continue;
                r = ncm__oci_cgroup_exists(env->rootfd, env->hier, env->reg.v[i].cgroup);
                if (r != 0)
                        continue; /* there, or unknown: keep it */
                r = release(env, i, NULL, err);
                if (r < 0)
                        return r;
                (*count)++;
        }
        return 0;
}

static int save_flags(const ncm_oci_hook_options *o, hook_env *env, unsigned flags, ncm_error *err)
{
        int r = env->dirty ? ncm__rt_record_save(o->root_dir, NCM_OCI_CONTAINERS_NAME, &env->reg,
                                                 flags, err)
                           : 0;
        if (r >= 0)
                env->dirty = false;
        if (r >= 0 && env->confined_dirty)
                r = ncm__rt_record_save(o->root_dir, NCM_OCI_CONFINED_NAME, &env->confined, 0, err);
        if (r >= 0)
                env->confined_dirty = false;
        return r;
}

static int save(const ncm_oci_hook_options *o, hook_env *env, ncm_error *err)
{
        return save_flags(o, env, 0, err);
}

/* The cgroup of PID that holds its cpuset: the cpuset line on v1, the unified one on v2. */
static int pid_cgroup(const ncm_oci_hook_options *o, const hook_env *env, const char *id, int pid,
                      char **ret, ncm_error *err)
{
        bool v2 = ncm_cgroup_layout_version(&env->layout) == 2;
        ncm_autoclose int procfd = -1;
        ncm_autofree char *text = NULL;
        char path[64];
        size_t len = 0;
        int r;

        procfd = ncm_fs_open_root(o->proc_root ? o->proc_root : "/", err);
        if (procfd < 0)
                return procfd;
        snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
        r = ncm_fs_read_all(procfd, path, 1 << 20, &text, &len, err);
        if (r < 0)
                return ncm_error_prefix(err, "container '%s'", id);
        for (char *line = text; line < text + len;) {
                char *nl = memchr(line, '\n', (size_t)(text + len - line));
                size_t ll = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
                ncm_cgroup_proc_entry e;
                if (ll && ncm_cgroup_parse_proc_cgroup_line(line, ll, &e) >= 0) {
                        bool match = v2 ? e.id == 0 && e.controllers_len == 0
                                        : (ncm_cgroup_parse_controllers(e.controllers,
                                                                        e.controllers_len) &
                                           NCM_CGROUP_CTRL_CPUSET) != 0;
                        if (match) {
                                *ret = strndup(e.path, e.path_len);
                                return *ret ? 0 : oom(err);
                        }
                }
                line += ll + 1;
        }
        return ncm_error_set(err, ENOENT, "container '%s': process %d has no %s cgroup", id, pid,
                             v2 ? "cgroup v2" : "cpuset");
}

static int skip(ncm_oci_hook_result *res, const char *why, ncm_error *err)
{
        res->action = NCM_OCI_SKIPPED;
        res->reason = strdup(why);
        return res->reason ? 0 : oom(err);
}

static int read_config(const ncm_oci_hook_options *o, const ncm_oci_state *st, ncm_oci_config *cfg,
                       ncm_error *err)
{
        ncm_autofree char *path = NULL;
        ncm_autofree char *text = NULL;
        size_t len = 0;
        int r;

        if (o->config_text)
                return ncm_oci_config_parse(o->config_text, o->config_len, "config.json", cfg, err);
        if (!st->bundle || st->bundle[0] != '/')
                return ncm_error_set(err, EINVAL,
                                     "state: bundle: expected an absolute path, got "
                                     "\"%s\"",
                                     st->bundle ? st->bundle : "");
        if (asprintf(&path, "%s/config.json", st->bundle) < 0)
                return oom(err);
        r = ncm_fs_read_all(AT_FDCWD, path, 16u << 20, &text, &len, err);
        if (r < 0)
                return r;
        return ncm_oci_config_parse(text, len, path, cfg, err);
}

/* The entry of the container being created, from what the runtime said. */
static int make_entry(const ncm_oci_state *st, const ncm_oci_config *cfg,
                      const ncm_runtime_identity *id, char *cgroup, oci_entry *ret, ncm_error *err)
{
        char uid[256] = "";
        ncm_qos_class qos = NCM_QOS_BEST_EFFORT;
        int from_cgroup = ncm_runtime_pod_cgroup_qos(cfg->cgroups_path, &qos, uid, sizeof(uid));
        oci_entry e = {0};

        if (from_cgroup < 0)
                from_cgroup = 0;
        e.id = strdup(st->id);
        e.pod = strdup(id->pod_uid ? id->pod_uid : from_cgroup > 0 ? uid : st->id);
        e.pod_name = strdup(id->pod_name ? id->pod_name : "");
        e.pod_ns = strdup(id->pod_namespace ? id->pod_namespace : "");
        e.name = strdup(id->container_name ? id->container_name : st->id);
        e.cgroup = cgroup;
        e.kind = id->kind;
        e.has_qos = id->has_qos || from_cgroup > 0;
        e.qos = id->has_qos ? id->qos : qos;
        e.resources = cfg->resources;
        if (ncm__rt_container_set_annotations(&e, cfg->annotations, cfg->n_annotations) < 0 ||
            !e.id || !e.pod || !e.pod_name || !e.pod_ns || !e.name) {
                e.cgroup = NULL; /* still the caller's */
                ncm__rt_container_done(&e);
                return oom(err);
        }
        *ret = e;
        return 0;
}

static int result_fill(const hook_env *env, const oci_entry *e, const ncm_node_admission *a,
                       ncm_oci_hook_result *res, ncm_error *err)
{
        ncm_buf mems = NCM_BUF_INIT;

        res->action = NCM_OCI_ADMITTED;
        res->pod_uid = strdup(e->pod);
        res->container = strdup(e->name);
        res->cgroup = strdup(e->cgroup);
        if (!res->pod_uid || !res->container || !res->cgroup)
                return oom(err);
        for (size_t i = 0; i < a->n_containers; i++) {
                ncm_bitmask m;
                if (strcmp(a->containers[i].name, e->name) != 0)
                        continue;
                res->exclusive = a->containers[i].exclusive;
                res->cpus = ncm_cpuset_format_list(a->containers[i].cpus);
                if (!res->cpus)
                        return oom(err);
                /* what the enforcer wrote: the node's one answer */
                if (ncm_node_container_mems(env->node, e->pod, e->name, a->containers[i].cpus, &m) >
                    0)
                        ncm_node_format_mems(m, &mems);
        }
        if (!res->cpus && !(res->cpus = strdup("")))
                return oom(err);
        res->mems = ncm_buf_steal(&mems);
        return res->mems ? 0 : oom(err);
}

/*
 * A container that is not nodecm's: kept on the shared pool, where no container holds CPUs of
 * its own (the kubelet's shared pool: nothing foreign on exclusive CPUs). It is recorded, then
 * a reconcile of the node writes the pool into it (and puts right whatever else was off).
 */
static int run_confine(const ncm_oci_hook_options *o, const ncm_oci_state *st, hook_env *env,
                       ncm_oci_hook_result *res, ncm_error *err)
{
        ncm_autofree char *cgroup = NULL;
        ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();
        oci_entry e = {0};
        ssize_t k;
        int r;

        if (!pool)
                return oom(err);
        r = env_cgroups(o, env, err);
        if (r >= 0)
                r = pid_cgroup(o, env, st->id, st->pid, &cgroup, err);
        if (r >= 0)
                r = env_open(o, NCM_NODE_DIR_INIT, env, err);
        if (r >= 0)
                r = prune(env, st->id, &res->stale, err);
        if (r < 0)
                return r;
        k = ncm__rt_record_find_id(&env->confined, st->id);
        if (k < 0) {
                e.id = strdup(st->id);
                e.pod = strdup(st->id);
                e.pod_name = strdup("");
                e.pod_ns = strdup("");
                e.name = strdup(st->id);
                e.cgroup = strdup(cgroup);
                if (!e.id || !e.pod || !e.pod_name || !e.pod_ns || !e.name || !e.cgroup ||
                    ncm__rt_record_add(&env->confined, &e) < 0) {
                        ncm__rt_container_done(&e);
                        return oom(err);
                }
                env->confined_dirty = true;
        }
        /* recorded before the write: a crash leaves an entry the next run prunes or keeps */
        r = save(o, env, err);
        if (r >= 0)
                r = ncm_node_reconcile(env->node, err);
        if (r < 0)
                return r;
        ncm_node_shared_pool(env->node, pool);
        res->action = NCM_OCI_CONFINED;
        res->cpus = ncm_cpuset_format_list(pool);
        res->cgroup = strdup(cgroup);
        return res->cpus && res->cgroup ? 0 : oom(err);
}

static int run_create(const ncm_oci_hook_options *o, const ncm_oci_state *st, hook_env *env,
                      ncm_oci_hook_result *res, ncm_error *err)
{
        ncm_oci_config cfg = {0};
        ncm_runtime_identity id;
        ncm_autofree char *cgroup = NULL;
        ncm_autoptr(ncm_pod) pod = NULL;
        ncm_autoptr(ncm_node_admission) adm = NULL;
        oci_entry e = {0}, old = {0};
        bool had_old = false;
        uint64_t syncs;
        ssize_t k;
        int r;

        r = read_config(o, st, &cfg, err);
        if (r >= 0)
                r = ncm_runtime_identify(cfg.annotations, cfg.n_annotations, &id, err);
        if (r < 0)
                goto out;
        if (!id.managed) {
                const char *m = NULL;
                for (size_t i = 0; i < cfg.n_annotations; i++)
                        if (strcmp(cfg.annotations[i].key, NCM_ANNOTATION_MANAGED) == 0)
                                m = cfg.annotations[i].value;
                if (!m && !o->no_confine && st->pid > 0) {
                        r = run_confine(o, st, env, res, err);
                        goto out;
                }
                r = skip(res,
                         m                                  ? "nodecm.io/managed is \"false\""
                         : id.kind == NCM_RUNTIME_SANDBOX   ? "a pod sandbox container"
                         : id.kind == NCM_RUNTIME_EPHEMERAL ? "an ephemeral container"
                                                            : "no nodecm.io/managed or pod UID "
                                                              "annotation",
                         err);
                goto out;
        }
        if (st->pid <= 0) {
                r = ncm_error_set(err, EINVAL,
                                  "container '%s': the state has no pid (run the hook at "
                                  "createRuntime or prestart)",
                                  st->id);
                goto out;
        }
        r = env_cgroups(o, env, err);
        if (r >= 0)
                r = pid_cgroup(o, env, st->id, st->pid, &cgroup, err);
        if (r >= 0)
                r = make_entry(st, &cfg, &id, cgroup, &e, err);
        if (r < 0)
                goto out;
        cgroup = NULL; /* the entry has it */
        r = env_open(o, NCM_NODE_DIR_INIT, env, err);
        if (r >= 0)
                r = prune(env, st->id, &res->stale, err);
        if (r < 0)
                goto out;
        /* the same container again (prestart and createRuntime), or a new instance of a
         * container its pod has had: it keeps its place in the pod */
        k = ncm__rt_record_find_id(&env->reg, e.id);
        if (k < 0)
                k = ncm__rt_record_find_name(&env->reg, e.pod, e.name);
        if (k >= 0) {
                r = ncm__rt_container_dup(&env->reg.v[k], &old);
                if (r < 0) {
                        r = oom(err);
                        goto out;
                }
                had_old = true;
                e.seq = env->reg.v[k].seq;
                ncm__rt_container_done(&env->reg.v[k]);
                env->reg.v[k] = e;
        } else {
                k = (ssize_t)env->reg.n;
                if (ncm__rt_record_add(&env->reg, &e) < 0) {
                        r = oom(err);
                        goto out;
                }
        }
        e = (oci_entry){0};
        env->dirty = true;
        r = ncm__rt_record_pod(&env->reg, &env->reg.v[k], &pod, err);
        /* the record, then the node: one directory fsync for both renames (nodecm_pods', or
         * ours below when the node wrote nothing), before the runtime goes on */
        syncs = ncm_node_dir_syncs(env->node);
        if (r >= 0)
                r = save_flags(o, env, NCM_FS_WRITE_NO_DIRSYNC, err);
        if (r >= 0)
                r = ncm_node_admit(env->node, pod, 0, &adm, err);
        if (r >= 0 && !adm->admitted)
                r = ncm_error_set(err, NCM_E_ADMISSION, "%s: %s", adm->reason, adm->message);
        if (r < 0) {
                /* nothing was decided: the record goes back to what it was */
                ncm_error e2 = NCM_ERROR_INIT;
                k = ncm__rt_record_find_id(&env->reg, st->id);
                if (k >= 0 && had_old) {
                        ncm__rt_container_done(&env->reg.v[k]);
                        env->reg.v[k] = old;
                        old = (oci_entry){0};
                        had_old = false;
                } else if (k >= 0) {
                        ncm__rt_record_remove(&env->reg, (size_t)k);
                }
                env->dirty = true;
                (void)save(o, env, &e2);
                goto out;
        }
        /* admitted, and in the record: a failure here leaves both (poststop releases) */
        r = ncm__rt_record_settle(o->root_dir, env->node, syncs, err);
        if (r < 0)
                goto out;
        k = ncm__rt_record_find_id(&env->reg, st->id);
        r = result_fill(env, &env->reg.v[k], adm, res, err);
out:
        if (had_old)
                ncm__rt_container_done(&old);
        ncm__rt_container_done(&e);
        ncm_oci_config_done(&cfg);
        return r;
}

static int run_poststop(const ncm_oci_hook_options *o, const ncm_oci_state *st, hook_env *env,
                        ncm_oci_hook_result *res, ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) released = ncm_cpuset_new();
        ncm_autofree char *state = NULL;
        ssize_t k;
        int r;

        if (!released || asprintf(&state, "%s/%s", o->root_dir, NCM_CPU_CHECKPOINT_NAME) < 0)
                return oom(err);
        res->action = NCM_OCI_UNKNOWN;
        /* no node there: the hook never placed anything */
        if (ncm_fs_exists(AT_FDCWD, state) <= 0)
                return 0;
        r = env_cgroups(o, env, err);
        if (r >= 0)
                r = env_open(o, 0, env, err);
        if (r >= 0)
                r = prune(env, st->id, &res->stale, err);
        if (r < 0)
                return r;
        k = ncm__rt_record_find_id(&env->confined, st->id);
        if (k >= 0) {
                ncm__rt_record_remove(&env->confined, (size_t)k);
                env->confined_dirty = true;
                res->action = NCM_OCI_CONFINED;
                return 0;
        }
        k = ncm__rt_record_find_id(&env->reg, st->id);
        if (k >= 0) {
                res->pod_uid = strdup(env->reg.v[k].pod);
                res->container = strdup(env->reg.v[k].name);
                if (!res->pod_uid || !res->container)
                        return oom(err);
                r = release(env, (size_t)k, released, err);
                if (r < 0)
                        return r;
                res->action = NCM_OCI_RELEASED;
                res->cpus = ncm_cpuset_format_list(released);
                if (!res->cpus)
                        return oom(err);
        }
        return 0;
}

int ncm_oci_hook_run(const ncm_oci_hook_options *o, const char *state, size_t len,
                     ncm_oci_hook_result *ret, ncm_error *err)
{
        ncm_oci_state st = {0};
        ncm_oci_hook_result res = {0};
        hook_env env = {.rootfd = -1, .sysfd = -1};
        int r;

        r = ncm_oci_state_parse(state, len, &st, err);
        if (r < 0)
                return r;
        res.stage = o->stage;
        if (res.stage == NCM_OCI_STAGE_AUTO)
                res.stage = strcmp(st.status, "stopped") == 0 ? NCM_OCI_STAGE_POSTSTOP
                                                              : NCM_OCI_STAGE_CREATE;
        res.id = strdup(st.id);
        if (!res.id)
                r = oom(err);
        else if (res.stage == NCM_OCI_STAGE_POSTSTOP)
                r = run_poststop(o, &st, &env, &res, err);
        else
                r = run_create(o, &st, &env, &res, err);
        /* whatever happened, what the record lost on the way (stale containers) is saved */
        if (env.dir || env.confined_dirty) {
                ncm_error e2 = NCM_ERROR_INIT;
                int rs = save(o, &env, r < 0 ? &e2 : err);
                if (r >= 0)
                        r = rs;
        }
        env_done(&env);
        ncm_oci_state_done(&st);
        if (r < 0) {
                ncm_oci_hook_result_done(&res);
                return r;
        }
        *ret = res;
        return 0;
}

int ncm_oci_reconcile(const ncm_oci_hook_options *o, int *ret_fixed, unsigned *ret_knobs,
                      size_t *ret_stale, ncm_error *err)
{
        hook_env env = {.rootfd = -1, .sysfd = -1};
        ncm_autofree char *state = NULL;
        ncm_node_isolation_counters before = {{0}};
        size_t stale = 0;
        int r;

        *ret_fixed = 0;
        if (ret_stale)
                *ret_stale = 0;
        if (asprintf(&state, "%s/%s", o->root_dir, NCM_CPU_CHECKPOINT_NAME) < 0)
                return oom(err);
        if (ncm_fs_exists(AT_FDCWD, state) <= 0)
                return 0;
        r = env_cgroups(o, &env, err);
        if (r >= 0)
                r = env_open(o, 0, &env, err);
        if (r >= 0)
                r = prune(&env, NULL, &stale, err);
        if (r >= 0) {
                before = *ncm_node_isolation_counters_get(env.node);
                r = ncm_node_reconcile(env.node, err);
        }
        if (r >= 0) {
                const ncm_node_isolation_counters *after =
                                ncm_node_isolation_counters_get(env.node);
                *ret_fixed = r;
                for (int k = 0; ret_knobs && k < NCM_KNOB_FIX_N; k++)
                        ret_knobs[k] = (unsigned)(after->fixed[k] - before.fixed[k]);
                if (ret_stale)
                        *ret_stale = stale;
        }
        if (env.dir) {
                ncm_error e2 = NCM_ERROR_INIT;
                int rs = save(o, &env, r < 0 ? &e2 : err);
                if (r >= 0 && rs < 0)
                        r = rs;
        }
        env_done(&env);
        return r < 0 ? r : 0;
}

static void put(ncm_buf *b, const char *key, const char *v)
{
        ncm_buf_printf(b, ", \"%s\": ", key);
        ncm_buf_json_string(b, v ? v : "", v ? strlen(v) : 0);
}

void ncm_oci_hook_result_json(const ncm_oci_hook_result *r, ncm_buf *b)
{
        static const char *const actions[] = {"skipped", "admitted", "released", "unknown",
                                              "confined"};

        ncm_buf_printf(b, "{\"stage\": \"%s\"",
                       r->stage == NCM_OCI_STAGE_POSTSTOP ? "poststop" : "create");
        put(b, "id", r->id);
        ncm_buf_printf(b, ", \"action\": \"%s\"", actions[r->action]);
        switch (r->action) {
        case NCM_OCI_SKIPPED:
                put(b, "reason", r->reason);
                break;
        case NCM_OCI_ADMITTED:
                put(b, "pod", r->pod_uid);
                put(b, "container", r->container);
                ncm_buf_printf(b, ", \"exclusive\": %s", r->exclusive ? "true" : "false");
                put(b, "cpus", r->cpus);
                put(b, "mems", r->mems);
                put(b, "cgroup", r->cgroup);
                break;
        case NCM_OCI_RELEASED:
                put(b, "pod", r->pod_uid);
                put(b, "container", r->container);
                put(b, "released", r->cpus);
                break;
        case NCM_OCI_UNKNOWN:
                break;
        case NCM_OCI_CONFINED:
                if (r->stage != NCM_OCI_STAGE_POSTSTOP) {
                        put(b, "cpus", r->cpus);
                        put(b, "cgroup", r->cgroup);
                }
                break;
        }
        if (r->stale)
                ncm_buf_printf(b, ", \"stale\": %zu", r->stale);
        ncm_buf_puts(b, "}\n");
}
