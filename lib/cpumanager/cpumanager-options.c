/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The static policy's options (kubelet's policy_options.go, spec §3.8): names, maturity and
 * gates, value parsing, mutual exclusions and the machine checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/buf.h>
#include <nodecm/cpumanager.h>

typedef struct option_def {
        const char *name;
        /* the kubelet minor releases (1.x) in which it became alpha, beta, GA; 0: not yet */
        int alpha, beta, ga;
        size_t field; /* offset of the bool in ncm_cpu_options */
} option_def;

/*
 * Graduations, from the kubelet's policy_options.go of each release and the KEPs: newest
 * kubelet: full-pcpus-only, strict-cpu-reservation and prefer-align-cpus-by-uncorecache GA,
 * distribute-cpus-across-numa beta, align-by-socket and distribute-cpus-across-cores alpha.
 */
static const option_def options[] = {
                {NCM_CPU_OPT_ALIGN_BY_SOCKET, 25, 0, 0, offsetof(ncm_cpu_options, align_by_socket)},
                {NCM_CPU_OPT_DISTRIBUTE_ACROSS_CORES, 31, 0, 0,
                 offsetof(ncm_cpu_options, distribute_cpus_across_cores)},
                {NCM_CPU_OPT_DISTRIBUTE_ACROSS_NUMA, 23, 33, 0,
                 offsetof(ncm_cpu_options, distribute_cpus_across_numa)},
                {NCM_CPU_OPT_FULL_PCPUS_ONLY, 22, 23, 33,
                 offsetof(ncm_cpu_options, full_pcpus_only)},
                {NCM_CPU_OPT_PREFER_UNCORE, 32, 34, 36,
                 offsetof(ncm_cpu_options, prefer_align_by_uncore_cache)},
                {NCM_CPU_OPT_STRICT_RESERVATION, 32, 33, 35,
                 offsetof(ncm_cpu_options, strict_cpu_reservation)},
};

static const option_def *find(const char *name)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(options); i++)
                if (strcmp(options[i].name, name) == 0)
                        return &options[i];
        return NULL;
}

static ncm_cpu_option_maturity maturity_in(const option_def *d, ncm_kubelet_version v)
{
        if (!d)
                return NCM_CPU_OPTION_UNKNOWN;
        if (d->ga && ncm_kubelet_version_at_least(v, 1, d->ga))
                return NCM_CPU_OPTION_STABLE;
        if (d->beta && ncm_kubelet_version_at_least(v, 1, d->beta))
                return NCM_CPU_OPTION_BETA;
        if (ncm_kubelet_version_at_least(v, 1, d->alpha))
                return NCM_CPU_OPTION_ALPHA;
        return NCM_CPU_OPTION_UNKNOWN;
}

ncm_cpu_option_maturity ncm_cpu_option_maturity_of(const char *name)
{
        return maturity_in(find(name), NCM_KUBELET_VERSION_DEFAULT);
}

ncm_cpu_option_maturity ncm_cpu_option_maturity_in(const char *name, ncm_kubelet_version v)
{
        return maturity_in(find(name), v);
}

/* Go's %q of S, into a caller buffer (kubelet's texts quote option names and values). */
static const char *quote(const char *s, ncm_buf *b)
{
        ncm_buf_reset(b);
        ncm_buf_go_quote(b, s, strlen(s));
        return b->data ? b->data : "\"\"";
}

static int check_available(const char *name, ncm_cpu_gates gates, ncm_kubelet_version v,
                           ncm_error *err)
{
        ncm_cpu_option_maturity m = maturity_in(find(name), v);
        ncm_buf b = NCM_BUF_INIT;
        int r = 0;

        if (m == NCM_CPU_OPTION_UNKNOWN)
                r = ncm_error_set(err, EINVAL, "unknown CPU Manager Policy option: %s",
                                  quote(name, &b));
        else if (m == NCM_CPU_OPTION_ALPHA && !gates.alpha_options)
                r = ncm_error_set(err, EINVAL,
                                  "CPU Manager Policy Alpha-level Options not enabled, but "
                                  "option %s provided",
                                  quote(name, &b));
        else if (m == NCM_CPU_OPTION_BETA && !gates.beta_options)
                r = ncm_error_set(err, EINVAL,
                                  "CPU Manager Policy Beta-level Options not enabled, but "
                                  "option %s provided",
                                  quote(name, &b));
        ncm_buf_done(&b);
        return r;
}

int ncm_cpu_option_check_available(const char *name, ncm_cpu_gates gates, ncm_error *err)
{
        return check_available(name, gates, NCM_KUBELET_VERSION_DEFAULT, err);
}

