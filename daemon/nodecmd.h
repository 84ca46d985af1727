/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecmd's core, as its services see it. One thread, one libuv loop. The core owns the node
 * (opened from its root directory, locked), the configuration, the log and a queue of work on
 * the node; everything else is a service: the control API, the reconcile loop, the metrics
 * endpoint, and later device plugins, pod resources and a CRI proxy. docs/nodecmd.md says how
 * to add one.
 *
 *   services    a table of ops (services.c); each starts after the node is up, hears about
 *               every committed change of the node, reloads, and stops when the daemon does
 *   work        nodecmd_submit(): a job that runs alone on the node, in submission order, and
 *               may finish later (an asynchronous step: a gRPC call to a plugin); nothing else
 *               touches the node meanwhile
 *   changes     nodecmd_changed(): a job that changed the node tells every service
 *
 * Nothing here is thread-safe: everything runs on the loop's thread.
 */
#ifndef NODECMD_H
#define NODECMD_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include <nodecm/ctl.h>
#include <nodecm/enforcer.h>
#include <nodecm/error.h>
#include <nodecm/node.h>
#include <nodecm/rpc-uv.h>

typedef struct nodecmd nodecmd;

/* ---- the log: one line per event on stderr, key=value ------------------------------------- */

typedef enum nodecmd_level {
        NODECMD_ERROR = 0,
        NODECMD_WARN,
        NODECMD_INFO,
        NODECMD_DEBUG,
} nodecmd_level;

/*
 * Log MSG at LEVEL with the fields KV, a printf format of `key=%s` pairs whose string values
 * are quoted as needed by nodecmd_q() ("" and NULL for none):
 *
 *   nodecmd_log(d, NODECMD_INFO, "admitted", "pod=%s cpus=%s", nodecmd_q(d, 0, uid), cpus);
 */
void nodecmd_log(nodecmd *d, nodecmd_level level, const char *msg, const char *kv, ...)
                __attribute__((format(printf, 4, 5)));
/* S as a log value: bare when it is a plain token, else quoted with Go's escapes. SLOT 0..3
 * picks one of four buffers, so that one log line can quote up to four values. */
const char *nodecmd_q(nodecmd *d, int slot, const char *s);
bool nodecmd_log_enabled(const nodecmd *d, nodecmd_level level);

/* ---- what services reach ------------------------------------------------------------------- */

uv_loop_t *nodecmd_loop(nodecmd *d);
/* The node (valid while the daemon runs; only jobs on the queue may change it). */
ncm_node *nodecmd_node(nodecmd *d);
/* The control API's view of the node: node, root directory, enforcer name. */
const ncm_ctl_target *nodecmd_target(nodecmd *d);
const char *nodecmd_root_dir(const nodecmd *d);
/* The node's enforcer (a service that knows where a runtime puts cgroups tells it). */
ncm_enforcer *nodecmd_enforcer(nodecmd *d);
/* The configuration in force (replaced by a reload). */
const ncm_node_config *nodecmd_config(const nodecmd *d);
/*
 * The "nodecmd" section of the configuration file (an object, {} when absent), where services
 * keep their settings. Borrowed; replaced by a reload.
 */
json_object *nodecmd_section(const nodecmd *d);
/* Whether the daemon is stopping (SIGTERM): services take no new work. */
bool nodecmd_stopping(const nodecmd *d);
/* Monotonic time in nanoseconds. */
uint64_t nodecmd_now_ns(void);
/*
 * The configuration's cpuManagerReconcilePeriod in milliseconds (the kubelet's 10 s when it
 * is 0, at least 1 ms), as the reconcile timers of the cgroupfs and the CRI paths run it.
 */
uint64_t nodecmd_reconcile_period_ms(const nodecmd *d);

/*
 * Options every gRPC server of the daemon uses (limits, timeouts; docs/rpc.md), for
 * ncm_rpc_server_new(); what lib/rpc refuses or catches goes to the daemon's log.
 */
void nodecmd_rpc_opts(nodecmd *d, ncm_rpc_opts *ret);

