/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The generational JSON-lines journal (base/journal.h): generations, a torn last line, a line
 * of an older generation skipped, the append and its count, compaction; and a node directory
 * written by an earlier nodecm read as it was written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/journal.h"
#include "node/node-internal.h"

/* What the reader gave: each line's "v", and its WHERE. */
typedef struct seen {
        char text[512];
        int fail_at; /* the line (1-based "v") whose callback fails; 0: none */
} seen;

static int note(json_object *o, const char *where, void *userdata, ncm_error *err)
{
        seen *s = userdata;
        json_object *v = json_object_object_get(o, "v");
        int iv = v ? json_object_get_int(v) : -1;
        size_t at = strlen(s->text);

        if (iv == s->fail_at)
                return ncm_error_set(err, EBADMSG, "%s: refused", where);
        snprintf(s->text + at, sizeof(s->text) - at, "%d@%s;", iv, where);
        return 0;
}

static int read_text(ncm__journal *j, const char *text, seen *s, bool *torn, ncm_error *err)
{
        return ncm__journal_read(j, text, strlen(text), "J", ": line ", note, s, torn, err);
}

/* Only the lines of the file's generation count; the others are what a crash left. */
static void test_journal_generations(void **state)
{
        const char *text = "{\"gen\": 1, \"v\": 1}\n"
                           "{\"gen\": 2, \"v\": 2}\n"
                           "{\"gen\": 1, \"v\": 3}\n"
                           "{\"v\": 4, \"gen\": 2}\n";
        ncm__journal j = {.gen = 2};
        ncm_error err = NCM_ERROR_INIT;
        seen s = {0};
        bool torn = true;

        (void)state;
        assert_int_equal(read_text(&j, text, &s, &torn, &err), 0);
        assert_string_equal(s.text, "2@J: line 2;4@J: line 4;");
        assert_int_equal(j.lines, 4);
        assert_int_equal(j.gen, 2);
        assert_false(torn);

        /* a file at generation 1 (the journal not yet emptied after a rewrite): the others */
        j = (ncm__journal){.gen = 1};
        s = (seen){0};
        assert_int_equal(read_text(&j, text, &s, NULL, &err), 0);
        assert_string_equal(s.text, "1@J: line 1;3@J: line 3;");

        /* a newer file than every line (a crash after the rewrite, before the emptying) */
        j = (ncm__journal){.gen = 3};
        s = (seen){0};
        assert_int_equal(read_text(&j, text, &s, NULL, &err), 0);
        assert_string_equal(s.text, "");
        assert_int_equal(j.lines, 4);

        /* an empty journal */
        j = (ncm__journal){.gen = 3, .lines = 9};
        assert_int_equal(read_text(&j, "", &s, &torn, &err), 0);
        assert_int_equal(j.lines, 0);
        assert_false(torn);
}

/* A last line without its newline is an append cut short: ignored, whatever it holds. */
static void test_journal_torn(void **state)
{
        static const char *const torn_ends[] = {
                        "{\"gen\": 0, \"v\": 9}", /* whole but for its newline */
                        "{\"gen\": 0, \"v\"",     /* cut inside */
                        "{",
                        "\x01garbage",
        };
        ncm_error err = NCM_ERROR_INIT;

        (void)state;
        for (size_t i = 0; i < sizeof(torn_ends) / sizeof(*torn_ends); i++) {
                char text[128];
                ncm__journal j = {.gen = 0};
                seen s = {0};
                bool torn = false;
                snprintf(text, sizeof(text), "{\"gen\": 0, \"v\": 1}\n%s", torn_ends[i]);
                assert_int_equal(read_text(&j, text, &s, &torn, &err), 0);
                assert_true(torn);
                assert_int_equal(j.lines, 1);
                assert_string_equal(s.text, "1@J: line 1;");
        }
}

/* A whole line that is not one: an error naming the file and the line, as its owner names it. */
static void test_journal_malformed(void **state)
{
        static const struct {
                const char *text, *msg;
        } cases[] = {
                        {"{\"gen\": 0, \"v\": 1}\nnot json\n", "J: line 2"},
                        {"{\"gen\": 0, \"v\": 1}\n\n", "J: line 2"},
                        {"[1]\n", "J: line 1: expected object"},
                        {"{\"v\": 1}\n", "J: line 1: gen: missing"},
                        {"{\"gen\": -1}\n", "J: line 1: gen"},
                        {"{\"gen\": \"0\"}\n", "J: line 1: gen"},
                        {"{\"gen\": 0, \"v\": 1} {}\n", "J: line 1"},
                        {"{\"gen\": 0, \"v\": 2}\n", "J: line 1: refused"}, /* the owner's error */
        };

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                ncm__journal j = {.gen = 0};
                ncm_error err = NCM_ERROR_INIT;
                seen s = {.fail_at = 2};
                assert_true(read_text(&j, cases[i].text, &s, NULL, &err) < 0);
                if (!strstr(err.msg, cases[i].msg))
                        fail_msg("case %zu: [%s] does not name [%s]", i, err.msg, cases[i].msg);
        }
        /* the other way of naming lines (the CRI record's) */
        {
                ncm__journal j = {.gen = 0};
                ncm_error err = NCM_ERROR_INIT;
                seen s = {0};
                assert_true(ncm__journal_read(&j, "{}\n", 3, "K", ":", note, &s, NULL, &err) < 0);
                assert_string_equal(err.msg, "K:1: gen: missing");
        }
}

