/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal to lib/topology: the pure parsers behind sysfs discovery (each has a fuzz target,
 * tests/fuzz/fuzz-sysfs.c) and helpers shared by the source files.
 */
#ifndef NCM_TOPOLOGY_INTERNAL_H
#define NCM_TOPOLOGY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/error.h>
#include <nodecm/topology.h>

/*
 * A sysfs integer file ("3\n", "-1\n", maybe NUL padding after the newline). Accepts an
 * optional '-' and decimal digits, then only whitespace/NULs. -EINVAL for garbage, -ERANGE
 * outside int.
 */
int ncm__sysfs_parse_int(const char *s, int *ret);

/*
 * A node distance row ("10 21 21 10\n"): up to MAX values, each 0..255 as the kernel's SLIT
 * entries are. Returns the count. -EINVAL for garbage or an empty row, -E2BIG when there are
 * more than MAX values.
 */
int ncm__sysfs_parse_distances(const char *s, uint32_t *ret, size_t max);

/* A cache "level" or "type" file: 1 when S (whitespace-trimmed) equals WANT, 0 otherwise. */
int ncm__sysfs_equals(const char *s, const char *want);

/* "absent" for the raw attributes below (also used for negative kernel values). */
#define NCM__RAW_NONE INT64_MIN

/* What a source read about one online CPU, before any rule is applied. */
typedef struct ncm__raw_cpu {
        int cpu;
        int64_t package; /* physical_package_id, NCM__RAW_NONE when absent or negative */
        int64_t core_id; /* core_id, same convention */
        int64_t book;    /* s390 book_id / drawer_id, NCM__RAW_NONE elsewhere */
        int64_t drawer;
        int thread_first;  /* lowest online CPU of thread_siblings_list, -1 when absent */
        int package_first; /* lowest online CPU of core_siblings_list, -1 when absent */
        bool has_l3;       /* a cache/indexN with level 3 exists */
        int64_t l3_id;     /* its id file, NCM__RAW_NONE when absent */
        int l3_first;      /* lowest online CPU of its CPU set; -1: unknown (private to the core) */
} ncm__raw_cpu;

/* One NUMA node (a /sys/devices/system/node/nodeN directory, or an hwloc NUMANode). */
typedef struct ncm__raw_node {
        int id;
        ncm_cpuset *cpus; /* cpulist (or cpumap); NULL when neither exists */
        uint32_t *dist;   /* the distance row; NULL when absent */
        size_t ndist;
} ncm__raw_node;

typedef struct ncm__raw_machine {
        ncm__raw_cpu *cpus; /* online CPUs, ascending by cpu */
        size_t ncpus;
        ncm__raw_node *nodes; /* ascending by id; none when the kernel has no node directory */
        size_t nnodes;
} ncm__raw_machine;

/*
 * Apply nodecm's friendlier rules (`--topology-rules nodecm`, docs/topology.md) to what a
 * source read: NUMA node per CPU, core grouping, socket and uncore numbering, the distance
 * matrix. Pure: no I/O. sysfs and hwloc both fill a raw machine, so one set of rules serves
 * both. Errors only for tables ncm_topo_new() refuses (e.g. no CPU).
 */
int ncm__topo_assemble(const ncm__raw_machine *m, ncm_topo **ret, ncm_error *err);
/* The machine gave no distance row for NUMA node ID (ncm_topo_numa_distances_missing()).
 * 0 (also for an id the topology does not have), -ENOMEM. */
int ncm__topo_mark_no_distances(ncm_topo *t, int id);
/* NUMA node ID's distance row as the machine gave it (indexed by node id; copied). -ENOMEM. */
int ncm__topo_set_row(ncm_topo *t, int id, const uint32_t *row, size_t n);
/*
 * The N x N distance matrix OUT from the rows read into D (-1 where unknown): an unknown entry
 * takes the transposed one when known, else 10 on the diagonal and 20 elsewhere (both the
 * kubelet's cadvisor rules and nodecm's fill in so).
 */
void ncm__topo_fill_distances(const int64_t *d, size_t n, uint32_t *out);

/* ------------------------------------------------------------------------------------------
 * cadvisor's rules (the default, spec §2.2a): what cadvisor's GetNodesInfo reads, and how the
 * kubelet's Discover turns it into its table.
 */

/*
 * How cadvisor (Go) reads a sysfs file's text S of LEN bytes (NULs included; no terminator
 * needed). Pure, so unit tests and the fuzz target reach every corner.
 */
