/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime's side of the cri enforcer, without I/O: what UpdateContainerResources calls to
 * make, and when, from what the owner tells it (the intents a commit published, a reconcile
 * wanted, the runtime's replies, the time). It never sends, decides or sleeps: it hands the
 * owner the next action (a request to send, the listed containers to decide on, a note to
 * log) and the next deadline, as lib/rpc's connections are driven by their uv binding. So
 * every path of the protocol runs in a unit test with scripted replies.
 *
 * Two flows share the calls in flight (at most max_in_flight):
 *  - intents: each container's newest intent is sent as UpdateContainerResources, one call
 *    per container at a time (a newer intent waits for the call in flight, then goes);
 *  - a run (the kubelet's reconcileState against the runtime): ListContainers, the owner's
 *    decision on what is listed (ncm_cri_node_reconcile), then ContainerStatus of each and
 *    UpdateContainerResources where the runtime's cpusets differ (a cpuset changed behind
 *    nodecm's back comes back). One run at a time; one wanted during a run runs after it.
 *    Containers with an intent on its way are left to it.
 * An update that fails is tried again by the next run; a container whose updates fail twice
 * in a row (a run's and the one before) is a warning, once an ordinary debug line (the
 * kubelet stopping it races the update).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cri.h>
#include "base/array.h"
#include "base/strindex.h"

enum { RUN_IDLE, RUN_LISTING, RUN_DECIDING, RUN_STATUS };
enum { CALL_LIST, CALL_STATUS, CALL_RUN_UPDATE, CALL_INTENT };

typedef struct call {
        uint64_t token;
        int kind;
        size_t i;           /* CALL_STATUS, CALL_RUN_UPDATE: the run's update */
        ncm_cri_update own; /* CALL_INTENT: the intent sent */
} call;

typedef struct idset {
        char **v;
        size_t n, cap;
} idset;

struct ncm_cri_sync {
        ncm_cri_sync_options o;
        uint64_t started_ns;
        bool stopped;
        uint64_t next_token;

        /* the run */
        int run;
        bool wanted;
        bool waited_orphans; /* a run decided before the orphans' grace was over */
        uint64_t run_t0;
        ncm_cri_container *listed; /* handed to the owner (DECIDE) */
        size_t n_listed;
        bool decide_out; /* the DECIDE action is still to give */
        ncm_cri_update *upd;
        size_t n_upd, next_upd;
        uint64_t run_fixed;

        /* intents waiting to be sent, by container id (the newest one each) */
        ncm_cri_update *q;
        size_t n_q, cap_q;
        ncm__strindex qix;

        /* calls in flight */
        call *calls;
        size_t n_calls, cap_calls;

        /* what the owner is to do next: requests to send, notes, in order */
        ncm_cri_sync_action *out;
        size_t n_out, cap_out, head_out;
        ncm_cri_sync_action cur; /* the action given last, owned until the next call */

        /* the ids whose update failed in the last run, and since it */
        idset failed_last, failed_now;

        ncm_cri_sync_stats stats;
};

static void update_done(ncm_cri_update *u)
{
        free(u->id);
        free(u->cpuset_cpus);
        free(u->cpuset_mems);
        *u = (ncm_cri_update){0};
}

static void action_done(ncm_cri_sync_action *a)
{
        free(a->own[0]);
        free(a->own[1]);
        free(a->own[2]);
        free(a->own[3]);
        ncm_cri_containers_free(a->listed, a->n_listed);
        *a = (ncm_cri_sync_action){0};
}

static void idset_clear(idset *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        *s = (idset){0};
}

static bool idset_has(const idset *s, const char *id)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->v[i], id) == 0)
                        return true;
        return false;
}

/* Out of memory: ID is not remembered, and its next failure counts as a first one. */
static void idset_add(idset *s, const char *id)
{
        char *d;

        if (idset_has(s, id) || ncm__array_grow(s->v, s->cap, s->n) < 0 || !(d = strdup(id)))
                return;
        s->v[s->n++] = d;
}

int ncm_cri_sync_new(const ncm_cri_sync_options *o, uint64_t now_ns, ncm_cri_sync **ret)
{
        ncm_cri_sync *s = calloc(1, sizeof(*s));

        *ret = NULL;
        if (!s)
                return -ENOMEM;
        if (o)
                s->o = *o;
        if (!s->o.call_timeout_ms)
                s->o.call_timeout_ms = 10000;
        if (!s->o.max_in_flight)
                s->o.max_in_flight = 64;
        s->started_ns = now_ns;
        s->next_token = 1;
        /* what a previous process left is settled at once, not a period later */
        s->wanted = true;
        *ret = s;
        return 0;
}

