/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The JSON and YAML readers: strictness, error positions, go-yaml v2 scalar typing, Go's
 * case-insensitive field matching, and the typed accessors' field-path errors.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "testutil.h"

static json_object *parse_ok(const char *text)
{
        json_object *o = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm__json_or_yaml_parse(text, strlen(text), "t", &o, &err) < 0)
                fail_msg("parse failed: %s", err.msg);
        return o;
}

static void expect_error(const char *text, const char *msg)
{
        json_object *o = NULL;
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm__json_or_yaml_parse(text, strlen(text), "t", &o, &err), -EINVAL);
        assert_null(o);
        if (!strstr(err.msg, msg))
                fail_msg("error \"%s\" does not contain \"%s\"", err.msg, msg);
}

static void test_json_strict_errors_name_position(void **state)
{
        (void)state;
        expect_error("{\"a\": 1,}", "t:1:");
        expect_error("{\"a\": 1", "unexpected end of JSON input");
        expect_error("{\"a\": 1} x", "t:1:10: invalid JSON");
        expect_error("{\n\"a\": tru}", "t:2:");
        expect_error("[1, 2", "unexpected end");
        expect_error("{\"a\": \"\xff\"}", "invalid JSON");
        {
                json_object *o = NULL;
                assert_int_equal(ncm__json_parse("{\"a\":\0}", 7, "t", &o, NULL), -EINVAL);
        }
}

static void test_json_top_level_literals(void **state)
{
        json_object *o = NULL;
        (void)state;
        assert_int_equal(ncm__json_parse("null", 4, "t", &o, NULL), 0);
        assert_null(o);
        assert_int_equal(ncm__json_parse("5", 1, "t", &o, NULL), 0);
        assert_int_equal(json_object_get_int(o), 5);
        json_object_put(o);
        assert_int_equal(ncm__json_parse("\"x\"", 3, "t", &o, NULL), 0);
        assert_string_equal(json_object_get_string(o), "x");
        json_object_put(o);
        o = NULL;
        assert_int_equal(ncm__json_parse("nul", 3, "t", &o, NULL), -EINVAL);
        assert_int_equal(ncm__json_parse("", 0, "t", &o, NULL), -EINVAL);
        assert_int_equal(ncm__json_parse("  ", 2, "t", &o, NULL), -EINVAL);
        assert_null(o);
}

static void test_json_depth_is_bounded(void **state)
{
        char deep[400];
        (void)state;
        memset(deep, '[', 200);
        memset(deep + 200, ']', 200);
        {
                json_object *o = NULL;
                assert_int_equal(ncm__json_parse(deep, 400, "t", &o, NULL), -EINVAL);
        }
        {
                char y[2000];
                size_t n = 0;
                json_object *o = NULL;
                for (int i = 0; i < 100; i++)
                        n += (size_t)snprintf(y + n, sizeof(y) - n, "[");
                for (int i = 0; i < 100; i++)
                        n += (size_t)snprintf(y + n, sizeof(y) - n, "]");
                /* A YAML flow sequence nested past the limit ("[[[" is not JSON-looking? It is:
                 * it starts with '[' so force the YAML reader directly). */
                assert_int_equal(ncm__yaml_parse(y, n, "t", &o, NULL), -EINVAL);
        }
}

static void test_yaml_scalars_typed_like_go_yaml(void **state)
{
        ncm_autojson o = parse_ok("a: 2\n"
                                  "b: \"2\"\n"
                                  "c: 1.5\n"
                                  "d: 1e3\n"
                                  "e: 500m\n"
                                  "f: yes\n"
                                  "g: off\n"
                                  "h: ~\n"
                                  "i:\n"
                                  "j: 0x10\n"
                                  "k: 1_000\n"
                                  "l: 'true'\n"
                                  "m: [1, two]\n"
                                  "n: {x: z}\n");
        const char *t;
        (void)state;
        assert_true(json_object_is_type(ncm__json_get(o, "a"), json_type_int));
        assert_int_equal(json_object_get_int64(ncm__json_get(o, "a")), 2);
        assert_true(json_object_is_type(ncm__json_get(o, "b"), json_type_string));
        assert_true(json_object_is_type(ncm__json_get(o, "c"), json_type_double));
        assert_int_equal(ncm__json_scalar_text(ncm__json_get(o, "d"), "d", &t, NULL), 0);
        assert_string_equal(t, "1e3");
        assert_string_equal(json_object_get_string(ncm__json_get(o, "e")), "500m");
        assert_true(json_object_get_boolean(ncm__json_get(o, "f")));
        assert_true(json_object_is_type(ncm__json_get(o, "g"), json_type_boolean));
        assert_false(json_object_get_boolean(ncm__json_get(o, "g")));
        assert_null(ncm__json_get(o, "h"));
        assert_null(ncm__json_get(o, "i"));
        assert_int_equal(json_object_get_int64(ncm__json_get(o, "j")), 16);
        assert_int_equal(json_object_get_int64(ncm__json_get(o, "k")), 1000);
        assert_true(json_object_is_type(ncm__json_get(o, "l"), json_type_string));
        assert_int_equal(json_object_array_length(ncm__json_get(o, "m")), 2);
        assert_string_equal(json_object_get_string(ncm__json_get(ncm__json_get(o, "n"), "x")), "z");
}

