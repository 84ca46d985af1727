/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <nodecm/bitmask.h>
#include <nodecm/cpuset.h>

#define WORDS (NCM_CPUSET_MAX_CPUS / 64)

/*
 * Only w[0..nw) is meaningful; words past nw are treated as zero and may hold garbage, so a
 * new set costs a malloc and no memset, and operations touch only the words in use.
 */
struct ncm_cpuset {
        unsigned nw;
        uint64_t w[WORDS];
};

static inline uint64_t word(const ncm_cpuset *s, unsigned i)
{
        return i < s->nw ? s->w[i] : 0;
}

/* Make words [nw, n) valid zeros. */
static inline void grow(ncm_cpuset *s, unsigned n)
{
        if (n > s->nw) {
                memset(s->w + s->nw, 0, (n - s->nw) * sizeof(uint64_t));
                s->nw = n;
        }
}

ncm_cpuset *ncm_cpuset_new(void)
{
        ncm_cpuset *s = malloc(sizeof(*s));
        if (s)
                s->nw = 0;
        return s;
}

ncm_cpuset *ncm_cpuset_free(ncm_cpuset *s)
{
        free(s);
        return NULL;
}

ncm_cpuset *ncm_cpuset_dup(const ncm_cpuset *s)
{
        ncm_cpuset *d = ncm_cpuset_new();
        if (d)
                ncm_cpuset_copy(d, s);
        return d;
}

void ncm_cpuset_copy(ncm_cpuset *dst, const ncm_cpuset *src)
{
        if (dst == src)
                return;
        memcpy(dst->w, src->w, src->nw * sizeof(uint64_t));
        dst->nw = src->nw;
}

void ncm_cpuset_zero(ncm_cpuset *s)
{
        s->nw = 0;
}

int ncm_cpuset_set(ncm_cpuset *s, int cpu)
{
        if (cpu < 0 || cpu >= NCM_CPUSET_MAX_CPUS)
                return -ERANGE;
        grow(s, (unsigned)cpu / 64 + 1);
        s->w[cpu / 64] |= UINT64_C(1) << (cpu % 64);
        return 0;
}

int ncm_cpuset_set_range(ncm_cpuset *s, int first, int last)
{
        if (first < 0 || last >= NCM_CPUSET_MAX_CPUS)
                return -ERANGE;
        if (first > last)
                return -EINVAL;
        grow(s, (unsigned)last / 64 + 1);
        for (int i = first / 64; i <= last / 64; i++) {
                uint64_t m = ~UINT64_C(0);
                if (i == first / 64)
                        m &= ~UINT64_C(0) << (first % 64);
                if (i == last / 64 && last % 64 != 63)
                        m &= (UINT64_C(1) << (last % 64 + 1)) - 1;
                s->w[i] |= m;
        }
        return 0;
}