ncm_cri_sync *ncm_cri_sync_free(ncm_cri_sync *s)
{
        if (!s)
                return NULL;
        ncm_cri_containers_free(s->listed, s->n_listed);
        ncm_cri_updates_free(s->upd, s->n_upd);
        for (size_t i = 0; i < s->n_q; i++)
                update_done(&s->q[i]);
        free(s->q);
        ncm__strindex_done(&s->qix);
        for (size_t i = 0; i < s->n_calls; i++)
                update_done(&s->calls[i].own);
        free(s->calls);
        for (size_t i = s->head_out; i < s->n_out; i++)
                action_done(&s->out[i]);
        free(s->out);
        action_done(&s->cur);
        idset_clear(&s->failed_last);
        idset_clear(&s->failed_now);
        free(s);
        return NULL;
}

const ncm_cri_sync_stats *ncm_cri_sync_get_stats(const ncm_cri_sync *s)
{
        return &s->stats;
}

/* Queue an action (its strings copied). Out of memory: a note is lost, a request is failed
 * at once (*RET_TOKEN 0), as the runtime not answering would be. */
static ncm_cri_sync_action *push(ncm_cri_sync *s, int what)
{
        ncm_cri_sync_action *a;

        if (s->head_out == s->n_out)
                s->head_out = s->n_out = 0;
        if (ncm__array_grow(s->out, s->cap_out, s->n_out) < 0)
                return NULL;
        a = &s->out[s->n_out++];
        *a = (ncm_cri_sync_action){0};
        a->what = what;
        return a;
}

static void note(ncm_cri_sync *s, int kind, const char *id, const char *text, const char *cpus,
                 const char *was, ncm_rpc_code code)
{
        ncm_cri_sync_action *a = push(s, NCM_CRI_SYNC_NOTE);
        const char *src[4] = {id, text, cpus, was};

        if (!a)
                return;
        a->note = kind;
        a->code = code;
        for (int i = 0; i < 4; i++)
                if (src[i] && !(a->own[i] = strdup(src[i]))) {
                        action_done(a);
                        s->n_out--;
                        return;
                }
        a->id = a->own[0];
        a->text = a->own[1] ? a->own[1] : "";
        a->cpuset_cpus = a->own[2];
        a->was = a->own[3];
}

/* A call of KIND for the request Q: queued as a SEND, recorded in flight. */
static call *send_call(ncm_cri_sync *s, int kind, const ncm_cri_request *q)
{
        ncm_cri_sync_action *a;
        call *c;

        if (ncm__array_grow(s->calls, s->cap_calls, s->n_calls) < 0)
                return NULL;
        a = push(s, NCM_CRI_SYNC_SEND);
        if (!a)
                return NULL;
        a->req = *q;
        a->timeout_ms = s->o.call_timeout_ms;
        a->token = s->next_token++;
        /* the request's strings outlive the action: the run's or the call's own */
        c = &s->calls[s->n_calls++];
        *c = (call){.token = a->token, .kind = kind};
        return c;
}

static void finish_run(ncm_cri_sync *s, bool failed, uint64_t now_ns)
{
        ncm_cri_updates_free(s->upd, s->n_upd);
        s->upd = NULL;
        s->n_upd = s->next_upd = 0;
        s->run = RUN_IDLE;
        s->stats.runs++;
        s->stats.last_ns = now_ns - s->run_t0;
        s->stats.last_updates = s->run_fixed;
        s->run_fixed = 0;
        if (failed)
                s->stats.failures++;
        idset_clear(&s->failed_last);
        s->failed_last = s->failed_now;
        s->failed_now = (idset){0};
}

static bool queued(const ncm_cri_sync *s, const char *id);
static bool sending(const ncm_cri_sync *s, const char *id);
static void q_remove(ncm_cri_sync *s, size_t k);

