/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubelet_internal_checkpoint: the worked examples of the spec (§A.10) and two files written
 * by real kubelets verify and rewrite byte for byte; Go's decoding rules (null vs empty,
 * case-insensitive keys, merged maps, NUMA keys); ContainerAllocateResponse bytes; the
 * kubelet's TestCheckpoint data through a manager; corrupt and hostile files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nodecm/devicemanager.h>
#include <nodecm/fs.h>
#include "deviceplugin-v1beta1.pb-c.h"
#include "testutil.h"

static ncm_devmgr_checkpoint *parse_ok(const char *text)
{
        ncm_devmgr_checkpoint *cp = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_devmgr_checkpoint_parse(text, strlen(text), "t", &cp, &err);
        if (r < 0)
                fail_msg("parse failed: %s\n%s", err.msg, text);
        return cp;
}

static int parse_err(const char *text, size_t len, ncm_error *err)
{
        ncm_devmgr_checkpoint *cp = NULL;
        int r = ncm_devmgr_checkpoint_parse(text, len, "t", &cp, err);
        if (r == 0)
                ncm_devmgr_checkpoint_free(cp);
        else
                assert_null(cp);
        return r;
}

static char *format(const ncm_devmgr_checkpoint *cp)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_devmgr_checkpoint_format(cp, &b);
        assert_false(ncm_buf_failed(&b));
        return ncm_buf_steal(&b);
}

static char *spew(const ncm_devmgr_checkpoint *cp)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_devmgr_checkpoint_spew(cp, &b);
        return ncm_buf_steal(&b);
}

/* ---- the worked examples ---- */

static const struct {
        const char *file;
        uint64_t checksum;
        const char *spew; /* NULL: not spelled out in the spec */
} examples[] = {
                {"devices/ckpt-empty.json", 3467439661u,
                 "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)<nil> "
                 "RegisteredDevices:(map[string][]string)map[]}"},
                {"devices/ckpt-one-gpu.json", 586261819u,
                 "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)[{"
                 "PodUID:("
                 "string)2a5f6c1e-0d6b-4c1a-9a55-7d0b3e9c1f00 ContainerName:(string)cuda "
                 "ResourceName:(string)nvidia.com/gpu "
                 "DeviceIDs:(checkpoint.DevicesPerNUMA)map[0:[GPU-"
                 "aaaa]] AllocResp:([]uint8)[10 34 10 22 78 86 73 68 73 65 95 86 73 83 73 66 76 69 "
                 "95 "
                 "68 69 86 73 67 69 83 18 8 71 80 85 45 97 97 97 97]}] "
                 "RegisteredDevices:(map[string][]string)map[nvidia.com/gpu:[GPU-aaaa GPU-bbbb]]}"},
                {"devices/ckpt-registered-empty.json", 4190085820u,
                 "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)<nil> "
                 "RegisteredDevices:(map[string][]string)map[example.com/dev:[]]}"},
                {"devices/ckpt-mixed-numa.json", 533880177u,
                 "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)[{"
                 "PodUID:("
                 "string)u1 ContainerName:(string)c1 ResourceName:(string)r/x "
                 "DeviceIDs:(checkpoint.DevicesPerNUMA)map[-1:[d9] 0:[d1 d2] 1:[d3]] "
                 "AllocResp:([]uint8)[]}] RegisteredDevices:(map[string][]string)map[a/y:<nil> "
                 "r/x:[d1]]}"},
                /* Written by real kubelets (NVIDIA plugin on a GPU node, and on a Jetson). */
                {"devices/ckpt-kubelet-registered.json", 3952659280u, NULL},
                {"devices/ckpt-kubelet-tegra.json", 3660592824u, NULL},
};

static void test_device_checkpoint_worked_examples(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(examples); i++) {
                size_t len = 0;
                char *text = tu_read_data(examples[i].file, &len);
                char *path = tu_data_path(examples[i].file);
                ncm_devmgr_checkpoint *cp = NULL;
                ncm_error err = NCM_ERROR_INIT;
                char *out, *sp;

                assert_int_equal(ncm_devmgr_checkpoint_load(AT_FDCWD, path, &cp, &err), 0);
                assert_int_equal(cp->checksum, examples[i].checksum);
                assert_int_equal(ncm_devmgr_checkpoint_checksum(cp), examples[i].checksum);
                assert_int_equal(ncm_devmgr_checkpoint_verify(cp, &err), 0);
                sp = spew(cp);
                if (examples[i].spew)
                        assert_string_equal(sp, examples[i].spew);
                out = format(cp);
                assert_int_equal(strlen(out), len);
                assert_string_equal(out, text);
                free(sp);
                free(out);
                free(path);
                free(text);
                ncm_devmgr_checkpoint_free(cp);
        }
}

static void test_device_checkpoint_decoded_values(void **state)
{
        ncm_devmgr_checkpoint *cp;
        (void)state;

        {
                char *text = tu_read_data("devices/ckpt-mixed-numa.json", NULL);
                cp = parse_ok(text);
                free(text);
        }
        assert_false(cp->entries_null);
        assert_int_equal(cp->n_entries, 1);
        assert_string_equal(cp->entries[0].pod_uid, "u1");
        assert_int_equal(cp->entries[0].n_device_ids, 3);
        assert_int_equal(cp->entries[0].device_ids[0].node, -1);
        assert_string_equal(cp->entries[0].device_ids[0].ids[0], "d9");
        assert_int_equal(cp->entries[0].device_ids[1].node, 0);
        assert_int_equal(cp->entries[0].device_ids[1].n_ids, 2);
        assert_false(cp->entries[0].alloc_resp_null);
        assert_int_equal(cp->entries[0].alloc_resp_len, 0);
        assert_int_equal(cp->n_registered, 2);
        assert_string_equal(cp->registered[0].resource, "a/y");
        assert_true(cp->registered[0].ids_null);
        assert_false(cp->registered[1].ids_null);
        ncm_devmgr_checkpoint_free(cp);
}

/* ---- Go's decoding rules decide what is hashed ---- */

static uint64_t sum_of(const char *text)
{
        ncm_devmgr_checkpoint *cp = parse_ok(text);
        uint64_t s = ncm_devmgr_checkpoint_checksum(cp);
        ncm_devmgr_checkpoint_free(cp);
        return s;
}

