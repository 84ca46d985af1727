/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to lib/sim: a parsed scenario, shared by its reader and the simulator. */
#ifndef NCM_SIM_INTERNAL_H
#define NCM_SIM_INTERNAL_H

#include <nodecm/node.h>
#include <nodecm/pod.h>
#include <nodecm/sim.h>
#include <nodecm/topology.h>

typedef enum ncm__step_kind {
        NCM__STEP_ADMIT,
        NCM__STEP_REMOVE,
        NCM__STEP_REMOVE_POD,
        NCM__STEP_RESTART,
        NCM__STEP_RESIZE,
} ncm__step_kind;

typedef struct ncm__step {
        ncm__step_kind kind;
        char *path;           /* "steps[3]" */
        ncm_pod *pod;         /* admit, resize */
        char *pod_uid;        /* remove, removePod */
        char *container;      /* remove */
        ncm_node_config *cfg; /* restart with a changed configuration; NULL: the same */
} ncm__step;

struct ncm_scenario {
        ncm_topo *topo;
        ncm_node_config *cfg; /* node.kubelet */
        char *state_text;     /* node.state as a cpu_manager_state, or NULL */
        size_t state_len;
        char *devices_text; /* node.devices as JSON, or NULL */
        size_t devices_len;
        ncm_node_devices devices; /* the same, as a table */
        bool has_capacity;        /* node.capacity given */
        ncm_resource_list capacity;
        char *machine_root; /* node.topology's machine (its fsroot by default), or NULL */
        ncm__step *steps;
        size_t n_steps;
        char *description; /* the scenario's description, or NULL */
};

#endif