/* Start what may start now: a wanted run, intents, the run's status calls. */
static void pump(ncm_cri_sync *s, uint64_t now_ns)
{
        if (s->stopped)
                return;
        if (s->run == RUN_IDLE && s->wanted) {
                ncm_cri_request q = {.method = NCM_CRI_LIST_CONTAINERS, .state = -1};
                s->wanted = false;
                s->run_t0 = now_ns;
                if (send_call(s, CALL_LIST, &q))
                        s->run = RUN_LISTING;
                else
                        finish_run(s, true, now_ns);
        }
        /* intents first: they carry what a commit just decided; one call per container at
         * a time (a newer intent waits for the one in flight) */
        for (size_t k = s->n_q; k-- > 0 && s->n_calls < s->o.max_in_flight;) {
                ncm_cri_request q = {.method = NCM_CRI_UPDATE_CONTAINER_RESOURCES};
                call *c;
                if (sending(s, s->q[k].id))
                        continue;
                q.id = s->q[k].id;
                q.cpuset_cpus = s->q[k].cpuset_cpus;
                q.cpuset_mems = s->q[k].cpuset_mems;
                c = send_call(s, CALL_INTENT, &q);
                if (!c)
                        break;
                c->own = s->q[k];
                q_remove(s, k);
        }
        while (s->run == RUN_STATUS && s->next_upd < s->n_upd && s->n_calls < s->o.max_in_flight) {
                size_t i = s->next_upd++;
                ncm_cri_request q = {.method = NCM_CRI_CONTAINER_STATUS, .id = s->upd[i].id};
                call *c;
                if (queued(s, s->upd[i].id) || sending(s, s->upd[i].id))
                        continue; /* its intent is newer than this run's decision */
                c = send_call(s, CALL_STATUS, &q);
                if (!c) {
                        s->next_upd = s->n_upd; /* the rest waits for the next run */
                        break;
                }
                c->i = i;
        }
        if (s->run == RUN_STATUS && s->next_upd >= s->n_upd) {
                bool busy = false;
                for (size_t i = 0; i < s->n_calls && !busy; i++)
                        busy = s->calls[i].kind == CALL_STATUS ||
                               s->calls[i].kind == CALL_RUN_UPDATE;
                if (!busy) {
                        finish_run(s, false, now_ns);
                        if (s->wanted)
                                pump(s, now_ns);
                }
        }
}

void ncm_cri_sync_want(ncm_cri_sync *s)
{
        s->wanted = true;
}

void ncm_cri_sync_stop(ncm_cri_sync *s)
{
        s->stopped = true;
}

static bool id_eq(size_t pos, const void *ctx)
{
        const struct {
                const ncm_cri_update *q;
                const char *id;
        } *k = ctx;
        return strcmp(k->q[pos].id, k->id) == 0;
}

static ssize_t q_find(const ncm_cri_sync *s, const char *id)
{
        struct {
                const ncm_cri_update *q;
                const char *id;
        } k = {s->q, id};
        return ncm__strindex_find(&s->qix, ncm__strindex_hash(id, NULL), id_eq, &k);
}

/* Intent K leaves the queue (sent: its strings are the call's now): the last takes its place. */
static void q_remove(ncm_cri_sync *s, size_t k)
{
        size_t last = s->n_q - 1;

        ncm__strindex_del(&s->qix, ncm__strindex_hash(s->q[k].id, NULL), k);
        if (k != last) {
                ncm__strindex_move(&s->qix, ncm__strindex_hash(s->q[last].id, NULL), last, k);
                s->q[k] = s->q[last];
        }
        s->q[last] = (ncm_cri_update){0};
        s->n_q--;
}

static bool queued(const ncm_cri_sync *s, const char *id)
{
        return q_find(s, id) >= 0;
}

static bool sending(const ncm_cri_sync *s, const char *id)
{
        for (size_t i = 0; i < s->n_calls; i++)
                if (s->calls[i].kind == CALL_INTENT && strcmp(s->calls[i].own.id, id) == 0)
                        return true;
        return false;
}

int ncm_cri_sync_intents(ncm_cri_sync *s, ncm_cri_update *v, size_t n)
{
        int r = 0;

        if (s->stopped) {
                ncm_cri_updates_free(v, n);
                return 0; /* nothing new starts */
        }
        if (ncm__array_grow(s->q, s->cap_q, s->n_q + n) < 0 ||
            ncm__strindex_reserve(&s->qix, n) < 0)
                r = -ENOMEM;
        for (size_t i = 0; i < n && r >= 0; i++) {
                ssize_t k = q_find(s, v[i].id);
                if (k >= 0) {
                        /* the newer intent replaces the one that waits */
                        update_done(&s->q[k]);
                        s->q[k] = v[i];
                } else {
                        s->q[s->n_q] = v[i];
                        (void)ncm__strindex_add(&s->qix, ncm__strindex_hash(v[i].id, NULL),
                                                s->n_q++);
                }
                v[i] = (ncm_cri_update){0};
        }
        ncm_cri_updates_free(v, n);
        return r;
}

void ncm_cri_sync_decided(ncm_cri_sync *s, int error, ncm_cri_update *upd, size_t n,
                          uint64_t now_ns)
{
        if (s->run != RUN_DECIDING || s->stopped || error < 0) {
                ncm_cri_updates_free(upd, n);
                if (s->run == RUN_DECIDING)
                        finish_run(s, true, now_ns);
                return;
        }
        s->upd = upd;
        s->n_upd = n;
        s->next_upd = 0;
        s->run = RUN_STATUS;
}