static void test_device_checkpoint_null_versus_empty(void **state)
{
        ncm_devmgr_checkpoint *cp;
        ncm_error err = NCM_ERROR_INIT;
        char *sp;
        (void)state;

        /* [] instead of null changes the rendering, hence the checksum. */
        cp = parse_ok("{\"Data\":{\"PodDeviceEntries\":[],\"RegisteredDevices\":{}},"
                      "\"Checksum\":3467439661}");
        assert_int_equal(ncm_devmgr_checkpoint_verify(cp, &err), -NCM_E_CHECKSUM);
        assert_int_equal(err.code, NCM_E_CHECKSUM);
        assert_true(strncmp(err.msg, "checkpoint is corrupted", 23) == 0);
        sp = spew(cp);
        assert_non_null(strstr(sp, "PodDeviceEntries:([]checkpoint.PodDevicesEntry)[] "));
        free(sp);
        ncm_devmgr_checkpoint_free(cp);

        /* Absent fields keep the kubelet's starting values: [] and map[], not nil. */
        cp = parse_ok("{\"Checksum\":1}");
        sp = spew(cp);
        assert_string_equal(sp, "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint."
                                "PodDevicesEntry)[] RegisteredDevices:(map[string][]string)"
                                "map[]}");
        free(sp);
        ncm_devmgr_checkpoint_free(cp);

        /* null for the whole document or for Data leaves everything as it started. */
        assert_int_equal(sum_of("null"), sum_of("{}"));
        assert_int_equal(sum_of("{\"Data\":null}"), sum_of("{}"));
        /* RegisteredDevices null, a null id list, a null AllocResp. */
        cp = parse_ok("{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"p\",\"DeviceIDs\":{\"0\":"
                      "null},\"AllocResp\":null}],\"RegisteredDevices\":null}}");
        sp = spew(cp);
        assert_string_equal(sp, "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint."
                                "PodDevicesEntry)[{PodUID:(string)p ContainerName:(string) "
                                "ResourceName:(string) DeviceIDs:(checkpoint.DevicesPerNUMA)"
                                "map[0:<nil>] AllocResp:([]uint8)<nil>}] "
                                "RegisteredDevices:(map[string][]string)<nil>}");
        free(sp);
        sp = format(cp);
        assert_non_null(strstr(sp, "\"DeviceIDs\":{\"0\":null},\"AllocResp\":null}],"
                                   "\"RegisteredDevices\":null}"));
        free(sp);
        ncm_devmgr_checkpoint_free(cp);
}

static void test_device_checkpoint_go_decoding(void **state)
{
        const char *canonical = "{\"Data\":{\"PodDeviceEntries\":null,\"RegisteredDevices\":{}},"
                                "\"Checksum\":3467439661}";
        ncm_devmgr_checkpoint *cp;
        char *out, *sp;
        (void)state;

        /* Keys match case-insensitively (K and ſ fold to k and s); unknown keys are ignored;
         * whitespace and escapes are decoded first. */
        cp = parse_ok(" {\"dATA\" : {\"poddeviceentries\":null, \"Extra\":[1,{\"x\":[]}],"
                      "\"REGISTEREDDEVICE\\u017f\":{}},\"CHEC\\u212ASUM\":3467439661, "
                      "\"other\":true}\n");
        assert_int_equal(ncm_devmgr_checkpoint_verify(cp, NULL), 0);
        out = format(cp);
        assert_string_equal(out, canonical);
        free(out);
        ncm_devmgr_checkpoint_free(cp);

        /* A repeated map field merges; a repeated slice field is replaced; a null later
         * changes nothing for a string. */
        cp = parse_ok("{\"Data\":{\"RegisteredDevices\":{\"b/r\":[\"1\"],\"a/r\":[\"x\"]},"
                      "\"PodDeviceEntries\":[{\"PodUID\":\"old\"}],"
                      "\"RegisteredDevices\":{\"a/r\":[\"y\"],\"c/r\":[]},"
                      "\"PodDeviceEntries\":[{\"PodUID\":\"new\",\"PodUID\":null,"
                      "\"DeviceIDs\":{\"1\":[\"a\"]},\"DeviceIDs\":{\"+01\":[\"b\"],\"2\":[]}}]}}");
        sp = spew(cp);
        assert_string_equal(sp, "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint."
                                "PodDevicesEntry)[{PodUID:(string)new ContainerName:(string) "
                                "ResourceName:(string) DeviceIDs:(checkpoint.DevicesPerNUMA)"
                                "map[1:[b] 2:[]] AllocResp:([]uint8)<nil>}] "
                                "RegisteredDevices:(map[string][]string)map[a/r:[y] b/r:[1] "
                                "c/r:[]]}");
        free(sp);
        ncm_devmgr_checkpoint_free(cp);

        /* NUMA keys: numeric order for the checksum, text order in JSON ("10" < "2"). */
        cp = parse_ok("{\"Data\":{\"PodDeviceEntries\":[{\"DeviceIDs\":{\"2\":[\"b\"],\"10\":"
                      "[\"c\"],\"-3\":[\"a\"]}}]}}");
        sp = spew(cp);
        assert_non_null(strstr(sp, "map[-3:[a] 2:[b] 10:[c]]"));
        free(sp);
        out = format(cp);
        assert_non_null(strstr(out, "{\"-3\":[\"a\"],\"10\":[\"c\"],\"2\":[\"b\"]}"));
        free(out);
        ncm_devmgr_checkpoint_free(cp);

        /* Strings: escapes, invalid UTF-8 and lone surrogates become U+FFFD, HTML escaping
         * on output; AllocResp may also be an array of byte values; null ids are "". */
        cp = parse_ok("{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"a\\u00e9\\ud83d\\ude00"
                      "\\ud800x\xff<\",\"AllocResp\":[10,0,255,null],\"DeviceIDs\":{\"0\":"
                      "[null,\"\\/\"]}}]}}");
        assert_string_equal(cp->entries[0].pod_uid,
                            "a\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx\xef\xbf\xbd<");
        assert_int_equal(cp->entries[0].alloc_resp_len, 4);
        assert_memory_equal(cp->entries[0].alloc_resp, "\x0a\x00\xff\x00", 4);
        assert_string_equal(cp->entries[0].device_ids[0].ids[0], "");
        assert_string_equal(cp->entries[0].device_ids[0].ids[1], "/");
        out = format(cp);
        assert_non_null(strstr(out, "\"PodUID\":\"a\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx"
                                    "\xef\xbf\xbd\\u003c\""));
        assert_non_null(strstr(out, "\"AllocResp\":\"CgD/AA==\""));
        free(out);
        ncm_devmgr_checkpoint_free(cp);

        /* Base64 with line breaks decodes as Go decodes it. */
        cp = parse_ok("{\"Data\":{\"PodDeviceEntries\":[{\"AllocResp\":\"Cg\\r\\nA=\"}]}}");
        assert_int_equal(cp->entries[0].alloc_resp_len, 2);
        ncm_devmgr_checkpoint_free(cp);
}

