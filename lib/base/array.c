/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"

int ncm__array_reserve(void *vp, size_t *cap, size_t n, size_t size)
{
        size_t nc = *cap ? *cap : 8;
        void *v, *nv;

        if (n < *cap)
                return 0;
        while (nc <= n && nc <= SIZE_MAX / 2)
                nc *= 2;
        if (nc <= n || size == 0 || nc > SIZE_MAX / size)
                return -ENOMEM;
        /* vp points at a T *: copied as bytes, so no T ** is ever read through a void ** */
        memcpy(&v, vp, sizeof(v));
        nv = realloc(v, nc * size);
        if (!nv)
                return -ENOMEM;
        memset((char *)nv + *cap * size, 0, (nc - *cap) * size);
        memcpy(vp, &nv, sizeof(nv));
        *cap = nc;
        return 0;
}
