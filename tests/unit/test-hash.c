/* SPDX-License-Identifier: Apache-2.0 */
/* FNV-1a 32 (with the kubelet checksum self-test of the spec) and Go-compatible base64. */
#include <errno.h>
#include <string.h>

#include <nodecm/hash.h>
#include "testutil.h"

static void test_hash_fnv1a32_vectors(void **state)
{
        const char *ck = "(*state.CPUManagerCheckpoint){PolicyName:(string)static "
                         "DefaultCPUSet:(string)0-63 Entries:(map[string]map[string]string)map[] "
                         "Checksum:(checksum.Checksum)0}";
        (void)state;
        assert_int_equal(ncm_fnv1a32("", 0), 2166136261u);
        assert_int_equal(ncm_fnv1a32("a", 1), 0xe40c292cu);
        assert_int_equal(ncm_fnv1a32("foobar", 6), 0xbf9cf968u);
        /* The kubelet checkpoint self-test (spec §5.5 / Appendix A). */
        assert_int_equal(ncm_fnv1a32(ck, strlen(ck)), 1058907510u);
        /* Incremental equals one-shot. */
        assert_int_equal(ncm_fnv1a32_update(ncm_fnv1a32("foo", 3), "bar", 3),
                         ncm_fnv1a32("foobar", 6));
}

static void check_b64(const char *raw, size_t len, const char *enc)
{
        ncm_buf b = NCM_BUF_INIT;
        unsigned char *out = NULL;
        size_t n = 0;
        ncm_base64_encode(&b, raw, len);
        assert_string_equal(b.data ? b.data : "", enc);
        assert_int_equal(ncm_base64_decode(enc, strlen(enc), &out, &n, NULL), 0);
        assert_int_equal(n, len);
        if (len)
                assert_memory_equal(out, raw, len);
        free(out);
        ncm_buf_done(&b);
}

static void test_hash_base64_round_trip(void **state)
{
        (void)state;
        check_b64("", 0, "");
        check_b64("f", 1, "Zg==");
        check_b64("fo", 2, "Zm8=");
        check_b64("foo", 3, "Zm9v");
        check_b64("foob", 4, "Zm9vYg==");
        check_b64("\xff\xfe\x00", 3, "//4A");
        /* The device checkpoint example's AllocResp (spec §A.10). */
        check_b64("\n\"\n\x16NVIDIA_VISIBLE_DEVICES\x12\bGPU-aaaa", 36,
                  "CiIKFk5WSURJQV9WSVNJQkxFX0RFVklDRVMSCEdQVS1hYWFh");
}

static void test_hash_base64_decode_rules(void **state)
{
        static const char *const bad[] = {"Zg", "Zg=", "Z===", "Zg==Zg==", "Zm9v!", "=Zg=", "Zm=v"};
        unsigned char *out = NULL;
        size_t n = 0, off = 0;
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++) {
                assert_int_equal(ncm_base64_decode(bad[i], strlen(bad[i]), &out, &n, &off),
                                 -EINVAL);
        }
        /* Go's decoder skips CR and LF anywhere. */
        assert_int_equal(ncm_base64_decode("Zm\r\n9v\n", 7, &out, &n, NULL), 0);
        assert_int_equal(n, 3);
        assert_memory_equal(out, "foo", 3);
        free(out);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_hash_fnv1a32_vectors),
                        cmocka_unit_test(test_hash_base64_round_trip),
                        cmocka_unit_test(test_hash_base64_decode_rules),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