/*
 * A repeated slice field is decoded over the slice it already holds, as Go's decoder does:
 * element i of the new array updates element i field by field (its map merges), a shorter
 * array shortens the slice, and the elements past its end come back, as they were, when a later
 * array is longer again; null and [] leave nothing to come back. Checked against go1.19.
 */
static void test_device_checkpoint_repeated_slices_decode_as_go_does(void **state)
{
        static const char head[] = "(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint."
                                   "PodDevicesEntry)";
        static const char zero[] = "{PodUID:(string) ContainerName:(string) ResourceName:(string) "
                                   "DeviceIDs:(checkpoint.DevicesPerNUMA)<nil> "
                                   "AllocResp:([]uint8)<nil>}";
        static const char tail[] = " RegisteredDevices:(map[string][]string)map[]}";
        ncm_devmgr_checkpoint *cp;
        char want[1024];
        char *sp;
        (void)state;

        cp = parse_ok("{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"p\",\"ContainerName\":\"c\","
                      "\"DeviceIDs\":{\"0\":[\"a\"]}},{\"PodUID\":\"q\",\"AllocResp\":\"AQID\"}],"
                      "\"PodDeviceEntries\":[{\"ResourceName\":\"r\",\"DeviceIDs\":{\"1\":[\"b\"]}}"
                      "],"
                      "\"PodDeviceEntries\":[null,{\"AllocResp\":[null,9]},{}]}}");
        sp = spew(cp);
        snprintf(want, sizeof(want),
                 "%s[{PodUID:(string)p ContainerName:(string)c ResourceName:(string)r "
                 "DeviceIDs:(checkpoint.DevicesPerNUMA)map[0:[a] 1:[b]] AllocResp:([]uint8)<nil>} "
                 "{PodUID:(string)q ContainerName:(string) ResourceName:(string) "
                 "DeviceIDs:(checkpoint.DevicesPerNUMA)<nil> AllocResp:([]uint8)[1 9]} %s]%s",
                 head, zero, tail);
        assert_string_equal(sp, want);
        free(sp);
        ncm_devmgr_checkpoint_free(cp);

        /* Bytes too: a null element keeps its byte, and the bytes past the end come back. */
        cp = parse_ok("{\"Data\":{\"PodDeviceEntries\":[{\"AllocResp\":\"AQID\"}],"
                      "\"PodDeviceEntries\":[{\"AllocResp\":[null,9]}],"
                      "\"PodDeviceEntries\":[{\"AllocResp\":[null,null,null,4]}]}}");
        assert_int_equal(cp->n_entries, 1);
        assert_int_equal(cp->entries[0].alloc_resp_len, 4);
        assert_memory_equal(cp->entries[0].alloc_resp, "\x01\x09\x03\x04", 4);
        ncm_devmgr_checkpoint_free(cp);

        /* [] and null start over, in Data or in a repeated Data. */
        cp = parse_ok("{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"a\"},{\"PodUID\":\"b\"}],"
                      "\"PodDeviceEntries\":[],\"PodDeviceEntries\":[{},{}]}}");
        sp = spew(cp);
        snprintf(want, sizeof(want), "%s[%s %s]%s", head, zero, zero, tail);
        assert_string_equal(sp, want);
        free(sp);
        ncm_devmgr_checkpoint_free(cp);
        cp = parse_ok("{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"a\"},{\"PodUID\":\"b\"}]},"
                      "\"Data\":{\"PodDeviceEntries\":null},"
                      "\"Data\":{\"PodDeviceEntries\":[{},{\"AllocResp\":[]}]}}");
        assert_string_equal(cp->entries[0].pod_uid, "");
        assert_string_equal(cp->entries[1].pod_uid, "");
        assert_false(cp->entries[1].alloc_resp_null);
        assert_int_equal(cp->entries[1].alloc_resp_len, 0);
        ncm_devmgr_checkpoint_free(cp);

        /* Go checks the whole document before decoding: a syntax error wins over a type error
         * met earlier. */
        {
                ncm_error err = NCM_ERROR_INIT;
                const char *t = "{\"Data\":[] , \"x\": tru}";
                assert_int_equal(parse_err(t, strlen(t), &err), -EINVAL);
                assert_string_equal(err.msg, "t:1:22: invalid JSON: invalid character '}' in "
                                             "literal true (expecting 'e')");
        }
}

/* ---- corrupt and hostile files ---- */

static void expect_reject(const char *text, int code, const char *needle)
{
        ncm_error err = NCM_ERROR_INIT;
        int r = parse_err(text, strlen(text), &err);
        if (r != -code || (needle && !strstr(err.msg, needle)))
                fail_msg("%s: got %d '%s', expected %d with '%s'", text, r, err.msg, -code,
                         needle ? needle : "");
        assert_null(strchr(err.msg, '\n'));
}

