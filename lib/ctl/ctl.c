/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The control API's handlers: one call of nodecm.v1.Node on a node, from the packed request to
 * the packed reply (with the output `nodecm node` prints) and the event Watch streams. The
 * daemon and the command both run these, so the two front ends cannot drift apart.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nodecm/map.h>
#include <nodecm/node-resize.h>
#include "api/pb-strings.h"
#include "ctl-internal.h"

static const struct {
        const char *path;
        const char *name;
        bool mutates;
} methods[NCM_CTL_N_METHODS] = {
                [NCM_CTL_ADMIT] = {"/nodecm.v1.Node/Admit", "Admit", true},
                [NCM_CTL_REMOVE_CONTAINER] = {"/nodecm.v1.Node/RemoveContainer", "RemoveContainer",
                                              true},
                [NCM_CTL_REMOVE_POD] = {"/nodecm.v1.Node/RemovePod", "RemovePod", true},
                [NCM_CTL_LIST_PODS] = {"/nodecm.v1.Node/ListPods", "ListPods", false},
                [NCM_CTL_GET_STATE] = {"/nodecm.v1.Node/GetState", "GetState", false},
                [NCM_CTL_EXPLAIN] = {"/nodecm.v1.Node/Explain", "Explain", false},
                [NCM_CTL_WATCH] = {"/nodecm.v1.Node/Watch", "Watch", false},
                /* it writes cgroups, and must not run in the middle of an admission */
                [NCM_CTL_RECONCILE] = {"/nodecm.v1.Node/Reconcile", "Reconcile", true},
                [NCM_CTL_LIST_DEVICES] = {"/nodecm.v1.Node/ListDevices", "ListDevices", false},
                [NCM_CTL_RESIZE] = {"/nodecm.v1.Node/Resize", "Resize", true},
};

const char *ncm_ctl_method_path(ncm_ctl_method m)
{
        return (unsigned)m < NCM_CTL_N_METHODS ? methods[m].path : NULL;
}

const char *ncm_ctl_method_name(ncm_ctl_method m)
{
        return (unsigned)m < NCM_CTL_N_METHODS ? methods[m].name : NULL;
}

int ncm_ctl_method_from_path(const char *path)
{
        for (int i = 0; i < NCM_CTL_N_METHODS; i++)
                if (strcmp(path, methods[i].path) == 0)
                        return i;
        return -1;
}

bool ncm_ctl_method_mutates(ncm_ctl_method m)
{
        return (unsigned)m < NCM_CTL_N_METHODS && methods[m].mutates;
}

/* ---- building messages -------------------------------------------------------------------- */

ncm_ctl_format ncm__ctl_format(Nodecm__V1__Format f)
{
        switch (f) {
        case NODECM__V1__FORMAT__FORMAT_JSON:
                return NCM_CTL_FORMAT_JSON;
        case NODECM__V1__FORMAT__FORMAT_TEXT:
                return NCM_CTL_FORMAT_TEXT;
        case NODECM__V1__FORMAT__FORMAT_HTML:
                return NCM_CTL_FORMAT_HTML;
        default:
                return NCM_CTL_FORMAT_NONE;
        }
}

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

static int bad_request(ncm_ctl_method m, ncm_error *err)
{
        return ncm_error_set(err, EINVAL, "%s: the request message does not decode",
                             ncm_ctl_method_name(m));
}

/*
 * The end of a reply: TEXT (what `nodecm node` prints) becomes *OUTPUT unless no format was
 * asked, then MSG is packed into OUT; A and TEXT are released either way. -ENOMEM.
 */
static int pack_reply(ncm__pb_arena *a, const ProtobufCMessage *msg, char **output,
                      ncm_ctl_format f, ncm_buf *text, ncm_buf *out)
{
        int r;

        if (f != NCM_CTL_FORMAT_NONE)
                *output = ncm__pb_take(a, ncm_buf_steal(text));
        r = a->failed ? -ENOMEM : ncm__pb_append(msg, out);
        ncm_buf_done(text);
        ncm__pb_arena_done(a);
        return r;
}

static char *cpus_str(ncm__pb_arena *a, const ncm_cpuset *s)
{
        return ncm__pb_take(a, ncm_cpuset_format_list(s));
}

/* The NUMA nodes of CPUS (ascending) into C->numa. */
static void numa_of(ncm__pb_arena *a, const ncm_topo *t, const ncm_cpuset *cpus,
                    Nodecm__V1__Container *c)
{
        size_t n;
        const int *ids = ncm_topo_numa_ids(t, &n);

        c->numa = ncm__pb_alloc(a, (n + 1) * sizeof(*c->numa));
        if (!c->numa)
                return;
        for (size_t i = 0; i < n; i++) {
                const ncm_cpuset *nc = ncm_topo_numa_cpus(t, ids[i]);
                if (nc && ncm_cpuset_intersects(nc, cpus))
                        c->numa[c->n_numa++] = ids[i];
        }
}

static Nodecm__V1__DeviceAssignment **devices_of(ncm__pb_arena *a, const ncm_devmgr_assignment *d,
                                                 size_t n)
{
        Nodecm__V1__DeviceAssignment **v = ncm__pb_alloc(a, (n + 1) * sizeof(*v));

        for (size_t i = 0; v && i < n; i++) {
                v[i] = ncm__pb_alloc(a, sizeof(*v[i]));
                if (!v[i])
                        return v;
                nodecm__v1__device_assignment__init(v[i]);
                v[i]->resource = ncm__pb_str(a, d[i].resource);
                v[i]->ids = ncm__pb_alloc(a, (d[i].n_ids + 1) * sizeof(char *));
                for (size_t k = 0; v[i]->ids && k < d[i].n_ids; k++)
                        v[i]->ids[v[i]->n_ids++] = ncm__pb_str(a, d[i].ids[k]);
        }
        return v;
}

