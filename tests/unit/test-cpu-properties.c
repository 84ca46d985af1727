/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Property tests of the allocator and the hint generator on random machines and free sets
 * (fixed seeds, so every run checks the same cases):
 *
 *  - the result has exactly N CPUs, all from the free set (on every machine with the newest
 *    kubelet's rules; kubelets before 1.37 compare with averages and can reach further on
 *    asymmetric ones, see test-cpu-assignment);
 *  - packed results take whole cores when N is a multiple of the core size and enough whole
 *    cores are free;
 *  - results are deterministic;
 *  - the packed allocator agrees, CPU for CPU, with a deliberately naive transcription of
 *    kubelet's algorithm (spec §3.2-§3.6) that recounts everything from the CPU table at
 *    every step, on symmetric and asymmetric machines alike, for each kubelet generation;
 *  - hints: exactly the masks that fit, by size, preferred exactly at the narrowest size.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpumanager.h>
#include <nodecm/topology.h>
#include "testutil.h"

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return n ? (uint32_t)(rng_state % n) : 0;
}

/* ------------------------------------------------------------------------------------------
 * Random machines
 */

typedef struct machine {
        ncm_cpu_info cpus[1024];
        size_t n;
        ncm_topo *t;
        ncm_cpu_index *ix;
        bool span; /* some uncore cache spans two NUMA nodes */
} machine;

/*
 * SOCKETS x NUMA-per-socket (or sockets sharing a NUMA node) x cores x threads, uncore caches
 * of a few cores, sibling threads numbered either next to each other or a core count apart.
 * ASYM drops random CPUs and gives cores different thread counts.
 */
static void make_machine(machine *m, bool asym)
{
        int sockets = 1 + (int)rnd(4), per = 1 + (int)rnd(3);
        bool shared_numa = sockets > 1 && rnd(4) == 0; /* two sockets per NUMA node */
        int cores = 1 + (int)rnd(6), threads = 1 + (int)rnd(asym ? 4 : 3);
        int ucores = 1 + (int)rnd((uint32_t)cores);
        bool spaced = rnd(2);
        /* uncore caches numbered across a socket's NUMA nodes, so that some span two */
        bool span = per > 1 && rnd(3) == 0;
        int nnuma_total = shared_numa ? (sockets + 1) / 2 : sockets * per;
        int total_cores = shared_numa ? sockets * cores : sockets * per * cores;
        int core_idx = 0;
        ncm_error err = NCM_ERROR_INIT;

        m->n = 0;
        for (int s = 0; s < sockets; s++) {
                int nper = shared_numa ? 1 : per;
                for (int q = 0; q < nper; q++) {
                        int numa = shared_numa ? s / 2 : s * per + q;
                        for (int c = 0; c < cores; c++, core_idx++) {
                                int th = asym ? 1 + (int)rnd((uint32_t)threads) : threads;
                                int uncore = span ? s * 100 + (q * cores + c) / ucores
                                                  : numa * 100 + c / ucores;
                                int first = -1;
                                for (int t = 0; t < th; t++) {
                                        int cpu = spaced ? t * total_cores + core_idx
                                                         : core_idx * threads + t;
                                        if (asym && th > 1 && rnd(8) == 0)
                                                continue; /* offline thread */
                                        if (first < 0)
                                                first = cpu;
                                        m->cpus[m->n++] =
                                                        (ncm_cpu_info){cpu, first, s, numa, uncore};
                                }
                        }
                }
        }
        (void)nnuma_total;
        m->span = span;
        if (ncm_topo_new(m->cpus, m->n, NULL, 0, NULL, &m->t, &err) < 0)
                fail_msg("topology: %s", err.msg);
        if (ncm_cpu_index_new(m->t, &m->ix, &err) < 0)
                fail_msg("index: %s", err.msg);
}

static void free_machine(machine *m)
{
        m->ix = ncm_cpu_index_free(m->ix);
        m->t = ncm_topo_free(m->t);
}

static ncm_cpuset *random_free(const machine *m)
{
        ncm_cpuset *s = ncm_cpuset_new();
        uint32_t keep = 1 + rnd(10); /* in tenths */

        for (size_t i = 0; i < m->n; i++)
                if (rnd(10) < keep)
                        (void)ncm_cpuset_set(s, m->cpus[i].cpu);
        return s;
}

