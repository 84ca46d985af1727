/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecmd's core: start-up (configuration, topology, the node from its root directory), the
 * log, the queue of work on the node, signals (SIGTERM/SIGINT stop, SIGHUP reloads) and the
 * services' lifecycle. Decisions are lib/'s; this file only wires them to the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nodecm/cri.h>
#include "daemon.h"

struct nodecmd_job {
        nodecmd_job *next;
        const char *what;
        nodecmd_job_fn fn;
        void *data;
        bool running;
};

typedef struct service {
        const nodecmd_service_ops *ops;
        void *data;
        bool started;
        bool stopped;
} service;

struct nodecmd {
        uv_loop_t loop;
        const nodecmd_options *opts;
        char *root_dir;
        nodecmd_level level;
        char quote[4][512];

        ncm_topo *topo;
        ncm_node_config *cfg;
        json_object *section;
        ncm_enforcer *enforcer;
        ncm_node_dir *dir;
        ncm_ctl_target target;

        nodecmd_job *head, *tail; /* head runs first */
        size_t n_jobs;
        uv_idle_t kick; /* runs the head job from the loop */

        service *svc;
        size_t n_svc;

        const nodecmd_call_hook *hook;
        void *hook_data;

        /* group commit: callers waiting for the next sync, run from the loop's idle phase */
        struct durable_waiter {
                nodecmd_durable_fn fn;
                void *data;
        } * waiters;
        size_t n_waiters, cap_waiters;
        uv_idle_t commit; /* an idle handle: the loop does not block in poll while it waits */
        uv_timer_t flush; /* the kubelet's files catch up, off the acknowledgement path */
        uint64_t syncs, synced_calls;

        uv_signal_t sig_term, sig_int, sig_hup;
        bool signals_up; /* the signal handles exist (the start got that far) */
        bool stopping;
        uint64_t sequence;
        int exit_code;
};

/* ---- log ----------------------------------------------------------------------------------- */

static const char *const level_names[] = {"error", "warn", "info", "debug"};

int nodecmd_level_from_name(const char *name)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(level_names); i++)
                if (strcmp(name, level_names[i]) == 0)
                        return (int)i;
        return -1;
}

bool nodecmd_log_enabled(const nodecmd *d, nodecmd_level level)
{
        return level <= d->level;
}

/* Whether S can go in a log line as it is. */
static bool plain_token(const char *s)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s <= ' ' || *s == '"' || *s == '=' || *s == '\\' || (unsigned char)*s >= 0x7f)
                        return false;
        return true;
}

const char *nodecmd_q(nodecmd *d, int slot, const char *s)
{
        char *b = d->quote[slot & 3];
        size_t n = 0, max = sizeof(d->quote[0]) - 8;

        if (!s)
                s = "";
        if (plain_token(s))
                return s;
        b[n++] = '"';
        for (; *s && n < max; s++) {
                unsigned char c = (unsigned char)*s;
                if (c == '"' || c == '\\') {
                        b[n++] = '\\';
                        b[n++] = (char)c;
                } else if (c == '\n') {
                        b[n++] = '\\';
                        b[n++] = 'n';
                } else if (c < 0x20 || c == 0x7f) {
                        n += (size_t)snprintf(b + n, 5, "\\x%02x", c);
                } else {
                        b[n++] = (char)c;
                }
        }
        if (*s) {
                memcpy(b + n, "...", 3);
                n += 3;
        }
        b[n++] = '"';
        b[n] = '\0';
        return b;
}

void nodecmd_log(nodecmd *d, nodecmd_level level, const char *msg, const char *kv, ...)
{
        char line[4096];
        struct timespec ts;
        struct tm tm;
        size_t n;
        va_list ap;

        if (d && level > d->level)
                return;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        n = strftime(line, sizeof(line), "time=%Y-%m-%dT%H:%M:%S", &tm);
        n += (size_t)snprintf(line + n, sizeof(line) - n,
                              ".%03ldZ level=%s msg=", ts.tv_nsec / 1000000, level_names[level]);
        if (d) {
                n += (size_t)snprintf(line + n, sizeof(line) - n, "%s", nodecmd_q(d, 3, msg));
        } else {
                n += (size_t)snprintf(line + n, sizeof(line) - n, "\"%s\"", msg);
        }
        if (kv && kv[0] && n < sizeof(line) - 2) {
                line[n++] = ' ';
                va_start(ap, kv);
                vsnprintf(line + n, sizeof(line) - n, kv, ap);
                va_end(ap);
                n = strlen(line);
        }
        if (n > sizeof(line) - 2)
                n = sizeof(line) - 2;
        {
                /* what a value holds (a hostile name, an error naming it) never acts on the
                 * terminal or the log viewer: controls, bidi overrides and bad UTF-8 escaped */
                ncm_buf safe = NCM_BUF_INIT;
                ncm_buf_put_printable(&safe, line, n, 0);
                ncm_buf_putc(&safe, '\n');
                /* one write per line, so that lines of concurrent writers never interleave */
                if (!ncm_buf_failed(&safe))
                        (void)!write(STDERR_FILENO, safe.data, safe.len);
                ncm_buf_done(&safe);
        }
}

