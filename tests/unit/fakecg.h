/* SPDX-License-Identifier: Apache-2.0 */
/* A stand-in cgroup kernel for a directory tree (fakecg.c). */
#ifndef NCM_TEST_FAKECG_H
#define NCM_TEST_FAKECG_H

#include <stdbool.h>
#include <nodecm/cgroups.h>

typedef struct fake {
        char *dir; /* the temporary root */
        int rootfd;
        int version;
        bool rsvd;           /* hugetlb has .rsvd files */
        bool partitions;     /* v2: cpuset.cpus.exclusive and .partition (Linux 6.7 and later) */
        const char *fail_on; /* a control file created as a directory below paths with this */
        ncm_cgroup_layout layout;
        ncm_cgroup_exec_options exec;
} fake;

/*
 * A new tree of VERSION (1: one hierarchy per controller, 2: unified) under a temporary
 * directory, root cpuset 0-3 and memory node 0; RSVD: hugetlb has .rsvd files. F->exec holds
 * the hooks that fill in and empty directories.
 */
void fake_init(fake *f, int version, bool rsvd);
void fake_done(fake *f);
/* Write VALUE to DIR/FILE; read PATH (trailing newlines dropped, malloc'd). */
void fake_put(int rootfd, const char *dir, const char *file, const char *value);
char *fake_get(int rootfd, const char *path);
/* What the kernel makes in a new v1 cgroup PATH of hierarchy HIER ("cpu", "cpuset", ...). */
void fake_v1_files(fake *f, const char *path, const char *hier);
/* Every directory and file of the tree with its content, sorted (malloc'd). */
char *fake_snapshot(fake *f);

#define assert_file(f, path, want)                                                                 \
        do {                                                                                       \
                char *got_ = fake_get((f)->rootfd, (path));                                        \
                if (strcmp(got_, (want)) != 0)                                                     \
                        fail_msg("%s: [%s], want [%s]", (path), got_, (want));                     \
                free(got_);                                                                        \
        } while (0)

#endif
