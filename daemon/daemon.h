/* SPDX-License-Identifier: Apache-2.0 */
/* nodecmd's core, as main() and the core's own files see it (services use nodecmd.h). */
#ifndef NODECMD_DAEMON_H
#define NODECMD_DAEMON_H

#include <nodecm/topology.h>
#include "nodecmd.h"

/* What main() parsed from the command line. */
typedef struct nodecmd_options {
        const char *config;   /* --config FILE: a KubeletConfiguration with a nodecmd section */
        const char *root_dir; /* --root-dir DIR, over the configuration's rootDirectory */
        const char *log_level;
        const char *cgroup_mount;     /* --cgroup-mount DIR (tests); NULL: /sys/fs/cgroup */
        const char *runtime_endpoint; /* --runtime-endpoint: a CRI runtime */
        const char *cri_listen;       /* --cri-listen: the CRI proxy's socket */
        ncm_topo_source_kind topo_kind;
        const char *topo_arg; /* NULL: this machine */
        ncm_topo_rules topo_rules;
        const char *topo_memory; /* --numa-memory: the NUMA nodes' memory (synthetic machines) */
} nodecmd_options;

/*
 * Start: the configuration, the topology, the node from its root directory (locked, restored
 * and validated as the kubelet does, node allocatable enforced), then every service. *RET is
 * set even on failure (free it).
 */
int nodecmd_new(const nodecmd_options *opts, nodecmd **ret, ncm_error *err);
/* Serve until stopped; the exit status. */
int nodecmd_run(nodecmd *d);
nodecmd *nodecmd_free(nodecmd *d);

int nodecmd_level_from_name(const char *name);
void nodecmd_apply_log_level(nodecmd *d);
int nodecmd_load_section(const char *path, json_object **ret, ncm_error *err);
int nodecmd_check_section(json_object *section, const char *path, ncm_error *err);
/* The section's string KEY, or NULL. */
const char *nodecmd_section_string(const nodecmd *d, const char *key);

#endif