/* ---- accessors ----------------------------------------------------------------------------- */

uv_loop_t *nodecmd_loop(nodecmd *d)
{
        return &d->loop;
}

ncm_node *nodecmd_node(nodecmd *d)
{
        return ncm_node_dir_node(d->dir);
}

const ncm_ctl_target *nodecmd_target(nodecmd *d)
{
        return &d->target;
}

ncm_enforcer *nodecmd_enforcer(nodecmd *d)
{
        return d->enforcer;
}

const char *nodecmd_root_dir(const nodecmd *d)
{
        return d->root_dir;
}

const ncm_node_config *nodecmd_config(const nodecmd *d)
{
        return d->cfg;
}

json_object *nodecmd_section(const nodecmd *d)
{
        return d->section;
}

bool nodecmd_stopping(const nodecmd *d)
{
        return d->stopping;
}

uint64_t nodecmd_now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t nodecmd_reconcile_period_ms(const nodecmd *d)
{
        int64_t ns = ncm_node_config_reconcile_period_ns(nodecmd_config(d));
        uint64_t ms = ns > 0 ? (uint64_t)ns / 1000000u : 10000u;

        return ms ? ms : 1;
}

uint64_t nodecmd_next_sequence(nodecmd *d)
{
        return ++d->sequence;
}

/* What lib/rpc refuses of a peer (a request's headers, a broken connection) or catches in a
 * handler of ours, in the daemon's log. */
static void rpc_log(void *data, int level, const char *path, const char *what)
{
        nodecmd *d = data;

        if (level == NCM_RPC_LOG_ERROR)
                nodecmd_log(d, NODECMD_ERROR, "gRPC handler error", "method=%s error=%s",
                            nodecmd_q(d, 0, path), nodecmd_q(d, 1, what));
        else
                nodecmd_log(d, NODECMD_WARN, "gRPC peer refused", "method=%s error=%s",
                            nodecmd_q(d, 0, path), nodecmd_q(d, 1, what));
}

void nodecmd_rpc_opts(nodecmd *d, ncm_rpc_opts *ret)
{
        ncm_rpc_opts_default(ret);
        ret->log = rpc_log;
        ret->log_data = d;
        /* a pod is small; an explanation or a CPU map of a big machine is not */
        ret->max_send_msg = 64u << 20;
        ret->send_queue_max = 80u << 20;
        /* connections that never make a call are not kept for ever */
        ret->idle_timeout_ms = 5u * 60u * 1000u;
}

const char *nodecmd_runtime_endpoint(const nodecmd *d)
{
        const char *v = d->opts->runtime_endpoint;
        return v && *v ? v : nodecmd_section_string(d, "runtimeEndpoint");
}

const char *nodecmd_cri_listen(const nodecmd *d)
{
        const char *v = d->opts->cri_listen;
        return v && *v ? v : nodecmd_section_string(d, "criListen");
}

const char *nodecmd_section_string(const nodecmd *d, const char *key)
{
        json_object *v = NULL;

        if (!json_object_object_get_ex(d->section, key, &v) ||
            !json_object_is_type(v, json_type_string))
                return NULL;
        return json_object_get_string(v);
}

int nodecmd_socket_path(const nodecmd *d, const char *key, const char *default_name, char **ret,
                        ncm_error *err)
{
        const char *v = nodecmd_section_string(d, key);

        if (v && v[0])
                *ret = strdup(v);
        else if (asprintf(ret, "%s/%s", d->root_dir, default_name) < 0)
                *ret = NULL;
        return *ret ? 0 : ncm_error_set(err, ENOMEM, "out of memory");
}

