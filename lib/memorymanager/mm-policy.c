/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Static policy (policy_static.go) and the None policy.
 *
 * Hints without walking 2^N masks. The kubelet's calculateHints walks every mask M of the
 * machine's nodes (IterateBitMasks: by size, then lexicographically) and keeps M when
 *   (a) for every requested type, the allocatable memory of M's nodes holds the request,
 *   (b) the group rule lets M serve: a single node must not be in a multi-node group
 *       (len(Cells) > 1); in a multi-node M every node with assignments must have Cells equal
 *       to M (sorted) with more than one cell,
 *   (c) for every type, the free memory of M's nodes, plus what the pod's init containers
 *       left reusable on exactly M, holds the request;
 * and marks a kept M preferred when it has as many nodes as the smallest mask passing (a)
 * (minAffinitySize, over all masks whatever (b) and (c) say).
 * By (b), a multi-node hint is either a set of nodes without assignments ("unused", U) or
 * exactly an existing group; so the walk is: every single node; each existing group; the
 * subsets of U, generated in order by a depth-first search that cuts a branch as soon as the
 * best free memory left in it cannot reach a request (so only kept subsets cost anything); and
 * the few masks the pod has reusable memory on. minAffinitySize is the smallest k for which
 * some k nodes' allocatable memory holds every request, found by the same bounded search.
 * When the subsets of U alone make a long list and nothing else is a hint (one memory type, no
 * used single node or group that could serve, no reusable memory), the list is handed over
 * described (hintdesc.h: the free memory of U's nodes against the request, the preferred size
 * given), which the topology manager merges without listing it.
 *
 * Where Go iterates a map the result does not depend on the order, except the order of a
 * container's blocks and of GetAllocatableMemory: nodecm sorts both by type name (and node).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/memorymanager.h>
#include "base/array.h"
#include "memorymanager/mm-internal.h"

#define DEFAULT_MAX_HINTS ((size_t)1 << 20)
/* Lists longer than this are described when their shape allows (the search stops there). */
#define DESCRIBE_AFTER ((size_t)32)

typedef struct reserved_entry {
        int numa;
        char *type;
        uint64_t bytes;
} reserved_entry;

/* initContainersReusableMemory of one pod: bytes of TYPE reusable on exactly MASK. */
typedef struct reuse_entry {
        ncm_bitmask mask;
        char *type;
        uint64_t bytes;
} reuse_entry;

struct ncm_mem_policy {
        bool is_static;
        const ncm_topo *topo;
        reserved_entry *reserved;
        size_t nreserved;
        uint64_t max_drift;
        bool pod_level;
        char *reuse_pod;
        reuse_entry *reuse;
        size_t nreuse, cap_reuse;
};

static ncm_bitmask bit(int id)
{
        return UINT64_C(1) << id;
}

static bool is_hugepages(const char *name)
{
        return strncmp(name, NCM_RESOURCE_HUGEPAGES_PREFIX,
                       sizeof(NCM_RESOURCE_HUGEPAGES_PREFIX) - 1) == 0;
}

static bool memory_type(const char *name)
{
        return strcmp(name, NCM_RESOURCE_MEMORY) == 0 || is_hugepages(name);
}

/* ==========================================================================================
 * Construction
 */

static uint64_t system_reserved(const ncm_mem_policy *p, int numa, const char *type)
{
        uint64_t v = 0;
        /* convertReserved: a later entry for the same node and type overwrites */
        for (size_t i = 0; i < p->nreserved; i++)
                if (p->reserved[i].numa == numa && strcmp(p->reserved[i].type, type) == 0)
                        v = p->reserved[i].bytes;
        return v;
}

static bool machine_has_node(const ncm_topo *t, int id)
{
        size_t n;
        const int *ids = ncm_topo_numa_ids(t, &n);
        for (size_t i = 0; i < n; i++)
                if (ids[i] == id)
                        return true;
        return false;
}

/* validateReservedMemory; types compared in name order (Go ranges over a map). */
static int validate_reserved(const ncm_topo *t, const ncm_mem_reservations *l,
                             const ncm_resource_list *na, ncm_error *err)
{
        typedef struct total {
                const char *type;
                ncm_quantity q;
        } total;
        total tot[64];
        size_t nt = 0;

        for (size_t i = 0; l && i < l->n; i++) {
                const ncm_mem_reservation *r = &l->r[i];
                size_t k;
                if (!machine_has_node(t, r->numa))
                        return ncm_error_set(err, EINVAL,
                                             "the reserved memory configuration references a "
                                             "NUMA node %d that does not exist on this machine",
                                             r->numa);
                for (k = 0; k < nt; k++)
                        if (strcmp(tot[k].type, r->type) == 0)
                                break;
                if (k == nt) {
                        if (nt == NCM_ELEMENTSOF(tot))
                                return ncm_error_set(err, E2BIG, "too many memory types");
                        tot[nt].type = r->type;
                        tot[nt].q = r->q;
                        nt++;
                } else {
                        /* q.Add(total): the new entry's format is kept */
                        ncm_quantity q = r->q;
                        (void)ncm_quantity_add(&q, &tot[k].q);
                        tot[k].q = q;
                }
        }
        for (size_t i = 0; na && i < na->n; i++) {
                size_t k;
                if (!memory_type(na->items[i].name))
                        continue;
                for (k = 0; k < nt; k++)
                        if (strcmp(tot[k].type, na->items[i].name) == 0)
                                break;
                if (k == nt) {
                        if (nt == NCM_ELEMENTSOF(tot))
                                return ncm_error_set(err, E2BIG, "too many memory types");
                        tot[nt].type = na->items[i].name;
                        tot[nt].q = (ncm_quantity){0};
                        nt++;
                }
        }
        for (size_t a = 0; a < nt; a++)
                for (size_t b = a + 1; b < nt; b++)
                        if (strcmp(tot[b].type, tot[a].type) < 0) {
                                total x = tot[a];
                                tot[a] = tot[b];
                                tot[b] = x;
                        }
        for (size_t k = 0; k < nt; k++) {
                ncm_quantity nq = {0}, rq = {0};
                char nb[NCM_QUANTITY_STRLEN], rb[NCM_QUANTITY_STRLEN];
                const ncm_quantity *v = NULL;
                bool reserved = false;
                for (size_t i = 0; na && i < na->n; i++)
                        if (strcmp(na->items[i].name, tot[k].type) == 0)
                                v = &na->items[i].quantity;
                if (v)
                        (void)ncm_quantity_add(&nq, v);
                for (size_t i = 0; l && i < l->n; i++)
                        reserved |= strcmp(l->r[i].type, tot[k].type) == 0;
                if (reserved)
                        (void)ncm_quantity_add(&rq, &tot[k].q);
                if (!ncm_quantity_equal(&nq, &rq))
                        return ncm_error_set(err, EINVAL,
                                             "the total amount \"%s\" of type \"%s\" is not equal "
                                             "to the value \"%s\" determined by Node Allocatable "
                                             "feature",
                                             ncm_quantity_to_string(&rq, rb), tot[k].type,
                                             ncm_quantity_to_string(&nq, nb));
        }
        return 0;
}

int ncm_mem_policy_new(const ncm_topo *t, const ncm_mem_policy_config *c, ncm_mem_policy **ret,
                       ncm_error *err)
{
        ncm_autoptr(ncm_mem_policy) p = calloc(1, sizeof(*p));
        const char *name = c && c->policy && *c->policy ? c->policy : "None";
        uint64_t total = 0;
        int r;

        if (!p)
                return ncm_error_set(err, ENOMEM, "out of memory");
        p->topo = t;
        if (strcmp(name, "None") == 0) {
                *ret = NCM_TAKE_PTR(p);
                return 0;
        }
        if (strcmp(name, "Static") != 0)
                return ncm_error_set(err, EINVAL, "unknown policy: \"%s\"", name);
        p->is_static = true;
        p->max_drift = c->max_drift;
        p->pod_level = c->pod_level_resource_managers;
        /* NewManager validates against Node Allocatable; NewPolicyStatic alone (NULL) does not */
        r = c->node_allocatable ? validate_reserved(t, c->reserved, c->node_allocatable, err) : 0;
        if (r < 0)
                return r;
        if (c->reserved && c->reserved->n) {
                p->reserved = calloc(c->reserved->n, sizeof(*p->reserved));
                if (!p->reserved)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                for (size_t i = 0; i < c->reserved->n; i++) {
                        const ncm_mem_reservation *m = &c->reserved->r[i];
                        if (!m->fits)
                                return ncm_error_set(err, EINVAL,
                                                     "could not covert a variable of type "
                                                     "Quantity to int64");
                        p->reserved[i].numa = m->numa;
                        p->reserved[i].bytes = m->bytes;
                        p->reserved[i].type = strdup(m->type);
                        p->nreserved = i + 1;
                        if (!p->reserved[i].type)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                }
        }
        for (size_t i = 0; i < p->nreserved; i++)
                if (strcmp(p->reserved[i].type, NCM_RESOURCE_MEMORY) == 0 &&
                    machine_has_node(t, p->reserved[i].numa))
                        total += p->reserved[i].bytes;
        if (total == 0)
                return ncm_error_set(err, EINVAL,
                                     "[memorymanager] you should specify the system reserved "
                                     "memory");
        *ret = NCM_TAKE_PTR(p);
        return 0;
}

