/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the cmocka unit tests. Every function aborts the test on failure. */
#ifndef NCM_TESTUTIL_H
#define NCM_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <nodecm/pod.h>
#include <nodecm/cpuset.h>

/*
 * ncm_pod_parse() for a pod a kubelet unit test builds in Go code ("fakeContainer",
 * "initContainer-0"): the API server's defaulting applies, its identifier and range checks do
 * not (no API server saw the pod).
 */
int tu_pod_parse_as_in_go(const char *text, size_t len, const char *name, ncm_pod **ret,
                          ncm_error *err);

/* $NCM_TEST_DATA/REL, malloc'd. */
char *tu_data_path(const char *rel);

/* Contents of $NCM_TEST_DATA/REL, malloc'd and NUL-terminated. */
char *tu_read_data(const char *rel, size_t *len);

/*
 * Compare ACTUAL with the golden file $NCM_TEST_DATA/REL. With NCM_UPDATE_GOLDEN=1 in the
 * environment the golden file is rewritten instead.
 */
void tu_assert_golden(const char *rel, const char *actual);

/* A new empty directory under $NCM_TEST_BUILD (or /tmp), malloc'd path. */
char *tu_mkdtemp(void);
/* tu_mkdtemp() on tmpfs (/dev/shm) when there is one: for tests whose many fsyncs are the
 * hook's business, not the disk's. */
char *tu_mkdtemp_shm(void);

/* rm -rf PATH. */
void tu_rm_rf(const char *path);

/* Write TEXT to PATH (created or truncated, mode 0644); fails the test on error. */
void tu_write_file(const char *path, const char *text);
/* Add TEXT to the end of DIR/NAME (created when missing); fails the test on error. */
void tu_append_file(const char *dir, const char *name, const char *text);
/* DIR/NAME's text, malloc'd ("" when there is no such file), and how many lines it holds. */
char *tu_file_text(const char *dir, const char *name);
int tu_file_lines(const char *dir, const char *name);

/*
 * Extract $NCM_TEST_DATA/topologies/NAME.tar.bz2 into a new temporary directory (on tmpfs when
 * /dev/shm is writable) and return the machine root inside it (the directory that holds sys/),
 * malloc'd. *TMP receives the temporary directory to pass to tu_rm_rf() afterwards.
 */
char *tu_extract_topology(const char *name, char **tmp);

/* Parse kubelet cpuset text, failing the test on error. */
ncm_cpuset *tu_cpuset(const char *list);

/* Assert that S formats to the canonical list EXPECT. */
#define tu_assert_cpuset(s, expect) tu_assert_cpuset_at((s), (expect), __FILE__, __LINE__)
void tu_assert_cpuset_at(const ncm_cpuset *s, const char *expect, const char *file, int line);

#endif
