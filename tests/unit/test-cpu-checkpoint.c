/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_manager_state files: every real file of the spec's Appendix A verifies and is rewritten
 * byte for byte; the spec's rendering self-test; the kubelet's state_checkpoint_test.go tables of
 * each release as data (tests/data/checkpoints/restore-table.json: TestCheckpointStateRestore's
 * inputs, errors and states, read as 1.35, 1.36, 1.37 and 1.38 read them); the writer of each
 * release against golden files; V4 (data and dataChecksum, the baselines); V1 migration;
 * checksum 0; Go's case-insensitive field names; the V2 native rendering; corrupt, foreign,
 * truncated, huge and hostile inputs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <nodecm/cpustate.h>
#include <nodecm/fs.h>
#include <nodecm/hash.h>
#include "testutil.h"

static const ncm_kubelet_version K135 = {1, 35}, K136 = {1, 36}, K137 = {1, 37};

static ncm_cpu_checkpoint *parse_text(const char *text, int expect)
{
        ncm_cpu_checkpoint *c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_cpu_checkpoint_parse(text, strlen(text), "test", &c, &err);
        if (r != expect)
                fail_msg("parse returned %d (%s), expected %d", r, err.msg, expect);
        return c;
}

static ncm_cpu_checkpoint *parse_file(const char *rel, int expect, char **text_out)
{
        size_t len;
        char *text = tu_read_data(rel, &len);
        ncm_cpu_checkpoint *c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_cpu_checkpoint_parse(text, len, rel, &c, &err);
        if (r != expect)
                fail_msg("%s: parse returned %d (%s), expected %d", rel, r, err.msg, expect);
        if (text_out)
                *text_out = text;
        else
                free(text);
        return c;
}

static char *render(const ncm_cpu_checkpoint *c, bool native)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_cpu_checkpoint_render(c, native, &b);
        char *r = ncm_buf_steal(&b);
        assert_non_null(r);
        return r;
}

/* S written as release V writes it. */
static char *format_as(const ncm_cpu_state *s, ncm_kubelet_version v)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_autoptr(ncm_cpu_state) d = ncm_cpu_state_dup(s);
        assert_non_null(d);
        ncm_cpu_state_set_kubelet_version(d, v);
        ncm_cpu_checkpoint_format_state(d, &b);
        char *r = ncm_buf_steal(&b);
        assert_non_null(r);
        return r;
}

/* S in the V2 layout, as every kubelet up to 1.36 writes it. */
static char *format_state(const ncm_cpu_state *s)
{
        return format_as(s, K136);
}

static ncm_cpu_checkpoint *parse_text_as(const char *text, ncm_kubelet_version v, int expect)
{
        ncm_cpu_checkpoint *c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_cpu_checkpoint_parse_version(text, strlen(text), "test", v, &c, &err);
        if (r != expect)
                fail_msg("parse returned %d (%s), expected %d", r, err.msg, expect);
        return c;
}

static ncm_cpu_state *restore_ok(const ncm_cpu_checkpoint *c, const char *policy)
{
        ncm_cpu_state *s = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_cpu_checkpoint_restore(c, policy, NULL, 0, &s, &err) < 0)
                fail_msg("restore: %s", err.msg);
        return s;
}

static void assert_restore_fails(const ncm_cpu_checkpoint *c, const char *policy,
                                 const char *expect)
{
        ncm_cpu_state *s = NULL;
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_cpu_checkpoint_restore(c, policy, NULL, 0, &s, &err),
                         -NCM_E_INVALID_STATE);
        assert_null(s);
        assert_string_equal(err.msg, expect);
}

/* --------------------------------------------------------------------------------------- */
/* The checksum                                                                             */
/* --------------------------------------------------------------------------------------- */

static void test_cpu_checkpoint_rendering_self_test(void **state)
{
        static const char self[] = "(*state.CPUManagerCheckpoint){PolicyName:(string)static "
                                   "DefaultCPUSet:(string)0-63 "
                                   "Entries:(map[string]map[string]string)map[] "
                                   "Checksum:(checksum.Checksum)0}";
        (void)state;
        assert_int_equal(ncm_fnv1a32(self, strlen(self)), 1058907510u);
        ncm_autoptr(ncm_cpu_checkpoint) c =
                        parse_file("checkpoints/real/02-static-0-63.json", 0, NULL);
        ncm_autofree char *r = render(c, false);
        assert_string_equal(r, self);
}

static void test_cpu_checkpoint_renders_the_spec_examples(void **state)
{
        (void)state;
        {
                ncm_autoptr(ncm_cpu_checkpoint) c =
                                parse_file("checkpoints/real/01-none-empty.json", 0, NULL);
                ncm_autofree char *r = render(c, false);
                assert_string_equal(r, "(*state.CPUManagerCheckpoint){PolicyName:(string)none "
                                       "DefaultCPUSet:(string) "
                                       "Entries:(map[string]map[string]string)map[] "
                                       "Checksum:(checksum.Checksum)0}");
        }
        {
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_file(
                                "checkpoints/real/06-static-v1.34-two-pods.json", 0, NULL);
                ncm_autofree char *r = render(c, false);
                ncm_autofree char *n = render(c, true);
                assert_string_equal(r, "(*state.CPUManagerCheckpoint){PolicyName:(string)static "
                                       "DefaultCPUSet:(string)0-1,6-11 "
                                       "Entries:(map[string]map[string]string)map["
                                       "4aec46af-22b7-4e26-babb-d15383ac9151:map[mysqld:2-3] "
                                       "60008d73-6f6f-4467-96c5-cd0a1eeadf23:map[mysqld2:4-5]] "
                                       "Checksum:(checksum.Checksum)0}");
                assert_true(strncmp(n, "(*state.CPUManagerCheckpointV2){PolicyName", 42) == 0);
                assert_string_equal(n + 31, r + 29);
        }
}

/* Every real file of Appendix A (and two more found since) verifies and rewrites identically. */
static void test_cpu_checkpoint_real_files_verify_and_rewrite_identically(void **state)
{
        static const char *const files[] = {
                        "01-none-empty.json",
                        "02-static-0-63.json",
                        "03-static-strict-reserved.json",
                        "04-static-nettools.json",
                        "05-static-two-containers.json",
                        "06-static-v1.34-two-pods.json",
                        "07-static-container-1.json",
                        "08-static-compute.json",
                        "09-static-cgroup1.json",
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(files); i++) {
                char rel[128];
                char *text;
                snprintf(rel, sizeof(rel), "checkpoints/real/%s", files[i]);
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_file(rel, 0, &text);
                ncm_error err = NCM_ERROR_INIT;
                print_message("%s\n", rel);
                assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V2);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
                assert_int_equal(c->checksum, c->legacy_checksum);
                assert_null(c->kubelet_error);
                assert_int_equal(ncm_cpu_checkpoint_verify(c, &err), 0);
                ncm_autoptr(ncm_cpu_state) s = restore_ok(c, NULL);
                ncm_autofree char *out = format_state(s);
                assert_string_equal(out, text);
                free(text);
        }
}

static void test_cpu_checkpoint_real_v1_file_and_unverifiable_file(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        {
                /* An empty V1-era file: its checksum is the V1 rendering's. */
                ncm_autoptr(ncm_cpu_checkpoint) c =
                                parse_file("checkpoints/real/10-none-empty-v1.json", 0, NULL);
                assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V1);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
                ncm_autoptr(ncm_cpu_state) s = restore_ok(c, "none");
                ncm_autofree char *out = format_state(s);
                ncm_autofree char *v2 = tu_read_data("checkpoints/real/01-none-empty.json", NULL);
                assert_string_equal(out, v2);
        }
        {
                /* The 2019 file no known rendering reproduces (spec Appendix A). */
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_file(
                                "checkpoints/real/11-static-0-2019-unverifiable.json", 0, NULL);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_MISMATCH);
                assert_int_equal(ncm_cpu_checkpoint_verify(c, &err), -NCM_E_CHECKSUM);
                assert_string_equal(err.msg,
                                    "checkpoint is corrupted: checksum 885245905 in the file, but "
                                    "its V2 content hashes to 838766648 (CPUManagerCheckpoint) "
                                    "or 1966458924 (CPUManagerCheckpointV2)");
                assert_string_equal(c->kubelet_error, "checkpoint is corrupted");
                assert_restore_fails(c, "static", "checkpoint is corrupted");
        }
}

/* --------------------------------------------------------------------------------------- */
/* kubelet state_checkpoint_test.go: TestCheckpointStateRestore                             */
/* --------------------------------------------------------------------------------------- */

static char *entries_of(const ncm_cpu_state *s)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        const char *pod, *ctr;
        const ncm_cpuset *cpus;
        ncm_buf_puts(&b, "");
        while (ncm_cpu_state_next(s, &it, &pod, &ctr, &cpus)) {
                ncm_buf_printf(&b, "%s/%s=", pod, ctr);
                ncm_cpuset_format_list_buf(cpus, &b);
                ncm_buf_putc(&b, ';');
        }
        char *r = ncm_buf_steal(&b);
        assert_non_null(r);
        return r;
}

static const ncm_container_ref test_refs[] = {
                {"containerID1", "pod", "container1"},
                {"containerID2", "pod", "container2"},
};

