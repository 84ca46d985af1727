/* SPDX-License-Identifier: Apache-2.0 */
/*
 * isolatedCPUs on the node (docs/isolation.md): the configuration's fields, which CPUs count
 * as isolated for this node, and the configurations refused because they would leave the shared
 * pool empty or on isolated CPUs only.
 *
 * Which CPUs. The machine's isolated CPUs (ncm_topo_isolated_cpus) include cgroup v2 isolated
 * partitions, and so the partitions the node made itself for cpu-load-balancing.crio.io
 * (node-knobs.c) once it restarts: those CPUs are isolated because a container of ours holds
 * them, not because the administrator set them aside, and they go back to the pools with the
 * container. So what a partition (or, on kernels whose sysfs file follows partitions, the sysfs
 * file) says is counted only for CPUs no load-balancing-disabled container of the node holds;
 * what the boot parameters say always counts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "node-internal.h"

int ncm__node_config_isolation(ncm_node_config *c, json_object *o, ncm_error *err)
{
        json_object *v = ncm__json_get(o, "isolatedCPUs");
        json_object *irq = ncm__json_get(o, "irqBalanceConfigFile");
        char path[256];
        int mode;

        c->isolated_cpus = NCM_CPU_ISOLATION_IGNORE;
        if (v) {
                ncm__node_field(c, "isolatedCPUs", path, sizeof(path));
                if (!json_object_is_type(v, json_type_string))
                        return ncm_error_set(err, EINVAL, "%s: expected string, got %s", path,
                                             ncm__json_type_name(v));
                mode = ncm_cpu_isolation_from_name(json_object_get_string(v));
                if (mode < 0)
                        return ncm_error_set(err, EINVAL,
                                             "%s: unknown value \"%s\" (ignore, exclude or "
                                             "exclusive-only)",
                                             path, json_object_get_string(v));
                c->isolated_cpus = (ncm_cpu_isolation)mode;
        }
        if (irq) {
                const char *s;
                ncm__node_field(c, "irqBalanceConfigFile", path, sizeof(path));
                if (!json_object_is_type(irq, json_type_string))
                        return ncm_error_set(err, EINVAL, "%s: expected string, got %s", path,
                                             ncm__json_type_name(irq));
                s = json_object_get_string(irq);
                if (*s && strcmp(s, "none") != 0 && s[0] != '/')
                        return ncm_error_set(err, EINVAL,
                                             "%s: \"%s\": expected an absolute path, \"none\" or "
                                             "\"\"",
                                             path, s);
        }
        free(c->irqbalance_config);
        c->irqbalance_config = strdup(irq ? json_object_get_string(irq) : "");
        return c->irqbalance_config ? 0 : ncm_error_set(err, ENOMEM, "out of memory");
}

ncm_cpu_isolation ncm_node_config_isolated_cpus(const ncm_node_config *c)
{
        return c->isolated_cpus;
}

const char *ncm_node_config_irqbalance_config(const ncm_node_config *c)
{
        return c->irqbalance_config ? c->irqbalance_config : "";
}

bool ncm__node_knob_on(const ncm_pod *pod, const char *annotation)
{
        const char *v = pod ? ncm_pod_get_annotation(pod, annotation) : NULL;
        return v && (strcmp(v, "disable") == 0 || strcmp(v, "true") == 0);
}

/* The spec of POD_UID: the registry's, or a record being restored. */
static const ncm_pod *spec_of(const ncm_node *n, const char *pod_uid)
{
        const ncm_pod *p = ncm_node_pod(n, pod_uid);

        for (size_t i = 0; !p && i < n->n_restoring; i++)
                if (strcmp(n->restoring[i].pod->uid, pod_uid) == 0)
                        p = n->restoring[i].pod;
        return p;
}

