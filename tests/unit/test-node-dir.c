/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A node's directory: nodecm_pods and its journal (docs/node.md). A change appends its pod's
 * line; the next process finds every pod as the last one left it; a last line cut short by a
 * crash is ignored and the file rewritten before anything is appended after it; lines a crash
 * left after a rewrite are not applied twice; a damaged line stops the open, named.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/fs.h>
#include <nodecm/node.h>
#include "testutil.h"

typedef struct fx {
        char *dir;
        ncm_topo *topo;
        ncm_node_config *cfg;
        ncm_node_dir *nd;
        ncm_fs_batch *batch; /* the owner's writes the node's join (NULL: none) */
} fx;

static int dir_open(fx *f, ncm_error *err)
{
        ncm_node_dir_options o = {.flags = NCM_NODE_DIR_INIT};

        return ncm_node_dir_open(f->dir, f->topo, f->cfg, &o, &f->nd, err);
}

static void reopen(fx *f)
{
        ncm_error err = NCM_ERROR_INIT;

        f->nd = ncm_node_dir_close(f->nd);
        if (dir_open(f, &err) < 0)
                fail_msg("%s", err.msg);
}

static int setup(void **state)
{
        fx *f = calloc(1, sizeof(*f));
        const char *k = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}";

        f->dir = tu_mkdtemp();
        assert_int_equal(ncm_topo_from_synthetic("package:1 core:4 pu:1", &f->topo, NULL), 0);
        assert_int_equal(ncm_node_config_parse(k, strlen(k), NULL, "", &f->cfg, NULL), 0);
        reopen(f);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fx *f = *state;

        ncm_node_dir_close(f->nd);
        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->topo);
        tu_rm_rf(f->dir);
        free(f->dir);
        free(f);
        return 0;
}

/* DIR/NAME replaced by TEXT (what a crash, or a person, may leave). */
static void put_new(fx *f, const char *name, const char *text)
{
        char path[4096];

        snprintf(path, sizeof(path), "%s/%s", f->dir, name);
        tu_write_file(path, text);
}

/* A pod UID of two containers, each asking for CPU (millicores, "" for none). */
static void admit(fx *f, const char *uid, const char *cpu)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_pod *pod = NULL;
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;

        ncm_buf_printf(&b,
                       "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": "
                       "{\"containers\": [{\"name\": \"app\"",
                       uid, uid);
        if (*cpu)
                ncm_buf_printf(&b,
                               ", \"resources\": {\"requests\": {\"cpu\": \"%s\"}, "
                               "\"limits\": {\"cpu\": \"%s\"}}",
                               cpu, cpu);
        ncm_buf_puts(&b, "}, {\"name\": \"log\"}]}}");
        assert_int_equal(ncm_pod_parse(b.data, b.len, NULL, &pod, &err), 0);
        ncm_buf_done(&b);
        if (ncm_node_admit_batch(ncm_node_dir_node(f->nd), pod, 0, f->batch, &a, &err) < 0)
                fail_msg("admit %s: %s", uid, err.msg);
        assert_true(a->admitted);
        ncm_node_admission_free(a);
        ncm_pod_free(pod);
}

/* The records a next process reads, as "uid:removed,removed;..." */
static char *records(fx *f)
{
        ncm_node_pod_record *v = NULL;
        size_t n = 0;
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;

        if (ncm_node_pods_load(f->dir, &v, &n, &err) < 0)
                fail_msg("%s", err.msg);
        for (size_t i = 0; i < n; i++) {
                ncm_buf_printf(&b, "%s%s:", i ? ";" : "", v[i].pod->uid);
                for (size_t k = 0; v[i].removed && v[i].removed[k]; k++)
                        ncm_buf_printf(&b, "%s%s", k ? "," : "", v[i].removed[k]);
        }
        ncm_node_pod_records_free(v, n);
        ncm_buf_putc(&b, '\0');
        return b.data ? b.data : strdup("");
}

static void records_are(fx *f, const char *want)
{
        char *have = records(f);

        if (strcmp(have, want) != 0)
                fail_msg("records %s, want %s", have, want);
        free(have);
}

