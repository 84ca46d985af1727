/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Node allocatable: the reservation flags, hard eviction thresholds, the reported allocatable
 * (nodestatus setters), the limits enforced on kubepods and on the reserved cgroups
 * (node_container_manager_linux.go), and this machine's capacity.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include <nodecm/cgroups.h>
#include <nodecm/fs.h>

int ncm_cgroup_resource_list_set(ncm_resource_list *l, const char *name, const ncm_quantity *q)
{
        size_t i = 0;
        ncm_resource *items;
        char *dup;

        while (i < l->n && strcmp(l->items[i].name, name) < 0)
                i++;
        if (i < l->n && strcmp(l->items[i].name, name) == 0) {
                l->items[i].quantity = *q;
                return 0;
        }
        dup = strdup(name);
        if (!dup)
                return -ENOMEM;
        items = realloc(l->items, (l->n + 1) * sizeof(*items));
        if (!items) {
                free(dup);
                return -ENOMEM;
        }
        memmove(&items[i + 1], &items[i], (l->n - i) * sizeof(*items));
        items[i].name = dup;
        items[i].quantity = *q;
        l->items = items;
        l->n++;
        return 0;
}

static const ncm_quantity *get(const ncm_resource_list *l, const char *name)
{
        return l ? ncm_resource_list_get(l, name) : NULL;
}

/* ---- flags ---- */

static const char *const signals[] = {
                "memory.available",      "allocatableMemory.available", "nodefs.available",
                "nodefs.inodesFree",     "imagefs.available",           "imagefs.inodesFree",
                "containerfs.available", "containerfs.inodesFree",      "pid.available",
};

static bool valid_signal(const char *s, size_t len)
{
        for (size_t i = 0; i < NCM_ELEMENTSOF(signals); i++)
                if (strlen(signals[i]) == len && memcmp(signals[i], s, len) == 0)
                        return true;
        return false;
}

static void add_default(ncm_eviction_thresholds *t, const char *signal, const char *q, float pct)
{
        ncm_eviction_threshold *e = &t->items[t->n++];

        memset(e, 0, sizeof(*e));
        snprintf(e->signal, sizeof(e->signal), "%s", signal);
        if (q) {
                (void)ncm_quantity_parse(q, &e->quantity, NULL);
        } else {
                e->is_percentage = true;
                e->percentage = pct;
        }
}

void ncm_cgroup_eviction_defaults(ncm_eviction_thresholds *ret)
{
        ret->n = 0;
        add_default(ret, "memory.available", "100Mi", 0);
        add_default(ret, "nodefs.available", NULL, 10.0f / 100);
        add_default(ret, "nodefs.inodesFree", NULL, 5.0f / 100);
        add_default(ret, "imagefs.available", NULL, 15.0f / 100);
        add_default(ret, "imagefs.inodesFree", NULL, 5.0f / 100);
}

typedef struct eviction_ud {
        ncm_eviction_thresholds *t;
        ncm_error *err;
} eviction_ud;

/* strconv.ParseFloat(s, 32): the decimal forms only (no hex, inf or nan). */
static int parse_float32(const char *s, size_t len, float *ret)
{
        char buf[64];
        char *end;
        float v;

        if (len == 0 || len >= sizeof(buf))
                return -EINVAL;
        for (size_t i = 0; i < len; i++)
                if (!strchr("0123456789.eE+-", s[i]))
                        return -EINVAL;
        memcpy(buf, s, len);
        buf[len] = '\0';
        errno = 0;
        v = strtof(buf, &end);
        if (*end || end == buf)
                return -EINVAL;
        if (errno == ERANGE && isinf(v))
                return -ERANGE;
        *ret = v;
        return 0;
}

