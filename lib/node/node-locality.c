/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device locality: nodecm's configuration of it (deviceLocalCPUs, draTopologyHints,
 * cdiSpecDirs, devicePCI) and the locator that finds a container's devices on the PCI bus.
 *
 * A device has no PCI address in the kubelet's APIs, so the locator tries what the field
 * offers, most explicit first: the operator's devicePCI; an id or name that is a PCI address
 * (the SR-IOV plugin names its devices by their VFs, several DRA drivers name CDI devices so);
 * then the device nodes the container gets, which the kernel links to the device tree. A plugin
 * answers Allocate for all of a container's devices of a resource at once, so the nodes of that
 * answer locate those devices together. Not finding a device is a result, shown as such (the
 * device then draws no CPUs and gives no hint): only the machine's files failing is an error.
 *
 * The CDI spec directories are checked again at each admission (ncm_locator_refresh): a DRA
 * driver writes a claim's spec just before the container is created. The specs are read and
 * parsed again only when that check (ncm_cdi_stamp: names, sizes and times) finds a change.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/array.h"
#include "base/json.h"
#include "node-internal.h"

/* ------------------------------------------------------------------------------------------
 * Configuration
 */

static void pci_map_done(struct node_pci_map *m, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(m[i].device);
                ncm_pci_strv_free(m[i].pci, m[i].n_pci);
        }
        free(m);
}

void ncm__node_locality_config_done(ncm_node_config *c)
{
        ncm_pci_strv_free(c->loc.cdi_dirs, c->loc.n_cdi_dirs);
        pci_map_done(c->loc.pci_map, c->loc.n_pci_map);
        c->loc = (struct node_locality_config){0};
}

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* A choice field: *RET = (value == ON), "OFF" when absent. */
static int choice(const ncm_node_config *c, json_object *o, const char *field, const char *off,
                  const char *on, bool *ret, ncm_error *err)
{
        json_object *v = ncm__json_get(o, field);
        char path[256];
        const char *s;

        *ret = false;
        if (!v)
                return 0;
        ncm__node_field(c, field, path, sizeof(path));
        if (!json_object_is_type(v, json_type_string))
                return ncm_error_set(err, EINVAL, "%s: expected string, got %s", path,
                                     ncm__json_type_name(v));
        s = json_object_get_string(v);
        if (strcmp(s, on) == 0)
                *ret = true;
        else if (strcmp(s, off) != 0)
                return ncm_error_set(err, EINVAL, "%s: unknown value \"%.64s\" (%s or %s)", path, s,
                                     off, on);
        return 0;
}

static int cmp_map(const void *a, const void *b)
{
        return strcmp(((const struct node_pci_map *)a)->device,
                      ((const struct node_pci_map *)b)->device);
}

static int read_pci_map(ncm_node_config *c, json_object *v, ncm_error *err)
{
        char path[256];
        size_t n = 0;

        ncm__node_field(c, "devicePCI", path, sizeof(path));
        if (!json_object_is_type(v, json_type_object))
                return ncm_error_set(err, EINVAL, "%s: expected object, got %s", path,
                                     ncm__json_type_name(v));
        c->loc.pci_map = calloc((size_t)json_object_object_length(v) + 1, sizeof(*c->loc.pci_map));
        if (!c->loc.pci_map)
                return oom(err);
        json_object_object_foreach(v, key, val)
        {
                struct node_pci_map *m = &c->loc.pci_map[n];
                size_t na;
                bool list = json_object_is_type(val, json_type_array);

                if (!strchr(key, '=') || key[0] == '=')
                        return ncm_error_set(err, EINVAL,
                                             "%s[%.128s]: not a device (RESOURCE=ID, or a CDI "
                                             "name)",
                                             path, key);
                if (!list && !json_object_is_type(val, json_type_string))
                        return ncm_error_set(err, EINVAL,
                                             "%s[%.128s]: expected a PCI address or a list of "
                                             "them, got %s",
                                             path, key, ncm__json_type_name(val));
                na = list ? json_object_array_length(val) : 1;
                if (na == 0 || na > 64)
                        return ncm_error_set(err, EINVAL, "%s[%.128s]: 1 to 64 PCI addresses", path,
                                             key);
                if (!(m->device = strdup(key)) || !(m->pci = calloc(na, sizeof(*m->pci)))) {
                        c->loc.n_pci_map = n + 1;
                        return oom(err);
                }
                c->loc.n_pci_map = ++n;
                for (size_t i = 0; i < na; i++) {
                        json_object *e = list ? json_object_array_get_idx(val, i) : val;
                        char addr[NCM_PCI_ADDRESS_MAX];
                        if (!json_object_is_type(e, json_type_string) ||
                            ncm_pci_parse_address(json_object_get_string(e), addr) < 0)
                                return ncm_error_set(err, EINVAL,
                                                     "%s[%.128s]: \"%.64s\" is not a PCI address "
                                                     "(DDDD:BB:DD.F)",
                                                     path, key,
                                                     json_object_is_type(e, json_type_string)
                                                                     ? json_object_get_string(e)
                                                                     : ncm__json_type_name(e));
                        if (!(m->pci[i] = strdup(addr)))
                                return oom(err);
                        m->n_pci = i + 1;
                }
        }
        qsort(c->loc.pci_map, n, sizeof(*c->loc.pci_map), cmp_map);
        return 0;
}

