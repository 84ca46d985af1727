/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parsers for cgroup files, /proc files and the kubelet's map flags. Pure functions: no I/O,
 * no allocation; spans point into the input.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <nodecm/cgroups.h>

/* LEN without one trailing newline. */
static size_t chomp(const char *s, size_t len)
{
        if (len > 0 && s[len - 1] == '\n')
                len--;
        return len;
}

static int parse_u64_span(const char *s, size_t len, uint64_t *ret)
{
        uint64_t v = 0;

        if (len == 0)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        *ret = v;
        return 0;
}

static int parse_i64_span(const char *s, size_t len, int64_t *ret)
{
        bool neg = false;
        uint64_t u;
        int r;

        if (len > 0 && (s[0] == '-' || s[0] == '+')) {
                neg = s[0] == '-';
                s++;
                len--;
        }
        r = parse_u64_span(s, len, &u);
        if (r < 0)
                return r;
        if (neg) {
                if (u > (uint64_t)INT64_MAX + 1)
                        return -ERANGE;
                *ret = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
        } else {
                if (u > (uint64_t)INT64_MAX)
                        return -ERANGE;
                *ret = (int64_t)u;
        }
        return 0;
}

int ncm_cgroup_parse_int64(const char *s, int64_t *ret)
{
        size_t len = chomp(s, strlen(s));
        int64_t v;
        int r = parse_i64_span(s, len, &v);

        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

int ncm_cgroup_parse_limit(const char *s, int64_t *ret)
{
        size_t len = chomp(s, strlen(s));
        uint64_t u;
        int r;

        if (len == 3 && memcmp(s, "max", 3) == 0) {
                *ret = NCM_CGROUP_LIMIT_MAX;
                return 0;
        }
        r = parse_u64_span(s, len, &u);
        if (r < 0)
                return r;
        /* memory.limit_in_bytes reads 9223372036854771712 when unlimited: still an int64.
         * Larger values (a u64 "max") are unlimited too. */
        *ret = u > (uint64_t)INT64_MAX ? NCM_CGROUP_LIMIT_MAX : (int64_t)u;
        return 0;
}

int ncm_cgroup_parse_cpu_max(const char *s, int64_t *ret_quota, int64_t *ret_period)
{
        size_t len = chomp(s, strlen(s));
        const char *sp = memchr(s, ' ', len);
        int64_t quota, period;
        uint64_t u;
        int r;

        if (!sp)
                return -EINVAL;
        if (sp - s == 3 && memcmp(s, "max", 3) == 0) {
                quota = -1;
        } else {
                r = parse_u64_span(s, (size_t)(sp - s), &u);
                if (r < 0)
                        return r;
                if (u > (uint64_t)INT64_MAX)
                        return -ERANGE;
                quota = (int64_t)u;
        }
        r = parse_u64_span(sp + 1, len - (size_t)(sp + 1 - s), &u);
        if (r < 0)
                return r;
        if (u == 0)
                return -EINVAL;
        if (u > (uint64_t)INT64_MAX)
                return -ERANGE;
        period = (int64_t)u;
        *ret_quota = quota;
        *ret_period = period;
        return 0;
}

int ncm_cgroup_parse_proc_cgroup_line(const char *line, size_t len, ncm_cgroup_proc_entry *ret)
{
        const char *c1, *c2;
        uint64_t id;
        ncm_cgroup_proc_entry e;
        int r;

        len = chomp(line, len);
        if (memchr(line, '\n', len) || memchr(line, '\0', len))
                return -EINVAL;
        c1 = memchr(line, ':', len);
        if (!c1)
                return -EINVAL;
        c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line));
        if (!c2)
                return -EINVAL;
        r = parse_u64_span(line, (size_t)(c1 - line), &id);
        if (r < 0)
                return r;
        if (id > UINT32_MAX)
                return -ERANGE;
        e.id = (uint32_t)id;
        e.controllers = c1 + 1;
        e.controllers_len = (size_t)(c2 - c1 - 1);
        e.path = c2 + 1;
        e.path_len = len - (size_t)(c2 + 1 - line);
        if (e.path_len == 0 || e.path[0] != '/')
                return -EINVAL;
        /* v2 entries ("0::/x") have no controllers; v1 ones always have some. */
        if ((e.id == 0) != (e.controllers_len == 0))
                return -EINVAL;
        *ret = e;
        return 0;
}

/* Next space-separated field of [*p, end). */
static bool next_field(const char **p, const char *end, const char **ret, size_t *ret_len)
{
        const char *s = *p, *e;

        if (s >= end)
                return false;
        e = memchr(s, ' ', (size_t)(end - s));
        if (!e)
                e = end;
        if (e == s)
                return false; /* empty field: two spaces */
        *ret = s;
        *ret_len = (size_t)(e - s);
        *p = e < end ? e + 1 : end;
        return true;
}

