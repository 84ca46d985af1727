/* SPDX-License-Identifier: Apache-2.0 */
/* The error object: return values, prefixing, truncation and the CLI exit-status mapping. */
#include <errno.h>
#include <string.h>

#include <nodecm/error.h>
#include "testutil.h"

static void test_error_set_returns_negative_code(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm_error_set(&err, EINVAL, "bad '%s'", "x"), -EINVAL);
        assert_int_equal(err.code, EINVAL);
        assert_string_equal(err.msg, "bad 'x'");
        assert_int_equal(ncm_error_set(NULL, ENOENT, "ignored"), -ENOENT);
        assert_int_equal(ncm_error_set(&err, -ERANGE, "neg"), -ERANGE);
        assert_int_equal(err.code, ERANGE);
}

static void test_error_errno_appends_strerror(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm_error_errno(&err, ENOENT, "open '%s'", "/x"), -ENOENT);
        assert_string_equal(err.msg, "open '/x': No such file or directory");
}

static void test_error_prefix(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        ncm_error_set(&err, EINVAL, "inner");
        assert_int_equal(ncm_error_prefix(&err, "outer %d", 1), -EINVAL);
        assert_string_equal(err.msg, "outer 1: inner");
        assert_int_equal(ncm_error_prefix(NULL, "x"), -EINVAL);
}

static void test_error_truncation_is_marked(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        char big[3000];
        (void)state;
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        ncm_error_set(&err, EINVAL, "%s", big);
        assert_int_equal(strlen(err.msg), NCM_ERROR_MSG_MAX - 1);
        assert_string_equal(err.msg + NCM_ERROR_MSG_MAX - 4, "...");
        ncm_error_set(&err, EINVAL, "short");
        ncm_error_prefix(&err, "%s", big);
        assert_string_equal(err.msg + NCM_ERROR_MSG_MAX - 4, "...");
}

static void test_error_exit_status(void **state)
{
        (void)state;
        assert_int_equal(ncm_error_exit_status(0), 0);
        assert_int_equal(ncm_error_exit_status(EINVAL), 2);
        assert_int_equal(ncm_error_exit_status(ENOENT), 2);
        assert_int_equal(ncm_error_exit_status(NCM_E_UNSATISFIABLE), 1);
        assert_int_equal(ncm_error_exit_status(-NCM_E_ADMISSION), 1);
        assert_int_equal(ncm_error_exit_status(NCM_E_INVALID_STATE), 1);
        assert_int_equal(ncm_error_exit_status(NCM_E_CHECKSUM), 1);
        /* the environment's failures, which a retry may get past: 3 (issue 20) */
        static const int env[] = {ENOSPC,       EDQUOT,     EROFS,       EIO,
                                  ENOMEM,       EAGAIN,     EWOULDBLOCK, ETIMEDOUT,
                                  ECONNREFUSED, ECONNRESET, EPIPE,       NCM_E_UNAVAILABLE};
        for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
                assert_int_equal(ncm_error_exit_status(-env[i]), 3);
        assert_int_equal(ncm_error_exit_status(EXDEV), 2);
        assert_string_equal(ncm_strerror(NCM_E_CHECKSUM), "checkpoint checksum mismatch");
        assert_string_equal(ncm_strerror(ENOENT), "No such file or directory");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_error_set_returns_negative_code),
                        cmocka_unit_test(test_error_errno_appends_strerror),
                        cmocka_unit_test(test_error_prefix),
                        cmocka_unit_test(test_error_truncation_is_marked),
                        cmocka_unit_test(test_error_exit_status),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
