/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The simulator (docs/simulate.md): a scenario is a node (topology, kubelet configuration,
 * starting state, devices) and steps (admit, remove, removePod, restart) replayed on an
 * ncm_node without enforcement, with JSON-line or human output. A client of nodecm/node.h like
 * any other front end.
 */
#ifndef NODECM_SIM_H
#define NODECM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>
#include <nodecm/node.h>
#include <nodecm/topology.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncm_scenario ncm_scenario;

enum {
        /* Refuse topology sources and state files read from disk (fsroot, xml, file): for
         * fuzzing and for scenarios from untrusted places. */
        NCM_SCENARIO_NO_FILES = 1 << 0,
        /* Decode node.kubelet as the kubelet decodes its file (NCM_NODE_CONFIG_LENIENT: an
         * unknown field or a repeated key is a warning) instead of strictly (the default: a
         * scenario is written for nodecm, where an unknown field is a mistake). */
        NCM_SCENARIO_LENIENT_CONFIG = 1 << 1,
};

/*
 * Read a scenario (DESIGN.md "Simulation") from TEXT: node.topology (synthetic, fsroot, xml,
 * file, or inline cpus/numa), node.kubelet (ncm_node_config_from_json), node.state (a starting
 * cpu_manager_state, inline or {"file": PATH}), and steps (admit, remove, removePod, restart).
 * Everything is checked here, before anything runs: each error is one line naming the field
 * (`steps[2].admit.spec.containers[0].resources.limits.cpu: invalid quantity "2x": ...`).
 * Relative paths are resolved against BASE_DIR (the scenario file's directory; NULL: the
 * current directory). NAME starts syntax errors. -EINVAL, -ENOMEM, or the I/O error of a file
 * the scenario names.
 */
NCM_API int ncm_scenario_parse(const char *text, size_t len, const char *name, const char *base_dir,
                               unsigned flags, ncm_scenario **ret, ncm_error *err);

/* Read PATH ("-": standard input) with ncm_scenario_parse(), paths relative to its directory. */
NCM_API int ncm_scenario_load_file(const char *path, unsigned flags, ncm_scenario **ret,
                                   ncm_error *err);

NCM_API ncm_scenario *ncm_scenario_free(ncm_scenario *s);
NCM_DEFINE_AUTOPTR(ncm_scenario, ncm_scenario_free)

NCM_API size_t ncm_scenario_num_steps(const ncm_scenario *s) NCM_PURE;
/* The node's configuration (node.kubelet), for its warnings (ncm_node_config_warning). */
NCM_API const ncm_node_config *ncm_scenario_config(const ncm_scenario *s) NCM_PURE;
NCM_API const ncm_topo *ncm_scenario_topo(const ncm_scenario *s) NCM_PURE;
/* The scenario's description, or NULL when it has none. */
NCM_API const char *ncm_scenario_description(const ncm_scenario *s) NCM_PURE;

/* One step as it ran, for ncm_simulate_options.step_fn. */
typedef struct ncm_simulate_step {
        size_t index;       /* the scenario's step number; the end: the number of steps run */
        const char *op;     /* "admit", "remove", "removePod", "restart", "resize"; "end" after
                               the last */
        const char *text;   /* what the step did, one line for people (no newline); "" at the end */
        const ncm_pod *pod; /* admit, resize: the pod */
        const ncm_node_admission *admission; /* admit, resize: the decision */
} ncm_simulate_step;

/*
 * Called after each step with the node as the step left it, and once more at the end ("end"),
 * before the node goes. With one, admissions record their explanation (NCM_NODE_EXPLAIN) for
 * it; the output shows them only with `explain`. A negative return stops the simulation with
 * that error.
 */
typedef int (*ncm_simulate_step_fn)(const ncm_simulate_step *st, const ncm_node *n, void *data,
                                    ncm_error *err);

typedef struct ncm_simulate_options {
        bool json;             /* one JSON line per step, then the state line */
        bool explain;          /* hints, merges and allocation steps of each admission */
        const char *state_dir; /* write the checkpoint files there (ncm_node_options) */
        size_t max_steps;      /* run at most this many steps (0: all) */
        bool reference_merge;  /* the topology manager's reference merge */
        ncm_kubelet_version kubelet_version; /* over node.kubelet.kubeletVersion; {0, 0}: its */
        ncm_simulate_step_fn step_fn;        /* NULL: none */
        void *step_data;
} ncm_simulate_options;

typedef struct ncm_simulate_summary {
        size_t steps;          /* steps run */
        size_t admitted;       /* admissions admitted */
        size_t rejected;       /* admissions refused */
        size_t resized;        /* resize steps that resized */
        size_t resize_refused; /* resize steps refused (Infeasible, Deferred, Invalid) */
} ncm_simulate_summary;

/*
 * Replay S and append its output to OUT: with O->json one JSON line per step and the final
 * state line (DESIGN.md); otherwise one line per step and the final CPU map. Refused
 * admissions are results, not failures. Returns 0 (SUMMARY, may be NULL, filled), or an error
 * that stopped the simulation: a configuration the node refuses (-EINVAL, naming the field), a
 * starting state or a restart that fails the kubelet's restore or validation
 * (-NCM_E_INVALID_STATE / -NCM_E_CHECKSUM, naming node.state or the step), an I/O error. OUT
 * then holds the output of the steps before, which callers normally discard.
 */
NCM_API int ncm_simulate(const ncm_scenario *s, const ncm_simulate_options *o, ncm_buf *out,
                         ncm_simulate_summary *summary, ncm_error *err);

#ifdef __cplusplus
}
#endif
#endif
