/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubelet generations: which kubelet release nodecm reproduces.
 *
 * Kubelet releases differ in some decisions (the CPU allocator, the device manager's hints;
 * docs/cpu-manager.md, "Kubelet generations", lists each difference with the pull request and
 * the release that made it). A version selects which release to reproduce. The default,
 * {0, 0}, is the newest *released* kubelet (NCM_KUBELET_DEFAULT_MINOR); nodecm also knows the
 * development branch (NCM_KUBELET_NEWEST_MINOR, selected explicitly), and reproduces releases
 * from NCM_KUBELET_OLDEST_MINOR on. A release newer than the newest known decides as that one.
 */
#ifndef NODECM_KUBELET_VERSION_H
#define NODECM_KUBELET_VERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <nodecm/common.h>
#include <nodecm/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncm_kubelet_version {
        int major;
        int minor;
} ncm_kubelet_version;

/* The default: the newest released kubelet. */
#define NCM_KUBELET_VERSION_DEFAULT ((ncm_kubelet_version){0, 0})

/*
 * The release reproduced by default: the newest released kubelet. When the development
 * branch ships, moving the default is this one line.
 */
#define NCM_KUBELET_DEFAULT_MINOR 37
/* The newest release nodecm knows (the development branch while it is above the default). */
#define NCM_KUBELET_NEWEST_MINOR 38
/* The oldest release nodecm reproduces (the first with every static policy option). */
#define NCM_KUBELET_OLDEST_MINOR 32

/* The same numbers as text, for help and messages ("37"). */
#define NCM_KUBELET_MINOR_STR_(x) #x
#define NCM_KUBELET_MINOR_STR(x) NCM_KUBELET_MINOR_STR_(x)

/*
 * Parse a kubelet version as users write or copy it: "1.35", "v1.35", "1.35.2",
 * "v1.37.0-rc.1" (the patch level and any suffix are ignored: decisions change only with
 * minor releases). -EINVAL: `kubelet version "x": expected MAJOR.MINOR, e.g. "1.35"`, or
 * ncm_kubelet_version_check()'s error.
 */
NCM_API int ncm_kubelet_version_parse(const char *s, ncm_kubelet_version *ret, ncm_error *err);

/*
 * Whether nodecm reproduces release V: 0 for the default and for 1.OLDEST and later; -EINVAL
 * with `kubelet version 1.31: nodecm reproduces kubelet 1.32 and newer` otherwise. Every
 * library entry point that takes a version checks it.
 */
NCM_API int ncm_kubelet_version_check(ncm_kubelet_version v, ncm_error *err);

/* "1.35"; the default is written as its release ("1.37"). Returns BUF. */
NCM_API const char *ncm_kubelet_version_format(ncm_kubelet_version v, char *buf, size_t size);

/* Whether V (the default: its release) is MAJOR.MINOR or later. */
NCM_API bool ncm_kubelet_version_at_least(ncm_kubelet_version v, int major, int minor) NCM_PURE;

#ifdef __cplusplus
}
#endif
#endif