static int eviction_pair(const char *k, size_t kl, const char *v, size_t vl, void *userdata)
{
        eviction_ud *ud = userdata;
        ncm_eviction_threshold e;
        size_t i;

        memset(&e, 0, sizeof(e));
        if (!valid_signal(k, kl) || kl >= sizeof(e.signal))
                return ncm_error_set(ud->err, EINVAL, "unsupported eviction signal %.*s", (int)kl,
                                     k);
        memcpy(e.signal, k, kl);
        if (vl > 0 && v[vl - 1] == '%') {
                float pct;
                int r;
                /* 0% and 100% disable the threshold. */
                if ((vl == 2 && v[0] == '0') || (vl == 4 && memcmp(v, "100%", 4) == 0))
                        goto drop;
                r = parse_float32(v, vl - 1, &pct);
                if (r < 0)
                        return ncm_error_set(
                                        ud->err, -r, "strconv.ParseFloat: parsing \"%.*s\": %s",
                                        (int)(vl - 1), v,
                                        r == -ERANGE ? "value out of range" : "invalid syntax");
                pct = pct / 100;
                if (pct < 0)
                        return ncm_error_set(ud->err, EINVAL,
                                             "eviction percentage threshold %s must be >= 0%%: "
                                             "%.*s",
                                             e.signal, (int)vl, v);
                if (pct > 1)
                        return ncm_error_set(ud->err, EINVAL,
                                             "eviction percentage threshold %s must be <= 100%%: "
                                             "%.*s",
                                             e.signal, (int)vl, v);
                e.is_percentage = true;
                e.percentage = pct;
        } else {
                char qs[NCM_QUANTITY_STRLEN];
                int r = ncm_quantity_parse_n(v, vl, &e.quantity, ud->err);
                if (r < 0)
                        return ncm_error_prefix(ud->err, "%s", e.signal);
                if (ncm_quantity_sign(&e.quantity) <= 0)
                        return ncm_error_set(ud->err, EINVAL,
                                             "eviction threshold %s must be positive: %s", e.signal,
                                             ncm_quantity_to_string(&e.quantity, qs));
        }
        /* A signal given twice keeps its first place and its last value (a Go map). */
        for (i = 0; i < ud->t->n; i++)
                if (strcmp(ud->t->items[i].signal, e.signal) == 0)
                        break;
        if (i == ud->t->n) {
                if (ud->t->n == NCM_CGROUP_MAX_THRESHOLDS)
                        return ncm_error_set(ud->err, E2BIG, "too many eviction thresholds");
                ud->t->n++;
        }
        ud->t->items[i] = e;
        return 0;
drop:
        for (i = 0; i < ud->t->n; i++)
                if (strcmp(ud->t->items[i].signal, e.signal) == 0) {
                        memmove(&ud->t->items[i], &ud->t->items[i + 1],
                                (ud->t->n - i - 1) * sizeof(ud->t->items[0]));
                        ud->t->n--;
                        break;
                }
        return 0;
}

int ncm_cgroup_eviction_set(ncm_eviction_thresholds *t, const char *signal, const char *value,
                            ncm_error *err)
{
        eviction_ud ud = {t, err};
        return eviction_pair(signal, strlen(signal), value, strlen(value), &ud);
}

int ncm_cgroup_parse_eviction_hard(const char *s, ncm_eviction_thresholds *ret, ncm_error *err)
{
        ncm_eviction_thresholds t = {0};
        eviction_ud ud = {&t, err};
        int r = ncm_cgroup_parse_map_flag(s, '<', eviction_pair, &ud, err);

        if (r < 0)
                return r;
        *ret = t;
        return 0;
}

typedef struct list_ud {
        ncm_resource_list *l;
        bool reserved; /* only the resources a reservation may name */
        ncm_error *err;
} list_ud;

