/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: the `nodecm merge` document (DESIGN.md) read into a policy and providers' hints.
 * The public entry is ncm_tm_request_load(); the unit tests and the fuzz target build requests
 * from JSON objects directly, since they keep kubelet's test tables in the same format.
 */
#ifndef NCM_TOPOLOGYMANAGER_REQUEST_H
#define NCM_TOPOLOGYMANAGER_REQUEST_H

#include <json-c/json.h>
#include <nodecm/buf.h>
#include <nodecm/topologymanager.h>

struct ncm_tm_request {
        char *policy;
        ncm_tm_option *options; /* keys and values malloc'd */
        size_t n_options;
        int *numa;
        size_t n_numa;
        uint64_t *distances; /* n_numa x n_numa in numa order, or NULL */
        ncm_tm_hints *providers;
        size_t n_providers;
        ncm_tm_policy *built; /* set by ncm_tm_request_load() */
};

/*
 * Read a merge document:
 *   {"policy": "...", "options": {"k": "v"}, "numa": [ids],
 *    "distances": {"<id>": [d to numa[0], d to numa[1], ...]},
 *    "providers": [null | {"<resource>": null | [{"numa": null | [ids], "preferred": b}]}]}
 * policy and numa are required. Errors (-EINVAL) name the field: `numa[2]: bit number must be
 * in range 0-63`, `providers[0].cpu[1].preferred: expected boolean, got string`, unknown keys.
 */
int ncm__tm_request_from_json(json_object *o, ncm_tm_request **ret, ncm_error *err);

/*
 * The request's policy: options parsed (not for "none", as kubelet) with GATES, then
 * ncm_tm_policy_new(). Errors are prefixed with the field: "options: ...", "policy: ...",
 * "numa: ...", "distances: ...".
 */
int ncm__tm_request_policy(const ncm_tm_request *r, ncm_tm_gates gates, ncm_tm_policy **ret,
                           ncm_error *err);

#endif