static int read_dirs(ncm_node_config *c, json_object *v, ncm_error *err)
{
        char path[256];
        size_t n;

        ncm__node_field(c, "cdiSpecDirs", path, sizeof(path));
        if (!json_object_is_type(v, json_type_array))
                return ncm_error_set(err, EINVAL, "%s: expected array, got %s", path,
                                     ncm__json_type_name(v));
        n = json_object_array_length(v);
        if (n > 16)
                return ncm_error_set(err, EINVAL, "%s: %zu directories, more than 16", path, n);
        c->loc.cdi_dirs = calloc(n + 1, sizeof(*c->loc.cdi_dirs));
        if (!c->loc.cdi_dirs)
                return oom(err);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(v, i);
                if (!json_object_is_type(e, json_type_string) ||
                    json_object_get_string(e)[0] != '/')
                        return ncm_error_set(err, EINVAL, "%s[%zu]: expected an absolute path",
                                             path, i);
                if (!(c->loc.cdi_dirs[i] = strdup(json_object_get_string(e))))
                        return oom(err);
                c->loc.n_cdi_dirs = i + 1;
        }
        if (n == 0) {
                /* an empty list is a list: no directory at all */
                c->loc.n_cdi_dirs = 0;
        }
        return 0;
}

int ncm__node_locality_config(ncm_node_config *c, json_object *o, ncm_error *err)
{
        json_object *v;
        int r;

        if ((r = choice(c, o, "deviceLocalCPUs", "ignore", "prefer", &c->loc.local_cpus, err)) <
                            0 ||
            (r = choice(c, o, "draTopologyHints", "ignore", "align", &c->loc.dra_hints, err)) < 0)
                return r;
        if ((v = ncm__json_get(o, "cdiSpecDirs")) && (r = read_dirs(c, v, err)) < 0)
                return r;
        if ((v = ncm__json_get(o, "devicePCI")) && (r = read_pci_map(c, v, err)) < 0)
                return r;
        return 0;
}

bool ncm_node_config_device_local_cpus(const ncm_node_config *c)
{
        return c->loc.local_cpus;
}

bool ncm_node_config_dra_hints(const ncm_node_config *c)
{
        return c->loc.dra_hints;
}

const char *const *ncm_node_config_cdi_dirs(const ncm_node_config *c, size_t *n)
{
        *n = c->loc.n_cdi_dirs;
        return (const char *const *)c->loc.cdi_dirs;
}

const char *const *ncm_node_config_device_pci(const ncm_node_config *c, const char *device,
                                              size_t *n)
{
        struct node_pci_map key = {.device = (char *)device};
        const struct node_pci_map *m =
                        c->loc.n_pci_map ? bsearch(&key, c->loc.pci_map, c->loc.n_pci_map,
                                                   sizeof(*c->loc.pci_map), cmp_map)
                                         : NULL;
        *n = m ? m->n_pci : 0;
        return m ? (const char *const *)m->pci : NULL;
}

/* ------------------------------------------------------------------------------------------
 * Locations
 */

void ncm_device_location_done(ncm_device_location *d)
{
        free(d->device);
        free(d->how);
        ncm_pci_strv_free(d->pci, d->n_pci);
        ncm_cpuset_free(d->local_cpus);
        *d = (ncm_device_location){0};
}

void ncm_device_locations_free(ncm_device_location *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                ncm_device_location_done(&v[i]);
        free(v);
}