static int list_pair(const char *k, size_t kl, const char *v, size_t vl, void *userdata)
{
        static const char *const reservable[] = {NCM_RESOURCE_CPU, NCM_RESOURCE_MEMORY,
                                                 NCM_RESOURCE_EPHEMERAL_STORAGE, NCM_RESOURCE_PID};
        list_ud *ud = userdata;
        char name[256];
        ncm_quantity q;
        int r;

        if (kl == 0 || kl >= sizeof(name) || memchr(k, '\0', kl))
                return ncm_error_set(ud->err, EINVAL, "invalid resource name \"%.*s\"", (int)kl, k);
        memcpy(name, k, kl);
        name[kl] = '\0';
        if (ud->reserved) {
                bool ok = false;
                for (size_t i = 0; i < NCM_ELEMENTSOF(reservable); i++)
                        ok = ok || strcmp(name, reservable[i]) == 0;
                if (!ok)
                        return ncm_error_set(ud->err, EINVAL, "cannot reserve \"%s\" resource",
                                             name);
        }
        r = ncm_quantity_parse_n(v, vl, &q, ud->err);
        if (r < 0)
                return ncm_error_prefix(ud->err,
                                        "failed to parse quantity \"%.*s\" for \"%s\" "
                                        "resource",
                                        (int)vl, v, name);
        if (ncm_quantity_sign(&q) < 0)
                return ncm_error_set(ud->err, EINVAL,
                                     "resource quantity for \"%s\" cannot be negative: %.*s", name,
                                     (int)vl, v);
        if (ncm_cgroup_resource_list_set(ud->l, name, &q) < 0)
                return ncm_error_set(ud->err, ENOMEM, "out of memory");
        return 0;
}

int ncm_cgroup_parse_reserved(const char *flag, const char *s, ncm_resource_list *ret,
                              ncm_error *err)
{
        ncm_resource_list l = {0};
        list_ud ud = {&l, true, err};
        int r = ncm_cgroup_parse_map_flag(s, '=', list_pair, &ud, err);

        if (r < 0) {
                ncm_resource_list_done(&l);
                return ncm_error_prefix(err, "%s", flag);
        }
        *ret = l;
        return 0;
}

int ncm_cgroup_parse_capacity(const char *s, ncm_resource_list *ret, ncm_error *err)
{
        ncm_resource_list l = {0};
        list_ud ud = {&l, false, err};
        int r = ncm_cgroup_parse_map_flag(s, '=', list_pair, &ud, err);

        if (r < 0) {
                ncm_resource_list_done(&l);
                return r;
        }
        *ret = l;
        return 0;
}

int ncm_cgroup_parse_enforce(const char *s, const char *kube_cgroup, const char *system_cgroup,
                             unsigned *ret, ncm_error *err)
{
        static const struct {
                const char *name;
                unsigned bit;
        } keys[] = {
                        {"pods", NCM_ENFORCE_PODS},
                        {"kube-reserved", NCM_ENFORCE_KUBE_RESERVED},
                        {"system-reserved", NCM_ENFORCE_SYSTEM_RESERVED},
                        {"kube-reserved-compressible", NCM_ENFORCE_KUBE_RESERVED_COMPRESSIBLE},
                        {"system-reserved-compressible", NCM_ENFORCE_SYSTEM_RESERVED_COMPRESSIBLE},
                        {"none", NCM_ENFORCE_NONE},
        };
        unsigned bits = 0;
        size_t count = 0;
        const char *p = s;

        while (*p) {
                size_t len = strcspn(p, ",");
                bool found = false;
                if (len > 0) {
                        for (size_t i = 0; i < NCM_ELEMENTSOF(keys); i++)
                                if (strlen(keys[i].name) == len &&
                                    memcmp(keys[i].name, p, len) == 0) {
                                        bits |= keys[i].bit;
                                        found = true;
                                }
                        if (!found)
                                return ncm_error_set(
                                                err, EINVAL,
                                                "invalid configuration: option \"%.*s\" specified "
                                                "for "
                                                "enforceNodeAllocatable "
                                                "(--enforce-node-allocatable). "
                                                "Valid options are \"pods\", \"system-reserved\", "
                                                "\"system-reserved-compressible\", "
                                                "\"kube-reserved\", "
                                                "\"kube-reserved-compressible\" or \"none\"",
                                                (int)len, p);
                        count++;
                }
                p += len;
                if (*p == ',')
                        p++;
        }
        if ((bits & NCM_ENFORCE_NONE) && count > 1)
                return ncm_error_set(err, EINVAL,
                                     "invalid configuration: enforceNodeAllocatable "
                                     "(--enforce-node-allocatable) may not contain additional "
                                     "enforcements when \"none\" is specified");
        if ((bits & (NCM_ENFORCE_SYSTEM_RESERVED | NCM_ENFORCE_SYSTEM_RESERVED_COMPRESSIBLE)) &&
            (!system_cgroup || !*system_cgroup))
                return ncm_error_set(err, EINVAL,
                                     "invalid configuration: systemReservedCgroup "
                                     "(--system-reserved-cgroup) must be specified when "
                                     "\"system-reserved\" or \"system-reserved-compressible\" "
                                     "contained in enforceNodeAllocatable "
                                     "(--enforce-node-allocatable)");
        if ((bits & (NCM_ENFORCE_KUBE_RESERVED | NCM_ENFORCE_KUBE_RESERVED_COMPRESSIBLE)) &&
            (!kube_cgroup || !*kube_cgroup))
                return ncm_error_set(err, EINVAL,
                                     "invalid configuration: kubeReservedCgroup "
                                     "(--kube-reserved-cgroup) must be specified when "
                                     "\"kube-reserved\" or \"kube-reserved-compressible\" "
                                     "contained in enforceNodeAllocatable "
                                     "(--enforce-node-allocatable)");
        if ((bits & NCM_ENFORCE_SYSTEM_RESERVED) &&
            (bits & NCM_ENFORCE_SYSTEM_RESERVED_COMPRESSIBLE))
                return ncm_error_set(err, EINVAL,
                                     "invalid configuration: both \"system-reserved\" and "
                                     "\"system-reserved-compressible\" cannot be specified "
                                     "together in enforceNodeAllocatable "
                                     "(--enforce-node-allocatable)");
        if ((bits & NCM_ENFORCE_KUBE_RESERVED) && (bits & NCM_ENFORCE_KUBE_RESERVED_COMPRESSIBLE))
                return ncm_error_set(err, EINVAL,
                                     "invalid configuration: both \"kube-reserved\" and "
                                     "\"kube-reserved-compressible\" cannot be specified "
                                     "together in enforceNodeAllocatable "
                                     "(--enforce-node-allocatable)");
        *ret = bits & ~(unsigned)NCM_ENFORCE_NONE;
        return 0;
}