/* "pod/container=cpus;" for every promise of S. */
static char *promised_of(const ncm_cpu_state *s)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_buf_puts(&b, "");
        for (size_t i = 0; i < ncm_cpu_state_num_pods(s); i++)
                for (size_t j = 0; j < ncm_cpu_state_pod_num_containers(s, i); j++) {
                        const ncm_cpuset *p = ncm_cpu_state_container_promised(s, i, j);
                        if (!p)
                                continue;
                        ncm_buf_printf(&b, "%s/%s=", ncm_cpu_state_pod_uid(s, i),
                                       ncm_cpu_state_container_name(s, i, j));
                        ncm_cpuset_format_list_buf(p, &b);
                        ncm_buf_putc(&b, ';');
                }
        char *r = ncm_buf_steal(&b);
        assert_non_null(r);
        return r;
}

static const char *format_label(ncm_cpu_checkpoint_format f)
{
        static const char *const names[] = {"", "V1", "V2", "V3", "V4"};
        return names[f];
}

/* The expectation of CASE for release MINOR: the entry with the greatest key <= 1.MINOR. */
static json_object *expectation(json_object *expect, int minor)
{
        json_object *best = NULL;
        int best_minor = -1;
        json_object_object_foreach(expect, key, val)
        {
                int m = 0;
                assert_int_equal(sscanf(key, "1.%d", &m), 1);
                if (m <= minor && m > best_minor) {
                        best = val;
                        best_minor = m;
                }
        }
        assert_non_null(best);
        return best;
}

static const char *str_member(json_object *o, const char *name)
{
        json_object *v = NULL;
        return json_object_object_get_ex(o, name, &v) && v ? json_object_get_string(v) : NULL;
}

/*
 * tests/data/checkpoints/restore-table.json: the kubelet's TestCheckpointStateRestore tables
 * (1.32-1.35, 1.36, 1.37's development) and the V4 cases, each restored as every release does.
 */
static void test_cpu_checkpoint_restore_table(void **state)
{
        size_t len;
        char *text = tu_read_data("checkpoints/restore-table.json", &len);
        json_object *doc = json_tokener_parse(text);
        json_object *cases = NULL, *releases = NULL;
        size_t checked = 0;
        (void)state;
        free(text);
        assert_non_null(doc);
        assert_true(json_object_object_get_ex(doc, "cases", &cases));
        assert_true(json_object_object_get_ex(doc, "releases", &releases));
        for (size_t i = 0; i < json_object_array_length(cases); i++) {
                json_object *tc = json_object_array_get_idx(cases, i);
                json_object *expect = NULL, *ctrs = NULL;
                const char *name = str_member(tc, "name");
                const char *file = str_member(tc, "file");
                const char *policy = str_member(tc, "policy");
                ncm_container_ref refs[8];
                char ref_text[8][128];
                size_t nrefs = 0;

                assert_true(json_object_object_get_ex(tc, "expect", &expect));
                if (json_object_object_get_ex(tc, "containers", &ctrs))
                        for (size_t k = 0; k < json_object_array_length(ctrs) && k < 8; k++) {
                                char *t = ref_text[k], *eq, *sl;
                                snprintf(t, sizeof(ref_text[k]), "%s",
                                         json_object_get_string(
                                                         json_object_array_get_idx(ctrs, k)));
                                eq = strchr(t, '=');
                                sl = eq ? strchr(eq, '/') : NULL;
                                assert_non_null(sl);
                                *eq = *sl = '\0';
                                refs[nrefs++] = (ncm_container_ref){t, eq + 1, sl + 1};
                        }
                for (size_t r = 0; r < json_object_array_length(releases); r++) {
                        const char *rel = json_object_get_string(
                                        json_object_array_get_idx(releases, r));
                        ncm_kubelet_version v;
                        json_object *want;
                        char *dir = tu_mkdtemp();
                        char path[4096];
                        ncm_cpu_state *s = NULL;
                        ncm_error err = NCM_ERROR_INIT;
                        int ret;

                        assert_int_equal(ncm_kubelet_version_parse(rel, &v, NULL), 0);
                        want = expectation(expect, v.minor);
                        print_message("case %s, kubelet %s\n", name, rel);
                        snprintf(path, sizeof(path), "%s/cpu_manager_state", dir);
                        if (file) {
                                char fr[256];
                                size_t flen;
                                snprintf(fr, sizeof(fr), "checkpoints/%s", file);
                                char *ft = tu_read_data(fr, &flen);
                                assert_int_equal(ncm_fs_write_atomic(AT_FDCWD, path, ft, flen, 0600,
                                                                     NULL),
                                                 0);
                                free(ft);
                        }
                        ret = ncm_cpu_checkpoint_load_version(AT_FDCWD, path, policy, refs, nrefs,
                                                              v, &s, &err);
                        if (str_member(want, "error")) {
                                char msg[8192];
                                snprintf(msg, sizeof(msg),
                                         "could not restore state from checkpoint: %s, please "
                                         "drain this node and delete the CPU manager checkpoint "
                                         "file \"%s\" before restarting Kubelet",
                                         str_member(want, "error"), path);
                                if (ret >= 0)
                                        fail_msg("%s, kubelet %s: restored, expected \"%s\"", name,
                                                 rel, str_member(want, "error"));
                                assert_null(s);
                                assert_string_equal(err.msg, msg);
                                assert_int_equal(ncm_error_exit_status(-ret), 1);
                        } else {
                                const char *read_as = str_member(want, "read_as");
                                const char *prom = str_member(want, "promised");
                                if (ret < 0)
                                        fail_msg("%s, kubelet %s: %s", name, rel, err.msg);
                                assert_int_equal(ret, file ? 0 : 1);
                                tu_assert_cpuset(ncm_cpu_state_default(s),
                                                 str_member(want, "default"));
                                ncm_autofree char *e = entries_of(s);
                                assert_string_equal(e, str_member(want, "entries"));
                                ncm_autofree char *p = promised_of(s);
                                assert_string_equal(p, prom ? prom : "");
                                /* the state is written back as this release writes */
                                assert_int_equal(ncm_cpu_state_kubelet_version(s).minor, v.minor);
                                if (read_as) {
                                        size_t flen;
                                        char fr[256];
                                        snprintf(fr, sizeof(fr), "checkpoints/%s", file);
                                        ncm_autofree char *ft = tu_read_data(fr, &flen);
                                        ncm_autoptr(ncm_cpu_checkpoint) c = NULL;
                                        assert_int_equal(ncm_cpu_checkpoint_parse_version(ft, flen,
                                                                                          "t", v,
                                                                                          &c, NULL),
                                                         0);
                                        assert_string_equal(format_label(c->read_as), read_as);
                                }
                                ncm_cpu_state_free(s);
                        }
                        checked++;
                        tu_rm_rf(dir);
                        free(dir);
                }
        }
        assert_true(checked >= 150);
        json_object_put(doc);
}

/*
 * What each release writes for one state, byte for byte: tests/data/checkpoints/golden/write-*
 * (made by a separate Python rendering, checksums included; README there).
 */
static void test_cpu_checkpoint_writer_per_release(void **state)
{
        static const struct {
                const char *release;
                const char *golden, *golden_promised;
        } rel[] = {
                        {"1.32", "write-v2.json", "write-v2-promised.json"},
                        {"1.35", "write-v2.json", "write-v2-promised.json"},
                        {"1.36", "write-v2.json", "write-v2-promised.json"},
                        {"1.37", "write-v4.json", "write-v4-baselines.json"},
                        {"1.38", "write-v4.json", "write-v4-baselines.json"},
        };
        ncm_autoptr(ncm_cpu_state) s = ncm_cpu_state_new("static");
        ncm_autoptr(ncm_cpuset) d = tu_cpuset("0-1,12-31");
        ncm_autoptr(ncm_cpuset) a = tu_cpuset("2-9");
        ncm_autoptr(ncm_cpuset) b = tu_cpuset("10-11");
        ncm_autoptr(ncm_cpuset) p = tu_cpuset("2-5");
        (void)state;
        assert_int_equal(ncm_cpu_state_set_default(s, d, NULL), 0);
        assert_int_equal(ncm_cpu_state_set(s, "dpdk", "fwd", a, NULL), 0);
        assert_int_equal(ncm_cpu_state_set(s, "web", "nginx", b, NULL), 0);
        ncm_autoptr(ncm_cpu_state) sp = ncm_cpu_state_dup(s);
        assert_int_equal(ncm_cpu_state_set_promised(sp, "dpdk", "fwd", p, NULL), 0);
        for (size_t i = 0; i < NCM_ELEMENTSOF(rel); i++) {
                ncm_kubelet_version v;
                char g[128];
                assert_int_equal(ncm_kubelet_version_parse(rel[i].release, &v, NULL), 0);
                print_message("kubelet %s\n", rel[i].release);
                for (int with = 0; with < 2; with++) {
                        snprintf(g, sizeof(g), "checkpoints/golden/%s",
                                 with ? rel[i].golden_promised : rel[i].golden);
                        ncm_autofree char *want = tu_read_data(g, NULL);
                        ncm_autofree char *got = format_as(with ? sp : s, v);
                        assert_string_equal(got, want);
                        /* and the release reads it back to the same state */
                        ncm_autoptr(ncm_cpu_checkpoint) c = parse_text_as(got, v, 0);
                        assert_int_equal(c->read_as, ncm_cpu_checkpoint_format_of(v));
                        ncm_autoptr(ncm_cpu_state) back = restore_ok(c, "static");
                        assert_true(ncm_cpu_state_equal(back, with ? sp : s));
                }
        }
        /* the default is the newest released kubelet's */
        ncm_autofree char *dflt = NULL;
        {
                ncm_buf buf = NCM_BUF_INIT;
                ncm_cpu_checkpoint_format_state(s, &buf);
                dflt = ncm_buf_steal(&buf);
        }
        ncm_autofree char *v4 = tu_read_data("checkpoints/golden/write-v4.json", NULL);
        assert_string_equal(dflt, v4);
        assert_int_equal(ncm_cpu_checkpoint_format_of(NCM_KUBELET_VERSION_DEFAULT),
                         NCM_CPU_CHECKPOINT_V4);
}