/* A container's merged Allocate answers as a v1beta1.ContainerAllocateResponse. */
static V1beta1__ContainerAllocateResponse *alloc_resp_msg(ncm__pb_arena *a,
                                                          const ncm_devmgr_alloc_resp *r)
{
        V1beta1__ContainerAllocateResponse *m = ncm__pb_alloc(a, sizeof(*m));

        if (!m)
                return NULL;
        v1beta1__container_allocate_response__init(m);
        m->envs = ncm__pb_alloc(a, (r->n_envs + 1) * sizeof(*m->envs));
        for (size_t i = 0; m->envs && i < r->n_envs; i++) {
                V1beta1__ContainerAllocateResponse__EnvsEntry *e = ncm__pb_alloc(a, sizeof(*e));
                if (!e)
                        break;
                v1beta1__container_allocate_response__envs_entry__init(e);
                e->key = ncm__pb_str(a, r->envs[i].key);
                e->value = ncm__pb_str(a, r->envs[i].value);
                m->envs[m->n_envs++] = e;
        }
        m->mounts = ncm__pb_alloc(a, (r->n_mounts + 1) * sizeof(*m->mounts));
        for (size_t i = 0; m->mounts && i < r->n_mounts; i++) {
                V1beta1__Mount *e = ncm__pb_alloc(a, sizeof(*e));
                if (!e)
                        break;
                v1beta1__mount__init(e);
                e->container_path = ncm__pb_str(a, r->mounts[i].container_path);
                e->host_path = ncm__pb_str(a, r->mounts[i].host_path);
                e->read_only = r->mounts[i].read_only;
                m->mounts[m->n_mounts++] = e;
        }
        m->devices = ncm__pb_alloc(a, (r->n_devices + 1) * sizeof(*m->devices));
        for (size_t i = 0; m->devices && i < r->n_devices; i++) {
                V1beta1__DeviceSpec *e = ncm__pb_alloc(a, sizeof(*e));
                if (!e)
                        break;
                v1beta1__device_spec__init(e);
                e->container_path = ncm__pb_str(a, r->devices[i].container_path);
                e->host_path = ncm__pb_str(a, r->devices[i].host_path);
                e->permissions = ncm__pb_str(a, r->devices[i].permissions);
                m->devices[m->n_devices++] = e;
        }
        m->annotations = ncm__pb_alloc(a, (r->n_annotations + 1) * sizeof(*m->annotations));
        for (size_t i = 0; m->annotations && i < r->n_annotations; i++) {
                V1beta1__ContainerAllocateResponse__AnnotationsEntry *e =
                                ncm__pb_alloc(a, sizeof(*e));
                if (!e)
                        break;
                v1beta1__container_allocate_response__annotations_entry__init(e);
                e->key = ncm__pb_str(a, r->annotations[i].key);
                e->value = ncm__pb_str(a, r->annotations[i].value);
                m->annotations[m->n_annotations++] = e;
        }
        m->cdi_devices = ncm__pb_alloc(a, (r->n_cdi_devices + 1) * sizeof(*m->cdi_devices));
        for (size_t i = 0; m->cdi_devices && i < r->n_cdi_devices; i++) {
                V1beta1__CDIDevice *e = ncm__pb_alloc(a, sizeof(*e));
                if (!e)
                        break;
                v1beta1__cdidevice__init(e);
                e->name = ncm__pb_str(a, r->cdi_devices[i]);
                m->cdi_devices[m->n_cdi_devices++] = e;
        }
        return m;
}

/* The containers of an admission result. */
/*
 * The messages of ADM's containers, borrowing from ADM (which must outlive them): one block of
 * messages, and the text of a CPU set and its NUMA nodes once for every run of containers on
 * the same CPUs (the shared pool): a pod of 100,000 containers costs no 100,000 formattings.
 */
static Nodecm__V1__Container **admission_containers(ncm__pb_arena *a, const ncm_node_admission *adm)
{
        Nodecm__V1__Container **v = ncm__pb_alloc(a, (adm->n_containers + 1) * sizeof(*v));
        Nodecm__V1__Container *block = ncm__pb_alloc(a, (adm->n_containers + 1) * sizeof(*block));
        const ncm_node_container_result *prev = NULL;

        if (!block)
                return NULL;
        for (size_t i = 0; v && i < adm->n_containers; i++) {
                const ncm_node_container_result *r = &adm->containers[i];
                Nodecm__V1__Container *c = &block[i];
                nodecm__v1__container__init(c);
                c->name = r->name;
                c->init = r->init;
                c->sidecar = r->sidecar;
                c->exclusive = r->exclusive;
                if (prev && ncm_cpuset_equal(prev->cpus, r->cpus)) {
                        c->cpus = v[i - 1]->cpus;
                        c->numa = v[i - 1]->numa;
                        c->n_numa = v[i - 1]->n_numa;
                } else {
                        c->cpus = cpus_str(a, r->cpus);
                        c->numa = ncm__pb_alloc(a, (r->n_numa + 1) * sizeof(*c->numa));
                        for (size_t k = 0; c->numa && k < r->n_numa; k++)
                                c->numa[c->n_numa++] = r->numa[k];
                }
                prev = r;
                if (r->n_devices) {
                        c->devices = devices_of(a, r->devices, r->n_devices);
                        c->n_devices = c->devices ? r->n_devices : 0;
                }
                if (r->device_options)
                        c->device_options = alloc_resp_msg(a, r->device_options);
                c->memory = ncm__pb_alloc(a, (r->n_memory + 1) * sizeof(*c->memory));
                for (size_t k = 0; c->memory && k < r->n_memory; k++) {
                        Nodecm__V1__MemoryBlock *mb = ncm__pb_alloc(a, sizeof(*mb));
                        if (!mb)
                                break;
                        nodecm__v1__memory_block__init(mb);
                        mb->type = ncm__pb_str(a, r->memory[k].type);
                        mb->size = r->memory[k].size;
                        mb->numa_affinity = ncm__pb_alloc(
                                        a, (r->memory[k].nnuma + 1) * sizeof(*mb->numa_affinity));
                        for (size_t q = 0; mb->numa_affinity && q < r->memory[k].nnuma; q++)
                                mb->numa_affinity[mb->n_numa_affinity++] = r->memory[k].numa[q];
                        c->memory[c->n_memory++] = mb;
                }
                v[i] = c;
        }
        return v;
}

/* ---- requests ----------------------------------------------------------------------------- */

static Nodecm__V1__Format proto_format(ncm_ctl_format f)
{
        switch (f) {
        case NCM_CTL_FORMAT_JSON:
                return NODECM__V1__FORMAT__FORMAT_JSON;
        case NCM_CTL_FORMAT_TEXT:
                return NODECM__V1__FORMAT__FORMAT_TEXT;
        case NCM_CTL_FORMAT_HTML:
                return NODECM__V1__FORMAT__FORMAT_HTML;
        default:
                return NODECM__V1__FORMAT__FORMAT_NONE;
        }
}