void ncm_cpuset_clr(ncm_cpuset *s, int cpu)
{
        if (cpu < 0 || (unsigned)cpu / 64 >= s->nw)
                return;
        s->w[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

bool ncm_cpuset_isset(const ncm_cpuset *s, int cpu)
{
        if (cpu < 0 || (unsigned)cpu / 64 >= s->nw)
                return false;
        return (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

int ncm_cpuset_weight(const ncm_cpuset *s)
{
        int n = 0;
        for (unsigned i = 0; i < s->nw; i++)
                n += ncm_popcount64(s->w[i]);
        return n;
}

bool ncm_cpuset_is_empty(const ncm_cpuset *s)
{
        for (unsigned i = 0; i < s->nw; i++)
                if (s->w[i])
                        return false;
        return true;
}

int ncm_cpuset_first(const ncm_cpuset *s)
{
        return ncm_cpuset_next(s, -1);
}

int ncm_cpuset_last(const ncm_cpuset *s)
{
        for (unsigned i = s->nw; i-- > 0;)
                if (s->w[i])
                        return (int)(i * 64 + 63 - (unsigned)__builtin_clzll(s->w[i]));
        return -1;
}

int ncm_cpuset_next(const ncm_cpuset *s, int prev)
{
        unsigned start = prev < 0 ? 0 : (unsigned)prev + 1;
        unsigned i = start / 64;
        uint64_t w;

        if (i >= s->nw)
                return -1;
        w = s->w[i] & (~UINT64_C(0) << (start % 64));
        for (;;) {
                if (w)
                        return (int)(i * 64 + (unsigned)__builtin_ctzll(w));
                if (++i >= s->nw)
                        return -1;
                w = s->w[i];
        }
}

/* The first element >= FROM that is NOT in the set. */
static int next_clear(const ncm_cpuset *s, int from)
{
        unsigned i = (unsigned)from / 64;
        uint64_t w;

        if (i >= s->nw)
                return from;
        w = ~s->w[i] & (~UINT64_C(0) << (from % 64));
        for (;;) {
                if (w)
                        return (int)(i * 64 + (unsigned)__builtin_ctzll(w));
                if (++i >= s->nw)
                        return (int)(i * 64);
                w = ~s->w[i];
        }
}

void ncm_cpuset_or(ncm_cpuset *dst, const ncm_cpuset *a, const ncm_cpuset *b)
{
        unsigned n = a->nw > b->nw ? a->nw : b->nw;
        for (unsigned i = 0; i < n; i++) {
                uint64_t v = word(a, i) | word(b, i);
                dst->w[i] = v;
        }
        dst->nw = n;
}

void ncm_cpuset_and(ncm_cpuset *dst, const ncm_cpuset *a, const ncm_cpuset *b)
{
        unsigned n = a->nw < b->nw ? a->nw : b->nw;
        for (unsigned i = 0; i < n; i++)
                dst->w[i] = a->w[i] & b->w[i];
        dst->nw = n;
}

void ncm_cpuset_andnot(ncm_cpuset *dst, const ncm_cpuset *a, const ncm_cpuset *b)
{
        unsigned n = a->nw;
        for (unsigned i = 0; i < n; i++)
                dst->w[i] = a->w[i] & ~word(b, i);
        dst->nw = n;
}

bool ncm_cpuset_equal(const ncm_cpuset *a, const ncm_cpuset *b)
{
        unsigned n = a->nw > b->nw ? a->nw : b->nw;
        for (unsigned i = 0; i < n; i++)
                if (word(a, i) != word(b, i))
                        return false;
        return true;
}

bool ncm_cpuset_is_subset(const ncm_cpuset *sub, const ncm_cpuset *super)
{
        for (unsigned i = 0; i < sub->nw; i++)
                if (sub->w[i] & ~word(super, i))
                        return false;
        return true;
}

bool ncm_cpuset_intersects(const ncm_cpuset *a, const ncm_cpuset *b)
{
        unsigned n = a->nw < b->nw ? a->nw : b->nw;
        for (unsigned i = 0; i < n; i++)
                if (a->w[i] & b->w[i])
                        return true;
        return false;
}

int ncm_cpuset_weight_and(const ncm_cpuset *a, const ncm_cpuset *b)
{
        unsigned n = a->nw < b->nw ? a->nw : b->nw;
        int c = 0;
        for (unsigned i = 0; i < n; i++)
                c += ncm_popcount64(a->w[i] & b->w[i]);
        return c;
}

int ncm_cpuset_compare(const ncm_cpuset *a, const ncm_cpuset *b)
{
        unsigned n = a->nw > b->nw ? a->nw : b->nw;
        for (unsigned i = 0; i < n; i++) {
                uint64_t x = word(a, i), y = word(b, i);
                if (x != y) {
                        /* The lowest differing bit decides; its owner has the smaller element. */
                        uint64_t d = x ^ y;
                        return (x & d & -d) ? -1 : 1;
                }
        }
        return 0;
}

/* Decimal digits of V (0..8191) at P, returning the end; snprintf per run was the cost. */
static char *put_uint(char *p, int v)
{
        char tmp[8];
        int n = 0;
        do {
                tmp[n++] = (char)('0' + v % 10);
                v /= 10;
        } while (v);
        while (n)
                *p++ = tmp[--n];
        return p;
}

void ncm_cpuset_format_list_buf(const ncm_cpuset *s, ncm_buf *b)
{
        int cpu = ncm_cpuset_first(s);
        bool first = true;

        while (cpu >= 0) {
                char run[16], *p = run;
                int end = next_clear(s, cpu) - 1;
                if (!first)
                        *p++ = ',';
                first = false;
                p = put_uint(p, cpu);
                if (end != cpu) {
                        *p++ = '-';
                        p = put_uint(p, end);
                }
                ncm_buf_append(b, run, (size_t)(p - run));
                cpu = ncm_cpuset_next(s, end);
        }
}

char *ncm_cpuset_format_list(const ncm_cpuset *s)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_cpuset_format_list_buf(s, &b);
        return ncm_buf_steal(&b);
}

/* --- kubelet (Go) parsing --- */

enum { ATOI_OK = 0, ATOI_SYNTAX = -1, ATOI_RANGE = -2 };

/*
 * strconv.Atoi on a 64-bit platform: a fast path for fewer than 19 bytes (optional sign, then
 * digits), else ParseInt(s, 10, 0), which reports overflow as soon as it happens even when
 * garbage follows.
 */
static int go_atoi(const char *s, size_t len, long long *ret)
{
        bool neg = false;
        size_t i = 0;

        if (len > 0 && len < 19) {
                long long n = 0;
                if (s[0] == '-' || s[0] == '+') {
                        neg = s[0] == '-';
                        if (len < 2)
                                return ATOI_SYNTAX;
                        i = 1;
                }
                for (; i < len; i++) {
                        unsigned char d = (unsigned char)(s[i] - '0');
                        if (d > 9)
                                return ATOI_SYNTAX;
                        n = n * 10 + d;
                }
                *ret = neg ? -n : n;
                return ATOI_OK;
        }
        if (len == 0)
                return ATOI_SYNTAX;
        if (s[0] == '-' || s[0] == '+') {
                neg = s[0] == '-';
                i = 1;
        }
        if (i == len)
                return ATOI_SYNTAX;
        {
                const uint64_t cutoff = UINT64_MAX / 10 + 1;
                uint64_t n = 0;
                for (; i < len; i++) {
                        unsigned char d = (unsigned char)(s[i] - '0');
                        uint64_t n1;
                        if (d > 9)
                                return ATOI_SYNTAX;
                        if (n >= cutoff)
                                return ATOI_RANGE;
                        n *= 10;
                        n1 = n + d;
                        if (n1 < n)
                                return ATOI_RANGE;
                        n = n1;
                }
                if (!neg && n >= (UINT64_C(1) << 63))
                        return ATOI_RANGE;
                if (neg && n > (UINT64_C(1) << 63))
                        return ATOI_RANGE;
                *ret = neg ? (long long)(0 - n) : (long long)n;
                return ATOI_OK;
        }
}

static int atoi_error(ncm_error *err, int r, const char *s, size_t len)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_buf_puts(&b, "strconv.Atoi: parsing ");
        ncm_buf_go_quote(&b, s, len);
        ncm_buf_puts(&b, r == ATOI_RANGE ? ": value out of range" : ": invalid syntax");
        ncm_error_set(err, EINVAL, "%s", b.data ? b.data : "strconv.Atoi: invalid syntax");
        ncm_buf_done(&b);
        return -EINVAL;
}

static int range_error(ncm_error *err, long long v, const char *elem, size_t len)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_buf_go_quote(&b, elem, len);
        ncm_error_set(err, ERANGE, "CPU id %lld in %s is out of range (maximum %d)", v,
                      b.data ? b.data : "", NCM_CPUSET_MAX_CPUS - 1);
        ncm_buf_done(&b);
        return -ERANGE;
}

int ncm_cpuset_parse_list(const char *s, ncm_cpuset **ret, ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) set = ncm_cpuset_new();
        const char *p = s;

        if (!set)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (*s == '\0') {
                *ret = NCM_TAKE_PTR(set);
                return 0;
        }
        for (;;) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t)(comma - p) : strlen(p);
                const char *dash = memchr(p, '-', len);
                long long a, b;
                int r;

                if (!dash) {
                        r = go_atoi(p, len, &a);
                        if (r < 0)
                                return atoi_error(err, r, p, len);
                        b = a;
                } else {
                        size_t alen = (size_t)(dash - p);
                        r = go_atoi(p, alen, &a);
                        if (r < 0)
                                return atoi_error(err, r, p, alen);
                        r = go_atoi(dash + 1, len - alen - 1, &b);
                        if (r < 0)
                                return atoi_error(err, r, dash + 1, len - alen - 1);
                        if (a > b) {
                                ncm_buf q = NCM_BUF_INIT;
                                ncm_buf_go_quote(&q, p, len);
                                ncm_error_set(err, EINVAL, "invalid range %s (%lld > %lld)",
                                              q.data ? q.data : "", a, b);
                                ncm_buf_done(&q);
                                return -EINVAL;
                        }
                }
                /* Atoi accepts a sign, so "-1" cannot reach here but "+1" and "1--1" can. */
                if (a < 0)
                        return range_error(err, a, p, len);
                if (b >= NCM_CPUSET_MAX_CPUS)
                        return range_error(err, b, p, len);
                (void)ncm_cpuset_set_range(set, (int)a, (int)b);
                if (!comma)
                        break;
                p = comma + 1;
        }
        *ret = NCM_TAKE_PTR(set);
        return 0;
}

