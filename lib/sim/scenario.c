/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scenarios (DESIGN.md "Simulation", docs/simulate.md): everything is read and checked before
 * anything runs, so that a bad scenario is one error line naming the field and no output. A
 * YAML scenario's steps stream (docs/simulate.md "How a long scenario is read"): they are read
 * one at a time, once to check them and once more to run them, and never kept as a whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/fs.h>
#include "base/json.h"
#include "sim-internal.h"
#include "pod/pod-internal.h"

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

static void step_done(ncm__step *s)
{
        free(s->path);
        ncm_pod_free(s->pod);
        free(s->pod_uid);
        free(s->container);
        ncm_node_config_free(s->cfg);
}

ncm_scenario *ncm_scenario_free(ncm_scenario *s)
{
        if (!s)
                return NULL;
        ncm_topo_free(s->topo);
        ncm_node_config_free(s->cfg);
        free(s->state_text);
        free(s->machine_root);
        free(s->devices_text);
        ncm_node_devices_done(&s->devices);
        ncm_resource_list_done(&s->capacity);
        free(s->text);
        free(s->name);
        if (s->steps_tree)
                json_object_put(s->steps_tree);
        free(s->description);
        free(s);
        return NULL;
}

size_t ncm_scenario_num_steps(const ncm_scenario *s)
{
        return s->n_steps;
}

const char *ncm_scenario_description(const ncm_scenario *s)
{
        return s->description;
}

const ncm_node_config *ncm_scenario_config(const ncm_scenario *s)
{
        return s->cfg;
}

const ncm_topo *ncm_scenario_topo(const ncm_scenario *s)
{
        return s->topo;
}

/* PATH resolved against BASE (absolute paths and a NULL base as they are). */
static char *resolve(const char *base, const char *path)
{
        char *r = NULL;
        if (!base || !base[0] || path[0] == '/')
                return strdup(path);
        if (asprintf(&r, "%s/%s", base, path) < 0)
                return NULL;
        return r;
}

/* Refuse keys of O other than ALLOWED (NULL-terminated). */
static int only_keys(json_object *o, const char *path, const char *const *allowed, ncm_error *err)
{
        json_object_object_foreach(o, key, val)
        {
                bool ok = false;
                (void)val;
                for (size_t i = 0; allowed[i] && !ok; i++)
                        ok = strcmp(key, allowed[i]) == 0;
                if (!ok)
                        return ncm_error_set(err, EINVAL, "%s%s%s: unknown field", path,
                                             path[0] ? "." : "", key);
        }
        return 0;
}