static void test_device_checkpoint_rejects_bad_input(void **state)
{
        char *text = tu_read_data("devices/ckpt-one-gpu.json", NULL);
        size_t len = strlen(text);
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        /* Every truncation is an error, never a crash or a partial result. */
        for (size_t i = 0; i < len; i++)
                assert_int_equal(parse_err(text, i, &err), -EINVAL);
        free(text);

        expect_reject("", EINVAL, "unexpected end of JSON input");
        expect_reject("{", EINVAL, "unexpected end");
        expect_reject("{\"Data\":{}} x", EINVAL, "after top-level value");
        expect_reject("{\"Data\":{},}", EINVAL, "object key string");
        expect_reject("[1,2]", EINVAL, "expected a JSON object");
        expect_reject("{\"Checksum\":\"1\"}", EINVAL, "Checksum: expected number, got string");
        expect_reject("{\"Checksum\":-1}", EINVAL, "cannot unmarshal number -1");
        expect_reject("{\"Checksum\":1.5}", EINVAL, "cannot unmarshal number 1.5");
        expect_reject("{\"Checksum\":1e3}", EINVAL, "cannot unmarshal number 1e3");
        expect_reject("{\"Checksum\":18446744073709551616}", EINVAL, "cannot unmarshal");
        expect_reject("{\"Checksum\":01}", EINVAL, "invalid JSON");
        expect_reject("{\"Data\":[]}", EINVAL, "Data: expected object, got array");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":{}}}", EINVAL,
                      "Data.PodDeviceEntries: expected array, got object");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[1]}}", EINVAL,
                      "Data.PodDeviceEntries[0]: expected object, got number");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":7}]}}", EINVAL,
                      "Data.PodDeviceEntries[0].PodUID: expected string, got number");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"DeviceIDs\":{\"x\":[]}}]}}", EINVAL,
                      "key \"x\" is not a NUMA node number");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"DeviceIDs\":{\"9223372036854775808\":"
                      "[]}}]}}",
                      EINVAL, "not a NUMA node number");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"DeviceIDs\":{\"0\":[1]}}]}}", EINVAL,
                      "expected string element, got number");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"DeviceIDs\":[\"a\"]}]}}", EINVAL,
                      "DeviceIDs: expected object, got array");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"AllocResp\":\"Zg\"}]}}", EINVAL,
                      "illegal base64 data at input byte");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"AllocResp\":\"$$$$\"}]}}", EINVAL,
                      "illegal base64");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"AllocResp\":[256]}]}}", EINVAL,
                      "cannot unmarshal number 256");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"AllocResp\":true}]}}", EINVAL,
                      "expected base64 string, got bool");
        expect_reject("{\"Data\":{\"RegisteredDevices\":[]}}", EINVAL,
                      "Data.RegisteredDevices: expected object, got array");
        expect_reject("{\"Data\":{\"RegisteredDevices\":{\"a/b\":\"x\"}}}", EINVAL,
                      "expected array of strings, got string");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"a\\u0000b\"}]}}", EINVAL,
                      "\\u0000");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"a\tb\"}]}}", EINVAL,
                      "in string literal");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"\\x\"}]}}", EINVAL,
                      "string escape code");
        expect_reject("{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"\\u12g4\"}]}}", EINVAL,
                      "hexadecimal");
        expect_reject("{\"x\":tru}", EINVAL, "in literal true");
        expect_reject("{\"x\":[1,]}", EINVAL, "looking for beginning of value");
        expect_reject("{\"x\":{\"a\" 1}}", EINVAL, "after object key");
        expect_reject("\xef\xbb\xbf{}", EINVAL, "looking for beginning of value");
}

static void test_device_checkpoint_rejects_huge_and_deep(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        size_t deep = 10001, n;
        char *text;
        (void)state;

        /* Larger than the limit: refused before parsing. */
        assert_int_equal(parse_err("{}", (size_t)NCM_DEVMGR_CHECKPOINT_MAX + 1, &err), -EFBIG);

        /* Nesting deeper than Go's limit inside an unknown field. */
        text = malloc(2 * deep + 16);
        n = (size_t)sprintf(text, "{\"x\":");
        memset(text + n, '[', deep);
        memset(text + n + deep, ']', deep);
        strcpy(text + n + 2 * deep, "}");
        assert_int_equal(parse_err(text, strlen(text), &err), -EINVAL);
        assert_non_null(strstr(err.msg, "exceeded max depth"));
        /* ... and well within it. */
        deep = 500;
        n = (size_t)sprintf(text, "{\"x\":");
        memset(text + n, '[', deep);
        memset(text + n + deep, ']', deep);
        strcpy(text + n + 2 * deep, "}");
        assert_int_equal(parse_err(text, strlen(text), &err), 0);
        free(text);
}

static void test_device_checkpoint_load_errors(void **state)
{
        char *dir = tu_mkdtemp(), *path, *big;
        ncm_devmgr_checkpoint *cp = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(asprintf(&path, "%s/kubelet_internal_checkpoint", dir) > 0, 1);
        assert_int_equal(ncm_devmgr_checkpoint_load(AT_FDCWD, path, &cp, &err), -ENOENT);
        big = calloc(1, NCM_DEVMGR_CHECKPOINT_MAX + 2);
        memset(big, ' ', NCM_DEVMGR_CHECKPOINT_MAX + 1);
        assert_int_equal(ncm_fs_write_atomic(AT_FDCWD, path, big, NCM_DEVMGR_CHECKPOINT_MAX + 1,
                                             0600, &err),
                         0);
        assert_int_equal(ncm_devmgr_checkpoint_load(AT_FDCWD, path, &cp, &err), -EFBIG);
        assert_null(cp);
        assert_non_null(strstr(err.msg, path));
        free(big);
        free(path);
        tu_rm_rf(dir);
        free(dir);
}

static void test_device_checkpoint_write_atomic(void **state)
{
        char *dir = tu_mkdtemp(), *path, *src = tu_read_data("devices/ckpt-one-gpu.json", NULL);
        ncm_devmgr_checkpoint *cp = parse_ok(src);
        ncm_error err = NCM_ERROR_INIT;
        char *back = NULL;
        size_t n = 0;
        struct stat st;
        (void)state;

        assert_int_equal(asprintf(&path, "%s/kubelet_internal_checkpoint", dir) > 0, 1);
        assert_int_equal(ncm_devmgr_checkpoint_write(AT_FDCWD, path, cp, &err), 0);
        assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &back, &n, &err), 0);
        assert_string_equal(back, src);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        /* A checkpoint whose stored checksum is wrong is written with the right one. */
        cp->checksum = 1;
        free(back);
        assert_int_equal(ncm_devmgr_checkpoint_write(AT_FDCWD, path, cp, &err), 0);
        assert_int_equal(ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &back, &n, &err), 0);
        assert_string_equal(back, src);
        /* Writing into a missing directory fails and creates nothing. */
        free(path);
        assert_int_equal(asprintf(&path, "%s/missing/kubelet_internal_checkpoint", dir) > 0, 1);
        assert_true(ncm_devmgr_checkpoint_write(AT_FDCWD, path, cp, &err) < 0);
        free(back);
        free(src);
        free(path);
        ncm_devmgr_checkpoint_free(cp);
        tu_rm_rf(dir);
        free(dir);
}

/* ---- ContainerAllocateResponse bytes ---- */