static void test_node_dir_pods_journal(void **state)
{
        fx *f = *state;
        ncm_node *n;
        ncm_error err = NCM_ERROR_INIT;
        char *text, *saved;

        /* a change is a line; the file itself is written at the start only */
        admit(f, "b", "1");
        admit(f, "a", "");
        n = ncm_node_dir_node(f->nd);
        assert_int_equal(ncm_node_remove_container(n, "b", "log", NULL, &err), 1);
        assert_int_equal(tu_file_lines(f->dir, NCM_NODE_PODS_JOURNAL_NAME), 3);
        text = tu_file_text(f->dir, NCM_NODE_PODS_NAME);
        assert_string_equal(text, "{\"generation\": 1, \"pods\": []}\n");
        free(text);
        records_are(f, "a:;b:log");
        reopen(f);
        records_are(f, "a:;b:log");
        assert_non_null(ncm_node_pod(ncm_node_dir_node(f->nd), "b"));

        /* a crash cut the last append short: ignored, and the file rewritten at the open */
        tu_append_file(f->dir, NCM_NODE_PODS_JOURNAL_NAME, "{\"gen\": 1, \"drop\": \"a");
        records_are(f, "a:;b:log");
        reopen(f);
        text = tu_file_text(f->dir, NCM_NODE_PODS_JOURNAL_NAME);
        assert_string_equal(text, "");
        free(text);
        text = tu_file_text(f->dir, NCM_NODE_PODS_NAME);
        assert_non_null(strstr(text, "{\"generation\": 2, \"pods\": [\n{\"removed\": []"));
        free(text);
        records_are(f, "a:;b:log");

        /* removed; then a rewrite, and a crash before its empty journal was renamed */
        n = ncm_node_dir_node(f->nd);
        assert_int_equal(ncm_node_remove_pod(n, "a", NULL, &err), 1);
        saved = tu_file_text(f->dir, NCM_NODE_PODS_JOURNAL_NAME);
        assert_string_equal(saved, "{\"gen\": 2, \"drop\": \"a\"}\n");
        records_are(f, "b:log");
        tu_append_file(f->dir, NCM_NODE_PODS_JOURNAL_NAME, "{\"gen\": 2, \"drop\": \"a");
        reopen(f); /* rewritten: generation 3 */
        admit(f, "a", "");
        put_new(f, NCM_NODE_PODS_JOURNAL_NAME, saved);
        free(saved);
        /* the stale "drop a" of generation 2 is not applied to generation 3 */
        records_are(f, "b:log");
        text = tu_file_text(f->dir, NCM_NODE_PODS_NAME);
        assert_non_null(strstr(text, "{\"generation\": 3, "));
        free(text);

        /* a damaged line that is not the last: the open stops, naming file and line */
        put_new(f, NCM_NODE_PODS_JOURNAL_NAME, "{\"gen\": 3, \"put\": 4}\n{}\n");
        f->nd = ncm_node_dir_close(f->nd);
        assert_int_equal(dir_open(f, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "/nodecm_pods_journal: line 1: no pod"));
        put_new(f, NCM_NODE_PODS_JOURNAL_NAME, "{\"gen\": 3, \"pop\": 4}\n");
        assert_int_equal(dir_open(f, &err), -EINVAL);
        assert_non_null(strstr(err.msg,
                               "/nodecm_pods_journal: line 1: expected \"put\" or \"drop\""));
        put_new(f, NCM_NODE_PODS_JOURNAL_NAME, "");
        reopen(f);

        /* pods come and go: the journal, grown longer than the pods by 64 lines, is folded
         * into the file by the next change */
        for (int i = 0; i < 40; i++) {
                char uid[16];
                snprintf(uid, sizeof(uid), "p%02d", i);
                admit(f, uid, "");
                if (i < 39)
                        assert_int_equal(ncm_node_remove_pod(ncm_node_dir_node(f->nd), uid, NULL,
                                                             &err),
                                         1);
        }
        assert_true(tu_file_lines(f->dir, NCM_NODE_PODS_JOURNAL_NAME) < 40);
        text = tu_file_text(f->dir, NCM_NODE_PODS_NAME);
        assert_non_null(strstr(text, "{\"generation\": 4, "));
        free(text);
        reopen(f);
        assert_non_null(ncm_node_pod(ncm_node_dir_node(f->nd), "p39"));
        assert_null(ncm_node_pod(ncm_node_dir_node(f->nd), "p38"));
        assert_non_null(ncm_node_pod(ncm_node_dir_node(f->nd), "b"));
}

/*
 * Staged into an owner's batch (the CRI proxy's): the node commits it with its own writes; a
 * long journal is folded into the file within that commit, and a transaction dropped (refused)
 * leaves the generation and the journal as they were.
 */
static void test_node_dir_pods_journal_staged(void **state)
{
        fx *f = *state;
        ncm_node *n = ncm_node_dir_node(f->nd);
        ncm_fs_batch *b = ncm_fs_batch_new();
        ncm_error err = NCM_ERROR_INIT;
        char *text;

        for (int i = 0; i < 40; i++) {
                char uid[16];
                snprintf(uid, sizeof(uid), "s%02d", i);
                f->batch = b;
                admit(f, uid, "");
                assert_int_equal(ncm_fs_batch_size(b), 0);
                if (i < 39)
                        assert_int_equal(ncm_node_remove_pod(n, uid, NULL, &err), 1);
                assert_int_equal(ncm_fs_batch_settle(b, 0, &err), 0);
                f->batch = NULL;
        }
        /* 79 lines passed 1 pod + 64: folded into the file, then what came after */
        text = tu_file_text(f->dir, NCM_NODE_PODS_NAME);
        assert_non_null(strstr(text, "{\"generation\": 2, "));
        free(text);
        assert_true(tu_file_lines(f->dir, NCM_NODE_PODS_JOURNAL_NAME) < 79 - 64);
        records_are(f, "s39:");

        /* a change refused: the owner's line is dropped with the node's writes */
        {
                const char *big = "{\"metadata\": {\"uid\": \"z\"}, \"spec\": {\"containers\": "
                                  "[{\"name\": \"a\", \"resources\": {\"limits\": {\"cpu\": "
                                  "\"8\", \"memory\": \"1Gi\"}}}]}}";
                char path[4096];
                ncm_node_admission *a = NULL;
                ncm_pod *pod = NULL;
                snprintf(path, sizeof(path), "%s/owner", f->dir);
                assert_int_equal(ncm_pod_parse(big, strlen(big), NULL, &pod, &err), 0);
                assert_int_equal(ncm_fs_batch_append(b, AT_FDCWD, path, "z\n", 2, 0600, &err), 0);
                assert_int_equal(ncm_node_admit_batch(n, pod, 0, b, &a, &err), 0);
                assert_false(a->admitted);
                assert_int_equal(ncm_fs_batch_size(b), 0);
                assert_int_equal(access(path, F_OK), -1);
                ncm_node_admission_free(a);
                ncm_pod_free(pod);
        }
        records_are(f, "s39:");
        reopen(f);
        records_are(f, "s39:");
        admit(f, "t", "");
        records_are(f, "s39:;t:");
        reopen(f);
        records_are(f, "s39:;t:");
        ncm_fs_batch_free(b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test_setup_teardown(test_node_dir_pods_journal, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_node_dir_pods_journal_staged, setup,
                                                        teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