int ncm_cgroup_parse_mountinfo_line(const char *line, size_t len, ncm_mountinfo_entry *ret)
{
        const char *p = line, *end, *f, *devs;
        size_t fl, devs_len;
        uint64_t u;
        ncm_mountinfo_entry e;
        bool sep = false;
        int r;

        len = chomp(line, len);
        if (memchr(line, '\n', len) || memchr(line, '\0', len))
                return -EINVAL;
        end = line + len;
        if (!next_field(&p, end, &f, &fl))
                return -EINVAL;
        r = parse_u64_span(f, fl, &u);
        if (r < 0)
                return r;
        if (u > UINT32_MAX)
                return -ERANGE;
        e.id = (uint32_t)u;
        if (!next_field(&p, end, &f, &fl))
                return -EINVAL;
        r = parse_u64_span(f, fl, &u);
        if (r < 0)
                return r;
        if (u > UINT32_MAX)
                return -ERANGE;
        e.parent_id = (uint32_t)u;
        /* major:minor */
        if (!next_field(&p, end, &devs, &devs_len))
                return -EINVAL;
        {
                const char *colon = memchr(devs, ':', devs_len);
                uint64_t d;
                if (!colon || parse_u64_span(devs, (size_t)(colon - devs), &d) < 0 ||
                    parse_u64_span(colon + 1, devs_len - (size_t)(colon + 1 - devs), &d) < 0)
                        return -EINVAL;
        }
        if (!next_field(&p, end, &e.root, &e.root_len))
                return -EINVAL;
        if (!next_field(&p, end, &e.mount_point, &e.mount_point_len))
                return -EINVAL;
        if (!next_field(&p, end, &f, &fl)) /* mount options */
                return -EINVAL;
        /* Optional fields until the lone "-". */
        while (next_field(&p, end, &f, &fl)) {
                if (fl == 1 && f[0] == '-') {
                        sep = true;
                        break;
                }
        }
        if (!sep)
                return -EINVAL;
        if (!next_field(&p, end, &e.fstype, &e.fstype_len))
                return -EINVAL;
        if (!next_field(&p, end, &f, &fl)) /* source */
                return -EINVAL;
        if (!next_field(&p, end, &e.super_options, &e.super_options_len))
                return -EINVAL;
        if (p != end)
                return -EINVAL;
        if (e.root[0] != '/' || e.mount_point[0] != '/')
                return -EINVAL;
        *ret = e;
        return 0;
}

int ncm_cgroup_unescape_mount_path(const char *s, size_t len, char *buf, size_t size)
{
        size_t o = 0;

        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (c == '\0')
                        return -EINVAL;
                if (c == '\\') {
                        int v = 0;
                        if (len - i < 4)
                                return -EINVAL;
                        for (size_t k = 1; k <= 3; k++) {
                                char d = s[i + k];
                                if (d < '0' || d > '7')
                                        return -EINVAL;
                                v = v * 8 + (d - '0');
                        }
                        if (v == 0 || v > 255)
                                return -EINVAL;
                        c = (char)v;
                        i += 3;
                }
                if (o + 1 >= size)
                        return -ENAMETOOLONG;
                buf[o++] = c;
        }
        if (size == 0)
                return -ENAMETOOLONG;
        buf[o] = '\0';
        return 0;
}

static bool is_space(char c)
{
        /* Go's strings.TrimSpace: ASCII white space (Unicode spaces are not expected here). */
        return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void trim(const char **s, size_t *len)
{
        while (*len > 0 && is_space(**s)) {
                (*s)++;
                (*len)--;
        }
        while (*len > 0 && is_space((*s)[*len - 1]))
                (*len)--;
}

int ncm_cgroup_parse_map_flag(const char *s, char sep, ncm_cgroup_pair_fn fn, void *userdata,
                              ncm_error *err)
{
        const char *p = s;

        for (;;) {
                const char *comma = strchr(p, ',');
                size_t plen = comma ? (size_t)(comma - p) : strlen(p);
                if (plen > 0) {
                        const char *eq = memchr(p, sep, plen);
                        const char *k = p, *v;
                        size_t kl, vl;
                        int r;
                        if (!eq)
                                return ncm_error_set(err, EINVAL,
                                                     "malformed pair, expect string%cstring", sep);
                        kl = (size_t)(eq - p);
                        v = eq + 1;
                        vl = plen - kl - 1;
                        trim(&k, &kl);
                        trim(&v, &vl);
                        r = fn(k, kl, v, vl, userdata);
                        if (r < 0)
                                return r;
                }
                if (!comma)
                        break;
                p = comma + 1;
        }
        return 0;
}

int ncm_cgroup_parse_meminfo_total(const char *text, int64_t *ret_bytes)
{
        const char *p = text;

        while (*p) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t)(nl - p) : strlen(p);
                if (len > 9 && memcmp(p, "MemTotal:", 9) == 0) {
                        const char *v = p + 9;
                        size_t vl = len - 9;
                        uint64_t kb;
                        int r;
                        trim(&v, &vl);
                        if (vl < 3 || memcmp(v + vl - 3, " kB", 3) != 0)
                                return -EINVAL;
                        vl -= 3;
                        trim(&v, &vl);
                        r = parse_u64_span(v, vl, &kb);
                        if (r < 0)
                                return r;
                        if (kb > (uint64_t)INT64_MAX / 1024)
                                return -ERANGE;
                        *ret_bytes = (int64_t)kb * 1024;
                        return 0;
                }
                if (!nl)
                        break;
                p = nl + 1;
        }
        return -ENOENT;
}