/* ---- the computation ---- */

void ncm_node_allocatable_done(ncm_node_allocatable *na)
{
        ncm_resource_list_done(&na->capacity);
        ncm_resource_list_done(&na->eviction);
        ncm_resource_list_done(&na->reservation);
        ncm_resource_list_done(&na->allocatable);
        ncm_resource_list_done(&na->pods_limits);
}

static bool is_hugepages(const char *name)
{
        return strncmp(name, NCM_RESOURCE_HUGEPAGES_PREFIX,
                       strlen(NCM_RESOURCE_HUGEPAGES_PREFIX)) == 0;
}

/* value.Set(0) keeps the format. */
static void clamp(ncm_quantity *q)
{
        if (ncm_quantity_sign(q) < 0)
                *q = ncm_quantity_from_int(0, q->format);
}

#define TRY(expr)                                                                                  \
        do {                                                                                       \
                if ((expr) < 0) {                                                                  \
                        r = ncm_error_set(err, ERANGE, "node allocatable: quantity out of range"); \
                        goto fail;                                                                 \
                }                                                                                  \
        } while (0)
#define TRY_MEM(expr)                                                                              \
        do {                                                                                       \
                if ((expr) < 0) {                                                                  \
                        r = ncm_error_set(err, ENOMEM, "out of memory");                           \
                        goto fail;                                                                 \
                }                                                                                  \
        } while (0)

