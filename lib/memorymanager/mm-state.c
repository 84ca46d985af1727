/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The memory manager's state: machine state per NUMA node and each container's blocks, kept
 * sorted (nodes by id, pods, containers and types by name) so that lookups are binary searches
 * and the checkpoint's maps come out in Go's order without sorting at write time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/memorymanager.h>
#include "base/array.h"
#include "memorymanager/mm-internal.h"

void ncm__mem_block_done(ncm_mem_block *b)
{
        free(b->numa);
        free(b->type);
        *b = (ncm_mem_block){0};
}

void ncm_mem_blocks_free(ncm_mem_block *b, size_t n)
{
        for (size_t i = 0; b && i < n; i++)
                ncm__mem_block_done(&b[i]);
        free(b);
}

void ncm__mem_container_done(ncm_mem_container *c)
{
        ncm_mem_blocks_free(c->blocks, c->n);
        free(c->name);
        *c = (ncm_mem_container){0};
}

void ncm__mem_pod_done(ncm_mem_pod *p)
{
        for (size_t i = 0; i < p->n; i++)
                ncm__mem_container_done(&p->c[i]);
        free(p->c);
        free(p->uid);
        *p = (ncm_mem_pod){0};
}

void ncm__mem_pod_entry_done(ncm_mem_pod_entry *e)
{
        ncm_mem_blocks_free(e->blocks, e->n);
        free(e->uid);
        *e = (ncm_mem_pod_entry){0};
}

void ncm__mem_node_done(ncm_mem_node *n)
{
        for (size_t i = 0; i < n->ntypes; i++)
                free(n->types[i].name);
        free(n->types);
        free(n->cells);
        *n = (ncm_mem_node){0};
}

void ncm__mem_nodes_free(ncm_mem_node *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                ncm__mem_node_done(&v[i]);
        free(v);
}

ncm_mem_state *ncm_mem_state_new(const char *policy)
{
        ncm_mem_state *s = calloc(1, sizeof(*s));
        if (!s)
                return NULL;
        s->policy = strdup(policy ? policy : "");
        if (!s->policy) {
                free(s);
                return NULL;
        }
        return s;
}

ncm_mem_state *ncm_mem_state_free(ncm_mem_state *s)
{
        if (!s)
                return NULL;
        free(s->policy);
        ncm__mem_nodes_free(s->nodes, s->nnodes);
        for (size_t i = 0; i < s->npods; i++)
                ncm__mem_pod_done(&s->pods[i]);
        free(s->pods);
        for (size_t i = 0; i < s->npod_entries; i++)
                ncm__mem_pod_entry_done(&s->pod_entries[i]);
        free(s->pod_entries);
        free(s);
        return NULL;
}

static int *dup_ints(const int *v, size_t n)
{
        int *c = malloc((n ? n : 1) * sizeof(*c));
        if (c && n)
                memcpy(c, v, n * sizeof(*c));
        return c;
}

int ncm__mem_block_copy(const ncm_mem_block *src, ncm_mem_block *dst)
{
        *dst = *src;
        dst->numa = dup_ints(src->numa, src->nnuma);
        dst->type = strdup(src->type ? src->type : "");
        if (!dst->numa || !dst->type) {
                ncm__mem_block_done(dst);
                return -ENOMEM;
        }
        return 0;
}

int ncm__mem_blocks_copy(const ncm_mem_block *src, size_t n, ncm_mem_block **ret)
{
        ncm_mem_block *v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (ncm__mem_block_copy(&src[i], &v[i]) < 0) {
                        ncm_mem_blocks_free(v, i);
                        return -ENOMEM;
                }
        *ret = v;
        return 0;
}

int ncm__mem_node_copy(const ncm_mem_node *src, ncm_mem_node *dst)
{
        *dst = *src;
        dst->types = calloc(src->ntypes ? src->ntypes : 1, sizeof(*dst->types));
        dst->cells = dup_ints(src->cells, src->ncells);
        if (!dst->types || !dst->cells) {
                free(dst->types);
                free(dst->cells);
                *dst = (ncm_mem_node){0};
                return -ENOMEM;
        }
        for (size_t i = 0; i < src->ntypes; i++) {
                dst->types[i] = src->types[i];
                dst->types[i].name = strdup(src->types[i].name);
                if (!dst->types[i].name) {
                        dst->ntypes = i;
                        ncm__mem_node_done(dst);
                        return -ENOMEM;
                }
        }
        return 0;
}

