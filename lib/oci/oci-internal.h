/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to lib/oci: the hook's record of the containers it placed, and its enforcer. */
#ifndef NCM_OCI_INTERNAL_H
#define NCM_OCI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/cgroups.h>
#include <nodecm/enforcer.h>
#include <nodecm/oci.h>
#include <nodecm/runtime.h>
#include "runtime/runtime-record.h"

void ncm__oci_kv_free(ncm_runtime_kv *kv, size_t n);

/* The hook's record is the runtime integrations' record (runtime/runtime-record.h). */
typedef ncm__rt_container oci_entry;
typedef ncm__rt_record oci_registry;

/*
 * The hook's enforcer: writes cpuset.cpus and cpuset.mems of the containers REG knows through
 * the cgroup mount ROOTFD (its cpuset hierarchy HIER: "/cpuset" on v1, "" on v2), undone on
 * rollback. A container whose cgroup has gone is passed over (it is stale, not an error).
 */
typedef struct oci_enforcer oci_enforcer;
typedef struct oci_enforcer_options {
        int rootfd;                      /* the cgroup mount, borrowed */
        const char *hier;                /* its cpuset hierarchy: "/cpuset" on v1, "" on v2 */
        const ncm_cgroup_layout *layout; /* CRI-O's knobs' other hierarchies (cpu) */
        const ncm_topo *topo;
        const oci_registry *reg;      /* the containers the node holds */
        const oci_registry *confined; /* the containers it keeps on the shared pool */
        int sysfd;                    /* the machine (/proc/irq, irqbalance's file), borrowed;
                                         -1: none */
} oci_enforcer_options;
/*
 * The hook's enforcer also does isolation(): every container of CONFINED on the shared pool,
 * and CRI-O's knobs on the cgroups REG names (a container's parent is its pod's cgroup when
 * the kubelet named it "pod<uid>"; the ancestors go up to kubepods, else the parent only).
 */
int ncm__oci_enforcer_new(const oci_enforcer_options *o, ncm_enforcer **ret, ncm_error *err);
/* Whether CGROUP (below the hierarchy) exists: 1, 0, or -errno. */
int ncm__oci_cgroup_exists(int rootfd, const char *hier, const char *cgroup);
#endif
