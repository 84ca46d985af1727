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
                                  "n: {x: z}\n"
                                  "yes: 1\n");
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
        /* keys resolve too, and YAMLToJSON writes them as JSON strings: "n" is false */
        assert_string_equal(json_object_get_string(ncm__json_get(ncm__json_get(o, "false"), "x")),
                            "z");
        assert_int_equal(json_object_get_int64(ncm__json_get(o, "true")), 1);
        assert_null(ncm__json_get(o, "n"));
}

static json_object *parse_info(const char *text, unsigned flags, ncm_json_info *info)
{
        json_object *o = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm__json_or_yaml_parse_ex(text, strlen(text), "t", flags, &o, info, &err) < 0)
                fail_msg("parse failed: %s", err.msg);
        return o;
}

/* sigs.k8s.io/yaml (go-yaml v2) resolves anchors, aliases and merge keys; so does nodecm. */
static void test_yaml_aliases_and_merge_keys(void **state)
{
        ncm_json_info in = {0};
        json_object *o = parse_info("a: &x 1\n"
                                    "b: *x\n"
                                    "base: &m {p: 1, q: 2}\n"
                                    "over:\n"
                                    "  <<: *m\n"
                                    "  q: 3\n"
                                    "under:\n"
                                    "  q: 0\n"
                                    "  <<: [*m, {p: 9, r: 8}]\n"
                                    "copy: *m\n"
                                    "seq: &s [1, 2]\n"
                                    "seqs: [*s, *s]\n",
                                    0, &in);
        json_object *under = ncm__json_get(o, "under");
        (void)state;

        assert_int_equal(json_object_get_int64(ncm__json_get(o, "b")), 1);
        /* a key after the merge wins over it */
        assert_int_equal(json_object_get_int64(ncm__json_get(ncm__json_get(o, "over"), "q")), 3);
        assert_int_equal(json_object_get_int64(ncm__json_get(ncm__json_get(o, "over"), "p")), 1);
        /* the merge overwrites a key before it; of a sequence, the earlier mapping wins */
        assert_int_equal(json_object_get_int64(ncm__json_get(under, "q")), 2);
        assert_int_equal(json_object_get_int64(ncm__json_get(under, "p")), 1);
        assert_int_equal(json_object_get_int64(ncm__json_get(under, "r")), 8);
        assert_int_equal(json_object_get_int64(ncm__json_get(ncm__json_get(o, "copy"), "q")), 2);
        assert_int_equal(json_object_array_length(ncm__json_get(o, "seqs")), 2);
        /* every overwrite is a repeat go-yaml's strict mode refuses */
        assert_int_equal(in.n_dups, 3);
        assert_string_equal(in.dups[0].path, "over.q");
        assert_int_equal(in.dups[0].line, 6);
        assert_string_equal(in.dups[1].path, "under.p");
        assert_string_equal(in.dups[2].path, "under.q");
        assert_true(in.aliased >= 6);
        json_object_put(o);
        ncm__json_info_done(&in);

        expect_error("a: *nope\n", "t:1:4: invalid YAML: unknown anchor 'nope' referenced");
        expect_error("a: &x [1, *x]\n", "anchor 'x' value contains itself");
        expect_error("a: &x 1\nb:\n  <<: *x\n", "map merge requires map or sequence of maps");
        expect_error("a: &x {b: 1}\n*x : 2\n", "mapping keys must be scalars");
        expect_error("~: 1\n", "unsupported map key of type: <nil>");
}

/*
 * Billion laughs: nine levels of nine aliases would expand to 9^7 nodes. go-yaml v2 stops it
 * once more than 99% of the nodes decoded come from aliases (past 1000 nodes); so does nodecm,
 * without expanding anything.
 */
static void test_yaml_alias_bomb_is_refused(void **state)
{
        const char *bomb =
                        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
                        "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                        "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                        "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                        "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
                        "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
                        "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n";
        ncm_json_info in = {0};
        json_object *o;
        (void)state;

        expect_error(bomb, "document contains excessive aliasing");
        /* a document that aliases less than go-yaml's ratio is read */
        o = parse_info("a: &a [1, 2, 3]\nb: *a\nc: *a\n", 0, &in);
        assert_int_equal(json_object_array_length(ncm__json_get(o, "c")), 3);
        json_object_put(o);
        ncm__json_info_done(&in);
}