/*
 * The CRI runtime nodecmd works with (--runtime-endpoint, else the section's runtimeEndpoint)
 * and the socket its CRI proxy serves (--cri-listen, else criListen); NULL when not set. With
 * a runtime, cpusets go through the runtime (the CRI service), not the cgroup filesystem.
 */
const char *nodecmd_runtime_endpoint(const nodecmd *d);
const char *nodecmd_cri_listen(const nodecmd *d);

/*
 * A socket path of the daemon: the section's KEY when set, else DIR/DEFAULT_NAME. *RET is
 * malloc'd.
 */
int nodecmd_socket_path(const nodecmd *d, const char *key, const char *default_name, char **ret,
                        ncm_error *err);

/* ---- work on the node ---------------------------------------------------------------------- */

typedef struct nodecmd_job nodecmd_job;

/*
 * Run FN(d, job, data) when every job submitted before has finished: FN has the node to itself
 * until it calls nodecmd_job_done(), now or later (an asynchronous step). Jobs never overlap. A
 * job submitted while the queue is idle runs before nodecmd_submit() returns. WHAT names it in
 * the log. Returns the job, NULL when out of memory.
 */
typedef void (*nodecmd_job_fn)(nodecmd *d, nodecmd_job *job, void *data);
nodecmd_job *nodecmd_submit(nodecmd *d, const char *what, nodecmd_job_fn fn, void *data);

/*
 * Withdraw a job that has not started (its client went away): it will not run. Returns true
 * when withdrawn, false when it is running or done (its FN owns it then).
 */
bool nodecmd_withdraw(nodecmd *d, nodecmd_job *job);

/* The job is over: the next one runs (from the loop, not from inside this call). */
void nodecmd_job_done(nodecmd *d, nodecmd_job *job);

/* Jobs waiting or running. */
size_t nodecmd_queue_length(const nodecmd *d);

/* ---- durability: group commit (docs/nodecmd.md, "Durability") ---------------------------- */
/*
 * Call FN(d, r, msg, data) once every change the node has committed so far is durable: at once
 * when nothing waits to be synced, else after the next group commit, one fdatasync of the
 * journal that the calls committed meanwhile share (run when no job is ready to run, or 64
 * callers wait). R is 0, or the sync's -errno with MSG saying why (nodecmd then stops: what the
 * journal holds is replayed by the next start). A caller answers its client from FN, never
 * before. Returns false when out of memory (FN is not called).
 */
typedef void (*nodecmd_durable_fn)(nodecmd *d, int r, const char *msg, void *data);
bool nodecmd_when_durable(nodecmd *d, nodecmd_durable_fn fn, void *data);
/* Group commits so far, and the calls they acknowledged (for metrics and tests). */
void nodecmd_group_commits(const nodecmd *d, uint64_t *ret_syncs, uint64_t *ret_calls);

/* ---- changes ------------------------------------------------------------------------------- */

/* What a job did to the node, as every service hears it. */
typedef struct nodecmd_change {
        ncm_ctl_method method;     /* the call that caused it */
        const ncm_ctl_result *res; /* its result: reply, event, what changed */
        uint64_t duration_ns;      /* how long the node took */
        int error;                 /* 0, or the -errno the call failed with */
        uint64_t sequence;         /* the event's number for Watch (0: no event) */
} nodecmd_change;

/*
 * Tell every service about a call on the node (a change, or an error). The control service
 * calls it for each call it ran; the reconcile service for its own runs.
 */
void nodecmd_changed(nodecmd *d, const nodecmd_change *c);

/* The next event sequence number (1, 2, ...). */
uint64_t nodecmd_next_sequence(nodecmd *d);

/* ---- calls that need answers from elsewhere ------------------------------------------------ */