int ncm_ctl_request_pack(ncm_ctl_method m, const ncm_ctl_request *r, ncm_buf *out)
{
        static const ncm_ctl_request none = {0};
        char *empty = (char *)"";

        if (!r)
                r = &none;
        switch (m) {
        case NCM_CTL_ADMIT: {
                Nodecm__V1__AdmitRequest q = NODECM__V1__ADMIT_REQUEST__INIT;
                q.pod.data = (uint8_t *)r->pod;
                q.pod.len = r->pod ? r->pod_len : 0;
                q.source = r->source ? (char *)r->source : empty;
                q.explain = r->explain;
                q.format = proto_format(r->format);
                return ncm__pb_append(&q.base, out);
        }
        case NCM_CTL_RESIZE: {
                Nodecm__V1__ResizeRequest q = NODECM__V1__RESIZE_REQUEST__INIT;
                q.pod.data = (uint8_t *)r->pod;
                q.pod.len = r->pod ? r->pod_len : 0;
                q.source = r->source ? (char *)r->source : empty;
                q.explain = r->explain;
                q.format = proto_format(r->format);
                return ncm__pb_append(&q.base, out);
        }
        case NCM_CTL_EXPLAIN: {
                Nodecm__V1__ExplainRequest q = NODECM__V1__EXPLAIN_REQUEST__INIT;
                q.pod.data = (uint8_t *)r->pod;
                q.pod.len = r->pod ? r->pod_len : 0;
                q.source = r->source ? (char *)r->source : empty;
                q.format = proto_format(r->format);
                return ncm__pb_append(&q.base, out);
        }
        case NCM_CTL_REMOVE_CONTAINER: {
                Nodecm__V1__RemoveContainerRequest q = NODECM__V1__REMOVE_CONTAINER_REQUEST__INIT;
                q.pod_uid = r->pod_uid ? (char *)r->pod_uid : empty;
                q.container = r->container ? (char *)r->container : empty;
                q.format = proto_format(r->format);
                return ncm__pb_append(&q.base, out);
        }
        case NCM_CTL_REMOVE_POD: {
                Nodecm__V1__RemovePodRequest q = NODECM__V1__REMOVE_POD_REQUEST__INIT;
                q.pod_uid = r->pod_uid ? (char *)r->pod_uid : empty;
                q.format = proto_format(r->format);
                return ncm__pb_append(&q.base, out);
        }
        case NCM_CTL_LIST_PODS: {
                Nodecm__V1__ListPodsRequest q = NODECM__V1__LIST_PODS_REQUEST__INIT;
                q.format = proto_format(r->format);
                return ncm__pb_append(&q.base, out);
        }
        case NCM_CTL_GET_STATE: {
                Nodecm__V1__GetStateRequest q = NODECM__V1__GET_STATE_REQUEST__INIT;
                q.format = proto_format(r->format);
                return ncm__pb_append(&q.base, out);
        }
        case NCM_CTL_RECONCILE: {
                Nodecm__V1__ReconcileRequest q = NODECM__V1__RECONCILE_REQUEST__INIT;
                q.format = proto_format(r->format);
                return ncm__pb_append(&q.base, out);
        }
        case NCM_CTL_WATCH: {
                Nodecm__V1__WatchRequest q = NODECM__V1__WATCH_REQUEST__INIT;
                return ncm__pb_append(&q.base, out);
        }
        case NCM_CTL_LIST_DEVICES: {
                Nodecm__V1__ListDevicesRequest q = NODECM__V1__LIST_DEVICES_REQUEST__INIT;
                q.format = proto_format(r->format);
                q.locations = r->locations;
                return ncm__pb_append(&q.base, out);
        }
        default:
                return -EINVAL;
        }
}

/* ---- handlers ----------------------------------------------------------------------------- */

static int parse_pod(const ProtobufCBinaryData *text, const char *source, ncm_pod **ret,
                     ncm_error *err)
{
        const char *name = source && source[0] ? source : "<request>";

        if (!text->len)
                return ncm_error_set(err, EINVAL, "%s: no pod given", name);
        return ncm_pod_parse((const char *)text->data, text->len, name, ret, err);
}

/*
 * The kubelet treats a pod's UID as immutable: the same pod admitted again changes nothing (its
 * containers keep their CPUs), but another spec under a UID the node holds would be answered
 * "admitted" with the old CPUs. -EEXIST, saying so. (A runtime's pod that grows container by
 * container is admitted through lib/cri and lib/oci, not here.)
 */
static int check_readmission(const ncm_node *n, const ncm_pod *pod, ncm_error *err)
{
        const ncm_pod *held = ncm_node_pod(n, pod->uid);
        ncm_buf a = NCM_BUF_INIT, b = NCM_BUF_INIT;
        bool same;

        if (!held)
                return 0;
        ncm_pod_format_json(held, &a);
        ncm_pod_format_json(pod, &b);
        if (ncm_buf_failed(&a) || ncm_buf_failed(&b)) {
                ncm_buf_done(&a);
                ncm_buf_done(&b);
                return oom(err);
        }
        same = a.len == b.len && memcmp(a.data, b.data, a.len) == 0;
        ncm_buf_done(&a);
        ncm_buf_done(&b);
        if (same)
                return 0;
        return ncm_error_set(err, EEXIST,
                             "pod '%s' is held already with another spec: a pod's UID cannot "
                             "change its spec (remove the pod first, or give the new one its "
                             "own UID)",
                             pod->uid);
}

/*
 * The event of an admission or (RESIZE) a resize, done or refused: CS, the containers'
 * messages, and JSON (may be NULL), the step's JSON line, made once for the reply and the event.
 */
static int pod_event(const ncm_node *n, const ncm_pod *pod, const ncm_node_admission *adm,
                     bool resize, Nodecm__V1__Container **cs, const ncm_buf *json, ncm_buf *out)
{
        Nodecm__V1__Event ev = NODECM__V1__EVENT__INIT;
        ncm__pb_arena a = {0};
        ncm_buf line = NCM_BUF_INIT;
        ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();
        int r;

        if (!pool)
                return -ENOMEM;
        ncm_node_shared_pool(n, pool);
        /* the reply's JSON when it is that one already */
        if (json)
                ncm_buf_append(&line, json->data, json->len);
        else if (resize)
                ncm_node_format_resize_json(&line, -1, pod, adm, false);
        else
                ncm_node_format_admission_json(&line, -1, pod, adm, false);
        if (resize) {
                ev.op = (char *)"resize";
                ev.resized = adm->admitted;
        } else {
                ev.op = (char *)"admit";
                ev.admitted = adm->admitted;
        }
        ev.pod_uid = pod->uid;
        ev.pod_name = pod->name;
        ev.reason = (char *)adm->reason;
        ev.message = (char *)adm->message;
        ev.containers = cs;
        ev.n_containers = cs ? adm->n_containers : 0;
        ev.shared_pool = cpus_str(&a, pool);
        ev.json = ncm__pb_take(&a, ncm_buf_steal(&line));
        r = a.failed ? -ENOMEM : ncm__pb_append(&ev.base, out);
        ncm__pb_arena_done(&a);
        return r;
}

/* The node's flags for a decision of T, with or without EXPLAIN. */
static unsigned node_flags(const ncm_ctl_target *t, bool explain)
{
        return (explain ? NCM_NODE_EXPLAIN : 0) |
               (t->kubelet_admitted ? NCM_NODE_KUBELET_ADMITTED : 0);
}

/*
 * To the admission's JSON line B (the node's, as simulate prints a step), what the device
 * plugins' Allocate answers give each container (envs, mounts, device specs, annotations, CDI
 * devices: ncm_devmgr_alloc_resp_json) as "deviceOptions": {"<container>": {...}}, keyed by
 * container name (unique in a pod), in container order, and absent when no container holds
 * a device. The key goes at the end of the node's object, whose line ends in "}\n".
 */
static void admission_device_options(ncm_buf *b, const ncm_node_admission *adm)
{
        bool any = false;

        for (size_t i = 0; i < adm->n_containers; i++)
                any = any || adm->containers[i].device_options;
        if (!any || ncm_buf_failed(b) || b->len < 2 || memcmp(b->data + b->len - 2, "}\n", 2))
                return;
        b->len -= 2;
        ncm_buf_puts(b, ", \"deviceOptions\": {");
        any = false;
        for (size_t i = 0; i < adm->n_containers; i++) {
                const ncm_node_container_result *c = &adm->containers[i];
                if (!c->device_options)
                        continue;
                if (any)
                        ncm_buf_puts(b, ", ");
                any = true;
                ncm_buf_json_string(b, c->name, strlen(c->name));
                ncm_buf_puts(b, ": ");
                ncm_devmgr_alloc_resp_json(c->device_options, b);
        }
        ncm_buf_puts(b, "}}\n");
}