/* ---- the queue ----------------------------------------------------------------------------- */

static void maybe_finish(nodecmd *d);

static void run_head(uv_idle_t *h)
{
        nodecmd *d = h->data;
        nodecmd_job *j = d->head;

        uv_idle_stop(&d->kick);
        if (!j || j->running)
                return;
        j->running = true;
        j->fn(d, j, j->data);
}

static void kick(nodecmd *d)
{
        if (d->head && !d->head->running)
                uv_idle_start(&d->kick, run_head);
}

nodecmd_job *nodecmd_submit(nodecmd *d, const char *what, nodecmd_job_fn fn, void *data)
{
        nodecmd_job *j = calloc(1, sizeof(*j));

        if (!j)
                return NULL;
        j->what = what;
        j->fn = fn;
        j->data = data;
        if (d->tail)
                d->tail->next = j;
        else
                d->head = j;
        d->tail = j;
        d->n_jobs++;
        kick(d);
        return j;
}

static void unlink_job(nodecmd *d, nodecmd_job *job)
{
        nodecmd_job **p = &d->head, *prev = NULL;

        while (*p && *p != job) {
                prev = *p;
                p = &(*p)->next;
        }
        if (!*p)
                return;
        *p = job->next;
        if (d->tail == job)
                d->tail = prev;
        d->n_jobs--;
        free(job);
}

bool nodecmd_withdraw(nodecmd *d, nodecmd_job *job)
{
        if (job->running)
                return false;
        unlink_job(d, job);
        return true;
}

void nodecmd_job_done(nodecmd *d, nodecmd_job *job)
{
        unlink_job(d, job);
        kick(d);
        /* a job queued after the stop (a call that waited for answers) may be the last one */
        if (d->stopping)
                maybe_finish(d);
}

size_t nodecmd_queue_length(const nodecmd *d)
{
        return d->n_jobs;
}

void nodecmd_set_call_hook(nodecmd *d, const nodecmd_call_hook *hook, void *data)
{
        d->hook = hook;
        d->hook_data = data;
}

const nodecmd_call_hook *nodecmd_call_hook_get(const nodecmd *d, void **ret_data)
{
        *ret_data = d->hook_data;
        return d->hook;
}

/* ---- durability: group commit -------------------------------------------------------------- */

static void stop(nodecmd *d, const char *why);

/* A group of changes waits this long at most before the kubelet's files catch up. */
#define FLUSH_DELAY_MS 20
#define GROUP_MAX 64

