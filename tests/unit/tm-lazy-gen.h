/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Random inputs for the lazy merge's differential tests (tests/unit/test-tm-merge-lazy.c) and
 * its fuzz target (tests/fuzz/fuzz-tm-merge-lazy.c): a machine of up to LG_MAX_NODES NUMA
 * nodes and providers whose resources are hint descriptions shaped like the CPU manager's
 * (per-node counts, reusable CPUs, align-by-socket) and the device manager's (devices on
 * several nodes, reusable devices), mixed with explicit lists, nil and empty lists. Header
 * only: the fuzz target draws its random numbers from the fuzzer's bytes.
 */
#ifndef NCM_TESTS_TM_LAZY_GEN_H
#define NCM_TESTS_TM_LAZY_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/hintdesc.h>
#include <nodecm/topologymanager.h>

#define LG_MAX_NODES 16 /* array sizes; the differential tests use up to 12 */
#define LG_MAX_PROVIDERS 4
#define LG_MAX_RESOURCES 3

/* splitmix64, or the fuzzer's bytes (zeros once they run out) */
typedef struct lg_rng {
        uint64_t s;
        const uint8_t *data;
        size_t n, pos;
} lg_rng;

static inline uint64_t lg_next(lg_rng *r)
{
        if (r->data) {
                uint64_t v = 0;
                for (int i = 0; i < 4; i++)
                        v = (v << 8) | (r->pos < r->n ? r->data[r->pos++] : 0);
                return v;
        }
        uint64_t z = (r->s += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static inline unsigned lg_below(lg_rng *r, unsigned n)
{
        return n ? (unsigned)(lg_next(r) % n) : 0;
}

static inline bool lg_chance(lg_rng *r, unsigned percent)
{
        return lg_below(r, 100) < percent;
}

typedef struct lg_machine {
        int ids[LG_MAX_NODES];
        size_t n;
        uint64_t dist[LG_MAX_NODES * LG_MAX_NODES];
        ncm_bitmask all;
} lg_machine;

typedef struct lg_scenario {
        lg_machine m;
        const char *policy;
        bool closest;
        ncm_tm_hints prov[LG_MAX_PROVIDERS];
        size_t n_prov;
} lg_scenario;

static inline void lg_machine_random(lg_rng *r, lg_machine *m, size_t min_nodes, size_t max_nodes)
{
        static const uint64_t ties[] = {10, 11, 12, 20, 21, 30, 32};

        memset(m, 0, sizeof(*m));
        m->n = min_nodes + lg_below(r, (unsigned)(max_nodes - min_nodes + 1));
        if (lg_chance(r, 70)) {
                for (size_t i = 0; i < m->n; i++)
                        m->ids[i] = (int)i;
        } else {
                for (size_t i = 0; i < m->n; i++) {
                        int id = (int)lg_below(r, 64);
                        while (m->all & (UINT64_C(1) << id)) /* the next free id */
                                id = (id + 1) % 64;
                        m->all |= UINT64_C(1) << id;
                        m->ids[i] = id;
                }
        }
        m->all = 0;
        for (size_t i = 0; i < m->n; i++)
                m->all |= UINT64_C(1) << m->ids[i];
        for (size_t i = 0; i < m->n; i++)
                for (size_t j = 0; j < m->n; j++) {
                        uint64_t v = lg_chance(r, 90) ? ties[lg_below(r, 7)]
                                                      : lg_next(r) >> lg_below(r, 64);
                        m->dist[i * m->n + j] = i == j && lg_chance(r, 80) ? 10 : v;
                        if (j < i && lg_chance(r, 70))
                                m->dist[i * m->n + j] = m->dist[j * m->n + i];
                }
}

/* A random subset of the machine's nodes in a random order (the walk order). */
static inline size_t lg_walk(lg_rng *r, const lg_machine *m, int *ids)
{
        size_t n = 0;
        bool all = lg_chance(r, 60);
        for (size_t i = 0; i < m->n; i++)
                if (all || lg_chance(r, 60))
                        ids[n++] = m->ids[i];
        if (n == 0)
                ids[n++] = m->ids[lg_below(r, (unsigned)m->n)];
        if (lg_chance(r, 30))
                for (size_t i = n; i > 1; i--) {
                        size_t j = lg_below(r, (unsigned)i);
                        int t = ids[i - 1];
                        ids[i - 1] = ids[j];
                        ids[j] = t;
                }
        return n;
}

static inline ncm_bitmask lg_some_of(lg_rng *r, const int *ids, size_t n, unsigned max_bits)
{
        ncm_bitmask x = 0;
        unsigned k = 1 + lg_below(r, max_bits);
        for (unsigned i = 0; i < k; i++)
                x |= UINT64_C(1) << ids[lg_below(r, (unsigned)n)];
        return x;
}

/*
 * A description shaped like the memory manager's: the nodes without assignments (ascending),
 * their free memory against the request, the preferred size given, and extras: the used
 * nodes and groups that can still serve the request (any masks here, preferred by their size).
 */
static inline ncm_hint_desc *lg_desc_memory(lg_rng *r, const lg_machine *m)
{
        int ids[LG_MAX_NODES];
        size_t n = 0;
        int64_t req = 1 + (int64_t)lg_below(r, 12);
        unsigned nx = lg_below(r, 5);
        ncm_hint_desc *d = NULL;

        for (int id = 0; id < 64; id++)
                if ((m->all & (UINT64_C(1) << id)) && lg_chance(r, 70))
                        ids[n++] = id;
        if (ncm_hint_desc_new(ids, n, req, &d, NULL) < 0)
                return NULL;
        for (size_t i = 0; i < n; i++)
                (void)ncm_hint_desc_add_available(d, UINT64_C(1) << ids[i],
                                                  (int64_t)lg_below(r, 9));
        for (unsigned i = 0; i < nx; i++)
                (void)ncm_hint_desc_add_extra(
                                d, lg_some_of(r, m->ids, m->n, lg_chance(r, 60) ? 1 : 3));
        ncm_hint_desc_set_preferred_size(d, 1 + (int)lg_below(r, 3));
        if (ncm_hint_desc_seal(d, NULL) < 0)
                return ncm_hint_desc_free(d);
        return d;
}

/* A description shaped like the CPU manager's or the device manager's. NULL on failure. */
static inline ncm_hint_desc *lg_desc_random(lg_rng *r, const lg_machine *m)
{
        int ids[LG_MAX_NODES];
        size_t n = lg_walk(r, m, ids);
        bool device = lg_chance(r, 40);
        int64_t total = 0;
        ncm_hint_desc *d = NULL;
        int64_t req;

        if (!device) {
                /* CPUs: per node a capacity and what is free of it */
                int64_t avail[LG_MAX_NODES], cap[LG_MAX_NODES];
                int per = 1 + (int)lg_below(r, 8);
                for (size_t i = 0; i < n; i++) {
                        cap[i] = lg_chance(r, 10) ? (int64_t)lg_below(r, 3) : per;
                        avail[i] = (int64_t)lg_below(r, (unsigned)cap[i] + 1);
                        if (lg_chance(r, 5))
                                avail[i] = cap[i] + 1; /* a state the kubelet would not reach */
                        total += cap[i];
                }
                /* mostly what one or two nodes hold, sometimes anything up to all of them */
                req = lg_chance(r, 5)    ? 0
                      : lg_chance(r, 60) ? 1 + (int64_t)lg_below(r, (unsigned)(2 * per))
                                         : 1 + (int64_t)lg_below(r, (unsigned)(total + 2));
                if (ncm_hint_desc_new(ids, n, req, &d, NULL) < 0)
                        return NULL;
                for (size_t i = 0; i < n; i++) {
                        (void)ncm_hint_desc_add_capacity(d, UINT64_C(1) << ids[i], cap[i]);
                        (void)ncm_hint_desc_add_available(d, UINT64_C(1) << ids[i], avail[i]);
                }
                if (lg_chance(r, 20)) {
                        unsigned k = 1 + lg_below(r, 3);
                        for (unsigned i = 0; i < k; i++) {
                                /* a reusable CPU: mostly on a walked node */
                                int id = lg_chance(r, 90) ? ids[lg_below(r, (unsigned)n)]
                                                          : m->ids[lg_below(r, (unsigned)m->n)];
                                (void)ncm_hint_desc_require(d, UINT64_C(1) << id);
                                ncm_hint_desc_add_base(d, 1);
                        }
                }
                if (lg_chance(r, 20)) {
                        int sockets = 1 + (int)lg_below(r, 3);
                        if (ncm_hint_desc_set_socket_alignment(d, 1 + (int)lg_below(r, 3),
                                                               sockets) == 0)
                                for (size_t i = 0; i < n; i++) {
                                        (void)ncm_hint_desc_add_socket(d, ids[i],
                                                                       (int)(i * sockets / n));
                                        if (lg_chance(r, 10))
                                                (void)ncm_hint_desc_add_socket(
                                                                d, ids[i],
                                                                (int)lg_below(r,
                                                                              (unsigned)sockets));
                                }
                }
        } else {
                /*
                 * devices: some on one node, some on several, some on none of the walked. The
                 * walk is any subset, or a kubelet generation's: 1.36 walks every machine node,
                 * 1.37 (kubernetes PR #138244) the machine nodes the devices report, in the
                 * machine's order.
                 */
                unsigned shape = lg_below(r, 3), ndev = lg_below(r, 9);
                ncm_bitmask masks[16], on = 0;
                bool free_dev[16];
                if (shape > 0) {
                        n = m->n;
                        memcpy(ids, m->ids, n * sizeof(int));
                }
                for (unsigned i = 0; i < ndev; i++) {
                        masks[i] = lg_chance(r, 75) ? lg_some_of(r, ids, n, 1)
                                                    : lg_some_of(r, m->ids, m->n, 3);
                        if (lg_chance(r, 5))
                                masks[i] = 0; /* no topology */
                        free_dev[i] = lg_chance(r, 70);
                        on |= masks[i];
                }
                if (shape == 2) {
                        size_t k = 0;
                        for (size_t i = 0; i < n; i++)
                                if (on & (UINT64_C(1) << ids[i]))
                                        ids[k++] = ids[i];
                        n = k;
                }
                req = lg_chance(r, 5) ? 0 : 1 + (int64_t)lg_below(r, ndev + 1);
                if (ncm_hint_desc_new(ids, n, req, &d, NULL) < 0)
                        return NULL;
                for (unsigned i = 0; i < ndev; i++) {
                        (void)ncm_hint_desc_add_capacity(d, masks[i], 1);
                        if (free_dev[i])
                                (void)ncm_hint_desc_add_available(d, masks[i], 1);
                }
                if (lg_chance(r, 20) && ndev > 0) {
                        unsigned k = 1 + lg_below(r, 2);
                        for (unsigned i = 0; i < k; i++) {
                                (void)ncm_hint_desc_require(d, masks[lg_below(r, ndev)]);
                                ncm_hint_desc_add_base(d, 1);
                        }
                }
        }
        if (lg_chance(r, 2))
                ncm_hint_desc_set_empty(d);
        if (ncm_hint_desc_seal(d, NULL) < 0)
                return ncm_hint_desc_free(d);
        return d;
}

/* An explicit list: random masks inside the machine, sometimes "any", preferred at random. */
static inline size_t lg_hints_random(lg_rng *r, const lg_machine *m, ncm_hint *out, size_t max)
{
        size_t n = 1 + lg_below(r, (unsigned)max);
        for (size_t i = 0; i < n; i++) {
                out[i].any = lg_chance(r, 10);
                out[i].numa = out[i].any ? 0 : lg_some_of(r, m->ids, m->n, (unsigned)m->n);
                if (!out[i].any && lg_chance(r, 3))
                        out[i].numa |= UINT64_C(1) << lg_below(r, 64); /* a foreign bit */
                out[i].preferred = lg_chance(r, 45);
        }
        return n;
}

static inline void lg_scenario_done(lg_scenario *s)
{
        for (size_t i = 0; i < s->n_prov; i++)
                ncm_tm_hints_done(&s->prov[i]);
        s->n_prov = 0;
}

/*
 * A scenario: EXPLICIT_PERCENT of the resources are explicit lists (the rest descriptions,
 * nil or empty lists).
 */
static inline int lg_scenario_random(lg_rng *r, lg_scenario *s, size_t min_nodes, size_t max_nodes,
                                     unsigned explicit_percent)
{
        static const char *const policies[] = {"best-effort", "restricted", "single-numa-node"};
        static const char *const names[] = {"cpu", "example.com/gpu", "example.com/nic", "zz"};

        memset(s, 0, sizeof(*s));
        lg_machine_random(r, &s->m, min_nodes, max_nodes);
        s->policy = policies[lg_below(r, 3)];
        s->closest = lg_chance(r, 40);
        s->n_prov = 1 + lg_below(r, LG_MAX_PROVIDERS);
        for (size_t p = 0; p < s->n_prov; p++) {
                size_t nres;
                if (lg_chance(r, 10))
                        continue; /* no preference at all */
                nres = 1 + lg_below(r, LG_MAX_RESOURCES);
                for (size_t k = 0; k < nres; k++) {
                        const char *name = names[lg_below(r, 4)];
                        unsigned kind = lg_below(r, 100);
                        int rc;
                        if (ncm_tm_hints_get(&s->prov[p], name))
                                continue;
                        if (kind < 6) {
                                rc = ncm_tm_hints_add(&s->prov[p], name, NULL, 0, true, NULL, NULL);
                        } else if (kind < 9) {
                                rc = ncm_tm_hints_add(&s->prov[p], name, NULL, 0, false, NULL,
                                                      NULL);
                        } else if (kind < 9 + explicit_percent) {
                                ncm_hint hints[16];
                                size_t n = lg_hints_random(r, &s->m, hints, 10);
                                rc = ncm_tm_hints_add(&s->prov[p], name, hints, n, false, NULL,
                                                      NULL);
                        } else {
                                ncm_hint_desc *d = lg_chance(r, 20) ? lg_desc_memory(r, &s->m)
                                                                    : lg_desc_random(r, &s->m);
                                if (!d)
                                        return -1;
                                rc = ncm_tm_hints_add_desc(&s->prov[p], name, d, NULL);
                        }
                        if (rc < 0)
                                return -1;
                }
        }
        return 0;
}

/* The number of permutations kubelet's walk would visit (saturating). */
static inline double lg_permutations(const lg_scenario *s)
{
        double product = 1;
        for (size_t p = 0; p < s->n_prov; p++)
                for (size_t k = 0; k < s->prov[p].n; k++) {
                        const ncm_tm_resource_hints *e = &s->prov[p].res[k];
                        uint64_t n = e->list.n;
                        if (e->desc && ncm_hint_desc_count(e->desc, &n, NULL) < 0)
                                return 1e300;
                        product *= (double)(n ? n : 1);
                }
        return product;
}

static inline void lg_scenario_print(const lg_scenario *s, FILE *f)
{
        fprintf(f, "policy %s closest %d nodes", s->policy, s->closest);
        for (size_t i = 0; i < s->m.n; i++)
                fprintf(f, " %d", s->m.ids[i]);
        fprintf(f, "\n");
        for (size_t p = 0; p < s->n_prov; p++) {
                fprintf(f, " provider %zu:%s\n", p, s->prov[p].n ? "" : " none");
                for (size_t k = 0; k < s->prov[p].n; k++) {
                        const ncm_tm_resource_hints *e = &s->prov[p].res[k];
                        ncm_hint_list l = NCM_HINT_LIST_INIT;
                        const ncm_hint_list *show = &e->list;
                        if (e->desc) {
                                if (ncm_hint_desc_materialize(e->desc, 5000, &l, NULL) < 0)
                                        l.n = 0;
                                show = &l;
                        }
                        fprintf(f, "  %s%s%s:", e->resource, e->list.nil ? " nil" : "",
                                e->desc ? " (described)" : "");
                        for (size_t h = 0; h < show->n; h++)
                                fprintf(f, " %s%llx%s", show->hints[h].any ? "any" : "",
                                        (unsigned long long)show->hints[h].numa,
                                        show->hints[h].preferred ? "P" : "");
                        fprintf(f, "\n");
                        ncm_hint_list_done(&l);
                }
        }
}

#endif
