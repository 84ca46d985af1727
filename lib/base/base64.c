/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>

#include <nodecm/hash.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void ncm_base64_encode(ncm_buf *b, const void *data, size_t len)
{
        const unsigned char *p = data;
        size_t i = 0;
        for (; i + 2 < len; i += 3) {
                char out[4] = {alphabet[p[i] >> 2], alphabet[((p[i] & 3) << 4) | (p[i + 1] >> 4)],
                               alphabet[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)],
                               alphabet[p[i + 2] & 63]};
                ncm_buf_append(b, out, 4);
        }
        if (len - i == 1) {
                char out[4] = {alphabet[p[i] >> 2], alphabet[(p[i] & 3) << 4], '=', '='};
                ncm_buf_append(b, out, 4);
        } else if (len - i == 2) {
                char out[4] = {alphabet[p[i] >> 2], alphabet[((p[i] & 3) << 4) | (p[i + 1] >> 4)],
                               alphabet[(p[i + 1] & 15) << 2], '='};
                ncm_buf_append(b, out, 4);
        }
}

static int value_of(unsigned char c)
{
        if (c >= 'A' && c <= 'Z')
                return c - 'A';
        if (c >= 'a' && c <= 'z')
                return c - 'a' + 26;
        if (c >= '0' && c <= '9')
                return c - '0' + 52;
        if (c == '+')
                return 62;
        if (c == '/')
                return 63;
        return -1;
}

int ncm_base64_decode(const char *s, size_t len, unsigned char **ret, size_t *ret_len,
                      size_t *bad_offset)
{
        unsigned char *out = malloc(len / 4 * 3 + 3);
        size_t n = 0, i = 0;
        int quad[4], q = 0, pad = 0;

        if (!out)
                return -ENOMEM;
        for (; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c == '\r' || c == '\n')
                        continue;
                if (pad) {
                        /* After '=' only the rest of the padding may follow. */
                        if (c != '=' || q == 0)
                                goto bad;
                        quad[q++] = 0;
                        pad++;
                } else if (c == '=') {
                        if (q < 2)
                                goto bad;
                        quad[q++] = 0;
                        pad = 1;
                } else {
                        int v = value_of(c);
                        if (v < 0)
                                goto bad;
                        quad[q++] = v;
                }
                if (q == 4) {
                        unsigned v = (unsigned)quad[0] << 18 | (unsigned)quad[1] << 12 |
                                     (unsigned)quad[2] << 6 | (unsigned)quad[3];
                        out[n++] = (unsigned char)(v >> 16);
                        if (pad < 2)
                                out[n++] = (unsigned char)(v >> 8);
                        if (pad < 1)
                                out[n++] = (unsigned char)v;
                        q = 0;
                        if (pad) {
                                /* Padding ends the input (Go: trailing data is an error). */
                                for (i++; i < len; i++)
                                        if (s[i] != '\r' && s[i] != '\n')
                                                goto bad;
                                break;
                        }
                }
        }
        if (q != 0)
                goto bad;
        *ret = out;
        *ret_len = n;
        return 0;
bad:
        free(out);
        if (bad_offset)
                *bad_offset = i;
        return -EINVAL;
}
