/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The static policy's start-up validation (kubelet policy_static.go validateState). The texts
 * are the kubelet's, byte for byte: Go's %q on a cpuset string only ever adds the quotes, as
 * cpuset strings hold nothing but digits, '-' and ','.
 */
#include <errno.h>
#include <stdlib.h>

#include <nodecm/cpustate.h>

/* The canonical list form into a buffer that lives as long as the caller's scope. */
typedef struct fmt_buf {
        ncm_buf b;
} fmt_buf;

static const char *fmt(fmt_buf *f, const ncm_cpuset *s)
{
        ncm_buf_reset(&f->b);
        ncm_cpuset_format_list_buf(s, &f->b);
        return f->b.data ? f->b.data : "";
}

static void fmt_done(fmt_buf *f)
{
        ncm_buf_done(&f->b);
}

int ncm_cpu_state_validate(ncm_cpu_state *s, const ncm_cpuset *all_cpus, const ncm_cpuset *reserved,
                           bool strict, ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) all = ncm_cpuset_dup(all_cpus);
        ncm_autoptr(ncm_cpuset) resv = reserved ? ncm_cpuset_dup(reserved) : ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) tmp = ncm_cpuset_new();
        fmt_buf f1 = {NCM_BUF_INIT}, f2 = {NCM_BUF_INIT};
        const ncm_cpuset *dflt = ncm_cpu_state_default(s);
        int r = 0;

        if (!all || !resv || !tmp)
                return ncm_error_set(err, ENOMEM, "validate CPU state: out of memory");
        if (strict)
                ncm_cpuset_andnot(all, all, resv);

        /* A fresh state: the shared pool is every CPU (minus the strictly reserved ones). */
        if (ncm_cpuset_is_empty(dflt)) {
                if (ncm_cpu_state_num_pods(s) != 0)
                        return ncm_error_set(err, NCM_E_INVALID_STATE,
                                             "default cpuset cannot be empty");
                r = ncm_cpu_state_set_default(s, all, err);
                return r < 0 ? r : 1;
        }

        if (strict) {
                ncm_cpuset_and(tmp, resv, dflt);
                if (!ncm_cpuset_is_empty(tmp))
                        r = ncm_error_set(err, NCM_E_INVALID_STATE,
                                          "some of strictly reserved cpus: \"%s\" are present in "
                                          "defaultCpuSet: \"%s\"",
                                          fmt(&f1, tmp), fmt(&f2, dflt));
        } else if (!ncm_cpuset_is_subset(resv, dflt)) {
                r = ncm_error_set(err, NCM_E_INVALID_STATE,
                                  "not all reserved cpus: \"%s\" are present in defaultCpuSet: "
                                  "\"%s\"",
                                  fmt(&f1, resv), fmt(&f2, dflt));
        }

        /* Go ranges over maps in random order; the first offender in sorted order is reported. */
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        const char *pod, *ctr;
        const ncm_cpuset *cpus;
        while (r == 0 && ncm_cpu_state_next(s, &it, &pod, &ctr, &cpus)) {
                if (ncm_cpuset_intersects(dflt, cpus))
                        r = ncm_error_set(err, NCM_E_INVALID_STATE,
                                          "pod: %s, container: %s cpuset: \"%s\" overlaps with "
                                          "default cpuset \"%s\"",
                                          pod, ctr, fmt(&f1, cpus), fmt(&f2, dflt));
        }

        if (r == 0) {
                ncm_cpu_state_assigned(s, tmp);
                ncm_cpuset_or(tmp, tmp, dflt);
                if (!ncm_cpuset_equal(tmp, all))
                        r = ncm_error_set(err, NCM_E_INVALID_STATE,
                                          "current set of available CPUs \"%s\" doesn't match with "
                                          "CPUs in state \"%s\"",
                                          fmt(&f1, all), fmt(&f2, tmp));
        }
        fmt_done(&f1);
        fmt_done(&f2);
        return r;
}

int ncm_cpu_state_fit(ncm_cpu_state *s, const ncm_cpuset *all_cpus, const ncm_cpuset *reserved,
                      bool strict, ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) all = ncm_cpuset_dup(all_cpus);
        ncm_autoptr(ncm_cpuset) resv = reserved ? ncm_cpuset_dup(reserved) : ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) held = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) tmp = ncm_cpuset_new();
        fmt_buf f1 = {NCM_BUF_INIT}, f2 = {NCM_BUF_INIT};
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        const char *pod, *ctr;
        const ncm_cpuset *cpus;
        int r = 0;

        if (!all || !resv || !held || !tmp)
                return ncm_error_set(err, ENOMEM, "fit CPU state: out of memory");
        if (strict) {
                ncm_cpuset_andnot(all, all, resv);
        } else if (!ncm_cpuset_is_subset(resv, all)) {
                /* They would have to be in the shared pool; the kubelet would not even start. */
                ncm_cpuset_andnot(tmp, resv, all);
                r = ncm_error_set(err, NCM_E_INVALID_STATE,
                                  "reserved CPUs \"%s\" are not on this machine", fmt(&f1, tmp));
                fmt_done(&f1);
                return r;
        }

        while (r == 0 && ncm_cpu_state_next(s, &it, &pod, &ctr, &cpus)) {
                ncm_cpuset_andnot(tmp, cpus, all);
                if (!ncm_cpuset_is_empty(tmp))
                        r = ncm_error_set(err, NCM_E_INVALID_STATE,
                                          "pod: %s, container: %s cpuset: \"%s\" holds CPUs \"%s\" "
                                          "that are not %s; drain that pod first",
                                          pod, ctr, fmt(&f1, cpus), fmt(&f2, tmp),
                                          strict ? "available (absent or strictly reserved)"
                                                 : "on this machine");
                else if (ncm_cpuset_intersects(cpus, held))
                        r = ncm_error_set(err, NCM_E_INVALID_STATE,
                                          "pod: %s, container: %s cpuset: \"%s\" overlaps CPUs "
                                          "another container holds; drain one of them first",
                                          pod, ctr, fmt(&f1, cpus));
                else if (!strict && ncm_cpuset_intersects(cpus, resv)) {
                        ncm_cpuset_and(tmp, cpus, resv);
                        r = ncm_error_set(
                                        err, NCM_E_INVALID_STATE,
                                        "pod: %s, container: %s cpuset: \"%s\" holds reserved CPUs "
                                        "\"%s\", which must stay in the shared pool; drain that "
                                        "pod first",
                                        pod, ctr, fmt(&f1, cpus), fmt(&f2, tmp));
                }
                ncm_cpuset_or(held, held, cpus);
        }
        if (r == 0) {
                ncm_cpuset_andnot(tmp, all, held);
                if (ncm_cpuset_is_empty(tmp) && ncm_cpu_state_num_pods(s) != 0)
                        r = ncm_error_set(err, NCM_E_INVALID_STATE,
                                          "containers hold every CPU (\"%s\"): nothing is left for "
                                          "the shared pool",
                                          fmt(&f1, all));
        }
        fmt_done(&f1);
        fmt_done(&f2);
        if (r < 0)
                return r;
        if (ncm_cpuset_equal(tmp, ncm_cpu_state_default(s)))
                return 0;
        r = ncm_cpu_state_set_default(s, tmp, err);
        return r < 0 ? r : 1;
}
