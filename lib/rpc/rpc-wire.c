/* SPDX-License-Identifier: Apache-2.0 */
/* The pure parts of the gRPC wire: framing, grpc-timeout, grpc-message, header names. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/rpc.h>

#include "rpc-internal.h"

static const char *const code_names[] = {
                "OK",
                "CANCELLED",
                "UNKNOWN",
                "INVALID_ARGUMENT",
                "DEADLINE_EXCEEDED",
                "NOT_FOUND",
                "ALREADY_EXISTS",
                "PERMISSION_DENIED",
                "RESOURCE_EXHAUSTED",
                "FAILED_PRECONDITION",
                "ABORTED",
                "OUT_OF_RANGE",
                "UNIMPLEMENTED",
                "INTERNAL",
                "UNAVAILABLE",
                "DATA_LOSS",
                "UNAUTHENTICATED",
};

const char *ncm_rpc_code_name(int code)
{
        if (code < 0 || (size_t)code >= NCM_ELEMENTSOF(code_names))
                return NULL;
        return code_names[code];
}

const char *ncm_rpc_md_get(const ncm_rpc_md *md, size_t n, const char *key)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(md[i].key, key) == 0)
                        return md[i].value;
        return NULL;
}

void ncm__rpc_framer_init(ncm__rpc_framer *f, size_t max)
{
        *f = (ncm__rpc_framer){.max = max};
}

void ncm__rpc_framer_done(ncm__rpc_framer *f)
{
        free(f->msg);
        f->msg = NULL;
        f->hdr_len = 0;
        f->msg_have = 0;
}

bool ncm__rpc_framer_partial(const ncm__rpc_framer *f)
{
        return f->hdr_len > 0;
}

int ncm__rpc_framer_feed(ncm__rpc_framer *f, const uint8_t *data, size_t len, size_t *ret_used,
                         ncm__rpc_message *ret_msg, uint64_t *ret_len_announced)
{
        size_t used = 0;

        while (f->hdr_len < 5) {
                if (used == len) {
                        *ret_used = used;
                        return 0;
                }
                f->hdr[f->hdr_len++] = data[used++];
                if (f->hdr_len < 5)
                        continue;
                if (f->hdr[0] > 1)
                        return -EPROTO;
                uint64_t n = (uint64_t)f->hdr[1] << 24 | (uint64_t)f->hdr[2] << 16 |
                             (uint64_t)f->hdr[3] << 8 | f->hdr[4];
                if (n > f->max) {
                        if (ret_len_announced)
                                *ret_len_announced = n;
                        return -EMSGSIZE;
                }
                f->msg_len = n;
                f->msg_have = 0;
                if (n > 0) {
                        f->msg = malloc(n);
                        if (!f->msg)
                                return -ENOMEM;
                }
        }

        size_t take = f->msg_len - f->msg_have;
        if (take > len - used)
                take = len - used;
        if (take > 0) {
                memcpy(f->msg + f->msg_have, data + used, take);
                f->msg_have += take;
                used += take;
        }
        *ret_used = used;
        if (f->msg_have < f->msg_len)
                return 0;

        *ret_msg = (ncm__rpc_message){.msg = f->msg, .len = f->msg_len, .compressed = f->hdr[0]};
        f->msg = NULL;
        f->hdr_len = 0;
        f->msg_len = f->msg_have = 0;
        return 1;
}

void ncm__rpc_frame_prefix(uint8_t out[5], size_t len)
{
        out[0] = 0;
        out[1] = (uint8_t)(len >> 24);
        out[2] = (uint8_t)(len >> 16);
        out[3] = (uint8_t)(len >> 8);
        out[4] = (uint8_t)len;
}

int ncm__rpc_timeout_parse(const char *s, size_t len, uint64_t *ret_ms)
{
        if (len < 2 || len > 9)
                return -EINVAL;
        uint64_t v = 0;
        for (size_t i = 0; i + 1 < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        /* Units as milliseconds, rounding sub-millisecond values up so "1n" is not "none". */
        uint64_t ms;
        switch (s[len - 1]) {
        case 'H':
                ms = v * 3600000;
                break;
        case 'M':
                ms = v * 60000;
                break;
        case 'S':
                ms = v * 1000;
                break;
        case 'm':
                ms = v;
                break;
        case 'u':
                ms = (v + 999) / 1000;
                break;
        case 'n':
                ms = (v + 999999) / 1000000;
                break;
        default:
                return -EINVAL;
        }
        *ret_ms = ms > UINT32_MAX ? UINT32_MAX : ms;
        return 0;
}

