/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The topology sources behind --fsroot, --synthetic, --xml and --topology (and a scenario's
 * "topology" object), as one ops table so commands pick a source by kind, not by a chain of
 * ifs.
 */
#include <errno.h>
#include <string.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>

typedef struct source_ops {
        const char *name;
        int (*load)(const char *arg, ncm_topo **ret, ncm_error *err);
} source_ops;

static int load_fsroot(const char *dir, ncm_topo **ret, ncm_error *err)
{
        ncm_autoclose int fd = ncm_fs_open_root(dir, err);
        if (fd < 0)
                return fd;
        return ncm_topo_discover_sysfs(fd, ret, err);
}

static const source_ops sources[NCM_TOPO_SOURCE_N_KINDS] = {
                [NCM_TOPO_SOURCE_FSROOT] = {"fsroot", load_fsroot},
                [NCM_TOPO_SOURCE_SYNTHETIC] = {"synthetic", ncm_topo_from_synthetic},
                [NCM_TOPO_SOURCE_XML] = {"xml", ncm_topo_from_xml_file},
                [NCM_TOPO_SOURCE_JSON] = {"topology", ncm_topo_load_json_file},
};

int ncm_topo_load(ncm_topo_source_kind kind, const char *arg, ncm_topo **ret, ncm_error *err)
{
        if ((unsigned)kind >= NCM_TOPO_SOURCE_N_KINDS)
                return ncm_error_set(err, EINVAL, "unknown topology source %d", (int)kind);
        if (!arg)
                return ncm_error_set(err, EINVAL, "topology source '%s' needs a value",
                                     sources[kind].name);
        return sources[kind].load(arg, ret, err);
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
