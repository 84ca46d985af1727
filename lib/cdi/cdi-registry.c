/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CDI registry: CDI's cache refresh (pkg/cdi/cache.go, spec-dirs.go) without the watch.
 * Directories are read in priority order, each one's .json and .yaml files in name order (as
 * filepath.Walk visits them); a device seen again from a later directory replaces the earlier
 * one, from the same directory it conflicts, and a name that ever conflicted does not resolve
 * (CDI deletes every conflicting name at the end, whatever came later). The scan is done on
 * demand, each time (a DRA driver writes its spec just before the container is created), so
 * its cost is the files' count and size; nodecm holds no cache to go stale.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>

#include <nodecm/cdi.h>
#include <nodecm/fs.h>
#include "base/array.h"

typedef struct entry {
        const ncm_cdi_device *dev;
        size_t spec; /* index in specs */
        int prio;    /* the directory's index */
        size_t seq;  /* scan order */
} entry;

typedef struct spec_file {
        ncm_cdi_spec *spec;
        char *file; /* its path, for errors and listings */
        int prio;   /* its directory's index */
} spec_file;

struct ncm_cdi_registry {
        spec_file *specs; /* in scan order */
        size_t n_specs, cap_specs;
        entry *v; /* resolved devices, by name */
        size_t n;
        char **errors;
        size_t n_errors, cap_errors;
};

ncm_cdi_registry *ncm_cdi_registry_free(ncm_cdi_registry *r)
{
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_specs; i++) {
                ncm_cdi_spec_free(r->specs[i].spec);
                free(r->specs[i].file);
        }
        free(r->specs);
        free(r->v);
        for (size_t i = 0; i < r->n_errors; i++)
                free(r->errors[i]);
        free(r->errors);
        free(r);
        return NULL;
}

static int add_error(ncm_cdi_registry *r, const char *fmt, ...) NCM_PRINTF(2, 3);
static int add_error(ncm_cdi_registry *r, const char *fmt, ...)
{
        va_list ap;
        char *s;
        int n;

        if (ncm__array_grow(r->errors, r->cap_errors, r->n_errors) < 0)
                return -ENOMEM;
        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        r->errors[r->n_errors++] = s;
        return 0;
}

static bool spec_name(const char *n)
{
        size_t len = strlen(n);
        return (len > 5 && strcmp(n + len - 5, ".json") == 0) ||
               (len > 5 && strcmp(n + len - 5, ".yaml") == 0);
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool absolute(const char *dir, ncm_error *err)
{
        if (dir && dir[0] == '/')
                return true;
        ncm_error_set(err, EINVAL, "CDI spec directory \"%s\": not absolute", dir ? dir : "");
        return false;
}

/* The spec file names of DIR (under ROOTFD), sorted; *RET_N of them. */
static int list_dir(int rootfd, const char *dir, char ***ret, size_t *ret_n, ncm_error *err)
{
        DIR *d = NULL;
        struct dirent *de;
        char **v = NULL;
        size_t n = 0, cap = 0;
        int r = ncm_fs_opendir(rootfd, dir, &d, err);

        *ret = NULL;
        *ret_n = 0;
        if (r == -ENOENT || r == -ENOTDIR) {
                if (err)
                        ncm_error_clear(err);
                return 0;
        }
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                char *c;
                if (!spec_name(de->d_name) || de->d_type == DT_DIR)
                        continue;
                if (n >= NCM_CDI_DIR_FILES_MAX) {
                        r = ncm_error_set(err, E2BIG, "%s: more than %d spec files", dir,
                                          NCM_CDI_DIR_FILES_MAX);
                        break;
                }
                if (ncm__array_grow(v, cap, n) < 0 || !(c = strdup(de->d_name))) {
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                        break;
                }
                v[n++] = c;
        }
        closedir(d);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        free(v[i]);
                free(v);
                return r;
        }
        if (n)
                qsort(v, n, sizeof(*v), cmp_str);
        *ret = v;
        *ret_n = n;
        return 0;
}