int ncm_cgroup_node_allocatable(const ncm_resource_list *capacity, const ncm_resource_list *kube,
                                const ncm_resource_list *system,
                                const ncm_eviction_thresholds *hard, unsigned enforce,
                                ncm_node_allocatable *ret, ncm_error *err)
{
        ncm_node_allocatable na;
        ncm_buf msg = NCM_BUF_INIT;
        int r = 0;

        memset(&na, 0, sizeof(na));
        for (size_t i = 0; i < capacity->n; i++)
                if (strcmp(capacity->items[i].name, NCM_RESOURCE_PID) != 0)
                        TRY_MEM(ncm_cgroup_resource_list_set(&na.capacity, capacity->items[i].name,
                                                             &capacity->items[i].quantity));

        /* hardEvictionReservation: only memory.available and nodefs.available reduce it. */
        for (size_t i = 0; hard && i < hard->n; i++) {
                const ncm_eviction_threshold *t = &hard->items[i];
                const char *res = strcmp(t->signal, "memory.available") == 0 ? NCM_RESOURCE_MEMORY
                                  : strcmp(t->signal, "nodefs.available") == 0
                                                  ? NCM_RESOURCE_EPHEMERAL_STORAGE
                                                  : NULL;
                ncm_quantity v;
                if (!res)
                        continue;
                if (t->is_percentage) {
                        const ncm_quantity *c = get(&na.capacity, res);
                        int64_t cap = c ? ncm_quantity_value(c) : 0;
                        /* float64(capacity) * float64(float32 percentage), truncated. */
                        double prod = (double)cap * (double)t->percentage;
                        int64_t val = prod >= 9.2233720368547758e18 ? INT64_MAX : (int64_t)prod;
                        v = ncm_quantity_from_int(val, NCM_QUANTITY_BINARY_SI);
                } else {
                        v = t->quantity;
                }
                TRY_MEM(ncm_cgroup_resource_list_set(&na.eviction, res, &v));
        }

        /* GetNodeAllocatableReservation over the capacity's resources. */
        for (size_t i = 0; i < na.capacity.n; i++) {
                const char *k = na.capacity.items[i].name;
                ncm_quantity sum = ncm_quantity_from_int(0, NCM_QUANTITY_DECIMAL_SI);
                const ncm_quantity *q;
                if ((q = get(system, k)))
                        TRY(ncm_quantity_add(&sum, q));
                if ((q = get(kube, k)))
                        TRY(ncm_quantity_add(&sum, q));
                if ((q = get(&na.eviction, k)))
                        TRY(ncm_quantity_add(&sum, q));
                if (!ncm_quantity_is_zero(&sum))
                        TRY_MEM(ncm_cgroup_resource_list_set(&na.reservation, k, &sum));
        }

        /* validateNodeAllocatable, in name order (Go's map order is random). */
        for (size_t i = 0; i < na.reservation.n; i++) {
                const ncm_quantity *c = get(&na.capacity, na.reservation.items[i].name);
                ncm_quantity left = *c;
                char a[NCM_QUANTITY_STRLEN], b[NCM_QUANTITY_STRLEN];
                TRY(ncm_quantity_sub(&left, &na.reservation.items[i].quantity));
                if (ncm_quantity_sign(&left) >= 0)
                        continue;
                ncm_buf_printf(&msg,
                               " Resource \"%s\" has a reservation of %s but capacity of %s. "
                               "Expected capacity >= reservation.",
                               na.reservation.items[i].name,
                               ncm_quantity_to_string(&na.reservation.items[i].quantity, a),
                               ncm_quantity_to_string(c, b));
        }
        if (msg.len) {
                r = ncm_error_set(err, NCM_E_UNSATISFIABLE,
                                  "invalid Node Allocatable configuration.%s", msg.data);
                goto fail;
        }

        /* The node status: capacity - reservation, then memory less the hugepages. */
        for (size_t i = 0; i < na.capacity.n; i++) {
                ncm_quantity v = na.capacity.items[i].quantity;
                const ncm_quantity *q = get(&na.reservation, na.capacity.items[i].name);
                if (q)
                        TRY(ncm_quantity_sub(&v, q));
                clamp(&v);
                TRY_MEM(ncm_cgroup_resource_list_set(&na.allocatable, na.capacity.items[i].name,
                                                     &v));
        }
        for (size_t i = 0; i < na.capacity.n; i++) {
                const ncm_quantity *mq = get(&na.allocatable, NCM_RESOURCE_MEMORY);
                ncm_quantity m;
                if (!is_hugepages(na.capacity.items[i].name) || !mq)
                        continue;
                m = *mq;
                TRY(ncm_quantity_sub(&m, &na.capacity.items[i].quantity));
                if (ncm_quantity_sign(&m) < 0)
                        m = ncm_quantity_from_int(0, NCM_QUANTITY_BINARY_SI);
                TRY_MEM(ncm_cgroup_resource_list_set(&na.allocatable, NCM_RESOURCE_MEMORY, &m));
        }

        /* kubepods: the internal capacity, less kube and system reserved with "pods". */
        for (size_t i = 0; i < capacity->n; i++) {
                ncm_quantity v = capacity->items[i].quantity;
                if (enforce & NCM_ENFORCE_PODS) {
                        const ncm_quantity *q;
                        if ((q = get(system, capacity->items[i].name)))
                                TRY(ncm_quantity_sub(&v, q));
                        if ((q = get(kube, capacity->items[i].name)))
                                TRY(ncm_quantity_sub(&v, q));
                        clamp(&v);
                }
                TRY_MEM(ncm_cgroup_resource_list_set(&na.pods_limits, capacity->items[i].name, &v));
        }
        ncm_buf_done(&msg);
        *ret = na;
        return 0;
fail:
        ncm_buf_done(&msg);
        ncm_node_allocatable_done(&na);
        return r;
}