int ncm__node_isolation_setup(const ncm_node *n, const ncm_node_config *cfg, ncm_cpu_policy *cpu,
                              const ncm_cpu_state *st, ncm_cpuset **ret, ncm_error *err)
{
        const ncm_topo *t = n->topo;
        ncm_autoptr(ncm_cpuset) iso = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) dyn = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) own = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) rest = ncm_cpuset_new();
        ncm_cpu_isolation mode = cfg->isolated_cpus;
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        const char *pu, *cn;
        const ncm_cpuset *cs;
        char path[256];
        int r;

        *ret = NULL;
        if (!iso || !dyn || !own || !rest)
                return ncm_error_set(err, ENOMEM, "out of memory");
        if (mode == NCM_CPU_ISOLATION_IGNORE)
                return 0;
        while (ncm_cpu_state_next(st, &it, &pu, &cn, &cs))
                if (ncm__node_knob_on(spec_of(n, pu), NCM_POD_ANNOTATION_CPU_LOAD_BALANCING))
                        ncm_cpuset_or(own, own, cs);
        for (int k = 0; k < NCM_ISO_N_SOURCES; k++) {
                const ncm_cpuset *s = ncm_topo_isolation_source(t, (ncm_iso_source)k);
                if (!s)
                        continue;
                if (k == NCM_ISO_PARTITIONS || k == NCM_ISO_SYSFS_ISOLATED)
                        ncm_cpuset_or(dyn, dyn, s);
                else if (k == NCM_ISO_ISOLCPUS_DOMAIN || k == NCM_ISO_GIVEN_ISOLATED)
                        ncm_cpuset_or(iso, iso, s);
        }
        ncm_cpuset_andnot(dyn, dyn, own);
        ncm_cpuset_or(iso, iso, dyn);

        /* what would be left for the containers that are not exclusive */
        ncm__node_field(cfg, "isolatedCPUs", path, sizeof(path));
        ncm_cpuset_andnot(rest, n->all_cpus, iso);
        if (ncm_cpuset_is_empty(rest)) {
                ncm_autofree char *all = ncm_cpuset_format_list(n->all_cpus);
                return ncm_error_set(err, EINVAL,
                                     "%s: %s: every CPU of the machine (%s) is isolated: the "
                                     "shared pool would be empty",
                                     path, ncm_cpu_isolation_name(mode), all ? all : "");
        }
        if (ncm_cpu_policy_is_static(cpu)) {
                const ncm_cpuset *reserved = ncm_cpu_policy_reserved(cpu);
                ncm_cpuset_andnot(rest, reserved, iso);
                if (!ncm_cpuset_is_empty(reserved) && ncm_cpuset_is_empty(rest)) {
                        ncm_autofree char *res = ncm_cpuset_format_list(reserved);
                        ncm_autofree char *il = ncm_cpuset_format_list(iso);
                        return ncm_error_set(
                                        err, EINVAL,
                                        "%s: %s: the reserved CPUs (%s) are all isolated (%s): "
                                        "the shared pool would be left on isolated CPUs only, "
                                        "and empty once exclusive CPUs are handed out; reserve "
                                        "at least one CPU that is not isolated",
                                        path, ncm_cpu_isolation_name(mode), res ? res : "",
                                        il ? il : "");
                }
        }
        r = ncm_cpu_policy_set_isolation(cpu, mode, iso, err);
        if (r < 0)
                return r;
        *ret = NCM_TAKE_PTR(iso);
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * Status
 */

int ncm__node_format_isolation_text(const ncm_node *n, ncm_buf *b)
{
        const ncm_cpuset *iso = n->isolated ? n->isolated : ncm_topo_isolated_cpus(n->topo);
        const ncm_cpuset *nohz = ncm_topo_nohz_full_cpus(n->topo);
        ncm_cpu_isolation mode = n->cfg->isolated_cpus;

        if (!ncm_cpuset_is_empty(iso)) {
                ncm_buf_puts(b, "isolated CPUs: ");
                ncm_cpuset_format_list_buf(iso, b);
                ncm_buf_printf(b, " (isolatedCPUs %s: %s)\n", ncm_cpu_isolation_name(mode),
                               mode == NCM_CPU_ISOLATION_EXCLUDE ? "given to no container"
                               : mode == NCM_CPU_ISOLATION_EXCLUSIVE_ONLY
                                               ? "for exclusive containers only"
                                               : "used like any other, as the kubelet does");
        }
        if (!ncm_cpuset_is_empty(nohz)) {
                ncm_buf_puts(b, "nohz_full CPUs: ");
                ncm_cpuset_format_list_buf(nohz, b);
                ncm_buf_putc(b, '\n');
        }
        for (size_t i = 0; i < n->n_pods; i++) {
                const ncm_pod *pod = n->pods[i]->spec;
                for (size_t k = 0; pod && k < n->pods[i]->n; k++) {
                        const char *name = n->pods[i]->c[k].name;
                        unsigned knobs = ncm__node_container_knobs(n, pod->uid, name);
                        if (!knobs)
                                continue;
                        ncm_buf_printf(b, "CRI-O's knobs: %s/%s (",
                                       pod->name[0] ? pod->name : pod->uid, name);
                        ncm_cpuset_format_list_buf(ncm_cpu_state_get(n->cpu_state, pod->uid, name),
                                                   b);
                        ncm_buf_puts(b, "):");
                        for (int j = 0; j < NCM_KNOB_N; j++)
                                if (knobs & (1u << j))
                                        ncm_buf_printf(b, " %s", ncm_knob_name(1u << j));
                        ncm_buf_putc(b, '\n');
                }
        }
        return ncm_buf_failed(b) ? -ENOMEM : 0;
}

