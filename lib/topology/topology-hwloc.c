/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Topologies from libhwloc: a synthetic description ("package:2 numa:2 l3:1 core:8 pu:2") or
 * an lstopo XML export. The hwloc tree is turned into what cadvisor would have read on that
 * machine (the default rules, ncm__cad_assemble): the NUMA nodes and their PUs, each PU's
 * Core and Package os_index as core_id and physical_package_id, the caches above each PU.
 * hwloc keeps no cache ids (synthetic caches have none, and XML does not record them), so a
 * cache's id is its logical index, as the kernel numbers caches 0.. too.
 *
 * With nodecm's rules (--topology-rules nodecm) the tree becomes the raw machine that sysfs
 * discovery fills for those rules, so ids follow one set of rules (docs/topology.md):
 *  - cpu: the PU's os_index (synthetic topologies number PUs 0.. in tree order);
 *  - core: the lowest PU of the PU's Core (the PU itself without one);
 *  - socket: the Package's os_index, renumbered by lowest CPU when one is missing/too large;
 *  - numa: the lowest-os_index NUMANode whose cpuset holds the PU;
 *  - uncore: the L3Cache's os_index when every L3 has one, else the L3's lowest PU (hwloc's
 *    synthetic caches have no os_index); the socket without an L3;
 *  - distances: hwloc's NUMA latency matrix when it covers the nodes, else 10/20.
 * Disallowed PUs and nodes (cgroup restrictions recorded in XML) are kept: the kubelet reads
 * sysfs and ignores cpusets too.
 */
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "base/array.h"
#include "topology/topology-internal.h"

#define MAX_SYNTHETIC_LEN 4096
#define MAX_XML_SIZE (64u << 20)

static void topo_destroyp(hwloc_topology_t *t)
{
        if (*t)
                hwloc_topology_destroy(*t);
}
#define autohwloc __attribute__((cleanup(topo_destroyp))) hwloc_topology_t

static void raw_done(ncm__raw_machine *m)
{
        for (size_t k = 0; k < m->nnodes; k++) {
                ncm_cpuset_free(m->nodes[k].cpus);
                free(m->nodes[k].dist);
        }
        free(m->nodes);
        free(m->cpus);
}

static int64_t index_or_none(unsigned idx)
{
        return idx == HWLOC_UNKNOWN_INDEX ? NCM__RAW_NONE : (int64_t)idx;
}

/* Fill the NUMA nodes of M, distances included. */
static int fill_nodes(hwloc_topology_t topo, const char *what, ncm__raw_machine *m, ncm_error *err)
{
        int nn = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
        struct hwloc_distances_s *dists[4];
        unsigned nr = 4;

        if (nn <= 0)
                return 0;
        m->nodes = calloc((size_t)nn, sizeof(*m->nodes));
        if (!m->nodes)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (int k = 0; k < nn; k++) {
                hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)k);
                ncm__raw_node *node = &m->nodes[m->nnodes];
                /* NUMA ids are kept as they are, but must be one */
                if (o->os_index == HWLOC_UNKNOWN_INDEX || o->os_index > INT32_MAX)
                        return ncm_error_set(err, ERANGE, "%s: NUMANode L#%u has no os_index", what,
                                             o->logical_index);
                node->id = (int)o->os_index;
                node->cpus = ncm_cpuset_new();
                if (!node->cpus)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                m->nnodes++;
                for (int b = hwloc_bitmap_first(o->cpuset); b >= 0;
                     b = hwloc_bitmap_next(o->cpuset, b))
                        if (ncm_cpuset_set(node->cpus, b) < 0)
                                return ncm_error_set(err, ERANGE,
                                                     "%s: NUMANode P#%u holds CPU %d, above %d",
                                                     what, o->os_index, b, NCM_CPUSET_MAX_CPUS - 1);
        }
        /* hwloc lists nodes by logical index; the rules want them by id */
        for (size_t i = 1; i < m->nnodes; i++)
                for (size_t j = i; j > 0 && m->nodes[j - 1].id > m->nodes[j].id; j--) {
                        ncm__raw_node tmp = m->nodes[j];
                        m->nodes[j] = m->nodes[j - 1];
                        m->nodes[j - 1] = tmp;
                }
        for (size_t i = 1; i < m->nnodes; i++)
                if (m->nodes[i].id == m->nodes[i - 1].id)
                        return ncm_error_set(err, EINVAL, "%s: two NUMA nodes with os_index %d",
                                             what, m->nodes[i].id);

        if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, dists,
                                        HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) < 0)
                return 0;
        if (nr > 4)
                nr = 4;
        for (unsigned d = 0; d < nr; d++) {
                struct hwloc_distances_s *ds = dists[d];
                bool use = ds->nbobjs == m->nnodes;
                for (size_t k = 0; use && k < m->nnodes; k++)
                        if (m->nodes[k].dist)
                                use = false; /* an earlier matrix won */
                for (unsigned i = 0; use && i < ds->nbobjs; i++) {
                        /* rows go to the node with that os_index, columns in id order */
                        size_t row = 0;
                        while (row < m->nnodes && m->nodes[row].id != (int)ds->objs[i]->os_index)
                                row++;
                        if (row == m->nnodes)
                                break;
                        m->nodes[row].dist = calloc(m->nnodes, sizeof(uint32_t));
                        if (!m->nodes[row].dist)
                                break;
                        m->nodes[row].ndist = m->nnodes;
                        for (unsigned j = 0; j < ds->nbobjs; j++) {
                                size_t col = 0;
                                uint64_t v = ds->values[i * ds->nbobjs + j];
                                while (col < m->nnodes &&
                                       m->nodes[col].id != (int)ds->objs[j]->os_index)
                                        col++;
                                if (col < m->nnodes)
                                        m->nodes[row].dist[col] =
                                                        v > INT32_MAX ? INT32_MAX : (uint32_t)v;
                        }
                }
        }
        for (unsigned d = 0; d < nr; d++)
                hwloc_distances_release(topo, dists[d]);
        return 0;
}