int ncm_cgroup_config_for_resource_list(const ncm_resource_list *rl, bool compressible_only,
                                        const ncm_cpuset *all_cpus, ncm_cgroup_resources *ret,
                                        ncm_error *err)
{
        ncm_cgroup_resources r;
        const ncm_quantity *q;

        ncm_cgroup_resources_init(&r);
        if (!rl)
                return ncm_error_set(err, EINVAL, "cgroup is not configured properly");
        if ((q = ncm_resource_list_get(rl, NCM_RESOURCE_CPU))) {
                r.has_cpu_shares = true;
                r.cpu_shares = ncm_cgroup_millicpu_to_shares(ncm_quantity_milli_value(q));
        }
        if (!compressible_only) {
                if ((q = ncm_resource_list_get(rl, NCM_RESOURCE_MEMORY))) {
                        r.has_memory = true;
                        r.memory = ncm_quantity_value(q);
                }
                if ((q = ncm_resource_list_get(rl, NCM_RESOURCE_PID))) {
                        r.has_pids = true;
                        r.pids = ncm_quantity_value(q);
                }
                r.has_hugepages = true;
                for (size_t i = 0; i < rl->n; i++) {
                        uint64_t size;
                        if (ncm_resource_hugepage_size(rl->items[i].name, &size, NULL) < 0 ||
                            size > INT64_MAX)
                                continue;
                        if (ncm_cgroup_resources_add_hugepage(
                                            &r, (int64_t)size,
                                            ncm_quantity_value(&rl->items[i].quantity)) < 0)
                                return ncm_error_set(err, ERANGE, "%s: out of range",
                                                     rl->items[i].name);
                }
        }
        if (all_cpus && ncm_cgroup_resources_set_cpuset(&r, all_cpus, NULL) < 0)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = r;
        return 0;
}

/* ---- this machine ---- */

static int read_i64_file(int rootfd, const char *path, int64_t *ret, ncm_error *err)
{
        char buf[64];
        ssize_t n = ncm_fs_read(rootfd, path, buf, sizeof(buf), err);
        int r;

        if (n < 0)
                return (int)n;
        r = ncm_cgroup_parse_int64(buf, ret);
        if (r < 0)
                return ncm_error_set(err, -r, "%s: cannot parse '%s'", path, buf);
        return 0;
}

