/* SPDX-License-Identifier: Apache-2.0 */
/* What the hostile-client tests (test-rpc-hostile.c, test-nodecmd-hostile.c) share. */
#ifndef NCM_TEST_HOSTILE_H
#define NCM_TEST_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nodecm/rpc-uv.h>

/* One TAP line, "ok - NAME DETAIL" or "not ok - ..." (DETAIL may be NULL); failures count. */
void check(const char *name, bool ok, const char *detail);
/* How many checks failed so far. */
int check_failures(void);

/* The number after KEY ("VmRSS:") in /proc/PID/status, in kB; -1 when there is none. */
long status_kb(pid_t pid, const char *key);

/* Whether the server closes the connection (EOF or reset) after whatever it sends. */
bool server_closes(int fd);

/* How a batch of calls ended. */
typedef struct result {
        int done, ok;
        ncm_rpc_code last_code;
        char last_msg[256];
} result;

/*
 * N clients at once on TARGET with options O, one unary call of PATH each with REQ (LEN bytes);
 * returns how many got OK (*RES says more).
 */
int calls_at_once(int n, const char *target, const ncm_rpc_opts *o, const char *path,
                  const uint8_t *req, size_t len, result *res);

#endif