static int get_string(json_object *o, const char *key, const char *path, bool required,
                      const char **ret, ncm_error *err)
{
        json_object *v = ncm__json_get(o, key);
        if (!v) {
                *ret = NULL;
                if (required)
                        return ncm_error_set(err, EINVAL, "%s.%s: required", path, key);
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return ncm_error_set(err, EINVAL, "%s.%s: expected string, got %s", path, key,
                                     ncm__json_type_name(v));
        *ret = json_object_get_string(v);
        if (required && !(*ret)[0])
                return ncm_error_set(err, EINVAL, "%s.%s: must not be empty", path, key);
        return 0;
}

/* --- node.topology --- */

/*
 * hwloc builds whatever a synthetic description asks for: a PU index of 10^18 makes it allocate
 * a bitmap of that many bits, and "package:9999 core:9999" hundreds of millions of objects.
 * nodecm's CPU ids end at NCM_CPUSET_MAX_CPUS anyway, so refuse such descriptions before hwloc
 * sees them: level counts whose product exceeds the limit, and indexes at or above it.
 */
static int check_synthetic(const char *desc, const char *path, ncm_error *err)
{
        uint64_t total = 1;
        int depth = 0;

        for (const char *p = desc; *p;) {
                if (*p == '(' || *p == ')') {
                        depth += *p == '(' ? 1 : -1;
                        p++;
                        continue;
                }
                if (*p >= '0' && *p <= '9') {
                        uint64_t v = 0;
                        bool count = p > desc && p[-1] == ':' && depth == 0;
                        while (*p >= '0' && *p <= '9') {
                                if (v <= NCM_CPUSET_MAX_CPUS)
                                        v = v * 10 + (uint64_t)(*p - '0');
                                p++;
                        }
                        if (count) {
                                total *= v ? v : 1;
                                if (total > NCM_CPUSET_MAX_CPUS)
                                        return ncm_error_set(err, EINVAL, "%s: more than %d CPUs",
                                                             path, NCM_CPUSET_MAX_CPUS);
                        } else if (depth > 0 && v >= NCM_CPUSET_MAX_CPUS) {
                                return ncm_error_set(err, EINVAL,
                                                     "%s: index out of range (CPU ids end at %d)",
                                                     path, NCM_CPUSET_MAX_CPUS - 1);
                        }
                        continue;
                }
                p++;
        }
        return 0;
}

static int parse_topology_source(ncm_scenario *s, json_object *o, const char *base, unsigned flags,
                                 ncm_error *err);

/*
 * node.topology: a source, and optionally "memory", nodecm's memory override (the syntax of
 * --numa-memory: "[ID:]SIZE[,hugepages-PAGE=COUNT]...[/...]") applied to the machine it gives.
 */
static int parse_topology(ncm_scenario *s, json_object *o, const char *base, unsigned flags,
                          ncm_error *err)
{
        const char *spec = NULL;
        int r = parse_topology_source(s, o, base, flags, err);

        if (r < 0 || !o)
                return r;
        r = get_string(o, "memory", "node.topology", false, &spec, err);
        if (r < 0)
                return r;
        if (spec && (r = ncm_topo_apply_memory_spec(s->topo, spec, err)) < 0)
                return ncm_error_prefix(err, "node.topology.memory");
        return 0;
}

static int parse_topology_source(ncm_scenario *s, json_object *o, const char *base, unsigned flags,
                                 ncm_error *err)
{
        static const char *const keys[] = {"synthetic", "fsroot", "xml",   "file",
                                           "cpus",      "numa",   "rules", "pci",
                                           "machine",   "memory", NULL};
        static const char *const sources[] = {"synthetic", "fsroot", "xml", "file"};
        const char *path = "node.topology";
        const char *which = NULL, *rules_name = NULL;
        int r, n = 0, rules = NCM_TOPO_RULES_CADVISOR;

        if (!o) {
                if (flags & NCM_SCENARIO_NO_FILES)
                        return ncm_error_set(err, EINVAL, "%s: required", path);
                r = ncm_topo_load(NCM_TOPO_SOURCE_FSROOT, "/", &s->topo, err);
                return r < 0 ? ncm_error_prefix(err, "%s (this machine)", path) : r;
        }
        r = ncm__json_expect(o, json_type_object, path, err);
        if (r < 0)
                return r;
        r = only_keys(o, path, keys, err);
        if (r < 0)
                return r;
        /* the discovery rules (docs/topology.md): the kubelet's unless nodecm's are chosen */
        r = get_string(o, "rules", path, false, &rules_name, err);
        if (r < 0)
                return r;
        if (rules_name && (rules = ncm_topo_rules_from_name(rules_name)) < 0)
                return ncm_error_set(err, EINVAL,
                                     "%s.rules: unknown rules \"%s\" (cadvisor or nodecm)", path,
                                     rules_name);
        for (size_t i = 0; i < NCM_ELEMENTSOF(sources); i++) {
                if (ncm__json_get(o, sources[i])) {
                        which = sources[i];
                        n++;
                }
        }
        /* the machine whose PCI devices, /sys/dev and CDI specs locate devices (docs/devices.md):
         * named, else the fsroot */
        {
                const char *m = NULL;
                r = get_string(o, "machine", path, false, &m, err);
                if (r < 0)
                        return r;
                if (m && (flags & NCM_SCENARIO_NO_FILES))
                        return ncm_error_set(err, EINVAL,
                                             "%s.machine: files are not read in this mode", path);
                if (!m && ncm__json_get(o, "fsroot") && !(flags & NCM_SCENARIO_NO_FILES))
                        (void)get_string(o, "fsroot", path, false, &m, NULL);
                if (m && !(s->machine_root = resolve(base, m)))
                        return oom(err);
        }
        if (ncm__json_get(o, "cpus") || ncm__json_get(o, "numa")) {
                if (n > 0)
                        return ncm_error_set(err, EINVAL,
                                             "%s: give one of synthetic, fsroot, xml, file or "
                                             "inline cpus/numa",
                                             path);
                /* its keys were checked above: "pci" is read with the table, "machine" and
                 * "memory" by the callers */
                r = ncm_topo_from_json_value(o, path, true, &s->topo, err);
                if (r >= 0 && ncm_topo_num_cpus(s->topo) == 0)
                        /* a table may be empty; a node without CPUs is what the kubelet
                         * refuses to start on */
                        return ncm_error_set(err, EINVAL,
                                             "%s.cpus: could not detect number of cpus", path);
                return r;
        }
        if (n != 1)
                return ncm_error_set(err, EINVAL,
                                     "%s: give one of synthetic, fsroot, xml, file or inline "
                                     "cpus/numa",
                                     path);
        {
                const char *arg;
                ncm_autofree char *file = NULL;
                int kind = ncm_topo_source_from_name(which);
                char sub[64];

                snprintf(sub, sizeof(sub), "%s", path);
                r = get_string(o, which, sub, true, &arg, err);
                if (r < 0)
                        return r;
                if (kind == NCM_TOPO_SOURCE_SYNTHETIC) {
                        char sp[96];
                        snprintf(sp, sizeof(sp), "%s.%s", path, which);
                        r = check_synthetic(arg, sp, err);
                        if (r < 0)
                                return r;
                } else {
                        if (flags & NCM_SCENARIO_NO_FILES)
                                return ncm_error_set(err, EINVAL,
                                                     "%s.%s: files are not read in this mode", path,
                                                     which);
                        file = resolve(base, arg);
                        if (!file)
                                return oom(err);
                        arg = file;
                }
                r = ncm_topo_load_rules((ncm_topo_source_kind)kind, arg, (ncm_topo_rules)rules,
                                        &s->topo, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s.%s", path, which);
        }
        /* PCI devices given with any source replace the ones it would read */
        if (ncm__json_get(o, "pci")) {
                ncm_pci *pci = NULL;
                char pp[64];
                snprintf(pp, sizeof(pp), "%s.pci", path);
                r = ncm_pci_from_json_value(ncm__json_get(o, "pci"), pp, &pci, err);
                if (r < 0)
                        return r;
                ncm_topo_set_pci(s->topo, pci);
        }
        return 0;
}

/* --- node.state --- */

/* Numbers (a YAML `defaultCpuSet: 3`) become the strings the kubelet's file would hold. */
static int stringify_number(json_object *parent, const char *key, json_object *v)
{
        if (v &&
            (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))) {
                json_object *sv = json_object_new_string(json_object_get_string(v));
                if (!sv)
                        return -ENOMEM;
                return json_object_object_add(parent, key, sv) < 0 ? -ENOMEM : 0;
        }
        return 0;
}

static int parse_state(ncm_scenario *s, json_object *o, const char *base, unsigned flags,
                       ncm_error *err)
{
        const char *path = "node.state";
        json_object *file = ncm__json_get(o, "file");
        ncm_autojson copy = NULL;
        const char *text;
        int r;

        r = ncm__json_expect(o, json_type_object, path, err);
        if (r < 0)
                return r;
        if (file) {
                static const char *const keys[] = {"file", NULL};
                const char *arg;
                ncm_autofree char *p = NULL;
                r = only_keys(o, path, keys, err);
                if (r >= 0)
                        r = get_string(o, "file", path, true, &arg, err);
                if (r < 0)
                        return r;
                if (flags & NCM_SCENARIO_NO_FILES)
                        return ncm_error_set(err, EINVAL,
                                             "%s.file: files are not read in this mode", path);
                p = resolve(base, arg);
                if (!p)
                        return oom(err);
                r = ncm_fs_read_all(AT_FDCWD, p, NCM_CPU_CHECKPOINT_MAX_SIZE, &s->state_text,
                                    &s->state_len, err);
                return r < 0 ? ncm_error_prefix(err, "%s.file", path) : 0;
        }
        /* inline: the checkpoint's fields; the configured policy when policyName is absent */
        r = json_object_deep_copy(o, &copy, NULL);
        if (r < 0 || !copy)
                return oom(err);
        if (!ncm_node_config_cpu_policy(s->cfg) || !ncm__json_get_ci(copy, "policyName")) {
                json_object *pn = json_object_new_string(ncm_node_config_cpu_policy(s->cfg));
                if (!pn || json_object_object_add(copy, "policyName", pn) < 0)
                        return oom(err);
        }
        if (stringify_number(copy, "defaultCpuSet", ncm__json_get(copy, "defaultCpuSet")) < 0)
                return oom(err);
        {
                json_object *entries = ncm__json_get(copy, "entries");
                if (entries && json_object_is_type(entries, json_type_object)) {
                        json_object_object_foreach(entries, pod, ctrs)
                        {
                                if (!ctrs || !json_object_is_type(ctrs, json_type_object))
                                        continue;
                                json_object_object_foreach(ctrs, cname, cv)
                                {
                                        if (stringify_number(ctrs, cname, cv) < 0)
                                                return oom(err);
                                }
                                (void)pod;
                        }
                }
        }
        text = json_object_to_json_string_ext(copy, JSON_C_TO_STRING_PLAIN |
                                                                    JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text)
                return oom(err);
        s->state_text = strdup(text);
        if (!s->state_text)
                return oom(err);
        s->state_len = strlen(text);
        return 0;
}

/* --- node.devices --- */

/* Checked now by feeding it to a device manager of this machine, as the node will. */
static int parse_devices(ncm_scenario *s, json_object *o, ncm_error *err)
{
        size_t nn = 0;
        const int *ids = ncm_topo_numa_ids(s->topo, &nn);
        ncm_devmgr_config cfg = {.numa_nodes = ids, .n_numa_nodes = nn};
        ncm_autoptr(ncm_devmgr) m = NULL;
        const char *text;
        int r;

        r = ncm__json_expect(o, json_type_object, "node.devices", err);
        if (r < 0)
                return r;
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text || !(s->devices_text = strdup(text)))
                return oom(err);
        s->devices_len = strlen(text);
        r = ncm_devmgr_new(&cfg, &m, err);
        if (r < 0)
                return r;
        r = ncm_devmgr_apply_devices_json(m, s->devices_text, s->devices_len, "node.devices", err);
        if (r < 0)
                return r;
        return ncm_node_devices_parse(s->devices_text, s->devices_len, &s->devices, err);
}