/* The fields an Admission and a ResizeResult share (VERDICT: admitted, resized). */
#define DECISION_FIELDS(rep, verdict, pod, adm, cs)                                                \
        do {                                                                                       \
                (rep).pod_uid = (pod)->uid;                                                        \
                (rep).pod_name = (pod)->name;                                                      \
                (rep).verdict = (adm)->admitted;                                                   \
                (rep).reason = (char *)(adm)->reason;                                              \
                (rep).message = (char *)(adm)->message;                                            \
                (rep).containers = (cs);                                                           \
                (rep).n_containers = (cs) ? (adm)->n_containers : 0;                               \
        } while (0)

/*
 * The reply to an admission (Admission) or, RESIZE, to a resize (ResizeResult) for output
 * format F, CS its containers' messages; *JSON_LINE (may be NULL) gets a copy of the JSON line
 * when that is the output, for the event (explain off), which carries no plugin answers.
 */
static int decision_reply(const ncm_pod *pod, const ncm_node_admission *adm, ncm_ctl_format f,
                          bool explain, bool resize, Nodecm__V1__Container **cs, ncm_buf *json_line,
                          ncm_buf *out)
{
        Nodecm__V1__Admission ar = NODECM__V1__ADMISSION__INIT;
        Nodecm__V1__ResizeResult rr = NODECM__V1__RESIZE_RESULT__INIT;
        ncm__pb_arena a = {0};
        ncm_buf text = NCM_BUF_INIT;

        if (f == NCM_CTL_FORMAT_JSON) {
                if (resize)
                        ncm_node_format_resize_json(&text, -1, pod, adm, explain);
                else
                        ncm_node_format_admission_json(&text, -1, pod, adm, explain);
                if (json_line && !explain)
                        ncm_buf_append(json_line, text.data, text.len);
                if (!resize)
                        admission_device_options(&text, adm);
        } else if (f == NCM_CTL_FORMAT_TEXT) {
                if (resize)
                        ncm_node_format_resize_text(&text, -1, pod, adm, explain);
                else
                        ncm_node_format_admission_text(&text, -1, pod, adm, explain);
        }
        if (resize) {
                DECISION_FIELDS(rr, resized, pod, adm, cs);
                return pack_reply(&a, &rr.base, &rr.output, f, &text, out);
        }
        DECISION_FIELDS(ar, admitted, pod, adm, cs);
        return pack_reply(&a, &ar.base, &ar.output, f, &text, out);
}

/*
 * The reply to a decision of the node (RESIZE: a resize) and, unless DRY_RUN, its event: the
 * containers' messages and the JSON line made once for both. -ENOMEM.
 */
static int decision_answer(const ncm_ctl_target *t, const ncm_pod *pod,
                           const ncm_node_admission *adm, ncm_ctl_format f, bool explain,
                           bool resize, bool dry_run, ncm_ctl_result *res)
{
        ncm__pb_arena a = {0};
        ncm_buf json = NCM_BUF_INIT;
        Nodecm__V1__Container **cs = admission_containers(&a, adm);
        int r = a.failed ? -ENOMEM
                         : decision_reply(pod, adm, f, explain, resize, cs, dry_run ? NULL : &json,
                                          &res->reply);

        if (r >= 0 && !dry_run)
                r = pod_event(t->node, pod, adm, resize, cs, json.len ? &json : NULL, &res->event);
        ncm_buf_done(&json);
        ncm__pb_arena_done(&a);
        return r;
}

/* The node's decision on POD, an admission or (RESIZE) a resize, and what RES says of it. */
static int decide(const ncm_ctl_target *t, const ncm_pod *pod, bool explain, bool resize,
                  ncm_fs_batch *batch, ncm_ctl_result *res, ncm_node_admission **ret,
                  ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) before = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) after = ncm_cpuset_new();
        ncm_node_admission *adm = NULL;
        int r;

        if (!before || !after)
                return oom(err);
        ncm_node_shared_pool(t->node, before);
        r = resize ? ncm_node_resize_batch(t->node, pod, node_flags(t, explain), batch, &adm, err)
                   : ncm_node_admit_batch(t->node, pod, node_flags(t, explain), batch, &adm, err);
        if (r < 0)
                return r;
        ncm_node_shared_pool(t->node, after);
        if (resize) {
                res->resize = true;
                res->resized = adm->admitted;
        } else {
                res->admission = true;
                res->admitted = adm->admitted;
        }
        res->changed = adm->admitted;
        res->pool_changed = !ncm_cpuset_equal(before, after);
        *ret = adm;
        return 0;
}

static int handle_admit(const ncm_ctl_target *t, const uint8_t *req, size_t len, bool dry_run,
                        ncm_ctl_result *res, ncm_error *err)
{
        ncm_autoptr(ncm_pod) pod = NULL;
        ncm_autoptr(ncm_node_admission) adm = NULL;
        ncm_autoptr(ncm_node) copy = NULL;
        ProtobufCBinaryData text;
        const char *source;
        ncm_ctl_format f;
        bool explain;
        int r;

        if (dry_run) {
                Nodecm__V1__ExplainRequest *q = nodecm__v1__explain_request__unpack(NULL, len, req);
                if (!q)
                        return bad_request(NCM_CTL_EXPLAIN, err);
                text = q->pod;
                source = q->source;
                f = ncm__ctl_format(q->format);
                explain = true;
                r = parse_pod(&text, source, &pod, err);
                nodecm__v1__explain_request__free_unpacked(q, NULL);
        } else {
                Nodecm__V1__AdmitRequest *q = nodecm__v1__admit_request__unpack(NULL, len, req);
                if (!q)
                        return bad_request(NCM_CTL_ADMIT, err);
                text = q->pod;
                source = q->source;
                f = ncm__ctl_format(q->format);
                explain = q->explain;
                r = parse_pod(&text, source, &pod, err);
                nodecm__v1__admit_request__free_unpacked(q, NULL);
        }
        if (r < 0)
                return r;
        if (dry_run) {
                /* decided on a copy: the node itself, its files and cgroups stay as they are */
                r = ncm_node_copy(t->node, &copy, err);
                if (r >= 0)
                        r = ncm_node_admit(copy, pod, node_flags(t, true), &adm, err);
                if (r < 0)
                        return r;
                r = decision_answer(t, pod, adm, f, true, false, true, res);
                return r < 0 ? oom(err) : 0;
        }
        return ncm_ctl_admit(t, pod, explain ? NCM_CTL_FLAG_EXPLAIN : 0, NULL, f, res, NULL, err);
}

/* An admission (RESIZE: a resize) of POD, typed: decided, answered, and its outcome kept. */
static int decide_typed(const ncm_ctl_target *t, const ncm_pod *pod, unsigned flags, bool resize,
                        ncm_fs_batch *batch, ncm_ctl_format f, ncm_ctl_result *res,
                        ncm_node_admission **ret_adm, ncm_error *err)
{
        ncm_autoptr(ncm_node_admission) adm = NULL;
        bool explain = (flags & NCM_CTL_FLAG_EXPLAIN) != 0;
        int r = decide(t, pod, explain, resize, batch, res, &adm, err);

        if (r < 0)
                return r;
        if (decision_answer(t, pod, adm, f, explain, resize, false, res) < 0)
                return oom(err);
        if (ret_adm)
                *ret_adm = NCM_TAKE_PTR(adm);
        return 0;
}

