/* SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"

#define BATCHES 9
#define TARGET_BATCH_NS 20000000.0

uint64_t bench_now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int bench_cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

char *bench_build_program(const char *name)
{
        char exe[PATH_MAX], *p, *cand;
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0)
                return NULL;
        exe[n] = '\0';
        for (int up = 0; up < 2 && (p = strrchr(exe, '/')); up++)
                *p = '\0';
        if (asprintf(&cand, "%s/%s", exe, name) < 0)
                return NULL;
        if (access(cand, X_OK) == 0)
                return cand;
        free(cand);
        return NULL;
}

double bench_median_ns(void (*fn)(void *arg), void *arg, uint64_t max_iters)
{
        double samples[BATCHES];
        uint64_t iters = 1, t0, dt;

        /* Calibrate: double the batch until it takes long enough to time reliably. */
        for (;;) {
                t0 = bench_now_ns();
                for (uint64_t i = 0; i < iters; i++)
                        fn(arg);
                dt = bench_now_ns() - t0;
                if (dt >= TARGET_BATCH_NS / 4 || iters >= max_iters)
                        break;
                iters *= 2;
        }
        if (dt > 0 && (double)dt < TARGET_BATCH_NS) {
                uint64_t want = (uint64_t)((double)iters * TARGET_BATCH_NS / (double)dt);
                iters = want < max_iters ? want : max_iters;
                if (iters == 0)
                        iters = 1;
        }
        for (int b = 0; b < BATCHES; b++) {
                t0 = bench_now_ns();
                for (uint64_t i = 0; i < iters; i++)
                        fn(arg);
                samples[b] = (double)(bench_now_ns() - t0) / (double)iters;
        }
        qsort(samples, BATCHES, sizeof(double), bench_cmp_double);
        return samples[BATCHES / 2];
}

const char *bench_fmt_ns(double ns, char buf[32])
{
        if (ns < 1000.0)
                snprintf(buf, 32, "%.0f ns", ns);
        else if (ns < 1e6)
                snprintf(buf, 32, "%.2f µs", ns / 1e3);
        else if (ns < 1e9)
                snprintf(buf, 32, "%.2f ms", ns / 1e6);
        else
                snprintf(buf, 32, "%.2f s", ns / 1e9);
        return buf;
}

bool bench_in_child(void (*fn)(void *arg, void *out), void *arg, void *out, size_t size,
                    long *maxrss_kb)
{
        int fd[2], status;
        pid_t pid;
        struct rusage ru;
        ssize_t got;

        if (pipe(fd) < 0)
                return false;
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
                close(fd[0]);
                memset(out, 0, size);
                fn(arg, out);
                if (write(fd[1], out, size) != (ssize_t)size)
                        _exit(1);
                _exit(0);
        }
        close(fd[1]);
        got = read(fd[0], out, size);
        close(fd[0]);
        if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
                return false;
        *maxrss_kb = ru.ru_maxrss;
        return got == (ssize_t)size && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
