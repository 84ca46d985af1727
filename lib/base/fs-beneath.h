/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: reading many files under one directory of a root (sysfs discovery opens hundreds
 * of files under /sys/devices/system/cpu, a node's directory, /sys/devices).
 *
 * ncm_fs_openat() resolves each path from the root (openat2 RESOLVE_IN_ROOT), so every open
 * walks "sys", "devices", "system", ... again and then checks that the result is still under
 * the root. Here the caller holds DIRFD, a directory it opened inside the same root by a path
 * of which PATH is an extension, and REL is PATH past that directory: REL is walked from
 * DIRFD without following any symlink (RESOLVE_NO_SYMLINKS). Without symlinks and without
 * ".." (refused here) that walk cannot leave DIRFD, and it reaches the file the root-relative
 * walk reaches. Where REL does cross a symlink (ELOOP), has "..", or DIRFD is -1, PATH is
 * opened from the root as ncm_fs_openat() opens it: the same file, the same errors, only the
 * walk is shorter in the common case.
 */
#ifndef NCM_BASE_FS_BENEATH_H
#define NCM_BASE_FS_BENEATH_H

#include <stddef.h>
#include <sys/types.h>
#include <nodecm/error.h>

/*
 * ncm_fs_openat(ROOTFD, PATH, FLAGS) by the shorter walk described above: REL (the part of
 * PATH below DIRFD's directory, no leading slash) from DIRFD. Errors name PATH, as
 * ncm_fs_openat()'s do. Returns the new fd (O_CLOEXEC) or -errno.
 */
int ncm__fs_openat_beneath(int rootfd, int dirfd, const char *path, const char *rel, int flags,
                           ncm_error *err);

/*
 * ncm_fs_read(ROOTFD, PATH, ...) by the shorter walk: the same single read(2), the same
 * returns and messages.
 */
ssize_t ncm__fs_read_beneath(int rootfd, int dirfd, const char *path, const char *rel, char *buf,
                             size_t size, ncm_error *err);

/*
 * REL of PATH below the directory DIR (absolute, no trailing slash): PATH + strlen(DIR) + 1
 * when PATH starts with DIR and a slash, else NULL (then PATH is opened from the root).
 */
const char *ncm__fs_below(const char *path, const char *dir, size_t dir_len);

#endif
