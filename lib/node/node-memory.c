/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The memory manager in the node: its configuration (memoryManagerPolicy, reservedMemory,
 * memoryManagerPolicyOptions), its start (NewManager + Start: the reservation checked against
 * Node Allocatable, memory_manager_state restored and validated), the hint provider the
 * topology manager calls third (the kubelet's order: devices, CPUs, memory), and what an
 * admission or a removal changes, saved before and put back on a refusal.
 *
 * memory_manager_state lives beside cpu_manager_state in the node's directory, written in the
 * layout of the configured kubelet generation whenever a decision changed it (never for a pod
 * the memory manager does not pin).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/fs.h>
#include "base/json.h"
#include "memorymanager/mm-internal.h"
#include "node-internal.h"

struct node_mem {
        ncm_mem_policy *policy;
        ncm_mem_state *state;
        ncm_mem_checkpoint_version version;
        bool dirty;   /* changed since the file was written */
        bool drifted; /* the start re-baselined a drifted machine (KEP-6232) */
};

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* ------------------------------------------------------------------------------------------
 * Configuration
 */

#define DRIFT_OPTION "memory-drift-tolerance"
#define DRIFT_GATE "MemoryManagerDriftTolerance"

static int parse_reserved_memory(ncm_node_config *c, json_object *o, ncm_error *err)
{
        json_object *v = ncm__json_get(o, "reservedMemory");
        char path[256], p[300];

        ncm__node_field(c, "reservedMemory", path, sizeof(path));
        if (!v || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_array))
                return ncm_error_set(err, EINVAL, "%s: expected a list, got %s", path,
                                     ncm__json_type_name(v));
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                json_object *e = json_object_array_get_idx(v, i), *numa, *limits;
                int64_t id;
                int r;
                snprintf(p, sizeof(p), "%s[%zu]", path, i);
                r = ncm__json_expect(e, json_type_object, p, err);
                if (r < 0)
                        return r;
                numa = ncm__json_get(e, "numaNode");
                limits = ncm__json_get(e, "limits");
                snprintf(p, sizeof(p), "%s[%zu].numaNode", path, i);
                if (!numa)
                        id = 0; /* int32 field, zero when absent */
                else if ((r = ncm__json_int(numa, p, INT32_MIN, INT32_MAX, &id, err)) < 0)
                        return r;
                snprintf(p, sizeof(p), "%s[%zu].limits", path, i);
                if (!limits || json_object_is_type(limits, json_type_null))
                        continue;
                r = ncm__json_expect(limits, json_type_object, p, err);
                if (r < 0)
                        return r;
                json_object_object_foreach(limits, name, q)
                {
                        const char *text;
                        ncm_quantity qty;
                        char pq[400];
                        snprintf(pq, sizeof(pq), "%s.%s", p, name);
                        r = ncm__json_scalar_text(q, pq, &text, err);
                        if (r < 0)
                                return r;
                        if (ncm_quantity_parse(text, &qty, err) < 0)
                                return ncm_error_prefix(err, "%s", pq);
                        if (ncm_mem_reservations_add(&c->reserved_memory, (int)id, name, &qty) < 0)
                                return oom(err);
                }
        }
        return 0;
}

/*
 * KEP-6232's memory-drift-tolerance: "off" (the exact comparison), "auto" (the kernel image
 * span plus 64 MiB, read at start) or a quantity. Alpha: the gate must be on.
 */
static int parse_policy_options(ncm_node_config *c, json_object *o, bool gate_on, ncm_error *err)
{
        json_object *v = ncm__json_get(o, "memoryManagerPolicyOptions");
        char path[256];

        ncm__node_field(c, "memoryManagerPolicyOptions", path, sizeof(path));
        if (!v || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, json_type_object))
                return ncm_error_set(err, EINVAL, "%s: expected a map, got %s", path,
                                     ncm__json_type_name(v));
        json_object_object_foreach(v, name, val)
        {
                const char *text;
                int r;
                if (strcmp(name, DRIFT_OPTION) != 0)
                        return ncm_error_set(err, EINVAL,
                                             "%s: unknown Memory Manager Policy option: \"%s\"",
                                             path, name);
                if (!gate_on)
                        return ncm_error_set(err, EINVAL,
                                             "%s: memory manager policy option \"%s\" requires "
                                             "the %s feature gate",
                                             path, name, DRIFT_GATE);
                r = ncm__json_scalar_text(val, path, &text, err);
                if (r < 0)
                        return r;
                if (strcmp(text, "auto") != 0 && strcmp(text, "off") != 0) {
                        ncm_quantity q;
                        if (ncm_quantity_parse(text, &q, NULL) < 0 || ncm_quantity_sign(&q) < 0)
                                return ncm_error_set(err, EINVAL,
                                                     "%s: %s: expected auto, off or a "
                                                     "non-negative quantity, got \"%s\"",
                                                     path, name, text);
                }
                free(c->mem_drift);
                c->mem_drift = strdup(text);
                if (!c->mem_drift)
                        return oom(err);
        }
        return 0;
}