static void test_cpu_checkpoint_missing_file_is_created_as_the_kubelet_does(void **state)
{
        char *dir = tu_mkdtemp();
        char path[4096];
        ncm_cpu_state *s = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        snprintf(path, sizeof(path), "%s/cpu_manager_state", dir);
        assert_int_equal(ncm_cpu_checkpoint_load_version(AT_FDCWD, path, "none", NULL, 0, K136, &s,
                                                         &err),
                         1);
        ncm_cpu_state_free(s);
        char *got = NULL;
        assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 4096, &got, NULL, NULL), 0);
        /* Byte for byte the real empty file of Appendix A. */
        ncm_autofree char *real = tu_read_data("checkpoints/real/01-none-empty.json", NULL);
        assert_string_equal(got, real);
        free(got);
        assert_int_equal(unlink(path), 0);
        /* 1.37 writes its V4: the same V2 part, then data and its checksum */
        assert_int_equal(ncm_cpu_checkpoint_load(AT_FDCWD, path, "none", NULL, 0, &s, &err), 1);
        assert_int_equal(ncm_cpu_state_kubelet_version(s).major, 0);
        ncm_cpu_state_free(s);
        assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 4096, &got, NULL, NULL), 0);
        assert_string_equal(got, "{\"policyName\":\"none\",\"defaultCpuSet\":\"\","
                                 "\"checksum\":1353318690,\"data\":\"{\\\"policyName\\\":"
                                 "\\\"none\\\",\\\"defaultCpuSet\\\":\\\"\\\"}\","
                                 "\"dataChecksum\":3028111495}");
        free(got);
        tu_rm_rf(dir);
        free(dir);
}

static void test_cpu_checkpoint_refused_file_is_never_rewritten(void **state)
{
        static const char *const files[] = {"invalid-checksum.json", "invalid-json.json",
                                            "invalid-policy-name.json", "v3-legacy.json"};
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(files); i++) {
                char *dir = tu_mkdtemp();
                char path[4096], rel[256];
                size_t len;
                ncm_cpu_state *s = NULL;
                struct stat st1, st2;
                snprintf(path, sizeof(path), "%s/cpu_manager_state", dir);
                snprintf(rel, sizeof(rel), "checkpoints/kubelet/%s", files[i]);
                char *text = tu_read_data(rel, &len);
                assert_int_equal(ncm_fs_write_atomic(AT_FDCWD, path, text, len, 0600, NULL), 0);
                assert_int_equal(stat(path, &st1), 0);
                assert_true(ncm_cpu_checkpoint_load(AT_FDCWD, path, "none", NULL, 0, &s, NULL) < 0);
                assert_int_equal(stat(path, &st2), 0);
                assert_int_equal(st1.st_ino, st2.st_ino);
                char *after = NULL;
                size_t alen = 0;
                assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &after, &alen, NULL), 0);
                assert_int_equal(alen, len);
                assert_memory_equal(after, text, len);
                free(after);
                free(text);
                tu_rm_rf(dir);
                free(dir);
        }
}

/* TestCheckpointStateStore: what one state writes, the next restores. */
static void test_cpu_checkpoint_store_and_restore_round_trip(void **state)
{
        (void)state;
        for (int i = 0; i < 2; i++) {
                char *dir = tu_mkdtemp();
                char path[4096];
                ncm_cpu_state *s1 = NULL, *s2 = NULL;
                ncm_error err = NCM_ERROR_INIT;
                snprintf(path, sizeof(path), "%s/cpu_manager_state", dir);
                assert_int_equal(
                                ncm_cpu_checkpoint_load(AT_FDCWD, path, "none", NULL, 0, &s1, &err),
                                1);
                assert_int_equal(ncm_cpu_state_attach_checkpoint(s1, AT_FDCWD, path, &err), 0);
                ncm_autoptr(ncm_cpuset) d = tu_cpuset(i == 0 ? "1-3" : "");
                ncm_autoptr(ncm_cpuset) a = tu_cpuset("1,5,8");
                assert_int_equal(ncm_cpu_state_set_default(s1, d, &err), 0);
                if (i == 1)
                        assert_int_equal(ncm_cpu_state_set(s1, "pod", "container1", a, &err), 0);
                assert_int_equal(
                                ncm_cpu_checkpoint_load(AT_FDCWD, path, "none", NULL, 0, &s2, &err),
                                0);
                assert_true(ncm_cpu_state_equal(s1, s2));
                ncm_cpu_state_free(s1);
                ncm_cpu_state_free(s2);
                tu_rm_rf(dir);
                free(dir);
        }
}

static char *read_path(const char *path)
{
        char *t = NULL;
        assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &t, NULL, NULL), 0);
        return t;
}

/* Every mutation rewrites the file, which always verifies and restores to the live state. */
static void test_cpu_checkpoint_attached_state_rewrites_on_every_mutation(void **state)
{
        char *dir = tu_mkdtemp();
        char path[4096];
        ncm_error err = NCM_ERROR_INIT;
        int dfd;
        (void)state;
        snprintf(path, sizeof(path), "%s/cpu_manager_state", dir);
        dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(dfd >= 0);
        {
                ncm_autoptr(ncm_cpu_state) s = ncm_cpu_state_new("static");
                /* 1.36's layout: the real V2 files below */
                ncm_cpu_state_set_kubelet_version(s, K136);
                /* Relative to a directory fd, which the state duplicates. */
                assert_int_equal(ncm_cpu_state_attach_checkpoint(s, dfd, "cpu_manager_state", &err),
                                 0);
                close(dfd);
                ncm_autoptr(ncm_cpuset) all = tu_cpuset("0-11");
                ncm_autoptr(ncm_cpuset) c1 = tu_cpuset("2-3");
                ncm_autoptr(ncm_cpuset) c2 = tu_cpuset("4-5");
                assert_int_equal(ncm_cpu_state_validate(s, all, NULL, false, &err), 1);
                ncm_autofree char *t0 = read_path(path);
                assert_string_equal(t0, "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-11\","
                                        "\"checksum\":1227076877}");
                assert_int_equal(ncm_cpu_state_set(s, "4aec46af-22b7-4e26-babb-d15383ac9151",
                                                   "mysqld", c1, &err),
                                 0);
                assert_int_equal(ncm_cpu_state_set(s, "60008d73-6f6f-4467-96c5-cd0a1eeadf23",
                                                   "mysqld2", c2, &err),
                                 0);
                ncm_autoptr(ncm_cpuset) d = tu_cpuset("0-1,6-11");
                assert_int_equal(ncm_cpu_state_set_default(s, d, &err), 0);
                /* The kubelet's v1.34 file of Appendix A, reached through the API. */
                ncm_autofree char *t1 = read_path(path);
                ncm_autofree char *real = tu_read_data(
                                "checkpoints/real/06-static-v1.34-two-pods.json", NULL);
                assert_string_equal(t1, real);
                /* 1.37's file on the next write: that V2 part first, data after it */
                ncm_cpu_state_set_kubelet_version(s, K137);
                assert_int_equal(ncm_cpu_state_persist(s, &err), 0);
                ncm_autofree char *t4 = read_path(path);
                assert_true(strncmp(t4, real, strlen(real) - 1) == 0);
                assert_true(strncmp(t4 + strlen(real) - 1, ",\"data\":\"", 9) == 0);
                assert_int_equal(ncm_cpu_state_delete(s, "60008d73-6f6f-4467-96c5-cd0a1eeadf23",
                                                      "mysqld2", &err),
                                 1);
                assert_int_equal(ncm_cpu_state_delete(s, "4aec46af-22b7-4e26-babb-d15383ac9151",
                                                      "mysqld", &err),
                                 1);
                ncm_autofree char *t2 = read_path(path);
                assert_null(strstr(t2, "entries"));
        }
        tu_rm_rf(dir);
        free(dir);
}

static void test_cpu_checkpoint_write_failure_is_reported(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = ncm_cpu_state_new("static");
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm_cpu_state_attach_checkpoint(
                                         s, AT_FDCWD, "/nonexistent-dir/cpu_manager_state", &err),
                         0);
        ncm_autoptr(ncm_cpuset) d = tu_cpuset("0-3");
        assert_true(ncm_cpu_state_set_default(s, d, &err) < 0);
        assert_non_null(strstr(err.msg, "/nonexistent-dir"));
        /* The change is kept in memory, as the kubelet keeps it. */
        tu_assert_cpuset(ncm_cpu_state_default(s), "0-3");
}