static size_t trimmed_len(const char *s)
{
        size_t len = strlen(s);
        while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' ' || s[len - 1] == '\t' ||
                           s[len - 1] == '\r'))
                len--;
        return len;
}

static int parse_uint(const char **pp, const char *end, int *ret)
{
        const char *p = *pp;
        long v = 0;
        if (p >= end || *p < '0' || *p > '9')
                return -EINVAL;
        while (p < end && *p >= '0' && *p <= '9') {
                v = v * 10 + (*p - '0');
                if (v >= NCM_CPUSET_MAX_CPUS)
                        v = NCM_CPUSET_MAX_CPUS; /* saturate: reported as out of range */
                p++;
        }
        *ret = (int)v;
        *pp = p;
        return 0;
}

int ncm_cpuset_parse_sysfs_list(const char *s, ncm_cpuset **ret, ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) set = ncm_cpuset_new();
        size_t len = trimmed_len(s);
        const char *p = s, *end = s + len;

        if (!set)
                return ncm_error_set(err, ENOMEM, "out of memory");
        while (p < end) {
                int a, b;
                if (parse_uint(&p, end, &a) < 0)
                        goto bad;
                b = a;
                if (p < end && *p == '-') {
                        p++;
                        if (parse_uint(&p, end, &b) < 0 || b < a)
                                goto bad;
                }
                if (b >= NCM_CPUSET_MAX_CPUS)
                        return ncm_error_set(err, ERANGE,
                                             "CPU list \"%.*s\": CPU id out of range (maximum %d)",
                                             (int)(len > 64 ? 64 : len), s,
                                             NCM_CPUSET_MAX_CPUS - 1);
                (void)ncm_cpuset_set_range(set, a, b);
                if (p == end)
                        break;
                if (*p != ',' || p + 1 == end)
                        goto bad;
                p++;
        }
        *ret = NCM_TAKE_PTR(set);
        return 0;
