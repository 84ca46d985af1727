/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cgroup manager: the kubelet's node allocatable, QoS and pod cgroups composed into plans
 * (container_manager_linux.go setupNode, qos_container_manager_linux.go UpdateCgroups,
 * pod_container_manager_linux.go EnsureExists/Destroy), and their application.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/cgroups.h>
#include <nodecm/fs.h>

int ncm_cgroup_manager_init(ncm_cgroup_manager *m, const ncm_cgroup_layout *layout,
                            const ncm_cgroup_naming_ops *naming, const char *cgroup_root,
                            const ncm_cgroup_pod_options *options, int rootfd, ncm_error *err)
{
        ncm_cgroup_name probe = NCM_CGROUP_NAME_INIT;
        int r;

        memset(m, 0, sizeof(*m));
        if (!cgroup_root)
                cgroup_root = "/";
        if (strlen(cgroup_root) >= sizeof(m->cgroup_root))
                return ncm_error_set(err, ENAMETOOLONG, "cgroupRoot '%s': too long", cgroup_root);
        /* Refuse a root the kubelet could not name (it would panic). */
        r = ncm_cgroup_qos_names(cgroup_root, true, &probe, NULL, NULL, err);
        if (r < 0)
                return ncm_error_prefix(err, "cgroupRoot '%s'", cgroup_root);
        ncm_cgroup_name_done(&probe);
        m->layout = *layout;
        m->ops = ncm_cgroup_ops_for(layout);
        m->naming = naming;
        snprintf(m->cgroup_root, sizeof(m->cgroup_root), "%s", cgroup_root);
        if (options)
                m->options = *options;
        else
                ncm_cgroup_pod_options_init(&m->options);
        ncm_cgroup_resources_init(&m->kubepods);
        m->rootfd = rootfd;
        return 0;
}

void ncm_cgroup_manager_done(ncm_cgroup_manager *m)
{
        ncm_cgroup_resources_done(&m->kubepods);
        m->has_kubepods = false;
}

