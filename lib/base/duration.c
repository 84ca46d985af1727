/* SPDX-License-Identifier: Apache-2.0 */
/* Go's time.ParseDuration and Duration.String(), for KubeletConfiguration durations. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/duration.h>

static const struct {
        const char *name;
        uint64_t ns;
} units[] = {
                {"ns", 1ULL},
                {"us", 1000ULL},
                {"\xc2\xb5s", 1000ULL}, /* U+00B5 micro sign */
                {"\xce\xbcs", 1000ULL}, /* U+03BC Greek mu */
                {"ms", 1000000ULL},
                {"s", 1000000000ULL},
                {"m", 60ULL * 1000000000ULL},
                {"h", 3600ULL * 1000000000ULL},
};

static int invalid(ncm_error *err, int code, const char *s)
{
        return ncm_error_set(err, code, "time: invalid duration \"%s\"", s);
}

int ncm_duration_parse(const char *orig, int64_t *ret_ns, ncm_error *err)
{
        const char *s = orig;
        uint64_t total = 0;
        bool neg = false;

        if (*s == '-' || *s == '+') {
                neg = *s == '-';
                s++;
        }
        if (strcmp(s, "0") == 0) {
                *ret_ns = 0;
                return 0;
        }
        if (!*s)
                return invalid(err, EINVAL, orig);
        while (*s) {
                uint64_t v = 0, f = 0, scale = 1, unit = 0;
                bool pre = false, post = false, overflow = false;
                size_t ul;

                if (!(*s == '.' || (*s >= '0' && *s <= '9')))
                        return invalid(err, EINVAL, orig);
                for (; *s >= '0' && *s <= '9'; s++) {
                        if (v > (UINT64_C(1) << 63) / 10)
                                return invalid(err, ERANGE, orig);
                        v = v * 10 + (uint64_t)(*s - '0');
                        if (v > UINT64_C(1) << 63)
                                return invalid(err, ERANGE, orig);
                        pre = true;
                }
                if (*s == '.') {
                        s++;
                        for (; *s >= '0' && *s <= '9'; s++) {
                                post = true;
                                if (overflow)
                                        continue;
                                if (f > (UINT64_C(1) << 63) / 10) {
                                        overflow = true; /* Go drops the remaining digits */
                                        continue;
                                }
                                f = f * 10 + (uint64_t)(*s - '0');
                                scale *= 10;
                        }
                }
                if (!pre && !post)
                        return invalid(err, EINVAL, orig);
                ul = 0;
                while (s[ul] && s[ul] != '.' && !(s[ul] >= '0' && s[ul] <= '9'))
                        ul++;
                if (ul == 0)
                        return ncm_error_set(err, EINVAL, "time: missing unit in duration \"%s\"",
                                             orig);
                for (size_t i = 0; i < NCM_ELEMENTSOF(units); i++)
                        if (strlen(units[i].name) == ul && memcmp(units[i].name, s, ul) == 0)
                                unit = units[i].ns;
                if (!unit)
                        return ncm_error_set(err, EINVAL,
                                             "time: unknown unit \"%.*s\" in duration \"%s\"",
                                             (int)ul, s, orig);
                s += ul;
                if (v > (UINT64_C(1) << 63) / unit)
                        return invalid(err, ERANGE, orig);
                v *= unit;
                if (f > 0) {
                        v += (uint64_t)((double)f * ((double)unit / (double)scale));
                        if (v > UINT64_C(1) << 63)
                                return invalid(err, ERANGE, orig);
                }
                total += v;
                if (total > UINT64_C(1) << 63)
                        return invalid(err, ERANGE, orig);
        }
        if (neg) {
                *ret_ns = total == (UINT64_C(1) << 63) ? INT64_MIN : -(int64_t)total;
                return 0;
        }
        if (total > (uint64_t)INT64_MAX)
                return invalid(err, ERANGE, orig);
        *ret_ns = (int64_t)total;
        return 0;
}

/* Go's fmtFrac: PREC fractional digits of V, trailing zeros dropped, into the end of BUF. */
static size_t fmt_frac(char *buf, size_t w, uint64_t v, int prec, uint64_t *ret_v)
{
        bool print = false;
        for (int i = 0; i < prec; i++) {
                unsigned digit = (unsigned)(v % 10);
                print = print || digit != 0;
                if (print)
                        buf[--w] = (char)('0' + digit);
                v /= 10;
        }
        if (print)
                buf[--w] = '.';
        *ret_v = v;
        return w;
}

static size_t fmt_int(char *buf, size_t w, uint64_t v)
{
        if (v == 0) {
                buf[--w] = '0';
                return w;
        }
        while (v > 0) {
                buf[--w] = (char)('0' + v % 10);
                v /= 10;
        }
        return w;
}

char *ncm_duration_format(int64_t ns, char out[NCM_DURATION_STRLEN])
{
        char buf[32];
        size_t w = sizeof(buf);
        uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

        if (u < 1000000000ULL) {
                int prec = 0;
                if (u == 0) {
                        snprintf(out, NCM_DURATION_STRLEN, "0s");
                        return out;
                }
                buf[--w] = 's';
                if (u < 1000ULL) {
                        buf[--w] = 'n';
                } else if (u < 1000000ULL) {
                        prec = 3;
                        /* the micro sign, U+00B5, as Go writes it */
                        buf[--w] = '\xb5';
                        buf[--w] = '\xc2';
                } else {
                        prec = 6;
                        buf[--w] = 'm';
                }
                w = fmt_frac(buf, w, u, prec, &u);
                w = fmt_int(buf, w, u);
        } else {
                buf[--w] = 's';
                w = fmt_frac(buf, w, u, 9, &u);
                w = fmt_int(buf, w, u % 60);
                u /= 60;
                if (u > 0) {
                        buf[--w] = 'm';
                        w = fmt_int(buf, w, u % 60);
                        u /= 60;
                        if (u > 0) {
                                buf[--w] = 'h';
                                w = fmt_int(buf, w, u);
                        }
                }
        }
        if (ns < 0)
                buf[--w] = '-';
        snprintf(out, NCM_DURATION_STRLEN, "%.*s", (int)(sizeof(buf) - w), buf + w);
        return out;
}
