/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checksums and encodings the kubelet's checkpoint files use: FNV-1a 32 (hash/fnv New32a) and
 * standard base64 with padding (encoding/base64 StdEncoding).
 */
#ifndef NODECM_HASH_H
#define NODECM_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NCM_FNV1A32_INIT UINT32_C(2166136261)

/* Continue an FNV-1a 32-bit hash (start with NCM_FNV1A32_INIT) over LEN bytes. */
static inline uint32_t ncm_fnv1a32_update(uint32_t h, const void *data, size_t len)
{
        const unsigned char *p = data;
        for (size_t i = 0; i < len; i++) {
                h ^= p[i];
                h *= UINT32_C(16777619);
        }
        return h;
}

/* FNV-1a 32-bit hash of LEN bytes. */
static inline uint32_t ncm_fnv1a32(const void *data, size_t len)
{
        return ncm_fnv1a32_update(NCM_FNV1A32_INIT, data, len);
}

/* Append the base64 (standard alphabet, '=' padding) of DATA to B. */
NCM_API void ncm_base64_encode(ncm_buf *b, const void *data, size_t len);

/*
 * Decode standard base64 as Go's StdEncoding.Decode does: '\r' and '\n' are skipped, padding
 * is required, anything else outside the alphabet is an error. *RET is malloc'd (never NULL on
 * success, even for empty output). Returns 0, -EINVAL (with the byte offset in *BAD_OFFSET when
 * not NULL) or -ENOMEM.
 */
NCM_API int ncm_base64_decode(const char *s, size_t len, unsigned char **ret, size_t *ret_len,
                              size_t *bad_offset);

#ifdef __cplusplus
}
#endif
#endif