static void test_device_checkpoint_alloc_resp_encoding(void **state)
{
        ncm_devmgr_alloc_resp *r = ncm_devmgr_alloc_resp_new(), *d = NULL;
        unsigned char *bytes = NULL;
        size_t n = 0;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        /* The spec's example: envs{NVIDIA_VISIBLE_DEVICES: GPU-aaaa}. */
        assert_int_equal(ncm_devmgr_alloc_resp_add_env(r, "NVIDIA_VISIBLE_DEVICES", "GPU-aaaa"), 0);
        assert_int_equal(ncm_devmgr_alloc_resp_encode(r, &bytes, &n, &err), 0);
        assert_int_equal(n, 36);
        assert_memory_equal(bytes, "\n\"\n\x16NVIDIA_VISIBLE_DEVICES\x12\bGPU-aaaa", 36);
        free(bytes);
        ncm_devmgr_alloc_resp_free(r);

        /* Every field: same bytes as protobuf-c when no string is empty. */
        r = ncm_devmgr_alloc_resp_new();
        ncm_devmgr_alloc_resp_add_env(r, "A", "1");
        ncm_devmgr_alloc_resp_add_mount(r, "/c", "/h", true);
        ncm_devmgr_alloc_resp_add_mount(r, "/c2", "/h2", false);
        ncm_devmgr_alloc_resp_add_device(r, "/dev/x", "/dev/y", "rw");
        ncm_devmgr_alloc_resp_add_annotation(r, "k", "v");
        ncm_devmgr_alloc_resp_add_cdi_device(r, "vendor.com/gpu=0");
        assert_int_equal(ncm_devmgr_alloc_resp_encode(r, &bytes, &n, &err), 0);
        {
                V1beta1__ContainerAllocateResponse m = V1BETA1__CONTAINER_ALLOCATE_RESPONSE__INIT;
                V1beta1__ContainerAllocateResponse__EnvsEntry env =
                                V1BETA1__CONTAINER_ALLOCATE_RESPONSE__ENVS_ENTRY__INIT;
                V1beta1__ContainerAllocateResponse__AnnotationsEntry ann =
                                V1BETA1__CONTAINER_ALLOCATE_RESPONSE__ANNOTATIONS_ENTRY__INIT;
                V1beta1__Mount m1 = V1BETA1__MOUNT__INIT, m2 = V1BETA1__MOUNT__INIT;
                V1beta1__DeviceSpec ds = V1BETA1__DEVICE_SPEC__INIT;
                V1beta1__CDIDevice cdi = V1BETA1__CDIDEVICE__INIT;
                V1beta1__ContainerAllocateResponse__EnvsEntry *envs[] = {&env};
                V1beta1__ContainerAllocateResponse__AnnotationsEntry *anns[] = {&ann};
                V1beta1__Mount *mounts[] = {&m1, &m2};
                V1beta1__DeviceSpec *devs[] = {&ds};
                V1beta1__CDIDevice *cdis[] = {&cdi};
                uint8_t buf[256];
                size_t pn;

                env.key = "A";
                env.value = "1";
                ann.key = "k";
                ann.value = "v";
                m1.container_path = "/c";
                m1.host_path = "/h";
                m1.read_only = true;
                m2.container_path = "/c2";
                m2.host_path = "/h2";
                ds.container_path = "/dev/x";
                ds.host_path = "/dev/y";
                ds.permissions = "rw";
                cdi.name = "vendor.com/gpu=0";
                m.n_envs = 1;
                m.envs = envs;
                m.n_annotations = 1;
                m.annotations = anns;
                m.n_mounts = 2;
                m.mounts = mounts;
                m.n_devices = 1;
                m.devices = devs;
                m.n_cdi_devices = 1;
                m.cdi_devices = cdis;
                pn = v1beta1__container_allocate_response__pack(&m, buf);
                assert_int_equal(pn, n);
                assert_memory_equal(buf, bytes, n);
        }
        /* Round trip. */
        assert_int_equal(ncm_devmgr_alloc_resp_decode(bytes, n, &d, &err), 0);
        assert_int_equal(d->n_mounts, 2);
        assert_true(d->mounts[0].read_only);
        assert_false(d->mounts[1].read_only);
        assert_string_equal(d->devices[0].permissions, "rw");
        assert_string_equal(d->cdi_devices[0], "vendor.com/gpu=0");
        assert_string_equal(d->annotations[0].value, "v");
        ncm_devmgr_alloc_resp_free(d);
        free(bytes);
        ncm_devmgr_alloc_resp_free(r);

        /* Go writes both halves of a map entry, even empty ones (protobuf-c would not). */
        r = ncm_devmgr_alloc_resp_new();
        ncm_devmgr_alloc_resp_add_env(r, "K", "");
        assert_int_equal(ncm_devmgr_alloc_resp_encode(r, &bytes, &n, &err), 0);
        assert_int_equal(n, 7);
        assert_memory_equal(bytes, "\x0a\x05\x0a\x01K\x12\x00", 7);
        free(bytes);
        ncm_devmgr_alloc_resp_free(r);

        /* An empty response is zero bytes. */
        r = ncm_devmgr_alloc_resp_new();
        assert_int_equal(ncm_devmgr_alloc_resp_encode(r, &bytes, &n, &err), 0);
        assert_int_equal(n, 0);
        free(bytes);
        ncm_devmgr_alloc_resp_free(r);
}

static void test_device_checkpoint_alloc_resp_decoding(void **state)
{
        ncm_devmgr_alloc_resp *d = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        /* Duplicate map keys: the last wins, keys come out sorted. */
        assert_int_equal(ncm_devmgr_alloc_resp_decode("\x0a\x06\x0a\x01Z\x12\x01"
                                                      "1"
                                                      "\x0a\x06\x0a\x01"
                                                      "A\x12\x01"
                                                      "2"
                                                      "\x0a\x06\x0a\x01Z\x12\x01"
                                                      "3",
                                                      24, &d, &err),
                         0);
        assert_int_equal(d->n_envs, 2);
        assert_string_equal(d->envs[0].key, "A");
        assert_string_equal(d->envs[1].key, "Z");
        assert_string_equal(d->envs[1].value, "3");
        ncm_devmgr_alloc_resp_free(d);
        d = NULL;

        /* Nothing at all decodes to an empty response (Go: proto.Unmarshal(nil)). */
        assert_int_equal(ncm_devmgr_alloc_resp_decode(NULL, 0, &d, &err), 0);
        assert_int_equal(d->n_envs + d->n_mounts + d->n_devices, 0);
        ncm_devmgr_alloc_resp_free(d);
        d = NULL;

        /* Truncated, bad lengths, bad UTF-8. */
        assert_int_equal(ncm_devmgr_alloc_resp_decode("\x0a\x22\x0a", 3, &d, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "malformed protobuf"));
        assert_int_equal(ncm_devmgr_alloc_resp_decode("\xff\xff", 2, &d, &err), -EINVAL);
        assert_int_equal(ncm_devmgr_alloc_resp_decode("\x2a\x03\x0a\x01\xff", 5, &d, &err),
                         -EINVAL);
        assert_non_null(strstr(err.msg, "cdi_devices: string field contains invalid UTF-8"));
        assert_null(d);
}

