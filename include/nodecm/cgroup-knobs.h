/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRI-O's runtime-class knobs, done by nodecm for every runtime it serves (docs/isolation.md),
 * as plans: the writes that bring the machine to what the node's containers ask, computed from
 * what it has now, so that one call serves an admission, a removal, a restart and a reconcile
 * alike (each is "converge"), and the writes go through the plan machinery (rooted fds, undo,
 * the plan enforcer's record).
 *
 *   cpu-load-balancing.crio.io: disable
 *       cgroup v1: cpuset.sched_load_balance 0 on the container and each ancestor up to the
 *       node's top cgroup (kubepods), as CRI-O writes it; an ancestor goes back to what it had
 *       when no such container is below it any more;
 *       cgroup v2: the container's CPUs in cpuset.cpus.exclusive of the container and every
 *       ancestor up to the top (added top-down, removed bottom-up, ancestors' cpuset.cpus
 *       widened to every CPU first, as CRI-O does), then cpuset.cpus.partition "isolated" on
 *       the container (read back: the kernel says "isolated invalid (...)" when it refuses).
 *       Remote partitions need Linux 6.7: without cpuset.cpus.exclusive the knob is refused.
 *   cpu-quota.crio.io: disable
 *       no CFS quota on the pod's cgroup and the container's (cpu.cfs_quota_us -1, cpu.max
 *       "max").
 *   irq-load-balancing.crio.io: disable
 *       the union of those containers' CPUs (the banned CPUs) leaves every
 *       /proc/irq/N/smp_affinity and /proc/irq/default_smp_affinity (an interrupt left without
 *       a CPU gets every CPU that is not banned; one the kernel will not move is passed over),
 *       and joins irqbalance's IRQBALANCE_BANNED_CPUS; as banned CPUs come back, the interrupts
 *       that had them get them back.
 *
 * What must be put back later (an ancestor's sched_load_balance, an interrupt's affinity,
 * irqbalance's line) is kept in a memo before it is first changed: the node persists it, so a
 * crash or a restart restores from it.
 */
#ifndef NODECM_CGROUP_KNOBS_H
#define NODECM_CGROUP_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <nodecm/buf.h>
#include <nodecm/cgroups.h>
#include <nodecm/common.h>
#include <nodecm/cpuset.h>
#include <nodecm/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The knobs, as bits. */
enum {
        NCM_KNOB_CPU_LOAD_BALANCING = 1u << 0, /* cpu-load-balancing.crio.io: disable */
        NCM_KNOB_CPU_QUOTA = 1u << 1,          /* cpu-quota.crio.io: disable */
        NCM_KNOB_IRQ_LOAD_BALANCING = 1u << 2, /* irq-load-balancing.crio.io: disable */
        NCM_KNOB_N = 3,
};

/* The knob's name as CRI-O's annotation spells it ("cpu-quota.crio.io"). */
NCM_API const char *ncm_knob_annotation(unsigned knob) NCM_PURE;
/* Short names for metrics and status ("cpu-load-balancing", "cpu-quota", "irq-load-balancing"). */
NCM_API const char *ncm_knob_name(unsigned knob) NCM_PURE;

/* What a converge changed, by kind (metrics: nodecm_isolation_reconciled_total{what}). */
typedef enum ncm_knob_fix {
        NCM_KNOB_FIX_SCHED_LOAD_BALANCE = 0,
        NCM_KNOB_FIX_PARTITION,
        NCM_KNOB_FIX_CPU_QUOTA,
        NCM_KNOB_FIX_IRQ_AFFINITY,
        NCM_KNOB_FIX_IRQBALANCE,
        NCM_KNOB_FIX_N
} ncm_knob_fix;

/* "sched_load_balance", "partition", "cpu_quota", "irq_affinity", "irqbalance". */
NCM_API const char *ncm_knob_fix_name(ncm_knob_fix f) NCM_PURE;

/* ------------------------------------------------------------------------------------------
 * The memo: what to put back, by key ("sched_load_balance:/cpuset/kubepods", "irq:24",
 * "irq:default", "irqbalance"), values as read. A small sorted map.
 */
typedef struct ncm_knob_memo ncm_knob_memo;

NCM_API ncm_knob_memo *ncm_knob_memo_new(void);
NCM_API ncm_knob_memo *ncm_knob_memo_free(ncm_knob_memo *m);
NCM_DEFINE_AUTOPTR(ncm_knob_memo, ncm_knob_memo_free)
/* A copy of M, NULL when out of memory. */
NCM_API ncm_knob_memo *ncm_knob_memo_dup(const ncm_knob_memo *m);
/* The value kept for KEY, or NULL. */
NCM_API const char *ncm_knob_memo_get(const ncm_knob_memo *m, const char *key) NCM_PURE;
/* Keep VALUE for KEY unless KEY is kept already (the first value is the one to restore). */
NCM_API int ncm_knob_memo_keep(ncm_knob_memo *m, const char *key, const char *value);
/* Replace KEY's value (or add it). -ENOMEM. */
NCM_API int ncm_knob_memo_set(ncm_knob_memo *m, const char *key, const char *value);
/* Forget KEY (nothing when absent). */
NCM_API void ncm_knob_memo_drop(ncm_knob_memo *m, const char *key);
/* How many keys; the I-th key and value, in key order. */
NCM_API size_t ncm_knob_memo_count(const ncm_knob_memo *m) NCM_PURE;
NCM_API const char *ncm_knob_memo_key(const ncm_knob_memo *m, size_t i) NCM_PURE;
NCM_API const char *ncm_knob_memo_value(const ncm_knob_memo *m, size_t i) NCM_PURE;
/* Whether A and B hold the same keys and values. */
NCM_API bool ncm_knob_memo_equal(const ncm_knob_memo *a, const ncm_knob_memo *b) NCM_PURE;
/* {"KEY": "VALUE", ...} sorted, then a newline. */
NCM_API void ncm_knob_memo_format(const ncm_knob_memo *m, ncm_buf *b);
/* Read what ncm_knob_memo_format() writes (NAME starts errors). -EINVAL, -ENOMEM. */
NCM_API int ncm_knob_memo_parse(const char *text, size_t len, const char *name, ncm_knob_memo **ret,
                                ncm_error *err);

/* ------------------------------------------------------------------------------------------
 * cgroups
 */

/* One container with knobs, its cgroups as the enforcer that placed it names them. */
typedef struct ncm_knob_container {
        const char *cgroup;     /* below each hierarchy ("/kubepods/pod<uid>/app") */
        const char *pod_cgroup; /* the pod's cgroup (the quota), NULL: none */
        const char *top;        /* the highest ancestor of the node's ("/kubepods"); NULL: the
                                   container's parent is the last one written */
        const ncm_cpuset *cpus; /* its exclusive CPUs */
        unsigned knobs;         /* NCM_KNOB_CPU_LOAD_BALANCING and NCM_KNOB_CPU_QUOTA count */
} ncm_knob_container;

/*
 * A container's cgroup CG as a runtime made it, for ncm_knob_container: *POD its parent when
 * the kubelet named that its pod's ("pod<uid>", "...-pod<uid>.slice"), else NULL; *TOP the
 * kubelet's kubepods above it ("/x/kubepods"), else NULL (the parent is the last ancestor
 * written). The caller frees both. -ENOMEM.
 */
NCM_API int ncm_knobs_runtime_cgroups(const char *cg, char **pod, char **top);

/*
 * Append to PLAN what makes the cgroups of layout L match the containers V[0..N) and restores
 * what no container needs any more, reading through ROOTFD what the files hold (-1: read
 * nothing, plan every write, keep no memo: the plan enforcer). MEMO records originals before
 * the plan changes them and forgets what the plan restores; ALL_CPUS is the machine's (v2:
 * ancestors' cpuset.cpus). A container whose cgroup has gone is passed over. FIXED (may be
 * NULL) counts, per ncm_knob_fix, the files the plan changes. Errors: a v2 machine without
 * remote partitions (-EOPNOTSUPP, naming the file and Linux 6.7), I/O errors naming the file.
 */
NCM_API int ncm_knobs_plan_cgroups(const ncm_cgroup_layout *l, int rootfd,
                                   const ncm_knob_container *v, size_t n,
                                   const ncm_cpuset *all_cpus, ncm_knob_memo *memo,
                                   ncm_cgroup_plan *plan, unsigned *fixed, ncm_error *err);

/* ------------------------------------------------------------------------------------------
 * Interrupts (paths on the machine: /proc/irq, the irqbalance file)
 */

/*
 * Append to PLAN (its paths under the machine root SYSFD) what takes BANNED out of every
 * interrupt's affinity and default_smp_affinity, puts back what earlier banned CPUs took out
 * (MEMO: each interrupt's affinity before it was first changed, and the CPUs last banned), and
 * keeps IRQBALANCE (a path; NULL or "": none) banning BANNED beside what it banned before.
 * ALL_CPUS bounds the masks. An empty BANNED with an empty memo plans nothing. FIXED as above.
 * -errno naming the file (a /proc/irq that cannot be listed).
 */
/*
 * irqBalanceConfigFile as a path: CFG itself, NULL for "none", and for "" the first of
 * /etc/sysconfig/irqbalance and /etc/default/irqbalance that exists under SYSFD (NULL: none,
 * or SYSFD < 0).
 */
NCM_API const char *ncm_knobs_irqbalance_file(int sysfd, const char *cfg);

NCM_API int ncm_knobs_plan_irqs(int sysfd, const ncm_cpuset *banned, const ncm_cpuset *all_cpus,
                                const char *irqbalance, ncm_knob_memo *memo, ncm_cgroup_plan *plan,
                                unsigned *fixed, ncm_error *err);

/*
 * The kernel's affinity masks ("ff,ffffffff\n": 32-bit hex groups, most significant first) and
 * their inverse: parse (pure; -EINVAL, -ERANGE past the cpuset domain), and format S as the
 * kernel prints a mask of NBITS bits (groups of 8 hex digits, as many as NBITS needs).
 */
NCM_API int ncm_knobs_parse_mask(const char *s, size_t len, ncm_cpuset **ret);
NCM_API void ncm_knobs_format_mask(const ncm_cpuset *s, int nbits, ncm_buf *b);

/*
 * irqbalance's environment file TEXT with IRQBALANCE_BANNED_CPUS="MASK" (replacing every
 * such line, else appended as CRI-O does), into B. *OLD (may be NULL) receives the value the
 * last such line had, unquoted, malloc'd (NULL when there was none). -ENOMEM.
 */
NCM_API int ncm_knobs_irqbalance_edit(const char *text, size_t len, const char *mask, ncm_buf *b,
                                      char **old);

#ifdef __cplusplus
}
#endif
#endif