int ncm_cgroup_machine_capacity(int rootfd, const char *root_dir, ncm_resource_list *ret,
                                ncm_error *err)
{
        ncm_resource_list l = {0};
        char buf[16384];
        ssize_t n;
        int r = 0;

        n = ncm_fs_read(rootfd, "/sys/devices/system/cpu/online", buf, sizeof(buf), err);
        if (n >= 0) {
                ncm_autoptr(ncm_cpuset) cpus = NULL;
                ncm_quantity q;
                r = ncm_cpuset_parse_sysfs_list(buf, &cpus, err);
                if (r < 0)
                        goto fail;
                q = ncm_quantity_from_int(ncm_cpuset_weight(cpus), NCM_QUANTITY_DECIMAL_SI);
                TRY_MEM(ncm_cgroup_resource_list_set(&l, NCM_RESOURCE_CPU, &q));
        } else if (n != -ENOENT) {
                r = (int)n;
                goto fail;
        }
        ncm_error_clear(err);

        n = ncm_fs_read(rootfd, "/proc/meminfo", buf, sizeof(buf), err);
        if (n >= 0) {
                int64_t bytes;
                ncm_quantity q;
                r = ncm_cgroup_parse_meminfo_total(buf, &bytes);
                if (r < 0) {
                        r = ncm_error_set(err, -r, "/proc/meminfo: no valid MemTotal line");
                        goto fail;
                }
                q = ncm_quantity_from_int(bytes, NCM_QUANTITY_BINARY_SI);
                TRY_MEM(ncm_cgroup_resource_list_set(&l, NCM_RESOURCE_MEMORY, &q));
        } else if (n != -ENOENT) {
                r = (int)n;
                goto fail;
        }
        ncm_error_clear(err);

        {
                int64_t sizes[NCM_CGROUP_MAX_HUGEPAGE_SIZES];
                size_t ns = 0;
                r = ncm_cgroup_hugepage_sizes(rootfd, sizes, NCM_ELEMENTSOF(sizes), &ns, err);
                if (r < 0)
                        goto fail;
                for (size_t i = 0; i < ns; i++) {
                        char path[128], name[64], qs[NCM_QUANTITY_STRLEN];
                        int64_t pages = 0;
                        ncm_quantity size = ncm_quantity_from_int(sizes[i], NCM_QUANTITY_BINARY_SI);
                        ncm_quantity total;
                        snprintf(path, sizeof(path),
                                 "/sys/kernel/mm/hugepages/hugepages-%lldkB/nr_hugepages",
                                 (long long)(sizes[i] / 1024));
                        r = read_i64_file(rootfd, path, &pages, err);
                        if (r < 0)
                                goto fail;
                        if (pages < 0 || (pages > 0 && sizes[i] > INT64_MAX / pages)) {
                                r = ncm_error_set(err, ERANGE, "%s: out of range", path);
                                goto fail;
                        }
                        total = ncm_quantity_from_int(pages * sizes[i], NCM_QUANTITY_BINARY_SI);
                        snprintf(name, sizeof(name), NCM_RESOURCE_HUGEPAGES_PREFIX "%s",
                                 ncm_quantity_to_string(&size, qs));
                        TRY_MEM(ncm_cgroup_resource_list_set(&l, name, &total));
                }
        }

        {
                int64_t pid_max = -1, threads_max = -1, tasks = -1;
                if (read_i64_file(rootfd, "/proc/sys/kernel/pid_max", &pid_max, NULL) == 0)
                        tasks = pid_max;
                if (read_i64_file(rootfd, "/proc/sys/kernel/threads-max", &threads_max, NULL) ==
                                    0 &&
                    (tasks < 0 || threads_max < tasks))
                        tasks = threads_max;
                if (tasks >= 0) {
                        ncm_quantity q = ncm_quantity_from_int(tasks, NCM_QUANTITY_DECIMAL_SI);
                        TRY_MEM(ncm_cgroup_resource_list_set(&l, NCM_RESOURCE_PID, &q));
                }
        }

        {
                ncm_autoclose int fd = -1;
                struct statvfs st;
                if (root_dir && *root_dir)
                        fd = ncm_fs_openat(rootfd, root_dir, O_PATH | O_DIRECTORY, 0, NULL);
                if (fd < 0)
                        fd = ncm_fs_openat(rootfd, "/", O_PATH | O_DIRECTORY, 0, NULL);
                if (fd >= 0 && fstatvfs(fd, &st) == 0 && st.f_frsize > 0 &&
                    st.f_blocks <= (uint64_t)INT64_MAX / st.f_frsize) {
                        ncm_quantity q = ncm_quantity_from_int((int64_t)(st.f_blocks * st.f_frsize),
                                                               NCM_QUANTITY_BINARY_SI);
                        TRY_MEM(ncm_cgroup_resource_list_set(&l, NCM_RESOURCE_EPHEMERAL_STORAGE,
                                                             &q));
                }
        }
        *ret = l;
        return 0;
fail:
        ncm_resource_list_done(&l);
        return r;
}