void ncm__node_format_knobs_json(const ncm_node *n, const char *pod_uid, const char *name,
                                 ncm_buf *b)
{
        unsigned knobs = ncm__node_container_knobs(n, pod_uid, name);

        if (!knobs)
                return;
        ncm_buf_puts(b, ", \"knobs\": [");
        for (int j = 0, k = 0; j < NCM_KNOB_N; j++)
                if (knobs & (1u << j))
                        ncm_buf_printf(b, "%s\"%s\"", k++ ? ", " : "", ncm_knob_name(1u << j));
        ncm_buf_putc(b, ']');
}

void ncm__node_format_isolation_json(const ncm_node *n, ncm_buf *b)
{
        if (!n->isolated)
                return;
        ncm_buf_printf(b, ", \"isolatedCPUs\": \"%s\", \"isolated\": \"",
                       ncm_cpu_isolation_name(n->cfg->isolated_cpus));
        ncm_cpuset_format_list_buf(n->isolated, b);
        ncm_buf_putc(b, '"');
}

/* ------------------------------------------------------------------------------------------
 * Explanations
 */

void ncm__node_explain_isolation(const ncm_node *n, ncm_node_event *e, const ncm_pod *pod, int req,
                                 const ncm_cpuset *reuse, ncm_cpuset *avail)
{
        const char *want = ncm_pod_get_annotation(pod, NCM_POD_ANNOTATION_ISOLATED_CPUS);
        ncm_cpu_isolation mode = ncm_cpu_policy_isolation(n->cpu, NULL);
        ncm_autofree char *before = NULL, *after = NULL, *iso = NULL;
        int tier;

        if (mode == NCM_CPU_ISOLATION_IGNORE || !n->isolated)
                return;
        before = ncm_cpuset_format_list(avail);
        tier = ncm_cpu_policy_isolation_restrict(n->cpu, pod, req, reuse, avail);
        after = ncm_cpuset_format_list(avail);
        iso = ncm_cpuset_format_list(n->isolated);
        if (!before || !after || !iso)
                return;
        if (mode == NCM_CPU_ISOLATION_EXCLUDE) {
                ncm__node_event_step(e,
                                     "isolatedCPUs exclude: the isolated CPUs %s go to no "
                                     "container: %s of %s",
                                     iso, after, before);
                return;
        }
        ncm__node_event_step(e, "isolatedCPUs exclusive-only (%s%s): %s %s of the free CPUs %s",
                             want ? NCM_POD_ANNOTATION_ISOLATED_CPUS ": " : "no ",
                             want ? want : NCM_POD_ANNOTATION_ISOLATED_CPUS,
                             tier == 2   ? "the isolated ones,"
                             : tier == 1 ? "those that are not isolated, which hold enough:"
                                         : "all of them, the preferred ones holding too few:",
                             after, before);
}

void ncm__node_explain_knobs(const ncm_node *n, ncm_node_event *e, const ncm_pod *pod,
                             bool exclusive)
{
        unsigned k = ncm__node_pod_knobs(pod);
        ncm_buf b = NCM_BUF_INIT;

        (void)n;
        if (!k)
                return;
        for (int i = 0; i < NCM_KNOB_N; i++)
                if (k & (1u << i))
                        ncm_buf_printf(&b, "%s%s", b.len ? ", " : "", ncm_knob_annotation(1u << i));
        if (!ncm_buf_failed(&b))
                ncm__node_event_step(e, "%s: disable: %s", b.data,
                                     exclusive ? "done with its cgroups (docs/isolation.md)"
                                               : "not for a container on the shared pool, "
                                                 "which it would harm: none");
        ncm_buf_done(&b);
}
