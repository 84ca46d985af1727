/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The scene of a node map: a plain snapshot of a node taken through its public accessors (the
 * CPU state, the pods, the device manager's inventory), the counts and room of each NUMA node,
 * and the explanations -- recorded in a history as decisions were made, or replayed on a copy
 * of the node. The page (map-html.c) only draws what is here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/map.h>
#include "base/array.h"

/*
 * Explanations are cut to keep a page of a big machine small (one pod's hint list alone can
 * be 256 hints): each line to LINE_MAX bytes, each text to TEXT_MAX. `nodecm node explain` and
 * `--explain` give the whole text.
 */
#define LINE_MAX_BYTES 240
#define TEXT_MAX_BYTES 2400

/* ---- cutting explanations ------------------------------------------------------------- */

/* The length of S[0..N) cut back to a UTF-8 character boundary. */
static size_t utf8_cut(const char *s, size_t n)
{
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
                n--;
        return n;
}

/* TEXT with long lines and a long tail cut, each cut marked; NULL when out of memory. */
static char *cut_explain(const char *text)
{
        ncm_buf b = NCM_BUF_INIT;
        const char *p = text;

        while (*p) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t)(nl - p) : strlen(p);
                size_t keep = len > LINE_MAX_BYTES ? utf8_cut(p, LINE_MAX_BYTES) : len;
                if (b.len + keep > TEXT_MAX_BYTES) {
                        ncm_buf_puts(&b, "… (cut: --explain shows the rest)\n");
                        break;
                }
                ncm_buf_append(&b, p, keep);
                if (keep < len)
                        ncm_buf_puts(&b, " …");
                ncm_buf_putc(&b, '\n');
                p += len + (nl ? 1 : 0);
        }
        if (ncm_buf_failed(&b))
                return NULL;
        if (!b.data)
                return strdup("");
        return ncm_buf_steal(&b);
}

/* ---- the history ----------------------------------------------------------------------- */

typedef struct explained {
        char *uid;
        char *text;
} explained;

struct ncm_map_history {
        explained *ex; /* sorted by UID */
        size_t n_ex, cap_ex;
        ncm_map_step *steps;
        size_t n_steps, cap_steps;
};

ncm_map_history *ncm_map_history_new(void)
{
        return calloc(1, sizeof(ncm_map_history));
}

ncm_map_history *ncm_map_history_free(ncm_map_history *h)
{
        if (!h)
                return NULL;
        for (size_t i = 0; i < h->n_ex; i++) {
                free(h->ex[i].uid);
                free(h->ex[i].text);
        }
        free(h->ex);
        for (size_t i = 0; i < h->n_steps; i++)
                free(h->steps[i].text);
        free(h->steps);
        free(h);
        return NULL;
}