/* --------------------------------------------------------------------------------------- */
/* Formats and checksums                                                                    */
/* --------------------------------------------------------------------------------------- */

static void test_cpu_checkpoint_v1_migration(void **state)
{
        ncm_cpu_state *s = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        ncm_autoptr(ncm_cpu_checkpoint) c =
                        parse_file("checkpoints/kubelet/v1-migration.json", 0, NULL);
        assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V1);
        assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
        assert_int_equal(c->nv1, 2);
        assert_string_equal(c->v1[0].name, "containerID1");
        ncm_autofree char *r = render(c, false);
        assert_string_equal(r, "(*state.CPUManagerCheckpoint){PolicyName:(string)none "
                               "DefaultCPUSet:(string)1-3 Entries:(map[string]string)map["
                               "containerID1:4-6 containerID2:1-3] Checksum:(checksum.Checksum)0}");
        /* Without the map: the kubelet's migration error. */
        assert_restore_fails(c, "none",
                             "failed to migrate checkpoint from v1 to v2: containerID "
                             "'containerID1' not found in initial containers list");
        /* Migration happens before the policy check, as in loadAndMigrateCheckpointV2. */
        assert_int_equal(ncm_cpu_checkpoint_restore(c, "static", test_refs, 1, &s, &err),
                         -NCM_E_INVALID_STATE);
        assert_string_equal(err.msg, "failed to migrate checkpoint from v1 to v2: containerID "
                                     "'containerID2' not found in initial containers list");
        assert_int_equal(ncm_cpu_checkpoint_restore(c, "static", test_refs, 2, &s, &err),
                         -NCM_E_INVALID_STATE);
        assert_string_equal(err.msg,
                            "configured policy \"static\" differs from state checkpoint policy "
                            "\"none\"");
        /* A later duplicate container ID wins; two IDs on one container: the larger ID's set. */
        {
                const ncm_container_ref refs[] = {
                                {"containerID1", "x", "y"},
                                {"containerID1", "pod", "c"},
                                {"containerID2", "pod", "c"},
                };
                assert_int_equal(ncm_cpu_checkpoint_restore(c, "none", refs, 3, &s, &err), 0);
                ncm_autofree char *e = entries_of(s);
                assert_string_equal(e, "pod/c=1-3;");
                ncm_autofree char *out = format_state(s);
                ncm_autoptr(ncm_cpu_checkpoint) back = parse_text(out, 0);
                assert_int_equal(back->format, NCM_CPU_CHECKPOINT_V2);
                assert_int_equal(back->match, NCM_CPU_CHECKSUM_LEGACY);
                ncm_cpu_state_free(s);
        }
}

static void test_cpu_checkpoint_zero_checksum_is_accepted_for_v1_and_v2(void **state)
{
        (void)state;
        {
                ncm_autoptr(ncm_cpu_checkpoint) c =
                                parse_file("checkpoints/crafted/v2-zero-checksum.json", 0, NULL);
                assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V2);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_ZERO);
                assert_int_equal(ncm_cpu_checkpoint_verify(c, NULL), 0);
                ncm_autoptr(ncm_cpu_state) s = restore_ok(c, "static");
                /* Rewriting adds the real checksum. */
                ncm_autofree char *out = format_state(s);
                ncm_autoptr(ncm_cpu_checkpoint) back = parse_text(out, 0);
                assert_int_equal(back->match, NCM_CPU_CHECKSUM_LEGACY);
                assert_int_not_equal(back->checksum, 0);
        }
        {
                ncm_autoptr(ncm_cpu_checkpoint) c =
                                parse_file("checkpoints/crafted/v1-zero-checksum.json", 0, NULL);
                assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V1);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_ZERO);
        }
}

static void test_cpu_checkpoint_v2_native_rendering(void **state)
{
        (void)state;
        ncm_autoptr(ncm_cpu_checkpoint) c =
                        parse_file("checkpoints/crafted/v2-native.json", 0, NULL);
        assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V2);
        assert_int_equal(c->match, NCM_CPU_CHECKSUM_NATIVE);
        assert_int_equal(c->checksum, c->native_checksum);
        assert_int_equal(ncm_cpu_checkpoint_verify(c, NULL), 0);
        ncm_autoptr(ncm_cpu_state) s = restore_ok(c, "static");
        /* nodecm writes the legacy checksum, which every kubelet version accepts. */
        ncm_autofree char *out = format_state(s);
        ncm_autoptr(ncm_cpu_checkpoint) back = parse_text(out, 0);
        assert_int_equal(back->match, NCM_CPU_CHECKSUM_LEGACY);
        assert_int_equal(back->checksum, c->legacy_checksum);
}

static void test_cpu_checkpoint_v3_files(void **state)
{
        (void)state;
        {
                /* TestCPUManagerCheckpointV3_VerifyChecksum_Compatibility: both names verify. */
                ncm_autoptr(ncm_cpu_checkpoint) l =
                                parse_file("checkpoints/kubelet/v3-legacy.json", 0, NULL);
                ncm_autoptr(ncm_cpu_checkpoint) n =
                                parse_file("checkpoints/kubelet/v3-native.json", 0, NULL);
                assert_int_equal(l->format, NCM_CPU_CHECKPOINT_V3);
                assert_int_equal(l->match, NCM_CPU_CHECKSUM_LEGACY);
                assert_int_equal(n->format, NCM_CPU_CHECKPOINT_V3);
                assert_int_equal(n->match, NCM_CPU_CHECKSUM_NATIVE);
                assert_int_equal(l->legacy_checksum, 766259872u);
                assert_int_equal(l->native_checksum, 2284712151u);
                assert_true(l->has_pod_entries);
                assert_int_equal(l->npod_entries, 1);
                assert_string_equal(l->pod_entries[0].uid, "pod2");
                assert_string_equal(l->pod_entries[0].cpus, "7-9");
                ncm_autofree char *r = render(l, false);
                assert_string_equal(r, "(*state.CPUManagerCheckpoint){PolicyName:(string)static "
                                       "DefaultCPUSet:(string)1-2 "
                                       "Entries:(map[string]map[string]string)map["
                                       "pod1:map[container1:5-6 container2:3-4]] "
                                       "PodEntries:(state.PodCPUAssignments)map[pod2:{CPUSet:("
                                       "cpuset.CPUSet)"
                                       "{elems:(map[int]struct {})map[7:{} 8:{} 9:{}]}}] "
                                       "Checksum:(checksum.Checksum)0}");
                assert_int_equal(ncm_cpu_checkpoint_verify(l, NULL), 0);
                /* 1.37 reads a V3 file (its V3 fallback runs with the gate off too) */
                assert_int_equal(l->read_as, NCM_CPU_CHECKPOINT_V3);
                assert_null(l->kubelet_error);
                /* 1.36 with the gate off tries V2, then V1, and reports V1's error */
                size_t len;
                ncm_autofree char *text = tu_read_data("checkpoints/kubelet/v3-legacy.json", &len);
                ncm_autoptr(ncm_cpu_checkpoint) l36 = parse_text_as(text, K136, 0);
                assert_int_equal(l36->read_as, 0);
                assert_string_equal(l36->kubelet_error,
                                    "json: cannot unmarshal object into Go struct field "
                                    "CPUManagerCheckpointV1.entries of type string");
                /* up to 1.35: V1, then V2, whose checksum fails */
                ncm_autoptr(ncm_cpu_checkpoint) l35 = parse_text_as(text, K135, 0);
                assert_string_equal(l35->kubelet_error, "checkpoint is corrupted");
        }
        {
                /* Written by a gate-on kubelet with no pod-level entry: a V3 checksum. */
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_file(
                                "checkpoints/kubelet/v3-empty-pod-entries.json", 0, NULL);
                assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V3);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_NATIVE);
                assert_false(c->has_pod_entries);
                assert_int_equal(c->checksum, 1942532442u);
        }
}

static void test_cpu_checkpoint_case_insensitive_field_names(void **state)
{
        (void)state;
        {
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_file(
                                "checkpoints/crafted/case-insensitive-keys.json", 0, NULL);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
                assert_string_equal(c->policy_name, "static");
                assert_int_equal(c->npods, 2);
        }
        {
                /* Go folds U+017F (ſ) onto s and U+212A (Kelvin) onto k. */
                ncm_autoptr(ncm_cpu_checkpoint) c =
                                parse_text("{\"policyName\":\"static\",\"defaultCpu\xc5\xbf"
                                           "et\":\"0-63\",\"chec\xe2\x84\xaa"
                                           "sum\":1058907510}",
                                           0);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
                assert_string_equal(c->default_cpus, "0-63");
        }
        {
                /* Not a fold: "policy_name" is an unknown field, ignored. */
                ncm_autoptr(ncm_cpu_checkpoint) c =
                                parse_text("{\"policy_name\":\"static\",\"defaultCpuSet\":\"\","
                                           "\"checksum\":1353318690,\"unknown\":[1,{\"x\":null}]}",
                                           0);
                assert_string_equal(c->policy_name, "");
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_MISMATCH);
        }
}

