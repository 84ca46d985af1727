/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The test hook, in the test build of nodecmd only (build/tests/.../nodecmd-test; services.c
 * lists it under NODECMD_TEST_BUILD): NODECMD_TEST_PASSES=N in the environment makes every
 * call that changes the node take N passes, each answered after a loop turn, as a call that
 * waits for device plugins does, so that the tests run the whole path of such calls. It starts
 * after the control service and replaces the devices service's hook.
 */
#include <errno.h>
#include <stdlib.h>

#include "nodecmd.h"

typedef struct test_svc {
        nodecmd *d;
        int passes;
} test_svc;

typedef struct test_pass {
        uv_timer_t timer;
        int pass;
        void (*retry)(void *arg);
        void *arg;
} test_pass;

static void *test_enter(void *data, ncm_ctl_method m, void *ctx)
{
        test_pass *t = ctx;

        if (!ncm_ctl_method_mutates(m))
                return ctx;
        if (!t) {
                t = calloc(1, sizeof(*t));
                if (!t)
                        return NULL;
                uv_timer_init(nodecmd_loop(((test_svc *)data)->d), &t->timer);
                t->timer.data = t;
        }
        t->pass++;
        return t;
}

static void test_answer(uv_timer_t *h)
{
        test_pass *t = h->data;
        t->retry(t->arg);
}

static bool test_leave(void *data, void *ctx, int r, void (*retry)(void *arg), void *arg)
{
        test_svc *s = data;
        test_pass *t = ctx;

        (void)r;
        /* as a device-plugin session: the call's outcome is not final until the last pass */
        if (!t || t->pass >= s->passes)
                return false;
        t->retry = retry;
        t->arg = arg;
        uv_timer_start(&t->timer, test_answer, 1, 0);
        return true;
}

static void test_closed(uv_handle_t *h)
{
        free(h->data);
}

static void test_done(void *data, void *ctx)
{
        test_pass *t = ctx;

        (void)data;
        if (t)
                uv_close((uv_handle_t *)&t->timer, test_closed);
}

static const nodecmd_call_hook test_hook = {test_enter, test_leave, test_done};

static int test_start(nodecmd *d, void **ret, ncm_error *err)
{
        test_svc *s;

        *ret = NULL;
        if (!getenv("NODECMD_TEST_PASSES"))
                return 0;
        s = calloc(1, sizeof(*s));
        if (!s)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = s;
        s->d = d;
        s->passes = atoi(getenv("NODECMD_TEST_PASSES"));
        nodecmd_set_call_hook(d, &test_hook, s);
        nodecmd_log(d, NODECMD_WARN, "test hook installed", "passes=%d", s->passes);
        return 0;
}

/* The hook stays: calls still in flight hold it until the loop closes; then free. */
static void test_free(void *data)
{
        free(data);
}

const nodecmd_service_ops nodecmd_test_service = {
                .name = "test-hook",
                .start = test_start,
                .free = test_free,
};
