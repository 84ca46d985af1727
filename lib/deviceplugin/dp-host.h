/* SPDX-License-Identifier: Apache-2.0 */
/* Internal: the host's structures, shared by dp-host.c and dp-session.c. */
#ifndef NCM_DP_HOST_H
#define NCM_DP_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include <nodecm/deviceplugin.h>
#include <nodecm/rpc-uv.h>
#include "dp-internal.h"

/* The plugin methods, for timeouts and metrics. */
enum {
        DP_OPTIONS = 0,
        DP_LIST_AND_WATCH,
        DP_PREFERRED,
        DP_ALLOCATE,
        DP_PRE_START,
        DP_N_METHODS,
};

typedef enum ep_state {
        EP_DIALING = 0, /* connecting to the plugin's socket (retrying) */
        EP_OPTIONS,     /* connected, GetDevicePluginOptions in flight */
        EP_RUNNING,     /* registered, ListAndWatch open */
        EP_ENDED,       /* the connection is over */
} ep_state;

typedef struct dp_endpoint dp_endpoint;

struct dp_endpoint {
        ncm_dp_host *h;
        dp_endpoint *next;
        uint64_t serial; /* names the instance in sessions' answers */
        char *resource;
        char *path;
        ep_state state;
        bool current;   /* the resource's newest registered instance */
        bool in_devmgr; /* the device manager refers to it (ops, this) */
        uint64_t dm_id;
        ncm_devmgr_plugin_options opts;
        ncm_rpc_call *reg_call; /* the Register call to answer; NULL once answered */
        ncm_rpc_uv_client *cl;
        ncm_rpc_call *opts_call;
        ncm_rpc_call *law_call;
        bool law_failed;   /* we ended the stream (garbage on it): already logged */
        uv_timer_t *timer; /* dial retries */
        uint64_t dial_deadline;
        uint8_t *opts_msg;
        size_t opts_len;
        uint8_t *snapshot; /* the last snapshot applied, for ncm_dp_host_attach */
        size_t snapshot_len;
        uint64_t snapshots;
        uint64_t devices;
};

#define NCM_DP_BUCKETS 11

typedef struct dp_stats {
        char *resource;
        uint64_t registrations;
        uint64_t alloc_buckets[NCM_DP_BUCKETS];
        uint64_t alloc_count;
        double alloc_sum;
} dp_stats;

struct ncm_dp_host {
        uv_loop_t *loop;
        ncm_devmgr *m;
        ncm_dp_host_events ev;
        char *dir;
        char *sock;
        unsigned socket_mode;
        uint32_t dial_timeout_ms;
        uint32_t timeout_ms[DP_N_METHODS];
        uint32_t capacity_period_ms;
        int64_t grace_ns;
        ncm_rpc_opts rpc;
        ncm_rpc_server *srv;
        ncm_rpc_uv_server *listener;
        dev_t sock_dev;
        ino_t sock_ino;
        uv_fs_event_t *watch;
        uv_timer_t *capacity;
        dp_endpoint *endpoints; /* newest first */
        uint64_t next_serial;
        bool release_pending; /* the device manager released an endpoint: reap */

        ncm_dp_session *sessions;
        ncm_dp_session *current; /* entered */
        uint64_t next_owner;

        dp_stats *stats;
        size_t n_stats, cap_stats;
        uint64_t calls[DP_N_METHODS][17];

        bool closing;
        unsigned handles;
        void (*on_closed)(void *data);
        void *closed_data;
};

/* dp-host.c */
void ncm__dp_log(ncm_dp_host *h, ncm_dp_level level, const char *msg, const char *k1,
                 const char *v1, const char *k2, const char *v2, const char *k3, const char *v3);
dp_stats *ncm__dp_stats(ncm_dp_host *h, const char *resource);
void ncm__dp_observe_alloc(ncm_dp_host *h, const char *resource, double seconds);
void ncm__dp_count_call(ncm_dp_host *h, int method, int code);
const char *ncm__dp_method_name(int m);
dp_endpoint *ncm__dp_endpoint_by_serial(ncm_dp_host *h, uint64_t serial);
void ncm__dp_reap(ncm_dp_host *h);

/* dp-session.c: the plugin ops, and the host closing under its sessions */
int ncm__dp_op_allocate(void *data, const char *resource, const char *const *ids, size_t n,
                        ncm_devmgr_alloc_resp **ret, ncm_error *err);
int ncm__dp_op_preferred(void *data, const char *resource, const char *const *available,
                         size_t n_available, const char *const *must_include, size_t n_must_include,
                         int32_t size, char ***ret, size_t *ret_n, ncm_error *err);
int ncm__dp_op_pre_start(void *data, const char *resource, const char *const *ids, size_t n,
                         ncm_error *err);
void ncm__dp_sessions_orphan(ncm_dp_host *h);

#endif