/* The caches cadvisor would read for a PU: those above it, lowest level first. */
static int hw_caches(void *data, int cpu, ncm__cad_cache **ret, size_t *n, ncm_error *err)
{
        hwloc_topology_t topo = data;
        hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, (unsigned)cpu);
        ncm__cad_cache *list = NULL;
        size_t k = 0, cap = 0;

        *ret = NULL;
        *n = 0;
        if (!pu)
                return 1;
        for (hwloc_obj_t o = pu->parent; o; o = o->parent) {
                if (!hwloc_obj_type_is_cache(o->type) || o->attr->cache.depth <= 2)
                        continue;
                if (ncm__array_grow(list, cap, k) < 0) {
                        free(list);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
                list[k++] = (ncm__cad_cache){
                                o->os_index == HWLOC_UNKNOWN_INDEX ? (int64_t)o->logical_index
                                                                   : (int64_t)o->os_index,
                                (int)o->attr->cache.depth, hwloc_bitmap_weight(o->cpuset)};
        }
        *ret = list;
        *n = k;
        return 0;
}

/* The first NUMA node among O's memory children (through memory-side caches), or NULL. */
static hwloc_obj_t first_numa(hwloc_obj_t o)
{
        for (hwloc_obj_t c = o->memory_first_child; c; c = c->next_sibling) {
                hwloc_obj_t n = c->type == HWLOC_OBJ_NUMANODE ? c : first_numa(c);
                if (n)
                        return n;
        }
        return NULL;
}

/*
 * Whether the kernel listed CPUs in NUMA node NODE: hwloc gives a CPU-less node (memory only,
 * e.g. HBM, CXL, PMEM) the cpuset of the place it attaches it by locality, while the kernel's
 * cpumap of such a node is empty. A node holds CPUs when it is the nearest node of at least
 * one PU (the first NUMA node attached to the PU's closest ancestor with memory), and then,
 * as hwloc attaches such a node where its cpuset is, all of its cpuset.
 */
static bool node_has_cpus(hwloc_topology_t topo, hwloc_obj_t node)
{
        for (int b = hwloc_bitmap_first(node->cpuset); b >= 0;
             b = hwloc_bitmap_next(node->cpuset, b)) {
                hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, (unsigned)b);
                for (hwloc_obj_t o = pu ? pu->parent : NULL; o; o = o->parent) {
                        hwloc_obj_t n = first_numa(o);
                        if (n) {
                                if (n == node)
                                        return true;
                                break;
                        }
                }
        }
        return false;
}

