/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reservedMemory: the kubelet's --reserved-memory flag syntax (cliflag's ReservedMemoryVar) and
 * its configuration validation (validateReservedMemoryConfiguration), with their texts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/memorymanager.h>
#include "base/array.h"

void ncm_mem_reservations_done(ncm_mem_reservations *l)
{
        for (size_t i = 0; l && i < l->n; i++)
                free(l->r[i].type);
        if (l) {
                free(l->r);
                *l = (ncm_mem_reservations){0};
        }
}

int ncm_mem_reservations_add(ncm_mem_reservations *l, int numa, const char *type,
                             const ncm_quantity *q)
{
        size_t cap = l->n;
        ncm_mem_reservation r = {.numa = numa, .q = *q};

        r.type = strdup(type);
        if (!r.type || ncm__array_grow(l->r, cap, l->n) < 0) {
                free(r.type);
                return -ENOMEM;
        }
        /* Quantity.AsInt64: an integer that fits int64 */
        r.fits = ncm_quantity_is_integer(q) && ncm_quantity_value(q) != INT64_MAX &&
                 ncm_quantity_value(q) != INT64_MIN;
        r.bytes = r.fits ? (uint64_t)ncm_quantity_value(q) : 0;
        l->r[l->n++] = r;
        return 0;
}

static bool memory_type(const char *name)
{
        return strcmp(name, NCM_RESOURCE_MEMORY) == 0 ||
               strncmp(name, NCM_RESOURCE_HUGEPAGES_PREFIX,
                       sizeof(NCM_RESOURCE_HUGEPAGES_PREFIX) - 1) == 0;
}

#define FORMAT_ERR                                                                                 \
        "the reserved memory has incorrect format, expected "                                      \
        "numaNodeID:type=quantity[,type=quantity...], got %.*s"

/* strconv.Atoi */
static bool go_atoi(const char *s, size_t n, long long *ret)
{
        size_t i = 0;
        bool neg = false;
        long long v = 0;
        if (n > 0 && (s[0] == '+' || s[0] == '-')) {
                neg = s[0] == '-';
                i = 1;
        }
        if (i == n)
                return false;
        for (; i < n; i++) {
                if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - (s[i] - '0')) / 10)
                        return false;
                v = v * 10 + (s[i] - '0');
        }
        *ret = neg ? -v : v;
        return true;
}

static size_t count_char(const char *s, size_t n, char c)
{
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                k += s[i] == c;
        return k;
}

int ncm_mem_reservations_parse_flag(const char *s, ncm_mem_reservations *l, ncm_error *err)
{
        const char *p = s;

        if (!*s) {
                ncm_mem_reservations_done(l);
                return 0;
        }
        for (;;) {
                const char *semi = strchr(p, ';');
                size_t len = semi ? (size_t)(semi - p) : strlen(p);
                const char *colon = memchr(p, ':', len);
                const char *q, *end = p + len;
                long long id;

                if (!colon || count_char(p, len, ':') != 1)
                        return ncm_error_set(err, EINVAL, FORMAT_ERR, (int)len, p);
                if (!go_atoi(p, (size_t)(colon - p), &id) || id < INT32_MIN || id > INT32_MAX)
                        return ncm_error_set(err, EINVAL,
                                             "failed to convert the NUMA node ID, exptected "
                                             "integer, got %.*s",
                                             (int)(colon - p), p);
                q = colon + 1;
                size_t start = l->n;
                for (;;) {
                        const char *comma = memchr(q, ',', (size_t)(end - q));
                        const char *ie = comma ? comma : end;
                        const char *eq = memchr(q, '=', (size_t)(ie - q));
                        char name[256], val[256];
                        ncm_quantity qty;

                        if (!eq || count_char(q, (size_t)(ie - q), '=') != 1)
                                return ncm_error_set(err, EINVAL,
                                                     "the reserved limit has incorrect value, "
                                                     "expected type=quantatity, got %.*s",
                                                     (int)(ie - q), q);
                        snprintf(name, sizeof(name), "%.*s", (int)(eq - q), q);
                        snprintf(val, sizeof(val), "%.*s", (int)(ie - eq - 1), eq + 1);
                        if (!memory_type(name))
                                return ncm_error_set(err, EINVAL,
                                                     "memory type conversion error, unknown "
                                                     "type: \"%s\"",
                                                     name);
                        if (ncm_quantity_parse(val, &qty, NULL) < 0)
                                return ncm_error_set(err, EINVAL,
                                                     "failed to parse the quantatity, expected "
                                                     "quantatity, got %s",
                                                     val);
                        /* a repeated type of one entry replaces (a Go map) */
                        {
                                bool replaced = false;
                                for (size_t i = 0; i < l->n; i++)
                                        if (l->r[i].numa == (int)id &&
                                            strcmp(l->r[i].type, name) == 0 && i >= start) {
                                                ncm_mem_reservation *r = &l->r[i];
                                                r->q = qty;
                                                r->fits = ncm_quantity_is_integer(&qty);
                                                r->bytes = r->fits ? (uint64_t)ncm_quantity_value(
                                                                                     &qty)
                                                                   : 0;
                                                replaced = true;
                                        }
                                if (!replaced &&
                                    ncm_mem_reservations_add(l, (int)id, name, &qty) < 0)
                                        return ncm_error_set(err, ENOMEM, "out of memory");
                        }
                        if (!comma)
                                break;
                        q = comma + 1;
                }
                if (!semi)
                        return 0;
                p = semi + 1;
        }
}