/* nodecm's cpusetMems: "inherit" (the default) or "cpus". */
static int parse_mems_rule(ncm_node_config *c, json_object *o, ncm_error *err)
{
        json_object *v = ncm__json_get(o, "cpusetMems");
        const char *text;
        char path[256];

        c->mems_rule = NCM_NODE_MEMS_INHERIT;
        if (!v || json_object_is_type(v, json_type_null))
                return 0;
        ncm__node_field(c, "cpusetMems", path, sizeof(path));
        if (!json_object_is_type(v, json_type_string))
                return ncm_error_set(err, EINVAL, "%s: expected string, got %s", path,
                                     ncm__json_type_name(v));
        text = json_object_get_string(v);
        if (strcmp(text, "cpus") == 0)
                c->mems_rule = NCM_NODE_MEMS_CPUS;
        else if (strcmp(text, "inherit") != 0)
                return ncm_error_set(err, EINVAL, "%s: unknown cpusetMems \"%s\" (inherit or cpus)",
                                     path, text);
        return 0;
}

int ncm__node_mem_config(ncm_node_config *c, json_object *o, bool drift_gate, ncm_error *err)
{
        char path[256];
        int r;

        free(c->mem_policy);
        c->mem_policy = NULL;
        ncm_mem_reservations_done(&c->reserved_memory);
        r = ncm__json_expect(o, json_type_object, "kubelet configuration", NULL);
        if (r < 0)
                return 0;
        {
                json_object *v = ncm__json_get(o, "memoryManagerPolicy");
                const char *text = "None";
                ncm__node_field(c, "memoryManagerPolicy", path, sizeof(path));
                if (v && !json_object_is_type(v, json_type_null)) {
                        r = ncm__json_expect(v, json_type_string, path, err);
                        if (r < 0)
                                return r;
                        text = json_object_get_string(v);
                }
                if (!*text)
                        text = "None";
                if (strcmp(text, "None") != 0 && strcmp(text, "Static") != 0)
                        return ncm_error_set(err, EINVAL, "%s: unknown policy: \"%s\"", path, text);
                c->mem_policy = strdup(text);
                if (!c->mem_policy)
                        return oom(err);
        }
        r = parse_reserved_memory(c, o, err);
        if (r < 0)
                return r;
        r = ncm_mem_reservations_validate(&c->reserved_memory, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s",
                                        ncm__node_field(c, "reservedMemory", path, sizeof(path)));
        r = parse_policy_options(c, o, drift_gate, err);
        if (r < 0)
                return r;
        if (c->mem_drift && strcmp(c->mem_policy, "Static") != 0)
                return ncm_error_set(err, EINVAL, "%s: the option \"%s\" needs the Static policy",
                                     ncm__node_field(c, "memoryManagerPolicyOptions", path,
                                                     sizeof(path)),
                                     DRIFT_OPTION);
        return parse_mems_rule(c, o, err);
}

void ncm__node_mem_config_done(ncm_node_config *c)
{
        free(c->mem_policy);
        free(c->mem_drift);
        ncm_mem_reservations_done(&c->reserved_memory);
}

/* ------------------------------------------------------------------------------------------
 * Start
 */

/* The drift bound the configuration asks for (0: exact). "auto" reads the host's /proc/iomem. */
static uint64_t drift_bound(const ncm_node_config *c)
{
        ncm_quantity q;
        if (!c->mem_drift || strcmp(c->mem_drift, "off") == 0)
                return 0;
        if (strcmp(c->mem_drift, "auto") == 0) {
                ncm_autofree char *text = NULL;
                size_t len = 0;
                uint64_t span = 0;
                if (ncm_fs_read_all(AT_FDCWD, "/proc/iomem", 1 << 20, &text, &len, NULL) < 0 ||
                    ncm_mem_kernel_image_span(text, len, &span) < 0)
                        return 0; /* unknown: the exact comparison (KEP-6232) */
                return span + NCM_MEM_DRIFT_GRACE;
        }
        if (ncm_quantity_parse(c->mem_drift, &q, NULL) < 0)
                return 0;
        return (uint64_t)ncm_quantity_value(&q);
}

/*
 * GetNodeAllocatableReservation's memory: 0 (decimal SI), plus system-reserved, plus
 * kube-reserved, plus the hard eviction threshold of memory.available (a percentage of the
 * machine's memory); the sum takes the format of its first non-zero term, as Quantity.Add does.
 * Only memory: kube- and system-reserved take no hugepages.
 */
