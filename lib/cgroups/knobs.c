/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRI-O's runtime-class knobs as plans (nodecm/cgroup-knobs.h): cgroups here, interrupts in
 * knobs-irq.c. Every call converges: it reads what the files hold, plans only the writes that
 * differ from what the containers ask (so a reconcile counts exactly what was off), and
 * restores, from the memo, what no container asks any more. With no root fd (the plan
 * enforcer) it plans every write the containers ask and restores nothing.
 *
 * Orders, as CRI-O's high-performance hooks write them: v1 writes the container's
 * sched_load_balance before its ancestors', innermost first; v2 removes CPUs from
 * cpuset.cpus.exclusive bottom-up and adds them top-down (a child's exclusive CPUs must stay
 * within its parent's), widens an ancestor's cpuset.cpus before it takes exclusive CPUs, and
 * makes the container a partition last. A partition the node made whose container is no longer
 * asked for (a removal, or a crash before it) is undone first: "member", then its exclusive
 * CPUs emptied, so that its ancestors can give them back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroup-knobs.h>
#include <nodecm/fs.h>
#include "base/array.h"

static const char *const knob_annotations[NCM_KNOB_N] = {
                "cpu-load-balancing.crio.io",
                "cpu-quota.crio.io",
                "irq-load-balancing.crio.io",
};

static const char *const knob_names[NCM_KNOB_N] = {"cpu-load-balancing", "cpu-quota",
                                                   "irq-load-balancing"};

static int knob_index(unsigned knob)
{
        for (int i = 0; i < NCM_KNOB_N; i++)
                if (knob == 1u << i)
                        return i;
        return -1;
}

const char *ncm_knob_annotation(unsigned knob)
{
        int i = knob_index(knob);
        return i < 0 ? NULL : knob_annotations[i];
}

const char *ncm_knob_name(unsigned knob)
{
        int i = knob_index(knob);
        return i < 0 ? NULL : knob_names[i];
}

static const char *const fix_names[NCM_KNOB_FIX_N] = {
                [NCM_KNOB_FIX_SCHED_LOAD_BALANCE] = "sched_load_balance",
                [NCM_KNOB_FIX_PARTITION] = "partition",
                [NCM_KNOB_FIX_CPU_QUOTA] = "cpu_quota",
                [NCM_KNOB_FIX_IRQ_AFFINITY] = "irq_affinity",
                [NCM_KNOB_FIX_IRQBALANCE] = "irqbalance",
};

const char *ncm_knob_fix_name(ncm_knob_fix f)
{
        return (unsigned)f < NCM_KNOB_FIX_N ? fix_names[f] : NULL;
}

/* ---- helpers ---- */

typedef struct kplan {
        const ncm_cgroup_layout *l;
        int rootfd;
        ncm_knob_memo *memo;
        ncm_cgroup_plan *plan;
        unsigned *fixed;
        ncm_error *err;
} kplan;

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* The first line of PATH (no newline); -ENOENT when missing. */
static int read_line(const kplan *k, const char *path, char *buf, size_t size)
{
        ssize_t n = ncm_fs_read(k->rootfd, path, buf, size, NULL);

        if (n < 0)
                return (int)n;
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

/* Plan writing VALUE to PATH (counting it under FIX), unless it holds it (CUR, when read). */
static int plan_write(const kplan *k, const char *title, const char *path, const char *value,
                      const char *cur, unsigned flags, ncm_knob_fix fix)
{
        if (cur && strcmp(cur, value) == 0)
                return 0;
        if (ncm_cgroup_plan_step(k->plan, title, path) < 0 ||
            ncm_cgroup_plan_add(k->plan, NCM_CGROUP_OP_WRITE, flags, path, value) < 0)
                return oom(k->err);
        if (k->fixed)
                k->fixed[fix]++;
        return 0;
}

/* The parent of cgroup PATH into BUF ("" for a top-level one); -EINVAL for "/" or "". */
static int parent_of(const char *path, char *buf, size_t size)
{
        const char *slash = strrchr(path, '/');
        size_t n;

        if (!slash || slash == path + strlen(path) - 1)
                return -EINVAL;
        n = (size_t)(slash - path);
        if (n >= size)
                return -ENAMETOOLONG;
        memcpy(buf, path, n);
        buf[n] = '\0';
        return 0;
}

/* Whether cgroup A is B or below it. */
static bool below_or_at(const char *a, const char *b)
{
        size_t n = strlen(b);
        return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/' || n == 0);
}

/* The ancestors of CGROUP from its parent up to TOP (TOP NULL: the parent only). */
typedef struct path_list {
        char **v;
        size_t n, cap;
} path_list;

static void paths_done(path_list *p)
{
        for (size_t i = 0; i < p->n; i++)
                free(p->v[i]);
        free(p->v);
        *p = (path_list){0};
}

static bool paths_has(const path_list *p, const char *s)
{
        for (size_t i = 0; i < p->n; i++)
                if (strcmp(p->v[i], s) == 0)
                        return true;
        return false;
}

static int paths_add(path_list *p, const char *s)
{
        char *c;

        if (paths_has(p, s))
                return 0;
        c = strdup(s);
        if (!c || ncm__array_grow(p->v, p->cap, p->n) < 0) {
                free(c);
                return -ENOMEM;
        }
        p->v[p->n++] = c;
        return 0;
}

static int ancestors(const ncm_knob_container *c, path_list *out)
{
        char cur[4096];

        if (parent_of(c->cgroup, cur, sizeof(cur)) < 0 || !*cur)
                return 0;
        for (;;) {
                char up[4096];
                if (paths_add(out, cur) < 0)
                        return -ENOMEM;
                if (!c->top || strcmp(cur, c->top) == 0 || !below_or_at(cur, c->top))
                        return 0;
                if (parent_of(cur, up, sizeof(up)) < 0 || !*up)
                        return 0;
                strcpy(cur, up);
        }
}

static int depth(const char *p)
{
        int d = 0;
        for (; *p; p++)
                d += *p == '/';
        return d;
}

static int cmp_deeper_first(const void *a, const void *b)
{
        const char *x = *(char *const *)a, *y = *(char *const *)b;
        int dx = depth(x), dy = depth(y);
        return dx != dy ? dy - dx : strcmp(x, y);
}

/* Does the cgroup DIR exist (always "yes" without a root fd)? */
static bool cg_exists(const kplan *k, const char *dir)
{
        return k->rootfd < 0 || ncm_fs_exists(k->rootfd, dir) > 0;
}

/* ---- cgroup v1: sched_load_balance ---- */

#define SLB_KEY "sched_load_balance:"

static int plan_v1_balance(const kplan *k, const ncm_knob_container *v, size_t n)
{
        const ncm_cgroup_hierarchy *h = ncm_cgroup_layout_find(k->l, NCM_CGROUP_CTRL_CPUSET);
        path_list anc = {0};
        char path[4400], cur[64];
        int r = 0;

        if (!h)
                return 0;
        /* the containers, then their ancestors */
        for (size_t i = 0; i < n && r >= 0; i++) {
                char dir[4160];
                if (!(v[i].knobs & NCM_KNOB_CPU_LOAD_BALANCING))
                        continue;
                snprintf(dir, sizeof(dir), "%s%s", h->dir, v[i].cgroup);
                if (!cg_exists(k, dir))
                        continue;
                snprintf(path, sizeof(path), "%s/cpuset.sched_load_balance", dir);
                if (k->rootfd >= 0 && (r = read_line(k, path, cur, sizeof(cur))) < 0) {
                        if (r == -ENOENT) { /* a cgroup going away */
                                r = 0;
                                continue;
                        }
                        r = ncm_error_errno(k->err, -r, "%s%s", k->l->display_root, path);
                        break;
                }
                r = plan_write(k, "cpu-load-balancing: container", path, "0",
                               k->rootfd >= 0 ? cur : NULL, 0, NCM_KNOB_FIX_SCHED_LOAD_BALANCE);
                if (r >= 0 && ancestors(&v[i], &anc) < 0)
                        r = oom(k->err);
        }
        if (r >= 0 && anc.n)
                qsort(anc.v, anc.n, sizeof(*anc.v), cmp_deeper_first);
        for (size_t i = 0; i < anc.n && r >= 0; i++) {
                char key[4500];
                snprintf(path, sizeof(path), "%s%s/cpuset.sched_load_balance", h->dir, anc.v[i]);
                snprintf(key, sizeof(key), SLB_KEY "%s", path);
                if (k->rootfd >= 0) {
                        r = read_line(k, path, cur, sizeof(cur));
                        if (r == -ENOENT) { /* gone, or not a cpuset cgroup */
                                r = 0;
                                continue;
                        }
                        if (r < 0) {
                                r = ncm_error_errno(k->err, -r, "%s%s", k->l->display_root, path);
                                break;
                        }
                        if (strcmp(cur, "0") != 0 && ncm_knob_memo_keep(k->memo, key, cur) < 0) {
                                r = oom(k->err);
                                break;
                        }
                }
                r = plan_write(k, "cpu-load-balancing: ancestor", path, "0",
                               k->rootfd >= 0 ? cur : NULL, 0, NCM_KNOB_FIX_SCHED_LOAD_BALANCE);
        }
        /* ancestors no container needs any more get their value back */
        for (size_t i = ncm_knob_memo_count(k->memo); i-- > 0 && r >= 0 && k->rootfd >= 0;) {
                const char *key = ncm_knob_memo_key(k->memo, i);
                const char *p = key + strlen(SLB_KEY);
                bool needed = false;
                if (strncmp(key, SLB_KEY, strlen(SLB_KEY)) != 0)
                        continue;
                for (size_t j = 0; j < anc.n && !needed; j++) {
                        snprintf(path, sizeof(path), "%s%s/cpuset.sched_load_balance", h->dir,
                                 anc.v[j]);
                        needed = strcmp(path, p) == 0;
                }
                if (needed)
                        continue;
                snprintf(path, sizeof(path), "%s", p);
                if (read_line(k, path, cur, sizeof(cur)) == 0)
                        r = plan_write(k, "cpu-load-balancing: restored", path,
                                       ncm_knob_memo_value(k->memo, i), cur, 0,
                                       NCM_KNOB_FIX_SCHED_LOAD_BALANCE);
                ncm_knob_memo_drop(k->memo, key);
        }
        paths_done(&anc);
        return r;
}

/* ---- cgroup v2: remote partitions ---- */

#define EXCL_KEY "cpus.exclusive:"
#define PART_KEY "partition:"

typedef struct excl {
        char *path; /* the cgroup */
        ncm_cpuset *cur, *want;
        bool container; /* a partition of ours */
} excl;

static int read_set(const kplan *k, const char *path, ncm_cpuset **ret)
{
        char buf[8192];
        int r = k->rootfd >= 0 ? read_line(k, path, buf, sizeof(buf)) : -ENOENT;

        if (r == -ENOENT)
                buf[0] = '\0';
        else if (r < 0)
                return r;
        return ncm_cpuset_parse_sysfs_list(buf, ret, NULL) < 0 ? -EINVAL : 0;
}

static int plan_set(const kplan *k, const char *title, const char *path, const ncm_cpuset *want,
                    const ncm_cpuset *cur, ncm_knob_fix fix)
{
        ncm_autofree char *list = ncm_cpuset_format_list(want);

        if (!list)
                return oom(k->err);
        if (cur && k->rootfd >= 0 && ncm_cpuset_equal(cur, want))
                return 0;
        /* the kernel takes an empty cpuset.cpus.exclusive only as a newline (CRI-O) */
        return plan_write(k, title, path, *list ? list : "\n", NULL, 0, fix);
}

static int plan_v2_partitions(const kplan *k, const ncm_knob_container *v, size_t n,
                              const ncm_cpuset *all)
{
        excl *e = NULL;
        size_t ne = 0, cap = 0;
        path_list anc = {0}, gone = {0};
        char path[4200];
        const char *top = NULL;
        int r = 0;

        for (size_t i = 0; i < n; i++)
                if ((v[i].knobs & NCM_KNOB_CPU_LOAD_BALANCING) && cg_exists(k, v[i].cgroup))
                        top = v[i].top ? v[i].top : top;
        /* remote partitions or nothing: the kernel's file says which (Linux 6.7) */
        for (size_t i = 0; i < n && k->rootfd >= 0; i++) {
                const char *where = v[i].top ? v[i].top : v[i].cgroup;
                if (!(v[i].knobs & NCM_KNOB_CPU_LOAD_BALANCING))
                        continue;
                snprintf(path, sizeof(path), "%s/cpuset.cpus.exclusive", where);
                if (ncm_fs_exists(k->rootfd, path) <= 0)
                        return ncm_error_set(k->err, EOPNOTSUPP,
                                             "cpu-load-balancing.crio.io: disable needs cgroup v2 "
                                             "remote partitions (cpuset.cpus.exclusive, Linux 6.7 "
                                             "or later): %s%s has no cpuset.cpus.exclusive",
                                             k->l->display_root, where);
        }
        (void)top;
        /* partitions of ours no container asks for any more: undone first */
        for (size_t i = ncm_knob_memo_count(k->memo); i-- > 0 && k->rootfd >= 0;) {
                const char *key = ncm_knob_memo_key(k->memo, i), *p;
                bool asked = false;
                if (strncmp(key, PART_KEY, strlen(PART_KEY)) != 0)
                        continue;
                p = key + strlen(PART_KEY);
                for (size_t j = 0; j < n && !asked; j++)
                        asked = (v[j].knobs & NCM_KNOB_CPU_LOAD_BALANCING) &&
                                strcmp(v[j].cgroup, p) == 0;
                if (!asked && paths_add(&gone, p) < 0)
                        return oom(k->err);
        }
        for (size_t i = 0; i < gone.n && r >= 0; i++) {
                char key[4300];
                ncm_autoptr(ncm_cpuset) none = ncm_cpuset_new();
                snprintf(key, sizeof(key), PART_KEY "%s", gone.v[i]);
                if (!none) {
                        r = oom(k->err);
                        break;
                }
                if (ncm_fs_exists(k->rootfd, gone.v[i]) > 0) {
                        char cur[128];
                        snprintf(path, sizeof(path), "%s/cpuset.cpus.partition", gone.v[i]);
                        if (read_line(k, path, cur, sizeof(cur)) == 0 && strcmp(cur, "member") != 0)
                                r = plan_write(k, "cpu-load-balancing: partition undone", path,
                                               "member", NULL, 0, NCM_KNOB_FIX_PARTITION);
                        snprintf(path, sizeof(path), "%s/cpuset.cpus.exclusive", gone.v[i]);
                        if (r >= 0)
                                r = plan_set(k, "cpu-load-balancing: partition undone", path, none,
                                             NULL, NCM_KNOB_FIX_PARTITION);
                }
                ncm_knob_memo_drop(k->memo, key);
        }
        if (r < 0)
                goto out;

        /* the ancestors each partition needs, and those the memo says we changed */
        for (size_t i = 0; i < n; i++)
                if ((v[i].knobs & NCM_KNOB_CPU_LOAD_BALANCING) && cg_exists(k, v[i].cgroup) &&
                    ancestors(&v[i], &anc) < 0) {
                        r = oom(k->err);
                        goto out;
                }
        for (size_t i = 0; i < ncm_knob_memo_count(k->memo); i++) {
                const char *key = ncm_knob_memo_key(k->memo, i);
                if (strncmp(key, EXCL_KEY, strlen(EXCL_KEY)) == 0 &&
                    paths_add(&anc, key + strlen(EXCL_KEY)) < 0) {
                        r = oom(k->err);
                        goto out;
                }
        }
        for (size_t i = 0; i < anc.n + n; i++) {
                const char *cg = i < anc.n ? anc.v[i] : v[i - anc.n].cgroup;
                excl x = {0};
                char key[4300];
                const char *orig;
                if (i >= anc.n &&
                    (!(v[i - anc.n].knobs & NCM_KNOB_CPU_LOAD_BALANCING) || !cg_exists(k, cg)))
                        continue;
                x.container = i >= anc.n;
                x.path = strdup(cg);
                x.want = ncm_cpuset_new();
                snprintf(path, sizeof(path), "%s/cpuset.cpus.exclusive", cg);
                if (!x.path || !x.want || ncm__array_grow(e, cap, ne) < 0) {
                        free(x.path);
                        ncm_cpuset_free(x.want);
                        r = oom(k->err);
                        goto out;
                }
                e[ne++] = x;
                r = read_set(k, path, &e[ne - 1].cur);
                if (r < 0) {
                        r = ncm_error_errno(k->err, -r, "%s%s", k->l->display_root, path);
                        goto out;
                }
                snprintf(key, sizeof(key), EXCL_KEY "%s", cg);
                /* an ancestor keeps what it held before we came; a partition holds its CPUs */
                orig = ncm_knob_memo_get(k->memo, key);
                if (!x.container && orig) {
                        ncm_autoptr(ncm_cpuset) o = NULL;
                        if (ncm_cpuset_parse_list(orig, &o, NULL) >= 0)
                                ncm_cpuset_or(e[ne - 1].want, e[ne - 1].want, o);
                } else if (!x.container && k->rootfd >= 0) {
                        ncm_autofree char *list = ncm_cpuset_format_list(e[ne - 1].cur);
                        if (!list || ncm_knob_memo_keep(k->memo, key, list) < 0) {
                                r = oom(k->err);
                                goto out;
                        }
                }
                for (size_t j = 0; j < n; j++)
                        if ((v[j].knobs & NCM_KNOB_CPU_LOAD_BALANCING) &&
                            below_or_at(v[j].cgroup, cg) && cg_exists(k, v[j].cgroup))
                                ncm_cpuset_or(e[ne - 1].want, e[ne - 1].want, v[j].cpus);
        }
        /* removals, deepest first */
        for (int d = 64; d >= 0 && r >= 0; d--)
                for (size_t i = 0; i < ne && r >= 0; i++) {
                        ncm_autoptr(ncm_cpuset) keep = NULL;
                        if (depth(e[i].path) != d || ncm_cpuset_is_subset(e[i].cur, e[i].want))
                                continue;
                        keep = ncm_cpuset_new();
                        if (!keep) {
                                r = oom(k->err);
                                break;
                        }
                        ncm_cpuset_and(keep, e[i].cur, e[i].want);
                        snprintf(path, sizeof(path), "%s/cpuset.cpus.exclusive", e[i].path);
                        r = plan_set(k, "cpu-load-balancing: exclusive CPUs returned", path, keep,
                                     e[i].cur, NCM_KNOB_FIX_PARTITION);
                        ncm_cpuset_copy(e[i].cur, keep);
                }
        /* additions, top first: an ancestor's cpuset.cpus widened, then its exclusive CPUs */
        for (int d = 0; d <= 64 && r >= 0; d++)
                for (size_t i = 0; i < ne && r >= 0; i++) {
                        if (depth(e[i].path) != d)
                                continue;
                        if (!e[i].container && !ncm_cpuset_is_subset(e[i].want, e[i].cur)) {
                                ncm_autoptr(ncm_cpuset) cpus = NULL;
                                snprintf(path, sizeof(path), "%s/cpuset.cpus", e[i].path);
                                r = read_set(k, path, &cpus);
                                if (r < 0) {
                                        r = ncm_error_errno(k->err, -r, "%s%s", k->l->display_root,
                                                            path);
                                        break;
                                }
                                if (!ncm_cpuset_is_subset(all, cpus)) {
                                        ncm_cpuset_or(cpus, cpus, all);
                                        r = plan_set(k, "cpu-load-balancing: ancestor", path, cpus,
                                                     NULL, NCM_KNOB_FIX_PARTITION);
                                }
                        }
                        snprintf(path, sizeof(path), "%s/cpuset.cpus.exclusive", e[i].path);
                        if (r >= 0)
                                r = plan_set(k,
                                             e[i].container ? "cpu-load-balancing: partition"
                                                            : "cpu-load-balancing: ancestor",
                                             path, e[i].want, e[i].cur, NCM_KNOB_FIX_PARTITION);
                }
        /* the partitions, last */
        for (size_t i = 0; i < ne && r >= 0; i++) {
                char cur[128] = "", key[4300];
                if (!e[i].container)
                        continue;
                snprintf(path, sizeof(path), "%s/cpuset.cpus.partition", e[i].path);
                if (k->rootfd >= 0 && read_line(k, path, cur, sizeof(cur)) < 0)
                        cur[0] = '\0';
                r = plan_write(k, "cpu-load-balancing: partition", path, "isolated",
                               k->rootfd >= 0 ? cur : NULL, NCM_CGROUP_OPF_READBACK,
                               NCM_KNOB_FIX_PARTITION);
                snprintf(key, sizeof(key), PART_KEY "%s", e[i].path);
                if (r >= 0 && k->rootfd >= 0 && ncm_knob_memo_set(k->memo, key, "isolated") < 0)
                        r = oom(k->err);
        }
        /* ancestors no partition needs are back to their own CPUs (the removals above): the
         * memo forgets them */
        for (size_t i = ncm_knob_memo_count(k->memo); i-- > 0 && r >= 0 && k->rootfd >= 0;) {
                const char *key = ncm_knob_memo_key(k->memo, i), *p;
                bool needed = false;
                if (strncmp(key, EXCL_KEY, strlen(EXCL_KEY)) != 0)
                        continue;
                p = key + strlen(EXCL_KEY);
                for (size_t j = 0; j < n && !needed; j++)
                        needed = (v[j].knobs & NCM_KNOB_CPU_LOAD_BALANCING) &&
                                 below_or_at(v[j].cgroup, p) && strcmp(v[j].cgroup, p) != 0 &&
                                 cg_exists(k, v[j].cgroup);
                if (!needed)
                        ncm_knob_memo_drop(k->memo, key);
        }
out:
        for (size_t i = 0; i < ne; i++) {
                free(e[i].path);
                ncm_cpuset_free(e[i].cur);
                ncm_cpuset_free(e[i].want);
        }
        free(e);
        paths_done(&anc);
        paths_done(&gone);
        return r;
}

/* ---- CFS quota ---- */

static int plan_quota(const kplan *k, const ncm_knob_container *v, size_t n)
{
        const ncm_cgroup_hierarchy *h = ncm_cgroup_layout_find(k->l, NCM_CGROUP_CTRL_CPU);
        bool v2 = ncm_cgroup_layout_version(k->l) == 2;
        path_list done = {0};
        int r = 0;

        if (!h)
                return 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                const char *cgs[2] = {v[i].pod_cgroup, v[i].cgroup};
                if (!(v[i].knobs & NCM_KNOB_CPU_QUOTA))
                        continue;
                /* the pod first: a container without quota in a pod with one is still capped */
                for (int j = 0; j < 2 && r >= 0; j++) {
                        char dir[4200], path[4300], cur[128];
                        if (!cgs[j] || paths_has(&done, cgs[j]))
                                continue;
                        if (paths_add(&done, cgs[j]) < 0) {
                                r = oom(k->err);
                                break;
                        }
                        snprintf(dir, sizeof(dir), "%s%s", h->dir, cgs[j]);
                        if (!cg_exists(k, dir))
                                continue;
                        snprintf(path, sizeof(path), "%s/%s", dir,
                                 v2 ? "cpu.max" : "cpu.cfs_quota_us");
                        if (k->rootfd >= 0 && read_line(k, path, cur, sizeof(cur)) < 0)
                                continue;
                        /* cpu.max reads "max PERIOD": the quota is its first word */
                        if (v2 && k->rootfd >= 0)
                                cur[strcspn(cur, " ")] = '\0';
                        r = plan_write(k, j ? "cpu-quota: container" : "cpu-quota: pod", path,
                                       v2 ? "max" : "-1", k->rootfd >= 0 ? cur : NULL, 0,
                                       NCM_KNOB_FIX_CPU_QUOTA);
                }
        }
        paths_done(&done);
        return r;
}

int ncm_knobs_runtime_cgroups(const char *cg, char **pod, char **top)
{
        const char *slash = strrchr(cg, '/'), *base, *kp = strstr(cg, "/kubepods");

        *pod = *top = NULL;
        if (slash && slash > cg) {
                base = slash;
                while (base > cg && base[-1] != '/')
                        base--;
                if ((strncmp(base, "pod", 3) == 0 ||
                     memmem(base, (size_t)(slash - base), "-pod", 4)) &&
                    !(*pod = strndup(cg, (size_t)(slash - cg))))
                        return -ENOMEM;
        }
        if (kp && !(*top = strndup(cg, (size_t)(kp - cg) + strcspn(kp + 1, "/") + 1))) {
                free(*pod);
                *pod = NULL;
                return -ENOMEM;
        }
        return 0;
}

int ncm_knobs_plan_cgroups(const ncm_cgroup_layout *l, int rootfd, const ncm_knob_container *v,
                           size_t n, const ncm_cpuset *all_cpus, ncm_knob_memo *memo,
                           ncm_cgroup_plan *plan, unsigned *fixed, ncm_error *err)
{
        kplan k = {l, rootfd, memo, plan, fixed, err};
        int r;

        r = plan_quota(&k, v, n);
        if (r < 0)
                return r;
        if (ncm_cgroup_layout_version(l) == 2)
                return plan_v2_partitions(&k, v, n, all_cpus);
        return plan_v1_balance(&k, v, n);
}