/*
 * go-yaml v2's Unmarshal reads the first document and never looks further: with
 * NCM_JSON_FIRST_DOCUMENT so does nodecm, telling where more followed; without it a second
 * document is refused.
 */
static void test_yaml_first_document(void **state)
{
        ncm_json_info in = {0};
        json_object *o = parse_info("a: 1\n---\nb: [\n", NCM_JSON_FIRST_DOCUMENT, &in);
        (void)state;

        assert_int_equal(json_object_get_int64(ncm__json_get(o, "a")), 1);
        assert_null(ncm__json_get(o, "b"));
        assert_true(in.more);
        assert_int_equal(in.more_line, 2);
        json_object_put(o);
        ncm__json_info_done(&in);
        o = parse_info("---\na: 1\n...\n", NCM_JSON_FIRST_DOCUMENT, &in);
        assert_false(in.more);
        json_object_put(o);
        ncm__json_info_done(&in);
        expect_error("a: 1\n---\nb: 2\n", "more than one document");
        expect_error("? [1, 2]\n: x\n", "mapping keys must be scalars");
        expect_error("a: [1, 2\n", "t:");
}

/*
 * Repeated keys: YAML keeps the last value (YAMLToJSON); JSON read as Go reads it into maps and
 * structs merges objects member by member and arrays element by element. Both report the
 * repeats, which Go's strict decoding refuses.
 */
static void test_json_repeated_keys(void **state)
{
        ncm_json_info in = {0};
        json_object *o = parse_info("a: 1\na: 2\nb: {c: 1, c: 2}\nb: {d: 3}\n", 0, &in);
        (void)state;

        assert_int_equal(json_object_get_int64(ncm__json_get(o, "a")), 2);
        assert_null(ncm__json_get(ncm__json_get(o, "b"), "c"));
        assert_int_equal(in.n_dups, 3);
        assert_string_equal(in.dups[0].path, "a");
        assert_int_equal(in.dups[0].line, 2);
        assert_string_equal(in.dups[1].path, "b.c");
        assert_string_equal(in.dups[2].path, "b");
        json_object_put(o);
        ncm__json_info_done(&in);

        o = parse_info("{\"g\": {\"A\": true}, \"l\": [1, {\"y\": 2}],\n"
                       " \"g\": {\"B\": false}, \"l\": [3, {\"w\": 4}, 5], \"s\": \"x\", \"s\": "
                       "\"y\"}",
                       NCM_JSON_GO, &in);
        assert_true(json_object_get_boolean(ncm__json_get(ncm__json_get(o, "g"), "A")));
        assert_false(json_object_get_boolean(ncm__json_get(ncm__json_get(o, "g"), "B")));
        assert_int_equal(json_object_array_length(ncm__json_get(o, "l")), 3);
        assert_int_equal(json_object_get_int64(ncm__json_get(
                                         json_object_array_get_idx(ncm__json_get(o, "l"), 1), "y")),
                         2);
        assert_string_equal(json_object_get_string(ncm__json_get(o, "s")), "y");
        assert_int_equal(in.n_dups, 3);
        assert_string_equal(in.dups[0].path, "g");
        assert_int_equal(in.dups[0].line, 2);
        json_object_put(o);
        ncm__json_info_done(&in);

        /* Go's own syntax errors, with the position */
        {
                ncm_error err = NCM_ERROR_INIT;
                o = NULL;
                assert_int_equal(ncm__json_or_yaml_parse_ex("{\"a\": 1,}", 9, "t", NCM_JSON_GO, &o,
                                                            NULL, &err),
                                 -EINVAL);
                assert_non_null(strstr(err.msg, "t:1:9: invalid JSON: invalid character '}'"));
                assert_int_equal(ncm__json_or_yaml_parse_ex("{\"a\\u0000\": 1}", 14, "t",
                                                            NCM_JSON_GO, &o, NULL, &err),
                                 -EINVAL);
                assert_null(o);
        }
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
                        cmocka_unit_test(test_yaml_aliases_and_merge_keys),
                        cmocka_unit_test(test_yaml_alias_bomb_is_refused),
                        cmocka_unit_test(test_yaml_first_document),
                        cmocka_unit_test(test_json_repeated_keys),
                        cmocka_unit_test(test_yaml_empty_document_is_null),
                        cmocka_unit_test(test_json_get_ci_matches_like_go),
                        cmocka_unit_test(test_json_typed_accessors_name_the_path),
                        cmocka_unit_test(test_json_load_file_reports_missing_file),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
