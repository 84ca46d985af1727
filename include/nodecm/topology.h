/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The machine as the kubelet's CPU and topology managers see it: a table of online CPUs
 * {cpu, core, socket, numa, uncore} plus the list of NUMA nodes with their distances.
 *
 * Meaning of the ids (kubelet/cadvisor semantics, docs/topology.md):
 *  - core:   the lowest CPU id among the core's threads (unique on the machine);
 *  - socket: physical_package_id, as the kernel wrote it;
 *  - numa:   the CPU's NUMA node id;
 *  - uncore: the id of the CPU's uncore (L3) cache, or the socket id when there is none.
 * Socket, NUMA and uncore ids are the kernel's integers, never renumbered nor range-checked;
 * only CPU ids are bounded (by the cpuset domain).
 *
 * A topology is immutable once built; every query is read-only and thread-safe.
 */
#ifndef NODECM_TOPOLOGY_H
#define NODECM_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/cpuset.h>
#include <nodecm/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncm_cpu_info {
        int cpu;        /* 0..NCM_CPUSET_MAX_CPUS-1 */
        int core;       /* a CPU id: the lowest thread of the core (0..NCM_CPUSET_MAX_CPUS-1) */
        int socket;     /* physical_package_id as the kernel wrote it: any int (-1, 8442, ...) */
        int numa;       /* NUMA node id: any int */
        int64_t uncore; /* the uncore cache's id (the kernel's unsigned cache id), else socket */
} ncm_cpu_info;

typedef struct ncm_topo ncm_topo;

/*
 * Build a topology from a CPU table (any order, no duplicate cpu) and NUMA nodes. Only CPU
 * ids (cpu, core) are bounded, by the cpuset domain; socket, numa and uncore are kept as
 * given, never renumbered. NUMA_IDS lists every NUMA node (CPU-less ones too); when NULL the
 * nodes are those of the CPUs. DISTANCES is a NNUMA x NNUMA row-major matrix in NUMA_IDS
 * order, or NULL (then 10 on the diagonal and 20 elsewhere, as Linux reports without a SLIT).
 * Every CPU's numa must be in NUMA_IDS. An empty table is allowed (the kubelet's table of a
 * machine whose CPUs cadvisor cannot place). -EINVAL / -ERANGE with a message naming the
 * entry as "cpus[I].FIELD" / "numa[I].id" (I the caller's index), so a reader of a file can
 * pass it on.
 */
NCM_API int ncm_topo_new(const ncm_cpu_info *cpus, size_t ncpus, const int *numa_ids, size_t nnuma,
                         const uint32_t *distances, ncm_topo **ret, ncm_error *err);
NCM_API ncm_topo *ncm_topo_free(ncm_topo *t);
NCM_DEFINE_AUTOPTR(ncm_topo, ncm_topo_free)

/* The CPU table sorted by cpu id; *N receives its length. */
NCM_API const ncm_cpu_info *ncm_topo_cpus(const ncm_topo *t, size_t *n);
/* The entry of CPU, or NULL when the CPU is not in the topology. */
NCM_API const ncm_cpu_info *ncm_topo_cpu(const ncm_topo *t, int cpu);

/* kubelet's CPUTopology counts: NumCPUs, NumCores, NumSockets, NumNUMANodes (nodes that
 * have CPUs), NumUncoreCache. */
