/* SPDX-License-Identifier: Apache-2.0 */
/*
 * irq-load-balancing.crio.io as a plan (nodecm/cgroup-knobs.h). CRI-O writes
 * /proc/irq/default_smp_affinity and irqbalance's banned CPUs and leaves moving the interrupts
 * to irqbalance (restarted, or run once); nodecm moves every interrupt itself, so the CPUs are
 * quiet whether irqbalance runs or not, and a reconcile puts back what a running irqbalance
 * (which read its banned list when it started) spreads again.
 *
 * What comes back. The memo holds each interrupt's affinity before it was first changed
 * ("irq:N", "irq:default") and the CPUs banned last ("irq:banned"): CPUs that are no longer
 * banned return to the interrupts that had them, and an interrupt placed elsewhere meanwhile
 * (by irqbalance, or by hand) keeps its place otherwise. irqbalance's line ("irqbalance":
 * its value before, "-" when there was none) comes back when nothing is banned.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroup-knobs.h>
#include <nodecm/fs.h>

#define BANNED_KEY "irq:banned"
#define IRQBALANCE_KEY "irqbalance"
#define IRQBALANCE_VAR "IRQBALANCE_BANNED_CPUS"

int ncm_knobs_parse_mask(const char *s, size_t len, ncm_cpuset **ret)
{
        char buf[2304]; /* 8192 bits: 2048 hex digits and their commas */

        if (len >= sizeof(buf))
                return -ERANGE;
        memcpy(buf, s, len);
        buf[len] = '\0';
        return ncm_cpuset_parse_mask(buf, ret, NULL);
}

void ncm_knobs_format_mask(const ncm_cpuset *s, int nbits, ncm_buf *b)
{
        int digits = nbits > 0 ? (nbits + 3) / 4 : 1;

        for (int d = digits - 1; d >= 0; d--) {
                unsigned v = 0;
                for (int k = 0; k < 4; k++)
                        v |= (unsigned)ncm_cpuset_isset(s, d * 4 + k) << k;
                ncm_buf_putc(b, "0123456789abcdef"[v]);
                if (d && d % 8 == 0)
                        ncm_buf_putc(b, ',');
        }
}

/* Whether LINE (LEN bytes) sets the variable. */
static bool is_banned_line(const char *line, size_t len)
{
        size_t n = strlen(IRQBALANCE_VAR "=");
        return len >= n && strncmp(line, IRQBALANCE_VAR "=", n) == 0;
}

int ncm_knobs_irqbalance_edit(const char *text, size_t len, const char *mask, ncm_buf *b,
                              char **old)
{
        bool found = false;
        char *was = NULL;

        for (const char *p = text; p < text + len;) {
                const char *nl = memchr(p, '\n', (size_t)(text + len - p));
                size_t ll = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
                if (is_banned_line(p, ll)) {
                        const char *v = p + strlen(IRQBALANCE_VAR "=");
                        size_t vl = ll - strlen(IRQBALANCE_VAR "=");
                        if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
                                v++;
                                vl -= 2;
                        }
                        free(was);
                        was = strndup(v, vl);
                        if (!was)
                                return -ENOMEM;
                        if (mask && !found)
                                ncm_buf_printf(b, IRQBALANCE_VAR "=\"%s\"\n", mask);
                        found = true;
                } else {
                        ncm_buf_append(b, p, ll);
                        if (nl)
                                ncm_buf_putc(b, '\n');
                }
                p += ll + (nl ? 1 : 0);
        }
        if (mask && !found) {
                if (len && text[len - 1] != '\n')
                        ncm_buf_putc(b, '\n');
                ncm_buf_printf(b, IRQBALANCE_VAR "=\"%s\"\n", mask);
        }
        if (old)
                *old = was;
        else
                free(was);
        return ncm_buf_failed(b) ? -ENOMEM : 0;
}

/* ---- the plan ---- */

typedef struct iplan {
        int sysfd;
        const ncm_cpuset *banned, *released, *all;
        int nbits;
        ncm_knob_memo *memo;
        ncm_cgroup_plan *plan;
        unsigned *fixed;
        ncm_error *err;
} iplan;

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

static int put(const iplan *k, const char *title, const char *path, const ncm_cpuset *set,
               unsigned flags, ncm_knob_fix fix)
{
        ncm_buf b = NCM_BUF_INIT;
        int r = 0;

        ncm_knobs_format_mask(set, k->nbits, &b);
        if (ncm_buf_failed(&b) || ncm_cgroup_plan_step(k->plan, title, path) < 0 ||
            ncm_cgroup_plan_add(k->plan, NCM_CGROUP_OP_WRITE, flags, path, b.data) < 0)
                r = oom(k->err);
        else if (k->fixed)
                k->fixed[fix]++;
        ncm_buf_done(&b);
        return r;
}

