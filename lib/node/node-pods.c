/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pods a persistent node holds: dir/nodecm_pods and its journal.
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nodecm/fs.h>
#include "base/array.h"
#include "base/json.h"
#include "node-internal.h"
#include "pod/pod-internal.h"

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* ------------------------------------------------------------------------------------------
 * The pods of a persistent node: dir/nodecm_pods
 *
 *   {"generation": 3, "pods": [
 *   {"removed": ["init"], "pod": {"apiVersion": "v1", "kind": "Pod", ...}},
 *   ...]}
 *
 * sorted by pod UID, one record per line, each pod as ncm_pod_format_json() writes it; and its
 * journal dir/nodecm_pods_journal, what changed since, one line per change:
 *
 *   {"gen": 3, "put": {"removed": [], "pod": {...}}}
 *   {"gen": 3, "drop": "<uid>"}
 *
 * A change appends its pod's line instead of rewriting every pod (O(pod), not O(node)). The
 * file is rewritten whole, as the next generation and with the journal replaced by an empty
 * one after it, when the journal has grown past the pods by NCM__JOURNAL_SLACK lines, on a
 * rollback, and when a start found the journal's last line cut short by a crash. Lines of another
 * generation (a crash between the two files) are skipped.
 */

/* Pod P's record, container RM_NAME counted as removed too (NULL: none). */
static void format_pod_record(const node_pod *p, const char *rm_name, ncm_buf *b)
{
        bool first = true;

        ncm_buf_puts(b, "{\"removed\": [");
        for (size_t k = 0; k < p->n; k++) {
                if (!p->c[k].removed && !(rm_name && strcmp(p->c[k].name, rm_name) == 0))
                        continue;
                ncm_buf_puts(b, first ? "" : ", ");
                ncm_buf_json_string(b, p->c[k].name, strlen(p->c[k].name));
                first = false;
        }
        ncm_buf_puts(b, "], \"pod\": ");
        ncm_pod_format_json(p->spec, b);
        if (b->len && b->data[b->len - 1] == '\n')
                b->len--;
        ncm_buf_putc(b, '}');
}

/*
 * Write dir/nodecm_pods from the registry as it will be once SKIP_UID is removed (NULL: none)
 * and container RM_NAME of RM_UID is marked removed (NULL: none), without changing the
 * registry: removals write the record first, so that a crash between the files leaves CPUs
 * held by a pod no one knows (a retried removal frees them) rather than a pod that lost them.
 * The next generation, its journal emptied after it.
 */
static int persist_pods_view(ncm_node *n, const char *skip_uid, const char *rm_uid,
                             const char *rm_name, ncm_error *err)
{
        ncm_autofree char *path = NULL;
        ncm_autofree char *journal = NULL;
        ncm_buf b = NCM_BUF_INIT;
        bool any = false;
        int r;

        if (asprintf(&path, "%s/%s", n->dir, NCM_NODE_PODS_NAME) < 0 ||
            asprintf(&journal, "%s/%s", n->dir, NCM_NODE_PODS_JOURNAL_NAME) < 0)
                return oom(err);
        ncm_buf_printf(&b, "{\"generation\": %llu, \"pods\": [",
                       (unsigned long long)n->pods_jn.gen + 1);
        for (size_t i = 0; i < n->n_pods; i++) {
                const node_pod *p = n->pods[i];
                if (skip_uid && strcmp(p->uid, skip_uid) == 0)
                        continue;
                ncm_buf_puts(&b, any ? ",\n" : "\n");
                any = true;
                format_pod_record(p, rm_uid && strcmp(p->uid, rm_uid) == 0 ? rm_name : NULL, &b);
        }
        ncm_buf_puts(&b, "]}\n");
        if (ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return oom(err);
        }
        r = ncm__node_txn_begin(n, err);
        if (r >= 0)
                r = ncm__node_write(n, path, b.data, b.len, err);
        ncm_buf_done(&b);
        /* after the pods: a crash between the two leaves lines of the last generation, skipped */
        if (r >= 0)
                r = ncm__node_write(n, journal, "", 0, err);
        if (r >= 0)
                ncm__journal_compacted(&n->pods_jn);
        if (r >= 0)
                r = ncm__node_txn_commit(n, err);
        ncm__node_txn_end(n);
        return r;
}

int ncm__node_persist_pods(ncm_node *n, ncm_error *err)
{
        return persist_pods_view(n, NULL, NULL, NULL, err);
}