static void test_yaml_rejects_aliases_and_multiple_documents(void **state)
{
        (void)state;
        expect_error("a: &x 1\nb: *x\n", "aliases are not supported");
        expect_error("a: 1\n---\nb: 2\n", "more than one document");
        expect_error("? [1, 2]\n: x\n", "mapping keys must be scalars");
        expect_error("a: [1, 2\n", "t:");
}

static void test_yaml_empty_document_is_null(void **state)
{
        json_object *o = (json_object *)1;
        (void)state;
        assert_int_equal(ncm__yaml_parse("", 0, "t", &o, NULL), 0);
        assert_null(o);
}

static void test_json_get_ci_matches_like_go(void **state)
{
        ncm_autojson o = parse_ok("{\"PolicyName\": \"a\", \"policyname\": \"b\"}");
        ncm_autojson p = parse_ok("{\"POLICYNAME\": \"a\", \"policyName\": \"exact\"}");
        (void)state;
        /* No exact match: the last case-insensitive match wins. */
        assert_string_equal(json_object_get_string(ncm__json_get_ci(o, "policyName")), "b");
        /* An exact match wins over folded ones. */
        assert_string_equal(json_object_get_string(ncm__json_get_ci(p, "policyName")), "exact");
        assert_null(ncm__json_get_ci(o, "policy"));
}

static void test_json_typed_accessors_name_the_path(void **state)
{
        ncm_autojson o = parse_ok("{\"n\": 3, \"f\": 2.5, \"s\": \"x\", \"big\": 99999999999}");
        ncm_error err = NCM_ERROR_INIT;
        int64_t v = 0;
        (void)state;
        assert_int_equal(ncm__json_int(ncm__json_get(o, "n"), "n", 0, 10, &v, NULL), 0);
        assert_int_equal(v, 3);
        assert_int_equal(ncm__json_int(ncm__json_get(o, "f"), "spec.f", 0, 10, &v, &err), -EINVAL);
        assert_string_equal(err.msg, "spec.f: expected an integer, got 2.5");
        assert_int_equal(ncm__json_int(ncm__json_get(o, "s"), "s", 0, 10, &v, &err), -EINVAL);
        assert_string_equal(err.msg, "s: expected an integer, got string");
        assert_int_equal(ncm__json_int(ncm__json_get(o, "big"), "big", 0, 8191, &v, &err), -ERANGE);
        assert_string_equal(err.msg, "big: 99999999999 is out of range [0, 8191]");
        assert_int_equal(ncm__json_expect(ncm__json_get(o, "s"), json_type_object, "x.s", &err),
                         -EINVAL);
        assert_string_equal(err.msg, "x.s: expected object, got string");
}

static void test_json_load_file_reports_missing_file(void **state)
{
        json_object *o = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_true(ncm__json_load_file("/nonexistent/x.json", &o, &err) < 0);
        assert_non_null(strstr(err.msg, "/nonexistent/x.json"));
        assert_null(o);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_json_strict_errors_name_position),
                        cmocka_unit_test(test_json_top_level_literals),
                        cmocka_unit_test(test_json_depth_is_bounded),
                        cmocka_unit_test(test_yaml_scalars_typed_like_go_yaml),
                        cmocka_unit_test(test_yaml_rejects_aliases_and_multiple_documents),
                        cmocka_unit_test(test_yaml_empty_document_is_null),
                        cmocka_unit_test(test_json_get_ci_matches_like_go),
                        cmocka_unit_test(test_json_typed_accessors_name_the_path),
                        cmocka_unit_test(test_json_load_file_reports_missing_file),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
