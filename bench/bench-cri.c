/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRI proxy and reconcile: bench-cri.py does the work (a private containerd driven as a
 * kubelet drives it needs the python3-grpcio client of the tests); this runs it with the build
 * it belongs to, so that tools/run-bench.sh treats it as any bench program.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
        char exe[PATH_MAX], script[PATH_MAX + 32], *p;
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        const char *env = getenv("NCM_SOURCE_ROOT");

        if (n <= 0)
                return 1;
        exe[n] = '\0';
        /* BUILD/bench/bench-cri -> BUILD */
        for (int up = 0; up < 2 && (p = strrchr(exe, '/')); up++)
                *p = '\0';
        if (env)
                snprintf(script, sizeof(script), "%s/bench/bench-cri.py", env);
        else if (access("bench/bench-cri.py", R_OK) == 0)
                snprintf(script, sizeof(script), "bench/bench-cri.py");
        else
                snprintf(script, sizeof(script), "%s/../bench/bench-cri.py", exe);
        if (access("/usr/bin/python3", X_OK) != 0) {
                printf("## CRI proxy and reconcile (nodecmd)\n\nNot run: no /usr/bin/python3.\n");
                return 0;
        }
        fflush(stdout);
        execl("/usr/bin/python3", "python3", script, exe, (char *)NULL);
        perror("bench-cri: /usr/bin/python3");
        return 1;
}
