/* SPDX-License-Identifier: Apache-2.0 */
/*
 * protobuf-c decodes a string field into a NUL-terminated char *: a NUL inside the string cuts
 * it there, silently ("u\0x" arrives as "u", another pod's UID). A Go peer keeps the whole
 * string, so a message whose string fields hold a NUL byte cannot be decoded faithfully and is
 * refused before it is unpacked.
 */
#ifndef NCM_API_PB_STRINGS_H
#define NCM_API_PB_STRINGS_H

#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>
#include <nodecm/error.h>

/*
 * 0 when no string field of the message DATA (LEN bytes, of type DESC), nested messages
 * included, holds a NUL byte; else -EINVAL, ERR naming the field (`MSG.FIELD: a NUL byte in a
 * string`). Malformed wire data is left to the unpack, which refuses it (0).
 */
int ncm__pb_check_strings(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                          ncm_error *err);

#endif
