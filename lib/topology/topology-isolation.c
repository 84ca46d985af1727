/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Isolated and nohz_full CPUs, read the way the kernel was told about them: its sysfs files,
 * the boot parameters as the kernel parses them (lib/cmdline.c next_arg, kernel/sched/
 * isolation.c housekeeping_isolcpus_setup, lib/bitmap-str.c bitmap_parselist), and cgroup v2's
 * isolated partitions. The parsers are pure (tests/fuzz/fuzz-isolation.c); the reader only
 * fetches files through the machine's root fd.
 *
 * The sysfs files say what the kernel did; the command line says why (the flags), and is all a
 * dump without the sysfs files gives. Both are kept by source, so `nodecm topology` shows each
 * one and the node can tell its own cgroup partitions from the administrator's.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "topology/topology-internal.h"

static const char *const source_names[NCM_ISO_N_SOURCES] = {
                [NCM_ISO_SYSFS_ISOLATED] = "sysfs isolated",
                [NCM_ISO_SYSFS_NOHZ_FULL] = "sysfs nohz_full",
                [NCM_ISO_ISOLCPUS_DOMAIN] = "isolcpus=domain",
                [NCM_ISO_ISOLCPUS_MANAGED_IRQ] = "isolcpus=managed_irq",
                [NCM_ISO_ISOLCPUS_NOHZ] = "isolcpus=nohz",
                [NCM_ISO_NOHZ_FULL] = "nohz_full=",
                [NCM_ISO_PARTITIONS] = "cgroup v2 isolated partitions",
                [NCM_ISO_GIVEN_ISOLATED] = "given isolated",
                [NCM_ISO_GIVEN_NOHZ_FULL] = "given nohz_full",
};

const char *ncm_iso_source_name(ncm_iso_source s)
{
        return (unsigned)s < NCM_ISO_N_SOURCES ? source_names[s] : NULL;
}

/* ---- bitmap_parselist ---- */

static bool end_of_str(const char *p, const char *end)
{
        return p == end || *p == '\0' || *p == '\n';
}

static bool end_of_region(const char *p, const char *end)
{
        return end_of_str(p, end) || isspace((unsigned char)*p) || *p == ',';
}

/* bitmap_getnum: "N" is LAST; a decimal otherwise (-EINVAL without digits, -EOVERFLOW). */
static int getnum(const char **p, const char *end, unsigned last, unsigned *ret)
{
        unsigned long long v = 0;
        const char *s = *p;

        if (s < end && *s == 'N') {
                *ret = last;
                *p = s + 1;
                return 0;
        }
        if (s == end || !isdigit((unsigned char)*s))
                return -EINVAL;
        for (; s < end && isdigit((unsigned char)*s); s++) {
                v = v * 10 + (unsigned)(*s - '0');
                if (v > UINT32_MAX)
                        return -EOVERFLOW;
        }
        *ret = (unsigned)v;
        *p = s;
        return 0;
}

int ncm_kernel_cpulist_parse(const char *s, size_t len, int nr_cpus, ncm_cpuset **ret)
{
        const char *p = s, *end = s + len;
        ncm_autoptr(ncm_cpuset) set = ncm_cpuset_new();
        unsigned last = nr_cpus > 0 ? (unsigned)nr_cpus - 1 : 0;

        if (!set)
                return -ENOMEM;
        if (nr_cpus <= 0 || nr_cpus > NCM_CPUSET_MAX_CPUS)
                return -ERANGE;
        for (;;) {
                unsigned start, stop, off, group;
                int r;
                /* bitmap_find_region: separators are commas and white space */
                while (!end_of_str(p, end) && (isspace((unsigned char)*p) || *p == ','))
                        p++;
                if (end_of_str(p, end))
                        break;
                if ((size_t)(end - p) >= 3 && strncasecmp(p, "all", 3) == 0) {
                        start = 0;
                        stop = last;
                        p += 3;
                } else {
                        if ((r = getnum(&p, end, last, &start)) < 0)
                                return r;
                        stop = start;
                        if (!end_of_region(p, end)) {
                                if (*p != '-')
                                        return -EINVAL;
                                p++;
                                if ((r = getnum(&p, end, last, &stop)) < 0)
                                        return r;
                        }
                }
                off = group = stop + 1;
                if (!end_of_region(p, end)) {
                        if (*p != ':')
                                return -EINVAL;
                        p++;
                        if ((r = getnum(&p, end, last, &off)) < 0)
                                return r;
                        if (p == end || *p != '/')
                                return -EINVAL;
                        p++;
                        if ((r = getnum(&p, end, last, &group)) < 0)
                                return r;
                        if (!end_of_region(p, end))
                                return -EINVAL;
                }
                /* bitmap_check_region */
                if (start > stop || group == 0 || off > group)
                        return -EINVAL;
                if (stop > last)
                        return -ERANGE;
                for (unsigned long long b = start; b <= stop; b += group) {
                        unsigned long long n = stop - b + 1 < off ? stop - b + 1 : off;
                        if (n && ncm_cpuset_set_range(set, (int)b, (int)(b + n - 1)) < 0)
                                return -ERANGE;
                }
        }
        *ret = NCM_TAKE_PTR(set);
        return 0;
}