/* The index of UID in H's explanations, or where it would go (with *FOUND false). */
static size_t history_find(const ncm_map_history *h, const char *uid, bool *found)
{
        size_t lo = 0, hi = h->n_ex;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(h->ex[mid].uid, uid);
                if (c == 0) {
                        *found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = false;
        return lo;
}

static const char *history_explain(const ncm_map_history *h, const char *uid)
{
        bool found;
        size_t i;

        if (!h)
                return NULL;
        i = history_find(h, uid, &found);
        return found ? h->ex[i].text : NULL;
}

int ncm_map_history_admission(ncm_map_history *h, const ncm_pod *pod, const ncm_node_admission *a)
{
        ncm_buf b = NCM_BUF_INIT;
        char *text;
        bool found;
        size_t i;

        if (!a->admitted)
                return 0;
        ncm_node_format_admission_text(&b, -1, pod, a, true);
        if (ncm_buf_failed(&b))
                return -ENOMEM;
        text = cut_explain(b.data ? b.data : "");
        ncm_buf_done(&b);
        if (!text)
                return -ENOMEM;
        i = history_find(h, pod->uid, &found);
        if (found) {
                free(h->ex[i].text);
                h->ex[i].text = text;
                return 0;
        }
        if (ncm__array_grow(h->ex, h->cap_ex, h->n_ex) < 0) {
                free(text);
                return -ENOMEM;
        }
        memmove(&h->ex[i + 1], &h->ex[i], (h->n_ex - i) * sizeof(*h->ex));
        h->ex[i] = (explained){.uid = strdup(pod->uid), .text = text};
        h->n_ex++;
        if (!h->ex[i].uid)
                return -ENOMEM; /* the entry stays, without a UID no lookup can find */
        return 0;
}

int ncm_map_history_step(ncm_map_history *h, size_t index, const char *text)
{
        const char *nl = strchr(text, '\n');
        char *line = strndup(text, nl ? (size_t)(nl - text) : strlen(text));

        if (!line || ncm__array_grow(h->steps, h->cap_steps, h->n_steps) < 0) {
                free(line);
                return -ENOMEM;
        }
        h->steps[h->n_steps++] = (ncm_map_step){.index = index, .text = line};
        return 0;
}

/* ---- the scene ------------------------------------------------------------------------- */

ncm_map_scene *ncm_map_scene_free(ncm_map_scene *s)
{
        if (!s)
                return NULL;
        free(s->title);
        free(s->caption);
        free(s->settings);
        free(s->room_rule);
        free(s->reserved);
        free(s->shared_pool);
        free(s->cpus);
        for (size_t i = 0; i < s->n_numa; i++)
                free(s->numa[i].hugepages);
        free(s->numa);
        for (size_t i = 0; i < s->n_pods; i++) {
                ncm_map_pod *p = &s->pods[i];
                for (size_t k = 0; k < p->n_containers; k++) {
                        free(p->containers[k].name);
                        free(p->containers[k].cpus);
                        free(p->containers[k].numa);
                        free(p->containers[k].devices);
                }
                free(p->containers);
                free(p->uid);
                free(p->name);
                free(p->ns);
                free(p->qos);
                free(p->explain);
        }
        free(s->pods);
        for (size_t i = 0; i < s->n_devices; i++) {
                free(s->devices[i].resource);
                free(s->devices[i].id);
                free(s->devices[i].numa);
        }
        free(s->devices);
        for (size_t i = 0; i < s->n_pci; i++) {
                free(s->pci[i].address);
                free(s->pci[i].class_id);
                free(s->pci[i].local_cpus);
                free(s->pci[i].label);
        }
        free(s->pci);
        for (size_t i = 0; i < s->n_steps; i++)
                free(s->steps[i].text);
        free(s->steps);
        free(s);
        return NULL;
}

/* What a build carries besides the scene. */
typedef struct build {
        const ncm_node *n;
        ncm_map_scene *s;
        size_t cap_pods;
        int oom; /* an allocation failed somewhere: the build fails with -ENOMEM */
} build;

static char *dup_or_oom(build *b, const char *s)
{
        char *d = strdup(s ? s : "");
        if (!d)
                b->oom = 1;
        return d;
}

static char *cpus_string(build *b, const ncm_cpuset *set)
{
        char *s = ncm_cpuset_format_list(set);
        if (!s)
                b->oom = 1;
        return s;
}

static int cmp_pod(const void *x, const void *y)
{
        return strcmp(((const ncm_map_pod *)x)->uid, ((const ncm_map_pod *)y)->uid);
}

/* The index of pod UID in the scene (sorted), or -1. */
static int find_pod(const ncm_map_scene *s, const char *uid)
{
        ncm_map_pod key = {.uid = (char *)uid};
        const ncm_map_pod *p = bsearch(&key, s->pods, s->n_pods, sizeof(*s->pods), cmp_pod);
        return p ? (int)(p - s->pods) : -1;
}

static int find_container(const ncm_map_pod *p, const char *name)
{
        for (size_t i = 0; i < p->n_containers; i++)
                if (strcmp(p->containers[i].name, name) == 0)
                        return (int)i;
        return -1;
}

static ncm_map_pod *add_pod(build *b, const char *uid)
{
        ncm_map_scene *s = b->s;
        ncm_map_pod *p;

        if (ncm__array_grow(s->pods, b->cap_pods, s->n_pods) < 0) {
                b->oom = 1;
                return NULL;
        }
        p = &s->pods[s->n_pods++];
        p->uid = dup_or_oom(b, uid);
        return p;
}

static ncm_map_container *add_container(build *b, ncm_map_pod *p, const char *name)
{
        ncm_map_container *v = realloc(p->containers, (p->n_containers + 1) * sizeof(*v));

        if (!v) {
                b->oom = 1;
                return NULL;
        }
        p->containers = v;
        v = &v[p->n_containers++];
        *v = (ncm_map_container){.name = dup_or_oom(b, name)};
        return v;
}

/* "0-1,3" from sorted ids */
static char *ids_string(build *b, const int *ids, size_t n)
{
        ncm_buf out = NCM_BUF_INIT;

        for (size_t i = 0; i < n;) {
                size_t j = i;
                while (ids[i] >= 0 && j + 1 < n && ids[j + 1] == ids[j] + 1)
                        j++;
                ncm_buf_printf(&out, "%s%d", i ? "," : "", ids[i]);
                if (j > i)
                        ncm_buf_printf(&out, "-%d", ids[j]);
                i = j + 1;
        }
        if (ncm_buf_failed(&out)) {
                b->oom = 1;
                return NULL;
        }
        return out.data ? ncm_buf_steal(&out) : dup_or_oom(b, "");
}

/* The NUMA nodes of CPUS, as "0-1". */
static char *numa_string(build *b, const ncm_cpuset *cpus)
{
        const ncm_topo *t = ncm_node_topo(b->n);
        size_t nn = 0;
        int64_t *ids;
        int *small;
        char *r;

        ncm_topo_level_ids(t, NCM_TOPO_NUMA, &nn);
        ids = calloc(nn + 1, sizeof(*ids));
        small = calloc(nn + 1, sizeof(*small));
        if (!ids || !small) {
                free(ids);
                free(small);
                b->oom = 1;
                return NULL;
        }
        nn = ncm_topo_ids_of_cpus(t, NCM_TOPO_NUMA, cpus, ids);
        for (size_t i = 0; i < nn; i++)
                small[i] = (int)ids[i];
        r = ids_string(b, small, nn);
        free(ids);
        free(small);
        return r;
}

/* The devices a container holds, "example.com/gpu gpu0,gpu1; example.com/nic nic3". */
static char *devices_string(build *b, const char *uid, const char *name)
{
        ncm_devmgr_assignment *as = NULL;
        size_t n = 0;
        ncm_buf out = NCM_BUF_INIT;

        if (ncm_devmgr_container_devices(ncm_node_devmgr(b->n), uid, name, &as, &n) < 0) {
                b->oom = 1;
                return NULL;
        }
        for (size_t i = 0; i < n; i++) {
                ncm_buf_printf(&out, "%s%s ", i ? "; " : "", as[i].resource);
                for (size_t k = 0; k < as[i].n_ids; k++)
                        ncm_buf_printf(&out, "%s%s", k ? "," : "", as[i].ids[k]);
        }
        ncm_devmgr_assignments_free(as, n);
        if (ncm_buf_failed(&out))
                b->oom = 1;
        return out.data ? ncm_buf_steal(&out) : NULL;
}

/* One container of a pod the node knows: its CPUs when exclusive, its devices. */
static void fill_container(build *b, ncm_map_pod *p, ncm_map_container *c, ncm_cpuset *tmp)
{
        if (ncm_node_container_cpus(b->n, p->uid, c->name, tmp) > 0) {
                c->exclusive = true;
                c->cpus = cpus_string(b, tmp);
                c->numa = numa_string(b, tmp);
        }
        c->devices = devices_string(b, p->uid, c->name);
}

/* The pods the node holds, then those only its CPU state knows (restored from a checkpoint). */
static void add_pods(build *b, ncm_cpuset *tmp)
{
        const ncm_node *n = b->n;
        const ncm_cpu_state *cs = ncm_node_cpu_state(n);

        for (size_t i = 0; i < ncm_node_num_pods(n) && !b->oom; i++) {
                const ncm_pod *pod = ncm_node_pod_at(n, i);
                ncm_map_pod *p = add_pod(b, pod->uid);
                if (!p)
                        return;
                p->name = dup_or_oom(b, pod->name);
                p->ns = dup_or_oom(b, pod->ns);
                p->qos = dup_or_oom(b, ncm_qos_class_name(pod->qos));
                for (size_t k = 0; k < pod->n_init_containers + pod->n_containers; k++) {
                        const ncm_container *c =
                                        k < pod->n_init_containers
                                                        ? &pod->init_containers[k]
                                                        : &pod->containers[k -
                                                                           pod->n_init_containers];
                        ncm_map_container *mc = add_container(b, p, c->name);
                        if (!mc)
                                return;
                        mc->init = c->init;
                        mc->sidecar = c->sidecar;
                        mc->removed = ncm_node_container_removed(n, pod->uid, c->name);
                        fill_container(b, p, mc, tmp);
                }
        }
        /* the node's pods come sorted by UID; the state's others are merged in after */
        for (size_t i = 0; i < ncm_cpu_state_num_pods(cs) && !b->oom; i++) {
                const char *uid = ncm_cpu_state_pod_uid(cs, i);
                ncm_map_pod *p;
                if (ncm_node_pod(n, uid))
                        continue;
                p = add_pod(b, uid);
                if (!p)
                        return;
                p->name = dup_or_oom(b, "");
                for (size_t k = 0; k < ncm_cpu_state_pod_num_containers(cs, i); k++) {
                        ncm_map_container *mc =
                                        add_container(b, p, ncm_cpu_state_container_name(cs, i, k));
                        if (!mc)
                                return;
                        fill_container(b, p, mc, tmp);
                }
        }
        if (b->s->n_pods)
                qsort(b->s->pods, b->s->n_pods, sizeof(*b->s->pods), cmp_pod);
}

static int cmp_cpu(const void *x, const void *y)
{
        int a = ((const ncm_map_cpu *)x)->cpu, c = ((const ncm_map_cpu *)y)->cpu;
        return a < c ? -1 : a > c;
}

static ncm_map_cpu *find_cpu(ncm_map_scene *s, int cpu)
{
        ncm_map_cpu key = {.cpu = cpu};
        return bsearch(&key, s->cpus, s->n_cpus, sizeof(*s->cpus), cmp_cpu);
}

/*
 * Every CPU and its use. A CPU two containers of a pod list (an init container's, reused by an
 * app container) is drawn as the app container's: the one that runs on it now.
 */
static void add_cpus(build *b, const ncm_cpuset *shared)
{
        ncm_map_scene *s = b->s;
        const ncm_topo *t = ncm_node_topo(b->n);
        const ncm_cpu_policy *p = ncm_node_cpu_policy(b->n);
        const ncm_cpuset *reserved = ncm_cpu_policy_reserved(p);
        const ncm_cpu_state *cs = ncm_node_cpu_state(b->n);
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        const char *pu, *cn;
        const ncm_cpuset *set;
        size_t n = 0;
        const ncm_cpu_info *info = ncm_topo_cpus(t, &n);

        s->cpus = calloc(n + 1, sizeof(*s->cpus));
        if (!s->cpus) {
                b->oom = 1;
                return;
        }
        s->n_cpus = n;
        for (size_t i = 0; i < n; i++) {
                ncm_map_cpu *c = &s->cpus[i];
                *c = (ncm_map_cpu){.cpu = info[i].cpu,
                                   .core = info[i].core,
                                   .socket = info[i].socket,
                                   .numa = info[i].numa,
                                   .uncore = info[i].uncore,
                                   .pod = -1,
                                   .container = -1};
                /* the machine's isolation, whatever isolatedCPUs does with it */
                if (ncm_cpuset_isset(ncm_topo_isolated_cpus(t), c->cpu))
                        c->flags |= NCM_MAP_CPU_ISOLATED;
                if (ncm_cpuset_isset(ncm_topo_nohz_full_cpus(t), c->cpu))
                        c->flags |= NCM_MAP_CPU_NOHZ_FULL;
                if (s->pinning && ncm_cpuset_isset(reserved, c->cpu))
                        c->use = NCM_MAP_RESERVED;
                else if (ncm_cpuset_isset(shared, c->cpu))
                        c->use = NCM_MAP_SHARED;
                else
                        c->use = NCM_MAP_FREE;
        }
        while (ncm_cpu_state_next(cs, &it, &pu, &cn, &set)) {
                int pi = find_pod(s, pu), ci;
                if (pi < 0)
                        continue;
                ci = find_container(&s->pods[pi], cn);
                for (int cpu = ncm_cpuset_first(set); cpu >= 0; cpu = ncm_cpuset_next(set, cpu)) {
                        ncm_map_cpu *c = find_cpu(s, cpu);
                        bool replace;
                        if (!c)
                                continue;
                        if (c->use != NCM_MAP_EXCLUSIVE) {
                                c->use = NCM_MAP_EXCLUSIVE;
                                c->pod = pi;
                                c->container = ci;
                                continue;
                        }
                        c->also++;
                        replace = c->pod == pi && c->container >= 0 && ci >= 0 &&
                                  s->pods[pi].containers[c->container].init &&
                                  !s->pods[pi].containers[ci].init;
                        if (replace)
                                c->container = ci;
                }
        }
        for (size_t i = 0; i < n; i++)
                if (s->cpus[i].use == NCM_MAP_EXCLUSIVE)
                        s->pods[s->cpus[i].pod].exclusive_cpus++;
}

/* Each NUMA node's counts and room. */
static void add_numa(build *b)
{
        ncm_map_scene *s = b->s;
        const ncm_topo *t = ncm_node_topo(b->n);
        const ncm_cpu_policy *p = ncm_node_cpu_policy(b->n);
        const ncm_cpu_options *o = ncm_cpu_policy_options(p);
        ncm_autoptr(ncm_cpuset) room = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) avail = ncm_cpuset_new();
        size_t nn = 0;
        const int *ids = ncm_topo_numa_ids(t, &nn);

        s->numa = calloc(nn + 1, sizeof(*s->numa));
        if (!s->numa || !room || !avail) {
                b->oom = 1;
                return;
        }
        s->n_numa = nn;
        if (s->pinning)
                ncm_cpu_policy_available(p, ncm_node_cpu_state(b->n), avail);
        if (s->pinning && o && o->full_pcpus_only) {
                /* whole cores only: a core counts when every thread of it is available */
                for (size_t i = 0; i < s->n_cpus; i++) {
                        const ncm_map_cpu *c = &s->cpus[i];
                        size_t k = 0;
                        const int *th;
                        bool whole = true;
                        if (c->cpu != c->core)
                                continue;
                        th = ncm_topo_core_cpus(t, c->core, &k);
                        for (size_t j = 0; j < k; j++)
                                whole = whole && ncm_cpuset_isset(avail, th[j]);
                        for (size_t j = 0; whole && j < k; j++)
                                ncm_cpuset_set(room, th[j]);
                }
        } else {
                ncm_cpuset_copy(room, avail);
        }
        for (size_t i = 0; i < nn; i++)
                s->numa[i] = (ncm_map_numa){.id = ids[i], .socket = -1};
        for (size_t i = 0, k = 0; i < s->n_cpus; i++) {
                const ncm_map_cpu *c = &s->cpus[i];
                ncm_map_numa *m = NULL;
                /* CPUs come by id, NUMA nodes by id: look the node up, from the last one */
                if (k < nn && s->numa[k].id == c->numa)
                        m = &s->numa[k];
                for (size_t j = 0; !m && j < nn; j++)
                        if (s->numa[j].id == c->numa) {
                                m = &s->numa[j];
                                k = j;
                        }
                if (!m)
                        continue;
                if (m->socket < 0)
                        m->socket = c->socket;
                m->cpus++;
                m->reserved += c->use == NCM_MAP_RESERVED;
                m->shared += c->use == NCM_MAP_SHARED;
                m->exclusive += c->use == NCM_MAP_EXCLUSIVE;
                m->room += ncm_cpuset_isset(room, c->cpu);
        }
}