/*
 * A hook around every control API call the node runs, for services whose part of a call is
 * asynchronous (the device plugins' Allocate during an admission: docs/devices.md, "Plugin
 * calls during an admission: sessions"). For each call:
 *
 *   ctx = enter(data, method, ctx) just before the node runs the call (a session entered);
 *                                  CTX is NULL the first time, what enter returned before on
 *                                  the passes after
 *   again = leave(data, ctx, r, retry, arg)
 *                                  just after, with what the call returned; return true when
 *                                  the call must run again once answers are in: the control
 *                                  service then gives the node back (other calls go on) and
 *                                  keeps the caller waiting; the hook calls retry(arg) exactly
 *                                  once, later, from the loop, and the call is queued again
 *                                  (enter/leave run again). Return false to let the call end
 *                                  as it returned.
 *   done(data, ctx)                the call has ended for good (answered, or its caller went
 *                                  away while it waited): release CTX
 *
 * One hook at a time (NULL to remove it). A call that keeps asking to run again is the hook's
 * to bound (docs/devices.md: at most 8 rounds). The test build of nodecmd (svc-test.c) has
 * NODECMD_TEST_PASSES=N install a hook that makes every call that changes the node take N
 * passes, each answered after a loop turn: the tests run the whole path with it.
 */
typedef struct nodecmd_call_hook {
        void *(*enter)(void *data, ncm_ctl_method method, void *ctx);
        bool (*leave)(void *data, void *ctx, int r, void (*retry)(void *arg), void *arg);
        void (*done)(void *data, void *ctx);
} nodecmd_call_hook;

void nodecmd_set_call_hook(nodecmd *d, const nodecmd_call_hook *hook, void *data);
/* The hook and its data (the control service's side). */
const nodecmd_call_hook *nodecmd_call_hook_get(const nodecmd *d, void **ret_data);

/* ---- services ------------------------------------------------------------------------------ */

/*
 * A part of the daemon with its own sockets, clients or timers. All members but name and start
 * are optional.
 *
 *   start      the node is up: listen, connect, arm timers; *RET_DATA is the service's state.
 *              An error stops the daemon from starting (ERR says why).
 *   changed    a call on the node was made (nodecmd_changed).
 *   reload     the configuration was reloaded (SIGHUP) and the node rebuilt with it; the
 *              section may have changed too. Fields that cannot change live were refused
 *              before this is called.
 *   stop       the daemon stops (SIGTERM/SIGINT): take no new work, let work in flight
 *              finish, then call nodecmd_service_stopped() (now or later).
 *   free       release everything (after stop, once the loop has closed its handles).
 *   metrics    append the service's metrics (Prometheus text, HELP and TYPE included).
 *   reconciled the reconcile service ran the node's reconcile (nodecmd_reconciled): carry
 *              it to what the service keeps in step (a runtime's containers).
 */
typedef struct nodecmd_service_ops {
        const char *name;
        int (*start)(nodecmd *d, void **ret_data, ncm_error *err);
        void (*changed)(void *data, const nodecmd_change *c);
        void (*reload)(void *data);
        void (*stop)(void *data);
        void (*free)(void *data);
        void (*metrics)(void *data, ncm_buf *out);
        void (*reconciled)(void *data);
} nodecmd_service_ops;

/* The services, in start order (services.c); NULL-terminated. */
extern const nodecmd_service_ops *const nodecmd_services[];

/* Every service's metrics appended to OUT (for the metrics service). */
void nodecmd_service_metrics(nodecmd *d, ncm_buf *out);

/* The node's reconcile ran (the reconcile service, the one that drives it for every
 * enforcer): every service's reconciled(). */
void nodecmd_reconciled(nodecmd *d);

/* Service DATA has finished stopping. */
void nodecmd_service_stopped(nodecmd *d, void *data);

/* The built-in services. */
extern const nodecmd_service_ops nodecmd_control_service;
extern const nodecmd_service_ops nodecmd_reconcile_service;
extern const nodecmd_service_ops nodecmd_metrics_service;
extern const nodecmd_service_ops nodecmd_devices_service;
extern const nodecmd_service_ops nodecmd_podresources_service;
extern const nodecmd_service_ops nodecmd_cri_service;
/* The test build's only (svc-test.c). */
extern const nodecmd_service_ops nodecmd_test_service;

#endif