/*
 * How many PUs TOPO has, checked as both rules need them: at least one, no more than a cpuset
 * holds, each with an os_index that is a CPU number, no two alike. -EINVAL, -ERANGE.
 */
static int check_pus(hwloc_topology_t topo, const char *what, ncm_error *err)
{
        int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        unsigned char seen[NCM_CPUSET_MAX_CPUS] = {0};

        if (n <= 0)
                return ncm_error_set(err, EINVAL, "%s: no PU (could not detect number of cpus)",
                                     what);
        if (n > NCM_CPUSET_MAX_CPUS)
                return ncm_error_set(err, ERANGE, "%s: %d PUs, more than %d", what, n,
                                     NCM_CPUSET_MAX_CPUS);
        for (int i = 0; i < n; i++) {
                hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);

                if (pu->os_index == HWLOC_UNKNOWN_INDEX || pu->os_index >= NCM_CPUSET_MAX_CPUS)
                        return ncm_error_set(err, ERANGE,
                                             "%s: PU L#%u has os_index %d, outside [0, %d]", what,
                                             pu->logical_index, (int)pu->os_index,
                                             NCM_CPUSET_MAX_CPUS - 1);
                if (seen[pu->os_index] < 2)
                        seen[pu->os_index]++;
        }
        /* the lowest repeated one, as a walk of the CPUs in ascending order finds it */
        for (int cpu = 0; cpu < NCM_CPUSET_MAX_CPUS; cpu++)
                if (seen[cpu] > 1)
                        return ncm_error_set(err, EINVAL, "%s: two PUs with os_index %d", what,
                                             cpu);
        return n;
}

/* The kubelet's rules: the tree as cadvisor would have read the machine. */
static int from_hwloc_cadvisor(hwloc_topology_t topo, const char *what, ncm_topo **ret,
                               ncm_error *err)
{
        ncm__raw_machine nodes = {0}; /* fill_nodes() gives the nodes, cpusets and distances */
        ncm__cad_machine m = {0};
        int n = check_pus(topo, what, err);
        int r;

        if (n < 0)
                return n;
        m.cpus = calloc((size_t)n, sizeof(*m.cpus));
        if (!m.cpus)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (int i = 0; i < n; i++) {
                hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
                hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
                hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
                ncm__cad_cpu *c = &m.cpus[i];

                c->cpu = (int)pu->os_index;
                c->online = true;
                /* every PU has core_id and physical_package_id, as on a kernel: without a
                 * Core (a synthetic "pu:N") the PU is a core of its own; without a Package
                 * the package is unknown, -1 as the kernel prints it */
                c->has_core = true;
                c->core_id = core && core->os_index != HWLOC_UNKNOWN_INDEX ? (int64_t)core->os_index
                                                                           : (int64_t)pu->os_index;
                c->has_package = true;
                c->package = pkg && pkg->os_index != HWLOC_UNKNOWN_INDEX ? (int64_t)pkg->os_index
                                                                         : -1;
        }
        for (int i = 1; i < n; i++)
                for (int j = i; j > 0 && m.cpus[j - 1].cpu > m.cpus[j].cpu; j--) {
                        ncm__cad_cpu tmp = m.cpus[j];
                        m.cpus[j] = m.cpus[j - 1];
                        m.cpus[j - 1] = tmp;
                }
        m.ncpus = (size_t)n;
        r = fill_nodes(topo, what, &nodes, err);
        if (r < 0)
                goto out;
        m.nodes = calloc(nodes.nnodes ? nodes.nnodes : 1, sizeof(*m.nodes));
        if (!m.nodes) {
                r = ncm_error_set(err, ENOMEM, "out of memory");
                goto out;
        }
        for (size_t k = 0; k < nodes.nnodes; k++) {
                ncm__cad_node *nd = &m.nodes[k];
                nd->id = nodes.nodes[k].id;
                nd->dist = nodes.nodes[k].dist;
                nd->ndist = nodes.nodes[k].ndist;
                nd->cpus = malloc(((size_t)ncm_cpuset_weight(nodes.nodes[k].cpus) + 1) *
                                  sizeof(int));
                if (!nd->cpus) {
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                        goto out;
                }
                if (!node_has_cpus(topo,
                                   hwloc_get_numanode_obj_by_os_index(topo, (unsigned)nd->id)))
                        continue;
                NCM_CPUSET_FOREACH(c, nodes.nodes[k].cpus)
                {
                        nd->cpus[nd->ncpus++] = c;
                }
                qsort(nd->cpus, nd->ncpus, sizeof(int), ncm__glob_cmp_int);
        }
        m.nnodes = nodes.nnodes;
        /* cadvisor's glob order of node directories */
        qsort(m.nodes, m.nnodes, sizeof(*m.nodes), ncm__glob_cmp_node);
        m.caches = hw_caches;
        m.caches_data = topo;
        r = ncm__cad_assemble(&m, ret, err);
out:
        if (m.nodes)
                for (size_t k = 0; k < m.nnodes; k++)
                        free(m.nodes[k].cpus);
        free(m.nodes);
        free(m.cpus);
        raw_done(&nodes); /* owns the distance rows */
        return r;
}