static void test_cpu_checkpoint_checksum_covers_the_text_as_written(void **state)
{
        (void)state;
        ncm_autoptr(ncm_cpu_checkpoint) c =
                        parse_file("checkpoints/crafted/non-canonical-cpusets.json", 0, NULL);
        assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
        assert_string_equal(c->default_cpus, "0,1,4-5");
        assert_string_equal(c->pods[0].entries[0].cpus, "3,2");
        ncm_autoptr(ncm_cpu_state) s = restore_ok(c, "static");
        ncm_autofree char *out = format_state(s);
        /* Rewritten canonical, with a new checksum. */
        assert_non_null(strstr(out, "\"defaultCpuSet\":\"0-1,4-5\""));
        assert_non_null(strstr(out, "{\"c\":\"2-3\"}"));
        ncm_autoptr(ncm_cpu_checkpoint) back = parse_text(out, 0);
        assert_int_equal(back->match, NCM_CPU_CHECKSUM_LEGACY);
}

static void test_cpu_checkpoint_null_maps(void **state)
{
        (void)state;
        {
                /* "entries": null renders <nil>: only a checksum computed that way matches. */
                ncm_autoptr(ncm_cpu_checkpoint) c =
                                parse_file("checkpoints/crafted/entries-null.json", 0, NULL);
                assert_true(c->entries_nil);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
        }
        {
                ncm_autoptr(ncm_cpu_checkpoint) c =
                                parse_text("{\"policyName\":\"static\",\"defaultCpuSet\":\"0-63\","
                                           "\"entries\":null,"
                                           "\"checksum\":1058907510}",
                                           0);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_MISMATCH);
        }
        {
                /* A pod whose map is null: pod:<nil>; its key survives the restore. */
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_text(
                                "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-3\",\"entries\":"
                                "{\"p\":null,\"q\":{\"c\":null}},\"checksum\":0}",
                                0);
                assert_true(c->pods[0].nil);
                assert_string_equal(c->pods[1].entries[0].cpus, "");
                ncm_autofree char *r = render(c, false);
                assert_non_null(strstr(r, "map[p:<nil> q:map[c:]]"));
                ncm_autoptr(ncm_cpu_state) s = restore_ok(c, "static");
                assert_int_equal(ncm_cpu_state_num_pods(s), 2);
                ncm_autofree char *out = format_state(s);
                assert_non_null(strstr(out, "\"entries\":{\"p\":{},\"q\":{\"c\":\"\"}}"));
        }
}

static void test_cpu_checkpoint_empty_pod_key_round_trips(void **state)
{
        char *text;
        (void)state;
        ncm_autoptr(ncm_cpu_checkpoint) c =
                        parse_file("checkpoints/crafted/empty-pod.json", 0, &text);
        assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
        ncm_autoptr(ncm_cpu_state) s = restore_ok(c, "static");
        ncm_autofree char *out = format_state(s);
        assert_string_equal(out, text);
        free(text);
        /* The key counts for validateState's "default cpuset cannot be empty". */
        ncm_autoptr(ncm_cpuset) empty = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) all = tu_cpuset("0-3");
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_cpu_state_set_default(s, empty, NULL), 0);
        assert_int_equal(ncm_cpu_state_validate(s, all, NULL, false, &err), -NCM_E_INVALID_STATE);
        assert_string_equal(err.msg, "default cpuset cannot be empty");
}

static void test_cpu_checkpoint_writer_escapes_like_go(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = ncm_cpu_state_new("st<a>tic");
        ncm_autoptr(ncm_cpuset) c = tu_cpuset("1");
        (void)state;
        assert_int_equal(ncm_cpu_state_set(s, "p\"o&d", "c\t\xc3\xa9\xe2\x80\xa8", c, NULL), 0);
        ncm_autofree char *out = format_state(s);
        assert_true(strncmp(out,
                            "{\"policyName\":\"st\\u003ca\\u003etic\",\"defaultCpuSet\":\"\","
                            "\"entries\":{\"p\\\"o\\u0026d\":{\"c\\t\xc3\xa9\\u2028\":\"1\"}},"
                            "\"checksum\":",
                            strlen(out) - 11) == 0);
        /* The checksum covers the raw strings: reading it back verifies. */
        ncm_autoptr(ncm_cpu_checkpoint) back = parse_text(out, 0);
        assert_int_equal(back->match, NCM_CPU_CHECKSUM_LEGACY);
        assert_string_equal(back->pods[0].uid, "p\"o&d");
        ncm_autoptr(ncm_cpu_state) s2 = restore_ok(back, NULL);
        assert_true(ncm_cpu_state_equal(s, s2));
}

/* --------------------------------------------------------------------------------------- */
/* Corrupt, foreign and hostile input                                                       */
/* --------------------------------------------------------------------------------------- */

static void test_cpu_checkpoint_corrupt_entries_reported_with_kubelet_text(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        ncm_autoptr(ncm_cpu_checkpoint) c =
                        parse_file("checkpoints/crafted/mismatch-entries.json", 0, NULL);
        assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V2);
        assert_int_equal(c->match, NCM_CPU_CHECKSUM_MISMATCH);
        assert_int_equal(ncm_cpu_checkpoint_verify(c, &err), -NCM_E_CHECKSUM);
        assert_int_equal(ncm_error_exit_status(err.code), 1);
        assert_non_null(strstr(err.msg,
                               "checkpoint is corrupted: checksum 2764424633 in the file"));
        /* The kubelet falls back to V1, which cannot read nested entries. */
        assert_restore_fails(c, "static",
                             "json: cannot unmarshal object into Go struct field "
                             "CPUManagerCheckpointV1.entries of type string");
}

static void test_cpu_checkpoint_type_errors_in_go_words(void **state)
{
        static const struct {
                const char *text;
                const char *msg;
        } cases[] = {
                        {"{\"policyName\":5,\"defaultCpuSet\":\"0-3\",\"checksum\":0}",
                         "test: json: cannot unmarshal number into Go struct field "
                         "CPUManagerCheckpoint.policyName of type string"},
                        {"{\"policyName\":\"s\",\"defaultCpuSet\":[],\"checksum\":0}",
                         "test: json: cannot unmarshal array into Go struct field "
                         "CPUManagerCheckpoint.defaultCpuSet of type string"},
                        {"{\"policyName\":\"s\",\"checksum\":\"12\"}",
                         "test: json: cannot unmarshal string into Go struct field "
                         "CPUManagerCheckpoint.checksum of type checksum.Checksum"},
                        {"{\"policyName\":\"s\",\"checksum\":-1}",
                         "test: json: cannot unmarshal number -1 into Go struct field "
                         "CPUManagerCheckpoint.checksum of type checksum.Checksum"},
                        {"{\"policyName\":\"s\",\"checksum\":1e3}",
                         "test: json: cannot unmarshal number 1e3 into Go struct field "
                         "CPUManagerCheckpoint.checksum of type checksum.Checksum"},
                        {"{\"entries\":{\"p\":{\"c\":true}}}",
                         "test: json: cannot unmarshal bool into Go struct field "
                         "CPUManagerCheckpoint.entries of type string"},
                        {"{\"entries\":{\"p\":\"x\",\"q\":{}}}",
                         "test: json: cannot unmarshal object into Go struct field "
                         "CPUManagerCheckpointV1.entries of type string"},
                        {"{\"entries\":7}",
                         "test: json: cannot unmarshal number into Go struct field "
                         "CPUManagerCheckpoint.entries of type "
                         "map[string]map[string]string"},
                        {"[1,2]", "test: json: cannot unmarshal array into Go value of type "
                                  "state.CPUManagerCheckpoint"},
                        {"{\"policyName\":\"a\\u0000b\"}", "test: policyName: string holds a NUL "
                                                           "character"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                ncm_cpu_checkpoint *c = NULL;
                ncm_error err = NCM_ERROR_INIT;
                print_message("%s\n", cases[i].text);
                assert_int_equal(ncm_cpu_checkpoint_parse(cases[i].text, strlen(cases[i].text),
                                                          "test", &c, &err),
                                 -NCM_E_INVALID_STATE);
                assert_null(c);
                assert_string_equal(err.msg, cases[i].msg);
        }
}

static void test_cpu_checkpoint_go_decoding_details(void **state)
{
        (void)state;
        {
                /* JSON null: an untouched struct, checksum 0, hence accepted (as by Go). */
                /* (Newline-terminated: the base JSON reader needs a scalar document ended.) */
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_text("null\n", 0);
                assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V2);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_ZERO);
                assert_restore_fails(c, "static",
                                     "configured policy \"static\" differs from state "
                                     "checkpoint policy \"\"");
        }
        {
                /* Two members for one map field merge; a later pod replaces an earlier one. */
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_text(
                                "{\"entries\":{\"a\":{\"x\":\"1\"},\"b\":{\"y\":\"2\"}},"
                                "\"Entries\":{\"b\":{\"z\":\"3\"},\"0\":{}},\"policyName\":null,"
                                "\"checksum\":0}",
                                0);
                ncm_autofree char *r = render(c, false);
                assert_non_null(strstr(r, "map[0:map[] a:map[x:1] b:map[z:3]]"));
        }
        {
                /* An exact duplicate key: json-c keeps the last value, as Go's last write. */
                ncm_autoptr(ncm_cpu_checkpoint) c =
                                parse_text("{\"policyName\":\"a\",\"policyName\":\"none\","
                                           "\"defaultCpuSet\":\"\","
                                           "\"checksum\":1353318690}",
                                           0);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
        }
        {
                /*
                 * Invalid UTF-8 decodes to U+FFFD per byte, as Go's decoder does, so the
                 * checksum covers what the kubelet hashes and the writer round-trips; two keys
                 * that decode alike are one map key, the later value winning.
                 */
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_text(
                                "{\"policyName\":\"a\xc0\xb2\",\"entries\":{\"p\xed\xa0\x80\":"
                                "{\"c\":\"1\"},\"p\xed\xa0\x81\":{\"c\":\"2\"}},\"checksum\":0}",
                                0);
                assert_string_equal(c->policy_name, "a\xef\xbf\xbd\xef\xbf\xbd");
                assert_int_equal(c->npods, 1);
                assert_string_equal(c->pods[0].uid, "p\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
                assert_string_equal(c->pods[0].entries[0].cpus, "2");
                ncm_autoptr(ncm_cpu_state) s = restore_ok(c, NULL);
                ncm_autofree char *out = format_state(s);
                ncm_autoptr(ncm_cpu_checkpoint) back = parse_text(out, 0);
                assert_int_equal(back->match, NCM_CPU_CHECKSUM_LEGACY);
        }
        {
                /* A checksum beyond 32 bits never matches. */
                ncm_autoptr(ncm_cpu_checkpoint) c =
                                parse_text("{\"policyName\":\"none\",\"defaultCpuSet\":\"\","
                                           "\"checksum\":18446744073709551615}",
                                           0);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_MISMATCH);
                assert_true(c->checksum == UINT64_MAX);
        }
}

