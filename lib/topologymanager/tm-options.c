/* SPDX-License-Identifier: Apache-2.0 */
/* Topology manager policy options: availability by maturity and feature gate, parsing. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include "tm-internal.h"

enum { LEVEL_UNKNOWN = 0, LEVEL_ALPHA = 1, LEVEL_BETA = 2, LEVEL_STABLE = 3 };

/* The newest kubelet: both options are GA (prefer-closest 1.32, max-allowable 1.35). */
static const ncm__tm_option_level builtin_levels[] = {
                {NCM_TM_OPT_PREFER_CLOSEST_NUMA, LEVEL_STABLE},
                {NCM_TM_OPT_MAX_ALLOWABLE_NUMA, LEVEL_STABLE},
};

static int level_of(const char *name, const ncm__tm_option_level *extra, size_t n_extra)
{
        for (size_t i = 0; i < n_extra; i++)
                if (strcmp(extra[i].name, name) == 0)
                        return extra[i].maturity;
        for (size_t i = 0; i < NCM_ELEMENTSOF(builtin_levels); i++)
                if (strcmp(builtin_levels[i].name, name) == 0)
                        return builtin_levels[i].maturity;
        return LEVEL_UNKNOWN;
}

/* Fill ERR with FMT where "%Q" is replaced by NAME as Go's %q renders it. */
static int quoted_error(ncm_error *err, const char *before, const char *name, const char *after)
{
        ncm_buf b = NCM_BUF_INIT;
        int r;

        ncm_buf_puts(&b, before);
        ncm_buf_go_quote(&b, name, strlen(name));
        ncm_buf_puts(&b, after);
        if (ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        r = ncm_error_set(err, EINVAL, "%s", b.data);
        ncm_buf_done(&b);
        return r;
}

int ncm__tm_option_check_available_in(const char *name, const ncm__tm_option_level *extra,
                                      size_t n_extra, ncm_tm_gates gates, ncm_error *err)
{
        switch (level_of(name, extra, n_extra)) {
        case LEVEL_ALPHA:
                if (!gates.alpha_options)
                        return quoted_error(err,
                                            "topology manager policy alpha-level options not "
                                            "enabled, but option ",
                                            name, " provided");
                return 0;
        case LEVEL_BETA:
                if (!gates.beta_options)
                        return quoted_error(err,
                                            "topology manager policy beta-level options not "
                                            "enabled, but option ",
                                            name, " provided");
                return 0;
        case LEVEL_STABLE:
                return 0;
        default:
                return quoted_error(err, "unknown Topology Manager Policy option: ", name, "");
        }
}

int ncm_tm_option_check_available(const char *name, ncm_tm_gates gates, ncm_error *err)
{
        return ncm__tm_option_check_available_in(name, NULL, 0, gates, err);
}

/* Go's strconv.ParseBool. */
static int go_parse_bool(const char *s, bool *ret)
{
        static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
        static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
        for (size_t i = 0; i < NCM_ELEMENTSOF(t); i++) {
                if (strcmp(s, t[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcmp(s, f[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

/*
 * Go's strconv.Atoi on a 64-bit platform: optional sign, decimal digits. -EINVAL for bad
 * syntax, -ERANGE when the value does not fit in int64 (ParseInt reports the first problem it
 * meets while scanning, so overflow wins over later garbage in long inputs).
 */
static int go_atoi(const char *s, int64_t *ret)
{
        size_t len = strlen(s), i = 0;
        bool neg = false;
        uint64_t n = 0;

        if (len > 0 && len < 19) {
                int64_t v = 0;
                if (s[0] == '-' || s[0] == '+') {
                        neg = s[0] == '-';
                        if (len < 2)
                                return -EINVAL;
                        i = 1;
                }
                for (; i < len; i++) {
                        unsigned d = (unsigned char)s[i] - (unsigned)'0';
                        if (d > 9)
                                return -EINVAL;
                        v = v * 10 + (int64_t)d;
                }
                *ret = neg ? -v : v;
                return 0;
        }
        if (len == 0)
                return -EINVAL;
        if (s[0] == '-' || s[0] == '+') {
                neg = s[0] == '-';
                i = 1;
        }
        if (i == len)
                return -EINVAL;
        for (; i < len; i++) {
                unsigned d = (unsigned char)s[i] - (unsigned)'0';
                uint64_t n1;
                if (d > 9)
                        return -EINVAL;
                if (n >= UINT64_MAX / 10 + 1)
                        return -ERANGE;
                n *= 10;
                n1 = n + d;
                if (n1 < n)
                        return -ERANGE;
                n = n1;
        }
        if ((!neg && n >= (UINT64_C(1) << 63)) || (neg && n > (UINT64_C(1) << 63)))
                return -ERANGE;
        *ret = neg ? (int64_t)(0 - n) : (int64_t)n;
        return 0;
}

static int cmp_option(const void *a, const void *b)
{
        const ncm_tm_option *x = a, *y = b;
        return strcmp(x->key, y->key);
}

static int parse_one(const ncm_tm_option *o, ncm_tm_options *opts, ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT;
        int r = 0;

        if (strcmp(o->key, NCM_TM_OPT_PREFER_CLOSEST_NUMA) == 0) {
                bool v;
                if (go_parse_bool(o->value, &v) == 0) {
                        opts->prefer_closest_numa = v;
                        return 0;
                }
                ncm_buf_puts(&b, "bad value for option ");
                ncm_buf_go_quote(&b, o->key, strlen(o->key));
                ncm_buf_puts(&b, ": strconv.ParseBool: parsing ");
                ncm_buf_go_quote(&b, o->value, strlen(o->value));
                ncm_buf_puts(&b, ": invalid syntax");
        } else if (strcmp(o->key, NCM_TM_OPT_MAX_ALLOWABLE_NUMA) == 0) {
                int64_t v = 0;
                r = go_atoi(o->value, &v);
                if (r == 0 && v >= NCM_TM_DEFAULT_MAX_NUMA_NODES) {
                        /* kubelet only logs a warning above 8; the int cannot exceed INT_MAX
                         * meaningfully here (at most 64 NUMA nodes fit a mask). */
                        opts->max_allowable_numa_nodes = v > INT32_MAX ? INT32_MAX : (int)v;
                        return 0;
                }
                if (r == 0) {
                        ncm_buf_puts(&b, "the minimum value of ");
                        ncm_buf_go_quote(&b, o->key, strlen(o->key));
                        ncm_buf_printf(&b, " should not be less than %d",
                                       NCM_TM_DEFAULT_MAX_NUMA_NODES);
                } else {
                        ncm_buf_puts(&b, "unable to convert policy option to integer ");
                        ncm_buf_go_quote(&b, o->key, strlen(o->key));
                        ncm_buf_puts(&b, ": strconv.Atoi: parsing ");
                        ncm_buf_go_quote(&b, o->value, strlen(o->value));
                        ncm_buf_puts(&b,
                                     r == -ERANGE ? ": value out of range" : ": invalid syntax");
                }
        } else {
                /* kubelet: "this should never be reached" (availability is checked first),
                 * but a gated-in option nodecm does not implement lands here. */
                ncm_buf_puts(&b, "unsupported topologymanager option: ");
                ncm_buf_go_quote(&b, o->key, strlen(o->key));
                ncm_buf_printf(&b, " (%s)", o->value);
        }
        if (ncm_buf_failed(&b))
                r = ncm_error_set(err, ENOMEM, "out of memory");
        else
                r = ncm_error_set(err, EINVAL, "%s", b.data);
        ncm_buf_done(&b);
        return r;
}

int ncm__tm_options_parse_in(const ncm_tm_option *opts, size_t n, const ncm__tm_option_level *extra,
                             size_t n_extra, ncm_tm_gates gates, ncm_tm_options *ret,
                             ncm_error *err)
{
        ncm_tm_options o = NCM_TM_OPTIONS_DEFAULT;
        ncm_autofree ncm_tm_option *sorted = NULL;
        int r;

        if (n > 0) {
                sorted = malloc(n * sizeof(*sorted));
                if (!sorted)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                memcpy(sorted, opts, n * sizeof(*sorted));
                qsort(sorted, n, sizeof(*sorted), cmp_option);
        }
        for (size_t i = 0; i < n; i++) {
                if (i > 0 && strcmp(sorted[i - 1].key, sorted[i].key) == 0)
                        return quoted_error(err, "duplicate Topology Manager Policy option: ",
                                            sorted[i].key, "");
                r = ncm__tm_option_check_available_in(sorted[i].key, extra, n_extra, gates, err);
                if (r < 0)
                        return r;
                r = parse_one(&sorted[i], &o, err);
                if (r < 0)
                        return r;
        }
        *ret = o;
        return 0;
}

int ncm_tm_options_parse(const ncm_tm_option *opts, size_t n, ncm_tm_gates gates,
                         ncm_tm_options *ret, ncm_error *err)
{
        return ncm__tm_options_parse_in(opts, n, NULL, 0, gates, ret, err);
}
