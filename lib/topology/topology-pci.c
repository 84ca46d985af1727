/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PCI devices, as lstopo finds them: /sys/bus/pci/devices/ADDR holds a function's class,
 * vendor and device ids, numa_node and local_cpulist (local_cpus' mask on kernels before
 * 3.x), and its link points at the function's place in the device tree
 * ("../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0"): the host bridge (the PCI root) and
 * the bridges down to it. Those are the facts hwloc reads too; nodecm keeps them as the kernel
 * wrote them (numa_node -1, an empty local mask) and leaves their meaning to the reader
 * (lib/node's locality), so a table read back from JSON is the one discovered.
 *
 * Discovery is its own step (ncm_topo_load_pci): one directory read, and per function one
 * readlink and three small files (uevent, numa_node, local_cpus; a few more where those are
 * missing), each opened inside the root by the path the link spells out, O_NOFOLLOW (a
 * directory fd per function was tried: two more system calls, no faster).
 *
 * Device nodes are traced to their functions the way udev does: /sys/dev/{char,block}/MAJ:MIN
 * links to the node's device, whose path names the PCI function above it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "base/array.h"
#include "base/fs-beneath.h"
#include "base/json.h"
#include "topology/topology-internal.h"

/* The largest sysfs attribute read: a local_cpulist of 8192 CPUs at worst. */
#define ATTR_MAX (64 * 1024)
/* NVIDIA's character devices (/dev/nvidia0...), which have no /sys/dev/char link. */
#define NVIDIA_MAJOR 195

struct ncm_pci {
        ncm_pci_device *v; /* sorted by key */
        uint64_t *key;     /* domain << 16 | bus << 8 | devfn, per device */
        size_t n;
};

/* ------------------------------------------------------------------------------------------
 * Addresses
 */

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

/* N hex digits of S (exactly N when FIXED, else 1..N) into *V; returns how many were read. */
static size_t hex_run(const char *s, size_t len, size_t n, bool fixed, uint64_t *v)
{
        size_t i = 0;
        *v = 0;
        while (i < len && i < n && hexval(s[i]) >= 0)
                *v = *v * 16 + (uint64_t)hexval(s[i++]);
        if (i == 0 || (fixed && i != n))
                return 0;
        return i;
}

/* V in lowercase hex, at least MIN digits, at OUT; returns the end. */
static char *put_hex_digits(char *out, uint64_t v, int min)
{
        char tmp[16];
        int n = 0;
        do {
                tmp[n++] = "0123456789abcdef"[v & 0xf];
                v >>= 4;
        } while (v);
        while (n < min)
                tmp[n++] = '0';
        while (n > 0)
                *out++ = tmp[--n];
        return out;
}

/*
 * [DOMAIN:]BUS:DEV.FN in S[0..LEN) exactly: DOMAIN 1..8 hex digits (0 when left out), BUS and
 * DEV two digits (DEV at most 0x1f), FN one digit (at most 7). The canonical form goes to OUT.
 */
static int parse_addr(const char *s, size_t len, uint64_t *ret_key, char *out)
{
        uint64_t dom = 0, bus, dev, fn;
        size_t i = 0, k, colons = 0;

        for (size_t j = 0; j < len; j++)
                colons += s[j] == ':';
        if (colons == 2) {
                k = hex_run(s, len, 8, false, &dom);
                if (!k || k >= len || s[k] != ':')
                        return -EINVAL;
                i = k + 1;
        } else if (colons != 1) {
                return -EINVAL;
        }
        k = hex_run(s + i, len - i, 2, true, &bus);
        if (!k || i + k >= len || s[i + k] != ':')
                return -EINVAL;
        i += k + 1;
        k = hex_run(s + i, len - i, 2, true, &dev);
        if (!k || i + k >= len || s[i + k] != '.' || dev > 0x1f)
                return -EINVAL;
        i += k + 1;
        k = hex_run(s + i, len - i, 1, true, &fn);
        if (!k || i + k != len || fn > 7)
                return -EINVAL;
        if (out) {
                /* "%04x:%02x:%02x.%x", without printf: a discovery canonicalises a few
                 * addresses per function, and snprintf was a tenth of its user time */
                char *o = put_hex_digits(out, dom, 4);
                *o++ = ':';
                o = put_hex_digits(o, bus, 2);
                *o++ = ':';
                o = put_hex_digits(o, dev, 2);
                *o++ = '.';
                o = put_hex_digits(o, fn, 1);
                *o = '\0';
        }
        if (ret_key)
                *ret_key = dom << 16 | bus << 8 | dev << 3 | fn;
        return 0;
}

int ncm_pci_parse_address(const char *s, char *out)
{
        char tmp[NCM_PCI_ADDRESS_MAX];
        int r;

        if (!s)
                return -EINVAL;
        r = parse_addr(s, strlen(s), NULL, tmp);
        if (r < 0)
                return r;
        memcpy(out, tmp, sizeof(tmp));
        return 0;
}

/* "pciDDDD:BB", a host bridge's directory. */
static bool is_root_name(const char *s, size_t len)
{
        uint64_t v;
        size_t k;

        if (len < 6 || memcmp(s, "pci", 3) != 0)
                return false;
        s += 3;
        len -= 3;
        k = hex_run(s, len, 8, false, &v);
        if (!k || k >= len || s[k] != ':')
                return false;
        return hex_run(s + k + 1, len - k - 1, 2, true, &v) == 2 && k + 3 == len;
}

int ncm__pci_path_chain(const char *path, char *addr, bool want_chain, char **root, char ***bridges,
                        size_t *n_bridges)
{
        const char *p = path, *root_at = NULL;
        size_t root_len = 0, naddr = 0;
        char last[NCM_PCI_ADDRESS_MAX] = "";

        /* first pass: the last address, and the first host bridge */
        while (*p) {
                const char *e = strchr(p, '/');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                char a[NCM_PCI_ADDRESS_MAX];
                if (parse_addr(p, len, NULL, a) == 0) {
                        memcpy(last, a, sizeof(a));
                        naddr++;
                } else if (!root_at && is_root_name(p, len)) {
                        root_at = p;
                        root_len = len;
                }
                p += len + (e ? 1 : 0);
        }
        if (!naddr)
                return 0;
        memcpy(addr, last, sizeof(last));
        if (!want_chain)
                return 1;
        *root = NULL;
        *bridges = NULL;
        *n_bridges = 0;
        if (root_at && !(*root = strndup(root_at, root_len)))
                return -ENOMEM;
        if (naddr > 1) {
                size_t k = 0;
                *bridges = calloc(naddr - 1, sizeof(**bridges));
                if (!*bridges)
                        goto oom;
                for (p = path; *p && k < naddr - 1;) {
                        const char *e = strchr(p, '/');
                        size_t len = e ? (size_t)(e - p) : strlen(p);
                        char a[NCM_PCI_ADDRESS_MAX];
                        if (parse_addr(p, len, NULL, a) == 0) {
                                if (!((*bridges)[k] = strdup(a)))
                                        goto oom;
                                *n_bridges = ++k;
                        }
                        p += len + (e ? 1 : 0);
                }
        }
        return 1;
oom:
        free(*root);
        ncm_pci_strv_free(*bridges, *n_bridges);
        *root = NULL;
        *bridges = NULL;
        *n_bridges = 0;
        return -ENOMEM;
}

/* ------------------------------------------------------------------------------------------
 * The table
 */

static void device_done(ncm_pci_device *d)
{
        free(d->address);
        ncm_cpuset_free(d->local_cpus);
        free(d->root);
        ncm_pci_strv_free(d->bridges, d->n_bridges);
        *d = (ncm_pci_device){0};
}

void ncm_pci_strv_free(char **v, size_t n)
{
        if (!v)
                return;
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

ncm_pci *ncm_pci_free(ncm_pci *p)
{
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n; i++)
                device_done(&p->v[i]);
        free(p->v);
        free(p->key);
        free(p);
        return NULL;
}

static int device_copy(const ncm_pci_device *src, ncm_pci_device *dst)
{
        *dst = *src;
        dst->address = NULL;
        dst->local_cpus = NULL;
        dst->root = NULL;
        dst->bridges = NULL;
        dst->n_bridges = 0;
        if (!(dst->address = strdup(src->address)))
                return -ENOMEM;
        if (src->local_cpus && !(dst->local_cpus = ncm_cpuset_dup(src->local_cpus)))
                return -ENOMEM;
        if (src->root && !(dst->root = strdup(src->root)))
                return -ENOMEM;
        if (src->n_bridges) {
                dst->bridges = calloc(src->n_bridges, sizeof(*dst->bridges));
                if (!dst->bridges)
                        return -ENOMEM;
                for (size_t i = 0; i < src->n_bridges; i++) {
                        if (!(dst->bridges[i] = strdup(src->bridges[i])))
                                return -ENOMEM;
                        dst->n_bridges = i + 1;
                }
        }
        return 0;
}

typedef struct keyed {
        uint64_t key;
        size_t i;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
        const keyed *x = a, *y = b;
        return (x->key > y->key) - (x->key < y->key);
}

/*
 * The table from DEVS[0..N), taken (TAKE: the devices move in and DEVS' entries are zeroed)
 * or copied. Checks as ncm_pci_new() documents; PATH names the list in errors ("pci").
 */
static int build(ncm_pci_device *devs, size_t n, bool take, const char *path, ncm_pci **ret,
                 ncm_error *err)
{
        ncm_autoptr(ncm_pci) p = calloc(1, sizeof(*p));
        ncm_autofree keyed *order = NULL;

        if (!p)
                return ncm_error_set(err, ENOMEM, "out of memory");
        p->v = calloc(n ? n : 1, sizeof(*p->v));
        p->key = calloc(n ? n : 1, sizeof(*p->key));
        order = calloc(n ? n : 1, sizeof(*order));
        if (!p->v || !p->key || !order)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
                const ncm_pci_device *d = &devs[i];
                if (!d->address ||
                    parse_addr(d->address, strlen(d->address), &order[i].key, NULL) < 0)
                        return ncm_error_set(err, EINVAL,
                                             "%s[%zu].address: not a PCI address (expected "
                                             "DDDD:BB:DD.F)",
                                             path, i);
                order[i].i = i;
                if (d->root && !is_root_name(d->root, strlen(d->root)))
                        return ncm_error_set(err, EINVAL,
                                             "%s[%zu].root: not a PCI root (expected "
                                             "pciDDDD:BB)",
                                             path, i);
                for (size_t k = 0; k < d->n_bridges; k++)
                        if (!d->bridges[k] ||
                            parse_addr(d->bridges[k], strlen(d->bridges[k]), NULL, NULL) < 0)
                                return ncm_error_set(err, EINVAL,
                                                     "%s[%zu].bridges[%zu]: not a PCI address",
                                                     path, i, k);
        }
        qsort(order, n, sizeof(*order), cmp_keyed);
        for (size_t k = 0; k < n; k++) {
                if (k && order[k].key == order[k - 1].key)
                        return ncm_error_set(err, EINVAL, "%s[%zu].address: %s listed twice", path,
                                             order[k].i, devs[order[k].i].address);
        }
        for (size_t k = 0; k < n; k++) {
                ncm_pci_device *d = &devs[order[k].i];
                char canon[NCM_PCI_ADDRESS_MAX];
                if (take) {
                        p->v[k] = *d;
                        *d = (ncm_pci_device){0};
                } else if (device_copy(d, &p->v[k]) < 0) {
                        p->n = k + 1;
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
                p->n = k + 1;
                p->key[k] = order[k].key;
                /* addresses are kept in the kernel's spelling */
                (void)parse_addr(p->v[k].address, strlen(p->v[k].address), NULL, canon);
                if (strcmp(canon, p->v[k].address) != 0) {
                        char *c = strdup(canon);
                        if (!c)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        free(p->v[k].address);
                        p->v[k].address = c;
                }
        }
        *ret = NCM_TAKE_PTR(p);
        return 0;
}

int ncm_pci_new(const ncm_pci_device *devs, size_t n, ncm_pci **ret, ncm_error *err)
{
        return build((ncm_pci_device *)devs, n, false, "pci", ret, err);
}

const ncm_pci_device *ncm_pci_devices(const ncm_pci *p, size_t *n)
{
        *n = p ? p->n : 0;
        return p ? p->v : NULL;
}

const ncm_pci_device *ncm_pci_find(const ncm_pci *p, const char *address)
{
        uint64_t key;
        size_t lo = 0, hi;

        if (!p || !address || parse_addr(address, strlen(address), &key, NULL) < 0)
                return NULL;
        hi = p->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (p->key[mid] < key)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < p->n && p->key[lo] == key ? &p->v[lo] : NULL;
}

static bool str_eq(const char *a, const char *b)
{
        return a == b || (a && b && strcmp(a, b) == 0);
}

bool ncm__pci_equal(const ncm_pci *a, const ncm_pci *b)
{
        size_t na = a ? a->n : 0, nb = b ? b->n : 0;

        if (na != nb)
                return false;
        for (size_t i = 0; i < na; i++) {
                const ncm_pci_device *x = &a->v[i], *y = &b->v[i];
                if (!str_eq(x->address, y->address) || x->class_code != y->class_code ||
                    x->vendor != y->vendor || x->device != y->device || x->numa != y->numa ||
                    !str_eq(x->root, y->root) || x->n_bridges != y->n_bridges ||
                    !x->local_cpus != !y->local_cpus ||
                    (x->local_cpus && !ncm_cpuset_equal(x->local_cpus, y->local_cpus)))
                        return false;
                for (size_t k = 0; k < x->n_bridges; k++)
                        if (!str_eq(x->bridges[k], y->bridges[k]))
                                return false;
        }
        return true;
}

/* ------------------------------------------------------------------------------------------
 * Discovery
 */

/* Only whitespace and NULs from S on. */
static bool blank_from(const char *s)
{
        for (; *s; s++)
                if (*s != '\n' && *s != ' ' && *s != '\t' && *s != '\r')
                        return false;
        return true;
}

int ncm__pci_parse_hex(const char *s, int64_t max, int64_t *ret)
{
        uint64_t v;
        size_t k;

        if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
                return -EINVAL;
        k = hex_run(s + 2, strlen(s + 2), 9, false, &v);
        if (!k || !blank_from(s + 2 + k))
                return -EINVAL;
        if (k > 8 || v > (uint64_t)max)
                return -ERANGE;
        *ret = (int64_t)v;
        return 0;
}

/* Lexically resolve TARGET against the directory DIR (both absolute-path text) into OUT. */
static void join_path(const char *dir, const char *target, char *out, size_t size)
{
        char tmp[8192];
        size_t n = 0, tl = strnlen(target, 4095), k = 0;
        const char *p;

        /* "%.255s/%.4095s" (or the target alone), without printf */
        if (target[0] != '/') {
                k = strnlen(dir, 255);
                memcpy(tmp, dir, k);
                tmp[k++] = '/';
        }
        memcpy(tmp + k, target, tl);
        tmp[k + tl] = '\0';
        out[0] = '\0';
        for (p = tmp; *p;) {
                const char *e = strchr(p, '/');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                if (len == 0 || (len == 1 && p[0] == '.')) {
                        /* nothing */
                } else if (len == 2 && p[0] == '.' && p[1] == '.') {
                        while (n > 0 && out[n - 1] != '/')
                                n--;
                        if (n > 0)
                                n--;
                        out[n] = '\0';
                } else if (n + len + 2 < size) {
                        out[n++] = '/';
                        memcpy(out + n, p, len);
                        n += len;
                        out[n] = '\0';
                }
                p += len + (e ? 1 : 0);
        }
        if (n == 0)
                snprintf(out, size, "/");
}

#define SYS_DEVICES "/sys/devices"

/* Where a function's attributes are read: its directory under the root, and its address for
 * messages, which name the path users know (/sys/bus/pci/devices/ADDR/NAME). */
typedef struct place {
        int rootfd;
        int devicesfd; /* SYS_DEVICES inside the root, or -1: the attributes are opened from it */
        const char *addr;
        char dir[1024]; /* "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0" */
} place;

/* Open NAME in P's directory, O_NOFOLLOW: from SYS_DEVICES where the directory is under it,
 * a shorter walk (base/fs-beneath.h). No message: the callers name the file as users know it. */
static int open_attr(const place *p, const char *name)
{
        char path[sizeof(p->dir) + 64];
        size_t dl = strnlen(p->dir, sizeof(p->dir) - 1), nl = strlen(name);

        if (nl >= sizeof(path) - dl - 1)
                return -ENAMETOOLONG;
        /* (a discovery builds a thousand of these; snprintf was a tenth of its user time) */
        memcpy(path, p->dir, dl);
        path[dl] = '/';
        memcpy(path + dl + 1, name, nl + 1);
        return ncm__fs_openat_beneath(p->rootfd, p->devicesfd, path,
                                      ncm__fs_below(path, SYS_DEVICES, sizeof(SYS_DEVICES) - 1),
                                      O_RDONLY | O_NOFOLLOW, NULL);
}

/*
 * Read NAME of the function at P into BUF (a sysfs attribute, one read). 0 and the text,
 * -ENOENT when absent, or -errno with ERR naming /sys/bus/pci/devices/ADDR/NAME. The path is
 * the link's target spelled out, so resolving it inside the root follows no symlink, and the
 * last component is never one (O_NOFOLLOW).
 */
static int read_attr(const place *p, const char *name, char *buf, size_t size, ncm_error *err)
{
        ncm_autoclose int fd = -1;
        ssize_t n;

        fd = open_attr(p, name);
        if (fd < 0) {
                if (fd == -ENOENT)
                        return -ENOENT;
                return ncm_error_errno(err, -fd, "open '/sys/bus/pci/devices/%s/%s'", p->addr,
                                       name);
        }
        n = read(fd, buf, size - 1);
        if (n < 0)
                return ncm_error_errno(err, errno, "read '/sys/bus/pci/devices/%s/%s'", p->addr,
                                       name);
        if ((size_t)n == size - 1)
                return ncm_error_set(err, EFBIG,
                                     "read '/sys/bus/pci/devices/%s/%s': file larger than %zu "
                                     "bytes",
                                     p->addr, name, size - 2);
        buf[n] = '\0';
        return 0;
}

static int bad_attr(ncm_error *err, int r, const char *addr, const char *name, const char *text)
{
        size_t n = strcspn(text, "\n");
        return ncm_error_set(err, r == -ERANGE ? ERANGE : EINVAL,
                             "/sys/bus/pci/devices/%s/%s: %s '%.*s'", addr, name,
                             r == -ERANGE ? "out of range:" : "cannot parse",
                             (int)(n > 64 ? 64 : n), text);
}

/* A hex attribute into *RET (left as it is when the file is absent). */
static int read_hex(const place *p, const char *name, int64_t max, char *buf, size_t size,
                    int64_t *ret, ncm_error *err)
{
        int r = read_attr(p, name, buf, size, err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        r = ncm__pci_parse_hex(buf, max, ret);
        return r < 0 ? bad_attr(err, r, p->addr, name, buf) : 0;
}

int ncm__pci_parse_uevent(const char *s, int64_t *ret_class, int32_t *ret_vendor,
                          int32_t *ret_device)
{
        int64_t cls = -1, vendor = -1, device = -1;

        while (*s) {
                size_t len = strcspn(s, "\n");
                uint64_t v, w;
                size_t k;
                if (len > 10 && memcmp(s, "PCI_CLASS=", 10) == 0) {
                        k = hex_run(s + 10, len - 10, 6, false, &v);
                        if (!k || k != len - 10)
                                return -EINVAL;
                        cls = (int64_t)v;
                } else if (len > 7 && memcmp(s, "PCI_ID=", 7) == 0) {
                        k = hex_run(s + 7, len - 7, 4, true, &v);
                        if (k != 4 || len != 7 + 4 + 1 + 4 || s[11] != ':' ||
                            hex_run(s + 12, 4, 4, true, &w) != 4)
                                return -EINVAL;
                        vendor = (int64_t)v;
                        device = (int64_t)w;
                }
                s += len + (s[len] == '\n');
        }
        if (cls < 0 || vendor < 0)
                return -ENOENT;
        *ret_class = cls;
        *ret_vendor = (int32_t)vendor;
        *ret_device = (int32_t)device;
        return 0;
}

/* A cpumask file ("00000000,0000010f"). hwloc's reader (scanf's %x per word) also takes
 * "0x" before a word and fewer than 8 digits, so this one does: words are padded first. */
static int parse_mask(const char *text, ncm_cpuset **ret)
{
        size_t n = strlen(text), words = 1, o = 0;
        ncm_autofree char *norm = NULL;
        const char *p = text;

        for (size_t i = 0; i < n; i++)
                words += text[i] == ',';
        norm = malloc(words * 9 + 1);
        if (!norm)
                return -ENOMEM;
        for (;;) {
                size_t len = strcspn(p, ",\n");
                if (len >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
                        p += 2;
                        len -= 2;
                }
                if (len > 8)
                        return -EINVAL;
                for (size_t k = len; k < 8; k++)
                        norm[o++] = '0';
                memcpy(norm + o, p, len);
                o += len;
                p += len;
                if (*p != ',')
                        break;
                norm[o++] = *p++;
        }
        if (!blank_from(p))
                return -EINVAL;
        norm[o] = '\0';
        return ncm_cpuset_parse_mask(norm, ret, NULL);
}

/*
 * Whether the bridge of DFD has a type-1 header whose secondary and subordinate buses are not
 * above its own bus (config offsets 0x0e, 0x19, 0x1a), e.g. 00 and 00: hwloc's test. A
 * configuration space that cannot be read says nothing against it.
 */
static bool bridge_is_broken(const place *p, unsigned bus, char *buf)
{
        ncm_autoclose int fd = -1;
        const unsigned char *c = (const unsigned char *)buf;
        ssize_t n;

        fd = open_attr(p, "config");
        if (fd < 0)
                return false;
        n = read(fd, buf, 64);
        if (n < 0x1b || (c[0x0e] & 0x7f) != 1)
                return false;
        return c[0x19] <= bus || c[0x1a] <= bus || c[0x19] > c[0x1a];
}

static int read_device(int rootfd, int devsfd, int devicesfd, const char *addr, ncm_pci_device *d,
                       char *buf, bool *ret_skip, ncm_error *err)
{
        place pl = {.rootfd = rootfd, .devicesfd = devicesfd, .addr = addr};
        uint64_t key = 0;
        int64_t v;
        ssize_t n;
        int r;

        d->class_code = -1;
        d->vendor = d->device = -1;
        d->numa = -1;
        (void)parse_addr(addr, strlen(addr), &key, NULL);
        if (!(d->address = strdup(addr)))
                return ncm_error_set(err, ENOMEM, "out of memory");
        {
                static const char devices[] = "/sys/bus/pci/devices/";
                size_t al = strnlen(addr, sizeof(pl.dir) - sizeof(devices));
                memcpy(pl.dir, devices, sizeof(devices) - 1);
                memcpy(pl.dir + sizeof(devices) - 1, addr, al);
                pl.dir[sizeof(devices) - 1 + al] = '\0';
        }
        /* where it hangs: the link's text names the host bridge and the bridges above it, and
         * spelled out it is the function's directory */
        n = readlinkat(devsfd, addr, buf, ATTR_MAX - 1);
        if (n > 0) {
                char found[NCM_PCI_ADDRESS_MAX], full[sizeof(pl.dir)];
                buf[n] = '\0';
                r = ncm__pci_path_chain(buf, found, true, &d->root, &d->bridges, &d->n_bridges);
                if (r < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                if (r > 0 && strcmp(found, addr) != 0) {
                        /* a link to another function: no chain can be trusted */
                        free(d->root);
                        ncm_pci_strv_free(d->bridges, d->n_bridges);
                        d->root = NULL;
                        d->bridges = NULL;
                        d->n_bridges = 0;
                } else if (r > 0) {
                        join_path("/sys/bus/pci/devices", buf, full, sizeof(full));
                        if (strncmp(full, "/sys/devices/", 13) == 0)
                                memcpy(pl.dir, full, sizeof(full));
                }
        }
        /* uevent holds the class and the ids in one read; the files where it does not */
        r = read_attr(&pl, "uevent", buf, ATTR_MAX, err);
        if (r < 0 && r != -ENOENT)
                return r;
        if (r < 0 || ncm__pci_parse_uevent(buf, &d->class_code, &d->vendor, &d->device) < 0) {
                if ((r = read_hex(&pl, "class", 0xffffff, buf, ATTR_MAX, &d->class_code, err)) < 0)
                        return r;
                v = -1;
                if ((r = read_hex(&pl, "vendor", 0xffff, buf, ATTR_MAX, &v, err)) < 0)
                        return r;
                d->vendor = (int32_t)v;
                v = -1;
                if ((r = read_hex(&pl, "device", 0xffff, buf, ATTR_MAX, &v, err)) < 0)
                        return r;
                d->device = (int32_t)v;
        }
        r = read_attr(&pl, "numa_node", buf, ATTR_MAX, err);
        if (r == 0) {
                int numa;
                r = ncm__sysfs_parse_int(buf, &numa);
                if (r < 0)
                        return bad_attr(err, r, addr, "numa_node", buf);
                d->numa = numa;
        } else if (r != -ENOENT) {
                return r;
        }
        /* the mask first, as hwloc reads it; the list where the mask is missing */
        r = read_attr(&pl, "local_cpus", buf, ATTR_MAX, err);
        if (r == 0) {
                if (parse_mask(buf, &d->local_cpus) < 0)
                        return bad_attr(err, -EINVAL, addr, "local_cpus", buf);
        } else if (r == -ENOENT) {
                r = read_attr(&pl, "local_cpulist", buf, ATTR_MAX, err);
                if (r == 0 && ncm_cpuset_parse_sysfs_list(buf, &d->local_cpus, NULL) < 0)
                        return bad_attr(err, -EINVAL, addr, "local_cpulist", buf);
                if (r < 0 && r != -ENOENT)
                        return r;
        } else {
                return r;
        }
        /* a bridge whose configuration space shows no valid bus range leads nowhere: lstopo
         * leaves it out (hwloc's pcidisc), and so does nodecm */
        if (d->class_code >> 8 == 0x0604 &&
            bridge_is_broken(&pl, (unsigned)(key >> 8 & 0xff), buf)) {
                *ret_skip = true;
                return 0;
        }
        return 0;
}

int ncm_pci_discover_sysfs(int rootfd, ncm_pci **ret, ncm_error *err)
{
        static const char devices[] = "/sys/bus/pci/devices";
        ncm_autoclose int devsfd = -1;
        ncm_autoclose int devicesfd = -1;
        ncm_autofree ncm_pci_device *v = NULL;
        ncm_autofree char *buf = NULL;
        size_t n = 0, cap = 0;
        DIR *d = NULL;
        struct dirent *de;
        int r = 0;

        devsfd = ncm_fs_openat(rootfd, devices, O_RDONLY | O_DIRECTORY, 0, err);
        if (devsfd == -ENOENT) {
                if (err)
                        ncm_error_clear(err);
                return build(NULL, 0, true, "pci", ret, err);
        }
        if (devsfd < 0)
                return devsfd;
        buf = malloc(ATTR_MAX);
        if (!buf)
                return ncm_error_set(err, ENOMEM, "out of memory");
        /* where the links lead: the attributes are opened from it (none: from the root) */
        devicesfd = ncm_fs_openat(rootfd, SYS_DEVICES, O_PATH | O_DIRECTORY, 0, NULL);
        {
                int dupfd = fcntl(devsfd, F_DUPFD_CLOEXEC, 0);
                if (dupfd < 0)
                        return ncm_error_errno(err, errno, "open '%s'", devices);
                d = fdopendir(dupfd);
                if (!d) {
                        close(dupfd);
                        return ncm_error_errno(err, errno, "open directory '%s'", devices);
                }
        }
        while ((de = readdir(d))) {
                if (parse_addr(de->d_name, strlen(de->d_name), NULL, NULL) < 0)
                        continue;
                if (ncm__array_grow(v, cap, n) < 0) {
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                        break;
                }
                bool skip = false;
                r = read_device(rootfd, devsfd, devicesfd, de->d_name, &v[n], buf, &skip, err);
                if (skip)
                        device_done(&v[n]);
                else
                        n++;
                if (r < 0)
                        break;
        }
        closedir(d);
        if (r >= 0)
                r = build(v, n, true, "pci", ret, err);
        for (size_t i = 0; i < n; i++)
                device_done(&v[i]);
        return r;
}

/* ------------------------------------------------------------------------------------------
 * Device nodes
 */

static int strv_push(char ***v, size_t *n, size_t *cap, const char *s)
{
        char *c = strdup(s);
        if (!c || ncm__array_grow(*v, *cap, *n) < 0) {
                free(c);
                return -ENOMEM;
        }
        (*v)[(*n)++] = c;
        return 0;
}

/* The functions of IOMMU group GROUP (/sys/kernel/iommu_groups/GROUP/devices), sorted. */
static int vfio_group(int rootfd, const char *group, char ***ret, size_t *ret_n, ncm_error *err)
{
        char path[256];
        char **v = NULL;
        size_t n = 0, cap = 0;
        DIR *d = NULL;
        struct dirent *de;
        int r;

        snprintf(path, sizeof(path), "/sys/kernel/iommu_groups/%s/devices", group);
        r = ncm_fs_opendir(rootfd, path, &d, err);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                char a[NCM_PCI_ADDRESS_MAX];
                if (parse_addr(de->d_name, strlen(de->d_name), NULL, a) < 0)
                        continue;
                if (strv_push(&v, &n, &cap, a) < 0) {
                        closedir(d);
                        ncm_pci_strv_free(v, n);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
        }
        closedir(d);
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
                        char *t = v[j];
                        v[j] = v[j - 1];
                        v[j - 1] = t;
                }
        *ret = v;
        *ret_n = n;
        return 0;
}

/* An NVIDIA GPU node of minor MINOR: the function whose information file says so. */
static int nvidia_minor(int rootfd, unsigned minor, char *out, ncm_error *err)
{
        static const char gpus[] = "/proc/driver/nvidia/gpus";
        DIR *d = NULL;
        struct dirent *de;
        char buf[4096];
        int r = ncm_fs_opendir(rootfd, gpus, &d, NULL);

        (void)err;
        if (r < 0)
                return 0;
        while ((de = readdir(d))) {
                char path[512], a[NCM_PCI_ADDRESS_MAX];
                const char *m;
                if (parse_addr(de->d_name, strlen(de->d_name), NULL, a) < 0)
                        continue;
                snprintf(path, sizeof(path), "%s/%s/information", gpus, de->d_name);
                if (ncm_fs_read(rootfd, path, buf, sizeof(buf), NULL) < 0)
                        continue;
                m = strstr(buf, "Device Minor:");
                if (m && strtoul(m + strlen("Device Minor:"), NULL, 10) == minor) {
                        memcpy(out, a, sizeof(a));
                        closedir(d);
                        return 1;
                }
        }
        closedir(d);
        return 0;
}

int ncm_pci_resolve_devnum(int rootfd, bool block, unsigned maj, unsigned min, char ***ret,
                           size_t *ret_n, ncm_error *err)
{
        ncm_autoclose int dirfd = -1;
        char dir[64], name[32], target[4096], full[4096], addr[NCM_PCI_ADDRESS_MAX];
        ssize_t n;
        char **v = NULL;
        size_t nv = 0, cap = 0;
        int r;

        snprintf(dir, sizeof(dir), "/sys/dev/%s", block ? "block" : "char");
        snprintf(name, sizeof(name), "%u:%u", maj, min);
        dirfd = ncm_fs_openat(rootfd, dir, O_PATH | O_DIRECTORY, 0, NULL);
        n = dirfd >= 0 ? readlinkat(dirfd, name, target, sizeof(target) - 1) : -1;
        if (n <= 0) {
                if (!block && maj == NVIDIA_MAJOR) {
                        r = nvidia_minor(rootfd, min, addr, err);
                        if (r > 0)
                                goto one;
                }
                return ncm_error_set(err, ENODEV, "%s/%s: no such device link", dir, name);
        }
        target[n] = '\0';
        join_path(dir, target, full, sizeof(full));
        r = ncm__pci_path_chain(full, addr, false, NULL, NULL, NULL);
        if (r > 0)
                goto one;
        /* a VFIO group's node is virtual: its functions are the IOMMU group's */
        {
                const char *g = strstr(full, "/virtual/vfio/");
                if (g && strcmp(g + strlen("/virtual/vfio/"), "vfio") != 0) {
                        r = vfio_group(rootfd, g + strlen("/virtual/vfio/"), &v, &nv, err);
                        if (r < 0)
                                return r;
                        if (nv) {
                                *ret = v;
                                *ret_n = nv;
                                return 0;
                        }
                        free(v);
                }
        }
        return ncm_error_set(err, ENODEV, "%s/%s is no PCI function's: %s", dir, name, full);
one:
        if (strv_push(&v, &nv, &cap, addr) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = v;
        *ret_n = nv;
        return 0;
}

int ncm_pci_resolve_node(int rootfd, const char *path, char ***ret, size_t *ret_n, ncm_error *err)
{
        ncm_autoclose int fd = -1;
        struct stat st;
        int r;

        fd = ncm_fs_openat(rootfd, path, O_PATH, 0, err);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return ncm_error_errno(err, errno, "stat '%s'", path);
        if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
                return ncm_error_set(err, ENODEV, "%s: not a device node", path);
        r = ncm_pci_resolve_devnum(rootfd, S_ISBLK(st.st_mode), major(st.st_rdev),
                                   minor(st.st_rdev), ret, ret_n, err);
        if (r < 0 && r != -ENOMEM)
                ncm_error_prefix(err, "%s", path);
        return r;
}

/* ------------------------------------------------------------------------------------------
 * Names
 */

const char *ncm_pci_class_name(int64_t c)
{
        static const struct {
                int code; /* class << 8 | subclass */
                const char *name;
        } sub[] = {
                        {0x0100, "SCSI"},       {0x0101, "IDE"},          {0x0104, "RAID"},
                        {0x0106, "SATA"},       {0x0107, "SAS"},          {0x0108, "NVMe"},
                        {0x0200, "Ethernet"},   {0x0207, "InfiniBand"},   {0x0300, "VGA"},
                        {0x0302, "3D"},         {0x0600, "Host bridge"},  {0x0601, "ISA bridge"},
                        {0x0604, "PCI bridge"}, {0x0c03, "USB"},          {0x0c04, "Fibre Channel"},
                        {0x0c06, "InfiniBand"}, {0x0b40, "Co-processor"},
        };
        static const char *const base[] = {
                        [0x00] = "Unclassified",
                        [0x01] = "Storage",
                        [0x02] = "Network",
                        [0x03] = "Display",
                        [0x04] = "Multimedia",
                        [0x05] = "Memory",
                        [0x06] = "Bridge",
                        [0x07] = "Communication",
                        [0x08] = "System peripheral",
                        [0x09] = "Input",
                        [0x0a] = "Docking station",
                        [0x0b] = "Processor",
                        [0x0c] = "Serial bus",
                        [0x0d] = "Wireless",
                        [0x0e] = "Intelligent I/O",
                        [0x0f] = "Satellite",
                        [0x10] = "Encryption",
                        [0x11] = "Signal processing",
                        [0x12] = "Accelerator",
                        [0x13] = "Instrumentation",
        };
        int code;

        if (c < 0)
                return "unknown class";
        code = (int)(c >> 8);
        for (size_t i = 0; i < NCM_ELEMENTSOF(sub); i++)
                if (sub[i].code == code)
                        return sub[i].name;
        code >>= 8;
        if (code < (int)NCM_ELEMENTSOF(base) && base[code])
                return base[code];
        return "Other";
}

/* ------------------------------------------------------------------------------------------
 * JSON
 */

static void put_hex(ncm_buf *b, int64_t v, int digits)
{
        if (v < 0)
                ncm_buf_puts(b, "null");
        else
                ncm_buf_printf(b, "\"0x%0*llx\"", digits, (long long)v);
}

static void put_str(ncm_buf *b, const char *s)
{
        if (!s)
                ncm_buf_puts(b, "null");
        else
                ncm_buf_json_string(b, s, strlen(s));
}

void ncm_pci_format_json(const ncm_pci *p, ncm_buf *b)
{
        size_t n = p ? p->n : 0;

        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                const ncm_pci_device *d = &p->v[i];
                ncm_buf_puts(b, i ? ",\n         {\"address\": " : "{\"address\": ");
                put_str(b, d->address);
                ncm_buf_puts(b, ", \"class\": ");
                put_hex(b, d->class_code, 6);
                ncm_buf_puts(b, ", \"vendor\": ");
                put_hex(b, d->vendor, 4);
                ncm_buf_puts(b, ", \"device\": ");
                put_hex(b, d->device, 4);
                ncm_buf_puts(b, ", \"numa\": ");
                ncm__put_int(b, d->numa, 0);
                ncm_buf_puts(b, ", \"local_cpus\": ");
                if (d->local_cpus) {
                        ncm_buf_putc(b, '"');
                        ncm_cpuset_format_list_buf(d->local_cpus, b);
                        ncm_buf_putc(b, '"');
                } else {
                        ncm_buf_puts(b, "null");
                }
                ncm_buf_puts(b, ", \"root\": ");
                put_str(b, d->root);
                ncm_buf_puts(b, ", \"bridges\": [");
                for (size_t k = 0; k < d->n_bridges; k++) {
                        if (k)
                                ncm_buf_puts(b, ", ");
                        put_str(b, d->bridges[k]);
                }
                ncm_buf_puts(b, "]}");
        }
        ncm_buf_putc(b, ']');
}

static int json_hex(json_object *v, const char *path, int64_t max, int64_t *ret, ncm_error *err)
{
        int r;
        if (!v || json_object_is_type(v, json_type_null))
                return 0;
        if (json_object_is_type(v, json_type_int))
                return ncm__json_int(v, path, 0, max, ret, err);
        r = ncm__json_expect(v, json_type_string, path, err);
        if (r < 0)
                return r;
        r = ncm__pci_parse_hex(json_object_get_string(v), max, ret);
        if (r < 0)
                return ncm_error_set(err, -r, "%s: expected a hex number (\"0x%s\") up to 0x%llx",
                                     path, max > 0xffff ? "020000" : "15b3", (long long)max);
        return 0;
}

static int json_str(json_object *v, const char *path, char **ret, ncm_error *err)
{
        int r;
        if (!v || json_object_is_type(v, json_type_null))
                return 0;
        r = ncm__json_expect(v, json_type_string, path, err);
        if (r < 0)
                return r;
        *ret = strdup(json_object_get_string(v));
        return *ret ? 0 : ncm_error_set(err, ENOMEM, "out of memory");
}

static int read_entry(json_object *e, const char *path, ncm_pci_device *d, ncm_error *err)
{
        static const char *const keys[] = {"address", "class",      "vendor", "device",
                                           "numa",    "local_cpus", "root",   "bridges"};
        char p[600];
        json_object *v;
        int64_t x;
        int r;

        d->class_code = -1;
        d->vendor = d->device = -1;
        d->numa = -1;
        r = ncm__json_expect(e, json_type_object, path, err);
        if (r < 0)
                return r;
        json_object_object_foreach(e, key, val)
        {
                bool ok = false;
                (void)val;
                for (size_t k = 0; k < NCM_ELEMENTSOF(keys); k++)
                        ok = ok || strcmp(key, keys[k]) == 0;
                if (!ok)
                        return ncm_error_set(err, EINVAL, "%s.%s: unknown field", path, key);
        }
        snprintf(p, sizeof(p), "%s.address", path);
        v = ncm__json_get(e, "address");
        if (!v)
                return ncm_error_set(err, EINVAL, "%s: missing", p);
        if ((r = json_str(v, p, &d->address, err)) < 0)
                return r;
        if (parse_addr(d->address, strlen(d->address), NULL, NULL) < 0)
                return ncm_error_set(err, EINVAL, "%s: not a PCI address (expected DDDD:BB:DD.F)",
                                     p);
        snprintf(p, sizeof(p), "%s.class", path);
        if ((r = json_hex(ncm__json_get(e, "class"), p, 0xffffff, &d->class_code, err)) < 0)
                return r;
        x = -1;
        snprintf(p, sizeof(p), "%s.vendor", path);
        if ((r = json_hex(ncm__json_get(e, "vendor"), p, 0xffff, &x, err)) < 0)
                return r;
        d->vendor = (int32_t)x;
        x = -1;
        snprintf(p, sizeof(p), "%s.device", path);
        if ((r = json_hex(ncm__json_get(e, "device"), p, 0xffff, &x, err)) < 0)
                return r;
        d->device = (int32_t)x;
        snprintf(p, sizeof(p), "%s.numa", path);
        if ((v = ncm__json_get(e, "numa"))) {
                if ((r = ncm__json_int(v, p, INT32_MIN, INT32_MAX, &x, err)) < 0)
                        return r;
                d->numa = (int)x;
        }
        snprintf(p, sizeof(p), "%s.local_cpus", path);
        if ((v = ncm__json_get(e, "local_cpus"))) {
                ncm_error e2 = NCM_ERROR_INIT;
                if ((r = ncm__json_expect(v, json_type_string, p, err)) < 0)
                        return r;
                r = ncm_cpuset_parse_list(json_object_get_string(v), &d->local_cpus, &e2);
                if (r < 0)
                        return ncm_error_set(err, -r, "%s: %s", p, e2.msg);
        }
        snprintf(p, sizeof(p), "%s.root", path);
        if ((r = json_str(ncm__json_get(e, "root"), p, &d->root, err)) < 0)
                return r;
        if (d->root && !is_root_name(d->root, strlen(d->root)))
                return ncm_error_set(err, EINVAL, "%s: not a PCI root (expected pciDDDD:BB)", p);
        snprintf(p, sizeof(p), "%s.bridges", path);
        if ((v = ncm__json_get(e, "bridges"))) {
                size_t nb;
                if ((r = ncm__json_expect(v, json_type_array, p, err)) < 0)
                        return r;
                nb = json_object_array_length(v);
                if (nb > 256)
                        return ncm_error_set(err, ERANGE, "%s: %zu bridges, more than 256", p, nb);
                d->bridges = calloc(nb ? nb : 1, sizeof(*d->bridges));
                if (!d->bridges)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                for (size_t k = 0; k < nb; k++) {
                        char pk[640];
                        snprintf(pk, sizeof(pk), "%s[%zu]", p, k);
                        json_object *b = json_object_array_get_idx(v, k);
                        if ((r = ncm__json_expect(b, json_type_string, pk, err)) < 0)
                                return r;
                        if (parse_addr(json_object_get_string(b),
                                       (size_t)json_object_get_string_len(b), NULL, NULL) < 0)
                                return ncm_error_set(err, EINVAL, "%s: not a PCI address", pk);
                        if (!(d->bridges[k] = strdup(json_object_get_string(b))))
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        d->n_bridges = k + 1;
                }
        }
        return 0;
}

int ncm_pci_from_json_value(struct json_object *arr, const char *path, ncm_pci **ret,
                            ncm_error *err)
{
        const char *root = path && *path ? path : "pci";
        ncm_autofree ncm_pci_device *v = NULL;
        size_t n;
        int r = 0;

        r = ncm__json_expect(arr, json_type_array, root, err);
        if (r < 0)
                return r;
        n = json_object_array_length(arr);
        if (n > 65536)
                return ncm_error_set(err, ERANGE, "%s: %zu devices, more than 65536", root, n);
        v = calloc(n ? n : 1, sizeof(*v));
        if (!v)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (size_t i = 0; i < n && r >= 0; i++) {
                char p[512];
                snprintf(p, sizeof(p), "%s[%zu]", root, i);
                r = read_entry(json_object_array_get_idx(arr, i), p, &v[i], err);
        }
        if (r >= 0)
                r = build(v, n, true, root, ret, err);
        for (size_t i = 0; i < n; i++)
                device_done(&v[i]);
        return r;
}

/* ------------------------------------------------------------------------------------------
 * For people
 */

/* Locality order: NUMA node ascending, -1 (none) last; then the local CPUs. */
static int cmp_locality(const ncm_pci_device *a, const ncm_pci_device *b)
{
        if (a->numa != b->numa) {
                if (a->numa < 0 || b->numa < 0)
                        return a->numa < 0 ? 1 : -1;
                return a->numa < b->numa ? -1 : 1;
        }
        if (!a->local_cpus || !b->local_cpus)
                return !a->local_cpus - !b->local_cpus;
        return ncm_cpuset_compare(a->local_cpus, b->local_cpus);
}

static bool same_locality(const ncm_pci_device *a, const ncm_pci_device *b)
{
        return cmp_locality(a, b) == 0;
}

/* The index of ADDRESS in P, or -1. */
static ssize_t index_of(const ncm_pci *p, const char *address)
{
        const ncm_pci_device *d = ncm_pci_find(p, address);
        return d ? d - p->v : -1;
}

static void put_locality(ncm_buf *b, const ncm_pci_device *d)
{
        if (d->numa >= 0)
                ncm_buf_printf(b, "NUMA node %d", d->numa);
        else
                ncm_buf_puts(b, "no NUMA node");
        if (d->local_cpus) {
                ncm_buf_puts(b, ", local CPUs ");
                if (ncm_cpuset_is_empty(d->local_cpus))
                        ncm_buf_puts(b, "none");
                else
                        ncm_cpuset_format_list_buf(d->local_cpus, b);
        }
}

static void put_device(ncm_buf *b, const ncm_pci_device *d, int depth, const ncm_pci_device *group)
{
        /* "%*s%s  %s" and " [%04x:%04x]" without printf (a line per function) */
        for (int k = 0; k < 4 + 2 * depth; k++)
                ncm_buf_putc(b, ' ');
        ncm_buf_puts(b, d->address);
        ncm_buf_puts(b, "  ");
        ncm_buf_puts(b, ncm_pci_class_name(d->class_code));
        if (d->vendor >= 0 && d->device >= 0) {
                char ids[24], *o = ids; /* at most 8 digits each */
                *o++ = ' ';
                *o++ = '[';
                o = put_hex_digits(o, (uint64_t)d->vendor, 4);
                *o++ = ':';
                o = put_hex_digits(o, (uint64_t)d->device, 4);
                *o++ = ']';
                ncm_buf_append(b, ids, (size_t)(o - ids));
        }
        if (!same_locality(d, group)) {
                ncm_buf_puts(b, " (");
                put_locality(b, d);
                ncm_buf_putc(b, ')');
        }
        ncm_buf_putc(b, '\n');
}

/* The parent of device I: its last bridge when the table has it, else none (-1). */
static ssize_t parent_of(const ncm_pci *p, size_t i)
{
        const ncm_pci_device *d = &p->v[i];
        for (size_t k = d->n_bridges; k-- > 0;) {
                ssize_t j = index_of(p, d->bridges[k]);
                if (j >= 0)
                        return j;
        }
        return -1;
}

static void put_subtree(ncm_buf *b, const ncm_pci *p, const ssize_t *parent, size_t i, int depth,
                        const ncm_pci_device *group)
{
        put_device(b, &p->v[i], depth, group);
        if (depth > 64)
                return;
        for (size_t j = 0; j < p->n; j++)
                if (parent[j] == (ssize_t)i)
                        put_subtree(b, p, parent, j, depth + 1, group);
}

void ncm_pci_format_tree(const ncm_pci *p, ncm_buf *b)
{
        ncm_autofree ssize_t *parent = NULL;
        ncm_autofree size_t *top = NULL; /* devices without a parent in the table */
        size_t ntop = 0;

        if (!p || !p->n)
                return;
        parent = calloc(p->n, sizeof(*parent));
        top = calloc(p->n, sizeof(*top));
        if (!parent || !top) {
                b->oom = true;
                return;
        }
        for (size_t i = 0; i < p->n; i++) {
                parent[i] = parent_of(p, i);
                if (parent[i] < 0)
                        top[ntop++] = i;
        }
        /* tops by locality, then root, then address (stable: already by address) */
        for (size_t i = 1; i < ntop; i++)
                for (size_t j = i; j > 0; j--) {
                        const ncm_pci_device *x = &p->v[top[j - 1]], *y = &p->v[top[j]];
                        int c = cmp_locality(x, y);
                        if (c == 0)
                                c = strcmp(x->root ? x->root : "~", y->root ? y->root : "~");
                        if (c <= 0)
                                break;
                        size_t t = top[j];
                        top[j] = top[j - 1];
                        top[j - 1] = t;
                }
        ncm_buf_printf(b, "PCI devices by locality (%zu):\n", p->n);
        for (size_t i = 0; i < ntop; i++) {
                const ncm_pci_device *d = &p->v[top[i]];
                const ncm_pci_device *prev = i ? &p->v[top[i - 1]] : NULL;
                bool new_group = !prev || !same_locality(prev, d);
                if (new_group) {
                        ncm_buf_puts(b, "  ");
                        put_locality(b, d);
                        ncm_buf_puts(b, ":\n");
                }
                if (new_group || !str_eq(prev->root, d->root))
                        ncm_buf_printf(b, "    %s\n", d->root ? d->root : "(no PCI root)");
                put_subtree(b, p, parent, top[i], 1, d);
        }
}