static int allocatable_reservation(const ncm_node *n, const ncm_node_config *cfg,
                                   ncm_resource_list *ret, ncm_resource *item)
{
        const ncm_resource_list *lists[2] = {ncm_node_config_system_reserved(cfg),
                                             ncm_node_config_kube_reserved(cfg)};
        const ncm_eviction_thresholds *hard = ncm_node_config_eviction_hard(cfg);
        ncm_quantity sum = {0};
        size_t nn;
        const int *ids = ncm_topo_numa_ids(n->topo, &nn);
        uint64_t total = 0;

        for (size_t i = 0; i < nn; i++)
                total += ncm_topo_numa_memory(n->topo, ids[i], NULL, NULL);
        for (size_t k = 0; k < 2; k++) {
                const ncm_quantity *q =
                                lists[k] ? ncm_resource_list_get(lists[k], NCM_RESOURCE_MEMORY)
                                         : NULL;
                if (q && ncm_quantity_add(&sum, q) < 0)
                        return -ERANGE;
        }
        for (size_t i = 0; hard && i < hard->n; i++) {
                const ncm_eviction_threshold *t = &hard->items[i];
                ncm_quantity q;
                if (strcmp(t->signal, "memory.available") != 0)
                        continue;
                q = t->is_percentage ? ncm_quantity_from_int(
                                                       (int64_t)((double)total * t->percentage),
                                                       NCM_QUANTITY_BINARY_SI)
                                     : t->quantity;
                if (ncm_quantity_add(&sum, &q) < 0)
                        return -ERANGE;
        }
        *ret = (ncm_resource_list){0};
        if (ncm_quantity_is_zero(&sum))
                return 0;
        item->name = (char *)NCM_RESOURCE_MEMORY;
        item->quantity = sum;
        ret->items = item;
        ret->n = 1;
        return 0;
}

char *ncm__node_mem_checkpoint_path(const ncm_node *n)
{
        char *p = NULL;
        if (asprintf(&p, "%s/%s", n->dir, NCM_MEM_CHECKPOINT_NAME) < 0)
                return NULL;
        return p;
}

static int write_file(ncm_node *n, node_mem *m, ncm_error *err)
{
        ncm_autofree char *path = NULL;
        ncm_buf b = NCM_BUF_INIT;
        int r;

        if (!n->dir) {
                m->dirty = false;
                return 0;
        }
        path = ncm__node_mem_checkpoint_path(n);
        if (!path)
                return oom(err);
        ncm_mem_checkpoint_format(m->state, m->version, &b);
        r = ncm_buf_failed(&b) ? oom(err) : ncm__node_write(n, path, b.data, b.len, err);
        ncm_buf_done(&b);
        if (r >= 0)
                m->dirty = false;
        return r;
}

static int restore_error(ncm_error *err, const char *file)
{
        int code = err && err->code ? err->code : NCM_E_INVALID_STATE;
        const char *msg, *colon;
        char tmp[NCM_ERROR_MSG_MAX];

        if (code != NCM_E_CHECKSUM)
                code = NCM_E_INVALID_STATE;
        if (!err)
                return -code;
        /* the checkpoint reader named the file; the kubelet's text names it once, at the end */
        msg = err->msg;
        colon = strstr(msg, ": ");
        if (colon && strncmp(msg, NCM_MEM_CHECKPOINT_NAME, strlen(NCM_MEM_CHECKPOINT_NAME)) == 0)
                msg = colon + 2;
        snprintf(tmp, sizeof(tmp), "%s", msg);
        ncm_error_set(err, code,
                      "could not restore state from checkpoint: %s, please drain this node and "
                      "delete the memory manager checkpoint file \"%s\" before restarting Kubelet",
                      tmp, file);
        return -code;
}