struct ncm_locator {
        const ncm_topo *t;
        const ncm_node_config *cfg;
        char *root;
        int fd; /* the machine's root, -1 until opened */
        ncm_pci *own_pci;
        const ncm_pci *pci; /* the topology's, or own_pci once read */
        ncm_cdi_registry *reg;
        bool check_reg;  /* REG may be stale: compare its stamp before using it */
        bool reg_cached; /* REG_STAMP is its directories' stamp (ncm_cdi_stamp) */
        uint64_t reg_stamp;
        /* the CDI devices located since the last refresh: an admission asks for a device
         * twice (its CPUs, its hint), the listing of held devices once per container */
        ncm_device_location *memo;
        size_t n_memo, cap_memo;
};

static void memo_clear(ncm_locator *l)
{
        ncm_device_locations_free(l->memo, l->n_memo);
        l->memo = NULL;
        l->n_memo = l->cap_memo = 0;
}

static int location_copy(const ncm_device_location *s, ncm_device_location *d)
{
        *d = (ncm_device_location){.located = s->located, .numa = s->numa};
        if (!(d->device = strdup(s->device)) || !(d->how = strdup(s->how)) ||
            (s->local_cpus && !(d->local_cpus = ncm_cpuset_dup(s->local_cpus))) ||
            (s->n_pci && !(d->pci = calloc(s->n_pci, sizeof(*d->pci)))))
                goto fail;
        for (; d->n_pci < s->n_pci; d->n_pci++)
                if (!(d->pci[d->n_pci] = strdup(s->pci[d->n_pci])))
                        goto fail;
        return 0;
fail:
        ncm_device_location_done(d);
        return -ENOMEM;
}

ncm_locator *ncm_locator_free(ncm_locator *l)
{
        if (!l)
                return NULL;
        if (l->fd >= 0)
                close(l->fd);
        free(l->root);
        ncm_pci_free(l->own_pci);
        ncm_cdi_registry_free(l->reg);
        memo_clear(l);
        free(l);
        return NULL;
}

int ncm_locator_new(const ncm_topo *t, const ncm_node_config *cfg, const char *machine_root,
                    ncm_locator **ret, ncm_error *err)
{
        ncm_locator *l = calloc(1, sizeof(*l));

        if (!l || !(l->root = strdup(machine_root ? machine_root : "/"))) {
                free(l);
                return oom(err);
        }
        l->t = t;
        l->cfg = cfg;
        l->fd = -1;
        l->pci = ncm_topo_pci(t);
        *ret = l;
        return 0;
}

void ncm_locator_refresh(ncm_locator *l)
{
        /* kept if its spec files are unchanged (checked at the next use): a scan of names and
         * times instead of reading and parsing every spec at every admission */
        l->check_reg = true;
        memo_clear(l);
}

static int root_fd(ncm_locator *l, ncm_error *err)
{
        if (l->fd < 0) {
                l->fd = ncm_fs_open_root(l->root, err);
                if (l->fd < 0) {
                        int r = l->fd;
                        l->fd = -1;
                        return r;
                }
        }
        return l->fd;
}

int ncm_locator_pci(ncm_locator *l, const ncm_pci **ret, ncm_error *err)
{
        if (!l->pci) {
                int fd = root_fd(l, err), r;
                if (fd < 0)
                        return fd;
                r = ncm_pci_discover_sysfs(fd, &l->own_pci, err);
                if (r < 0)
                        return ncm_error_prefix(err, "machine root %s", l->root);
                l->pci = l->own_pci;
        }
        *ret = l->pci;
        return 0;
}