/*
 * A member that appears twice is decoded twice, as encoding/json does (json-c kept only the
 * last): a map field decodes into the map it already has, so the members merge (a pod's inner
 * map is replaced whole); a string or number field takes the last value; null makes a map nil
 * and leaves a string or number as it was. Every expectation was checked against go1.19.
 */
static void test_cpu_checkpoint_repeated_keys_decode_as_go_does(void **state)
{
        (void)state;
        {
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_text(
                                "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-3\","
                                "\"entries\":{\"a\":{\"x\":\"1\"},\"b\":{\"y\":\"2\"}},"
                                "\"entries\":{\"b\":{\"z\":\"3\"},\"c\":{}},\"checksum\":0}",
                                0);
                ncm_autofree char *r = render(c, false);
                assert_string_equal(r, "(*state.CPUManagerCheckpoint){PolicyName:(string)static "
                                       "DefaultCPUSet:(string)0-3 "
                                       "Entries:(map[string]map[string]string)map[a:map[x:1] "
                                       "b:map[z:3] c:map[]] Checksum:(checksum.Checksum)0}");
        }
        {
                /* The last string wins; a later null changes nothing; so for the checksum. */
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_text(
                                "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-1\","
                                "\"defaultCpuSet\":\"2-3\",\"DEFAULTCPUSET\":null,"
                                "\"POLICYNAME\":\"none\",\"checksum\":5,\"checksum\":null,"
                                "\"checksum\":0}",
                                0);
                assert_string_equal(c->default_cpus, "2-3");
                assert_string_equal(c->policy_name, "none");
                assert_int_equal(c->checksum, 0);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_ZERO);
        }
        {
                /* null after a map makes it nil; a map after null starts a new one. */
                ncm_autoptr(ncm_cpu_checkpoint) n = parse_text("{\"entries\":{\"a\":{\"x\":\"1\"}},"
                                                               "\"entries\":null,\"checksum\":0}",
                                                               0);
                assert_true(n->entries_nil);
                assert_int_equal(n->npods, 0);
                ncm_autoptr(ncm_cpu_checkpoint) m =
                                parse_text("{\"entries\":null,\"entries\":{\"a\":{\"x\":\"1\"}},"
                                           "\"checksum\":0}",
                                           0);
                assert_false(m->entries_nil);
                assert_int_equal(m->npods, 1);
        }
        {
                /* The kubelet's V2 file of Appendix A with its two pods in two "entries"
                 * members: Go merges them, so the stored checksum verifies. */
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_text(
                                "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-1,6-11\","
                                "\"entries\":{\"4aec46af-22b7-4e26-babb-d15383ac9151\":"
                                "{\"mysqld\":\"2-3\"}},"
                                "\"entries\":{\"60008d73-6f6f-4467-96c5-cd0a1eeadf23\":"
                                "{\"mysqld2\":\"4-5\"}},\"checksum\":2764424633}",
                                0);
                assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V2);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
                assert_int_equal(c->npods, 2);
                assert_null(c->kubelet_error);
        }
        {
                /* The same for a V1 file (kubelet's v1-migration.json, entries split). */
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_text(
                                "{\"policyName\":\"none\",\"defaultCPUSet\":\"1-3\","
                                "\"entries\":{\"containerID1\":\"4-6\"},"
                                "\"entries\":{\"containerID2\":\"1-3\"},\"checksum\":3680390589}",
                                0);
                assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V1);
                assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
                assert_int_equal(c->nv1, 2);
        }
        {
                /* A type error in an earlier member counts although a later one is fine. */
                ncm_cpu_checkpoint *c = NULL;
                ncm_error err = NCM_ERROR_INIT;
                const char *t = "{\"policyName\":\"static\",\"entries\":{\"p\":{\"c\":1}},"
                                "\"entries\":{\"p\":{\"c\":\"1\"}},\"checksum\":0}";
                assert_int_equal(ncm_cpu_checkpoint_parse(t, strlen(t), "test", &c, &err),
                                 -NCM_E_INVALID_STATE);
                assert_null(c);
                assert_string_equal(err.msg, "test: json: cannot unmarshal number into Go struct "
                                             "field CPUManagerCheckpoint.entries of type string");
        }
}

/* Where the json-c reader differed from Go, nodecm now decodes as the kubelet does. */
static void test_cpu_checkpoint_reads_what_go_reads(void **state)
{
        (void)state;
        {
                /* Invalid UTF-8 in a string is content, not a syntax error. */
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_text("{\"a\":\"\xc3\"}", 0);
                assert_int_equal(c->format, NCM_CPU_CHECKPOINT_V2);
                /* A top-level null needs no newline. */
                ncm_autoptr(ncm_cpu_checkpoint) n = parse_text("null", 0);
                assert_int_equal(n->match, NCM_CPU_CHECKSUM_ZERO);
                /* A key holding NUL is not "policyName": an unknown field. */
                ncm_autoptr(ncm_cpu_checkpoint) k =
                                parse_text("{\"policyName\\u0000\":\"x\",\"checksum\":0}", 0);
                assert_string_equal(k->policy_name, "");
        }
        {
                /* strconv.ParseUint refuses "-0" and 2^64. */
                static const char *const texts[] = {"{\"checksum\":-0}",
                                                    "{\"checksum\":18446744073709551616}"};
                static const char *const msgs[] = {
                                "test: json: cannot unmarshal number -0 into Go struct field "
                                "CPUManagerCheckpoint.checksum of type checksum.Checksum",
                                "test: json: cannot unmarshal number 18446744073709551616 into Go "
                                "struct field CPUManagerCheckpoint.checksum of type "
                                "checksum.Checksum"};
                for (size_t i = 0; i < NCM_ELEMENTSOF(texts); i++) {
                        ncm_cpu_checkpoint *c = NULL;
                        ncm_error err = NCM_ERROR_INIT;
                        assert_int_equal(ncm_cpu_checkpoint_parse(texts[i], strlen(texts[i]),
                                                                  "test", &c, &err),
                                         -NCM_E_INVALID_STATE);
                        assert_string_equal(err.msg, msgs[i]);
                }
        }
        {
                /* Syntax errors: Go's text, the position in front; raw controls are refused. */
                ncm_cpu_checkpoint *c = NULL;
                ncm_error err = NCM_ERROR_INIT;
                assert_int_equal(ncm_cpu_checkpoint_parse("{\"policyName\":\"a\tb\"}", 20, "test",
                                                          &c, &err),
                                 -EINVAL);
                assert_string_equal(err.msg, "test:1:17: invalid JSON: invalid character '\\t' "
                                             "in string literal");
        }
        {
                /* The kubelet's wrapper carries Go's SyntaxError text, as the kubelet prints it. */
                char *dir = tu_mkdtemp();
                static const char bad[] = "{\"policyName\" \"x\"}";
                char path[4096], expect[8192];
                ncm_cpu_state *s = NULL;
                ncm_error err = NCM_ERROR_INIT;
                snprintf(path, sizeof(path), "%s/cpu_manager_state", dir);
                assert_int_equal(ncm_fs_write_atomic(AT_FDCWD, path, bad, sizeof(bad) - 1, 0600,
                                                     NULL),
                                 0);
                assert_int_equal(ncm_cpu_checkpoint_load(AT_FDCWD, path, "none", NULL, 0, &s, &err),
                                 -NCM_E_INVALID_STATE);
                snprintf(expect, sizeof(expect),
                         "could not restore state from checkpoint: invalid character '\"' after "
                         "object key, please drain this node and delete the CPU manager "
                         "checkpoint file \"%s\" before restarting Kubelet",
                         path);
                assert_string_equal(err.msg, expect);
                tu_rm_rf(dir);
                free(dir);
        }
}