static void reuse_clear(ncm_mem_policy *p)
{
        for (size_t i = 0; i < p->nreuse; i++)
                free(p->reuse[i].type);
        p->nreuse = 0;
        free(p->reuse_pod);
        p->reuse_pod = NULL;
}

ncm_mem_policy *ncm_mem_policy_free(ncm_mem_policy *p)
{
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->nreserved; i++)
                free(p->reserved[i].type);
        free(p->reserved);
        reuse_clear(p);
        free(p->reuse);
        free(p);
        return NULL;
}

const char *ncm_mem_policy_name(const ncm_mem_policy *p)
{
        return p->is_static ? "Static" : "None";
}

bool ncm_mem_policy_is_static(const ncm_mem_policy *p)
{
        return p->is_static;
}

void ncm_mem_policy_forget_pod(ncm_mem_policy *p, const char *pod_uid)
{
        if (p->reuse_pod && strcmp(p->reuse_pod, pod_uid) == 0)
                reuse_clear(p);
}

/* The resource name of a hugepage size: "hugepages-" + the size in bytes as a BinarySI
 * quantity (HugePageResourceName), e.g. 2048 KiB -> "hugepages-2Mi". */
static void hugepage_name(uint64_t kib, char *buf, size_t size)
{
        ncm_quantity q = ncm_quantity_from_int((int64_t)(kib * 1024), NCM_QUANTITY_BINARY_SI);
        char qb[NCM_QUANTITY_STRLEN];
        snprintf(buf, size, "hugepages-%s", ncm_quantity_to_string(&q, qb));
}

static int add_type(ncm_mem_node *n, const char *name, ncm_mem_table t)
{
        size_t cap = n->ntypes, i;
        ncm_mem_type nt = {.t = t};
        for (i = 0; i < n->ntypes; i++)
                if (strcmp(n->types[i].name, name) == 0) {
                        n->types[i].t = t;
                        n->types[i].nil = false;
                        return 0;
                }
        nt.name = strdup(name);
        if (!nt.name || ncm__array_grow(n->types, cap, n->ntypes) < 0) {
                free(nt.name);
                return -ENOMEM;
        }
        /* keep the types sorted */
        for (i = n->ntypes; i > 0 && strcmp(n->types[i - 1].name, name) > 0; i--)
                n->types[i] = n->types[i - 1];
        n->types[i] = nt;
        n->ntypes++;
        return 0;
}

/* getDefaultMachineState into *RET / *N. */
static int default_machine(const ncm_mem_policy *p, ncm_mem_node **ret, size_t *ret_n)
{
        size_t nn;
        const int *ids = ncm_topo_numa_ids(p->topo, &nn);
        ncm_mem_node *v = calloc(nn ? nn : 1, sizeof(*v));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < nn; i++) {
                ncm_mem_node *n = &v[i];
                const ncm_hugepages *hp;
                size_t nhp;
                uint64_t mem = ncm_topo_numa_memory(p->topo, ids[i], &hp, &nhp), huge = 0;
                ncm_mem_table t = {0};

                n->id = ids[i];
                n->cells = malloc(sizeof(*n->cells));
                if (!n->cells) {
                        ncm__mem_nodes_free(v, i + 1);
                        return -ENOMEM;
                }
                n->cells[0] = ids[i];
                n->ncells = 1;
                for (size_t k = 0; k < nhp; k++) {
                        char name[64];
                        uint64_t size = hp[k].num_pages * hp[k].page_size * 1024;
                        hugepage_name(hp[k].page_size, name, sizeof(name));
                        t.total = size;
                        t.system_reserved = system_reserved(p, ids[i], name);
                        t.allocatable = t.free = size - t.system_reserved; /* uint64, as Go */
                        t.reserved = 0;
                        huge += size;
                        if (add_type(n, name, t) < 0) {
                                ncm__mem_nodes_free(v, i + 1);
                                return -ENOMEM;
                        }
                }
                t.total = mem;
                t.system_reserved = system_reserved(p, ids[i], NCM_RESOURCE_MEMORY);
                t.allocatable = t.free = mem - t.system_reserved - huge;
                t.reserved = 0;
                if (add_type(n, NCM_RESOURCE_MEMORY, t) < 0) {
                        ncm__mem_nodes_free(v, i + 1);
                        return -ENOMEM;
                }
        }
        *ret = v;
        *ret_n = nn;
        return 0;
}

int ncm_mem_policy_default_machine(const ncm_mem_policy *p, ncm_mem_state *s)
{
        ncm_mem_node *v;
        size_t n;
        int r = default_machine(p, &v, &n);
        if (r < 0)
                return r;
        ncm__mem_nodes_free(s->nodes, s->nnodes);
        s->nodes = v;
        s->nnodes = n;
        s->nodes_nil = false;
        return 0;
}

/* ==========================================================================================
 * Requests
 */

void ncm_mem_request_done(ncm_mem_request *r)
{
        for (size_t i = 0; i < r->n; i++)
                free(r->types[i]);
        r->n = 0;
}