static int from_hwloc_nodecm(hwloc_topology_t topo, const char *what, ncm_topo **ret,
                             ncm_error *err);
static int from_hwloc_memory(hwloc_topology_t topo, const char *what, ncm_topo_rules rules,
                             bool memory, ncm_topo **ret, ncm_error *err);

/*
 * The NUMA nodes' memory as hwloc holds it: local_memory is the node's MemTotal, the first page
 * type the normal pages, the others the hugepage pools (sizes in bytes there, KiB here).
 */
static int attach_memory(hwloc_topology_t topo, ncm_topo *t, ncm_error *err)
{
        int nn = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);

        for (int k = 0; k < nn; k++) {
                hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)k);
                ncm_hugepages hp[16];
                size_t nhp = 0;
                int r;

                if (!o || !o->attr || o->os_index == HWLOC_UNKNOWN_INDEX)
                        continue;
                for (unsigned i = 1; i < o->attr->numanode.page_types_len && nhp < 16; i++) {
                        if (o->attr->numanode.page_types[i].size < 1024)
                                continue;
                        hp[nhp].page_size = o->attr->numanode.page_types[i].size / 1024;
                        hp[nhp].num_pages = o->attr->numanode.page_types[i].count;
                        nhp++;
                }
                r = ncm_topo_set_numa_memory(t, (int)o->os_index, o->attr->numanode.local_memory,
                                             hp, nhp, NULL);
                if (r == -ENOMEM)
                        return ncm_error_set(err, ENOMEM, "out of memory");
        }
        return 0;
}

/* From TOPO; with MEMORY, the NUMA nodes' memory attached too. */
static int from_hwloc_memory(hwloc_topology_t topo, const char *what, ncm_topo_rules rules,
                             bool memory, ncm_topo **ret, ncm_error *err)
{
        ncm_topo *t = NULL;
        int r;

        if (rules != NCM_TOPO_RULES_NODECM)
                r = from_hwloc_cadvisor(topo, what, &t, err);
        else
                r = from_hwloc_nodecm(topo, what, &t, err);
        if (r < 0)
                return r;
        if (memory && (r = attach_memory(topo, t, err)) < 0) {
                ncm_topo_free(t);
                return r;
        }
        *ret = t;
        return 0;
}

