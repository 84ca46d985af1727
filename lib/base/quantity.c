/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes quantities. The value is mant_ * 10^exp_, |mant_| <= 10^38 - 1, kept normalised:
 * no trailing decimal zero in the mantissa (unless exp_ is INT32_MAX) and exp_ = 0 for zero.
 * Normalising makes exp_ the largest exponent the value allows, which the comparison, the
 * rounding and the canonical text rely on.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/quantity.h>

__extension__ typedef unsigned __int128 u128;

#define MAX_DIGITS 38
#define NANO (-9)

/* 10^0 .. 10^38: all fit in an unsigned 128-bit integer (10^38 < 2^127). */
static u128 pow10_u128(unsigned k)
{
        u128 p = 1;
        while (k--)
                p *= 10;
        return p;
}

static u128 max_mant(void)
{
        return pow10_u128(MAX_DIGITS) - 1;
}

static unsigned ndigits(u128 m)
{
        unsigned n = 1;
        while (m >= 10) {
                m /= 10;
                n++;
        }
        return n;
}

static u128 magnitude(const ncm_quantity *q)
{
        return q->mant_ < 0 ? (u128)0 - (u128)q->mant_ : (u128)q->mant_;
}

/*
 * Build a normalised quantity from a sign, a magnitude and an exponent. -ERANGE when the
 * magnitude cannot be brought within 38 digits or the exponent outside int32.
 */
static int make(bool neg, u128 mag, int64_t exp, ncm_quantity_format format, ncm_quantity *ret)
{
        if (mag == 0) {
                *ret = (ncm_quantity){0, 0, format};
                return 0;
        }
        while (mag % 10 == 0 && exp < INT32_MAX) {
                mag /= 10;
                exp++;
        }
        if (exp < INT32_MIN || exp > INT32_MAX || mag > max_mant())
                return -ERANGE;
        ret->mant_ = neg ? -(ncm_int128)mag : (ncm_int128)mag;
        ret->exp_ = (int32_t)exp;
        ret->format = format;
        return 0;
}

ncm_quantity ncm_quantity_from_scaled(int64_t value, int32_t scale, ncm_quantity_format format)
{
        ncm_quantity q;
        u128 mag = value < 0 ? (u128)0 - (u128)(ncm_int128)value : (u128)value;
        /* 19 digits at most and an int32 exponent: make() cannot fail. */
        (void)make(value < 0, mag, scale, format, &q);
        return q;
}

ncm_quantity ncm_quantity_from_int(int64_t value, ncm_quantity_format format)
{
        return ncm_quantity_from_scaled(value, 0, format);
}

/* --- parsing --- */

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static bool is_suffix_char(char c)
{
        return c != '\0' && strchr("eEinumkKMGTP", c) != NULL;
}

static int fail(ncm_error *err, const char *what)
{
        return ncm_error_set(err, EINVAL, "%s", what);
}

