/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checkpoint inspection through the library (nodecm/checkpoint.h): kinds recognised from the
 * content, verify's summary line, show's text against the CLI's golden, a checksum mismatch,
 * foreign and malformed files, options that do not apply, overlapping assignments said as
 * warnings, and a rewrite with a pod dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/checkpoint.h>
#include <nodecm/fs.h>
#include "testutil.h"

#define CK "checkpoints/"

typedef struct loaded {
        char *text;
        ncm_checkpoint_args a;
} loaded;

static void load(loaded *l, const char *rel)
{
        memset(l, 0, sizeof(*l));
        l->text = tu_read_data(rel, &l->a.len);
        assert_non_null(l->text);
        l->a.path = rel;
        l->a.text = l->text;
}

static void test_inspect_kinds(void **state)
{
        static const struct {
                const char *file, *kind;
        } table[] = {
                        {CK "real/06-static-v1.34-two-pods.json", "cpu_manager_state"},
                        {CK "kubelet/v1-migration.json", "cpu_manager_state"},
                        {CK "crafted/foreign-device.json", "kubelet_internal_checkpoint"},
        };
        (void)state;
        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                const ncm_checkpoint_kind *k = NULL;
                ncm_error err = NCM_ERROR_INIT;
                loaded l;
                load(&l, table[i].file);
                assert_int_equal(ncm_checkpoint_probe(&l.a, &k, &err), 0);
                assert_non_null(k);
                assert_string_equal(ncm_checkpoint_kind_name(k), table[i].kind);
                free(l.text);
        }
}

static void test_inspect_verify(void **state)
{
        const ncm_checkpoint_kind *k = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        loaded l;

        (void)state;
        load(&l, CK "real/06-static-v1.34-two-pods.json");
        assert_int_equal(ncm_checkpoint_probe(&l.a, &k, &err), 0);
        assert_int_equal(ncm_checkpoint_verify(k, &l.a, &out, &err), 0);
        assert_string_equal(out.data, CK "real/06-static-v1.34-two-pods.json: cpu_manager_state "
                                         "V2, policy static, 2 pods, 2 containers, checksum "
                                         "2764424633 verified (CPUManagerCheckpoint rendering): "
                                         "valid\n");
        ncm_buf_done(&out);
        free(l.text);

        load(&l, CK "crafted/foreign-device.json");
        assert_int_equal(ncm_checkpoint_probe(&l.a, &k, &err), 0);
        assert_int_equal(ncm_checkpoint_verify(k, &l.a, &out, &err), 0);
        assert_non_null(strstr(out.data, "kubelet_internal_checkpoint, 0 entries"));
        ncm_buf_done(&out);
        free(l.text);
}

static void test_inspect_show_golden(void **state)
{
        const ncm_checkpoint_kind *k = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        ncm_cpuset *reserved = NULL;
        loaded l;

        (void)state;
        load(&l, CK "real/06-static-v1.34-two-pods.json");
        assert_int_equal(ncm_cpuset_parse_list("0-1", &reserved, NULL), 0);
        l.a.reserved = reserved;
        assert_int_equal(ncm_checkpoint_probe(&l.a, &k, &err), 0);
        assert_int_equal(ncm_checkpoint_show(k, &l.a, &out, &err), 0);
        /* the same bytes `nodecm checkpoint show` prints (tests/cli/test-checkpoint.sh) */
        tu_assert_golden(CK "golden/show-v2.txt", out.data);
        ncm_buf_done(&out);
        l.a.json = true;
        assert_int_equal(ncm_checkpoint_show(k, &l.a, &out, &err), 0);
        tu_assert_golden(CK "golden/show-v2.json", out.data);
        ncm_buf_done(&out);
        ncm_cpuset_free(reserved);
        free(l.text);
}