static int cmp_device(const void *x, const void *y)
{
        const ncm_map_device *a = x, *b = y;
        int c = strcmp(a->resource, b->resource);
        return c ? c : strcmp(a->id, b->id);
}

/* The device manager's devices and their holders. */
static void add_devices(build *b)
{
        ncm_map_scene *s = b->s;
        ncm_devmgr_inventory inv = {0};
        size_t total = 0, k = 0;

        if (ncm_devmgr_inventory_get(ncm_node_devmgr(b->n), &inv) < 0) {
                b->oom = 1;
                return;
        }
        for (size_t i = 0; i < inv.n; i++)
                total += inv.v[i].n_devices;
        s->devices = calloc(total + 1, sizeof(*s->devices));
        if (!s->devices) {
                b->oom = 1;
                ncm_devmgr_inventory_done(&inv);
                return;
        }
        for (size_t i = 0; i < inv.n; i++) {
                for (size_t j = 0; j < inv.v[i].n_devices; j++) {
                        const ncm_devmgr_device_info *di = &inv.v[i].devices[j];
                        ncm_map_device *d = &s->devices[k++];
                        d->resource = dup_or_oom(b, inv.v[i].resource);
                        d->id = dup_or_oom(b, di->id);
                        d->healthy = di->healthy;
                        d->pod = d->container = -1;
                        if (di->n_numa) {
                                d->numa = calloc(di->n_numa, sizeof(*d->numa));
                                if (!d->numa)
                                        b->oom = 1;
                                else
                                        memcpy(d->numa, di->numa, di->n_numa * sizeof(*d->numa));
                                d->n_numa = d->numa ? di->n_numa : 0;
                        }
                        if (di->pod) {
                                d->pod = find_pod(s, di->pod);
                                if (d->pod >= 0 && di->container)
                                        d->container = find_container(&s->pods[d->pod],
                                                                      di->container);
                        }
                }
        }
        s->n_devices = k;
        ncm_devmgr_inventory_done(&inv);
        qsort(s->devices, s->n_devices, sizeof(*s->devices), cmp_device);
}