int ncm__node_mem_new(ncm_node *n, const ncm_node_config *cfg, int src, const char *text,
                      size_t len, node_mem **ret, ncm_error *err)
{
        ncm_autofree char *file = NULL;
        ncm_autofree char *data = NULL;
        ncm_resource_list na = {0};
        ncm_resource na_item;
        node_mem *m = calloc(1, sizeof(*m));
        ncm_mem_policy_config pc = {0};
        ncm_kubelet_version v = ncm_node_kubelet_version(n);
        bool pod_level = ncm_node_config_feature_gate(cfg, "PodLevelResourceManagers", false);
        char path[256];
        int r;

        if (!m)
                return oom(err);
        m->version = ncm_mem_checkpoint_version_of(v);
        pc.policy = cfg->mem_policy ? cfg->mem_policy : "None";
        pc.reserved = &cfg->reserved_memory;
        pc.max_drift = drift_bound(cfg);
        pc.pod_level_resource_managers = pod_level;
        if (strcmp(pc.policy, "Static") == 0) {
                r = allocatable_reservation(n, cfg, &na, &na_item);
                if (r < 0) {
                        r = ncm_error_set(err, ERANGE, "node allocatable memory out of range");
                        goto fail;
                }
                pc.node_allocatable = &na;
        }
        r = ncm_mem_policy_new(n->topo, &pc, &m->policy, err);
        if (r < 0) {
                if (r != -ENOMEM)
                        ncm_error_prefix(err, "%s",
                                         ncm__node_field(cfg, "memoryManagerPolicy", path,
                                                         sizeof(path)));
                goto fail;
        }
        if (n->dir && !(file = ncm__node_mem_checkpoint_path(n))) {
                r = oom(err);
                goto fail;
        }
        if (src == NODE_MEM_FROM_FILE && file) {
                r = ncm_fs_read_all(AT_FDCWD, file, 64 << 20, &data, &len, err);
                if (r == -ENOENT) {
                        ncm_error_clear(err);
                        src = NODE_MEM_FRESH; /* NewCheckpointState: no file, a new one */
                } else if (r < 0) {
                        goto fail;
                }
                text = data;
        }
        if (src == NODE_MEM_FRESH) {
                m->state = ncm_mem_state_new(ncm_mem_policy_name(m->policy));
                if (!m->state) {
                        r = oom(err);
                        goto fail;
                }
        } else {
                r = ncm_mem_checkpoint_parse(text, len, NCM_MEM_CHECKPOINT_NAME, v,
                                             ncm_mem_policy_name(m->policy), pod_level, &m->state,
                                             NULL, err);
                if (r == -ENOMEM)
                        goto fail;
                if (r < 0) {
                        r = restore_error(err, file ? file : NCM_MEM_CHECKPOINT_NAME);
                        goto fail;
                }
        }
        r = ncm_mem_policy_start(m->policy, m->state, &m->drifted, err);
        if (r < 0) {
                if (r != -ENOMEM)
                        ncm_error_prefix(err, "start memory manager error");
                goto fail;
        }
        /* the kubelet stores its state at start (a fresh one, and validateState's default) */
        m->dirty = true;
        if (src == NODE_MEM_FRESH || m->drifted || src == NODE_MEM_TEXT) {
                r = write_file(n, m, err);
                if (r < 0)
                        goto fail;
        }
        *ret = m;
        return 0;
fail:
        ncm__node_mem_free(m);
        return r;
}

node_mem *ncm__node_mem_free(node_mem *m)
{
        if (!m)
                return NULL;
        ncm_mem_policy_free(m->policy);
        ncm_mem_state_free(m->state);
        free(m);
        return NULL;
}

void ncm__node_mem_text(const node_mem *m, ncm_buf *b)
{
        ncm_mem_checkpoint_format(m->state, m->version, b);
}

bool ncm__node_mem_drifted(const node_mem *m)
{
        return m->drifted;
}

/* ------------------------------------------------------------------------------------------
 * Transactions
 */

struct node_mem_saved {
        ncm_mem_state_mark *mark; /* the machine state and the pod's entry */
};