/* ------------------------------------------------------------------------------------------
 * The naive reference: kubelet's algorithm read literally, counting from the table each time
 */

typedef struct ref {
        const machine *m;
        bool free[8192];
        bool res[8192];
        int needed;
        bool spread;
        int cpc, cps, cpu_per_unc;
        bool numa_first;
        bool own_size;     /* kubelet 1.37+: own sizes in the free tests and takeUncoreCache */
        bool partial_ceil; /* kubelet 1.34+: takePartialUncore's ceil + odd rule */
        bool two_pass;     /* kubelet 1.38+: takeUncoreCache's deduplicated two passes */
} ref;

enum { NUMA, SOCK, CORE, UNC };

static int fld(const ncm_cpu_info *c, int k)
{
        return k == NUMA ? c->numa : k == SOCK ? c->socket : k == CORE ? c->core : c->uncore;
}

static int free_in(const ref *r, int k, int id)
{
        int n = 0;
        for (size_t i = 0; i < r->m->n; i++)
                if (r->free[r->m->cpus[i].cpu] && fld(&r->m->cpus[i], k) == id)
                        n++;
        return n;
}

static int total_in(const ref *r, int k, int id)
{
        int n = 0;
        for (size_t i = 0; i < r->m->n; i++)
                if (fld(&r->m->cpus[i], k) == id)
                        n++;
        return n;
}

/* Distinct ids of kind K among free CPUs whose kind PK equals PID (PK < 0: all). */
static int ids_of(const ref *r, int k, int pk, int pid, int *out)
{
        int n = 0;
        for (size_t i = 0; i < r->m->n; i++) {
                const ncm_cpu_info *c = &r->m->cpus[i];
                if (!r->free[c->cpu] || (pk >= 0 && fld(c, pk) != pid))
                        continue;
                int id = fld(c, k), dup = 0;
                for (int j = 0; j < n; j++)
                        dup |= out[j] == id;
                if (!dup)
                        out[n++] = id;
        }
        /* sort by (free count, id) */
        for (int i = 1; i < n; i++)
                for (int j = i; j > 0; j--) {
                        int a = free_in(r, k, out[j - 1]), b = free_in(r, k, out[j]);
                        if (a > b || (a == b && out[j - 1] > out[j])) {
                                int t = out[j];
                                out[j] = out[j - 1];
                                out[j - 1] = t;
                        }
                }
        return n;
}

static int r_numas(const ref *r, int *out);
static int r_socks(const ref *r, int *out)
{
        int tmp[1024], n = 0;
        if (!r->numa_first)
                return ids_of(r, SOCK, -1, 0, out);
        int nn = r_numas(r, tmp);
        for (int i = 0; i < nn; i++)
                n += ids_of(r, SOCK, NUMA, tmp[i], out + n);
        return n;
}

static int r_numas(const ref *r, int *out)
{
        int tmp[1024], n = 0;
        if (r->numa_first)
                return ids_of(r, NUMA, -1, 0, out);
        int ns = r_socks(r, tmp);
        for (int i = 0; i < ns; i++)
                n += ids_of(r, NUMA, SOCK, tmp[i], out + n);
        return n;
}

static int r_cores(const ref *r, int *out)
{
        int tmp[1024], n = 0;
        if (r->numa_first) {
                int ns = r_socks(r, tmp);
                for (int i = 0; i < ns; i++)
                        n += ids_of(r, CORE, SOCK, tmp[i], out + n);
        } else {
                int nn = r_numas(r, tmp);
                for (int i = 0; i < nn; i++)
                        n += ids_of(r, CORE, NUMA, tmp[i], out + n);
        }
        return n;
}

static int r_uncs(const ref *r, int *out)
{
        int tmp[1024], n = 0;
        int nn = r_numas(r, tmp);
        for (int i = 0; i < nn; i++)
                n += ids_of(r, UNC, NUMA, tmp[i], out + n);
        return n;
}

static void r_take_cpu(ref *r, int cpu)
{
        r->res[cpu] = true;
        r->free[cpu] = false;
        r->needed--;
}