/*
 * The PCI devices the node knows (ncm_node_pci; sorted by address), bridges left out: they are
 * the way to a device, not something a container gets. Named by class and bus address.
 */
static void add_pci(build *b)
{
        ncm_map_scene *s = b->s;
        const ncm_pci *pci = ncm_node_pci(b->n);
        const ncm_pci_device *v;
        size_t n = 0;

        if (!pci)
                return;
        v = ncm_pci_devices(pci, &n);
        s->pci = calloc(n + 1, sizeof(*s->pci));
        if (!s->pci) {
                b->oom = 1;
                return;
        }
        for (size_t i = 0; i < n && !b->oom; i++) {
                const ncm_pci_device *d = &v[i];
                ncm_map_pci *m;
                const char *bus = strchr(d->address, ':');
                char cls[24];

                if (d->class_code >= 0 && (d->class_code >> 16) == 0x06)
                        continue;
                m = &s->pci[s->n_pci++];
                m->address = dup_or_oom(b, d->address);
                m->numa = d->numa;
                if (d->class_code >= 0) {
                        snprintf(cls, sizeof(cls), "0x%06llx", (unsigned long long)d->class_code);
                        m->class_id = dup_or_oom(b, cls);
                }
                if (d->local_cpus)
                        m->local_cpus = cpus_string(b, d->local_cpus);
                if (asprintf(&m->label, "%s %s", ncm_pci_class_name(d->class_code),
                             bus ? bus + 1 : d->address) < 0) {
                        m->label = NULL;
                        b->oom = 1;
                }
        }
}