int ncm_parse_go_bool(const char *s, bool *ret)
{
        static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
        static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};

        for (size_t i = 0; i < NCM_ELEMENTSOF(yes); i++)
                if (strcmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
        for (size_t i = 0; i < NCM_ELEMENTSOF(no); i++)
                if (strcmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        return -EINVAL;
}

static int cmp_key(const void *x, const void *y)
{
        const ncm_cpu_option *a = x, *b = y;
        return strcmp(a->key, b->key);
}

static int exclusive(ncm_error *err, const char *a, const char *b)
{
        return ncm_error_set(err, EINVAL,
                             "static policy options %s and %s can not be used at the same time", a,
                             b);
}

int ncm_cpu_options_parse(const ncm_cpu_option *opts, size_t n, ncm_cpu_gates gates,
                          ncm_cpu_options *ret, ncm_error *err)
{
        return ncm_cpu_options_parse_version(opts, n, gates, NCM_KUBELET_VERSION_DEFAULT, ret, err);
}

int ncm_cpu_options_parse_version(const ncm_cpu_option *opts, size_t n, ncm_cpu_gates gates,
                                  ncm_kubelet_version v, ncm_cpu_options *ret, ncm_error *err)
{
        ncm_cpu_options o = {.kubelet_version = v};
        ncm_autofree ncm_cpu_option *sorted = NULL;
        ncm_buf b = NCM_BUF_INIT;
        int r = 0;

        if ((r = ncm_kubelet_version_check(v, err)) < 0)
                return r;
        if (n > 0) {
                sorted = malloc(n * sizeof(*sorted));
                if (!sorted)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                memcpy(sorted, opts, n * sizeof(*sorted));
                qsort(sorted, n, sizeof(*sorted), cmp_key);
        }
        for (size_t i = 0; i < n && r == 0; i++) {
                const option_def *d;
                bool val;

                if (i > 0 && strcmp(sorted[i].key, sorted[i - 1].key) == 0) {
                        r = ncm_error_set(err, EINVAL, "duplicate CPU Manager Policy option: %s",
                                          quote(sorted[i].key, &b));
                        break;
                }
                r = check_available(sorted[i].key, gates, v, err);
                if (r < 0)
                        break;
                d = find(sorted[i].key);
                if (ncm_parse_go_bool(sorted[i].value, &val) < 0) {
                        ncm_buf q = NCM_BUF_INIT;
                        ncm_buf_go_quote(&q, sorted[i].value, strlen(sorted[i].value));
                        r = ncm_error_set(err, EINVAL,
                                          "bad value for option %s: strconv.ParseBool: parsing "
                                          "%s: invalid syntax",
                                          quote(sorted[i].key, &b), q.data ? q.data : "\"\"");
                        ncm_buf_done(&q);
                        break;
                }
                *(bool *)((char *)&o + d->field) = val;
        }
        ncm_buf_done(&b);
        if (r < 0)
                return r;

        /* kubelet's order of the mutual exclusions */
        if (o.full_pcpus_only && o.distribute_cpus_across_cores)
                return exclusive(err, NCM_CPU_OPT_FULL_PCPUS_ONLY,
                                 NCM_CPU_OPT_DISTRIBUTE_ACROSS_CORES);
        if (o.distribute_cpus_across_numa && o.distribute_cpus_across_cores)
                return exclusive(err, NCM_CPU_OPT_DISTRIBUTE_ACROSS_NUMA,
                                 NCM_CPU_OPT_DISTRIBUTE_ACROSS_CORES);
        if (o.prefer_align_by_uncore_cache && o.distribute_cpus_across_cores)
                return exclusive(err, NCM_CPU_OPT_PREFER_UNCORE,
                                 NCM_CPU_OPT_DISTRIBUTE_ACROSS_CORES);
        if (o.prefer_align_by_uncore_cache && o.distribute_cpus_across_numa)
                return exclusive(err, NCM_CPU_OPT_PREFER_UNCORE,
                                 NCM_CPU_OPT_DISTRIBUTE_ACROSS_NUMA);
        *ret = o;
        return 0;
}

int ncm_cpu_options_validate(const ncm_cpu_options *o, const ncm_topo *t, const char *tm_policy,
                             ncm_error *err)
{
        if (!o->align_by_socket)
                return 0;
        if (tm_policy && strcmp(tm_policy, "single-numa-node") == 0)
                return ncm_error_set(err, EINVAL,
                                     "Topolgy manager single-numa-node policy is incompatible "
                                     "with CPUManager align-by-socket policy option");
        if (ncm_topo_num_sockets(t) > ncm_topo_num_numa_nodes(t))
                return ncm_error_set(err, EINVAL,
                                     "Align by socket is not compatible with hardware where "
                                     "number of sockets are more than number of NUMA");
        return 0;
}
