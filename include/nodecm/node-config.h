/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's configuration: one model of the KubeletConfiguration fields nodecm uses, under
 * their KubeletConfiguration names, read from a kubelet config file, a scenario's node.kubelet,
 * or text a front end composes (nodecm's flags are mapped to these names in cli/, never here).
 */
#ifndef NODECM_NODE_CONFIG_H
#define NODECM_NODE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/cgroups.h>
#include <nodecm/common.h>
#include <nodecm/cpumanager.h>
#include <nodecm/error.h>
#include <nodecm/pod.h>

#ifdef __cplusplus
extern "C" {
#endif

struct json_object;

typedef struct ncm_node_config ncm_node_config;

/*
 * How a document is decoded, after the kubelet's codec (DecodeKubeletConfiguration): it tries
 * strict decoding first, which refuses an unknown field (case-sensitively: "CPUManagerPolicy"
 * is not cpuManagerPolicy) or a repeated key, and when those are the only errors it decodes
 * leniently (unknown fields ignored, the last value of a repeated YAML key, a repeated JSON
 * object merged as Go merges it), logs "Using lenient decoding as strict decoding failed" and
 * starts. LENIENT does what the kubelet does, each strict error becoming a warning naming the
 * field and what the kubelet does with it; STRICT refuses them with the kubelet's strict texts
 * ("strict decoding error: unknown field \"CPUManagerPolicy\""), for documents written for
 * nodecm where an unknown field is a mistake.
 */
typedef enum ncm_node_config_decoding {
        NCM_NODE_CONFIG_LENIENT = 0,
        NCM_NODE_CONFIG_STRICT = 1,
} ncm_node_config_decoding;

/* "lenient" or "strict" into *RET. 0, or -EINVAL. */
NCM_API int ncm_node_config_decoding_parse(const char *s, ncm_node_config_decoding *ret);

/*
 * Read the KubeletConfiguration fields the node uses from the JSON object O (as decoded from
 * JSON or YAML), so that a real kubelet config file's values can be pasted in (kubelet
 * defaults in parentheses):
 *
 *   CPU and topology managers: cpuManagerPolicy ("none"), cpuManagerPolicyOptions ({}),
 *   cpuManagerReconcilePeriod ("10s"), reservedSystemCPUs (""), topologyManagerPolicy
 *   ("none"), topologyManagerScope ("container"), topologyManagerPolicyOptions ({}),
 *   memoryManagerPolicy ("None"), reservedMemory ([]), memoryManagerPolicyOptions ({}),
 *   featureGates ({});
 *   reservations and node allocatable: kubeReserved / systemReserved ({}: cpu, memory,
 *   ephemeral-storage, pid), evictionHard (the kubelet's Linux defaults when absent; with
 *   mergeDefaultEvictionSettings the defaults fill in the signals not given),
 *   enforceNodeAllocatable (["pods"]), kubeReservedCgroup / systemReservedCgroup ("");
 *   cgroups: cgroupRoot ("" = "/"), cgroupDriver ("cgroupfs"), cgroupsPerQOS (true),
 *   cpuCFSQuota (true), cpuCFSQuotaPeriod ("100ms"), podPidsLimit (-1),
 *   memoryReservationPolicy ("None");
 *   admission and host checks: maxPods (110), podsPerCore (0), failCgroupV1 (true from
 *   1.35, false before), singleProcessOOMKill;
 *   nodecm's own: kubeletVersion (the release to reproduce, newest when absent),
 *   rootDirectory (the kubelet takes it as the --root-dir flag, not from the file; ""),
 *   enforcement (what a persistent node enforces with: "cgroupfs", "plan" or "none"),
 *   fitAdmission ("auto", "always", "never": ncm_node_config_fit_admission), cpusetMems
 *   ("inherit", "cpus": ncm_node_config_cpuset_mems), isolation's isolatedCPUs ("ignore",
 *   "exclude", "exclusive-only"; docs/isolation.md) and irqBalanceConfigFile ("": found;
 *   "none"; a path), and device locality's deviceLocalCPUs ("ignore"), draTopologyHints
 *   ("ignore"), cdiSpecDirs (CDI's) and devicePCI ({}), below.
 *
 * The document is decoded strictly (NCM_NODE_CONFIG_STRICT: a field the kubelet does not
 * have, for the chosen kubeletVersion, is refused; nested structs the kubelet checks are
 * checked too) -- ncm_node_config_from_json_ex() chooses. Other KubeletConfiguration fields
 * are accepted and not read; nodecm's own fields (kubeletVersion, rootDirectory, enforcement,
 * the nodecmd section, fitAdmission, isolatedCPUs, irqBalanceConfigFile, the device locality
 * fields) are never unknown. "kind" and "apiVersion", when given, must be KubeletConfiguration
 * and kubelet.config.k8s.io/v1beta1 (the only version the kubelet's scheme registers), with the
 * kubelet's text. Values are checked as the kubelet's decoder and its start-up do, with its
 * texts: string maps of strings, policy and scope names (`unknown policy: "foo"`, `unknown
 * scope: "foo"`), option names, values and maturity against the feature gates
 * (CPUManagerPolicyAlphaOptions, ...BetaOptions,
 * TopologyManagerPolicyAlphaOptions, ...BetaOptions; the GA gates CPUManagerPolicyOptions and
 * TopologyManagerPolicyOptions cannot be turned off), reservedSystemCPUs syntax, the reserved
 * resource lists (`cannot reserve "gpu" resource`, bad or negative quantities), eviction
 * signals and thresholds, enforceNodeAllocatable options and their cgroups, Go durations, the
 * CFS period against CustomCPUCFSQuotaPeriod, the memory manager's policy ("None", "Static"),
 * reservedMemory (validateReservedMemoryConfiguration's texts) and its options.
 * The reservation against node allocatable is checked in ncm_node_new().
 * Checks that need the machine (reserved CPUs on it, the static policy's reservation,
 * align-by-socket) happen in ncm_node_new().
 *
 * PATH ("node.kubelet") prefixes every error: `node.kubelet.topologyManagerPolicy: unknown
 * policy: "foo"`. It is kept for the errors of ncm_node_new(). -EINVAL, -ENOMEM.
 */
NCM_API int ncm_node_config_from_json(struct json_object *o, const char *path,
                                      ncm_node_config **ret, ncm_error *err);

/* The same with the decoding chosen (a scenario's node.kubelet, with simulate's setting). */
NCM_API int ncm_node_config_from_json_ex(struct json_object *o, const char *path,
                                         ncm_node_config_decoding decoding, ncm_node_config **ret,
                                         ncm_error *err);

/* The same from JSON or YAML text (NAME starts syntax errors; PATH as above, may be ""). */
NCM_API int ncm_node_config_parse(const char *text, size_t len, const char *name, const char *path,
                                  ncm_node_config **ret, ncm_error *err);

/*
 * Apply the fields of O over a copy of BASE (a shallow merge by field: each field present in O
 * replaces BASE's), decoded as BASE was, BASE's document warnings kept. Used for a restart with
 * a changed configuration, and for flags over a file. PATH as above.
 */
NCM_API int ncm_node_config_merge(const ncm_node_config *base, struct json_object *o,
                                  const char *path, ncm_node_config **ret, ncm_error *err);

/* The same with O given as JSON or YAML text (NAME starts its syntax errors). */
NCM_API int ncm_node_config_merge_text(const ncm_node_config *base, const char *text, size_t len,
                                       const char *name, const char *path, ncm_node_config **ret,
                                       ncm_error *err);

/*
 * Read a kubelet configuration file (YAML or JSON; "-" for standard input) as the kubelet's
 * --config reads it (pkg/kubelet/kubeletconfig/configfiles and util/codec), with DECODING
 * (ncm_node_config_load_file: lenient, what the kubelet does):
 *  - an empty file is refused: `kubelet config file "PATH" was empty`; a document of nothing
 *    (comments, "---") is the kubelet's `failed to decode: Object 'Kind' is missing in 'null'`;
 *  - kind and apiVersion are required: KubeletConfiguration, kubelet.config.k8s.io/v1beta1
 *    (`Object 'apiVersion' is missing in '...'`, `no kind "KubeletConfiguration" is registered
 *    for version "kubelet.config.k8s.io/v1" ...`);
 *  - YAML: the first document only (go-yaml's Unmarshal ignores the rest: warned about),
 *    anchors, aliases and merge keys resolved; a repeated key keeps its last value; JSON:
 *    repeated objects merge as Go's decoder merges them; repeats are strict errors;
 *  - the fields as ncm_node_config_from_json().
 * Errors start with PATH.
 */
NCM_API int ncm_node_config_load_file_ex(const char *path, ncm_node_config_decoding decoding,
                                         ncm_node_config **ret, ncm_error *err);
NCM_API int ncm_node_config_load_file(const char *path, ncm_node_config **ret, ncm_error *err);

/* How C was decoded. */
NCM_API ncm_node_config_decoding ncm_node_config_get_decoding(const ncm_node_config *c) NCM_PURE;

NCM_API ncm_node_config *ncm_node_config_free(ncm_node_config *c);
NCM_DEFINE_AUTOPTR(ncm_node_config, ncm_node_config_free)

/*
 * What reading the configuration would make the kubelet log or do without refusing it, one
 * line each in the order met: a field its lenient decoding ignored and what it does instead,
 * a duplicate key and the value that won, a YAML document after the first, reservedSystemCPUs
 * replacing the reserved cpu, a deprecated or GA feature gate set. Front ends print them
 * ("nodecm: warning: FILE: ..."), the library never does. Valid while C lives.
 */
NCM_API size_t ncm_node_config_n_warnings(const ncm_node_config *c) NCM_PURE;
NCM_API const char *ncm_node_config_warning(const ncm_node_config *c, size_t i) NCM_PURE;

/* The effective names: "none"/"static"; "none"/"best-effort"/...; "container"/"pod". */
NCM_API const char *ncm_node_config_cpu_policy(const ncm_node_config *c) NCM_PURE;
NCM_API const char *ncm_node_config_tm_policy(const ncm_node_config *c) NCM_PURE;
NCM_API const char *ncm_node_config_tm_scope(const ncm_node_config *c) NCM_PURE;

/* cgroupRoot in cgroupfs form ("/" for ""), cgroupDriver ("cgroupfs" or "systemd"). */
NCM_API const char *ncm_node_config_cgroup_root(const ncm_node_config *c) NCM_PURE;
NCM_API const char *ncm_node_config_cgroup_driver(const ncm_node_config *c) NCM_PURE;
NCM_API bool ncm_node_config_cgroups_per_qos(const ncm_node_config *c) NCM_PURE;

/* enforceNodeAllocatable as NCM_ENFORCE_* bits; the reserved cgroups ("" when not set). */
NCM_API unsigned ncm_node_config_enforce(const ncm_node_config *c) NCM_PURE;
NCM_API const char *ncm_node_config_kube_reserved_cgroup(const ncm_node_config *c) NCM_PURE;
NCM_API const char *ncm_node_config_system_reserved_cgroup(const ncm_node_config *c) NCM_PURE;

/* kubeReserved / systemReserved (sorted), NULL when the field is absent. */
NCM_API const ncm_resource_list *ncm_node_config_kube_reserved(const ncm_node_config *c) NCM_PURE;
NCM_API const ncm_resource_list *ncm_node_config_system_reserved(const ncm_node_config *c) NCM_PURE;
/* evictionHard after defaulting. */
NCM_API const ncm_eviction_thresholds *
ncm_node_config_eviction_hard(const ncm_node_config *c) NCM_PURE;

/* featureGates NAME as given, else DEF. */
NCM_API bool ncm_node_config_feature_gate(const ncm_node_config *c, const char *name,
                                          bool def) NCM_PURE;

/* cpuManagerReconcilePeriod in nanoseconds. */
NCM_API int64_t ncm_node_config_reconcile_period_ns(const ncm_node_config *c) NCM_PURE;

/* nodecm's rootDirectory, "" when not set. */
NCM_API const char *ncm_node_config_root_dir(const ncm_node_config *c) NCM_PURE;

/*
 * The kubelet's start-up checks of the configuration against the cgroups of the host it runs
 * on (ValidateKubeletConfiguration's validateKubeletOSConfiguration), for a host of layout L:
 * on cgroup v1 (hybrid included, as runc's IsCgroup2UnifiedMode says) failCgroupV1 refuses to
 * start -- it defaults to true from kubelet 1.35 (KEP-5573), false before -- with the
 * kubelet's text for the release ("... cgroup v1 support is in maintenance mode" up to 1.34,
 * "... is unsupported and will be removed in a future release" from 1.35), and
 * singleProcessOOMKill: false is refused there. 0, or -EINVAL naming the field. The node's
 * enforcers check it when they start; calculators (node-allocatable, cgroup) warn.
 */
NCM_API int ncm_node_config_check_host(const ncm_node_config *c, const ncm_cgroup_layout *l,
                                       ncm_error *err);

/* maxPods (110) and podsPerCore (0: no per-CPU limit): the node's pod capacity. */
NCM_API int64_t ncm_node_config_max_pods(const ncm_node_config *c) NCM_PURE;
NCM_API int64_t ncm_node_config_pods_per_core(const ncm_node_config *c) NCM_PURE;

/*
 * nodecm's fitAdmission: when an admission checks the kubelet's resource-fit predicates
 * (nodecm/node-fit.h). AUTO (the default, "auto"): where no kubelet stands in front (the
 * control API, `nodecm node`, the OCI hook, simulate), not behind one (the CRI proxy, which
 * admits with NCM_NODE_KUBELET_ADMITTED); ALWAYS ("always"), NEVER ("never").
 */
typedef enum ncm_node_fit_admission {
        NCM_NODE_FIT_AUTO = 0,
        NCM_NODE_FIT_ALWAYS = 1,
        NCM_NODE_FIT_NEVER = 2,
} ncm_node_fit_admission;
NCM_API ncm_node_fit_admission ncm_node_config_fit_admission(const ncm_node_config *c) NCM_PURE;

/*
 * nodecm's cpusetMems: the cpuset.mems of a container the memory manager did not pin (one it
 * pinned always gets the NUMA nodes of its blocks, as the kubelet's PreCreateContainer gives
 * it; ncm_node_container_mems). INHERIT (the default, "inherit"): left alone, so the
 * container has its parent's (the runtime's) memory nodes, as with the kubelet; CPUS
 * ("cpus"): the NUMA nodes of the container's CPUs that have memory, nodecm's OCI hook and
 * CRI proxy rule before the memory manager came.
 */
typedef enum ncm_node_mems_rule {
        NCM_NODE_MEMS_INHERIT = 0,
        NCM_NODE_MEMS_CPUS = 1,
} ncm_node_mems_rule;
NCM_API ncm_node_mems_rule ncm_node_config_cpuset_mems(const ncm_node_config *c) NCM_PURE;

/*
 * nodecm's device locality (docs/devices.md, "Device locality"; all beyond the kubelet, off by
 * default):
 *   deviceLocalCPUs: "ignore" (default, the kubelet's choice) or "prefer": exclusive CPUs near
 *     the container's devices first (ncm_cpu_policy_allocate_near);
 *   draTopologyHints: "ignore" (default: the kubelet gives DRA devices no hints) or "align": a
 *     container's CDI devices become a hint provider at admission;
 *   cdiSpecDirs: the CDI spec directories, lowest priority first (default /etc/cdi,
 *     /var/run/cdi), read under the node's machine root;
 *   devicePCI: {"RESOURCE=ID" or a CDI name: "0000:3b:00.0" or a list of them}, the PCI
 *     functions of devices nodecm cannot find by itself.
 */
NCM_API bool ncm_node_config_device_local_cpus(const ncm_node_config *c) NCM_PURE;
NCM_API bool ncm_node_config_dra_hints(const ncm_node_config *c) NCM_PURE;
/* The CDI spec directories (*N of them), or NULL for CDI's defaults. */
NCM_API const char *const *ncm_node_config_cdi_dirs(const ncm_node_config *c, size_t *n);
/* devicePCI's functions for DEVICE (canonical addresses, *N of them), or NULL. */
NCM_API const char *const *ncm_node_config_device_pci(const ncm_node_config *c, const char *device,
                                                      size_t *n);

/* nodecm's enforcement: the enforcer a persistent node uses, "cgroupfs" (default), "plan" or
 * "none". */
NCM_API const char *ncm_node_config_enforcement(const ncm_node_config *c) NCM_PURE;

/*
 * nodecm's isolatedCPUs (docs/isolation.md): what the node does with the machine's isolated
 * CPUs, "ignore" (the kubelet's behaviour, the default), "exclude" or "exclusive-only".
 */
NCM_API ncm_cpu_isolation ncm_node_config_isolated_cpus(const ncm_node_config *c) NCM_PURE;

/*
 * nodecm's irqBalanceConfigFile: the irqbalance environment file whose IRQBALANCE_BANNED_CPUS
 * the node keeps (a path on the machine); "" (the default): the first of
 * /etc/sysconfig/irqbalance and /etc/default/irqbalance that exists; "none": none.
 */
NCM_API const char *ncm_node_config_irqbalance_config(const ncm_node_config *c) NCM_PURE;

/*
 * The settings that shape pod and container cgroups (cpuCFSQuota, cpuCFSQuotaPeriod,
 * podPidsLimit, memoryReservationPolicy, the static CPU manager policy, and the feature gates
 * CustomCPUCFSQuotaPeriod, PodLevelResources and DisableCPUQuotaWithExclusiveCPUs).
 */
NCM_API void ncm_node_config_pod_options(const ncm_node_config *c, ncm_cgroup_pod_options *ret);

/*
 * A cgroup manager for the configuration (cgroupDriver's naming, cgroupRoot, the pod
 * settings) on layout L, acting through ROOTFD (borrowed; -1 to plan only).
 */
NCM_API int ncm_node_config_cgroup_manager(const ncm_node_config *c, const ncm_cgroup_layout *l,
                                           int rootfd, ncm_cgroup_manager *ret, ncm_error *err);

/*
 * Node allocatable for a machine of CAPACITY (pid included when known), from kubeReserved,
 * systemReserved, evictionHard and enforceNodeAllocatable (ncm_cgroup_node_allocatable and its
 * errors: a reservation above capacity is -NCM_E_UNSATISFIABLE with the kubelet's text).
 */
NCM_API int ncm_node_config_allocatable(const ncm_node_config *c, const ncm_resource_list *capacity,
                                        ncm_node_allocatable *ret, ncm_error *err);

/*
 * The kubepods cgroup's limits for node allocatable NA (its pods limits; with the none CPU
 * policy ALL_CPUS as its cpuset; on cgroup v2 without MemoryQoS memory.min and memory.low
 * reset to 0, as the kubelet does at start). *RET is initialised.
 */
NCM_API int ncm_node_config_kubepods(const ncm_node_config *c, const ncm_node_allocatable *na,
                                     const ncm_cgroup_layout *l, const ncm_cpuset *all_cpus,
                                     ncm_cgroup_resources *ret, ncm_error *err);

/*
 * The controllers beyond the kubelet's required ones that the configuration writes limits
 * for (NCM_CGROUP_CTRL_PIDS for podPidsLimit > 0 or an enforced pid reservation,
 * NCM_CGROUP_CTRL_HUGETLB for an enforced hugepages reservation).
 */
NCM_API unsigned ncm_node_config_extra_controllers(const ncm_node_config *c) NCM_PURE;

/*
 * What taking NEW in place of OLD asks of a running node (a daemon reloading its file on
 * SIGHUP). UNCHANGED: no field the node reads differs. LIVE: only fields that apply to what
 * comes next (cpuManagerReconcilePeriod; cpuCFSQuota, cpuCFSQuotaPeriod, podPidsLimit,
 * memoryReservationPolicy for new pods; evictionHard for the reported allocatable). RESTART:
 * a field the managers, the cgroup layout, node allocatable enforcement or the state files
 * are built from (the policies and their options, reservedSystemCPUs, kubeReserved and
 * systemReserved, enforceNodeAllocatable and the reserved cgroups, cgroupRoot, cgroupDriver,
 * cgroupsPerQOS, featureGates, kubeletVersion, rootDirectory): the kubelet reads them only at
 * start, and so does nodecm. *RET_FIELD (may be NULL) names the first such field. A field
 * counts as changed when its value in the file changed (writing out a default is a change).
 */
typedef enum ncm_node_config_change {
        NCM_NODE_CONFIG_UNCHANGED = 0,
        NCM_NODE_CONFIG_LIVE = 1,
        NCM_NODE_CONFIG_RESTART = 2,
} ncm_node_config_change;

NCM_API ncm_node_config_change ncm_node_config_compare(const ncm_node_config *old_cfg,
                                                       const ncm_node_config *new_cfg,
                                                       const char **ret_field);

/*
 * C in a canonical form (one line of JSON, a newline after it: apiVersion and kind, then each
 * field the node reads that C was given, in a fixed order, rootDirectory left out), which
 * ncm_node_config_parse() reads back into the same configuration: what a node's directory
 * records of the configuration it was started with (the directory itself is not part of it: a
 * node moved elsewhere is the same node). 0, -ENOMEM.
 */
NCM_API int ncm_node_config_format(const ncm_node_config *c, ncm_buf *b);

/*
 * Append to OUT what differs between A and B, field by field, in the canonical order (the
 * fields ncm_node_config_format() writes):
 * `reservedSystemCPUs: "0" -> "0-1"; kubeReserved: (unset) -> {"cpu":"1"}` (a field written out
 * with its default counts as a change, as for ncm_node_config_compare). Returns how many
 * fields differ, or -ENOMEM.
 */
NCM_API int ncm_node_config_diff(const ncm_node_config *a, const ncm_node_config *b, ncm_buf *out);

#ifdef __cplusplus
}
#endif
#endif