/* The policies in force, and how room is counted under them. */
static void add_settings(build *b)
{
        const ncm_node *n = b->n;
        const ncm_cpu_policy *p = ncm_node_cpu_policy(n);
        const ncm_cpu_options *o = ncm_cpu_policy_options(p);
        const ncm_node_config *cfg = ncm_node_get_config(n);
        ncm_kubelet_version v = ncm_node_kubelet_version(n);
        static const struct {
                size_t off;
                const char *name;
        } opts[] = {
                        {offsetof(ncm_cpu_options, full_pcpus_only), "full-pcpus-only"},
                        {offsetof(ncm_cpu_options, distribute_cpus_across_numa),
                         "distribute-cpus-across-numa"},
                        {offsetof(ncm_cpu_options, align_by_socket), "align-by-socket"},
                        {offsetof(ncm_cpu_options, distribute_cpus_across_cores),
                         "distribute-cpus-across-cores"},
                        {offsetof(ncm_cpu_options, strict_cpu_reservation),
                         "strict-cpu-reservation"},
                        {offsetof(ncm_cpu_options, prefer_align_by_uncore_cache),
                         "prefer-align-cpus-by-uncorecache"},
        };
        ncm_buf out = NCM_BUF_INIT;
        bool any = false;

        ncm_buf_printf(&out, "cpuManagerPolicy %s", ncm_cpu_policy_name(p));
        for (size_t i = 0; o && i < NCM_ELEMENTSOF(opts); i++) {
                if (!*(const bool *)((const char *)o + opts[i].off))
                        continue;
                ncm_buf_printf(&out, "%s%s", any ? ", " : " (", opts[i].name);
                any = true;
        }
        if (any)
                ncm_buf_putc(&out, ')');
        ncm_buf_printf(&out, " · topologyManagerPolicy %s, scope %s",
                       ncm_node_config_tm_policy(cfg), ncm_node_config_tm_scope(cfg));
        if (v.major)
                ncm_buf_printf(&out, " · kubelet %d.%d", v.major, v.minor);
        if (ncm_buf_failed(&out))
                b->oom = 1;
        b->s->settings = out.data ? ncm_buf_steal(&out) : NULL;
        if (!b->s->pinning)
                b->s->room_rule = dup_or_oom(b, "cpuManagerPolicy none: no container gets CPUs "
                                                "of its own");
        else if (o && o->full_pcpus_only)
                b->s->room_rule = dup_or_oom(b, "room: the CPUs of wholly free cores in the "
                                                "shared pool, reserved ones excepted "
                                                "(full-pcpus-only gives whole cores)");
        else
                b->s->room_rule = dup_or_oom(b, "room: the CPUs of the shared pool a container "
                                                "may get for itself, reserved ones excepted");
}

