/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal to the allocator work stream of lib/cpumanager: the per-topology index behind
 * takeByTopology and the accumulator that walks it.
 *
 * Why an index: kubelet re-derives every relation (which sockets a NUMA node holds, which
 * cores have a free CPU, ...) from a map of CPU infos on every step. Here each CPU and each
 * element (NUMA node, socket, core, uncore cache) gets a dense index once per topology, the
 * relations become CSR lists of "pairs" (a NUMA node and a socket that share at least one CPU),
 * and the accumulator keeps a free count per element and per pair that `take` decrements in
 * O(1) per CPU. A sort step then only orders a few element ids by an integer key.
 */
#ifndef NCM_CPUMANAGER_ALLOC_H
#define NCM_CPUMANAGER_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nodecm/cpumanager.h>

/* Element kinds. Dense element indices are assigned in ascending id order, so "ties broken
 * by ascending id" is "ties broken by ascending dense index". */
enum { K_NUMA, K_SOCK, K_CORE, K_UNC, K_COUNT };

/* Relations between kinds (A -> B): the pairs (a, b) that share a CPU, grouped by a, with b
 * ascending inside a group. */
enum { R_NUMA_SOCK, R_SOCK_NUMA, R_SOCK_CORE, R_NUMA_CORE, R_NUMA_UNC, R_UNC_CORE, R_COUNT };

#define NSLOT (K_COUNT + R_COUNT)

typedef struct ix_csr {
        int32_t *off;  /* n + 1 offsets */
        int32_t *item; /* off[n] entries */
} ix_csr;

typedef struct ix_rel {
        int from, to; /* element kinds */
        int npairs;
        int32_t *off;  /* per `from` element: first pair (nfrom + 1 entries) */
        int32_t *to_e; /* pair -> dense index of the `to` element */
        bool alias;    /* each `to` element is in one pair: pair count = element count */
} ix_rel;

struct ncm_cpu_index {
        const ncm_topo *topo;
        int ncpu;
        int max_cpu;
        int words;            /* 64-bit words of a dense-CPU bitset */
        int32_t *cpu_id;      /* dense -> CPU id (ascending) */
        int32_t *cpu_dense;   /* CPU id -> dense, -1 when absent; max_cpu + 1 entries */
        int n[K_COUNT];       /* element count per kind */
        int64_t *id[K_COUNT]; /* dense element -> id (ascending; any integer) */
        int32_t *of[K_COUNT]; /* dense CPU -> dense element of that kind */
        ix_csr cpus[K_COUNT]; /* element -> its CPUs (dense, ascending) */
        ix_rel r[R_COUNT];
        int32_t *pair[R_COUNT]; /* dense CPU -> pair index in each relation */
        /*
         * The accumulator keeps every free count (per element of each kind, then per pair of
         * each relation) in one array of ncnt counters; slot[c * nslot + j] is the j-th counter
         * CPU c belongs to, so taking a CPU is nslot decrements through one cache line.
         *
         * A relation whose every `to` element belongs to one `from` element only (a core in
         * one socket, the usual case) needs no counters of its own: its pair's free count is
         * its `to` element's (ix_rel.alias). On ordinary machines that leaves 4 counters per
         * CPU instead of 10.
         */
        int nslot;
        int cnt_base[NSLOT]; /* where each kind's / relation's counters start */
        /* the accumulator's block: byte offsets of its parts, computed once */
        size_t acc_bytes, off_result, off_key, off_cnt, off_list[7];
        int32_t *slot;
        int ncnt;
        int max_core_cpus; /* most CPUs in one core (bounds the counting sort) */
        /* longest sorted lists the accumulator can build (ids repeat when an element spans
         * several parents, as kubelet's lists do): NUMA, socket, core, uncore, CPU */
        int lmax[5];
        int maxn; /* most elements of one kind */
        /* kubelet's CPUTopology sizes (averages, integer division) */
        int num_cpus, num_sockets, num_numa;
        int cpus_per_core, cpus_per_socket, cpus_per_uncore;
        bool numa_first;   /* NumSockets >= NumNUMANodes */
        bool numa_ids_fit; /* every NUMA id is 0..63, so hint masks can hold them */
};

/*
 * The allocator rules that differ between kubelet releases (docs/cpu-manager.md, "Kubelet
 * generations"). A zeroed struct is the oldest generation nodecm reproduces (1.32).
 */
typedef struct ncm__gen {
        /* 1.37+ (kubernetes PR #140498): isSocketFree / isCoreFree and takeUncoreCache compare
         * with each element's own size; before, with CPUsPerSocket / CPUsPerCore /
         * CPUsPerUncore (machine averages) */
        bool own_size;
        /* 1.34+ (PR #131850): takePartialUncore needs ceil(n / CPUsPerCore) cores and drops
         * one CPU for an odd request on SMT; before, floor(n / CPUsPerCore) cores */
        bool partial_uncore_ceil;
        /* 1.37+ (PR #139778): takeByTopologyNUMADistributed honours align-by-socket */
        bool distributed_align;
        /* 1.38+ (PR #141026): takeUncoreCache lists each uncore cache once and makes two
         * passes, whole free caches first, then partial ones; before, it tried every free
         * cache whenever the cache in hand was small enough, then that cache partially */
        bool uncore_two_pass;
} ncm__gen;

/* The rules of kubelet release V. */
ncm__gen ncm__gen_of(ncm_kubelet_version v);
/* The default release's rules (ncm__gen_of(NCM_KUBELET_VERSION_DEFAULT)). */
#define NCM__GEN_DEFAULT ((ncm__gen){true, true, true, NCM_KUBELET_DEFAULT_MINOR >= 38})