/* Read and parse DIR/NAME; a file that is no spec becomes an error of the registry. */
static int load_file(ncm_cdi_registry *reg, int rootfd, const char *dir, int prio, const char *name,
                     ncm_error *err)
{
        ncm_autofree char *path = NULL, *text = NULL;
        ncm_error e = NCM_ERROR_INIT;
        ncm_cdi_spec *spec = NULL;
        size_t len = 0;
        int r;

        if (asprintf(&path, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name) < 0) {
                path = NULL;
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        r = ncm_fs_read_all(rootfd, path, NCM_CDI_SPEC_MAX, &text, &len, &e);
        if (r == -EISDIR)
                return 0; /* a subdirectory whose type readdir did not tell */
        if (r >= 0)
                r = ncm_cdi_spec_parse(text, len, path, &spec, &e);
        if (r == -ENOMEM)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (r < 0)
                return add_error(reg, "%s", e.msg) < 0 ? ncm_error_set(err, ENOMEM, "out of memory")
                                                       : 0;
        if (ncm__array_grow(reg->specs, reg->cap_specs, reg->n_specs) < 0) {
                ncm_cdi_spec_free(spec);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        reg->specs[reg->n_specs++] = (spec_file){spec, NCM_TAKE_PTR(path), prio};
        return 0;
}

static int cmp_entry(const void *a, const void *b)
{
        const entry *x = a, *y = b;
        int c = strcmp(x->dev->name, y->dev->name);
        if (c)
                return c;
        return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Resolve every device name as CDI's refresh does (see the top of the file). */
static int resolve(ncm_cdi_registry *reg, ncm_error *err)
{
        entry *all = NULL;
        size_t n = 0, cap = 0, out = 0;

        for (size_t s = 0; s < reg->n_specs; s++)
                for (size_t d = 0; d < reg->specs[s].spec->n_devices; d++) {
                        if (ncm__array_grow(all, cap, n) < 0) {
                                free(all);
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        }
                        all[n] = (entry){&reg->specs[s].spec->devices[d], s, reg->specs[s].prio, n};
                        n++;
                }
        if (n)
                qsort(all, n, sizeof(*all), cmp_entry);
        for (size_t i = 0; i < n;) {
                size_t j = i + 1, win = i;
                bool conflict = false;
                for (; j < n && strcmp(all[j].dev->name, all[i].dev->name) == 0; j++) {
                        if (all[j].prio > all[win].prio) {
                                win = j;
                        } else if (all[j].prio == all[win].prio) {
                                conflict = true;
                                if (add_error(reg,
                                              "conflicting device \"%s\" (specs \"%s\", \"%s\")",
                                              all[j].dev->name, reg->specs[all[j].spec].file,
                                              reg->specs[all[win].spec].file) < 0) {
                                        free(all);
                                        return ncm_error_set(err, ENOMEM, "out of memory");
                                }
                        }
                }
                if (!conflict)
                        all[out++] = all[win];
                i = j;
        }
        reg->v = all;
        reg->n = out;
        return 0;
}

int ncm_cdi_registry_load(int rootfd, const char *const *dirs, size_t ndirs, ncm_cdi_registry **ret,
                          ncm_error *err)
{
        static const char *const defaults[] = {NCM_CDI_STATIC_DIR, NCM_CDI_DYNAMIC_DIR};
        ncm_autoptr(ncm_cdi_registry) reg = calloc(1, sizeof(*reg));
        int r = 0;

        if (!reg)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (!dirs) {
                dirs = defaults;
                ndirs = NCM_ELEMENTSOF(defaults);
        }
        for (size_t k = 0; k < ndirs && r >= 0; k++) {
                char **names = NULL;
                size_t nn = 0;
                if (!absolute(dirs[k], err))
                        return -EINVAL;
                r = list_dir(rootfd, dirs[k], &names, &nn, err);
                for (size_t i = 0; i < nn; i++) {
                        if (r >= 0)
                                r = load_file(reg, rootfd, dirs[k], (int)k, names[i], err);
                        free(names[i]);
                }
                free(names);
        }
        if (r < 0)
                return r;
        r = resolve(reg, err);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(reg);
        return 0;
}

static void fnv(uint64_t *h, const void *data, size_t len)
{
        const unsigned char *p = data;
        for (size_t i = 0; i < len; i++) {
                *h ^= p[i];
                *h *= UINT64_C(1099511628211);
        }
}

/*
 * The kernel's file times advance by its clock tick (up to 10ms): a file changed again within
 * one tick of the stamp, keeping its size, would keep its times. A spec changed that recently
 * makes the stamp not worth keeping, as git treats "racily clean" files.
 */
#define SETTLE_NS INT64_C(20000000)

static int64_t ns_of(const struct timespec *ts)
{
        return (int64_t)ts->tv_sec * INT64_C(1000000000) + ts->tv_nsec;
}

/* Into *H: DIR's spec files (under ROOTFD) as list_dir finds them, with their stat data. */
static int stamp_dir(int rootfd, const char *dir, const struct timespec *now, uint64_t *h,
                     ncm_error *err)
{
        /* the directory read with getdents64 on the fd that the files are stat'ed through:
         * a third of the system calls of opendir and an fd per directory, at every admission */
        ncm_autoclose int dfd = ncm_fs_openat(rootfd, dir, O_RDONLY | O_DIRECTORY, 0, err);
        _Alignas(struct dirent64) char buf[8192];
        int cacheable = 1;
        ssize_t n;

        fnv(h, dir, strlen(dir) + 1);
        if (dfd == -ENOENT || dfd == -ENOTDIR) {
                if (err)
                        ncm_error_clear(err);
                return 1;
        }
        if (dfd < 0)
                return dfd;
        while ((n = getdents64(dfd, buf, sizeof(buf))) > 0) {
                for (ssize_t off = 0; off < n;) {
                        const struct dirent64 *de = (const struct dirent64 *)(buf + off);
                        struct stat st;
                        int64_t v[6] = {0};

                        off += de->d_reclen;
                        if (!spec_name(de->d_name) || de->d_type == DT_DIR)
                                continue;
                        fnv(h, de->d_name, strlen(de->d_name) + 1);
                        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                                if (S_ISLNK(st.st_mode) ||
                                    ns_of(&st.st_ctim) > ns_of(now) - SETTLE_NS)
                                        cacheable = 0;
                                v[0] = (int64_t)st.st_mtim.tv_sec;
                                v[1] = (int64_t)st.st_mtim.tv_nsec;
                                v[2] = (int64_t)st.st_size;
                                v[3] = (int64_t)st.st_ino;
                                v[4] = (int64_t)st.st_ctim.tv_sec;
                                v[5] = (int64_t)st.st_ctim.tv_nsec;
                        }
                        fnv(h, v, sizeof(v));
                }
        }
        if (n < 0)
                return ncm_error_errno(err, errno, "read directory '%s'", dir);
        return cacheable;
}

int ncm_cdi_stamp(int rootfd, const char *const *dirs, size_t ndirs, uint64_t *ret, ncm_error *err)
{
        static const char *const defaults[] = {NCM_CDI_STATIC_DIR, NCM_CDI_DYNAMIC_DIR};
        uint64_t h = UINT64_C(14695981039346656037);
        struct timespec now;
        int cacheable = 1;

        (void)clock_gettime(CLOCK_REALTIME, &now);
        if (!dirs) {
                dirs = defaults;
                ndirs = NCM_ELEMENTSOF(defaults);
        }
        for (size_t k = 0; k < ndirs; k++) {
                int r;
                if (!absolute(dirs[k], err))
                        return -EINVAL;
                r = stamp_dir(rootfd, dirs[k], &now, &h, err);
                if (r < 0)
                        return r;
                if (r == 0)
                        cacheable = 0;
        }
        *ret = h;
        return cacheable;
}

static const ncm_cdi_device *at(const ncm_cdi_registry *r, size_t i, const ncm_cdi_spec **ret_spec,
                                const char **ret_file)
{
        if (ret_spec)
                *ret_spec = r->specs[r->v[i].spec].spec;
        if (ret_file)
                *ret_file = r->specs[r->v[i].spec].file;
        return r->v[i].dev;
}

const ncm_cdi_device *ncm_cdi_registry_find(const ncm_cdi_registry *r, const char *qualified,
                                            const ncm_cdi_spec **ret_spec, const char **ret_file)
{
        size_t lo = 0, hi = r ? r->n : 0;

        if (!qualified)
                return NULL;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(r->v[mid].dev->name, qualified);
                if (c == 0)
                        return at(r, mid, ret_spec, ret_file);
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

size_t ncm_cdi_registry_num_devices(const ncm_cdi_registry *r)
{
        return r ? r->n : 0;
}

const ncm_cdi_device *ncm_cdi_registry_device_at(const ncm_cdi_registry *r, size_t i,
                                                 const ncm_cdi_spec **ret_spec,
                                                 const char **ret_file)
{
        return r && i < r->n ? at(r, i, ret_spec, ret_file) : NULL;
}

size_t ncm_cdi_registry_num_errors(const ncm_cdi_registry *r)
{
        return r ? r->n_errors : 0;
}

const char *ncm_cdi_registry_error(const ncm_cdi_registry *r, size_t i)
{
        return r && i < r->n_errors ? r->errors[i] : NULL;
}