void ncm__node_pods_journal(ncm_node *n, uint64_t generation, size_t lines)
{
        n->pods_jn = (ncm__journal){.gen = generation, .lines = lines};
        n->pods_journal = true;
}

/*
 * The change to POD_UID's record: its line appended to the journal (its record as it will be
 * with container RM_NAME removed too; DROP, or not in the registry: the pod gone), or, for a
 * node that keeps no journal or whose journal has grown long, the whole file as
 * persist_pods_view() writes it. A rollback writes the pod's line as the registry has it again.
 */
int ncm__node_persist_pod(ncm_node *n, const char *uid, const char *rm_name, bool drop,
                          ncm_error *err)
{
        const node_pod *p = ncm__node_pod_find(n, uid);
        ncm_autofree char *journal = NULL;
        ncm_buf line = NCM_BUF_INIT;
        int r;

        /* the whole file now and then: a transaction that fails puts the generation back; under
         * group commit the flush does it, after the kubelet's files (ncm_node_flush) */
        if (!n->pods_journal ||
            (ncm__journal_over(&n->pods_jn, n->n_pods, 1) && !ncm__node_deferring(n)))
                return persist_pods_view(n, drop ? uid : NULL, drop ? NULL : uid, rm_name, err);
        if (asprintf(&journal, "%s/%s", n->dir, NCM_NODE_PODS_JOURNAL_NAME) < 0)
                return oom(err);
        ncm__journal_begin(&n->pods_jn, &line);
        if (drop || !p) {
                ncm_buf_puts(&line, "\"drop\": ");
                ncm_buf_json_string(&line, uid, strlen(uid));
        } else {
                ncm_buf_puts(&line, "\"put\": ");
                format_pod_record(p, rm_name, &line);
        }
        ncm__journal_end(&line);
        if (ncm_buf_failed(&line)) {
                ncm_buf_done(&line);
                return oom(err);
        }
        /* a line of the transaction: appended and fdatasynced by its commit */
        r = ncm__node_txn_begin(n, err);
        if (r >= 0 && n->txn)
                r = ncm__journal_append(&n->pods_jn, n->txn, journal, &line, err);
        if (r >= 0)
                r = ncm__node_txn_commit(n, err);
        ncm__node_txn_end(n);
        ncm_buf_done(&line);
        return r;
}

/* ------------------------------------------------------------------------------------------
 * Group commit: the journal is the commit point of the CPU manager's decisions too
 *
 * Under group commit (ncm_node_defer_sync) a transaction does not rewrite cpu_manager_state:
 * it appends, after its pod's line, the pod's entries as they are now,
 *
 *   {"gen": 3, "cpu": {"pod": "<uid>", "containers": {"<name>": "2-3"}, "promised": {...}}}
 *
 * and the file catches up off the acknowledgement path (ncm_node_flush). A start replays these
 * lines onto the file before anything reads it (ncm__node_cpu_replay): each sets its pod's
 * entries and moves the CPUs the pod gave up or took between the shared pool and it, so that a
 * line replayed onto a file that already holds it changes nothing.
 */

void ncm__cpu_lines_done(ncm__cpu_lines *c)
{
        for (size_t i = 0; i < c->n; i++)
                json_object_put(c->v[i]);
        free(c->v);
        *c = (ncm__cpu_lines){0};
}

/* "<name>": "<cpus>" of POD (index K of S) into B; PROMISED: the promises instead. */
static void format_entries(const ncm_cpu_state *s, size_t k, bool promised, ncm_buf *b)
{
        bool first = true;

        ncm_buf_putc(b, '{');
        for (size_t j = 0; j < ncm_cpu_state_pod_num_containers(s, k); j++) {
                const char *name = ncm_cpu_state_container_name(s, k, j);
                const ncm_cpuset *c = promised ? ncm_cpu_state_container_promised(s, k, j)
                                               : ncm_cpu_state_container_cpus(s, k, j);
                ncm_autofree char *list = NULL;
                if (!c)
                        continue;
                list = ncm_cpuset_format_list(c);
                if (!list) {
                        b->oom = true;
                        return;
                }
                ncm_buf_puts(b, first ? "" : ", ");
                first = false;
                ncm_buf_json_string(b, name, strlen(name));
                ncm_buf_puts(b, ": ");
                ncm_buf_json_string(b, list, strlen(list));
        }
        ncm_buf_putc(b, '}');
}