int ncm_ctl_admit(const ncm_ctl_target *t, const ncm_pod *pod, unsigned flags, ncm_fs_batch *batch,
                  ncm_ctl_format f, ncm_ctl_result *res, ncm_node_admission **ret_adm,
                  ncm_error *err)
{
        int r = t->respec ? 0 : check_readmission(t->node, pod, err);

        if (r < 0)
                return r;
        return decide_typed(t, pod, flags, false, batch, f, res, ret_adm, err);
}

/* ---- Resize ---- */

int ncm_ctl_resize(const ncm_ctl_target *t, const ncm_pod *pod, unsigned flags, ncm_fs_batch *batch,
                   ncm_ctl_format f, ncm_ctl_result *res, ncm_node_admission **ret_adm,
                   ncm_error *err)
{
        return decide_typed(t, pod, flags, true, batch, f, res, ret_adm, err);
}

static int handle_resize(const ncm_ctl_target *t, const uint8_t *req, size_t len,
                         ncm_ctl_result *res, ncm_error *err)
{
        Nodecm__V1__ResizeRequest *q = nodecm__v1__resize_request__unpack(NULL, len, req);
        ncm_autoptr(ncm_pod) pod = NULL;
        ncm_ctl_format f;
        bool explain;
        int r;

        if (!q)
                return bad_request(NCM_CTL_RESIZE, err);
        f = ncm__ctl_format(q->format);
        explain = q->explain;
        r = parse_pod(&q->pod, q->source, &pod, err);
        nodecm__v1__resize_request__free_unpacked(q, NULL);
        if (r < 0)
                return r;
        return ncm_ctl_resize(t, pod, explain ? NCM_CTL_FLAG_EXPLAIN : 0, NULL, f, res, NULL, err);
}

/* Whether the node's CPU state holds entries of pod UID (a pod known from a checkpoint). */
static bool state_has_pod(const ncm_node *n, const char *uid)
{
        const ncm_cpu_state *s = ncm_node_cpu_state(n);

        for (size_t i = 0; i < ncm_cpu_state_num_pods(s); i++)
                if (strcmp(ncm_cpu_state_pod_uid(s, i), uid) == 0)
                        return true;
        return false;
}

/*
 * A removal names what an admission let in, or is refused as bad input: an identifier the API
 * server would not produce (a path, a newline, a control sequence) is an error, unless the node
 * holds exactly that pod or container already (an older nodecm's record, a kubelet's
 * checkpoint): what a node holds stays removable.
 */
static int check_removal(const ncm_node *n, const char *uid, const char *container, ncm_error *err)
{
        const ncm_pod *pod = ncm_node_pod(n, uid);
        int r = 0;

        if (!pod && !state_has_pod(n, uid))
                r = ncm_pod_validate_uid(uid, strlen(uid), "pod UID", err);
        if (r >= 0 && container && !(pod && ncm_pod_find_container(pod, container)) &&
            !ncm_cpu_state_get(ncm_node_cpu_state(n), uid, container))
                r = ncm_pod_validate_label(container, strlen(container), "container", err);
        return r;
}

