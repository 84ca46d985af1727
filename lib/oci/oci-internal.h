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
int ncm__oci_enforcer_new(int rootfd, const char *hier, const oci_registry *reg, ncm_enforcer **ret,
                          ncm_error *err);
/* Whether CGROUP (below the hierarchy) exists: 1, 0, or -errno. */
int ncm__oci_cgroup_exists(int rootfd, const char *hier, const char *cgroup);
#endif
