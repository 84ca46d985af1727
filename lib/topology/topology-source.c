/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The topology sources behind --fsroot, --synthetic, --xml and --topology (and a scenario's
 * "topology" object), as one ops table so commands pick a source by kind, not by a chain of
 * ifs; and the rule sets (--topology-rules) the machine sources read with.
 */
#include <errno.h>
#include <string.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "topology/topology-internal.h"

typedef struct source_ops {
        const char *name;
        int (*load)(const char *arg, ncm_topo_rules rules, ncm_topo **ret, ncm_error *err);
        /* the PCI devices (ncm_topo_load_pci); NULL: the source has none to read */
        int (*load_pci)(const char *arg, ncm_pci **ret, ncm_error *err);
} source_ops;

static int load_fsroot(const char *dir, ncm_topo_rules rules, ncm_topo **ret, ncm_error *err)
{
        ncm_autoclose int fd = ncm_fs_open_root(dir, err);
        if (fd < 0)
                return fd;
        return ncm_topo_discover_sysfs_rules(fd, rules, ret, err);
}

static int load_fsroot_pci(const char *dir, ncm_pci **ret, ncm_error *err)
{
        ncm_autoclose int fd = ncm_fs_open_root(dir, err);
        if (fd < 0)
                return fd;
        return ncm_pci_discover_sysfs(fd, ret, err);
}

static int load_json(const char *path, ncm_topo_rules rules, ncm_topo **ret, ncm_error *err)
{
        (void)rules; /* a table is the kubelet's view already */
        return ncm_topo_load_json_file(path, ret, err);
}

static const source_ops sources[NCM_TOPO_SOURCE_N_KINDS] = {
                [NCM_TOPO_SOURCE_FSROOT] = {"fsroot", load_fsroot, load_fsroot_pci},
                [NCM_TOPO_SOURCE_SYNTHETIC] = {"synthetic", ncm__topo_from_synthetic_rules, NULL},
                [NCM_TOPO_SOURCE_XML] = {"xml", ncm__topo_from_xml_file_rules, NULL},
                [NCM_TOPO_SOURCE_JSON] = {"topology", load_json, NULL},
};

static const char *const rule_names[NCM_TOPO_RULES_N] = {
                [NCM_TOPO_RULES_CADVISOR] = "cadvisor",
                [NCM_TOPO_RULES_NODECM] = "nodecm",
};

const char *ncm_topo_rules_name(ncm_topo_rules rules)
{
        return (unsigned)rules < NCM_TOPO_RULES_N ? rule_names[rules] : NULL;
}

int ncm_topo_rules_from_name(const char *name)
{
        for (int k = 0; name && k < NCM_TOPO_RULES_N; k++)
                if (strcmp(name, rule_names[k]) == 0)
                        return k;
        return -1;
}

int ncm_topo_load_rules(ncm_topo_source_kind kind, const char *arg, ncm_topo_rules rules,
                        ncm_topo **ret, ncm_error *err)
{
        if ((unsigned)kind >= NCM_TOPO_SOURCE_N_KINDS)
                return ncm_error_set(err, EINVAL, "unknown topology source %d", (int)kind);
        if ((unsigned)rules >= NCM_TOPO_RULES_N)
                return ncm_error_set(err, EINVAL, "unknown topology rules %d", (int)rules);
        if (!arg)
                return ncm_error_set(err, EINVAL, "topology source '%s' needs a value",
                                     sources[kind].name);
        return sources[kind].load(arg, rules, ret, err);
}

int ncm_topo_load(ncm_topo_source_kind kind, const char *arg, ncm_topo **ret, ncm_error *err)
{
        return ncm_topo_load_rules(kind, arg, NCM_TOPO_RULES_CADVISOR, ret, err);
}

int ncm_topo_load_pci(ncm_topo_source_kind kind, const char *arg, ncm_topo *t, ncm_error *err)
{
        ncm_pci *p = NULL;
        int r;

        if ((unsigned)kind >= NCM_TOPO_SOURCE_N_KINDS)
                return ncm_error_set(err, EINVAL, "unknown topology source %d", (int)kind);
        if (!sources[kind].load_pci || ncm_topo_pci(t))
                return 0; /* none to read, or the table came with the topology */
        if (!arg)
                return ncm_error_set(err, EINVAL, "topology source '%s' needs a value",
                                     sources[kind].name);
        r = sources[kind].load_pci(arg, &p, err);
        if (r < 0)
                return r;
        return ncm_topo_set_pci(t, p);
}

const char *ncm_topo_source_name(ncm_topo_source_kind kind)
{
        return (unsigned)kind < NCM_TOPO_SOURCE_N_KINDS ? sources[kind].name : NULL;
}

int ncm_topo_source_from_name(const char *name)
{
        for (int k = 0; k < NCM_TOPO_SOURCE_N_KINDS; k++)
                if (strcmp(name, sources[k].name) == 0)
                        return k;
        if (strcmp(name, "file") == 0)
                return NCM_TOPO_SOURCE_JSON;
        return -1;
}
