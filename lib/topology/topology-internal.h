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
 * Apply nodecm's rules (docs/topology.md) to what a source read: NUMA node per CPU, core
 * grouping, socket and uncore numbering, the distance matrix. Pure: no I/O. sysfs and hwloc
 * both fill a raw machine, so one set of rules serves both. Errors only for tables
 * ncm_topo_new() refuses (e.g. no CPU).
 */
int ncm__topo_assemble(const ncm__raw_machine *m, ncm_topo **ret, ncm_error *err);

#endif