/* ---- the command line ---- */

/*
 * lib/cmdline.c next_arg on [*P, END): one parameter, its value (NULL without '='), quotes
 * removed as the kernel removes them. Writes into the buffer it walks. Returns false at the end.
 */
static bool next_arg(char **pp, char *end, char **param, char **val)
{
        char *args = *pp;
        size_t i, equals = 0;
        bool in_quote = false, quoted = false;

        while (args < end && isspace((unsigned char)*args))
                args++;
        if (args == end || !*args)
                return false;
        if (*args == '"') {
                args++;
                in_quote = quoted = true;
        }
        for (i = 0; args + i < end && args[i]; i++) {
                if (isspace((unsigned char)args[i]) && !in_quote)
                        break;
                if (equals == 0 && args[i] == '=')
                        equals = i;
                if (args[i] == '"')
                        in_quote = !in_quote;
        }
        *param = args;
        if (!equals) {
                *val = NULL;
        } else {
                args[equals] = '\0';
                *val = args + equals + 1;
                if (**val == '"') {
                        (*val)++;
                        if (i > 0 && args[i - 1] == '"')
                                args[i - 1] = '\0';
                }
        }
        if (quoted && i > 0 && args[i - 1] == '"')
                args[i - 1] = '\0';
        if (args + i < end && args[i]) {
                args[i] = '\0';
                *pp = args + i + 1;
        } else {
                *pp = args + i;
        }
        return true;
}

/* parameq: dashes and underscores are the same. */
static bool param_is(const char *a, const char *b)
{
        for (; *a && *b; a++, b++) {
                char x = *a == '-' ? '_' : *a, y = *b == '-' ? '_' : *b;
                if (x != y)
                        return false;
        }
        return !*a && !*b;
}

/*
 * housekeeping_isolcpus_setup's flags: "nohz,", "domain,", "managed_irq," in any order,
 * unknown alphabetic flags skipped, any other flag making the kernel ignore the parameter
 * (returns false). No flag means domain. *CPUS points past the flags.
 */
static bool isolcpus_flags(const char *s, unsigned *flags, const char **cpus)
{
        static const struct {
                const char *word;
                unsigned flag;
        } words[] = {
                        {"nohz,", 1u << NCM_ISO_ISOLCPUS_NOHZ},
                        {"domain,", 1u << NCM_ISO_ISOLCPUS_DOMAIN},
                        {"managed_irq,", 1u << NCM_ISO_ISOLCPUS_MANAGED_IRQ},
        };
        unsigned f = 0;

        while (isalpha((unsigned char)*s)) {
                bool known = false;
                for (size_t k = 0; k < NCM_ELEMENTSOF(words) && !known; k++) {
                        size_t n = strlen(words[k].word);
                        if (strncmp(s, words[k].word, n) == 0) {
                                s += n;
                                f |= words[k].flag;
                                known = true;
                        }
                }
                if (known)
                        continue;
                for (; *s && *s != ','; s++)
                        if (!isalpha((unsigned char)*s) && *s != '_')
                                return false;
                if (!*s) /* the kernel steps over the terminator here: nothing is isolated */
                        return false;
                s++;
        }
        *flags = f ? f : 1u << NCM_ISO_ISOLCPUS_DOMAIN;
        *cpus = s;
        return true;
}

int ncm__iso_parse_cmdline(const char *text, size_t len, int nr_cpus, ncm_cpuset **ret)
{
        ncm_autofree char *buf = malloc(len + 1);
        char *p = buf, *end = buf + len, *param, *val;
        ncm_cpuset *out[NCM_ISO_N_SOURCES] = {0};
        int r = 0;

        if (!buf)
                return -ENOMEM;
        memcpy(buf, text, len);
        buf[len] = '\0';
        end = buf + strlen(buf); /* a NUL ends the command line, as for the kernel */
        while (r >= 0 && next_arg(&p, end, &param, &val)) {
                ncm_cpuset *cpus = NULL;
                unsigned flags = 0;
                const char *list = val;
                if (!val && strcmp(param, "--") == 0)
                        break; /* the rest is init's */
                if (!val)
                        continue;
                if (param_is(param, "nohz_full"))
                        flags = 1u << NCM_ISO_NOHZ_FULL;
                else if (!param_is(param, "isolcpus") || !isolcpus_flags(val, &flags, &list))
                        continue;
                /* housekeeping_setup ignores a list that does not parse */
                if (ncm_kernel_cpulist_parse(list, strlen(list), nr_cpus, &cpus) < 0)
                        continue;
                for (int k = 0; k < NCM_ISO_N_SOURCES && r >= 0; k++) {
                        if (!(flags & (1u << k)))
                                continue;
                        if (!out[k] && !(out[k] = ncm_cpuset_new()))
                                r = -ENOMEM;
                        else
                                ncm_cpuset_or(out[k], out[k], cpus);
                }
                ncm_cpuset_free(cpus);
        }
        for (int k = 0; k < NCM_ISO_N_SOURCES; k++) {
                if (r < 0)
                        ncm_cpuset_free(out[k]);
                else
                        ret[k] = out[k];
        }
        return r;
}