static int from_hwloc_nodecm(hwloc_topology_t topo, const char *what, ncm_topo **ret,
                             ncm_error *err)
{
        ncm__raw_machine m = {0};
        int n = check_pus(topo, what, err);
        bool l3_all_indexed = true;
        int r;

        if (n < 0)
                return n;
        m.cpus = calloc((size_t)n, sizeof(*m.cpus));
        if (!m.cpus)
                return ncm_error_set(err, ENOMEM, "out of memory");
        for (hwloc_obj_t l3 = NULL;
             (l3 = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_L3CACHE, l3)) != NULL;)
                if (l3->os_index == HWLOC_UNKNOWN_INDEX)
                        l3_all_indexed = false;
        for (int i = 0; i < n; i++) {
                hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
                hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
                hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
                hwloc_obj_t l3 = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_L3CACHE, pu);
                ncm__raw_cpu *c = &m.cpus[i];

                c->cpu = (int)pu->os_index;
                c->core_id = NCM__RAW_NONE;
                c->book = NCM__RAW_NONE;
                c->drawer = NCM__RAW_NONE;
                c->thread_first = core ? hwloc_bitmap_first(core->cpuset) : c->cpu;
                c->package = pkg ? index_or_none(pkg->os_index) : NCM__RAW_NONE;
                /* a package without os_index is still one package: key it by its first PU */
                c->package_first = pkg ? hwloc_bitmap_first(pkg->cpuset) : -1;
                c->has_l3 = l3 != NULL;
                c->l3_id = l3 && l3_all_indexed ? index_or_none(l3->os_index) : NCM__RAW_NONE;
                c->l3_first = l3 ? hwloc_bitmap_first(l3->cpuset) : -1;
        }
        /* the rules expect CPUs ascending; hwloc's logical order need not be */
        for (int i = 1; i < n; i++)
                for (int j = i; j > 0 && m.cpus[j - 1].cpu > m.cpus[j].cpu; j--) {
                        ncm__raw_cpu tmp = m.cpus[j];
                        m.cpus[j] = m.cpus[j - 1];
                        m.cpus[j - 1] = tmp;
                }
        m.ncpus = (size_t)n;
        r = fill_nodes(topo, what, &m, err);
        if (r >= 0)
                r = ncm__topo_assemble(&m, ret, err);
        raw_done(&m);
        return r;
}

/*
 * An upper bound on the PUs a synthetic description makes: the product of the level
 * arities ("type:N"). Bracketed memory attachments ("[numa]") make no PU. Checked before
 * hwloc builds anything, so "core:100000 pu:100000" is refused instead of exhausting memory.
 */
static int synthetic_bound(const char *desc, long long *ret)
{
        long long product = 1;
        int depth = 0;
        for (const char *p = desc; *p; p++) {
                if (*p == '[' || *p == '(')
                        depth++;
                else if ((*p == ']' || *p == ')') && depth > 0)
                        depth--;
                else if (*p == ':' && depth == 0 && p[1] >= '0' && p[1] <= '9') {
                        long long v = 0;
                        for (p++; *p >= '0' && *p <= '9'; p++)
                                if (v <= NCM_CPUSET_MAX_CPUS)
                                        v = v * 10 + (*p - '0');
                        p--;
                        if (v > NCM_CPUSET_MAX_CPUS)
                                v = NCM_CPUSET_MAX_CPUS + 1;
                        product *= v;
                        if (product > NCM_CPUSET_MAX_CPUS)
                                product = NCM_CPUSET_MAX_CPUS + 1;
                }
        }
        *ret = product;
        return 0;
}

int ncm_topo_from_synthetic(const char *desc, ncm_topo **ret, ncm_error *err)
{
        return ncm__topo_from_synthetic_rules(desc, NCM_TOPO_RULES_CADVISOR, ret, err);
}

int ncm__topo_from_synthetic_rules(const char *desc, ncm_topo_rules rules, ncm_topo **ret,
                                   ncm_error *err)
{
        autohwloc topo = NULL;
        long long bound = 0;
        size_t len = strlen(desc);

        if (len == 0)
                return ncm_error_set(err, EINVAL, "synthetic topology: empty description");
        if (len > MAX_SYNTHETIC_LEN)
                return ncm_error_set(err, EINVAL,
                                     "synthetic topology: description longer than %d bytes",
                                     MAX_SYNTHETIC_LEN);
        (void)synthetic_bound(desc, &bound);
        if (bound > NCM_CPUSET_MAX_CPUS)
                return ncm_error_set(err, ERANGE, "synthetic topology \"%s\": more than %d PUs",
                                     desc, NCM_CPUSET_MAX_CPUS);
        if (hwloc_topology_init(&topo) < 0)
                return ncm_error_set(err, ENOMEM, "hwloc: cannot create a topology");
        if (hwloc_topology_set_synthetic(topo, desc) < 0)
                return ncm_error_set(err, EINVAL,
                                     "synthetic topology \"%s\": hwloc cannot parse it (expected "
                                     "e.g. \"package:2 numa:2 l3:1 core:8 pu:2\")",
                                     desc);
        (void)hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
        if (hwloc_topology_load(topo) < 0)
                return ncm_error_errno(err, errno,
                                       "synthetic topology \"%s\": hwloc cannot load it", desc);
        /* hwloc gives every synthetic node 1 GB; only a description that says "memory=" means
         * it (docs/memory-manager.md), so other tables stay without memory */
        return from_hwloc_memory(topo, "synthetic topology", rules, strstr(desc, "memory=") != NULL,
                                 ret, err);
}