static void test_inspect_refused(void **state)
{
        const ncm_checkpoint_kind *k = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        loaded l;

        (void)state;
        load(&l, CK "kubelet/invalid-checksum.json");
        assert_int_equal(ncm_checkpoint_probe(&l.a, &k, &err), 0);
        assert_true(ncm_checkpoint_verify(k, &l.a, &out, &err) < 0);
        assert_int_equal(ncm_error_exit_status(err.code), 1);
        assert_non_null(strstr(err.msg, "checksum 1337 in the file"));
        assert_true(strncmp(err.msg, l.a.path, strlen(l.a.path)) == 0);
        ncm_buf_done(&out);
        free(l.text);

        err = (ncm_error)NCM_ERROR_INIT;
        load(&l, CK "crafted/foreign-other.json");
        assert_int_equal(ncm_checkpoint_probe(&l.a, &k, &err), -EINVAL);
        assert_null(k);
        assert_non_null(strstr(err.msg, "not a checkpoint file nodecm knows"));
        free(l.text);

        err = (ncm_error)NCM_ERROR_INIT;
        load(&l, CK "crafted/not-json.txt");
        assert_true(ncm_checkpoint_probe(&l.a, &k, &err) < 0);
        assert_non_null(strstr(err.msg, "invalid JSON"));
        free(l.text);

        /* reserved memory is a memory_manager_state's question */
        err = (ncm_error)NCM_ERROR_INIT;
        load(&l, CK "real/06-static-v1.34-two-pods.json");
        l.a.reserved_memory = "0:memory=1Gi";
        assert_int_equal(ncm_checkpoint_probe(&l.a, &k, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "--reserved-memory applies to memory_manager_state"));
        free(l.text);
}

static void test_inspect_warnings(void **state)
{
        static const char text[] = "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,4-7\","
                                   "\"entries\":{\"a\":{\"x\":\"1-2\"},\"b\":{\"y\":\"2-3\"}},"
                                   "\"checksum\":0}";
        ncm_checkpoint_args a = {.path = "overlap.json", .text = text, .len = sizeof(text) - 1};
        const ncm_checkpoint_kind *k = NULL;
        ncm_buf out = NCM_BUF_INIT, warn = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;

        (void)state;
        assert_int_equal(ncm_checkpoint_probe(&a, &k, &err), 0);
        /* without a buffer the warnings are dropped */
        assert_int_equal(ncm_checkpoint_verify(k, &a, &out, &err), 0);
        ncm_buf_done(&out);
        a.warnings = &warn;
        assert_int_equal(ncm_checkpoint_verify(k, &a, &out, &err), 0);
        assert_string_equal(warn.data, "overlap.json: CPUs 2 are held by both a/x and b/y (two "
                                       "pods share exclusive CPUs; the kubelet does not check "
                                       "this)\n");
        ncm_buf_done(&out);
        ncm_buf_done(&warn);
}

static void test_inspect_rewrite_drop(void **state)
{
        static const char text[] = "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,4-7\","
                                   "\"entries\":{\"a\":{\"x\":\"1-2\"},\"b\":{\"y\":\"3\"}},"
                                   "\"checksum\":0}";
        char *drop[] = {"a"};
        ncm_autofree char *dir = tu_mkdtemp();
        char out_path[4096];
        ncm_checkpoint_args a = {.path = "in.json", .text = text, .len = sizeof(text) - 1};
        const ncm_checkpoint_kind *k = NULL;
        ncm_buf out = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_autofree char *written = NULL;
        size_t len = 0;

        (void)state;
        snprintf(out_path, sizeof(out_path), "%s/out.json", dir);
        a.output = out_path;
        a.drop = drop;
        a.ndrop = 1;
        assert_int_equal(ncm_checkpoint_probe(&a, &k, &err), 0);
        assert_int_equal(ncm_checkpoint_rewrite(k, &a, &out, &err), 0);
        assert_int_equal(ncm_fs_read_all(AT_FDCWD, out_path, 1 << 20, &written, &len, NULL), 0);
        assert_null(strstr(written, "\"a\""));
        assert_non_null(strstr(written, "\"b\""));
        ncm_buf_done(&out);
        tu_rm_rf(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_inspect_kinds),
                        cmocka_unit_test(test_inspect_verify),
                        cmocka_unit_test(test_inspect_show_golden),
                        cmocka_unit_test(test_inspect_refused),
                        cmocka_unit_test(test_inspect_warnings),
                        cmocka_unit_test(test_inspect_rewrite_drop),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