int ncm_ctl_remove(const ncm_ctl_target *t, const char *uid, const char *container,
                   ncm_ctl_format f, ncm_ctl_result *res, ncm_error *err)
{
        ncm_ctl_method m = container ? NCM_CTL_REMOVE_CONTAINER : NCM_CTL_REMOVE_POD;
        ncm_autoptr(ncm_cpuset) released = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();
        ncm_autofree char *name = NULL;
        Nodecm__V1__Removal rep = NODECM__V1__REMOVAL__INIT;
        Nodecm__V1__Event ev = NODECM__V1__EVENT__INIT;
        ncm__pb_arena a = {0};
        ncm_buf line = NCM_BUF_INIT, text = NCM_BUF_INIT;
        int r;

        if (!released || !pool)
                return oom(err);
        if (!uid[0])
                return ncm_error_set(err, EINVAL, "%s: no pod UID given", ncm_ctl_method_name(m));
        r = check_removal(t->node, uid, container, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s", ncm_ctl_method_name(m));
        if (ncm_node_pod_name(t->node, uid))
                name = strdup(ncm_node_pod_name(t->node, uid));
        r = container ? ncm_node_remove_container(t->node, uid, container, released, err)
                      : ncm_node_remove_pod(t->node, uid, released, err);
        if (r < 0)
                return r;
        res->changed = r > 0;
        res->pool_changed = !ncm_cpuset_is_empty(released);
        /* the event's line is the JSON output too */
        ncm_node_format_removal_json(&line, -1, uid, container, r, released);
        if (f == NCM_CTL_FORMAT_TEXT)
                ncm_node_format_removal_text(&text, -1, uid, name, container, r, released);
        rep.removed = r > 0;
        rep.released = cpus_str(&a, released);
        if (f != NCM_CTL_FORMAT_NONE)
                rep.output = ncm__pb_str(&a, f == NCM_CTL_FORMAT_TEXT ? text.data : line.data);
        ncm_node_shared_pool(t->node, pool);
        ev.op = container ? (char *)"remove" : (char *)"removePod";
        ev.pod_uid = (char *)uid;
        ev.pod_name = name ? name : (char *)"";
        ev.container = container ? (char *)container : (char *)"";
        ev.released = rep.released;
        ev.shared_pool = cpus_str(&a, pool);
        ev.json = ncm__pb_take(&a, ncm_buf_steal(&line));
        r = a.failed ? -ENOMEM : ncm__pb_append(&rep.base, &res->reply);
        /* a removal of something the node did not know changes nothing: no event */
        if (r >= 0 && res->changed)
                r = ncm__pb_append(&ev.base, &res->event);
        ncm__pb_arena_done(&a);
        ncm_buf_done(&text);
        return r < 0 ? oom(err) : 0;
}

static int handle_remove(const ncm_ctl_target *t, ncm_ctl_method m, const uint8_t *req, size_t len,
                         ncm_ctl_result *res, ncm_error *err)
{
        ncm_autofree char *uid = NULL;
        ncm_autofree char *container = NULL;
        ncm_ctl_format f;

        if (m == NCM_CTL_REMOVE_CONTAINER) {
                Nodecm__V1__RemoveContainerRequest *q =
                                nodecm__v1__remove_container_request__unpack(NULL, len, req);
                if (!q)
                        return bad_request(m, err);
                uid = strdup(q->pod_uid);
                container = strdup(q->container);
                f = ncm__ctl_format(q->format);
                nodecm__v1__remove_container_request__free_unpacked(q, NULL);
                if (!uid || !container)
                        return oom(err);
                if (!container[0])
                        return ncm_error_set(err, EINVAL, "RemoveContainer: no container given");
        } else {
                Nodecm__V1__RemovePodRequest *q =
                                nodecm__v1__remove_pod_request__unpack(NULL, len, req);
                if (!q)
                        return bad_request(m, err);
                uid = strdup(q->pod_uid);
                f = ncm__ctl_format(q->format);
                nodecm__v1__remove_pod_request__free_unpacked(q, NULL);
                if (!uid)
                        return oom(err);
        }
        return ncm_ctl_remove(t, uid, container, f, res, err);
}

/* The pods the node holds, as ListPods reports them and their output. */
static int pods_text(const Nodecm__V1__PodList *l, ncm_ctl_format f, ncm_buf *out)
{
        if (f == NCM_CTL_FORMAT_JSON) {
                ncm_buf_puts(out, "{\"pods\": [");
                for (size_t i = 0; i < l->n_pods; i++) {
                        const Nodecm__V1__Pod *p = l->pods[i];
                        ncm_buf_puts(out, i ? ", {\"uid\": " : "{\"uid\": ");
                        ncm_buf_json_string(out, p->uid, strlen(p->uid));
                        ncm_buf_puts(out, ", \"name\": ");
                        ncm_buf_json_string(out, p->name, strlen(p->name));
                        ncm_buf_puts(out, ", \"namespace\": ");
                        ncm_buf_json_string(out, p->namespace_, strlen(p->namespace_));
                        ncm_buf_printf(out, ", \"qos\": \"%s\", \"containers\": [", p->qos);
                        for (size_t k = 0; k < p->n_containers; k++) {
                                const Nodecm__V1__Container *c = p->containers[k];
                                ncm_buf_puts(out, k ? ", {\"name\": " : "{\"name\": ");
                                ncm_buf_json_string(out, c->name, strlen(c->name));
                                ncm_buf_printf(out, ", \"exclusive\": %s, \"cpus\": \"%s\"",
                                               c->exclusive ? "true" : "false", c->cpus);
                                if (c->removed)
                                        ncm_buf_puts(out, ", \"removed\": true");
                                ncm_buf_putc(out, '}');
                        }
                        ncm_buf_puts(out, "]}");
                }
                ncm_buf_puts(out, "]}\n");
        } else if (f == NCM_CTL_FORMAT_TEXT) {
                if (!l->n_pods)
                        ncm_buf_puts(out, "no pods\n");
                for (size_t i = 0; i < l->n_pods; i++) {
                        const Nodecm__V1__Pod *p = l->pods[i];
                        ncm_buf_printf(out, "%s/%s (%s) %s\n", p->namespace_, p->name, p->uid,
                                       p->qos);
                        for (size_t k = 0; k < p->n_containers; k++) {
                                const Nodecm__V1__Container *c = p->containers[k];
                                ncm_buf_printf(out, "  %-20s %-9s %s%s\n", c->name,
                                               c->exclusive ? "exclusive" : "shared", c->cpus,
                                               c->removed ? " (removed)" : "");
                        }
                }
        }
        return ncm_buf_failed(out) ? -ENOMEM : 0;
}

static int handle_list_pods(const ncm_ctl_target *t, const uint8_t *req, size_t len,
                            ncm_ctl_result *res, ncm_error *err)
{
        Nodecm__V1__ListPodsRequest *q = nodecm__v1__list_pods_request__unpack(NULL, len, req);
        Nodecm__V1__PodList rep = NODECM__V1__POD_LIST__INIT;
        ncm_autoptr(ncm_cpuset) cpus = ncm_cpuset_new();
        const ncm_topo *topo = ncm_node_topo(t->node);
        size_t n = ncm_node_num_pods(t->node);
        ncm__pb_arena a = {0};
        ncm_buf text = NCM_BUF_INIT;
        ncm_ctl_format f;

        if (!q)
                return bad_request(NCM_CTL_LIST_PODS, err);
        f = ncm__ctl_format(q->format);
        nodecm__v1__list_pods_request__free_unpacked(q, NULL);
        if (!cpus)
                return oom(err);
        rep.pods = ncm__pb_alloc(&a, (n + 1) * sizeof(*rep.pods));
        for (size_t i = 0; rep.pods && i < n; i++) {
                const ncm_pod *pod = ncm_node_pod_at(t->node, i);
                size_t nc = pod->n_init_containers + pod->n_containers;
                Nodecm__V1__Pod *p = ncm__pb_alloc(&a, sizeof(*p));
                if (!p)
                        break;
                nodecm__v1__pod__init(p);
                p->uid = ncm__pb_str(&a, pod->uid);
                p->name = ncm__pb_str(&a, pod->name);
                p->namespace_ = ncm__pb_str(&a, pod->ns);
                p->qos = ncm__pb_str(&a, ncm_qos_class_name(pod->qos));
                p->containers = ncm__pb_alloc(&a, (nc + 1) * sizeof(*p->containers));
                for (size_t k = 0; p->containers && k < nc; k++) {
                        const ncm_container *ct =
                                        k < pod->n_init_containers
                                                        ? &pod->init_containers[k]
                                                        : &pod->containers[k -
                                                                           pod->n_init_containers];
                        Nodecm__V1__Container *c = ncm__pb_alloc(&a, sizeof(*c));
                        if (!c)
                                break;
                        nodecm__v1__container__init(c);
                        c->name = ncm__pb_str(&a, ct->name);
                        c->init = ct->init;
                        c->sidecar = ct->sidecar;
                        c->exclusive = ncm_node_container_cpus(t->node, pod->uid, ct->name, cpus) >
                                       0;
                        c->cpus = cpus_str(&a, cpus);
                        numa_of(&a, topo, cpus, c);
                        c->removed = ncm_node_container_removed(t->node, pod->uid, ct->name);
                        p->containers[p->n_containers++] = c;
                }
                rep.pods[rep.n_pods++] = p;
        }
        if (!a.failed && pods_text(&rep, f, &text) < 0)
                a.failed = true;
        return pack_reply(&a, &rep.base, &rep.output, f, &text, &res->reply) < 0 ? oom(err) : 0;
}

static int handle_get_state(const ncm_ctl_target *t, const uint8_t *req, size_t len,
                            ncm_ctl_result *res, ncm_error *err)
{
        Nodecm__V1__GetStateRequest *q = nodecm__v1__get_state_request__unpack(NULL, len, req);
        Nodecm__V1__State rep = NODECM__V1__STATE__INIT;
        const ncm_cpu_state *s = ncm_node_cpu_state(t->node);
        const ncm_cpuset *reserved = ncm_cpu_policy_reserved(ncm_node_cpu_policy(t->node));
        ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) none = ncm_cpuset_new();
        ncm_cpu_state_iter it = NCM_CPU_STATE_ITER_INIT;
        const char *pu, *cn;
        const ncm_cpuset *cs;
        ncm__pb_arena a = {0};
        ncm_buf text = NCM_BUF_INIT, cp = NCM_BUF_INIT;
        ncm_ctl_format f;
        size_t n = ncm_cpu_state_num_entries(s);

        if (!q)
                return bad_request(NCM_CTL_GET_STATE, err);
        f = ncm__ctl_format(q->format);
        nodecm__v1__get_state_request__free_unpacked(q, NULL);
        if (!pool || !none)
                return oom(err);
        ncm_node_shared_pool(t->node, pool);
        rep.policy = (char *)ncm_cpu_state_policy(s);
        rep.default_cpu_set = cpus_str(&a, ncm_cpu_state_default(s));
        rep.reserved = cpus_str(&a, reserved ? reserved : none);
        rep.shared_pool = cpus_str(&a, pool);
        rep.entries = ncm__pb_alloc(&a, (n + 1) * sizeof(*rep.entries));
        while (rep.entries && ncm_cpu_state_next(s, &it, &pu, &cn, &cs) && rep.n_entries < n) {
                Nodecm__V1__StateEntry *e = ncm__pb_alloc(&a, sizeof(*e));
                if (!e)
                        break;
                nodecm__v1__state_entry__init(e);
                e->pod_uid = ncm__pb_str(&a, pu);
                e->container = ncm__pb_str(&a, cn);
                e->cpus = cpus_str(&a, cs);
                rep.entries[rep.n_entries++] = e;
        }
        ncm_node_format_cpu_checkpoint(t->node, &cp);
        rep.checkpoint = ncm__pb_take(&a, ncm_buf_steal(&cp));
        if (f == NCM_CTL_FORMAT_JSON)
                ncm_node_format_status_json(t->node, &text);
        else if (f == NCM_CTL_FORMAT_TEXT && ncm_node_format_cpu_map(t->node, &text) < 0)
                a.failed = true;
        else if (f == NCM_CTL_FORMAT_HTML && ncm_ctl_map_html(t, &text, NULL, NULL) < 0)
                a.failed = true;
        return pack_reply(&a, &rep.base, &rep.output, f, &text, &res->reply) < 0 ? oom(err) : 0;
}