/* Lines staged in a batch land at its commit, counted; a dropped batch writes nothing. */
static void test_journal_append(void **state)
{
        char *dir = tu_mkdtemp();
        char path[512];
        ncm__journal j = {.gen = 7, .lines = 1};
        ncm_fs_batch *b = ncm_fs_batch_new();
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf line = NCM_BUF_INIT;
        char *text;
        seen s = {0};

        (void)state;
        snprintf(path, sizeof(path), "%s/j", dir);
        tu_write_file(path, "{\"gen\": 7, \"v\": 1}\n");
        ncm__journal_begin(&j, &line);
        ncm_buf_puts(&line, "\"v\": 2");
        ncm__journal_end(&line);
        assert_int_equal(ncm__journal_append(&j, b, path, &line, &err), 0);
        assert_int_equal(j.lines, 2);
        ncm_buf_done(&line);
        /* two lines in one append count two */
        ncm_buf_puts(&line, "{\"gen\": 7, \"v\": 3}\n{\"gen\": 7, \"v\": 4}\n");
        assert_int_equal(ncm__journal_append(&j, b, path, &line, &err), 0);
        assert_int_equal(j.lines, 4);
        ncm_buf_done(&line);
        text = tu_file_text(dir, "j");
        assert_string_equal(text, "{\"gen\": 7, \"v\": 1}\n"); /* staged, not written */
        free(text);
        assert_int_equal(ncm_fs_batch_commit(b, 0, &err), 0);
        text = tu_file_text(dir, "j");
        j = (ncm__journal){.gen = 7};
        assert_int_equal(ncm__journal_read(&j, text, strlen(text), "j", ":", note, &s, NULL, &err),
                         0);
        assert_string_equal(s.text, "1@j:1;2@j:2;3@j:3;4@j:4;");
        free(text);

        /* dropped: nothing written (the owner puts its count back) */
        ncm__journal_begin(&j, &line);
        ncm__journal_end(&line);
        assert_int_equal(ncm__journal_append(&j, b, path, &line, &err), 0);
        ncm_fs_batch_drop(b);
        assert_int_equal(tu_file_lines(dir, "j"), 4);
        ncm_buf_done(&line);

        ncm_fs_batch_free(b);
        tu_rm_rf(dir);
        free(dir);
}

/* The file is due to be rewritten once the journal would hold more than records + 64 lines. */
static void test_journal_compaction(void **state)
{
        ncm__journal j = {.gen = 4, .lines = 3 + NCM__JOURNAL_SLACK};
        ncm_error err = NCM_ERROR_INIT;
        seen s = {0};

        (void)state;
        assert_false(ncm__journal_over(&j, 3, 0));
        assert_true(ncm__journal_over(&j, 3, 1)); /* the next line would pass it */
        assert_false(ncm__journal_over(&j, 4, 1));
        j.lines++;
        assert_true(ncm__journal_over(&j, 3, 0));
        ncm__journal_compacted(&j);
        assert_int_equal(j.gen, 5);
        assert_int_equal(j.lines, 0);
        /* lines appended before the rewrite are of the generation before: skipped */
        assert_int_equal(read_text(&j, "{\"gen\": 4, \"v\": 1}\n{\"gen\": 5, \"v\": 2}\n", &s, NULL,
                                   &err),
                         0);
        assert_string_equal(s.text, "2@J: line 2;");
}

/* nodecm_pods and its journal as main's nodecm wrote them (tests/data/journal/README.md). */
static void test_journal_node_written_by_main(void **state)
{
        char *dir = tu_data_path("journal/node-main");
        ncm_node_pod_record *v = NULL;
        ncm_error err = NCM_ERROR_INIT;
        size_t n = 0, lines = 0;
        uint64_t gen = 0;
        bool torn = true;

        (void)state;
        assert_int_equal(ncm__node_pods_load(dir, &v, &n, &gen, &lines, &torn, NULL, &err), 0);
        assert_int_equal(gen, 1);
        assert_int_equal(lines, 6);
        assert_false(torn);
        assert_int_equal(n, 3);
        assert_string_equal(v[0].pod->uid, "g2");
        assert_string_equal(v[1].pod->uid, "g3");
        assert_string_equal(v[2].pod->uid, "web");
        assert_true(!v[0].removed || !v[0].removed[0]);
        assert_non_null(v[2].removed);
        assert_string_equal(v[2].removed[0], "log");
        assert_null(v[2].removed[1]);
        ncm_node_pod_records_free(v, n);
        free(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_journal_generations),
                        cmocka_unit_test(test_journal_torn),
                        cmocka_unit_test(test_journal_malformed),
                        cmocka_unit_test(test_journal_append),
                        cmocka_unit_test(test_journal_compaction),
                        cmocka_unit_test(test_journal_node_written_by_main),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
