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

void ncm__oci_kv_free(ncm_runtime_kv *kv, size_t n);

/* One container the hook placed. */
typedef struct oci_entry {
        char *id;
        char *pod;      /* the pod's UID */
        char *pod_name; /* "" when none */
        char *pod_ns;   /* "" when none */
        char *name;     /* the container's name in its pod */
        ncm_runtime_kind kind;
        bool has_qos;
        ncm_qos_class qos;
        char *cgroup; /* below the cpuset hierarchy (v1) or the root (v2) */
        ncm_runtime_resources resources;
        uint64_t seq; /* creation order */
} oci_entry;

/* ROOT/nodecm_oci_containers in memory: entries in creation order. */
typedef struct oci_registry {
        oci_entry *v;
        size_t n, cap;
        uint64_t next_seq;
} oci_registry;

void ncm__oci_entry_done(oci_entry *e);
void ncm__oci_registry_done(oci_registry *r);
/* Read DIR's file (missing: empty). Errors name the file and entry (-EINVAL). */
int ncm__oci_registry_load(const char *dir, oci_registry *r, ncm_error *err);
/* Parse TEXT as the file NAME holds it. */
int ncm__oci_registry_parse(const char *text, size_t len, const char *name, oci_registry *r,
                            ncm_error *err);
void ncm__oci_registry_format(const oci_registry *r, ncm_buf *b);
/* Write it atomically (0600). */
int ncm__oci_registry_save(const char *dir, const oci_registry *r, ncm_error *err);
/* Index of container ID / of container NAME of POD; -1 when absent. */
ssize_t ncm__oci_registry_find_id(const oci_registry *r, const char *id);
ssize_t ncm__oci_registry_find_name(const oci_registry *r, const char *pod, const char *name);
/* Append E (taken) with the next sequence number. -ENOMEM. */
int ncm__oci_registry_add(oci_registry *r, oci_entry *e);
/* Remove entry I. */
void ncm__oci_registry_remove(oci_registry *r, size_t i);
/* Whether POD still has an entry. */
bool ncm__oci_registry_has_pod(const oci_registry *r, const char *pod);

/*
 * The hook's enforcer: writes cpuset.cpus and cpuset.mems of the containers REG knows through
 * the cgroup mount ROOTFD (its cpuset hierarchy HIER: "/cpuset" on v1, "" on v2), undone on
 * rollback. A container whose cgroup has gone is passed over (it is stale, not an error).
 */
typedef struct oci_enforcer oci_enforcer;
int ncm__oci_enforcer_new(int rootfd, const char *hier, const ncm_topo *topo,
                          const oci_registry *reg, ncm_enforcer **ret, ncm_error *err);
/* Whether CGROUP (below the hierarchy) exists: 1, 0, or -errno. */
int ncm__oci_cgroup_exists(int rootfd, const char *hier, const char *cgroup);
/* The cpuset.mems the enforcer writes for CPUS into CGROUP: the NUMA nodes of CPUS that its
 * parent allows; "" when it would leave mems alone. */
int ncm__oci_mems_for(int rootfd, const char *hier, const ncm_topo *topo, const char *cgroup,
                      const ncm_cpuset *cpus, char *buf, size_t size);

#endif