int ncm_mem_reservations_validate(const ncm_mem_reservations *l, ncm_error *err)
{
        for (size_t i = 0; l && i < l->n; i++) {
                const ncm_mem_reservation *r = &l->r[i];
                if (!memory_type(r->type))
                        return ncm_error_set(err, EINVAL,
                                             "invalid configuration: the limit type \"%s\" for "
                                             "NUMA node %d is not supported, only [memory "
                                             "hugepages-<HugePageSize>] is accepted",
                                             r->type, r->numa);
                if (ncm_quantity_is_zero(&r->q))
                        return ncm_error_set(err, EINVAL,
                                             "invalid configuration: reserved memory may not be "
                                             "zero for NUMA node %d and resource \"%s\"",
                                             r->numa, r->type);
                for (size_t k = 0; k < i; k++)
                        if (l->r[k].numa == r->numa && strcmp(l->r[k].type, r->type) == 0)
                                return ncm_error_set(err, EINVAL,
                                                     "invalid configuration: the reserved memory "
                                                     "has a duplicate value for NUMA node %d and "
                                                     "resource \"%s\"",
                                                     r->numa, r->type);
        }
        return 0;
}

/* One "start-end : name" line of /proc/iomem, NUL-free, into its parts. */
static bool iomem_line(const char *s, size_t n, uint64_t *start, uint64_t *end, const char **name,
                       size_t *name_len)
{
        const char *colon = NULL, *dash, *p;
        uint64_t a = 0, b = 0;

        for (size_t i = n; i > 0; i--)
                if (s[i - 1] == ':') {
                        colon = s + i - 1;
                        break;
                }
        if (!colon)
                return false;
        dash = memchr(s, '-', (size_t)(colon - s));
        if (!dash)
                return false;
        p = s;
        while (p < dash && *p == ' ')
                p++;
        if (p == dash)
                return false;
        for (; p < dash && *p != ' '; p++) {
                int d = *p >= '0' && *p <= '9'   ? *p - '0'
                        : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                        : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                                 : -1;
                if (d < 0 || a >> 60)
                        return false;
                a = a * 16 + (uint64_t)d;
        }
        p = dash + 1;
        while (p < colon && *p == ' ')
                p++;
        if (p == colon)
                return false;
        for (; p < colon && *p != ' '; p++) {
                int d = *p >= '0' && *p <= '9'   ? *p - '0'
                        : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                        : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                                 : -1;
                if (d < 0 || b >> 60)
                        return false;
                b = b * 16 + (uint64_t)d;
        }
        if (b < a)
                return false;
        *start = a;
        *end = b;
        p = colon + 1;
        while (p < s + n && *p == ' ')
                p++;
        *name = p;
        *name_len = (size_t)(s + n - p);
        while (*name_len > 0 && (p[*name_len - 1] == ' ' || p[*name_len - 1] == '\r'))
                (*name_len)--;
        return true;
}

int ncm_mem_kernel_image_span(const char *text, size_t len, uint64_t *ret)
{
        static const char *const names[] = {"Kernel code", "Kernel data", "Kernel bss"};
        uint64_t lo = 0, hi = 0;
        bool found = false, nonzero = false;

        for (size_t i = 0; i < len;) {
                const char *nl = memchr(text + i, '\n', len - i);
                size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
                uint64_t a, b;
                const char *name;
                size_t nlen;
                if (iomem_line(text + i, n, &a, &b, &name, &nlen)) {
                        for (size_t k = 0; k < 3; k++) {
                                if (nlen != strlen(names[k]) || memcmp(name, names[k], nlen))
                                        continue;
                                if (a || b)
                                        nonzero = true;
                                if (!found || a < lo)
                                        lo = a;
                                if (!found || b > hi)
                                        hi = b;
                                found = true;
                        }
                }
                i += n + 1;
        }
        if (!found || !nonzero)
                return -ENOENT;
        *ret = hi - lo + 1;
        return 0;
}
