/* SPDX-License-Identifier: Apache-2.0 */
/* Kubelet versions: parsing, checking, comparing (include/nodecm/kubelet-version.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/buf.h>
#include <nodecm/kubelet-version.h>

/* The default stands for its release; everything else is itself. */
static ncm_kubelet_version resolve(ncm_kubelet_version v)
{
        if (v.major == 0 && v.minor == 0)
                return (ncm_kubelet_version){1, NCM_KUBELET_DEFAULT_MINOR};
        return v;
}

bool ncm_kubelet_version_at_least(ncm_kubelet_version v, int major, int minor)
{
        v = resolve(v);
        return v.major != major ? v.major > major : v.minor >= minor;
}

int ncm_kubelet_version_check(ncm_kubelet_version v, ncm_error *err)
{
        if (v.major == 0 && v.minor == 0)
                return 0;
        if (v.major <= 0 || v.minor < 0 ||
            !ncm_kubelet_version_at_least(v, 1, NCM_KUBELET_OLDEST_MINOR))
                return ncm_error_set(err, EINVAL,
                                     "kubelet version %d.%d: nodecm reproduces kubelet 1.%d and "
                                     "newer",
                                     v.major, v.minor, NCM_KUBELET_OLDEST_MINOR);
        return 0;
}

/* Digits at *P as a number (at most 6 of them); -1 when there are none. */
static int number(const char **p)
{
        int v = 0, n = 0;
        while (**p >= '0' && **p <= '9' && n < 7) {
                v = v * 10 + (**p - '0');
                (*p)++;
                n++;
        }
        return n == 0 || n == 7 ? -1 : v;
}

int ncm_kubelet_version_parse(const char *s, ncm_kubelet_version *ret, ncm_error *err)
{
        const char *p = s;
        ncm_kubelet_version v;
        ncm_buf b = NCM_BUF_INIT;
        int r;

        if (*p == 'v')
                p++;
        v.major = number(&p);
        if (v.major >= 0 && *p == '.') {
                p++;
                v.minor = number(&p);
                /* an optional patch level, then an optional pre-release or build suffix */
                if (v.minor >= 0 && *p == '.') {
                        p++;
                        if (number(&p) < 0)
                                v.minor = -1;
                }
                if (v.minor >= 0 && *p && *p != '-' && *p != '+')
                        v.minor = -1;
        } else {
                v.minor = -1;
        }
        if (v.major < 0 || v.minor < 0) {
                r = ncm_error_set(err, EINVAL,
                                  "kubelet version %s: expected MAJOR.MINOR, e.g. "
                                  "\"1.35\"",
                                  (ncm_buf_go_quote(&b, s, strlen(s)), b.data ? b.data : "\"\""));
                ncm_buf_done(&b);
                return r;
        }
        /* "0.0" is a version someone wrote, not the default */
        if (v.major == 0)
                return ncm_error_set(err, EINVAL,
                                     "kubelet version %d.%d: nodecm reproduces kubelet 1.%d and "
                                     "newer",
                                     v.major, v.minor, NCM_KUBELET_OLDEST_MINOR);
        if ((r = ncm_kubelet_version_check(v, err)) < 0)
                return r;
        *ret = v;
        return 0;
}

const char *ncm_kubelet_version_format(ncm_kubelet_version v, char *buf, size_t size)
{
        v = resolve(v);
        snprintf(buf, size, "%d.%d", v.major, v.minor);
        return buf;
}
