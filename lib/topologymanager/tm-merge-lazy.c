/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The merge of described hint lists: kubelet's answer without any list of 2^N hints.
 *
 * Notation as in tm-merge-fast.c and docs/topology-manager.md ("The lazy merge" has this
 * argument at length). D: all NUMA nodes. Lists L_1..L_k are described (a CPU or device
 * generator's inputs, include/nodecm/hintdesc.h), the others explicit. B is
 * BestNonPreferredAffinityCount; T the fit order (Narrowest: count, then value; Closest:
 * count, average distance as Go computes it, then value).
 *
 * 0. What the fold returns. tm-merge-fast.c proves that kubelet's fold over all permutations
 *    returns the key-minimal element of the SET of distinct non-empty merged hints, keys:
 *    preferred (0, T); not preferred with |m| = B (1, T); |m| < B (2, -|m|, T); |m| > B
 *    (3, T). So it suffices to find that element; nothing depends on the order of lists or
 *    hints.
 *
 * 1. Described lists are up-closed. A mask M is a hint of a described list iff M is a
 *    non-empty subset of the walked nodes U, meets every required resource, and its count
 *    reaches the request (each of its requests: hintdesc.h's dimensions). Adding a node keeps
 *    all three, so every superset of a hint within U
 *    is a hint ("up-closed"); the list is empty iff U itself is not a hint. A hint is
 *    preferred iff |M| = minAffinitySize (a_i) or, with align-by-socket, M spans exactly the
 *    socket count the description states.
 *
 * 2. B. For a described list kubelet's narrowest hint has the smallest node count of any
 *    hint, which the description computes exactly (ncm_hint_desc_narrowest).
 *
 * 3. Preferred candidates. A permutation is preferred iff all its hints are preferred and
 *    all its non-"any" masks are one mask m; described lists never offer "any", so m is a
 *    preferred hint of every described list, and of every explicit list unless that list has
 *    a preferred "any" hint. (a) If some explicit list has no preferred "any" hint, m is one
 *    of its preferred masks: try each against the others, exactly (ncm_hint_desc_contains).
 *    (b) Otherwise every candidate is a mask m inside V = D & U_1 & ... & U_k that is a
 *    preferred hint of every described list, and the merged hint is m itself (m inside D).
 *    Keys compare by count first, so the answer is, for the smallest count c that has such an
 *    m, the T-minimal one: found by the search of step 6 with the predicate "preferred hint
 *    of every described list". If a preferred candidate exists it wins (class 0).
 *
 * 4. Otherwise all candidates are the non-empty achievable ANDs. Let Y be the set of
 *    non-empty ANDs of D with one mask from each explicit list ("any" is D), as the sparse way
 *    of tm-merge-fast.c builds it. An achievable AND is x = y & s_1 & ... & s_k for y in Y and
 *    hints s_i. Fix y and let W = y & U_1 & ... & U_k; x lies inside W. Claim: x (non-empty,
 *    inside W) is achievable with y iff the nodes of W \ x can be split into Z_1..Z_k such
 *    that U_i \ Z_i is a hint of L_i for every i. If: take s_i = U_i \ Z_i; it contains x, and
 *    every node of W \ x is missing from some s_i, every node of y outside W from some U_i.
 *    Only if: given s_i, put each node of W \ x into some Z_i with the node missing from s_i;
 *    U_i \ Z_i contains s_i, so it is a hint by step 1. With k = 1 the split is forced:
 *    x is achievable iff x | (U_1 \ y) is a hint.
 *
 *    Achievable sets (for one y) are up-closed inside W: adding nodes to x only shrinks the
 *    sets to split. And one of at most B nodes exists whenever W is not empty: take a list i
 *    and a narrowest hint h of it (|h| <= B). If h meets W, x = h & W works with Z_i = W \ x
 *    (U_i \ Z_i still contains h) and nothing for the others. If no narrowest hint of any
 *    list meets W, then any single node v of W works with Z_1 = W \ {v}. So for each y with
 *    W non-empty: if |W| >= B there is an achievable set of exactly B nodes (class 1); if
 *    |W| < B, W itself is its largest (class 2). Class 3 never occurs. The answer is class
 *    1's T-minimal achievable set of size B over the y with |W| >= B; failing that, the W of
 *    largest size, then T-minimal, among the y with 0 < |W| < B; failing that (every W
 *    empty) {D, not preferred}.
 *
 * 5. The split test is exact: nodes whose removal never changes a list's answer (no resource
 *    on them, not required) go to that list at once; the rest are assigned by depth-first
 *    search, abandoning a branch as soon as a list's remaining mask stops being a hint
 *    (removing more nodes cannot make it one again).
 *
 * 6. The search for the T-minimal mask of size c inside a candidate set C with an exact leaf
 *    predicate: decide C's nodes from the highest id down, "out" before "in". Leaves then come
 *    in ascending numeric order, so for Narrowest the first leaf that passes is the answer.
 *    For Closest every passing leaf is compared as kubelet compares (the average computed as
 *    ncm__tm_numa_avg does, equal averages going to the earlier, lower, mask). A subtree is cut
 *    only when no mask in it can pass: each list's feasibility test (exact per list,
 *    hintdesc.c), the size, and for k >= 2 the split of the nodes already out (a necessary
 *    condition by up-closure); for Closest also when a lower bound on the distance sum of every
 *    mask in the subtree gives an average not below the best so far (exact integer sums while
 *    distances stay below 2^40, otherwise no such cut).
 *
 * 7. Described lists reaching outside D break step 3(b)'s "m inside D"; the merge refuses them
 *    (-EDOM). The node never builds one (its CPU and device nodes are the machine's).
 *
 * 8. Extras (ncm_hint_desc_add_extra: the memory manager's used nodes and groups) make a list
 *    the union of its walked subsets and a few explicit masks, which is not up-closed. By
 *    step 0 the answer is the key-minimal element of the set of merged hints, and that set is
 *    the union, over the choices "walked subsets" or "extras" for each such list, of the sets
 *    with that list replaced by the one part: so each choice is merged on its own, with the
 *    B of the whole lists (the list's narrowest counts both parts), and the key-minimal
 *    result wins. With that B a walked part may be narrower than B no longer holds for the
 *    only described list of a choice; the claim of step 4 then needs |h| <= B for some
 *    described list, and when none has it the non-preferred answer can have more than B
 *    nodes: class 3 is searched too (sizes from B + 1 up, every achievable set being
 *    up-closed inside its W and W achievable).
 *
 * Cost: steps 3(b) and 4 with per-node counts only decide each node once per size tried with
 * an O(N) test, O(N^2) per search (64 nodes: a few thousand steps); resources spanning
 * several nodes, several described lists, align-by-socket and Closest can backtrack, bounded
 * by the 2^|C| leaves the kubelet would look at.
 */
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "tm-internal.h"

/* Distances up to this keep every sum of 64 x 64 of them exact in a double. */
#define DIST_EXACT_MAX (UINT64_C(1) << 40)

typedef struct lz lz;

typedef bool (*lz_region_fn)(const lz *z, ncm_bitmask in, ncm_bitmask out, ncm_bitmask undecided,
                             int need, int c);
typedef bool (*lz_leaf_fn)(const lz *z, ncm_bitmask x);

struct lz {
        const ncm__tm_merger *m;
        ncm_bitmask all;
        const ncm_hint_desc **desc; /* described lists */
        size_t k;
        /* phase-2 context: the y being searched */
        ncm_bitmask y, w;
        /* search */
        lz_region_fn region;
        lz_leaf_fn leaf;
        int c;
        int order[NCM_BITMASK_MAX_BITS]; /* candidate nodes, highest id first */
        int n_order;
        bool closest, lb_ok;
        uint64_t dmin; /* smallest distance between two distinct candidate nodes */
        bool found;
        ncm_bitmask best;
        double best_avg;
};

static ncm_bitmask bit(int id)
{
        return UINT64_C(1) << id;
}

/* ---- kubelet's fit order, T ---- */

/* Whether A comes before B in T (A != B, same node count). */
static bool t_before(const lz *z, ncm_bitmask a, ncm_bitmask b)
{
        if (z->m->closest)
                return ncm__tm_numa_closest(z->m->numa, a, b) == a;
        return ncm__tm_numa_narrowest(a, b) == a;
}

static uint64_t dist(const ncm__tm_numa *numa, int i, int j)
{
        int pi = numa->pos[i], pj = numa->pos[j];
        if (!numa->dist || pi < 0 || pj < 0)
                return 0;
        return numa->dist[(size_t)pi * numa->n + (size_t)pj];
}

/*
 * A lower bound on the average distance of any C-node mask IN | (NEED nodes of UND): the
 * pairs inside IN, for each added node its pairs with IN and itself (the NEED smallest such
 * sums), and the pairs among the added nodes at the smallest distance between candidates.
 */
static double lower_bound_avg(const lz *z, ncm_bitmask in, ncm_bitmask und, int need)
{
        const ncm__tm_numa *numa = z->m->numa;
        uint64_t sum = 0, g[NCM_BITMASK_MAX_BITS];
        int n = 0;

        for (ncm_bitmask a = in; a; a &= a - 1)
                for (ncm_bitmask b = in; b; b &= b - 1)
                        sum += dist(numa, __builtin_ctzll(a), __builtin_ctzll(b));
        for (ncm_bitmask v = und; v; v &= v - 1) {
                int id = __builtin_ctzll(v), j = n++;
                uint64_t s = dist(numa, id, id);
                for (ncm_bitmask a = in; a; a &= a - 1)
                        s += dist(numa, __builtin_ctzll(a), id) +
                             dist(numa, id, __builtin_ctzll(a));
                while (j > 0 && g[j - 1] > s) {
                        g[j] = g[j - 1];
                        j--;
                }
                g[j] = s;
        }
        for (int i = 0; i < need && i < n; i++)
                sum += g[i];
        sum += (uint64_t)need * (uint64_t)(need - 1) * z->dmin;
        return (double)sum / (double)((uint64_t)z->c * (uint64_t)z->c);
}

static void dfs(lz *z, int idx, ncm_bitmask in, ncm_bitmask out)
{
        int have = ncm_popcount64(in), need = z->c - have;
        ncm_bitmask und = 0;

        for (int i = idx; i < z->n_order; i++)
                und |= bit(z->order[i]);
        if (need < 0 || ncm_popcount64(und) < need)
                return;
        if (need == 0) {
                if (!z->leaf(z, in))
                        return;
                if (!z->closest) {
                        z->found = true;
                        z->best = in;
                        return;
                }
                double avg = ncm__tm_numa_avg(z->m->numa, in);
                if (!z->found || avg < z->best_avg) {
                        z->found = true;
                        z->best = in;
                        z->best_avg = avg;
                }
                return;
        }
        if (!z->region(z, in, out, und, need, z->c))
                return;
        if (z->closest && z->found && z->lb_ok && lower_bound_avg(z, in, und, need) >= z->best_avg)
                return;
        dfs(z, idx + 1, in, out | bit(z->order[idx]));
        if (z->found && !z->closest)
                return;
        dfs(z, idx + 1, in | bit(z->order[idx]), out);
}

/* The T-minimal mask of C nodes inside CAND passing the predicates, into *RET. */
static bool search(lz *z, ncm_bitmask cand, int c, lz_region_fn region, lz_leaf_fn leaf,
                   ncm_bitmask *ret)
{
        const ncm__tm_numa *numa = z->m->numa;

        if (c <= 0 || ncm_popcount64(cand) < c)
                return false;
        z->region = region;
        z->leaf = leaf;
        z->c = c;
        z->n_order = 0;
        for (int id = 63; id >= 0; id--)
                if (cand & bit(id))
                        z->order[z->n_order++] = id;
        z->closest = z->m->closest;
        z->found = false;
        z->best_avg = DBL_MAX;
        z->lb_ok = z->closest && numa->dist;
        z->dmin = UINT64_MAX;
        if (z->lb_ok) {
                for (ncm_bitmask a = cand; a; a &= a - 1) {
                        for (ncm_bitmask b = cand; b; b &= b - 1) {
                                uint64_t d = dist(numa, __builtin_ctzll(a), __builtin_ctzll(b));
                                if (d > DIST_EXACT_MAX)
                                        z->lb_ok = false;
                                if ((a & -a) != (b & -b) && d < z->dmin)
                                        z->dmin = d;
                        }
                }
                if (z->dmin == UINT64_MAX)
                        z->dmin = 0;
        }
        dfs(z, 0, 0, 0);
        if (z->found)
                *ret = z->best;
        return z->found;
}

/* ---- phase 1: preferred hints of every described list ---- */

static bool pref_region(const lz *z, ncm_bitmask in, ncm_bitmask out, ncm_bitmask und, int need,
                        int c)
{
        (void)out;
        for (size_t i = 0; i < z->k; i++) {
                const ncm_hint_desc *d = z->desc[i];
                if (!ncm__hd_feasible(d, in, und, need))
                        return false;
                if (c != d->pref_size &&
                    (d->min_sockets == 0 || ncm__hd_sockets(d, in) > d->min_sockets))
                        return false;
        }
        return true;
}

static bool pref_leaf(const lz *z, ncm_bitmask x)
{
        for (size_t i = 0; i < z->k; i++)
                if (!ncm__hd_is_hint(z->desc[i], x) || !ncm__hd_is_preferred(z->desc[i], x))
                        return false;
        return true;
}

/* ---- phase 2: achievable ANDs with the current y ---- */

/* Step 5: can the nodes of Z be split so that each list keeps a hint? */
static bool split(const lz *z, ncm_bitmask zs)
{
        ncm_bitmask taken[64] = {0}, hard = 0;
        int nodes[NCM_BITMASK_MAX_BITS], n = 0, choice[NCM_BITMASK_MAX_BITS];
        size_t k = z->k < 64 ? z->k : 64;

        if (z->k > 64)
                return false; /* not reached: the caller checks */
        for (ncm_bitmask v = zs; v; v &= v - 1) {
                int id = __builtin_ctzll(v);
                size_t i;
                for (i = 0; i < k; i++)
                        if (z->desc[i]->free_nodes & bit(id))
                                break;
                if (i == k)
                        hard |= bit(id);
        }
        for (ncm_bitmask v = hard; v; v &= v - 1)
                nodes[n++] = __builtin_ctzll(v);
        if (n == 0)
                return true;
        /* depth-first over the hard nodes, each to a list that still keeps a hint */
        for (int j = 0; j < n; j++)
                choice[j] = -1;
        for (int j = 0; j >= 0;) {
                if (j == n)
                        return true;
                if (choice[j] >= 0)
                        taken[choice[j]] &= ~bit(nodes[j]);
                choice[j]++;
                while (choice[j] < (int)k) {
                        const ncm_hint_desc *d = z->desc[choice[j]];
                        ncm_bitmask t = taken[choice[j]] | bit(nodes[j]);
                        if (ncm__hd_is_hint(d, d->nodes & ~t))
                                break;
                        choice[j]++;
                }
                if (choice[j] < (int)k) {
                        taken[choice[j]] |= bit(nodes[j]);
                        j++;
                        if (j < n)
                                choice[j] = -1;
                } else {
                        choice[j] = -1;
                        j--;
                }
        }
        return false;
}

static bool ach_region(const lz *z, ncm_bitmask in, ncm_bitmask out, ncm_bitmask und, int need,
                       int c)
{
        (void)c;
        if (z->k == 1) {
                const ncm_hint_desc *d = z->desc[0];
                return ncm__hd_feasible(d, in | (d->nodes & ~z->y), und, need);
        }
        /* keeping every undecided node is the easiest completion (up-closure) */
        return split(z, out & z->w);
}

static bool ach_leaf(const lz *z, ncm_bitmask x)
{
        if (z->k == 1) {
                const ncm_hint_desc *d = z->desc[0];
                return ncm__hd_is_hint(d, x | (d->nodes & ~z->y));
        }
        return split(z, z->w & ~x);
}

/* ---- the explicit lists ---- */

/*
 * Step 3(a): the raw masks of the explicit list without a preferred "any" hint (the one with
 * fewest such masks) that every other list offers as preferred, into *RET (malloc'd, sorted,
 * distinct) and *RET_N.
 */
static int preferred_explicit(const lz *z, uint64_t **ret, size_t *ret_n)
{
        const ncm__tm_merger *m = z->m;
        ncm_autofree uint64_t *masks = NULL, *out = NULL;
        ncm_autofree size_t *start = NULL, *len = NULL;
        ncm_autofree bool *any_pref = NULL;
        size_t total = 0, gen = SIZE_MAX, k = 0;

        for (size_t i = 0; i < m->n; i++)
                total += m->lists[i].n;
        masks = malloc((total ? total : 1) * sizeof(*masks));
        start = calloc(m->n + 1, sizeof(*start));
        len = calloc(m->n + 1, sizeof(*len));
        any_pref = calloc(m->n + 1, sizeof(*any_pref));
        if (!masks || !start || !len || !any_pref)
                return -ENOMEM;
        total = 0;
        for (size_t i = 0; i < m->n; i++) {
                start[i] = total;
                if (m->descs && m->descs[i])
                        continue;
                for (size_t j = 0; j < m->lists[i].n; j++) {
                        const ncm_hint *h = &m->lists[i].hints[j];
                        if (!h->preferred)
                                continue;
                        if (h->any)
                                any_pref[i] = true;
                        else
                                masks[total++] = h->numa;
                }
                len[i] = ncm__tm_sort_unique(&masks[start[i]], total - start[i]);
                total = start[i] + len[i];
                if (!any_pref[i] && (gen == SIZE_MAX || len[i] < len[gen]))
                        gen = i;
        }
        out = malloc(((gen == SIZE_MAX ? 0 : len[gen]) + 1) * sizeof(*out));
        if (!out)
                return -ENOMEM;
        for (size_t c = 0; gen != SIZE_MAX && c < len[gen]; c++) {
                uint64_t mask = masks[start[gen] + c];
                bool ok = true;
                for (size_t i = 0; i < m->n && ok; i++) {
                        bool pref;
                        if (m->descs && m->descs[i])
                                ok = ncm_hint_desc_contains(m->descs[i], mask, &pref) && pref;
                        else
                                ok = any_pref[i] ||
                                     ncm__tm_sorted_contains(&masks[start[i]], len[i], mask);
                }
                if (ok)
                        out[k++] = mask;
        }
        *ret = NCM_TAKE_PTR(out);
        *ret_n = k;
        return 0;
}

/* Step 4's Y: the non-empty ANDs of D with one mask of each explicit list, sorted. */
static int explicit_ands(const lz *z, uint64_t **ret, size_t *ret_n)
{
        const ncm__tm_merger *m = z->m;
        ncm_autofree uint64_t *cur = malloc(sizeof(*cur));
        size_t n = 1;

        if (!cur)
                return -ENOMEM;
        cur[0] = z->all;
        for (size_t i = 0; i < m->n && n > 0; i++) {
                const ncm__tm_list *l = &m->lists[i];
                ncm_autofree uint64_t *next = NULL;
                size_t k = 0;
                if (m->descs && m->descs[i])
                        continue;
                if (n > SIZE_MAX / (l->n + 1))
                        return -ENOMEM;
                next = malloc((n * l->n + 1) * sizeof(*next));
                if (!next)
                        return -ENOMEM;
                for (size_t a = 0; a < n; a++)
                        for (size_t j = 0; j < l->n; j++) {
                                const ncm_hint *h = &l->hints[j];
                                uint64_t v = cur[a] & (h->any ? z->all : h->numa);
                                if (v)
                                        next[k++] = v;
                        }
                n = ncm__tm_sort_unique(next, k);
                free(cur);
                cur = NCM_TAKE_PTR(next);
        }
        *ret = NCM_TAKE_PTR(cur);
        *ret_n = n;
        return 0;
}

/* Step 4: the best non-preferred candidate. */
static int nonpreferred(lz *z, ncm_hint *best, bool *have)
{
        ncm_autofree uint64_t *ys = NULL;
        ncm_bitmask inter = z->all, found_mask = 0;
        size_t ny = 0;
        int b = z->m->best_non_preferred, r;
        bool found = false;

        for (size_t i = 0; i < z->k; i++)
                inter &= z->desc[i]->nodes;
        r = explicit_ands(z, &ys, &ny);
        if (r < 0)
                return r;

        /* class 1: size B (found for every y with |W| >= B, see above) */
        for (size_t i = 0; i < ny && b >= 1; i++) {
                ncm_bitmask x;
                z->y = ys[i];
                z->w = ys[i] & inter;
                if (ncm_popcount64(z->w) < b)
                        continue;
                if (search(z, z->w, b, ach_region, ach_leaf, &x) &&
                    (!found || t_before(z, x, found_mask))) {
                        found = true;
                        found_mask = x;
                }
        }
        /* class 2: the largest W below B (each such y's largest achievable set) */
        if (!found) {
                int bestc = 0;
                for (size_t i = 0; i < ny; i++) {
                        ncm_bitmask w = ys[i] & inter;
                        int c = ncm_popcount64(w);
                        if (c == 0 || c >= b)
                                continue;
                        if (c > bestc || (c == bestc && t_before(z, w, found_mask))) {
                                bestc = c;
                                found_mask = w;
                                found = true;
                        }
                }
        }
        /* class 3: only when no described list has a hint of at most B nodes (step 8) */
        for (int c = b + 1; !found && c <= 64; c++) {
                bool any = false;
                for (size_t i = 0; i < ny; i++) {
                        ncm_bitmask x;
                        z->y = ys[i];
                        z->w = ys[i] & inter;
                        if (ncm_popcount64(z->w) < c)
                                continue;
                        any = true;
                        if (search(z, z->w, c, ach_region, ach_leaf, &x) &&
                            (!found || t_before(z, x, found_mask))) {
                                found = true;
                                found_mask = x;
                        }
                }
                if (!any)
                        break;
        }
        if (found)
                ncm__tm_fold(z->m, best, have, (ncm_hint){.numa = found_mask, .preferred = false});
        return 0;
}

static int merge_lazy_one(const ncm__tm_merger *m, ncm_hint *ret, bool *ret_have)
{
        const ncm_hint none = {.numa = m->numa->all, .any = false, .preferred = false};
        ncm_autofree const ncm_hint_desc **desc = NULL;
        lz z = {.m = m, .all = m->numa->all};
        ncm_hint best = {0};
        bool have = false, explicit_gen = false;
        int r;

        *ret_have = false;
        desc = calloc(m->n + 1, sizeof(*desc));
        if (!desc)
                return -ENOMEM;
        for (size_t i = 0; i < m->n; i++) {
                const ncm__tm_list *l = &m->lists[i];
                const ncm_hint_desc *d = m->descs ? m->descs[i] : NULL;
                if (d) {
                        /* described lists have hints: empty ones were normalised to
                         * [{any, not preferred}] like explicit empty lists */
                        if (d->nodes & ~z.all)
                                return -EDOM;
                        desc[z.k++] = d;
                        continue;
                }
                if (l->n == 0) {
                        *ret = none;
                        return 0;
                }
                bool any_pref = false;
                for (size_t j = 0; j < l->n && !any_pref; j++)
                        any_pref = l->hints[j].any && l->hints[j].preferred;
                if (!any_pref)
                        explicit_gen = true;
        }
        if (z.k == 0)
                return ncm__tm_merge_fast_have(m, ret, ret_have);
        if (z.k > 64)
                return -ENOMEM; /* more described lists than the split test tracks */
        z.desc = desc;

        /* step 3 */
        if (explicit_gen) {
                ncm_autofree uint64_t *cand = NULL;
                size_t nc = 0;
                r = preferred_explicit(&z, &cand, &nc);
                if (r < 0)
                        return r;
                for (size_t c = 0; c < nc; c++)
                        ncm__tm_fold(m, &best, &have,
                                     (ncm_hint){.numa = z.all & cand[c], .preferred = true});
        } else {
                ncm_bitmask cand = z.all, x;
                int fixed = 0;
                bool none_fit = false;
                for (size_t i = 0; i < z.k; i++) {
                        cand &= desc[i]->nodes;
                        /* without socket alignment a list prefers one size only */
                        if (desc[i]->min_sockets == 0) {
                                if (fixed && fixed != desc[i]->pref_size)
                                        none_fit = true;
                                fixed = desc[i]->pref_size;
                        }
                }
                for (int c = fixed ? fixed : 1; !none_fit && c <= (fixed ? fixed : 64); c++) {
                        if (ncm_popcount64(cand) < c)
                                break;
                        if (search(&z, cand, c, pref_region, pref_leaf, &x)) {
                                ncm__tm_fold(m, &best, &have,
                                             (ncm_hint){.numa = x, .preferred = true});
                                break;
                        }
                }
        }
        if (have) {
                *ret = best;
                *ret_have = true;
                return 0;
        }
        /* step 4 */
        r = nonpreferred(&z, &best, &have);
        if (r < 0)
                return r;
        *ret = have ? best : none;
        *ret_have = have;
        return 0;
}

/* ---- lists with extras (step 8) ---- */

/* At most this many lists with extras (2^N merges). */
#define SPLIT_MAX 6

typedef struct xsplit {
        ncm__tm_merger sub;
        ncm__tm_list *lists;
        const ncm_hint_desc **descs;
        ncm_hint_desc *walked; /* per split list: its walked part alone (a shallow copy) */
        ncm_hint *extras;      /* per split list: its extras, listed */
        size_t idx[SPLIT_MAX], n;
} xsplit;

static void split_done(xsplit *s)
{
        free(s->lists);
        free(s->descs);
        free(s->walked);
        free(s->extras);
}

/* 0 when M has no list with extras, 1 when S is set up, -errno. */
static int split_init(const ncm__tm_merger *m, xsplit *s)
{
        size_t nx = 0, at = 0;

        memset(s, 0, sizeof(*s));
        for (size_t i = 0; m->descs && i < m->n; i++) {
                if (!m->descs[i] || m->descs[i]->n_extras == 0)
                        continue;
                if (s->n == SPLIT_MAX)
                        return -E2BIG;
                s->idx[s->n++] = i;
                nx += m->descs[i]->n_extras;
        }
        if (s->n == 0)
                return 0;
        s->lists = calloc(m->n, sizeof(*s->lists));
        s->descs = calloc(m->n, sizeof(*s->descs));
        s->walked = calloc(s->n, sizeof(*s->walked));
        s->extras = calloc(nx, sizeof(*s->extras));
        if (!s->lists || !s->descs || !s->walked || !s->extras) {
                split_done(s);
                return -ENOMEM;
        }
        memcpy(s->lists, m->lists, m->n * sizeof(*s->lists));
        memcpy(s->descs, m->descs, m->n * sizeof(*s->descs));
        for (size_t j = 0; j < s->n; j++) {
                const ncm_hint_desc *d = m->descs[s->idx[j]];
                s->walked[j] = *d;
                s->walked[j].extras = NULL;
                s->walked[j].n_extras = s->walked[j].cap_extras = 0;
                s->walked[j].narrowest = d->base_narrowest;
                for (size_t k = 0; k < d->n_extras; k++)
                        s->extras[at + k] = (ncm_hint){
                                        .numa = d->extras[k],
                                        .preferred = ncm__hd_is_preferred(d, d->extras[k])};
                s->lists[s->idx[j]] = (ncm__tm_list){&s->extras[at], d->n_extras};
                at += d->n_extras;
        }
        s->sub = *m; /* B stays the whole lists' */
        s->sub.lists = s->lists;
        s->sub.descs = s->descs;
        return 1;
}

/* Set the choice CHOICE (bit j: split list j takes its walked part); false when a walked part
 * chosen has no hint (that choice has no permutation). */
static bool split_choose(xsplit *s, unsigned choice)
{
        for (size_t j = 0; j < s->n; j++) {
                size_t i = s->idx[j];
                bool walked = choice & (1u << j);
                if (walked && s->walked[j].base_narrowest == 0)
                        return false;
                s->descs[i] = walked ? &s->walked[j] : NULL;
        }
        return true;
}

int ncm__tm_merge_lazy(const ncm__tm_merger *m, ncm_hint *ret)
{
        const ncm_hint none = {.numa = m->numa->all, .any = false, .preferred = false};
        xsplit s;
        ncm_hint best = {0}, h;
        bool have = false, one;
        int r = split_init(m, &s);

        if (r <= 0)
                return r < 0 ? r : merge_lazy_one(m, ret, &one);
        for (unsigned choice = 0; choice < (1u << s.n) && r >= 0; choice++) {
                if (!split_choose(&s, choice))
                        continue;
                r = merge_lazy_one(&s.sub, &h, &one);
                if (r >= 0 && one)
                        ncm__tm_fold(m, &best, &have, h);
        }
        split_done(&s);
        if (r < 0)
                return r;
        *ret = have ? best : none;
        return 0;
}

/* ---- the preferred candidates, for the trace ---- */

typedef struct enum_ctx {
        lz *z;
        int ids[NCM_BITMASK_MAX_BITS]; /* candidate nodes, ascending */
        int n;
        ncm_bitmask *out;
        size_t max, found;
} enum_ctx;

/* Masks of C nodes in lexicographic order of their ids: "in" before "out", lowest id first. */
static bool enum_dfs(enum_ctx *e, int idx, ncm_bitmask in, int c)
{
        int need = c - ncm_popcount64(in);
        ncm_bitmask und = 0;

        if (need == 0) {
                if (!pref_leaf(e->z, in))
                        return false;
                if (e->found < e->max)
                        e->out[e->found] = in;
                return ++e->found > e->max; /* one past MAX: there are more, stop */
        }
        for (int i = idx; i < e->n; i++)
                und |= bit(e->ids[i]);
        if (ncm_popcount64(und) < need || !pref_region(e->z, in, 0, und, need, c))
                return false;
        if (enum_dfs(e, idx + 1, in | bit(e->ids[idx]), c))
                return true;
        return enum_dfs(e, idx + 1, in, c);
}

static int lazy_candidates_one(const ncm__tm_merger *m, ncm_bitmask *out, size_t max,
                               bool *ret_more)
{
        ncm_autofree const ncm_hint_desc **desc = calloc(m->n + 1, sizeof(*desc));
        lz z = {.m = m, .all = m->numa->all};
        bool explicit_gen = false;
        ncm_bitmask cand = m->numa->all;
        enum_ctx e = {.z = &z, .out = out, .max = max};
        int fixed = 0;

        *ret_more = false;
        if (!desc)
                return -ENOMEM;
        for (size_t i = 0; i < m->n; i++) {
                const ncm_hint_desc *d = m->descs ? m->descs[i] : NULL;
                bool any_pref = false;
                if (d) {
                        desc[z.k++] = d;
                        cand &= d->nodes;
                        continue;
                }
                for (size_t j = 0; j < m->lists[i].n && !any_pref; j++)
                        any_pref = m->lists[i].hints[j].any && m->lists[i].hints[j].preferred;
                explicit_gen = explicit_gen || !any_pref;
        }
        z.desc = desc;
        if (explicit_gen) {
                ncm_autofree uint64_t *all = NULL;
                size_t n = 0;
                int r = preferred_explicit(&z, &all, &n);
                if (r < 0)
                        return r;
                qsort(all, n, sizeof(*all), ncm__tm_cmp_trace_order);
                for (size_t i = 0; i < n && i < max; i++)
                        out[i] = all[i];
                *ret_more = n > max;
                return (int)(n < max ? n : max);
        }
        for (int id = 0; id < 64; id++)
                if (cand & bit(id))
                        e.ids[e.n++] = id;
        for (size_t i = 0; i < z.k; i++) {
                if (desc[i]->min_sockets != 0)
                        continue;
                if (fixed && fixed != desc[i]->pref_size)
                        return 0; /* two lists prefer different sizes: no candidate */
                fixed = desc[i]->pref_size;
        }
        for (int c = fixed ? fixed : 1; c <= (fixed ? fixed : e.n); c++) {
                if (enum_dfs(&e, 0, 0, c)) {
                        *ret_more = true;
                        break;
                }
        }
        return (int)(e.found < max ? e.found : max);
}

int ncm__tm_lazy_candidates(const ncm__tm_merger *m, ncm_bitmask *out, size_t max, bool *ret_more)
{
        xsplit s;
        ncm_autofree ncm_bitmask *all = NULL, *one = NULL;
        size_t n = 0;
        int r = split_init(m, &s);

        if (r <= 0)
                return r < 0 ? r : lazy_candidates_one(m, out, max, ret_more);
        *ret_more = false;
        all = calloc(((size_t)1 << s.n) * (max + 1) + 1, sizeof(*all));
        one = calloc(max + 1, sizeof(*one));
        if (!all || !one) {
                split_done(&s);
                return -ENOMEM;
        }
        /* the union of every choice's candidates, in the trace's order */
        for (unsigned choice = 0; choice < (1u << s.n); choice++) {
                bool more = false;
                if (!split_choose(&s, choice))
                        continue;
                r = lazy_candidates_one(&s.sub, one, max, &more);
                if (r < 0)
                        break;
                memcpy(all + n, one, (size_t)r * sizeof(*one));
                n += (size_t)r;
                *ret_more = *ret_more || more;
        }
        split_done(&s);
        if (r < 0)
                return r;
        qsort(all, n, sizeof(*all), ncm__tm_cmp_trace_order);
        {
                size_t k = 0;
                for (size_t i = 0; i < n; i++)
                        if (k == 0 || all[k - 1] != all[i])
                                all[k++] = all[i];
                n = k;
        }
        if (n > max)
                *ret_more = true;
        n = n < max ? n : max;
        memcpy(out, all, n * sizeof(*out));
        return (int)n;
}