static void r_take_elem(ref *r, int k, int id)
{
        int n = 0;
        for (size_t i = 0; i < r->m->n; i++)
                if (fld(&r->m->cpus[i], k) == id) {
                        r->res[r->m->cpus[i].cpu] = true;
                        r->free[r->m->cpus[i].cpu] = false;
                        n++;
                }
        r->needed -= n;
}

static void r_take_full(ref *r, int k, int *list, int n)
{
        int f[1024], nf = 0;
        for (int i = 0; i < n; i++) {
                int fr = free_in(r, k, list[i]);
                bool is_free = k == SOCK && !r->own_size   ? fr == r->cps
                               : k == CORE && !r->own_size ? fr == r->cpc
                                                           : fr == total_in(r, k, list[i]);
                if (is_free)
                        f[nf++] = list[i];
        }
        for (int i = 0; i < nf; i++)
                if (r->needed >= total_in(r, k, f[i]))
                        r_take_elem(r, k, f[i]);
}

static int cmp_int(const void *a, const void *b)
{
        return *(const int *)a - *(const int *)b;
}

static void r_partial_uncore(ref *r, int u)
{
        int cores[1024], nc = 0, cpus[1024], m = 0;
        int need_cores = r->partial_ceil ? (r->needed + r->cpc - 1) / r->cpc : r->needed / r->cpc;
        for (size_t i = 0; i < r->m->n; i++) {
                const ncm_cpu_info *c = &r->m->cpus[i];
                int dup = 0;
                if (!r->free[c->cpu] || c->uncore != u)
                        continue;
                for (int j = 0; j < nc; j++)
                        dup |= cores[j] == c->core;
                if (!dup)
                        cores[nc++] = c->core;
        }
        qsort(cores, (size_t)nc, sizeof(int), cmp_int);
        if (nc > need_cores)
                nc = need_cores;
        for (size_t i = 0; i < r->m->n; i++) {
                const ncm_cpu_info *c = &r->m->cpus[i];
                for (int j = 0; j < nc; j++)
                        if (r->free[c->cpu] && c->core == cores[j])
                                cpus[m++] = c->cpu;
        }
        qsort(cpus, (size_t)m, sizeof(int), cmp_int);
        if (r->partial_ceil && r->needed % 2 != 0 && r->cpc > 1 && m > r->needed)
                m--;
        if (m != r->needed)
                return;
        for (int i = 0; i < m; i++)
                r_take_cpu(r, cpus[i]);
}