int ncm_ctl_map_html(const ncm_ctl_target *t, ncm_buf *out, const char *events_url,
                     const char *explain_url)
{
        char host[256] = "", when[64] = "", caption[512];
        ncm_map_scene_options so = {.step = -1, .flags = explain_url ? 0 : NCM_MAP_REPLAY};
        ncm_map_html_options ho = {.events_url = events_url, .explain_url = explain_url};
        time_t now = time(NULL);
        struct tm tm;

        if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
                snprintf(host, sizeof(host), "node");
        if (gmtime_r(&now, &tm))
                strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
        snprintf(caption, sizeof(caption), "%s%s%s", t->dir ? t->dir : "",
                 t->dir && t->enforcer ? " · enforcer " : "",
                 t->dir && t->enforcer ? t->enforcer : "");
        so.title = host;
        so.caption = caption[0] ? caption : NULL;
        ho.generated = when[0] ? when : NULL;
        return ncm_map_node_html(t->node, &so, &ho, out, NULL);
}

static int handle_reconcile(const ncm_ctl_target *t, const uint8_t *req, size_t len,
                            ncm_ctl_result *res, ncm_error *err)
{
        Nodecm__V1__ReconcileRequest *q = nodecm__v1__reconcile_request__unpack(NULL, len, req);
        Nodecm__V1__Reconciliation rep = NODECM__V1__RECONCILIATION__INIT;
        ncm_buf text = NCM_BUF_INIT;
        ncm_ctl_format f;
        int r;

        if (!q)
                return bad_request(NCM_CTL_RECONCILE, err);
        f = ncm__ctl_format(q->format);
        nodecm__v1__reconcile_request__free_unpacked(q, NULL);
        r = ncm_node_reconcile(t->node, err);
        if (r < 0)
                return r;
        res->reconciled = r;
        rep.containers = r;
        if (f != NCM_CTL_FORMAT_NONE) {
                ncm_buf_printf(&text, "reconcile: node in %s (%s enforcer)\n",
                               t->dir ? t->dir : "?", t->enforcer ? t->enforcer : "none");
                rep.output = text.data ? text.data : (char *)"";
        }
        r = ncm_buf_failed(&text) ? -ENOMEM : ncm__pb_append(&rep.base, &res->reply);
        ncm_buf_done(&text);
        return r < 0 ? oom(err) : 0;
}

static const char *endpoint_state(ncm_devmgr_endpoint_state s)
{
        return s == NCM_DEVMGR_ENDPOINT_RUNNING   ? "running"
               : s == NCM_DEVMGR_ENDPOINT_STOPPED ? "stopped"
                                                  : "none";
}

/*
 * Where each device is (docs/devices.md, "Device locality"), after the inventory: a JSON
 * "locations" list (the inventory's object reopened), or lines for people. A machine whose PCI
 * devices or CDI specs cannot be read says so instead: the inventory stands without it.
 */
static void append_locations(ncm_node *n, ncm_ctl_format f, ncm_buf *text)
{
        ncm_device_location *locs = NULL;
        ncm_error e = NCM_ERROR_INIT;
        size_t nl = 0;
        int r = ncm_node_device_locations(n, &locs, &nl, &e);

        if (f == NCM_CTL_FORMAT_JSON) {
                /* the inventory ends "}\n" */
                if (text->len >= 2)
                        text->len -= 2;
                if (r >= 0) {
                        ncm_buf_puts(text, ", \"locations\": ");
                        ncm_device_locations_json(locs, nl, text);
                } else {
                        ncm_buf_puts(text, ", \"locationsError\": ");
                        ncm_buf_json_string(text, e.msg, strlen(e.msg));
                }
                ncm_buf_puts(text, "}\n");
        } else if (r >= 0) {
                if (nl)
                        ncm_buf_puts(text, "device locations:\n");
                ncm_device_locations_text(locs, nl, text);
        } else {
                ncm_buf_printf(text, "device locations: %s\n", e.msg);
        }
        ncm_device_locations_free(locs, nl);
}

static bool uses_locality(const ncm_node_config *c)
{
        size_t n = 0;
        return ncm_node_config_device_local_cpus(c) || ncm_node_config_dra_hints(c) ||
               ncm_node_config_cdi_dirs(c, &n);
}

