/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal to lib/topology: the pure parsers behind sysfs discovery (each has a fuzz target,
 * tests/fuzz/fuzz-sysfs.c) and helpers shared by the source files.
 */
#ifndef NCM_TOPOLOGY_INTERNAL_H
#define NCM_TOPOLOGY_INTERNAL_H

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

#endif