/*
 * One affinity file: the banned CPUs out, the released ones back where the memo says they
 * were. An interrupt left with no CPU gets every CPU that is not banned.
 */
static int one(const iplan *k, const char *key, const char *path, unsigned flags)
{
        char buf[2304];
        ssize_t n = ncm_fs_read(k->sysfd, path, buf, sizeof(buf), NULL);
        ncm_autoptr(ncm_cpuset) cur = NULL;
        ncm_autoptr(ncm_cpuset) want = NULL;
        ncm_autoptr(ncm_cpuset) orig = NULL;
        const char *kept = ncm_knob_memo_get(k->memo, key);

        /* a file that cannot be read is an interrupt we cannot place: passed over */
        if (n < 0)
                return 0;
        buf[strcspn(buf, "\n")] = '\0';
        if (ncm_cpuset_parse_mask(buf, &cur, NULL) < 0)
                return 0; /* not a mask: nothing of ours to keep there */
        want = ncm_cpuset_dup(cur);
        if (!want)
                return oom(k->err);
        if (kept && ncm_knobs_parse_mask(kept, strlen(kept), &orig) >= 0) {
                ncm_autoptr(ncm_cpuset) back = ncm_cpuset_new();
                if (!back)
                        return oom(k->err);
                ncm_cpuset_and(back, orig, k->released);
                ncm_cpuset_or(want, want, back);
        }
        ncm_cpuset_andnot(want, want, k->banned);
        if (ncm_cpuset_is_empty(want))
                ncm_cpuset_andnot(want, k->all, k->banned);
        if (ncm_cpuset_is_empty(want) || ncm_cpuset_equal(want, cur))
                goto memo;
        if (!kept && ncm_knob_memo_keep(k->memo, key, buf) < 0)
                return oom(k->err);
        if (put(k, "irq-load-balancing", path, want, flags, NCM_KNOB_FIX_IRQ_AFFINITY) < 0)
                return -ENOMEM;
memo:
        if (ncm_cpuset_is_empty(k->banned))
                ncm_knob_memo_drop(k->memo, key);
        return 0;
}

static int plan_irqbalance(const iplan *k, const char *path)
{
        ncm_autofree char *text = NULL, *now = NULL;
        ncm_buf mask = NCM_BUF_INIT, out = NCM_BUF_INIT;
        const char *was = ncm_knob_memo_get(k->memo, IRQBALANCE_KEY);
        size_t len = 0;
        int r;

        if (!path || !*path)
                return 0;
        r = ncm_fs_read_all(k->sysfd, path, 1 << 20, &text, &len, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return ncm_error_errno(k->err, -r, "%s", path);
        if (ncm_cpuset_is_empty(k->banned)) {
                /* nothing banned: the line as it was, or none */
                if (!was)
                        return 0;
                r = ncm_knobs_irqbalance_edit(text, len, strcmp(was, "-") == 0 ? NULL : was, &out,
                                              NULL);
                ncm_knob_memo_drop(k->memo, IRQBALANCE_KEY);
        } else {
                ncm_autoptr(ncm_cpuset) want = ncm_cpuset_dup(k->banned);
                r = ncm_knobs_irqbalance_edit(text, len, "", &mask, &now);
                ncm_buf_done(&mask);
                if (r < 0 || !want) {
                        r = oom(k->err);
                        goto out;
                }
                if (!was && ncm_knob_memo_keep(k->memo, IRQBALANCE_KEY, now ? now : "-") < 0) {
                        r = oom(k->err);
                        goto out;
                }
                was = ncm_knob_memo_get(k->memo, IRQBALANCE_KEY);
                if (strcmp(was, "-") != 0) {
                        ncm_autoptr(ncm_cpuset) before = NULL;
                        if (ncm_knobs_parse_mask(was, strlen(was), &before) >= 0)
                                ncm_cpuset_or(want, want, before);
                }
                ncm_knobs_format_mask(want, k->nbits, &mask);
                if (ncm_buf_failed(&mask)) {
                        r = oom(k->err);
                        goto out;
                }
                if (now && strcmp(now, mask.data) == 0)
                        goto out;
                r = ncm_knobs_irqbalance_edit(text, len, mask.data, &out, NULL);
        }
        if (r < 0) {
                r = oom(k->err);
                goto out;
        }
        if (out.len == len && memcmp(out.data, text, len) == 0)
                goto out;
        if (ncm_cgroup_plan_step(k->plan, "irq-load-balancing: irqbalance's banned CPUs", path) <
                            0 ||
            ncm_cgroup_plan_add(k->plan, NCM_CGROUP_OP_WRITE, 0, path, out.data ? out.data : "") <
                            0)
                r = oom(k->err);
        else if (k->fixed)
                k->fixed[NCM_KNOB_FIX_IRQBALANCE]++;
out:
        ncm_buf_done(&mask);
        ncm_buf_done(&out);
        return r;
}

static bool all_digits(const char *s)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (!isdigit((unsigned char)*s))
                        return false;
        return true;
}

