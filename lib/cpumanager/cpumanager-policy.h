/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal to the policy work stream of lib/cpumanager: the ops table behind ncm_cpu_policy
 * (STYLE rule 12) and the base object every policy embeds first.
 */
#ifndef NCM_CPUMANAGER_POLICY_H
#define NCM_CPUMANAGER_POLICY_H

#include <nodecm/cpumanager.h>

typedef struct ncm_cpu_policy_ops {
        const char *name;
        void (*destroy)(ncm_cpu_policy *p);
        int (*start)(ncm_cpu_policy *p, ncm_cpu_state *s, ncm_error *err);
        int (*allocate)(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod,
                        const ncm_container *c, const ncm_hint *affinity, ncm_error *err);
        /* the same preferring CPUs near devices (NULL: NEAR is ignored, as by none) */
        int (*allocate_near)(ncm_cpu_policy *p, ncm_cpu_state *s, const ncm_pod *pod,
                             const ncm_container *c, const ncm_hint *affinity,
                             const ncm_cpu_near *near, size_t n, ncm_error *err);
        int (*remove_container)(ncm_cpu_policy *p, ncm_cpu_state *s, const char *pod_uid,
                                const char *name, ncm_error *err);
        int (*hints)(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                     const ncm_container *c, ncm_hint_list *out, ncm_error *err);
        int (*pod_hints)(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                         ncm_hint_list *out, ncm_error *err);
        /* the same as descriptions (NULL: no preference ever, the none policy) */
        int (*hints_describe)(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                              const ncm_container *c, ncm_hint_desc **ret, ncm_error *err);
        int (*pod_hints_describe)(ncm_cpu_policy *p, const ncm_cpu_state *s, const ncm_pod *pod,
                                  ncm_hint_desc **ret, ncm_error *err);
        void (*allocatable)(const ncm_cpu_policy *p, ncm_cpuset *out);
        void (*available)(const ncm_cpu_policy *p, const ncm_cpu_state *s, ncm_cpuset *out);
        void (*available_physical)(const ncm_cpu_policy *p, const ncm_cpu_state *s,
                                   ncm_cpuset *out);
        /* cpusToReuse (NULL for a policy without): read as (pod or NULL, set), and replace */
        const ncm_cpuset *(*reuse)(const ncm_cpu_policy *p, const char **ret_pod_uid);
        int (*reuse_set)(ncm_cpu_policy *p, const char *pod_uid, const ncm_cpuset *set,
                         ncm_error *err);
} ncm_cpu_policy_ops;

struct ncm_cpu_policy {
        const ncm_cpu_policy_ops *ops;
        ncm_cpu_options opts;
        ncm_cpuset *reserved;  /* never NULL */
        ncm_cpu_index *ix;     /* NULL for none */
        ncm_cpu_trace trace;   /* fn NULL: no allocation trace */
        ncm_cpu_isolation iso; /* isolatedCPUs (cpumanager-isolation.c) */
        ncm_cpuset *isolated;  /* its CPUs; NULL under IGNORE */
};

/* The pod's nodecm.io/isolated-cpus: 0 none, 1 prefer, 2 require. */
int ncm__cpu_iso_want(const ncm_pod *pod);
/*
 * SET holds the CPUs a container of POD could take N of (REUSABLE, may be NULL, the pod's
 * reusable ones beside them): restrict it to what the isolation lets it take (EXCLUDE: no
 * isolated CPU; EXCLUSIVE_ONLY: the isolated ones for "require", the preferred tier when it
 * holds enough). Nothing under IGNORE.
 */
void ncm__cpu_iso_restrict(const ncm_cpu_policy *p, const ncm_pod *pod, int n,
                           const ncm_cpuset *reusable, ncm_cpuset *set);
/*
 * The isolation's refusals for container C of POD asking N exclusive CPUs out of AVAILABLE
 * (already restricted): "require" that cannot be met, with a text naming the annotation.
 * 0 or -NCM_E_UNSATISFIABLE.
 */
int ncm__cpu_iso_check(const ncm_cpu_policy *p, const ncm_pod *pod, const ncm_container *c, int n,
                       const ncm_cpuset *available, ncm_error *err);
/*
 * A resize's refusal: container C of POD holding HAVE needs MORE CPUs out of POOL (the free
 * CPUs ncm_cpu_policy_isolation_resize_pool() left it); when its pool is one of the two and
 * holds too few, a text naming the pool. 0 or -NCM_E_UNSATISFIABLE.
 */
int ncm__cpu_iso_resize_check(const ncm_cpu_policy *p, const ncm_pod *pod, const ncm_container *c,
                              const ncm_cpuset *have, int more, const ncm_cpuset *pool,
                              ncm_error *err);

#endif