/* node.capacity: the node's capacity ({"cpu": "16", "memory": "64Gi"}), as the kubelet reports
 * it, for the resource-fit admission (ncm_node_options.capacity). */
static int parse_capacity(ncm_scenario *s, json_object *o, ncm_error *err)
{
        int r = ncm__json_expect(o, json_type_object, "node.capacity", err);

        if (r < 0)
                return r;
        json_object_object_foreach(o, k, v)
        {
                const char *text;
                ncm_quantity q;
                char path[256];
                snprintf(path, sizeof(path), "node.capacity.%s", k);
                r = ncm__json_scalar_text(v, path, &text, err);
                if (r >= 0 && ncm_quantity_parse(text, &q, err) < 0)
                        r = ncm_error_prefix(err, "%s", path);
                if (r >= 0 && ncm_quantity_sign(&q) < 0)
                        r = ncm_error_set(err, EINVAL, "%s: %s: must not be negative", path, text);
                if (r < 0)
                        return r;
                if (ncm_cgroup_resource_list_set(&s->capacity, k, &q) < 0)
                        return oom(err);
        }
        s->has_capacity = true;
        return 0;
}

/* --- steps --- */

static int parse_step(const ncm_scenario *s, ncm__step *st, json_object *o, size_t idx,
                      ncm_error *err)
{
        static const char *const kinds[] = {"admit", "remove", "removePod", "restart", "resize"};
        char path[64];
        const char *kind = NULL;
        json_object *v = NULL;
        int r;

        snprintf(path, sizeof(path), "steps[%zu]", idx);
        st->path = strdup(path);
        if (!st->path)
                return oom(err);
        r = ncm__json_expect(o, json_type_object, path, err);
        if (r < 0)
                return r;
        if (json_object_object_length(o) != 1)
                return ncm_error_set(err, EINVAL,
                                     "%s: a step is an object with one key: admit, remove, "
                                     "removePod, restart or resize",
                                     path);
        {
                json_object_object_foreach(o, key, val)
                {
                        kind = key;
                        v = val;
                }
        }
        if (strcmp(kind, kinds[0]) == 0 || strcmp(kind, kinds[4]) == 0) {
                /* a resize is the whole pod again, the same UID, its new resources */
                bool rz = strcmp(kind, kinds[4]) == 0;
                char sub[96];
                st->kind = rz ? NCM__STEP_RESIZE : NCM__STEP_ADMIT;
                snprintf(sub, sizeof(sub), "%s.%s", path, rz ? "resize" : "admit");
                if (!v)
                        return ncm_error_set(err, EINVAL, "%s: expected a Pod object, got null",
                                             sub);
                r = ncm__pod_from_json(v, sub, &st->pod, err);
                if (r < 0)
                        return r;
                return ncm_node_devices_check_pod(&s->devices, st->pod, sub, err);
        }
        if (strcmp(kind, kinds[1]) == 0) {
                static const char *const keys[] = {"pod", "container", NULL};
                const char *pod, *ctr;
                char sub[96];
                st->kind = NCM__STEP_REMOVE;
                snprintf(sub, sizeof(sub), "%s.remove", path);
                r = ncm__json_expect(v, json_type_object, sub, err);
                if (r >= 0)
                        r = only_keys(v, sub, keys, err);
                if (r >= 0)
                        r = get_string(v, "pod", sub, true, &pod, err);
                if (r >= 0)
                        r = get_string(v, "container", sub, true, &ctr, err);
                if (r < 0)
                        return r;
                st->pod_uid = strdup(pod);
                st->container = strdup(ctr);
                return st->pod_uid && st->container ? 0 : oom(err);
        }
        if (strcmp(kind, kinds[2]) == 0) {
                char sub[96];
                const char *pod;
                st->kind = NCM__STEP_REMOVE_POD;
                snprintf(sub, sizeof(sub), "%s.removePod", path);
                if (v && json_object_is_type(v, json_type_object)) {
                        static const char *const keys[] = {"pod", NULL};
                        r = only_keys(v, sub, keys, err);
                        if (r >= 0)
                                r = get_string(v, "pod", sub, true, &pod, err);
                        if (r < 0)
                                return r;
                } else {
                        if (!v || !json_object_is_type(v, json_type_string))
                                return ncm_error_set(err, EINVAL,
                                                     "%s: expected a pod UID (string), got %s", sub,
                                                     v ? ncm__json_type_name(v) : "null");
                        pod = json_object_get_string(v);
                        if (!pod[0])
                                return ncm_error_set(err, EINVAL, "%s: must not be empty", sub);
                }
                st->pod_uid = strdup(pod);
                return st->pod_uid ? 0 : oom(err);
        }
        if (strcmp(kind, kinds[3]) == 0) {
                static const char *const keys[] = {"kubelet", NULL};
                char sub[96];
                st->kind = NCM__STEP_RESTART;
                snprintf(sub, sizeof(sub), "%s.restart", path);
                if (!v)
                        return 0;
                r = ncm__json_expect(v, json_type_object, sub, err);
                if (r >= 0)
                        r = only_keys(v, sub, keys, err);
                if (r < 0)
                        return r;
                if (ncm__json_get(v, "kubelet")) {
                        char kp[128];
                        snprintf(kp, sizeof(kp), "%s.kubelet", sub);
                        return ncm_node_config_merge(s->cfg, ncm__json_get(v, "kubelet"), kp,
                                                     &st->cfg, err);
                }
                return 0;
        }
        return ncm_error_set(err, EINVAL,
                             "%s: unknown step \"%s\" (expected admit, remove, removePod, "
                             "restart or resize)",
                             path, kind);
}