int ncm__node_cpu_line(ncm_node *n, const char *uid, ncm_error *err)
{
        ncm_autofree char *journal = NULL;
        ncm_buf line = NCM_BUF_INIT;
        size_t k = ncm_cpu_state_pod_index(n->cpu_state, uid);
        int r;

        if (asprintf(&journal, "%s/%s", n->dir, NCM_NODE_PODS_JOURNAL_NAME) < 0)
                return oom(err);
        ncm__journal_begin(&n->pods_jn, &line);
        ncm_buf_puts(&line, "\"cpu\": {\"pod\": ");
        ncm_buf_json_string(&line, uid, strlen(uid));
        ncm_buf_puts(&line, ", \"containers\": ");
        if (k == SIZE_MAX)
                ncm_buf_puts(&line, "{}");
        else
                format_entries(n->cpu_state, k, false, &line);
        if (k != SIZE_MAX && ncm_cpu_state_has_promised(n->cpu_state)) {
                ncm_buf_puts(&line, ", \"promised\": ");
                format_entries(n->cpu_state, k, true, &line);
        }
        ncm_buf_putc(&line, '}');
        ncm__journal_end(&line);
        r = ncm__journal_append(&n->pods_jn, n->txn, journal, &line, err);
        ncm_buf_done(&line);
        return r;
}

/* Each member of O (WHERE) a string that parses as a CPU set, into *RET (may be NULL). */
static int parse_entries(json_object *o, const char *where, const char *what, ncm_cpuset *uni,
                         ncm_error *err)
{
        if (!o)
                return 0;
        if (!json_object_is_type(o, json_type_object))
                return ncm_error_set(err, EINVAL, "%s: cpu: %s: expected an object", where, what);
        json_object_object_foreach(o, name, v)
        {
                ncm_autoptr(ncm_cpuset) c = NULL;
                if (!json_object_is_type(v, json_type_string) ||
                    ncm_cpuset_parse_list(json_object_get_string(v), &c, NULL) < 0)
                        return ncm_error_set(err, EINVAL, "%s: cpu: %s: %s: expected a CPU list",
                                             where, what, name);
                if (uni)
                        ncm_cpuset_or(uni, uni, c);
        }
        return 0;
}

static int cpu_line_check(json_object *cpu, const char *where, ncm_error *err)
{
        json_object *pod = json_object_is_type(cpu, json_type_object) ? ncm__json_get(cpu, "pod")
                                                                      : NULL;
        int r;

        if (!pod || !json_object_is_type(pod, json_type_string))
                return ncm_error_set(err, EINVAL, "%s: cpu: pod: expected a string", where);
        r = parse_entries(ncm__json_get(cpu, "containers"), where, "containers", NULL, err);
        if (r >= 0)
                r = parse_entries(ncm__json_get(cpu, "promised"), where, "promised", NULL, err);
        return r;
}