/* ---- the kubelet's TestCheckpoint data, through a manager and back ---- */

typedef struct ck_entry {
        const char *pod, *cont, *res;
        int64_t node;
        const char *ids[3];
        const char *devs[2][2]; /* host path, container path */
        const char *mount[2];   /* container path, host path */
        const char *cdi[2];
        const char *env[2];
} ck_entry;

static const ck_entry kubelet_entries[] = {
                {"pod1",
                 "con1",
                 "domain1.com/resource1",
                 0,
                 {"dev1", "dev2"},
                 {{"/dev/r1dev1", "/dev/r1dev1"}, {"/dev/r1dev2", "/dev/r1dev2"}},
                 {"/home/r1lib1", "/usr/r1lib1"},
                 {"domain1.com/resource1=dev1", "domain1.com/resource1=dev2"},
                 {NULL, NULL}},
                {"pod1",
                 "con1",
                 "domain2.com/resource2",
                 0,
                 {"dev1", "dev2"},
                 {{"/dev/r2dev1", "/dev/r2dev1"}, {"/dev/r2dev2", "/dev/r2dev2"}},
                 {"/home/r2lib1", "/usr/r2lib1"},
                 {NULL, NULL},
                 {"r2devices", "dev1 dev2"}},
                {"pod1",
                 "con2",
                 "domain1.com/resource1",
                 0,
                 {"dev3"},
                 {{"/dev/r1dev3", "/dev/r1dev3"}, {NULL, NULL}},
                 {"/home/r1lib1", "/usr/r1lib1"},
                 {NULL, NULL},
                 {NULL, NULL}},
                {"pod2",
                 "con1",
                 "domain1.com/resource1",
                 0,
                 {"dev4"},
                 {{"/dev/r1dev4", "/dev/r1dev4"}, {NULL, NULL}},
                 {"/home/r1lib1", "/usr/r1lib1"},
                 {NULL, NULL},
                 {NULL, NULL}},
                {"pod3",
                 "con3",
                 "domain2.com/resource3",
                 -1,
                 {"dev5"},
                 {{"/dev/r3dev5", "/dev/r3dev5"}, {NULL, NULL}},
                 {"/home/r3lib1", "/usr/r3lib1"},
                 {NULL, NULL},
                 {NULL, NULL}},
};

static ncm_devmgr_checkpoint *kubelet_checkpoint(void)
{
        ncm_devmgr_checkpoint *cp = calloc(1, sizeof(*cp));
        size_t n = NCM_ELEMENTSOF(kubelet_entries);
        static const char *const res1[] = {"dev1", "dev2", "dev3", "dev4", "dev5"};
        static const char *const res2[] = {"dev1", "dev2"};
        static const char *const res3[] = {"dev5"};
        static const struct {
                const char *name;
                const char *const *ids;
                size_t n;
        } reg[] = {{"domain1.com/resource1", res1, 5},
                   {"domain2.com/resource2", res2, 2},
                   {"domain2.com/resource3", res3, 1}};

        cp->entries = calloc(n, sizeof(*cp->entries));
        cp->n_entries = n;
        for (size_t i = 0; i < n; i++) {
                const ck_entry *k = &kubelet_entries[i];
                ncm_devmgr_checkpoint_entry *e = &cp->entries[i];
                ncm_devmgr_alloc_resp *r = ncm_devmgr_alloc_resp_new();
                ncm_error err = NCM_ERROR_INIT;
                size_t ni = 0;

                e->pod_uid = strdup(k->pod);
                e->container_name = strdup(k->cont);
                e->resource_name = strdup(k->res);
                e->device_ids = calloc(1, sizeof(*e->device_ids));
                e->n_device_ids = 1;
                e->device_ids[0].node = k->node;
                while (ni < 3 && k->ids[ni])
                        ni++;
                e->device_ids[0].ids = calloc(ni + 1, sizeof(char *));
                for (size_t j = 0; j < ni; j++)
                        e->device_ids[0].ids[j] = strdup(k->ids[j]);
                e->device_ids[0].n_ids = ni;
                for (size_t j = 0; j < 2; j++)
                        if (k->devs[j][0])
                                ncm_devmgr_alloc_resp_add_device(r, k->devs[j][1], k->devs[j][0],
                                                                 "mrw");
                ncm_devmgr_alloc_resp_add_mount(r, k->mount[0], k->mount[1], true);
                if (k->env[0])
                        ncm_devmgr_alloc_resp_add_env(r, k->env[0], k->env[1]);
                for (size_t j = 0; j < 2; j++)
                        if (k->cdi[j])
                                ncm_devmgr_alloc_resp_add_cdi_device(r, k->cdi[j]);
                assert_int_equal(ncm_devmgr_alloc_resp_encode(r, &e->alloc_resp, &e->alloc_resp_len,
                                                              &err),
                                 0);
                ncm_devmgr_alloc_resp_free(r);
        }
        cp->registered = calloc(3, sizeof(*cp->registered));
        cp->n_registered = 3;
        for (size_t i = 0; i < 3; i++) {
                cp->registered[i].resource = strdup(reg[i].name);
                cp->registered[i].ids = calloc(reg[i].n + 1, sizeof(char *));
                for (size_t j = 0; j < reg[i].n; j++)
                        cp->registered[i].ids[j] = strdup(reg[i].ids[j]);
                cp->registered[i].n_ids = reg[i].n;
        }
        cp->checksum = ncm_devmgr_checkpoint_checksum(cp);
        return cp;
}