/* Returns 0 and fills OUT, or -1 for any failure. */
static int ref_packed(const machine *m, const ncm_cpuset *avail, int n, bool spread, bool uncore,
                      ncm_kubelet_version v, ncm_cpuset *out)
{
        static ref r;
        int list[4096], nl, nfree = 0;

        memset(&r, 0, sizeof(r));
        r.m = m;
        r.own_size = ncm_kubelet_version_at_least(v, 1, 37);
        r.partial_ceil = ncm_kubelet_version_at_least(v, 1, 34);
        r.two_pass = ncm_kubelet_version_at_least(v, 1, 38);
        r.needed = n;
        r.spread = spread;
        r.cpc = ncm_topo_cpus_per_core(m->t);
        r.cps = ncm_topo_cpus_per_socket(m->t);
        r.cpu_per_unc = ncm_topo_cpus_per_uncore(m->t);
        r.numa_first = ncm_topo_num_sockets(m->t) >= ncm_topo_num_numa_nodes(m->t);
        for (size_t i = 0; i < m->n; i++)
                if (ncm_cpuset_isset(avail, m->cpus[i].cpu)) {
                        r.free[m->cpus[i].cpu] = true;
                        nfree++;
                }
        ncm_cpuset_zero(out);
        if (r.needed < 1)
                return 0;
        if (r.needed > nfree)
                return -1;
        for (int level = 0; level < 2; level++) {
                bool numa = (level == 0) == r.numa_first;
                nl = numa ? r_numas(&r, list) : r_socks(&r, list);
                r_take_full(&r, numa ? NUMA : SOCK, list, nl);
                if (r.needed < 1)
                        goto done;
        }
        if (uncore && r.two_pass) {
                /* sortAvailableUncoreCaches without repeats, then the two passes */
                int snap[4096], ns = r_uncs(&r, snap), nu = 0;
                for (int i = 0; i < ns; i++) {
                        int j = 0;
                        while (j < nu && snap[j] != snap[i])
                                j++;
                        if (j == nu)
                                snap[nu++] = snap[i];
                }
                for (int i = 0; i < nu; i++)
                        if (free_in(&r, UNC, snap[i]) == total_in(&r, UNC, snap[i]) &&
                            r.needed >= total_in(&r, UNC, snap[i]))
                                r_take_elem(&r, UNC, snap[i]);
                if (r.needed < 1)
                        goto done;
                for (int i = 0; i < nu; i++) {
                        r_partial_uncore(&r, snap[i]);
                        if (r.needed < 1)
                                goto done;
                }
        } else if (uncore) {
                int snap[4096], ns = r_uncs(&r, snap);
                for (int i = 0; i < ns; i++) {
                        if (r.needed >= (r.own_size ? total_in(&r, UNC, snap[i]) : r.cpu_per_unc)) {
                                nl = r_uncs(&r, list);
                                r_take_full(&r, UNC, list, nl);
                        }
                        if (r.needed < 1)
                                goto done;
                        r_partial_uncore(&r, snap[i]);
                        if (r.needed < 1)
                                goto done;
                }
        }
        if (!spread) {
                nl = r_cores(&r, list);
                r_take_full(&r, CORE, list, nl);
                if (r.needed < 1)
                        goto done;
        }
        {
                int cpus[8192], nc = 0, groups[4096];
                int ng = spread ? r_socks(&r, groups) : r_cores(&r, groups);
                for (int g = 0; g < ng; g++) {
                        int start = nc;
                        for (size_t i = 0; i < m->n; i++)
                                if (r.free[m->cpus[i].cpu] &&
                                    fld(&m->cpus[i], spread ? SOCK : CORE) == groups[g])
                                        cpus[nc++] = m->cpus[i].cpu;
                        qsort(cpus + start, (size_t)(nc - start), sizeof(int), cmp_int);
                }
                for (int i = 0; i < nc; i++) {
                        r_take_cpu(&r, cpus[i]);
                        if (r.needed < 1)
                                goto done;
                }
        }
        return -1;
done:
        for (int c = 0; c < 8192; c++)
                if (r.res[c])
                        (void)ncm_cpuset_set(out, c);
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * Properties
 */

static void check_whole_cores(const machine *m, const ncm_cpuset *avail, const ncm_cpuset *got,
                              int n)
{
        int cpc = ncm_topo_cpus_per_core(m->t), whole = 0;
        ncm_autoptr(ncm_cpuset) seen = ncm_cpuset_new();

        if (n % cpc != 0)
                return;
        for (size_t i = 0; i < m->n; i++) {
                size_t k;
                const int *sib = ncm_topo_core_cpus(m->t, m->cpus[i].core, &k);
                bool all = true;
                if (ncm_cpuset_isset(seen, m->cpus[i].core))
                        continue;
                (void)ncm_cpuset_set(seen, m->cpus[i].core);
                for (size_t j = 0; j < k; j++)
                        all &= ncm_cpuset_isset(avail, sib[j]);
                whole += all;
        }
        if (whole * cpc < n)
                return;
        NCM_CPUSET_FOREACH(cpu, got)
        {
                size_t k;
                const int *sib = ncm_topo_core_cpus(m->t, ncm_topo_cpu(m->t, cpu)->core, &k);
                for (size_t j = 0; j < k; j++)
                        if (!ncm_cpuset_isset(got, sib[j]))
                                fail_msg("packed n=%d split the core of CPU %d", n, cpu);
        }
}

static void test_cpu_properties_allocator(void **state)
{
        int checked = 0, aliased = 0, short_uncore = 0;

        rng_state = 0x9e3779b97f4a7c15ULL;
        for (int iter = 0; iter < 300; iter++) {
                machine m;
                make_machine(&m, false);
                for (int f = 0; f < 6; f++) {
                        ncm_cpuset *avail = random_free(&m);
                        int nfree = ncm_cpuset_weight(avail);
                        int n = (int)rnd((uint32_t)nfree + 3);
                        for (int mode = 0; mode < 5; mode++) {
                                ncm_cpuset *a = ncm_cpuset_new(), *b = ncm_cpuset_new();
                                int g = mode == 4 ? ncm_topo_cpus_per_core(m.t) : 1;
                                int r1, r2;
#define RUN2(out, e)                                                                               \
        (mode < 3 ? ncm_cpu_take_packed(m.ix, avail, n, mode == 1, mode == 2, out, e)              \
                  : ncm_cpu_take_distributed(m.ix, avail, n, g, false, false, out, e))
#define RUN(out) RUN2(out, NULL)
                                r1 = RUN(a);
                                r2 = RUN(b);
                                assert_int_equal(r1, r2);
                                if (n > nfree) {
                                        assert_int_equal(r1, -NCM_E_UNSATISFIABLE);
                                } else {
                                        if (r1 < 0 && mode >= 3) {
                                                /*
                                                 * kubelet's distributed allocator can read back
                                                 * a different best combination (Go slice
                                                 * aliasing, see cpumanager-distribute.c) and
                                                 * then end in its accounting error, or spin
                                                 * where nodecm reports that error.
                                                 */
                                                ncm_error e = NCM_ERROR_INIT;
                                                RUN2(a, &e);
                                                assert_true(strncmp(e.msg, "accounting error",
                                                                    16) == 0);
                                                aliased++;
                                                ncm_cpuset_free(a);
                                                ncm_cpuset_free(b);
                                                continue;
                                        }
                                        if (r1 < 0)
                                                fail_msg("iter %d mode %d n=%d/%d failed", iter,
                                                         mode, n, nfree);
                                        if (mode == 2 && m.span && ncm_cpuset_weight(a) < n) {
                                                /*
                                                 * kubelet 1.32-1.37 lists an uncore cache that
                                                 * spans NUMA nodes once per node, takes a free
                                                 * one whole twice and counts its CPUs twice:
                                                 * it hands out fewer CPUs than asked for
                                                 * (docs/cpu-manager.md). 1.38 lists it once.
                                                 */
                                                ncm_cpu_options o = {.prefer_align_by_uncore_cache =
                                                                                     true,
                                                                     .kubelet_version = {1, 38}};
                                                assert_int_equal(ncm_cpu_take(m.ix, &o, avail, n, b,
                                                                              NULL),
                                                                 0);
                                                assert_int_equal(ncm_cpuset_weight(b), n);
                                                short_uncore++;
                                                ncm_cpuset_free(a);
                                                ncm_cpuset_free(b);
                                                continue;
                                        }
                                        assert_int_equal(ncm_cpuset_weight(a), n);
                                        assert_true(ncm_cpuset_is_subset(a, avail));
                                        assert_true(ncm_cpuset_equal(a, b));
                                        if (mode == 0)
                                                check_whole_cores(&m, avail, a, n);
                                }
                                checked++;
                                ncm_cpuset_free(a);
                                ncm_cpuset_free(b);
                        }
                        ncm_cpuset_free(avail);
                }
                free_machine(&m);
        }
#undef RUN
#undef RUN2
        /* the machines must show the short uncore allocation, or its check proves nothing */
        assert_true(short_uncore > 0);
        print_message("%d allocations checked, %d distributed ones ended in kubelet's accounting "
                      "error, %d uncore ones were short by kubelet 1.37's double count\n",
                      checked, aliased, short_uncore);
}

/*
 * Per kubelet generation: the default (1.37: own sizes, ceil + odd partial uncore), 1.38
 * (takeUncoreCache's two passes), 1.36 (averages, ceil + odd) and 1.33 (averages, floor). Half
 * of the machines are asymmetric, where the generations differ; uncore caches are of uneven
 * sizes and some span NUMA nodes, where 1.38 differs.
 */
static void test_cpu_properties_matches_naive_reference(void **state)
{
        static const ncm_kubelet_version gens[] = {{0, 0}, {1, 38}, {1, 36}, {1, 33}};
        int checked = 0, differ = 0, differ_138 = 0;

        rng_state = 0x2545f4914f6cdd1dULL;
        for (int iter = 0; iter < 400; iter++) {
                machine m;
                make_machine(&m, iter % 2 == 1);
                for (int f = 0; f < 4; f++) {
                        ncm_cpuset *avail = random_free(&m);
                        int n = (int)rnd((uint32_t)ncm_cpuset_weight(avail) + 2);
                        for (int mode = 0; mode < 3; mode++) {
                                ncm_cpuset *first = ncm_cpuset_new();
                                for (size_t gi = 0; gi < NCM_ELEMENTSOF(gens); gi++) {
                                        ncm_cpu_options o = {.kubelet_version = gens[gi]};
                                        ncm_cpuset *got = ncm_cpuset_new(),
                                                   *want = ncm_cpuset_new();
                                        int r, rr;
                                        o.distribute_cpus_across_cores = mode == 1;
                                        o.prefer_align_by_uncore_cache = mode == 2;
                                        r = ncm_cpu_take(m.ix, &o, avail, n, got, NULL);
                                        rr = ref_packed(&m, avail, n, mode == 1, mode == 2,
                                                        gens[gi], want);
                                        if ((r < 0) != (rr < 0) ||
                                            (r == 0 && !ncm_cpuset_equal(got, want))) {
                                                char *a = ncm_cpuset_format_list(avail);
                                                char *g = ncm_cpuset_format_list(got);
                                                char *w = ncm_cpuset_format_list(want);
                                                fail_msg("iter %d mode %d kubelet %d.%d n=%d "
                                                         "avail=%s: got %s (%d), reference %s "
                                                         "(%d)",
                                                         iter, mode, gens[gi].major, gens[gi].minor,
                                                         n, a, g, r, w, rr);
                                        }
                                        /* the newest kubelet never leaves the free set */
                                        if (gi == 0 && r == 0 && !ncm_cpuset_is_subset(got, avail))
                                                fail_msg("iter %d mode %d: newest kubelet took "
                                                         "CPUs outside the free set",
                                                         iter, mode);
                                        if (gi == 0)
                                                ncm_cpuset_copy(first, got);
                                        else if (r == 0 && !ncm_cpuset_equal(first, got)) {
                                                differ++;
                                                differ_138 += gi == 1;
                                        }
                                        checked++;
                                        ncm_cpuset_free(got);
                                        ncm_cpuset_free(want);
                                }
                                ncm_cpuset_free(first);
                        }
                        ncm_cpuset_free(avail);
                }
                free_machine(&m);
        }
        /* the generations must be told apart on these machines, or the test proves nothing */
        assert_true(differ > 0);
        assert_true(differ_138 > 0);
        print_message("%d allocations compared with the reference (%d differ from the default "
                      "kubelet's in another generation, %d of them in 1.38)\n",
                      checked, differ, differ_138);
}

static void test_cpu_properties_hints(void **state)
{
        rng_state = 0x1234567887654321ULL;
        for (int iter = 0; iter < 200; iter++) {
                machine m;
                size_t nn = 0;
                make_machine(&m, iter % 3 == 0);
                const int *ids = ncm_topo_numa_ids(m.t, &nn);
                ncm_cpuset *avail = random_free(&m);
                int req = (int)rnd((uint32_t)m.n + 2);
                ncm_hint_list l = NCM_HINT_LIST_INIT;
                size_t expect = 0, idx = 0;
                int min_aff = (int)nn, prev = 0;

                assert_int_equal(ncm_cpu_hints_generate(m.ix, NULL, avail, NULL, req, &l, NULL), 0);
                for (uint64_t mask = 1; mask < (UINT64_C(1) << nn); mask++) {
                        int cap = 0, av = 0;
                        for (size_t i = 0; i < nn; i++) {
                                if (!((mask >> i) & 1))
                                        continue;
                                const ncm_cpuset *cs = ncm_topo_numa_cpus(m.t, ids[i]);
                                cap += ncm_cpuset_weight(cs);
                                av += ncm_cpuset_weight_and(cs, avail);
                        }
                        if (cap >= req && ncm_bitmask_count(mask) < min_aff)
                                min_aff = ncm_bitmask_count(mask);
                        expect += av >= req;
                }
                assert_int_equal(l.n, expect);
                for (idx = 0; idx < l.n; idx++) {
                        int c = ncm_bitmask_count(l.hints[idx].numa);
                        assert_true(c >= prev);
                        prev = c;
                        assert_int_equal(l.hints[idx].preferred, c == min_aff);
                }
                ncm_hint_list_done(&l);
                ncm_cpuset_free(avail);
                free_machine(&m);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cpu_properties_allocator),
                        cmocka_unit_test(test_cpu_properties_matches_naive_reference),
                        cmocka_unit_test(test_cpu_properties_hints),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