/* What an update's answer R means for container ID. */
static void updated(ncm_cri_sync *s, const char *id, const ncm_cri_reply *r, bool run)
{
        const char *msg = r->message ? r->message : "";

        if (r->code == NCM_RPC_OK) {
                if (run) {
                        s->stats.updates++;
                        s->run_fixed++;
                } else {
                        s->stats.intent_updates++;
                }
        } else if (r->code == NCM_RPC_NOT_FOUND) {
                note(s, NCM_CRI_SYNC_NOTE_GONE, id, msg, NULL, NULL, r->code);
        } else if (idset_has(&s->failed_last, id) || idset_has(&s->failed_now, id)) {
                note(s, NCM_CRI_SYNC_NOTE_FAILED, id, msg, NULL, NULL, r->code);
        } else {
                note(s, NCM_CRI_SYNC_NOTE_FAILED_ONCE, id, msg, NULL, NULL, r->code);
                idset_add(&s->failed_now, id);
        }
}

void ncm_cri_sync_reply(ncm_cri_sync *s, uint64_t token, ncm_cri_reply *r, uint64_t now_ns)
{
        size_t k = 0;
        call c;

        while (k < s->n_calls && s->calls[k].token != token)
                k++;
        if (k == s->n_calls)
                return;
        c = s->calls[k];
        s->calls[k] = s->calls[--s->n_calls];
        switch (c.kind) {
        case CALL_LIST:
                if (r->code != NCM_RPC_OK || s->stopped) {
                        if (r->code != NCM_RPC_OK)
                                note(s, NCM_CRI_SYNC_NOTE_LIST_FAILED, NULL,
                                     r->message ? r->message : "", NULL, NULL, r->code);
                        finish_run(s, true, now_ns);
                        break;
                }
                /* the owner decides on them (ncm_cri_node_reconcile), then says so */
                s->listed = r->containers;
                s->n_listed = r->n_containers;
                r->containers = NULL;
                r->n_containers = 0;
                s->decide_out = true;
                s->run = RUN_DECIDING;
                break;
        case CALL_STATUS: {
                const ncm_cri_update *u = &s->upd[c.i];
                const ncm_cri_container *have = r->n_containers == 1 ? &r->containers[0] : NULL;
                if (r->code == NCM_RPC_OK && have && !s->stopped &&
                    have->state == NCM_CRI_CONTAINER_RUNNING && !queued(s, u->id) &&
                    !sending(s, u->id) &&
                    (ncm_cri_cpuset_differs(u->cpuset_cpus, have->resources.cpuset_cpus) ||
                     ncm_cri_cpuset_differs(u->cpuset_mems, have->resources.cpuset_mems))) {
                        ncm_cri_request q = {.method = NCM_CRI_UPDATE_CONTAINER_RESOURCES,
                                             .id = u->id,
                                             .cpuset_cpus = u->cpuset_cpus,
                                             .cpuset_mems = u->cpuset_mems};
                        call *nc;
                        note(s, NCM_CRI_SYNC_NOTE_PUT_BACK, u->id, NULL, u->cpuset_cpus,
                             have->resources.cpuset_cpus, NCM_RPC_OK);
                        nc = send_call(s, CALL_RUN_UPDATE, &q);
                        if (nc)
                                nc->i = c.i;
                }
                break;
        }
        case CALL_RUN_UPDATE:
                updated(s, s->upd[c.i].id, r, true);
                break;
        case CALL_INTENT:
                updated(s, c.own.id, r, false);
                update_done(&c.own);
                break;
        }
        pump(s, now_ns);
}

void ncm_cri_sync_tick(ncm_cri_sync *s, uint64_t now_ns)
{
        if (s->waited_orphans && now_ns - s->started_ns >= s->o.orphan_grace_ns) {
                /* the grace is over: a run releases what never appeared */
                s->waited_orphans = false;
                s->wanted = true;
        }
}

uint64_t ncm_cri_sync_deadline(const ncm_cri_sync *s)
{
        return s->waited_orphans && !s->stopped ? s->started_ns + s->o.orphan_grace_ns : UINT64_MAX;
}

int ncm_cri_sync_next(ncm_cri_sync *s, uint64_t now_ns, ncm_cri_sync_action *a)
{
        action_done(&s->cur);
        pump(s, now_ns);
        if (s->head_out < s->n_out) {
                s->cur = s->out[s->head_out++];
                *a = s->cur;
                a->listed = NULL;
                a->n_listed = 0;
                return 1;
        }
        if (s->decide_out && !s->stopped) {
                s->decide_out = false;
                s->cur = (ncm_cri_sync_action){.what = NCM_CRI_SYNC_DECIDE};
                s->cur.release_orphans = now_ns - s->started_ns >= s->o.orphan_grace_ns;
                s->waited_orphans = !s->cur.release_orphans;
                /* the owner takes the list (a->listed: *A's, freed by the owner) */
                *a = s->cur;
                a->listed = s->listed;
                a->n_listed = s->n_listed;
                s->listed = NULL;
                s->n_listed = 0;
                return 1;
        }
        *a = (ncm_cri_sync_action){0};
        return 0;
}