static void test_device_checkpoint_kubelet_test_data(void **state)
{
        ncm_devmgr_checkpoint *cp = kubelet_checkpoint(), *back = NULL;
        ncm_devmgr *m1 = NULL, *m2 = NULL;
        ncm_error err = NCM_ERROR_INIT;
        char *dir = tu_mkdtemp(), *path, *a, *b;
        ncm_devmgr_capacity cap = {0};
        size_t skipped = 99;
        (void)state;

        assert_int_equal(asprintf(&path, "%s/kubelet_internal_checkpoint", dir) > 0, 1);
        assert_int_equal(ncm_devmgr_new(NULL, &m1, &err), 0);
        assert_int_equal(ncm_devmgr_restore(m1, cp, &skipped, &err), 0);
        assert_int_equal(skipped, 0);
        assert_int_equal(ncm_devmgr_write_checkpoint(m1, AT_FDCWD, path, &err), 0);
        assert_int_equal(ncm_devmgr_new(NULL, &m2, &err), 0);
        assert_int_equal(ncm_devmgr_load_checkpoint(m2, AT_FDCWD, path, &err), 1);

        /* Same pod devices after the round trip, same in-use sets. */
        assert_int_equal(ncm_devmgr_to_checkpoint(m2, &back, &err), 0);
        a = format(cp);
        b = format(back);
        *strstr(a, ",\"RegisteredDevices\"") = '\0';
        *strstr(b, ",\"RegisteredDevices\"") = '\0';
        assert_string_equal(a, b);
        free(a);
        free(b);
        /* ... and the registered resources come back with no healthy device yet. */
        assert_int_equal(back->n_registered, 3);
        for (size_t i = 0; i < 3; i++)
                assert_int_equal(back->registered[i].n_ids, 0);
        for (size_t i = 0; i < NCM_ELEMENTSOF(kubelet_entries); i++) {
                const ck_entry *k = &kubelet_entries[i];
                ncm_devmgr_assignment *as = NULL;
                size_t n = 0;
                assert_int_equal(ncm_devmgr_container_devices(m2, k->pod, k->cont, &as, &n), 0);
                assert_true(n >= 1);
                ncm_devmgr_assignments_free(as, n);
        }
        /* pod1/con1: both cached responses merged (kubelet compares these counts). */
        {
                const ncm_devmgr_resource rr[] = {{"domain1.com/resource1", 2, -1},
                                                  {"domain2.com/resource2", 2, -1}};
                const ncm_devmgr_container c = {"con1", NCM_DEVMGR_APP_CONTAINER, rr, 2};
                ncm_devmgr_alloc_resp *o = NULL;
                assert_int_equal(ncm_devmgr_run_options(m2, "pod1", &c, NULL, &o, &err), 0);
                assert_non_null(o);
                assert_int_equal(o->n_devices, 4);
                assert_int_equal(o->n_mounts, 2);
                assert_int_equal(o->n_envs, 1);
                assert_int_equal(o->n_cdi_devices, 2);
                ncm_devmgr_alloc_resp_free(o);
        }
        /* Registered resources read back with empty health sets: capacity 0. */
        assert_true(ncm_devmgr_is_device_resource(m2, "domain2.com/resource3"));
        assert_int_equal(ncm_devmgr_get_capacity(m2, &cap, &err), 0);
        assert_int_equal(cap.n_entries, 3);
        for (size_t i = 0; i < cap.n_entries; i++) {
                assert_int_equal(cap.entries[i].capacity, 0);
                assert_int_equal(cap.entries[i].allocatable, 0);
        }
        assert_int_equal(cap.n_deleted, 0);
        ncm_devmgr_capacity_done(&cap);

        /* In-use sets were rebuilt: once the plugin is back, dev1-4 are taken. */
        {
                static const char *const ids[] = {"dev1", "dev2", "dev3", "dev4", "dev5", "dev6"};
                ncm_devmgr_device devs[6];
                const ncm_devmgr_resource rr[] = {{"domain1.com/resource1", 3, -1}};
                const ncm_devmgr_container c = {"app", NCM_DEVMGR_APP_CONTAINER, rr, 1};
                uint64_t ep = 0;
                for (size_t i = 0; i < 6; i++)
                        devs[i] = (ncm_devmgr_device){ids[i], "Healthy", false, NULL, 0};
                assert_int_equal(ncm_devmgr_plugin_connect(m2, "domain1.com/resource1",
                                                           &ncm_devmgr_standin_ops, NULL,
                                                           &ncm_devmgr_standin_options, &ep, &err),
                                 0);
                assert_int_equal(ncm_devmgr_update_devices(m2, "domain1.com/resource1", ep, devs, 6,
                                                           &err),
                                 0);
                assert_int_equal(ncm_devmgr_allocate(m2, "pod9", &c, NULL, &err),
                                 -NCM_E_UNSATISFIABLE);
                assert_string_equal(err.msg, "requested number of devices unavailable for "
                                             "domain1.com/resource1. Requested: 3, Available: 2");
        }

        ncm_devmgr_checkpoint_free(back);
        ncm_devmgr_checkpoint_free(cp);
        ncm_devmgr_free(m1);
        ncm_devmgr_free(m2);
        free(path);
        tu_rm_rf(dir);
        free(dir);
}

static void test_device_checkpoint_corrupt_file_is_no_state(void **state)
{
        char *dir = tu_mkdtemp(), *path;
        ncm_devmgr *m = NULL;
        ncm_error err = NCM_ERROR_INIT;
        const char *bad = "{\"Data\":{\"PodDeviceEntries\":null,\"RegisteredDevices\":{\"a/b\":"
                          "[]}},\"Checksum\":1}";
        (void)state;

        assert_int_equal(asprintf(&path, "%s/kubelet_internal_checkpoint", dir) > 0, 1);
        assert_int_equal(ncm_devmgr_new(NULL, &m, &err), 0);
        assert_int_equal(ncm_devmgr_load_checkpoint(m, AT_FDCWD, path, &err), 0);
        assert_int_equal(ncm_fs_write_atomic(AT_FDCWD, path, bad, strlen(bad), 0600, &err), 0);
        assert_int_equal(ncm_devmgr_load_checkpoint(m, AT_FDCWD, path, &err), -NCM_E_CHECKSUM);
        assert_non_null(strstr(err.msg, "checkpoint is corrupted"));
        assert_false(ncm_devmgr_is_device_resource(m, "a/b"));
        assert_int_equal(ncm_fs_write_atomic(AT_FDCWD, path, "{", 1, 0600, &err), 0);
        assert_int_equal(ncm_devmgr_load_checkpoint(m, AT_FDCWD, path, &err), -EINVAL);
        ncm_devmgr_free(m);
        free(path);
        tu_rm_rf(dir);
        free(dir);
}