static int handle_list_devices(const ncm_ctl_target *t, const uint8_t *req, size_t len,
                               ncm_ctl_result *res, ncm_error *err)
{
        Nodecm__V1__ListDevicesRequest *q =
                        nodecm__v1__list_devices_request__unpack(NULL, len, req);
        Nodecm__V1__DeviceList rep = NODECM__V1__DEVICE_LIST__INIT;
        ncm_devmgr_inventory inv = {0};
        ncm__pb_arena a = {0};
        ncm_buf text = NCM_BUF_INIT;
        ncm_ctl_format f;
        bool locations;
        int r;

        if (!q)
                return bad_request(NCM_CTL_LIST_DEVICES, err);
        f = ncm__ctl_format(q->format);
        /* asked for, or the node's configuration uses device locality */
        locations = q->locations || uses_locality(ncm_node_get_config(t->node));
        nodecm__v1__list_devices_request__free_unpacked(q, NULL);
        if (ncm_devmgr_inventory_get(ncm_node_devmgr(t->node), &inv) < 0)
                return oom(err);
        rep.resources = ncm__pb_alloc(&a, (inv.n + 1) * sizeof(*rep.resources));
        for (size_t i = 0; rep.resources && i < inv.n; i++) {
                const ncm_devmgr_resource_info *ri = &inv.v[i];
                Nodecm__V1__Resource *m = ncm__pb_alloc(&a, sizeof(*m));
                if (!m)
                        break;
                nodecm__v1__resource__init(m);
                m->name = ncm__pb_str(&a, ri->resource);
                m->endpoint = (char *)endpoint_state(ri->endpoint);
                m->pre_start_required = ri->options.pre_start_required;
                m->get_preferred_allocation_available =
                                ri->options.get_preferred_allocation_available;
                m->capacity = ri->capacity;
                m->allocatable = ri->allocatable;
                m->allocated = ri->allocated;
                m->stopped_seconds = (double)ri->stopped_ns / 1e9;
                m->grace_left_seconds = (double)ri->grace_left_ns / 1e9;
                m->devices = ncm__pb_alloc(&a, (ri->n_devices + 1) * sizeof(*m->devices));
                for (size_t k = 0; m->devices && k < ri->n_devices; k++) {
                        const ncm_devmgr_device_info *di = &ri->devices[k];
                        Nodecm__V1__Device *d = ncm__pb_alloc(&a, sizeof(*d));
                        if (!d)
                                break;
                        nodecm__v1__device__init(d);
                        d->id = ncm__pb_str(&a, di->id);
                        d->health = ncm__pb_str(&a, di->health ? di->health : "");
                        d->healthy = di->healthy;
                        d->topology = di->topology;
                        d->numa = ncm__pb_alloc(&a, (di->n_numa + 1) * sizeof(*d->numa));
                        for (size_t j = 0; d->numa && j < di->n_numa; j++)
                                d->numa[d->n_numa++] = di->numa[j];
                        d->allocated = di->allocated;
                        d->pod_uid = ncm__pb_str(&a, di->pod ? di->pod : "");
                        d->container = ncm__pb_str(&a, di->container ? di->container : "");
                        d->held = di->held;
                        m->devices[m->n_devices++] = d;
                }
                rep.resources[rep.n_resources++] = m;
        }
        if (f == NCM_CTL_FORMAT_JSON)
                ncm_devmgr_inventory_json(&inv, &text);
        else if (f == NCM_CTL_FORMAT_TEXT)
                ncm_devmgr_inventory_text(&inv, &text);
        if (locations && (f == NCM_CTL_FORMAT_JSON || f == NCM_CTL_FORMAT_TEXT))
                append_locations(t->node, f, &text);
        r = pack_reply(&a, &rep.base, &rep.output, f, &text, &res->reply);
        ncm_devmgr_inventory_done(&inv);
        return r < 0 ? oom(err) : 0;
}

/* The request message of method M (NULL: none known). */
static const ProtobufCMessageDescriptor *request_descriptor(ncm_ctl_method m)
{
        switch (m) {
        case NCM_CTL_ADMIT:
                return &nodecm__v1__admit_request__descriptor;
        case NCM_CTL_EXPLAIN:
                return &nodecm__v1__explain_request__descriptor;
        case NCM_CTL_REMOVE_CONTAINER:
                return &nodecm__v1__remove_container_request__descriptor;
        case NCM_CTL_REMOVE_POD:
                return &nodecm__v1__remove_pod_request__descriptor;
        case NCM_CTL_LIST_PODS:
                return &nodecm__v1__list_pods_request__descriptor;
        case NCM_CTL_GET_STATE:
                return &nodecm__v1__get_state_request__descriptor;
        case NCM_CTL_RECONCILE:
                return &nodecm__v1__reconcile_request__descriptor;
        case NCM_CTL_LIST_DEVICES:
                return &nodecm__v1__list_devices_request__descriptor;
        case NCM_CTL_WATCH:
                return &nodecm__v1__watch_request__descriptor;
        default:
                return NULL;
        }
}

int ncm_ctl_handle(const ncm_ctl_target *t, ncm_ctl_method m, const uint8_t *req, size_t len,
                   ncm_ctl_result *ret, ncm_error *err)
{
        const ProtobufCMessageDescriptor *d = request_descriptor(m);
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        int r;

        /* a UID protobuf-c would cut at a NUL could name another pod: refused whole */
        if (d && (r = ncm__pb_check_strings(d, req, len, err)) < 0)
                return ncm_error_prefix(err, "%s", ncm_ctl_method_name(m));
        switch (m) {
        case NCM_CTL_ADMIT:
                r = handle_admit(t, req, len, false, &res, err);
                break;
        case NCM_CTL_EXPLAIN:
                r = handle_admit(t, req, len, true, &res, err);
                break;
        case NCM_CTL_REMOVE_CONTAINER:
        case NCM_CTL_REMOVE_POD:
                r = handle_remove(t, m, req, len, &res, err);
                break;
        case NCM_CTL_LIST_PODS:
                r = handle_list_pods(t, req, len, &res, err);
                break;
        case NCM_CTL_GET_STATE:
                r = handle_get_state(t, req, len, &res, err);
                break;
        case NCM_CTL_RECONCILE:
                r = handle_reconcile(t, req, len, &res, err);
                break;
        case NCM_CTL_LIST_DEVICES:
                r = handle_list_devices(t, req, len, &res, err);
                break;
        case NCM_CTL_RESIZE:
                r = handle_resize(t, req, len, &res, err);
                break;
        case NCM_CTL_WATCH: {
                Nodecm__V1__WatchRequest *q = nodecm__v1__watch_request__unpack(NULL, len, req);
                if (!q)
                        return bad_request(m, err);
                nodecm__v1__watch_request__free_unpacked(q, NULL);
                r = 0;
                break;
        }
        default:
                return ncm_error_set(err, EINVAL, "unknown method %d", (int)m);
        }
        if (r < 0) {
                ncm_ctl_result_done(&res);
                return r;
        }
        *ret = res;
        return 0;
}

void ncm_ctl_result_done(ncm_ctl_result *r)
{
        ncm_buf_done(&r->reply);
        ncm_buf_done(&r->event);
}

int ncm_ctl_event_sequence(const uint8_t *ev, size_t len, uint64_t seq, ncm_buf *out)
{
        uint8_t v[11];
        size_t n = 0;

        /* field 1, varint */
        v[n++] = 0x08;
        do {
                uint8_t b = seq & 0x7f;
                seq >>= 7;
                v[n++] = seq ? (uint8_t)(b | 0x80) : b;
        } while (seq);
        ncm_buf_append(out, v, n);
        ncm_buf_append(out, ev, len);
        return ncm_buf_failed(out) ? -ENOMEM : 0;
}

int ncm_ctl_status_of_error(int code)
{
        switch (code) {
        case ENOMEM:
                return 8; /* RESOURCE_EXHAUSTED */
        case ENOENT:
        case NCM_E_NOT_FOUND:
                return 5; /* NOT_FOUND */
        default:
                break;
        }
        if (code >= NCM_E_UNSATISFIABLE)
                return ncm_error_exit_status(code) == 1 ? 9 /* FAILED_PRECONDITION */
                                                        : 3 /* INVALID_ARGUMENT */;
        if (code == EINVAL || code == ERANGE || code == EFBIG)
                return 3; /* INVALID_ARGUMENT */
        return 13;        /* INTERNAL */
}
