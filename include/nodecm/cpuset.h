/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU-set type of the whole project (CPU ids 0..NCM_CPUSET_MAX_CPUS-1), also used for NUMA
 * node sets. Bit operations work a 64-bit word at a time over the words in use; a set is one
 * allocation, and growing it never allocates, so set operations cannot fail.
 *
 * Text forms:
 *  - ncm_cpuset_parse_list() reproduces k8s.io/utils/cpuset.Parse exactly: its accepted inputs
 *    and its error texts (Go strconv errors included);
 *  - ncm_cpuset_format_list() is cpuset.String(): ascending runs, "a-b" for runs of two or more;
 *  - ncm_cpuset_parse_sysfs_list() / _parse_mask() read the kernel's cpulist and cpumask files.
 */
#ifndef NODECM_CPUSET_H
#define NODECM_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCM_CPUSET_MAX_CPUS 8192

typedef struct ncm_cpuset ncm_cpuset;

/* A new empty set, or NULL when out of memory. */
NCM_API ncm_cpuset *ncm_cpuset_new(void);
/* Free S (NULL is fine). Returns NULL. */
NCM_API ncm_cpuset *ncm_cpuset_free(ncm_cpuset *s);
/* A copy of S, or NULL when out of memory. */
NCM_API ncm_cpuset *ncm_cpuset_dup(const ncm_cpuset *s);
NCM_DEFINE_AUTOPTR(ncm_cpuset, ncm_cpuset_free)

/* DST = SRC. */
NCM_API void ncm_cpuset_copy(ncm_cpuset *dst, const ncm_cpuset *src);
/* Remove every element. */
NCM_API void ncm_cpuset_zero(ncm_cpuset *s);

/* Add CPU. -ERANGE unless 0 <= cpu < NCM_CPUSET_MAX_CPUS. */
NCM_API int ncm_cpuset_set(ncm_cpuset *s, int cpu);
/* Add FIRST..LAST inclusive. -ERANGE if out of bounds, -EINVAL if first > last. */
NCM_API int ncm_cpuset_set_range(ncm_cpuset *s, int first, int last);
/* Remove CPU (no-op when absent or out of range). */
NCM_API void ncm_cpuset_clr(ncm_cpuset *s, int cpu);
NCM_API bool ncm_cpuset_isset(const ncm_cpuset *s, int cpu) NCM_PURE;

/* Number of elements. */
NCM_API int ncm_cpuset_weight(const ncm_cpuset *s) NCM_PURE;
NCM_API bool ncm_cpuset_is_empty(const ncm_cpuset *s) NCM_PURE;
/* Smallest element, or -1 when empty. */
NCM_API int ncm_cpuset_first(const ncm_cpuset *s) NCM_PURE;
/* Largest element, or -1 when empty. */
NCM_API int ncm_cpuset_last(const ncm_cpuset *s) NCM_PURE;
/* Smallest element greater than PREV (PREV may be -1), or -1 when there is none. */
NCM_API int ncm_cpuset_next(const ncm_cpuset *s, int prev) NCM_PURE;

/* DST = A | B, A & B, A & ~B. DST may be A or B. */
NCM_API void ncm_cpuset_or(ncm_cpuset *dst, const ncm_cpuset *a, const ncm_cpuset *b);
NCM_API void ncm_cpuset_and(ncm_cpuset *dst, const ncm_cpuset *a, const ncm_cpuset *b);
NCM_API void ncm_cpuset_andnot(ncm_cpuset *dst, const ncm_cpuset *a, const ncm_cpuset *b);

NCM_API bool ncm_cpuset_equal(const ncm_cpuset *a, const ncm_cpuset *b) NCM_PURE;
/* Every element of SUB is in SUPER (the empty set is a subset of everything). */
NCM_API bool ncm_cpuset_is_subset(const ncm_cpuset *sub, const ncm_cpuset *super) NCM_PURE;
NCM_API bool ncm_cpuset_intersects(const ncm_cpuset *a, const ncm_cpuset *b) NCM_PURE;
/* |A & B| without building the intersection. */
NCM_API int ncm_cpuset_weight_and(const ncm_cpuset *a, const ncm_cpuset *b) NCM_PURE;
/* Three-way compare by element lists (the smaller lowest differing element sorts first). */
NCM_API int ncm_cpuset_compare(const ncm_cpuset *a, const ncm_cpuset *b) NCM_PURE;

/*
 * Parse kubelet's cpuset text (k8s.io/utils/cpuset.Parse). On success *RET is a new set. On
 * failure returns -EINVAL (kubelet's error text in err, e.g. `invalid range "5-3" (5 > 3)` or
 * `strconv.Atoi: parsing "x": invalid syntax`) or -ERANGE (a CPU id kubelet accepts but that is
 * above NCM_CPUSET_MAX_CPUS - 1), and *RET is untouched.
 */
NCM_API int ncm_cpuset_parse_list(const char *s, ncm_cpuset **ret, ncm_error *err);

/*
 * Parse a kernel cpulist file ("0-3,8\n", possibly followed by NUL padding). Trailing
 * whitespace is ignored; an empty file is the empty set. -EINVAL / -ERANGE as above.
 */
NCM_API int ncm_cpuset_parse_sysfs_list(const char *s, ncm_cpuset **ret, ncm_error *err);

/* Parse a kernel hex cpumask ("00000000,0000010f\n"; 32-bit groups, most significant first). */
NCM_API int ncm_cpuset_parse_mask(const char *s, ncm_cpuset **ret, ncm_error *err);

/* Append the canonical list form to B ("" for the empty set). */
NCM_API void ncm_cpuset_format_list_buf(const ncm_cpuset *s, ncm_buf *b);
/* The canonical list form, malloc'd; NULL when out of memory. */
NCM_API char *ncm_cpuset_format_list(const ncm_cpuset *s);

/* Iterate over the elements in ascending order. */
#define NCM_CPUSET_FOREACH(cpu, s)                                                                 \
        for (int cpu = ncm_cpuset_first(s); cpu >= 0; cpu = ncm_cpuset_next(s, cpu))

#ifdef __cplusplus
}
#endif
#endif