bad:
        return ncm_error_set(err, EINVAL, "invalid CPU list \"%.*s\"%s", (int)(len > 64 ? 64 : len),
                             s, len > 64 ? "..." : "");
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

int ncm_cpuset_parse_mask(const char *s, ncm_cpuset **ret, ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) set = ncm_cpuset_new();
        size_t len = trimmed_len(s);
        int bit = 0;
        size_t digits_in_group = 0;

        if (!set)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (len == 0)
                goto bad;
        /* Walk from the least significant end: each hex digit is 4 bits, commas separate
         * 32-bit groups of exactly 8 digits (the leading group may be shorter). */
        for (size_t i = len; i-- > 0;) {
                int v;
                if (s[i] == ',') {
                        if (digits_in_group != 8 || i == 0)
                                goto bad;
                        digits_in_group = 0;
                        continue;
                }
                v = hexval(s[i]);
                if (v < 0 || ++digits_in_group > 8)
                        goto bad;
                /* a digit's four bits never straddle a word (nor the maximum) */
                if (v && bit >= NCM_CPUSET_MAX_CPUS)
                        return ncm_error_set(err, ERANGE,
                                             "CPU mask: CPU id %d out of range (maximum %d)",
                                             bit + __builtin_ctz((unsigned)v),
                                             NCM_CPUSET_MAX_CPUS - 1);
                if (v) {
                        grow(set, (unsigned)bit / 64 + 1);
                        set->w[bit / 64] |= (uint64_t)v << (bit % 64);
                }
                bit += 4;
        }
        *ret = NCM_TAKE_PTR(set);
        return 0;
bad:
        return ncm_error_set(err, EINVAL, "invalid CPU mask \"%.*s\"%s", (int)(len > 64 ? 64 : len),
                             s, len > 64 ? "..." : "");
}