/* The accumulator (kubelet's cpuAccumulator). */
typedef struct acc {
        const ncm_cpu_index *ix;
        uint64_t *free; /* dense-CPU bitset: kubelet's `details` */
        int nfree;
        int needed;       /* numCPUsNeeded */
        uint64_t *result; /* dense-CPU bitset of the result */
        int nresult;
        bool spread; /* CPUSortingStrategySpread */
        ncm__gen gen;
        int32_t *efree[K_COUNT];
        int32_t *pfree[R_COUNT];
        /* scratch for the sorted lists; sized for the worst case (duplicates included) */
        int32_t *l_numa, *l_sock, *l_core, *l_unc, *l_unc_snap, *l_cpu, *l_tmp;
        int64_t *tmp_key;
        void *block;                /* the one allocation behind all of the above (NULL: inl) */
        const ncm_cpu_trace *trace; /* explanations; NULL (the default): none */
        /* small machines need no allocation: a call then costs a few hundred nanoseconds */
        uint64_t inl[256];
} acc;

/* Build an accumulator over AVAIL (a dense-CPU bitset, copied) needing N CPUs, with the
 * newest kubelet's rules (set a->gen for another). -ENOMEM. */
int ncm__acc_init(acc *a, const ncm_cpu_index *ix, const uint64_t *avail, int n, bool spread);
void ncm__acc_done(acc *a);
/* take({c}) for a dense CPU C. */
void ncm__acc_take_cpu(acc *a, int c);
/* sortAvailableNUMANodes into a->l_numa; returns its length. */
int ncm__acc_list_numas(acc *a);
/*
 * For tests: kubelet's freeNUMANodes / freeSockets / freeCores (WHAT = K_NUMA, K_SOCK,
 * K_CORE) or freeCPUs (any other WHAT), as ids in kubelet's order. IDS needs room for
 * lmax[] of that list. Returns the count.
 */
int ncm__acc_free_list(acc *a, int what, int64_t *ids);
/* kubelet's "not enough cpus available to satisfy request: ..." (NCM_E_UNSATISFIABLE). */
int ncm__not_enough(ncm_error *err, int n, int avail_size);

/* Result of ncm__acc_run_*: 0 done (a->result holds the CPUs), else -errno with err set. */
int ncm__take_packed_dense(const ncm_cpu_index *ix, const uint64_t *avail, int avail_size, int n,
                           bool spread, bool prefer_uncore, uint64_t *ret, ncm_error *err);
int ncm__take_distributed_dense(const ncm_cpu_index *ix, const uint64_t *avail, int avail_size,
                                int n, int group, bool spread, bool align_by_socket, uint64_t *ret,
                                ncm_error *err);

/* The same with a generation's rules and an allocation trace (TRACE may be NULL). */
int ncm__take_packed_dense_traced(const ncm_cpu_index *ix, ncm__gen gen, const uint64_t *avail,
                                  int avail_size, int n, bool spread, bool prefer_uncore,
                                  const ncm_cpu_trace *trace, uint64_t *ret, ncm_error *err);
int ncm__take_distributed_dense_traced(const ncm_cpu_index *ix, ncm__gen gen, const uint64_t *avail,
                                       int avail_size, int n, int group, bool spread,
                                       bool align_by_socket, const ncm_cpu_trace *trace,
                                       uint64_t *ret, ncm_error *err);
/* ncm_cpu_take() reporting to TRACE (may be NULL). */
int ncm__cpu_take_traced(const ncm_cpu_index *ix, const ncm_cpu_options *o,
                         const ncm_cpuset *available, int n, const ncm_cpu_trace *trace,
                         ncm_cpuset *ret, ncm_error *err);
/*
 * The near steps of ncm_cpu_policy_allocate_near() (cpumanager-near.c): take up to WANT CPUs
 * in all (RESULT counts) from SCOPE's CPUs local to NEAR, then from those sharing their uncore
 * caches, by P's takeByTopology, adding them to RESULT. 0 or the allocator's error.
 */
struct ncm_cpu_policy;
int ncm__cpu_take_near(const struct ncm_cpu_policy *p, const ncm_topo *t, const ncm_cpuset *scope,
                       const ncm_cpu_near *near, size_t n_near, int want, ncm_cpuset *result,
                       ncm_error *err);

/* Report the start of a take (dense AVAIL) or a taken element of KIND to A's trace. */
void ncm__trace_start(const ncm_cpu_index *ix, const ncm_cpu_trace *trace, ncm_cpu_trace_level l,
                      int n, const uint64_t *avail);

/* Dense bitset helpers. */
static inline bool bit_get(const uint64_t *b, int i)
{
        return (b[i >> 6] >> (i & 63)) & 1;
}
static inline void bit_set(uint64_t *b, int i)
{
        b[i >> 6] |= UINT64_C(1) << (i & 63);
}
static inline void bit_clr(uint64_t *b, int i)
{
        b[i >> 6] &= ~(UINT64_C(1) << (i & 63));
}

/* ncm_cpuset <-> dense bitset. dense_from_set returns |S| (all of S, known CPUs or not). */
int ncm__dense_from_set(const ncm_cpu_index *ix, const ncm_cpuset *s, uint64_t *ret);
void ncm__set_from_dense(const ncm_cpu_index *ix, const uint64_t *b, ncm_cpuset *ret);

/* Go's math.Round(v*1000)/1000. */
double ncm__round3(double v);

#endif
