/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Go durations ("100ms", "1m30s", "1.5h"), as KubeletConfiguration writes them
 * (metav1.Duration: time.ParseDuration and Duration.String()).
 */
#ifndef NODECM_DURATION_H
#define NODECM_DURATION_H

#include <stdint.h>
#include <nodecm/common.h>
#include <nodecm/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Buffer size for any formatted duration, NUL included. */
#define NCM_DURATION_STRLEN 40

/*
 * Go's time.ParseDuration: an optional sign, then one or more decimal numbers, each with an
 * optional fraction and a unit (ns, us, µs, μs, ms, s, m, h); "0" alone is 0. Errors are
 * -EINVAL with Go's texts (`time: invalid duration "x"`, `time: missing unit in duration
 * "1"`, `time: unknown unit "d" in duration "1d"`); values beyond int64 nanoseconds are
 * -ERANGE (`time: invalid duration "..."`). *RET_NS is written on success only.
 */
NCM_API int ncm_duration_parse(const char *s, int64_t *ret_ns, ncm_error *err);

/* Go's Duration.String(): "0s", "1.5ms", "100µs", "2s", "1m30s", "2h0m0s". Returns BUF. */
NCM_API char *ncm_duration_format(int64_t ns, char buf[NCM_DURATION_STRLEN]);

#ifdef __cplusplus
}
#endif
#endif