/* "example.com/gpu gpu0,gpu1; ..." of assignments AS, as devices_string() writes them. */
static bool same_devices(const char *held, const ncm_devmgr_assignment *as, size_t n)
{
        ncm_buf out = NCM_BUF_INIT;
        bool same;

        for (size_t i = 0; i < n; i++) {
                ncm_buf_printf(&out, "%s%s ", i ? "; " : "", as[i].resource);
                for (size_t k = 0; k < as[i].n_ids; k++)
                        ncm_buf_printf(&out, "%s%s", k ? "," : "", as[i].ids[k]);
        }
        same = !ncm_buf_failed(&out) && strcmp(held ? held : "", out.data ? out.data : "") == 0;
        ncm_buf_done(&out);
        return same;
}

/*
 * Whether admission A gives every container of P the CPUs and devices it holds, so that the
 * node the admission left is the node as it is (a removed container, admitted again, would
 * not be: it holds nothing now).
 */
static bool same_as_held(const ncm_map_pod *p, const ncm_node_admission *a)
{
        if (!a->admitted)
                return false;
        for (size_t i = 0; i < a->n_containers; i++) {
                const ncm_node_container_result *r = &a->containers[i];
                int k = find_container(p, r->name);
                const ncm_map_container *c = k >= 0 ? &p->containers[k] : NULL;
                ncm_autofree char *cpus = NULL;
                if (!c || c->removed || c->exclusive != r->exclusive ||
                    !same_devices(c->devices, r->devices, r->n_devices))
                        return false;
                if (!r->exclusive)
                        continue;
                cpus = ncm_cpuset_format_list(r->cpus);
                if (!cpus || strcmp(cpus, c->cpus) != 0)
                        return false;
        }
        return true;
}