/* Whether the memo holds anything of the interrupts' (else nothing was ever banned). */
static bool any_irq_key(const ncm_knob_memo *m)
{
        for (size_t i = 0; i < ncm_knob_memo_count(m); i++)
                if (strncmp(ncm_knob_memo_key(m, i), "irq", 3) == 0)
                        return true;
        return false;
}

const char *ncm_knobs_irqbalance_file(int sysfd, const char *cfg)
{
        static const char *const found[] = {"/etc/sysconfig/irqbalance", "/etc/default/irqbalance"};

        if (strcmp(cfg, "none") == 0)
                return NULL;
        if (*cfg)
                return cfg;
        for (size_t i = 0; sysfd >= 0 && i < NCM_ELEMENTSOF(found); i++)
                if (ncm_fs_exists(sysfd, found[i]) > 0)
                        return found[i];
        return NULL;
}

int ncm_knobs_plan_irqs(int sysfd, const ncm_cpuset *banned, const ncm_cpuset *all_cpus,
                        const char *irqbalance, ncm_knob_memo *memo, ncm_cgroup_plan *plan,
                        unsigned *fixed, ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) released = ncm_cpuset_new();
        const char *last = ncm_knob_memo_get(memo, BANNED_KEY);
        iplan k = {sysfd, banned, released, all_cpus, ncm_cpuset_last(all_cpus) + 1,
                   memo,  plan,   fixed,    err};
        DIR *d = NULL;
        struct dirent *de;
        int r;

        if (!released)
                return oom(err);
        if (ncm_cpuset_is_empty(banned) && !any_irq_key(memo))
                return 0;
        if (last) {
                ncm_autoptr(ncm_cpuset) before = NULL;
                if (ncm_cpuset_parse_list(last, &before, NULL) >= 0)
                        ncm_cpuset_andnot(released, before, banned);
        }
        if (sysfd < 0) {
                /* planning only: what a machine with every CPU would get */
                ncm_autoptr(ncm_cpuset) want = ncm_cpuset_new();
                if (!want)
                        return oom(err);
                ncm_cpuset_andnot(want, all_cpus, banned);
                return put(&k, "irq-load-balancing", "/proc/irq/default_smp_affinity", want, 0,
                           NCM_KNOB_FIX_IRQ_AFFINITY);
        }
        r = one(&k, "irq:default", "/proc/irq/default_smp_affinity", 0);
        if (r < 0)
                return r;
        r = ncm_fs_opendir(sysfd, "/proc/irq", &d, NULL);
        if (r < 0 && r != -ENOENT)
                return ncm_error_errno(err, -r, "/proc/irq");
        while (d && (de = readdir(d)) != NULL) {
                char key[64], path[128];
                if (!all_digits(de->d_name) || strlen(de->d_name) > 10)
                        continue;
                /* at most 10 digits (checked above): the precision tells the compiler */
                snprintf(key, sizeof(key), "irq:%.10s", de->d_name);
                snprintf(path, sizeof(path), "/proc/irq/%.10s/smp_affinity", de->d_name);
                /* the kernel refuses to move some (per-CPU, managed): passed over */
                r = one(&k, key, path, NCM_CGROUP_OPF_BEST_EFFORT);
                if (r < 0)
                        break;
        }
        if (d)
                closedir(d);
        if (r < 0)
                return r;
        /* interrupts that went away keep nothing in the memo */
        for (size_t i = ncm_knob_memo_count(memo); i-- > 0;) {
                const char *key = ncm_knob_memo_key(memo, i);
                char path[128];
                if (strncmp(key, "irq:", 4) != 0 || !all_digits(key + 4))
                        continue;
                snprintf(path, sizeof(path), "/proc/irq/%s", key + 4);
                if (ncm_fs_exists(sysfd, path) == 0)
                        ncm_knob_memo_drop(memo, key);
        }
        r = plan_irqbalance(&k, irqbalance);
        if (r < 0)
                return r;
        if (ncm_cpuset_is_empty(banned)) {
                ncm_knob_memo_drop(memo, BANNED_KEY);
        } else {
                ncm_autofree char *list = ncm_cpuset_format_list(banned);
                if (!list || ncm_knob_memo_set(memo, BANNED_KEY, list) < 0)
                        return oom(err);
        }
        return 0;
}