int ncm__node_cpu_replay(ncm_cpu_state *s, const ncm__cpu_lines *lines, ncm_error *err)
{
        for (size_t i = 0; i < lines->n; i++) {
                json_object *line = lines->v[i];
                const char *uid = json_object_get_string(ncm__json_get(line, "pod"));
                json_object *cont = ncm__json_get(line, "containers");
                json_object *prom = ncm__json_get(line, "promised");
                ncm_autoptr(ncm_cpuset) old = ncm_cpuset_new();
                ncm_autoptr(ncm_cpuset) now = ncm_cpuset_new();
                ncm_autoptr(ncm_cpuset) def = NULL;
                size_t k = ncm_cpu_state_pod_index(s, uid);
                int r = 0;

                if (!old || !now)
                        return oom(err);
                for (size_t j = 0; k != SIZE_MAX && j < ncm_cpu_state_pod_num_containers(s, k); j++)
                        ncm_cpuset_or(old, old, ncm_cpu_state_container_cpus(s, k, j));
                if (k != SIZE_MAX)
                        r = ncm_cpu_state_delete_pod(s, uid, err);
                if (r >= 0 && cont && json_object_is_type(cont, json_type_object)) {
                        json_object_object_foreach(cont, name, v)
                        {
                                ncm_autoptr(ncm_cpuset) c = NULL;
                                r = ncm_cpuset_parse_list(json_object_get_string(v), &c, err);
                                if (r >= 0)
                                        r = ncm_cpu_state_set(s, uid, name, c, err);
                                if (r < 0)
                                        return r;
                                ncm_cpuset_or(now, now, c);
                        }
                }
                if (r >= 0 && prom && json_object_is_type(prom, json_type_object)) {
                        json_object_object_foreach(prom, name, v)
                        {
                                ncm_autoptr(ncm_cpuset) c = NULL;
                                r = ncm_cpuset_parse_list(json_object_get_string(v), &c, err);
                                if (r >= 0)
                                        r = ncm_cpu_state_set_promised(s, uid, name, c, err);
                                if (r < 0)
                                        return r;
                        }
                }
                if (r < 0)
                        return r;
                /* what the pod gave up goes back to the shared pool, what it holds leaves it */
                def = ncm_cpuset_dup(ncm_cpu_state_default(s));
                if (!def)
                        return oom(err);
                ncm_cpuset_or(def, def, old);
                ncm_cpuset_andnot(def, def, now);
                if (!ncm_cpuset_equal(def, ncm_cpu_state_default(s))) {
                        r = ncm_cpu_state_set_default(s, def, err);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

void ncm_node_pod_records_free(ncm_node_pod_record *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++) {
                ncm_pod_free(v[i].pod);
                ncm__node_strv_free(v[i].removed);
        }
        free(v);
}

/* Record REC (WHERE in PATH; PATH NULL: WHERE names the file too) into *RET. */
static int parse_pod_record(json_object *rec, const char *path, const char *where,
                            ncm_node_pod_record *ret, ncm_error *err)
{
        json_object *pod = rec && json_object_is_type(rec, json_type_object)
                                           ? ncm__json_get(rec, "pod")
                                           : NULL;
        json_object *removed = pod ? ncm__json_get(rec, "removed") : NULL;
        int r;

        if (!pod && !path)
                return ncm_error_set(err, EINVAL, "%s: no pod", where);
        if (!pod)
                return ncm_error_set(err, EINVAL, "%s: %s: no pod", path, where);
        /* what the node holds loads as it was admitted (NCM__POD_STORED) */
        r = ncm__pod_from_json_flags(pod, where, NCM__POD_STORED, &ret->pod, err);
        if (r < 0)
                return path ? ncm_error_prefix(err, "%s", path) : r;
        if (removed && json_object_is_type(removed, json_type_array)) {
                size_t k = json_object_array_length(removed);
                ret->removed = calloc(k + 1, sizeof(char *));
                for (size_t j = 0; ret->removed && j < k; j++) {
                        json_object *e = json_object_array_get_idx(removed, j);
                        ret->removed[j] = strdup(e && json_object_is_type(e, json_type_string)
                                                                 ? json_object_get_string(e)
                                                                 : "");
                }
        }
        return 0;
}

/* The index of UID in V (sorted by pod UID), or where it would go (*FOUND false). */
static size_t record_find(const ncm_node_pod_record *v, size_t n, const char *uid, bool *found)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(v[mid].pod->uid, uid) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = lo < n && strcmp(v[lo].pod->uid, uid) == 0;
        return lo;
}

/* Where ncm__node_pods_journal_apply() puts the lines it reads. */
typedef struct pods_apply {
        ncm_node_pod_record **v;
        size_t *n, *cap;
        ncm__cpu_lines *cpu; /* NULL: the CPU lines are skipped */
} pods_apply;

static void record_drop(pods_apply *a, size_t k)
{
        ncm_node_pod_record *v = *a->v;

        ncm_pod_free(v[k].pod);
        ncm__node_strv_free(v[k].removed);
        memmove(&v[k], &v[k + 1], (*a->n - k - 1) * sizeof(*v));
        (*a->n)--;
}

static int cpu_line_check(json_object *cpu, const char *where, ncm_error *err);

/* One line of the journal: a pod's record put in, or dropped (or a CPU line, group commit). */
static int pods_line(json_object *o, const char *where, void *userdata, ncm_error *err)
{
        pods_apply *a = userdata;
        json_object *put = ncm__json_get(o, "put");
        json_object *drop = ncm__json_get(o, "drop");
        json_object *cpu = ncm__json_get(o, "cpu");
        ncm_node_pod_record rec = {0};
        bool found;
        size_t k;
        int r;

        if (cpu) {
                ncm__cpu_lines *c = a->cpu;
                r = cpu_line_check(cpu, where, err);
                if (r < 0 || !c)
                        return r;
                if (ncm__array_grow(c->v, c->cap, c->n) < 0)
                        return oom(err);
                c->v[c->n++] = json_object_get(cpu);
                return 0;
        }
        if (drop) {
                if (!json_object_is_type(drop, json_type_string))
                        return ncm_error_set(err, EINVAL, "%s: drop: expected a string", where);
                k = record_find(*a->v, *a->n, json_object_get_string(drop), &found);
                if (found)
                        record_drop(a, k);
                return 0;
        }
        if (!put)
                return ncm_error_set(err, EINVAL, "%s: expected \"put\" or \"drop\"", where);
        r = parse_pod_record(put, NULL, where, &rec, err);
        if (r < 0)
                return r;
        k = record_find(*a->v, *a->n, rec.pod->uid, &found);
        if (found) {
                ncm_pod_free((*a->v)[k].pod);
                ncm__node_strv_free((*a->v)[k].removed);
                (*a->v)[k] = rec;
                return 0;
        }
        if (ncm__array_grow(*a->v, *a->cap, *a->n) < 0) {
                ncm_pod_free(rec.pod);
                ncm__node_strv_free(rec.removed);
                return oom(err);
        }
        memmove(&(*a->v)[k + 1], &(*a->v)[k], (*a->n - k) * sizeof(**a->v));
        (*a->v)[k] = rec;
        (*a->n)++;
        return 0;
}

int ncm__node_pods_journal_apply(const char *text, size_t len, const char *path, uint64_t gen,
                                 ncm_node_pod_record **v, size_t *n, size_t *cap, size_t *lines,
                                 bool *torn, ncm__cpu_lines *cpu, ncm_error *err)
{
        pods_apply a = {.v = v, .n = n, .cap = cap, .cpu = cpu};
        ncm__journal j = {.gen = gen};
        int r = ncm__journal_read(&j, text, len, path, ": line ", pods_line, &a, torn, err);

        *lines = j.lines;
        return r;
}

int ncm__node_pods_load(const char *dir, ncm_node_pod_record **ret, size_t *ret_n,
                        uint64_t *ret_gen, size_t *ret_lines, bool *ret_torn,
                        ncm__cpu_lines *ret_cpu, ncm_error *err)
{
        ncm_autofree char *path = NULL;
        ncm_autofree char *journal = NULL;
        ncm_autofree char *text = NULL;
        ncm_autojson doc = NULL;
        ncm_node_pod_record *v = NULL;
        json_object *pods, *g;
        size_t n = 0, cap = 0, jlen = 0, lines = 0;
        int64_t gen = 0;
        bool torn = false;
        int r;

        if (asprintf(&path, "%s/%s", dir, NCM_NODE_PODS_NAME) < 0 ||
            asprintf(&journal, "%s/%s", dir, NCM_NODE_PODS_JOURNAL_NAME) < 0)
                return oom(err);
        r = ncm_fs_exists(AT_FDCWD, path);
        if (r > 0) {
                r = ncm__json_load_file(path, &doc, err);
                if (r < 0)
                        return r;
                pods = doc ? ncm__json_get(doc, "pods") : NULL;
                if (!pods || !json_object_is_type(pods, json_type_array))
                        return ncm_error_set(err, EINVAL, "%s: pods: expected array", path);
                g = ncm__json_get(doc, "generation");
                if (g && ncm__json_int(g, "generation", 0, INT64_MAX, &gen, err) < 0)
                        return ncm_error_prefix(err, "%s", path);
                n = json_object_array_length(pods);
                cap = n + 1;
                v = calloc(cap, sizeof(*v));
                if (!v)
                        return oom(err);
                for (size_t i = 0; i < n; i++) {
                        char where[64];
                        snprintf(where, sizeof(where), "pods[%zu]", i);
                        r = parse_pod_record(json_object_array_get_idx(pods, i), path, where, &v[i],
                                             err);
                        if (r < 0) {
                                ncm_node_pod_records_free(v, n);
                                return r;
                        }
                }
        }
        r = ncm_fs_read_all(AT_FDCWD, journal, 64u << 20, &text, &jlen, err);
        if (r == -ENOENT) {
                ncm_error_clear(err);
                r = 0;
        } else if (r >= 0) {
                r = ncm__node_pods_journal_apply(text, jlen, journal, (uint64_t)gen, &v, &n, &cap,
                                                 &lines, &torn, ret_cpu, err);
        }
        if (r < 0) {
                ncm_node_pod_records_free(v, n);
                return r;
        }
        *ret = v;
        *ret_n = n;
        if (ret_gen)
                *ret_gen = (uint64_t)gen;
        if (ret_lines)
                *ret_lines = lines;
        if (ret_torn)
                *ret_torn = torn;
        return 0;
}

int ncm_node_pods_load(const char *dir, ncm_node_pod_record **ret, size_t *ret_n, ncm_error *err)
{
        return ncm__node_pods_load(dir, ret, ret_n, NULL, NULL, NULL, NULL, err);
}
