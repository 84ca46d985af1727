/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared macros of the nodecm public API: symbol export and the cleanup helpers.
 *
 * Cleanup variables free themselves when they go out of scope; ownership leaves them only
 * through NCM_TAKE_PTR() / NCM_TAKE_FD(). Declare them in acquisition order: they are released
 * last-in, first-out.
 */
#ifndef NODECM_COMMON_H
#define NODECM_COMMON_H

#include <stdlib.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything else is built with -fvisibility=hidden. */
#define NCM_API __attribute__((visibility("default")))

#define NCM_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define NCM_PURE __attribute__((pure))
#define NCM_WARN_UNUSED __attribute__((warn_unused_result))

#define NCM_ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static inline void ncm_freep(void *p)
{
        free(*(void **)p);
}

static inline void ncm_closep(int *fd)
{
        if (*fd >= 0)
                (void)close(*fd);
}

#define ncm_autofree __attribute__((cleanup(ncm_freep)))
#define ncm_autoclose __attribute__((cleanup(ncm_closep)))

/* NCM_DEFINE_AUTOPTR(ncm_cpuset, ncm_cpuset_free) lets callers write ncm_autoptr(ncm_cpuset) s. */
#define NCM_DEFINE_AUTOPTR(T, fn)                                                                  \
        static inline void T##_freep(T **p)                                                        \
        {                                                                                          \
                if (*p)                                                                            \
                        (void)fn(*p);                                                              \
        }
#define ncm_autoptr(T) __attribute__((cleanup(T##_freep))) T *

static inline void *ncm_take_ptr_(void *pp)
{
        void **p = (void **)pp;
        void *v = *p;
        *p = NULL;
        return v;
}
/* Hand over a cleanup pointer: returns its value and leaves NULL behind. */
#define NCM_TAKE_PTR(p) ((__typeof__(p))ncm_take_ptr_(&(p)))

static inline int ncm_take_fd_(int *fd)
{
        int v = *fd;
        *fd = -1;
        return v;
}
#define NCM_TAKE_FD(fd) ncm_take_fd_(&(fd))

/* Wrap a libc call that returns -1 + errno: gives 0/positive or -errno (STYLE rule 4). */
#include <errno.h>
static inline int ncm_negerrno(int r)
{
        return r < 0 ? -errno : r;
}

#ifdef __cplusplus
}
#endif
#endif