static void test_cpu_checkpoint_probe_detects_the_kind(void **state)
{
        static const struct {
                const char *rel;
                int expect;
        } cases[] = {
                        {"checkpoints/real/06-static-v1.34-two-pods.json", 1},
                        {"checkpoints/kubelet/v1-migration.json", 1},
                        {"checkpoints/kubelet/v3-legacy.json", 1},
                        {"checkpoints/crafted/case-insensitive-keys.json", 1},
                        {"checkpoints/crafted/foreign-device.json", 0},
                        {"checkpoints/crafted/foreign-other.json", 0},
                        {"checkpoints/crafted/not-json.txt", -EINVAL},
                        {"checkpoints/crafted/truncated.json", -EINVAL},
                        {"checkpoints/kubelet/invalid-json.json", -EINVAL},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                size_t len;
                char *text = tu_read_data(cases[i].rel, &len);
                ncm_error err = NCM_ERROR_INIT;
                print_message("%s\n", cases[i].rel);
                assert_int_equal(ncm_cpu_checkpoint_probe(text, len, cases[i].rel, &err),
                                 cases[i].expect);
                if (cases[i].expect < 0)
                        assert_non_null(strstr(err.msg, cases[i].rel));
                free(text);
        }
        assert_int_equal(ncm_cpu_checkpoint_probe("[]", 2, "x", NULL), 0);
        assert_int_equal(ncm_cpu_checkpoint_probe("\"policyName\"", 12, "x", NULL), 0);
        assert_int_equal(ncm_cpu_checkpoint_probe("", 0, "x", NULL), -EINVAL);
}

static void test_cpu_checkpoint_truncated_and_garbage(void **state)
{
        static const char *const texts[] = {
                        "",       "{",     "{\"policyName\"",  "{\"policyName\":\"static\",}",
                        "\xff",   "{} {}", "{\"a\":\"\x01\"}", "{\"a\":1}\x00",
                        "nul\0x",
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(texts); i++) {
                ncm_cpu_checkpoint *c = NULL;
                size_t len = i == 7 ? 9 : i == 8 ? 6 : strlen(texts[i]);
                assert_int_equal(ncm_cpu_checkpoint_parse(texts[i], len, "x", &c, NULL), -EINVAL);
                assert_null(c);
        }
        /* Deep nesting stops at the parser's depth limit. */
        {
                char deep[4096];
                size_t n = 0;
                n += (size_t)snprintf(deep, sizeof(deep), "{\"x\":");
                for (int i = 0; i < 1000; i++)
                        deep[n++] = '[';
                deep[n] = '\0';
                ncm_cpu_checkpoint *c = NULL;
                assert_int_equal(ncm_cpu_checkpoint_parse(deep, n, "x", &c, NULL), -EINVAL);
        }
}

/* A node with 20000 pods of 3 containers: parsed, verified and rewritten byte for byte. */
static void test_cpu_checkpoint_huge_file_rewrites_identically(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = ncm_cpu_state_new("static");
        ncm_autoptr(ncm_cpuset) d = tu_cpuset("0-1");
        char pod[64], ctr[16], list[32];
        (void)state;
        assert_int_equal(ncm_cpu_state_set_default(s, d, NULL), 0);
        for (int i = 0; i < 20000; i++) {
                snprintf(pod, sizeof(pod), "%08x-0000-4000-8000-%012d", (unsigned)i * 2654435761u,
                         i);
                for (int j = 0; j < 3; j++) {
                        snprintf(ctr, sizeof(ctr), "c%d", j);
                        snprintf(list, sizeof(list), "%d-%d", 2 + (i % 1000) * 8 + j * 2,
                                 3 + (i % 1000) * 8 + j * 2);
                        ncm_autoptr(ncm_cpuset) c = tu_cpuset(list);
                        assert_int_equal(ncm_cpu_state_set(s, pod, ctr, c, NULL), 0);
                }
        }
        ncm_autofree char *out = format_state(s);
        ncm_autoptr(ncm_cpu_checkpoint) c = parse_text(out, 0);
        assert_int_equal(c->npods, 20000);
        assert_int_equal(c->match, NCM_CPU_CHECKSUM_LEGACY);
        ncm_autoptr(ncm_cpu_state) s2 = restore_ok(c, "static");
        assert_true(ncm_cpu_state_equal(s, s2));
        ncm_autofree char *out2 = format_state(s2);
        assert_string_equal(out, out2);
        /* and 1.37's V4, twice the size: its V2 part, then all of it again as data */
        ncm_autofree char *v4 = format_as(s, K137);
        ncm_autoptr(ncm_cpu_checkpoint) c4 = parse_text(v4, 0);
        assert_int_equal(c4->format, NCM_CPU_CHECKPOINT_V4);
        assert_int_equal(c4->match, NCM_CPU_CHECKSUM_DATA);
        assert_int_equal(c4->npods, 20000);
        assert_int_equal(c4->v2_part->npods, 20000);
        ncm_autoptr(ncm_cpu_state) s4 = restore_ok(c4, "static");
        ncm_autofree char *v4b = format_as(s4, K137);
        assert_string_equal(v4, v4b);
}

/* A V4 file decoded as encoding/json decodes it: the outer struct, then data on its own. */
static void test_cpu_checkpoint_v4_go_decoding(void **state)
{
        static const char v2[] = "\"policyName\":\"none\",\"defaultCpuSet\":\"1-3\",\"checksum\":0";
        static const struct {
                const char *text;
                const char *k137; /* 1.37's error; NULL: loaded */
                const char *policy;
        } cases[] = {
                        /* the last string data wins, null leaves it, a key folds to data */
                        {"{\"data\":\"x\",\"DATA\":\"{\\\"policyName\\\":\\\"a\\\"}\",\"data\":"
                         "null,"
                         "\"dataChecksum\":1232232149}",
                         NULL, "a"},
                        /* a type error beside data: data and dataChecksum are still decoded */
                        {"{\"policyName\":5,\"data\":\"{}\",\"dataChecksum\":1}",
                         "could not load v4 checkpoint: failed to deserialize cpu manager "
                         "checkpoint: json: cannot unmarshal number into Go struct field "
                         "CPUManagerCheckpoint.policyName of type string",
                         NULL},
                        {"{\"data\":5,\"dataChecksum\":7}",
                         "could not load v4 checkpoint: failed to deserialize cpu manager "
                         "checkpoint: json: cannot unmarshal number into Go struct field "
                         "CPUManagerCheckpoint.data of type string",
                         NULL},
                        {"{\"data\":\"{}\",\"dataChecksum\":\"7\"}",
                         "could not load v4 checkpoint: failed to deserialize cpu manager "
                         "checkpoint: json: cannot unmarshal string into Go struct field "
                         "CPUManagerCheckpoint.dataChecksum of type checksum.Checksum",
                         NULL},
                        {"{\"data\":\"{}x\",\"dataChecksum\":1}",
                         "could not load v4 checkpoint: failed to deserialize cpu manager "
                         "checkpoint data: invalid character 'x' after top-level value",
                         NULL},
                        {"{\"data\":\"[]\",\"dataChecksum\":1}",
                         "could not load v4 checkpoint: failed to deserialize cpu manager "
                         "checkpoint data: json: cannot unmarshal array into Go value of type "
                         "state.CPUManagerCheckpointData",
                         NULL},
                        {"{\"data\":\"{\\\"baselines\\\":5}\",\"dataChecksum\":1}",
                         "could not load v4 checkpoint: failed to deserialize cpu manager "
                         "checkpoint data: json: cannot unmarshal number into Go struct field "
                         "CPUManagerCheckpointData.baselines of type "
                         "map[string]map[string]state.ContainerCPUs",
                         NULL},
                        {"{\"data\":\"{\\\"baselines\\\":{\\\"p\\\":{\\\"c\\\":{\\\"baseline\\\""
                         ":5}}}}\",\"dataChecksum\":1}",
                         "could not load v4 checkpoint: failed to deserialize cpu manager "
                         "checkpoint data: json: cannot unmarshal number into Go struct field "
                         "ContainerCPUs.baselines.baseline of type string",
                         NULL},
                        /* data "null": no error, nothing decoded */
                        {"{\"data\":\"null\",\"dataChecksum\":908779616}", NULL, ""},
                        /* neither data nor a dataChecksum: 1.37 falls back without a word */
                        {"{\"data\":\"\",\"dataChecksum\":0,\"policyName\":\"v2\",\"checksum\":0}",
                         NULL, "v2"},
        };
        (void)state;
        (void)v2;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                print_message("%s\n", cases[i].text);
                if (cases[i].k137) {
                        /* what the kubelet says, whether or not another format decodes */
                        char *dir = tu_mkdtemp(), path[4096], want[8192];
                        ncm_cpu_state *st = NULL;
                        ncm_error e = NCM_ERROR_INIT;
                        snprintf(path, sizeof(path), "%s/cpu_manager_state", dir);
                        assert_int_equal(ncm_fs_write_atomic(AT_FDCWD, path, cases[i].text,
                                                             strlen(cases[i].text), 0600, NULL),
                                         0);
                        assert_true(ncm_cpu_checkpoint_load_version(AT_FDCWD, path, NULL, NULL, 0,
                                                                    K137, &st, &e) < 0);
                        snprintf(want, sizeof(want),
                                 "could not restore state from checkpoint: %s, please drain this "
                                 "node and delete the CPU manager checkpoint file \"%s\" before "
                                 "restarting Kubelet",
                                 cases[i].k137, path);
                        assert_string_equal(e.msg, want);
                        tu_rm_rf(dir);
                        free(dir);
                        continue;
                }
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_text_as(cases[i].text, K137, 0);
                {
                        assert_null(c->kubelet_error);
                        if (c->format == NCM_CPU_CHECKPOINT_V4)
                                assert_int_equal(c->read_as, NCM_CPU_CHECKPOINT_V4);
                        assert_string_equal(c->policy_name, cases[i].policy);
                }
        }
        /* the rendering dataChecksum covers, and the words for a mismatch */
        ncm_autoptr(ncm_cpu_checkpoint) c =
                        parse_file("checkpoints/v4/data-invalid-checksum.json", 0, NULL);
        ncm_autofree char *r = render(c, false);
        assert_string_equal(r, "(string){\"policyName\":\"none\",\"defaultCPUSet\":\"4-6\"}");
        assert_int_equal(ncm_fnv1a32(r, strlen(r)), 657950972u);
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_cpu_checkpoint_verify(c, &err), -NCM_E_CHECKSUM);
        assert_string_equal(err.msg, "checkpoint is corrupted: dataChecksum 1234 in the file, but "
                                     "its data hashes to 657950972");
        /* --fix-checksum takes the content; a data that does not decode has none to take */
        assert_int_equal(ncm_cpu_checkpoint_accept(c, &err), 0);
        assert_int_equal(c->read_as, NCM_CPU_CHECKPOINT_V4);
        assert_int_equal(c->match, NCM_CPU_CHECKSUM_DATA);
        ncm_autoptr(ncm_cpu_state) s = restore_ok(c, "none");
        tu_assert_cpuset(ncm_cpu_state_default(s), "4-6");
        ncm_autoptr(ncm_cpu_checkpoint) bad =
                        parse_file("checkpoints/v4/dual-invalid-data-json.json", 0, NULL);
        assert_int_equal(ncm_cpu_checkpoint_accept(bad, &err), -NCM_E_INVALID_STATE);
        assert_int_equal(ncm_cpu_checkpoint_verify(bad, &err), -NCM_E_CHECKSUM);
        assert_string_equal(err.msg, "checkpoint is corrupted: its data does not decode: "
                                     "unexpected end of JSON input");
        /* a file with only dataChecksum is a cpu_manager_state; a device checkpoint is not */
        static const char only_sum[] = "{\"dataChecksum\":1}";
        static const char device[] = "{\"Data\":{},\"Checksum\":1}";
        assert_int_equal(ncm_cpu_checkpoint_probe(only_sum, strlen(only_sum), "t", NULL), 1);
        assert_int_equal(ncm_cpu_checkpoint_probe(device, strlen(device), "t", NULL), 0);
}

