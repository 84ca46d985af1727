/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: arrays of structs kept sorted bytewise by a string member (pod uids, container
 * names, resource names, device ids), searched and grown in place. Bytewise order is Go's
 * sort order for strings, which is the order kubelet files and outputs use.
 */
#ifndef NCM_BASE_SORTED_H
#define NCM_BASE_SORTED_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Binary search of KEY in V, N elements of SIZE bytes, each holding a `char *` at OFFSET.
 * Returns the index, or -(insertion point) - 1 when KEY is absent.
 */
ssize_t ncm__sorted_find(const void *v, size_t n, size_t size, size_t offset, const char *key);

/*
 * Grow the array V of N elements of SIZE bytes by one, opening a zeroed slot at index AT (the
 * insertion point ncm__sorted_find() reported). Returns the new array, or NULL (V untouched)
 * when out of memory.
 */
void *ncm__sorted_insert(void *v, size_t n, size_t size, size_t at);

#endif