/* strconv.Atoi(strings.TrimSpace(s)): 0 and *RET, -EINVAL (not an integer) or -ERANGE. */
int ncm__cad_atoi(const char *s, size_t len, int64_t *ret);
/* IsCPUOnline: whether CPU is online per the online list S (NULL: no such file, every CPU is
 * online). The list is read left to right: CPU is online when an entry names it before any
 * malformed entry; an empty or malformed list makes the remaining CPUs offline. */
bool ncm__cad_online(const char *s, size_t len, int cpu);
/* strings.TrimSpace on [*S, *S + *LEN). */
void ncm__cad_trim(const char **s, size_t *len);
/* fmt.Sscanf(s, "%d") into an int (or, IS_UNSIGNED, a uint64: no sign): *P advanced past the
 * number; false when there is none or it overflows. */
bool ncm__cad_scan_int(const char **p, const char *end, bool is_unsigned, int64_t *ret);
/* getCPUCount: the popcount of a shared_cpu_map (comma-separated hex words); -1 when any word
 * is not a 64-bit hex number. */
int ncm__cad_map_weight(const char *s, size_t len);
/* getDistances: TrimSpace, then fields separated by exactly one space, each a decimal
 * uint64: the count, -EINVAL (malformed), -ERANGE (a distance above UINT32_MAX, which the
 * kubelet would keep but nodecm's table cannot) or -E2BIG (more than MAX). */
int ncm__cad_distances(const char *s, size_t len, uint32_t *ret, size_t max);

/* One cache cadvisor reads for a thread (GetCacheInfo), of level > 2. */
typedef struct ncm__cad_cache {
        int64_t id;
        int64_t level;
        int ncpus; /* the popcount of shared_cpu_map */
} ncm__cad_cache;

/* One CPU directory. */
typedef struct ncm__cad_cpu {
        int cpu;
        bool online;                /* per the machine's online list (none: every CPU) */
        bool has_core, has_package; /* topology/core_id, physical_package_id exist */
        bool has_book, has_drawer;  /* s390: book_id, drawer_id exist */
        int64_t core_id, package;   /* strconv.Atoi of the trimmed files */
        char *book, *drawer;        /* s390: trimmed text, compared as text (cadvisor) */
} ncm__cad_cpu;

/* One NUMA node directory (or hwloc NUMANode). */
typedef struct ncm__cad_node {
        int id;
        int *cpus; /* its CPUs (nodeN/cpuM entries), in cadvisor's glob order */
        size_t ncpus;
        uint32_t *dist; /* the distance row; NULL when absent */
        size_t ndist;
} ncm__cad_node;

/*
 * The caches cadvisor reads for CPU (the first thread of a core): those of level > 2 in the
 * order of their index directories, into *RET / *N (the callee allocates; NULL and 0 for
 * none). Returns 0, 1 when cadvisor's read would fail (a cache file missing or unparsable:
 * cadvisor then gives this core and the rest of its node no caches), or -errno (out of
 * memory) with ERR set.
 */
typedef int (*ncm__cad_cache_fn)(void *data, int cpu, ncm__cad_cache **ret, size_t *n,
                                 ncm_error *err);

typedef struct ncm__cad_machine {
        ncm__cad_cpu *cpus; /* every CPU directory, ascending by cpu */
        size_t ncpus;
        ncm__cad_node *nodes; /* in cadvisor's glob order; none: a kernel without NUMA */
        size_t nnodes;
        bool s390; /* cadvisor (built for s390x) also groups threads by book and drawer */
        ncm__cad_cache_fn caches;
        void *caches_data;
        /* the rows are the kernel's (sysfs): a node without one has no distances for the
         * kubelet (ncm_topo_numa_distances_missing); hwloc's are nodecm's own choice */
        bool kernel_rows;
} ncm__cad_machine;

/*
 * cadvisor's GetNodesInfo (or, without node directories, its getCPUTopology by package id)
 * followed by the kubelet's Discover. Pure but for M->caches. Errors only for out of memory
 * and for an empty table where cadvisor finds no CPU at all ("could not detect number of
 * cpus", when there are node directories: NumCores is 0).
 */
int ncm__cad_assemble(const ncm__cad_machine *m, ncm_topo **ret, ncm_error *err);

/* The hwloc sources with the chosen rules (topology-hwloc.c). */
int ncm__topo_from_synthetic_rules(const char *desc, ncm_topo_rules rules, ncm_topo **ret,
                                   ncm_error *err);
int ncm__topo_from_xml_file_rules(const char *path, ncm_topo_rules rules, ncm_topo **ret,
                                  ncm_error *err);