/* Go escapes <, > and & in data, and the outer string escapes data's quotes and backslashes. */
static void test_cpu_checkpoint_v4_escapes_like_go(void **state)
{
        ncm_autoptr(ncm_cpu_state) s = ncm_cpu_state_new("st<a>tic");
        ncm_autoptr(ncm_cpuset) c = tu_cpuset("1");
        (void)state;
        assert_int_equal(ncm_cpu_state_set(s, "p\"o&d", "c\\\xe2\x80\xa8", c, NULL), 0);
        assert_int_equal(ncm_cpu_state_set_promised(s, "p\"o&d", "c\\\xe2\x80\xa8", c, NULL), 0);
        ncm_autofree char *out = format_as(s, K137);
        assert_non_null(strstr(out,
                               "\"data\":\"{\\\"policyName\\\":\\\"st\\\\u003ca\\\\u003etic\\\","));
        assert_non_null(strstr(out, "\\\"p\\\\\\\"o\\\\u0026d\\\":{\\\"c\\\\\\\\\\\\u2028\\\""));
        ncm_autoptr(ncm_cpu_checkpoint) back = parse_text(out, 0);
        assert_int_equal(back->match, NCM_CPU_CHECKSUM_DATA);
        assert_string_equal(back->policy_name, "st<a>tic");
        assert_string_equal(back->pods[0].uid, "p\"o&d");
        assert_string_equal(back->baselines[0].entries[0].name, "c\\\xe2\x80\xa8");
        ncm_autoptr(ncm_cpu_state) s2 = restore_ok(back, NULL);
        assert_true(ncm_cpu_state_equal(s, s2));
}

static void test_cpu_checkpoint_oversized_file_is_refused(void **state)
{
        char *dir = tu_mkdtemp();
        char path[4096];
        ncm_cpu_state *s = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int fd;
        (void)state;
        snprintf(path, sizeof(path), "%s/cpu_manager_state", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(ftruncate(fd, (off_t)NCM_CPU_CHECKPOINT_MAX_SIZE + 1), 0);
        close(fd);
        assert_int_equal(ncm_cpu_checkpoint_load(AT_FDCWD, path, "static", NULL, 0, &s, &err),
                         -EFBIG);
        assert_null(s);
        assert_non_null(strstr(err.msg, path));
        tu_rm_rf(dir);
        free(dir);
}

static void test_cpu_checkpoint_hostile_cpusets_fail_restore_not_parse(void **state)
{
        static const struct {
                const char *dflt;
                const char *msg;
        } cases[] = {
                        {"0-99999999999999999999",
                         "could not parse default cpu set \"0-99999999999999999999\": "
                         "strconv.Atoi: "
                         "parsing \"99999999999999999999\": value out of range"},
                        {"5-3",
                         "could not parse default cpu set \"5-3\": invalid range \"5-3\" (5 > 3)"},
                        {"1,,2",
                         "could not parse default cpu set \"1,,2\": strconv.Atoi: parsing \"\": "
                         "invalid syntax"},
                        {"\\u001b[31m",
                         "could not parse default cpu set \"\\x1b[31m\": strconv.Atoi: "
                         "parsing \"\\x1b[31m\": invalid syntax"},
        };
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++) {
                char text[512];
                snprintf(text, sizeof(text),
                         "{\"policyName\":\"static\",\"defaultCpuSet\":\"%s\",\"checksum\":0}",
                         cases[i].dflt);
                ncm_autoptr(ncm_cpu_checkpoint) c = parse_text(text, 0);
                print_message("%s\n", text);
                assert_restore_fails(c, "static", cases[i].msg);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cpu_checkpoint_rendering_self_test),
                        cmocka_unit_test(test_cpu_checkpoint_renders_the_spec_examples),
                        cmocka_unit_test(
                                        test_cpu_checkpoint_real_files_verify_and_rewrite_identically),
                        cmocka_unit_test(test_cpu_checkpoint_real_v1_file_and_unverifiable_file),
                        cmocka_unit_test(test_cpu_checkpoint_restore_table),
                        cmocka_unit_test(test_cpu_checkpoint_writer_per_release),
                        cmocka_unit_test(
                                        test_cpu_checkpoint_missing_file_is_created_as_the_kubelet_does),
                        cmocka_unit_test(test_cpu_checkpoint_refused_file_is_never_rewritten),
                        cmocka_unit_test(test_cpu_checkpoint_store_and_restore_round_trip),
                        cmocka_unit_test(
                                        test_cpu_checkpoint_attached_state_rewrites_on_every_mutation),
                        cmocka_unit_test(test_cpu_checkpoint_write_failure_is_reported),
                        cmocka_unit_test(test_cpu_checkpoint_v1_migration),
                        cmocka_unit_test(
                                        test_cpu_checkpoint_zero_checksum_is_accepted_for_v1_and_v2),
                        cmocka_unit_test(test_cpu_checkpoint_v2_native_rendering),
                        cmocka_unit_test(test_cpu_checkpoint_v3_files),
                        cmocka_unit_test(test_cpu_checkpoint_case_insensitive_field_names),
                        cmocka_unit_test(test_cpu_checkpoint_checksum_covers_the_text_as_written),
                        cmocka_unit_test(test_cpu_checkpoint_null_maps),
                        cmocka_unit_test(test_cpu_checkpoint_empty_pod_key_round_trips),
                        cmocka_unit_test(test_cpu_checkpoint_writer_escapes_like_go),
                        cmocka_unit_test(
                                        test_cpu_checkpoint_corrupt_entries_reported_with_kubelet_text),
                        cmocka_unit_test(test_cpu_checkpoint_type_errors_in_go_words),
                        cmocka_unit_test(test_cpu_checkpoint_go_decoding_details),
                        cmocka_unit_test(test_cpu_checkpoint_repeated_keys_decode_as_go_does),
                        cmocka_unit_test(test_cpu_checkpoint_reads_what_go_reads),
                        cmocka_unit_test(test_cpu_checkpoint_probe_detects_the_kind),
                        cmocka_unit_test(test_cpu_checkpoint_truncated_and_garbage),
                        cmocka_unit_test(test_cpu_checkpoint_huge_file_rewrites_identically),
                        cmocka_unit_test(test_cpu_checkpoint_v4_go_decoding),
                        cmocka_unit_test(test_cpu_checkpoint_v4_escapes_like_go),
                        cmocka_unit_test(test_cpu_checkpoint_oversized_file_is_refused),
                        cmocka_unit_test(
                                        test_cpu_checkpoint_hostile_cpusets_fail_restore_not_parse),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