int ncm_cgroup_manager_set_kubepods(ncm_cgroup_manager *m, const ncm_cgroup_resources *kubepods,
                                    ncm_error *err)
{
        ncm_cgroup_resources copy;

        if (ncm_cgroup_resources_copy(&copy, kubepods) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        ncm_cgroup_resources_done(&m->kubepods);
        m->kubepods = copy;
        m->has_kubepods = true;
        return 0;
}

int ncm_cgroup_manager_path(const ncm_cgroup_manager *m, const ncm_cgroup_name *name, char **ret,
                            ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT;
        int r = m->naming->to_path(name, &b, err);

        if (r < 0) {
                ncm_buf_done(&b);
                return r;
        }
        if (ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        *ret = ncm_buf_steal(&b);
        return *ret ? 0 : ncm_error_set(err, ENOMEM, "out of memory");
}

/* Start a step for cgroup NAME and plan its creation/update with RES. */
static int plan_cgroup(const ncm_cgroup_manager *m, ncm_cgroup_plan *plan, const char *title,
                       const char *path, const ncm_cgroup_resources *res, bool create,
                       ncm_error *err)
{
        if (ncm_cgroup_plan_step(plan, title, path) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        return m->ops->plan_set(&m->layout, path, res, create, plan, err);
}

typedef struct names {
        ncm_cgroup_name kubepods, burstable, besteffort;
        char *kubepods_path, *burstable_path, *besteffort_path;
} names;

static void names_done(names *n)
{
        ncm_cgroup_name_done(&n->kubepods);
        ncm_cgroup_name_done(&n->burstable);
        ncm_cgroup_name_done(&n->besteffort);
        free(n->kubepods_path);
        free(n->burstable_path);
        free(n->besteffort_path);
        memset(n, 0, sizeof(*n));
}

static int get_names(const ncm_cgroup_manager *m, names *n, ncm_error *err)
{
        int r;

        memset(n, 0, sizeof(*n));
        r = ncm_cgroup_qos_names(m->cgroup_root, true, &n->kubepods, &n->burstable, &n->besteffort,
                                 err);
        if (r >= 0)
                r = ncm_cgroup_manager_path(m, &n->kubepods, &n->kubepods_path, err);
        if (r >= 0)
                r = ncm_cgroup_manager_path(m, &n->burstable, &n->burstable_path, err);
        if (r >= 0)
                r = ncm_cgroup_manager_path(m, &n->besteffort, &n->besteffort_path, err);
        if (r < 0)
                names_done(n);
        return r;
}

static int pod_path(const ncm_cgroup_manager *m, const char *uid, ncm_qos_class qos, char **ret,
                    ncm_error *err)
{
        ncm_cgroup_name name = NCM_CGROUP_NAME_INIT;
        int r = ncm_cgroup_pod_name(m->cgroup_root, true, qos, uid, &name, err);

        if (r < 0)
                return r;
        r = ncm_cgroup_manager_path(m, &name, ret, err);
        ncm_cgroup_name_done(&name);
        return r;
}

static int container_path(const ncm_cgroup_manager *m, const char *pod, const char *container,
                          char **ret, ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT;
        int r = m->naming->container_path(pod, container, &b, err);

        if (r >= 0 && ncm_buf_failed(&b))
                r = ncm_error_set(err, ENOMEM, "out of memory");
        if (r < 0) {
                ncm_buf_done(&b);
                return r;
        }
        *ret = ncm_buf_steal(&b);
        return *ret ? 0 : ncm_error_set(err, ENOMEM, "out of memory");
}

/* The burstable tier alone (after a pod is gone). */
static int plan_burstable(const ncm_cgroup_manager *m, const names *n,
                          const ncm_cgroup_qos_usage *u, ncm_cgroup_plan *plan, ncm_error *err)
{
        ncm_cgroup_qos_configs c;
        int r = ncm_cgroup_qos_tier_configs(u, &m->layout, &m->options, &c, err);

        if (r < 0)
                return r;
        r = plan_cgroup(m, plan, "burstable (QoS tier)", n->burstable_path, &c.burstable, false,
                        err);
        ncm_cgroup_qos_configs_done(&c);
        return r;
}

/*
 * kubepods, then the burstable and besteffort tiers (UpdateQOSCgroups runs before a pod
 * cgroup is made). kubepods is also the Guaranteed tier: the kubelet first gives it the node
 * allocatable hugetlb limits and the QoS manager then lifts them to 1<<62 on every pod sync;
 * nodecm writes the final value only, so that re-applying never lowers a hugetlb limit under
 * the pods' use for a moment.
 */
/*
 * What a pod's admission or removal changes in the tiers: the Burstable tier's CPU weight and
 * the memory protections of MemoryQoS (which count the pods' requests). The rest of the tiers
 * (unbounded hugetlb, the best-effort weight, node allocatable on kubepods) is fixed at start:
 * written again for every pod, it would be the same start-up writes each time.
 */
static int plan_tiers_of_pods(const ncm_cgroup_manager *m, const names *n,
                              const ncm_cgroup_qos_usage *u, ncm_cgroup_plan *plan, ncm_error *err)
{
        ncm_cgroup_qos_configs c;
        ncm_cgroup_resources kp, bu;
        int r = ncm_cgroup_qos_tier_configs(u, &m->layout, &m->options, &c, err);

        if (r < 0)
                return r;
        ncm_cgroup_resources_init(&kp);
        ncm_cgroup_resources_init(&bu);
        kp.has_memory_min = c.guaranteed.has_memory_min;
        kp.memory_min = c.guaranteed.memory_min;
        bu.has_cpu_shares = c.burstable.has_cpu_shares;
        bu.cpu_shares = c.burstable.cpu_shares;
        bu.has_memory_low = c.burstable.has_memory_low;
        bu.memory_low = c.burstable.memory_low;
        if (kp.has_memory_min)
                r = plan_cgroup(m, plan, "kubepods (Guaranteed QoS tier)", n->kubepods_path, &kp,
                                false, err);
        if (r >= 0)
                r = plan_cgroup(m, plan, "burstable (QoS tier)", n->burstable_path, &bu, false,
                                err);
        ncm_cgroup_resources_done(&kp);
        ncm_cgroup_resources_done(&bu);
        ncm_cgroup_qos_configs_done(&c);
        return r;
}

static int plan_node_and_tiers(const ncm_cgroup_manager *m, const names *n,
                               const ncm_cgroup_qos_usage *u, ncm_cgroup_plan *plan, ncm_error *err)
{
        ncm_cgroup_qos_configs c;
        ncm_cgroup_resources kp;
        int r = ncm_cgroup_qos_tier_configs(u, &m->layout, &m->options, &c, err);

        if (r < 0)
                return r;
        if (ncm_cgroup_resources_copy(&kp, m->has_kubepods ? &m->kubepods : &c.guaranteed) < 0) {
                ncm_cgroup_qos_configs_done(&c);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        kp.has_hugepages = c.guaranteed.has_hugepages;
        kp.n_hugepages = c.guaranteed.n_hugepages;
        memcpy(kp.hugepages, c.guaranteed.hugepages, sizeof(kp.hugepages));
        if (c.guaranteed.has_memory_min) {
                kp.has_memory_min = true;
                kp.memory_min = c.guaranteed.memory_min;
        }
        r = plan_cgroup(m, plan, "kubepods (node allocatable, Guaranteed QoS tier)",
                        n->kubepods_path, &kp, true, err);
        if (r >= 0)
                r = plan_cgroup(m, plan, "burstable (QoS tier)", n->burstable_path, &c.burstable,
                                true, err);
        if (r >= 0)
                r = plan_cgroup(m, plan, "besteffort (QoS tier)", n->besteffort_path, &c.besteffort,
                                true, err);
        ncm_cgroup_resources_done(&kp);
        ncm_cgroup_qos_configs_done(&c);
        return r;
}

/* The containers that get a cgroup: sidecars in start order, then app containers. */
static const ncm_container *nth_container(const ncm_pod *pod, size_t i)
{
        for (size_t k = 0; k < pod->n_init_containers; k++)
                if (pod->init_containers[k].sidecar && i-- == 0)
                        return &pod->init_containers[k];
        return i < pod->n_containers ? &pod->containers[i] : NULL;
}

static const ncm_cgroup_container_cpus *cpus_for(const ncm_cgroup_container_cpus *cpus, size_t n,
                                                 const char *container)
{
        const ncm_cgroup_container_cpus *all = NULL;

        for (size_t i = 0; i < n; i++) {
                if (cpus[i].container && strcmp(cpus[i].container, container) == 0)
                        return &cpus[i];
                if (!cpus[i].container)
                        all = &cpus[i];
        }
        return all;
}

static int check_cpus(const ncm_pod *pod, const ncm_cgroup_container_cpus *cpus, size_t n,
                      ncm_error *err)
{
        for (size_t i = 0; i < n; i++) {
                const ncm_container *c;
                if (!cpus[i].container)
                        continue;
                c = ncm_pod_find_container(pod, cpus[i].container);
                if (!c || (c->init && !c->sidecar))
                        return ncm_error_set(err, EINVAL,
                                             "pod '%s' has no long-running container '%s'",
                                             pod->uid, cpus[i].container);
        }
        return 0;
}

int ncm_cgroup_manager_plan_pod(const ncm_cgroup_manager *m, const ncm_pod *pod,
                                const ncm_cgroup_qos_usage *usage,
                                const ncm_cgroup_container_cpus *cpus, size_t n_cpus,
                                const ncm_cpuset *mems, unsigned flags, ncm_cgroup_plan *plan,
                                ncm_error *err)
{
        ncm_cgroup_qos_usage u = {0, 0, 0};
        ncm_cgroup_resources res;
        ncm_autofree char *ppath = NULL;
        names n;
        char title[512];
        int r;

        snprintf(plan->display_root, sizeof(plan->display_root), "%s", m->layout.display_root);
        r = check_cpus(pod, cpus, n_cpus, err);
        if (r < 0)
                return r;
        r = get_names(m, &n, err);
        if (r < 0)
                return r;
        if (usage)
                u = *usage;
        r = ncm_cgroup_qos_usage_add_pod(&u, pod, err);

        if (r >= 0 && !(flags & NCM_CGROUP_PLAN_POD_ONLY))
                r = flags & NCM_CGROUP_PLAN_STARTED ? plan_tiers_of_pods(m, &n, &u, plan, err)
                                                    : plan_node_and_tiers(m, &n, &u, plan, err);
        if (r >= 0)
                r = pod_path(m, pod->uid, pod->qos, &ppath, err);
        if (r >= 0)
                r = ncm_cgroup_config_for_pod(pod, &m->options, &res, err);
        if (r >= 0) {
                snprintf(title, sizeof(title), "pod %s (%s)", pod->uid,
                         ncm_qos_class_name(pod->qos));
                r = plan_cgroup(m, plan, title, ppath, &res, true, err);
                ncm_cgroup_resources_done(&res);
        }
        for (size_t i = 0; r >= 0 && !(flags & NCM_CGROUP_PLAN_NO_CONTAINERS); i++) {
                const ncm_container *c = nth_container(pod, i);
                const ncm_cgroup_container_cpus *cc;
                ncm_autofree char *cpath = NULL;
                if (!c)
                        break;
                r = container_path(m, ppath, c->name, &cpath, err);
                if (r < 0)
                        break;
                cc = cpus_for(cpus, n_cpus, c->name);
                r = ncm_cgroup_config_for_container(pod, c, &m->options, cc ? cc->cpus : NULL,
                                                    cc && cc->mems ? cc->mems : mems, &res, err);
                if (r < 0)
                        break;
                snprintf(title, sizeof(title), "%s %s (written by the runtime from CRI)",
                         c->sidecar ? "sidecar" : "container", c->name);
                r = plan_cgroup(m, plan, title, cpath, &res, true, err);
                ncm_cgroup_resources_done(&res);
        }
        names_done(&n);
        return r;
}

int ncm_cgroup_manager_plan_remove_pod(const ncm_cgroup_manager *m, const ncm_pod *pod,
                                       const ncm_cgroup_qos_usage *usage, ncm_cgroup_plan *plan,
                                       ncm_error *err)
{
        ncm_cgroup_qos_usage u = {0, 0, 0};
        ncm_autofree char *ppath = NULL;
        names n;
        char title[512];
        int r;

        snprintf(plan->display_root, sizeof(plan->display_root), "%s", m->layout.display_root);
        r = pod_path(m, pod->uid, pod->qos, &ppath, err);
        if (r < 0)
                return r;
        snprintf(title, sizeof(title), "pod %s (%s): remove", pod->uid,
                 ncm_qos_class_name(pod->qos));
        if (ncm_cgroup_plan_step(plan, title, ppath) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = m->ops->plan_remove(&m->layout, ppath, plan, err);
        if (r < 0 || pod->qos != NCM_QOS_BURSTABLE)
                return r;
        /* The burstable tier no longer counts this pod. */
        r = get_names(m, &n, err);
        if (r < 0)
                return r;
        if (usage)
                u = *usage;
        r = plan_burstable(m, &n, &u, plan, err);
        names_done(&n);
        return r;
}

int ncm_cgroup_manager_plan_node(const ncm_cgroup_manager *m, unsigned enforce,
                                 const char *kube_cgroup, const ncm_resource_list *kube,
                                 const char *system_cgroup, const ncm_resource_list *system,
                                 const ncm_cpuset *all_cpus, ncm_cgroup_plan *plan, ncm_error *err)
{
        static const struct {
                unsigned full, compressible;
                const char *what;
        } targets[] = {
                        {NCM_ENFORCE_SYSTEM_RESERVED, NCM_ENFORCE_SYSTEM_RESERVED_COMPRESSIBLE,
                         "system reserved"},
                        {NCM_ENFORCE_KUBE_RESERVED, NCM_ENFORCE_KUBE_RESERVED_COMPRESSIBLE,
                         "kube reserved"},
        };
        names n;
        int r;

        snprintf(plan->display_root, sizeof(plan->display_root), "%s", m->layout.display_root);
        r = get_names(m, &n, err);
        if (r < 0)
                return r;
        r = plan_cgroup(m, plan, "kubepods (node allocatable)", n.kubepods_path,
                        m->has_kubepods ? &m->kubepods : NULL, true, err);
        names_done(&n);
        /* enforceNodeAllocatableCgroups: system reserved first, then kube reserved. */
        for (size_t i = 0; r >= 0 && i < NCM_ELEMENTSOF(targets); i++) {
                bool compressible = enforce & targets[i].compressible;
                const char *cg = i == 0 ? system_cgroup : kube_cgroup;
                const ncm_resource_list *rl = i == 0 ? system : kube;
                ncm_cgroup_name name = NCM_CGROUP_NAME_INIT;
                ncm_autofree char *path = NULL;
                ncm_cgroup_resources res;
                char title[256];
                if (!(enforce & (targets[i].full | targets[i].compressible)))
                        continue;
                /* The flag is in the driver's own form: read it back into a name. */
                r = m->naming->from_path(cg, &name, err);
                if (r >= 0)
                        r = ncm_cgroup_manager_path(m, &name, &path, err);
                ncm_cgroup_name_done(&name);
                if (r < 0)
                        break;
                r = ncm_cgroup_config_for_resource_list(rl, compressible, all_cpus, &res, err);
                if (r < 0) {
                        ncm_error_set(err, EINVAL, "\"%s\" cgroup is not configured properly", cg);
                        break;
                }
                if (m->options.memory_qos == NCM_CGROUP_MEMORY_QOS_TIERED && res.has_memory &&
                    ncm_cgroup_layout_version(&m->layout) == 2) {
                        res.has_memory_min = true;
                        res.memory_min = res.memory;
                }
                snprintf(title, sizeof(title), "%s%s (must exist)", targets[i].what,
                         compressible ? " compressible" : "");
                r = plan_cgroup(m, plan, title, path, &res, false, err);
                ncm_cgroup_resources_done(&res);
        }
        return r;
}

static int read_shares_milli(const ncm_cgroup_manager *m, const char *path, int64_t *ret,
                             ncm_error *err)
{
        ncm_cgroup_resources res;
        int r = m->ops->read(&m->layout, m->rootfd, path, &res, err);

        if (r < 0)
                return r;
        *ret = res.has_cpu_shares ? ncm_cgroup_shares_to_millicpu((int64_t)res.cpu_shares) : 0;
        ncm_cgroup_resources_done(&res);
        return 0;
}

int ncm_cgroup_manager_read_usage(const ncm_cgroup_manager *m, const char *exclude_uid,
                                  ncm_cgroup_qos_usage *ret, ncm_error *err)
{
        ncm_cgroup_qos_usage u = {0, 0, 0};
        char **children = NULL;
        names n;
        int r = get_names(m, &n, err);

        if (r < 0)
                return r;
        r = ncm_cgroup_children(&m->layout, m->rootfd, n.burstable_path, &children, err);
        for (char **c = children; r >= 0 && c && *c; c++) {
                ncm_cgroup_name name = NCM_CGROUP_NAME_INIT;
                const char *last;
                char path[4096];
                int64_t milli = 0;
                snprintf(path, sizeof(path), "%s/%s", n.burstable_path, *c);
                if (m->naming->from_path(path, &name, NULL) < 0)
                        continue;
                last = name.n ? name.parts[name.n - 1] : "";
                if (strncmp(last, NCM_CGROUP_POD_PREFIX, strlen(NCM_CGROUP_POD_PREFIX)) != 0 ||
                    (exclude_uid &&
                     strcmp(last + strlen(NCM_CGROUP_POD_PREFIX), exclude_uid) == 0)) {
                        ncm_cgroup_name_done(&name);
                        continue;
                }
                ncm_cgroup_name_done(&name);
                r = read_shares_milli(m, path, &milli, err);
                if (r >= 0 &&
                    __builtin_add_overflow(u.burstable_cpu_milli, milli, &u.burstable_cpu_milli))
                        u.burstable_cpu_milli = INT64_MAX;
        }
        ncm_cgroup_strv_free(children);
        names_done(&n);
        if (r < 0)
                return r;
        *ret = u;
        return 0;
}

/* The leaves of the pod's container cgroups, as the naming driver makes them. */
static bool is_container_leaf(const ncm_cgroup_manager *m, const ncm_pod *pod, const char *ppath,
                              const char *leaf)
{
        for (size_t i = 0;; i++) {
                const ncm_container *c = nth_container(pod, i);
                ncm_autofree char *cpath = NULL;
                const char *base;
                if (!c)
                        return false;
                if (container_path(m, ppath, c->name, &cpath, NULL) < 0)
                        continue;
                base = strrchr(cpath, '/');
                if (base && strcmp(base + 1, leaf) == 0)
                        return true;
        }
}

/*
 * Apply PLAN. A kernel that refuses a write is not bad input: the failure becomes
 * NCM_E_ENFORCEMENT (exit status 1), its message naming the path and saying that what was
 * changed before it was undone (or what could not be).
 */
static int apply_plan(const ncm_cgroup_manager *m, const ncm_cgroup_plan *plan, ncm_error *err)
{
        int r = ncm_cgroup_plan_apply(plan, m->rootfd, &m->exec, err);
        char msg[NCM_ERROR_MSG_MAX];

        if (r >= 0 || r == -ENOMEM || !err)
                return r;
        memcpy(msg, err->msg, sizeof(msg));
        if (!strstr(msg, "undo incomplete"))
                return ncm_error_set(err, NCM_E_ENFORCEMENT, "%.*s (every change undone)",
                                     (int)(sizeof(msg) - 24), msg);
        return ncm_error_set(err, NCM_E_ENFORCEMENT, "%s", msg);
}

static int check_root(const ncm_cgroup_manager *m, ncm_error *err)
{
        ncm_cgroup_name root = NCM_CGROUP_NAME_INIT;
        ncm_buf path = NCM_BUF_INIT;
        int r;

        if (strcmp(m->cgroup_root, "/") == 0)
                return 0;
        /* The root is given in cgroupfs form and checked without name conversion. */
        r = ncm_cgroup_naming_cgroupfs.from_path(m->cgroup_root, &root, err);
        if (r >= 0)
                r = ncm_cgroup_naming_cgroupfs.to_path(&root, &path, err);
        ncm_cgroup_name_done(&root);
        if (r >= 0 && ncm_buf_failed(&path))
                r = ncm_error_set(err, ENOMEM, "out of memory");
        if (r >= 0)
                r = m->ops->exists(&m->layout, m->rootfd, path.data, err);
        ncm_buf_done(&path);
        if (r == 0)
                r = ncm_error_prefix(err, "invalid configuration");
        return r < 0 ? r : 0;
}

int ncm_cgroup_manager_apply_pod(const ncm_cgroup_manager *m, const ncm_pod *pod,
                                 const ncm_cgroup_container_cpus *cpus, size_t n_cpus,
                                 const ncm_cpuset *mems, unsigned flags, ncm_error *err)
{
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        ncm_cgroup_qos_usage u = {0, 0, 0};
        ncm_autofree char *ppath = NULL;
        char **children = NULL;
        int r;

        if (m->rootfd < 0)
                return ncm_error_set(err, EBADF, "no cgroup root to apply to");
        r = check_root(m, err);
        if (r < 0)
                return r;
        r = pod_path(m, pod->uid, pod->qos, &ppath, err);
        if (r < 0)
                return r;
        /* Someone else's cgroup under our name: change nothing. */
        r = ncm_cgroup_children(&m->layout, m->rootfd, ppath, &children, err);
        for (char **c = children; r >= 0 && c && *c; c++)
                if (!is_container_leaf(m, pod, ppath, *c))
                        r = ncm_error_set(err, NCM_E_INVALID_STATE,
                                          "pod cgroup '%s' already holds the cgroup '%s', which "
                                          "is not one of the pod's containers; refusing to "
                                          "change it",
                                          ppath, *c);
        ncm_cgroup_strv_free(children);
        if (r < 0)
                return r;
        if (!(flags & NCM_CGROUP_PLAN_POD_ONLY)) {
                r = ncm_cgroup_manager_read_usage(m, pod->uid, &u, err);
                if (r < 0)
                        return r;
        }
        r = ncm_cgroup_manager_plan_pod(m, pod, &u, cpus, n_cpus, mems, flags, &plan, err);
        if (r >= 0)
                r = apply_plan(m, &plan, err);
        ncm_cgroup_plan_done(&plan);
        return r;
}

int ncm_cgroup_manager_remove_pod(const ncm_cgroup_manager *m, const ncm_pod *pod, ncm_error *err)
{
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        ncm_cgroup_qos_usage u = {0, 0, 0};
        ncm_autofree char *ppath = NULL;
        int pids[64];
        size_t npids = 0;
        int r;

        if (m->rootfd < 0)
                return ncm_error_set(err, EBADF, "no cgroup root to apply to");
        r = pod_path(m, pod->uid, pod->qos, &ppath, err);
        if (r < 0)
                return r;
        r = ncm_cgroup_pids(&m->layout, m->rootfd, ppath, pids, NCM_ELEMENTSOF(pids), &npids, err);
        if (r < 0)
                return r;
        if (npids > 0) {
                if (pids[0] > 0)
                        return ncm_error_set(err, NCM_E_INVALID_STATE,
                                             "pod cgroup '%s' still has %zu process(es) (pid "
                                             "%d); stop them first",
                                             ppath, npids, pids[0]);
                return ncm_error_set(err, NCM_E_INVALID_STATE,
                                     "pod cgroup '%s' still has processes; stop them first", ppath);
        }
        if (pod->qos == NCM_QOS_BURSTABLE) {
                r = ncm_cgroup_manager_read_usage(m, pod->uid, &u, err);
                if (r < 0)
                        return r;
        }
        r = ncm_cgroup_manager_plan_remove_pod(m, pod, &u, &plan, err);
        if (r >= 0)
                r = apply_plan(m, &plan, err);
        ncm_cgroup_plan_done(&plan);
        return r;
}

int ncm_cgroup_manager_container_path(const ncm_cgroup_manager *m, const char *pod_uid,
                                      ncm_qos_class qos, const char *container_leaf, char **ret,
                                      ncm_error *err)
{
        ncm_autofree char *ppath = NULL;
        int r = pod_path(m, pod_uid, qos, &ppath, err);

        if (r >= 0 && !container_leaf)
                *ret = NCM_TAKE_PTR(ppath);
        else if (r >= 0)
                r = container_path(m, ppath, container_leaf, ret, err);
        return r;
}

int ncm_cgroup_manager_plan_container_cpuset(const ncm_cgroup_manager *m, const char *pod_uid,
                                             ncm_qos_class qos, const char *container_leaf,
                                             const ncm_cpuset *cpus, const ncm_cpuset *mems,
                                             ncm_cgroup_plan *plan, ncm_error *err)
{
        ncm_autofree char *cpath = NULL;
        ncm_cgroup_resources res;
        char title[512];
        int r;

        r = ncm_cgroup_manager_container_path(m, pod_uid, qos, container_leaf, &cpath, err);
        if (r < 0)
                return r;
        ncm_cgroup_resources_init(&res);
        if (ncm_cgroup_resources_set_cpuset(&res, cpus, mems) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        snprintf(plan->display_root, sizeof(plan->display_root), "%s", m->layout.display_root);
        snprintf(title, sizeof(title), "container %s cpuset", container_leaf);
        r = plan_cgroup(m, plan, title, cpath, &res, false, err);
        ncm_cgroup_resources_done(&res);
        return r;
}

int ncm_cgroup_manager_plan_container_resources(const ncm_cgroup_manager *m, const char *pod_uid,
                                                ncm_qos_class qos, const char *container_leaf,
                                                const ncm_cgroup_resources *res,
                                                ncm_cgroup_plan *plan, ncm_error *err)
{
        ncm_autofree char *cpath = NULL;
        char title[512];
        int r;

        r = ncm_cgroup_manager_container_path(m, pod_uid, qos, container_leaf, &cpath, err);
        if (r < 0)
                return r;
        snprintf(plan->display_root, sizeof(plan->display_root), "%s", m->layout.display_root);
        snprintf(title, sizeof(title), "container %s (resized)", container_leaf);
        return plan_cgroup(m, plan, title, cpath, res, false, err);
}

int ncm_cgroup_manager_plan_start(const ncm_cgroup_manager *m, const ncm_cgroup_qos_usage *usage,
                                  ncm_cgroup_plan *plan, ncm_error *err)
{
        ncm_cgroup_qos_usage u = {0, 0, 0};
        names n;
        int r;

        snprintf(plan->display_root, sizeof(plan->display_root), "%s", m->layout.display_root);
        if (usage)
                u = *usage;
        r = get_names(m, &n, err);
        if (r < 0)
                return r;
        r = plan_node_and_tiers(m, &n, &u, plan, err);
        names_done(&n);
        return r;
}

int ncm_cgroup_manager_check_root(const ncm_cgroup_manager *m, ncm_error *err)
{
        return check_root(m, err);
}

int ncm_cgroup_manager_set_container_cpuset(const ncm_cgroup_manager *m, const char *pod_uid,
                                            ncm_qos_class qos, const char *container_leaf,
                                            const ncm_cpuset *cpus, const ncm_cpuset *mems,
                                            ncm_error *err)
{
        ncm_cgroup_plan plan = NCM_CGROUP_PLAN_INIT;
        ncm_cgroup_resources res;
        ncm_autofree char *ppath = NULL;
        ncm_autofree char *cpath = NULL;
        const ncm_cgroup_hierarchy *h;
        char dir[4096];
        int r;

        if (m->rootfd < 0)
                return ncm_error_set(err, EBADF, "no cgroup root to apply to");
        r = pod_path(m, pod_uid, qos, &ppath, err);
        if (r >= 0)
                r = container_path(m, ppath, container_leaf, &cpath, err);
        if (r < 0)
                return r;
        h = ncm_cgroup_layout_find(&m->layout, NCM_CGROUP_CTRL_CPUSET);
        if (!h)
                return ncm_error_set(err, ENOENT, "%s: no cpuset controller",
                                     m->layout.display_root);
        if ((size_t)snprintf(dir, sizeof(dir), "%s%s", h->dir, cpath) >= sizeof(dir))
                return ncm_error_set(err, ENAMETOOLONG, "'%s': path too long", cpath);
        r = ncm_fs_exists(m->rootfd, dir);
        if (r <= 0)
                return ncm_error_set(err, ENOENT, "container cgroup '%s%s' does not exist",
                                     m->layout.display_root, dir);
        {
                /* the CPUs the container's parent has: a cpuset outside them cannot be set */
                char parent[4096 + 32], buf[16384];
                const char *slash = strrchr(dir, '/');
                ncm_autoptr(ncm_cpuset) have = NULL;
                ssize_t n;
                snprintf(parent, sizeof(parent), "%.*s/%s", (int)(slash - dir), dir,
                         ncm_cgroup_layout_version(&m->layout) == 2 ? "cpuset.cpus.effective"
                                                                    : "cpuset.cpus");
                n = ncm_fs_read(m->rootfd, parent, buf, sizeof(buf), NULL);
                if (n >= 0 && cpus && ncm_cpuset_parse_sysfs_list(buf, &have, NULL) >= 0 &&
                    !ncm_cpuset_is_subset(cpus, have)) {
                        ncm_autoptr(ncm_cpuset) out = ncm_cpuset_new();
                        ncm_autofree char *o = NULL, *hs = NULL;
                        if (!out)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        ncm_cpuset_andnot(out, cpus, have);
                        o = ncm_cpuset_format_list(out);
                        hs = ncm_cpuset_format_list(have);
                        return ncm_error_set(err, EINVAL,
                                             "CPUs %s are not in the cpuset of the pod cgroup "
                                             "('%s%s': %s)",
                                             o ? o : "?", m->layout.display_root, parent,
                                             hs && hs[0] ? hs : "empty");
                }
        }
        ncm_cgroup_resources_init(&res);
        if (ncm_cgroup_resources_set_cpuset(&res, cpus, mems) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        snprintf(plan.display_root, sizeof(plan.display_root), "%s", m->layout.display_root);
        r = plan_cgroup(m, &plan, "container cpuset", cpath, &res, false, err);
        ncm_cgroup_resources_done(&res);
        if (r >= 0)
                r = apply_plan(m, &plan, err);
        ncm_cgroup_plan_done(&plan);
        return r;
}
