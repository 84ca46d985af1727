/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: the device manager's data structures, shared by its source files. */
#ifndef NCM_DEVICEMANAGER_INTERNAL_H
#define NCM_DEVICEMANAGER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nodecm/bitmask.h>
#include <nodecm/devicemanager.h>

/* Name-keyed arrays (resources, devices, string sets) use base/sorted.h. */
#include "base/sorted.h"
#include "base/utf8.h"

/* ---- a set of strings: sorted (strcmp), unique, each string owned ---- */

typedef struct ncm__strset {
        char **v;
        size_t n;
        size_t cap;
} ncm__strset;

#define NCM__STRSET_INIT                                                                           \
        {                                                                                          \
                NULL, 0, 0                                                                         \
        }

void ncm__strset_done(ncm__strset *s);
bool ncm__strset_has(const ncm__strset *s, const char *x);
/* 1 if inserted, 0 if already there, -ENOMEM. */
int ncm__strset_add(ncm__strset *s, const char *x);
/* 1 if removed, 0 if absent. */
int ncm__strset_del(ncm__strset *s, const char *x);
int ncm__strset_copy(ncm__strset *dst, const ncm__strset *src);
/* dst |= src; dst -= src. 0 or -ENOMEM. */
int ncm__strset_union(ncm__strset *dst, const ncm__strset *src);
void ncm__strset_subtract(ncm__strset *dst, const ncm__strset *src);
bool ncm__strset_is_subset(const ncm__strset *sub, const ncm__strset *super);
/* A NULL-terminated malloc'd copy of the members (strv). NULL on ENOMEM. */
char **ncm__strset_strv(const ncm__strset *s);

/* strv helpers: copies of N strings, NULL-terminated. */
char **ncm__strv_dup(const char *const *v, size_t n);

/* ---- the registry ---- */

typedef struct dm_device {
        char *id;
        char *health;
        bool topology; /* TopologyInfo present */
        int64_t *numa; /* in plugin order */
        size_t n_numa;
        ncm_bitmask mask; /* bits of the ids in 0..63 (kubelet's AnySet ignores others) */
} dm_device;

typedef struct dm_endpoint {
        uint64_t id;
        const ncm_devmgr_plugin_ops *ops; /* NULL for an endpoint restored from a checkpoint */
        void *data;
        bool has_opts; /* kubelet's opts != nil */
        ncm_devmgr_plugin_options opts;
        bool stopped;
        int64_t stop_time;
} dm_endpoint;

typedef struct dm_resource {
        char *name;
        bool has_all;    /* allDevices[name] exists */
        dm_device *devs; /* sorted by id */
        size_t n_devs;
        bool has_healthy;
        ncm__strset healthy;
        bool has_unhealthy;
        ncm__strset unhealthy;
        dm_endpoint *ep;
} dm_resource;

/* ---- allocations ---- */

typedef struct dm_entry {
        char *pod;
        char *container;
        char *resource;
        bool ids_null;             /* DeviceIDs nil */
        ncm_devmgr_numa_ids *numa; /* sorted by node */
        size_t n_numa;
        ncm__strset devices;         /* all ids of numa, flattened */
        ncm_devmgr_alloc_resp *resp; /* NULL: kubelet's nil allocResp */
        unsigned char *resp_bytes;   /* wire form of resp (as read from a checkpoint) */
        size_t resp_len;
} dm_entry;

/* resource -> set of device ids; key presence matters (isDevicePluginResource). */
typedef struct dm_rset {
        char *resource;
        ncm__strset set;
} dm_rset;

typedef struct dm_rsets {
        dm_rset *v; /* sorted by resource */
        size_t n;
} dm_rsets;

typedef struct dm_state {
        dm_entry *entries; /* sorted by pod, container, resource */
        size_t n_entries;
        dm_rsets allocated; /* allocatedDevices */
        char *reuse_pod;    /* devicesToReuse holds at most this pod */
        dm_rsets reuse;
} dm_state;

struct ncm_devmgr {
        int numa_nodes[NCM_BITMASK_MAX_BITS];
        int n_numa_nodes;
        /* kubelet 1.37+ (PR #138244): hints walk only the NUMA nodes of the resource's devices */
        bool device_numa_walk;
        int64_t (*now)(void *data);
        void *now_data;
        bool has_pods;
        ncm_devmgr_pods_source pods;
        char *ckpt_path;
        int ckpt_rootfd;
        int (*ckpt_write)(void *data, const char *path, const char *text, size_t len,
                          ncm_error *err);
        void *ckpt_write_data;
        unsigned flags;
        uint64_t next_endpoint;
        int64_t stop_grace_ns; /* endpointStopGracePeriod */

        /* The pod and container whose allocation calls the plugin hooks right now. */
        const char *call_pod;
        const char *call_container;
        /* Devices held for pods whose plugin calls are in flight (ncm_devmgr_hold). */
        struct dm_hold *holds;
        size_t n_holds, cap_holds;

        dm_resource *res; /* sorted by name */
        size_t n_res;
        dm_state st;
};

/* Devices held by OWNER for POD while its plugin calls are answered. */
typedef struct dm_hold {
        uint64_t owner;
        char *pod;
        char *resource;
        ncm__strset ids;
} dm_hold;

/* Remove from SET the devices of RESOURCE held for pods other than POD. */
void ncm__dm_subtract_holds(const ncm_devmgr *m, const char *pod, const char *resource,
                            ncm__strset *set);
void ncm__dm_holds_free(ncm_devmgr *m);

/* registry lookups */
dm_resource *ncm__dm_resource(const ncm_devmgr *m, const char *name);
const dm_device *ncm__dm_device(const dm_resource *r, const char *id);
int64_t ncm__dm_now(const ncm_devmgr *m);

/* rsets */
void ncm__rsets_done(dm_rsets *s);
int ncm__rsets_copy(dm_rsets *dst, const dm_rsets *src);
dm_rset *ncm__rsets_get(const dm_rsets *s, const char *resource);
/* The set of RESOURCE, created empty when absent. NULL on ENOMEM. */
dm_rset *ncm__rsets_ensure(dm_rsets *s, const char *resource);
void ncm__rsets_remove(dm_rsets *s, const char *resource);

/* allocation state */
void ncm__state_done(dm_state *st);
int ncm__state_copy(dm_state *dst, const dm_state *src);
dm_entry *ncm__state_entry(const dm_state *st, const char *pod, const char *container,
                           const char *resource);
/* Insert or replace (pod, container, resource); takes ownership of E's contents. */
int ncm__state_put(dm_state *st, dm_entry *e);
void ncm__entry_done(dm_entry *e);
/* kubelet's podDevices.devices(): recompute allocated from the entries. */
int ncm__state_recompute_allocated(dm_state *st);
/* kubelet's UpdateAllocatedDevices() with the manager's pods source. */
int ncm__dm_gc(ncm_devmgr *m, ncm_error *err);
/* Write the configured checkpoint, if any. */
int ncm__dm_checkpoint(const ncm_devmgr *m, ncm_error *err);

/* checkpoint pieces */
void ncm__numa_ids_done(ncm_devmgr_numa_ids *v, size_t n);
int ncm__numa_ids_copy(ncm_devmgr_numa_ids **dst, size_t *dst_n, const ncm_devmgr_numa_ids *src,
                       size_t n);

#endif