static void flush_job(nodecmd *d, nodecmd_job *job, void *data)
{
        ncm_error err = NCM_ERROR_INIT;

        (void)data;
        if (ncm_node_flush(nodecmd_node(d), &err) < 0)
                nodecmd_log(d, NODECMD_WARN, "checkpoint catch-up failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
        nodecmd_job_done(d, job);
}

static void on_flush(uv_timer_t *t)
{
        nodecmd *d = t->data;

        if (!d->stopping && !nodecmd_submit(d, "flush", flush_job, NULL))
                nodecmd_log(d, NODECMD_WARN, "checkpoint catch-up failed", "error=%s",
                            nodecmd_q(d, 0, "out of memory"));
}

/* The group commit: one sync, then every waiter in the order it came. */
static void commit_now(nodecmd *d)
{
        ncm_error err = NCM_ERROR_INIT;
        struct durable_waiter *w = d->waiters;
        size_t n = d->n_waiters;
        int r = ncm_node_sync(nodecmd_node(d), &err);

        d->waiters = NULL;
        d->n_waiters = d->cap_waiters = 0;
        if (n) {
                d->syncs++;
                d->synced_calls += n;
        }
        if (r < 0)
                nodecmd_log(d, NODECMD_ERROR, "journal sync failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
        for (size_t i = 0; i < n; i++)
                w[i].fn(d, r, r < 0 ? err.msg : NULL, w[i].data);
        free(w);
        if (r < 0) {
                /* what the node holds in memory may be more than the disk does: stop, and let
                 * the next start replay the journal */
                d->exit_code = 1;
                stop(d, "journal-sync-failed");
                return;
        }
        if (!d->stopping && ncm_node_behind(nodecmd_node(d)) &&
            !uv_is_active((uv_handle_t *)&d->flush))
                uv_timer_start(&d->flush, on_flush, FLUSH_DELAY_MS, 0);
}

static void on_commit(uv_idle_t *h)
{
        nodecmd *d = h->data;

        if (!d->n_waiters) {
                uv_idle_stop(&d->commit);
                return;
        }
        /* a job ready to run may add to the group; one in an asynchronous step will not soon */
        if (d->head && !d->head->running && d->n_waiters < GROUP_MAX)
                return;
        uv_idle_stop(&d->commit);
        commit_now(d);
}

bool nodecmd_when_durable(nodecmd *d, nodecmd_durable_fn fn, void *data)
{
        if (!ncm_node_unsynced(nodecmd_node(d)) && !d->n_waiters) {
                fn(d, 0, NULL, data);
                return true;
        }
        if (d->n_waiters == d->cap_waiters) {
                size_t cap = d->cap_waiters ? 2 * d->cap_waiters : 16;
                struct durable_waiter *v = realloc(d->waiters, cap * sizeof(*v));
                if (!v)
                        return false;
                d->waiters = v;
                d->cap_waiters = cap;
        }
        d->waiters[d->n_waiters++] = (struct durable_waiter){fn, data};
        uv_idle_start(&d->commit, on_commit);
        return true;
}

void nodecmd_group_commits(const nodecmd *d, uint64_t *ret_syncs, uint64_t *ret_calls)
{
        *ret_syncs = d->syncs;
        *ret_calls = d->synced_calls;
}

/* ---- changes and services ------------------------------------------------------------------ */

void nodecmd_changed(nodecmd *d, const nodecmd_change *c)
{
        for (size_t i = 0; i < d->n_svc; i++)
                if (d->svc[i].started && d->svc[i].ops->changed)
                        d->svc[i].ops->changed(d->svc[i].data, c);
}

void nodecmd_reconciled(nodecmd *d)
{
        for (size_t i = 0; i < d->n_svc; i++)
                if (d->svc[i].started && d->svc[i].ops->reconciled)
                        d->svc[i].ops->reconciled(d->svc[i].data);
}

void nodecmd_service_metrics(nodecmd *d, ncm_buf *out)
{
        for (size_t i = 0; i < d->n_svc; i++)
                if (d->svc[i].started && d->svc[i].ops->metrics)
                        d->svc[i].ops->metrics(d->svc[i].data, out);
}

static void close_signals(nodecmd *d)
{
        uv_close((uv_handle_t *)&d->sig_term, NULL);
        uv_close((uv_handle_t *)&d->sig_int, NULL);
        uv_close((uv_handle_t *)&d->sig_hup, NULL);
        uv_close((uv_handle_t *)&d->kick, NULL);
        uv_close((uv_handle_t *)&d->commit, NULL);
        uv_close((uv_handle_t *)&d->flush, NULL);
}

static void commit_now(nodecmd *d);

/* Every service has stopped: once the queue is empty, nothing is left to keep the loop. */
static void maybe_finish(nodecmd *d)
{
        for (size_t i = 0; i < d->n_svc; i++)
                if (d->svc[i].started && !d->svc[i].stopped)
                        return;
        if (d->head || !d->signals_up)
                return;
        /* a call answered after the stop job (one that waited for answers) is still owed */
        if (d->n_waiters)
                commit_now(d);
        if (!uv_is_closing((uv_handle_t *)&d->sig_term))
                close_signals(d);
}

void nodecmd_service_stopped(nodecmd *d, void *data)
{
        for (size_t i = 0; i < d->n_svc; i++)
                if (d->svc[i].data == data && d->svc[i].started && !d->svc[i].stopped) {
                        d->svc[i].stopped = true;
                        nodecmd_log(d, NODECMD_DEBUG, "service stopped", "service=%s",
                                    d->svc[i].ops->name);
                }
        maybe_finish(d);
}

static void stop_job(nodecmd *d, nodecmd_job *job, void *data)
{
        ncm_error err = NCM_ERROR_INIT;

        /* every job submitted before the stop has run: nothing is left half-done; what they
         * committed is made durable and answered, and the kubelet's files catch up */
        if (d->n_waiters)
                commit_now(d);
        uv_timer_stop(&d->flush);
        if (ncm_node_flush(nodecmd_node(d), &err) < 0)
                nodecmd_log(d, NODECMD_WARN, "checkpoint catch-up failed", "error=%s",
                            nodecmd_q(d, 0, err.msg));
        nodecmd_job_done(d, job);
        maybe_finish(d);
}

static void stop(nodecmd *d, const char *why)
{
        if (d->stopping)
                return;
        d->stopping = true;
        nodecmd_log(d, NODECMD_INFO, "stopping", "signal=%s jobs=%zu", why, d->n_jobs);
        for (size_t i = d->n_svc; i-- > 0;) {
                if (!d->svc[i].started)
                        continue;
                if (d->svc[i].ops->stop)
                        d->svc[i].ops->stop(d->svc[i].data);
                else
                        d->svc[i].stopped = true;
        }
        if (!nodecmd_submit(d, "stop", stop_job, NULL))
                maybe_finish(d);
}

/* ---- reload -------------------------------------------------------------------------------- */

typedef struct reload {
        ncm_node_config *cfg;
        json_object *section;
} reload;

static void reload_job(nodecmd *d, nodecmd_job *job, void *data)
{
        reload *rl = data;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_node_restart(nodecmd_node(d), rl->cfg, &err);

        if (r < 0) {
                nodecmd_log(d, NODECMD_ERROR, "configuration reload failed", "config=%s error=%s",
                            nodecmd_q(d, 0, d->opts->config), nodecmd_q(d, 1, err.msg));
                ncm_node_config_free(rl->cfg);
                json_object_put(rl->section);
        } else {
                ncm_node_config_free(d->cfg);
                json_object_put(d->section);
                d->cfg = rl->cfg;
                d->section = rl->section;
                nodecmd_apply_log_level(d);
                for (size_t i = 0; i < d->n_svc; i++)
                        if (d->svc[i].started && d->svc[i].ops->reload)
                                d->svc[i].ops->reload(d->svc[i].data);
                nodecmd_log(d, NODECMD_INFO, "configuration reloaded", "config=%s",
                            nodecmd_q(d, 0, d->opts->config));
        }
        free(rl);
        nodecmd_job_done(d, job);
}

/* The first key whose value differs between two sections, other than the live ones. */
static const char *section_change(json_object *a, json_object *b)
{
        static const char *const live[] = {"logLevel", NULL};
        json_object_object_foreach(a, ka, va)
        {
                json_object *vb = NULL;
                bool is_live = false;
                for (size_t i = 0; live[i]; i++)
                        is_live |= strcmp(ka, live[i]) == 0;
                if (is_live)
                        continue;
                if (!json_object_object_get_ex(b, ka, &vb) || !json_object_equal(va, vb))
                        return ka;
        }
        json_object_object_foreach(b, kb, vb2)
        {
                (void)vb2;
                if (!json_object_object_get_ex(a, kb, NULL) && strcmp(kb, "logLevel") != 0)
                        return kb;
        }
        return NULL;
}

int nodecmd_load_section(const char *path, json_object **ret, ncm_error *err)
{
        ncm_autofree char *text = NULL;
        json_object *o;
        int r = ncm_ctl_config_section(path, "nodecmd", &text, err);

        if (r < 0)
                return r;
        o = json_tokener_parse(text);
        if (!o)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = o;
        return 0;
}

static void do_reload(nodecmd *d)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_config *cfg = NULL;
        json_object *section = NULL;
        const char *field = NULL;
        ncm_node_config_change ch;
        reload *rl;

        if (ncm_node_config_load_file(d->opts->config, &cfg, &err) < 0 ||
            nodecmd_load_section(d->opts->config, &section, &err) < 0 ||
            nodecmd_check_section(section, d->opts->config, &err) < 0) {
                nodecmd_log(d, NODECMD_ERROR, "configuration reload refused", "config=%s error=%s",
                            nodecmd_q(d, 0, d->opts->config), nodecmd_q(d, 1, err.msg));
                ncm_node_config_free(cfg);
                json_object_put(section);
                return;
        }
        ch = ncm_node_config_compare(d->cfg, cfg, &field);
        if (ch != NCM_NODE_CONFIG_RESTART) {
                const char *sf = section_change(d->section, section);
                if (sf) {
                        static char buf[128];
                        snprintf(buf, sizeof(buf), "nodecmd.%s", sf);
                        field = buf;
                        ch = NCM_NODE_CONFIG_RESTART;
                }
        }
        if (ch == NCM_NODE_CONFIG_RESTART) {
                nodecmd_log(d, NODECMD_WARN, "configuration reload refused",
                            "config=%s field=%s reason=%s", nodecmd_q(d, 0, d->opts->config),
                            nodecmd_q(d, 1, field ? field : "?"),
                            nodecmd_q(d, 2,
                                      "the field takes effect only at start: restart "
                                      "nodecmd to apply it"));
                ncm_node_config_free(cfg);
                json_object_put(section);
                return;
        }
        rl = calloc(1, sizeof(*rl));
        if (!rl || !nodecmd_submit(d, "reload", reload_job, rl)) {
                nodecmd_log(d, NODECMD_ERROR, "configuration reload failed", "error=%s",
                            nodecmd_q(d, 0, "out of memory"));
                free(rl);
                ncm_node_config_free(cfg);
                json_object_put(section);
                return;
        }
        rl->cfg = cfg;
        rl->section = section;
}

static void on_signal(uv_signal_t *h, int signum)
{
        nodecmd *d = h->data;

        if (signum == SIGHUP) {
                nodecmd_log(d, NODECMD_INFO, "reloading configuration", "signal=SIGHUP config=%s",
                            nodecmd_q(d, 0, d->opts->config));
                if (!d->stopping)
                        do_reload(d);
                return;
        }
        stop(d, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

/* ---- start-up ------------------------------------------------------------------------------ */

void nodecmd_apply_log_level(nodecmd *d)
{
        const char *v = nodecmd_section_string(d, "logLevel");
        int l;

        if (d->opts->log_level)
                v = d->opts->log_level;
        l = v ? nodecmd_level_from_name(v) : NODECMD_INFO;
        d->level = l < 0 ? NODECMD_INFO : (nodecmd_level)l;
}

/* The keys of the nodecmd section, so that a misspelt one is an error rather than ignored. */
static const char *const section_keys[] = {"controlSocket",
                                           "metricsAddress",
                                           "logLevel",
                                           "devicePluginsDirectory",
                                           "devicePluginAllocateTimeout",
                                           "devicePluginGracePeriod",
                                           "podResourcesSocket",
                                           "runtimeEndpoint",
                                           "criListen",
                                           "commit",
                                           NULL};

int nodecmd_check_section(json_object *section, const char *path, ncm_error *err)
{
        json_object_object_foreach(section, k, v)
        {
                bool known = false;
                for (size_t i = 0; section_keys[i]; i++)
                        known |= strcmp(k, section_keys[i]) == 0;
                if (!known)
                        return ncm_error_set(err, EINVAL, "%s: nodecmd.%s: unknown field", path, k);
                if (!json_object_is_type(v, json_type_string))
                        return ncm_error_set(err, EINVAL, "%s: nodecmd.%s: expected a string", path,
                                             k);
        }
        {
                json_object *m = NULL;
                if (json_object_object_get_ex(section, "commit", &m) &&
                    strcmp(json_object_get_string(m), "group") != 0 &&
                    strcmp(json_object_get_string(m), "each") != 0)
                        return ncm_error_set(err, EINVAL,
                                             "%s: nodecmd.commit: expected group or each, got "
                                             "\"%s\"",
                                             path, json_object_get_string(m));
        }
        {
                json_object *l = NULL;
                if (json_object_object_get_ex(section, "logLevel", &l) &&
                    nodecmd_level_from_name(json_object_get_string(l)) < 0)
                        return ncm_error_set(err, EINVAL,
                                             "%s: nodecmd.logLevel: expected error, warn, info or "
                                             "debug, got \"%s\"",
                                             path, json_object_get_string(l));
        }
        return 0;
}

static int make_enforcer(nodecmd *d, ncm_error *err)
{
        const char *kind = ncm_node_config_enforcement(d->cfg);
        ncm_enforcer_cgroup_options eo = {0};

        /* with a CRI runtime the runtime makes the cgroups: the cri enforcer records the
         * cpusets, which CreateContainer and UpdateContainerResources carry; CRI-O's knobs are
         * still nodecm's to make, on the runtime's cgroups (a knobs enforcer inside it), unless
         * nothing is to be enforced */
        if (nodecmd_runtime_endpoint(d)) {
                ncm_enforcer *knobs = NULL;
                int r = 0;
                eo.mount_root = d->opts->cgroup_mount;
                if (ncm_node_config_enforcement_kind(d->cfg) != NCM_NODE_ENFORCEMENT_NONE)
                        r = ncm_enforcer_knobs_new(&eo, &knobs, err);
                return r < 0 ? r : ncm_enforcer_cri_new(knobs, &d->enforcer, err);
        }
        if (ncm_node_config_enforcement_kind(d->cfg) == NCM_NODE_ENFORCEMENT_NONE)
                return ncm_enforcer_none_new(&d->enforcer, err);
        if (ncm_node_config_enforcement_kind(d->cfg) == NCM_NODE_ENFORCEMENT_CGROUPFS) {
                eo.mount_root = d->opts->cgroup_mount;
                return ncm_enforcer_cgroupfs_new(&eo, &d->enforcer, err);
        }
        /* the plan enforcer keeps every transaction's writes: right for one command, a leak
         * for a daemon */
        return ncm_error_set(err, EINVAL,
                             "%s: enforcement: \"%s\" is for one-shot commands; nodecmd takes "
                             "\"cgroupfs\" or \"none\"",
                             d->opts->config, kind);
}

static int open_node(nodecmd *d, ncm_error *err)
{
        ncm_node_dir_options o = {0};
        ncm_resource_list machine = {0};
        int r;

        o.enforcer = d->enforcer;
        /* the resource-fit admission's capacity: this machine's, when the topology is */
        if (!d->opts->topo_arg) {
                ncm_autoclose int rootfd = ncm_fs_open_root("/", err);
                if (rootfd < 0)
                        return rootfd;
                r = ncm_cgroup_machine_capacity(rootfd, d->root_dir, &machine, err);
                if (r < 0)
                        return r;
                o.capacity = &machine;
        }
        /* device locality reads the machine the topology came from (--fsroot), else this one */
        if (d->opts->topo_kind == NCM_TOPO_SOURCE_FSROOT)
                o.machine_root = d->opts->topo_arg;
        /* a second daemon on the same directory must not wait for the first one to end */
        o.flags = NCM_NODE_DIR_INIT | NCM_NODE_DIR_NOWAIT | NCM_NODE_DIR_START;
        r = ncm_node_dir_open(d->root_dir, d->topo, d->cfg, &o, &d->dir, err);
        ncm_resource_list_done(&machine);
        if (r == -EWOULDBLOCK)
                return ncm_error_prefix(err,
                                        "root directory '%s' is in use by another nodecmd "
                                        "or nodecm command",
                                        d->root_dir);
        return r;
}

int nodecmd_new(const nodecmd_options *opts, nodecmd **ret, ncm_error *err)
{
        nodecmd *d = calloc(1, sizeof(*d));
        uint64_t t0 = nodecmd_now_ns();
        int r;

        if (!d)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = d;
        d->opts = opts;
        d->level = NODECMD_INFO;
        r = uv_loop_init(&d->loop);
        if (r < 0)
                return ncm_error_set(err, -r, "event loop: %s", uv_strerror(r));
        uv_idle_init(&d->loop, &d->kick);
        d->kick.data = d;
        uv_idle_init(&d->loop, &d->commit);
        d->commit.data = d;
        uv_timer_init(&d->loop, &d->flush);
        d->flush.data = d;
        /* The handlers come before any socket exists: a SIGTERM sent as soon as a socket
         * appears (a supervisor stopping a start it no longer wants) must stop nodecmd cleanly,
         * not kill it by the default action. A signal caught during the start waits in libuv's
         * pipe and is handled by the first turn of the loop, once every service is up. */
        uv_signal_init(&d->loop, &d->sig_term);
        uv_signal_init(&d->loop, &d->sig_int);
        uv_signal_init(&d->loop, &d->sig_hup);
        d->signals_up = true;
        d->sig_term.data = d->sig_int.data = d->sig_hup.data = d;
        uv_signal_start(&d->sig_term, on_signal, SIGTERM);
        uv_signal_start(&d->sig_int, on_signal, SIGINT);
        uv_signal_start(&d->sig_hup, on_signal, SIGHUP);
        /* the signals alone must not keep the loop alive once the services are gone */
        uv_unref((uv_handle_t *)&d->sig_hup);
        r = ncm_node_config_load_file(opts->config, &d->cfg, err);
        if (r >= 0)
                r = nodecmd_load_section(opts->config, &d->section, err);
        if (r >= 0)
                r = nodecmd_check_section(d->section, opts->config, err);
        if (r < 0)
                return r;
        nodecmd_apply_log_level(d);
        /* what the kubelet would log reading the file (an ignored field, a repeated key) */
        for (size_t i = 0; i < ncm_node_config_n_warnings(d->cfg); i++)
                nodecmd_log(d, NODECMD_WARN, "configuration", "config=%s warning=%s",
                            nodecmd_q(d, 0, opts->config),
                            nodecmd_q(d, 1, ncm_node_config_warning(d->cfg, i)));
        if (opts->root_dir)
                d->root_dir = strdup(opts->root_dir);
        else if (ncm_node_config_root_dir(d->cfg)[0])
                d->root_dir = strdup(ncm_node_config_root_dir(d->cfg));
        else
                d->root_dir = strdup("/var/lib/nodecm");
        if (!d->root_dir)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = ncm_topo_load_rules(opts->topo_kind, opts->topo_arg ? opts->topo_arg : "/",
                                opts->topo_rules, &d->topo, err);
        if (r >= 0 && opts->topo_memory &&
            (r = ncm_topo_apply_memory_spec(d->topo, opts->topo_memory, err)) < 0)
                ncm_error_prefix(err, "--numa-memory");
        if (r < 0)
                return r;
        r = make_enforcer(d, err);
        if (r < 0)
                return r;
        r = open_node(d, err);
        if (r < 0)
                return r;
        d->target.node = ncm_node_dir_node(d->dir);
        d->target.dir = d->root_dir;
        d->target.enforcer = ncm_enforcer_name(d->enforcer);

        for (const nodecmd_service_ops *const *s = nodecmd_services; *s; s++)
                d->n_svc++;
        d->svc = calloc(d->n_svc, sizeof(*d->svc));
        if (!d->svc)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < d->n_svc; i++) {
                d->svc[i].ops = nodecmd_services[i];
                r = d->svc[i].ops->start(d, &d->svc[i].data, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s", d->svc[i].ops->name);
                d->svc[i].started = true;
        }
        nodecmd_log(d, NODECMD_INFO, "ready",
                    "root=%s pods=%zu cpus=%d enforcer=%s policy=%s startup_ms=%.3f",
                    nodecmd_q(d, 0, d->root_dir), ncm_node_num_pods(nodecmd_node(d)),
                    ncm_topo_num_cpus(d->topo), d->target.enforcer,
                    ncm_node_config_cpu_policy(d->cfg), (double)(nodecmd_now_ns() - t0) / 1e6);
        return 0;
}

int nodecmd_run(nodecmd *d)
{
        uv_run(&d->loop, UV_RUN_DEFAULT);
        return d->exit_code;
}

static void close_any(uv_handle_t *h, void *arg)
{
        if (!uv_is_closing(h))
                uv_close(h, NULL);
}

nodecmd *nodecmd_free(nodecmd *d)
{
        if (!d)
                return NULL;
        /* after a failed start: services that began (even the one that failed) stop first,
         * so that they close their own handles and free what those hold */
        if (!d->stopping)
                for (size_t i = d->n_svc; i-- > 0;)
                        if (d->svc[i].data && !d->svc[i].stopped && d->svc[i].ops->stop) {
                                d->svc[i].stopped = true;
                                d->svc[i].ops->stop(d->svc[i].data);
                        }
        /* after a failed start the signal handles (set up first) would keep the loop alive */
        if (!d->stopping && d->signals_up && !uv_is_closing((uv_handle_t *)&d->sig_term))
                close_signals(d);
        uv_run(&d->loop, UV_RUN_DEFAULT);
        /* whatever is left open (signals after a failed start) */
        uv_walk(&d->loop, close_any, NULL);
        uv_run(&d->loop, UV_RUN_DEFAULT);
        for (size_t i = d->n_svc; i-- > 0;)
                if (d->svc[i].data && d->svc[i].ops->free)
                        d->svc[i].ops->free(d->svc[i].data);
        (void)uv_loop_close(&d->loop);
        while (d->head) {
                nodecmd_job *j = d->head;
                d->head = j->next;
                free(j);
        }
        free(d->svc);
        free(d->waiters);
        ncm_node_dir_close(d->dir);
        ncm_enforcer_free(d->enforcer);
        ncm_topo_free(d->topo);
        ncm_node_config_free(d->cfg);
        json_object_put(d->section);
        free(d->root_dir);
        free(d);
        return NULL;
}