/* strconv.ParseInt(s, 10, 64) acceptance: optional sign, at least one digit, fits int64. */
static bool go_parse_int64(const char *s, size_t n, int64_t *ret)
{
        bool neg = false;
        uint64_t v = 0, limit;
        size_t i = 0;

        if (i < n && (s[i] == '+' || s[i] == '-'))
                neg = s[i++] == '-';
        if (i == n)
                return false;
        limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        for (; i < n; i++) {
                if (!is_digit(s[i]))
                        return false;
                if (v > (limit - (uint64_t)(s[i] - '0')) / 10)
                        return false;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        *ret = neg ? (int64_t)(0 - v) : (int64_t)v;
        return true;
}

typedef struct suffix_info {
        int base;    /* 10 or 2 */
        int32_t exp; /* power of BASE */
        ncm_quantity_format format;
} suffix_info;

static bool interpret_suffix(const char *s, size_t n, suffix_info *ret)
{
        static const struct {
                const char *text;
                int base;
                int32_t exp;
        } table[] = {
                        {"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3},
                        {"k", 10, 3},  {"M", 10, 6},  {"G", 10, 9},  {"T", 10, 12},
                        {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
                        {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
        };
        int64_t e;

        for (size_t i = 0; i < NCM_ELEMENTSOF(table); i++) {
                if (strlen(table[i].text) == n && memcmp(table[i].text, s, n) == 0) {
                        ret->base = table[i].base;
                        ret->exp = table[i].exp;
                        ret->format = table[i].base == 2 ? NCM_QUANTITY_BINARY_SI
                                                         : NCM_QUANTITY_DECIMAL_SI;
                        return true;
                }
        }
        if (n > 1 && (s[0] == 'e' || s[0] == 'E')) {
                /* The scale is an int32 that apimachinery negates, so INT32_MIN is out too. */
                if (!go_parse_int64(s + 1, n - 1, &e) || e < -INT32_MAX || e > INT32_MAX)
                        return false;
                ret->base = 10;
                ret->exp = (int32_t)e;
                ret->format = NCM_QUANTITY_DECIMAL_EXPONENT;
                return true;
        }
        return false;
}

/* Digits D[0..N) (no leading or trailing zero, N >= 1) into a magnitude. */
static int digits_to_u128(const char *d, size_t n, unsigned extra_zeros, u128 *ret)
{
        u128 v = 0;
        if (n + extra_zeros > MAX_DIGITS)
                return -ERANGE;
        for (size_t i = 0; i < n; i++)
                v = v * 10 + (u128)(d[i] - '0');
        *ret = v * pow10_u128(extra_zeros);
        return 0;
}

/*
 * A decimal value: the digits NUM (leading zeros already gone) then DENOM, times 10^EXP10,
 * rounded up to 1n.
 */
static int decimal_value(const char *num, size_t nnum, const char *denom, size_t ndenom,
                         int32_t exp10, bool neg, ncm_quantity_format format, ncm_quantity *ret)
{
        /*
         * The digits are not contiguous when there is a '.', so work on positions 0..len-1
         * of the virtual string NUM DENOM.
         */
        size_t len = nnum + ndenom, first = 0, last;
        int64_t exp = (int64_t)exp10 - (int64_t)ndenom;
        char buf[MAX_DIGITS];
        size_t nbuf = 0;
        u128 mag;
        bool round_up = false;

#define DIGIT(i) ((i) < nnum ? num[(i)] : denom[(i)-nnum])
        while (first < len && DIGIT(first) == '0')
                first++;
        if (first == len)
                return make(neg, 0, 0, format, ret);
        last = len;
        while (DIGIT(last - 1) == '0') {
                last--;
                exp++;
        }
        if (exp < NANO) {
                /* Everything below 1n goes; the last digit is non-zero, so round up. */
                int64_t drop = NANO - exp;
                round_up = true;
                if ((uint64_t)drop >= last - first)
                        last = first;
                else
                        last -= (size_t)drop;
                exp = NANO;
        }
        if (last - first > MAX_DIGITS)
                return -ERANGE;
        for (size_t i = first; i < last; i++)
                buf[nbuf++] = DIGIT(i);
#undef DIGIT
        mag = 0;
        if (nbuf > 0) {
                unsigned extra = 0;
                /* An exponent beyond int32 keeps its zeros in the mantissa instead. */
                if (exp > INT32_MAX) {
                        if (exp - INT32_MAX > MAX_DIGITS)
                                return -ERANGE;
                        extra = (unsigned)(exp - INT32_MAX);
                        exp = INT32_MAX;
                }
                if (digits_to_u128(buf, nbuf, extra, &mag) < 0)
                        return -ERANGE;
        }
        if (round_up)
                mag++;
        return make(neg, mag, exp, format, ret);
}

/*
 * A binary-SI value: (NUM.DENOM) * 2^SHIFT, rounded up to 1n, capped at 2^63-1 in magnitude.
 */
static int binary_value(const char *num, size_t nnum, const char *denom, size_t ndenom,
                        unsigned shift, bool neg, bool no_cap, ncm_quantity *ret)
{
        const u128 cap_nanos = (u128)INT64_MAX * 1000000000u;
        uint64_t n = 0, carry = 0;
        unsigned frac[9] = {0};
        bool sticky = false, capped = false;
        u128 whole, nanos = 0;
        ncm_quantity_format format = NCM_QUANTITY_BINARY_SI;

        while (ndenom > 0 && denom[ndenom - 1] == '0')
                ndenom--;
        /* 10^19 * 1024 is already above the cap. */
        if (nnum > 19) {
                capped = true;
        } else {
                for (size_t i = 0; i < nnum; i++)
                        n = n * 10 + (uint64_t)(num[i] - '0');
                /*
                 * Multiply the fraction by 2^SHIFT one digit at a time from its least
                 * significant end: d * 2^60 + carry stays below 2^64, and only the first nine
                 * digits of the product (and whether any later one is non-zero) matter.
                 */
                for (size_t j = ndenom; j > 0; j--) {
                        uint64_t t = ((uint64_t)(denom[j - 1] - '0') << shift) + carry;
                        unsigned digit = (unsigned)(t % 10);
                        carry = t / 10;
                        if (j > 9)
                                sticky |= digit != 0;
                        else
                                frac[j - 1] = digit;
                }
                whole = ((u128)n << shift) + carry;
                if (whole > (u128)INT64_MAX) {
                        capped = true;
                } else {
                        nanos = whole;
                        for (int j = 0; j < 9; j++)
                                nanos = nanos * 10 + frac[j];
                        if (sticky)
                                nanos++;
                        capped = nanos > cap_nanos;
                }
        }
        if (capped && no_cap)
                return -EOVERFLOW;
        if (capped)
                nanos = cap_nanos;
        if (nanos > 0 && nanos < 1000000000u)
                format = NCM_QUANTITY_DECIMAL_SI;
        return make(neg, nanos, NANO, format, ret);
}

int ncm_quantity_parse_flags(const char *s, size_t len, unsigned flags, ncm_quantity *ret,
                             ncm_error *err)
{
        size_t pos = 0, num_start, num_end, denom_start = 0, denom_end = 0, suffix_start;
        bool neg = false, value_has_digit = false;
        suffix_info suf;
        ncm_quantity q;
        int r;

        if (len == 0)
                return fail(err, NCM_QUANTITY_ERR_FORMAT);
        if (len == 1 && s[0] == '0') {
                *ret = NCM_QUANTITY_ZERO;
                return 0;
        }
        if (s[0] == '-' || s[0] == '+')
                neg = s[pos++] == '-';
        while (pos < len && s[pos] == '0') {
                pos++;
                value_has_digit = true;
        }
        if (pos == len) {
                /* Only a sign and zeros: apimachinery stops here with zero, no suffix. */
                *ret = NCM_QUANTITY_ZERO;
                return 0;
        }
        num_start = pos;
        while (pos < len && is_digit(s[pos]))
                pos++;
        num_end = pos;
        if (pos < len && s[pos] == '.') {
                pos++;
                denom_start = pos;
                while (pos < len && is_digit(s[pos]))
                        pos++;
                denom_end = pos;
        }
        value_has_digit |= num_end > num_start || denom_end > denom_start;

        suffix_start = pos;
        while (pos < len && is_suffix_char(s[pos]))
                pos++;
        if (pos < len && (s[pos] == '-' || s[pos] == '+'))
                pos++;
        while (pos < len && is_digit(s[pos]))
                pos++;
        if (pos < len)
                return fail(err, NCM_QUANTITY_ERR_FORMAT);

        if (!interpret_suffix(s + suffix_start, len - suffix_start, &suf))
                return fail(err, NCM_QUANTITY_ERR_SUFFIX);

        /*
         * apimachinery takes an arbitrary-precision path for values its int64 fast path does
         * not cover (more than 1n precision, or Pi/Ei), and that path rejects a number part
         * without any digit ("-", ".", "-.").
         */
        if (!value_has_digit &&
            ((suf.base == 10 && suf.exp < NANO) || (suf.base == 2 && suf.exp >= 50)))
                return fail(err, NCM_QUANTITY_ERR_NUMERIC);

        if (suf.base == 2)
                r = binary_value(s + num_start, num_end - num_start, s + denom_start,
                                 denom_end - denom_start, (unsigned)suf.exp, neg,
                                 (flags & NCM_QUANTITY_NO_CAP) != 0, &q);
        else
                r = decimal_value(s + num_start, num_end - num_start, s + denom_start,
                                  denom_end - denom_start, suf.exp, neg, suf.format, &q);
        if (r == -EOVERFLOW)
                return ncm_error_set(err, ERANGE, "quantity is larger than %lld",
                                     (long long)INT64_MAX);
        if (r < 0)
                return ncm_error_set(err, ERANGE, "quantity needs more than %d significant digits",
                                     MAX_DIGITS);
        *ret = q;
        return 0;
}

int ncm_quantity_parse_n(const char *s, size_t len, ncm_quantity *ret, ncm_error *err)
{
        return ncm_quantity_parse_flags(s, len, 0, ret, err);
}

int ncm_quantity_parse(const char *s, ncm_quantity *ret, ncm_error *err)
{
        return ncm_quantity_parse_n(s, strlen(s), ret, err);
}

/* --- values --- */

int ncm_quantity_sign(const ncm_quantity *q)
{
        return q->mant_ < 0 ? -1 : q->mant_ > 0;
}

bool ncm_quantity_is_zero(const ncm_quantity *q)
{
        return q->mant_ == 0;
}

int64_t ncm_quantity_scaled_value(const ncm_quantity *q, int32_t scale)
{
        int64_t d = (int64_t)q->exp_ - scale;
        bool neg = q->mant_ < 0;
        u128 mag = magnitude(q), v;

        if (mag == 0)
                return 0;
        if (d >= 0) {
                u128 limit = neg ? (u128)INT64_MAX + 1 : (u128)INT64_MAX;
                if (d > MAX_DIGITS || mag > limit / pow10_u128((unsigned)d))
                        return neg ? INT64_MIN : INT64_MAX;
                v = mag * pow10_u128((unsigned)d);
        } else if (-d > MAX_DIGITS) {
                v = 1; /* |q| < 10^38 * 10^exp <= 10^scale: only the rounding unit is left */
        } else {
                u128 p = pow10_u128((unsigned)-d);
                v = mag / p + (mag % p != 0);
                if (v > (neg ? (u128)INT64_MAX + 1 : (u128)INT64_MAX))
                        return neg ? INT64_MIN : INT64_MAX;
        }
        return neg ? (int64_t)(0 - (uint64_t)v) : (int64_t)v;
}

int64_t ncm_quantity_value(const ncm_quantity *q)
{
        return ncm_quantity_scaled_value(q, 0);
}

int64_t ncm_quantity_milli_value(const ncm_quantity *q)
{
        return ncm_quantity_scaled_value(q, -3);
}

bool ncm_quantity_is_integer(const ncm_quantity *q)
{
        /* Go's int64 multiplication wraps; unsigned arithmetic reproduces it without UB. */
        uint64_t v = (uint64_t)ncm_quantity_value(q);
        return (int64_t)(v * 1000u) == ncm_quantity_milli_value(q);
}

int ncm_quantity_cmp(const ncm_quantity *a, const ncm_quantity *b)
{
        int sa = ncm_quantity_sign(a), sb = ncm_quantity_sign(b);
        u128 ma, mb;
        int64_t ea, eb;

        if (sa != sb)
                return sa < sb ? -1 : 1;
        if (sa == 0)
                return 0;
        ma = magnitude(a);
        mb = magnitude(b);
        /* Position of the leading digit decides unless it is the same for both. */
        ea = (int64_t)a->exp_ + ndigits(ma);
        eb = (int64_t)b->exp_ + ndigits(mb);
        if (ea != eb)
                return ea > eb ? sa : -sa;
        /* Same leading position: aligning cannot exceed the longer mantissa's 38 digits. */
        if (a->exp_ > b->exp_)
                ma *= pow10_u128((unsigned)(a->exp_ - b->exp_));
        else
                mb *= pow10_u128((unsigned)(b->exp_ - a->exp_));
        if (ma == mb)
                return 0;
        return ma > mb ? sa : -sa;
}

bool ncm_quantity_equal(const ncm_quantity *a, const ncm_quantity *b)
{
        return ncm_quantity_cmp(a, b) == 0;
}

/* M * 10^K as a signed 128-bit value with at most 38 digits, or false. */
static bool scale_up(ncm_int128 m, int64_t k, ncm_int128 *ret)
{
        u128 mag = m < 0 ? (u128)0 - (u128)m : (u128)m;
        if (k > MAX_DIGITS || mag > max_mant() / pow10_u128((unsigned)k))
                return false;
        mag *= pow10_u128((unsigned)k);
        *ret = m < 0 ? -(ncm_int128)mag : (ncm_int128)mag;
        return true;
}

int ncm_quantity_add(ncm_quantity *q, const ncm_quantity *y)
{
        ncm_int128 a, b, sum;
        int32_t e;
        ncm_quantity r;

        if (q->mant_ == 0) {
                ncm_quantity_format f = y->format;
                *q = *y;
                q->format = f;
                return 0;
        }
        if (y->mant_ == 0)
                return 0;
        e = q->exp_ < y->exp_ ? q->exp_ : y->exp_;
        if (!scale_up(q->mant_, (int64_t)q->exp_ - e, &a) ||
            !scale_up(y->mant_, (int64_t)y->exp_ - e, &b))
                return -ERANGE;
        /* Two 38-digit mantissas fit; their sum may not, and then it has 39 digits anyway. */
        if (__builtin_add_overflow(a, b, &sum))
                return -ERANGE;
        if (make(sum < 0, sum < 0 ? (u128)0 - (u128)sum : (u128)sum, e, q->format, &r) < 0)
                return -ERANGE;
        *q = r;
        return 0;
}

void ncm_quantity_neg(ncm_quantity *q)
{
        q->mant_ = -q->mant_;
}

int ncm_quantity_sub(ncm_quantity *q, const ncm_quantity *y)
{
        ncm_quantity ny = *y;
        ncm_quantity_neg(&ny);
        return ncm_quantity_add(q, &ny);
}

bool ncm_quantity_round_up(ncm_quantity *q, int32_t scale)
{
        int64_t k = (int64_t)scale - q->exp_;
        u128 mag = magnitude(q), v;

        /* Normalised: a multiple of 10^scale already has exp_ >= scale. */
        if (mag == 0 || k <= 0)
                return true;
        v = k > MAX_DIGITS ? 1 : mag / pow10_u128((unsigned)k) + 1;
        (void)make(q->mant_ < 0, v, scale, q->format, q);
        return false;
}

/* --- canonical text --- */

static char *put_u128(char *p, u128 v)
{
        char tmp[40];
        size_t n = 0;
        do {
                tmp[n++] = (char)('0' + (int)(v % 10));
                v /= 10;
        } while (v);
        while (n)
                *p++ = tmp[--n];
        return p;
}

/* DecimalSI / DecimalExponent: mantissa with the exponent lowered to a multiple of 3. */
static void format_decimal(const ncm_quantity *q, ncm_quantity_format format, char *p)
{
        static const char *const si[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
        u128 mag = magnitude(q);
        int64_t e = q->exp_, e3;

        /* zeros stay in the mantissa past an int32 exponent, which the text must read back as */
        while (mag % 10 == 0 && e < INT32_MAX) {
                mag /= 10;
                e++;
        }
        e3 = e >= 0 ? e / 3 * 3 : -((-e + 2) / 3 * 3);
        p = put_u128(p, mag);
        for (int64_t i = e3; i < e; i++)
                *p++ = '0';
        if (format == NCM_QUANTITY_DECIMAL_SI && e3 >= -9 && e3 <= 18)
                strcpy(p, si[(e3 + 9) / 3]);
        else if (format == NCM_QUANTITY_DECIMAL_SI || e3 != 0)
                /* Past "E" or below "n" decimal SI falls back to exponent notation. */
                sprintf(p, "e%lld", (long long)e3);
        else
                *p = '\0';
}

char *ncm_quantity_to_string(const ncm_quantity *q, char buf[NCM_QUANTITY_STRLEN])
{
        static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        ncm_quantity_format format = q->format;
        char *p = buf;

        if (q->mant_ == 0) {
                strcpy(buf, "0");
                return buf;
        }
        if (q->mant_ < 0)
                *p++ = '-';
        if (format == NCM_QUANTITY_BINARY_SI) {
                ncm_quantity lo = ncm_quantity_from_int(-1024, NCM_QUANTITY_DECIMAL_SI);
                ncm_quantity hi = ncm_quantity_from_int(1024, NCM_QUANTITY_DECIMAL_SI);
                u128 mag = magnitude(q), v;
                unsigned e = 0;

                /* Small values and fractions are shown in decimal SI rather than rounded. */
                if ((ncm_quantity_cmp(q, &lo) > 0 && ncm_quantity_cmp(q, &hi) < 0) || q->exp_ < 0) {
                        format_decimal(q, NCM_QUANTITY_DECIMAL_SI, p);
                        return buf;
                }
                if (q->exp_ > MAX_DIGITS || mag > ~(u128)0 / pow10_u128((unsigned)q->exp_)) {
                        format_decimal(q, NCM_QUANTITY_DECIMAL_EXPONENT, p);
                        return buf;
                }
                v = mag * pow10_u128((unsigned)q->exp_);
                while (v >= 1024 && v % 1024 == 0) {
                        v /= 1024;
                        e++;
                }
                if (e >= NCM_ELEMENTSOF(bin)) {
                        /* Past "Ei" there is no binary suffix: the exact decimal form. */
                        format_decimal(q, NCM_QUANTITY_DECIMAL_EXPONENT, p);
                        return buf;
                }
                p = put_u128(p, v);
                strcpy(p, bin[e]);
                return buf;
        }
        format_decimal(q, format, p);
        return buf;
}

void ncm_quantity_append(ncm_buf *b, const ncm_quantity *q)
{
        char buf[NCM_QUANTITY_STRLEN];
        ncm_buf_puts(b, ncm_quantity_to_string(q, buf));
}