int ncm__mem_nodes_copy(const ncm_mem_node *src, size_t n, ncm_mem_node **ret)
{
        ncm_mem_node *v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (ncm__mem_node_copy(&src[i], &v[i]) < 0) {
                        ncm__mem_nodes_free(v, i);
                        return -ENOMEM;
                }
        *ret = v;
        return 0;
}

/* A deep copy of P into Q (Q zeroed; on failure Q holds what was copied, for
 * ncm__mem_pod_done). */
static int pod_copy(const ncm_mem_pod *p, ncm_mem_pod *q)
{
        q->nil = p->nil;
        q->uid = strdup(p->uid);
        q->c = calloc(p->n ? p->n : 1, sizeof(*q->c));
        if (!q->uid || !q->c)
                return -ENOMEM;
        for (size_t k = 0; k < p->n; k++) {
                q->n = k + 1;
                q->c[k].nil = p->c[k].nil;
                q->c[k].name = strdup(p->c[k].name);
                if (!q->c[k].name ||
                    ncm__mem_blocks_copy(p->c[k].blocks, p->c[k].n, &q->c[k].blocks) < 0)
                        return -ENOMEM;
                q->c[k].n = p->c[k].n;
                q->c[k].has_promised = p->c[k].has_promised;
                q->c[k].promised = p->c[k].promised;
        }
        return 0;
}

static size_t pod_pos(const ncm_mem_state *s, const char *uid, bool *found);

int ncm__mem_pod_save(const ncm_mem_state *s, const char *uid, ncm__mem_pod_saved *ret)
{
        bool found;
        size_t i = pod_pos(s, uid, &found);

        memset(ret, 0, sizeof(*ret));
        ret->pods_nil = s->pods_nil;
        ret->found = found;
        if (found && pod_copy(&s->pods[i], &ret->pod) < 0) {
                ncm__mem_pod_done(&ret->pod);
                return -ENOMEM;
        }
        return 0;
}

void ncm__mem_pod_restore(ncm_mem_state *s, const char *uid, ncm__mem_pod_saved *saved)
{
        bool found;
        size_t i = pod_pos(s, uid, &found);

        if (found) {
                ncm__mem_pod_done(&s->pods[i]);
                if (saved->found) {
                        s->pods[i] = saved->pod; /* taken over */
                } else {
                        memmove(&s->pods[i], &s->pods[i + 1],
                                (s->npods - i - 1) * sizeof(*s->pods));
                        s->npods--;
                }
        } else if (saved->found) {
                /* not reached: the entry is only ever added to or changed in between */
                ncm__mem_pod_done(&saved->pod);
        }
        s->pods_nil = saved->pods_nil;
        memset(saved, 0, sizeof(*saved));
}

void ncm__mem_pod_saved_done(ncm__mem_pod_saved *saved)
{
        if (saved->found)
                ncm__mem_pod_done(&saved->pod);
        memset(saved, 0, sizeof(*saved));
}

ncm_mem_state *ncm_mem_state_dup(const ncm_mem_state *s)
{
        ncm_autoptr(ncm_mem_state) c = ncm_mem_state_new(s->policy);

        if (!c)
                return NULL;
        c->nodes_nil = s->nodes_nil;
        c->pods_nil = s->pods_nil;
        c->pod_entries_nil = s->pod_entries_nil;
        if (ncm__mem_nodes_copy(s->nodes, s->nnodes, &c->nodes) < 0)
                return NULL;
        c->nnodes = s->nnodes;
        c->pods = calloc(s->npods ? s->npods : 1, sizeof(*c->pods));
        c->pod_entries = calloc(s->npod_entries ? s->npod_entries : 1, sizeof(*c->pod_entries));
        if (!c->pods || !c->pod_entries)
                return NULL;
        for (size_t i = 0; i < s->npods; i++) {
                const ncm_mem_pod *p = &s->pods[i];
                c->npods = i + 1;
                if (pod_copy(p, &c->pods[i]) < 0)
                        return NULL;
        }
        for (size_t i = 0; i < s->npod_entries; i++) {
                const ncm_mem_pod_entry *e = &s->pod_entries[i];
                ncm_mem_pod_entry *f = &c->pod_entries[i];
                c->npod_entries = i + 1;
                f->nil = e->nil;
                f->uid = strdup(e->uid);
                if (!f->uid || ncm__mem_blocks_copy(e->blocks, e->n, &f->blocks) < 0)
                        return NULL;
                f->n = e->n;
        }
        return NCM_TAKE_PTR(c);
}