/* node.*: the topology, the kubelet's configuration, the starting state, capacity, devices. */
static int parse_node(ncm_scenario *s, json_object *node, const char *base, unsigned flags,
                      ncm_error *err)
{
        int r;

        r = parse_topology(s, ncm__json_get(node, "topology"), base, flags, err);
        if (r < 0)
                return r;
        r = ncm_node_config_from_json_ex(ncm__json_get(node, "kubelet"), "node.kubelet",
                                         (flags & NCM_SCENARIO_LENIENT_CONFIG)
                                                         ? NCM_NODE_CONFIG_LENIENT
                                                         : NCM_NODE_CONFIG_STRICT,
                                         &s->cfg, err);
        if (r < 0)
                return r;
        if (ncm__json_get(node, "state")) {
                r = parse_state(s, ncm__json_get(node, "state"), base, flags, err);
                if (r < 0)
                        return r;
        }
        if (ncm__json_get(node, "capacity")) {
                r = parse_capacity(s, ncm__json_get(node, "capacity"), err);
                if (r < 0)
                        return r;
        }
        if (ncm__json_get(node, "devices")) {
                r = parse_devices(s, ncm__json_get(node, "devices"), err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Take the node that parse_node() read into FROM. */
static void adopt_node(ncm_scenario *s, ncm_scenario *from)
{
        s->topo = NCM_TAKE_PTR(from->topo);
        s->cfg = NCM_TAKE_PTR(from->cfg);
        s->state_text = NCM_TAKE_PTR(from->state_text);
        s->state_len = from->state_len;
        s->machine_root = NCM_TAKE_PTR(from->machine_root);
        s->devices_text = NCM_TAKE_PTR(from->devices_text);
        s->devices_len = from->devices_len;
        s->devices = from->devices;
        memset(&from->devices, 0, sizeof(from->devices));
        s->has_capacity = from->has_capacity;
        s->capacity = from->capacity;
        memset(&from->capacity, 0, sizeof(from->capacity));
}

/*
 * The first pass checks the steps too when it can: when the steps begin after a node, that
 * node is read then, and each step is checked against it as it streams by. The first error is
 * kept and reported only if everything the whole-tree reader checks before the steps passes,
 * on the same node object (a later `node` key replaces it, and then the second pass checks).
 */
typedef struct early_check {
        ncm_scenario *spec; /* the node read when the steps began, or NULL */
        json_object *node;  /* the object it was read from (a reference) */
        const char *base;
        unsigned flags;
        int r; /* the first step's error, or 0 */
        ncm_error err;
} early_check;

static int check_step(ncm__step *st, size_t i, void *data, ncm_error *err)
{
        (void)st, (void)i, (void)data, (void)err;
        return 0;
}

int ncm__scenario_each_step(const ncm_scenario *s, ncm__step_fn fn, void *data, ncm_error *err);

static int parse_doc(ncm_scenario *s, json_object *doc, const char *base, unsigned flags,
                     early_check *early, ncm_error *err)
{
        static const char *const top_keys[] = {"node", "steps", "description", NULL};
        static const char *const node_keys[] = {"topology", "kubelet",  "state",
                                                "devices",  "capacity", NULL};
        json_object *node, *steps, *desc;
        int r;

        if (!doc || !json_object_is_type(doc, json_type_object))
                return ncm_error_set(err, EINVAL, "expected a scenario object, got %s",
                                     doc ? ncm__json_type_name(doc) : "null");
        r = only_keys(doc, "", top_keys, err);
        if (r < 0)
                return r;
        desc = ncm__json_get(doc, "description");
        if (desc && !json_object_is_type(desc, json_type_string))
                return ncm_error_set(err, EINVAL, "description: expected string, got %s",
                                     ncm__json_type_name(desc));
        if (desc && !(s->description = strdup(json_object_get_string(desc))))
                return ncm_error_set(err, ENOMEM, "out of memory");
        node = ncm__json_get(doc, "node");
        if (!node)
                return ncm_error_set(err, EINVAL, "node: required");
        r = ncm__json_expect(node, json_type_object, "node", err);
        if (r >= 0)
                r = only_keys(node, "node", node_keys, err);
        if (r < 0)
                return r;
        if (early && early->spec && early->node == node) {
                /* read already, when the steps began (below); the same object, so the same
                 * result */
                adopt_node(s, early->spec);
        } else {
                r = parse_node(s, node, base, flags, err);
                if (r < 0)
                        return r;
        }
        steps = ncm__json_get(doc, "steps");
        if (!steps)
                return 0;
        r = ncm__json_expect(steps, json_type_array, "steps", err);
        if (r < 0)
                return r;
        s->n_steps = json_object_array_length(steps);
        if (!s->text)
                s->steps_tree = json_object_get(steps);
        if (s->text && early && early->spec && early->node == node) {
                if (early->r < 0 && err)
                        *err = early->err;
                return early->r;
        }
        /* every step is checked now, each one dropped once it is, so that a bad scenario
         * stops before anything runs */
        return ncm__scenario_each_step(s, check_step, NULL, err);
}

typedef struct each_ctx {
        const ncm_scenario *s;
        ncm__step_fn fn;
        void *data;
} each_ctx;

static int each_item(json_object *item, size_t i, void *data, ncm_error *err)
{
        const each_ctx *c = data;
        ncm__step st = {0};
        int r = parse_step(c->s, &st, item, i, err);

        if (r >= 0)
                r = c->fn(&st, i, c->data, err);
        step_done(&st);
        return r;
}

int ncm__scenario_each_step(const ncm_scenario *s, ncm__step_fn fn, void *data, ncm_error *err)
{
        each_ctx c = {.s = s, .fn = fn, .data = data};
        int r = 0;

        if (s->text) {
                json_object *doc = NULL;
                bool streamed = false;
                r = ncm__yaml_parse_stream(s->text, s->len, s->name, "steps", NULL, each_item, &c,
                                           &doc, &streamed, err);
                if (doc)
                        json_object_put(doc);
                return r < 0 ? r : 0;
        }
        for (size_t i = 0; s->steps_tree && i < s->n_steps && r == 0; i++)
                r = each_item(json_object_array_get_idx(s->steps_tree, i), i, &c, err);
        return r < 0 ? r : 0;
}

/* The steps begin: read the node given before them, if any (errors are left for later). */
static int early_start(json_object *root, void *data)
{
        early_check *e = data;
        json_object *node = ncm__json_get(root, "node");
        ncm_scenario *spec;

        if (!node || !json_object_is_type(node, json_type_object))
                return 0;
        spec = calloc(1, sizeof(*spec));
        if (!spec)
                return 0;
        if (parse_node(spec, node, e->base, e->flags, NULL) < 0) {
                ncm_scenario_free(spec);
                return 0;
        }
        e->spec = spec;
        e->node = json_object_get(node);
        return 0;
}

static int early_item(json_object *item, size_t i, void *data, ncm_error *err)
{
        early_check *e = data;
        ncm__step st = {0};

        (void)err;
        if (e->spec && e->r == 0)
                e->r = parse_step(e->spec, &st, item, i, &e->err);
        step_done(&st);
        return 0;
}

/* Whether TEXT is JSON (json-c reads it) or YAML (libyaml events, which can stream). */
static bool is_json(const char *text, size_t len)
{
        size_t i = 0;
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
                i++;
        return i < len && (text[i] == '{' || text[i] == '[');
}

/* ncm_scenario_parse() of TEXT, which it takes (freed here unless kept to stream from). */
static int scenario_parse(char *text, size_t len, const char *name, const char *base_dir,
                          unsigned flags, ncm_scenario **ret, ncm_error *err)
{
        ncm_autofree char *owned = text;
        ncm_autoptr(ncm_scenario) s = calloc(1, sizeof(*s));
        ncm_autojson doc = NULL;
        early_check early = {.base = base_dir, .flags = flags, .err = NCM_ERROR_INIT};
        int r;

        if (!s)
                return oom(err);
        if (!name)
                name = "<scenario>";
        if (is_json(text, len)) {
                r = ncm__json_or_yaml_parse(text, len, name, &doc, err);
        } else {
                /* the first pass reads the node and counts the steps, dropping each */
                bool streamed = false;
                r = ncm__yaml_parse_stream(text, len, name, "steps", early_start, early_item,
                                           &early, &doc, &streamed, err);
                if (r >= 0 && streamed) {
                        s->name = strdup(name);
                        if (!s->name)
                                return oom(err);
                        s->text = NCM_TAKE_PTR(owned);
                        s->len = len;
                }
        }
        if (r >= 0)
                r = parse_doc(s, doc, base_dir, flags, &early, err);
        ncm_scenario_free(early.spec);
        if (early.node)
                json_object_put(early.node);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(s);
        return 0;
}

int ncm_scenario_parse(const char *text, size_t len, const char *name, const char *base_dir,
                       unsigned flags, ncm_scenario **ret, ncm_error *err)
{
        /* a copy: the steps may be read from it again, after the caller's text is gone */
        char *copy = malloc(len + 1);

        if (!copy)
                return oom(err);
        memcpy(copy, text, len);
        copy[len] = '\0';
        return scenario_parse(copy, len, name, base_dir, flags, ret, err);
}

int ncm_scenario_load_file(const char *path, unsigned flags, ncm_scenario **ret, ncm_error *err)
{
        ncm_autofree char *text = NULL;
        ncm_autofree char *copy = NULL;
        const char *base = NULL;
        bool in = strcmp(path, "-") == 0;
        size_t len;
        int r;

        r = ncm_fs_read_all(AT_FDCWD, in ? "/dev/stdin" : path, NCM_JSON_MAX_FILE, &text, &len,
                            err);
        if (r < 0)
                return r;
        if (!in) {
                copy = strdup(path);
                if (!copy)
                        return oom(err);
                base = dirname(copy);
        }
        return scenario_parse(NCM_TAKE_PTR(text), len, in ? "<stdin>" : path, base, flags, ret,
                              err);
}
