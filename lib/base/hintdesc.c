/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hint descriptions (include/nodecm/hintdesc.h).
 *
 * Everything rests on one property of the kubelet's generators: whether a mask is a hint is
 * monotone. Adding a node to a mask only adds resources to its count and only helps it meet
 * a required resource, so every superset (within the walked nodes) of a hint is a hint. The
 * feasibility test below asks whether a region of masks (these nodes in, those out, so many
 * more from a pool) holds a hint; with per-node counts alone the largest R counts of the
 * pool decide it exactly, and resources spanning several nodes are settled by branching on
 * nodes with an optimistic bound (each node's own resources plus every multi-node resource
 * it touches, which overestimates a set's gain because a resource counts once).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hintdesc-internal.h"

/* Weights are counts of CPUs or devices; this bound keeps every sum far from overflow. */
#define WEIGHT_MAX (INT64_C(1) << 40)
/* Socket indexes (align-by-socket); more sockets than CPUs cannot exist on a real machine. */
#define SOCKETS_MAX 4096
#define SOCK_WORDS_MAX (SOCKETS_MAX / 64)
/* Counting enumerates the subsets of the nodes that multi-node resources touch. */
#define COUNT_TOUCHED_MAX 24
/* Counting keeps one counter per possible partial sum. */
#define COUNT_SUM_MAX (1 << 24)

static ncm_bitmask bit(int id)
{
        return UINT64_C(1) << id;
}

int ncm_hint_desc_new(const int *ids, size_t n, int64_t request, ncm_hint_desc **ret,
                      ncm_error *err)
{
        ncm_autoptr(ncm_hint_desc) d = NULL;

        if (n > NCM_BITMASK_MAX_BITS)
                return ncm_error_set(err, EINVAL, "bit number must be in range 0-63");
        d = calloc(1, sizeof(*d));
        if (!d)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                if (ids[i] < 0 || ids[i] > 63)
                        return ncm_error_set(err, EINVAL, "bit number must be in range 0-63");
                if (d->nodes & bit(ids[i]))
                        return ncm_error_set(err, EINVAL, "NUMA node %d listed twice", ids[i]);
                d->ids[i] = ids[i];
                d->nodes |= bit(ids[i]);
        }
        d->n = (int)n;
        d->request = request;
        *ret = NCM_TAKE_PTR(d);
        return 0;
}

static void count_done(ncm__hd_count *c)
{
        free(c->items);
        free(c->req_sets);
}

ncm_hint_desc *ncm_hint_desc_free(ncm_hint_desc *d)
{
        if (d) {
                count_done(&d->avail);
                count_done(&d->cap);
                free(d->sockets);
                free(d->extras);
                free(d);
        }
        return NULL;
}