/* hwloc 2.x refuses XML version 3 (written by hwloc 3.x lstopo) outright. */
static bool declares_version3(const char *xml, size_t len)
{
        static const char tag[] = "<topology version=\"3.";
        size_t tl = sizeof(tag) - 1;
        size_t lim = len < 4096 ? len : 4096;
        for (size_t i = 0; i + tl <= lim; i++)
                if (memcmp(xml + i, tag, tl) == 0)
                        return true;
        return false;
}

/* An lstopo export of a real machine carries its NUMA nodes' memory. */
static bool xml_has_memory(const char *xml)
{
        return strstr(xml, "local_memory=\"") != NULL;
}

static int load_xml(const char *xml, size_t len, const char *what, ncm_topo_rules rules,
                    ncm_topo **ret, ncm_error *err)
{
        autohwloc topo = NULL;
        ncm_autofree char *copy = NULL;

        if (len == 0)
                return ncm_error_set(err, EINVAL, "%s: empty XML", what);
        if (len > MAX_XML_SIZE)
                return ncm_error_set(err, EFBIG, "%s: XML larger than %u bytes", what,
                                     MAX_XML_SIZE);
        if (memchr(xml, '\0', len))
                return ncm_error_set(err, EINVAL, "%s: NUL byte in XML", what);
        /* hwloc wants the buffer NUL-terminated and counts the terminator */
        copy = malloc(len + 1);
        if (!copy)
                return ncm_error_set(err, ENOMEM, "out of memory");
        memcpy(copy, xml, len);
        copy[len] = '\0';
        for (int attempt = 0; attempt < 2; attempt++) {
                char *v;
                if (hwloc_topology_init(&topo) < 0)
                        return ncm_error_set(err, ENOMEM, "hwloc: cannot create a topology");
                (void)hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
                if (hwloc_topology_set_xmlbuffer(topo, copy, (int)len + 1) == 0 &&
                    hwloc_topology_load(topo) == 0)
                        return from_hwloc_memory(topo, what, rules, xml_has_memory(copy), ret, err);
                hwloc_topology_destroy(topo);
                topo = NULL;
                if (attempt > 0 || !declares_version3(copy, len))
                        break;
                /* Version 3 keeps the objects, cpusets and distances nodecm reads, and
                 * hwloc 2.x skips elements it does not know: retry declared as version 2. */
                v = strstr(copy, "<topology version=\"3.");
                v[sizeof("<topology version=\"") - 1] = '2';
        }
        return ncm_error_set(err, EINVAL,
                             "%s: hwloc cannot load this XML (not an lstopo XML export, or a "
                             "damaged one)",
                             what);
}

int ncm__topo_from_xml_buffer_rules(const char *xml, size_t len, ncm_topo_rules rules,
                                    ncm_topo **ret, ncm_error *err)
{
        return load_xml(xml, len, "XML topology", rules, ret, err);
}

int ncm_topo_from_xml_buffer(const char *xml, size_t len, ncm_topo **ret, ncm_error *err)
{
        return load_xml(xml, len, "XML topology", NCM_TOPO_RULES_CADVISOR, ret, err);
}

int ncm__topo_from_xml_file_rules(const char *path, ncm_topo_rules rules, ncm_topo **ret,
                                  ncm_error *err)
{
        ncm_autofree char *text = NULL;
        size_t len = 0;
        int r = ncm_fs_read_all(AT_FDCWD, path, MAX_XML_SIZE, &text, &len, err);
        if (r < 0)
                return r;
        return load_xml(text, len, path, rules, ret, err);
}

int ncm_topo_from_xml_file(const char *path, ncm_topo **ret, ncm_error *err)
{
        return ncm__topo_from_xml_file_rules(path, NCM_TOPO_RULES_CADVISOR, ret, err);
}
