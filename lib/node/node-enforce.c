/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The enforcers: none, and the two cgroup enforcers, which build the same plans (the kubelet's
 * cgroups for a pod, its containers' cpusets, node allocatable) and differ only in what they
 * do with them: cgroupfs applies each plan with an undo log that rollback() runs, plan records
 * them and keeps what was committed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodecm/enforcer.h>
#include <nodecm/fs.h>
#include <nodecm/node-cgroups.h>
#include "node-internal.h"

struct ncm_enforcer {
        const ncm_enforcer_ops *ops;
        void *data;
};

int ncm_enforcer_new(const ncm_enforcer_ops *ops, void *data, ncm_enforcer **ret)
{
        ncm_enforcer *e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->ops = ops;
        e->data = data;
        *ret = e;
        return 0;
}

ncm_enforcer *ncm_enforcer_free(ncm_enforcer *e)
{
        if (e) {
                if (e->ops->free)
                        e->ops->free(e->data);
                free(e);
        }
        return NULL;
}

const char *ncm_enforcer_name(const ncm_enforcer *e)
{
        return e->ops->name;
}

const ncm_enforcer_ops *ncm_enforcer_get_ops(const ncm_enforcer *e)
{
        return e->ops;
}

void *ncm_enforcer_get_data(const ncm_enforcer *e)
{
        return e->data;
}

static const ncm_enforcer_ops none_ops = {.name = "none"};

int ncm_enforcer_none_new(ncm_enforcer **ret, ncm_error *err)
{
        if (ncm_enforcer_new(&none_ops, NULL, ret) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * The cgroup enforcers
 */

typedef struct cg_enforcer {
        bool record; /* plan: record the plans instead of applying them */
        char *mount_root;
        char *sys_root;
        int version; /* a standard layout of this version instead of detecting one */
        bool has_capacity;
        ncm_resource_list capacity;
        ncm_cgroup_exec_options exec;
        ncm_node_cgroups *cg; /* set up at start */
        const ncm_cgroup_manager *m;
        const ncm_cgroup_layout *layout;
        int rootfd;              /* the mount root (cgroupfs) */
        ncm_cgroup_undo *undo;   /* cgroupfs: what this transaction changed */
        ncm_cgroup_plan pending; /* plan: this transaction's writes */
        ncm_cgroup_plan done;    /* plan: the committed writes */
        /* CRI-O's knobs: kubepods (the top the ancestors go up to), and the machine's writes
         * (interrupts, irqbalance) through SYS_ROOT, undone and recorded apart */
        char *kubepods;
        int sysfd;
        /* knobs: only isolation(), on the cgroups a runtime made (ncm_enforcer_knobs_new) */
        bool knobs_only;
        ncm_enforcer_cgroup_fn resolve;
        void *resolve_data;
        ncm_cgroup_undo *machine_undo;
        ncm_cgroup_plan pending_machine, done_machine;
} cg_enforcer;

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

static void cg_free(void *data)
{
        cg_enforcer *e = data;

        if (!e)
                return;
        ncm_node_cgroups_free(e->cg);
        ncm_cgroup_undo_free(e->undo);
        ncm_cgroup_plan_done(&e->pending);
        ncm_cgroup_plan_done(&e->done);
        ncm_cgroup_undo_free(e->machine_undo);
        ncm_cgroup_plan_done(&e->pending_machine);
        ncm_cgroup_plan_done(&e->done_machine);
        free(e->kubepods);
        if (e->sysfd >= 0)
                close(e->sysfd);
        ncm_resource_list_done(&e->capacity);
        free(e->mount_root);
        free(e->sys_root);
        free(e);
}

/* Apply PLAN (cgroupfs: with undo; plan: recorded as pending). */
static int run_plan(cg_enforcer *e, ncm_cgroup_plan *plan, ncm_error *err)
{
        int r;

        if (e->record)
                return ncm_cgroup_plan_append(&e->pending, plan) < 0 ? oom(err) : 0;
        r = ncm_cgroup_plan_apply_undo(plan, e->rootfd, &e->exec, e->undo, err);
        return r < 0 ? r : 0;
}

static int cg_start(void *data, const ncm_enforce_start *s, ncm_error *err)
{
        cg_enforcer *e = data;
        const ncm_node_config *cfg = s->cfg;
        ncm_node_cgroups_options o = {0};
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        ncm_cgroup_name kubepods = NCM_CGROUP_NAME_INIT;
        ncm_buf kname = NCM_BUF_INIT;
        int r;

        if (e->cg)
                return ncm_error_set(err, EALREADY, "enforcer already started");
        if (!e->record && strcmp(ncm_node_config_cgroup_driver(cfg), "cgroupfs") != 0)
                return ncm_error_set(err, EINVAL,
                                     "cgroupDriver %s: cgroups of the systemd driver are made by "
                                     "systemd over D-Bus; nodecm enforces the cgroupfs driver "
                                     "only (plan the systemd one)",
                                     ncm_node_config_cgroup_driver(cfg));
        o.mount_root = e->mount_root;
        o.sys_root = e->sys_root;
        o.cgroup_version = e->version;
        o.act = !e->record;
        o.no_allocatable = e->knobs_only;
        o.capacity = e->has_capacity ? &e->capacity : NULL;
        o.all_cpus = s->all_cpus;
        o.exec = &e->exec;
        o.unallocatable_cpus = s->unallocatable;
        r = ncm_node_cgroups_open(cfg, &o, &e->cg, err);
        if (r < 0)
                return r;
        e->m = ncm_node_cgroups_manager(e->cg);
        e->layout = ncm_node_cgroups_layout(e->cg);
        /* the kubelet on this host would not start: neither does the node. Behind the CRI
         * proxy the kubelet in front made that check itself, with its own file (as it ran its
         * predicates, so the fit admission is off there too). */
        r = e->knobs_only ? 0 : ncm_node_config_check_host(cfg, e->layout, err);
        if (r < 0)
                return r;
        e->rootfd = e->m->rootfd;
        if (e->knobs_only)
                return 0; /* the runtime and the kubelet make and limit every cgroup */

        /* the controllers the kubelet requires, named as it names kubepods */
        r = ncm_cgroup_qos_names(ncm_node_config_cgroup_root(cfg),
                                 ncm_node_config_cgroups_per_qos(cfg), &kubepods, NULL, NULL, err);
        if (r >= 0)
                for (size_t i = 0; i < kubepods.n; i++)
                        ncm_buf_printf(&kname, "%s%s", i ? "\" \"" : "", kubepods.parts[i]);
        if (r >= 0 && !e->kubepods &&
            ncm_cgroup_manager_path(e->m, &kubepods, &e->kubepods, err) < 0)
                r = -ENOMEM;
        ncm_cgroup_name_done(&kubepods);
        if (r >= 0)
                r = ncm_cgroup_layout_check_controllers(e->layout,
                                                        ncm_node_config_extra_controllers(cfg),
                                                        kname.data ? kname.data : "", err);
        ncm_buf_done(&kname);
        if (r >= 0 && !e->record)
                r = ncm_cgroup_manager_check_root(e->m, err);
        if (r >= 0 && s->attach)
                return 0;

        /* node allocatable: kubepods and the reserved cgroups, then the QoS tiers */
        if (r >= 0)
                r = ncm_node_cgroups_plan_node(e->cg, &plan, err);
        if (r >= 0)
                r = ncm_cgroup_manager_plan_start(e->m, s->usage, &plan, err);
        if (r >= 0)
                ncm_cgroup_plan_drop_superseded(&plan);
        if (r >= 0) {
                if (e->record)
                        r = ncm_cgroup_plan_append(&e->done, &plan) < 0 ? oom(err) : 0;
                else
                        r = ncm_cgroup_plan_apply(&plan, e->rootfd, &e->exec, err);
        }
        ncm_cgroup_plan_done(&plan);
        if (r < 0)
                e->cg = ncm_node_cgroups_free(e->cg);
        return r < 0 ? r : 0;
}

static int cg_begin(void *data, ncm_error *err)
{
        cg_enforcer *e = data;

        if (!e->cg)
                return ncm_error_set(err, EINVAL, "enforcer not started");
        ncm_cgroup_undo_clear(e->undo);
        ncm_cgroup_undo_clear(e->machine_undo);
        ncm_cgroup_plan_done(&e->pending);
        ncm_cgroup_plan_done(&e->pending_machine);
        return 0;
}

static int cg_commit(void *data, ncm_error *err)
{
        cg_enforcer *e = data;

        ncm_cgroup_undo_clear(e->undo);
        ncm_cgroup_undo_clear(e->machine_undo);
        if (e->record && (ncm_cgroup_plan_append(&e->done, &e->pending) < 0 ||
                          ncm_cgroup_plan_append(&e->done_machine, &e->pending_machine) < 0))
                return oom(err);
        ncm_cgroup_plan_done(&e->pending);
        ncm_cgroup_plan_done(&e->pending_machine);
        return 0;
}

static int cg_rollback(void *data, ncm_error *err)
{
        cg_enforcer *e = data;
        ncm_error e2 = NCM_ERROR_INIT;
        int r, rm;

        ncm_cgroup_plan_done(&e->pending);
        ncm_cgroup_plan_done(&e->pending_machine);
        if (e->record)
                return 0;
        /* the machine's writes came last in every transaction: undone first */
        rm = e->sysfd >= 0 ? ncm_cgroup_undo_run(e->machine_undo, e->sysfd, NULL, &e2) : 0;
        r = ncm_cgroup_undo_run(e->undo, e->rootfd, &e->exec, err);
        if (r >= 0 && rm < 0) {
                if (err)
                        *err = e2;
                return rm;
        }
        return r;
}

/*
 * CRI-O's knobs on the kubelet's cgroups (nodecm/cgroup-knobs.h): each container's cgroup as
 * the manager names it, its pod's, kubepods as the top; then the interrupts. The memo is
 * persisted once both plans are made and before either is applied.
 */
static int cg_isolation(void *data, ncm_enforce_isolation *iso, ncm_error *err)
{
        cg_enforcer *e = data;
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT, mplan = NCM_CGROUP_PLAN_INIT;
        ncm_knob_container *v = calloc(iso->n_containers + 1, sizeof(*v));
        char **paths = calloc(3 * iso->n_containers + 1, sizeof(*paths));
        size_t nv = 0;
        int r = 0;

        if (!v || !paths) {
                r = oom(err);
                goto out;
        }
        for (size_t i = 0; i < iso->n_containers && r >= 0; i++) {
                const ncm_enforce_knobbed *k = &iso->containers[i];
                char **p = &paths[3 * i];
                if (e->knobs_only) {
                        /* the runtime's names: its parent is the pod's, kubepods above */
                        if (!e->resolve ||
                            e->resolve(e->resolve_data, k->pod->uid, k->name, &p[0]) < 0)
                                continue;
                        if (ncm_knobs_runtime_cgroups(p[0], &p[1], &p[2]) < 0) {
                                r = oom(err);
                                break;
                        }
                } else {
                        r = ncm_cgroup_manager_container_path(e->m, k->pod->uid, k->pod->qos,
                                                              k->name, &p[0], err);
                        if (r >= 0)
                                r = ncm_cgroup_manager_container_path(
                                                e->m, k->pod->uid, k->pod->qos, NULL, &p[1], err);
                }
                v[nv++] = (ncm_knob_container){p[0], p[1], e->knobs_only ? p[2] : e->kubepods,
                                               k->cpus, k->knobs};
        }
        snprintf(plan.display_root, sizeof(plan.display_root), "%s", e->layout->display_root);
        snprintf(mplan.display_root, sizeof(mplan.display_root), "%s", e->sys_root);
        if (r >= 0)
                r = ncm_knobs_plan_cgroups(e->layout, e->record ? -1 : e->rootfd, v, nv,
                                           iso->all_cpus, iso->memo, &plan, iso->fixed, err);
        if (r >= 0)
                r = ncm_knobs_plan_irqs(e->record ? -1 : e->sysfd, iso->irq_banned, iso->all_cpus,
                                        ncm_knobs_irqbalance_file(e->sysfd, iso->irqbalance),
                                        iso->memo, &mplan, iso->fixed, err);
        if (r >= 0 && iso->persist)
                r = iso->persist(iso->persist_data, err);
        if (r >= 0)
                r = run_plan(e, &plan, err);
        if (r >= 0 && e->record && ncm_cgroup_plan_append(&e->pending_machine, &mplan) < 0)
                r = oom(err);
        else if (r >= 0 && !e->record && mplan.n_ops)
                r = ncm_cgroup_plan_apply_undo(&mplan, e->sysfd, NULL, e->machine_undo, err);
out:
        for (size_t i = 0; paths && i < 3 * iso->n_containers; i++)
                free(paths[i]);
        free(paths);
        free(v);
        ncm_cgroup_plan_done(&plan);
        ncm_cgroup_plan_done(&mplan);
        return r < 0 ? r : 0;
}

/* Does the pod ask for hugepages (a hugetlb limit is then written)? */
static bool wants_hugepages(const ncm_pod *pod, const ncm_cgroup_manager *m)
{
        ncm_cgroup_pod_totals t;
        if (ncm_cgroup_totals_for_pod(pod, &m->options, &t, NULL) < 0)
                return false;
        return t.n_hugepages > 0;
}

/* The node's cpuset.mems for a container as a set of NUMA node ids; NULL in *RET for none. */
static int mems_set(ncm_bitmask m, ncm_cpuset **ret, ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) s = NULL;

        *ret = NULL;
        if (!m)
                return 0;
        s = ncm_cpuset_new();
        if (!s)
                return oom(err);
        for (int i = 0; i < NCM_BITMASK_MAX_BITS; i++)
                if (ncm_bitmask_isset(m, i) && ncm_cpuset_set(s, i) < 0)
                        return oom(err);
        *ret = NCM_TAKE_PTR(s);
        return 0;
}

static int cg_pod_add(void *data, const ncm_enforce_pod *p, const ncm_cgroup_qos_usage *usage,
                      ncm_error *err)
{
        cg_enforcer *e = data;
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        ncm_autofree ncm_cgroup_container_cpus *cpus = calloc(p->n_containers + 1, sizeof(*cpus));
        ncm_autofree ncm_cpuset **mems = calloc(p->n_containers + 1, sizeof(*mems));
        size_t n = 0;
        int r = 0;

        if (!cpus || !mems)
                return oom(err);
        if (wants_hugepages(p->pod, e->m)) {
                r = ncm_cgroup_layout_check_controllers(e->layout, NCM_CGROUP_CTRL_HUGETLB, NULL,
                                                        err);
                if (r < 0)
                        return ncm_error_prefix(err, "pod '%s' requests hugepages", p->pod->uid);
        }
        for (size_t i = 0; i < p->n_containers && r >= 0; i++) {
                if (p->containers[i].init && !p->containers[i].sidecar)
                        continue;
                r = mems_set(p->containers[i].mems, &mems[n], err);
                cpus[n].container = p->containers[i].name;
                cpus[n].cpus = p->containers[i].cpus;
                cpus[n].mems = mems[n];
                n++;
        }
        if (r >= 0)
                r = ncm_cgroup_manager_plan_pod(e->m, p->pod, usage, cpus, n, NULL,
                                                NCM_CGROUP_PLAN_STARTED, &plan, err);
        if (r >= 0)
                r = run_plan(e, &plan, err);
        ncm_cgroup_plan_done(&plan);
        for (size_t i = 0; i < n; i++)
                ncm_cpuset_free(mems[i]);
        return r;
}

/* Whether the cpuset cgroup DIR's FILE holds SET already (the kernel's list, one trailing
 * newline). */
static bool cpuset_is(cg_enforcer *e, const char *dir, const char *file, const ncm_cpuset *set)
{
        char path[4200], buf[4096];
        ncm_autoptr(ncm_cpuset) now = NULL;
        ssize_t n;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        n = ncm_fs_read(e->rootfd, path, buf, sizeof(buf), NULL);
        if (n < 0)
                return false;
        if (n > 0 && buf[n - 1] == '\n')
                buf[n - 1] = '\0';
        return ncm_cpuset_parse_list(buf, &now, NULL) >= 0 && ncm_cpuset_equal(now, set);
}

/*
 * The containers' cpusets; a running container's cgroup that holds its CPUs already is left
 * alone. Returns how many cpusets were written (what a reconcile fixed).
 */
static int cg_pod_cpus(void *data, const ncm_enforce_pod *p, ncm_error *err)
{
        cg_enforcer *e = data;
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        const ncm_cgroup_hierarchy *h = ncm_cgroup_layout_find(e->layout, NCM_CGROUP_CTRL_CPUSET);
        int r = 0, written = 0;

        for (size_t i = 0; i < p->n_containers && r >= 0; i++) {
                const ncm_enforce_container *c = &p->containers[i];
                ncm_autofree char *cpath = NULL;
                char dir[4096] = "";
                ncm_autoptr(ncm_cpuset) mems = NULL;
                if (c->init && !c->sidecar)
                        continue;
                r = mems_set(c->mems, &mems, err);
                if (r < 0)
                        break;
                if (!e->record && h) {
                        /* a container that is not running has no cgroup to update (the
                         * kubelet's reconcile skips it too) */
                        r = ncm_cgroup_manager_container_path(e->m, p->pod->uid, p->pod->qos,
                                                              c->name, &cpath, err);
                        if (r < 0)
                                break;
                        snprintf(dir, sizeof(dir), "%s%s", h->dir, cpath);
                        if (ncm_fs_exists(e->rootfd, dir) <= 0 ||
                            (cpuset_is(e, dir, "cpuset.cpus", c->cpus) &&
                             (!mems || cpuset_is(e, dir, "cpuset.mems", mems))))
                                continue;
                }
                r = ncm_cgroup_manager_plan_container_cpuset(e->m, p->pod->uid, p->pod->qos,
                                                             c->name, c->cpus, mems, &plan, err);
                if (r < 0)
                        break;
                if (!e->record) {
                        /* one container at a time: a cgroup removed since it was looked at
                         * (its container stopped meanwhile) is one that was not running (the
                         * OCI enforcer does the same) */
                        r = run_plan(e, &plan, err);
                        ncm_cgroup_plan_done(&plan);
                        plan = (ncm_cgroup_plan)NCM_CGROUP_PLAN_INIT;
                        if (r < 0 && dir[0] && ncm_fs_exists(e->rootfd, dir) == 0) {
                                ncm_error_clear(err);
                                r = 0;
                                continue;
                        }
                }
                written++;
        }
        if (r >= 0 && e->record)
                r = run_plan(e, &plan, err);
        ncm_cgroup_plan_done(&plan);
        return r < 0 ? r : written;
}

static int cg_pod_remove(void *data, const ncm_pod *pod, const ncm_cgroup_qos_usage *usage,
                         ncm_error *err)
{
        cg_enforcer *e = data;
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        int r;

        if (!e->record) {
                ncm_autofree char *ppath = NULL;
                int pids[8];
                size_t npids = 0;
                r = ncm_cgroup_manager_container_path(e->m, pod->uid, pod->qos, NULL, &ppath, err);
                if (r >= 0)
                        r = ncm_cgroup_pids(e->layout, e->rootfd, ppath, pids, NCM_ELEMENTSOF(pids),
                                            &npids, err);
                if (r < 0)
                        return r;
                /* the kubelet kills them first; nodecm leaves that to whoever runs them */
                if (npids > 0)
                        return ncm_error_set(err, NCM_E_INVALID_STATE,
                                             "pod cgroup '%s%s' still has %zu process(es) (pid "
                                             "%d); stop them first",
                                             e->layout->display_root, ppath, npids, pids[0]);
        }
        r = ncm_cgroup_manager_plan_remove_pod(e->m, pod, usage, &plan, err);
        if (r >= 0)
                r = run_plan(e, &plan, err);
        ncm_cgroup_plan_done(&plan);
        return r;
}

/* ------------------------------------------------------------------------------------------
 * In-place resize
 */

/* A limit where 0 and -1 mean none (cfs quota, memory), as a number that orders them. */
static int64_t limit_of(bool has, int64_t v)
{
        return !has || v <= 0 ? INT64_MAX : v;
}

/*
 * The values of NEW that move in the direction UP (true: they rise, false: they fall) against
 * OLD, into *RET; false when none does. The quota travels with its period.
 */
static bool moving(const ncm_cgroup_resources *old, const ncm_cgroup_resources *new, bool up,
                   ncm_cgroup_resources *ret)
{
        int64_t a, b;
        bool any = false;

        ncm_cgroup_resources_init(ret);
        ret->oci_weight = new->oci_weight;
        if (new->has_cpu_shares && old->cpu_shares != new->cpu_shares &&
            (new->cpu_shares > old->cpu_shares) == up) {
                ret->has_cpu_shares = true;
                ret->cpu_shares = new->cpu_shares;
                any = true;
        }
        a = limit_of(old->has_cpu_quota, old->cpu_quota);
        b = limit_of(new->has_cpu_quota, new->cpu_quota);
        if (new->has_cpu_quota && a != b && (b > a) == up) {
                ret->has_cpu_quota = true;
                ret->cpu_quota = new->cpu_quota;
                ret->has_cpu_period = new->has_cpu_period;
                ret->cpu_period = new->cpu_period;
                any = true;
        }
        a = limit_of(old->has_memory, old->memory);
        b = limit_of(new->has_memory, new->memory);
        if (new->has_memory && a != b && (b > a) == up) {
                ret->has_memory = true;
                ret->memory = new->memory;
                any = true;
        }
        return any;
}

/* Whether container NAME of POD has a cgroup (cgroupfs; the plan enforcer plans every one). */
static bool has_cgroup(cg_enforcer *e, const ncm_pod *pod, const char *name)
{
        const ncm_cgroup_hierarchy *h = ncm_cgroup_layout_find(e->layout, NCM_CGROUP_CTRL_CPU);
        ncm_autofree char *cpath = NULL;
        char dir[4096];

        if (e->record)
                return true;
        if (!h)
                h = ncm_cgroup_layout_find(e->layout, NCM_CGROUP_CTRL_CPUSET);
        if (!h ||
            ncm_cgroup_manager_container_path(e->m, pod->uid, pod->qos, name, &cpath, NULL) < 0)
                return false;
        snprintf(dir, sizeof(dir), "%s%s", h->dir, cpath);
        return ncm_fs_exists(e->rootfd, dir) > 0;
}

/* One container's part of a resize phase (ncm_enforce_resize): limits and cpuset, ordered. */
static int resize_container(cg_enforcer *e, const ncm_enforce_resize *rz, size_t i,
                            ncm_cgroup_plan *plan, ncm_error *err)
{
        const ncm_pod *pod = rz->after->pod;
        const ncm_enforce_container *ec = &rz->after->containers[i];
        const ncm_container *cn = ncm_pod_find_container(pod, ec->name);
        const ncm_container *co = ncm_pod_find_container(rz->before, ec->name);
        const ncm_cpuset *was = rz->cpus_before ? rz->cpus_before[i] : NULL;
        bool grow = rz->phase == NCM_ENFORCE_RESIZE_GROW;
        /* a container on the shared pool follows the pool (the node's pod_cpus calls) */
        bool cpus_move = ec->exclusive && was && !ncm_cpuset_equal(was, ec->cpus) &&
                         (grow ? !ncm_cpuset_is_subset(ec->cpus, was)
                               : ncm_cpuset_is_subset(ec->cpus, was));
        ncm_autoptr(ncm_cpuset) mems = NULL;
        ncm_cgroup_resources rn, ro, mv;
        bool any;
        int r;

        if ((ec->init && !ec->sidecar) || !cn || !co || !has_cgroup(e, pod, ec->name))
                return 0;
        r = mems_set(ec->mems, &mems, err);
        if (r < 0)
                return r;
        r = ncm_cgroup_config_for_container(pod, cn, &e->m->options, NULL, NULL, &rn, err);
        if (r < 0)
                return r;
        r = ncm_cgroup_config_for_container(rz->before, co, &e->m->options, NULL, NULL, &ro, err);
        if (r < 0) {
                ncm_cgroup_resources_done(&rn);
                return r;
        }
        any = moving(&ro, &rn, grow, &mv);
        /* shrink: the limits fall, then the cpuset narrows; grow: the other way round */
        if (!grow && any)
                r = ncm_cgroup_manager_plan_container_resources(e->m, pod->uid, pod->qos, ec->name,
                                                                &mv, plan, err);
        if (r >= 0 && cpus_move)
                r = ncm_cgroup_manager_plan_container_cpuset(e->m, pod->uid, pod->qos, ec->name,
                                                             ec->cpus, mems, plan, err);
        if (r >= 0 && grow && any)
                r = ncm_cgroup_manager_plan_container_resources(e->m, pod->uid, pod->qos, ec->name,
                                                                &mv, plan, err);
        ncm_cgroup_resources_done(&mv);
        ncm_cgroup_resources_done(&ro);
        ncm_cgroup_resources_done(&rn);
        return r;
}

static int cg_pod_resize(void *data, const ncm_enforce_resize *rz,
                         const ncm_cgroup_qos_usage *usage, ncm_error *err)
{
        cg_enforcer *e = data;
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        int r = 0;

        /* grow: the pod cgroup (and the tiers it counts in) first, above its containers */
        if (rz->phase == NCM_ENFORCE_RESIZE_GROW)
                r = ncm_cgroup_manager_plan_pod(e->m, rz->after->pod, usage, NULL, 0, NULL,
                                                NCM_CGROUP_PLAN_NO_CONTAINERS, &plan, err);
        for (size_t i = 0; r >= 0 && i < rz->after->n_containers; i++)
                r = resize_container(e, rz, i, &plan, err);
        if (r >= 0)
                r = run_plan(e, &plan, err);
        ncm_cgroup_plan_done(&plan);
        return r;
}

static const ncm_enforcer_ops cgroupfs_ops = {
                .name = "cgroupfs",
                .start = cg_start,
                .begin = cg_begin,
                .pod_add = cg_pod_add,
                .pod_cpus = cg_pod_cpus,
                .pod_remove = cg_pod_remove,
                .commit = cg_commit,
                .rollback = cg_rollback,
                .free = cg_free,
                .isolation = cg_isolation,
                .pod_resize = cg_pod_resize,
};

static int knobs_pod(void *data, const ncm_enforce_pod *p, ncm_error *err)
{
        (void)data;
        (void)p;
        (void)err;
        return 0;
}

static int knobs_pod_add(void *data, const ncm_enforce_pod *p, const ncm_cgroup_qos_usage *usage,
                         ncm_error *err)
{
        (void)usage;
        return knobs_pod(data, p, err);
}

static const ncm_enforcer_ops knobs_ops = {
                .name = "knobs",
                .start = cg_start,
                .begin = cg_begin,
                .pod_add = knobs_pod_add,
                .pod_cpus = knobs_pod,
                .commit = cg_commit,
                .rollback = cg_rollback,
                .free = cg_free,
                .isolation = cg_isolation,
};

static const ncm_enforcer_ops plan_ops = {
                .name = "plan",
                .start = cg_start,
                .begin = cg_begin,
                .pod_add = cg_pod_add,
                .pod_cpus = cg_pod_cpus,
                .pod_remove = cg_pod_remove,
                .commit = cg_commit,
                .rollback = cg_rollback,
                .free = cg_free,
                .isolation = cg_isolation,
                .pod_resize = cg_pod_resize,
};

static int cg_new(const ncm_enforcer_cgroup_options *o, bool record, ncm_enforcer **ret,
                  ncm_error *err);

int ncm_enforcer_knobs_new(const ncm_enforcer_cgroup_options *o, ncm_enforcer **ret, ncm_error *err)
{
        int r = cg_new(o, false, ret, err);
        cg_enforcer *e;

        if (r < 0)
                return r;
        e = (*ret)->data;
        e->knobs_only = true;
        (*ret)->ops = &knobs_ops;
        return 0;
}

void ncm_enforcer_knobs_set_resolver(ncm_enforcer *e, ncm_enforcer_cgroup_fn fn, void *data)
{
        cg_enforcer *c;

        if (!e || e->ops != &knobs_ops)
                return;
        c = e->data;
        c->resolve = fn;
        c->resolve_data = data;
}

static int cg_new(const ncm_enforcer_cgroup_options *o, bool record, ncm_enforcer **ret,
                  ncm_error *err)
{
        cg_enforcer *e = calloc(1, sizeof(*e));
        int r = 0;

        if (!e)
                return oom(err);
        e->record = record;
        e->rootfd = -1;
        e->sysfd = -1;
        e->mount_root = strdup(o && o->mount_root ? o->mount_root : "/sys/fs/cgroup");
        e->sys_root = strdup(o && o->sys_root ? o->sys_root : "/");
        e->undo = ncm_cgroup_undo_new();
        e->machine_undo = ncm_cgroup_undo_new();
        if (!e->mount_root || !e->sys_root || !e->undo || !e->machine_undo)
                r = oom(err);
        if (r >= 0 && !record) {
                e->sysfd = ncm_fs_open_root(e->sys_root, err);
                if (e->sysfd < 0)
                        r = e->sysfd;
        }
        if (r >= 0 && o) {
                e->version = o->cgroup_version;
                if (o->exec)
                        e->exec = *o->exec;
                if (o->capacity) {
                        e->has_capacity = true;
                        for (size_t i = 0; i < o->capacity->n && r >= 0; i++)
                                if (ncm_cgroup_resource_list_set(
                                                    &e->capacity, o->capacity->items[i].name,
                                                    &o->capacity->items[i].quantity) < 0)
                                        r = oom(err);
                }
        }
        if (r >= 0 && e->version != 0 && e->version != 1 && e->version != 2)
                r = ncm_error_set(err, EINVAL, "cgroup version %d: expected 1 or 2", e->version);
        if (r >= 0 && ncm_enforcer_new(record ? &plan_ops : &cgroupfs_ops, e, ret) < 0)
                r = oom(err);
        if (r < 0)
                cg_free(e);
        return r;
}

int ncm_enforcer_cgroupfs_new(const ncm_enforcer_cgroup_options *o, ncm_enforcer **ret,
                              ncm_error *err)
{
        return cg_new(o, false, ret, err);
}

int ncm_enforcer_plan_new(const ncm_enforcer_cgroup_options *o, ncm_enforcer **ret, ncm_error *err)
{
        return cg_new(o, true, ret, err);
}

const ncm_cgroup_plan *ncm_enforcer_plan_get(const ncm_enforcer *e)
{
        if (e->ops != &plan_ops)
                return NULL;
        return &((const cg_enforcer *)e->data)->done;
}

const ncm_cgroup_plan *ncm_enforcer_plan_machine_get(const ncm_enforcer *e)
{
        if (e->ops != &plan_ops)
                return NULL;
        return &((const cg_enforcer *)e->data)->done_machine;
}
