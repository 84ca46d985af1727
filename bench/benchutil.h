/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Timing helpers for the bench programs: run a function repeatedly and report the median of
 * several timed batches, so one slow batch (another process, a page fault) does not move the
 * result.
 */
#ifndef NCM_BENCHUTIL_H
#define NCM_BENCHUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Monotonic nanoseconds. */
uint64_t bench_now_ns(void);

/*
 * Median nanoseconds per call of FN(ARG): calibrates a batch size so that one batch takes
 * about 20 ms (capped by MAX_ITERS per batch), then times 9 batches.
 */
double bench_median_ns(void (*fn)(void *arg), void *arg, uint64_t max_iters);

/* qsort's comparison of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);

/*
 * A program of this build, NAME beside the bench's own directory (BUILD/bench/bench-x ->
 * BUILD/NAME), malloc'd; NULL when it is not there or not executable.
 */
char *bench_build_program(const char *name);

/*
 * Run FN(ARG, OUT) in a child process (so that its peak RSS is its own), OUT's SIZE bytes
 * sent back through a pipe; *MAXRSS_KB gets the child's peak RSS. false when it failed.
 */
bool bench_in_child(void (*fn)(void *arg, void *out), void *arg, void *out, size_t size,
                    long *maxrss_kb);

/* "12.3 µs", "4.56 ms", "789 ns" into BUF. */
const char *bench_fmt_ns(double ns, char buf[32]);

#endif