int ncm__topo_from_xml_buffer_rules(const char *xml, size_t len, ncm_topo_rules rules,
                                    ncm_topo **ret, ncm_error *err);

/*
 * The isolcpus= and nohz_full= parameters of a kernel command line TEXT[0..LEN) (topology-
 * isolation.c), parsed as the kernel parses them; "N" is NR_CPUS - 1. RET[k] receives a new set
 * for each ncm_iso_source k the command line speaks of (isolcpus flags, nohz_full=), NULL for
 * the others. Parameters the kernel would ignore are ignored. 0 or -ENOMEM.
 */
int ncm__iso_parse_cmdline(const char *text, size_t len, int nr_cpus, ncm_cpuset **ret);

/* ------------------------------------------------------------------------------------------
 * Memory per NUMA node (topology-memory.c): cadvisor's parsers, pure, for the fuzz target.
 */

/* getNodeMemInfo: the first `MemTotal:\s*([0-9]+) kB` of S (LEN bytes) times 1024 into *RET.
 * -EINVAL when there is no match, -ERANGE when the digits overflow ParseUint. */
int ncm__mem_meminfo_total(const char *s, size_t len, uint64_t *ret);
/* GetHugePagesInfo's page size (KiB) of a hugepages directory entry ("hugepages-2048kB").
 * -EINVAL / -ERANGE as ParseUint fails. */
int ncm__mem_hugepages_size(const char *name, uint64_t *ret);

/* What a listing of node ID's directory showed: whether it has meminfo and hugepages. */
typedef struct ncm__mem_listed {
        int id;
        bool meminfo, hugepages;
} ncm__mem_listed;

/*
 * ncm_topo_read_memory_sysfs() for a discovery that listed the node directories already: a node
 * LISTED covers is known to exist and only the files its listing showed are opened (the same
 * results: a file that is absent reads as nothing either way); the other nodes are probed as
 * ncm_topo_read_memory_sysfs() probes them. NODESFD: /sys/devices/system/node opened inside
 * ROOTFD (the files are opened from it, base/fs-beneath.h), or -1.
 */
int ncm__topo_read_memory_listed(ncm_topo *t, int rootfd, int nodesfd,
                                 const ncm__mem_listed *listed, size_t n, ncm_error *err);

/* Append V in decimal, right-aligned to WIDTH (0: no padding): printf's "%*lld" without
 * printf, which dominated the output of large tables. */
void ncm__put_int(ncm_buf *b, int64_t v, int width);

/* --- PCI devices (topology-pci.c) --- */

/* Whether two PCI tables hold the same devices (NULL is the empty table). */
bool ncm__pci_equal(const ncm_pci *a, const ncm_pci *b) NCM_PURE;
/*
 * A sysfs hex file ("0x020000\n"): "0x" and 1 to 8 hex digits, then only whitespace/NULs, at
 * most MAX. 0, -EINVAL (garbage) or -ERANGE.
 */
int ncm__pci_parse_hex(const char *s, int64_t max, int64_t *ret);
/*
 * A function's uevent file: its PCI_CLASS (hex, 1 to 6 digits) and PCI_ID ("VVVV:DDDD") into
 * *RET_CLASS, *RET_VENDOR, *RET_DEVICE. 0; -ENOENT when either line is missing (the caller
 * reads the class, vendor and device files then); -EINVAL for a line that does not parse.
 */
int ncm__pci_parse_uevent(const char *s, int64_t *ret_class, int32_t *ret_vendor,
                          int32_t *ret_device);
/*
 * The PCI functions a sysfs device path names ("/sys/devices/pci0000:00/0000:00:03.0/
 * 0000:01:00.0/net/eth0" -> the last address in it, 0000:01:00.0), and the root and bridges
 * above the function when WANT_CHAIN: *ROOT (malloc'd "pci0000:00", NULL when the path has
 * none) and *BRIDGES / *N_BRIDGES. 1 when an address was found (ADDR filled, canonical), 0
 * when none, -ENOMEM. Pure.
 */
int ncm__pci_path_chain(const char *path, char *addr, bool want_chain, char **root, char ***bridges,
                        size_t *n_bridges);

/* Order two directory-name numbers as Go's filepath.Glob orders "cpu10" and "cpu2". */
int ncm__glob_cmp(int a, int b);
/* The same as qsort comparators: of ints, and of ncm__cad_node by id. */
int ncm__glob_cmp_int(const void *a, const void *b);
int ncm__glob_cmp_node(const void *a, const void *b);

#endif