/*
 * Decide pod POD again on *COPY (a copy of the node, made here when NULL) without it: the
 * explanation that gives, and whether it gave the CPUs and devices the pod holds. Copying a
 * node rebuilds its managers (milliseconds on a big machine), so one copy serves every pod
 * whose admission comes out as it is -- the copy is then the node again -- and is dropped
 * after one that does not. Failures leave the pod unexplained.
 */
static void replay(build *b, ncm_node **copy, const ncm_pod *pod, ncm_map_pod *p)
{
        ncm_autoptr(ncm_node_admission) a = NULL;
        ncm_buf out = NCM_BUF_INIT;
        bool same;

        if (!*copy && ncm_node_copy(b->n, copy, NULL) < 0)
                return;
        if (ncm_node_remove_pod(*copy, pod->uid, NULL, NULL) < 0 ||
            ncm_node_admit(*copy, pod, NCM_NODE_EXPLAIN, &a, NULL) < 0) {
                *copy = ncm_node_free(*copy);
                return;
        }
        same = same_as_held(p, a);
        if (!same)
                *copy = ncm_node_free(*copy);
        if (!a->admitted)
                ncm_buf_puts(&out, "Decided again now, with its CPUs and devices free, it "
                                   "would be refused: the node has changed since.\n");
        else if (same)
                ncm_buf_puts(&out, "Decided again now, with its CPUs and devices free: the "
                                   "same CPUs and devices.\n");
        else
                ncm_buf_puts(&out, "Decided again now, with its CPUs and devices free, it "
                                   "would get others: it holds what was decided when the "
                                   "node was different.\n");
        ncm_node_format_admission_text(&out, -1, pod, a, true);
        if (ncm_buf_failed(&out)) {
                b->oom = 1;
                return;
        }
        p->explain = cut_explain(out.data);
        ncm_buf_done(&out);
        if (!p->explain)
                b->oom = 1;
        p->explain_from = "replay";
}