static int count_add(ncm__hd_count *c, ncm_bitmask nodes, ncm_bitmask mask, int64_t weight)
{
        mask &= nodes;
        if (weight < 0 || weight > WEIGHT_MAX)
                return -ERANGE;
        if (mask == 0 || weight == 0)
                return 0;
        if ((mask & (mask - 1)) == 0) {
                int id = __builtin_ctzll(mask);
                if (c->w[id] > WEIGHT_MAX)
                        return -ERANGE;
                c->w[id] += weight;
                return 0;
        }
        if (c->n_items == c->cap_items) {
                size_t cap = c->cap_items ? 2 * c->cap_items : 8;
                ncm__hd_item *v = realloc(c->items, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                c->items = v;
                c->cap_items = cap;
        }
        c->items[c->n_items++] = (ncm__hd_item){mask, weight};
        c->touched |= mask;
        return 0;
}

int ncm_hint_desc_add_available(ncm_hint_desc *d, ncm_bitmask mask, int64_t weight)
{
        return d->sealed ? -EBUSY : count_add(&d->avail, d->nodes, mask, weight);
}

int ncm_hint_desc_add_capacity(ncm_hint_desc *d, ncm_bitmask mask, int64_t weight)
{
        return d->sealed ? -EBUSY : count_add(&d->cap, d->nodes, mask, weight);
}

int ncm_hint_desc_add_dimension(ncm_hint_desc *d, int64_t request)
{
        if (d->sealed)
                return -EBUSY;
        if (request < 0)
                return -ERANGE;
        if (d->n_dims == NCM__HD_DIMS_MAX)
                return -E2BIG;
        d->dim_request[d->n_dims++] = request;
        return d->n_dims;
}

int ncm_hint_desc_add_amount(ncm_hint_desc *d, int dim, int node, int64_t weight)
{
        if (d->sealed)
                return -EBUSY;
        if (dim < 0 || dim > d->n_dims || node < 0 || node >= NCM_BITMASK_MAX_BITS ||
            !(d->nodes & bit(node)))
                return -EINVAL;
        if (dim == 0)
                return count_add(&d->avail, d->nodes, bit(node), weight);
        if (weight < 0 || weight > WEIGHT_MAX || d->dim_w[dim - 1][node] > WEIGHT_MAX)
                return -ERANGE;
        d->dim_w[dim - 1][node] += weight;
        return 0;
}

int ncm_hint_desc_require(ncm_hint_desc *d, ncm_bitmask mask)
{
        ncm__hd_count *c = &d->avail;

        if (d->sealed)
                return -EBUSY;
        mask &= d->nodes;
        if (mask == 0) {
                d->empty = true;
                return 0;
        }
        if ((mask & (mask - 1)) == 0) {
                c->required |= mask;
                return 0;
        }
        if (c->n_req_sets == c->cap_req_sets) {
                size_t cap = c->cap_req_sets ? 2 * c->cap_req_sets : 8;
                ncm_bitmask *v = realloc(c->req_sets, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                c->req_sets = v;
                c->cap_req_sets = cap;
        }
        c->req_sets[c->n_req_sets++] = mask;
        c->touched |= mask;
        return 0;
}

void ncm_hint_desc_add_base(ncm_hint_desc *d, int64_t weight)
{
        if (!d->sealed && weight > 0 && weight <= WEIGHT_MAX && d->avail.base <= WEIGHT_MAX)
                d->avail.base += weight;
}

void ncm_hint_desc_set_empty(ncm_hint_desc *d)
{
        if (!d->sealed)
                d->empty = true;
}

int ncm_hint_desc_set_socket_alignment(ncm_hint_desc *d, int per_socket, int n_sockets)
{
        if (d->sealed)
                return -EBUSY;
        if (per_socket <= 0 || n_sockets <= 0 || n_sockets > SOCKETS_MAX)
                return -EINVAL;
        free(d->sockets);
        d->sock_words = (n_sockets + 63) / 64;
        d->sockets = calloc((size_t)NCM_BITMASK_MAX_BITS * (size_t)d->sock_words, sizeof(uint64_t));
        if (!d->sockets)
                return -ENOMEM;
        d->per_socket = per_socket;
        d->n_sockets = n_sockets;
        return 0;
}

int ncm_hint_desc_add_socket(ncm_hint_desc *d, int node, int socket)
{
        if (d->sealed)
                return -EBUSY;
        if (!d->sockets || node < 0 || node > 63 || socket < 0 || socket >= d->n_sockets)
                return -EINVAL;
        d->sockets[(size_t)node * (size_t)d->sock_words + (size_t)(socket / 64)] |=
                        UINT64_C(1) << (socket % 64);
        return 0;
}

int ncm__hd_sockets(const ncm_hint_desc *d, ncm_bitmask mask)
{
        uint64_t acc[SOCK_WORDS_MAX] = {0};
        int count = 0;

        if (!d->sockets)
                return 0;
        for (ncm_bitmask m = mask & d->nodes; m; m &= m - 1) {
                const uint64_t *s = &d->sockets[(size_t)__builtin_ctzll(m) * (size_t)d->sock_words];
                for (int w = 0; w < d->sock_words; w++)
                        acc[w] |= s[w];
        }
        for (int w = 0; w < d->sock_words; w++)
                count += ncm_popcount64(acc[w]);
        return count;
}

/* ---- counting a mask ---- */

/* base + the resources of MASK: its nodes' own plus every item it meets. */
static int64_t coverage(const ncm__hd_count *c, ncm_bitmask mask)
{
        int64_t sum = c->base;
        for (ncm_bitmask m = mask; m; m &= m - 1)
                sum += c->w[__builtin_ctzll(m)];
        for (size_t i = 0; i < c->n_items; i++)
                if (c->items[i].mask & mask)
                        sum += c->items[i].weight;
        return sum;
}

static bool sets_met(const ncm__hd_count *c, ncm_bitmask mask)
{
        if ((c->required & ~mask) != 0)
                return false;
        for (size_t i = 0; i < c->n_req_sets; i++)
                if (!(c->req_sets[i] & mask))
                        return false;
        return true;
}

/* The sum of the R largest per-node weights of POOL (ORDER lists the nodes, largest first). */
static int64_t top_sum(const ncm__hd_count *c, const int *order, int n, ncm_bitmask pool, int r)
{
        int64_t sum = 0;
        for (int i = 0; i < n && r > 0; i++) {
                if (pool & bit(order[i])) {
                        sum += c->w[order[i]];
                        r--;
                }
        }
        return sum;
}

static int cmp_gain_desc(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return (x < y) - (x > y);
}

/*
 * Branch and bound over the nodes of POOL for the general case (items or requirement sets
 * touch the pool). IN already holds the required single nodes.
 */
static bool search(const ncm__hd_count *c, int64_t request, const int *order, int n, ncm_bitmask in,
                   ncm_bitmask pool, int r)
{
        int64_t have = coverage(c, in), gain[NCM_BITMASK_MAX_BITS], sorted[NCM_BITMASK_MAX_BITS];
        ncm_bitmask unmet = 0;
        int k = 0, pick = -1;
        int64_t best = -1, bound = have;

        for (size_t i = 0; i < c->n_req_sets; i++) {
                if (c->req_sets[i] & in)
                        continue;
                if (!(c->req_sets[i] & pool) || r == 0)
                        return false;
                if (!unmet)
                        unmet = c->req_sets[i] & pool;
        }
        if (!unmet && have >= request)
                return in != 0 || r > 0;
        if (r == 0)
                return false;
        if (!((c->touched) & pool))
                return !unmet && have + top_sum(c, order, n, pool, r) >= request;

        /* Optimistic gains: a node's own weight plus every item it meets that IN does not. */
        for (ncm_bitmask m = pool; m; m &= m - 1)
                gain[__builtin_ctzll(m)] = c->w[__builtin_ctzll(m)];
        for (size_t i = 0; i < c->n_items; i++) {
                if (c->items[i].mask & in)
                        continue;
                for (ncm_bitmask m = c->items[i].mask & pool; m; m &= m - 1)
                        gain[__builtin_ctzll(m)] += c->items[i].weight;
        }
        for (ncm_bitmask m = pool; m; m &= m - 1) {
                int id = __builtin_ctzll(m);
                sorted[k++] = gain[id];
                if (gain[id] > best) {
                        best = gain[id];
                        pick = id;
                }
        }
        qsort(sorted, (size_t)k, sizeof(*sorted), cmp_gain_desc);
        for (int i = 0; i < r && i < k; i++)
                bound += sorted[i];
        if (bound < request)
                return false;
        /* An unmet requirement set must get one of its nodes: branch on those first. */
        if (unmet)
                pick = __builtin_ctzll(unmet);
        if (search(c, request, order, n, in | bit(pick), pool & ~bit(pick), r - 1))
                return true;
        pool &= ~bit(pick);
        if (ncm_popcount64(pool) < r)
                return false;
        return search(c, request, order, n, in, pool, r);
}

static bool count_feasible(const ncm__hd_count *c, int64_t request, const int *order, int n,
                           ncm_bitmask in, ncm_bitmask pool, int r)
{
        ncm_bitmask req = c->required & ~in;

        if (req & ~pool)
                return false;
        in |= req;
        pool &= ~req;
        r -= ncm_popcount64(req);
        if (r < 0 || ncm_popcount64(pool) < r || (in == 0 && r == 0))
                return false;
        if (c->n_items == 0 && c->n_req_sets == 0)
                return coverage(c, in) + top_sum(c, order, n, pool, r) >= request;
        return search(c, request, order, n, in, pool, r);
}

/* ---- several requests (dimension 0 is the first; only per-node amounts) ---- */

static int64_t dim_weight(const ncm_hint_desc *d, int t, int id)
{
        return t == 0 ? d->avail.w[id] : d->dim_w[t - 1][id];
}

static int64_t dim_request(const ncm_hint_desc *d, int t)
{
        return t == 0 ? d->request : d->dim_request[t - 1];
}

static const int *dim_order(const ncm_hint_desc *d, int t)
{
        return t == 0 ? d->avail.order : d->dim_order[t - 1];
}

/*
 * Whether some R nodes of POOL bring HAVE (the sums so far, per dimension) to every request.
 * Branch and bound: a dimension whose R largest amounts left cannot reach its request cuts
 * the branch (the bound is exact for one dimension); a dimension's R largest that happen to
 * reach every request end it; otherwise the largest node of the tightest dimension is taken
 * or left. Exact: both branches are searched until one of the two answers is certain.
 */
static bool dims_search(const ncm_hint_desc *d, const int64_t *have, ncm_bitmask pool, int r)
{
        int tight = -1, pick = -1;
        double tight_slack = 0;

        if (ncm_popcount64(pool) < r)
                return false;
        if (r == 0) {
                for (int t = 0; t <= d->n_dims; t++)
                        if (have[t] < dim_request(d, t))
                                return false;
                return true;
        }
        for (int t = 0; t <= d->n_dims; t++) {
                const int *order = dim_order(d, t);
                int64_t need = dim_request(d, t) - have[t], top = 0, sums[NCM__HD_DIMS_MAX + 1];
                ncm_bitmask taken = 0;
                bool all = true;
                double slack;
                if (need <= 0)
                        continue;
                for (int i = 0, left = r; i < d->n && left > 0; i++)
                        if (pool & bit(order[i])) {
                                top += dim_weight(d, t, order[i]);
                                taken |= bit(order[i]);
                                left--;
                        }
                if (top < need)
                        return false;
                /* the R largest of this dimension: a hint already? */
                for (int u = 0; u <= d->n_dims && all; u++) {
                        sums[u] = have[u];
                        for (ncm_bitmask m = taken; m; m &= m - 1)
                                sums[u] += dim_weight(d, u, __builtin_ctzll(m));
                        all = sums[u] >= dim_request(d, u);
                }
                if (all)
                        return true;
                slack = (double)(top - need) / (double)need;
                if (tight < 0 || slack < tight_slack) {
                        tight = t;
                        tight_slack = slack;
                        for (int i = 0; i < d->n; i++)
                                if (taken & bit(order[i])) {
                                        pick = order[i];
                                        break;
                                }
                }
        }
        if (tight < 0)
                return true; /* every request met already */
        {
                int64_t next[NCM__HD_DIMS_MAX + 1];
                for (int t = 0; t <= d->n_dims; t++)
                        next[t] = have[t] + dim_weight(d, t, pick);
                if (dims_search(d, next, pool & ~bit(pick), r - 1))
                        return true;
        }
        return dims_search(d, have, pool & ~bit(pick), r);
}

static bool dims_feasible(const ncm_hint_desc *d, ncm_bitmask in, ncm_bitmask pool, int r)
{
        int64_t have[NCM__HD_DIMS_MAX + 1];

        if (r < 0 || ncm_popcount64(pool) < r || (in == 0 && r == 0))
                return false;
        for (int t = 0; t <= d->n_dims; t++) {
                have[t] = 0;
                for (ncm_bitmask m = in; m; m &= m - 1)
                        have[t] += dim_weight(d, t, __builtin_ctzll(m));
        }
        return dims_search(d, have, pool, r);
}

bool ncm__hd_feasible(const ncm_hint_desc *d, ncm_bitmask in, ncm_bitmask pool, int r)
{
        if (d->empty)
                return false;
        if (d->n_dims)
                return dims_feasible(d, in, pool & ~in, r);
        return count_feasible(&d->avail, d->request, d->avail.order, d->n, in, pool & ~in, r);
}

bool ncm__hd_is_hint(const ncm_hint_desc *d, ncm_bitmask mask)
{
        if (d->empty || mask == 0 || (mask & ~d->nodes) != 0 || !sets_met(&d->avail, mask) ||
            coverage(&d->avail, mask) < d->request)
                return false;
        for (int t = 0; t < d->n_dims; t++) {
                int64_t sum = 0;
                for (ncm_bitmask m = mask; m; m &= m - 1)
                        sum += d->dim_w[t][__builtin_ctzll(m)];
                if (sum < d->dim_request[t])
                        return false;
        }
        return true;
}

bool ncm__hd_is_preferred(const ncm_hint_desc *d, ncm_bitmask mask)
{
        if (d->min_sockets > 0 && ncm__hd_sockets(d, mask) == d->min_sockets)
                return true;
        return ncm_popcount64(mask) == d->pref_size;
}

/* ---- sealing ---- */

/* Insertion sort by weight W (largest first, then lowest id): at most 64 ids, no global state. */
static void order_ids(const int64_t *w, int *order, const int *ids, int n)
{
        for (int i = 0; i < n; i++) {
                int id = ids[i], j = i;
                while (j > 0 && (w[order[j - 1]] < w[id] ||
                                 (w[order[j - 1]] == w[id] && order[j - 1] > id))) {
                        order[j] = order[j - 1];
                        j--;
                }
                order[j] = id;
        }
}

static void order_by_weight(ncm__hd_count *c, const int *ids, int n)
{
        order_ids(c->w, c->order, ids, n);
}

int ncm__hd_cmp_order(ncm_bitmask a, ncm_bitmask b)
{
        int ca = ncm_popcount64(a), cb = ncm_popcount64(b);

        if (ca != cb)
                return ca < cb ? -1 : 1;
        while (a != b) {
                ncm_bitmask la = a & -a, lb = b & -b;
                if (la != lb)
                        return la < lb ? -1 : 1;
                a &= ~la;
                b &= ~lb;
        }
        return 0;
}

static int cmp_order(const void *a, const void *b)
{
        return ncm__hd_cmp_order(*(const ncm_bitmask *)a, *(const ncm_bitmask *)b);
}

int ncm_hint_desc_add_extra(ncm_hint_desc *d, ncm_bitmask mask)
{
        if (mask == 0)
                return -EINVAL;
        if (d->sealed)
                return -EINVAL;
        if (d->n_extras == d->cap_extras) {
                size_t cap = d->cap_extras ? 2 * d->cap_extras : 8;
                ncm_bitmask *v = realloc(d->extras, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                d->extras = v;
                d->cap_extras = cap;
        }
        d->extras[d->n_extras++] = mask;
        return 0;
}

size_t ncm_hint_desc_n_extras(const ncm_hint_desc *d)
{
        return d->n_extras;
}

void ncm_hint_desc_set_preferred_size(ncm_hint_desc *d, int k)
{
        if (!d->sealed && k > 0)
                d->pref_given = k;
}

int ncm_hint_desc_seal(ncm_hint_desc *d, ncm_error *err)
{
        if (d->sealed)
                return 0;
        if (d->n_dims && (d->avail.n_items || d->avail.n_req_sets || d->avail.required ||
                          d->avail.base || d->per_socket > 0 || !d->pref_given))
                return ncm_error_set(err, EINVAL,
                                     "hints: a description with several requests takes per-node "
                                     "amounts and a given preferred size only");
        order_by_weight(&d->avail, d->ids, d->n);
        for (int t = 0; t < d->n_dims; t++)
                order_ids(d->dim_w[t], d->dim_order[t], d->ids, d->n);
        order_by_weight(&d->cap, d->ids, d->n);
        /* minAffinitySize starts at the number of walked nodes and shrinks to the smallest
         * mask whose capacity holds the request. */
        d->pref_size = d->pref_given ? d->pref_given : d->n;
        for (int c = 1; !d->pref_given && c < d->n; c++) {
                if (count_feasible(&d->cap, d->request, d->cap.order, d->n, 0, d->nodes, c)) {
                        d->pref_size = c;
                        break;
                }
        }
        if (d->per_socket > 0 && d->pref_size > 0)
                d->min_sockets = (d->pref_size + d->per_socket - 1) / d->per_socket;
        d->narrowest = 0;
        for (int c = 1; c <= d->n && !d->empty; c++) {
                if (ncm__hd_feasible(d, 0, d->nodes, c)) {
                        d->narrowest = c;
                        break;
                }
        }
        d->base_narrowest = d->narrowest;
        /* extras: sorted, without repeats and without the walked subsets' own hints */
        if (d->empty)
                d->n_extras = 0;
        if (d->n_extras) {
                size_t k = 0;
                qsort(d->extras, d->n_extras, sizeof(*d->extras), cmp_order);
                for (size_t i = 0; i < d->n_extras; i++) {
                        if ((k && d->extras[k - 1] == d->extras[i]) ||
                            ncm__hd_is_hint(d, d->extras[i]))
                                continue;
                        d->extras[k++] = d->extras[i];
                }
                d->n_extras = k;
                if (k && (!d->narrowest || ncm_popcount64(d->extras[0]) < d->narrowest))
                        d->narrowest = ncm_popcount64(d->extras[0]);
        }
        d->suffix[d->n] = 0;
        for (int p = d->n - 1; p >= 0; p--)
                d->suffix[p] = d->suffix[p + 1] | bit(d->ids[p]);
        d->free_nodes = 0;
        for (int i = 0; i < d->n; i++) {
                int id = d->ids[i];
                if (d->avail.w[id] == 0 && !((d->avail.required | d->avail.touched) & bit(id)))
                        d->free_nodes |= bit(id);
        }
        for (int t = 0; t < d->n_dims; t++)
                for (int i = 0; i < d->n; i++)
                        if (d->dim_w[t][d->ids[i]] != 0)
                                d->free_nodes &= ~bit(d->ids[i]);
        d->sealed = true;
        return 0;
}

ncm_bitmask ncm_hint_desc_nodes(const ncm_hint_desc *d)
{
        return d->nodes;
}

int ncm_hint_desc_preferred_size(const ncm_hint_desc *d)
{
        return d->pref_size;
}

bool ncm_hint_desc_socket_aligned(const ncm_hint_desc *d)
{
        return d->min_sockets > 0;
}

int ncm_hint_desc_narrowest(const ncm_hint_desc *d)
{
        return d->narrowest;
}

static bool is_extra(const ncm_hint_desc *d, ncm_bitmask mask)
{
        size_t lo = 0, hi = d->n_extras;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = ncm__hd_cmp_order(d->extras[mid], mask);
                if (c == 0)
                        return true;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
}

bool ncm_hint_desc_contains(const ncm_hint_desc *d, ncm_bitmask mask, bool *ret_preferred)
{
        bool in = ncm__hd_is_hint(d, mask) || (mask && is_extra(d, mask));
        if (ret_preferred)
                *ret_preferred = in && ncm__hd_is_preferred(d, mask);
        return in;
}

ncm_hint_desc *ncm_hint_desc_dup(const ncm_hint_desc *d)
{
        ncm_autoptr(ncm_hint_desc) c = malloc(sizeof(*c));

        if (!c)
                return NULL;
        *c = *d;
        c->avail.items = c->cap.items = NULL;
        c->avail.req_sets = c->cap.req_sets = NULL;
        c->sockets = NULL;
        c->extras = NULL;
        c->cap_extras = d->n_extras;
        c->avail.cap_items = c->avail.n_items;
        c->cap.cap_items = c->cap.n_items;
        c->avail.cap_req_sets = c->avail.n_req_sets;
        c->cap.cap_req_sets = c->cap.n_req_sets;
        if (d->avail.n_items && !(c->avail.items = malloc(d->avail.n_items * sizeof(ncm__hd_item))))
                return NULL;
        if (d->cap.n_items && !(c->cap.items = malloc(d->cap.n_items * sizeof(ncm__hd_item))))
                return NULL;
        if (d->avail.n_req_sets &&
            !(c->avail.req_sets = malloc(d->avail.n_req_sets * sizeof(ncm_bitmask))))
                return NULL;
        if (d->sockets && !(c->sockets = malloc((size_t)NCM_BITMASK_MAX_BITS *
                                                (size_t)d->sock_words * sizeof(uint64_t))))
                return NULL;
        if (d->n_extras && !(c->extras = malloc(d->n_extras * sizeof(ncm_bitmask))))
                return NULL;
        if (d->n_extras)
                memcpy(c->extras, d->extras, d->n_extras * sizeof(ncm_bitmask));
        if (d->avail.n_items)
                memcpy(c->avail.items, d->avail.items, d->avail.n_items * sizeof(ncm__hd_item));
        if (d->cap.n_items)
                memcpy(c->cap.items, d->cap.items, d->cap.n_items * sizeof(ncm__hd_item));
        if (d->avail.n_req_sets)
                memcpy(c->avail.req_sets, d->avail.req_sets,
                       d->avail.n_req_sets * sizeof(ncm_bitmask));
        if (d->sockets)
                memcpy(c->sockets, d->sockets,
                       (size_t)NCM_BITMASK_MAX_BITS * (size_t)d->sock_words * sizeof(uint64_t));
        return NCM_TAKE_PTR(c);
}

/* ---- counting the hints ---- */

/*
 * Subsets F of FREE with S0 + w(F) >= NEED (NEED > S0), counted modulo 2^64 (the true count of
 * hints is below 2^64, so the final sum is exact). -E2BIG when the sums are too wide to tabulate.
 */
static int count_sums(const ncm__hd_count *c, ncm_bitmask free, int64_t need, uint64_t *ret)
{
        int64_t top = 0;
        uint64_t zeros = 1;
        ncm_autofree uint64_t *f = NULL;

        for (ncm_bitmask m = free; m; m &= m - 1)
                top += c->w[__builtin_ctzll(m)];
        if (top < need) {
                *ret = 0;
                return 0;
        }
        if (need > COUNT_SUM_MAX)
                return -E2BIG;
        /* f[s]: subsets whose sum, capped at NEED, is s */
        f = calloc((size_t)need + 1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f[0] = 1;
        for (ncm_bitmask m = free; m; m &= m - 1) {
                int64_t w = c->w[__builtin_ctzll(m)];
                if (w == 0) {
                        zeros *= 2; /* in or out, the sum does not change */
                        continue;
                }
                /* 0/1 knapsack, sums taken from the top down; at NEED both ways stay there */
                for (int64_t s = need; s >= 0; s--)
                        f[s + w > need ? need : s + w] += f[s];
        }
        *ret = f[need] * zeros;
        return 0;
}

int ncm_hint_desc_count(const ncm_hint_desc *d, uint64_t *ret_total, ncm_error *err)
{
        const ncm__hd_count *c = &d->avail;
        ncm_bitmask wm = c->touched, rest = d->nodes & ~c->touched, sub = 0;
        uint64_t total = 0;

        if (d->empty) {
                *ret_total = 0;
                return 0;
        }
        if (d->n_dims)
                return ncm_error_set(err, E2BIG,
                                     "hints: a description with several requests is not counted");
        if (d->n == 0) {
                *ret_total = d->n_extras;
                return 0;
        }
        if (ncm_popcount64(wm) > COUNT_TOUCHED_MAX)
                return ncm_error_set(err, E2BIG,
                                     "hints: resources spanning several NUMA nodes touch %d "
                                     "nodes, too many to count (at most %d)",
                                     ncm_popcount64(wm), COUNT_TOUCHED_MAX);
        /* Every subset T of the touched nodes, then the untouched nodes by their sums. */
        for (;;) {
                ncm_bitmask t = sub;
                if ((c->required & wm & ~t) == 0 && sets_met(c, t | (c->required & ~wm))) {
                        ncm_bitmask forced = c->required & rest, free = rest & ~forced;
                        int64_t need = d->request - coverage(c, t | forced);
                        uint64_t n;
                        if (need <= 0) {
                                /* every subset of FREE; the empty mask is not a hint */
                                int k = ncm_popcount64(free);
                                n = k == 64 ? 0 : UINT64_C(1) << k;
                                if ((t | forced) == 0)
                                        n -= 1;
                        } else {
                                int r = count_sums(c, free, need, &n);
                                if (r == -E2BIG)
                                        return ncm_error_set(err, E2BIG,
                                                             "hints: a request of %lld is too "
                                                             "large to count",
                                                             (long long)d->request);
                                if (r < 0)
                                        return ncm_error_set(err, -r, "out of memory");
                        }
                        total += n;
                }
                if (sub == wm)
                        break;
                sub = (sub - wm) & wm; /* next subset of WM */
        }
        *ret_total = total + d->n_extras; /* the extras are not among them */
        return 0;
}

/* ---- the hints in the kubelet's order ---- */

void ncm_hint_desc_iter_init(ncm_hint_desc_iter *it, const ncm_hint_desc *d)
{
        memset(it, 0, sizeof(*it));
        it->d = d;
        it->k = 1;
}

/*
 * Fill positions J.. of a K-subset, the smallest in lexicographic order at or after START
 * for position J, such that the mask is a hint. IN holds the nodes of positions 0..J-1.
 */
static bool descend(ncm_hint_desc_iter *it, int j, int start, ncm_bitmask in)
{
        const ncm_hint_desc *d = it->d;
        int k = it->k;

        for (int p = start; p <= d->n - (k - j); p++) {
                ncm_bitmask b = bit(d->ids[p]), after = d->suffix[p + 1];
                /* Nothing from P on completes the subset: later P only have fewer choices. */
                if (!ncm__hd_feasible(d, in, after | b, k - j))
                        return false;
                if (!ncm__hd_feasible(d, in | b, after, k - j - 1))
                        continue;
                it->pos[j] = p;
                if (j == k - 1 || descend(it, j + 1, p + 1, in | b))
                        return true;
        }
        return false;
}

static bool walked_next(ncm_hint_desc_iter *it, ncm_hint *ret)
{
        const ncm_hint_desc *d = it->d;
        bool found = false;
        ncm_bitmask mask = 0;

        if (it->started) {
                for (int j = it->k - 1; j >= 0 && !found; j--) {
                        ncm_bitmask in = 0;
                        for (int q = 0; q < j; q++)
                                in |= bit(d->ids[it->pos[q]]);
                        found = descend(it, j, it->pos[j] + 1, in);
                }
                if (!found) {
                        it->started = false;
                        it->k++;
                }
        }
        while (!found && it->k <= d->n) {
                found = descend(it, 0, 0, 0);
                if (!found)
                        it->k++;
        }
        if (!found)
                return false;
        it->started = true;
        for (int q = 0; q < it->k; q++)
                mask |= bit(d->ids[it->pos[q]]);
        *ret = (ncm_hint){.numa = mask, .any = false, .preferred = ncm__hd_is_preferred(d, mask)};
        return true;
}

bool ncm_hint_desc_iter_next(ncm_hint_desc_iter *it, ncm_hint *ret)
{
        const ncm_hint_desc *d = it->d;

        if (d->n_extras == 0)
                return walked_next(it, ret);
        if (!it->have_walked && !it->walked_done) {
                it->have_walked = walked_next(it, &it->walked);
                it->walked_done = !it->have_walked;
        }
        if (it->xi < d->n_extras &&
            (!it->have_walked || ncm__hd_cmp_order(d->extras[it->xi], it->walked.numa) < 0)) {
                ncm_bitmask m = d->extras[it->xi++];
                *ret = (ncm_hint){.numa = m, .any = false, .preferred = ncm__hd_is_preferred(d, m)};
                return true;
        }
        if (!it->have_walked)
                return false;
        *ret = it->walked;
        it->have_walked = false;
        return true;
}

int ncm_hint_desc_materialize(const ncm_hint_desc *d, size_t max, ncm_hint_list *out,
                              ncm_error *err)
{
        ncm_hint_desc_iter it;
        ncm_hint h;
        size_t first = out->n;

        out->nil = false;
        ncm_hint_desc_iter_init(&it, d);
        while (ncm_hint_desc_iter_next(&it, &h)) {
                if (out->n - first >= max) {
                        out->n = first;
                        return ncm_error_set(err, E2BIG, "more than %zu topology hints", max);
                }
                if (ncm_hint_list_append(out, h) < 0) {
                        out->n = first;
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
        }
        return 0;
}

int ncm_hint_page(const ncm_hint_list *list, const ncm_hint_desc *desc, uint64_t offset,
                  size_t limit, ncm_hint_list *out, uint64_t *ret_total, ncm_error *err)
{
        size_t first = out->n;

        if (!desc) {
                for (uint64_t i = offset; i < list->n && out->n - first < limit; i++) {
                        if (ncm_hint_list_append(out, list->hints[i]) < 0) {
                                out->n = first;
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        }
                }
                out->nil = list->nil;
                *ret_total = list->n;
                return 0;
        }
        {
                ncm_hint_desc_iter it;
                ncm_hint h;
                uint64_t total, skipped = 0;
                bool exact = ncm_hint_desc_count(desc, &total, NULL) == 0;

                out->nil = false;
                ncm_hint_desc_iter_init(&it, desc);
                while (out->n - first < limit && ncm_hint_desc_iter_next(&it, &h)) {
                        if (skipped < offset) {
                                skipped++;
                                continue;
                        }
                        if (ncm_hint_list_append(out, h) < 0) {
                                out->n = first;
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        }
                }
                if (exact) {
                        *ret_total = total;
                        return 0;
                }
                *ret_total = skipped + (out->n - first) + ncm_hint_desc_iter_next(&it, &h);
                return 1;
        }
        return 0;
}
