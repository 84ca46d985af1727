/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "base/sorted.h"

ssize_t ncm__sorted_find(const void *v, size_t n, size_t size, size_t offset, const char *key)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const char *name = *(const char *const *)((const char *)v + mid * size + offset);
                int c = strcmp(name, key);
                if (c == 0)
                        return (ssize_t)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -(ssize_t)lo - 1;
}

void *ncm__sorted_insert(void *v, size_t n, size_t size, size_t at)
{
        char *nv = realloc(v, (n + 1) * size);

        if (!nv)
                return NULL;
        memmove(nv + (at + 1) * size, nv + at * size, (n - at) * size);
        memset(nv + at * size, 0, size);
        return nv;
}