static int request_set(ncm_mem_request *r, const char *type, uint64_t bytes, bool add,
                       ncm_error *err)
{
        size_t i;
        for (i = 0; i < r->n; i++)
                if (strcmp(r->types[i], type) == 0)
                        break;
        if (i == r->n) {
                size_t k;
                if (r->n == NCM_ELEMENTSOF(r->types))
                        return ncm_error_set(err, E2BIG,
                                             "[memorymanager] more than %zu memory "
                                             "types requested",
                                             NCM_ELEMENTSOF(r->types));
                for (k = r->n; k > 0 && strcmp(r->types[k - 1], type) > 0; k--) {
                        r->types[k] = r->types[k - 1];
                        r->bytes[k] = r->bytes[k - 1];
                }
                r->types[k] = strdup(type);
                if (!r->types[k]) {
                        for (; k < r->n; k++) {
                                r->types[k] = r->types[k + 1];
                                r->bytes[k] = r->bytes[k + 1];
                        }
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
                r->bytes[k] = bytes;
                r->n++;
                return 0;
        }
        r->bytes[i] = add ? r->bytes[i] + bytes : bytes;
        return 0;
}

static uint64_t request_get(const ncm_mem_request *r, const char *type, bool *found)
{
        for (size_t i = 0; i < r->n; i++)
                if (strcmp(r->types[i], type) == 0) {
                        if (found)
                                *found = true;
                        return r->bytes[i];
                }
        if (found)
                *found = false;
        return 0;
}

/* getRequestedResources for one container. */
static int container_request(const ncm_container *c, ncm_mem_request *ret, ncm_error *err)
{
        const ncm_resource_list *l = &c->resources.requests;
        for (size_t i = 0; i < l->n; i++) {
                const ncm_quantity *q = &l->items[i].quantity;
                int r;
                if (!memory_type(l->items[i].name))
                        continue;
                if (!ncm_quantity_is_integer(q) || ncm_quantity_value(q) == INT64_MAX)
                        return ncm_error_set(err, EINVAL,
                                             "[memorymanager] failed to represent quantity as "
                                             "int64");
                r = request_set(ret, l->items[i].name, (uint64_t)ncm_quantity_value(q), false, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int ncm_mem_request_of(const ncm_pod *pod, const ncm_container *container, ncm_mem_request *ret,
                       ncm_error *err)
{
        ncm_mem_request init = {0}, side = {0}, app = {0};
        int r = 0;

        *ret = (ncm_mem_request){0};
        if (container)
                return container_request(container, ret, err);
        /* getPodRequestedResources */
        for (size_t i = 0; r >= 0 && i < pod->n_init_containers; i++) {
                ncm_mem_request c = {0};
                const ncm_container *ic = &pod->init_containers[i];
                r = container_request(ic, &c, err);
                for (size_t k = 0; r >= 0 && k < c.n; k++) {
                        bool found;
                        uint64_t cur = request_get(&init, c.types[k], &found);
                        if (!found)
                                r = request_set(&init, c.types[k], 0, false, err);
                        if (r < 0)
                                break;
                        if (ic->sidecar) {
                                r = request_set(&side, c.types[k], c.bytes[k], true, err);
                        } else {
                                uint64_t v = request_get(&side, c.types[k], NULL) + c.bytes[k];
                                if (v > cur)
                                        r = request_set(&init, c.types[k], v, false, err);
                        }
                }
                ncm_mem_request_done(&c);
        }
        for (size_t i = 0; r >= 0 && i < pod->n_containers; i++) {
                ncm_mem_request c = {0};
                r = container_request(&pod->containers[i], &c, err);
                for (size_t k = 0; r >= 0 && k < c.n; k++)
                        r = request_set(&app, c.types[k], c.bytes[k], true, err);
                ncm_mem_request_done(&c);
        }
        /* the types of app containers only, as the kubelet ranges over reqRsrcsByAppCtrs */
        for (size_t k = 0; r >= 0 && k < app.n; k++) {
                uint64_t v = app.bytes[k] + request_get(&side, app.types[k], NULL);
                uint64_t i = request_get(&init, app.types[k], NULL);
                r = request_set(ret, app.types[k], v < i ? i : v, false, err);
        }
        ncm_mem_request_done(&init);
        ncm_mem_request_done(&side);
        ncm_mem_request_done(&app);
        if (r < 0)
                ncm_mem_request_done(ret);
        return r;
}

/* ==========================================================================================
 * Hints
 */

/* The machine state as the hint calculation reads it, by position in ascending id order. */
typedef struct calc {
        const ncm_mem_state *s;
        const ncm_mem_request *req;
        const ncm_mem_policy *p;
        const char *pod_uid;
        int n;
        int ids[NCM_BITMASK_MAX_BITS];
        uint64_t alloc[16][NCM_BITMASK_MAX_BITS];
        uint64_t free[16][NCM_BITMASK_MAX_BITS];
        bool used[NCM_BITMASK_MAX_BITS];
        bool multi_cells[NCM_BITMASK_MAX_BITS]; /* len(Cells) > 1 */
        ncm_bitmask all;
        ncm_bitmask unused;
        int min_size;
} calc;

static int pos_of(const calc *c, int id)
{
        for (int i = 0; i < c->n; i++)
                if (c->ids[i] == id)
                        return i;
        return -1;
}

/* Saturating sums: Go's uint64 sums wrap, but only for absurd states; nodecm saturates. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
        return a + b < a ? UINT64_MAX : a + b;
}

static void calc_init(calc *c, const ncm_mem_policy *p, const ncm_mem_state *s,
                      const ncm_mem_request *req, const char *pod_uid)
{
        memset(c, 0, sizeof(*c));
        c->s = s;
        c->req = req;
        c->p = p;
        c->pod_uid = pod_uid;
        for (size_t i = 0; i < s->nnodes && c->n < NCM_BITMASK_MAX_BITS; i++) {
                const ncm_mem_node *nd = &s->nodes[i];
                int k = c->n;
                if (nd->id < 0 || nd->id >= NCM_BITMASK_MAX_BITS)
                        continue; /* the kubelet's bitmasks hold ids 0..63 */
                c->ids[k] = nd->id;
                for (size_t r = 0; r < req->n; r++) {
                        const ncm_mem_table *t =
                                        nd->nil ? NULL : ncm_mem_node_table(nd, req->types[r]);
                        c->alloc[r][k] = t ? t->allocatable : 0;
                        c->free[r][k] = t ? t->free : 0;
                }
                c->used[k] = !nd->nil && nd->assignments > 0;
                c->multi_cells[k] = !nd->nil && nd->ncells > 1;
                c->all |= bit(nd->id);
                if (!c->used[k])
                        c->unused |= bit(nd->id);
                c->n++;
        }
}

static uint64_t reusable(const calc *c, ncm_bitmask mask, const char *type)
{
        const ncm_mem_policy *p = c->p;
        if (!c->pod_uid || !p->reuse_pod || strcmp(p->reuse_pod, c->pod_uid) != 0)
                return 0;
        for (size_t i = 0; i < p->nreuse; i++)
                if (p->reuse[i].mask == mask && strcmp(p->reuse[i].type, type) == 0)
                        return p->reuse[i].bytes;
        return 0;
}

/* Whether MASK's nodes hold every request in TABLE (allocatable or free memory), with the
 * pod's reusable memory when REUSE. */
static bool mask_holds(const calc *c, const uint64_t (*table)[NCM_BITMASK_MAX_BITS],
                       ncm_bitmask mask, bool reuse)
{
        for (size_t r = 0; r < c->req->n; r++) {
                uint64_t sum = reuse ? reusable(c, mask, c->req->types[r]) : 0;
                for (int k = 0; k < c->n; k++)
                        if (mask & bit(c->ids[k]))
                                sum = add_sat(sum, table[r][k]);
                if (sum < c->req->bytes[r])
                        return false;
        }
        return true;
}

static bool alloc_ok(const calc *c, ncm_bitmask mask)
{
        return mask_holds(c, c->alloc, mask, false);
}

static bool free_ok(const calc *c, ncm_bitmask mask)
{
        return mask_holds(c, c->free, mask, true);
}

/* (c) without reusable memory. */
static bool free_ok_plain(const calc *c, ncm_bitmask mask)
{
        return mask_holds(c, c->free, mask, false);
}

/* areGroupsEqual(Cells, maskBits): the sorted lists are equal. */
static bool cells_equal_mask(const ncm_mem_node *nd, ncm_bitmask mask)
{
        int v[NCM_BITMASK_MAX_BITS];
        int bits[NCM_BITMASK_MAX_BITS];
        int nb = ncm_bitmask_to_bits(mask, bits);

        if ((int)nd->ncells != nb)
                return false;
        for (int i = 0; i < nb; i++)
                v[i] = nd->cells[i];
        for (int i = 1; i < nb; i++)
                for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
                        int x = v[j];
                        v[j] = v[j - 1];
                        v[j - 1] = x;
                }
        for (int i = 0; i < nb; i++)
                if (v[i] != bits[i])
                        return false;
        return true;
}

/* (b), the group rule, for MASK. */
static bool group_ok(const calc *c, ncm_bitmask mask)
{
        bool single = ncm_bitmask_count(mask) == 1;
        for (int k = 0; k < c->n; k++) {
                const ncm_mem_node *nd;
                if (!(mask & bit(c->ids[k])))
                        continue;
                if (single)
                        return !c->multi_cells[k];
                if (!c->used[k])
                        continue;
                nd = ncm_mem_state_node(c->s, c->ids[k]);
                if (!c->multi_cells[k] || !cells_equal_mask(nd, mask))
                        return false;
        }
        return true;
}

static bool kept(const calc *c, ncm_bitmask mask)
{
        return alloc_ok(c, mask) && group_ok(c, mask) && free_ok(c, mask);
}

static int cmp_u64_desc(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return (x < y) - (x > y);
}

/*
 * Whether some K of the nodes in POOL at positions >= FROM, added to SUM, reach every request,
 * of allocatable memory, or free memory with USE_FREE. Depth-first over positions, cut when
 * the K largest values left cannot reach a request (an upper bound per type).
 */
static bool exists_k(const calc *c, bool use_free, ncm_bitmask pool, int from, int k,
                     const uint64_t *sum)
{
        uint64_t next[16];
        bool done = true;

        for (size_t r = 0; r < c->req->n; r++)
                if (sum[r] < c->req->bytes[r])
                        done = false;
        if (done)
                return true;
        if (k <= 0)
                return false;
        for (size_t r = 0; r < c->req->n; r++) {
                uint64_t top[NCM_BITMASK_MAX_BITS], total = sum[r];
                int nt = 0;
                if (sum[r] >= c->req->bytes[r])
                        continue;
                for (int i = from; i < c->n; i++)
                        if (pool & bit(c->ids[i]))
                                top[nt++] = use_free ? c->free[r][i] : c->alloc[r][i];
                if (nt < k)
                        k = nt;
                qsort(top, (size_t)nt, sizeof(*top), cmp_u64_desc);
                for (int j = 0; j < k; j++)
                        total = add_sat(total, top[j]);
                if (total < c->req->bytes[r])
                        return false;
        }
        for (int i = from; i < c->n; i++) {
                if (!(pool & bit(c->ids[i])))
                        continue;
                for (size_t r = 0; r < c->req->n; r++)
                        next[r] = add_sat(sum[r], use_free ? c->free[r][i] : c->alloc[r][i]);
                if (exists_k(c, use_free, pool, i + 1, k - 1, next))
                        return true;
        }
        return false;
}

/* minAffinitySize: the fewest nodes whose allocatable memory holds every request. */
static int min_affinity_size(calc *c)
{
        uint64_t zero[16] = {0};
        for (int k = 1; k < c->n; k++)
                if (exists_k(c, false, c->all, 0, k, zero))
                        return k;
        return c->n;
}

typedef struct collector {
        ncm_bitmask *v;
        size_t n, cap, max;
        bool over;
} collector;

static int collect(collector *o, ncm_bitmask m)
{
        if (o->n >= o->max) {
                o->over = true;
                return 0;
        }
        if (ncm__array_grow(o->v, o->cap, o->n) < 0)
                return -ENOMEM;
        o->v[o->n++] = m;
        return 0;
}

/*
 * The K-subsets of U whose free memory holds every request, in lexicographic order: a
 * depth-first search over positions that cuts when the best free memory left cannot reach a
 * request. Collects at most o->max (then o->over).
 */
static int subsets_of_unused(const calc *c, int from, int k, ncm_bitmask in, const uint64_t *sum,
                             collector *o)
{
        uint64_t next[16];
        if (k == 0) {
                return collect(o, in);
        }
        for (int i = from; i < c->n && !o->over; i++) {
                int r;
                if (!(c->unused & bit(c->ids[i])))
                        continue;
                for (size_t t = 0; t < c->req->n; t++)
                        next[t] = add_sat(sum[t], c->free[t][i]);
                /* some k-1 of the rest must complete it */
                if (!exists_k(c, true, c->unused, i + 1, k - 1, next))
                        continue;
                r = subsets_of_unused(c, i + 1, k - 1, in | bit(c->ids[i]), next, o);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int cmp_lex(const void *a, const void *b)
{
        ncm_bitmask x = *(const ncm_bitmask *)a, y = *(const ncm_bitmask *)b;
        ncm_bitmask d = x ^ y;
        if (!d)
                return 0;
        return (d & (0 - d) & x) ? -1 : 1;
}

/* Masks that are hints outside the subsets of U (used single nodes, groups, reusable masks). */
static int extra_candidates(const calc *c, collector *o)
{
        for (int k = 0; k < c->n; k++) {
                const ncm_mem_node *nd;
                ncm_bitmask g = 0;
                bool ok = true;
                if (!c->used[k])
                        continue;
                if (collect(o, bit(c->ids[k])) < 0)
                        return -ENOMEM;
                if (!c->multi_cells[k])
                        continue;
                nd = ncm_mem_state_node(c->s, c->ids[k]);
                for (size_t i = 0; i < nd->ncells; i++) {
                        if (nd->cells[i] < 0 || nd->cells[i] >= NCM_BITMASK_MAX_BITS ||
                            (g & bit(nd->cells[i])))
                                ok = false;
                        else
                                g |= bit(nd->cells[i]);
                }
                if (ok && (g & ~c->all) == 0 && collect(o, g) < 0)
                        return -ENOMEM;
        }
        if (c->pod_uid && c->p->reuse_pod && strcmp(c->p->reuse_pod, c->pod_uid) == 0)
                for (size_t i = 0; i < c->p->nreuse; i++)
                        if (c->p->reuse[i].bytes && (c->p->reuse[i].mask & ~c->all) == 0 &&
                            collect(o, c->p->reuse[i].mask) < 0)
                                return -ENOMEM;
        return 0;
}

static int cmp_mask_order(const void *a, const void *b)
{
        ncm_bitmask x = *(const ncm_bitmask *)a, y = *(const ncm_bitmask *)b;
        int cx = ncm_bitmask_count(x), cy = ncm_bitmask_count(y);
        if (cx != cy)
                return cx < cy ? -1 : 1;
        return cmp_lex(a, b);
}

/*
 * calculateHints: the kept masks in the kubelet's order into *RET (malloc'd), their count, and
 * whether the subsets of U alone would pass MAX (*OVER; the extras are always gathered whole).
 * DESC_OK (with *OVER): whether the kept masks are the subsets of U whose free memory holds the
 * request plus a few others, so that a description with those as extras can stand for the list;
 * *RET then holds the others.
 */
static int calculate(calc *c, size_t max, ncm_bitmask **ret, size_t *ret_n, bool *over,
                     bool *desc_ok)
{
        collector cand = {.max = SIZE_MAX}, out = {.max = SIZE_MAX};
        uint64_t zero[16] = {0};
        size_t n_extra;
        int r = 0;

        *ret = NULL;
        *ret_n = 0;
        *over = false;
        *desc_ok = false;
        if (c->n == 0)
                return 0;
        c->min_size = min_affinity_size(c);
        /* Extras first, all of them (at most a few per node: a description needs every one),
         * then the subsets of U size by size, MAX of them past the extras. */
        r = extra_candidates(c, &cand);
        if (r < 0)
                goto oom;
        n_extra = cand.n;
        cand.max = n_extra + max + 1;
        for (int k = 1; k <= c->n && !cand.over; k++) {
                r = subsets_of_unused(c, 0, k, 0, zero, &cand);
                if (r < 0)
                        goto oom;
        }
        if (cand.over) {
                bool pure = true;
                for (int k = 0; pure && k < c->n; k++) {
                        if (!(c->unused & bit(c->ids[k])))
                                continue;
                        /* singles of U must pass the group rule and free must imply (a),
                         * for every type */
                        if (c->multi_cells[k])
                                pure = false;
                        for (size_t t = 0; t < c->req->n; t++)
                                if (c->free[t][k] > c->alloc[t][k])
                                        pure = false;
                }
                *over = true;
                *desc_ok = pure;
                /* the extras kept: hints the subsets of U do not give (outside U, or kept
                 * only thanks to reusable memory); the description drops repeats */
                for (size_t i = 0; pure && i < n_extra; i++)
                        if (kept(c, cand.v[i]) &&
                            ((cand.v[i] & ~c->unused) != 0 || !free_ok_plain(c, cand.v[i])) &&
                            collect(&out, cand.v[i]) < 0)
                                goto oom;
                free(cand.v);
                *ret = out.v;
                *ret_n = out.n;
                return 0;
        }
        if (cand.n > 1)
                qsort(cand.v, cand.n, sizeof(*cand.v), cmp_mask_order);
        for (size_t i = 0; i < cand.n; i++) {
                if (i > 0 && cand.v[i] == cand.v[i - 1])
                        continue;
                if (kept(c, cand.v[i]) && collect(&out, cand.v[i]) < 0)
                        goto oom;
        }
        free(cand.v);
        *ret = out.v;
        *ret_n = out.n;
        return 0;
oom:
        free(cand.v);
        free(out.v);
        return -ENOMEM;
}

void ncm_mem_hints_done(ncm_mem_hints *h)
{
        for (size_t i = 0; i < h->n; i++) {
                ncm_hint_list_done(&h->t[i].list);
                ncm_hint_desc_free(h->t[i].desc);
        }
        free(h->t);
        ncm_mem_request_done(&h->req);
        *h = (ncm_mem_hints){0};
}

/* The hints map from the kept masks: one entry per requested type, the same list in each. */
static int hints_from_masks(const calc *c, const ncm_bitmask *m, size_t n, ncm_mem_hints *h)
{
        if (n == 0)
                return 0; /* an empty map */
        h->t = calloc(c->req->n, sizeof(*h->t));
        if (!h->t)
                return -ENOMEM;
        h->n = c->req->n;
        for (size_t r = 0; r < c->req->n; r++) {
                h->t[r].type = h->req.types[r];
                for (size_t i = 0; i < n; i++) {
                        ncm_hint hint = {.numa = m[i],
                                         .preferred = ncm_bitmask_count(m[i]) == c->min_size};
                        if (ncm_hint_list_append(&h->t[r].list, hint) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

static int64_t weight_of(uint64_t v)
{
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/*
 * The subsets of U and EXTRAS as a description: the first type's request against the nodes'
 * free memory of that type, every further type as a dimension of its own, so that a subset is
 * a hint when each type fits on it. The kubelet's map has the same list under every type, and
 * the topology manager merges each of them: every type gets a copy.
 */
static int hints_described(const calc *c, const ncm_bitmask *extras, size_t n_extras,
                           ncm_mem_hints *h, ncm_error *err)
{
        int ids[NCM_BITMASK_MAX_BITS];
        int n = 0, r;
        ncm_autoptr(ncm_hint_desc) d = NULL;

        for (int k = 0; k < c->n; k++)
                if (c->unused & bit(c->ids[k]))
                        ids[n++] = c->ids[k];
        for (size_t t = 0; t < c->req->n; t++)
                if (c->req->bytes[t] > INT64_MAX)
                        return ncm_error_set(err, ERANGE, "[memorymanager] request too large");
        r = ncm_hint_desc_new(ids, (size_t)n, (int64_t)c->req->bytes[0], &d, err);
        if (r < 0)
                return r;
        for (size_t t = 1; t < c->req->n; t++)
                if (ncm_hint_desc_add_dimension(d, (int64_t)c->req->bytes[t]) != (int)t)
                        return ncm_error_set(err, E2BIG, "too many memory types");
        for (int k = 0; k < c->n; k++) {
                if (!(c->unused & bit(c->ids[k])))
                        continue;
                for (size_t t = 0; t < c->req->n; t++) {
                        r = ncm_hint_desc_add_amount(d, (int)t, c->ids[k],
                                                     weight_of(c->free[t][k]));
                        if (r == -ENOMEM)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        if (r < 0)
                                return ncm_error_set(err, -r,
                                                     "[memorymanager] NUMA node %d: %s free "
                                                     "memory out of range",
                                                     c->ids[k], c->req->types[t]);
                }
        }
        for (size_t i = 0; i < n_extras; i++)
                if (ncm_hint_desc_add_extra(d, extras[i]) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        ncm_hint_desc_set_preferred_size(d, c->min_size);
        r = ncm_hint_desc_seal(d, err);
        if (r < 0)
                return r;
        h->t = calloc(c->req->n, sizeof(*h->t));
        if (!h->t)
                return ncm_error_set(err, ENOMEM, "out of memory");
        h->n = c->req->n;
        for (size_t t = 0; t < c->req->n; t++) {
                h->t[t].type = h->req.types[t];
                h->t[t].desc = t + 1 < c->req->n ? ncm_hint_desc_dup(d) : NCM_TAKE_PTR(d);
                if (!h->t[t].desc)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        return 0;
}

/* regenerateHints: a container that already has blocks gets them back as preferred hints. */
static int regenerate(const ncm_mem_container *blocks, ncm_mem_hints *h)
{
        if (blocks->n != h->req.n) {
                h->nil = true;
                return 0;
        }
        for (size_t i = 0; i < blocks->n; i++) {
                bool found;
                uint64_t want = request_get(&h->req, blocks->blocks[i].type, &found);
                if (!found || want != blocks->blocks[i].size) {
                        h->nil = true;
                        return 0;
                }
                for (size_t k = 0; k < blocks->blocks[i].nnuma; k++)
                        if (blocks->blocks[i].numa[k] < 0 ||
                            blocks->blocks[i].numa[k] >= NCM_BITMASK_MAX_BITS) {
                                h->nil = true;
                                return 0;
                        }
        }
        h->t = calloc(h->req.n, sizeof(*h->t));
        if (!h->t)
                return -ENOMEM;
        h->n = h->req.n;
        for (size_t r = 0; r < h->req.n; r++)
                h->t[r].type = h->req.types[r];
        for (size_t i = 0; i < blocks->n; i++) {
                const ncm_mem_block *b = &blocks->blocks[i];
                ncm_hint hint = {.preferred = true};
                for (size_t k = 0; k < b->nnuma; k++)
                        hint.numa |= bit(b->numa[k]);
                for (size_t r = 0; r < h->req.n; r++)
                        if (strcmp(h->req.types[r], b->type) == 0 &&
                            ncm_hint_list_append(&h->t[r].list, hint) < 0)
                                return -ENOMEM;
        }
        return 0;
}

int ncm_mem_policy_hints(ncm_mem_policy *p, const ncm_mem_state *s, const ncm_pod *pod,
                         const ncm_container *container, size_t max_hints, ncm_mem_hints *ret,
                         ncm_error *err)
{
        ncm_mem_hints h = {0};
        calc *c = NULL;
        ncm_bitmask *masks = NULL;
        size_t n = 0;
        bool over = false, desc_ok = false;
        int r;

        *ret = (ncm_mem_hints){.nil = true};
        if (!p->is_static || ncm_pod_compute_qos(pod) != NCM_QOS_GUARANTEED)
                return 0;
        r = ncm_mem_request_of(pod, container, &h.req, err);
        if (r < 0) {
                /* the kubelet logs the error and has no preference */
                return r == -ENOMEM ? r : 0;
        }
        if (ncm_pod_level_resources_set(pod)) {
                ncm_mem_hints_done(&h);
                return 0;
        }
        if (container) {
                const ncm_mem_container *b = ncm_mem_state_container(s, pod->uid, container->name);
                if (b) {
                        r = regenerate(b, &h);
                        goto out;
                }
        } else {
                for (size_t i = 0; i < pod->n_init_containers + pod->n_containers; i++) {
                        const ncm_container *ct =
                                        i < pod->n_init_containers
                                                        ? &pod->init_containers[i]
                                                        : &pod->containers[i -
                                                                           pod->n_init_containers];
                        const ncm_mem_container *b = ncm_mem_state_container(s, pod->uid, ct->name);
                        if (b) {
                                r = regenerate(b, &h);
                                goto out;
                        }
                }
        }
        c = malloc(sizeof(*c));
        if (!c) {
                r = -ENOMEM;
                goto out;
        }
        calc_init(c, p, s, &h.req, container ? pod->uid : NULL);
        {
                size_t limit = DEFAULT_MAX_HINTS;
                size_t first = max_hints ? max_hints : DESCRIBE_AFTER;
                r = calculate(c, first, &masks, &n, &over, &desc_ok);
                if (r >= 0 && over && !desc_ok && first < limit) {
                        /* not of a description's shape: listed after all, up to the limit */
                        free(masks);
                        masks = NULL;
                        r = calculate(c, limit, &masks, &n, &over, &desc_ok);
                }
        }
        if (r < 0)
                goto out;
        if (over && desc_ok)
                r = hints_described(c, masks, n, &h, err);
        else if (over)
                r = ncm_error_set(err, E2BIG,
                                  "[memorymanager] more than %zu NUMA masks can serve the request "
                                  "of pod %s: nodecm lists at most that many",
                                  DEFAULT_MAX_HINTS, pod->uid);
        else
                r = hints_from_masks(c, masks, n, &h);
out:
        free(masks);
        free(c);
        if (r < 0) {
                ncm_mem_hints_done(&h);
                if (r == -ENOMEM)
                        ncm_error_set(err, ENOMEM, "out of memory");
                return r;
        }
        *ret = h;
        return 0;
}

/* ==========================================================================================
 * Allocate and remove
 */

/*
 * The numerically smallest K-subset of U containing WITHIN (a subset of U) whose free memory
 * holds every request: decide the nodes from the highest id down, "out" before "in", so the
 * first complete leaf is the smallest number; a branch is cut when the nodes still undecided
 * cannot complete it.
 */
static bool smallest_subset(const calc *c, int pos, int k, ncm_bitmask in, const uint64_t *sum,
                            ncm_bitmask *ret)
{
        uint64_t next[16];
        ncm_bitmask below = 0;

        if (k == 0) {
                for (size_t r = 0; r < c->req->n; r++)
                        if (sum[r] < c->req->bytes[r])
                                return false;
                *ret = in;
                return true;
        }
        if (pos < 0)
                return false;
        for (int i = 0; i <= pos; i++)
                if (c->unused & bit(c->ids[i]) & ~in)
                        below |= bit(c->ids[i]);
        if (ncm_bitmask_count(below) < k || !exists_k(c, true, below, 0, k, sum))
                return false;
        if (!((c->unused & ~in) & bit(c->ids[pos])))
                return smallest_subset(c, pos - 1, k, in, sum, ret);
        /* out first: a lower number */
        if (smallest_subset(c, pos - 1, k, in, sum, ret))
                return true;
        for (size_t r = 0; r < c->req->n; r++)
                next[r] = add_sat(sum[r], c->free[r][pos]);
        return smallest_subset(c, pos - 1, k - 1, in | bit(c->ids[pos]), next, ret);
}

/*
 * findBestHint over calculateHints' list (only hints containing WITHIN when it is not 0, as
 * extendTopologyManagerHint filters them), without listing it: a kept mask has at least
 * minAffinitySize nodes (it passes (a)), and the preferred ones exactly that many, so the
 * answer is the numerically smallest kept mask of the smallest size from minAffinitySize up.
 */
static int best_hint(calc *c, ncm_bitmask within, ncm_hint *ret, bool *found)
{
        collector extra = {.max = SIZE_MAX};
        int r;

        *found = false;
        if (c->n == 0)
                return 0;
        c->min_size = min_affinity_size(c);
        r = extra_candidates(c, &extra);
        if (r < 0) {
                free(extra.v);
                return r;
        }
        for (int k = c->min_size; k <= c->n && !*found; k++) {
                ncm_bitmask best = 0, x;
                bool have = false;
                for (size_t i = 0; i < extra.n; i++) {
                        x = extra.v[i];
                        if (ncm_bitmask_count(x) != k || (x & within) != within || !kept(c, x))
                                continue;
                        if (!have || x < best)
                                best = x;
                        have = true;
                }
                if ((within & ~c->unused) == 0 && ncm_bitmask_count(within) <= k) {
                        uint64_t sum[16] = {0};
                        int bits[NCM_BITMASK_MAX_BITS];
                        int nb = ncm_bitmask_to_bits(within, bits);
                        for (int i = 0; i < nb; i++) {
                                int ps = pos_of(c, bits[i]);
                                for (size_t t = 0; ps >= 0 && t < c->req->n; t++)
                                        sum[t] = add_sat(sum[t], c->free[t][ps]);
                        }
                        if (smallest_subset(c, c->n - 1, k - nb, within, sum, &x) && kept(c, x) &&
                            (!have || x < best)) {
                                best = x;
                                have = true;
                        }
                }
                if (have) {
                        ret->numa = best;
                        ret->any = false;
                        ret->preferred = k == c->min_size;
                        *found = true;
                }
        }
        free(extra.v);
        return 0;
}

/* isAffinityViolatingNUMAAllocations */
static bool violates(const ncm_mem_state *s, ncm_bitmask mask)
{
        bool single = ncm_bitmask_count(mask) == 1;
        int bits[NCM_BITMASK_MAX_BITS];
        int nb = ncm_bitmask_to_bits(mask, bits);
        for (int i = 0; i < nb; i++) {
                const ncm_mem_node *nd = ncm_mem_state_node(s, bits[i]);
                if (!nd || nd->nil || nd->assignments == 0 || single)
                        continue;
                if (nd->ncells == 1 || !cells_equal_mask(nd, mask))
                        return true;
        }
        return false;
}

bool ncm_mem_explain_mask(const ncm_mem_state *s, ncm_bitmask mask, ncm_buf *b)
{
        bool single = ncm_bitmask_count(mask) == 1;
        int bits[NCM_BITMASK_MAX_BITS];
        int nb = ncm_bitmask_to_bits(mask, bits);
        for (int i = 0; i < nb; i++) {
                const ncm_mem_node *nd = ncm_mem_state_node(s, bits[i]);
                if (!nd || nd->nil)
                        continue;
                if (single && nd->ncells > 1) {
                        ncm_buf_printf(b, "NUMA node %d is in the multi-node group [", bits[i]);
                        for (size_t k = 0; k < nd->ncells; k++)
                                ncm_buf_printf(b, k ? ",%d" : "%d", nd->cells[k]);
                        ncm_buf_puts(b, "], so it cannot serve a single-node allocation (the "
                                        "memory manager's group rule)");
                        return true;
                }
                if (single || nd->assignments <= 0)
                        continue;
                if (nd->ncells <= 1) {
                        ncm_buf_printf(b,
                                       "NUMA node %d serves %" PRId64
                                       " single-node allocation(s), so it cannot join the "
                                       "multi-node group [",
                                       bits[i], nd->assignments);
                        ncm_bitmask_format_ids(mask, b);
                        ncm_buf_puts(b, "] (the memory manager's group rule)");
                        return true;
                }
                if (!cells_equal_mask(nd, mask)) {
                        ncm_buf_printf(b, "NUMA node %d already belongs to the group [", bits[i]);
                        for (size_t k = 0; k < nd->ncells; k++)
                                ncm_buf_printf(b, k ? ",%d" : "%d", nd->cells[k]);
                        ncm_buf_puts(b, "], so it cannot be used with [");
                        ncm_bitmask_format_ids(mask, b);
                        ncm_buf_puts(b, "] (the memory manager's group rule)");
                        return true;
                }
        }
        return false;
}

/* isAffinitySatisfyRequest: the free memory of MASK's nodes holds every request. */
static bool satisfies(const ncm_mem_state *s, ncm_bitmask mask, const ncm_mem_request *req)
{
        for (size_t r = 0; r < req->n; r++) {
                uint64_t sum = 0;
                int bits[NCM_BITMASK_MAX_BITS];
                int nb = ncm_bitmask_to_bits(mask, bits);
                for (int i = 0; i < nb; i++) {
                        const ncm_mem_node *nd = ncm_mem_state_node(s, bits[i]);
                        const ncm_mem_table *t =
                                        nd && !nd->nil ? ncm_mem_node_table(nd, req->types[r])
                                                       : NULL;
                        sum = add_sat(sum, t ? t->free : 0);
                }
                if (sum < req->bytes[r])
                        return false;
        }
        return true;
}

/* updateMachineState: consume SIZE of TYPE node by node over BITS (mask order). */
static int consume(ncm_mem_state *s, const int *bits, int nb, const char *type, uint64_t size)
{
        for (int i = 0; i < nb; i++) {
                ncm_mem_node *nd = ncm_mem_state_node(s, bits[i]);
                ncm_mem_table *t;
                int *cells;
                if (!nd || nd->nil)
                        continue;
                nd->assignments++;
                cells = malloc((size_t)nb * sizeof(*cells));
                if (!cells)
                        return -ENOMEM;
                memcpy(cells, bits, (size_t)nb * sizeof(*cells));
                free(nd->cells);
                nd->cells = cells;
                nd->ncells = (size_t)nb;
                nd->cells_nil = false;
                if (size == 0)
                        continue;
                t = ncm_mem_node_table(nd, type);
                if (!t || t->free == 0)
                        continue;
                if (t->free >= size) {
                        t->reserved += size;
                        t->free -= size;
                        size = 0;
                        continue;
                }
                size -= t->free;
                t->reserved += t->free;
                t->free = 0;
        }
        return 0;
}

static bool regular_init(const ncm_pod *pod, const char *name)
{
        for (size_t i = 0; i < pod->n_init_containers; i++)
                if (strcmp(pod->init_containers[i].name, name) == 0)
                        return !pod->init_containers[i].sidecar;
        return false;
}

static reuse_entry *reuse_find(ncm_mem_policy *p, ncm_bitmask mask, const char *type)
{
        for (size_t i = 0; i < p->nreuse; i++)
                if (p->reuse[i].mask == mask && strcmp(p->reuse[i].type, type) == 0)
                        return &p->reuse[i];
        return NULL;
}

static ncm_bitmask block_mask(const ncm_mem_block *b)
{
        ncm_bitmask m = 0;
        for (size_t k = 0; k < b->nnuma; k++)
                if (b->numa[k] >= 0 && b->numa[k] < NCM_BITMASK_MAX_BITS)
                        m |= bit(b->numa[k]);
        return m;
}

/* updatePodReusableMemory */
static int update_reuse(ncm_mem_policy *p, const ncm_pod *pod, const char *container,
                        const ncm_mem_block *blocks, size_t n)
{
        if (p->reuse_pod && strcmp(p->reuse_pod, pod->uid) != 0)
                reuse_clear(p);
        if (regular_init(pod, container)) {
                if (!p->reuse_pod && !(p->reuse_pod = strdup(pod->uid)))
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        ncm_bitmask m = block_mask(&blocks[i]);
                        reuse_entry *e = reuse_find(p, m, blocks[i].type);
                        if (!e) {
                                reuse_entry ne = {.mask = m};
                                ne.type = strdup(blocks[i].type);
                                if (!ne.type ||
                                    ncm__array_grow(p->reuse, p->cap_reuse, p->nreuse) < 0) {
                                        free(ne.type);
                                        return -ENOMEM;
                                }
                                p->reuse[p->nreuse++] = ne;
                                e = &p->reuse[p->nreuse - 1];
                        }
                        if (blocks[i].size > e->bytes)
                                e->bytes = blocks[i].size;
                }
                return 0;
        }
        for (size_t i = 0; p->reuse_pod && i < n; i++) {
                reuse_entry *e = reuse_find(p, block_mask(&blocks[i]), blocks[i].type);
                if (!e || e->bytes == 0)
                        continue;
                e->bytes = blocks[i].size >= e->bytes ? 0 : e->bytes - blocks[i].size;
        }
        return 0;
}

/* updateInitContainersMemoryBlocks */
static int update_init_blocks(ncm_mem_state *s, const ncm_pod *pod, const char *container,
                              const ncm_mem_block *blocks, size_t n)
{
        for (size_t b = 0; b < n; b++) {
                uint64_t size = blocks[b].size;
                ncm_bitmask bm = block_mask(&blocks[b]);
                for (size_t i = 0; i < pod->n_init_containers; i++) {
                        const ncm_container *ic = &pod->init_containers[i];
                        const ncm_mem_container *cur;
                        ncm_mem_block *copy = NULL;
                        int r;
                        if (strcmp(ic->name, container) == 0 || size == 0)
                                break;
                        if (ic->sidecar)
                                continue;
                        cur = ncm_mem_state_container(s, pod->uid, ic->name);
                        if (!cur || cur->n == 0)
                                continue;
                        r = ncm__mem_blocks_copy(cur->blocks, cur->n, &copy);
                        if (r < 0)
                                return r;
                        for (size_t k = 0; k < cur->n; k++) {
                                ncm_mem_block *ib = &copy[k];
                                if (ib->size == 0 || strcmp(ib->type, blocks[b].type) != 0 ||
                                    block_mask(ib) != bm)
                                        continue;
                                if (ib->size > size) {
                                        ib->size -= size;
                                        size = 0;
                                } else {
                                        size -= ib->size;
                                        ib->size = 0;
                                }
                        }
                        r = ncm__mem_state_set(s, pod->uid, ic->name, copy, cur->n);
                        if (r < 0) {
                                ncm_mem_blocks_free(copy, cur->n);
                                return r;
                        }
                }
        }
        return 0;
}

static int refuse(ncm_error *err, const char *msg)
{
        return ncm_error_set(err, NCM_E_ADMISSION, "%s", msg);
}

int ncm_mem_policy_allocate(ncm_mem_policy *p, ncm_mem_state *s, const ncm_pod *pod,
                            const ncm_container *container, const ncm_hint *affinity,
                            bool *ret_pinned, ncm_error *err)
{
        ncm_mem_node *nodes = NULL; /* the machine state being changed */
        ncm_mem_state view = {0};
        ncm__mem_pod_saved saved = {0};
        ncm_mem_request req = {0};
        const ncm_mem_container *have;
        ncm_mem_block *blocks = NULL;
        ncm_hint best = *affinity;
        calc *c = NULL;
        int bits[NCM_BITMASK_MAX_BITS], nb, r;

        if (ret_pinned)
                *ret_pinned = false;
        if (!p->is_static || ncm_pod_compute_qos(pod) != NCM_QOS_GUARANTEED ||
            ncm_pod_level_resources_set(pod))
                return 0;
        if (ret_pinned)
                *ret_pinned = true;
        have = ncm_mem_state_container(s, pod->uid, container->name);
        if (have)
                return update_reuse(p, pod, container->name, have->blocks, have->n) < 0
                                       ? ncm_error_set(err, ENOMEM, "out of memory")
                                       : 0;
        r = ncm_mem_request_of(pod, container, &req, err);
        if (r < 0)
                return r == -ENOMEM ? r : -NCM_E_ADMISSION;
        c = malloc(sizeof(*c));
        if (!c) {
                r = ncm_error_set(err, ENOMEM, "out of memory");
                goto out;
        }
        calc_init(c, p, s, &req, pod->uid);
        if (affinity->any) {
                ncm_hint def;
                bool found;
                r = best_hint(c, 0, &def, &found);
                if (r < 0)
                        goto oom;
                if (!found) {
                        r = refuse(err, "[memorymanager] failed to get the default NUMA affinity, "
                                        "no NUMA nodes with enough memory is available");
                        goto out;
                }
                if (!def.preferred && best.preferred) {
                        r = refuse(err, "[memorymanager] failed to find the default preferred "
                                        "hint");
                        goto out;
                }
                best = def;
        }
        if (!satisfies(s, best.numa, &req)) {
                ncm_hint ext;
                bool found;
                r = best_hint(c, best.numa, &ext, &found);
                if (r < 0)
                        goto oom;
                if (!found) {
                        r = refuse(err, "[memorymanager] failed to find NUMA nodes to extend the "
                                        "current topology hint");
                        goto out;
                }
                if (!ext.preferred && best.preferred) {
                        r = refuse(err, "[memorymanager] failed to find the extended preferred "
                                        "hint");
                        goto out;
                }
                best = ext;
        }
        if (violates(s, best.numa)) {
                r = refuse(err, "[memorymanager] preferred hint violates NUMA node allocation");
                goto out;
        }
        /* the machine state is copied and changed, the pod's entry saved and changed in place:
         * not the whole state copied for every container */
        if (ncm__mem_nodes_copy(s->nodes, s->nnodes, &nodes) < 0) {
                nodes = NULL;
                goto oom;
        }
        view.nodes = nodes;
        view.nnodes = s->nnodes;
        blocks = calloc(req.n ? req.n : 1, sizeof(*blocks));
        if (!blocks)
                goto oom;
        nb = ncm_bitmask_to_bits(best.numa, bits);
        for (size_t i = 0; i < req.n; i++) {
                uint64_t size = req.bytes[i], reuse;
                blocks[i].numa = malloc((size_t)(nb ? nb : 1) * sizeof(int));
                blocks[i].type = strdup(req.types[i]);
                if (!blocks[i].numa || !blocks[i].type)
                        goto oom;
                memcpy(blocks[i].numa, bits, (size_t)nb * sizeof(int));
                blocks[i].nnuma = (size_t)nb;
                blocks[i].size = size;
                reuse = reusable(c, best.numa, req.types[i]);
                size = reuse >= size ? 0 : size - reuse;
                if (consume(&view, bits, nb, req.types[i], size) < 0)
                        goto oom;
        }
        if (ncm__mem_pod_save(s, pod->uid, &saved) < 0)
                goto oom;
        if (update_reuse(p, pod, container->name, blocks, req.n) < 0)
                goto undo;
        {
                ncm_mem_block *copy = NULL;
                if (ncm__mem_blocks_copy(blocks, req.n, &copy) < 0)
                        goto undo;
                if (ncm__mem_state_set(s, pod->uid, container->name, copy, req.n) < 0) {
                        ncm_mem_blocks_free(copy, req.n);
                        goto undo;
                }
        }
        if (update_init_blocks(s, pod, container->name, blocks, req.n) < 0)
                goto undo;
        /* commit: the machine state changed */
        {
                ncm_mem_node *old = s->nodes;
                s->nodes = nodes;
                nodes = old;
        }
        r = 0;
        goto out;
undo:
        ncm__mem_pod_restore(s, pod->uid, &saved);
oom:
        r = ncm_error_set(err, ENOMEM, "out of memory");
out:
        if (nodes)
                ncm__mem_nodes_free(nodes, s->nnodes);
        ncm__mem_pod_saved_done(&saved);
        ncm_mem_blocks_free(blocks, req.n);
        ncm_mem_request_done(&req);
        free(c);
        return r;
}

int ncm_mem_policy_remove(ncm_mem_policy *p, ncm_mem_state *s, const char *pod_uid,
                          const char *container)
{
        const ncm_mem_container *have = ncm_mem_state_container(s, pod_uid, container);
        ncm_mem_block *blocks = NULL;
        size_t n;

        (void)p;
        if (!have)
                return 0;
        n = have->n;
        if (ncm__mem_blocks_copy(have->blocks, n, &blocks) < 0)
                return -ENOMEM;
        ncm_mem_state_delete(s, pod_uid, container);
        for (size_t i = 0; i < n; i++) {
                uint64_t released = blocks[i].size;
                for (size_t k = 0; k < blocks[i].nnuma; k++) {
                        ncm_mem_node *nd = ncm_mem_state_node(s, blocks[i].numa[k]);
                        ncm_mem_table *t;
                        if (!nd || nd->nil)
                                continue;
                        nd->assignments--;
                        if (nd->assignments == 0) {
                                int *cells = malloc(sizeof(*cells));
                                if (!cells) {
                                        ncm_mem_blocks_free(blocks, n);
                                        return -ENOMEM;
                                }
                                cells[0] = nd->id;
                                free(nd->cells);
                                nd->cells = cells;
                                nd->ncells = 1;
                                nd->cells_nil = false;
                        }
                        if (released == 0)
                                continue;
                        t = ncm_mem_node_table(nd, blocks[i].type);
                        if (!t || t->reserved == 0)
                                continue;
                        if (t->reserved < released) {
                                released -= t->reserved;
                                t->free += t->reserved;
                                t->reserved = 0;
                                continue;
                        }
                        t->free += released;
                        t->reserved -= released;
                        released = 0;
                }
        }
        ncm_mem_blocks_free(blocks, n);
        return 1;
}

int ncm_mem_policy_allocatable(const ncm_mem_policy *p, const ncm_mem_state *s, ncm_mem_block **ret,
                               size_t *ret_n)
{
        ncm_mem_block *v = NULL;
        size_t n = 0, cap = 0;

        *ret = NULL;
        *ret_n = 0;
        if (!p->is_static)
                return 0;
        for (size_t i = 0; i < s->nnodes; i++) {
                const ncm_mem_node *nd = &s->nodes[i];
                for (size_t k = 0; !nd->nil && k < nd->ntypes; k++) {
                        const ncm_mem_type *t = &nd->types[k];
                        if (t->nil || t->t.allocatable == 0)
                                continue;
                        if (ncm__array_grow(v, cap, n) < 0)
                                goto oom;
                        v[n].numa = malloc(sizeof(int));
                        v[n].type = strdup(t->name);
                        n++;
                        if (!v[n - 1].numa || !v[n - 1].type)
                                goto oom;
                        v[n - 1].numa[0] = nd->id;
                        v[n - 1].nnuma = 1;
                        v[n - 1].size = t->t.allocatable;
                }
        }
        *ret = v;
        *ret_n = n;
        return 0;
oom:
        ncm_mem_blocks_free(v, n);
        return -ENOMEM;
}

/* ==========================================================================================
 * Start: validateState (and KEP-6232's drift tolerance)
 */

/* Replay the assignments on EXPECTED (updateExpectedMachineState). STRICT: an assignment that
 * no longer fits on its nodes is an error (the drift path). */
static int replay(const ncm_mem_state *s, ncm_mem_state *expected, bool strict, ncm_error *err)
{
        for (size_t i = 0; i < s->npods; i++) {
                const ncm_mem_pod *pod = &s->pods[i];
                for (size_t k = 0; k < pod->n; k++) {
                        const ncm_mem_container *ct = &pod->c[k];
                        for (size_t b = 0; b < ct->n; b++) {
                                const ncm_mem_block *bl = &ct->blocks[b];
                                uint64_t size = bl->size;
                                for (size_t x = 0; x < bl->nnuma; x++) {
                                        ncm_mem_node *nd =
                                                        ncm_mem_state_node(expected, bl->numa[x]);
                                        ncm_mem_table *t;
                                        int *cells;
                                        if (!nd)
                                                return ncm_error_set(
                                                                err, NCM_E_INVALID_STATE,
                                                                "[memorymanager] (pod: %s, "
                                                                "container: %s) the memory "
                                                                "assignment uses the NUMA that "
                                                                "does not exist",
                                                                pod->uid, ct->name);
                                        nd->assignments++;
                                        cells = malloc((bl->nnuma ? bl->nnuma : 1) * sizeof(int));
                                        if (!cells)
                                                return ncm_error_set(err, ENOMEM, "out of memory");
                                        if (bl->nnuma)
                                                memcpy(cells, bl->numa, bl->nnuma * sizeof(int));
                                        free(nd->cells);
                                        nd->cells = cells;
                                        nd->ncells = bl->nnuma;
                                        nd->cells_nil = bl->numa_nil;
                                        t = ncm_mem_node_table(nd, bl->type);
                                        if (!t)
                                                return ncm_error_set(
                                                                err, NCM_E_INVALID_STATE,
                                                                "[memorymanager] (pod: %s, "
                                                                "container: %s) the memory "
                                                                "assignment uses memory resource "
                                                                "that does not exist",
                                                                pod->uid, ct->name);
                                        if (size == 0 || t->free == 0)
                                                continue;
                                        if (t->free >= size) {
                                                t->reserved += size;
                                                t->free -= size;
                                                size = 0;
                                                continue;
                                        }
                                        size -= t->free;
                                        t->reserved += t->free;
                                        t->free = 0;
                                }
                                if (strict && size > 0)
                                        return ncm_error_set(err, NCM_E_INVALID_STATE,
                                                             "[memorymanager] (pod: %s, container: "
                                                             "%s) the memory assignment of %" PRIu64
                                                             " bytes of %s no longer fits on its "
                                                             "NUMA nodes",
                                                             pod->uid, ct->name, bl->size,
                                                             bl->type);
                        }
                }
        }
        return 0;
}

static bool groups_equal(const ncm_mem_node *a, const ncm_mem_node *b)
{
        int x[NCM_BITMASK_MAX_BITS * 2], y[NCM_BITMASK_MAX_BITS * 2];
        if (a->ncells != b->ncells || a->ncells > NCM_BITMASK_MAX_BITS * 2)
                return a->ncells == b->ncells && a->ncells == 0;
        for (size_t i = 0; i < a->ncells; i++) {
                x[i] = a->cells[i];
                y[i] = b->cells[i];
        }
        for (size_t i = 1; i < a->ncells; i++)
                for (size_t j = i; j > 0; j--) {
                        if (x[j - 1] > x[j]) {
                                int t = x[j];
                                x[j] = x[j - 1];
                                x[j - 1] = t;
                        }
                        if (y[j - 1] > y[j]) {
                                int t = y[j];
                                y[j] = y[j - 1];
                                y[j - 1] = t;
                        }
                }
        return memcmp(x, y, a->ncells * sizeof(int)) == 0;
}

static uint64_t udiff(uint64_t a, uint64_t b)
{
        return a > b ? a - b : b - a;
}

/* The free and reserved sums of TYPE over node N's group, in state S. */
static void group_sums(const ncm_mem_state *s, const ncm_mem_node *n, const char *type,
                       uint64_t *free, uint64_t *reserved)
{
        *free = *reserved = 0;
        for (size_t i = 0; i < n->ncells; i++) {
                const ncm_mem_node *m = ncm_mem_state_node(s, n->cells[i]);
                const ncm_mem_table *t = m && !m->nil ? ncm_mem_node_table(m, type) : NULL;
                if (t) {
                        *free += t->free;
                        *reserved += t->reserved;
                }
        }
}

/*
 * areMachineStatesEqual (DRIFT 0), or KEP-6232's comparison within DRIFT bytes: memory's total
 * and allocatable may differ by up to DRIFT per node (and its free with them); everything else
 * exact, the group-reserved sums included.
 */
static bool states_equal(const ncm_mem_state *a, const ncm_mem_state *b, uint64_t drift)
{
        if (a->nnodes != b->nnodes)
                return false;
        for (size_t i = 0; i < a->nnodes; i++) {
                const ncm_mem_node *x = &a->nodes[i], *y = ncm_mem_state_node(b, a->nodes[i].id);
                if (!y || x->nil || y->nil)
                        return y && x->nil == y->nil;
                if (x->assignments != y->assignments || !groups_equal(x, y) ||
                    x->ntypes != y->ntypes)
                        return false;
                for (size_t k = 0; k < x->ntypes; k++) {
                        const ncm_mem_type *tx = &x->types[k];
                        const ncm_mem_table *ty = ncm_mem_node_table(y, tx->name);
                        uint64_t fx, rx, fy, ry, allow;
                        if (tx->nil || !ty)
                                return false;
                        allow = strcmp(tx->name, NCM_RESOURCE_MEMORY) == 0 ? drift : 0;
                        if (udiff(tx->t.total, ty->total) > allow ||
                            tx->t.system_reserved != ty->system_reserved ||
                            udiff(tx->t.allocatable, ty->allocatable) > allow)
                                return false;
                        group_sums(a, x, tx->name, &fx, &rx);
                        group_sums(b, y, tx->name, &fy, &ry);
                        if (rx != ry)
                                return false;
                        if (udiff(fx, fy) > allow * (x->ncells ? x->ncells : 1))
                                return false;
                }
        }
        return true;
}

int ncm_mem_policy_start(ncm_mem_policy *p, ncm_mem_state *s, bool *ret_drifted, ncm_error *err)
{
        ncm_autoptr(ncm_mem_state) expected = NULL;
        int r;

        if (ret_drifted)
                *ret_drifted = false;
        if (!p->is_static)
                return 0;
        if (s->nnodes == 0) {
                if (s->npods != 0)
                        return ncm_error_set(err, NCM_E_INVALID_STATE,
                                             "[memorymanager] machine state can not be empty "
                                             "when it has memory assignments");
                r = ncm_mem_policy_default_machine(p, s);
                return r < 0 ? ncm_error_set(err, ENOMEM, "out of memory") : 0;
        }
        expected = ncm_mem_state_new(s->policy);
        if (!expected || ncm_mem_policy_default_machine(p, expected) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        r = replay(s, expected, false, err);
        if (r < 0)
                return r;
        if (states_equal(s, expected, 0))
                return 0;
        if (p->max_drift > 0) {
                ncm_autoptr(ncm_mem_state) strict = ncm_mem_state_new(s->policy);
                ncm_error e = NCM_ERROR_INIT;
                if (!strict || ncm_mem_policy_default_machine(p, strict) < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                r = replay(s, strict, true, &e);
                if (r == -ENOMEM)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                if (r < 0) {
                        if (err)
                                *err = e;
                        return r;
                }
                if (states_equal(s, strict, p->max_drift)) {
                        /* re-baseline onto the machine as it is now */
                        ncm_mem_node *v = NULL;
                        if (ncm__mem_nodes_copy(strict->nodes, strict->nnodes, &v) < 0)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        ncm__mem_nodes_free(s->nodes, s->nnodes);
                        s->nodes = v;
                        s->nnodes = strict->nnodes;
                        if (ret_drifted)
                                *ret_drifted = true;
                        return 0;
                }
        }
        return ncm_error_set(err, NCM_E_INVALID_STATE,
                             "[memorymanager] the expected machine state is different from the "
                             "real one");
}

int ncm_mem_policy_fit(const ncm_mem_policy *p, ncm_mem_state *s, ncm_error *err)
{
        ncm_autoptr(ncm_mem_state) fitted = NULL;
        int r;

        if (!p->is_static)
                return ncm_error_set(err, EINVAL, "--fit needs the Static policy");
        fitted = ncm_mem_state_new(s->policy);
        if (!fitted || ncm_mem_policy_default_machine(p, fitted) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        /* the kubelet's uint64 arithmetic wraps; a repair must not write such a machine */
        for (size_t i = 0; i < fitted->nnodes; i++)
                for (size_t k = 0; k < fitted->nodes[i].ntypes; k++) {
                        const ncm_mem_table *t = &fitted->nodes[i].types[k].t;
                        if (t->allocatable > t->total)
                                return ncm_error_set(err, NCM_E_INVALID_STATE,
                                                     "NUMA node %d: %s: the reservation (and "
                                                     "the hugepages) exceed the node's %" PRIu64
                                                     " bytes",
                                                     fitted->nodes[i].id,
                                                     fitted->nodes[i].types[k].name, t->total);
                }
        r = replay(s, fitted, true, err);
        if (r < 0)
                return r;
        ncm__mem_nodes_free(s->nodes, s->nnodes);
        s->nodes = NCM_TAKE_PTR(fitted->nodes);
        s->nnodes = fitted->nnodes;
        s->nodes_nil = false;
        fitted->nnodes = 0;
        return 0;
}