static bool blocks_equal(const ncm_mem_block *a, size_t na, const ncm_mem_block *b, size_t nb)
{
        if (na != nb)
                return false;
        for (size_t i = 0; i < na; i++)
                if (a[i].size != b[i].size || a[i].nnuma != b[i].nnuma ||
                    a[i].numa_nil != b[i].numa_nil || strcmp(a[i].type, b[i].type) != 0 ||
                    (a[i].nnuma && memcmp(a[i].numa, b[i].numa, a[i].nnuma * sizeof(int))))
                        return false;
        return true;
}

static bool nodes_equal(const ncm_mem_node *a, const ncm_mem_node *b, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                const ncm_mem_node *x = &a[i], *y = &b[i];
                if (x->id != y->id || x->nil != y->nil || x->assignments != y->assignments ||
                    x->ntypes != y->ntypes || x->types_nil != y->types_nil ||
                    x->ncells != y->ncells || x->cells_nil != y->cells_nil ||
                    (x->ncells && memcmp(x->cells, y->cells, x->ncells * sizeof(int))))
                        return false;
                for (size_t k = 0; k < x->ntypes; k++)
                        if (strcmp(x->types[k].name, y->types[k].name) != 0 ||
                            x->types[k].nil != y->types[k].nil ||
                            memcmp(&x->types[k].t, &y->types[k].t, sizeof(ncm_mem_table)) != 0)
                                return false;
        }
        return true;
}

static bool pod_equal(const ncm_mem_pod *x, const ncm_mem_pod *y)
{
        if (strcmp(x->uid, y->uid) != 0 || x->nil != y->nil || x->n != y->n)
                return false;
        for (size_t k = 0; k < x->n; k++)
                if (strcmp(x->c[k].name, y->c[k].name) != 0 || x->c[k].nil != y->c[k].nil ||
                    !blocks_equal(x->c[k].blocks, x->c[k].n, y->c[k].blocks, y->c[k].n) ||
                    x->c[k].has_promised != y->c[k].has_promised ||
                    x->c[k].promised != y->c[k].promised)
                        return false;
        return true;
}

bool ncm_mem_state_equal(const ncm_mem_state *a, const ncm_mem_state *b)
{
        if (strcmp(a->policy, b->policy) != 0 || a->nnodes != b->nnodes ||
            a->nodes_nil != b->nodes_nil || a->npods != b->npods || a->pods_nil != b->pods_nil ||
            a->npod_entries != b->npod_entries || a->pod_entries_nil != b->pod_entries_nil)
                return false;
        if (!nodes_equal(a->nodes, b->nodes, a->nnodes))
                return false;
        for (size_t i = 0; i < a->npods; i++)
                if (!pod_equal(&a->pods[i], &b->pods[i]))
                        return false;
        for (size_t i = 0; i < a->npod_entries; i++) {
                const ncm_mem_pod_entry *x = &a->pod_entries[i], *y = &b->pod_entries[i];
                if (strcmp(x->uid, y->uid) != 0 || x->nil != y->nil ||
                    !blocks_equal(x->blocks, x->n, y->blocks, y->n))
                        return false;
        }
        return true;
}