NCM_API int ncm_topo_num_cpus(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_num_cores(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_num_sockets(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_num_numa_nodes(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_num_uncore_caches(const ncm_topo *t) NCM_PURE;
/* kubelet's derived sizes (integer division; 0 when the denominator is 0). These are
 * averages: kubelets before 1.37 used them where the newest compares each element's own size
 * (docs/cpu-manager.md, "Kubelet generations"). */
NCM_API int ncm_topo_cpus_per_core(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_cpus_per_socket(const ncm_topo *t) NCM_PURE;
NCM_API int ncm_topo_cpus_per_uncore(const ncm_topo *t) NCM_PURE;

/* Every NUMA node (CPU-less ones too), ascending; *N receives the count. */
NCM_API const int *ncm_topo_numa_ids(const ncm_topo *t, size_t *n);
/* Distance between NUMA nodes A and B (ids), or -1 when either is unknown. */
NCM_API int ncm_topo_numa_distance(const ncm_topo *t, int a, int b) NCM_PURE;
/* The distance matrix, row-major N x N in ncm_topo_numa_ids() order; *N receives N. */
NCM_API const uint32_t *ncm_topo_numa_distances(const ncm_topo *t, size_t *n);
/*
 * NUMA node ID's distance row as the machine gave it, *N entries, entry K the distance to
 * node K: the kernel's `distance` file as cadvisor keeps it (node.Distances), which the
 * kubelet indexes by node id (distances[a][b]). NULL when the matrix's row says it all
 * (nodes 0..N-1, a row of N), when the row does not reach every node id (the kubelet's lookup
 * would fail: the matrix fills in), and for sources without such rows (a node without the
 * file, synthetic and hwloc machines).
 */
NCM_API const uint32_t *ncm_topo_numa_distance_row(const ncm_topo *t, int id, size_t *n);
/*
 * The id of the first NUMA node (ascending) whose distances the machine did not give: under
 * cadvisor's rules, a node without a `distance` file, or every node of a machine without node
 * directories (cadvisor then reports no distances; its matrix entries are nodecm's 10/20).
 * The kubelet refuses prefer-closest-numa-nodes on such a machine. Returns 0 and sets *ID, or
 * -ENOENT when every node has its own row (tables, synthetic and hwloc machines always do).
 */
NCM_API int ncm_topo_numa_distances_missing(const ncm_topo *t, int *id);

/*
 * --- Memory per NUMA node --- (the memory manager's machine, cadvisor's MachineInfo.Topology
 * Memory and HugePages; topology JSON "memory" and "hugepages" in each "numa" entry)
 *
 * A source that knows a node's memory attaches it while it builds the topology: sysfs reads
 * nodeN/meminfo's MemTotal and nodeN/hugepages/hugepages-<size>kB/nr_hugepages as cadvisor
 * does, hwloc XML its NUMA nodes' local memory and page types, JSON its "memory"/"hugepages".
 * A topology without it (a synthetic description, a machine without node directories) reports
 * 0 bytes and no hugepages for every node, as cadvisor's table would.
 */
typedef struct ncm_hugepages {
        uint64_t page_size; /* KiB (cadvisor's PageSize) */
        uint64_t num_pages; /* nr_hugepages */
} ncm_hugepages;

/* Whether a source attached memory to the topology (then JSON output carries it). */
NCM_API bool ncm_topo_has_memory(const ncm_topo *t) NCM_PURE;
/*
 * NUMA node ID's memory in bytes (MemTotal), and its hugepage pools ascending by page size in
 * *HP / *N (owned by the topology; either may be NULL). 0 bytes and no pools for a node without
 * memory information or an unknown id.
 */
NCM_API uint64_t ncm_topo_numa_memory(const ncm_topo *t, int id, const ncm_hugepages **hp,
                                      size_t *n);
/*
 * Attach node ID's memory (bytes) and N hugepage pools (copied; sorted by page size here). For
 * sources, while the topology is being built and not yet shared (a topology is read-only
 * afterwards). -ENOENT for a node the topology does not have, -EINVAL for a repeated or zero
 * page size, -ENOMEM.
 */
NCM_API int ncm_topo_set_numa_memory(ncm_topo *t, int id, uint64_t memory, const ncm_hugepages *hp,
                                     size_t n, ncm_error *err);
/*
 * Read the memory of every NUMA node directory of the machine under ROOTFD as cadvisor does
 * (GetNodesInfo: getNodeMemInfo, GetHugePagesInfo) and attach it to T. A node without a
 * meminfo file has 0 bytes, one without a hugepages directory no pools; a meminfo without a
 * "MemTotal: N kB" line or a pool whose name or nr_hugepages does not parse is -EINVAL naming
 * the file. A machine without node directories gets nothing attached. The sysfs discovery
 * calls it; it is public for tools that build a table another way.
 */
NCM_API int ncm_topo_read_memory_sysfs(ncm_topo *t, int rootfd, ncm_error *err);
/*
 * Parse a memory override: "[ID:]SIZE[,hugepages-PAGE=COUNT]...", several separated by "/"
 * ("0:64Gi,hugepages-1Gi=8/1:64Gi"); without "ID:" the entry applies to every NUMA node. SIZE
 * and PAGE are Kubernetes quantities (bytes), COUNT a page count. Attach the result to T (for
 * --synthetic machines and scenarios, docs/memory-manager.md). -EINVAL naming the entry.
 */
NCM_API int ncm_topo_apply_memory_spec(ncm_topo *t, const char *spec, ncm_error *err);

/* All CPUs of the topology, copied into OUT. */
NCM_API void ncm_topo_all_cpus(const ncm_topo *t, ncm_cpuset *out);
/* All CPUs, as a set owned by the topology (valid until ncm_topo_free). */
NCM_API const ncm_cpuset *ncm_topo_all_cpus_ref(const ncm_topo *t) NCM_PURE;

/*
 * --- The elements: NUMA nodes, sockets, uncore caches ---
 *
 * Their ids are arbitrary integers, so they are not kept in id sets: each level has a table
 * of the distinct ids its CPUs carry, sorted ascending (-1 first, as Go sorts), and a dense
 * index 0..count-1 into that table. Ascending index order is ascending id order, so code that
 * breaks ties by id (the kubelet's sorts) may break them by index. Only elements that have
 * CPUs are in the tables (ncm_topo_numa_ids() also lists CPU-less NUMA nodes).
 */
typedef enum ncm_topo_level {
        NCM_TOPO_NUMA,
        NCM_TOPO_SOCKET,
        NCM_TOPO_UNCORE,
        NCM_TOPO_N_LEVELS
} ncm_topo_level;

/* The ids of LEVEL, ascending; *N receives their count (kubelet's NumNUMANodes etc.). */
NCM_API const int64_t *ncm_topo_level_ids(const ncm_topo *t, ncm_topo_level level, size_t *n);
/* The dense index of ID in LEVEL, or -1 when no CPU has it. O(log n). */
NCM_API int ncm_topo_level_index(const ncm_topo *t, ncm_topo_level level, int64_t id) NCM_PURE;
/* The dense index of CPU's element of LEVEL, or -1 when the CPU is unknown. O(1). */
NCM_API int ncm_topo_level_of_cpu(const ncm_topo *t, ncm_topo_level level, int cpu) NCM_PURE;
/* The CPUs of the element at dense index I of LEVEL, owned by the topology. */
NCM_API const ncm_cpuset *ncm_topo_level_cpus(const ncm_topo *t, ncm_topo_level level,
                                              size_t i) NCM_PURE;

/*
 * The ids of LEVEL that the CPUs of CPUS belong to (the kubelet's
 * CPUDetails.KeepOnly(cpus).NUMANodes() and friends), ascending, written to IDS, which has
 * room for the level's count. CPUs not in the topology are ignored. Returns how many.
 */
NCM_API size_t ncm_topo_ids_of_cpus(const ncm_topo *t, ncm_topo_level level, const ncm_cpuset *cpus,
                                    int64_t *ids);
/*
 * The CPUs whose LEVEL id is one of IDS[0..N) (the kubelet's CPUsInNUMANodes(ids...) and
 * friends). Unknown ids are ignored. OUT is overwritten.
 */
NCM_API void ncm_topo_cpus_of_ids(const ncm_topo *t, ncm_topo_level level, const int64_t *ids,
                                  size_t n, ncm_cpuset *out);

/*
 * By id, for inner loops: the CPUs of one NUMA node / socket / uncore cache, owned by the
 * topology; NULL when no CPU has that id (CPU-less NUMA nodes included).
 */
NCM_API const ncm_cpuset *ncm_topo_numa_cpus(const ncm_topo *t, int numa) NCM_PURE;
NCM_API const ncm_cpuset *ncm_topo_socket_cpus(const ncm_topo *t, int socket) NCM_PURE;
NCM_API const ncm_cpuset *ncm_topo_uncore_cpus(const ncm_topo *t, int64_t uncore) NCM_PURE;

/*
 * --- Cores --- Core ids are CPU ids (the lowest thread), so they do fit a cpuset.
 */
/* The CPU ids of core CORE, ascending, owned by the topology; NULL and *N = 0 when unknown. */
NCM_API const int *ncm_topo_core_cpus(const ncm_topo *t, int core, size_t *n);
/* CPUs of the cores in IDS (a set of core ids). OUT is overwritten and may be IDS. */
NCM_API void ncm_topo_cpus_in_cores(const ncm_topo *t, const ncm_cpuset *ids, ncm_cpuset *out);
/* The cores of the CPUs of CPUS (CPUs not in the topology are ignored). OUT may be CPUS. */
NCM_API void ncm_topo_cores_of_cpus(const ncm_topo *t, const ncm_cpuset *cpus, ncm_cpuset *out);

/*
 * --- Isolated CPUs --- (docs/isolation.md; topology JSON "isolated" and "nohz_full" per CPU)
 *
 * What the kernel was told about CPU isolation, by source. A CPU is *isolated* when the
 * scheduler does not balance load onto it: /sys/devices/system/cpu/isolated, isolcpus= with the
 * domain flag (or no flag), or a cgroup v2 isolated partition (cpuset.cpus.isolated). It is
 * *nohz_full* when its tick stops with one task: /sys/devices/system/cpu/nohz_full,
 * nohz_full=, or isolcpus= with the nohz flag. isolcpus=managed_irq only keeps managed
 * interrupts away and marks nothing. The kubelet reads none of this (kubernetes #87862); only
 * nodecm's isolatedCPUs setting acts on it.
 */
typedef enum ncm_iso_source {
        NCM_ISO_SYSFS_ISOLATED = 0, /* /sys/devices/system/cpu/isolated */
        NCM_ISO_SYSFS_NOHZ_FULL,    /* /sys/devices/system/cpu/nohz_full ("(null)": none) */
        NCM_ISO_ISOLCPUS_DOMAIN,    /* isolcpus= with domain, or without flags */
        NCM_ISO_ISOLCPUS_MANAGED_IRQ,
        NCM_ISO_ISOLCPUS_NOHZ,
        NCM_ISO_NOHZ_FULL,       /* nohz_full= */
        NCM_ISO_PARTITIONS,      /* cgroup v2 isolated partitions (root cpuset.cpus.isolated) */
        NCM_ISO_GIVEN_ISOLATED,  /* given as such (topology JSON) */
        NCM_ISO_GIVEN_NOHZ_FULL, /* likewise */
        NCM_ISO_N_SOURCES
} ncm_iso_source;

/* The source's name, as `nodecm topology` and the docs call it ("isolcpus=domain", ...). */
NCM_API const char *ncm_iso_source_name(ncm_iso_source s) NCM_PURE;

/*
 * Attach what SOURCE says (CPUS, copied; CPUs the topology does not have are dropped; NULL:
 * the source said nothing, which differs from an empty set only for people). For sources,
 * while the topology is being built and not yet shared. -ENOMEM.
 */
NCM_API int ncm_topo_set_isolation(ncm_topo *t, ncm_iso_source source, const ncm_cpuset *cpus,
                                   ncm_error *err);
/* What SOURCE said, or NULL when it said nothing. */
NCM_API const ncm_cpuset *ncm_topo_isolation_source(const ncm_topo *t,
                                                    ncm_iso_source source) NCM_PURE;
/* The isolated CPUs and the nohz_full CPUs (the unions above; empty sets, never NULL). */
NCM_API const ncm_cpuset *ncm_topo_isolated_cpus(const ncm_topo *t) NCM_PURE;
NCM_API const ncm_cpuset *ncm_topo_nohz_full_cpus(const ncm_topo *t) NCM_PURE;

/*
 * Read the isolation of the machine under ROOTFD and attach it to T: /sys/devices/system/cpu/
 * isolated and nohz_full, the isolcpus= and nohz_full= parameters of /proc/cmdline (read as
 * the kernel parses them: flags, then a CPU list; a parameter the kernel would ignore is
 * ignored), and the root cgroup's cpuset.cpus.isolated under /sys/fs/cgroup or
 * /sys/fs/cgroup/unified. A missing file says nothing; a sysfs file that does not parse is
 * -EINVAL naming it. The sysfs discovery calls it; a dump gives the command line as
 * DIR/proc/cmdline (docs/topology.md).
 */
NCM_API int ncm_topo_read_isolation(ncm_topo *t, int rootfd, ncm_error *err);

/*
 * The kernel's CPU list syntax (bitmap_parselist; kernel-parameters.txt "cpu lists") of
 * S[0..LEN): comma-separated "A", "A-B", "A-B:USED/GROUP" and "all", where a number may be "N",
 * the last CPU (NR_CPUS - 1). Into a new set *RET. -EINVAL (syntax), -ERANGE (a CPU at or
 * above NR_CPUS, or above the cpuset domain). Pure; no message.
 */
NCM_API int ncm_kernel_cpulist_parse(const char *s, size_t len, int nr_cpus, ncm_cpuset **ret);

/*
 * --- Sources --- (docs/topology.md gives every id rule and how odd machines are read)
 */

/*
 * Which rules turn what a machine reports into the table. CADVISOR (the default) is the
 * kubelet's: cadvisor's GetNodesInfo read as cadvisor reads it, then the kubelet's Discover
 * (spec §2.2a; docs/topology.md lists each rule). NODECM is nodecm's friendlier reading,
 * chosen explicitly (`--topology-rules nodecm`): CPUs in no node directory are kept, a node
 * id is invented when there is none, cores are also split by thread siblings, an L3 without
 * an id is named by its lowest CPU, and ids the cpuset cannot hold are renumbered.
 */
typedef enum ncm_topo_rules {
        NCM_TOPO_RULES_CADVISOR = 0,
        NCM_TOPO_RULES_NODECM,
        NCM_TOPO_RULES_N
} ncm_topo_rules;

/* "cadvisor", "nodecm" (the --topology-rules values). */
NCM_API const char *ncm_topo_rules_name(ncm_topo_rules rules) NCM_PURE;
/* The rules of NAME, or -1 when unknown. */
NCM_API int ncm_topo_rules_from_name(const char *name) NCM_PURE;

/*
 * Discover the machine whose /sys (and /proc) lie under ROOTFD (ncm_fs_open_root("/") for
 * this one) with the kubelet's (cadvisor's) rules: the CPUs of the NUMA node directories,
 * online per the machine's online list, cores by (core_id, package) within a node, socket =
 * physical_package_id, numa = the node (the package without node directories), uncore = the
 * first uncore cache's id else the socket, distances from nodeN/distance; every id as read.
 * Errors name the file at fault.
 */
NCM_API int ncm_topo_discover_sysfs(int rootfd, ncm_topo **ret, ncm_error *err);
/* The same with the chosen rules. */
NCM_API int ncm_topo_discover_sysfs_rules(int rootfd, ncm_topo_rules rules, ncm_topo **ret,
                                          ncm_error *err);

/*
 * Build a topology from hwloc's synthetic description ("package:2 numa:2 l3:1 core:8 pu:2"),
 * read as the kubelet would read such a machine. CPU ids are PU os_index values (hwloc numbers
 * them 0.. in tree order), NUMA ids the NUMA nodes' os_index, core and package ids their
 * os_index; synthetic caches have no id, so a cache's id is its logical index (0.., as the
 * kernel numbers them).
 */
NCM_API int ncm_topo_from_synthetic(const char *desc, ncm_topo **ret, ncm_error *err);

/* Build a topology from an lstopo XML file (a host path) or from XML text in memory, read
 * with the kubelet's rules (the machine's sysfs would give the same table). */
NCM_API int ncm_topo_from_xml_file(const char *path, ncm_topo **ret, ncm_error *err);
NCM_API int ncm_topo_from_xml_buffer(const char *xml, size_t len, ncm_topo **ret, ncm_error *err);

/*
 * Read nodecm topology JSON (DESIGN.md: {"cpus": [...], "numa": [...]}). NAME (a file name)
 * starts parse errors; validation errors name the field path ("cpus[3].core: expected an
 * integer, got string"). Unknown keys are refused.
 */
NCM_API int ncm_topo_parse_json(const char *text, size_t len, const char *name, ncm_topo **ret,
                                ncm_error *err);
/* Read a nodecm topology JSON file (a host path, "-" for stdin). */
NCM_API int ncm_topo_load_json_file(const char *path, ncm_topo **ret, ncm_error *err);

/*
 * The same from an already parsed json-c value (e.g. the inline "cpus"/"numa" of a simulation
 * scenario). PATH prefixes field paths ("node.topology" gives "node.topology.cpus[0].core");
 * NULL or "" for none. Keys other than "cpus" and "numa" are refused unless IGNORE_OTHER_KEYS.
 */
struct json_object;
NCM_API int ncm_topo_from_json_value(struct json_object *o, const char *path,
                                     bool ignore_other_keys, ncm_topo **ret, ncm_error *err);

/*
 * Append the topology as nodecm topology JSON (DESIGN.md): "cpus" sorted by id, "numa" by id
 * with distances in that order, one CPU / NUMA node per line, ending with a newline.
 * ncm_topo_parse_json() of the text gives back an equal topology.
 */
NCM_API void ncm_topo_format_json(const ncm_topo *t, ncm_buf *b);

/*
 * Append a human-readable tree: socket -> NUMA node -> L3 (uncore) -> core -> CPU threads,
 * then the totals. Every CPU appears exactly once.
 */
NCM_API void ncm_topo_format_tree(const ncm_topo *t, ncm_buf *b);

/* true when both topologies have the same CPU table, NUMA nodes, distances and isolated and
 * nohz_full CPUs (and the same PCI devices, when either has some attached). */
NCM_API bool ncm_topo_equal(const ncm_topo *a, const ncm_topo *b) NCM_PURE;

/*
 * --- PCI devices --- (docs/topology.md "PCI devices"; topology JSON "pci")
 *
 * The PCI functions of a machine as lstopo finds them in /sys/bus/pci/devices: each one's
 * class, vendor and device ids, the kernel's numa_node (-1 kept: the kernel knows none) and
 * local_cpulist (local_cpus' mask on older kernels), and where it hangs: its host bridge
 * ("pci0000:3a", the PCI root) and the PCI bridges from the root port down to it. The table is
 * a separate object, read only when asked for (ncm_topo_load_pci()): commands that need no PCI
 * devices never read them. A topology may carry one (topology JSON's "pci", attached by the
 * source that read it); it is immutable like the topology once shared.
 */
typedef struct ncm_pci_device {
        char *address;          /* "0000:3b:00.0": domain (4+ hex digits):bus:device.function */
        int64_t class_code;     /* the class file (0x020000: class, subclass, interface); -1 */
        int32_t vendor;         /* vendor id (0x15b3); -1 when the kernel gave none */
        int32_t device;         /* device id; -1 likewise */
        int numa;               /* numa_node as the kernel wrote it: -1 for none */
        ncm_cpuset *local_cpus; /* local_cpulist (or local_cpus); NULL when neither exists */
        char *root;             /* its host bridge ("pci0000:3a"); NULL when sysfs shows none */
        char **bridges;         /* the PCI bridges from the root port down to its parent */
        size_t n_bridges;
} ncm_pci_device;

typedef struct ncm_pci ncm_pci;

/*
 * A table of N devices (copied; any order, sorted here by domain, bus, device, function).
 * Addresses must be valid and unique (-EINVAL "pci[I].address: ..."), bridges valid addresses,
 * a root "pciDDDD:BB". -ENOMEM.
 */
NCM_API int ncm_pci_new(const ncm_pci_device *devs, size_t n, ncm_pci **ret, ncm_error *err);
NCM_API ncm_pci *ncm_pci_free(ncm_pci *p);
NCM_DEFINE_AUTOPTR(ncm_pci, ncm_pci_free)

/* The devices, sorted by address; *N receives their count. */
NCM_API const ncm_pci_device *ncm_pci_devices(const ncm_pci *p, size_t *n);
/* The device at ADDRESS (any spelling ncm_pci_parse_address() takes), or NULL. */
NCM_API const ncm_pci_device *ncm_pci_find(const ncm_pci *p, const char *address) NCM_PURE;

/*
 * Read /sys/bus/pci/devices under ROOTFD. A machine without that directory has no PCI
 * devices (an empty table, not an error). A file that is missing leaves its field unknown; a
 * file that exists but does not parse is -EINVAL naming it. -ENOMEM.
 */
NCM_API int ncm_pci_discover_sysfs(int rootfd, ncm_pci **ret, ncm_error *err);

/*
 * Parse a PCI address: "0000:3b:00.0" or, domain 0, "3b:00.0"; hex digits in either case.
 * Writes the canonical form (the kernel's: lower case, domain 4 or more digits) into OUT
 * (NCM_PCI_ADDRESS_MAX bytes). 0, or -EINVAL.
 */
#define NCM_PCI_ADDRESS_MAX 20
NCM_API int ncm_pci_parse_address(const char *s, char *out);

/* What a class code is, for people ("Ethernet", "NVMe", "3D", "PCI bridge", ...). */
NCM_API const char *ncm_pci_class_name(int64_t class_code) NCM_PURE;

/*
 * The PCI functions behind the device node PATH ("/dev/infiniband/uverbs0", "/dev/vfio/12"),
 * looked up under ROOTFD as the kernel links them: a character or block device's
 * /sys/dev/{char,block}/MAJ:MIN points into the device tree, whose last PCI address is the
 * function; a VFIO group (/dev/vfio/N) holds the functions of /sys/kernel/iommu_groups/N; an
 * NVIDIA GPU node (major 195) is found by its minor in /proc/driver/nvidia/gpus/ADDR/
 * information. *RET is a malloc'd array of *RET_N malloc'd canonical addresses (free with
 * ncm_pci_strv_free). -ENOENT: the node does not exist; -ENODEV: it is no PCI function's (a
 * virtual device, a regular file); -ENOMEM.
 */
NCM_API int ncm_pci_resolve_node(int rootfd, const char *path, char ***ret, size_t *ret_n,
                                 ncm_error *err);
NCM_API void ncm_pci_strv_free(char **v, size_t n);
/* The same for a device number (BLOCK: a block device, else a character device): what a CDI
 * spec's deviceNodes give as major and minor. -ENODEV when no function is found. */
NCM_API int ncm_pci_resolve_devnum(int rootfd, bool block, unsigned major, unsigned minor,
                                   char ***ret, size_t *ret_n, ncm_error *err);

/*
 * Append the table as a JSON array, one device per line (topology JSON's "pci"):
 *   [{"address": "0000:3b:00.0", "class": "0x020000", "vendor": "0x15b3", "device": "0x1017",
 *     "numa": 1, "local_cpus": "10-19,30-39", "root": "pci0000:3a", "bridges": ["0000:3a:00.0"]}]
 * Unknown values are null.
 */
NCM_API void ncm_pci_format_json(const ncm_pci *p, ncm_buf *b);

/*
 * Read such an array (an already parsed json-c value). Only "address" is required; "numa"
 * defaults to -1, everything else to unknown. PATH prefixes field paths ("pci[2].numa");
 * unknown keys are refused. -EINVAL, -ENOMEM.
 */
NCM_API int ncm_pci_from_json_value(struct json_object *arr, const char *path, ncm_pci **ret,
                                    ncm_error *err);

/*
 * Append the devices by locality, for people: one heading per NUMA node and local CPU set
 * (ascending; "no NUMA node" last), under it each PCI root and its tree of bridges and devices
 * with their class and ids. Nothing for an empty table.
 */
NCM_API void ncm_pci_format_tree(const ncm_pci *p, ncm_buf *b);

/*
 * Attach P to T (which takes it; a previous table is freed), for a source building T before
 * it is shared. Returns 0.
 */
NCM_API int ncm_topo_set_pci(ncm_topo *t, ncm_pci *p);
/* The PCI table attached to T, or NULL when none was read. */
NCM_API const ncm_pci *ncm_topo_pci(const ncm_topo *t) NCM_PURE;

/*
 * The topology sources, by kind, for commands and scenarios that let the user pick one.
 * ARG is the option's value: a directory for FSROOT, a description for SYNTHETIC, a host file
 * for XML and JSON ("-" is stdin for JSON).
 */
typedef enum ncm_topo_source_kind {
        NCM_TOPO_SOURCE_FSROOT,
        NCM_TOPO_SOURCE_SYNTHETIC,
        NCM_TOPO_SOURCE_XML,
        NCM_TOPO_SOURCE_JSON,
        NCM_TOPO_SOURCE_N_KINDS
} ncm_topo_source_kind;

/* Load from a source. Errors name the source ("--fsroot /x: ..." is left to the caller). */
NCM_API int ncm_topo_load(ncm_topo_source_kind kind, const char *arg, ncm_topo **ret,
                          ncm_error *err);
/* The same with the chosen rules (a JSON table is taken as it is, whatever the rules). */
NCM_API int ncm_topo_load_rules(ncm_topo_source_kind kind, const char *arg, ncm_topo_rules rules,
                                ncm_topo **ret, ncm_error *err);
/*
 * Attach the PCI devices of the source to T, which it built (the second, optional step:
 * discovery is lazy): FSROOT reads ARG's /sys/bus/pci (ncm_pci_discover_sysfs); a JSON table
 * carries its own "pci" already (nothing is read); a synthetic machine has none and an lstopo
 * XML file's are not read (both: an empty table). 0 or the discovery's error.
 */
NCM_API int ncm_topo_load_pci(ncm_topo_source_kind kind, const char *arg, ncm_topo *t,
                              ncm_error *err);
/* The source's name: "fsroot", "synthetic", "xml", "topology" (the CLI option names). */
NCM_API const char *ncm_topo_source_name(ncm_topo_source_kind kind) NCM_PURE;
/* Kind for a name above (also "file" for JSON, the scenario key); -1 when unknown. */
NCM_API int ncm_topo_source_from_name(const char *name) NCM_PURE;

#ifdef __cplusplus
}
#endif
#endif