/* ---- the machine ---- */

/*
 * A cpulist file: NULL when missing. "(null)" is an unallocated mask (nohz_full without
 * nohz_full=): the empty set; some dumps pad it with spaces.
 */
static int read_list(int rootfd, const char *path, ncm_cpuset **ret, ncm_error *err)
{
        char buf[65536];
        const char *s = buf;
        ssize_t n = ncm_fs_read(rootfd, path, buf, sizeof(buf), NULL);
        int r;

        *ret = NULL;
        if (n == -ENOENT || n == -ENOTDIR)
                return 0;
        if (n < 0)
                return ncm_error_errno(err, (int)-n, "%s", path);
        while (*s == ' ' || *s == '\t')
                s++;
        if (strncmp(s, "(null)", 6) == 0)
                s = "";
        r = ncm_cpuset_parse_sysfs_list(s, ret, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s", path);
        return 0;
}

int ncm_topo_read_isolation(ncm_topo *t, int rootfd, ncm_error *err)
{
        static const char *const v2_roots[] = {"/sys/fs/cgroup/cpuset.cpus.isolated",
                                               "/sys/fs/cgroup/unified/cpuset.cpus.isolated"};
        ncm_cpuset *cmd[NCM_ISO_N_SOURCES] = {0};
        ncm_autofree char *cmdline = NULL;
        ncm_autoptr(ncm_cpuset) possible = NULL;
        const ncm_cpuset *all = ncm_topo_all_cpus_ref(t);
        size_t len = 0;
        int nr_cpus, r;

        struct {
                const char *path;
                ncm_iso_source src;
        } files[] = {
                        {"/sys/devices/system/cpu/isolated", NCM_ISO_SYSFS_ISOLATED},
                        {"/sys/devices/system/cpu/nohz_full", NCM_ISO_SYSFS_NOHZ_FULL},
        };
        for (size_t i = 0; i < NCM_ELEMENTSOF(files); i++) {
                ncm_autoptr(ncm_cpuset) s = NULL;
                if ((r = read_list(rootfd, files[i].path, &s, err)) < 0)
                        return r;
                if (s && (r = ncm_topo_set_isolation(t, files[i].src, s, err)) < 0)
                        return r;
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(v2_roots); i++) {
                ncm_autoptr(ncm_cpuset) s = NULL;
                if ((r = read_list(rootfd, v2_roots[i], &s, err)) < 0)
                        return r;
                if (s) {
                        r = ncm_topo_set_isolation(t, NCM_ISO_PARTITIONS, s, err);
                        if (r < 0)
                                return r;
                        break;
                }
        }

        /* "N" is the last possible CPU; without the file, the last one the table has */
        if ((r = read_list(rootfd, "/sys/devices/system/cpu/possible", &possible, err)) < 0)
                return r;
        nr_cpus = (possible && !ncm_cpuset_is_empty(possible) ? ncm_cpuset_last(possible)
                                                              : ncm_cpuset_last(all)) +
                  1;
        if (nr_cpus <= 0)
                return 0;
        r = ncm_fs_read_all(rootfd, "/proc/cmdline", 1 << 20, &cmdline, &len, NULL);
        if (r == -ENOENT || r == -ENOTDIR)
                return 0;
        if (r < 0)
                return ncm_error_errno(err, -r, "/proc/cmdline");
        r = ncm__iso_parse_cmdline(cmdline, len, nr_cpus, cmd);
        if (r < 0)
                return ncm_error_set(err, -r, "/proc/cmdline: out of memory");
        for (int k = 0; k < NCM_ISO_N_SOURCES; k++) {
                if (r >= 0 && cmd[k])
                        r = ncm_topo_set_isolation(t, (ncm_iso_source)k, cmd[k], err);
                ncm_cpuset_free(cmd[k]);
        }
        return r < 0 ? r : 0;
}