int ncm__node_mem_save(const node_mem *m, const char *uid, node_mem_saved **ret)
{
        node_mem_saved *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        /* only a pinning policy changes anything */
        if (ncm_mem_policy_is_static(m->policy) &&
            ncm_mem_state_mark_pod(m->state, uid, &s->mark) < 0) {
                free(s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

node_mem_saved *ncm__node_mem_saved_free(node_mem_saved *s)
{
        if (s) {
                ncm_mem_state_mark_free(s->mark);
                free(s);
        }
        return NULL;
}

int ncm__node_mem_restore(ncm_node *n, node_mem_saved *s, ncm_error *err)
{
        node_mem *m = n->mem;

        if (!s || !s->mark || ncm_mem_state_mark_unchanged(m->state, s->mark))
                return 0;
        ncm_mem_state_mark_restore(m->state, s->mark);
        m->dirty = true;
        return write_file(n, m, err);
}

int ncm__node_mem_flush(ncm_node *n, ncm_error *err)
{
        return n->mem && n->mem->dirty ? write_file(n, n->mem, err) : 0;
}

int ncm__node_mem_release(ncm_node *n, const char *uid, const char *name, ncm_error *err)
{
        node_mem *m = n->mem;
        int r = ncm_mem_policy_remove(m->policy, m->state, uid, name);
        if (r < 0)
                return oom(err);
        if (r > 0)
                m->dirty = true;
        return r;
}

int ncm__node_mem_release_pod(ncm_node *n, const ncm_pod *spec, const char *uid, ncm_error *err)
{
        node_mem *m = n->mem;
        const ncm_mem_pod *p = NULL;
        int any = 0;

        /* the pod's containers in spec order, then what the state holds that the spec lacks */
        for (size_t i = 0; spec && i < spec->n_init_containers + spec->n_containers; i++) {
                const ncm_container *c =
                                i < spec->n_init_containers
                                                ? &spec->init_containers[i]
                                                : &spec->containers[i - spec->n_init_containers];
                int r = ncm__node_mem_release(n, uid, c->name, err);
                if (r < 0)
                        return r;
                any |= r;
        }
        for (;;) {
                p = NULL;
                for (size_t i = 0; i < m->state->npods; i++)
                        if (strcmp(m->state->pods[i].uid, uid) == 0)
                                p = &m->state->pods[i];
                if (!p || p->n == 0)
                        break;
                {
                        ncm_autofree char *name = strdup(p->c[0].name);
                        int r;
                        if (!name)
                                return oom(err);
                        r = ncm__node_mem_release(n, uid, name, err);
                        if (r < 0)
                                return r;
                        if (r == 0)
                                (void)ncm_mem_state_delete(m->state, uid, name);
                        any = 1;
                }
        }
        if (ncm_mem_state_delete_pod(m->state, uid) > 0)
                any = 1;
        ncm_mem_policy_forget_pod(m->policy, uid);
        if (any)
                m->dirty = true;
        return any;
}

int ncm__node_mem_result(const ncm_node *n, const char *uid, const char *name,
                         ncm_node_container_result *cr)
{
        const ncm_mem_container *c = ncm_mem_state_container(n->mem->state, uid, name);
        if (!c || c->n == 0)
                return 0;
        if (ncm__mem_blocks_copy(c->blocks, c->n, &cr->memory) < 0)
                return -ENOMEM;
        cr->n_memory = c->n;
        return 0;
}

/* ------------------------------------------------------------------------------------------
 * The hint provider
 */

static int to_tm_hints(ncm_mem_hints *h, ncm_tm_hints *ret, ncm_error *err)
{
        int r = 0;
        if (h->nil)
                return 0;
        for (size_t i = 0; i < h->n && r >= 0; i++) {
                if (h->t[i].desc) {
                        r = ncm_tm_hints_add_desc(ret, h->t[i].type, h->t[i].desc, err);
                        h->t[i].desc = NULL; /* taken over */
                } else {
                        r = ncm_tm_hints_add(ret, h->t[i].type, h->t[i].list.hints, h->t[i].list.n,
                                             false, NULL, err);
                }
        }
        return r;
}

static int mem_hints(ncm_node *n, const ncm_pod *pod, const ncm_container *c, ncm_tm_hints *ret,
                     ncm_error *err)
{
        ncm_mem_hints h;
        int r = ncm_mem_policy_hints(n->mem->policy, n->mem->state, pod, c, 0, &h, err);
        if (r < 0)
                return r;
        r = to_tm_hints(&h, ret, err);
        ncm_mem_hints_done(&h);
        return r;
}

/*
 * A resize's hints: pinned memory stays on its NUMA nodes (ncm_mem_policy_resize), so each
 * memory type the container (or, CONTAINER NULL, the pod) holds has one preferred hint, the
 * nodes of its blocks; nothing pinned, no preference.
 */
static int mem_resize_hints(ncm_node *n, const ncm_pod *pod, const ncm_container *container,
                            ncm_tm_hints *ret, ncm_error *err)
{
        const ncm_mem_state *s = n->mem->state;

        for (size_t i = 0; i < pod->n_init_containers + pod->n_containers; i++) {
                const ncm_container *c =
                                i < pod->n_init_containers
                                                ? &pod->init_containers[i]
                                                : &pod->containers[i - pod->n_init_containers];
                const ncm_mem_container *mc = ncm_mem_state_container(s, pod->uid, c->name);
                if ((container && c != container) || !mc)
                        continue;
                for (size_t k = 0; k < mc->n; k++) {
                        const ncm_mem_block *b = &mc->blocks[k];
                        ncm_hint h = {.preferred = true};
                        ncm_hint_list *l = NULL;
                        for (size_t x = 0; x < b->nnuma; x++)
                                if (b->numa[x] >= 0 && b->numa[x] < 64)
                                        h.numa |= UINT64_C(1) << b->numa[x];
                        if (ncm_tm_hints_get(ret, b->type)) {
                                /* the pod's: the nodes of every container's block of the type */
                                for (size_t q = 0; q < ret->n; q++)
                                        if (strcmp(ret->res[q].resource, b->type) == 0 &&
                                            ret->res[q].list.n)
                                                ret->res[q].list.hints[0].numa |= h.numa;
                                continue;
                        }
                        if (ncm_tm_hints_add(ret, b->type, &h, 1, false, &l, err) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

static int mem_container_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret,
                               ncm_error *err)
{
        if (call->op == NCM_TM_OP_RESIZE)
                return mem_resize_hints(data, call->pod, call->container, ret, err);
        return mem_hints(data, call->pod, call->container, ret, err);
}

static int mem_pod_hints(void *data, const ncm_tm_call *call, ncm_tm_hints *ret, ncm_error *err)
{
        if (call->op == NCM_TM_OP_RESIZE)
                return mem_resize_hints(data, call->pod, NULL, ret, err);
        return mem_hints(data, call->pod, NULL, ret, err);
}

static void set_text(ncm_node_event *e, const char *fmt, ...) NCM_PRINTF(2, 3);
static void set_text(ncm_node_event *e, const char *fmt, ...)
{
        va_list ap;
        char *t = NULL;

        va_start(ap, fmt);
        if (vasprintf(&t, fmt, ap) < 0)
                t = NULL;
        va_end(ap);
        free(e->text);
        e->text = t;
}

/* --explain: what the memory manager pinned, or why it refused (its group rule named). */
static void explain(ncm_node *n, node_txn *t, const ncm_tm_call *call, const ncm_hint *aff, int r,
                    const ncm_error *err)
{
        ncm_node_event *e;
        const ncm_mem_container *c;
        ncm_buf b = NCM_BUF_INIT;

        if (!t || !t->explain || !ncm_mem_policy_is_static(n->mem->policy))
                return;
        c = ncm_mem_state_container(n->mem->state, call->pod->uid, call->container->name);
        if (r >= 0 && !c)
                return; /* not pinned: nothing to tell, as for a container without devices */
        e = ncm__node_event_add(t, NCM_NODE_EVENT_ALLOCATE, call->container->name, "memory");
        if (!e)
                return;
        e->hint = *aff;
        e->ok = r >= 0;
        if (r < 0) {
                set_text(e, "%s", err ? err->msg : "");
                if (!aff->any && ncm_mem_explain_mask(n->mem->state, aff->numa, &b) &&
                    !ncm_buf_failed(&b))
                        ncm__node_event_step(e, "%s", b.data);
                ncm_buf_done(&b);
                return;
        }
        for (size_t i = 0; i < c->n; i++) {
                ncm_bitmask m = 0;
                for (size_t k = 0; k < c->blocks[i].nnuma; k++)
                        if (c->blocks[i].numa[k] >= 0 && c->blocks[i].numa[k] < 64)
                                m |= UINT64_C(1) << c->blocks[i].numa[k];
                ncm_buf_printf(&b, "%s%s %" PRIu64 " on NUMA ", i ? ", " : "", c->blocks[i].type,
                               c->blocks[i].size);
                ncm_bitmask_format_ids(m, &b);
        }
        set_text(e, "%s", b.data ? b.data : "");
        ncm_buf_done(&b);
}

void ncm__node_mem_explain_hints(const ncm_node *n, ncm_node_event *e)
{
        const ncm_mem_state *s = n->mem->state;

        if (!ncm_mem_policy_is_static(n->mem->policy))
                return;
        /* the nodes the group rule keeps out, so a refusal the hints lead to can be read */
        for (size_t i = 0; i < s->nnodes; i++) {
                const ncm_mem_node *nd = &s->nodes[i];
                ncm_buf b = NCM_BUF_INIT;
                if (nd->nil || nd->id < 0 || nd->id >= 64)
                        continue;
                if (nd->ncells > 1) {
                        if (ncm_mem_explain_mask(s, UINT64_C(1) << nd->id, &b) && b.data)
                                ncm__node_event_step(e, "no hint [%d]: %s", nd->id, b.data);
                } else if (nd->assignments > 0) {
                        ncm__node_event_step(e,
                                             "NUMA node %d serves single-node allocations: no "
                                             "hint of several nodes includes it (the memory "
                                             "manager's group rule)",
                                             nd->id);
                }
                ncm_buf_done(&b);
        }
}

static int mem_allocate(void *data, const ncm_tm_call *call, const ncm_hint *affinity,
                        const char **ret_type, ncm_error *err)
{
        ncm_node *n = data;
        node_mem *m = n->mem;
        bool gate = ncm_node_config_feature_gate(n->cfg, "InPlacePodVerticalScalingExclusiveMemory",
                                                 false);
        bool had = ncm_mem_state_container(m->state, call->pod->uid, call->container->name);
        bool pinned = false;
        int r;

        if (call->op == NCM_TM_OP_RESIZE) {
                /* pinned memory moves only with the gate on (else it did not change) */
                if (!gate || (call->container->init && !call->container->sidecar))
                        return 0;
                r = ncm_mem_policy_resize(m->policy, m->state, call->pod, call->container, ret_type,
                                          err);
                if (r >= 0)
                        m->dirty = true;
                explain(n, call->txn, call, affinity, r, err);
                return r;
        }
        (void)ret_type;
        r = ncm_mem_policy_allocate(m->policy, m->state, call->pod, call->container, affinity,
                                    &pinned, err);
        if (r >= 0 && pinned && !had && gate) {
                /* the promise a resize keeps: what the container got at its first admission */
                const ncm_mem_container *mc = ncm_mem_state_container(m->state, call->pod->uid,
                                                                      call->container->name);
                for (size_t k = 0; mc && k < mc->n; k++)
                        if (strcmp(mc->blocks[k].type, NCM_RESOURCE_MEMORY) == 0)
                                (void)ncm_mem_state_set_promised(m->state, call->pod->uid,
                                                                 call->container->name,
                                                                 mc->blocks[k].size);
        }
        if (pinned) {
                n->counters.mem_pinning_requests++;
                if (r < 0)
                        n->counters.mem_pinning_errors++;
        }
        if (r >= 0 && pinned)
                m->dirty = true;
        explain(n, call->txn, call, affinity, r, err);
        /* a refusal is NCM_E_ADMISSION: the kubelet's UnexpectedAdmissionError with the
         * policy's text */
        return r;
}

const ncm_tm_provider_ops ncm__node_memory_provider = {
                .name = "memory",
                .get_container_hints = mem_container_hints,
                .get_pod_hints = mem_pod_hints,
                .allocate = mem_allocate,
};

/* ------------------------------------------------------------------------------------------
 * Public
 */

const ncm_mem_state *ncm_node_memory_state(const ncm_node *n)
{
        return n->mem->state;
}

const ncm_mem_policy *ncm_node_memory_policy(const ncm_node *n)
{
        return n->mem->policy;
}

ncm_node_mems_rule ncm_node_config_cpuset_mems(const ncm_node_config *c)
{
        return c->mems_rule;
}

/*
 * The one place a container's cpuset.mems is decided. The kubelet sets it in
 * PreCreateContainer from GetMemoryNUMANodes (the nodes of the container's blocks) and nowhere
 * else: without blocks the runtime leaves the container its parent's nodes, and the CPU
 * manager's reconcile sends only cpuset_cpus.
 */
int ncm_node_container_mems(const ncm_node *n, const char *pod_uid, const char *container,
                            const ncm_cpuset *cpus, ncm_bitmask *ret)
{
        ncm_bitmask m = ncm_mem_state_container_numa(n->mem->state, pod_uid, container);

        if (!m && ncm_node_config_cpuset_mems(n->cfg) == NCM_NODE_MEMS_CPUS && cpus) {
                bool known = ncm_topo_has_memory(n->topo);
                size_t nn;
                const int *ids = ncm_topo_numa_ids(n->topo, &nn);
                /* node by node, not CPU by CPU: the shared pool of a big machine follows every
                 * move of the pool in each shared container */
                for (size_t i = 0; i < nn; i++) {
                        const ncm_cpuset *on = ncm_topo_numa_cpus(n->topo, ids[i]);
                        /* a node without memory is in no cpuset's mems (not even the root's) */
                        if (ids[i] >= 0 && ids[i] < NCM_BITMASK_MAX_BITS && on &&
                            ncm_cpuset_intersects(cpus, on) &&
                            (!known || ncm_topo_numa_memory(n->topo, ids[i], NULL, NULL) > 0))
                                m |= UINT64_C(1) << ids[i];
                }
        }
        if (!m)
                return 0;
        *ret = m;
        return 1;
}

void ncm_node_format_mems(ncm_bitmask m, ncm_buf *b)
{
        bool first = true;

        for (int i = 0; i < NCM_BITMASK_MAX_BITS; i++) {
                if (!ncm_bitmask_isset(m, i))
                        continue;
                ncm_buf_printf(b, "%s%d", first ? "" : ",", i);
                first = false;
        }
}

/* ------------------------------------------------------------------------------------------
 * Output
 */

static void put_bytes(ncm_buf *b, uint64_t v)
{
        char q[NCM_QUANTITY_STRLEN];
        ncm_quantity x = ncm_quantity_from_int(v > INT64_MAX ? INT64_MAX : (int64_t)v,
                                               NCM_QUANTITY_BINARY_SI);
        ncm_buf_puts(b, ncm_quantity_to_string(&x, q));
}

static void put_ints(ncm_buf *b, const int *v, size_t n)
{
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++)
                ncm_buf_printf(b, "%s%d", i ? ", " : "", v[i]);
        ncm_buf_putc(b, ']');
}

void ncm__node_mem_format_blocks_json(ncm_buf *b, const ncm_mem_block *v, size_t n)
{
        ncm_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
                ncm_buf_puts(b, i ? ", {\"numaAffinity\": " : "{\"numaAffinity\": ");
                put_ints(b, v[i].numa, v[i].nnuma);
                ncm_buf_puts(b, ", \"type\": ");
                ncm_buf_json_string(b, v[i].type, strlen(v[i].type));
                ncm_buf_printf(b, ", \"size\": %" PRIu64 "}", v[i].size);
        }
        ncm_buf_putc(b, ']');
}

void ncm__node_mem_format_blocks_text(ncm_buf *b, const ncm_mem_block *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                ncm_buf_printf(b, " %s=", v[i].type);
                put_bytes(b, v[i].size);
                ncm_buf_puts(b, "@NUMA");
                for (size_t k = 0; k < v[i].nnuma; k++)
                        ncm_buf_printf(b, "%s%d", k ? "," : " ", v[i].numa[k]);
        }
}

void ncm__node_mem_format_state_json(const ncm_node *n, ncm_buf *b)
{
        const ncm_mem_state *s = n->mem->state;

        if (!ncm_mem_policy_is_static(n->mem->policy))
                return;
        ncm_buf_puts(b, ", \"memory\": {\"numa\": [");
        for (size_t i = 0; i < s->nnodes; i++) {
                const ncm_mem_node *nd = &s->nodes[i];
                ncm_buf_printf(b, "%s{\"id\": %d, \"assignments\": %" PRId64 ", \"cells\": ",
                               i ? ", " : "", nd->id, nd->assignments);
                put_ints(b, nd->cells, nd->ncells);
                for (size_t k = 0; k < nd->ntypes; k++) {
                        const ncm_mem_type *t = &nd->types[k];
                        if (t->nil)
                                continue;
                        ncm_buf_puts(b, ", ");
                        ncm_buf_json_string(b, t->name, strlen(t->name));
                        ncm_buf_printf(b,
                                       ": {\"total\": %" PRIu64 ", \"systemReserved\": %" PRIu64
                                       ", \"allocatable\": %" PRIu64 ", \"reserved\": %" PRIu64
                                       ", \"free\": %" PRIu64 "}",
                                       t->t.total, t->t.system_reserved, t->t.allocatable,
                                       t->t.reserved, t->t.free);
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_puts(b, "], \"entries\": {");
        for (size_t i = 0; i < s->npods; i++) {
                const ncm_mem_pod *p = &s->pods[i];
                ncm_buf_puts(b, i ? ", " : "");
                ncm_buf_json_string(b, p->uid, strlen(p->uid));
                ncm_buf_puts(b, ": {");
                for (size_t k = 0; k < p->n; k++) {
                        ncm_buf_puts(b, k ? ", " : "");
                        ncm_buf_json_string(b, p->c[k].name, strlen(p->c[k].name));
                        ncm_buf_puts(b, ": ");
                        ncm__node_mem_format_blocks_json(b, p->c[k].blocks, p->c[k].n);
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_puts(b, "}}");
}

/* Who holds TYPE on node ID: "pod/container SIZE" (a block over several nodes says so). */
static void holders(const ncm_node *n, int id, const char *type, ncm_buf *b)
{
        const ncm_mem_state *s = n->mem->state;
        bool first = true;

        for (size_t i = 0; i < s->npods; i++) {
                const ncm_mem_pod *p = &s->pods[i];
                const char *name = ncm_node_pod_name(n, p->uid);
                for (size_t k = 0; k < p->n; k++)
                        for (size_t j = 0; j < p->c[k].n; j++) {
                                const ncm_mem_block *bl = &p->c[k].blocks[j];
                                bool on = false;
                                if (strcmp(bl->type, type) != 0 || bl->size == 0)
                                        continue;
                                for (size_t q = 0; q < bl->nnuma; q++)
                                        on |= bl->numa[q] == id;
                                if (!on)
                                        continue;
                                ncm_buf_printf(b, "%s%s/%s ", first ? "" : ", ",
                                               name && name[0] ? name : p->uid, p->c[k].name);
                                put_bytes(b, bl->size);
                                if (bl->nnuma > 1) {
                                        ncm_buf_puts(b, " across NUMA");
                                        for (size_t q = 0; q < bl->nnuma; q++)
                                                ncm_buf_printf(b, "%s%d", q ? "," : " ",
                                                               bl->numa[q]);
                                }
                                first = false;
                        }
        }
}

void ncm__node_mem_format_map(const ncm_node *n, ncm_buf *b)
{
        const ncm_mem_state *s = n->mem->state;

        if (!ncm_mem_policy_is_static(n->mem->policy))
                return;
        ncm_buf_puts(b, "memory: memoryManagerPolicy Static\n");
        for (size_t i = 0; i < s->nnodes; i++) {
                const ncm_mem_node *nd = &s->nodes[i];
                ncm_buf_printf(b, "  NUMA node %d", nd->id);
                if (nd->ncells > 1) {
                        ncm_buf_puts(b, " (group ");
                        for (size_t k = 0; k < nd->ncells; k++)
                                ncm_buf_printf(b, "%s%d", k ? "," : "", nd->cells[k]);
                        ncm_buf_putc(b, ')');
                }
                ncm_buf_putc(b, '\n');
                for (size_t k = 0; k < nd->ntypes; k++) {
                        const ncm_mem_type *t = &nd->types[k];
                        ncm_buf h = NCM_BUF_INIT;
                        if (t->nil || t->t.total == 0)
                                continue;
                        ncm_buf_printf(b, "    %-14s total ", t->name);
                        put_bytes(b, t->t.total);
                        ncm_buf_puts(b, ", system reserved ");
                        put_bytes(b, t->t.system_reserved);
                        ncm_buf_puts(b, ", free ");
                        put_bytes(b, t->t.free);
                        ncm_buf_puts(b, ", reserved ");
                        put_bytes(b, t->t.reserved);
                        holders(n, nd->id, t->name, &h);
                        if (h.len)
                                ncm_buf_printf(b, " (%s)", h.data);
                        ncm_buf_done(&h);
                        ncm_buf_putc(b, '\n');
                }
        }
}
