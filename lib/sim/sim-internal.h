/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to lib/sim: a parsed scenario, shared by its reader and the simulator. */
#ifndef NCM_SIM_INTERNAL_H
#define NCM_SIM_INTERNAL_H

#include <nodecm/node.h>
#include <nodecm/pod.h>
#include <nodecm/sim.h>
#include <nodecm/topology.h>
#include <json-c/json.h>

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
        /* The steps are never kept parsed: each pass reads them again, one at a time, from the
         * scenario's YAML text (streamed), or from the JSON tree of the document's steps. */
        char *text; /* the YAML scenario, when its steps stream; else NULL */
        size_t len;
        char *name;              /* its name in errors */
        json_object *steps_tree; /* the steps, when they do not stream, or NULL */
        size_t n_steps;
        char *description; /* the scenario's description, or NULL */
};

/* Called with each step, parsed and checked; freed after (what FN takes it sets to NULL: a
 * restart's configuration must outlive the node). A positive return stops early. */
typedef int (*ncm__step_fn)(ncm__step *st, size_t index, void *data, ncm_error *err);

/* Read S's steps once more, in order, handing each to FN. 0, or FN's or the reader's error. */
int ncm__scenario_each_step(const ncm_scenario *s, ncm__step_fn fn, void *data, ncm_error *err);

#endif