static void add_explanations(build *b, const ncm_map_scene_options *o)
{
        ncm_map_scene *s = b->s;
        ncm_autoptr(ncm_node) copy = NULL;

        for (size_t i = 0; i < s->n_pods && !b->oom; i++) {
                ncm_map_pod *p = &s->pods[i];
                const char *text = history_explain(o->history, p->uid);
                const ncm_pod *pod;
                if (text) {
                        p->explain = dup_or_oom(b, text);
                        p->explain_from = "admission";
                        continue;
                }
                pod = ncm_node_pod(b->n, p->uid);
                if ((o->flags & NCM_MAP_REPLAY) && pod)
                        replay(b, &copy, pod, p);
        }
        if (o->history && o->history->n_steps && !b->oom) {
                const ncm_map_history *h = o->history;
                s->steps = calloc(h->n_steps, sizeof(*s->steps));
                if (!s->steps) {
                        b->oom = 1;
                        return;
                }
                s->n_steps = h->n_steps;
                for (size_t i = 0; i < h->n_steps; i++)
                        s->steps[i] = (ncm_map_step){.index = h->steps[i].index,
                                                     .text = dup_or_oom(b, h->steps[i].text)};
        }
}

int ncm_map_scene_from_node(const ncm_node *n, const ncm_map_scene_options *o, ncm_map_scene **ret,
                            ncm_error *err)
{
        static const ncm_map_scene_options defaults = {.step = -1};
        ncm_autoptr(ncm_map_scene) s = calloc(1, sizeof(ncm_map_scene));
        ncm_autoptr(ncm_cpuset) shared = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) tmp = ncm_cpuset_new();
        build b = {.n = n};

        if (!o)
                o = &defaults;
        if (!s || !shared || !tmp)
                return ncm_error_set(err, ENOMEM, "out of memory");
        b.s = s;
        s->step = o->step;
        s->pinning = strcmp(ncm_cpu_policy_name(ncm_node_cpu_policy(n)), "none") != 0;
        s->title = dup_or_oom(&b, o->title ? o->title : "node");
        if (o->caption)
                s->caption = dup_or_oom(&b, o->caption);
        ncm_node_shared_pool(n, shared);
        s->reserved_in_pool = s->pinning &&
                              ncm_cpuset_intersects(ncm_cpu_policy_reserved(ncm_node_cpu_policy(n)),
                                                    shared);
        s->reserved = cpus_string(&b, ncm_cpu_policy_reserved(ncm_node_cpu_policy(n)));
        s->shared_pool = cpus_string(&b, shared);
        add_settings(&b);
        if (!b.oom)
                add_pods(&b, tmp);
        if (!b.oom)
                add_cpus(&b, shared);
        if (!b.oom)
                add_numa(&b);
        if (!b.oom)
                add_devices(&b);
        if (!b.oom)
                add_pci(&b);
        if (!b.oom)
                add_explanations(&b, o);
        if (b.oom)
                return ncm_error_set(err, ENOMEM, "out of memory");
        *ret = NCM_TAKE_PTR(s);
        return 0;
}

int ncm_map_explain_pod(const ncm_node *n, const char *pod_uid, ncm_buf *out, ncm_error *err)
{
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autoptr(ncm_node) copy = NULL;
        const ncm_pod *pod = ncm_node_pod(n, pod_uid);
        build b = {.n = n};
        int r, i;

        if (!pod)
                return ncm_error_set(err, ENOENT, "pod %s: the node has no spec of it", pod_uid);
        r = ncm_map_scene_from_node(n, NULL, &s, err);
        if (r < 0)
                return r;
        i = find_pod(s, pod_uid);
        if (i < 0)
                return ncm_error_set(err, ENOENT, "pod %s: not on the node", pod_uid);
        b.s = s;
        replay(&b, &copy, pod, &s->pods[i]);
        if (b.oom)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (!s->pods[i].explain)
                return ncm_error_set(err, EIO, "pod %s: its admission could not be replayed",
                                     pod_uid);
        ncm_buf_puts(out, s->pods[i].explain);
        return ncm_buf_failed(out) ? ncm_error_set(err, ENOMEM, "out of memory") : 0;
}

int ncm_map_node_html(const ncm_node *n, const ncm_map_scene_options *so,
                      const ncm_map_html_options *ho, ncm_buf *out, ncm_error *err)
{
        ncm_autoptr(ncm_map_scene) s = NULL;
        int r = ncm_map_scene_from_node(n, so, &s, err);

        if (r < 0)
                return r;
        r = ncm_map_render_html(s, ho, out);
        if (r < 0)
                return ncm_error_set(err, -r, "out of memory");
        return 0;
}