ncm_mem_node *ncm_mem_state_node(const ncm_mem_state *s, int id)
{
        size_t lo = 0, hi = s->nnodes;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (s->nodes[mid].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < s->nnodes && s->nodes[lo].id == id ? &s->nodes[lo] : NULL;
}

ncm_mem_table *ncm_mem_node_table(const ncm_mem_node *n, const char *name)
{
        for (size_t i = 0; n && i < n->ntypes; i++)
                if (strcmp(n->types[i].name, name) == 0)
                        return n->types[i].nil ? NULL : &n->types[i].t;
        return NULL;
}

/* Index of the pod UID, or where it would go (with *FOUND false). */
static size_t pod_pos(const ncm_mem_state *s, const char *uid, bool *found)
{
        size_t lo = 0, hi = s->npods;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(s->pods[mid].uid, uid) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = lo < s->npods && strcmp(s->pods[lo].uid, uid) == 0;
        return lo;
}

static size_t container_pos(const ncm_mem_pod *p, const char *name, bool *found)
{
        size_t lo = 0, hi = p->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(p->c[mid].name, name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = lo < p->n && strcmp(p->c[lo].name, name) == 0;
        return lo;
}

const ncm_mem_container *ncm_mem_state_container(const ncm_mem_state *s, const char *pod_uid,
                                                 const char *container)
{
        bool found;
        size_t i = pod_pos(s, pod_uid, &found), k;
        if (!found)
                return NULL;
        k = container_pos(&s->pods[i], container, &found);
        if (!found || s->pods[i].c[k].nil)
                return NULL;
        return &s->pods[i].c[k];
}

ncm_bitmask ncm_mem_state_container_numa(const ncm_mem_state *s, const char *pod_uid,
                                         const char *container)
{
        const ncm_mem_container *c = ncm_mem_state_container(s, pod_uid, container);
        ncm_bitmask m = 0;
        for (size_t i = 0; c && i < c->n; i++)
                for (size_t k = 0; k < c->blocks[i].nnuma; k++)
                        if (c->blocks[i].numa[k] >= 0 && c->blocks[i].numa[k] < 64)
                                m |= UINT64_C(1) << c->blocks[i].numa[k];
        return m;
}

int ncm__mem_state_set(ncm_mem_state *s, const char *pod_uid, const char *container,
                       ncm_mem_block *blocks, size_t n)
{
        bool found;
        size_t i = pod_pos(s, pod_uid, &found), k;
        ncm_mem_pod *p;

        if (!found) {
                ncm_mem_pod np = {0};
                np.uid = strdup(pod_uid);
                if (!np.uid)
                        return -ENOMEM;
                size_t cap = s->npods;
                if (ncm__array_grow(s->pods, cap, s->npods) < 0) {
                        free(np.uid);
                        return -ENOMEM;
                }
                memmove(&s->pods[i + 1], &s->pods[i], (s->npods - i) * sizeof(*s->pods));
                s->pods[i] = np;
                s->npods++;
                s->pods_nil = false;
        }
        p = &s->pods[i];
        k = container_pos(p, container, &found);
        if (!found) {
                ncm_mem_container nc = {0};
                size_t cap = p->n;
                nc.name = strdup(container);
                if (!nc.name || ncm__array_grow(p->c, cap, p->n) < 0) {
                        free(nc.name);
                        return -ENOMEM;
                }
                memmove(&p->c[k + 1], &p->c[k], (p->n - k) * sizeof(*p->c));
                p->c[k] = nc;
                p->n++;
                p->nil = false;
        }
        ncm_mem_blocks_free(p->c[k].blocks, p->c[k].n);
        p->c[k].blocks = blocks;
        p->c[k].n = n;
        p->c[k].nil = false;
        return 0;
}

int ncm_mem_state_set_promised(ncm_mem_state *s, const char *pod_uid, const char *container,
                               uint64_t bytes)
{
        bool found;
        size_t i = pod_pos(s, pod_uid, &found), k;

        if (!found)
                return -ENOENT;
        k = container_pos(&s->pods[i], container, &found);
        if (!found)
                return -ENOENT;
        s->pods[i].c[k].has_promised = true;
        s->pods[i].c[k].promised = bytes;
        return 0;
}

bool ncm_mem_state_has_promised(const ncm_mem_state *s)
{
        for (size_t i = 0; i < s->npods; i++)
                for (size_t k = 0; k < s->pods[i].n; k++)
                        if (s->pods[i].c[k].has_promised)
                                return true;
        return false;
}

int ncm_mem_state_delete(ncm_mem_state *s, const char *pod_uid, const char *container)
{
        bool found;
        size_t i = pod_pos(s, pod_uid, &found), k;
        ncm_mem_pod *p;

        if (!found)
                return 0;
        p = &s->pods[i];
        k = container_pos(p, container, &found);
        if (!found)
                return 0;
        ncm__mem_container_done(&p->c[k]);
        memmove(&p->c[k], &p->c[k + 1], (p->n - k - 1) * sizeof(*p->c));
        p->n--;
        if (p->n == 0) {
                /* stateMemory.Delete drops the pod with its last container */
                ncm__mem_pod_done(p);
                memmove(&s->pods[i], &s->pods[i + 1], (s->npods - i - 1) * sizeof(*s->pods));
                s->npods--;
        }
        return 1;
}

int ncm_mem_state_delete_pod(ncm_mem_state *s, const char *pod_uid)
{
        bool found;
        size_t i = pod_pos(s, pod_uid, &found);
        int n = 0;

        for (size_t k = 0; k < s->npod_entries; k++)
                if (strcmp(s->pod_entries[k].uid, pod_uid) == 0) {
                        ncm__mem_pod_entry_done(&s->pod_entries[k]);
                        memmove(&s->pod_entries[k], &s->pod_entries[k + 1],
                                (s->npod_entries - k - 1) * sizeof(*s->pod_entries));
                        s->npod_entries--;
                        break;
                }
        if (!found)
                return 0;
        n = (int)s->pods[i].n;
        ncm__mem_pod_done(&s->pods[i]);
        memmove(&s->pods[i], &s->pods[i + 1], (s->npods - i - 1) * sizeof(*s->pods));
        s->npods--;
        return n;
}

/* ---- marks: the part of a state one pod's admission changes ---- */

struct ncm_mem_state_mark {
        char *uid;
        ncm_mem_node *nodes;
        size_t nnodes;
        bool nodes_nil;
        ncm__mem_pod_saved pod;
};

int ncm_mem_state_mark_pod(const ncm_mem_state *s, const char *uid, ncm_mem_state_mark **ret)
{
        ncm_mem_state_mark *m = calloc(1, sizeof(*m));

        if (!m)
                return -ENOMEM;
        m->uid = strdup(uid);
        if (!m->uid || ncm__mem_nodes_copy(s->nodes, s->nnodes, &m->nodes) < 0 ||
            ncm__mem_pod_save(s, uid, &m->pod) < 0) {
                if (m->uid && m->nodes)
                        ncm__mem_nodes_free(m->nodes, s->nnodes);
                free(m->uid);
                free(m);
                return -ENOMEM;
        }
        m->nnodes = s->nnodes;
        m->nodes_nil = s->nodes_nil;
        *ret = m;
        return 0;
}

bool ncm_mem_state_mark_unchanged(const ncm_mem_state *s, const ncm_mem_state_mark *m)
{
        bool found;
        size_t i = pod_pos(s, m->uid, &found);

        if (s->nnodes != m->nnodes || s->nodes_nil != m->nodes_nil ||
            !nodes_equal(s->nodes, m->nodes, s->nnodes) || s->pods_nil != m->pod.pods_nil ||
            found != m->pod.found)
                return false;
        return !found || pod_equal(&s->pods[i], &m->pod.pod);
}

void ncm_mem_state_mark_restore(ncm_mem_state *s, ncm_mem_state_mark *m)
{
        ncm_mem_node *nodes = s->nodes;
        size_t n = s->nnodes;

        s->nodes = m->nodes;
        s->nnodes = m->nnodes;
        s->nodes_nil = m->nodes_nil;
        m->nodes = nodes; /* freed with the mark */
        m->nnodes = n;
        ncm__mem_pod_restore(s, m->uid, &m->pod);
}

ncm_mem_state_mark *ncm_mem_state_mark_free(ncm_mem_state_mark *m)
{
        if (m) {
                ncm__mem_nodes_free(m->nodes, m->nnodes);
                ncm__mem_pod_saved_done(&m->pod);
                free(m->uid);
                free(m);
        }
        return NULL;
}