void ncm__rpc_timeout_format(uint64_t ms, char out[16])
{
        /* At most 8 digits: milliseconds while they fit, then coarser units rounded up. */
        static const struct {
                uint64_t per;
                char unit;
        } units[] = {{1, 'm'}, {1000, 'S'}, {60000, 'M'}, {3600000, 'H'}};
        for (size_t i = 0; i < NCM_ELEMENTSOF(units); i++) {
                uint64_t v = (ms + units[i].per - 1) / units[i].per;
                if (v <= 99999999 || i + 1 == NCM_ELEMENTSOF(units)) {
                        if (v > 99999999)
                                v = 99999999;
                        int k = 0;
                        char digits[12];
                        do {
                                digits[k++] = (char)('0' + v % 10);
                                v /= 10;
                        } while (v);
                        int o = 0;
                        while (k)
                                out[o++] = digits[--k];
                        out[o++] = units[i].unit;
                        out[o] = 0;
                        return;
                }
        }
}

void ncm__rpc_percent_encode(ncm_buf *b, const char *s, size_t len)
{
        static const char hex[] = "0123456789ABCDEF";
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c < 0x20 || c > 0x7e || c == '%') {
                        char e[3] = {'%', hex[c >> 4], hex[c & 15]};
                        ncm_buf_append(b, e, 3);
                } else {
                        ncm_buf_putc(b, (char)c);
                }
        }
}

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

char *ncm__rpc_percent_decode(const char *s, size_t len)
{
        char *out = malloc(len + 1);
        if (!out)
                return NULL;
        size_t o = 0;
        for (size_t i = 0; i < len; i++) {
                int h, l;
                if (s[i] == '%' && i + 2 < len && (h = hexval(s[i + 1])) >= 0 &&
                    (l = hexval(s[i + 2])) >= 0) {
                        out[o++] = (char)(h << 4 | l);
                        i += 2;
                } else {
                        out[o++] = s[i];
                }
        }
        out[o] = 0;
        return out;
}

void ncm__rpc_h2track_init(ncm__rpc_h2track *t, bool server)
{
        *t = (ncm__rpc_h2track){.preface_left = server ? 24 : 0};
}

void ncm__rpc_h2track_feed(ncm__rpc_h2track *t, const uint8_t *data, size_t len)
{
        size_t i = 0;
        while (i < len) {
                if (t->preface_left > 0) {
                        size_t n = len - i < t->preface_left ? len - i : t->preface_left;
                        t->preface_left -= (uint32_t)n;
                        i += n;
                        if (t->preface_left == 0)
                                t->completed++;
                } else if (t->payload_left > 0) {
                        size_t n = len - i < t->payload_left ? len - i : t->payload_left;
                        t->payload_left -= (uint32_t)n;
                        i += n;
                        if (t->payload_left == 0)
                                t->completed++;
                } else {
                        t->hdr[t->hdr_len++] = data[i++];
                        if (t->hdr_len == 9) {
                                t->payload_left = (uint32_t)t->hdr[0] << 16 |
                                                  (uint32_t)t->hdr[1] << 8 | t->hdr[2];
                                t->hdr_len = 0;
                                if (t->payload_left == 0)
                                        t->completed++;
                        }
                }
        }
}

bool ncm__rpc_h2track_mid_frame(const ncm__rpc_h2track *t)
{
        return (t->preface_left > 0 && t->preface_left < 24) || t->hdr_len > 0 ||
               t->payload_left > 0;
}

bool ncm__rpc_reserved_header(const char *name, size_t len)
{
        if (len == 0 || name[0] == ':')
                return true;
        static const char *const names[] = {"content-type",     "te",
                                            "user-agent",       "host",
                                            "connection",       "content-length",
                                            "accept-encoding",  "keep-alive",
                                            "transfer-encoding"};
        for (size_t i = 0; i < NCM_ELEMENTSOF(names); i++)
                if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
                        return true;
        return len >= 5 && memcmp(name, "grpc-", 5) == 0;
}

bool ncm__rpc_valid_md_key(const char *key)
{
        size_t len = strlen(key);
        if (len == 0 || ncm__rpc_reserved_header(key, len))
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = key[i];
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                      c == '.'))
                        return false;
        }
        return true;
}

bool ncm__rpc_valid_md_value(const char *value)
{
        for (const char *p = value; *p; p++)
                if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
                        return false;
        return true;
}
