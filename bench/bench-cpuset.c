/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU-set type on 1024-CPU sets: parse and format in kubelet's text form, the algebra the
 * allocator uses (or/and/andnot, weight, subset, iteration).
 */
#include <stdio.h>
#include <stdlib.h>

#include <nodecm/cpuset.h>
#include "benchutil.h"

typedef struct arg {
        const char *text;
        ncm_cpuset *a, *b, *out;
} arg;

static volatile int sink;

static void row(const char *what, double ns)
{
        char buf[32];
        printf("| %s | %s |\n", what, bench_fmt_ns(ns, buf));
}

static void do_parse(void *p)
{
        arg *x = p;
        ncm_cpuset *s = NULL;
        if (ncm_cpuset_parse_list(x->text, &s, NULL) < 0)
                abort();
        ncm_cpuset_free(s);
}

static void do_parse_sysfs(void *p)
{
        arg *x = p;
        ncm_cpuset *s = NULL;
        if (ncm_cpuset_parse_sysfs_list(x->text, &s, NULL) < 0)
                abort();
        ncm_cpuset_free(s);
}

static void do_format(void *p)
{
        arg *x = p;
        ncm_buf b = NCM_BUF_INIT;
        ncm_cpuset_format_list_buf(x->a, &b);
        ncm_buf_done(&b);
}

static void do_or(void *p)
{
        arg *x = p;
        ncm_cpuset_or(x->out, x->a, x->b);
}

static void do_and(void *p)
{
        arg *x = p;
        ncm_cpuset_and(x->out, x->a, x->b);
}

static void do_andnot(void *p)
{
        arg *x = p;
        ncm_cpuset_andnot(x->out, x->a, x->b);
}

static void do_weight(void *p)
{
        arg *x = p;
        sink = ncm_cpuset_weight(x->a);
}

static void do_subset(void *p)
{
        arg *x = p;
        sink = ncm_cpuset_is_subset(x->b, x->a);
}

static void do_iterate(void *p)
{
        arg *x = p;
        int s = 0;
        NCM_CPUSET_FOREACH(cpu, x->a)
        s += cpu;
        sink = s;
}

static void do_dup(void *p)
{
        arg *x = p;
        ncm_cpuset_free(ncm_cpuset_dup(x->a));
}

int main(void)
{
        ncm_buf odd = NCM_BUF_INIT;
        arg x = {0};
        char *full_text;

        x.a = ncm_cpuset_new();
        x.b = ncm_cpuset_new();
        x.out = ncm_cpuset_new();
        /* A: every CPU of 1024; B: the odd ones (512 runs of one, the worst text form) */
        ncm_cpuset_set_range(x.a, 0, 1023);
        for (int i = 1; i < 1024; i += 2) {
                ncm_cpuset_set(x.b, i);
                ncm_buf_printf(&odd, "%s%d", i > 1 ? "," : "", i);
        }
        full_text = ncm_cpuset_format_list(x.a);

        printf("## CPU sets\n\n");
        printf("Sets of up to 1024 CPUs: A = `0-1023`, B = the 512 odd CPUs.\n\n");
        printf("| operation | median |\n|---|---|\n");
        x.text = "0-1023";
        row("parse `0-1023` (kubelet cpuset.Parse)", bench_median_ns(do_parse, &x, 10000000));
        x.text = odd.data;
        row("parse 512 single CPUs (kubelet cpuset.Parse)", bench_median_ns(do_parse, &x, 1000000));
        row("parse 512 single CPUs (sysfs cpulist)", bench_median_ns(do_parse_sysfs, &x, 1000000));
        row("format A (`0-1023`)", bench_median_ns(do_format, &x, 10000000));
        {
                arg y = x;
                y.a = x.b;
                row("format B (512 runs)", bench_median_ns(do_format, &y, 1000000));
        }
        row("or A, B", bench_median_ns(do_or, &x, 100000000));
        row("and A, B", bench_median_ns(do_and, &x, 100000000));
        row("andnot A, B", bench_median_ns(do_andnot, &x, 100000000));
        row("weight A", bench_median_ns(do_weight, &x, 100000000));
        row("is_subset B of A", bench_median_ns(do_subset, &x, 100000000));
        row("iterate A (1024 elements)", bench_median_ns(do_iterate, &x, 10000000));
        {
                arg y = x;
                y.a = x.b;
                row("iterate B (512 elements)", bench_median_ns(do_iterate, &y, 10000000));
        }
        row("dup A (malloc + copy)", bench_median_ns(do_dup, &x, 10000000));
        free(full_text);
        ncm_buf_done(&odd);
        ncm_cpuset_free(x.a);
        ncm_cpuset_free(x.b);
        ncm_cpuset_free(x.out);
        return 0;
}
