/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm_pods' journal (a crash, or a person, may leave anything there): any text either
 * fails with a message naming the file, or gives records sorted by pod UID, each once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/node-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ncm_node_pod_record *v = NULL;
        size_t n = 0, cap = 0, lines = 0;
        bool torn = false;
        ncm_error err = NCM_ERROR_INIT;
        ncm__cpu_lines cpu = {0};
        int r = ncm__node_pods_journal_apply((const char *)data, size, "journal", 0, &v, &n, &cap,
                                             &lines, &torn, &cpu, &err);

        /* the CPU lines it kept replay onto an empty state without crashing */
        if (r >= 0 && cpu.n) {
                ncm_cpu_state *s = ncm_cpu_state_new("static");
                if (s)
                        (void)ncm__node_cpu_replay(s, &cpu, NULL);
                ncm_cpu_state_free(s);
        }
        ncm__cpu_lines_done(&cpu);

        if (r < 0 && strncmp(err.msg, "journal", 7) != 0)
                abort();
        for (size_t i = 1; r >= 0 && i < n; i++)
                if (strcmp(v[i - 1].pod->uid, v[i].pod->uid) >= 0)
                        abort();
        ncm_node_pod_records_free(v, n);
        return 0;
}