static void test_device_checkpoint_bad_alloc_resp_is_skipped(void **state)
{
        const char *text = "{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"p\",\"ContainerName\":"
                           "\"c\",\"ResourceName\":\"a/b\",\"DeviceIDs\":{\"0\":[\"d\"]},"
                           "\"AllocResp\":\"//8=\"},{\"PodUID\":\"q\",\"ContainerName\":\"c\","
                           "\"ResourceName\":\"a/b\",\"DeviceIDs\":{\"0\":[\"e\"]},"
                           "\"AllocResp\":null}],\"RegisteredDevices\":{\"a/b\":[]}}}";
        ncm_devmgr_checkpoint *cp = parse_ok(text), *back = NULL;
        ncm_devmgr *m = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_devmgr_assignment *as = NULL;
        ncm_buf show = NCM_BUF_INIT;
        size_t n = 0, skipped = 0;
        char *out;
        (void)state;

        assert_int_equal(ncm_devmgr_new(NULL, &m, &err), 0);
        assert_int_equal(ncm_devmgr_restore(m, cp, &skipped, &err), 0);
        assert_int_equal(skipped, 1);
        assert_int_equal(ncm_devmgr_container_devices(m, "p", "c", &as, &n), 0);
        assert_int_equal(n, 0);
        /* A null AllocResp decodes as an empty response and is written back as "". */
        assert_int_equal(ncm_devmgr_container_devices(m, "q", "c", &as, &n), 0);
        assert_int_equal(n, 1);
        ncm_devmgr_assignments_free(as, n);
        assert_int_equal(ncm_devmgr_to_checkpoint(m, &back, &err), 0);
        out = format(back);
        assert_non_null(strstr(out, "\"AllocResp\":\"\"}]"));
        free(out);

        ncm_devmgr_checkpoint_show(cp, 0, &show);
        assert_non_null(strstr(show.data, "malformed protobuf (2 bytes) (the kubelet skips"));
        ncm_buf_reset(&show);
        ncm_devmgr_checkpoint_show(cp, NCM_DEVMGR_SHOW_JSON, &show);
        assert_non_null(strstr(show.data, "\"allocResp\":null,\"allocRespError\":"));
        ncm_buf_done(&show);
        ncm_devmgr_checkpoint_free(back);
        ncm_devmgr_checkpoint_free(cp);
        ncm_devmgr_free(m);
}

static void test_device_checkpoint_probe_and_drop(void **state)
{
        char *text = tu_read_data("devices/ckpt-one-gpu.json", NULL);
        ncm_devmgr_checkpoint *cp = parse_ok(text);
        ncm_error err = NCM_ERROR_INIT;
        const char *cpu = "{\"policyName\":\"none\",\"defaultCpuSet\":\"\",\"checksum\":"
                          "1353318690}";
        (void)state;

        assert_int_equal(ncm_devmgr_checkpoint_probe(text, strlen(text), "f", &err), 1);
        assert_int_equal(ncm_devmgr_checkpoint_probe("{\"dAtA\":null}", 13, "f", &err), 1);
        assert_int_equal(ncm_devmgr_checkpoint_probe(cpu, strlen(cpu), "f", &err), 0);
        assert_int_equal(ncm_devmgr_checkpoint_probe("[1]", 3, "f", &err), 0);
        assert_int_equal(ncm_devmgr_checkpoint_probe("{\"Data\":", 8, "f", &err), -EINVAL);
        assert_int_equal(ncm_devmgr_checkpoint_probe("{} {}", 5, "f", &err), -EINVAL);
        assert_int_equal(ncm_devmgr_checkpoint_probe("nope", 4, "f", &err), -EINVAL);
        assert_non_null(strstr(err.msg, "f:1:"));

        assert_int_equal(ncm_devmgr_checkpoint_drop_pod(cp, "nobody"), 0);
        assert_int_equal(ncm_devmgr_checkpoint_drop_pod(cp, "2a5f6c1e-0d6b-4c1a-9a55-7d0b3e9c1f00"),
                         1);
        assert_int_equal(cp->n_entries, 0);
        assert_false(cp->entries_null);
        assert_int_equal(ncm_devmgr_checkpoint_verify(cp, &err), -NCM_E_CHECKSUM);
        ncm_devmgr_checkpoint_free(cp);
        free(text);
}

static void test_device_checkpoint_show_golden(void **state)
{
        static const char *const files[] = {"ckpt-one-gpu", "ckpt-mixed-numa"};
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(files); i++) {
                char rel[128];
                char *text;
                ncm_devmgr_checkpoint *cp;
                ncm_buf b = NCM_BUF_INIT;

                snprintf(rel, sizeof(rel), "devices/%s.json", files[i]);
                text = tu_read_data(rel, NULL);
                cp = parse_ok(text);
                ncm_devmgr_checkpoint_show(cp, 0, &b);
                snprintf(rel, sizeof(rel), "devices/show-%s.txt", files[i]);
                tu_assert_golden(rel, b.data);
                ncm_buf_reset(&b);
                ncm_devmgr_checkpoint_show(cp, NCM_DEVMGR_SHOW_JSON, &b);
                snprintf(rel, sizeof(rel), "devices/show-%s.jsonl", files[i]);
                tu_assert_golden(rel, b.data);
                ncm_buf_done(&b);
                ncm_devmgr_checkpoint_free(cp);
                free(text);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_device_checkpoint_worked_examples),
                        cmocka_unit_test(test_device_checkpoint_decoded_values),
                        cmocka_unit_test(test_device_checkpoint_null_versus_empty),
                        cmocka_unit_test(test_device_checkpoint_go_decoding),
                        cmocka_unit_test(test_device_checkpoint_repeated_slices_decode_as_go_does),
                        cmocka_unit_test(test_device_checkpoint_rejects_bad_input),
                        cmocka_unit_test(test_device_checkpoint_rejects_huge_and_deep),
                        cmocka_unit_test(test_device_checkpoint_load_errors),
                        cmocka_unit_test(test_device_checkpoint_write_atomic),
                        cmocka_unit_test(test_device_checkpoint_alloc_resp_encoding),
                        cmocka_unit_test(test_device_checkpoint_alloc_resp_decoding),
                        cmocka_unit_test(test_device_checkpoint_kubelet_test_data),
                        cmocka_unit_test(test_device_checkpoint_corrupt_file_is_no_state),
                        cmocka_unit_test(test_device_checkpoint_bad_alloc_resp_is_skipped),
                        cmocka_unit_test(test_device_checkpoint_probe_and_drop),
                        cmocka_unit_test(test_device_checkpoint_show_golden),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