int ncm_locator_registry(ncm_locator *l, const ncm_cdi_registry **ret, ncm_error *err)
{
        size_t n = 0;
        /* NULL: CDI's defaults; an empty cdiSpecDirs list is no directory at all */
        const char *const *dirs = ncm_node_config_cdi_dirs(l->cfg, &n);
        uint64_t stamp = 0;
        int fd, r, cacheable = 0;

        if (l->reg && !l->check_reg) {
                *ret = l->reg;
                return 0;
        }
        fd = root_fd(l, err);
        if (fd < 0)
                return fd;
        cacheable = ncm_cdi_stamp(fd, dirs, n, &stamp, err);
        if (cacheable < 0)
                return cacheable;
        l->check_reg = false;
        if (!l->reg || !l->reg_cached || !cacheable || stamp != l->reg_stamp) {
                ncm_cdi_registry *reg = NULL;
                r = ncm_cdi_registry_load(fd, dirs, n, &reg, err);
                if (r < 0)
                        return r;
                ncm_cdi_registry_free(l->reg);
                l->reg = reg;
                l->reg_cached = cacheable > 0;
                l->reg_stamp = stamp;
        }
        *ret = l->reg;
        return 0;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add ADDRS[0..N) to D's functions (sorted, unique). */
static int add_pci(ncm_device_location *d, char *const *addrs, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                char **v;
                bool seen = false;
                for (size_t k = 0; k < d->n_pci && !seen; k++)
                        seen = strcmp(d->pci[k], addrs[i]) == 0;
                if (seen)
                        continue;
                v = realloc(d->pci, (d->n_pci + 1) * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                d->pci = v;
                if (!(d->pci[d->n_pci] = strdup(addrs[i])))
                        return -ENOMEM;
                d->n_pci++;
        }
        if (d->n_pci > 1)
                qsort(d->pci, d->n_pci, sizeof(*d->pci), cmp_str);
        return 0;
}

/* D is located: its functions' NUMA nodes and local CPUs from the PCI table. */
static int finish(ncm_locator *l, ncm_device_location *d, const char *how, ncm_error *err)
{
        const ncm_pci *pci = NULL;
        ncm_autoptr(ncm_cpuset) local = ncm_cpuset_new();
        bool any_local = false;
        int r = ncm_locator_pci(l, &pci, err);

        if (r < 0)
                return r;
        if (!local || !(d->how = strdup(how)))
                return oom(err);
        d->located = true;
        for (size_t i = 0; i < d->n_pci; i++) {
                const ncm_pci_device *f = ncm_pci_find(pci, d->pci[i]);
                if (!f)
                        continue;
                if (f->numa >= 0 && f->numa < NCM_BITMASK_MAX_BITS)
                        d->numa |= (ncm_bitmask)1 << f->numa;
                /* an empty mask is the kernel saying nothing: unknown, as hwloc reads it */
                if (f->local_cpus && !ncm_cpuset_is_empty(f->local_cpus)) {
                        ncm_cpuset_or(local, local, f->local_cpus);
                        any_local = true;
                }
        }
        ncm_cpuset_and(local, local, ncm_topo_all_cpus_ref(l->t));
        if (any_local && !ncm_cpuset_is_empty(local))
                d->local_cpus = NCM_TAKE_PTR(local);
        return 0;
}

static int not_found(ncm_device_location *d, const char *why, ncm_error *err)
{
        d->located = false;
        if (!(d->how = strdup(why)))
                return oom(err);
        return 0;
}

/* The functions of one CDI device node; 0 when it has none (WHY says so), 1 when found. */
static int node_functions(ncm_locator *l, const ncm_cdi_node *nd, ncm_device_location *d, char *why,
                          size_t why_size, ncm_error *err)
{
        ncm_error e = NCM_ERROR_INIT;
        char **v = NULL;
        size_t n = 0;
        int fd = root_fd(l, err), r;

        if (fd < 0)
                return fd;
        if (nd->major >= 0 && nd->minor >= 0 && nd->type != 'p' && nd->type != 'u')
                r = ncm_pci_resolve_devnum(fd, nd->type == 'b', (unsigned)nd->major,
                                           (unsigned)nd->minor, &v, &n, &e);
        else
                r = ncm_pci_resolve_node(fd, nd->host_path ? nd->host_path : nd->path, &v, &n, &e);
        if (r == -ENOMEM)
                return oom(err);
        if (r < 0) {
                snprintf(why, why_size, "%s", e.msg);
                return 0;
        }
        r = add_pci(d, v, n);
        ncm_pci_strv_free(v, n);
        return r < 0 ? oom(err) : 1;
}

static int locate_cdi(ncm_locator *l, const char *name, ncm_device_location *ret, ncm_error *err);

int ncm_locator_cdi(ncm_locator *l, const char *name, ncm_device_location *ret, ncm_error *err)
{
        int r;

        for (size_t i = 0; i < l->n_memo; i++)
                if (strcmp(l->memo[i].device, name) == 0)
                        return location_copy(&l->memo[i], ret) < 0 ? oom(err) : 0;
        r = locate_cdi(l, name, ret, err);
        if (r < 0)
                return r;
        /* remembered when there is room: a copy that fails only costs the next lookup */
        if (ncm__array_grow(l->memo, l->cap_memo, l->n_memo) == 0 &&
            location_copy(ret, &l->memo[l->n_memo]) == 0)
                l->n_memo++;
        return 0;
}

static int locate_cdi(ncm_locator *l, const char *name, ncm_device_location *ret, ncm_error *err)
{
        ncm_device_location d = {0};
        const ncm_cdi_registry *reg = NULL;
        const ncm_cdi_device *dev;
        const ncm_cdi_spec *spec = NULL;
        const char *file = NULL, *eq;
        const char *const *map;
        char why[NCM_ERROR_MSG_MAX] = "", how[NCM_ERROR_MSG_MAX + 64] = "";
        char addr[NCM_PCI_ADDRESS_MAX];
        size_t nmap = 0;
        int r;

        if (!(d.device = strdup(name)))
                return oom(err);
        map = ncm_node_config_device_pci(l->cfg, name, &nmap);
        if (map) {
                r = add_pci(&d, (char *const *)map, nmap);
                r = r < 0 ? oom(err) : finish(l, &d, "devicePCI", err);
                goto out;
        }
        r = ncm_locator_registry(l, &reg, err);
        if (r < 0)
                goto out;
        dev = ncm_cdi_registry_find(reg, name, &spec, &file);
        for (size_t pass = 0; dev && pass < 2 && !d.n_pci; pass++) {
                /* the device's own nodes first; the spec's, which every device of it gets,
                 * only when its own say nothing */
                const ncm_cdi_node *nodes = pass ? spec->nodes : dev->nodes;
                size_t nn = pass ? spec->n_nodes : dev->n_nodes;
                for (size_t i = 0; i < nn; i++) {
                        r = node_functions(l, &nodes[i], &d, why, sizeof(why), err);
                        if (r < 0)
                                goto out;
                        if (r > 0 && !how[0])
                                snprintf(how, sizeof(how), "CDI %s: %s", file, nodes[i].path);
                }
        }
        if (d.n_pci) {
                r = finish(l, &d, how, err);
                goto out;
        }
        eq = strchr(name, '=');
        if (eq && ncm_pci_parse_address(eq + 1, addr) == 0) {
                char *a = addr;
                r = add_pci(&d, &a, 1);
                r = r < 0 ? oom(err) : finish(l, &d, "CDI name", err);
                goto out;
        }
        if (!dev)
                r = not_found(&d, "no CDI spec defines it", err);
        else if (why[0])
                snprintf(how, sizeof(how), "CDI %s: %s", file, why), r = not_found(&d, how, err);
        else
                snprintf(how, sizeof(how), "CDI %s: no device node", file),
                                r = not_found(&d, how, err);
out:
        if (r < 0) {
                ncm_device_location_done(&d);
                return r;
        }
        *ret = d;
        return 0;
}

int ncm_locator_plugin(ncm_locator *l, const char *resource, const char *const *ids, size_t n,
                       const ncm_devmgr_alloc_resp *resp, ncm_device_location **ret, size_t *ret_n,
                       ncm_error *err)
{
        ncm_device_location *v = calloc(n + 1, sizeof(*v));
        ncm_device_location together = {0};
        ncm_buf name = NCM_BUF_INIT;
        char why[NCM_ERROR_MSG_MAX] = "", how[NCM_ERROR_MSG_MAX + 64] = "";
        size_t nv = 0, left = 0;
        int r = 0;

        if (!v)
                return oom(err);
        for (size_t i = 0; i < n && r >= 0; i++) {
                ncm_device_location *d = &v[nv++];
                const char *const *map;
                char addr[NCM_PCI_ADDRESS_MAX], *a = addr;
                size_t nmap = 0;

                if (asprintf(&d->device, "%s=%s", resource, ids[i]) < 0) {
                        d->device = NULL;
                        r = oom(err);
                        break;
                }
                map = ncm_node_config_device_pci(l->cfg, d->device, &nmap);
                if (map) {
                        r = add_pci(d, (char *const *)map, nmap) < 0
                                            ? oom(err)
                                            : finish(l, d, "devicePCI", err);
                } else if (ncm_pci_parse_address(ids[i], addr) == 0) {
                        r = add_pci(d, &a, 1) < 0 ? oom(err) : finish(l, d, "device ID", err);
                } else {
                        left++;
                }
        }
        /* the rest together, through what the plugin's answer gives the container */
        if (r >= 0 && left && resp) {
                for (size_t k = 0; k < resp->n_devices && r >= 0; k++) {
                        ncm_cdi_node nd = {.path = resp->devices[k].host_path,
                                           .major = -1,
                                           .minor = -1};
                        r = node_functions(l, &nd, &together, why, sizeof(why), err);
                        if (r > 0 && !how[0])
                                snprintf(how, sizeof(how), "device node %s",
                                         resp->devices[k].host_path);
                }
                for (size_t k = 0; k < resp->n_cdi_devices && r >= 0; k++) {
                        ncm_device_location c = {0};
                        r = ncm_locator_cdi(l, resp->cdi_devices[k], &c, err);
                        if (r >= 0 && c.located && add_pci(&together, c.pci, c.n_pci) < 0)
                                r = oom(err);
                        if (r >= 0 && c.located && !how[0])
                                snprintf(how, sizeof(how), "its %s", c.how);
                        else if (r >= 0 && !c.located && !why[0])
                                snprintf(why, sizeof(why), "%s: %s", c.device, c.how);
                        ncm_device_location_done(&c);
                }
        }
        if (r >= 0 && left && together.n_pci) {
                /* one location for the devices found together, in place of the first */
                size_t first = nv;
                ncm_buf_printf(&name, "%s=", resource);
                for (size_t i = 0, k = 0; i < nv; i++) {
                        if (v[i].located)
                                continue;
                        ncm_buf_printf(&name, "%s%s", k++ ? "," : "", ids[i]);
                        if (first == nv)
                                first = i;
                }
                if (ncm_buf_failed(&name)) {
                        r = oom(err);
                } else {
                        free(v[first].device);
                        v[first].device = ncm_buf_steal(&name);
                        v[first].pci = together.pci;
                        v[first].n_pci = together.n_pci;
                        together.pci = NULL;
                        together.n_pci = 0;
                        r = finish(l, &v[first], how, err);
                        for (size_t i = nv; r >= 0 && i-- > first + 1;)
                                if (!v[i].located) {
                                        ncm_device_location_done(&v[i]);
                                        memmove(&v[i], &v[i + 1], (nv - i - 1) * sizeof(*v));
                                        nv--;
                                }
                }
        } else if (r >= 0 && left) {
                for (size_t i = 0; i < nv && r >= 0; i++)
                        if (!v[i].located && !v[i].how) {
                                if (why[0])
                                        snprintf(how, sizeof(how), "%s", why);
                                else
                                        snprintf(how, sizeof(how),
                                                 "no PCI address in its id, devicePCI or its "
                                                 "Allocate answer");
                                r = not_found(&v[i], how, err);
                        }
        }
        ncm_buf_done(&name);
        ncm_device_location_done(&together);
        if (r < 0) {
                ncm_device_locations_free(v, nv);
                return r;
        }
        *ret = v;
        *ret_n = nv;
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * Output
 */

static void put_numa(ncm_buf *b, ncm_bitmask m)
{
        ncm_bitmask_format_ids(m, b);
}

void ncm_device_locations_text(const ncm_device_location *v, size_t n, ncm_buf *b)
{
        for (size_t i = 0; i < n; i++) {
                const ncm_device_location *d = &v[i];
                ncm_buf_printf(b, "  %s: ", d->device);
                if (!d->located) {
                        ncm_buf_printf(b, "not located (%s)\n", d->how ? d->how : "");
                        continue;
                }
                ncm_buf_puts(b, "PCI ");
                for (size_t k = 0; k < d->n_pci; k++)
                        ncm_buf_printf(b, "%s%s", k ? "," : "", d->pci[k]);
                ncm_buf_puts(b, " (NUMA ");
                if (d->numa)
                        put_numa(b, d->numa);
                else
                        ncm_buf_puts(b, "none");
                ncm_buf_puts(b, ", local CPUs ");
                if (d->local_cpus)
                        ncm_cpuset_format_list_buf(d->local_cpus, b);
                else
                        ncm_buf_puts(b, "unknown");
                ncm_buf_printf(b, ") by %s\n", d->how);
        }
}

void ncm_device_locations_json(const ncm_device_location *v, size_t n, ncm_buf *b)
{
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                const ncm_device_location *d = &v[i];
                ncm_buf_puts(b, i ? ", {\"device\": " : "{\"device\": ");
                ncm_buf_json_string(b, d->device, strlen(d->device));
                ncm_buf_printf(b, ", \"located\": %s, \"how\": ", d->located ? "true" : "false");
                ncm_buf_json_string(b, d->how ? d->how : "", d->how ? strlen(d->how) : 0);
                ncm_buf_puts(b, ", \"pci\": [");
                for (size_t k = 0; k < d->n_pci; k++) {
                        if (k)
                                ncm_buf_puts(b, ", ");
                        ncm_buf_json_string(b, d->pci[k], strlen(d->pci[k]));
                }
                ncm_buf_puts(b, "], \"numa\": ");
                if (d->numa) {
                        bool first = true;
                        ncm_buf_putc(b, '[');
                        for (int k = 0; k < NCM_BITMASK_MAX_BITS; k++)
                                if (d->numa & ((ncm_bitmask)1 << k)) {
                                        ncm_buf_printf(b, "%s%d", first ? "" : ", ", k);
                                        first = false;
                                }
                        ncm_buf_putc(b, ']');
                } else {
                        ncm_buf_puts(b, "null");
                }
                ncm_buf_puts(b, ", \"local_cpus\": ");
                if (d->local_cpus) {
                        ncm_buf_putc(b, '"');
                        ncm_cpuset_format_list_buf(d->local_cpus, b);
                        ncm_buf_putc(b, '"');
                } else {
                        ncm_buf_puts(b, "null");
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, ']');
}

/* ------------------------------------------------------------------------------------------
 * The node's
 */

const ncm_pci *ncm_node_pci(const ncm_node *n)
{
        if (ncm_topo_pci(n->topo))
                return ncm_topo_pci(n->topo);
        return n->locator ? n->locator->pci : NULL;
}

int ncm__node_locator(ncm_node *n, ncm_locator **ret, ncm_error *err)
{
        if (!n->locator) {
                int r = ncm_locator_new(n->topo, n->cfg, n->machine_root, &n->locator, err);
                if (r < 0)
                        return r;
        }
        *ret = n->locator;
        return 0;
}

/* Append SRC[0..N) (taken) to *V / *NV. */
static int append(ncm_device_location **v, size_t *nv, ncm_device_location *src, size_t n)
{
        ncm_device_location *w = realloc(*v, (*nv + n + 1) * sizeof(*w));
        if (!w)
                return -ENOMEM;
        memcpy(w + *nv, src, n * sizeof(*src));
        *v = w;
        *nv += n;
        return 0;
}

/* CDI device NAME, located, appended to *V / *NV. */
static int append_cdi(ncm_locator *l, const char *name, ncm_device_location **v, size_t *nv,
                      ncm_error *err)
{
        ncm_device_location d = {0};
        int r = ncm_locator_cdi(l, name, &d, err);

        if (r >= 0 && append(v, nv, &d, 1) < 0) {
                ncm_device_location_done(&d);
                r = oom(err);
        }
        return r;
}

/* The plugin devices (POD, CONTAINER) holds, located: into *V / *NV. */
static int locate_held(ncm_node *n, ncm_locator *l, const char *pod, const char *container,
                       ncm_device_location **v, size_t *nv, ncm_error *err)
{
        ncm_devmgr_assignment *as = NULL;
        size_t na = 0;
        int r;

        if (ncm_devmgr_container_devices(n->dev, pod, container, &as, &na) < 0)
                return oom(err);
        r = 0;
        for (size_t i = 0; i < na && r >= 0; i++) {
                ncm_devmgr_alloc_resp *resp = NULL;
                ncm_device_location *got = NULL;
                size_t ng = 0;
                if (ncm_devmgr_allocation_resp(n->dev, pod, container, as[i].resource, &resp) < 0) {
                        r = oom(err);
                        break;
                }
                r = ncm_locator_plugin(l, as[i].resource, (const char *const *)as[i].ids,
                                       as[i].n_ids, resp, &got, &ng, err);
                ncm_devmgr_alloc_resp_free(resp);
                if (r >= 0 && append(v, nv, got, ng) < 0) {
                        ncm_device_locations_free(got, ng);
                        r = oom(err);
                        break;
                }
                free(got);
        }
        ncm_devmgr_assignments_free(as, na);
        return r;
}

int ncm__node_container_locations(ncm_node *n, const ncm_pod *pod, const ncm_container *c,
                                  bool plugins, bool cdi, ncm_device_location **ret, size_t *ret_n,
                                  ncm_error *err)
{
        ncm_device_location *v = NULL;
        size_t nv = 0;
        ncm_locator *l = NULL;
        int r = ncm__node_locator(n, &l, err);

        if (r >= 0 && plugins)
                r = locate_held(n, l, pod->uid, c->name, &v, &nv, err);
        for (size_t i = 0; cdi && r >= 0 && i < c->n_cdi_devices; i++)
                r = append_cdi(l, c->cdi_devices[i], &v, &nv, err);
        if (r < 0) {
                ncm_device_locations_free(v, nv);
                return r;
        }
        *ret = v;
        *ret_n = nv;
        return 0;
}

int ncm_node_device_locations(ncm_node *n, ncm_device_location **ret, size_t *ret_n, ncm_error *err)
{
        ncm_devmgr_inventory inv = {0};
        ncm_device_location *v = NULL;
        size_t nv = 0;
        const ncm_cdi_registry *reg = NULL;
        ncm_locator *l = NULL;
        int r = ncm__node_locator(n, &l, err);

        if (r < 0)
                return r;
        ncm_locator_refresh(l);
        if (ncm_devmgr_inventory_get(n->dev, &inv) < 0)
                return oom(err);
        /* plugin devices: held ones with their container's answer, the others alone */
        for (size_t i = 0; i < inv.n && r >= 0; i++) {
                const ncm_devmgr_resource_info *ri = &inv.v[i];
                for (size_t k = 0; k < ri->n_devices && r >= 0; k++) {
                        const ncm_devmgr_device_info *di = &ri->devices[k];
                        ncm_device_location *got = NULL;
                        size_t ng = 0;
                        if (di->pod && di->container) {
                                bool first = true;
                                /* the container's devices of this resource once, at its first */
                                for (size_t j = 0; j < k && first; j++)
                                        first = !(ri->devices[j].pod && ri->devices[j].container &&
                                                  strcmp(ri->devices[j].pod, di->pod) == 0 &&
                                                  strcmp(ri->devices[j].container, di->container) ==
                                                                  0);
                                if (!first)
                                        continue;
                                r = locate_held(n, l, di->pod, di->container, &got, &ng, err);
                                /* keep only this resource's */
                                for (size_t j = 0; r >= 0 && j < ng; j++) {
                                        size_t len = strlen(ri->resource);
                                        bool mine = strncmp(got[j].device, ri->resource, len) ==
                                                                    0 &&
                                                    got[j].device[len] == '=';
                                        if (!mine)
                                                ncm_device_location_done(&got[j]);
                                        else if (append(&v, &nv, &got[j], 1) < 0)
                                                r = oom(err);
                                }
                        } else {
                                const char *id = di->id;
                                r = ncm_locator_plugin(l, ri->resource, &id, 1, NULL, &got, &ng,
                                                       err);
                                if (r >= 0 && append(&v, &nv, got, ng) < 0) {
                                        ncm_device_locations_free(got, ng);
                                        got = NULL;
                                        r = oom(err);
                                }
                        }
                        free(got);
                }
        }
        ncm_devmgr_inventory_done(&inv);
        /* the CDI devices of the spec directories, then those pods name that none defines */
        if (r >= 0)
                r = ncm_locator_registry(l, &reg, err);
        for (size_t i = 0; r >= 0 && i < ncm_cdi_registry_num_devices(reg); i++)
                r = append_cdi(l, ncm_cdi_registry_device_at(reg, i, NULL, NULL)->name, &v, &nv,
                               err);
        for (size_t p = 0; r >= 0 && p < n->n_pods; p++) {
                const ncm_pod *pod = n->pods[p]->spec;
                for (size_t i = 0; pod && r >= 0 && i < pod->n_init_containers + pod->n_containers;
                     i++) {
                        const ncm_container *c =
                                        i < pod->n_init_containers
                                                        ? &pod->init_containers[i]
                                                        : &pod->containers[i -
                                                                           pod->n_init_containers];
                        for (size_t k = 0; r >= 0 && k < c->n_cdi_devices; k++) {
                                bool listed = false;
                                for (size_t j = 0; j < nv && !listed; j++)
                                        listed = strcmp(v[j].device, c->cdi_devices[k]) == 0;
                                if (!listed)
                                        r = append_cdi(l, c->cdi_devices[k], &v, &nv, err);
                        }
                }
        }
        if (r < 0) {
                ncm_device_locations_free(v, nv);
                return r;
        }
        *ret = v;
        *ret_n = nv;
        return 0;
}
