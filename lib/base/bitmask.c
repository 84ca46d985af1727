/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>

#include <nodecm/bitmask.h>

int ncm_bitmask_from_bits(const int *bits, size_t n, ncm_bitmask *ret, ncm_error *err)
{
        ncm_bitmask m = 0;
        for (size_t i = 0; i < n; i++) {
                if (bits[i] < 0 || bits[i] > 63)
                        return ncm_error_set(err, EINVAL, "bit number must be in range 0-63");
                m |= UINT64_C(1) << bits[i];
        }
        *ret = m;
        return 0;
}

int ncm_bitmask_to_bits(ncm_bitmask m, int bits[NCM_BITMASK_MAX_BITS])
{
        int n = 0;
        while (m) {
                bits[n++] = __builtin_ctzll(m);
                m &= m - 1;
        }
        return n;
}

void ncm_bitmask_format(ncm_bitmask m, char buf[66])
{
        int width = 2;
        int len;

        /* kubelet scans shift = 62, 60, ..., 2 and pads to shift + 2 at the first shift whose
         * power of two the value exceeds. */
        for (int shift = 62; shift >= 2; shift -= 2) {
                if (m > (UINT64_C(1) << shift)) {
                        width = shift + 2;
                        break;
                }
        }
        len = m ? 64 - __builtin_clzll(m) : 1;
        if (len < width)
                len = width;
        for (int i = 0; i < len; i++)
                buf[len - 1 - i] = (i < 64 && ((m >> i) & 1)) ? '1' : '0';
        buf[len] = '\0';
}

int ncm_bitmask_iter_init(ncm_bitmask_iter *it, const int *bits, int n, ncm_error *err)
{
        if (n < 0 || n > NCM_BITMASK_MAX_BITS)
                return ncm_error_set(err, EINVAL, "bit number must be in range 0-63");
        for (int i = 0; i < n; i++)
                if (bits[i] < 0 || bits[i] > 63)
                        return ncm_error_set(err, EINVAL, "bit number must be in range 0-63");
        memcpy(it->bits, bits, (size_t)n * sizeof(int));
        it->n = n;
        it->k = 0;
        return 0;
}

bool ncm_bitmask_iter_next(ncm_bitmask_iter *it, ncm_bitmask *ret)
{
        ncm_bitmask m = 0;
        int k = it->k;

        if (k == 0) {
                if (it->n == 0)
                        return false;
                it->k = k = 1;
                it->idx[0] = 0;
        } else {
                /* Advance the rightmost position that still has room, reset those after it. */
                int i = k - 1;
                while (i >= 0 && it->idx[i] == it->n - k + i)
                        i--;
                if (i < 0) {
                        if (k == it->n)
                                return false;
                        it->k = ++k;
                        for (int j = 0; j < k; j++)
                                it->idx[j] = j;
                } else {
                        it->idx[i]++;
                        for (int j = i + 1; j < k; j++)
                                it->idx[j] = it->idx[j - 1] + 1;
                }
        }
        for (int j = 0; j < k; j++)
                m |= UINT64_C(1) << it->bits[it->idx[j]];
        *ret = m;
        return true;
}
