/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memory_manager_state: the kubelet's restore table (state_checkpoint_test.go,
 * TestCheckpointStateRestore: its inputs and expected outcomes, for 1.37 with the
 * PodLevelResourceManagers gate off and on), the five known checksums, byte-identical writes
 * per generation (the real 1.29 file of kubernetes#128669 read and written back unchanged), and
 * hostile input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/memorymanager.h>
#include "memorymanager/mm-internal.h"
#include "testutil.h"

#define MS_V2                                                                                      \
        "\"machineState\":{\"0\":{\"numberOfAssignments\":0,\"memoryMap\":{\"memory\":{"           \
        "\"total\":2048,\"systemReserved\":512,\"allocatable\":1536,\"reserved\":512,\"free\":"    \
        "1024}},\"cells\":[]}}"
#define MS_BAD                                                                                     \
        "\"machineState\":{\"0\":{\"numberOfAssignments\":5,\"memoryMap\":{\"memory\":{"           \
        "\"total\":1024,\"systemReserved\":256,\"allocatable\":768,\"reserved\":256,\"free\":"     \
        "512}},\"cells\":[]}}"
#define ENTRIES                                                                                    \
        "\"entries\":{\"pod\":{\"container1\":[{\"numaAffinity\":[0],\"type\":\"memory\","         \
        "\"size\":512}]}}"
#define ENTRIES_X                                                                                  \
        "\"entries\":{\"pod\":{\"containerX\":[{\"numaAffinity\":[0],\"type\":\"memory\","         \
        "\"size\":128}]}}"
#define PODENTRIES                                                                                 \
        "\"podEntries\":{\"pod\":{\"memoryBlocks\":[{\"numaAffinity\":[0],\"type\":\"memory\","    \
        "\"size\":512}]}}"
#define PODENTRIES_Y                                                                               \
        "\"podEntries\":{\"podY\":{\"memoryBlocks\":[{\"numaAffinity\":[0],\"type\":\"memory\","   \
        "\"size\":64}]}}"
/* the data strings, as JSON string contents */
#define D_MS                                                                                       \
        "\\\"machineState\\\":{\\\"0\\\":{\\\"numberOfAssignments\\\":0,\\\"memoryMap\\\":{"       \
        "\\\"memory\\\":{\\\"total\\\":2048,\\\"systemReserved\\\":512,\\\"allocatable\\\":1536,"  \
        "\\\"reserved\\\":512,\\\"free\\\":1024}},\\\"cells\\\":[]}}"
#define D_ENTRIES                                                                                  \
        "\\\"entries\\\":{\\\"pod\\\":{\\\"container1\\\":[{\\\"numaAffinity\\\":[0],"             \
        "\\\"type\\\":"                                                                            \
        "\\\"memory\\\",\\\"size\\\":512}]}}"
#define D_PODENTRIES                                                                               \
        "\\\"podEntries\\\":{\\\"pod\\\":{\\\"memoryBlocks\\\":[{\\\"numaAffinity\\\":[0],"        \
        "\\\"type\\\":\\\"memory\\\",\\\"size\\\":512}]}}"
#define DATA "\"data\": \"{\\\"policyName\\\":\\\"static\\\"," D_MS "," D_ENTRIES "}\""
#define DATA_UNKNOWN                                                                               \
        "\"data\": \"{\\\"unknownField\\\":\\\"value\\\",\\\"policyName\\\":\\\"static\\\"," D_MS  \
        "," D_ENTRIES "}\""
#define DATA_PODS                                                                                  \
        "\"data\": \"{\\\"policyName\\\":\\\"static\\\"," D_MS "," D_ENTRIES "," D_PODENTRIES "}"  \
        "\""

/* What a restore gives, as nodecm writes its body (policy, machine state, entries, pods). */
#define STATE_OK "{\"policyName\":\"static\"," MS_V2 "," ENTRIES
#define STATE_OK_PODS STATE_OK "," PODENTRIES

static const struct restore_case {
        const char *desc;
        int gate; /* -1: both, 0: PodLevelResourceManagers off, 1: on */
        const char *content;
        const char *policy;
        const char *error; /* expected in the message; NULL: restored */
        const char *state; /* the restored state's body (gate off / on) */
        const char *state_gate;
} restore_cases[] = {
                {"Fail to restore checkpoint without data section", -1,
                 "{\"policyName\":\"static\"," MS_V2 "," ENTRIES ",\"checksum\": 4215593881,"
                 "\"dataChecksum\": 1234}",
                 "none",
                 "could not load v3 checkpoint: failed to deserialize memory manager checkpoint "
                 "data: "
                 "unexpected end of JSON input",
                 NULL, NULL},
                {"Fail to restore checkpoint without dataChecksum section", -1,
                 "{\"policyName\":\"static\"," MS_V2 "," ENTRIES ",\"checksum\": 4215593881," DATA
                 "}",
                 "none", "could not load v3 checkpoint: checkpoint is corrupted", NULL, NULL},
                {"Restore valid checkpoint", -1,
                 "{\"policyName\":\"other\"," MS_BAD "," ENTRIES_X ",\"checksum\": 1234," DATA
                 ",\"dataChecksum\": 1849615440}",
                 "static", NULL, STATE_OK, STATE_OK},
                {"Fail to restore checkpoint with invalid dataChecksum", -1,
                 "{\"policyName\":\"static\"," MS_V2 "," ENTRIES ",\"checksum\": 4215593881," DATA
                 ",\"dataChecksum\": 1234}",
                 "none", "could not load v3 checkpoint: checkpoint is corrupted", NULL, NULL},
                {"Fail to restore checkpoint with invalid data JSON", -1,
                 "{\"policyName\":\"static\"," MS_V2 "," ENTRIES ",\"checksum\": 4215593881,"
                 "\"data\": \"{\",\"dataChecksum\": 1234}",
                 "none",
                 "could not load v3 checkpoint: failed to deserialize memory manager checkpoint "
                 "data: "
                 "unexpected end of JSON input",
                 NULL, NULL},
                {"Fail to restore checkpoint with invalid JSON", -1, "{", "none",
                 "unexpected end of JSON input", NULL, NULL},
                {"Fail to restore checkpoint with invalid policy name", -1,
                 "{\"policyName\":\"other\"," MS_BAD "," ENTRIES_X ",\"checksum\": 1234," DATA
                 ",\"dataChecksum\": 1849615440}",
                 "none",
                 "[memorymanager] configured policy \"none\" differs from state checkpoint policy "
                 "\"static\"",
                 NULL, NULL},
                {"Restore checkpoint ignoring unknown fields in data section", -1,
                 "{\"policyName\":\"other\"," MS_BAD "," ENTRIES_X
                 ",\"checksum\": 1234," DATA_UNKNOWN ",\"dataChecksum\": 2100279793}",
                 "static", NULL, STATE_OK, STATE_OK},
                {"Restore checkpoint from v1 (migration)", -1,
                 "{\"policyName\":\"static\"," MS_V2 "," ENTRIES ",\"checksum\": 4215593881}",
                 "static", NULL, STATE_OK, STATE_OK},
                {"Restore checkpoint from v1 (migration) with checksum zeroed", -1,
                 "{\"policyName\":\"static\"," MS_V2 "," ENTRIES ",\"checksum\": 0}", "static",
                 NULL, STATE_OK, STATE_OK},
                {"Fail to restore checkpoint from v1 with invalid checksum", -1,
                 "{\"policyName\":\"static\"," MS_V2
                 ",\"entries\":{\"pod\":{\"container1\":[{\"affinity\":[0],\"type\":\"memory\","
                 "\"size\":"
                 "512}]}},\"checksum\": 101010}",
                 "static", "checkpoint is corrupted", NULL, NULL},
                {"Restore checkpoint from v2 with PodLevelResourceManagers enabled", 1,
                 "{\"policyName\":\"static\"," MS_V2 "," ENTRIES "," PODENTRIES
                 ",\"checksum\": 1278640530}",
                 "static", NULL, NULL, STATE_OK_PODS},
                {"Restore checkpoint from v2 with PodLevelResourceManagers disabled", 0,
                 "{\"policyName\":\"static\"," MS_V2 "," ENTRIES "," PODENTRIES
                 ",\"checksum\": 1278640530}",
                 "static", NULL, STATE_OK, NULL},
                {"Restore checkpoint from v2 with zeroed checksum and with "
                 "PodLevelResourceManagers "
                 "disabled",
                 0,
                 "{\"policyName\":\"static\"," MS_V2 "," ENTRIES "," PODENTRIES ",\"checksum\": 0}",
                 "static", NULL, STATE_OK, NULL},
                {"Fail to restore checkpoint from v2 with invalid checksum", -1,
                 "{\"policyName\":\"static\"," MS_V2 "," ENTRIES "," PODENTRIES
                 ",\"checksum\": 101010}",
                 "static", "checkpoint is corrupted", NULL, NULL},
                {"Restore checkpoint from v3 with PodLevelResourceManagers enabled", 1,
                 "{\"policyName\":\"other\"," MS_BAD "," ENTRIES_X "," PODENTRIES_Y
                 ",\"checksum\": 1234," DATA_PODS ",\"dataChecksum\": 637296054}",
                 "static", NULL, NULL, STATE_OK_PODS},
                {"Restore checkpoint from v3 with PodLevelResourceManagers disabled", 0,
                 "{\"policyName\":\"other\"," MS_BAD "," ENTRIES_X "," PODENTRIES_Y
                 ",\"checksum\": 1234," DATA_PODS ",\"dataChecksum\": 637296054}",
                 "static", NULL, STATE_OK, NULL},
};

/* The state's body as nodecm writes it (no checksum, no closing brace). */
static char *body(const ncm_mem_state *s)
{
        ncm_buf b = NCM_BUF_INIT;
        char *end;
        ncm_mem_checkpoint_format(s, NCM_MEM_CHECKPOINT_V2, &b);
        assert_false(ncm_buf_failed(&b));
        end = strstr(b.data, ",\"checksum\":");
        assert_non_null(end);
        *end = '\0';
        return ncm_buf_steal(&b);
}

static void test_mem_checkpoint_kubelet_restore_table(void **state)
{
        (void)state;
        for (int gate = 0; gate < 2; gate++) {
                for (size_t i = 0; i < NCM_ELEMENTSOF(restore_cases); i++) {
                        const struct restore_case *c = &restore_cases[i];
                        ncm_error err = NCM_ERROR_INIT;
                        ncm_mem_state *s = NULL;
                        const char *want = gate ? c->state_gate : c->state;
                        int r;
                        if (c->gate >= 0 && c->gate != gate)
                                continue;
                        r = ncm_mem_checkpoint_parse(c->content, strlen(c->content), "f",
                                                     (ncm_kubelet_version){0, 0}, c->policy, gate,
                                                     &s, NULL, &err);
                        if (c->error) {
                                if (r >= 0 || !strstr(err.msg, c->error))
                                        fail_msg("%s (gate %d): got %d \"%s\", expected \"%s\"",
                                                 c->desc, gate, r, err.msg, c->error);
                                continue;
                        }
                        if (r < 0)
                                fail_msg("%s (gate %d): %s", c->desc, gate, err.msg);
                        {
                                char *got = body(s);
                                if (!want || strcmp(got, want) != 0)
                                        fail_msg("%s (gate %d):\n got %s\nwant %s", c->desc, gate,
                                                 got, want ? want : "(none)");
                                free(got);
                        }
                        ncm_mem_state_free(s);
                }
        }
}

/* The five known checksums, each verified, and recomputed from the decoded state. */
static void test_mem_checkpoint_known_checksums(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_mem_state *s = NULL;
        ncm_mem_checkpoint_info info;
        size_t len;
        char *real = tu_read_data("memorymanager/memory_manager_state-1.29-issue128669", &len);
        uint32_t legacy, v2, data;
        (void)state;

        /* the real 1.29 file, as a 1.29 kubelet and as the newest read it */
        assert_int_equal(ncm_mem_checkpoint_parse(real, len, "f", (ncm_kubelet_version){1, 29},
                                                  "Static", false, &s, &info, &err),
                         0);
        assert_true(info.verified);
        assert_int_equal(info.checksum, 2552710201u);
        assert_int_equal(info.legacy_sum, 2552710201u);
        s = ncm_mem_state_free(s);
        if (ncm_mem_checkpoint_parse(real, len, "f", (ncm_kubelet_version){0, 0}, "Static", false,
                                     &s, &info, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(info.version, NCM_MEM_CHECKPOINT_V1);
        s = ncm_mem_state_free(s);

        for (size_t i = 0; i < NCM_ELEMENTSOF(restore_cases); i++) {
                const struct restore_case *c = &restore_cases[i];
                if (c->error)
                        continue;
                if (ncm_mem_checkpoint_parse(c->content, strlen(c->content), "f",
                                             (ncm_kubelet_version){0, 0}, NULL, true, &s, &info,
                                             &err) < 0)
                        fail_msg("%s: %s", c->desc, err.msg);
                assert_int_equal(ncm_mem_checkpoint_sums(s, &legacy, &v2, &data), 0);
                if (info.version == NCM_MEM_CHECKPOINT_V3) {
                        /* the data string as the file holds it is what the sum covers */
                        assert_int_equal(info.data_sum, info.data_checksum);
                        if (strstr(c->content, "unknownField"))
                                assert_int_equal(info.data_sum, 2100279793u);
                        else if (strstr(c->content, "podEntries\\\""))
                                assert_int_equal(data, 637296054u);
                        else
                                assert_int_equal(data, 1849615440u);
                } else if (info.version == NCM_MEM_CHECKPOINT_V2) {
                        assert_int_equal(v2, 1278640530u);
                } else {
                        assert_int_equal(legacy, 4215593881u);
                }
                s = ncm_mem_state_free(s);
        }
        free(real);
}

/* What each generation writes: the real file back unchanged (<= 1.35), and 1.37's dual layout
 * that reads back as V3 with both checksums. */
static void test_mem_checkpoint_write_generations(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_mem_state *s = NULL, *t = NULL;
        ncm_mem_checkpoint_info info;
        ncm_buf b = NCM_BUF_INIT;
        size_t len;
        char *real = tu_read_data("memorymanager/memory_manager_state-1.29-issue128669", &len);
        (void)state;

        assert_int_equal(ncm_mem_checkpoint_parse(real, len, "f", (ncm_kubelet_version){1, 29},
                                                  "Static", false, &s, NULL, &err),
                         0);
        ncm_mem_checkpoint_format(s, NCM_MEM_CHECKPOINT_V1, &b);
        assert_int_equal(b.len, len);
        assert_memory_equal(b.data, real, len);
        ncm_buf_reset(&b);

        ncm_mem_checkpoint_format(s, NCM_MEM_CHECKPOINT_V3, &b);
        assert_non_null(strstr(b.data, ",\"checksum\":2552710201,\"data\":\"{\\\"policyName\\\":"
                                       "\\\"Static\\\",\\\"machineState\\\":{\\\"0\\\":"));
        if (ncm_mem_checkpoint_parse(b.data, b.len, "f", (ncm_kubelet_version){0, 0}, "Static",
                                     false, &t, &info, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(info.version, NCM_MEM_CHECKPOINT_V3);
        assert_true(ncm_mem_state_equal(s, t));
        t = ncm_mem_state_free(t);
        /* a 1.35 kubelet reads the dual file as V1: the legacy checksum verifies */
        if (ncm_mem_checkpoint_parse(b.data, b.len, "f", (ncm_kubelet_version){1, 35}, "Static",
                                     false, &t, &info, &err) < 0)
                fail_msg("%s", err.msg);
        assert_true(ncm_mem_state_equal(s, t));
        t = ncm_mem_state_free(t);
        ncm_buf_reset(&b);

        /* 1.36 sums podEntries in: a 1.35 kubelet refuses its file, 1.36 reads it */
        ncm_mem_checkpoint_format(s, NCM_MEM_CHECKPOINT_V2, &b);
        assert_int_equal(ncm_mem_checkpoint_parse(b.data, b.len, "f", (ncm_kubelet_version){1, 35},
                                                  "Static", false, &t, &info, &err),
                         -NCM_E_CHECKSUM);
        assert_int_equal(ncm_mem_checkpoint_parse(b.data, b.len, "f", (ncm_kubelet_version){1, 36},
                                                  "Static", false, &t, &info, &err),
                         0);
        assert_int_equal(info.version, NCM_MEM_CHECKPOINT_V2);
        t = ncm_mem_state_free(t);
        ncm_buf_done(&b);
        ncm_mem_state_free(s);
        free(real);
}

/* Go's map-key order in JSON ("10" before "2") against go-spew's numeric order in the sum. */
static void test_mem_checkpoint_key_order(void **state)
{
        static const char text[] =
                        "{\"policyName\":\"Static\",\"machineState\":{\"2\":{"
                        "\"numberOfAssignments\":0,"
                        "\"memoryMap\":null,\"cells\":null},\"10\":{\"numberOfAssignments\":0,"
                        "\"memoryMap\":{},\"cells\":[10]}},\"checksum\":0}";
        ncm_error err = NCM_ERROR_INIT;
        ncm_mem_state *s = NULL;
        ncm_buf b = NCM_BUF_INIT;
        (void)state;
        if (ncm_mem_checkpoint_parse(text, sizeof(text) - 1, "f", (ncm_kubelet_version){1, 30},
                                     NULL, false, &s, NULL, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(s->nodes[0].id, 2);
        assert_true(s->nodes[0].types_nil);
        ncm_mem_checkpoint_format(s, NCM_MEM_CHECKPOINT_V1, &b);
        assert_non_null(strstr(b.data, "{\"10\":{\"numberOfAssignments\":0,\"memoryMap\":{},"
                                       "\"cells\":[10]},\"2\":{\"numberOfAssignments\":0,"
                                       "\"memoryMap\":null,\"cells\":null}}"));
        ncm_buf_done(&b);
        ncm_mem_state_free(s);
}

static void test_mem_checkpoint_hostile(void **state)
{
        static const char *const bad[] = {
                        "",
                        "[]",
                        "null x",
                        "{\"policyName\":5}",
                        "{\"machineState\":{\"x\":{}}}",
                        "{\"machineState\":{\"0\":{\"memoryMap\":{\"memory\":{\"total\":-1}}}}}",
                        "{\"machineState\":{\"0\":{\"memoryMap\":{\"memory\":{\"total\":1.5}}}}}",
                        "{\"machineState\":{\"0\":{\"cells\":\"0\"}}}",
                        "{\"machineState\":{\"99999999999\":{}}}",
                        "{\"entries\":{\"p\":{\"c\":[{\"numaAffinity\":\"x\"}]}}}",
                        "{\"entries\":{\"p\":{\"c\":{}}}}",
                        "{\"entries\":[]}",
                        "{\"checksum\":\"1\"}",
                        "{\"checksum\":-1}",
                        "{\"policyName\":\"a\\u0000b\"}",
                        "{\"data\":5,\"dataChecksum\":1}",
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++) {
                ncm_error err = NCM_ERROR_INIT;
                ncm_mem_state *s = NULL;
                int r = ncm_mem_checkpoint_parse(bad[i], strlen(bad[i]), "f",
                                                 (ncm_kubelet_version){0, 0}, NULL, false, &s, NULL,
                                                 &err);
                if (r >= 0) {
                        /* some decode (Go accepts "null" fields); they must not verify as
                         * anything but a clean state */
                        ncm_mem_state_free(s);
                        continue;
                }
                assert_non_null(strstr(err.msg, "f: "));
        }
        {
                /* the type error names Go's struct and field */
                static const char t[] =
                                "{\"machineState\":{\"0\":{\"cells\":\"0\"}},\"checksum\":0}";
                ncm_error err = NCM_ERROR_INIT;
                ncm_mem_state *s = NULL;
                assert_true(ncm_mem_checkpoint_parse(t, sizeof(t) - 1, "f",
                                                     (ncm_kubelet_version){1, 30}, NULL, false, &s,
                                                     NULL, &err) < 0);
                assert_string_equal(err.msg, "f: json: cannot unmarshal string into Go struct "
                                             "field NUMANodeState.machineState.cells of type "
                                             "[]int");
        }
}

/*
 * A V1 file with a podEntries member V1 does not have, which V2 cannot decode: 1.36 reads it
 * as V1 (V2 first, then V1), so decoding without verification reads it too (fuzz-mem-checkpoint
 * found decode failing where the verified read succeeded).
 */
static void test_mem_checkpoint_decode_falls_back_to_v1(void **state)
{
        ncm_mem_state *s = ncm_mem_state_new("None"), *a = NULL, *b = NULL;
        ncm_buf f = NCM_BUF_INIT, t = NCM_BUF_INIT;
        ncm_mem_checkpoint_info info;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_non_null(s);
        ncm_mem_checkpoint_format(s, NCM_MEM_CHECKPOINT_V1, &f);
        assert_false(ncm_buf_failed(&f));
        assert_int_equal(f.data[0], '{');
        ncm_buf_puts(&t, "{\"podEntries\":{\"p\":\"static\"},");
        ncm_buf_puts(&t, f.data + 1);
        assert_int_equal(ncm_mem_checkpoint_parse(t.data, t.len, "f", (ncm_kubelet_version){1, 36},
                                                  NULL, true, &a, &info, &err),
                         0);
        assert_int_equal(ncm_mem_checkpoint_decode(t.data, t.len, "f", &b, &info, &err), 0);
        assert_true(ncm_mem_state_equal(a, b));
        assert_int_equal(info.version, NCM_MEM_CHECKPOINT_V1);
        assert_true(info.verified);
        ncm_mem_state_free(a);
        ncm_mem_state_free(b);
        ncm_mem_state_free(s);
        ncm_buf_done(&f);
        ncm_buf_done(&t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_mem_checkpoint_kubelet_restore_table),
                        cmocka_unit_test(test_mem_checkpoint_known_checksums),
                        cmocka_unit_test(test_mem_checkpoint_write_generations),
                        cmocka_unit_test(test_mem_checkpoint_key_order),
                        cmocka_unit_test(test_mem_checkpoint_hostile),
                        cmocka_unit_test(test_mem_checkpoint_decode_falls_back_to_v1),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
